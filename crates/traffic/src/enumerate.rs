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
    fn apply_lanes(&self, xs: &mut [u32]) {
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
    sa: u32,
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
    fn f(x: u32, key: u32, span: u32) -> u32 {
        let mut h = (x ^ key ^ (key >> 16)).wrapping_mul(0x7feb_352d);
        h ^= h >> 15;
        h = h.wrapping_mul(0x846c_a68b);
        ((h >> 16) * span) >> 16
    }
}

/// Positions permuted together by [`Permutation::apply_lanes`].
const LANES: usize = 64;

/// One pass of the Feistel network over lanes, compiled for AVX-512, AVX2 and the baseline,
/// picked at run time (as `rng`'s burst loop).
mod simd {
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
    pub(super) fn decode2(xs: &[u32], a: Digit, b: Digit, down: bool, lo: &mut [u16], hi: &mut [u16]) {
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
    pub(super) fn pair(p: &PairPermutation, r0: u32, q0: u32, a: Digit, b: Digit, lo: &mut [u16], hi: &mut [u16]) {
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
    /// The unique pseudorandom order of two large digits: the pairs permuted themselves (then
    /// `perm` is `None`).
    pair: Option<PairPermutation>,
    /// The enumerated digits (index into `digits`), lowest first, with a divider by each span
    /// (used when the count fits 32 bits: no hardware division per frame).
    used: [usize; 4],
    nused: usize,
    div: [Div32; 4],
}

/// Division and remainder of 32-bit numbers by a fixed divisor with multiplications (D. Lemire,
/// O. Kaser, N. Kurz, "Faster remainder by direct computation", 2019): exact for every 32-bit
/// dividend and divisor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Div32 {
    d: u64,
    m: u64,
}

impl Div32 {
    fn new(d: u64) -> Div32 {
        let d = d.clamp(1, u64::from(u32::MAX));
        Div32 { d, m: u64::MAX / d + 1 }
    }

