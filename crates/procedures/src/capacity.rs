//! Connection tracking table capacity (RFC 9693 section 4.5; siitperf's `cttc.sh`, STATEFUL.md
//! 10.3). The number of connections C the DUT can hold is found from the connection
//! establishment rate: while C fits, the rate found at C stays near the rate found at smaller
//! sizes; past the capacity it collapses (the DUT drops connections, so the validation that
//! every learnt connection still answers fails at any rate).
//!
//! Each measurement is a connection establishment rate search at C connections, every step
//! validated ([`crate::conn_rate`]'s search, with the Responder sending to every learnt tuple at
//! alpha x the step's rate). The procedure:
//! 1. R0 = search(C0, max rate): C0 must be a safe size (every connection fits).
//! 2. Exponential growth: CT = 2 CS, RT = search(CT, RS) stopping early below beta RS; while
//!    RT >= beta RS: CS = CT, RS = RT.
//! 3. Bisection while CT - CS > E: C = (CS + CT) / 2, R = search(C, RS) stopping early below
//!    gamma RS; R >= gamma RS: CS = C, RS = R; else CT = C.
//!
//! The capacity is CS. Every search is in the result (`searches`), every step in `trials`
//! (labelled with its search). Unlike cttc.sh, each search tries its highest rate first, so a
//! size that fits at the previous rate costs one step, and a `max_connections` bounds the
//! exponential growth of a DUT that never fills (the result then says so).

pub use xlat_results::capacity::{CapacityConfig, CapacityResult, CapacitySearch};

use crate::conn_rate::{search, Search};
use crate::error::{config, ProcedureError};
use crate::runner::{Progress, TrialRunner};
use xlat_results::bound::Bound;
use xlat_results::record::TrialRecord;
use xlat_results::text::group;

/// Run the capacity search.
pub fn conntrack_capacity(
    runner: &mut dyn TrialRunner,
    cfg: &CapacityConfig,
    progress: &mut dyn Progress,
) -> Result<CapacityResult, ProcedureError> {
    validate(cfg)?;
    let mut state = Searches {
        runner,
        cfg,
        progress,
        trials: Vec::new(),
        searches: Vec::new(),
        elapsed_s: 0.0,
        tester_bound: None,
    };
    let mut result = CapacityResult {
        config: cfg.clone(),
        capacity: None,
        rate_at_capacity: None,
        first_too_many: None,
        tester_bound: None,
        bound: Bound::Undetermined,
        searches: Vec::new(),
        trials: Vec::new(),
    };
    let (mut cs, mut rs) = match state.run("initial", cfg.c0, cfg.max_rate, 0)? {
        Some(r) => (cfg.c0, r),
        None => {
            result.first_too_many = Some(cfg.c0);
            return Ok(state.finish(result));
        }
    };
    let mut ct = None;
    while cs < cfg.max_connections {
        let c = cs.saturating_mul(2).min(cfg.max_connections);
        let stop = (rs as f64 * cfg.beta).ceil() as u64;
        match state.run("exponential", c, rs, stop)? {
            Some(r) if r >= stop => (cs, rs) = (c, r),
            _ => {
                ct = Some(c);
                break;
            }
        }
    }
    if let Some(mut t) = ct {
        while t - cs > cfg.resolution {
            let c = cs + (t - cs) / 2;
            let stop = (rs as f64 * cfg.gamma).ceil() as u64;
            match state.run("bisection", c, rs, stop)? {
                Some(r) if r >= stop => (cs, rs) = (c, r),
                _ => t = c,
            }
        }
        ct = Some(t);
    }
    result.capacity = Some(cs);
    result.rate_at_capacity = Some(rs);
    result.first_too_many = ct;
    Ok(state.finish(result))
}

/// The searches run so far.
struct Searches<'r, 'c, 'p> {
    runner: &'r mut dyn TrialRunner,
    cfg: &'c CapacityConfig,
    progress: &'p mut dyn Progress,
    trials: Vec<TrialRecord>,
    searches: Vec<CapacitySearch>,
    elapsed_s: f64,
    tester_bound: Option<u64>,
}

