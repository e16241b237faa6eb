//! The topologies, their fixed names and addresses, and the test configuration each one gets.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use xlat_config::{
    to_toml_with_comment, Backend, Cpus, DutHooks, Source, SourceKind, StatefulTrial, TestConfig, TesterConfig, TrialDefaults,
};
use xlat_traffic::{IpVersion, PortField, PortSpec, Setup, Side, SideTunnel, Stateful, StatefulSpec, Variation};

use crate::error::LabError;
use crate::placement::Placement;

/// Namespace that holds the tester ends of the veth pairs.
pub const TESTER_NS: &str = "xlat-tester";
/// Namespace that holds the DUT.
pub const DUT_NS: &str = "xlat-dut";
/// Tester left port (veth peer of [`DUT_LEFT`]).
pub const LEFT_PORT: &str = "xlat-tl";
/// Tester right port (veth peer of [`DUT_RIGHT`]).
pub const RIGHT_PORT: &str = "xlat-tr";
/// DUT left interface.
pub const DUT_LEFT: &str = "xlat-dl";
/// DUT right interface.
pub const DUT_RIGHT: &str = "xlat-dr";
/// TAYGA's TUN device in the DUT namespace (siit, nat64, xlat464) and in the CLAT's (xlat464).
pub const TAYGA_TUN: &str = "xlat-nat64";
/// nftables table (ip6) in every TAYGA namespace that repairs its zero UDP checksums (tayga.rs).
pub const CHECKSUM_TABLE: &str = "xlat_tayga_csum";
/// dslite and lw4o6: the AFTR's softwire address (its left address, the tunnel's end).
pub const DSLITE_AFTR: &str = "2001:2::1";
/// dslite: where the B4s are, a /112 on the AFTR's left link; the last 16 bits of a B4's address
/// are its identity (the AFTR's mark and connection-tracking zone, from 1), and the tester's
/// left address 2001:2::2 is B4 2.
pub const DSLITE_B4_PREFIX: &str = "2001:2::/112";
/// dslite and lw4o6: the IPv4 addresses behind the B4s (the inner sources), routed back into
/// the tunnel.
pub const DSLITE_B4_IPV4_ROUTE: &str = "198.18.0.0/16";
/// dslite and lw4o6: the MTU of the AFTR's left link, so that a 1518-byte IPv4 test frame fits with its
/// 40-byte outer header (no fragmentation in the tunnel).
pub const DSLITE_LEFT_MTU: &str = "1540";
/// lw4o6: bindings in the lwAFTR's table (lwaftr.rs's `binding`); the tester is binding 0.
pub const LW4O6_BINDINGS: u32 = 10_000;
/// lw4o6: PSID length (RFC 7597, offset 0): 64 port sets of 1,024 ports per IPv4 address.
pub const LW4O6_PSID_BITS: u16 = 6;
/// lw4o6: the tester's port set (PSID 1): its forward source ports and reverse destination
/// ports, pseudorandom (RFC 4814) inside it.
pub const LW4O6_PORTS: (u16, u16) = (1024, 2047);
/// xlat464: the CLAT's namespace, between the tester's left port and the PLAT (the DUT
/// namespace, which holds the stateful NAT64 and so the connection table).
pub const CLAT_NS: &str = "xlat-clat";
/// xlat464: the CLAT's left interface (veth peer of [`LEFT_PORT`], IPv4) and its right one
/// (veth peer of [`DUT_LEFT`], IPv6).
pub const CLAT_LEFT: &str = "xlat-cl";
pub const CLAT_RIGHT: &str = "xlat-cr";
/// Every link name the lab may create; `down` looks for exactly these.
pub const LINK_NAMES: [&str; 7] = [LEFT_PORT, RIGHT_PORT, DUT_LEFT, DUT_RIGHT, TAYGA_TUN, CLAT_LEFT, CLAT_RIGHT];
/// The transmit queue length of every interface the lab makes.
pub(crate) const TXQUEUELEN: &str = "10000";
/// Every namespace the lab may create.
pub const NAMESPACES: [&str; 3] = [TESTER_NS, DUT_NS, CLAT_NS];

