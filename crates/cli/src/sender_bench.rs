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
use xlat_engine::saturate::saturate;
use xlat_engine::Clock;
use xlat_io::Port;
use xlat_traffic::{Direction, DirectionStream};
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

/// A state table of `n` made-up connections as phase 1 would leave it: the Responder side's
/// IP version, distinct Initiator ports, the configured addresses.
fn made_up_table(cfg: &TestConfig, n: u64) -> Result<std::sync::Arc<xlat_traffic::StateTable>> {
    use std::net::IpAddr;
    use xlat_traffic::{IpVersion, Tuple4};
    let (ini, res) = (&cfg.setup.left, &cfg.setup.right);
    let v6 = res.ip_version == IpVersion::V6;
    let addr = |s: &xlat_traffic::Side| -> Option<IpAddr> {
        if v6 {
            s.ipv6_real.map(IpAddr::V6)
        } else {
            s.ipv4_real.map(IpAddr::V4)
        }
    };
    let (Some(initiator), Some(responder)) = (addr(ini), addr(res)) else {
        anyhow::bail!("--responder needs the real addresses of both sides in the Responder's IP version");
    };
    let table = xlat_traffic::StateTable::with_version(n, v6)?;
    for k in 0..n {
        table.learn(Tuple4 {
            initiator,
            responder,
            initiator_port: 1024 + (k % 64_512) as u16,
            responder_port: 1 + (k / 64_512) as u16,
        });
    }
    Ok(std::sync::Arc::new(table))
}

/// The stream a benchmark sends from the left port: the configured traffic, the Initiator's
/// phase 1 (a stateful configuration) or the Responder's phase 2 on a table of `responder`
/// made-up connections.
pub(crate) fn bench_stream(
    cfg: &TestConfig,
    frame_size: usize,
    responder: Option<u64>,
    src: MacAddr,
    dst: MacAddr,
) -> Result<DirectionStream> {
    if responder.is_some() && cfg.setup.stateful.mode == xlat_traffic::Stateful::Off {
        anyhow::bail!("--responder benchmarks a stateful test's Responder: the configuration needs stateful.mode");
    }
    Ok(if cfg.setup.stateful.mode == xlat_traffic::Stateful::Off {
        DirectionStream::new(&cfg.setup, Direction::Forward, frame_size, src, dst)?
    } else if let Some(n) = responder {
        // The Responder's direction: from the right side (initiator-left) back to the left.
        DirectionStream::responder(&cfg.setup, Direction::Reverse, frame_size, src, dst, made_up_table(cfg, n)?)?
    } else {
        DirectionStream::preliminary(&cfg.setup, Direction::Forward, frame_size, src, dst)?
    })
}

fn run_on<P: Port>(cfg: &TestConfig, mut port: P, b: &SenderBench) -> Result<f64> {
    let side = &cfg.setup.left;
    let src = side.tester_mac.unwrap_or(port.mac());
    // No DUT is needed: frames go to the configured DUT MAC or a locally administered one.
    let dst = side.dut_mac.unwrap_or(MacAddr([0x02, 0, 0, 0, 0, 0x02]));
    // A stateful configuration benchmarks the Initiator's phase 1 sender: every foreground
    // frame carries the next combination of the enumeration (bench/modes.sh `enum`).
    let stream = bench_stream(cfg, b.frame_size, b.responder, src, dst)?;
    let n = cfg.tester.queues.max(1) as usize;
    let sets = port.open_queues(n)?;
    let cores = xlat_engine::pin::allowed_cores();
    let first = b.core.and_then(|c| cores.iter().position(|x| *x == c)).unwrap_or(0);
    let core_of = |k: usize| -> Option<usize> {
        match (b.core, k) {
            (c, 0) => c,
            _ if cores.is_empty() => None,
            _ => Some(cores[(first + k) % cores.len()]),
        }
    };
    let clock = Clock::calibrate();
    let results: Vec<Result<f64>> = std::thread::scope(|sc| {
        let handles: Vec<_> = sets
            .into_iter()
            .enumerate()
            .map(|(k, mut q)| {
                let mut stream = stream.clone();
                let core = core_of(k);
                sc.spawn(move || -> Result<f64> {
                    if let Some(c) = core {
                        xlat_engine::pin::pin_current_thread(c).map_err(anyhow::Error::msg)?;
                    }
                    // saturate() flushes the queue at its end.
                    let r = if b.reset_mbufs {
                        saturate::<_, true>(&mut q.tx, &mut stream, &clock, b.seconds, b.burst)?
                    } else {
                        saturate::<_, false>(&mut q.tx, &mut stream, &clock, b.seconds, b.burst)?
                    };
                    Ok(r.rate())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(anyhow::anyhow!("a sender thread panicked"))))
            .collect()
    });
    results.into_iter().sum()
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
