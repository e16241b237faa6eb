//! xlatperf's test description: the TOML format (docs/config.md), the siitperf.conf reader
//! (docs/siitperf-compat.md), `--set KEY=VALUE` overrides, and validation into a typed
//! [`TestConfig`] with errors that name the file, the line and the key.
//!
//! Both formats are read into one TOML document that remembers where each key came from,
//! overrides are applied to it, and one conversion turns it into the typed values and checks
//! every rule. Nothing here panics on any input.

mod build;
mod doc;
mod emit;
mod error;
pub mod keys;
mod validate;

pub use emit::to_toml;
pub use error::{ConfigError, Loc};

use serde::{Deserialize, Serialize};
use std::path::Path;
use xlat_traffic::Setup;

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
            frame_size: build::DEFAULT_FRAME_SIZE,
            rate: None,
            duration_s: build::DEFAULT_DURATION_S,
            timeout_ms: build::DEFAULT_TIMEOUT_MS,
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

/// Read, override and validate the configuration file `path`. The format is TOML when the
/// name ends in `.toml` or the text looks like TOML (a `[table]` or `key = value` line first),
/// else siitperf.conf. `overrides` are `--set KEY=VALUE` pairs: KEY is a TOML dotted path
/// (`traffic.reverse`) or a siitperf.conf key (`IP-L-var`); they apply before validation.
pub fn load(path: &Path, overrides: &[(String, String)]) -> Result<TestConfig, ConfigError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| ConfigError::Io {
        file: file.clone(),
        msg: e.to_string(),
    })?;
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let bytes = e.as_bytes();
            let at = e.utf8_error().valid_up_to();
            let line = bytes[..at.min(bytes.len())].iter().filter(|b| **b == b'\n').count() + 1;
            return Err(ConfigError::NotText {
                at: Loc::Line { file, line },
            });
        }
    };
    let is_toml = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("toml")) || looks_like_toml(&text);
    let kind = if is_toml { SourceKind::Toml } else { SourceKind::SiitperfConf };
    parse_with_overrides(&text, &file, kind, overrides)
}

/// True when the first line that is not blank or a comment is a TOML table header or a
/// `key = value` line (siitperf.conf lines are `Key value`).
pub fn looks_like_toml(text: &str) -> bool {
    let Some(line) = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#')) else {
        return false;
    };
    if line.starts_with('[') {
        return true;
    }
    match line.split_once('=') {
        Some((key, _)) => {
            let key = key.trim();
            !key.is_empty() && !key.contains(char::is_whitespace) && !key.contains('#')
        }
        None => false,
    }
}

/// Read and validate a TOML test description. `file_name` is used in messages.
pub fn parse_toml(text: &str, file_name: &str) -> Result<TestConfig, ConfigError> {
    parse_with_overrides(text, file_name, SourceKind::Toml, &[])
}

/// Read and validate a siitperf.conf. `file_name` is used in messages.
pub fn parse_siitperf(text: &str, file_name: &str) -> Result<TestConfig, ConfigError> {
    parse_with_overrides(text, file_name, SourceKind::SiitperfConf, &[])
}

/// Read a text of the given format, apply `--set` overrides, and validate.
pub fn parse_with_overrides(
    text: &str,
    file_name: &str,
    kind: SourceKind,
    overrides: &[(String, String)],
) -> Result<TestConfig, ConfigError> {
    let mut d = match kind {
        SourceKind::Toml => doc::read_toml(text, file_name)?,
        SourceKind::SiitperfConf => doc::read_siitperf(text, file_name)?,
    };
    doc::apply_overrides(&mut d, overrides)?;
    build::build(&d)
}

/// Check a configuration again after a program changed it (e.g. the foreground share n/m
/// from siitperf's command line). Keys are named in the style of its source; no line numbers.
pub fn validate(cfg: &TestConfig) -> Result<(), ConfigError> {
    validate::validate(
        cfg,
        &validate::Names {
            kind: cfg.source.kind,
            file: &cfg.source.file,
            doc: None,
        },
    )
}
