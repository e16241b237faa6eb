//! The output of every command, as text: a trial's siitperf lines and summary, the JSON
//! [`Document`] of a procedure command (every trial of every repetition of every frame size,
//! with [`RunMeta`]), the trials and summary CSV files, and the human text over frame sizes. The
//! tables of each result are in [`crate::text`], the plots in [`crate::plot`]; writing files
//! (atomically, or to standard output) is the binary's.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use xlat_engine::{PreliminaryReport, TrialReport};

use crate::delay::{Delay, LatencyStats, PdvStats};
use crate::error::BenchError;
use crate::record::{loss_percent, DirectionCounts, TrialRecord};
use crate::repeat::Repeated;
use crate::result::BenchResult;
use crate::text::{group, text_table};

/// The lines siitperf prints about the preliminary phase of a stateful test (RFC 9693), in its
/// order: the sending time; the "too slow" warning (then no "sent" line) or the frames sent;
/// the frames received; the state table's verdict.
pub fn siitperf_preliminary_lines(p: &PreliminaryReport) -> Vec<String> {
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
    v.push(format!("Preliminary frames received: {}", p.received));
    if p.valid_entries < p.state_table {
        v.push(format!(
            "Error: Failed to fill state table (valid entries: {}, state table size: {})!",
            p.valid_entries, p.state_table
        ));
    } else {
        v.push("Info: Preliminary phase finished.".to_string());
    }
    v
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

/// An invalid reason that [`siitperf_preliminary_lines`] already printed in siitperf's words.
fn said_by_preliminary_lines(reason: &str) -> bool {
    reason.contains("Preliminary sending was too slow") || reason.contains("Failed to fill state table")
}

/// The lines siitperf-tp prints, in its order, and a line with `invalid` when the trial is.
/// A stateful trial's preliminary lines come first, as siitperf prints them before phase 2.
///
/// `<Side> frames received:` carries siitperf's count: every test frame received, a duplicate
/// as often as it arrived (distinct sequence numbers plus duplicates), so that a script
/// comparing it with rate x duration judges a trial as it would with siitperf. Where xlatperf
/// knows more (duplicates, reordering, the tester's own drops), an `Info: <Side>: ...` line
/// after the two says so; it does not start with `<Side> frames` and so leaves scripts that
/// grep siitperf's lines alone (docs/siitperf-compat.md).
pub fn siitperf_lines(r: &TrialReport) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(p) = &r.preliminary {
        v.extend(siitperf_preliminary_lines(p));
    }
    for reason in &r.invalid_reasons {
        if r.preliminary.is_some() && said_by_preliminary_lines(reason) {
            continue;
        }
        v.extend(siitperf_warning(reason));
    }
    for (name, d) in r.directions() {
        let title = if name == "forward" { "Forward" } else { "Reverse" };
        v.push(format!("{title} frames sent: {}", d.sent));
        v.push(format!("{title} frames received: {}", d.received + d.duplicates));
        if d.duplicates + d.reordered + d.tester_tx_dropped + d.tester_rx_dropped > 0 {
            v.push(format!(
                "Info: {title}: {} distinct frames received, {} duplicates, {} reordered; tester dropped: tx {}, rx {}",
                d.received, d.duplicates, d.reordered, d.tester_tx_dropped, d.tester_rx_dropped
            ));
        }
    }
    v
}

/// An invalid reason as siitperf's warning line: a late sender in siitperf's exact words
/// (`Warning: Forward sending exceeded the 60.0006000000 seconds limit, the test is invalid.`)
/// with the time it took on an `Info:` line after it; any other reason as `Warning: <reason>.`
fn siitperf_warning(reason: &str) -> Vec<String> {
    if let Some((head, rest)) = reason.split_once(" seconds limit (took ") {
        if let Some((took, tail)) = rest.split_once(')') {
            let side = head.split_whitespace().next().unwrap_or("");
            return vec![
                format!("Warning: {head} seconds limit{tail}."),
                format!("Info: {side} sending took {took}."),
            ];
        }
    }
    vec![format!("Warning: {reason}.")]
}

/// "Forward" or "Reverse".
fn title(direction: &str) -> &'static str {
    if direction == "forward" {
        "Forward"
    } else {
        "Reverse"
    }
}

