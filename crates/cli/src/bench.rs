//! `xlatperf bench-sender` and `bench-receiver`: the performance harness's commands (bench/*.sh;
//! xlat-engine's `bench` runs them). They open the configuration's ports and print a figure; a
//! trial never runs unpaced.
//!
//! - `bench-sender`: the sender's hot path flat out on the left port, printing frames/s. With a
//!   stateful configuration it runs the Initiator's phase 1 sender (enumerating connections);
//!   with `--responder N` the Responder's phase 2 sender on a table of N made-up connections
//!   (bench/modes.sh `responder`). With `tester.queues = N` it runs N senders, one per queue
//!   set, each on a core of its own (the given core, then the next ones this process may use),
//!   and prints their sum (bench/queues.sh). With `--reset-mbufs` every mbuf is reset and its
//!   frame written whole, as testpmd txonly does (bench/modes.sh `fixedreset`).
//! - `bench-receiver`: the receiver's hot path on one core (bench/instructions.sh counts its
//!   instructions per frame beside the sender's). The left port sends the same stream as
//!   `bench-sender`, half a ring at a time, and the right port's receiver, a trial's, takes it
//!   back and counts it on the same thread: the ports must be looped back to each other (a DPDK
//!   `net_ring` pair `ring:A` / `ring:B`, or the mem backend). Fails when a frame sent is not
//!   counted once.

use anyhow::{Context, Result};
use xlat_config::{Backend, TestConfig};
use xlat_engine::bench::{self, BenchSpec, Saturation, FILL};

/// What `bench-sender` and `bench-receiver` take.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    #[command(flatten)]
    pub cfg: crate::args::ConfigArgs,
    /// Seconds to run.
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// Frame size with FCS, as trial.frame_size (its default): the IPv6 size, IPv4 frames are
    /// 20 bytes shorter.
    #[arg(long = "frame-size")]
    frame_size: Option<usize>,
    /// Frames per burst sent.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u16).range(1..=4096))]
    burst: u16,
    /// Pin to this core.
    #[arg(long)]
    core: Option<usize>,
    /// A stateful configuration: the Responder's phase 2 frames instead of the Initiator's
    /// phase 1, on a state table of this many made-up connections (chosen as
    /// stateful.responder_tuples says).
    #[arg(long, value_name = "CONNECTIONS", value_parser = clap::value_parser!(u64).range(1..=1 << 24))]
    responder: Option<u64>,
}

impl BenchArgs {
    /// The run it asks for, with `cfg` (its loaded configuration).
    fn spec(&self, cfg: &TestConfig) -> BenchSpec {
        BenchSpec {
            seconds: self.seconds,
            frame_size: self.frame_size.unwrap_or(cfg.trial.frame_size),
            burst: usize::from(self.burst),
            core: self.core,
            responder: self.responder,
        }
    }
}

/// `bench-sender` with the configuration `cfg` loaded from `args.cfg`: prints the frames/s of
/// the left port's queues together.
pub fn sender(cfg: &TestConfig, args: &BenchArgs, reset: bool) -> Result<()> {
    let spec = args.spec(cfg);
    let how = Saturation {
        queues: cfg.tester.queues as usize,
        reset,
    };
    let t = &cfg.tester;
    let fps = match t.backend {
        Backend::Mem => {
            // The right port stays open: the left one sends into its ring until it is full.
            let (mut l, _r) = xlat_io::mem::pair(1 << 20);
            bench::sender(&mut l, &cfg.setup, &spec, how)?
        }
        Backend::AfPacket => {
            let opts = xlat_io::afpacket::AfPacketOptions {
                netns: t.netns.clone(),
                ..Default::default()
            };
            let mut l = xlat_io::afpacket::AfPacketPort::open(&t.left_port, opts).with_context(|| format!("opening {}", t.left_port))?;
            bench::sender(&mut l, &cfg.setup, &spec, how)?
        }
        Backend::AfXdp => {
            let opts = xlat_io::afxdp::AfXdpOptions {
                netns: t.netns.clone(),
                queues: t.queues.max(1),
                ..Default::default()
            };
            bench::sender(&mut crate::runner::open_afxdp(&t.left_port, "left", &opts)?, &cfg.setup, &spec, how)?
        }
        #[cfg(feature = "dpdk")]
        Backend::Dpdk => bench::sender(&mut crate::dpdk_glue::open_one(cfg, &t.left_port)?, &cfg.setup, &spec, how)?,
        #[cfg(not(feature = "dpdk"))]
        Backend::Dpdk => anyhow::bail!("{}", xlat_io::IoError::Absent("dpdk")),
    };
    println!("sender frames/s: {fps:.0}");
    Ok(())
}

/// `bench-receiver` with the configuration `cfg` loaded from `args.cfg`: prints the frames
/// counted, and their rate with the sending included.
pub fn receiver(cfg: &TestConfig, args: &BenchArgs) -> Result<()> {
    let spec = args.spec(cfg);
    let (count, secs) = match cfg.tester.backend {
        Backend::Mem => {
            let (mut l, mut r) = xlat_io::mem::pair(4 * FILL as usize);
            bench::receiver(&mut l, &mut r, &cfg.setup, &spec)?
        }
        #[cfg(feature = "dpdk")]
        Backend::Dpdk => {
            let (l, r) = (&cfg.tester.left_port, &cfg.tester.right_port);
            if !(l.starts_with("ring:") && r.starts_with("ring:")) {
                anyhow::bail!("bench-receiver on DPDK needs a net_ring pair: tester.left_port = \"ring:a\", right_port = \"ring:b\" (not {l} / {r})");
            }
            let run = |mut l, mut r| Ok(bench::receiver(&mut l, &mut r, &cfg.setup, &spec)?);
            crate::dpdk_glue::open(cfg, run).map_err(|e| e.context("bench-receiver"))?
        }
        #[cfg(not(feature = "dpdk"))]
        Backend::Dpdk => anyhow::bail!("{}", xlat_io::IoError::Absent("dpdk")),
        other => anyhow::bail!(
            "bench-receiver needs its two ports looped back on one thread: a DPDK net_ring pair (ring:A / ring:B) or the mem backend, not {other:?}"
        ),
    };
    println!("receiver frames: {}", count.received);
    println!("receiver frames/s (sending included): {:.0}", count.received as f64 / secs);
    Ok(())
}
