//! MLRsearch (RFC 9971): the Search Goals, their parsing from the command line, and the result (`xlat_procedures::mlrsearch` runs the search).

use serde::{Deserialize, Serialize};

use crate::record::TrialRecord;

/// RFC 9971's example Goal Width (and CSIT's): 0.5 % of the upper bound.
pub const DEFAULT_WIDTH: f64 = 0.005;

/// Goal Initial Trial Duration, seconds.
pub const DEFAULT_INITIAL_S: f64 = 1.0;

/// CSIT's PDR loss ratio.
pub const PDR_LOSS_RATIO: f64 = 0.005;

/// Why a `--goal` value cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GoalError {
    #[error("'{0}' is neither a preset (ndr, pdr) nor key=value")]
    Part(String),
    #[error("goal name '{0}': use letters, digits, '_', '-', '.'")]
    Name(String),
    #[error("'{part}': '{value}' is not a number")]
    Number { part: String, value: String },
    #[error("unknown goal attribute '{0}' (name, loss, exceed, width, initial, final, sum)")]
    Attribute(String),
}

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
    pub fn parse(spec: &str, defaults: &SearchGoal) -> Result<SearchGoal, GoalError> {
        let mut g = defaults.clone();
        let mut named = false;
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let number = |v: &str| -> Result<f64, GoalError> {
                let (v, scale) = v.strip_suffix('%').map_or((v, 1.0), |p| (p, 0.01));
                v.trim().parse::<f64>().map(|x| x * scale).map_err(|_| GoalError::Number {
                    part: part.to_string(),
                    value: v.to_string(),
                })
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
                None => return Err(GoalError::Part(part.to_string())),
                Some((k, v)) => match k.trim() {
                    "name" => {
                        let v = v.trim();
                        if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) {
                            return Err(GoalError::Name(v.to_string()));
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
                    other => return Err(GoalError::Attribute(other.to_string())),
                },
            }
        }
        Ok(g)
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
/// RFC 9971 Load Classification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Classification {
    LowerBound,
    UpperBound,
    Undecided,
}

impl Classification {
    pub fn name(self) -> &'static str {
        match self {
            Classification::LowerBound => "lower bound",
            Classification::UpperBound => "upper bound",
            Classification::Undecided => "undecided",
        }
    }
}
