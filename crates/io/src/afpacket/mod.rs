//! The `afpacket` backend: AF_PACKET sockets with PACKET_MMAP rings (TPACKET_V2), one socket
//! with a transmit ring and PACKET_QDISC_BYPASS per transmit queue, and one with a receive ring
//! for the receive queue. Works on any Linux interface; the lab's veth ends live in a network
//! namespace, so a port can be opened inside a named namespace (`ip netns` name).
//!
//! No system call per frame: a transmit burst is written into ring slots and kicked with one
//! `send`; a receive burst reads ring slots the kernel has filled and returns them.

use crate::ifdrops::IfRxDrops;
use crate::{IoError, Port, Queues, Result, RxQueue, Stamping, TxQueue, MAX_FRAME_LEN};
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{fence, AtomicU32, Ordering};
use xlat_wire::MacAddr;

mod pause;
mod stamps;
mod sys;
use stamps::{query_stamping, ErrQueue};
pub(crate) use sys::{getsockopt, setsockopt};
use sys::{ifreq, ifreq_with, SIOCETHTOOL};

const SOL_PACKET: libc::c_int = 263;
const PACKET_ADD_MEMBERSHIP: libc::c_int = 1;
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_VERSION: libc::c_int = 10;
const PACKET_TX_RING: libc::c_int = 13;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const PACKET_FANOUT: libc::c_int = 18;
const PACKET_FANOUT_HASH: u32 = 0;
/// PACKET_FANOUT flag: the group ignores outgoing frames (linux/if_packet.h).
const PACKET_FANOUT_FLAG_IGNORE_OUTGOING: u32 = 0x4000;
const PACKET_MR_PROMISC: libc::c_ushort = 1;
const TPACKET_V2: libc::c_int = 1;
const ETH_P_ALL: u16 = 0x0003;

const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
const TP_STATUS_AVAILABLE: u32 = 0;
const TP_STATUS_SEND_REQUEST: u32 = 1;
const TP_STATUS_WRONG_FORMAT: u32 = 4;
/// TPACKET_ALIGN(sizeof(struct tpacket2_hdr)): where a V2 transmit frame's data starts.
const TX_DATA_OFFSET: usize = 32;

#[repr(C)]
struct TpacketReq {
    tp_block_size: u32,
    tp_block_nr: u32,
    tp_frame_size: u32,
    tp_frame_nr: u32,
}

#[repr(C)]
#[derive(Default)]
struct TpacketStats {
    tp_packets: u32,
    tp_drops: u32,
}

/// The most queue sets (socket triples) an AF_PACKET port opens.
pub const MAX_QUEUES: usize = 64;

/// Ring geometry and socket options.
#[derive(Debug, Clone)]
pub struct AfPacketOptions {
    /// The `ip netns` namespace the interface lives in; `None`: the current one.
    pub netns: Option<String>,
    /// Frames in the receive ring (the lab lost frames with small rings; 16,384 did not).
    pub rx_frames: u32,
    /// Frames in each transmit ring.
    pub tx_frames: u32,
    /// Receive in promiscuous mode.
    pub promisc: bool,
}

impl Default for AfPacketOptions {
    fn default() -> Self {
        AfPacketOptions {
            netns: None,
            rx_frames: 16384,
            tx_frames: 4096,
            promisc: false,
        }
    }
}

/// A memory-mapped packet ring.
struct Ring {
    base: *mut u8,
    size: usize,
    frame_size: usize,
    frames: usize,
    next: usize,
}

// SAFETY: the mapping is owned by one Ring, which one thread uses at a time.
unsafe impl Send for Ring {}

impl Ring {
    #[inline]
    fn slot(&self, i: usize) -> *mut u8 {
        // SAFETY: i < frames and frames * frame_size <= size: the pointer stays in the mapping.
        unsafe { self.base.add(i * self.frame_size) }
    }

    #[inline]
    fn status(&self, i: usize) -> &AtomicU32 {
        // SAFETY: tp_status is the first, 4-byte aligned u32 of each slot, shared with the kernel.
        unsafe { &*(self.slot(i) as *const AtomicU32) }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: base/size came from a successful mmap and are unmapped once.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.size) };
    }
}

