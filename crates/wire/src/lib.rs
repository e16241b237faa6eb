//! Bytes on the wire for xlatperf: Ethernet II, ARP, IPv4, IPv6, ICMPv6 neighbour discovery and
//! UDP, their checksums (full and RFC 1624 incremental), the test-frame payload, and a classifier
//! for received frames.
//!
//! Nothing here does I/O or allocates per frame, and no function panics on any input bytes:
//! parsers take `&[u8]` of any length and return `None`/`Rx::Other` when the bytes do not fit.
//! Builders write into a caller's buffer and return an error when it is too small.

pub mod arp;
pub mod checksum;
pub mod eth;
pub mod frame;
pub mod ipv4;
pub mod ipv6;
pub mod ndp;
pub mod payload;
pub mod rx;
pub mod udp;

pub use eth::MacAddr;
pub use frame::{FrameError, IpPair, TestFrame, TestFrameLayout};
pub use rx::{classify, Rx};

/// Length of the Ethernet frame check sequence, which the frame size counts (RFC 2544) but which
/// the backends never see: a 64-byte frame is 60 bytes handed to the NIC.
pub const FCS_LEN: usize = 4;

/// Read a big-endian u16 at `off`, or `None` when the slice is too short.
#[inline]
pub fn be16(b: &[u8], off: usize) -> Option<u16> {
    let s = b.get(off..off.checked_add(2)?)?;
    Some(u16::from_be_bytes([s[0], s[1]]))
}

/// Read a big-endian u64 at `off`, or `None` when the slice is too short.
#[inline]
pub fn be64(b: &[u8], off: usize) -> Option<u64> {
    let s = b.get(off..off.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Some(u64::from_be_bytes(a))
}
