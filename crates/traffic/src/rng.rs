//! Pseudorandom numbers for the varying fields, *counter-based*: the value of a field in frame
//! `seq` is a pure function of the field's key and `seq`. So the patcher needs no mutable state
//! (`write_frame` stays `&self`), a frame written twice (a backend retry) is the same frame, a
//! burst's values can be computed in one loop ahead of its frames, and a seed reproduces every
//! frame in any order of writing.
//!
//! The per-frame generator is a 32-bit bijective integer hash (Chris Wellons' "lowbias32", found
//! by his hash-prospector: two multiplies and three xor-shifts) of a Weyl sequence: frame `seq`'s
//! value is `hash32(base(seq >> 32) + (seq mod 2^32) * GAMMA32)`, with a per-field 32-bit key in
//! `base`. Over any 2^32 consecutive frames every 32-bit value appears exactly once; the high half
//! of `seq` re-keys the next 2^32 frames. It is built from 32-bit lane operations only, so a
//! burst's values are computed in one SIMD loop (AVX-512 or AVX2 where the CPU has them, chosen
//! at run time).
//! Each field of each direction has its own key, derived from the master seed by SplitMix64
//! (Steele, Lea, Flood, OOPSLA 2014). Values in a range come from Lemire's multiply-shift
//! reduction with rejection ("Fast random integer generation in an interval", ACM TOMACS 2019),
//! which is exactly uniform; the rejection threshold is precomputed, so the hot path has no
//! division.

/// SplitMix64's output function (Stafford's "Mix13" variant).
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The golden-ratio increment of the root SplitMix64 sequence.
pub const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// A sequential SplitMix64 generator, for deriving keys and for tests.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        mix64(self.state)
    }
}

/// The Weyl increment of the per-frame sequence (odd: `seq * GAMMA32` runs through all 2^32
/// values).
pub const GAMMA32: u32 = 0x9e37_79b9;

/// What a rejected value is re-hashed with (any constant: it only has to differ from 0).
const REDRAW: u32 = 0x6a09_e667;

/// lowbias32 (C. Wellons, hash-prospector): a bijection of 32-bit integers with low bias.
#[inline(always)]
pub fn hash32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^ (x >> 16)
}

/// One field's pseudorandom stream, indexed by the frame sequence number (see the module text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stream {
    pub key: u64,
}

impl Stream {
    /// The stream of field `field` of stream family `family` (e.g. direction) under `seed`.
    pub fn derive(seed: u64, family: u64, field: u64) -> Stream {
        let mut sm = SplitMix64::new(seed ^ mix64(family.wrapping_mul(0x100).wrapping_add(field).wrapping_add(1)));
        Stream { key: sm.next() }
    }

    /// The hash input offset of the frames whose sequence numbers have high half `hi`.
    #[inline]
    pub fn base(&self, hi: u32) -> u32 {
        mix64(self.key.wrapping_add(u64::from(hi).wrapping_mul(GOLDEN_GAMMA))) as u32
    }

    /// The 32-bit value of this stream at index `i`.
    #[inline]
    pub fn at(&self, i: u64) -> u32 {
        Self::at_base(self.base((i >> 32) as u32), i as u32)
    }

    /// The value at the index whose low half is `lo`, under `base` (from [`Stream::base`]).
    #[inline(always)]
    pub fn at_base(base: u32, lo: u32) -> u32 {
        hash32(base.wrapping_add(lo.wrapping_mul(GAMMA32)))
    }
}

/// Unbiased reduction of 32-bit random values to `[0, span)` (Lemire). `span` is 1..=65536,
/// the values of a 16-bit field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lemire {
    span: u32,
    /// `2^32 mod span`: products whose low half is below this are rejected (probability below
    /// `span / 2^32`, at most 1.5e-5).
    threshold: u32,
}

impl Lemire {
    pub fn new(span: u64) -> Lemire {
        let span = span.clamp(1, 1 << 16);
        Lemire {
            span: span as u32,
            threshold: ((1u64 << 32) % span) as u32,
        }
    }

    pub fn span(&self) -> u32 {
        self.span
    }

    /// One step: the value for `x`, or `None` when `x` must be redrawn.
    #[inline(always)]
    fn step(&self, x: u32) -> (u32, bool) {
        let m = u64::from(x) * u64::from(self.span);
        ((m >> 32) as u32, (m as u32) < self.threshold)
    }

