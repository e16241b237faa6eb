//! IPv4 headers without options (RFC 791 section 3.1, "Internet Header Format").

use crate::checksum;
use std::net::Ipv4Addr;

/// Byte ranges of the IPv4 header's fields (RFC 791 section 3.1).
pub mod field {
    use core::ops::Range;
    /// Version (high 4 bits) and IHL, the header length in 32-bit words (low 4 bits).
    pub const VER_IHL: usize = 0;
    /// Type of service (DSCP and ECN).
    pub const TOS: usize = 1;
    /// Total length: header and data, in bytes.
    pub const LENGTH: Range<usize> = 2..4;
    /// Identification.
    pub const IDENT: Range<usize> = 4..6;
    /// Flags (3 bits) and fragment offset.
    pub const FLG_OFF: Range<usize> = 6..8;
    /// Time to live.
    pub const TTL: usize = 8;
    /// Protocol of the data (17: UDP).
    pub const PROTOCOL: usize = 9;
    /// Header checksum.
    pub const CHECKSUM: Range<usize> = 10..12;
    /// Source address.
    pub const SRC_ADDR: Range<usize> = 12..16;
    /// Destination address.
    pub const DST_ADDR: Range<usize> = 16..20;
}

/// The length of a header without options: the end of its last field.
pub const HDR_LEN: usize = field::DST_ADDR.end;
/// The protocol number of UDP.
pub const PROTO_UDP: u8 = 17;
/// The TTL xlatperf sends with.
pub const DEFAULT_TTL: u8 = 64;

/// The fields of an IPv4 header that xlatperf writes and reads. Fields it leaves out are zero
/// when written (type of service, flags and fragment offset: DF clear, not a fragment) and not
/// checked when parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The header length in bytes (IHL × 4); [`write()`] writes only [`HDR_LEN`], no options.
    pub header_len: usize,
    /// The total length of the packet (header and data) in bytes.
    pub total_len: usize,
    /// The identification.
    pub ident: u16,
    /// The time to live.
    pub ttl: u8,
    /// The protocol of the data.
    pub proto: u8,
    /// The source address.
    pub src: Ipv4Addr,
    /// The destination address.
    pub dst: Ipv4Addr,
}

impl Header {
    /// The header of a packet from `src` to `dst` with `payload_len` bytes of protocol `proto`,
    /// no options, [`DEFAULT_TTL`] and identification 0.
    pub fn new(src: Ipv4Addr, dst: Ipv4Addr, proto: u8, payload_len: usize) -> Header {
        Header {
            header_len: HDR_LEN,
            total_len: HDR_LEN.saturating_add(payload_len),
            ident: 0,
            ttl: DEFAULT_TTL,
            proto,
            src,
            dst,
        }
    }
}

/// Write `h` as a 20-byte header (no options, DF clear) with a valid header checksum. `None`
/// when `buf` is shorter than [`HDR_LEN`], `h.header_len` is not [`HDR_LEN`], or `h.total_len`
/// does not fit the length field.
pub fn write(buf: &mut [u8], h: &Header) -> Option<()> {
    if h.header_len != HDR_LEN || h.total_len < HDR_LEN {
        return None;
    }
    let total = u16::try_from(h.total_len).ok()?;
    let b = buf.get_mut(..HDR_LEN)?;
    b[field::VER_IHL] = 0x40 | (HDR_LEN / 4) as u8;
    b[field::TOS] = 0;
    b[field::LENGTH].copy_from_slice(&total.to_be_bytes());
    b[field::IDENT].copy_from_slice(&h.ident.to_be_bytes());
    b[field::FLG_OFF].copy_from_slice(&0u16.to_be_bytes());
    b[field::TTL] = h.ttl;
    b[field::PROTOCOL] = h.proto;
    b[field::CHECKSUM].copy_from_slice(&[0, 0]);
    b[field::SRC_ADDR].copy_from_slice(&h.src.octets());
    b[field::DST_ADDR].copy_from_slice(&h.dst.octets());
    let c = checksum::finish(checksum::add_bytes(0, b));
    b[field::CHECKSUM].copy_from_slice(&c.to_be_bytes());
    Some(())
}

