//! Opening the configured backend and running trials on it, behind one object-safe trait so
//! the rest of the CLI does not care which backend it is.

use anyhow::{Context, Result};
use std::time::Duration;
use xlat_config::{Backend, TestConfig};
use xlat_engine::{CpuPlan, Tester, TrialReport, TrialSpec};
use xlat_io::Port;

/// A tester ready to run trials.
pub trait Runner {
    fn run_trial(&mut self, spec: &TrialSpec) -> Result<TrialReport>;
    /// "left-port -> right-port" and the DUT MACs, for the human header.
    fn describe(&self) -> String;
    /// Choose the active directions of the next trials.
    fn set_directions(&mut self, forward: bool, reverse: bool);
}

impl<P: Port> Runner for Tester<P> {
    fn run_trial(&mut self, spec: &TrialSpec) -> Result<TrialReport> {
        Ok(Tester::run_trial(self, spec)?)
    }

    fn set_directions(&mut self, forward: bool, reverse: bool) {
        Tester::set_directions(self, forward, reverse)
    }

    fn describe(&self) -> String {
        let (l, r) = self.port_names();
        let (dl, dr) = self.dut_macs();
        let m = |m: Option<xlat_wire::MacAddr>| m.map(|m| m.to_string()).unwrap_or_else(|| "?".into());
        format!("left {l} (DUT {}), right {r} (DUT {})", m(dl), m(dr))
    }
}

fn cpu_plan(cfg: &TestConfig) -> CpuPlan {
    let c = &cfg.tester.cpus;
    CpuPlan {
        left_send: c.left_send,
        right_recv: c.right_recv,
        right_send: c.right_send,
        left_recv: c.left_recv,
    }
}

/// The adapter that lets the bench procedures drive a [`Runner`].
pub struct BenchRunner(pub Box<dyn Runner>);

impl xlat_bench::TrialRunner for BenchRunner {
    fn run(&mut self, spec: &TrialSpec) -> std::result::Result<TrialReport, xlat_bench::BenchError> {
        self.0.run_trial(spec).map_err(|e| xlat_bench::BenchError::Trial(format!("{e:#}")))
    }

    fn set_directions(&mut self, forward: bool, reverse: bool) -> std::result::Result<(), xlat_bench::BenchError> {
        self.0.set_directions(forward, reverse);
        Ok(())
    }
}

fn ready<P: Port + 'static>(cfg: &TestConfig, left: P, right: P) -> Result<Box<dyn Runner>> {
    let mut setup = cfg.setup.clone();
    if cfg.tester.loopback || cfg.tester.backend == Backend::Mem {
        // The ports are cabled to each other (self-test): each side's "DUT" is the other port.
        setup.left.dut_mac = setup.left.dut_mac.or(Some(right.mac()));
        setup.right.dut_mac = setup.right.dut_mac.or(Some(left.mac()));
    }
    let mut t = Tester::new(setup, left, right, cpu_plan(cfg))?;
    t.prepare(Duration::from_secs(3)).context("resolving the DUT's MAC addresses")?;
    Ok(Box::new(t))
}

/// Open both ports of the configured backend and resolve the DUT.
pub fn open(cfg: &TestConfig) -> Result<Box<dyn Runner>> {
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
        Backend::Dpdk => open_dpdk(cfg),
    }
}

#[cfg(feature = "dpdk")]
fn open_dpdk(cfg: &TestConfig) -> Result<Box<dyn Runner>> {
    crate::dpdk_glue::open(cfg, |l, r| ready(cfg, l, r))
}

#[cfg(not(feature = "dpdk"))]
fn open_dpdk(_cfg: &TestConfig) -> Result<Box<dyn Runner>> {
    anyhow::bail!("{}", xlat_io::IoError::Absent("dpdk"))
}
