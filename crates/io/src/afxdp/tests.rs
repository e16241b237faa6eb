//! Tests of the afxdp backend.

use super::abi::{SockaddrXdp, XdpDesc, XdpMmapOffsets, XdpStatistics, XdpUmemReg};
use super::bpf::xdp_program;
use super::ring::{frame_base, ring_free, ring_ready};
use xlat_bpf::{LinkCreateAttr, MapCreateAttr, MapUpdateAttr, ProgLoadAttr};

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
