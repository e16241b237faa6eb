//! Reset time (RFC 6201): the result (`xlat_procedures::reset` runs the procedure).

use serde::{Deserialize, Serialize};

use crate::record::TrialRecord;
use xlat_trial::{DirectionReport, HookRun};

/// The reset time of one direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResetDirection {
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    /// Frame-loss method: lost frames / offered rate, seconds.
    pub frame_loss_s: f64,
    /// Timestamp method: the last frame before the interruption to the first after, seconds.
    pub timestamp_s: f64,
    /// When that gap ended, seconds after the trial's sending began.
    pub gap_end_s: f64,
    /// The DUT forwarded again before the trial ended (its last frame was not lost).
    pub recovered: bool,
}

impl ResetDirection {
    pub fn of(d: &DirectionReport, rate: u64) -> ResetDirection {
        ResetDirection {
            sent: d.counts.sent,
            received: d.counts.received,
            lost: d.counts.lost,
            frame_loss_s: d.counts.lost as f64 / rate as f64,
            timestamp_s: d.max_rx_gap_ns as f64 / 1e9,
            gap_end_s: d.max_rx_gap_end_ns as f64 / 1e9,
            recovered: d.counts.sent > 0 && d.last_lost_seq.is_none_or(|s| s + 1 < d.counts.sent),
        }
    }
}

/// The result of a reset test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResetResult {
    pub frame_size: usize,
    pub rate: u64,
    pub duration_s: f64,
    pub at_s: f64,
    /// The reset command's run (its key, command, seconds, exit status).
    pub reset: HookRun,
    /// False when the reset time cannot be trusted; `invalid_reason` says why.
    pub valid: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid_reason: Option<String>,
    pub forward: Option<ResetDirection>,
    pub reverse: Option<ResetDirection>,
    pub trial_seconds: f64,
    pub elapsed_s: f64,
    pub trials: Vec<TrialRecord>,
}

impl ResetResult {
    pub fn directions(&self) -> impl Iterator<Item = (&'static str, &ResetDirection)> {
        [("forward", &self.forward), ("reverse", &self.reverse)]
            .into_iter()
            .filter_map(|(n, d)| d.as_ref().map(|d| (n, d)))
    }
}
