//! The procedure commands: `throughput`, `frame-loss`, `latency`, `pdv`, `b2b`, `recovery`.
//! Each turns its options into the procedure's configuration (`xlat_procedures`) per frame size (checked before
//! any trial runs), opens the tester once, runs the procedure `--repeat` times per frame size
//! through [`xlat_procedures::repeat`], shows progress, and writes JSON, CSV and plots. The JSON and
//! CSV files are rewritten after every finished repetition (with `"complete": false` until the
//! end), so a long run that fails keeps what it measured. Ctrl-C stops before the next trial:
//! the procedure returns [`ProcedureError::Interrupted`] with the trials of the repetition in
//! progress, and they are written too, in a document marked `"interrupted": true`.

use anyhow::{anyhow, bail, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use xlat_config::TestConfig;
use xlat_engine::{PdvSpec, PreliminarySpec, TrialReport, TrialSpec};
use xlat_procedures::b2b::BackToBackResult;
use xlat_procedures::capacity::{CapacityConfig, CapacityResult};
use xlat_procedures::conn_rate::{ConnRateConfig, ConnRateResult};
use xlat_procedures::recovery::RecoveryResult;
use xlat_procedures::teardown::{TeardownConfig, TeardownResult};
use xlat_procedures::{
    BackToBackConfig, FrameLossConfig, LatencyConfig, PdvConfig, ProcedureError, RealSleeper, RecoveryConfig, ThroughputConfig, TrialRunner,
};
use xlat_results::{
    Collected, Document, FrameLossResult, InterruptedRun, LatencyResult, PdvResult, Plot, Procedure, Repeated, RunMeta, SearchMethod,
    SizeResult, ThroughputResult,
};
use xlat_traffic::IpVersion;
use xlat_trial::{SendLag, TrialError};

use crate::args::*;
use crate::interrupt;
use crate::output;
pub use crate::procedure_args::*;
use crate::progress::TermProgress;
use crate::runner;

/// What a procedure command's result must be: a bench result with a plot, as JSON.
pub trait CommandResult: Plot + Serialize + Clone {}
impl<T: Plot + Serialize + Clone> CommandResult for T {}

/// The trial runner of the procedures: the configured backend, Ctrl-C between trials, and
/// latency samples kept for plots. It runs each spec as the procedure built it: phase 1 and
/// the tester's lag bound are in the procedure's configuration ([`Prepared::trial`],
/// [`Prepared::send_lag`]), so the spec a result records is the trial that ran.
pub struct CliRunner {
    inner: Box<dyn TrialRunner>,
    pub collected: Collected,
}

impl CliRunner {
    pub fn new(inner: Box<dyn TrialRunner>) -> CliRunner {
        CliRunner {
            inner,
            collected: Collected::default(),
        }
    }
}

impl TrialRunner for CliRunner {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn ports(&self) -> Vec<xlat_trial::PortSettings> {
        self.inner.ports()
    }

    fn run_preliminary(&mut self, spec: &TrialSpec, validation: Option<u64>) -> Result<TrialReport, TrialError> {
        if interrupt::requested() {
            return Err(TrialError::interrupted());
        }
        self.inner.run_preliminary(spec, validation)
    }

    fn time_dut_command(&mut self, key: &str) -> Result<f64, TrialError> {
        self.inner.time_dut_command(key)
    }

    fn run_with_dut_command(
        &mut self,
        spec: &TrialSpec,
        key: &str,
        after_s: f64,
    ) -> Result<(TrialReport, xlat_trial::HookRun), TrialError> {
        if interrupt::requested() {
            return Err(TrialError::interrupted());
        }
        self.inner.run_with_dut_command(spec, key, after_s)
    }

    fn stamp_sources(&self) -> Vec<xlat_trial::StampSource> {
        self.inner.stamp_sources()
    }

    fn run(&mut self, spec: &TrialSpec) -> Result<TrialReport, TrialError> {
        if interrupt::requested() {
            // The procedure fills in its trials so far.
            return Err(TrialError::interrupted());
        }
        let report = self.inner.run(spec)?;
        if report.valid && spec.latency.is_some() {
            for (name, d) in report.directions() {
                self.collected
                    .latency
                    .entry((spec.frame_size, name))
                    .or_default()
                    .extend_from_slice(&d.latency_ns);
            }
        }
        Ok(report)
    }
}

/// A command's configuration and output files, checked before any trial.
pub struct Prepared {
    pub cfg: TestConfig,
    /// Phase 1 of every trial of a stateful test; `None` for a stateless test.
    pub preliminary: Option<PreliminarySpec>,
    pub sizes: Vec<usize>,
    pub common: CommonArgs,
    pub meta: RunMeta,
}

impl Prepared {
    /// The trial every procedure of this command builds on: `rate` for `duration_s` with the
    /// frame size, `--timeout`, phase 1 (a stateful test) and the tester's lag bound and
    /// catch-up pace ([`Prepared::send_lag`]).
    pub fn trial(&self, size: usize, rate: u64, duration_s: f64) -> TrialSpec {
        self.send_lag().apply(TrialSpec {
            preliminary: self.preliminary,
            ..TrialSpec::new(size, rate, duration_s, self.common.timeout)
        })
    }

    /// The tester's bound of its senders' lag and their catch-up pace
    /// (`tester.max_send_lag_us`, `tester.max_send_lag_frames`, `tester.catch_up_percent`).
    pub fn send_lag(&self) -> SendLag {
        self.cfg.tester.send_lag()
    }
}

/// Load the configuration, fix the random seed (so that the JSON names it), check the frame
/// sizes and that every output file can be written. `stateful`: the phase 1 options of a
/// command that can run a stateful test; `None` for one that cannot (`command`), which then
/// refuses a stateful configuration.
pub fn prepare(common: &CommonArgs, stateful: Option<&StatefulArgs>, procedure: Procedure, argv: &[String]) -> Result<Prepared> {
    let sets = crate::args::parse_sets(&common.cfg.set)?;
    let (mut cfg, preliminary) = match stateful {
        Some(flags) => {
            let (cfg, pre) = xlat_config::load_stateful(&common.cfg.config, &sets, &flags.options())?;
            (cfg, pre.map(PreliminarySpec::from))
        }
        None => {
            let cfg = xlat_config::load(&common.cfg.config, &sets)?;
            xlat_config::refuse_stateful(&cfg, procedure.name())?;
            (cfg, None)
        }
    };
    let seed = cfg.setup.effective_seed();
    cfg.setup.seed = Some(seed);
    let sizes = if common.frame_sizes.is_empty() {
        vec![cfg.trial.frame_size]
    } else {
        common.frame_sizes.clone()
    };
    let all_v4 = cfg.setup.left.ip_version == IpVersion::V4 && cfg.setup.right.ip_version == IpVersion::V4 && !cfg.setup.has_background();
    for &s in &sizes {
        xlat_config::frame_size_rule(&cfg.setup, s).map_err(|why| anyhow::anyhow!("--frame-sizes {s} is not allowed here ({why})"))?;
        if s > 1518 && !all_v4 {
            bail!("--frame-sizes {s}: above 1518 only when all traffic is IPv4 (IPv6 frames would exceed 1518 bytes)");
        }
    }
    if let Some(j) = &common.json {
        j.check()?;
    }
    for (opt, p) in [("--csv", &common.csv), ("--summary-csv", &common.summary_csv)] {
        if let Some(p) = p {
            output::check_writable(opt, p)?;
        }
    }
    if let Some(p) = &common.plot {
        output::plot_format(p)?;
    }
    let mut meta = RunMeta::new(env!("CARGO_PKG_VERSION"));
    meta.config = serde_json::to_value(&cfg)?;
    meta.seeds = BTreeMap::from([("traffic".to_string(), seed)]);
    meta.started_at = Some(output::rfc3339_now());
    meta.command_line = Some(argv.to_vec());
    meta.host = Some(xlat_campaign::manifest::host());
    meta.git_commit = crate::output::git_commit();
    Ok(Prepared {
        cfg,
        preliminary,
        sizes,
        common: common.clone(),
        meta,
    })
}

/// Write the JSON document, the CSV files and (when `complete`) the plot. With `--json -` the
/// document goes to standard output once, at the end (finished or interrupted).
fn write_outputs<T: CommandResult>(
    p: &Prepared,
    procedure: Procedure,
    results: &[SizeResult<T>],
    complete: bool,
    interrupted: Option<&InterruptedRun>,
    runner: &CliRunner,
) -> Result<()> {
    let c = &p.common;
    let collected = &runner.collected;
    if let Some(to) = &c.json {
        if to.is_file() || complete || interrupted.is_some() {
            let doc = Document {
                procedure: procedure.name().to_string(),
                complete,
                meta: RunMeta {
                    ports: runner.ports(),
                    ..p.meta.clone()
                },
                frame_sizes: p.sizes.clone(),
                results: results.to_vec(),
                interrupted: interrupted.is_some(),
                interrupted_run: interrupted.cloned(),
            };
            to.write(&doc.to_json()?)?;
        }
    }
    if let Some(path) = &c.csv {
        output::write_atomic(path, xlat_results::trials_csv(procedure.name(), results, interrupted).as_bytes())?;
    }
    if let Some(path) = &c.summary_csv {
        output::write_atomic(path, xlat_results::summary_csv(results).as_bytes())?;
    }
    if complete {
        if let Some(path) = &c.plot {
            match T::plot(results, collected) {
                Some(svg) => output::write_plot(path, &svg)?,
                None => eprintln!("xlatperf: nothing to plot, {} not written", path.display()),
            }
        }
    }
    Ok(())
}

/// Open the tester and run `f` for every (frame size, configuration) `--repeat` times.
pub fn run_all<T, C>(
    p: &Prepared,
    procedure: Procedure,
    plans: &[(usize, C)],
    mut f: impl FnMut(&mut CliRunner, &C, &mut TermProgress) -> Result<T, ProcedureError>,
) -> Result<Vec<SizeResult<T>>>
where
    T: CommandResult,
{
    let repeat = p.common.repeat as usize;
    let mut progress = TermProgress::new(p.common.verbose);
    let mut runner = CliRunner::new(runner::open_sized(&p.cfg, p.sizes.iter().copied().max().unwrap_or(0))?);
    interrupt::install();
    if crate::progress::stderr_is_tty() || p.common.verbose {
        progress.note(&format!(
            "xlatperf {procedure}: frame sizes {:?}, {repeat} run(s) each; {}",
            p.sizes,
            runner.describe()
        ));
    }
    let total = plans.len() * repeat;
    let mut done: Vec<SizeResult<T>> = Vec::new();
    for (k, (size, c)) in plans.iter().enumerate() {
        let mut partial: Vec<T> = Vec::new();
        let mut current = 0;
        let result = xlat_procedures::repeat(repeat, |i| {
            current = i;
            let n = k * repeat + i;
            let context = if repeat > 1 {
                format!("{size} B run {}/{repeat}", i + 1)
            } else {
                format!("{size} B")
            };
            progress.begin_run(context, total - n - 1);
            let r = f(&mut runner, c, &mut progress)?;
            progress.end_run(&format!("{procedure}: {}", r.headline()));
            partial.push(r.clone());
            let mut so_far = done.clone();
            so_far.push(SizeResult {
                frame_size: *size,
                result: Repeated::from_runs(partial.clone()),
            });
            write_outputs(p, procedure, &so_far, false, None, &runner).map_err(|e| ProcedureError::Output(format!("{e:#}")))?;
            Ok(r)
        });
        progress.clear();
        match result {
            Ok(result) => done.push(SizeResult { frame_size: *size, result }),
            Err(ProcedureError::Interrupted { trials }) => {
                if !partial.is_empty() {
                    done.push(SizeResult {
                        frame_size: *size,
                        result: Repeated::from_runs(partial),
                    });
                }
                let n = trials.len();
                let run = InterruptedRun {
                    frame_size: *size,
                    repetition: current,
                    trials,
                };
                write_outputs(p, procedure, &done, false, Some(&run), &runner)?;
                let finished: usize = done.iter().map(|d| d.result.runs.len()).sum();
                let saved = match &p.common.json {
                    Some(to) => format!("; written to {to}"),
                    None => String::new(),
                };
                bail!(
                    "interrupted by Ctrl-C: {finished} finished run(s), and {n} trial(s) of the run in progress (frame size {size}, run {}){saved}",
                    current + 1
                );
            }
            Err(e) => return Err(e.into()),
        }
    }
    write_outputs(p, procedure, &done, true, None, &runner)?;
    Ok(done)
}

pub(crate) fn per_size<C>(sizes: &[usize], mut make: impl FnMut(usize) -> Result<C>) -> Result<Vec<(usize, C)>> {
    sizes.iter().map(|&s| Ok((s, make(s)?))).collect()
}

pub(crate) fn config_error(size: usize, e: ProcedureError) -> anyhow::Error {
    anyhow!("frame size {size}: {e}")
}

/// `xlatperf throughput`.
pub fn throughput(a: &ThroughputArgs, argv: &[String]) -> Result<Vec<SizeResult<ThroughputResult>>> {
    let p = prepare(&a.common, Some(&a.stateful), Procedure::Throughput, argv)?;
    if let Some(s) = a.short {
        if s > a.duration {
            bail!("--short {s} is longer than --duration {}", a.duration);
        }
    }
    let plans = per_size(&p.sizes, |size| {
        let max = a
            .search
            .max_rate
            .unwrap_or_else(|| xlat_procedures::setup_line_rate(&p.cfg.setup, size, a.link.link_gbps));
        if a.search.min_rate > max {
            bail!("--min-rate {} is above --max-rate {max}", a.search.min_rate);
        }
        let error = a.search.error.unwrap_or(SearchError::DEFAULT).resolve(max);
        let mut tc = ThroughputConfig::new(size, max, error);
        tc.trial = p.trial(size, max, a.duration);
        tc.trial.pdv = a.frame_timeout.map(|ms| PdvSpec {
            frame_timeout_ms: ms,
            exact: false,
        });
        tc.min_rate = a.search.min_rate;
        tc.loss_tolerance = a.search.loss_tolerance;
        tc.retries = a.common.retries;
        tc.method = match (a.accelerated, a.short) {
            (true, s) => SearchMethod::Accelerated {
                initial_s: s.unwrap_or((a.duration / 10.0).max(1.0).min(a.duration)),
                phases: a.phases,
            },
            (false, Some(short_s)) => SearchMethod::ShortThenConfirm { short_s },
            (false, None) => SearchMethod::Binary,
        };
        tc.validate().map_err(|e| config_error(size, e))?;
        Ok(tc)
    })?;
    run_all(&p, Procedure::Throughput, &plans, |r, c, prog| {
        xlat_procedures::throughput(r, c, prog)
    })
}

/// `xlatperf frame-loss`.
pub fn frame_loss(a: &FrameLossArgs, argv: &[String]) -> Result<Vec<SizeResult<FrameLossResult>>> {
    let p = prepare(&a.common, Some(&a.stateful), Procedure::FrameLoss, argv)?;
    let plans = per_size(&p.sizes, |size| {
        let max = a
            .max_rate
            .unwrap_or_else(|| xlat_procedures::setup_line_rate(&p.cfg.setup, size, a.link.link_gbps));
        let mut fc = FrameLossConfig::new(size, max);
        fc.trial = p.trial(size, max, a.duration);
        fc.trial.pdv = a.frame_timeout.map(|ms| PdvSpec {
            frame_timeout_ms: ms,
            exact: false,
        });
        fc.step_fraction = a.step;
        fc.rates = (!a.rates.is_empty()).then(|| a.rates.clone());
        fc.retries = a.common.retries;
        fc.validate().map_err(|e| config_error(size, e))?;
        Ok(fc)
    })?;
    run_all(&p, Procedure::FrameLoss, &plans, |r, c, prog| {
        xlat_procedures::frame_loss(r, c, prog)
    })
}

/// `xlatperf latency`.
pub fn latency(a: &LatencyArgs, argv: &[String]) -> Result<Vec<SizeResult<LatencyResult>>> {
    let p = prepare(&a.common, Some(&a.stateful), Procedure::Latency, argv)?;
    if a.delay >= a.duration {
        bail!("--delay {} must be shorter than --duration {}", a.delay, a.duration);
    }
    let room = (a.rate as f64 * (a.duration - a.delay)).floor() as u64;
    if room < a.tags {
        bail!(
            "--tags {}: only {room} frames are sent after the --delay of {} s at --rate {} for --duration {} s",
            a.tags,
            a.delay,
            a.rate,
            a.duration
        );
    }
    let plans = per_size(&p.sizes, |size| {
        let mut lc = LatencyConfig::new(size, a.rate);
        lc.trial = p.trial(size, a.rate, a.duration);
        lc.delay_s = a.delay;
        lc.tags = a.tags;
        lc.keep_samples = a.keep_samples;
        lc.repetitions = a.repetitions;
        lc.retries = a.common.retries;
        lc.validate().map_err(|e| config_error(size, e))?;
        Ok(lc)
    })?;
    run_all(&p, Procedure::Latency, &plans, |r, c, prog| xlat_procedures::latency(r, c, prog))
}

/// `xlatperf pdv`.
pub fn pdv(a: &PdvArgs, argv: &[String]) -> Result<Vec<SizeResult<PdvResult>>> {
    let p = prepare(&a.common, Some(&a.stateful), Procedure::Pdv, argv)?;
    let plans = per_size(&p.sizes, |size| {
        let pc = PdvConfig {
            trial: p.trial(size, a.rate, a.duration),
            frame_timeout_ms: a.frame_timeout,
            exact: a.exact,
            repetitions: a.repetitions,
            retries: a.common.retries,
        };
        pc.validate().map_err(|e| config_error(size, e))?;
        Ok(pc)
    })?;
    run_all(&p, Procedure::Pdv, &plans, |r, c, prog| xlat_procedures::pdv(r, c, prog))
}

/// `xlatperf b2b`.
pub fn b2b(a: &B2bArgs, argv: &[String]) -> Result<Vec<SizeResult<BackToBackResult>>> {
    let p = prepare(&a.common, Some(&a.stateful), Procedure::BackToBack, argv)?;
    let plans = per_size(&p.sizes, |size| {
        let line = a
            .line_rate
            .unwrap_or_else(|| xlat_procedures::setup_line_rate(&p.cfg.setup, size, a.link.link_gbps));
        let mut bc = BackToBackConfig::new(size, line);
        bc.trial = p.trial(size, line, bc.trial.duration_s);
        bc.max_burst = a.max_burst.unwrap_or(line.saturating_mul(2));
        bc.error = a.error.unwrap_or((bc.max_burst / 1000).max(1));
        bc.repetitions = a.repetitions;
        bc.idle_s = a.idle;
        bc.retries = a.common.retries;
        bc.measured_throughput = a.throughput;
        bc.validate().map_err(|e| config_error(size, e))?;
        Ok(bc)
    })?;
    run_all(&p, Procedure::BackToBack, &plans, |r, c, prog| {
        xlat_procedures::back_to_back(r, c, prog, &mut RealSleeper)
    })
}

/// `xlatperf conn-rate`: RFC 9693's maximum connection establishment rate.
pub fn conn_rate(a: &ConnRateArgs, argv: &[String]) -> Result<Vec<SizeResult<ConnRateResult>>> {
    let p = prepare(&a.common, Some(&StatefulArgs::default()), Procedure::ConnRate, argv)?;
    if p.cfg.setup.stateful.mode == xlat_traffic::Stateful::Off {
        bail!(
            "conn-rate measures a stateful DUT: the configuration must be stateful (siitperf.conf `Stateful 1`, TOML `traffic.stateful`)"
        );
    }
    let plans = per_size(&p.sizes, |size| {
        let c = ConnRateConfig {
            frame_size: size,
            connections: a.connections[0],
            max_rate: a.max_rate,
            error: a.error.unwrap_or((a.max_rate / 100).max(1)),
            timeout_ms: a.common.timeout,
            retries: a.common.retries,
            validation: a.validate.then_some(a.alpha),
            send_lag: p.send_lag(),
            accelerated: a.accelerated.then(|| xlat_procedures::conn_rate::Accelerated {
                initial_connections: a.initial_connections.unwrap_or((a.connections[0] / 100).max(1)),
                phases: a.phases,
            }),
        };
        c.validate().map_err(|e| config_error(size, e))?;
        Ok(c)
    })?;
    run_all(&p, Procedure::ConnRate, &plans, |r, c, prog| xlat_procedures::conn_rate(r, c, prog))
}

/// `xlatperf conntrack-capacity`: RFC 9693's connection tracking table capacity.
pub fn capacity(a: &CapacityArgs, argv: &[String]) -> Result<Vec<SizeResult<CapacityResult>>> {
    let p = prepare(&a.common, Some(&StatefulArgs::default()), Procedure::ConntrackCapacity, argv)?;
    if p.cfg.setup.stateful.mode == xlat_traffic::Stateful::Off {
        bail!(
            "conntrack-capacity measures a stateful DUT: the configuration must be stateful (siitperf.conf `Stateful 1`, TOML `traffic.stateful`)"
        );
    }
    let plans = per_size(&p.sizes, |size| {
        let c = CapacityConfig {
            c0: a.c0,
            max_rate: a.max_rate,
            rate_error: a.error,
            resolution: a.resolution,
            alpha: a.alpha,
            beta: a.beta,
            gamma: a.gamma,
            max_connections: a.max_connections,
            timeout_ms: a.common.timeout,
            retries: a.common.retries,
            send_lag: p.send_lag(),
            ..CapacityConfig::new(size)
        };
        xlat_procedures::capacity::validate(&c).map_err(|e| config_error(size, e))?;
        Ok(c)
    })?;
    run_all(&p, Procedure::ConntrackCapacity, &plans, |r, c, prog| {
        xlat_procedures::conntrack_capacity(r, c, prog)
    })
}

/// `xlatperf teardown-rate`: RFC 9693's connection tear-down rate.
pub fn teardown(a: &TeardownArgs, argv: &[String]) -> Result<Vec<SizeResult<TeardownResult>>> {
    let p = prepare(&a.common, Some(&StatefulArgs::default()), Procedure::TeardownRate, argv)?;
    if p.cfg.setup.stateful.mode == xlat_traffic::Stateful::Off {
        bail!("teardown-rate measures a stateful DUT: the configuration must be stateful (siitperf.conf `Stateful 1`, TOML `traffic.stateful`)");
    }
    if p.cfg.dut.delete_all.is_none() {
        bail!("teardown-rate times the DUT's command that deletes every connection: set [dut] delete_all in the configuration (the lab's nat44, nat64 and nat66 preset it)");
    }
    let plans = per_size(&p.sizes, |size| {
        let c = TeardownConfig {
            frame_size: size,
            connections: a.connections[0],
            rate: a.rate,
            timeout_ms: a.common.timeout,
            retries: a.common.retries,
            send_lag: p.send_lag(),
        };
        c.validate().map_err(|e| config_error(size, e))?;
        Ok(c)
    })?;
    run_all(&p, Procedure::TeardownRate, &plans, |r, c, prog| {
        xlat_procedures::teardown_rate(r, c, prog)
    })
}

/// `xlatperf recovery`.
pub fn recovery(a: &RecoveryArgs, argv: &[String]) -> Result<Vec<SizeResult<RecoveryResult>>> {
    // The recovery procedure builds its trials with a rate change and no phase 1.
    let p = prepare(&a.common, None, Procedure::Recovery, argv)?;
    let plans = per_size(&p.sizes, |size| {
        let mut rc = RecoveryConfig::new(size, a.throughput);
        rc.trial = p.trial(size, a.throughput, rc.trial.duration_s);
        rc.line_rate = Some(
            a.line_rate
                .unwrap_or_else(|| xlat_procedures::setup_line_rate(&p.cfg.setup, size, a.link.link_gbps)),
        );
        rc.overload_factor = a.overload_factor;
        rc.reduced_factor = a.reduced_factor;
        rc.overload_s = a.overload;
        rc.recovery_s = a.recovery;
        rc.retries = a.common.retries;
        rc.validate().map_err(|e| config_error(size, e))?;
        Ok(rc)
    })?;
    run_all(&p, Procedure::Recovery, &plans, |r, c, prog| {
        xlat_procedures::system_recovery(r, c, prog)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use xlat_testkit::fake::Fake;

    /// A stateful configuration with phase 1 and the lab's lag bound, prepared as
    /// `procedure`'s command prepares it.
    fn prepared(procedure: Procedure) -> Prepared {
        let name = procedure.name();
        let dir = std::env::temp_dir().join(format!("xlatperf-prepared-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("c.toml");
        std::fs::write(
            &path,
            "[tester]\nbackend = \"mem\"\nmax_send_lag_us = 1000\nmax_send_lag_frames = 250\ncatch_up_percent = 50\n\
             [left]\nip_version = 4\nipv4_real = \"198.18.0.2\"\n[right]\nip_version = 4\nipv4_real = \"198.19.0.2\"\n\
             [stateful]\nmode = \"initiator-left\"\npreliminary_frames = 1000\npreliminary_rate = 1000\n",
        )
        .expect("write");
        let cli = <crate::Cli as clap::Parser>::try_parse_from(["xlatperf", "throughput", "-c", path.to_str().expect("utf-8")]);
        let Ok(crate::Cmd::Throughput(t)) = cli.map(|c| c.cmd) else {
            panic!("throughput's arguments")
        };
        let p = prepare(&t.common, Some(&StatefulArgs::default()), procedure, &[]).expect("prepared");
        let _ = std::fs::remove_dir_all(&dir);
        p
    }

    #[test]
    fn the_trial_a_procedure_builds_on_has_phase_1_and_the_lag_bound() {
        let p = prepared(Procedure::Throughput);
        let t = p.trial(84, 1000, 2.0);
        assert_eq!(t.preliminary.map(|p| (p.frames, p.rate)), Some((1000, 1000)));
        assert_eq!(
            (t.max_send_lag_ns, t.max_send_lag_frames, t.catch_up_percent),
            (Some(1_000_000), Some(250), Some(50))
        );
        assert_eq!(
            (t.frame_size, t.rate, t.duration_s, t.timeout_ms),
            (84, 1000, 2.0, p.common.timeout)
        );
        // Phase 1 alone (conn-rate, conntrack-capacity, teardown-rate) takes the same bound.
        let alone = p.send_lag().apply(PreliminarySpec::alone(84, 100, 1000, 10));
        assert_eq!((alone.max_send_lag_ns, alone.max_send_lag_frames), (Some(1_000_000), Some(250)));
    }

    /// Records the trials it is asked to run into `seen`, each an empty report.
    fn recorder(seen: &Arc<Mutex<Vec<TrialSpec>>>) -> Box<Fake<'static>> {
        let seen = Arc::clone(seen);
        Box::new(Fake::new(move |spec| {
            seen.lock().expect("lock").push(spec.clone());
            Ok(TrialReport::default())
        }))
    }

    #[test]
    fn the_runner_runs_each_spec_as_the_procedure_built_it() {
        // Nothing added on the way: the spec a result records is the trial that ran.
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut r = CliRunner::new(recorder(&seen));
        let bare = TrialSpec::new(84, 1000, 1.0, 10);
        let built = prepared(Procedure::FrameLoss).trial(84, 1000, 1.0);
        r.run(&bare).expect("trial");
        r.run(&built).expect("trial");
        assert_eq!(*seen.lock().expect("lock"), vec![bare, built]);
    }
}