/// The lines of a latency trial. A lost tag counts as the largest possible latency: the test
/// duration plus the global timeout (a frame later than that cannot be received), so that the
/// printed value stays a number that scripts can compare.
pub fn siitperf_latency_lines(report: &TrialReport) -> Vec<String> {
    let mut v = siitperf_lines(report);
    let worst_ms = report.duration_s * 1000.0 + report.timeout_ms as f64;
    let ms = |d: Delay| if d.is_infinite() { worst_ms } else { d.ms() };
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

/// The lines of a PDV trial (frame timeout 0) or of the frame-timeout test (only the counts).
pub fn siitperf_pdv_lines(report: &TrialReport, frame_timeout_ms: u64) -> Vec<String> {
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

/// One line about the preliminary phase of a stateful trial: "phase 1: N frames at R fps, X of
/// Y foreground frames learnt, state table V/M", then what went wrong, if anything.
pub fn preliminary_summary(p: &PreliminaryReport) -> String {
    let mut s = format!(
        "phase 1: {} frames at {} fps, {} of {} foreground frames learnt, state table {}/{}",
        group(p.frames),
        group(p.rate),
        group(p.foreground_received),
        group(p.foreground_sent),
        group(p.valid_entries),
        group(p.state_table)
    );
    if !p.sending_valid {
        let _ = write!(
            s,
            "; sending too slow: {:.6} s, {:.4} % of the rate",
            p.send_duration_s,
            preliminary_rate_percent(p)
        );
    } else if p.valid_entries < p.state_table {
        s.push_str("; state table NOT filled");
    }
    if let Some(n) = p.dut_connections {
        let _ = write!(s, "; the DUT counted {} connections", group(n));
    }
    if let Some(d) = p.duplicate_tuples.filter(|&d| d > 0) {
        let _ = write!(s, "; {} duplicate tuples (the DUT mapped connections onto one tuple)", group(d));
    }
    if p.tester_tx_dropped + p.tester_rx_dropped > 0 {
        let _ = write!(s, "; tester dropped: tx {}, rx {}", p.tester_tx_dropped, p.tester_rx_dropped);
    }
    s
}

/// A short human summary of one trial.
pub fn trial_summary(r: &TrialReport) -> String {
    let mut s = String::new();
    if let Some(p) = &r.preliminary {
        s.push_str(&preliminary_summary(p));
        s.push('\n');
        if r.directions().next().is_none() {
            s.push_str("phase 2 did not run\n");
        }
    }
    for (name, d) in r.directions() {
        let loss = loss_percent(d.sent, d.received).unwrap_or(0.0);
        s.push_str(&format!(
            "{name:<8} sent {:>12}  received {:>12}  lost {:>10} ({loss:.4} %)  tester dropped: tx {}, rx {}  dup {:>6}  reordered {:>6}  rate {:>12.1}/s  max lag {:>9.1} us\n",
            d.sent,
            d.received,
            d.lost,
            d.tester_tx_dropped,
            d.tester_rx_dropped,
            d.duplicates,
            d.reordered,
            d.achieved_rate,
            d.max_lag_ns as f64 / 1000.0
        ));
        if d.unexpected > 0 {
            s.push_str(&format!(
                "{name:<8} {} test frames not of this trial (late, or another tester's: {})\n",
                d.unexpected, d.foreign
            ));
        }
    }
    if r.valid {
        let verdict = if r.total_lost() == 0 { "no loss" } else { "loss" };
        s.push_str(&format!("trial valid: {verdict}\n"));
    } else {
        for reason in &r.invalid_reasons {
            s.push_str(&format!("trial INVALID: {reason}\n"));
        }
    }
    s
}

/// Who produced a result and from what; the CLI fills it in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    pub xlatperf_version: String,
    /// The version of this crate.
    pub bench_version: String,
    /// The effective configuration of the run (the CLI's parsed test description).
    pub config: serde_json::Value,
    /// Every random seed in use, by name (port and address pseudorandomness, simulator, ...).
    pub seeds: BTreeMap<String, u64>,
    /// Start time as the CLI formats it (RFC 3339 recommended).
    pub started_at: Option<String>,
    pub command_line: Option<Vec<String>>,
}

impl RunMeta {
    pub fn new(xlatperf_version: &str) -> RunMeta {
        RunMeta {
            xlatperf_version: xlatperf_version.to_string(),
            bench_version: env!("CARGO_PKG_VERSION").to_string(),
            ..RunMeta::default()
        }
    }
}

/// The results of one frame size: every repetition and the summary over them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeResult<T> {
    pub frame_size: usize,
    pub result: Repeated<T>,
}

