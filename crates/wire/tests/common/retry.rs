//! The one retry rule of every test that judges a trial by the tester's own timing (sending on
//! time, phase 1 on time, a validation): included by `#[path]` from each test crate that needs
//! it (test crates cannot share code otherwise).
//!
//! On a shared machine another process may take the cores and make a trial invalid, which the
//! tester correctly reports; such a trial is run again, three times in all. But a retry is
//! not free: every retry is counted per test process, and a process that needed more than one
//! retry per ten trials (plus one) fails, so that a change that makes trials invalid more often
//! fails a test instead of hiding behind retries. Nothing here retries a loss or an error.

use std::sync::atomic::{AtomicU64, Ordering};

static RUNS: AtomicU64 = AtomicU64::new(0);
static RETRIES: AtomicU64 = AtomicU64::new(0);

/// Run `trial` until `valid` says its result is valid, three times at most; the first valid
/// result, or a panic with `why` of the last one. Counts the runs and retries (see the module).
pub fn until_valid<T>(what: &str, mut trial: impl FnMut() -> T, valid: impl Fn(&T) -> bool, why: impl Fn(&T) -> String) -> T {
    let mut r = trial();
    RUNS.fetch_add(1, Ordering::Relaxed);
    for _ in 0..2 {
        if valid(&r) {
            break;
        }
        eprintln!("{what}: invalid, again: {}", why(&r));
        record_retry(what);
        r = trial();
        RUNS.fetch_add(1, Ordering::Relaxed);
    }
    assert!(valid(&r), "{what}: invalid three times in a row: {}", why(&r));
    r
}

/// Count one retry; panic when this process has needed too many (more than one per ten runs,
/// plus one).
fn record_retry(what: &str) {
    let retries = RETRIES.fetch_add(1, Ordering::Relaxed) + 1;
    let runs = RUNS.load(Ordering::Relaxed);
    assert!(
        retries <= 1 + runs / 10,
        "{what}: {retries} retries of invalid trials in {runs} trials of this test process: more than one in ten \
         (plus one); the tester's timing got worse, or the machine is too busy to judge it"
    );
}

/// The counts so far: (trials run, retries).
pub fn counts() -> (u64, u64) {
    (RUNS.load(Ordering::Relaxed), RETRIES.load(Ordering::Relaxed))
}
