//! Maximum connection establishment rate (RFC 9693 section 4.4, siitperf's
//! `binary-rate-alg.sh-R`): a binary search on the preliminary phase's rate R with N = M
//! connections. A step runs phase 1 alone ([`TrialRunner::run_preliminary`]); it passes when
//! every phase 1 frame arrived and the state table filled (every connection made it through
//! the DUT and was learnt). A step whose phase 1 sender was late, or in which the tester
//! dropped frames, is invalid: retried, and if it stays invalid it bounds the search from
//! above as the tester's limit. The result is the highest rate that passed, not the last one
//! tried (siitperf's scripts print the last).
//!
//! The DUT's table must be empty before each step: the runner's `dut.before_trial` command does
//! that (the lab presets it).

use serde::{Deserialize, Serialize};
use xlat_engine::{PreliminarySpec, TrialReport, TrialSpec};

use crate::error::{config, BenchError};
use crate::record::TrialRecord;
use crate::result::BenchResult;
use crate::runner::{Progress, ProgressEvent, TrialRunner};
use crate::text::{group, text_table};

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
}

impl ConnRateConfig {
    pub fn validate(&self) -> Result<(), BenchError> {
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
        Ok(())
    }

    /// The phase 1 of a step at `rate`: N = M = connections, D as the default (phase 1 plus
    /// twice T: it only matters to the engine's checks, no phase 2 runs).
    fn spec(&self, rate: u64) -> TrialSpec {
        let mut t = TrialSpec::new(self.frame_size, rate, 1.0, self.timeout_ms);
        let phase1_ms = (self.connections.saturating_mul(1000)).div_ceil(rate.max(1));
        t.preliminary = Some(PreliminarySpec {
            frames: self.connections,
            state_table: self.connections,
            rate,
            timeout_ms: self.timeout_ms,
            phase_delay_ms: phase1_ms.saturating_add(2 * self.timeout_ms).max(1),
        });
        t
    }
}

/// The result of one search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnRateResult {
    pub frame_size: usize,
    pub connections: u64,
    pub max_rate: u64,
    pub error: u64,
    /// The highest rate at which every connection was established; `None` if none was.
    pub rate: Option<u64>,
    /// The lowest rate at which the tester could not send phase 1 in time (after the
    /// retries): the search's upper bound from the tester, not the DUT.
    pub tester_bound: Option<u64>,
    pub trials: Vec<TrialRecord>,
}

/// True when the step says nothing about the DUT: the tester was late or dropped frames.
fn tester_invalid(r: &TrialReport) -> bool {
    r.invalid_reasons
        .iter()
        .any(|x| !x.starts_with("Failed to fill state table") && !x.contains("onto 4-tuples it had already used"))
}

/// Every phase 1 frame arrived, the table filled, no two connections on one tuple.
fn established(r: &TrialReport) -> bool {
    r.preliminary
        .as_ref()
        .is_some_and(|p| p.received >= p.frames && p.valid_entries >= p.state_table && p.duplicate_tuples.unwrap_or(0) == 0)
}

/// Search the maximum connection establishment rate.
pub fn conn_rate(runner: &mut dyn TrialRunner, cfg: &ConnRateConfig, progress: &mut dyn Progress) -> Result<ConnRateResult, BenchError> {
    cfg.validate()?;
    let mut trials: Vec<TrialRecord> = Vec::new();
    let (mut low, mut high) = (0u64, cfg.max_rate);
    let mut best: Option<u64> = None;
    let mut tester_bound: Option<u64> = None;
    let mut elapsed_s = 0.0;
    let mut rate = cfg.max_rate;
    loop {
        let spec = cfg.spec(rate);
        let mut verdict = None;
        for attempt in 1..=cfg.retries.saturating_add(1) {
            progress.step(&ProgressEvent {
                procedure: "conn-rate",
                phase: "search",
                step: trials.len() + 1,
                rate,
                low,
                high,
                elapsed_s,
                remaining_s: None,
            });
            let report = runner.run_preliminary(&spec)?;
            elapsed_s += cfg.connections as f64 / rate as f64 + cfg.timeout_ms as f64 / 1000.0;
            let v = (!tester_invalid(&report)).then(|| established(&report));
            let mut record = TrialRecord::from_report(trials.len(), "search", attempt, &spec, &report, v);
            record.rate = rate;
            record.frames = cfg.connections;
            record.duration_s = cfg.connections as f64 / rate as f64;
            record.tester_bound = v.is_none() && attempt == cfg.retries.saturating_add(1);
            progress.trial("conn-rate", &record);
            trials.push(record);
            if v.is_some() {
                verdict = v;
                break;
            }
        }
        match verdict {
            Some(true) => {
                best = Some(best.map_or(rate, |b| b.max(rate)));
                low = rate;
            }
            Some(false) => high = rate,
            None => {
                tester_bound = Some(tester_bound.map_or(rate, |b| b.min(rate)));
                high = rate;
            }
        }
        if rate == cfg.max_rate && verdict == Some(true) {
            break;
        }
        if high.saturating_sub(low) <= cfg.error {
            break;
        }
        rate = low + (high - low) / 2;
        if rate == 0 {
            break;
        }
    }
    Ok(ConnRateResult {
        frame_size: cfg.frame_size,
        connections: cfg.connections,
        max_rate: cfg.max_rate,
        error: cfg.error,
        rate: best,
        tester_bound,
        trials,
    })
}

