//! Task A: frames from `DirectionStream::write_frame` dissected by tshark (Wireshark's
//! dissectors, an independent implementation): for every IP version combination, foreground/
//! background mix, frame size and several sequence numbers, no frame is malformed, every checksum
//! is good, and every field is as configured.

mod common;

use common::*;
use xlat_traffic::{Direction, DirectionStream, IpVersion};

const SEQS: [u64; 6] = [
    0x0000_0000_0000_ffff,
    0x0100_0000_0000_002a,
    0xffff_ffff_ffff_ffff,
    0x0123_4567_89ab_cdef,
    1 << 32,
    0xfffe,
];

fn addr_fields(a: Addr) -> (String, String) {
    match a {
        Addr::V4(x) => (x.to_string(), String::new()),
        Addr::V6(x) => (String::new(), x.to_string()),
    }
}

#[test]
fn frames_dissect_cleanly_in_every_version_mix_and_size() {
    use IpVersion::*;
    let mut frames = Vec::new();
    // What each frame must be: (description, v6, frame len, src, dst, seq).
    let mut expect = Vec::new();
    let mut buf = vec![0u8; 2048];
    for (l, r) in [(V6, V4), (V4, V6), (V4, V4), (V6, V6)] {
        for (n, m) in [(2, 2), (10, 9), (2, 0)] {
            let s = setup(l, r, n, m);
            for d in Direction::BOTH {
                for size in IPV4_SIZES {
                    let st = DirectionStream::new(&s, d, size + 20, SRC_MAC, DST_MAC).unwrap();
                    assert_eq!(
                        st.max_len(),
                        if m == 0 || l == V6 && d == Direction::Forward || r == V6 && d == Direction::Reverse || m < n {
                            size + 16
                        } else {
                            size - 4
                        }
                    );
                    for seq in (0..20u64).chain(SEQS) {
                        let fg = seq % u64::from(n) < u64::from(m);
                        assert_eq!(st.is_foreground(seq), fg);
                        let (src, dst) = if fg {
                            table_addresses(l, r, d == Direction::Forward)
                        } else {
                            background_addresses(d == Direction::Forward)
                        };
                        let v6 = matches!(src, Addr::V6(_));
                        let len = st.write_frame(seq, &mut buf);
                        assert_eq!(len, if v6 { size + 16 } else { size - 4 });
                        frames.push(buf[..len].to_vec());
                        expect.push((
                            format!("{l:?}/{r:?} n={n} m={m} {d} size {size} seq {seq:#x}"),
                            v6,
                            len,
                            src,
                            dst,
                            seq,
                        ));
                    }
                }
            }
        }
    }
    let rows = tshark_map("task-a", &frames, &FIELDS);
    let mut v4_frames = 0;
    for (row, (what, v6, len, src, dst, seq)) in rows.iter().zip(&expect) {
        let f = |k: &str| row[k].as_str();
        assert_eq!(f("frame.len"), len.to_string(), "{what}");
        assert_eq!(f("eth.src"), SRC_MAC.to_string(), "{what}");
        assert_eq!(f("eth.dst"), DST_MAC.to_string(), "{what}");
        let (s4, s6) = addr_fields(*src);
        let (d4, d6) = addr_fields(*dst);
        assert_eq!((f("ip.src"), f("ipv6.src")), (s4.as_str(), s6.as_str()), "{what}");
        assert_eq!((f("ip.dst"), f("ipv6.dst")), (d4.as_str(), d6.as_str()), "{what}");
        assert_eq!((f("udp.srcport"), f("udp.dstport")), ("49184", "7"), "{what}: RFC 2544 ports");
        if *v6 {
            assert_eq!(f("ip.checksum.status"), "", "{what}");
            assert_eq!(f("ipv6.plen"), (len - 54).to_string(), "{what}");
        } else {
            v4_frames += 1;
            assert_eq!(f("ip.checksum.status"), CHECKSUM_GOOD, "{what}: IPv4 header checksum");
            assert_eq!(f("ip.len"), (len - 14).to_string(), "{what}");
        }
        assert_eq!(f("udp.checksum.status"), CHECKSUM_GOOD, "{what}: UDP checksum");
        assert_eq!(f("_ws.malformed"), "", "{what}: malformed");
        assert_eq!(f("_ws.expert.severity"), "", "{what}: expert info {}", f("_ws.expert.message"));
        let payload = f("udp.payload").replace(':', "");
        let want = format!("4944454e54494659{seq:016x}");
        assert!(payload.starts_with(&want), "{what}: payload {payload}");
    }
    assert!(v4_frames > 1000);
}