/// The JSON document of a procedure command: who ran what with which configuration, and every
/// trial of every repetition of every frame size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document<T> {
    /// "throughput", "frame-loss", "latency", "pdv", "back-to-back", "recovery".
    pub procedure: String,
    /// False while the command is still running (the file is rewritten after every finished
    /// repetition) or when it stopped early.
    pub complete: bool,
    pub meta: RunMeta,
    pub frame_sizes: Vec<usize>,
    /// Every finished repetition (`result.runs`) of every frame size begun.
    pub results: Vec<SizeResult<T>>,
    /// The command was stopped by Ctrl-C: `results` holds the finished repetitions and
    /// `interrupted_run` the trials of the one in progress.
    #[serde(default)]
    pub interrupted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted_run: Option<InterruptedRun>,
}

/// The repetition that Ctrl-C stopped: every trial it had done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterruptedRun {
    pub frame_size: usize,
    /// From 0, as in the trials CSV.
    pub repetition: usize,
    pub trials: Vec<TrialRecord>,
}

impl<T: BenchResult + Serialize> Document<T> {
    /// The document of a finished run.
    pub fn new(procedure: &str, meta: RunMeta, results: Vec<SizeResult<T>>) -> Document<T> {
        Document {
            procedure: procedure.to_string(),
            complete: true,
            meta,
            frame_sizes: results.iter().map(|r| r.frame_size).collect(),
            results,
            interrupted: false,
            interrupted_run: None,
        }
    }

    /// Pretty JSON. Non-finite numbers become `null`.
    pub fn to_json(&self) -> Result<String, BenchError> {
        serde_json::to_string_pretty(self).map_err(|e| BenchError::Output(e.to_string()))
    }
}

/// What a procedure run collected beside its result, for plots.
#[derive(Debug, Clone, Default)]
pub struct Collected {
    /// Latency samples (ns, `u64::MAX` lost) by frame size and direction, over every valid trial.
    pub latency: BTreeMap<(usize, &'static str), Vec<u64>>,
}

/// One CSV field, quoted when needed (RFC 4180).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn float(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else if v > 0.0 {
        "inf".into()
    } else {
        String::new()
    }
}

/// The header of [`trials_csv`]. `tester_bound` marks the last attempt at a rate whose every
/// attempt was invalid; `*_tester_tx_dropped` / `*_tester_rx_dropped` are the frames the tester
/// itself failed to send / its receiving port dropped. The `pre_*` columns are the preliminary
/// phase of a stateful trial (empty for a stateless one): N, R, frames sent and received, the
/// foreground frames sent and learnt, the state table's valid entries and size M, the sending
/// time, whether it was in time, the duplicate learnt tuples (empty when not checked), the
/// tester's own drops, and the DUT's connection count after phase 1 (`dut.count`; empty when
/// not counted).
pub const TRIALS_CSV_HEADER: &str = "procedure,repetition,index,phase,attempt,frame_size,rate,duration_s,frames,valid,pass,tester_bound,\
fwd_sent,fwd_received,fwd_lost,fwd_loss_percent,fwd_tester_tx_dropped,fwd_tester_rx_dropped,\
rev_sent,rev_received,rev_lost,rev_loss_percent,rev_tester_tx_dropped,rev_tester_rx_dropped,invalid_reasons,\
pre_frames,pre_rate,pre_sent,pre_received,pre_foreground_sent,pre_foreground_received,pre_valid_entries,pre_state_table,\
pre_send_duration_s,pre_sending_valid,pre_duplicate_tuples,pre_tester_tx_dropped,pre_tester_rx_dropped,pre_dut_connections";

