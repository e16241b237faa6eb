//! The dpdk-fwd topology's DUT: DPDK's own forwarder, `dpdk-testpmd` (Debian's dpdk package),
//! in MAC mode between two vhost-user ports on the DUT's CPUs, on hugepages. vhost-user is how
//! a DPDK switch or router meets virtual machines and containers (their virtio NICs); testpmd
//! serves both sockets (`net_vhost`), the tester's DPDK ports are `virtio_user` devices (the
//! written configuration's vdevs). MAC mode is a router's layer 2: every frame leaves with the
//! port's MAC as its source and the tester's as its destination, the IP packet untouched.
//!
//! Why not memif: DPDK 22.11's memif server crashed (a segfault in librte_net_memif, in its
//! forwarding lcore) when a tester that had just run a trial disconnected; a lab DUT must
//! survive any number of trials. vhost-user also carries 9,018-byte frames, which memif's
//! 1,518-byte limit in 22.11 refuses.
//!
//! The virtio rings hold [`VIRTIO_QUEUE_SIZE`] descriptors each (the tester's side sizes
//! them), every receive slot with a buffer (`tester.rx_descriptors`: virtio posts only as many
//! as asked), so that the frames coming back while the tester catches up after one of its
//! stalls find room, and the written `tester.max_send_lag_frames` is half of that
//! ([`DPDK_FWD_MAX_SEND_LAG_FRAMES`]): a trial whose sender fell further behind is invalid; within
//! it, a loss is the DUT's.
//!
//! testpmd polls: its CPU is busy all the time whatever it forwards, which every trial's DUT
//! load then says (100 %).

use xlat_config::{Backend, TestConfig};

use crate::placement::Placement;

/// The forwarder.
pub const TESTPMD: &str = "dpdk-testpmd";
/// Its output (EAL's messages, the port statistics every [`STATS_PERIOD_S`] seconds).
pub const TESTPMD_LOG: &str = "/run/xlatperf/testpmd.log";
/// The vhost-user sockets of the left and right ports (testpmd listens, the tester connects).
pub const LEFT_SOCKET: &str = "/run/xlatperf/xlat-vl.sock";
pub const RIGHT_SOCKET: &str = "/run/xlatperf/xlat-vr.sock";
/// The tester's ports: its virtio-user devices' DPDK names.
pub const LEFT_VDEV: &str = "virtio_user0";
pub const RIGHT_VDEV: &str = "virtio_user1";
/// The DUT's MACs: net_vhost gives port k the MAC 56:48:4f:53:54:0k ("VHOST", k), and testpmd
/// has the left port first. The tester's MACs are its virtio-user devices'.
pub const DUT_LEFT_MAC: &str = "56:48:4f:53:54:00";
pub const DUT_RIGHT_MAC: &str = "56:48:4f:53:54:01";
pub const TESTER_LEFT_MAC: &str = "02:00:00:00:01:02";
pub const TESTER_RIGHT_MAC: &str = "02:00:00:00:02:02";
/// Descriptors of each virtio ring (virtio-user's `queue_size`), and the tester's
/// `rx_descriptors`: virtio fills only as many of a receive ring's slots as the port asks for
/// (1,024 by default), so a 2,048-slot ring held 1,024 frames and lost a burst after a stall of
/// 1,240 frames. Filled, 8,192 slots carried 1,000,000 frames/s per direction lossless through
/// stalls of 9 ms (docs/lab.md); the tester's mempool then holds 16,383 mbufs per port, which
/// at 9,018-byte frames is what [`HUGEPAGES_NEEDED`] counts. The transmit side keeps 1,024
/// descriptors: testpmd empties it as it comes.
pub const VIRTIO_QUEUE_SIZE: u16 = 8192;
/// The dpdk-fwd lab's `tester.max_send_lag_frames`: half a virtio ring.
pub const DPDK_FWD_MAX_SEND_LAG_FRAMES: u64 = VIRTIO_QUEUE_SIZE as u64 / 2;
/// The longest frame testpmd takes (a 9,018-byte jumbo frame with its FCS).
pub const MAX_PKT_LEN: u32 = 9018;
/// testpmd's mbufs: its receive rings and bursts in flight (vhost copies into and out of them).
pub const TESTPMD_MBUFS: u32 = 32_768;
/// The free 2 MiB hugepages `lab up dpdk-fwd` asks for: testpmd's pool (about 72 MB) and the
/// tester's two pools of 16,383 mbufs (filling receive rings of [`VIRTIO_QUEUE_SIZE`]), about
/// 155 MB each at 9,018-byte frames.
pub const HUGEPAGES_NEEDED: u64 = 200;
/// Seconds between testpmd's statistics in its log.
pub const STATS_PERIOD_S: u32 = 10;

/// The dpdk-fwd lab's configuration from the one `config_for` builds for a kernel router:
/// the tester on DPDK with its virtio-user ports, the DUT's MACs known (testpmd answers no ARP),
/// the lag bound of the virtio rings, no reset command (testpmd has no switch for one).
pub(crate) fn tester_config(cfg: &mut TestConfig, placement: Option<&Placement>) {
    let t = &mut cfg.tester;
    t.backend = Backend::Dpdk;
    t.left_port = LEFT_VDEV.to_string();
    t.right_port = RIGHT_VDEV.to_string();
    t.netns = None;
    t.eal_args = tester_eal_args(placement.map(|p| p.tester.as_slice()).unwrap_or_default(), t.queues);
    t.max_send_lag_frames = Some(DPDK_FWD_MAX_SEND_LAG_FRAMES);
    t.rx_descriptors = Some(VIRTIO_QUEUE_SIZE);
    for (side, mac) in [(&mut cfg.setup.left, DUT_LEFT_MAC), (&mut cfg.setup.right, DUT_RIGHT_MAC)] {
        side.dut_mac = mac.parse().ok();
        side.dut_ipv4 = None;
        side.dut_ipv6 = None;
    }
    cfg.dut.reset = None;
}

