//! `xlatperf selftest`: the tester's self-test (section 5 of G. Lencse, "Making stateless and
//! stateful network performance measurements unbiased", 2024). The two ports are looped
//! back with no DUT (a net_ring pair, a veth pair, a cable); a throughput search finds the
//! highest rate the tester itself sustains, per direction and bidirectionally, for the given
//! frame size and traffic options. A DUT result near these figures measured the tester, not the
//! DUT.

use crate::procedures::CliRunner;
use crate::{interrupt, runner};
use anyhow::Result;
use xlat_config::TestConfig;
use xlat_procedures::{selftest, Progress, ProgressEvent, SelftestConfig, SelftestResult};

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
    /// Also measure the tester's own latency floor at this rate (frames/s, both directions; RFC
    /// 8219 section 7.2 over the looped-back ports, one trial of --duration seconds, tags in its
    /// second half): what the tester's stamps add to any DUT's latency.
    #[arg(long = "latency-rate", value_name = "FPS", value_parser = crate::args::parse_rate)]
    pub latency_rate: Option<u64>,
    /// Write the findings as one JSON object to FILE, or with `-` to standard output instead of
    /// the human text.
    #[arg(long, value_name = "FILE|-", value_parser = crate::output::parse_json_to)]
    pub json: Option<crate::output::JsonTo>,
}

/// Says on stderr which search starts.
struct SearchStarts;

impl Progress for SearchStarts {
    fn step(&mut self, e: &ProgressEvent<'_>) {
        eprintln!("selftest {}: searching up to {} frames/s ...", e.phase, e.high);
    }
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
    // The procedures' runner: Ctrl-C stops the self-test between trials, as it stops them.
    let mut r = CliRunner::new(runner::open(&cfg)?);
    interrupt::install();
    let st = SelftestConfig {
        frame_size,
        duration_s: a.duration,
        timeout_ms: a.timeout,
        max_rate: a.max_rate,
        error,
        latency_rate: a.latency_rate,
        send_lag: cfg.tester.send_lag(),
    };
    let res = selftest(&mut r, &st, &mut SearchStarts)?;
    for s in &res.searches {
        let bound = s
            .tester_bound
            .map_or(String::new(), |b| format!(", could not send {b} frames/s in time"));
        eprintln!(
            "selftest {}: {} frames/s ({} trials, {:.0} trial-seconds{bound})",
            s.name, s.rate, s.trials, s.trial_seconds
        );
    }
    let (forward, reverse, bidirectional) = (res.forward, res.reverse, res.bidirectional);
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
        for l in &res.latency {
            println!("Tester latency floor at {} frames/s (no DUT):", l.rate);
            for (name, sum) in [("forward", &l.forward), ("reverse", &l.reverse)] {
                if let Some(sum) = sum {
                    println!("  {name}: typical {} worst case {}", sum.typical, sum.worst_case);
                }
            }
            print!("  {}", xlat_results::result_text::stamps_line(&l.trials));
        }
    }
    Ok(res)
}
