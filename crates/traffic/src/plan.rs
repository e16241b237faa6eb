//! What varies in one direction's frames, checked once before any frame is built.
//!
//! What varies per frame (docs/frame-format.md; G. Lencse, "Adding RFC 4814 random port feature
//! to siitperf", and "Making stateless and stateful network performance measurements unbiased"):
//! - the 64-bit payload field (sequence number, latency tag);
//! - the UDP source and destination ports of the direction (`Fwd-var-sport` ...), fixed ones
//!   being RFC 2544's 0xC020 and 7;
//! - the 16-bit varying part of the source address (the sender side's `IP-{L,R}-var`) and of the
//!   destination address (the receiver side's), real and virtual addresses alike;
//! - the destination network byte (IPv4 octet 2, IPv6 octet 7) when the receiver side has more
//!   than one destination network (`Num-{L,R}-Nets`).
//!
//! Background frames vary exactly like foreground frames (ports, both addresses at the sides'
//! IPv6 offsets, destination networks). siitperf does the same: its senders set working pointers
//! into whichever frame (foreground or background) goes next and modify it at one point
//! (the RFC 4814 paper, section III.B; the "unbiased" paper, section 4.3, skips only the IPv4
//! header checksum for background frames). Otherwise the native IPv6 share of an RFC 8219 test would be a single
//! flow that one DUT core handles.

use crate::rng::Stream;
use crate::setup::{Direction, IpVarSpec, MissingAddress, PortField, Setup, SideId};
use crate::vary::{FieldGen, Variation};

/// Why a direction's frames cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    #[error(transparent)]
    Missing(#[from] MissingAddress),
    #[error("{0}")]
    Frame(String),
    /// A variation setting that cannot be applied (range, offset, network count).
    #[error("{0}")]
    Invalid(String),
}

/// The pseudorandom stream numbers of the fields of one direction (with the direction, they key
/// the field's stream under the seed).
pub mod field_id {
    pub const SPORT: u64 = 0;
    pub const DPORT: u64 = 1;
    pub const SRC_ADDR: u64 = 2;
    pub const DST_ADDR: u64 = 3;
    pub const DST_NET: u64 = 4;
    /// The subscriber of a frame from or to a side of many MAP CEs, and its port's place in
    /// the subscriber's set (see `subscribers`).
    pub const SUBSCRIBER: u64 = 5;
    pub const SUBSCRIBER_PORT: u64 = 6;
}

/// The most 16-bit words a template varies: the source and destination ports, the varying
/// parts of the source and destination addresses, and the destination network byte (five
/// fields of a direction); for the Responder of a stateful test both ports and both whole
/// addresses (6 words for IPv4, 18 for IPv6).
pub const MAX_FIELDS: usize = 18;

/// The ranges and settings of one direction's varying fields, checked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    pub(crate) sport: Option<FieldGen>,
    pub(crate) dport: Option<FieldGen>,
    pub(crate) src: Option<(FieldGen, IpVarSpec)>,
    pub(crate) dst: Option<(FieldGen, IpVarSpec)>,
    pub(crate) net: Option<FieldGen>,
}

fn side_key(id: SideId) -> &'static str {
    match id {
        SideId::Left => "L",
        SideId::Right => "R",
    }
}

impl Plan {
    /// Check the variation settings of direction `d` and make a generator per varying field,
    /// keyed under `seed`.
    pub(crate) fn new(setup: &Setup, d: Direction, seed: u64) -> Result<Plan, StreamError> {
        let fam = d as u64;
        let dir = if d == Direction::Forward { "Fwd" } else { "Rev" };
        let port = |f: &PortField, name: &str, id: u64| -> Result<Option<FieldGen>, StreamError> {
            if f.variation.is_fixed() {
                return Ok(None);
            }
            if f.min > f.max {
                return Err(StreamError::Invalid(format!(
                    "{dir}-{name}-min {} is above {dir}-{name}-max {}",
                    f.min, f.max
                )));
            }
            Ok(Some(FieldGen::new(f.variation, f.min, f.max, Stream::derive(seed, fam, id))))
        };
        let ports = setup.ports(d);
        let sport = port(&ports.sport, "sport", field_id::SPORT)?;
        let dport = port(&ports.dport, "dport", field_id::DPORT)?;
        let addr = |id: SideId, field: u64| -> Result<Option<(FieldGen, IpVarSpec)>, StreamError> {
            let v = setup.side(id).ip_var;
            if v.variation.is_fixed() {
                return Ok(None);
            }
            let k = side_key(id);
            if v.min > v.max {
                return Err(StreamError::Invalid(format!("IP-{k}-min {} is above IP-{k}-max {}", v.min, v.max)));
            }
            if v.ipv4_offset != 2 {
                return Err(StreamError::Invalid(format!(
                    "IPv4-{k}-offset {} is not supported: only 2 (the last 16 bits)",
                    v.ipv4_offset
                )));
            }
            if !(6..=14).contains(&v.ipv6_offset) || v.ipv6_offset & 1 != 0 {
                return Err(StreamError::Invalid(format!(
                    "IPv6-{k}-offset {} must be even and within 6-14",
                    v.ipv6_offset
                )));
            }
            Ok(Some((
                FieldGen::new(v.variation, v.min, v.max, Stream::derive(seed, fam, field)),
                v,
            )))
        };
        let src = addr(d.sender(), field_id::SRC_ADDR)?;
        let dst = addr(d.receiver(), field_id::DST_ADDR)?;
        let rcv = setup.side(d.receiver());
        let k = side_key(d.receiver());
        if rcv.num_nets == 0 || rcv.num_nets > 256 {
            return Err(StreamError::Invalid(format!("Num-{k}-Nets {} is outside 1-256", rcv.num_nets)));
        }
        let net = if rcv.num_nets > 1 {
            if dst.is_some() {
                return Err(StreamError::Invalid(format!(
                    "IP-{k}-var and Num-{k}-Nets above 1 cannot be combined"
                )));
            }
            Some(FieldGen::new(
                Variation::Pseudorandom,
                0,
                rcv.num_nets - 1,
                Stream::derive(seed, fam, field_id::DST_NET),
            ))
        } else {
            None
        };
        Ok(Plan {
            sport,
            dport,
            src,
            dst,
            net,
        })
    }
}

impl Plan {
    /// The varying fields in slot-row order (see `Template::build`).
    pub(crate) fn gens(&self) -> Vec<FieldGen> {
        [self.sport, self.dport, self.src.map(|(g, _)| g), self.dst.map(|(g, _)| g), self.net]
            .into_iter()
            .flatten()
            .collect()
    }
}
