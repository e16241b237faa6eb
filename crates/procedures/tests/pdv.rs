//! The PDV procedure against the simulated DUT: statistics computed from what the trial
//! recorded, the shared invalid-trial rule, and siitperf-pdv's frame-timeout test.

use xlat_procedures::*;
use xlat_results::*;
use xlat_testkit::sim::SimDut;
use xlat_trial::TrialSpec;

fn config(reps: u32) -> PdvConfig {
    PdvConfig {
        trial: TrialSpec::new(84, 10_000, 1.0, 10),
        frame_timeout_ms: 0,
        exact: true,
        repetitions: reps,
        retries: 2,
    }
}

#[test]
fn pdv_is_the_jitter_of_a_lossless_dut() {
    // 20 us latency plus a jitter of up to 5 us: PDV at most 5 us, near it; IPDV within +-5 us.
    let mut dut = SimDut::new(1_000_000.0, 7).latency(20_000, 5_000);
    let r = pdv(&mut dut, &config(3), &mut NoProgress).unwrap();
    assert_eq!((r.runs.len(), r.trials.len()), (3, 3));
    assert!(dut.log.iter().all(|s| s.pdv.is_some_and(|p| p.exact && p.frame_timeout_ms == 0)));
    for run in &r.runs {
        let f = run.forward.as_ref().unwrap();
        let p = f.pdv.as_ref().unwrap();
        assert_eq!((p.frames, p.lost, p.relative_error), (10_000, 0, 0.0));
        assert!(p.min.0 >= 20_000 && p.pdv.0 <= 5_000 && p.pdv.0 > 4_000, "{p:?}");
        let i = f.ipdv.as_ref().unwrap();
        assert!(i.min_ns >= -5_000 && i.max_ns <= 5_000 && i.pairs == 9_999, "{i:?}");
        let d = f.report.as_ref().unwrap();
        assert!(d.exact && !d.ipdv_infinite && !d.cdf.is_empty());
        assert!(run.pass);
    }
    let s = r.forward.as_ref().unwrap();
    assert!(s.pdv.unwrap().0 <= 5_000);
    let m: std::collections::BTreeMap<String, f64> = r.metrics().into_iter().collect();
    assert!(m["forward_pdv_ms"] <= 0.005 && m.contains_key("reverse_ipdv_max_ms"));
    assert!(r.human_table().contains("PDV and IPDV"));
    assert!(r.headline().contains("forward PDV"));
}

#[test]
fn more_than_a_thousandth_lost_makes_pdv_infinite() {
    // Capacity 9,900 of 10,000 frames/s: 1 % lost.
    let mut dut = SimDut::new(9_900.0, 1);
    let mut c = config(1);
    c.exact = false;
    let r = pdv(&mut dut, &c, &mut NoProgress).unwrap();
    let f = r.runs[0].forward.as_ref().unwrap();
    assert_eq!(f.lost, 100);
    assert!(f.pdv.as_ref().unwrap().pdv.is_infinite());
    assert!(f.report.as_ref().unwrap().ipdv_infinite);
    assert!(!f.report.as_ref().unwrap().exact);
    assert!(!r.runs[0].pass);
    assert!(r.forward.as_ref().unwrap().pdv.unwrap().is_infinite());
}

#[test]
fn invalid_trials_go_through_the_shared_retry_rule() {
    // The first two trials are invalid: retried, listed, never summarised.
    let mut dut = SimDut::new(1_000_000.0, 1);
    dut.invalid_next = 2;
    let r = pdv(&mut dut, &config(2), &mut NoProgress).unwrap();
    assert_eq!(r.trials.len(), 4);
    assert_eq!(r.trials.iter().map(|t| t.attempt).collect::<Vec<_>>(), vec![1, 2, 3, 1]);
    assert_eq!(r.runs.iter().map(|x| x.trial).collect::<Vec<_>>(), vec![2, 3]);
    assert!(r.trials[..2].iter().all(|t| !t.valid && t.pass.is_none() && !t.tester_bound));
    // A rate the tester cannot send: every attempt invalid, the last one tester-bound.
    let mut dut = SimDut::new(1_000_000.0, 1).invalid_above(5_000);
    match pdv(&mut dut, &config(2), &mut NoProgress) {
        Err(ProcedureError::TesterLimit { rate, attempts, .. }) => assert_eq!((rate, attempts), (10_000, 3)),
        r => panic!("{r:?}"),
    }
}

#[test]
fn the_frame_timeout_test_judges_each_trial() {
    let mut c = config(2);
    c.frame_timeout_ms = 10;
    let r = pdv(&mut SimDut::new(9_000.0, 1), &c, &mut NoProgress).unwrap();
    assert!(r.runs.iter().all(|x| !x.pass));
    let m: std::collections::BTreeMap<String, f64> = r.metrics().into_iter().collect();
    assert!((m["forward_loss_percent"] - 10.0).abs() < 1e-9, "{m:?}");
    assert!(r.human_table().contains("Frame timeout test (siitperf-pdv)"));
}
