//! xlatperf: the command line.

mod output;
mod runner;
mod selftest;
mod sender_bench;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use xlat_engine::TrialSpec;

#[derive(Parser)]
#[command(
    name = "xlatperf",
    version,
    about = "Benchmark IPv4/IPv6 routers, SIIT and stateful NATxy gateways (RFC 2544, 5180, 8219, 9693)"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Args, Clone)]
struct ConfigArgs {
    /// Test description: a TOML file or a siitperf.conf.
    #[arg(short = 'c', long = "config")]
    config: PathBuf,
    /// Override a configuration key, by TOML path (traffic.reverse=false) or siitperf.conf name
    /// (IP-L-var=3). Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run one trial: send at a fixed rate for a duration and count what comes back.
    Trial {
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Frames per second per direction.
        #[arg(long)]
        rate: Option<u64>,
        /// Seconds of sending.
        #[arg(long)]
        duration: Option<f64>,
        /// siitperf's frame size: IPv6 frames have it, IPv4 frames are 20 bytes shorter (FCS counted).
        #[arg(long = "frame-size")]
        frame_size: Option<usize>,
        /// Milliseconds to keep receiving after sending ended.
        #[arg(long)]
        timeout: Option<u64>,
        /// Print one JSON object instead of the human summary.
        #[arg(long)]
        json: bool,
    },
    /// Print the TOML equivalent of a siitperf.conf.
    Convert {
        /// The siitperf.conf to convert.
        file: PathBuf,
    },
    /// Build, inspect or remove a lab topology: a real DUT in a network namespace.
    Lab {
        #[command(subcommand)]
        cmd: LabCmd,
    },
    /// The tester's self-test: ports looped back, no DUT; the highest rate the tester sustains.
    Selftest {
        #[command(flatten)]
        cfg: ConfigArgs,
        #[command(flatten)]
        args: selftest::SelftestArgs,
    },
    /// Benchmark: the sender's hot path flat out on the left port, one core; prints frames/s.
    #[command(name = "bench-sender")]
    BenchSender {
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Seconds to send.
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        #[arg(long = "frame-size")]
        frame_size: Option<usize>,
        #[arg(long, default_value_t = 32)]
        burst: usize,
        /// Pin to this core.
        #[arg(long)]
        core: Option<usize>,
    },
    /// siitperf-tp's command line: reads ./siitperf.conf and prints siitperf's output lines.
    #[command(name = "siitperf-tp")]
    SiitperfTp {
        /// <IPv6 size> <rate> <duration> <global timeout> <n> <m> [<N> <M> <R> <T> <D>]
        #[arg(allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

#[derive(Subcommand)]
enum LabCmd {
    /// Create the lab with a DUT: router4, router6 (and siit, nat44, nat64 where built).
    Up {
        topology: String,
        /// Take down an existing lab first.
        #[arg(long)]
        replace: bool,
    },
    /// Remove everything the lab made (works after a crash too).
    Down,
    /// Show what exists.
    Status,
}

fn parse_sets(sets: &[String]) -> Result<Vec<(String, String)>> {
    sets.iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
            _ => bail!("--set {s}: expected KEY=VALUE"),
        })
        .collect()
}

fn load(c: &ConfigArgs) -> Result<xlat_config::TestConfig> {
    let sets = parse_sets(&c.set)?;
    Ok(xlat_config::load(&c.config, &sets)?)
}

fn trial(
    c: &ConfigArgs,
    rate: Option<u64>,
    duration: Option<f64>,
    frame_size: Option<usize>,
    timeout: Option<u64>,
    json: bool,
) -> Result<()> {
    let cfg = load(c)?;
    let rate = rate
        .or(cfg.trial.rate)
        .context("no rate: give --rate FPS (or trial.rate in the configuration)")?;
    let spec = TrialSpec::new(
        frame_size.unwrap_or(cfg.trial.frame_size),
        rate,
        duration.unwrap_or(cfg.trial.duration_s),
        timeout.unwrap_or(cfg.trial.timeout_ms),
    );
    let mut r = runner::open(&cfg)?;
    if !json {
        eprintln!(
            "xlatperf trial: {} frames/s for {} s, frame size {} (IPv4 frames {}), timeout {} ms; {}",
            spec.rate,
            spec.duration_s,
            spec.frame_size,
            spec.frame_size.saturating_sub(20),
            spec.timeout_ms,
            r.describe()
        );
    }
    let report = r.run_trial(&spec)?;
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        for l in output::siitperf_lines(&report) {
            println!("{l}");
        }
        print!("{}", output::human(&report));
    }
    Ok(())
}

