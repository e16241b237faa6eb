//! Back-to-back frames (RFC 2544 section 26.4 as updated by RFC 9004).
//!
//! A burst of N frames at the line rate (a trial with rate = line rate and duration = N / rate)
//! passes when every frame comes back in every active direction. Per repetition a binary search
//! on N finds the longest passing burst, within `error` frames, between 0 and `max_burst`
//! (default: 2 s of line rate; `max_burst` is tried first). Trials are separated by at least
//! `idle_s` (2 s) of idle time. RFC 9004 asks for at least 50 repetitions and reports the
//! average, minimum, maximum and standard deviation (sample, n - 1) of the burst lengths.
//!
//! Buffer time (RFC 9004 section 5.4, with the DUT modelled as a buffer in front of a forwarding
//! function that runs at the measured throughput T while the burst arrives at line rate R):
//!
//! * Implied DUT buffer time = average back-to-back frames / R.
//! * Corrected DUT buffer time = (average back-to-back frames - implied buffer time x T) / R,
//!   i.e. the frames the DUT had to hold (the burst minus what it forwarded while the burst
//!   arrived) expressed in time at line rate. It needs T (from the throughput test) and is not
//!   defined when T >= R (the DUT then needs no buffer: the benchmark does not apply).
//!
//! A burst whose trials stay invalid after the retries is **tester-bound**: the tester could not
//! send that many frames back to back at the line rate. It bounds the search from above like a
//! lost frame (without being counted as one), and the run records it (`tester_bound`, the
//! shortest such burst). If no burst of a repetition passed and its shortest burst tried was
//! tester-bound, the test fails with [`ProcedureError::TesterLimit`].

use std::time::Duration;
pub use xlat_results::b2b::{BackToBackResult, BackToBackRun};

use serde::{Deserialize, Serialize};
use xlat_trial::TrialSpec;

use crate::error::{config, ProcedureError};
use crate::runner::{Progress, Sleeper, TrialRunner};
use crate::trial::Session;
use xlat_results::defaults::{DEFAULT_RETRIES, DEFAULT_TIMEOUT_MS};
use xlat_results::Procedure;

/// RFC 9004: at least 50 repetitions.
pub const DEFAULT_B2B_REPETITIONS: u32 = Procedure::BackToBack.defaults().repetitions;
/// RFC 2544 / RFC 9004: at least 2 s between trials.
pub use xlat_results::defaults::DEFAULT_IDLE_S;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackToBackConfig {
    /// Frame size, timeout, burst size of the sender; `rate` and `duration_s` are set per burst.
    pub trial: TrialSpec,
    /// The maximum theoretical frame rate of the media for this frame size.
    pub line_rate: u64,
    /// The longest burst tried.
    pub max_burst: u64,
    /// The search stops when the interval is at most this many frames (at least 1).
    pub error: u64,
    pub repetitions: u32,
    pub idle_s: f64,
    pub retries: u32,
    /// The measured throughput, for the corrected DUT buffer time.
    pub measured_throughput: Option<u64>,
}

impl BackToBackConfig {
    pub fn new(frame_size: usize, line_rate: u64) -> BackToBackConfig {
        BackToBackConfig {
            trial: TrialSpec::new(frame_size, line_rate, 1.0, DEFAULT_TIMEOUT_MS),
            line_rate,
            max_burst: line_rate.saturating_mul(2),
            error: 1,
            repetitions: DEFAULT_B2B_REPETITIONS,
            idle_s: DEFAULT_IDLE_S,
            retries: DEFAULT_RETRIES,
            measured_throughput: None,
        }
    }

    pub fn validate(&self) -> Result<(), ProcedureError> {
        if self.line_rate == 0 {
            return config("the line rate must be above 0 frames/s");
        }
        if self.max_burst == 0 {
            return config("the longest burst must be at least 1 frame");
        }
        if self.error == 0 {
            return config("the burst length error must be at least 1 frame");
        }
        if self.repetitions == 0 {
            return config("the back-to-back test needs at least 1 repetition");
        }
        if !(self.idle_s.is_finite() && self.idle_s >= 0.0 && self.idle_s <= 3600.0) {
            return config(format!("the idle time between trials must be 0..3600 s, not {}", self.idle_s));
        }
        if self.max_burst as f64 / self.line_rate as f64 > 1.0e6 {
            return config("the longest burst lasts more than 1e6 s");
        }
        Ok(())
    }

    /// The trial of one burst: `frames` at the line rate, with a duration that makes
    /// `TrialSpec::frames()` exactly `frames`.
    pub fn burst_spec(&self, frames: u64) -> TrialSpec {
        let rate = self.line_rate;
        let mut d = frames as f64 / rate as f64;
        for _ in 0..8 {
            let spec_frames = (rate as f64 * d).floor() as u64;
            if spec_frames >= frames {
                break;
            }
            d = f64::from_bits(d.to_bits() + 1);
        }
        TrialSpec {
            rate,
            duration_s: d,
            latency: None,
            pdv: None,
            ..self.trial.clone()
        }
    }
}

