//! siitperf's face: the lines siitperf-tp, -lat and -pdv print about a trial, in siitperf's
//! words and order, with siitperf's exit code (docs/siitperf-compat.md). Made from the
//! siitperf code at lencsegabor/siitperf 2c82add (throughput.cc, latency.cc, pdv.cc):
//!
//! ```text
//! Info: Preliminary frame sending initiated at 2025-01-01 12:00:00     (-lat, -pdv: "... started.")
//! Info: Preliminary sender's sending took 0.5000001234 seconds.
//! Preliminary frames sent: 4000000        | Warning: Preliminary sending was too slow (...), the test is invalid.
//! Preliminary frames received: 4000000
//! Info: Preliminary phase finished.       | Error: Failed to fill state table (valid entries: v, state table size: M)!
//! Info: Testing initiated at 2025-01-01 12:00:01                        (-lat, -pdv: "Info: Testing started.")
//! Info: Forward sender's sending took 60.0000012345 seconds.
//! Forward frames sent: 240000000          | Warning: Forward sending exceeded the 60.0006000000 seconds limit, the test is invalid.
//! Info: Reverse sender's sending took ...
//! Reverse frames sent: 240000000
//! Forward frames received: 240000000
//! Reverse frames received: 240000000
//! Info: Test finished.
//! (-lat: TL and WCL lines; -pdv: PDV lines and "Info: Test finished." once more)
//! ```
//!
//! siitperf runs phase 2 after a phase 1 that was too slow or did not fill the state table
//! (siitperf-pdv alone stops on an unfilled table: `rte_exit`, the line on standard error,
//! exit code 1), and a script that compares phase 2's lines relies on them being there. What
//! xlatperf knows more (duplicates, reordering, its own drops, a DUT that mapped two
//! connections onto one tuple) goes on extra `Info:` lines that hold neither `Error:` nor
//! `invalid`, the words siitperf's scripts grep.

use xlat_trial::{PreliminaryReport, TrialReport, TOLERANCE};

use crate::delay::{Delay, LatencyStats, PdvStats};

/// Which of siitperf's programs prints, with what only it needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Program {
    /// siitperf-tp.
    Tp,
    /// siitperf-lat; a lost tag counts as `1000 x (duration - delay) + timeout` ms.
    Lat { delay_s: f64 },
    /// siitperf-pdv; with a frame timeout above 0 only the counts (frames later than it are
    /// lost), else the PDV lines.
    Pdv { frame_timeout_ms: u64 },
}

/// The wall-clock times siitperf-tp prints ("initiated at ..."), formatted by the caller
/// (siitperf: local time, `%F %T`). `None` leaves the line out (xlatperf's `trial` command).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Times {
    pub preliminary: Option<String>,
    pub testing: Option<String>,
}

/// What a siitperf program prints and how it ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub stdout: Vec<String>,
    pub stderr: Vec<String>,
    /// 0 when the run finished (also after "Failed to fill state table" in -tp and -lat, and
    /// after an invalid trial), 1 where siitperf calls `rte_exit`.
    pub exit_code: i32,
}

/// The lines siitperf prints about the preliminary phase of a stateful test (RFC 9693), in its
/// order: the sending time; the "too slow" warning (then no "sent" line) or the frames sent;
/// the frames received (a duplicate as often as it arrived, as siitperf counts); the state
/// table's verdict.
pub fn preliminary_lines(p: &PreliminaryReport) -> Vec<String> {
    let mut v = vec![format!(
        "Info: Preliminary sender's sending took {:.10} seconds.",
        p.send_duration_s
    )];
    if p.sending_valid {
        v.push(format!("Preliminary frames sent: {}", p.sent));
    } else {
        v.push(format!(
            "Warning: Preliminary sending was too slow (only {:.10} percent of required rate), the test is invalid.",
            preliminary_rate_percent(p)
        ));
    }
    v.push(format!("Preliminary frames received: {}", p.received + p.duplicates));
    v.push(if p.table_filled() {
        "Info: Preliminary phase finished.".to_string()
    } else {
        failed_to_fill(p)
    });
    v
}

fn failed_to_fill(p: &PreliminaryReport) -> String {
    format!(
        "Error: Failed to fill state table (valid entries: {}, state table size: {})!",
        p.valid_entries, p.state_table
    )
}

/// siitperf's percentage of the required preliminary rate that the sending achieved:
/// 100 x N / (elapsed x R); 0 when nothing can be computed.
pub fn preliminary_rate_percent(p: &PreliminaryReport) -> f64 {
    let d = p.send_duration_s * p.rate as f64;
    if d > 0.0 && d.is_finite() {
        100.0 * p.frames as f64 / d
    } else {
        0.0
    }
}

/// "Forward" or "Reverse".
fn title(direction: &str) -> &'static str {
    if direction == "forward" {
        "Forward"
    } else {
        "Reverse"
    }
}

/// True when one of siitperf's own lines already says `reason` (the engine words these
/// reasons as siitperf does).
fn said_by_siitperf(reason: &str) -> bool {
    ["Preliminary sending was too slow", "Failed to fill state table"]
        .iter()
        .any(|s| reason.contains(s))
        || ["Forward", "Reverse"]
            .iter()
            .any(|t| reason.starts_with(&format!("{t} sending exceeded")) || reason.starts_with(&format!("{t} sending stopped")))
}