fn lab(cmd: &LabCmd) -> Result<()> {
    match cmd {
        LabCmd::Up { topology, replace } => {
            let t: xlat_lab::Topology = topology.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
            let info = xlat_lab::up(
                t,
                &xlat_lab::UpOptions { replace: *replace },
            )?;
            eprintln!(
                "lab {} is up: tester ports {} and {} in namespace {}, DUT in {}",
                info.topology, info.left_port, info.right_port, info.tester_ns, info.dut_ns
            );
            println!("{}", info.config_path.display());
        }
        LabCmd::Down => {
            let r = xlat_lab::down()?;
            println!("{r}");
        }
        LabCmd::Status => println!("{}", xlat_lab::status()?),
    }
    Ok(())
}

/// siitperf-tp <IPv6 size> <rate> <duration> <global timeout> <n> <m> [<N> <M> <R> <T> <D>]
fn siitperf_tp(args: &[String]) -> Result<()> {
    let num = |i: usize, name: &str, lo: u64, hi: u64| -> Result<u64> {
        let s = args.get(i).with_context(|| format!("Input Error: missing <{name}>"))?;
        let v: u64 = s
            .parse()
            .ok()
            .with_context(|| format!("Input Error: <{name}> '{s}' is not a whole number"))?;
        if v < lo || v > hi {
            bail!("Input Error: <{name}> {v} is out of range {lo}-{hi}");
        }
        Ok(v)
    };
    let conf = Path::new("siitperf.conf");
    let cfg = xlat_config::load(conf, &[])?;
    let stateful = cfg.setup.stateful.mode != xlat_traffic::Stateful::Off;
    let want = if stateful { 11 } else { 6 };
    if args.len() != want {
        bail!(
            "Input Error: siitperf-tp takes {want} arguments here{}: <IPv6 size> <rate> <duration> <global timeout> <n> <m>{}",
            if stateful { " (Stateful is set)" } else { "" },
            if stateful { " <N> <M> <R> <T> <D>" } else { "" }
        );
    }
    let all_v4 = cfg.setup.left.ip_version == xlat_traffic::IpVersion::V4
        && cfg.setup.right.ip_version == xlat_traffic::IpVersion::V4
        && !cfg.setup.has_background();
    let size = num(0, "IPv6 size", 84, if all_v4 { 1538 } else { 1518 })? as usize;
    let rate = num(1, "rate", 1, 14_880_952)?;
    let duration = num(2, "duration", 1, 3600)?;
    let timeout = num(3, "global timeout", 0, 60_000)?;
    let n = num(4, "n", 2, u64::from(u32::MAX))?;
    let m = num(5, "m", 0, n)?;
    if stateful {
        bail!("Error: stateful tests (RFC 9693) are not implemented in this xlatperf yet");
    }
    let mut cfg = cfg;
    cfg.setup.fg_n = n as u32;
    cfg.setup.fg_m = m as u32;
    let mut r = runner::open(&cfg)?;
    let report = r.run_trial(&TrialSpec::new(size, rate, duration as f64, timeout))?;
    for l in output::siitperf_lines(&report) {
        println!("{l}");
    }
    Ok(())
}

fn main() -> Result<()> {
    // Called as siitperf-tp through a link: behave as siitperf does.
    let argv0 = std::env::args().next().unwrap_or_default();
    if Path::new(&argv0).file_name().and_then(|n| n.to_str()) == Some("siitperf-tp") {
        return siitperf_tp(&std::env::args().skip(1).collect::<Vec<_>>());
    }
    let cli = Cli::parse();
    match &cli.cmd {
        Cmd::Trial {
            cfg,
            rate,
            duration,
            frame_size,
            timeout,
            json,
        } => trial(cfg, *rate, *duration, *frame_size, *timeout, *json),
        Cmd::Convert { file } => {
            let cfg = xlat_config::load(file, &[])?;
            print!("{}", xlat_config::to_toml(&cfg));
            Ok(())
        }
        Cmd::Lab { cmd } => lab(cmd),
        Cmd::SiitperfTp { args } => siitperf_tp(args),
        Cmd::Selftest { cfg, args } => selftest::run(&load(cfg)?, args).map(|_| ()),
        Cmd::BenchSender {
            cfg,
            seconds,
            frame_size,
            burst,
            core,
        } => {
            let c = load(cfg)?;
            let b = sender_bench::SenderBench {
                seconds: *seconds,
                frame_size: frame_size.unwrap_or(c.trial.frame_size),
                burst: *burst,
                core: *core,
            };
            let fps = sender_bench::run(&c, &b)?;
            println!("sender frames/s: {fps:.0}");
            Ok(())
        }
    }
}
