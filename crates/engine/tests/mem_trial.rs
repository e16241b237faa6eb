//! Whole trials over the in-process `mem` backend with injected loss, duplication and
//! reordering: the counts must match what the wire did, exactly.

use std::collections::HashSet;
use xlat_engine::{CpuPlan, LatencySpec, Tester, TrialSpec};
use xlat_io::mem::{pair, Impairment, MemPort};
use xlat_io::Port;
mod common;

use common::{serial, setup};
use xlat_traffic::{Direction, DirectionStream, IpVersion, Setup};

/// The 64-bit field of frame `seq` in the tester's first trial (trial tag 1 in the top byte).
fn first_trial_field(seq: u64) -> u64 {
    (1 << 56) | seq
}

fn tester(s: Setup, fwd: Impairment, rev: Impairment) -> Tester<MemPort> {
    let (l, r) = pair(1 << 16);
    l.tx_wire().set_impairment(fwd);
    r.tx_wire().set_impairment(rev);
    Tester::new(s, l, r, CpuPlan::default()).unwrap()
}

#[test]
fn clean_bidirectional_trial_is_valid_and_lossless() {
    let _g = serial();
    let mut t = tester(setup(IpVersion::V4, true, true), Impairment::default(), Impairment::default());
    // This machine may be shared: a trial made invalid by another process taking the cores is
    // reported as invalid (correctly); three tries must give one valid trial.
    let spec = TrialSpec::new(84, 20_000, 1.0, 100);
    let r = xlat_testkit::retry::until_valid(
        "trial",
        || t.run_trial(&spec).unwrap(),
        |r| r.valid,
        |r| format!("{:?}", r.invalid_reasons),
    );
    for (_, d) in r.directions() {
        assert_eq!(
            (
                d.counts.sent,
                d.counts.received,
                d.counts.lost,
                d.counts.duplicates,
                d.counts.reordered,
                d.counts.unexpected
            ),
            (20_000, 20_000, 0, 0, 0, 0)
        );
        assert!(
            d.counts.achieved_rate > 19_000.0 && d.counts.achieved_rate < 21_000.0,
            "{}",
            d.counts.achieved_rate
        );
    }
    assert_eq!(r.directions().count(), 2);
}

#[test]
fn injected_losses_duplicates_and_reordering_are_counted_apart() {
    let _g = serial();
    let drop: HashSet<u64> = [0u64, 17, 4_000, 9_999].iter().map(|s| first_trial_field(*s)).collect();
    let dup: HashSet<u64> = [5u64, 6, 4_000, 7_000].iter().map(|s| first_trial_field(*s)).collect();
    let delay: HashSet<u64> = [100u64, 200, 300].iter().map(|s| first_trial_field(*s)).collect();
    let fwd = Impairment {
        drop,
        duplicate: dup,
        delay_one: delay,
        drop_all: false,
        ..Default::default()
    };
    let mut t = tester(setup(IpVersion::V6, true, true), fwd, Impairment::default());
    let r = t.run_trial(&TrialSpec::new(84, 10_000, 1.0, 100)).unwrap();
    let f = r.forward.unwrap();
    // 4 dropped (seq 4000 is both dropped and "duplicated": a dropped frame is not copied).
    assert_eq!(f.counts.sent, 10_000);
    assert_eq!(f.counts.lost, 4);
    assert_eq!(f.counts.received, 9_996);
    assert_eq!(f.counts.duplicates, 3, "a duplicate is never counted as received");
    assert_eq!(f.counts.reordered, 3);
    let b = r.reverse.unwrap();
    assert_eq!(
        (
            b.counts.sent,
            b.counts.received,
            b.counts.lost,
            b.counts.duplicates,
            b.counts.reordered
        ),
        (10_000, 10_000, 0, 0, 0)
    );
}

#[test]
fn duplicates_do_not_hide_losses() {
    let _g = serial();
    let drop: HashSet<u64> = (0..50u64).map(first_trial_field).collect();
    let dup: HashSet<u64> = (100..150u64).map(first_trial_field).collect();
    let mut t = tester(
        setup(IpVersion::V4, true, false),
        Impairment {
            drop,
            duplicate: dup,
            ..Default::default()
        },
        Impairment::default(),
    );
    let r = t.run_trial(&TrialSpec::new(84, 5_000, 1.0, 50)).unwrap();
    let f = r.forward.unwrap();
    assert_eq!((f.counts.received, f.counts.lost, f.counts.duplicates), (4_950, 50, 50));
    assert!(r.reverse.is_none());
}

#[test]
fn a_dut_that_forwards_nothing_loses_everything_and_stragglers_do_not_leak_into_the_next_trial() {
    let _g = serial();
    let mut t = tester(
        setup(IpVersion::V4, true, true),
        Impairment {
            drop_all: true,
            ..Default::default()
        },
        Impairment::default(),
    );
    let r = t.run_trial(&TrialSpec::new(84, 2_000, 0.5, 50)).unwrap();
    assert_eq!(r.forward.as_ref().unwrap().counts.lost, 1_000);
    assert_eq!(r.reverse.as_ref().unwrap().counts.lost, 0);
    let r2 = t.run_trial(&TrialSpec::new(84, 2_000, 0.5, 50)).unwrap();
    assert_eq!(r2.forward.as_ref().unwrap().counts.received, 0);
    assert_eq!(r2.reverse.as_ref().unwrap().counts.received, 1_000);
}

