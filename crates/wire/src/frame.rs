//! Building test frames: Ethernet II + IPv4 or IPv6 + UDP + the test payload, with valid
//! checksums, and the byte offsets of every field that a per-frame patcher may change.

use crate::eth::{self, MacAddr};
use crate::{ipv4, ipv6, payload, udp, FCS_LEN};
use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

/// The largest frame (with FCS) that xlatperf builds: a 9000-byte jumbo MTU plus Ethernet.
pub const MAX_FRAME_SIZE: usize = 9018;

/// Source and destination addresses of one IP version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpPair {
    V4 { src: Ipv4Addr, dst: Ipv4Addr },
    V6 { src: Ipv6Addr, dst: Ipv6Addr },
}

impl IpPair {
    pub fn is_v6(&self) -> bool {
        matches!(self, IpPair::V6 { .. })
    }

    /// Bytes of Ethernet + IP + UDP + signature + 64-bit field: the smallest frame without FCS.
    pub fn min_frame_len(&self) -> usize {
        eth::HDR_LEN + self.ip_hdr_len() + udp::HDR_LEN + payload::MIN_LEN
    }

    pub fn ip_hdr_len(&self) -> usize {
        if self.is_v6() {
            ipv6::HDR_LEN
        } else {
            ipv4::HDR_LEN
        }
    }
}

/// One test frame's contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestFrame {
    pub eth_dst: MacAddr,
    pub eth_src: MacAddr,
    pub ip: IpPair,
    pub sport: u16,
    pub dport: u16,
    /// The frame size counting the FCS, as RFC 2544 does.
    pub frame_size: usize,
    /// The 64-bit payload field.
    pub field: u64,
}

/// Why a frame cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    TooSmall { frame_size: usize, min: usize },
    TooLarge { frame_size: usize, max: usize },
    BufferTooSmall { need: usize, have: usize },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::TooSmall { frame_size, min } => {
                write!(
                    f,
                    "frame size {frame_size} is too small for this IP version: at least {min} bytes (with FCS)"
                )
            }
            FrameError::TooLarge { frame_size, max } => write!(f, "frame size {frame_size} exceeds {max} bytes"),
            FrameError::BufferTooSmall { need, have } => write!(f, "buffer of {have} bytes cannot hold a {need}-byte frame"),
        }
    }
}

impl std::error::Error for FrameError {}

/// Byte offsets of the fields of a built test frame, for in-place patching.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestFrameLayout {
    /// Frame length without FCS.
    pub len: usize,
    pub is_v6: bool,
    pub ip_src: usize,
    pub ip_dst: usize,
    /// The IPv4 header checksum; `None` for IPv6.
    pub ip_checksum: Option<usize>,
    pub sport: usize,
    pub dport: usize,
    pub udp_checksum: usize,
    /// The 64-bit payload field.
    pub field: usize,
}

