//! What each topology is, derived from its declaration (topologies.rs), and the test
//! configuration each one gets.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use xlat_config::{
    to_toml_with_comment, Backend, Cpus, DutHooks, Source, SourceKind, StatefulTrial, TestConfig, TesterConfig, TrialDefaults,
};
use xlat_traffic::{IpVersion, PortField, PortSpec, Setup, Side, SideTunnel, Stateful, StatefulSpec, Variation};

use crate::error::LabError;
pub use crate::names::*;
use crate::placement::Placement;
pub use crate::topologies::{Declaration, Dut, Topology};

/// The lab's reset command: the DUT's kernel stops forwarding (IPv4 and IPv6 forwarding,
/// whichever the topology uses, off) for [`RESET_S`] seconds, then forwards again with its
/// state (routes, neighbours, connection table) kept. Only shell builtins around the one
/// `sleep`, so that the length does not depend on how fast a loaded machine starts processes
/// (with `sysctl` as a process, the lab measured 0.64 s for a 0.5 s sleep), at the tester's
/// priority (nice -20: at 0 the shell waits up to 0.1 s for a core the tester's busy-polling
/// threads hold). Not the links down
/// and up: a veth peer's carrier goes with it, and the frames the tester's own port then could
/// not send would count as the tester's drops.
pub fn reset_command(t: Topology) -> String {
    let (v4, v6) = t.forwarding();
    let files: Vec<&str> = [
        (v4, "/proc/sys/net/ipv4/ip_forward"),
        (v6, "/proc/sys/net/ipv6/conf/all/forwarding"),
    ]
    .into_iter()
    .filter_map(|(on, f)| on.then_some(f))
    .collect();
    let set = |v: u8| files.iter().map(|f| format!("echo {v} > {f}")).collect::<Vec<_>>().join("; ");
    format!("ip netns exec {DUT_NS} nice -n -20 sh -c '{}; sleep {RESET_S}; {}'", set(0), set(1))
}

/// Other names a user may try for a topology, and the topology's name (the command line takes
/// them; the written files use the name).
pub const ALIASES: [(&str, &str); 4] = [("map-e", "mape"), ("map-t", "mapt"), ("ds-lite", "dslite"), ("464xlat", "xlat464")];

/// What each topology is, derived from its [`Declaration`](crate::topologies::Declaration).
impl Topology {
    /// The tester's IPv6 end where the DUT's left is IPv6 only: B4 2001:2::2 (dslite, lw4o6), or
    /// the CE the mapping rule gives the tester's address and PSID (mape, mapt). The written
    /// configuration's tunnel starts there (or, mapt, its translated packets), and the DUT routes
    /// the B4s' (CEs') IPv4 addresses to it.
    pub(crate) fn tester_ipv6_end(self) -> Option<Ipv6Addr> {
        if self.dut().map_rule() {
            map_tester_ce()
        } else {
            v6(TESTER_LEFT_IPV6)
        }
    }

    /// The DUT in the DUT namespace.
    pub fn dut(self) -> Dut {
        self.declaration().dut
    }

    /// Does the DUT (or the CLAT in front of it) run TAYGA?
    pub fn uses_tayga(self) -> bool {
        self.dut().tayga() || self.has_clat()
    }

    /// Does the DUT translate addresses statefully (nftables NAT, conntrack)?
    pub fn uses_nat(self) -> bool {
        self.nat_family().is_some()
    }

    /// Is the tester's left side a B4 (dslite, lw4o6): IPv4 in softwires to a concentrator
    /// whose left is IPv6 only?
    pub fn softwire(self) -> bool {
        self.dut().softwire()
    }

    /// Is there a CLAT between the tester's left port and the DUT (xlat464)?
    pub fn has_clat(self) -> bool {
        self.declaration().clat
    }

