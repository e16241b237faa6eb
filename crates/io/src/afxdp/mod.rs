//! The `afxdp` backend: one AF_XDP socket per receive queue of the interface (queue 0 alone
//! by default; [`AfXdpOptions::queues`]), each with a UMEM of its own, and an XDP program that
//! redirects the tester's frames to the socket of the queue they arrived on. No libbpf, libxdp or
//! clang: the socket, the rings, the XSKMAP, the program (a few eBPF instructions written
//! here) and its attachment are plain system calls.
//!
//! - **UMEM**: anonymous memory of 4096-byte frames, registered with XDP_UMEM_REG. The first
//!   [`AfXdpOptions::rx_frames`] frames belong to the receive side (they cycle between the fill
//!   ring, the RX ring and `rx_burst`), the others to the transmit side (a free list, the TX
//!   ring, the completion ring). The fill callback of [`TxQueue::tx_burst`](crate::TxQueue::tx_burst) writes straight into
//!   a UMEM frame: with zero-copy, no copy at all; and since the kernel only reads TX frames,
//!   a frame keeps what the sender wrote, so [`TxQueue::tx_burst_cookie`](crate::TxQueue::tx_burst_cookie) keeps cookies too.
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
//! - **Control queue** ([`Queues::ctl`](crate::Queues::ctl)): an AF_PACKET socket (`afpacket`'s transmit ring) on
//!   the same interface. A second AF_XDP socket on queue 0 would have to share this UMEM
//!   (XDP_SHARED_UMEM), and with it the fill and completion rings, which the receiving and the
//!   sending thread would then both use; the few ARP/NDP answers need none of that speed.
//!
//! Limits: queues 0 to `queues - 1` are read, and opening refuses an interface with more
//! receive queues (ethtool's channel count), whose frames on the others would reach the kernel
//! instead (give it fewer: `ethtool -L <if> combined N`); frames longer than a UMEM frame less
//! XDP's 256-byte headroom (3840 bytes) are not sent.

mod abi;
mod bpf;
mod options;
mod port;
mod queues;
mod ring;
mod socket;

pub use abi::FRAME_SIZE;
pub use bpf::{xdp_program, REDIRECTED_ETHERTYPES};
pub use options::{AfXdpOptions, MAX_QUEUES};
pub use port::AfXdpPort;
pub use queues::{AfXdpRx, AfXdpTx, XskTx};
pub use ring::{frame_base, ring_free, ring_ready};
pub use xlat_bpf::Insn;

#[cfg(test)]
mod tests;