/// DUT left addresses (with prefix length).
pub const DUT_LEFT_IPV4: &str = "198.18.0.1/16";
pub const DUT_LEFT_IPV6: &str = "2001:2::1/64";
/// DUT right addresses (with prefix length).
pub const DUT_RIGHT_IPV4: &str = "198.19.0.1/16";
pub const DUT_RIGHT_IPV6: &str = "2001:2:0:8000::1/64";
/// Tester addresses (answered by the tester's own ARP/NDP; the DUT has no static neighbours).
pub const TESTER_LEFT_IPV4: &str = "198.18.0.2";
pub const TESTER_LEFT_IPV6: &str = "2001:2::2";
pub const TESTER_RIGHT_IPV4: &str = "198.19.0.2";
pub const TESTER_RIGHT_IPV6: &str = "2001:2:0:8000::2";

/// The NAT64 prefix TAYGA uses.
///
/// Not the well-known prefix 64:ff9b::/96: TAYGA (as RFC 6052 requires) refuses to translate
/// the WKP combined with non-global IPv4 addresses, and 198.18.0.0/15 is non-global; it also
/// refuses static maps inside the WKP. So the lab uses a network-specific prefix inside the
/// benchmarking range 2001:2::/48.
pub const NAT64_PREFIX: &str = "2001:2:0:6464::/96";
/// TAYGA's own IPv4 address (source of its ICMPv4 errors); its IPv6 address is this one
/// mapped into [`NAT64_PREFIX`].
pub const TAYGA_IPV4: &str = "198.18.255.1";
/// Route to TAYGA's own IPv4 address.
pub const TAYGA_IPV4_ROUTE: &str = "198.18.255.0/24";
/// SIIT static mapping: IPv6 side (left) and the IPv4 block it maps to, address by address
/// (2001:2::N <-> 198.18.1.N, N = 0..255).
pub const SIIT_MAP_IPV6: &str = "2001:2::/120";
pub const SIIT_MAP_IPV4: &str = "198.18.1.0/24";
/// The IPv4 address the left tester (2001:2::2) appears as on the right side, for siit.
pub const SIIT_LEFT_IPV4_VIRT: &str = "198.18.1.2";
/// The IPv6 address the right tester (198.19.0.2) is reached at from the left, for siit and nat64.
pub const RIGHT_IPV6_VIRT: &str = "2001:2:0:6464::198.19.0.2";
/// nat64 and xlat464's PLAT: TAYGA's dynamic pool; nftables masquerades it to 198.19.0.1 on
/// the right.
pub const NAT64_POOL: &str = "198.18.128.0/18";
/// xlat464: the CLAT's address on the IPv6 link to the PLAT, whose end there is
/// [`DUT_LEFT_IPV6`] (the PLAT's left has no IPv4 address).
pub const CLAT_RIGHT_IPV6: &str = "2001:2::464/64";
/// xlat464: the CLAT-side translation prefix (RFC 6877 6.3, a dedicated prefix): the left
/// tester's IPv4 addresses appear in it by RFC 6052's /96 rule, 198.18.0.2 as
/// 2001:2:0:4646::c612:2. The PLAT-side prefix is [`NAT64_PREFIX`].
pub const CLAT_PREFIX: &str = "2001:2:0:4646::/96";
/// xlat464: the CLAT's static map (TAYGA's `map`, as clatd configures it): the left tester's
/// addresses 198.18.0.0/17 <-> their places in [`CLAT_PREFIX`]; every other IPv4 address (the
/// right side's) goes into [`NAT64_PREFIX`]. Not the whole /16: TAYGA's own address
/// [`TAYGA_IPV4`] must lie outside the map.
pub const CLAT_MAP_IPV4: &str = "198.18.0.0/17";
pub const CLAT_MAP_IPV6: &str = "2001:2:0:4646::c612:0/113";
/// xlat464: what the CLAT sends into TAYGA: the right side's IPv4 addresses.
pub const CLAT_IPV4_ROUTE: &str = "198.19.0.0/16";

