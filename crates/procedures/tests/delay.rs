//! Latency, PDV and IPDV statistics: the histogram against exact sorted computation.

use xlat_procedures::{latency, LatencyConfig, NoProgress, ProcedureError};
use xlat_results::delay::{nearest_rank, percentile_sorted};
use xlat_results::{Delay, DelayRecorder, DelayStats, HistogramStats, IpdvRecorder, IpdvStatistics, LatencyStats, LogHistogram, PdvStats};
use xlat_testkit::sim::{Noise, SimDut};

fn datasets() -> Vec<Vec<u64>> {
    let mut rng = Noise::new(42);
    // Uniform small values (exact region), uniform large, log-uniform over many decades, heavy
    // tail, a single value, extremes.
    vec![
        (0..10_000).map(|_| rng.next_u64() % 3000).collect(),
        (0..50_000).map(|_| 10_000 + rng.next_u64() % 5_000_000).collect(),
        (0..50_000).map(|_| 10f64.powf(1.0 + 11.0 * rng.next_f64()) as u64).collect(),
        (0..20_000).map(|_| (50_000.0 / (1.0 - rng.next_f64()).max(1e-9)) as u64).collect(),
        vec![7],
        vec![u64::MAX - 1, 0, 1 << 63],
    ]
}

const PS: [f64; 10] = [0.0, 0.1, 1.0, 25.0, 50.0, 75.0, 99.0, 99.9, 99.99, 100.0];

#[test]
fn histogram_percentiles_match_exact_within_the_stated_error() {
    for data in datasets() {
        let mut sorted = data.clone();
        sorted.sort_unstable();
        let mut h = LogHistogram::new();
        for &v in &data {
            h.record(v);
        }
        assert_eq!(h.count(), data.len() as u64);
        assert_eq!(h.min(), sorted.first().copied());
        assert_eq!(h.max(), sorted.last().copied());
        assert!(h.memory_bytes() <= LogHistogram::MAX_BUCKETS * 8);
        for p in PS {
            let exact = percentile_sorted(&sorted, p).unwrap();
            let approx = h.percentile(p).unwrap();
            let err = exact.abs_diff(approx) as f64;
            assert!(
                err <= exact as f64 * LogHistogram::RELATIVE_ERROR,
                "p{p}: exact {exact} histogram {approx}"
            );
        }
        // The recorder gives the same answers in both modes, within the error.
        let mut hist = DelayRecorder::histogram();
        let mut auto = DelayRecorder::exact_up_to(1000);
        for &v in &data {
            hist.record(v);
            auto.record(v);
        }
        let exact = DelayRecorder::from_samples(&data);
        assert!(exact.is_exact() && !hist.is_exact());
        assert_eq!(auto.is_exact(), data.len() <= 1000);
        for p in PS {
            let e = exact.percentile(p).unwrap().0;
            for r in [&hist, &auto] {
                let a = r.percentile(p).unwrap().0;
                assert!(e.abs_diff(a) as f64 <= e as f64 * r.relative_error(), "p{p}: {e} vs {a}");
            }
        }
    }
}

#[test]
fn merged_histograms_equal_one_histogram() {
    let data = &datasets()[2];
    let (mut a, mut b, mut all) = (LogHistogram::new(), LogHistogram::new(), LogHistogram::new());
    for (i, &v) in data.iter().enumerate() {
        if i % 3 == 0 {
            a.record(v)
        } else {
            b.record(v)
        }
        all.record(v);
    }
    a.merge(&b);
    assert_eq!(a, all);
}

#[test]
fn latency_stats_are_median_and_99_9th_percentile() {
    // 1..=1000 us: nearest-rank median is the 500th value, 99.9th percentile the 999th.
    let samples: Vec<u64> = (1..=1000).rev().map(|i| i * 1000).collect();
    let s = LatencyStats::from_samples(&samples).unwrap();
    assert_eq!(s.typical, Delay(500_000));
    assert_eq!(s.worst_case, Delay(999_000));
    assert_eq!((s.min, s.max, s.lost, s.tags), (Delay(1000), Delay(1_000_000), 0, 1000));
    assert_eq!(LatencyStats::from_samples(&[]), None);
    assert_eq!(nearest_rank(99.9, 1000), Some(999));
}

#[test]
fn a_lost_tag_makes_the_worst_case_latency_the_largest_value() {
    let mut samples: Vec<u64> = (1..=500).map(|i| i * 1000).collect();
    samples[17] = u64::MAX;
    let s = LatencyStats::from_samples(&samples).unwrap();
    assert_eq!(s.lost, 1);
    assert!(s.worst_case.is_infinite());
    assert_eq!(s.worst_case.to_string(), "infinite");
    assert!(!s.typical.is_infinite());
    // Serialised as "infinite", and back.
    let json = serde_json::to_string(&s).unwrap();
    assert!(json.contains("\"worst_case\":\"infinite\""), "{json}");
    assert_eq!(serde_json::from_str::<LatencyStats>(&json).unwrap(), s);
    // With 1001 tags and one lost, the 99.9th percentile (rank 1000) is still finite.
    let mut more: Vec<u64> = (1..=1001).collect();
    more[0] = u64::MAX;
    assert!(!LatencyStats::from_samples(&more).unwrap().worst_case.is_infinite());
}

