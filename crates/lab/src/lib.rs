//! The lab: reproducible test topologies with real DUTs in network namespaces.
//!
//! | module | holds |
//! | --- | --- |
//! | `topology` | [`Topology`], the names and addresses, [`CpuSplit`], the test configuration: [`config`], [`config_toml`] |
//! | `setup` | building a topology ([`up`]) and tearing everything down ([`down`]) |
//! | `status` | what of the lab exists now ([`status()`]) |
//! | `state` | the state file `/run/xlatperf/lab.json` and where the files go |
//! | `cmd` | running `ip`, `nft`, `sysctl` and `tayga` as argument vectors |
//! | `error` | [`LabError`] |
//!
//! ```text
//!   namespace xlat-tester                          namespace xlat-dut
//!   xlat-tl (left port)  ───── veth ─────  xlat-dl 198.18.0.1/16, 2001:2::1/64
//!   xlat-tr (right port) ───── veth ─────  xlat-dr 198.19.0.1/16, 2001:2:0:8000::1/64
//!   tester addresses: 198.18.0.2, 198.19.0.2, 2001:2::2, 2001:2:0:8000::2
//! ```
//!
//! The tester ends have IPv6 disabled, no IPv4 addresses, promiscuous mode on, and an nftables
//! `netdev xlat` table that drops everything at ingress (packet sockets still see the frames),
//! so the tester namespace's IP stack costs nothing. The DUT has no static neighbour entries: the
//! tester answers ARP and NDP itself. IPv6 DAD is off in the DUT, and the host-wide neighbour
//! table limits (`gc_thresh1/2/3`, which the kernel shares between all namespaces) are raised to
//! at least 131072 while the lab is up and restored by [`down`].
//!
//! | topology | DUT in xlat-dut |
//! | --- | --- |
//! | router4 | kernel IPv4 forwarding |
//! | router6 | kernel IPv6 forwarding |
//! | siit | TAYGA, prefix 2001:2:0:6464::/96, static map 2001:2::/120 <-> 198.18.1.0/24 (left IPv6, right IPv4) |
//! | nat44 | nftables masquerade (conntrack) of everything leaving on xlat-dr; from xlat-dr only established/related is forwarded |
//! | nat64 | TAYGA, same prefix, dynamic pool 198.18.128.0/18, plus the nat44 rules |
//! | nat66 | the nat44 rules for IPv6 (`table ip6 xlat`), plus neighbour solicitations and advertisements accepted from xlat-dr |
//!
//! nat44, nat64 and nat66 are stateful DUTs (RFC 9693), and their configurations are stateful
//! tests: Initiator left, every combination of source ports 10000-10999 and destination ports
//! 1-1000 (1,000,000) opened in pseudorandom order in phase 1, the Responder right (IPv4 for
//! nat44 and nat64, IPv6 for nat66, which sees 2001:2:0:8000::1 as the source). `up` sets
//! the DUT namespace's UDP conntrack timeouts to 600 s (per namespace), and raises the host-wide
//! `net.netfilter.nf_conntrack_max` and `nf_conntrack_buckets` (the hash size; both writable in
//! the initial namespace only) to 2^21, saving the old values in the state file so that [`down`]
//! restores them, also after a crash. The DUT's connection table is emptied before every trial
//! with `ip netns exec xlat-dut conntrack -F`.
//!
//! For siit the left tester 2001:2::2 appears on the right as 198.18.1.2 (`ipv4_virt` of the
//! left side) and reaches the right tester 198.19.0.2 at 2001:2:0:6464::198.19.0.2 (`ipv6_virt`
//! of the right side). The NAT64 prefix is not 64:ff9b::/96 because TAYGA, following RFC 6052,
//! drops packets that combine the well-known prefix with non-global IPv4 addresses such as
//! 198.18.0.0/15, and rejects static maps inside it.
//!
//! Everything is made with `ip`, `nft`, `sysctl` and `tayga` run as argument vectors (never a
//! shell). `/run/xlatperf/lab.json` records what was made; [`down`] also works without it.

