//! A trial forced to be invalid is reported invalid and never counted as a pass or a fail by any
//! procedure (issue 9). The invalid trials injected here carry misleading counts (loss where
//! the DUT lost nothing, none where it lost frames, absurd latencies, a DUT that never
//! recovered), so a procedure that used them would end differently from the same run without
//! them; each test compares the two.

use xlat_procedures::*;
use xlat_results::*;
use xlat_testkit::fake::Fake;
use xlat_testkit::sim::SimDut;

const REASON: &str = "injected: the sender fell behind its schedule";

/// `inner`'s trials, the calls for which `invalid(call number from 0)` holds turned into
/// invalid trials with misleading counts.
fn inject(inner: SimDut, invalid: fn(usize) -> bool) -> Fake<'static> {
    let mut n = 0;
    Fake::around(inner, move |_, r| {
        n += 1;
        if !invalid(n - 1) {
            return;
        }
        r.valid = false;
        r.invalid_reasons = vec![REASON.into()];
        for d in [&mut r.forward, &mut r.reverse].into_iter().flatten() {
            if d.counts.lost == 0 {
                d.counts.received = d.counts.sent / 2;
            } else {
                d.counts.received = d.counts.sent;
            }
            d.counts.lost = d.counts.sent - d.counts.received;
            for l in &mut d.latency_ns {
                *l = 1_000_000_000;
            }
        }
    })
}

/// How many of the trials `run` was asked [`inject`] turned invalid.
fn injected(run: &Fake, invalid: fn(usize) -> bool) -> usize {
    (0..run.asked.len()).filter(|&n| invalid(n)).count()
}

/// Every third call, never two in a row: with one retry each injected trial is redone.
fn every_third(n: usize) -> bool {
    n % 3 == 1
}

fn first_and_fourth(n: usize) -> bool {
    n == 0 || n == 3
}

fn first_two(n: usize) -> bool {
    n < 2
}

/// The injected trials are in the list, invalid, without a verdict and without a tester bound;
/// the valid ones are exactly the trials of the clean run.
fn check(trials: &[TrialRecord], clean: &[TrialRecord], injected: usize) {
    let invalid: Vec<&TrialRecord> = trials.iter().filter(|t| !t.valid).collect();
    assert_eq!(invalid.len(), injected);
    assert!(injected > 0);
    for t in &invalid {
        assert_eq!(t.pass, None, "an invalid trial was judged: {t:?}");
        assert_eq!(t.invalid_reasons, vec![REASON.to_string()]);
        assert!(!t.tester_bound);
        assert_eq!(t.attempt, 1);
    }
    // Each injected trial is followed by its retry: the same spec, attempt 2, valid.
    for (i, t) in trials.iter().enumerate().filter(|(_, t)| !t.valid) {
        let next = &trials[i + 1];
        assert_eq!(
            (next.rate, next.duration_s, next.attempt, next.valid),
            (t.rate, t.duration_s, 2, true)
        );
    }
    let key = |t: &TrialRecord| (t.phase.clone(), t.rate, t.duration_s.to_bits(), t.frames, t.pass);
    let valid: Vec<_> = trials.iter().filter(|t| t.valid).map(key).collect();
    let expected: Vec<_> = clean.iter().map(key).collect();
    assert_eq!(valid, expected, "the valid trials differ from the clean run's");
    assert!(trials.iter().enumerate().all(|(i, t)| t.index == i));
}

#[test]
fn throughput_searches_do_not_judge_invalid_trials() {
    for method in [
        SearchMethod::Binary,
        SearchMethod::ShortThenConfirm { short_s: 2.0 },
        SearchMethod::Accelerated { initial_s: 1.0, phases: 3 },
    ] {
        for (cap, buf) in [(400_000.0, 0u64), (123_456.0, 50_000), (2.0e6, 0)] {
            let mut c = ThroughputConfig::new(84, 1_000_000, 1000);
            c.method = method.clone();
            c.retries = 1;
            let clean = throughput(&mut SimDut::new(cap, 3).buffer(buf), &c, &mut NoProgress).unwrap();
            let mut run = inject(SimDut::new(cap, 3).buffer(buf), every_third);
            let r = throughput(&mut run, &c, &mut NoProgress).unwrap_or_else(|e| panic!("{method:?} {cap}: {e}"));
            if clean.trials.len() < 2 {
                // One trial at max passed; nothing was injected.
                assert_eq!(r, clean);
                continue;
            }
            assert_eq!(r.throughput, clean.throughput, "{method:?} {cap}");
            assert_eq!((r.lower, r.upper), (clean.lower, clean.upper));
            assert_eq!((r.tester_bound, r.bounded_by_tester), (None, false));
            check(&r.trials, &clean.trials, injected(&run, every_third));
            let extra: f64 = r.trials.iter().filter(|t| !t.valid).map(|t| t.duration_s).sum();
            assert!((r.trial_seconds - clean.trial_seconds - extra).abs() < 1e-6);
        }
    }
}

#[test]
fn frame_loss_does_not_count_invalid_trials_as_loss() {
    let cfg = FrameLossConfig::new(64, 1_000_000);
    let clean = frame_loss(&mut SimDut::new(500_000.0, 1), &cfg, &mut NoProgress).unwrap();
    let mut run = inject(SimDut::new(500_000.0, 1), every_third);
    let r = frame_loss(&mut run, &cfg, &mut NoProgress).unwrap();
    check(&r.trials, &clean.trials, injected(&run, every_third));
    assert_eq!(r.points.len(), clean.points.len());
    for (p, q) in r.points.iter().zip(&clean.points) {
        assert_eq!(
            (p.rate, p.forward_loss_percent, p.reverse_loss_percent, p.tester_bound),
            (q.rate, q.forward_loss_percent, q.reverse_loss_percent, false)
        );
        assert!(r.trials[p.trial].valid, "a point refers to an invalid trial");
    }
    assert_eq!(r.two_zero_loss, clean.two_zero_loss);
    assert_eq!(r.tester_bound, None);
}

