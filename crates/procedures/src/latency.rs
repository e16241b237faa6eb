//! Latency (RFC 8219 section 7.2): trials at a given rate (normally the throughput) of 120 s,
//! with `tags` frames tagged evenly after a 60 s delay; per direction the typical latency (TL,
//! median) and worst-case latency (WCL, 99.9th percentile) of the tagged frames, a lost tag
//! counting as infinite (nearest-rank percentiles, see [`xlat_results::delay`]). The trial is repeated
//! (RFC 8219: at least 20 times) and the medians of TL and WCL are reported. An invalid trial is
//! retried and never summarised; one that stays invalid after the retries ends the test with
//! [`crate::ProcedureError::TesterLimit`] (the rate is fixed: there is no lower one to go on with).

use serde::{Deserialize, Serialize};
pub use xlat_results::latency::{LatencyResult, LatencyRun, LatencySamples, LatencySummary};
use xlat_trial::{LatencySpec, TrialSpec};

use crate::error::{config, ProcedureError};
use crate::runner::{Progress, TrialRunner};
use crate::trial::{check_duration, Session};
use xlat_results::defaults::{DEFAULT_RETRIES, DEFAULT_TIMEOUT_MS};
use xlat_results::delay::{Delay, LatencyStats};
use xlat_results::Procedure;

pub use xlat_results::defaults::{DEFAULT_LATENCY_DELAY_S, DEFAULT_TAGS};
pub const DEFAULT_LATENCY_DURATION_S: f64 = Procedure::Latency.defaults().duration_s;
/// RFC 8219: at least 500 tagged frames (also the fewest a trial may keep after leaving out
/// the tags sent in a catch-up).
pub use xlat_trial::validity::MIN_TAGS;
/// siitperf's upper limit.
pub const MAX_TAGS: u64 = 50_000;
/// RFC 8219: at least 20 repetitions.
pub const DEFAULT_LATENCY_REPETITIONS: u32 = Procedure::Latency.defaults().repetitions;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyConfig {
    /// Frame size, duration (120 s), timeout; `rate` and `latency` are set by the procedure.
    pub trial: TrialSpec,
    /// Frames/s per direction, normally the measured throughput.
    pub rate: u64,
    pub delay_s: f64,
    /// Requested tags; clamped to [500, 50000].
    pub tags: u64,
    pub repetitions: u32,
    pub retries: u32,
    /// Keep every tag's latency in the result ([`LatencyRun::samples`]).
    pub keep_samples: bool,
}

impl LatencyConfig {
    pub fn new(frame_size: usize, rate: u64) -> LatencyConfig {
        LatencyConfig {
            trial: TrialSpec::new(frame_size, rate, DEFAULT_LATENCY_DURATION_S, DEFAULT_TIMEOUT_MS),
            rate,
            delay_s: DEFAULT_LATENCY_DELAY_S,
            tags: DEFAULT_TAGS,
            repetitions: DEFAULT_LATENCY_REPETITIONS,
            retries: DEFAULT_RETRIES,
            keep_samples: false,
        }
    }

    /// The number of tags actually used.
    pub fn effective_tags(&self) -> u64 {
        self.tags.clamp(MIN_TAGS, MAX_TAGS)
    }

    pub fn validate(&self) -> Result<(), ProcedureError> {
        check_duration("the trial duration", self.trial.duration_s)?;
        if self.rate == 0 {
            return config("the latency test needs a rate above 0 frames/s");
        }
        if self.repetitions == 0 {
            return config("the latency test needs at least 1 repetition");
        }
        if !(self.delay_s.is_finite() && self.delay_s >= 0.0 && self.delay_s < self.trial.duration_s) {
            return config(format!(
                "the tagging delay ({} s) must be at least 0 and shorter than the trial ({} s)",
                self.delay_s, self.trial.duration_s
            ));
        }
        let room = (self.rate as f64 * (self.trial.duration_s - self.delay_s)).floor() as u64;
        if room < self.effective_tags() {
            return config(format!(
                "{} tagged frames do not fit in the {} frames sent after the {} s delay",
                self.effective_tags(),
                room,
                self.delay_s
            ));
        }
        Ok(())
    }
}

