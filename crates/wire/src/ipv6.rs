//! IPv6 headers without extension headers (RFC 8200 section 3, "IPv6 Header Format").

use crate::checksum;
use std::net::Ipv6Addr;

/// Byte ranges of the IPv6 header's fields (RFC 8200 section 3).
pub mod field {
    use core::ops::Range;
    /// Version (4 bits), traffic class (8 bits) and flow label (20 bits).
    pub const VER_TC_FLOW: Range<usize> = 0..4;
    /// Payload length: the bytes after this header.
    pub const LENGTH: Range<usize> = 4..6;
    /// Next header (17: UDP, 58: ICMPv6).
    pub const NXT_HDR: usize = 6;
    /// Hop limit.
    pub const HOP_LIMIT: usize = 7;
    /// Source address.
    pub const SRC_ADDR: Range<usize> = 8..24;
    /// Destination address.
    pub const DST_ADDR: Range<usize> = 24..40;
}

/// The length of the fixed header: the end of its last field.
pub const HDR_LEN: usize = field::DST_ADDR.end;
/// The next-header number of UDP.
pub const NH_UDP: u8 = 17;
/// The next-header number of ICMPv6.
pub const NH_ICMPV6: u8 = 58;
/// The hop limit xlatperf sends test frames with.
pub const DEFAULT_HOP_LIMIT: u8 = 64;

/// The fields of an IPv6 header that xlatperf writes and reads (traffic class and flow label
/// are written as zero and not read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The payload length in bytes.
    pub payload_len: usize,
    /// The next header.
    pub next_header: u8,
    /// The hop limit.
    pub hop_limit: u8,
    /// The source address.
    pub src: Ipv6Addr,
    /// The destination address.
    pub dst: Ipv6Addr,
}

/// Write `h` as a 40-byte header (traffic class and flow label zero). `None` when `buf` is
/// shorter than [`HDR_LEN`] or the payload length does not fit its field.
pub fn write(buf: &mut [u8], h: &Header) -> Option<()> {
    let plen = u16::try_from(h.payload_len).ok()?;
    let b = buf.get_mut(..HDR_LEN)?;
    b[field::VER_TC_FLOW].copy_from_slice(&[0x60, 0, 0, 0]);
    b[field::LENGTH].copy_from_slice(&plen.to_be_bytes());
    b[field::NXT_HDR] = h.next_header;
    b[field::HOP_LIMIT] = h.hop_limit;
    b[field::SRC_ADDR].copy_from_slice(&h.src.octets());
    b[field::DST_ADDR].copy_from_slice(&h.dst.octets());
    Some(())
}

/// Parse an IPv6 header at the start of `b`; checks the version and that the payload fits.
pub fn parse(b: &[u8]) -> Option<Header> {
    let h = b.get(..HDR_LEN)?;
    if h[field::VER_TC_FLOW.start] >> 4 != 6 {
        return None;
    }
    let payload_len = usize::from(crate::bytes::be16(h, field::LENGTH.start)?);
    if HDR_LEN + payload_len > b.len() {
        return None;
    }
    let a = |r: core::ops::Range<usize>| {
        let mut x = [0u8; 16];
        x.copy_from_slice(&h[r]);
        Ipv6Addr::from(x)
    };
    Some(Header {
        payload_len,
        next_header: h[field::NXT_HDR],
        hop_limit: h[field::HOP_LIMIT],
        src: a(field::SRC_ADDR),
        dst: a(field::DST_ADDR),
    })
}

/// The one's complement sum of the IPv6 pseudo-header (RFC 8200 section 8.1) for an
/// upper-layer packet of `len` bytes with next header `next_header`.
pub fn pseudo_header_sum(src: &Ipv6Addr, dst: &Ipv6Addr, next_header: u8, len: u32) -> u32 {
    let mut acc = checksum::add_bytes(0, &src.octets());
    acc = checksum::add_bytes(acc, &dst.octets());
    acc = checksum::add16(acc, (len >> 16) as u16);
    acc = checksum::add16(acc, len as u16);
    checksum::add16(acc, u16::from(next_header))
}

/// The solicited-node multicast address of `addr` (RFC 4291 section 2.7.1): ff02::1:ff00:0/104
/// and the low 24 bits of `addr`.
pub fn solicited_node(addr: &Ipv6Addr) -> Ipv6Addr {
    let o = addr.octets();
    Ipv6Addr::new(0xff02, 0, 0, 0, 0, 1, 0xff00 | u16::from(o[13]), u16::from_be_bytes([o[14], o[15]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real header: UDP from 2001:2::2 to 2001:2:0:8000::2, payload length 26, traffic class
    /// 0xb8 (EF) and flow label 0x12345, which the parser does not read, hop limit 64.
    const FIXTURE: [u8; 40] = [
        0x6b, 0x81, 0x23, 0x45, 0x00, 0x1a, 0x11, 0x40, //
        0x20, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, //
        0x20, 0x01, 0x00, 0x02, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
    ];

    fn fixture_header() -> Header {
        Header {
            payload_len: 26,
            next_header: NH_UDP,
            hop_limit: 64,
            src: "2001:2::2".parse().unwrap(),
            dst: "2001:2:0:8000::2".parse().unwrap(),
        }
    }

    #[test]
    fn fixture_parses_and_every_prefix_is_none() {
        let mut b = FIXTURE.to_vec();
        b.resize(HDR_LEN + 26, 0);
        assert_eq!(parse(&b), Some(fixture_header()));
        // Shorter than the header, or than the payload it announces.
        for n in 0..b.len() {
            assert_eq!(parse(&b[..n]), None, "{n} bytes");
        }
        b[0] = 0x45;
        assert_eq!(parse(&b), None, "version 4");
    }

    #[test]
    fn a_written_header_parses_back() {
        let h = fixture_header();
        let mut b = [0u8; HDR_LEN + 26];
        write(&mut b, &h).unwrap();
        assert_eq!(parse(&b), Some(h));
        // The fixture without its traffic class and flow label.
        assert_eq!(b[field::VER_TC_FLOW], [0x60, 0, 0, 0]);
        assert_eq!(b[field::LENGTH.start..HDR_LEN], FIXTURE[field::LENGTH.start..]);
        assert_eq!(write(&mut b[..HDR_LEN - 1], &h), None);
        assert_eq!(write(&mut b, &Header { payload_len: 65_536, ..h }), None);
    }

    #[test]
    fn solicited_node_takes_the_low_24_bits() {
        let a: Ipv6Addr = "2001:2::1:2:3:abcd:ef01".parse().unwrap();
        assert_eq!(solicited_node(&a), "ff02::1:ffcd:ef01".parse::<Ipv6Addr>().unwrap());
    }
}
