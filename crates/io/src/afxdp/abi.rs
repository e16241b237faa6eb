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

// linux/bpf.h and linux/if_link.h.
pub(super) const BPF_MAP_CREATE: libc::c_long = 0;
pub(super) const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
pub(super) const BPF_PROG_LOAD: libc::c_long = 5;
pub(super) const BPF_LINK_CREATE: libc::c_long = 28;
pub(super) const BPF_MAP_TYPE_XSKMAP: u32 = 17;
pub(super) const BPF_PROG_TYPE_XDP: u32 = 6;
pub(super) const BPF_XDP: u32 = 37;
pub(super) const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
pub(super) const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;
pub(super) const XDP_PASS: i32 = 2;
pub(super) const BPF_FUNC_REDIRECT_MAP: i32 = 51;
pub(super) const BPF_PSEUDO_MAP_FD: u8 = 1;
/// offsetof(struct xdp_md, rx_queue_index).
pub(super) const XDP_MD_RX_QUEUE_INDEX: i16 = 16;

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

/// bpf_attr for BPF_MAP_CREATE (the leading fields).
#[repr(C)]
#[derive(Default)]
pub(super) struct MapCreateAttr {
    pub(super) map_type: u32,
    pub(super) key_size: u32,
    pub(super) value_size: u32,
    pub(super) max_entries: u32,
    pub(super) map_flags: u32,
    pub(super) inner_map_fd: u32,
    pub(super) numa_node: u32,
    pub(super) map_name: [u8; 16],
}

/// bpf_attr for BPF_MAP_UPDATE_ELEM.
#[repr(C)]
#[derive(Default)]
pub(super) struct MapUpdateAttr {
    pub(super) map_fd: u32,
    pub(super) _pad: u32,
    pub(super) key: u64,
    pub(super) value: u64,
    pub(super) flags: u64,
}

/// bpf_attr for BPF_PROG_LOAD (the leading fields).
#[repr(C)]
#[derive(Default)]
pub(super) struct ProgLoadAttr {
    pub(super) prog_type: u32,
    pub(super) insn_cnt: u32,
    pub(super) insns: u64,
    pub(super) license: u64,
    pub(super) log_level: u32,
    pub(super) log_size: u32,
    pub(super) log_buf: u64,
    pub(super) kern_version: u32,
    pub(super) prog_flags: u32,
    pub(super) prog_name: [u8; 16],
    pub(super) prog_ifindex: u32,
    pub(super) expected_attach_type: u32,
}

/// bpf_attr for BPF_LINK_CREATE (the leading fields).
#[repr(C)]
#[derive(Default)]
pub(super) struct LinkCreateAttr {
    pub(super) prog_fd: u32,
    pub(super) target_ifindex: u32,
    pub(super) attach_type: u32,
    pub(super) flags: u32,
}
