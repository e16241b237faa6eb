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
//! The procedure itself is a repetition of one trial with the common invalid-trial rule: an
//! invalid trial is retried and never judged or summarised; one that stays invalid after the
//! retries ends the test with [`BenchError::TesterLimit`] (the rate is fixed: there is no lower
//! one to go on with). It lives here until the bench crate has a PDV procedure of its own.

use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use xlat_bench::delay::{Delay, IpdvStats, PdvStats};
use xlat_bench::latency::median_delay;
use xlat_bench::output::{group, text_table};
use xlat_bench::{judge, BenchError, BenchResult, Progress, ProgressEvent, TrialRecord, TrialRunner};
use xlat_engine::{DirectionReport, PdvReport, PdvSpec, TrialSpec};

/// RFC 8219 section 7.3: at least 20 repetitions.
pub const DEFAULT_PDV_REPETITIONS: u32 = 20;

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
    pub fn validate(&self) -> Result<(), BenchError> {
        let t = &self.trial;
        if !(t.duration_s.is_finite() && t.duration_s > 0.0) {
            return Err(BenchError::Config(format!(
                "the trial duration must be above 0 s, not {}",
                t.duration_s
            )));
        }
        if t.rate == 0 {
            return Err(BenchError::Config("the PDV test needs a rate above 0 frames/s".into()));
        }
        if t.frames() == 0 {
            return Err(BenchError::Config("the trial sends no frame".into()));
        }
        if self.repetitions == 0 {
            return Err(BenchError::Config("the PDV test needs at least 1 repetition".into()));
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

/// One direction of one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PdvDirection {
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    /// Frames later than the frame timeout (counted as lost).
    pub late: u64,
    /// Frames the tester itself failed to send after its backend accepted them.
    #[serde(default)]
    pub tester_tx_dropped: u64,
    /// Frames the tester's receiving port dropped before its receiver saw them.
    #[serde(default)]
    pub tester_rx_dropped: u64,
    /// PDV (RFC 8219 s.7.3.1): minimum, 99.9th percentile and their difference.
    pub pdv: Option<PdvStats>,
    /// IPDV (RFC 8219 s.7.3.2): minimum, median, maximum.
    pub ipdv: Option<IpdvStats>,
    /// The engine's report as is (CDF points, relative error, exact mode).
    pub report: Option<PdvReport>,
}

impl PdvDirection {
    fn of(d: &DirectionReport) -> PdvDirection {
        PdvDirection {
            sent: d.sent,
            received: d.received,
            lost: d.lost,
            late: d.pdv.as_ref().map_or(0, |p| p.late),
            tester_tx_dropped: d.tester_tx_dropped,
            tester_rx_dropped: d.tester_rx_dropped,
            pdv: d.pdv.as_ref().and_then(|p| p.pdv.clone()),
            ipdv: d.pdv.as_ref().and_then(|p| p.ipdv.clone()),
            report: d.pdv.clone(),
        }
    }

    pub fn loss_percent(&self) -> Option<f64> {
        (self.sent > 0).then(|| self.sent.saturating_sub(self.received) as f64 * 100.0 / self.sent as f64)
    }
}

/// One repetition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PdvRun {
    pub repetition: usize,
    /// Index of the valid trial in `trials`.
    pub trial: usize,
    /// Frame-timeout mode: no direction lost a frame (late ones included).
    pub pass: bool,
    pub forward: Option<PdvDirection>,
    pub reverse: Option<PdvDirection>,
}

/// Medians over the repetitions of one direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PdvSummary {
    /// Median of the PDVs; `None` if no run had one.
    pub pdv: Option<Delay>,
    pub ipdv_min_ns: Option<i64>,
    pub ipdv_median_ns: Option<i64>,
    pub ipdv_max_ns: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PdvResult {
    pub frame_size: usize,
    pub rate: u64,
    pub duration_s: f64,
    pub frame_timeout_ms: u64,
    pub exact: bool,
    pub runs: Vec<PdvRun>,
    pub forward: Option<PdvSummary>,
    pub reverse: Option<PdvSummary>,
    pub trial_seconds: f64,
    pub elapsed_s: f64,
    pub trials: Vec<TrialRecord>,
}