fn packet_socket(protocol: u16) -> Result<OwnedFd> {
    // SAFETY: plain socket(2) call; the result is checked.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, i32::from(protocol.to_be())) };
    if fd < 0 {
        return Err(IoError::last_os("socket(AF_PACKET) (needs root or CAP_NET_RAW)"));
    }
    // SAFETY: fd is a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn bind(fd: &OwnedFd, ifindex: i32, protocol: u16, iface: &str) -> Result<()> {
    // SAFETY: sockaddr_ll is plain data; zeroed is a valid value.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = protocol.to_be();
    sll.sll_ifindex = ifindex;
    // SAFETY: sll is a valid sockaddr_ll of the size given.
    let r = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            &sll as *const _ as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_ll>() as u32,
        )
    };
    if r != 0 {
        return Err(IoError::last_os(format!("bind to {iface}")));
    }
    Ok(())
}

fn ring(fd: &OwnedFd, opt: libc::c_int, frames: u32, frame_size: u32, what: &str) -> Result<Ring> {
    let frames_per_block = (1u32 << 16) / frame_size;
    let blocks = frames.div_ceil(frames_per_block).max(1);
    let req = TpacketReq {
        tp_block_size: 1 << 16,
        tp_block_nr: blocks,
        tp_frame_size: frame_size,
        tp_frame_nr: blocks * frames_per_block,
    };
    setsockopt(fd, SOL_PACKET, opt, &req, what)?;
    let size = (req.tp_block_size as usize) * (req.tp_block_nr as usize);
    // SAFETY: mapping the ring the kernel just allocated for this socket; checked below.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(IoError::last_os(format!("mmap {what}")));
    }
    Ok(Ring {
        base: base as *mut u8,
        size,
        frame_size: frame_size as usize,
        frames: req.tp_frame_nr as usize,
        next: 0,
    })
}

/// Run `f` with the calling thread inside network namespace `ns` (an `ip netns` name), on a
/// short-lived thread so that the caller's own namespace never changes.
pub(crate) fn in_netns<T: Send>(ns: Option<&str>, f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    let Some(ns) = ns else { return f() };
    std::thread::scope(|s| {
        s.spawn(|| {
            let path = format!("/run/netns/{ns}");
            let file = std::fs::File::open(&path).map_err(|e| IoError::Os {
                what: format!("open network namespace {path}"),
                os: e,
            })?;
            // SAFETY: setns on this helper thread only; the fd is a namespace file.
            if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                return Err(IoError::last_os(format!("setns into {ns}")));
            }
            f()
        })
        .join()
        .unwrap_or_else(|_| Err(IoError::Backend("namespace helper thread panicked".into())))
    })
}

/// An interface opened with AF_PACKET.
pub struct AfPacketPort {
    pub(crate) iface: String,
    opts: AfPacketOptions,
    pub(crate) ifindex: i32,
    mac: MacAddr,
    ctl: OwnedFd,
    frame_size: u32,
    pub(crate) mtu: usize,
    opened: bool,
}

/// struct ethtool_channels (ETHTOOL_GCHANNELS).
#[repr(C)]
#[derive(Default)]
struct EthtoolChannels {
    cmd: u32,
    max_rx: u32,
    max_tx: u32,
    max_other: u32,
    max_combined: u32,
    rx_count: u32,
    tx_count: u32,
    other_count: u32,
    combined_count: u32,
}
const ETHTOOL_GCHANNELS: u32 = 0x3c;

impl AfPacketPort {
    /// The interface's receive queues (ethtool's channels: rx + combined); `None` when the
    /// driver does not tell.
    pub fn rx_queue_count(&self) -> Option<u32> {
        let mut ch = EthtoolChannels {
            cmd: ETHTOOL_GCHANNELS,
            ..Default::default()
        };
        let data = &mut ch as *mut EthtoolChannels as *mut libc::c_char;
        // The kernel fills `ch` for ETHTOOL_GCHANNELS; it lives until the call returns.
        let r = ifreq_with(&self.ctl, &self.iface, SIOCETHTOOL, |ifr| ifr.ifr_ifru.ifru_data = data);
        let n = ch.rx_count + ch.combined_count;
        (r.is_ok() && n > 0).then_some(n)
    }

