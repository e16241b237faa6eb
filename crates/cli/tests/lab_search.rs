//! Lab tests of the RFC 9971 and RFC 6201 procedures (mlrsearch, reset) through the xlatperf
//! binary against the Linux kernel forwarding IPv4 in the lab: NDR and PDR against an nftables
//! limit of known value, and the reset time of the lab's reset command, whose length is known.
//! They need root (CI runs as root); without it they skip, which fails under CI=true.

mod common;

use common::procedures::*;
use common::xlatperf;
use serde_json::Value;

// ---- MLRsearch (RFC 9971) -------------------------------------------------------------------

/// NDR and PDR against a DUT of known limit: nftables forwards 50,000 frames/s (both
/// directions together: L = 25,000 per direction) with a burst of 1,000 frames: over a 4 s
/// trial 125 frames/s per direction more (one Goal Width), and room for the catch-up burst of
/// a sender that stalled up to 20 ms (with a smaller burst that loss, the tester's, made the
/// NDR low now and then; bounding the sender's lag to 2 ms made most trials invalid on this
/// shared machine). The NDR's Conditional
/// Throughput is within one Goal Width of L; the PDR's (loss ratio 0.5 %) is at least the
/// NDR's less that loss ratio (its relevant lower bound at least the NDR's) and at least L less
/// one Goal Width (it is what the DUT forwarded at a load above the
/// limit, and the limiter forwards about 0.1 % less than its rate); every trial is in the JSON
/// with the target it was measured for and what it decided.
#[test]
fn router4_mlrsearch_finds_ndr_at_the_limit_and_pdr_at_or_above_it() {
    if skip() {
        return;
    }
    let lab = Lab::up("router4", "mlr4");
    lab.limit(50_000, 1000);
    let svg = lab.file("mlr.svg");
    let csv = lab.file("mlr.csv");
    let (v, out) = lab.run(
        "mlrsearch",
        &[
            "--max-load",
            "40000",
            "--duration",
            "4",
            "--initial-duration",
            "0.5",
            "--timeout",
            "300",
            "--plot",
            &svg,
            "--csv",
            &csv,
        ],
    );
    let run = &runs(&v)[0];
    let goal = |name: &str| {
        run["goals"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["goal"]["name"] == name)
            .unwrap_or_else(|| panic!("no goal {name}: {run}"))
            .clone()
    };
    const L: f64 = 25_000.0;
    let ndr = goal("NDR");
    let width = f(&ndr["goal"]["width"]);
    let ndr_ct = f(&ndr["conditional_throughput"]);
    assert!((ndr_ct - L).abs() <= width * L, "NDR {ndr_ct} fps, the DUT forwards {L}: {run}");
    assert!(ndr["irregular"].is_null(), "{ndr}");
    let pdr = goal("PDR");
    let pdr_ct = f(&pdr["conditional_throughput"]);
    // A load without loss is a lower bound for both goals, so the PDR's relevant lower bound is
    // at least the NDR's; its conditional throughput is that load less up to its loss ratio, so
    // it may lie below the NDR's by as much (seen: NDR 25,124 fps without loss, PDR 25,237 fps
    // with 0.48 % lost, forwarding 25,116).
    let pdr_loss = f(&pdr["goal"]["loss_ratio"]);
    assert!(u(&pdr["relevant_lower_bound"]) >= u(&ndr["relevant_lower_bound"]), "{run}");
    assert!(
        pdr_ct >= ndr_ct * (1.0 - pdr_loss) && pdr_ct >= L * (1.0 - width),
        "PDR {pdr_ct} fps, NDR {ndr_ct} fps, the DUT forwards {L}: {run}"
    );
    let (rlb, rub) = (u(&pdr["relevant_lower_bound"]), u(&pdr["relevant_upper_bound"]));
    assert!(rlb < rub && (rub - rlb) as f64 <= width * rub as f64, "{pdr}");
    // Every trial is in the search log, in order, with its classification; the goals' own
    // targets ran full-length (4 s) trials, the coarsest 0.5 s ones.
    let trials = run["trials"].as_array().unwrap();
    let search = run["search"].as_array().unwrap();
    // One search entry per load measured: its trial (the last attempt; the invalid ones before
    // it, retried, are in `trials` too).
    let referenced: Vec<usize> = search.iter().map(|s| u(&s["trial"]) as usize).collect();
    assert!(referenced.windows(2).all(|w| w[0] < w[1]), "{referenced:?}");
    for s in search {
        let t = &trials[u(&s["trial"]) as usize];
        assert_eq!(u(&s["load"]), u(&t["rate"]));
        assert_eq!(t["valid"], Value::Bool(true), "{t}");
        assert!(s["classification"].is_string(), "{s}");
    }
    for (i, t) in trials.iter().enumerate() {
        assert!(
            referenced.contains(&i) || t["valid"] == Value::Bool(false),
            "trial {i} is neither decided nor retried: {t}"
        );
    }
    assert_eq!(f(&trials[0]["duration_s"]), 0.5);
    assert!(search.iter().any(|s| u(&s["target"]) == 3 && f(&s["duration_s"]) == 4.0));
    assert_eq!(f(&summary(&v, "ndr_conditional_throughput_fps")["median"]), ndr_ct);
    assert!(out.contains("MLRsearch (RFC 9971), frame size 84"), "{out}");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("trials for NDR"));
    assert_eq!(std::fs::read_to_string(&csv).unwrap().lines().count(), trials.len() + 1);
}