/// nat44, nat64 and nat66: the connection tracking table and hash size the lab makes room for
/// (host-wide; `up` raises them if lower and `down` restores them): 2^21, above 2,000,000
/// connections.
pub const CONNTRACK_MAX: u64 = 1 << 21;
pub const CONNTRACK_BUCKETS: u64 = 1 << 21;
/// nat44, nat64 and nat66: the DUT's UDP connection tracking timeouts, seconds (unreplied and
/// "stream"), far above phase 1 + the delay to phase 2 + phase 2 + the timeout of the lab's
/// stateful configuration ([`STATEFUL_PHASE_DELAY_MS`] + 60 s + 2 s).
pub const CONNTRACK_UDP_TIMEOUT_S: u64 = 600;

/// nat44, nat64 and nat66: the Initiator's (forward) source ports, pseudorandom in phase 2 and
/// enumerated in phase 1.
pub const STATEFUL_SPORT: (u16, u16) = (10_000, 10_999);
/// nat44, nat64 and nat66: the Initiator's (forward) destination ports.
pub const STATEFUL_DPORT: (u16, u16) = (1, 1000);
/// N = M: phase 1 enumerates every (source port, destination port) combination once, 1000 x
/// 1000, so that every entry the DUT makes is a distinct connection and phase 2's pseudorandom
/// ports meet only existing entries.
pub const STATEFUL_CONNECTIONS: u64 = 1_000_000;
/// R: the phase 1 rate, frames/s; safely below what the lab's NAT DUTs forward on a 2-core
/// machine (BENCHMARKS.md: nat64 168,750 frames/s forward, without connection set-up).
pub const STATEFUL_PRELIMINARY_RATE: u64 = 50_000;
/// R for xlat464: its two TAYGAs share one core and forward about 30,000 frames/s
/// (BENCHMARKS.md, "IPv4aaS").
pub const XLAT464_PRELIMINARY_RATE: u64 = 20_000;
/// T: how long the Responder keeps receiving after phase 1 sending ended, ms.
pub const STATEFUL_PRELIMINARY_TIMEOUT_MS: u64 = 2000;
/// D = 1000 N / R + 2 T ms (siitperf's scripts): phase 2 starts when phase 1 has surely ended.
pub const STATEFUL_PHASE_DELAY_MS: u64 = 1000 * STATEFUL_CONNECTIONS / STATEFUL_PRELIMINARY_RATE + 2 * STATEFUL_PRELIMINARY_TIMEOUT_MS;
/// The DUT command before every trial: empty the connection table.
pub const STATEFUL_BEFORE_TRIAL: &str = "ip netns exec xlat-dut conntrack -F";
/// The stateful DUTs' connection count (`[dut] count`).
pub const STATEFUL_COUNT: &str = "ip netns exec xlat-dut conntrack -C";

/// How long the lab's reset command (`[dut] reset`, RFC 6201) keeps the DUT from forwarding,
/// seconds: the reset time `xlatperf reset` must find.
pub const RESET_S: f64 = 0.5;

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

/// A lab topology: which DUT runs in the DUT namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Topology {
    /// The Linux kernel forwarding IPv4.
    Router4,
    /// The Linux kernel forwarding IPv6.
    Router6,
    /// TAYGA, stateless NAT64 (IPv6 left, IPv4 right) with static mappings.
    Siit,
    /// nftables masquerade with conntrack, left to right: a stateful NAT44 gateway.
    Nat44,
    /// TAYGA with a dynamic pool plus nftables NAT44 behind it: a stateful NAT64 gateway.
    Nat64,
    /// nftables IPv6 masquerade with conntrack, left to right: a stateful NAT66 gateway.
    Nat66,
    /// 464XLAT (RFC 6877) as two DUTs in a chain: a CLAT (TAYGA, stateless, in its own
    /// namespace) and a PLAT (the nat64 DUT), IPv4 on both tester sides.
    Xlat464,
    /// Dual-Stack Lite (RFC 6333): an AFTR (IPv4-in-IPv6 softwires from the B4s on the left,
    /// decapsulated and encapsulated by tc programs, and NAT44 per B4) in the DUT namespace;
    /// the tester's left side is a B4.
    Dslite,
    /// Lightweight 4over6 (RFC 7596): a stateless lwAFTR (IPv4-in-IPv6 softwires checked
    /// against a binding table of address and port set, by tc programs) in the DUT namespace;
    /// the tester's left side is an lwB4.
    Lw4o6,
}

