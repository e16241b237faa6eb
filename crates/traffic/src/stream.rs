//! The frames of one direction: templates built once, and a per-frame patcher that writes only
//! what changes (the 64-bit sequence field, later the varying ports and addresses) and updates
//! the checksums incrementally (RFC 1624).

use crate::setup::{AddrPair, Direction, MissingAddress, Setup};
use xlat_wire::checksum;
use xlat_wire::frame::{IpPair, TestFrame, TestFrameLayout};
use xlat_wire::MacAddr;

/// Why a direction's frames cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    #[error("{0}")]
    Missing(#[from] MissingAddress),
    #[error("{0}")]
    Frame(String),
}

/// A pre-built frame and where its fields are.
#[derive(Debug, Clone)]
struct Template {
    bytes: Vec<u8>,
    layout: TestFrameLayout,
    /// The UDP checksum with the 64-bit field zero.
    udp_csum: u16,
}

impl Template {
    fn build(frame: TestFrame) -> Result<Template, StreamError> {
        let mut bytes = vec![0u8; frame.len()];
        let layout = frame.write(&mut bytes).map_err(|e| StreamError::Frame(e.to_string()))?;
        let udp_csum = u16::from_be_bytes([bytes[layout.udp_checksum], bytes[layout.udp_checksum + 1]]);
        Ok(Template { bytes, layout, udp_csum })
    }
}

/// The frames one sender sends for one direction.
#[derive(Debug, Clone)]
pub struct DirectionStream {
    pub direction: Direction,
    foreground: Option<Template>,
    background: Option<Template>,
    n: u64,
    m: u64,
}

fn ip_pair(a: AddrPair) -> IpPair {
    match a {
        AddrPair::V4(src, dst) => IpPair::V4 { src, dst },
        AddrPair::V6(src, dst) => IpPair::V6 { src, dst },
    }
}

impl DirectionStream {
    /// Build the templates of direction `d`. `ipv6_frame_size` is siitperf's size parameter:
    /// IPv6 frames have it, IPv4 frames are 20 bytes shorter (both counting the FCS).
    pub fn new(setup: &Setup, d: Direction, ipv6_frame_size: usize, src_mac: MacAddr, dst_mac: MacAddr) -> Result<Self, StreamError> {
        let ports = setup.ports(d);
        let sport = if ports.sport.variation.is_fixed() { crate::RFC2544_SPORT } else { ports.sport.min };
        let dport = if ports.dport.variation.is_fixed() { crate::RFC2544_DPORT } else { ports.dport.min };
        let make = |pair: AddrPair| {
            let ip = ip_pair(pair);
            let frame_size = if ip.is_v6() { ipv6_frame_size } else { ipv6_frame_size.saturating_sub(20) };
            Template::build(TestFrame { eth_dst: dst_mac, eth_src: src_mac, ip, sport, dport, frame_size, field: 0 })
        };
        let foreground = if setup.has_foreground() { Some(make(setup.foreground_addresses(d)?)?) } else { None };
        let background = if setup.has_background() { Some(make(setup.background_addresses(d)?)?) } else { None };
        Ok(DirectionStream { direction: d, foreground, background, n: u64::from(setup.fg_n.max(1)), m: u64::from(setup.fg_m) })
    }

    /// True when frame `seq` is a foreground frame (`seq % n < m`).
    #[inline]
    pub fn is_foreground(&self, seq: u64) -> bool {
        seq % self.n < self.m
    }

    /// The longest frame this stream writes.
    pub fn max_len(&self) -> usize {
        [&self.foreground, &self.background].iter().filter_map(|t| t.as_ref().map(|t| t.bytes.len())).max().unwrap_or(0)
    }

