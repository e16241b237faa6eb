//! The `afxdp` backend: one AF_XDP socket per receive queue of the interface (queue 0 alone
//! by default; [`AfXdpOptions::queues`]), each with a UMEM of its own, and an XDP program that
//! redirects the tester's frames to the socket of the queue they arrived on. No libbpf, libxdp or
//! clang: the socket, the rings, the XSKMAP, the program (a few eBPF instructions written
//! here) and its attachment are plain system calls.
//!
//! - **UMEM**: anonymous memory of 4096-byte frames, registered with XDP_UMEM_REG. The first
//!   [`AfXdpOptions::rx_frames`] frames belong to the receive side (they cycle between the fill
//!   ring, the RX ring and `rx_burst`), the others to the transmit side (a free list, the TX
//!   ring, the completion ring). The fill callback of [`TxQueue::tx_burst`] writes straight into
//!   a UMEM frame: with zero-copy, no copy at all; and since the kernel only reads TX frames,
//!   a frame keeps what the sender wrote, so [`TxQueue::tx_burst_cookie`] keeps cookies too.
//! - **Bind**: XDP_USE_NEED_WAKEUP, XDP_ZEROCOPY first, XDP_COPY when the driver has no
//!   zero-copy (veth: copy only). The TX ring is kicked with `sendto` only when the kernel set
//!   the ring's need-wakeup flag (in copy mode it always does: the kernel sends in `sendto`).
//! - **Rings**: the producer and consumer indexes are shared with the kernel and read and
//!   written as atomics, Acquire on the other side's index and Release on our own, as
//!   libxdp's `xsk.h` does.
//! - **The XDP program** ([`xdp_program`]) redirects IPv4, IPv6 and ARP frames (ethertypes
//!   0x0800, 0x86DD, 0x0806) to the XSKMAP entry of the frame's receive queue and passes
//!   everything else to the kernel (also when the queue has no socket: `bpf_redirect_map`'s
//!   fallback action is XDP_PASS). *ARP and NDP are redirected, not passed*: the tester answers
//!   the DUT's ARP requests and neighbour solicitations itself, from its receive queue
//!   (`xlat_engine::neighbour`), exactly as with `afpacket`, where the receive ring sees every
//!   frame. The tester's addresses are not the kernel's (the lab's tester namespace has no
//!   addresses and IPv6 off), so frames passed to the kernel would go unanswered and the DUT
//!   would never learn the tester's MAC. What the receive path does not parse (LLDP, STP, VLAN
//!   tags, ...) is the kernel's, as it was before.
//! - **Attachment**: `bpf(BPF_LINK_CREATE)` with attach type BPF_XDP, driver mode first
//!   (XDP_FLAGS_DRV_MODE), generic (XDP_FLAGS_SKB_MODE) when the driver refuses. The link is a
//!   file descriptor of this process: when the process ends, however it ends (kill -9 too), the
//!   kernel closes it and detaches the program. `xlatperf lab down` also turns XDP off on the
//!   lab's tester ports, for programs attached some other way.
//! - **Control queue** ([`Queues::ctl`]): an AF_PACKET socket (`afpacket`'s transmit ring) on
//!   the same interface. A second AF_XDP socket on queue 0 would have to share this UMEM
//!   (XDP_SHARED_UMEM), and with it the fill and completion rings, which the receiving and the
//!   sending thread would then both use; the few ARP/NDP answers need none of that speed.
//!
//! Limits: queues 0 to `queues - 1` are read, and opening refuses an interface with more
//! receive queues (ethtool's channel count), whose frames on the others would reach the kernel
//! instead (give it fewer: `ethtool -L <if> combined N`); frames longer than a UMEM frame less
//! XDP's 256-byte headroom (3840 bytes) are not sent.

use crate::afpacket::{getsockopt, in_netns, setsockopt, AfPacketOptions, AfPacketPort, AfPacketTx};
use crate::{IoError, Port, Queues, Result, RxQueue, TxQueue, MAX_FRAME_LEN};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use xlat_wire::MacAddr;

