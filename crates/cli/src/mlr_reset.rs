//! The commands of RFC 9971 and RFC 6201: `mlrsearch` (Search Goals from `--goal`, checked
//! before any trial) and `reset` (the `[dut] reset` command during a trial), on top of the
//! procedure commands' runner and outputs ([`crate::procedures`]).

use anyhow::{anyhow, bail, Result};
use xlat_procedures::{MlrConfig, ResetConfig};
use xlat_results::{MlrResult, Procedure, ResetResult, SearchGoal, SizeResult};

use crate::procedures::{config_error, per_size, prepare, run_all, MlrArgs, ResetArgs};

/// The Search Goals of `xlatperf mlrsearch`, checked before anything else.
fn mlr_goals(a: &MlrArgs) -> Result<Vec<SearchGoal>> {
    let defaults = SearchGoal {
        name: String::new(),
        loss_ratio: 0.0,
        exceed_ratio: a.exceed_ratio,
        width: a.width,
        initial_trial_duration_s: a
            .initial_duration
            .unwrap_or(xlat_procedures::mlrsearch::DEFAULT_INITIAL_S.min(a.duration)),
        final_trial_duration_s: a.duration,
        duration_sum_s: a.duration_sum.unwrap_or(a.duration),
    };
    let specs: Vec<String> = if a.goals.is_empty() {
        vec!["ndr".into(), "pdr".into()]
    } else {
        a.goals.clone()
    };
    let mut goals = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let mut g = SearchGoal::parse(spec, &defaults).map_err(|e| anyhow!("--goal {spec}: {e}"))?;
        if g.name.is_empty() {
            g.name = format!("goal{}", i + 1);
        }
        xlat_procedures::mlrsearch::validate_goal(&g).map_err(|e| anyhow!("--goal {spec}: {e}"))?;
        goals.push(g);
    }
    Ok(goals)
}

/// `xlatperf mlrsearch`.
pub fn mlrsearch(a: &MlrArgs, argv: &[String]) -> Result<Vec<SizeResult<MlrResult>>> {
    let goals = mlr_goals(a)?;
    let p = prepare(&a.common, Some(&a.stateful), Procedure::Mlrsearch, argv)?;
    let plans = per_size(&p.sizes, |size| {
        let max = a
            .max_load
            .unwrap_or_else(|| xlat_procedures::setup_line_rate(&p.cfg.setup, size, a.link.link_gbps));
        let mut c = MlrConfig::new(size, max, a.duration);
        c.trial = p.trial(size, max, a.duration);
        c.min_load = a.min_load.unwrap_or(c.min_load);
        c.goals = goals.clone();
        c.preceding_targets = a.preceding_targets;
        c.retries = a.common.retries;
        c.max_trials = a.max_trials;
        c.validate().map_err(|e| config_error(size, e))?;
        Ok(c)
    })?;
    run_all(&p, Procedure::Mlrsearch, &plans, |r, c, prog| {
        xlat_procedures::mlrsearch(r, c, prog)
    })
}

/// `xlatperf reset`.
pub fn reset(a: &ResetArgs, argv: &[String]) -> Result<Vec<SizeResult<ResetResult>>> {
    let p = prepare(&a.common, Some(&a.stateful), Procedure::Reset, argv)?;
    if p.cfg.dut.reset.is_none() {
        bail!(
            "{}: no reset command: set [dut] reset (a shell command that resets the DUT and returns; `xlatperf lab up` writes one for its kernel DUTs, dpdk-fwd has none)",
            p.cfg.source.file
        );
    }
    let plans = per_size(&p.sizes, |size| {
        let mut c = ResetConfig::new(size, a.rate, a.duration, a.at);
        c.trial = p.trial(size, a.rate, a.duration);
        c.retries = a.common.retries;
        c.validate().map_err(|e| config_error(size, e))?;
        Ok(c)
    })?;
    run_all(&p, Procedure::Reset, &plans, |r, c, prog| xlat_procedures::reset_time(r, c, prog))
}