/// The median of delays: the middle value, or for an even count the mean of the two middle
/// values (infinite if either is).
pub fn median_delay(values: &[Delay]) -> Option<Delay> {
    xlat_results::repeat::median_of(values, |a, b| match (a.ns(), b.ns()) {
        (Some(a), Some(b)) => Delay(((u128::from(a) + u128::from(b)) / 2) as u64),
        _ => Delay::INFINITE,
    })
}

fn summarise(stats: Vec<&LatencyStats>) -> Option<LatencySummary> {
    let tl: Vec<Delay> = stats.iter().map(|s| s.typical).collect();
    let wcl: Vec<Delay> = stats.iter().map(|s| s.worst_case).collect();
    Some(LatencySummary {
        typical: median_delay(&tl)?,
        worst_case: median_delay(&wcl)?,
    })
}

pub fn latency(runner: &mut dyn TrialRunner, cfg: &LatencyConfig, progress: &mut dyn Progress) -> Result<LatencyResult, ProcedureError> {
    cfg.validate()?;
    let tags = cfg.effective_tags();
    let mut s = Session::new(runner, progress, "latency", cfg.retries).judges_delays_only();
    let per_trial = cfg.trial.duration_s + cfg.trial.timeout_ms as f64 / 1000.0;
    let spec = TrialSpec {
        rate: cfg.rate,
        latency: Some(LatencySpec {
            delay_s: cfg.delay_s,
            tags,
        }),
        ..cfg.trial.clone()
    };
    let mut runs = Vec::new();
    for rep in 0..cfg.repetitions as usize {
        s.announce(
            &format!("repetition {}", rep + 1),
            cfg.rate,
            cfg.rate,
            cfg.rate,
            Some((cfg.repetitions as usize - rep) as f64 * per_trial),
        );
        // A fixed rate: there is nothing lower to go to, so a trial that stays invalid after
        // the retries is the error that the tester cannot send at this rate.
        let (report, _) = s.run_valid(&spec, "latency", 1.0)?;
        let stats = |d: Option<&xlat_trial::DirectionReport>| -> Result<Option<LatencyStats>, ProcedureError> {
            match d {
                None => Ok(None),
                Some(d) => match LatencyStats::from_samples(&d.latency_ns) {
                    Some(st) => Ok(Some(st)),
                    None => Err(ProcedureError::Report("a latency trial returned no latency samples".into())),
                },
            }
        };
        let samples =
            |d: Option<&xlat_trial::DirectionReport>| d.map(|d| d.latency_ns.iter().map(|&ns| (ns != u64::MAX).then_some(ns)).collect());
        runs.push(LatencyRun {
            repetition: rep,
            trial: s.trials.len() - 1,
            forward: stats(report.forward.as_ref())?,
            reverse: stats(report.reverse.as_ref())?,
            samples: cfg.keep_samples.then(|| LatencySamples {
                forward: samples(report.forward.as_ref()),
                reverse: samples(report.reverse.as_ref()),
            }),
        });
    }
    let forward = summarise(runs.iter().filter_map(|r| r.forward.as_ref()).collect());
    let reverse = summarise(runs.iter().filter_map(|r| r.reverse.as_ref()).collect());
    Ok(LatencyResult {
        frame_size: cfg.trial.frame_size,
        rate: cfg.rate,
        tags,
        delay_s: cfg.delay_s,
        duration_s: cfg.trial.duration_s,
        runs,
        forward,
        reverse,
        trial_seconds: s.trial_seconds,
        elapsed_s: s.elapsed_s,
        trials: s.trials,
    })
}