// linux/if_xdp.h (checked against the 6.18 uapi headers).
const AF_XDP: libc::c_int = 44;
const SOL_XDP: libc::c_int = 283;
const XDP_MMAP_OFFSETS: libc::c_int = 1;
const XDP_RX_RING: libc::c_int = 2;
const XDP_TX_RING: libc::c_int = 3;
const XDP_UMEM_REG: libc::c_int = 4;
const XDP_UMEM_FILL_RING: libc::c_int = 5;
const XDP_UMEM_COMPLETION_RING: libc::c_int = 6;
const XDP_STATISTICS: libc::c_int = 7;
const XDP_COPY: u16 = 1 << 1;
const XDP_ZEROCOPY: u16 = 1 << 2;
const XDP_USE_NEED_WAKEUP: u16 = 1 << 3;
const XDP_RING_NEED_WAKEUP: u32 = 1 << 0;
const XDP_PGOFF_RX_RING: libc::off_t = 0;
const XDP_PGOFF_TX_RING: libc::off_t = 0x8000_0000;
const XDP_UMEM_PGOFF_FILL_RING: libc::off_t = 0x1_0000_0000;
const XDP_UMEM_PGOFF_COMPLETION_RING: libc::off_t = 0x1_8000_0000;
/// XDP_PACKET_HEADROOM: where received data starts in a frame.
const XDP_HEADROOM: usize = 256;

// linux/bpf.h and linux/if_link.h.
const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_LINK_CREATE: libc::c_long = 28;
const BPF_MAP_TYPE_XSKMAP: u32 = 17;
const BPF_PROG_TYPE_XDP: u32 = 6;
const BPF_XDP: u32 = 37;
const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;
const XDP_PASS: i32 = 2;
const BPF_FUNC_REDIRECT_MAP: i32 = 51;
const BPF_PSEUDO_MAP_FD: u8 = 1;
/// offsetof(struct xdp_md, rx_queue_index).
const XDP_MD_RX_QUEUE_INDEX: i16 = 16;

/// The size of a UMEM frame (the largest aligned chunk: one page).
pub const FRAME_SIZE: usize = 4096;

#[repr(C)]
#[derive(Default)]
struct XdpUmemReg {
    addr: u64,
    len: u64,
    chunk_size: u32,
    headroom: u32,
    flags: u32,
    tx_metadata_len: u32,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct XdpRingOffset {
    producer: u64,
    consumer: u64,
    desc: u64,
    flags: u64,
}

#[repr(C)]
#[derive(Default)]
struct XdpMmapOffsets {
    rx: XdpRingOffset,
    tx: XdpRingOffset,
    fr: XdpRingOffset,
    cr: XdpRingOffset,
}

#[repr(C)]
#[derive(Default)]
struct SockaddrXdp {
    family: u16,
    flags: u16,
    ifindex: u32,
    queue_id: u32,
    shared_umem_fd: u32,
}

#[repr(C)]
#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
struct XdpStatistics {
    rx_dropped: u64,
    rx_invalid_descs: u64,
    tx_invalid_descs: u64,
    rx_ring_full: u64,
    rx_fill_ring_empty_descs: u64,
    tx_ring_empty_descs: u64,
}

/// struct xdp_desc.
#[repr(C)]
#[derive(Clone, Copy)]
struct XdpDesc {
    addr: u64,
    len: u32,
    options: u32,
}

/// bpf_attr for BPF_MAP_CREATE (the leading fields).
#[repr(C)]
#[derive(Default)]
struct MapCreateAttr {
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
    inner_map_fd: u32,
    numa_node: u32,
    map_name: [u8; 16],
}

/// bpf_attr for BPF_MAP_UPDATE_ELEM.
#[repr(C)]
#[derive(Default)]
struct MapUpdateAttr {
    map_fd: u32,
    _pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

/// bpf_attr for BPF_PROG_LOAD (the leading fields).
#[repr(C)]
#[derive(Default)]
struct ProgLoadAttr {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
}

/// bpf_attr for BPF_LINK_CREATE (the leading fields).
#[repr(C)]
#[derive(Default)]
struct LinkCreateAttr {
    prog_fd: u32,
    target_ifindex: u32,
    attach_type: u32,
    flags: u32,
}

/// One eBPF instruction (struct bpf_insn): opcode, dst_reg in the low and src_reg in the high
/// nibble, offset, immediate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insn {
    pub code: u8,
    pub regs: u8,
    pub off: i16,
    pub imm: i32,
}

impl Insn {
    const fn new(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
        Insn {
            code,
            regs: (src << 4) | (dst & 0x0f),
            off,
            imm,
        }
    }

