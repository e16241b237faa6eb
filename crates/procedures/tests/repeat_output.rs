//! Repetitions, their statistics, and every output form.

use xlat_procedures::{
    back_to_back, frame_loss, latency, repeat, system_recovery, throughput, BackToBackConfig, FrameLossConfig, LatencyConfig, NoProgress,
    NoSleep, ProcedureError, RecoveryConfig, ThroughputConfig,
};
use xlat_results::output::{Document, SizeResult, SUMMARY_CSV_HEADER, TRIALS_CSV_HEADER};
use xlat_results::svg::{delay_cdf, frame_loss_curve, throughput_vs_frame_size};
use xlat_results::{summary_csv, trials_csv, BenchResult, DelayRecorder, DelayStats, Repeated, RunMeta, Summary, ThroughputResult};
use xlat_testkit::sim::SimDut;

#[test]
fn summary_of_known_data() {
    // Shaped like Table 2 of Lencse (Computer Communications 2024): median 7,161,269, min
    // 7,124,510, max 7,226,746, dispersion 1.43 %.
    let v = [
        7226746.0, 7124510.0, 7140000.0, 7150000.0, 7155000.0, 7161269.0, 7161269.0, 7170000.0, 7190000.0, 7200000.0,
    ];
    let s = Summary::of(&v).unwrap();
    assert_eq!((s.n, s.infinite), (10, 0));
    assert_eq!((s.median, s.min, s.max), (7161269.0, 7124510.0, 7226746.0));
    assert!((s.dispersion_percent.unwrap() - 1.4276).abs() < 1e-4);
    assert!((s.p1 - 7125904.1).abs() < 1e-6);
    assert!((s.p99 - 7224338.86).abs() < 1e-6);
    // An infinite value sorts last; a zero median; nothing at all.
    let s = Summary::of(&[3.0, f64::INFINITY, 1.0, 2.0]).unwrap();
    assert_eq!(
        (s.median, s.n, s.infinite, s.max, s.dispersion_percent),
        (2.5, 4, 1, f64::INFINITY, None)
    );
    assert_eq!(Summary::of(&[f64::INFINITY, f64::INFINITY, 1.0]).unwrap().median, f64::INFINITY);
    assert_eq!(Summary::of(&[5.0, f64::NAN]).unwrap().n, 1);
    assert_eq!(Summary::of(&[0.0, 0.0]).unwrap().dispersion_percent, None);
    assert_eq!(Summary::of(&[]), None);
    assert_eq!(Summary::of(&[f64::NAN]), None);
}

fn sized<T>(result: Repeated<T>) -> Vec<SizeResult<T>> {
    vec![SizeResult { frame_size: 84, result }]
}

fn noisy_throughput(reps: usize) -> Repeated<ThroughputResult> {
    let mut dut = SimDut::new(500_000.0, 11).noise(0.02);
    let cfg = ThroughputConfig::new(84, 1_000_000, 100);
    repeat(reps, |_| throughput(&mut dut, &cfg, &mut NoProgress)).unwrap()
}

#[test]
fn repeat_runs_n_times_and_summarises() {
    let r = noisy_throughput(10);
    assert_eq!(r.runs.len(), 10);
    let values: Vec<f64> = r.runs.iter().map(|x| x.throughput as f64).collect();
    let s = &r.summaries["throughput_fps"];
    assert_eq!(s, &Summary::of(&values).unwrap());
    assert!(s.min < s.max, "noise makes the runs differ");
    assert!(r.summaries.contains_key("trial_seconds"));
    assert!(matches!(
        repeat(0, |_| throughput(
            &mut SimDut::new(1.0, 1),
            &ThroughputConfig::new(84, 10, 1),
            &mut NoProgress
        )),
        Err(ProcedureError::Config(_))
    ));
    // An error in any repetition stops the series.
    let mut n = 0;
    let e = repeat(5, |i| {
        n += 1;
        if i == 2 {
            Err(ProcedureError::Trial(xlat_trial::TrialError::msg("link down")))
        } else {
            throughput(&mut SimDut::new(1000.0, 1), &ThroughputConfig::new(84, 2000, 10), &mut NoProgress)
        }
    });
    assert!(e.is_err() && n == 3);
}

