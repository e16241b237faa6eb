//! What the procedures drive: a [`TrialRunner`] that performs one trial, a [`Progress`] sink that
//! shows where a procedure is, and a [`Sleeper`] for the idle gaps between trials.

use std::time::Duration;

use xlat_results::record::TrialRecord;

/// The procedures run their trials through `xlat_trial`'s [`TrialRunner`]: the engine's
/// `Tester` (wrapped by the binary for DUT commands and Ctrl-C) or `xlat_testkit::sim::SimDut`.
pub use xlat_trial::TrialRunner;

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
