//! The sender's lag behind its schedule: measured in every trial (the most, the 99.9th
//! percentile, the stalls over 100 us) and, with a bound, its catch-ups counted; a lag that lost
//! nothing harms nothing. The stall is forced: the `mem` port's transmit call sleeps 20 ms once.

use std::time::Duration;
use xlat_engine::{CpuPlan, Tester, TrialSpec};
use xlat_io::mem::{pair, Impairment};
use xlat_traffic::IpVersion;
mod common;

use common::{serial, setup};

const STALL: Duration = Duration::from_millis(20);

fn stall_after(frames: u64) -> Impairment {
    Impairment {
        stall_tx: Some((frames, STALL)),
        ..Default::default()
    }
}

#[test]
fn a_forced_stall_is_measured_and_harms_nothing_under_a_bound() {
    let _g = serial();
    let (l, r) = pair(1 << 16);
    let wire = l.tx_wire();
    let mut t = Tester::new(setup(IpVersion::V4, true, false), l, r, CpuPlan::default()).expect("tester");
    let spec = TrialSpec::new(84, 10_000, 1.0, 100);
    // Without a bound only the end of sending is judged: the sender catches up and the trial
    // is valid (judged by the tester's timing: through the retry rule).
    let r = xlat_testkit::retry::until_valid(
        "a trial with a 20 ms stall and no bound",
        || {
            wire.set_impairment(stall_after(3_000));
            t.run_trial(&spec).expect("trial")
        },
        |r| r.valid,
        |r| format!("{:?}", r.invalid_reasons),
    );
    let f = r.forward.expect("forward");
    assert_eq!((f.counts.sent, f.counts.received), (10_000, 10_000));
    // The first frame after the stalled burst was due up to one frame interval (100 us at
    // 10,000 frames/s) after that burst left: its lag is the stall less up to that interval.
    let interval_ns = 1_000_000_000 / 10_000;
    assert!(
        f.counts.max_lag_ns + interval_ns >= STALL.as_nanos() as u64,
        "max lag {} ns",
        f.counts.max_lag_ns
    );
    assert!(f.counts.stalls >= 1, "{f:?}");
    assert!(f.counts.lag_p999_ns <= f.counts.max_lag_ns && f.counts.lag_p999_ns > 0, "{f:?}");
    // With a bound of 1 ms (or of 100 frames: 10 ms here) the same stall opens a catch-up
    // window, is recorded with the bound the catch-up kept, and harms nothing: nothing was lost
    // (tests/catch_up.rs has the trials it does harm).
    for (ns, frames) in [(Some(1_000_000), None), (None, Some(100))] {
        let bounded = TrialSpec {
            max_send_lag_ns: ns,
            max_send_lag_frames: frames,
            ..spec.clone()
        };
        let r = xlat_testkit::retry::until_valid(
            "a trial with a 20 ms stall under a bound",
            || {
                wire.set_impairment(stall_after(3_000));
                t.run_trial(&bounded).expect("trial")
            },
            |r| r.valid,
            |r| format!("{:?}", r.invalid_reasons),
        );
        let f = r.forward.expect("forward");
        assert!(f.counts.max_lag_ns >= 19_000_000 && f.counts.catch_ups >= 1, "{f:?}");
        assert_eq!((f.counts.lost, f.counts.lost_in_catch_up), (0, 0));
        let burst = if ns.is_some() { 32 } else { 100 };
        assert_eq!(
            r.catch_up.map(|c| c.burst_frames),
            Some(burst),
            "the bound in frames, at least a burst"
        );
    }
}

#[test]
fn a_trial_without_a_stall_reports_its_lag_and_passes_a_generous_bound() {
    let _g = serial();
    let (l, r) = pair(1 << 16);
    let mut t = Tester::new(setup(IpVersion::V6, true, true), l, r, CpuPlan::default()).expect("tester");
    let spec = TrialSpec {
        max_send_lag_ns: Some(1_000_000_000),
        ..TrialSpec::new(84, 20_000, 0.5, 100)
    };
    let r = xlat_testkit::retry::until_valid(
        "a trial under a 1 s lag bound",
        || t.run_trial(&spec).expect("trial"),
        |r| r.valid,
        |r| format!("{:?}", r.invalid_reasons),
    );
    for (_, d) in r.directions() {
        assert!(d.counts.lag_p999_ns <= d.counts.max_lag_ns, "{d:?}");
        assert!(d.counts.max_lag_ns < 1_000_000_000, "{d:?}");
    }
}
