//! One side's port as the tester holds it: its queue sets and the MACs its frames use.

use super::error::Res;
use crate::neighbour::Neighbour;
use xlat_io::{Port, Queues, RxQueue, TxQueue, RX_BURST};
use xlat_traffic::SideId;
use xlat_wire::{classify, MacAddr};

/// One side's port with the MACs its frames use.
pub(super) struct SidePort<P: Port> {
    pub(super) id: SideId,
    pub(super) name: String,
    pub(super) mac: MacAddr,
    pub(super) dut_mac: Option<MacAddr>,
    /// Its queue sets (one per queue of a multi-queue port).
    pub(super) q: Vec<Queues<P::Tx, P::Rx>>,
}

impl<P: Port> SidePort<P> {
    /// Turn on the port's own stamps on every traffic queue (transmit and receive).
    pub(super) fn enable_stamps(&mut self) -> Res<()> {
        for set in &mut self.q {
            set.tx.enable_stamps()?;
            set.rx.enable_stamps()?;
        }
        Ok(())
    }

    /// Take what every receive queue holds, handing ARP/NDP to `nb` (answers go out on the
    /// control queue of the set the request came in on).
    pub(super) fn poll_control(&mut self, nb: &mut Neighbour<'_>) -> Res<()> {
        for set in &mut self.q {
            set.rx.rx_burst(RX_BURST, |f| nb.handle(&classify(f), &mut set.ctl))?;
        }
        Ok(())
    }
}
