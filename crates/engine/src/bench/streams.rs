//! The streams of the benchmarks: a setup's forward traffic, the Initiator's phase 1 (a
//! stateful setup), or the Responder's phase 2 on a table of made-up connections, and the table
//! a phase 1 receiver learns into.

use super::spec::{BenchError, BenchSpec};
use std::net::IpAddr;
use std::sync::Arc;
use xlat_traffic::{Direction, DirectionStream, IpVersion, Setup, Side, StateTable, Stateful, Tuple4};
use xlat_wire::MacAddr;

/// A state table of `n` made-up connections as phase 1 would leave it: the Responder side's IP
/// version, the configured real addresses, distinct Initiator ports.
pub fn made_up_table(setup: &Setup, n: u64) -> Result<StateTable, BenchError> {
    let v6 = setup.right.ip_version == IpVersion::V6;
    let addr = |s: &Side| -> Option<IpAddr> {
        if v6 {
            s.ipv6_real.map(IpAddr::V6)
        } else {
            s.ipv4_real.map(IpAddr::V4)
        }
    };
    let (Some(initiator), Some(responder)) = (addr(&setup.left), addr(&setup.right)) else {
        return Err(BenchError::NoAddresses);
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
/// stateful setup the Initiator's phase 1, or with `spec.responder` the Responder's phase 2 on
/// a table of that many made-up connections.
pub(super) fn stream(setup: &Setup, spec: &BenchSpec, src: MacAddr, dst: MacAddr) -> Result<DirectionStream, BenchError> {
    let size = spec.frame_size;
    Ok(match (setup.stateful.mode, spec.responder) {
        (Stateful::Off, Some(_)) => return Err(BenchError::NotStateful),
        (Stateful::Off, None) => DirectionStream::new(setup, Direction::Forward, size, src, dst)?,
        // The Responder's direction: from the right side (initiator-left) back to the left.
        (_, Some(n)) => DirectionStream::responder(setup, Direction::Reverse, size, src, dst, Arc::new(made_up_table(setup, n)?))?,
        (_, None) => DirectionStream::preliminary(setup, Direction::Forward, size, src, dst)?,
    })
}

/// The state table the Responder's receiver learns phase 1's tuples into (`entries` of them,
/// a ring), when the benchmark's frames are phase 1's; `None` otherwise.
pub(super) fn learning_table(setup: &Setup, responder: Option<u64>, entries: u64) -> Result<Option<StateTable>, BenchError> {
    if setup.stateful.mode == Stateful::Off || responder.is_some() {
        return Ok(None);
    }
    Ok(Some(StateTable::with_version(entries, setup.right.ip_version == IpVersion::V6)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(mode: Stateful) -> Setup {
        let mut s = super::super::spec::tests::test_setup(IpVersion::V4, 2);
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
        let spec = BenchSpec {
            seconds: 1.0,
            frame_size: 84,
            burst: 32,
            core: None,
            responder: Some(10),
        };
        let e = stream(&setup(Stateful::Off), &spec, mac, mac).err();
        assert!(matches!(e, Some(BenchError::NotStateful)), "{e:?}");
        let mut v6 = setup(Stateful::InitiatorLeft);
        v6.right.ip_version = IpVersion::V6;
        v6.right.ipv6_real = None;
        assert!(matches!(made_up_table(&v6, 1).err(), Some(BenchError::NoAddresses)));
        assert!(learning_table(&s, None, 8).unwrap().is_some());
        assert!(learning_table(&s, Some(8), 8).unwrap().is_none());
        assert!(learning_table(&setup(Stateful::Off), None, 8).unwrap().is_none());
    }
}
