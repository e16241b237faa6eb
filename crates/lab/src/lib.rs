//! The lab: reproducible test topologies with real DUTs in network namespaces.
//!
//! | module | holds |
//! | --- | --- |
//! | `names` | the lab's fixed names and addresses |
//! | `topologies` | every topology declared once ([`Declaration`]: its DUT, sides, forwarding, stateful test) |
//! | `topology` | what each [`Topology`] is, derived from its declaration; the test configuration: [`config`], [`config_toml`] |
//! | `placement` | [`Placement`]: the DUT's CPUs and the tester's |
//! | `steer` | steering the veth ends' receive processing to them (RPS), and reading it back |
//! | `setup` | building a topology ([`up`]) and tearing everything down ([`down`]) |
//! | `status` | what of the lab exists now ([`status()`]) |
//! | `state` | the state file `/run/xlatperf/lab.json` and where the files go |
//! | `duts` | one module per kind of DUT (its build, its stop at `down`, its checks, its files), behind one trait |
//! | `duts::kernel` | Linux forwarding: nothing beyond the cabling |
//! | `duts::masquerade` | nftables masquerade and the connection tracking sized for it (nat44, nat66; nat64's and dslite's NAT) |
//! | `duts::tayga` | TAYGA's configurations, starting and stopping the daemons (siit, nat64, xlat464's two) |
//! | `duts::aftr` | dslite's AFTR: the tc programs that decapsulate and encapsulate IPv4-in-IPv6 |
//! | `duts::lwaftr` | lw4o6's lwAFTR: the same encapsulation, checked against a binding table (a BPF hash map) |
//! | `duts::mapbr` | mape's BR: the same encapsulation, every CE's address computed by the mapping rule |
//! | `duts::maptbr` | mapt's BR: IPv6 <-> IPv4 translated in place by the mapping rule and the DMR prefix |
//! | `duts::testpmd` | dpdk-fwd's DUT: dpdk-testpmd, its command line, starting and finding it |
//! | `globals` | host-wide sysctls the lab changes, saved in the state file and restored by `down` |
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
//! | xlat464 | 464XLAT (RFC 6877): a CLAT (TAYGA, stateless) in namespace xlat-clat in front of the PLAT, nat64's DUT, in xlat-dut |
//! | dslite | Dual-Stack Lite's AFTR (RFC 6333): IPv4-in-IPv6 from B4s in 2001:2::/112 decapsulated, NAT44 per B4, encapsulated back |
//! | lw4o6 | lightweight 4over6's lwAFTR (RFC 7596): the same softwires, stateless, each checked against a binding table of 10,000 lwB4s (IPv4 address + port set) |
//!
//! ```text
//!   xlat464:  xlat-tl ── xlat-cl 198.18.0.1/16 [xlat-clat: TAYGA CLAT] xlat-cr 2001:2::464/64
//!             ── xlat-dl 2001:2::1/64 [xlat-dut: TAYGA PLAT + masquerade] xlat-dr 198.19.0.1/16 ── xlat-tr
//! ```
//!
//! The CLAT's TAYGA maps the left tester's addresses 198.18.0.0/17 into the CLAT-side prefix
//! 2001:2:0:4646::/96 and every other IPv4 address into the PLAT-side prefix
//! 2001:2:0:6464::/96 (as clatd configures TAYGA), so 198.18.0.2 -> 198.19.0.2 crosses the
//! IPv6 link as 2001:2:0:4646::c612:2 -> 2001:2:0:6464::c613:2 and leaves the PLAT from
//! 198.19.0.1. To the tester it is nat44: IPv4 both sides, the same stateful test, the
//! connection table in xlat-dut.
//!
//! nat44, nat64, nat66, xlat464 and dslite are stateful DUTs (RFC 9693), and their configurations are stateful
//! tests: Initiator left, every combination of source ports 10000-10999 and destination ports
//! 1-1000 (1,000,000) opened in pseudorandom order in phase 1, the Responder right (IPv4 for
//! nat44, nat64 and xlat464, IPv6 for nat66, which sees 2001:2:0:8000::1 as the source). `up` sets
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
mod dut;
mod duts;
mod error;
mod globals;
mod names;
mod placement;
mod process;
mod report;
mod setup;
mod siitperf;
mod state;
mod status;
mod steer;
mod topologies;
mod topology;