#[test]
fn json_has_every_trial_of_every_repetition_and_round_trips() {
    let r = noisy_throughput(3);
    let mut meta = RunMeta::new("0.1.0-test");
    meta.config = serde_json::json!({"frame_size": 84, "max_rate": 1000000});
    meta.seeds.insert("simulator".into(), 11);
    let out = Document::new("throughput", meta, sized(r.clone()));
    let json = out.to_json().unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["procedure"], "throughput");
    assert_eq!(
        (v["complete"].clone(), v["frame_sizes"].clone()),
        (true.into(), serde_json::json!([84]))
    );
    assert_eq!(v["meta"]["xlatperf_version"], "0.1.0-test");
    assert_eq!(v["meta"]["seeds"]["simulator"], 11);
    assert_eq!(v["meta"]["config"]["frame_size"], 84);
    let runs = v["results"][0]["result"]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    for (run, orig) in runs.iter().zip(&r.runs) {
        assert_eq!(run["trials"].as_array().unwrap().len(), orig.trials.len());
        assert_eq!(run["method"]["kind"], "binary");
    }
    let back: Document<ThroughputResult> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, out);
}

#[test]
fn csv_has_one_row_per_trial_and_per_summary() {
    let r = noisy_throughput(2);
    let csv = trials_csv("throughput", &sized(r.clone()), None);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], TRIALS_CSV_HEADER);
    let total: usize = r.runs.iter().map(|x| x.trials.len()).sum();
    assert_eq!(lines.len(), total + 1);
    let cols = TRIALS_CSV_HEADER.split(',').count();
    assert!(lines.iter().all(|l| l.split(',').count() == cols), "{csv}");
    assert!(lines[1].starts_with("throughput,0,0,search,1,84,1000000,60,60000000,true,false,"));
    let s = summary_csv(&sized(r.clone()));
    assert_eq!(s.lines().next(), Some(format!("frame_size,{SUMMARY_CSV_HEADER}").as_str()));
    assert_eq!(s.lines().count(), 1 + r.summaries.len());
    assert!(s.lines().any(|l| l.starts_with("84,throughput,throughput_fps,2,0,")));
}