    /// The 8 bytes the kernel reads (little-endian fields on a little-endian host).
    pub fn to_bytes(self) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[0] = self.code;
        b[1] = self.regs;
        b[2..4].copy_from_slice(&self.off.to_ne_bytes());
        b[4..8].copy_from_slice(&self.imm.to_ne_bytes());
        b
    }
}

// Opcodes (class | size/op | source).
const MOV64_X: u8 = 0x07 | 0xb0 | 0x08; // BPF_ALU64 | BPF_MOV | BPF_X
const MOV64_K: u8 = 0x07 | 0xb0; // BPF_ALU64 | BPF_MOV | BPF_K
const ADD64_K: u8 = 0x07; // BPF_ALU64 | BPF_ADD | BPF_K
const LDX_W: u8 = 0x01 | 0x60; // BPF_LDX | BPF_MEM | BPF_W
const LDX_H: u8 = 0x01 | 0x60 | 0x08; // BPF_LDX | BPF_MEM | BPF_H
const LD_DW_IMM: u8 = 0x18; // BPF_LD (0) | BPF_IMM (0) | BPF_DW
const JGT_X: u8 = 0x05 | 0x20 | 0x08; // BPF_JMP | BPF_JGT | BPF_X
const JEQ_K: u8 = 0x05 | 0x10; // BPF_JMP | BPF_JEQ | BPF_K
const CALL: u8 = 0x05 | 0x80;
const EXIT: u8 = 0x05 | 0x90;

/// The most sockets (receive queues) an AF_XDP port opens.
pub const MAX_QUEUES: u32 = 64;

/// The ethertypes redirected to the socket: what the tester's receive path parses.
pub const REDIRECTED_ETHERTYPES: [u16; 3] = [0x0800, 0x86dd, 0x0806];

/// The XDP program: IPv4, IPv6 (NDP included) and ARP frames go to the XSKMAP entry of their
/// receive queue (`map_fd`), XDP_PASS when that entry is empty; anything else, and frames
/// shorter than an Ethernet header, pass to the kernel.
pub fn xdp_program(map_fd: i32) -> Vec<Insn> {
    // A u16 loaded from the frame holds the ethertype's bytes in host order.
    let et = |t: u16| i32::from(u16::from_ne_bytes(t.to_be_bytes()));
    vec![
        Insn::new(MOV64_X, 6, 1, 0, 0),                          // 0: r6 = ctx
        Insn::new(LDX_W, 2, 1, 0, 0),                            // 1: r2 = ctx->data
        Insn::new(LDX_W, 3, 1, 4, 0),                            // 2: r3 = ctx->data_end
        Insn::new(MOV64_X, 4, 2, 0, 0),                          // 3: r4 = r2
        Insn::new(ADD64_K, 4, 0, 0, 14),                         // 4: r4 += 14
        Insn::new(JGT_X, 4, 3, 4, 0),                            // 5: if r4 > r3 goto 10 (pass)
        Insn::new(LDX_H, 4, 2, 12, 0),                           // 6: r4 = ethertype
        Insn::new(JEQ_K, 4, 0, 4, et(REDIRECTED_ETHERTYPES[0])), // 7: goto 12
        Insn::new(JEQ_K, 4, 0, 3, et(REDIRECTED_ETHERTYPES[1])), // 8: goto 12
        Insn::new(JEQ_K, 4, 0, 2, et(REDIRECTED_ETHERTYPES[2])), // 9: goto 12
        Insn::new(MOV64_K, 0, 0, 0, XDP_PASS),                   // 10: r0 = XDP_PASS
        Insn::new(EXIT, 0, 0, 0, 0),                             // 11: exit
        Insn::new(LDX_W, 2, 6, XDP_MD_RX_QUEUE_INDEX, 0),        // 12: r2 = ctx->rx_queue_index
        Insn::new(LD_DW_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map_fd),   // 13: r1 = map
        Insn::new(0, 0, 0, 0, 0),                                // 14: (second half of the 64-bit load)
        Insn::new(MOV64_K, 3, 0, 0, XDP_PASS),                   // 15: r3 = XDP_PASS (when no socket)
        Insn::new(CALL, 0, 0, 0, BPF_FUNC_REDIRECT_MAP),         // 16: bpf_redirect_map(r1, r2, r3)
        Insn::new(EXIT, 0, 0, 0, 0),                             // 17: exit
    ]
}

