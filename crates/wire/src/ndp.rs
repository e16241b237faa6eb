//! ICMPv6 neighbour solicitation and advertisement (RFC 4861) with the link-layer address option.

use crate::eth::{self, MacAddr};
use crate::{checksum, ipv6};
use std::net::Ipv6Addr;

/// Byte ranges of the fields of an NS or NA message, the ICMPv6 body (RFC 4861 sections 4.3
/// and 4.4), and of its link-layer address option (section 4.6.1).
pub mod field {
    use core::ops::Range;
    /// ICMPv6 type (135: NS, 136: NA).
    pub const TYPE: usize = 0;
    /// ICMPv6 code (0).
    pub const CODE: usize = 1;
    /// ICMPv6 checksum over the IPv6 pseudo-header and the message.
    pub const CHECKSUM: Range<usize> = 2..4;
    /// The R, S and O flags of an NA (reserved in an NS), the first byte of a reserved word.
    pub const FLAGS: usize = 4;
    /// The target address.
    pub const TARGET: Range<usize> = 8..24;
    /// Where the options start.
    pub const OPTIONS: usize = TARGET.end;
    /// An option's type, relative to the option.
    pub const OPT_TYPE: usize = 0;
    /// An option's length in units of 8 bytes, relative to the option.
    pub const OPT_LEN: usize = 1;
    /// The link-layer address of a link-layer address option, relative to the option.
    pub const OPT_LLADDR: Range<usize> = 2..8;
}

/// ICMPv6 type of a neighbour solicitation.
pub const TYPE_NS: u8 = 135;
/// ICMPv6 type of a neighbour advertisement.
pub const TYPE_NA: u8 = 136;
const OPT_SLLA: u8 = 1;
const OPT_TLLA: u8 = 2;
/// The length of a link-layer address option for Ethernet.
const LLA_OPT_LEN: usize = 8;
/// ICMPv6 NS/NA body: type, code, checksum, 4 flag/reserved bytes, target, one 8-byte option.
pub const BODY_LEN: usize = field::OPTIONS + LLA_OPT_LEN;
/// The length of an NS or NA frame with its link-layer address option.
pub const FRAME_LEN: usize = eth::HDR_LEN + ipv6::HDR_LEN + BODY_LEN;
/// The hop limit of every NS and NA (RFC 4861 section 7.1.1: a receiver drops others).
pub const HOP_LIMIT: u8 = 255;
/// NA flags: Solicited and Override (the router flag stays clear: the tester is a host).
pub const NA_FLAGS_SOLICITED_OVERRIDE: u8 = 0x60;

/// A neighbour solicitation or advertisement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nd {
    /// [`TYPE_NS`] or [`TYPE_NA`].
    pub icmp_type: u8,
    /// The first byte of the flags word (R, S, O bits of an NA).
    pub flags: u8,
    /// The IPv6 source address.
    pub src: Ipv6Addr,
    /// The IPv6 destination address.
    pub dst: Ipv6Addr,
    /// The target address.
    pub target: Ipv6Addr,
    /// The source (NS) or target (NA) link-layer address option, when present.
    pub lladdr: Option<MacAddr>,
}

/// Write a whole NS or NA frame with a link-layer address option; returns its length. An NS
/// from the unspecified address (duplicate address detection) carries no source link-layer
/// address option, as RFC 4861 section 4.3 requires.
pub fn write_frame(buf: &mut [u8], eth_dst: MacAddr, eth_src: MacAddr, nd: &Nd) -> Option<usize> {
    let with_opt = !(nd.icmp_type == TYPE_NS && nd.src.is_unspecified());
    let body_len = if with_opt { BODY_LEN } else { BODY_LEN - LLA_OPT_LEN };
    let len = eth::HDR_LEN + ipv6::HDR_LEN + body_len;
    let f = buf.get_mut(..len)?;
    eth::write(f, eth_dst, eth_src, eth::ETHERTYPE_IPV6)?;
    let ip = ipv6::Header {
        payload_len: body_len,
        next_header: ipv6::NH_ICMPV6,
        hop_limit: HOP_LIMIT,
        src: nd.src,
        dst: nd.dst,
    };
    ipv6::write(&mut f[eth::HDR_LEN..], &ip)?;
    let b = &mut f[eth::HDR_LEN + ipv6::HDR_LEN..];
    b[field::TYPE] = nd.icmp_type;
    b[field::CODE] = 0;
    b[field::CHECKSUM].copy_from_slice(&[0, 0]);
    b[field::FLAGS..field::TARGET.start].copy_from_slice(&[nd.flags, 0, 0, 0]);
    b[field::TARGET].copy_from_slice(&nd.target.octets());
    if with_opt {
        let o = &mut b[field::OPTIONS..];
        o[field::OPT_TYPE] = if nd.icmp_type == TYPE_NS { OPT_SLLA } else { OPT_TLLA };
        o[field::OPT_LEN] = (LLA_OPT_LEN / 8) as u8;
        o[field::OPT_LLADDR].copy_from_slice(&nd.lladdr.unwrap_or(eth_src).0);
    }
    let acc = ipv6::pseudo_header_sum(&nd.src, &nd.dst, ipv6::NH_ICMPV6, body_len as u32);
    let c = checksum::finish(checksum::add_bytes(acc, b));
    b[field::CHECKSUM].copy_from_slice(&c.to_be_bytes());
    Some(len)
}