#[test]
fn every_result_type_has_a_table_csv_and_json() {
    let mut sim = SimDut::new(400_000.0, 1).buffer(20_000);
    let t = throughput(&mut sim, &ThroughputConfig::new(84, 1_000_000, 1000), &mut NoProgress).unwrap();
    assert!(t.human_table().contains(&xlat_results::text::group(t.throughput)));
    let fl = frame_loss(&mut sim, &FrameLossConfig::new(84, 1_000_000), &mut NoProgress).unwrap();
    assert!(fl.human_table().contains("fwd loss %"));
    let mut lc = LatencyConfig::new(84, 100_000);
    lc.repetitions = 2;
    sim.lost_tags = 100;
    let l = latency(&mut sim, &lc, &mut NoProgress).unwrap();
    assert!(l.human_table().contains("infinite"));
    sim.lost_tags = 0;
    let mut bc = BackToBackConfig::new(84, 1_488_095);
    bc.repetitions = 2;
    bc.measured_throughput = Some(400_000);
    let b = back_to_back(&mut sim, &bc, &mut NoProgress, &mut NoSleep::default()).unwrap();
    assert!(b.human_table().contains("corrected buffer"));
    sim.recovery_time_s = 0.25;
    let rc = system_recovery(&mut sim, &RecoveryConfig::new(84, 400_000), &mut NoProgress).unwrap();
    assert!(rc.human_table().contains("recovery time (ms)"));
    fn check<T: BenchResult + serde::Serialize + Clone>(x: &T) {
        let rep = Repeated::from_runs(vec![x.clone(), x.clone()]);
        assert!(!rep.human_table().is_empty());
        assert_eq!(
            trials_csv(x.procedure().name(), &sized(rep.clone()), None).lines().count(),
            1 + 2 * x.trials().len()
        );
        assert!(!x.headline().is_empty());
        let finite = rep.summaries.values().filter(|s| s.median.is_finite()).count();
        let json = Document::new(x.procedure().name(), RunMeta::new("t"), sized(rep))
            .to_json()
            .unwrap();
        assert!(json.contains(x.procedure().name()));
        // A sweep reads every procedure's document through its typed view: one point per
        // frame size with the median of every metric that has a finite one.
        let mut sweep = xlat_results::sweep::Sweep::new("connections", x.procedure().name(), &["10k".to_string()]);
        sweep.add_run("10k", &json).unwrap();
        assert_eq!(sweep.points.len(), 1);
        assert_eq!((sweep.points[0].frame_size, sweep.points[0].metrics.len()), (84, finite));
    }
    check(&t);
    check(&fl);
    check(&l);
    check(&b);
    check(&rc);
    // A summary over an infinite WCL is infinite, JSON stays valid (null).
    let rep = Repeated::from_runs(vec![l.clone()]);
    assert_eq!(rep.summaries["forward_wcl_ms"].infinite, 1);
    assert_eq!(rep.summaries["forward_wcl_ms"].median, f64::INFINITY);
    let json = Document::new("latency", RunMeta::new("t"), sized(rep)).to_json().unwrap();
    serde_json::from_str::<serde_json::Value>(&json).unwrap();
    let mut sweep = xlat_results::sweep::Sweep::new("connections", "latency", &["1".to_string()]);
    sweep.add_run("1", &json).unwrap();
    assert!(!sweep.points[0].metrics.contains_key("forward_wcl_ms"), "{:?}", sweep.points);
    assert!(sweep.points[0].metrics.contains_key("forward_tl_ms"), "{:?}", sweep.points);
}

fn well_formed(svg: &str) {
    assert!(svg.starts_with("<?xml"));
    assert!(svg.trim_end().ends_with("</svg>"));
    assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    assert_eq!(svg.matches("<svg").count(), 1);
}

#[test]
fn plots_are_standalone_svg() {
    let s = throughput_vs_frame_size(
        "Throughput <router6>",
        &[(84, 7.1e6, 7.0e6, 7.2e6), (128, 6.0e6, 5.9e6, 6.1e6), (1518, 8.1e5, 8.0e5, 8.2e5)],
    );
    well_formed(&s);
    assert!(s.contains("&lt;router6&gt;"));
    let fl = frame_loss(
        &mut SimDut::new(400_000.0, 1),
        &FrameLossConfig::new(84, 1_000_000),
        &mut NoProgress,
    )
    .unwrap();
    let s = frame_loss_curve(&fl);
    well_formed(&s);
    assert_eq!(s.matches("<path").count(), 2, "forward and reverse");
    let mut a = DelayRecorder::exact();
    let mut b = DelayRecorder::histogram();
    for i in 0..10_000u64 {
        a.record(1_000_000 + i * 10);
        b.record(if i % 100 == 0 { u64::MAX } else { 2_000_000 + i * 7 });
    }
    let s = delay_cdf("Latency CDF", &[("exact", &a), ("histogram, 1 % lost", &b)]);
    well_formed(&s);
    assert!(a.cdf_points(100).len() <= 101);
    assert!((b.cdf_points(100).last().unwrap().1 - 0.99).abs() < 1e-9);
    // Degenerate inputs do not panic.
    well_formed(&throughput_vs_frame_size("empty", &[]));
    well_formed(&throughput_vs_frame_size("one", &[(64, f64::NAN, 1.0, f64::INFINITY)]));
    well_formed(&delay_cdf("none", &[("empty", &DelayRecorder::exact())]));
}
