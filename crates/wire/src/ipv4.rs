//! IPv4 headers without options.

use crate::checksum;
use std::net::Ipv4Addr;

pub const HDR_LEN: usize = 20;
pub const PROTO_UDP: u8 = 17;
pub const DEFAULT_TTL: u8 = 64;

/// Write a 20-byte IPv4 header (no options, DF clear, identification `id`) carrying
/// `payload_len` bytes of protocol `proto`, with a valid header checksum.
pub fn write(buf: &mut [u8], src: Ipv4Addr, dst: Ipv4Addr, proto: u8, payload_len: usize, ttl: u8, id: u16) -> Option<()> {
    let total = u16::try_from(HDR_LEN.checked_add(payload_len)?).ok()?;
    let h = buf.get_mut(..HDR_LEN)?;
    h[0] = 0x45;
    h[1] = 0;
    h[2..4].copy_from_slice(&total.to_be_bytes());
    h[4..6].copy_from_slice(&id.to_be_bytes());
    h[6..8].copy_from_slice(&0u16.to_be_bytes());
    h[8] = ttl;
    h[9] = proto;
    h[10..12].copy_from_slice(&[0, 0]);
    h[12..16].copy_from_slice(&src.octets());
    h[16..20].copy_from_slice(&dst.octets());
    let c = checksum::finish(checksum::add_bytes(0, h));
    h[10..12].copy_from_slice(&c.to_be_bytes());
    Some(())
}

/// The parsed fields of an IPv4 header that xlatperf uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub header_len: usize,
    pub total_len: usize,
    pub ttl: u8,
    pub proto: u8,
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
}

/// Parse an IPv4 header at the start of `b` (the Ethernet payload). Checks the version, the
/// header length and that the total length fits in `b`; does not check the checksum.
pub fn parse(b: &[u8]) -> Option<Header> {
    let v = *b.first()?;
    if v >> 4 != 4 {
        return None;
    }
    let header_len = usize::from(v & 0x0f) * 4;
    let total_len = usize::from(crate::be16(b, 2)?);
    if header_len < HDR_LEN || total_len < header_len || total_len > b.len() {
        return None;
    }
    let a = |o: usize| Ipv4Addr::new(b[o], b[o + 1], b[o + 2], b[o + 3]);
    Some(Header {
        header_len,
        total_len,
        ttl: b[8],
        proto: b[9],
        src: a(12),
        dst: a(16),
    })
}

/// True when the header checksum of the IPv4 header at the start of `b` verifies.
pub fn checksum_ok(b: &[u8]) -> bool {
    match parse(b) {
        Some(h) => checksum::fold(checksum::add_bytes(0, &b[..h.header_len])) == 0xffff,
        None => false,
    }
}

/// The one's complement sum of the IPv4 pseudo-header for an upper-layer checksum.
pub fn pseudo_header_sum(src: Ipv4Addr, dst: Ipv4Addr, proto: u8, len: u16) -> u32 {
    let mut acc = checksum::add_bytes(0, &src.octets());
    acc = checksum::add_bytes(acc, &dst.octets());
    acc = checksum::add16(acc, u16::from(proto));
    checksum::add16(acc, len)
}
