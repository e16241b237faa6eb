//! The lab's fixed names and addresses: namespaces, links, every address and prefix of every
//! topology, and the parameters of its stateful tests. Only the benchmarking ranges
//! (198.18.0.0/15, 2001:2::/48).

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
/// nftables table (ip6) in every TAYGA namespace that repairs its zero UDP checksums (duts/tayga.rs).
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
/// lw4o6: bindings in the lwAFTR's table (duts/lwaftr.rs's `binding`); the tester is binding 0.
pub const LW4O6_BINDINGS: u32 = 10_000;
/// lw4o6: PSID length (RFC 7597, offset 0): 64 port sets of 1,024 ports per IPv4 address.
pub const LW4O6_PSID_BITS: u16 = 6;
/// lw4o6: the tester's port set (PSID 1): its forward source ports and reverse destination
/// ports, pseudorandom (RFC 4814) inside it.
pub const LW4O6_PORTS: (u16, u16) = (1024, 2047);
/// lw4o6: the tester's binding's PSID (binding 0: 198.18.0.2, ports [`LW4O6_PORTS`]).
pub const LW4O6_TESTER_PSID: u16 = 1;
/// lw4o6: the IPv4 block of the binding table's addresses (routed back into the softwires).
pub const LW4O6_IPV4: &str = "198.18.0.0/16";
/// lw4o6: the binding table's order as a mapping rule's (RFC 7597 section 5: the PSIDs of one
/// address, then the next address; [`LW4O6_PSID_BITS`] bits at offset 0) from the tester's
/// binding (198.18.0.2, PSID 1) on, each lwB4 the next address after 2001:2::2. The rule's
/// IPv6 prefix is none (::/0): an lwB4's address is the table's, not the rule's. The tester's
/// `left.map` (with `binding_psid`) reads the same table.
pub fn lw4o6_rule() -> Option<xlat_traffic::maprule::MapRule> {
    let (a, len) = LW4O6_IPV4.split_once('/')?;
    let psid = LW4O6_PSID_BITS as u8;
    xlat_traffic::maprule::MapRule::new(
        (std::net::Ipv6Addr::UNSPECIFIED, 0),
        (a.parse().ok()?, len.parse().ok()?),
        32 - len.parse::<u8>().ok()? + psid,
        0,
    )
    .ok()
}
/// mape and mapt: the Basic Mapping Rule (RFC 7597, RFC 7599): rule IPv6 prefix, rule IPv4
/// prefix, EA-bits length and PSID offset. The 14 EA bits are the 10-bit IPv4 suffix of the /22 and a 4-bit PSID: 16
/// CEs share each address, 16,384 CEs in all, each with 63 port ranges of 64 ports (offset 6:
/// ports 0-1023 are in no set); a CE's end-user prefix is a /64 in the /50.
pub const MAP_RULE_IPV6: &str = "2001:2:0:c000::/50";
pub const MAP_RULE_IPV4: &str = "198.18.0.0/22";
pub const MAP_EA_BITS: u8 = 14;
pub const MAP_PSID_OFFSET: u8 = 6;
/// mape and mapt: the tester's CE is the tester's left IPv4 address with this PSID.
pub const MAP_TESTER_PSID: u16 = 1;
/// mape and mapt: the first range of the tester's port set (1 << 10 | 1 << 6, 64 ports of the
/// set's 4,032; its frames use the whole set, `left.map`).
pub const MAP_PORTS: (u16, u16) = (1088, 1151);
/// mape's and mapt's Basic Mapping Rule ([`MAP_RULE_IPV6`], [`MAP_RULE_IPV4`], [`MAP_EA_BITS`],
/// [`MAP_PSID_OFFSET`]); `None` only if those constants were wrong (a test checks them).
pub fn map_rule() -> Option<xlat_traffic::maprule::MapRule> {
    fn prefix<T: std::str::FromStr>(s: &str) -> Option<(T, u8)> {
        let (a, len) = s.split_once('/')?;
        Some((a.parse().ok()?, len.parse().ok()?))
    }
    xlat_traffic::maprule::MapRule::new(prefix(MAP_RULE_IPV6)?, prefix(MAP_RULE_IPV4)?, MAP_EA_BITS, MAP_PSID_OFFSET).ok()
}

/// mape and mapt: the tester's CE address (mape: its softwire's end; mapt: the source of its
/// translated packets): what the rule gives the tester's left IPv4 address with PSID
/// [`MAP_TESTER_PSID`].
pub fn map_tester_ce() -> Option<std::net::Ipv6Addr> {
    let ipv4 = TESTER_LEFT_IPV4.parse().ok()?;
    map_rule()?.ce_address(xlat_traffic::maprule::Ce {
        ipv4,
        psid: MAP_TESTER_PSID,
    })
}

/// mapt: the Default Mapping Rule's prefix (RFC 7599 section 5.1), where the BR's IPv4 side
/// is reached from the CEs: the lab's NAT64 prefix, a /96 (RFC 6052), outside the rule's /50.
pub const MAPT_DMR: &str = NAT64_PREFIX;

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
/// The IPv6 address the right tester (198.19.0.2) is reached at from the left, for siit, nat64
/// and mapt (through [`MAPT_DMR`]).
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

