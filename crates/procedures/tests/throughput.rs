//! Throughput search against the simulated DUT.

use xlat_procedures::{throughput, NoProgress, ProcedureError, Progress, ProgressEvent, ThroughputConfig};
use xlat_results::{SearchMethod, TrialRecord};
use xlat_testkit::sim::SimDut;

fn cfg(max: u64, error: u64) -> ThroughputConfig {
    ThroughputConfig::new(84, max, error)
}

/// The highest rate that passes a trial of `d` seconds on a noiseless DUT.
fn true_limit(capacity: f64, buffer: u64, d: f64) -> f64 {
    capacity + buffer as f64 / d
}

#[test]
fn binary_search_ends_within_error_of_capacity() {
    for &capacity in &[1.0, 999.0, 123_456.0, 400_000.0, 999_999.0, 7_161_269.0] {
        for &error in &[1u64, 10, 1000, 50_000] {
            let max = 14_880_952;
            let mut dut = SimDut::new(capacity, 1);
            let r = throughput(&mut dut, &cfg(max, error), &mut NoProgress).unwrap();
            let t = r.throughput as f64;
            assert!(t <= capacity, "capacity {capacity} error {error}: result {t} above capacity");
            assert!(capacity - t <= error as f64, "capacity {capacity} error {error}: result {t}");
            assert!(r.upper - r.lower <= error || r.throughput == 0);
            // The DUT bounded it: a valid failed trial in the final interval's top.
            match r.bound {
                xlat_results::Bound::Dut { rate, dut_busy: None } => assert!(rate > r.throughput && rate <= r.upper),
                ref b => panic!("capacity {capacity} error {error}: bounded by {b:?}"),
            }
            // Every trial recorded, 60 s each.
            assert!(r.trials.iter().all(|t| t.duration_s == 60.0 && t.valid && t.pass.is_some()));
            assert_eq!(r.trial_seconds, 60.0 * r.trials.len() as f64);
        }
    }
}

#[test]
fn passing_max_rate_is_one_trial() {
    let mut dut = SimDut::new(2.0e6, 1);
    let r = throughput(&mut dut, &cfg(1_000_000, 1000), &mut NoProgress).unwrap();
    assert_eq!(r.throughput, 1_000_000);
    assert_eq!(r.trials.len(), 1);
    // Only a lower bound: said in the result, its JSON and its text.
    assert_eq!(r.bound, xlat_results::Bound::Range { max: 1_000_000 });
    assert_eq!(serde_json::to_value(&r).unwrap()["bound"]["by"], "range");
    use xlat_results::BenchResult;
    assert!(r.human_table().contains("the figure is at least this"), "{}", r.human_table());
    assert!(r.headline().contains("at least 1,000,000 fps"), "{}", r.headline());
}

#[test]
fn without_probing_max_the_result_is_within_error_of_max() {
    let mut c = cfg(1_000_000, 1000);
    c.probe_max_first = false;
    let r = throughput(&mut SimDut::new(2.0e6, 1), &c, &mut NoProgress).unwrap();
    assert!(r.throughput <= 1_000_000 && 1_000_000 - r.throughput <= 1000);
}

#[test]
fn capacity_below_min_rate_gives_zero() {
    let mut c = cfg(1_000_000, 1000);
    c.min_rate = 500_000;
    let r = throughput(&mut SimDut::new(100_000.0, 1), &c, &mut NoProgress).unwrap();
    assert_eq!(r.throughput, 0);
    assert!(r.trials.iter().any(|t| t.rate == 500_000 && t.pass == Some(false)));
}

#[test]
fn min_rate_is_respected_and_tested() {
    let mut c = cfg(1_000_000, 1000);
    c.min_rate = 300_000;
    let r = throughput(&mut SimDut::new(450_000.0, 1), &c, &mut NoProgress).unwrap();
    assert!(r.throughput <= 450_000 && 450_000 - r.throughput <= 1000);
    assert!(r.trials.iter().all(|t| t.rate >= 300_000));
}