/// Parse an IPv4 header at the start of `b` (the Ethernet payload). Checks the version, the
/// header length and that the total length fits in `b`; does not check the checksum
/// ([`checksum_ok`] does).
pub fn parse(b: &[u8]) -> Option<Header> {
    let v = *b.get(field::VER_IHL)?;
    if v >> 4 != 4 {
        return None;
    }
    let header_len = usize::from(v & 0x0f) * 4;
    let total_len = usize::from(crate::bytes::be16(b, field::LENGTH.start)?);
    if header_len < HDR_LEN || total_len < header_len || total_len > b.len() {
        return None;
    }
    let a = |r: core::ops::Range<usize>| Ipv4Addr::new(b[r.start], b[r.start + 1], b[r.start + 2], b[r.start + 3]);
    Some(Header {
        header_len,
        total_len,
        ident: crate::bytes::be16(b, field::IDENT.start)?,
        ttl: b[field::TTL],
        proto: b[field::PROTOCOL],
        src: a(field::SRC_ADDR),
        dst: a(field::DST_ADDR),
    })
}

/// True when the header checksum of the IPv4 header at the start of `b` verifies.
pub fn checksum_ok(b: &[u8]) -> bool {
    match parse(b) {
        Some(h) => checksum::fold(checksum::add_bytes(0, &b[..h.header_len])) == 0xffff,
        None => false,
    }
}

/// The one's complement sum of the IPv4 pseudo-header for an upper-layer checksum (RFC 768).
pub fn pseudo_header_sum(src: Ipv4Addr, dst: Ipv4Addr, proto: u8, len: u16) -> u32 {
    let mut acc = checksum::add_bytes(0, &src.octets());
    acc = checksum::add_bytes(acc, &dst.octets());
    acc = checksum::add16(acc, u16::from(proto));
    checksum::add16(acc, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real header: UDP from 198.18.0.2 to 198.19.0.2, total length 46, identification
    /// 0x1c46, DF set, TTL 64 (checksum 0x924f).
    const FIXTURE: [u8; 20] = [
        0x45, 0x00, 0x00, 0x2e, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x11, 0x92, 0x4f, 0xc6, 0x12, 0x00, 0x02, 0xc6, 0x13, 0x00, 0x02,
    ];

    #[test]
    fn fixture_parses_and_every_prefix_is_none() {
        let mut b = FIXTURE.to_vec();
        b.resize(46, 0);
        let h = parse(&b).unwrap();
        assert_eq!(
            h,
            Header {
                header_len: 20,
                total_len: 46,
                ident: 0x1c46,
                ttl: 64,
                proto: PROTO_UDP,
                src: Ipv4Addr::new(198, 18, 0, 2),
                dst: Ipv4Addr::new(198, 19, 0, 2),
            }
        );
        assert!(checksum_ok(&b));
        // Shorter than the header, or than the total length it announces.
        for n in 0..b.len() {
            assert_eq!(parse(&b[..n]), None, "{n} bytes");
        }
    }

    #[test]
    fn a_written_header_parses_back() {
        let mut h = Header::new(Ipv4Addr::new(198, 18, 0, 2), Ipv4Addr::new(198, 19, 0, 2), PROTO_UDP, 26);
        h.ident = 0x1c46;
        let mut b = [0u8; 46];
        write(&mut b, &h).unwrap();
        assert_eq!(parse(&b), Some(h));
        assert!(checksum_ok(&b));
        // The fixture differs only in its DF flag, and so in its checksum.
        let mut f = FIXTURE;
        f[field::FLG_OFF.start] = 0;
        f[field::CHECKSUM].copy_from_slice(&[0xd2, 0x4f]);
        assert_eq!(b[..HDR_LEN], f);
    }

    #[test]
    fn write_refuses_what_it_cannot_write() {
        let h = Header::new(Ipv4Addr::LOCALHOST, Ipv4Addr::LOCALHOST, PROTO_UDP, 8);
        assert_eq!(write(&mut [0u8; HDR_LEN - 1], &h), None);
        assert_eq!(write(&mut [0u8; 64], &Header { header_len: 24, ..h }), None);
        assert_eq!(write(&mut [0u8; 64], &Header { total_len: 65_536, ..h }), None);
        assert_eq!(write(&mut [0u8; 64], &Header { total_len: 19, ..h }), None);
        assert_eq!(write(&mut [0u8; 64], &Header::new(h.src, h.dst, PROTO_UDP, 65_515)), Some(()));
    }
}
