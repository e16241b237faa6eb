//! The report's tables: bounded figures and the DUT's load.

use super::*;
use crate::report::model::{Rep, RepFigures};

/// A row of one capacity result with `bound`, read back as the report reads its file.
fn capacity_row(bound: xlat_results::Bound) -> BTreeMap<RowKey, Row> {
    let result = xlat_results::CapacityResult {
        config: xlat_results::CapacityConfig::new(84),
        capacity: Some(65_536),
        rate_at_capacity: Some(100_000),
        first_too_many: None,
        tester_bound: None,
        bound,
        searches: Vec::new(),
        trials: Vec::new(),
    };
    let json = serde_json::to_value(&result).unwrap();
    let rep = crate::report::model::rep_figures(Procedure::ConntrackCapacity, &json).unwrap();
    let mut row = Row {
        reps: vec![Rep {
            procedure: Procedure::ConntrackCapacity,
            source: 0,
            figures: rep,
        }],
        ..Row::default()
    };
    for (m, v) in [("capacity_connections", 65_536.0), ("conn_rate_at_capacity_cps", 100_000.0)] {
        row.summaries
            .insert((Procedure::ConntrackCapacity, m.into()), Summary::of(&[v]).unwrap());
    }
    let key = RowKey {
        dut: "nat44".into(),
        variant: String::new(),
        frame_size: 84,
    };
    BTreeMap::from([(key, row)])
}

/// The row of `metric` in the figures table.
fn figure_row(html: &str, metric: &str) -> String {
    let at = html.find(&format!("data-metric=\"{metric}\"")).unwrap();
    let start = html[..at].rfind("<tr>").unwrap();
    let end = at + html[at..].find("</tr>").unwrap();
    html[start..end].to_string()
}

#[test]
fn the_summary_shows_the_dut_load_at_the_throughput() {
    let mut row = Row::default();
    row.reps.push(Rep {
        procedure: Procedure::Throughput,
        source: 0,
        figures: RepFigures::default(),
    });
    for (m, v) in [("throughput_fps", 10_000.0), ("dut_busy_pct", 93.5)] {
        row.summaries.insert((Procedure::Throughput, m.into()), Summary::of(&[v]).unwrap());
    }
    let key = RowKey {
        dut: "router4".into(),
        variant: String::new(),
        frame_size: 84,
    };
    let html = summary_table(&BTreeMap::from([(key, row)])).into_string();
    assert!(html.contains("<th>DUT CPU busy at the throughput (%)</th>"), "{html}");
    assert!(html.contains("data-metric=\"dut_busy_pct\" data-value=\"93.5\""), "{html}");
}

#[test]
fn a_capacity_at_the_searchs_maximum_is_a_lower_bound_and_its_rate_is_not() {
    let html = figures_table(&capacity_row(xlat_results::Bound::Range { max: 65_536 })).into_string();
    let cap = figure_row(&html, "capacity_connections");
    assert!(cap.contains("data-at-least=\"true\">\u{2265}\u{a0}65,536"), "{cap}");
    assert!(cap.contains("every size fitted up to 65,536 connections"), "{cap}");
    let rate = figure_row(&html, "conn_rate_at_capacity_cps");
    assert!(rate.contains("data-at-least=\"false\""), "{rate}");
}

#[test]
fn a_capacity_the_dut_bounded_names_the_size_that_did_not_fit() {
    let html = figures_table(&capacity_row(xlat_results::Bound::Dut {
        rate: 65_537,
        dut_busy: Some(0.5),
    }))
    .into_string();
    let cap = figure_row(&html, "capacity_connections");
    assert!(cap.contains("data-at-least=\"false\">65,536"), "{cap}");
    assert!(
        cap.contains("bounded by the DUT (65,537 connections did not fit; DUT CPU 50 % busy)"),
        "{cap}"
    );
}
