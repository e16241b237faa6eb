//! `xlatperf bench-receiver`: the receiver's hot path on one core, for benchmarks
//! (bench/instructions.sh counts its instructions per frame beside the sender's). The left
//! port sends the configured stream (as `bench-sender` does: the traffic, the Initiator's
//! phase 1, or the Responder's phase 2 with `--responder`) half a ring at a time, and the right
//! port's receiver, a trial's, takes it all back in full bursts and counts it, on the same
//! thread: the ports must be looped back to each other (a DPDK `net_ring` pair `ring:A` /
//! `ring:B`, or the mem backend). In phase 1 the receiver learns the foreground frames'
//! tuples, as the Responder does. Fails when a frame sent is not counted once.

use anyhow::{Context, Result};
use xlat_config::{Backend, TestConfig};
use xlat_engine::trial::{loopback, LoopbackCount};
use xlat_engine::Clock;
use xlat_io::Port;
use xlat_traffic::{StateTable, Stateful};

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

/// What a run counted, and in how long.
pub struct ReceiverFigures {
    pub count: LoopbackCount,
    pub seconds: f64,
}

fn run_on<P: Port>(cfg: &TestConfig, mut left: P, mut right: P, b: &ReceiverBench) -> Result<ReceiverFigures> {
    let (src, dst) = (left.mac(), right.mac());
    let mut stream = crate::sender_bench::bench_stream(cfg, b.frame_size, b.responder, src, dst)?;
    // Phase 1: the receiver is the Responder's and learns every foreground frame's tuple.
    let table = match (cfg.setup.stateful.mode, b.responder) {
        (Stateful::Off, _) | (_, Some(_)) => None,
        _ => Some(StateTable::with_version(
            1 << 16,
            cfg.setup.right.ip_version == xlat_traffic::IpVersion::V6,
        )?),
    };
    let (mut lq, mut rq) = (left.queues()?, right.queues()?);
    if let Some(c) = b.core {
        xlat_engine::pin::pin_current_thread(c).map_err(anyhow::Error::msg)?;
    }
    let clock = Clock::calibrate();
    let t0 = std::time::Instant::now();
    let count = loopback::<P>(
        &cfg.setup,
        &mut lq,
        &mut rq,
        dst,
        &mut stream,
        table.as_ref(),
        &clock,
        b.seconds,
        b.burst,
        FILL,
    )?;
    let seconds = t0.elapsed().as_secs_f64();
    if count.received != count.sent || count.other != 0 {
        anyhow::bail!(
            "the receiver counted {} of {} frames sent once ({} others): the loopback lost or changed frames",
            count.received,
            count.sent,
            count.other
        );
    }
    Ok(ReceiverFigures { count, seconds })
}

/// Run the benchmark from the left port to the right port of `cfg`.
pub fn run(cfg: &TestConfig, b: &ReceiverBench) -> Result<ReceiverFigures> {
    match cfg.tester.backend {
        Backend::Mem => {
            let (l, r) = xlat_io::mem::pair(4 * FILL);
            run_on(cfg, l, r, b)
        }
        Backend::Dpdk => dpdk(cfg, b),
        other => anyhow::bail!(
            "bench-receiver needs its two ports looped back on one thread: a DPDK net_ring pair (ring:A / ring:B) or the mem backend, not {other:?}"
        ),
    }
}

#[cfg(feature = "dpdk")]
fn dpdk(cfg: &TestConfig, b: &ReceiverBench) -> Result<ReceiverFigures> {
    let (l, r) = (&cfg.tester.left_port, &cfg.tester.right_port);
    if !(l.starts_with("ring:") && r.starts_with("ring:")) {
        anyhow::bail!(
            "bench-receiver on DPDK needs a net_ring pair: tester.left_port = \"ring:a\", right_port = \"ring:b\" (not {l} / {r})"
        );
    }
    crate::dpdk_glue::open(cfg, |lp, rp| run_on(cfg, lp, rp, b)).context("bench-receiver")
}

#[cfg(not(feature = "dpdk"))]
fn dpdk(_cfg: &TestConfig, _b: &ReceiverBench) -> Result<ReceiverFigures> {
    anyhow::bail!("{}", xlat_io::IoError::Absent("dpdk"))
}
