//! Frames of many MAP CEs: every one decodes, by the rule, to a subscriber of the side and a
//! port of that subscriber's set, with checksums that verify; the subscribers and ports are
//! pseudorandom over all of them; bursts equal single frames; bad settings name their key.

use super::*;
use crate::maprule::MapRule;
use crate::setup::SideTunnel;
use crate::stream::DirectionStream;
use crate::BurstScratch;
use std::collections::BTreeSet;
use std::net::{Ipv4Addr, Ipv6Addr};
use xlat_wire::{classify, MacAddr, Rx};

/// The lab's rule: 2001:2:0:c000::/50, 198.18.0.0/22, 14 EA bits (a 4-bit PSID), offset 6.
fn rule() -> MapRule {
    MapRule::new(("2001:2:0:c000::".parse().unwrap(), 50), ("198.18.0.0".parse().unwrap(), 22), 14, 6).unwrap()
}

/// The tester's CE: 198.18.0.2, PSID 1 (CE number 33).
fn own() -> Ipv6Addr {
    "2001:2:0:c021:0:c612:2:1".parse().unwrap()
}

/// MAP-E (`tunnel`) or MAP-T: the left side is `n` CEs of the rule, the right side IPv4.
fn setup(tunnel: bool, n: u32) -> Setup {
    // router4's sides (their IPv6 addresses for background frames), the left one the CEs'.
    let mut s = crate::stream::tests::router_setup(IpVersion::V4);
    s.seed = Some(7);
    let (left, right) = (&mut s.left, &mut s.right);
    if tunnel {
        left.tunnel = Some(SideTunnel {
            local: own(),
            remote: "2001:2::1".parse().unwrap(),
        });
    } else {
        left.ip_version = IpVersion::V6;
        left.ipv6_real = Some(own());
        left.ipv4_virt = left.ipv4_real;
        right.ipv6_virt = Some("2001:2:0:6464::c613:2".parse().unwrap());
    }
    left.map = Some(SideMap {
        rule: rule(),
        subscribers: n,
        ports: None,
        binding_psid: None,
    });
    s
}

const MAC: MacAddr = MacAddr([2, 0, 0, 0, 0, 1]);

/// The subscriber a frame is from or to: (its CE address, IPv4 address, port), read from the
/// frame; the frame must be an intact test frame (checksums verified by the receiver's code).
fn ce_of_frame(f: &[u8], from: bool) -> (Ipv6Addr, Ipv4Addr, u16) {
    assert!(matches!(classify(f), Rx::Test { .. }), "not an intact test frame: {f:02x?}");
    let be16 = |o: usize| u16::from_be_bytes([f[o], f[o + 1]]);
    let v6 = |o: usize| Ipv6Addr::from(<[u8; 16]>::try_from(&f[o..o + 16]).unwrap());
    let v4 = |o: usize| Ipv4Addr::from(<[u8; 4]>::try_from(&f[o..o + 4]).unwrap());
    match (be16(12), f[20], from) {
        // MAP-E: outer source, inner source, source port.
        (0x86dd, 4, true) => (v6(22), v4(54 + 12), be16(54 + 20)),
        // MAP-T: the IPv6 source; its IPv4 address is the rule's.
        (0x86dd, 17, true) => {
            let ce = rule().ce_of(v6(22)).expect("a CE address");
            (v6(22), ce.ipv4, be16(54))
        }
        // To a CE: the IPv4 destination and port (no IPv6 address in the frame).
        (0x0800, _, false) => (Ipv6Addr::UNSPECIFIED, v4(14 + 16), be16(14 + 22)),
        _ => panic!("unexpected frame {f:02x?}"),
    }
}

/// 1,000 CEs from the tester's own: every frame's CE is one of them (its address the rule's for
/// the frame's IPv4 address and port), every one of the 1,000 is used, their ports cover the
/// sets; the reverse frames go to them too. For MAP-E and MAP-T.
#[test]
fn frames_come_from_and_go_to_the_subscribers_by_the_rule() {
    let r = rule();
    let first = r.index(r.ce_of(own()).unwrap()).unwrap();
    let ours: BTreeSet<u64> = (first..first + 1000).collect();
    for tunnel in [true, false] {
        let s = setup(tunnel, 1000);
        let mut buf = [0u8; 256];
        for (d, from) in [(Direction::Forward, true), (Direction::Reverse, false)] {
            let st = DirectionStream::new(&s, d, 84, MAC, MAC).unwrap();
            let (mut seen, mut ports) = (BTreeSet::new(), BTreeSet::new());
            for seq in 0..50_000u64 {
                let n = st.write_frame_field(seq, seq, &mut buf);
                let (ce6, v4, port) = ce_of_frame(&buf[..n], from);
                let psid = r.psid_of(port).unwrap_or_else(|| panic!("port {port} in no set"));
                let ce = crate::maprule::Ce { ipv4: v4, psid };
                if from {
                    assert!(r.allows(ce6, v4, port), "{ce6} {v4} {port}");
                }
                let k = r.index(ce).unwrap();
                assert!(ours.contains(&k), "CE {k} ({v4} PSID {psid}) is not one of the side's");
                seen.insert(k);
                ports.insert(port);
            }
            assert_eq!(seen, ours, "tunnel {tunnel} {d:?}: every subscriber used");
            // 50,000 frames over the 16 PSIDs' 4,032 ports each (64,512): about 34,800 distinct
            // if pseudorandom.
            assert!(ports.len() > 30_000, "{}", ports.len());
        }
    }
}

