//! AF_XDP backend over a veth pair in a namespace of its own (needs root; CI runs as root).

use std::process::Command;
use std::time::{Duration, Instant};
use xlat_io::afxdp::{AfXdpOptions, AfXdpPort};
use xlat_io::{Port, RxQueue, TxQueue};
use xlat_wire::frame::{IpPair, TestFrame};
use xlat_wire::{classify, Rx};

use skip::skip_unless_root;
use xlat_testkit::skip;

const NS: &str = "xlat-xdptest";

fn ip(args: &[&str]) -> bool {
    Command::new("ip").args(args).status().map(|s| s.success()).unwrap_or(false)
}

/// `ip -d link show dev` in the test namespace.
fn link_show(dev: &str) -> String {
    let o = Command::new("ip")
        .args(["-n", NS, "-d", "link", "show", "dev", dev])
        .output()
        .expect("ip link show");
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// Removes the namespace (and with it the veth pair) also when the test fails.
struct Netns;

impl Netns {
    fn create() -> Netns {
        let _ = Command::new("ip")
            .args(["netns", "del", NS])
            .stderr(std::process::Stdio::null())
            .status();
        assert!(ip(&["netns", "add", NS]), "ip netns add");
        let g = Netns;
        assert!(ip(&[
            "-n", NS, "link", "add", "xlat-xda", "type", "veth", "peer", "name", "xlat-xdb"
        ]));
        for l in ["xlat-xda", "xlat-xdb", "lo"] {
            assert!(ip(&["-n", NS, "link", "set", l, "up"]));
        }
        g
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        ip(&["netns", "del", NS]);
    }
}

fn opts(generic: bool) -> AfXdpOptions {
    AfXdpOptions {
        netns: Some(NS.into()),
        generic,
        ..Default::default()
    }
}

/// A raw Ethernet frame of ethertype `et` from `src` to broadcast.
fn raw(buf: &mut [u8], src: [u8; 6], et: u16) -> usize {
    buf[..6].copy_from_slice(&[0xff; 6]);
    buf[6..12].copy_from_slice(&src);
    buf[12..14].copy_from_slice(&et.to_be_bytes());
    buf[14..60].fill(0x5a);
    60
}

fn frames_cross(generic: bool) {
    if skip_unless_root(&["ip"]) {
        return;
    }
    let _g = skip::serial();
    let _ns = Netns::create();
    let mut a = AfXdpPort::open("xlat-xda", opts(generic)).unwrap();
    let mut b = AfXdpPort::open(
        "xlat-xdb",
        AfXdpOptions {
            promisc: true,
            ..opts(generic)
        },
    )
    .unwrap();
    // (A socket's promiscuous membership shows in the count, not in the PROMISC flag.)
    assert!(link_show("xlat-xdb").contains("promiscuity 1"), "{}", link_show("xlat-xdb"));
    assert!(link_show("xlat-xda").contains("promiscuity 0"), "{}", link_show("xlat-xda"));
    eprintln!("a: {}, b: {}", a.mode(), b.mode());
    assert!(
        a.mode().starts_with(if generic { "XDP generic mode" } else { "XDP driver mode" }),
        "{}",
        a.mode()
    );
    assert!(link_show("xlat-xda").contains("prog/xdp"), "{}", link_show("xlat-xda"));
    assert!(AfXdpPort::open("xlat-nonexistent", opts(generic)).is_err());
    let deadline = Instant::now() + Duration::from_secs(5);
    while !(a.link_up() && b.link_up()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut qa = a.queues().unwrap();
    let mut qb = b.queues().unwrap();
    assert!(a.queues().is_err(), "queues open once");
    let (amac, bmac) = (a.mac(), b.mac());
    let total = 20_000u64;
    let mut sent = 0u64;
    let mut got = Vec::with_capacity(total as usize);
    let deadline = Instant::now() + Duration::from_secs(10);
    while (got.len() as u64) < total && Instant::now() < deadline {
        if sent < total {
            let k = qa
                .tx
                .tx_burst(32.min((total - sent) as usize), |i, buf| {
                    TestFrame {
                        eth_dst: bmac,
                        eth_src: amac,
                        ip: if i % 2 == 0 {
                            IpPair::V4 {
                                src: "198.18.0.2".parse().unwrap(),
                                dst: "198.19.0.2".parse().unwrap(),
                            }
                        } else {
                            IpPair::V6 {
                                src: "2001:2::2".parse().unwrap(),
                                dst: "2001:2:0:8000::2".parse().unwrap(),
                            }
                        },
                        sport: 0xc020,
                        dport: 7,
                        frame_size: 84 + (i % 3) * 100,
                        field: sent + i as u64,
                        tunnel: None,
                    }
                    .write(buf)
                    .map(|l| l.len)
                    .unwrap_or(0)
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
    qa.tx.flush().unwrap();
    assert_eq!(qb.rx.dropped().unwrap(), 0);
    assert_eq!(qa.tx.dropped().unwrap(), 0);
    assert_eq!(sent, total);
    assert_eq!(got.len() as u64, total, "all frames arrive");
    assert!(got.windows(2).all(|w| w[1] == w[0] + 1), "in order");

    // The control queue (AF_PACKET) sends; ARP reaches the AF_XDP socket, LLDP (0x88cc) the
    // kernel only.
    for et in [0x88ccu16, 0x0806] {
        assert_eq!(qa.ctl.tx_burst(1, |_, buf| raw(buf, amac.0, et)).unwrap(), 1);
    }
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline && !seen.contains(&0x0806) {
        qb.rx.rx_burst(64, |f| seen.push(u16::from_be_bytes([f[12], f[13]]))).unwrap();
    }
    std::thread::sleep(Duration::from_millis(100));
    qb.rx.rx_burst(64, |f| seen.push(u16::from_be_bytes([f[12], f[13]]))).unwrap();
    // (The kernel's own IPv6 frames, MLD and the like, may be there too.)
    assert!(
        seen.contains(&0x0806) && !seen.contains(&0x88cc),
        "ARP is redirected, LLDP passed: {seen:x?}"
    );

    // Closing the port detaches the program.
    drop((qa, qb, a, b));
    assert!(!link_show("xlat-xda").contains("xdp"), "{}", link_show("xlat-xda"));
    assert!(!link_show("xlat-xdb").contains("xdp"), "{}", link_show("xlat-xdb"));
    assert!(link_show("xlat-xdb").contains("promiscuity 0"), "{}", link_show("xlat-xdb"));
}

#[test]
fn frames_cross_a_veth_pair_in_driver_mode() {
    frames_cross(false);
}

#[test]
fn frames_cross_a_veth_pair_in_generic_mode() {
    frames_cross(true);
}
