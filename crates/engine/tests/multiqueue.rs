//! Several queues per port over the `mem` backend (its wire spreads flows among the receive
//! queues as RSS does): each direction's frames are dealt out among the senders, and the
//! receivers' counts merge to exactly what the wire did, the same as with one queue; frames of
//! different sending queues are never counted as reordered.

use std::collections::HashSet;
use xlat_engine::{CpuPlan, LatencySpec, PdvSpec, Tester, TrialReport, TrialSpec};
use xlat_io::mem::{pair, Impairment, MemPort};
use xlat_traffic::{IpVersion, PortField, Setup, Variation};
mod common;

use common::{serial, setup};

/// The 64-bit field of frame `seq` in the tester's first trial (trial tag 1 in the top byte).
fn first_trial_field(seq: u64) -> u64 {
    (1 << 56) | seq
}

/// RFC 4814 pseudorandom source and destination ports: many flows, spread over the queues.
fn pseudorandom_ports(mut s: Setup) -> Setup {
    for p in [&mut s.forward_ports, &mut s.reverse_ports] {
        p.sport = PortField {
            variation: Variation::Pseudorandom,
            ..p.sport
        };
        p.dport = PortField {
            variation: Variation::Pseudorandom,
            ..p.dport
        };
    }
    s
}

fn tester(s: Setup, queues: usize, fwd: Impairment) -> Tester<MemPort> {
    let (l, r) = pair(1 << 16);
    l.tx_wire().set_impairment(fwd);
    let cpus = CpuPlan {
        queues,
        ..CpuPlan::default()
    };
    Tester::new(s, l, r, cpus).unwrap()
}

/// A trial that is valid (this machine is shared: a trial made invalid by another process
/// taking the cores is retried, three tries in all).
fn valid_trial(t: &mut Tester<MemPort>, spec: &TrialSpec) -> TrialReport {
    xlat_testkit::retry::until_valid(
        "trial",
        || t.run_trial(spec).unwrap(),
        |r| r.valid,
        |r| format!("{:?}", r.invalid_reasons),
    )
}

/// [`valid_trial`] for a test whose impairments name frames of the tester's first trial
/// (`first_trial_field`): every attempt is the first trial of a fresh tester, so a retry's
/// frames carry the same trial tag as the first attempt's (another tag would match none).
fn valid_first_trial(make: impl Fn() -> Tester<MemPort>, spec: &TrialSpec) -> TrialReport {
    xlat_testkit::retry::until_valid(
        "first trial",
        || make().run_trial(spec).unwrap(),
        |r| r.valid,
        |r| format!("{:?}", r.invalid_reasons),
    )
}

/// (sent, received, lost, duplicates, reordered, unexpected) of a direction.
fn counts(r: &TrialReport, forward: bool) -> (u64, u64, u64, u64, u64, u64) {
    let d = if forward { r.forward.as_ref() } else { r.reverse.as_ref() }.expect("direction");
    (
        d.counts.sent,
        d.counts.received,
        d.counts.lost,
        d.counts.duplicates,
        d.counts.reordered,
        d.counts.unexpected,
    )
}

#[test]
fn two_queues_count_a_clean_bidirectional_trial_exactly_with_no_false_reordering() {
    let _g = serial();
    for v in [IpVersion::V4, IpVersion::V6] {
        let mut t = tester(pseudorandom_ports(setup(v, true, true)), 2, Impairment::default());
        assert_eq!(t.queues(), 2);
        let r = valid_trial(&mut t, &TrialSpec::new(84, 20_000, 1.0, 100));
        for fwd in [true, false] {
            assert_eq!(counts(&r, fwd), (20_000, 20_000, 0, 0, 0, 0), "{v:?} forward {fwd}");
        }
        let f = r.forward.unwrap();
        assert!(
            f.counts.achieved_rate > 19_000.0 && f.counts.achieved_rate < 21_000.0,
            "the queues together keep the rate: {}",
            f.counts.achieved_rate
        );
    }
}

#[test]
fn losses_and_duplicates_count_the_same_with_one_queue_and_with_three() {
    let _g = serial();
    let fields = |s: &[u64]| -> HashSet<u64> { s.iter().map(|q| first_trial_field(*q)).collect() };
    // Frames of every queue's chunks (64 frames each): 0 and 17 (queue 0), 64 and 100 (1),
    // 130 (2), 4,000 (queue 1) and the last frame.
    let imp = Impairment {
        drop: fields(&[0, 17, 64, 130, 4_000, 9_999]),
        duplicate: fields(&[5, 100, 4_000, 7_000, 9_998]),
        ..Default::default()
    };
    let spec = TrialSpec::new(84, 10_000, 1.0, 100);
    let mut results = Vec::new();
    for queues in [1, 3] {
        let make = || tester(pseudorandom_ports(setup(IpVersion::V4, true, false)), queues, imp.clone());
        let r = valid_first_trial(make, &spec);
        let f = r.forward.as_ref().unwrap();
        // 6 dropped (4,000 is dropped, so not copied); 4 copies, never counted as received.
        assert_eq!(
            (
                f.counts.sent,
                f.counts.received,
                f.counts.lost,
                f.counts.duplicates,
                f.counts.unexpected
            ),
            (10_000, 9_994, 6, 4, 0),
            "{queues} queues"
        );
        assert_eq!(f.counts.reordered, 0, "{queues} queues: nothing was reordered");
        assert_eq!(f.last_lost_seq, Some(9_999));
        assert!(r.reverse.is_none());
        results.push(counts(&r, true));
    }
    assert_eq!(results[0], results[1], "one queue and three count alike");
}