/// One row of [`trials_csv`] (with its newline): trial `t` of repetition `repetition`.
pub fn trial_csv_row(procedure: &str, repetition: usize, t: &TrialRecord) -> String {
    let dir = |d: Option<&DirectionCounts>| match d {
        Some(d) => format!(
            "{},{},{},{},{},{}",
            d.sent,
            d.received,
            d.lost,
            opt(d.loss_percent()),
            d.tester_tx_dropped,
            d.tester_rx_dropped
        ),
        None => ",,,,,".to_string(),
    };
    let pre = match &t.preliminary {
        Some(p) => format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            p.frames,
            p.rate,
            p.sent,
            p.received,
            p.foreground_sent,
            p.foreground_received,
            p.valid_entries,
            p.state_table,
            float(p.send_duration_s),
            p.sending_valid,
            opt(p.duplicate_tuples),
            p.tester_tx_dropped,
            p.tester_rx_dropped,
            opt(p.dut_connections)
        ),
        None => ",".repeat(13),
    };
    format!(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
        csv_field(procedure),
        repetition,
        t.index,
        csv_field(&t.phase),
        t.attempt,
        t.frame_size,
        t.rate,
        float(t.duration_s),
        t.frames,
        t.valid,
        opt(t.pass),
        t.tester_bound,
        dir(t.forward.as_ref()),
        dir(t.reverse.as_ref()),
        csv_field(&t.invalid_reasons.join("; ")),
        pre
    )
}

/// One CSV row per trial of every repetition of every frame size, then those of an
/// interrupted repetition.
pub fn trials_csv<T: BenchResult>(procedure: &str, results: &[SizeResult<T>], interrupted: Option<&InterruptedRun>) -> String {
    let mut out = format!("{TRIALS_CSV_HEADER}\n");
    for r in results {
        for (rep, run) in r.result.runs.iter().enumerate() {
            for t in run.trials() {
                out.push_str(&trial_csv_row(run.procedure(), rep, t));
            }
        }
    }
    if let Some(i) = interrupted {
        for t in &i.trials {
            out.push_str(&trial_csv_row(procedure, i.repetition, t));
        }
    }
    out
}

/// The header of [`summary_csv`] after its first column, `frame_size`.
pub const SUMMARY_CSV_HEADER: &str = "procedure,metric,n,infinite,median,min,max,p1,p99,dispersion_percent";

/// One CSV row per summarised metric and frame size.
pub fn summary_csv<T: BenchResult>(results: &[SizeResult<T>]) -> String {
    let mut out = format!("frame_size,{SUMMARY_CSV_HEADER}\n");
    for r in results {
        let procedure = r.result.runs.first().map_or("unknown", |x| x.procedure());
        for (name, s) in &r.result.summaries {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{}",
                r.frame_size,
                procedure,
                csv_field(name),
                s.n,
                s.infinite,
                float(s.median),
                float(s.min),
                float(s.max),
                float(s.p1),
                float(s.p99),
                s.dispersion_percent.map(float).unwrap_or_default()
            );
        }
    }
    out
}

