//! The scalability tables of seeds/001 ("Scalability of IPv6 Transition Technologies for
//! IPv4aaS", Figure 4 and the like): per DUT and frame size, one column per number of
//! connections (the stateful technologies) or of subscribers (the stateless ones: lw4o6, MAP-E,
//! MAP-T), and rows of the median, minimum and maximum of each figure over the repetitions,
//! with the number of experiments.
//!
//! The number of connections of a run is its conn-rate or teardown-rate result's, or its
//! campaign axis (`connections`, `preliminary-frames`); the number of subscribers is its
//! campaign axis `left.map.subscribers`.

use std::collections::BTreeMap;
use xlat_results::{Metric, Procedure};

use maud::{html, Markup};
use xlat_results::Summary;

use super::model::{rep_figures, RepFigures};
use super::read::Source;

/// What a table counts along its columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// Connections in the DUT's state table.
    Connections,
    /// Subscribers (MAP CEs, lwB4s) on the tester's CE side.
    Subscribers,
}

/// One figure a table shows: median, minimum, maximum and number of experiments.
struct Figure {
    procedure: Procedure,
    metric: Metric,
    label: &'static str,
    /// Decimals shown (0: an integer with thousands grouped).
    decimals: usize,
}

const fn figure(procedure: Procedure, metric: Metric, label: &'static str, decimals: usize) -> Figure {
    Figure {
        procedure,
        metric,
        label,
        decimals,
    }
}

const THROUGHPUT: Figure = figure(
    Procedure::Throughput,
    Metric::ThroughputFps,
    "throughput (frames/s per direction)",
    0,
);

const CONNECTION_FIGURES: [Figure; 3] = [
    figure(
        Procedure::ConnRate,
        Metric::ConnRateCps,
        "connection establishment rate (connections/s)",
        0,
    ),
    THROUGHPUT,
    figure(
        Procedure::TeardownRate,
        Metric::TeardownRateCps,
        "connection tear-down rate (connections/s)",
        0,
    ),
];

const SUBSCRIBER_FIGURES: [Figure; 3] = [
    THROUGHPUT,
    figure(Procedure::Latency, Metric::ForwardTlMs, "forward typical latency (ms)", 3),
    figure(Procedure::Latency, Metric::ReverseTlMs, "reverse typical latency (ms)", 3),
];

impl Axis {
    pub const ALL: [Axis; 2] = [Axis::Connections, Axis::Subscribers];

    fn figures(self) -> &'static [Figure] {
        match self {
            Axis::Connections => &CONNECTION_FIGURES,
            Axis::Subscribers => &SUBSCRIBER_FIGURES,
        }
    }

    /// The campaign axes that give the count, in the order they are looked at.
    fn keys(self) -> &'static [&'static str] {
        match self {
            Axis::Connections => &["connections", "preliminary-frames"],
            Axis::Subscribers => &["left.map.subscribers"],
        }
    }

    /// The heading of the tables' first column.
    fn short(self) -> &'static str {
        match self {
            Axis::Connections => "num. conn.",
            Axis::Subscribers => "num. subscr.",
        }
    }

    /// The report's heading above the tables and its anchor.
    pub fn heading(self) -> (&'static str, &'static str) {
        match self {
            Axis::Connections => ("scale", "Against the number of connections"),
            Axis::Subscribers => ("scale-subscribers", "Against the number of subscribers"),
        }
    }

    /// What the report says under the heading.
    pub fn note(self) -> &'static str {
        match self {
            Axis::Connections => {
                "The layout of seeds/001's tables (e.g. its Figure 4): median, minimum and maximum over the repetitions, per number of connections."
            }
            Axis::Subscribers => {
                "The same layout for the stateless technologies, per number of subscribers on the tester's CE side (left.map.subscribers: MAP CEs or lwB4s; each frame's subscriber and port pseudorandom): median, minimum and maximum over the repetitions."
            }
        }
    }

    /// The count of one repetition of `s`, if `s` has one along this axis.
    fn count(self, s: &Source, f: &RepFigures, run: &serde_json::Value) -> Option<u64> {
        let from_axis = || {
            let axes = &s.run.as_ref()?.axes;
            let v = self.keys().iter().find_map(|k| axes.get(*k))?;
            xlat_results::sweep::parse_number(v).ok().map(|x| x as u64)
        };
        match self {
            Axis::Connections => f
                .connections
                .or_else(|| run.get("connections").and_then(|c| c.as_u64()))
                .or_else(from_axis),
            Axis::Subscribers => from_axis(),
        }
    }

    /// The DUT's name with its variant less this axis.
    fn dut(self, s: &Source) -> String {
        let rest: Vec<&str> = s
            .variant
            .split(", ")
            .filter(|v| !v.is_empty() && !self.keys().iter().any(|k| v.strip_prefix(k).is_some_and(|r| r.starts_with('='))))
            .collect();
        if rest.is_empty() {
            s.dut.clone()
        } else {
            format!("{} ({})", s.dut, rest.join(", "))
        }
    }
}

