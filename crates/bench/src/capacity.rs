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

use serde::{Deserialize, Serialize};

use crate::bound::Bound;
use crate::conn_rate::{search, step_table, Search};
use crate::error::{config, BenchError};
use crate::record::TrialRecord;
use crate::result::BenchResult;
use crate::runner::{Progress, TrialRunner};
use crate::text::{group, text_table};

/// The parameters of the capacity search (defaults: cttc.sh's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityConfig {
    pub frame_size: usize,
    /// C0: a number of connections the DUT surely holds (cttc.sh: 1,000,000).
    pub c0: u64,
    /// The highest connection establishment rate tried, connections/s (cttc.sh: 4,000,000).
    pub max_rate: u64,
    /// The rate searches stop when their interval is at most this wide (cttc.sh: 100,000).
    pub rate_error: u64,
    /// E: the capacity's resolution, connections (cttc.sh: 1).
    pub resolution: u64,
    /// alpha: the validation rate as a multiple of the step's rate (cttc.sh: 1).
    pub alpha: f64,
    /// beta: the exponential growth stops when the rate falls below beta x the last (0.2).
    pub beta: f64,
    /// gamma: in the bisection, a size fails when its rate falls below gamma x the last
    /// passing size's (0.4).
    pub gamma: f64,
    /// The exponential growth never tries more connections than this.
    pub max_connections: u64,
    /// T, ms.
    pub timeout_ms: u64,
    /// Invalid steps are run again this often before they bound a search.
    pub retries: u32,
}

impl CapacityConfig {
    pub fn new(frame_size: usize) -> CapacityConfig {
        CapacityConfig {
            frame_size,
            c0: 1_000_000,
            max_rate: 4_000_000,
            rate_error: 100_000,
            resolution: 1,
            alpha: 1.0,
            beta: 0.2,
            gamma: 0.4,
            max_connections: 1 << 30,
            timeout_ms: 500,
            retries: 1,
        }
    }

    pub fn validate(&self) -> Result<(), BenchError> {
        if self.c0 == 0 || self.max_connections < self.c0 {
            return config(format!(
                "--c0 {} must be at least 1 and at most --max-connections {}",
                self.c0, self.max_connections
            ));
        }
        if self.max_rate == 0 || self.rate_error == 0 {
            return config("--max-rate and --error must be above 0 connections/s");
        }
        if self.resolution == 0 {
            return config("--resolution must be at least 1 connection");
        }
        for (name, v) in [("--beta", self.beta), ("--gamma", self.gamma)] {
            if !(v > 0.0 && v < 1.0) {
                return config(format!("{name} {v} must be above 0 and below 1"));
            }
        }
        if !(self.alpha > 0.0 && self.alpha.is_finite()) {
            return config(format!("--alpha {} must be above 0", self.alpha));
        }
        Ok(())
    }
}

/// One rate search of the capacity search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacitySearch {
    /// "initial", "exponential" or "bisection".
    pub stage: String,
    pub connections: u64,
    /// The highest rate this search tried.
    pub max_rate: u64,
    /// A failing step below this rate ended the search early (0: none).
    pub stop_rate: u64,
    /// The highest rate at which every connection was established and validated.
    pub rate: Option<u64>,
    /// This size fits: the rate reached the stop rate.
    pub fits: bool,
    /// The lowest rate at which the tester itself could not send this search's phase 1 in
    /// time, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tester_bound: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityResult {
    pub config: CapacityConfig,
    /// The largest number of connections that fit (CS); `None` when not even C0 did.
    pub capacity: Option<u64>,
    /// The connection establishment rate at the capacity (RS).
    pub rate_at_capacity: Option<u64>,
    /// The smallest number of connections found not to fit (CT); `None` when the growth
    /// reached `max_connections` without one (the capacity is then at least that bound).
    pub first_too_many: Option<u64>,
    /// The lowest rate at which the tester itself could not send phase 1 in time, if any:
    /// the rates are bounded by the tester from there on.
    pub tester_bound: Option<u64>,
    /// What bounded the capacity: the DUT (`rate` is then the number of connections that did
    /// not fit, with the DUT's load in that search's last failing step), the tester (it could
    /// not send the search at that size fast enough to tell), the range (`max_connections`
    /// fitted), or undetermined (not even C0 fitted).
    #[serde(default)]
    pub bound: Bound,
    pub searches: Vec<CapacitySearch>,
    pub trials: Vec<TrialRecord>,
}

