//! siitperf's command lines (docs/siitperf-compat.md): `siitperf-tp`, `siitperf-lat`, `siitperf-pdv`.
//! Each reads ./siitperf.conf, takes siitperf's positional arguments and prints the lines that
//! siitperf's scripts grep (`<Side> frames sent: `, `... received: `, `<Side> TL: `, `<Side> WCL: `,
//! `<Side> PDV: `, values in milliseconds with six decimals; made by `xlat_bench::output`).
//! Errors contain `Error:`.

use anyhow::{bail, Context, Result};
use std::path::Path;
use xlat_bench::output::{siitperf_latency_lines, siitperf_lines, siitperf_pdv_lines};
use xlat_config::TestConfig;
use xlat_engine::{LatencySpec, PdvSpec, TrialReport, TrialSpec};

use crate::runner;

/// The parsed common part: the configuration (with n/m applied) and the trial.
struct Common {
    cfg: TestConfig,
    spec: TrialSpec,
}

fn num(args: &[String], i: usize, name: &str, lo: u64, hi: u64) -> Result<u64> {
    let s = args.get(i).with_context(|| format!("Input Error: missing <{name}>"))?;
    let v: u64 = s
        .parse()
        .ok()
        .with_context(|| format!("Input Error: <{name}> '{s}' is not a whole number"))?;
    if v < lo || v > hi {
        bail!("Input Error: <{name}> {v} is out of range {lo}-{hi}");
    }
    Ok(v)
}

/// Parse `<IPv6 size> <rate> <duration> <global timeout> <n> <m> [N M R T D] <extra...>`; the
/// extra arguments follow at the returned index.
fn common(prog: &str, args: &[String], extra: &[&str]) -> Result<(Common, usize)> {
    let cfg = xlat_config::load(Path::new("siitperf.conf"), &[])?;
    let stateful = cfg.setup.stateful.mode != xlat_traffic::Stateful::Off;
    let base = if stateful { 11 } else { 6 };
    let want = base + extra.len();
    if args.len() != want {
        let extra_names: String = extra.iter().map(|e| format!(" <{e}>")).collect();
        bail!(
            "Input Error: {prog} takes {want} arguments here{}: <IPv6 size> <rate> <duration> <global timeout> <n> <m>{}{extra_names}",
            if stateful { " (Stateful is set)" } else { "" },
            if stateful { " <N> <M> <R> <T> <D>" } else { "" }
        );
    }
    let all_v4 = cfg.setup.left.ip_version == xlat_traffic::IpVersion::V4
        && cfg.setup.right.ip_version == xlat_traffic::IpVersion::V4
        && !cfg.setup.has_background();
    let size = num(args, 0, "IPv6 size", 84, if all_v4 { 1538 } else { 1518 })? as usize;
    let rate = num(args, 1, "rate", 1, 14_880_952)?;
    let duration = num(args, 2, "duration", 1, 3600)?;
    let timeout = num(args, 3, "global timeout", 0, 60_000)?;
    let n = num(args, 4, "n", 2, u64::from(u32::MAX))?;
    let m = num(args, 5, "m", 0, n)?;
    if stateful {
        bail!("stateful tests (RFC 9693) are not implemented in this xlatperf yet");
    }
    let mut cfg = cfg;
    cfg.setup.fg_n = n as u32;
    cfg.setup.fg_m = m as u32;
    xlat_config::validate(&cfg).map_err(|e| anyhow::anyhow!("Input Error: {e}"))?;
    Ok((
        Common {
            cfg,
            spec: TrialSpec::new(size, rate, duration as f64, timeout),
        },
        base,
    ))
}

fn run(c: &Common, spec: &TrialSpec) -> Result<TrialReport> {
    let mut r = runner::open(&c.cfg)?;
    r.run_trial(spec)
}

/// siitperf-tp <IPv6 size> <rate> <duration> <global timeout> <n> <m> [<N> <M> <R> <T> <D>]
pub fn tp(args: &[String]) -> Result<()> {
    let (c, _) = common("siitperf-tp", args, &[])?;
    let report = run(&c, &c.spec)?;
    for l in siitperf_lines(&report) {
        println!("{l}");
    }
    Ok(())
}

/// siitperf-lat ... <delay> <timestamps>
pub fn lat(args: &[String]) -> Result<()> {
    let (c, at) = common("siitperf-lat", args, &["delay", "timestamps"])?;
    let delay = num(args, at, "delay", 0, 3600)?;
    if delay as f64 >= c.spec.duration_s {
        bail!("Input Error: Test duration MUST be longer than the delay before timestamps.");
    }
    let tags = num(args, at + 1, "timestamps", 1, 50_000)?;
    if ((c.spec.duration_s - delay as f64) * c.spec.rate as f64) < tags as f64 {
        bail!("Input Error: There are not enough test frames in the (duration-delay) interval to carry so many timestamps.");
    }
    let spec = TrialSpec {
        latency: Some(LatencySpec {
            delay_s: delay as f64,
            tags,
        }),
        ..c.spec.clone()
    };
    let report = run(&c, &spec)?;
    let lines = siitperf_latency_lines(&report);
    for l in &lines {
        println!("{l}");
    }
    if lines.iter().any(|l| l.starts_with("Error:")) {
        std::process::exit(1);
    }
    Ok(())
}

/// siitperf-pdv ... <frame timeout>
pub fn pdv(args: &[String]) -> Result<()> {
    let (c, at) = common("siitperf-pdv", args, &["frame timeout"])?;
    let frame_timeout = num(args, at, "frame timeout", 0, 3_600_000)?;
    let spec = TrialSpec {
        pdv: Some(PdvSpec {
            frame_timeout_ms: frame_timeout,
            exact: false,
        }),
        ..c.spec.clone()
    };
    let report = run(&c, &spec)?;
    let lines = siitperf_pdv_lines(&report, frame_timeout);
    for l in &lines {
        println!("{l}");
    }
    if lines.iter().any(|l| l.starts_with("Error:")) {
        std::process::exit(1);
    }
    Ok(())
}
