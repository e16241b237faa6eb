//! One AF_XDP socket: its UMEM, its rings, bound to one receive queue; the attached program it shares.

use super::abi::{
    SockaddrXdp, XdpDesc, XdpMmapOffsets, XdpStatistics, XdpUmemReg, AF_XDP, FRAME_SIZE, SOL_XDP, XDP_COPY, XDP_MMAP_OFFSETS,
    XDP_PGOFF_RX_RING, XDP_PGOFF_TX_RING, XDP_RX_RING, XDP_STATISTICS, XDP_TX_RING, XDP_UMEM_COMPLETION_RING, XDP_UMEM_FILL_RING,
    XDP_UMEM_PGOFF_COMPLETION_RING, XDP_UMEM_PGOFF_FILL_RING, XDP_UMEM_REG, XDP_USE_NEED_WAKEUP, XDP_ZEROCOPY,
};
use super::options::AfXdpOptions;
use super::ring::{mmap, Mmap, Ring};
use crate::afpacket::{getsockopt, setsockopt};
use crate::{IoError, Result};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex};

/// The XDP program, its XSKMAP and its attachment (a BPF link: the kernel detaches the program
/// when the last descriptor of the link closes, also when the process is killed). Fields drop
/// in order: the link first.
pub(super) struct Attached {
    pub(super) _link: OwnedFd,
    pub(super) _prog: OwnedFd,
    pub(super) _map: OwnedFd,
}

/// What the two halves of one socket share: the socket, its UMEM, and the port's program
/// (detached when the last socket goes: it drops first).
pub(super) struct Xsk {
    pub(super) _attached: Arc<Attached>,
    pub(super) sock: OwnedFd,
    pub(super) umem: Mmap,
    /// The last statistics each side reported from (RX drops, TX invalid descriptors).
    pub(super) stats: Mutex<XdpStatistics>,
}

impl Xsk {
    pub(super) fn statistics(&self) -> Result<XdpStatistics> {
        getsockopt(&self.sock, SOL_XDP, XDP_STATISTICS, "getsockopt(XDP_STATISTICS)").map(|(st, _)| st)
    }

    /// Where `len` bytes from UMEM address `addr` are; `None` outside the UMEM.
    #[inline]
    pub(super) fn frame(&self, addr: u64, len: usize) -> Option<*mut u8> {
        let a = usize::try_from(addr).ok()?;
        if a.checked_add(len)? > self.umem.len {
            return None;
        }
        Some(self.umem.base.wrapping_add(a))
    }
}

/// An AF_XDP socket with its own UMEM (`opts.rx_frames` receive frames in the fill ring,
/// `opts.tx_frames` transmit frames) bound to receive queue `queue` of `ifindex`, zero-copy
/// where the driver has it (called in the interface's namespace).
pub(super) fn bind_socket(ifindex: i32, iface: &str, queue: u32, opts: &AfXdpOptions) -> Result<Bound> {
    // SAFETY: plain socket(2) call; the result is checked.
    let fd = unsafe { libc::socket(AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(IoError::last_os("socket(AF_XDP) (needs root, CONFIG_XDP_SOCKETS)"));
    }
    // SAFETY: fd is a fresh descriptor we own.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    let frames = (opts.rx_frames + opts.tx_frames) as usize;
    let umem = mmap(frames * FRAME_SIZE, -1, 0, "the UMEM")?;
    let reg = XdpUmemReg {
        addr: umem.base as u64,
        len: umem.len as u64,
        chunk_size: FRAME_SIZE as u32,
        ..Default::default()
    };
    setsockopt(&sock, SOL_XDP, XDP_UMEM_REG, &reg, "setsockopt(XDP_UMEM_REG)")?;
    setsockopt(
        &sock,
        SOL_XDP,
        XDP_UMEM_FILL_RING,
        &opts.rx_frames,
        "setsockopt(XDP_UMEM_FILL_RING)",
    )?;
    setsockopt(
        &sock,
        SOL_XDP,
        XDP_UMEM_COMPLETION_RING,
        &opts.tx_frames,
        "setsockopt(XDP_UMEM_COMPLETION_RING)",
    )?;
    setsockopt(&sock, SOL_XDP, XDP_RX_RING, &opts.rx_frames, "setsockopt(XDP_RX_RING)")?;
    setsockopt(&sock, SOL_XDP, XDP_TX_RING, &opts.tx_frames, "setsockopt(XDP_TX_RING)")?;
    let (off, len) = getsockopt::<XdpMmapOffsets>(&sock, SOL_XDP, XDP_MMAP_OFFSETS, "getsockopt(XDP_MMAP_OFFSETS)")?;
    if len != std::mem::size_of::<XdpMmapOffsets>() {
        return Err(IoError::Backend(
            "getsockopt(XDP_MMAP_OFFSETS) answered with the layout of a kernel older than 5.4: AF_XDP needs 5.4 or newer".into(),
        ));
    }
    let d = std::mem::size_of::<XdpDesc>();
    let rx = Ring::map(&sock, &off.rx, opts.rx_frames, d, XDP_PGOFF_RX_RING, "the RX ring")?;
    let tx = Ring::map(&sock, &off.tx, opts.tx_frames, d, XDP_PGOFF_TX_RING, "the TX ring")?;
    let mut fill = Ring::map(&sock, &off.fr, opts.rx_frames, 8, XDP_UMEM_PGOFF_FILL_RING, "the fill ring")?;
    let comp = Ring::map(
        &sock,
        &off.cr,
        opts.tx_frames,
        8,
        XDP_UMEM_PGOFF_COMPLETION_RING,
        "the completion ring",
    )?;
    // Every receive frame starts in the fill ring.
    for i in 0..opts.rx_frames {
        // SAFETY: the fill ring holds rx_frames u64 addresses.
        unsafe { fill.slot::<u64>(i).write(u64::from(i) * FRAME_SIZE as u64) };
    }
    fill.submit(opts.rx_frames);

    let bind = |flags: u16| {
        let sa = SockaddrXdp {
            family: AF_XDP as u16,
            flags: flags | XDP_USE_NEED_WAKEUP,
            ifindex: ifindex as u32,
            queue_id: queue,
            shared_umem_fd: 0,
        };
        // SAFETY: sa is a valid sockaddr_xdp of the size given.
        let r = unsafe {
            libc::bind(
                sock.as_raw_fd(),
                &sa as *const SockaddrXdp as *const libc::sockaddr,
                std::mem::size_of::<SockaddrXdp>() as u32,
            )
        };
        if r != 0 {
            Err(IoError::last_os(format!("bind AF_XDP socket to {iface} queue {queue}")))
        } else {
            Ok(())
        }
    };
    let copy = match bind(XDP_ZEROCOPY) {
        Ok(()) => "zero-copy",
        Err(_) => {
            bind(XDP_COPY)?;
            "copy"
        }
    };
    Ok(Bound {
        sock,
        umem,
        rings: (rx, fill, tx, comp),
        copy,
    })
}

/// A socket's rings: RX, fill, TX, completion.
pub(super) type Rings = (Ring, Ring, Ring, Ring);

/// A socket bound to one receive queue, before the program is attached.
pub(super) struct Bound {
    pub(super) sock: OwnedFd,
    pub(super) umem: Mmap,
    pub(super) rings: Rings,
    pub(super) copy: &'static str,
}
