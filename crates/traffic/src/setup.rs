//! The typed test setup. The config crate reads files into it; it holds only valid values once
//! the config crate's validation (`xlat_config::validate`) has passed.

use crate::maprule::MapRule;
use crate::vary::{AddrSet, BitRange, Variation};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use xlat_wire::MacAddr;

/// IP version of one side's foreground traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum IpVersion {
    V4,
    V6,
}

impl IpVersion {
    pub fn number(self) -> u8 {
        match self {
            IpVersion::V4 => 4,
            IpVersion::V6 => 6,
        }
    }
}

/// Left to right (forward) or right to left (reverse).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Forward,
    Reverse,
}

impl Direction {
    pub const BOTH: [Direction; 2] = [Direction::Forward, Direction::Reverse];

    /// The side whose tester port sends this direction.
    pub fn sender(self) -> SideId {
        match self {
            Direction::Forward => SideId::Left,
            Direction::Reverse => SideId::Right,
        }
    }

    pub fn receiver(self) -> SideId {
        self.sender().other()
    }

    /// The other direction.
    pub fn opposite(self) -> Direction {
        match self {
            Direction::Forward => Direction::Reverse,
            Direction::Reverse => Direction::Forward,
        }
    }

    /// `Forward` or `Reverse`, as siitperf prints it.
    pub fn title(self) -> &'static str {
        match self {
            Direction::Forward => "Forward",
            Direction::Reverse => "Reverse",
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Forward => "forward",
            Direction::Reverse => "reverse",
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SideId {
    Left,
    Right,
}

impl SideId {
    pub fn other(self) -> SideId {
        match self {
            SideId::Left => SideId::Right,
            SideId::Right => SideId::Left,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SideId::Left => "left",
            SideId::Right => "right",
        }
    }
}

/// Octet of the destination network byte (`Num-{L,R}-Nets`): IPv4 bits 16-23, IPv6 bits 56-63.
pub const NET_OCTET_V4: u8 = 2;
/// See [`NET_OCTET_V4`].
pub const NET_OCTET_V6: u8 = 7;

/// RFC 2544 appendix C.2.6.4's fixed UDP ports.
pub const RFC2544_SPORT: u16 = 0xC020;
pub const RFC2544_DPORT: u16 = 0x0007;
/// RFC 4814 section 4.5's ranges for pseudorandom ports.
pub const RFC4814_SPORT: (u16, u16) = (1024, 65535);
pub const RFC4814_DPORT: (u16, u16) = (1, 49151);

/// One UDP port field: how it varies and within which inclusive range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortField {
    pub variation: Variation,
    pub min: u16,
    pub max: u16,
}

/// The ports of one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortSpec {
    pub sport: PortField,
    pub dport: PortField,
}

impl Default for PortSpec {
    fn default() -> Self {
        PortSpec {
            sport: PortField {
                variation: Variation::Fixed,
                min: RFC4814_SPORT.0,
                max: RFC4814_SPORT.1,
            },
            dport: PortField {
                variation: Variation::Fixed,
                min: RFC4814_DPORT.0,
                max: RFC4814_DPORT.1,
            },
        }
    }
}

/// The 16-bit varying part of one side's addresses (IP-{L,R}-var/min/max and the IPv4/IPv6
/// offsets of G. Lencse, "Making stateless and stateful network performance measurements
/// unbiased", 2024).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IpVarSpec {
    pub variation: Variation,
    pub min: u16,
    pub max: u16,
    /// Byte offset of the varying 16 bits in an IPv4 address: only 2 (the last 16 bits).
    pub ipv4_offset: u8,
    /// Byte offset in an IPv6 address: 6-14, even.
    pub ipv6_offset: u8,
}

impl Default for IpVarSpec {
    fn default() -> Self {
        IpVarSpec {
            variation: Variation::Fixed,
            min: 0,
            max: 0xffff,
            ipv4_offset: 2,
            ipv6_offset: 14,
        }
    }
}

