//! The options of the procedure commands (`throughput`, `frame-loss`, `latency`, `pdv`,
//! `b2b`, `conn-rate`, `conntrack-capacity`, `teardown-rate`, `recovery`), on top of the shared
//! groups of [`crate::args`].

use clap::Args;

use crate::args::*;

/// `xlatperf throughput`.
#[derive(Args, Clone, Debug)]
pub struct ThroughputArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub stateful: StatefulArgs,
    #[command(flatten)]
    pub search: SearchArgs,
    #[command(flatten)]
    pub link: LinkArgs,
    /// Seconds of each full-length trial (RFC 2544, RFC 8219: 60).
    #[arg(long, value_name = "S", default_value_t = xlat_results::Procedure::Throughput.defaults().duration_s, value_parser = parse_seconds, allow_negative_numbers = true)]
    pub duration: f64,
    /// Search with trials of S seconds, then confirm the result with a full-length trial (and
    /// search on with full-length trials below it if the confirmation fails).
    #[arg(long, value_name = "S", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub short: Option<f64>,
    /// Accelerated search (MLRsearch style): phases with trials growing from --short (default
    /// a tenth of --duration) to --duration, widths halving down to --error.
    #[arg(long)]
    pub accelerated: bool,
    /// Phases of the accelerated search.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub phases: u32,
    /// siitperf-pdv's special throughput test: a frame arriving later than MS milliseconds
    /// counts as lost.
    #[arg(long = "frame-timeout", value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub frame_timeout: Option<u64>,
}

/// `xlatperf mlrsearch`.
#[derive(Args, Clone, Debug)]
pub struct MlrArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub stateful: StatefulArgs,
    #[command(flatten)]
    pub link: LinkArgs,
    /// Max Load, frames/s per direction. Default: the line rate of --link-gbps.
    #[arg(long = "max-load", value_name = "FPS", value_parser = parse_rate)]
    pub max_load: Option<u64>,
    /// Min Load, frames/s per direction. Default: a thousandth of Max Load.
    #[arg(long = "min-load", value_name = "FPS", value_parser = parse_rate)]
    pub min_load: Option<u64>,
    /// A Search Goal (repeat for several): presets ndr, pdr and/or key=value pairs name, loss,
    /// exceed, width, initial, final, sum, e.g. "name=PDR,loss=0.5%,exceed=0.5,final=1,sum=21".
    /// Unset attributes come from the options below. Default: ndr and pdr.
    #[arg(long = "goal", value_name = "SPEC")]
    pub goals: Vec<String>,
    /// Goal Final Trial Duration, seconds (RFC 2544: 60).
    #[arg(long, value_name = "S", default_value_t = xlat_results::Procedure::Mlrsearch.defaults().duration_s, value_parser = parse_seconds, allow_negative_numbers = true)]
    pub duration: f64,
    /// Goal Duration Sum, seconds. Default: --duration (one full-length trial decides a load).
    #[arg(long = "duration-sum", value_name = "S", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub duration_sum: Option<f64>,
    /// Goal Initial Trial Duration, seconds (at most --duration). Default: 1, or --duration if
    /// shorter.
    #[arg(long = "initial-duration", value_name = "S", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub initial_duration: Option<f64>,
    /// Goal Exceed Ratio: the share of the duration sum high-loss trials may take (RFC 2544: 0).
    #[arg(long = "exceed-ratio", value_name = "X", default_value_t = 0.0, allow_negative_numbers = true)]
    pub exceed_ratio: f64,
    /// Goal Width, relative to the Relevant Upper Bound.
    #[arg(long, value_name = "X", default_value_t = xlat_procedures::mlrsearch::DEFAULT_WIDTH, allow_negative_numbers = true)]
    pub width: f64,
    /// Coarser targets (shorter trials, wider) before each goal's own.
    #[arg(long = "preceding-targets", value_name = "N", default_value_t = xlat_procedures::mlrsearch::DEFAULT_PRECEDING_TARGETS, value_parser = clap::value_parser!(u32).range(0..=8))]
    pub preceding_targets: u32,
    /// The search stops after N trials, retries included (the goals not reached are marked
    /// irregular).
    #[arg(long = "max-trials", value_name = "N", default_value_t = xlat_procedures::mlrsearch::DEFAULT_MAX_TRIALS)]
    pub max_trials: usize,
}

