//! Lab tests of the `afxdp` backend: the trials of lab_trial.rs with AF_XDP ports, the same
//! counts as afpacket at the same rate, and no XDP program left behind after a kill -9.
//! They need root (CI runs as root); without it they skip, which fails under CI=true.
//!
//! Run them under the lab's lock, like every lab test on a shared machine:
//! `flock /tmp/xlat-lab.lock cargo test --release -p xlatperf --test lab_afxdp`.

mod common;

use common::{dut_exec, lab_lock, lab_up_with, ok, skip_unless_root, until_valid, xlatperf, LAB_TOOLS};
use serde_json::Value;
use std::process::{Command, Stdio};
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

/// A lab for one test: up with `--backend afxdp` on creation, down on drop (also when the
/// test fails).
struct Lab {
    config: String,
    _g: MutexGuard<'static, ()>,
}

impl Lab {
    fn up(topology: &str) -> Lab {
        let g = lab_lock();
        // lab up --replace would tear down someone else's lab on this shared machine (who then
        // holds /tmp/xlat-lab.lock): refuse instead.
        let netns = Command::new("ip").args(["netns", "list"]).output().expect("ip netns list");
        let existing = String::from_utf8_lossy(&netns.stdout).to_string();
        assert!(
            !existing.contains("xlat-tester") && !existing.contains("xlat-dut"),
            "a lab is already up; not replacing it (run this under `flock /tmp/xlat-lab.lock`): {existing}"
        );
        let config = lab_up_with(topology, &["--backend", "afxdp"]);
        let lab = Lab { config, _g: g };
        let text = std::fs::read_to_string(&lab.config).expect("the lab's config");
        assert!(text.contains("backend = \"afxdp\""), "{text}");
        lab
    }

    fn trial(&self, rate: u64, secs: u64, extra: &[&str]) -> Value {
        let (r, s) = (rate.to_string(), secs.to_string());
        let mut args = vec![
            "trial",
            "-c",
            &self.config,
            "--rate",
            &r,
            "--duration",
            &s,
            "--timeout",
            "500",
            "--json",
            "-",
        ];
        args.extend_from_slice(extra);
        let out = ok(&args);
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = xlatperf(&["lab", "down"]);
    }
}

fn counts(v: &Value, dir: &str) -> (u64, u64, u64, u64) {
    let d = &v[dir];
    let g = |k: &str| d[k].as_u64().unwrap_or_else(|| panic!("{dir}.{k} missing in {v}"));
    (g("sent"), g("received"), g("lost"), g("duplicates"))
}

