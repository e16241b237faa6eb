//! The typed test description: [`TestConfig`] and its parts, with the defaults and limits of a
//! trial's parameters. Plain data: it imports no other module of this crate, so that the
//! readers, the conversion, the rules and the writer can all use it without a cycle.

use serde::{Deserialize, Serialize};
use xlat_traffic::{IpVersion, Setup};

/// siitperf's IPv6 frame size (FCS included) when the file gives none.
pub(crate) const DEFAULT_FRAME_SIZE: usize = 84;
pub(crate) use xlat_trial::DEFAULT_DURATION_S;
pub(crate) use xlat_trial::DEFAULT_TIMEOUT_MS;
/// The longest trial a file may ask for (one day).
pub(crate) const MAX_DURATION_S: f64 = 86_400.0;

/// Everything a run needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestConfig {
    /// What frames each direction carries (sides, addresses, variation, stateful options;
    /// the foreground share n/m lives here too).
    pub setup: Setup,
    /// How the tester's ports are opened.
    pub tester: TesterConfig,
    /// Defaults of a trial's parameters; the command line may override them.
    pub trial: TrialDefaults,
    /// The preliminary phase of a stateful test (TOML `[stateful]`: N, M, R, T, D); the
    /// command line may override them. Only with `setup.stateful.mode` other than off.
    #[serde(default)]
    pub stateful: StatefulTrial,
    /// Shell commands run for the DUT around the trials (TOML `[dut]`).
    #[serde(default)]
    pub dut: DutHooks,
    /// Where it was read from, for messages.
    pub source: Source,
}

/// How the tester opens its ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// Two in-process ports (tests, self-test).
    Mem,
    /// Linux AF_PACKET sockets on any interface.
    AfPacket,
    /// Linux AF_XDP sockets (an XDP program of xlatperf's own on the interface).
    #[serde(rename = "afxdp")]
    AfXdp,
    /// DPDK ports or vdevs.
    Dpdk,
}

impl Backend {
    /// The name used in the TOML file.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Mem => "mem",
            Backend::AfPacket => "afpacket",
            Backend::AfXdp => "afxdp",
            Backend::Dpdk => "dpdk",
        }
    }
}

/// Ethernet flow control (IEEE 802.3x PAUSE) on the tester's ports (`tester.flow_control`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlowControl {
    /// Neither honour nor send PAUSE frames (the default): a DUT's overload is then its loss,
    /// not the tester's slowing down, as RFC 2544's loss-based figures need.
    #[default]
    Off,
    /// Honour and send PAUSE frames.
    On,
    /// Leave the port as it is (and record what it is).
    Keep,
}

impl FlowControl {
    /// The name in the configuration.
    pub fn name(self) -> &'static str {
        match self {
            FlowControl::Off => "off",
            FlowControl::On => "on",
            FlowControl::Keep => "keep",
        }
    }

    /// What a port is asked: `Some(on)`, or `None` to leave it.
    pub fn wanted(self) -> Option<bool> {
        match self {
            FlowControl::Off => Some(false),
            FlowControl::On => Some(true),
            FlowControl::Keep => None,
        }
    }
}

/// CPU cores of the four sender/receiver roles; `None`: xlatperf chooses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cpus {
    pub left_send: Option<usize>,
    pub right_recv: Option<usize>,
    pub right_send: Option<usize>,
    pub left_recv: Option<usize>,
}

