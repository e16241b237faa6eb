//! Output: the [`BenchResult`] trait every procedure result implements, the JSON envelope
//! ([`BenchOutput`]: every trial of every repetition plus configuration, version and seeds),
//! CSV writers and human-readable tables.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::b2b::BackToBackResult;
use crate::error::BenchError;
use crate::frame_loss::FrameLossResult;
use crate::latency::{LatencyResult, LatencySummary};
use crate::recovery::{RecoveryDirectionResult, RecoveryResult};
use crate::repeat::Repeated;
use crate::throughput::ThroughputResult;
use crate::trial::TrialRecord;

/// What every procedure result offers to the output layer.
pub trait BenchResult {
    /// "throughput", "frame-loss", "latency", "back-to-back", "recovery".
    fn procedure(&self) -> &'static str;
    /// Every trial, in order, retries included.
    fn trials(&self) -> &[TrialRecord];
    /// The numbers summarised over repetitions (name, value); an infinite value (a worst-case
    /// latency with lost tags) sorts last.
    fn metrics(&self) -> Vec<(String, f64)>;
    /// A plain-text table for a terminal.
    fn human_table(&self) -> String;
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

/// The JSON document of one procedure run (with its repetitions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchOutput<T> {
    pub procedure: String,
    pub meta: RunMeta,
    pub result: Repeated<T>,
}

impl<T: BenchResult + Serialize> BenchOutput<T> {
    pub fn new(meta: RunMeta, result: Repeated<T>) -> BenchOutput<T> {
        let procedure = result.runs.first().map_or("unknown", |r| r.procedure()).to_string();
        BenchOutput { procedure, meta, result }
    }

    /// Pretty JSON. Non-finite numbers become `null`.
    pub fn to_json(&self) -> Result<String, BenchError> {
        serde_json::to_string_pretty(self).map_err(|e| BenchError::Output(e.to_string()))
    }
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
/// itself failed to send / its receiving port dropped.
pub const TRIALS_CSV_HEADER: &str = "procedure,repetition,index,phase,attempt,frame_size,rate,duration_s,frames,valid,pass,tester_bound,\
fwd_sent,fwd_received,fwd_lost,fwd_loss_percent,fwd_tester_tx_dropped,fwd_tester_rx_dropped,\
rev_sent,rev_received,rev_lost,rev_loss_percent,rev_tester_tx_dropped,rev_tester_rx_dropped,invalid_reasons";

/// One row of [`trials_csv`] (with its newline): trial `t` of repetition `repetition`.
pub fn trial_csv_row(procedure: &str, repetition: usize, t: &TrialRecord) -> String {
    let dir = |d: Option<&crate::trial::DirectionCounts>| match d {
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
    format!(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
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
        csv_field(&t.invalid_reasons.join("; "))
    )
}

/// One row per trial of every repetition.
pub fn trials_csv<T: BenchResult>(result: &Repeated<T>) -> String {
    let mut out = String::from(TRIALS_CSV_HEADER);
    out.push('\n');
    for (rep, run) in result.runs.iter().enumerate() {
        for t in run.trials() {
            out.push_str(&trial_csv_row(run.procedure(), rep, t));
        }
    }
    out
}

/// The header of [`summary_csv`].
pub const SUMMARY_CSV_HEADER: &str = "procedure,metric,n,infinite,median,min,max,p1,p99,dispersion_percent";

/// One row per summarised metric.
pub fn summary_csv<T: BenchResult>(result: &Repeated<T>) -> String {
    let mut out = String::from(SUMMARY_CSV_HEADER);
    out.push('\n');
    let procedure = result.runs.first().map_or("unknown", |r| r.procedure());
    for (name, s) in &result.summaries {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{}",
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
    out
}

/// 1234567 -> "1,234,567".
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let parts: Vec<&str> = s
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|c| std::str::from_utf8(c).unwrap_or("?"))
        .collect();
    parts.join(",")
}

/// Columns aligned: the first column left, the others right.
pub fn text_table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let cols = headers.len();
    let mut width: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(cols) {
            width[i] = width[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = width[i].saturating_sub(c.chars().count());
            if i > 0 {
                s.push_str("  ");
            }
            if i == 0 {
                s.push_str(c);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            }
        }
        s.trim_end().to_string()
    };
    let mut out = line(headers.to_vec());
    out.push('\n');
    out.push_str(&line(
        width
            .iter()
            .map(|&w| "-".repeat(w))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str)
            .collect(),
    ));
    out.push('\n');
    for r in rows {
        let mut cells: Vec<&str> = r.iter().map(String::as_str).take(cols).collect();
        cells.resize(cols, "");
        out.push_str(&line(cells));
        out.push('\n');
    }
    out
}

