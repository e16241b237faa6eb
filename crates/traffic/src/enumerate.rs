//! The preliminary phase's enumeration of connections (RFC 9693; siitperf's `Enumerate-ports`
//! and `Enumerate-ips`): foreground frame `k` of phase 1 carries combination `k` of up to four
//! 16-bit digits, lowest first: source port, destination port, source address part, destination
//! address part (G. Lencse, "Making stateless and stateful network performance measurements
//! unbiased", section 4.4).
//!
//! Increasing order starts at every minimum and carries into the next digit, decreasing order
//! starts at every maximum; both wrap after all `C` combinations. The unique pseudorandom order
//! is a keyed bijection on `[0, C)`: siitperf builds an array of all combinations and shuffles
//! it (4 to 8 bytes per combination, 16 GiB for 2^32 of them, a new order every run); here
//! [`Permutation`] computes the `k`-th element on the fly, in O(1) memory, with no set-up time,
//! and the same seed gives the same order.

use crate::rng::{mix64, SplitMix64};
use crate::vary::Variation;

/// Feistel rounds. Each round mixes one half into the other through a 64-bit finaliser, so six
/// rounds (three per half) give every output bit a dependence on every input bit several
/// times over.
const ROUNDS: usize = 6;

/// A keyed pseudorandom permutation of `[0, domain)`, `domain` up to 2^64: an alternating
/// Feistel network on the smallest power of two that holds the domain, with cycle walking
/// (an output outside the domain is permuted again until it falls inside; as the power of two
/// is less than twice the domain, that takes fewer than two rounds of the network on average).
///
/// The two halves may differ in width by one bit (odd powers of two): each round replaces one
/// half by itself XOR a keyed function of the other, which is invertible whatever the widths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Permutation {
    domain: u128,
    /// Width of the low half (R) and of the high half (L), bits.
    low_bits: u32,
    low_mask: u64,
    high_mask: u64,
    keys: [u64; ROUNDS],
}

impl Permutation {
    /// The permutation of `[0, domain)` under `seed`. `domain` is clamped to 1..=2^64.
    pub fn new(domain: u128, seed: u64) -> Permutation {
        let domain = domain.clamp(1, 1 << 64);
        // Bits to number 0 ..= domain - 1.
        let bits = 128 - (domain - 1).leading_zeros();
        let low_bits = bits / 2;
        let high_bits = bits - low_bits;
        let mask = |b: u32| if b >= 64 { u64::MAX } else { (1u64 << b) - 1 };
        let mut g = SplitMix64::new(seed ^ 0x5354_4154_4546_554c); // "STATEFUL"
        let mut keys = [0u64; ROUNDS];
        for k in &mut keys {
            *k = g.next();
        }
        Permutation {
            domain,
            low_bits,
            low_mask: mask(low_bits),
            high_mask: mask(high_bits),
            keys,
        }
    }

    /// The number of elements permuted.
    pub fn domain(&self) -> u128 {
        self.domain
    }

    /// One pass of the Feistel network over `[0, 2^bits)`.
    #[inline(always)]
    fn network(&self, x: u64) -> u64 {
        // With 0 low bits the shift below would be 64: split by hand.
        let (mut l, mut r) = if self.low_bits == 0 {
            (x, 0)
        } else {
            (x >> self.low_bits, x & self.low_mask)
        };
        for (i, k) in self.keys.iter().enumerate() {
            if i % 2 == 0 {
                l ^= mix64(r ^ k) & self.high_mask;
            } else {
                r ^= mix64(l ^ k) & self.low_mask;
            }
        }
        if self.low_bits == 0 {
            l
        } else {
            (l << self.low_bits) | r
        }
    }

