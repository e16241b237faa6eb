//! The streams of the benchmarks (`xlatperf bench-sender`, `bench-receiver`): a setup's
//! forward traffic, the Initiator's phase 1 (a stateful setup), or the Responder's phase 2 on a
//! table of made-up connections, and the table a phase 1 receiver learns into.

use crate::plan::StreamError;
use crate::setup::{Direction, IpVersion, Setup, Side, Stateful};
use crate::state::{StateError, StateTable, Tuple4};
use crate::stream::DirectionStream;
use std::net::IpAddr;
use std::sync::Arc;
use xlat_wire::MacAddr;

/// Why a benchmark's stream cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamBenchError {
    #[error(transparent)]
    Stream(#[from] StreamError),
    #[error(transparent)]
    State(#[from] StateError),
    #[error("the Responder's frames need a stateful setup (stateful.mode)")]
    NotStateful,
    #[error("the Responder's frames need the real addresses of both sides in the Responder's IP version")]
    NoAddresses,
}

/// A state table of `n` made-up connections as phase 1 would leave it: the Responder side's IP
/// version, the configured real addresses, distinct Initiator ports.
pub fn made_up_table(setup: &Setup, n: u64) -> Result<StateTable, StreamBenchError> {
    let v6 = setup.right.ip_version == IpVersion::V6;
    let addr = |s: &Side| -> Option<IpAddr> {
        if v6 {
            s.ipv6_real.map(IpAddr::V6)
        } else {
            s.ipv4_real.map(IpAddr::V4)
        }
    };
    let (Some(initiator), Some(responder)) = (addr(&setup.left), addr(&setup.right)) else {
        return Err(StreamBenchError::NoAddresses);
    };
    let table = StateTable::with_version(n, v6)?;
    for k in 0..n {
        table.learn(Tuple4 {
            initiator,
            responder,
            initiator_port: 1024 + (k % 64_512) as u16,
            responder_port: 1 + (k / 64_512) as u16,
        });
    }
    Ok(table)
}

/// The frames a benchmark sends from the left port: the setup's forward traffic; with a
/// stateful setup the Initiator's phase 1, or with `responder` the Responder's phase 2 on a
/// table of that many made-up connections.
pub fn stream(
    setup: &Setup,
    frame_size: usize,
    responder: Option<u64>,
    src: MacAddr,
    dst: MacAddr,
) -> Result<DirectionStream, StreamBenchError> {
    Ok(match (setup.stateful.mode, responder) {
        (Stateful::Off, Some(_)) => return Err(StreamBenchError::NotStateful),
        (Stateful::Off, None) => DirectionStream::new(setup, Direction::Forward, frame_size, src, dst)?,
        // The Responder's direction: from the right side (initiator-left) back to the left.
        (_, Some(n)) => DirectionStream::responder(setup, Direction::Reverse, frame_size, src, dst, Arc::new(made_up_table(setup, n)?))?,
        (_, None) => DirectionStream::preliminary(setup, Direction::Forward, frame_size, src, dst)?,
    })
}

/// The state table the Responder's receiver learns phase 1's tuples into (`entries` of them,
/// a ring), when the benchmark's frames are phase 1's; `None` otherwise.
pub fn learning_table(setup: &Setup, responder: Option<u64>, entries: u64) -> Result<Option<StateTable>, StreamBenchError> {
    if setup.stateful.mode == Stateful::Off || responder.is_some() {
        return Ok(None);
    }
    Ok(Some(StateTable::with_version(entries, setup.right.ip_version == IpVersion::V6)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(mode: Stateful) -> Setup {
        let (mut left, mut right) = (Side::new(IpVersion::V4), Side::new(IpVersion::V4));
        left.ipv4_real = Some("198.18.0.2".parse().unwrap());
        right.ipv4_real = Some("198.19.0.2".parse().unwrap());
        let mut s = Setup {
            left,
            right,
            forward: true,
            reverse: false,
            forward_ports: Default::default(),
            reverse_ports: Default::default(),
            fg_n: 2,
            fg_m: 2,
            stateful: Default::default(),
            seed: Some(1),
            allow_foreign_addresses: false,
        };
        s.stateful.mode = mode;
        s
    }

    /// The made-up table holds `n` distinct connections between the real addresses; the
    /// Responder's frames need a stateful setup and its addresses; only phase 1 learns.
    #[test]
    fn made_up_connections_and_what_needs_a_stateful_setup() {
        let s = setup(Stateful::InitiatorLeft);
        let n = 70_000;
        let t = made_up_table(&s, n).unwrap();
        let all: std::collections::HashSet<Tuple4> = (0..n).map(|k| t.read(k).unwrap()).collect();
        assert_eq!(all.len() as u64, n);
        assert!(all
            .iter()
            .all(|c| c.initiator == IpAddr::from([198, 18, 0, 2]) && c.responder == IpAddr::from([198, 19, 0, 2])));
        let mac = MacAddr([2, 0, 0, 0, 0, 1]);
        assert_eq!(
            stream(&setup(Stateful::Off), 84, Some(10), mac, mac).err(),
            Some(StreamBenchError::NotStateful)
        );
        let mut v6 = setup(Stateful::InitiatorLeft);
        v6.right.ip_version = IpVersion::V6;
        assert_eq!(made_up_table(&v6, 1).err(), Some(StreamBenchError::NoAddresses));
        assert!(learning_table(&s, None, 8).unwrap().is_some());
        assert!(learning_table(&s, Some(8), 8).unwrap().is_none());
        assert!(learning_table(&setup(Stateful::Off), None, 8).unwrap().is_none());
    }
}