/// Entries a producer may still write: the ring's size less what the consumer has not taken.
#[inline]
pub fn ring_free(size: u32, producer: u32, consumer: u32) -> u32 {
    size.wrapping_sub(producer.wrapping_sub(consumer))
}

/// Entries a consumer may read.
#[inline]
pub fn ring_ready(producer: u32, consumer: u32) -> u32 {
    producer.wrapping_sub(consumer)
}

/// The start of the UMEM frame holding `addr` (an address the kernel handed back may point
/// past the frame's start, by the headroom).
#[inline]
pub fn frame_base(addr: u64) -> u64 {
    addr & !(FRAME_SIZE as u64 - 1)
}

/// Options of an AF_XDP port.
#[derive(Debug, Clone)]
pub struct AfXdpOptions {
    /// The `ip netns` namespace the interface lives in; `None`: the current one.
    pub netns: Option<String>,
    /// Receive frames (a power of two: also the fill and RX ring sizes).
    pub rx_frames: u32,
    /// Transmit frames (a power of two: also the TX and completion ring sizes).
    pub tx_frames: u32,
    /// Receive in promiscuous mode (AF_XDP sees every frame the interface accepts: an
    /// AF_PACKET membership holds the interface promiscuous while the port is open).
    pub promisc: bool,
    /// Attach the program in generic (SKB) mode without trying driver mode first.
    pub generic: bool,
    /// Sockets, one per receive queue of the interface from queue 0 on, each with its own UMEM
    /// (see [`Port::open_queues`]); the interface must have no more receive queues than this,
    /// or frames on the others would reach the kernel instead of the tester.
    pub queues: u32,
}

impl Default for AfXdpOptions {
    fn default() -> Self {
        AfXdpOptions {
            netns: None,
            rx_frames: 8192,
            tx_frames: 4096,
            promisc: false,
            generic: false,
            queues: 1,
        }
    }
}

/// A memory mapping, unmapped on drop.
struct Mmap {
    base: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain memory; who touches which part is ruled by the rings.
unsafe impl Send for Mmap {}
unsafe impl Sync for Mmap {}

impl Drop for Mmap {
    fn drop(&mut self) {
        // SAFETY: base/len came from a successful mmap and are unmapped once.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

fn mmap(len: usize, fd: RawFd, offset: libc::off_t, what: &str) -> Result<Mmap> {
    let (flags, fd) = if fd < 0 {
        (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE, -1)
    } else {
        (libc::MAP_SHARED | libc::MAP_POPULATE, fd)
    };
    // SAFETY: a fresh mapping; the result is checked.
    let base = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, flags, fd, offset) };
    if base == libc::MAP_FAILED {
        return Err(IoError::last_os(format!("mmap {what}")));
    }
    Ok(Mmap {
        base: base as *mut u8,
        len,
    })
}

/// A ring shared with the kernel: producer and consumer indexes, flags, descriptors.
struct Ring {
    _map: Mmap,
    producer: *const AtomicU32,
    consumer: *const AtomicU32,
    flags: *const AtomicU32,
    descs: *mut u8,
    size: u32,
    /// Our own index (the producer's for a producer ring, the consumer's for a consumer ring).
    local: u32,
}

// SAFETY: one Ring is used by one thread at a time; the kernel's side goes through atomics.
unsafe impl Send for Ring {}

impl Ring {
    fn map(fd: &OwnedFd, off: &XdpRingOffset, size: u32, desc_size: usize, pgoff: libc::off_t, what: &str) -> Result<Ring> {
        let len = off.desc as usize + size as usize * desc_size;
        let m = mmap(len, fd.as_raw_fd(), pgoff, what)?;
        let at = |o: u64| m.base.wrapping_add(o as usize);
        let r = Ring {
            producer: at(off.producer) as *const AtomicU32,
            consumer: at(off.consumer) as *const AtomicU32,
            flags: at(off.flags) as *const AtomicU32,
            descs: at(off.desc),
            size,
            local: 0,
            _map: m,
        };
        Ok(r)
    }

