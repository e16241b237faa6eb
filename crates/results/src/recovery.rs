//! System recovery (RFC 2544 section 26.5): the result (`xlat_procedures::recovery` runs the procedure).

use serde::{Deserialize, Serialize};

use crate::record::TrialRecord;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecoveryDirectionResult {
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    /// Scheduled send time of the last lost frame, seconds from the start.
    pub last_lost_s: Option<f64>,
    /// last_lost_s - overload_s, at least 0; `None` when nothing was lost.
    pub recovery_time_s: Option<f64>,
    /// The very last frame of the stream was lost: the DUT did not recover within `recovery_s`.
    pub lost_until_end: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecoveryResult {
    pub frame_size: usize,
    pub throughput: u64,
    pub overload_rate: u64,
    pub reduced_rate: u64,
    pub overload_s: f64,
    pub recovery_s: f64,
    pub forward: Option<RecoveryDirectionResult>,
    pub reverse: Option<RecoveryDirectionResult>,
    /// The largest recovery time over the directions; `None` when no frame was lost at all (the
    /// DUT was not overloaded, so the test says nothing).
    pub recovery_time_s: Option<f64>,
    pub overloaded: bool,
    pub recovered: bool,
    pub trial_seconds: f64,
    pub elapsed_s: f64,
    pub trials: Vec<TrialRecord>,
}