/// IPv4 in IPv6 (RFC 2473) on a side: the side is a DS-Lite B4 (or a lw4o6 or MAP-E CE). Its
/// frames carry its IPv4 test packets behind an outer IPv6 header from `local` to `remote`,
/// and frames coming to it arrive the same way (from `remote` to `local`, which the receiver
/// takes as the IPv4 frames they carry). The side's `ip_var` then varies `local` (many B4s,
/// each with the same inner addresses), not the inner source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideTunnel {
    /// The B4's (first) address: the outer source of this side's frames.
    pub local: Ipv6Addr,
    /// The AFTR's address: their outer destination (and the DUT's address to resolve its MAC
    /// by NDP on this side).
    pub remote: Ipv6Addr,
}

/// A side of many subscribers, each the CE of a mapping rule (RFC 7597's MAP-E, RFC 7599's
/// MAP-T): an IPv4 address (shared by 2^PSID-length CEs) and a port set, and the IPv6 address
/// the rule gives them. Subscriber 0 is the side's own CE (the CE address of its tunnel's
/// local end, or of its IPv6 address), subscriber k the k-th CE after it in the rule's order
/// ([`MapRule::ce`], wrapping around). A foreground frame from the side comes from a
/// pseudorandom subscriber (RFC 4814) at a pseudorandom port of its set: its IPv4 source (of a
/// tunnel side), its IPv6 source (the tunnel's outer one, or the frame's own) and its source
/// port follow; a frame to the side goes to one: its IPv4 destination and destination port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideMap {
    pub rule: MapRule,
    /// How many CEs (1 to the rule's CEs, at most [`MAX_SUBSCRIBERS`]).
    pub subscribers: u32,
    /// Ports of each set the frames use, from its first (`None`: the whole set).
    pub ports: Option<u32>,
    /// lw4o6 (RFC 7596): the side's own PSID. Subscriber 0 is then the side's `ipv4_real` with
    /// this PSID, and subscriber k's IPv6 address is its `tunnel.local` + k (a binding table's
    /// lwB4s, counted up) instead of the rule's CE address; the rule gives the addresses and
    /// port sets only.
    #[serde(default)]
    pub binding_psid: Option<u16>,
}

/// The most subscribers a side may have (a frame's subscriber is a 16-bit field).
pub const MAX_SUBSCRIBERS: u32 = 1 << 16;

/// One side of the tester (a port cabled to the DUT).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Side {
    pub ip_version: IpVersion,
    pub ipv4_real: Option<Ipv4Addr>,
    pub ipv4_virt: Option<Ipv4Addr>,
    pub ipv6_real: Option<Ipv6Addr>,
    pub ipv6_virt: Option<Ipv6Addr>,
    /// Ethernet source of this side's frames; `None`: the port's own MAC.
    pub tester_mac: Option<MacAddr>,
    /// Ethernet destination of this side's frames; `None`: resolved by ARP/NDP from `dut_ipv4`
    /// or `dut_ipv6` before the trial.
    pub dut_mac: Option<MacAddr>,
    /// The DUT's address on this side, to resolve its MAC (xlatperf only, not in siitperf.conf).
    pub dut_ipv4: Option<Ipv4Addr>,
    pub dut_ipv6: Option<Ipv6Addr>,
    /// Number of destination networks of frames sent *to* this side (Num-L-Nets for the left).
    pub num_nets: u16,
    pub ip_var: IpVarSpec,
    /// IPv4 in IPv6 on this side (`None`: native frames).
    #[serde(default)]
    pub tunnel: Option<SideTunnel>,
    /// Many MAP CEs on this side (`None`: the side's own addresses only).
    #[serde(default)]
    pub map: Option<SideMap>,
}

impl Side {
    pub fn new(ip_version: IpVersion) -> Side {
        Side {
            ip_version,
            ipv4_real: None,
            ipv4_virt: None,
            ipv6_real: None,
            ipv6_virt: None,
            tester_mac: None,
            dut_mac: None,
            dut_ipv4: None,
            dut_ipv6: None,
            num_nets: 1,
            ip_var: IpVarSpec::default(),
            tunnel: None,
            map: None,
        }
    }
}

