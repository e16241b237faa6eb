//! The one retry rule of every test that judges a trial by the tester's own timing (sending on
//! time, phase 1 on time, a validation), for every test crate (a dev-dependency).
//!
//! On a shared machine another process may take the cores and make a trial invalid, which the
//! tester correctly reports; such a trial is run again, three times in all. But a retry is
//! not free: every run and every retry is written to the file named by XLAT_RETRY_LOG
//! (`run <what>`, `retry <what>: <why>`), and scripts/test.sh fails the suite when more than one
//! run in ten over the whole suite was a retry (after three), so that a change that makes one trial in
//! three invalid fails instead of hiding behind retries. Judged over the suite, not per test
//! process: a test process has ten or twenty timed trials, too few to tell this shared 2-core
//! machine's misses (a phase of 0.1 s at 20,000 frames/s must end within 50 us of its
//! schedule; the engine's stateful tests once needed 2 retries in 8 trials) from a regression.
//! A process still fails at once when more than half of its runs (after three) were retries.
//! Nothing here retries a loss or an error.

use std::sync::atomic::{AtomicU64, Ordering};

static RUNS: AtomicU64 = AtomicU64::new(0);
static RETRIES: AtomicU64 = AtomicU64::new(0);

/// Append `line` to the file named by XLAT_RETRY_LOG, if set.
fn log(line: &str) {
    if let Some(path) = std::env::var_os("XLAT_RETRY_LOG") {
        use std::io::Write;
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(format!("{}\n", line.replace('\n', " ")).as_bytes()));
    }
}

/// One run of `what`.
fn record_run(what: &str) {
    RUNS.fetch_add(1, Ordering::Relaxed);
    log(&format!("run {what}"));
}

/// Run `trial` until `valid` says its result is valid, three times at most; the first valid
/// result, or a panic with `why` of the last one. Counts the runs and retries (see the module).
pub fn until_valid<T>(what: &str, mut trial: impl FnMut() -> T, valid: impl Fn(&T) -> bool, why: impl Fn(&T) -> String) -> T {
    let mut r = trial();
    record_run(what);
    for _ in 0..2 {
        if valid(&r) {
            break;
        }
        let reason = why(&r);
        eprintln!("{what}: invalid, again: {reason}");
        log(&format!("retry {what}: {reason}"));
        record_retry(what);
        r = trial();
        record_run(what);
    }
    assert!(valid(&r), "{what}: invalid three times in a row: {}", why(&r));
    r
}

/// Retries a test process may need whatever its number of trials.
const FREE_RETRIES: u64 = 3;

/// Count one retry; panic when this process has needed far too many (more than one per two
/// runs, after the first [`FREE_RETRIES`]; the suite's one-in-ten rule is scripts/test.sh's).
fn record_retry(what: &str) {
    let retries = RETRIES.fetch_add(1, Ordering::Relaxed) + 1;
    let runs = RUNS.load(Ordering::Relaxed);
    assert!(
        retries <= FREE_RETRIES.max(runs / 2),
        "{what}: {retries} retries of invalid trials in {runs} trials of this test process: more than one in two \
         (after {FREE_RETRIES} free ones); the tester's timing got worse, or the machine is too busy to judge it"
    );
}

/// The counts so far: (trials run, retries).
pub fn counts() -> (u64, u64) {
    (RUNS.load(Ordering::Relaxed), RETRIES.load(Ordering::Relaxed))
}
