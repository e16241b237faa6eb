//! Trials judged by what the sender's lag did (docs/validity.md): a pause beyond the lag bound
//! harms nothing by itself; the catch-up after it is bounded (a token bucket of the bound in
//! frames at twice the rate); frames lost in a catch-up make the trial invalid by rule
//! `lag_harm`, not the DUT's loss; tags sent in a catch-up are left out of the latency. The
//! pause is forced (the `mem` port's transmit call sleeps once), and the DUT is the `mem`
//! wire's queue of a known rate and depth, so each answer is set by configuration. A host
//! pause of its own adds to the forced one: the tests that a second pause could change run
//! through the retry rule.

use std::time::Duration;
use xlat_engine::{CpuPlan, Tester, TrialSpec};
use xlat_io::mem::{pair, Impairment, Wire};
use xlat_traffic::IpVersion;
use xlat_trial::{LatencySpec, Rule, TrialReport};
mod common;

use common::{serial, setup};

const RATE: u64 = 10_000;
const PAUSE: Duration = Duration::from_millis(60);

/// A tester sending forward only over a mem wire, and that wire.
fn tester() -> (Tester<xlat_io::mem::MemPort>, Wire) {
    let (l, r) = pair(1 << 16);
    let wire = l.tx_wire();
    let t = Tester::new(setup(IpVersion::V4, true, false), l, r, CpuPlan::default()).expect("tester");
    (t, wire)
}

/// 1 s at 10,000 frames/s with a lag bound of `bound` frames.
fn spec(bound: u64) -> TrialSpec {
    TrialSpec {
        max_send_lag_frames: Some(bound),
        ..TrialSpec::new(84, RATE, 1.0, 200)
    }
}

/// The transmit call pauses 60 ms once, after 3,000 frames; the DUT queue as given.
fn pause(queue: Option<(f64, u64)>) -> Impairment {
    Impairment {
        stall_tx: Some((3_000, PAUSE)),
        queue,
        ..Default::default()
    }
}

fn run(t: &mut Tester<xlat_io::mem::MemPort>, wire: &Wire, spec: &TrialSpec, queue: Option<(f64, u64)>) -> TrialReport {
    wire.set_impairment(pause(queue));
    t.run_trial(spec).expect("trial")
}

#[test]
fn a_lossless_trial_passes_whatever_its_lag() {
    let _g = serial();
    let (mut t, wire) = tester();
    // A 60 ms pause against a bound of 10 frames (1 ms): six times the bound, nothing lost.
    let r = xlat_testkit::retry::until_valid(
        "a lossless trial with a pause far beyond the bound",
        || run(&mut t, &wire, &spec(10), None),
        |r| r.valid,
        |r| format!("{:?}", r.invalid_reasons),
    );
    let f = r.forward.expect("forward");
    assert_eq!((f.counts.sent, f.counts.received, f.counts.lost), (10_000, 10_000, 0));
    assert!(f.counts.max_lag_ns >= 50_000_000, "{f:?}");
    assert!(f.counts.catch_ups >= 1 && f.counts.lost_in_catch_up == 0, "{f:?}");
    assert_eq!(r.catch_up.map(|c| (c.burst_frames, c.percent)), Some((32, 100)), "a burst at least");
}

#[test]
fn a_catch_up_that_overflows_the_duts_queue_is_the_testers_suspicion_not_the_duts_loss() {
    let _g = serial();
    let (mut t, wire) = tester();
    // The DUT forwards 13,000 frames/s from a queue of 200: at 10,000 frames/s it never loses
    // a frame on schedule, nor in a catch-up of up to 200 frames (the bound); the 600 frames a
    // 60 ms pause leaves behind, caught up at 20,000 frames/s, overflow it.
    let queue = Some((13_000.0, 200));
    let r = xlat_testkit::retry::until_valid(
        "a trial whose catch-up overflows the DUT's queue",
        || run(&mut t, &wire, &spec(200), queue),
        // What this test is about: every loss inside a catch-up (a second pause of the host's
        // under the bound loses nothing here; one beyond it opens a window of its own).
        |r| {
            r.forward
                .as_ref()
                .is_some_and(|f| f.counts.lost > 0 && f.counts.lost_in_catch_up == f.counts.lost)
        },
        |r| format!("{:?} {:?}", r.invalid_reasons, r.forward.as_ref().map(|f| &f.counts)),
    );
    let f = r.forward.as_ref().expect("forward");
    assert!(!r.valid, "{r:?}");
    assert!(r.invalid_rules.contains(&Rule::LagHarm), "{:?}", r.invalid_rules);
    assert!(r.only_lag_harmed() || r.invalid_rules.iter().all(|x| *x == Rule::LagHarm || *x == Rule::EndOfSending));
    assert!(
        r.invalid_reasons
            .iter()
            .any(|w| w.contains("were sent while the sender caught up") && w.contains("tester.max_send_lag_frames")),
        "{:?}",
        r.invalid_reasons
    );
    assert_eq!(
        wire.counters().dropped,
        f.counts.lost,
        "the DUT's queue dropped what the trial lost"
    );
}

