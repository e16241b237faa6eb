//! Throughput (RFC 2544 section 26.1, RFC 8219 section 7.1): the search method the result records and the result (`xlat_procedures::throughput` runs the search).

use serde::{Deserialize, Serialize};

use crate::bound::Bound;
use crate::record::TrialRecord;

/// How the throughput is searched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SearchMethod {
    /// RFC 2544 binary search, every trial full length.
    Binary,
    /// Binary search with `short_s` trials, then a full-length confirmation.
    ShortThenConfirm { short_s: f64 },
    /// MLRsearch-style phases from `initial_s` trials to full-length ones.
    Accelerated { initial_s: f64, phases: u32 },
}

impl SearchMethod {
    pub fn name(&self) -> &'static str {
        match self {
            SearchMethod::Binary => "binary",
            SearchMethod::ShortThenConfirm { .. } => "short-then-confirm",
            SearchMethod::Accelerated { .. } => "accelerated",
        }
    }
}

/// The result of a throughput search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThroughputResult {
    pub frame_size: usize,
    pub method: SearchMethod,
    /// Frames/s per direction: the highest rate that passed a full-length trial, 0 if none did.
    pub throughput: u64,
    /// The final interval: `lower` passed (or is 0), `upper` failed or is `max_rate` untested.
    pub lower: u64,
    pub upper: u64,
    pub error: u64,
    pub loss_tolerance: f64,
    pub duration_s: f64,
    /// Sum of the durations of every trial, retries included, seconds.
    pub trial_seconds: f64,
    /// Test time including timeouts, seconds.
    pub elapsed_s: f64,
    /// The lowest rate at which the tester could not keep up (every attempt invalid); `None`
    /// when it always could. Frames/s per direction.
    #[serde(default)]
    pub tester_bound: Option<u64>,
    /// The final interval ends at `tester_bound` and the throughput is within `error` of it:
    /// the tester, not the DUT, limited the search; the DUT may be faster than measured.
    #[serde(default)]
    pub bounded_by_tester: bool,
    /// What bounded the throughput: the DUT, the tester, or `max_rate` (then it is at least
    /// this).
    #[serde(default)]
    pub bound: Bound,
    pub trials: Vec<TrialRecord>,
}