/// The stateful topologies: the connection tracking table and hash size the lab makes room for
/// (host-wide; `up` raises them if lower and `down` restores them): 2^21, above 2,000,000
/// connections.
pub const CONNTRACK_MAX: u64 = 1 << 21;
pub const CONNTRACK_BUCKETS: u64 = 1 << 21;
/// The stateful topologies: the DUT's UDP connection tracking timeouts, seconds (unreplied and
/// "stream"), far above phase 1 + the delay to phase 2 + phase 2 + the timeout of the lab's
/// stateful configuration ([`STATEFUL_PHASE_DELAY_MS`] + 60 s + 2 s).
pub const CONNTRACK_UDP_TIMEOUT_S: u64 = 600;

/// The stateful topologies: the Initiator's (forward) source ports, pseudorandom in phase 2 and
/// enumerated in phase 1.
pub const STATEFUL_SPORT: (u16, u16) = (10_000, 10_999);
/// The stateful topologies: the Initiator's (forward) destination ports.
pub const STATEFUL_DPORT: (u16, u16) = (1, 1000);
/// N = M: phase 1 enumerates every (source port, destination port) combination once, 1000 x
/// 1000, so that every entry the DUT makes is a distinct connection and phase 2's pseudorandom
/// ports meet only existing entries.
pub const STATEFUL_CONNECTIONS: u64 = 1_000_000;
/// R: the phase 1 rate, frames/s; safely below what the lab's NAT DUTs forward on a 2-core
/// machine (BENCHMARKS.md: nat64 168,750 frames/s forward, without connection set-up).
pub const STATEFUL_PRELIMINARY_RATE: u64 = 50_000;
/// R for nat64: TAYGA, on the DUT's one CPU, creates its dynamic-pool mappings slower than
/// nftables creates conntrack entries; phase 1 of 100,000 connections at 50,000/s filled only
/// 86-97 % of them, at 40,000/s and 30,000/s every one (2 trials each, `xlatperf trial -c
/// /run/xlatperf/lab-nat64.toml --preliminary-frames 100000 --preliminary-rate R`).
pub const NAT64_PRELIMINARY_RATE: u64 = 30_000;
/// R for xlat464: its two TAYGAs share one core and forward about 30,000 frames/s
/// (BENCHMARKS.md, "IPv4aaS").
pub const XLAT464_PRELIMINARY_RATE: u64 = 20_000;
/// T: how long the Responder keeps receiving after phase 1 sending ended, ms.
pub const STATEFUL_PRELIMINARY_TIMEOUT_MS: u64 = 2000;
/// D = ceil(1000 N / R) + 2 T ms (siitperf's scripts, rounded up): phase 2 starts when phase 1
/// has surely ended.
pub const STATEFUL_PHASE_DELAY_MS: u64 =
    (1000 * STATEFUL_CONNECTIONS).div_ceil(STATEFUL_PRELIMINARY_RATE) + 2 * STATEFUL_PRELIMINARY_TIMEOUT_MS;
/// The DUT command before every trial: empty the connection table.
pub const STATEFUL_BEFORE_TRIAL: &str = "ip netns exec xlat-dut conntrack -F";
/// The stateful DUTs' connection count (`[dut] count`).
pub const STATEFUL_COUNT: &str = "ip netns exec xlat-dut conntrack -C";

/// The lab's bound of the tester's lag behind its schedule, in frames (`tester.max_send_lag_frames`):
/// a trial whose sender fell further behind is invalid. A stall of the tester's is caught up by
/// a burst of that many frames per direction; the kernel DUT queues frames arriving for its CPU
/// in one backlog of `net.core.netdev_max_backlog` (1,000 by default) for both directions, so
/// 250 per direction keep the burst within half of it and any loss the DUT's own (docs/lab.md).
pub const LAB_MAX_SEND_LAG_FRAMES: u64 = 250;

/// dpdk-fwd's DUT (duts/testpmd.rs): its output (EAL's messages, the port statistics every
/// `STATS_PERIOD_S` seconds).
pub const TESTPMD_LOG: &str = "/run/xlatperf/testpmd.log";
/// dpdk-fwd: the vhost-user sockets of the left and right ports (testpmd listens, the tester
/// connects).
pub const LEFT_SOCKET: &str = "/run/xlatperf/xlat-vl.sock";
pub const RIGHT_SOCKET: &str = "/run/xlatperf/xlat-vr.sock";
/// dpdk-fwd: the DUT's MACs: net_vhost gives port k the MAC 56:48:4f:53:54:0k ("VHOST", k),
/// and testpmd has the left port first.
pub const DUT_LEFT_MAC: &str = "56:48:4f:53:54:00";
pub const DUT_RIGHT_MAC: &str = "56:48:4f:53:54:01";

/// How long the lab's reset command (`[dut] reset`, RFC 6201) keeps the DUT from forwarding,
/// seconds: the reset time `xlatperf reset` must find.
pub const RESET_S: f64 = 0.5;

/// An address constant of this file (prefix length allowed) as an IPv6 address.
pub(crate) fn v6(a: &str) -> Option<std::net::Ipv6Addr> {
    addr(a).parse().ok()
}

/// Strip the prefix length: "198.18.0.1/24" -> "198.18.0.1".
pub(crate) fn addr(with_len: &str) -> &str {
    with_len.split('/').next().unwrap_or(with_len)
}
