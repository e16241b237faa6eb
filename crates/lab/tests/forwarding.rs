//! End-to-end: frames sent on a tester port go through the DUT of each topology and come out on
//! the other port, with the DUT resolving the tester's addresses by ARP/NDP (answered here, as
//! xlatperf does). Needs root; serialised; the lab is torn down also when a test fails.

mod common;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use common::packet::{encap6, expect_udp, mac_of, udp4, udp6, udp6_sum, v4_sums_ok, PacketSocket};
use common::{cleanup_guard, serial};
use xlat_lab::*;

const WAIT: Duration = Duration::from_secs(3);

/// Return from the test unless it runs as root with the lab's tools and `$tool`s (see
/// common::skip_unless_root).
macro_rules! need_root {
    ($($tool:literal),*) => {
        if common::skip_unless_root(&["ip", "nft", "sysctl", "kill", $($tool),*]) {
            return;
        }
    };
}

fn v4(s: &str) -> Ipv4Addr {
    s.split('/').next().unwrap().parse().unwrap()
}

fn v6(s: &str) -> Ipv6Addr {
    s.split('/').next().unwrap().parse().unwrap()
}

struct Ports {
    left: PacketSocket,
    right: PacketSocket,
    dut_left: [u8; 6],
    dut_right: [u8; 6],
}

fn ports() -> Ports {
    let p = Ports {
        left: PacketSocket::open(TESTER_NS, LEFT_PORT),
        right: PacketSocket::open(TESTER_NS, RIGHT_PORT),
        dut_left: mac_of(DUT_NS, DUT_LEFT),
        dut_right: mac_of(DUT_NS, DUT_RIGHT),
    };
    p.left.drain();
    p.right.drain();
    p
}

fn has_neighbour(iface: &str, ip: IpAddr, mac: [u8; 6]) -> bool {
    let mac = mac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":");
    let list = dut_neighbours(iface).unwrap();
    list.iter()
        .any(|(a, m, state)| *a == ip && *m == mac && !state.contains("PERMANENT"))
}

#[test]
fn router4_forwards_until_forwarding_is_off() {
    need_root!();
    let _serial = serial();
    let _guard = cleanup_guard();
    up(Topology::ROUTER4, &UpOptions::default()).unwrap();
    let p = ports();
    let (src, dst) = (v4(TESTER_LEFT_IPV4), v4(TESTER_RIGHT_IPV4));

    p.left.send(&udp4(p.dut_left, p.left.mac, src, dst, 1000, 2000, 1));
    let u = expect_udp(&p.right, Some(dst), None, WAIT).expect("router4 did not forward");
    assert_eq!(
        (u.src, u.dst, u.sport, u.dport, u.seq, u.ttl),
        (src.into(), dst.into(), 1000, 2000, 1, 63)
    );
    assert_eq!(u.dst_mac, p.right.mac);
    assert!(has_neighbour(DUT_RIGHT, dst.into(), p.right.mac), "{:?}", dut_neighbours(DUT_RIGHT));
    assert!(status().unwrap().link(DUT_RIGHT).unwrap().neighbours.unwrap() >= 1);

    // Reverse direction too.
    p.right.send(&udp4(p.dut_right, p.right.mac, dst, src, 3000, 4000, 2));
    let u = expect_udp(&p.left, Some(src), None, WAIT).expect("router4 did not forward right to left");
    assert_eq!((u.dst, u.seq), (src.into(), 2));

    set_forwarding(false).unwrap();
    p.left.send(&udp4(p.dut_left, p.left.mac, src, dst, 1000, 2000, 3));
    assert_eq!(
        expect_udp(&p.right, Some(dst), None, Duration::from_millis(500)),
        None,
        "forwarded while off"
    );
    set_forwarding(true).unwrap();
    p.left.send(&udp4(p.dut_left, p.left.mac, src, dst, 1000, 2000, 4));
    assert_eq!(expect_udp(&p.right, Some(dst), None, WAIT).map(|u| u.seq), Some(4));
}

#[test]
fn router6_forwards() {
    need_root!();
    let _serial = serial();
    let _guard = cleanup_guard();
    up(Topology::ROUTER6, &UpOptions::default()).unwrap();
    let p = ports();
    let (src, dst) = (v6(TESTER_LEFT_IPV6), v6(TESTER_RIGHT_IPV6));

    p.left.send(&udp6(p.dut_left, p.left.mac, src, dst, 1000, 2000, 1));
    let u = expect_udp(&p.right, None, Some(dst), WAIT).expect("router6 did not forward");
    assert_eq!(
        (u.src, u.dst, u.sport, u.dport, u.seq, u.ttl),
        (src.into(), dst.into(), 1000, 2000, 1, 63)
    );
    assert!(has_neighbour(DUT_RIGHT, dst.into(), p.right.mac), "{:?}", dut_neighbours(DUT_RIGHT));

    p.right.send(&udp6(p.dut_right, p.right.mac, dst, src, 3000, 4000, 2));
    assert_eq!(expect_udp(&p.left, None, Some(src), WAIT).map(|u| u.seq), Some(2));

    set_forwarding(false).unwrap();
    p.left.send(&udp6(p.dut_left, p.left.mac, src, dst, 1000, 2000, 3));
    assert_eq!(
        expect_udp(&p.right, None, Some(dst), Duration::from_millis(500)),
        None,
        "forwarded while off"
    );
}

