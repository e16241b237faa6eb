//! Tests of `stream.rs`.

use super::*;
use crate::setup::*;
use crate::vary::Variation;
use xlat_wire::frame::{IpPair, TestFrame};
use xlat_wire::{classify, Rx};

#[test]
fn patching_a_recycled_buffer_equals_writing_afresh() {
    for v in [IpVersion::V4, IpVersion::V6] {
        let mut s = router_setup(v);
        s.fg_n = 10;
        s.fg_m = 9;
        s.forward_ports.sport.variation = Variation::Pseudorandom;
        s.forward_ports.dport.variation = Variation::Increasing;
        s.left.ip_var.variation = Variation::Pseudorandom;
        s.right.ip_var.variation = Variation::Decreasing;
        s.right.ip_var.min = 2;
        s.right.ip_var.max = 1001;
        let mac = xlat_wire::MacAddr([2, 0, 0, 0, 0, 1]);
        let st = DirectionStream::new(&s, Direction::Forward, 84, mac, mac).unwrap();
        let other = DirectionStream::new(&s, Direction::Reverse, 84, mac, mac).unwrap();
        // A pool of recycled buffers, as a backend's mempool hands them out; one of them is
        // used meanwhile by another stream (another cookie, other bytes).
        let mut pool = vec![(vec![0xa5u8; 256], 0u64); 5];
        let mut fresh = [0u8; 256];
        for seq in 0..5_000u64 {
            let (buf, cookie) = &mut pool[(seq as usize * 7) % 5];
            if seq % 13 == 0 {
                other.write_frame_cookie(seq, seq, buf, cookie);
            }
            let n = st.write_frame_cookie(seq, seq | (3 << 56), buf, cookie);
            let m = st.write_frame_field(seq, seq | (3 << 56), &mut fresh);
            assert_eq!(n, m);
            assert_eq!(&buf[..n], &fresh[..m], "{v:?} seq {seq}");
        }
    }
}

#[test]
fn a_burst_writes_the_frames_of_write_frame_field() {
    let mac = xlat_wire::MacAddr([2, 0, 0, 0, 0, 1]);
    let modes: [fn(&mut Setup); 5] = [
        |_| {},
        |s| {
            s.forward_ports.sport.variation = Variation::Pseudorandom;
            s.forward_ports.dport.variation = Variation::Pseudorandom;
        },
        |s| {
            s.forward_ports.sport.variation = Variation::Increasing;
            s.forward_ports.dport.variation = Variation::Decreasing;
            s.forward_ports.dport.min = 7;
            s.forward_ports.dport.max = 11;
            s.left.ip_var.variation = Variation::Pseudorandom;
            s.right.num_nets = 256;
        },
        |s| {
            s.forward_ports.sport.variation = Variation::Pseudorandom;
            s.forward_ports.dport.variation = Variation::Pseudorandom;
            s.left.ip_var.variation = Variation::Pseudorandom;
            s.right.ip_var.variation = Variation::Decreasing;
            s.right.ip_var.min = 2;
            s.right.ip_var.max = 1001;
            s.fg_n = 7;
            s.fg_m = 5;
        },
        |s| {
            s.fg_m = 0;
            s.left.ip_var.variation = Variation::Increasing;
        },
    ];
    for v in [IpVersion::V4, IpVersion::V6] {
        for (k, mode) in modes.iter().enumerate() {
            let mut s = router_setup(v);
            mode(&mut s);
            let st = DirectionStream::new(&s, Direction::Forward, 84, mac, mac).unwrap();
            let mut scratch = BurstScratch::new(4);
            let mut bufs = vec![(vec![0u8; 256], 0u64); 32];
            let mut fresh = [0u8; 256];
            for seq0 in [0u64, 1, 100, (1 << 32) - 17, 0x00ab_cdef_0123_4567] {
                for n in [1usize, 5, 32] {
                    let b = st.burst(seq0, n, &mut scratch);
                    assert_eq!(b.len(), n);
                    for (i, (buf, cookie)) in bufs.iter_mut().enumerate().take(n) {
                        let field = (seq0 + i as u64) | (9 << 56);
                        let len = b.write(i, field, buf, cookie);
                        let want = st.write_frame_field(seq0 + i as u64, field, &mut fresh);
                        assert_eq!(len, want);
                        assert_eq!(&buf[..len], &fresh[..want], "{v:?} mode {k} seq {}", seq0 + i as u64);
                    }
                    assert_eq!(b.write(n, 0, &mut fresh, &mut 0), 0);
                    // A trial's fields, tag | (seq0 + i), whose checksums the burst computed
                    // ahead; and a tag whose bits the sequence numbers reach (computed per frame).
                    for tag in [9u64 << 56, 1 << 5] {
                        let b = st.burst_tagged(seq0, n, tag, &mut scratch);
                        for (i, (buf, cookie)) in bufs.iter_mut().enumerate().take(n) {
                            let field = tag | (seq0 + i as u64);
                            let len = b.write(i, field, buf, cookie);
                            let want = st.write_frame_field(seq0 + i as u64, field, &mut fresh);
                            assert_eq!(&buf[..len], &fresh[..want], "{v:?} mode {k} tag {tag:#x} seq {}", seq0 + i as u64);
                        }
                    }
                }
            }
        }
    }
}

