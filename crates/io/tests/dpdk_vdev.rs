//! The DPDK backend on virtual devices (`net_null`, `net_ring`) with hugepages, as deployed
//! (scripts/setup.sh reserves them), without NICs.
//! EAL can be initialised once per process: every case of this binary shares one
//! initialisation (`eal()`) and uses devices of its own, as the cases run in parallel.
#![cfg(feature = "dpdk")]

use std::sync::OnceLock;
use xlat_io::dpdk::{self, DpdkOptions, DpdkPort};
use xlat_io::{Port, RxQueue, TxQueue};
use xlat_wire::frame::{IpPair, TestFrame};
use xlat_wire::{classify, pcap, MacAddr, Rx};

const EAL_ARGS: &[&str] = &[
    "--no-pci",
    "-l",
    "0",
    "--log-level=lib.eal:warning",
    "--no-telemetry",
    "--vdev",
    "net_null0",
    "--vdev",
    "net_null1",
    "--vdev",
    "net_null2",
    "--vdev",
    "net_null3",
    "--vdev",
    "net_ring0",
    "--vdev",
    "net_ring1",
    "--vdev",
    "net_ring2",
];

/// Start EAL once, and run the tests one at a time: they open and close devices of the one
/// process-wide EAL, and a device list read by one test must not change under it.
fn eal() -> std::sync::MutexGuard<'static, ()> {
    static EAL: OnceLock<()> = OnceLock::new();
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    EAL.get_or_init(|| {
        let (rx, _, _) = pcap_paths();
        let _ = std::fs::create_dir_all(rx.parent().expect("a directory"));
        std::fs::write(&rx, pcap::file_of::<&[u8]>(&[])).expect("empty capture");
        let args = eal_args();
        dpdk::eal_init(&args).expect("EAL init");
    });
    g
}

/// EAL_ARGS and a net_pcap port that writes what its first transmit queue sends to a file (and
/// reads nothing: an empty capture).
fn eal_args() -> Vec<String> {
    let mut args: Vec<String> = EAL_ARGS.iter().map(|s| s.to_string()).collect();
    let (rx, tx0, tx1) = pcap_paths();
    args.push("--vdev".into());
    args.push(format!(
        "net_pcap0,rx_pcap={},tx_pcap={},tx_pcap={}",
        rx.display(),
        tx0.display(),
        tx1.display()
    ));
    args
}

fn opts() -> DpdkOptions {
    DpdkOptions {
        rx_desc: 512,
        tx_desc: 512,
        ..DpdkOptions::default()
    }
}

fn frame(seq: u64, size: usize, buf: &mut [u8]) -> usize {
    TestFrame {
        eth_dst: MacAddr([2, 0, 0, 0, 0, 2]),
        eth_src: MacAddr([2, 0, 0, 0, 0, 1]),
        ip: IpPair::V4 {
            src: "198.18.0.2".parse().unwrap(),
            dst: "198.19.0.2".parse().unwrap(),
        },
        sport: 0xc020,
        dport: 7,
        frame_size: size,
        field: seq,
        tunnel: None,
    }
    .write(buf)
    .unwrap()
    .len
}

/// Receive until `want` frames arrived or nothing more comes; returns the frames.
fn recv(rx: &mut impl RxQueue, want: usize) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    let mut idle = 0;
    while got.len() < want && idle < 1000 {
        let n = rx.rx_burst(32, |f| got.push(f.to_vec())).unwrap();
        idle = if n == 0 { idle + 1 } else { 0 };
    }
    got
}

#[test]
fn null_accepts_full_bursts() {
    let _serial = eal();
    let mut p = DpdkPort::open("net_null0", &opts()).unwrap();
    assert!(p.link_up());
    assert_eq!(p.name(), "dpdk:net_null0");
    let mut q = p.queues().unwrap();
    assert!(p.queues().is_err(), "queues may be opened once");
    let mut total = 0;
    for round in 0..1000u64 {
        let sent = q.tx.tx_burst(32, |i, b| frame(round * 32 + i as u64, 64, b)).unwrap();
        assert_eq!(sent, 32);
        total += sent;
    }
    // A burst larger than the most one call handles is cut, not refused.
    assert_eq!(q.tx.tx_burst(1000, |i, b| frame(i as u64, 64, b)).unwrap(), dpdk::MAX_TX_BURST);
    total += dpdk::MAX_TX_BURST;
    assert_eq!(q.ctl.tx_burst(3, |i, b| frame(i as u64, 64, b)).unwrap(), 3);
    total += 3;
    assert_eq!(p.stats().unwrap().opackets, total as u64);
    // The mbufs all went back to the pool: many more bursts than the pool has mbufs work.
    assert!(1000 * 32 > p.mempool_mbufs() as usize);
    // net_null has neither the receive timestamp offload nor an IEEE 1588 clock, as its PMD
    // says (rte_eth_dev_info, rte_eth_timesync_read_time), and claims no stamps.
    let st = p.stamping();
    assert!(!st.kernel && !st.hardware, "{st:?}");
    assert_eq!(
        st.detail,
        "no receive timestamp offload, no IEEE 1588 clock (rte_eth_timesync) (net_null)"
    );
}

