//! What xlatperf sends: the test setup (sides, IP versions, real and virtual addresses, MACs),
//! which addresses each direction uses (docs/config.md, "Which addresses a direction uses"), the
//! foreground/background mix, the variation of ports and addresses, and the frame templates with
//! the per-frame patcher that the engine's senders call.
//!
//! This crate knows nothing of threads, clocks or backends.
//!
//! What is where, each module using only those above it:
//!
//! | module | what |
//! | --- | --- |
//! | [`rng`] | counter-based pseudorandom values: SplitMix64 keys, the per-frame hash, Lemire's reduction, `FastMod` |
//! | [`vary`] | [`Variation`]; `FieldGen`, a field's value in frame `seq` (one loop per burst); `AddrSet`, the addresses a side takes |
//! | [`maprule`] | the MAP mapping rule (RFC 7597, RFC 7599): a CE's IPv4 address, port set and IPv6 addresses from each other; RFC 6052's embedding for MAP-T's Default Mapping Rule |
//! | [`setup`] | the typed [`Setup`] (sides, ports, mix, seed) and which addresses a direction uses |
//! | `plan` | a direction's varying fields checked against the setup ([`StreamError`] when they cannot be applied) |
//! | `subscribers` | a direction's frames from or to a side of many MAP CEs: each frame's CE and port, and the words they set |
//! | `template` | a frame built once with zero in every varying field, and the per-frame patcher (`Template::patch`) |
//! | `burst` | [`Burst`]: a burst's field values computed ahead; [`Burst::write`] is the sender's per-frame call |
//! | [`enumerate`] | the preliminary phase's enumeration of connections: increasing, decreasing, or a keyed pseudorandom permutation computed per frame |
//! | [`state`] | the Responder's state table: learnt 4-tuples in a lock-free ring |
//! | `responder` | phase 2's Responder: which entry each frame answers on, chosen a burst at a time |
//! | [`stream`] | [`DirectionStream`]: a direction's templates, which frame is foreground, single frames and bursts; phase 1's enumerating stream and phase 2's Responder stream |
//!
//! Test frames are written into pcap files with `xlat_wire::pcap`.

mod burst;
pub mod enumerate;
pub mod maprule;
pub mod permutation;
mod plan;
mod responder;
pub mod rng;
pub mod setup;
pub mod state;
pub mod stream;
mod subscribers;
mod template;
pub mod vary;
mod writer;

pub use burst::{Burst, BurstScratch};
pub use plan::StreamError;
pub use setup::{
    is_benchmarking_v4, is_benchmarking_v6, AddrPair, Direction, IpVarSpec, IpVersion, MissingAddress, PortField, PortSpec, Setup, Side,
    SideId, SideMap, SideTunnel, Stateful, StatefulSpec, MAX_SUBSCRIBERS, RFC2544_DPORT, RFC2544_SPORT, RFC4814_DPORT, RFC4814_SPORT,
};
pub use state::{StateError, StateTable, Tuple4};
pub use stream::DirectionStream;
pub use vary::Variation;
pub use writer::{FrameWriter, WithWriter};
