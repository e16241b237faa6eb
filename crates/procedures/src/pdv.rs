//! Packet delay variation (RFC 8219 section 7.3.1) and inter-packet delay variation (section
//! 7.3.2): trials at a given rate (normally the throughput) in which the engine measures the
//! one-way delay of every frame (`TrialSpec::pdv`); per direction PDV = 99.9th percentile -
//! minimum of the delays, and IPDV minimum, median and maximum. RFC 8219 asks for 60 s trials
//! repeated at least 20 times and reports the median; so does this, per direction.
//!
//! With a frame timeout above 0 it is siitperf-pdv's special test instead: a frame later than
//! the timeout counts as lost, and each trial passes or fails like a throughput trial. (The
//! throughput and frame-loss commands take `--frame-timeout` for the search and the sweep.)
//!
//! The engine records the delays ([`xlat_trial::PdvReport`]); the statistics are computed here
//! ([`xlat_results::delay::PdvDetail`]). The procedure is a repetition of one trial through the shared
//! `Session`: an invalid trial is retried and never judged or summarised; one that stays
//! invalid after the retries ends the test with [`ProcedureError::TesterLimit`] (the rate is fixed:
//! there is no lower one to go on with).

use serde::{Deserialize, Serialize};
pub use xlat_results::pdv::{PdvDirection, PdvResult, PdvRun, PdvSummary};
use xlat_trial::{PdvSpec, TrialSpec};

use crate::error::ProcedureError;
use crate::latency::median_delay;
use crate::runner::{Progress, TrialRunner};
use crate::trial::Session;
use xlat_results::delay::{Delay, IpdvStats};
use xlat_results::Procedure;

/// RFC 8219 section 7.3: at least 20 repetitions.
pub const DEFAULT_PDV_REPETITIONS: u32 = Procedure::Pdv.defaults().repetitions;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PdvConfig {
    /// Frame size, rate, duration (60 s), timeout; `pdv` is set from the fields below.
    pub trial: TrialSpec,
    /// A frame later than this counts as lost (ms); 0: the PDV measurement.
    pub frame_timeout_ms: u64,
    /// Keep every delay (exact percentiles) instead of the bounded-memory histogram.
    pub exact: bool,
    pub repetitions: u32,
    pub retries: u32,
}

impl PdvConfig {
    pub fn validate(&self) -> Result<(), ProcedureError> {
        let t = &self.trial;
        if !(t.duration_s.is_finite() && t.duration_s > 0.0) {
            return Err(ProcedureError::Config(format!(
                "the trial duration must be above 0 s, not {}",
                t.duration_s
            )));
        }
        if t.rate == 0 {
            return Err(ProcedureError::Config("the PDV test needs a rate above 0 frames/s".into()));
        }
        if t.frames() == 0 {
            return Err(ProcedureError::Config("the trial sends no frame".into()));
        }
        if self.repetitions == 0 {
            return Err(ProcedureError::Config("the PDV test needs at least 1 repetition".into()));
        }
        Ok(())
    }

    fn spec(&self) -> TrialSpec {
        TrialSpec {
            latency: None,
            rate_change: None,
            pdv: Some(PdvSpec {
                frame_timeout_ms: self.frame_timeout_ms,
                exact: self.exact,
            }),
            ..self.trial.clone()
        }
    }
}

fn median_i64(v: Vec<i64>) -> Option<i64> {
    xlat_results::repeat::median_of(&v, |a, b| ((i128::from(a) + i128::from(b)) / 2) as i64)
}

fn summarise(dirs: Vec<&PdvDirection>) -> Option<PdvSummary> {
    if dirs.is_empty() {
        return None;
    }
    let pdvs: Vec<Delay> = dirs.iter().filter_map(|d| d.pdv.as_ref().map(|p| p.pdv)).collect();
    let ipdv = |f: fn(&IpdvStats) -> i64| median_i64(dirs.iter().filter_map(|d| d.ipdv.as_ref().map(f)).collect());
    Some(PdvSummary {
        pdv: median_delay(&pdvs),
        ipdv_min_ns: ipdv(|s| s.min_ns),
        ipdv_median_ns: ipdv(|s| s.median_ns),
        ipdv_max_ns: ipdv(|s| s.max_ns),
    })
}

