//! Reset time (RFC 6201, Device Reset Characterization): one constant-rate trial through the
//! DUT, and `at_s` seconds into it the DUT's reset command (`[dut] reset`, run by the runner
//! alongside the trial with the rest of the trial as its deadline). Per direction, the reset
//! time both ways RFC 6201 describes:
//!
//! * **frame-loss method**: the frames lost divided by the offered rate;
//! * **timestamp method**: the time from the last frame received before the interruption to
//!   the first one received after it (the receiver's longest gap between received bursts,
//!   `DirectionReport::max_rx_gap_ns`).
//!
//! The offered rate must be one the DUT forwards without loss (below its throughput), so that
//! every lost frame is the reset's. The result is invalid, with its reason and its trial kept,
//! when the command failed or overran its deadline, when a direction lost nothing (the reset
//! did not interrupt it, or came outside the trial), or when a direction's last frame was lost
//! (the DUT did not forward again before the trial ended: the trial must be longer). An invalid
//! trial (the tester missed its schedule) is retried, the reset with it; one that stays
//! invalid is [`ProcedureError::TesterLimit`].

use serde::{Deserialize, Serialize};
pub use xlat_results::reset::{ResetDirection, ResetResult};
use xlat_trial::TrialSpec;

use crate::error::{config, ProcedureError};
use crate::runner::{Progress, TrialRunner};
use crate::trial::{check_duration, Session};
use xlat_results::defaults::{DEFAULT_RETRIES, DEFAULT_TIMEOUT_MS};

/// The configuration key of the reset command.
pub const RESET_KEY: &str = "dut.reset";

/// The parameters of a reset test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResetConfig {
    /// Frame size, rate (frames/s per direction, below the DUT's throughput), duration.
    pub trial: TrialSpec,
    /// Seconds after the trial began at which the reset command starts.
    pub at_s: f64,
    pub retries: u32,
}

impl ResetConfig {
    pub fn new(frame_size: usize, rate: u64, duration_s: f64, at_s: f64) -> ResetConfig {
        ResetConfig {
            trial: TrialSpec::new(frame_size, rate, duration_s, DEFAULT_TIMEOUT_MS),
            at_s,
            retries: DEFAULT_RETRIES,
        }
    }

    pub fn validate(&self) -> Result<(), ProcedureError> {
        check_duration("the trial duration", self.trial.duration_s)?;
        if self.trial.rate == 0 {
            return config("the reset test needs a rate above 0 frames/s");
        }
        if !(self.at_s.is_finite() && self.at_s > 0.0 && self.at_s < self.trial.duration_s) {
            return config(format!(
                "the reset must start within the trial: 0 < --at {} < --duration {}",
                self.at_s, self.trial.duration_s
            ));
        }
        Ok(())
    }
}

/// Run the reset test.
pub fn reset_time(runner: &mut dyn TrialRunner, cfg: &ResetConfig, progress: &mut dyn Progress) -> Result<ResetResult, ProcedureError> {
    cfg.validate()?;
    let mut s = Session::new(runner, progress, "reset", cfg.retries);
    let spec = TrialSpec {
        latency: None,
        ..cfg.trial.clone()
    };
    let rate = spec.rate;
    s.announce("reset", rate, rate, rate, Some(spec.duration_s + spec.timeout_ms as f64 / 1000.0));
    let (report, run, verdict) = s.run_with_command(&spec, "reset", RESET_KEY, cfg.at_s)?;
    if verdict.is_none() {
        if let Some(i) = &s.lowest_invalid {
            return Err(i.error());
        }
    }
    let forward = report.forward.as_ref().map(|d| ResetDirection::of(d, rate));
    let reverse = report.reverse.as_ref().map(|d| ResetDirection::of(d, rate));
    let mut reasons = Vec::new();
    match run.exit_status {
        None => reasons.push(format!(
            "the reset command ({}) did not end within its deadline (the rest of the trial and its timeout) and was killed after {:.1} s",
            run.command, run.seconds
        )),
        Some(0) => {}
        Some(code) => reasons.push(format!("the reset command ({}) failed with exit status {code}", run.command)),
    }
    for (name, d) in [("forward", &forward), ("reverse", &reverse)] {
        let Some(d) = d else { continue };
        if d.lost == 0 {
            reasons.push(format!(
                "{name}: no frame was lost, the reset did not interrupt forwarding (or it came outside the trial)"
            ));
        } else if !d.recovered {
            reasons.push(format!(
                "{name}: the last frame was lost, the DUT did not forward again before the trial ended (lengthen --duration)"
            ));
        }
    }
    Ok(ResetResult {
        frame_size: spec.frame_size,
        rate,
        duration_s: spec.duration_s,
        at_s: cfg.at_s,
        reset: run,
        valid: reasons.is_empty(),
        invalid_reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
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
    use crate::runner::NoProgress;
    use xlat_testkit::sim::SimDut;

    #[test]
    fn both_methods_find_the_simulated_outage() {
        let mut dut = SimDut::new(1e6, 1);
        dut.reset_s = Some(0.4);
        let c = ResetConfig::new(84, 10_000, 5.0, 1.0);
        let r = reset_time(&mut dut, &c, &mut NoProgress).unwrap();
        assert!(r.valid, "{:?}", r.invalid_reason);
        for (_, d) in r.directions() {
            assert_eq!(d.lost, 4000);
            assert!((d.frame_loss_s - 0.4).abs() < 1e-9);
            assert!((d.timestamp_s - 0.4001).abs() < 1e-6, "{}", d.timestamp_s);
            assert!(d.recovered);
        }
        assert_eq!(r.trials.len(), 1);
        assert_eq!(r.trials[0].dut_hooks.len(), 1);
    }

    #[test]
    fn a_reset_that_hangs_loses_nothing_or_never_ends_is_an_invalid_result_with_its_trial() {
        let c = ResetConfig::new(84, 10_000, 5.0, 1.0);
        let mut dut = SimDut::new(1e6, 1);
        dut.reset_s = Some(0.4);
        dut.reset_hangs = true;
        let r = reset_time(&mut dut, &c, &mut NoProgress).unwrap();
        assert!(!r.valid && r.invalid_reason.as_deref().unwrap().contains("did not end within its deadline"));
        assert_eq!(r.trials.len(), 1);
        let mut dut = SimDut::new(1e6, 1);
        let r = reset_time(&mut dut, &c, &mut NoProgress).unwrap();
        assert!(r.invalid_reason.as_deref().unwrap().contains("no frame was lost"));
        let mut dut = SimDut::new(1e6, 1);
        dut.reset_s = Some(10.0);
        let r = reset_time(&mut dut, &c, &mut NoProgress).unwrap();
        assert!(r.invalid_reason.as_deref().unwrap().contains("did not forward again"));
    }

    #[test]
    fn the_reset_must_start_within_the_trial() {
        for at in [0.0, 5.0, 7.0, f64::NAN] {
            let c = ResetConfig::new(84, 10_000, 5.0, at);
            assert!(c.validate().is_err(), "{at}");
        }
    }
}
