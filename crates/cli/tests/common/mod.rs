//! Helpers shared by the CLI's integration tests: running the xlatperf binary, and the lab's
//! one-at-a-time lock and tear-down guard.
// Each test binary uses a part of these.
#![allow(dead_code)]

use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The tools a lab topology runs (xlat_lab checks the same before `lab up`).
pub const LAB_TOOLS: &[&str] = &["ip", "nft", "sysctl", "kill"];

/// True when a test that needs root and `tools` (on the PATH) cannot run here: it says so on
/// stderr and appends a line to the file named by XLAT_SKIP_LOG (scripts/test.sh fails when
/// that file is not empty). With CI=true it panics instead: there a skip would be a pass that
/// tested nothing.
pub fn skip_unless_root(tools: &[&str]) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| !std::env::split_paths(&path).any(|d| d.join(t).is_file()))
        .collect();
    let why = match (is_root(), missing.is_empty()) {
        (false, _) => "needs root".to_string(),
        (true, false) => format!("needs {} (not on PATH)", missing.join(", ")),
        (true, true) => return false,
    };
    let test = format!("{}::{}", env!("CARGO_CRATE_NAME"), std::thread::current().name().unwrap_or("?"));
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{test} {why}, and CI=true: a skip there would pass untested"
    );
    eprintln!("skipped: {test} {why}");
    if let Some(log) = std::env::var_os("XLAT_SKIP_LOG") {
        use std::io::Write;
        let line = format!("{test}: {why}\n");
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .and_then(|mut f| f.write_all(line.as_bytes()));
    }
    true
}

/// Run xlatperf with `args`.
pub fn xlatperf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xlatperf"))
        .args(args)
        .output()
        .expect("run xlatperf")
}

/// Run xlatperf with `args`, which must succeed; its standard output.
pub fn ok(args: &[&str]) -> String {
    let o = xlatperf(args);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "xlatperf {args:?} failed:\n{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// The lab's namespaces have fixed names: one lab at a time within a test binary (cargo runs
/// the binaries one after another).
pub fn lab_lock() -> MutexGuard<'static, ()> {
    static LAB: Mutex<()> = Mutex::new(());
    LAB.lock().unwrap_or_else(|e| e.into_inner())
}

/// Takes the lab down when dropped, also when the test fails.
pub struct LabDown;

impl Drop for LabDown {
    fn drop(&mut self) {
        let _ = xlatperf(&["lab", "down"]);
    }
}

/// Bring a lab up (replacing any), returning the path of the configuration it wrote.
pub fn lab_up(topology: &str) -> String {
    let out = ok(&["lab", "up", topology, "--replace"]);
    out.lines().last().expect("lab up prints the config path last").trim().to_string()
}

/// Run a trial (a closure giving its JSON report) until it is valid, three times at most: on a
/// shared machine another process may take the cores and make a trial invalid (correctly
/// reported as such, but not what the caller tests).
pub fn until_valid(mut trial: impl FnMut() -> serde_json::Value) -> serde_json::Value {
    let mut v = trial();
    for _ in 0..2 {
        if v["valid"] == serde_json::Value::Bool(true) {
            break;
        }
        eprintln!("invalid trial, again: {}", v["invalid_reasons"]);
        v = trial();
    }
    assert_eq!(v["valid"], serde_json::Value::Bool(true), "{v}");
    v
}

/// Run a command in the lab's DUT namespace, which must succeed; its standard output.
pub fn dut_exec(args: &[&str]) -> String {
    let o = Command::new("ip")
        .args(["netns", "exec", "xlat-dut"])
        .args(args)
        .output()
        .expect("ip netns exec");
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).to_string()
}
