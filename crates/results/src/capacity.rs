//! The connection tracking table capacity (RFC 9693 section 4.3.1): the parameters the result records and the result (`xlat_procedures::capacity` runs the search).

use serde::{Deserialize, Serialize};
use xlat_trial::SendLag;

use crate::bound::Bound;
use crate::conn_rate::step_table;
use crate::record::TrialRecord;
use crate::result::BenchResult;
use crate::text::{group, text_table};
use crate::view::{Metric, Procedure};

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
    /// The tester's lag bound and catch-up pace, in every trial this builds.
    #[serde(default, skip_serializing_if = "SendLag::is_none")]
    pub send_lag: SendLag,
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
            send_lag: SendLag::default(),
        }
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

impl BenchResult for CapacityResult {
    fn procedure(&self) -> Procedure {
        Procedure::ConntrackCapacity
    }
    fn trials(&self) -> &[TrialRecord] {
        &self.trials
    }
    fn metrics(&self) -> Vec<(String, f64)> {
        let mut m = Vec::new();
        if let Some(c) = self.capacity {
            m.push(Metric::CapacityConnections.of(c as f64));
        }
        if let Some(r) = self.rate_at_capacity {
            m.push(Metric::ConnRateAtCapacityCps.of(r as f64));
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