/// The table of trials every human table ends with.
pub fn trials_table(trials: &[TrialRecord]) -> String {
    let rows: Vec<Vec<String>> = trials
        .iter()
        .map(|t| {
            let d = |d: Option<&crate::trial::DirectionCounts>| {
                d.map_or(("-".to_string(), "-".to_string(), "-".to_string()), |d| {
                    (
                        group(d.sent),
                        group(d.received),
                        format!("{}/{}", group(d.tester_tx_dropped), group(d.tester_rx_dropped)),
                    )
                })
            };
            let (fs, fr, fd) = d(t.forward.as_ref());
            let (rs, rr, rd) = d(t.reverse.as_ref());
            vec![
                t.index.to_string(),
                t.phase.clone(),
                group(t.rate),
                format!("{:.3}", t.duration_s),
                fs,
                fr,
                fd,
                rs,
                rr,
                rd,
                match t.pass {
                    None if t.tester_bound => "invalid: tester-bound".into(),
                    None => "invalid".into(),
                    Some(true) => "pass".into(),
                    Some(false) => "fail".into(),
                },
            ]
        })
        .collect();
    text_table(
        &[
            "#",
            "phase",
            "rate (fps)",
            "duration (s)",
            "fwd sent",
            "fwd received",
            "fwd tester dropped tx/rx",
            "rev sent",
            "rev received",
            "rev tester dropped tx/rx",
            "result",
        ],
        &rows,
    )
}

impl BenchResult for ThroughputResult {
    fn procedure(&self) -> &'static str {
        "throughput"
    }
    fn trials(&self) -> &[TrialRecord] {
        &self.trials
    }
    fn metrics(&self) -> Vec<(String, f64)> {
        let mut m = vec![
            ("throughput_fps".into(), self.throughput as f64),
            ("trial_seconds".into(), self.trial_seconds),
        ];
        if let Some(b) = self.tester_bound {
            m.push(("tester_bound_fps".into(), b as f64));
        }
        m
    }
    fn human_table(&self) -> String {
        let mut s = format!(
            "Throughput, frame size {}: {} frames/s per direction ({} search)\n\
             final interval [{}, {}] fps, error {} fps, loss tolerance {}, full trial {} s\n\
             {} trials, {:.1} trial-seconds ({:.1} s with timeouts)\n\n",
            self.frame_size,
            group(self.throughput),
            self.method.name(),
            group(self.lower),
            group(self.upper),
            group(self.error),
            self.loss_tolerance,
            self.duration_s,
            self.trials.len(),
            self.trial_seconds,
            self.elapsed_s
        );
        if let Some(b) = self.tester_bound {
            if self.bounded_by_tester {
                let _ = writeln!(
                    s,
                    "bounded by the tester at {} frames/s: the tester could not send faster (its trials were invalid), \
                     the DUT lost nothing up to {} frames/s and may be faster than measured\n",
                    group(b),
                    group(self.throughput)
                );
            } else {
                let _ = writeln!(
                    s,
                    "the tester could not send at {} frames/s (its trials were invalid); the DUT's limit was found below it\n",
                    group(b)
                );
            }
        }
        s.push_str(&trials_table(&self.trials));
        s
    }
}

impl BenchResult for FrameLossResult {
    fn procedure(&self) -> &'static str {
        "frame-loss"
    }
    fn trials(&self) -> &[TrialRecord] {
        &self.trials
    }
    fn metrics(&self) -> Vec<(String, f64)> {
        let mut m = Vec::new();
        for p in &self.points {
            if let Some(f) = p.forward_loss_percent {
                m.push((format!("forward_loss_percent@{}", p.rate), f));
            }
            if let Some(r) = p.reverse_loss_percent {
                m.push((format!("reverse_loss_percent@{}", p.rate), r));
            }
        }
        m
    }
    fn human_table(&self) -> String {
        let mut s = format!(
            "Frame loss rate, frame size {}, maximum rate {} fps{}\n\n",
            self.frame_size,
            group(self.max_rate),
            if self.two_zero_loss {
                " (ended by two zero-loss trials)"
            } else {
                ""
            }
        );
        let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.4}"));
        let rows: Vec<Vec<String>> = self
            .points
            .iter()
            .map(|p| {
                if p.tester_bound {
                    let na = "invalid: tester-bound".to_string();
                    vec![group(p.rate), format!("{:.1}", p.percent_of_max), na.clone(), na]
                } else {
                    vec![
                        group(p.rate),
                        format!("{:.1}", p.percent_of_max),
                        pct(p.forward_loss_percent),
                        pct(p.reverse_loss_percent),
                    ]
                }
            })
            .collect();
        s.push_str(&text_table(&["rate (fps)", "% of max", "fwd loss %", "rev loss %"], &rows));
        if let Some(b) = self.tester_bound {
            let _ = writeln!(
                s,
                "note: the tester could not send at {} frames/s and above where marked (invalid trials, not loss)",
                group(b)
            );
        }
        s
    }
}

