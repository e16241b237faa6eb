//! The report page: one self-contained HTML file (inline CSS and SVG, no script, nothing
//! fetched), readable offline and printable to PDF.
//!
//! Every number of the summary table carries its exact value in `data-value` (the text shows
//! it rounded), so that a test can compare the page with the JSON documents.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use xlat_results::svg::{escape, LinePlot, Series};
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

fn esc(s: &str) -> String {
    escape(s)
}

/// A number for the table: grouped digits for large values, else 4 significant digits.
fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "&infin;".into();
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

fn cell(s: Option<&Summary>, metric: &str, mark: Mark) -> String {
    let Some(s) = s else {
        return "<td class=\"num\">&ndash;</td>".into();
    };
    let (class, prefix) = match mark {
        Mark::Plain => ("num", ""),
        Mark::TesterBound => ("num bound", ""),
        Mark::AtLeast => ("num at-least", "&ge;&nbsp;"),
    };
    let bound = mark == Mark::TesterBound;
    let mut c = format!(
        "<td class=\"{class}\" data-metric=\"{}\" data-value=\"{}\" data-at-least=\"{}\">{prefix}{}",
        esc(metric),
        if s.median.is_finite() { s.median.to_string() } else { "inf".into() },
        mark != Mark::Plain,
        fmt_num(s.median)
    );
    if s.n > 1 {
        let _ = write!(c, "<br><small>{} &ndash; {}", fmt_num(s.min), fmt_num(s.max));
        if let Some(d) = s.dispersion_percent {
            let _ = write!(c, ", {d:.2} %");
        }
        let _ = write!(c, " (n={})</small>", s.n);
    }
    if bound {
        c.push_str("<br><small>tester-bound</small>");
    }
    if mark == Mark::AtLeast {
        c.push_str("<br><small>at least: no loss up to the search's maximum</small>");
    }
    c.push_str("</td>");
    c
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

fn dut_label(k: &RowKey) -> String {
    if k.variant.is_empty() {
        k.dut.clone()
    } else {
        format!("{} ({})", k.dut, k.variant)
    }
}

/// The RFC 2544 section 26 table: throughput, latency and PDV per DUT and frame size.
fn summary_table(rows: &BTreeMap<RowKey, Row>) -> String {
    let wanted = [Procedure::Throughput, Procedure::Latency, Procedure::Pdv];
    let mut s = String::from(
        "<table id=\"summary-table\"><thead><tr><th>DUT</th><th>frame size (B)</th>\
         <th>throughput (frames/s)</th><th>throughput (Mbit/s)</th><th>DUT CPU busy at the throughput (%)</th>\
         <th>latency typical, forward (ms)</th><th>latency typical, reverse (ms)</th>\
         <th>latency worst case, forward (ms)</th><th>latency worst case, reverse (ms)</th>\
         <th>PDV forward (ms)</th><th>PDV reverse (ms)</th><th>repetitions</th><th>tester notes</th></tr></thead><tbody>\n",
    );
    for (k, row) in rows.iter().filter(|(_, r)| wanted.iter().any(|p| r.has(*p))) {
        let tp = row.summary(Procedure::Throughput, Metric::ThroughputFps);
        let mark = Mark::of(row, Procedure::Throughput);
        let _ = write!(
            s,
            "<tr data-dut=\"{}\" data-variant=\"{}\" data-frame-size=\"{}\"><td>{}</td><td class=\"num\">{}</td>{}",
            esc(&k.dut),
            esc(&k.variant),
            k.frame_size,
            esc(&dut_label(k)),
            k.frame_size,
            cell(tp, Metric::ThroughputFps.name(), mark)
        );
        match tp {
            Some(t) => {
                let _ = write!(
                    s,
                    "<td class=\"num\" data-metric=\"throughput_bps\" data-value=\"{}\">{}</td>",
                    bits(row, k, t.median),
                    fmt_num(bits(row, k, t.median) / 1e6)
                );
            }
            None => s.push_str("<td class=\"num\">&ndash;</td>"),
        }
        let busy = Metric::DutBusyPct;
        s.push_str(&cell(row.summary(Procedure::Throughput, busy), busy.name(), Mark::Plain));
        for (p, m) in [
            (Procedure::Latency, Metric::ForwardTlMs),
            (Procedure::Latency, Metric::ReverseTlMs),
            (Procedure::Latency, Metric::ForwardWclMs),
            (Procedure::Latency, Metric::ReverseWclMs),
            (Procedure::Pdv, Metric::ForwardPdvMs),
            (Procedure::Pdv, Metric::ReversePdvMs),
        ] {
            s.push_str(&cell(row.summary(p, m), m.name(), Mark::Plain));
        }
        let reps: Vec<String> = wanted
            .iter()
            .map(|p| (p, row.reps.iter().filter(|r| r.0 == *p).count()))
            .filter(|(_, n)| *n > 0)
            .map(|(p, n)| format!("{p} {n}"))
            .collect();
        let _ = writeln!(s, "<td>{}</td><td>{}</td></tr>", reps.join("<br>"), notes(row));
    }
    s.push_str("</tbody></table>\n");
    s
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
fn notes(row: &Row) -> String {
    let mut n = Vec::new();
    let mut said = BTreeSet::new();
    for (p, _, f) in &row.reps {
        if let Some(text) = f.bound.as_ref().and_then(|b| bound_note(*p, b)) {
            if said.insert(text.clone()) {
                n.push(format!("<span class=\"bound-by\">{}</span>", esc(&text)));
            }
        }
    }
    let bound: BTreeSet<&str> = row.reps.iter().filter(|r| r.2.tester_bound).map(|r| r.0.name()).collect();
    for p in bound {
        n.push(format!("<span class=\"bound\">{p}: bounded by the tester</span>"));
    }
    if row.invalid() > 0 {
        n.push(format!("{} invalid trials", row.invalid()));
    }
    if row.retries() > 0 {
        n.push(format!("{} retries", row.retries()));
    }
    n.join("<br>")
}

/// The notes on what bounded `procedure`'s figure in a row (each distinct verdict once).
fn bound_notes(row: &Row, procedure: Procedure) -> String {
    let mut said = BTreeSet::new();
    for (_, _, f) in row.reps.iter().filter(|r| r.0 == procedure) {
        if let Some(text) = f.bound.as_ref().and_then(|b| bound_note(procedure, b)) {
            said.insert(text);
        }
    }
    if row.tester_bound(procedure) {
        said.insert(format!("{}: bounded by the tester", procedure.name()));
    }
    said.iter().map(|t| esc(t)).collect::<Vec<_>>().join("<br>")
}

/// Every figure of every group, whatever the procedure.
fn figures_table(rows: &BTreeMap<RowKey, Row>) -> String {
    let mut s = String::from(
        "<table id=\"figures-table\"><thead><tr><th>DUT</th><th>frame size (B)</th><th>procedure</th><th>figure</th>\
         <th>median</th><th>min</th><th>max</th><th>dispersion</th><th>n</th><th>bounded by</th></tr></thead><tbody>\n",
    );
    for (k, row) in rows {
        for ((p, m), sum) in &row.summaries {
            // What a search's bound bounds: its rate (frames or connections per second), or
            // the capacity's number of connections (not the rate found at it).
            let bounded = if *p == Procedure::ConntrackCapacity {
                m == Metric::CapacityConnections.name()
            } else {
                m.ends_with("_fps") || m.ends_with("_cps")
            };
            let (mark, notes) = if bounded {
                (Mark::of(row, *p), bound_notes(row, *p))
            } else {
                (Mark::Plain, String::new())
            };
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td>{}<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{notes}</td></tr>",
                esc(&dut_label(k)),
                k.frame_size,
                esc(p.name()),
                esc(m),
                cell(Some(&Summary { n: 1, ..sum.clone() }), m, mark),
                fmt_num(sum.min),
                fmt_num(sum.max),
                sum.dispersion_percent.map_or("&ndash;".into(), |d| format!("{d:.2} %")),
                sum.n
            );
        }
    }
    s.push_str("</tbody></table>\n");
    s
}

/// A plot figure with its caption; the SVG inline, without its XML declaration.
fn figure(id: &str, plot: &LinePlot, caption: &str) -> String {
    let svg = plot.to_svg();
    let svg = svg.split_once("?>").map_or(svg.as_str(), |(_, rest)| rest).trim();
    format!(
        "<figure class=\"plot\" id=\"plot-{id}\">\n{svg}\n<figcaption>{}</figcaption>\n</figure>\n",
        esc(caption)
    )
}

/// A series of medians with min-max bars, and a series of rings on its tester-bound points.
fn median_series(label: String, pts: &[(f64, &Summary, bool)], out: &mut Vec<Series>) {
    out.push(Series {
        label: label.clone(),
        points: pts.iter().map(|p| (p.0, p.1.median)).collect(),
        error_bars: Some(pts.iter().map(|p| (p.1.min, p.1.max)).collect()),
        step: false,
        dots: false,
    });
    let marks: Vec<(f64, f64)> = pts.iter().filter(|p| p.2).map(|p| (p.0, p.1.median)).collect();
    if !marks.is_empty() {
        out.push(Series {
            label: format!("{label}: tester-bound"),
            points: marks,
            error_bars: None,
            step: false,
            dots: true,
        });
    }
}

/// A metric's medians against the frame size, a series per DUT.
fn by_frame_size(rows: &BTreeMap<RowKey, Row>, procedure: Procedure, metric: Metric, label: &str, out: &mut Vec<Series>) {
    let mut groups: BTreeMap<String, Vec<(f64, &Summary, bool)>> = BTreeMap::new();
    for (k, row) in rows {
        if let Some(s) = row.summary(procedure, metric) {
            groups
                .entry(dut_label(k))
                .or_default()
                .push((k.frame_size as f64, s, row.tester_bound(procedure)));
        }
    }
    // Against the frame size only where a DUT was measured at two or more.
    if groups.values().all(|pts| pts.len() < 2) {
        return;
    }
    for (dut, pts) in groups {
        median_series(if label.is_empty() { dut } else { format!("{dut} {label}") }, &pts, out);
    }
}

/// The plots the results call for.
fn plots(rows: &BTreeMap<RowKey, Row>) -> Vec<String> {
    let mut figs = Vec::new();
    let mut series = Vec::new();
    by_frame_size(rows, Procedure::Throughput, Metric::ThroughputFps, "", &mut series);
    if !series.is_empty() {
        let p = LinePlot {
            title: "Throughput against frame size".into(),
            x_label: "frame size (bytes)".into(),
            y_label: "throughput (frames/s per direction)".into(),
            series,
            y_range: None,
        };
        figs.push(figure(
            "throughput",
            &p,
            "Median over the repetitions; bars from minimum to maximum; rings: bounded by the tester's own limit.",
        ));
    }
    let mut series = Vec::new();
    for (m, l) in [
        (Metric::ForwardTlMs, "TL fwd"),
        (Metric::ReverseTlMs, "TL rev"),
        (Metric::ForwardWclMs, "WCL fwd"),
        (Metric::ReverseWclMs, "WCL rev"),
    ] {
        by_frame_size(rows, Procedure::Latency, m, l, &mut series);
    }
    if !series.is_empty() {
        let p = LinePlot {
            title: "Latency against frame size".into(),
            x_label: "frame size (bytes)".into(),
            y_label: "latency (ms)".into(),
            series,
            y_range: None,
        };
        figs.push(figure("latency", &p, "Typical (TL: median) and worst-case (WCL: 99.9th percentile) latency, RFC 8219 section 7.2; median over the repetitions, bars from minimum to maximum."));
    }
    let mut series = Vec::new();
    for (k, row) in rows {
        for (_, _, f) in row.reps.iter().filter(|r| r.0 == Procedure::Pdv) {
            for (dir, cdf) in &f.pdv_cdf {
                series.push(Series {
                    label: format!("{} {} B {dir}", dut_label(k), k.frame_size),
                    points: cdf.iter().map(|&(ns, frac)| (ns as f64 / 1e6, frac)).collect(),
                    error_bars: None,
                    step: true,
                    dots: false,
                });
            }
        }
    }
    if !series.is_empty() {
        let p = LinePlot {
            title: "One-way delay distribution (PDV trials)".into(),
            x_label: "delay (ms)".into(),
            y_label: "fraction of frames".into(),
            series,
            y_range: Some((0.0, 1.0)),
        };
        figs.push(figure("pdv", &p, "CDF of the frames' one-way delays, one curve per repetition and direction: the spread between curves is the spread over repetitions; PDV = 99.9th percentile - minimum (RFC 8219 section 7.3.1)."));
    }
    let mut groups: BTreeMap<String, BTreeMap<u64, Vec<(f64, bool)>>> = BTreeMap::new();
    for (k, row) in rows {
        for (_, _, f) in row.reps.iter().filter(|r| r.0 == Procedure::ConnRate) {
            let rate = f.metrics.iter().find(|m| m.0 == Metric::ConnRateCps.name()).map(|m| m.1);
            if let (Some(c), Some(r)) = (f.connections, rate) {
                let variant: Vec<&str> = k
                    .variant
                    .split(", ")
                    .filter(|v| !v.starts_with("connections=") && !v.is_empty())
                    .collect();
                let label = format!(
                    "{}{} {} B",
                    k.dut,
                    if variant.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", variant.join(", "))
                    },
                    k.frame_size
                );
                groups.entry(label).or_default().entry(c).or_default().push((r, f.tester_bound));
            }
        }
    }
    let mut series = Vec::new();
    for (label, pts) in groups {
        let sums: Vec<(f64, Summary, bool)> = pts
            .iter()
            .filter_map(|(c, v)| {
                let vals: Vec<f64> = v.iter().map(|x| x.0).collect();
                Summary::of(&vals).map(|s| (*c as f64, s, v.iter().any(|x| x.1)))
            })
            .collect();
        let refs: Vec<(f64, &Summary, bool)> = sums.iter().map(|(x, s, b)| (*x, s, *b)).collect();
        median_series(label, &refs, &mut series);
    }
    if !series.is_empty() {
        let p = LinePlot {
            title: "Connection establishment rate against the number of connections".into(),
            x_label: "connections".into(),
            y_label: "connections/s".into(),
            series,
            y_range: None,
        };
        figs.push(figure(
            "conn-rate",
            &p,
            "Maximum connection establishment rate (RFC 9693); median over the repetitions, bars from minimum to maximum.",
        ));
    }
    figs
}

