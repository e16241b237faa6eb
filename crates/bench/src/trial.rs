//! One trial as a procedure records it, how a trial is judged, and the retry rule for invalid
//! trials that every procedure shares.

use serde::{Deserialize, Serialize};
use xlat_engine::{DirectionReport, TrialReport, TrialSpec};

use crate::error::{config, BenchError};
use crate::runner::{Progress, ProgressEvent, RecoveryReport, RecoverySpec, TrialRunner};

/// The counts of one direction of a trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirectionCounts {
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub duplicates: u64,
    pub reordered: u64,
    pub unexpected: u64,
    pub achieved_rate: f64,
    pub max_lag_ns: u64,
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
            achieved_rate: d.achieved_rate,
            max_lag_ns: d.max_lag_ns,
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
        (self.sent > 0).then(|| self.sent.saturating_sub(self.received) as f64 * 100.0 / self.sent as f64)
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

/// Judge a trial: `None` if it is invalid (neither pass nor fail), otherwise whether every
/// active direction lost at most `loss_tolerance` x sent frames (RFC 2544: tolerance 0).
pub fn judge(report: &TrialReport, loss_tolerance: f64) -> Result<Option<bool>, BenchError> {
    if report.directions().next().is_none() {
        return Err(BenchError::Report("the trial report has no active direction".into()));
    }
    if !report.valid {
        return Ok(None);
    }
    Ok(Some(report.directions().all(|(_, d)| {
        let lost = d.lost.max(d.sent.saturating_sub(d.received));
        lost as f64 <= loss_tolerance * d.sent as f64
    })))
}

/// A trial spec run with the invalid-trial retry rule.
pub(crate) struct Outcome {
    /// The last attempt's report.
    pub report: TrialReport,
    /// `Some(pass)` for a valid trial; `None` when every attempt was invalid (the tester could
    /// not send at the rate): neither a pass nor a fail.
    pub pass: Option<bool>,
}

/// A rate at which every attempt of a trial was invalid.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Invalid {
    pub rate: u64,
    pub attempts: u32,
    pub reasons: String,
}

impl Invalid {
    /// The error of a procedure for which even this, its lowest rate, was invalid.
    pub fn error(&self) -> BenchError {
        BenchError::TesterLimit {
            rate: self.rate,
            attempts: self.attempts,
            reasons: self.reasons.clone(),
        }
    }
}

/// The running state every procedure shares: runs trials with the invalid-trial retry rule,
/// records them, keeps the test time and feeds the progress sink.
pub(crate) struct Session<'a> {
    runner: &'a mut dyn TrialRunner,
    progress: &'a mut dyn Progress,
    procedure: &'static str,
    retries: u32,
    pub trials: Vec<TrialRecord>,
    /// Trial durations plus timeouts plus idle gaps, seconds.
    pub elapsed_s: f64,
    /// Trial durations only, seconds.
    pub trial_seconds: f64,
    /// The lowest rate whose trial stayed invalid after every retry.
    pub lowest_invalid: Option<Invalid>,
    step: usize,
}

