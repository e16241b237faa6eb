//! The kernel's AF_XDP and BPF interface: linux/if_xdp.h and linux/bpf.h constants and structures.

// linux/if_xdp.h (checked against the 6.18 uapi headers).
pub(super) const AF_XDP: libc::c_int = 44;
pub(super) const SOL_XDP: libc::c_int = 283;
pub(super) const XDP_MMAP_OFFSETS: libc::c_int = 1;
pub(super) const XDP_RX_RING: libc::c_int = 2;
pub(super) const XDP_TX_RING: libc::c_int = 3;
pub(super) const XDP_UMEM_REG: libc::c_int = 4;
pub(super) const XDP_UMEM_FILL_RING: libc::c_int = 5;
pub(super) const XDP_UMEM_COMPLETION_RING: libc::c_int = 6;
pub(super) const XDP_STATISTICS: libc::c_int = 7;
pub(super) const XDP_COPY: u16 = 1 << 1;
pub(super) const XDP_ZEROCOPY: u16 = 1 << 2;
pub(super) const XDP_USE_NEED_WAKEUP: u16 = 1 << 3;
pub(super) const XDP_RING_NEED_WAKEUP: u32 = 1 << 0;
pub(super) const XDP_PGOFF_RX_RING: libc::off_t = 0;
pub(super) const XDP_PGOFF_TX_RING: libc::off_t = 0x8000_0000;
pub(super) const XDP_UMEM_PGOFF_FILL_RING: libc::off_t = 0x1_0000_0000;
pub(super) const XDP_UMEM_PGOFF_COMPLETION_RING: libc::off_t = 0x1_8000_0000;
/// XDP_PACKET_HEADROOM: where received data starts in a frame.
pub(super) const XDP_HEADROOM: usize = 256;

/// The size of a UMEM frame (the largest aligned chunk: one page).
pub const FRAME_SIZE: usize = 4096;

#[repr(C)]
#[derive(Default)]
pub(super) struct XdpUmemReg {
    pub(super) addr: u64,
    pub(super) len: u64,
    pub(super) chunk_size: u32,
    pub(super) headroom: u32,
    pub(super) flags: u32,
    pub(super) tx_metadata_len: u32,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
pub(super) struct XdpRingOffset {
    pub(super) producer: u64,
    pub(super) consumer: u64,
    pub(super) desc: u64,
    pub(super) flags: u64,
}

#[repr(C)]
#[derive(Default)]
pub(super) struct XdpMmapOffsets {
    pub(super) rx: XdpRingOffset,
    pub(super) tx: XdpRingOffset,
    pub(super) fr: XdpRingOffset,
    pub(super) cr: XdpRingOffset,
}

#[repr(C)]
#[derive(Default)]
pub(super) struct SockaddrXdp {
    pub(super) family: u16,
    pub(super) flags: u16,
    pub(super) ifindex: u32,
    pub(super) queue_id: u32,
    pub(super) shared_umem_fd: u32,
}

#[repr(C)]
#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct XdpStatistics {
    pub(super) rx_dropped: u64,
    pub(super) rx_invalid_descs: u64,
    pub(super) tx_invalid_descs: u64,
    pub(super) rx_ring_full: u64,
    pub(super) rx_fill_ring_empty_descs: u64,
    pub(super) tx_ring_empty_descs: u64,
}

/// struct xdp_desc.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct XdpDesc {
    pub(super) addr: u64,
    pub(super) len: u32,
    pub(super) options: u32,
}