fn tuple_of(st: &DirectionStream, seq: u64, buf: &mut [u8]) -> (std::net::IpAddr, std::net::IpAddr, u16, u16) {
    let n = st.write_frame_field(seq, seq | (1 << 56), buf);
    assert!(
        matches!(classify(&buf[..n]), Rx::Test { field, .. } if field == seq | (1 << 56)),
        "seq {seq}"
    );
    xlat_wire::udp_tuple(&buf[..n]).unwrap()
}

fn stateful_setup() -> Setup {
    let mut s = router_setup(IpVersion::V4);
    s.stateful.mode = Stateful::InitiatorLeft;
    s.forward_ports.sport = PortField {
        variation: Variation::Pseudorandom,
        min: 1024,
        max: 1123,
    };
    s.forward_ports.dport = PortField {
        variation: Variation::Fixed,
        min: 1,
        max: 50,
    };
    s
}

#[test]
fn phase_one_bursts_of_any_size_and_order_equal_single_frames_with_a_shared_scratch() {
    // The combinations computed ahead (burst.rs AHEAD) serve bursts that are short, long,
    // paced (gaps), repeated or backwards, and a scratch used by two streams alternately.
    let mac = MacAddr([2, 0, 0, 0, 0, 1]);
    let mut s = stateful_setup();
    s.stateful.enumerate_ports = Variation::Pseudorandom;
    s.fg_n = 1;
    s.fg_m = 1;
    let a = DirectionStream::preliminary(&s, Direction::Forward, 84, mac, mac).unwrap();
    s.seed = Some(99);
    let b = DirectionStream::preliminary(&s, Direction::Forward, 84, mac, mac).unwrap();
    let mut scratch = BurstScratch::new(8);
    let (mut bb, mut want) = (vec![0u8; 256], vec![0u8; 256]);
    let plan: [(u64, usize); 12] = [
        (0, 32),
        (32, 7),
        (39, 1),
        (100, 32),
        (90, 20),
        (250, 10),
        (255, 300),
        (4_990, 32),
        (0, 3),
        (1_000, 256),
        (1_256, 1),
        (4_999, 1),
    ];
    for (seq0, n) in plan {
        for st in [&a, &b] {
            let burst = st.burst(seq0, n, &mut scratch);
            let mut cookie = 0;
            for i in 0..n {
                let seq = seq0 + i as u64;
                let len = burst.write(i, seq, &mut bb, &mut cookie);
                let wl = st.write_frame_field(seq, seq, &mut want);
                assert_eq!(&bb[..len], &want[..wl], "seq {seq} in burst ({seq0}, {n})");
            }
        }
    }
}

