//! What a procedure keeps of each trial: a [`TrialRecord`] with the [`DirectionCounts`] of each
//! direction, and the one frame loss formula every command uses ([`loss_percent`]).

use serde::{Deserialize, Serialize};
use xlat_trial::{DirectionReport, HookRun, LoadReport, PreliminaryReport, TrialReport, TrialSpec};

/// Frame loss in percent, RFC 2544 section 26.3: (input count - output count) x 100 / input
/// count. `None` when nothing was sent. Every loss percentage xlatperf prints or writes is this.
pub fn loss_percent(sent: u64, received: u64) -> Option<f64> {
    (sent > 0).then(|| sent.saturating_sub(received) as f64 * 100.0 / sent as f64)
}

/// The preliminary phase sent its frames in time but the Responder learnt fewer tuples than the
/// state table holds (siitperf's `Failed to fill state table`): the DUT dropped phase 1 frames
/// at the preliminary rate, so phase 2 had no table to answer from. A failure at the preliminary
/// rate `R`, not at the trial's rate, and not the tester's limit.
pub fn state_table_not_filled(p: &PreliminaryReport) -> bool {
    p.sending_valid && !p.table_filled()
}

/// The counts of one direction of a trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirectionCounts {
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub duplicates: u64,
    pub reordered: u64,
    pub unexpected: u64,
    /// Of `unexpected`: test frames with a trial tag this tester never used (another tester
    /// sending into the same ports); a trial with any is invalid.
    #[serde(default)]
    pub foreign: u64,
    /// Test frames whose checksums or lengths did not verify: not counted as received.
    #[serde(default)]
    pub corrupted: u64,
    pub achieved_rate: f64,
    /// How far behind its schedule the sender fell: the most, nanoseconds.
    pub max_lag_ns: u64,
    /// ... the 99.9th percentile of the frames, nanoseconds.
    #[serde(default)]
    pub lag_p999_ns: u64,
    /// ... the times it fell more than 100 us behind (stalls).
    #[serde(default)]
    pub stalls: u64,
    /// What stamped this direction's frames for latency and delays.
    #[serde(default)]
    pub stamps: xlat_trial::StampSource,
    /// Frames to be timed that got no stamp of the port's (kernel stamps; any makes the trial
    /// invalid).
    #[serde(default)]
    pub stamps_missing: u64,
    /// Frames the tester itself failed to send after its backend accepted them.
    #[serde(default)]
    pub tester_tx_dropped: u64,
    /// Frames the tester's receiving port dropped before its receiver saw them.
    #[serde(default)]
    pub tester_rx_dropped: u64,
}

impl DirectionCounts {
    pub fn from_report(d: &DirectionReport) -> DirectionCounts {
        DirectionCounts {
            sent: d.sent,
            received: d.received,
            lost: d.lost,
            duplicates: d.duplicates,
            reordered: d.reordered,
            unexpected: d.unexpected,
            foreign: d.foreign,
            corrupted: d.corrupted,
            achieved_rate: d.achieved_rate,
            max_lag_ns: d.max_lag_ns,
            lag_p999_ns: d.lag_p999_ns,
            stalls: d.stalls,
            stamps: d.stamps,
            stamps_missing: d.stamps_missing,
            tester_tx_dropped: d.tester_tx_dropped,
            tester_rx_dropped: d.tester_rx_dropped,
        }
    }

    /// Lost frames as a fraction of sent frames (0 when nothing was sent).
    pub fn loss_ratio(&self) -> f64 {
        if self.sent == 0 {
            0.0
        } else {
            self.lost as f64 / self.sent as f64
        }
    }

    /// RFC 2544 section 26.3: (input count - output count) * 100 / input count. `None` when
    /// nothing was sent.
    pub fn loss_percent(&self) -> Option<f64> {
        loss_percent(self.sent, self.received)
    }
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
    /// This is the last attempt at a spec whose every attempt was invalid: the tester could not
    /// send at this rate, which bounds the procedure from above (it is not a failure of the DUT).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tester_bound: bool,
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
            tester_bound: false,
            forward: report.forward.as_ref().map(DirectionCounts::from_report),
            reverse: report.reverse.as_ref().map(DirectionCounts::from_report),
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
