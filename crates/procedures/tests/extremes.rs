//! No panics on extreme or degenerate input: errors or sane results.

use xlat_procedures::*;
use xlat_results::*;
use xlat_testkit::sim::SimDut;

#[test]
fn extreme_rates_give_results_within_the_range_or_errors() {
    for method in [
        SearchMethod::Binary,
        SearchMethod::ShortThenConfirm { short_s: 1.0 },
        SearchMethod::Accelerated {
            initial_s: 0.01,
            phases: 16,
        },
    ] {
        for (cap, max, min, err) in [
            (1e19, u64::MAX, 0, 1u64 << 60),
            (0.0, 1000, 0, 1),
            (0.0, 1000, 1000, 1),
            (5.0, 10, 0, 1),
            (f64::NAN, 100, 0, 1),
        ] {
            let mut c = ThroughputConfig::new(64, max, err);
            c.min_rate = min;
            c.method = method.clone();
            let mut dut = SimDut::new(cap, 1).noise(0.5);
            let case = format!("{} capacity {cap} rates [{min}, {max}] error {err}", method.name());
            match throughput(&mut dut, &c, &mut NoProgress) {
                Ok(r) => {
                    assert!(r.throughput <= max, "{case}: {r:?}");
                    assert!(r.throughput == 0 || r.throughput >= min, "{case}: {r:?}");
                    assert!(r.lower == r.throughput && r.lower <= r.upper && r.upper <= max, "{case}: {r:?}");
                    assert!(!r.trials.is_empty() && r.trials.len() == dut.log.len(), "{case}");
                    assert!(r.trials.iter().all(|t| t.rate >= min.max(1) && t.rate <= max && t.valid), "{case}");
                    assert_eq!(r.tester_bound, None, "{case}");
                    if cap.is_nan() || cap <= 0.0 {
                        // A DUT that forwards nothing (or a NaN capacity): no rate passes.
                        assert_eq!(r.throughput, 0, "{case}");
                        assert!(r.trials.iter().all(|t| t.pass == Some(false)), "{case}");
                    } else {
                        // At most the capacity plus the noise (+50 %), where the frame counts of
                        // a 60 s trial fit in a u64 (beyond, sent and forwarded both saturate).
                        if (max as f64) * 60.0 < u64::MAX as f64 {
                            assert!(r.throughput as f64 <= cap * 1.5, "{case}: {}", r.throughput);
                        }
                        // The result passed a full-length trial.
                        assert!(
                            r.trials
                                .iter()
                                .any(|t| t.rate == r.throughput && t.duration_s == 60.0 && t.pass == Some(true)),
                            "{case}"
                        );
                    }
                }
                Err(e) => {
                    // Only a trial that would send no frame at all (10 fps for 0.01 s) is refused.
                    assert!(
                        cap == 5.0 && matches!(method, SearchMethod::Accelerated { .. }),
                        "{case}: unexpected error {e}"
                    );
                    assert!(
                        matches!(&e, ProcedureError::Config(m) if m.contains("sends no frame")),
                        "{case}: {e}"
                    );
                }
            }
        }
    }
}

