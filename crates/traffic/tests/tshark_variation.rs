//! Task B under tshark: frames of every variation mode, IP version combination and mix,
//! dissected by Wireshark. Every checksum is good, nothing is malformed, and the addresses and
//! ports tshark reads are those of the independent model (`common::check_frame`), which also
//! checks the ranges and that no other bit changed.

mod common;

use common::*;
use xlat_traffic::{Direction, DirectionStream};

#[test]
fn varying_frames_dissect_cleanly_with_good_checksums() {
    let mut frames = Vec::new();
    let mut expect = Vec::new();
    let mut buf = vec![0u8; 2048];
    let seqs: Vec<u64> = seqs().into_iter().step_by(3).collect();
    for mode in modes() {
        for (l, r) in COMBOS {
            for (n, m) in MIXES {
                let mut s = setup(l, r, n, m);
                (mode.apply)(&mut s);
                for d in Direction::BOTH {
                    for size in [84, 1538] {
                        let st = DirectionStream::new(&s, d, size, SRC_MAC, DST_MAC).unwrap();
                        for &seq in &seqs {
                            let len = st.write_frame(seq, &mut buf);
                            let dec = check_frame(&s, d, size, seq, &buf[..len], SRC_MAC, DST_MAC);
                            frames.push(buf[..len].to_vec());
                            expect.push((format!("{}: {l:?}/{r:?} n={n} m={m} {d} size {size} seq {seq:#x}", mode.name), dec));
                        }
                    }
                }
            }
        }
    }
    assert_dissected(&tshark_map("task-b", &frames, &FIELDS), &expect);
}

/// The sender's path: bursts whose stores were computed ahead (`DirectionStream::burst` and
/// `Burst::write`) into recycled buffers, which still hold the previous burst's frames.
#[test]
fn burst_written_frames_dissect_cleanly_with_good_checksums() {
    let mut frames = Vec::new();
    let mut expect = Vec::new();
    let mut bufs = vec![(vec![0u8; 2048], 0u64); 32];
    let mut scratch = xlat_traffic::BurstScratch::new(32);
    for mode in modes() {
        for (l, r) in COMBOS {
            for (n, m) in MIXES {
                let mut s = setup(l, r, n, m);
                (mode.apply)(&mut s);
                let d = Direction::Forward;
                let st = DirectionStream::new(&s, d, 84, SRC_MAC, DST_MAC).unwrap();
                for seq0 in [0u64, 49_140, 65_530, (1 << 32) - 16] {
                    let b = st.burst(seq0, 32, &mut scratch);
                    for (i, (buf, cookie)) in bufs.iter_mut().enumerate() {
                        let seq = seq0 + i as u64;
                        let len = b.write(i, seq, buf, cookie);
                        let dec = check_frame(&s, d, 84, seq, &buf[..len], SRC_MAC, DST_MAC);
                        frames.push(buf[..len].to_vec());
                        expect.push((format!("{}: {l:?}/{r:?} n={n} m={m} burst seq {seq:#x}", mode.name), dec));
                    }
                }
            }
        }
    }
    assert_dissected(&tshark_map("task-b-bursts", &frames, &FIELDS), &expect);
}

/// Every row tshark gave: not malformed, no expert message, both checksums good, the addresses,
/// ports and MACs of the model's decoding.
fn assert_dissected(rows: &[std::collections::HashMap<String, String>], expect: &[(String, Decoded)]) {
    assert_eq!(rows.len(), expect.len());
    let text = |a: Addr| match a {
        Addr::V4(x) => (x.to_string(), String::new()),
        Addr::V6(x) => (String::new(), x.to_string()),
    };
    for (row, (what, dec)) in rows.iter().zip(expect) {
        let f = |k: &str| row[k].as_str();
        let v6 = matches!(dec.src, Addr::V6(_));
        assert_eq!(f("_ws.malformed"), "", "{what}");
        assert_eq!(f("_ws.expert.severity"), "", "{what}: {}", f("_ws.expert.message"));
        assert_eq!(f("udp.checksum.status"), CHECKSUM_GOOD, "{what}: UDP checksum");
        assert_eq!(
            f("ip.checksum.status"),
            if v6 { "" } else { CHECKSUM_GOOD },
            "{what}: IPv4 header checksum"
        );
        let (s4, s6) = text(dec.src);
        let (d4, d6) = text(dec.dst);
        assert_eq!((f("ip.src"), f("ipv6.src")), (s4.as_str(), s6.as_str()), "{what}");
        assert_eq!((f("ip.dst"), f("ipv6.dst")), (d4.as_str(), d6.as_str()), "{what}");
        assert_eq!(f("udp.srcport"), dec.sport.to_string(), "{what}");
        assert_eq!(f("udp.dstport"), dec.dport.to_string(), "{what}");
        assert_eq!(
            (f("eth.src"), f("eth.dst")),
            (SRC_MAC.to_string().as_str(), DST_MAC.to_string().as_str()),
            "{what}"
        );
    }
}
