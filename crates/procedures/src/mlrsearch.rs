//! MLRsearch, RFC 9971 (Multiple Loss Ratio Search): one search finds a Conditional Throughput
//! for each of several Search Goals (NDR and PDR is the usual pair), with short trials where
//! they decide something and full-length trials where they must.
//!
//! What the RFC fixes, and this module follows exactly ([`crate::mlr_classify`]): the Search
//! Goal attributes ([`SearchGoal`]), the Trial Loss Ratio (frames lost over frames sent, all
//! directions together), Load Classification, the Relevant Lower and Upper Bounds and the
//! Conditional Throughput of each goal ([`GoalResult`]). What the RFC leaves to the
//! implementation is which load to measure next, and for how long; xlatperf does this:
//!
//! * Each goal is reached through a chain of targets, as the authors' implementation does:
//!   `preceding_targets` coarser ones (width doubled, duration sum shrinking geometrically from
//!   the Goal Duration Sum to the Goal Initial Trial Duration, trial duration the smaller of
//!   that sum and the Goal Final Trial Duration) and then the goal itself. A target is reached
//!   when its relevant bounds are within its width (relative to the upper bound), when Max Load
//!   is a lower bound, or when Min Load is an upper bound.
//! * The search works on the first goal (in the order given) whose own target is not reached,
//!   on its current target: the first of its chain not yet reached (a goal never goes back to
//!   a coarser target, as in the authors' implementation). Every trial counts for every goal (the
//!   classification of a load is computed afresh for each target from all trials at that load),
//!   so a goal's result can only rely on trials that its own rules accept, and a later goal's
//!   trials can change an earlier goal's bounds: the search ends only when every goal's own
//!   target is reached at once.
//! * For a target: the preceding target's relevant bounds, if this target has them Undecided
//!   (the upper first); then a load between the relevant bounds that is still Undecided (the
//!   nearest to the one bound there is, or with both the highest); else with both bounds, the midpoint; with only an upper bound,
//!   the smaller of its forwarding-rate estimate (load x (1 - loss ratio) / (1 - goal loss
//!   ratio)) and a step down of the target's width, doubled with each such step in a row;
//!   with only a lower bound, a step up likewise (never above Max Load); with both, the same
//!   step up from the lower bound while it stays below the midpoint, else the midpoint; with
//!   nothing, Max Load.
//! * A load whose trials stay invalid (the tester could not send it, [`crate::throughput`])
//!   is tester-bound: no load at or above it is measured or classified again, and a goal whose
//!   lower bound comes within its width of it ends irregular, naming the tester's limit.
//!   With no bound yet below it, the search steps down from it as from an upper bound
//!   (doubling steps): a tester that cannot keep up costs a few loads, not one per width.
//! * A search that has run `max_trials` trials (retries of invalid trials included) ends with
//!   the goals not yet reached marked irregular; a search is never endless.
//!
//! Loads are frames/s per direction (xlatperf's rate), whole numbers.

use std::collections::BTreeMap;
pub use xlat_results::mlrsearch::{GoalResult, MlrResult, MlrTrial, SearchGoal, DEFAULT_INITIAL_S, DEFAULT_WIDTH, PDR_LOSS_RATIO};

use serde::{Deserialize, Serialize};
use xlat_trial::{TrialReport, TrialSpec};

use crate::error::{config, ProcedureError};
use crate::mlr_classify::{classify, conditional_throughput, relevant_bounds, Classification, Target, TrialResult};
use crate::runner::{Progress, TrialRunner};
use crate::trial::{check_duration, lost_frames, Session};
use xlat_results::record::TrialRecord;

/// Coarser targets before each goal's own (the authors' implementation's default).
pub const DEFAULT_PRECEDING_TARGETS: u32 = 2;
/// The search stops after this many trials.
pub const DEFAULT_MAX_TRIALS: usize = 1000;

/// The parameters of an MLRsearch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MlrConfig {
    /// Frame size, timeout, burst, stateful phase 1; `rate` and `duration_s` are set per trial.
    pub trial: TrialSpec,
    /// Min Load and Max Load, frames/s per direction.
    pub min_load: u64,
    pub max_load: u64,
    pub goals: Vec<SearchGoal>,
    pub preceding_targets: u32,
    pub retries: u32,
    pub max_trials: usize,
}

