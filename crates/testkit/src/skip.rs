//! The helpers of every test that needs the machine (root, tools, namespaces), for every test
//! crate (a dev-dependency): the one skip rule, whether this process is root, whether a tool is
//! on the PATH, and the one lock that keeps a test process's namespace tests from overlapping.

/// Hold this for the whole of a test that creates namespaces, veth links or the lab: their
/// names are fixed, so two such tests of one process must not overlap (cargo runs test
/// processes one after another).
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Is this process running with effective uid 0? (Read from /proc, without libc.)
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().nth(1).map(|euid| euid == "0"))
        })
        .unwrap_or(false)
}

/// Is `tool` on the PATH?
pub fn have_tool(tool: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|d| d.join(tool).is_file())
}

/// True when a test that needs root and `tools` (on the PATH) cannot run here: it says so on
/// stderr and appends a line to the file named by
/// XLAT_SKIP_LOG (scripts/test.sh fails when that file is not empty). With CI=true it panics
/// instead: there a skip would be a pass that tested nothing.
pub fn skip_unless_root(tools: &[&str]) -> bool {
    let missing: Vec<&str> = tools.iter().copied().filter(|t| !have_tool(t)).collect();
    let why = match (is_root(), missing.is_empty()) {
        (false, _) => "needs root".to_string(),
        (true, false) => format!("needs {} (not on PATH)", missing.join(", ")),
        (true, true) => return false,
    };
    skip(&why)
}

/// Skip the calling test because of `why` (the rule of [`skip_unless_root`], for tests that
/// need something else: a file setup made, a Python environment): true, after saying so and
/// logging it; with CI=true a panic.
pub fn skip(why: &str) -> bool {
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