    #[inline]
    fn producer(&self) -> &AtomicU32 {
        // SAFETY: the kernel's offsets point into the mapping, at 4-byte aligned u32s.
        unsafe { &*self.producer }
    }

    #[inline]
    fn consumer(&self) -> &AtomicU32 {
        // SAFETY: as above.
        unsafe { &*self.consumer }
    }

    #[inline]
    fn needs_wakeup(&self) -> bool {
        // SAFETY: as above.
        unsafe { &*self.flags }.load(Ordering::Relaxed) & XDP_RING_NEED_WAKEUP != 0
    }

    /// Descriptor slot of index `i` (any index: it wraps), of type T.
    #[inline]
    fn slot<T>(&self, i: u32) -> *mut T {
        let k = (i & (self.size - 1)) as usize;
        // SAFETY: k < size and the mapping holds size descriptors of this type.
        unsafe { (self.descs as *mut T).add(k) }
    }

    // Producer side.
    #[inline]
    fn free(&self) -> u32 {
        ring_free(self.size, self.local, self.consumer().load(Ordering::Acquire))
    }

    #[inline]
    fn submit(&mut self, n: u32) {
        self.local = self.local.wrapping_add(n);
        self.producer().store(self.local, Ordering::Release);
    }

    // Consumer side.
    #[inline]
    fn ready(&self) -> u32 {
        ring_ready(self.producer().load(Ordering::Acquire), self.local)
    }

    #[inline]
    fn release(&mut self, n: u32) {
        self.local = self.local.wrapping_add(n);
        self.consumer().store(self.local, Ordering::Release);
    }
}

/// The XDP program, its XSKMAP and its attachment (a BPF link: the kernel detaches the program
/// when the last descriptor of the link closes, also when the process is killed). Fields drop
/// in order: the link first.
struct Attached {
    _link: OwnedFd,
    _prog: OwnedFd,
    _map: OwnedFd,
}

/// What the two halves of one socket share: the socket, its UMEM, and the port's program
/// (detached when the last socket goes: it drops first).
struct Xsk {
    _attached: Arc<Attached>,
    sock: OwnedFd,
    umem: Mmap,
    /// The last statistics each side reported from (RX drops, TX invalid descriptors).
    stats: Mutex<XdpStatistics>,
}

impl Xsk {
    fn statistics(&self) -> Result<XdpStatistics> {
        getsockopt(&self.sock, SOL_XDP, XDP_STATISTICS, "getsockopt(XDP_STATISTICS)").map(|(st, _)| st)
    }

