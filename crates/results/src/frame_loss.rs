//! Frame loss rate (RFC 2544 section 26.3): the result of the sweep (`xlat_procedures::frame_loss` runs it).

use serde::{Deserialize, Serialize};

use crate::record::TrialRecord;

/// One measured rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameLossPoint {
    pub rate: u64,
    /// rate / max_rate x 100.
    pub percent_of_max: f64,
    pub forward_loss_percent: Option<f64>,
    pub reverse_loss_percent: Option<f64>,
    /// Index of the valid trial in `trials` (of the last invalid one for a tester-bound step).
    pub trial: usize,
    /// Every attempt at this rate was invalid: the tester could not send it. No loss is given.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tester_bound: bool,
}

impl FrameLossPoint {
    /// The largest loss over the directions (0 for a tester-bound step, which has none).
    pub fn max_loss_percent(&self) -> f64 {
        self.forward_loss_percent
            .into_iter()
            .chain(self.reverse_loss_percent)
            .fold(0.0, f64::max)
    }
}

/// The frame loss rate curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameLossResult {
    pub frame_size: usize,
    pub max_rate: u64,
    pub points: Vec<FrameLossPoint>,
    /// True when the series ended by two consecutive zero-loss trials.
    pub two_zero_loss: bool,
    /// The lowest rate at which the tester could not send (a tester-bound step).
    #[serde(default)]
    pub tester_bound: Option<u64>,
    pub trial_seconds: f64,
    pub elapsed_s: f64,
    pub trials: Vec<TrialRecord>,
}