/// Bad Search Goals are refused before any trial, naming the attribute (no lab needed).
#[test]
fn mlrsearch_bad_goals_are_clear_errors() {
    let conf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/router4.toml");
    for (goal, want) in [
        ("loss=1", "the Goal Loss Ratio (loss) must be in [0, 1), not 1"),
        ("loss=-0.5", "Goal Loss Ratio"),
        (
            "final=0.5,initial=1",
            "the Goal Final Trial Duration (final = 0.5 s) is shorter than the Goal Initial Trial Duration",
        ),
        ("width=0", "the Goal Width (width) must be above 0"),
        ("sum=1,final=2", "the Goal Duration Sum (sum = 1 s) is shorter"),
        ("speed=2", "unknown goal attribute 'speed'"),
    ] {
        let o = xlatperf(&["mlrsearch", "-c", conf, "--goal", goal]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.contains(want) && err.contains(&format!("--goal {goal}")),
            "{goal}: {err}"
        );
    }
}

// ---- reset time (RFC 6201) ----------------------------------------------------------------

/// The lab's reset command stops the DUT's forwarding for 0.5 s (xlat_lab::RESET_S): both
/// methods find that time within 10 %, per direction.
#[test]
fn router4_reset_time_is_the_length_of_the_labs_reset() {
    if skip() {
        return;
    }
    let lab = Lab::up("router4", "reset4");
    let (v, out) = lab.run("reset", &["--rate", "20000", "--duration", "4", "--at", "1.5", "--timeout", "300"]);
    let run = &runs(&v)[0];
    assert_eq!(run["valid"], Value::Bool(true), "{run}");
    assert_eq!(run["reset"]["key"], "dut.reset");
    assert_eq!(run["reset"]["exit_status"], 0);
    for dir in ["forward", "reverse"] {
        let d = &run[dir];
        for method in ["frame_loss_s", "timestamp_s"] {
            let t = f(&d[method]);
            assert!((t - 0.5).abs() <= 0.05, "{dir} {method}: {t} s, the reset lasts 0.5 s: {d}");
        }
        // The gap ended about 2 s into the trial (1.5 s + 0.5 s, give or take the start-up).
        let end = f(&d["gap_end_s"]);
        assert!((1.8..3.0).contains(&end), "{dir}: {d}");
    }
    let trials = run["trials"].as_array().unwrap();
    assert!(
        trials[0]["dut_hooks"].as_array().unwrap().iter().any(|h| h["key"] == "dut.reset"),
        "{}",
        trials[0]
    );
    assert!(out.contains("Reset time (RFC 6201)"), "{out}");
    assert!(f(&summary(&v, "forward_timestamp_reset_s")["median"]) > 0.0);
}

/// A reset command that never returns is killed at its deadline (the rest of the trial): the
/// run ends in time with an invalid result whose trial is kept in the JSON.
#[test]
fn router4_reset_that_never_returns_is_an_invalid_result_within_its_deadline() {
    if skip() {
        return;
    }
    let lab = Lab::up("router4", "resethang");
    let started = std::time::Instant::now();
    let (v, out) = lab.run(
        "reset",
        &[
            "--rate",
            "10000",
            "--duration",
            "2",
            "--at",
            "1",
            "--timeout",
            "300",
            "--set",
            "dut.reset=sleep 3600",
        ],
    );
    assert!(started.elapsed().as_secs_f64() < 20.0, "took {:?}", started.elapsed());
    let run = &runs(&v)[0];
    assert_eq!(run["valid"], Value::Bool(false));
    let why = run["invalid_reason"].as_str().unwrap();
    assert!(why.contains("did not end within its deadline"), "{why}");
    assert!(run["reset"]["exit_status"].is_null());
    // One trial, or more when the tester's own timing made one invalid (the session retries
    // those, as every procedure does: a hook killed at the trial's end can delay the senders on
    // a loaded 2-core machine); every one of them is kept.
    let trials = run["trials"].as_array().unwrap().len();
    assert!(
        (1..=1 + xlat_procedures::throughput::DEFAULT_RETRIES as usize).contains(&trials),
        "{trials} trials: {v}"
    );
    assert!(out.contains("INVALID"), "{out}");
}

/// A configuration without [dut] reset is refused before any trial.
#[test]
fn reset_without_a_reset_command_is_refused() {
    let conf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/router4.toml");
    let o = xlatperf(&["reset", "-c", conf, "--rate", "1000"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("no reset command: set [dut] reset"), "{err}");
}