/// Stateful testing (RFC 9693): where the Initiator is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stateful {
    #[default]
    Off,
    InitiatorLeft,
    InitiatorRight,
}

/// Stateful options (Appendix A1.2 of the same paper); carried and validated now, used by a
/// later engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StatefulSpec {
    pub mode: Stateful,
    pub enumerate_ports: Variation,
    pub enumerate_ips: Variation,
    pub responder_tuples: Variation,
}

/// The whole test setup: what frames each direction carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setup {
    pub left: Side,
    pub right: Side,
    pub forward: bool,
    pub reverse: bool,
    pub forward_ports: PortSpec,
    pub reverse_ports: PortSpec,
    /// Foreground share: frame i is foreground when `i % n < m`.
    pub fg_n: u32,
    pub fg_m: u32,
    pub stateful: StatefulSpec,
    /// Seed of the pseudorandom streams; `None`: drawn at random and reported.
    pub seed: Option<u64>,
    /// Allow destination addresses outside the benchmarking ranges.
    pub allow_foreign_addresses: bool,
}

impl Setup {
    pub fn side(&self, id: SideId) -> &Side {
        match id {
            SideId::Left => &self.left,
            SideId::Right => &self.right,
        }
    }

    pub fn side_mut(&mut self, id: SideId) -> &mut Side {
        match id {
            SideId::Left => &mut self.left,
            SideId::Right => &mut self.right,
        }
    }

    pub fn ports(&self, d: Direction) -> &PortSpec {
        match d {
            Direction::Forward => &self.forward_ports,
            Direction::Reverse => &self.reverse_ports,
        }
    }

    pub fn is_active(&self, d: Direction) -> bool {
        match d {
            Direction::Forward => self.forward,
            Direction::Reverse => self.reverse,
        }
    }

    pub fn active_directions(&self) -> impl Iterator<Item = Direction> + '_ {
        Direction::BOTH.into_iter().filter(|d| self.is_active(*d))
    }

    /// True when some frames of the mix are background (native IPv6) frames.
    pub fn has_background(&self) -> bool {
        self.fg_m < self.fg_n
    }

    pub fn has_foreground(&self) -> bool {
        self.fg_m > 0
    }

    /// The source and destination of foreground frames of direction `d` (docs/config.md, "Which
    /// addresses a direction uses"), or which key is missing.
    pub fn foreground_addresses(&self, d: Direction) -> Result<AddrPair, MissingAddress> {
        let (s, r) = (d.sender(), d.receiver());
        let (snd, rcv) = (self.side(s), self.side(r));
        let need4 = |a: Option<Ipv4Addr>, side: SideId, kind: &'static str| a.ok_or(MissingAddress { side, version: 4, kind });
        let need6 = |a: Option<Ipv6Addr>, side: SideId, kind: &'static str| a.ok_or(MissingAddress { side, version: 6, kind });
        Ok(match (snd.ip_version, rcv.ip_version) {
            (IpVersion::V4, IpVersion::V4) => AddrPair::V4(need4(snd.ipv4_real, s, "Real")?, need4(rcv.ipv4_real, r, "Real")?),
            (IpVersion::V6, IpVersion::V6) => AddrPair::V6(need6(snd.ipv6_real, s, "Real")?, need6(rcv.ipv6_real, r, "Real")?),
            // The sender speaks its own version; the receiver is represented by its virtual
            // address of the sender's family, and the sender's real address is what the DUT
            // translates.
            (IpVersion::V6, IpVersion::V4) => AddrPair::V6(need6(snd.ipv6_real, s, "Real")?, need6(rcv.ipv6_virt, r, "Virt")?),
            (IpVersion::V4, IpVersion::V6) => AddrPair::V4(need4(snd.ipv4_real, s, "Real")?, need4(rcv.ipv4_virt, r, "Virt")?),
        })
    }

    /// Background frames are native IPv6 from the sender's IPv6 real address to the
    /// receiver's.
    pub fn background_addresses(&self, d: Direction) -> Result<AddrPair, MissingAddress> {
        let (s, r) = (d.sender(), d.receiver());
        let a = self.side(s).ipv6_real.ok_or(MissingAddress {
            side: s,
            version: 6,
            kind: "Real",
        })?;
        let b = self.side(r).ipv6_real.ok_or(MissingAddress {
            side: r,
            version: 6,
            kind: "Real",
        })?;
        Ok(AddrPair::V6(a, b))
    }
}

