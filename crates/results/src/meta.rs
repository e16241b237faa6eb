//! Who produced a result, on which machine, and when: the `meta` of every result document.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Who produced a result and from what; the CLI fills it in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    pub xlatperf_version: String,
    /// The version of this crate.
    pub bench_version: String,
    /// The effective configuration of the run (the CLI's parsed test description).
    pub config: serde_json::Value,
    /// Every random seed in use, by name (port and address pseudorandomness, simulator, ...).
    pub seeds: BTreeMap<String, u64>,
    /// Start time as the CLI formats it (RFC 3339 recommended).
    pub started_at: Option<String>,
    pub command_line: Option<Vec<String>>,
    /// The machine the tester ran on (absent in documents written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<Host>,
    /// The tester's ports' settings that change a figure (Ethernet flow control), as read back
    /// when they were opened; absent in documents written before they were recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<xlat_trial::PortSettings>,
    /// The git commit xlatperf was built from (`-dirty` when the tree had changes), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_commit: Option<String>,
}

/// The machine a result was measured on, as a report shows it beside the figures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Host {
    /// The CPU model (the first `model name` of /proc/cpuinfo).
    pub cpu_model: String,
    /// CPUs this process could use.
    pub cpus: usize,
    /// The running kernel's release (`uname -r`).
    pub kernel: String,
    pub hostname: String,
}

impl RunMeta {
    pub fn new(xlatperf_version: &str) -> RunMeta {
        RunMeta {
            xlatperf_version: xlatperf_version.to_string(),
            bench_version: env!("CARGO_PKG_VERSION").to_string(),
            ..RunMeta::default()
        }
    }
}

/// Now as RFC 3339 UTC ("2025-01-31T12:34:56Z").
pub fn rfc3339_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    rfc3339(secs)
}

/// Seconds since 1970 as RFC 3339 UTC.
pub fn rfc3339(secs: u64) -> String {
    // Howard Hinnant's civil_from_days.
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, (rem / 60) % 60, rem % 60)
}
