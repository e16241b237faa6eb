//! `xlatperf bench-sender`: the sender's hot path flat out on one port and one core, printing
//! frames/s. For benchmarks only (bench/sender.sh); a trial never runs unpaced. With a stateful
//! configuration it runs the Initiator's phase 1 sender (enumerating connections). With
//! `tester.queues = N` it runs N senders, one per queue set of the port, each on a core of its
//! own (the given core, then the next ones this process may use), each sending the stream from
//! its start, and prints their sum (bench/queues.sh). With `--reset-mbufs` every mbuf is reset
//! and its frame written whole in every frame, as testpmd txonly does (bench/modes.sh
//! `fixedreset`: the like-for-like comparison). With `--responder N` and a stateful
//! configuration it runs the Responder's phase 2 sender on a table of N made-up connections
//! (bench/modes.sh `responder`).

use anyhow::{Context, Result};
use xlat_config::{Backend, TestConfig};
use xlat_engine::saturate::saturate_port;
use xlat_io::Port;
use xlat_wire::MacAddr;

pub struct SenderBench {
    pub seconds: f64,
    pub frame_size: usize,
    pub burst: usize,
    pub core: Option<usize>,
    /// Reset every mbuf and write its frame whole, per frame (testpmd txonly's work).
    pub reset_mbufs: bool,
    /// Benchmark the Responder's phase 2 sender on a table of this many connections.
    pub responder: Option<u64>,
}

fn run_on<P: Port>(cfg: &TestConfig, mut port: P, b: &SenderBench) -> Result<f64> {
    let side = &cfg.setup.left;
    let src = side.tester_mac.unwrap_or(port.mac());
    // No DUT is needed: frames go to the configured DUT MAC or a locally administered one.
    let dst = side.dut_mac.unwrap_or(MacAddr([0x02, 0, 0, 0, 0, 0x02]));
    // A stateful configuration benchmarks the Initiator's phase 1 sender: every foreground
    // frame carries the next combination of the enumeration (bench/modes.sh `enum`).
    let stream = xlat_traffic::bench::stream(&cfg.setup, b.frame_size, b.responder, src, dst)?;
    let queues = cfg.tester.queues as usize;
    Ok(saturate_port(
        &mut port,
        queues,
        &stream,
        b.core,
        b.seconds,
        b.burst,
        b.reset_mbufs,
    )?)
}

/// Run the benchmark on the left port of `cfg`; returns frames/s.
pub fn run(cfg: &TestConfig, b: &SenderBench) -> Result<f64> {
    let t = &cfg.tester;
    match t.backend {
        Backend::Mem => {
            let (l, _r) = xlat_io::mem::pair(1 << 20);
            run_on(cfg, l, b)
        }
        Backend::AfPacket => {
            let opts = xlat_io::afpacket::AfPacketOptions {
                netns: t.netns.clone(),
                ..Default::default()
            };
            let l = xlat_io::afpacket::AfPacketPort::open(&t.left_port, opts).with_context(|| format!("opening {}", t.left_port))?;
            run_on(cfg, l, b)
        }
        Backend::AfXdp => {
            let opts = xlat_io::afxdp::AfXdpOptions {
                netns: t.netns.clone(),
                queues: t.queues.max(1),
                ..Default::default()
            };
            let l = crate::runner::open_afxdp(&t.left_port, "left", &opts)?;
            run_on(cfg, l, b)
        }
        Backend::Dpdk => dpdk(cfg, b),
    }
}

#[cfg(feature = "dpdk")]
fn dpdk(cfg: &TestConfig, b: &SenderBench) -> Result<f64> {
    let l = crate::dpdk_glue::open_one(cfg, &cfg.tester.left_port)?;
    run_on(cfg, l, b)
}

#[cfg(not(feature = "dpdk"))]
fn dpdk(_cfg: &TestConfig, _b: &SenderBench) -> Result<f64> {
    anyhow::bail!("{}", xlat_io::IoError::Absent("dpdk"))
}
