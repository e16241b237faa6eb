//! Recording one-way delays on the receive path: latency (RFC 8219 section 7.2), PDV (section
//! 7.3.1) and IPDV (section 7.3.2) are computed from these records by the results crate
//! (`xlat_results::delay`); nothing here is a statistic.
//!
//! A [`DelayRecorder`] keeps every delay of a direction, exactly (a list, memory grows with the
//! frames) or in a [`LogHistogram`] with bounded memory, and counts lost frames (an infinite
//! delay) apart. An [`IpdvRecorder`] keeps the differences D(i) - D(i-1) of consecutive frames
//! the same two ways.
//!
//! [`LogHistogram`] is log-linear (HDR-histogram style): values below 2048 ns are counted exactly;
//! above, each power of two is split into 1024 equal buckets, so the midpoint of a value's bucket
//! differs from the value by at most [`LogHistogram::RELATIVE_ERROR`] = 1/2048 (about 0.049 %) of
//! it. Memory: at most 56,320 counters (450 KiB) whatever the number of samples, allocated only
//! up to the largest value seen. Every type here serialises (a histogram as its non-empty
//! buckets), so a trial report carries what was recorded.
//!
//! This module depends on serde only.

use serde::{Deserialize, Serialize};

/// A log-linear histogram of `u64` values (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "SparseHistogram", into = "SparseHistogram")]
pub struct LogHistogram {
    counts: Vec<u64>,
    total: u64,
    min: u64,
    max: u64,
    sum: u128,
}

/// The serialised form of a [`LogHistogram`]: its non-empty buckets as (index, count).
#[derive(Serialize, Deserialize)]
struct SparseHistogram {
    total: u64,
    min: u64,
    max: u64,
    /// The sum of the values as (high 64 bits, low 64 bits).
    sum: (u64, u64),
    buckets: Vec<(u32, u64)>,
}

impl From<LogHistogram> for SparseHistogram {
    fn from(h: LogHistogram) -> SparseHistogram {
        SparseHistogram {
            total: h.total,
            min: h.min,
            max: h.max,
            sum: ((h.sum >> 64) as u64, h.sum as u64),
            buckets: h
                .counts
                .iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(i, &c)| (i as u32, c))
                .collect(),
        }
    }
}

impl From<SparseHistogram> for LogHistogram {
    fn from(s: SparseHistogram) -> LogHistogram {
        let len = s
            .buckets
            .iter()
            .map(|&(i, _)| i as usize + 1)
            .max()
            .unwrap_or(0)
            .min(LogHistogram::MAX_BUCKETS);
        let mut counts = vec![0u64; len];
        for (i, c) in s.buckets {
            if let Some(x) = counts.get_mut(i as usize) {
                *x = x.saturating_add(c);
            }
        }
        LogHistogram {
            counts,
            total: s.total,
            min: s.min,
            max: s.max,
            sum: (u128::from(s.sum.0) << 64) | u128::from(s.sum.1),
        }
    }
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

/// One non-empty bucket of a [`LogHistogram`]: every value in `lo..=hi` falls in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    pub lo: u64,
    pub hi: u64,
    pub count: u64,
}

impl LogHistogram {
    /// The largest relative difference between a value and the midpoint of its bucket.
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

    /// The smallest value recorded (exact).
    pub fn min(&self) -> Option<u64> {
        (self.total > 0).then_some(self.min)
    }

    /// The largest value recorded (exact).
    pub fn max(&self) -> Option<u64> {
        (self.total > 0).then_some(self.max)
    }

    /// The sum of the values recorded (exact).
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// Bytes of counters held.
    pub fn memory_bytes(&self) -> usize {
        self.counts.capacity() * std::mem::size_of::<u64>()
    }

    /// The non-empty buckets, ascending.
    pub fn buckets(&self) -> impl Iterator<Item = Bucket> + '_ {
        self.counts.iter().enumerate().filter(|(_, &c)| c > 0).map(|(i, &count)| {
            let (lo, hi) = bucket_bounds(i);
            Bucket { lo, hi, count }
        })
    }
}

/// How a [`DelayRecorder`] keeps the finite delays.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DelayStore {
    /// Every value, in arrival order; above `limit` values they move into a histogram.
    Exact {
        values: Vec<u64>,
        limit: Option<usize>,
    },
    Histogram(LogHistogram),
}

