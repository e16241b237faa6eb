//! Back-to-back frames and system recovery against the simulated DUT.

use std::time::Duration;

use xlat_procedures::b2b::corrected_buffer_time_s;
use xlat_procedures::{back_to_back, system_recovery, BackToBackConfig, NoProgress, NoSleep, ProcedureError, RecoveryConfig};
use xlat_testkit::fake::Fake;
use xlat_testkit::sim::SimDut;

const LINE: u64 = 1_488_095;

#[test]
fn back_to_back_finds_the_buffer() {
    let (cap, buf) = (400_000.0, 50_000u64);
    let mut cfg = BackToBackConfig::new(64, LINE);
    cfg.repetitions = 50;
    cfg.measured_throughput = Some(400_000);
    let mut sleep = NoSleep::default();
    let r = back_to_back(&mut SimDut::new(cap, 1).buffer(buf), &cfg, &mut NoProgress, &mut sleep).unwrap();
    // Model: a burst of N passes while N (1 - C/R) <= B.
    let expected = buf as f64 / (1.0 - cap / LINE as f64);
    assert_eq!(r.runs.len(), 50);
    for run in &r.runs {
        assert!((run.frames as f64 - expected).abs() <= 2.0, "{} vs {expected}", run.frames);
        assert!(!run.at_max);
    }
    assert_eq!(r.std_dev_frames, 0.0);
    assert!((r.implied_buffer_time_s - expected / LINE as f64).abs() < 3.0 / LINE as f64);
    // RFC 9004's corrected buffer time recovers the buffer itself: B / R.
    let corrected = r.corrected_buffer_time_s.unwrap();
    assert!((corrected - buf as f64 / LINE as f64).abs() < 3.0 / LINE as f64, "{corrected}");
    // Every burst is a trial at line rate of exactly N frames.
    assert!(r
        .trials
        .iter()
        .all(|t| t.rate == LINE && t.frames == t.forward.as_ref().unwrap().sent));
    // Trials separated by 2 s of idle time, without sleeping for real.
    assert_eq!(sleep.calls, r.trials.len() - 1);
    assert_eq!(sleep.slept, Duration::from_secs(2 * (r.trials.len() as u64 - 1)));
    assert_eq!(r.idle_seconds, 2.0 * (r.trials.len() - 1) as f64);
}

#[test]
fn burst_spec_sends_exactly_the_burst() {
    let cfg = BackToBackConfig::new(64, LINE);
    for n in [1u64, 2, 3, 7, 1000, 68_379, 1_234_567, 2 * LINE] {
        let spec = cfg.burst_spec(n);
        assert_eq!(spec.frames(), n);
        assert_eq!(spec.rate, LINE);
    }
}

#[test]
fn a_dut_at_line_rate_passes_the_longest_burst() {
    let mut cfg = BackToBackConfig::new(64, LINE);
    cfg.repetitions = 3;
    cfg.measured_throughput = Some(LINE);
    let r = back_to_back(&mut SimDut::new(LINE as f64, 1), &cfg, &mut NoProgress, &mut NoSleep::default()).unwrap();
    assert!(r.runs.iter().all(|x| x.at_max && x.frames == 2 * LINE));
    assert_eq!(r.trials.len(), 3);
    assert_eq!(r.corrected_buffer_time_s, None, "not defined when throughput = line rate");
}

#[test]
fn noisy_back_to_back_has_a_spread() {
    let mut cfg = BackToBackConfig::new(64, LINE);
    cfg.repetitions = 20;
    cfg.error = 10;
    let r = back_to_back(
        &mut SimDut::new(400_000.0, 5).buffer(50_000).noise(0.05),
        &cfg,
        &mut NoProgress,
        &mut NoSleep::default(),
    )
    .unwrap();
    assert!(r.std_dev_frames > 0.0 && r.min_frames < r.max_frames);
    assert!(r.min_frames as f64 <= r.average_frames && r.average_frames <= r.max_frames as f64);
}

#[test]
fn corrected_buffer_time_formula() {
    // 1000 frames at 1000 fps line rate with throughput 600 fps: the DUT forwarded 600 of them
    // while the burst arrived, so it buffered 400 frames = 0.4 s at line rate.
    assert_eq!(corrected_buffer_time_s(1000.0, 1000, 600), Some(0.4));
    assert_eq!(corrected_buffer_time_s(1000.0, 1000, 1000), None);
    assert_eq!(corrected_buffer_time_s(1000.0, 0, 0), None);
}

#[test]
fn back_to_back_configuration_errors() {
    let mut dut = SimDut::new(1.0, 1);
    for cfg in [
        BackToBackConfig {
            line_rate: 0,
            ..BackToBackConfig::new(64, LINE)
        },
        BackToBackConfig {
            max_burst: 0,
            ..BackToBackConfig::new(64, LINE)
        },
        BackToBackConfig {
            error: 0,
            ..BackToBackConfig::new(64, LINE)
        },
        BackToBackConfig {
            repetitions: 0,
            ..BackToBackConfig::new(64, LINE)
        },
        BackToBackConfig {
            idle_s: f64::NAN,
            ..BackToBackConfig::new(64, LINE)
        },
        BackToBackConfig {
            idle_s: -1.0,
            ..BackToBackConfig::new(64, LINE)
        },
    ] {
        assert!(matches!(
            back_to_back(&mut dut, &cfg, &mut NoProgress, &mut NoSleep::default()),
            Err(ProcedureError::Config(_))
        ));
    }
}

