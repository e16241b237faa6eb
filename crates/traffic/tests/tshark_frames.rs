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