impl Searches<'_, '_, '_> {
    /// One validated rate search at `connections`, from `max_rate` down; its highest passing
    /// rate.
    fn run(&mut self, stage: &str, connections: u64, max_rate: u64, stop_rate: u64) -> Result<Option<u64>, ProcedureError> {
        let cfg = self.cfg;
        let label = format!("{stage} C={}", group(connections));
        let s = Search {
            procedure: "conntrack-capacity",
            label: &label,
            frame_size: cfg.frame_size,
            connections,
            max_rate: max_rate.max(1),
            first: max_rate.max(1),
            step_down: None,
            error: cfg.rate_error,
            timeout_ms: cfg.timeout_ms,
            retries: cfg.retries,
            validation: Some(cfg.alpha),
            send_lag: cfg.send_lag,
            stop_below: stop_rate,
        };
        let found = search(&mut *self.runner, &s, &mut self.trials, &mut self.elapsed_s, &mut *self.progress)?;
        if let Some(b) = found.tester_bound {
            self.tester_bound = Some(self.tester_bound.map_or(b, |x| x.min(b)));
        }
        self.searches.push(CapacitySearch {
            stage: stage.to_string(),
            connections,
            max_rate,
            stop_rate,
            rate: found.rate,
            fits: found.rate.is_some_and(|r| r >= stop_rate),
            tester_bound: found.tester_bound,
        });
        Ok(found.rate)
    }

    fn finish(self, mut r: CapacityResult) -> CapacityResult {
        r.tester_bound = self.tester_bound;
        r.bound = capacity_bound(&r, &self.searches, &self.trials);
        r.searches = self.searches;
        r.trials = self.trials;
        r
    }
}

/// What bounded the capacity `r` found by `searches` (see [`CapacityResult::bound`]): the
/// last search at the first size that did not fit says whether the DUT or the tester failed it.
fn capacity_bound(r: &CapacityResult, searches: &[CapacitySearch], trials: &[TrialRecord]) -> Bound {
    if r.capacity.is_none() {
        return Bound::Undetermined;
    }
    let Some(too_many) = r.first_too_many else {
        return Bound::Range {
            max: r.config.max_connections,
        };
    };
    let Some(failed) = searches.iter().rev().find(|x| x.connections == too_many && !x.fits) else {
        return Bound::Undetermined;
    };
    // The tester bounds the verdict when it could not send even the rate below which the size
    // counts as not fitting, or when nothing of the search was judged; a judged failure
    // otherwise is the DUT's.
    let label = format!("{} C={}", failed.stage, group(too_many));
    let last_failure = trials.iter().rev().find(|t| t.phase == label && t.pass == Some(false));
    match (failed.tester_bound, last_failure) {
        (Some(rate), _) if rate <= failed.stop_rate => Bound::Tester { rate },
        (_, Some(t)) => Bound::Dut {
            rate: too_many,
            dut_busy: t.load.as_ref().and_then(|l| l.dut.as_ref()).map(|d| d.busy),
        },
        (Some(rate), None) => Bound::Tester { rate },
        (None, None) => Bound::Undetermined,
    }
}

