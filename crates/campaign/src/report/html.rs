//! The report page: one self-contained HTML file (inline CSS and SVG, no script, nothing
//! fetched), readable offline and printable to PDF.
//!
//! The page is built with maud's `html!`: every text spliced into it (test names, DUT hooks,
//! commands and errors from plans and result documents written elsewhere) is escaped by
//! construction; only our own constants and the plots' SVG (escaped by `xlat_results::svg`)
//! go in as `PreEscaped`.
//!
//! Every number of the summary table carries its exact value in `data-value` (the text shows
//! it rounded), so that a test can compare the page with the JSON documents.

use std::collections::{BTreeMap, BTreeSet};

use maud::{html, Markup, PreEscaped, DOCTYPE};
use xlat_results::text::group;
use xlat_results::{Metric, Procedure, Summary};

use super::model::{Row, RowKey};
use super::read::Inputs;
use crate::estimate::human_seconds;
use crate::manifest::Status;

const STYLE: &str = "
body { font-family: sans-serif; margin: 2em; color: #222; }
p, h2 { max-width: 1100px; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.8em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; vertical-align: top; }
th { background: #f0f0f0; text-align: left; }
caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
td.num { text-align: right; white-space: nowrap; }
td small, p.note { color: #555; }
td.bound, span.bound { background: #fff1c2; }
td.failed { background: #fbd5d5; }
code { font-size: 0.85em; word-break: break-all; }
figure.plot { margin: 1em 0; page-break-inside: avoid; break-inside: avoid; }
figure.plot svg { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #555; }
@media print { body { margin: 0; } table { font-size: 0.7em; } h2 { page-break-after: avoid; } tr { page-break-inside: avoid; } }
";

/// A number for the table: grouped digits for large values, else 4 significant digits.
fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "∞".into();
    }
    if v.abs() >= 1000.0 {
        group(v.round() as u64)
    } else if v == 0.0 {
        "0".into()
    } else {
        let digits = (3 - v.abs().log10().floor() as i32).clamp(0, 9) as usize;
        format!("{v:.digits$}")
    }
}

/// A summary cell: the median, the range and the dispersion over the repetitions.
/// How a figure's cell is marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    Plain,
    /// The tester's own limit bounded it.
    TesterBound,
    /// Nothing failed up to the search's maximum: a lower bound ("at least").
    AtLeast,
}

impl Mark {
    fn of(row: &Row, procedure: Procedure) -> Mark {
        if row.tester_bound(procedure) {
            Mark::TesterBound
        } else if row.at_least(procedure) {
            Mark::AtLeast
        } else {
            Mark::Plain
        }
    }
}

/// An empty cell: no figure.
fn none() -> Markup {
    html! { td class="num" { "–" } }
}

fn cell(s: Option<&Summary>, metric: &str, mark: Mark) -> Markup {
    let Some(s) = s else {
        return none();
    };
    let (class, prefix) = match mark {
        Mark::Plain => ("num", ""),
        Mark::TesterBound => ("num bound", ""),
        Mark::AtLeast => ("num at-least", "≥ "),
    };
    let value = if s.median.is_finite() { s.median.to_string() } else { "inf".into() };
    html! {
        td class=(class) data-metric=(metric) data-value=(value) data-at-least=(mark != Mark::Plain) {
            (prefix) (fmt_num(s.median))
            @if s.n > 1 {
                br;
                small {
                    (fmt_num(s.min)) " – " (fmt_num(s.max))
                    @if let Some(d) = s.dispersion_percent { ", " (format!("{d:.2}")) " %" }
                    " (n=" (s.n) ")"
                }
            }
            @if mark == Mark::TesterBound { br; small { "tester-bound" } }
            @if mark == Mark::AtLeast { br; small { "at least: no loss up to the search's maximum" } }
        }
    }
}

/// The bit rate of `fps` frames of the row's frame size, as sent on the forward side.
fn bits(row: &Row, key: &RowKey, fps: f64) -> f64 {
    let len = if row.forward_ipv4 {
        key.frame_size.saturating_sub(20)
    } else {
        key.frame_size
    };
    fps * len as f64 * 8.0
}

/// Lines, one under the other.
fn lines(items: &[Markup]) -> Markup {
    html! { @for (i, m) in items.iter().enumerate() { @if i > 0 { br; } (m) } }
}

/// The RFC 2544 section 26 table: throughput, latency and PDV per DUT and frame size.
fn summary_table(rows: &BTreeMap<RowKey, Row>) -> Markup {
    let wanted = [Procedure::Throughput, Procedure::Latency, Procedure::Pdv];
    let heads = [
        "DUT",
        "frame size (B)",
        "throughput (frames/s)",
        "throughput (Mbit/s)",
        "DUT CPU busy at the throughput (%)",
        "latency typical, forward (ms)",
        "latency typical, reverse (ms)",
        "latency worst case, forward (ms)",
        "latency worst case, reverse (ms)",
        "PDV forward (ms)",
        "PDV reverse (ms)",
        "repetitions",
        "tester notes",
    ];
    let delays = [
        (Procedure::Latency, Metric::ForwardTlMs),
        (Procedure::Latency, Metric::ReverseTlMs),
        (Procedure::Latency, Metric::ForwardWclMs),
        (Procedure::Latency, Metric::ReverseWclMs),
        (Procedure::Pdv, Metric::ForwardPdvMs),
        (Procedure::Pdv, Metric::ReversePdvMs),
    ];
    html! {
        table id="summary-table" {
            thead { tr { @for h in heads { th { (h) } } } }
            tbody {
                @for (k, row) in rows.iter().filter(|(_, r)| wanted.iter().any(|p| r.has(*p))) {
                    @let tp = row.summary(Procedure::Throughput, Metric::ThroughputFps);
                    @let reps: Vec<Markup> = wanted
                        .iter()
                        .map(|p| (p, row.figures_of(*p).count()))
                        .filter(|(_, n)| *n > 0)
                        .map(|(p, n)| html! { (p) " " (n) })
                        .collect();
                    tr data-dut=(k.dut) data-variant=(k.variant) data-frame-size=(k.frame_size) {
                        td { (k.label()) }
                        td class="num" { (k.frame_size) }
                        (cell(tp, Metric::ThroughputFps.name(), Mark::of(row, Procedure::Throughput)))
                        @match tp {
                            Some(t) => td class="num" data-metric="throughput_bps" data-value=(bits(row, k, t.median)) {
                                (fmt_num(bits(row, k, t.median) / 1e6))
                            },
                            None => (none()),
                        }
                        (cell(row.summary(Procedure::Throughput, Metric::DutBusyPct), Metric::DutBusyPct.name(), Mark::Plain))
                        @for (p, m) in delays { (cell(row.summary(p, m), m.name(), Mark::Plain)) }
                        td { (lines(&reps)) }
                        td { (notes(row)) }
                    }
                }
            }
        }
    }
}

/// What bounded a search's figure, for a row's notes (the tester's bound has a note of its own).
fn bound_note(procedure: Procedure, b: &xlat_results::Bound) -> Option<String> {
    let capacity = procedure == Procedure::ConntrackCapacity;
    let procedure = procedure.name();
    Some(match b {
        xlat_results::Bound::Dut { rate, dut_busy } => {
            let busy = dut_busy.map_or(String::new(), |b| format!("; DUT CPU {:.0} % busy", 100.0 * b));
            let above = fmt_num(*rate as f64);
            if capacity {
                format!("{procedure}: bounded by the DUT ({above} connections did not fit{busy})")
            } else {
                format!("{procedure}: bounded by the DUT (loss at {above}{busy})")
            }
        }
        xlat_results::Bound::DutOrTester { rate, dut_busy } => {
            let busy = dut_busy.map_or(String::new(), |b| format!("; DUT CPU {:.0} % busy", 100.0 * b));
            format!(
                "{procedure}: at least; bounded by the DUT or the tester (at {} frames were lost only while the tester caught up from a pause{busy})",
                fmt_num(*rate as f64)
            )
        }
        xlat_results::Bound::Range { max } if capacity => {
            format!(
                "{procedure}: at least (every size fitted up to {} connections)",
                fmt_num(*max as f64)
            )
        }
        xlat_results::Bound::Range { max } => format!("{procedure}: at least (no loss up to {})", fmt_num(*max as f64)),
        xlat_results::Bound::Tester { .. } | xlat_results::Bound::Undetermined => return None,
    })
}

/// What bounded a row's searches (each repetition's, once per distinct verdict), and what the
/// tester bounded: invalid trials, retries, tester-bound results.
fn notes(row: &Row) -> Markup {
    let mut n = Vec::new();
    let mut said = BTreeSet::new();
    for r in &row.reps {
        if let Some(text) = r.figures.bound.as_ref().and_then(|b| bound_note(r.procedure, b)) {
            if said.insert(text.clone()) {
                n.push(html! { span class="bound-by" { (text) } });
            }
        }
    }
    let bound: BTreeSet<&str> = row
        .reps
        .iter()
        .filter(|r| r.figures.tester_bound)
        .map(|r| r.procedure.name())
        .collect();
    for p in bound {
        n.push(html! { span class="bound" { (p) ": bounded by the tester" } });
    }
    if row.invalid() > 0 {
        n.push(html! { (row.invalid()) " invalid trials" });
    }
    if row.retries() > 0 {
        n.push(html! { (row.retries()) " retries" });
    }
    lines(&n)
}

/// The notes on what bounded `procedure`'s figure in a row (each distinct verdict once).
fn bound_notes(row: &Row, procedure: Procedure) -> Markup {
    let mut said = BTreeSet::new();
    for f in row.figures_of(procedure) {
        if let Some(text) = f.bound.as_ref().and_then(|b| bound_note(procedure, b)) {
            said.insert(text);
        }
    }
    if row.tester_bound(procedure) {
        said.insert(format!("{}: bounded by the tester", procedure.name()));
    }
    let said: Vec<Markup> = said.into_iter().map(|t| html! { (t) }).collect();
    lines(&said)
}

/// Every figure of every group, whatever the procedure.
fn figures_table(rows: &BTreeMap<RowKey, Row>) -> Markup {
    let heads = [
        "DUT",
        "frame size (B)",
        "procedure",
        "figure",
        "median",
        "min",
        "max",
        "dispersion",
        "n",
        "bounded by",
    ];
    html! {
        table id="figures-table" {
            thead { tr { @for h in heads { th { (h) } } } }
            tbody {
                @for (k, row) in rows {
                    @for ((p, m), sum) in &row.summaries {
                        // What a search's bound bounds: its rate (frames or connections per
                        // second), or the capacity's number of connections (not the rate found at it).
                        @let bounded = if *p == Procedure::ConntrackCapacity {
                            m == Metric::CapacityConnections.name()
                        } else {
                            m.ends_with("_fps") || m.ends_with("_cps")
                        };
                        @let mark = if bounded { Mark::of(row, *p) } else { Mark::Plain };
                        tr {
                            td { (k.label()) }
                            td class="num" { (k.frame_size) }
                            td { (p.name()) }
                            td { (m) }
                            (cell(Some(&Summary { n: 1, ..sum.clone() }), m, mark))
                            td class="num" { (fmt_num(sum.min)) }
                            td class="num" { (fmt_num(sum.max)) }
                            td class="num" {
                                @match sum.dispersion_percent { Some(d) => { (format!("{d:.2}")) " %" }, None => "–" }
                            }
                            td class="num" { (sum.n) }
                            td { @if bounded { (bound_notes(row, *p)) } }
                        }
                    }
                }
            }
        }
    }
}

/// The machines, builds and tester settings the results came from.
fn environment(inputs: &Inputs) -> Markup {
    // (where, CPU, CPUs, kernel, host, xlatperf, commit), each machine and build once.
    let mut machines: Vec<[String; 7]> = Vec::new();
    let mut row = |place: String, h: Option<&xlat_results::output::Host>, version: &str, commit: Option<&str>| {
        let (cpu, cpus, kernel, host) = h.map_or(
            ("unknown (not recorded)".to_string(), String::new(), String::new(), String::new()),
            |h| (h.cpu_model.clone(), h.cpus.to_string(), h.kernel.clone(), h.hostname.clone()),
        );
        let line = [
            place,
            cpu,
            cpus,
            kernel,
            host,
            version.to_string(),
            commit.unwrap_or("unknown").to_string(),
        ];
        if !machines.iter().any(|m| m[1..] == line[1..]) {
            machines.push(line);
        }
    };
    if let Some(m) = &inputs.manifest {
        for (i, sess) in m.sessions.iter().enumerate() {
            let place = format!("campaign session {} ({})", i + 1, sess.started_at);
            row(place, Some(&sess.host), &sess.xlatperf_version, sess.git_commit.as_deref());
        }
    }
    for src in &inputs.sources {
        let m = &src.doc.meta;
        row("results".into(), m.host.as_ref(), &m.xlatperf_version, m.git_commit.as_deref());
    }
    // (DUT, tester, hooks), each once.
    let mut testers: Vec<[String; 3]> = Vec::new();
    for src in &inputs.sources {
        let c = &src.doc.meta.config;
        let tester = c.get("tester").map(compact).unwrap_or_default();
        let hooks: Vec<String> = c
            .get("dut")
            .and_then(|d| d.as_object())
            .map(|o| {
                o.iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| format!("{k} = {}", v.as_str().map_or(v.to_string(), String::from)))
                    .collect()
            })
            .unwrap_or_default();
        let hooks = if hooks.is_empty() { "none".into() } else { hooks.join("; ") };
        let line = [src.dut.clone(), tester, hooks];
        if !testers.contains(&line) {
            testers.push(line);
        }
    }
    let heads = ["where", "CPU", "CPUs", "kernel", "host", "xlatperf", "git commit"];
    html! {
        table id="environment-table" {
            thead { tr { @for h in heads { th { (h) } } } }
            tbody {
                @for [place, cpu, cpus, kernel, host, version, commit] in &machines {
                    tr { td { (place) } td { (cpu) } td class="num" { (cpus) } td { (kernel) } td { (host) } td { (version) } td { (commit) } }
                }
            }
        }
        table id="tester-table" {
            thead { tr { th { "DUT" } th { "tester backend and ports" } th { "DUT hooks" } } }
            tbody {
                @for [dut, tester, hooks] in &testers {
                    tr { td { (dut) } td { code { (tester) } } td { code { (hooks) } } }
                }
            }
        }
    }
}

/// A JSON object as `key = value, ...` without nulls.
fn compact(v: &serde_json::Value) -> String {
    match v.as_object() {
        Some(o) => o
            .iter()
            .filter(|(_, x)| !x.is_null())
            .map(|(k, x)| format!("{k} = {}", x.as_str().map_or(x.to_string(), String::from)))
            .collect::<Vec<_>>()
            .join(", "),
        None => v.to_string(),
    }
}

/// A line of the runs table.
struct RunLine<'a> {
    file: &'a str,
    procedure: &'a str,
    dut: &'a str,
    status: String,
    class: &'static str,
    started: Option<&'a str>,
    took: Option<f64>,
    command: String,
}

/// Every run: file, status, when, how long, the command that reproduces it.
fn runs_table(inputs: &Inputs) -> Markup {
    let mut lines = Vec::new();
    for src in &inputs.sources {
        let status = if src.doc.complete {
            "done"
        } else if src.doc.interrupted {
            "interrupted (partial)"
        } else {
            "incomplete (partial)"
        };
        let command = match (&src.run, &src.doc.meta.command_line) {
            (Some(r), _) => format!("cd {} && {}", src.origin.display(), r.command.join(" ")),
            (None, Some(c)) => c.join(" "),
            (None, None) => String::new(),
        };
        lines.push(RunLine {
            file: &src.file,
            procedure: &src.doc.procedure,
            dut: &src.dut,
            status: status.into(),
            class: "",
            started: src.doc.meta.started_at.as_deref(),
            took: src.run.as_ref().and_then(|r| r.elapsed_s),
            command,
        });
    }
    if let Some(m) = &inputs.manifest {
        for r in m.runs.iter().filter(|r| r.status != Status::Done) {
            let (status, class) = match r.status {
                Status::Failed => (format!("FAILED: {}", r.error.as_deref().unwrap_or("")), "failed"),
                _ => ("not run yet".to_string(), ""),
            };
            lines.push(RunLine {
                file: &r.file,
                procedure: &r.procedure,
                dut: &r.test,
                status,
                class,
                started: r.started_at.as_deref(),
                took: r.elapsed_s,
                command: r.command.join(" "),
            });
        }
    }
    let heads = ["result", "procedure", "DUT", "status", "started", "took", "command (reproduces it)"];
    html! {
        table id="runs-table" {
            thead { tr { @for h in heads { th { (h) } } } }
            tbody {
                @for l in &lines {
                    tr {
                        td { code { (l.file) } }
                        td { (l.procedure) }
                        td { (l.dut) }
                        td class=(l.class) { (l.status) }
                        td { (l.started.unwrap_or("")) }
                        td { (l.took.map(human_seconds).unwrap_or_default()) }
                        td { code { (l.command) } }
                    }
                }
            }
        }
    }
}

/// The directories reported on, as given.
fn from(inputs: &Inputs) -> String {
    let dirs: Vec<String> = inputs.dirs.iter().map(|d| d.display().to_string()).collect();
    dirs.join(" + ")
}

const SUMMARY_NOTE: &str = "Medians over every repetition of every run of a DUT and frame size; below each, the minimum \u{2013} maximum, the dispersion ((max \u{2212} min) / median) and the number of repetitions. Throughput in frames/s per direction and in Mbit/s of the frames as sent (IPv4 frames 20 bytes shorter than the frame size; FCS counted, preamble and gap not). Typical latency is the median, worst-case the 99.9th percentile of the tagged frames (RFC 8219 section 7.2); PDV the 99.9th percentile less the minimum one-way delay (section 7.3.1). Shaded: bounded by the tester's own limit, not the DUT's.";

/// The whole page.
pub fn page(inputs: &Inputs, rows: &BTreeMap<RowKey, Row>, unread: &[(String, String)], generated_at: &str) -> String {
    let name = inputs.manifest.as_ref().map_or_else(|| from(inputs), |m| m.name.clone());
    let (failed, pending) = inputs.manifest.as_ref().map_or((0, 0), |m| {
        let (_, f, p) = m.counts();
        (f, p)
    });
    let missing: Vec<String> = inputs.missing_shards.iter().map(|s| s.to_string()).collect();
    let figs = super::plots::plots(rows);
    let scales: Vec<(super::scale::Axis, Markup)> = super::scale::Axis::ALL
        .into_iter()
        .filter_map(|axis| super::scale::tables(&inputs.sources, axis).map(|t| (axis, t)))
        .collect();
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { "xlatperf report: " (name) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                h1 { "xlatperf report: " (name) }
                p {
                    "From " code { (from(inputs)) } ", made " (generated_at) ": " (inputs.sources.len()) " results read"
                    @if failed > 0 { ", " span class="failed" { (failed) " runs failed" } }
                    @if pending > 0 { ", " (pending) " runs not run yet (the campaign is unfinished)" }
                    @if !unread.is_empty() { ", " span class="failed" { (unread.len()) " not read" } " (listed at the end)" }
                    @if !missing.is_empty() { ", " span class="failed" { "shards " (missing.join(", ")) " of the plan missing" } }
                    "."
                }
                h2 id="summary" { "Summary (RFC 2544 section 26)" }
                (summary_table(rows))
                p class="note" { (SUMMARY_NOTE) }
                @if !figs.is_empty() {
                    h2 id="plots" { "Plots" }
                    @for f in &figs { (f) }
                }
                @for (axis, table) in &scales {
                    h2 id=(axis.heading().0) { (axis.heading().1) }
                    p class="note" { (axis.note()) }
                    (table)
                }
                h2 id="figures" { "Every figure" }
                (figures_table(rows))
                h2 id="environment" { "Environment" }
                (environment(inputs))
                h2 id="runs" { "Runs" }
                (runs_table(inputs))
                @if !unread.is_empty() {
                    h2 id="unread" { "Not read" }
                    ul { @for (f, why) in unread { li { code { (f) } ": " (why) } } }
                }
            }
        }
    }
    .into_string()
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