/// A test frame with a trial tag this tester never used (another tester sending into the same
/// port) makes the trial invalid and is counted apart; one with the tag of this tester's own
/// earlier trial (a straggler) is only unexpected.
#[test]
fn another_testers_frames_make_the_trial_invalid_and_own_stragglers_do_not() {
    let _g = serial();
    let s = setup(IpVersion::V4, true, false);
    for (tag, foreign) in [(1u64, false), (77, true)] {
        let (l, r) = pair(1 << 16);
        let wire = l.tx_wire();
        let stream = DirectionStream::new(&s, Direction::Forward, 84, l.mac(), r.mac()).unwrap();
        let mut frame = vec![0u8; 2048];
        let n = stream.write_frame_field(5, (tag << 56) | 5, &mut frame);
        frame.truncate(n);
        let mut t = Tester::new(s.clone(), l, r, CpuPlan::default()).unwrap();
        // Trial 1 (tag 1) first, so that tag 1 is this tester's own.
        let spec = TrialSpec::new(84, 2_000, 0.5, 50);
        t.run_trial(&spec).unwrap();
        // In the middle of trial 2 (tag 2), the frame arrives.
        let r2 = std::thread::scope(|sc| {
            sc.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(200));
                wire.inject(&frame);
            });
            t.run_trial(&spec).unwrap()
        });
        let f = r2.forward.as_ref().unwrap();
        assert_eq!(
            (f.counts.sent, f.counts.received, f.counts.unexpected, f.counts.foreign),
            (1_000, 1_000, 1, u64::from(foreign)),
            "tag {tag}"
        );
        let named = r2.invalid_reasons.iter().any(|w| w.contains("another tester"));
        assert_eq!(named, foreign, "tag {tag}: {:?}", r2.invalid_reasons);
    }
}

#[test]
fn latency_tags_are_measured_and_a_lost_tag_is_the_largest() {
    let _g = serial();
    // Tag 0 is frame 1000 (delay 0.5 s at 2000 frames/s); drop it in the forward direction.
    let drop: HashSet<u64> = [first_trial_field(1000)].into();
    let mut t = tester(
        setup(IpVersion::V4, true, true),
        Impairment {
            drop,
            ..Default::default()
        },
        Impairment::default(),
    );
    let mut spec = TrialSpec::new(84, 2_000, 1.0, 50);
    spec.latency = Some(LatencySpec { delay_s: 0.5, tags: 100 });
    let r = t.run_trial(&spec).unwrap();
    let f = r.forward.unwrap();
    assert_eq!(f.latency_ns.len(), 100);
    assert_eq!(f.latency_ns[0], u64::MAX);
    assert!(
        f.latency_ns[1..].iter().all(|l| *l < 50_000_000),
        "in-process latency is far below 50 ms"
    );
    let b = r.reverse.unwrap();
    assert!(b.latency_ns.iter().all(|l| *l != u64::MAX));
}

#[test]
fn pdv_times_every_received_frame_with_bounded_memory() {
    let _g = serial();
    let drop: HashSet<u64> = [first_trial_field(10)].into();
    let mut t = tester(
        setup(IpVersion::V4, true, true),
        Impairment {
            drop,
            ..Default::default()
        },
        Impairment::default(),
    );
    let mut spec = TrialSpec::new(84, 5_000, 1.0, 50);
    spec.pdv = Some(xlat_engine::PdvSpec {
        frame_timeout_ms: 0,
        exact: false,
    });
    let r = t.run_trial(&spec).unwrap();
    for (name, d) in r.directions() {
        let p = d.pdv.as_ref().unwrap_or_else(|| panic!("{name}: no PDV report"));
        assert_eq!(p.timed, d.counts.received, "{name}: every received frame is timed");
        assert_eq!(p.late, 0);
        assert!(!p.delays.is_exact() && p.delays.relative_error() > 0.0 && p.delays.relative_error() < 0.01);
        assert_eq!(p.delays.count(), d.counts.sent, "{name}: every frame sent is recorded");
        assert_eq!(p.delays.lost(), d.counts.lost);
        let json = serde_json::to_value(p).unwrap();
        assert!(json["delays"].is_object(), "{json}");
        assert!(p.ipdv.pairs() > 0);
    }
    // The exact mode keeps every delay.
    spec.pdv = Some(xlat_engine::PdvSpec {
        frame_timeout_ms: 0,
        exact: true,
    });
    let r = t.run_trial(&spec).unwrap();
    assert!(r.forward.unwrap().pdv.unwrap().delays.is_exact());
}

#[test]
fn a_rate_change_paces_both_phases_and_names_the_last_lost_frame() {
    let _g = serial();
    // 2000 frames/s for 1 s, then 1000 frames/s for 1 s: frame 2100 is due at 1.1 s.
    let drop: HashSet<u64> = [first_trial_field(500), first_trial_field(2100)].into();
    let mut t = tester(
        setup(IpVersion::V4, true, false),
        Impairment {
            drop,
            ..Default::default()
        },
        Impairment::default(),
    );
    let mut spec = TrialSpec::new(84, 2_000, 2.0, 50);
    spec.rate_change = Some(xlat_engine::RateChange { at_s: 1.0, rate: 1_000 });
    let r = t.run_trial(&spec).unwrap();
    let f = r.forward.unwrap();
    assert_eq!(f.counts.sent, 3_000);
    assert_eq!(f.counts.lost, 2);
    // The sequence number, not a time: the procedure knows the schedule.
    assert_eq!(f.last_lost_seq, Some(2100));
    assert!(f.send_duration_s > 1.99 && f.send_duration_s < 2.05, "{}", f.send_duration_s);
}
