//! A campaign spread by a real Slurm (issue 42): a single-node Slurm of its own
//! (scripts/slurm-local.sh: munged, slurmctld, slurmd; the node one `testbed` GRES) runs
//! examples/campaigns/slurm/campaign.sbatch as an array of two tasks, each a shard of a small
//! router4 plan; merge.sbatch, dependent on the array, merges the two directories. The merged
//! runs are every run of the plan once, with the ids, statuses and procedures of the same plan
//! run whole, unsharded.
//! Needs root and Debian's Slurm and munge (scripts/setup.sh); without them the test skips,
//! which fails under CI=true.

mod common;

use common::{lab_lock, ok, skip_unless_root, LabDown};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const PLAN: &str = r#"
[campaign]
name = "slurm-small"
repetitions = 2
axes = { frame-sizes = [84, 1518] }

[[test]]
name = "router4"
lab = "router4"

[[procedure]]
command = "throughput"
args = ["--max-rate", "20k", "--error", "20%", "--duration", "0.5", "--timeout", "100", "--retries", "8"]
"#;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Stops the test's Slurm (by the pids its script recorded) when dropped, also on failure.
struct SlurmDown(PathBuf);

impl Drop for SlurmDown {
    fn drop(&mut self) {
        let _ = Command::new(repo().join("scripts/slurm-local.sh"))
            .arg("down")
            .arg(&self.0)
            .status();
    }
}

/// (id, status, procedure) of every run in campaign directory `dir`.
fn runs(dir: &Path) -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(dir.join("campaign.json")).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let m: Value = serde_json::from_str(&text).unwrap();
    m["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap().to_string();
            (s("id"), s("status"), s("procedure"))
        })
        .collect()
}

#[test]
fn an_array_job_runs_the_shards_and_the_report_merges_them() {
    let _serial = lab_lock();
    if skip_unless_root(&["sbatch", "slurmctld", "slurmd", "munged", "ip", "nft"]) {
        return;
    }
    let _down = LabDown;
    let dir = common::fresh_dir("xlat-slurm");
    let plan = dir.join("slurm-small.toml");
    std::fs::write(&plan, PLAN).unwrap();
    let d = |s: &str| dir.join(s).to_str().unwrap().to_string();

    // The plan run whole, on this machine, as the reference.
    ok(&["campaign", plan.to_str().unwrap(), "--dir", &d("whole")]);

    // The same plan as two shards of an array job of a real Slurm.
    let slurm = dir.join("slurm");
    let up = Command::new(repo().join("scripts/slurm-local.sh"))
        .arg("up")
        .arg(&slurm)
        .output()
        .unwrap();
    // Stops this Slurm when the test ends, also on failure (its pid files are in `slurm`).
    let _slurm_down = SlurmDown(slurm.clone());
    assert!(
        up.status.success(),
        "slurm-local.sh up: {}{}",
        String::from_utf8_lossy(&up.stdout),
        String::from_utf8_lossy(&up.stderr)
    );
    // As docs/campaign.md says: the array job, then merge.sbatch once every task has ended
    // (`--dependency=afterany`); waiting on the merge job waits on both.
    let export = format!(
        "--export=ALL,PLAN={},OUT={},N=2,XLATPERF={}",
        plan.display(),
        dir.display(),
        env!("CARGO_BIN_EXE_xlatperf")
    );
    let sbatch = |args: &[&str], script: &str| {
        Command::new("timeout")
            .arg("900")
            .arg("sbatch")
            .args(args)
            .arg(&export)
            .arg(repo().join("examples/campaigns/slurm").join(script))
            .env("SLURM_CONF", slurm.join("slurm.conf"))
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    let logs = || -> String {
        std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".out"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .collect()
    };
    let array = sbatch(&["--parsable", "--array=1-2"], "campaign.sbatch");
    assert!(array.status.success(), "sbatch: {}", String::from_utf8_lossy(&array.stderr));
    let jid = String::from_utf8_lossy(&array.stdout).trim().to_string();
    let merge = sbatch(&["--wait", &format!("--dependency=afterany:{jid}")], "merge.sbatch");
    assert!(
        merge.status.success(),
        "sbatch merge.sbatch: {}{}\n{}",
        String::from_utf8_lossy(&merge.stdout),
        String::from_utf8_lossy(&merge.stderr),
        logs()
    );
    // Each task ran its own shard (its directory says which).
    let parts = [d("slurm-small-1-of-2"), d("slurm-small-2-of-2")];
    for (k, p) in parts.iter().enumerate() {
        let m: Value = serde_json::from_str(&std::fs::read_to_string(Path::new(p).join("campaign.json")).unwrap()).unwrap();
        assert_eq!(m["shard"]["index"], k + 1, "{p}\n{}", logs());
        assert_eq!(m["shard"]["count"], 2, "{p}");
    }

    // Merged by merge.sbatch: every run of the plan once, as the whole campaign has them.
    let html = d("slurm-small-report.html");
    let mut merged: Vec<_> = parts.iter().flat_map(|p| runs(Path::new(p))).collect();
    merged.sort();
    let whole = runs(&dir.join("whole"));
    assert_eq!(merged, whole);
    assert_eq!(whole.len(), 4);
    assert!(whole.iter().all(|(_, status, _)| status == "done"), "{whole:?}");
    let page = std::fs::read_to_string(&html).unwrap();
    // The merged page opens in headless Chromium without a console error.
    if let Some(seen) = common::check_in_browser(Path::new(&html)) {
        assert_eq!(seen["console"], serde_json::json!([]), "{seen}");
        assert_eq!(
            seen["summary"].as_array().map(Vec::len),
            Some(2),
            "router4 at two frame sizes: {seen}"
        );
    }
    for (id, _, _) in &whole {
        let rows: usize = parts
            .iter()
            .map(|p| page.matches(&format!("<code>{p}/runs/{id}.json</code>")).count())
            .sum();
        assert_eq!(rows, 1, "{id} once in the report's runs");
    }
    // Slurm stopped (by the pids in its directory) before the directory goes.
    drop(_slurm_down);
    let _ = std::fs::remove_dir_all(&dir);
}
