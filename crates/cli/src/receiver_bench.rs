//! `xlatperf bench-receiver`: the receiver's hot path on one core, for benchmarks
//! (bench/instructions.sh counts its instructions per frame beside the sender's). The left
//! port sends the configured stream (as `bench-sender` does: the traffic, the Initiator's
//! phase 1, or the Responder's phase 2 with `--responder`) half a ring at a time, and the right
//! port's receiver, a trial's, takes it all back in full bursts and counts it, on the same
//! thread (xlat-engine's `trial::loopback`): the ports must be looped back to each other (a
//! DPDK `net_ring` pair `ring:A` / `ring:B`, or the mem backend). In phase 1 the receiver
//! learns the foreground frames' tuples, as the Responder does. Fails when a frame sent is not
//! counted once.

use anyhow::Result;
use xlat_config::{Backend, TestConfig};
use xlat_engine::trial::{loopback_ports, LoopbackCount};
use xlat_io::Port;

/// Frames sent per round before they are all received: half of the loopback's ring (a DPDK
/// `net_ring` pair holds 1,024 per direction), so that none is dropped.
const FILL: usize = 512;

pub struct ReceiverBench {
    pub seconds: f64,
    pub frame_size: usize,
    pub burst: usize,
    pub core: Option<usize>,
    /// Send the Responder's phase 2 frames on a table of this many made-up connections.
    pub responder: Option<u64>,
}

fn run_on<P: Port>(cfg: &TestConfig, mut left: P, mut right: P, b: &ReceiverBench) -> Result<(LoopbackCount, f64)> {
    use xlat_traffic::bench;
    let mut stream = bench::stream(&cfg.setup, b.frame_size, b.responder, left.mac(), right.mac())?;
    let table = bench::learning_table(&cfg.setup, b.responder, 1 << 16)?;
    Ok(loopback_ports(
        &cfg.setup,
        &mut left,
        &mut right,
        &mut stream,
        table.as_ref(),
        b.core,
        b.seconds,
        b.burst,
        FILL,
    )?)
}

/// Run the benchmark from the left port to the right port of `cfg`: the counts and the seconds.
pub fn run(cfg: &TestConfig, b: &ReceiverBench) -> Result<(LoopbackCount, f64)> {
    match cfg.tester.backend {
        Backend::Mem => {
            let (l, r) = xlat_io::mem::pair(4 * FILL);
            run_on(cfg, l, r, b)
        }
        #[cfg(feature = "dpdk")]
        Backend::Dpdk => {
            let (l, r) = (&cfg.tester.left_port, &cfg.tester.right_port);
            if !(l.starts_with("ring:") && r.starts_with("ring:")) {
                anyhow::bail!("bench-receiver on DPDK needs a net_ring pair: tester.left_port = \"ring:a\", right_port = \"ring:b\" (not {l} / {r})");
            }
            crate::dpdk_glue::open(cfg, |lp, rp| run_on(cfg, lp, rp, b))
                .map_err(|e| e.context("bench-receiver"))
        }
        #[cfg(not(feature = "dpdk"))]
        Backend::Dpdk => anyhow::bail!("{}", xlat_io::IoError::Absent("dpdk")),
        other => anyhow::bail!(
            "bench-receiver needs its two ports looped back on one thread: a DPDK net_ring pair (ring:A / ring:B) or the mem backend, not {other:?}"
        ),
    }
}
