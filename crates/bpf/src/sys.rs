//! The bpf(2) system call: loading programs, XSKMAPs, XDP links and tcx attachments
//! (linux/bpf.h, checked against the 6.18 uapi headers).

use crate::error::{BpfError, Result};
use crate::insn::Insn;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

// Commands.
const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_PROG_ATTACH: libc::c_long = 8;
const BPF_LINK_CREATE: libc::c_long = 28;

// Program, map and attach types.
pub const BPF_PROG_TYPE_SCHED_CLS: u32 = 3;
pub const BPF_PROG_TYPE_XDP: u32 = 6;
pub const BPF_MAP_TYPE_HASH: u32 = 1;
pub const BPF_MAP_TYPE_XSKMAP: u32 = 17;
pub const BPF_XDP: u32 = 37;
pub const BPF_TCX_INGRESS: u32 = 46;
pub const BPF_TCX_EGRESS: u32 = 47;

// XDP (linux/if_link.h, struct xdp_md).
pub const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
pub const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;
pub const XDP_PASS: i32 = 2;
/// offsetof(struct xdp_md, rx_queue_index).
pub const XDP_MD_RX_QUEUE_INDEX: i16 = 16;

// tc programs: verdicts, and offsets in struct __sk_buff.
pub const TC_ACT_OK: i32 = 0;
pub const TC_ACT_SHOT: i32 = 2;
pub const SKB_MARK: i16 = 8;
pub const SKB_DATA: i16 = 76;
pub const SKB_DATA_END: i16 = 80;

// Helper functions (enum bpf_func_id) and their flags.
/// bpf_map_lookup_elem(map, key): a pointer to the value, or NULL.
pub const BPF_FUNC_MAP_LOOKUP_ELEM: i32 = 1;
pub const BPF_FUNC_SKB_STORE_BYTES: i32 = 9;
/// bpf_l4_csum_replace(skb, offset, from, to, flags): update the TCP/UDP checksum at `offset`
/// (with `from` 0 and size 0 in `flags`, `to` is a difference from bpf_csum_diff).
pub const BPF_FUNC_L4_CSUM_REPLACE: i32 = 11;
/// bpf_csum_diff(from, from_size, to, to_size, seed): the one's-complement sum of `to` minus
/// that of `from` (sizes multiples of 4), unfolded.
pub const BPF_FUNC_CSUM_DIFF: i32 = 28;
/// bpf_skb_change_proto(skb, proto, 0): IPv6 <-> IPv4 (`proto` in network order), the room
/// for the network header 20 bytes smaller or larger; the program writes the new header.
pub const BPF_FUNC_SKB_CHANGE_PROTO: i32 = 31;
/// bpf_l4_csum_replace: the change is to the pseudo-header.
pub const BPF_F_PSEUDO_HDR: i32 = 1 << 4;
/// bpf_l4_csum_replace: a checksum that becomes 0 is written as 0xffff (UDP: 0 is none).
pub const BPF_F_MARK_MANGLED_0: i32 = 1 << 5;
/// bpf_skb_pull_data(skb, len): make the first `len` bytes linear (directly readable).
pub const BPF_FUNC_SKB_PULL_DATA: i32 = 39;
pub const BPF_FUNC_SKB_ADJUST_ROOM: i32 = 50;
pub const BPF_FUNC_REDIRECT_MAP: i32 = 51;
/// bpf_skb_adjust_room: room between the link-layer and the network header.
pub const BPF_ADJ_ROOM_MAC: i32 = 1;
/// bpf_skb_adjust_room, shrinking: what is left is IPv4 (sets the packet's protocol; 6.3+).
pub const BPF_F_ADJ_ROOM_DECAP_L3_IPV4: i32 = 1 << 7;

/// bpf_attr for BPF_MAP_CREATE (the leading fields).
#[repr(C)]
#[derive(Default)]
pub struct MapCreateAttr {
    pub map_type: u32,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub map_flags: u32,
    pub inner_map_fd: u32,
    pub numa_node: u32,
    pub map_name: [u8; 16],
}

/// bpf_attr for BPF_MAP_UPDATE_ELEM.
#[repr(C)]
#[derive(Default)]
pub struct MapUpdateAttr {
    pub map_fd: u32,
    pub _pad: u32,
    pub key: u64,
    pub value: u64,
    pub flags: u64,
}

