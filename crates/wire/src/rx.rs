//! Classifying a received frame: a test frame (with its 64-bit field), an ARP packet, a
//! neighbour solicitation or advertisement, or something else. Never panics.

use crate::arp::{self, Arp};
use crate::eth::{self, MacAddr};
use crate::ndp::{self, Nd};
use crate::{checksum, ipv4, ipv6, payload, udp};

/// What a received frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rx {
    /// A test frame: UDP over IPv4 or IPv6 whose payload starts with `IDENTIFY`.
    Test {
        /// True over IPv6.
        v6: bool,
        /// The payload's 64-bit field.
        field: u64,
    },
    /// An ARP packet.
    Arp {
        /// The Ethernet source.
        eth_src: MacAddr,
        /// The packet.
        arp: Arp,
    },
    /// A neighbour solicitation or advertisement.
    Nd {
        /// The Ethernet source.
        eth_src: MacAddr,
        /// The message.
        nd: Nd,
    },
    /// A frame with the test signature whose IPv4 header checksum, UDP checksum or lengths do
    /// not verify: corrupted on the way, never counted as a received test frame.
    Corrupt {
        /// True over IPv6.
        v6: bool,
    },
    /// Anything else.
    Other,
}

/// Classify `frame` (starting at the Ethernet header, without FCS).
///
/// The test-frame path is the fast path: it reads the EtherType, the IP header length or next
/// header and the signature, and then verifies the lengths and checksums (IPv4 header, RFC 791
/// section 3.1; UDP over the pseudo-header, RFC 768 and RFC 8200 section 8.1): a DUT that
/// corrupts frames must not have them counted as received.
#[inline]
pub fn classify(frame: &[u8]) -> Rx {
    let Some(et) = crate::bytes::be16(frame, eth::field::ETHERTYPE.start) else {
        return Rx::Other;
    };
    let ip = &frame[eth::HDR_LEN.min(frame.len())..];
    match et {
        eth::ETHERTYPE_IPV4 => classify_v4(ip),
        eth::ETHERTYPE_IPV6 => match ip.get(ipv6::field::NXT_HDR) {
            // IPv4 in IPv6 (RFC 2473): an IPv4 test frame through a softwire (DS-Lite's AFTR
            // to its B4), counted as the IPv4 frame it carries.
            Some(&crate::frame::NH_IPV4) if ip.get(ipv6::field::VER_TC_FLOW.start).map(|v| v >> 4) == Some(6) => {
                classify_v4(ip.get(ipv6::HDR_LEN..).unwrap_or(&[]))
            }
            Some(&ipv6::NH_UDP) if ip.get(ipv6::field::VER_TC_FLOW.start).map(|v| v >> 4) == Some(6) => {
                match ip.get(ipv6::HDR_LEN + udp::HDR_LEN..).and_then(payload::field) {
                    Some(field) if v6_intact(ip) => Rx::Test { v6: true, field },
                    Some(_) => Rx::Corrupt { v6: true },
                    None => Rx::Other,
                }
            }
            Some(&ipv6::NH_ICMPV6) => match (eth::parse(frame), ndp::parse(ip)) {
                (Some(h), Some(nd)) => Rx::Nd { eth_src: h.src, nd },
                _ => Rx::Other,
            },
            _ => Rx::Other,
        },
        eth::ETHERTYPE_ARP => match (eth::parse(frame), arp::parse(ip)) {
            (Some(h), Some(a)) => Rx::Arp { eth_src: h.src, arp: a },
            _ => Rx::Other,
        },
        _ => Rx::Other,
    }
}

/// [`classify`] of the IPv4 packet `ip` (after the Ethernet header, or after an outer IPv6
/// header).
#[inline]
fn classify_v4(ip: &[u8]) -> Rx {
    let Some(&vihl) = ip.get(ipv4::field::VER_IHL) else {
        return Rx::Other;
    };
    if vihl >> 4 != 4 || ip.get(ipv4::field::PROTOCOL) != Some(&ipv4::PROTO_UDP) {
        return Rx::Other;
    }
    let hl = usize::from(vihl & 0x0f) * 4;
    if hl < ipv4::HDR_LEN {
        return Rx::Other;
    }
    match ip.get(hl + udp::HDR_LEN..).and_then(payload::field) {
        Some(field) if v4_intact(ip, hl) => Rx::Test { v6: false, field },
        Some(_) => Rx::Corrupt { v6: false },
        None => Rx::Other,
    }
}