/// `xlatperf reset`.
#[derive(Args, Clone, Debug)]
pub struct ResetArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub stateful: StatefulArgs,
    /// Frames/s per direction: one the DUT forwards without loss (below its throughput), so
    /// that every lost frame is the reset's.
    #[arg(long, value_name = "FPS", value_parser = parse_rate)]
    pub rate: u64,
    /// Seconds of the trial: long enough for the DUT to come back after the reset.
    #[arg(long, value_name = "S", default_value_t = xlat_results::Procedure::Reset.defaults().duration_s, value_parser = parse_seconds, allow_negative_numbers = true)]
    pub duration: f64,
    /// Seconds into the trial at which the reset command ([dut] reset) starts.
    #[arg(long, value_name = "S", default_value_t = xlat_results::defaults::DEFAULT_RESET_AT_S, value_parser = parse_seconds, allow_negative_numbers = true)]
    pub at: f64,
}

/// `xlatperf frame-loss`.
#[derive(Args, Clone, Debug)]
pub struct FrameLossArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub stateful: StatefulArgs,
    #[command(flatten)]
    pub link: LinkArgs,
    /// Seconds of each trial (RFC 2544: 60).
    #[arg(long, value_name = "S", default_value_t = xlat_results::Procedure::FrameLoss.defaults().duration_s, value_parser = parse_seconds, allow_negative_numbers = true)]
    pub duration: f64,
    /// The first (highest) rate, frames/s per direction. Default: the line rate of --link-gbps.
    #[arg(long = "max-rate", value_name = "FPS", value_parser = parse_rate)]
    pub max_rate: Option<u64>,
    /// The step down, a fraction of --max-rate or a percentage; at most 10% (RFC 2544 26.3).
    #[arg(long, value_name = "FRACTION|P%", default_value = "10%", value_parser = parse_step)]
    pub step: f64,
    /// Measure exactly these rates (comma-separated) instead of stepping down from --max-rate.
    #[arg(long, value_name = "FPS,...", value_delimiter = ',', value_parser = parse_rate)]
    pub rates: Vec<u64>,
    /// siitperf-pdv's special test: a frame arriving later than MS milliseconds counts as lost.
    #[arg(long = "frame-timeout", value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub frame_timeout: Option<u64>,
}

/// `xlatperf latency`.
#[derive(Args, Clone, Debug)]
pub struct LatencyArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub stateful: StatefulArgs,
    /// Frames/s per direction: the measured throughput (RFC 8219 s.7.2).
    #[arg(long, value_name = "FPS", value_parser = parse_rate)]
    pub rate: u64,
    /// Seconds of each trial (RFC 8219: at least 120).
    #[arg(long, value_name = "S", default_value_t = xlat_results::Procedure::Latency.defaults().duration_s, value_parser = parse_seconds, allow_negative_numbers = true)]
    pub duration: f64,
    /// Seconds before the first tagged frame (RFC 8219: 60).
    #[arg(long, value_name = "S", default_value_t = xlat_results::defaults::DEFAULT_LATENCY_DELAY_S, value_parser = parse_seconds_or_zero, allow_negative_numbers = true)]
    pub delay: f64,
    /// Tagged frames per direction, spread evenly after the delay (RFC 8219: at least 500).
    #[arg(long, value_name = "N", default_value_t = xlat_results::defaults::DEFAULT_TAGS, value_parser = clap::value_parser!(u64).range(500..=50_000))]
    pub tags: u64,
    /// Trials whose typical and worst-case latencies are summarised by their medians (RFC
    /// 8219: at least 20).
    #[arg(long, value_name = "N", default_value_t = xlat_results::Procedure::Latency.defaults().repetitions, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub repetitions: u32,
    /// Keep every tagged frame's latency (nanoseconds, null for a lost tag) in the JSON result,
    /// per repetition and direction, in tag order.
    #[arg(long)]
    pub keep_samples: bool,
}