/// (DUT, frame size) -> count -> (procedure, metric) -> values.
type Table = BTreeMap<(String, u64), BTreeMap<u64, BTreeMap<(Procedure, Metric), Vec<f64>>>>;

/// Which figure of a summary a row shows.
type Pick = fn(&Summary) -> f64;

fn table(sources: &[Source], axis: Axis) -> Table {
    let mut t: Table = BTreeMap::new();
    for s in sources {
        let Some(procedure) = s.doc.procedure() else { continue };
        let figures: Vec<&Figure> = axis.figures().iter().filter(|f| f.procedure == procedure).collect();
        if figures.is_empty() {
            continue;
        }
        for size in &s.doc.results {
            for run in &size.result.runs {
                let Ok(f) = rep_figures(procedure, run) else { continue };
                let Some(count) = axis.count(s, &f, run) else { continue };
                for fig in &figures {
                    let Some(v) = f.metrics.iter().find(|m| m.0 == fig.metric.name()).map(|m| m.1) else {
                        continue;
                    };
                    t.entry((axis.dut(s), size.frame_size))
                        .or_default()
                        .entry(count)
                        .or_default()
                        .entry((procedure, fig.metric))
                        .or_default()
                        .push(v);
                }
            }
        }
    }
    t
}

/// `v` as a figure shows it.
fn shown(v: f64, decimals: usize) -> String {
    if decimals == 0 {
        xlat_results::text::group(v.round() as u64)
    } else {
        format!("{v:.decimals$}")
    }
}

/// The tables along `axis` (one per DUT and frame size that was measured at two or more
/// counts), or none.
pub fn tables(sources: &[Source], axis: Axis) -> Option<Markup> {
    let rows: [(&str, Pick); 3] = [("median", |x| x.median), ("min", |x| x.min), ("max", |x| x.max)];
    let measured: Vec<_> = table(sources, axis).into_iter().filter(|(_, c)| c.len() >= 2).collect();
    if measured.is_empty() {
        return None;
    }
    Some(html! {
        @for ((dut, size), by_count) in measured {
            table class="scale" data-axis=(axis.heading().0) data-dut=(dut) data-frame-size=(size) {
                caption { (dut) ", frame size " (size) " B" }
                thead { tr { th { (axis.short()) } @for c in by_count.keys() { th class="num" { (xlat_results::text::group(*c)) } } } }
                tbody {
                    @for fig in axis.figures() {
                        @let sums: Vec<Option<Summary>> = by_count
                            .values()
                            .map(|m| m.get(&(fig.procedure, fig.metric)).and_then(|v| Summary::of(v)))
                            .collect();
                        @if sums.iter().any(Option::is_some) {
                            @for (what, pick) in rows {
                                tr {
                                    th { (fig.label) " " (what) }
                                    @for sum in &sums {
                                        @match sum {
                                            Some(x) => td class="num" data-metric=(fig.metric.name()) data-value=(pick(x)) { (shown(pick(x), fig.decimals)) },
                                            None => td class="num" { "\u{2013}" },
                                        }
                                    }
                                }
                            }
                            tr { th { (fig.label) " num. exp." } @for sum in &sums { td class="num" { (sum.as_ref().map_or(0, |x| x.n)) } } }
                        }
                    }
                }
            }
        }
    })
}

#[cfg(test)]
#[path = "scale_tests.rs"]
mod tests;