#[test]
fn siit_translates_both_ways() {
    need_root!("tayga");
    let _serial = serial();
    let _guard = cleanup_guard();
    let info = up(Topology::SIIT, &UpOptions::default()).unwrap();
    let st = status().unwrap();
    let (pid, alive) = st.tayga.expect("tayga pid recorded");
    assert!(alive, "{st}");
    assert!(st.to_string().contains(&format!("tayga: pid {pid} running")));

    let p = ports();
    let left6 = v6(TESTER_LEFT_IPV6);
    let left4_virt = v4(SIIT_LEFT_IPV4_VIRT);
    let right4 = v4(TESTER_RIGHT_IPV4);
    let right6_virt = v6(RIGHT_IPV6_VIRT);
    let cfg = xlat_config::load(&info.config_path, &[]).unwrap();
    assert_eq!(
        (cfg.setup.left.ipv4_virt, cfg.setup.right.ipv6_virt),
        (Some(left4_virt), Some(right6_virt)),
        "{}",
        info.config_path.display()
    );

    // Forward: IPv6 in on the left, IPv4 out on the right.
    p.left.send(&udp6(p.dut_left, p.left.mac, left6, right6_virt, 1000, 2000, 1));
    let u = expect_udp(&p.right, Some(right4), None, WAIT).expect("siit did not translate 6 -> 4");
    assert_eq!(
        (u.src, u.dst, u.sport, u.dport, u.seq),
        (left4_virt.into(), right4.into(), 1000, 2000, 1)
    );

    // Reverse: IPv4 in on the right, IPv6 out on the left.
    p.right.send(&udp4(p.dut_right, p.right.mac, right4, left4_virt, 2000, 1000, 2));
    let u = expect_udp(&p.left, None, Some(left6), WAIT).expect("siit did not translate 4 -> 6");
    assert_eq!(
        (u.src, u.dst, u.sport, u.dport, u.seq),
        (right6_virt.into(), left6.into(), 2000, 1000, 2)
    );

    drop(p);
    let report = down().unwrap();
    assert_eq!(report.killed, vec![pid]);
    assert!(!running(pid), "tayga {pid} still runs");
}

/// TAYGA, a daemon, keeps none of its caller's descriptors beyond the standard three: a
/// script that held the lab lock (`exec 9>lock; flock 9; xlatperf lab up nat64`) found it held
/// by TAYGA after the script had ended, until `lab down`.
#[test]
fn tayga_keeps_no_descriptor_of_the_caller() {
    need_root!("tayga");
    let _serial = serial();
    let _guard = cleanup_guard();
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array. Flags 0: not close-on-exec, as a
    // shell's descriptors are.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), 0) }, 0);
    let ours = std::fs::read_link(format!("/proc/self/fd/{}", fds[1])).unwrap();
    let result = up(Topology::SIIT, &UpOptions::default()).map(|_| status());
    let theirs: Vec<_> = match &result {
        Ok(Ok(st)) => {
            let (pid, _) = st.tayga.expect("tayga pid recorded");
            std::fs::read_dir(format!("/proc/{pid}/fd"))
                .unwrap()
                .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .collect()
        }
        _ => Vec::new(),
    };
    // SAFETY: closing the two descriptors pipe2 made, once.
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    down().unwrap();
    result.unwrap().unwrap();
    assert!(theirs.len() >= 3, "tayga's descriptors not read: {theirs:?}");
    assert!(!theirs.contains(&ours), "tayga holds our {ours:?}: {theirs:?}");
}

/// Is `pid` a live process (not gone, not a zombie waiting for its new parent to reap it)?
fn running(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit_once(')')
        .map(|(_, rest)| rest.trim_start())
        .is_some_and(|rest| !rest.starts_with('Z') && !rest.starts_with('X'))
}

/// After a `down` without the state file: put back the host-wide sysctls `up` had raised, as
/// `down` would have with it.
fn restore_sysctls(state: LabState) {
    for s in state.saved_sysctls {
        let out = std::process::Command::new("sysctl")
            .args(["-q", "-w", &format!("{}={}", s.key, s.original)])
            .status()
            .unwrap();
        assert!(out.success());
    }
}

