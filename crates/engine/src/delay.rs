//! Delay statistics: latency (RFC 8219 section 7.2), PDV (section 7.3.1) and IPDV (section
//! 7.3.2), over an exact sample list for small runs or a bounded-memory histogram.
//!
//! Percentiles of delays use the **nearest-rank** definition: the p-th percentile of n values is
//! the value at rank ceil(p/100 x n) (1-based) in ascending order, rank 1 for p = 0. It is always
//! a value that occurred, which matters because a lost frame counts as an infinitely large delay:
//! no interpolation with infinity is needed. The median is the 50th percentile so defined (the
//! lower middle value for an even count).
//!
//! [`LogHistogram`] is log-linear (HDR-histogram style): values below 2048 ns are counted exactly;
//! above, each power of two is split into 1024 equal buckets. A percentile read from it is the
//! midpoint of the bucket holding the exact nearest-rank value (clamped to the exact minimum and
//! maximum), so it differs from the exact value by at most [`LogHistogram::RELATIVE_ERROR`] =
//! 1/2048 (about 0.049 %) of that value. Memory: at most 56,320 counters (450 KiB) whatever
//! the number of samples, allocated only up to the largest value seen.
//!
//! This module depends on serde only, so that the engine can take it over and feed it.

use serde::{Deserialize, Serialize};

/// A delay in nanoseconds, or infinite (a lost frame: `u64::MAX`). Serialised as a number of
/// nanoseconds, or as the string `"infinite"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Delay(pub u64);

impl Delay {
    pub const INFINITE: Delay = Delay(u64::MAX);

    pub fn is_infinite(self) -> bool {
        self.0 == u64::MAX
    }

    /// Nanoseconds, or `None` if infinite.
    pub fn ns(self) -> Option<u64> {
        (!self.is_infinite()).then_some(self.0)
    }

    /// Milliseconds (siitperf prints TL, WCL and PDV in ms); `f64::INFINITY` if infinite.
    pub fn ms(self) -> f64 {
        if self.is_infinite() {
            f64::INFINITY
        } else {
            self.0 as f64 / 1.0e6
        }
    }
}

impl std::fmt::Display for Delay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_infinite() {
            f.write_str("infinite")
        } else {
            write!(f, "{:.6} ms", self.ms())
        }
    }
}

impl Serialize for Delay {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.is_infinite() {
            s.serialize_str("infinite")
        } else {
            s.serialize_u64(self.0)
        }
    }
}

