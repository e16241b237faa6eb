//! The lab of the procedure commands' tests (lab_procedures.rs, lab_search.rs): a topology up
//! for one test and down when it ends, an nftables limiter in the DUT, a procedure run with
//! `--json` whose document is checked for what every document holds.

use super::{dut_exec, lab_lock, lab_up, ok, skip_unless_root, xlatperf, LAB_TOOLS};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::MutexGuard;

/// Invalid trials (the tester missed its schedule on this shared machine) are run again this
/// often before a procedure gives up.
pub const RETRIES: &str = "8";

/// A lab for one test: up on creation, down on drop (also when the test fails).
pub struct Lab {
    pub config: String,
    pub dir: PathBuf,
    _g: MutexGuard<'static, ()>,
}

impl Lab {
    pub fn up(topology: &str, test: &str) -> Lab {
        let g = lab_lock();
        let config = lab_up(topology);
        let dir = std::env::temp_dir().join(format!("xlatperf-lab-procedures-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        Lab { config, dir, _g: g }
    }

    pub fn dut(&self, args: &[&str]) {
        dut_exec(args);
    }

    /// Make the DUT drop what exceeds `pps` frames/s (both directions together).
    pub fn limit(&self, pps: u64, burst: u64) {
        self.dut(&["nft", "add table inet xlat_limit"]);
        self.dut(&["nft", "add chain inet xlat_limit limiter { type filter hook forward priority 0 ; }"]);
        let rule = format!("add rule inet xlat_limit limiter limit rate over {pps}/second burst {burst} packets drop");
        self.dut(&["nft", &rule]);
    }

    pub fn file(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// Run a procedure command with `--json FILE` and return the parsed document and stdout.
    pub fn run(&self, procedure: &str, args: &[&str]) -> (Value, String) {
        let json = self.file(&format!("{procedure}.json"));
        let mut all = vec![procedure, "-c", &self.config, "--json", &json, "--retries", RETRIES, "--verbose"];
        all.extend_from_slice(args);
        let stdout = ok(&all);
        let text = std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{json}: {e}"));
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{json} is not JSON ({e}): {text}"));
        assert!(
            !std::path::Path::new(&format!("{json}.tmp")).exists(),
            "a temporary file was left behind"
        );
        check_document(&v, procedure);
        (v, stdout)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = xlatperf(&["lab", "down"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn skip() -> bool {
    skip_unless_root(LAB_TOOLS)
}

pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

pub fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an unsigned integer: {v}"))
}

/// What every document holds: version, configuration, seeds, command line, and for every run
/// every trial.
pub fn check_document(v: &Value, command: &str) {
    let procedure = match command {
        "b2b" => "back-to-back",
        c => c,
    };
    assert_eq!(v["procedure"], procedure, "{v}");
    assert_eq!(v["complete"], Value::Bool(true));
    let m = &v["meta"];
    assert_eq!(m["xlatperf_version"], env!("CARGO_PKG_VERSION"));
    let backend = std::env::var("XLAT_LAB_BACKEND").unwrap_or_else(|_| "afpacket".into());
    assert_eq!(
        m["config"]["tester"]["backend"],
        backend.as_str(),
        "the configuration is recorded: {m}"
    );
    assert!(m["config"]["setup"]["left"].is_object());
    let seed = u(&m["seeds"]["traffic"]);
    assert_eq!(
        u(&m["config"]["setup"]["seed"]),
        seed,
        "the recorded configuration carries the seed in use"
    );
    let argv: Vec<&str> = m["command_line"]
        .as_array()
        .expect("command line")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(argv.get(1), Some(&command), "{argv:?}");
    assert!(argv.contains(&"--json"));
    assert!(m["started_at"].as_str().is_some_and(|s| s.ends_with('Z')));
    let results = v["results"].as_array().expect("results");
    assert_eq!(results.len(), v["frame_sizes"].as_array().expect("frame sizes").len());
    for r in results {
        let runs = r["result"]["runs"].as_array().expect("runs");
        assert!(!runs.is_empty());
        for run in runs {
            let trials = run["trials"].as_array().expect("trials");
            assert!(!trials.is_empty(), "{run}");
            for t in trials {
                assert!(u(&t["rate"]) > 0 && t["valid"].is_boolean(), "{t}");
                assert!(u(&t["forward"]["sent"]) > 0, "{t}");
            }
            // The result rests on a valid trial, or on a trial that ended late without loss
            // (a throughput search passes it at the rate offered: docs/validity.md).
            assert!(
                trials.iter().any(|t| t["valid"] == Value::Bool(true) || t["passed_at"].is_u64()),
                "{run}"
            );
        }
        assert!(r["result"]["summaries"].is_object());
    }
}

pub fn runs(v: &Value) -> &Vec<Value> {
    v["results"][0]["result"]["runs"].as_array().expect("runs")
}

pub fn summary<'a>(v: &'a Value, metric: &str) -> &'a Value {
    let s = &v["results"][0]["result"]["summaries"][metric];
    assert!(s.is_object(), "no summary of {metric}: {}", v["results"][0]["result"]["summaries"]);
    s
}
