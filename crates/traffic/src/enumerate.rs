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

use crate::permutation::{simd, LANES, PAIR_MIN_SPAN};
pub use crate::permutation::{Digit, PairPermutation, Permutation};
use crate::vary::Variation;

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
        // For d = 1 the magic number is 2^64, which wraps to 0: `div_rem` does not use it then.
        Div32 {
            d,
            m: (u64::MAX / d).wrapping_add(1),
        }
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
#[path = "enumerate_tests.rs"]
mod tests;
