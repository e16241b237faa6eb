//! Ethernet flow control (IEEE 802.3x PAUSE) of an interface, through ethtool's pause
//! parameters (`ethtool -a` / `ethtool -A`): the afpacket and afxdp backends' ports.

use super::sys::{ifreq_with, SIOCETHTOOL};
use crate::{no_flow_control, IoError, Pause, Result};
use std::os::fd::OwnedFd;

/// struct ethtool_pauseparam (ETHTOOL_GPAUSEPARAM, ETHTOOL_SPAUSEPARAM).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct EthtoolPause {
    cmd: u32,
    autoneg: u32,
    rx_pause: u32,
    tx_pause: u32,
}

const ETHTOOL_GPAUSEPARAM: u32 = 0x12;
const ETHTOOL_SPAUSEPARAM: u32 = 0x13;

/// One pause-parameter request on `iface` through `fd` (a socket in its namespace).
fn call(fd: &OwnedFd, iface: &str, mut p: EthtoolPause) -> std::result::Result<EthtoolPause, IoError> {
    let data = &mut p as *mut EthtoolPause as *mut libc::c_char;
    // The kernel reads and fills `p`; it lives until the call returns.
    ifreq_with(fd, iface, SIOCETHTOOL, |ifr| ifr.ifr_ifru.ifru_data = data)?;
    Ok(p)
}

/// Is `e` the driver saying it has no such setting?
fn unsupported(e: &IoError) -> bool {
    matches!(e, IoError::Os { os, .. } if os.raw_os_error() == Some(libc::EOPNOTSUPP))
}

/// Set `iface`'s flow control as `want` says ([`crate::Port::flow_control`]) and read it back;
/// `name` is the port's for messages.
pub(crate) fn flow_control(fd: &OwnedFd, iface: &str, name: &str, want: Option<bool>) -> Result<Option<Pause>> {
    let get = || match call(
        fd,
        iface,
        EthtoolPause {
            cmd: ETHTOOL_GPAUSEPARAM,
            ..Default::default()
        },
    ) {
        Ok(p) => Ok(Some(p)),
        Err(e) if unsupported(&e) => Ok(None),
        Err(e) => Err(e),
    };
    let Some(now) = get()? else {
        return no_flow_control(name, want);
    };
    if let Some(on) = want {
        if (now.rx_pause != 0, now.tx_pause != 0, now.autoneg != 0) != (on, on, false) {
            let set = EthtoolPause {
                cmd: ETHTOOL_SPAUSEPARAM,
                autoneg: 0,
                rx_pause: u32::from(on),
                tx_pause: u32::from(on),
            };
            let o = if on { "on" } else { "off" };
            call(fd, iface, set).map_err(|e| {
                IoError::Backend(format!(
                    "{name}: setting Ethernet flow control {o} (ethtool -A {iface} autoneg off rx {o} tx {o}) failed: {e}"
                ))
            })?;
        }
    }
    Ok(get()?.map(|p| Pause {
        rx: p.rx_pause != 0,
        tx: p.tx_pause != 0,
    }))
}
