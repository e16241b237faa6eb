//! A campaign on the lab, killed and resumed, and its report in a real browser.
//!
//! A small campaign (router4, 2 frame sizes, throughput and latency, 2 repetitions: 8 runs) is
//! killed with SIGKILL in the middle of a run, then run again: every run is in the manifest
//! and in runs/ exactly once, the runs finished before the kill are byte for byte and
//! timestamp for timestamp what they were, and the run the kill interrupted did not outlive
//! it. Then `xlatperf report` makes the page and headless Chromium (Debian's, driven over the
//! DevTools protocol by tests/browser/check_report.py of the campaign crate) opens it: no
//! console error, no network request, both plots drawn (their screenshots are not blank), and
//! the summary table's numbers equal the medians of the runs' JSON documents.
//! Needs root (CI runs as root); without it the test skips, which fails under CI=true.

mod common;

use common::procedures::skip;
use common::{check_in_browser, lab_lock, processes_mentioning, xlatperf, LabDown};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PLAN: &str = r#"
[campaign]
name = "lab-small"
repetitions = 2
axes = { frame-sizes = [84, 1518] }

[[test]]
name = "router4"
lab = "router4"

[[procedure]]
command = "throughput"
args = ["--max-rate", "40k", "--error", "10%", "--duration", "0.5", "--timeout", "100", "--retries", "8"]

[[procedure]]
command = "latency"
args = ["--rate", "5k", "--duration", "1", "--delay", "0.5", "--tags", "500", "--repetitions", "1", "--timeout", "100", "--retries", "8"]
"#;

fn manifest(dir: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(dir.join("campaign.json")).ok()?;
    serde_json::from_str(&text).ok()
}