fn delay_metric(m: &mut Vec<(String, f64)>, name: &str, d: crate::delay::Delay) {
    m.push((name.to_string(), d.ms()));
}

impl BenchResult for LatencyResult {
    fn procedure(&self) -> &'static str {
        "latency"
    }
    fn trials(&self) -> &[TrialRecord] {
        &self.trials
    }
    fn metrics(&self) -> Vec<(String, f64)> {
        let mut m = Vec::new();
        for (name, s) in [("forward", &self.forward), ("reverse", &self.reverse)] {
            if let Some(LatencySummary { typical, worst_case }) = s {
                delay_metric(&mut m, &format!("{name}_tl_ms"), *typical);
                delay_metric(&mut m, &format!("{name}_wcl_ms"), *worst_case);
            }
        }
        m
    }
    fn human_table(&self) -> String {
        let mut s = format!(
            "Latency, frame size {}, {} fps, {} tags after {} s of {} s, {} repetitions\n",
            self.frame_size,
            group(self.rate),
            self.tags,
            self.delay_s,
            self.duration_s,
            self.runs.len()
        );
        for (name, sum) in [("Forward", &self.forward), ("Reverse", &self.reverse)] {
            if let Some(sum) = sum {
                let _ = writeln!(
                    s,
                    "{name} TL (median of medians): {}   WCL (median of 99.9th percentiles): {}",
                    sum.typical, sum.worst_case
                );
            }
        }
        s.push('\n');
        let cell = |st: &Option<crate::delay::LatencyStats>, wcl: bool| {
            st.as_ref().map_or(
                "-".to_string(),
                |x| if wcl { x.worst_case.to_string() } else { x.typical.to_string() },
            )
        };
        let rows: Vec<Vec<String>> = self
            .runs
            .iter()
            .map(|r| {
                let lost = r.forward.as_ref().map_or(0, |x| x.lost) + r.reverse.as_ref().map_or(0, |x| x.lost);
                vec![
                    (r.repetition + 1).to_string(),
                    cell(&r.forward, false),
                    cell(&r.forward, true),
                    cell(&r.reverse, false),
                    cell(&r.reverse, true),
                    lost.to_string(),
                ]
            })
            .collect();
        s.push_str(&text_table(&["run", "fwd TL", "fwd WCL", "rev TL", "rev WCL", "lost tags"], &rows));
        s
    }
}

impl BenchResult for BackToBackResult {
    fn procedure(&self) -> &'static str {
        "back-to-back"
    }
    fn trials(&self) -> &[TrialRecord] {
        &self.trials
    }
    fn metrics(&self) -> Vec<(String, f64)> {
        let mut m = vec![
            ("average_frames".to_string(), self.average_frames),
            ("implied_buffer_time_s".to_string(), self.implied_buffer_time_s),
        ];
        if let Some(c) = self.corrected_buffer_time_s {
            m.push(("corrected_buffer_time_s".into(), c));
        }
        m
    }
    fn human_table(&self) -> String {
        let mut s = format!(
            "Back-to-back frames, frame size {}, line rate {} fps, {} repetitions\n",
            self.frame_size,
            group(self.line_rate),
            self.runs.len()
        );
        let rows = vec![vec![
            format!("{:.1}", self.average_frames),
            group(self.min_frames),
            group(self.max_frames),
            format!("{:.1}", self.std_dev_frames),
            format!("{:.6}", self.implied_buffer_time_s),
            self.corrected_buffer_time_s.map_or("-".to_string(), |c| format!("{c:.6}")),
        ]];
        s.push_str(&text_table(
            &[
                "average frames",
                "min",
                "max",
                "std dev",
                "implied buffer (s)",
                "corrected buffer (s)",
            ],
            &rows,
        ));
        if let Some(b) = self.tester_bound {
            let _ = writeln!(
                s,
                "note: the tester could not send bursts of {} frames at the line rate (invalid trials, not loss): \
                 where a run found within {} frames of that, the buffer may be larger (bounded by the tester)",
                group(b),
                group(self.error)
            );
        }
        if self.runs.iter().any(|r| r.at_max) {
            let _ = writeln!(
                s,
                "note: the longest burst tried ({} frames) passed: the buffer may be larger",
                group(self.max_burst)
            );
        }
        let _ = writeln!(
            s,
            "{} trials, {:.3} trial-seconds, {:.1} s idle",
            self.trials.len(),
            self.trial_seconds,
            self.idle_seconds
        );
        s
    }
}

