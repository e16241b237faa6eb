//! The XDP program (a few eBPF instructions written here), its XSKMAP, loading and attaching it.

use crate::{IoError, Result};
use std::os::fd::{AsRawFd, OwnedFd};
use xlat_bpf::{
    BpfError, Insn, ADD64_K, BPF_FUNC_REDIRECT_MAP, BPF_MAP_TYPE_XSKMAP, BPF_PROG_TYPE_XDP, BPF_PSEUDO_MAP_FD, BPF_XDP, CALL, EXIT, JEQ_K,
    JGT_X, LDX_H, LDX_W, LD_DW_IMM, MOV64_K, MOV64_X, XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE, XDP_MD_RX_QUEUE_INDEX, XDP_PASS,
};

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

/// The error of a bpf(2) call, as the backend's.
fn io(e: BpfError) -> IoError {
    match e {
        BpfError::Os { what, os } => IoError::Os { what, os },
        e => IoError::Backend(e.to_string()),
    }
}

/// Create the XSKMAP holding `socks[k]` at entry k (receive queue k).
pub(super) fn xskmap(socks: &[&OwnedFd]) -> Result<OwnedFd> {
    let map = xlat_bpf::map_create(BPF_MAP_TYPE_XSKMAP, socks.len().max(1) as u32, "xlat_xsks").map_err(io)?;
    for (k, sock) in socks.iter().enumerate() {
        xlat_bpf::map_put(&map, k as u32, sock.as_raw_fd() as u32).map_err(io)?;
    }
    Ok(map)
}

/// Load [`xdp_program`] for `map`; on failure, the verifier's log is in the error.
pub(super) fn load_program(map: &OwnedFd) -> Result<OwnedFd> {
    xlat_bpf::load(BPF_PROG_TYPE_XDP, BPF_XDP, "xlat_xsk", &xdp_program(map.as_raw_fd())).map_err(io)
}

/// Attach `prog` to interface `ifindex` through a BPF link (called in the interface's
/// namespace): driver mode, else generic mode. Returns the link and the mode's name.
pub(super) fn attach(prog: &OwnedFd, ifindex: i32, generic_only: bool, iface: &str) -> Result<(OwnedFd, &'static str)> {
    let mut last = None;
    let modes: &[(u32, &str)] = if generic_only {
        &[(XDP_FLAGS_SKB_MODE, "generic")]
    } else {
        &[(XDP_FLAGS_DRV_MODE, "driver"), (XDP_FLAGS_SKB_MODE, "generic")]
    };
    for &(flags, name) in modes {
        let what = format!("bpf(BPF_LINK_CREATE) of XDP on {iface} in {name} mode");
        match xlat_bpf::link_create(prog, ifindex as u32, BPF_XDP, flags, &what) {
            Ok(link) => return Ok((link, name)),
            Err(e) => last = Some(io(e)),
        }
    }
    Err(last.unwrap_or_else(|| IoError::Backend("no XDP mode to try".into())))
}
