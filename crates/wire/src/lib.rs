#![forbid(unsafe_code)]
#![warn(missing_docs)]
//! Bytes on the wire for xlatperf: Ethernet II, ARP, IPv4, IPv6, ICMPv6 neighbour discovery and
//! UDP, their checksums, the test-frame payload, and a classifier for received frames.
//!
//! Nothing here does I/O of its own or allocates per frame, and no function panics on any input
//! bytes: parsers take `&[u8]` of any length and return `None`/`Rx::Other` when the bytes do not
//! fit. Builders write into a caller's buffer and return an error when it is too small.
//!
//! What is where, from the bottom up:
//!
//! | module | what | cites |
//! | --- | --- | --- |
//! | `bytes` | [`be16`], [`be64`]: big-endian reads that return `None` past the end | |
//! | [`checksum`] | one's complement sums, folded and finished | RFC 1071 |
//! | [`eth`] | Ethernet II header, [`MacAddr`] | RFC 2464 section 7 (IPv6 multicast MACs) |
//! | [`ipv4`], [`ipv6`], [`udp`] | headers as [`ipv4::Header`] etc., written and parsed; pseudo-header sums; UDP checksums | RFC 791 section 3.1, RFC 8200 sections 3 and 8.1, RFC 768 |
//! | [`arp`], [`ndp`] | ARP and NS/NA: whole frames written, packets parsed | RFC 826, RFC 4861 |
//! | [`payload`] | `IDENTIFY`, the 64-bit field, the padding pattern | RFC 2544 appendix C |
//! | [`frame`] | a whole test frame ([`TestFrame`]) and where its fields are ([`TestFrameLayout`]) | |
//! | [`rx`] | [`classify`]: a received frame is a test frame, ARP, NS/NA, corrupt or other | |
//! | [`pcap`] | classic pcap files of frames, for tshark: [`pcap::PcapWriter`], [`pcap::frames`] | |
//!
//! Each header module names its field offsets in a `field` module (byte ranges, as smoltcp
//! does), and the header length is the end of the last field.

pub mod arp;
mod bytes;
pub mod checksum;
pub mod eth;
pub mod frame;
pub mod ipv4;
pub mod ipv6;
pub mod ndp;
pub mod payload;
pub mod pcap;
pub mod rx;
pub mod udp;

pub use bytes::{be16, be64};
pub use eth::{MacAddr, FCS_LEN};
pub use frame::{FrameError, IpPair, TestFrame, TestFrameLayout};
pub use rx::{classify, udp_tuple, Rx};