/// bpf_attr for BPF_PROG_LOAD (the leading fields).
#[repr(C)]
#[derive(Default)]
pub struct ProgLoadAttr {
    pub prog_type: u32,
    pub insn_cnt: u32,
    pub insns: u64,
    pub license: u64,
    pub log_level: u32,
    pub log_size: u32,
    pub log_buf: u64,
    pub kern_version: u32,
    pub prog_flags: u32,
    pub prog_name: [u8; 16],
    pub prog_ifindex: u32,
    pub expected_attach_type: u32,
}

/// bpf_attr for BPF_LINK_CREATE (the leading fields).
#[repr(C)]
#[derive(Default)]
pub struct LinkCreateAttr {
    pub prog_fd: u32,
    pub target_ifindex: u32,
    pub attach_type: u32,
    pub flags: u32,
}

/// bpf_attr for BPF_PROG_ATTACH.
#[repr(C)]
#[derive(Default)]
pub struct ProgAttachAttr {
    pub target_ifindex: u32,
    pub attach_bpf_fd: u32,
    pub attach_type: u32,
    pub attach_flags: u32,
    pub replace_bpf_fd: u32,
    pub relative_fd: u32,
    pub expected_revision: u64,
}

/// bpf(`cmd`, `attr`) for the commands that return 0 or an error.
fn call<T>(cmd: libc::c_long, attr: &mut T) -> libc::c_long {
    // SAFETY: attr is a bpf_attr prefix of the given size; the kernel zero-extends it, and the
    // pointers inside it point at memory that outlives the call.
    unsafe { libc::syscall(libc::SYS_bpf, cmd, attr as *mut T, std::mem::size_of::<T>() as u32) }
}

/// bpf(`cmd`, `attr`) for the commands that return a new descriptor.
fn call_fd<T>(cmd: libc::c_long, attr: &mut T, what: &str) -> Result<OwnedFd> {
    let r = call(cmd, attr);
    if r < 0 {
        return Err(BpfError::last_os(what));
    }
    // SAFETY: these commands return a new descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
}

/// A kernel object name: at most 15 bytes and a NUL.
pub fn name16(s: &str) -> [u8; 16] {
    let mut n = [0u8; 16];
    for (d, c) in n.iter_mut().zip(s.bytes().take(15)) {
        *d = c;
    }
    n
}

/// Create a map of `map_type` with u32 keys and values, `max_entries` of them.
pub fn map_create(map_type: u32, max_entries: u32, name: &str) -> Result<OwnedFd> {
    map_create_sized(map_type, 4, 4, max_entries, name)
}

/// Create a map of `map_type` with keys of `key_size` and values of `value_size` bytes,
/// `max_entries` of them.
pub fn map_create_sized(map_type: u32, key_size: u32, value_size: u32, max_entries: u32, name: &str) -> Result<OwnedFd> {
    let mut c = MapCreateAttr {
        map_type,
        key_size,
        value_size,
        max_entries,
        map_name: name16(name),
        ..Default::default()
    };
    call_fd(
        BPF_MAP_CREATE,
        &mut c,
        &format!("bpf(BPF_MAP_CREATE) of {name} (needs root or CAP_BPF)"),
    )
}

/// `map[key] = value`.
pub fn map_put(map: &OwnedFd, key: u32, value: u32) -> Result<()> {
    map_update(map, &key.to_ne_bytes(), &value.to_ne_bytes())
}

/// `map[key] = value` for a map of any key and value size: both slices must be the sizes the
/// map was made with (the kernel reads that many bytes).
pub fn map_update(map: &OwnedFd, key: &[u8], value: &[u8]) -> Result<()> {
    let mut u = MapUpdateAttr {
        map_fd: map.as_raw_fd() as u32,
        key: key.as_ptr() as u64,
        value: value.as_ptr() as u64,
        ..Default::default()
    };
    if call(BPF_MAP_UPDATE_ELEM, &mut u) != 0 {
        return Err(BpfError::last_os(format!("bpf(BPF_MAP_UPDATE_ELEM) of key {key:02x?}")));
    }
    Ok(())
}

