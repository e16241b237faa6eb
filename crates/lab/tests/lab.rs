//! Lab tests: they build real namespaces, so they need root (CI runs as root). The names are
//! fixed, so the tests run one at a time (a static mutex), and a guard tears the lab down when a
//! test ends, also when it fails.

mod common;

use std::path::Path;
use std::process::Command;

use common::{cleanup_guard, serial};
use xlat_lab::*;

/// Return from the test unless it runs as root with the lab's tools and `$tool`s (see
/// common::skip_unless_root).
macro_rules! need_root {
    ($($tool:literal),*) => {
        if common::skip_unless_root(&["ip", "nft", "sysctl", "kill", $($tool),*]) {
            return;
        }
    };
}

fn sh(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().expect("run tool");
    assert!(out.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Nothing named xlat-* is left: no namespace, no link here, no state file.
fn assert_nothing_left() {
    let ns = sh("ip", &["netns", "list"]);
    assert!(!ns.contains("xlat-"), "namespaces left: {ns}");
    let links = sh("ip", &["-br", "link"]);
    assert!(!links.contains("xlat-"), "links left: {links}");
    assert!(!Path::new(STATE_FILE).exists(), "state file left");
    let st = status().unwrap();
    assert!(!st.exists(), "{st}");
    assert!(st.to_string().contains("no lab"));
}

/// The checks shared by router4 and router6.
fn check_common(info: &LabInfo, t: Topology) {
    assert_eq!(info.topology, t);
    assert_eq!((info.tester_ns.as_str(), info.dut_ns.as_str()), ("xlat-tester", "xlat-dut"));
    assert_eq!((info.left_port.as_str(), info.right_port.as_str()), ("xlat-tl", "xlat-tr"));
    assert_eq!(info.config_path, Path::new(&format!("/run/xlatperf/lab-{t}.toml")));

    let st = status().unwrap();
    let text = st.to_string();
    assert!(st.exists());
    assert_eq!(st.topology(), Some(t), "{text}");
    assert!(st.state.as_ref().unwrap().complete);
    assert!(st.namespace_exists(TESTER_NS) && st.namespace_exists(DUT_NS), "{text}");
    assert!(text.contains(&format!("lab: {t} (complete)")), "{text}");
    for port in [LEFT_PORT, RIGHT_PORT] {
        let l = st.link(port).unwrap_or_else(|| panic!("{port} missing: {text}"));
        assert_eq!(l.netns, TESTER_NS);
        assert!(l.admin_up && l.promisc, "{l:?}");
        assert_eq!(l.oper_state, "UP");
        assert!(l.addresses.is_empty(), "tester port has addresses: {l:?}");
        assert_eq!(l.ipv6_disabled, Some(true));
    }
    for (dev, v4, v6) in [
        (DUT_LEFT, DUT_LEFT_IPV4, DUT_LEFT_IPV6),
        (DUT_RIGHT, DUT_RIGHT_IPV4, DUT_RIGHT_IPV6),
    ] {
        let l = st.link(dev).unwrap();
        assert_eq!(l.netns, DUT_NS);
        assert!(l.admin_up && l.oper_state == "UP", "{l:?}");
        assert!(l.addresses.iter().any(|a| a == v4) && l.addresses.iter().any(|a| a == v6), "{l:?}");
        assert_eq!(l.neighbours, Some(0), "the DUT must have no static neighbours: {l:?}");
    }
    assert!(st.stray_links.is_empty());
    assert!(st.tester_drop_table, "{text}");

    // Independent checks with the tools themselves.
    assert_eq!(
        sh("ip", &["-n", TESTER_NS, "-6", "address", "show"]).trim(),
        "",
        "IPv6 on the tester side"
    );
    assert_eq!(sh("ip", &["-n", TESTER_NS, "-4", "address", "show", "dev", LEFT_PORT]).trim(), "");
    let nft = sh("ip", &["netns", "exec", TESTER_NS, "nft", "list", "table", "netdev", "xlat"]);
    assert!(
        nft.contains("xlat-tl") && nft.contains("xlat-tr") && nft.matches("policy drop").count() == 2,
        "{nft}"
    );
    let dad = dut_exec(&["sysctl", "-n", "net.ipv6.conf.xlat-dl.accept_dad"]).unwrap();
    assert_eq!(dad.trim(), "0");
    let v6 = dut_exec(&["ip", "-6", "address", "show", "dev", DUT_RIGHT]).unwrap();
    assert!(v6.contains("2001:2:0:8000::1/64") && !v6.contains("tentative"), "{v6}");
    assert!(dut_exec(&["ip", "neigh", "show", "nud", "permanent"]).unwrap().trim().is_empty());
    for proto in ["ipv4", "ipv6"] {
        for n in 1..=3 {
            let v: u64 = sh("sysctl", &["-n", &format!("net.{proto}.neigh.default.gc_thresh{n}")])
                .trim()
                .parse()
                .unwrap();
            assert!(v >= 131_072, "{proto} gc_thresh{n} = {v}");
        }
    }
    let txq = sh("ip", &["-n", TESTER_NS, "-j", "link", "show", "dev", LEFT_PORT]);
    assert!(txq.contains("\"txqlen\":10000"), "{txq}");

    // The configuration.
    let cfg = std::fs::read_to_string(&info.config_path).unwrap();
    assert_eq!(cfg, config_toml(t));
    for key in [
        "[tester]",
        "backend = \"afpacket\"",
        "left_port = \"xlat-tl\"",
        "right_port = \"xlat-tr\"",
        "netns = \"xlat-tester\"",
        "[left]",
        "ipv4_real = \"198.18.0.2\"",
        "dut_ipv6 = \"2001:2::1\"",
        "[right]",
        "ipv6_real = \"2001:2:0:8000::2\"",
        "dut_ipv4 = \"198.19.0.1\"",
        "[traffic]",
        "foreground = { n = 2, m = 2 }",
        "[trial]",
        "frame_size = 84",
        "timeout_ms = 2000",
    ] {
        assert!(cfg.contains(key), "{key} missing in\n{cfg}");
    }
}

fn check_up_twice_fails() {
    let err = up(Topology::ROUTER4, &UpOptions::default()).unwrap_err();
    assert!(matches!(err, LabError::AlreadyUp { .. }), "{err:?}");
    assert!(err.to_string().contains("xlatperf lab down"), "{err}");
    // ... and leaves the lab alone.
    assert!(status().unwrap().state.as_ref().unwrap().complete);
}

fn check_down() {
    let report = down().unwrap();
    assert!(report.had_state);
    assert_eq!(report.namespaces_removed, vec![DUT_NS.to_string(), TESTER_NS.to_string()]);
    assert!(report.to_string().contains("removed"), "{report}");
    assert_nothing_left();
    let again = down().unwrap();
    assert!(again.nothing_found(), "{again:?}");
    assert_eq!(again.to_string(), "no lab found; nothing to do\n");
}

#[test]
fn router4_up_status_down() {
    need_root!();
    let _serial = serial();
    let _guard = cleanup_guard();
    let thresh_before = sh("sysctl", &["-n", "net.ipv4.neigh.default.gc_thresh3"]);

    let info = up(Topology::ROUTER4, &UpOptions::default()).unwrap();
    check_common(&info, Topology::ROUTER4);
    let st = status().unwrap();
    assert_eq!((st.ipv4_forwarding, st.ipv6_forwarding), (Some(true), Some(false)));
    assert!(st.to_string().contains("DUT forwarding: IPv4 on, IPv6 off"));
    let cfg = std::fs::read_to_string(&info.config_path).unwrap();
    assert_eq!(cfg.matches("ip_version = 4").count(), 2);

    set_forwarding(false).unwrap();
    assert_eq!(dut_exec(&["sysctl", "-n", "net.ipv4.ip_forward"]).unwrap().trim(), "0");
    assert!(status().unwrap().to_string().contains("IPv4 off"));
    set_forwarding(true).unwrap();
    assert_eq!(dut_exec(&["sysctl", "-n", "net.ipv4.ip_forward"]).unwrap().trim(), "1");

    check_up_twice_fails();
    check_down();
    assert!(!info.config_path.exists());
    assert_eq!(
        sh("sysctl", &["-n", "net.ipv4.neigh.default.gc_thresh3"]),
        thresh_before,
        "gc_thresh not restored"
    );
}

#[test]
fn router6_up_status_down() {
    need_root!();
    let _serial = serial();
    let _guard = cleanup_guard();

    let info = up(Topology::ROUTER6, &UpOptions::default()).unwrap();
    check_common(&info, Topology::ROUTER6);
    let st = status().unwrap();
    assert_eq!((st.ipv4_forwarding, st.ipv6_forwarding), (Some(false), Some(true)));
    let cfg = std::fs::read_to_string(&info.config_path).unwrap();
    assert_eq!(cfg.matches("ip_version = 6").count(), 2);

    set_forwarding(false).unwrap();
    assert_eq!(dut_exec(&["sysctl", "-n", "net.ipv6.conf.all.forwarding"]).unwrap().trim(), "0");
    set_forwarding(true).unwrap();
    assert_eq!(dut_exec(&["sysctl", "-n", "net.ipv6.conf.xlat-dr.forwarding"]).unwrap().trim(), "1");

    check_up_twice_fails();
    check_down();
}

#[test]
fn down_after_a_crash_without_state_file() {
    need_root!();
    let _serial = serial();
    let _guard = cleanup_guard();

    up(Topology::ROUTER4, &UpOptions::default()).unwrap();
    // A crash: the state file is lost. Remember the host-wide sysctls it would have restored.
    let state: LabState = serde_json::from_str(&std::fs::read_to_string(STATE_FILE).unwrap()).unwrap();
    std::fs::remove_file(STATE_FILE).unwrap();

    let st = status().unwrap();
    assert!(st.exists() && st.state.is_none());
    assert!(st.to_string().contains("no state file"), "{st}");
    let err = up(Topology::ROUTER6, &UpOptions::default()).unwrap_err();
    assert!(err.to_string().contains("namespace xlat-tester"), "{err}");

    let report = down().unwrap();
    assert!(!report.had_state);
    assert_eq!(report.namespaces_removed.len(), 2);
    assert!(report.to_string().contains("no state file"), "{report}");
    assert_nothing_left();
    assert!(down().unwrap().nothing_found());

    for s in state.saved_sysctls {
        sh("sysctl", &["-q", "-w", &format!("{}={}", s.key, s.original)]);
    }
}

#[test]
fn down_with_a_corrupt_state_file_and_replace() {
    need_root!();
    let _serial = serial();
    let _guard = cleanup_guard();

    up(Topology::ROUTER4, &UpOptions::default()).unwrap();
    let info = up(
        Topology::ROUTER6,
        &UpOptions {
            replace: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(status().unwrap().topology(), Some(Topology::ROUTER6));
    assert!(info.config_path.exists() && !Path::new("/run/xlatperf/lab-router4.toml").exists());

    // A torn state file: `down` still removes everything (and the bad file).
    let good = std::fs::read_to_string(STATE_FILE).unwrap();
    std::fs::write(STATE_FILE, &good[..good.len() / 2]).unwrap();
    assert!(status().unwrap().state_error.is_some());
    let report = down().unwrap();
    assert!(report.notes.iter().any(|n| n.contains("unreadable")), "{report:?}");
    assert_nothing_left();

    let state: LabState = serde_json::from_str(&good).unwrap();
    for s in state.saved_sysctls {
        sh("sysctl", &["-q", "-w", &format!("{}={}", s.key, s.original)]);
    }
}

#[test]
fn calls_that_need_a_lab_say_so() {
    need_root!();
    let _serial = serial();
    let _guard = cleanup_guard();
    down().unwrap();
    assert!(matches!(dut_exec(&["true"]), Err(LabError::NotUp { .. })));
    assert!(matches!(set_forwarding(true), Err(LabError::NotUp { .. })));
    assert!(matches!(dut_neighbours(DUT_LEFT), Err(LabError::NotUp { .. })));
    assert!(matches!(dut_neighbours("bad name"), Err(LabError::InvalidInput(_))));
}

#[test]
fn a_failure_midway_tears_down_what_up_made() {
    need_root!();
    let _serial = serial();
    let _guard = cleanup_guard();
    let thresh_before = sh("sysctl", &["-n", "net.ipv6.neigh.default.gc_thresh1"]);

    // The last step (writing the configuration) fails: its path is a link into nowhere.
    std::fs::create_dir_all(RUN_DIR).unwrap();
    let cfg = config_path(Topology::ROUTER4);
    std::os::unix::fs::symlink("/nonexistent-xlat-lab-dir/x.toml", &cfg).unwrap();
    let err = up(Topology::ROUTER4, &UpOptions::default()).unwrap_err();
    assert!(matches!(err, LabError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("lab-router4.toml"), "{err}");
    assert!(std::fs::symlink_metadata(&cfg).is_err(), "teardown removes the lab's files");
    assert_nothing_left();
    assert_eq!(sh("sysctl", &["-n", "net.ipv6.neigh.default.gc_thresh1"]), thresh_before);
}

/// The host-wide sysctls a NAT lab may raise: the neighbour table limits and the connection
/// tracking table and hash size.
const HOST_KEYS: [&str; 4] = [
    "net.ipv4.neigh.default.gc_thresh3",
    "net.ipv6.neigh.default.gc_thresh1",
    "net.netfilter.nf_conntrack_max",
    "net.netfilter.nf_conntrack_buckets",
];

fn host_values() -> Vec<String> {
    HOST_KEYS.iter().map(|k| sh("sysctl", &["-n", k]).trim().to_string()).collect()
}

/// The conntrack sysctls exist once nf_conntrack is loaded: a first nat44 lab loads it.
fn load_nf_conntrack() {
    if Command::new("sysctl")
        .args(["-n", HOST_KEYS[2]])
        .output()
        .map_or(true, |o| !o.status.success())
    {
        up(Topology::NAT44, &UpOptions::default()).unwrap();
        down().unwrap();
    }
}

fn dut_sysctl(key: &str) -> u64 {
    dut_exec(&["sysctl", "-n", key]).unwrap().trim().parse().unwrap()
}

/// nat44, nat64 and nat66 make room for a stateful test (UDP timeouts in the DUT, a large
/// connection table host-wide), and `down` gives the host back its own values: after a normal
/// run, and after a crash that left the lab up (`up --replace` and `down` find the state file).
#[test]
fn nat_labs_tune_conntrack_and_down_restores_the_host() {
    need_root!("tayga", "conntrack");
    let _serial = serial();
    let _guard = cleanup_guard();
    load_nf_conntrack();
    let before = host_values();
    let host_udp_timeout = sh("sysctl", &["-n", "net.netfilter.nf_conntrack_udp_timeout"]);

    for t in [Topology::NAT44, Topology::NAT66] {
        up(t, &UpOptions::default()).unwrap();
        for key in [
            "net.netfilter.nf_conntrack_udp_timeout",
            "net.netfilter.nf_conntrack_udp_timeout_stream",
        ] {
            assert_eq!(dut_sysctl(key), CONNTRACK_UDP_TIMEOUT_S, "{t}: {key} in the DUT");
        }
        assert!(dut_sysctl("net.netfilter.nf_conntrack_max") >= CONNTRACK_MAX, "{t}");
        let buckets: u64 = sh("cat", &["/sys/module/nf_conntrack/parameters/hashsize"]).trim().parse().unwrap();
        assert!(buckets >= CONNTRACK_BUCKETS, "{t}: hashsize {buckets}");
        // The timeouts are the DUT namespace's own: the host keeps its value.
        assert_eq!(
            sh("sysctl", &["-n", "net.netfilter.nf_conntrack_udp_timeout"]),
            host_udp_timeout,
            "{t}"
        );
        // What was raised is in the state file with its old value before `down` needs it.
        let saved = status().unwrap().state.unwrap().saved_sysctls;
        for (key, old) in HOST_KEYS.iter().zip(&before) {
            let raised = saved.iter().find(|s| s.key == *key);
            match old.parse::<u64>() {
                Ok(v) if key.contains("conntrack") && v < CONNTRACK_MAX => {
                    let r = raised.unwrap_or_else(|| panic!("{t}: {key} not saved: {saved:?}"));
                    assert_eq!((&r.original, r.set.parse::<u64>().unwrap()), (old, CONNTRACK_MAX), "{t}");
                }
                _ => {}
            }
        }
        let st = status().unwrap();
        assert!(st.dut_nat_table, "{t}: {st}");
        let ct = st.conntrack.expect("the DUT's conntrack in the status");
        assert_eq!(
            (ct.udp_timeout_s, ct.max >= CONNTRACK_MAX),
            (CONNTRACK_UDP_TIMEOUT_S, true),
            "{t}: {st}"
        );
        assert!(st.to_string().contains("UDP timeout 600 s"), "{t}: {st}");
        // The DUT's table empties on command (before every trial).
        dut_exec(&["conntrack", "-F"]).unwrap();
        assert_eq!(dut_exec(&["conntrack", "-C"]).unwrap().trim(), "0", "{t}");

        check_down();
        assert_eq!(host_values(), before, "{t}: {HOST_KEYS:?} not restored by down");
    }

    // A crash leaves nat64 up with its state file: `up --replace` restores and raises again,
    // and a later `down` (after another crash) restores; the same from nat66 to nat44.
    for (crashed, replacement) in [(Topology::NAT64, Topology::NAT44), (Topology::NAT66, Topology::NAT44)] {
        up(crashed, &UpOptions::default()).unwrap();
        up(
            replacement,
            &UpOptions {
                replace: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(dut_sysctl("net.netfilter.nf_conntrack_max") >= CONNTRACK_MAX);
        let report = down().unwrap();
        assert!(report.had_state, "{report}");
        assert_nothing_left();
        assert_eq!(host_values(), before, "{crashed}: {HOST_KEYS:?} not restored after a crash");
    }
}

/// `lab up nat44 --conntrack-max N`: the DUT's table holds exactly N connections (lower than
/// the host's too, for a capacity measurement), the hash as given (the kernel rounds it), and
/// `down` restores both, also after a crash; only the stateful DUTs take it.
#[test]
fn a_set_conntrack_table_holds_exactly_its_size_and_down_restores_the_host() {
    need_root!("tayga", "conntrack");
    let _serial = serial();
    let _guard = cleanup_guard();
    load_nf_conntrack();
    let before = host_values();
    let opts = UpOptions {
        conntrack: Some((150_000, 100_000)),
        ..Default::default()
    };
    up(Topology::NAT44, &opts).unwrap();
    assert_eq!(dut_sysctl("net.netfilter.nf_conntrack_max"), 150_000);
    let buckets: u64 = sh("cat", &["/sys/module/nf_conntrack/parameters/hashsize"]).trim().parse().unwrap();
    assert!((100_000..=101_000).contains(&buckets), "hash size {buckets} for 100,000");
    // A crash, then `up --replace` with the default table: raised again; `down` restores all.
    up(
        Topology::NAT66,
        &UpOptions {
            replace: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(dut_sysctl("net.netfilter.nf_conntrack_max") >= CONNTRACK_MAX);
    down().unwrap();
    assert_nothing_left();
    assert_eq!(host_values(), before, "{HOST_KEYS:?} not restored");
    up(Topology::NAT44, &opts).unwrap();
    check_down();
    assert_eq!(host_values(), before, "{HOST_KEYS:?} not restored");
    // Not for a stateless DUT, and not beyond the limit.
    let e = up(Topology::ROUTER4, &opts).unwrap_err();
    assert!(e.to_string().contains("not router4"), "{e}");
    let e = up(
        Topology::NAT44,
        &UpOptions {
            conntrack: Some((CONNTRACK_LIMIT + 1, 10)),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("allowed 1-"), "{e}");
    assert_nothing_left();
}
