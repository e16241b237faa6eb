//! ICMPv6 neighbour solicitation and advertisement (RFC 4861) with the link-layer address option.

use crate::eth::{self, MacAddr};
use crate::{checksum, ipv6};
use std::net::Ipv6Addr;

pub const TYPE_NS: u8 = 135;
pub const TYPE_NA: u8 = 136;
const OPT_SLLA: u8 = 1;
const OPT_TLLA: u8 = 2;
/// ICMPv6 NS/NA body: type, code, checksum, 4 flag/reserved bytes, target, one 8-byte option.
pub const BODY_LEN: usize = 32;
/// The length of an NS or NA frame with its link-layer address option.
pub const FRAME_LEN: usize = eth::HDR_LEN + ipv6::HDR_LEN + BODY_LEN;
/// NA flags: Solicited and Override (the router flag stays clear: the tester is a host).
pub const NA_FLAGS_SOLICITED_OVERRIDE: u8 = 0x60;

/// A neighbour solicitation or advertisement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nd {
    pub icmp_type: u8,
    /// The first byte of the flags word (R, S, O bits of an NA).
    pub flags: u8,
    pub src: Ipv6Addr,
    pub dst: Ipv6Addr,
    pub target: Ipv6Addr,
    /// The source (NS) or target (NA) link-layer address option, when present.
    pub lladdr: Option<MacAddr>,
}

/// Write a whole NS or NA frame with a link-layer address option; returns its length. An NS
/// from the unspecified address (duplicate address detection) carries no source link-layer
/// address option, as RFC 4861 section 4.3 requires.
pub fn write_frame(buf: &mut [u8], eth_dst: MacAddr, eth_src: MacAddr, nd: &Nd) -> Option<usize> {
    let with_opt = !(nd.icmp_type == TYPE_NS && nd.src.is_unspecified());
    let body_len = if with_opt { BODY_LEN } else { BODY_LEN - 8 };
    let len = eth::HDR_LEN + ipv6::HDR_LEN + body_len;
    let f = buf.get_mut(..len)?;
    eth::write(f, eth_dst, eth_src, eth::ETHERTYPE_IPV6)?;
    ipv6::write(&mut f[eth::HDR_LEN..], nd.src, nd.dst, ipv6::NH_ICMPV6, body_len, 255)?;
    let b = &mut f[eth::HDR_LEN + ipv6::HDR_LEN..];
    b[0] = nd.icmp_type;
    b[1] = 0;
    b[2..4].copy_from_slice(&[0, 0]);
    b[4..8].copy_from_slice(&[nd.flags, 0, 0, 0]);
    b[8..24].copy_from_slice(&nd.target.octets());
    if with_opt {
        b[24] = if nd.icmp_type == TYPE_NS { OPT_SLLA } else { OPT_TLLA };
        b[25] = 1;
        b[26..32].copy_from_slice(&nd.lladdr.unwrap_or(eth_src).0);
    }
    let acc = ipv6::pseudo_header_sum(&nd.src, &nd.dst, ipv6::NH_ICMPV6, body_len as u32);
    let c = checksum::finish(checksum::add_bytes(acc, b));
    b[2..4].copy_from_slice(&c.to_be_bytes());
    Some(len)
}

/// Parse an NS or NA from an IPv6 packet (the Ethernet payload). Checks hop limit 255 and the
/// ICMPv6 checksum, as RFC 4861 section 7.1.1 asks.
pub fn parse(ip: &[u8]) -> Option<Nd> {
    let h = ipv6::parse(ip)?;
    if h.next_header != ipv6::NH_ICMPV6 || h.hop_limit != 255 {
        return None;
    }
    let body = ip.get(ipv6::HDR_LEN..ipv6::HDR_LEN + h.payload_len)?;
    if body.len() < 24 || (body[0] != TYPE_NS && body[0] != TYPE_NA) || body[1] != 0 {
        return None;
    }
    let acc = ipv6::pseudo_header_sum(&h.src, &h.dst, ipv6::NH_ICMPV6, body.len() as u32);
    if checksum::fold(checksum::add_bytes(acc, body)) != 0xffff {
        return None;
    }
    let mut t = [0u8; 16];
    t.copy_from_slice(&body[8..24]);
    let want = if body[0] == TYPE_NS { OPT_SLLA } else { OPT_TLLA };
    let mut lladdr = None;
    let mut opts = &body[24..];
    while opts.len() >= 8 {
        let olen = usize::from(opts[1]) * 8;
        if olen == 0 || olen > opts.len() {
            return None;
        }
        if opts[0] == want && olen == 8 {
            let mut m = [0u8; 6];
            m.copy_from_slice(&opts[2..8]);
            lladdr = Some(MacAddr(m));
        }
        opts = &opts[olen..];
    }
    Some(Nd {
        icmp_type: body[0],
        flags: body[4],
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