    /// Write frame `seq` into `buf` and return its length (0 when `buf` is too short).
    #[inline]
    pub fn write_frame(&self, seq: u64, buf: &mut [u8]) -> usize {
        let t = if self.is_foreground(seq) { self.foreground.as_ref() } else { self.background.as_ref() };
        let Some(t) = t else { return 0 };
        let len = t.bytes.len();
        let Some(out) = buf.get_mut(..len) else { return 0 };
        out.copy_from_slice(&t.bytes);
        let f = t.layout.field;
        out[f..f + 8].copy_from_slice(&seq.to_be_bytes());
        let c = checksum::udp_nonzero(checksum::update64(t.udp_csum, 0, seq));
        let c_off = t.layout.udp_checksum;
        out[c_off..c_off + 2].copy_from_slice(&c.to_be_bytes());
        len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setup::*;
    use xlat_wire::{classify, Rx};

    pub(crate) fn router_setup(v: IpVersion) -> Setup {
        let mut left = Side::new(v);
        let mut right = Side::new(v);
        left.ipv4_real = Some("198.18.0.2".parse().unwrap());
        right.ipv4_real = Some("198.19.0.2".parse().unwrap());
        left.ipv6_real = Some("2001:2::2".parse().unwrap());
        right.ipv6_real = Some("2001:2:0:8000::2".parse().unwrap());
        Setup {
            left,
            right,
            forward: true,
            reverse: true,
            forward_ports: PortSpec::default(),
            reverse_ports: PortSpec::default(),
            fg_n: 2,
            fg_m: 2,
            stateful: StatefulSpec::default(),
            seed: Some(1),
            allow_foreign_addresses: false,
        }
    }

    #[test]
    fn patched_frames_have_valid_checksums_and_sequence() {
        let s = router_setup(IpVersion::V4);
        let st = DirectionStream::new(&s, Direction::Forward, 84, MacAddr([2, 0, 0, 0, 0, 1]), MacAddr([2, 0, 0, 0, 0, 2])).unwrap();
        let mut buf = [0u8; 2048];
        for seq in [0u64, 1, 0xffff, 0x1_0000_0000, u64::MAX, 0x0123_4567_89ab_cdef] {
            let len = st.write_frame(seq, &mut buf);
            assert_eq!(len, 60);
            assert_eq!(classify(&buf[..len]), Rx::Test { v6: false, field: seq });
            let f = TestFrame {
                eth_dst: MacAddr([2, 0, 0, 0, 0, 2]),
                eth_src: MacAddr([2, 0, 0, 0, 0, 1]),
                ip: IpPair::V4 { src: "198.18.0.2".parse().unwrap(), dst: "198.19.0.2".parse().unwrap() },
                sport: RFC2544_SPORT,
                dport: RFC2544_DPORT,
                frame_size: 64,
                field: seq,
            };
            let mut full = [0u8; 60];
            f.write(&mut full).unwrap();
            assert_eq!(&buf[..60], &full[..], "seq {seq:#x}");
        }
    }

    #[test]
    fn background_mix_follows_n_m() {
        let mut s = router_setup(IpVersion::V4);
        s.fg_n = 10;
        s.fg_m = 9;
        let st = DirectionStream::new(&s, Direction::Reverse, 84, MacAddr([2, 0, 0, 0, 0, 1]), MacAddr([2, 0, 0, 0, 0, 2])).unwrap();
        let mut buf = [0u8; 256];
        let v6: Vec<bool> = (0..20)
            .map(|i| {
                let n = st.write_frame(i, &mut buf);
                match classify(&buf[..n]) {
                Rx::Test { v6, .. } => v6,
                other => panic!("{other:?}"),
                }
            })
            .collect();
        assert_eq!(v6.iter().filter(|b| **b).count(), 2);
        assert!(v6[9] && v6[19]);
        // 84-byte IPv6 background frames next to 64-byte IPv4 foreground frames.
        assert_eq!(st.write_frame(9, &mut buf), 80);
        assert_eq!(st.write_frame(0, &mut buf), 60);
    }

    #[test]
    fn missing_address_is_named() {
        let mut s = router_setup(IpVersion::V6);
        s.right.ipv6_real = None;
        let e = DirectionStream::new(&s, Direction::Forward, 84, MacAddr::ZERO, MacAddr::ZERO).unwrap_err();
        assert_eq!(e.to_string(), "IPv6-R-Real is needed but not set");
    }
}