/// One-way delays of frames (nanoseconds; `u64::MAX` = lost), kept exactly or in a
/// [`LogHistogram`], and the number of lost frames.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DelayRecorder {
    store: DelayStore,
    lost: u64,
}

impl Default for DelayRecorder {
    fn default() -> DelayRecorder {
        DelayRecorder::exact()
    }
}

impl DelayRecorder {
    /// Every value kept (memory grows with the number of frames).
    pub fn exact() -> DelayRecorder {
        DelayRecorder {
            store: DelayStore::Exact {
                values: Vec::new(),
                limit: None,
            },
            lost: 0,
        }
    }

    /// Bounded memory from the start.
    pub fn histogram() -> DelayRecorder {
        DelayRecorder {
            store: DelayStore::Histogram(LogHistogram::new()),
            lost: 0,
        }
    }

    /// Exact for up to `limit` values, then moves them into a histogram.
    pub fn exact_up_to(limit: usize) -> DelayRecorder {
        DelayRecorder {
            store: DelayStore::Exact {
                values: Vec::new(),
                limit: Some(limit),
            },
            lost: 0,
        }
    }

    /// An exact recorder of `samples` (`u64::MAX` = lost).
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
            DelayStore::Exact { values, limit } => {
                values.push(ns);
                if limit.is_some_and(|l| values.len() > l) {
                    let mut h = LogHistogram::new();
                    for &v in values.iter() {
                        h.record(v);
                    }
                    self.store = DelayStore::Histogram(h);
                }
            }
            DelayStore::Histogram(h) => h.record(ns),
        }
    }

    /// Record `n` lost frames (infinite delays).
    pub fn record_lost(&mut self, n: u64) {
        self.lost += n;
    }

    pub fn is_exact(&self) -> bool {
        matches!(self.store, DelayStore::Exact { .. })
    }

    /// The bound on the relative error of a value read back from the store: 0 when exact.
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

    /// Frames recorded as lost (infinite delay).
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// Frames recorded with a finite delay.
    pub fn finite_count(&self) -> u64 {
        match &self.store {
            DelayStore::Exact { values, .. } => values.len() as u64,
            DelayStore::Histogram(h) => h.count(),
        }
    }

    /// The finite delays as kept.
    pub fn store(&self) -> &DelayStore {
        &self.store
    }

    /// Take in what another recorder holds (another receive queue's frames): exact when both
    /// are exact (within this one's limit), else a histogram of both.
    pub fn merge(&mut self, o: DelayRecorder) {
        self.lost += o.lost;
        match o.store {
            DelayStore::Exact { values, .. } => {
                for v in values {
                    self.record(v);
                }
            }
            DelayStore::Histogram(oh) => {
                let mut h = match std::mem::replace(&mut self.store, DelayStore::Histogram(LogHistogram::new())) {
                    DelayStore::Histogram(h) => h,
                    DelayStore::Exact { values, .. } => {
                        let mut h = LogHistogram::new();
                        for v in values {
                            h.record(v);
                        }
                        h
                    }
                };
                h.merge(&oh);
                self.store = DelayStore::Histogram(h);
            }
        }
    }
}

/// How an [`IpdvRecorder`] keeps the differences.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IpdvStore {
    Exact(Vec<i64>),
    /// Magnitudes of the negative differences, and the non-negative differences.
    Histogram {
        neg: LogHistogram,
        pos: LogHistogram,
    },
}

/// Inter-packet delay variation samples (RFC 8219 section 7.3.2): IPDV(i) = D(i) - D(i-1) over
/// frames in the order fed. A pair with a lost frame has no IPDV (RFC 3393) and is skipped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IpdvRecorder {
    prev: Option<u64>,
    store: IpdvStore,
    min: i64,
    max: i64,
    pairs: u64,
}

impl Default for IpdvRecorder {
    fn default() -> IpdvRecorder {
        IpdvRecorder::exact()
    }
}

impl IpdvRecorder {
    pub fn exact() -> IpdvRecorder {
        IpdvRecorder {
            prev: None,
            store: IpdvStore::Exact(Vec::new()),
            min: 0,
            max: 0,
            pairs: 0,
        }
    }

    pub fn histogram() -> IpdvRecorder {
        IpdvRecorder {
            prev: None,
            store: IpdvStore::Histogram {
                neg: LogHistogram::new(),
                pos: LogHistogram::new(),
            },
            min: 0,
            max: 0,
            pairs: 0,
        }
    }

