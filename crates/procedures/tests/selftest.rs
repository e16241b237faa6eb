//! The self-test over a simulated looped-back tester: three searches on the same runner, each
//! with its own active directions, and a check trial at the bidirectional rate.

use xlat_procedures::{selftest, NoProgress, SelftestConfig, TrialRunner};
use xlat_testkit::fake::Fake;
use xlat_testkit::sim::SimDut;
use xlat_trial::StampSource;

fn cfg() -> SelftestConfig {
    SelftestConfig {
        frame_size: 84,
        duration_s: 10.0,
        timeout_ms: 100,
        max_rate: 1_000_000,
        error: 1_000,
        latency_rate: None,
        send_lag: xlat_trial::SendLag::default(),
    }
}

#[test]
fn each_search_runs_its_own_directions_and_finds_the_limit() {
    let mut sim = SimDut::new(400_000.0, 1);
    let r = selftest(&mut sim, &cfg(), &mut NoProgress).unwrap();
    for rate in [r.forward, r.reverse, r.bidirectional] {
        assert!((399_000..=400_000).contains(&rate), "{r:?}");
    }
    assert_eq!(r.check.rate, r.bidirectional);
    assert!(r.check.forward.is_some() && r.check.reverse.is_some());
    assert_eq!(
        r.searches.iter().map(|s| s.name).collect::<Vec<_>>(),
        ["forward", "reverse", "bidirectional"]
    );
    // The first search's trials asked for the forward direction only, the second's for the
    // reverse only, the third's and the check's for both: in that order, each in one run.
    let asked: Vec<(bool, bool)> = sim
        .log
        .iter()
        .map(|s| s.directions.map_or((true, true), |d| (d.forward, d.reverse)))
        .collect();
    let mut runs = asked.clone();
    runs.dedup();
    assert_eq!(runs, [(true, false), (false, true), (true, true)], "{asked:?}");
    // And the runner ran what they asked.
    let mut s2 = SimDut::new(400_000.0, 1);
    let only_reverse = xlat_trial::TrialSpec {
        directions: Some(xlat_trial::Directions {
            forward: false,
            reverse: true,
        }),
        ..xlat_trial::TrialSpec::new(84, 1000, 1.0, 100)
    };
    let t = s2.run(&only_reverse).unwrap();
    assert!(t.forward.is_none() && t.reverse.is_some());
}

#[test]
fn a_tester_that_cannot_send_above_a_rate_is_bounded_there() {
    let mut sim = SimDut::new(900_000.0, 1);
    sim.invalid_above = Some(300_000);
    let r = selftest(&mut sim, &cfg(), &mut NoProgress).unwrap();
    for s in &r.searches {
        assert!(s.rate <= 300_000 && s.rate >= 299_000, "{s:?}");
        assert!(s.tester_bound.is_some_and(|b| b > 300_000), "{s:?}");
    }
}

#[test]
fn the_latency_floor_is_measured_at_the_rate_asked_both_ways() {
    let mut sim = SimDut::new(400_000.0, 1);
    sim.latency_ns = 30_000;
    let c = SelftestConfig {
        latency_rate: Some(100_000),
        ..cfg()
    };
    let r = selftest(&mut sim, &c, &mut NoProgress).unwrap();
    assert_eq!(r.latency.len(), 1, "one source, one floor");
    let l = &r.latency[0];
    assert_eq!((l.rate, l.runs.len()), (100_000, 1));
    for sum in [&l.forward, &l.reverse] {
        let sum = sum.as_ref().expect("both directions");
        assert_eq!(sum.typical.ns(), Some(30_000), "{sum:?}");
    }
    // Its trials say what stamped them.
    assert!(l
        .trials
        .iter()
        .all(|t| t.forward.as_ref().is_some_and(|d| d.stamps == StampSource::User)));
    assert!(serde_json::to_string(&r).unwrap().contains("\"latency\""));
    assert!(selftest(&mut SimDut::new(400_000.0, 1), &cfg(), &mut NoProgress)
        .unwrap()
        .latency
        .is_empty());
}

/// Ports that offer kernel stamps: the floor is measured once with each source, best first,
/// and the runner is left with the best.
#[test]
fn the_latency_floor_is_measured_with_every_source_the_ports_offer() {
    let mut sim = SimDut::new(400_000.0, 1);
    sim.stamp_sources = vec![StampSource::Kernel, StampSource::User];
    sim.stamps = StampSource::Kernel;
    let c = SelftestConfig {
        latency_rate: Some(100_000),
        ..cfg()
    };
    let r = selftest(&mut sim, &c, &mut NoProgress).unwrap();
    let used: Vec<Vec<StampSource>> = r
        .latency
        .iter()
        .map(|l| l.trials.iter().flat_map(|t| t.directions().map(|(_, d)| d.stamps)).collect())
        .collect();
    assert_eq!(used, [vec![StampSource::Kernel; 2], vec![StampSource::User; 2]]);
    assert_eq!(sim.stamps, StampSource::Kernel);
}

/// A runner that cannot choose directions refuses a spec that does (as every runner must
/// refuse what it cannot do), and the self-test fails clearly on its first trial.
#[test]
fn a_runner_that_cannot_choose_directions_is_refused() {
    let mut fixed = Fake::new(|spec| {
        assert!(spec.directions.is_some(), "the self-test asks for its directions");
        Err(xlat_trial::TrialError::unsupported("choosing the active directions"))
    });
    let e = selftest(&mut fixed, &cfg(), &mut NoProgress).unwrap_err();
    assert!(e.to_string().contains("directions"), "{e}");
}
