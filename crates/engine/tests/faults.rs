//! Faults a trial must survive over the `mem` backend: a backend that takes nothing, a port
//! that breaks in the middle, a receive queue that overflows, an abort from outside, a CPU plan
//! that puts everything on one core. Each ends in an invalid result or an error within a
//! bounded time, never a hang and never a pass.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use xlat_engine::{CpuPlan, EngineError, PdvSpec, Tester, TrialSpec};
use xlat_io::mem::{pair, Impairment, MemPort};
mod common;

use common::serial;
use xlat_traffic::IpVersion;

fn setup() -> xlat_traffic::Setup {
    common::setup(IpVersion::V4, true, true)
}

/// A tester on a mem pair holding `capacity` frames per direction, and the two wires
/// (forward, reverse).
fn tester(capacity: usize, cpus: CpuPlan) -> (Tester<MemPort>, xlat_io::mem::Wire, xlat_io::mem::Wire) {
    let (l, r) = pair(capacity);
    let (fw, rw) = (l.tx_wire(), r.tx_wire());
    (Tester::new(setup(), l, r, cpus).unwrap(), fw, rw)
}

/// The longest a trial of `spec` may take: the sender's give-up (0.5 s after the limit), the
/// timeout, the hard margin (0.5 s), the start (0.05 s) and some slack for a busy machine.
fn bound(spec: &TrialSpec) -> Duration {
    Duration::from_secs_f64(spec.duration_s * 1.00001 + 0.5 + spec.timeout_ms as f64 / 1000.0 + 0.5 + 0.05 + 1.0)
}

#[test]
fn a_backend_that_takes_nothing_ends_the_trial_invalid_in_bounded_time() {
    let _g = serial();
    let (mut t, fw, _) = tester(1 << 16, CpuPlan::default());
    fw.set_impairment(Impairment {
        refuse_tx: true,
        ..Default::default()
    });
    let spec = TrialSpec::new(84, 10_000, 1.0, 200);
    let start = Instant::now();
    let r = t.run_trial(&spec).unwrap();
    assert!(start.elapsed() < bound(&spec), "took {:?}", start.elapsed());
    assert!(!r.valid);
    assert!(
        r.invalid_reasons.iter().any(|m| m.starts_with("Forward sending stopped")),
        "{:?}",
        r.invalid_reasons
    );
    let f = r.forward.unwrap();
    assert_eq!(f.counts.sent, 0);
    // The other direction is not affected.
    assert_eq!(r.reverse.unwrap().counts.sent, 10_000);
}

#[test]
fn a_port_that_breaks_in_the_middle_ends_the_trial_with_an_error_for_all_workers() {
    let _g = serial();
    let (mut t, fw, _) = tester(1 << 16, CpuPlan::default());
    let spec = TrialSpec::new(84, 10_000, 3.0, 200);
    let start = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(700));
            fw.set_impairment(Impairment {
                broken: true,
                ..Default::default()
            });
        });
        let e = t.run_trial(&spec).unwrap_err();
        assert!(e.to_string().contains("broken"), "{e}");
    });
    // Well before the trial's own end: the failure stops every worker at once.
    assert!(start.elapsed() < Duration::from_millis(2500), "took {:?}", start.elapsed());
}

#[test]
fn frames_the_tester_drops_on_receive_make_the_trial_invalid_not_lossy() {
    let _g = serial();
    // A wire of 4 frames: a burst of 32 overflows the receiving port's queue at once.
    let (mut t, _, _) = tester(4, CpuPlan::default());
    let spec = TrialSpec::new(84, 50_000, 0.5, 100);
    let r = t.run_trial(&spec).unwrap();
    assert!(!r.valid);
    let dropped: u64 = r.directions().map(|(_, d)| d.counts.tester_rx_dropped).sum();
    assert!(dropped > 0);
    assert!(
        r.invalid_reasons.iter().any(|m| m.contains("the tester itself dropped")),
        "{:?}",
        r.invalid_reasons
    );
    for (_, d) in r.directions() {
        // What the tester dropped is what went missing (nothing else lost frames here).
        assert_eq!(d.counts.lost, d.counts.tester_rx_dropped);
    }
}

