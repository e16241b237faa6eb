//! The XDP program (a few eBPF instructions written here), its XSKMAP, loading and attaching it.

use super::abi::{
    LinkCreateAttr, MapCreateAttr, MapUpdateAttr, ProgLoadAttr, BPF_FUNC_REDIRECT_MAP, BPF_LINK_CREATE, BPF_MAP_CREATE,
    BPF_MAP_TYPE_XSKMAP, BPF_MAP_UPDATE_ELEM, BPF_PROG_LOAD, BPF_PROG_TYPE_XDP, BPF_PSEUDO_MAP_FD, BPF_XDP, XDP_FLAGS_DRV_MODE,
    XDP_FLAGS_SKB_MODE, XDP_MD_RX_QUEUE_INDEX, XDP_PASS,
};
use crate::{IoError, Result};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

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
    pub(super) const fn new(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
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
pub(super) const MOV64_X: u8 = 0x07 | 0xb0 | 0x08; // BPF_ALU64 | BPF_MOV | BPF_X
pub(super) const MOV64_K: u8 = 0x07 | 0xb0; // BPF_ALU64 | BPF_MOV | BPF_K
pub(super) const ADD64_K: u8 = 0x07; // BPF_ALU64 | BPF_ADD | BPF_K
pub(super) const LDX_W: u8 = 0x01 | 0x60; // BPF_LDX | BPF_MEM | BPF_W
pub(super) const LDX_H: u8 = 0x01 | 0x60 | 0x08; // BPF_LDX | BPF_MEM | BPF_H
pub(super) const LD_DW_IMM: u8 = 0x18; // BPF_LD (0) | BPF_IMM (0) | BPF_DW
pub(super) const JGT_X: u8 = 0x05 | 0x20 | 0x08; // BPF_JMP | BPF_JGT | BPF_X
pub(super) const JEQ_K: u8 = 0x05 | 0x10; // BPF_JMP | BPF_JEQ | BPF_K
pub(super) const CALL: u8 = 0x05 | 0x80;
pub(super) const EXIT: u8 = 0x05 | 0x90;

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

pub(super) fn bpf<T>(cmd: libc::c_long, attr: &mut T, what: &str) -> Result<OwnedFd> {
    // SAFETY: attr is a bpf_attr prefix of the given size; the kernel zero-extends it.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr as *mut T, std::mem::size_of::<T>() as u32) };
    if r < 0 {
        return Err(IoError::last_os(what));
    }
    // SAFETY: the commands used with this function return a new descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
}

pub(super) fn name16(s: &str) -> [u8; 16] {
    let mut n = [0u8; 16];
    for (d, c) in n.iter_mut().zip(s.bytes().take(15)) {
        *d = c;
    }
    n
}

/// Create the XSKMAP holding `socks[k]` at entry k (receive queue k).
pub(super) fn xskmap(socks: &[&OwnedFd]) -> Result<OwnedFd> {
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
pub(super) fn map_put(map: &OwnedFd, key: u32, value: u32) -> Result<()> {
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
pub(super) fn load_program(map: &OwnedFd) -> Result<OwnedFd> {
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
pub(super) fn attach(prog: &OwnedFd, ifindex: i32, generic_only: bool, iface: &str) -> Result<(OwnedFd, &'static str)> {
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
