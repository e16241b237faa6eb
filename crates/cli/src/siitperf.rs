//! siitperf's command lines (docs/siitperf-compat.md): `siitperf-tp`, `siitperf-lat`,
//! `siitperf-pdv`, as siitperf (lencsegabor/siitperf 2c82add) takes and answers them. Each reads
//! ./siitperf.conf, takes siitperf's positional arguments (extra ones are ignored, fewer give
//! `Input Error: Too few command line arguments.`), prints siitperf's `Info:` lines as its checks
//! pass (they stay printed when a later check fails) and the lines of `xlat_results::siitperf`.
//! Exit codes are siitperf's: 255 for an input error (its `main` returns -1), 1 where siitperf
//! calls `rte_exit` (a trial that could not run; siitperf-pdv's unfilled state table), 0 for a
//! run that finished, valid or not.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use xlat_config::TestConfig;
use xlat_engine::{LatencySpec, PdvSpec, PhaseTwoAfter, PreliminarySpec, TrialSpec};
use xlat_results::siitperf::{self as face, Program, Times};
use xlat_traffic::{IpVersion, Setup, Stateful, Variation};

use crate::runner;

/// siitperf's exit code for an input error: its `main` returns -1.
const INPUT_ERROR: i32 = 255;

/// The parsed common part: the configuration (with n/m applied) and the trial (with phase 1
/// in a stateful test).
struct Common {
    cfg: TestConfig,
    spec: TrialSpec,
}

/// siitperf's frame rate limit (10 Gbit/s Ethernet, 64-byte frames), for `<rate>`.
const MAX_RATE: u64 = 14_880_952;

/// An input error in siitperf's words (its whole line, `Input Error: ...`, with xlatperf's
/// detail where it adds one): what siitperf's users' scripts read.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
struct InputError(String);

type Input<T> = Result<T, InputError>;

/// Fail with siitperf's input error line `line`.
fn input<T>(line: impl Into<String>) -> Input<T> {
    Err(InputError(line.into()))
}

/// Check siitperf's stateful parameters `N M R T D` (already in range) against each other and
/// the configuration, in siitperf's order, with 64-bit (128-bit for the combinations)
/// arithmetic. The `Info:` lines siitperf prints on the way go to `info` as each check passes.
/// `n`/`m` are the foreground share of the command line.
fn stateful_checks(setup: &Setup, n: u32, m: u32, p: &PreliminarySpec, info: &mut Vec<String>) -> Input<()> {
    // 1. Phase 1 fits in D (siitperf's formula: the sending time rounded down, plus T).
    let needed = u128::from(p.frames) * 1000 / u128::from(p.rate) + u128::from(p.timeout_ms);
    if needed > u128::from(p.phase_delay_ms) {
        return input(format!(
            "Input Error: 1000*N/R+T > D (preliminary test may not be performed in the available time period). \
             (1000*N/R+T: {needed} > D: {})",
            p.phase_delay_ms
        ));
    }
    info.push(format!("Info: 1000*N/R+T: {needed} <= D: {}", p.phase_delay_ms));
    // 2. Enough foreground frames to fill the state table: the exact count (siitperf's
    //    N-N*(n-m)/n can be one less).
    let eff = xlat_config::foreground_frames(p.frames, n, m);
    if eff < p.state_table {
        return input(format!(
            "Input Error: N-N*(n-m)/n < M (there are not enough foreground frames to fill the state table). \
             (xlatperf counts them exactly: {eff} foreground frames among N = {} with n = {n}, m = {m}; M = {}.)",
            p.frames, p.state_table
        ));
    }
    // 3. A unique combination for every foreground frame of a pseudorandom enumeration.
    if let Some((c, what)) = xlat_config::combinations(setup) {
        info.push(format!("Info: number of unique {what} combinations: {c}"));
        info.push(format!("Info: number of foreground preliminary frames: {eff}"));
        if c < u128::from(eff) {
            // siitperf says "IP address" also when both are enumerated (sic "foregound").
            let said = if what == "port number" { what } else { "IP address" };
            return input(format!(
                "Input Error: There are not enough unique {said} combinations for each (foregound) preliminary frames. ({c} < {eff})"
            ));
        }
    }
    // 4. More than one tuple to choose from needs a state table of more than one entry.
    if setup.stateful.responder_tuples != Variation::Fixed && p.state_table == 1 {
        return input("Input Error: 'Responder-tuples' MUST be set to 0, if the size of the state table (M) is 1.");
    }
    // 5. (sic: siitperf's spelling, which scripts may match)
    info.push(format!(
        "Info: Stateful test cmdline parameteres: N: {}, M: {}, R: {}, T: {}, D: {}",
        p.frames, p.state_table, p.rate, p.timeout_ms, p.phase_delay_ms
    ));
    Ok(())
}

