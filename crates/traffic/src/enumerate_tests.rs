//! Tests of `enumerate.rs`.

use super::*;
use crate::rng::SplitMix64;
use std::collections::HashSet;

#[test]
fn small_domains_are_permuted_exhaustively() {
    let mut domains: Vec<u128> = (1..=300).collect();
    domains.extend([511, 512, 513, 1000, 4096, 65_535, 65_536, 65_537, 100_000, 1 << 20, 1_000_003]);
    for &d in &domains {
        for seed in [0u64, 1, 0xdead_beef] {
            let p = Permutation::new(d, seed);
            let mut seen = vec![false; d as usize];
            for i in 0..d as u64 {
                let v = p.apply(i);
                assert!(u128::from(v) < d, "domain {d}: {v}");
                assert!(!seen[v as usize], "domain {d} seed {seed}: {v} twice");
                seen[v as usize] = true;
            }
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_order_and_another_seed_another() {
    let a = Permutation::new(1 << 32, 7);
    let b = Permutation::new(1 << 32, 7);
    let c = Permutation::new(1 << 32, 8);
    let first: Vec<u64> = (0..1000).map(|i| a.apply(i)).collect();
    assert_eq!(first, (0..1000).map(|i| b.apply(i)).collect::<Vec<_>>());
    let other: Vec<u64> = (0..1000).map(|i| c.apply(i)).collect();
    assert!(first.iter().zip(&other).filter(|(x, y)| x == y).count() < 5);
}

/// 2^32 combinations (all 65,536 x 65,536 port pairs): the first 2^21 elements repeat none,
/// and spread evenly over 256 buckets of the domain (chi-square with 255 degrees of
/// freedom below 340, which a uniform sample exceeds with probability about 3e-4); the
/// low byte too (a weak permutation would keep low bits of the index).
#[test]
fn a_large_domain_sample_is_unique_and_uniform() {
    for (seed, domain) in [(1u64, 1u128 << 32), (2, 40_000 * 40_000), (3, 1 << 64)] {
        let p = Permutation::new(domain, seed);
        let n = 1u64 << 21;
        let mut seen = HashSet::with_capacity(n as usize);
        let (mut hi, mut lo) = ([0u64; 256], [0u64; 256]);
        // Consecutive positions must not land near each other: (bucket of element i, bucket
        // of element i + 1) over 16 x 16 buckets is uniform too.
        let mut pairs = [0u64; 256];
        let mut prev = 0usize;
        for i in 0..n {
            let v = p.apply(i);
            let b16 = ((u128::from(v) * 16) / domain) as usize;
            if i > 0 {
                pairs[prev * 16 + b16] += 1;
            }
            prev = b16;
            assert!(u128::from(v) < domain);
            assert!(seen.insert(v), "domain {domain}: repeat at {i}");
            hi[((u128::from(v) * 256) / domain) as usize] += 1;
            lo[(v & 0xff) as usize] += 1;
        }
        let chi = |b: &[u64; 256]| {
            let e = n as f64 / 256.0;
            b.iter().map(|&o| (o as f64 - e).powi(2) / e).sum::<f64>()
        };
        assert!(chi(&hi) < 340.0, "domain {domain}: chi-square {} (high)", chi(&hi));
        assert!(chi(&lo) < 340.0, "domain {domain}: chi-square {} (low byte)", chi(&lo));
        pairs[0] += 1; // n - 1 pairs: make it n for the expectation
        assert!(
            chi(&pairs) < 340.0,
            "domain {domain}: chi-square {} (successive pairs)",
            chi(&pairs)
        );
    }
}

#[test]
fn increasing_and_decreasing_carry_from_the_source_port() {
    let d = [
        Some(Digit { min: 10, max: 12 }),
        Some(Digit { min: 7, max: 8 }),
        None,
        Some(Digit { min: 0, max: 1 }),
    ];
    let inc = Enumeration::new(Variation::Increasing, d, 0).unwrap();
    assert_eq!(inc.count(), 12);
    assert_eq!(inc.values(0), [10, 7, 0, 0]);
    assert_eq!(inc.values(1), [11, 7, 0, 0]);
    assert_eq!(inc.values(3), [10, 8, 0, 0]);
    assert_eq!(inc.values(6), [10, 7, 0, 1]);
    assert_eq!(inc.values(11), [12, 8, 0, 1]);
    assert_eq!(inc.values(12), inc.values(0), "wraps after C");
    let dec = Enumeration::new(Variation::Decreasing, d, 0).unwrap();
    assert_eq!(dec.values(0), [12, 8, 0, 1]);
    assert_eq!(dec.values(1), [11, 8, 0, 1]);
    assert_eq!(dec.values(11), [10, 7, 0, 0]);
    assert!(Enumeration::new(Variation::Fixed, d, 0).is_none());
}

#[test]
fn pseudorandom_enumeration_visits_every_combination_once() {
    let d = [
        Some(Digit { min: 1024, max: 1123 }),
        Some(Digit { min: 1, max: 50 }),
        Some(Digit { min: 2, max: 4 }),
        Some(Digit { min: 100, max: 101 }),
    ];
    let e = Enumeration::new(Variation::Pseudorandom, d, 99).unwrap();
    assert_eq!(e.count(), 100 * 50 * 3 * 2);
    let all: HashSet<[u16; 4]> = (0..e.count() as u64).map(|k| e.values(k)).collect();
    assert_eq!(all.len() as u128, e.count());
    for v in &all {
        assert!((1024..=1123).contains(&v[0]) && (1..=50).contains(&v[1]));
        assert!((2..=4).contains(&v[2]) && (100..=101).contains(&v[3]));
    }
    // All four digits at their full range: 2^64 combinations, no overflow.
    let full = [Some(Digit { min: 0, max: u16::MAX }); 4];
    let e = Enumeration::new(Variation::Pseudorandom, full, 1).unwrap();
    assert_eq!(e.count(), 1 << 64);
    assert_ne!(e.values(0), e.values(1));
}

#[test]
fn division_by_multiplication_is_exact() {
    let mut g = SplitMix64::new(3);
    for d in [1u64, 2, 3, 7, 100, 1000, 49_151, 64_512, 65_535, 65_536] {
        let v = Div32::new(d);
        for x in [0u32, 1, d as u32 - 1, d as u32, u32::MAX, u32::MAX - 1]
            .into_iter()
            .chain((0..10_000).map(|_| g.next() as u32))
        {
            assert_eq!(v.div_rem(x), (x / d as u32, x % d as u32), "{x} / {d}");
        }
    }
    // The 32-bit decode equals the general one.
    let d = [
        Some(Digit { min: 1024, max: 65_535 }),
        Some(Digit { min: 1, max: 49_151 }),
        None,
        None,
    ];
    for order in [Variation::Increasing, Variation::Decreasing, Variation::Pseudorandom] {
        let e = Enumeration::new(order, d, 5).unwrap();
        for k in (0..1_000_000u64).step_by(997).chain([e.count() as u64 - 1]) {
            if e.pair.is_some() {
                continue; // the pairs are permuted themselves: see pair_permutation_*
            }
            let x = match e.perm {
                Some(p) => p.apply(k),
                None => k,
            };
            let mut y = x;
            let mut want = [0u16; 4];
            for (o, dd) in want.iter_mut().zip(d) {
                let Some(dd) = dd else { continue };
                let v = (y % dd.span()) as u16;
                y /= dd.span();
                *o = if order == Variation::Decreasing { dd.max - v } else { dd.min + v };
            }
            assert_eq!(e.values(k), want, "{order:?} {k}");
        }
    }
}

#[test]
fn the_vector_decode_is_exact() {
    let mut g = SplitMix64::new(9);
    for span in [1u32, 2, 3, 7, 1000, 49_151, 64_512, 65_535, 65_536] {
        let a = Digit {
            min: 0,
            max: (span - 1) as u16,
        };
        let b = Digit { min: 0, max: u16::MAX };
        let top = (u64::from(span) << 16) - 1; // the largest combination
        let mut xs: Vec<u32> = (0..4000).map(|_| (g.next() % (top + 1)) as u32).collect();
        for m in [1u64, 2, 65_535, u64::from(span) * 3, top / u64::from(span) * u64::from(span)] {
            for x in [m.saturating_sub(1), m, m + 1] {
                if x <= top {
                    xs.push(x as u32);
                }
            }
        }
        xs.push(top as u32);
        for down in [false, true] {
            let (mut lo, mut hi) = (vec![0u16; xs.len()], vec![0u16; xs.len()]);
            simd::decode2(&xs, a, b, down, &mut lo, &mut hi);
            for (i, x) in xs.iter().enumerate() {
                let (q, r) = ((x / span) as u16, (x % span) as u16);
                let want = if down { (a.max - r, b.max - q) } else { (r, q) };
                assert_eq!((lo[i], hi[i]), want, "{x} / {span}");
            }
        }
    }
}

#[test]
#[allow(clippy::needless_range_loop)] // out[f][i] is read across the four fields
fn a_burst_of_combinations_equals_one_at_a_time() {
    let d = [
        Some(Digit { min: 1024, max: 65_535 }),
        Some(Digit { min: 1, max: 49_151 }),
        None,
        None,
    ];
    let small = [Some(Digit { min: 5, max: 9 }), None, Some(Digit { min: 0, max: 2 }), None];
    let wide = [Some(Digit { min: 0, max: u16::MAX }); 4];
    for digits in [d, small, wide] {
        for order in [Variation::Increasing, Variation::Decreasing, Variation::Pseudorandom] {
            let e = Enumeration::new(order, digits, 11).unwrap();
            for (k0, n) in [
                (0u64, 1usize),
                (0, 32),
                (5, 64),
                (1_000, 100),
                (77, 256),
                // across a carry of the low digit (64,512 values) inside a chunk of 64
                (64_490, 200),
                // (the last ones; 2^64 combinations of `wide` wrap to 0 first)
                ((e.count() as u64).wrapping_sub(3), 10),
            ] {
                let mut rows = vec![vec![0u16; n]; 4];
                {
                    let mut it = rows.iter_mut();
                    let mut out: [Option<&mut [u16]>; 4] = std::array::from_fn(|_| it.next().map(|r| &mut r[..]));
                    e.fill(k0, &mut out);
                }
                for i in 0..n {
                    let got = [rows[0][i], rows[1][i], rows[2][i], rows[3][i]];
                    let k = k0.wrapping_add(i as u64);
                    assert_eq!(got, e.values(k), "{order:?} k {k}");
                }
            }
        }
    }
}

#[test]
fn the_round_function_is_lowbias32_of_a_digit() {
    for key in [0u32, 1, 0xdead_beef, u32::MAX, 0x8000_0000] {
        for x in (0..=u32::from(u16::MAX)).step_by(7).chain([65_535]) {
            for span in [1u32, 1000, 49_151, 65_536] {
                let want = ((crate::rng::hash32(x ^ key) >> 16) * span) >> 16;
                assert_eq!(PairPermutation::f(x, key, span), want, "x {x} key {key:#x} span {span}");
            }
        }
    }
}

#[test]
fn pair_permutation_visits_every_pair_once() {
    for (sa, sb) in [(1024u32, 1031u32), (1500, 1024)] {
        let d = [
            Some(Digit {
                min: 10,
                max: 10 + sa as u16 - 1,
            }),
            Some(Digit { min: 1, max: sb as u16 }),
            None,
            None,
        ];
        let e = Enumeration::new(Variation::Pseudorandom, d, 3).unwrap();
        assert!(e.pair.is_some() && e.perm.is_none());
        let mut seen = vec![false; (sa * sb) as usize];
        for k in 0..u64::from(sa * sb) {
            let v = e.values(k);
            let (a, b) = (u32::from(v[0] - 10), u32::from(v[1] - 1));
            assert!(a < sa && b < sb);
            let i = (b * sa + a) as usize;
            assert!(!seen[i], "{sa}x{sb}: ({a}, {b}) twice");
            seen[i] = true;
        }
    }
}

/// The pairs of all RFC 4814 port ranges (3.2 x 10^9) and of 1,024 x 65,536: 2^21 elements
/// unique, uniform over 256 buckets of each digit and over successive pairs.
#[test]
fn pair_permutation_sample_is_unique_and_uniform() {
    for (sa, sb) in [(64_512u32, 49_151u32), (1024, 65_536), (65_536, 1024)] {
        let d = [
            Some(Digit {
                min: 0,
                max: (sa - 1) as u16,
            }),
            Some(Digit {
                min: 0,
                max: (sb - 1) as u16,
            }),
            None,
            None,
        ];
        let e = Enumeration::new(Variation::Pseudorandom, d, 8).unwrap();
        assert!(e.pair.is_some());
        let n = 1usize << 21;
        let mut seen = HashSet::with_capacity(n);
        let (mut ba, mut bb, mut pairs) = ([0u64; 256], [0u64; 256], [0u64; 256]);
        let mut prev = 0usize;
        let mut out0 = vec![0u16; 256];
        let mut out1 = vec![0u16; 256];
        for k0 in (0..n as u64).step_by(256) {
            let mut out: [Option<&mut [u16]>; 4] = [Some(&mut out0[..]), Some(&mut out1[..]), None, None];
            e.fill(k0, &mut out);
            for i in 0..256 {
                let (a, b) = (u32::from(out0[i]), u32::from(out1[i]));
                assert_eq!([out0[i], out1[i], 0, 0], e.values(k0 + i as u64));
                assert!(seen.insert((a, b)), "{sa}x{sb}: repeat at {}", k0 + i as u64);
                ba[(a as u64 * 256 / u64::from(sa)) as usize] += 1;
                bb[(b as u64 * 256 / u64::from(sb)) as usize] += 1;
                let c = (a as u64 * 16 / u64::from(sa)) as usize;
                if k0 + i as u64 > 0 {
                    pairs[prev * 16 + c] += 1;
                }
                prev = c;
            }
        }
        pairs[0] += 1;
        let chi = |b: &[u64; 256]| {
            let ex = n as f64 / 256.0;
            b.iter().map(|&o| (o as f64 - ex).powi(2) / ex).sum::<f64>()
        };
        for (name, b) in [("a", &ba), ("b", &bb), ("successive", &pairs)] {
            assert!(chi(b) < 340.0, "{sa}x{sb}: chi-square {} ({name})", chi(b));
        }
    }
}

#[test]
fn foreground_counts_are_exact() {
    // STATEFUL.md section 3: N = 8, n = 5, m = 3 has 6 foreground frames (siitperf says 5).
    assert_eq!(foreground_count(8, 5, 3), 6);
    for (frames, n, m) in [(0u64, 2u32, 2u32), (10, 2, 1), (11, 2, 1), (1000, 10, 9), (7, 3, 0), (100, 4, 4)] {
        let want = (0..frames).filter(|i| i % u64::from(n) < u64::from(m)).count() as u64;
        assert_eq!(foreground_count(frames, n, m), want, "{frames} {n} {m}");
    }
    let fg: Vec<u64> = (0..20u64).filter(|i| i % 5 < 3).collect();
    for (k, seq) in fg.iter().enumerate() {
        assert_eq!(foreground_index(*seq, 5, 3), k as u64);
    }
}
