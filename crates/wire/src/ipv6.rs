//! IPv6 headers without extension headers.

use crate::checksum;
use std::net::Ipv6Addr;

pub const HDR_LEN: usize = 40;
pub const NH_UDP: u8 = 17;
pub const NH_ICMPV6: u8 = 58;
pub const DEFAULT_HOP_LIMIT: u8 = 64;

/// Write a 40-byte IPv6 header (traffic class and flow label zero).
pub fn write(buf: &mut [u8], src: Ipv6Addr, dst: Ipv6Addr, next_header: u8, payload_len: usize, hop_limit: u8) -> Option<()> {
    let plen = u16::try_from(payload_len).ok()?;
    let h = buf.get_mut(..HDR_LEN)?;
    h[0..4].copy_from_slice(&[0x60, 0, 0, 0]);
    h[4..6].copy_from_slice(&plen.to_be_bytes());
    h[6] = next_header;
    h[7] = hop_limit;
    h[8..24].copy_from_slice(&src.octets());
    h[24..40].copy_from_slice(&dst.octets());
    Some(())
}

/// The parsed fields of an IPv6 header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub payload_len: usize,
    pub next_header: u8,
    pub hop_limit: u8,
    pub src: Ipv6Addr,
    pub dst: Ipv6Addr,
}

/// Parse an IPv6 header at the start of `b`; checks the version and that the payload fits.
pub fn parse(b: &[u8]) -> Option<Header> {
    let h = b.get(..HDR_LEN)?;
    if h[0] >> 4 != 6 {
        return None;
    }
    let payload_len = usize::from(u16::from_be_bytes([h[4], h[5]]));
    if HDR_LEN + payload_len > b.len() {
        return None;
    }
    let a = |o: usize| {
        let mut x = [0u8; 16];
        x.copy_from_slice(&h[o..o + 16]);
        Ipv6Addr::from(x)
    };
    Some(Header {
        payload_len,
        next_header: h[6],
        hop_limit: h[7],
        src: a(8),
        dst: a(24),
    })
}

/// The one's complement sum of the IPv6 pseudo-header (RFC 8200 section 8.1).
pub fn pseudo_header_sum(src: &Ipv6Addr, dst: &Ipv6Addr, next_header: u8, len: u32) -> u32 {
    let mut acc = checksum::add_bytes(0, &src.octets());
    acc = checksum::add_bytes(acc, &dst.octets());
    acc = checksum::add16(acc, (len >> 16) as u16);
    acc = checksum::add16(acc, len as u16);
    checksum::add16(acc, u16::from(next_header))
}

/// The solicited-node multicast address of `addr` (RFC 4291 section 2.7.1).
pub fn solicited_node(addr: &Ipv6Addr) -> Ipv6Addr {
    let o = addr.octets();
    Ipv6Addr::new(0xff02, 0, 0, 0, 0, 1, 0xff00 | u16::from(o[13]), u16::from_be_bytes([o[14], o[15]]))
}