/// The tester's ports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TesterConfig {
    pub backend: Backend,
    /// Interface name (afpacket, afxdp), DPDK port id or vdev name (dpdk).
    pub left_port: String,
    pub right_port: String,
    /// Network namespace the tester ports live in (afpacket, afxdp).
    pub netns: Option<String>,
    /// DPDK EAL arguments (dpdk).
    pub eal_args: Vec<String>,
    pub promisc: bool,
    /// The two ports are cabled to each other with no DUT (the tester's self-test): each
    /// side's DUT MAC is the other port's MAC.
    #[serde(default)]
    pub loopback: bool,
    pub cpus: Cpus,
    /// DPDK memory channels (siitperf's MEM-Channels).
    pub mem_channels: Option<u32>,
    /// Queue sets per port, each with a sender and a receiver on a core of its own.
    pub queues: u32,
    /// A trial whose sender fell further than this behind its schedule (microseconds) is
    /// invalid; `None`: only the end of sending is judged.
    #[serde(default)]
    pub max_send_lag_us: Option<u64>,
    /// The same bound in frames (lag x rate); `None`: none.
    #[serde(default)]
    pub max_send_lag_frames: Option<u64>,
    /// With a lag bound: the catch-up pace, percent above the rate; `None`: the default
    /// ([`xlat_trial::validity::DEFAULT_CATCH_UP_PERCENT`]).
    #[serde(default)]
    pub catch_up_percent: Option<u64>,
    /// What stamps the frames for latency and delays (`tester.timestamps`); `None`: auto, the
    /// best the ports offer that xlatperf reads.
    #[serde(default)]
    pub timestamps: Option<xlat_trial::StampSource>,
    /// Ethernet flow control on the tester's ports (`tester.flow_control`).
    #[serde(default)]
    pub flow_control: FlowControl,
    /// DPDK receive descriptors per receive queue (`tester.rx_descriptors`); `None`: 1,024.
    #[serde(default)]
    pub rx_descriptors: Option<u16>,
    /// DPDK transmit descriptors per transmit queue (`tester.tx_descriptors`); `None`: 1,024.
    #[serde(default)]
    pub tx_descriptors: Option<u16>,
}

impl TesterConfig {
    /// [`TesterConfig::max_send_lag_us`] in nanoseconds, as a trial takes it.
    pub fn max_send_lag_ns(&self) -> Option<u64> {
        self.max_send_lag_us.map(|us| us.saturating_mul(1000))
    }

    /// This tester's bound of its senders' lag and their catch-up pace.
    pub fn send_lag(&self) -> xlat_trial::SendLag {
        xlat_trial::SendLag {
            max_ns: self.max_send_lag_ns(),
            max_frames: self.max_send_lag_frames,
            catch_up_percent: self.catch_up_percent,
        }
    }

    /// `spec` with this tester's bounds of the sender's lag where it has none.
    pub fn bound_send_lag(&self, spec: xlat_trial::TrialSpec) -> xlat_trial::TrialSpec {
        self.send_lag().apply(spec)
    }
}

/// Defaults of a trial's parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialDefaults {
    /// siitperf's IPv6 frame size parameter (FCS included); IPv4 frames are 20 bytes shorter.
    pub frame_size: usize,
    /// Frames per second per active direction; `None`: must be given on the command line.
    pub rate: Option<u64>,
    /// Seconds of sending.
    pub duration_s: f64,
    /// Milliseconds the receivers keep receiving after sending ended.
    pub timeout_ms: u64,
}

impl Default for TrialDefaults {
    fn default() -> Self {
        TrialDefaults {
            frame_size: DEFAULT_FRAME_SIZE,
            rate: None,
            duration_s: DEFAULT_DURATION_S,
            timeout_ms: DEFAULT_TIMEOUT_MS,
        }
    }
}

/// The default T, milliseconds the Responder keeps receiving after phase 1's sending ended.
pub const DEFAULT_PRELIMINARY_TIMEOUT_MS: u64 = 500;
/// The largest T (siitperf's range).
pub const MAX_PRELIMINARY_TIMEOUT_MS: u64 = 2000;
/// The largest D (siitperf's range).
pub const MAX_PHASE_DELAY_MS: u64 = 100_000_000;
/// The largest R: a rate, as `trial.rate`.
pub const MAX_PRELIMINARY_RATE: u64 = 1_000_000_000;

/// The preliminary phase (phase 1) of a stateful test (RFC 9693) as the file gives it, with
/// siitperf's letters; `None`: not given (N and R are then required by every command that runs
/// a trial, M, T and D have defaults that depend on the others: see [`Preliminary`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatefulTrial {
    /// N: frames the Initiator sends in phase 1 (foreground and background), 1 to 2^32-1.
    pub preliminary_frames: Option<u32>,
    /// M: entries of the Responder's state table, 1 to 2^32-1. Default: the foreground frames
    /// among N.
    pub state_table: Option<u32>,
    /// R: phase 1's rate, frames/s, 1 to 10^9.
    pub preliminary_rate: Option<u64>,
    /// T: ms the Responder keeps receiving after phase 1's sending ended, 1-2000. Default 500.
    pub preliminary_timeout_ms: Option<u64>,
    /// D: ms from the start of phase 1 to the start of phase 2, 1 to 10^8. Default:
    /// ceil(1000 N / R) + 2 T.
    pub phase_delay_ms: Option<u64>,
}

