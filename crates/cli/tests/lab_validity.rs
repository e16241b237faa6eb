//! Trials through a real DUT judged by what the tester's pauses did (docs/validity.md, issue
//! 53): the lab's router4 with its lag bound of 250 frames.
//!
//! - A pause forced on the tester from outside (SIGSTOP for 60 ms, then SIGCONT, the way a
//!   shared host pauses a vCPU) while it sends 20,000 frames/s: 1,200 frames behind, almost five
//!   times the bound. The catch-up is bounded (250 frames at once, then 40,000 frames/s, which
//!   the kernel forwards easily), nothing is lost, and the trial is valid.
//! - A throughput search through a DUT limited to 30,000 frames/s by nftables, whose every trial
//!   that lost nothing, dropped nothing and ended on time counts as a pass, read from its JSON.
//!
//! Needs root (CI runs as root); without it each test skips, which fails under CI=true.

mod common;

use common::procedures::{runs, Lab};
use common::{lab_lock, lab_up, last_json, skip_unless_root, LabDown, LAB_TOOLS};
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn a_pause_of_the_tester_that_loses_nothing_harms_nothing() {
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    let _g = lab_lock();
    let _down = LabDown;
    let conf = lab_up("router4");
    let v = xlat_testkit::retry::until_valid(
        "a router4 trial paused by SIGSTOP",
        || {
            let child = Command::new(env!("CARGO_BIN_EXE_xlatperf"))
                .args([
                    "trial",
                    "-c",
                    &conf,
                    "--rate",
                    "20000",
                    "--duration",
                    "3",
                    "--timeout",
                    "500",
                    "--json",
                    "-",
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("xlatperf");
            // Into the sending (the trial starts within about half a second), then a pause of
            // the whole process: its sender and its receivers.
            std::thread::sleep(Duration::from_millis(1500));
            let pid = child.id().to_string();
            let kill = |sig: &str| Command::new("kill").args([sig, &pid]).status().expect("kill");
            kill("-STOP");
            std::thread::sleep(Duration::from_millis(60));
            kill("-CONT");
            let out = child.wait_with_output().expect("wait");
            last_json(&String::from_utf8_lossy(&out.stdout))
        },
        // What this test is about is the forced pause; a trial that ended late or lost frames
        // in a pause of the host's own is retried.
        |v| v["valid"] == Value::Bool(true),
        |v| v["invalid_reasons"].to_string(),
    );
    for d in ["forward", "reverse"] {
        let c = &v[d];
        assert_eq!(c["lost"], 0, "{d}: {v}");
        assert!(c["max_lag_ns"].as_u64().unwrap() >= 50_000_000, "{d}: the pause happened: {c}");
        assert!(c["catch_ups"].as_u64().unwrap() >= 1, "{d}: {c}");
        // The catch-up kept its bound: 250 frames at once above its pace (plus a burst).
        assert!(c["catch_up_burst"].as_u64().unwrap() <= 250 + 32, "{d}: {c}");
    }
    assert_eq!(v["catch_up"]["burst_frames"], 250, "{v}");
}

#[test]
fn a_search_passes_every_trial_that_lost_nothing_on_time() {
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    // A DUT whose answer is set by configuration (it drops what exceeds 30,000 frames/s, both
    // directions together), well below the tester's limit: the search has passes and failures.
    let lab = Lab::up("router4", "validity");
    lab.limit(30_000, 100);
    let (v, _) = lab.run(
        "throughput",
        &["--max-rate", "40000", "--error", "2%", "--duration", "1", "--timeout", "300"],
    );
    let r = &runs(&v)[0];
    let trials = r["trials"].as_array().unwrap();
    let mut judged = 0;
    for t in trials {
        let lossless = ["forward", "reverse"].iter().all(|d| {
            let c = &t[*d];
            c["lost"] == 0 && c["tester_tx_dropped"] == 0 && c["tester_rx_dropped"] == 0
        });
        let rules: Vec<&str> = t["invalid_rules"]
            .as_array()
            .map_or(Vec::new(), |a| a.iter().filter_map(|r| r.as_str()).collect());
        let on_time = !rules.contains(&"end_of_sending");
        if lossless && on_time && !rules.iter().any(|r| *r == "stamps_missing" || *r == "foreign" || *r == "deadline") {
            judged += 1;
            assert_eq!(t["pass"], true, "a trial that lost nothing on time: {t}");
            assert_eq!(t["valid"], true, "{t}");
        }
        // A lag alone never decides: no trial is invalid for its lag without a loss in a catch-up.
        if rules.contains(&"lag_harm") {
            let lost: u64 = ["forward", "reverse"]
                .iter()
                .map(|d| t[*d]["lost_in_catch_up"].as_u64().unwrap_or(0))
                .sum();
            assert!(lost > 0, "{t}");
        }
    }
    assert!(judged > 0, "no trial lost nothing on time: {trials:?}");
}