use cmd::require_root;
pub use cmd::{have_tool, is_root};
pub use dut::{dut_exec, dut_neighbours, set_forwarding};
pub use duts::lwaftr::{binding as lw4o6_binding, port_set as lw4o6_port_set};
pub use duts::testpmd::DPDK_FWD_MAX_SEND_LAG_FRAMES;
pub use error::LabError;
pub use names::TESTPMD_LOG;
pub use placement::{cpu_mask, online_cpus, parse_cpu_mask, Placement};
pub use report::{DownReport, LabInfo, UpOptions, CONNTRACK_LIMIT, MAX_QUEUES};
pub use siitperf::script_notes as siitperf_script_notes;
pub use state::{config_path, LabState, SavedSysctl, RUN_DIR, STATE_FILE};
pub use status::{ConntrackStatus, LinkStatus, PlacedPart, Status};
pub use topology::{
    config, config_toml, config_toml_for, map_rule, map_tester_ce, Declaration, Dut, StatefulLab, Topology, ALIASES, CLAT_IPV4_ROUTE,
    CLAT_LEFT, CLAT_MAP_IPV4, CLAT_MAP_IPV6, CLAT_NS, CLAT_PREFIX, CLAT_RIGHT, CLAT_RIGHT_IPV6, CONNTRACK_BUCKETS, CONNTRACK_MAX,
    CONNTRACK_UDP_TIMEOUT_S, DSLITE_AFTR, DSLITE_B4_IPV4_ROUTE, DSLITE_B4_PREFIX, DSLITE_LEFT_MTU, DUT_LEFT, DUT_LEFT_IPV4, DUT_LEFT_IPV6,
    DUT_NS, DUT_RIGHT, DUT_RIGHT_IPV4, DUT_RIGHT_IPV6, LEFT_PORT, LINK_NAMES, LW4O6_BINDINGS, LW4O6_PORTS, LW4O6_PSID_BITS, MAPT_DMR,
    MAP_EA_BITS, MAP_PORTS, MAP_PSID_OFFSET, MAP_RULE_IPV4, MAP_RULE_IPV6, MAP_TESTER_PSID, NAMESPACES, NAT64_POOL, NAT64_PREFIX,
    RIGHT_IPV6_VIRT, RIGHT_PORT, SIIT_LEFT_IPV4_VIRT, SIIT_MAP_IPV4, SIIT_MAP_IPV6, STATEFUL_BEFORE_TRIAL, STATEFUL_CONNECTIONS,
    STATEFUL_COUNT, STATEFUL_DPORT, STATEFUL_PHASE_DELAY_MS, STATEFUL_PRELIMINARY_RATE, STATEFUL_PRELIMINARY_TIMEOUT_MS, STATEFUL_SPORT,
    TAYGA_IPV4, TAYGA_IPV4_ROUTE, TAYGA_TUN, TESTER_LEFT_IPV4, TESTER_LEFT_IPV6, TESTER_NS, TESTER_RIGHT_IPV4, TESTER_RIGHT_IPV6,
};

fn require_tools(t: Topology) -> Result<(), LabError> {
    let mut tools = vec!["ip", "nft", "sysctl", "kill"];
    tools.extend(t.dut().kind().tools());
    if t.has_clat() {
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
            let stateful: Vec<&str> = Topology::ALL.into_iter().filter(|t| t.uses_nat()).map(Topology::name).collect();
            return Err(LabError::InvalidInput(format!(
                "the connection tracking table is set for the stateful DUTs ({}), not {t}",
                stateful.join(", ")
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
    t.dut().kind().check(t, opts)?;
    if let Some(q) = opts.queues {
        if !(1..=MAX_QUEUES).contains(&q) {
            return Err(LabError::InvalidInput(format!("{q} queues per port: allowed 1-{MAX_QUEUES}")));
        }
    }
    // Checked before anything is made: a CPU list that leaves the tester none is refused.
    let placement = Placement::choose(opts.dut_cpus.as_deref(), &online_cpus(), !opts.no_steering)?;
    if let Some(detail) = setup::existing()? {
        if opts.replace {
            setup::teardown()?;
        } else {
            return Err(LabError::AlreadyUp { detail });
        }
    }
    let mut st = LabState::new(t);
    st.namespaces = t.namespaces().iter().map(|s| s.to_string()).collect();
    st.links = t.links().into_iter().map(str::to_string).collect();
    st.placement = placement;
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
    let mac = |(ns, dev): (&str, &str)| -> Result<String, LabError> {
        let out = cmd::ip_in(ns, &["-o", "link", "show", "dev", dev])?;
        out.split_whitespace()
            .skip_while(|w| *w != "link/ether")
            .nth(1)
            .map(str::to_string)
            .ok_or_else(|| LabError::Output {
                command: format!("ip -n {ns} -o link show dev {dev}"),
                detail: format!("no link/ether address in: {}", out.trim()),
            })
    };
    // The tester's left port is cabled to the CLAT in xlat464.
    let left = match state::read() {
        Ok(Some(st)) => st.topology.left_peer(),
        _ => (DUT_NS, DUT_LEFT),
    };
    Ok((mac(left)?, mac((DUT_NS, DUT_RIGHT))?))
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