/// The tester's EAL arguments: its workers' CPUs (`tester`), its memory in segments that
/// virtio-user can hand to vhost (one file per segment list: vhost-user takes at most 8
/// regions), its two virtio-user ports with `queues` queue sets each (a traffic and a control
/// transmit queue per set).
pub fn tester_eal_args(tester: &[usize], queues: u32) -> Vec<String> {
    let mut args = vec!["--no-pci".to_string()];
    if !tester.is_empty() {
        args.extend(["-l".to_string(), xlat_trial::load::cpu_list(tester)]);
    }
    args.push("--single-file-segments".to_string());
    let pairs = 2 * queues.max(1);
    for (vdev, socket, mac) in [
        (LEFT_VDEV, LEFT_SOCKET, TESTER_LEFT_MAC),
        (RIGHT_VDEV, RIGHT_SOCKET, TESTER_RIGHT_MAC),
    ] {
        args.extend([
            "--vdev".to_string(),
            format!("{vdev},path={socket},queues={pairs},queue_size={VIRTIO_QUEUE_SIZE},mac={mac}"),
        ]);
    }
    args
}

/// testpmd's command line: EAL's main lcore and one forwarding lcore per DUT CPU, all on the
/// DUT's CPUs; both vhost-user servers; MAC forwarding to the tester's MACs; `queues` queue sets of
/// the tester's (each with a control transmit queue, so 2 x queues rings each way).
pub fn command(dut: &[usize], queues: u32) -> Vec<String> {
    let first = dut.first().copied().unwrap_or(0);
    let mut lcores = vec![format!("0@{first}")];
    lcores.extend(dut.iter().enumerate().map(|(i, c)| format!("{}@{c}", i + 1)));
    let rings = (2 * queues.max(1)).to_string();
    let mut args = vec![
        "--in-memory".to_string(),
        "--no-pci".to_string(),
        "--lcores".to_string(),
        lcores.join(","),
        "--main-lcore".to_string(),
        "0".to_string(),
    ];
    for (i, socket) in [(0, LEFT_SOCKET), (1, RIGHT_SOCKET)] {
        args.extend(["--vdev".to_string(), format!("net_vhost{i},iface={socket},queues={rings}")]);
    }
    args.push("--".to_string());
    for a in [
        "--forward-mode=mac".to_string(),
        format!("--eth-peer=0,{TESTER_LEFT_MAC}"),
        format!("--eth-peer=1,{TESTER_RIGHT_MAC}"),
        format!("--nb-cores={}", dut.len().max(1)),
        format!("--rxq={rings}"),
        format!("--txq={rings}"),
        format!("--total-num-mbufs={TESTPMD_MBUFS}"),
        format!("--max-pkt-len={MAX_PKT_LEN}"),
        "--auto-start".to_string(),
        // Without a terminal testpmd waits for a key on stdin and ends at end of file; with a
        // statistics period it loops until a signal instead.
        format!("--stats-period={STATS_PERIOD_S}"),
    ] {
        args.push(a);
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn testpmd_forwards_on_the_dut_cpus_to_the_tester_macs() {
        let c = command(&[1], 1).join(" ");
        assert!(c.starts_with("--in-memory --no-pci --lcores 0@1,1@1 --main-lcore 0 "), "{c}");
        assert!(c.contains("--vdev net_vhost0,iface=/run/xlatperf/xlat-vl.sock,queues=2 --vdev net_vhost1,iface=/run/xlatperf/xlat-vr.sock,queues=2 --"), "{c}");
        assert!(
            c.contains(
                " -- --forward-mode=mac --eth-peer=0,02:00:00:00:01:02 --eth-peer=1,02:00:00:00:02:02 --nb-cores=1 --rxq=2 --txq=2 "
            ),
            "{c}"
        );
        assert!(c.contains(" --max-pkt-len=9018 "), "{c}");
        let two = command(&[2, 3], 2).join(" ");
        assert!(
            two.contains("--lcores 0@2,1@2,2@3 ") && two.contains("--nb-cores=2 --rxq=4 --txq=4"),
            "{two}"
        );
    }

    #[test]
    fn the_tester_sizes_the_rings_and_shares_its_memory_with_vhost() {
        let a = tester_eal_args(&[0], 1);
        assert_eq!(a[..4], ["--no-pci", "-l", "0", "--single-file-segments"]);
        assert_eq!(
            a[5],
            "virtio_user0,path=/run/xlatperf/xlat-vl.sock,queues=2,queue_size=8192,mac=02:00:00:00:01:02"
        );
        assert!(a[7].starts_with("virtio_user1,path=/run/xlatperf/xlat-vr.sock,queues=2,"));
        assert!(tester_eal_args(&[0], 3)[5].contains(",queues=6,"));
        assert_eq!(DPDK_FWD_MAX_SEND_LAG_FRAMES, 4096);
    }
}
