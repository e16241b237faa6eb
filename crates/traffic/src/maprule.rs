//! The MAP mapping rule (RFC 7597 section 5, shared by MAP-T: RFC 7599 section 5): how a CE's
//! IPv4 address and port set (its PSID) and its IPv6 addresses follow from each other, and the
//! Default Mapping Rule's embedding of IPv4 addresses outside the MAP domain (RFC 6052 section
//! 2.2). The tester's CE side and the lab's border relays both compute with it, so both follow
//! one reading of the RFCs.
//!
//! A rule: the rule IPv6 prefix (length `ipv6_len`), the rule IPv4 prefix (length `ipv4_len`),
//! the EA-bits length and the PSID offset `a`. The EA bits, after the rule IPv6 prefix in a CE's
//! end-user prefix, are the IPv4 suffix (`p = 32 - ipv4_len` bits) followed by the PSID
//! (`q = ea_len - p` bits). A rule whose IPv4 prefix is a whole address may carry no EA bits
//! and still share the address: its PSID length is then provisioned apart
//! ([`MapRule::with_psid_len`], RFC 7599 Appendix A example 5).

use std::net::{Ipv4Addr, Ipv6Addr};

/// A Basic (or Forwarding) Mapping Rule. (Read back from JSON through [`MapRule::new`], so a
/// rule that fails its checks is refused there too.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "RuleFields", into = "RuleFields")]
pub struct MapRule {
    ipv6_prefix: u128,
    ipv6_len: u8,
    ipv4_prefix: u32,
    ipv4_len: u8,
    ea_len: u8,
    /// `a`: the PSID's offset in a port (bits before it; 0 keeps no port range out).
    psid_offset: u8,
    /// `q` (RFC 7597's `k`): the PSID's length.
    psid_len: u8,
}

/// A rule as written in JSON: its prefixes and lengths.
#[derive(serde::Serialize, serde::Deserialize)]
struct RuleFields {
    ipv6_prefix: Ipv6Addr,
    ipv6_len: u8,
    ipv4_prefix: Ipv4Addr,
    ipv4_len: u8,
    ea_len: u8,
    psid_offset: u8,
    psid_len: u8,
}

impl From<MapRule> for RuleFields {
    fn from(r: MapRule) -> RuleFields {
        RuleFields {
            ipv6_prefix: Ipv6Addr::from(r.ipv6_prefix),
            ipv6_len: r.ipv6_len,
            ipv4_prefix: Ipv4Addr::from(r.ipv4_prefix),
            ipv4_len: r.ipv4_len,
            ea_len: r.ea_len,
            psid_offset: r.psid_offset,
            psid_len: r.psid_len,
        }
    }
}

impl TryFrom<RuleFields> for MapRule {
    type Error = RuleError;

    fn try_from(f: RuleFields) -> Result<MapRule, RuleError> {
        let rule = MapRule::new((f.ipv6_prefix, f.ipv6_len), (f.ipv4_prefix, f.ipv4_len), f.ea_len, f.psid_offset)?;
        if rule.psid_len == f.psid_len {
            Ok(rule)
        } else {
            rule.with_psid_len(f.psid_len)
        }
    }
}

/// Why a rule cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("the rule IPv4 prefix length /{0} is longer than 32")]
    Ipv4Len(u8),
    #[error("the rule IPv6 prefix length /{0} is longer than 64 (a CE's end-user prefix is at most a /64)")]
    Ipv6Len(u8),
    #[error("the rule {which} prefix has bits set beyond its length")]
    HostBits { which: &'static str },
    #[error(
        "the EA bits ({ea_len}) are fewer than the IPv4 suffix (32 - /{ipv4_len} = {suffix} bits): a CE would get no whole IPv4 address"
    )]
    EaShort { ea_len: u8, ipv4_len: u8, suffix: u8 },
    #[error("the rule IPv6 prefix (/{ipv6_len}) and the EA bits ({ea_len}) make an end-user prefix longer than a /64")]
    EaLong { ipv6_len: u8, ea_len: u8 },
    #[error("the PSID offset ({offset}) and the PSID length ({len}) are more than the 16 bits of a port")]
    PsidBits { offset: u8, len: u8 },
    #[error("a PSID length of its own needs a rule without EA bits and a whole IPv4 address (/32)")]
    PsidLenWithEa,
}

