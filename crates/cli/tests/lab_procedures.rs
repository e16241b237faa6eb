//! Lab tests of the procedure commands (throughput, frame-loss, latency, pdv, b2b, recovery)
//! through the xlatperf binary against real Linux DUTs in network namespaces, with short trials
//! and rates a 2-core machine sustains. Where a test needs the DUT to lose frames above a known
//! rate, an nftables limiter in the DUT namespace provides it: the kernel then drops what
//! exceeds `limit rate over N/second` (both directions together), and the measured throughput
//! must land just below it. They need root (CI runs as root); without it they skip, which fails
//! under CI=true and makes scripts/test.sh fail (common::skip_unless_root).

mod common;

use common::procedures::*;
use serde_json::Value;
use std::process::{Command, Output};

// ---- throughput ---------------------------------------------------------------------------

#[test]
fn router4_throughput_short_trials_finds_the_limit_of_the_dut() {
    if skip() {
        return;
    }
    let lab = Lab::up("router4", "tp4");
    // 50,000 frames/s over both directions: 25,000 per direction.
    lab.limit(50_000, 2000);
    let csv = lab.file("tp.csv");
    let svg = lab.file("tp.svg");
    let (v, out) = lab.run(
        "throughput",
        &[
            "--short",
            "2",
            "--duration",
            "3",
            "--max-rate",
            "40000",
            "--error",
            "10%",
            "--timeout",
            "300",
            "--csv",
            &csv,
            "--plot",
            &svg,
        ],
    );
    let run = &runs(&v)[0];
    assert_eq!(run["method"]["kind"], "short_then_confirm");
    let tp = u(&run["throughput"]);
    assert!(
        (15_000..=25_500).contains(&tp),
        "throughput {tp} fps, the DUT forwards 25,000 per direction: {run}"
    );
    let trials = run["trials"].as_array().unwrap();
    // The search tried the maximum first and failed there; a full-length trial confirmed.
    assert_eq!(u(&trials[0]["rate"]), 40_000);
    assert!(trials.iter().any(|t| t["pass"] == Value::Bool(false)), "{run}");
    let last = trials.last().unwrap();
    assert!(last["phase"].as_str().unwrap().starts_with("confirm"), "{last}");
    assert_eq!(f(&last["duration_s"]), 3.0);
    assert!(trials.iter().any(|t| f(&t["duration_s"]) == 2.0));
    assert_eq!(f(&summary(&v, "throughput_fps")["median"]), tp as f64);
    assert!(out.contains("Throughput, frame size 84"), "{out}");
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert!(csv.starts_with("procedure,repetition,index"));
    assert_eq!(csv.lines().count(), trials.len() + 1);
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
}

#[test]
fn router6_throughput_repeated_reports_dispersion() {
    if skip() {
        return;
    }
    let lab = Lab::up("router6", "tp6");
    let (v, out) = lab.run(
        "throughput",
        &[
            "--short",
            "2",
            "--duration",
            "2",
            "--max-rate",
            "20000",
            "--error",
            "10%",
            "--timeout",
            "300",
            "--repeat",
            "3",
        ],
    );
    assert_eq!(runs(&v).len(), 3);
    for run in runs(&v) {
        assert_eq!(u(&run["throughput"]), 20_000, "the kernel forwards 20,000 fps per direction: {run}");
    }
    let s = summary(&v, "throughput_fps");
    assert_eq!(u(&s["n"]), 3);
    assert_eq!(f(&s["median"]), 20_000.0);
    for k in ["min", "max", "p1", "p99"] {
        assert_eq!(f(&s[k]), 20_000.0, "{k}: {s}");
    }
    assert_eq!(f(&s["dispersion_percent"]), 0.0, "{s}");
    assert!(out.contains("dispersion %"), "the summary table is printed: {out}");
}

// ---- frame loss ---------------------------------------------------------------------------