/// Run the capacity search.
pub fn conntrack_capacity(
    runner: &mut dyn TrialRunner,
    cfg: &CapacityConfig,
    progress: &mut dyn Progress,
) -> Result<CapacityResult, BenchError> {
    cfg.validate()?;
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
    fn run(&mut self, stage: &str, connections: u64, max_rate: u64, stop_rate: u64) -> Result<Option<u64>, BenchError> {
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

impl BenchResult for CapacityResult {
    fn procedure(&self) -> &'static str {
        "conntrack-capacity"
    }
    fn trials(&self) -> &[TrialRecord] {
        &self.trials
    }
    fn metrics(&self) -> Vec<(String, f64)> {
        let mut m = Vec::new();
        if let Some(c) = self.capacity {
            m.push(("capacity_connections".to_string(), c as f64));
        }
        if let Some(r) = self.rate_at_capacity {
            m.push(("conn_rate_at_capacity_cps".to_string(), r as f64));
        }
        m
    }
    fn human_table(&self) -> String {
        let c = &self.config;
        let mut s = format!(
            "Connection tracking table capacity, frame size {} (RFC 9693; C0 {}, alpha {}, beta {}, gamma {}, resolution {})\n",
            c.frame_size,
            group(c.c0),
            c.alpha,
            c.beta,
            c.gamma,
            group(c.resolution)
        );
        let rows: Vec<Vec<String>> = self
            .searches
            .iter()
            .map(|x| {
                vec![
                    x.stage.clone(),
                    group(x.connections),
                    group(x.max_rate),
                    group(x.stop_rate),
                    x.rate.map_or("none".into(), group),
                    if x.fits { "fits" } else { "too many" }.into(),
                ]
            })
            .collect();
        s.push_str(&text_table(
            &["search", "connections", "max rate", "stop below", "rate found", "verdict"],
            &rows,
        ));
        s.push_str("steps:\n");
        s.push_str(&step_table(&self.trials, true));
        s.push_str(&format!("{}\n", self.headline()));
        if let Some(b) = self.tester_bound {
            s.push_str(&format!(
                "note: the tester could not send phase 1 in time at {} conn/s: the rates are bounded by the tester\n",
                group(b)
            ));
        }
        if self.capacity.is_some() {
            s.push_str(&format!("{}\n", self.bound.describe("connections")));
        }
        s
    }
    fn headline(&self) -> String {
        match (self.capacity, self.first_too_many) {
            (Some(c), Some(t)) => format!(
                "{} B: {} connections fit ({} did not; {} conn/s at the capacity)",
                self.config.frame_size,
                group(c),
                group(t),
                self.rate_at_capacity.map_or("-".into(), group)
            ),
            (Some(c), None) => format!("{} B: at least {} connections fit", self.config.frame_size, group(c)),
            (None, _) => format!(
                "{} B: not even C0 = {} connections fit: give a smaller --c0",
                self.config.frame_size,
                group(self.config.c0)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::NoProgress;
    use crate::sim::SimDut;

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
    struct SlowerWithMore(SimDut);

    impl TrialRunner for SlowerWithMore {
        fn run(&mut self, spec: &xlat_trial::TrialSpec) -> Result<xlat_trial::TrialReport, xlat_trial::TrialError> {
            self.0.run(spec)
        }
        fn run_preliminary(
            &mut self,
            spec: &xlat_trial::TrialSpec,
            validation: Option<u64>,
        ) -> Result<xlat_trial::TrialReport, xlat_trial::TrialError> {
            let mut r = self.0.run_preliminary(spec, validation)?;
            let p = spec.preliminary.expect("phase 1");
            let limit = if p.state_table <= 2_000 { 20_000 } else { 1_000 };
            if p.rate > limit {
                r.invalidate("Preliminary sending was too slow".into());
            }
            Ok(r)
        }
    }

    #[test]
    fn a_size_the_tester_could_not_send_fast_enough_to_judge_is_the_testers_bound() {
        let mut dut = SlowerWithMore(SimDut::new(1e9, 1));
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
