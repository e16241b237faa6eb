//! Repetitions (`--repeat N`): every run and the summary statistics of its metrics.
//!
//! Summary percentiles use **linear interpolation between closest ranks** (Hyndman and Fan type
//! 7, the default of R, NumPy and spreadsheet PERCENTILE.INC): for n sorted values x[0..n-1] the
//! p-th percentile is x[h'] + (h - h')(x[h'+1] - x[h']) with h = (n - 1) p / 100, h' = floor(h).
//! So the median of an even count is the mean of the two middle values, as in siitperf's papers.
//! Dispersion is (max - min) / median x 100 %, as in those papers (Lencse, Computer
//! Communications 2024, equation 1).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::result::BenchResult;

/// Linear-interpolation percentile of an ascending slice (NaN-free; +infinity sorts last and an
/// interpolation towards it gives +infinity).
pub fn percentile_linear(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=100.0).contains(&p) {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * p / 100.0;
    let lo = h.floor() as usize;
    let frac = h - lo as f64;
    let a = sorted[lo];
    Some(match sorted.get(lo + 1) {
        Some(&b) if frac > 0.0 && a != b => {
            if a.is_finite() && b.is_finite() {
                a + frac * (b - a)
            } else {
                b
            }
        }
        _ => a,
    })
}

/// The median of `values` by the rule of [`percentile_linear`]'s 50th percentile: the middle
/// value, or for an even count `mean` of the two middle ones; `None` when there is none. One
/// rule for every type a procedure takes the median of (f64 figures, delays, nanoseconds).
pub fn median_of<T: Ord + Copy>(values: &[T], mean: impl Fn(T, T) -> T) -> Option<T> {
    let mut v = values.to_vec();
    v.sort_unstable();
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some(mean(v[n / 2 - 1], v[n / 2])),
    }
}

/// The summary of one metric over the repetitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Values summarised (NaN values are left out).
    pub n: usize,
    /// How many of them are infinite (a worst-case latency with lost tags): they sort last, so
    /// the median, maximum or 99th percentile can be infinite (`null` in JSON).
    pub infinite: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// 1st percentile.
    pub p1: f64,
    /// 99th percentile.
    pub p99: f64,
    /// (max - min) / median x 100 %; `None` when the median is 0 or a value is infinite.
    pub dispersion_percent: Option<f64>,
}

impl Summary {
    /// `None` when there is no value (after leaving out NaN).
    pub fn of(values: &[f64]) -> Option<Summary> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let median = percentile_linear(&v, 50.0)?;
        let (min, max) = (v[0], v[v.len() - 1]);
        let dispersion = (max - min) / median * 100.0;
        Some(Summary {
            n: v.len(),
            infinite: v.iter().filter(|x| x.is_infinite()).count(),
            median,
            min,
            max,
            p1: percentile_linear(&v, 1.0)?,
            p99: percentile_linear(&v, 99.0)?,
            dispersion_percent: (median != 0.0 && dispersion.is_finite()).then_some(dispersion),
        })
    }
}

/// A procedure run N times: every run in full, and the summary of each metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repeated<T> {
    pub runs: Vec<T>,
    /// Metric name (see [`BenchResult::metrics`]) -> summary over the runs.
    pub summaries: BTreeMap<String, Summary>,
}

impl<T: BenchResult> Repeated<T> {
    pub fn from_runs(runs: Vec<T>) -> Repeated<T> {
        let mut values: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for r in &runs {
            for (name, v) in r.metrics() {
                values.entry(name).or_default().push(v);
            }
        }
        let summaries = values.into_iter().filter_map(|(k, v)| Summary::of(&v).map(|s| (k, s))).collect();
        Repeated { runs, summaries }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median_of(&[3, 1, 2], |a, b| (a + b) / 2), Some(2));
        assert_eq!(median_of(&[4, 1, 3, 2], |a, b| (a + b) / 2), Some(2));
        assert_eq!(median_of::<i64>(&[], |a, _| a), None);
        // The same rule as the 50th percentile of the summaries.
        assert_eq!(percentile_linear(&[1.0, 2.0, 3.0, 4.0], 50.0), Some(2.5));
    }

    #[test]
    fn linear_percentiles() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile_linear(&v, 50.0), Some(2.5));
        assert_eq!(percentile_linear(&v, 0.0), Some(1.0));
        assert_eq!(percentile_linear(&v, 100.0), Some(4.0));
        assert!((percentile_linear(&v, 99.0).unwrap() - 3.97).abs() < 1e-12);
        assert_eq!(percentile_linear(&[], 50.0), None);
        assert_eq!(percentile_linear(&[7.0], 1.0), Some(7.0));
    }
}
