//! UDP headers (RFC 768) and their checksums over the IPv4 pseudo-header (RFC 768) and the
//! IPv6 pseudo-header (RFC 8200 section 8.1).

use crate::{checksum, ipv4, ipv6};
use std::net::{Ipv4Addr, Ipv6Addr};

/// Byte ranges of the UDP header's fields (RFC 768, "Format").
pub mod field {
    use core::ops::Range;
    /// Source port.
    pub const SRC_PORT: Range<usize> = 0..2;
    /// Destination port.
    pub const DST_PORT: Range<usize> = 2..4;
    /// Length of header and data, in bytes.
    pub const LENGTH: Range<usize> = 4..6;
    /// Checksum over the pseudo-header, the header and the data.
    pub const CHECKSUM: Range<usize> = 6..8;
}

/// The length of the header: the end of its last field.
pub const HDR_LEN: usize = field::CHECKSUM.end;

/// The UDP header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The source port.
    pub sport: u16,
    /// The destination port.
    pub dport: u16,
    /// The length of header and data in bytes.
    pub len: usize,
    /// The checksum field as it is on the wire (0: none, over IPv4).
    pub checksum: u16,
}

/// Write `h` at the start of `buf`. A builder writes a zero checksum first, fills the payload,
/// and then writes the checksum computed by [`checksum_v4`] or [`checksum_v6`] into
/// [`field::CHECKSUM`]. `None` when `buf` is shorter than [`HDR_LEN`] or `h.len` does not fit
/// the length field.
pub fn write(buf: &mut [u8], h: &Header) -> Option<()> {
    let len = u16::try_from(h.len).ok()?;
    let b = buf.get_mut(..HDR_LEN)?;
    b[field::SRC_PORT].copy_from_slice(&h.sport.to_be_bytes());
    b[field::DST_PORT].copy_from_slice(&h.dport.to_be_bytes());
    b[field::LENGTH].copy_from_slice(&len.to_be_bytes());
    b[field::CHECKSUM].copy_from_slice(&h.checksum.to_be_bytes());
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

/// Parse the UDP header at the start of `b` (the IP payload); checks that the length field is
/// at least [`HDR_LEN`] and within `b`, not the checksum (the receive path, `rx::classify`,
/// verifies it).
pub fn parse(b: &[u8]) -> Option<Header> {
    let len = usize::from(crate::bytes::be16(b, field::LENGTH.start)?);
    if len < HDR_LEN || len > b.len() {
        return None;
    }
    Some(Header {
        sport: crate::bytes::be16(b, field::SRC_PORT.start)?,
        dport: crate::bytes::be16(b, field::DST_PORT.start)?,
        len,
        checksum: crate::bytes::be16(b, field::CHECKSUM.start)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real datagram: RFC 2544's ports 0xc020 to 7, 12 bytes long, checksum 0x1234.
    const FIXTURE: [u8; 12] = [0xc0, 0x20, 0x00, 0x07, 0x00, 0x0c, 0x12, 0x34, 1, 2, 3, 4];

    #[test]
    fn fixture_parses_and_every_prefix_is_none() {
        let h = Header {
            sport: 0xc020,
            dport: 7,
            len: 12,
            checksum: 0x1234,
        };
        assert_eq!(parse(&FIXTURE), Some(h));
        // Shorter than the header, or than the length it announces.
        for n in 0..FIXTURE.len() {
            assert_eq!(parse(&FIXTURE[..n]), None, "{n} bytes");
        }
        let mut short = FIXTURE;
        short[field::LENGTH].copy_from_slice(&7u16.to_be_bytes());
        assert_eq!(parse(&short), None, "a length below the header's");
    }

    #[test]
    fn a_written_header_parses_back() {
        let h = Header {
            sport: 0xc020,
            dport: 7,
            len: 12,
            checksum: 0x1234,
        };
        let mut b = [0u8; 12];
        write(&mut b, &h).unwrap();
        assert_eq!(parse(&b), Some(h));
        assert_eq!(b[..HDR_LEN], FIXTURE[..HDR_LEN]);
        assert_eq!(write(&mut b[..HDR_LEN - 1], &h), None);
        assert_eq!(write(&mut b, &Header { len: 65_536, ..h }), None);
    }

    #[test]
    fn checksums_verify_and_are_never_zero() {
        let (s4, d4) = (Ipv4Addr::new(198, 18, 0, 2), Ipv4Addr::new(198, 19, 0, 2));
        let (s6, d6): (Ipv6Addr, Ipv6Addr) = ("2001:2::2".parse().unwrap(), "2001:2:0:8000::2".parse().unwrap());
        let mut d = FIXTURE;
        d[field::CHECKSUM].fill(0);
        let c = checksum_v4(s4, d4, &d);
        d[field::CHECKSUM].copy_from_slice(&c.to_be_bytes());
        let acc = ipv4::pseudo_header_sum(s4, d4, ipv4::PROTO_UDP, 12);
        assert_eq!(checksum::fold(checksum::add_bytes(acc, &d)), 0xffff);
        d[field::CHECKSUM].fill(0);
        let c = checksum_v6(&s6, &d6, &d);
        d[field::CHECKSUM].copy_from_slice(&c.to_be_bytes());
        let acc = ipv6::pseudo_header_sum(&s6, &d6, ipv6::NH_UDP, 12);
        assert_eq!(checksum::fold(checksum::add_bytes(acc, &d)), 0xffff);
        // Data whose checksum computes to zero is sent with all ones instead (RFC 768; over
        // IPv6 zero is not allowed, RFC 8200 section 8.1).
        d[field::CHECKSUM].fill(0);
        let w = (0..=u16::MAX)
            .find(|w| {
                d[HDR_LEN..HDR_LEN + 2].copy_from_slice(&w.to_be_bytes());
                checksum::finish(checksum::add_bytes(acc, &d)) == 0
            })
            .expect("a payload word that makes the sum zero");
        d[HDR_LEN..HDR_LEN + 2].copy_from_slice(&w.to_be_bytes());
        assert_eq!(checksum_v6(&s6, &d6, &d), 0xffff);
    }
}
