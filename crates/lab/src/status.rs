//! What of the lab exists, for `xlatperf lab status` and for tests.

use std::fmt;

use crate::cmd::{ip_in, run_in, sysctl_get};
use crate::error::LabError;
use crate::process::alive;
use crate::setup::{list_netns, root_links};
use crate::state::{self, LabState};
use crate::topology::*;

/// One lab interface as seen in its namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkStatus {
    pub name: String,
    pub netns: String,
    /// Administratively up (`UP` flag).
    pub admin_up: bool,
    /// Operational state as `ip` reports it (`UP`, `DOWN`, `UNKNOWN`, ...).
    pub oper_state: String,
    pub promisc: bool,
    /// Addresses with prefix length, e.g. "198.18.0.1/24".
    pub addresses: Vec<String>,
    /// `net.ipv6.conf.<if>.disable_ipv6` (read for the tester ports only).
    pub ipv6_disabled: Option<bool>,
    /// Number of neighbour entries (DUT interfaces only).
    pub neighbours: Option<usize>,
}

/// The state of the lab.
#[derive(Debug, Clone, Default)]
pub struct Status {
    /// The state file, if present and readable.
    pub state: Option<LabState>,
    /// Why the state file could not be read, if it could not.
    pub state_error: Option<String>,
    /// Each lab namespace and whether it exists.
    pub namespaces: Vec<(String, bool)>,
    /// The lab interfaces found in the lab namespaces.
    pub links: Vec<LinkStatus>,
    /// Interfaces with lab names in the initial namespace (there should be none).
    pub stray_links: Vec<String>,
    /// `net.ipv4.ip_forward` in the DUT namespace.
    pub ipv4_forwarding: Option<bool>,
    /// `net.ipv6.conf.all.forwarding` in the DUT namespace.
    pub ipv6_forwarding: Option<bool>,
    /// The tester's `netdev xlat` drop table exists.
    pub tester_drop_table: bool,
    /// The DUT's NAT table exists (`ip xlat`, or `ip6 xlat` for nat66).
    pub dut_nat_table: bool,
    /// TAYGA's pid from the state file, and whether it runs.
    pub tayga: Option<(u32, bool)>,
    /// The CLAT's TAYGA (xlat464): its pid from the state file, and whether it runs.
    pub clat: Option<(u32, bool)>,
    /// dpdk-fwd's dpdk-testpmd: its pid from the state file, and whether it runs.
    pub testpmd: Option<(u32, bool)>,
    /// The DUT's connection tracking, when nf_conntrack is loaded: entries now (the DUT
    /// namespace's own count), the host-wide table limit, the DUT's UDP timeout in seconds.
    pub conntrack: Option<ConntrackStatus>,
    /// Where each part runs now: every veth end's receive steering and every TAYGA's CPUs,
    /// each beside where the lab placed it (empty without a placement).
    pub placement: Vec<PlacedPart>,
}

/// One part of the lab and the CPUs it runs on, now and as placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedPart {
    /// "xlat-dl (xlat-dut) receive", "tayga (xlat-dut)".
    pub part: String,
    /// The CPUs it runs on now (empty: unsteered, wherever the frames arrive).
    pub now: Vec<usize>,
    /// The CPUs the lab placed it on.
    pub placed: Vec<usize>,
}

impl PlacedPart {
    /// It runs elsewhere than placed (changed since `lab up`).
    pub fn drifted(&self) -> bool {
        self.now != self.placed
    }
}

/// The DUT's connection tracking (the stateful topologies).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConntrackStatus {
    pub count: u64,
    pub max: u64,
    pub udp_timeout_s: u64,
}

impl Status {
    /// Does anything of a lab exist?
    pub fn exists(&self) -> bool {
        self.state.is_some() || self.state_error.is_some() || self.namespaces.iter().any(|(_, e)| *e) || !self.stray_links.is_empty()
    }

    /// The topology recorded in the state file.
    pub fn topology(&self) -> Option<Topology> {
        self.state.as_ref().map(|s| s.topology)
    }

    /// The interface `name`, if it exists in a lab namespace.
    pub fn link(&self, name: &str) -> Option<&LinkStatus> {
        self.links.iter().find(|l| l.name == name)
    }

    /// Does namespace `name` exist?
    pub fn namespace_exists(&self, name: &str) -> bool {
        self.namespaces.iter().any(|(n, e)| n == name && *e)
    }
}

fn parse_json(command: &str, out: &str) -> Result<serde_json::Value, LabError> {
    let out = out.trim();
    if out.is_empty() {
        return Ok(serde_json::Value::Array(Vec::new()));
    }
    serde_json::from_str(out).map_err(|e| LabError::Output {
        command: command.to_string(),
        detail: e.to_string(),
    })
}

