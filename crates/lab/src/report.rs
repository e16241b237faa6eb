//! What `lab up` takes and what `up` and `down` report.

use crate::topologies::Topology;
use std::fmt;
use std::path::PathBuf;

/// Options of [`up`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpOptions {
    /// Tear down an existing lab first instead of failing.
    pub replace: bool,
    /// The stateful DUTs' connection tracking table: `(nf_conntrack_max, hash buckets)` set to
    /// exactly these (host-wide, restored by [`down`]) instead of raised to at least
    /// [`CONNTRACK_MAX`] (e.g. a known capacity for RFC 9693's table capacity measurement).
    pub conntrack: Option<(u64, u64)>,
    /// The tester backend the written configuration names (`afpacket` or `afxdp`; `None`:
    /// afpacket).
    pub backend: Option<xlat_config::Backend>,
    /// Queues of each veth end (`numtxqueues`, `numrxqueues`) and the `tester.queues` the
    /// configuration names (`None`: 1).
    pub queues: Option<u32>,
    /// The DUT's CPUs (`--dut-cpus`; `None`: the highest CPU); the tester gets the others.
    pub dut_cpus: Option<Vec<usize>>,
    /// Leave the kernel DUT's processing where the frames arrive (the sending CPU) instead of
    /// steering it to the DUT's CPUs: the way the lab measured before, for comparisons.
    pub no_steering: bool,
}

/// The most queues `lab up --queues` gives a veth end.
pub const MAX_QUEUES: u32 = 16;

/// The largest connection tracking table or hash `lab up` sets (2^26 entries).
pub const CONNTRACK_LIMIT: u64 = 1 << 26;

/// A lab that is up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabInfo {
    pub topology: Topology,
    /// The xlatperf test configuration written for this topology.
    pub config_path: PathBuf,
    pub tester_ns: String,
    /// The DUT's namespace (xlat464: the PLAT's, which holds the connection table).
    pub dut_ns: String,
    /// xlat464: the CLAT's namespace, in front of the DUT's.
    pub clat_ns: Option<String>,
    pub left_port: String,
    pub right_port: String,
    /// Where the DUT and the tester run (`None`: one CPU).
    pub placement: Option<crate::placement::Placement>,
}

/// What [`down`] removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DownReport {
    /// A state file was found.
    pub had_state: bool,
    /// The topology from the state file.
    pub topology: Option<Topology>,
    /// DUT daemons stopped (TAYGA, dpdk-testpmd).
    pub killed: Vec<u32>,
    pub namespaces_removed: Vec<String>,
    pub links_removed: Vec<String>,
    /// Host-wide sysctls set back, as "key=value".
    pub sysctls_restored: Vec<String>,
    pub files_removed: Vec<PathBuf>,
    /// Tester ports an XDP program was removed from (one the `afxdp` backend left behind:
    /// normally none, as its program goes with the process that attached it).
    pub xdp_removed: Vec<String>,
    /// Things worth telling the user that are not failures.
    pub notes: Vec<String>,
}

impl DownReport {
    /// Nothing of a lab existed.
    pub fn nothing_found(&self) -> bool {
        !self.had_state
            && self.killed.is_empty()
            && self.namespaces_removed.is_empty()
            && self.links_removed.is_empty()
            && self.files_removed.is_empty()
            && self.sysctls_restored.is_empty()
            && self.xdp_removed.is_empty()
    }
}

impl fmt::Display for DownReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.nothing_found() {
            writeln!(f, "no lab found; nothing to do")?;
        } else {
            match self.topology {
                Some(t) => writeln!(f, "lab {t} removed")?,
                None => writeln!(f, "lab removed (no state file)")?,
            }
            let list = |v: &[String]| v.join(", ");
            if !self.killed.is_empty() {
                let pids: Vec<String> = self.killed.iter().map(|p| p.to_string()).collect();
                writeln!(f, "  stopped the DUT's daemons (tayga, dpdk-testpmd): pid {}", list(&pids))?;
            }
            if !self.xdp_removed.is_empty() {
                writeln!(f, "  XDP programs: {}", list(&self.xdp_removed))?;
            }
            if !self.namespaces_removed.is_empty() {
                writeln!(f, "  namespaces: {}", list(&self.namespaces_removed))?;
            }
            if !self.links_removed.is_empty() {
                writeln!(f, "  links: {}", list(&self.links_removed))?;
            }
            if !self.sysctls_restored.is_empty() {
                writeln!(f, "  restored: {}", list(&self.sysctls_restored))?;
            }
            if !self.files_removed.is_empty() {
                let files: Vec<String> = self.files_removed.iter().map(|p| p.display().to_string()).collect();
                writeln!(f, "  files: {}", list(&files))?;
            }
        }
        for n in &self.notes {
            writeln!(f, "  note: {n}")?;
        }
        Ok(())
    }
}
