//! The shared retry rule (`xlat_testkit::retry`) retries an invalid trial, at most three runs,
//! and fails a test process that needed more than one retry per two trials after its first
//! three (the suite's one-in-ten rule is scripts/test.sh's, from XLAT_RETRY_LOG). One test:
//! the counts are per process.

use xlat_testkit::retry;

/// A trial that is valid at its `valid_at`-th run.
fn valid_at(what: &str, valid_at: u32) -> u32 {
    let mut n = 0;
    retry::until_valid(
        what,
        || {
            n += 1;
            n
        },
        |x| *x == valid_at,
        |x| x.to_string(),
    )
}

#[test]
fn retries_are_counted_and_too_many_fail() {
    // These retries are made up: they stay out of the suite's count (scripts/test.sh). The
    // only test of this process, so no other thread reads the environment meanwhile.
    std::env::remove_var("XLAT_RETRY_LOG");
    for _ in 0..9 {
        assert_eq!(valid_at("valid", 1), 1);
    }
    assert_eq!(valid_at("second", 2), 2);
    assert_eq!(retry::counts(), (11, 1));
    // Invalid three times: a failure naming the last reason (two more retries: 3, free).
    let e = std::panic::catch_unwind(|| retry::until_valid("never", || 0, |_| false, |_| "late".into()))
        .expect_err("three invalid runs must fail");
    let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("invalid three times in a row: late"), "{msg}");
    assert_eq!(retry::counts(), (14, 3));
    // Trials that each need two retries: within ten of them retries pass half of the runs.
    let e = std::panic::catch_unwind(|| {
        for _ in 0..10 {
            valid_at("again", 3);
        }
    })
    .expect_err("too many retries");
    let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("more than one in two"), "{msg}");
}
