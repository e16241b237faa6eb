//! xlatperf's MLRsearch against its authors' implementation (PyPI `MLRsearch`, the version
//! scripts/setup.sh pins and installs in `.venv/mlrsearch`), both driven against the same
//! simulated DUTs (`sim::LossModel`, whose functions `tests/mlrsearch/reference.py` computes
//! the same way): a loss step at a known load, a loss ratio that grows smoothly with load, a
//! loss that depends on the trial duration (a buffer), and a noisy DUT over 30 seeds. For the
//! deterministic DUTs every goal's Relevant Lower Bound agrees with the reference's within the
//! Goal Width; for the noisy one the medians over the seeds agree within two Goal Widths. The
//! trials and trial-seconds each needed are printed (docs/mlrsearch.md has them).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use xlat_procedures::{mlrsearch, MlrConfig, NoProgress};
use xlat_results::SearchGoal;
use xlat_testkit::sim::{LossModel, ModelDut};

use xlat_testkit::skip;

const MIN_LOAD: u64 = 10_000;
const MAX_LOAD: u64 = 1_000_000;

fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("XLAT_MLRSEARCH_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/mlrsearch/bin/python");
    p.is_file().then_some(p)
}

/// RFC 2544's rules with 10 s trials, and CSIT's (1 s trials, 21 s duration sum, exceed ratio
/// 0.5); NDR and PDR each.
fn goal_sets() -> Vec<(&'static str, Vec<SearchGoal>)> {
    let rfc2544 = |name: &str, lr: f64| SearchGoal::rfc2544(name, lr, 10.0);
    let csit = |name: &str, lr: f64| SearchGoal {
        exceed_ratio: 0.5,
        final_trial_duration_s: 1.0,
        duration_sum_s: 21.0,
        ..SearchGoal::rfc2544(name, lr, 1.0)
    };
    vec![
        ("RFC 2544 rules", vec![rfc2544("NDR", 0.0), rfc2544("PDR", 0.005)]),
        ("CSIT rules", vec![csit("NDR", 0.0), csit("PDR", 0.005)]),
    ]
}

fn model_json(m: &LossModel) -> Value {
    match *m {
        LossModel::Step { at, ratio } => json!({"kind": "step", "at": at, "ratio": ratio}),
        LossModel::Capacity { fps } => json!({"kind": "capacity", "fps": fps}),
        LossModel::Buffered { fps, buffer } => json!({"kind": "buffered", "fps": fps, "buffer": buffer}),
        LossModel::Noisy { fps, noise } => json!({"kind": "noisy", "fps": fps, "noise": noise}),
    }
}

/// One search result per seed: each goal's RLB (0 when none), the trials and trial-seconds.
struct Run {
    rlb: Vec<f64>,
    trials: usize,
    seconds: f64,
}

fn reference(py: &PathBuf, model: &LossModel, goals: &[SearchGoal], seeds: &[u64]) -> Vec<Run> {
    let goals_json: Vec<Value> = goals
        .iter()
        .map(|g| {
            json!({"name": g.name, "loss_ratio": g.loss_ratio, "exceed_ratio": g.exceed_ratio, "width": g.width,
                   "initial": g.initial_trial_duration_s, "final": g.final_trial_duration_s, "sum": g.duration_sum_s})
        })
        .collect();
    let input = json!({"model": model_json(model), "goals": goals_json, "min_load": MIN_LOAD, "max_load": MAX_LOAD, "seeds": seeds});
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mlrsearch/reference.py");
    let mut child = Command::new(py)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the reference");
    child.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "reference failed: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| Run {
            rlb: goals.iter().map(|g| r["goals"][&g.name]["rlb"].as_f64().unwrap_or(0.0)).collect(),
            trials: r["trials"].as_u64().unwrap() as usize,
            seconds: r["trial_seconds"].as_f64().unwrap(),
        })
        .collect()
}

