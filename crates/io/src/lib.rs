//! Ports: burst transmit and burst receive of Ethernet frames (without FCS).
//!
//! A [`Port`] is opened once and split into one or more sets of [`Queues`] (a multi-queue port
//! has several): a traffic transmit queue (a sender's), a receive queue (a receiver's) and a
//! control transmit queue (for ARP and NDP answers sent from the receiving thread). Each queue
//! is used by one thread at a time.
//!
//! The transmit call hands the caller the backend's own buffers (an AF_PACKET ring slot, a DPDK
//! mbuf, an AF_XDP UMEM frame) through a fill callback, so zero-copy backends need no extra copy
//! and no allocation happens per frame.
//!
//! What is where:
//!
//! | module | what |
//! | --- | --- |
//! | this file | the [`Port`], [`TxQueue`] and [`RxQueue`] traits, [`Queues`], [`IoError`], the burst sizes ([`DEFAULT_BURST`], [`RX_BURST`]) |
//! | [`mem`] | in-process port pairs with loss, duplication and reordering injection, for tests and the engine's self-test |
//! | [`afpacket`] | AF_PACKET sockets with PACKET_MMAP rings and PACKET_QDISC_BYPASS, on any Linux interface, also inside a network namespace |
//! | [`ifdrops`] | an interface's own receive drops (`/proc/net/dev`): the tester host's loss that no socket counts |
//! | [`afxdp`] | AF_XDP sockets (UMEM, fill/completion/RX/TX rings, need_wakeup, zero-copy where the driver has it) with an XDP program of its own attached through a BPF link, also inside a network namespace |
//! | `dpdk` (cargo feature `dpdk`) | DPDK ethdev ports: `dpdk/eal.rs` (EAL, TSC, lcore registration), `dpdk/port.rs` (opening a port, its mempool and counters), `dpdk/queues.rs` (the burst functions), `dpdk/ffi.rs` and `csrc/shim.c` (DPDK's inline functions, wrapped in C) |

pub mod afpacket;
pub mod afxdp;
#[cfg(feature = "dpdk")]
pub mod dpdk;
pub mod ifdrops;
pub mod mem;

use xlat_wire::MacAddr;

/// The largest frame a backend buffer must hold (without FCS).
pub const MAX_FRAME_LEN: usize = 9014;

/// I/O errors of the backends.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    #[error("{what}: {os}")]
    Os { what: String, os: std::io::Error },
    #[error("{0}")]
    Backend(String),
    #[error("the {0} backend is not built into this xlatperf; rebuild with `--features {0}`")]
    Absent(&'static str),
}

impl IoError {
    /// Wrap the last OS error with what was being done.
    pub fn last_os(what: impl Into<String>) -> IoError {
        IoError::Os {
            what: what.into(),
            os: std::io::Error::last_os_error(),
        }
    }
}

pub type Result<T> = std::result::Result<T, IoError>;

/// A transmit queue.
pub trait TxQueue: Send {
    /// Transmit up to `n` frames. `fill(i, buf)` writes frame `i` (0-based within this call)
    /// into the backend buffer `buf` and returns its length; 0 means "nothing to send" and ends
    /// the burst. Returns how many frames, counted from 0, the backend accepted. Frames filled
    /// but not accepted are not sent: the caller offers them again in the next call.
    fn tx_burst<F: FnMut(usize, &mut [u8]) -> usize>(&mut self, n: usize, fill: F) -> Result<usize>;

    /// [`TxQueue::tx_burst`] with a cookie per buffer, for senders that keep templates in
    /// recycled backend buffers: `fill(i, buf, cookie)` finds in `cookie` what it left with this
    /// buffer when it last filled it through this call (0: nothing known, write the whole
    /// frame), and leaves what the buffer will hold. Backends whose buffers come back unchanged
    /// (DPDK mbufs) keep the cookie; the default keeps none, so `cookie` is always 0.
    fn tx_burst_cookie<F: FnMut(usize, &mut [u8], &mut u64) -> usize>(&mut self, n: usize, mut fill: F) -> Result<usize> {
        self.tx_burst(n, |i, buf| {
            let mut cookie = 0;
            fill(i, buf, &mut cookie)
        })
    }

    /// Tell the queue which bytes of the frames it will be given change from frame to frame
    /// (`hot`, byte offsets in the frame): a backend that recycles its buffers and can choose
    /// where a frame starts in one (DPDK) starts it so that those bytes span as few cache lines
    /// as they can ([`place`]), so that a recycled frame's rewrite touches one line where it
    /// could. Frames are the same wherever they start. The default places nothing.
    fn place_frames(&mut self, hot: std::ops::Range<usize>) {
        let _ = hot;
    }

    /// Turn on the port's own transmit stamps (see [`Port::stamping`]), so that
    /// [`TxQueue::tx_burst_stamped`] can ask for them. An error on a port without.
    fn enable_stamps(&mut self) -> Result<()> {
        Err(IoError::Backend("this backend reads no transmit stamps of the port's own".into()))
    }

