//! Tests of `text.rs`.

use super::*;

#[test]
fn grouping() {
    assert_eq!(group(0), "0");
    assert_eq!(group(999), "999");
    assert_eq!(group(1000), "1,000");
    assert_eq!(group(7_161_269), "7,161,269");
}

#[test]
fn a_trial_as_a_line() {
    let mut t = TrialRecord {
        index: 3,
        phase: "search".into(),
        attempt: 2,
        frame_size: 84,
        rate: 100_000,
        duration_s: 10.0,
        frames: 1_000_000,
        valid: true,
        pass: Some(false),
        invalid_reasons: Vec::new(),
        invalid_rules: Vec::new(),
        tester_bound: false,
        possibly_tester: false,
        passed_at: None,
        forward: Some(DirectionCounts {
            sent: 1_000_000,
            received: 999_990,
            lost: 10,
            tester_rx_dropped: 1,
            ..DirectionCounts::default()
        }),
        reverse: None,
        preliminary: None,
        dut_hooks: Vec::new(),
        load: None,
    };
    assert_eq!(
        trial_line("throughput", "84 B ", &t),
        "throughput 84 B trial 3 search attempt 2: 100000 fps x 10.000 s: forward 999990/1000000 received \
         (tester dropped: tx 0, rx 1) -> fail"
    );
    t.pass = None;
    t.tester_bound = true;
    t.invalid_reasons = vec!["sending lagged".into()];
    assert!(trial_line("throughput", "", &t).ends_with("-> INVALID, tester-bound: the tester cannot send at this rate (sending lagged)"));
    assert_eq!(clock(3725.0), "1:02:05");
    assert_eq!(clock(7.4), "0:07");
    assert_eq!(clock(f64::NAN), "0:00");
}
