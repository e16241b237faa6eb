//! siitperf's command lines (docs/siitperf-compat.md): `siitperf-tp`, `siitperf-lat`,
//! `siitperf-pdv`, as siitperf (lencsegabor/siitperf 2c82add) takes and answers them. Each reads
//! ./siitperf.conf, then its arguments with `xlat_config::siitperf_args` (which prints siitperf's
//! `Info:` lines as its checks pass: they stay printed when a later check fails), runs the trial
//! and prints the lines of `xlat_results::siitperf`.
//! Exit codes are siitperf's: 255 for an input error (its `main` returns -1), 1 where siitperf
//! calls `rte_exit` (a trial that could not run; siitperf-pdv's unfilled state table), 0 for a
//! run that finished, valid or not.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use xlat_config::siitperf_args::{self, CommandLine};
use xlat_engine::TrialSpec;
use xlat_results::siitperf::{self as face, Program, Times};
use xlat_traffic::Stateful;

use crate::runner;

/// siitperf's exit code for an input error: its `main` returns -1.
const INPUT_ERROR: i32 = 255;

/// siitperf-lat and -pdv enumerate ports in phase 1 only: siitperf's warning, printed where
/// siitperf prints it (after the line that ends phase 1), else first.
fn with_enumeration_warning(c: &CommandLine, program: Program, lines: Vec<String>) -> Vec<String> {
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
fn open_error(c: &CommandLine, e: &anyhow::Error) -> String {
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

/// What the output says the trial measured: its latency tags' delay or its frame timeout.
fn face_program(spec: &TrialSpec) -> Program {
    match (spec.latency, spec.pdv) {
        (Some(l), _) => Program::Lat { delay_s: l.delay_s },
        (None, Some(p)) => Program::Pdv {
            frame_timeout_ms: p.frame_timeout_ms,
        },
        (None, None) => Program::Tp,
    }
}

/// Run `program` with siitperf's `args`; print what siitperf prints; return its exit code.
pub fn main(program: siitperf_args::Program, args: &[String]) -> i32 {
    let cfg = match xlat_config::load_with_companion(Path::new("siitperf.conf")) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("Input Error: {e}");
            return INPUT_ERROR;
        }
    };
    let mut info = Vec::new();
    let parsed = siitperf_args::read(program, cfg, args, &mut info);
    // siitperf prints each Info line as its check passes: they stay when a later one fails.
    for l in &info {
        println!("{l}");
    }
    let c = match parsed {
        Ok(c) => c,
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
    let spec = &c.spec;
    let prog = face_program(spec);
    let start = SystemTime::now();
    let testing = start + Duration::from_millis(spec.preliminary.map_or(0, |p| p.phase_delay_ms));
    let times = Times {
        preliminary: Some(local_time(unix_secs(start))),
        testing: Some(local_time(unix_secs(testing))),
    };
    let report = match r.run(spec) {
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