/// A source/destination pair of one family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddrPair {
    V4(Ipv4Addr, Ipv4Addr),
    V6(Ipv6Addr, Ipv6Addr),
}

/// An address the setup needs but does not have, named as its siitperf.conf key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("IPv{version}-{}-{kind} is needed but not set", if *.side == SideId::Left { "L" } else { "R" })]
pub struct MissingAddress {
    pub side: SideId,
    pub version: u8,
    pub kind: &'static str,
}

/// True for the ranges the tester may send to without being told otherwise: 198.18.0.0/15
/// (RFC 2544), 2001:2::/48 (RFC 5180), 64:ff9b::/96 (RFC 6052), and 64:ff9b:1::/48 (RFC 8215).
pub fn is_benchmarking_v4(a: Ipv4Addr) -> bool {
    let o = a.octets();
    o[0] == 198 && (o[1] & 0xfe) == 18
}

pub fn is_benchmarking_v6(a: Ipv6Addr) -> bool {
    let s = a.segments();
    (s[0] == 0x2001 && s[1] == 0x0002 && s[2] == 0)
        || (s[0] == 0x0064 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0])
        || (s[0] == 0x0064 && s[1] == 0xff9b && s[2] == 1)
}

impl Setup {
    /// The seed that pseudorandom fields use: [`Setup::seed`], or when it is `None`, a random
    /// seed drawn once per process (so that one printed number reproduces the whole run).
    pub fn effective_seed(&self) -> u64 {
        self.seed.unwrap_or_else(crate::rng::process_seed)
    }
}

/// The union of the destination and source sets, `configured` first when it is in it.
fn all_addresses((dst, src): (AddrSet, AddrSet), configured: u128) -> Vec<u128> {
    let mut v = Vec::with_capacity(dst.len().min(1 << 20) as usize + 1);
    if dst.contains(configured) || src.contains(configured) {
        v.push(configured);
    }
    v.extend(dst.iter().filter(|a| *a != configured));
    v.extend(src.iter().filter(|a| *a != configured && !dst.contains(*a)));
    v
}

impl Side {
    /// The field of this side's addresses that `IP-{L,R}-var` varies, for an address of
    /// `bytes` bytes (4 or 16); `None` when it is fixed.
    fn var_range(&self, bytes: u32) -> Option<BitRange> {
        let v = &self.ip_var;
        if v.variation.is_fixed() {
            return None;
        }
        let off = if bytes == 4 { v.ipv4_offset } else { v.ipv6_offset };
        (u32::from(off) + 2 <= bytes).then(|| BitRange::word_at(bytes, off, v.min, v.max))
    }

    /// The destination network byte of frames sent to this side; `None` for one network.
    fn net_range(&self, bytes: u32) -> Option<BitRange> {
        let octet = if bytes == 4 { NET_OCTET_V4 } else { NET_OCTET_V6 };
        (self.num_nets > 1).then(|| BitRange::byte_at(bytes, octet, 0, self.num_nets.min(256) - 1))
    }

    /// The addresses `a` (an address of this side) takes as a destination of frames sent to this
    /// side, and as a source of frames sent from it.
    fn addr_sets(&self, a: u128, bytes: u32) -> (AddrSet, AddrSet) {
        let var = self.var_range(bytes);
        (AddrSet::new(a, var, self.net_range(bytes)), AddrSet::new(a, var, None))
    }
}

