//! Ethernet II headers and MAC addresses.

use std::fmt;
use std::str::FromStr;

pub const HDR_LEN: usize = 14;
pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_ARP: u16 = 0x0806;
pub const ETHERTYPE_IPV6: u16 = 0x86dd;

/// A 48-bit MAC address.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    pub const BROADCAST: MacAddr = MacAddr([0xff; 6]);
    pub const ZERO: MacAddr = MacAddr([0; 6]);

    /// The multicast MAC of an IPv6 multicast address (RFC 2464 section 7): 33:33 and the low 32
    /// bits of the address.
    pub fn ipv6_multicast(addr: &std::net::Ipv6Addr) -> MacAddr {
        let o = addr.octets();
        MacAddr([0x33, 0x33, o[12], o[13], o[14], o[15]])
    }

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
    h[0..6].copy_from_slice(&dst.0);
    h[6..12].copy_from_slice(&src.0);
    h[12..14].copy_from_slice(&ethertype.to_be_bytes());
    Some(())
}

/// The parsed Ethernet II header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub dst: MacAddr,
    pub src: MacAddr,
    pub ethertype: u16,
}

pub fn parse(b: &[u8]) -> Option<Header> {
    let h = b.get(..HDR_LEN)?;
    let mut dst = [0u8; 6];
    let mut src = [0u8; 6];
    dst.copy_from_slice(&h[0..6]);
    src.copy_from_slice(&h[6..12]);
    Some(Header {
        dst: MacAddr(dst),
        src: MacAddr(src),
        ethertype: u16::from_be_bytes([h[12], h[13]]),
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
}