#[test]
fn router4_frame_loss_steps_down_to_two_lossless_trials() {
    if skip() {
        return;
    }
    let lab = Lab::up("router4", "fl4");
    lab.limit(50_000, 2000);
    let (v, out) = lab.run(
        "frame-loss",
        &["--max-rate", "30000", "--step", "10%", "--duration", "2", "--timeout", "300"],
    );
    let run = &runs(&v)[0];
    let points = run["points"].as_array().unwrap();
    let rates: Vec<u64> = points.iter().map(|p| u(&p["rate"])).collect();
    assert_eq!(&rates[..2], &[30_000, 27_000], "{run}");
    for w in rates.windows(2) {
        assert_eq!(w[0] - w[1], 3000, "steps of 10 % of the maximum: {rates:?}");
    }
    // 30,000 per direction is 60,000 for a DUT that forwards 50,000: about 15 % lost.
    let loss = f(&points[0]["forward_loss_percent"]).max(f(&points[0]["reverse_loss_percent"]));
    assert!(loss > 5.0, "{run}");
    assert_eq!(run["two_zero_loss"], Value::Bool(true));
    let n = points.len();
    assert!(n >= 4, "rates above 25,000 lose frames: {rates:?}");
    for p in &points[n - 2..] {
        assert_eq!(f(&p["forward_loss_percent"]), 0.0, "{p}");
        assert_eq!(f(&p["reverse_loss_percent"]), 0.0, "{p}");
        assert!(u(&p["rate"]) <= 26_000, "{p}");
    }
    assert!(out.contains("Frame loss rate, frame size 84"), "{out}");
}

#[test]
fn router6_frame_loss_at_listed_rates() {
    if skip() {
        return;
    }
    let lab = Lab::up("router6", "fl6");
    let (v, _) = lab.run("frame-loss", &["--rates", "20000,10000", "--duration", "2", "--timeout", "300"]);
    let run = &runs(&v)[0];
    let points = run["points"].as_array().unwrap();
    assert_eq!(points.iter().map(|p| u(&p["rate"])).collect::<Vec<_>>(), vec![20_000, 10_000]);
    for p in points {
        assert_eq!(f(&p["forward_loss_percent"]), 0.0, "{p}");
    }
    assert!(summary(&v, "forward_loss_percent@20000").is_object());
}

// ---- latency ------------------------------------------------------------------------------

fn latency(topology: &str) {
    latency_at(topology, "20000", &[]);
}

/// [`latency`] at `rate` frames/s per direction, with `extra` arguments.
fn latency_at(topology: &str, rate: &str, extra: &[&str]) {
    if skip() {
        return;
    }
    let lab = Lab::up(topology, &format!("lat-{topology}"));
    let svg = lab.file("lat.svg");
    let args = [
        &[
            "--rate",
            rate,
            "--duration",
            "2",
            "--delay",
            "0.5",
            "--tags",
            "500",
            "--repetitions",
            "2",
            "--timeout",
            "300",
            "--plot",
            &svg,
        ][..],
        extra,
    ]
    .concat();
    let (v, out) = lab.run("latency", &args);
    let run = &runs(&v)[0];
    assert_eq!(u(&run["tags"]), 500);
    assert_eq!(run["runs"].as_array().unwrap().len(), 2);
    for dir in ["forward", "reverse"] {
        for r in run["runs"].as_array().unwrap() {
            let st = &r[dir];
            assert_eq!(u(&st["tags"]), 500, "{st}");
            let tl = u(&st["typical"]);
            assert!(tl > 0 && tl < 100_000_000, "a typical latency below 100 ms: {st}");
            assert!(u(&st["min"]) <= tl);
        }
        let tl = &run[dir]["typical"];
        assert!(u(tl) > 0, "{}", run[dir]);
        assert!(f(&summary(&v, &format!("{dir}_tl_ms"))["median"]) > 0.0);
        // The worst case is a number, or "infinite" when a tag was lost.
        let wcl = &run[dir]["worst_case"];
        assert!(wcl.is_u64() || wcl == "infinite", "{wcl}");
    }
    assert!(out.contains("Forward TL"), "{out}");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("84 B forward"));
}

#[test]
fn router4_latency() {
    latency("router4");
}

#[test]
fn router6_latency() {
    latency("router6");
}