#[test]
fn siit_down_finds_tayga_without_state_file() {
    need_root!("tayga");
    let _serial = serial();
    let _guard = cleanup_guard();
    up(Topology::SIIT, &UpOptions::default()).unwrap();
    let state: LabState = serde_json::from_str(&std::fs::read_to_string(STATE_FILE).unwrap()).unwrap();
    let pid = state.tayga_pid.unwrap();
    std::fs::remove_file(STATE_FILE).unwrap();
    let report = down().unwrap();
    assert_eq!(report.killed, vec![pid]);
    assert!(!running(pid), "tayga {pid} still runs");
    assert!(!std::path::Path::new("/run/xlatperf/tayga.conf").exists());
    restore_sysctls(state);
}

#[test]
fn nat44_masquerades_and_answers_return_traffic() {
    need_root!();
    let _serial = serial();
    let _guard = cleanup_guard();
    let info = up(Topology::NAT44, &UpOptions::default()).unwrap();
    assert!(status().unwrap().dut_nat_table);
    assert!(std::fs::read_to_string(&info.config_path)
        .unwrap()
        .contains("mode = \"initiator-left\""));
    let p = ports();
    let (left, right, dut_right) = (v4(TESTER_LEFT_IPV4), v4(TESTER_RIGHT_IPV4), v4(DUT_RIGHT_IPV4));

    p.left.send(&udp4(p.dut_left, p.left.mac, left, right, 1000, 2000, 1));
    let u = expect_udp(&p.right, Some(right), None, WAIT).expect("nat44 did not forward");
    assert_eq!((u.src, u.dst, u.dport, u.seq), (dut_right.into(), right.into(), 2000, 1));

    // The answer to the masqueraded address goes back to the left tester.
    p.right.send(&udp4(p.dut_right, p.right.mac, right, dut_right, 2000, u.sport, 2));
    let back = expect_udp(&p.left, Some(left), None, WAIT).expect("nat44 did not return the answer");
    assert_eq!(
        (back.src, back.dst, back.sport, back.dport, back.seq),
        (right.into(), left.into(), 2000, 1000, 2)
    );
}

/// nat66: the DUT masquerades the left tester to its right address, keeps the ports, counts a
/// connection per flow, and lets an answer back only while the connection exists; the right
/// cannot open one.
#[test]
fn nat66_masquerades_and_answers_only_known_connections() {
    need_root!("conntrack");
    let _serial = serial();
    let _guard = cleanup_guard();
    let info = up(Topology::NAT66, &UpOptions::default()).unwrap();
    let st = status().unwrap();
    assert!(st.dut_nat_table, "{st}");
    assert_eq!((st.ipv4_forwarding, st.ipv6_forwarding), (Some(false), Some(true)), "{st}");
    assert!(std::fs::read_to_string(&info.config_path)
        .unwrap()
        .contains("mode = \"initiator-left\""));
    let p = ports();
    let (left, right, dut_right) = (v6(TESTER_LEFT_IPV6), v6(TESTER_RIGHT_IPV6), v6(DUT_RIGHT_IPV6));
    let count = || dut_exec(&["conntrack", "-C"]).unwrap().trim().parse::<u64>().unwrap();
    dut_exec(&["conntrack", "-F"]).unwrap();

    let mut seen = Vec::new();
    for (i, (sport, dport)) in [(10_000, 1), (10_001, 2), (10_002, 3)].into_iter().enumerate() {
        p.left.send(&udp6(p.dut_left, p.left.mac, left, right, sport, dport, i as u64));
        let u = expect_udp(&p.right, None, Some(right), WAIT).expect("nat66 did not forward");
        // The source becomes the DUT's right address; the ports are kept.
        assert_eq!(
            (u.src, u.dst, u.sport, u.dport, u.seq),
            (dut_right.into(), right.into(), sport, dport, i as u64)
        );
        seen.push(u);
    }
    assert_eq!(count(), 3);

    // The answer to the masqueraded address goes back to the left tester ...
    p.right
        .send(&udp6(p.dut_right, p.right.mac, right, dut_right, 1, seen[0].sport, 10));
    let back = expect_udp(&p.left, None, Some(left), WAIT).expect("nat66 did not return the answer");
    assert_eq!(
        (back.src, back.dst, back.sport, back.dport, back.seq),
        (right.into(), left.into(), 1, 10_000, 10)
    );
    // ... but not once the connection is gone, and it makes none.
    dut_exec(&["conntrack", "-F"]).unwrap();
    p.right
        .send(&udp6(p.dut_right, p.right.mac, right, dut_right, 2, seen[1].sport, 11));
    assert_eq!(expect_udp(&p.left, None, Some(left), Duration::from_secs(1)), None);
    // The right cannot open a connection to the left tester either.
    p.right.send(&udp6(p.dut_right, p.right.mac, right, left, 5000, 10_000, 12));
    assert_eq!(expect_udp(&p.left, None, Some(left), Duration::from_secs(1)), None);
    assert_eq!(count(), 0);
}