#[test]
fn noisy_dut_result_stays_within_the_noise_band() {
    for seed in 0..5 {
        let mut dut = SimDut::new(500_000.0, seed).noise(0.01);
        let r = throughput(&mut dut, &cfg(1_000_000, 100), &mut NoProgress).unwrap();
        let t = r.throughput as f64;
        assert!((495_000.0 - 100.0..=505_000.0).contains(&t), "seed {seed}: {t}");
    }
}

#[test]
fn invalid_trials_are_retried_then_bound_the_search() {
    // The tester cannot send above 600,000 fps, the DUT could forward 800,000: 1,000,000 is
    // tried three times, stays invalid, and bounds the search instead of ending it.
    let mut dut = SimDut::new(800_000.0, 1).invalid_above(600_000);
    let mut c = cfg(1_000_000, 1000);
    c.retries = 2;
    let r = throughput(&mut dut, &c, &mut NoProgress).unwrap();
    assert_eq!(
        r.trials[..3]
            .iter()
            .map(|t| (t.rate, t.attempt, t.pass, t.tester_bound))
            .collect::<Vec<_>>(),
        vec![(1_000_000, 1, None, false), (1_000_000, 2, None, false), (1_000_000, 3, None, true)]
    );
    assert!(r.trials[2].invalid_reasons[0].contains("cannot send more than 600000"));
    assert!(r.throughput <= 600_000 && 600_000 - r.throughput <= 1000, "{}", r.throughput);
    assert!(r.bounded_by_tester && r.tester_bound.is_some_and(|b| b > 600_000));
}

#[test]
fn invalid_trial_is_neither_pass_nor_fail_and_a_retry_can_succeed() {
    let mut dut = SimDut::new(400_000.0, 1);
    dut.invalid_next = 2;
    let r = throughput(&mut dut, &cfg(1_000_000, 1000), &mut NoProgress).unwrap();
    assert!(400_000 - r.throughput <= 1000);
    let first: Vec<&TrialRecord> = r.trials.iter().take(3).collect();
    assert_eq!(
        first.iter().map(|t| (t.attempt, t.valid, t.pass)).collect::<Vec<_>>(),
        vec![(1, false, None), (2, false, None), (3, true, Some(false))]
    );
    assert!(first.iter().all(|t| t.rate == 1_000_000));
    assert!(!first[0].invalid_reasons.is_empty());
}

#[test]
fn loss_tolerance_is_honoured() {
    let capacity = 400_000.0;
    let mut c = cfg(1_000_000, 100);
    c.loss_tolerance = 0.01;
    let r = throughput(&mut SimDut::new(capacity, 1), &c, &mut NoProgress).unwrap();
    let limit = capacity / 0.99;
    let t = r.throughput as f64;
    assert!(t <= limit + 1.0 && limit - t <= 101.0, "{t} vs {limit}");
    assert!(t > capacity);
    // The passing trials lost frames, but at most 1 %.
    let passed_with_loss = r.trials.iter().filter(|t| t.pass == Some(true) && t.max_loss_ratio() > 0.0).count();
    assert!(passed_with_loss > 0);
    assert!(r.trials.iter().filter(|t| t.pass == Some(true)).all(|t| t.max_loss_ratio() <= 0.01));
    assert!(r.trials.iter().filter(|t| t.pass == Some(false)).all(|t| t.max_loss_ratio() > 0.01));
}

#[test]
fn tolerance_applies_per_direction() {
    // Unidirectional DUT: only the forward direction exists and is judged.
    let r = throughput(
        &mut SimDut::new(300_000.0, 1).unidirectional(),
        &cfg(1_000_000, 1000),
        &mut NoProgress,
    )
    .unwrap();
    assert!(r.trials.iter().all(|t| t.reverse.is_none()));
    assert!(300_000 - r.throughput <= 1000);
}

#[test]
fn short_trials_with_confirmation() {
    // No buffer: short trials are as good as long ones, the confirmation passes at once.
    let mut c = cfg(1_000_000, 1000);
    c.method = SearchMethod::ShortThenConfirm { short_s: 2.0 };
    let r = throughput(&mut SimDut::new(400_000.0, 1), &c, &mut NoProgress).unwrap();
    assert!(400_000 - r.throughput <= 1000);
    let full: Vec<_> = r.trials.iter().filter(|t| t.duration_s == 60.0).collect();
    assert_eq!(full.len(), 1);
    assert_eq!(full[0].phase, "confirm");
    assert_eq!(full[0].pass, Some(true));
}

