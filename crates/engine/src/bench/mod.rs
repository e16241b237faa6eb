//! The performance harness (`xlatperf bench-sender`, `bench-receiver`; bench/*.sh): a trial's
//! sender and receiver hot paths run flat out, without pacing, so that their cost per frame
//! can be measured apart from any DUT. A trial never runs this way.
//!
//! | module | holds |
//! | --- | --- |
//! | `spec` | what a run is asked ([`BenchSpec`], [`Saturation`]) and why it fails ([`BenchError`]) |
//! | `streams` | what a benchmark sends: the setup's traffic, the Initiator's phase 1, or the Responder's phase 2 on made-up connections; the table a phase 1 receiver learns into |
//! | `saturate` | the sender flat out on one queue ([`saturate`]), and on a port's queues, a core each |
//! | `loopback` | the receiver: a looped-back pair, sending and receiving in turns on one thread |
//!
//! [`sender`] and [`receiver`] take a [`BenchSpec`] (how long, which frames, bursts, core) and
//! build the stream themselves.

mod loopback;
mod saturate;
mod spec;
mod streams;

pub use loopback::{LoopbackCount, FILL};
pub use spec::{BenchError, BenchSpec, Saturation};

use xlat_io::Port;
use xlat_traffic::Setup;
use xlat_wire::MacAddr;

/// The sender's benchmark: `spec`'s stream (from the left side's tester MAC, or the port's, to
/// its DUT MAC, or a locally administered one: no DUT is needed) sent flat out on `port`.
/// Returns the frames/s of all queues together.
pub fn sender<P: Port>(port: &mut P, setup: &Setup, spec: &BenchSpec, how: Saturation) -> Result<f64, BenchError> {
    let side = &setup.left;
    let src = side.tester_mac.unwrap_or(port.mac());
    let dst = side.dut_mac.unwrap_or(MacAddr([0x02, 0, 0, 0, 0, 0x02]));
    let stream = streams::stream(setup, spec, src, dst)?;
    Ok(saturate::saturate_port(port, &stream, spec, how)?)
}

/// The receiver's benchmark: `spec`'s stream sent from `left` to `right`, two ports looped
/// back to each other, [`FILL`] frames at a time, and counted by a trial's receiver on the same
/// thread (learning phase 1's tuples, as the Responder does). Returns the counts and the seconds
/// the run took; [`BenchError::Lost`] unless every frame sent was counted once.
pub fn receiver<P: Port>(left: &mut P, right: &mut P, setup: &Setup, spec: &BenchSpec) -> Result<(LoopbackCount, f64), BenchError> {
    let mut stream = streams::stream(setup, spec, left.mac(), right.mac())?;
    let table = streams::learning_table(setup, spec.responder, 1 << 16)?;
    let (c, secs) = loopback::loopback_ports(setup, (left, right), &mut stream, table.as_ref(), spec)?;
    if c.received != c.sent || c.other != 0 {
        return Err(BenchError::Lost {
            sent: c.sent,
            received: c.received,
            other: c.other,
        });
    }
    Ok((c, secs))
}
