//! A rate at which the tester's catch-up overflowed the DUT's queue in every attempt (rule
//! `lag_harm`): the search counts it as a failure marked possibly the tester's, so its figure is
//! a lower bound "bounded by the DUT or the tester"; never a pass, never a clean DUT loss, never
//! the tester bound an unsendable rate is.

use xlat_procedures::*;
use xlat_results::*;
use xlat_testkit::sim::SimDut;

#[test]
fn a_loss_only_in_catch_ups_is_a_failure_possibly_the_testers() {
    // The DUT forwards 500,000 frames/s; above 300,000 the tester's catch-ups lose frames in it
    // (and above 500,000 it loses frames on schedule as well).
    let harm = 300_000;
    for method in [SearchMethod::Binary, SearchMethod::ShortThenConfirm { short_s: 2.0 }] {
        let mut dut = SimDut::new(500_000.0, 1).lag_harm_above(harm);
        let mut c = ThroughputConfig::new(84, 1_000_000, 1000);
        c.method = method.clone();
        c.retries = 2;
        let r = throughput(&mut dut, &c, &mut NoProgress).unwrap_or_else(|e| panic!("{method:?}: {e}"));
        assert!(r.throughput <= harm && harm - r.throughput <= 1000, "{method:?}: {}", r.throughput);
        let Bound::DutOrTester { rate, .. } = r.bound else {
            panic!("{method:?}: {:?}", r.bound)
        };
        assert!(rate > harm && rate <= r.upper, "{method:?}: {rate}");
        assert!(r.bound.at_least() && r.bound.describe("frames/s").contains("possibly the tester's burst"));
        assert_eq!(r.tester_bound, None, "not a rate the tester could not send");
        for t in &r.trials {
            if t.rate > 500_000 {
                // Beyond the DUT's capacity it loses on schedule too: its own failure, at once.
                assert_eq!((t.attempt, t.pass, t.possibly_tester), (1, Some(false), false), "{t:?}");
            } else if t.rate > harm {
                // Invalid attempts without a verdict, then the last one a failure, marked.
                assert!(!t.valid, "{t:?}");
                assert_eq!(t.pass, (t.attempt == 3).then_some(false), "{t:?}");
                assert_eq!(t.possibly_tester, t.attempt == 3, "{t:?}");
                assert!(!t.tester_bound, "{t:?}");
            } else {
                assert!(t.valid && !t.possibly_tester, "{t:?}");
            }
        }
        // The JSON says so.
        let json = serde_json::to_string(&r.trials).expect("json");
        assert!(json.contains("\"possibly_tester\":true") && json.contains("\"lag_harm\""), "{json}");
    }
}

#[test]
fn a_late_lossless_trial_passes_at_the_rate_offered_never_at_the_rate_asked() {
    // Nothing is lost up to 1,000,000 frames/s, but above 300,000 every trial ends late,
    // offering 95 % of its rate.
    for method in [SearchMethod::Binary, SearchMethod::ShortThenConfirm { short_s: 2.0 }] {
        let mut dut = SimDut::new(2_000_000.0, 1).late_above(300_000);
        let mut c = ThroughputConfig::new(84, 1_000_000, 1000);
        c.method = method;
        let r = throughput(&mut dut, &c, &mut NoProgress).expect("search");
        let offered: Vec<u64> = r.trials.iter().filter_map(|t| t.passed_at).collect();
        assert!(!offered.is_empty());
        for t in r.trials.iter().filter(|t| t.passed_at.is_some()) {
            assert!(t.pass == Some(true) && !t.valid && t.passed_at < Some(t.rate), "{t:?}");
        }
        // The figure is a rate some trial really offered without loss.
        let on_time: Vec<u64> = r
            .trials
            .iter()
            .filter(|t| t.pass == Some(true) && t.passed_at.is_none())
            .map(|t| t.rate)
            .collect();
        assert!(
            offered.contains(&r.throughput) || on_time.contains(&r.throughput),
            "{} not offered: {offered:?} {on_time:?}",
            r.throughput
        );
        assert!(r.throughput > 300_000, "late trials count: {}", r.throughput);
    }
}