#[test]
fn the_abort_flag_ends_a_running_trial_at_once_and_refuses_the_next() {
    let _g = serial();
    let (mut t, _, _) = tester(1 << 16, CpuPlan::default());
    let flag = t.abort_flag();
    let spec = TrialSpec::new(84, 10_000, 5.0, 200);
    let start = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(500));
            flag.store(true, Ordering::Relaxed);
        });
        assert!(matches!(t.run_trial(&spec), Err(EngineError::Interrupted)));
    });
    assert!(start.elapsed() < Duration::from_millis(2000), "took {:?}", start.elapsed());
    assert!(matches!(t.run_trial(&spec), Err(EngineError::Interrupted)));
}

#[test]
fn all_roles_on_one_core_count_exactly() {
    let _g = serial();
    let one = CpuPlan {
        left_send: Some(0),
        left_recv: Some(0),
        right_send: Some(0),
        right_recv: Some(0),
        queues: 1,
        dut: Vec::new(),
    };
    let (mut t, fw, _) = tester(1 << 16, one);
    let drop: std::collections::HashSet<u64> = [5u64, 600, 1999].into_iter().map(|s| (1 << 56) | s).collect();
    fw.set_impairment(Impairment {
        drop,
        ..Default::default()
    });
    let spec = TrialSpec::new(84, 10_000, 0.2, 100);
    let r = t.run_trial(&spec).unwrap();
    let f = r.forward.unwrap();
    assert_eq!(
        (f.counts.sent, f.counts.received, f.counts.lost, f.last_lost_seq),
        (2000, 1997, 3, Some(1999))
    );
    let rv = r.reverse.unwrap();
    assert_eq!((rv.counts.sent, rv.counts.received, rv.counts.lost), (2000, 2000, 0));
}

#[test]
fn pdv_is_infinite_when_more_than_a_thousandth_is_lost() {
    let _g = serial();
    let (mut t, fw, _) = tester(1 << 16, CpuPlan::default());
    // 3 of 2000 lost (0.15 %) forward; nothing lost in reverse.
    let drop: std::collections::HashSet<u64> = [10u64, 20, 30].into_iter().map(|s| (1 << 56) | s).collect();
    fw.set_impairment(Impairment {
        drop,
        ..Default::default()
    });
    let mut spec = TrialSpec::new(84, 10_000, 0.2, 100);
    spec.pdv = Some(PdvSpec {
        frame_timeout_ms: 0,
        exact: true,
    });
    let r = t.run_trial(&spec).unwrap();
    // Every lost frame is recorded as an infinite delay (the results crate's PDV is then
    // infinite: its 99.9th percentile is a lost frame).
    let f = r.forward.unwrap().pdv.unwrap();
    assert_eq!((f.delays.count(), f.delays.lost()), (2000, 3));
    assert!(f.ipdv_infinite);
    let rv = r.reverse.unwrap().pdv.unwrap();
    assert_eq!((rv.delays.count(), rv.delays.lost()), (2000, 0));
    assert!(!rv.ipdv_infinite);
    // Each frame has its own transmit stamp: the skew from the burst's start is measured.
    assert!(rv.burst_stamp_skew_max_ns >= rv.burst_stamp_skew_mean_ns);
}

#[test]
fn a_frame_longer_than_the_port_carries_is_refused_before_sending() {
    let _g = serial();
    let (mut l, r) = pair(1 << 16);
    l.set_mtu(1500);
    let mut t = Tester::new(setup(), l, r, CpuPlan::default()).unwrap();
    // 1538 (IPv6 size) makes 1514-byte IPv4 frames without FCS: exactly what an MTU of 1500
    // carries; one more byte is refused before anything is sent.
    let r = t.run_trial(&TrialSpec::new(1538, 1000, 0.1, 100)).unwrap();
    assert_eq!(r.forward.unwrap().counts.sent, 100);
    let e = t.run_trial(&TrialSpec::new(1539, 1000, 0.1, 100)).unwrap_err();
    assert!(matches!(e, EngineError::FrameTooLong { len: 1515, max: 1514, .. }), "{e}");
    assert!(e.to_string().contains("carries at most 1514 bytes"), "{e}");
}