#[test]
fn ring_loops_back_frames_intact() {
    let _serial = eal();
    // A net_ring vdev without arguments uses one ring per queue index for both directions:
    // what queue 0 transmits, queue 0 receives.
    let mut p = DpdkPort::open("net_ring0", &opts()).unwrap();
    let mut q = p.queues().unwrap();
    let mut expect = Vec::new();
    let sent =
        q.tx.tx_burst(20, |i, b| {
            let len = frame(i as u64, 64 + i * 50, b);
            expect.push(b[..len].to_vec());
            len
        })
        .unwrap();
    assert_eq!(sent, 20);
    let got = recv(&mut q.rx, 20);
    assert_eq!(got, expect);
    for (i, f) in got.iter().enumerate() {
        assert!(matches!(classify(f), Rx::Test { field, .. } if field == i as u64));
    }
}

#[test]
fn ring_pair_carries_both_ways_and_control() {
    let _serial = eal();
    let (a, b) = dpdk::ring_pair("ta", "tb", 1024).unwrap();
    let mut pa = DpdkPort::open(&a, &opts()).unwrap();
    let mut pb = DpdkPort::open(&b, &opts()).unwrap();
    let mut qa = pa.queues().unwrap();
    let mut qb = pb.queues().unwrap();
    assert_eq!(qa.tx.tx_burst(32, |i, buf| frame(i as u64, 84, buf)).unwrap(), 32);
    assert_eq!(qa.ctl.tx_burst(1, |_, buf| frame(1000, 64, buf)).unwrap(), 1);
    let got = recv(&mut qb.rx, 33);
    let fields: Vec<u64> = got
        .iter()
        .map(|f| match classify(f) {
            Rx::Test { field, .. } => field,
            other => panic!("not a test frame: {other:?}"),
        })
        .collect();
    assert_eq!(fields, (0..32).chain([1000]).collect::<Vec<_>>());
    assert_eq!(got[0].len(), 80);
    assert!(recv(&mut qa.rx, 1).is_empty(), "nothing comes back to the sender");
    assert_eq!(qb.tx.tx_burst(5, |i, buf| frame(i as u64, 64, buf)).unwrap(), 5);
    assert_eq!(recv(&mut qa.rx, 5).len(), 5);
}

#[test]
fn a_ring_pair_with_two_queue_sets_joins_set_k_to_set_k() {
    let _serial = eal();
    let (a, b) = dpdk::ring_pair_queues("qa", "qb", 1024, 2).unwrap();
    let two = DpdkOptions { queues: 2, ..opts() };
    let mut pa = DpdkPort::open(&a, &two).unwrap();
    let mut pb = DpdkPort::open(&b, &two).unwrap();
    assert_eq!(pa.max_queues(), 2);
    assert!(pa.open_queues(1).is_err(), "every receive queue must be read: all sets or none");
    let mut qa = pa.open_queues(2).unwrap();
    let mut qb = pb.open_queues(2).unwrap();
    assert_eq!(qa[0].tx.tx_burst(10, |i, buf| frame(i as u64, 84, buf)).unwrap(), 10);
    assert_eq!(qa[1].tx.tx_burst(7, |i, buf| frame(100 + i as u64, 84, buf)).unwrap(), 7);
    assert_eq!(qa[1].ctl.tx_burst(1, |_, buf| frame(1000, 64, buf)).unwrap(), 1);
    let field = |f: &Vec<u8>| match classify(f) {
        Rx::Test { field, .. } => field,
        other => panic!("not a test frame: {other:?}"),
    };
    let set0: Vec<u64> = recv(&mut qb[0].rx, 10).iter().map(field).collect();
    let set1: Vec<u64> = recv(&mut qb[1].rx, 8).iter().map(field).collect();
    assert_eq!(set0, (0..10).collect::<Vec<_>>());
    assert_eq!(set1, (100..107).chain([1000]).collect::<Vec<_>>());
    assert!(dpdk::ring_pair_queues("qc", "qd", 1024, 9).is_err());
}