/// A CE's share of the rule: its IPv4 address and its PSID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ce {
    pub ipv4: Ipv4Addr,
    pub psid: u16,
}

fn mask128(len: u8) -> u128 {
    if len == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(len))
    }
}

fn mask32(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(len))
    }
}

impl MapRule {
    /// The rule {`ipv6` (prefix, length), `ipv4` (prefix, length), EA-bits length}, PSID offset
    /// `psid_offset` (RFC 7597's default is 6); its PSID length is what the EA bits hold after
    /// the IPv4 suffix.
    pub fn new(ipv6: (Ipv6Addr, u8), ipv4: (Ipv4Addr, u8), ea_len: u8, psid_offset: u8) -> Result<MapRule, RuleError> {
        let (ipv6_len, ipv4_len) = (ipv6.1, ipv4.1);
        if ipv4_len > 32 {
            return Err(RuleError::Ipv4Len(ipv4_len));
        }
        if ipv6_len > 64 {
            return Err(RuleError::Ipv6Len(ipv6_len));
        }
        let (p6, p4) = (u128::from(ipv6.0), u32::from(ipv4.0));
        if p6 & !mask128(ipv6_len) != 0 {
            return Err(RuleError::HostBits { which: "IPv6" });
        }
        if p4 & !mask32(ipv4_len) != 0 {
            return Err(RuleError::HostBits { which: "IPv4" });
        }
        let suffix = 32 - ipv4_len;
        if ea_len < suffix {
            return Err(RuleError::EaShort { ea_len, ipv4_len, suffix });
        }
        if u32::from(ipv6_len) + u32::from(ea_len) > 64 {
            return Err(RuleError::EaLong { ipv6_len, ea_len });
        }
        let psid_len = ea_len - suffix;
        let rule = MapRule {
            ipv6_prefix: p6,
            ipv6_len,
            ipv4_prefix: p4,
            ipv4_len,
            ea_len,
            psid_offset,
            psid_len,
        };
        rule.check_psid_bits()
    }

    /// This rule (no EA bits, a whole IPv4 address) with its address shared by 2^`len` CEs, each
    /// PSID provisioned apart (RFC 7599 Appendix A example 5).
    pub fn with_psid_len(self, len: u8) -> Result<MapRule, RuleError> {
        if self.ea_len != 0 || self.ipv4_len != 32 {
            return Err(RuleError::PsidLenWithEa);
        }
        MapRule { psid_len: len, ..self }.check_psid_bits()
    }

    fn check_psid_bits(self) -> Result<MapRule, RuleError> {
        if self.psid_len > 0 && u32::from(self.psid_offset) + u32::from(self.psid_len) > 16 {
            return Err(RuleError::PsidBits {
                offset: self.psid_offset,
                len: self.psid_len,
            });
        }
        Ok(self)
    }

    /// `q`: the PSID's length (0: the address is not shared).
    pub fn psid_len(&self) -> u8 {
        self.psid_len
    }

    /// The rule IPv6 prefix and its length.
    pub fn ipv6_prefix(&self) -> (Ipv6Addr, u8) {
        (Ipv6Addr::from(self.ipv6_prefix), self.ipv6_len)
    }

    /// The rule IPv4 prefix and its length.
    pub fn ipv4_prefix(&self) -> (Ipv4Addr, u8) {
        (Ipv4Addr::from(self.ipv4_prefix), self.ipv4_len)
    }

    /// The EA-bits length.
    pub fn ea_len(&self) -> u8 {
        self.ea_len
    }

    /// `a`: the PSID offset.
    pub fn psid_offset(&self) -> u8 {
        self.psid_offset
    }

    /// The CEs the rule can give out: one per IPv4 suffix and PSID.
    pub fn ces(&self) -> u64 {
        1u64 << (32 - u32::from(self.ipv4_len) + u32::from(self.psid_len))
    }

    /// CE number `n` (0 to [`MapRule::ces`] - 1): the PSIDs of one address first, then the next
    /// address.
    pub fn ce(&self, n: u64) -> Option<Ce> {
        if n >= self.ces() {
            return None;
        }
        let q = u32::from(self.psid_len);
        let suffix = (n >> q) as u32;
        Some(Ce {
            ipv4: Ipv4Addr::from(self.ipv4_prefix | suffix),
            psid: (n & ((1u64 << q) - 1)) as u16,
        })
    }

