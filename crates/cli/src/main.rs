//! xlatperf: the command line. It parses arguments, opens the tester, calls a procedure of the
//! procedures crate (`xlat_procedures`) and writes what the results crate formats; no measurement logic is here.
//!
//! | module | holds |
//! | --- | --- |
//! | `main` | the subcommands, `run` (one function per command), the `trial` command |
//! | [`args`] | the options every procedure shares and the parsers of their values |
//! | [`procedure_args`] | the options of each procedure command |
//! | [`procedures`] | the procedure commands: options into the procedures' configurations (`Prepared::trial`: phase 1 and the lag bound in every trial), `CliRunner` (the `TrialRunner` the procedures drive: Ctrl-C between trials), repetitions per frame size, writing the outputs |
//! | [`runner`] | opening the configured backend as a `Box<dyn TrialRunner>`, DUT commands around each trial (`Hooks`) |
//! | [`output`] | where output goes: `--json FILE` or `-`, atomic files, SVG/PNG plots |
//! | [`progress`] | the progress display on standard error |
//! | [`interrupt`] | Ctrl-C: stop before the next trial |
//! | [`siitperf`] | siitperf's command lines (`siitperf-tp`, `-lat`, `-pdv`) |
//! | [`selftest`], [`bench`] | the tester's self-test; the sender and receiver benchmarks |
//! | [`demo`] | `xlatperf demo` |
//! | [`generate`] | `xlatperf generate`: man pages and shell completions |
//! | [`sweep`] | `xlatperf sweep`: a procedure once per value of a parameter, one table and plot |
//! | [`campaign`] | `xlatperf campaign` and `xlatperf report` (the work is `xlat_campaign`'s) |
//! | `dpdk_glue` | DPDK's EAL arguments (feature `dpdk`) |
//! | [`estimate`] | a campaign run's time estimate from its arguments as the commands parse them |

mod args;
mod bench;
mod campaign;
mod demo;
#[cfg(feature = "dpdk")]
mod dpdk_glue;
mod estimate;
mod generate;
mod interrupt;
mod mlr_reset;
mod output;
mod procedure_args;
mod procedures;
mod progress;
mod runner;
mod selftest;
mod siitperf;
mod sweep;

