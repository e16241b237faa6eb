//! How a trial is judged, and the [`Session`] every procedure runs its trials through: the
//! retry rule for invalid trials, the record of every trial, the test time and the progress.

use xlat_trial::{HookRun, Rule, TrialReport, TrialSpec};

use crate::error::{config, ProcedureError};
use crate::runner::{Progress, ProgressEvent, TrialRunner};
use xlat_results::record::{state_table_not_filled, TrialRecord};

/// Judge a trial: `None` if it is invalid (neither pass nor fail), otherwise whether every
/// active direction lost at most `loss_tolerance` x sent frames (RFC 2544: tolerance 0).
pub fn judge(report: &TrialReport, loss_tolerance: f64) -> Result<Option<bool>, ProcedureError> {
    judge_by(report, &|r| within_tolerance(r, loss_tolerance))
}

/// Every active direction lost at most `loss_tolerance` x sent frames.
fn within_tolerance(report: &TrialReport, loss_tolerance: f64) -> bool {
    report
        .directions()
        .all(|(_, d)| lost_frames(d) as f64 <= loss_tolerance * d.counts.sent as f64)
}

/// The frames a direction lost, as every judgement counts them: the engine's count, or sent
/// less received if that is more.
pub(crate) fn lost_frames(d: &xlat_trial::DirectionReport) -> u64 {
    d.counts.lost.max(d.counts.sent.saturating_sub(d.counts.received))
}

/// Judge a trial by a procedure's own rule: `None` if it is invalid, otherwise `pass(report)`.
pub fn judge_by(report: &TrialReport, pass: &dyn Fn(&TrialReport) -> bool) -> Result<Option<bool>, ProcedureError> {
    // An invalid trial first: a stateful trial whose preliminary phase failed is invalid and
    // has no direction (phase 2 did not run).
    if !report.valid {
        // Invalid only because frames sent in a catch-up were lost: if the trial fails even
        // with those frames counted as received, the DUT lost too much on schedule, a failure
        // of its own; otherwise the catch-up could have decided it, and it says nothing.
        if report.only_lag_harmed() && report.directions().next().is_some() && !pass(&without_catch_up_loss(report)) {
            return Ok(Some(false));
        }
        return Ok(None);
    }
    if report.directions().next().is_none() {
        return Err(ProcedureError::Report("the trial report has no active direction".into()));
    }
    Ok(Some(pass(report)))
}

/// `report` as if the frames lost in catch-ups had arrived.
fn without_catch_up_loss(report: &TrialReport) -> TrialReport {
    let mut r = report.clone();
    for d in [r.forward.as_mut(), r.reverse.as_mut()].into_iter().flatten() {
        let c = &mut d.counts;
        let back = c.lost_in_catch_up.min(c.lost);
        c.lost -= back;
        c.received += back;
    }
    r
}

/// Attempts at a stateful trial whose preliminary phase did not fill the state table before the
/// procedure stops with [`ProcedureError::StateTableNotFilled`]. siitperf's
/// `binary-rate-alg.sh-sf` reruns such a test for as long as it fails; a DUT that cannot take
/// the preliminary rate would keep it running forever, so xlatperf gives up after three.
pub const FILL_ATTEMPTS: u32 = 3;

/// A trial spec run with the invalid-trial retry rule.
pub(crate) struct Outcome {
    /// The last attempt's report.
    pub report: TrialReport,
    /// `Some(pass)` for a valid trial; `None` when every attempt was invalid (the tester could
    /// not send at the rate): neither a pass nor a fail.
    pub pass: Option<bool>,
    /// A pass of a trial that ended late without loss (only in a session that
    /// [`Session::accepts_late`]): the rate the tester really offered, below the spec's.
    pub passed_at: Option<u64>,
}

/// The rate a trial offered: its lowest direction's achieved rate, never above the spec's.
fn offered(report: &TrialReport, rate: u64) -> u64 {
    report
        .directions()
        .map(|(_, d)| d.counts.achieved_rate.floor() as u64)
        .min()
        .unwrap_or(0)
        .min(rate)
}

