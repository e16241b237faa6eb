//! Lab tests of the `afxdp` backend: the trials of lab_trial.rs with AF_XDP ports, the same
//! counts as afpacket at the same rate, and no XDP program left behind after a kill -9.
//! They need root (CI runs as root); without it they skip, which fails under CI=true.
//!
//! Run them under the lab's lock, like every lab test on a shared machine:
//! `flock /tmp/xlat-lab.lock cargo test --release -p xlatperf --test lab_afxdp`.

mod common;

use common::{dut_exec, ok, skip_unless_root, until_valid, TrialLab, LAB_TOOLS};
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A lab for one test: up with `--backend afxdp` on creation, down on drop (also when the
/// test fails).
struct Lab(TrialLab);

impl Lab {
    fn up(topology: &str) -> Lab {
        // lab up --replace would tear down someone else's lab on this shared machine (who then
        // holds /tmp/xlat-lab.lock): refuse instead.
        let netns = Command::new("ip").args(["netns", "list"]).output().expect("ip netns list");
        let existing = String::from_utf8_lossy(&netns.stdout).to_string();
        assert!(
            !existing.contains("xlat-tester") && !existing.contains("xlat-dut"),
            "a lab is already up; not replacing it (run this under `flock /tmp/xlat-lab.lock`): {existing}"
        );
        let lab = Lab(TrialLab::up(topology, &["--backend", "afxdp"]));
        let text = std::fs::read_to_string(&lab.0.config).expect("the lab's config");
        assert!(text.contains("backend = \"afxdp\""), "{text}");
        lab
    }

    fn trial(&self, rate: u64, secs: u64, extra: &[&str]) -> Value {
        self.0.trial(rate, secs, extra)
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
        .args(["trial", "-c", &lab.0.config, "--rate", "20000", "--duration", "20"])
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

/// Attach an XDP_PASS program in generic mode to `dev` in namespace `ns` the old way (netlink,
/// no BPF link): it stays attached after this process closes its descriptor, as a program
/// some other tool left behind would. Raw system calls, so that the test needs no libbpf.
fn attach_leftover_xdp(ns: &str, dev: &str) -> Result<(), String> {
    let (ns, dev) = (ns.to_string(), dev.to_string());
    std::thread::spawn(move || {
        use std::os::fd::AsRawFd;
        let nsf = std::fs::File::open(format!("/run/netns/{ns}")).map_err(|e| e.to_string())?;
        // SAFETY: setns on this short-lived thread only.
        if unsafe { libc::setns(nsf.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            return Err(format!("setns: {}", std::io::Error::last_os_error()));
        }
        let name = std::ffi::CString::new(dev).map_err(|e| e.to_string())?;
        // SAFETY: a valid C string.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) } as i32;
        if ifindex == 0 {
            return Err("no such interface".into());
        }
        // r0 = XDP_PASS; exit
        let insns: [u64; 2] = [
            u64::from_le_bytes([0xb7, 0, 0, 0, 2, 0, 0, 0]),
            u64::from_le_bytes([0x95, 0, 0, 0, 0, 0, 0, 0]),
        ];
        let license = b"GPL\0";
        // bpf_attr for BPF_PROG_LOAD: prog_type (XDP), insn_cnt, insns, license.
        let mut attr = [0u64; 16];
        attr[0] = 6 | (2u64 << 32);
        attr[1] = insns.as_ptr() as u64;
        attr[2] = license.as_ptr() as u64;
        // SAFETY: attr is a zero-padded bpf_attr; insns and license outlive the call.
        let prog = unsafe { libc::syscall(libc::SYS_bpf, 5, attr.as_mut_ptr(), std::mem::size_of_val(&attr) as u32) };
        if prog < 0 {
            return Err(format!("BPF_PROG_LOAD: {}", std::io::Error::last_os_error()));
        }
        // RTM_SETLINK: ifinfomsg, then IFLA_XDP (nested) { IFLA_XDP_FD, IFLA_XDP_FLAGS = SKB_MODE }.
        let mut m: Vec<u8> = Vec::new();
        m.extend_from_slice(&52u32.to_ne_bytes());
        m.extend_from_slice(&19u16.to_ne_bytes()); // RTM_SETLINK
        m.extend_from_slice(&(1u16 | 4).to_ne_bytes()); // NLM_F_REQUEST | NLM_F_ACK
        m.extend_from_slice(&[0; 8]); // seq, pid
        m.extend_from_slice(&[0, 0, 0, 0]); // family, pad, type
        m.extend_from_slice(&ifindex.to_ne_bytes());
        m.extend_from_slice(&[0; 8]); // flags, change
        m.extend_from_slice(&20u16.to_ne_bytes());
        m.extend_from_slice(&(43u16 | 0x8000).to_ne_bytes()); // IFLA_XDP | NLA_F_NESTED
        m.extend_from_slice(&8u16.to_ne_bytes());
        m.extend_from_slice(&1u16.to_ne_bytes()); // IFLA_XDP_FD
        m.extend_from_slice(&(prog as i32).to_ne_bytes());
        m.extend_from_slice(&8u16.to_ne_bytes());
        m.extend_from_slice(&3u16.to_ne_bytes()); // IFLA_XDP_FLAGS
        m.extend_from_slice(&2u32.to_ne_bytes()); // XDP_FLAGS_SKB_MODE
        assert_eq!(m.len(), 52);
        // SAFETY: plain socket/send/recv calls on buffers we own; every descriptor is closed.
        unsafe {
            let s = libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, libc::NETLINK_ROUTE);
            if s < 0 {
                libc::close(prog as i32);
                return Err("netlink socket".into());
            }
            let tv = libc::timeval { tv_sec: 5, tv_usec: 0 };
            libc::setsockopt(
                s,
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                &tv as *const _ as *const libc::c_void,
                std::mem::size_of::<libc::timeval>() as u32,
            );
            let sent = libc::send(s, m.as_ptr() as *const libc::c_void, m.len(), 0);
            let mut ack = [0u8; 512];
            let got = libc::recv(s, ack.as_mut_ptr() as *mut libc::c_void, ack.len(), 0);
            libc::close(s);
            libc::close(prog as i32);
            if sent != 52 || got < 20 {
                return Err(format!("netlink send {sent} recv {got}"));
            }
            let err = i32::from_ne_bytes([ack[16], ack[17], ack[18], ack[19]]);
            if err != 0 {
                return Err(format!("RTM_SETLINK IFLA_XDP: {}", std::io::Error::from_raw_os_error(-err)));
            }
        }
        Ok(())
    })
    .join()
    .unwrap_or_else(|_| Err("thread panicked".into()))
}

/// A program on a tester port that no process holds (attached by some other tool): `lab down`
/// detaches it and says so.
#[test]
fn lab_down_detaches_an_xdp_program_left_on_a_tester_port() {
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    let lab = Lab::up("router4");
    attach_leftover_xdp("xlat-tester", "xlat-tl").expect("attach");
    assert!(xdp_attached(&tester_links()), "{}", tester_links());
    let down = ok(&["lab", "down"]);
    eprintln!("{down}");
    assert!(down.contains("XDP programs: xlat-tl"), "{down}");
    assert!(!xdp_attached(&tester_links()), "{}", tester_links());
    drop(lab);
}
