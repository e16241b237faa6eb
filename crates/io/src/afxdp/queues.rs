//! The transmit and receive queues of an AF_XDP socket.

use super::abi::{XdpDesc, FRAME_SIZE};
use super::ring::{frame_base, Ring};
use super::socket::Xsk;
use crate::afpacket::AfPacketTx;
use crate::{IoError, Result, RxQueue, TxQueue};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The AF_XDP socket's transmit half.
pub struct XskTx {
    pub(super) xsk: Arc<Xsk>,
    pub(super) tx: Ring,
    pub(super) comp: Ring,
    /// UMEM addresses of the transmit frames that are ours.
    pub(super) free: Vec<u64>,
    /// The sender's cookie of each UMEM frame (indexed by frame number).
    pub(super) cookies: Vec<u64>,
    /// The most a frame may hold.
    pub(super) cap: usize,
}

impl XskTx {
    /// Take back the frames the kernel has sent.
    pub(super) fn reclaim(&mut self) {
        let n = self.comp.ready();
        for i in 0..n {
            // SAFETY: the completion ring holds u64 addresses; the kernel produced index i.
            let addr = unsafe { self.comp.slot::<u64>(self.comp.local.wrapping_add(i)).read() };
            self.free.push(frame_base(addr));
        }
        if n > 0 {
            self.comp.release(n);
        }
    }

    /// Ask the kernel to send what the TX ring holds, when it wants to be asked.
    pub(super) fn kick(&mut self, force: bool) -> Result<()> {
        if !force && !self.tx.needs_wakeup() {
            return Ok(());
        }
        // SAFETY: sendto with no buffer wakes the socket's transmit path.
        let r = unsafe {
            libc::sendto(
                self.xsk.sock.as_raw_fd(),
                std::ptr::null(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null(),
                0,
            )
        };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EBUSY) | Some(libc::ENOBUFS) | Some(libc::EINTR) | Some(libc::ENETDOWN) => {}
                _ => {
                    return Err(IoError::Os {
                        what: "sendto on the AF_XDP socket".into(),
                        os: e,
                    })
                }
            }
        }
        Ok(())
    }

    pub(super) fn burst<F: FnMut(usize, &mut [u8], &mut u64) -> usize>(&mut self, n: usize, mut fill: F) -> Result<usize> {
        self.reclaim();
        let room = (self.tx.free() as usize).min(self.free.len()).min(n);
        let mut sent = 0;
        while sent < room {
            let Some(&addr) = self.free.last() else { break };
            let idx = (addr / FRAME_SIZE as u64) as usize;
            let Some(p) = self.xsk.frame(addr, self.cap) else { break };
            // SAFETY: in the UMEM (checked), and the frame is ours: it is on the free list.
            let buf = unsafe { std::slice::from_raw_parts_mut(p, self.cap) };
            let mut cookie = self.cookies.get(idx).copied().unwrap_or(0);
            let len = fill(sent, buf, &mut cookie);
            if len == 0 || len > self.cap {
                // The fill may have written into the frame: nothing vouches for it any more.
                if let Some(c) = self.cookies.get_mut(idx) {
                    *c = 0;
                }
                break;
            }
            if let Some(c) = self.cookies.get_mut(idx) {
                *c = cookie;
            }
            self.free.pop();
            let d = XdpDesc {
                addr,
                len: len as u32,
                options: 0,
            };
            // SAFETY: the slot lies between our producer index and the consumer's plus size.
            unsafe { self.tx.slot::<XdpDesc>(self.tx.local.wrapping_add(sent as u32)).write(d) };
            sent += 1;
        }
        if sent > 0 {
            self.tx.submit(sent as u32);
        }
        // Also when nothing fit: the ring may hold frames an earlier kick left.
        if sent > 0 || self.tx.free() < self.tx.size {
            self.kick(false)?;
        }
        Ok(sent)
    }

    pub(super) fn flush(&mut self) -> Result<()> {
        let deadline = Instant::now() + Duration::from_millis(500);
        while self.tx.free() < self.tx.size && Instant::now() < deadline {
            self.kick(true)?;
            self.reclaim();
            if self.tx.free() < self.tx.size {
                std::thread::yield_now();
            }
        }
        self.reclaim();
        Ok(())
    }

    pub(super) fn dropped(&mut self) -> Result<u64> {
        let now = self.xsk.statistics()?;
        let mut last = self.xsk.stats.lock().unwrap_or_else(|e| e.into_inner());
        let d = now.tx_invalid_descs.saturating_sub(last.tx_invalid_descs);
        last.tx_invalid_descs = now.tx_invalid_descs;
        Ok(d)
    }
}

/// A transmit queue of an AF_XDP port: the socket's TX ring (traffic), or an AF_PACKET socket
/// (the control queue: see the module's documentation).
pub enum AfXdpTx {
    Xsk(XskTx),
    Packet(AfPacketTx),
}