#[test]
fn nat64_translates_masquerades_and_returns() {
    need_root!("tayga");
    let _serial = serial();
    let _guard = cleanup_guard();
    up(Topology::NAT64, &UpOptions::default()).unwrap();
    let st = status().unwrap();
    assert!(st.dut_nat_table && st.tayga.is_some_and(|(_, alive)| alive), "{st}");
    let p = ports();
    let left6 = v6(TESTER_LEFT_IPV6);
    let right4 = v4(TESTER_RIGHT_IPV4);
    let right6_virt = v6(RIGHT_IPV6_VIRT);
    let dut_right = v4(DUT_RIGHT_IPV4);

    p.left.send(&udp6(p.dut_left, p.left.mac, left6, right6_virt, 1000, 2000, 1));
    let u = expect_udp(&p.right, Some(right4), None, WAIT).expect("nat64 did not translate");
    assert_eq!((u.src, u.dst, u.dport, u.seq), (dut_right.into(), right4.into(), 2000, 1));

    p.right.send(&udp4(p.dut_right, p.right.mac, right4, dut_right, 2000, u.sport, 2));
    let back = expect_udp(&p.left, None, Some(left6), WAIT).expect("nat64 did not return the answer");
    assert_eq!(
        (back.src, back.dst, back.sport, back.dport, back.seq),
        (right6_virt.into(), left6.into(), 2000, 1000, 2)
    );
}

/// xlat464: an IPv4 frame from the left tester crosses the CLAT, leaves it as IPv6 between the
/// CLAT-side and the PLAT-side prefixes (RFC 6877, RFC 6052's /96 embedding, seen on the PLAT's
/// left interface), and the PLAT as IPv4 from its right address; the answer comes back to the
/// left tester from the right tester's address. `down` without the state file still finds both
/// TAYGAs (in xlat-dut and xlat-clat) and the CLAT's namespace.
#[test]
fn xlat464_translates_twice_and_down_finds_both_taygas() {
    need_root!("tayga");
    let _serial = serial();
    let _guard = cleanup_guard();
    let info = up(Topology::XLAT464, &UpOptions::default()).unwrap();
    assert_eq!(info.clat_ns.as_deref(), Some(CLAT_NS));
    let st = status().unwrap();
    let text = st.to_string();
    assert!(st.dut_nat_table && st.tayga.is_some_and(|(_, alive)| alive), "{text}");
    assert!(
        st.clat.is_some_and(|(_, alive)| alive) && text.contains("tayga (CLAT, in xlat-clat)"),
        "{text}"
    );
    for dev in [CLAT_LEFT, CLAT_RIGHT] {
        let l = st.link(dev).unwrap_or_else(|| panic!("{dev}: {text}"));
        assert!(l.netns == CLAT_NS && l.oper_state == "UP", "{l:?}");
    }
    assert!(st.link(DUT_LEFT).unwrap().addresses.iter().all(|a| !a.contains('.')), "{text}");

    let left = PacketSocket::open(TESTER_NS, LEFT_PORT);
    let right = PacketSocket::open(TESTER_NS, RIGHT_PORT);
    let between = PacketSocket::open(DUT_NS, DUT_LEFT);
    for s in [&left, &right, &between] {
        s.drain();
    }
    let (clat, dut_right) = (mac_of(CLAT_NS, CLAT_LEFT), mac_of(DUT_NS, DUT_RIGHT));
    let (left4, right4, public) = (v4(TESTER_LEFT_IPV4), v4(TESTER_RIGHT_IPV4), v4(DUT_RIGHT_IPV4));

    left.send(&udp4(clat, left.mac, left4, right4, 1000, 2000, 1));
    let u = expect_udp(&right, Some(right4), None, WAIT).expect("xlat464 did not forward");
    assert_eq!((u.src, u.dst, u.dport, u.seq), (public.into(), right4.into(), 2000, 1));
    // On the PLAT's left: the CLAT's translation, IPv6 both ways round the prefixes.
    let clat_side: Ipv6Addr = "2001:2:0:4646::c612:2".parse().unwrap();
    let plat_side: Ipv6Addr = RIGHT_IPV6_VIRT.parse().unwrap();
    let x = expect_udp(&between, None, None, WAIT).expect("nothing between CLAT and PLAT");
    assert_eq!(
        (x.src, x.dst, x.sport, x.dport, x.seq),
        (clat_side.into(), plat_side.into(), 1000, 2000, 1)
    );

    // A datagram whose IPv6 checksum comes out 0 (sent as 0xffff): TAYGA 0.9.2's incremental
    // update writes 0x0000, which the PLAT would drop; the lab's repair makes it 0xffff.
    let seq = (3..).find(|&s| udp6_sum(clat_side, plat_side, 1000, 2000, s) == 0).unwrap();
    left.send(&udp4(clat, left.mac, left4, right4, 1000, 2000, seq));
    let x = expect_udp(&between, None, None, WAIT).expect("nothing between CLAT and PLAT");
    assert_eq!((x.seq, x.csum), (seq, 0xffff), "the CLAT's translation of a zero-sum datagram");
    let u = expect_udp(&right, Some(right4), None, WAIT).expect("the PLAT dropped the zero-sum datagram");
    assert_eq!(u.seq, seq);

    right.send(&udp4(dut_right, right.mac, right4, public, 2000, u.sport, 2));
    let back = expect_udp(&left, Some(left4), None, WAIT).expect("xlat464 did not return the answer");
    assert_eq!(
        (back.src, back.dst, back.sport, back.dport, back.seq),
        (right4.into(), left4.into(), 2000, 1000, 2)
    );
    // The same the other way: the PLAT's translation of a zero-sum answer reaches the CLAT.
    let seq = (3..).find(|&s| udp6_sum(plat_side, clat_side, 2000, 1000, s) == 0).unwrap();
    right.send(&udp4(dut_right, right.mac, right4, public, 2000, u.sport, seq));
    let back = expect_udp(&left, Some(left4), None, WAIT).expect("the CLAT dropped the zero-sum answer");
    assert_eq!(back.seq, seq);

    // A crash: the state file is lost; `down` finds both daemons and all three namespaces.
    let state: LabState = serde_json::from_str(&std::fs::read_to_string(STATE_FILE).unwrap()).unwrap();
    let pids = [state.tayga_pid.unwrap(), state.clat_pid.unwrap()];
    std::fs::remove_file(STATE_FILE).unwrap();
    let mut report = down().unwrap();
    report.killed.sort_unstable();
    let mut want = pids.to_vec();
    want.sort_unstable();
    assert_eq!(report.killed, want);
    assert!(pids.iter().all(|p| !running(*p)), "a tayga still runs: {pids:?}");
    assert_eq!(
        report.namespaces_removed,
        vec![CLAT_NS.to_string(), DUT_NS.to_string(), TESTER_NS.to_string()]
    );
    for f in ["/run/xlatperf/tayga.conf", "/run/xlatperf/tayga-clat.conf"] {
        assert!(!std::path::Path::new(f).exists(), "{f} left");
    }
    restore_sysctls(state);
}

