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
//!
//! Started with its pid recorded before anything else can fail; `down` finds it by that pid,
//! or after a crash as the testpmd serving the lab's socket.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use xlat_config::{Backend, TestConfig};

use super::kind::{Down, DutKind};
use crate::error::LabError;
use crate::names::{DUT_LEFT_MAC, DUT_RIGHT_MAC, LEFT_SOCKET, RIGHT_SOCKET, TESTPMD_LOG};
use crate::placement::Placement;
use crate::process::process_is;
use crate::report::UpOptions;
use crate::state::{self, LabState, RUN_DIR};
use crate::topologies::Topology;

/// dpdk-fwd's DUT.
pub(crate) struct Testpmd;

impl DutKind for Testpmd {
    fn name(&self) -> &'static str {
        "testpmd"
    }

    fn tools(&self) -> &'static [&'static str] {
        &[TESTPMD]
    }

    fn check(&self, t: Topology, opts: &UpOptions) -> Result<(), LabError> {
        if let Some(b) = opts.backend.filter(|b| *b != Backend::Dpdk) {
            return Err(LabError::InvalidInput(format!(
                "{t}: the tester's ports are DPDK virtio-user ports; backend {} cannot open them",
                b.name()
            )));
        }
        if opts.no_steering {
            return Err(LabError::InvalidInput(format!(
                "{t}: --no-steering is for the kernel DUTs; testpmd polls its own CPU whatever the steering"
            )));
        }
        Ok(())
    }

    /// No namespace, no veth: the DUT is a DPDK process on its CPUs, the tester's ports its
    /// virtio-user peers (vhost-user).
    fn cabled(&self) -> bool {
        false
    }

    fn build(&self, t: Topology, st: &mut LabState, opts: &UpOptions) -> Result<(), LabError> {
        let placement = st.placement.clone().ok_or_else(|| {
            LabError::InvalidInput(format!(
                "{t}: testpmd polls a CPU of its own and the tester needs another; this process may use one"
            ))
        })?;
        start(st, &placement, opts.queues.unwrap_or(1))
    }

    /// The recorded pid, and (after a crash before it was recorded) any testpmd serving the
    /// lab's vhost-user socket.
    fn stop(&self, down: &mut Down<'_>) {
        let mut pids: Vec<u32> = down.state.iter().filter_map(|s| s.dut_pid).collect();
        for pid in strays() {
            if !pids.contains(&pid) {
                pids.push(pid);
            }
        }
        for pid in pids {
            down.stop_process(pid, TESTPMD);
        }
    }

    fn files(&self) -> &'static [&'static str] {
        &[TESTPMD_LOG, LEFT_SOCKET, RIGHT_SOCKET]
    }

    fn tester_ports(&self) -> (&'static str, &'static str) {
        (LEFT_VDEV, RIGHT_VDEV)
    }

    fn tester_config(&self, _t: Topology, cfg: &mut TestConfig, placement: Option<&Placement>) {
        tester_config(cfg, placement);
    }

    fn on_dut_cpus(&self, _t: Topology) -> String {
        "dpdk-testpmd (its lcores pinned by EAL)".to_string()
    }
}

/// The forwarder.
pub const TESTPMD: &str = "dpdk-testpmd";
/// The tester's ports: its virtio-user devices' DPDK names.
pub const LEFT_VDEV: &str = "virtio_user0";
pub const RIGHT_VDEV: &str = "virtio_user1";
/// The tester's MACs: its virtio-user devices' (the DUT's: names.rs).
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
fn tester_config(cfg: &mut TestConfig, placement: Option<&Placement>) {
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

/// Free hugepages in /proc/meminfo's `text` (2 MiB pages on these hosts).
fn free_hugepages(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("HugePages_Free:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Start testpmd on the DUT's CPUs, its pid in `st` before anything else can fail, and wait
/// until both its sockets listen.
pub(crate) fn start(st: &mut LabState, placement: &Placement, queues: u32) -> Result<(), LabError> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").map_err(|e| LabError::io("/proc/meminfo", e))?;
    let free = free_hugepages(&meminfo).unwrap_or(0);
    if free < HUGEPAGES_NEEDED {
        return Err(LabError::InvalidInput(format!(
            "dpdk-fwd needs {HUGEPAGES_NEEDED} free hugepages (testpmd, the tester and their virtio rings) and this host has {free} \
             (/proc/meminfo): reserve them as root with scripts/setup.sh (or `echo 512 > /proc/sys/vm/nr_hugepages` and \
             hugetlbfs mounted on /dev/hugepages)"
        )));
    }
    std::fs::create_dir_all(RUN_DIR).map_err(|e| LabError::io(RUN_DIR, e))?;
    for f in [TESTPMD_LOG, LEFT_SOCKET, RIGHT_SOCKET] {
        st.files.push(PathBuf::from(f));
        state::remove_file_if_exists(std::path::Path::new(f))?;
    }
    state::write(st)?;
    let log = std::fs::File::create(TESTPMD_LOG).map_err(|e| LabError::io(TESTPMD_LOG, e))?;
    let err = log.try_clone().map_err(|e| LabError::io(TESTPMD_LOG, e))?;
    let args = command(&placement.dut, queues);
    let mut cmd = Command::new(TESTPMD);
    cmd.args(&args).stdin(Stdio::null()).stdout(log).stderr(err);
    // Its own session: `lab down` ends it by its pid, a Ctrl-C at the terminal does not.
    crate::cmd::detach(&mut cmd);
    let child = cmd.spawn().map_err(|source| LabError::Spawn {
        command: TESTPMD.to_string(),
        source,
    })?;
    let pid = child.id();
    // Not waited for: it outlives `lab up` (a detached daemon, like TAYGA).
    drop(child);
    st.dut_pid = Some(pid);
    state::write(st)?;

    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let log = std::fs::read_to_string(TESTPMD_LOG).unwrap_or_default();
        if !process_is(pid, TESTPMD) {
            return Err(LabError::Output {
                command: crate::cmd::display(TESTPMD, &args.iter().map(String::as_str).collect::<Vec<_>>()),
                detail: format!("exited at start; the end of {TESTPMD_LOG}:\n{}", tail(&log, 8)),
            });
        }
        let listening = [LEFT_SOCKET, RIGHT_SOCKET].iter().all(|s| std::path::Path::new(s).exists());
        if listening && (log.contains("Press enter to exit") || log.contains("Port statistics")) {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(LabError::Output {
                command: TESTPMD.to_string(),
                detail: format!("not forwarding after 20 s; the end of {TESTPMD_LOG}:\n{}", tail(&log, 8)),
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The last `n` lines of `text`.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// testpmd processes the lab started (a vhost-user server on its left socket) that no state file
/// names: after a crash between the start and the state's write.
pub(crate) fn strays() -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| process_is(pid, TESTPMD))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| {
                    c.split(|&b| b == 0)
                        .any(|a| a.windows(LEFT_SOCKET.len()).any(|w| w == LEFT_SOCKET.as_bytes()))
                })
                .unwrap_or(false)
        })
        .collect()
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

    #[test]
    fn free_hugepages_are_read_from_meminfo() {
        assert_eq!(free_hugepages("HugePages_Total:     512\nHugePages_Free:      486\n"), Some(486));
        assert_eq!(free_hugepages("MemTotal: 1 kB\n"), None);
    }
}