#[test]
fn phase_one_enumerates_every_port_pair_once_and_background_keeps_its_ports() {
    let mac = MacAddr([2, 0, 0, 0, 0, 1]);
    for order in [Variation::Increasing, Variation::Decreasing, Variation::Pseudorandom] {
        let mut s = stateful_setup();
        s.stateful.enumerate_ports = order;
        s.fg_n = 3;
        s.fg_m = 2;
        let st = DirectionStream::preliminary(&s, Direction::Forward, 84, mac, mac).unwrap();
        assert_eq!(st.enumeration_count(), Some(100 * 50));
        let total = 7500u64; // 5000 foreground frames
        assert_eq!(st.foreground_count(total), 5000);
        let mut buf = [0u8; 256];
        let mut seen = std::collections::HashSet::new();
        // Bursts write what single frames write.
        let mut scratch = BurstScratch::new(32);
        let mut bufs = vec![(vec![0u8; 256], 0u64); 32];
        for seq0 in (0..total).step_by(32) {
            let n = 32.min((total - seq0) as usize);
            let b = st.burst(seq0, n, &mut scratch);
            for (i, (bb, cookie)) in bufs.iter_mut().enumerate().take(n) {
                let seq = seq0 + i as u64;
                let len = b.write(i, seq | (1 << 56), bb, cookie);
                let want = st.write_frame_field(seq, seq | (1 << 56), &mut buf);
                assert_eq!(&bb[..len], &buf[..want], "{order:?} seq {seq}");
                if st.is_foreground(seq) {
                    let (src, dst, sp, dp) = tuple_of(&st, seq, &mut buf);
                    assert_eq!((src, dst), ("198.18.0.2".parse().unwrap(), "198.19.0.2".parse().unwrap()));
                    assert!((1024..=1123).contains(&sp) && (1..=50).contains(&dp));
                    assert!(seen.insert((sp, dp)), "{order:?}: {sp} {dp} twice");
                } else {
                    // Background (IPv6) frames: the configured fixed destination port.
                    let n = st.write_frame(seq, &mut buf);
                    assert_eq!(u16::from_be_bytes([buf[14 + 40 + 2], buf[14 + 40 + 3]]), RFC2544_DPORT);
                    assert_eq!(n, 80);
                }
            }
        }
        assert_eq!(seen.len(), 5000);
        if order == Variation::Increasing {
            let t = tuple_of(&st, 0, &mut buf);
            assert_eq!((t.2, t.3), (1024, 1));
            let t = tuple_of(&st, 1, &mut buf);
            assert_eq!((t.2, t.3), (1025, 1));
            let t = tuple_of(&st, 3, &mut buf);
            assert_eq!((t.2, t.3), (1026, 1));
        }
        if order == Variation::Decreasing {
            let t = tuple_of(&st, 0, &mut buf);
            assert_eq!((t.2, t.3), (1123, 50));
        }
    }
}

#[test]
fn phase_one_is_reproducible_from_the_seed() {
    let mac = MacAddr([2, 0, 0, 0, 0, 1]);
    let mut s = stateful_setup();
    s.stateful.enumerate_ports = Variation::Pseudorandom;
    let a = DirectionStream::preliminary(&s, Direction::Forward, 84, mac, mac).unwrap();
    let b = DirectionStream::preliminary(&s, Direction::Forward, 84, mac, mac).unwrap();
    s.seed = Some(2);
    let c = DirectionStream::preliminary(&s, Direction::Forward, 84, mac, mac).unwrap();
    let (mut x, mut y) = ([0u8; 128], [0u8; 128]);
    let mut differ = 0;
    for seq in 0..1000 {
        let n = a.write_frame(seq, &mut x);
        assert_eq!(b.write_frame(seq, &mut y), n);
        assert_eq!(x[..n], y[..n]);
        c.write_frame(seq, &mut y);
        differ += usize::from(x[..n] != y[..n]);
    }
    assert!(differ > 900);
}

