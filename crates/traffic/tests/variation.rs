//! Task B: RFC 4814 ports, multiple IP addresses and destination networks, checked against an
//! independent model of the frames (`common::check_frame`), for uniformity (chi-square), for the
//! wrap of increasing/decreasing fields, for reproducibility by seed, and for the tester's
//! address sets.

mod common;

use common::*;
use std::collections::BTreeSet;
use xlat_traffic::{Direction, DirectionStream, IpVersion, Setup, SideId, StreamError, Variation};

use Variation::{Decreasing as Dec, Fixed, Increasing as Inc, Pseudorandom as Rnd};

#[test]
fn every_mode_version_and_mix_matches_the_model() {
    let mut buf = vec![0u8; 2048];
    let mut checked = 0;
    for mode in modes() {
        for (l, r) in COMBOS {
            for (n, m) in MIXES {
                let mut s = setup(l, r, n, m);
                (mode.apply)(&mut s);
                for d in Direction::BOTH {
                    for size in [84, 1538] {
                        let st = DirectionStream::new(&s, d, size, SRC_MAC, DST_MAC).unwrap_or_else(|e| panic!("{}: {e}", mode.name));
                        for seq in seqs() {
                            let len = st.write_frame(seq, &mut buf);
                            check_frame(&s, d, size, seq, &buf[..len], SRC_MAC, DST_MAC);
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 100_000);
}

/// The byte positions where frames of `s` differ from the same frames without any variation.
fn changed_bytes(s: &Setup, d: Direction, frames: u64) -> BTreeSet<usize> {
    let mut plain = s.clone();
    plain.forward_ports = Default::default();
    plain.reverse_ports = Default::default();
    for id in [SideId::Left, SideId::Right] {
        plain.side_mut(id).ip_var = Default::default();
        plain.side_mut(id).num_nets = 1;
    }
    let a = DirectionStream::new(s, d, 84, SRC_MAC, DST_MAC).unwrap();
    let b = DirectionStream::new(&plain, d, 84, SRC_MAC, DST_MAC).unwrap();
    let (mut fa, mut fb) = ([0u8; 128], [0u8; 128]);
    let mut set = BTreeSet::new();
    for seq in 0..frames {
        let n = a.write_frame(seq, &mut fa);
        assert_eq!(n, b.write_frame(seq, &mut fb));
        set.extend((0..n).filter(|i| fa[*i] != fb[*i]));
    }
    set
}

#[test]
fn only_the_varying_bits_change() {
    // IPv6 router, right side offset 12: forward destinations change in bits 96-111 only
    // (bytes 12-13 of the destination at 14 + 24), plus the UDP checksum (14 + 40 + 6).
    let mut s = setup(IpVersion::V6, IpVersion::V6, 2, 2);
    set_ip_var(&mut s, SideId::Right, Rnd, 0, 65535, 12);
    let want: BTreeSet<usize> = [14 + 24 + 12, 14 + 24 + 13, 60, 61].into();
    assert_eq!(changed_bytes(&s, Direction::Forward, 5000), want);
    // The reverse direction: the same bits of the source.
    let want: BTreeSet<usize> = [14 + 8 + 12, 14 + 8 + 13, 60, 61].into();
    assert_eq!(changed_bytes(&s, Direction::Reverse, 5000), want);

    // IPv4 router, Num-R-Nets 256: only bits 16-23 of the destination (byte 14 + 16 + 2), the
    // IPv4 header checksum (14 + 10) and the UDP checksum (14 + 20 + 6).
    let mut s = setup(IpVersion::V4, IpVersion::V4, 2, 2);
    s.right.num_nets = 256;
    let want: BTreeSet<usize> = [24, 25, 14 + 16 + 2, 40, 41].into();
    assert_eq!(changed_bytes(&s, Direction::Forward, 5000), want);
    assert!(changed_bytes(&s, Direction::Reverse, 100).is_empty());

    // IPv6 destination networks: bits 56-63 (byte 7) of the destination.
    let mut s = setup(IpVersion::V6, IpVersion::V6, 2, 2);
    s.right.num_nets = 256;
    let want: BTreeSet<usize> = [14 + 24 + 7, 60, 61].into();
    assert_eq!(changed_bytes(&s, Direction::Forward, 5000), want);

    // RFC 4814 ports over IPv4: the ports and the UDP checksum only, never the IPv4 header.
    let mut s = setup(IpVersion::V4, IpVersion::V4, 2, 2);
    set_ports(&mut s, Direction::Forward, (Rnd, SPORT.0, SPORT.1), (Rnd, DPORT.0, DPORT.1));
    let want: BTreeSet<usize> = [34, 35, 36, 37, 40, 41].into();
    assert_eq!(changed_bytes(&s, Direction::Forward, 5000), want);

    // Both IPv4 addresses: last 16 bits of each, both checksums.
    let mut s = setup(IpVersion::V4, IpVersion::V4, 2, 2);
    set_ip_var(&mut s, SideId::Left, Rnd, 0, 65535, 14);
    set_ip_var(&mut s, SideId::Right, Rnd, 0, 65535, 14);
    let want: BTreeSet<usize> = [24, 25, 28, 29, 32, 33, 40, 41].into();
    assert_eq!(changed_bytes(&s, Direction::Forward, 5000), want);
}

/// Background frames (native IPv6) vary like foreground ones: ports, both addresses at the IPv6
/// offsets, destination networks.
#[test]
fn background_frames_vary_too() {
    let mut s = setup(IpVersion::V4, IpVersion::V4, 2, 0);
    set_ports(&mut s, Direction::Forward, (Rnd, SPORT.0, SPORT.1), (Inc, DPORT.0, DPORT.1));
    set_ip_var(&mut s, SideId::Left, Rnd, 0, 65535, 12);
    s.right.num_nets = 16;
    let st = DirectionStream::new(&s, Direction::Forward, 84, SRC_MAC, DST_MAC).unwrap();
    let mut buf = [0u8; 128];
    let mut nets = BTreeSet::new();
    let mut srcs = BTreeSet::new();
    for seq in 0..2000 {
        let n = st.write_frame(seq, &mut buf);
        let d = check_frame(&s, Direction::Forward, 84, seq, &buf[..n], SRC_MAC, DST_MAC);
        assert!(!d.fg);
        nets.insert(d.net.unwrap());
        srcs.insert(d.src_var.unwrap());
    }
    assert_eq!(nets.len(), 16);
    assert!(srcs.len() > 1900);
}

/// The 16-bit words at byte offsets `offs` of frames `first .. first + frames` of a stream.
fn collect_words(s: &Setup, d: Direction, first: u64, frames: u64, offs: &[usize]) -> Vec<Vec<u16>> {
    let st = DirectionStream::new(s, d, 84, SRC_MAC, DST_MAC).unwrap();
    let mut out: Vec<Vec<u16>> = offs.iter().map(|_| Vec::with_capacity(frames as usize)).collect();
    let mut buf = [0u8; 128];
    for seq in first..first + frames {
        st.write_frame(seq, &mut buf);
        for (o, v) in offs.iter().zip(out.iter_mut()) {
            v.push(u16::from_be_bytes([buf[*o], buf[*o + 1]]));
        }
    }
    out
}

/// One chi-square test at p = 0.001 of `sample(first, frames)`, the values of frames
/// `first .. first + frames`, whose statistic and degrees of freedom `stat` gives; with the usual
/// rule of sequential testing for the suite's many tests (about 60, so a sound generator fails
/// one of them at p = 0.001 now and then): a statistic outside the critical values is tested
/// again on the next 4 x FRAMES frames, and only a deviation that persists there fails.
fn chi_check(what: &str, sample: impl Fn(u64, u64) -> Vec<u16>, stat: impl Fn(&[u16]) -> (f64, f64), two_sided: bool) {
    let judge = |v: &[u16]| -> Result<(), String> {
        let (stat, dof) = stat(v);
        let crit = chi2_critical(dof, Z_0_001);
        if stat >= crit {
            return Err(format!(
                "chi-square {stat:.1} >= critical {crit:.1} ({dof} degrees of freedom, p = 0.001)"
            ));
        }
        // A generator that is "too uniform" (e.g. a counter) is not random either.
        let low = chi2_critical(dof, -Z_0_001);
        if two_sided && stat <= low {
            return Err(format!("chi-square {stat:.1} <= lower critical {low:.1}: suspiciously regular"));
        }
        Ok(())
    };
    if let Err(first) = judge(&sample(0, FRAMES)) {
        eprintln!("{what}: {first}; testing again on the next {} frames", 4 * FRAMES);
        if let Err(again) = judge(&sample(FRAMES, 4 * FRAMES)) {
            panic!("{what}: {first}, and again on the next {} frames: {again}", 4 * FRAMES);
        }
    }
}

fn assert_uniform(what: &str, sample: impl Fn(u64, u64) -> Vec<u16>, min: u16, max: u16, bins: usize) {
    chi_check(what, sample, |v| chi2_uniform(v, min, max, bins), true);
}

const FRAMES: u64 = 1_000_000;
const SEEDS: [u64; 3] = [1, 0xdead_beef, 0x0123_4567_89ab_cdef];

#[test]
fn pseudorandom_ports_are_uniform() {
    for seed in SEEDS {
        let mut s = setup(IpVersion::V4, IpVersion::V4, 2, 2);
        s.seed = Some(seed);
        set_ports(&mut s, Direction::Forward, (Rnd, SPORT.0, SPORT.1), (Rnd, DPORT.0, DPORT.1));
        set_ports(&mut s, Direction::Reverse, (Rnd, 1000, 1009), (Rnd, 0, 65535));
        let word = |d: Direction, off: usize| {
            let s = &s;
            move |first, n| collect_words(s, d, first, n, &[off]).swap_remove(0)
        };
        let fwd = Direction::Forward;
        assert_uniform(
            &format!("seed {seed:#x} forward source port, 256 bins"),
            word(fwd, 34),
            SPORT.0,
            SPORT.1,
            256,
        );
        assert_uniform(
            &format!("seed {seed:#x} forward destination port, 256 bins"),
            word(fwd, 36),
            DPORT.0,
            DPORT.1,
            256,
        );
        assert_uniform(
            &format!("seed {seed:#x} forward source port, 4096 bins"),
            word(fwd, 34),
            SPORT.0,
            SPORT.1,
            4096,
        );
        let rev = Direction::Reverse;
        assert_uniform(
            &format!("seed {seed:#x} reverse source port 1000-1009"),
            word(rev, 34),
            1000,
            1009,
            10,
        );
        assert_uniform(
            &format!("seed {seed:#x} reverse destination port 0-65535, 1024 bins"),
            word(rev, 36),
            0,
            65535,
            1024,
        );
        // Independence: source and destination port of the same frame, and the source ports of
        // consecutive frames, over 16 x 16 cells.
        let cell = |v: u16, min: u16, max: u16| usize::from(v - min) * 16 / (usize::from(max - min) + 1);
        let joint = |first, n| {
            let f = collect_words(&s, fwd, first, n, &[34, 36]);
            f[0].iter()
                .zip(&f[1])
                .map(|(a, b)| (cell(*a, SPORT.0, SPORT.1) * 16 + cell(*b, DPORT.0, DPORT.1)) as u16)
                .collect()
        };
        assert_uniform_cells(&format!("seed {seed:#x} (sport, dport) pairs"), joint, &cells(SPORT, DPORT));
        let serial = |first, n| {
            let f = collect_words(&s, fwd, first, n, &[34]);
            f[0].windows(2)
                .map(|w| (cell(w[0], SPORT.0, SPORT.1) * 16 + cell(w[1], SPORT.0, SPORT.1)) as u16)
                .collect()
        };
        assert_uniform_cells(&format!("seed {seed:#x} consecutive source ports"), serial, &cells(SPORT, SPORT));
    }
}

/// Probabilities of the 16 x 16 cells of two ranges (cells of unequal width when the range size
/// is not a multiple of 16).
fn cells(a: (u16, u16), b: (u16, u16)) -> Vec<f64> {
    let widths = |(min, max): (u16, u16)| {
        let span = usize::from(max - min) + 1;
        let mut w = [0f64; 16];
        for v in 0..span {
            w[v * 16 / span] += 1.0 / span as f64;
        }
        w
    };
    let (wa, wb) = (widths(a), widths(b));
    (0..256).map(|i| wa[i / 16] * wb[i % 16]).collect()
}

fn assert_uniform_cells(what: &str, sample: impl Fn(u64, u64) -> Vec<u16>, p: &[f64]) {
    let stat = |cellv: &[u16]| {
        let mut count = vec![0f64; p.len()];
        for &c in cellv {
            count[usize::from(c)] += 1.0;
        }
        let n = cellv.len() as f64;
        let stat: f64 = count.iter().zip(p).map(|(c, p)| (c - n * p).powi(2) / (n * p)).sum();
        (stat, (p.len() - 1) as f64)
    };
    chi_check(what, sample, stat, false);
}

#[test]
fn pseudorandom_addresses_and_networks_are_uniform() {
    for seed in SEEDS {
        // IPv6 router: left offset 12 full range, right offset 14 [2, 65534].
        let mut s = setup(IpVersion::V6, IpVersion::V6, 2, 2);
        s.seed = Some(seed);
        set_ip_var(&mut s, SideId::Left, Rnd, 0, 65535, 12);
        set_ip_var(&mut s, SideId::Right, Rnd, 2, 65534, 14);
        let word = |s: &Setup, off: usize| {
            let s = s.clone();
            move |first, n| collect_words(&s, Direction::Forward, first, n, &[off]).swap_remove(0)
        };
        assert_uniform(
            &format!("seed {seed:#x} IPv6 source bits 96-111, 1024 bins"),
            word(&s, 14 + 8 + 12),
            0,
            65535,
            1024,
        );
        assert_uniform(
            &format!("seed {seed:#x} IPv6 destination bits 112-127, 1024 bins"),
            word(&s, 14 + 24 + 14),
            2,
            65534,
            1024,
        );
        // IPv4: Num-R-Nets 256 and 10, the network byte is octet 2 (the high byte of the word
        // at 14 + 16 + 2).
        for nets in [256u16, 10] {
            let mut s = setup(IpVersion::V4, IpVersion::V4, 2, 2);
            s.seed = Some(seed);
            s.right.num_nets = nets;
            let w = word(&s, 14 + 16 + 2);
            let net = |first, n| w(first, n).iter().map(|x| x >> 8).collect();
            assert_uniform(&format!("seed {seed:#x} {nets} IPv4 destination networks"), net, 0, nets - 1, 256);
        }
    }
}

#[test]
fn increasing_and_decreasing_wrap_at_the_range_ends() {
    let mut s = setup(IpVersion::V4, IpVersion::V6, 2, 2);
    set_ports(&mut s, Direction::Forward, (Inc, 65530, 65535), (Dec, 0, 3));
    set_ip_var(&mut s, SideId::Left, Inc, 0xfffe, 0xffff, 14);
    set_ip_var(&mut s, SideId::Right, Dec, 0, 2, 14);
    let st = DirectionStream::new(&s, Direction::Forward, 84, SRC_MAC, DST_MAC).unwrap();
    let mut buf = [0u8; 128];
    let mut got = Vec::new();
    for seq in 0..13 {
        let n = st.write_frame(seq, &mut buf);
        let d = check_frame(&s, Direction::Forward, 84, seq, &buf[..n], SRC_MAC, DST_MAC);
        got.push((d.sport, d.dport, d.src_var.unwrap(), d.dst_var.unwrap()));
    }
    let sports: Vec<u16> = got.iter().map(|g| g.0).collect();
    assert_eq!(
        sports,
        [65530, 65531, 65532, 65533, 65534, 65535, 65530, 65531, 65532, 65533, 65534, 65535, 65530]
    );
    let dports: Vec<u16> = got.iter().map(|g| g.1).collect();
    assert_eq!(dports, [3, 2, 1, 0, 3, 2, 1, 0, 3, 2, 1, 0, 3]);
    let src: Vec<u16> = got.iter().map(|g| g.2).collect();
    assert_eq!(
        src,
        [0xfffe, 0xffff, 0xfffe, 0xffff, 0xfffe, 0xffff, 0xfffe, 0xffff, 0xfffe, 0xffff, 0xfffe, 0xffff, 0xfffe]
    );
    let dst: Vec<u16> = got.iter().map(|g| g.3).collect();
    assert_eq!(dst, [2, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 0, 2]);
    // Full 16-bit range: 65535 is followed by 0, and 0 by 65535 when decreasing.
    let mut s = setup(IpVersion::V4, IpVersion::V4, 2, 2);
    set_ports(&mut s, Direction::Forward, (Inc, 0, 65535), (Dec, 0, 65535));
    let st = DirectionStream::new(&s, Direction::Forward, 84, SRC_MAC, DST_MAC).unwrap();
    let port = |seq: u64, o: usize| {
        let mut b = [0u8; 64];
        st.write_frame(seq, &mut b);
        u16::from_be_bytes([b[o], b[o + 1]])
    };
    assert_eq!((port(65535, 34), port(65536, 34)), (65535, 0));
    assert_eq!((port(65535, 36), port(65536, 36)), (0, 65535));
}

fn frames_of(s: &Setup, d: Direction, count: u64) -> Vec<Vec<u8>> {
    let st = DirectionStream::new(s, d, 84, SRC_MAC, DST_MAC).unwrap();
    let mut buf = [0u8; 128];
    (0..count)
        .map(|seq| {
            let n = st.write_frame(seq, &mut buf);
            buf[..n].to_vec()
        })
        .collect()
}

#[test]
fn same_seed_same_frames() {
    let mut s = setup(IpVersion::V6, IpVersion::V4, 10, 9);
    (modes().pop().unwrap().apply)(&mut s);
    s.seed = Some(42);
    let a = frames_of(&s, Direction::Forward, 10_000);
    assert_eq!(a, frames_of(&s, Direction::Forward, 10_000));
    // Frames are a function of their sequence number: written in another order, the same.
    let st = DirectionStream::new(&s, Direction::Forward, 84, SRC_MAC, DST_MAC).unwrap();
    let mut buf = [0u8; 128];
    for seq in (0..10_000u64).rev().step_by(7) {
        let n = st.write_frame(seq, &mut buf);
        assert_eq!(&buf[..n], a[seq as usize].as_slice());
    }
    // Another seed, another direction: other frames.
    s.seed = Some(43);
    let b = frames_of(&s, Direction::Forward, 10_000);
    assert!(a.iter().zip(&b).filter(|(x, y)| x != y).count() > 9_900);
    s.seed = Some(42);
    let r = frames_of(&s, Direction::Reverse, 10_000);
    let ports = |f: &Vec<u8>| f[f.len() - 18 - 8..f.len() - 18 - 4].to_vec();
    assert!(a.iter().zip(&r).filter(|(x, y)| ports(x) != ports(y)).count() > 9_900);
    // No seed: a random one, reported, which reproduces the frames.
    s.seed = None;
    let st = DirectionStream::new(&s, Direction::Forward, 84, SRC_MAC, DST_MAC).unwrap();
    assert_eq!(st.seed(), s.effective_seed());
    let c = frames_of(&s, Direction::Forward, 1000);
    s.seed = Some(st.seed());
    assert_eq!(c, frames_of(&s, Direction::Forward, 1000));
}

#[test]
fn tester_addresses_cover_the_varying_ranges() {
    use std::net::{Ipv4Addr, Ipv6Addr};
    // IPv4 router, left: full 16-bit range at offset 2; right: 1000 addresses.
    let mut s = setup(IpVersion::V4, IpVersion::V4, 2, 2);
    set_ip_var(&mut s, SideId::Left, Rnd, 0, 65535, 14);
    set_ip_var(&mut s, SideId::Right, Inc, 2, 1001, 14);
    let l = s.tester_addresses_v4(SideId::Left);
    assert_eq!(l.len(), 65536);
    assert!(l.iter().all(|a| a.octets()[..2] == [198, 18] && s.tester_owns_v4(SideId::Left, *a)));
    assert_eq!(l.iter().collect::<BTreeSet<_>>().len(), 65536);
    let r = s.tester_addresses_v4(SideId::Right);
    assert_eq!(r.len(), 1000);
    // The configured address first (the engine solicits the DUT from the first one).
    assert_eq!(
        (r[0], r[1], r[999]),
        (R4_REAL, Ipv4Addr::new(198, 19, 0, 3), Ipv4Addr::new(198, 19, 3, 0xe9))
    );
    assert_eq!(l[0], L4_REAL);
    assert!(r.iter().all(|a| s.tester_owns_v4(SideId::Right, *a)));
    for bad in [
        Ipv4Addr::new(198, 19, 0, 1),
        Ipv4Addr::new(198, 19, 3, 0xea),
        Ipv4Addr::new(198, 18, 0, 2),
        Ipv4Addr::new(10, 19, 0, 2),
    ] {
        assert!(!s.tester_owns_v4(SideId::Right, bad), "{bad}");
    }
    assert!(s.tester_addresses_v6(SideId::Left).is_empty() && !s.tester_owns_v6(SideId::Left, L6_REAL));

    // The same with background traffic: the IPv6 real addresses vary at the IPv6 offset.
    s.fg_m = 1;
    set_ip_var(&mut s, SideId::Right, Inc, 2, 1001, 12);
    let r6 = s.tester_addresses_v6(SideId::Right);
    assert_eq!(r6.len(), 1000);
    assert_eq!(r6[0], "2001:2:0:8000::2:2".parse::<Ipv6Addr>().unwrap());
    assert_eq!(r6.iter().collect::<BTreeSet<_>>().len(), 1000);
    assert!(r6.iter().all(|a| s.tester_owns_v6(SideId::Right, *a)));
    assert!(s.tester_owns_v6(SideId::Right, "2001:2:0:8000::3e9:2".parse().unwrap()));
    assert!(!s.tester_owns_v6(SideId::Right, "2001:2:0:8000::3ea:2".parse().unwrap()));
    assert!(!s.tester_owns_v6(SideId::Right, "2001:2:0:8000::2:3".parse().unwrap()));
    assert!(!s.tester_owns_v6(SideId::Right, "2001:2:0:8001::2:2".parse().unwrap()));

    // Destination networks: every network of frames to this side, and the source address.
    let mut s = setup(IpVersion::V4, IpVersion::V4, 2, 2);
    s.right.ipv4_real = Some(Ipv4Addr::new(198, 19, 5, 2));
    s.right.num_nets = 4;
    let r = s.tester_addresses_v4(SideId::Right);
    let want: Vec<Ipv4Addr> = [5, 0, 1, 2, 3].iter().map(|n| Ipv4Addr::new(198, 19, *n, 2)).collect();
    assert_eq!(r, want);
    assert!(s.tester_owns_v4(SideId::Right, Ipv4Addr::new(198, 19, 3, 2)));
    assert!(!s.tester_owns_v4(SideId::Right, Ipv4Addr::new(198, 19, 4, 2)));
    // Fixed: just the address, as before.
    let s = setup(IpVersion::V6, IpVersion::V4, 2, 2);
    assert_eq!(s.tester_addresses_v4(SideId::Right), vec![R4_REAL]);
    assert_eq!(s.tester_addresses_v6(SideId::Left), vec![L6_REAL]);
    assert!(s.tester_addresses_v4(SideId::Left).is_empty());
}

#[test]
fn invalid_variation_settings_are_errors() {
    let err = |f: fn(&mut Setup)| {
        let mut s = setup(IpVersion::V4, IpVersion::V4, 2, 2);
        f(&mut s);
        match DirectionStream::new(&s, Direction::Forward, 84, SRC_MAC, DST_MAC) {
            Err(StreamError::Invalid(m)) => m,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(
        err(|s| set_ports(s, Direction::Forward, (Rnd, 10, 9), (Fixed, 0, 0))),
        "Fwd-sport-min 10 is above Fwd-sport-max 9"
    );
    assert_eq!(
        err(|s| set_ip_var(s, SideId::Right, Inc, 5, 4, 14)),
        "IP-R-min 5 is above IP-R-max 4"
    );
    assert_eq!(
        err(|s| set_ip_var(s, SideId::Left, Inc, 0, 4, 13)),
        "IPv6-L-offset 13 must be even and within 6-14"
    );
    assert_eq!(
        err(|s| {
            set_ip_var(s, SideId::Left, Inc, 0, 4, 14);
            s.left.ip_var.ipv4_offset = 1;
        }),
        "IPv4-L-offset 1 is not supported: only 2 (the last 16 bits)"
    );
    assert_eq!(err(|s| s.right.num_nets = 0), "Num-R-Nets 0 is outside 1-256");
    assert_eq!(err(|s| s.right.num_nets = 257), "Num-R-Nets 257 is outside 1-256");
    assert_eq!(
        err(|s| {
            s.right.num_nets = 2;
            set_ip_var(s, SideId::Right, Rnd, 0, 4, 14);
        }),
        "IP-R-var and Num-R-Nets above 1 cannot be combined"
    );
}

/// The chi-square check itself must be able to fail: values reduced by a plain modulo from 16
/// random bits (the bias that RFC 4814 implementations often have) and a counter.
#[test]
fn chi_square_detects_bias_and_regularity() {
    let mut g = xlat_traffic::rng::SplitMix64::new(3);
    let biased: Vec<u16> = (0..FRAMES).map(|_| SPORT.0 + ((g.next() >> 48) % 64512) as u16).collect();
    let (stat, dof) = chi2_uniform(&biased, SPORT.0, SPORT.1, 256);
    assert!(stat > chi2_critical(dof, Z_0_001), "{stat}");
    let counter: Vec<u16> = (0..64512 * 15).map(|i| SPORT.0 + (i % 64512) as u16).collect();
    let (stat, dof) = chi2_uniform(&counter, SPORT.0, SPORT.1, 256);
    assert!(stat < chi2_critical(dof, -Z_0_001), "{stat}");
    // Wilson-Hilferty against tabulated values: chi2(0.999; 255) = 330.5, chi2(0.999; 9) = 27.88.
    assert!((chi2_critical(255.0, Z_0_001) - 330.5).abs() < 0.5);
    assert!((chi2_critical(9.0, Z_0_001) - 27.88).abs() < 0.2);
}

/// The re-test rule of `chi_check` does not hide a real deviation: values 0-99 twice as frequent
/// as 100-999 fail on both samples.
#[test]
#[should_panic(expected = "and again on the next")]
fn a_persistent_deviation_fails_the_retest() {
    let biased = |first: u64, n: u64| {
        (first..first + n)
            .map(|i| ((i * 7919) % 1100) as u16)
            .map(|v| if v >= 1000 { v - 1000 } else { v })
            .collect()
    };
    assert_uniform("biased", biased, 0, 999, 100);
}