/// `xlatperf pdv`.
#[derive(Args, Clone, Debug)]
pub struct PdvArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub stateful: StatefulArgs,
    /// Frames/s per direction: the measured throughput (RFC 8219 s.7.3).
    #[arg(long, value_name = "FPS", value_parser = parse_rate)]
    pub rate: u64,
    /// Seconds of each trial (RFC 8219: 60).
    #[arg(long, value_name = "S", default_value_t = xlat_results::Procedure::Pdv.defaults().duration_s, value_parser = parse_seconds, allow_negative_numbers = true)]
    pub duration: f64,
    /// Keep every frame's delay for exact percentiles (memory grows with the frames) instead
    /// of the bounded histogram (relative error 1/2048).
    #[arg(long)]
    pub exact: bool,
    /// 0: measure PDV and IPDV. Above 0: siitperf-pdv's special test, in which a frame later
    /// than MS milliseconds counts as lost and each trial passes or fails.
    #[arg(long = "frame-timeout", value_name = "MS", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
    pub frame_timeout: u64,
    /// Trials summarised by their median (RFC 8219: at least 20).
    #[arg(long, value_name = "N", default_value_t = xlat_results::Procedure::Pdv.defaults().repetitions, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub repetitions: u32,
}

/// `xlatperf b2b`.
#[derive(Args, Clone, Debug)]
pub struct B2bArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub stateful: StatefulArgs,
    #[command(flatten)]
    pub link: LinkArgs,
    /// The rate of the bursts, frames/s. Default: the line rate of --link-gbps for the frame size.
    #[arg(long = "line-rate", value_name = "FPS", value_parser = parse_rate)]
    pub line_rate: Option<u64>,
    /// The longest burst tried, frames (tried first). Default: 2 s of the line rate.
    #[arg(long = "max-burst", value_name = "FRAMES", value_parser = parse_rate)]
    pub max_burst: Option<u64>,
    /// The search stops when the burst interval is at most this many frames. Default: 0.1% of
    /// --max-burst.
    #[arg(long, value_name = "FRAMES", value_parser = parse_rate)]
    pub error: Option<u64>,
    /// Searches summarised by average, minimum, maximum and standard deviation (RFC 9004: at
    /// least 50).
    #[arg(long, value_name = "N", default_value_t = xlat_results::Procedure::BackToBack.defaults().repetitions, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub repetitions: u32,
    /// Seconds of idle time between trials (at least 2).
    #[arg(long, value_name = "S", default_value_t = xlat_results::defaults::DEFAULT_IDLE_S, value_parser = parse_idle)]
    pub idle: f64,
    /// The measured throughput, frames/s, for the corrected DUT buffer time (RFC 9004 5.4).
    #[arg(long, value_name = "FPS", value_parser = parse_rate)]
    pub throughput: Option<u64>,
}

/// `xlatperf conn-rate`.
#[derive(Args, Clone, Debug)]
pub struct ConnRateArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// N = M: connections each step opens (phase 1 frames, state table entries). A list
    /// (10k,100k,1M) runs the search once per value: a sweep (see `xlatperf sweep`).
    #[arg(long, value_name = "N[,N...]", value_delimiter = ',', required = true, value_parser = parse_rate)]
    pub connections: Vec<u64>,
    /// The highest rate tried (first), connections/s.
    #[arg(long = "max-rate", value_name = "CPS", value_parser = parse_rate)]
    pub max_rate: u64,
    /// The search stops when the interval is at most this wide, connections/s. Default: 1 % of
    /// --max-rate.
    #[arg(long, value_name = "CPS", value_parser = parse_rate)]
    pub error: Option<u64>,
    /// Validate every step (RFC 9693): after phase 1 the Responder sends once to every learnt
    /// tuple, and every frame must come back through the DUT.
    #[arg(long)]
    pub validate: bool,
    /// The validation's rate as a multiple of the step's rate (cttc.sh's alpha).
    #[arg(long, value_name = "F", default_value = "1", requires = "validate", value_parser = parse_factor)]
    pub alpha: f64,
    /// The accelerated variant: searches with fewer connections first, each phase starting
    /// where the previous one ended; only the last phase, with --connections, gives the result.
    #[arg(long)]
    pub accelerated: bool,
    /// The first phase's connections (accelerated). Default: --connections / 100.
    #[arg(long = "initial-connections", value_name = "N", requires = "accelerated", value_parser = parse_rate)]
    pub initial_connections: Option<u64>,
    /// Phases of the accelerated search (2 to 10).
    #[arg(long, value_name = "P", default_value_t = 3, requires = "accelerated")]
    pub phases: u32,
}

