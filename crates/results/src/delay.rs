//! Delay statistics: latency (RFC 8219 section 7.2), PDV (section 7.3.1) and IPDV (section
//! 7.3.2), computed from what the engine recorded ([`DelayRecorder`], [`IpdvRecorder`],
//! [`LogHistogram`], and the raw latency samples of a trial).
//!
//! Percentiles of delays use the **nearest-rank** definition: the p-th percentile of n values is
//! the value at rank ceil(p/100 x n) (1-based) in ascending order, rank 1 for p = 0. It is always
//! a value that occurred, which matters because a lost frame counts as an infinitely large delay:
//! no interpolation with infinity is needed. The median is the 50th percentile so defined (the
//! lower middle value for an even count).
//!
//! A percentile read from a [`LogHistogram`] is the midpoint of the bucket holding the exact
//! nearest-rank value (clamped to the exact minimum and maximum), so it differs from the exact
//! value by at most [`LogHistogram::RELATIVE_ERROR`] (1/2048) of that value.
//!
//! The statistics are methods of extension traits ([`HistogramStats`], [`DelayStats`],
//! [`IpdvStatistics`]) on the engine's recording types, and the result types [`LatencyStats`],
//! [`PdvStats`], [`IpdvStats`] and [`PdvDetail`].

use serde::{Deserialize, Serialize};

pub use xlat_trial::delay::{Bucket, DelayRecorder, DelayStore, IpdvRecorder, IpdvStore, LogHistogram};
use xlat_trial::PdvReport;

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

/// Reading ranks and percentiles from a [`LogHistogram`].
pub trait HistogramStats {
    /// The value at 1-based rank `k` in ascending order (within the stated relative error).
    fn value_at_rank(&self, k: u64) -> Option<u64>;
    /// The nearest-rank percentile (see the module documentation).
    fn percentile(&self, p: f64) -> Option<u64>;
    /// The mean of the values recorded.
    fn mean(&self) -> Option<f64>;
}

impl HistogramStats for LogHistogram {
    fn value_at_rank(&self, k: u64) -> Option<u64> {
        let (min, max) = (self.min()?, self.max()?);
        if k == 0 || k > self.count() {
            return None;
        }
        if k == 1 {
            return Some(min);
        }
        if k == self.count() {
            return Some(max);
        }
        let mut seen = 0u64;
        for b in self.buckets() {
            seen = seen.saturating_add(b.count);
            if seen >= k {
                return Some((b.lo + (b.hi - b.lo) / 2).clamp(min, max));
            }
        }
        Some(max)
    }

    fn percentile(&self, p: f64) -> Option<u64> {
        self.value_at_rank(nearest_rank(p, self.count())?)
    }

    fn mean(&self) -> Option<f64> {
        (self.count() > 0).then(|| self.sum() as f64 / self.count() as f64)
    }
}

/// Percentiles, minimum and CDF of the delays a [`DelayRecorder`] holds, a lost frame counting
/// as an infinite delay.
pub trait DelayStats {
    /// Nearest-rank percentiles over all frames.
    fn percentiles(&self, ps: &[f64]) -> Vec<Option<Delay>>;
    fn percentile(&self, p: f64) -> Option<Delay>;
    /// The smallest delay (exact in both modes); infinite if every frame was lost.
    fn min(&self) -> Option<Delay>;
    /// Points of the empirical CDF of the finite delays: (delay ns, fraction of all frames at
    /// or below it), at most about `max_points` of them. Lost frames keep the curve below 1.
    fn cdf_points(&self, max_points: usize) -> Vec<(u64, f64)>;
}

impl DelayStats for DelayRecorder {
    fn percentiles(&self, ps: &[f64]) -> Vec<Option<Delay>> {
        let n = self.count();
        let finite = self.finite_count();
        let sorted = match self.store() {
            DelayStore::Exact { values, .. } => {
                let mut v = values.clone();
                v.sort_unstable();
                Some(v)
            }
            DelayStore::Histogram(_) => None,
        };
        ps.iter()
            .map(|&p| {
                let k = nearest_rank(p, n)?;
                if k > finite {
                    return Some(Delay::INFINITE);
                }
                match (&sorted, self.store()) {
                    (Some(v), _) => v.get(k as usize - 1).copied().map(Delay),
                    (None, DelayStore::Histogram(h)) => h.value_at_rank(k).map(Delay),
                    (None, DelayStore::Exact { .. }) => None,
                }
            })
            .collect()
    }

    fn percentile(&self, p: f64) -> Option<Delay> {
        self.percentiles(&[p]).pop().flatten()
    }

    fn min(&self) -> Option<Delay> {
        if self.count() == 0 {
            return None;
        }
        let m = match self.store() {
            DelayStore::Exact { values, .. } => values.iter().copied().min(),
            DelayStore::Histogram(h) => h.min(),
        };
        Some(m.map_or(Delay::INFINITE, Delay))
    }