/// dslite (RFC 6333): two B4s (2001:2::2 and 2001:2::3) send the same IPv4 datagram (198.18.0.2
/// port 1000 to 198.19.0.2 port 2000) through their softwires to the AFTR. Both leave on the
/// right as IPv4 from the AFTR's address, from two different ports (a NAT per B4: two
/// connections in the table), checksums good; each answer goes back in IPv6 from the AFTR to its
/// own B4, the IPv4 inside restored. Native IPv4 and IPv6 to other addresses are not tunneled.
#[test]
fn dslite_aftr_decapsulates_nats_per_b4_and_encapsulates() {
    need_root!("conntrack");
    let _serial = serial();
    let _guard = cleanup_guard();
    up(Topology::DSLITE, &UpOptions::default()).unwrap();
    let p = ports();
    let (aftr, public) = (v6(DSLITE_AFTR), v4(DUT_RIGHT_IPV4));
    let (left4, right4, tester6) = (v4(TESTER_LEFT_IPV4), v4(TESTER_RIGHT_IPV4), v6(TESTER_LEFT_IPV6));
    let b4s: [Ipv6Addr; 2] = [tester6, "2001:2::3".parse().unwrap()];
    let mut seen = Vec::new();
    for (k, b4) in b4s.iter().enumerate() {
        let inner = udp4(p.dut_left, p.left.mac, left4, right4, 1000, 2000, k as u64 + 1);
        p.left.send(&encap6(&inner, *b4, aftr));
        let u = expect_udp(&p.right, Some(right4), None, WAIT).unwrap_or_else(|| panic!("B4 {b4}: nothing on the right"));
        assert_eq!(
            (u.src, u.dst, u.dport, u.seq, u.tunnel),
            (public.into(), right4.into(), 2000, k as u64 + 1, None)
        );
        seen.push(u.sport);
    }
    assert_ne!(seen[0], seen[1], "two B4s with the same datagram share one NAT mapping");
    let count = std::process::Command::new("ip")
        .args(["netns", "exec", DUT_NS, "conntrack", "-C"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&count.stdout).trim(), "2");

    for (k, b4) in b4s.iter().enumerate().rev() {
        let seq = 10 + k as u64;
        p.right.send(&udp4(p.dut_right, p.right.mac, right4, public, 2000, seen[k], seq));
        // The AFTR resolves the tester's IPv6 address (the route back) by neighbour discovery.
        let u = expect_udp(&p.left, None, Some(tester6), WAIT).unwrap_or_else(|| panic!("no answer to B4 {b4}"));
        assert_eq!(u.tunnel, Some((aftr, *b4)), "answer {seq} in the softwire to its B4");
        assert_eq!(
            (u.src, u.dst, u.sport, u.dport, u.seq),
            (right4.into(), left4.into(), 2000, 1000, seq)
        );
    }
    // The frames' checksums, inner IPv4 and UDP, once more on a fresh pair of frames.
    let inner = udp4(p.dut_left, p.left.mac, left4, right4, 1000, 2000, 20);
    p.left.send(&encap6(&inner, b4s[0], aftr));
    let f = recv_udp_frame(&p.right, Some(right4));
    assert!(v4_sums_ok(&f), "out on the right: {f:02x?}");
    p.right.send(&udp4(p.dut_right, p.right.mac, right4, public, 2000, seen[0], 21));
    let f = recv_udp_frame(&p.left, None);
    assert!(v4_sums_ok(&f), "back in the softwire: {f:02x?}");

    // IPv4 in IPv6 to an address that is not the AFTR's is not decapsulated.
    let other: Ipv6Addr = "2001:2:0:1::2".parse().unwrap();
    p.left.send(&encap6(&inner, other, v6(TESTER_RIGHT_IPV6)));
    assert!(
        expect_udp(&p.right, Some(right4), None, Duration::from_millis(300)).is_none(),
        "IPv6 not to the AFTR was decapsulated"
    );
    down().unwrap();
}