// One exception, in cmd.rs: the child's descriptors marked close-on-exec before a tool starts.
#![deny(unsafe_code)]

mod cmd;
mod error;
mod setup;
mod siitperf;
mod state;
mod status;
mod topology;

use std::fmt;
use std::net::IpAddr;
use std::path::PathBuf;

pub use error::LabError;
pub use siitperf::script_notes as siitperf_script_notes;
pub use state::{config_path, LabState, SavedSysctl, RUN_DIR, STATE_FILE};
pub use status::{ConntrackStatus, LinkStatus, Status};
pub use topology::{
    config, config_toml, config_toml_for, CpuSplit, StatefulLab, Topology, CONNTRACK_BUCKETS, CONNTRACK_MAX, CONNTRACK_UDP_TIMEOUT_S,
    DUT_LEFT, DUT_LEFT_IPV4, DUT_LEFT_IPV6, DUT_NS, DUT_RIGHT, DUT_RIGHT_IPV4, DUT_RIGHT_IPV6, LEFT_PORT, LINK_NAMES, NAMESPACES,
    NAT64_POOL, NAT64_PREFIX, RIGHT_IPV6_VIRT, RIGHT_PORT, SIIT_LEFT_IPV4_VIRT, SIIT_MAP_IPV4, SIIT_MAP_IPV6, STATEFUL_BEFORE_TRIAL,
    STATEFUL_CONNECTIONS, STATEFUL_COUNT, STATEFUL_DPORT, STATEFUL_PHASE_DELAY_MS, STATEFUL_PRELIMINARY_RATE,
    STATEFUL_PRELIMINARY_TIMEOUT_MS, STATEFUL_SPORT, TAYGA_IPV4, TAYGA_IPV4_ROUTE, TAYGA_TUN, TESTER_LEFT_IPV4, TESTER_LEFT_IPV6,
    TESTER_NS, TESTER_RIGHT_IPV4, TESTER_RIGHT_IPV6,
};

/// Options of [`up`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
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
    pub dut_ns: String,
    pub left_port: String,
    pub right_port: String,
}

/// What [`down`] removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DownReport {
    /// A state file was found.
    pub had_state: bool,
    /// The topology from the state file.
    pub topology: Option<Topology>,
    /// TAYGA daemons stopped.
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
                writeln!(f, "  stopped tayga: pid {}", list(&pids))?;
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

/// Is this process running with effective uid 0? (The lab needs CAP_NET_ADMIN and CAP_SYS_ADMIN.)
pub fn is_root() -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1).map(|euid| euid == "0"))
        .unwrap_or(false)
}

fn require_root() -> Result<(), LabError> {
    if is_root() {
        Ok(())
    } else {
        Err(LabError::NotRoot)
    }
}

fn require_tools(t: Topology) -> Result<(), LabError> {
    let mut tools = vec!["ip", "nft", "sysctl", "kill"];
    if t.uses_tayga() {
        tools.push("tayga");
    }
    for tool in tools {
        if !cmd::have_tool(tool) {
            return Err(LabError::MissingTool {
                tool: tool.to_string(),
                package: cmd::package_of(tool),
            });
        }
    }
    Ok(())
}