#[test]
fn failed_confirmation_continues_downward() {
    // A 100,000-frame buffer lets 2 s trials pass 50,000 fps above capacity, 60 s trials only
    // 1,667 fps above it.
    let (cap, buf) = (400_000.0, 100_000);
    let mut c = cfg(1_000_000, 1000);
    c.method = SearchMethod::ShortThenConfirm { short_s: 2.0 };
    let r = throughput(&mut SimDut::new(cap, 1).buffer(buf), &c, &mut NoProgress).unwrap();
    let limit = true_limit(cap, buf, 60.0);
    let t = r.throughput as f64;
    assert!(t <= limit && limit - t <= 1000.0, "{t} vs {limit}");
    assert!(r.trials.iter().any(|t| t.phase == "confirm" && t.pass == Some(false)));
    // The result itself passed a full-length trial.
    assert!(r
        .trials
        .iter()
        .any(|x| x.rate == r.throughput && x.duration_s == 60.0 && x.pass == Some(true)));
    // Same answer as the plain binary search, within the error.
    let plain = throughput(&mut SimDut::new(cap, 1).buffer(buf), &cfg(1_000_000, 1000), &mut NoProgress).unwrap();
    assert!(plain.throughput.abs_diff(r.throughput) <= 1000);
}

#[test]
fn accelerated_search_agrees_in_fewer_trial_seconds() {
    for &(cap, buf) in &[
        (123_456.0, 0u64),
        (400_000.0, 0),
        (400_000.0, 10_000),
        (987_654.0, 0),
        (5_000.0, 2_000),
        (999_990.0, 0),
    ] {
        for &error in &[100u64, 1000] {
            let plain = throughput(&mut SimDut::new(cap, 7).buffer(buf), &cfg(1_000_000, error), &mut NoProgress).unwrap();
            let mut c = cfg(1_000_000, error);
            c.method = SearchMethod::Accelerated { initial_s: 1.0, phases: 3 };
            let fast = throughput(&mut SimDut::new(cap, 7).buffer(buf), &c, &mut NoProgress).unwrap();
            let limit = true_limit(cap, buf, 60.0);
            for r in [&plain, &fast] {
                let t = r.throughput as f64;
                assert!(
                    t <= limit + 1e-6 && limit - t <= error as f64,
                    "cap {cap} buf {buf} err {error} {:?}: {t} vs {limit}",
                    r.method
                );
            }
            assert!(plain.throughput.abs_diff(fast.throughput) <= error);
            eprintln!(
                "cap {cap} buf {buf} err {error}: binary {} fps in {} trials / {} s; accelerated {} fps in {} trials / {:.1} s",
                plain.throughput,
                plain.trials.len(),
                plain.trial_seconds,
                fast.throughput,
                fast.trials.len(),
                fast.trial_seconds
            );
            assert!(
                fast.trial_seconds < plain.trial_seconds,
                "cap {cap} buf {buf} err {error}: accelerated {} s vs binary {} s",
                fast.trial_seconds,
                plain.trial_seconds
            );
            // The result passed a full-length trial.
            assert!(fast
                .trials
                .iter()
                .any(|x| x.rate == fast.throughput && x.duration_s == 60.0 && x.pass == Some(true)));
        }
    }
}

#[test]
fn accelerated_search_handles_edges() {
    let mut c = cfg(1_000_000, 1000);
    c.method = SearchMethod::Accelerated { initial_s: 1.0, phases: 3 };
    // DUT faster than max.
    let r = throughput(&mut SimDut::new(2.0e6, 1), &c, &mut NoProgress).unwrap();
    assert_eq!(r.throughput, 1_000_000);
    // DUT slower than min.
    c.min_rate = 10_000;
    let r = throughput(&mut SimDut::new(5_000.0, 1), &c, &mut NoProgress).unwrap();
    assert_eq!(r.throughput, 0);
    // One phase only.
    c.min_rate = 0;
    c.method = SearchMethod::Accelerated {
        initial_s: 60.0,
        phases: 1,
    };
    let r = throughput(&mut SimDut::new(333_333.0, 1), &c, &mut NoProgress).unwrap();
    assert!(333_333 - r.throughput <= 1000);
    // Noise does not make it loop.
    c.method = SearchMethod::Accelerated { initial_s: 0.5, phases: 4 };
    for seed in 0..10 {
        let r = throughput(&mut SimDut::new(333_333.0, seed).noise(0.02), &c, &mut NoProgress).unwrap();
        assert!(r.trials.len() < 200);
        assert!((320_000..=345_000).contains(&r.throughput), "seed {seed}: {}", r.throughput);
    }
}

