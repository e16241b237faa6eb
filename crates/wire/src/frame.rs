//! Building test frames: Ethernet II + IPv4 or IPv6 + UDP + the test payload, with valid
//! checksums, and the byte offsets of every field that a per-frame patcher may change.

use crate::eth::FCS_LEN;
use crate::eth::{self, MacAddr};
use crate::{ipv4, ipv6, payload, udp};
use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

/// The largest frame (with FCS) that xlatperf builds: a 9000-byte jumbo MTU plus Ethernet.
pub const MAX_FRAME_SIZE: usize = 9018;

/// Source and destination addresses of one IP version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpPair {
    /// An IPv4 source and destination.
    V4 {
        /// The source address.
        src: Ipv4Addr,
        /// The destination address.
        dst: Ipv4Addr,
    },
    /// An IPv6 source and destination.
    V6 {
        /// The source address.
        src: Ipv6Addr,
        /// The destination address.
        dst: Ipv6Addr,
    },
}

impl IpPair {
    /// True for an IPv6 pair.
    pub fn is_v6(&self) -> bool {
        matches!(self, IpPair::V6 { .. })
    }

    /// Bytes of Ethernet + IP + UDP + signature + 64-bit field: the smallest frame without FCS.
    pub fn min_frame_len(&self) -> usize {
        eth::HDR_LEN + self.ip_hdr_len() + udp::HDR_LEN + payload::MIN_LEN
    }

    /// The length of the IP header (no options, no extension headers).
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
    /// The Ethernet destination.
    pub eth_dst: MacAddr,
    /// The Ethernet source.
    pub eth_src: MacAddr,
    /// The IP version and addresses.
    pub ip: IpPair,
    /// The UDP source port.
    pub sport: u16,
    /// The UDP destination port.
    pub dport: u16,
    /// The frame size counting the FCS, as RFC 2544 does.
    pub frame_size: usize,
    /// The 64-bit payload field.
    pub field: u64,
    /// IPv4 in IPv6 (RFC 2473, as DS-Lite's B4 and lw4o6's and MAP-E's CE send it): the frame's
    /// IPv4 packet behind an outer IPv6 header with these addresses (next header 4). The frame
    /// size is then the outer frame's: the IPv4 packet is 40 bytes shorter.
    pub tunnel: Option<Tunnel>,
}

/// The outer IPv6 header's addresses of an IPv4-in-IPv6 frame (RFC 2473).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tunnel {
    /// The tunnel's near end (a B4's or CE's address).
    pub src: Ipv6Addr,
    /// Its far end (an AFTR's or border relay's address).
    pub dst: Ipv6Addr,
}

/// IPv6's next header for IPv4 (RFC 2473).
pub const NH_IPV4: u8 = 4;
/// IPv6's next header for IPv6 (RFC 2473).
pub const NH_IPV6: u8 = 41;

/// Why a frame cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// The frame size cannot hold the headers and the payload's signature and field.
    TooSmall {
        /// The frame size asked for (with FCS).
        frame_size: usize,
        /// The smallest frame size of this IP version (with FCS).
        min: usize,
    },
    /// The frame size is above [`MAX_FRAME_SIZE`].
    TooLarge {
        /// The frame size asked for (with FCS).
        frame_size: usize,
        /// [`MAX_FRAME_SIZE`].
        max: usize,
    },
    /// The caller's buffer is shorter than the frame.
    BufferTooSmall {
        /// The frame's length (without FCS).
        need: usize,
        /// The buffer's length.
        have: usize,
    },
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
    /// True for an IPv6 frame.
    pub is_v6: bool,
    /// The IP source address.
    pub ip_src: usize,
    /// The IP destination address.
    pub ip_dst: usize,
    /// The IPv4 header checksum; `None` for IPv6.
    pub ip_checksum: Option<usize>,
    /// The UDP source port; also where the UDP header starts.
    pub sport: usize,
    /// The UDP destination port.
    pub dport: usize,
    /// The UDP checksum.
    pub udp_checksum: usize,
    /// The 64-bit payload field.
    pub field: usize,
    /// The outer IPv6 source address of an IPv4-in-IPv6 frame (no checksum covers it).
    pub tunnel_src: Option<usize>,
}

