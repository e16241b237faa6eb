//! System recovery (RFC 2544 section 26.5, adopted for IPv6 transition technologies by RFC 8219).
//!
//! One uninterrupted stream per direction: `overload_factor` (110 %) x throughput, capped at the
//! line rate, for at least 60 s; then `reduced_factor` (50 %) x throughput. The rate reduction
//! is timestamp A; the scheduled send time of the last lost frame is timestamp B; the recovery
//! time is B - A (0 if the last loss came before the reduction). The trial is one ordinary
//! trial with a rate change ([`RecoverySpec::trial_spec`]); the runner reports the sequence
//! number of the last lost frame per direction, and its scheduled send time comes from
//! [`RecoverySpec::send_time_s`]. A runner that loses frames without naming the last one cannot
//! run the test ([`ProcedureError::Unsupported`]). If the throughput already equals the line rate
//! there is no overload to apply and the test is refused.
//!
//! An invalid trial (the sender could not keep either schedule) is retried and never judged;
//! one that stays invalid after the retries ends the test with [`ProcedureError::TesterLimit`]: its
//! rates are fixed by the throughput, there is no lower one to go on with.

use serde::{Deserialize, Serialize};
pub use xlat_results::recovery::{RecoveryDirectionResult, RecoveryResult};
use xlat_trial::{DirectionReport, RateChange, TrialReport, TrialSpec};

use crate::error::{config, ProcedureError};
use crate::runner::{Progress, TrialRunner};
use crate::trial::{check_duration, Session};
use xlat_results::defaults::{DEFAULT_RETRIES, DEFAULT_TIMEOUT_MS};

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

    /// The system recovery trial as one trial: the overload rate, then from `overload_s` on the
    /// reduced rate, in one sequence-numbered stream per direction.
    pub fn trial_spec(&self) -> TrialSpec {
        TrialSpec {
            rate: self.overload_rate,
            duration_s: self.overload_s + self.recovery_s,
            latency: None,
            pdv: None,
            rate_change: Some(RateChange {
                at_s: self.overload_s,
                rate: self.recovery_rate,
            }),
            ..self.trial.clone()
        }
    }
}

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

    pub fn validate(&self) -> Result<(), ProcedureError> {
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

/// One direction of the valid trial; an error if it lost frames without naming the last one.
fn direction(spec: &RecoverySpec, d: &DirectionReport) -> Result<RecoveryDirectionResult, ProcedureError> {
    if d.counts.lost > 0 && d.last_lost_seq.is_none() {
        return Err(ProcedureError::Unsupported(
            "the system recovery trial: the runner lost frames but did not report the sequence number of the last lost one (last_lost_seq)"
                .into(),
        ));
    }
    let last_lost_s = d.last_lost_seq.map(|q| spec.send_time_s(q));
    Ok(RecoveryDirectionResult {
        sent: d.counts.sent,
        received: d.counts.received,
        lost: d.counts.lost,
        last_lost_s,
        recovery_time_s: last_lost_s.map(|t| (t - spec.overload_s).max(0.0)),
        lost_until_end: lost_until_end(d),
    })
}

/// The very last frame of the direction's stream was lost.
fn lost_until_end(d: &DirectionReport) -> bool {
    d.counts.sent > 0 && d.last_lost_seq == Some(d.counts.sent - 1)
}

/// A valid recovery trial passes when every direction received its last frame.
fn recovered(r: &TrialReport) -> bool {
    r.directions().all(|(_, d)| !lost_until_end(d))
}

pub fn system_recovery(
    runner: &mut dyn TrialRunner,
    cfg: &RecoveryConfig,
    progress: &mut dyn Progress,
) -> Result<RecoveryResult, ProcedureError> {
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
    s.announce(
        "overload then reduced rate",
        over,
        reduced,
        over,
        Some(total_s + cfg.trial.timeout_ms as f64 / 1000.0),
    );
    let (r, _) = s.run_valid_judged(&spec.trial_spec(), "recovery", &recovered)?;
    let forward = r.forward.as_ref().map(|d| direction(&spec, d)).transpose()?;
    let reverse = r.reverse.as_ref().map(|d| direction(&spec, d)).transpose()?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> RecoverySpec {
        RecoverySpec {
            trial: TrialSpec::new(84, 1000, 1.0, 10),
            overload_rate: 1100,
            overload_s: 2.0,
            recovery_rate: 500,
            recovery_s: 3.0,
        }
    }

    #[test]
    fn recovery_trial_is_one_stream_with_a_rate_change() {
        let s = spec();
        let t = s.trial_spec();
        assert_eq!(t.rate, 1100);
        assert_eq!(t.duration_s, 5.0);
        assert_eq!(t.rate_change, Some(RateChange { at_s: 2.0, rate: 500 }));
        assert_eq!(t.frames(), s.overload_frames() + s.recovery_frames());
    }

    #[test]
    fn the_last_lost_frame_is_timed_by_the_schedule() {
        let s = spec();
        // Frame 2200 is the first of the reduced rate: 2 s; 2300 is 100 frames of 500/s later.
        assert_eq!(s.send_time_s(1100), 1.0);
        assert_eq!(s.send_time_s(2200), 2.0);
        assert!((s.send_time_s(2300) - 2.2).abs() < 1e-12);
        let d = DirectionReport {
            counts: xlat_trial::DirectionCounts {
                sent: 3700,
                received: 3000,
                lost: 700,
                ..Default::default()
            },
            last_lost_seq: Some(2300),
            ..Default::default()
        };
        let r = direction(&s, &d).unwrap();
        assert!((r.recovery_time_s.unwrap() - 0.2).abs() < 1e-9, "{r:?}");
        assert!(!r.lost_until_end);
        let end = DirectionReport {
            last_lost_seq: Some(3699),
            ..d.clone()
        };
        assert!(direction(&s, &end).unwrap().lost_until_end);
        // Lost frames without the last one named: not silently "recovered".
        let bad = DirectionReport { last_lost_seq: None, ..d };
        assert!(matches!(direction(&s, &bad), Err(ProcedureError::Unsupported(_))));
    }
}
