//! siitperf's command lines (docs/siitperf-compat.md): `siitperf-tp`, `siitperf-lat`, `siitperf-pdv`.
//! Each reads ./siitperf.conf, takes siitperf's positional arguments and prints the lines that
//! siitperf's scripts grep (`<Side> frames sent: `, `... received: `, `<Side> TL: `, `<Side> WCL: `,
//! `<Side> PDV: `, values in milliseconds with six decimals; made by `xlat_bench::output`).
//! Errors contain `Error:`.

use anyhow::{bail, Context, Result};
use std::path::Path;
use xlat_bench::output::{siitperf_latency_lines, siitperf_lines, siitperf_pdv_lines};
use xlat_config::TestConfig;
use xlat_engine::{LatencySpec, PdvSpec, PreliminarySpec, TrialReport, TrialSpec};
use xlat_traffic::{Setup, Stateful, Variation};

use crate::runner;

/// The parsed common part: the configuration (with n/m applied) and the trial (with phase 1
/// in a stateful test).
struct Common {
    cfg: TestConfig,
    spec: TrialSpec,
}

/// siitperf's rate limit (10 Gbit/s Ethernet, 64-byte frames), for `<rate>` and for `<R>`.
const MAX_RATE: u64 = 14_880_952;

/// Check siitperf's stateful parameters `N M R T D` (already in range) against each other and
/// the configuration, in siitperf's order, with 64-bit (128-bit for the combinations)
/// arithmetic; return the `Info:` lines siitperf prints on the way, or its `Input Error:`.
/// `n`/`m` are the foreground share of the command line.
fn stateful_checks(setup: &Setup, n: u32, m: u32, p: &PreliminarySpec) -> Result<Vec<String>> {
    let mut info = Vec::new();
    // 1. Phase 1 fits in D (siitperf's formula: the sending time rounded down, plus T).
    let needed = u128::from(p.frames) * 1000 / u128::from(p.rate) + u128::from(p.timeout_ms);
    if needed > u128::from(p.phase_delay_ms) {
        bail!(
            "Input Error: 1000*N/R+T > D (preliminary test may not be performed in the available time period): \
             1000*N/R+T: {needed} > D: {}",
            p.phase_delay_ms
        );
    }
    info.push(format!("Info: 1000*N/R+T: {needed} <= D: {}", p.phase_delay_ms));
    // 2. Enough foreground frames to fill the state table: the exact count (siitperf's
    //    N-N*(n-m)/n can be one less).
    let eff = xlat_config::foreground_frames(p.frames, n, m);
    if eff < p.state_table {
        bail!(
            "Input Error: the {eff} foreground frames among N ({}, foreground {m} of every {n}) are fewer than M ({}) \
             (there are not enough foreground frames to fill the state table).",
            p.frames,
            p.state_table
        );
    }
    // 3. A unique combination for every foreground frame of a pseudorandom enumeration.
    if let Some((c, what)) = xlat_config::combinations(setup) {
        info.push(format!("Info: number of unique {what} combinations: {c}"));
        info.push(format!("Info: number of foreground preliminary frames: {eff}"));
        if c < u128::from(eff) {
            bail!("Input Error: There are not enough unique {what} combinations for each (foreground) preliminary frame ({c} < {eff}).");
        }
    }
    // 4. More than one tuple to choose from needs a state table of more than one entry.
    if setup.stateful.responder_tuples != Variation::Fixed && p.state_table == 1 {
        bail!("Input Error: 'Responder-tuples' MUST be set to 0, if the size of the state table (M) is 1.");
    }
    // 5. (sic: siitperf's spelling, which scripts may match)
    info.push(format!(
        "Info: Stateful test cmdline parameteres: N: {}, M: {}, R: {}, T: {}, D: {}",
        p.frames, p.state_table, p.rate, p.timeout_ms, p.phase_delay_ms
    ));
    Ok(info)
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
    let cfg = xlat_config::load_with_companion(Path::new("siitperf.conf"))?;
    let (c, at, info) = parse(cfg, prog, args, extra)?;
    for line in info {
        println!("{line}");
    }
    Ok((c, at))
}

