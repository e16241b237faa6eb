//! The system calls the AF_PACKET (and AF_XDP) sockets share: typed socket options and
//! interface ioctls.

use crate::{IoError, Result};
use std::os::fd::{AsRawFd, OwnedFd};

/// ioctl request for ethtool commands.
pub(super) const SIOCETHTOOL: libc::c_ulong = 0x8946;

/// setsockopt(2) with a typed value (also the afxdp backend's).
pub(crate) fn setsockopt<T>(fd: &OwnedFd, level: libc::c_int, name: libc::c_int, val: &T, what: &str) -> Result<()> {
    // SAFETY: val points to a live T of the given size.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            val as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as u32,
        )
    };
    if r != 0 {
        return Err(IoError::last_os(what));
    }
    Ok(())
}

/// getsockopt(2) into a typed value: the value and the length the kernel wrote (an older kernel
/// may fill only a prefix of a structure that grew). Also the afxdp backend's.
pub(crate) fn getsockopt<T: Default>(fd: &OwnedFd, level: libc::c_int, name: libc::c_int, what: &str) -> Result<(T, usize)> {
    let mut val = T::default();
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: val and len describe a live T of its size, which the kernel writes at most.
    let r = unsafe { libc::getsockopt(fd.as_raw_fd(), level, name, &mut val as *mut T as *mut libc::c_void, &mut len) };
    if r != 0 {
        return Err(IoError::last_os(what));
    }
    Ok((val, len as usize))
}

/// ioctl(SIOCGIFHWADDR / SIOCGIFFLAGS) on a packet socket, in the socket's namespace.
pub(super) fn ifreq(fd: &OwnedFd, iface: &str, req: libc::c_ulong) -> Result<libc::ifreq> {
    ifreq_with(fd, iface, req, |_| {})
}

/// [`ifreq`] with the request's other fields set by `fill` (e.g. `ifr_data` for SIOCETHTOOL;
/// what it points to must outlive the call).
pub(super) fn ifreq_with(fd: &OwnedFd, iface: &str, req: libc::c_ulong, fill: impl FnOnce(&mut libc::ifreq)) -> Result<libc::ifreq> {
    // SAFETY: ifreq is plain data.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    let name = iface.as_bytes();
    if name.len() >= ifr.ifr_name.len() {
        return Err(IoError::Backend(format!("interface name '{iface}' is too long")));
    }
    for (d, s) in ifr.ifr_name.iter_mut().zip(name) {
        *d = *s as libc::c_char;
    }
    fill(&mut ifr);
    // SAFETY: ifr is a valid ifreq for these requests (any pointer `fill` put in it is the
    // caller's, live during the call).
    if unsafe { libc::ioctl(fd.as_raw_fd(), req as _, &mut ifr) } != 0 {
        return Err(IoError::last_os(format!("ioctl on {iface}")));
    }
    Ok(ifr)
}

/// struct ethtool_drvinfo (ETHTOOL_GDRVINFO), of which only the driver's name is read.
#[repr(C)]
struct EthtoolDrvinfo {
    cmd: u32,
    driver: [u8; 32],
    rest: [u8; 32 * 4 + 12 + 4 * 5],
}

const ETHTOOL_GDRVINFO: u32 = 0x3;

/// The name of `iface`'s driver ("veth", "ixgbe", ...), asked through `fd` (a socket in its
/// namespace); `None` when the driver does not tell.
pub(crate) fn driver_name(fd: &OwnedFd, iface: &str) -> Option<String> {
    let mut info = EthtoolDrvinfo {
        cmd: ETHTOOL_GDRVINFO,
        driver: [0; 32],
        rest: [0; 32 * 4 + 12 + 4 * 5],
    };
    let data = &mut info as *mut EthtoolDrvinfo as *mut libc::c_char;
    // The kernel fills `info` for ETHTOOL_GDRVINFO; it lives until the call returns.
    ifreq_with(fd, iface, SIOCETHTOOL, |ifr| ifr.ifr_ifru.ifru_data = data).ok()?;
    let end = info.driver.iter().position(|b| *b == 0).unwrap_or(info.driver.len());
    Some(String::from_utf8_lossy(&info.driver[..end]).into_owned())
}