#[test]
fn responder_frames_answer_on_learnt_tuples() {
    let mac = MacAddr([2, 0, 0, 0, 0, 1]);
    let mut s = stateful_setup();
    s.fg_n = 4;
    s.fg_m = 3;
    let table = std::sync::Arc::new(crate::state::StateTable::new(10).unwrap());
    let tuple = |k: u16| crate::state::Tuple4 {
        initiator: "198.19.0.1".parse().unwrap(),
        responder: std::net::Ipv4Addr::new(198, 19, 1, k as u8).into(),
        initiator_port: 40_000 + k,
        responder_port: 80 + k,
    };
    for k in 0..10 {
        table.learn(tuple(k));
    }
    let mut buf = [0u8; 256];
    for (sel, want) in [
        (Variation::Fixed, [0u16, 0, 0, 0, 0, 0]),
        (Variation::Increasing, [0, 1, 2, 3, 4, 5]),
        (Variation::Decreasing, [9, 8, 7, 6, 5, 4]),
    ] {
        s.stateful.responder_tuples = sel;
        let st = DirectionStream::responder(&s, Direction::Reverse, 84, mac, mac, table.clone()).unwrap();
        let fg: Vec<u64> = (0..8).filter(|q| st.is_foreground(*q)).collect();
        for (k, seq) in fg.iter().enumerate() {
            let t = tuple(want[k]);
            // Source and destination swapped: from the Responder to the Initiator.
            assert_eq!(
                tuple_of(&st, *seq, &mut buf),
                (t.responder, t.initiator, t.responder_port, t.initiator_port),
                "{sel:?}"
            );
        }
        assert_eq!(st.write_frame(3, &mut buf), 80, "background frames stay native IPv6");
    }
    s.stateful.responder_tuples = Variation::Pseudorandom;
    // A mix of foreground and background frames, and all foreground (whose bursts are
    // written from rows of the tuples, read a burst at a time).
    for (fg_n, fg_m) in [(4, 3), (2, 2)] {
        s.fg_n = fg_n;
        s.fg_m = fg_m;
        let st = DirectionStream::responder(&s, Direction::Reverse, 84, mac, mac, table.clone()).unwrap();
        let mut hits = [0u32; 10];
        let mut scratch = BurstScratch::new(64);
        let mut bufs = vec![(vec![0u8; 256], 0u64); 64];
        for seq0 in (0..40_000u64).step_by(64) {
            let b = st.burst(seq0, 64, &mut scratch);
            for (i, (bb, c)) in bufs.iter_mut().enumerate() {
                let seq = seq0 + i as u64;
                let n = b.write(i, seq, bb, c);
                let want = st.write_frame_field(seq, seq, &mut buf);
                assert_eq!(&bb[..n], &buf[..want], "seq {seq}");
                if let Rx::Test { v6: false, .. } = classify(&bb[..n]) {
                    let (std::net::IpAddr::V4(src), ..) = xlat_wire::udp_tuple(&bb[..n]).unwrap() else {
                        panic!("an IPv4 Responder frame")
                    };
                    hits[usize::from(src.octets()[3])] += 1;
                }
            }
        }
        // 40,000 * m / n foreground frames over 10 entries: each near a tenth.
        let each = 4_000 * fg_m / fg_n;
        assert!(hits.iter().all(|h| (each * 9 / 10..each * 11 / 10).contains(h)), "{hits:?}");
    }
}