fn done_ids(m: &Value) -> Vec<String> {
    m["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "done")
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

fn median(v: Vec<f64>) -> f64 {
    xlat_results::Summary::of(&v).map_or(f64::NAN, |s| s.median)
}

#[test]
fn a_campaign_killed_in_a_run_resumes_without_repeating_or_losing_one_and_its_report_renders() {
    if skip() {
        return;
    }
    let _g = lab_lock();
    let _down = LabDown;
    let work = common::fresh_dir("xlat-lab-campaign");
    let plan = work.join("plan.toml");
    std::fs::write(&plan, PLAN).unwrap();
    let dir = work.join("out");
    let args = ["campaign", plan.to_str().unwrap(), "--dir", dir.to_str().unwrap()];

    // Start it; kill it with SIGKILL while its third run is in progress.
    let mut child = Command::new(env!("CARGO_BIN_EXE_xlatperf"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let end = Instant::now() + Duration::from_secs(180);
    loop {
        assert!(Instant::now() < end, "the campaign did not reach its third run in 180 s");
        assert!(child.try_wait().unwrap().is_none(), "the campaign ended before it was killed");
        let started_third = dir
            .join("logs")
            .read_dir()
            .map(|d| d.flatten().any(|e| e.file_name().to_string_lossy().starts_with("003-")))
            .unwrap_or(false);
        if manifest(&dir).is_some_and(|m| done_ids(&m).len() >= 2) && started_third {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    let before = manifest(&dir).unwrap();
    let finished = done_ids(&before);
    assert!(finished.len() >= 2 && finished.len() < 8, "{finished:?}");
    // The run in progress died with the campaign (its parent-death signal).
    let end = Instant::now() + Duration::from_secs(5);
    while !processes_mentioning(dir.to_str().unwrap()).is_empty() {
        assert!(
            Instant::now() < end,
            "a run outlived its campaign: {:?}",
            processes_mentioning(dir.to_str().unwrap())
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let snapshot: BTreeMap<String, (Vec<u8>, std::time::SystemTime)> = finished
        .iter()
        .map(|id| {
            let p = dir.join(format!("runs/{id}.json"));
            (
                id.clone(),
                (std::fs::read(&p).unwrap(), std::fs::metadata(&p).unwrap().modified().unwrap()),
            )
        })
        .collect();

    // Resume: the same command, to the end.
    let o = xlatperf(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "the resumed campaign failed:\n{err}");
    assert!(
        err.contains(&format!("{} done, 0 failed, {} to run", finished.len(), 8 - finished.len())),
        "{err}"
    );
    let after = manifest(&dir).unwrap();
    assert_eq!(after["complete"], true);
    let ids: Vec<&str> = after["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 8);
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 8, "a run twice in the manifest: {ids:?}");
    assert_eq!(done_ids(&after).len(), 8, "{after}");
    assert_eq!(after["sessions"].as_array().unwrap().len(), 2);
    let files: Vec<String> = std::fs::read_dir(dir.join("runs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let mut want: Vec<String> = ids.iter().map(|i| format!("{i}.json")).collect();
    let mut got = files.clone();
    want.sort();
    got.sort();
    assert_eq!(got, want, "runs/ holds each run's file once and nothing else");
    for (id, (bytes, mtime)) in &snapshot {
        let p = dir.join(format!("runs/{id}.json"));
        assert!(std::fs::read(&p).unwrap() == *bytes, "{id}: a finished run's file changed");
        assert_eq!(
            std::fs::metadata(&p).unwrap().modified().unwrap(),
            *mtime,
            "{id}: a finished run's file was rewritten"
        );
    }
    let docs: Vec<Value> = ids
        .iter()
        .map(|id| serde_json::from_str(&std::fs::read_to_string(dir.join(format!("runs/{id}.json"))).unwrap()).unwrap())
        .collect();
    for d in &docs {
        assert_eq!(d["complete"], true);
    }

    // Every throughput figure of frame size `size`, over the runs.
    let throughputs = |size: u64| -> Vec<f64> {
        docs.iter()
            .filter(|d| d["procedure"] == "throughput" && d["frame_sizes"][0] == size)
            .flat_map(|d| {
                d["results"][0]["result"]["runs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r["throughput"].as_f64().unwrap())
            })
            .collect()
    };

    // The summaries as a table (what the benchmark scripts print): the median per frame size
    // is the median of the runs' figures.
    let o = xlatperf(&["report", dir.to_str().unwrap(), "--table"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let table = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        table.starts_with("test\tvariant\tframe_size\tprocedure\tmetric\tn\tmedian\t"),
        "{table}"
    );
    let lines: Vec<Vec<&str>> = table.lines().skip(1).map(|l| l.split('\t').collect()).collect();
    let tp_lines: Vec<&Vec<&str>> = lines.iter().filter(|l| l[3] == "throughput" && l[4] == "throughput_fps").collect();
    assert_eq!(tp_lines.len(), 2, "{table}");
    for l in tp_lines {
        let values = throughputs(l[2].parse().unwrap());
        assert_eq!(l[5], values.len().to_string(), "{table}");
        assert_eq!(l[6].parse::<f64>().unwrap(), median(values), "{table}");
    }

    // The report, in a real browser.
    let html = dir.join("report.html");
    let o = xlatperf(&["report", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = check_in_browser(&html);
    let Some(page) = page else { return };
    assert_eq!(page["console"], serde_json::json!([]), "console errors or network requests");
    let plots = page["plots"].as_array().unwrap();
    let plot_ids: Vec<&str> = plots.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(plot_ids, ["plot-throughput", "plot-latency"]);
    for p in plots {
        assert!(p["width"].as_f64().unwrap() > 300.0 && p["height"].as_f64().unwrap() > 200.0, "{p}");
        assert!(
            p["nonwhite"].as_f64().unwrap() > 0.005 && p["colours"].as_u64().unwrap() > 10,
            "a blank plot: {p}"
        );
    }
    let rows = page["summary"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    for row in rows {
        let size = row["frame_size"].as_u64().unwrap();
        let of = |procedure: &'static str| {
            docs.iter()
                .filter(move |d| d["procedure"] == procedure && d["frame_sizes"][0] == size)
        };
        let tp = median(throughputs(size));
        let tl = median(
            of("latency")
                .map(|d| d["results"][0]["result"]["summaries"]["forward_tl_ms"]["median"].as_f64().unwrap())
                .collect(),
        );
        let cell = |m: &str| -> f64 {
            row["cells"][m]["value"]
                .as_str()
                .unwrap_or_else(|| panic!("no {m}: {row}"))
                .parse()
                .unwrap()
        };
        assert_eq!(cell("throughput_fps"), tp, "{size}: {row}");
        // router4 passes the search's whole range (--max-rate 40k): the page shows the figure
        // as a lower bound.
        if tp == 40_000.0 {
            let text = row["cells"]["throughput_fps"]["text"].as_str().unwrap_or("");
            assert!(
                text.starts_with('\u{2265}'),
                "a throughput at --max-rate not shown as at least: {text:?}"
            );
        }
        assert!((cell("forward_tl_ms") - tl).abs() <= 1e-12 * tl.abs(), "{size}: {row} against {tl}");
        // IPv4 frames are 20 bytes shorter than the frame size.
        assert_eq!(cell("throughput_bps"), tp * (size - 20) as f64 * 8.0);
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// A plan is code: `--dry-run` lists every distinct DUT command its runs may execute (a lab's
/// hooks, a description's `[dut]`, a procedure's `--set dut.KEY=...`), where each comes from,
/// and the user they run as (`id -un`'s); no root needed.
#[test]
fn the_dry_run_lists_the_dut_commands_and_the_user() {
    let dir = common::fresh_dir("xlat-dry-commands");
    let mem = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/mem.toml")).unwrap();
    std::fs::write(
        dir.join("dut.toml"),
        format!("{mem}\n[dut]\nbefore_trial = \"logger -t dut 'from the file'\"\n"),
    )
    .unwrap();
    let plan = r#"
[campaign]
name = "cmds"
axes = { frame-sizes = [84, 1518] }
[[test]]
name = "nat44"
lab = "nat44"
[[test]]
name = "file"
config = "dut.toml"
[[procedure]]
command = "throughput"
tests = ["file"]
[[procedure]]
command = "latency"
args = ["--rate", "1000", "--set", "dut.reset=echo reset"]
"#;
    std::fs::write(dir.join("plan.toml"), plan).unwrap();
    let o = xlatperf(&["campaign", dir.join("plan.toml").to_str().unwrap(), "--dry-run"]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let id = Command::new("id").arg("-un").output().unwrap();
    let user = String::from_utf8_lossy(&id.stdout).trim().to_string();
    let head = out
        .lines()
        .find(|l| l.starts_with("DUT commands"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(head.contains(&format!("with sh -c as {user} (uid ")), "{head}");
    let listed: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("DUT commands"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    // Each command once, with every place it comes from, in the order of the runs.
    assert_eq!(
        listed,
        [
            "  ip netns exec xlat-dut conntrack -F    [nat44 dut.before_trial, nat44 dut.delete_all]",
            "  ip netns exec xlat-dut conntrack -C    [nat44 dut.count]",
            // The procedure's --set replaces the lab's own reset in every run that has it.
            "  echo reset    [nat44 dut.reset, file dut.reset]",
            "  logger -t dut 'from the file'    [file dut.before_trial]",
        ],
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every example plan (and every benchmark's, bench/plans) parses and every run's command line
/// is one xlatperf accepts (what
/// `--dry-run` checks before listing the runs; no root needed); and its first of two shards
/// lists half its runs (rounded up).
#[test]
fn every_example_campaign_dry_runs() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut n = 0;
    let runs = |out: &str| out.lines().filter(|l| l.contains("  (")).count();
    let plans = ["examples/campaigns", "bench/plans"].map(|d| std::fs::read_dir(repo.join(d)).unwrap());
    for e in plans.into_iter().flatten().flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "toml") {
            continue; // slurm/: the batch scripts that run a plan
        }
        let dry = |extra: &[&str]| {
            let args = [
                &["campaign", p.to_str().unwrap(), "--dry-run", "--dir", "/nonexistent/never-written"][..],
                extra,
            ]
            .concat();
            let o = xlatperf(&args);
            let out = String::from_utf8_lossy(&o.stdout).to_string();
            assert!(o.status.success(), "{}: {}", p.display(), String::from_utf8_lossy(&o.stderr));
            assert!(out.contains("estimated time:"), "{out}");
            assert!(!Path::new("/nonexistent/never-written").exists(), "a dry run wrote its directory");
            out
        };
        let (all, half) = (dry(&[]), dry(&["--shard", "1/2"]));
        assert!(half.contains(", shard 1/2: "), "{half}");
        assert_eq!(runs(&half), runs(&all).div_ceil(2), "{}:\n{all}\n{half}", p.display());
        n += 1;
    }
    assert!(n >= 5, "{n} example and benchmark campaigns");
}