    /// The namespaces the topology is made of.
    pub fn namespaces(self) -> &'static [&'static str] {
        if self.dut().dpdk() {
            &[]
        } else if self.has_clat() {
            &NAMESPACES
        } else {
            &NAMESPACES[..2]
        }
    }

    /// Where the veth peer of the tester's left port is: (namespace, interface). The DUT's left
    /// interface, or the CLAT's.
    pub fn left_peer(self) -> (&'static str, &'static str) {
        if self.has_clat() {
            (CLAT_NS, CLAT_LEFT)
        } else {
            (DUT_NS, DUT_LEFT)
        }
    }

    /// The links the topology is made of (the lab's names, wherever they live).
    pub fn links(self) -> Vec<&'static str> {
        LINK_NAMES
            .into_iter()
            .filter(|_| !self.dut().dpdk())
            .filter(|l| self.uses_tayga() || *l != TAYGA_TUN)
            .filter(|l| self.has_clat() || (*l != CLAT_LEFT && *l != CLAT_RIGHT))
            .collect()
    }

    /// The nftables family of the DUT's NAT table (`table <family> xlat`).
    pub fn nat_family(self) -> Option<&'static str> {
        self.dut().nat_family()
    }

    /// (IPv4 forwarding, IPv6 forwarding) in the DUT namespace.
    pub fn forwarding(self) -> (bool, bool) {
        self.declaration().forwarding
    }

    /// The lab's stateful test (RFC 9693), for the stateful DUTs: see [`StatefulLab`].
    pub fn stateful(self) -> Option<StatefulLab> {
        self.declaration().preliminary_rate.map(StatefulLab::at_rate)
    }

    /// IP version of the (left, right) tester side.
    pub fn ip_versions(self) -> (u8, u8) {
        self.declaration().ip_versions
    }

    /// What it is, in one line.
    pub fn summary(self) -> &'static str {
        self.declaration().summary
    }
}

impl fmt::Display for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Topology {
    type Err = LabError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let known = || Topology::ALL.map(Topology::name).join(", ");
        let name = ALIASES
            .iter()
            .find(|(alias, _)| alias.eq_ignore_ascii_case(s))
            .map_or(s, |(_, name)| name);
        Topology::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| LabError::UnknownTopology {
                name: s.to_string(),
                known: known(),
            })
    }
}

/// The parts of the lab's stateful configuration (the stateful topologies) beyond
/// [`StatefulSpec`]: siitperf's `N M R T D` (`[stateful]`) and the DUT command before every
/// trial (`[dut] before_trial`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatefulLab {
    /// N: frames of phase 1, all foreground.
    pub preliminary_frames: u64,
    /// M: entries of the Responder's state table.
    pub state_table: u64,
    /// R: frames/s of phase 1.
    pub preliminary_rate: u64,
    /// T: ms the Responder keeps receiving after phase 1.
    pub preliminary_timeout_ms: u64,
    /// D: ms from the start of phase 1 to the start of phase 2.
    pub phase_delay_ms: u64,
    /// Run (through a shell) before every trial.
    pub before_trial: String,
}

impl Default for StatefulLab {
    fn default() -> Self {
        StatefulLab::at_rate(STATEFUL_PRELIMINARY_RATE)
    }
}

impl StatefulLab {
    /// N = M = [`STATEFUL_CONNECTIONS`] at phase 1 rate `rate`, D by the configuration's rule
    /// (the one a configuration without `phase_delay_ms` gets).
    fn at_rate(rate: u64) -> Self {
        let frames = u32::try_from(STATEFUL_CONNECTIONS).unwrap_or(u32::MAX);
        StatefulLab {
            preliminary_frames: STATEFUL_CONNECTIONS,
            state_table: STATEFUL_CONNECTIONS,
            preliminary_rate: rate,
            preliminary_timeout_ms: STATEFUL_PRELIMINARY_TIMEOUT_MS,
            phase_delay_ms: xlat_config::StatefulTrial::default_phase_delay_ms(frames, rate, STATEFUL_PRELIMINARY_TIMEOUT_MS),
            before_trial: STATEFUL_BEFORE_TRIAL.to_string(),
        }
    }
}

/// An address constant of this file (prefix length allowed) as an IPv4 address.
fn v4(a: &str) -> Option<Ipv4Addr> {
    addr(a).parse().ok()
}

fn ip_version(v: u8) -> IpVersion {
    if v == 6 {
        IpVersion::V6
    } else {
        IpVersion::V4
    }
}

/// The xlatperf test configuration for a topology, as the typed value that `xlatperf` reads
/// from the file [`config_toml`] writes, with this machine's default [`Placement`].
pub fn config(t: Topology) -> TestConfig {
    config_for(t, default_placement().as_ref())
}

/// The default placement on this machine (the DUT on the highest CPU), if it has two CPUs.
fn default_placement() -> Option<Placement> {
    Placement::choose(None, &crate::placement::online_cpus(), true).ok().flatten()
}