    /// Where `len` bytes from UMEM address `addr` are; `None` outside the UMEM.
    #[inline]
    fn frame(&self, addr: u64, len: usize) -> Option<*mut u8> {
        let a = usize::try_from(addr).ok()?;
        if a.checked_add(len)? > self.umem.len {
            return None;
        }
        Some(self.umem.base.wrapping_add(a))
    }
}

fn bpf<T>(cmd: libc::c_long, attr: &mut T, what: &str) -> Result<OwnedFd> {
    // SAFETY: attr is a bpf_attr prefix of the given size; the kernel zero-extends it.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr as *mut T, std::mem::size_of::<T>() as u32) };
    if r < 0 {
        return Err(IoError::last_os(what));
    }
    // SAFETY: the commands used with this function return a new descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
}

fn name16(s: &str) -> [u8; 16] {
    let mut n = [0u8; 16];
    for (d, c) in n.iter_mut().zip(s.bytes().take(15)) {
        *d = c;
    }
    n
}

/// Create the XSKMAP holding `socks[k]` at entry k (receive queue k).
fn xskmap(socks: &[&OwnedFd]) -> Result<OwnedFd> {
    let mut c = MapCreateAttr {
        map_type: BPF_MAP_TYPE_XSKMAP,
        key_size: 4,
        value_size: 4,
        max_entries: socks.len().max(1) as u32,
        map_name: name16("xlat_xsks"),
        ..Default::default()
    };
    let map = bpf(BPF_MAP_CREATE, &mut c, "bpf(BPF_MAP_CREATE, XSKMAP) (needs root or CAP_BPF)")?;
    for (k, sock) in socks.iter().enumerate() {
        map_put(&map, k as u32, sock.as_raw_fd() as u32)?;
    }
    Ok(map)
}

/// `map[key] = value`.
fn map_put(map: &OwnedFd, key: u32, value: u32) -> Result<()> {
    let mut u = MapUpdateAttr {
        map_fd: map.as_raw_fd() as u32,
        key: &key as *const u32 as u64,
        value: &value as *const u32 as u64,
        ..Default::default()
    };
    // SAFETY: u is a bpf_attr for MAP_UPDATE_ELEM; key and value outlive the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_MAP_UPDATE_ELEM,
            &mut u as *mut MapUpdateAttr,
            std::mem::size_of::<MapUpdateAttr>() as u32,
        )
    };
    if r != 0 {
        return Err(IoError::last_os(format!("bpf(BPF_MAP_UPDATE_ELEM) of XSKMAP entry {key}")));
    }
    Ok(())
}

/// Load [`xdp_program`] for `map`; on failure, the verifier's log is in the error.
fn load_program(map: &OwnedFd) -> Result<OwnedFd> {
    let insns: Vec<u8> = xdp_program(map.as_raw_fd()).into_iter().flat_map(Insn::to_bytes).collect();
    let license = b"GPL\0";
    let attr = |log: &mut [u8]| ProgLoadAttr {
        prog_type: BPF_PROG_TYPE_XDP,
        insn_cnt: (insns.len() / 8) as u32,
        insns: insns.as_ptr() as u64,
        license: license.as_ptr() as u64,
        log_level: u32::from(!log.is_empty()),
        log_size: log.len() as u32,
        log_buf: if log.is_empty() { 0 } else { log.as_mut_ptr() as u64 },
        prog_name: name16("xlat_xsk"),
        expected_attach_type: BPF_XDP,
        ..Default::default()
    };
    match bpf(BPF_PROG_LOAD, &mut attr(&mut []), "bpf(BPF_PROG_LOAD)") {
        Ok(fd) => Ok(fd),
        Err(e) => {
            let mut log = vec![0u8; 16384];
            let _ = bpf(BPF_PROG_LOAD, &mut attr(&mut log), "bpf(BPF_PROG_LOAD)");
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let text = String::from_utf8_lossy(&log[..end]);
            Err(IoError::Backend(format!("{e}; verifier log: {}", text.trim())))
        }
    }
}

