//! A DUT faster than the tester (issue 9): a rate whose trials stay invalid after the retries is
//! an upper bound of the search marked tester-bound, and the search goes on below it; only a
//! tester that cannot send even at the lowest rate tried is an error.

use xlat_procedures::*;
use xlat_results::output::TRIALS_CSV_HEADER;
use xlat_results::*;
use xlat_testkit::fake::Fake;
use xlat_testkit::sim::SimDut;

const MAX: u64 = 1_000_000;
const ERROR: u64 = 1000;

fn methods() -> Vec<SearchMethod> {
    vec![
        SearchMethod::Binary,
        SearchMethod::ShortThenConfirm { short_s: 2.0 },
        SearchMethod::Accelerated { initial_s: 1.0, phases: 3 },
    ]
}

fn cfg(method: &SearchMethod) -> ThroughputConfig {
    let mut c = ThroughputConfig::new(84, MAX, ERROR);
    c.method = method.clone();
    c
}

/// Every rate above `limit` stayed invalid through every attempt and is marked so on its last
/// attempt; no invalid trial has a verdict; nothing at or below `limit` is invalid.
fn check_invalid_records(r: &ThroughputResult, limit: u64, attempts: u32) {
    for t in &r.trials {
        assert_eq!(t.valid, t.rate <= limit, "{t:?}");
        if !t.valid {
            assert_eq!(t.pass, None, "an invalid trial counted as pass or fail: {t:?}");
            assert!(!t.invalid_reasons.is_empty());
        }
        assert_eq!(t.tester_bound, !t.valid && t.attempt == attempts, "{t:?}");
    }
    // Each tester-bound spec was tried `attempts` times in a row.
    for (i, t) in r.trials.iter().enumerate().filter(|(_, t)| t.tester_bound) {
        let run = &r.trials[i + 1 - attempts as usize..=i];
        assert!(
            run.iter()
                .enumerate()
                .all(|(k, x)| x.rate == t.rate && x.duration_s == t.duration_s && x.attempt == k as u32 + 1 && !x.valid),
            "{run:?}"
        );
    }
}

#[test]
fn a_tester_slower_than_the_dut_bounds_the_search_for_every_method() {
    let tester = 300_000;
    for method in methods() {
        for retries in [0, 3] {
            let mut dut = SimDut::new(500_000.0, 1).invalid_above(tester);
            let mut c = cfg(&method);
            c.retries = retries;
            let r = throughput(&mut dut, &c, &mut NoProgress)
                .unwrap_or_else(|e| panic!("{method:?} retries {retries}: the search stopped: {e}"));
            let t = r.throughput;
            assert!(t <= tester && tester - t <= ERROR, "{method:?}: throughput {t}");
            let b = r.tester_bound.expect("a tester bound");
            assert!(b > tester && b - t <= ERROR, "{method:?}: bound {b}, throughput {t}");
            assert_eq!(r.upper, b, "{method:?}: the final interval ends at the tester's bound");
            assert!(r.bounded_by_tester, "{method:?}");
            assert_eq!(r.bound, xlat_results::Bound::Tester { rate: b }, "{method:?}");
            // The result passed a valid full-length trial.
            assert!(r.trials.iter().any(|x| x.rate == t && x.duration_s == 60.0 && x.pass == Some(true)));
            check_invalid_records(&r, tester, retries + 1);
            let text = r.human_table();
            assert!(
                text.contains(&format!("bounded by the tester at {} frames/s", xlat_results::text::group(b))),
                "{method:?}: {text}"
            );
            assert!(text.contains("invalid: tester-bound"), "{text}");
            // JSON and CSV carry it too.
            let json = serde_json::to_value(&r).unwrap();
            assert_eq!(json["tester_bound"], serde_json::json!(b));
            assert_eq!(json["bounded_by_tester"], serde_json::json!(true));
            let rep = Repeated::from_runs(vec![r.clone()]);
            assert_eq!(rep.summaries["tester_bound_fps"].median, b as f64);
            let csv = trials_csv(
                "throughput",
                &[SizeResult {
                    frame_size: 84,
                    result: rep,
                }],
                None,
            );
            let col = TRIALS_CSV_HEADER.split(',').position(|h| h == "tester_bound").unwrap();
            let marked = csv.lines().skip(1).filter(|l| l.split(',').nth(col) == Some("true")).count();
            assert_eq!(marked, r.trials.iter().filter(|t| t.tester_bound).count());
            assert!(marked > 0);
        }
    }
}