fn median_i64(mut v: Vec<i64>) -> Option<i64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        ((i128::from(v[n / 2 - 1]) + i128::from(v[n / 2])) / 2) as i64
    })
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
pub fn pdv(runner: &mut dyn TrialRunner, cfg: &PdvConfig, progress: &mut dyn Progress) -> Result<PdvResult, BenchError> {
    cfg.validate()?;
    let spec = cfg.spec();
    let per_trial = spec.duration_s + spec.timeout_ms as f64 / 1000.0;
    let mut trials: Vec<TrialRecord> = Vec::new();
    let mut runs = Vec::new();
    let (mut elapsed_s, mut trial_seconds, mut step) = (0.0, 0.0, 0);
    for rep in 0..cfg.repetitions as usize {
        let phase = format!("repetition {}", rep + 1);
        let mut reasons = Vec::new();
        let mut valid = None;
        for attempt in 1..=cfg.retries.saturating_add(1) {
            step += 1;
            progress.step(&ProgressEvent {
                procedure: "pdv",
                phase: &phase,
                step,
                rate: spec.rate,
                low: spec.rate,
                high: spec.rate,
                elapsed_s,
                remaining_s: Some((cfg.repetitions as usize - rep) as f64 * per_trial),
            });
            let report = match runner.run(&spec) {
                Ok(r) => r,
                Err(BenchError::Interrupted { .. }) => return Err(BenchError::Interrupted { trials }),
                Err(e) => return Err(e),
            };
            elapsed_s += per_trial;
            trial_seconds += spec.duration_s;
            let verdict = judge(&report, 0.0)?;
            let mut record = TrialRecord::from_report(trials.len(), "pdv", attempt, &spec, &report, verdict);
            record.tester_bound = verdict.is_none() && attempt == cfg.retries.saturating_add(1);
            progress.trial("pdv", &record);
            trials.push(record);
            match verdict {
                Some(pass) => {
                    valid = Some((report, pass));
                    break;
                }
                None => reasons.clone_from(&report.invalid_reasons),
            }
        }
        let Some((report, pass)) = valid else {
            return Err(BenchError::TesterLimit {
                rate: spec.rate,
                attempts: cfg.retries.saturating_add(1),
                reasons: reasons.join("; "),
            });
        };
        if cfg.frame_timeout_ms == 0 {
            if let Some((name, _)) = report
                .directions()
                .find(|(_, d)| d.pdv.as_ref().and_then(|p| p.pdv.as_ref()).is_none())
            {
                return Err(BenchError::Report(format!(
                    "the {name} direction of the trial has no PDV statistics (the engine did not measure per-frame delays)"
                )));
            }
        }
        runs.push(PdvRun {
            repetition: rep,
            trial: trials.len() - 1,
            pass,
            forward: report.forward.as_ref().map(PdvDirection::of),
            reverse: report.reverse.as_ref().map(PdvDirection::of),
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
        trial_seconds,
        elapsed_s,
        trials,
    })
}

fn ms(ns: Option<i64>) -> String {
    ns.map_or("-".into(), |v| format!("{:.6}", v as f64 / 1.0e6))
}

impl BenchResult for PdvResult {
    fn procedure(&self) -> &'static str {
        "pdv"
    }

    fn trials(&self) -> &[TrialRecord] {
        &self.trials
    }

    fn metrics(&self) -> Vec<(String, f64)> {
        let mut m = Vec::new();
        for (name, s) in [("forward", &self.forward), ("reverse", &self.reverse)] {
            let Some(s) = s else { continue };
            if let Some(p) = s.pdv {
                m.push((format!("{name}_pdv_ms"), p.ms()));
            }
            for (k, v) in [("min", s.ipdv_min_ns), ("median", s.ipdv_median_ns), ("max", s.ipdv_max_ns)] {
                if let Some(v) = v {
                    m.push((format!("{name}_ipdv_{k}_ms"), v as f64 / 1.0e6));
                }
            }
        }
        if self.frame_timeout_ms > 0 {
            for (name, pick) in [("forward", 0), ("reverse", 1)] {
                let loss: Vec<f64> = self
                    .runs
                    .iter()
                    .filter_map(|r| if pick == 0 { r.forward.as_ref() } else { r.reverse.as_ref() })
                    .filter_map(PdvDirection::loss_percent)
                    .collect();
                if !loss.is_empty() {
                    m.push((format!("{name}_loss_percent"), loss.iter().sum::<f64>() / loss.len() as f64));
                }
            }
        }
        m
    }

    fn human_table(&self) -> String {
        let mut s = if self.frame_timeout_ms > 0 {
            format!(
                "Frame timeout test (siitperf-pdv), frame size {}, {} fps for {} s, a frame later than {} ms is lost, {} repetitions\n",
                self.frame_size,
                group(self.rate),
                self.duration_s,
                self.frame_timeout_ms,
                self.runs.len()
            )
        } else {
            format!(
                "PDV and IPDV, frame size {}, {} fps for {} s, {} repetitions{}\n",
                self.frame_size,
                group(self.rate),
                self.duration_s,
                self.runs.len(),
                if self.exact { " (exact)" } else { "" }
            )
        };
        for (name, sum) in [("Forward", &self.forward), ("Reverse", &self.reverse)] {
            if let Some(sum) = sum {
                let pdv = sum.pdv.map_or("-".to_string(), |d| d.to_string());
                let _ = writeln!(
                    s,
                    "{name} PDV (median): {pdv}   IPDV min/median/max (medians): {} / {} / {} ms",
                    ms(sum.ipdv_min_ns),
                    ms(sum.ipdv_median_ns),
                    ms(sum.ipdv_max_ns)
                );
            }
        }
        s.push('\n');
        let cell_pdv = |d: &Option<PdvDirection>| {
            d.as_ref()
                .and_then(|d| d.pdv.as_ref())
                .map_or("-".to_string(), |p| p.pdv.to_string())
        };
        let cell_ipdv = |d: &Option<PdvDirection>| {
            d.as_ref().and_then(|d| d.ipdv.as_ref()).map_or("-".to_string(), |i| {
                format!("{} / {} / {}", ms(Some(i.min_ns)), ms(Some(i.median_ns)), ms(Some(i.max_ns)))
            })
        };
        let lost = |d: &Option<PdvDirection>| {
            d.as_ref().map_or("-".to_string(), |d| {
                format!(
                    "{} ({} late; tester dropped: tx {}, rx {})",
                    d.lost, d.late, d.tester_tx_dropped, d.tester_rx_dropped
                )
            })
        };
        let rows: Vec<Vec<String>> = self
            .runs
            .iter()
            .map(|r| {
                vec![
                    (r.repetition + 1).to_string(),
                    cell_pdv(&r.forward),
                    cell_ipdv(&r.forward),
                    lost(&r.forward),
                    cell_pdv(&r.reverse),
                    cell_ipdv(&r.reverse),
                    lost(&r.reverse),
                    if r.pass { "pass".into() } else { "fail".into() },
                ]
            })
            .collect();
        s.push_str(&text_table(
            &[
                "run",
                "fwd PDV",
                "fwd IPDV min/med/max (ms)",
                "fwd lost",
                "rev PDV",
                "rev IPDV min/med/max (ms)",
                "rev lost",
                "loss",
            ],
            &rows,
        ));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlat_engine::TrialReport;

    /// A runner that returns fixed PDV statistics.
    struct Fake {
        pdv_ns: u64,
        calls: usize,
        invalid_first: bool,
    }

    impl TrialRunner for Fake {
        fn run(&mut self, spec: &TrialSpec) -> Result<TrialReport, BenchError> {
            self.calls += 1;
            let frames = spec.frames();
            let d = DirectionReport {
                sent: frames,
                received: frames,
                pdv: Some(PdvReport {
                    pdv: Some(PdvStats {
                        frames,
                        lost: 0,
                        min: Delay(10_000),
                        p99_9: Delay(10_000 + self.pdv_ns),
                        pdv: Delay(self.pdv_ns),
                        relative_error: 0.0,
                    }),
                    ipdv: Some(IpdvStats {
                        pairs: frames - 1,
                        min_ns: -(self.calls as i64) * 1000,
                        median_ns: 0,
                        max_ns: self.calls as i64 * 1000,
                        relative_error: 0.0,
                    }),
                    timed: frames,
                    ..Default::default()
                }),
                ..Default::default()
            };
            let valid = !(self.invalid_first && self.calls == 1);
            Ok(TrialReport {
                valid,
                invalid_reasons: if valid { vec![] } else { vec!["late".into()] },
                forward: Some(d.clone()),
                reverse: Some(d),
                ..Default::default()
            })
        }
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
        let mut f = Fake {
            pdv_ns: 5000,
            calls: 0,
            invalid_first: true,
        };
        let r = pdv(&mut f, &config(3), &mut xlat_bench::NoProgress).unwrap();
        assert_eq!(f.calls, 4);
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

    /// Valid trials: no loss, PDV 5 us. Calls in `invalid`: invalid, with half the frames lost
    /// and a PDV of 1 s, which would show if they were used. `interrupt_at`: that call reports
    /// a Ctrl-C.
    struct Poisoned {
        calls: usize,
        invalid: Vec<usize>,
        interrupt_at: Option<usize>,
    }

    impl TrialRunner for Poisoned {
        fn run(&mut self, spec: &TrialSpec) -> Result<TrialReport, BenchError> {
            let n = self.calls;
            self.calls += 1;
            if self.interrupt_at == Some(n) {
                return Err(BenchError::Interrupted { trials: Vec::new() });
            }
            let bad = self.invalid.contains(&n);
            let frames = spec.frames();
            let pdv_ns = if bad { 1_000_000_000 } else { 5000 };
            let d = DirectionReport {
                sent: frames,
                received: if bad { frames / 2 } else { frames },
                lost: if bad { frames - frames / 2 } else { 0 },
                pdv: Some(PdvReport {
                    pdv: Some(PdvStats {
                        frames,
                        lost: 0,
                        min: Delay(10_000),
                        p99_9: Delay(10_000 + pdv_ns),
                        pdv: Delay(pdv_ns),
                        relative_error: 0.0,
                    }),
                    timed: frames,
                    ..Default::default()
                }),
                ..Default::default()
            };
            Ok(TrialReport {
                valid: !bad,
                invalid_reasons: if bad { vec!["injected".into()] } else { vec![] },
                forward: Some(d.clone()),
                reverse: Some(d),
                ..Default::default()
            })
        }
    }

    #[test]
    fn invalid_trials_are_listed_but_never_judged_or_summarised() {
        for timeout in [0, 10] {
            let mut f = Poisoned {
                calls: 0,
                invalid: vec![0, 2, 3],
                interrupt_at: None,
            };
            let mut c = config(3);
            c.frame_timeout_ms = timeout;
            let r = pdv(&mut f, &c, &mut xlat_bench::NoProgress).unwrap();
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
        let mut f = Poisoned {
            calls: 0,
            invalid: vec![1, 2, 3],
            interrupt_at: None,
        };
        let e = pdv(&mut f, &config(3), &mut xlat_bench::NoProgress).unwrap_err();
        assert!(
            matches!(
                &e,
                BenchError::TesterLimit {
                    rate: 1000,
                    attempts: 3,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("cannot send even at 1000 frames/s"), "{e}");
        let mut f = Poisoned {
            calls: 0,
            invalid: vec![1],
            interrupt_at: Some(3),
        };
        match pdv(&mut f, &config(5), &mut xlat_bench::NoProgress) {
            Err(BenchError::Interrupted { trials }) => {
                assert_eq!(trials.len(), 3);
                assert_eq!(trials.iter().map(|t| t.valid).collect::<Vec<_>>(), vec![true, false, true]);
            }
            r => panic!("{r:?}"),
        }
    }

    #[test]
    fn missing_statistics_are_an_error_not_zero() {
        struct NoPdv;
        impl TrialRunner for NoPdv {
            fn run(&mut self, spec: &TrialSpec) -> Result<TrialReport, BenchError> {
                Ok(TrialReport {
                    valid: true,
                    forward: Some(DirectionReport {
                        sent: spec.frames(),
                        received: spec.frames(),
                        ..Default::default()
                    }),
                    ..Default::default()
                })
            }
        }
        let e = pdv(&mut NoPdv, &config(1), &mut xlat_bench::NoProgress).unwrap_err();
        assert!(e.to_string().contains("no PDV statistics"), "{e}");
        let mut c = config(1);
        c.frame_timeout_ms = 10;
        let r = pdv(&mut NoPdv, &c, &mut xlat_bench::NoProgress).unwrap();
        assert!(r.runs[0].pass);
    }
}