/// Run the PDV test (or siitperf-pdv's frame-timeout test).
pub fn pdv(runner: &mut dyn TrialRunner, cfg: &PdvConfig, progress: &mut dyn Progress) -> Result<PdvResult, ProcedureError> {
    cfg.validate()?;
    let spec = cfg.spec();
    let per_trial = spec.duration_s + spec.timeout_ms as f64 / 1000.0;
    let mut s = Session::new(runner, progress, "pdv", cfg.retries);
    let mut runs = Vec::new();
    for rep in 0..cfg.repetitions as usize {
        s.announce(
            &format!("repetition {}", rep + 1),
            spec.rate,
            spec.rate,
            spec.rate,
            Some((cfg.repetitions as usize - rep) as f64 * per_trial),
        );
        let (report, pass) = s.run_valid(&spec, "pdv", 0.0)?;
        let forward = report.forward.as_ref().map(PdvDirection::of);
        let reverse = report.reverse.as_ref().map(PdvDirection::of);
        if cfg.frame_timeout_ms == 0 {
            for (name, d) in [("forward", &forward), ("reverse", &reverse)] {
                if d.as_ref().is_some_and(|d| d.pdv.is_none()) {
                    return Err(ProcedureError::Report(format!(
                        "the {name} direction of the trial has no PDV statistics (the engine did not measure per-frame delays)"
                    )));
                }
            }
        }
        runs.push(PdvRun {
            repetition: rep,
            trial: s.trials.len() - 1,
            pass,
            forward,
            reverse,
        });
    }
    Ok(PdvResult {
        frame_size: spec.frame_size,
        rate: spec.rate,
        duration_s: spec.duration_s,
        frame_timeout_ms: cfg.frame_timeout_ms,
        exact: cfg.exact,
        forward: summarise(runs.iter().filter_map(|r| r.forward.as_ref()).collect()),
        reverse: summarise(runs.iter().filter_map(|r| r.reverse.as_ref()).collect()),
        runs,
        trial_seconds: s.trial_seconds,
        elapsed_s: s.elapsed_s,
        trials: s.trials,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NoProgress;
    use xlat_results::record::TrialRecord;
    use xlat_results::result::BenchResult;
    use xlat_testkit::fake::Fake;
    use xlat_trial::delay::{DelayRecorder, IpdvRecorder};
    use xlat_trial::DirectionReport;
    use xlat_trial::{PdvReport, TrialReport};

    /// What the engine records for `frames` frames of which none is lost: a delay of 10 us, the
    /// highest two `pdv_ns` more (so that the 99.9th percentile of 1000 frames is that), and
    /// IPDV samples from -`swing_ns` to +`swing_ns` with a median of 0.
    fn recorded(frames: u64, pdv_ns: u64, swing_ns: u64) -> PdvReport {
        let mut delays = DelayRecorder::exact();
        for i in 0..frames {
            delays.record(if i + 2 >= frames { 10_000 + pdv_ns } else { 10_000 });
        }
        let mut ipdv = IpdvRecorder::exact();
        for i in 0..frames {
            ipdv.record(if i == frames / 2 { 10_000 + swing_ns } else { 10_000 });
        }
        PdvReport {
            delays,
            ipdv,
            timed: frames,
            ..Default::default()
        }
    }

    /// Both directions of `spec` without loss, with `pdv` recorded.
    fn lossless(spec: &TrialSpec, pdv: Option<PdvReport>) -> TrialReport {
        let d = DirectionReport {
            counts: xlat_trial::DirectionCounts {
                sent: spec.frames(),
                received: spec.frames(),
                ..Default::default()
            },
            pdv,
            ..Default::default()
        };
        TrialReport {
            forward: Some(d.clone()),
            reverse: Some(d),
            ..TrialReport::of(spec)
        }
    }

    /// Fixed PDV statistics (`pdv_ns`), an IPDV swing of 1000 ns per call; with `invalid_first`
    /// the first trial invalid.
    fn fixed(pdv_ns: u64, invalid_first: bool) -> Fake<'static> {
        let mut calls = 0u64;
        Fake::new(move |spec| {
            calls += 1;
            let mut r = lossless(spec, Some(recorded(spec.frames(), pdv_ns, calls * 1000)));
            if invalid_first && calls == 1 {
                r.invalidate("late".into());
            }
            Ok(r)
        })
    }

    fn config(reps: u32) -> PdvConfig {
        PdvConfig {
            trial: TrialSpec::new(84, 1000, 1.0, 10),
            frame_timeout_ms: 0,
            exact: false,
            repetitions: reps,
            retries: 2,
        }
    }

    #[test]
    fn medians_over_repetitions_and_retry_of_invalid_trials() {
        let mut f = fixed(5000, true);
        let r = pdv(&mut f, &config(3), &mut NoProgress).unwrap();
        assert_eq!(f.asked.len(), 4);
        assert_eq!(r.trials.len(), 4);
        assert_eq!(r.runs.len(), 3);
        assert_eq!(r.runs[0].trial, 1);
        let fwd = r.forward.as_ref().unwrap();
        assert_eq!(fwd.pdv, Some(Delay(5000)));
        // IPDV minimum of runs 2, 3, 4 (calls): -2000, -3000, -4000: median -3000.
        assert_eq!(fwd.ipdv_min_ns, Some(-3000));
        assert_eq!(fwd.ipdv_max_ns, Some(3000));
        let m: std::collections::BTreeMap<String, f64> = r.metrics().into_iter().collect();
        assert_eq!(m["forward_pdv_ms"], 0.005);
        assert!(r.human_table().contains("Forward PDV (median): 0.005000 ms"));
    }

    /// Valid trials: no loss, PDV 5 us. Calls (from 0) in `invalid`: invalid, with half the
    /// frames lost and a PDV of 1 s, which would show if they were used. `interrupt_at`: that
    /// call reports a Ctrl-C.
    fn poisoned(invalid: Vec<u64>, interrupt_at: Option<u64>) -> Fake<'static> {
        let mut n = 0u64;
        Fake::new(move |spec| {
            let call = n;
            n += 1;
            if interrupt_at == Some(call) {
                return Err(xlat_trial::TrialError::interrupted());
            }
            if !invalid.contains(&call) {
                return Ok(lossless(spec, Some(recorded(spec.frames(), 5000, 0))));
            }
            let mut r = lossless(spec, Some(recorded(spec.frames(), 1_000_000_000, 0)));
            for d in [&mut r.forward, &mut r.reverse].into_iter().flatten() {
                d.counts.received = spec.frames() / 2;
                d.counts.lost = spec.frames() - spec.frames() / 2;
            }
            r.invalidate("injected".into());
            Ok(r)
        })
    }

    #[test]
    fn invalid_trials_are_listed_but_never_judged_or_summarised() {
        for timeout in [0, 10] {
            let mut f = poisoned(vec![0, 2, 3], None);
            let mut c = config(3);
            c.frame_timeout_ms = timeout;
            let r = pdv(&mut f, &c, &mut NoProgress).unwrap();
            assert_eq!(r.trials.len(), 6);
            let invalid: Vec<&TrialRecord> = r.trials.iter().filter(|t| !t.valid).collect();
            assert_eq!(invalid.len(), 3);
            assert!(invalid.iter().all(|t| t.pass.is_none() && !t.tester_bound));
            assert_eq!(r.runs.iter().map(|x| x.trial).collect::<Vec<_>>(), vec![1, 4, 5]);
            // Only the valid trials: no loss, PDV 5 us.
            assert!(r.runs.iter().all(|x| x.pass && x.forward.as_ref().unwrap().lost == 0));
            assert_eq!(r.forward.as_ref().unwrap().pdv, Some(Delay(5000)));
            assert!(r.trials.iter().filter(|t| t.valid).all(|t| t.pass == Some(true)));
        }
    }

    #[test]
    fn a_rate_that_stays_invalid_is_an_error_and_an_interruption_keeps_the_trials() {
        let mut f = poisoned(vec![1, 2, 3], None);
        let e = pdv(&mut f, &config(3), &mut NoProgress).unwrap_err();
        assert!(
            matches!(
                &e,
                ProcedureError::TesterLimit {
                    rate: 1000,
                    attempts: 3,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("cannot send even at 1000 frames/s"), "{e}");
        let mut f = poisoned(vec![1], Some(3));
        match pdv(&mut f, &config(5), &mut NoProgress) {
            Err(ProcedureError::Interrupted { trials }) => {
                assert_eq!(trials.len(), 3);
                assert_eq!(trials.iter().map(|t| t.valid).collect::<Vec<_>>(), vec![true, false, true]);
            }
            r => panic!("{r:?}"),
        }
    }

    #[test]
    fn missing_statistics_are_an_error_not_zero() {
        let mut no_pdv = Fake::new(|spec| Ok(lossless(spec, None)));
        let e = pdv(&mut no_pdv, &config(1), &mut NoProgress).unwrap_err();
        assert!(e.to_string().contains("no PDV statistics"), "{e}");
        let mut c = config(1);
        c.frame_timeout_ms = 10;
        let r = pdv(&mut no_pdv, &c, &mut NoProgress).unwrap();
        assert!(r.runs[0].pass);
    }
}