/// lw4o6 (RFC 7596): the lwAFTR forwards a softwire's IPv4 packet only when the binding of its
/// inner source (address and the port set of its source port) names the softwire's lwB4, and
/// sends IPv4 back into the softwire of the lwB4 that its destination address and port are
/// bound to. No NAT: the packet leaves as it was sent, but for its TTL. The tester's
/// binding (the first), another one and the last of the 10,000 pass; a port outside the
/// sender's set, an unbound port set and an unbound destination port do not.
#[test]
fn lw4o6_lwaftr_forwards_by_binding_only() {
    need_root!();
    let _serial = serial();
    let _guard = cleanup_guard();
    up(Topology::LW4O6, &UpOptions::default()).unwrap();
    let p = ports();
    let (aftr, right4, tester6) = (v6(DSLITE_AFTR), v4(TESTER_RIGHT_IPV4), v6(TESTER_LEFT_IPV6));
    let quiet = Duration::from_millis(300);
    for (k, i) in [0, 5, LW4O6_BINDINGS - 1].into_iter().enumerate() {
        let (v4b, psid, b4) = lw4o6_binding(i);
        let (lo, hi) = lw4o6_port_set(psid);
        let port = lo + (hi - lo) / 2;
        let seq = 1 + k as u64;
        let inner = udp4(p.dut_left, p.left.mac, v4b, right4, port, 2000, seq);
        p.left.send(&encap6(&inner, b4, aftr));
        let u = expect_udp(&p.right, Some(right4), None, WAIT).unwrap_or_else(|| panic!("binding {i}: nothing on the right"));
        assert_eq!(
            (u.src, u.dst, u.sport, u.dport, u.seq, u.tunnel),
            (v4b.into(), right4.into(), port, 2000, seq, None)
        );
        // And back: to the bound address and port, into that lwB4's softwire.
        p.right.send(&udp4(p.dut_right, p.right.mac, right4, v4b, 2000, port, seq + 10));
        let u = expect_udp(&p.left, None, Some(tester6), WAIT).unwrap_or_else(|| panic!("binding {i}: no answer"));
        assert_eq!(u.tunnel, Some((aftr, b4)), "binding {i}: answer in its lwB4's softwire");
        assert_eq!(
            (u.src, u.dst, u.sport, u.dport, u.seq),
            (right4.into(), v4b.into(), 2000, port, seq + 10)
        );
    }
    let (v4t, psid, _) = lw4o6_binding(0);
    softwire_pair_unchanged(&p, (tester6, aftr), v4t, LW4O6_PORTS);

    // The tester's lwB4 with a source port of binding 5's set (another lwB4's), and with one of
    // the unbound set 0; a destination port of no binding on the way back.
    let other = lw4o6_port_set(lw4o6_binding(5).1).0;
    assert_ne!(lw4o6_binding(5).1, psid);
    for (k, sport) in [other, 500].into_iter().enumerate() {
        let inner = udp4(p.dut_left, p.left.mac, v4t, right4, sport, 2000, 40 + k as u64);
        p.left.send(&encap6(&inner, tester6, aftr));
        assert!(
            expect_udp(&p.right, Some(right4), None, quiet).is_none(),
            "source port {sport} was not dropped"
        );
    }
    p.right.send(&udp4(p.dut_right, p.right.mac, right4, v4t, 2000, 500, 50));
    assert!(
        expect_udp(&p.left, None, Some(tester6), quiet).is_none(),
        "an unbound port went into a softwire"
    );
    down().unwrap();
}

