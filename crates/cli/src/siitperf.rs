//! siitperf's command lines (docs/siitperf-compat.md): `siitperf-tp`, `siitperf-lat`, `siitperf-pdv`.
//! Each reads ./siitperf.conf, takes siitperf's positional arguments and prints the lines that
//! siitperf's scripts grep (`<Side> frames sent: `, `... received: `, `<Side> TL: `, `<Side> WCL: `,
//! `<Side> PDV: `, values in milliseconds with six decimals). Errors contain `Error:`.

use anyhow::{bail, Context, Result};
use std::path::Path;
use xlat_bench::delay::{LatencyStats, PdvStats};
use xlat_bench::output::siitperf_lines;
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

fn title(direction: &str) -> &'static str {
    if direction == "forward" {
        "Forward"
    } else {
        "Reverse"
    }
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

/// The lines of a latency trial. A lost tag counts as the largest possible latency: the test
/// duration plus the global timeout (a frame later than that cannot be received), so that the
/// printed value stays a number that scripts can compare.
pub fn latency_lines(report: &TrialReport) -> Vec<String> {
    let mut v = siitperf_lines(report);
    let worst_ms = report.duration_s * 1000.0 + report.timeout_ms as f64;
    let ms = |d: xlat_bench::delay::Delay| if d.is_infinite() { worst_ms } else { d.ms() };
    for (name, d) in report.directions() {
        match LatencyStats::from_samples(&d.latency_ns) {
            Some(s) => {
                v.push(format!("{} TL: {:.6}", title(name), ms(s.typical)));
                v.push(format!("{} WCL: {:.6}", title(name), ms(s.worst_case)));
            }
            None => v.push(format!("Error: {} direction: no latency samples", title(name))),
        }
    }
    v
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
    let lines = latency_lines(&report);
    for l in &lines {
        println!("{l}");
    }
    if lines.iter().any(|l| l.starts_with("Error:")) {
        std::process::exit(1);
    }
    Ok(())
}

/// The lines of a PDV trial (frame timeout 0) or of the frame-timeout test (only the counts).
pub fn pdv_lines(report: &TrialReport, frame_timeout_ms: u64) -> Vec<String> {
    let mut v = siitperf_lines(report);
    if frame_timeout_ms > 0 {
        return v;
    }
    let worst_ms = report.duration_s * 1000.0 + report.timeout_ms as f64;
    for (name, d) in report.directions() {
        match d.pdv.as_ref().and_then(|p| PdvStats::of(&p.delays)) {
            Some(p) => {
                let ms = if p.pdv.is_infinite() { worst_ms } else { p.pdv.ms() };
                v.push(format!("{} PDV: {ms:.6}", title(name)));
            }
            None => v.push(format!("Error: {} direction: no PDV statistics", title(name))),
        }
    }
    v
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
    let lines = pdv_lines(&report, frame_timeout);
    for l in &lines {
        println!("{l}");
    }
    if lines.iter().any(|l| l.starts_with("Error:")) {
        std::process::exit(1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlat_bench::delay::DelayRecorder;
    use xlat_engine::{DirectionReport, PdvReport};

    #[test]
    fn latency_and_pdv_lines() {
        let mut lat = vec![1_000_000u64; 999];
        lat.push(u64::MAX);
        let r = TrialReport {
            valid: true,
            duration_s: 10.0,
            timeout_ms: 2000,
            forward: Some(DirectionReport {
                sent: 10,
                received: 10,
                latency_ns: lat.clone(),
                ..Default::default()
            }),
            reverse: Some(DirectionReport {
                sent: 10,
                received: 9,
                lost: 1,
                latency_ns: vec![u64::MAX; 3],
                ..Default::default()
            }),
            ..Default::default()
        };
        let l = latency_lines(&r);
        assert!(l.contains(&"Forward TL: 1.000000".to_string()), "{l:?}");
        assert!(l.contains(&"Forward WCL: 1.000000".to_string()), "{l:?}");
        assert!(l.contains(&"Reverse WCL: 12000.000000".to_string()), "{l:?}");

        let mut p = r.clone();
        // Ten delays: the 99.9th percentile is the largest, 0.25 ms above the smallest.
        let mut delays = vec![1000u64; 9];
        delays.push(251_000);
        p.forward.as_mut().unwrap().pdv = Some(PdvReport {
            delays: DelayRecorder::from_samples(&delays),
            ..Default::default()
        });
        let l = pdv_lines(&p, 0);
        assert!(l.contains(&"Forward PDV: 0.250000".to_string()), "{l:?}");
        assert!(l.iter().any(|x| x.starts_with("Error: Reverse")), "{l:?}");
        assert_eq!(pdv_lines(&p, 10).len(), 4);
    }
}
