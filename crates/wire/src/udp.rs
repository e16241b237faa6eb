//! UDP headers and checksums over the IPv4 and IPv6 pseudo-headers.

use crate::{checksum, ipv4, ipv6};
use std::net::{Ipv4Addr, Ipv6Addr};

pub const HDR_LEN: usize = 8;

/// Write a UDP header with a zero checksum; the caller fills the payload and then the checksum.
pub fn write_header(buf: &mut [u8], sport: u16, dport: u16, udp_len: usize) -> Option<()> {
    let len = u16::try_from(udp_len).ok()?;
    let h = buf.get_mut(..HDR_LEN)?;
    h[0..2].copy_from_slice(&sport.to_be_bytes());
    h[2..4].copy_from_slice(&dport.to_be_bytes());
    h[4..6].copy_from_slice(&len.to_be_bytes());
    h[6..8].copy_from_slice(&[0, 0]);
    Some(())
}

/// The UDP checksum of `udp` (header with a zero checksum field, and payload) over IPv4, with
/// the zero rule applied.
pub fn checksum_v4(src: Ipv4Addr, dst: Ipv4Addr, udp: &[u8]) -> u16 {
    let len = udp.len() as u16;
    let acc = ipv4::pseudo_header_sum(src, dst, ipv4::PROTO_UDP, len);
    checksum::udp_nonzero(checksum::finish(checksum::add_bytes(acc, udp)))
}

/// The UDP checksum of `udp` over IPv6, with the zero rule applied.
pub fn checksum_v6(src: &Ipv6Addr, dst: &Ipv6Addr, udp: &[u8]) -> u16 {
    let acc = ipv6::pseudo_header_sum(src, dst, ipv6::NH_UDP, udp.len() as u32);
    checksum::udp_nonzero(checksum::finish(checksum::add_bytes(acc, udp)))
}

/// The parsed UDP header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub sport: u16,
    pub dport: u16,
    pub len: usize,
    pub checksum: u16,
}

pub fn parse(b: &[u8]) -> Option<Header> {
    let len = usize::from(crate::be16(b, 4)?);
    if len < HDR_LEN || len > b.len() {
        return None;
    }
    Some(Header {
        sport: crate::be16(b, 0)?,
        dport: crate::be16(b, 2)?,
        len,
        checksum: crate::be16(b, 6)?,
    })
}