#[test]
fn extreme_frame_loss_back_to_back_recovery_and_latency() {
    // Frame loss from u64::MAX: ten steps of 10 %, all within the range, a DUT of 1 fps loses
    // (almost) everything.
    let r = frame_loss(&mut SimDut::new(1.0, 1), &FrameLossConfig::new(64, u64::MAX), &mut NoProgress).unwrap();
    assert_eq!(r.points.len(), 10);
    assert_eq!(r.points[0].rate, u64::MAX);
    assert!(r.points.windows(2).all(|w| w[1].rate < w[0].rate && w[1].rate > 0));
    assert!(
        r.points.iter().all(|p| (99.0..=100.0).contains(&p.max_loss_percent())),
        "{:?}",
        r.points
    );
    assert!(!r.two_zero_loss);
    // Maximum rate 3: the step is 1 frame/s; down to 1 fps, which a 1 fps DUT forwards.
    let r = frame_loss(&mut SimDut::new(1.0, 1), &FrameLossConfig::new(64, 3), &mut NoProgress).unwrap();
    let points: Vec<(u64, f64)> = r.points.iter().map(|p| (p.rate, p.max_loss_percent())).collect();
    assert_eq!(points.len(), 3);
    assert_eq!((points[0].0, points[1].0, points[2].0), (3, 2, 1));
    assert!(
        (points[0].1 - 200.0 / 3.0).abs() < 1e-9 && points[1].1 == 50.0 && points[2].1 == 0.0,
        "{points:?}"
    );
    assert!(!r.two_zero_loss);

    // Back-to-back at a line rate of 1 fps and an endless buffer: the longest burst (2 frames)
    // passes.
    let mut b = BackToBackConfig::new(64, 1);
    b.repetitions = 1;
    let r = back_to_back(
        &mut SimDut::new(0.0, 1).buffer(u64::MAX),
        &b,
        &mut NoProgress,
        &mut NoSleep::default(),
    )
    .unwrap();
    assert_eq!(r.runs.len(), 1);
    assert!(r.runs[0].at_max && r.runs[0].frames == 2, "{:?}", r.runs);
    // Line rate u64::MAX, no buffer, 1 fps: no burst passes, every burst within [0, max].
    let r = back_to_back(
        &mut SimDut::new(1.0, 1),
        &BackToBackConfig::new(64, u64::MAX),
        &mut NoProgress,
        &mut NoSleep::default(),
    )
    .unwrap();
    assert_eq!(r.runs.len(), 50);
    assert!(r.runs.iter().all(|x| x.frames == 0 && !x.at_max), "{:?}", r.runs);
    assert!(r
        .trials
        .iter()
        .all(|t| t.frames >= 1 && t.frames <= r.max_burst && t.pass == Some(false)));

    // System recovery cannot overload a DUT whose throughput is u64::MAX (110 % saturates) or
    // 1 fps (110 % rounds to 1): refused, no trial run.
    for t in [u64::MAX, 1] {
        let mut dut = SimDut::new(1.0, 1);
        let e = system_recovery(&mut dut, &RecoveryConfig::new(64, t), &mut NoProgress).unwrap_err();
        assert!(
            matches!(&e, ProcedureError::Config(m) if m.contains("cannot be overloaded")),
            "{t}: {e}"
        );
        assert!(dut.log.is_empty());
    }

    // Latency at u64::MAX fps with u64::MAX tags (clamped to 50,000) through a 1 fps DUT: every
    // tag is lost, so the latencies are infinite, not some number.
    let mut l = LatencyConfig::new(64, u64::MAX);
    l.repetitions = 1;
    l.tags = u64::MAX;
    let r = latency(&mut SimDut::new(1.0, 1), &l, &mut NoProgress).unwrap();
    assert_eq!(r.tags, 50_000);
    assert_eq!(r.runs.len(), 1);
    for s in [r.forward.as_ref().unwrap(), r.reverse.as_ref().unwrap()] {
        assert!(s.typical.is_infinite() && s.worst_case.is_infinite(), "{s:?}");
    }
}

#[test]
fn empty_sample_sets_give_none() {
    assert_eq!(LatencyStats::from_samples(&[]), None);
    assert_eq!(PdvStats::of(&DelayRecorder::histogram()), None);
    assert_eq!(DelayRecorder::exact().percentile(50.0), None);
    assert_eq!(LogHistogram::new().percentile(50.0), None);
    assert_eq!(IpdvRecorder::histogram().stats(), None);
    assert_eq!(Summary::of(&[]), None);
    assert!(DelayRecorder::exact().cdf_points(0).is_empty());
    let all_lost = LatencyStats::from_samples(&[u64::MAX; 3]).unwrap();
    assert!(all_lost.typical.is_infinite() && all_lost.min.is_infinite());
}
