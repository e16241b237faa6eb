//! What the procedures drive: a [`TrialRunner`] that performs one trial, a [`Progress`] sink that
//! shows where a procedure is, and a [`Sleeper`] for the idle gaps between trials.

use std::time::Duration;

use xlat_trial::{TrialReport, TrialSpec};

use crate::error::BenchError;
use crate::record::TrialRecord;

/// Performs one trial. The binary implements it over the engine's `Tester` and real ports
/// (`CliRunner` in `crates/cli/src/procedures.rs`, over `BenchRunner`'s `Runner` in
/// `crates/cli/src/runner.rs`); [`crate::sim::SimDut`] implements it for tests. The procedures
/// never touch hardware themselves.
pub trait TrialRunner {
    /// Run one trial as `spec` says and report what was sent and received (with a rate change,
    /// the sequence number of the last lost frame: system recovery needs it).
    fn run(&mut self, spec: &TrialSpec) -> Result<TrialReport, BenchError>;

    /// Choose the active directions of the next trials (the self-test searches forward only,
    /// reverse only and both ways on the same open ports). Runners that cannot say so.
    fn set_directions(&mut self, forward: bool, reverse: bool) -> Result<(), BenchError> {
        let _ = (forward, reverse);
        Err(BenchError::Unsupported("choosing the active directions".into()))
    }

    /// Run the preliminary phase of `spec` (stateful) alone, no phase 2 (RFC 9693's connection
    /// establishment rate), followed by a validation phase at `validation` frames/s when given
    /// (the Responder sends once to every learnt tuple; its direction's report counts what
    /// came back). Runners that cannot say so.
    fn run_preliminary(&mut self, spec: &TrialSpec, validation: Option<u64>) -> Result<TrialReport, BenchError> {
        let _ = (spec, validation);
        Err(BenchError::Unsupported("running phase 1 alone".into()))
    }

    /// Run the DUT command of configuration key `key` (e.g. `dut.delete_all`) and return how
    /// many seconds it took; an error if it is not configured, fails or overruns its deadline.
    fn time_dut_command(&mut self, key: &str) -> Result<f64, BenchError> {
        Err(BenchError::Unsupported(format!("running the DUT command {key}")))
    }
}

impl<T: TrialRunner + ?Sized> TrialRunner for &mut T {
    fn run(&mut self, spec: &TrialSpec) -> Result<TrialReport, BenchError> {
        (**self).run(spec)
    }

    fn set_directions(&mut self, forward: bool, reverse: bool) -> Result<(), BenchError> {
        (**self).set_directions(forward, reverse)
    }

    fn run_preliminary(&mut self, spec: &TrialSpec, validation: Option<u64>) -> Result<TrialReport, BenchError> {
        (**self).run_preliminary(spec, validation)
    }

    fn time_dut_command(&mut self, key: &str) -> Result<f64, BenchError> {
        (**self).time_dut_command(key)
    }
}

/// Where a procedure is, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProgressEvent<'a> {
    /// "throughput", "frame-loss", "latency", "pdv", "back-to-back", "recovery".
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
