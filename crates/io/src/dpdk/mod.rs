//! The `dpdk` backend (cargo feature `dpdk`): DPDK 22.11 ethdev ports, for line rate on real NICs
//! and for the `net_null`, `net_ring` and `net_af_packet` virtual devices in tests.
//!
//! Use: [`eal_init`] once per process with the EAL arguments (for example
//! `--no-pci --vdev net_null0 -l 0`, on hugepages; `--no-huge -m 1024` runs without), then [`DpdkPort::open`] each port by
//! port id (`"0"`) or device name (`"net_null0"`), then [`Port::queues`]. A port has one receive
//! queue and two transmit queues: 0 for traffic, 1 for control frames (ARP/NDP answers).
//!
//! The frame path has no allocation and no system call: a transmit burst takes mbufs from the
//! pool as they are (one bulk get), the caller's fill writes each frame straight into its mbuf,
//! then one `rte_eth_tx_burst`; a receive burst is one `rte_eth_rx_burst` and one bulk free.
//!
//! Recycled mbufs are not reset when their sender cookie says they already hold a frame of the
//! same kind and length (see [`TxQueue::tx_burst_cookie`](crate::TxQueue::tx_burst_cookie)): the cookie and the length sit in a
//! dynamic field of the mbuf's header (`xlat_sender_meta`, in its second cache line, which
//! freeing the mbuf reads anyway), and a non-zero cookie vouches that the mbuf's header is as the
//! sender left it (reset, with that length; drivers do not change the header of a frame they
//! transmit). Every other user of the pool's mbufs clears the cookie: the receive path and the
//! pool's creation; a plain [`TxQueue::tx_burst`](crate::TxQueue::tx_burst) writes cookie 0. So a sender that patches
//! recycled frames touches one header line and the changed bytes of the frame; one that writes a
//! frame whole resets its mbuf in the same pass, visiting each line once. A frame starts up to
//! a cache line before a reset mbuf's data (in the headroom) when that puts the bytes its sender
//! changes per frame into one line ([`TxQueue::place_frames`](crate::TxQueue::place_frames));
//! the metadata keeps that lead with the length, so an mbuf written at another place is reset.
//! Threads that
//! use the queues are registered with EAL on their first burst (and unregistered when they end),
//! so that they get a per-lcore mempool cache as EAL's own lcores do.
//!
//! What is where: `eal` (EAL's arguments and initialisation, the TSC, lcore registration of the
//! threads that call the burst functions), `huge` (hugepages: the host's, what EAL and a
//! mempool need, the errors that say how many), `port` (finding, configuring and starting a port, its
//! mempool and counters, the shared `Device` that closes it), `queues` (the burst functions of
//! [`DpdkTx`] and [`DpdkRx`]), `ffi` (the declarations of DPDK and of the C shim, `csrc/shim.c`).
//! This file joins them: [`Port`] for [`DpdkPort`] hands out its queues.

mod eal;
mod ffi;
mod huge;
mod port;
mod queues;

pub use eal::{eal_init, rdtsc, tsc_hz};
pub use huge::HugePages;
pub use port::{mempool_size, ring_pair, ring_pair_queues, DpdkOptions, DpdkPort, PortStats, MAX_RX_BURST, MAX_TX_BURST};
pub use queues::{DpdkRx, DpdkTx};

use crate::{Port, Queues, Result};
use xlat_wire::MacAddr;

impl Port for DpdkPort {
    type Tx = DpdkTx;
    type Rx = DpdkRx;

    fn name(&self) -> String {
        format!("dpdk:{}", self.dev.name)
    }

    fn mac(&self) -> MacAddr {
        self.mac
    }

    fn link_up(&self) -> bool {
        port::link_up(self.dev.port)
    }

    fn flow_control(&mut self, want: Option<bool>) -> Result<Option<crate::Pause>> {
        port::flow_control(self.dev.port, &self.name(), want)
    }

    /// An mbuf's writable bytes (frames are sent in one segment).
    fn max_frame_len(&self) -> usize {
        self.room.min(crate::MAX_FRAME_LEN)
    }

    fn stamping(&self) -> crate::Stamping {
        self.stamping.clone()
    }

    /// The queue sets the port was opened with ([`DpdkOptions::queues`]).
    fn max_queues(&self) -> usize {
        usize::from(self.queues)
    }

    /// All the queue sets the port was opened with: set k transmits on queues k (traffic) and
    /// `queues + k` (control) and reads receive queues k, k + queues, ...
    fn open_queues(&mut self, n: usize) -> Result<Vec<Queues<DpdkTx, DpdkRx>>> {
        if self.opened {
            return Err(eal::backend(format!("{}: queues already opened", self.name())));
        }
        let q = self.queues;
        if n != usize::from(q) {
            return Err(eal::backend(format!(
                "{}: {n} queue sets asked, but the port was opened with {q} (every receive queue must be read)",
                self.name()
            )));
        }
        self.opened = true;
        // The port's counters are reported once, by set 0.
        let tx = |queue, counts| DpdkTx::new(&self.dev, queue, self.room, self.data_off, self.meta_off, self.lines, counts);
        Ok((0..q)
            .map(|k| Queues {
                tx: tx(k, k == 0),
                ctl: tx(q + k, false),
                rx: DpdkRx::new(&self.dev, (k..self.rx_queues).step_by(usize::from(q)).collect(), k == 0),
            })
            .collect())
    }
}