/// The configuration of topology `t` with the CPUs placed as `placement` says: the tester's
/// workers on the tester's CPUs, `dut.cpus` the DUT's.
fn config_for(t: Topology, placement: Option<&Placement>) -> TestConfig {
    let (lv, rv) = t.ip_versions();
    let side = |version: u8, ipv4: &str, ipv6: &str, dut_ipv4: &str, dut_ipv6: &str| Side {
        ipv4_real: v4(ipv4),
        ipv6_real: v6(ipv6),
        dut_ipv4: v4(dut_ipv4),
        dut_ipv6: v6(dut_ipv6),
        ..Side::new(ip_version(version))
    };
    let mut left = side(lv, TESTER_LEFT_IPV4, TESTER_LEFT_IPV6, DUT_LEFT_IPV4, DUT_LEFT_IPV6);
    let mut right = side(rv, TESTER_RIGHT_IPV4, TESTER_RIGHT_IPV6, DUT_RIGHT_IPV4, DUT_RIGHT_IPV6);
    let d = t.declaration();
    left.ipv4_virt = d.left_ipv4_virt.and_then(v4);
    right.ipv6_virt = d.right_ipv6_virt.and_then(v6);
    let end = t.tester_ipv6_end().unwrap_or(Ipv6Addr::UNSPECIFIED);
    if t.softwire() {
        // The left tester is B4 2001:2::2; its IPv4 address is inside the softwire, and the
        // AFTR's MAC is resolved by NDP.
        left.tunnel = Some(SideTunnel {
            local: end,
            remote: v6(DSLITE_AFTR).unwrap_or(Ipv6Addr::UNSPECIFIED),
        });
        left.ipv6_real = None;
    } else if t.dut().left_ipv6_only() {
        // mapt: the left tester sends as its CE (the CE's own translation is the tester's frame).
        left.ipv6_real = Some(end);
    }
    if t.dut().left_ipv6_only() {
        left.dut_ipv4 = None;
    }
    let cpus = match placement.map(Placement::tester_roles) {
        Some((left, right)) => Cpus {
            left_send: Some(left),
            left_recv: Some(left),
            right_send: Some(right),
            right_recv: Some(right),
        },
        None => Cpus::default(),
    };
    // Through a NAT, reverse traffic needs the Responder: a stateful test (RFC 9693) with the
    // Initiator on the left, phase 1 enumerating every forward port combination in pseudorandom
    // order, phase 2 sending pseudorandom ports of the same ranges forward and pseudorandom
    // learnt tuples back.
    let (forward_ports, stateful) = match t.stateful() {
        Some(_) => {
            let field = |(min, max): (u16, u16)| PortField {
                variation: Variation::Pseudorandom,
                min,
                max,
            };
            let ports = PortSpec {
                sport: field(STATEFUL_SPORT),
                dport: field(STATEFUL_DPORT),
            };
            let spec = StatefulSpec {
                mode: Stateful::InitiatorLeft,
                enumerate_ports: Variation::Pseudorandom,
                enumerate_ips: Variation::Fixed,
                responder_tuples: Variation::Pseudorandom,
            };
            (ports, spec)
        }
        None => (PortSpec::default(), StatefulSpec::default()),
    };
    let reverse_ports = PortSpec::default();
    let mut cfg = TestConfig {
        setup: Setup {
            left,
            right,
            forward: true,
            reverse: true,
            forward_ports,
            reverse_ports,
            fg_n: 2,
            fg_m: 2,
            stateful,
            seed: None,
            allow_foreign_addresses: false,
        },
        tester: TesterConfig {
            backend: Backend::AfPacket,
            left_port: LEFT_PORT.to_string(),
            right_port: RIGHT_PORT.to_string(),
            netns: Some(TESTER_NS.to_string()),
            eal_args: Vec::new(),
            promisc: false,
            loopback: false,
            cpus,
            mem_channels: None,
            queues: 1,
            max_send_lag_us: None,
            max_send_lag_frames: Some(LAB_MAX_SEND_LAG_FRAMES),
            catch_up_percent: None,
            timestamps: None,
            flow_control: xlat_config::FlowControl::Off,
            rx_descriptors: None,
            tx_descriptors: None,
        },
        trial: TrialDefaults {
            frame_size: 84,
            rate: None,
            duration_s: 60.0,
            timeout_ms: 2000,
        },
        stateful: t.stateful().map_or_else(Default::default, |sf| StatefulTrial {
            preliminary_frames: u32::try_from(sf.preliminary_frames).ok(),
            // Not written either: M then follows N (the foreground frames among N).
            state_table: None,
            preliminary_rate: Some(sf.preliminary_rate),
            preliminary_timeout_ms: Some(sf.preliminary_timeout_ms),
            // Not written: D then follows N and R (ceil(1000 N / R) + 2 T) when they are
            // changed with --preliminary-frames / --preliminary-rate.
            phase_delay_ms: None,
        }),
        dut: DutHooks {
            before_trial: t.stateful().map(|sf| sf.before_trial),
            between_phases: None,
            // The same flush: conntrack -F returns when the table is empty.
            delete_all: t.stateful().map(|sf| sf.before_trial),
            count: t.stateful().map(|_| STATEFUL_COUNT.to_string()),
            reset: Some(reset_command(t)),
            cpus: placement.map(|p| p.dut.clone()).unwrap_or_default(),
            // Its CPUs' load is read from the kernel (`cpus`).
            load: None,
        },
        source: Source {
            // The name of the file `xlatperf lab up` writes it to, for messages.
            file: format!("lab-{t}.toml"),
            kind: SourceKind::Toml,
        },
    };
    // The DUT's own: the lwB4s or CEs of the left side, a DPDK tester's ports.
    t.dut().kind().tester_config(t, &mut cfg, placement);
    cfg
}

