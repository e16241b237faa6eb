//! ARP for IPv4 over Ethernet (RFC 826, "Packet format").

use crate::eth::{self, MacAddr};
use std::net::Ipv4Addr;

/// Byte ranges of the fields of an ARP packet for IPv4 over Ethernet (RFC 826).
pub mod field {
    use core::ops::Range;
    /// Hardware type (1: Ethernet).
    pub const HTYPE: Range<usize> = 0..2;
    /// Protocol type (the EtherType of IPv4).
    pub const PTYPE: Range<usize> = 2..4;
    /// Hardware address length (6).
    pub const HLEN: usize = 4;
    /// Protocol address length (4).
    pub const PLEN: usize = 5;
    /// Operation (1: request, 2: reply).
    pub const OPER: Range<usize> = 6..8;
    /// Sender hardware address.
    pub const SHA: Range<usize> = 8..14;
    /// Sender protocol address.
    pub const SPA: Range<usize> = 14..18;
    /// Target hardware address.
    pub const THA: Range<usize> = 18..24;
    /// Target protocol address.
    pub const TPA: Range<usize> = 24..28;
}

/// The length of an ARP packet for IPv4 over Ethernet: the end of its last field.
pub const LEN: usize = field::TPA.end;
/// Hardware type Ethernet.
pub const HTYPE_ETHERNET: u16 = 1;
/// Operation: request.
pub const OP_REQUEST: u16 = 1;
/// Operation: reply.
pub const OP_REPLY: u16 = 2;
/// An ARP frame is padded to the Ethernet minimum of 60 bytes (64 with the FCS).
pub const FRAME_LEN: usize = eth::MIN_FRAME_LEN;

/// The fields of an ARP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arp {
    /// The operation ([`OP_REQUEST`], [`OP_REPLY`]).
    pub op: u16,
    /// The sender's hardware address.
    pub sender_mac: MacAddr,
    /// The sender's IPv4 address.
    pub sender_ip: Ipv4Addr,
    /// The target's hardware address (zero in a request).
    pub target_mac: MacAddr,
    /// The target's IPv4 address.
    pub target_ip: Ipv4Addr,
}

/// Write a whole ARP frame (Ethernet header, ARP, padding) into `buf`; returns its length.
pub fn write_frame(buf: &mut [u8], eth_dst: MacAddr, a: &Arp) -> Option<usize> {
    let f = buf.get_mut(..FRAME_LEN)?;
    eth::write(f, eth_dst, a.sender_mac, eth::ETHERTYPE_ARP)?;
    let p = &mut f[eth::HDR_LEN..];
    p[field::HTYPE].copy_from_slice(&HTYPE_ETHERNET.to_be_bytes());
    p[field::PTYPE].copy_from_slice(&eth::ETHERTYPE_IPV4.to_be_bytes());
    p[field::HLEN] = 6;
    p[field::PLEN] = 4;
    p[field::OPER].copy_from_slice(&a.op.to_be_bytes());
    p[field::SHA].copy_from_slice(&a.sender_mac.0);
    p[field::SPA].copy_from_slice(&a.sender_ip.octets());
    p[field::THA].copy_from_slice(&a.target_mac.0);
    p[field::TPA].copy_from_slice(&a.target_ip.octets());
    p[LEN..].fill(0);
    Some(FRAME_LEN)
}

/// Parse an ARP packet (the Ethernet payload) for IPv4 over Ethernet.
pub fn parse(p: &[u8]) -> Option<Arp> {
    let p = p.get(..LEN)?;
    if p[field::HTYPE] != HTYPE_ETHERNET.to_be_bytes()
        || p[field::PTYPE] != eth::ETHERTYPE_IPV4.to_be_bytes()
        || p[field::HLEN] != 6
        || p[field::PLEN] != 4
    {
        return None;
    }
    let mac = |r: core::ops::Range<usize>| {
        let mut m = [0u8; 6];
        m.copy_from_slice(&p[r]);
        MacAddr(m)
    };
    let ip = |r: core::ops::Range<usize>| Ipv4Addr::new(p[r.start], p[r.start + 1], p[r.start + 2], p[r.start + 3]);
    Some(Arp {
        op: crate::bytes::be16(p, field::OPER.start)?,
        sender_mac: mac(field::SHA),
        sender_ip: ip(field::SPA),
        target_mac: mac(field::THA),
        target_ip: ip(field::TPA),
    })
}

/// A broadcast request: who has `target_ip`? tell `sender_ip` at `sender_mac`.
pub fn request(sender_mac: MacAddr, sender_ip: Ipv4Addr, target_ip: Ipv4Addr) -> Arp {
    Arp {
        op: OP_REQUEST,
        sender_mac,
        sender_ip,
        target_mac: MacAddr::ZERO,
        target_ip,
    }
}

/// The reply to request `req` from the owner of `req.target_ip`, whose MAC is `mac`.
pub fn reply_to(req: &Arp, mac: MacAddr) -> Arp {
    Arp {
        op: OP_REPLY,
        sender_mac: mac,
        sender_ip: req.target_ip,
        target_mac: req.sender_mac,
        target_ip: req.sender_ip,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real request: who has 198.18.0.1? tell 198.18.0.2 at 02:00:00:00:01:01.
    const FIXTURE: [u8; LEN] = [
        0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, //
        0x02, 0x00, 0x00, 0x00, 0x01, 0x01, 198, 18, 0, 2, //
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 198, 18, 0, 1,
    ];

    #[test]
    fn fixture_parses_and_every_prefix_is_none() {
        let want = request(
            MacAddr([2, 0, 0, 0, 1, 1]),
            Ipv4Addr::new(198, 18, 0, 2),
            Ipv4Addr::new(198, 18, 0, 1),
        );
        assert_eq!(parse(&FIXTURE), Some(want));
        for n in 0..LEN {
            assert_eq!(parse(&FIXTURE[..n]), None, "{n} bytes");
        }
        // Another hardware or protocol type, or other address lengths, are not ours.
        for (i, v) in [(1, 6), (3, 0xdd), (field::HLEN, 8), (field::PLEN, 16)] {
            let mut b = FIXTURE;
            b[i] = v;
            assert_eq!(parse(&b), None, "byte {i} = {v}");
        }
    }

    #[test]
    fn a_written_frame_parses_back() {
        let req = request(
            MacAddr([2, 0, 0, 0, 1, 1]),
            Ipv4Addr::new(198, 18, 0, 2),
            Ipv4Addr::new(198, 18, 0, 1),
        );
        let mut b = [0xeeu8; FRAME_LEN];
        assert_eq!(write_frame(&mut b, MacAddr::BROADCAST, &req), Some(FRAME_LEN));
        assert_eq!(b[eth::HDR_LEN..eth::HDR_LEN + LEN], FIXTURE);
        assert!(b[eth::HDR_LEN + LEN..].iter().all(|&x| x == 0), "zero padding");
        assert_eq!(parse(&b[eth::HDR_LEN..]), Some(req));
        let rep = reply_to(&req, MacAddr([2, 0, 0, 0, 2, 2]));
        write_frame(&mut b, req.sender_mac, &rep).unwrap();
        assert_eq!(parse(&b[eth::HDR_LEN..]), Some(rep));
        assert_eq!(write_frame(&mut b[..FRAME_LEN - 1], MacAddr::BROADCAST, &req), None);
    }
}
