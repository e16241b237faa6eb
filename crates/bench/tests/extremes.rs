//! No panics on extreme or degenerate input: errors or sane results.

use xlat_bench::sim::SimDut;
use xlat_bench::*;

#[test]
fn extreme_rates_do_not_panic() {
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
            let _ = throughput(&mut SimDut::new(cap, 1).noise(0.5), &c, &mut NoProgress);
        }
    }
    let _ = frame_loss(&mut SimDut::new(1.0, 1), &FrameLossConfig::new(64, u64::MAX), &mut NoProgress);
    let _ = frame_loss(&mut SimDut::new(1.0, 1), &FrameLossConfig::new(64, 3), &mut NoProgress);
    let mut b = BackToBackConfig::new(64, 1);
    b.repetitions = 1;
    let _ = back_to_back(
        &mut SimDut::new(0.0, 1).buffer(u64::MAX),
        &b,
        &mut NoProgress,
        &mut NoSleep::default(),
    );
    let _ = back_to_back(
        &mut SimDut::new(1.0, 1),
        &BackToBackConfig::new(64, u64::MAX),
        &mut NoProgress,
        &mut NoSleep::default(),
    );
    let _ = system_recovery(&mut SimDut::new(1.0, 1), &RecoveryConfig::new(64, u64::MAX), &mut NoProgress);
    let _ = system_recovery(&mut SimDut::new(1.0, 1), &RecoveryConfig::new(64, 1), &mut NoProgress);
    let mut l = LatencyConfig::new(64, u64::MAX);
    l.repetitions = 1;
    l.tags = u64::MAX;
    let _ = latency(&mut SimDut::new(1.0, 1), &l, &mut NoProgress);
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
