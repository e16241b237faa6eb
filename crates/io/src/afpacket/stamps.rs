//! Kernel timestamps on AF_PACKET sockets: what an interface can stamp (ethtool's timestamping
//! information, as `ethtool -T` shows it), turning the stamps on, asking for a transmit stamp on
//! the frames of one send call, and reading those stamps back from the socket's error queue.
//!
//! The kernel's software stamps are CLOCK_REALTIME nanoseconds: on receive the time the frame
//! reached the interface's receive path (`netif_rx`, with `SOF_TIMESTAMPING_RX_SOFTWARE` on; it
//! is in the receive ring's slot header), on transmit the time the driver took the frame
//! (`skb_tx_timestamp`). A transmit stamp comes back on the error queue with a copy of the frame,
//! so the caller can tell which frame it belongs to by its own contents.

use super::sys::{ifreq_with, setsockopt, SIOCETHTOOL};
use crate::{IoError, Result, Stamping, MAX_FRAME_LEN};
use std::os::fd::{AsRawFd, OwnedFd};

/// struct ethtool_ts_info (ETHTOOL_GET_TS_INFO).
#[repr(C)]
#[derive(Default)]
struct EthtoolTsInfo {
    cmd: u32,
    so_timestamping: u32,
    phc_index: i32,
    tx_types: u32,
    tx_reserved: [u32; 3],
    rx_filters: u32,
    rx_reserved: [u32; 3],
}
const ETHTOOL_GET_TS_INFO: u32 = 0x41;
// SOF_TIMESTAMPING_* of linux/net_tstamp.h.
const SOF_TX_HARDWARE: u32 = 1 << 0;
const SOF_TX_SOFTWARE: u32 = 1 << 1;
const SOF_RX_HARDWARE: u32 = 1 << 2;
const SOF_RX_SOFTWARE: u32 = 1 << 3;
const SOF_RAW_HARDWARE: u32 = 1 << 6;

/// What ethtool's timestamping information `flags` and `phc_index` say a port can stamp.
pub(crate) fn stamping_of(flags: u32, phc_index: i32) -> Stamping {
    let names = [
        (SOF_TX_SOFTWARE, "software transmit"),
        (SOF_RX_SOFTWARE, "software receive"),
        (SOF_TX_HARDWARE, "hardware transmit"),
        (SOF_RX_HARDWARE, "hardware receive"),
    ];
    let has: Vec<&str> = names.iter().filter(|(f, _)| flags & f != 0).map(|(_, n)| *n).collect();
    let mut detail = if has.is_empty() {
        "no timestamps".to_string()
    } else {
        has.join(", ")
    };
    detail.push_str(&if phc_index >= 0 {
        format!("; hardware clock /dev/ptp{phc_index}")
    } else {
        "; no hardware clock".to_string()
    });
    let all = |m: u32| flags & m == m;
    Stamping {
        kernel: all(SOF_TX_SOFTWARE | SOF_RX_SOFTWARE),
        hardware: all(SOF_TX_HARDWARE | SOF_RX_HARDWARE | SOF_RAW_HARDWARE) && phc_index >= 0,
        detail,
    }
}

/// ethtool's timestamping information of `iface`, asked through `fd` (a socket in its
/// namespace).
pub(crate) fn query_stamping(fd: &OwnedFd, iface: &str) -> Stamping {
    let mut info = EthtoolTsInfo {
        cmd: ETHTOOL_GET_TS_INFO,
        ..Default::default()
    };
    let data = &mut info as *mut EthtoolTsInfo as *mut libc::c_char;
    // The kernel fills `info` for ETHTOOL_GET_TS_INFO; it lives until the call returns.
    match ifreq_with(fd, iface, SIOCETHTOOL, |ifr| ifr.ifr_ifru.ifru_data = data) {
        Ok(_) => {
            let mut st = stamping_of(info.so_timestamping, info.phc_index);
            st.detail.push_str(&format!(" (ethtool -T {iface})"));
            st
        }
        Err(e) => Stamping {
            detail: format!("its driver does not tell ({e})"),
            ..Stamping::default()
        },
    }
}

const SOF_SOFTWARE: u32 = 1 << 4;

/// Turn on the transmit socket `fd`'s software stamps: each send call can then ask for them
/// ([`send_stamped`]); frames sent without asking are not stamped. The error queue that holds
/// the stamps until they are read gets room for many bursts of large frames.
pub(super) fn enable_tx(fd: &OwnedFd) -> Result<()> {
    setsockopt(
        fd,
        libc::SOL_SOCKET,
        libc::SO_TIMESTAMPING,
        &SOF_SOFTWARE,
        "SO_TIMESTAMPING (software stamps)",
    )?;
    let room: libc::c_int = 16 << 20;
    // SO_RCVBUFFORCE passes the system's limit (as root); otherwise the limit holds.
    setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &room, "SO_RCVBUFFORCE")
        .or_else(|_| setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, &room, "SO_RCVBUF"))
}

/// Turn on the receive socket `fd`'s software stamps: the kernel stamps each frame as it comes
/// in, and the receive ring's slot header carries that stamp.
pub(super) fn enable_rx(fd: &OwnedFd) -> Result<()> {
    let flags = SOF_RX_SOFTWARE | SOF_SOFTWARE;
    setsockopt(
        fd,
        libc::SOL_SOCKET,
        libc::SO_TIMESTAMPING,
        &flags,
        "SO_TIMESTAMPING (software receive stamps)",
    )
}