impl TxQueue for AfXdpTx {
    fn tx_burst<F: FnMut(usize, &mut [u8]) -> usize>(&mut self, n: usize, mut fill: F) -> Result<usize> {
        match self {
            // A frame written without a cookie invalidates what the frame's cookie said.
            AfXdpTx::Xsk(x) => x.burst(n, |i, buf, cookie| {
                *cookie = 0;
                fill(i, buf)
            }),
            AfXdpTx::Packet(p) => p.tx_burst(n, fill),
        }
    }

    fn tx_burst_cookie<F: FnMut(usize, &mut [u8], &mut u64) -> usize>(&mut self, n: usize, mut fill: F) -> Result<usize> {
        match self {
            AfXdpTx::Xsk(x) => x.burst(n, fill),
            AfXdpTx::Packet(p) => p.tx_burst(n, |i, buf| {
                let mut cookie = 0;
                fill(i, buf, &mut cookie)
            }),
        }
    }

    fn flush(&mut self) -> Result<()> {
        match self {
            AfXdpTx::Xsk(x) => x.flush(),
            AfXdpTx::Packet(p) => p.flush(),
        }
    }

    fn dropped(&mut self) -> Result<u64> {
        match self {
            AfXdpTx::Xsk(x) => x.dropped(),
            AfXdpTx::Packet(p) => p.dropped(),
        }
    }
}

/// The AF_XDP socket's receive half.
pub struct AfXdpRx {
    pub(super) xsk: Arc<Xsk>,
    pub(super) rx: Ring,
    pub(super) fill: Ring,
    /// The interface's own receive drops, on the port's first socket only.
    pub(super) if_drops: Option<crate::ifdrops::IfRxDrops>,
}

impl AfXdpRx {
    /// Drop everything already received (frames from before the trial).
    pub(super) fn drain(&mut self) {
        let deadline = Instant::now() + Duration::from_millis(200);
        while Instant::now() < deadline && self.rx_burst(usize::MAX, |_| {}).map(|n| n > 0).unwrap_or(false) {}
    }

    pub(super) fn wake(&self) {
        // SAFETY: recvfrom with no buffer wakes the driver to use the fill ring.
        unsafe {
            libc::recvfrom(
                self.xsk.sock.as_raw_fd(),
                std::ptr::null_mut(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
    }
}

impl RxQueue for AfXdpRx {
    fn rx_burst<F: FnMut(&[u8])>(&mut self, max: usize, mut f: F) -> Result<usize> {
        let n = self.rx.ready().min(u32::try_from(max).unwrap_or(u32::MAX));
        if n == 0 {
            if self.fill.needs_wakeup() {
                self.wake();
            }
            return Ok(0);
        }
        // Every receive frame is in the fill ring, the RX ring or here: the fill ring, as
        // large as there are receive frames, has room for the n about to go back.
        let room = self.fill.free();
        let n = n.min(room);
        for i in 0..n {
            // SAFETY: the RX ring holds xdp_descs; the kernel produced index i.
            let d = unsafe { self.rx.slot::<XdpDesc>(self.rx.local.wrapping_add(i)).read() };
            if let Some(p) = self.xsk.frame(d.addr, d.len as usize) {
                // SAFETY: in the UMEM (checked); the kernel handed this frame over in the RX
                // ring and takes it back only through the fill ring, below.
                f(unsafe { std::slice::from_raw_parts(p, d.len as usize) });
            }
            // SAFETY: the fill ring holds u64 addresses; index i is within the room computed.
            unsafe { self.fill.slot::<u64>(self.fill.local.wrapping_add(i)).write(frame_base(d.addr)) };
        }
        self.rx.release(n);
        self.fill.submit(n);
        if self.fill.needs_wakeup() {
            self.wake();
        }
        Ok(n as usize)
    }

    /// Frames the socket dropped since the last call: no room in the RX ring (rx_ring_full) or
    /// no buffer (rx_dropped, which also counts a copy-mode frame that found the fill ring
    /// empty; rx_fill_ring_empty_descs is left out as it counts those again), and on the
    /// port's first socket the interface's own receive drops (the tester's host's).
    fn dropped(&mut self) -> Result<u64> {
        let interface = self.if_drops.as_mut().map_or(Ok(0), crate::ifdrops::IfRxDrops::since_last)?;
        let now = self.xsk.statistics()?;
        let mut last = self.xsk.stats.lock().unwrap_or_else(|e| e.into_inner());
        let d = now.rx_dropped.saturating_sub(last.rx_dropped) + now.rx_ring_full.saturating_sub(last.rx_ring_full);
        last.rx_dropped = now.rx_dropped;
        last.rx_ring_full = now.rx_ring_full;
        Ok(d + interface)
    }
}
