//! `xlatperf conn-rate` (RFC 9693's maximum connection establishment rate) against the lab's
//! nat44, whose DUT is given a known limit: nftables drops new connections above N/s
//! (`ct state new limit rate over`). Root needed (CI runs as root).

mod common;

use common::{dut_exec, lab_lock, lab_up, ok, skip_unless_root, LabDown, LAB_TOOLS};
use serde_json::Value;

fn run(config: &str, max_rate: &str, json: &str) -> (Value, String) {
    let out = ok(&[
        "conn-rate",
        "-c",
        config,
        "--connections",
        "10000",
        "--max-rate",
        max_rate,
        "--error",
        "2000",
        "--timeout",
        "500",
        "--retries",
        "4",
        "--json",
        json,
    ]);
    let text = std::fs::read_to_string(json).unwrap_or_else(|e| panic!("{json}: {e}"));
    let v: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(v["procedure"], "conn-rate", "{v}");
    (v["results"][0]["result"]["runs"][0].clone(), out)
}

#[test]
fn conn_rate_finds_a_nat44_connection_limit_and_says_when_every_step_passed() {
    if skip_unless_root(&[LAB_TOOLS, &["conntrack"]].concat()) {
        return;
    }
    let _g = lab_lock();
    let config = lab_up("nat44");
    let _down = LabDown;
    let json = std::env::temp_dir().join(format!("xlat-conn-rate-{}.json", std::process::id()));
    let json = json.display().to_string();

    // Without a limit, every step up to --max-rate passes: the DUT's limit is higher.
    let (r, out) = run(&config, "30000", &json);
    assert_eq!(r["rate"], 30000, "{r}");
    assert!(out.contains("the DUT's limit is higher"), "{out}");

    // 20,000 new connections/s.
    dut_exec(&["nft", "add table inet xlat_ctlimit"]);
    dut_exec(&[
        "nft",
        "add chain inet xlat_ctlimit limiter { type filter hook forward priority -10 ; }",
    ]);
    dut_exec(&[
        "nft",
        "add rule inet xlat_ctlimit limiter ct state new limit rate over 20000/second burst 500 packets drop",
    ]);
    let (r, out) = run(&config, "80000", &json);
    let rate = r["rate"].as_u64().unwrap_or_else(|| panic!("no rate: {r}"));
    assert!((18_000..=20_500).contains(&rate), "{rate} for a limit of 20,000/s: {out}");
    let trials = r["trials"].as_array().expect("trials");
    assert_eq!(trials[0]["rate"], 80000, "the maximum first");
    // The result is the highest rate that passed, and every step tells its table.
    let best = trials
        .iter()
        .filter(|t| t["pass"] == Value::Bool(true))
        .map(|t| t["rate"].as_u64().unwrap())
        .max();
    assert_eq!(best, Some(rate));
    for t in trials {
        let p = &t["preliminary"];
        assert_eq!(p["frames"], 10000, "{t}");
        if t["pass"] == Value::Bool(false) {
            assert!(p["valid_entries"].as_u64().unwrap() < 10_000, "{t}");
        }
    }
    assert!(out.contains(&format!("{} connections/s", group(rate))), "{out}");
    let _ = std::fs::remove_file(&json);
}

fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `xlatperf teardown-rate`: nat44 loaded with 50,000 connections; the lab's `dut.delete_all`
/// (conntrack -F) timed on the full and on the empty table; a positive rate, both timings in the
/// JSON, and the DUT's table empty afterwards.
#[test]
fn teardown_rate_times_the_deletion_of_a_full_and_an_empty_nat44_table() {
    if skip_unless_root(&[LAB_TOOLS, &["conntrack"]].concat()) {
        return;
    }
    let _g = lab_lock();
    let config = lab_up("nat44");
    let _down = LabDown;
    let json = std::env::temp_dir().join(format!("xlat-teardown-{}.json", std::process::id()));
    let json = json.display().to_string();
    let out = ok(&[
        "teardown-rate",
        "-c",
        &config,
        "--connections",
        "50000",
        "--rate",
        "50000",
        "--timeout",
        "500",
        "--retries",
        "4",
        "--json",
        &json,
    ]);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("JSON");
    assert_eq!(v["procedure"], "teardown-rate", "{v}");
    let r = &v["results"][0]["result"]["runs"][0];
    let (full, empty) = (r["full_s"].as_f64().unwrap(), r["empty_s"].as_f64().unwrap());
    assert!(full > empty && empty > 0.0, "{r}");
    let rate = r["rate_cps"].as_f64().unwrap_or_else(|| panic!("no rate: {r}"));
    assert!((rate - 50_000.0 / (full - empty)).abs() < 1e-6 * rate, "{r}");
    assert!(rate > 10_000.0, "{rate} connections/s: {r}");
    let load = r["trials"].as_array().expect("trials").last().expect("a load");
    assert_eq!(load["preliminary"]["valid_entries"], 50000, "{load}");
    assert!(out.contains("connections/s torn down"), "{out}");
    assert_eq!(dut_exec(&["conntrack", "-C"]).trim(), "0");
    let _ = std::fs::remove_file(&json);
}
