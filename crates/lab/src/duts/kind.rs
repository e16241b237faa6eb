//! What a kind of DUT is to the lab ([`DutKind`]), what `lab down` gives it ([`Down`]), and
//! what several kinds share (the routes of a DUT whose left is IPv6 only, the tester's lwB4s
//! or CEs).

use xlat_config::TestConfig;
use xlat_traffic::maprule::MapRule;
use xlat_traffic::SideMap;

use crate::cmd::ip_in;
use crate::error::LabError;
use crate::names::*;
use crate::placement::Placement;
use crate::report::{DownReport, UpOptions};
use crate::state::LabState;
use crate::topologies::Topology;

/// What one kind of DUT adds to the lab.
pub(crate) trait DutKind: Sync {
    /// Its name in messages (and to tell kinds apart).
    fn name(&self) -> &'static str;

    /// Programs `lab up` needs for it besides ip, nft, sysctl and kill.
    fn tools(&self) -> &'static [&'static str] {
        &[]
    }

    /// Refuse `lab up`'s options that make no sense for it, before anything is made.
    fn check(&self, _t: Topology, _opts: &UpOptions) -> Result<(), LabError> {
        Ok(())
    }

    /// Whether the lab cables it: namespaces, veths, addresses, forwarding, steering. A DUT
    /// that brings its own ports (a DPDK process) builds everything in [`DutKind::build`].
    fn cabled(&self) -> bool {
        true
    }

    /// Build it: in the DUT namespace, once cabled (or everything, when not cabled),
    /// recording in `st` what `down` must undo before making it.
    fn build(&self, t: Topology, st: &mut LabState, opts: &UpOptions) -> Result<(), LabError>;

    /// Stop what of it may run (`lab down`), by the pids `down.state` recorded and by what a
    /// crash before they were recorded left.
    fn stop(&self, _down: &mut Down<'_>) {}

    /// Files it may leave, removed by `lab down` whether or not a state file names them.
    fn files(&self) -> &'static [&'static str] {
        &[]
    }

    /// The tester's ports in the written configuration (left, right).
    fn tester_ports(&self) -> (&'static str, &'static str) {
        (LEFT_PORT, RIGHT_PORT)
    }

    /// What it changes in the tester's configuration that the lab writes (`cfg`, built from
    /// the topology's declaration).
    fn tester_config(&self, _t: Topology, _cfg: &mut TestConfig, _placement: Option<&Placement>) {}

    /// What processes frames on the DUT's CPUs, in the configuration's comment.
    fn on_dut_cpus(&self, _t: Topology) -> String {
        "the DUT's packet processing (the kernel's)".to_string()
    }
}

/// A stateless DUT whose left is IPv6 only, its work done by two tc programs on that interface:
/// lw4o6's lwAFTR (a binding table), mape's and mapt's BRs (the mapping rule). Each of their
/// modules declares one.
pub(crate) struct TcPrograms {
    pub name: &'static str,
    /// Load its programs and attach them to the DUT's left interface.
    pub attach: fn() -> Result<(), LabError>,
    /// Its CEs' addresses follow the mapping rule and are on the left link.
    pub ces_by_the_rule: bool,
    /// The tester's left side: the rule its lwB4s or CEs follow, and the PSID of a binding.
    pub tester: fn() -> (Option<MapRule>, Option<u16>),
}

impl DutKind for TcPrograms {
    fn name(&self) -> &'static str {
        self.name
    }

    fn build(&self, t: Topology, _st: &mut LabState, _opts: &UpOptions) -> Result<(), LabError> {
        (self.attach)()?;
        if self.ces_by_the_rule {
            route_to_the_ces()?;
        }
        route_to_the_b4s(t)
    }

    fn tester_config(&self, _t: Topology, cfg: &mut TestConfig, _placement: Option<&Placement>) {
        // The tester's left side is the lwB4s of the binding table or the rule's CEs, from the
        // tester's own (one, unless `--set left.map.subscribers=N`), each frame at a
        // pseudorandom port of its set (the lwAFTR and the BRs drop the others).
        let (rule, binding_psid) = (self.tester)();
        cfg.setup.left.map = rule.map(|rule| SideMap {
            rule,
            subscribers: 1,
            ports: None,
            binding_psid,
        });
    }
}

/// What `lab down` gives each kind's [`DutKind::stop`].
pub(crate) struct Down<'a> {
    /// The state file, if one was readable.
    pub state: Option<&'a LabState>,
    /// The namespaces that exist.
    pub namespaces: &'a [String],
    pub report: &'a mut DownReport,
    pub failures: &'a mut Vec<String>,
}

impl Down<'_> {
    /// Stop daemon `pid` if it is still the process named `comm` that the lab started.
    pub fn stop_process(&mut self, pid: u32, comm: &str) {
        match crate::process::stop(pid, comm, &mut self.report.notes) {
            Ok(true) => self.report.killed.push(pid),
            Ok(false) => {}
            Err(e) => self.failures.push(e.to_string()),
        }
    }
}

/// The route of a DUT whose left is IPv6 only (a softwire concentrator, mapt's BR): what goes
/// back to the B4s' (CEs') IPv4 addresses leaves on the left to the tester's IPv6 address (its
/// MAC by neighbour discovery); the encapsulation (translation) then addresses the B4 (CE).
pub(crate) fn route_to_the_b4s(t: Topology) -> Result<(), LabError> {
    let via = t
        .tester_ipv6_end()
        .ok_or_else(|| LabError::InvalidInput(format!("{t}: the tester's softwire end (lab names.rs) is not an address")))?
        .to_string();
    ip_in(
        DUT_NS,
        &["-4", "route", "add", DSLITE_B4_IPV4_ROUTE, "via", "inet6", &via, "dev", DUT_LEFT],
    )?;
    Ok(())
}

/// The route of a BR whose CEs follow the mapping rule: their addresses are on the left link
/// (the tester answers for its CE's).
fn route_to_the_ces() -> Result<(), LabError> {
    ip_in(DUT_NS, &["-6", "route", "add", MAP_RULE_IPV6, "dev", DUT_LEFT])?;
    Ok(())
}