/// Argument `i` read as siitperf's `sscanf("%u")` reads it (leading blanks and a `+` allowed,
/// digits up to the first other character, at least one), within `lo..=hi`; else `message`.
fn arg(args: &[String], i: usize, lo: u64, hi: u64, message: &str) -> Input<u64> {
    let s = args.get(i).map(|s| s.trim_start()).unwrap_or("");
    let s = s.strip_prefix('+').unwrap_or(s);
    let digits: &str = &s[..s.bytes().take_while(u8::is_ascii_digit).count()];
    match digits.parse::<u64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => input(format!("Input Error: {message}")),
    }
}

/// Parse `<IPv6 size> <rate> <duration> <global timeout> <n> <m> [N M R T D] <extra...>` on
/// a configuration already read, in siitperf's order; `extra` is how many arguments the program
/// takes after them, which follow at the returned index. `Info:` lines go to `info`.
fn parse(cfg: TestConfig, args: &[String], extra: usize, info: &mut Vec<String>) -> Input<(Common, usize)> {
    let stateful = cfg.setup.stateful.mode != Stateful::Off;
    let base = if stateful { 11 } else { 6 };
    if args.len() < base + extra {
        return input("Input Error: Too few command line arguments.");
    }
    let size = arg(args, 0, 84, 1538, "IPv6 frame size must be between 84 and 1538.")? as usize;
    let rate = arg(args, 1, 1, MAX_RATE, "Frame rate must be between 1 and 14880952.")?;
    let duration = arg(args, 2, 1, 3600, "Test duration must be between 1 and 3600.")?;
    let timeout = arg(args, 3, 0, 60_000, "Global timeout must be between 0 and 60000.")?;
    let n = arg(args, 4, 2, u64::from(u32::MAX), "The value of 'n' must be at least 2.")? as u32;
    let m = arg(args, 5, 0, u64::from(u32::MAX), "Cannot read the value of 'm'.")? as u32;
    let setup = &cfg.setup;
    let v6 = |d: bool, v: IpVersion| d && v == IpVersion::V6;
    if size > 1518 && (v6(setup.forward, setup.left.ip_version) || v6(setup.reverse, setup.right.ip_version) || m < n) {
        return input(
            "Input Error: IPv6 frame sizes between 1518 and 1538 are allowed for pure IPv4 traffic only (as IPv4 frames are 20 bytes shorter).",
        );
    }
    let preliminary = if stateful {
        let u32_max = u64::from(u32::MAX);
        Some(PreliminarySpec {
            frames: arg(
                args,
                6,
                1,
                u32_max,
                "'N' (the number of preliminary frames) must be between 1 and 2^32-1.",
            )?,
            state_table: arg(
                args,
                7,
                1,
                u32_max,
                "'M' (the size of the state table of the Responder) must be between 1 and 2^32-1.",
            )?,
            // siitperf checks <rate> here where it means R, so R is any 32-bit value; 0, which
            // siitperf divides by, is refused.
            rate: arg(args, 8, 1, u32_max, "Preliminary frame rate 'R' must be between 1 and 2^32-1.")?,
            timeout_ms: arg(
                args,
                9,
                1,
                xlat_config::MAX_PRELIMINARY_TIMEOUT_MS,
                "the value of 'T' (global timeout for the preliminary frames) must be between 1 and 2000.",
            )?,
            phase_delay_ms: arg(
                args,
                10,
                1,
                xlat_config::MAX_PHASE_DELAY_MS,
                "the value of 'D' (delay caused by the preliminary phase) must be between 1 and 100000000.",
            )?,
        })
    } else {
        None
    };
    let mut cfg = cfg;
    // m > n: every frame is foreground (i mod n < m), as with m = n.
    let m = m.min(n);
    cfg.setup.fg_n = n;
    cfg.setup.fg_m = m;
    if let Some(p) = &preliminary {
        stateful_checks(&cfg.setup, n, m, p, info)?;
        // The command line's N M R T D are the configuration's phase 1 (for the checks of
        // validate); an R above what a TOML file may say is checked there at its limit.
        cfg.stateful = xlat_config::StatefulTrial {
            preliminary_frames: u32::try_from(p.frames).ok(),
            state_table: u32::try_from(p.state_table).ok(),
            preliminary_rate: Some(p.rate.min(xlat_config::MAX_PRELIMINARY_RATE)),
            preliminary_timeout_ms: Some(p.timeout_ms),
            phase_delay_ms: Some(p.phase_delay_ms),
        };
    }
    xlat_config::validate(&cfg).map_err(|e| InputError(format!("Input Error: {e}")))?;
    let spec = cfg.tester.bound_send_lag(TrialSpec {
        preliminary,
        ..TrialSpec::new(size, rate, duration as f64, timeout)
    });
    Ok((Common { cfg, spec }, base))
}

