//! The scalability tables: a column per number of connections or subscribers, figures from
//! documents the procedures wrote against simulated DUTs.

use super::*;
use crate::manifest::{RunEntry, Status};
use xlat_procedures::{latency, repeat, throughput, LatencyConfig, NoProgress, ThroughputConfig};
use xlat_results::output::{Document, RunMeta, SizeResult};
use xlat_results::view::DocView;
use xlat_testkit::sim::SimDut;

/// A document of `result` (one repetition) read back as the report reads it.
fn doc<T: xlat_results::BenchResult + serde::Serialize>(procedure: &str, result: xlat_results::Repeated<T>) -> DocView {
    let json = Document::new(procedure, RunMeta::new("0.1.0-test"), vec![SizeResult { frame_size: 84, result }])
        .to_json()
        .unwrap();
    serde_json::from_str(&json).unwrap()
}

/// A throughput search through a DUT that forwards `fps` per direction.
fn throughput_doc(fps: f64) -> DocView {
    let mut dut = SimDut::new(fps, 7);
    let cfg = ThroughputConfig::new(84, 1_000_000, 1000);
    doc("throughput", repeat(1, |_| throughput(&mut dut, &cfg, &mut NoProgress)).unwrap())
}

/// Latency at 1,000 frames/s through a DUT that delays every frame by `ns`.
fn latency_doc(ns: u64) -> DocView {
    let mut dut = SimDut::new(500_000.0, 7).latency(ns, 0);
    let mut cfg = LatencyConfig::new(84, 1000);
    cfg.repetitions = 1;
    doc("latency", repeat(1, |_| latency(&mut dut, &cfg, &mut NoProgress)).unwrap())
}

/// A finished campaign run of `test` with `axes`, its result `doc`.
fn source(test: &str, axes: &[(&str, &str)], doc: DocView) -> Source {
    let axes: BTreeMap<String, String> = axes.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Source {
        file: "r.json".into(),
        origin: "campaign".into(),
        run: Some(RunEntry {
            id: "r".into(),
            test: test.into(),
            procedure: doc.procedure.clone(),
            axes: axes.clone(),
            repetition: 0,
            command: Vec::new(),
            file: "r.json".into(),
            log: "r.log".into(),
            status: Status::Done,
            estimate_s: None,
            started_at: None,
            elapsed_s: None,
            error: None,
        }),
        dut: test.into(),
        variant: axes.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", "),
        doc,
    }
}

/// The cells of the row headed `th` in `html`: each cell's shown text.
fn row(html: &str, th: &str) -> Vec<String> {
    let at = html
        .find(&format!("<tr><th>{th}</th>"))
        .unwrap_or_else(|| panic!("no row {th}: {html}"));
    let end = at + html[at..].find("</tr>").unwrap();
    html[at..end]
        .split("<td")
        .skip(1)
        .map(|c| c[c.find('>').unwrap() + 1..c.find("</td>").unwrap()].to_string())
        .collect()
}

/// MAP-E measured at 1 and 1,000 subscribers, twice each, with the DUT slower at 1,000.
fn mape_sources() -> Vec<Source> {
    let mut v = Vec::new();
    for (n, fps, ns) in [("1", 200_000.0, 50_000), ("1000", 100_000.0, 150_000)] {
        for _ in 0..2 {
            let axes = [("left.map.subscribers", n), ("tester.backend", "afxdp")];
            v.push(source("mape", &axes, throughput_doc(fps)));
            v.push(source("mape", &axes, latency_doc(ns)));
        }
    }
    v
}

#[test]
fn a_table_against_subscribers_has_a_column_per_count_and_throughput_and_latency_rows() {
    let html = tables(&mape_sources(), Axis::Subscribers).unwrap().into_string();
    assert!(
        html.contains("data-axis=\"scale-subscribers\" data-dut=\"mape (tester.backend=afxdp)\""),
        "the variant less the axis names the DUT: {html}"
    );
    assert!(
        html.contains("<th>num. subscr.</th><th class=\"num\">1</th><th class=\"num\">1,000</th>"),
        "{html}"
    );
    let fps = row(&html, "throughput (frames/s per direction) median");
    assert_eq!(fps.len(), 2, "{html}");
    let fps: Vec<f64> = fps.iter().map(|c| c.replace(',', "").parse().unwrap()).collect();
    assert!(
        (fps[0] - 200_000.0).abs() <= 0.01 * 200_000.0 && (fps[1] - 100_000.0).abs() <= 0.01 * 100_000.0,
        "{fps:?}"
    );
    for dir in ["forward", "reverse"] {
        assert_eq!(
            row(&html, &format!("{dir} typical latency (ms) median")),
            ["0.050", "0.150"],
            "{html}"
        );
        assert_eq!(row(&html, &format!("{dir} typical latency (ms) num. exp.")), ["2", "2"], "{html}");
    }
    assert_eq!(row(&html, "throughput (frames/s per direction) num. exp."), ["2", "2"]);
    assert!(
        tables(&mape_sources(), Axis::Connections).is_none(),
        "runs without a number of connections make no table against connections"
    );
}

#[test]
fn a_table_against_connections_counts_them_from_the_axis() {
    let mut v = Vec::new();
    for (n, fps) in [("10000", 150_000.0), ("160000", 120_000.0)] {
        v.push(source("dslite", &[("preliminary-frames", n)], throughput_doc(fps)));
    }
    let html = tables(&v, Axis::Connections).unwrap().into_string();
    assert!(html.contains("data-axis=\"scale\" data-dut=\"dslite\""), "{html}");
    assert!(
        html.contains("<th>num. conn.</th><th class=\"num\">10,000</th><th class=\"num\">160,000</th>"),
        "{html}"
    );
    assert_eq!(row(&html, "throughput (frames/s per direction) num. exp."), ["1", "1"]);
    assert!(!html.contains("latency"), "{html}");
    assert!(tables(&v, Axis::Subscribers).is_none());
}

#[test]
fn one_count_makes_no_table() {
    let v: Vec<Source> = mape_sources()
        .into_iter()
        .filter(|s| s.variant.contains("subscribers=1,"))
        .collect();
    assert_eq!(v.len(), 4);
    assert!(tables(&v, Axis::Subscribers).is_none());
}
