//! The shared retry rule (tests/common/retry.rs) retries an invalid trial, at most three runs,
//! and fails a test process that needed more than one retry per ten trials (plus one). One
//! test: the counts are per process.

#[path = "common/retry.rs"]
mod retry;

#[test]
fn retries_are_counted_and_too_many_fail() {
    // Nine valid trials, then one valid at the second run: one retry in eleven runs, allowed.
    for _ in 0..9 {
        assert_eq!(retry::until_valid("valid", || 1, |x| *x == 1, |x| x.to_string()), 1);
    }
    let mut n = 0;
    let r = retry::until_valid(
        "second",
        || {
            n += 1;
            n
        },
        |x| *x == 2,
        |x| x.to_string(),
    );
    assert_eq!((r, retry::counts()), (2, (11, 1)));
    // Invalid three times: a failure naming the last reason.
    let e = std::panic::catch_unwind(|| retry::until_valid("never", || 0, |_| false, |_| "late".into()))
        .expect_err("three invalid runs must fail");
    let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("retries of invalid trials") || msg.contains("invalid three times"),
        "{msg}"
    );
    // By now 2 + 1 retries in 12 + runs: more than 1 + runs / 10 fails at once.
    let e = std::panic::catch_unwind(|| {
        let mut k = 0;
        retry::until_valid(
            "again",
            || {
                k += 1;
                k
            },
            |x| *x == 2,
            |x| x.to_string(),
        )
    })
    .expect_err("too many retries");
    let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("more than one in ten"), "{msg}");
}