/// The machines, builds and tester settings the results came from.
fn environment(inputs: &Inputs) -> String {
    let mut s = String::from("<table id=\"environment-table\"><thead><tr><th>where</th><th>CPU</th><th>CPUs</th><th>kernel</th><th>host</th><th>xlatperf</th><th>git commit</th></tr></thead><tbody>\n");
    let mut seen = BTreeSet::new();
    let mut row = |s: &mut String, place: &str, h: Option<&xlat_results::output::Host>, version: &str, commit: Option<&str>| {
        let (cpu, cpus, kernel, host) = h.map_or(
            ("unknown (not recorded)".to_string(), String::new(), String::new(), String::new()),
            |h| (h.cpu_model.clone(), h.cpus.to_string(), h.kernel.clone(), h.hostname.clone()),
        );
        let line = format!(
            "<td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            esc(&cpu),
            cpus,
            esc(&kernel),
            esc(&host),
            esc(version),
            esc(commit.unwrap_or("unknown"))
        );
        if seen.insert(line.clone()) {
            let _ = writeln!(s, "<tr><td>{}</td>{line}</tr>", esc(place));
        }
    };
    if let Some(m) = &inputs.manifest {
        for (i, sess) in m.sessions.iter().enumerate() {
            row(
                &mut s,
                &format!("campaign session {} ({})", i + 1, sess.started_at),
                Some(&sess.host),
                &sess.xlatperf_version,
                sess.git_commit.as_deref(),
            );
        }
    }
    for src in &inputs.sources {
        let m = &src.doc.meta;
        row(&mut s, "results", m.host.as_ref(), &m.xlatperf_version, m.git_commit.as_deref());
    }
    s.push_str("</tbody></table>\n<table id=\"tester-table\"><thead><tr><th>DUT</th><th>tester backend and ports</th><th>DUT hooks</th></tr></thead><tbody>\n");
    let mut seen = BTreeSet::new();
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
        let line = format!(
            "<tr><td>{}</td><td><code>{}</code></td><td><code>{}</code></td></tr>",
            esc(&src.dut),
            esc(&tester),
            if hooks.is_empty() { "none".into() } else { esc(&hooks.join("; ")) }
        );
        if seen.insert(line.clone()) {
            let _ = writeln!(s, "{line}");
        }
    }
    s.push_str("</tbody></table>\n");
    s
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

