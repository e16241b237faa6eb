//! Frame loss rate (RFC 2544 section 26.3, RFC 8219 section 7.4).
//!
//! The first trial runs at `max_rate` (100 % of the maximum rate of the media). Each following
//! trial is lower by `step_fraction` x `max_rate` (at most 10 %; integer rates: the step is
//! floor(step_fraction x max_rate) frames/s, at least 1), and the series stops after two
//! consecutive trials in which no frame was lost in any direction, or when the next rate would
//! be 0. With an explicit list of rates, every listed rate is measured in the given order and
//! nothing stops early. Frame loss rate per direction = (sent - received) x 100 / sent.
//!
//! A step whose trials stay invalid after the retries is **tester-bound** (the tester could not
//! send at that rate): it is recorded as such, with no loss figure, it neither counts as a
//! zero-loss trial nor breaks a run of them, and the series goes on. The result's `tester_bound`
//! is the lowest such rate. If the lowest rate tried is tester-bound, the measurement fails with
//! [`ProcedureError::TesterLimit`].

use serde::{Deserialize, Serialize};
pub use xlat_results::frame_loss::{FrameLossPoint, FrameLossResult};
use xlat_trial::TrialSpec;

use crate::error::{config, ProcedureError};
use crate::runner::{Progress, TrialRunner};
use crate::trial::{check_duration, Session};
use xlat_results::defaults::{DEFAULT_RETRIES, DEFAULT_TIMEOUT_MS};
use xlat_results::record::loss_percent;
use xlat_results::Procedure;

/// The parameters of a frame loss rate measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameLossConfig {
    /// Frame size, duration (60 s), timeout; `rate` is ignored.
    pub trial: TrialSpec,
    /// The maximum frame rate of the media for this frame size.
    pub max_rate: u64,
    /// The step as a fraction of `max_rate`, in (0, 0.1].
    pub step_fraction: f64,
    /// Measure exactly these rates instead of the stepped series.
    pub rates: Option<Vec<u64>>,
    pub retries: u32,
}

impl FrameLossConfig {
    pub fn new(frame_size: usize, max_rate: u64) -> FrameLossConfig {
        FrameLossConfig {
            trial: TrialSpec::new(frame_size, max_rate, Procedure::FrameLoss.defaults().duration_s, DEFAULT_TIMEOUT_MS),
            max_rate,
            step_fraction: 0.10,
            rates: None,
            retries: DEFAULT_RETRIES,
        }
    }

    pub fn validate(&self) -> Result<(), ProcedureError> {
        check_duration("the trial duration", self.trial.duration_s)?;
        match &self.rates {
            Some(r) if r.is_empty() => config("the list of frame loss rates is empty"),
            Some(r) if r.contains(&0) => config("a frame loss trial needs a rate above 0"),
            Some(_) => Ok(()),
            None if self.max_rate == 0 => config("the maximum rate must be above 0 frames/s"),
            None if !(self.step_fraction > 0.0 && self.step_fraction <= 0.1) => config(format!(
                "the frame loss step must be in (0, 0.1] of the maximum rate (RFC 2544 26.3), not {}",
                self.step_fraction
            )),
            None => Ok(()),
        }
    }

    /// The step in frames/s.
    pub fn step(&self) -> u64 {
        ((self.step_fraction * self.max_rate as f64).floor() as u64).max(1)
    }
}

pub fn frame_loss(
    runner: &mut dyn TrialRunner,
    cfg: &FrameLossConfig,
    progress: &mut dyn Progress,
) -> Result<FrameLossResult, ProcedureError> {
    cfg.validate()?;
    let mut s = Session::new(runner, progress, "frame-loss", cfg.retries);
    let per_trial = cfg.trial.duration_s + cfg.trial.timeout_ms as f64 / 1000.0;
    let step = cfg.step();
    let mut points = Vec::new();
    let mut zero_run = 0;
    let mut i: u64 = 0;
    let mut two_zero_loss = false;
    loop {
        let rate = match &cfg.rates {
            Some(list) => match list.get(i as usize) {
                Some(&r) => r,
                None => break,
            },
            None => match cfg.max_rate.checked_sub(i.saturating_mul(step)) {
                Some(r) if r > 0 => r,
                _ => break,
            },
        };
        let remaining = match &cfg.rates {
            Some(list) => (list.len() as u64 - i) as f64 * per_trial,
            None => (2 - zero_run).max(1) as f64 * per_trial,
        };
        s.announce("step", rate, rate, rate, Some(remaining));
        let spec = TrialSpec {
            rate,
            latency: None,
            ..cfg.trial.clone()
        };
        let out = s.run(&spec, "frame-loss", 0.0)?;
        let valid = out.pass.is_some();
        let loss =
            |d: Option<&xlat_trial::DirectionReport>| d.filter(|_| valid).and_then(|d| loss_percent(d.counts.sent, d.counts.received));
        let point = FrameLossPoint {
            rate,
            percent_of_max: if cfg.max_rate > 0 {
                rate as f64 * 100.0 / cfg.max_rate as f64
            } else {
                0.0
            },
            forward_loss_percent: loss(out.report.forward.as_ref()),
            reverse_loss_percent: loss(out.report.reverse.as_ref()),
            trial: s.trials.len() - 1,
            tester_bound: !valid,
        };
        points.push(point);
        i += 1;
        if cfg.rates.is_none() {
            zero_run = match out.pass {
                Some(true) => zero_run + 1,
                Some(false) => 0,
                None => zero_run,
            };
            if zero_run >= 2 {
                two_zero_loss = true;
                break;
            }
        }
    }
    let lowest = points.iter().min_by_key(|p| p.rate);
    if let (Some(p), Some(inv)) = (lowest, &s.lowest_invalid) {
        if p.tester_bound {
            return Err(inv.error());
        }
    }
    Ok(FrameLossResult {
        frame_size: cfg.trial.frame_size,
        max_rate: cfg.max_rate,
        points,
        two_zero_loss,
        tester_bound: s.lowest_invalid.as_ref().map(|i| i.rate),
        trial_seconds: s.trial_seconds,
        elapsed_s: s.elapsed_s,
        trials: s.trials,
    })
}
