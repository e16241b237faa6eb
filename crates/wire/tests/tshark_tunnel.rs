//! IPv4-in-IPv6 test frames (RFC 2473, as DS-Lite's B4 sends them) built by `xlat_wire`,
//! dissected by tshark: Ethernet, IPv6 with next header 4 and the right payload length, IPv4
//! with a good header checksum, UDP with a good checksum, the test payload; nothing malformed.

use std::net::{Ipv4Addr, Ipv6Addr};
use xlat_wire::frame::{IpPair, TestFrame, Tunnel};
use xlat_wire::MacAddr;

#[path = "common/dissect.rs"]
mod dissect;

const FIELDS: &[&str] = &[
    "frame.len",
    "eth.type",
    "ipv6.plen",
    "ipv6.nxt",
    "ipv6.src",
    "ipv6.dst",
    "ip.len",
    "ip.src",
    "ip.dst",
    "ip.checksum.status",
    "udp.srcport",
    "udp.dstport",
    "udp.length",
    "udp.checksum.status",
    "_ws.malformed",
    "_ws.expert.severity",
];

#[test]
fn ipv4_in_ipv6_frames_dissect_cleanly() {
    let b4: Ipv6Addr = "2001:2::2".parse().unwrap();
    let aftr: Ipv6Addr = "2001:2::1".parse().unwrap();
    let sizes = [104, 105, 128, 1518, 1558];
    let mut frames = Vec::new();
    for (k, &size) in sizes.iter().enumerate() {
        let f = TestFrame {
            eth_dst: MacAddr([2, 0, 0, 0, 2, 2]),
            eth_src: MacAddr([2, 0, 0, 0, 1, 1]),
            ip: IpPair::V4 {
                src: Ipv4Addr::new(198, 18, 0, 2),
                dst: Ipv4Addr::new(198, 19, 0, 2),
            },
            sport: 10_000 + k as u16,
            dport: 49_999,
            frame_size: size,
            field: 0xfeed_0000 + k as u64,
            tunnel: Some(Tunnel { src: b4, dst: aftr }),
        };
        let mut buf = vec![0u8; size];
        let lay = f.write(&mut buf).unwrap();
        buf.truncate(lay.len);
        frames.push(buf);
    }
    let rows = dissect::fields("tunnel", &frames, FIELDS, &["ip.check_checksum:TRUE", "udp.check_checksum:TRUE"]);
    for (k, (r, &size)) in rows.iter().zip(&sizes).enumerate() {
        let len = size - 4;
        let want = [
            ("frame.len", len.to_string()),
            ("eth.type", "0x86dd".into()),
            ("ipv6.plen", (len - 54).to_string()),
            ("ipv6.nxt", "4".into()),
            ("ipv6.src", "2001:2::2".into()),
            ("ipv6.dst", "2001:2::1".into()),
            ("ip.len", (len - 54).to_string()),
            ("ip.src", "198.18.0.2".into()),
            ("ip.dst", "198.19.0.2".into()),
            ("ip.checksum.status", "1".into()),
            ("udp.srcport", (10_000 + k).to_string()),
            ("udp.dstport", "49999".into()),
            ("udp.length", (len - 74).to_string()),
            ("udp.checksum.status", "1".into()),
            ("_ws.malformed", String::new()),
        ];
        for (f, v) in want {
            assert_eq!(r[f], v, "frame {k} ({size} bytes): {f} in {r:?}");
        }
    }
    // The smallest: a minimal IPv4 test frame (58 bytes without FCS, no padding) with 40
    // bytes before it, and the FCS: 102.
    let mut f = TestFrame {
        eth_dst: MacAddr([2; 6]),
        eth_src: MacAddr([4; 6]),
        ip: IpPair::V4 {
            src: Ipv4Addr::new(198, 18, 0, 2),
            dst: Ipv4Addr::new(198, 19, 0, 2),
        },
        sport: 1,
        dport: 2,
        frame_size: 101,
        field: 0,
        tunnel: Some(Tunnel { src: b4, dst: aftr }),
    };
    assert!(f.layout().is_err());
    f.frame_size = 102;
    let lay = f.layout().unwrap();
    assert_eq!((lay.tunnel_src, lay.ip_src, lay.sport), (Some(22), 54 + 12, 74));
}
