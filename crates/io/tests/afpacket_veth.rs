//! AF_PACKET backend over a veth pair in a namespace of its own (needs root; CI runs as root).

use std::process::Command;
use xlat_io::afpacket::{AfPacketOptions, AfPacketPort};
use xlat_io::{Port, RxQueue, TxQueue};
use xlat_wire::frame::{IpPair, TestFrame};
use xlat_wire::{classify, MacAddr, Rx};

use skip::skip_unless_root;
use xlat_testkit::skip;

const NS: &str = "xlat-iotest";

fn ip(args: &[&str]) -> bool {
    Command::new("ip").args(args).status().map(|s| s.success()).unwrap_or(false)
}

/// Removes the namespace (and with it the veth pair) also when the test fails.
struct Netns;

impl Netns {
    fn create() -> (Netns, std::sync::MutexGuard<'static, ()>) {
        let serial = skip::serial();
        ip(&["netns", "del", NS]);
        assert!(ip(&["netns", "add", NS]), "ip netns add");
        let g = Netns;
        assert!(ip(&[
            "-n", NS, "link", "add", "xlat-ioa", "type", "veth", "peer", "name", "xlat-iob"
        ]));
        for l in ["xlat-ioa", "xlat-iob", "lo"] {
            assert!(ip(&["-n", NS, "link", "set", l, "up"]));
        }
        (g, serial)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        ip(&["netns", "del", NS]);
    }
}

/// The two ends of the namespace's veth pair as AF_PACKET ports.
fn open_pair() -> (AfPacketPort, AfPacketPort) {
    let opts = AfPacketOptions {
        netns: Some(NS.into()),
        ..Default::default()
    };
    let a = AfPacketPort::open("xlat-ioa", opts.clone()).unwrap();
    (a, AfPacketPort::open("xlat-iob", opts).unwrap())
}

/// Write an IPv4 test frame from `src` to `dst` (198.18.0.2 to 198.19.0.2, UDP `sport` to
/// 7) of `size` bytes carrying `field` into `buf`: its length, 0 if it does not fit.
fn v4_frame(src: MacAddr, dst: MacAddr, sport: u16, size: usize, field: u64, buf: &mut [u8]) -> usize {
    TestFrame {
        eth_dst: dst,
        eth_src: src,
        ip: IpPair::V4 {
            src: "198.18.0.2".parse().unwrap(),
            dst: "198.19.0.2".parse().unwrap(),
        },
        sport,
        dport: 7,
        frame_size: size,
        field,
        tunnel: None,
    }
    .write(buf)
    .map(|l| l.len)
    .unwrap_or(0)
}

#[test]
fn frames_cross_a_veth_pair_intact_and_in_order() {
    if skip_unless_root(&["ip"]) {
        return;
    }
    let _ns = Netns::create();
    let (mut a, mut b) = open_pair();
    assert!(AfPacketPort::open(
        "xlat-nonexistent",
        AfPacketOptions {
            netns: Some(NS.into()),
            ..Default::default()
        }
    )
    .is_err());
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(a.link_up() && b.link_up());
    let mut qa = a.queues().unwrap();
    let mut qb = b.queues().unwrap();
    let (amac, bmac) = (a.mac(), b.mac());
    let total = 20_000u64;
    let mut sent = 0u64;
    let mut got = Vec::with_capacity(total as usize);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while (got.len() as u64) < total && std::time::Instant::now() < deadline {
        if sent < total {
            let k = qa
                .tx
                .tx_burst(32.min((total - sent) as usize), |i, buf| {
                    v4_frame(amac, bmac, 0xc020, 64 + (i % 3) * 100, sent + i as u64, buf)
                })
                .unwrap();
            sent += k as u64;
        }
        qb.rx
            .rx_burst(64, |f| {
                if let Rx::Test { field, .. } = classify(f) {
                    assert_eq!(&f[..6], &bmac.0);
                    got.push(field);
                }
            })
            .unwrap();
    }
    assert_eq!(qb.rx.dropped().unwrap(), 0);
    assert_eq!(sent, total);
    assert_eq!(got.len() as u64, total, "all frames arrive");
    assert!(got.windows(2).all(|w| w[1] == w[0] + 1), "in order");
    // Nothing comes back to the sender (PACKET_IGNORE_OUTGOING, and the peer sends nothing).
    let mut echoed = 0;
    qa.rx
        .rx_burst(64, |f| echoed += matches!(classify(f), Rx::Test { .. }) as usize)
        .unwrap();
    assert_eq!(echoed, 0);
}