#[test]
fn the_catch_up_never_exceeds_its_bound() {
    let _g = serial();
    let (mut t, wire) = tester();
    // A DUT exactly as fast as the catch-up pace (twice the rate) with a queue of the bound
    // plus one transmit burst: a catch-up within its bound loses nothing there, however long
    // the pause. (siitperf's catch-up, every late frame at once, loses ~450 of the 600.)
    let bound = 100;
    let queue = Some((2.0 * RATE as f64, bound + 32));
    let r = xlat_testkit::retry::until_valid(
        "a catch-up within its bound",
        || run(&mut t, &wire, &spec(bound), queue),
        |r| r.valid,
        |r| format!("{:?}", r.invalid_reasons),
    );
    let f = r.forward.expect("forward");
    assert_eq!((f.counts.lost, wire.counters().dropped), (0, 0), "{f:?}");
    assert!(f.counts.max_lag_ns >= 50_000_000, "the pause happened: {f:?}");
    assert!(f.counts.catch_up_burst <= bound + 32, "{f:?}");
}

#[test]
fn latency_tags_sent_in_a_catch_up_are_left_out_and_counted() {
    let _g = serial();
    let (mut t, wire) = tester();
    // 1,000 tags, one every 10 frames from the first: the pause leaves ~600 frames behind and
    // their catch-up at twice the rate takes ~60 ms more, so ~120 tags fall in the window.
    let spec = TrialSpec {
        latency: Some(LatencySpec { delay_s: 0.0, tags: 1_000 }),
        ..spec(10)
    };
    let r = xlat_testkit::retry::until_valid(
        "a latency trial with a pause",
        || run(&mut t, &wire, &spec, None),
        |r| r.valid,
        |r| format!("{:?}", r.invalid_reasons),
    );
    let f = r.forward.expect("forward");
    let left_out = f.counts.untimed_catch_up;
    assert!((50..=500).contains(&left_out), "{f:?}");
    assert_eq!(f.latency_ns.len() as u64 + left_out, 1_000);
    // The 60 ms pause is in none of the delays kept (each is the DUT's: microseconds here).
    assert!(f.latency_ns.iter().all(|&ns| ns < 20_000_000), "{:?}", f.latency_ns.iter().max());
    // With 500 tags, leaving any out leaves fewer than RFC 8219's 500: invalid, saying why.
    let few = TrialSpec {
        latency: Some(LatencySpec { delay_s: 0.0, tags: 500 }),
        ..spec.clone()
    };
    let r = run(&mut t, &wire, &few, None);
    assert!(r.invalid_rules.contains(&Rule::TooFewTimed), "{:?}", r.invalid_reasons);
}

#[test]
fn pdv_frames_sent_in_a_catch_up_are_left_out_and_counted() {
    let _g = serial();
    let (mut t, wire) = tester();
    // Every frame timed (exact delays); the ~1,200 frames of the pause's window are left out,
    // 12 % of 10,000: under the half that makes a PDV trial invalid.
    let spec = TrialSpec {
        pdv: Some(xlat_trial::PdvSpec {
            frame_timeout_ms: 0,
            exact: true,
        }),
        ..spec(10)
    };
    let r = xlat_testkit::retry::until_valid(
        "a PDV trial with a pause",
        || run(&mut t, &wire, &spec, None),
        |r| r.valid,
        |r| format!("{:?}", r.invalid_reasons),
    );
    let f = r.forward.expect("forward");
    let p = f.pdv.as_ref().expect("pdv");
    assert!(p.untimed_catch_up >= 300 && p.untimed_catch_up <= 5_000, "{f:?}");
    assert_eq!(f.counts.untimed_catch_up, p.untimed_catch_up);
    assert_eq!(p.timed + p.untimed_catch_up, 10_000, "every frame timed or left out");
    // The 60 ms pause is in none of the delays kept.
    let xlat_trial::delay::DelayStore::Exact { values, .. } = p.delays.store() else {
        panic!("exact delays asked for")
    };
    assert!(values.iter().all(|&ns| ns < 20_000_000), "{:?}", values.iter().max());
}
