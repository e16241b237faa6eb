//! The queues of an open DPDK port: [`DpdkTx`] (a transmit queue, traffic or control) and
//! [`DpdkRx`] (the receive queue), the burst functions of the frame path.

use super::eal::attach_thread;
use super::ffi::{self, RteMbuf, RteMempool};
use super::port::{port_stats, Device, PortStats, MAX_RX_BURST, MAX_TX_BURST};
use crate::{Result, RxQueue, TxQueue};
use std::ffi::c_uint;
use std::sync::Arc;

/// A transmit queue of a DPDK port.
pub struct DpdkTx {
    port: u16,
    queue: u16,
    pool: *mut RteMempool,
    /// The writable bytes of each mbuf: data room minus headroom.
    room: usize,
    /// Where a reset mbuf's data starts, from the mbuf's address (the same for the whole pool).
    data_off: usize,
    /// Where the sender's metadata field lies, from the mbuf's address.
    meta_off: usize,
    /// Where a reset mbuf's data starts in its cache line, and the line's size (`None`: not
    /// the same for every mbuf).
    lines: Option<(usize, usize)>,
    /// How many bytes before a reset mbuf's data the frames start (`place_frames`), below the
    /// headroom.
    lead: usize,
    pkts: [*mut RteMbuf; MAX_TX_BURST],
    /// The port's `oerrors` when `dropped` was last called (`None`: never).
    oerrors_seen: Option<u64>,
    /// This queue reports the port's counters (one queue of a port does: they are the port's).
    counts: bool,
    /// Keeps the device open while the queue exists.
    _dev: Arc<Device>,
}

// SAFETY: a DPDK transmit queue may be used by one thread at a time, from any thread; DpdkTx is
// the only handle of its queue and `&mut self` on every call enforces one user at a time. The
// mempool is multi-producer/multi-consumer. The mbuf pointers in `pkts` are only scratch space.
unsafe impl Send for DpdkTx {}

impl DpdkTx {
    /// Transmit queue `queue` of the port of `dev`, whose mbufs have `room` writable bytes from
    /// `data_off` bytes after their header (`lines`: where that lies in its cache line, and the
    /// line's size) and the sender's metadata field `meta_off` bytes after it. It reports the
    /// port's `oerrors` when `counts`.
    pub(super) fn new(
        dev: &Arc<Device>,
        queue: u16,
        room: usize,
        data_off: usize,
        meta_off: usize,
        lines: Option<(usize, usize)>,
        counts: bool,
    ) -> DpdkTx {
        DpdkTx {
            port: dev.port,
            queue,
            pool: dev.pool,
            room,
            data_off,
            meta_off,
            lines,
            lead: 0,
            pkts: [std::ptr::null_mut(); MAX_TX_BURST],
            oerrors_seen: None,
            counts,
            _dev: dev.clone(),
        }
    }

    /// Take up to `want` mbufs into `self.pkts`; fewer when the pool runs low, 0 if empty.
    #[inline(always)]
    fn alloc(&mut self, want: usize) -> usize {
        let mut n = want;
        while n > 0 {
            // SAFETY: pkts has room for MAX_TX_BURST >= n pointers; pool is this port's.
            if unsafe { ffi::xlat_tx_get(self.pool, self.pkts.as_mut_ptr(), n as c_uint) } == 0 {
                return n;
            }
            n /= 2;
        }
        0
    }
}

/// The sender's metadata of an mbuf: `[length | lead << 32, cookie]`, the dynamic field `meta_off` bytes
/// after the mbuf's address (see the `dpdk` module text and `xlat_pool_prepare` in the shim).
///
/// # Safety
/// `m` must be an mbuf of our pools, which we own, and `meta_off` the offset the shim gave.
#[inline(always)]
unsafe fn meta_of(m: *mut RteMbuf, meta_off: usize) -> (*mut u64, *mut u64) {
    let p = (m as *mut u8).add(meta_off) as *mut u64;
    (p, p.add(1))
}