impl TestFrame {
    /// The frame's length as handed to a backend (without FCS).
    pub fn len(&self) -> usize {
        self.frame_size.saturating_sub(FCS_LEN)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The layout the frame will have; checks the size limits.
    pub fn layout(&self) -> Result<TestFrameLayout, FrameError> {
        let min = self.ip.min_frame_len().max(60) + FCS_LEN;
        if self.frame_size < min {
            return Err(FrameError::TooSmall {
                frame_size: self.frame_size,
                min,
            });
        }
        if self.frame_size > MAX_FRAME_SIZE {
            return Err(FrameError::TooLarge {
                frame_size: self.frame_size,
                max: MAX_FRAME_SIZE,
            });
        }
        let ip = eth::HDR_LEN;
        let l4 = ip + self.ip.ip_hdr_len();
        let (ip_src, ip_dst, ip_checksum) = if self.ip.is_v6() {
            (ip + 8, ip + 24, None)
        } else {
            (ip + 12, ip + 16, Some(ip + 10))
        };
        Ok(TestFrameLayout {
            len: self.len(),
            is_v6: self.ip.is_v6(),
            ip_src,
            ip_dst,
            ip_checksum,
            sport: l4,
            dport: l4 + 2,
            udp_checksum: l4 + 6,
            field: l4 + udp::HDR_LEN + payload::FIELD_OFFSET,
        })
    }

    /// Write the frame into `buf` with valid checksums; returns its layout.
    pub fn write(&self, buf: &mut [u8]) -> Result<TestFrameLayout, FrameError> {
        let lay = self.layout()?;
        let have = buf.len();
        let f = buf.get_mut(..lay.len).ok_or(FrameError::BufferTooSmall { need: lay.len, have })?;
        let l4 = lay.sport;
        let udp_len = lay.len - l4;
        let bad = FrameError::BufferTooSmall { need: lay.len, have };
        match self.ip {
            IpPair::V4 { src, dst } => {
                eth::write(f, self.eth_dst, self.eth_src, eth::ETHERTYPE_IPV4).ok_or(bad.clone())?;
                ipv4::write(&mut f[eth::HDR_LEN..], src, dst, ipv4::PROTO_UDP, udp_len, ipv4::DEFAULT_TTL, 0).ok_or(bad.clone())?;
            }
            IpPair::V6 { src, dst } => {
                eth::write(f, self.eth_dst, self.eth_src, eth::ETHERTYPE_IPV6).ok_or(bad.clone())?;
                ipv6::write(&mut f[eth::HDR_LEN..], src, dst, ipv6::NH_UDP, udp_len, ipv6::DEFAULT_HOP_LIMIT).ok_or(bad.clone())?;
            }
        }
        udp::write_header(&mut f[l4..], self.sport, self.dport, udp_len).ok_or(bad.clone())?;
        payload::write(&mut f[l4 + udp::HDR_LEN..], self.field).ok_or(bad)?;
        let c = match self.ip {
            IpPair::V4 { src, dst } => udp::checksum_v4(src, dst, &f[l4..]),
            IpPair::V6 { src, dst } => udp::checksum_v6(&src, &dst, &f[l4..]),
        };
        f[lay.udp_checksum..lay.udp_checksum + 2].copy_from_slice(&c.to_be_bytes());
        Ok(lay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checksum;

    fn v4(size: usize) -> TestFrame {
        TestFrame {
            eth_dst: MacAddr([2, 0, 0, 0, 0, 1]),
            eth_src: MacAddr([2, 0, 0, 0, 0, 2]),
            ip: IpPair::V4 {
                src: Ipv4Addr::new(198, 18, 0, 2),
                dst: Ipv4Addr::new(198, 19, 0, 2),
            },
            sport: 0xc020,
            dport: 0x0007,
            frame_size: size,
            field: 42,
        }
    }

    #[test]
    fn sizes_count_the_fcs() {
        let mut b = [0u8; 2048];
        let lay = v4(64).write(&mut b).unwrap();
        assert_eq!(lay.len, 60);
        assert!(v4(63).write(&mut b).is_err());
        let mut f6 = v4(84);
        f6.ip = IpPair::V6 {
            src: "2001:2::2".parse().unwrap(),
            dst: "2001:2:0:8000::2".parse().unwrap(),
        };
        assert_eq!(f6.write(&mut b).unwrap().len, 80);
        f6.frame_size = 81;
        assert!(matches!(f6.write(&mut b), Err(FrameError::TooSmall { min: 82, .. })));
        assert!(matches!(v4(1518).write(&mut [0u8; 100]), Err(FrameError::BufferTooSmall { .. })));
    }

    #[test]
    fn checksums_verify() {
        let mut b = [0u8; 2048];
        for size in [64, 65, 128, 1518] {
            let f = v4(size);
            let lay = f.write(&mut b).unwrap();
            assert!(ipv4::checksum_ok(&b[14..lay.len]));
            let acc = ipv4::pseudo_header_sum(
                Ipv4Addr::new(198, 18, 0, 2),
                Ipv4Addr::new(198, 19, 0, 2),
                17,
                (lay.len - 34) as u16,
            );
            assert_eq!(checksum::fold(checksum::add_bytes(acc, &b[34..lay.len])), 0xffff);
        }
    }
}
