//! Ctrl-C (SIGINT) during `xlatperf throughput`: the command stops after the trial in progress,
//! writes every trial so far to `--json` in a valid document marked `"interrupted": true`, and
//! exits with status 130; a lab it ran against can still be removed with `xlatperf lab down`.
//!
//! One test runs on the in-process `mem` backend and needs nothing; the other runs against the
//! router4 lab and needs root: it skips through the one skip path (a line in XLAT_SKIP_LOG, which
//! fails the suite), and under `CI=true` it fails at once: CI must not pass a test it did not run.

mod common;

use common::{dut_exec, lab_lock, lab_up, skip_unless_root, xlatperf, LabDown, LAB_TOOLS};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Longest wait for the command to end after SIGINT: the trial in progress (2 s plus its
/// timeout) and writing the files, with room for a loaded machine.
const EXIT_WITHIN: Duration = Duration::from_secs(15);

/// Kills the child when dropped (a failed assertion must not leave it running).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xlatperf-sigint-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Start `xlatperf args`, send SIGINT after `after`, and wait at most [`EXIT_WITHIN`] for it to
/// end. Returns its exit status and standard error.
fn interrupt(args: &[&str], after: Duration, dir: &Path) -> (ExitStatus, String) {
    let err_path = dir.join("stderr.txt");
    let err = std::fs::File::create(&err_path).expect("stderr file");
    let child = Command::new(env!("CARGO_BIN_EXE_xlatperf"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .expect("start xlatperf");
    let mut child = Running(child);
    std::thread::sleep(after);
    let stderr = || std::fs::read_to_string(&err_path).unwrap_or_default();
    if let Some(status) = child.0.try_wait().expect("try_wait") {
        panic!("xlatperf ended ({status}) before the SIGINT; stderr:\n{}", stderr());
    }
    let pid = libc::pid_t::try_from(child.0.id()).expect("pid");
    // SAFETY: kill(2) with the pid of our own child, which has not been waited for yet.
    let r = unsafe { libc::kill(pid, libc::SIGINT) };
    assert_eq!(r, 0, "kill: {}", std::io::Error::last_os_error());
    let sent = Instant::now();
    let status = loop {
        if let Some(status) = child.0.try_wait().expect("try_wait") {
            break status;
        }
        if sent.elapsed() > EXIT_WITHIN {
            // Running's drop kills it.
            panic!(
                "xlatperf did not end within {EXIT_WITHIN:?} of SIGINT; stderr so far:\n{}",
                stderr()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    eprintln!("xlatperf ended {:?} after SIGINT", sent.elapsed());
    (status, stderr())
}

/// The document is valid JSON, marked interrupted and incomplete; returns every trial in it
/// (finished repetitions and the one in progress).
fn interrupted_document(json: &Path, stderr: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(json).unwrap_or_else(|e| panic!("{}: {e}; stderr:\n{stderr}", json.display()));
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    assert_eq!(v["procedure"], "throughput");
    assert_eq!(v["interrupted"], Value::Bool(true), "{text}");
    assert_eq!(v["complete"], Value::Bool(false), "{text}");
    let mut trials: Vec<Value> = Vec::new();
    for size in v["results"].as_array().expect("results") {
        for run in size["result"]["runs"].as_array().expect("runs") {
            trials.extend(run["trials"].as_array().expect("trials").iter().cloned());
        }
    }
    let partial = &v["interrupted_run"];
    assert!(partial.is_object(), "no interrupted_run: {text}");
    trials.extend(partial["trials"].as_array().expect("interrupted_run.trials").iter().cloned());
    for t in &trials {
        assert!(t["rate"].as_u64().is_some_and(|r| r > 0), "{t}");
        assert!(t["valid"].is_boolean(), "{t}");
        // An invalid trial's verdict, when it has one, is what a search made of it
        // (docs/validity.md): a late trial that lost nothing passed at the rate the tester
        // really offered (`passed_at`); a harmed one that fails even with the harmed frames
        // counted failed.
        if t["valid"] == Value::Bool(false) && !t["pass"].is_null() {
            let rules: Vec<&str> = t["invalid_rules"]
                .as_array()
                .expect("invalid_rules")
                .iter()
                .filter_map(Value::as_str)
                .collect();
            if t["pass"] == Value::Bool(true) {
                assert!(rules.iter().all(|r| *r == "end_of_sending"), "{t}");
                let (at, rate) = (t["passed_at"].as_u64(), t["rate"].as_u64());
                assert!(at.is_some_and(|a| rate.is_some_and(|r| a <= r)), "{t}");
            } else {
                assert!(rules.contains(&"lag_harm"), "{t}");
            }
        }
    }
    assert!(
        !Path::new(&format!("{}.tmp", json.display())).exists(),
        "a temporary file was left behind"
    );
    trials
}

#[test]
fn sigint_on_the_mem_backend_keeps_the_finished_runs() {
    // No lab needed: two in-process ports. 100 repetitions of a one-trial search (the maximum
    // rate passes) take far longer than the 3 s before the SIGINT.
    let dir = temp_dir("mem");
    let conf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/mem.toml");
    let json = dir.join("tp.json");
    let csv = dir.join("tp.csv");
    let (status, stderr) = interrupt(
        &[
            "throughput",
            "-c",
            conf.to_str().expect("utf-8 path"),
            "--max-rate",
            "10000",
            "--duration",
            "1",
            "--timeout",
            "100",
            "--error",
            "100",
            "--repeat",
            "100",
            "--json",
            json.to_str().expect("utf-8 path"),
            "--csv",
            csv.to_str().expect("utf-8 path"),
        ],
        Duration::from_secs(3),
        &dir,
    );
    assert_eq!(status.code(), Some(130), "{status}; stderr:\n{stderr}");
    assert!(stderr.contains("interrupted by Ctrl-C"), "{stderr}");
    let trials = interrupted_document(&json, &stderr);
    assert!(!trials.is_empty(), "no trial recorded");
    let csv = std::fs::read_to_string(&csv).expect("csv");
    assert_eq!(csv.lines().count(), trials.len() + 1, "{csv}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigint_during_a_lab_throughput_search() {
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    let _lock = lab_lock();
    // lab_up replaces an existing lab. On a shared machine that may be someone else's (who
    // holds /tmp/xlat-lab.lock): refuse instead of tearing it down.
    let netns = Command::new("ip").args(["netns", "list"]).output().expect("ip netns list");
    let existing = String::from_utf8_lossy(&netns.stdout).to_string();
    assert!(
        !existing.contains("xlat-tester") && !existing.contains("xlat-dut"),
        "a lab is already up; not replacing it (run this under `flock /tmp/xlat-lab.lock`): {existing}"
    );
    let dir = temp_dir("lab");
    let config = lab_up("router4");
    let _down = LabDown;
    // A DUT that drops what exceeds 30,000 frames/s (both directions together), so that the
    // search needs several 2 s trials (a kernel router passing 100,000 fps would end it with
    // the first one, perhaps before the SIGINT).
    dut_exec(&["nft", "add table inet xlat_limit"]);
    dut_exec(&["nft", "add chain inet xlat_limit limiter { type filter hook forward priority 0 ; }"]);
    dut_exec(&[
        "nft",
        "add rule inet xlat_limit limiter limit rate over 30000/second burst 1000 packets drop",
    ]);
    let json = dir.join("tp.json");
    let (status, stderr) = interrupt(
        &[
            "throughput",
            "-c",
            &config,
            "--max-rate",
            "100000",
            "--duration",
            "2",
            "--error",
            "1000",
            "--json",
            json.to_str().expect("utf-8 path"),
        ],
        Duration::from_secs(4),
        &dir,
    );
    assert_eq!(status.code(), Some(130), "{status}; stderr:\n{stderr}");
    let trials = interrupted_document(&json, &stderr);
    assert!(!trials.is_empty(), "no trial recorded; stderr:\n{stderr}");
    // Interrupted within the one search: its trials are those of the run in progress.
    let text = std::fs::read_to_string(&json).expect("json");
    let v: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(
        v["interrupted_run"]["trials"].as_array().map(Vec::len),
        Some(trials.len()),
        "{text}"
    );
    // Every trial is one of this search: 2 s each, within the rates asked for.
    assert!(trials
        .iter()
        .all(|t| t["duration_s"] == 2.0 && t["rate"].as_u64().is_some_and(|r| r <= 100_000)));
    // The lab is still there, and `lab down` removes it.
    let o = xlatperf(&["lab", "down"]);
    assert!(o.status.success(), "lab down: {}", String::from_utf8_lossy(&o.stderr));
    let netns = Command::new("ip").args(["netns", "list"]).output().expect("ip netns list");
    let left = String::from_utf8_lossy(&netns.stdout).to_string();
    assert!(!left.contains("xlat-tester") && !left.contains("xlat-dut"), "{left}");
    let _ = std::fs::remove_dir_all(&dir);
}