/// The checks above would pass vacuously if tshark did not verify checksums: a frame with a
/// corrupted IPv4 header checksum, one with a corrupted UDP checksum and a truncated one must be
/// reported as such.
#[test]
fn tshark_catches_corrupted_frames() {
    let s = setup(IpVersion::V4, IpVersion::V4, 2, 2);
    let st = DirectionStream::new(&s, Direction::Forward, 84, SRC_MAC, DST_MAC).unwrap();
    let mut good = vec![0u8; 60];
    assert_eq!(st.write_frame(5, &mut good), 60);
    let mut bad_ip = good.clone();
    bad_ip[24] ^= 0x01;
    let mut bad_udp = good.clone();
    bad_udp[40] ^= 0x80;
    let mut short = good.clone();
    short.truncate(36);
    let rows = tshark_map("corrupt", &[good, bad_ip, bad_udp, short], &FIELDS);
    assert_eq!(rows[0]["ip.checksum.status"], CHECKSUM_GOOD);
    assert_eq!(rows[0]["udp.checksum.status"], CHECKSUM_GOOD);
    assert_eq!(rows[1]["ip.checksum.status"], "0");
    assert_eq!(rows[2]["udp.checksum.status"], "0");
    assert_ne!(rows[2]["_ws.expert.severity"], "");
    assert!(
        !rows[3]["_ws.malformed"].is_empty() || !rows[3]["_ws.expert.severity"].is_empty(),
        "{:?}",
        rows[3]
    );
}

/// A B4's frames (IPv4 in IPv6, `Side::tunnel`) with many B4 addresses (the left side's
/// addresses varying: the outer source) and pseudorandom ports: tshark dissects each as IPv6
/// from a B4 address to the AFTR carrying IPv4 and UDP with good checksums, the inner
/// addresses fixed; every frame is 40 bytes longer than its IPv4 frame. Frames to the B4 (the
/// reverse direction) are native: the DUT encapsulates them.
#[test]
fn b4_frames_dissect_as_ipv4_in_ipv6_from_many_b4s() {
    use std::collections::HashSet;
    use xlat_traffic::{SideId, SideTunnel, Variation};
    let mut s = setup(IpVersion::V4, IpVersion::V4, 2, 2);
    s.left.tunnel = Some(SideTunnel {
        local: "2001:2::2".parse().unwrap(),
        remote: "2001:2::1".parse().unwrap(),
    });
    set_ip_var(&mut s, SideId::Left, Variation::Pseudorandom, 2, 1001, 14);
    set_ports(
        &mut s,
        Direction::Forward,
        (Variation::Pseudorandom, 1024, 65535),
        (Variation::Increasing, 1, 1000),
    );
    let fields = [
        "frame.len",
        "ipv6.nxt",
        "ipv6.src",
        "ipv6.dst",
        "ipv6.plen",
        "ip.src",
        "ip.dst",
        "ip.checksum.status",
        "udp.checksum.status",
        "_ws.malformed",
    ];
    let mut buf = vec![0u8; 2048];
    for size in [84usize, 1518] {
        let st = DirectionStream::new(&s, Direction::Forward, size, SRC_MAC, DST_MAC).unwrap();
        let frames: Vec<Vec<u8>> = (0..2000u64)
            .map(|seq| {
                let n = st.write_frame(seq, &mut buf);
                buf[..n].to_vec()
            })
            .collect();
        let rows = tshark_map(&format!("b4-{size}"), &frames, &fields);
        let mut b4s = HashSet::new();
        for (seq, r) in rows.iter().enumerate() {
            let what = format!("size {size} seq {seq}: {r:?}");
            assert_eq!(r["frame.len"], (size - 20 - 4 + 40).to_string(), "{what}");
            assert_eq!((r["ipv6.nxt"].as_str(), r["ipv6.dst"].as_str()), ("4", "2001:2::1"), "{what}");
            assert_eq!(r["ipv6.plen"], (size - 20 - 4 - 14).to_string(), "{what}");
            let b4: std::net::Ipv6Addr = r["ipv6.src"].parse().unwrap();
            let id = b4.segments()[7];
            assert!(
                b4.segments()[..7] == [0x2001, 2, 0, 0, 0, 0, 0] && (2..=1001).contains(&id),
                "{what}"
            );
            b4s.insert(id);
            assert_eq!((r["ip.src"].as_str(), r["ip.dst"].as_str()), ("198.18.0.2", "198.19.0.2"), "{what}");
            assert_eq!(r["ip.checksum.status"], CHECKSUM_GOOD, "{what}");
            assert_eq!(r["udp.checksum.status"], CHECKSUM_GOOD, "{what}");
            assert_eq!(r["_ws.malformed"], "", "{what}");
        }
        assert!(b4s.len() > 800, "{} B4 addresses in 2,000 frames", b4s.len());
        // The other way the frames are native IPv4.
        let back = DirectionStream::new(&s, Direction::Reverse, size, SRC_MAC, DST_MAC).unwrap();
        let n = back.write_frame(0, &mut buf);
        assert_eq!((n, &buf[12..14]), (size - 20 - 4, &[8u8, 0][..]));
    }
}
