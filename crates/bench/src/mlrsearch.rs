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

use serde::{Deserialize, Serialize};
use xlat_trial::{TrialReport, TrialSpec};

use crate::error::{config, BenchError};
use crate::mlr_classify::{classify, conditional_throughput, relevant_bounds, Classification, Target, TrialResult};
use crate::record::TrialRecord;
use crate::runner::{Progress, TrialRunner};
use crate::trial::{check_duration, lost_frames, Session};

/// RFC 9971's example Goal Width (and CSIT's): 0.5 % of the upper bound.
pub const DEFAULT_WIDTH: f64 = 0.005;
/// Goal Initial Trial Duration, seconds.
pub const DEFAULT_INITIAL_S: f64 = 1.0;
/// Coarser targets before each goal's own (the authors' implementation's default).
pub const DEFAULT_PRECEDING_TARGETS: u32 = 2;
/// The search stops after this many trials.
pub const DEFAULT_MAX_TRIALS: usize = 1000;
/// CSIT's PDR loss ratio.
pub const PDR_LOSS_RATIO: f64 = 0.005;

/// An RFC 9971 Search Goal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchGoal {
    /// A name for reports ("NDR", "PDR", ...).
    pub name: String,
    /// Goal Loss Ratio: a trial with a higher loss ratio is high-loss.
    pub loss_ratio: f64,
    /// Goal Exceed Ratio: the share of the duration sum that high-loss trials may take.
    pub exceed_ratio: f64,
    /// Goal Width, relative to the Relevant Upper Bound.
    pub width: f64,
    /// Goal Initial Trial Duration, seconds.
    pub initial_trial_duration_s: f64,
    /// Goal Final Trial Duration, seconds: trials at least this long are full-length.
    pub final_trial_duration_s: f64,
    /// Goal Duration Sum, seconds.
    pub duration_sum_s: f64,
}

impl SearchGoal {
    /// A goal with RFC 2544's rules (as RFC 9971's section on compliance sets them): one full-length
    /// trial of `duration_s` decides a load (Goal Duration Sum = Goal Final Trial Duration, Goal
    /// Exceed Ratio 0), width 0.5 %, initial trials of 1 s (or `duration_s` if shorter).
    pub fn rfc2544(name: &str, loss_ratio: f64, duration_s: f64) -> SearchGoal {
        SearchGoal {
            name: name.to_string(),
            loss_ratio,
            exceed_ratio: 0.0,
            width: DEFAULT_WIDTH,
            initial_trial_duration_s: DEFAULT_INITIAL_S.min(duration_s),
            final_trial_duration_s: duration_s,
            duration_sum_s: duration_s,
        }
    }

