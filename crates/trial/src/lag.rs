//! The sender's lag behind its schedule, recorded once per burst in fixed memory (no allocation
//! on the send path): a log-linear histogram of 1/16 relative precision, the largest lag, and
//! the stalls (episodes beyond a threshold).

/// Values below this are counted exactly; above, each power of two has this many buckets.
const SUB: u64 = 16;
const SUB_BITS: u32 = 4;
/// Buckets for every `u64`: 16 exact ones, then 16 per power of two from 2^4 to 2^63.
const BUCKETS: usize = (SUB as usize) * 61;

fn bucket_of(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros();
    let sub = (v >> (msb - SUB_BITS)) & (SUB - 1);
    (((msb - SUB_BITS + 1) as u64) * SUB + sub) as usize
}

/// The largest value of bucket `i`.
fn bucket_hi(i: usize) -> u64 {
    let i = i as u64;
    if i < SUB {
        return i;
    }
    let shift = i / SUB - 1;
    let lo = (SUB + i % SUB) << shift;
    lo.saturating_add((1u64 << shift) - 1)
}

/// Lags of one sender (in any unit: the engine records clock ticks).
#[derive(Debug, Clone)]
pub struct LagHistogram {
    counts: Box<[u64; BUCKETS]>,
    total: u64,
    max: u64,
    stalls: u64,
    stalled: bool,
}

impl Default for LagHistogram {
    fn default() -> LagHistogram {
        LagHistogram {
            counts: Box::new([0; BUCKETS]),
            total: 0,
            max: 0,
            stalls: 0,
            stalled: false,
        }
    }
}

impl LagHistogram {
    /// `frames` frames left `lag` behind their schedule; a lag above `stall` begins a stall
    /// unless one is going on, a lag at or below it ends one.
    #[inline]
    pub fn record(&mut self, lag: u64, frames: u64, stall: u64) {
        if lag > stall {
            if !self.stalled {
                self.stalls += 1;
                self.stalled = true;
            }
        } else {
            self.stalled = false;
        }
        self.max = self.max.max(lag);
        if frames > 0 {
            let b = &mut self.counts[bucket_of(lag)];
            *b = b.saturating_add(frames);
            self.total = self.total.saturating_add(frames);
        }
    }

    /// Take in another sender's record (another queue of the same direction).
    pub fn merge(&mut self, o: &LagHistogram) {
        for (a, b) in self.counts.iter_mut().zip(o.counts.iter()) {
            *a = a.saturating_add(*b);
        }
        self.total = self.total.saturating_add(o.total);
        self.max = self.max.max(o.max);
        self.stalls += o.stalls;
    }

    /// The largest lag (exact).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The stalls (see [`LagHistogram::record`]).
    pub fn stalls(&self) -> u64 {
        self.stalls
    }

    /// Frames recorded.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The smallest lag that at least `q` (0..=1) of the frames did not exceed, rounded up to
    /// its bucket's largest value (never above the largest lag); 0 when nothing was recorded.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen = seen.saturating_add(c);
            if seen >= rank {
                return bucket_hi(i).min(self.max);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_in_order_within_a_sixteenth() {
        let mut last = 0;
        for v in (0..5000u64).chain([1 << 20, (1 << 20) + 12345, u64::MAX / 3, u64::MAX]) {
            let b = bucket_of(v);
            assert!(b < BUCKETS, "{v}");
            assert!(b >= last || v > 5000, "{v}");
            last = b;
            let hi = bucket_hi(b);
            assert!(hi >= v, "{v}: bucket {b} ends at {hi}");
            assert!((hi - v) as f64 <= v as f64 / 16.0 + 1.0, "{v}: bucket {b} ends at {hi}");
        }
        assert_eq!(bucket_hi(BUCKETS - 1), u64::MAX);
    }

    #[test]
    fn quantiles_maximum_and_stalls() {
        let mut h = LagHistogram::default();
        assert_eq!((h.quantile(0.999), h.max(), h.stalls()), (0, 0, 0));
        // 9,990 frames 1,000 behind, then a stall: 10 frames 50,000 behind, then caught up.
        for _ in 0..999 {
            h.record(1000, 10, 10_000);
        }
        h.record(50_000, 4, 10_000);
        h.record(30_000, 6, 10_000);
        h.record(1000, 10, 10_000);
        assert_eq!(h.count(), 10_010);
        assert_eq!(h.stalls(), 1);
        assert_eq!(h.max(), 50_000);
        let p999 = h.quantile(0.999);
        assert!((1000..=1000 + 1000 / 16).contains(&p999), "{p999}");
        assert!((30_000..=32_000).contains(&h.quantile(0.9995)), "{}", h.quantile(0.9995));
        assert_eq!(h.quantile(1.0), 50_000);
        // A second stall, and the other queue's record.
        h.record(20_000, 1, 10_000);
        let mut other = LagHistogram::default();
        other.record(70_000, 1, 10_000);
        h.merge(&other);
        assert_eq!((h.stalls(), h.max(), h.count()), (3, 70_000, 10_012));
    }
}
