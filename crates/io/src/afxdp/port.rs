//! The AF_XDP port: sockets per receive queue, the program, the control queue.

use super::abi::{XdpStatistics, FRAME_SIZE, XDP_HEADROOM};
use super::bpf::{attach, load_program, xskmap};
use super::options::{AfXdpOptions, MAX_QUEUES};
use super::queues::{AfXdpRx, AfXdpTx, XskTx};
use super::socket::{bind_socket, Attached, Bound, Rings, Xsk};
use crate::afpacket::{in_netns, AfPacketOptions, AfPacketPort};
use crate::{IoError, Port, Queues, Result, MAX_FRAME_LEN};
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};
use xlat_wire::MacAddr;

/// An interface opened with AF_XDP: the socket is bound and the program attached on opening.
pub struct AfXdpPort {
    pub(super) pkt: AfPacketPort,
    pub(super) opts: AfXdpOptions,
    /// Per receive queue: its socket and rings (RX, fill, TX, completion), until handed out.
    pub(super) sockets: Option<Vec<(Arc<Xsk>, Rings)>>,
    pub(super) mode: String,
    pub(super) _promisc: Option<OwnedFd>,
}

impl AfXdpPort {
    /// Open interface `iface`: read its MAC and MTU, make the socket and its UMEM, bind it to
    /// queue 0, and attach the XDP program.
    pub fn open(iface: &str, opts: AfXdpOptions) -> Result<AfXdpPort> {
        for (what, n) in [("rx_frames", opts.rx_frames), ("tx_frames", opts.tx_frames)] {
            if !n.is_power_of_two() || !(64..=1 << 20).contains(&n) {
                return Err(IoError::Backend(format!("afxdp {what} {n}: a power of two, 64 to 2^20")));
            }
        }
        let popts = AfPacketOptions {
            netns: opts.netns.clone(),
            promisc: opts.promisc,
            tx_frames: 256,
            rx_frames: 64,
        };
        let pkt = AfPacketPort::open(iface, popts)?;
        let promisc = if opts.promisc { Some(pkt.promisc_socket()?) } else { None };
        let ifindex = pkt.ifindex;
        if !(1..=MAX_QUEUES).contains(&opts.queues) {
            return Err(IoError::Backend(format!("afxdp queues {}: 1 to {MAX_QUEUES}", opts.queues)));
        }
        if let Some(rxq) = pkt.rx_queue_count() {
            if rxq > opts.queues {
                return Err(IoError::Backend(format!(
                    "{}: the interface has {rxq} receive queues and afxdp would read {} (frames on the others reach the kernel, not the tester): set tester.queues = {rxq}, or give the interface fewer (ethtool -L {iface} combined {})",
                    pkt.name(),
                    opts.queues,
                    opts.queues
                )));
            }
        }
        let (sockets, mode) = in_netns(opts.netns.as_deref(), || {
            let bound = (0..opts.queues)
                .map(|q| bind_socket(ifindex, iface, q, &opts))
                .collect::<Result<Vec<Bound>>>()?;
            let map = xskmap(&bound.iter().map(|b| &b.sock).collect::<Vec<_>>())?;
            let prog = load_program(&map)?;
            let (link, xdp_mode) = attach(&prog, ifindex, opts.generic, iface)?;
            let attached = Arc::new(Attached {
                _link: link,
                _prog: prog,
                _map: map,
            });
            let copy = bound.first().map_or("copy", |b| b.copy);
            let sockets = bound
                .into_iter()
                .map(|b| {
                    let xsk = Arc::new(Xsk {
                        _attached: attached.clone(),
                        sock: b.sock,
                        umem: b.umem,
                        stats: Mutex::new(XdpStatistics::default()),
                    });
                    (xsk, b.rings)
                })
                .collect::<Vec<_>>();
            Ok((sockets, format!("XDP {xdp_mode} mode, {copy}")))
        })?;
        for (xsk, _) in &sockets {
            let start = xsk.statistics()?;
            *xsk.stats.lock().unwrap_or_else(|e| e.into_inner()) = start;
        }
        Ok(AfXdpPort {
            pkt,
            opts,
            sockets: Some(sockets),
            mode,
            _promisc: promisc,
        })
    }

    /// How the program is attached and the socket bound, e.g. "XDP driver mode, copy".
    pub fn mode(&self) -> &str {
        &self.mode
    }
}

impl Port for AfXdpPort {
    type Tx = AfXdpTx;
    type Rx = AfXdpRx;

    /// The interface's, as the afpacket port it was opened with sets it.
    fn flow_control(&mut self, want: Option<bool>) -> Result<Option<crate::Pause>> {
        self.pkt.flow_control(want)
    }

    fn name(&self) -> String {
        self.pkt.name()
    }

    fn mac(&self) -> MacAddr {
        self.pkt.mac()
    }

    fn link_up(&self) -> bool {
        self.pkt.link_up()
    }

    /// The MTU plus the Ethernet header, within a UMEM frame less XDP's headroom.
    fn max_frame_len(&self) -> usize {
        (self.pkt.mtu + 14).min(FRAME_SIZE - XDP_HEADROOM).min(MAX_FRAME_LEN)
    }

    fn max_queues(&self) -> usize {
        self.opts.queues as usize
    }

    /// The driver's stamps (ethtool's) are not read by this backend: AF_XDP gives them through
    /// XDP metadata (receive) and the transmit metadata's completion, which it does not ask for.
    fn stamping(&self) -> crate::Stamping {
        let driver = self.pkt.stamping();
        crate::Stamping {
            detail: format!("{}, none of which the afxdp backend reads", driver.detail),
            ..crate::Stamping::default()
        }
    }

    /// One queue set per socket (receive queue k's), each with an AF_PACKET control queue.
    fn open_queues(&mut self, n: usize) -> Result<Vec<Queues<AfXdpTx, AfXdpRx>>> {
        let Some(sockets) = self.sockets.take() else {
            return Err(IoError::Backend(format!("{}: queues already opened", self.name())));
        };
        if n != sockets.len() {
            let have = sockets.len();
            self.sockets = Some(sockets);
            return Err(IoError::Backend(format!(
                "{}: {n} queue sets asked, but the port was opened with {have} sockets (every receive queue must be read)",
                self.name()
            )));
        }
        let rx_frames = u64::from(self.opts.rx_frames);
        let tx_frames = u64::from(self.opts.tx_frames);
        let mut sets = Vec::with_capacity(n);
        for (xsk, (rx, fill, tx, comp)) in sockets {
            let free = (0..tx_frames).rev().map(|i| (rx_frames + i) * FRAME_SIZE as u64).collect();
            let xtx = XskTx {
                xsk: xsk.clone(),
                tx,
                comp,
                free,
                cookies: vec![0; (rx_frames + tx_frames) as usize],
                cap: FRAME_SIZE - XDP_HEADROOM,
            };
            let if_drops = if sets.is_empty() { Some(self.pkt.if_rx_drops()?) } else { None };
            let mut xrx = AfXdpRx { xsk, rx, fill, if_drops };
            xrx.drain();
            sets.push(Queues {
                tx: AfXdpTx::Xsk(xtx),
                rx: xrx,
                ctl: AfXdpTx::Packet(self.pkt.open_tx()?),
            });
        }
        Ok(sets)
    }
}