/// mape (RFC 7597): the border relay forwards a softwire's IPv4 packet only when the softwire's
/// source is the address the mapping rule gives its inner source address and source port, and
/// sends IPv4 back into the softwire of the CE the rule gives its destination address and port:
/// no table, no NAT (the packet leaves as sent, but for its TTL). The tester's CE, CE 1000 and
/// the rule's last CE pass both ways; a port of another CE's set, a port in no set (below
/// 1024), an outer source one bit off, a destination port in no set and a destination outside
/// the rule do not.
#[test]
fn mape_border_relay_forwards_by_the_mapping_rule_only() {
    need_root!();
    let _serial = serial();
    let _guard = cleanup_guard();
    up(Topology::MAPE, &UpOptions::default()).unwrap();
    let p = ports();
    let rule = map_rule().unwrap();
    let (br, right4, tester) = (v6(DSLITE_AFTR), v4(TESTER_RIGHT_IPV4), map_tester_ce().unwrap());
    for (k, n) in [33, 1000, rule.ces() - 1].into_iter().enumerate() {
        let ce = rule.ce(n).unwrap();
        let ce6 = rule.ce_address(ce).unwrap();
        let port = rule.port(ce.psid, 100).unwrap();
        let seq = 1 + k as u64;
        let inner = udp4(p.dut_left, p.left.mac, ce.ipv4, right4, port, 2000, seq);
        p.left.send(&encap6(&inner, ce6, br));
        let u = expect_udp(&p.right, Some(right4), None, WAIT).unwrap_or_else(|| panic!("CE {n}: nothing on the right"));
        assert_eq!(
            (u.src, u.dst, u.sport, u.dport, u.seq, u.tunnel),
            (ce.ipv4.into(), right4.into(), port, 2000, seq, None)
        );
        // And back: into the softwire of the CE the rule gives the destination and its port
        // (the BR reaches every CE through the tester's port, whose CE address it resolves).
        p.right.send(&udp4(p.dut_right, p.right.mac, right4, ce.ipv4, 2000, port, seq + 10));
        let u = expect_udp(&p.left, None, Some(tester), WAIT).unwrap_or_else(|| panic!("CE {n}: no answer"));
        assert_eq!(u.tunnel, Some((br, ce6)), "CE {n}: the answer in its softwire");
        assert_eq!(
            (u.src, u.dst, u.sport, u.dport, u.seq),
            (right4.into(), ce.ipv4.into(), 2000, port, seq + 10)
        );
    }
    let me = v4(TESTER_LEFT_IPV4);
    softwire_pair_unchanged(&p, (tester, br), me, MAP_PORTS);

    map_br_drops(&p, |sport, src, seq| {
        let inner = udp4(p.dut_left, p.left.mac, me, right4, sport, 2000, seq);
        encap6(&inner, src, br)
    });
    down().unwrap();
}

/// mapt (RFC 7599): the border relay translates a CE's IPv6 UDP to the DMR prefix into IPv4
/// only when its source is the address the mapping rule gives the IPv4 address in its interface
/// identifier and its source port, and IPv4 back into IPv6 to the CE the rule gives its
/// destination address and port, from the DMR prefix with the source embedded (RFC 6052, /96):
/// no table, no NAT. The checksums are right across the change of pseudo-header (IPv4: header and
/// UDP verify; IPv6: the UDP checksum an IPv6 sender computes, and 0xffff where that is 0, RFC
/// 8200 section 8.1); TTL and hop limit one less. The tester's CE, CE 1000 and the rule's last CE
/// pass both ways; a port of another CE's set, a port in no set (below 1024), a source one bit
/// off, a destination port in no set and a destination outside the rule do not.
#[test]
fn mapt_border_relay_translates_by_the_mapping_rule_only() {
    need_root!();
    let _serial = serial();
    let _guard = cleanup_guard();
    up(Topology::MAPT, &UpOptions::default()).unwrap();
    let p = ports();
    let rule = map_rule().unwrap();
    let (right4, right6, tester) = (v4(TESTER_RIGHT_IPV4), v6(RIGHT_IPV6_VIRT), map_tester_ce().unwrap());
    assert_eq!(
        u128::from(right6) >> 32,
        u128::from(v6(MAPT_DMR)) >> 32,
        "the right tester is in the DMR prefix"
    );
    for (k, n) in [33, 1000, rule.ces() - 1].into_iter().enumerate() {
        let ce = rule.ce(n).unwrap();
        let ce6 = rule.ce_address(ce).unwrap();
        let port = rule.port(ce.psid, 100).unwrap();
        let seq = 1 + k as u64;
        p.left.send(&udp6(p.dut_left, p.left.mac, ce6, right6, port, 2000, seq));
        let f = recv_udp_frame(&p.right, Some(right4));
        let u = common::packet::parse_udp(&f).unwrap();
        assert_eq!(
            (u.src, u.dst, u.sport, u.dport, u.seq, u.ttl),
            (ce.ipv4.into(), right4.into(), port, 2000, seq, 63),
            "CE {n}"
        );
        assert!(v4_sums_ok(&f) && u.csum != 0, "CE {n}: checksums after 6 -> 4: {f:02x?}");
        // And back: to the CE the rule gives the destination and its port (the BR reaches every
        // CE through the tester's port, whose CE address it resolves).
        p.right.send(&udp4(p.dut_right, p.right.mac, right4, ce.ipv4, 2000, port, seq + 10));
        let u = expect_udp(&p.left, None, Some(tester), WAIT).unwrap_or_else(|| panic!("CE {n}: no answer"));
        assert_eq!(
            (u.src, u.dst, u.sport, u.dport, u.seq, u.ttl, u.tunnel),
            (right6.into(), ce6.into(), 2000, port, seq + 10, 63, None),
            "CE {n}"
        );
        assert_eq!(
            u.csum,
            udp6_sum(right6, ce6, 2000, port, seq + 10),
            "CE {n}: the UDP checksum after 4 -> 6"
        );
    }
    // A datagram whose IPv6 checksum comes out 0 carries 0xffff.
    let me = v4(TESTER_LEFT_IPV4);
    let seq = (100..).find(|&s| udp6_sum(right6, tester, 2000, MAP_PORTS.0, s) == 0).unwrap();
    p.right.send(&udp4(p.dut_right, p.right.mac, right4, me, 2000, MAP_PORTS.0, seq));
    let u = expect_udp(&p.left, None, Some(tester), WAIT).expect("no answer");
    assert_eq!((u.seq, u.csum), (seq, 0xffff));

    map_br_drops(&p, |sport, src, seq| udp6(p.dut_left, p.left.mac, src, right6, sport, 2000, seq));
    down().unwrap();
}

