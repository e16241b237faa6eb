//! The skip rule of every root-only test in the workspace, included by `#[path]` from each test
//! crate that needs it (test crates cannot share code otherwise).

/// True when a test that needs root and `tools` (on the PATH) cannot run here (`is_root` says
/// whether this process is root): it says so on stderr and appends a line to the file named by
/// XLAT_SKIP_LOG (scripts/test.sh fails when that file is not empty). With CI=true it panics
/// instead: there a skip would be a pass that tested nothing.
pub fn skip_unless(is_root: bool, tools: &[&str]) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| !std::env::split_paths(&path).any(|d| d.join(t).is_file()))
        .collect();
    let why = match (is_root, missing.is_empty()) {
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