    /// Open interface `iface` (checks that it exists and reads its MAC and MTU).
    pub fn open(iface: &str, opts: AfPacketOptions) -> Result<AfPacketPort> {
        let name = CString::new(iface).map_err(|_| IoError::Backend(format!("bad interface name '{iface}'")))?;
        let (ifindex, ctl, mac, mtu) = in_netns(opts.netns.as_deref(), || {
            // SAFETY: name is a valid C string.
            let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) } as i32;
            if ifindex == 0 {
                let where_ = opts.netns.as_deref().map(|n| format!(" in namespace {n}")).unwrap_or_default();
                return Err(IoError::Backend(format!("no interface '{iface}'{where_}")));
            }
            let ctl = packet_socket(0)?;
            let hw = ifreq(&ctl, iface, libc::SIOCGIFHWADDR)?;
            // SAFETY: SIOCGIFHWADDR filled the ifru_hwaddr member.
            let sa = unsafe { hw.ifr_ifru.ifru_hwaddr };
            let mut mac = [0u8; 6];
            for (d, s) in mac.iter_mut().zip(sa.sa_data.iter()) {
                *d = *s as u8;
            }
            let m = ifreq(&ctl, iface, libc::SIOCGIFMTU)?;
            // SAFETY: SIOCGIFMTU filled the ifru_mtu member.
            let mtu = unsafe { m.ifr_ifru.ifru_mtu };
            Ok((ifindex, ctl, MacAddr(mac), mtu))
        })?;
        // Ring slots hold the V2 header and a whole frame: 2048 for standard MTUs.
        let need = TX_DATA_OFFSET + 14 + usize::try_from(mtu).unwrap_or(1500).max(1500) + 64;
        let frame_size = need.next_power_of_two().clamp(2048, 16384) as u32;
        Ok(AfPacketPort {
            iface: iface.to_string(),
            opts,
            ifindex,
            mac,
            ctl,
            frame_size,
            mtu: usize::try_from(mtu).unwrap_or(0),
            opened: false,
        })
    }

    /// A transmit queue of its own (also the `afxdp` backend's control queue).
    pub(crate) fn open_tx(&self) -> Result<AfPacketTx> {
        in_netns(self.opts.netns.as_deref(), || {
            let fd = packet_socket(0)?;
            setsockopt(&fd, SOL_PACKET, PACKET_VERSION, &TPACKET_V2, "PACKET_VERSION")?;
            // A veth's transmit reports a drop in its peer's input queue (a DUT that cannot keep
            // up) to the sender, and a ring that bypasses the qdisc puts that frame back and
            // sends it again (tpacket_snd): the DUT's loss would become the tester's lag. Through
            // a qdisc the drop stays where it happened, as on a wire (the lab gives its veth
            // ends one); on any other interface the qdisc is bypassed.
            if sys::driver_name(&fd, &self.iface).as_deref() != Some("veth") {
                setsockopt(&fd, SOL_PACKET, PACKET_QDISC_BYPASS, &1i32, "PACKET_QDISC_BYPASS")?;
            }
            // PACKET_LOSS stays off: the kernel then marks a slot it cannot send
            // TP_STATUS_WRONG_FORMAT instead of skipping it silently, and `tx_burst` counts it
            // as the tester's own drop when it comes round to that slot again.
            let ring = ring(&fd, PACKET_TX_RING, self.opts.tx_frames, self.frame_size, "PACKET_TX_RING")?;
            // Every slot of the ring may be in flight at once. A frame's skb (and its share of
            // the socket's send buffer) lives until the frame is consumed; on veth that is
            // after the DUT's kernel processed it, so a DUT whose input queue fills would
            // otherwise stall the sender at the default buffer (about 250 frames): backpressure
            // that a wire never gives, and a DUT's limit that would look like the tester's.
            // SO_SNDBUFFORCE needs CAP_NET_ADMIN; without it SO_SNDBUF (net.core.wmem_max caps it).
            let want = i32::try_from(u64::from(self.opts.tx_frames) * (u64::from(self.frame_size) + 1024)).unwrap_or(i32::MAX);
            if setsockopt(&fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &want, "SO_SNDBUFFORCE").is_err() {
                let _ = setsockopt(&fd, libc::SOL_SOCKET, libc::SO_SNDBUF, &want, "SO_SNDBUF");
            }
            bind(&fd, self.ifindex, 0, &self.iface)?;
            Ok(AfPacketTx {
                fd,
                ring,
                dropped: 0,
                stamps: None,
                iface: self.iface.clone(),
            })
        })
    }

    /// A socket that receives nothing and holds the interface in promiscuous mode while it is
    /// open (the `afxdp` backend's `promisc`).
    pub(crate) fn promisc_socket(&self) -> Result<OwnedFd> {
        in_netns(self.opts.netns.as_deref(), || {
            let fd = packet_socket(0)?;
            // SAFETY: packet_mreq is plain data.
            let mut mr: libc::packet_mreq = unsafe { std::mem::zeroed() };
            mr.mr_ifindex = self.ifindex;
            mr.mr_type = PACKET_MR_PROMISC;
            setsockopt(&fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, "PACKET_ADD_MEMBERSHIP promisc")?;
            Ok(fd)
        })
    }

    /// The interface's own receive drops (the tester host's loss no socket counts).
    pub(crate) fn if_rx_drops(&self) -> Result<IfRxDrops> {
        IfRxDrops::new(in_netns(self.opts.netns.as_deref(), IfRxDrops::open_net_dev)?, &self.iface)
    }

    /// A receive socket; with `fanout`, a member of that fanout group (PACKET_FANOUT_HASH: the
    /// kernel hands each flow's frames to one member, by the flow hash of addresses and ports).
    fn open_rx(&self, fanout: Option<u16>, first: bool) -> Result<AfPacketRx> {
        let if_drops = if first { Some(self.if_rx_drops()?) } else { None };
        in_netns(self.opts.netns.as_deref(), || {
            let fd = packet_socket(ETH_P_ALL)?;
            setsockopt(&fd, SOL_PACKET, PACKET_VERSION, &TPACKET_V2, "PACKET_VERSION")?;
            setsockopt(&fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &1i32, "PACKET_IGNORE_OUTGOING")?;
            let ring = ring(&fd, PACKET_RX_RING, self.opts.rx_frames, self.frame_size, "PACKET_RX_RING")?;
            bind(&fd, self.ifindex, ETH_P_ALL, &self.iface)?;
            if let Some(id) = fanout {
                // A fanout group receives through the group's hook, which ignores outgoing frames
                // only with this flag (the socket's PACKET_IGNORE_OUTGOING is not the group's):
                // without it every frame the tester sends through the qdisc (veth) comes back to
                // its own receivers as a duplicate.
                let arg: u32 = u32::from(id) | ((PACKET_FANOUT_HASH | PACKET_FANOUT_FLAG_IGNORE_OUTGOING) << 16);
                setsockopt(&fd, SOL_PACKET, PACKET_FANOUT, &arg, "PACKET_FANOUT (hash)")?;
            }
            if self.opts.promisc {
                // SAFETY: packet_mreq is plain data.
                let mut mr: libc::packet_mreq = unsafe { std::mem::zeroed() };
                mr.mr_ifindex = self.ifindex;
                mr.mr_type = PACKET_MR_PROMISC;
                setsockopt(&fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, "PACKET_ADD_MEMBERSHIP promisc")?;
            }
            let mut rx = AfPacketRx { fd, ring, if_drops };
            rx.drain();
            Ok(rx)
        })
    }
}

