//! The typed test description: [`TestConfig`] and its parts, with the defaults and limits of a
//! trial's parameters. Plain data: it imports no other module of this crate, so that the
//! readers, the conversion, the rules and the writer can all use it without a cycle.

use serde::{Deserialize, Serialize};
use xlat_traffic::Setup;

/// siitperf's IPv6 frame size (FCS included) when the file gives none.
pub(crate) const DEFAULT_FRAME_SIZE: usize = 84;
/// Seconds of sending when the file gives none.
pub(crate) const DEFAULT_DURATION_S: f64 = 60.0;
/// Milliseconds the receivers keep receiving when the file gives none.
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 2000;
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
    /// DPDK ports or vdevs.
    Dpdk,
}

impl Backend {
    /// The name used in the TOML file.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Mem => "mem",
            Backend::AfPacket => "afpacket",
            Backend::Dpdk => "dpdk",
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
    /// Interface name (afpacket), DPDK port id or vdev name (dpdk).
    pub left_port: String,
    pub right_port: String,
    /// Network namespace the tester ports live in (afpacket).
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