impl BenchResult for ConnRateResult {
    fn procedure(&self) -> &'static str {
        "conn-rate"
    }
    fn trials(&self) -> &[TrialRecord] {
        &self.trials
    }
    fn metrics(&self) -> Vec<(String, f64)> {
        self.rate.map(|r| vec![("conn_rate_cps".to_string(), r as f64)]).unwrap_or_default()
    }
    fn human_table(&self) -> String {
        let mut s = format!(
            "Maximum connection establishment rate, frame size {}, {} connections per step (RFC 9693)\n",
            self.frame_size,
            group(self.connections)
        );
        let rows: Vec<Vec<String>> = self
            .trials
            .iter()
            .map(|t| {
                let p = t.preliminary.as_ref();
                vec![
                    group(t.rate),
                    p.map_or("-".into(), |p| group(p.sent)),
                    p.map_or("-".into(), |p| group(p.received)),
                    p.map_or("-".into(), |p| group(p.valid_entries)),
                    match t.pass {
                        Some(true) => "pass".into(),
                        Some(false) => "fail".into(),
                        None => "invalid".into(),
                    },
                ]
            })
            .collect();
        s.push_str(&text_table(
            &["rate (conn/s)", "sent", "received", "table entries", "result"],
            &rows,
        ));
        s.push_str(&format!("{}\n", self.headline()));
        if let Some(b) = self.tester_bound {
            s.push_str(&format!(
                "note: the tester could not send phase 1 in time at {} conn/s: the result is bounded by the tester\n",
                group(b)
            ));
        } else if self.rate == Some(self.max_rate) {
            s.push_str("note: every step passed up to --max-rate: the DUT's limit is higher\n");
        }
        s
    }
    fn headline(&self) -> String {
        match self.rate {
            Some(r) => format!("{} B: {} connections/s", self.frame_size, group(r)),
            None => format!("{} B: no rate established every connection", self.frame_size),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::NoProgress;
    use xlat_engine::PreliminaryReport;

    /// A DUT that establishes connections up to `limit` per second and a tester that cannot
    /// send faster than `tester`.
    struct Dut {
        limit: u64,
        tester: u64,
    }

    impl TrialRunner for Dut {
        fn run(&mut self, _: &TrialSpec) -> Result<TrialReport, BenchError> {
            Err(BenchError::Unsupported("phase 2".into()))
        }
        fn run_preliminary(&mut self, spec: &TrialSpec) -> Result<TrialReport, BenchError> {
            let p = spec.preliminary.expect("phase 1");
            let mut r = TrialReport::of(spec);
            let got = if p.rate <= self.limit {
                p.frames
            } else {
                p.frames * self.limit / p.rate
            };
            if p.rate > self.tester {
                r.invalidate("Preliminary sending was too slow (only 90 percent of required rate), the test is invalid".into());
            } else if got < p.state_table {
                r.invalidate(format!(
                    "Failed to fill state table (valid entries: {got}, state table size: {})",
                    p.state_table
                ));
            }
            r.preliminary = Some(PreliminaryReport {
                frames: p.frames,
                rate: p.rate,
                sent: p.frames,
                received: got,
                valid_entries: got,
                state_table: p.state_table,
                duplicate_tuples: Some(0),
                ..Default::default()
            });
            Ok(r)
        }
    }

    fn cfg() -> ConnRateConfig {
        ConnRateConfig {
            frame_size: 84,
            connections: 10_000,
            max_rate: 100_000,
            error: 1_000,
            timeout_ms: 100,
            retries: 1,
        }
    }

    #[test]
    fn finds_the_dut_limit_within_the_error_and_reports_the_highest_pass() {
        let r = conn_rate(
            &mut Dut {
                limit: 37_000,
                tester: u64::MAX,
            },
            &cfg(),
            &mut NoProgress,
        )
        .unwrap();
        let rate = r.rate.unwrap();
        assert!((36_000..=37_000).contains(&rate), "{rate}");
        assert_eq!(r.tester_bound, None);
        assert_eq!(r.trials[0].rate, 100_000, "the maximum first");
        let best_pass = r.trials.iter().filter(|t| t.pass == Some(true)).map(|t| t.rate).max();
        assert_eq!(Some(rate), best_pass);
        assert!(r.human_table().contains("connections/s"));
    }

    #[test]
    fn every_step_passing_stops_at_the_maximum_and_says_so() {
        let r = conn_rate(
            &mut Dut {
                limit: u64::MAX,
                tester: u64::MAX,
            },
            &cfg(),
            &mut NoProgress,
        )
        .unwrap();
        assert_eq!((r.rate, r.trials.len()), (Some(100_000), 1));
        assert!(r.human_table().contains("the DUT's limit is higher"), "{}", r.human_table());
    }

    #[test]
    fn a_tester_that_cannot_keep_up_bounds_the_search_and_is_named() {
        let r = conn_rate(
            &mut Dut {
                limit: u64::MAX,
                tester: 60_000,
            },
            &cfg(),
            &mut NoProgress,
        )
        .unwrap();
        let rate = r.rate.unwrap();
        assert!((59_000..=60_000).contains(&rate), "{rate}");
        assert_eq!(r.tester_bound.map(|b| b > 60_000), Some(true));
        // Each invalid step ran once more before it bounded the search.
        let invalid = r.trials.iter().filter(|t| t.pass.is_none()).count();
        assert_eq!(invalid % 2, 0);
        assert!(r.human_table().contains("bounded by the tester"));
    }

    #[test]
    fn bad_parameters_are_refused() {
        for c in [
            ConnRateConfig { connections: 0, ..cfg() },
            ConnRateConfig { error: 0, ..cfg() },
            ConnRateConfig { error: 100_000, ..cfg() },
            ConnRateConfig { max_rate: 0, ..cfg() },
        ] {
            assert!(conn_rate(&mut Dut { limit: 1, tester: 1 }, &c, &mut NoProgress).is_err(), "{c:?}");
        }
    }
}
