//! `xlatperf campaign PLAN.toml` and `xlatperf report DIR`: the options, the checks before a
//! campaign starts (every run's command line parses, every configuration file loads), and the
//! calls into `xlat_campaign` that do the work.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::PathBuf;

use xlat_campaign::estimate::Estimator;
use xlat_campaign::manifest::Manifest;
use xlat_campaign::plan::{Plan, TestSource};
use xlat_campaign::run::{Options, Outcome};
use xlat_campaign::shard::Shard;

/// `xlatperf campaign`.
#[derive(Args, Clone, Debug)]
pub struct CampaignArgs {
    /// The plan: tests, procedures, axes, repetitions (see docs/campaign.md).
    #[arg(value_name = "PLAN.toml")]
    pub plan: PathBuf,
    /// The campaign directory: manifest, results, logs. Run the same command again to resume.
    /// Default: the plan's name in the current directory.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// List the runs, their commands and the estimated time; run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Run the runs that failed again (a resumed campaign otherwise keeps their failure).
    #[arg(long)]
    pub retry_failed: bool,
    /// Run only the K-th of N parts of the plan (runs dealt out in turn, each in exactly one
    /// part, the same on every host), for N testbeds; default directory NAME-K-of-N.
    /// `xlatperf report DIR1 DIR2 ...` merges the parts.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
}

/// `xlatperf report`.
#[derive(Args, Clone, Debug)]
pub struct ReportArgs {
    /// A campaign directory, or any directory of xlatperf's JSON results (searched recursively);
    /// several campaign directories of one plan (its shards, or the campaign run again) make one
    /// report.
    #[arg(value_name = "DIR", required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,
    /// The HTML file to write. Default: DIR/report.html; of several directories,
    /// report.html in the current directory.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the summaries as tab-separated values instead of writing the page: per test,
    /// variant, frame size, procedure and metric the number of repetitions, the median, the
    /// minimum and the maximum, and the bounds the searches reported.
    #[arg(long, conflicts_with = "output")]
    pub table: bool,
}

/// Check every run before the first one starts: its command line parses (`parses` is the
/// binary's own parser) and its configuration file loads (a lab's is written when the lab
/// comes up).
fn check_runs(plan: &Plan, manifest: &Manifest, parses: &dyn Fn(&[String]) -> Result<(), clap::Error>) -> Result<()> {
    for t in &plan.tests {
        if let TestSource::Config(p) = &t.source {
            xlat_config::load(p, &[]).with_context(|| format!("{}: test {:?}", plan.file.display(), t.name))?;
        }
    }
    for r in &manifest.runs {
        if let Err(e) = parses(&r.command) {
            let e = e.to_string();
            let first = e.lines().next().unwrap_or_default().to_string();
            bail!("{}: run {}: `{}`: {first}", plan.file.display(), r.id, r.command.join(" "));
        }
    }
    Ok(())
}

/// Run `xlatperf campaign`.
pub fn campaign(a: &CampaignArgs, parses: &dyn Fn(&[String]) -> Result<(), clap::Error>, estimate: Estimator) -> Result<()> {
    let plan = Plan::load(&a.plan)?;
    let text = std::fs::read_to_string(&a.plan).with_context(|| format!("reading {}", a.plan.display()))?;
    let shard = a.shard.unwrap_or(Shard::WHOLE);
    let dir = a.dir.clone().unwrap_or_else(|| match a.shard {
        Some(s) => PathBuf::from(format!("{}-{}-of-{}", plan.name, s.index, s.count)),
        None => PathBuf::from(&plan.name),
    });
    let plan_arg = a.plan.display().to_string();
    let manifest = Manifest::new(&plan, &plan_arg, "xlatperf", estimate).only(shard);
    check_runs(&plan, &manifest, parses)?;
    if a.dry_run {
        print!("{}", xlat_campaign::preview::dry_run(&plan, &manifest, &dir));
        return Ok(());
    }
    crate::interrupt::install();
    let opts = Options {
        dir: dir.clone(),
        plan_arg,
        program: std::env::current_exe().context("finding this program's path")?,
        retry_failed: a.retry_failed,
        shard,
        xlatperf_version: env!("CARGO_PKG_VERSION").to_string(),
        git_commit: crate::output::git_commit(),
        estimate,
    };
    let outcome = xlat_campaign::run::run(&plan, &text, &opts, crate::interrupt::flag(), &mut |line| {
        eprintln!("campaign: {line}")
    })?;
    let report = format!("xlatperf report {}", dir.display());
    match outcome {
        Outcome::Finished { failed: 0, .. } => {
            println!("campaign finished: every run done; the report: {report}");
            Ok(())
        }
        Outcome::Finished { failed, .. } => bail!(
            "campaign finished with {failed} failed runs (see {}/campaign.json); the report: {report}; run them again with --retry-failed",
            dir.display()
        ),
        Outcome::StoppedOnFailure { id } => {
            bail!("campaign stopped: run {id} failed (on_failure = \"stop\"); run the same command to resume")
        }
        Outcome::Interrupted => bail!("interrupted; run the same command to resume with the first unfinished run"),
    }
}

/// Run `xlatperf report`.
pub fn report(a: &ReportArgs) -> Result<()> {
    let out = a.output.clone().unwrap_or_else(|| match &a.dirs[..] {
        [one] => one.join("report.html"),
        _ => PathBuf::from("report.html"),
    });
    let r = xlat_campaign::report::build_all(&a.dirs)?;
    for w in &r.warnings {
        eprintln!("warning: {w}");
    }
    if a.table {
        print!("{}", r.table);
        return Ok(());
    }
    crate::output::write_atomic(&out, r.html.as_bytes())?;
    println!(
        "report of {} results ({} not read) written to {}",
        r.results,
        r.warnings.len(),
        out.display()
    );
    Ok(())
}
