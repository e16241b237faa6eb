//! What the procedures drive: a [`TrialRunner`] that performs one trial, a [`Progress`] sink that
//! shows where a procedure is, and a [`Sleeper`] for the idle gaps between trials.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use xlat_engine::{TrialReport, TrialSpec};

use crate::error::BenchError;
use crate::trial::TrialRecord;

/// Performs one trial. The engine implements it over real ports; [`crate::sim::SimDut`] implements
/// it for tests. The procedures never touch hardware themselves.
pub trait TrialRunner {
    /// Run one trial as `spec` says and report what was sent and received.
    fn run(&mut self, spec: &TrialSpec) -> Result<TrialReport, BenchError>;

    /// Run the two-rate trial of the system recovery test (RFC 2544 section 26.5): overload, then
    /// a reduced rate, in one uninterrupted stream per direction, and report per direction which
    /// frame was the last one lost. Runners that cannot do it return [`BenchError::Unsupported`].
    fn run_recovery(&mut self, spec: &RecoverySpec) -> Result<RecoveryReport, BenchError> {
        let _ = spec;
        Err(BenchError::Unsupported(
            "the system recovery trial (per-frame loss positions)".into(),
        ))
    }
}

impl<T: TrialRunner + ?Sized> TrialRunner for &mut T {
    fn run(&mut self, spec: &TrialSpec) -> Result<TrialReport, BenchError> {
        (**self).run(spec)
    }
    fn run_recovery(&mut self, spec: &RecoverySpec) -> Result<RecoveryReport, BenchError> {
        (**self).run_recovery(spec)
    }
}

/// The system recovery trial: `overload_rate` for `overload_s`, then without a gap
/// `recovery_rate` for `recovery_s`, one sequence-numbered stream per active direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecoverySpec {
    /// Frame size, timeout, burst of the trial; its `rate` and `duration_s` are not used.
    pub trial: TrialSpec,
    pub overload_rate: u64,
    pub overload_s: f64,
    pub recovery_rate: u64,
    pub recovery_s: f64,
}

impl RecoverySpec {
    /// Frames of the overload part (per direction).
    pub fn overload_frames(&self) -> u64 {
        (self.overload_rate as f64 * self.overload_s).floor() as u64
    }

    /// Frames of the reduced-rate part (per direction).
    pub fn recovery_frames(&self) -> u64 {
        (self.recovery_rate as f64 * self.recovery_s).floor() as u64
    }

    /// The scheduled send time of frame `seq`, seconds from the start of sending. The rate
    /// reduction happens at `overload_s`.
    pub fn send_time_s(&self, seq: u64) -> f64 {
        let n1 = self.overload_frames();
        if seq < n1 || self.recovery_rate == 0 {
            if self.overload_rate == 0 {
                return 0.0;
            }
            seq as f64 / self.overload_rate as f64
        } else {
            self.overload_s + (seq - n1) as f64 / self.recovery_rate as f64
        }
    }
}

/// One direction of a system recovery trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecoveryDirection {
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    /// The highest sequence number that was sent and never received; `None`: nothing was lost.
    /// (Sequence numbers count from 0 at the first frame of the overload part.)
    pub last_lost_seq: Option<u64>,
    /// Frames the tester itself failed to send after its backend accepted them.
    #[serde(default)]
    pub tester_tx_dropped: u64,
    /// Frames the tester's receiving port dropped before its receiver saw them.
    #[serde(default)]
    pub tester_rx_dropped: u64,
}

/// What a system recovery trial measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecoveryReport {
    /// False when the sender could not keep either schedule (see `TrialReport::valid`).
    pub valid: bool,
    pub invalid_reasons: Vec<String>,
    pub forward: Option<RecoveryDirection>,
    pub reverse: Option<RecoveryDirection>,
}

/// Where a procedure is, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProgressEvent<'a> {
    /// "throughput", "frame-loss", "latency", "back-to-back", "recovery".
    pub procedure: &'a str,
    /// A finer name of the stage ("search", "confirm", "mlr-1", "repetition 3", ...).
    pub phase: &'a str,
    /// Steps (trials started) so far, counting from 1.
    pub step: usize,
    /// The rate of the trial about to run (frames/s), or the burst length for back-to-back.
    pub rate: u64,
    /// The current search bounds (equal to `rate` where a procedure has none).
    pub low: u64,
    pub high: u64,
    /// Test time used so far: trial durations plus timeouts plus idle gaps, seconds.
    pub elapsed_s: f64,
    /// An estimate of the test time still needed, seconds; `None` when unknown.
    pub remaining_s: Option<f64>,
}

/// Receives progress. Procedures call `step` before each trial and `trial` after it.
pub trait Progress {
    fn step(&mut self, event: &ProgressEvent<'_>);
    /// Every trial as recorded, including invalid attempts that will be retried.
    fn trial(&mut self, procedure: &str, record: &TrialRecord) {
        let _ = (procedure, record);
    }
}

/// A progress sink that ignores everything (for tests and scripts).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn step(&mut self, _event: &ProgressEvent<'_>) {}
}

/// Idle waiting between trials, abstracted so that tests need not sleep.
pub trait Sleeper {
    fn sleep(&mut self, duration: Duration);
}

/// Sleeps for real (`std::thread::sleep`).
#[derive(Debug, Clone, Copy, Default)]
pub struct RealSleeper;

impl Sleeper for RealSleeper {
    fn sleep(&mut self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// Does not sleep; adds up how long it was asked to.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSleep {
    pub slept: Duration,
    pub calls: usize,
}

impl Sleeper for NoSleep {
    fn sleep(&mut self, duration: Duration) {
        self.slept += duration;
        self.calls += 1;
    }
}