/// Refuse a capacity search that makes no sense.
pub fn validate(cfg: &CapacityConfig) -> Result<(), ProcedureError> {
    if cfg.c0 == 0 || cfg.max_connections < cfg.c0 {
        return config(format!(
            "--c0 {} must be at least 1 and at most --max-connections {}",
            cfg.c0, cfg.max_connections
        ));
    }
    if cfg.max_rate == 0 || cfg.rate_error == 0 {
        return config("--max-rate and --error must be above 0 connections/s");
    }
    if cfg.resolution == 0 {
        return config("--resolution must be at least 1 connection");
    }
    for (name, v) in [("--beta", cfg.beta), ("--gamma", cfg.gamma)] {
        if !(v > 0.0 && v < 1.0) {
            return config(format!("{name} {v} must be above 0 and below 1"));
        }
    }
    if !(cfg.alpha > 0.0 && cfg.alpha.is_finite()) {
        return config(format!("--alpha {} must be above 0", cfg.alpha));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::NoProgress;
    use xlat_results::BenchResult;
    use xlat_testkit::fake::Fake;
    use xlat_testkit::sim::SimDut;

    fn cfg() -> CapacityConfig {
        CapacityConfig {
            c0: 1_000,
            max_rate: 100_000,
            rate_error: 10_000,
            resolution: 10,
            timeout_ms: 10,
            ..CapacityConfig::new(84)
        }
    }

    #[test]
    fn finds_the_table_size_within_the_resolution() {
        for cap in [1_000, 1_001, 5_000, 7_777, 200_000] {
            let mut dut = SimDut::new(1e9, 1).table_capacity(cap);
            let r = conntrack_capacity(&mut dut, &cfg(), &mut NoProgress).unwrap();
            let c = r.capacity.unwrap();
            assert!(c <= cap && cap - c <= 10, "capacity {cap}: found {c}");
            let t = r.first_too_many.unwrap();
            assert!(t > cap && t - c <= 10, "{c} {t}");
            // Every search is reported, the first at C0 and max rate.
            assert_eq!((r.searches[0].connections, r.searches[0].max_rate), (1_000, 100_000));
            assert!(r.searches.iter().any(|s| s.stage == "bisection") || t - c <= 10);
            // Each step was validated.
            assert!(r.trials.iter().all(|t| t.reverse.is_some()));
            assert!(r.human_table().contains("connections fit"), "{}", r.human_table());
            assert_eq!(r.bound, Bound::Dut { rate: t, dut_busy: None });
        }
    }

    #[test]
    fn every_step_is_validated_at_alpha_times_its_rate() {
        // Without validation a full Linux table passes phase 1: the search would grow forever.
        let mut dut = SimDut::new(1e9, 1).table_capacity(3_000);
        let c = CapacityConfig { alpha: 0.5, ..cfg() };
        let r = conntrack_capacity(&mut dut, &c, &mut NoProgress).unwrap();
        let found = r.capacity.unwrap();
        assert!((2_990..=3_000).contains(&found), "{found}");
        let first = &r.trials[0];
        assert_eq!(first.rate, 100_000);
        assert_eq!(first.reverse.as_ref().unwrap().achieved_rate, 50_000.0);
    }

    #[test]
    fn a_dut_that_never_fills_stops_at_the_bound_and_says_so() {
        let mut dut = SimDut::new(1e9, 1);
        let c = CapacityConfig {
            max_connections: 10_000,
            ..cfg()
        };
        let r = conntrack_capacity(&mut dut, &c, &mut NoProgress).unwrap();
        assert_eq!((r.capacity, r.first_too_many), (Some(10_000), None));
        assert_eq!(r.searches.len(), 5, "1,000 2,000 4,000 8,000 10,000");
        assert!(r.human_table().contains("at least"), "{}", r.human_table());
        assert_eq!(r.bound, Bound::Range { max: 10_000 });
    }

    /// A tester that sends phase 1 at 20,000 conn/s up to 2,000 connections and at 1,000 above.
    fn slower_with_more(mut dut: SimDut) -> Fake<'static> {
        Fake::preliminary(move |spec, validation| {
            let mut r = dut.run_preliminary(spec, validation)?;
            let p = spec.preliminary.expect("phase 1");
            let limit = if p.state_table <= 2_000 { 20_000 } else { 1_000 };
            if p.rate > limit {
                r.invalidate("Preliminary sending was too slow".into());
            }
            Ok(r)
        })
    }

    #[test]
    fn a_size_the_tester_could_not_send_fast_enough_to_judge_is_the_testers_bound() {
        let mut dut = slower_with_more(SimDut::new(1e9, 1));
        let r = conntrack_capacity(&mut dut, &cfg(), &mut NoProgress).unwrap();
        // 2,000 fit at about 20,000 conn/s; above, the tester could not send a single step the
        // searches tried (down to their precision): no size above was judged the DUT's.
        assert_eq!(r.capacity, Some(2_000), "{}", r.human_table());
        assert!(matches!(r.bound, Bound::Tester { .. }), "{:?}", r.bound);
        assert!(r.human_table().contains("bounded by the tester"), "{}", r.human_table());
    }

    #[test]
    fn c0_that_does_not_fit_is_reported_not_searched_past() {
        let mut dut = SimDut::new(1e9, 1).table_capacity(500);
        let r = conntrack_capacity(&mut dut, &cfg(), &mut NoProgress).unwrap();
        assert_eq!(r.capacity, None);
        assert_eq!(r.searches.len(), 1);
        assert!(r.headline().contains("smaller --c0"), "{}", r.headline());
        assert_eq!(r.bound, Bound::Undetermined);
    }

    #[test]
    fn a_slow_establishing_dut_is_not_mistaken_for_a_full_one() {
        // Connections established at 30,000/s at most: the rate searches find ~30,000 at
        // every size that fits, and the capacity is still the table's.
        let mut dut = SimDut::new(1e9, 1).table_capacity(4_000).preliminary_capacity(30_000.0);
        let r = conntrack_capacity(&mut dut, &cfg(), &mut NoProgress).unwrap();
        let found = r.capacity.unwrap();
        assert!((3_990..=4_000).contains(&found), "{found}");
        let rate = r.rate_at_capacity.unwrap();
        assert!((20_000..=30_000).contains(&rate), "{rate}");
    }

    #[test]
    fn bad_parameters_are_refused() {
        for c in [
            CapacityConfig { c0: 0, ..cfg() },
            CapacityConfig { beta: 1.0, ..cfg() },
            CapacityConfig { gamma: 0.0, ..cfg() },
            CapacityConfig { resolution: 0, ..cfg() },
            CapacityConfig { alpha: -1.0, ..cfg() },
            CapacityConfig {
                max_connections: 10,
                ..cfg()
            },
        ] {
            assert!(conntrack_capacity(&mut SimDut::new(1e9, 1), &c, &mut NoProgress).is_err(), "{c:?}");
        }
    }
}
