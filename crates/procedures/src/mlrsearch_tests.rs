use super::*;
use crate::runner::NoProgress;
use xlat_testkit::sim::{LossModel, ModelDut, SimDut};

fn csit(name: &str, loss_ratio: f64) -> SearchGoal {
    SearchGoal {
        name: name.into(),
        loss_ratio,
        exceed_ratio: 0.5,
        width: 0.005,
        initial_trial_duration_s: 1.0,
        final_trial_duration_s: 1.0,
        duration_sum_s: 21.0,
    }
}

fn cfg(max_load: u64, goals: Vec<SearchGoal>) -> MlrConfig {
    let mut c = MlrConfig::new(64, max_load, 10.0);
    c.goals = goals;
    c
}

fn goal<'r>(r: &'r MlrResult, name: &str) -> &'r GoalResult {
    r.goals.iter().find(|g| g.goal.name == name).unwrap()
}

#[test]
fn ndr_and_pdr_of_a_forwarding_rate_limit_are_the_limit_and_the_limit_over_0_995() {
    let c = MlrConfig::new(64, 1_000_000, 10.0);
    let r = mlrsearch(&mut ModelDut::new(LossModel::Capacity { fps: 400_000.0 }, 1), &c, &mut NoProgress).unwrap();
    assert!(r.complete);
    let ndr = goal(&r, "NDR");
    let (l, u) = (ndr.relevant_lower_bound.unwrap(), ndr.relevant_upper_bound.unwrap());
    assert!(l <= 400_000 && u > 400_000 && (u - l) as f64 <= 0.005 * u as f64, "{l} {u}");
    assert_eq!(ndr.conditional_throughput, Some(l as f64));
    assert!(ndr.irregular.is_none());
    let pdr = goal(&r, "PDR");
    let edge = 400_000.0 / 0.995;
    let (l, u) = (pdr.relevant_lower_bound.unwrap() as f64, pdr.relevant_upper_bound.unwrap() as f64);
    assert!(l <= edge + 1.0 && u > edge && u - l <= 0.005 * u, "{l} {u}");
    // The conditional throughput takes away the loss at the lower bound.
    assert!(pdr.conditional_throughput.unwrap() <= l && pdr.conditional_throughput.unwrap() >= l * 0.995);
    // Every trial is in the search log, with what it decided.
    assert_eq!(r.search.len(), r.trials.len());
    assert!(r.search.iter().all(|t| t.classification.is_some()));
    // The goals' own targets use full-length trials; the first trials are short.
    assert_eq!(r.trials[0].duration_s, 1.0);
    assert!(r.trials.iter().any(|t| t.duration_s == 10.0));
}

#[test]
fn a_dut_that_forwards_everything_ends_at_max_load_as_a_lower_bound() {
    let c = MlrConfig::new(64, 100_000, 10.0);
    let r = mlrsearch(&mut SimDut::new(1e9, 1), &c, &mut NoProgress).unwrap();
    let ndr = goal(&r, "NDR");
    assert_eq!(ndr.relevant_lower_bound, Some(100_000));
    assert_eq!(ndr.relevant_upper_bound, None);
    assert!(ndr.irregular.as_deref().unwrap().contains("Max Load"));
    // One short trial at Max Load and one full-length: both goals reached.
    assert_eq!(r.trials.len(), 3, "{:?}", r.search);
}

#[test]
fn min_load_as_an_upper_bound_is_an_irregular_result_without_a_lower_bound() {
    let mut c = MlrConfig::new(64, 100_000, 10.0);
    c.min_load = 50_000;
    let r = mlrsearch(&mut ModelDut::new(LossModel::Step { at: 0.0, ratio: 0.1 }, 1), &c, &mut NoProgress).unwrap();
    for g in &r.goals {
        assert_eq!(g.relevant_lower_bound, None);
        assert_eq!(g.relevant_upper_bound, Some(50_000));
        assert_eq!(g.conditional_throughput, None);
        assert!(g.irregular.as_deref().unwrap().contains("Min Load"));
    }
}