use anyhow::{Context, Result};
use args::{ConfigArgs, StatefulArgs};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use xlat_config::siitperf_args::Program as SiitperfProgram;
use xlat_engine::{PreliminarySpec, TrialSpec};

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
        /// Write the trial's report as one JSON object to FILE, or with `-` to standard output
        /// instead of the human summary.
        #[arg(long, value_name = "FILE|-", value_parser = output::parse_json_to)]
        json: Option<output::JsonTo>,
        #[command(flatten)]
        stateful: StatefulArgs,
    },
    /// Convert between siitperf.conf and TOML: a siitperf.conf becomes TOML, a TOML file
    /// becomes siitperf.conf (the tester's ports go to xlatperf.toml beside it; what siitperf
    /// cannot express is refused, naming the key).
    Convert {
        /// The siitperf.conf or TOML file to convert.
        file: PathBuf,
        /// Write siitperf.conf and xlatperf.toml into this directory (TOML input only; without
        /// it siitperf.conf goes to standard output).
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
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
    /// Benchmark: the sender's hot path flat out on the left port, a core per queue (tester.queues); prints frames/s.
    #[command(name = "bench-sender")]
    BenchSender {
        #[command(flatten)]
        b: bench::BenchArgs,
        /// Work as testpmd's txonly does, for a like-for-like comparison: every mbuf reset
        /// (rte_pktmbuf_reset) and its frame's template written whole, in every frame, instead
        /// of patching a recycled mbuf that still holds the template.
        #[arg(long)]
        reset_mbufs: bool,
    },
    /// Benchmark: the receiver's hot path on one core, fed by the left port looped back to the
    /// right (a net_ring pair or mem) on the same thread; prints the frames counted.
    #[command(name = "bench-receiver")]
    BenchReceiver {
        #[command(flatten)]
        b: bench::BenchArgs,
    },
    /// Throughput: the highest rate without loss, by binary search (RFC 2544 26.1, RFC 8219 7.1).
    Throughput(procedures::ThroughputArgs),
    /// MLRsearch (RFC 9971): NDR, PDR or any Search Goals at once, each as a Relevant Lower
    /// Bound, Relevant Upper Bound and Conditional Throughput.
    Mlrsearch(procedures::MlrArgs),
    /// Reset time (RFC 6201): a constant-rate trial, the DUT's reset command ([dut] reset) during
    /// it, the interruption per direction from the frames lost and from the receive timestamps.
    Reset(procedures::ResetArgs),
    /// Frame loss rate from the maximum rate down in steps of at most 10% (RFC 2544 26.3).
    #[command(name = "frame-loss")]
    FrameLoss(procedures::FrameLossArgs),
    /// Latency: typical (median) and worst-case (99.9th percentile) of tagged frames (RFC 8219 7.2).
    Latency(procedures::LatencyArgs),
    /// Packet delay variation and inter-packet delay variation (RFC 8219 7.3.1, 7.3.2).
    Pdv(procedures::PdvArgs),
    /// Back-to-back frames: the longest burst at line rate without loss (RFC 2544 26.4, RFC 9004).
    #[command(name = "b2b", visible_alias = "back-to-back")]
    B2b(procedures::B2bArgs),
    /// System recovery: overload at 110% of the throughput, then 50%; time to recover (RFC 2544 26.5).
    Recovery(procedures::RecoveryArgs),
    /// Maximum connection establishment rate of a stateful DUT (RFC 9693): a binary search on
    /// phase 1's rate with N = M connections per step; the highest rate that passed.
    ConnRate(procedures::ConnRateArgs),
    /// Connection tracking table capacity of a stateful DUT (RFC 9693; siitperf's cttc.sh):
    /// validated connection establishment rate searches at growing, then bisected numbers of
    /// connections; the largest number the DUT holds.
    #[command(name = "conntrack-capacity")]
    ConntrackCapacity(procedures::CapacityArgs),
    /// Connection tear-down rate of a stateful DUT (RFC 9693): load N connections, time the
    /// DUT's delete-all command on the full and on the empty table; N / (full - empty).
    TeardownRate(procedures::TeardownArgs),
    /// Scalability: a procedure once per value of one parameter (e.g. --over
    /// connections=10k,100k,1M -- conn-rate ...), every point in one table, JSON, CSV and plot.
    Sweep(sweep::SweepArgs),
    /// A campaign: many procedure runs from a plan (tests x procedures x axes x repetitions)
    /// into one directory, resumable after a crash or Ctrl-C by running it again.
    Campaign(campaign::CampaignArgs),
    /// One self-contained HTML page (tables, plots, environment) from a campaign directory or
    /// any directory of xlatperf's JSON results.
    Report(campaign::ReportArgs),
    /// A complete measurement in a couple of minutes: lab up, throughput, latency, lab down.
    Demo(demo::DemoArgs),
    /// Man pages and shell completions (bash, zsh, fish, ...) generated from this command line,
    /// as the Debian package installs them (scripts/package.sh).
    Generate(generate::GenerateArgs),
    /// siitperf-tp's command line: reads ./siitperf.conf and prints siitperf's output lines.
    #[command(name = "siitperf-tp")]
    SiitperfTp {
        /// <IPv6 size> <rate> <duration> <global timeout> <n> <m> [<N> <M> <R> <T> <D>]
        #[arg(allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// siitperf-lat's command line: a trial with latency tags; prints TL and WCL lines.
    #[command(name = "siitperf-lat")]
    SiitperfLat {
        /// <IPv6 size> <rate> <duration> <global timeout> <n> <m> [<N> <M> <R> <T> <D>] <delay> <timestamps>
        #[arg(allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// siitperf-pdv's command line: a trial with per-frame delays; prints PDV lines (frame
    /// timeout 0) or counts late frames as lost (frame timeout > 0).
    #[command(name = "siitperf-pdv")]
    SiitperfPdv {
        /// <IPv6 size> <rate> <duration> <global timeout> <n> <m> [<N> <M> <R> <T> <D>] <frame timeout>
        #[arg(allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

#[derive(Subcommand)]
enum LabCmd {
    /// Create the lab with a DUT (the stateful ones' printed configuration is a ready stateful
    /// test, RFC 9693).
    Up {
        /// The topology (docs/lab.md).
        #[arg(value_parser = topology_values(), ignore_case = true)]
        topology: String,
        /// Take down an existing lab first.
        #[arg(long)]
        replace: bool,
        /// Also prepare DIR the way siitperf's scripts expect it: siitperf.conf in siitperf's
        /// syntax, xlatperf.toml with the lab's ports, build/siitperf-tp, -lat and -pdv linked
        /// to this xlatperf.
        #[arg(long, value_name = "DIR")]
        siitperf_dir: Option<PathBuf>,
        /// The stateful DUTs (nat44, ...): set the connection tracking table to exactly N entries
        /// (host-wide nf_conntrack_max, restored at lab down); default: raised to at least 2^21.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=xlat_lab::CONNTRACK_LIMIT))]
        conntrack_max: Option<u64>,
        /// With --conntrack-max: the hash size (nf_conntrack_buckets); default: the table size.
        #[arg(long, value_name = "N", requires = "conntrack_max", value_parser = clap::value_parser!(u64).range(1..=xlat_lab::CONNTRACK_LIMIT))]
        conntrack_buckets: Option<u64>,
        /// The tester backend the written configuration names: afpacket (default) or afxdp.
        #[arg(long, value_name = "BACKEND", value_parser = ["afpacket", "afxdp"])]
        backend: Option<String>,
        /// Give each veth end N queues and write tester.queues = N (a sender and a receiver per
        /// queue on cores of their own; afpacket spreads the receive side with a fanout group).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=i64::from(xlat_lab::MAX_QUEUES)))]
        queues: Option<u32>,
        /// The DUT's CPUs, e.g. 1 or 2-3 (default: the highest CPU): the DUT's packet
        /// processing is steered there (RPS on the DUT's veth ends) and TAYGA pinned there; the
        /// tester's workers and receive path get the other CPUs. Every trial records both loads.
        #[arg(long, value_name = "LIST", value_parser = parse_cpus)]
        dut_cpus: Option<CpuList>,
        /// Do not steer: the kernel DUT then runs on the CPU that sends to it, the tester's
        /// (how the lab measured before; for comparisons only: a figure then measures both).
        #[arg(long)]
        no_steering: bool,
    },
    /// Remove everything the lab made (works after a crash too).
    Down,
    /// Show what exists.
    Status,
}

/// The lab's topologies with their summaries for `lab up --help` (and their other names,
/// hidden: `lab up map-t` is mapt).
fn topology_values() -> clap::builder::PossibleValuesParser {
    use clap::builder::PossibleValue as V;
    let aliases = xlat_lab::ALIASES.map(|(alias, _)| V::new(alias).hide(true));
    clap::builder::PossibleValuesParser::new(
        xlat_lab::Topology::ALL
            .map(|t| V::new(t.name()).help(t.summary()))
            .into_iter()
            .chain(aliases),
    )
}

/// `--dut-cpus`: a CPU list as Linux writes one ("1", "2-3,6").
#[derive(Debug, Clone)]
struct CpuList(Vec<usize>);

fn parse_cpus(s: &str) -> Result<CpuList, xlat_trial::load::CpuListError> {
    xlat_trial::load::parse_cpu_list(s).map(CpuList)
}

/// The configuration of `-c` with the `--set` overrides.
fn load(c: &ConfigArgs) -> Result<xlat_config::TestConfig> {
    let sets = args::parse_sets(&c.set)?;
    Ok(xlat_config::load(&c.config, &sets)?)
}

/// The options of `xlatperf trial` that override the configuration's trial defaults.
struct TrialOptions<'a> {
    rate: Option<u64>,
    duration: Option<f64>,
    frame_size: Option<usize>,
    timeout: Option<u64>,
    json: Option<&'a output::JsonTo>,
    stateful: &'a StatefulArgs,
}

/// The configuration and the trial `xlatperf trial` runs: the options over the configuration's
/// defaults, and in a stateful test phase 1 from `[stateful]` and the phase 1 options.
fn trial_spec(c: &ConfigArgs, o: &TrialOptions<'_>) -> Result<(xlat_config::TestConfig, TrialSpec)> {
    let (cfg, preliminary) = xlat_config::load_stateful(&c.config, &args::parse_sets(&c.set)?, &o.stateful.options())?;
    let preliminary = preliminary.map(PreliminarySpec::from);
    if let Some(size) = o.frame_size {
        xlat_config::frame_size_rule(&cfg.setup, size).map_err(|why| anyhow::anyhow!("--frame-size {size} is not allowed here ({why})"))?;
    }
    let rate = o
        .rate
        .or(cfg.trial.rate)
        .context("no rate: give --rate FPS (or trial.rate in the configuration)")?;
    let spec = cfg.tester.bound_send_lag(TrialSpec {
        preliminary,
        ..TrialSpec::new(
            o.frame_size.unwrap_or(cfg.trial.frame_size),
            rate,
            o.duration.unwrap_or(cfg.trial.duration_s),
            o.timeout.unwrap_or(cfg.trial.timeout_ms),
        )
    });
    Ok((cfg, spec))
}

/// `xlatperf trial`: one trial at a fixed rate; siitperf's lines and a summary, or JSON.
fn trial(c: &ConfigArgs, o: &TrialOptions<'_>) -> Result<()> {
    let json = o.json;
    let (cfg, spec) = trial_spec(c, o)?;
    if let Some(to) = json {
        to.check()?;
    }
    let human = json != Some(&output::JsonTo::Stdout);
    let mut r = runner::open_sized(&cfg, spec.frame_size)?;
    if human {
        eprintln!(
            "xlatperf trial: {} frames/s for {} s, frame size {} (IPv4 frames {}), timeout {} ms; {}",
            spec.rate,
            spec.duration_s,
            spec.frame_size,
            spec.frame_size.saturating_sub(20),
            spec.timeout_ms,
            r.describe()
        );
        if let Some(p) = &spec.preliminary {
            eprintln!(
                "xlatperf trial: stateful, phase 1: N {} frames at R {} frames/s, state table M {}, timeout T {} ms; phase 2 starts D {} ms after phase 1",
                p.frames, p.rate, p.state_table, p.timeout_ms, p.phase_delay_ms
            );
        }
    }
    let report = r.run(&spec)?;
    if let Some(to) = json {
        // The trial's report and, as every procedure's document has them in `meta.ports`, the
        // ports' settings that change a figure (flow control).
        let mut v = serde_json::to_value(&report)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("ports".into(), serde_json::to_value(r.ports())?);
        }
        to.write(&serde_json::to_string(&v)?)?;
    }
    if human {
        for l in xlat_results::siitperf::tp_lines(&report) {
            println!("{l}");
        }
        print!("{}", xlat_results::output::trial_summary(&report));
    }
    Ok(())
}

/// `xlatperf lab up|down|status`.
/// Write `dir` for siitperf's scripts against the lab that is up: siitperf.conf (with the DUT's
/// MACs read from the lab), xlatperf.toml (the lab's ports), build/siitperf-{tp,lat,pdv} as
/// links to this binary. The lab's DUT commands (e.g. nat44's table flush before each trial)
/// have no place in siitperf.conf: they are printed for the script to run.
fn siitperf_dir_for_lab(info: &xlat_lab::LabInfo, dir: &Path) -> Result<()> {
    let (l, r) = xlat_lab::dut_macs()?;
    let sets = [("left.dut_mac".to_string(), l), ("right.dut_mac".to_string(), r)];
    let mut cfg = xlat_config::load(&info.config_path, &sets)?;
    let hooks = std::mem::take(&mut cfg.dut);
    // dut.delete_all and dut.count serve xlatperf's own procedures only.
    let files = xlat_config::to_siitperf(&cfg).map_err(|e| anyhow::anyhow!("{}: {e}", info.config_path.display()))?;
    files.write_into(dir)?;
    let build = dir.join("build");
    std::fs::create_dir_all(&build).with_context(|| format!("creating {}", build.display()))?;
    let exe = std::env::current_exe().context("finding this program's path")?;
    for name in ["siitperf-tp", "siitperf-lat", "siitperf-pdv"] {
        let link = build.join(name);
        let tmp = xlat_config::files::temp_path(&link);
        std::os::unix::fs::symlink(&exe, &tmp).with_context(|| format!("linking {} to {}", tmp.display(), exe.display()))?;
        std::fs::rename(&tmp, &link).with_context(|| format!("renaming {} to {}", tmp.display(), link.display()))?;
    }
    for (when, cmd) in [
        ("before each trial", &hooks.before_trial),
        ("between the phases", &hooks.between_phases),
    ] {
        if let Some(c) = cmd {
            eprintln!("Info: siitperf runs no DUT commands; the lab's DUT wants {when}: {c}");
        }
    }
    // A stateful DUT: what siitperf's stateful scripts want, also kept beside them.
    if let Some(notes) = xlat_lab::siitperf_script_notes(info.topology) {
        let path = dir.join("XLATPERF-SCRIPTS.txt");
        output::write_atomic(&path, notes.as_bytes())?;
        eprint!("{notes}");
        eprintln!("(also in {})", path.display());
    }
    Ok(())
}

/// `xlatperf convert`: siitperf.conf to TOML, or TOML to siitperf.conf (+ xlatperf.toml).
fn convert(file: &Path, out_dir: Option<&Path>) -> Result<()> {
    let cfg = xlat_config::load(file, &[])?;
    if cfg.source.kind == xlat_config::SourceKind::SiitperfConf {
        if out_dir.is_some() {
            anyhow::bail!(
                "--out-dir writes siitperf's files; {} is a siitperf.conf already (its TOML goes to standard output)",
                file.display()
            );
        }
        // With the tester's ports of an xlatperf.toml beside it, as siitperf-tp reads it.
        let cfg = xlat_config::load_with_companion(file)?;
        print!("{}", xlat_config::to_toml(&cfg));
        return Ok(());
    }
    let files = xlat_config::to_siitperf(&cfg).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    match out_dir {
        None => {
            print!("{}", files.conf);
            eprintln!(
                "Info: the tester's ports go into {} beside siitperf.conf: --out-dir DIR writes both",
                xlat_config::COMPANION
            );
        }
        Some(dir) => {
            files.write_into(dir)?;
            println!(
                "wrote {}/siitperf.conf and {}/{}",
                dir.display(),
                dir.display(),
                xlat_config::COMPANION
            );
        }
    }
    Ok(())
}

fn lab(cmd: &LabCmd) -> Result<()> {
    match cmd {
        LabCmd::Up {
            topology,
            replace,
            siitperf_dir,
            conntrack_max,
            conntrack_buckets,
            backend,
            queues,
            dut_cpus,
            no_steering,
        } => {
            let t: xlat_lab::Topology = topology.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
            let opts = xlat_lab::UpOptions {
                replace: *replace,
                conntrack: conntrack_max.map(|m| (m, conntrack_buckets.unwrap_or(m))),
                backend: match backend.as_deref() {
                    Some("afxdp") => Some(xlat_config::Backend::AfXdp),
                    _ => None,
                },
                queues: *queues,
                dut_cpus: dut_cpus.as_ref().map(|c| c.0.clone()),
                no_steering: *no_steering,
            };
            if t.dut().dpdk() && !cfg!(feature = "dpdk") {
                anyhow::bail!(
                    "lab {t}: its tester ports are DPDK virtio-user ports, and this xlatperf was built without DPDK \
                     (cargo build --release --features xlatperf/dpdk)"
                );
            }
            let info = xlat_lab::up(t, &opts)?;
            let (ports, dut) = match &info.clat_ns {
                _ if t.dut().dpdk() => (
                    "(DPDK virtio-user ports)".to_string(),
                    format!("DUT dpdk-testpmd (log {})", xlat_lab::TESTPMD_LOG),
                ),
                Some(clat) => (
                    format!("in namespace {}", info.tester_ns),
                    format!("CLAT in {clat}, PLAT (DUT) in {}", info.dut_ns),
                ),
                None => (format!("in namespace {}", info.tester_ns), format!("DUT in {}", info.dut_ns)),
            };
            eprintln!(
                "lab {} is up: tester ports {} and {} {ports}, {dut}",
                info.topology, info.left_port, info.right_port
            );
            match &info.placement {
                Some(p) => eprintln!("CPUs: {}", p.describe()),
                None => eprintln!("CPUs: one; the DUT and the tester share it, and a figure measures both"),
            }
            println!("{}", info.config_path.display());
            if let Some(dir) = siitperf_dir {
                siitperf_dir_for_lab(&info, dir)?;
                eprintln!("siitperf directory ready: cd {} && ./build/siitperf-tp ...", dir.display());
            }
        }
        LabCmd::Down => {
            let r = xlat_lab::down()?;
            println!("{r}");
        }
        LabCmd::Status => println!("{}", xlat_lab::status()?),
    }
    Ok(())
}

/// Print a procedure's human result on standard output, unless `--json -` took it.
fn print_results<T: xlat_results::BenchResult>(results: &[xlat_results::SizeResult<T>], common: &args::CommonArgs) {
    if common.json != Some(output::JsonTo::Stdout) {
        print!("{}", xlat_results::output::human_results(results));
    }
}

/// `--connections A,B,C` of conn-rate and teardown-rate: the sweep over the number of
/// connections (`xlatperf sweep --over connections=A,B,C -- <the rest of the command line>`),
/// with the command's --json, --csv and --plot for the sweep's own.
fn connections_sweep(argv: &[String], common: &args::CommonArgs) -> Result<()> {
    if common.summary_csv.is_some() {
        anyhow::bail!("--summary-csv is per run; with a list of --connections give --csv (one row per point)");
    }
    let rest = argv.get(1..).unwrap_or_default();
    let (mut command, values) = sweep::strip_option(rest, "--connections");
    let values: Vec<String> = values.iter().flat_map(|v| v.split(',')).map(|v| v.trim().to_string()).collect();
    let mut outputs: Vec<Option<PathBuf>> = Vec::new();
    for o in ["--json", "--csv", "--plot"] {
        let (r, found) = sweep::strip_option(&command, o);
        command = r;
        outputs.push(found.last().map(PathBuf::from));
    }
    if outputs[0].as_deref() == Some(Path::new("-")) {
        anyhow::bail!("with a list of --connections, --json takes a file (the sweep prints its table)");
    }
    sweep::sweep(
        "connections",
        &values,
        &command,
        outputs[0].as_deref(),
        outputs[1].as_deref(),
        outputs[2].as_deref(),
    )
}

/// Run the command `cli` names (`argv` is recorded in the procedures' JSON).
fn run(cli: &Cli, argv: &[String]) -> Result<()> {
    match &cli.cmd {
        Cmd::Trial {
            cfg,
            rate,
            duration,
            frame_size,
            timeout,
            json,
            stateful,
        } => trial(
            cfg,
            &TrialOptions {
                rate: *rate,
                duration: *duration,
                frame_size: *frame_size,
                timeout: *timeout,
                json: json.as_ref(),
                stateful,
            },
        ),
        Cmd::Convert { file, out_dir } => convert(file, out_dir.as_deref()),
        Cmd::Lab { cmd } => lab(cmd),
        Cmd::Throughput(a) => procedures::throughput(a, argv).map(|r| print_results(&r, &a.common)),
        Cmd::Mlrsearch(a) => mlr_reset::mlrsearch(a, argv).map(|r| print_results(&r, &a.common)),
        Cmd::Reset(a) => mlr_reset::reset(a, argv).map(|r| print_results(&r, &a.common)),
        Cmd::FrameLoss(a) => procedures::frame_loss(a, argv).map(|r| print_results(&r, &a.common)),
        Cmd::Latency(a) => procedures::latency(a, argv).map(|r| print_results(&r, &a.common)),
        Cmd::Pdv(a) => procedures::pdv(a, argv).map(|r| print_results(&r, &a.common)),
        Cmd::B2b(a) => procedures::b2b(a, argv).map(|r| print_results(&r, &a.common)),
        Cmd::Recovery(a) => procedures::recovery(a, argv).map(|r| print_results(&r, &a.common)),
        Cmd::ConnRate(a) if a.connections.len() > 1 => connections_sweep(argv, &a.common),
        Cmd::ConnRate(a) => procedures::conn_rate(a, argv).map(|r| print_results(&r, &a.common)),
        Cmd::ConntrackCapacity(a) => procedures::capacity(a, argv).map(|r| print_results(&r, &a.common)),
        Cmd::TeardownRate(a) if a.connections.len() > 1 => connections_sweep(argv, &a.common),
        Cmd::TeardownRate(a) => procedures::teardown(a, argv).map(|r| print_results(&r, &a.common)),
        Cmd::Sweep(a) => sweep::run(a),
        Cmd::Campaign(a) => campaign::campaign(a, &|argv| Cli::try_parse_from(argv).map(|_| ()), run_estimate),
        Cmd::Report(a) => campaign::report(a),
        Cmd::Demo(a) => demo::run(a),
        Cmd::Generate(a) => generate::run(a, <Cli as clap::CommandFactory>::command()),
        // siitperf's exit codes (255 for an input error), as through the siitperf-* links.
        Cmd::SiitperfTp { args } => std::process::exit(siitperf::main(SiitperfProgram::Tp, args)),
        Cmd::SiitperfLat { args } => std::process::exit(siitperf::main(SiitperfProgram::Lat, args)),
        Cmd::SiitperfPdv { args } => std::process::exit(siitperf::main(SiitperfProgram::Pdv, args)),
        Cmd::Selftest { cfg, args } => {
            let c = load(cfg)?;
            // The self-test's trials are stateless (no DUT keeps state between the ports).
            xlat_config::refuse_stateful(&c, "selftest")?;
            selftest::run(&c, args).map(|_| ())
        }
        Cmd::BenchSender { b, reset_mbufs } => bench::sender(&load(&b.cfg)?, b, *reset_mbufs),
        Cmd::BenchReceiver { b } => bench::receiver(&load(&b.cfg)?, b),
    }
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    // Called as siitperf-tp, siitperf-lat or siitperf-pdv through a link: behave as siitperf does.
    let argv0 = argv.first().cloned().unwrap_or_default();
    let rest = argv.get(1..).unwrap_or_default();
    let name = Path::new(&argv0).file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let r = match SiitperfProgram::from_name(name) {
        Some(p) => std::process::exit(siitperf::main(p, rest)),
        None => run(&Cli::parse(), &argv),
    };
    if let Err(e) = r {
        // One line with the causes (siitperf's scripts grep "Error:"), no backtrace.
        eprintln!("Error: {e:#}");
        std::process::exit(if interrupt::requested() { 130 } else { 1 });
    }
}

/// The estimated seconds of a campaign's run from its command line, parsed as this program
/// parses it (an [`xlat_campaign::estimate::Estimator`]); `None` when its options do not fix
/// it (a search whose steps depend on the DUT) or do not parse.
fn run_estimate(command: &[String]) -> Option<f64> {
    let shape = match Cli::try_parse_from(command).ok()?.cmd {
        Cmd::Throughput(a) => estimate::throughput(&a),
        Cmd::Latency(a) => estimate::latency(&a),
        Cmd::Pdv(a) => estimate::pdv(&a),
        Cmd::Reset(a) => estimate::reset(&a),
        _ => return None,
    };
    xlat_campaign::estimate::run_seconds(&shape)
}

#[cfg(test)]
#[path = "main_tests.rs"]
mod tests;
