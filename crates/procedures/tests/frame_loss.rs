//! Frame loss rate against the simulated DUT.

use xlat_procedures::{frame_loss, FrameLossConfig, NoProgress, ProcedureError};
use xlat_testkit::sim::SimDut;

#[test]
fn steps_down_by_at_most_ten_percent_and_stops_after_two_zero_loss_trials() {
    let max = 1_488_095;
    let cfg = FrameLossConfig::new(64, max);
    let r = frame_loss(&mut SimDut::new(1_000_000.0, 1), &cfg, &mut NoProgress).unwrap();
    assert_eq!(r.points[0].rate, max, "the first trial is at 100 %");
    for w in r.points.windows(2) {
        let step = w[0].rate - w[1].rate;
        assert!(step > 0 && step as f64 <= 0.1 * max as f64, "step {step}");
    }
    let n = r.points.len();
    assert!(r.two_zero_loss);
    assert_eq!(r.points[n - 1].max_loss_percent(), 0.0);
    assert_eq!(r.points[n - 2].max_loss_percent(), 0.0);
    assert!(
        r.points[..n - 2].iter().all(|p| p.max_loss_percent() > 0.0),
        "it stops at the first two zero-loss trials"
    );
    // (sent - received) * 100 / sent at 100 %: 1 - 1e6/1488095.
    let expected = (max - 1_000_000) as f64 * 100.0 / max as f64;
    assert!((r.points[0].forward_loss_percent.unwrap() - expected).abs() < 1e-3);
    assert_eq!(r.points[0].reverse_loss_percent, r.points[0].forward_loss_percent);
    assert_eq!(r.trials.len(), n);
    assert!((r.points[1].percent_of_max - 90.0).abs() < 0.01);
}

#[test]
fn finer_steps_are_allowed() {
    let mut cfg = FrameLossConfig::new(64, 1_000_000);
    cfg.step_fraction = 0.05;
    let r = frame_loss(&mut SimDut::new(500_000.0, 1), &cfg, &mut NoProgress).unwrap();
    assert!(r.points.windows(2).all(|w| w[0].rate - w[1].rate == 50_000));
    assert_eq!(r.points.last().map(|p| p.rate), Some(450_000));
}

#[test]
fn never_two_zero_loss_runs_down_to_the_smallest_step() {
    let cfg = FrameLossConfig::new(64, 1_000_000);
    let r = frame_loss(&mut SimDut::new(50_000.0, 1), &cfg, &mut NoProgress).unwrap();
    assert!(!r.two_zero_loss);
    assert_eq!(r.points.len(), 10);
    assert_eq!(r.points.last().map(|p| p.rate), Some(100_000));
}

#[test]
fn a_given_list_of_rates_is_measured_in_full() {
    let mut cfg = FrameLossConfig::new(64, 1_000_000);
    cfg.rates = Some(vec![200_000, 900_000, 100_000, 600_000]);
    let r = frame_loss(&mut SimDut::new(500_000.0, 1), &cfg, &mut NoProgress).unwrap();
    assert_eq!(
        r.points.iter().map(|p| p.rate).collect::<Vec<_>>(),
        vec![200_000, 900_000, 100_000, 600_000]
    );
    assert_eq!(r.points[0].max_loss_percent(), 0.0);
    assert!(r.points[1].max_loss_percent() > 0.0);
}

#[test]
fn bad_configurations_are_errors() {
    let mut dut = SimDut::new(1000.0, 1);
    let mut c = FrameLossConfig::new(64, 1000);
    c.step_fraction = 0.2;
    assert!(matches!(frame_loss(&mut dut, &c, &mut NoProgress), Err(ProcedureError::Config(_))));
    c.step_fraction = 0.0;
    assert!(frame_loss(&mut dut, &c, &mut NoProgress).is_err());
    let c = FrameLossConfig::new(64, 0);
    assert!(frame_loss(&mut dut, &c, &mut NoProgress).is_err());
    let mut c = FrameLossConfig::new(64, 1000);
    c.rates = Some(vec![]);
    assert!(frame_loss(&mut dut, &c, &mut NoProgress).is_err());
    c.rates = Some(vec![10, 0]);
    assert!(frame_loss(&mut dut, &c, &mut NoProgress).is_err());
    assert!(dut.log.is_empty());
}

#[test]
fn invalid_trials_are_marked_not_counted_as_loss() {
    let mut dut = SimDut::new(500_000.0, 1).invalid_above(950_000);
    let cfg = FrameLossConfig::new(64, 1_000_000);
    let r = frame_loss(&mut dut, &cfg, &mut NoProgress).unwrap();
    assert!(r.points[0].rate == 1_000_000 && r.points[0].tester_bound && r.points[0].forward_loss_percent.is_none());
    assert!(r.points[1..].iter().all(|p| !p.tester_bound) && r.two_zero_loss);
    assert_eq!(r.tester_bound, Some(1_000_000));
}