// ---- PDV ----------------------------------------------------------------------------------

fn pdv(topology: &str) {
    pdv_at(topology, "20000", &[]);
}

/// [`pdv`] at `rate` frames/s per direction, with `extra` arguments.
fn pdv_at(topology: &str, rate: &str, extra: &[&str]) {
    if skip() {
        return;
    }
    let lab = Lab::up(topology, &format!("pdv-{topology}"));
    let args = [
        &["--rate", rate, "--duration", "2", "--repetitions", "2", "--timeout", "300"],
        extra,
    ]
    .concat();
    let (v, out) = lab.run("pdv", &args);
    let result = &runs(&v)[0];
    assert_eq!(u(&result["frame_timeout_ms"]), 0);
    let reps = result["runs"].as_array().unwrap();
    assert_eq!(reps.len(), 2);
    for r in reps {
        for dir in ["forward", "reverse"] {
            let d = &r[dir];
            let p = &d["pdv"];
            assert!(u(&p["frames"]) > 0, "{d}");
            assert!(u(&p["min"]) > 0, "{d}");
            assert!(p["pdv"].is_u64() || p["pdv"] == "infinite", "{d}");
            let i = &d["ipdv"];
            let (min, med, max) = (
                i["min_ns"].as_i64().unwrap(),
                i["median_ns"].as_i64().unwrap(),
                i["max_ns"].as_i64().unwrap(),
            );
            assert!(min <= med && med <= max, "{i}");
        }
    }
    for dir in ["forward", "reverse"] {
        let s = &result[dir];
        assert!(s["pdv"].is_u64() || s["pdv"] == "infinite", "{s}");
        for k in ["ipdv_min_ns", "ipdv_median_ns", "ipdv_max_ns"] {
            assert!(s[k].is_i64(), "{k}: {s}");
        }
        assert!(summary(&v, &format!("{dir}_ipdv_max_ms"))["median"].is_number());
    }
    assert!(out.contains("Forward PDV (median)"), "{out}");
}

#[test]
fn router4_pdv() {
    pdv("router4");
}

#[test]
fn router6_pdv() {
    pdv("router6");
}

// ---- latency and PDV through the IPv4aaS DUTs ----------------------------------------------

/// The stateful ones (dslite, xlat464) with a phase 1 of 1,000 connections (source port
/// 10000 x destination ports 1-1000) at 10,000/s before each trial, T 500 ms (D 1.1 s).
const PHASE_ONE: [&str; 8] = [
    "--preliminary-frames",
    "1000",
    "--preliminary-rate",
    "10000",
    "--preliminary-timeout",
    "500",
    "--set",
    "traffic.forward_ports.sport.max=10000",
];

/// lw4o6: latency (RFC 8219 7.2) through the lwAFTR, the tester as an lwB4: every tag of
/// both directions back, through the softwire and out of it.
#[test]
fn lw4o6_latency() {
    latency("lw4o6");
}

#[test]
fn lw4o6_pdv() {
    pdv("lw4o6");
}

/// dslite: latency through the AFTR in a stateful test (the Responder's tags in the B4's
/// softwire on the way back).
#[test]
fn dslite_latency() {
    latency_at("dslite", "20000", &PHASE_ONE);
}

#[test]
fn dslite_pdv() {
    pdv_at("dslite", "20000", &PHASE_ONE);
}

/// xlat464: latency through the CLAT and the PLAT, below the chain's 25,000 frames/s
/// (BENCHMARKS.md).
#[test]
fn xlat464_latency() {
    latency_at("xlat464", "5000", &PHASE_ONE);
}

#[test]
fn xlat464_pdv() {
    pdv_at("xlat464", "5000", &PHASE_ONE);
}

