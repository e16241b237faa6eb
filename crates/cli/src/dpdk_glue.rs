//! Opening DPDK ports from the configuration: EAL arguments from `tester.eal_args`, ports by
//! id or device name, and `ring:A` / `ring:B` for a back-to-back `net_ring` pair (the
//! self-test without any network).

use anyhow::{Context, Result};
use xlat_config::TestConfig;
use xlat_io::dpdk::{self, DpdkOptions, DpdkPort};

fn options(cfg: &TestConfig) -> DpdkOptions {
    // Room for the longest frame this configuration may send (IPv6 size, no FCS).
    let max = cfg.trial.frame_size.saturating_sub(xlat_wire::FCS_LEN).max(1514);
    let d = DpdkOptions::default();
    DpdkOptions {
        max_frame_len: max,
        queues: u16::try_from(cfg.tester.queues).unwrap_or(u16::MAX),
        rx_desc: cfg.tester.rx_descriptors.unwrap_or(d.rx_desc),
        tx_desc: cfg.tester.tx_descriptors.unwrap_or(d.tx_desc),
        ..d
    }
}

fn init(cfg: &TestConfig) -> Result<()> {
    dpdk::eal_init(&cfg.tester.eal_args)
        .with_context(|| format!("starting DPDK with EAL arguments {:?} (tester.eal_args)", cfg.tester.eal_args))
}

/// Open one port by id or device name.
pub fn open_one(cfg: &TestConfig, name: &str) -> Result<DpdkPort> {
    init(cfg)?;
    DpdkPort::open(name, &options(cfg)).with_context(|| format!("opening DPDK port {name}"))
}

/// Open both ports and hand them to `ready`.
pub fn open<T>(cfg: &TestConfig, ready: impl FnOnce(DpdkPort, DpdkPort) -> Result<T>) -> Result<T> {
    init(cfg)?;
    let (l, r) = (&cfg.tester.left_port, &cfg.tester.right_port);
    let (l, r) = match (l.strip_prefix("ring:"), r.strip_prefix("ring:")) {
        (Some(a), Some(b)) => dpdk::ring_pair_queues(a, b, 1024, options(cfg).queues).context("creating the net_ring pair")?,
        _ => (l.clone(), r.clone()),
    };
    let lp = DpdkPort::open(&l, &options(cfg)).with_context(|| format!("opening left DPDK port {l}"))?;
    let rp = DpdkPort::open(&r, &options(cfg)).with_context(|| format!("opening right DPDK port {r}"))?;
    ready(lp, rp)
}
