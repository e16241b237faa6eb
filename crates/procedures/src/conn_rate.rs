//! Maximum connection establishment rate (RFC 9693 section 4.4, siitperf's
//! `binary-rate-alg.sh-R`): a binary search on the preliminary phase's rate R with N = M
//! connections. A step runs phase 1 alone ([`TrialRunner::run_preliminary`]); it passes when
//! every phase 1 frame arrived and the state table filled (every connection made it through
//! the DUT and was learnt), and, with validation, when every frame the Responder then sent to
//! the learnt tuples came back through the DUT (RFC 9693's validation: a connection the DUT
//! dropped from its table, as Linux conntrack does when its table is full, fails it). A step
//! whose phase 1 sender was late, or in which the tester dropped frames, is invalid: retried,
//! and if it stays invalid it bounds the search from above as the tester's limit. The result
//! is the highest rate that passed, not the last one tried (siitperf's scripts print the
//! last).
//!
//! The search itself ([`search`]) is also the step of the table capacity search
//! (`crate::capacity`). The DUT's table must be empty before each step: the runner's
//! `dut.before_trial` command does that (the lab presets it).

use serde::{Deserialize, Serialize};
pub use xlat_results::conn_rate::ConnRateResult;
use xlat_trial::{PreliminarySpec, SendLag, TrialReport};

use crate::error::{config, ProcedureError};
use crate::runner::{Progress, ProgressEvent, TrialRunner};
use xlat_results::record::TrialRecord;
use xlat_results::text::group;

/// What to search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnRateConfig {
    pub frame_size: usize,
    /// N = M: connections opened in each step.
    pub connections: u64,
    /// The highest rate tried (first), frames (= connections) per second.
    pub max_rate: u64,
    /// The search stops when the interval is at most this wide, frames/s.
    pub error: u64,
    /// T: milliseconds the Responder keeps receiving after phase 1 sending ended.
    pub timeout_ms: u64,
    /// Invalid steps are run again this often before they bound the search.
    pub retries: u32,
    /// Validate every step: the Responder sends once to every learnt tuple at this multiple
    /// of the step's rate (cttc.sh's alpha), and all must come back. `None`: no validation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<f64>,
    /// The accelerated variant: searches with fewer connections first (see
    /// [`Accelerated`]); `None`: one binary search with N connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accelerated: Option<Accelerated>,
    /// The tester's lag bound and catch-up pace, in every trial this builds.
    #[serde(default, skip_serializing_if = "SendLag::is_none")]
    pub send_lag: SendLag,
}

/// The accelerated search (in the spirit of MLRsearch, whose phases lengthen the trials: here
/// a step's length is N / R, so the phases grow N). Phase i of `phases` searches with
/// `initial_connections` x (N / initial_connections)^(i / (phases - 1)) connections to an
/// error of `error` x 2^(phases - 1 - i); each phase starts at the rate the previous one found
/// (and, if that fails, one previous error lower), within the previous phase's upper bound. Only
/// the last phase, with N connections, gives the result.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Accelerated {
    pub initial_connections: u64,
    pub phases: u32,
}

impl ConnRateConfig {
    pub fn validate(&self) -> Result<(), ProcedureError> {
        if self.connections == 0 {
            return config("--connections must be at least 1");
        }
        if self.max_rate == 0 {
            return config("--max-rate must be above 0 connections/s");
        }
        if self.error == 0 || self.error >= self.max_rate {
            return config(format!(
                "--error {} must be above 0 and below --max-rate {}",
                self.error, self.max_rate
            ));
        }
        if let Some(a) = self.validation {
            if !(a > 0.0 && a.is_finite()) {
                return config(format!("the validation rate factor {a} must be above 0"));
            }
        }
        if let Some(a) = self.accelerated {
            if a.initial_connections == 0 || a.initial_connections > self.connections || !(2..=10).contains(&a.phases) {
                return config(format!(
                    "the accelerated search needs 1 <= --initial-connections {} <= --connections {} and 2 to 10 --phases, not {}",
                    a.initial_connections, self.connections, a.phases
                ));
            }
        }
        Ok(())
    }
}