impl Setup {
    /// The tester's IPv4 addresses on side `id` as address sets (destination, source): its
    /// real IPv4 address when the side's foreground traffic is IPv4.
    fn tester_sets_v4(&self, id: SideId) -> Option<(AddrSet, AddrSet)> {
        let s = self.side(id);
        // A B4's IPv4 addresses are inside its softwire: no ARP for them on the link.
        let a = s
            .ipv4_real
            .filter(|_| s.ip_version == IpVersion::V4 && self.has_foreground() && s.tunnel.is_none())?;
        Some(s.addr_sets(u128::from(u32::from(a)), 4))
    }

    /// The same for IPv6: the real IPv6 address when the side's foreground traffic is IPv6 or
    /// there is background traffic.
    fn tester_sets_v6(&self, id: SideId) -> Option<(AddrSet, AddrSet)> {
        let s = self.side(id);
        // A B4: its addresses (the tunnel's local one, varied as the side's addresses vary).
        if let Some(t) = s.tunnel {
            return Some(s.addr_sets(u128::from(t.local), 16));
        }
        let a = s
            .ipv6_real
            .filter(|_| (s.ip_version == IpVersion::V6 && self.has_foreground()) || self.has_background())?;
        Some(s.addr_sets(u128::from(a), 16))
    }

    /// All IPv4 addresses the tester uses on side `id` (as sources of its frames and as
    /// destinations of frames to it, with the varying part over its range and every destination
    /// network), for announcing them to the DUT. Up to 65,536 entries (256 with networks). The
    /// configured address comes first when it is one of them (the engine solicits from the first).
    pub fn tester_addresses_v4(&self, id: SideId) -> Vec<Ipv4Addr> {
        let (Some(sets), Some(a)) = (self.tester_sets_v4(id), self.side(id).ipv4_real) else {
            return Vec::new();
        };
        all_addresses(sets, u128::from(u32::from(a)))
            .into_iter()
            .map(|a| Ipv4Addr::from(a as u32))
            .collect()
    }

    /// All IPv6 addresses the tester uses on side `id` (foreground and background), in the
    /// same order.
    pub fn tester_addresses_v6(&self, id: SideId) -> Vec<Ipv6Addr> {
        let s = self.side(id);
        let base = s.tunnel.map(|t| t.local).or(s.ipv6_real);
        let (Some(sets), Some(a)) = (self.tester_sets_v6(id), base) else {
            return Vec::new();
        };
        all_addresses(sets, u128::from(a)).into_iter().map(Ipv6Addr::from).collect()
    }

    /// True when the tester answers ARP for `a` on side `id`. O(1) and allocation-free: it runs
    /// on the receive path for every ARP request (a mask compare and a range check).
    pub fn tester_owns_v4(&self, id: SideId, a: Ipv4Addr) -> bool {
        let a = u128::from(u32::from(a));
        self.tester_sets_v4(id).is_some_and(|(dst, src)| dst.contains(a) || src.contains(a))
    }

    /// True when the tester answers neighbour solicitations for `a` on side `id`; O(1).
    pub fn tester_owns_v6(&self, id: SideId, a: Ipv6Addr) -> bool {
        let a = u128::from(a);
        self.tester_sets_v6(id).is_some_and(|(dst, src)| dst.contains(a) || src.contains(a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benchmarking_ranges() {
        assert!(is_benchmarking_v4("198.18.0.1".parse().unwrap()));
        assert!(is_benchmarking_v4("198.19.255.255".parse().unwrap()));
        assert!(!is_benchmarking_v4("198.20.0.1".parse().unwrap()));
        assert!(!is_benchmarking_v4("10.0.0.1".parse().unwrap()));
        assert!(is_benchmarking_v6("2001:2::1".parse().unwrap()));
        assert!(is_benchmarking_v6("2001:2:0:8000::1".parse().unwrap()));
        assert!(!is_benchmarking_v6("2001:2:1::1".parse().unwrap()));
        assert!(is_benchmarking_v6("64:ff9b::c612:2".parse().unwrap()));
        assert!(!is_benchmarking_v6("2001:db8::1".parse().unwrap()));
    }
}