/// Invalid only because sending ended late (rule `end_of_sending`), and passing all the same:
/// the DUT carried everything the tester offered, at the rate it offered.
fn late_but_passed(report: &TrialReport, pass: &dyn Fn(&TrialReport) -> bool) -> bool {
    report.invalid_only_by(&[Rule::EndOfSending]) && report.directions().next().is_some() && pass(report)
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
    pub fn error(&self) -> ProcedureError {
        ProcedureError::TesterLimit {
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
    /// A trial that ended late without loss passes at the rate it offered (the throughput
    /// search); elsewhere it is invalid like any other.
    accept_late: bool,
    /// A latency measurement: a trial invalid only by the lag's rules (it ended late, or lost
    /// frames in a catch-up) is judged by its tags all the same: those sent in a catch-up are
    /// already left out, and too few left is a rule of its own (`too_few_timed`).
    delays_only: bool,
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
            accept_late: false,
            delays_only: false,
        }
    }

    /// Count a trial that ended late without loss as a pass at the rate it offered
    /// ([`Outcome::passed_at`]).
    pub fn accepts_late(mut self) -> Self {
        self.accept_late = true;
        self
    }

    /// Judge a trial invalid only by the lag's rules by its delays ([`Session::delays_only`]).
    pub fn judges_delays_only(mut self) -> Self {
        self.delays_only = true;
        self
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
    pub fn interrupted(&self) -> ProcedureError {
        ProcedureError::Interrupted {
            trials: self.trials.clone(),
        }
    }

    /// A runner's error, with the trials so far if it is an interruption.
    fn runner_error(&self, e: xlat_trial::TrialError) -> ProcedureError {
        match ProcedureError::from(e) {
            ProcedureError::Interrupted { .. } => self.interrupted(),
            e => e,
        }
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
    ///
    /// A stateful trial whose preliminary phase sent in time but did not fill the state table
    /// (the DUT lost phase 1 frames at the preliminary rate) is neither: it says nothing about
    /// this trial's rate, and a lower trial rate would not help. It is run again, up to
    /// [`FILL_ATTEMPTS`] in all, as siitperf's `-sf` script reruns it; then the procedure stops
    /// with [`ProcedureError::StateTableNotFilled`]. (A preliminary phase that sent too slowly is
    /// an invalid trial like any other: the tester's limit.)
    pub fn run(&mut self, spec: &TrialSpec, phase: &str, loss_tolerance: f64) -> Result<Outcome, ProcedureError> {
        self.run_judged(spec, phase, &|r| within_tolerance(r, loss_tolerance))
    }

    /// [`Session::run`] with the procedure's own pass rule for valid trials.
    pub fn run_judged(&mut self, spec: &TrialSpec, phase: &str, pass: &dyn Fn(&TrialReport) -> bool) -> Result<Outcome, ProcedureError> {
        check_spec(spec)?;
        let attempts = self.retries.saturating_add(1);
        let mut attempt = 1;
        let (mut invalid, mut unfilled) = (0u32, 0u32);
        loop {
            let report = self.runner.run(spec).map_err(|e| self.runner_error(e))?;
            let phase2_ran = report.directions().next().is_some();
            if phase2_ran {
                self.trial_seconds += spec.duration_s;
                self.elapsed_s += spec.duration_s + spec.timeout_ms as f64 / 1000.0;
            }
            if let Some(p) = &spec.preliminary {
                // Phase 2 starts D ms after phase 1 began; without phase 2, phase 1 and its
                // timeout still took their time.
                self.elapsed_s += if phase2_ran {
                    p.phase_delay_ms as f64 / 1000.0
                } else {
                    p.frames as f64 / p.rate.max(1) as f64 + p.timeout_ms as f64 / 1000.0
                };
            }
            if let Some(p) = report.preliminary.as_ref().filter(|p| state_table_not_filled(p)) {
                unfilled += 1;
                let record = TrialRecord::from_report(self.trials.len(), phase, attempt, spec, &report, None);
                self.progress.trial(self.procedure, &record);
                self.trials.push(record);
                if unfilled >= FILL_ATTEMPTS {
                    return Err(ProcedureError::StateTableNotFilled {
                        rate: p.rate,
                        frames: p.frames,
                        valid_entries: p.valid_entries,
                        state_table: p.state_table,
                        attempts: unfilled,
                        trials: self.trials.clone(),
                    });
                }
                attempt += 1;
                continue;
            }
            if self.accept_late && late_but_passed(&report, pass) {
                let at = offered(&report, spec.rate);
                let mut record = TrialRecord::from_report(self.trials.len(), phase, attempt, spec, &report, Some(true));
                record.passed_at = Some(at);
                self.progress.trial(self.procedure, &record);
                self.trials.push(record);
                return Ok(Outcome {
                    report,
                    pass: Some(true),
                    passed_at: Some(at),
                });
            }
            let lag_only = report.invalid_only_by(&[Rule::EndOfSending, Rule::LagHarm]);
            let verdict = if self.delays_only && lag_only && report.directions().next().is_some() {
                Some(pass(&report))
            } else {
                judge_by(&report, pass)?
            };
            let mut record = TrialRecord::from_report(self.trials.len(), phase, attempt, spec, &report, verdict);
            if verdict.is_none() {
                invalid += 1;
            }
            let last = verdict.is_none() && invalid >= attempts;
            // The last attempt lost frames, but only frames sent in a catch-up: a failure,
            // possibly the tester's (never a pass, never a clean DUT loss).
            let harmed = last && report.only_lag_harmed();
            record.tester_bound = last && !harmed;
            record.possibly_tester = harmed;
            if harmed {
                record.pass = Some(false);
            }
            self.progress.trial(self.procedure, &record);
            self.trials.push(record);
            if verdict.is_some() {
                return Ok(Outcome {
                    report,
                    pass: verdict,
                    passed_at: None,
                });
            }
            if harmed {
                return Ok(Outcome {
                    report,
                    pass: Some(false),
                    passed_at: None,
                });
            }
            if last {
                self.note_tester_bound(spec.rate, attempts, &report.invalid_reasons);
                return Ok(Outcome {
                    report,
                    pass: None,
                    passed_at: None,
                });
            }
            attempt += 1;
        }
    }

    /// One trial of `spec` with the DUT command `key` run `after_s` seconds into it (RFC
    /// 6201's reset), retried while invalid like [`Session::run`] (the command runs again each
    /// time). Every attempt is recorded, the command's run among its DUT hooks. The verdict is
    /// `Some(true)` for a valid trial, `None` when every attempt was invalid.
    pub fn run_with_command(
        &mut self,
        spec: &TrialSpec,
        phase: &str,
        key: &str,
        after_s: f64,
    ) -> Result<(TrialReport, HookRun, Option<bool>), ProcedureError> {
        check_spec(spec)?;
        let attempts = self.retries.saturating_add(1);
        let mut attempt = 1;
        loop {
            let (mut report, run) = self
                .runner
                .run_with_dut_command(spec, key, after_s)
                .map_err(|e| self.runner_error(e))?;
            report.dut_hooks.push(run.clone());
            self.trial_seconds += spec.duration_s;
            self.elapsed_s += spec.duration_s + spec.timeout_ms as f64 / 1000.0;
            let verdict = judge_by(&report, &|_| true)?;
            let mut record = TrialRecord::from_report(self.trials.len(), phase, attempt, spec, &report, verdict);
            record.tester_bound = verdict.is_none() && attempt >= attempts;
            self.progress.trial(self.procedure, &record);
            self.trials.push(record);
            if verdict.is_some() || attempt >= attempts {
                if verdict.is_none() {
                    self.note_tester_bound(spec.rate, attempts, &report.invalid_reasons);
                }
                return Ok((report, run, verdict));
            }
            attempt += 1;
        }
    }

    /// Like [`Session::run`] for a procedure with nowhere lower to go: a spec that stays
    /// invalid is the error [`ProcedureError::TesterLimit`].
    pub fn run_valid(&mut self, spec: &TrialSpec, phase: &str, loss_tolerance: f64) -> Result<(TrialReport, bool), ProcedureError> {
        self.run_valid_judged(spec, phase, &|r| within_tolerance(r, loss_tolerance))
    }

    /// [`Session::run_valid`] with the procedure's own pass rule for valid trials.
    pub fn run_valid_judged(
        &mut self,
        spec: &TrialSpec,
        phase: &str,
        pass: &dyn Fn(&TrialReport) -> bool,
    ) -> Result<(TrialReport, bool), ProcedureError> {
        let out = self.run_judged(spec, phase, pass)?;
        match out.pass {
            Some(pass) => Ok((out.report, pass)),
            None => {
                let reasons = if out.report.invalid_reasons.is_empty() {
                    "the trial reported itself invalid".to_string()
                } else {
                    out.report.invalid_reasons.join("; ")
                };
                Err(ProcedureError::TesterLimit {
                    rate: spec.rate,
                    attempts: self.retries.saturating_add(1),
                    reasons,
                })
            }
        }
    }
}

/// A trial spec that a runner can be asked to perform.
pub(crate) fn check_spec(spec: &TrialSpec) -> Result<(), ProcedureError> {
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
pub(crate) fn check_tolerance(t: f64) -> Result<(), ProcedureError> {
    if !(t.is_finite() && (0.0..1.0).contains(&t)) {
        return config(format!("loss tolerance must be a fraction in [0, 1), not {t}"));
    }
    Ok(())
}

/// Check a duration in seconds.
pub(crate) fn check_duration(name: &str, s: f64) -> Result<(), ProcedureError> {
    if !(s.is_finite() && s > 0.0 && s <= 1.0e6) {
        return config(format!("{name} must be a positive number of seconds (at most 1e6), not {s}"));
    }
    Ok(())
}