/// `xlatperf conntrack-capacity`.
#[derive(Args, Clone, Debug)]
pub struct CapacityArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// C0: a number of connections the DUT surely holds; the search starts there.
    #[arg(long, value_name = "N", default_value = "1000000", value_parser = parse_rate)]
    pub c0: u64,
    /// The highest connection establishment rate tried, connections/s.
    #[arg(long = "max-rate", value_name = "CPS", default_value = "4000000", value_parser = parse_rate)]
    pub max_rate: u64,
    /// The rate searches stop when their interval is at most this wide, connections/s.
    #[arg(long, value_name = "CPS", default_value = "100000", value_parser = parse_rate)]
    pub error: u64,
    /// E: the capacity's resolution, connections.
    #[arg(long, value_name = "N", default_value = "1", value_parser = parse_rate)]
    pub resolution: u64,
    /// The validation rate as a multiple of the step's rate.
    #[arg(long, value_name = "F", default_value = "1", value_parser = parse_factor)]
    pub alpha: f64,
    /// The doubling stops when the rate falls below beta x the previous size's.
    #[arg(long, value_name = "F", default_value = "0.2", value_parser = parse_factor)]
    pub beta: f64,
    /// In the bisection a size fails when its rate falls below gamma x the last fitting size's.
    #[arg(long, value_name = "F", default_value = "0.4", value_parser = parse_factor)]
    pub gamma: f64,
    /// The doubling never tries more connections than this.
    #[arg(long = "max-connections", value_name = "N", default_value = "1073741824", value_parser = parse_rate)]
    pub max_connections: u64,
}

/// `xlatperf teardown-rate`.
#[derive(Args, Clone, Debug)]
pub struct TeardownArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// N: connections loaded, then deleted. A list (10k,100k,1M) measures once per value: a
    /// sweep (see `xlatperf sweep`).
    #[arg(long, value_name = "N[,N...]", value_delimiter = ',', required = true, value_parser = parse_rate)]
    pub connections: Vec<u64>,
    /// Phase 1's rate while loading, connections/s: one the DUT sustains (see conn-rate).
    #[arg(long, value_name = "CPS", value_parser = parse_rate)]
    pub rate: u64,
}

/// `xlatperf recovery`.
#[derive(Args, Clone, Debug)]
pub struct RecoveryArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub link: LinkArgs,
    /// The measured throughput, frames/s per direction.
    #[arg(long, value_name = "FPS", value_parser = parse_rate)]
    pub throughput: u64,
    /// The maximum frame rate of the media (the overload never exceeds it). Default: the line
    /// rate of --link-gbps.
    #[arg(long = "line-rate", value_name = "FPS", value_parser = parse_rate)]
    pub line_rate: Option<u64>,
    /// Seconds of overload (RFC 2544: at least 60).
    #[arg(long, value_name = "S", default_value_t = xlat_results::Procedure::Recovery.defaults().duration_s, value_parser = parse_seconds, allow_negative_numbers = true)]
    pub overload: f64,
    /// Seconds at the reduced rate after it (the longest recovery time that can be seen).
    #[arg(long, value_name = "S", default_value_t = xlat_results::defaults::DEFAULT_RECOVERY_S, value_parser = parse_seconds, allow_negative_numbers = true)]
    pub recovery: f64,
    /// The overload rate as a factor of the throughput (RFC 2544: 110%).
    #[arg(long = "overload-factor", value_name = "F|P%", default_value = "110%", value_parser = parse_factor)]
    pub overload_factor: f64,
    /// The reduced rate as a factor of the throughput (RFC 2544: 50%).
    #[arg(long = "reduced-factor", value_name = "F|P%", default_value = "50%", value_parser = parse_factor)]
    pub reduced_factor: f64,
}
