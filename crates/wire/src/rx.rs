//! Classifying a received frame: a test frame (with its 64-bit field), an ARP packet, a
//! neighbour solicitation or advertisement, or something else. Never panics.

use crate::arp::{self, Arp};
use crate::eth::{self, MacAddr};
use crate::ndp::{self, Nd};
use crate::{ipv4, ipv6, payload, udp};

/// What a received frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rx {
    /// A test frame: UDP over IPv4 or IPv6 whose payload starts with `IDENTIFY`.
    Test {
        v6: bool,
        field: u64,
    },
    Arp {
        eth_src: MacAddr,
        arp: Arp,
    },
    Nd {
        eth_src: MacAddr,
        nd: Nd,
    },
    Other,
}

/// Classify `frame` (starting at the Ethernet header, without FCS).
///
/// The test-frame path is the fast path: it reads only the EtherType, the IP header length or
/// next header, and the signature, and does not verify checksums (the DUT would have dropped a
/// corrupt frame; the payload signature guards against foreign traffic).
#[inline]
pub fn classify(frame: &[u8]) -> Rx {
    let Some(et) = crate::be16(frame, 12) else { return Rx::Other };
    let ip = &frame[eth::HDR_LEN.min(frame.len())..];
    match et {
        eth::ETHERTYPE_IPV4 => {
            let Some(&vihl) = ip.first() else { return Rx::Other };
            if vihl >> 4 != 4 || ip.get(9) != Some(&ipv4::PROTO_UDP) {
                return Rx::Other;
            }
            let hl = usize::from(vihl & 0x0f) * 4;
            if hl < ipv4::HDR_LEN {
                return Rx::Other;
            }
            match ip.get(hl + udp::HDR_LEN..).and_then(payload::field) {
                Some(field) => Rx::Test { v6: false, field },
                None => Rx::Other,
            }
        }
        eth::ETHERTYPE_IPV6 => match ip.get(6) {
            Some(&ipv6::NH_UDP) if ip.first().map(|v| v >> 4) == Some(6) => {
                match ip.get(ipv6::HDR_LEN + udp::HDR_LEN..).and_then(payload::field) {
                    Some(field) => Rx::Test { v6: true, field },
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{IpPair, TestFrame};
    use std::net::{Ipv4Addr, Ipv6Addr};

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
            let _ = ipv4::parse(&buf[14..len.max(14)]);
            let _ = ndp::parse(&buf[14..len.max(14)]);
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
