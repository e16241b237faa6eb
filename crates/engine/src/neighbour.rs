//! ARP and NDP on the tester's side of a port: answering the DUT's requests for the tester's
//! addresses, resolving the DUT's MAC, and announcing the tester's addresses so the DUT needs no
//! static neighbour entries.

use std::net::{Ipv4Addr, Ipv6Addr};
use xlat_io::TxQueue;
use xlat_traffic::{Setup, SideId};
use xlat_wire::{arp, ndp, MacAddr, Rx};

/// The neighbour protocol state of one side.
pub struct Neighbour<'a> {
    pub setup: &'a Setup,
    pub side: SideId,
    pub mac: MacAddr,
    /// The DUT's MAC as learnt from an ARP reply or NA for `dut_ipv4`/`dut_ipv6`.
    pub learnt_dut_mac: Option<MacAddr>,
    /// Requests answered.
    pub answered: u64,
}

impl<'a> Neighbour<'a> {
    pub fn new(setup: &'a Setup, side: SideId, mac: MacAddr) -> Self {
        Neighbour {
            setup,
            side,
            mac,
            learnt_dut_mac: None,
            answered: 0,
        }
    }

    /// Handle a received ARP or ND packet: answer requests for our addresses (the answer is
    /// queued on `ctl`), learn the DUT's MAC from replies. Other packets are ignored.
    pub fn handle<T: TxQueue>(&mut self, rx: &Rx, ctl: &mut T) {
        let side = self.setup.side(self.side);
        match rx {
            Rx::Arp { arp: a, .. } => {
                if a.op == arp::OP_REQUEST && self.setup.tester_owns_v4(self.side, a.target_ip) {
                    let reply = arp::reply_to(a, self.mac);
                    if ctl
                        .tx_burst(1, |_, buf| arp::write_frame(buf, a.sender_mac, &reply).unwrap_or(0))
                        .unwrap_or(0)
                        == 1
                    {
                        self.answered += 1;
                    }
                } else if a.op == arp::OP_REPLY && side.dut_ipv4 == Some(a.sender_ip) {
                    self.learnt_dut_mac = Some(a.sender_mac);
                }
                // A request from the DUT's own address also tells us its MAC.
                if a.op == arp::OP_REQUEST && side.dut_ipv4 == Some(a.sender_ip) && self.learnt_dut_mac.is_none() {
                    self.learnt_dut_mac = Some(a.sender_mac);
                }
            }
            Rx::Nd { eth_src, nd } => {
                if nd.icmp_type == ndp::TYPE_NS && self.setup.tester_owns_v6(self.side, nd.target) {
                    let (dst, na) = ndp::advertisement_for(nd, *eth_src, self.mac);
                    if ctl
                        .tx_burst(1, |_, buf| ndp::write_frame(buf, dst, self.mac, &na).unwrap_or(0))
                        .unwrap_or(0)
                        == 1
                    {
                        self.answered += 1;
                    }
                } else if nd.icmp_type == ndp::TYPE_NA && side.dut_ipv6 == Some(nd.target) {
                    self.learnt_dut_mac = nd.lladdr.or(Some(*eth_src));
                }
            }
            _ => {}
        }
    }

    /// Send one request for the DUT's address on this side (ARP for `dut_ipv4` when the side
    /// has one, else NS for `dut_ipv6`), from the first tester address of that family (or the
    /// unspecified/zero address when the tester has none).
    pub fn solicit_dut<T: TxQueue>(&self, ctl: &mut T) -> bool {
        let side = self.setup.side(self.side);
        if let Some(dut) = side.dut_ipv4 {
            let src = self
                .setup
                .tester_addresses_v4(self.side)
                .first()
                .copied()
                .or(side.ipv4_real)
                .unwrap_or(Ipv4Addr::UNSPECIFIED);
            let req = arp::request(self.mac, src, dut);
            return ctl
                .tx_burst(1, |_, b| arp::write_frame(b, MacAddr::BROADCAST, &req).unwrap_or(0))
                .unwrap_or(0)
                == 1;
        }
        if let Some(dut) = side.dut_ipv6 {
            let src = self
                .setup
                .tester_addresses_v6(self.side)
                .first()
                .copied()
                .or(side.ipv6_real)
                .unwrap_or(Ipv6Addr::UNSPECIFIED);
            let (dst, ns) = ndp::solicitation(src, self.mac, dut);
            return ctl
                .tx_burst(1, |_, b| ndp::write_frame(b, dst, self.mac, &ns).unwrap_or(0))
                .unwrap_or(0)
                == 1;
        }
        false
    }

    /// Announce every tester address of this side to the DUT: an ARP request to the DUT from
    /// each IPv4 address and an NS with our link-layer address from each IPv6 address. A Linux
    /// DUT creates a neighbour entry for the sender of a request addressed to itself. Sends at
    /// most `burst` frames per call, continuing from `*cursor`; returns true when all are sent.
    pub fn announce<T: TxQueue>(&self, ctl: &mut T, cursor: &mut usize, burst: usize, v4: &[Ipv4Addr], v6: &[Ipv6Addr]) -> bool {
        let side = self.setup.side(self.side);
        let dut_mac = side.dut_mac.or(self.learnt_dut_mac);
        let end = v4.len() + v6.len();
        let mut sent = 0;
        while *cursor < end && sent < burst {
            let i = *cursor;
            let ok = if i < v4.len() {
                match side.dut_ipv4 {
                    Some(dut) => {
                        let req = arp::request(self.mac, v4[i], dut);
                        let dst = dut_mac.unwrap_or(MacAddr::BROADCAST);
                        ctl.tx_burst(1, |_, b| arp::write_frame(b, dst, &req).unwrap_or(0)).unwrap_or(0) == 1
                    }
                    None => true,
                }
            } else {
                match side.dut_ipv6 {
                    Some(dut) => {
                        let (mcast, ns) = ndp::solicitation(v6[i - v4.len()], self.mac, dut);
                        let dst = dut_mac.unwrap_or(mcast);
                        ctl.tx_burst(1, |_, b| ndp::write_frame(b, dst, self.mac, &ns).unwrap_or(0))
                            .unwrap_or(0)
                            == 1
                    }
                    None => true,
                }
            };
            if !ok {
                break; // the control ring is full: go on next call
            }
            *cursor += 1;
            sent += 1;
        }
        *cursor >= end
    }
}