    /// [`TxQueue::tx_burst_cookie`] that asks the port to stamp frame `i` as it leaves when bit
    /// `i` of `stamp` is set (at most 64 frames per call then); the stamps come back through
    /// [`TxQueue::tx_stamps`]. Without [`TxQueue::enable_stamps`] no frame is stamped.
    fn tx_burst_stamped<F: FnMut(usize, &mut [u8], &mut u64) -> usize>(&mut self, n: usize, stamp: u64, fill: F) -> Result<usize> {
        let _ = stamp;
        self.tx_burst_cookie(n, fill)
    }

    /// The transmit stamps that came back since the last call: `f(frame, ns)` for each stamped
    /// frame, with the frame as sent and its stamp (CLOCK_REALTIME nanoseconds). Returns how
    /// many. A stamp the port could not take (its queue for them full) never comes.
    fn tx_stamps<F: FnMut(&[u8], u64)>(&mut self, f: F) -> Result<usize> {
        let _ = f;
        Ok(0)
    }

    /// Push out anything the backend still holds (for backends that batch in the kernel).
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }

    /// Frames this queue accepted (counted in a `tx_burst` return) that the backend then failed
    /// to transmit, since the last call: the tester's own loss, never the DUT's.
    fn dropped(&mut self) -> Result<u64> {
        Ok(0)
    }
}

/// How many bytes before its usual start a frame should start in a buffer (the lead, below
/// `line`, even), so that its bytes `hot` span the fewest cache lines of `line` bytes, the
/// usual start lying `line_off` bytes after a line's start; of leads that do equally well, the
/// smallest (0 for an empty `hot`; for one longer than a line, the fewest lines it can span).
pub fn place(hot: std::ops::Range<usize>, line_off: usize, line: usize) -> usize {
    if hot.is_empty() || line < 2 {
        return 0;
    }
    // The lines frame bytes `hot` touch when the frame starts `lead` bytes early: byte `x` lies
    // at `line_off - lead + x` from the usual start's line; `line` added keeps it positive.
    let lines = |lead: usize| {
        let at = line_off % line + line - lead;
        (at + hot.end - 1) / line - (at + hot.start) / line
    };
    (0..line).step_by(2).min_by_key(|&lead| (lines(lead), lead)).unwrap_or(0)
}

/// A receive queue.
pub trait RxQueue: Send {
    /// Receive up to `max` frames without waiting; `f` sees each frame, which is valid only
    /// during the call. Returns the number of frames seen.
    fn rx_burst<F: FnMut(&[u8])>(&mut self, max: usize, f: F) -> Result<usize>;

    /// Rings this queue reads in turn (a DPDK `net_af_packet` device's several sockets): frames
    /// of different rings have no order between them.
    fn lanes(&self) -> usize {
        1
    }

    /// [`RxQueue::rx_burst`] that also tells `f` which of the [`RxQueue::lanes`] each frame
    /// came from.
    fn rx_burst_lanes<F: FnMut(usize, &[u8])>(&mut self, max: usize, mut f: F) -> Result<usize> {
        self.rx_burst(max, |frame| f(0, frame))
    }

    /// Turn on the port's own receive stamps (see [`Port::stamping`]) for
    /// [`RxQueue::rx_burst_stamped`]. An error on a port without.
    fn enable_stamps(&mut self) -> Result<()> {
        Err(IoError::Backend("this backend reads no receive stamps of the port's own".into()))
    }

    /// [`RxQueue::rx_burst_lanes`] that also tells `f` the port's receive stamp of each frame
    /// (CLOCK_REALTIME nanoseconds; 0: the port gave none).
    fn rx_burst_stamped<F: FnMut(usize, &[u8], u64)>(&mut self, max: usize, mut f: F) -> Result<usize> {
        self.rx_burst_lanes(max, |lane, frame| f(lane, frame, 0))
    }

    /// Frames that reached the port but that the backend dropped before `rx_burst` could hand
    /// them over (a full ring, no buffers), since the last call: the tester's own loss.
    fn dropped(&mut self) -> Result<u64> {
        Ok(0)
    }
}

/// The three queues of an open port.
pub struct Queues<T: TxQueue, R: RxQueue> {
    pub tx: T,
    pub rx: R,
    /// Low-rate transmit for control frames (ARP/NDP) from the receiving thread.
    pub ctl: T,
}

/// A tester port.
pub trait Port {
    type Tx: TxQueue;
    type Rx: RxQueue;
    /// A human name: the interface, the DPDK port, the mem pair side.
    fn name(&self) -> String;
    /// The port's own MAC address.
    fn mac(&self) -> MacAddr;
    /// True when the link is up.
    fn link_up(&self) -> bool;
    /// Open one set of queues. May be called once per port (or [`Port::open_queues`] instead).
    fn queues(&mut self) -> Result<Queues<Self::Tx, Self::Rx>> {
        let mut sets = self.open_queues(1)?;
        sets.pop()
            .ok_or_else(|| IoError::Backend(format!("{}: no queues opened", self.name())))
    }
    /// Open `n` sets of queues (a multi-queue port): each set's transmit queue sends on its
    /// own (a hardware queue, a socket), and the frames the port receives are spread among the
    /// `n` receive queues by flow (addresses and ports: RSS, a fanout hash, the queue the
    /// frame came in on), so that one flow's frames keep their order on one queue. May be
    /// called once per port; `n` is at most [`Port::max_queues`].
    fn open_queues(&mut self, n: usize) -> Result<Vec<Queues<Self::Tx, Self::Rx>>>;
    /// The most queue sets [`Port::open_queues`] can open on this port.
    fn max_queues(&self) -> usize {
        1
    }
    /// The longest frame (without FCS) the port can send: its MTU plus the Ethernet header, or
    /// its buffers, whichever is smaller.
    fn max_frame_len(&self) -> usize {
        MAX_FRAME_LEN
    }