impl TxQueue for DpdkTx {
    /// The port's `oerrors` since the last call (the first call only takes the baseline); 0 on
    /// the port's other queues.
    fn dropped(&mut self) -> Result<u64> {
        if !self.counts {
            return Ok(0);
        }
        let now = port_stats(self.port)?.oerrors;
        let d = self.oerrors_seen.map_or(0, |s| now.saturating_sub(s));
        self.oerrors_seen = Some(now);
        Ok(d)
    }

    /// Frames start where their bytes `hot` span the fewest cache lines (`crate::place`), at
    /// most a line before a reset mbuf's data (within the headroom).
    fn place_frames(&mut self, hot: std::ops::Range<usize>) {
        self.lead = self
            .lines
            .map_or(0, |(off, line)| crate::place(hot, off, line))
            .min(ffi::PKTMBUF_HEADROOM - 1);
    }

    #[inline]
    fn tx_burst<F: FnMut(usize, &mut [u8]) -> usize>(&mut self, n: usize, mut fill: F) -> Result<usize> {
        // A frame written without a cookie invalidates what the buffer's cookie said.
        self.tx_burst_cookie(n, |i, buf, cookie| {
            *cookie = 0;
            fill(i, buf)
        })
    }

    #[inline]
    fn tx_burst_cookie<F: FnMut(usize, &mut [u8], &mut u64) -> usize>(&mut self, n: usize, mut fill: F) -> Result<usize> {
        attach_thread();
        let got = self.alloc(n.min(MAX_TX_BURST));
        // Locals: the frame stores below could alias `self` as far as the compiler knows, which
        // would make it read these again for every frame.
        let (room, data_off, meta_off, lead) = (self.room, self.data_off - self.lead, self.meta_off, self.lead);
        // What an mbuf's metadata says of a frame of length `len` sent from here.
        let sent_as = |len: usize| len as u64 | (lead as u64) << 32;
        let pkts = &self.pkts[..got];
        let mut filled = 0;
        while let Some(&m) = pkts.get(filled) {
            // The frame of mbuf `filled` once reset: xlat_pool_prepare checked that the data lies
            // `data_off` bytes after every mbuf of the pool, and the frame starts `lead` bytes
            // before it (in the headroom).
            let data = (m as *mut u8).wrapping_add(data_off);
            // SAFETY: the mbuf is ours (taken from the pool), and its buffer has `room` bytes
            // after the headroom.
            let buf = unsafe { std::slice::from_raw_parts_mut(data, room) };
            // SAFETY: as above; the field lies in the mbuf's header.
            let (lp, cp) = unsafe { meta_of(m, meta_off) };
            // SAFETY: as above; the field is 8-byte aligned.
            let (old_sent, old) = unsafe { (lp.read(), cp.read()) };
            let mut cookie = old;
            let len = fill(filled, buf, &mut cookie);
            if len == 0 || len > room {
                // The fill may have written into the buffer: nothing vouches for it any more.
                // SAFETY: as above.
                unsafe { cp.write(0) };
                break;
            }
            // An mbuf whose cookie, length and lead stay is sent as it is; any other is reset
            // and gets its length and lead here, in the pass that wrote its frame (its header
            // lines are visited once), and keeps the new cookie, length and lead.
            if cookie == 0 || cookie != old || old_sent != sent_as(len) {
                // SAFETY: as above; len <= room fits the mbuf's u16 lengths (the data room is a
                // u16), and the lead lies within the headroom.
                unsafe {
                    lp.write(sent_as(len));
                    cp.write(cookie);
                    ffi::xlat_tx_reset(m, len as u16, lead as u16);
                }
            }
            filled += 1;
        }
        // SAFETY: pkts[..got] are ours, pkts[..filled] filled and reset as above; the queue is set
        // up and used by this thread alone. The shim frees pkts[sent..got]: they were not
        // accepted, and the caller offers those frames again.
        let sent = unsafe { ffi::xlat_tx_send(self.port, self.queue, self.pkts.as_mut_ptr(), filled as u16, got as u16) };
        Ok(sent as usize)
    }
}

