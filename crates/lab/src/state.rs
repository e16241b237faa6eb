//! The state file: what `up` created, so that `down` can remove it after a crash.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::LabError;
use crate::topologies::Topology;

/// Directory of the state file, the written test configuration and TAYGA's files.
pub const RUN_DIR: &str = "/run/xlatperf";
/// The state file.
pub const STATE_FILE: &str = "/run/xlatperf/lab.json";
/// TAYGA's configuration, pid and log files.
pub const TAYGA_CONF: &str = "/run/xlatperf/tayga.conf";
pub const TAYGA_PIDFILE: &str = "/run/xlatperf/tayga.pid";
/// The CLAT's TAYGA (xlat464): configuration and pid files.
pub const CLAT_TAYGA_CONF: &str = "/run/xlatperf/tayga-clat.conf";
pub const CLAT_TAYGA_PIDFILE: &str = "/run/xlatperf/tayga-clat.pid";

/// Where `up` writes the test configuration for a topology.
pub fn config_path(t: Topology) -> PathBuf {
    Path::new(RUN_DIR).join(format!("lab-{t}.toml"))
}

/// A sysctl of the initial namespace that `up` raised, with the value to restore on `down`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedSysctl {
    pub key: String,
    pub original: String,
    pub set: String,
}

/// What the lab created. Written before the first change and updated as `up` goes on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabState {
    pub topology: Topology,
    /// `false` while `up` is still running (or if it crashed).
    pub complete: bool,
    pub namespaces: Vec<String>,
    pub links: Vec<String>,
    pub config_path: Option<PathBuf>,
    pub tayga_pid: Option<u32>,
    /// The CLAT's TAYGA (xlat464); absent in state files of labs without one.
    #[serde(default)]
    pub clat_pid: Option<u32>,
    /// A DUT daemon of its own besides TAYGA (dpdk-fwd's dpdk-testpmd); absent in older state
    /// files.
    #[serde(default)]
    pub dut_pid: Option<u32>,
    /// Files to remove on `down` (besides the state file).
    pub files: Vec<PathBuf>,
    /// Host-wide sysctls (neighbour table limits) to restore on `down`.
    pub saved_sysctls: Vec<SavedSysctl>,
    /// Seconds since the Unix epoch when `up` started.
    pub created_unix: u64,
    /// Where the DUT and the tester run (`None`: one CPU, nothing placed).
    #[serde(default)]
    pub placement: Option<crate::placement::Placement>,
}

impl LabState {
    pub(crate) fn new(topology: Topology) -> LabState {
        let created_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        LabState {
            topology,
            complete: false,
            namespaces: Vec::new(),
            links: Vec::new(),
            config_path: None,
            tayga_pid: None,
            clat_pid: None,
            dut_pid: None,
            files: Vec::new(),
            saved_sysctls: Vec::new(),
            created_unix,
            placement: None,
        }
    }
}

/// Write the state file atomically (temporary file, then rename).
pub(crate) fn write(state: &LabState) -> Result<(), LabError> {
    std::fs::create_dir_all(RUN_DIR).map_err(|e| LabError::io(RUN_DIR, e))?;
    let text = serde_json::to_string_pretty(state).map_err(|e| LabError::State {
        path: STATE_FILE.into(),
        detail: e.to_string(),
    })?;
    xlat_config::files::write_atomic(Path::new(STATE_FILE), (text + "\n").as_bytes()).map_err(|e| LabError::io(STATE_FILE, e))
}

/// Remove `path`; `Ok(true)` if it was there.
pub(crate) fn remove_file_if_exists(path: &Path) -> Result<bool, LabError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(LabError::io(path, e)),
    }
}

/// Read the state file: `Ok(None)` if there is none.
pub(crate) fn read() -> Result<Option<LabState>, LabError> {
    read_from(Path::new(STATE_FILE))
}

pub(crate) fn read_from(path: &Path) -> Result<Option<LabState>, LabError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| LabError::State {
            path: path.into(),
            detail: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(LabError::io(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_and_bad_files_are_errors() {
        let dir = std::env::temp_dir().join(format!("xlat-lab-state-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("lab.json");
        assert!(read_from(&path).unwrap().is_none());
        let mut st = LabState::new(Topology::SIIT);
        st.tayga_pid = Some(42);
        st.clat_pid = Some(43);
        st.saved_sysctls.push(SavedSysctl {
            key: "k".into(),
            original: "1".into(),
            set: "2".into(),
        });
        std::fs::write(&path, serde_json::to_string(&st).unwrap()).unwrap();
        assert_eq!(read_from(&path).unwrap(), Some(st.clone()));
        // A state file written before there was a CLAT reads as one without.
        let mut old: serde_json::Value = serde_json::to_value(&st).unwrap();
        old.as_object_mut().unwrap().remove("clat_pid");
        std::fs::write(&path, old.to_string()).unwrap();
        assert_eq!(read_from(&path).unwrap().unwrap().clat_pid, None);
        std::fs::write(&path, "{ not json").unwrap();
        assert!(matches!(read_from(&path), Err(LabError::State { .. })));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn config_path_names_the_topology() {
        assert_eq!(config_path(Topology::ROUTER6), PathBuf::from("/run/xlatperf/lab-router6.toml"));
    }
}