impl TestFrame {
    /// The frame's length as handed to a backend (without FCS).
    pub fn len(&self) -> usize {
        self.frame_size.saturating_sub(FCS_LEN)
    }

    /// True when the frame has no bytes to hand to a backend (a frame size of at most 4).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of the outer IPv6 header, if any.
    fn outer_len(&self) -> usize {
        if self.tunnel.is_some() {
            ipv6::HDR_LEN
        } else {
            0
        }
    }

    /// The layout the frame will have; checks the size limits.
    pub fn layout(&self) -> Result<TestFrameLayout, FrameError> {
        let min = (self.ip.min_frame_len() + self.outer_len()).max(eth::MIN_FRAME_LEN) + FCS_LEN;
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
        let ip = eth::HDR_LEN + self.outer_len();
        let l4 = ip + self.ip.ip_hdr_len();
        let (ip_src, ip_dst, ip_checksum) = if self.ip.is_v6() {
            (ip + ipv6::field::SRC_ADDR.start, ip + ipv6::field::DST_ADDR.start, None)
        } else {
            (
                ip + ipv4::field::SRC_ADDR.start,
                ip + ipv4::field::DST_ADDR.start,
                Some(ip + ipv4::field::CHECKSUM.start),
            )
        };
        Ok(TestFrameLayout {
            len: self.len(),
            is_v6: self.ip.is_v6(),
            ip_src,
            ip_dst,
            ip_checksum,
            sport: l4 + udp::field::SRC_PORT.start,
            dport: l4 + udp::field::DST_PORT.start,
            udp_checksum: l4 + udp::field::CHECKSUM.start,
            field: l4 + udp::HDR_LEN + payload::FIELD_OFFSET,
            tunnel_src: self.tunnel.map(|_| eth::HDR_LEN + ipv6::field::SRC_ADDR.start),
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
        let ip = eth::HDR_LEN + self.outer_len();
        // The frame's first header after Ethernet is IPv6 when it is tunneled or native IPv6.
        let ethertype = if self.tunnel.is_some() || self.ip.is_v6() {
            eth::ETHERTYPE_IPV6
        } else {
            eth::ETHERTYPE_IPV4
        };
        eth::write(f, self.eth_dst, self.eth_src, ethertype).ok_or(bad.clone())?;
        if let Some(t) = self.tunnel {
            let h = ipv6::Header {
                payload_len: lay.len - ip,
                next_header: if self.ip.is_v6() { NH_IPV6 } else { NH_IPV4 },
                hop_limit: ipv6::DEFAULT_HOP_LIMIT,
                src: t.src,
                dst: t.dst,
            };
            ipv6::write(&mut f[eth::HDR_LEN..], &h).ok_or(bad.clone())?;
        }
        match self.ip {
            IpPair::V4 { src, dst } => {
                let h = ipv4::Header::new(src, dst, ipv4::PROTO_UDP, udp_len);
                ipv4::write(&mut f[ip..], &h).ok_or(bad.clone())?;
            }
            IpPair::V6 { src, dst } => {
                let h = ipv6::Header {
                    payload_len: udp_len,
                    next_header: ipv6::NH_UDP,
                    hop_limit: ipv6::DEFAULT_HOP_LIMIT,
                    src,
                    dst,
                };
                ipv6::write(&mut f[ip..], &h).ok_or(bad.clone())?;
            }
        }
        let uh = udp::Header {
            sport: self.sport,
            dport: self.dport,
            len: udp_len,
            checksum: 0,
        };
        udp::write(&mut f[l4..], &uh).ok_or(bad.clone())?;
        payload::write(&mut f[l4 + udp::HDR_LEN..], self.field).ok_or(bad)?;
        let c = match self.ip {
            IpPair::V4 { src, dst } => udp::checksum_v4(src, dst, &f[l4..]),
            IpPair::V6 { src, dst } => udp::checksum_v6(&src, &dst, &f[l4..]),
        };
        f[lay.udp_checksum..lay.udp_checksum + udp::field::CHECKSUM.len()].copy_from_slice(&c.to_be_bytes());
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
            tunnel: None,
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