impl Port for AfPacketPort {
    type Tx = AfPacketTx;
    type Rx = AfPacketRx;

    /// ethtool's pause parameters (`ethtool -A`), asked through the port's control socket.
    fn flow_control(&mut self, want: Option<bool>) -> Result<Option<crate::Pause>> {
        pause::flow_control(&self.ctl, &self.iface, &self.name(), want)
    }

    fn name(&self) -> String {
        match &self.opts.netns {
            Some(ns) => format!("{ns}/{}", self.iface),
            None => self.iface.clone(),
        }
    }

    fn mac(&self) -> MacAddr {
        self.mac
    }

    fn link_up(&self) -> bool {
        match ifreq(&self.ctl, &self.iface, libc::SIOCGIFFLAGS) {
            // SAFETY: SIOCGIFFLAGS filled the ifru_flags member.
            Ok(r) => {
                let flags = unsafe { r.ifr_ifru.ifru_flags } as libc::c_int;
                flags & libc::IFF_UP != 0 && flags & libc::IFF_RUNNING != 0
            }
            Err(_) => false,
        }
    }

    /// The MTU plus the Ethernet header (the kernel refuses longer frames), within a ring slot.
    fn max_frame_len(&self) -> usize {
        (self.mtu + 14).min(self.frame_size as usize - TX_DATA_OFFSET).min(MAX_FRAME_LEN)
    }