impl MlrConfig {
    /// NDR and PDR (0.5 %) with RFC 2544's rules and trials of `duration_s`; Min Load a
    /// thousandth of Max Load.
    pub fn new(frame_size: usize, max_load: u64, duration_s: f64) -> MlrConfig {
        MlrConfig {
            trial: TrialSpec::new(frame_size, max_load, duration_s, xlat_results::defaults::DEFAULT_TIMEOUT_MS),
            min_load: (max_load / 1000).max(1),
            max_load,
            goals: vec![
                SearchGoal::rfc2544("NDR", 0.0, duration_s),
                SearchGoal::rfc2544("PDR", PDR_LOSS_RATIO, duration_s),
            ],
            preceding_targets: DEFAULT_PRECEDING_TARGETS,
            retries: xlat_results::defaults::DEFAULT_RETRIES,
            max_trials: DEFAULT_MAX_TRIALS,
        }
    }

    pub fn validate(&self) -> Result<(), ProcedureError> {
        if self.min_load == 0 {
            return config("Min Load must be at least 1 frame/s");
        }
        if self.min_load > self.max_load {
            return config(format!("Min Load ({}) is above Max Load ({})", self.min_load, self.max_load));
        }
        if self.goals.is_empty() {
            return config("MLRsearch needs at least one Search Goal");
        }
        for (i, g) in self.goals.iter().enumerate() {
            validate_goal(g)?;
            if self.goals[..i].iter().any(|o| o.name == g.name) {
                return config(format!("two Search Goals are named {}", g.name));
            }
        }
        if self.preceding_targets > 8 {
            return config(format!("at most 8 preceding targets, not {}", self.preceding_targets));
        }
        if self.max_trials == 0 {
            return config("the search needs at least 1 trial (max trials)");
        }
        Ok(())
    }
}

/// Trial Loss Ratio of a report: frames lost over frames sent, every active direction together.
pub fn trial_loss_ratio(report: &TrialReport) -> f64 {
    let (mut sent, mut lost) = (0u64, 0u64);
    for (_, d) in report.directions() {
        sent += d.counts.sent;
        lost += lost_frames(d);
    }
    if sent == 0 {
        0.0
    } else {
        lost as f64 / sent as f64
    }
}

/// Where a target stands.
#[derive(Debug, PartialEq)]
enum Next {
    Reached,
    /// Measure this load; `extending`: a step outwards from the one bound there is (the next
    /// such step in a row is twice as long).
    Measure {
        load: u64,
        extending: bool,
    },
}

/// Where the search stands with one goal: its current target in the chain (it never goes
/// back, as in the authors' implementation: a later target's trials may change an earlier
/// target's bounds, which no longer matter), the bounds the preceding target ended with,
/// and how many extension steps in a row the current target has taken.
#[derive(Debug, Clone, Default)]
struct GoalState {
    stage: usize,
    prev: Option<(Option<u64>, Option<u64>)>,
    steps: u32,
}

struct Search<'c> {
    cfg: &'c MlrConfig,
    /// Valid trials per load.
    db: BTreeMap<u64, Vec<TrialResult>>,
    /// The lowest tester-bound load: nothing at or above it counts.
    tester_bound: Option<u64>,
}