#[test]
fn a_frame_the_wire_delivers_late_is_reordered_within_its_queue() {
    let _g = serial();
    // Fixed ports: one flow, so every frame takes one receive queue. A held-back frame arrives
    // after later ones; it counts as reordered only against later frames of its own sending
    // queue, so at most once per frame held, and the counts stay exact.
    let held = [100u64, 1_000, 5_000];
    let imp = Impairment {
        delay_one: held.iter().map(|q| first_trial_field(*q)).collect(),
        ..Default::default()
    };
    let make = || tester(setup(IpVersion::V4, true, false), 2, imp.clone());
    let r = valid_first_trial(make, &TrialSpec::new(84, 10_000, 1.0, 100));
    let (sent, received, lost, dups, reordered, unexpected) = counts(&r, true);
    assert_eq!((sent, received, lost, dups, unexpected), (10_000, 10_000, 0, 0, 0));
    assert!(reordered <= held.len() as u64, "{reordered} reordered, {} held back", held.len());
}

#[test]
fn a_trial_shorter_than_a_chunk_leaves_the_second_queue_nothing_to_send() {
    let _g = serial();
    let mut t = tester(pseudorandom_ports(setup(IpVersion::V6, true, true)), 2, Impairment::default());
    let r = valid_trial(&mut t, &TrialSpec::new(84, 40, 1.0, 100));
    for fwd in [true, false] {
        assert_eq!(counts(&r, fwd), (40, 40, 0, 0, 0, 0));
    }
}

#[test]
fn latency_tags_are_measured_on_every_queue() {
    let _g = serial();
    let mut t = tester(pseudorandom_ports(setup(IpVersion::V4, true, false)), 2, Impairment::default());
    let mut spec = TrialSpec::new(84, 10_000, 2.0, 100);
    spec.latency = Some(LatencySpec { delay_s: 0.5, tags: 500 });
    let r = valid_trial(&mut t, &spec);
    let f = r.forward.unwrap();
    assert_eq!(f.latency_ns.len(), 500);
    assert!(
        f.latency_ns.iter().all(|ns| *ns < 1_000_000_000),
        "every tag came back: {:?}",
        &f.latency_ns[..5]
    );
}

#[test]
fn pdv_times_every_frame_of_every_queue() {
    let _g = serial();
    let mut t = tester(pseudorandom_ports(setup(IpVersion::V4, true, false)), 2, Impairment::default());
    let mut spec = TrialSpec::new(84, 10_000, 1.0, 100);
    spec.pdv = Some(PdvSpec {
        frame_timeout_ms: 0,
        exact: true,
    });
    let r = valid_trial(&mut t, &spec);
    let f = r.forward.unwrap();
    let p = f.pdv.expect("per-frame delays");
    // Every frame's delay, from both receive queues, in one record.
    assert_eq!((p.timed, p.late, p.delays.finite_count(), p.delays.lost()), (10_000, 0, 10_000, 0));
    assert!(p.delays.is_exact());
    // IPDV pairs consecutive frames that came in on one queue: some, never more than there
    // are consecutive pairs.
    assert!(p.ipdv.pairs() > 0 && p.ipdv.pairs() < 10_000, "{} pairs", p.ipdv.pairs());
    assert!(!p.ipdv_infinite);
}

#[test]
fn a_trial_whose_receive_bitmaps_would_not_fit_is_refused() {
    let _g = serial();
    let mut t = tester(setup(IpVersion::V4, true, false), 4, Impairment::default());
    // 9 billion frames: one receiver could track them (1.1 GB), four would need 4.5 GB.
    let spec = TrialSpec::new(84, 1_000_000_000, 9.0, 100);
    let e = t.run_trial(&spec).expect_err("refused");
    assert!(e.to_string().contains("on 4 queues per port"), "{e}");
}

#[test]
fn more_queues_than_the_port_has_are_refused() {
    let (l, r) = pair(16);
    let cpus = CpuPlan {
        queues: xlat_io::mem::MAX_QUEUES + 1,
        ..CpuPlan::default()
    };
    let e = Tester::new(setup(IpVersion::V4, true, true), l, r, cpus).err().expect("refused");
    assert!(e.to_string().contains("at most"), "{e}");
}