impl BenchResult for RecoveryResult {
    fn procedure(&self) -> &'static str {
        "recovery"
    }
    fn trials(&self) -> &[TrialRecord] {
        &self.trials
    }
    fn metrics(&self) -> Vec<(String, f64)> {
        self.recovery_time_s
            .map(|t| vec![("recovery_time_s".to_string(), t)])
            .unwrap_or_default()
    }
    fn human_table(&self) -> String {
        let mut s = format!(
            "System recovery, frame size {}: {} fps for {} s, then {} fps for {} s (throughput {} fps)\n",
            self.frame_size,
            group(self.overload_rate),
            self.overload_s,
            group(self.reduced_rate),
            self.recovery_s,
            group(self.throughput)
        );
        let drops = |name: &str| {
            let t = self.trials.iter().rev().find(|t| t.valid);
            let d = t.and_then(|t| {
                if name == "forward" {
                    t.forward.as_ref()
                } else {
                    t.reverse.as_ref()
                }
            });
            d.map_or("-".to_string(), |d| {
                format!("{}/{}", group(d.tester_tx_dropped), group(d.tester_rx_dropped))
            })
        };
        let row = |name: &str, d: &Option<RecoveryDirectionResult>| {
            d.as_ref().map(|d| {
                vec![
                    name.to_string(),
                    group(d.sent),
                    group(d.lost),
                    drops(name),
                    d.recovery_time_s.map_or("-".to_string(), |t| format!("{:.3}", t * 1000.0)),
                    if d.lost_until_end { "no".into() } else { "yes".into() },
                ]
            })
        };
        let rows: Vec<Vec<String>> = [row("forward", &self.forward), row("reverse", &self.reverse)]
            .into_iter()
            .flatten()
            .collect();
        s.push_str(&text_table(
            &[
                "direction",
                "sent",
                "lost",
                "tester dropped tx/rx",
                "recovery time (ms)",
                "recovered",
            ],
            &rows,
        ));
        if !self.overloaded {
            s.push_str("note: no frame was lost, the DUT was not overloaded: the recovery time is undefined\n");
        }
        s
    }
}

impl<T: BenchResult> Repeated<T> {
    /// Each run's table, then the summary over the runs.
    pub fn human_table(&self) -> String {
        let mut s = String::new();
        for (i, r) in self.runs.iter().enumerate() {
            if self.runs.len() > 1 {
                let _ = writeln!(s, "=== repetition {} of {} ===", i + 1, self.runs.len());
            }
            s.push_str(&r.human_table());
            s.push('\n');
        }
        if self.runs.len() > 1 {
            s.push_str(&self.summary_table());
        }
        s
    }

    /// Median, min, max, 1st and 99th percentile and dispersion of each metric.
    pub fn summary_table(&self) -> String {
        let f = |v: f64| {
            if v.is_finite() && v.abs() >= 1000.0 {
                format!("{}{}", if v < 0.0 { "-" } else { "" }, group(v.abs().round() as u64))
            } else {
                format!("{v:.6}")
            }
        };
        let rows: Vec<Vec<String>> = self
            .summaries
            .iter()
            .map(|(k, s)| {
                vec![
                    k.clone(),
                    s.n.to_string(),
                    f(s.median),
                    f(s.min),
                    f(s.max),
                    f(s.p1),
                    f(s.p99),
                    s.dispersion_percent.map_or("-".into(), |d| format!("{d:.2}")),
                ]
            })
            .collect();
        text_table(&["metric", "n", "median", "min", "max", "p1", "p99", "dispersion %"], &rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouping_and_csv_quoting() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(7_161_269), "7,161,269");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}