/// Parse an NS or NA from an IPv6 packet (the Ethernet payload). Checks hop limit 255 and the
/// ICMPv6 checksum, as RFC 4861 section 7.1.1 asks.
pub fn parse(ip: &[u8]) -> Option<Nd> {
    let h = ipv6::parse(ip)?;
    if h.next_header != ipv6::NH_ICMPV6 || h.hop_limit != HOP_LIMIT {
        return None;
    }
    let body = ip.get(ipv6::HDR_LEN..ipv6::HDR_LEN + h.payload_len)?;
    if body.len() < field::OPTIONS || (body[field::TYPE] != TYPE_NS && body[field::TYPE] != TYPE_NA) || body[field::CODE] != 0 {
        return None;
    }
    let acc = ipv6::pseudo_header_sum(&h.src, &h.dst, ipv6::NH_ICMPV6, body.len() as u32);
    if checksum::fold(checksum::add_bytes(acc, body)) != 0xffff {
        return None;
    }
    let mut t = [0u8; 16];
    t.copy_from_slice(&body[field::TARGET]);
    let want = if body[field::TYPE] == TYPE_NS { OPT_SLLA } else { OPT_TLLA };
    let mut lladdr = None;
    let mut opts = &body[field::OPTIONS..];
    while opts.len() >= 8 {
        let olen = usize::from(opts[field::OPT_LEN]) * 8;
        if olen == 0 || olen > opts.len() {
            return None;
        }
        if opts[field::OPT_TYPE] == want && olen == LLA_OPT_LEN {
            let mut m = [0u8; 6];
            m.copy_from_slice(&opts[field::OPT_LLADDR]);
            lladdr = Some(MacAddr(m));
        }
        opts = &opts[olen..];
    }
    Some(Nd {
        icmp_type: body[field::TYPE],
        flags: body[field::FLAGS],
        src: h.src,
        dst: h.dst,
        target: Ipv6Addr::from(t),
        lladdr,
    })
}

/// A solicitation for `target`, sent to its solicited-node multicast address.
pub fn solicitation(src: Ipv6Addr, mac: MacAddr, target: Ipv6Addr) -> (MacAddr, Nd) {
    let dst = ipv6::solicited_node(&target);
    (
        MacAddr::ipv6_multicast(&dst),
        Nd {
            icmp_type: TYPE_NS,
            flags: 0,
            src,
            dst,
            target,
            lladdr: Some(mac),
        },
    )
}

/// The solicited advertisement answering `ns` for our address `ns.target` at `mac`, and the
/// Ethernet destination to send it to (the solicitor's link-layer address, else the all-nodes
/// multicast for an unspecified-source solicitation).
pub fn advertisement_for(ns: &Nd, ns_eth_src: MacAddr, mac: MacAddr) -> (MacAddr, Nd) {
    let (dst, flags, eth_dst) = if ns.src.is_unspecified() {
        let all = Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1);
        (all, 0x20, MacAddr::ipv6_multicast(&all))
    } else {
        (ns.src, NA_FLAGS_SOLICITED_OVERRIDE, ns.lladdr.unwrap_or(ns_eth_src))
    };
    (
        eth_dst,
        Nd {
            icmp_type: TYPE_NA,
            flags,
            src: ns.target,
            dst,
            target: ns.target,
            lladdr: Some(mac),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real solicitation (IPv6 header and ICMPv6 body): 2001:2::2 at 02:00:00:00:01:01 asks
    /// ff02::1:ff00:1 for 2001:2::1; ICMPv6 checksum 0x3694.
    const FIXTURE: [u8; ipv6::HDR_LEN + BODY_LEN] = [
        0x60, 0x00, 0x00, 0x00, 0x00, 0x20, 0x3a, 0xff, //
        0x20, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, //
        0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0x00, 0x00, 0x01, //
        0x87, 0x00, 0x36, 0x94, 0x00, 0x00, 0x00, 0x00, //
        0x20, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, //
        0x01, 0x01, 0x02, 0x00, 0x00, 0x00, 0x01, 0x01,
    ];

    fn fixture_nd() -> (MacAddr, Nd) {
        solicitation(
            "2001:2::2".parse().unwrap(),
            MacAddr([2, 0, 0, 0, 1, 1]),
            "2001:2::1".parse().unwrap(),
        )
    }

    #[test]
    fn fixture_parses_and_every_prefix_is_none() {
        assert_eq!(parse(&FIXTURE), Some(fixture_nd().1));
        for n in 0..FIXTURE.len() {
            assert_eq!(parse(&FIXTURE[..n]), None, "{n} bytes");
        }
        // A hop limit below 255 means a router forwarded it: not a neighbour's (RFC 4861
        // section 7.1.1). A flipped bit fails the checksum.
        let mut b = FIXTURE;
        b[ipv6::field::HOP_LIMIT] = 254;
        assert_eq!(parse(&b), None);
        let mut b = FIXTURE;
        b[ipv6::HDR_LEN + field::TARGET.start] ^= 1;
        assert_eq!(parse(&b), None);
    }

    #[test]
    fn a_written_frame_parses_back() {
        let (mac, ns) = fixture_nd();
        assert_eq!(mac, MacAddr([0x33, 0x33, 0xff, 0, 0, 1]));
        let mut b = [0u8; FRAME_LEN];
        assert_eq!(write_frame(&mut b, mac, MacAddr([2, 0, 0, 0, 1, 1]), &ns), Some(FRAME_LEN));
        assert_eq!(b[eth::HDR_LEN..], FIXTURE);
        assert_eq!(write_frame(&mut b[..FRAME_LEN - 1], mac, ns.lladdr.unwrap(), &ns), None);
    }
}