/// The preliminary phase with every value known (N, M, R, T, D).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preliminary {
    pub frames: u32,
    pub state_table: u32,
    pub rate: u64,
    pub timeout_ms: u64,
    pub phase_delay_ms: u64,
}

impl From<Preliminary> for xlat_trial::PreliminarySpec {
    fn from(p: Preliminary) -> xlat_trial::PreliminarySpec {
        xlat_trial::PreliminarySpec {
            frames: u64::from(p.frames),
            state_table: u64::from(p.state_table),
            rate: p.rate,
            timeout_ms: p.timeout_ms,
            phase_delay_ms: p.phase_delay_ms,
        }
    }
}

/// The foreground frames among the first `frames` frames when frame i is foreground iff
/// `i mod n < m`: floor(frames/n)*m + min(frames mod n, m), exactly what the sender sends.
/// (siitperf computes frames - floor(frames*(n-m)/n), which can be one less.)
pub fn foreground_frames(frames: u64, n: u32, m: u32) -> u64 {
    let (n, m) = (u64::from(n.max(1)), u64::from(m));
    (frames / n) * m + (frames % n).min(m)
}

impl StatefulTrial {
    /// The default M: the foreground frames among N with foreground share m of n.
    pub fn default_state_table(frames: u32, fg_n: u32, fg_m: u32) -> u64 {
        foreground_frames(u64::from(frames), fg_n, fg_m)
    }

    /// The default D: ceil(1000 N / R) + 2 T, in 64-bit (128-bit on the way) arithmetic.
    pub fn default_phase_delay_ms(frames: u32, rate: u64, timeout_ms: u64) -> u64 {
        let rate = u128::from(rate.max(1));
        let send_ms = (1000 * u128::from(frames)).div_ceil(rate);
        u64::try_from(send_ms + 2 * u128::from(timeout_ms)).unwrap_or(u64::MAX)
    }
}

pub use xlat_trial::DutHooks;

/// The format of a configuration file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SourceKind {
    /// xlatperf's TOML test description.
    Toml,
    /// siitperf's `Key value` file.
    SiitperfConf,
}

/// Which file a configuration came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// The file name as given (used in messages).
    pub file: String,
    pub kind: SourceKind,
}

/// The companion file siitperf's entry points read beside siitperf.conf: the tester's ports,
/// backend and EAL arguments, which siitperf compiles into its binary and siitperf.conf cannot
/// hold (docs/siitperf-compat.md).
pub const COMPANION: &str = "xlatperf.toml";

/// The frame sizes a setup takes, when a size is outside them: 84 up to `max`, and why `max`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "84-{max}: {}{}",
    if *all_ipv4 { "all frames are IPv4, 20 bytes shorter than the size" } else { "the IPv6 frame size, FCS included" },
    if *tunnel { ", and 40 bytes longer in the tunnel" } else { "" }
)]
pub struct FrameSizeRange {
    pub max: usize,
    /// Every frame is IPv4 (20 bytes more allowed).
    pub all_ipv4: bool,
    /// A side sends through a tunnel (40 bytes fewer).
    pub tunnel: bool,
}

/// Whether frame size `size` (siitperf's: the IPv6 frame's, FCS included) fits setup `s`:
/// 84 up to the largest frame, 20 more when every frame is IPv4, 40 less with a tunnel (its
/// frames are 40 bytes longer than the IPv4 frames they carry). The error says the range and
/// why, for a message that names the key or option.
pub fn frame_size_rule(s: &Setup, size: usize) -> Result<(), FrameSizeRange> {
    let all_ipv4 = s.left.ip_version == IpVersion::V4 && s.right.ip_version == IpVersion::V4 && !s.has_background();
    let tunnel = s.left.tunnel.is_some() || s.right.tunnel.is_some();
    let max = xlat_wire::frame::MAX_FRAME_SIZE + if all_ipv4 { 20 } else { 0 } - if tunnel { 40 } else { 0 };
    if (84..=max).contains(&size) {
        return Ok(());
    }
    Err(FrameSizeRange { max, all_ipv4, tunnel })
}