#[test]
fn an_exceed_ratio_of_a_half_finds_the_median_load_of_a_noisy_dut() {
    // The limit varies +-10 % per trial: with exceed ratio 0.5 the NDR lies near the middle,
    // with exceed ratio 0 (RFC 2544) near the bottom.
    let model = LossModel::Noisy {
        fps: 500_000.0,
        noise: 0.1,
    };
    let c = cfg(1_000_000, vec![csit("NDR", 0.0)]);
    let r = mlrsearch(&mut ModelDut::new(model, 7), &c, &mut NoProgress).unwrap();
    let l = goal(&r, "NDR").relevant_lower_bound.unwrap() as f64;
    assert!((470_000.0..530_000.0).contains(&l), "{l}");
    let c = cfg(1_000_000, vec![SearchGoal::rfc2544("NDR", 0.0, 1.0)]);
    let r = mlrsearch(&mut ModelDut::new(model, 7), &c, &mut NoProgress).unwrap();
    let strict = goal(&r, "NDR").relevant_lower_bound.unwrap() as f64;
    assert!(strict < l, "{strict} {l}");
}

#[test]
fn a_tester_bound_load_ends_the_goal_below_it_and_says_so() {
    let c = MlrConfig::new(64, 1_000_000, 10.0);
    let mut dut = SimDut::new(2e6, 1).invalid_above(600_000);
    let r = mlrsearch(&mut dut, &c, &mut NoProgress).unwrap();
    let tb = r.tester_bound.unwrap();
    assert!(tb > 600_000);
    // A few loads per tester-bound step (4 attempts each), not one per width down from 1M.
    assert!(r.trials.len() < 60, "{} trials", r.trials.len());
    for g in &r.goals {
        let l = g.relevant_lower_bound.unwrap();
        assert!(l <= 600_000 && (tb - l) as f64 <= 0.005 * tb as f64 + 1.0, "{l} {tb}");
        assert!(g.irregular.as_deref().unwrap().contains("tester"), "{:?}", g.irregular);
    }
    // Below the lowest load: an error naming the tester.
    let mut c = MlrConfig::new(64, 1_000_000, 10.0);
    c.min_load = 700_000;
    let e = mlrsearch(&mut SimDut::new(2e6, 1).invalid_above(600_000), &c, &mut NoProgress).unwrap_err();
    assert!(matches!(e, ProcedureError::TesterLimit { .. }), "{e}");
}

#[test]
fn the_trial_limit_stops_the_search_with_its_trials_and_irregular_goals() {
    let mut c = MlrConfig::new(64, 1_000_000, 10.0);
    c.max_trials = 4;
    let r = mlrsearch(&mut ModelDut::new(LossModel::Capacity { fps: 400_000.0 }, 1), &c, &mut NoProgress).unwrap();
    assert!(!r.complete);
    assert_eq!(r.trials.len(), 4);
    assert!(r.goals.iter().all(|g| g.irregular.as_deref().unwrap().contains("max trials")));
}