/// True when the step says nothing about the DUT: the tester was late or dropped frames.
fn tester_invalid(r: &TrialReport) -> bool {
    r.invalid_reasons
        .iter()
        .any(|x| !x.starts_with("Failed to fill state table") && !x.contains("onto 4-tuples it had already used"))
}

/// Every phase 1 frame arrived, the table filled, no two connections on one tuple; with
/// `validated`, every validation frame came back too.
fn established(r: &TrialReport, validated: bool) -> bool {
    let phase1 = r
        .preliminary
        .as_ref()
        .is_some_and(|p| p.received >= p.frames && p.table_filled() && p.duplicate_tuples.unwrap_or(0) == 0);
    let back = r.directions().all(|(_, d)| d.counts.sent > 0 && d.counts.received >= d.counts.sent);
    phase1 && (!validated || (r.directions().count() == 1 && back))
}

/// One binary search on phase 1's rate at a fixed number of connections.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Search<'a> {
    /// The procedure and the label of this search's steps, for the progress and the records.
    pub procedure: &'static str,
    pub label: &'a str,
    pub frame_size: usize,
    pub connections: u64,
    /// The highest rate: the search's upper bound.
    pub max_rate: u64,
    /// The rate tried first (`max_rate` for a plain search).
    pub first: u64,
    /// After the first rate failed, go down by this much, doubling the step after every
    /// failure, until a rate passes (then bisect); `None`: bisect from the start.
    pub step_down: Option<u64>,
    pub error: u64,
    pub timeout_ms: u64,
    pub retries: u32,
    pub validation: Option<f64>,
    /// Give up as soon as a step below this rate fails (cttc.sh's stop rate): the search then
    /// only says "below".
    pub stop_below: u64,
    pub send_lag: SendLag,
}

/// What one search found.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Found {
    /// The highest passing rate.
    pub rate: Option<u64>,
    /// The lowest rate the tester could not send at.
    pub tester_bound: Option<u64>,
    /// The lowest rate that failed or was tester-bound (the search's final upper bound).
    pub high: u64,
}

/// Run one search; its steps are appended to `trials`, `elapsed_s` grows by their time.
pub(crate) fn search(
    runner: &mut dyn TrialRunner,
    s: &Search<'_>,
    trials: &mut Vec<TrialRecord>,
    elapsed_s: &mut f64,
    progress: &mut dyn Progress,
) -> Result<Found, ProcedureError> {
    let (mut low, mut high) = (0u64, s.max_rate);
    let mut found = Found::default();
    let mut rate = s.first.clamp(1, s.max_rate);
    let mut step_down = s.step_down.filter(|w| *w > 0);
    loop {
        let spec = s
            .send_lag
            .apply(PreliminarySpec::alone(s.frame_size, s.connections, rate, s.timeout_ms));
        let vrate = s.validation.map(|a| ((rate as f64 * a).round() as u64).max(1));
        let mut verdict = None;
        for attempt in 1..=s.retries.saturating_add(1) {
            progress.step(&ProgressEvent {
                procedure: s.procedure,
                phase: s.label,
                step: trials.len() + 1,
                rate,
                low,
                high,
                elapsed_s: *elapsed_s,
                remaining_s: None,
            });
            let report = runner.run_preliminary(&spec, vrate)?;
            *elapsed_s += s.connections as f64 / rate as f64
                + vrate.map_or(0.0, |v| s.connections as f64 / v as f64 + s.timeout_ms as f64 / 1000.0)
                + s.timeout_ms as f64 / 1000.0;
            let v = (!tester_invalid(&report)).then(|| established(&report, vrate.is_some()));
            let mut record = TrialRecord::from_report(trials.len(), s.label, attempt, &spec, &report, v);
            record.rate = rate;
            record.frames = s.connections;
            record.duration_s = s.connections as f64 / rate as f64;
            record.tester_bound = v.is_none() && attempt == s.retries.saturating_add(1);
            progress.trial(s.procedure, &record);
            trials.push(record);
            if v.is_some() {
                verdict = v;
                break;
            }
        }
        match verdict {
            Some(true) => {
                found.rate = Some(found.rate.map_or(rate, |b| b.max(rate)));
                low = rate;
            }
            Some(false) => high = rate,
            None => {
                found.tester_bound = Some(found.tester_bound.map_or(rate, |b| b.min(rate)));
                high = rate;
            }
        }
        if verdict == Some(false) && rate < s.stop_below {
            break;
        }
        if high.saturating_sub(low) <= s.error {
            break;
        }
        if verdict == Some(true) {
            step_down = None;
        }
        rate = match step_down {
            Some(w) if high.saturating_sub(w) > low => {
                step_down = Some(w.saturating_mul(2));
                high - w
            }
            _ => low + (high - low) / 2,
        };
        if rate == 0 {
            break;
        }
    }
    found.high = high;
    Ok(found)
}