/// Every run: file, status, when, how long, the command that reproduces it.
fn runs_table(inputs: &Inputs) -> String {
    let mut s = String::from("<table id=\"runs-table\"><thead><tr><th>result</th><th>procedure</th><th>DUT</th><th>status</th><th>started</th><th>took</th><th>command (reproduces it)</th></tr></thead><tbody>\n");
    let mut line = |file: &str, proc_: &str, dut: &str, status: &str, class: &str, started: Option<&str>, took: Option<f64>, cmd: &str| {
        let _ = writeln!(
            s,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"{class}\">{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
            esc(file),
            esc(proc_),
            esc(dut),
            esc(status),
            esc(started.unwrap_or("")),
            took.map(human_seconds).unwrap_or_default(),
            esc(cmd)
        );
    };
    for src in &inputs.sources {
        let status = if src.doc.complete {
            "done"
        } else if src.doc.interrupted {
            "interrupted (partial)"
        } else {
            "incomplete (partial)"
        };
        let cmd = match (&src.run, &src.doc.meta.command_line) {
            (Some(r), _) => format!("cd {} && {}", src.origin.display(), r.command.join(" ")),
            (None, Some(c)) => c.join(" "),
            (None, None) => String::new(),
        };
        let took = src.run.as_ref().and_then(|r| r.elapsed_s);
        line(
            &src.file,
            &src.doc.procedure,
            &src.dut,
            status,
            "",
            src.doc.meta.started_at.as_deref(),
            took,
            &cmd,
        );
    }
    if let Some(m) = &inputs.manifest {
        for r in m.runs.iter().filter(|r| r.status != Status::Done) {
            let (status, class) = match r.status {
                Status::Failed => (format!("FAILED: {}", r.error.as_deref().unwrap_or("")), "failed"),
                _ => ("not run yet".to_string(), ""),
            };
            line(
                &r.file,
                &r.procedure,
                &r.test,
                &status,
                class,
                r.started_at.as_deref(),
                r.elapsed_s,
                &r.command.join(" "),
            );
        }
    }
    s.push_str("</tbody></table>\n");
    s
}

