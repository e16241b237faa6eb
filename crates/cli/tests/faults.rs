//! Faults in the lab (root only): the DUT disappears, its link goes down and up, it corrupts
//! frames, foreign frames arrive on the tester's ports. Each trial ends within a bounded time
//! in an error, an invalid result or honest counts, never a hang and never a false pass, and
//! the lab can still be removed with `lab down`.

mod common;

use common::*;
use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Wait for `child` at most `limit`; kill it and fail when it takes longer (a hang).
fn wait_bounded(mut child: Child, limit: Duration) -> (ExitStatus, String, String, Duration) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            let (mut out, mut err) = (String::new(), String::new());
            child.stdout.take().map(|mut s| s.read_to_string(&mut out));
            child.stderr.take().map(|mut s| s.read_to_string(&mut err));
            return (status, out, err, start.elapsed());
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("xlatperf did not end within {limit:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn spawn(cmd: &mut Command) -> Child {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn xlatperf")
}

fn trial_cmd(conf: &str, rate: &str, duration: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_xlatperf"));
    c.args([
        "trial",
        "-c",
        conf,
        "--rate",
        rate,
        "--duration",
        duration,
        "--timeout",
        "500",
        "--json",
        "-",
    ]);
    c
}

/// The JSON report of a trial that ended with one, if it did.
fn report(out: &str) -> Option<serde_json::Value> {
    out.lines().rev().find_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
}

/// What a tester says when its port went away or down under it (the kernel's words, or the
/// engine's when it saw the link go).
const PORT_GONE: &[&str] = &["Network is down", "No such device", "link of", "the port took no more"];

/// The trial did not pass: an invalid or lossy result, or an error that names the tester's
/// port and says it went (one of [`PORT_GONE`]).
fn assert_not_a_pass(status: ExitStatus, out: &str, err: &str) {
    if let Some(v) = report(out) {
        let lost: u64 = ["forward", "reverse"].iter().map(|d| v[d]["lost"].as_u64().unwrap_or(0)).sum();
        assert!(v["valid"] == false || lost > 0, "a fault passed as a clean trial: {v}");
    } else {
        assert!(!status.success(), "no report and no failure: {out} {err}");
        let error = err.lines().find(|l| l.starts_with("Error: ")).unwrap_or_default();
        assert!(
            error.contains("xlat-t") && PORT_GONE.iter().any(|c| error.contains(c)),
            "the error does not name the tester's port and say it went ({PORT_GONE:?}): {err}"
        );
    }
}

fn lab_down_cleanly() {
    let o = xlatperf(&["lab", "down"]);
    assert!(o.status.success(), "lab down: {}", String::from_utf8_lossy(&o.stderr));
    let ns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&ns.stdout).contains("xlat-"), "namespaces left");
}

/// 6 s trial + 0.5 s give-up + 0.5 s timeout + 0.5 s margin + start-up and slack.
const BOUND: Duration = Duration::from_secs(14);

/// Start `trial` (built from the lab config's path), delete the DUT's namespace after `after`,
/// and check that the trial ends in bounded time without a pass and that the lab comes down.
/// The trial must have started: an error that it could not (a backend not built in) is not
/// the fault this is about.
fn dut_deleted_mid_trial(trial: impl FnOnce(&str) -> Command, after: Duration) {
    let _serial = lab_lock();
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    let conf = lab_up("router4");
    let _down = LabDown;
    let mut child = spawn(&mut trial(&conf));
    std::thread::sleep(after);
    if let Some(status) = child.try_wait().expect("try_wait") {
        let (_, _, err, _) = wait_bounded(child, BOUND);
        panic!("the trial ended ({status}) before the fault: {err}");
    }
    assert!(Command::new("ip").args(["netns", "del", "xlat-dut"]).status().unwrap().success());
    let (status, out, err, took) = wait_bounded(child, BOUND);
    eprintln!("ended after {took:?} with {status}: {err}");
    assert!(!err.contains("is not built into this xlatperf"), "the trial never ran: {err}");
    assert_not_a_pass(status, &out, &err);
    lab_down_cleanly();
}

#[test]
fn the_dut_namespace_deleted_mid_trial_ends_the_trial_afpacket() {
    dut_deleted_mid_trial(|conf| trial_cmd(conf, "20000", "6"), Duration::from_secs(2));
}

