//! Every lab topology, each declared once: its DUT, whether a CLAT sits in front of it, the IP
//! versions of the tester's sides, what the DUT namespace forwards, its stateful test, the
//! addresses the tester reaches across a translator, and the words its configuration file
//! starts with. `lab up` (setup.rs and the DUT's module in duts/), the written configuration (topology.rs), `status`, the
//! steering and the demo follow these declarations; none of them branches on a topology's name.
//!
//! A new topology whose DUT is one of [`Dut`]'s is one more declaration here (and its name in
//! [`Topology::ALL`]), its tests, and docs/lab.md. A new kind of DUT is a new [`Dut`] with its
//! properties here and its module in `duts/` (what builds it, stops it and checks for it,
//! with its arm in `Dut::kind`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::names::*;

/// What runs in the DUT namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dut {
    /// The Linux kernel forwarding.
    Kernel,
    /// nftables masquerade with conntrack from left to right (a stateful NAT), its table of
    /// nftables family `family` ("ip", "ip6").
    Masquerade { family: &'static str },
    /// TAYGA with a static map: stateless NAT64 (SIIT).
    TaygaStatic,
    /// TAYGA with a dynamic pool that nftables masquerades ("ip"): a stateful NAT64.
    TaygaPool,
    /// A DS-Lite AFTR: softwires from the B4s decapsulated and encapsulated by tc programs,
    /// NAT44 per B4 ("ip").
    Aftr,
    /// A lightweight 4over6 lwAFTR: softwires checked against a binding table by tc
    /// programs, stateless.
    Lwaftr,
    /// A MAP-E border relay: softwires checked and built by the mapping rule in tc programs,
    /// stateless, without a table.
    MapE,
    /// A MAP-T border relay: IPv6 <-> IPv4 translated by the mapping rule and the Default
    /// Mapping Rule's prefix in tc programs, stateless, without a table.
    MapT,
    /// DPDK's dpdk-testpmd forwarding in MAC mode between two vhost-user ports (duts/testpmd.rs): no
    /// namespace and no veth; the tester's ports are DPDK virtio-user devices.
    Testpmd,
}

impl Dut {
    /// Does it run TAYGA?
    pub fn tayga(self) -> bool {
        matches!(self, Dut::TaygaStatic | Dut::TaygaPool)
    }

    /// The nftables family of its NAT table (`table <family> xlat`), if it translates
    /// addresses statefully.
    pub fn nat_family(self) -> Option<&'static str> {
        match self {
            Dut::Masquerade { family } => Some(family),
            Dut::TaygaPool | Dut::Aftr => Some("ip"),
            Dut::Kernel | Dut::TaygaStatic | Dut::Lwaftr | Dut::MapE | Dut::MapT | Dut::Testpmd => None,
        }
    }

    /// Is the tester's left side a B4 (IPv4 in softwires to a concentrator whose left is IPv6
    /// only)?
    pub fn softwire(self) -> bool {
        matches!(self, Dut::Aftr | Dut::Lwaftr | Dut::MapE)
    }

    /// Is the DUT's left IPv6 only, its IPv4 reached through tc programs on that interface (a
    /// softwire's concentrator, or mapt's translating BR)?
    pub fn left_ipv6_only(self) -> bool {
        self.softwire() || self == Dut::MapT
    }

    /// Is the DUT a DPDK process the tester reaches by vhost-user (no namespace, no veth, the
    /// tester's backend DPDK)?
    pub fn dpdk(self) -> bool {
        self == Dut::Testpmd
    }

    /// Does the tester's left side work by the MAP rule (its address and ports a CE's)?
    pub fn map_rule(self) -> bool {
        matches!(self, Dut::MapE | Dut::MapT)
    }
}