/// Bursts (computed ahead, one row per word) write the frames single frames do, in a mix
/// with background frames too; one subscriber is the side's own addresses.
#[test]
fn bursts_equal_single_frames_and_one_subscriber_is_the_side() {
    for tunnel in [true, false] {
        for (n, fg_n) in [(1000, 2), (1, 2), (300, 3)] {
            let mut s = setup(tunnel, n);
            s.fg_n = fg_n;
            let mut scratch = BurstScratch::new(8);
            let mut bufs = vec![(vec![0u8; 256], 0u64); 64];
            let mut fresh = [0u8; 256];
            for d in [Direction::Forward, Direction::Reverse] {
                let st = DirectionStream::new(&s, d, 84, MAC, MAC).unwrap();
                for seq0 in [0u64, 1, 1 << 33] {
                    for tag in [0, 9u64 << 56] {
                        let b = st.burst_tagged(seq0, 64, tag, &mut scratch);
                        for (i, (buf, cookie)) in bufs.iter_mut().enumerate() {
                            let field = tag | (seq0 + i as u64);
                            let len = b.write(i, field, buf, cookie);
                            let want = st.write_frame_field(seq0 + i as u64, field, &mut fresh);
                            assert_eq!(&buf[..len], &fresh[..want], "tunnel {tunnel} n {n} {d:?} seq {}", seq0 + i as u64);
                        }
                    }
                }
                if n == 1 && d == Direction::Forward {
                    let len = st.write_frame_field(5, 5, &mut fresh);
                    let (ce6, v4, port) = ce_of_frame(&fresh[..len], true);
                    assert_eq!((ce6, v4, rule().psid_of(port)), (own(), "198.18.0.2".parse().unwrap(), Some(1)));
                }
            }
        }
    }
}

/// What cannot be built says which key: too many CEs for the rule, more ports than a set holds,
/// a port or address the configuration also varies, a side address that is no CE, MAP CEs on
/// both sides, a stateful test.
#[test]
fn bad_settings_name_their_key() {
    let err = |f: &dyn Fn(&mut Setup)| {
        let mut s = setup(true, 10);
        f(&mut s);
        DirectionStream::new(&s, Direction::Forward, 84, MAC, MAC).unwrap_err().to_string()
    };
    let e = err(&|s| s.left.map.as_mut().unwrap().subscribers = 16_385);
    assert!(e.contains("left.map.subscribers 16385") && e.contains("16384 CEs"), "{e}");
    let e = err(&|s| s.left.map.as_mut().unwrap().ports = Some(4033));
    assert!(e.contains("left.map.ports 4033") && e.contains("4032 ports"), "{e}");
    let e = err(&|s| s.forward_ports.sport.variation = Variation::Pseudorandom);
    assert!(
        e.contains("traffic.forward_ports.sport.variation") && e.contains("left.map.subscribers"),
        "{e}"
    );
    let e = err(&|s| s.left.ip_var.variation = Variation::Increasing);
    assert!(e.contains("left.ip_variation.variation"), "{e}");
    let e = err(&|s| s.left.tunnel.as_mut().unwrap().local = "2001:2:0:c021:0:c612:2:2".parse().unwrap());
    assert!(e.contains("left.tunnel.local 2001:2:0:c021:0:c612:2:2 is no CE address"), "{e}");
    let e = err(&|s| s.right.map = s.left.map);
    assert!(e.contains("only one side"), "{e}");
    let e = err(&|s| s.stateful.mode = crate::setup::Stateful::InitiatorLeft);
    assert!(e.contains("stateful"), "{e}");
}

/// lw4o6 (`binding_psid`): subscriber k is the k-th (address, PSID) after the side's own in the
/// rule's order, its lwB4 address the side's tunnel.local + k, as the lab's binding table lists
/// them; the rule's IPv6 prefix plays no part.
#[test]
fn lw4o6_lwb4s_count_up_from_the_sides_own() {
    let rule = MapRule::new((Ipv6Addr::UNSPECIFIED, 0), ("198.18.0.0".parse().unwrap(), 16), 22, 0).unwrap();
    let mut s = setup(true, 200);
    let local: Ipv6Addr = "2001:2::2".parse().unwrap();
    s.left.tunnel.as_mut().unwrap().local = local;
    s.left.map = Some(SideMap {
        rule,
        subscribers: 200,
        ports: None,
        binding_psid: Some(1),
    });
    let first = rule
        .index(crate::maprule::Ce {
            ipv4: "198.18.0.2".parse().unwrap(),
            psid: 1,
        })
        .unwrap();
    let st = DirectionStream::new(&s, Direction::Forward, 84, MAC, MAC).unwrap();
    let mut buf = [0u8; 256];
    let mut seen = BTreeSet::new();
    for seq in 0..20_000u64 {
        let n = st.write_frame_field(seq, seq, &mut buf);
        let (b4, v4, port) = ce_of_frame(&buf[..n], true);
        let k = (u128::from(b4) - u128::from(local)) as u64;
        assert!(k < 200, "{b4}");
        let ce = rule.ce(first + k).unwrap();
        assert_eq!(
            (v4, port >> 10),
            (ce.ipv4, ce.psid),
            "lwB4 {b4}: binding {k}'s address and port set"
        );
        seen.insert(k);
    }
    assert_eq!(seen.len(), 200);
    // Without a tunnel there is no lwB4 address to count from.
    s.left.tunnel = None;
    let e = DirectionStream::new(&s, Direction::Forward, 84, MAC, MAC).unwrap_err().to_string();
    assert!(e.contains("left.map.binding_psid") && e.contains("left.tunnel"), "{e}");
}