#[cfg(feature = "dpdk")]
#[test]
fn the_dut_namespace_deleted_mid_trial_ends_the_trial_dpdk() {
    let eal =
        r#"["--no-pci","-l","0-1","--vdev","net_af_packet0,iface=xlat-tl,qpairs=2","--vdev","net_af_packet1,iface=xlat-tr,qpairs=2"]"#;
    // The DPDK process runs in the tester's namespace, where its vdevs open the veth ends; EAL
    // takes longer to start, so the namespace goes a second later.
    let dpdk = |conf: &str| {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", "xlat-tester", env!("CARGO_BIN_EXE_xlatperf")])
            .args([
                "trial",
                "-c",
                conf,
                "--rate",
                "20000",
                "--duration",
                "6",
                "--timeout",
                "500",
                "--json",
                "-",
            ])
            .args(["--set", "tester.backend=dpdk", "--set", "tester.left_port=net_af_packet0"])
            .args([
                "--set",
                "tester.right_port=net_af_packet1",
                "--set",
                &format!("tester.eal_args={eal}"),
            ]);
        c
    };
    dut_deleted_mid_trial(dpdk, Duration::from_secs(3));
}

#[test]
fn the_dut_link_down_and_up_mid_trial_is_never_a_pass() {
    let _serial = lab_lock();
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    let conf = lab_up("router4");
    let _down = LabDown;
    let child = spawn(&mut trial_cmd(&conf, "20000", "6"));
    std::thread::sleep(Duration::from_secs(2));
    dut_exec(&["ip", "link", "set", "xlat-dl", "down"]);
    std::thread::sleep(Duration::from_secs(2));
    dut_exec(&["ip", "link", "set", "xlat-dl", "up"]);
    let (status, out, err, took) = wait_bounded(child, BOUND);
    eprintln!("ended after {took:?} with {status}: {err}");
    assert!(!err.contains("is not built into this xlatperf"), "the trial never ran: {err}");
    assert_not_a_pass(status, &out, &err);
    lab_down_cleanly();
}