    /// Set the port's Ethernet flow control (`Some(true)`: PAUSE frames honoured and sent;
    /// `Some(false)`: neither; `None`: as it is) and read it back. `Ok(None)`: the port has no
    /// flow control, which is what `Some(false)` asks; asking `Some(true)` of such a port is
    /// an error that names it ([`no_flow_control`], the default).
    fn flow_control(&mut self, want: Option<bool>) -> Result<Option<Pause>> {
        no_flow_control(&self.name(), want)
    }

    /// What the port can stamp frames with besides the tester's own clock, and this backend
    /// reads ([`TxQueue::enable_stamps`], [`RxQueue::enable_stamps`]).
    fn stamping(&self) -> Stamping {
        Stamping {
            detail: "no stamps of its own".into(),
            ..Stamping::default()
        }
    }
}

/// Ethernet flow control (IEEE 802.3x PAUSE frames) of a port as its driver reports it: it
/// honours PAUSE frames it receives (`rx`), it sends them when its own buffers fill (`tx`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pause {
    pub rx: bool,
    pub tx: bool,
}

/// [`Port::flow_control`] of a port without flow control (a veth, a software device): what
/// `Some(false)` and `None` ask is so; `Some(true)` cannot be, and the error names the port.
pub fn no_flow_control(name: &str, want: Option<bool>) -> Result<Option<Pause>> {
    if want == Some(true) {
        return Err(IoError::Backend(format!(
            "{name} has no Ethernet flow control (its driver offers no PAUSE settings), so it cannot be turned on"
        )));
    }
    Ok(None)
}

/// What a port can stamp frames with, as its driver tells (ethtool's timestamping
/// information, `ethtool -T`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stamping {
    /// The kernel stamps frames in software on transmit and on receive.
    pub kernel: bool,
    /// The NIC stamps frames on transmit and on receive with a clock of its own.
    pub hardware: bool,
    /// What the port said, for a message: "software transmit, software receive; no hardware
    /// clock".
    pub detail: String,
}

/// Bursts are at most this long (DPDK's customary 32).
pub const DEFAULT_BURST: usize = 32;
/// The most frames one receive call hands over.
pub const RX_BURST: usize = 64;

#[cfg(test)]
mod tests {
    use super::place;

    /// The lines a placed frame's bytes `hot` touch (the usual start `off` bytes into a line).
    fn lines(hot: std::ops::Range<usize>, off: usize, lead: usize) -> usize {
        let at = 64 + off - lead;
        (at + hot.end - 1) / 64 - (at + hot.start) / 64 + 1
    }

    #[test]
    fn a_frame_is_placed_so_that_its_changing_bytes_share_a_line() {
        // An IPv4 test frame's changing bytes (header checksum to payload field) already do.
        assert_eq!(place(24..58, 0, 64), 0);
        // An IPv6 frame's (ports to payload field, 54..78) cross a line at 64: 14 bytes early
        // they do not (its IPv6 header then starts a line).
        assert_eq!(place(54..78, 0, 64), 14);
        assert_eq!(lines(54..78, 0, 14), 1);
        // The usual start off a line's start (another pool layout).
        assert_eq!(place(54..78, 16, 64), 0);
        assert_eq!(place(54..78, 8, 64), 22);
        // A whole 80-byte frame (written whole into reset buffers): two lines, as without a lead.
        assert_eq!(place(0..80, 0, 64), 0);
        // Longer than a line: the fewest lines, the smallest lead for them.
        let l = place(22..90, 0, 64);
        assert_eq!((l, lines(22..90, 0, l)), (0, 2));
        let l = place(30..100, 0, 64);
        assert_eq!((l, lines(30..100, 0, l)), (0, 2));
        let l = place(60..130, 0, 64);
        assert_eq!((lines(60..130, 0, 0), lines(60..130, 0, l), l), (3, 2, 2));
        // Nothing to place; leads stay even and below the line.
        assert_eq!(place(10..10, 0, 64), 0);
        assert_eq!(place(0..1, 0, 1), 0);
        for off in 0..64 {
            for lo in 0..100 {
                for len in 1..70 {
                    let l = place(lo..lo + len, off, 64);
                    assert!(l < 64 && l.is_multiple_of(2));
                    assert!((0..64)
                        .step_by(2)
                        .all(|k| lines(lo..lo + len, off, k) >= lines(lo..lo + len, off, l)));
                }
            }
        }
    }
}
