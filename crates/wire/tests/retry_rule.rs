//! The shared retry rule (tests/common/retry.rs) retries an invalid trial, at most three runs,
//! and fails a test process that needed more than one retry per four trials after its first
//! three. One test: the counts are per process.

#[path = "common/retry.rs"]
mod retry;

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
    // A fourth retry in 15 runs: more than one in four after the free ones.
    let e = std::panic::catch_unwind(|| valid_at("again", 2)).expect_err("too many retries");
    let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("more than one in four"), "{msg}");
}