#[test]
fn a_dut_slower_than_the_tester_is_measured_as_before() {
    // The tester cannot send above 300,000 fps, the DUT forwards 200,000: the DUT's limit is
    // found below the tester's, and the result does not claim the tester limited it.
    for method in methods() {
        let r = throughput(
            &mut SimDut::new(200_000.0, 1).invalid_above(300_000),
            &cfg(&method),
            &mut NoProgress,
        )
        .unwrap_or_else(|e| panic!("{method:?}: {e}"));
        assert!(
            r.throughput <= 200_000 && 200_000 - r.throughput <= ERROR,
            "{method:?}: {}",
            r.throughput
        );
        assert!(r.tester_bound.is_some_and(|b| b > 300_000), "{method:?}: {:?}", r.tester_bound);
        assert!(!r.bounded_by_tester, "{method:?}");
        assert!(r.upper <= 200_000 + ERROR, "{method:?}: upper {}", r.upper);
        check_invalid_records(&r, 300_000, 4);
        let text = r.human_table();
        assert!(!text.contains("bounded by the tester"), "{text}");
        assert!(text.contains("the DUT's limit was found below it"), "{text}");
        // Same throughput as with a tester that keeps up.
        let plain = throughput(&mut SimDut::new(200_000.0, 1), &cfg(&method), &mut NoProgress).unwrap();
        assert!(plain.throughput.abs_diff(r.throughput) <= ERROR, "{method:?}");
        assert_eq!(plain.tester_bound, None);
    }
}

#[test]
fn repetitions_each_end_with_a_result() {
    // --repeat 3 with a tester slower than the DUT: three results, none stopped.
    for method in methods() {
        let rep = repeat(3, |i| {
            throughput(
                &mut SimDut::new(500_000.0, i as u64).noise(0.01).invalid_above(300_000),
                &cfg(&method),
                &mut NoProgress,
            )
        })
        .unwrap_or_else(|e| panic!("{method:?}: {e}"));
        assert_eq!(rep.runs.len(), 3);
        for r in &rep.runs {
            assert!(
                r.throughput <= 300_000 && 300_000 - r.throughput <= ERROR,
                "{method:?}: {}",
                r.throughput
            );
            assert!(r.bounded_by_tester);
        }
        assert_eq!(rep.summaries["throughput_fps"].n, 3);
        assert_eq!(rep.summaries["tester_bound_fps"].n, 3);
        assert!(rep.human_table().matches("bounded by the tester at").count() == 3);
    }
}

#[test]
fn the_acceptance_search_ends_with_a_result() {
    // The lab acceptance command: --max-rate 200000 --duration 2 --error 5000 --repeat 3 on a
    // machine whose tester sends 120,000 fps at most and a DUT that would forward more.
    let rep = repeat(3, |i| {
        let mut c = ThroughputConfig::new(84, 200_000, 5000);
        c.trial.duration_s = 2.0;
        throughput(&mut SimDut::new(250_000.0, i as u64).invalid_above(120_000), &c, &mut NoProgress)
    })
    .unwrap();
    for r in &rep.runs {
        assert!(r.throughput <= 120_000 && 120_000 - r.throughput <= 5000, "{}", r.throughput);
        assert!(r.bounded_by_tester);
        assert!(r.trials.iter().all(|t| t.rate <= 120_000 || t.pass.is_none()));
    }
}

#[test]
fn a_tester_that_cannot_send_even_the_lowest_rate_is_an_error() {
    for method in methods() {
        // Not even min_rate.
        let mut c = cfg(&method);
        c.min_rate = 100_000;
        c.retries = 1;
        let mut dut = SimDut::new(500_000.0, 1).invalid_above(50_000);
        let e = throughput(&mut dut, &c, &mut NoProgress).unwrap_err();
        let lowest = dut.log.iter().map(|s| s.rate).min().unwrap();
        match &e {
            ProcedureError::TesterLimit { rate, attempts, reasons } => {
                assert_eq!(*rate, lowest, "{method:?}");
                assert_eq!(*attempts, 2);
                assert!(reasons.contains("cannot send more than 50000"), "{reasons}");
            }
            e => panic!("{method:?}: {e:?}"),
        }
        assert!(e.to_string().contains(&format!("cannot send even at {lowest} frames/s")), "{e}");
        assert!(dut.log.iter().all(|s| s.rate >= 100_000));
        // min_rate 0: the search goes down to the error, then gives up.
        let mut dut = SimDut::new(500_000.0, 1).invalid_above(0);
        let e = throughput(&mut dut, &cfg(&method), &mut NoProgress).unwrap_err();
        assert!(
            matches!(e, ProcedureError::TesterLimit { rate, .. } if rate <= 2 * ERROR && rate == dut.log.iter().map(|s| s.rate).min().unwrap()),
            "{method:?}: {e:?}"
        );
    }
}