    fn max_queues(&self) -> usize {
        MAX_QUEUES
    }

    fn stamping(&self) -> Stamping {
        query_stamping(&self.ctl, &self.iface)
    }

    /// `n` sets of sockets; with more than one, the receive sockets form a fanout group that
    /// spreads the port's frames among them by flow.
    fn open_queues(&mut self, n: usize) -> Result<Vec<Queues<AfPacketTx, AfPacketRx>>> {
        if self.opened {
            return Err(IoError::Backend(format!("{}: queues already opened", self.name())));
        }
        if n == 0 || n > MAX_QUEUES {
            return Err(IoError::Backend(format!(
                "{}: {n} queues asked, 1 to {MAX_QUEUES} possible",
                self.name()
            )));
        }
        // A fanout group id of this process and interface (groups are per namespace).
        let fanout = (n > 1).then(|| (std::process::id() as u16) ^ (self.ifindex as u16).rotate_left(8));
        let mut sets = Vec::with_capacity(n);
        for i in 0..n {
            sets.push(Queues {
                tx: self.open_tx()?,
                rx: self.open_rx(fanout, i == 0)?,
                ctl: self.open_tx()?,
            });
        }
        self.opened = true;
        Ok(sets)
    }
}

/// A transmit ring.
pub struct AfPacketTx {
    fd: OwnedFd,
    ring: Ring,
    /// Slots the kernel gave back as TP_STATUS_WRONG_FORMAT (not sent), not yet reported.
    dropped: u64,
    /// The reader of the transmit stamps, once they are on.
    stamps: Option<ErrQueue>,
    /// The interface's name, for errors.
    iface: String,
}

impl AfPacketTx {
    fn kick(&mut self) -> Result<()> {
        // SAFETY: send with no buffer asks the kernel to transmit the ring's requested slots.
        let r = unsafe { libc::send(self.fd.as_raw_fd(), std::ptr::null(), 0, libc::MSG_DONTWAIT) };
        self.kicked(r, "send on the TX ring")
    }

    /// Send the requested slots, each stamped on transmit.
    fn kick_stamped(&mut self) -> Result<()> {
        self.kicked(stamps::send_stamped(&self.fd), "sendmsg (stamped) on the TX ring")
    }