/// Load `insns` as a GPL program of `prog_type` named `name`; when the verifier refuses it, the
/// program is loaded again with the log on, and the log is in the error.
pub fn load(prog_type: u32, expected_attach_type: u32, name: &str, insns: &[Insn]) -> Result<OwnedFd> {
    let code: Vec<u8> = insns.iter().flat_map(|i| i.to_bytes()).collect();
    let license = b"GPL\0";
    let attr = |log: &mut [u8]| ProgLoadAttr {
        prog_type,
        insn_cnt: insns.len() as u32,
        insns: code.as_ptr() as u64,
        license: license.as_ptr() as u64,
        log_level: u32::from(!log.is_empty()),
        log_size: log.len() as u32,
        log_buf: if log.is_empty() { 0 } else { log.as_mut_ptr() as u64 },
        prog_name: name16(name),
        expected_attach_type,
        ..Default::default()
    };
    let what = format!("bpf(BPF_PROG_LOAD) of {name}");
    match call_fd(BPF_PROG_LOAD, &mut attr(&mut []), &what) {
        Ok(fd) => Ok(fd),
        Err(BpfError::Os { what, os }) => {
            let mut log = vec![0u8; 65536];
            let _ = call_fd(BPF_PROG_LOAD, &mut attr(&mut log), &what);
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let log = String::from_utf8_lossy(&log[..end]).trim().to_string();
            Err(BpfError::Verifier { what, os, log })
        }
        Err(e) => Err(e),
    }
}

/// A BPF link of `prog` to interface `ifindex` (in the caller's network namespace): it lasts
/// as long as the returned descriptor.
pub fn link_create(prog: &OwnedFd, ifindex: u32, attach_type: u32, flags: u32, what: &str) -> Result<OwnedFd> {
    let mut l = LinkCreateAttr {
        prog_fd: prog.as_raw_fd() as u32,
        target_ifindex: ifindex,
        attach_type,
        flags,
    };
    call_fd(BPF_LINK_CREATE, &mut l, what)
}

/// Attach `prog` to interface `ifindex` (in the caller's network namespace) at tcx hook
/// `attach_type` ([`BPF_TCX_INGRESS`], [`BPF_TCX_EGRESS`]). The attachment belongs to the
/// interface: it outlives the caller's descriptors and goes with the interface.
pub fn tcx_attach(prog: &OwnedFd, ifindex: u32, attach_type: u32, what: &str) -> Result<()> {
    let mut a = ProgAttachAttr {
        target_ifindex: ifindex,
        attach_bpf_fd: prog.as_raw_fd() as u32,
        attach_type,
        ..Default::default()
    };
    if call(BPF_PROG_ATTACH, &mut a) != 0 {
        return Err(BpfError::last_os(what));
    }
    Ok(())
}

/// The index of interface `name` in the caller's network namespace.
pub fn ifindex(name: &str) -> Result<u32> {
    let c = std::ffi::CString::new(name).map_err(|_| BpfError::Asm(format!("interface name {name:?} has a NUL")))?;
    // SAFETY: a NUL-terminated name.
    match unsafe { libc::if_nametoindex(c.as_ptr()) } {
        0 => Err(BpfError::last_os(format!("interface {name}"))),
        i => Ok(i),
    }
}

/// Run `f` on a thread of its own that has entered the network namespace `netns` (a path such
/// as /run/netns/NAME): interface indexes and attachments are per namespace, and setns(2)
/// moves only the calling thread.
pub fn in_netns<T: Send + 'static>(netns: &str, f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    let path = netns.to_string();
    let run = move || -> Result<T> {
        let ns = std::fs::File::open(&path).map_err(|os| BpfError::Os { what: path.clone(), os })?;
        // SAFETY: setns(2) on a namespace descriptor we hold; only this thread moves.
        if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            return Err(BpfError::last_os(format!("setns({path})")));
        }
        f()
    };
    std::thread::spawn(run)
        .join()
        .unwrap_or_else(|_| Err(BpfError::Asm(format!("the thread in {netns} panicked"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The attribute structures have the sizes of the kernel's leading fields.
    #[test]
    fn attribute_sizes() {
        assert_eq!(std::mem::size_of::<MapCreateAttr>(), 44);
        assert_eq!(std::mem::size_of::<MapUpdateAttr>(), 32);
        assert_eq!(std::mem::size_of::<ProgLoadAttr>(), 72);
        assert_eq!(std::mem::size_of::<LinkCreateAttr>(), 16);
        assert_eq!(std::mem::size_of::<ProgAttachAttr>(), 32);
        assert_eq!(&name16("a_very_long_program_name")[..], b"a_very_long_pro\0");
    }
}