#[test]
fn bad_goals_are_clear_errors_naming_the_attribute() {
    type Edit = fn(&mut SearchGoal);
    let cases: [(Edit, &str); 6] = [
        (|g| g.loss_ratio = 1.0, "Goal Loss Ratio (loss) must be in [0, 1), not 1"),
        (|g| g.loss_ratio = -0.1, "Goal Loss Ratio"),
        (|g| g.exceed_ratio = 1.0, "Goal Exceed Ratio"),
        (|g| g.width = 0.0, "Goal Width (width) must be above 0"),
        (
            |g| g.initial_trial_duration_s = 5.0,
            "Goal Final Trial Duration (final = 1 s) is shorter than the Goal Initial Trial Duration (initial = 5 s)",
        ),
        (|g| g.duration_sum_s = 0.5, "Goal Duration Sum (sum = 0.5 s) is shorter"),
    ];
    for (edit, want) in cases {
        let mut g = csit("X", 0.0);
        edit(&mut g);
        let c = cfg(1000, vec![g]);
        let e = mlrsearch(&mut SimDut::new(1e9, 1), &c, &mut NoProgress).unwrap_err().to_string();
        assert!(e.contains(want), "{e}");
    }
    let mut c = cfg(1000, vec![csit("X", 0.0), csit("X", 0.1)]);
    assert!(mlrsearch(&mut SimDut::new(1e9, 1), &c, &mut NoProgress)
        .unwrap_err()
        .to_string()
        .contains("two Search Goals"));
    c.goals.clear();
    assert!(c.validate().is_err());
}

#[test]
fn the_chain_of_targets_coarsens_towards_the_initial_duration() {
    let g = csit("PDR", 0.005);
    let targets = chain(&g, 2);
    assert_eq!(targets.len(), 3);
    // Coarsest first: duration sum = initial 1 s, width x4; then sqrt(21) s, width x2; then the goal.
    assert_eq!(targets[0].0.duration_sum_s, 1.0);
    assert!((targets[0].1 - 0.02).abs() < 1e-12);
    assert!((targets[1].0.duration_sum_s - 21f64.sqrt()).abs() < 1e-9);
    assert_eq!(targets[2].0, target(&g));
    assert_eq!(chain(&g, 0), vec![(target(&g), 0.005)]);
}

#[test]
fn goals_parse_from_presets_and_attributes_over_the_defaults() {
    let d = SearchGoal::rfc2544("NDR", 0.0, 60.0);
    assert_eq!(SearchGoal::parse("ndr", &d).unwrap(), d);
    let pdr = SearchGoal::parse("pdr", &d).unwrap();
    assert_eq!((pdr.name.as_str(), pdr.loss_ratio), ("PDR", 0.005));
    let g = SearchGoal::parse("name=PLR1, loss=1%, exceed=0.5, width=0.01, initial=2, final=5, sum=21", &d).unwrap();
    assert_eq!(g.name, "PLR1");
    assert!((g.loss_ratio - 0.01).abs() < 1e-15);
    assert_eq!((g.exceed_ratio, g.width, g.initial_trial_duration_s), (0.5, 0.01, 2.0));
    assert_eq!((g.final_trial_duration_s, g.duration_sum_s), (5.0, 21.0));
    assert_eq!(SearchGoal::parse("name=X,pdr", &d).unwrap().name, "X");
    for (bad, want) in [
        ("speed=3", "unknown goal attribute 'speed'"),
        ("loss=abc", "'abc' is not a number"),
        ("fast", "neither a preset"),
        ("name=a b", "goal name"),
    ] {
        let e = SearchGoal::parse(bad, &d).unwrap_err().to_string();
        assert!(e.contains(want), "{bad}: {e}");
    }
}

#[test]
fn a_stateful_search_runs_phase_1_before_every_trial() {
    let mut c = MlrConfig::new(64, 1_000_000, 10.0);
    c.trial.preliminary = Some(xlat_trial::PreliminarySpec {
        frames: 10_000,
        state_table: 10_000,
        rate: 100_000,
        timeout_ms: 100,
        phase_delay_ms: 300,
    });
    let mut dut = SimDut::new(400_000.0, 1);
    let r = mlrsearch(&mut dut, &c, &mut NoProgress).unwrap();
    assert!(r.complete);
    let ndr = goal(&r, "NDR").relevant_lower_bound.unwrap();
    assert!((398_000..=400_000).contains(&ndr), "{ndr}");
    assert_eq!(dut.log.len(), r.trials.len());
    assert!(dut.log.iter().all(|s| s.preliminary.is_some()));
    assert!(r.trials.iter().all(|t| t.preliminary.is_some()));
}