    /// The number of `ce` in the rule's order ([`MapRule::ce`]'s `n`), if it is one of the
    /// rule's CEs.
    pub fn index(&self, ce: Ce) -> Option<u64> {
        if !self.owns(ce) {
            return None;
        }
        let suffix = u64::from(u32::from(ce.ipv4) & !mask32(self.ipv4_len));
        Some(suffix << self.psid_len | u64::from(ce.psid))
    }

    /// `m`: the bits of a port after the PSID.
    fn m(&self) -> u32 {
        16 - u32::from(self.psid_offset) - u32::from(self.psid_len)
    }

    /// How many ports a PSID's set holds (RFC 7597 section 5.1: with a PSID offset, the ports
    /// whose first `a` bits are all zero, 0-1023 for `a` = 6, belong to no set). Without
    /// sharing a CE has every port.
    pub fn ports_per_set(&self) -> u32 {
        if self.psid_len == 0 {
            return 1 << 16;
        }
        let a = u32::from(self.psid_offset);
        ((1u32 << a) - 1).max(1) << self.m()
    }

    /// Port `i` (0 to [`MapRule::ports_per_set`] - 1) of `psid`'s set, in increasing order.
    pub fn port(&self, psid: u16, i: u32) -> Option<u16> {
        if i >= self.ports_per_set() || u32::from(psid) >> self.psid_len != 0 {
            return None;
        }
        let s = self.port_split();
        Some(s.psid_bits(psid) | s.index_bits(i))
    }

    /// [`MapRule::port`] as two parts ORed together, unchecked: for a sender that writes ports
    /// of many sets per frame (the PSID's part computed once per CE).
    pub fn port_split(&self) -> PortSplit {
        if self.psid_len == 0 {
            // Port i is i: no PSID bits, no excluded range.
            PortSplit { m: 16, a: 0 }
        } else {
            PortSplit {
                m: self.m(),
                a: u32::from(self.psid_offset),
            }
        }
    }

    /// The PSID whose set holds `port`; `None` for a port in no set (the excluded first range).
    pub fn psid_of(&self, port: u16) -> Option<u16> {
        if self.psid_len == 0 {
            return Some(0);
        }
        let a = u32::from(self.psid_offset);
        if a > 0 && u32::from(port) >> (16 - a) == 0 {
            return None;
        }
        Some(((u32::from(port) >> self.m()) & ((1 << self.psid_len) - 1)) as u16)
    }

    /// Is `ce` one of this rule's (its address in the rule IPv4 prefix, its PSID within `q` bits)?
    fn owns(&self, ce: Ce) -> bool {
        u32::from(ce.ipv4) & mask32(self.ipv4_len) == self.ipv4_prefix && u32::from(ce.psid) >> self.psid_len == 0
    }

    /// The CE's end-user IPv6 prefix and its length (RFC 7597 section 5.2): the rule IPv6
    /// prefix, then the EA bits (the IPv4 suffix, then the PSID when the EA bits carry it).
    pub fn end_user_prefix(&self, ce: Ce) -> Option<(Ipv6Addr, u8)> {
        if !self.owns(ce) {
            return None;
        }
        let len = self.ipv6_len + self.ea_len;
        if self.ea_len == 0 {
            return Some((Ipv6Addr::from(self.ipv6_prefix), len));
        }
        let suffix = u128::from(u32::from(ce.ipv4) & !mask32(self.ipv4_len));
        let ea = (suffix << self.psid_len) | u128::from(ce.psid);
        Some((Ipv6Addr::from(self.ipv6_prefix | (ea << (128 - u32::from(len)))), len))
    }

    /// The CE's MAP IPv6 address (RFC 7597 section 6): its end-user prefix with subnet ID 0,
    /// then the interface identifier 16 zero bits, the IPv4 address, the PSID right-aligned in
    /// 16 bits. MAP-E's softwire ends there; in MAP-T it is the CE's translated source.
    pub fn ce_address(&self, ce: Ce) -> Option<Ipv6Addr> {
        let (prefix, _) = self.end_user_prefix(ce)?;
        let iid = (u128::from(u32::from(ce.ipv4)) << 16) | u128::from(ce.psid);
        Some(Ipv6Addr::from(u128::from(prefix) | iid))
    }