/// [`common`] on a configuration already read: also the `Info:` lines to print.
fn parse(cfg: TestConfig, prog: &str, args: &[String], extra: &[&str]) -> Result<(Common, usize, Vec<String>)> {
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
    let rate = num(args, 1, "rate", 1, MAX_RATE)?;
    let duration = num(args, 2, "duration", 1, 3600)?;
    let timeout = num(args, 3, "global timeout", 0, 60_000)?;
    let n = num(args, 4, "n", 2, u64::from(u32::MAX))?;
    let m = num(args, 5, "m", 0, n)?;
    let (n, m) = (n as u32, m as u32);
    // N M R T D (siitperf checks <rate> where it means R; R is checked here).
    let preliminary = if stateful {
        Some(PreliminarySpec {
            frames: num(args, 6, "N", 1, u64::from(u32::MAX))?,
            state_table: num(args, 7, "M", 1, u64::from(u32::MAX))?,
            rate: num(args, 8, "R", 1, MAX_RATE)?,
            timeout_ms: num(args, 9, "T", 1, xlat_config::MAX_PRELIMINARY_TIMEOUT_MS)?,
            phase_delay_ms: num(args, 10, "D", 1, xlat_config::MAX_PHASE_DELAY_MS)?,
        })
    } else {
        None
    };
    let mut cfg = cfg;
    cfg.setup.fg_n = n;
    cfg.setup.fg_m = m;
    let info = match &preliminary {
        Some(p) => {
            let info = stateful_checks(&cfg.setup, n, m, p)?;
            // The command line's N M R T D are the configuration's phase 1 (for the JSON and
            // for the checks of validate).
            cfg.stateful = xlat_config::StatefulTrial {
                preliminary_frames: u32::try_from(p.frames).ok(),
                state_table: u32::try_from(p.state_table).ok(),
                preliminary_rate: Some(p.rate),
                preliminary_timeout_ms: Some(p.timeout_ms),
                phase_delay_ms: Some(p.phase_delay_ms),
            };
            info
        }
        None => Vec::new(),
    };
    xlat_config::validate(&cfg).map_err(|e| anyhow::anyhow!("Input Error: {e}"))?;
    Ok((
        Common {
            cfg,
            spec: TrialSpec {
                preliminary,
                ..TrialSpec::new(size, rate, duration as f64, timeout)
            },
        },
        base,
        info,
    ))
}

/// siitperf-lat and -pdv enumerate ports in phase 1 only: siitperf's warning, printed where
/// siitperf prints it (after the line that ends phase 1), else first.
fn with_enumeration_warning(c: &Common, measurement: &str, lines: Vec<String>) -> Vec<String> {
    if c.cfg.setup.stateful.mode == Stateful::Off || c.cfg.setup.stateful.enumerate_ports.is_fixed() {
        return lines;
    }
    let warning = format!("Warning: Port number enumeration is supported only in the preliminary phase of {measurement} measurements.");
    let at = lines
        .iter()
        .position(|l| l.starts_with("Info: Preliminary phase finished.") || l.starts_with("Error: Failed to fill state table"))
        .map_or(0, |i| i + 1);
    let mut out = lines;
    out.insert(at, warning);
    out
}