impl<'de> Deserialize<'de> for Delay {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Delay, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Delay;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("nanoseconds or \"infinite\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Delay, E> {
                Ok(Delay(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Delay, E> {
                u64::try_from(v).map(Delay).map_err(|_| E::custom("a delay cannot be negative"))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Delay, E> {
                if v == "infinite" {
                    Ok(Delay::INFINITE)
                } else {
                    Err(E::custom(format!("expected \"infinite\", found {v:?}")))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// The 1-based nearest rank of the p-th percentile among `n` values (`None` for n = 0 or a p
/// outside [0, 100]). A product within 1e-9 of an integer counts as that integer, so that
/// 99.9 % of 1000 is rank 999, not 1000 through rounding.
pub fn nearest_rank(p: f64, n: u64) -> Option<u64> {
    if n == 0 || !(0.0..=100.0).contains(&p) {
        return None;
    }
    let x = p / 100.0 * n as f64;
    let r = x.round();
    let rank = if (x - r).abs() <= 1e-9 * x.max(1.0) { r } else { x.ceil() };
    Some((rank as u64).clamp(1, n))
}

/// The nearest-rank percentile of an ascending slice.
pub fn percentile_sorted<T: Copy>(sorted: &[T], p: f64) -> Option<T> {
    let rank = nearest_rank(p, sorted.len() as u64)?;
    sorted.get(rank as usize - 1).copied()
}

/// A log-linear histogram of `u64` values with relative error at most 1/2048.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogHistogram {
    counts: Vec<u64>,
    total: u64,
    min: u64,
    max: u64,
    sum: u128,
}

const SUB_BITS: u32 = 10;
const SUB: u64 = 1 << SUB_BITS;
const LINEAR: u64 = 2 * SUB;

fn bucket_of(v: u64) -> usize {
    if v < LINEAR {
        v as usize
    } else {
        let e = 63 - v.leading_zeros();
        let shift = e - SUB_BITS;
        let sub = (v >> shift) - SUB;
        (LINEAR + u64::from(e - SUB_BITS - 1) * SUB + sub) as usize
    }
}

/// The smallest and the largest value of bucket `i`.
fn bucket_bounds(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < LINEAR {
        (i, i)
    } else {
        let j = i - LINEAR;
        let shift = j / SUB + 1;
        let lo = (SUB + j % SUB) << shift;
        (lo, lo + ((1u64 << shift) - 1))
    }
}

impl LogHistogram {
    /// The largest relative difference between a percentile read from the histogram and the
    /// exact nearest-rank percentile of the same values.
    pub const RELATIVE_ERROR: f64 = 1.0 / 2048.0;
    /// The number of buckets when values up to `u64::MAX - 1` occur.
    pub const MAX_BUCKETS: usize = 2048 + 53 * 1024;

    pub fn new() -> LogHistogram {
        LogHistogram::default()
    }

    pub fn record(&mut self, v: u64) {
        self.record_n(v, 1);
    }

    pub fn record_n(&mut self, v: u64, n: u64) {
        if n == 0 {
            return;
        }
        let b = bucket_of(v);
        if self.counts.len() <= b {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] = self.counts[b].saturating_add(n);
        if self.total == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.total = self.total.saturating_add(n);
        self.sum = self.sum.saturating_add(u128::from(v) * u128::from(n));
    }

    /// Add another histogram's counts.
    pub fn merge(&mut self, other: &LogHistogram) {
        if other.total == 0 {
            return;
        }
        if self.counts.len() < other.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (mine, &theirs) in self.counts.iter_mut().zip(other.counts.iter()) {
            *mine = mine.saturating_add(theirs);
        }
        if self.total == 0 {
            self.min = other.min;
            self.max = other.max;
        } else {
            self.min = self.min.min(other.min);
            self.max = self.max.max(other.max);
        }
        self.total = self.total.saturating_add(other.total);
        self.sum = self.sum.saturating_add(other.sum);
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn min(&self) -> Option<u64> {
        (self.total > 0).then_some(self.min)
    }

    pub fn max(&self) -> Option<u64> {
        (self.total > 0).then_some(self.max)
    }

    pub fn mean(&self) -> Option<f64> {
        (self.total > 0).then(|| self.sum as f64 / self.total as f64)
    }

    /// Bytes of counters held.
    pub fn memory_bytes(&self) -> usize {
        self.counts.capacity() * std::mem::size_of::<u64>()
    }

    /// The value at 1-based rank `k` in ascending order (within the stated relative error).
    pub fn value_at_rank(&self, k: u64) -> Option<u64> {
        if k == 0 || k > self.total {
            return None;
        }
        if k == 1 {
            return Some(self.min);
        }
        if k == self.total {
            return Some(self.max);
        }
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen = seen.saturating_add(c);
            if seen >= k {
                let (lo, hi) = bucket_bounds(i);
                return Some((lo + (hi - lo) / 2).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// The nearest-rank percentile (see the module documentation).
    pub fn percentile(&self, p: f64) -> Option<u64> {
        self.value_at_rank(nearest_rank(p, self.total)?)
    }

    /// (upper value of bucket, count) for each non-empty bucket, ascending.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (bucket_bounds(i).1.min(self.max), c))
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Store {
    Exact { values: Vec<u64>, limit: Option<usize> },
    Histogram(LogHistogram),
}

/// One-way delays of frames (nanoseconds; `u64::MAX` = lost), kept exactly or in a
/// [`LogHistogram`].
#[derive(Debug, Clone, PartialEq)]
pub struct DelayRecorder {
    store: Store,
    lost: u64,
}

impl DelayRecorder {
    /// Every value kept (memory grows with the number of frames).
    pub fn exact() -> DelayRecorder {
        DelayRecorder {
            store: Store::Exact {
                values: Vec::new(),
                limit: None,
            },
            lost: 0,
        }
    }

    /// Bounded memory from the start.
    pub fn histogram() -> DelayRecorder {
        DelayRecorder {
            store: Store::Histogram(LogHistogram::new()),
            lost: 0,
        }
    }

    /// Exact for up to `limit` values, then moves them into a histogram.
    pub fn exact_up_to(limit: usize) -> DelayRecorder {
        DelayRecorder {
            store: Store::Exact {
                values: Vec::new(),
                limit: Some(limit),
            },
            lost: 0,
        }
    }

    pub fn from_samples(samples: &[u64]) -> DelayRecorder {
        let mut r = DelayRecorder::exact();
        for &s in samples {
            r.record(s);
        }
        r
    }

    /// Record one frame's delay; `u64::MAX` records a lost frame.
    pub fn record(&mut self, ns: u64) {
        if ns == u64::MAX {
            self.lost += 1;
            return;
        }
        match &mut self.store {
            Store::Exact { values, limit } => {
                values.push(ns);
                if limit.is_some_and(|l| values.len() > l) {
                    let mut h = LogHistogram::new();
                    for &v in values.iter() {
                        h.record(v);
                    }
                    self.store = Store::Histogram(h);
                }
            }
            Store::Histogram(h) => h.record(ns),
        }
    }

    /// Record `n` lost frames (infinite delays).
    pub fn record_lost(&mut self, n: u64) {
        self.lost += n;
    }

    pub fn is_exact(&self) -> bool {
        matches!(self.store, Store::Exact { .. })
    }

    /// The bound on the relative error of percentiles: 0 when exact.
    pub fn relative_error(&self) -> f64 {
        if self.is_exact() {
            0.0
        } else {
            LogHistogram::RELATIVE_ERROR
        }
    }

    /// Frames recorded, lost ones included.
    pub fn count(&self) -> u64 {
        self.finite_count() + self.lost
    }

    pub fn lost(&self) -> u64 {
        self.lost
    }

    fn finite_count(&self) -> u64 {
        match &self.store {
            Store::Exact { values, .. } => values.len() as u64,
            Store::Histogram(h) => h.count(),
        }
    }

    /// Nearest-rank percentiles over all frames, a lost frame counting as infinite.
    pub fn percentiles(&self, ps: &[f64]) -> Vec<Option<Delay>> {
        let n = self.count();
        let finite = self.finite_count();
        let sorted = match &self.store {
            Store::Exact { values, .. } => {
                let mut v = values.clone();
                v.sort_unstable();
                Some(v)
            }
            Store::Histogram(_) => None,
        };
        ps.iter()
            .map(|&p| {
                let k = nearest_rank(p, n)?;
                if k > finite {
                    return Some(Delay::INFINITE);
                }
                match (&sorted, &self.store) {
                    (Some(v), _) => v.get(k as usize - 1).copied().map(Delay),
                    (None, Store::Histogram(h)) => h.value_at_rank(k).map(Delay),
                    (None, Store::Exact { .. }) => None,
                }
            })
            .collect()
    }

    pub fn percentile(&self, p: f64) -> Option<Delay> {
        self.percentiles(&[p]).pop().flatten()
    }

    /// The smallest delay (exact in both modes); infinite if every frame was lost.
    pub fn min(&self) -> Option<Delay> {
        if self.count() == 0 {
            return None;
        }
        let m = match &self.store {
            Store::Exact { values, .. } => values.iter().copied().min(),
            Store::Histogram(h) => h.min(),
        };
        Some(m.map_or(Delay::INFINITE, Delay))
    }

    /// Points of the empirical CDF of the finite delays: (delay ns, fraction of all frames at or
    /// below it), at most about `max_points` of them. Lost frames keep the curve below 1.
    pub fn cdf_points(&self, max_points: usize) -> Vec<(u64, f64)> {
        let n = self.count();
        if n == 0 {
            return Vec::new();
        }
        let raw: Vec<(u64, u64)> = match &self.store {
            Store::Exact { values, .. } => {
                let mut v = values.clone();
                v.sort_unstable();
                let mut out: Vec<(u64, u64)> = Vec::new();
                for x in v {
                    match out.last_mut() {
                        Some((last, c)) if *last == x => *c += 1,
                        _ => out.push((x, 1)),
                    }
                }
                out
            }
            Store::Histogram(h) => h.buckets().collect(),
        };
        let stride = raw.len().div_ceil(max_points.max(1)).max(1);
        let mut cum = 0u64;
        let mut pts = Vec::new();
        for (i, (v, c)) in raw.iter().enumerate() {
            cum += c;
            if i % stride == stride - 1 || i + 1 == raw.len() {
                pts.push((*v, cum as f64 / n as f64));
            }
        }
        pts
    }
}

/// Typical and worst-case latency of one trial direction (RFC 8219 section 7.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    /// Tagged frames.
    pub tags: u64,
    /// Tagged frames that did not arrive (counted as infinite latency).
    pub lost: u64,
    /// Typical latency: the median.
    pub typical: Delay,
    /// Worst-case latency: the 99.9th percentile.
    pub worst_case: Delay,
    pub min: Delay,
    pub max: Delay,
}

impl LatencyStats {
    /// From a trial's latency samples (`u64::MAX` = a lost tag). `None` for no samples.
    pub fn from_samples(samples: &[u64]) -> Option<LatencyStats> {
        if samples.is_empty() {
            return None;
        }
        let mut v = samples.to_vec();
        v.sort_unstable();
        Some(LatencyStats {
            tags: v.len() as u64,
            lost: v.iter().filter(|&&x| x == u64::MAX).count() as u64,
            typical: Delay(percentile_sorted(&v, 50.0)?),
            worst_case: Delay(percentile_sorted(&v, 99.9)?),
            min: Delay(v[0]),
            max: Delay(v[v.len() - 1]),
        })
    }
}

/// Packet delay variation (RFC 8219 section 7.3.1): PDV = D99.9thPercentile - Dmin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PdvStats {
    pub frames: u64,
    pub lost: u64,
    pub min: Delay,
    pub p99_9: Delay,
    /// Infinite when more than 0.1 % of the frames were lost.
    pub pdv: Delay,
    /// Bound on the relative error of `p99_9` (0: exact).
    pub relative_error: f64,
}

impl PdvStats {
    pub fn of(rec: &DelayRecorder) -> Option<PdvStats> {
        let min = rec.min()?;
        let p = rec.percentile(99.9)?;
        let pdv = match (p.ns(), min.ns()) {
            (Some(p), Some(m)) => Delay(p.saturating_sub(m)),
            _ => Delay::INFINITE,
        };
        Some(PdvStats {
            frames: rec.count(),
            lost: rec.lost(),
            min,
            p99_9: p,
            pdv,
            relative_error: rec.relative_error(),
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
enum SignedStore {
    Exact(Vec<i64>),
    /// Magnitudes of the negative differences, and the non-negative differences.
    Histogram {
        neg: LogHistogram,
        pos: LogHistogram,
    },
}

/// Inter-packet delay variation (RFC 8219 section 7.3.2): IPDV(i) = D(i) - D(i-1) over frames in
/// sending order. A pair with a lost frame has no IPDV (RFC 3393) and is skipped.
#[derive(Debug, Clone, PartialEq)]
pub struct IpdvRecorder {
    prev: Option<u64>,
    store: SignedStore,
    min: i64,
    max: i64,
    pairs: u64,
}

/// Minimum, median (nearest rank) and maximum IPDV, nanoseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IpdvStats {
    pub pairs: u64,
    pub min_ns: i64,
    pub median_ns: i64,
    pub max_ns: i64,
    pub relative_error: f64,
}

impl IpdvRecorder {
    pub fn exact() -> IpdvRecorder {
        IpdvRecorder {
            prev: None,
            store: SignedStore::Exact(Vec::new()),
            min: 0,
            max: 0,
            pairs: 0,
        }
    }

    pub fn histogram() -> IpdvRecorder {
        IpdvRecorder {
            prev: None,
            store: SignedStore::Histogram {
                neg: LogHistogram::new(),
                pos: LogHistogram::new(),
            },
            min: 0,
            max: 0,
            pairs: 0,
        }
    }

    /// Feed the delay of the next frame in sending order (`u64::MAX` = lost).
    pub fn record(&mut self, ns: u64) {
        if ns == u64::MAX {
            self.prev = None;
            return;
        }
        if let Some(p) = self.prev {
            let d = (i128::from(ns) - i128::from(p)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
            if self.pairs == 0 {
                self.min = d;
                self.max = d;
            } else {
                self.min = self.min.min(d);
                self.max = self.max.max(d);
            }
            self.pairs += 1;
            match &mut self.store {
                SignedStore::Exact(v) => v.push(d),
                SignedStore::Histogram { neg, pos } => {
                    if d < 0 {
                        neg.record(d.unsigned_abs());
                    } else {
                        pos.record(d as u64);
                    }
                }
            }
        }
        self.prev = Some(ns);
    }

    /// The nearest-rank percentile of the IPDV values.
    pub fn percentile(&self, p: f64) -> Option<i64> {
        let k = nearest_rank(p, self.pairs)?;
        match &self.store {
            SignedStore::Exact(v) => {
                let mut s = v.clone();
                s.sort_unstable();
                s.get(k as usize - 1).copied()
            }
            SignedStore::Histogram { neg, pos } => {
                let v = if k <= neg.count() {
                    let m = neg.value_at_rank(neg.count() - k + 1)?;
                    -(m.min(i64::MAX as u64 + 1) as i128)
                } else {
                    i128::from(pos.value_at_rank(k - neg.count())?)
                };
                Some(v.clamp(i128::from(self.min), i128::from(self.max)) as i64)
            }
        }
    }

    pub fn stats(&self) -> Option<IpdvStats> {
        if self.pairs == 0 {
            return None;
        }
        let relative_error = if matches!(self.store, SignedStore::Exact(_)) {
            0.0
        } else {
            LogHistogram::RELATIVE_ERROR
        };
        Some(IpdvStats {
            pairs: self.pairs,
            min_ns: self.min,
            median_ns: self.percentile(50.0)?,
            max_ns: self.max,
            relative_error,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_once() {
        let mut prev_hi = None;
        for i in 0..LogHistogram::MAX_BUCKETS {
            let (lo, hi) = bucket_bounds(i);
            assert!(lo <= hi);
            if let Some(p) = prev_hi {
                assert_eq!(lo, p + 1, "bucket {i}");
            }
            assert_eq!(bucket_of(lo), i);
            assert_eq!(bucket_of(hi), i);
            prev_hi = Some(hi);
        }
        assert_eq!(prev_hi, Some(u64::MAX));
    }

    #[test]
    fn bucket_width_is_within_the_stated_error() {
        for i in (LINEAR as usize)..LogHistogram::MAX_BUCKETS {
            let (lo, hi) = bucket_bounds(i);
            let mid = lo + (hi - lo) / 2;
            assert!((hi - mid) as f64 <= lo as f64 * LogHistogram::RELATIVE_ERROR);
            assert!((mid - lo) as f64 <= lo as f64 * LogHistogram::RELATIVE_ERROR);
        }
    }

    #[test]
    fn nearest_rank_examples() {
        assert_eq!(nearest_rank(99.9, 1000), Some(999));
        assert_eq!(nearest_rank(99.9, 1001), Some(1000));
        assert_eq!(nearest_rank(50.0, 4), Some(2));
        assert_eq!(nearest_rank(50.0, 5), Some(3));
        assert_eq!(nearest_rank(0.0, 5), Some(1));
        assert_eq!(nearest_rank(100.0, 5), Some(5));
        assert_eq!(nearest_rank(50.0, 0), None);
        assert_eq!(nearest_rank(f64::NAN, 3), None);
        assert_eq!(nearest_rank(101.0, 3), None);
    }
}
