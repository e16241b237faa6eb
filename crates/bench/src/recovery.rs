//! System recovery (RFC 2544 section 26.5, adopted for IPv6 transition technologies by RFC 8219).
//!
//! One uninterrupted stream per direction: `overload_factor` (110 %) x throughput, capped at the
//! line rate, for at least 60 s; then `reduced_factor` (50 %) x throughput. The rate reduction
//! is timestamp A; the scheduled send time of the last lost frame is timestamp B; the recovery
//! time is B - A (0 if the last loss came before the reduction). Needs
//! [`TrialRunner::run_recovery`] from the runner; the default implementation says it is not
//! supported. If the throughput already equals the line rate there is no overload to apply and
//! the test is refused.
//!
//! An invalid trial (the sender could not keep either schedule) is retried and never judged;
//! one that stays invalid after the retries ends the test with [`BenchError::TesterLimit`]: its
//! rates are fixed by the throughput, there is no lower one to go on with.

use serde::{Deserialize, Serialize};
use xlat_engine::TrialSpec;

use crate::error::{config, BenchError};
use crate::runner::{Progress, RecoveryDirection, RecoveryReport, RecoverySpec, TrialRunner};
use crate::throughput::{DEFAULT_RETRIES, DEFAULT_TIMEOUT_MS};
use crate::trial::{check_duration, DirectionCounts, Session, TrialRecord};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecoveryConfig {
    /// Frame size, timeout, burst; `rate` and `duration_s` are not used.
    pub trial: TrialSpec,
    /// The measured throughput, frames/s per direction.
    pub throughput: u64,
    /// The maximum frame rate of the media; the overload never exceeds it.
    pub line_rate: Option<u64>,
    pub overload_factor: f64,
    /// RFC 2544: at least 60 s.
    pub overload_s: f64,
    pub reduced_factor: f64,
    /// How long the reduced rate is sent (the longest recovery time that can be seen).
    pub recovery_s: f64,
    pub retries: u32,
}

impl RecoveryConfig {
    pub fn new(frame_size: usize, throughput: u64) -> RecoveryConfig {
        RecoveryConfig {
            trial: TrialSpec::new(frame_size, throughput, 60.0, DEFAULT_TIMEOUT_MS),
            throughput,
            line_rate: None,
            overload_factor: 1.10,
            overload_s: 60.0,
            reduced_factor: 0.5,
            recovery_s: 60.0,
            retries: DEFAULT_RETRIES,
        }
    }

    /// (overload rate, reduced rate).
    pub fn rates(&self) -> (u64, u64) {
        let mut over = (self.throughput as f64 * self.overload_factor).round() as u64;
        if let Some(l) = self.line_rate {
            over = over.min(l);
        }
        (over, (self.throughput as f64 * self.reduced_factor).floor() as u64)
    }

    pub fn validate(&self) -> Result<(), BenchError> {
        if self.throughput == 0 {
            return config("the system recovery test needs a throughput above 0 frames/s");
        }
        if !(self.overload_factor.is_finite() && self.overload_factor > 1.0 && self.overload_factor <= 10.0) {
            return config(format!("the overload factor must be in (1, 10], not {}", self.overload_factor));
        }
        if !(self.reduced_factor.is_finite() && self.reduced_factor > 0.0 && self.reduced_factor < 1.0) {
            return config(format!("the reduced-rate factor must be in (0, 1), not {}", self.reduced_factor));
        }
        check_duration("the overload time", self.overload_s)?;
        check_duration("the recovery observation time", self.recovery_s)?;
        let (over, reduced) = self.rates();
        if over <= self.throughput {
            return config(format!(
                "the throughput ({}) is at the line rate: the DUT cannot be overloaded, the test does not apply",
                self.throughput
            ));
        }
        if reduced == 0 {
            return config("the reduced rate is 0 frames/s");
        }
        Ok(())
    }
}

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