/// The directories reported on, as given.
fn from(inputs: &Inputs) -> String {
    let dirs: Vec<String> = inputs.dirs.iter().map(|d| d.display().to_string()).collect();
    dirs.join(" + ")
}

/// The whole page.
pub fn page(inputs: &Inputs, rows: &BTreeMap<RowKey, Row>, unread: &[(String, String)], generated_at: &str) -> String {
    let name = inputs.manifest.as_ref().map_or_else(|| from(inputs), |m| m.name.clone());
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>xlatperf report: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>xlatperf report: {}</h1>\n",
        esc(&name),
        esc(&name)
    );
    let (failed, pending) = inputs.manifest.as_ref().map_or((0, 0), |m| {
        let (_, f, p) = m.counts();
        (f, p)
    });
    let _ = writeln!(
        s,
        "<p>From <code>{}</code>, made {generated_at}: {} results read{}{}{}{}.</p>",
        esc(&from(inputs)),
        inputs.sources.len(),
        if failed > 0 {
            format!(", <span class=\"failed\">{failed} runs failed</span>")
        } else {
            String::new()
        },
        if pending > 0 {
            format!(", {pending} runs not run yet (the campaign is unfinished)")
        } else {
            String::new()
        },
        if unread.is_empty() {
            String::new()
        } else {
            format!(", <span class=\"failed\">{} not read</span> (listed at the end)", unread.len())
        },
        if inputs.missing_shards.is_empty() {
            String::new()
        } else {
            let parts: Vec<String> = inputs.missing_shards.iter().map(|s| s.to_string()).collect();
            format!(", <span class=\"failed\">shards {} of the plan missing</span>", parts.join(", "))
        }
    );
    s.push_str("<h2 id=\"summary\">Summary (RFC 2544 section 26)</h2>\n");
    s.push_str(&summary_table(rows));
    s.push_str("<p class=\"note\">Medians over every repetition of every run of a DUT and frame size; below each, the minimum &ndash; maximum, the dispersion ((max &minus; min) / median) and the number of repetitions. Throughput in frames/s per direction and in Mbit/s of the frames as sent (IPv4 frames 20 bytes shorter than the frame size; FCS counted, preamble and gap not). Typical latency is the median, worst-case the 99.9th percentile of the tagged frames (RFC 8219 section 7.2); PDV the 99.9th percentile less the minimum one-way delay (section 7.3.1). Shaded: bounded by the tester's own limit, not the DUT's.</p>\n");
    let figs = plots(rows);
    if !figs.is_empty() {
        s.push_str("<h2 id=\"plots\">Plots</h2>\n");
        for f in figs {
            s.push_str(&f);
        }
    }
    for axis in super::scale::Axis::ALL {
        let scale = super::scale::tables(&inputs.sources, axis);
        if !scale.is_empty() {
            let (id, heading) = axis.heading();
            let _ = writeln!(s, "<h2 id=\"{id}\">{heading}</h2>\n<p class=\"note\">{}</p>", axis.note());
            s.push_str(&scale);
        }
    }
    s.push_str("<h2 id=\"figures\">Every figure</h2>\n");
    s.push_str(&figures_table(rows));
    s.push_str("<h2 id=\"environment\">Environment</h2>\n");
    s.push_str(&environment(inputs));
    s.push_str("<h2 id=\"runs\">Runs</h2>\n");
    s.push_str(&runs_table(inputs));
    if !unread.is_empty() {
        s.push_str("<h2 id=\"unread\">Not read</h2>\n<ul>\n");
        for (f, why) in unread {
            let _ = writeln!(s, "<li><code>{}</code>: {}</li>", esc(f), esc(why));
        }
        s.push_str("</ul>\n");
    }
    s.push_str("</body>\n</html>\n");
    s
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
