//! Pseudorandom numbers for the varying fields, *counter-based*: the value of a field in frame
//! `seq` is a pure function of the field's key and `seq`. So the patcher needs no mutable state
//! (`write_frame` stays `&self`), a frame written twice (a backend retry) is the same frame, and a
//! seed reproduces every frame in any order of writing.
//!
//! The per-frame generator is wyrand (Wang Yi, wyhash) evaluated at index `seq`: one 64x64->128
//! multiply of a Weyl sequence value. Each field of each direction has its own stream, keyed from
//! the master seed by SplitMix64 (Steele, Lea, Flood, OOPSLA 2014). Values in a range come from
//! Lemire's multiply-shift reduction with rejection ("Fast random integer generation in an
//! interval", ACM TOMACS 2019), which is exactly uniform; the rejection threshold is precomputed,
//! so the hot path has no division.

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

/// wyrand's increment and multiplier constant (Wang Yi, wyhash v4).
pub const WY_GAMMA: u64 = 0xa076_1d64_78bd_642f;
pub const WY_XOR: u64 = 0xe703_7ed1_a0b4_28db;

/// One field's pseudorandom stream, indexed by the frame sequence number: wyrand used
/// counter-based, `mum(s, s ^ WY_XOR)` of `s = key + i * WY_GAMMA` (one 64x64->128 multiply).
/// Streams share the Weyl increment and differ by their random 64-bit key, i.e. they are the
/// same sequence at offsets about 2^63 apart, as wyrand's independent streams are.
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

    /// The 64-bit value of this stream at index `i`.
    #[inline(always)]
    pub fn at(&self, i: u64) -> u64 {
        let s = self.key.wrapping_add(i.wrapping_mul(WY_GAMMA));
        let t = u128::from(s) * u128::from(s ^ WY_XOR);
        ((t >> 64) as u64) ^ (t as u64)
    }
}

/// Unbiased reduction of 64-bit random values to `[0, span)` (Lemire). `span` is 1..=2^32.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lemire {
    span: u64,
    /// `2^64 mod span`: products whose low half is below this are rejected.
    threshold: u64,
}

impl Lemire {
    pub fn new(span: u64) -> Lemire {
        let span = span.clamp(1, 1 << 32);
        Lemire {
            span,
            threshold: span.wrapping_neg() % span,
        }
    }

    /// The value in `[0, span)` for random `x`; on the rare rejection (probability below
    /// `span / 2^64`) `redraw` gives the next candidate.
    #[inline]
    pub fn reduce(&self, mut x: u64, mut redraw: impl FnMut(u64) -> u64) -> u64 {
        let mut m = u128::from(x) * u128::from(self.span);
        while (m as u64) < self.threshold {
            x = redraw(x);
            m = u128::from(x) * u128::from(self.span);
        }
        (m >> 64) as u64
    }
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
        assert_eq!(l.threshold, (1u128 << 64).rem_euclid(3) as u64);
        // x = 0 gives product 0 whose low half (0) is below the threshold 1: rejected.
        assert_eq!(l.reduce(0, |_| u64::MAX), 2);
        assert_eq!(l.reduce(u64::MAX, |_| unreachable!()), 2);
        let full = Lemire::new(1 << 16);
        assert_eq!(full.threshold, 0);
        assert_eq!(full.reduce(0xabcd_0000_0000_0000, |_| unreachable!()), 0xabcd);
        assert_eq!(Lemire::new(1).reduce(12345, |_| unreachable!()), 0);
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