#[test]
fn router4_pdv_frame_timeout_counts_late_frames_as_lost() {
    if skip() {
        return;
    }
    let lab = Lab::up("router4", "pdvft");
    let (v, out) = lab.run(
        "pdv",
        &[
            "--rate",
            "10000",
            "--duration",
            "2",
            "--repetitions",
            "1",
            "--timeout",
            "300",
            "--frame-timeout",
            "200",
        ],
    );
    let r = &runs(&v)[0];
    assert_eq!(u(&r["frame_timeout_ms"]), 200);
    let run = &r["runs"][0];
    for dir in ["forward", "reverse"] {
        let d = &run[dir];
        assert_eq!(u(&d["sent"]), 20_000, "{d}");
        assert_eq!(u(&d["sent"]) - u(&d["received"]), u(&d["lost"]), "{d}");
    }
    assert!(out.contains("Frame timeout test (siitperf-pdv)"), "{out}");
}

// ---- back-to-back ---------------------------------------------------------------------------

#[test]
fn router4_back_to_back_finds_the_burst_the_dut_absorbs() {
    if skip() {
        return;
    }
    let lab = Lab::up("router4", "b2b4");
    // Bursts at 40,000 frames/s per direction (80,000 in all) into a DUT that forwards 50,000 and
    // lets 2,000 more through in a burst: bursts of 20,000 per direction lose frames.
    lab.limit(50_000, 2000);
    let (v, out) = lab.run(
        "b2b",
        &[
            "--line-rate",
            "40000",
            "--max-burst",
            "20000",
            "--error",
            "2000",
            "--repetitions",
            "1",
            "--timeout",
            "300",
            "--throughput",
            "25000",
        ],
    );
    let run = &runs(&v)[0];
    let trials = run["trials"].as_array().unwrap();
    // The first burst tried is the longest; a retry of an invalid trial (the machine's other
    // work delayed a sender) tries it again, so look at its first valid trial.
    let first = trials.iter().find(|t| t["valid"] == Value::Bool(true)).expect("a valid trial");
    assert_eq!(u(&first["frames"]), 20_000, "{first}");
    assert_eq!(first["pass"], Value::Bool(false), "{first}");
    let frames = u(&run["runs"][0]["frames"]);
    assert!((1000..20_000).contains(&frames), "{run}");
    assert!(f(&run["implied_buffer_time_s"]) > 0.0);
    assert!(run["corrected_buffer_time_s"].is_number(), "{run}");
    // 2 s of idle time before every burst but the first (retries of invalid trials aside).
    let bursts = trials.iter().filter(|t| t["valid"] == Value::Bool(true)).count();
    assert_eq!(f(&run["idle_seconds"]), 2.0 * (bursts - 1) as f64, "{run}");
    assert!(out.contains("Back-to-back frames"), "{out}");
}

#[test]
fn router6_back_to_back_at_the_longest_burst() {
    if skip() {
        return;
    }
    let lab = Lab::up("router6", "b2b6");
    let (v, _) = lab.run(
        "b2b",
        &[
            "--line-rate",
            "20000",
            "--max-burst",
            "10000",
            "--error",
            "1000",
            "--repetitions",
            "2",
            "--timeout",
            "300",
        ],
    );
    let run = &runs(&v)[0];
    assert_eq!(run["runs"].as_array().unwrap().len(), 2);
    for r in run["runs"].as_array().unwrap() {
        assert_eq!(u(&r["frames"]), 10_000, "{run}");
        assert_eq!(r["at_max"], Value::Bool(true));
    }
    assert_eq!(f(&run["average_frames"]), 10_000.0);
    assert_eq!(f(&run["std_dev_frames"]), 0.0);
}

// ---- system recovery ------------------------------------------------------------------------

