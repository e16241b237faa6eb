//! Shared by the lab tests: serialisation and cleanup.

#![allow(dead_code)]

use std::sync::{Mutex, MutexGuard};

static LAB: Mutex<()> = Mutex::new(());

/// Hold this for the whole test: the lab's names are fixed, so tests must not overlap.
pub fn serial() -> MutexGuard<'static, ()> {
    LAB.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Tears the lab down when dropped, so a failing test leaves nothing behind.
pub struct Cleanup;

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Err(e) = xlat_lab::down() {
            eprintln!("lab cleanup failed: {e}");
        }
    }
}

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
    let why = match (xlat_lab::is_root(), missing.is_empty()) {
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

/// Start from a clean machine (a crashed earlier run may have left a lab) and clean up at the end.
pub fn cleanup_guard() -> Cleanup {
    if let Err(e) = xlat_lab::down() {
        eprintln!("lab cleanup before the test failed: {e}");
    }
    Cleanup
}

pub mod packet;