impl Search<'_> {
    fn classified(&self, target: &Target) -> Vec<(u64, Classification)> {
        let limit = self.tester_bound.unwrap_or(u64::MAX);
        self.db.range(..limit).map(|(&l, t)| (l, classify(t, target))).collect()
    }

    /// The highest load the search may try.
    fn top(&self, width: f64) -> u64 {
        match self.tester_bound {
            Some(tb) => tb.saturating_sub(((width * tb as f64) as u64).max(1)).min(self.cfg.max_load),
            None => self.cfg.max_load,
        }
    }

    /// The next load to measure for `target`, or `Reached`; `prev` is the relevant bounds of
    /// the target before it in its goal's chain.
    fn next(&self, target: &Target, width: f64, prev: Option<(Option<u64>, Option<u64>)>, steps: u32) -> Next {
        let (min, max) = (self.cfg.min_load, self.cfg.max_load);
        let classified = self.classified(target);
        let (rlb, rub) = relevant_bounds(classified.iter().copied());
        match (rlb, rub) {
            (Some(l), Some(u)) if (u - l) as f64 <= width * u as f64 => return Next::Reached,
            (Some(l), None) if l >= max => return Next::Reached,
            (Some(l), None) if self.tester_bound.is_some_and(|tb| (tb - l) as f64 <= width * tb as f64) => return Next::Reached,
            (None, Some(u)) if u <= min => return Next::Reached,
            _ => {}
        }
        let inside = |l: u64| rlb.is_none_or(|lo| l > lo) && rub.is_none_or(|hi| l < hi);
        let undecided = |l: u64| classified.iter().any(|&(x, c)| x == l && c == Classification::Undecided);
        // The preceding target's bounds first: this target's bounds are most likely there.
        if let Some((pl, pu)) = prev {
            if let Some(b) = [pu, pl].into_iter().flatten().find(|&b| undecided(b) && inside(b)) {
                return Next::Measure { load: b, extending: false };
            }
        }
        // Then a load between the bounds that is still undecided: the nearest to the one bound
        // there is, or with both (or none) the highest.
        let mut open = classified.iter().filter(|&&(l, c)| c == Classification::Undecided && inside(l));
        let again = match (rlb, rub) {
            (Some(_), None) => open.next(),
            _ => open.next_back(),
        };
        if let Some(&(l, _)) = again {
            return Next::Measure { load: l, extending: false };
        }
        let step = |from: u64| (width * from as f64 * 2f64.powi(steps.min(60) as i32)).max(1.0);
        // A tester-bound load bounds the search from above like an upper bound (without
        // being one: it is never a goal's Relevant Upper Bound).
        let ceiling = rub.or(self.tester_bound);
        let next = match (rlb, ceiling) {
            (None, None) => self.top(width),
            (Some(l), None) => {
                let up = (l as f64 + step(l)).min(self.top(width) as f64) as u64;
                if up <= l {
                    return Next::Reached;
                }
                up
            }
            (None, Some(u)) => {
                let mut down = (u as f64 - step(u)).max(0.0);
                if let Some(trials) = self.db.get(&u).filter(|_| rub.is_some()) {
                    let worst = trials.iter().map(|t| t.loss_ratio).fold(0.0, f64::max);
                    down = down.min(u as f64 * (1.0 - worst) / (1.0 - target.loss_ratio));
                }
                let down = (down as u64).max(min);
                if down >= u {
                    return Next::Reached;
                }
                return Next::Measure {
                    load: down,
                    extending: true,
                };
            }
            (Some(l), Some(u)) => {
                let mid = l + (u - l) / 2;
                if mid <= l {
                    return Next::Reached;
                }
                // A lower bound found by a forwarding-rate estimate is usually near the edge:
                // step up from it (doubling) while that stays below the midpoint.
                let up = l.saturating_add(step(l) as u64);
                if up < mid {
                    return Next::Measure { load: up, extending: true };
                }
                mid
            }
        };
        if next >= rub.unwrap_or(u64::MAX) {
            return Next::Reached;
        }
        Next::Measure {
            load: next,
            extending: rlb.is_some() && ceiling.is_none(),
        }
    }
}

