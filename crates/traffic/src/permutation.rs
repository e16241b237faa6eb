//! Keyed pseudorandom permutations for the enumeration of connections ([`crate::enumerate`]):
//! [`Permutation`], a bijection on `[0, C)` for any `C` up to 2^64 (a Feistel network with cycle
//! walking), and [`PairPermutation`], a bijection on the pairs of two digits without cycle
//! walking. Both compute the `k`-th element on the fly: O(1) memory, no set-up time, the same
//! order from the same seed.

use crate::rng::{mix64, SplitMix64};

/// Feistel rounds. Each round mixes one half into the other through a keyed function (one
/// multiplication and a fold for domains up to 2^32, SplitMix64's finaliser above), so four
/// rounds (two per half, Luby-Rackoff's number for a pseudorandom permutation) give every
/// output bit a dependence on every input bit; the tests check uniqueness, uniformity and that
/// successive elements are not close.
const ROUNDS: usize = 4;

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

    /// One pass of the Feistel network over `[0, 2^bits)` for `bits` up to 32: 32-bit rounds.
    #[inline(always)]
    fn network32(&self, x: u32) -> u32 {
        let (lm, hm, lb) = (self.low_mask as u32, self.high_mask as u32, self.low_bits);
        let (mut l, mut r) = if lb == 0 { (x, 0) } else { (x >> lb, x & lm) };
        for (i, k) in self.keys.iter().enumerate() {
            if i % 2 == 0 {
                l ^= round32(r ^ *k as u32) & hm;
            } else {
                r ^= round32(l ^ *k as u32) & lm;
            }
        }
        if lb == 0 {
            l
        } else {
            (l << lb) | r
        }
    }

    /// One pass of the Feistel network over `[0, 2^bits)`.
    #[inline(always)]
    fn network(&self, x: u64) -> u64 {
        if self.domain <= 1 << 32 {
            return u64::from(self.network32(x as u32));
        }
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

    /// [`Permutation::apply`] on each of `xs` (positions below the domain, which is at most
    /// 2^32), in place: one pass of the network over all lanes in vector registers, then the
    /// lanes whose output lies outside the domain (fewer than half) gathered and passed again,
    /// until none is left.
    pub(crate) fn apply_lanes(&self, xs: &mut [u32]) {
        debug_assert!(self.domain <= 1 << 32);
        let last = (self.domain - 1) as u32;
        let mut at = [0usize; LANES];
        let mut walk = [0u32; LANES];
        for chunk in xs.chunks_mut(LANES) {
            simd::network(self, chunk);
            let mut m = 0;
            for (i, x) in chunk.iter().enumerate() {
                // Branch-free gather: always write, advance only for a lane outside.
                at[m] = i;
                walk[m] = *x;
                m += usize::from(*x > last);
            }
            // Each pass keeps a lane with a probability below one half: 64 passes leave one
            // with a probability below 2^-64; the rest, if ever, walk on one by one.
            for _ in 0..64 {
                if m == 0 {
                    break;
                }
                simd::network(self, &mut walk[..m]);
                let mut k = 0;
                for j in 0..m {
                    let (i, x) = (at[j], walk[j]);
                    chunk[i] = x;
                    at[k] = i;
                    walk[k] = x;
                    k += usize::from(x > last);
                }
                m = k;
            }
            for &i in &at[..m] {
                while chunk[i] > last {
                    chunk[i] = self.network32(chunk[i]);
                }
            }
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

/// The round function of the 32-bit network: one multiplication by an odd constant (the
/// golden ratio's) and a fold of the high half into the low (a Feistel round function need
/// not be a bijection; the key XORed into its input before makes each round different).
#[inline(always)]
fn round32(x: u32) -> u32 {
    let x = x.wrapping_mul(0x9e37_79b9);
    x ^ (x >> 16)
}

/// The smallest span of each of two digits for which the unique pseudorandom order permutes
/// the pairs themselves ([`PairPermutation`]); below it, the general [`Permutation`] of their
/// index.
pub const PAIR_MIN_SPAN: u32 = 1000;

/// A keyed pseudorandom permutation of the pairs `(a, b)` of `[0, sa) x [0, sb)`, as a Feistel
/// network on the two digits themselves: the rounds `a = (a + F(b)) mod sa` and
/// `b = (b + F(a)) mod sb` are each a bijection, so the network permutes all `sa * sb` pairs
/// with no cycle walking and no decoding of an index (F is lowbias32 of the other digit XOR
/// the round key, reduced to the span by a multiplication: neighbouring digits must not give
/// neighbouring values, which one multiplication would). Both spans must be large enough for F to mix ([`PAIR_MIN_SPAN`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairPermutation {
    pub(crate) sa: u32,
    sb: u32,
    keys: [u32; PAIR_ROUNDS],
}

const PAIR_ROUNDS: usize = 4;

impl PairPermutation {
    pub fn new(sa: u32, sb: u32, seed: u64) -> PairPermutation {
        let mut g = SplitMix64::new(seed ^ 0x5041_4952_5045_524d); // "PAIRPERM"
        let mut keys = [0u32; PAIR_ROUNDS];
        for k in &mut keys {
            *k = g.next() as u32;
        }
        PairPermutation {
            sa: sa.max(1),
            sb: sb.max(1),
            keys,
        }
    }

    /// The pair at position `(a, b)` (`a < sa`, `b < sb`).
    #[inline(always)]
    pub fn apply(&self, a: u32, b: u32) -> (u32, u32) {
        self.rest(self.first(a, self.first_f(b)), b)
    }

    /// Round 0's `F(b)`, to be added to `a`: it depends on `b` alone, which consecutive
    /// positions share (the vector loop computes it once per value of `b`).
    #[inline(always)]
    fn first_f(&self, b: u32) -> u32 {
        Self::f(b, self.keys[0], self.sa)
    }

    /// Round 0: `a + F(b) mod sa` from `F(b)`.
    #[inline(always)]
    fn first(&self, a: u32, f: u32) -> u32 {
        let a = a + f;
        if a >= self.sa {
            a - self.sa
        } else {
            a
        }
    }

    /// The rounds after the first.
    #[inline(always)]
    fn rest(&self, mut a: u32, mut b: u32) -> (u32, u32) {
        for (i, &k) in self.keys.iter().enumerate().skip(1) {
            if i % 2 == 0 {
                a += Self::f(b, k, self.sa);
                a = if a >= self.sa { a - self.sa } else { a };
            } else {
                b += Self::f(a, k, self.sb);
                b = if b >= self.sb { b - self.sb } else { b };
            }
        }
        (a, b)
    }

    /// The round function: lowbias32 ([`hash32`](crate::rng::hash32)) of the digit XOR the round key, reduced to
    /// the span from its high 16 bits (spans are at most 2^16, so the product fits 32 bits).
    /// A digit is below 2^16, so hash32's first step `x ^ (x >> 16)` is `x ^ (key >> 16)`,
    /// and its last does not change the high 16 bits: both are folded away here (equal to
    /// `hash32(x ^ key) >> 16`, checked by a test).
    #[inline(always)]
    pub(crate) fn f(x: u32, key: u32, span: u32) -> u32 {
        let mut h = (x ^ key ^ (key >> 16)).wrapping_mul(0x7feb_352d);
        h ^= h >> 15;
        h = h.wrapping_mul(0x846c_a68b);
        ((h >> 16) * span) >> 16
    }
}

/// The digits one enumeration goes through: which of the four fields, and their ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Digit {
    pub min: u16,
    pub max: u16,
}

impl Digit {
    pub(crate) fn span(&self) -> u64 {
        u64::from(self.max.saturating_sub(self.min)) + 1
    }
}

/// Positions permuted together by [`Permutation::apply_lanes`].
pub(crate) const LANES: usize = 64;

/// One pass of the Feistel network over lanes, compiled for AVX-512, AVX2 and the baseline,
/// picked at run time (as `rng`'s burst loop).
pub(crate) mod simd {
    use super::{Digit, PairPermutation, Permutation, LANES};

    /// One pass of the network over every lane: `x = network(x)`.
    #[inline(always)]
    fn body(p: &Permutation, xs: &mut [u32]) {
        for x in xs.iter_mut() {
            *x = p.network32(*x);
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn body_avx2(p: &Permutation, xs: &mut [u32]) {
        body(p, xs)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    unsafe fn body_avx512(p: &Permutation, xs: &mut [u32]) {
        body(p, xs)
    }

    /// `(x / d, x mod d)` from `inv = 1 / d`: the f64 product (x < 2^32 is exact in an f64) is
    /// off by at most one, and the remainder tells which way. Branch-free, for vector loops.
    #[inline(always)]
    fn split(x: u32, d: u32, inv: f64) -> (u32, u32) {
        let mut q = (f64::from(x) * inv) as u32;
        let mut r = x.wrapping_sub(q.wrapping_mul(d));
        let neg = (r as i32) < 0;
        q = if neg { q.wrapping_sub(1) } else { q };
        r = if neg { r.wrapping_add(d) } else { r };
        let over = r >= d;
        q = if over { q + 1 } else { q };
        r = if over { r - d } else { r };
        (q, r)
    }

    /// Two digits of each combination `x` (below `a`'s span times `b`'s): `x mod span(a)` and
    /// `x / span(a)`, by a floating-point reciprocal corrected to the exact quotient (x < 2^32
    /// is exact in an f64, the product is off by at most one), as values of the fields
    /// (`down`: from the maxima).
    #[inline(always)]
    fn decode2_body(xs: &[u32], a: Digit, b: Digit, down: bool, lo: &mut [u16], hi: &mut [u16]) {
        let d = u32::from(a.max - a.min) + 1;
        let inv = 1.0 / f64::from(d);
        let (base_a, base_b) = if down { (a.max, b.max) } else { (a.min, b.min) };
        let flip = if down { 0xffffu16 } else { 0 };
        for ((x, l), h) in xs.iter().zip(lo.iter_mut()).zip(hi.iter_mut()) {
            let (q, r) = split(*x, d, inv);
            // (v ^ flip) - flip is v or -v.
            *l = base_a.wrapping_add(((r as u16) ^ flip).wrapping_sub(flip));
            *h = base_b.wrapping_add(((q as u16) ^ flip).wrapping_sub(flip));
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn decode2_avx2(xs: &[u32], a: Digit, b: Digit, down: bool, lo: &mut [u16], hi: &mut [u16]) {
        decode2_body(xs, a, b, down, lo, hi)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
    unsafe fn decode2_avx512(xs: &[u32], a: Digit, b: Digit, down: bool, lo: &mut [u16], hi: &mut [u16]) {
        decode2_body(xs, a, b, down, lo, hi)
    }

    #[inline]
    pub(crate) fn decode2(xs: &[u32], a: Digit, b: Digit, down: bool, lo: &mut [u16], hi: &mut [u16]) {
        #[cfg(target_arch = "x86_64")]
        match crate::rng::simd_level() {
            // SAFETY: the CPU has AVX-512 F, BW and VL (checked at run time); DQ checked here.
            2 if std::is_x86_feature_detected!("avx512dq") => return unsafe { decode2_avx512(xs, a, b, down, lo, hi) },
            // SAFETY: the CPU has AVX2 (checked at run time).
            1 | 2 => return unsafe { decode2_avx2(xs, a, b, down, lo, hi) },
            _ => {}
        }
        decode2_body(xs, a, b, down, lo, hi)
    }

    /// The pair permutation of the consecutive combinations from `(r0, q0)` (`r0 < sa`,
    /// `q0 < sb`: combination `q0 * sa + r0`) on, written as field values: each chunk of
    /// [`LANES`] positions counts on from its first like an odometer (`sa` > [`LANES`], so a
    /// chunk carries at most once), no division per frame.
    #[inline(always)]
    fn pair_body(p: &PairPermutation, mut r0: u32, mut q0: u32, a: Digit, b: Digit, lo: &mut [u16], hi: &mut [u16]) {
        for (lo, hi) in lo.chunks_mut(LANES).zip(hi.chunks_mut(LANES)) {
            // The chunk's two values of the high digit and their first-round F.
            let q1 = if q0 + 1 >= p.sb { 0 } else { q0 + 1 };
            let (f0, f1) = (p.first_f(q0), p.first_f(q1));
            for (i, (l, h)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                let r = r0 + i as u32;
                let carry = r >= p.sa;
                let r = if carry { r - p.sa } else { r };
                let (q, f) = if carry { (q1, f1) } else { (q0, f0) };
                let (pa, pb) = p.rest(p.first(r, f), q);
                *l = a.min.wrapping_add(pa as u16);
                *h = b.min.wrapping_add(pb as u16);
            }
            r0 += lo.len() as u32;
            if r0 >= p.sa {
                r0 -= p.sa;
                q0 += 1;
                if q0 >= p.sb {
                    q0 = 0;
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn pair_avx2(p: &PairPermutation, r0: u32, q0: u32, a: Digit, b: Digit, lo: &mut [u16], hi: &mut [u16]) {
        pair_body(p, r0, q0, a, b, lo, hi)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
    unsafe fn pair_avx512(p: &PairPermutation, r0: u32, q0: u32, a: Digit, b: Digit, lo: &mut [u16], hi: &mut [u16]) {
        pair_body(p, r0, q0, a, b, lo, hi)
    }

    #[inline]
    pub(crate) fn pair(p: &PairPermutation, r0: u32, q0: u32, a: Digit, b: Digit, lo: &mut [u16], hi: &mut [u16]) {
        #[cfg(target_arch = "x86_64")]
        match crate::rng::simd_level() {
            // SAFETY: the CPU has AVX-512 F, BW and VL (checked at run time); DQ checked here.
            2 if std::is_x86_feature_detected!("avx512dq") => return unsafe { pair_avx512(p, r0, q0, a, b, lo, hi) },
            // SAFETY: the CPU has AVX2 (checked at run time).
            1 | 2 => return unsafe { pair_avx2(p, r0, q0, a, b, lo, hi) },
            _ => {}
        }
        pair_body(p, r0, q0, a, b, lo, hi)
    }

    #[inline]
    pub(super) fn network(p: &Permutation, xs: &mut [u32]) {
        #[cfg(target_arch = "x86_64")]
        match crate::rng::simd_level() {
            // SAFETY: the CPU has AVX-512 F, BW and VL (checked at run time).
            2 => return unsafe { body_avx512(p, xs) },
            // SAFETY: the CPU has AVX2 (checked at run time).
            1 => return unsafe { body_avx2(p, xs) },
            _ => {}
        }
        body(p, xs)
    }
}