impl Topology {
    /// All topologies, in the order they are documented.
    pub const ALL: [Topology; 9] = [
        Topology::Router4,
        Topology::Router6,
        Topology::Siit,
        Topology::Nat44,
        Topology::Nat64,
        Topology::Nat66,
        Topology::Xlat464,
        Topology::Dslite,
        Topology::Lw4o6,
    ];

    /// The name used on the command line and in file names.
    pub fn name(self) -> &'static str {
        match self {
            Topology::Router4 => "router4",
            Topology::Router6 => "router6",
            Topology::Siit => "siit",
            Topology::Nat44 => "nat44",
            Topology::Nat64 => "nat64",
            Topology::Nat66 => "nat66",
            Topology::Xlat464 => "xlat464",
            Topology::Dslite => "dslite",
            Topology::Lw4o6 => "lw4o6",
        }
    }

    /// Does the DUT run TAYGA?
    pub fn uses_tayga(self) -> bool {
        matches!(self, Topology::Siit | Topology::Nat64 | Topology::Xlat464)
    }

    /// Does the DUT run nftables NAT (stateful)?
    pub fn uses_nat(self) -> bool {
        matches!(
            self,
            Topology::Nat44 | Topology::Nat64 | Topology::Nat66 | Topology::Xlat464 | Topology::Dslite
        )
    }

    /// Is the tester's left side a B4 (dslite, lw4o6): IPv4 in softwires to an AFTR whose left
    /// is IPv6 only?
    pub fn softwire(self) -> bool {
        matches!(self, Topology::Dslite | Topology::Lw4o6)
    }

    /// Is there a CLAT between the tester's left port and the DUT (xlat464)?
    pub fn has_clat(self) -> bool {
        self == Topology::Xlat464
    }

    /// The namespaces the topology is made of.
    pub fn namespaces(self) -> &'static [&'static str] {
        if self.has_clat() {
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
            .filter(|l| self.uses_tayga() || *l != TAYGA_TUN)
            .filter(|l| self.has_clat() || (*l != CLAT_LEFT && *l != CLAT_RIGHT))
            .collect()
    }

    /// The nftables family of the DUT's NAT table (`table <family> xlat`): `ip6` for nat66,
    /// `ip` for nat44 and nat64 (TAYGA's IPv4 side is masqueraded).
    pub fn nat_family(self) -> Option<&'static str> {
        match self {
            Topology::Nat44 | Topology::Nat64 | Topology::Xlat464 | Topology::Dslite => Some("ip"),
            Topology::Nat66 => Some("ip6"),
            _ => None,
        }
    }

    /// (IPv4 forwarding, IPv6 forwarding) in the DUT namespace.
    pub fn forwarding(self) -> (bool, bool) {
        match self {
            Topology::Router4 | Topology::Nat44 | Topology::Dslite | Topology::Lw4o6 => (true, false),
            Topology::Router6 | Topology::Nat66 => (false, true),
            Topology::Siit | Topology::Nat64 | Topology::Xlat464 => (true, true),
        }
    }

    /// The lab's stateful test (RFC 9693), for the NAT topologies: see [`StatefulLab`].
    pub fn stateful(self) -> Option<StatefulLab> {
        let rate = match self {
            Topology::Xlat464 => XLAT464_PRELIMINARY_RATE,
            _ => STATEFUL_PRELIMINARY_RATE,
        };
        self.uses_nat().then(|| StatefulLab::at_rate(rate))
    }

    /// IP version of the (left, right) tester side.
    pub fn ip_versions(self) -> (u8, u8) {
        match self {
            // dslite: IPv4 in the tunnel on the left.
            Topology::Router4 | Topology::Nat44 | Topology::Xlat464 | Topology::Dslite | Topology::Lw4o6 => (4, 4),
            Topology::Router6 | Topology::Nat66 => (6, 6),
            Topology::Siit | Topology::Nat64 => (6, 4),
        }
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
        if let Some(t) = Topology::ALL.into_iter().find(|t| t.name().eq_ignore_ascii_case(s)) {
            return Ok(t);
        }
        let planned = [("mape", "MAP-E"), ("mapt", "MAP-T"), ("map-e", "MAP-E"), ("map-t", "MAP-T")];
        match planned.iter().find(|(n, _)| n.eq_ignore_ascii_case(s)) {
            Some((_, what)) => Err(LabError::NotBuilt {
                name: s.to_string(),
                what,
                known: known(),
            }),
            None => Err(LabError::UnknownTopology {
                name: s.to_string(),
                known: known(),
            }),
        }
    }
}

