//! Latency (RFC 8219 section 7.2): the result of the repetitions (`xlat_procedures::latency` runs them).

use serde::{Deserialize, Serialize};

use crate::delay::{Delay, LatencyStats};
use crate::record::TrialRecord;

/// One repetition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyRun {
    pub repetition: usize,
    /// Index of the valid trial in `trials`.
    pub trial: usize,
    pub forward: Option<LatencyStats>,
    pub reverse: Option<LatencyStats>,
    /// Every tag's latency, when asked for (`--keep-samples`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<LatencySamples>,
}

/// The latency of every tag of one trial, per direction, in tag order, nanoseconds (`None`: the
/// tag was lost). Tag `i` is frame `first + i * step` of its direction, with `first` the frames
/// of the delay (rate x delay, rounded down) and `step` the frames after it divided by the tags
/// (at least 1): with no delay and as many tags as frames, tag `i` is frame `i`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySamples {
    pub forward: Option<Vec<Option<u64>>>,
    pub reverse: Option<Vec<Option<u64>>>,
}

/// Medians over the repetitions of one direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub typical: Delay,
    pub worst_case: Delay,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyResult {
    pub frame_size: usize,
    pub rate: u64,
    pub tags: u64,
    pub delay_s: f64,
    pub duration_s: f64,
    pub runs: Vec<LatencyRun>,
    pub forward: Option<LatencySummary>,
    pub reverse: Option<LatencySummary>,
    pub trial_seconds: f64,
    pub elapsed_s: f64,
    pub trials: Vec<TrialRecord>,
}