fn direction(spec: &RecoverySpec, d: &RecoveryDirection) -> RecoveryDirectionResult {
    let last_lost_s = d.last_lost_seq.map(|q| spec.send_time_s(q));
    RecoveryDirectionResult {
        sent: d.sent,
        received: d.received,
        lost: d.lost,
        last_lost_s,
        recovery_time_s: last_lost_s.map(|t| (t - spec.overload_s).max(0.0)),
        lost_until_end: d.sent > 0 && d.last_lost_seq == Some(d.sent - 1),
    }
}

fn counts(d: &RecoveryDirection) -> DirectionCounts {
    DirectionCounts {
        sent: d.sent,
        received: d.received,
        lost: d.lost,
        tester_tx_dropped: d.tester_tx_dropped,
        tester_rx_dropped: d.tester_rx_dropped,
        ..DirectionCounts::default()
    }
}

pub fn system_recovery(
    runner: &mut dyn TrialRunner,
    cfg: &RecoveryConfig,
    progress: &mut dyn Progress,
) -> Result<RecoveryResult, BenchError> {
    cfg.validate()?;
    let (over, reduced) = cfg.rates();
    let spec = RecoverySpec {
        trial: cfg.trial.clone(),
        overload_rate: over,
        overload_s: cfg.overload_s,
        recovery_rate: reduced,
        recovery_s: cfg.recovery_s,
    };
    let total_s = cfg.overload_s + cfg.recovery_s;
    let mut s = Session::new(runner, progress, "recovery", cfg.retries);
    let attempts = s.retries().saturating_add(1);
    let mut report: Option<RecoveryReport> = None;
    let mut reasons = Vec::new();
    for attempt in 1..=attempts {
        s.announce(
            "overload then reduced rate",
            over,
            reduced,
            over,
            Some(total_s + cfg.trial.timeout_ms as f64 / 1000.0),
        );
        let r = s.runner_recovery(&spec)?;
        if r.forward.is_none() && r.reverse.is_none() {
            return Err(BenchError::Report("the recovery report has no active direction".into()));
        }
        let recovered = [&r.forward, &r.reverse]
            .into_iter()
            .flatten()
            .all(|d| !(d.sent > 0 && d.last_lost_seq == Some(d.sent - 1)));
        let record = TrialRecord {
            index: 0,
            phase: "recovery".into(),
            attempt,
            frame_size: cfg.trial.frame_size,
            rate: over,
            duration_s: total_s,
            frames: spec.overload_frames() + spec.recovery_frames(),
            valid: r.valid,
            pass: r.valid.then_some(recovered),
            invalid_reasons: r.invalid_reasons.clone(),
            tester_bound: !r.valid && attempt == attempts,
            forward: r.forward.as_ref().map(counts),
            reverse: r.reverse.as_ref().map(counts),
        };
        s.record(record, total_s, cfg.trial.timeout_ms);
        if r.valid {
            report = Some(r);
            break;
        }
        reasons.clone_from(&r.invalid_reasons);
        if attempt == attempts {
            s.note_tester_bound(over, attempts, &r.invalid_reasons);
        }
    }
    let Some(r) = report else {
        return Err(BenchError::TesterLimit {
            rate: over,
            attempts,
            reasons: reasons.join("; "),
        });
    };
    let forward = r.forward.as_ref().map(|d| direction(&spec, d));
    let reverse = r.reverse.as_ref().map(|d| direction(&spec, d));
    let dirs: Vec<&RecoveryDirectionResult> = forward.iter().chain(reverse.iter()).collect();
    let recovery_time_s = dirs.iter().filter_map(|d| d.recovery_time_s).reduce(f64::max);
    Ok(RecoveryResult {
        frame_size: cfg.trial.frame_size,
        throughput: cfg.throughput,
        overload_rate: over,
        reduced_rate: reduced,
        overload_s: cfg.overload_s,
        recovery_s: cfg.recovery_s,
        overloaded: dirs.iter().any(|d| d.lost > 0),
        recovered: dirs.iter().all(|d| !d.lost_until_end),
        recovery_time_s,
        forward,
        reverse,
        trial_seconds: s.trial_seconds,
        elapsed_s: s.elapsed_s,
        trials: s.trials,
    })
}