    /// Feed the delay of the next frame (`u64::MAX` = lost).
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
                IpdvStore::Exact(v) => v.push(d),
                IpdvStore::Histogram { neg, pos } => {
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

    /// Differences recorded.
    pub fn pairs(&self) -> u64 {
        self.pairs
    }

    /// The smallest and the largest difference (exact); `None` before the first pair.
    pub fn min_max(&self) -> Option<(i64, i64)> {
        (self.pairs > 0).then_some((self.min, self.max))
    }

    pub fn is_exact(&self) -> bool {
        matches!(self.store, IpdvStore::Exact(_))
    }

    /// The differences as kept.
    pub fn store(&self) -> &IpdvStore {
        &self.store
    }

    /// Take in the differences another recorder paired (another receive queue's frames): no
    /// pair spans the two.
    pub fn merge(&mut self, o: IpdvRecorder) {
        if o.pairs == 0 {
            return;
        }
        if self.pairs == 0 {
            (self.min, self.max) = (o.min, o.max);
        } else {
            (self.min, self.max) = (self.min.min(o.min), self.max.max(o.max));
        }
        self.pairs += o.pairs;
        let (neg, pos) = match (&mut self.store, o.store) {
            (IpdvStore::Exact(v), IpdvStore::Exact(w)) => {
                v.extend(w);
                return;
            }
            (IpdvStore::Histogram { neg, pos }, IpdvStore::Histogram { neg: n2, pos: p2 }) => {
                neg.merge(&n2);
                pos.merge(&p2);
                return;
            }
            (IpdvStore::Histogram { neg, pos }, IpdvStore::Exact(w)) => {
                for d in w {
                    if d < 0 {
                        neg.record(d.unsigned_abs());
                    } else {
                        pos.record(d as u64);
                    }
                }
                return;
            }
            (IpdvStore::Exact(v), IpdvStore::Histogram { neg, pos }) => {
                let (mut n, mut p) = (neg, pos);
                for &d in v.iter() {
                    if d < 0 {
                        n.record(d.unsigned_abs());
                    } else {
                        p.record(d as u64);
                    }
                }
                (n, p)
            }
        };
        self.store = IpdvStore::Histogram { neg, pos };
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
    fn records_serialise_and_read_back_equal() {
        let mut d = DelayRecorder::histogram();
        let mut i = IpdvRecorder::histogram();
        for v in [5u64, 3000, 1 << 40, 7, u64::MAX, 3000] {
            d.record(v);
            i.record(v);
        }
        d.record_lost(2);
        let e = DelayRecorder::from_samples(&[1, 2, u64::MAX]);
        for r in [&d, &e] {
            let back: DelayRecorder = serde_json::from_str(&serde_json::to_string(r).unwrap()).unwrap();
            assert_eq!(&back, r);
        }
        let back: IpdvRecorder = serde_json::from_str(&serde_json::to_string(&i).unwrap()).unwrap();
        assert_eq!(back, i);
        assert_eq!((d.count(), d.lost(), d.finite_count()), (8, 3, 5));
        assert_eq!(i.min_max(), Some((7 - (1 << 40), (1 << 40) - 3000)));
        assert_eq!(i.pairs(), 3);
    }

    #[test]
    fn merged_recorders_hold_both_queues_delays() {
        let mut a = DelayRecorder::exact();
        let mut b = DelayRecorder::exact();
        for v in [10, 20, u64::MAX] {
            a.record(v);
        }
        for v in [30, u64::MAX, u64::MAX] {
            b.record(v);
        }
        a.merge(b);
        assert_eq!((a.finite_count(), a.lost(), a.is_exact()), (3, 3, true));
        let mut h = DelayRecorder::histogram();
        h.record(5);
        a.merge(h);
        assert_eq!((a.finite_count(), a.lost(), a.is_exact()), (4, 3, false));

        let mut x = IpdvRecorder::exact();
        let mut y = IpdvRecorder::exact();
        for v in [100, 90, 130] {
            x.record(v); // -10, +40
        }
        for v in [50, 45] {
            y.record(v); // -5
        }
        x.merge(y);
        assert_eq!((x.pairs(), x.min_max()), (3, Some((-10, 40))));
        let mut z = IpdvRecorder::histogram();
        z.record(0);
        z.record(70); // +70
        x.merge(z);
        assert_eq!((x.pairs(), x.min_max(), x.is_exact()), (4, Some((-10, 70)), false));
    }
}