/// The source and destination of an IPv4 or IPv6 UDP frame: (source address, destination
/// address, source port, destination port). For a frame that [`classify`] found to be an intact
/// test frame (the Responder of a stateful test learns these); `None` for anything else.
#[inline]
pub fn udp_tuple(frame: &[u8]) -> Option<(std::net::IpAddr, std::net::IpAddr, u16, u16)> {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    let ip = frame.get(eth::HDR_LEN..)?;
    let (src, dst, udp) = match crate::bytes::be16(frame, eth::field::ETHERTYPE.start)? {
        eth::ETHERTYPE_IPV4 => {
            let hl = usize::from(ip.first()? & 0x0f) * 4;
            if hl < ipv4::HDR_LEN || *ip.get(ipv4::field::PROTOCOL)? != ipv4::PROTO_UDP {
                return None;
            }
            let a = |r: core::ops::Range<usize>| -> Option<IpAddr> {
                let b: [u8; 4] = ip.get(r)?.try_into().ok()?;
                Some(IpAddr::V4(Ipv4Addr::from(b)))
            };
            (a(ipv4::field::SRC_ADDR)?, a(ipv4::field::DST_ADDR)?, ip.get(hl..)?)
        }
        eth::ETHERTYPE_IPV6 => {
            if *ip.get(ipv6::field::NXT_HDR)? != ipv6::NH_UDP {
                return None;
            }
            let a = |r: core::ops::Range<usize>| -> Option<IpAddr> {
                let b: [u8; 16] = ip.get(r)?.try_into().ok()?;
                Some(IpAddr::V6(Ipv6Addr::from(b)))
            };
            (a(ipv6::field::SRC_ADDR)?, a(ipv6::field::DST_ADDR)?, ip.get(ipv6::HDR_LEN..)?)
        }
        _ => return None,
    };
    Some((
        src,
        dst,
        crate::bytes::be16(udp, udp::field::SRC_PORT.start)?,
        crate::bytes::be16(udp, udp::field::DST_PORT.start)?,
    ))
}

/// The UDP datagram at `udp` (as long as its length field says, which must match `ip_says`)
/// and the pseudo-header sum `pseudo` verify; a zero checksum means none over IPv4
/// (`zero_ok`), and over IPv6 the datagram is discarded (RFC 8200 8.1), even when its bytes
/// add up: 0x0000 and 0xffff are the same one's complement value, and a translator that writes
/// 0x0000 where 0xffff belongs (TAYGA 0.9.2 does, 1 frame in 65,536) sends a frame an IPv6
/// host drops, which the tester must not count as received.
#[inline]
fn udp_intact(udp: &[u8], ip_says: usize, pseudo: u32, zero_ok: bool) -> bool {
    let Some(len) = crate::bytes::be16(udp, udp::field::LENGTH.start) else {
        return false;
    };
    if usize::from(len) != ip_says || udp.len() != ip_says {
        return false;
    }
    if udp.get(udp::field::CHECKSUM) == Some(&[0, 0]) {
        return zero_ok;
    }
    let acc = checksum::add16(checksum::add16(pseudo, checksum::sum(udp)), len);
    checksum::fold(acc) == 0xffff
}

/// IPv4: total length within the frame, header checksum, UDP length and checksum.
#[inline]
fn v4_intact(ip: &[u8], hl: usize) -> bool {
    let Some(total) = crate::bytes::be16(ip, ipv4::field::LENGTH.start).map(usize::from) else {
        return false;
    };
    if total < hl {
        return false;
    }
    let (Some(h), Some(dgram)) = (ip.get(..hl), ip.get(hl..total)) else {
        return false;
    };
    if checksum::sum(h) != 0xffff {
        return false;
    }
    let addrs = &h[ipv4::field::SRC_ADDR.start..ipv4::field::DST_ADDR.end];
    let pseudo = checksum::add16(u32::from(checksum::sum(addrs)), u16::from(ipv4::PROTO_UDP));
    udp_intact(dgram, total - hl, pseudo, true)
}