#[test]
fn an_ipv6_responder_answers_on_ipv6_tuples() {
    let mac = MacAddr([2, 0, 0, 0, 0, 1]);
    let mut s = stateful_setup();
    s.left.ip_version = IpVersion::V6;
    s.right.ip_version = IpVersion::V6;
    let table = std::sync::Arc::new(crate::state::StateTable::with_version(4, true).unwrap());
    let t = |k: u16| crate::state::Tuple4 {
        initiator: std::net::Ipv6Addr::new(0x2001, 2, 0, 0x8000, 0, 0, 0, 1).into(),
        responder: std::net::Ipv6Addr::new(0x2001, 2, 0, 0x8000, 0, 0, 0xabcd, k).into(),
        initiator_port: 40_000 + k,
        responder_port: 80 + k,
    };
    for k in 0..4 {
        assert!(table.learn(t(k)));
    }
    s.stateful.responder_tuples = Variation::Increasing;
    let st = DirectionStream::responder(&s, Direction::Reverse, 84, mac, mac, table).unwrap();
    let mut buf = [0u8; 256];
    let mut scratch = BurstScratch::new(8);
    let mut bufs = vec![(vec![0u8; 256], 0u64); 8];
    let b = st.burst(0, 8, &mut scratch);
    for (i, (bb, c)) in bufs.iter_mut().enumerate() {
        let n = b.write(i, i as u64, bb, c);
        assert_eq!(n, 80, "84-byte IPv6 frames");
        // Checksums verified by classify (an intact test frame).
        assert_eq!(classify(&bb[..n]), Rx::Test { v6: true, field: i as u64 });
        let x = t(i as u16 % 4);
        assert_eq!(
            xlat_wire::udp_tuple(&bb[..n]),
            Some((x.responder, x.initiator, x.responder_port, x.initiator_port))
        );
        let want = st.write_frame_field(i as u64, i as u64, &mut buf);
        assert_eq!(&bb[..n], &buf[..want]);
    }
}

pub(crate) fn router_setup(v: IpVersion) -> Setup {
    let mut left = Side::new(v);
    let mut right = Side::new(v);
    left.ipv4_real = Some("198.18.0.2".parse().unwrap());
    right.ipv4_real = Some("198.19.0.2".parse().unwrap());
    left.ipv6_real = Some("2001:2::2".parse().unwrap());
    right.ipv6_real = Some("2001:2:0:8000::2".parse().unwrap());
    Setup {
        left,
        right,
        forward: true,
        reverse: true,
        forward_ports: PortSpec::default(),
        reverse_ports: PortSpec::default(),
        fg_n: 2,
        fg_m: 2,
        stateful: StatefulSpec::default(),
        seed: Some(1),
        allow_foreign_addresses: false,
    }
}

#[test]
fn patched_frames_have_valid_checksums_and_sequence() {
    let s = router_setup(IpVersion::V4);
    let st = DirectionStream::new(&s, Direction::Forward, 84, MacAddr([2, 0, 0, 0, 0, 1]), MacAddr([2, 0, 0, 0, 0, 2])).unwrap();
    let mut buf = [0u8; 2048];
    for seq in [0u64, 1, 0xffff, 0x1_0000_0000, u64::MAX, 0x0123_4567_89ab_cdef] {
        let len = st.write_frame(seq, &mut buf);
        assert_eq!(len, 60);
        assert_eq!(classify(&buf[..len]), Rx::Test { v6: false, field: seq });
        let f = TestFrame {
            eth_dst: MacAddr([2, 0, 0, 0, 0, 2]),
            eth_src: MacAddr([2, 0, 0, 0, 0, 1]),
            ip: IpPair::V4 {
                src: "198.18.0.2".parse().unwrap(),
                dst: "198.19.0.2".parse().unwrap(),
            },
            sport: RFC2544_SPORT,
            dport: RFC2544_DPORT,
            frame_size: 64,
            field: seq,
            tunnel: None,
        };
        let mut full = [0u8; 60];
        f.write(&mut full).unwrap();
        assert_eq!(&buf[..60], &full[..], "seq {seq:#x}");
    }
}