impl<'a> Session<'a> {
    pub fn new(runner: &'a mut dyn TrialRunner, progress: &'a mut dyn Progress, procedure: &'static str, retries: u32) -> Session<'a> {
        Session {
            runner,
            progress,
            procedure,
            retries,
            trials: Vec::new(),
            elapsed_s: 0.0,
            trial_seconds: 0.0,
            lowest_invalid: None,
            step: 0,
        }
    }

    /// Tell the progress sink what comes next.
    pub fn announce(&mut self, phase: &str, rate: u64, low: u64, high: u64, remaining_s: Option<f64>) {
        self.step += 1;
        let event = ProgressEvent {
            procedure: self.procedure,
            phase,
            step: self.step,
            rate,
            low,
            high,
            elapsed_s: self.elapsed_s,
            remaining_s,
        };
        self.progress.step(&event);
    }

    /// Record a trial that the procedure ran by other means (system recovery).
    pub fn record(&mut self, mut record: TrialRecord, duration_s: f64, timeout_ms: u64) {
        record.index = self.trials.len();
        self.trial_seconds += duration_s;
        self.elapsed_s += duration_s + timeout_ms as f64 / 1000.0;
        self.progress.trial(self.procedure, &record);
        self.trials.push(record);
    }

    /// Remember `rate` as tester-bound (every attempt invalid) if it is the lowest so far. The
    /// caller marks the trial's last record `tester_bound`.
    pub fn note_tester_bound(&mut self, rate: u64, attempts: u32, reasons: &[String]) {
        let reasons = if reasons.is_empty() {
            "the trial reported itself invalid".to_string()
        } else {
            reasons.join("; ")
        };
        if self.lowest_invalid.as_ref().is_none_or(|i| rate < i.rate) {
            self.lowest_invalid = Some(Invalid { rate, attempts, reasons });
        }
    }

    /// The error for an interruption: every trial so far.
    pub fn interrupted(&self) -> BenchError {
        BenchError::Interrupted {
            trials: self.trials.clone(),
        }
    }

    /// A runner's error, with the trials so far if it is an interruption.
    fn runner_error(&self, e: BenchError) -> BenchError {
        match e {
            BenchError::Interrupted { .. } => self.interrupted(),
            e => e,
        }
    }

    /// The runner's system recovery trial (no retry, no recording: the caller does both).
    pub fn runner_recovery(&mut self, spec: &RecoverySpec) -> Result<RecoveryReport, BenchError> {
        self.runner.run_recovery(spec).map_err(|e| self.runner_error(e))
    }

    pub fn add_idle(&mut self, seconds: f64) {
        self.elapsed_s += seconds;
    }

    pub fn retries(&self) -> u32 {
        self.retries
    }

    /// Run `spec`; an invalid trial is retried up to `retries` times. If every attempt is
    /// invalid the outcome has no verdict (`pass: None`), the last record is marked
    /// `tester_bound` and the rate is remembered in `lowest_invalid`: what that means is the
    /// procedure's decision (an upper bound of a search, or an error).
    pub fn run(&mut self, spec: &TrialSpec, phase: &str, loss_tolerance: f64) -> Result<Outcome, BenchError> {
        check_spec(spec)?;
        let attempts = self.retries.saturating_add(1);
        let mut attempt = 1;
        loop {
            let report = self.runner.run(spec).map_err(|e| self.runner_error(e))?;
            self.trial_seconds += spec.duration_s;
            self.elapsed_s += spec.duration_s + spec.timeout_ms as f64 / 1000.0;
            let verdict = judge(&report, loss_tolerance)?;
            let mut record = TrialRecord::from_report(self.trials.len(), phase, attempt, spec, &report, verdict);
            let bound = verdict.is_none() && attempt >= attempts;
            record.tester_bound = bound;
            self.progress.trial(self.procedure, &record);
            self.trials.push(record);
            if verdict.is_some() {
                return Ok(Outcome { report, pass: verdict });
            }
            if bound {
                self.note_tester_bound(spec.rate, attempts, &report.invalid_reasons);
                return Ok(Outcome { report, pass: None });
            }
            attempt += 1;
        }
    }

    /// Like [`Session::run`] for a procedure with nowhere lower to go: a spec that stays
    /// invalid is the error [`BenchError::TesterLimit`].
    pub fn run_valid(&mut self, spec: &TrialSpec, phase: &str, loss_tolerance: f64) -> Result<(TrialReport, bool), BenchError> {
        let out = self.run(spec, phase, loss_tolerance)?;
        match out.pass {
            Some(pass) => Ok((out.report, pass)),
            None => {
                let reasons = if out.report.invalid_reasons.is_empty() {
                    "the trial reported itself invalid".to_string()
                } else {
                    out.report.invalid_reasons.join("; ")
                };
                Err(BenchError::TesterLimit {
                    rate: spec.rate,
                    attempts: self.retries.saturating_add(1),
                    reasons,
                })
            }
        }
    }
}

/// A trial spec that a runner can be asked to perform.
pub(crate) fn check_spec(spec: &TrialSpec) -> Result<(), BenchError> {
    if !(spec.duration_s.is_finite() && spec.duration_s > 0.0) {
        return config(format!(
            "trial duration must be a positive number of seconds, not {}",
            spec.duration_s
        ));
    }
    if spec.rate == 0 {
        return config("a trial needs a rate above 0 frames/s");
    }
    if spec.frames() == 0 {
        return config(format!("{} frames/s for {} s sends no frame", spec.rate, spec.duration_s));
    }
    Ok(())
}

/// Check a loss tolerance (a fraction of sent frames).
pub(crate) fn check_tolerance(t: f64) -> Result<(), BenchError> {
    if !(t.is_finite() && (0.0..1.0).contains(&t)) {
        return config(format!("loss tolerance must be a fraction in [0, 1), not {t}"));
    }
    Ok(())
}

/// Check a duration in seconds.
pub(crate) fn check_duration(name: &str, s: f64) -> Result<(), BenchError> {
    if !(s.is_finite() && s > 0.0 && s <= 1.0e6) {
        return config(format!("{name} must be a positive number of seconds (at most 1e6), not {s}"));
    }
    Ok(())
}
