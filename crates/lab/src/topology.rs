//! The topologies, their fixed names and addresses, and the test configuration each one gets.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::LabError;

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
/// TAYGA's TUN device in the DUT namespace (siit, nat64).
pub const TAYGA_TUN: &str = "xlat-nat64";
/// Every link name the lab may create; `down` looks for exactly these.
pub const LINK_NAMES: [&str; 5] = [LEFT_PORT, RIGHT_PORT, DUT_LEFT, DUT_RIGHT, TAYGA_TUN];
/// Every namespace the lab may create.
pub const NAMESPACES: [&str; 2] = [TESTER_NS, DUT_NS];

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
/// nat64: TAYGA's dynamic pool; nftables masquerades it to 198.19.0.1 on the right.
pub const NAT64_POOL: &str = "198.18.128.0/18";

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
}

impl Topology {
    /// All topologies, in the order they are documented.
    pub const ALL: [Topology; 5] = [
        Topology::Router4,
        Topology::Router6,
        Topology::Siit,
        Topology::Nat44,
        Topology::Nat64,
    ];

    /// The name used on the command line and in file names.
    pub fn name(self) -> &'static str {
        match self {
            Topology::Router4 => "router4",
            Topology::Router6 => "router6",
            Topology::Siit => "siit",
            Topology::Nat44 => "nat44",
            Topology::Nat64 => "nat64",
        }
    }

    /// Does the DUT run TAYGA?
    pub fn uses_tayga(self) -> bool {
        matches!(self, Topology::Siit | Topology::Nat64)
    }

    /// Does the DUT run nftables NAT (stateful)?
    pub fn uses_nat(self) -> bool {
        matches!(self, Topology::Nat44 | Topology::Nat64)
    }

    /// (IPv4 forwarding, IPv6 forwarding) in the DUT namespace.
    pub fn forwarding(self) -> (bool, bool) {
        match self {
            Topology::Router4 | Topology::Nat44 => (true, false),
            Topology::Router6 => (false, true),
            Topology::Siit | Topology::Nat64 => (true, true),
        }
    }

    /// IP version of the (left, right) tester side.
    pub fn ip_versions(self) -> (u8, u8) {
        match self {
            Topology::Router4 | Topology::Nat44 => (4, 4),
            Topology::Router6 => (6, 6),
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
        Topology::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| LabError::UnknownTopology(s.to_string()))
    }
}

/// Where the tester's workers and a user-space DUT (TAYGA) run, so that they do not preempt
/// each other: with 3 or more CPUs the DUT gets the last one and the tester keeps its default
/// (a core per port); with 2, the tester's four roles share CPU 0 in one worker thread and the
/// DUT gets CPU 1; with 1 there is nothing to split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuSplit {
    /// The one core of every tester role, or `None` for the tester's default.
    pub tester: Option<usize>,
    pub dut: usize,
}

impl CpuSplit {
    /// The split for a machine with `cpus` CPUs (numbered 0..cpus).
    pub fn for_cpus(cpus: usize) -> Option<CpuSplit> {
        match cpus {
            0 | 1 => None,
            2 => Some(CpuSplit { tester: Some(0), dut: 1 }),
            n => Some(CpuSplit { tester: None, dut: n - 1 }),
        }
    }