/// The lab interfaces in namespace `ns`, from `ip -j address show`.
fn links_in(ns: &str) -> Result<Vec<LinkStatus>, LabError> {
    let out = ip_in(ns, &["-j", "address", "show"])?;
    let v = parse_json("ip -j address show", &out)?;
    let mut links = Vec::new();
    for l in v.as_array().into_iter().flatten() {
        let Some(name) = l.get("ifname").and_then(|n| n.as_str()) else {
            continue;
        };
        if !LINK_NAMES.contains(&name) {
            continue;
        }
        let flags: Vec<&str> = l
            .get("flags")
            .and_then(|f| f.as_array())
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str())
            .collect();
        let addresses = l
            .get("addr_info")
            .and_then(|a| a.as_array())
            .into_iter()
            .flatten()
            .filter_map(|a| Some(format!("{}/{}", a.get("local")?.as_str()?, a.get("prefixlen")?.as_u64()?)))
            .collect();
        links.push(LinkStatus {
            name: name.to_string(),
            netns: ns.to_string(),
            admin_up: flags.contains(&"UP"),
            oper_state: l.get("operstate").and_then(|o| o.as_str()).unwrap_or("?").to_string(),
            promisc: flags.contains(&"PROMISC"),
            addresses,
            ipv6_disabled: None,
            neighbours: None,
        });
    }
    Ok(links)
}

fn sysctl_bool(ns: &str, key: &str) -> Option<bool> {
    sysctl_get(Some(ns), key).ok().map(|v| v != "0")
}

pub(crate) fn collect() -> Result<Status, LabError> {
    let mut st = Status::default();
    match state::read() {
        Ok(s) => st.state = s,
        Err(e) => st.state_error = Some(e.to_string()),
    }
    let namespaces = list_netns()?;
    st.namespaces = NAMESPACES
        .iter()
        .map(|n| (n.to_string(), namespaces.iter().any(|x| x == n)))
        .collect();
    let roots = root_links()?;
    st.stray_links = LINK_NAMES
        .iter()
        .filter(|n| roots.iter().any(|x| x == *n))
        .map(|n| n.to_string())
        .collect();

    if st.namespace_exists(TESTER_NS) {
        for mut l in links_in(TESTER_NS)? {
            l.ipv6_disabled = sysctl_bool(TESTER_NS, &format!("net.ipv6.conf.{}.disable_ipv6", l.name));
            st.links.push(l);
        }
        st.tester_drop_table = run_in(TESTER_NS, "nft", &["list", "table", "netdev", "xlat"]).is_ok();
    }
    if st.namespace_exists(CLAT_NS) {
        st.links.extend(links_in(CLAT_NS)?);
    }
    if st.namespace_exists(DUT_NS) {
        for mut l in links_in(DUT_NS)? {
            if l.name == DUT_LEFT || l.name == DUT_RIGHT {
                l.neighbours = crate::dut::dut_neighbours(&l.name).ok().map(|n| n.len());
            }
            st.links.push(l);
        }
        st.ipv4_forwarding = sysctl_bool(DUT_NS, "net.ipv4.ip_forward");
        st.ipv6_forwarding = sysctl_bool(DUT_NS, "net.ipv6.conf.all.forwarding");
        // nat66's table is `ip6 xlat`; without a state file either family counts.
        let families = match st.topology().and_then(Topology::nat_family) {
            Some(f) => vec![f],
            None => vec!["ip", "ip6"],
        };
        st.dut_nat_table = families
            .into_iter()
            .any(|f| run_in(DUT_NS, "nft", &["list", "table", f, "xlat"]).is_ok());
        let num = |key: &str| sysctl_get(Some(DUT_NS), key).ok().and_then(|v| v.parse::<u64>().ok());
        if let (Some(count), Some(max), Some(udp_timeout_s)) = (
            num("net.netfilter.nf_conntrack_count"),
            num("net.netfilter.nf_conntrack_max"),
            num("net.netfilter.nf_conntrack_udp_timeout"),
        ) {
            st.conntrack = Some(ConntrackStatus { count, max, udp_timeout_s });
        }
    }
    st.tayga = st.state.as_ref().and_then(|s| s.tayga_pid).map(|p| (p, alive(p)));
    st.clat = st.state.as_ref().and_then(|s| s.clat_pid).map(|p| (p, alive(p)));
    st.testpmd = st.state.as_ref().and_then(|s| s.dut_pid).map(|p| (p, alive(p)));
    if let Some((t, Some(p))) = st.state.as_ref().map(|s| (s.topology, s.placement.clone())) {
        st.placement = placed_parts(&st, t, &p);
    }
    Ok(st)
}