fn run(c: &Common, spec: &TrialSpec) -> Result<TrialReport> {
    let mut r = runner::open(&c.cfg).map_err(|e| {
        let t = &c.cfg.tester;
        let given = if Path::new(xlat_config::COMPANION).exists() {
            format!("as ./{} gives them", xlat_config::COMPANION)
        } else {
            format!(
                "siitperf.conf names no ports; give them in ./{} beside it, e.g. [tester] backend = \"afpacket\", \
                 left_port = \"eth1\", right_port = \"eth2\" (docs/siitperf-compat.md)",
                xlat_config::COMPANION
            )
        };
        anyhow::anyhow!(
            "cannot open the tester's ports ({} {} and {}; {given}): {e:#}",
            t.backend.name(),
            t.left_port,
            t.right_port
        )
    })?;
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
    let lines = with_enumeration_warning(&c, "Latency", siitperf_latency_lines(&report));
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
    let lines = with_enumeration_warning(&c, "PDV", siitperf_pdv_lines(&report, frame_timeout));
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

    /// A stateful NAT44 siitperf.conf: Initiator left, 100 x 10 forward port combinations.
    const CONF: &str = "IP-L-Vers 4\nIP-R-Vers 4\nIPv4-L-Real 198.18.0.2\nIPv4-R-Real 198.19.0.2\n\
        MAC-L-DUT 02:00:00:00:00:01\nMAC-R-DUT 02:00:00:00:00:02\nForward 1\nReverse 1\nStateful 1\n\
        Fwd-var-sport 3\nFwd-var-dport 3\nFwd-sport-min 1024\nFwd-sport-max 1123\nFwd-dport-min 80\nFwd-dport-max 89\n";

    fn cfg(extra: &str) -> TestConfig {
        xlat_config::parse_siitperf(&format!("{CONF}{extra}"), "siitperf.conf").unwrap_or_else(|e| panic!("{e}"))
    }

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    fn ok(extra: &str, line: &str) -> (Common, usize, Vec<String>) {
        parse(cfg(extra), "siitperf-tp", &args(line), &[]).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    fn err(extra: &str, line: &str) -> String {
        match parse(cfg(extra), "siitperf-tp", &args(line), &[]) {
            Ok(_) => panic!("{line}: accepted"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn stateful_parameters_become_phase_1() {
        let (c, at, info) = ok("", "84 1000 10 2000 2 2 1000 1000 2000 500 1500");
        assert_eq!(at, 11);
        assert_eq!(
            c.spec.preliminary,
            Some(PreliminarySpec {
                frames: 1000,
                state_table: 1000,
                rate: 2000,
                timeout_ms: 500,
                phase_delay_ms: 1500,
            })
        );
        assert_eq!((c.spec.rate, c.spec.duration_s, c.spec.timeout_ms), (1000, 10.0, 2000));
        assert_eq!(c.cfg.stateful.preliminary_frames, Some(1000));
        assert_eq!(
            info,
            vec![
                "Info: 1000*N/R+T: 1000 <= D: 1500",
                "Info: Stateful test cmdline parameteres: N: 1000, M: 1000, R: 2000, T: 500, D: 1500",
            ]
        );
        // A stateless configuration takes six arguments and has no phase 1.
        let stateless = cfg("").clone();
        let mut stateless = stateless;
        stateless.setup.stateful.mode = Stateful::Off;
        let (c, at, info) = parse(stateless, "siitperf-tp", &args("84 1000 10 2000 2 2"), &[]).expect("stateless");
        assert_eq!((at, c.spec.preliminary, info.len()), (6, None, 0));
    }

    #[test]
    fn stateful_needs_eleven_arguments() {
        let e = err("", "84 1000 10 2000 2 2");
        assert!(
            e.starts_with("Input Error: siitperf-tp takes 11 arguments here (Stateful is set)"),
            "{e}"
        );
        let e = match parse(
            cfg(""),
            "siitperf-lat",
            &args("84 1000 10 2000 2 2 1000 1000 2000 500 1500"),
            &["delay", "timestamps"],
        ) {
            Ok(_) => panic!("accepted"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("takes 13 arguments"), "{e}");
        let (_, at, _) = parse(
            cfg(""),
            "siitperf-lat",
            &args("84 1000 10 2000 2 2 1000 1000 2000 500 1500 5 500"),
            &["delay", "timestamps"],
        )
        .expect("lat");
        assert_eq!(at, 11, "the -lat extras follow argv[11]");
    }

    #[test]
    fn stateful_parameter_ranges() {
        for (line, msg) in [
            ("0 1000 2000 500 1500", "Input Error: <N> 0 is out of range 1-4294967295"),
            (
                "4294967296 1000 2000 500 1500",
                "Input Error: <N> 4294967296 is out of range 1-4294967295",
            ),
            ("x 1000 2000 500 1500", "Input Error: <N> 'x' is not a whole number"),
            ("1000 0 2000 500 1500", "Input Error: <M> 0 is out of range 1-4294967295"),
            (
                "1000 4294967296 2000 500 1500",
                "Input Error: <M> 4294967296 is out of range 1-4294967295",
            ),
            // R is checked like a rate (siitperf checks <rate> there and divides by R = 0).
            ("1000 1000 0 500 1500", "Input Error: <R> 0 is out of range 1-14880952"),
            (
                "1000 1000 14880953 500 1500",
                "Input Error: <R> 14880953 is out of range 1-14880952",
            ),
            ("1000 1000 2000 0 1500", "Input Error: <T> 0 is out of range 1-2000"),
            ("1000 1000 2000 2001 1500", "Input Error: <T> 2001 is out of range 1-2000"),
            ("1000 1000 2000 500 0", "Input Error: <D> 0 is out of range 1-100000000"),
            (
                "1000 1000 2000 500 100000001",
                "Input Error: <D> 100000001 is out of range 1-100000000",
            ),
        ] {
            assert_eq!(err("", &format!("84 1000 10 2000 2 2 {line}")), msg, "{line}");
        }
        ok("", "84 1000 10 2000 2 2 1000 1000 14880952 1 100000000");
    }

    #[test]
    fn cross_check_1_phase_1_fits_in_d() {
        let e = err("", "84 1000 10 2000 2 2 1000 1000 1000 500 1499");
        assert!(
            e.starts_with("Input Error: 1000*N/R+T > D (preliminary test may not be performed"),
            "{e}"
        );
        assert!(e.ends_with("1000*N/R+T: 1500 > D: 1499"), "{e}");
        let (_, _, info) = ok("", "84 1000 10 2000 2 2 1000 1000 1000 500 1500");
        assert_eq!(info[0], "Info: 1000*N/R+T: 1500 <= D: 1500");
        // 1000*N/R rounds down: 1000 frames at 3000 frames/s take 333 ms.
        let (_, _, info) = ok("", "84 1000 10 2000 2 2 1000 1000 3000 1 334");
        assert_eq!(info[0], "Info: 1000*N/R+T: 334 <= D: 334");
        // 64-bit: 1000 * (2^32-1) does not wrap around in 32 bits.
        let e = err("Enumerate-ports 0\n", "84 1000 10 2000 2 2 4294967295 1000 1 2000 100000000");
        assert!(e.ends_with("1000*N/R+T: 4294967297000 > D: 100000000"), "{e}");
    }

    #[test]
    fn cross_check_2_exact_foreground_count() {
        // n = 5, m = 3, N = 8: frames 0-2 and 5-7 are foreground, 6 of them (siitperf's
        // N-N*(n-m)/n says 5 and would refuse M = 6).
        let both_v4_bg = "IPv6-L-Real 2001:2::2\nIPv6-R-Real 2001:2:0:8000::2\n";
        let (c, _, _) = ok(both_v4_bg, "84 1000 10 2000 5 3 8 6 1000 1 1000");
        assert_eq!(c.spec.preliminary.map(|p| p.state_table), Some(6));
        let e = err(both_v4_bg, "84 1000 10 2000 5 3 8 7 1000 1 1000");
        assert_eq!(
            e,
            "Input Error: the 6 foreground frames among N (8, foreground 3 of every 5) are fewer than M (7) \
             (there are not enough foreground frames to fill the state table)."
        );
    }

    #[test]
    fn cross_check_3_unique_combinations() {
        // Ports: 100 x 10 = 1000 combinations.
        let (_, _, info) = ok("Enumerate-ports 3\n", "84 1000 10 2000 2 2 1000 1000 2000 500 1500");
        assert_eq!(
            info,
            vec![
                "Info: 1000*N/R+T: 1000 <= D: 1500",
                "Info: number of unique port number combinations: 1000",
                "Info: number of foreground preliminary frames: 1000",
                "Info: Stateful test cmdline parameteres: N: 1000, M: 1000, R: 2000, T: 500, D: 1500",
            ]
        );
        let e = err("Enumerate-ports 3\n", "84 1000 10 2000 2 2 1001 1000 2000 500 1500");
        assert_eq!(
            e,
            "Input Error: There are not enough unique port number combinations for each (foreground) preliminary frame (1000 < 1001)."
        );
        // Linear enumeration wraps around and is not counted.
        let (_, _, info) = ok("Enumerate-ports 1\n", "84 1000 10 2000 2 2 5000 1000 5000 500 1500");
        assert_eq!(info.len(), 2);
        // IP addresses: 10 x 20 = 200 combinations (ports fixed).
        let ips = "Fwd-var-sport 0\nFwd-var-dport 0\nEnumerate-ips 3\nIP-L-var 3\nIP-R-var 3\nIP-L-min 1\nIP-L-max 10\n\
                   IP-R-min 1\nIP-R-max 20\n";
        let (_, _, info) = ok(ips, "84 1000 10 2000 2 2 200 200 2000 500 1500");
        assert_eq!(info[1], "Info: number of unique IP address combinations: 200");
        assert_eq!(info[2], "Info: number of foreground preliminary frames: 200");
        let e = err(ips, "84 1000 10 2000 2 2 201 200 2000 500 1500");
        assert!(
            e.starts_with("Input Error: There are not enough unique IP address combinations"),
            "{e}"
        );
        // Both: all four ranges full: 2^64 combinations (siitperf's 32-bit product wraps to 0).
        let both = "Enumerate-ports 3\nEnumerate-ips 3\nIP-L-var 3\nIP-R-var 3\nFwd-sport-min 0\nFwd-sport-max 65535\n\
                    Fwd-dport-min 0\nFwd-dport-max 65535\n";
        let (_, _, info) = ok(both, "84 1000 10 2000 2 2 1000 1000 2000 500 1500");
        assert_eq!(
            info[1],
            "Info: number of unique IP address and port number combinations: 18446744073709551616"
        );
        // With the Initiator on the right, the reverse ports count.
        let right = "Stateful 2\nEnumerate-ports 3\nRev-var-sport 3\nRev-var-dport 3\nRev-sport-min 1\nRev-sport-max 3\n\
                     Rev-dport-min 1\nRev-dport-max 2\n";
        let (_, _, info) = ok(right, "84 1000 10 2000 2 2 6 6 2000 500 1500");
        assert_eq!(info[1], "Info: number of unique port number combinations: 6");
    }

    #[test]
    fn cross_check_4_responder_tuples_need_more_than_one_entry() {
        let e = err("Responder-tuples 3\n", "84 1000 10 2000 2 2 1000 1 2000 500 1500");
        assert_eq!(
            e,
            "Input Error: 'Responder-tuples' MUST be set to 0, if the size of the state table (M) is 1."
        );
        ok("Responder-ports 0\n", "84 1000 10 2000 2 2 1000 1 2000 500 1500");
        ok("Responder-tuples 3\n", "84 1000 10 2000 2 2 1000 2 2000 500 1500");
    }

    /// The command line in the comment of examples/siitperf-nat64.conf passes every check.
    #[test]
    fn the_example_command_line() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/siitperf-nat64.conf");
        let cfg = xlat_config::load(&path, &[]).expect("example");
        let (c, _, info) = parse(cfg, "siitperf-tp", &args("84 10000 10 2000 2 2 100000 100000 50000 500 3000"), &[]).expect("ok");
        assert!(c.spec.preliminary.is_some());
        assert_eq!(info.len(), 4, "{info:?}");
        assert!(
            info[1].starts_with("Info: number of unique IP address and port number combinations: "),
            "{info:?}"
        );
    }

    #[test]
    fn the_enumeration_warning_of_lat_and_pdv() {
        let (c, _, _) = ok("Enumerate-ports 3\n", "84 1000 10 2000 2 2 1000 1000 2000 500 1500");
        let lines = vec![
            "Preliminary frames sent: 1000".to_string(),
            "Info: Preliminary phase finished.".to_string(),
            "Forward frames sent: 10000".to_string(),
        ];
        let out = with_enumeration_warning(&c, "Latency", lines.clone());
        assert_eq!(
            out[2],
            "Warning: Port number enumeration is supported only in the preliminary phase of Latency measurements."
        );
        assert_eq!(out.len(), 4);
        // Without the phase 1 lines, first.
        let out = with_enumeration_warning(&c, "PDV", vec!["Forward frames sent: 10000".to_string()]);
        assert_eq!(
            out[0],
            "Warning: Port number enumeration is supported only in the preliminary phase of PDV measurements."
        );
        // Without port enumeration, no warning.
        let (c, _, _) = ok("", "84 1000 10 2000 2 2 1000 1000 2000 500 1500");
        assert_eq!(with_enumeration_warning(&c, "PDV", lines.clone()), lines);
    }
}