    /// The split for this machine, for a topology whose DUT runs in user space.
    pub fn here(t: Topology) -> Option<CpuSplit> {
        if !t.uses_tayga() {
            return None;
        }
        CpuSplit::for_cpus(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }
}

/// Strip the prefix length: "198.18.0.1/24" -> "198.18.0.1".
fn addr(with_len: &str) -> &str {
    with_len.split('/').next().unwrap_or(with_len)
}

/// The xlatperf TOML test configuration for a topology.
pub fn config_toml(t: Topology) -> String {
    let (lv, rv) = t.ip_versions();
    let mut s = format!("# written by `xlatperf lab up {t}`\n");
    match t {
        Topology::Router4 => s.push_str("# DUT: the Linux kernel forwarding IPv4 in namespace xlat-dut\n"),
        Topology::Router6 => s.push_str("# DUT: the Linux kernel forwarding IPv6 in namespace xlat-dut\n"),
        Topology::Siit => {
            s.push_str("# DUT: TAYGA stateless NAT64 in namespace xlat-dut, prefix ");
            s.push_str(NAT64_PREFIX);
            s.push_str("\n# static map ");
            s.push_str(SIIT_MAP_IPV6);
            s.push_str(" <-> ");
            s.push_str(SIIT_MAP_IPV4);
            s.push_str(" (2001:2::2 appears as 198.18.1.2 on the right)\n");
        }
        Topology::Nat44 => s.push_str(
            "# DUT: nftables masquerade (conntrack) from left to right in namespace xlat-dut\n\
             # stateful: the right side sees 198.19.0.1; reverse traffic needs the Responder\n",
        ),
        Topology::Nat64 => {
            s.push_str("# DUT: TAYGA (prefix ");
            s.push_str(NAT64_PREFIX);
            s.push_str(", dynamic pool ");
            s.push_str(NAT64_POOL);
            s.push_str(") plus nftables masquerade\n# stateful: the right side sees 198.19.0.1; reverse traffic needs the Responder\n");
        }
    }
    s.push_str(&format!(
        "[tester]\nbackend = \"afpacket\"\nleft_port = \"{LEFT_PORT}\"\nright_port = \"{RIGHT_PORT}\"\nnetns = \"{TESTER_NS}\"\n"
    ));
    if let Some(CpuSplit { tester: Some(c), dut }) = CpuSplit::here(t) {
        s.push_str(&format!(
            "# TAYGA runs on CPU {dut}; the tester's senders and receivers share CPU {c} in one thread\n\
             cpus = {{ left_send = {c}, left_recv = {c}, right_send = {c}, right_recv = {c} }}\n"
        ));
    }
    s.push('\n');
    s.push_str(&format!(
        "[left]\nip_version = {lv}\nipv4_real = \"{TESTER_LEFT_IPV4}\"\nipv6_real = \"{TESTER_LEFT_IPV6}\"\n"
    ));
    if t == Topology::Siit {
        s.push_str(&format!("ipv4_virt = \"{SIIT_LEFT_IPV4_VIRT}\"\n"));
    }
    s.push_str(&format!(
        "dut_ipv4 = \"{}\"\ndut_ipv6 = \"{}\"\n\n",
        addr(DUT_LEFT_IPV4),
        addr(DUT_LEFT_IPV6)
    ));
    s.push_str(&format!(
        "[right]\nip_version = {rv}\nipv4_real = \"{TESTER_RIGHT_IPV4}\"\nipv6_real = \"{TESTER_RIGHT_IPV6}\"\n"
    ));
    if t.uses_tayga() {
        s.push_str(&format!("ipv6_virt = \"{RIGHT_IPV6_VIRT}\"\n"));
    }
    s.push_str(&format!(
        "dut_ipv4 = \"{}\"\ndut_ipv6 = \"{}\"\n\n",
        addr(DUT_RIGHT_IPV4),
        addr(DUT_RIGHT_IPV6)
    ));
    let reverse = !t.uses_nat();
    s.push_str(&format!(
        "[traffic]\nforward = true\nreverse = {reverse}\nforeground = {{ n = 2, m = 2 }}\n\n"
    ));
    s.push_str("[trial]\nframe_size = 84\nduration = 60\ntimeout_ms = 2000\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_space_dut_gets_a_cpu_of_its_own() {
        assert_eq!(CpuSplit::for_cpus(1), None);
        assert_eq!(CpuSplit::for_cpus(2), Some(CpuSplit { tester: Some(0), dut: 1 }));
        assert_eq!(CpuSplit::for_cpus(8), Some(CpuSplit { tester: None, dut: 7 }));
        assert_eq!(CpuSplit::here(Topology::Router4), None);
        let on_two = std::thread::available_parallelism().map_or(1, |n| n.get()) == 2;
        assert_eq!(config_toml(Topology::Siit).contains("right_recv = 0 }"), on_two);
        assert!(!config_toml(Topology::Router4).contains("cpus"));
    }
    use std::net::Ipv6Addr;

    #[test]
    fn names_round_trip() {
        for t in Topology::ALL {
            assert_eq!(t.to_string().parse::<Topology>().unwrap(), t);
            assert_eq!(serde_json::to_string(&t).unwrap(), format!("\"{t}\""));
        }
        assert_eq!(" Router4 ".parse::<Topology>().unwrap(), Topology::Router4);
        assert!(matches!("router5".parse::<Topology>(), Err(LabError::UnknownTopology(_))));
        assert!("".parse::<Topology>().is_err());
    }

    #[test]
    fn router4_config_matches_the_schema() {
        let expected = r#"# written by `xlatperf lab up router4`
# DUT: the Linux kernel forwarding IPv4 in namespace xlat-dut
[tester]
backend = "afpacket"
left_port = "xlat-tl"
right_port = "xlat-tr"
netns = "xlat-tester"

[left]
ip_version = 4
ipv4_real = "198.18.0.2"
ipv6_real = "2001:2::2"
dut_ipv4 = "198.18.0.1"
dut_ipv6 = "2001:2::1"

[right]
ip_version = 4
ipv4_real = "198.19.0.2"
ipv6_real = "2001:2:0:8000::2"
dut_ipv4 = "198.19.0.1"
dut_ipv6 = "2001:2:0:8000::1"

[traffic]
forward = true
reverse = true
foreground = { n = 2, m = 2 }

[trial]
frame_size = 84
duration = 60
timeout_ms = 2000
"#;
        assert_eq!(config_toml(Topology::Router4), expected);
    }

    #[test]
    fn versions_and_virtual_addresses() {
        let r6 = config_toml(Topology::Router6);
        assert_eq!(r6.matches("ip_version = 6").count(), 2);
        let siit = config_toml(Topology::Siit);
        assert!(siit.contains("[left]\nip_version = 6\n"));
        assert!(siit.contains("[right]\nip_version = 4\n"));
        assert!(siit.contains("ipv4_virt = \"198.18.1.2\""));
        assert!(siit.contains("ipv6_virt = \"2001:2:0:6464::198.19.0.2\""));
        assert!(config_toml(Topology::Nat44).contains("reverse = false"));
    }

    #[test]
    fn addresses_parse_and_stay_in_benchmarking_ranges() {
        let v6: Ipv6Addr = RIGHT_IPV6_VIRT.parse().unwrap();
        assert_eq!(v6.segments()[..6], [0x2001, 2, 0, 0x6464, 0, 0]);
        assert_eq!(v6.segments()[6..], [0xc613, 0x0002]);
        for a in [
            TESTER_LEFT_IPV4,
            TESTER_RIGHT_IPV4,
            SIIT_LEFT_IPV4_VIRT,
            TAYGA_IPV4,
            addr(DUT_LEFT_IPV4),
            addr(DUT_RIGHT_IPV4),
        ] {
            let o = a.parse::<std::net::Ipv4Addr>().unwrap().octets();
            assert!(o[0] == 198 && (o[1] == 18 || o[1] == 19), "{a}");
        }
        for a in [
            TESTER_LEFT_IPV6,
            TESTER_RIGHT_IPV6,
            addr(DUT_LEFT_IPV6),
            addr(DUT_RIGHT_IPV6),
            addr(NAT64_PREFIX),
        ] {
            let s = a.parse::<Ipv6Addr>().unwrap().segments();
            assert_eq!(s[..3], [0x2001, 2, 0], "{a}");
        }
    }
}