#[test]
fn bad_configurations_are_errors() {
    let mut dut = SimDut::new(1000.0, 1);
    let mut c = cfg(1000, 10);
    c.min_rate = 2000;
    assert!(matches!(throughput(&mut dut, &c, &mut NoProgress), Err(ProcedureError::Config(m)) if m.contains("minimum rate")));
    for bad in [
        ThroughputConfig { error: 0, ..cfg(1000, 1) },
        ThroughputConfig {
            max_rate: 0,
            ..cfg(1000, 1)
        },
        ThroughputConfig {
            loss_tolerance: -0.1,
            ..cfg(1000, 1)
        },
        ThroughputConfig {
            loss_tolerance: f64::NAN,
            ..cfg(1000, 1)
        },
        ThroughputConfig {
            method: SearchMethod::ShortThenConfirm { short_s: 0.0 },
            ..cfg(1000, 1)
        },
        ThroughputConfig {
            method: SearchMethod::ShortThenConfirm { short_s: 100.0 },
            ..cfg(1000, 1)
        },
        ThroughputConfig {
            method: SearchMethod::Accelerated { initial_s: 1.0, phases: 0 },
            ..cfg(1000, 1)
        },
        ThroughputConfig {
            method: SearchMethod::Accelerated {
                initial_s: f64::INFINITY,
                phases: 3,
            },
            ..cfg(1000, 1)
        },
    ] {
        assert!(
            matches!(throughput(&mut dut, &bad, &mut NoProgress), Err(ProcedureError::Config(_))),
            "{bad:?}"
        );
    }
    let mut zero = cfg(1000, 1);
    zero.trial.duration_s = 0.0;
    assert!(throughput(&mut dut, &zero, &mut NoProgress).is_err());
    // A trial that would send no frame is an error, not a silent pass.
    let mut tiny = cfg(5, 1);
    tiny.trial.duration_s = 0.1;
    assert!(matches!(throughput(&mut dut, &tiny, &mut NoProgress), Err(ProcedureError::Config(m)) if m.contains("sends no frame")));
    assert!(dut.log.is_empty());
}

/// procedure, step, rate, low, high, elapsed, remaining.
type Step = (String, usize, u64, u64, u64, f64, Option<f64>);

#[derive(Default)]
struct Log {
    steps: Vec<Step>,
    trials: usize,
}

impl Progress for Log {
    fn step(&mut self, e: &ProgressEvent<'_>) {
        self.steps
            .push((e.procedure.to_string(), e.step, e.rate, e.low, e.high, e.elapsed_s, e.remaining_s));
    }
    fn trial(&mut self, _procedure: &str, _record: &TrialRecord) {
        self.trials += 1;
    }
}

#[test]
fn progress_is_reported() {
    let mut log = Log::default();
    let r = throughput(&mut SimDut::new(400_000.0, 1), &cfg(1_000_000, 1000), &mut log).unwrap();
    assert_eq!(log.trials, r.trials.len());
    assert_eq!(log.steps.len(), r.trials.len());
    assert!(log.steps.iter().all(|s| s.0 == "throughput" && s.2 >= s.3 && s.2 <= s.4));
    assert!(log.steps.windows(2).all(|w| w[1].1 == w[0].1 + 1 && w[1].5 > w[0].5));
    // Elapsed counts trial plus timeout: 62 s per trial.
    assert_eq!(log.steps[1].5, 62.0);
    assert!(log.steps[0].6.unwrap() >= 60.0);
}