    fn cdf_points(&self, max_points: usize) -> Vec<(u64, f64)> {
        let n = self.count();
        if n == 0 {
            return Vec::new();
        }
        let raw: Vec<(u64, u64)> = match self.store() {
            DelayStore::Exact { values, .. } => {
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
            DelayStore::Histogram(h) => {
                let max = h.max().unwrap_or(0);
                h.buckets().map(|b| (b.hi.min(max), b.count)).collect()
            }
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
    /// The delays' distribution: (delay ns, fraction of the frames with at most that delay),
    /// at most [`PdvStats::CDF_POINTS`] points (lost frames keep it below 1). For the report's
    /// PDV plot; absent in documents written before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cdf: Vec<(u64, f64)>,
}

impl PdvStats {
    /// Points of [`PdvStats::cdf`].
    pub const CDF_POINTS: usize = 64;

    /// `None` when nothing was recorded.
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
            cdf: rec.cdf_points(PdvStats::CDF_POINTS),
        })
    }
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

impl IpdvStats {
    /// `None` before the first pair.
    pub fn of(rec: &IpdvRecorder) -> Option<IpdvStats> {
        let (min_ns, max_ns) = rec.min_max()?;
        Some(IpdvStats {
            pairs: rec.pairs(),
            min_ns,
            median_ns: rec.percentile(50.0)?,
            max_ns,
            relative_error: if rec.is_exact() { 0.0 } else { LogHistogram::RELATIVE_ERROR },
        })
    }
}

/// Percentiles and the summary of an [`IpdvRecorder`].
pub trait IpdvStatistics {
    /// The nearest-rank percentile of the IPDV values.
    fn percentile(&self, p: f64) -> Option<i64>;
    /// [`IpdvStats::of`].
    fn stats(&self) -> Option<IpdvStats>;
}

impl IpdvStatistics for IpdvRecorder {
    fn percentile(&self, p: f64) -> Option<i64> {
        let (min, max) = self.min_max()?;
        let k = nearest_rank(p, self.pairs())?;
        match self.store() {
            IpdvStore::Exact(v) => {
                let mut s = v.clone();
                s.sort_unstable();
                s.get(k as usize - 1).copied()
            }
            IpdvStore::Histogram { neg, pos } => {
                let v = if k <= neg.count() {
                    let m = neg.value_at_rank(neg.count() - k + 1)?;
                    -(m.min(i64::MAX as u64 + 1) as i128)
                } else {
                    i128::from(pos.value_at_rank(k - neg.count())?)
                };
                Some(v.clamp(i128::from(min), i128::from(max)) as i64)
            }
        }
    }

    fn stats(&self) -> Option<IpdvStats> {
        IpdvStats::of(self)
    }
}

/// The statistics of one direction's [`PdvReport`] (what the engine recorded), with the
/// engine's counts: the `report` object of a PDV run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PdvDetail {
    /// PDV = 99.9th percentile - minimum of the one-way delays (RFC 8219 section 7.3.1).
    pub pdv: Option<PdvStats>,
    /// IPDV = D(i) - D(i-1) over received frames in arrival order (RFC 8219 section 7.3.2).
    pub ipdv: Option<IpdvStats>,
    /// More than 0.1 % of the frames were lost: like PDV, IPDV is infinite.
    #[serde(default)]
    pub ipdv_infinite: bool,
    /// Frames whose delay was measured.
    pub timed: u64,
    /// Frames later than the frame timeout: counted as lost.
    pub late: u64,
    /// The bound on the relative error of the percentiles (0 in exact mode).
    pub relative_error: f64,
    pub exact: bool,
    /// See [`PdvReport`].
    #[serde(default)]
    pub burst_stamp_skew_mean_ns: u64,
    #[serde(default)]
    pub burst_stamp_skew_max_ns: u64,
    /// Points (delay ns, cumulative fraction) of the delay distribution, for plots.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cdf: Vec<(u64, f64)>,
}

/// CDF points kept per direction and trial.
pub const CDF_POINTS: usize = 200;

impl PdvDetail {
    pub fn of(r: &PdvReport) -> PdvDetail {
        PdvDetail {
            pdv: PdvStats::of(&r.delays),
            ipdv: IpdvStats::of(&r.ipdv),
            ipdv_infinite: r.ipdv_infinite,
            timed: r.timed,
            late: r.late,
            relative_error: r.delays.relative_error(),
            exact: r.delays.is_exact(),
            burst_stamp_skew_mean_ns: r.burst_stamp_skew_mean_ns,
            burst_stamp_skew_max_ns: r.burst_stamp_skew_max_ns,
            cdf: r.delays.cdf_points(CDF_POINTS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn pdv_of_a_record_with_more_than_a_thousandth_lost_is_infinite() {
        let mut r = PdvReport {
            delays: DelayRecorder::from_samples(&[10_000; 1000]),
            ..Default::default()
        };
        let d = PdvDetail::of(&r);
        assert_eq!(d.pdv.as_ref().unwrap().pdv, Delay(0));
        assert!(d.exact && d.relative_error == 0.0 && !d.cdf.is_empty());
        r.delays.record_lost(2);
        assert!(PdvDetail::of(&r).pdv.unwrap().pdv.is_infinite());
    }
}