/// The comment at the top of the configuration file: who wrote it, what the DUT is, and where
/// the DUT and the tester run.
fn config_comment(t: Topology, placement: Option<&Placement>) -> String {
    let mut c = format!("written by `xlatperf lab up {t}`\n");
    c.push_str(&(t.declaration().describe)());
    if let Some(sf) = t.stateful() {
        c.push_str(&format!(
            "\nphase 1 opens {} connections: every source port {}-{} x destination port {}-{}, in pseudorandom order\n\
             the DUT keeps UDP entries {CONNTRACK_UDP_TIMEOUT_S} s; its table holds {CONNTRACK_MAX}\n\
             `dut.before_trial` empties the DUT's connection table before every trial",
            sf.preliminary_frames, STATEFUL_SPORT.0, STATEFUL_SPORT.1, STATEFUL_DPORT.0, STATEFUL_DPORT.1
        ));
    }
    match placement {
        Some(p) => {
            let dut = t.dut().kind().on_dut_cpus(t);
            let (left, right) = p.tester_roles();
            let workers = if left == right {
                format!("the tester's senders and receivers share CPU {left} in one thread")
            } else {
                format!("the tester's left port works on CPU {left}, its right port on CPU {right}")
            };
            let steer = if t.dut().dpdk() {
                "polling: 100 % busy whatever it forwards".to_string()
            } else if p.steered {
                "steered by RPS".to_string()
            } else {
                "NOT steered (lab up --no-steering): the kernel DUT runs on the CPU that sends to it".to_string()
            };
            c.push_str(&format!(
                "\n{dut} on CPU {} ({steer}); {workers}; every trial records both CPUs' load",
                xlat_trial::load::cpu_list(&p.dut)
            ));
        }
        None => c.push_str("\none CPU: the DUT and the tester share it (a figure then measures both)"),
    }
    c
}

/// The xlatperf TOML test configuration for a topology: [`config`] written by the config
/// crate's writer, under a comment that says what the DUT is.
pub fn config_toml(t: Topology) -> String {
    config_toml_for(t, None, 1, None)
}

/// [`config_toml`] with the tester's ports opened by `backend` (`None`: afpacket), `queues`
/// queues each, the CPUs placed as `placement` says (`None`: this machine's default).
pub fn config_toml_for(t: Topology, backend: Option<Backend>, queues: u32, placement: Option<&Placement>) -> String {
    let default = default_placement();
    let placement = placement.or(default.as_ref());
    let mut cfg = config_for(t, placement);
    if let Some(b) = backend {
        cfg.tester.backend = b;
    }
    cfg.tester.queues = queues.max(1);
    to_toml_with_comment(&cfg, &config_comment(t, placement))
}

#[cfg(test)]
#[path = "topology_tests.rs"]
mod tests;