#[test]
fn a_dut_failing_below_the_tester_bound_gives_zero_not_an_error() {
    for method in methods() {
        let mut c = cfg(&method);
        c.min_rate = 100_000;
        let r = throughput(&mut SimDut::new(50_000.0, 1).invalid_above(300_000), &c, &mut NoProgress)
            .unwrap_or_else(|e| panic!("{method:?}: {e}"));
        assert_eq!(r.throughput, 0, "{method:?}");
        assert!(!r.bounded_by_tester);
        assert!(r.trials.iter().any(|t| t.rate == 100_000 && t.pass == Some(false)));
    }
}

/// A SimDut whose tester cannot send above `rate` for longer than `seconds` (it can for short
/// trials): the confirmation of the short-trial search is where it shows.
fn short_only(dut: SimDut, rate: u64, seconds: f64) -> Fake<'static> {
    Fake::around(dut, move |spec, r| {
        if spec.rate > rate && spec.duration_s > seconds {
            r.valid = false;
            r.invalid_reasons = vec!["simulated: the sender fell behind in a long trial".into()];
        }
    })
}

#[test]
fn an_invalid_confirmation_goes_on_below_it() {
    let mut run = short_only(SimDut::new(500_000.0, 1).invalid_above(400_000), 250_000, 2.0);
    let c = cfg(&SearchMethod::ShortThenConfirm { short_s: 2.0 });
    let r = throughput(&mut run, &c, &mut NoProgress).unwrap();
    assert!(r.throughput <= 250_000 && 250_000 - r.throughput <= ERROR, "{}", r.throughput);
    assert!(r.trials.iter().any(|t| t.phase == "confirm" && t.tester_bound && t.pass.is_none()));
    assert!(r.trials.iter().all(|t| t.valid || t.pass.is_none()));
    assert!(r.bounded_by_tester);
    assert!(r.tester_bound.is_some_and(|b| b > 250_000 && b - r.throughput <= ERROR));
    // The accelerated search, whose longer phases meet the same limit.
    let mut run = short_only(SimDut::new(500_000.0, 1), 250_000, 2.0);
    let c = cfg(&SearchMethod::Accelerated { initial_s: 1.0, phases: 3 });
    let r = throughput(&mut run, &c, &mut NoProgress).unwrap();
    assert!(r.throughput <= 250_000 && 250_000 - r.throughput <= ERROR, "{}", r.throughput);
    assert!(r.bounded_by_tester);
    assert!(r
        .trials
        .iter()
        .any(|x| x.rate == r.throughput && x.duration_s == 60.0 && x.pass == Some(true)));
}

#[test]
fn frame_loss_marks_the_steps_the_tester_cannot_send() {
    // Steps of 100,000 from 1,000,000; the tester sends at most 850,000, the DUT forwards 500,000.
    let mut dut = SimDut::new(500_000.0, 1).invalid_above(850_000);
    let r = frame_loss(&mut dut, &FrameLossConfig::new(64, MAX), &mut NoProgress).unwrap();
    let rates: Vec<u64> = r.points.iter().map(|p| p.rate).collect();
    assert_eq!(rates, vec![1_000_000, 900_000, 800_000, 700_000, 600_000, 500_000, 400_000]);
    for p in &r.points {
        assert_eq!(p.tester_bound, p.rate > 850_000, "{p:?}");
        if p.tester_bound {
            assert_eq!((p.forward_loss_percent, p.reverse_loss_percent), (None, None));
            let t = &r.trials[p.trial];
            assert!(!t.valid && t.pass.is_none() && t.tester_bound);
        } else {
            assert!(r.trials[p.trial].valid);
        }
    }
    assert!(r.points[2].max_loss_percent() > 0.0);
    assert!(r.two_zero_loss);
    assert_eq!(r.tester_bound, Some(900_000));
    // Invalid steps are neither loss nor zero loss in the metrics and the table.
    let m = r.metrics();
    assert!(!m.iter().any(|(k, _)| k.ends_with("@1000000") || k.ends_with("@900000")), "{m:?}");
    assert!(r.human_table().contains("invalid: tester-bound"));
    assert!(r.trials.iter().all(|t| t.valid || t.pass.is_none()));
}