fn ours(model: &LossModel, goals: &[SearchGoal], seeds: &[u64]) -> Vec<Run> {
    seeds
        .iter()
        .map(|&seed| {
            let mut c = MlrConfig::new(64, MAX_LOAD, 10.0);
            c.min_load = MIN_LOAD;
            c.goals = goals.to_vec();
            let r = mlrsearch(&mut ModelDut::new(*model, seed), &c, &mut NoProgress).unwrap();
            assert!(r.complete);
            Run {
                rlb: r.goals.iter().map(|g| g.relevant_lower_bound.unwrap_or(0) as f64).collect(),
                trials: r.trials.len(),
                seconds: r.trial_seconds,
            }
        })
        .collect()
}

fn median(v: Vec<f64>) -> f64 {
    xlat_results::Summary::of(&v).map_or(f64::NAN, |s| s.median)
}

#[test]
fn xlatperf_and_the_authors_implementation_agree_on_every_goal() {
    let Some(py) = python() else {
        skip::skip("needs the MLRsearch reference in .venv/mlrsearch (scripts/setup.sh creates it)");
        return;
    };
    let deterministic = [
        (
            "loss step of 2 % at 600,000 fps",
            LossModel::Step {
                at: 600_000.0,
                ratio: 0.02,
            },
        ),
        (
            "loss step of 0.3 % at 600,000 fps",
            LossModel::Step {
                at: 600_000.0,
                ratio: 0.003,
            },
        ),
        ("smooth: limit of 400,000 fps", LossModel::Capacity { fps: 400_000.0 }),
        (
            "duration-dependent: 400,000 fps and a 200,000-frame buffer",
            LossModel::Buffered {
                fps: 400_000.0,
                buffer: 200_000.0,
            },
        ),
    ];
    let mut failures = Vec::new();
    let mut table =
        String::from("| DUT | rules | goal | RLB xlatperf | RLB reference | trials / trial-s xlatperf | trials / trial-s reference |\n");
    for (name, model) in &deterministic {
        for (rules, goals) in goal_sets() {
            let x = &ours(model, &goals, &[1])[0];
            let r = &reference(&py, model, &goals, &[1])[0];
            for (i, g) in goals.iter().enumerate() {
                let (a, b) = (x.rlb[i], r.rlb[i]);
                table.push_str(&format!(
                    "| {name} | {rules} | {} | {a:.0} | {b:.0} | {} / {:.0} | {} / {:.0} |\n",
                    g.name, x.trials, x.seconds, r.trials, r.seconds
                ));
                if (a - b).abs() > g.width * a.max(b) + 1.0 {
                    failures.push(format!("{name}, {rules}, {}: xlatperf {a}, reference {b}", g.name));
                }
            }
        }
    }
    // The noisy DUT: medians over 30 seeds.
    let model = LossModel::Noisy {
        fps: 500_000.0,
        noise: 0.05,
    };
    let seeds: Vec<u64> = (1..=30).collect();
    for (rules, goals) in goal_sets() {
        let x = ours(&model, &goals, &seeds);
        let r = reference(&py, &model, &goals, &seeds);
        for (i, g) in goals.iter().enumerate() {
            let a = median(x.iter().map(|run| run.rlb[i]).collect());
            let b = median(r.iter().map(|run| run.rlb[i]).collect());
            let trials = |v: &[Run]| median(v.iter().map(|run| run.trials as f64).collect());
            let secs = |v: &[Run]| median(v.iter().map(|run| run.seconds).collect());
            table.push_str(&format!(
                "| noisy: 500,000 fps +-5 %, median of 30 | {rules} | {} | {a:.0} | {b:.0} | {} / {:.0} | {} / {:.0} |\n",
                g.name,
                trials(&x),
                secs(&x),
                trials(&r),
                secs(&r)
            ));
            if (a - b).abs() > 2.0 * g.width * a.max(b) + 1.0 {
                failures.push(format!("noisy, {rules}, {}: median xlatperf {a}, reference {b}", g.name));
            }
        }
    }
    eprintln!("{table}");
    assert!(
        failures.is_empty(),
        "disagreements with the reference:\n{}\n{table}",
        failures.join("\n")
    );
}