/// Build topology `t`, write its test configuration, and return where everything is.
///
/// Fails if a lab (or anything with its names) exists, unless `opts.replace`. On any failure
/// midway it tears down what it made before returning the error.
pub fn up(t: Topology, opts: &UpOptions) -> Result<LabInfo, LabError> {
    require_root()?;
    require_tools(t)?;
    if let Some((max, buckets)) = opts.conntrack {
        if !t.uses_nat() {
            return Err(LabError::InvalidInput(format!(
                "the connection tracking table is set for the stateful DUTs (nat44, nat64, nat66), not {t}"
            )));
        }
        for (what, v) in [("table size", max), ("hash size", buckets)] {
            if !(1..=CONNTRACK_LIMIT).contains(&v) {
                return Err(LabError::InvalidInput(format!(
                    "connection tracking {what} {v}: allowed 1-{CONNTRACK_LIMIT}"
                )));
            }
        }
    }
    if let Some(q) = opts.queues {
        if !(1..=MAX_QUEUES).contains(&q) {
            return Err(LabError::InvalidInput(format!("{q} queues per port: allowed 1-{MAX_QUEUES}")));
        }
    }
    if let Some(detail) = setup::existing()? {
        if opts.replace {
            setup::teardown()?;
        } else {
            return Err(LabError::AlreadyUp { detail });
        }
    }
    let mut st = LabState::new(t);
    st.namespaces = NAMESPACES.iter().map(|s| s.to_string()).collect();
    st.links = LINK_NAMES
        .iter()
        .filter(|l| t.uses_tayga() || **l != TAYGA_TUN)
        .map(|s| s.to_string())
        .collect();
    let result = state::write(&st).and_then(|()| setup::build(t, &mut st, opts));
    match result {
        Ok(info) => Ok(info),
        Err(error) => match setup::teardown() {
            Ok(_) => Err(error),
            Err(teardown) => Err(LabError::SetupAndTeardown {
                error: Box::new(error),
                teardown: Box::new(teardown),
            }),
        },
    }
}

/// The MAC addresses of the DUT's left and right interfaces of the lab that is up (what a
/// siitperf.conf must give as `MAC-L-DUT` and `MAC-R-DUT`).
pub fn dut_macs() -> Result<(String, String), LabError> {
    require_root()?;
    let mac = |dev: &str| -> Result<String, LabError> {
        let out = cmd::ip_in(DUT_NS, &["-o", "link", "show", "dev", dev])?;
        out.split_whitespace()
            .skip_while(|w| *w != "link/ether")
            .nth(1)
            .map(str::to_string)
            .ok_or_else(|| LabError::Output {
                command: format!("ip -n {DUT_NS} -o link show dev {dev}"),
                detail: format!("no link/ether address in: {}", out.trim()),
            })
    };
    Ok((mac(DUT_LEFT)?, mac(DUT_RIGHT)?))
}

/// Remove the lab: stop TAYGA, delete the namespaces (with their links and rules), restore the
/// neighbour table limits, delete the files. Works without a state file; a no-op if nothing exists.
pub fn down() -> Result<DownReport, LabError> {
    require_root()?;
    setup::teardown()
}

/// What of the lab exists now.
pub fn status() -> Result<Status, LabError> {
    require_root()?;
    status::collect()
}

fn require_dut() -> Result<(), LabError> {
    require_root()?;
    if setup::list_netns()?.iter().any(|n| n == DUT_NS) {
        Ok(())
    } else {
        Err(LabError::NotUp { ns: DUT_NS.to_string() })
    }
}

/// Run a command (program and arguments, no shell) in the DUT namespace; return its stdout.
pub fn dut_exec(args: &[&str]) -> Result<String, LabError> {
    let Some((program, rest)) = args.split_first() else {
        return Err(LabError::InvalidInput("dut_exec needs a command".into()));
    };
    if program.is_empty() {
        return Err(LabError::InvalidInput("dut_exec: empty program name".into()));
    }
    require_dut()?;
    cmd::run_in(DUT_NS, program, rest)
}

/// Switch the DUT's forwarding on or off: the families the topology forwards (IPv4 for router4
/// and nat44, IPv6 for router6, both for siit and nat64; both without a state file).
pub fn set_forwarding(on: bool) -> Result<(), LabError> {
    require_dut()?;
    let (v4, v6) = match state::read() {
        Ok(Some(st)) => st.topology.forwarding(),
        _ => (true, true),
    };
    let value = if on { "1" } else { "0" };
    if v4 {
        cmd::sysctl_set(Some(DUT_NS), "net.ipv4.ip_forward", value)?;
    }
    if v6 {
        cmd::sysctl_set(Some(DUT_NS), "net.ipv6.conf.all.forwarding", value)?;
    }
    Ok(())
}

