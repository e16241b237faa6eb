//! Ethernet II headers (IEEE 802.3 clause 3.2, the "DIX" type field) and MAC addresses.

use std::fmt;
use std::str::FromStr;

/// Byte ranges of the Ethernet II header's fields.
pub mod field {
    use core::ops::Range;
    /// The destination MAC address.
    pub const DESTINATION: Range<usize> = 0..6;
    /// The source MAC address.
    pub const SOURCE: Range<usize> = 6..12;
    /// The EtherType of the payload.
    pub const ETHERTYPE: Range<usize> = 12..14;
}

/// The length of an Ethernet II header (no VLAN tag): where the payload starts.
pub const HDR_LEN: usize = field::ETHERTYPE.end;
/// Length of the Ethernet frame check sequence, which the frame size counts (RFC 2544) but which
/// the backends never see: a 64-byte frame is 60 bytes handed to the NIC.
pub const FCS_LEN: usize = 4;

/// The shortest Ethernet frame without its FCS (64 bytes with it): shorter ones are padded.
pub const MIN_FRAME_LEN: usize = 60;
/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of ARP.
pub const ETHERTYPE_ARP: u16 = 0x0806;
/// EtherType of IPv6.
pub const ETHERTYPE_IPV6: u16 = 0x86dd;

/// A 48-bit MAC address.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    /// ff:ff:ff:ff:ff:ff.
    pub const BROADCAST: MacAddr = MacAddr([0xff; 6]);
    /// 00:00:00:00:00:00, e.g. the unknown target of an ARP request.
    pub const ZERO: MacAddr = MacAddr([0; 6]);

    /// The multicast MAC of an IPv6 multicast address (RFC 2464 section 7): 33:33 and the low 32
    /// bits of the address.
    pub fn ipv6_multicast(addr: &std::net::Ipv6Addr) -> MacAddr {
        let o = addr.octets();
        MacAddr([0x33, 0x33, o[12], o[13], o[14], o[15]])
    }

    /// True for a group address (the I/G bit, the lowest bit of the first byte, set).
    pub fn is_multicast(&self) -> bool {
        self.0[0] & 1 == 1
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5])
    }
}

impl fmt::Debug for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The error of parsing a MAC address from text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MacParseError;

impl fmt::Display for MacParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a MAC address is six hexadecimal bytes separated by ':' or '-', e.g. 02:00:00:00:00:01")
    }
}

impl std::error::Error for MacParseError {}

impl FromStr for MacAddr {
    type Err = MacParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut out = [0u8; 6];
        let mut n = 0;
        for part in s.split([':', '-']) {
            if n == 6 || part.is_empty() || part.len() > 2 {
                return Err(MacParseError);
            }
            out[n] = u8::from_str_radix(part, 16).map_err(|_| MacParseError)?;
            n += 1;
        }
        if n != 6 {
            return Err(MacParseError);
        }
        Ok(MacAddr(out))
    }
}

/// Write an Ethernet II header at the start of `buf`. `buf` must hold at least [`HDR_LEN`] bytes.
pub fn write(buf: &mut [u8], dst: MacAddr, src: MacAddr, ethertype: u16) -> Option<()> {
    let h = buf.get_mut(..HDR_LEN)?;
    h[field::DESTINATION].copy_from_slice(&dst.0);
    h[field::SOURCE].copy_from_slice(&src.0);
    h[field::ETHERTYPE].copy_from_slice(&ethertype.to_be_bytes());
    Some(())
}

/// The parsed Ethernet II header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The destination MAC address.
    pub dst: MacAddr,
    /// The source MAC address.
    pub src: MacAddr,
    /// The EtherType.
    pub ethertype: u16,
}

/// Parse the Ethernet II header at the start of `b`; `None` when `b` is shorter than
/// [`HDR_LEN`].
pub fn parse(b: &[u8]) -> Option<Header> {
    let h = b.get(..HDR_LEN)?;
    let mut dst = [0u8; 6];
    let mut src = [0u8; 6];
    dst.copy_from_slice(&h[field::DESTINATION]);
    src.copy_from_slice(&h[field::SOURCE]);
    Some(Header {
        dst: MacAddr(dst),
        src: MacAddr(src),
        ethertype: crate::bytes::be16(h, field::ETHERTYPE.start)?,
    })
}

#[cfg(feature = "serde")]
impl serde::Serialize for MacAddr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for MacAddr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mac_text_round_trip() {
        let m: MacAddr = "02:0a:FF:00:01:9c".parse().unwrap();
        assert_eq!(m.0, [2, 10, 255, 0, 1, 0x9c]);
        assert_eq!(m.to_string(), "02:0a:ff:00:01:9c");
        assert_eq!("02-0a-ff-00-01-9c".parse::<MacAddr>().unwrap(), m);
        for bad in [
            "",
            "02:0a:ff:00:01",
            "02:0a:ff:00:01:9c:00",
            "02:0a:ff:00:01:zz",
            "020:a:ff:00:01:9c",
            "::::::",
        ] {
            assert!(bad.parse::<MacAddr>().is_err(), "{bad}");
        }
    }

    #[test]
    fn parse_short_is_none() {
        assert!(parse(&[0; 13]).is_none());
        let mut b = [0u8; 14];
        write(&mut b, MacAddr::BROADCAST, MacAddr([2, 0, 0, 0, 0, 1]), ETHERTYPE_ARP).unwrap();
        let h = parse(&b).unwrap();
        assert_eq!(h.ethertype, ETHERTYPE_ARP);
        assert_eq!(h.dst, MacAddr::BROADCAST);
    }

    #[test]
    fn fixture_parses_and_every_prefix_is_none() {
        // The Ethernet header of an IPv6 frame from 02:00:00:00:01:01 to 33:33:ff:00:00:01.
        let b: [u8; 14] = [0x33, 0x33, 0xff, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x01, 0x01, 0x86, 0xdd];
        let h = parse(&b).unwrap();
        assert_eq!(
            h,
            Header {
                dst: MacAddr([0x33, 0x33, 0xff, 0, 0, 1]),
                src: MacAddr([2, 0, 0, 0, 1, 1]),
                ethertype: ETHERTYPE_IPV6,
            }
        );
        assert!(h.dst.is_multicast() && !h.src.is_multicast());
        for n in 0..b.len() {
            assert_eq!(parse(&b[..n]), None, "{n} bytes");
        }
        let mut w = [0u8; 14];
        write(&mut w, h.dst, h.src, h.ethertype).unwrap();
        assert_eq!(w, b);
        assert_eq!(write(&mut w[..13], h.dst, h.src, h.ethertype), None);
    }
}
