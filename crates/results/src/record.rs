//! What a procedure keeps of each trial: a [`TrialRecord`] with the [`DirectionCounts`] of each
//! direction, and the one frame loss formula every command uses ([`loss_percent`]).

use serde::{Deserialize, Serialize};
pub use xlat_trial::{loss_percent, DirectionCounts};
use xlat_trial::{HookRun, LoadReport, PreliminaryReport, TrialReport, TrialSpec};

/// The preliminary phase sent its frames in time but the Responder learnt fewer tuples than the
/// state table holds (siitperf's `Failed to fill state table`): the DUT dropped phase 1 frames
/// at the preliminary rate, so phase 2 had no table to answer from. A failure at the preliminary
/// rate `R`, not at the trial's rate, and not the tester's limit.
pub fn state_table_not_filled(p: &PreliminaryReport) -> bool {
    p.sending_valid && !p.table_filled()
}

/// One trial of a procedure: what was asked, what happened, how it was judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// Position in the procedure's run, from 0 (retries count as trials of their own).
    pub index: usize,
    /// The stage of the procedure ("search", "confirm", "mlr-0", "frame-loss", "burst", ...).
    pub phase: String,
    /// 1 for the first attempt at this spec, 2.. for retries after invalid trials.
    pub attempt: u32,
    pub frame_size: usize,
    /// Frames per second per active direction.
    pub rate: u64,
    pub duration_s: f64,
    /// Frames each active direction was asked to send.
    pub frames: u64,
    pub valid: bool,
    /// `None` for an invalid trial: it is neither a pass nor a fail.
    pub pass: Option<bool>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invalid_reasons: Vec<String>,
    /// The rule behind each of `invalid_reasons` (docs/validity.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invalid_rules: Vec<xlat_trial::Rule>,
    /// This is the last attempt at a spec whose every attempt was invalid: the tester could not
    /// send at this rate, which bounds the procedure from above (it is not a failure of the DUT).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tester_bound: bool,
    /// This is the last attempt at a spec whose every attempt was invalid, the last one only
    /// because frames sent in a catch-up were lost (rule `lag_harm`): the procedure counts it
    /// as a failure (`pass` is `Some(false)`), possibly the tester's, never as a clean DUT loss.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub possibly_tester: bool,
    /// A trial that ended late (rule `end_of_sending`) without loss, in a throughput search:
    /// it passes at this rate, the one the tester really offered (its lowest direction's
    /// achieved rate), not at `rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed_at: Option<u64>,
    pub forward: Option<DirectionCounts>,
    pub reverse: Option<DirectionCounts>,
    /// The preliminary phase (phase 1) of a stateful trial (RFC 9693), as the engine reported
    /// it. When it failed, phase 2 did not run: `forward` and `reverse` are `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preliminary: Option<PreliminaryReport>,
    /// The DUT commands run for this trial: key, command, seconds, exit status, output.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dut_hooks: Vec<HookRun>,
    /// The DUT's and the tester's CPUs over the trial, when the runner read them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadReport>,
}

impl TrialRecord {
    pub fn from_report(index: usize, phase: &str, attempt: u32, spec: &TrialSpec, report: &TrialReport, pass: Option<bool>) -> TrialRecord {
        TrialRecord {
            index,
            phase: phase.to_string(),
            attempt,
            frame_size: spec.frame_size,
            rate: spec.rate,
            duration_s: spec.duration_s,
            frames: spec.frames(),
            valid: report.valid,
            pass,
            invalid_reasons: report.invalid_reasons.clone(),
            invalid_rules: report.invalid_rules.clone(),
            tester_bound: false,
            possibly_tester: false,
            passed_at: None,
            forward: report.forward.as_ref().map(|d| d.counts.clone()),
            reverse: report.reverse.as_ref().map(|d| d.counts.clone()),
            preliminary: report.preliminary.clone(),
            dut_hooks: report.dut_hooks.clone(),
            load: report.load.clone(),
        }
    }

    /// The active directions with their names.
    pub fn directions(&self) -> impl Iterator<Item = (&'static str, &DirectionCounts)> {
        [("forward", self.forward.as_ref()), ("reverse", self.reverse.as_ref())]
            .into_iter()
            .filter_map(|(n, d)| d.map(|d| (n, d)))
    }

    /// The largest loss ratio over the active directions.
    pub fn max_loss_ratio(&self) -> f64 {
        self.directions().map(|(_, d)| d.loss_ratio()).fold(0.0, f64::max)
    }
}