/// Two queue sets on the receiving port: its two receive sockets form a fanout group that
/// hands each flow to one socket, so that frames of 64 flows spread over both, each frame
/// arrives once, and every flow's frames keep their order.
#[test]
fn two_receive_sockets_share_the_flows_once_each_in_order() {
    if skip_unless_root(&["ip"]) {
        return;
    }
    let _ns = Netns::create();
    let (mut a, mut b) = open_pair();
    assert_eq!(b.max_queues(), xlat_io::afpacket::MAX_QUEUES);
    std::thread::sleep(std::time::Duration::from_millis(200));
    let mut qa = a.queues().unwrap();
    let mut qb = b.open_queues(2).unwrap();
    assert!(b.open_queues(1).is_err(), "queues open once");
    let (amac, bmac) = (a.mac(), b.mac());
    let total = 6_400u64;
    let mut sent = 0u64;
    // Per receive socket: (flow, field) in arrival order.
    let mut got: [Vec<(u16, u64)>; 2] = [Vec::new(), Vec::new()];
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while got.iter().map(Vec::len).sum::<usize>() < total as usize && std::time::Instant::now() < deadline {
        if sent < total {
            let k = qa
                .tx
                .tx_burst(32.min((total - sent) as usize), |i, buf| {
                    let field = sent + i as u64;
                    v4_frame(amac, bmac, 0xc000 + (field % 64) as u16, 64, field, buf)
                })
                .unwrap();
            sent += k as u64;
        }
        for (q, out) in qb.iter_mut().zip(got.iter_mut()) {
            q.rx.rx_burst(64, |f| {
                if let (Rx::Test { field, .. }, Some((_, _, sport, _))) = (classify(f), xlat_wire::udp_tuple(f)) {
                    out.push((sport, field));
                }
            })
            .unwrap();
        }
    }
    assert_eq!(sent, total);
    assert!(
        got.iter().all(|g| !g.is_empty()),
        "both sockets get flows: {} and {}",
        got[0].len(),
        got[1].len()
    );
    let mut all: Vec<u64> = got.iter().flatten().map(|(_, f)| *f).collect();
    all.sort_unstable();
    assert_eq!(all, (0..total).collect::<Vec<_>>(), "every frame once");
    for g in &got {
        for flow in 0xc000..0xc040u16 {
            let seq: Vec<u64> = g.iter().filter(|(p, _)| *p == flow).map(|(_, f)| *f).collect();
            assert!(seq.windows(2).all(|w| w[0] < w[1]), "flow {flow:#x} in order");
        }
    }
    for flow in 0xc000..0xc040u16 {
        let on = got.iter().filter(|g| g.iter().any(|(p, _)| *p == flow)).count();
        assert_eq!(on, 1, "flow {flow:#x} on one socket");
    }
}

/// What a veth port can stamp, as ethtool's timestamping information says: the port's answer
/// agrees with `ethtool -T` run in the namespace (software stamps, no hardware clock).
#[test]
fn a_veth_port_stamps_in_software_only_as_ethtool_says() {
    if skip_unless_root(&["ip", "ethtool"]) {
        return;
    }
    let _ns = Netns::create();
    let (a, _b) = open_pair();
    let st = xlat_io::Port::stamping(&a);
    let out = Command::new("ip")
        .args(["netns", "exec", NS, "ethtool", "-T", "xlat-ioa"])
        .output()
        .expect("ethtool -T");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let said = |cap: &str| text.lines().any(|l| l.trim() == cap);
    assert_eq!(st.kernel, said("software-transmit") && said("software-receive"), "{st:?} vs {text}");
    assert_eq!(
        st.hardware,
        said("hardware-transmit") && said("hardware-receive"),
        "{st:?} vs {text}"
    );
    assert!(
        text.contains("PTP Hardware Clock: none") == st.detail.contains("no hardware clock"),
        "{st:?} vs {text}"
    );
    assert_eq!((st.kernel, st.hardware), (true, false), "{st:?}");
    assert_eq!(
        st.detail,
        "software transmit, software receive; no hardware clock (ethtool -T xlat-ioa)"
    );
}

/// Kernel stamps over a veth pair: exactly the frames asked for come back from the transmit
/// socket's error queue, each with a stamp, as they were sent; every received frame carries
/// the kernel's receive stamp; and each frame's receive stamp lies after its transmit stamp, by
/// less than the time the test itself took around the send (CLOCK_REALTIME read before and
/// after).
#[test]
fn a_veth_port_stamps_the_frames_asked_for_in_the_kernel() {
    if skip_unless_root(&["ip"]) {
        return;
    }
    let _ns = Netns::create();
    let (mut a, mut b) = open_pair();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let mut qa = a.queues().unwrap();
    let mut qb = b.queues().unwrap();
    qa.tx.enable_stamps().unwrap();
    qb.rx.enable_stamps().unwrap();
    let (amac, bmac) = (a.mac(), b.mac());
    let realtime = || {
        let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
        d.as_nanos() as u64
    };
    // Four bursts of 40 frames, frames 3, 17, 18 and 39 of each stamped (runs of one and two,
    // one at the end), the last burst all stamped.
    let mut want = Vec::new();
    let (before, mut field) = (realtime(), 0u64);
    for burst in 0..4 {
        let mask: u64 = if burst == 3 {
            (1 << 40) - 1
        } else {
            1 << 3 | 1 << 17 | 1 << 18 | 1 << 39
        };
        let n = qa
            .tx
            .tx_burst_stamped(40, mask, |i, buf, _| {
                v4_frame(amac, bmac, 0xc020, 64 + (i % 2) * 1000, field + i as u64, buf)
            })
            .unwrap();
        assert_eq!(n, 40);
        want.extend((0..40).filter(|i| mask >> i & 1 == 1).map(|i| field + i));
        field += 40;
    }
    let after = realtime();
    let (mut tx, mut rx) = (std::collections::BTreeMap::new(), std::collections::BTreeMap::new());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while (tx.len() < want.len() || rx.len() < 160) && std::time::Instant::now() < deadline {
        qa.tx
            .tx_stamps(|f, ns| match classify(f) {
                Rx::Test { field, .. } => assert!(tx.insert(field, ns).is_none(), "one stamp per frame"),
                r => panic!("a stamped frame came back as {r:?}"),
            })
            .unwrap();
        qb.rx
            .rx_burst_stamped(64, |_, f, ns| {
                if let Rx::Test { field, .. } = classify(f) {
                    rx.insert(field, ns);
                }
            })
            .unwrap();
    }
    assert_eq!(tx.keys().copied().collect::<Vec<_>>(), want, "the frames asked for, and only those");
    assert_eq!(rx.len(), 160);
    for (f, t) in &tx {
        let r = rx[f];
        assert!(before <= *t && r <= after + 1_000_000, "{before} <= {t}, {r} <= {after}");
        assert!(*t <= r && r - t < after - before + 1_000_000, "frame {f}: sent {t}, received {r}");
    }
}