    /// (x / d, x mod d)
    #[inline(always)]
    fn div_rem(&self, x: u32) -> (u32, u32) {
        if self.d == 1 {
            return (x, 0);
        }
        let q = ((u128::from(self.m) * u128::from(x)) >> 64) as u32;
        let low = self.m.wrapping_mul(u64::from(x));
        let r = ((u128::from(low) * u128::from(self.d)) >> 64) as u32;
        (q, r)
    }
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
        let spans: Vec<u64> = digits.iter().flatten().map(|d| d.span()).collect();
        let pair = match spans[..] {
            [sa, sb] if order == Variation::Pseudorandom && sa.min(sb) >= u64::from(PAIR_MIN_SPAN) => {
                Some(PairPermutation::new(sa as u32, sb as u32, seed))
            }
            _ => None,
        };
        let perm = (order == Variation::Pseudorandom && pair.is_none()).then(|| Permutation::new(count, seed));
        let mut used = [0; 4];
        let mut div = [Div32::default(); 4];
        let mut nused = 0;
        for (i, d) in digits.iter().enumerate() {
            if let Some(d) = d {
                used[nused] = i;
                div[nused] = Div32::new(d.span());
                nused += 1;
            }
        }
        Some(Enumeration {
            order,
            digits,
            count,
            perm,
            pair,
            used,
            nused,
            div,
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
        if let Some(p) = self.pair {
            let x = (u128::from(k) % self.count) as u32;
            let (a, b) = p.apply(x % p.sa, x / p.sa);
            let mut out = [0u16; 4];
            let (i, j) = (self.used[0], self.used[1]);
            if let (Some(da), Some(db)) = (self.digits[i], self.digits[j]) {
                out[i] = da.min.wrapping_add(a as u16);
                out[j] = db.min.wrapping_add(b as u16);
            }
            return out;
        }
        let x = match self.perm {
            Some(p) => p.apply(k),
            None if u128::from(k) < self.count => k,
            None => (u128::from(k) % self.count) as u64,
        };
        if self.count <= 1 << 32 {
            return self.decode32(x as u32);
        }
        let mut x = x;
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

    /// The combinations of foreground frames `k0 ..`, field by field, into the given rows:
    /// `out[f][i]` is what [`Enumeration::values`]`(k0 + i)[f]` gives (rows of the fields not
    /// wanted are `None`; as many frames as the shortest row). When the count fits 32 bits the
    /// permutation is computed over 64 frames at once in vector registers, and so is the decode
    /// of two enumerated fields.
    pub fn fill(&self, k0: u64, out: &mut [Option<&mut [u16]>; 4]) {
        let n = out.iter().flatten().map(|o| o.len()).min().unwrap_or(0);
        if self.count > 1 << 32 {
            for i in 0..n {
                let v = self.values(k0.wrapping_add(i as u64));
                for (o, v) in out.iter_mut().zip(v) {
                    if let Some(o) = o {
                        o[i] = v;
                    }
                }
            }
            return;
        }
        let (lo, hi) = (self.used[0], self.used[1]);
        if let (Some(pp), Some(a), Some(b)) = (self.pair, self.digits[lo], self.digits[hi]) {
            let [o0, o1] = out
                .get_disjoint_mut([lo, hi])
                .unwrap_or_else(|_| unreachable!("two enumerated fields"));
            if let (Some(o0), Some(o1)) = (o0, o1) {
                // The count of two digits fits 32 bits; no division unless `k0` wrapped.
                let count = self.count as u64;
                let x = if k0 < count { k0 } else { k0 % count } as u32;
                let (q, r) = self.div[0].div_rem(x);
                simd::pair(&pp, r, q, a, b, &mut o0[..n], &mut o1[..n]);
            }
            return;
        }
        let mut buf = [0u32; LANES];
        let mut done = 0;
        while done < n {
            let m = (n - done).min(LANES);
            let xs = &mut buf[..m];
            let kb = k0.wrapping_add(done as u64);
            if u128::from(kb) + m as u128 <= self.count {
                let kb = kb as u32;
                for (i, x) in xs.iter_mut().enumerate() {
                    *x = kb.wrapping_add(i as u32);
                }
            } else {
                for (i, x) in xs.iter_mut().enumerate() {
                    *x = (u128::from(kb.wrapping_add(i as u64)) % self.count) as u32;
                }
            }
            if let Some(p) = self.perm {
                p.apply_lanes(xs);
            }
            match (self.nused, self.digits[lo], self.digits.get(hi).copied().flatten()) {
                (2, Some(a), Some(b)) => {
                    let [o0, o1] = out
                        .get_disjoint_mut([lo, hi])
                        .unwrap_or_else(|_| unreachable!("two enumerated fields"));
                    if let (Some(o0), Some(o1)) = (o0, o1) {
                        let down = self.order == Variation::Decreasing;
                        simd::decode2(xs, a, b, down, &mut o0[done..done + m], &mut o1[done..done + m]);
                    }
                }
                _ => {
                    for (i, x) in xs.iter().enumerate() {
                        for (o, v) in out.iter_mut().zip(self.decode32(*x)) {
                            if let Some(o) = o {
                                o[done + i] = v;
                            }
                        }
                    }
                }
            }
            done += m;
        }
    }

    /// [`Enumeration::values`]'s decode of combination `x` (< count <= 2^32) with
    /// multiplications instead of divisions; the highest digit needs neither.
    #[inline(always)]
    fn decode32(&self, mut x: u32) -> [u16; 4] {
        let mut out = [0u16; 4];
        for j in 0..self.nused {
            let i = self.used[j];
            let Some(d) = self.digits[i] else { continue };
            let v = if j + 1 == self.nused {
                x as u16
            } else {
                let (q, r) = self.div[j].div_rem(x);
                x = q;
                r as u16
            };
            out[i] = if self.order == Variation::Decreasing {
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
                    (e.count() as u64 - 3, 10),
                ] {
                    let mut rows = vec![vec![0u16; n]; 4];
                    {
                        let mut it = rows.iter_mut();
                        let mut out: [Option<&mut [u16]>; 4] = std::array::from_fn(|_| it.next().map(|r| &mut r[..]));
                        e.fill(k0, &mut out);
                    }
                    for i in 0..n {
                        let got = [rows[0][i], rows[1][i], rows[2][i], rows[3][i]];
                        assert_eq!(got, e.values(k0 + i as u64), "{order:?} k {}", k0 + i as u64);
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
}