    /// The value in `[0, span)` for random `x`; a rejected `x` is replaced by `hash32(x ^ c)`
    /// until one is accepted.
    #[inline]
    pub fn reduce(&self, mut x: u32) -> u32 {
        loop {
            let (v, reject) = self.step(x);
            if !reject {
                return v;
            }
            x = hash32(x ^ REDRAW);
        }
    }

    /// `min + reduce(stream value)` for the `out.len()` consecutive indices from `first` of
    /// `stream`, in one SIMD loop (with a scalar redo of the rare bursts with a rejection).
    pub fn fill(&self, stream: Stream, first: u64, min: u16, out: &mut [u16]) {
        let lo = first as u32;
        let n = out.len();
        // A burst that crosses a 2^32 boundary of the index changes base within: scalar.
        if u64::from(lo) + n as u64 > 1 << 32 {
            for (i, o) in out.iter_mut().enumerate() {
                *o = min.wrapping_add(self.reduce(stream.at(first + i as u64)) as u16);
            }
            return;
        }
        let base = stream.base((first >> 32) as u32);
        if simd::fill(self, base, lo, min, out) {
            for (i, o) in out.iter_mut().enumerate() {
                *o = min.wrapping_add(self.reduce(Stream::at_base(base, lo.wrapping_add(i as u32))) as u16);
            }
        }
    }
}

/// The burst loop of [`Lemire::fill`], compiled for AVX-512, AVX2 and the baseline, picked at run
/// time.
mod simd {
    use super::{Lemire, Stream};

    /// Values per chunk of the burst loop: one AVX-512 register of 32-bit lanes (two AVX2
    /// ones). A loop over the whole burst is unrolled by the compiler for long runs (64 lanes),
    /// which a burst of 32 never reaches: it would run the narrow remainder loop.
    const CHUNK: usize = 16;

    /// Returns true when some value was rejected (the caller redoes the burst).
    #[inline(always)]
    fn body(l: &Lemire, base: u32, lo: u32, min: u16, out: &mut [u16]) -> bool {
        let mut rejected = 0u32;
        let mut chunks = out.chunks_exact_mut(CHUNK);
        let mut first = lo;
        for c in &mut chunks {
            rejected |= values(l, base, first, min, c);
            first = first.wrapping_add(CHUNK as u32);
        }
        rejected |= values(l, base, first, min, chunks.into_remainder());
        rejected != 0
    }

    /// `min + reduce(value at first + i)` into `out[i]`; non-zero when some value was rejected.
    #[inline(always)]
    fn values(l: &Lemire, base: u32, first: u32, min: u16, out: &mut [u16]) -> u32 {
        let mut rejected = 0u32;
        for (i, o) in out.iter_mut().enumerate() {
            let (v, r) = l.step(Stream::at_base(base, first.wrapping_add(i as u32)));
            rejected |= u32::from(r);
            *o = min.wrapping_add(v as u16);
        }
        rejected
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn body_avx2(l: &Lemire, base: u32, lo: u32, min: u16, out: &mut [u16]) -> bool {
        body(l, base, lo, min, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    unsafe fn body_avx512(l: &Lemire, base: u32, lo: u32, min: u16, out: &mut [u16]) -> bool {
        body(l, base, lo, min, out)
    }

    /// The widest vector unit of this CPU: 0 baseline, 1 AVX2, 2 AVX-512 (F, BW, VL).
    #[cfg(target_arch = "x86_64")]
    pub(crate) fn level() -> u8 {
        use std::sync::atomic::{AtomicU8, Ordering};
        static LEVEL: AtomicU8 = AtomicU8::new(u8::MAX);
        match LEVEL.load(Ordering::Relaxed) {
            u8::MAX => {
                let l = if std::is_x86_feature_detected!("avx512f")
                    && std::is_x86_feature_detected!("avx512bw")
                    && std::is_x86_feature_detected!("avx512vl")
                {
                    2
                } else {
                    u8::from(std::is_x86_feature_detected!("avx2"))
                };
                LEVEL.store(l, Ordering::Relaxed);
                l
            }
            l => l,
        }
    }

    /// A variant of the burst loop.
    #[cfg(test)]
    pub(super) type Body = fn(&Lemire, u32, u32, u16, &mut [u16]) -> bool;

    /// Every variant this CPU can run, with its name, for tests.
    #[cfg(test)]
    pub(super) fn variants() -> Vec<(&'static str, Body)> {
        let mut v: Vec<(&'static str, Body)> = vec![("baseline", body)];
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2.
                v.push(("avx2", |l, b, lo, m, o| unsafe { body_avx2(l, b, lo, m, o) }));
            }
            if level() == 2 {
                // SAFETY: the CPU has AVX-512 F, BW and VL.
                v.push(("avx512", |l, b, lo, m, o| unsafe { body_avx512(l, b, lo, m, o) }));
            }
        }
        v
    }

    #[inline]
    pub(super) fn fill(l: &Lemire, base: u32, lo: u32, min: u16, out: &mut [u16]) -> bool {
        #[cfg(target_arch = "x86_64")]
        match level() {
            // SAFETY: the CPU has AVX-512 F, BW and VL (checked at run time).
            2 => return unsafe { body_avx512(l, base, lo, min, out) },
            // SAFETY: the CPU has AVX2 (checked at run time).
            1 => return unsafe { body_avx2(l, base, lo, min, out) },
            _ => {}
        }
        body(l, base, lo, min, out)
    }
}

/// The widest vector unit of this CPU (0 baseline, 1 AVX2, 2 AVX-512 F/BW/VL), for the
/// burst loops compiled for each.
#[cfg(target_arch = "x86_64")]
pub(crate) fn simd_level() -> u8 {
    simd::level()
}

/// `a mod d` by multiplication (Lemire, Kaser, Kurz, "Faster remainder by direct computation",
/// 2019) with a 128-bit magic number: exact for every 64-bit `a` and every `d` in 1..2^32, and
/// free of the 64-bit division that costs tens of cycles on many CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FastMod {
    d: u64,
    m: u128,
}

impl FastMod {
    pub fn new(d: u64) -> FastMod {
        let d = d.clamp(1, u64::from(u32::MAX));
        FastMod {
            d,
            m: (u128::MAX / u128::from(d)).wrapping_add(1),
        }
    }