/// Run an MLRsearch.
pub fn mlrsearch(runner: &mut dyn TrialRunner, cfg: &MlrConfig, progress: &mut dyn Progress) -> Result<MlrResult, ProcedureError> {
    cfg.validate()?;
    let mut s = Session::new(runner, progress, "mlrsearch", cfg.retries);
    let chains: Vec<Vec<(Target, f64)>> = cfg.goals.iter().map(|g| chain(g, cfg.preceding_targets)).collect();
    let mut search = Search {
        cfg,
        db: BTreeMap::new(),
        tester_bound: None,
    };
    let mut log: Vec<MlrTrial> = Vec::new();
    let mut states = vec![GoalState::default(); cfg.goals.len()];
    let mut complete = false;
    while s.trials.len() < cfg.max_trials {
        let mut todo = None;
        'goals: for (g, chain) in chains.iter().enumerate() {
            let st = &mut states[g];
            loop {
                let (target, width) = chain[st.stage];
                match search.next(&target, width, st.prev, st.steps) {
                    Next::Measure { load, extending } => {
                        st.steps = if extending { st.steps + 1 } else { 0 };
                        todo = Some((g, st.stage, load));
                        break 'goals;
                    }
                    Next::Reached if st.stage + 1 < chain.len() => {
                        st.prev = Some(relevant_bounds(search.classified(&target)));
                        st.stage += 1;
                        st.steps = 0;
                    }
                    Next::Reached => break,
                }
            }
        }
        let Some((g, k, load)) = todo else {
            complete = true;
            break;
        };
        let goal = &cfg.goals[g];
        let (target, _) = chains[g][k];
        let phase = format!("{} target {}/{}", goal.name, k + 1, chains[g].len());
        let (rlb, rub) = relevant_bounds(search.classified(&target));
        s.announce(&phase, load, rlb.unwrap_or(cfg.min_load), rub.unwrap_or(cfg.max_load), None);
        let spec = TrialSpec {
            rate: load,
            duration_s: target.final_duration_s,
            latency: None,
            ..cfg.trial.clone()
        };
        let out = s.run_judged(&spec, &phase, &|r| trial_loss_ratio(r) <= goal.loss_ratio)?;
        let mut entry = MlrTrial {
            trial: s.trials.len() - 1,
            goal: goal.name.clone(),
            target: k + 1,
            load,
            duration_s: spec.duration_s,
            loss_ratio: None,
            classification: None,
        };
        if out.pass.is_some() {
            let lr = trial_loss_ratio(&out.report);
            let trials = search.db.entry(load).or_default();
            trials.push(TrialResult {
                duration_s: spec.duration_s,
                loss_ratio: lr,
            });
            entry.loss_ratio = Some(lr);
            entry.classification = Some(classify(trials, &target));
        } else {
            if load <= cfg.min_load {
                return Err(s
                    .lowest_invalid
                    .as_ref()
                    .map_or_else(|| ProcedureError::Report("tester-bound".into()), |i| i.error()));
            }
            search.tester_bound = Some(search.tester_bound.map_or(load, |tb| tb.min(load)));
        }
        log.push(entry);
    }
    let goals = cfg
        .goals
        .iter()
        .map(|goal| goal_result(&search, goal, complete, cfg.max_trials, &s.trials))
        .collect();
    Ok(MlrResult {
        frame_size: cfg.trial.frame_size,
        min_load: cfg.min_load,
        max_load: cfg.max_load,
        preceding_targets: cfg.preceding_targets,
        goals,
        tester_bound: search.tester_bound,
        complete,
        trial_seconds: s.trial_seconds,
        elapsed_s: s.elapsed_s,
        search: log,
        trials: s.trials,
    })
}

fn goal_result(search: &Search<'_>, goal: &SearchGoal, complete: bool, max_trials: usize, trials: &[TrialRecord]) -> GoalResult {
    let target = target(goal);
    let (rlb, rub) = relevant_bounds(search.classified(&target));
    let ct = rlb.map(|l| conditional_throughput(l, &search.db[&l], &target));
    let within = matches!((rlb, rub), (Some(l), Some(u)) if (u - l) as f64 <= goal.width * u as f64);
    let irregular = match (rlb, rub) {
        _ if !complete && !within => Some(format!(
            "the search stopped after {max_trials} trials (max trials) before this goal's bounds were within its width"
        )),
        (Some(_), Some(_)) if within => None,
        (Some(l), Some(u)) => Some(format!(
            "the bounds [{l}, {u}] are not within the width: the interval could not be split further"
        )),
        (Some(l), None) => match search.tester_bound {
            Some(tb) if l < search.cfg.max_load => Some(format!(
                "no Upper Bound below {tb} frames/s, where the tester could not send (its trials were invalid): the DUT met \
                 this goal up to the Relevant Lower Bound and may be faster than measured"
            )),
            _ => Some(format!(
                "Max Load ({l} frames/s) is a Lower Bound: the DUT may be faster than Max Load"
            )),
        },
        (None, Some(u)) => Some(format!(
            "Min Load ({u} frames/s) is an Upper Bound: the DUT does not meet this goal at any load tried"
        )),
        (None, None) => Some("no load was classified for this goal".to_string()),
    };
    let bound = match (rlb, rub) {
        (_, Some(u)) => xlat_results::bound::Bound::Dut {
            rate: u,
            dut_busy: trials
                .iter()
                .rev()
                .find(|t| t.valid && t.rate == u)
                .and_then(|t| t.load.as_ref()?.dut.as_ref())
                .map(|d| d.busy),
        },
        (Some(l), None) => match search.tester_bound {
            Some(rate) if l < search.cfg.max_load => xlat_results::bound::Bound::Tester { rate },
            _ => xlat_results::bound::Bound::Range { max: search.cfg.max_load },
        },
        (None, None) => xlat_results::bound::Bound::Undetermined,
    };
    GoalResult {
        goal: goal.clone(),
        relevant_lower_bound: rlb,
        relevant_upper_bound: rub,
        conditional_throughput: ct,
        irregular,
        bound,
    }
}