/// Ask the kernel to send the transmit ring's requested slots (as `send` with no buffer does),
/// stamping each of them as the driver takes it. The outcome of sendmsg(2).
pub(super) fn send_stamped(fd: &OwnedFd) -> isize {
    const SPACE: usize = 32;
    // A cmsg buffer of 8-byte alignment: cmsghdr, then the flags (u32).
    let mut ctl = [0u64; SPACE / 8];
    // SAFETY: msghdr is plain data; the control buffer outlives the call and holds one cmsg of
    // CMSG_SPACE(4) <= SPACE bytes, written through the libc macros within its bounds.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_control = ctl.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = libc::CMSG_SPACE(4) as usize;
        let c = libc::CMSG_FIRSTHDR(&msg);
        (*c).cmsg_level = libc::SOL_SOCKET;
        (*c).cmsg_type = libc::SO_TIMESTAMPING;
        (*c).cmsg_len = libc::CMSG_LEN(4) as usize;
        (libc::CMSG_DATA(c) as *mut u32).write_unaligned(SOF_TX_SOFTWARE);
        libc::sendmsg(fd.as_raw_fd(), &msg, libc::MSG_DONTWAIT)
    }
}

/// Messages read per recvmmsg(2) call.
const BATCH: usize = 64;
/// Room for one message's control data (SO_TIMESTAMPING's three timespecs and the extended
/// error).
const CTL_WORDS: usize = 32;

/// A reader of a transmit socket's error queue, with its buffers.
pub(super) struct ErrQueue {
    frames: Vec<u8>,
    ctl: Vec<u64>,
}

impl ErrQueue {
    pub(super) fn new() -> ErrQueue {
        ErrQueue {
            frames: vec![0; BATCH * MAX_FRAME_LEN],
            ctl: vec![0; BATCH * CTL_WORDS],
        }
    }

    /// Read every transmit stamp queued on `fd`: `f(frame, ns)` for each, with the frame as it
    /// was sent and its software stamp (CLOCK_REALTIME nanoseconds). Returns how many.
    pub(super) fn read<F: FnMut(&[u8], u64)>(&mut self, fd: &OwnedFd, mut f: F) -> Result<usize> {
        let mut total = 0;
        loop {
            // SAFETY: iovec and mmsghdr are plain data; each points into this reader's own
            // buffers (BATCH frames of MAX_FRAME_LEN bytes, BATCH control areas of CTL_WORDS
            // words), which outlive the call, and the kernel writes within the lengths given.
            let got = unsafe {
                let mut iov: [libc::iovec; BATCH] = std::mem::zeroed();
                let mut msgs: [libc::mmsghdr; BATCH] = std::mem::zeroed();
                for i in 0..BATCH {
                    iov[i].iov_base = self.frames.as_mut_ptr().add(i * MAX_FRAME_LEN) as *mut libc::c_void;
                    iov[i].iov_len = MAX_FRAME_LEN;
                    let h = &mut msgs[i].msg_hdr;
                    h.msg_iov = &mut iov[i];
                    h.msg_iovlen = 1;
                    h.msg_control = self.ctl.as_mut_ptr().add(i * CTL_WORDS) as *mut libc::c_void;
                    h.msg_controllen = CTL_WORDS * 8;
                }
                let flags = libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT;
                let r = libc::recvmmsg(fd.as_raw_fd(), msgs.as_mut_ptr(), BATCH as u32, flags, std::ptr::null_mut());
                if r < 0 {
                    let e = std::io::Error::last_os_error();
                    return match e.raw_os_error() {
                        Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(total),
                        _ => Err(IoError::Os {
                            what: "recvmmsg on the transmit socket's error queue (transmit stamps)".into(),
                            os: e,
                        }),
                    };
                }
                let r = r as usize;
                for (i, m) in msgs.iter().enumerate().take(r) {
                    let len = (m.msg_len as usize).min(MAX_FRAME_LEN);
                    if let Some(ns) = software_stamp(&m.msg_hdr) {
                        f(&self.frames[i * MAX_FRAME_LEN..i * MAX_FRAME_LEN + len], ns);
                    }
                }
                r
            };
            total += got;
            if got < BATCH {
                return Ok(total);
            }
        }
    }
}

/// The software stamp (the first of SO_TIMESTAMPING's three timespecs) among the control
/// messages of `h`, when it carries one.
///
/// # Safety
/// `h` was filled by recvmsg(2): its control pointer and length describe valid control data.
unsafe fn software_stamp(h: &libc::msghdr) -> Option<u64> {
    let mut c = libc::CMSG_FIRSTHDR(h);
    while !c.is_null() {
        if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SO_TIMESTAMPING {
            let ts = (libc::CMSG_DATA(c) as *const libc::timespec).read_unaligned();
            let ns = (ts.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(ts.tv_nsec as u64);
            return (ns != 0).then_some(ns);
        }
        c = libc::CMSG_NXTHDR(h, c);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamping_capabilities_from_ethtools_flags() {
        let veth = stamping_of(SOF_TX_SOFTWARE | SOF_RX_SOFTWARE | (1 << 4), -1);
        assert_eq!((veth.kernel, veth.hardware), (true, false));
        assert_eq!(veth.detail, "software transmit, software receive; no hardware clock");
        let nic = stamping_of(0x5f, 0);
        assert_eq!((nic.kernel, nic.hardware), (true, true));
        assert!(
            nic.detail
                .ends_with("hardware transmit, hardware receive; hardware clock /dev/ptp0"),
            "{}",
            nic.detail
        );
        // Hardware flags without a clock to read are no hardware stamps.
        assert!(!stamping_of(0x5f, -1).hardware);
        assert_eq!(stamping_of(0, -1).detail, "no timestamps; no hardware clock");
    }
}