#[test]
fn a_full_ring_accepts_part_of_a_burst() {
    let _serial = eal();
    let (a, b) = dpdk::ring_pair("fa", "fb", 64).unwrap();
    let mut pa = DpdkPort::open(&a, &opts()).unwrap();
    let _pb = DpdkPort::open(&b, &opts()).unwrap();
    let mut qa = pa.queues().unwrap();
    // The ring holds 63 frames: the second burst of 40 gets 23 in, and fill saw all 40.
    assert_eq!(qa.tx.tx_burst(40, |i, buf| frame(i as u64, 64, buf)).unwrap(), 40);
    let mut filled = 0;
    assert_eq!(
        qa.tx
            .tx_burst(40, |i, buf| {
                filled += 1;
                frame(i as u64, 64, buf)
            })
            .unwrap(),
        23
    );
    assert_eq!(filled, 40);
    assert_eq!(qa.tx.tx_burst(40, |i, buf| frame(i as u64, 64, buf)).unwrap(), 0);
}

#[test]
fn fill_returning_zero_ends_the_burst() {
    let _serial = eal();
    let mut p = DpdkPort::open("net_ring1", &opts()).unwrap();
    let mut q = p.queues().unwrap();
    let mut calls = 0;
    let sent =
        q.tx.tx_burst(32, |i, b| {
            calls += 1;
            if i < 5 {
                frame(i as u64, 64, b)
            } else {
                0
            }
        })
        .unwrap();
    assert_eq!((sent, calls), (5, 6));
    assert_eq!(q.tx.tx_burst(32, |_, _| 0).unwrap(), 0);
    // A length beyond the buffer ends the burst too.
    assert_eq!(
        q.tx.tx_burst(32, |i, b| if i < 2 { frame(i as u64, 64, b) } else { b.len() + 1 })
            .unwrap(),
        2
    );
    assert_eq!(recv(&mut q.rx, 7).len(), 7);
}

#[test]
fn unknown_devices_and_double_opens_are_clear_errors() {
    let _serial = eal();
    let e = DpdkPort::open("net_nosuch0", &opts()).err().expect("unknown device");
    let msg = e.to_string();
    // The message lists the ports there are (which ones depends on the other tests' timing).
    assert!(msg.contains("\"net_nosuch0\" not found") && msg.contains("ports:"), "{msg}");
    let e = DpdkPort::open("31", &opts()).err().expect("unknown port id").to_string();
    assert!(e.contains("port 31 does not exist"), "{e}");
    // A PCI address that no DPDK driver holds (EAL runs with --no-pci here): named in DPDK's
    // form, with what a PCI port needs.
    let e = DpdkPort::open("3b:00.1", &opts()).err().expect("no such PCI port").to_string();
    assert!(e.contains("\"0000:3b:00.1\" not found") && e.contains("vfio-pci"), "{e}");
    let _p = DpdkPort::open("net_null1", &opts()).unwrap();
    let e = DpdkPort::open("net_null1", &opts()).err().expect("second open").to_string();
    assert!(e.contains("already open"), "{e}");
}

#[test]
fn eal_init_is_once_per_process() {
    let _serial = eal();
    dpdk::eal_init(&eal_args()).unwrap();
    let e = dpdk::eal_init(&["--no-pci".to_string()]).unwrap_err().to_string();
    assert!(e.contains("already initialised"), "{e}");
}

#[test]
fn queues_move_to_other_threads_and_keep_the_device_open() {
    let _serial = eal();
    let mut p = DpdkPort::open("net_null2", &opts()).unwrap();
    let q = p.queues().unwrap();
    drop(p);
    let mut tx = q.tx;
    let sent = std::thread::spawn(move || {
        let mut total = 0;
        for _ in 0..100 {
            total += tx.tx_burst(32, |i, b| frame(i as u64, 64, b)).unwrap();
        }
        total
    })
    .join()
    .unwrap();
    assert_eq!(sent, 3200);
}

#[test]
fn mbufs_come_back_with_their_cookie_and_contents_and_plain_sends_clear_it() {
    let _serial = eal();
    let mut p = DpdkPort::open("net_null3", &opts()).unwrap();
    let mut q = p.queues().unwrap();
    let mut want = [0u8; 128];
    let len = frame(7, 64, &mut want);
    const COOKIE: u64 = 0xc0ff_ee00_0000_0001;
    // Fill every buffer completely and mark it.
    let sent =
        q.tx.tx_burst_cookie(32, |_, buf, cookie| {
            buf[..len].copy_from_slice(&want[..len]);
            *cookie = COOKIE;
            len
        })
        .unwrap();
    assert_eq!(sent, 32);
    // net_null frees them at once; the pool's per-core cache hands them out again.
    let mut marked = 0;
    q.tx.tx_burst_cookie(32, |_, buf, cookie| {
        if *cookie == COOKIE {
            marked += 1;
            assert_eq!(&buf[..len], &want[..len], "a marked buffer holds what was written");
        }
        frame(8, 64, buf)
    })
    .unwrap();
    assert!(marked > 0, "recycled mbufs keep their cookie");
    // A plain burst leaves no cookie behind.
    q.tx.tx_burst(32, |_, buf| frame(9, 64, buf)).unwrap();
    let mut stale = 0;
    q.tx.tx_burst_cookie(32, |_, buf, cookie| {
        stale += usize::from(*cookie != 0);
        frame(10, 64, buf)
    })
    .unwrap();
    assert_eq!(stale, 0);
}