    /// The outcome `r` of a kick: a full queue or an interrupted call is no error (the slots
    /// stay requested and go with the next kick).
    fn kicked(&self, r: isize, what: &str) -> Result<()> {
        if r < 0 {
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::ENOBUFS) | Some(libc::EINTR) => {}
                _ => {
                    return Err(IoError::Os {
                        what: format!("{}: {what}", self.iface),
                        os: e,
                    })
                }
            }
        }
        Ok(())
    }

    /// Fill up to `n` free slots from the ring's next one on, with their lengths; with
    /// `REQUEST` also mark each for sending as it is filled. Returns how many were filled.
    #[inline]
    fn fill_slots<const REQUEST: bool, F: FnMut(usize, &mut [u8]) -> usize>(&mut self, n: usize, mut fill: F) -> usize {
        let cap = (self.ring.frame_size - TX_DATA_OFFSET).min(MAX_FRAME_LEN);
        let mut filled = 0;
        while filled < n {
            let i = (self.ring.next + filled) % self.ring.frames;
            let st = self.ring.status(i).load(Ordering::Acquire);
            if st == TP_STATUS_WRONG_FORMAT {
                // The kernel refused the frame this slot held: it was counted as sent, but
                // never left. The slot is ours again.
                self.dropped += 1;
                self.ring.status(i).store(TP_STATUS_AVAILABLE, Ordering::Relaxed);
            } else if st != TP_STATUS_AVAILABLE {
                break; // the kernel still owns this slot: the ring is full
            }
            let slot = self.ring.slot(i);
            // SAFETY: the slot is ours (status AVAILABLE) and holds frame_size bytes, of which
            // the frame data starts at TX_DATA_OFFSET.
            let data = unsafe { std::slice::from_raw_parts_mut(slot.add(TX_DATA_OFFSET), cap) };
            let len = fill(filled, data);
            if len == 0 || len > cap {
                break;
            }
            // SAFETY: tp_len is the u32 at byte 4 of the tpacket2_hdr.
            unsafe { (slot.add(4) as *mut u32).write_volatile(len as u32) };
            if REQUEST {
                fence(Ordering::Release);
                self.ring.status(i).store(TP_STATUS_SEND_REQUEST, Ordering::Release);
            }
            filled += 1;
        }
        filled
    }
}

impl TxQueue for AfPacketTx {
    fn tx_burst<F: FnMut(usize, &mut [u8]) -> usize>(&mut self, n: usize, fill: F) -> Result<usize> {
        let sent = self.fill_slots::<true, F>(n, fill);
        self.ring.next = (self.ring.next + sent) % self.ring.frames;
        if sent > 0 {
            self.kick()?;
        }
        Ok(sent)
    }

    fn enable_stamps(&mut self) -> Result<()> {
        if self.stamps.is_none() {
            stamps::enable_tx(&self.fd)?;
            self.stamps = Some(ErrQueue::new());
        }
        Ok(())
    }

    /// The filled slots are marked for sending in runs of frames stamped alike, each run sent
    /// by a call of its own (the kernel stamps all or none of a call's frames): a burst with
    /// one stamped frame in the middle takes three calls.
    fn tx_burst_stamped<F: FnMut(usize, &mut [u8], &mut u64) -> usize>(&mut self, n: usize, stamp: u64, mut fill: F) -> Result<usize> {
        if stamp == 0 || self.stamps.is_none() {
            return self.tx_burst_cookie(n, fill);
        }
        let start = self.ring.next;
        let filled = self.fill_slots::<false, _>(n.min(64), |i, buf| fill(i, buf, &mut 0));
        self.ring.next = (start + filled) % self.ring.frames;
        let mut i = 0;
        while i < filled {
            let stamped = (stamp >> i) & 1 == 1;
            while i < filled && ((stamp >> i) & 1 == 1) == stamped {
                let slot = (start + i) % self.ring.frames;
                fence(Ordering::Release);
                self.ring.status(slot).store(TP_STATUS_SEND_REQUEST, Ordering::Release);
                i += 1;
            }
            if stamped {
                self.kick_stamped()?;
            } else {
                self.kick()?;
            }
        }
        Ok(filled)
    }

    fn tx_stamps<F: FnMut(&[u8], u64)>(&mut self, f: F) -> Result<usize> {
        match &mut self.stamps {
            Some(q) => q.read(&self.fd, f),
            None => Ok(0),
        }
    }

    fn flush(&mut self) -> Result<()> {
        self.kick()
    }