    /// The CE whose MAP IPv6 address `addr` is, if it is one of this rule's: its IPv4 address
    /// and PSID read from the EA bits (from the interface identifier when the rule has none),
    /// and the whole address checked against what the rule gives for them.
    pub fn ce_of(&self, addr: Ipv6Addr) -> Option<Ce> {
        let a = u128::from(addr);
        if a & mask128(self.ipv6_len) != self.ipv6_prefix {
            return None;
        }
        let ce = if self.ea_len == 0 {
            Ce {
                ipv4: Ipv4Addr::from((a >> 16) as u32),
                psid: a as u16,
            }
        } else {
            let len = u32::from(self.ipv6_len + self.ea_len);
            let ea = (a >> (128 - len)) & ((1u128 << self.ea_len) - 1);
            Ce {
                ipv4: Ipv4Addr::from(self.ipv4_prefix | (ea >> self.psid_len) as u32),
                psid: (ea & ((1u128 << self.psid_len) - 1)) as u16,
            }
        };
        (self.ce_address(ce) == Some(addr)).then_some(ce)
    }

    /// The border relay's check (RFC 7597 section 8.1, RFC 7599 section 8.1): does a packet
    /// from IPv6 source `src` carrying (or translated to) IPv4 source `ipv4` and port `port`
    /// come from the CE the rule gives that address and port? Anything else is spoofed.
    pub fn allows(&self, src: Ipv6Addr, ipv4: Ipv4Addr, port: u16) -> bool {
        let Some(psid) = self.psid_of(port) else { return false };
        self.ce_address(Ce { ipv4, psid }) == Some(src)
    }
}

/// A rule's ports split into the PSID's bits and the index's ([`MapRule::port_split`]): port `i`
/// of `psid`'s set is `psid_bits(psid) | index_bits(i)` (RFC 7597 section 5.1: the PSID after
/// the first `a` bits, then `m` bits of the index; with an offset the first range, R = 0, is
/// left out). No checks: [`MapRule::port`] checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortSplit {
    /// Bits after the PSID (16 without sharing).
    m: u32,
    /// The PSID offset (0 without sharing).
    a: u32,
}

impl PortSplit {
    /// The PSID's bits of its ports.
    #[inline(always)]
    pub fn psid_bits(self, psid: u16) -> u16 {
        (u32::from(psid) << self.m) as u16
    }

    /// Index `i`'s bits of a port: its range R (above the excluded first one with an offset)
    /// in the first `a` bits, its low `m` bits last.
    #[inline(always)]
    pub fn index_bits(self, i: u32) -> u16 {
        let r = (i >> self.m) + u32::from(self.a > 0);
        ((r << (16 - self.a)) | (i & ((1 << self.m) - 1))) as u16
    }
}

/// The IPv6 address of IPv4 address `v4` under the prefix `prefix`/`len` (RFC 6052 section
/// 2.2: MAP-T's Default Mapping Rule): `len` one of 32, 40, 48, 56, 64, 96; bits 64-71 (the
/// "u" octet) stay zero.
pub fn embed(prefix: Ipv6Addr, len: u8, v4: Ipv4Addr) -> Option<Ipv6Addr> {
    if ![32, 40, 48, 56, 64, 96].contains(&len) || u128::from(prefix) & !mask128(len) != 0 {
        return None;
    }
    let mut bytes = prefix.octets();
    let at = (usize::from(len) / 8..16).filter(|&i| i != 8);
    for (i, b) in at.zip(v4.octets()) {
        bytes[i] = b;
    }
    Some(Ipv6Addr::from(bytes))
}

/// The IPv4 address that [`embed`] put into `addr` under `prefix`/`len`; `None` when `addr` is
/// not under the prefix.
pub fn extract(prefix: Ipv6Addr, len: u8, addr: Ipv6Addr) -> Option<Ipv4Addr> {
    if ![32, 40, 48, 56, 64, 96].contains(&len) || u128::from(addr) & mask128(len) != u128::from(prefix) {
        return None;
    }
    let bytes = addr.octets();
    let mut v4 = [0u8; 4];
    let at = (usize::from(len) / 8..16).filter(|&i| i != 8);
    for (b, i) in v4.iter_mut().zip(at) {
        *b = bytes[i];
    }
    Some(Ipv4Addr::from(v4))
}

#[cfg(test)]
#[path = "maprule_tests.rs"]
mod tests;