    /// The element at position `i` (`i < domain`; larger `i` are reduced modulo the domain).
    #[inline]
    pub fn apply(&self, i: u64) -> u64 {
        let mut x = if u128::from(i) < self.domain {
            i
        } else {
            (u128::from(i) % self.domain) as u64
        };
        // Cycle walking: x's cycle under the network returns to x, which is inside the domain,
        // so this ends; the expected number of passes is below two.
        loop {
            x = self.network(x);
            if u128::from(x) < self.domain {
                return x;
            }
        }
    }
}

/// The digits one enumeration goes through: which of the four fields, and their ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Digit {
    pub min: u16,
    pub max: u16,
}

impl Digit {
    fn span(&self) -> u64 {
        u64::from(self.max.saturating_sub(self.min)) + 1
    }
}

/// The four fields of a phase 1 combination, lowest digit first.
pub const SPORT: usize = 0;
pub const DPORT: usize = 1;
pub const SRC_PART: usize = 2;
pub const DST_PART: usize = 3;

/// An enumeration of the combinations of some of the four fields (`None`: not enumerated).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Enumeration {
    order: Variation,
    digits: [Option<Digit>; 4],
    count: u128,
    perm: Option<Permutation>,
}

impl Enumeration {
    /// Enumerate `digits` (the fields given) in `order`: increasing, decreasing or
    /// pseudorandom (unique); `seed` keys the pseudorandom order. `None` for `Variation::Fixed`
    /// or no digit.
    pub fn new(order: Variation, digits: [Option<Digit>; 4], seed: u64) -> Option<Enumeration> {
        if order.is_fixed() || digits.iter().all(Option::is_none) {
            return None;
        }
        let count = digits.iter().flatten().map(|d| u128::from(d.span())).product::<u128>();
        let perm = (order == Variation::Pseudorandom).then(|| Permutation::new(count, seed));
        Some(Enumeration {
            order,
            digits,
            count,
            perm,
        })
    }

    /// The number of distinct combinations: `C`.
    pub fn count(&self) -> u128 {
        self.count
    }

    pub fn order(&self) -> Variation {
        self.order
    }

    /// True when field `f` (`SPORT` ... `DST_PART`) is enumerated.
    pub fn enumerates(&self, f: usize) -> bool {
        self.digits.get(f).is_some_and(Option::is_some)
    }

    /// The values of the four fields in combination `k` (the `k`-th foreground frame of phase
    /// 1); fields not enumerated are 0. Combinations repeat after [`Enumeration::count`].
    #[inline]
    pub fn values(&self, k: u64) -> [u16; 4] {
        let mut x = match self.perm {
            Some(p) => p.apply(k),
            None if u128::from(k) < self.count => k,
            None => (u128::from(k) % self.count) as u64,
        };
        let mut out = [0u16; 4];
        for (o, d) in out.iter_mut().zip(self.digits) {
            let Some(d) = d else { continue };
            let span = d.span();
            let v = (x % span) as u16;
            x /= span;
            *o = if self.order == Variation::Decreasing {
                d.max - v
            } else {
                d.min + v
            };
        }
        out
    }
}

/// The number of foreground frames among the first `frames` frames of a stream whose frame `i`
/// is foreground when `i % n < m`: exactly `floor(frames / n) * m + min(frames mod n, m)`.
/// (siitperf's check uses `frames - floor(frames * (n - m) / n)`, which can be one less.)
pub fn foreground_count(frames: u64, n: u32, m: u32) -> u64 {
    let (n, m) = (u64::from(n.max(1)), u64::from(m));
    let m = m.min(n);
    (frames / n) * m + (frames % n).min(m)
}

/// The index among the foreground frames of foreground frame `seq` (`seq % n < m`).
#[inline]
pub fn foreground_index(seq: u64, n: u32, m: u32) -> u64 {
    let (n, m) = (u64::from(n.max(1)), u64::from(m));
    if m >= n {
        return seq;
    }
    (seq / n) * m + seq % n
}

#[cfg(test)]
mod tests {
    use super::*;
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
            for i in 0..n {
                let v = p.apply(i);
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
}