/// The human output of a command: each frame size's tables, then, for several sizes, an
/// overview of the summaries.
pub fn human_results<T: BenchResult>(results: &[SizeResult<T>]) -> String {
    let mut s = String::new();
    for r in results {
        if results.len() > 1 {
            let _ = writeln!(s, "##### frame size {} #####", r.frame_size);
        }
        s.push_str(&r.result.human_table());
    }
    if results.len() > 1 {
        let rows: Vec<Vec<String>> = results
            .iter()
            .flat_map(|r| {
                r.result.summaries.iter().map(move |(k, v)| {
                    vec![
                        r.frame_size.to_string(),
                        k.clone(),
                        format!("{}", v.median),
                        format!("{}", v.min),
                        format!("{}", v.max),
                        v.dispersion_percent.map_or("-".into(), |d| format!("{d:.2}")),
                    ]
                })
            })
            .collect();
        s.push_str("Overview\n");
        s.push_str(&text_table(
            &["frame size", "metric", "median", "min", "max", "dispersion %"],
            &rows,
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delay::DelayRecorder;
    use xlat_engine::{DirectionReport, PdvReport, PreliminaryReport};

    #[test]
    fn csv_quoting() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }

    #[test]
    fn siitperf_lines_and_invalid_word() {
        let mut r = TrialReport {
            dut_hooks: Vec::new(),
            preliminary: None,
            valid: true,
            forward: Some(DirectionReport {
                sent: 10,
                received: 9,
                lost: 1,
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(siitperf_lines(&r), vec!["Forward frames sent: 10", "Forward frames received: 9"]);
        // siitperf counts a duplicate as often as it arrives; xlatperf says what it knows more.
        let mut d = r.clone();
        let f = d.forward.as_mut().unwrap();
        (f.received, f.duplicates, f.reordered) = (8, 2, 1);
        assert_eq!(
            siitperf_lines(&d),
            vec![
                "Forward frames sent: 10",
                "Forward frames received: 10",
                "Info: Forward: 8 distinct frames received, 2 duplicates, 1 reordered; tester dropped: tx 0, rx 0"
            ]
        );
        assert!(trial_summary(&r).contains("trial valid: loss"));
        assert!(
            trial_summary(&r).contains("lost          1 (10.0000 %)  tester dropped: tx 0, rx 0"),
            "{}",
            trial_summary(&r)
        );
        let f = r.forward.as_mut().unwrap();
        (f.tester_tx_dropped, f.tester_rx_dropped) = (3, 4);
        assert!(trial_summary(&r).contains("tester dropped: tx 3, rx 4"), "{}", trial_summary(&r));
        r.valid = false;
        // The engine's reason as it words it: siitperf's line byte for byte, the time after it.
        r.invalid_reasons
            .push("Forward sending exceeded the 1.0000100000 seconds limit (took 1.000412 s), the test is invalid".into());
        let l = siitperf_lines(&r);
        assert_eq!(
            l[0],
            "Warning: Forward sending exceeded the 1.0000100000 seconds limit, the test is invalid."
        );
        assert_eq!(l[1], "Info: Forward sending took 1.000412 s.");
        assert_eq!(l[2..4], ["Forward frames sent: 10", "Forward frames received: 9"]);
        assert!(trial_summary(&r).contains("INVALID"));
        r.invalid_reasons = vec!["the tester dropped 3 frames".into()];
        assert_eq!(siitperf_lines(&r)[0], "Warning: the tester dropped 3 frames.");
    }

    /// siitperf's example of STATEFUL.md section 7: N = M = 4,000,000 at R = 8,000,000.
    fn preliminary() -> PreliminaryReport {
        PreliminaryReport {
            frames: 4_000_000,
            rate: 8_000_000,
            sent: 4_000_000,
            received: 4_000_000,
            foreground_received: 4_000_000,
            foreground_sent: 4_000_000,
            valid_entries: 4_000_000,
            state_table: 4_000_000,
            send_duration_s: 0.5000001234,
            sending_valid: true,
            ..Default::default()
        }
    }

    fn stateful_report(p: PreliminaryReport, phase2: bool) -> TrialReport {
        let d = DirectionReport {
            sent: 240_000_000,
            received: 240_000_000,
            latency_ns: vec![1_000_000; 10],
            ..Default::default()
        };
        TrialReport {
            dut_hooks: Vec::new(),
            valid: phase2,
            duration_s: 60.0,
            timeout_ms: 2000,
            forward: phase2.then(|| d.clone()),
            reverse: phase2.then_some(d),
            preliminary: Some(p),
            ..Default::default()
        }
    }

    #[test]
    fn siitperf_preliminary_lines_when_phase_1_succeeded() {
        let r = stateful_report(preliminary(), true);
        assert_eq!(
            siitperf_lines(&r),
            vec![
                "Info: Preliminary sender's sending took 0.5000001234 seconds.",
                "Preliminary frames sent: 4000000",
                "Preliminary frames received: 4000000",
                "Info: Preliminary phase finished.",
                "Forward frames sent: 240000000",
                "Forward frames received: 240000000",
                "Reverse frames sent: 240000000",
                "Reverse frames received: 240000000",
            ]
        );
        // -lat and -pdv print the same preliminary lines first.
        let l = siitperf_latency_lines(&r);
        assert_eq!(l[..4], siitperf_lines(&r)[..4]);
        assert!(l.contains(&"Forward TL: 1.000000".to_string()), "{l:?}");
        let p = siitperf_pdv_lines(&r, 10);
        assert_eq!(p, siitperf_lines(&r));
        assert_eq!(
            preliminary_summary(r.preliminary.as_ref().unwrap()),
            "phase 1: 4,000,000 frames at 8,000,000 fps, 4,000,000 of 4,000,000 foreground frames learnt, \
             state table 4,000,000/4,000,000"
        );
        let s = trial_summary(&r);
        assert!(s.starts_with("phase 1: 4,000,000 frames at 8,000,000 fps,"), "{s}");
        assert!(s.contains("trial valid: no loss") && !s.contains("did not run"), "{s}");
    }

    #[test]
    fn siitperf_preliminary_lines_when_sending_was_too_slow() {
        let mut p = preliminary();
        p.send_duration_s = 1.0;
        p.sending_valid = false;
        let mut r = stateful_report(p, false);
        // The engine's reason in siitperf's words is not printed twice; another reason is.
        r.invalid_reasons = vec![
            "Preliminary sending was too slow (only 50.0000000000 percent of required rate), the test is invalid".into(),
            "the tester itself dropped frames".into(),
        ];
        assert_eq!(
            siitperf_lines(&r),
            vec![
                "Info: Preliminary sender's sending took 1.0000000000 seconds.",
                "Warning: Preliminary sending was too slow (only 50.0000000000 percent of required rate), the test is invalid.",
                "Preliminary frames received: 4000000",
                "Info: Preliminary phase finished.",
                "Warning: the tester itself dropped frames.",
            ]
        );
        assert!(!siitperf_lines(&r).iter().any(|l| l.starts_with("Preliminary frames sent")));
        assert_eq!(siitperf_latency_lines(&r), siitperf_lines(&r));
        assert_eq!(siitperf_pdv_lines(&r, 0), siitperf_lines(&r));
        let s = trial_summary(&r);
        assert!(s.contains("sending too slow: 1.000000 s, 50.0000 % of the rate"), "{s}");
        assert!(s.contains("phase 2 did not run") && s.contains("trial INVALID"), "{s}");
    }

    #[test]
    fn siitperf_preliminary_lines_when_the_state_table_was_not_filled() {
        let mut p = preliminary();
        (p.received, p.foreground_received, p.valid_entries) = (3_999_990, 3_999_990, 3_999_990);
        p.duplicate_tuples = Some(2);
        let mut r = stateful_report(p, false);
        r.invalid_reasons = vec!["Failed to fill state table (valid entries: 3999990, state table size: 4000000)".into()];
        assert_eq!(
            siitperf_lines(&r),
            vec![
                "Info: Preliminary sender's sending took 0.5000001234 seconds.",
                "Preliminary frames sent: 4000000",
                "Preliminary frames received: 3999990",
                "Error: Failed to fill state table (valid entries: 3999990, state table size: 4000000)!",
            ]
        );
        assert_eq!(siitperf_latency_lines(&r), siitperf_lines(&r));
        let s = trial_summary(&r);
        assert!(
            s.contains("3,999,990 of 4,000,000 foreground frames learnt, state table 3,999,990/4,000,000; state table NOT filled"),
            "{s}"
        );
        assert!(s.contains("; 2 duplicate tuples"), "{s}");
        // Both failures at once: siitperf prints the warning and the error.
        let mut p = preliminary();
        (p.sending_valid, p.send_duration_s, p.valid_entries) = (false, 2.0, 1);
        let l = siitperf_preliminary_lines(&p);
        assert_eq!(l.len(), 4);
        assert!(l[1].starts_with("Warning: Preliminary sending was too slow (only 25.0000000000 percent"));
        assert!(l[3].starts_with("Error: Failed to fill state table (valid entries: 1,"));
    }

    #[test]
    fn latency_and_pdv_lines() {
        let mut lat = vec![1_000_000u64; 999];
        lat.push(u64::MAX);
        let r = TrialReport {
            dut_hooks: Vec::new(),
            preliminary: None,
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
        let l = siitperf_latency_lines(&r);
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
        let l = siitperf_pdv_lines(&p, 0);
        assert!(l.contains(&"Forward PDV: 0.250000".to_string()), "{l:?}");
        assert!(l.iter().any(|x| x.starts_with("Error: Reverse")), "{l:?}");
        assert_eq!(siitperf_pdv_lines(&p, 10).len(), 4);
    }
}