/// The receive queue of a DPDK port.
pub struct DpdkRx {
    port: u16,
    /// The receive queues this reads in turn (every one of a port opened with one queue set).
    queues: Vec<u16>,
    /// The index in `queues` of the queue read first by the next call.
    next: usize,
    /// The port's receive drop counters when `dropped` was last called.
    seen: RxDrops,
    /// This queue reports the port's counters (one queue of a port does).
    counts: bool,
    pkts: [*mut RteMbuf; MAX_RX_BURST],
    data: [*const u8; MAX_RX_BURST],
    lens: [u16; MAX_RX_BURST],
    /// Keeps the device open while the queue exists.
    _dev: Arc<Device>,
}

// SAFETY: a DPDK receive queue may be used by one thread at a time, from any thread; DpdkRx is
// the only handle of its queue and `&mut self` on every call enforces one user at a time.
unsafe impl Send for DpdkRx {}

impl DpdkRx {
    /// A receive queue of the port of `dev`, reading its receive queues `queues` in turn.
    /// It reports the port's drop counters when `counts`.
    pub(super) fn new(dev: &Arc<Device>, queues: Vec<u16>, counts: bool) -> DpdkRx {
        DpdkRx {
            port: dev.port,
            queues,
            next: 0,
            seen: RxDrops::default(),
            counts,
            pkts: [std::ptr::null_mut(); MAX_RX_BURST],
            data: [std::ptr::null(); MAX_RX_BURST],
            lens: [0; MAX_RX_BURST],
            _dev: dev.clone(),
        }
    }
}

impl RxQueue for DpdkRx {
    #[inline]
    fn rx_burst<F: FnMut(&[u8])>(&mut self, max: usize, mut f: F) -> Result<usize> {
        self.rx_burst_lanes(max, |_, frame| f(frame))
    }

    fn lanes(&self) -> usize {
        self.queues.len()
    }

    #[inline]
    fn rx_burst_lanes<F: FnMut(usize, &[u8])>(&mut self, max: usize, mut f: F) -> Result<usize> {
        attach_thread();
        let want = max.min(MAX_RX_BURST) as u16;
        // Every receive queue in turn, starting one further each call, until one has frames.
        let mut n = 0;
        let mut lane = 0;
        for _ in 0..self.queues.len() {
            lane = self.next;
            let queue = self.queues[lane];
            self.next = (self.next + 1) % self.queues.len();
            // SAFETY: the arrays have room for MAX_RX_BURST >= want entries; the queue is ours
            // alone.
            n = unsafe {
                ffi::xlat_rx(
                    self.port,
                    queue,
                    self.pkts.as_mut_ptr(),
                    self.data.as_mut_ptr(),
                    self.lens.as_mut_ptr(),
                    want,
                )
            } as usize;
            if n > 0 {
                break;
            }
        }
        for i in 0..n {
            // SAFETY: data[i] and lens[i] give the first segment of a received mbuf that we own
            // until the free below (frames up to max_frame_len arrive in one segment).
            let frame = unsafe { std::slice::from_raw_parts(self.data[i], self.lens[i] as usize) };
            // (The shim cleared the mbuf's sender cookie: the device wrote it.)
            f(lane, frame);
        }
        if n > 0 {
            // SAFETY: pkts[..n] are ours and no longer referenced.
            unsafe { ffi::rte_pktmbuf_free_bulk(self.pkts.as_mut_ptr(), n as c_uint) };
        }
        Ok(n)
    }

    /// `imissed + ierrors + rx_nombuf` of the port since the last call; 0 on the port's other
    /// queues.
    fn dropped(&mut self) -> Result<u64> {
        if !self.counts {
            return Ok(0);
        }
        let now = RxDrops::of(&port_stats(self.port)?);
        let d = now.total().saturating_sub(self.seen.total());
        self.seen = now;
        Ok(d)
    }
}

/// The receive counters of a port that count frames the port dropped.
#[derive(Debug, Clone, Copy, Default)]
struct RxDrops {
    imissed: u64,
    ierrors: u64,
    rx_nombuf: u64,
}

impl RxDrops {
    fn of(st: &PortStats) -> RxDrops {
        RxDrops {
            imissed: st.imissed,
            ierrors: st.ierrors,
            rx_nombuf: st.rx_nombuf,
        }
    }

    fn total(&self) -> u64 {
        self.imissed + self.ierrors + self.rx_nombuf
    }
}
