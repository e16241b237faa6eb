//! The scalability table of seeds/001 ("Scalability of IPv6 Transition Technologies for
//! IPv4aaS", Figure 4 and the like): per DUT and frame size, one column per number of
//! connections, and rows of the median, minimum and maximum of the maximum connection
//! establishment rate, the throughput and the connection tear-down rate over the repetitions,
//! with the number of experiments. The number of connections of a run is its conn-rate or
//! teardown-rate result's, or its campaign axis (`connections`, `preliminary-frames`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use xlat_results::{Metric, Procedure};

use xlat_results::svg::escape;
use xlat_results::Summary;

use super::model::rep_figures;
use super::read::Source;

/// (DUT, frame size) -> connections -> (procedure, metric) -> values.
type Table = BTreeMap<(String, u64), BTreeMap<u64, BTreeMap<(Procedure, Metric), Vec<f64>>>>;

/// Which figure of a summary a row shows.
type Pick = fn(&Summary) -> f64;

const ROWS: [(Procedure, Metric, &str); 3] = [
    (
        Procedure::ConnRate,
        Metric::ConnRateCps,
        "connection establishment rate (connections/s)",
    ),
    (Procedure::Throughput, Metric::ThroughputFps, "throughput (frames/s per direction)"),
    (
        Procedure::TeardownRate,
        Metric::TeardownRateCps,
        "connection tear-down rate (connections/s)",
    ),
];

/// The number of connections of a run from its campaign axes.
fn axis_connections(s: &Source) -> Option<u64> {
    let axes = &s.run.as_ref()?.axes;
    let v = axes.get("connections").or_else(|| axes.get("preliminary-frames"))?;
    xlat_results::sweep::parse_number(v).ok().map(|x| x as u64)
}

fn table(sources: &[Source]) -> Table {
    let mut t: Table = BTreeMap::new();
    for s in sources {
        let Some(&(procedure, metric, _)) = ROWS.iter().find(|r| s.doc.procedure() == Some(r.0)) else {
            continue;
        };
        for size in &s.doc.results {
            for run in &size.result.runs {
                let Ok(f) = rep_figures(procedure, run) else { continue };
                let conns = f
                    .connections
                    .or_else(|| run.get("connections").and_then(|c| c.as_u64()))
                    .or_else(|| axis_connections(s));
                let (Some(c), Some(v)) = (conns, f.metrics.iter().find(|m| m.0 == metric.name()).map(|m| m.1)) else {
                    continue;
                };
                let dut = if s.variant.is_empty() {
                    s.dut.clone()
                } else {
                    let rest: Vec<&str> = s
                        .variant
                        .split(", ")
                        .filter(|v| !v.starts_with("connections=") && !v.starts_with("preliminary-frames="))
                        .collect();
                    if rest.is_empty() {
                        s.dut.clone()
                    } else {
                        format!("{} ({})", s.dut, rest.join(", "))
                    }
                };
                t.entry((dut, size.frame_size))
                    .or_default()
                    .entry(c)
                    .or_default()
                    .entry((procedure, metric))
                    .or_default()
                    .push(v);
            }
        }
    }
    t
}

/// The tables (one per DUT and frame size that was measured at two or more numbers of
/// connections), or nothing.
pub fn tables(sources: &[Source]) -> String {
    let mut s = String::new();
    for ((dut, size), by_conns) in table(sources) {
        if by_conns.len() < 2 {
            continue;
        }
        let _ = write!(
            s,
            "<table class=\"scale\" data-dut=\"{}\" data-frame-size=\"{size}\"><caption>{}, frame size {size} B</caption>\n<thead><tr><th>num. conn.</th>",
            escape(&dut),
            escape(&dut)
        );
        for c in by_conns.keys() {
            let _ = write!(s, "<th class=\"num\">{}</th>", xlat_results::text::group(*c));
        }
        s.push_str("</tr></thead><tbody>\n");
        for (procedure, metric, label) in ROWS {
            let sums: Vec<Option<Summary>> = by_conns
                .values()
                .map(|m| m.get(&(procedure, metric)).and_then(|v| Summary::of(v)))
                .collect();
            if sums.iter().all(Option::is_none) {
                continue;
            }
            let rows: [(&str, Pick); 3] = [("median", |x| x.median), ("min", |x| x.min), ("max", |x| x.max)];
            for (what, pick) in rows {
                let _ = write!(s, "<tr><th>{} {what}</th>", escape(label));
                for sum in &sums {
                    match sum {
                        Some(x) => {
                            let _ = write!(
                                s,
                                "<td class=\"num\" data-metric=\"{}\" data-value=\"{}\">{}</td>",
                                metric.name(),
                                pick(x),
                                xlat_results::text::group(pick(x).round() as u64)
                            );
                        }
                        None => s.push_str("<td class=\"num\">&ndash;</td>"),
                    }
                }
                s.push_str("</tr>\n");
            }
            let _ = write!(s, "<tr><th>{} num. exp.</th>", escape(label));
            for sum in &sums {
                let _ = write!(s, "<td class=\"num\">{}</td>", sum.as_ref().map_or(0, |x| x.n));
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</tbody></table>\n");
    }
    s
}