#[test]
fn router4_system_recovery_overloads_then_reduces_the_rate() {
    if skip() {
        return;
    }
    let lab = Lab::up("router4", "rec4");
    // The DUT forwards 42,000 frames/s in all; 110 % of 20,000 per direction overloads it.
    lab.limit(42_000, 1000);
    let (v, out) = lab.run(
        "recovery",
        &[
            "--throughput",
            "20000",
            "--overload",
            "2",
            "--recovery",
            "2",
            "--line-rate",
            "40000",
            "--timeout",
            "300",
        ],
    );
    let run = &runs(&v)[0];
    assert_eq!(u(&run["overload_rate"]), 22_000);
    assert_eq!(u(&run["reduced_rate"]), 10_000);
    let t = run["trials"].as_array().unwrap().last().unwrap().clone();
    for dir in ["forward", "reverse"] {
        // One stream: 2 s at 22,000 then 2 s at 10,000.
        assert_eq!(u(&t[dir]["sent"]), 64_000, "the rate changed after 2 s: {t}");
    }
    assert_eq!(run["overloaded"], Value::Bool(true), "{run}");
    assert_eq!(run["recovered"], Value::Bool(true), "{run}");
    let rt = f(&run["recovery_time_s"]);
    assert!((0.0..1.0).contains(&rt), "{run}");
    for dir in ["forward", "reverse"] {
        let last = &run[dir]["last_lost_s"];
        if !last.is_null() {
            assert!(f(last) < 3.0, "losses end soon after the rate drops: {run}");
        }
    }
    assert!(out.contains("System recovery"), "{out}");
}

// ---- siitperf's command lines -----------------------------------------------------------------

/// Run xlatperf through a link named `name` in `dir` (which holds siitperf.conf), as siitperf's
/// scripts run `./build/siitperf-lat ...`.
fn siitperf(dir: &std::path::Path, name: &str, args: &[&str]) -> Output {
    let link = dir.join(name);
    if !link.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_xlatperf"), &link).expect("symlink");
    }
    Command::new(&link).args(args).current_dir(dir).output().expect("run the link")
}

fn value_of(out: &str, key: &str) -> f64 {
    let line = out
        .lines()
        .find(|l| l.starts_with(key))
        .unwrap_or_else(|| panic!("no '{key}' line in:\n{out}"));
    // siitperf's scripts take the last blank-separated field (awk '{print $3}' or '$4').
    let field = line.split_whitespace().last().unwrap_or_else(|| panic!("{line}"));
    field.parse().unwrap_or_else(|_| panic!("not a number: {line}"))
}

#[test]
fn router4_siitperf_lat_and_pdv_entry_points() {
    if skip() {
        return;
    }
    let lab = Lab::up("router4", "siitperf");
    std::fs::copy(&lab.config, lab.dir.join("siitperf.conf")).expect("copy the configuration");
    let o = siitperf(&lab.dir, "siitperf-lat", &["84", "10000", "2", "300", "2", "2", "1", "500"]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{out}\n{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(value_of(&out, "Forward frames sent:"), 20_000.0, "{out}");
    for side in ["Forward", "Reverse"] {
        let tl = value_of(&out, &format!("{side} TL:"));
        let wcl = value_of(&out, &format!("{side} WCL:"));
        assert!(tl >= 0.0 && wcl >= tl, "{out}");
    }
    let o = siitperf(&lab.dir, "siitperf-pdv", &["84", "10000", "2", "300", "2", "2", "0"]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{out}\n{}", String::from_utf8_lossy(&o.stderr));
    for side in ["Forward", "Reverse"] {
        assert!(value_of(&out, &format!("{side} PDV:")) >= 0.0, "{out}");
    }
    // A frame timeout: the special throughput test, only the counts.
    let o = siitperf(&lab.dir, "siitperf-pdv", &["84", "10000", "2", "300", "2", "2", "100"]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success() && out.contains("Reverse frames received:") && !out.contains("PDV"),
        "{out}"
    );
    // Bad input: siitperf's "Input Error:" line and its exit code 255 (its main returns -1),
    // before anything is sent. (m above n is not bad input: every frame is foreground.)
    for (name, args) in [
        ("siitperf-lat", vec!["84", "10000", "2", "300", "2", "2", "2", "500"]),
        ("siitperf-lat", vec!["84", "10000", "2", "300", "2", "2", "1", "50001"]),
        ("siitperf-pdv", vec!["84", "10000", "2", "300", "2", "2"]),
        ("siitperf-tp", vec!["84", "10000", "2", "300", "1", "1"]),
    ] {
        let o = siitperf(&lab.dir, name, &args);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert!(
            o.status.code() == Some(255) && err.starts_with("Input Error:"),
            "{name} {args:?}: {err}"
        );
    }
}