    /// A goal from a command line's `--goal` value: comma-separated `key=value` pairs (`name`,
    /// `loss`, `exceed`, `width`, `initial`, `final`, `sum`; ratios as fractions or with `%`)
    /// and the presets `ndr` (loss 0) and `pdr` (loss 0.005, named PDR), over `defaults`.
    pub fn parse(spec: &str, defaults: &SearchGoal) -> Result<SearchGoal, String> {
        let mut g = defaults.clone();
        let mut named = false;
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let number = |v: &str| -> Result<f64, String> {
                let (v, scale) = v.strip_suffix('%').map_or((v, 1.0), |p| (p, 0.01));
                v.trim()
                    .parse::<f64>()
                    .map(|x| x * scale)
                    .map_err(|_| format!("'{part}': '{v}' is not a number"))
            };
            match part.split_once('=') {
                None if part.eq_ignore_ascii_case("ndr") => {
                    g.loss_ratio = 0.0;
                    if !named {
                        g.name = "NDR".into();
                    }
                }
                None if part.eq_ignore_ascii_case("pdr") => {
                    g.loss_ratio = PDR_LOSS_RATIO;
                    if !named {
                        g.name = "PDR".into();
                    }
                }
                None => return Err(format!("'{part}' is neither a preset (ndr, pdr) nor key=value")),
                Some((k, v)) => match k.trim() {
                    "name" => {
                        let v = v.trim();
                        if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) {
                            return Err(format!("goal name '{v}': use letters, digits, '_', '-', '.'"));
                        }
                        g.name = v.to_string();
                        named = true;
                    }
                    "loss" => g.loss_ratio = number(v)?,
                    "exceed" => g.exceed_ratio = number(v)?,
                    "width" => g.width = number(v)?,
                    "initial" => g.initial_trial_duration_s = number(v)?,
                    "final" => g.final_trial_duration_s = number(v)?,
                    "sum" => g.duration_sum_s = number(v)?,
                    other => {
                        return Err(format!(
                            "unknown goal attribute '{other}' (name, loss, exceed, width, initial, final, sum)"
                        ))
                    }
                },
            }
        }
        Ok(g)
    }

    pub fn validate(&self) -> Result<(), BenchError> {
        let n = &self.name;
        let fraction = |what: &str, v: f64| -> Result<(), BenchError> {
            if !(v.is_finite() && (0.0..1.0).contains(&v)) {
                return config(format!("goal {n}: the {what} must be in [0, 1), not {v}"));
            }
            Ok(())
        };
        fraction("Goal Loss Ratio (loss)", self.loss_ratio)?;
        fraction("Goal Exceed Ratio (exceed)", self.exceed_ratio)?;
        if !(self.width.is_finite() && self.width > 0.0 && self.width < 1.0) {
            return config(format!(
                "goal {n}: the Goal Width (width) must be above 0 and below 1, not {}",
                self.width
            ));
        }
        check_duration(
            &format!("goal {n}: the Goal Initial Trial Duration (initial)"),
            self.initial_trial_duration_s,
        )?;
        check_duration(
            &format!("goal {n}: the Goal Final Trial Duration (final)"),
            self.final_trial_duration_s,
        )?;
        check_duration(&format!("goal {n}: the Goal Duration Sum (sum)"), self.duration_sum_s)?;
        if self.final_trial_duration_s < self.initial_trial_duration_s {
            return config(format!(
                "goal {n}: the Goal Final Trial Duration (final = {} s) is shorter than the Goal Initial Trial Duration (initial = {} s)",
                self.final_trial_duration_s, self.initial_trial_duration_s
            ));
        }
        if self.duration_sum_s < self.final_trial_duration_s {
            return config(format!(
                "goal {n}: the Goal Duration Sum (sum = {} s) is shorter than the Goal Final Trial Duration (final = {} s)",
                self.duration_sum_s, self.final_trial_duration_s
            ));
        }
        Ok(())
    }

    /// The goal's own target.
    fn target(&self) -> Target {
        Target {
            loss_ratio: self.loss_ratio,
            exceed_ratio: self.exceed_ratio,
            final_duration_s: self.final_trial_duration_s,
            duration_sum_s: self.duration_sum_s,
        }
    }

    /// The chain of targets towards the goal, coarsest first, the goal's own last, with each
    /// one's relative width.
    fn chain(&self, preceding: u32) -> Vec<(Target, f64)> {
        let own = self.target();
        let mut chain = vec![(own, self.width)];
        if preceding > 0 {
            let m = (self.initial_trial_duration_s / self.duration_sum_s).powf(1.0 / f64::from(preceding));
            let mut width = self.width;
            for k in 1..=preceding {
                let sum = if k == preceding {
                    self.initial_trial_duration_s
                } else {
                    self.duration_sum_s * m.powi(k as i32)
                };
                width = (width * 2.0).min(0.5);
                let t = Target {
                    final_duration_s: self.final_trial_duration_s.min(sum),
                    duration_sum_s: sum,
                    ..own
                };
                chain.push((t, width));
            }
        }
        chain.reverse();
        chain
    }
}

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
            trial: TrialSpec::new(frame_size, max_load, duration_s, crate::throughput::DEFAULT_TIMEOUT_MS),
            min_load: (max_load / 1000).max(1),
            max_load,
            goals: vec![
                SearchGoal::rfc2544("NDR", 0.0, duration_s),
                SearchGoal::rfc2544("PDR", PDR_LOSS_RATIO, duration_s),
            ],
            preceding_targets: DEFAULT_PRECEDING_TARGETS,
            retries: crate::throughput::DEFAULT_RETRIES,
            max_trials: DEFAULT_MAX_TRIALS,
        }
    }

    pub fn validate(&self) -> Result<(), BenchError> {
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
            g.validate()?;
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

/// What the search found for one goal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoalResult {
    pub goal: SearchGoal,
    /// Relevant Lower Bound, frames/s per direction.
    pub relevant_lower_bound: Option<u64>,
    /// Relevant Upper Bound, frames/s per direction.
    pub relevant_upper_bound: Option<u64>,
    /// Conditional Throughput at the Relevant Lower Bound, frames/s per direction.
    pub conditional_throughput: Option<f64>,
    /// Why this is an Irregular Goal Result (a bound missing, the bounds not within the width);
    /// `None` for a regular one.
    pub irregular: Option<String>,
    /// What bounded the Relevant Lower Bound: the DUT (an Upper Bound above it, with the DUT's
    /// CPU load in a trial there), the tester, or Max Load (then the result is at least this).
    #[serde(default)]
    pub bound: crate::bound::Bound,
}