/// Attach `prog` to interface `ifindex` through a BPF link (called in the interface's
/// namespace): driver mode, else generic mode. Returns the link and the mode's name.
fn attach(prog: &OwnedFd, ifindex: i32, generic_only: bool, iface: &str) -> Result<(OwnedFd, &'static str)> {
    let mut last = None;
    let modes: &[(u32, &str)] = if generic_only {
        &[(XDP_FLAGS_SKB_MODE, "generic")]
    } else {
        &[(XDP_FLAGS_DRV_MODE, "driver"), (XDP_FLAGS_SKB_MODE, "generic")]
    };
    for &(flags, name) in modes {
        let mut l = LinkCreateAttr {
            prog_fd: prog.as_raw_fd() as u32,
            target_ifindex: ifindex as u32,
            attach_type: BPF_XDP,
            flags,
        };
        match bpf(
            BPF_LINK_CREATE,
            &mut l,
            &format!("bpf(BPF_LINK_CREATE) of XDP on {iface} in {name} mode"),
        ) {
            Ok(link) => return Ok((link, name)),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| IoError::Backend("no XDP mode to try".into())))
}

/// An AF_XDP socket with its own UMEM (`opts.rx_frames` receive frames in the fill ring,
/// `opts.tx_frames` transmit frames) bound to receive queue `queue` of `ifindex`, zero-copy
/// where the driver has it (called in the interface's namespace).
fn bind_socket(ifindex: i32, iface: &str, queue: u32, opts: &AfXdpOptions) -> Result<Bound> {
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

/// An interface opened with AF_XDP: the socket is bound and the program attached on opening.
pub struct AfXdpPort {
    pkt: AfPacketPort,
    opts: AfXdpOptions,
    /// Per receive queue: its socket and rings (RX, fill, TX, completion), until handed out.
    sockets: Option<Vec<(Arc<Xsk>, Rings)>>,
    mode: String,
    _promisc: Option<OwnedFd>,
}

/// A socket's rings: RX, fill, TX, completion.
type Rings = (Ring, Ring, Ring, Ring);

/// A socket bound to one receive queue, before the program is attached.
struct Bound {
    sock: OwnedFd,
    umem: Mmap,
    rings: Rings,
    copy: &'static str,
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
            let mut xrx = AfXdpRx { xsk, rx, fill };
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

/// The AF_XDP socket's transmit half.
pub struct XskTx {
    xsk: Arc<Xsk>,
    tx: Ring,
    comp: Ring,
    /// UMEM addresses of the transmit frames that are ours.
    free: Vec<u64>,
    /// The sender's cookie of each UMEM frame (indexed by frame number).
    cookies: Vec<u64>,
    /// The most a frame may hold.
    cap: usize,
}

impl XskTx {
    /// Take back the frames the kernel has sent.
    fn reclaim(&mut self) {
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
    fn kick(&mut self, force: bool) -> Result<()> {
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

    fn burst<F: FnMut(usize, &mut [u8], &mut u64) -> usize>(&mut self, n: usize, mut fill: F) -> Result<usize> {
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

    fn flush(&mut self) -> Result<()> {
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

    fn dropped(&mut self) -> Result<u64> {
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
    xsk: Arc<Xsk>,
    rx: Ring,
    fill: Ring,
}

impl AfXdpRx {
    /// Drop everything already received (frames from before the trial).
    fn drain(&mut self) {
        let deadline = Instant::now() + Duration::from_millis(200);
        while Instant::now() < deadline && self.rx_burst(usize::MAX, |_| {}).map(|n| n > 0).unwrap_or(false) {}
    }

    fn wake(&self) {
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
    /// empty; rx_fill_ring_empty_descs is left out as it counts those again).
    fn dropped(&mut self) -> Result<u64> {
        let now = self.xsk.statistics()?;
        let mut last = self.xsk.stats.lock().unwrap_or_else(|e| e.into_inner());
        let d = now.rx_dropped.saturating_sub(last.rx_dropped) + now.rx_ring_full.saturating_sub(last.rx_ring_full);
        last.rx_dropped = now.rx_dropped;
        last.rx_ring_full = now.rx_ring_full;
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_arithmetic_wraps() {
        assert_eq!(ring_free(8, 0, 0), 8);
        assert_eq!(ring_free(8, 8, 0), 0);
        assert_eq!(ring_free(8, 5, 2), 5);
        // Indexes run freely over u32 and wrap.
        assert_eq!(ring_free(8, 2, u32::MAX - 1), 4);
        assert_eq!(ring_ready(2, u32::MAX - 1), 4);
        assert_eq!(ring_ready(7, 7), 0);
        assert_eq!(ring_ready(u32::MAX, u32::MAX - 3), 3);
        assert_eq!(frame_base(3 * 4096 + 256), 3 * 4096);
        assert_eq!(frame_base(4096), 4096);
    }

    #[test]
    fn the_program_is_encoded_as_the_kernel_reads_it() {
        let p = xdp_program(7);
        assert_eq!(p.len(), 18);
        // r6 = r1: BPF_ALU64|BPF_MOV|BPF_X, dst 6 in the low nibble, src 1 in the high one.
        assert_eq!(p[0].to_bytes(), [0xbf, 0x16, 0, 0, 0, 0, 0, 0]);
        // r3 = *(u32 *)(r1 + 4)
        assert_eq!(p[2].to_bytes(), [0x61, 0x13, 4, 0, 0, 0, 0, 0]);
        // r4 = *(u16 *)(r2 + 12)
        assert_eq!(p[6].to_bytes(), [0x69, 0x24, 12, 0, 0, 0, 0, 0]);
        // r2 = *(u32 *)(r6 + 16): rx_queue_index
        assert_eq!(p[12].to_bytes(), [0x61, 0x62, 16, 0, 0, 0, 0, 0]);
        // ld_imm64 r1, map fd 7 (src BPF_PSEUDO_MAP_FD), then the zero second half.
        assert_eq!(p[13].to_bytes(), [0x18, 0x11, 0, 0, 7, 0, 0, 0]);
        assert_eq!(p[14].to_bytes(), [0; 8]);
        assert_eq!(p[16].to_bytes(), [0x85, 0, 0, 0, 51, 0, 0, 0]);
        assert_eq!(p[17].to_bytes(), [0x95, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(p[10].to_bytes(), [0xb7, 0, 0, 0, 2, 0, 0, 0]);
        // Every jump lands on the redirect (12) or the pass (10) block.
        for (i, to) in [(5, 10), (7, 12), (8, 12), (9, 12)] {
            assert_eq!(i as i16 + 1 + p[i].off, to, "jump at {i}");
        }
        // The ethertypes compare as the frame's bytes read as a host u16.
        for (i, bytes) in [(7, [0x08, 0x00]), (8, [0x86, 0xdd]), (9, [0x08, 0x06])] {
            assert_eq!(p[i].imm, i32::from(u16::from_ne_bytes(bytes)));
        }
    }

    #[test]
    fn structs_have_the_kernel_sizes() {
        assert_eq!(std::mem::size_of::<XdpUmemReg>(), 32);
        assert_eq!(std::mem::size_of::<XdpMmapOffsets>(), 128);
        assert_eq!(std::mem::size_of::<SockaddrXdp>(), 16);
        assert_eq!(std::mem::size_of::<XdpStatistics>(), 48);
        assert_eq!(std::mem::size_of::<XdpDesc>(), 16);
        assert_eq!(std::mem::offset_of!(MapCreateAttr, map_name), 28);
        assert_eq!(std::mem::offset_of!(ProgLoadAttr, license), 16);
        assert_eq!(std::mem::offset_of!(ProgLoadAttr, log_buf), 32);
        assert_eq!(std::mem::offset_of!(ProgLoadAttr, prog_name), 48);
        assert_eq!(std::mem::offset_of!(ProgLoadAttr, expected_attach_type), 68);
        assert_eq!(std::mem::offset_of!(MapUpdateAttr, key), 8);
        assert_eq!(std::mem::offset_of!(MapUpdateAttr, value), 16);
        assert_eq!(std::mem::offset_of!(MapUpdateAttr, flags), 24);
        assert_eq!(std::mem::offset_of!(LinkCreateAttr, attach_type), 8);
        assert_eq!(std::mem::offset_of!(LinkCreateAttr, flags), 12);
    }
}