/// The trial of `program`: `c.spec` with its latency tags or delay recording, from the extra
/// arguments at `at`.
fn program_spec(program: &str, c: &Common, args: &[String], at: usize) -> Input<(TrialSpec, Program)> {
    let spec = c.spec.clone();
    match program {
        "siitperf-lat" => {
            let delay = arg(args, at, 0, 3600, "Delay before timestamps must be between 0 and 3600.")?;
            if delay as f64 >= spec.duration_s {
                return input("Input Error: Test duration MUST be longer than the delay before timestamps.");
            }
            let tags = arg(args, at + 1, 1, 50_000, "Number of timestamps must be between 1 and 50000.")?;
            if (spec.duration_s - delay as f64) * (spec.rate as f64) < tags as f64 {
                return input(
                    "Input Error: There are not enough test frames in the (duration-delay) interval to carry so many timestamps.",
                );
            }
            let latency = Some(LatencySpec {
                delay_s: delay as f64,
                tags,
            });
            Ok((TrialSpec { latency, ..spec }, Program::Lat { delay_s: delay as f64 }))
        }
        "siitperf-pdv" => {
            // A frame timeout is below the longest a frame can take: duration + global timeout.
            let bound = (spec.duration_s as u64 * 1000 + spec.timeout_ms).saturating_sub(1);
            let frame_timeout_ms = arg(
                args,
                at,
                0,
                bound.min(u64::from(u16::MAX)),
                &format!(
                    "Frame timeout must be between 0 and {} (below 1000*duration+global timeout).",
                    bound.min(u64::from(u16::MAX))
                ),
            )?;
            let pdv = Some(PdvSpec {
                frame_timeout_ms,
                exact: false,
            });
            Ok((TrialSpec { pdv, ..spec }, Program::Pdv { frame_timeout_ms }))
        }
        _ => Ok((spec, Program::Tp)),
    }
}

/// siitperf-lat and -pdv enumerate ports in phase 1 only: siitperf's warning, printed where
/// siitperf prints it (after the line that ends phase 1), else first.
fn with_enumeration_warning(c: &Common, program: Program, lines: Vec<String>) -> Vec<String> {
    let measurement = match program {
        Program::Tp => return lines,
        Program::Lat { .. } => "Latency",
        Program::Pdv { .. } => "PDV",
    };
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

/// Why the ports did not open, with where their names come from.
fn open_error(c: &Common, e: &anyhow::Error) -> String {
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
    format!(
        "Error: cannot open the tester's ports ({} {} and {}; {given}): {e:#}",
        t.backend.name(),
        t.left_port,
        t.right_port
    )
}

/// `secs` since 1970 as local time, siitperf's `%F %T`.
fn local_time(secs: u64) -> String {
    let t = libc::time_t::try_from(secs).unwrap_or(0);
    // SAFETY: localtime_r writes only into `tm`, which lives on this stack frame; `t` is a
    // valid time_t. A null result (out of range) leaves the zeroed `tm`, checked below.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe { !libc::localtime_r(&t, &mut tm).is_null() };
    if !ok {
        return crate::output::rfc3339(secs);
    }
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        i64::from(tm.tm_year) + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// Run `program` (`siitperf-tp`, `siitperf-lat` or `siitperf-pdv`) with siitperf's `args`;
/// print what siitperf prints; return its exit code.
pub fn main(program: &str, args: &[String]) -> i32 {
    let extra = match program {
        "siitperf-lat" => 2,
        "siitperf-pdv" => 1,
        _ => 0,
    };
    let cfg = match xlat_config::load_with_companion(Path::new("siitperf.conf")) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("Input Error: {e}");
            return INPUT_ERROR;
        }
    };
    let mut info = Vec::new();
    let parsed = parse(cfg, args, extra, &mut info).and_then(|(c, at)| Ok((program_spec(program, &c, args, at)?, c)));
    // siitperf prints each Info line as its check passes: they stay when a later one fails.
    for l in &info {
        println!("{l}");
    }
    let ((spec, prog), c) = match parsed {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return INPUT_ERROR;
        }
    };
    let mut r = match runner::open(&c.cfg) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{}", open_error(&c, &e));
            return INPUT_ERROR;
        }
    };
    // siitperf-tp and -lat run phase 2 after any phase 1; -pdv stops on an unfilled table.
    let spec = TrialSpec {
        phase_two_after: match prog {
            Program::Pdv { .. } => PhaseTwoAfter::FilledTable,
            _ => PhaseTwoAfter::AnyPhaseOne,
        },
        ..spec
    };
    let start = SystemTime::now();
    let testing = start + Duration::from_millis(spec.preliminary.map_or(0, |p| p.phase_delay_ms));
    let times = Times {
        preliminary: Some(local_time(unix_secs(start))),
        testing: Some(local_time(unix_secs(testing))),
    };
    let report = match r.run(&spec) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("Error: {}", e.chain());
            return 1;
        }
    };
    let o = face::output(&report, prog, &times);
    // siitperf-pdv's exit on an unfilled table comes before the warning.
    let lines = if o.exit_code == 0 {
        with_enumeration_warning(&c, prog, o.stdout)
    } else {
        o.stdout
    };
    for l in lines {
        println!("{l}");
    }
    for l in &o.stderr {
        eprintln!("{l}");
    }
    o.exit_code
}

#[cfg(test)]
#[path = "siitperf_tests.rs"]
mod tests;