#[test]
fn frames_the_dut_corrupts_are_not_counted_as_received() {
    let _serial = lab_lock();
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    let conf = lab_up("router4");
    let _down = LabDown;
    // The DUT overwrites one payload byte of every forwarded UDP packet to the right side (23
    // bytes into the UDP header: the low byte of the sequence number) without fixing the
    // checksum: nftables' raw payload statement (the kernel here has no tc pedit).
    let rules = "table ip xlat_corrupt {\n chain c {\n  type filter hook forward priority 0;\n  \
                 ip daddr 198.19.0.0/16 meta l4proto udp @th,184,8 set 0x5a\n }\n}\n";
    let mut nft = Command::new("ip")
        .args(["netns", "exec", "xlat-dut", "nft", "-f", "-"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut nft.stdin.take().unwrap(), rules.as_bytes()).unwrap();
    assert!(nft.wait().unwrap().success());
    let child = spawn(&mut trial_cmd(&conf, "10000", "2"));
    let (status, out, err, _) = wait_bounded(child, Duration::from_secs(10));
    let v = report(&out).unwrap_or_else(|| panic!("{status} {err}"));
    let f = &v["forward"];
    let (sent, received, corrupted) = (
        f["sent"].as_u64().unwrap(),
        f["received"].as_u64().unwrap(),
        f["corrupted"].as_u64().unwrap(),
    );
    // Frames whose byte already was 0x5a (1 in 256) arrive intact; every other one is corrupt.
    assert!(corrupted > sent * 9 / 10, "{v}");
    assert!(received < sent / 50, "{v}");
    assert_eq!(f["unexpected"], 0, "a corrupted frame was taken for another: {v}");
    assert_eq!(received + corrupted, sent, "{v}");
    assert!(v["valid"] == false || f["lost"].as_u64().unwrap() == corrupted, "{v}");
    // The reverse direction is untouched.
    assert_eq!(v["reverse"]["corrupted"], 0, "{v}");
    lab_down_cleanly();
}

#[test]
fn foreign_frames_on_the_tester_ports_are_not_counted() {
    let _serial = lab_lock();
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    let conf = lab_up("router4");
    let _down = LabDown;
    let stop = std::sync::atomic::AtomicBool::new(false);
    let injected = std::sync::atomic::AtomicU64::new(0);
    let v = std::thread::scope(|s| {
        s.spawn(|| foreign_traffic(&stop, &injected));
        // The injector must be running before the trial starts.
        let start = Instant::now();
        while injected.load(std::sync::atomic::Ordering::Relaxed) < 1000 {
            if start.elapsed() > Duration::from_secs(5) {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                panic!("the foreign-frame injector sent only {injected:?} frames in 5 s");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let before = injected.load(std::sync::atomic::Ordering::Relaxed);
        let v = until_valid(|| {
            let child = spawn(&mut trial_cmd(&conf, "10000", "3"));
            let (status, out, err, _) = wait_bounded(child, Duration::from_secs(12));
            report(&out).unwrap_or_else(|| panic!("{status} {err}"))
        });
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        eprintln!(
            "injected {} foreign frames during the trials",
            injected.load(std::sync::atomic::Ordering::Relaxed) - before
        );
        v
    });
    for d in ["forward", "reverse"] {
        let r = &v[d];
        assert_eq!(
            (r["sent"].as_u64(), r["lost"].as_u64(), r["unexpected"].as_u64()),
            (Some(30000), Some(0), Some(0)),
            "{v}"
        );
        assert_eq!(r["received"], 30000, "{v}");
    }
    // The foreign frames were seen (as other or corrupt), not counted as test frames.
    let seen: u64 = ["forward", "reverse"]
        .iter()
        .map(|d| v[d]["other"].as_u64().unwrap() + v[d]["corrupted"].as_u64().unwrap())
        .sum();
    assert!(seen > 100, "{v}");
    lab_down_cleanly();
}

/// From the DUT's two interfaces, until `stop`: plain UDP to the tester, ARP requests for
/// addresses that are not the tester's, and test frames with a wrong checksum.
fn foreign_traffic(stop: &std::sync::atomic::AtomicBool, injected: &std::sync::atomic::AtomicU64) {
    use xlat_io::afpacket::{AfPacketOptions, AfPacketPort};
    use xlat_io::{Port, TxQueue};
    use xlat_wire::frame::{IpPair, TestFrame};
    use xlat_wire::MacAddr;
    let opts = AfPacketOptions {
        netns: Some("xlat-dut".into()),
        ..Default::default()
    };
    let mut ports: Vec<_> = ["xlat-dl", "xlat-dr"]
        .iter()
        .map(|i| {
            let mut p = AfPacketPort::open(i, opts.clone()).expect("open DUT side");
            let mac = p.mac();
            (p.queues().expect("queues").tx, mac)
        })
        .collect();
    let bcast = MacAddr([0xff; 6]);
    // The tester's workers spin on every core at nice -20: at a lower priority this thread
    // would hardly run during the trial. Each wake-up also sends a batch, not three frames.
    // SAFETY: gettid and setpriority have no memory preconditions.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, -20);
    }
    let mut n = 0u64;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        for round in 0..16 {
            let k = round % 2;
            let (tx, mac) = &mut ports[k];
            let (me, tester): (std::net::Ipv4Addr, std::net::Ipv4Addr) = if k == 0 {
                ("198.18.0.1".parse().unwrap(), "198.18.0.2".parse().unwrap())
            } else {
                ("198.19.0.1".parse().unwrap(), "198.19.0.2".parse().unwrap())
            };
            let sent = tx.tx_burst(3, |i, buf| match i {
                0 => {
                    let a = xlat_wire::arp::request(*mac, me, "198.18.7.7".parse().unwrap());
                    xlat_wire::arp::write_frame(buf, bcast, &a).unwrap_or(0)
                }
                _ => {
                    let t = TestFrame {
                        eth_src: *mac,
                        eth_dst: bcast,
                        ip: IpPair::V4 { src: me, dst: tester },
                        sport: 53,
                        dport: 53,
                        frame_size: 100,
                        field: n,
                        tunnel: None,
                    };
                    let len = t.write(buf).map(|l| l.len).unwrap_or(0);
                    if i == 1 {
                        buf[42..50].copy_from_slice(b"NOTATEST"); // plain UDP
                    } else {
                        buf[51] ^= 0xff; // a test frame whose checksum fails
                    }
                    len
                }
            });
            injected.fetch_add(sent.unwrap_or(0) as u64, std::sync::atomic::Ordering::Relaxed);
        }
        n += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
}