#[test]
fn frame_loss_whose_lowest_rate_the_tester_cannot_send_is_an_error() {
    let mut c = FrameLossConfig::new(64, MAX);
    c.rates = Some(vec![300_000, 200_000]);
    c.retries = 0;
    let e = frame_loss(&mut SimDut::new(500_000.0, 1).invalid_above(100_000), &c, &mut NoProgress).unwrap_err();
    assert!(matches!(e, ProcedureError::TesterLimit { rate: 200_000, .. }), "{e:?}");
    // A listed rate above the tester's limit is marked, the others measured.
    c.rates = Some(vec![900_000, 100_000, 600_000]);
    let r = frame_loss(&mut SimDut::new(500_000.0, 1).invalid_above(700_000), &c, &mut NoProgress).unwrap();
    assert_eq!(
        r.points.iter().map(|p| p.tester_bound).collect::<Vec<_>>(),
        vec![true, false, false]
    );
    assert_eq!(r.points[1].max_loss_percent(), 0.0);
    assert!(r.points[2].max_loss_percent() > 0.0);
}

/// The tester cannot send bursts longer than `frames` at line rate.
fn burst_limit(dut: SimDut, frames: u64) -> Fake<'static> {
    Fake::around(dut, move |spec, r| {
        if spec.frames() > frames {
            r.valid = false;
            r.invalid_reasons = vec!["simulated: the sender fell behind in the burst".into()];
        }
    })
}

#[test]
fn back_to_back_bursts_the_tester_cannot_send_bound_the_search() {
    let line = 1_488_095;
    let mut c = BackToBackConfig::new(64, line);
    c.repetitions = 3;
    c.error = 100;
    c.retries = 1;
    // A DUT with a huge buffer; the tester sends bursts of 100,000 frames at most.
    let mut run = burst_limit(SimDut::new(400_000.0, 1).buffer(10_000_000), 100_000);
    let r = back_to_back(&mut run, &c, &mut NoProgress, &mut NoSleep::default()).unwrap();
    for x in &r.runs {
        assert!(x.frames <= 100_000 && 100_000 - x.frames <= 100, "{x:?}");
        assert!(!x.at_max);
        assert!(x.tester_bound.is_some_and(|b| b > 100_000 && b - x.frames <= 100), "{x:?}");
    }
    assert!(r.tester_bound.is_some());
    assert!(r.trials.iter().all(|t| t.valid || t.pass.is_none()));
    assert!(r.human_table().contains("bounded by the tester"));
    // Not even a 1-frame burst... the shortest burst tried is tester-bound: an error.
    let mut run = burst_limit(SimDut::new(400_000.0, 1).buffer(10_000_000), 0);
    let e = back_to_back(&mut run, &c, &mut NoProgress, &mut NoSleep::default()).unwrap_err();
    assert!(matches!(&e, ProcedureError::TesterLimit { rate, .. } if *rate == line), "{e:?}");
    assert!(e.to_string().contains("cannot send even at"), "{e}");
    // A DUT whose buffer is below the tester's limit: measured as before.
    let mut run = burst_limit(SimDut::new(400_000.0, 1).buffer(20_000), 100_000);
    let r = back_to_back(&mut run, &c, &mut NoProgress, &mut NoSleep::default()).unwrap();
    let expected = 20_000.0 / (1.0 - 400_000.0 / line as f64);
    assert!(r.runs.iter().all(|x| (x.frames as f64 - expected).abs() <= 101.0), "{:?}", r.runs);
}

#[test]
fn fixed_rate_procedures_whose_rate_stays_invalid_are_an_error() {
    // Latency, system recovery: one rate, nothing below it to go on with.
    let mut l = LatencyConfig::new(64, 400_000);
    l.trial.duration_s = 10.0;
    l.delay_s = 5.0;
    l.tags = 500;
    l.repetitions = 3;
    l.retries = 2;
    let mut dut = SimDut::new(500_000.0, 1).invalid_above(300_000);
    let e = latency(&mut dut, &l, &mut NoProgress).unwrap_err();
    assert!(
        matches!(
            e,
            ProcedureError::TesterLimit {
                rate: 400_000,
                attempts: 3,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("cannot send even at 400000 frames/s"), "{e}");
    assert_eq!(dut.log.len(), 3);
    let mut dut = SimDut::new(400_000.0, 1).invalid_above(420_000);
    let e = system_recovery(&mut dut, &RecoveryConfig::new(64, 400_000), &mut NoProgress).unwrap_err();
    assert!(matches!(e, ProcedureError::TesterLimit { rate: 440_000, .. }), "{e:?}");
}