/// Search the maximum connection establishment rate.
pub fn conn_rate(
    runner: &mut dyn TrialRunner,
    cfg: &ConnRateConfig,
    progress: &mut dyn Progress,
) -> Result<ConnRateResult, ProcedureError> {
    cfg.validate()?;
    let mut trials: Vec<TrialRecord> = Vec::new();
    let s = Search {
        procedure: "conn-rate",
        label: "search",
        frame_size: cfg.frame_size,
        connections: cfg.connections,
        max_rate: cfg.max_rate,
        first: cfg.max_rate,
        step_down: None,
        error: cfg.error,
        timeout_ms: cfg.timeout_ms,
        retries: cfg.retries,
        validation: cfg.validation,
        stop_below: 0,
        send_lag: cfg.send_lag,
    };
    let mut elapsed_s = 0.0;
    let found = match cfg.accelerated {
        None => search(runner, &s, &mut trials, &mut elapsed_s, progress)?,
        Some(a) => {
            let p = a.phases.max(2);
            let (n0, n) = (a.initial_connections as f64, cfg.connections as f64);
            let mut found = Found {
                rate: None,
                tester_bound: None,
                high: cfg.max_rate,
            };
            let mut prev_width = cfg.max_rate;
            for i in 0..p {
                let connections = if i == p - 1 {
                    cfg.connections
                } else {
                    (n0 * (n / n0).powf(f64::from(i) / f64::from(p - 1))).round() as u64
                };
                let error = cfg
                    .error
                    .saturating_mul(1u64 << (p - 1 - i).min(40))
                    .min(cfg.max_rate.saturating_sub(1))
                    .max(1);
                let label = format!("phase-{i} N={}", group(connections));
                // Start where the previous phase ended: its highest pass, or if none, its bound.
                let first = found.rate.unwrap_or(found.high).min(found.high);
                let phase = Search {
                    label: &label,
                    connections,
                    max_rate: if i == 0 { cfg.max_rate } else { found.high.max(1) },
                    first: if i == 0 { cfg.max_rate } else { first },
                    step_down: (i > 0).then_some(prev_width),
                    error,
                    ..s
                };
                let f = search(runner, &phase, &mut trials, &mut elapsed_s, progress)?;
                let tester_bound = match (found.tester_bound, f.tester_bound) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                found = Found { tester_bound, ..f };
                prev_width = error;
            }
            found
        }
    };
    let figure = found.rate.unwrap_or(0);
    let at_tester = found.tester_bound.filter(|tb| tb.saturating_sub(figure) <= cfg.error);
    let bound = xlat_results::bound::Bound::of_search(figure, u64::MAX, cfg.max_rate, at_tester, &trials);
    Ok(ConnRateResult {
        frame_size: cfg.frame_size,
        connections: cfg.connections,
        max_rate: cfg.max_rate,
        error: cfg.error,
        validation: cfg.validation,
        rate: found.rate,
        tester_bound: found.tester_bound,
        bound,
        trials,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::NoProgress;
    use xlat_results::BenchResult;
    use xlat_testkit::fake::{phase_one, Fake};
    use xlat_trial::TrialSpec;

    /// Phase 1 through a DUT that establishes connections up to `limit` per second, from a
    /// tester that cannot send faster than `tester`.
    fn phase_one_at(spec: &TrialSpec, limit: u64, tester: u64) -> TrialReport {
        let p = spec.preliminary.expect("phase 1");
        let got = if p.rate <= limit { p.frames } else { p.frames * limit / p.rate };
        let mut r = phase_one(spec, got);
        if p.rate > tester {
            r.valid = false;
            r.invalid_reasons = vec!["Preliminary sending was too slow (only 90 percent of required rate), the test is invalid".into()];
        }
        r
    }

    /// [`phase_one_at`] as a runner.
    fn dut(limit: u64, tester: u64) -> Fake<'static> {
        Fake::preliminary(move |spec, _| Ok(phase_one_at(spec, limit, tester)))
    }

    fn cfg() -> ConnRateConfig {
        ConnRateConfig {
            frame_size: 84,
            connections: 10_000,
            max_rate: 100_000,
            error: 1_000,
            timeout_ms: 100,
            retries: 1,
            validation: None,
            accelerated: None,
            send_lag: SendLag::default(),
        }
    }

    #[test]
    fn finds_the_dut_limit_within_the_error_and_reports_the_highest_pass() {
        let r = conn_rate(&mut dut(37_000, u64::MAX), &cfg(), &mut NoProgress).unwrap();
        let rate = r.rate.unwrap();
        assert!((36_000..=37_000).contains(&rate), "{rate}");
        assert_eq!(r.tester_bound, None);
        assert_eq!(r.trials[0].rate, 100_000, "the maximum first");
        let best_pass = r.trials.iter().filter(|t| t.pass == Some(true)).map(|t| t.rate).max();
        assert_eq!(Some(rate), best_pass);
        assert!(r.human_table().contains("connections/s"));
        // The DUT bounded it: the lowest failing step above the rate.
        let failed = r
            .trials
            .iter()
            .filter(|t| t.pass == Some(false) && t.rate > rate)
            .map(|t| t.rate)
            .min();
        assert_eq!(
            r.bound,
            xlat_results::bound::Bound::Dut {
                rate: failed.unwrap(),
                dut_busy: None
            }
        );
        assert!(r.human_table().contains("bounded by the DUT"), "{}", r.human_table());
    }

    #[test]
    fn every_step_passing_stops_at_the_maximum_and_says_so() {
        let r = conn_rate(&mut dut(u64::MAX, u64::MAX), &cfg(), &mut NoProgress).unwrap();
        assert_eq!((r.rate, r.trials.len()), (Some(100_000), 1));
        assert!(r.human_table().contains("the DUT's limit is higher"), "{}", r.human_table());
        assert_eq!(r.bound, xlat_results::bound::Bound::Range { max: 100_000 });
    }

    #[test]
    fn a_tester_that_cannot_keep_up_bounds_the_search_and_is_named() {
        let r = conn_rate(&mut dut(u64::MAX, 60_000), &cfg(), &mut NoProgress).unwrap();
        let rate = r.rate.unwrap();
        assert!((59_000..=60_000).contains(&rate), "{rate}");
        assert_eq!(r.tester_bound.map(|b| b > 60_000), Some(true));
        // Each invalid step ran once more before it bounded the search.
        let invalid = r.trials.iter().filter(|t| t.pass.is_none()).count();
        assert_eq!(invalid % 2, 0);
        assert!(r.human_table().contains("bounded by the tester"));
        assert!(matches!(r.bound, xlat_results::bound::Bound::Tester { .. }), "{:?}", r.bound);
    }

    #[test]
    fn validation_fails_every_rate_when_the_dut_drops_connections() {
        // A table of 9,000: phase 1 of 10,000 passes (older connections are dropped to make
        // room), only the validation sees it.
        let c = ConnRateConfig {
            validation: Some(1.0),
            ..cfg()
        };
        let mut dut = xlat_testkit::sim::SimDut::new(1e9, 1).table_capacity(9_000);
        let r = conn_rate(&mut dut, &c, &mut NoProgress).unwrap();
        assert_eq!(r.rate, None);
        assert!(r
            .trials
            .iter()
            .all(|t| t.pass == Some(false) && t.reverse.as_ref().map(|d| d.received) == Some(9_000)));
        let unvalidated = conn_rate(&mut dut, &cfg(), &mut NoProgress).unwrap();
        assert_eq!(unvalidated.rate, Some(100_000));
        // Validated, a table that holds them all passes at once; the table shows what came back.
        let mut dut = xlat_testkit::sim::SimDut::new(1e9, 1).table_capacity(10_000);
        let r = conn_rate(&mut dut, &c, &mut NoProgress).unwrap();
        assert_eq!(r.rate, Some(100_000));
        assert!(r.human_table().contains("10,000 of 10,000"), "{}", r.human_table());
    }

    #[test]
    fn the_accelerated_variant_finds_the_limit_with_fewer_step_seconds() {
        // A DUT whose rate falls with the number of connections: 40,000/s at 10,000, up to 5 %
        // more with fewer (the small phases overestimate it, the last one corrects).
        let scaling = || {
            Fake::preliminary(|spec, _| {
                let frames = spec.preliminary.expect("phase 1").frames;
                Ok(phase_one_at(spec, 40_000 + 2_000 * (10_000 - frames) / 10_000, u64::MAX))
            })
        };
        let accelerated = ConnRateConfig {
            accelerated: Some(Accelerated {
                initial_connections: 1_000,
                phases: 3,
            }),
            error: 500,
            ..cfg()
        };
        let mut dut = scaling();
        let r = conn_rate(&mut dut, &accelerated, &mut NoProgress).unwrap();
        let rate = r.rate.unwrap();
        assert!((39_500..=40_000).contains(&rate), "{rate}");
        assert!(r.trials.iter().any(|t| t.phase.starts_with("phase-0 N=1,000")), "{:?}", r.trials);
        assert!(r.trials.last().unwrap().phase.starts_with("phase-2 N=10,000"));
        // The result is the last phase's: a pass with all N connections.
        assert!(r
            .trials
            .iter()
            .any(|t| t.frames == 10_000 && t.rate == rate && t.pass == Some(true)));
        // Fewer connections sent than the plain binary search sends.
        let sent = |f: &Fake| f.asked.iter().map(|s| s.preliminary.map_or(0, |p| p.frames)).sum::<u64>();
        let accelerated_sent = sent(&dut);
        let mut plain = scaling();
        let p = conn_rate(&mut plain, &ConnRateConfig { error: 500, ..cfg() }, &mut NoProgress).unwrap();
        assert!(p.rate.unwrap().abs_diff(rate) <= 500);
        assert!(accelerated_sent < sent(&plain), "{accelerated_sent} vs {}", sent(&plain));
    }

    #[test]
    fn bad_parameters_are_refused() {
        for c in [
            ConnRateConfig { connections: 0, ..cfg() },
            ConnRateConfig { error: 0, ..cfg() },
            ConnRateConfig { error: 100_000, ..cfg() },
            ConnRateConfig { max_rate: 0, ..cfg() },
            ConnRateConfig {
                validation: Some(0.0),
                ..cfg()
            },
            ConnRateConfig {
                accelerated: Some(Accelerated {
                    initial_connections: 20_000,
                    phases: 3,
                }),
                ..cfg()
            },
            ConnRateConfig {
                accelerated: Some(Accelerated {
                    initial_connections: 1_000,
                    phases: 1,
                }),
                ..cfg()
            },
        ] {
            assert!(conn_rate(&mut dut(1, 1), &c, &mut NoProgress).is_err(), "{c:?}");
        }
    }
}
