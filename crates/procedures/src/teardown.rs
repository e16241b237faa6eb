//! Connection tear-down rate (RFC 9693 section 4.6; measured as seeds/001 section 2.4 does):
//! load N connections into the DUT (phase 1 alone at a rate it sustains, after the
//! `dut.before_trial` command emptied its table), then time the DUT's command that deletes
//! every connection (`dut.delete_all`, returning when done) on the full table, and again on the
//! now empty table of the same size: rate = N / (T_full - T_empty). The empty run takes out
//! what deleting costs without connections (the command's start, walking an empty hash).

use serde::{Deserialize, Serialize};
pub use xlat_results::teardown::TeardownResult;
use xlat_trial::{PreliminarySpec, SendLag, TrialSpec};

use crate::error::{config, ProcedureError};
use crate::runner::{Progress, ProgressEvent, TrialRunner};
use xlat_results::record::TrialRecord;
use xlat_results::text::group;

/// The configuration key of the command that deletes every connection of the DUT.
pub const DELETE_ALL: &str = "dut.delete_all";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeardownConfig {
    pub frame_size: usize,
    /// N: connections loaded before the deletion.
    pub connections: u64,
    /// Phase 1's rate, connections/s (below the DUT's connection establishment rate).
    pub rate: u64,
    /// T, ms.
    pub timeout_ms: u64,
    /// Loads that do not fill the table or are invalid are run again this often.
    pub retries: u32,
    /// The tester's lag bound and catch-up pace, in every trial this builds.
    #[serde(default, skip_serializing_if = "SendLag::is_none")]
    pub send_lag: SendLag,
}

impl TeardownConfig {
    pub fn validate(&self) -> Result<(), ProcedureError> {
        if self.connections == 0 || self.rate == 0 {
            return config("--connections and --rate must be above 0");
        }
        Ok(())
    }

    fn spec(&self) -> TrialSpec {
        self.send_lag.apply(PreliminarySpec::alone(
            self.frame_size,
            self.connections,
            self.rate,
            self.timeout_ms,
        ))
    }
}

/// Measure the connection tear-down rate.
pub fn teardown_rate(
    runner: &mut dyn TrialRunner,
    cfg: &TeardownConfig,
    progress: &mut dyn Progress,
) -> Result<TeardownResult, ProcedureError> {
    cfg.validate()?;
    let spec = cfg.spec();
    let mut trials = Vec::new();
    let mut loaded = false;
    for attempt in 1..=cfg.retries.saturating_add(1) {
        progress.step(&ProgressEvent {
            procedure: "teardown-rate",
            phase: "load",
            step: trials.len() + 1,
            rate: cfg.rate,
            low: cfg.rate,
            high: cfg.rate,
            elapsed_s: 0.0,
            remaining_s: None,
        });
        let report = runner.run_preliminary(&spec, None)?;
        let filled = report.valid && report.preliminary.as_ref().is_some_and(|p| p.table_filled());
        let mut record = TrialRecord::from_report(trials.len(), "load", attempt, &spec, &report, Some(filled));
        record.frames = cfg.connections;
        record.duration_s = cfg.connections as f64 / cfg.rate as f64;
        progress.trial("teardown-rate", &record);
        trials.push(record);
        if filled {
            loaded = true;
            break;
        }
    }
    if !loaded {
        let last = trials.last().map(|t| t.invalid_reasons.join("; ")).unwrap_or_default();
        return Err(ProcedureError::Trial(xlat_trial::TrialError::msg(format!(
            "could not load {} connections at {} conn/s in {} attempts ({last}): try a lower --rate",
            group(cfg.connections),
            group(cfg.rate),
            trials.len()
        ))));
    }
    let full_s = runner.time_dut_command(DELETE_ALL)?;
    let empty_s = runner.time_dut_command(DELETE_ALL)?;
    let rate_cps = (full_s > empty_s).then(|| cfg.connections as f64 / (full_s - empty_s));
    Ok(TeardownResult {
        frame_size: cfg.frame_size,
        connections: cfg.connections,
        full_s,
        empty_s,
        rate_cps,
        trials,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::NoProgress;
    use std::cell::Cell;
    use xlat_results::BenchResult;
    use xlat_testkit::fake::{phase_one, Fake};

    /// A DUT that loads every connection (with `fills`, else half of them) and deletes at
    /// `per_s` connections/s plus `fixed_s`; `loaded` holds its table's size.
    fn dut(loaded: &Cell<u64>, per_s: f64, fixed_s: f64, fills: bool) -> Fake<'_> {
        Fake::preliminary(move |spec, _| {
            let p = spec.preliminary.expect("phase 1");
            let got = if fills { p.frames } else { p.frames / 2 };
            loaded.set(got);
            Ok(phase_one(spec, got))
        })
        .with_dut_command(move |key| {
            assert_eq!(key, DELETE_ALL);
            Ok(fixed_s + loaded.replace(0) as f64 / per_s)
        })
    }

    fn cfg() -> TeardownConfig {
        TeardownConfig {
            frame_size: 84,
            connections: 100_000,
            rate: 50_000,
            timeout_ms: 100,
            retries: 2,
            send_lag: SendLag::default(),
        }
    }

    #[test]
    fn the_rate_is_the_connections_over_the_difference_of_the_two_deletions() {
        let loaded = Cell::new(0);
        let mut d = dut(&loaded, 400_000.0, 0.01, true);
        let r = teardown_rate(&mut d, &cfg(), &mut NoProgress).unwrap();
        assert!((r.full_s - 0.26).abs() < 1e-9 && (r.empty_s - 0.01).abs() < 1e-9, "{r:?}");
        assert!((r.rate_cps.unwrap() - 400_000.0).abs() < 1e-3);
        assert!(r.human_table().contains("400,000 connections/s torn down"), "{}", r.human_table());
        assert_eq!(r.trials.len(), 1);
    }

    #[test]
    fn a_table_that_does_not_fill_is_reloaded_then_reported() {
        let loaded = Cell::new(0);
        let mut d = dut(&loaded, 1.0, 0.0, false);
        let e = teardown_rate(&mut d, &cfg(), &mut NoProgress).unwrap_err();
        assert!(e.to_string().contains("in 3 attempts"), "{e}");
        assert!(e.to_string().contains("Failed to fill state table"), "{e}");
    }
}