/// Where each part of topology `t` runs now, beside where placement `p` put it; a part that
/// cannot be read (its namespace gone) is left out.
fn placed_parts(st: &Status, t: Topology, p: &crate::placement::Placement) -> Vec<PlacedPart> {
    let mut parts = Vec::new();
    if let Ok(ends) = crate::steer::read(t, p) {
        for e in ends {
            parts.push(PlacedPart {
                part: format!("{} ({}) receive", e.dev, e.ns),
                now: e.now,
                placed: if p.steered { e.placed } else { Vec::new() },
            });
        }
    }
    for (who, pid) in [("tayga", st.tayga), ("tayga CLAT", st.clat), ("dpdk-testpmd", st.testpmd)] {
        if let Some((pid, true)) = pid {
            if let Some(now) = crate::placement::allowed_cpus(&pid.to_string()) {
                parts.push(PlacedPart {
                    part: format!("{who} (pid {pid})"),
                    now,
                    placed: p.dut.clone(),
                });
            }
        }
    }
    parts
}

fn on_off(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "on",
        Some(false) => "off",
        None => "?",
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.exists() {
            return writeln!(f, "no lab: nothing named xlat-* exists");
        }
        match (&self.state, &self.state_error) {
            (Some(s), _) => {
                let how = if s.complete {
                    "complete"
                } else {
                    "INCOMPLETE (up failed or crashed; run `xlatperf lab down`)"
                };
                writeln!(f, "lab: {} ({how})", s.topology)?;
                if let Some(p) = &s.config_path {
                    writeln!(f, "config: {}", p.display())?;
                }
            }
            (None, Some(e)) => writeln!(f, "lab: state unreadable: {e}")?,
            (None, None) => writeln!(
                f,
                "lab: no state file {} (left over from a crash? run `xlatperf lab down`)",
                state::STATE_FILE
            )?,
        }
        let ns: Vec<String> = self
            .namespaces
            .iter()
            .map(|(n, e)| format!("{n} {}", if *e { "present" } else { "absent" }))
            .collect();
        let none = !self.namespaces.iter().any(|(_, e)| *e);
        match self.topology() {
            // A DPDK DUT's lab has no namespace: "absent" would read as a fault.
            Some(t) if t.dut().dpdk() && none => writeln!(f, "namespaces: none ({t} uses none)")?,
            _ => writeln!(f, "namespaces: {}", ns.join(", "))?,
        }
        for l in &self.links {
            write!(f, "  {:<11} in {:<12} {}", l.name, l.netns, if l.admin_up { "up" } else { "down" })?;
            write!(f, " (link {})", l.oper_state)?;
            if l.promisc {
                write!(f, ", promisc")?;
            }
            if l.ipv6_disabled == Some(true) {
                write!(f, ", IPv6 off")?;
            }
            if l.addresses.is_empty() {
                write!(f, ", no addresses")?;
            } else {
                write!(f, ", {}", l.addresses.join(" "))?;
            }
            if let Some(n) = l.neighbours {
                write!(f, ", {n} neighbour entries")?;
            }
            writeln!(f)?;
        }
        if !self.stray_links.is_empty() {
            writeln!(f, "stray links in this namespace: {}", self.stray_links.join(", "))?;
        }
        if self.namespace_exists(TESTER_NS) {
            writeln!(
                f,
                "tester ingress drop table: {}",
                if self.tester_drop_table { "present" } else { "MISSING" }
            )?;
        }
        if self.namespace_exists(DUT_NS) {
            writeln!(
                f,
                "DUT forwarding: IPv4 {}, IPv6 {}",
                on_off(self.ipv4_forwarding),
                on_off(self.ipv6_forwarding)
            )?;
            if self.dut_nat_table || self.topology().is_some_and(|t| t.uses_nat()) {
                writeln!(f, "DUT NAT table: {}", if self.dut_nat_table { "present" } else { "MISSING" })?;
                if let Some(c) = self.conntrack {
                    writeln!(
                        f,
                        "DUT conntrack: {} entries (table {}), UDP timeout {} s",
                        c.count, c.max, c.udp_timeout_s
                    )?;
                }
            }
        }
        if let Some((pid, alive)) = self.tayga {
            writeln!(f, "tayga: pid {pid} {}", if alive { "running" } else { "NOT running" })?;
        }
        if let Some((pid, alive)) = self.clat {
            writeln!(
                f,
                "tayga (CLAT, in {CLAT_NS}): pid {pid} {}",
                if alive { "running" } else { "NOT running" }
            )?;
        }
        if let Some((pid, alive)) = self.testpmd {
            writeln!(
                f,
                "dpdk-testpmd: pid {pid} {} (its port statistics: {})",
                if alive { "running" } else { "NOT running" },
                TESTPMD_LOG
            )?;
        }
        if let Some(p) = self.state.as_ref().and_then(|s| s.placement.as_ref()) {
            writeln!(f, "CPUs: {}", p.describe())?;
            let list = |c: &[usize]| {
                if c.is_empty() {
                    "any (not steered)".to_string()
                } else {
                    xlat_trial::load::cpu_list(c)
                }
            };
            for part in &self.placement {
                write!(f, "  {:<28} CPU {}", part.part, list(&part.now))?;
                if part.drifted() {
                    write!(f, "  WARNING: placed on CPU {}; changed since lab up", list(&part.placed))?;
                }
                writeln!(f)?;
            }
        }
        Ok(())
    }
}