/// Check an interface name before handing it to `ip`.
fn valid_ifname(name: &str) -> bool {
    !name.is_empty()
        && name.len() < 16
        && !name.starts_with('-')
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// The DUT's neighbour entries on `iface` (IPv4 and IPv6): address, MAC ("" while unresolved),
/// state (e.g. "REACHABLE", "STALE,NOARP" when several).
pub fn dut_neighbours(iface: &str) -> Result<Vec<(IpAddr, String, String)>, LabError> {
    if !valid_ifname(iface) {
        return Err(LabError::InvalidInput(format!("not an interface name: {iface:?}")));
    }
    require_dut()?;
    let out = cmd::ip_in(DUT_NS, &["-j", "neighbour", "show", "dev", iface])?;
    parse_neighbours(&out)
}

fn parse_neighbours(out: &str) -> Result<Vec<(IpAddr, String, String)>, LabError> {
    let bad = |detail: String| LabError::Output {
        command: "ip -j neighbour show".into(),
        detail,
    };
    let out = out.trim();
    if out.is_empty() {
        return Ok(Vec::new());
    }
    let v: serde_json::Value = serde_json::from_str(out).map_err(|e| bad(e.to_string()))?;
    let mut list = Vec::new();
    for n in v.as_array().ok_or_else(|| bad("not a JSON array".into()))? {
        let dst = n
            .get("dst")
            .and_then(|d| d.as_str())
            .ok_or_else(|| bad(format!("entry without dst: {n}")))?;
        let ip: IpAddr = dst.parse().map_err(|_| bad(format!("bad address {dst:?}")))?;
        let mac = n.get("lladdr").and_then(|m| m.as_str()).unwrap_or("").to_string();
        let state: Vec<&str> = n
            .get("state")
            .and_then(|s| s.as_array())
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str())
            .collect();
        list.push((ip, mac, state.join(",")));
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbour_json_is_parsed() {
        let out = r#"[{"dst":"198.18.0.2","lladdr":"02:00:00:00:00:01","state":["REACHABLE"]},
                      {"dst":"2001:2::2","state":["INCOMPLETE"]},
                      {"dst":"198.18.0.3","lladdr":"02:00:00:00:00:03","state":["STALE","NOARP"]}]"#;
        let n = parse_neighbours(out).unwrap();
        assert_eq!(n.len(), 3);
        assert_eq!(
            n[0],
            ("198.18.0.2".parse().unwrap(), "02:00:00:00:00:01".into(), "REACHABLE".into())
        );
        assert_eq!(n[1].1, "");
        assert_eq!(n[2].2, "STALE,NOARP");
        assert!(parse_neighbours("").unwrap().is_empty());
        assert!(parse_neighbours("[]").unwrap().is_empty());
        assert!(parse_neighbours("{").is_err());
        assert!(parse_neighbours(r#"[{"dst":"nonsense"}]"#).is_err());
        assert!(parse_neighbours(r#"{"dst":"1.2.3.4"}"#).is_err());
    }

    #[test]
    fn interface_names_are_checked() {
        assert!(valid_ifname("xlat-dl"));
        for bad in ["", "-x", "a b", "a/b", "0123456789abcdef", "..", "x;rm"] {
            assert!(!valid_ifname(bad), "{bad}");
            assert!(matches!(dut_neighbours(bad), Err(LabError::InvalidInput(_))));
        }
    }

    #[test]
    fn dut_exec_rejects_empty_commands() {
        assert!(matches!(dut_exec(&[]), Err(LabError::InvalidInput(_))));
        assert!(matches!(dut_exec(&[""]), Err(LabError::InvalidInput(_))));
    }

    #[test]
    fn down_report_display() {
        assert_eq!(DownReport::default().to_string(), "no lab found; nothing to do\n");
        let r = DownReport {
            had_state: true,
            topology: Some(Topology::Siit),
            killed: vec![7],
            namespaces_removed: vec![DUT_NS.into()],
            ..Default::default()
        };
        let s = r.to_string();
        assert!(
            s.contains("lab siit removed") && s.contains("pid 7") && s.contains("xlat-dut"),
            "{s}"
        );
    }
}