/// `ip -d link show` of the tester's ports ("" when the namespace is gone).
fn tester_links() -> String {
    let o = Command::new("ip")
        .args(["-n", "xlat-tester", "-d", "link", "show"])
        .stderr(Stdio::null())
        .output()
        .expect("ip link show");
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// Some tester port has an XDP program attached.
fn xdp_attached(links: &str) -> bool {
    links.contains("prog/xdp") || links.lines().any(|l| l.contains(" xdp"))
}

/// At `rate`, afxdp and afpacket both pass every frame through the lab's DUT, in both
/// directions, with the same counts; for the routers, forwarding off then loses them all, a
/// valid measurement.
fn same_as_afpacket(topology: &str, rate: u64, secs: u64) {
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    let lab = Lab::up(topology);
    let xdp = until_valid(|| lab.trial(rate, secs, &[]));
    let afp = until_valid(|| lab.trial(rate, secs, &["--set", "tester.backend=afpacket"]));
    for dir in ["forward", "reverse"] {
        let x = counts(&xdp, dir);
        let p = counts(&afp, dir);
        assert_eq!(x, (rate * secs, rate * secs, 0, 0), "afxdp {dir}: {xdp}");
        assert_eq!(x, p, "{dir}: afxdp {xdp}\nafpacket {afp}");
        for k in ["tester_tx_dropped", "tester_rx_dropped", "corrupted", "unexpected"] {
            assert_eq!(xdp[dir][k], 0, "afxdp {dir}.{k}: {xdp}");
        }
    }
    if topology == "siit" {
        assert!(!xdp_attached(&tester_links()), "{}", tester_links());
        return;
    }
    // The tester answered the DUT's ARP/NDP itself from the AF_XDP socket's frames.
    let neigh = dut_exec(&["ip", "neigh", "show"]);
    assert!(!neigh.contains("PERMANENT"), "{neigh}");
    let expect = if topology == "router4" { "198.19.0.2" } else { "2001:2:0:8000::2" };
    assert!(neigh.contains(expect), "the DUT resolved the tester: {neigh}");

    let key = if topology == "router4" {
        "net.ipv4.ip_forward=0"
    } else {
        "net.ipv6.conf.all.forwarding=0"
    };
    dut_exec(&["sysctl", "-qw", key]);
    let v = until_valid(|| lab.trial(rate, 2, &[]));
    for dir in ["forward", "reverse"] {
        let (sent, received, lost, _) = counts(&v, dir);
        assert_eq!((sent, received, lost), (2 * rate, 0, 2 * rate), "{dir}: {v}");
    }
    // Nothing stays attached after the trials.
    assert!(!xdp_attached(&tester_links()), "{}", tester_links());
}

#[test]
fn afxdp_router4_lossless_with_the_counts_of_afpacket() {
    same_as_afpacket("router4", 20_000, 5);
}

#[test]
fn afxdp_router6_lossless_with_the_counts_of_afpacket() {
    same_as_afpacket("router6", 20_000, 5);
}

/// TAYGA (stateless NAT64) as the DUT: IPv6 on the left, IPv4 on the right.
#[test]
fn afxdp_siit_lossless_with_the_counts_of_afpacket() {
    same_as_afpacket("siit", 10_000, 3);
}

/// kill -9 of xlatperf in the middle of an afxdp trial: the kernel detaches the program with
/// the process's BPF link; `lab down` then finds nothing attached and removes the lab.
#[test]
fn afxdp_kill_9_mid_trial_leaves_no_xdp_program() {
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    let lab = Lab::up("router4");
    let child = Command::new(env!("CARGO_BIN_EXE_xlatperf"))
        .args(["trial", "-c", &lab.config, "--rate", "20000", "--duration", "20"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start xlatperf");
    /// Kills and reaps the child also when the test fails.
    struct Child(std::process::Child);
    impl Drop for Child {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Child(child);
    // The program is attached once the ports are open; the trial then runs for 20 s.
    let deadline = Instant::now() + Duration::from_secs(15);
    while !xdp_attached(&tester_links()) {
        assert!(child.0.try_wait().expect("try_wait").is_none(), "xlatperf ended before the kill");
        assert!(Instant::now() < deadline, "no XDP program attached: {}", tester_links());
        std::thread::sleep(Duration::from_millis(50));
    }
    let links = tester_links();
    assert!(links.contains("xdp"), "{links}");
    std::thread::sleep(Duration::from_secs(2)); // in the middle of the trial
    assert!(child.0.try_wait().expect("try_wait").is_none(), "xlatperf ended before the kill");
    child.0.kill().expect("kill -9"); // SIGKILL, to our own child by its pid
    let status = child.0.wait().expect("wait");
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(libc::SIGKILL));
    // The BPF link went with the process.
    let deadline = Instant::now() + Duration::from_secs(5);
    while xdp_attached(&tester_links()) {
        assert!(Instant::now() < deadline, "XDP still attached after kill -9: {}", tester_links());
        std::thread::sleep(Duration::from_millis(50));
    }
    let down = ok(&["lab", "down"]);
    assert!(down.contains("xlat-tester"), "{down}");
    assert!(!down.contains("XDP programs"), "nothing was left to detach: {down}");
    assert!(!xdp_attached(&tester_links()), "{}", tester_links());
    let all = Command::new("ip").args(["-d", "link", "show"]).output().expect("ip link");
    let all = String::from_utf8_lossy(&all.stdout).to_string();
    assert!(!all.lines().any(|l| l.contains("xlat-") && l.contains("xdp")), "{all}");
    drop(lab);
}
