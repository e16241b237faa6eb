//! The tester's self-test (section 5 of G. Lencse, "Making stateless and stateful network
//! performance measurements unbiased", 2024): the two ports are looped back with no DUT (a
//! net_ring pair, a veth pair, a cable), and a throughput search finds the highest rate the
//! tester itself sustains forward only, reverse only and bidirectionally. A last bidirectional
//! trial at that rate is kept as a check. A DUT measured at or near these rates was limited by
//! the tester, not by the DUT. With a latency rate, a latency test (RFC 8219 section 7.2) over
//! the looped-back ports measures the tester's own floor: what its stamps add to any DUT's
//! latency, with the source that stamped them.

use serde::Serialize;
use xlat_trial::{SendLag, TrialReport, TrialSpec};

use crate::error::ProcedureError;
use crate::latency::{latency, LatencyConfig, LatencyResult};
use crate::runner::{NoProgress, Progress, ProgressEvent, TrialRunner};
use crate::throughput::{throughput, SearchMethod, ThroughputConfig};

/// The parameters of a self-test.
#[derive(Debug, Clone, PartialEq)]
pub struct SelftestConfig {
    pub frame_size: usize,
    /// Seconds of each full-length trial.
    pub duration_s: f64,
    pub timeout_ms: u64,
    /// The highest rate tried, frames/s per direction.
    pub max_rate: u64,
    /// The search stops when high - low <= error (frames/s).
    pub error: u64,
    /// Measure the tester's latency floor at this rate (both directions), after the searches.
    pub latency_rate: Option<u64>,
    /// The tester's lag bound and catch-up pace, in every trial this builds.
    pub send_lag: SendLag,
}

/// One of the three searches.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SelftestSearch {
    /// "forward", "reverse" or "bidirectional".
    pub name: &'static str,
    /// The highest rate the tester sustained, frames/s per direction.
    pub rate: u64,
    pub trials: usize,
    pub trial_seconds: f64,
    /// The lowest rate the tester could not even send in time, if any.
    pub tester_bound: Option<u64>,
}

/// The self-test's findings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SelftestResult {
    pub frame_size: usize,
    pub max_rate: u64,
    pub error: u64,
    pub forward: u64,
    pub reverse: u64,
    pub bidirectional: u64,
    /// A last bidirectional trial at the bidirectional rate, as a check.
    pub check: TrialReport,
    /// The tester's own latency over the looped-back ports (`latency_rate`), once with every
    /// timestamp source the ports offer, best first: typical and worst case per direction, and
    /// the source (in each trial's report).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub latency: Vec<LatencyResult>,
    #[serde(skip)]
    pub searches: Vec<SelftestSearch>,
}

/// Run the self-test on `runner`, whose ports are looped back. `progress` hears one event
/// (procedure "selftest", phase "forward", "reverse" or "bidirectional") before each search.
pub fn selftest(runner: &mut dyn TrialRunner, cfg: &SelftestConfig, progress: &mut dyn Progress) -> Result<SelftestResult, ProcedureError> {
    let mut searches = Vec::new();
    let mut check = TrialReport::default();
    for (step, (name, fwd, rev)) in [("forward", true, false), ("reverse", false, true), ("bidirectional", true, true)]
        .into_iter()
        .enumerate()
    {
        let directions = Some(xlat_trial::Directions {
            forward: fwd,
            reverse: rev,
        });
        progress.step(&ProgressEvent {
            procedure: "selftest",
            phase: name,
            step: step + 1,
            rate: cfg.max_rate,
            low: 0,
            high: cfg.max_rate,
            elapsed_s: 0.0,
            remaining_s: None,
        });
        let mut tc = ThroughputConfig::new(cfg.frame_size, cfg.max_rate, cfg.error);
        tc.trial = TrialSpec {
            directions,
            ..cfg
                .send_lag
                .apply(TrialSpec::new(cfg.frame_size, cfg.max_rate, cfg.duration_s, cfg.timeout_ms))
        };
        tc.method = SearchMethod::Accelerated {
            initial_s: (cfg.duration_s / 10.0).max(0.5),
            phases: 3,
        };
        // A rate the tester cannot even schedule (its trials invalid) bounds the search like one
        // it loses frames at: either way the tester cannot do it.
        let res = throughput(runner, &tc, &mut NoProgress)?;
        if fwd && rev && res.throughput > 0 {
            check = runner.run(&TrialSpec {
                directions,
                ..cfg
                    .send_lag
                    .apply(TrialSpec::new(cfg.frame_size, res.throughput, cfg.duration_s, cfg.timeout_ms))
            })?;
        }
        searches.push(SelftestSearch {
            name,
            rate: res.throughput,
            trials: res.trials.len(),
            trial_seconds: res.trial_seconds,
            tester_bound: res.tester_bound,
        });
    }
    let mut latencies = Vec::new();
    if let Some(rate) = cfg.latency_rate {
        let mut lc = LatencyConfig::new(cfg.frame_size, rate);
        lc.trial = TrialSpec {
            directions: Some(xlat_trial::Directions {
                forward: true,
                reverse: true,
            }),
            ..cfg
                .send_lag
                .apply(TrialSpec::new(cfg.frame_size, rate, cfg.duration_s, cfg.timeout_ms))
        };
        lc.delay_s = cfg.duration_s / 2.0;
        // Half the frames after the delay are tagged (RFC 8219: 500 to 50,000 tags).
        lc.tags = (rate as f64 * (cfg.duration_s - lc.delay_s) / 2.0) as u64;
        lc.repetitions = 1;
        for source in runner.stamp_sources() {
            lc.trial.stamps = Some(source);
            latencies.push(latency(runner, &lc, progress)?);
        }
    }
    Ok(SelftestResult {
        frame_size: cfg.frame_size,
        max_rate: cfg.max_rate,
        error: cfg.error,
        forward: searches[0].rate,
        reverse: searches[1].rate,
        bidirectional: searches[2].rate,
        check,
        latency: latencies,
        searches,
    })
}