/// The parts of the lab's stateful configuration (nat44, nat64, nat66) beyond
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
    /// N = M = [`STATEFUL_CONNECTIONS`] at phase 1 rate `rate`, D by siitperf's rule.
    fn at_rate(rate: u64) -> Self {
        StatefulLab {
            preliminary_frames: STATEFUL_CONNECTIONS,
            state_table: STATEFUL_CONNECTIONS,
            preliminary_rate: rate,
            preliminary_timeout_ms: STATEFUL_PRELIMINARY_TIMEOUT_MS,
            phase_delay_ms: 1000 * STATEFUL_CONNECTIONS / rate + 2 * STATEFUL_PRELIMINARY_TIMEOUT_MS,
            before_trial: STATEFUL_BEFORE_TRIAL.to_string(),
        }
    }
}

/// Strip the prefix length: "198.18.0.1/24" -> "198.18.0.1".
pub(crate) fn addr(with_len: &str) -> &str {
    with_len.split('/').next().unwrap_or(with_len)
}

/// An address constant of this file (prefix length allowed) as an IPv4 address.
fn v4(a: &str) -> Option<Ipv4Addr> {
    addr(a).parse().ok()
}

/// An address constant of this file (prefix length allowed) as an IPv6 address.
pub(crate) fn v6(a: &str) -> Option<Ipv6Addr> {
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
    if t == Topology::Siit {
        left.ipv4_virt = v4(SIIT_LEFT_IPV4_VIRT);
    }
    if matches!(t, Topology::Siit | Topology::Nat64) {
        right.ipv6_virt = v6(RIGHT_IPV6_VIRT);
    }
    if t.softwire() {
        // The left tester is B4 2001:2::2; its IPv4 address is inside the softwire, and the
        // AFTR's MAC is resolved by NDP.
        left.tunnel = Some(SideTunnel {
            local: v6(TESTER_LEFT_IPV6).unwrap_or(Ipv6Addr::UNSPECIFIED),
            remote: v6(DSLITE_AFTR).unwrap_or(Ipv6Addr::UNSPECIFIED),
        });
        left.dut_ipv4 = None;
        left.ipv6_real = None;
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
    // lw4o6: the lwB4's ports are its port set's, in both directions.
    let (mut forward_ports, mut reverse_ports) = (forward_ports, PortSpec::default());
    if t == Topology::Lw4o6 {
        let set = PortField {
            variation: Variation::Pseudorandom,
            min: LW4O6_PORTS.0,
            max: LW4O6_PORTS.1,
        };
        forward_ports.sport = set;
        reverse_ports.dport = set;
    }
    TestConfig {
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
            timestamps: None,
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
    }
}

/// The comment at the top of the configuration file: who wrote it, what the DUT is, and where
/// the DUT and the tester run.
fn config_comment(t: Topology, placement: Option<&Placement>) -> String {
    let mut c = format!("written by `xlatperf lab up {t}`\n");
    c.push_str(&match t {
        Topology::Router4 => format!("DUT: the Linux kernel forwarding IPv4 in namespace {DUT_NS}"),
        Topology::Router6 => format!("DUT: the Linux kernel forwarding IPv6 in namespace {DUT_NS}"),
        Topology::Siit => format!(
            "DUT: TAYGA stateless NAT64 in namespace {DUT_NS}, prefix {NAT64_PREFIX}\n\
             static map {SIIT_MAP_IPV6} <-> {SIIT_MAP_IPV4} ({TESTER_LEFT_IPV6} appears as {SIIT_LEFT_IPV4_VIRT} on the right)"
        ),
        Topology::Nat44 => format!(
            "DUT: nftables masquerade (conntrack) from left to right in namespace {DUT_NS}\n\
             stateful: the right side sees {}; reverse traffic needs the Responder",
            addr(DUT_RIGHT_IPV4)
        ),
        Topology::Nat64 => format!(
            "DUT: TAYGA (prefix {NAT64_PREFIX}, dynamic pool {NAT64_POOL}) plus nftables masquerade\n\
             stateful: the right side sees {}; reverse traffic needs the Responder",
            addr(DUT_RIGHT_IPV4)
        ),
        Topology::Nat66 => format!(
            "DUT: nftables IPv6 masquerade (conntrack) from left to right in namespace {DUT_NS}\n\
             stateful: the right side sees {}; reverse traffic needs the Responder",
            addr(DUT_RIGHT_IPV6)
        ),
        Topology::Dslite => format!(
            "DUT: Dual-Stack Lite AFTR (RFC 6333) in namespace {DUT_NS}: IPv4-in-IPv6 to {DSLITE_AFTR} from the B4s in {DSLITE_B4_PREFIX}\n\
             decapsulated, NAT44 per B4 (nftables masquerade, a conntrack zone per B4), encapsulated back\n\
             stateful: the right side sees {}; reverse traffic needs the Responder",
            addr(DUT_RIGHT_IPV4)
        ),
        Topology::Lw4o6 => format!(
            "DUT: lightweight 4over6 lwAFTR (RFC 7596) in namespace {DUT_NS}: IPv4-in-IPv6 to {DSLITE_AFTR}, stateless\n\
             a binding table of {LW4O6_BINDINGS} lwB4s (IPv4 address + port set of 1,024 ports, PSID offset 0)\n\
             the tester is lwB4 {TESTER_LEFT_IPV6}: {TESTER_LEFT_IPV4} ports {}-{}; a frame outside its binding is dropped",
            LW4O6_PORTS.0, LW4O6_PORTS.1
        ),
        Topology::Xlat464 => format!(
            "DUT: 464XLAT (RFC 6877), two translators in a chain, IPv6 between them\n\
             CLAT: TAYGA in namespace {CLAT_NS}, map {CLAT_MAP_IPV4} <-> {CLAT_MAP_IPV6}, PLAT-side prefix {NAT64_PREFIX}\n\
             PLAT: TAYGA (prefix {NAT64_PREFIX}, dynamic pool {NAT64_POOL}) plus nftables masquerade in namespace {DUT_NS}\n\
             stateful: the right side sees {}; reverse traffic needs the Responder",
            addr(DUT_RIGHT_IPV4)
        ),
    });
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
            let dut = if t.uses_tayga() {
                let who = if t.has_clat() { "both TAYGAs" } else { "TAYGA" };
                format!("{who} and the kernel's packet processing of the DUT")
            } else {
                "the DUT's packet processing (the kernel's)".to_string()
            };
            let (left, right) = p.tester_roles();
            let workers = if left == right {
                format!("the tester's senders and receivers share CPU {left} in one thread")
            } else {
                format!("the tester's left port works on CPU {left}, its right port on CPU {right}")
            };
            let steer = if p.steered {
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