    fn dropped(&mut self) -> Result<u64> {
        // Slots refused since the last look and not yet reused: look at the whole ring once.
        for i in 0..self.ring.frames {
            if self.ring.status(i).load(Ordering::Acquire) == TP_STATUS_WRONG_FORMAT {
                self.ring.status(i).store(TP_STATUS_AVAILABLE, Ordering::Release);
                self.dropped += 1;
            }
        }
        Ok(std::mem::take(&mut self.dropped))
    }
}

/// A receive ring.
pub struct AfPacketRx {
    fd: OwnedFd,
    ring: Ring,
    /// The interface's own receive drops, on the port's first receive socket only (the
    /// counter is the interface's, not the socket's).
    if_drops: Option<IfRxDrops>,
}

impl AfPacketRx {
    /// Drop everything already in the ring (frames from before the trial).
    /// At most 200 ms: frames that keep coming (another sender on the link) would otherwise
    /// keep the port from opening.
    fn drain(&mut self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(200);
        while std::time::Instant::now() < deadline && self.rx_burst(usize::MAX, |_| {}).map(|n| n > 0).unwrap_or(false) {}
    }

    /// Frames the kernel dropped because the ring was full, since the last call
    /// (PACKET_STATISTICS resets its counters when read).
    fn kernel_drops(&self) -> Result<u64> {
        let (st, _) = getsockopt::<TpacketStats>(&self.fd, SOL_PACKET, PACKET_STATISTICS, "getsockopt(PACKET_STATISTICS)")?;
        Ok(u64::from(st.tp_drops))
    }
}

impl RxQueue for AfPacketRx {
    /// The ring's drops and, on the port's first socket, the interface's: a frame the
    /// tester's host dropped before the ring (a full backlog on the tester's CPU) is the
    /// tester's loss too.
    fn dropped(&mut self) -> Result<u64> {
        let interface = self.if_drops.as_mut().map_or(Ok(0), IfRxDrops::since_last)?;
        Ok(self.kernel_drops()? + interface)
    }

    fn rx_burst<F: FnMut(&[u8])>(&mut self, max: usize, mut f: F) -> Result<usize> {
        self.take(max, |frame, _| f(frame))
    }

    fn enable_stamps(&mut self) -> Result<()> {
        stamps::enable_rx(&self.fd)
    }

    fn rx_burst_stamped<F: FnMut(usize, &[u8], u64)>(&mut self, max: usize, mut f: F) -> Result<usize> {
        self.take(max, |frame, ns| f(0, frame, ns))
    }
}

impl AfPacketRx {
    /// Hand over up to `max` frames the kernel has put in the ring, each with the stamp in its
    /// slot header (CLOCK_REALTIME nanoseconds).
    #[inline]
    fn take<F: FnMut(&[u8], u64)>(&mut self, max: usize, mut f: F) -> Result<usize> {
        let mut n = 0;
        while n < max {
            let i = self.ring.next;
            let st = self.ring.status(i).load(Ordering::Acquire);
            if st & TP_STATUS_USER == 0 {
                break;
            }
            let slot = self.ring.slot(i);
            // SAFETY: the kernel handed this slot to us (TP_STATUS_USER); tp_snaplen is the u32
            // at byte 8, tp_mac the u16 at byte 12, tp_sec and tp_nsec the u32s at bytes 16 and
            // 20 of tpacket2_hdr.
            let (snaplen, mac_off, sec, nsec) = unsafe {
                (
                    (slot.add(8) as *const u32).read_volatile() as usize,
                    (slot.add(12) as *const u16).read_volatile() as usize,
                    (slot.add(16) as *const u32).read_volatile(),
                    (slot.add(20) as *const u32).read_volatile(),
                )
            };
            if mac_off + snaplen <= self.ring.frame_size {
                // SAFETY: bounds checked just above against the slot size.
                let frame = unsafe { std::slice::from_raw_parts(slot.add(mac_off), snaplen) };
                f(frame, u64::from(sec) * 1_000_000_000 + u64::from(nsec));
            }
            self.ring.status(i).store(TP_STATUS_KERNEL, Ordering::Release);
            self.ring.next = (i + 1) % self.ring.frames;
            n += 1;
        }
        Ok(n)
    }
}
