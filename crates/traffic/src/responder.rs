//! Phase 2's Responder (RFC 9693): its foreground frames answer on learnt tuples, each frame's
//! tuple an entry of the state table chosen as `Responder-tuples` says. For a burst the entries
//! are chosen in one loop over the burst (SIMD where the CPU has it), then read under one check
//! of the table's sequence ([`StateTable::read_rows_v4`]).

use crate::enumerate;
use crate::rng::mix64;
use crate::state::StateTable;
use crate::template::Template;
use crate::vary::Variation;
use std::sync::Arc;

/// The multiplier of the sequence number in the pseudorandom choice.
const SEQ_MUL: u64 = 0x9e37_79b9_7f4a_7c15;

/// The Responder's foreground frames in phase 2: IPv4 from a learnt tuple, its addresses and
/// ports swapped.
#[derive(Debug, Clone)]
pub(crate) struct Responder {
    pub(crate) template: Template,
    /// True when its frames are written from rows computed a burst at a time (an IPv4 table
    /// and template: `Tuples4`).
    pub(crate) rows: bool,
    pub(crate) table: Arc<StateTable>,
    /// How the tuple of each frame is chosen (siitperf's `Responder-tuples`).
    pub(crate) select: Variation,
    pub(crate) key: u64,
    pub(crate) fg_n: u32,
    pub(crate) fg_m: u32,
}

impl Responder {
    /// The entry of the state table that frame `seq` (foreground) answers on.
    #[inline]
    pub(crate) fn entry(&self, seq: u64) -> u64 {
        let m = self.table.len();
        let k = enumerate::foreground_index(seq, self.fg_n, self.fg_m);
        match self.select {
            Variation::Fixed => 0,
            Variation::Increasing => k % m,
            Variation::Decreasing => m - 1 - k % m,
            // Uniform over [0, M) (bias below M / 2^64).
            Variation::Pseudorandom => pick(self.key, seq, m),
        }
    }

    /// The entries of frames `seq0 ..` (every one foreground), one per element of `out`: those
    /// of [`Responder::entry`].
    pub(crate) fn entries(&self, seq0: u64, out: &mut [u64]) {
        let m = self.table.len();
        let all_fg = self.fg_m >= self.fg_n.max(1);
        if self.select == Variation::Pseudorandom && all_fg && m <= u64::from(u32::MAX) {
            simd::picks(self.key, seq0, m, out);
            return;
        }
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.entry(seq0.wrapping_add(i as u64));
        }
    }

    /// The slot words of frame `seq`'s tuple: source port (the learnt Responder port),
    /// destination port (the Initiator's), source address (the Responder's), destination
    /// address (the Initiator's as the DUT mapped it); `None` when the entry cannot be read.
    #[inline]
    pub(crate) fn words(&self, seq: u64) -> Option<[u16; crate::template::TUPLE_SLOTS]> {
        self.table.read_frame_words(self.entry(seq))
    }
}

/// The pseudorandom entry of frame `seq` among `m`: the high 64 bits of a 64-bit hash of the
/// key and `seq` times `m`.
#[inline(always)]
fn pick(key: u64, seq: u64, m: u64) -> u64 {
    ((u128::from(mix64(key ^ seq.wrapping_mul(SEQ_MUL))) * u128::from(m)) >> 64) as u64
}

/// [`pick`] for `m` below 2^32 in 64-bit arithmetic that vector units have: with the hash
/// `z = h 2^32 + l`, `(z m) >> 64 = (h m + (l m >> 32)) >> 32` exactly (`h m + (l m >> 32)`
/// stays below 2^64).
#[inline(always)]
fn pick32(key: u64, seq: u64, m: u64) -> u64 {
    let z = mix64(key ^ seq.wrapping_mul(SEQ_MUL));
    ((z >> 32) * m + (((z & 0xffff_ffff) * m) >> 32)) >> 32
}

/// The burst loop of [`Responder::entries`], compiled for AVX-512 (with DQ's 64-bit
/// multiplies), AVX2 and the baseline, picked at run time.
mod simd {
    use super::pick32;

    #[inline(always)]
    fn body(key: u64, seq0: u64, m: u64, out: &mut [u64]) {
        for (i, o) in out.iter_mut().enumerate() {
            *o = pick32(key, seq0.wrapping_add(i as u64), m);
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn body_avx2(key: u64, seq0: u64, m: u64, out: &mut [u64]) {
        body(key, seq0, m, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq,avx512vl")]
    unsafe fn body_avx512(key: u64, seq0: u64, m: u64, out: &mut [u64]) {
        body(key, seq0, m, out)
    }

    /// Whether this CPU has AVX-512 DQ besides F, BW and VL (`crate::rng`'s level 2).
    #[cfg(target_arch = "x86_64")]
    fn dq() -> bool {
        crate::rng::simd_level() == 2 && std::is_x86_feature_detected!("avx512dq")
    }

    /// A variant of the burst loop: (key, first sequence number, table size, entries).
    #[cfg(test)]
    pub(super) type Body = fn(u64, u64, u64, &mut [u64]);

    /// Every variant this CPU can run, with its name, for tests.
    #[cfg(test)]
    pub(super) fn variants() -> Vec<(&'static str, Body)> {
        let mut v: Vec<(&'static str, Body)> = vec![("baseline", body)];
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2.
                v.push(("avx2", |k, s, m, o| unsafe { body_avx2(k, s, m, o) }));
            }
            if dq() {
                // SAFETY: the CPU has AVX-512 F, DQ and VL.
                v.push(("avx512", |k, s, m, o| unsafe { body_avx512(k, s, m, o) }));
            }
        }
        v
    }

    pub(super) fn picks(key: u64, seq0: u64, m: u64, out: &mut [u64]) {
        #[cfg(target_arch = "x86_64")]
        {
            if dq() {
                // SAFETY: the CPU has AVX-512 F, DQ and VL (checked at run time).
                return unsafe { body_avx512(key, seq0, m, out) };
            }
            if crate::rng::simd_level() >= 1 {
                // SAFETY: the CPU has AVX2 (checked at run time).
                return unsafe { body_avx2(key, seq0, m, out) };
            }
        }
        body(key, seq0, m, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 32-bit form is the 128-bit product's high half, for table sizes up to 2^32 - 1
    /// (the edges and a sample between).
    #[test]
    fn pick32_equals_the_wide_product() {
        let mut sm = crate::rng::SplitMix64::new(7);
        let sizes = [1, 2, 3, 1000, 65_535, 65_536, 1_000_000, (1 << 31) + 11, u64::from(u32::MAX)];
        for m in sizes {
            for _ in 0..20_000 {
                let (key, seq) = (sm.next(), sm.next());
                assert_eq!(pick32(key, seq, m), pick(key, seq, m), "m {m} key {key:#x} seq {seq}");
                assert!(pick32(key, seq, m) < m);
            }
        }
    }

    /// Every compiled variant of the burst loop gives the scalar choice, across a 2^32
    /// boundary of the sequence and at sequence 0.
    #[test]
    fn every_variant_gives_the_scalar_entries() {
        for (name, f) in simd::variants() {
            for (seq0, m) in [(0u64, 10_000u64), ((1 << 32) - 13, 1_000_000), (u64::MAX - 40, 3)] {
                let mut out = vec![0u64; 77];
                f(0x1234_5678_9abc_def0, seq0, m, &mut out);
                for (i, &e) in out.iter().enumerate() {
                    assert_eq!(e, pick(0x1234_5678_9abc_def0, seq0.wrapping_add(i as u64), m), "{name} {seq0} {i}");
                }
            }
        }
    }
}