/// An invalid reason that siitperf would not know of, as an `Info:` line that siitperf's
/// scripts do not grep (no `Error:`, no `invalid`).
fn xlatperf_reason(reason: &str) -> String {
    let r = reason.replace(", the test is invalid", "").replace("invalid", "not valid");
    format!("Info: xlatperf: {r}; by xlatperf's judgement this trial does not count.")
}

/// siitperf's output for trial `r` as `program` prints it.
pub fn output(r: &TrialReport, program: Program, times: &Times) -> Output {
    let mut out = Vec::new();
    let started = |what: &str, at: &Option<String>| match program {
        Program::Tp => at.as_ref().map(|t| format!("Info: {what} initiated at {t}")),
        _ => Some(format!("Info: {what} started.")),
    };
    if let Some(p) = &r.preliminary {
        out.extend(started("Preliminary frame sending", &times.preliminary));
        let lines = preliminary_lines(p);
        if !p.table_filled() && matches!(program, Program::Pdv { .. }) {
            // siitperf-pdv's rte_exit: the error on standard error, no phase 2.
            out.extend(lines.iter().take(lines.len() - 1).cloned());
            return Output {
                stdout: out,
                stderr: vec![failed_to_fill(p)],
                exit_code: 1,
            };
        }
        out.extend(lines);
    }
    out.extend(started("Testing", &times.testing));
    // Phase 1's reasons of xlatperf's own: known before phase 2 started.
    let (phase1, phase2): (Vec<&String>, Vec<&String>) = r
        .invalid_reasons
        .iter()
        .filter(|x| !said_by_siitperf(x))
        .partition(|x| x.starts_with("Preliminary phase") || x.starts_with("the DUT mapped"));
    let limit = r.duration_s * TOLERANCE;
    let late_word = if matches!(program, Program::Pdv { .. }) {
        "Error"
    } else {
        "Warning"
    };
    for (name, d) in r.directions() {
        let t = title(name);
        out.push(format!("Info: {t} sender's sending took {:.10} seconds.", d.send_duration_s));
        let gave_up = r.invalid_reasons.iter().any(|x| x.starts_with(&format!("{t} sending stopped")));
        if d.send_duration_s > limit || gave_up {
            out.push(format!(
                "{late_word}: {t} sending exceeded the {limit:.10} seconds limit, the test is invalid."
            ));
        } else {
            out.push(format!("{t} frames sent: {}", d.counts.sent));
        }
    }
    for (name, d) in r.directions() {
        let t = title(name);
        out.push(format!("{t} frames received: {}", d.counts.received + d.counts.duplicates));
        if d.counts.duplicates + d.counts.reordered + d.counts.tester_tx_dropped + d.counts.tester_rx_dropped > 0 {
            out.push(format!(
                "Info: {t}: {} distinct frames received, {} duplicates, {} reordered; tester dropped: tx {}, rx {}",
                d.counts.received, d.counts.duplicates, d.counts.reordered, d.counts.tester_tx_dropped, d.counts.tester_rx_dropped
            ));
        }
    }
    out.extend(phase1.into_iter().chain(phase2).map(|x| xlatperf_reason(x)));
    out.push("Info: Test finished.".to_string());
    match program {
        Program::Tp => {}
        Program::Lat { delay_s } => out.extend(latency_lines(r, delay_s)),
        Program::Pdv { frame_timeout_ms } => {
            if frame_timeout_ms == 0 {
                out.extend(pdv_lines(r));
            }
            out.push("Info: Test finished.".to_string());
        }
    }
    Output {
        stdout: out,
        stderr: Vec::new(),
        exit_code: 0,
    }
}

/// The lines of a trial as siitperf-tp prints them, without the wall-clock lines (xlatperf's
/// `trial` command).
pub fn tp_lines(r: &TrialReport) -> Vec<String> {
    output(r, Program::Tp, &Times::default()).stdout
}

/// siitperf-lat's TL and WCL lines. A lost tag counts as siitperf's penalty,
/// `1000 x (duration - delay) + timeout` ms, so that the value stays a number scripts compare.
fn latency_lines(r: &TrialReport, delay_s: f64) -> Vec<String> {
    let worst_ms = (r.duration_s - delay_s).max(0.0) * 1000.0 + r.timeout_ms as f64;
    let ms = |d: Delay| if d.is_infinite() { worst_ms } else { d.ms() };
    let mut v = Vec::new();
    for (name, d) in r.directions() {
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

/// siitperf-pdv's PDV lines; an infinite PDV (more than 0.1 % lost) as siitperf's penalty,
/// `1000 x duration + timeout` ms.
fn pdv_lines(r: &TrialReport) -> Vec<String> {
    let worst_ms = r.duration_s * 1000.0 + r.timeout_ms as f64;
    let mut v = Vec::new();
    for (name, d) in r.directions() {
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

#[cfg(test)]
#[path = "siitperf_tests.rs"]
mod tests;
