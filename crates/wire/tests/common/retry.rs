//! The one retry rule of every test that judges a trial by the tester's own timing (sending on
//! time, phase 1 on time, a validation): included by `#[path]` from each test crate that needs
//! it (test crates cannot share code otherwise).
//!
//! On a shared machine another process may take the cores and make a trial invalid, which the
//! tester correctly reports; such a trial is run again, three times in all. But a retry is
//! not free: every retry is counted per test process, and a process that needed more than one
//! retry per four trials fails (the first three retries of a process are free), so that a
//! change that makes one trial in three invalid fails a test instead of hiding behind retries.
//! (One in ten was tried: a phase of 0.1 s at 20,000 frames/s must end within 50 us of its
//! schedule, and on the shared 2-core CI machine the engine's stateful tests needed 2 retries
//! in 8 trials.) Nothing here retries a loss or an error.

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

/// Retries a test process may need whatever its number of trials.
const FREE_RETRIES: u64 = 3;

/// Count one retry; panic when this process has needed too many (more than one per four runs,
/// after the first [`FREE_RETRIES`]).
fn record_retry(what: &str) {
    let retries = RETRIES.fetch_add(1, Ordering::Relaxed) + 1;
    let runs = RUNS.load(Ordering::Relaxed);
    assert!(
        retries <= FREE_RETRIES.max(runs / 4),
        "{what}: {retries} retries of invalid trials in {runs} trials of this test process: more than one in four \
         (after {FREE_RETRIES} free ones); the tester's timing got worse, or the machine is too busy to judge it"
    );
}

/// The counts so far: (trials run, retries).
pub fn counts() -> (u64, u64) {
    (RUNS.load(Ordering::Relaxed), RETRIES.load(Ordering::Relaxed))
}
