//! The plots the results call for (throughput and latency against the frame size, the delay
//! CDFs of PDV trials, the connection establishment rate against the number of connections):
//! their series from the grouped figures, drawn by `xlat_results::svg` and set in a figure.

use std::collections::BTreeMap;

use maud::{html, Markup, PreEscaped};
use xlat_results::svg::{LinePlot, Series};
use xlat_results::{Metric, Procedure, Summary};

use super::model::{Row, RowKey};

/// A plot figure with its caption; the SVG inline, without its XML declaration (its texts
/// are escaped by `xlat_results::svg`, which writes it).
fn figure(id: &str, plot: &LinePlot, caption: &str) -> Markup {
    let svg = plot.to_svg();
    let svg = svg.split_once("?>").map_or(svg.as_str(), |(_, rest)| rest).trim().to_string();
    html! {
        figure class="plot" id=(format!("plot-{id}")) {
            (PreEscaped(svg))
            figcaption { (caption) }
        }
    }
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
                .entry(k.label())
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
pub fn plots(rows: &BTreeMap<RowKey, Row>) -> Vec<Markup> {
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
        for f in row.figures_of(Procedure::Pdv) {
            for (dir, cdf) in &f.pdv_cdf {
                series.push(Series {
                    label: format!("{} {} B {dir}", k.label(), k.frame_size),
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
        for f in row.figures_of(Procedure::ConnRate) {
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
