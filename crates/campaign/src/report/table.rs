//! The report's summaries as a table of tab-separated values (`xlatperf report --table`): one
//! line per group, procedure and metric, with the median, minimum and maximum over the
//! repetitions and the bounds the searches reported. What a benchmark script prints instead of
//! taking medians of its own.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use super::model::{Row, RowKey};

/// The header line's columns.
pub const COLUMNS: [&str; 10] = [
    "test",
    "variant",
    "frame_size",
    "procedure",
    "metric",
    "n",
    "median",
    "min",
    "max",
    "bounded_by",
];

/// Every summary of `rows`, a header first.
pub fn tsv(rows: &BTreeMap<RowKey, Row>) -> String {
    let mut out = COLUMNS.join("\t");
    out.push('\n');
    for (key, row) in rows {
        for ((procedure, metric), s) in &row.summaries {
            let bounds: BTreeSet<&str> = row
                .figures_of(*procedure)
                .filter_map(|f| f.bound.as_ref().map(|b| b.name()))
                .collect();
            let bounds = if bounds.is_empty() {
                "-".to_string()
            } else {
                bounds.into_iter().collect::<Vec<_>>().join("/")
            };
            let variant = if key.variant.is_empty() { "-" } else { &key.variant };
            let _ = writeln!(
                out,
                "{}\t{variant}\t{}\t{}\t{metric}\t{}\t{}\t{}\t{}\t{bounds}",
                key.dut,
                key.frame_size,
                procedure.name(),
                s.n,
                figure(s.median),
                figure(s.min),
                figure(s.max)
            );
        }
    }
    out
}

/// A figure as the table prints it: integers without decimals, others with 3 significant
/// decimals, an infinite one (a worst case with lost tags) as "inf".
fn figure(v: f64) -> String {
    if v.is_infinite() {
        "inf".to_string()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{Rep, RepFigures};
    use xlat_results::{Bound, Procedure, Summary};

    #[test]
    fn one_line_per_group_procedure_and_metric_with_the_bounds() {
        let summary = |values: &[f64]| Summary::of(values).expect("values");
        let mut row = Row::default();
        row.summaries
            .insert((Procedure::Throughput, "throughput_fps".into()), summary(&[100.0, 300.0, 200.0]));
        row.summaries
            .insert((Procedure::Throughput, "dut_busy_pct".into()), summary(&[51.5, 40.25]));
        for by in ["dut", "tester"] {
            row.reps.push(Rep {
                procedure: Procedure::Throughput,
                source: 0,
                figures: RepFigures {
                    bound: Some(if by == "dut" {
                        Bound::Dut { rate: 300, dut_busy: None }
                    } else {
                        Bound::Tester { rate: 300 }
                    }),
                    ..RepFigures::default()
                },
            });
        }
        let key = RowKey {
            dut: "lw4o6".into(),
            variant: "left.map.subscribers=1000".into(),
            frame_size: 84,
        };
        let t = tsv(&BTreeMap::from([(key, row)]));
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], COLUMNS.join("\t"));
        assert_eq!(lines.len(), 3, "{t}");
        assert!(
            lines.contains(&"lw4o6\tleft.map.subscribers=1000\t84\tthroughput\tthroughput_fps\t3\t200\t100\t300\tdut/tester"),
            "{t}"
        );
        assert!(
            lines.contains(&"lw4o6\tleft.map.subscribers=1000\t84\tthroughput\tdut_busy_pct\t2\t45.875\t40.250\t51.500\tdut/tester"),
            "{t}"
        );
        assert_eq!(figure(f64::INFINITY), "inf");
    }
}