/// A lab topology, as `lab up` builds it.
#[derive(Debug)]
pub struct Declaration {
    /// The name on the command line and in file names.
    pub name: &'static str,
    /// What it is, in one line (the demo, `lab up --help`, docs/lab.md).
    pub summary: &'static str,
    pub dut: Dut,
    /// A CLAT (TAYGA, in its own namespace) between the tester's left port and the DUT.
    pub clat: bool,
    /// IP version of the (left, right) tester side (a B4's left side: the IPv4 it tunnels).
    pub ip_versions: (u8, u8),
    /// (IPv4 forwarding, IPv6 forwarding) in the DUT namespace.
    pub forwarding: (bool, bool),
    /// The phase 1 rate of its stateful test (RFC 9693), frames/s: every stateful DUT has
    /// one, set below what it forwards.
    pub preliminary_rate: Option<u64>,
    /// The left tester's IPv4 address as the right side sees it (a static map).
    pub left_ipv4_virt: Option<&'static str>,
    /// The right tester's IPv6 address as the left side reaches it (a NAT64 prefix).
    pub right_ipv6_virt: Option<&'static str>,
    /// The DUT as the configuration file's comment describes it.
    pub describe: fn() -> String,
}

/// A lab topology: a handle on its [`Declaration`]. Equal when the names are.
#[derive(Clone, Copy)]
pub struct Topology(&'static Declaration);

impl Topology {
    pub const ROUTER4: Topology = Topology(&Declaration {
        name: "router4",
        summary: "the Linux kernel forwarding IPv4",
        dut: Dut::Kernel,
        clat: false,
        ip_versions: (4, 4),
        forwarding: (true, false),
        preliminary_rate: None,
        left_ipv4_virt: None,
        right_ipv6_virt: None,
        describe: || format!("DUT: the Linux kernel forwarding IPv4 in namespace {DUT_NS}"),
    });

    pub const ROUTER6: Topology = Topology(&Declaration {
        name: "router6",
        summary: "the Linux kernel forwarding IPv6",
        dut: Dut::Kernel,
        clat: false,
        ip_versions: (6, 6),
        forwarding: (false, true),
        preliminary_rate: None,
        left_ipv4_virt: None,
        right_ipv6_virt: None,
        describe: || format!("DUT: the Linux kernel forwarding IPv6 in namespace {DUT_NS}"),
    });

    pub const SIIT: Topology = Topology(&Declaration {
        name: "siit",
        summary: "TAYGA, stateless NAT64 (IPv6 left, IPv4 right) with static mappings",
        dut: Dut::TaygaStatic,
        clat: false,
        ip_versions: (6, 4),
        forwarding: (true, true),
        preliminary_rate: None,
        left_ipv4_virt: Some(SIIT_LEFT_IPV4_VIRT),
        right_ipv6_virt: Some(RIGHT_IPV6_VIRT),
        describe: || {
            format!(
                "DUT: TAYGA stateless NAT64 in namespace {DUT_NS}, prefix {NAT64_PREFIX}\n\
                 static map {SIIT_MAP_IPV6} <-> {SIIT_MAP_IPV4} ({TESTER_LEFT_IPV6} appears as {SIIT_LEFT_IPV4_VIRT} on the right)"
            )
        },
    });

    pub const NAT44: Topology = Topology(&Declaration {
        name: "nat44",
        summary: "nftables masquerade with conntrack, left to right: a stateful NAT44 gateway",
        dut: Dut::Masquerade { family: "ip" },
        clat: false,
        ip_versions: (4, 4),
        forwarding: (true, false),
        preliminary_rate: Some(STATEFUL_PRELIMINARY_RATE),
        left_ipv4_virt: None,
        right_ipv6_virt: None,
        describe: || {
            format!(
                "DUT: nftables masquerade (conntrack) from left to right in namespace {DUT_NS}\n\
                 stateful: the right side sees {}; reverse traffic needs the Responder",
                addr(DUT_RIGHT_IPV4)
            )
        },
    });

    pub const NAT64: Topology = Topology(&Declaration {
        name: "nat64",
        summary: "TAYGA with a dynamic pool plus nftables NAT44 behind it: a stateful NAT64 gateway",
        dut: Dut::TaygaPool,
        clat: false,
        ip_versions: (6, 4),
        forwarding: (true, true),
        preliminary_rate: Some(NAT64_PRELIMINARY_RATE),
        left_ipv4_virt: None,
        right_ipv6_virt: Some(RIGHT_IPV6_VIRT),
        describe: || {
            format!(
                "DUT: TAYGA (prefix {NAT64_PREFIX}, dynamic pool {NAT64_POOL}) plus nftables masquerade\n\
                 stateful: the right side sees {}; reverse traffic needs the Responder",
                addr(DUT_RIGHT_IPV4)
            )
        },
    });

    pub const NAT66: Topology = Topology(&Declaration {
        name: "nat66",
        summary: "nftables IPv6 masquerade with conntrack, left to right: a stateful NAT66 gateway",
        dut: Dut::Masquerade { family: "ip6" },
        clat: false,
        ip_versions: (6, 6),
        forwarding: (false, true),
        preliminary_rate: Some(STATEFUL_PRELIMINARY_RATE),
        left_ipv4_virt: None,
        right_ipv6_virt: None,
        describe: || {
            format!(
                "DUT: nftables IPv6 masquerade (conntrack) from left to right in namespace {DUT_NS}\n\
                 stateful: the right side sees {}; reverse traffic needs the Responder",
                addr(DUT_RIGHT_IPV6)
            )
        },
    });

    pub const XLAT464: Topology = Topology(&Declaration {
        name: "xlat464",
        summary: "464XLAT (RFC 6877): a CLAT (TAYGA, stateless, in its own namespace) and a PLAT (the nat64 DUT) in a chain, IPv4 on both tester sides",
        dut: Dut::TaygaPool,
        clat: true,
        ip_versions: (4, 4),
        forwarding: (true, true),
        preliminary_rate: Some(XLAT464_PRELIMINARY_RATE),
        left_ipv4_virt: None,
        right_ipv6_virt: None,
        describe: || {
            format!(
                "DUT: 464XLAT (RFC 6877), two translators in a chain, IPv6 between them\n\
                 CLAT: TAYGA in namespace {CLAT_NS}, map {CLAT_MAP_IPV4} <-> {CLAT_MAP_IPV6}, PLAT-side prefix {NAT64_PREFIX}\n\
                 PLAT: TAYGA (prefix {NAT64_PREFIX}, dynamic pool {NAT64_POOL}) plus nftables masquerade in namespace {DUT_NS}\n\
                 stateful: the right side sees {}; reverse traffic needs the Responder",
                addr(DUT_RIGHT_IPV4)
            )
        },
    });

    pub const DSLITE: Topology = Topology(&Declaration {
        name: "dslite",
        summary: "Dual-Stack Lite (RFC 6333): an AFTR (softwires from the B4s, NAT44 per B4); the tester's left side is a B4",
        dut: Dut::Aftr,
        clat: false,
        ip_versions: (4, 4),
        forwarding: (true, false),
        preliminary_rate: Some(STATEFUL_PRELIMINARY_RATE),
        left_ipv4_virt: None,
        right_ipv6_virt: None,
        describe: || {
            format!(
                "DUT: Dual-Stack Lite AFTR (RFC 6333) in namespace {DUT_NS}: IPv4-in-IPv6 to {DSLITE_AFTR} from the B4s in {DSLITE_B4_PREFIX}\n\
                 decapsulated, NAT44 per B4 (nftables masquerade, a conntrack zone per B4), encapsulated back\n\
                 stateful: the right side sees {}; reverse traffic needs the Responder",
                addr(DUT_RIGHT_IPV4)
            )
        },
    });

    pub const LW4O6: Topology = Topology(&Declaration {
        name: "lw4o6",
        summary: "lightweight 4over6 (RFC 7596): a stateless lwAFTR with a binding table of address and port set; the tester's left side is an lwB4",
        dut: Dut::Lwaftr,
        clat: false,
        ip_versions: (4, 4),
        forwarding: (true, false),
        preliminary_rate: None,
        left_ipv4_virt: None,
        right_ipv6_virt: None,
        describe: || {
            format!(
                "DUT: lightweight 4over6 lwAFTR (RFC 7596) in namespace {DUT_NS}: IPv4-in-IPv6 to {DSLITE_AFTR}, stateless\n\
                 a binding table of {LW4O6_BINDINGS} lwB4s (IPv4 address + port set of 1,024 ports, PSID offset 0)\n\
                 the tester is lwB4 {TESTER_LEFT_IPV6}: {TESTER_LEFT_IPV4} ports {}-{}; a frame outside its binding is dropped",
                LW4O6_PORTS.0, LW4O6_PORTS.1
            )
        },
    });

    pub const MAPE: Topology = Topology(&Declaration {
        name: "mape",
        summary: "MAP-E (RFC 7597): a stateless border relay that checks and builds every softwire by the mapping rule; the tester's left side is a MAP CE",
        dut: Dut::MapE,
        clat: false,
        ip_versions: (4, 4),
        forwarding: (true, false),
        preliminary_rate: None,
        left_ipv4_virt: None,
        right_ipv6_virt: None,
        describe: || {
            let ce = map_tester_ce().map(|a| a.to_string()).unwrap_or_default();
            format!(
                "DUT: MAP-E border relay (RFC 7597) in namespace {DUT_NS}: IPv4-in-IPv6 to {DSLITE_AFTR}, stateless, no table\n\
                 Basic Mapping Rule {{{MAP_RULE_IPV6}, {MAP_RULE_IPV4}, EA bits {MAP_EA_BITS}}}, PSID offset {MAP_PSID_OFFSET}: 16 CEs per IPv4 address\n\
                 the tester is CE {ce}: {TESTER_LEFT_IPV4} PSID {MAP_TESTER_PSID} (its set: 63 ranges of 64 ports, the first {}-{}), and with\n\
                 left.map.subscribers = N the N CEs from it on; a frame the rule does not give its source is dropped",
                MAP_PORTS.0, MAP_PORTS.1
            )
        },
    });

    pub const MAPT: Topology = Topology(&Declaration {
        name: "mapt",
        summary: "MAP-T (RFC 7599): a stateless border relay that translates IPv6 <-> IPv4 by the mapping rule; the tester's left side is a MAP-T CE",
        dut: Dut::MapT,
        clat: false,
        ip_versions: (6, 4),
        // IPv4 only: the BR's tc programs translate IPv6 before routing and after it.
        forwarding: (true, false),
        preliminary_rate: None,
        left_ipv4_virt: Some(TESTER_LEFT_IPV4),
        right_ipv6_virt: Some(RIGHT_IPV6_VIRT),
        describe: || {
            let ce = map_tester_ce().map(|a| a.to_string()).unwrap_or_default();
            format!(
                "DUT: MAP-T border relay (RFC 7599) in namespace {DUT_NS}: IPv6 <-> IPv4, stateless, no table\n\
                 Basic Mapping Rule {{{MAP_RULE_IPV6}, {MAP_RULE_IPV4}, EA bits {MAP_EA_BITS}}}, PSID offset {MAP_PSID_OFFSET}; Default Mapping Rule {MAPT_DMR}\n\
                 the tester is CE {ce}: {TESTER_LEFT_IPV4} PSID {MAP_TESTER_PSID} (its set: 63 ranges of 64 ports, the first {}-{}), and with\n\
                 left.map.subscribers = N the N CEs from it on; a frame the rule does not give its source is dropped",
                MAP_PORTS.0, MAP_PORTS.1
            )
        },
    });

    pub const DPDK_FWD: Topology = Topology(&Declaration {
        name: "dpdk-fwd",
        summary: "DPDK's dpdk-testpmd forwarding IPv4 (MAC mode) between two vhost-user ports, polling its own CPU: the tester on DPDK at millions of frames/s",
        dut: Dut::Testpmd,
        clat: false,
        ip_versions: (4, 4),
        // No kernel forwards: testpmd forwards whatever frame arrives.
        forwarding: (false, false),
        preliminary_rate: None,
        left_ipv4_virt: None,
        right_ipv6_virt: None,
        describe: || {
            format!(
                "DUT: dpdk-testpmd (DPDK) forwarding in MAC mode between vhost-user ports {} (left, MAC {}) and {} (right, MAC {}),\n\
                 on hugepages, polling its CPU (its load is 100 % whatever it forwards); its log: {}",
                LEFT_SOCKET, DUT_LEFT_MAC, RIGHT_SOCKET, DUT_RIGHT_MAC, TESTPMD_LOG
            )
        },
    });

    /// All topologies, in the order they are documented.
    pub const ALL: [Topology; 12] = [
        Topology::ROUTER4,
        Topology::ROUTER6,
        Topology::SIIT,
        Topology::NAT44,
        Topology::NAT64,
        Topology::NAT66,
        Topology::XLAT464,
        Topology::DSLITE,
        Topology::LW4O6,
        Topology::MAPE,
        Topology::MAPT,
        Topology::DPDK_FWD,
    ];

    /// Its declaration.
    pub fn declaration(self) -> &'static Declaration {
        self.0
    }

    /// The name used on the command line and in file names.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// The topology of that name (exactly; `FromStr` also ignores case and names the ones
    /// not built yet).
    pub fn named(name: &str) -> Option<Topology> {
        Topology::ALL.into_iter().find(|t| t.name() == name)
    }
}