#[test]
fn frame_loss_tester_bound_step_is_neither_loss_nor_zero_loss() {
    // Every trial at 400,000 fps is invalid (retries too): between two zero-loss steps it does
    // not end the series early (it is no zero-loss trial) nor restart the count (it is no loss).
    let cfg = FrameLossConfig::new(64, 1_000_000);
    let mut at_400k = Fake::around(SimDut::new(500_000.0, 1), |spec, r| {
        if spec.rate == 400_000 {
            r.valid = false;
            r.invalid_reasons = vec![REASON.into()];
            r.forward.as_mut().unwrap().counts.received = 0;
        }
    });
    let r = frame_loss(&mut at_400k, &cfg, &mut NoProgress).unwrap();
    let rates: Vec<(u64, bool)> = r.points.iter().map(|p| (p.rate, p.tester_bound)).collect();
    assert_eq!(
        rates,
        vec![
            (1_000_000, false),
            (900_000, false),
            (800_000, false),
            (700_000, false),
            (600_000, false),
            (500_000, false),
            (400_000, true),
            (300_000, false)
        ]
    );
    assert!(r.two_zero_loss);
    assert_eq!(r.points[6].forward_loss_percent, None);
    assert_eq!(r.tester_bound, Some(400_000));
    assert_eq!(r.trials.iter().filter(|t| t.rate == 400_000).count(), 4);
    assert!(r.trials.iter().filter(|t| !t.valid).all(|t| t.pass.is_none()));
}

#[test]
fn latency_summarises_valid_trials_only() {
    let mut cfg = LatencyConfig::new(64, 100_000);
    cfg.trial.duration_s = 10.0;
    cfg.delay_s = 5.0;
    cfg.tags = 500;
    cfg.repetitions = 4;
    cfg.retries = 1;
    let sim = || SimDut::new(400_000.0, 9).latency(20_000, 5_000);
    let clean = latency(&mut sim(), &cfg, &mut NoProgress).unwrap();
    let mut run = inject(sim(), first_and_fourth);
    let r = latency(&mut run, &cfg, &mut NoProgress).unwrap();
    assert_eq!(injected(&run, first_and_fourth), 2);
    let invalid: Vec<&TrialRecord> = r.trials.iter().filter(|t| !t.valid).collect();
    assert_eq!(invalid.len(), 2);
    assert!(invalid.iter().all(|t| t.pass.is_none()));
    assert_eq!(r.runs.len(), 4);
    for run in &r.runs {
        assert!(r.trials[run.trial].valid, "a repetition refers to an invalid trial");
        // The injected trials had 1 s latencies: none of them reached a repetition.
        let f = run.forward.as_ref().unwrap();
        assert!(f.max.ns().unwrap() <= 25_000, "{f:?}");
    }
    // The same seeded latencies would come out only if the invalid trials' samples were not
    // used; the runner draws samples for every trial, so compare bounds rather than values.
    let (rf, cf) = (r.forward.as_ref().unwrap(), clean.forward.as_ref().unwrap());
    for d in [rf.typical, rf.worst_case, cf.typical, cf.worst_case] {
        let ns = d.ns().unwrap();
        assert!((20_000..=25_000).contains(&ns), "{d}");
    }
}

#[test]
fn back_to_back_does_not_judge_invalid_bursts() {
    let mut cfg = BackToBackConfig::new(64, 1_488_095);
    cfg.repetitions = 3;
    cfg.error = 10;
    cfg.retries = 1;
    let sim = || SimDut::new(400_000.0, 1).buffer(50_000);
    let clean = back_to_back(&mut sim(), &cfg, &mut NoProgress, &mut NoSleep::default()).unwrap();
    let mut run = inject(sim(), every_third);
    let r = back_to_back(&mut run, &cfg, &mut NoProgress, &mut NoSleep::default()).unwrap();
    check(&r.trials, &clean.trials, injected(&run, every_third));
    assert_eq!(
        r.runs.iter().map(|x| (x.frames, x.at_max, x.tester_bound)).collect::<Vec<_>>(),
        clean.runs.iter().map(|x| (x.frames, x.at_max, None)).collect::<Vec<_>>()
    );
    assert_eq!(r.average_frames, clean.average_frames);
}

#[test]
fn system_recovery_does_not_judge_invalid_trials() {
    let sim = || {
        let mut d = SimDut::new(400_000.0, 1);
        d.recovery_time_s = 0.5;
        d
    };
    let mut cfg = RecoveryConfig::new(64, 400_000);
    cfg.overload_s = 10.0;
    cfg.recovery_s = 10.0;
    let clean = system_recovery(&mut sim(), &cfg, &mut NoProgress).unwrap();
    let mut run = inject(sim(), first_two);
    let r = system_recovery(&mut run, &cfg, &mut NoProgress).unwrap();
    assert_eq!(r.trials.len(), 3);
    assert!(r.trials[..2].iter().all(|t| !t.valid && t.pass.is_none() && !t.tester_bound));
    assert!(r.trials[2].valid && r.trials[2].pass == Some(true));
    // The injected trials "never recovered"; the result is the valid trial's.
    assert!(r.recovered);
    assert_eq!(r.recovery_time_s, clean.recovery_time_s);
    assert_eq!((r.forward.clone(), r.reverse.clone()), (clean.forward, clean.reverse));
}
