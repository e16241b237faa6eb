//! Opening the configured backend and running trials on it: a `Box<dyn TrialRunner>`
//! (`xlat_trial`'s one runner trait, which the engine's `Tester` implements), wrapped by
//! [`Hooks`] (the configuration's DUT commands), so that the rest of the CLI does not care
//! which backend it is.

use anyhow::{Context, Result};
use std::time::Duration;
use xlat_config::{Backend, TestConfig};
use xlat_dut::Hooks;
use xlat_engine::{CpuPlan, Tester};
use xlat_io::Port;
use xlat_trial::TrialRunner;

fn cpu_plan(cfg: &TestConfig) -> CpuPlan {
    let c = &cfg.tester.cpus;
    CpuPlan {
        left_send: c.left_send,
        right_recv: c.right_recv,
        right_send: c.right_send,
        left_recv: c.left_recv,
        queues: cfg.tester.queues as usize,
        dut: cfg.dut.cpus.clone(),
    }
}

/// Where this process's trial tags start: apart in two processes started apart (the clock's
/// nanoseconds and the process id), so that two testers sending into the same ports see each
/// other's frames as foreign (the trial is then invalid) instead of counting them as their own.
/// Only the tags depend on it, never a result.
fn tag_start() -> u8 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mixed = u64::from(nanos ^ std::process::id().wrapping_mul(0x9e37_79b9)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    (mixed >> 56) as u8
}

fn ready<P: Port + 'static>(cfg: &TestConfig, left: P, right: P) -> Result<Box<dyn TrialRunner>> {
    let mut setup = cfg.setup.clone();
    if cfg.tester.loopback || cfg.tester.backend == Backend::Mem {
        // The ports are cabled to each other (self-test): each side's "DUT" is the other port.
        setup.left.dut_mac = setup.left.dut_mac.or(Some(right.mac()));
        setup.right.dut_mac = setup.right.dut_mac.or(Some(left.mac()));
    }
    let mut t = Tester::new(setup, left, right, cpu_plan(cfg))?;
    t.set_trial_tag_start(tag_start());
    t.use_stamps(cfg.tester.timestamps)?;
    t.set_flow_control(cfg.tester.flow_control.wanted())
        .with_context(|| format!("tester.flow_control = \"{}\"", cfg.tester.flow_control.name()))?;
    t.prepare(Duration::from_secs(3)).context("resolving the DUT's MAC addresses")?;
    Ok(Box::new(Hooks::new(t, cfg.dut.clone())))
}

/// [`open`] with room in the ports' buffers for frames of siitperf's size `largest` (the
/// trials' sizes, which the command line may set beyond the configuration's): a DPDK port sizes
/// its mbufs and MTU when it is opened.
pub fn open_sized(cfg: &TestConfig, largest: usize) -> Result<Box<dyn TrialRunner>> {
    if largest <= cfg.trial.frame_size {
        return open(cfg);
    }
    let mut cfg = cfg.clone();
    cfg.trial.frame_size = largest;
    open(&cfg)
}

/// Open both ports of the configured backend and resolve the DUT.
pub fn open(cfg: &TestConfig) -> Result<Box<dyn TrialRunner>> {
    let t = &cfg.tester;
    match t.backend {
        Backend::Mem => {
            let (l, r) = xlat_io::mem::pair(1 << 16);
            ready(cfg, l, r)
        }
        Backend::AfPacket => {
            let opts = xlat_io::afpacket::AfPacketOptions {
                netns: t.netns.clone(),
                promisc: t.promisc,
                ..Default::default()
            };
            let l = xlat_io::afpacket::AfPacketPort::open(&t.left_port, opts.clone())
                .with_context(|| format!("opening left port {}", t.left_port))?;
            let r = xlat_io::afpacket::AfPacketPort::open(&t.right_port, opts)
                .with_context(|| format!("opening right port {}", t.right_port))?;
            ready(cfg, l, r)
        }
        Backend::AfXdp => {
            let opts = xlat_io::afxdp::AfXdpOptions {
                netns: t.netns.clone(),
                promisc: t.promisc,
                queues: t.queues.max(1),
                ..Default::default()
            };
            let l = open_afxdp(&t.left_port, "left", &opts)?;
            let r = open_afxdp(&t.right_port, "right", &opts)?;
            ready(cfg, l, r)
        }
        Backend::Dpdk => open_dpdk(cfg),
    }
}

/// Open an afxdp port, saying on standard error how its XDP program and socket work.
pub(crate) fn open_afxdp(iface: &str, side: &str, opts: &xlat_io::afxdp::AfXdpOptions) -> Result<xlat_io::afxdp::AfXdpPort> {
    let p = xlat_io::afxdp::AfXdpPort::open(iface, opts.clone()).with_context(|| format!("opening {side} port {iface}"))?;
    eprintln!("afxdp: {side} port {}: {}", xlat_io::Port::name(&p), p.mode());
    Ok(p)
}

#[cfg(feature = "dpdk")]
fn open_dpdk(cfg: &TestConfig) -> Result<Box<dyn TrialRunner>> {
    crate::dpdk_glue::open(cfg, |l, r| ready(cfg, l, r))
}

#[cfg(not(feature = "dpdk"))]
fn open_dpdk(_cfg: &TestConfig) -> Result<Box<dyn TrialRunner>> {
    anyhow::bail!("{}", xlat_io::IoError::Absent("dpdk"))
}