/// IPv6: payload length within the frame, UDP length and checksum (mandatory over IPv6).
#[inline]
fn v6_intact(ip: &[u8]) -> bool {
    let Some(plen) = crate::bytes::be16(ip, ipv6::field::LENGTH.start).map(usize::from) else {
        return false;
    };
    let addrs = ip.get(ipv6::field::SRC_ADDR.start..ipv6::field::DST_ADDR.end);
    let (Some(addrs), Some(dgram)) = (addrs, ip.get(ipv6::HDR_LEN..ipv6::HDR_LEN + plen)) else {
        return false;
    };
    let pseudo = checksum::add16(u32::from(checksum::sum(addrs)), u16::from(ipv6::NH_UDP));
    udp_intact(dgram, plen, pseudo, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{IpPair, TestFrame};
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn the_tuple_of_a_test_frame() {
        let mut f = TestFrame {
            eth_dst: crate::MacAddr([2, 0, 0, 0, 0, 2]),
            eth_src: crate::MacAddr([2, 0, 0, 0, 0, 1]),
            ip: IpPair::V4 {
                src: Ipv4Addr::new(198, 19, 0, 1),
                dst: Ipv4Addr::new(198, 19, 0, 2),
            },
            sport: 40_001,
            dport: 53,
            frame_size: 64,
            field: 5,
            tunnel: None,
        };
        let mut b = [0u8; 60];
        f.write(&mut b).unwrap();
        assert_eq!(
            udp_tuple(&b),
            Some((Ipv4Addr::new(198, 19, 0, 1).into(), Ipv4Addr::new(198, 19, 0, 2).into(), 40_001, 53))
        );
        f.ip = IpPair::V6 {
            src: "2001:2::1".parse().unwrap(),
            dst: "2001:2::2".parse().unwrap(),
        };
        f.frame_size = 84;
        let mut b6 = [0u8; 80];
        f.write(&mut b6).unwrap();
        let (a, z): (Ipv6Addr, Ipv6Addr) = ("2001:2::1".parse().unwrap(), "2001:2::2".parse().unwrap());
        assert_eq!(udp_tuple(&b6), Some((a.into(), z.into(), 40_001, 53)));
        assert_eq!(udp_tuple(&b[..20]), None);
        assert_eq!(udp_tuple(&b6[..40]), None);
    }

    /// A test frame whose UDP checksum is 0xffff (its bytes add up to zero), written with
    /// 0x0000 instead: over IPv4 that says "no checksum" and the frame counts; over IPv6 it is
    /// forbidden (RFC 8200 8.1) and the frame is corrupted, though its sum still verifies.
    #[test]
    fn a_zero_udp_checksum_is_none_over_ipv4_and_corruption_over_ipv6() {
        for v6 in [false, true] {
            let ip = if v6 {
                IpPair::V6 {
                    src: "2001:2:0:4646::c612:2".parse().unwrap(),
                    dst: "2001:2:0:6464::c613:2".parse().unwrap(),
                }
            } else {
                IpPair::V4 {
                    src: Ipv4Addr::new(198, 18, 0, 2),
                    dst: Ipv4Addr::new(198, 19, 0, 2),
                }
            };
            // Find a field value that makes the checksum 0xffff (one in 65,536).
            let mut buf = [0u8; 128];
            let mut found = None;
            for field in 0u64..1 << 20 {
                let t = TestFrame {
                    eth_src: MacAddr([2, 0, 0, 0, 0, 1]),
                    eth_dst: MacAddr([2, 0, 0, 0, 0, 2]),
                    ip,
                    sport: 10_233,
                    dport: 352,
                    frame_size: if v6 { 84 } else { 64 },
                    field,
                    tunnel: None,
                };
                let layout = t.write(&mut buf).unwrap();
                if buf[layout.udp_checksum..layout.udp_checksum + 2] == [0xff, 0xff] {
                    found = Some((field, layout));
                    break;
                }
            }
            let (field, layout) = found.expect("a frame with checksum 0xffff");
            let good = &mut buf[..layout.len];
            assert!(matches!(classify(good), Rx::Test { field: f, .. } if f == field));
            good[layout.udp_checksum..layout.udp_checksum + 2].copy_from_slice(&[0, 0]);
            if v6 {
                assert_eq!(classify(good), Rx::Corrupt { v6: true });
            } else {
                assert!(matches!(classify(good), Rx::Test { field: f, .. } if f == field));
            }
        }
    }

    #[test]
    fn any_corrupted_byte_of_a_test_frame_is_not_a_received_test_frame() {
        let pairs = [
            IpPair::V4 {
                src: Ipv4Addr::new(198, 18, 0, 2),
                dst: Ipv4Addr::new(198, 19, 0, 2),
            },
            IpPair::V6 {
                src: "2001:2::2".parse::<Ipv6Addr>().unwrap(),
                dst: "2001:2:0:8000::2".parse::<Ipv6Addr>().unwrap(),
            },
        ];
        for ip in pairs {
            for size in [84usize, 128, 1538] {
                let size = if matches!(ip, IpPair::V4 { .. }) { size - 20 } else { size };
                let t = TestFrame {
                    eth_src: MacAddr([2, 0, 0, 0, 0, 1]),
                    eth_dst: MacAddr([2, 0, 0, 0, 0, 2]),
                    ip,
                    sport: 1234,
                    dport: 5678,
                    frame_size: size,
                    field: 0x0100_0000_0000_002a,
                    tunnel: None,
                };
                let mut buf = vec![0u8; 2048];
                let n = t.write(&mut buf).unwrap().len;
                let good = &buf[..n];
                assert!(matches!(
                    classify(good),
                    Rx::Test {
                        field: 0x0100_0000_0000_002a,
                        ..
                    }
                ));
                // IPv6's traffic class, flow label and hop limit are covered by no checksum (a
                // router changes the hop limit): the version nibble and everything else are.
                let unchecked = |i: usize| matches!(ip, IpPair::V6 { .. }) && matches!(i - eth::HDR_LEN, 1..=3 | 7);
                for i in (eth::HDR_LEN..n).filter(|&i| !unchecked(i)) {
                    let mut f = good.to_vec();
                    f[i] ^= 0x5a;
                    assert!(!matches!(classify(&f), Rx::Test { .. }), "{ip:?} size {size}: byte {i} flipped");
                }
                // Trailing Ethernet padding beyond the IP length is not the datagram's.
                let mut padded = good.to_vec();
                padded.extend_from_slice(&[0xee; 6]);
                assert!(matches!(classify(&padded), Rx::Test { .. }));
            }
        }
    }

    /// IPv4 in IPv6 (RFC 2473): the IPv4 test frame it carries is received, over IPv4; a
    /// corrupted byte of it is not; an outer header of another version or next header is not
    /// a test frame; the outer addresses are covered by no checksum.
    #[test]
    fn a_test_frame_in_a_softwire_is_received_as_its_ipv4_frame() {
        let t = TestFrame {
            eth_src: MacAddr([2, 0, 0, 0, 0, 1]),
            eth_dst: MacAddr([2, 0, 0, 0, 0, 2]),
            ip: IpPair::V4 {
                src: Ipv4Addr::new(198, 19, 0, 2),
                dst: Ipv4Addr::new(198, 18, 0, 2),
            },
            sport: 53,
            dport: 10_000,
            frame_size: 104,
            field: 77,
            tunnel: Some(crate::frame::Tunnel {
                src: "2001:2::1".parse().unwrap(),
                dst: "2001:2::2".parse().unwrap(),
            }),
        };
        let mut buf = [0u8; 100];
        let n = t.write(&mut buf).unwrap().len;
        let good = &buf[..n];
        assert_eq!(classify(good), Rx::Test { v6: false, field: 77 });
        for i in eth::HDR_LEN + ipv6::HDR_LEN..n {
            let mut f = good.to_vec();
            f[i] ^= 0x5a;
            assert!(!matches!(classify(&f), Rx::Test { .. }), "inner byte {i} flipped");
        }
        for (i, why) in [(eth::HDR_LEN, "version"), (eth::HDR_LEN + ipv6::field::NXT_HDR, "next header")] {
            let mut f = good.to_vec();
            f[i] ^= 0x20;
            assert_eq!(classify(&f), Rx::Other, "outer {why}");
        }
        let mut f = good.to_vec();
        f[eth::HDR_LEN + ipv6::field::DST_ADDR.end - 1] ^= 0x01;
        assert_eq!(classify(&f), Rx::Test { v6: false, field: 77 });
        for cut in 0..n {
            let _ = classify(&good[..cut]);
        }
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut buf = [0u8; 200];
        for i in 0..300_000usize {
            for b in buf.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
            // Steer a share of the inputs into each parser's path.
            match i % 4 {
                0 => buf[12..14].copy_from_slice(&[0x08, 0x00]),
                1 => buf[12..14].copy_from_slice(&[0x86, 0xdd]),
                2 => buf[12..14].copy_from_slice(&[0x08, 0x06]),
                _ => {}
            }
            if i % 8 == 1 {
                buf[14] = 0x60;
                buf[20] = 58;
            }
            let len = (x as usize) % buf.len();
            let _ = classify(&buf[..len]);
            let _ = eth::parse(&buf[..len]);
            let ip = &buf[eth::HDR_LEN..len.max(eth::HDR_LEN)];
            let _ = ipv4::parse(ip);
            let _ = ipv4::checksum_ok(ip);
            let _ = ipv6::parse(ip);
            let _ = arp::parse(ip);
            let _ = ndp::parse(ip);
            let _ = udp::parse(ip);
            let _ = udp::parse(ip.get(ipv4::HDR_LEN..).unwrap_or_default());
            let _ = udp::parse(ip.get(ipv6::HDR_LEN..).unwrap_or_default());
            let _ = payload::field(ip);
            let _ = crate::pcap::frames(&buf[..len]);
        }
    }

    #[test]
    fn test_frames_and_neighbour_packets_classify() {
        let mut b = [0u8; 256];
        let mut f = TestFrame {
            eth_dst: MacAddr([2, 0, 0, 0, 0, 1]),
            eth_src: MacAddr([2, 0, 0, 0, 0, 2]),
            ip: IpPair::V4 {
                src: Ipv4Addr::new(198, 18, 0, 2),
                dst: Ipv4Addr::new(198, 19, 0, 2),
            },
            sport: 1,
            dport: 2,
            frame_size: 64,
            field: 0xdead_beef_0102_0304,
            tunnel: None,
        };
        let lay = f.write(&mut b).unwrap();
        assert_eq!(
            classify(&b[..lay.len]),
            Rx::Test {
                v6: false,
                field: 0xdead_beef_0102_0304
            }
        );
        f.ip = IpPair::V6 {
            src: "2001:2::2".parse().unwrap(),
            dst: "2001:2:0:8000::2".parse().unwrap(),
        };
        f.frame_size = 84;
        let lay = f.write(&mut b).unwrap();
        assert_eq!(
            classify(&b[..lay.len]),
            Rx::Test {
                v6: true,
                field: 0xdead_beef_0102_0304
            }
        );
        // A corrupted signature is not a test frame.
        b[62] ^= 1;
        assert_eq!(classify(&b[..lay.len]), Rx::Other);

        let me = MacAddr([2, 0, 0, 0, 0, 9]);
        let req = arp::request(me, Ipv4Addr::new(198, 18, 0, 2), Ipv4Addr::new(198, 18, 0, 1));
        let n = arp::write_frame(&mut b, MacAddr::BROADCAST, &req).unwrap();
        assert_eq!(classify(&b[..n]), Rx::Arp { eth_src: me, arp: req });

        let target: Ipv6Addr = "2001:2::1".parse().unwrap();
        let (dst_mac, ns) = ndp::solicitation("2001:2::2".parse().unwrap(), me, target);
        let n = ndp::write_frame(&mut b, dst_mac, me, &ns).unwrap();
        assert_eq!(&b[..6], &[0x33, 0x33, 0xff, 0, 0, 1]);
        assert_eq!(classify(&b[..n]), Rx::Nd { eth_src: me, nd: ns });
        let (na_mac, na) = ndp::advertisement_for(&ns, me, MacAddr([2, 0, 0, 0, 0, 1]));
        assert_eq!(na_mac, me);
        let n = ndp::write_frame(&mut b, na_mac, MacAddr([2, 0, 0, 0, 0, 1]), &na).unwrap();
        match classify(&b[..n]) {
            Rx::Nd { nd, .. } => {
                assert_eq!(nd.icmp_type, ndp::TYPE_NA);
                assert_eq!(nd.target, target);
                assert_eq!(nd.lladdr, Some(MacAddr([2, 0, 0, 0, 0, 1])));
            }
            other => panic!("{other:?}"),
        }
        // An NS from the unspecified address has no link-layer option and still parses.
        let dad = Nd {
            src: Ipv6Addr::UNSPECIFIED,
            lladdr: None,
            ..ns
        };
        let n2 = ndp::write_frame(&mut b, dst_mac, me, &dad).unwrap();
        assert_eq!(n2, ndp::FRAME_LEN - 8);
        assert_eq!(classify(&b[..n2]), Rx::Nd { eth_src: me, nd: dad });
        let n = ndp::write_frame(&mut b, na_mac, MacAddr([2, 0, 0, 0, 0, 1]), &na).unwrap();
        // A bad ICMPv6 checksum is rejected.
        b[14 + 40 + 2] ^= 0xff;
        assert_eq!(classify(&b[..n]), Rx::Other);
    }
}
