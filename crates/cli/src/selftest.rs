//! `xlatperf selftest`: the tester's self-test (section 5 of G. Lencse, "Making stateless and
//! stateful network performance measurements unbiased", 2024). The two ports are looped
//! back with no DUT (a net_ring pair, a veth pair, a cable); a throughput search finds the
//! highest rate the tester itself sustains, per direction and bidirectionally, for the given
//! frame size and traffic options. A DUT result near these figures measured the tester, not the
//! DUT.

use crate::runner::{self, BenchRunner};
use anyhow::Result;
use serde::Serialize;
use xlat_bench::{throughput, NoProgress, SearchMethod, ThroughputConfig};
use xlat_config::TestConfig;
use xlat_engine::TrialSpec;

/// Options of the self-test.
#[derive(clap::Args, Clone, Debug)]
pub struct SelftestArgs {
    /// siitperf's frame size (IPv6; IPv4 frames 20 bytes shorter).
    #[arg(long = "frame-size")]
    pub frame_size: Option<usize>,
    /// Seconds of each full-length trial.
    #[arg(long, default_value_t = 10.0)]
    pub duration: f64,
    /// The highest rate to try, frames/s per direction.
    #[arg(long = "max-rate", default_value_t = 2_000_000)]
    pub max_rate: u64,
    /// Stop the search when high - low <= this (frames/s); default: 1 % of --max-rate.
    #[arg(long)]
    pub error: Option<u64>,
    /// Milliseconds to keep receiving after sending ended.
    #[arg(long, default_value_t = 100)]
    pub timeout: u64,
    /// Write the findings as one JSON object to FILE, or with `-` to standard output instead of
    /// the human text.
    #[arg(long, value_name = "FILE|-", value_parser = crate::output::parse_json_to)]
    pub json: Option<crate::output::JsonTo>,
}

/// The self-test's findings.
#[derive(Debug, Serialize)]
pub struct SelftestResult {
    pub frame_size: usize,
    pub max_rate: u64,
    pub error: u64,
    pub forward: u64,
    pub reverse: u64,
    pub bidirectional: u64,
    /// A last bidirectional trial at the bidirectional rate, as a check.
    pub check: xlat_engine::TrialReport,
}

fn search(
    r: &mut BenchRunner,
    fwd: bool,
    rev: bool,
    a: &SelftestArgs,
    frame_size: usize,
    error: u64,
) -> Result<(u64, Option<xlat_engine::TrialReport>)> {
    r.0.set_directions(fwd, rev);
    let mut tc = ThroughputConfig::new(frame_size, a.max_rate, error);
    tc.trial = TrialSpec::new(frame_size, a.max_rate, a.duration, a.timeout);
    tc.method = SearchMethod::Accelerated {
        initial_s: (a.duration / 10.0).max(0.5),
        phases: 3,
    };
    let name = match (fwd, rev) {
        (true, true) => "bidirectional",
        (true, false) => "forward",
        _ => "reverse",
    };
    eprintln!("selftest {name}: searching up to {} frames/s ...", a.max_rate);
    let res = throughput(r, &tc, &mut NoProgress)?;
    // A rate the tester cannot even schedule (its trials invalid) bounds the search like one
    // it loses frames at: either way the tester cannot do it.
    let bound = res
        .tester_bound
        .map_or(String::new(), |b| format!(", could not send {b} frames/s in time"));
    eprintln!(
        "selftest {name}: {} frames/s ({} trials, {:.0} trial-seconds{bound})",
        res.throughput,
        res.trials.len(),
        res.trial_seconds
    );
    let check = if fwd && rev && res.throughput > 0 {
        Some(r.0.run_trial(&TrialSpec::new(frame_size, res.throughput, a.duration, a.timeout))?)
    } else {
        None
    };
    Ok((res.throughput, check))
}

/// Run the self-test on the (looped-back) ports of `cfg`.
pub fn run(cfg: &TestConfig, a: &SelftestArgs) -> Result<SelftestResult> {
    if let Some(to) = &a.json {
        to.check()?;
    }
    let mut cfg = cfg.clone();
    cfg.tester.loopback = true;
    let frame_size = a.frame_size.unwrap_or(cfg.trial.frame_size);
    let error = a.error.unwrap_or((a.max_rate / 100).max(1));
    // Open the ports once: DPDK devices cannot be opened twice in one process.
    cfg.setup.forward = true;
    cfg.setup.reverse = true;
    let mut r = BenchRunner(runner::open(&cfg)?);
    let (forward, _) = search(&mut r, true, false, a, frame_size, error)?;
    let (reverse, _) = search(&mut r, false, true, a, frame_size, error)?;
    let (bidirectional, check) = search(&mut r, true, true, a, frame_size, error)?;
    let res = SelftestResult {
        frame_size,
        max_rate: a.max_rate,
        error,
        forward,
        reverse,
        bidirectional,
        check: check.unwrap_or_default(),
    };
    if let Some(to) = &a.json {
        to.write(&serde_json::to_string(&res)?)?;
    }
    if a.json != Some(crate::output::JsonTo::Stdout) {
        println!(
            "Tester self-test, frame size {frame_size} (IPv4 frames {}), search error {error} frames/s:",
            frame_size.saturating_sub(20)
        );
        println!("  forward only:  {forward} frames/s");
        println!("  reverse only:  {reverse} frames/s");
        println!("  bidirectional: {bidirectional} frames/s per direction");
        if bidirectional >= a.max_rate.saturating_sub(error) {
            println!("  (the tester kept up with --max-rate: its limit is higher)");
        }
        println!("A DUT measured at or near these rates was limited by the tester, not by the DUT.");
    }
    Ok(res)
}