#[test]
fn pdv_is_p99_9_minus_min() {
    let data: Vec<u64> = (0..100_000).map(|i| 1_000_000 + (i * 7919) % 100_000).collect();
    let exact = DelayRecorder::from_samples(&data);
    let p = PdvStats::of(&exact).unwrap();
    assert_eq!(p.min, Delay(1_000_000));
    assert_eq!(p.p99_9, Delay(1_099_899));
    assert_eq!(p.pdv, Delay(99_899));
    let mut h = DelayRecorder::histogram();
    data.iter().for_each(|&d| h.record(d));
    let ph = PdvStats::of(&h).unwrap();
    assert_eq!(ph.min, p.min);
    assert!(ph.p99_9.0.abs_diff(p.p99_9.0) as f64 <= p.p99_9.0 as f64 * ph.relative_error);
    // Lost frames beyond 0.1 %: infinite PDV; none at all: no statistics.
    let mut lossy = DelayRecorder::exact();
    for i in 0..998 {
        lossy.record(i);
    }
    lossy.record(u64::MAX);
    lossy.record(u64::MAX);
    assert!(PdvStats::of(&lossy).unwrap().pdv.is_infinite());
    assert_eq!(PdvStats::of(&DelayRecorder::exact()), None);
    let mut all_lost = DelayRecorder::histogram();
    all_lost.record(u64::MAX);
    let s = PdvStats::of(&all_lost).unwrap();
    assert!(s.min.is_infinite() && s.pdv.is_infinite());
}

#[test]
fn ipdv_min_median_max() {
    let delays = [100u64, 150, 120, 120, 300, u64::MAX, 500, 480];
    // Pairs: +50, -30, 0, +180, (lost breaks two pairs), -20.
    let mut e = IpdvRecorder::exact();
    let mut h = IpdvRecorder::histogram();
    for d in delays {
        e.record(d);
        h.record(d);
    }
    let s = e.stats().unwrap();
    assert_eq!((s.pairs, s.min_ns, s.median_ns, s.max_ns), (5, -30, 0, 180));
    assert_eq!(h.stats().unwrap().median_ns, 0);
    assert_eq!(IpdvRecorder::exact().stats(), None);
    // Histogram mode against exact on random data.
    let mut rng = Noise::new(9);
    let mut e = IpdvRecorder::exact();
    let mut h = IpdvRecorder::histogram();
    for _ in 0..50_000 {
        let d = 1_000_000 + rng.next_u64() % 2_000_000;
        e.record(d);
        h.record(d);
    }
    for p in PS {
        let (x, y) = (e.percentile(p).unwrap(), h.percentile(p).unwrap());
        assert!(
            x.abs_diff(y) as f64 <= x.unsigned_abs() as f64 * LogHistogram::RELATIVE_ERROR,
            "p{p}: {x} vs {y}"
        );
    }
    assert_eq!(e.stats().unwrap().min_ns, h.stats().unwrap().min_ns);
    assert_eq!(e.stats().unwrap().max_ns, h.stats().unwrap().max_ns);
}

#[test]
fn latency_procedure_repeats_and_takes_medians() {
    let mut cfg = LatencyConfig::new(84, 100_000);
    cfg.repetitions = 5;
    let mut dut = SimDut::new(200_000.0, 3).latency(20_000, 1_000);
    let r = latency(&mut dut, &cfg, &mut NoProgress).unwrap();
    assert_eq!(r.runs.len(), 5);
    assert_eq!(r.tags, 50_000);
    let spec = &dut.log[0];
    assert_eq!(spec.duration_s, 120.0);
    assert_eq!(spec.latency.map(|l| (l.delay_s, l.tags)), Some((60.0, 50_000)));
    let f = r.forward.as_ref().unwrap();
    assert!((20_000..=21_000).contains(&f.typical.0) && (20_000..=21_000).contains(&f.worst_case.0));
    assert!(f.worst_case >= f.typical);
    assert!(r.reverse.is_some());
    // Tags are clamped to [500, 50000].
    cfg.tags = 10;
    cfg.repetitions = 1;
    assert_eq!(latency(&mut dut, &cfg, &mut NoProgress).unwrap().tags, 500);
    cfg.tags = 1_000_000;
    assert_eq!(latency(&mut dut, &cfg, &mut NoProgress).unwrap().tags, 50_000);
}

#[test]
fn latency_with_lost_tags_reports_infinite_wcl() {
    let mut cfg = LatencyConfig::new(84, 100_000);
    cfg.repetitions = 3;
    let mut dut = SimDut::new(200_000.0, 3);
    dut.lost_tags = 100;
    let r = latency(&mut dut, &cfg, &mut NoProgress).unwrap();
    assert!(r.forward.unwrap().worst_case.is_infinite());
    assert!(r.runs.iter().all(|x| x.forward.as_ref().unwrap().lost == 100));
}

#[test]
fn latency_configuration_errors() {
    let mut dut = SimDut::new(1000.0, 1);
    let mut cfg = LatencyConfig::new(84, 1000);
    cfg.delay_s = 120.0;
    assert!(matches!(latency(&mut dut, &cfg, &mut NoProgress), Err(ProcedureError::Config(_))));
    let mut cfg = LatencyConfig::new(84, 5);
    cfg.tags = 500;
    assert!(matches!(latency(&mut dut, &cfg, &mut NoProgress), Err(ProcedureError::Config(m)) if m.contains("do not fit")));
    let cfg = LatencyConfig::new(84, 0);
    assert!(latency(&mut dut, &cfg, &mut NoProgress).is_err());
    assert!(dut.log.is_empty());
}