/// RFC 9004 section 5.4 (see the module documentation).
pub fn corrected_buffer_time_s(average_frames: f64, line_rate: u64, throughput: u64) -> Option<f64> {
    if line_rate == 0 || throughput >= line_rate {
        return None;
    }
    let implied = average_frames / line_rate as f64;
    Some((average_frames - implied * throughput as f64) / line_rate as f64)
}

pub fn back_to_back(
    runner: &mut dyn TrialRunner,
    cfg: &BackToBackConfig,
    progress: &mut dyn Progress,
    sleeper: &mut dyn Sleeper,
) -> Result<BackToBackResult, ProcedureError> {
    cfg.validate()?;
    let mut s = Session::new(runner, progress, "back-to-back", cfg.retries);
    let mut idle_seconds = 0.0;
    let mut first = true;
    let mut runs = Vec::new();
    let idle = Duration::from_secs_f64(cfg.idle_s);
    let per_trial = cfg.max_burst as f64 / cfg.line_rate as f64 / 2.0 + cfg.trial.timeout_ms as f64 / 1000.0 + cfg.idle_s;
    let steps_per_rep = 1.0 + (cfg.max_burst as f64 / cfg.error as f64).log2().ceil().max(0.0);
    // Some(pass), or None: tester-bound.
    let mut burst = |s: &mut Session, frames: u64, phase: &str, low: u64, high: u64, rep: usize| -> Result<Option<bool>, ProcedureError> {
        if !first {
            sleeper.sleep(idle);
            s.add_idle(cfg.idle_s);
            idle_seconds += cfg.idle_s;
        }
        first = false;
        let remaining = (cfg.repetitions as usize - rep) as f64 * steps_per_rep * per_trial;
        s.announce(phase, frames, low, high, Some(remaining));
        Ok(s.run(&cfg.burst_spec(frames), phase, 0.0)?.pass)
    };
    for rep in 0..cfg.repetitions as usize {
        let phase = format!("burst {}", rep + 1);
        let (mut low, mut high) = (0u64, cfg.max_burst);
        let mut tester_bound: Option<(u64, String)> = None;
        let mut note = |frames: u64, s: &Session| {
            let reasons = s.trials.last().map(|t| t.invalid_reasons.join("; ")).unwrap_or_default();
            if tester_bound.as_ref().is_none_or(|(b, _)| frames < *b) {
                tester_bound = Some((frames, reasons));
            }
        };
        let first = burst(&mut s, high, &phase, low, high, rep)?;
        let at_max = first == Some(true);
        if at_max {
            low = high;
        } else if first.is_none() {
            note(high, &s);
        }
        while high - low > cfg.error {
            let mid = low + (high - low) / 2;
            match burst(&mut s, mid, &phase, low, high, rep)? {
                Some(true) => low = mid,
                Some(false) => high = mid,
                None => {
                    high = mid;
                    note(mid, &s);
                }
            }
        }
        if let Some((b, reasons)) = &tester_bound {
            // Nothing passed, so every burst tried was shorter than the one before: `high` is
            // the shortest, and it was tester-bound.
            if low == 0 && *b == high {
                return Err(ProcedureError::TesterLimit {
                    rate: cfg.line_rate,
                    attempts: s.retries().saturating_add(1),
                    reasons: format!("a burst of {b} frames at the line rate: {reasons}"),
                });
            }
        }
        runs.push(BackToBackRun {
            repetition: rep,
            frames: low,
            at_max,
            tester_bound: tester_bound.map(|(b, _)| b),
        });
    }
    let n = runs.len() as f64;
    let average = runs.iter().map(|r| r.frames as f64).sum::<f64>() / n;
    let var = if runs.len() > 1 {
        runs.iter().map(|r| (r.frames as f64 - average).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    Ok(BackToBackResult {
        frame_size: cfg.trial.frame_size,
        line_rate: cfg.line_rate,
        max_burst: cfg.max_burst,
        error: cfg.error,
        average_frames: average,
        min_frames: runs.iter().map(|r| r.frames).min().unwrap_or(0),
        max_frames: runs.iter().map(|r| r.frames).max().unwrap_or(0),
        std_dev_frames: var.sqrt(),
        implied_buffer_time_s: average / cfg.line_rate as f64,
        measured_throughput: cfg.measured_throughput,
        tester_bound: runs.iter().filter_map(|r| r.tester_bound).min(),
        corrected_buffer_time_s: cfg
            .measured_throughput
            .and_then(|t| corrected_buffer_time_s(average, cfg.line_rate, t)),
        runs,
        trial_seconds: s.trial_seconds,
        idle_seconds,
        elapsed_s: s.elapsed_s,
        trials: s.trials,
    })
}