/// What a MAP border relay (mape, mapt) drops: from the tester's CE, a frame (`frame(source
/// port, CE-side source, sequence number)`) at a port of PSID 2's set, at port 500 (in no set),
/// and at a port of its own set from a source one bit off; and from the right, frames to a port
/// in no set and to an address outside the rule's /22.
fn map_br_drops(p: &Ports, frame: impl Fn(u16, Ipv6Addr, u64) -> Vec<u8>) {
    let quiet = Duration::from_millis(300);
    let (rule, tester) = (map_rule().unwrap(), map_tester_ce().unwrap());
    let (me, right4) = (v4(TESTER_LEFT_IPV4), v4(TESTER_RIGHT_IPV4));
    let flipped = Ipv6Addr::from(u128::from(tester) ^ 1 << 20);
    let other = rule.port(MAP_TESTER_PSID + 1, 0).unwrap();
    for (k, (sport, src)) in [(other, tester), (500, tester), (MAP_PORTS.0, flipped)].into_iter().enumerate() {
        p.left.send(&frame(sport, src, 40 + k as u64));
        assert!(
            expect_udp(&p.right, Some(right4), None, quiet).is_none(),
            "source port {sport} from {src} was not dropped"
        );
    }
    for (k, (dst, dport)) in [(me, 500), (v4("198.18.4.2"), MAP_PORTS.0)].into_iter().enumerate() {
        p.right
            .send(&udp4(p.dut_right, p.right.mac, right4, dst, 2000, dport, 50 + k as u64));
        assert!(
            expect_udp(&p.left, None, Some(tester), quiet).is_none(),
            "{dst} port {dport} reached the CE side"
        );
    }
}

/// A stateless softwire concentrator routes without translating: a frame from `v4` (inside the
/// softwire `ends` = (tester's end, concentrator)) at the first port of `ports` leaves on the
/// right as sent but for its TTL (one less) and its IPv4 header's checksum (updated); one back
/// to the last port of `ports` arrives in the softwire with good checksums.
fn softwire_pair_unchanged(p: &Ports, ends: (Ipv6Addr, Ipv6Addr), v4: Ipv4Addr, ports: (u16, u16)) {
    let right4 = self::v4(TESTER_RIGHT_IPV4);
    let inner = udp4(p.dut_left, p.left.mac, v4, right4, ports.0, 2000, 30);
    p.left.send(&encap6(&inner, ends.0, ends.1));
    let f = recv_udp_frame(&p.right, Some(right4));
    let n = inner.len();
    assert!(
        v4_sums_ok(&f) && f[22] + 1 == inner[22] && f.get(34..n) == inner.get(34..),
        "out on the right: {f:02x?}"
    );
    p.right.send(&udp4(p.dut_right, p.right.mac, right4, v4, 2000, ports.1, 31));
    assert!(v4_sums_ok(&recv_udp_frame(&p.left, None)), "back in the softwire");
}

/// The next UDP test frame on `sock`, whole (answering ARP for `v4`).
fn recv_udp_frame(sock: &PacketSocket, v4: Option<Ipv4Addr>) -> Vec<u8> {
    let deadline = std::time::Instant::now() + WAIT;
    while let Some(f) = sock.recv(deadline) {
        if let Some(reply) = v4.and_then(|ip| common::packet::arp_reply(&f, sock.mac, ip)) {
            sock.send(&reply);
        } else if common::packet::parse_udp(&f).is_some() {
            return f;
        }
    }
    panic!("no UDP test frame");
}
