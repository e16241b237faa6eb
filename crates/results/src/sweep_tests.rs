use super::*;

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[test]
fn over_is_a_name_and_values() {
    assert_eq!(
        parse_over("connections=10k, 100k,1M").unwrap(),
        ("connections".to_string(), s(&["10k", "100k", "1M"]))
    );
    assert_eq!(parse_over("--max-rate=1").unwrap().0, "max-rate");
    for bad in ["connections", "=1,2", "connections=", "connections=,"] {
        let e = parse_over(bad).expect_err(bad).to_string();
        assert!(e.contains("is not NAME=V1,V2,..."), "{e}");
    }
}

#[test]
fn numbers_as_the_options_write_them() {
    assert_eq!(parse_number("20k"), Ok(20_000.0));
    assert_eq!(parse_number(" 1.5M "), Ok(1_500_000.0));
    assert_eq!(parse_number("14_880_952"), Ok(14_880_952.0));
    assert_eq!(parse_number("2G"), Ok(2e9));
    assert_eq!(
        parse_number("x").unwrap_err().to_string(),
        "'x' is not a number (examples: 20000, 20k, 1.5M)"
    );
    assert_eq!(parse_number("-1").unwrap_err().to_string(), "'-1' must be a non-negative number");
    assert!(matches!(parse_number("1e400"), Err(ValueError::Range { .. })));
}

const RUN: &str = r#"{"procedure":"conn-rate","meta":{"xlatperf_version":"0.1.0"},"results":[{"frame_size":84,
    "result":{"runs":[],"summaries":{"conn_rate_cps":{"n":1,"median":30000.0},"validation_fps":{"n":1,"median":null}}}}]}"#;

#[test]
fn points_table_csv_json_and_plot() {
    let mut sw = Sweep::new("connections", "conn-rate", &s(&["10k", "100k"]));
    sw.add_run("10k", RUN).unwrap();
    sw.add_run("100k", &RUN.replace("30000.0", "25000.5")).unwrap();
    assert_eq!(sw.points.len(), 2);
    assert_eq!(sw.points[1].metrics["conn_rate_cps"], 25_000.5);
    // A median that is not finite (null) is no figure.
    assert_eq!(sw.points[0].metrics.len(), 1, "{:?}", sw.points);
    let t = sw.table();
    assert!(t.contains("Sweep of conn-rate over connections"), "{t}");
    assert!(
        t.contains("conn_rate_cps") && t.contains("30,000") && t.contains("25000.500000") && t.contains("100k"),
        "{t}"
    );
    assert_eq!(sw.to_csv(), "connections,frame_size,conn_rate_cps\n10k,84,30000\n100k,84,25000.5\n");
    let j: serde_json::Value = serde_json::from_str(&sw.to_json(false).unwrap()).unwrap();
    assert_eq!(
        (j["complete"].clone(), j["parameter"].clone()),
        (false.into(), "connections".into())
    );
    assert_eq!(j["runs"].as_array().map(Vec::len), Some(2));
    assert_eq!(j["points"][1]["metrics"]["conn_rate_cps"], 25_000.5);
    let svg = sw.plot_svg();
    assert!(svg.contains("conn_rate_cps against connections"), "{svg}");
    // Values that are not all numbers are placed in their order and named on the axis.
    let mut sw = Sweep::new("backend", "conn-rate", &s(&["afpacket", "afxdp"]));
    sw.add_run("afpacket", RUN).unwrap();
    sw.add_run("afxdp", RUN).unwrap();
    assert!(sw.plot_svg().contains("backend (afpacket, afxdp)"));
}

#[test]
fn a_run_that_is_not_a_procedure_document_is_refused() {
    let mut sw = Sweep::new("connections", "conn-rate", &s(&["1"]));
    let e = sw.add_run("1", r#"{"results":[{"frame_size":"84"}]}"#).unwrap_err();
    assert_eq!(e.to_string(), "the run with connections = 1: its JSON");
    // The parser's own message is kept as the cause.
    let cause = std::error::Error::source(&e).map(ToString::to_string).unwrap_or_default();
    assert!(cause.contains("expected u64"), "{cause}");
    assert!(sw.add_run("1", "not json").is_err());
    assert!(sw.points.is_empty() && sw.runs.is_empty());
}