/// Refuse a Search Goal that makes no sense (ratios outside [0, 1), durations out of order).
pub fn validate_goal(goal: &SearchGoal) -> Result<(), ProcedureError> {
    let n = &goal.name;
    let fraction = |what: &str, v: f64| -> Result<(), ProcedureError> {
        if !(v.is_finite() && (0.0..1.0).contains(&v)) {
            return config(format!("goal {n}: the {what} must be in [0, 1), not {v}"));
        }
        Ok(())
    };
    fraction("Goal Loss Ratio (loss)", goal.loss_ratio)?;
    fraction("Goal Exceed Ratio (exceed)", goal.exceed_ratio)?;
    if !(goal.width.is_finite() && goal.width > 0.0 && goal.width < 1.0) {
        return config(format!(
            "goal {n}: the Goal Width (width) must be above 0 and below 1, not {}",
            goal.width
        ));
    }
    check_duration(
        &format!("goal {n}: the Goal Initial Trial Duration (initial)"),
        goal.initial_trial_duration_s,
    )?;
    check_duration(
        &format!("goal {n}: the Goal Final Trial Duration (final)"),
        goal.final_trial_duration_s,
    )?;
    check_duration(&format!("goal {n}: the Goal Duration Sum (sum)"), goal.duration_sum_s)?;
    if goal.final_trial_duration_s < goal.initial_trial_duration_s {
        return config(format!(
            "goal {n}: the Goal Final Trial Duration (final = {} s) is shorter than the Goal Initial Trial Duration (initial = {} s)",
            goal.final_trial_duration_s, goal.initial_trial_duration_s
        ));
    }
    if goal.duration_sum_s < goal.final_trial_duration_s {
        return config(format!(
            "goal {n}: the Goal Duration Sum (sum = {} s) is shorter than the Goal Final Trial Duration (final = {} s)",
            goal.duration_sum_s, goal.final_trial_duration_s
        ));
    }
    Ok(())
}

/// The goal's own target.
fn target(goal: &SearchGoal) -> Target {
    Target {
        loss_ratio: goal.loss_ratio,
        exceed_ratio: goal.exceed_ratio,
        final_duration_s: goal.final_trial_duration_s,
        duration_sum_s: goal.duration_sum_s,
    }
}

/// The chain of targets towards the goal, coarsest first, the goal's own last, with each
/// one's relative width.
fn chain(goal: &SearchGoal, preceding: u32) -> Vec<(Target, f64)> {
    let own = target(goal);
    let mut chain = vec![(own, goal.width)];
    if preceding > 0 {
        let m = (goal.initial_trial_duration_s / goal.duration_sum_s).powf(1.0 / f64::from(preceding));
        let mut width = goal.width;
        for k in 1..=preceding {
            let sum = if k == preceding {
                goal.initial_trial_duration_s
            } else {
                goal.duration_sum_s * m.powi(k as i32)
            };
            width = (width * 2.0).min(0.5);
            let t = Target {
                final_duration_s: goal.final_trial_duration_s.min(sum),
                duration_sum_s: sum,
                ..own
            };
            chain.push((t, width));
        }
    }
    chain.reverse();
    chain
}

#[cfg(test)]
#[path = "mlrsearch_tests.rs"]
mod tests;