#[test]
fn recovery_time_is_from_the_rate_reduction_to_the_last_lost_frame() {
    let mut dut = SimDut::new(400_000.0, 1);
    dut.recovery_time_s = 0.5;
    let mut cfg = RecoveryConfig::new(64, 400_000);
    cfg.line_rate = Some(LINE);
    let r = system_recovery(&mut dut, &cfg, &mut NoProgress).unwrap();
    assert_eq!((r.overload_rate, r.reduced_rate), (440_000, 200_000));
    assert!(r.overloaded && r.recovered);
    let t = r.recovery_time_s.unwrap();
    assert!((t - 0.5).abs() <= 1.5 / 200_000.0, "{t}");
    let f = r.forward.as_ref().unwrap();
    assert_eq!(f.sent, 440_000 * 60 + 200_000 * 60);
    assert!(!f.lost_until_end);
    assert_eq!(r.trials.len(), 1);
    assert_eq!(r.trials[0].duration_s, 120.0);
    // Immediate recovery: losses stop at the reduction.
    let mut dut = SimDut::new(400_000.0, 1);
    let r = system_recovery(&mut dut, &cfg, &mut NoProgress).unwrap();
    assert!(r.recovery_time_s.unwrap() < 1e-5);
}

#[test]
fn recovery_without_overload_or_without_recovery() {
    // A buffer that swallows the whole overload: nothing lost, the test says nothing.
    let mut cfg = RecoveryConfig::new(64, 400_000);
    let r = system_recovery(&mut SimDut::new(400_000.0, 1).buffer(10_000_000), &cfg, &mut NoProgress).unwrap();
    assert!(!r.overloaded);
    assert_eq!(r.recovery_time_s, None);
    // The DUT never recovers within the observation time.
    let mut dut = SimDut::new(400_000.0, 1);
    dut.recovery_time_s = 100.0;
    cfg.recovery_s = 10.0;
    let r = system_recovery(&mut dut, &cfg, &mut NoProgress).unwrap();
    assert!(!r.recovered && r.forward.as_ref().unwrap().lost_until_end);
    assert_eq!(r.trials[0].pass, Some(false));
}

#[test]
fn recovery_refuses_a_dut_at_line_rate_and_bad_factors() {
    let mut dut = SimDut::new(LINE as f64, 1);
    let mut cfg = RecoveryConfig::new(64, LINE);
    cfg.line_rate = Some(LINE);
    assert!(matches!(system_recovery(&mut dut, &cfg, &mut NoProgress), Err(ProcedureError::Config(m)) if m.contains("line rate")));
    let cfg = RecoveryConfig {
        overload_factor: 0.9,
        ..RecoveryConfig::new(64, 1000)
    };
    assert!(system_recovery(&mut dut, &cfg, &mut NoProgress).is_err());
    let cfg = RecoveryConfig {
        throughput: 0,
        ..RecoveryConfig::new(64, 1000)
    };
    assert!(system_recovery(&mut dut, &cfg, &mut NoProgress).is_err());
    let cfg = RecoveryConfig {
        reduced_factor: 0.0001,
        ..RecoveryConfig::new(64, 1000)
    };
    assert!(system_recovery(&mut dut, &cfg, &mut NoProgress).is_err());
}

#[test]
fn invalid_recovery_trials_are_retried_then_reported() {
    let mut dut = SimDut::new(400_000.0, 1).invalid_above(420_000);
    let cfg = RecoveryConfig::new(64, 400_000);
    assert!(matches!(
        system_recovery(&mut dut, &cfg, &mut NoProgress),
        Err(ProcedureError::TesterLimit {
            rate: 440_000,
            attempts: 4,
            ..
        })
    ));
}

/// A runner that counts losses but does not say which frame was lost last.
fn no_last_lost() -> Fake<'static> {
    Fake::around(SimDut::new(1.0, 1), |_, r| {
        for d in [&mut r.forward, &mut r.reverse].into_iter().flatten() {
            d.last_lost_seq = None;
        }
    })
}

#[test]
fn recovery_needs_the_last_lost_sequence_number() {
    let cfg = RecoveryConfig::new(64, 400_000);
    let err = system_recovery(&mut no_last_lost(), &cfg, &mut NoProgress).unwrap_err();
    assert!(matches!(err, ProcedureError::Unsupported(_)), "{err}");
}

#[test]
fn recovery_is_one_trial_with_a_rate_change_and_the_time_comes_from_the_sequence_number() {
    // 400,000 fps DUT, no buffer: overload at 440,000 for 2 s, then 200,000 for 3 s; the DUT
    // loses everything for 0.25 s after the reduction: the last lost frame is number
    // 880,000 + 50,000 - 1, sent 0.25 s - 5 us after the reduction.
    let mut dut = SimDut::new(400_000.0, 1);
    dut.recovery_time_s = 0.25;
    let mut cfg = RecoveryConfig::new(64, 400_000);
    (cfg.overload_s, cfg.recovery_s) = (2.0, 3.0);
    let r = system_recovery(&mut dut, &cfg, &mut NoProgress).unwrap();
    assert_eq!(dut.log.len(), 1);
    let spec = &dut.log[0];
    assert_eq!((spec.rate, spec.duration_s), (440_000, 5.0));
    assert_eq!(spec.rate_change, Some(xlat_trial::RateChange { at_s: 2.0, rate: 200_000 }));
    let f = r.forward.as_ref().unwrap();
    assert!((f.last_lost_s.unwrap() - (2.0 + 49_999.0 / 200_000.0)).abs() < 1e-9, "{f:?}");
    assert!((r.recovery_time_s.unwrap() - 49_999.0 / 200_000.0).abs() < 1e-9);
    assert!(r.recovered && r.overloaded);
    assert_eq!(r.trials.len(), 1);
    assert_eq!((r.trials[0].phase.as_str(), r.trials[0].pass), ("recovery", Some(true)));
}
