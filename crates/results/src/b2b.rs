//! Back-to-back frames (RFC 2544 section 26.4, RFC 9004): the result of the search (`xlat_procedures::b2b` runs it).

use serde::{Deserialize, Serialize};

use crate::record::TrialRecord;

/// One repetition's longest lossless burst.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackToBackRun {
    pub repetition: usize,
    pub frames: u64,
    /// The longest burst tried passed: the buffer is at least this large.
    pub at_max: bool,
    /// The shortest burst of this repetition that the tester could not send (every attempt
    /// invalid): the buffer may be larger than found when `frames` is within `error` of it.
    #[serde(default)]
    pub tester_bound: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackToBackResult {
    pub frame_size: usize,
    pub line_rate: u64,
    pub max_burst: u64,
    pub error: u64,
    pub runs: Vec<BackToBackRun>,
    pub average_frames: f64,
    pub min_frames: u64,
    pub max_frames: u64,
    pub std_dev_frames: f64,
    /// Average frames / line rate, seconds.
    pub implied_buffer_time_s: f64,
    pub measured_throughput: Option<u64>,
    /// The shortest burst over the repetitions that the tester could not send.
    #[serde(default)]
    pub tester_bound: Option<u64>,
    /// RFC 9004 corrected DUT buffer time, seconds (needs the throughput, and throughput < line rate).
    pub corrected_buffer_time_s: Option<f64>,
    pub trial_seconds: f64,
    pub idle_seconds: f64,
    pub elapsed_s: f64,
    pub trials: Vec<TrialRecord>,
}