impl PartialEq for Topology {
    fn eq(&self, other: &Topology) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for Topology {}

impl std::hash::Hash for Topology {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.name.hash(state);
    }
}

impl std::fmt::Debug for Topology {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

impl Serialize for Topology {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.name)
    }
}

impl<'de> Deserialize<'de> for Topology {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Topology, D::Error> {
        let name = String::deserialize(d)?;
        Topology::named(&name).ok_or_else(|| serde::de::Error::custom(format!("unknown topology {name:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a new declaration must keep consistent, checked for every one.
    #[test]
    fn every_declaration_holds_together() {
        let mut names = std::collections::BTreeSet::new();
        for t in Topology::ALL {
            let d = t.declaration();
            assert!(names.insert(d.name), "{}: two topologies of one name", d.name);
            assert_eq!(Topology::named(d.name), Some(t));
            // Stateful exactly when the DUT keeps connections: its test needs phase 1.
            assert_eq!(d.preliminary_rate.is_some(), d.dut.nat_family().is_some(), "{}", d.name);
            // A B4 tunnels IPv4; a CLAT takes IPv4 from the tester.
            if d.dut.softwire() || d.clat {
                assert_eq!(d.ip_versions.0, 4, "{}", d.name);
            }
            // What the DUT namespace forwards covers the tester's sides (a translator both).
            let (v4, v6) = d.forwarding;
            // (mapt's IPv6 is translated before and after routing.)
            for v in [d.ip_versions.0, d.ip_versions.1] {
                let routed = d.dut.dpdk() || if v == 4 { v4 || d.clat } else { v6 || d.dut == Dut::MapT };
                assert!(routed, "{}: IPv{v} not forwarded", d.name);
            }
            // Addresses across a translator only where one translates.
            let translator = d.dut.tayga() || d.dut == Dut::MapT;
            assert!(
                d.left_ipv4_virt.is_none() || d.dut == Dut::TaygaStatic || d.dut == Dut::MapT,
                "{}",
                d.name
            );
            assert!(d.right_ipv6_virt.is_none() || translator, "{}", d.name);
            assert!((d.describe)().starts_with("DUT: "), "{}", d.name);
        }
        assert_eq!(serde_json::to_string(&Topology::LW4O6).unwrap(), "\"lw4o6\"");
        assert_eq!(serde_json::from_str::<Topology>("\"nat64\"").unwrap(), Topology::NAT64);
        assert!(
            serde_json::from_str::<Topology>("\"map-t\"").is_err(),
            "an alias is for the command line"
        );
    }
}