/// One trial of the search and what it decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MlrTrial {
    /// The trial's index in `trials`.
    pub trial: usize,
    /// The goal and target (1 = coarsest; the goal's own is the last) it was measured for.
    pub goal: String,
    pub target: usize,
    pub load: u64,
    pub duration_s: f64,
    /// Trial Loss Ratio; `None` when the trial stayed invalid (tester-bound).
    pub loss_ratio: Option<f64>,
    /// The load's classification for that target with this trial added.
    pub classification: Option<Classification>,
}

/// The result of an MLRsearch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MlrResult {
    pub frame_size: usize,
    pub min_load: u64,
    pub max_load: u64,
    pub preceding_targets: u32,
    pub goals: Vec<GoalResult>,
    /// The lowest load the tester could not send (every attempt invalid).
    pub tester_bound: Option<u64>,
    /// Every goal's own target was reached (false: stopped at `max_trials`).
    pub complete: bool,
    /// Trial durations summed, retries included, seconds.
    pub trial_seconds: f64,
    /// Test time including timeouts, seconds.
    pub elapsed_s: f64,
    pub search: Vec<MlrTrial>,
    pub trials: Vec<TrialRecord>,
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
pub fn mlrsearch(runner: &mut dyn TrialRunner, cfg: &MlrConfig, progress: &mut dyn Progress) -> Result<MlrResult, BenchError> {
    cfg.validate()?;
    let mut s = Session::new(runner, progress, "mlrsearch", cfg.retries);
    let chains: Vec<Vec<(Target, f64)>> = cfg.goals.iter().map(|g| g.chain(cfg.preceding_targets)).collect();
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
                    .map_or_else(|| BenchError::Report("tester-bound".into()), |i| i.error()));
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
    let target = goal.target();
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
        (_, Some(u)) => crate::bound::Bound::Dut {
            rate: u,
            dut_busy: trials
                .iter()
                .rev()
                .find(|t| t.valid && t.rate == u)
                .and_then(|t| t.load.as_ref()?.dut.as_ref())
                .map(|d| d.busy),
        },
        (Some(l), None) => match search.tester_bound {
            Some(rate) if l < search.cfg.max_load => crate::bound::Bound::Tester { rate },
            _ => crate::bound::Bound::Range { max: search.cfg.max_load },
        },
        (None, None) => crate::bound::Bound::Undetermined,
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

#[cfg(test)]
#[path = "mlrsearch_tests.rs"]
mod tests;