/// A frame that comes back through the receive path no longer holds what its cookie said (the
/// device wrote it): its mbuf returns to the pool with the cookie cleared.
#[test]
fn received_mbufs_lose_their_cookie() {
    let _serial = eal();
    // net_ring2 loops back: what its transmit queue 0 sends, its receive queue 0 gets, in the
    // mbufs of its own pool.
    let mut p = DpdkPort::open("net_ring2", &opts()).unwrap();
    let mut q = p.queues().unwrap();
    const COOKIE: u64 = 0xc0ff_ee00_0000_0002;
    let sent =
        q.tx.tx_burst_cookie(32, |i, buf, cookie| {
            *cookie = COOKIE;
            frame(i as u64, 64, buf)
        })
        .unwrap();
    assert_eq!(sent, 32);
    assert_eq!(recv(&mut q.rx, 32).len(), 32);
    // Freed after the receive, they come back first from this core's cache.
    let (mut seen, mut marked) = (0, 0);
    q.tx.tx_burst_cookie(32, |i, buf, cookie| {
        seen += 1;
        marked += usize::from(*cookie == COOKIE);
        frame(100 + i as u64, 64, buf)
    })
    .unwrap();
    assert_eq!((seen, marked), (32, 0), "a received mbuf kept its sender cookie");
}

fn pcap_paths() -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let d = std::env::temp_dir().join(format!("xlat-dpdk-vdev-{}", std::process::id()));
    (d.join("rx.pcap"), d.join("tx0.pcap"), d.join("tx1.pcap"))
}

/// Recycled mbufs whose cookie and length stay are sent without a reset; any change of cookie or
/// length, and every plain send, resets the mbuf and gives it its new length. net_pcap writes
/// each frame (the mbuf's data at its data offset, of its packet length) to a file and frees it
/// at once into the pool, whose cache hands the same mbufs out again: the file holds exactly the
/// frames written only if the headers of the recycled mbufs were right. Frames placed to have
/// their changing bytes in one cache line (`place_frames`) start earlier in their mbufs: a
/// recycled mbuf written at another place is reset too.
#[test]
fn recycled_mbufs_send_exactly_what_was_written() {
    let _serial = eal();
    let mut want: Vec<Vec<u8>> = Vec::new();
    {
        let mut p = DpdkPort::open("net_pcap0", &opts()).unwrap();
        let mut q = p.queues().unwrap();
        let mut seq = 0u64;
        let mut recycled = 0;
        // Returns where the frames began, from their cache lines' starts.
        let mut send = |tx: &mut xlat_io::dpdk::DpdkTx, cookie: Option<u64>, size: usize| {
            let mut starts = std::collections::BTreeSet::new();
            for _ in 0..10 {
                let mut burst = Vec::new();
                let n = match cookie {
                    Some(c) => tx.tx_burst_cookie(32, |_, buf, k| {
                        recycled += usize::from(*k == c);
                        starts.insert(buf.as_ptr() as usize % 64);
                        *k = c;
                        let l = frame(seq + burst.len() as u64, size, buf);
                        burst.push(buf[..l].to_vec());
                        l
                    }),
                    None => tx.tx_burst(32, |_, buf| {
                        let l = frame(seq + burst.len() as u64, size, buf);
                        burst.push(buf[..l].to_vec());
                        l
                    }),
                }
                .unwrap();
                seq += burst.len() as u64;
                want.extend(burst.into_iter().take(n));
            }
            starts.into_iter().collect::<Vec<_>>()
        };
        send(&mut q.tx, Some(5), 64);
        send(&mut q.tx, Some(5), 104);
        // An IPv6 frame's ports to payload field: 14 bytes early they share a line (this pool's
        // data starts a line), the same cookie and length notwithstanding.
        q.tx.place_frames(54..78);
        assert_eq!(send(&mut q.tx, Some(5), 104), [50], "frames placed 14 bytes early");
        send(&mut q.tx, None, 84);
        q.tx.place_frames(0..0);
        assert_eq!(send(&mut q.tx, Some(5), 104), [0], "frames at the reset mbuf's data");
        send(&mut q.tx, Some(6), 68);
        send(&mut q.tx, Some(5), 64);
        assert!(recycled > 32 * 10, "mbufs came back with their cookies ({recycled})");
        // Dropping the port closes the capture file.
    }
    let (rx, tx0, _) = pcap_paths();
    let capture = std::fs::read(&tx0).expect("the capture");
    let got = pcap::frames(&capture).expect("a pcap file");
    let _ = std::fs::remove_dir_all(rx.parent().expect("a directory"));
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "frame {i}");
    }
}
