//! ARP for IPv4 over Ethernet (RFC 826).

use crate::eth::{self, MacAddr};
use std::net::Ipv4Addr;

pub const LEN: usize = 28;
pub const OP_REQUEST: u16 = 1;
pub const OP_REPLY: u16 = 2;
/// An ARP frame is padded to the Ethernet minimum of 60 bytes (64 with the FCS).
pub const FRAME_LEN: usize = 60;

/// The fields of an ARP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arp {
    pub op: u16,
    pub sender_mac: MacAddr,
    pub sender_ip: Ipv4Addr,
    pub target_mac: MacAddr,
    pub target_ip: Ipv4Addr,
}

/// Write a whole ARP frame (Ethernet header, ARP, padding) into `buf`; returns its length.
pub fn write_frame(buf: &mut [u8], eth_dst: MacAddr, a: &Arp) -> Option<usize> {
    let f = buf.get_mut(..FRAME_LEN)?;
    eth::write(f, eth_dst, a.sender_mac, eth::ETHERTYPE_ARP)?;
    let p = &mut f[eth::HDR_LEN..];
    p[0..2].copy_from_slice(&1u16.to_be_bytes());
    p[2..4].copy_from_slice(&eth::ETHERTYPE_IPV4.to_be_bytes());
    p[4] = 6;
    p[5] = 4;
    p[6..8].copy_from_slice(&a.op.to_be_bytes());
    p[8..14].copy_from_slice(&a.sender_mac.0);
    p[14..18].copy_from_slice(&a.sender_ip.octets());
    p[18..24].copy_from_slice(&a.target_mac.0);
    p[24..28].copy_from_slice(&a.target_ip.octets());
    p[28..].fill(0);
    Some(FRAME_LEN)
}

/// Parse an ARP packet (the Ethernet payload) for IPv4 over Ethernet.
pub fn parse(p: &[u8]) -> Option<Arp> {
    let p = p.get(..LEN)?;
    if p[0..2] != [0, 1] || p[2..4] != eth::ETHERTYPE_IPV4.to_be_bytes() || p[4] != 6 || p[5] != 4 {
        return None;
    }
    let mac = |o: usize| {
        let mut m = [0u8; 6];
        m.copy_from_slice(&p[o..o + 6]);
        MacAddr(m)
    };
    let ip = |o: usize| Ipv4Addr::new(p[o], p[o + 1], p[o + 2], p[o + 3]);
    Some(Arp {
        op: u16::from_be_bytes([p[6], p[7]]),
        sender_mac: mac(8),
        sender_ip: ip(14),
        target_mac: mac(18),
        target_ip: ip(24),
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