#[test]
fn background_mix_follows_n_m() {
    let mut s = router_setup(IpVersion::V4);
    s.fg_n = 10;
    s.fg_m = 9;
    let st = DirectionStream::new(&s, Direction::Reverse, 84, MacAddr([2, 0, 0, 0, 0, 1]), MacAddr([2, 0, 0, 0, 0, 2])).unwrap();
    let mut buf = [0u8; 256];
    let v6: Vec<bool> = (0..20)
        .map(|i| {
            let n = st.write_frame(i, &mut buf);
            match classify(&buf[..n]) {
                Rx::Test { v6, .. } => v6,
                other => panic!("{other:?}"),
            }
        })
        .collect();
    assert_eq!(v6.iter().filter(|b| **b).count(), 2);
    assert!(v6[9] && v6[19]);
    // 84-byte IPv6 background frames next to 64-byte IPv4 foreground frames.
    assert_eq!(st.write_frame(9, &mut buf), 80);
    assert_eq!(st.write_frame(0, &mut buf), 60);
}

#[test]
fn missing_address_is_named() {
    let mut s = router_setup(IpVersion::V6);
    s.right.ipv6_real = None;
    let e = DirectionStream::new(&s, Direction::Forward, 84, MacAddr::ZERO, MacAddr::ZERO).unwrap_err();
    assert_eq!(e.to_string(), "IPv6-R-Real is needed but not set");
}

/// The bytes a stream says change from frame to frame (for placing frames in cache lines)
/// hold every byte that differs between its frames, and are the span of the fields that may.
#[test]
fn hot_bytes_hold_every_byte_that_changes() {
    let mac = MacAddr([2, 0, 0, 0, 0, 1]);
    for v in [IpVersion::V4, IpVersion::V6] {
        for mode in 0..4 {
            let mut s = router_setup(v);
            if mode >= 1 {
                s.forward_ports.sport.variation = Variation::Pseudorandom;
                s.forward_ports.dport.variation = Variation::Pseudorandom;
            }
            if mode >= 2 {
                s.left.ip_var.variation = Variation::Pseudorandom;
                s.right.ip_var.variation = Variation::Pseudorandom;
            }
            if mode == 3 {
                s.right.ip_var.variation = Variation::Fixed;
                s.right.num_nets = 256;
            }
            let st = DirectionStream::new(&s, Direction::Forward, 84, mac, mac).unwrap();
            let hot = st.hot_bytes();
            let mut first = [0u8; 128];
            let len = st.write_frame(0, &mut first);
            let mut changed = vec![false; len];
            for seq in 1..2000u64 {
                let mut buf = [0u8; 128];
                assert_eq!(st.write_frame(seq.wrapping_mul(0x9e37_79b9_7f4a_7c15), &mut buf), len);
                for (c, (a, b)) in changed.iter_mut().zip(first.iter().zip(&buf)) {
                    *c |= a != b;
                }
            }
            let changed: Vec<usize> = (0..len).filter(|&i| changed[i]).collect();
            assert!(
                changed.iter().all(|i| hot.contains(i)),
                "{v:?} mode {mode}: {changed:?} outside {hot:?}"
            );
            // From the first field that may change to the payload field's end (Ethernet 14,
            // IPv4 20 or IPv6 40, UDP 8, the signature 8, the field 8).
            let field_end = if v == IpVersion::V4 { 58 } else { 78 };
            let want = match (v, mode) {
                (IpVersion::V4, 0) | (IpVersion::V6, 0) => field_end - 18..field_end, // UDP checksum on
                (_, 1) => field_end - 24..field_end,                                  // the ports on
                (IpVersion::V4, _) => 24..58,                                         // the IPv4 header checksum on
                (IpVersion::V6, _) => *changed.first().unwrap()..78,
            };
            assert_eq!(hot, want, "{v:?} mode {mode}");
        }
    }
}