    pub fn divisor(&self) -> u64 {
        self.d
    }

    #[inline]
    pub fn rem(&self, a: u64) -> u64 {
        let low = self.m.wrapping_mul(u128::from(a));
        let d = u128::from(self.d);
        let hi = (low >> 64) * d + (((low as u64) as u128 * d) >> 64);
        (hi >> 64) as u64
    }
}

/// A random 64-bit seed from the operating system (`/dev/urandom`), or, where that cannot be
/// read, from the standard library's randomly keyed hasher.
pub fn random_seed() -> u64 {
    use std::io::Read;
    let mut b = [0u8; 8];
    if std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b)).is_ok() {
        return u64::from_ne_bytes(b);
    }
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}

/// The seed of this process, drawn once: the seed of every setup that does not set its own, so
/// that one printed number reproduces all directions and trials.
pub fn process_seed() -> u64 {
    static SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *SEED.get_or_init(random_seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_values() {
        // The first outputs of SplitMix64 seeded with 0 (the reference C implementation).
        let mut g = SplitMix64::new(0);
        assert_eq!(g.next(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(g.next(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(g.next(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn fastmod_is_exact() {
        let mut g = SplitMix64::new(7);
        let divisors = [
            1u64,
            2,
            3,
            7,
            9,
            10,
            255,
            256,
            1000,
            49151,
            64512,
            65535,
            65536,
            65537,
            1 << 31,
            u32::MAX as u64,
        ];
        for d in divisors {
            let f = FastMod::new(d);
            for a in [0, 1, d - 1, d, d + 1, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 56) | 12345] {
                assert_eq!(f.rem(a), a % d, "{a} mod {d}");
            }
            for _ in 0..20_000 {
                let a = g.next();
                assert_eq!(f.rem(a), a % d, "{a} mod {d}");
                let a = a >> (a % 64);
                assert_eq!(f.rem(a), a % d, "{a} mod {d}");
            }
        }
    }

    #[test]
    fn lemire_covers_range_and_rejects_biased_products() {
        let l = Lemire::new(3);
        assert_eq!(l.threshold, ((1u64 << 32) % 3) as u32);
        // x = 0 gives product 0 whose low half (0) is below the threshold 1: rejected, and
        // replaced by hash32(0 ^ REDRAW).
        assert_eq!(l.step(0), (0, true));
        assert_eq!(l.reduce(0), l.reduce(hash32(REDRAW)));
        assert_eq!(l.reduce(u32::MAX), 2);
        let full = Lemire::new(1 << 16);
        assert_eq!(full.threshold, 0);
        assert_eq!(full.reduce(0xabcd_0000), 0xabcd);
        assert_eq!(full.reduce(0), 0);
        assert_eq!(Lemire::new(1).reduce(12345), 0);
        // Exactly uniform over a full period: every value of a span of 3 appears (2^32 - 1) / 3
        // times among the accepted inputs; here checked on the products, for small spans.
        for span in [3u64, 1000, 64512, 65535] {
            let l = Lemire::new(span);
            let accepted = (1u64 << 32) - u64::from(l.threshold);
            assert_eq!(accepted % span, 0, "span {span}");
        }
    }

    #[test]
    fn every_simd_variant_gives_the_scalar_values() {
        let s = Stream::derive(3, 1, 4);
        let variants = simd::variants();
        eprintln!("variants tested: {:?}", variants.iter().map(|v| v.0).collect::<Vec<_>>());
        for span in [1u64, 3, 256, 1000, 64512, 65536] {
            let l = Lemire::new(span);
            for (first, n) in [(0u32, 32usize), (77, 1), (1000, 63), (u32::MAX - 100, 64)] {
                let base = s.base(0);
                let want: Vec<u16> = (0..n as u32)
                    .map(|i| 9u16.wrapping_add(l.step(Stream::at_base(base, first.wrapping_add(i))).0 as u16))
                    .collect();
                let rejected = (0..n as u32).any(|i| l.step(Stream::at_base(base, first.wrapping_add(i))).1);
                for (name, f) in &variants {
                    let mut out = vec![0u16; n];
                    assert_eq!(f(&l, base, first, 9, &mut out), rejected, "{name} span {span}");
                    assert_eq!(out, want, "{name} span {span} first {first}");
                }
            }
        }
    }

    #[test]
    fn hash32_is_a_bijection_on_a_sample() {
        // Distinct inputs give distinct outputs (spot check) and the reference values of
        // lowbias32 hold.
        let mut seen = std::collections::HashSet::new();
        for x in 0..200_000u32 {
            assert!(seen.insert(hash32(x.wrapping_mul(GAMMA32))));
        }
        assert_eq!(hash32(0), 0);
        assert_ne!(hash32(1), 1);
    }

    #[test]
    fn fill_equals_the_scalar_values_also_across_boundaries() {
        let s = Stream::derive(11, 0, 3);
        for span in [1u64, 3, 256, 1000, 64512, 65535, 65536] {
            let l = Lemire::new(span);
            for first in [0u64, 5, (1 << 32) - 20, (1 << 32) - 64, 1 << 40, u64::MAX - 40] {
                let mut out = [0u16; 37];
                l.fill(s, first, 7, &mut out);
                for (i, v) in out.iter().enumerate() {
                    let want = 7u16.wrapping_add(l.reduce(s.at(first.wrapping_add(i as u64))) as u16);
                    assert_eq!(*v, want, "span {span} first {first} i {i}");
                }
            }
        }
        // A burst with a rejection: find one for span 3 (threshold 1: only x = 0 rejects),
        // i.e. the index where the hash input is 0.
        let l = Lemire::new(3);
        let base = s.base(0);
        // lo * GAMMA32 = -base (mod 2^32): lo = -base * GAMMA32^-1.
        let mut inv = 1u32;
        for _ in 0..5 {
            inv = inv.wrapping_mul(2u32.wrapping_sub(GAMMA32.wrapping_mul(inv)));
        }
        let lo = base.wrapping_neg().wrapping_mul(inv);
        assert_eq!(Stream::at_base(base, lo), 0);
        let first = u64::from(lo).saturating_sub(3);
        let mut out = [0u16; 8];
        l.fill(s, first, 0, &mut out);
        assert_eq!(u32::from(out[(u64::from(lo) - first) as usize]), l.reduce(0));
        assert!(out.iter().all(|v| *v < 3));
    }

    #[test]
    fn streams_differ_and_repeat() {
        let a = Stream::derive(1, 0, 0);
        let b = Stream::derive(1, 0, 1);
        let c = Stream::derive(1, 1, 0);
        let d = Stream::derive(2, 0, 0);
        assert_eq!(a, Stream::derive(1, 0, 0));
        for s in [b, c, d] {
            assert_ne!(a.key, s.key);
        }
        assert_ne!(a.at(0), a.at(1));
        assert_eq!(a.at(42), a.at(42));
    }
}
