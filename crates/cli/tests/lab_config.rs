//! The configuration `xlatperf lab up` writes for each topology, read by the config crate's own
//! reader, says what the lab builds: the tester's ports and namespace, each side's IP version
//! and addresses, the directions. Needs no root: nothing is built, only the file's text is made.

use std::net::{Ipv4Addr, Ipv6Addr};
use xlat_config::{parse_toml, Backend, Cpus, SourceKind, TestConfig};
use xlat_lab::{config, config_toml, Topology};
use xlat_traffic::{IpVersion, Stateful, Variation};

/// The file of topology `t`, read as `xlatperf` reads it.
fn read(t: Topology) -> TestConfig {
    let text = config_toml(t);
    parse_toml(&text, &format!("lab-{t}.toml")).unwrap_or_else(|e| panic!("{t}: {e}\n{text}"))
}

fn v4(a: &str) -> Option<Ipv4Addr> {
    Some(a.parse().expect("an IPv4 address"))
}

fn v6(a: &str) -> Option<Ipv6Addr> {
    Some(a.parse().expect("an IPv6 address"))
}

#[test]
fn every_topology_has_a_valid_configuration() {
    for t in Topology::ALL {
        let cfg = read(t);
        assert_eq!(cfg.source.kind, SourceKind::Toml);
        // The file holds exactly the typed value the lab made.
        let typed = config(t);
        assert_eq!(
            (&cfg.setup, &cfg.tester, &cfg.trial),
            (&typed.setup, &typed.tester, &typed.trial),
            "{t}"
        );
        xlat_config::validate(&typed).unwrap_or_else(|e| panic!("{t}: {e}"));
    }
}

#[test]
fn the_tester_uses_the_lab_ports_in_its_namespace() {
    // (dpdk-fwd's tester is on DPDK: lab_dpdk.rs and the lab crate's testpmd tests.)
    for t in Topology::ALL.into_iter().filter(|t| !t.dut().dpdk()) {
        let tester = read(t).tester;
        assert_eq!(tester.backend, Backend::AfPacket, "{t}");
        assert_eq!(
            (tester.left_port.as_str(), tester.right_port.as_str()),
            ("xlat-tl", "xlat-tr"),
            "{t}"
        );
        assert_eq!(tester.netns.as_deref(), Some("xlat-tester"), "{t}");
        assert!(!tester.loopback && !tester.promisc && tester.eal_args.is_empty(), "{t}");
    }
}

#[test]
fn ip_versions_and_directions_per_topology() {
    use IpVersion::{V4, V6};
    // (topology, left version, right version, reverse direction on)
    let expected = [
        (Topology::ROUTER4, V4, V4, true),
        (Topology::ROUTER6, V6, V6, true),
        (Topology::SIIT, V6, V4, true),
        (Topology::NAT44, V4, V4, true),
        (Topology::NAT64, V6, V4, true),
        (Topology::NAT66, V6, V6, true),
        (Topology::XLAT464, V4, V4, true),
        (Topology::DSLITE, V4, V4, true),
        (Topology::LW4O6, V4, V4, true),
        (Topology::MAPE, V4, V4, true),
        (Topology::MAPT, V6, V4, true),
        (Topology::DPDK_FWD, V4, V4, true),
    ];
    assert_eq!(expected.map(|e| e.0), Topology::ALL);
    for (t, left, right, reverse) in expected {
        let s = read(t).setup;
        assert_eq!((s.left.ip_version, s.right.ip_version), (left, right), "{t}");
        assert!(s.forward, "{t}");
        // Through the NATs the reverse direction is the Responder's (a stateful test).
        assert_eq!(s.reverse, reverse, "{t}");
        let mode = if t.uses_nat() { Stateful::InitiatorLeft } else { Stateful::Off };
        assert_eq!(s.stateful.mode, mode, "{t}");
        assert_eq!((s.fg_n, s.fg_m), (2, 2), "{t}");
    }
}

/// nat44, nat64 and nat66 write a ready stateful test (RFC 9693): Initiator left, the Responder
/// right (IPv4 for nat44 and nat64, IPv6 for nat66), phase 1 enumerating in pseudorandom order
/// every combination of the forward ports that phase 2 draws pseudorandomly, at least the
/// 1,000,000 connections of the must-show run; with N M R T D and the DUT command that empties
/// the connection table before every trial.
#[test]
fn the_nat_topologies_write_stateful_tests() {
    for t in [
        Topology::NAT44,
        Topology::NAT64,
        Topology::NAT66,
        Topology::XLAT464,
        Topology::DSLITE,
    ] {
        let cfg = read(t);
        xlat_config::validate(&cfg).unwrap_or_else(|e| panic!("{t}: {e}"));
        let s = &cfg.setup;
        assert_eq!(s.stateful.mode, Stateful::InitiatorLeft, "{t}");
        assert_eq!(s.stateful.enumerate_ports, Variation::Pseudorandom, "{t}");
        assert_eq!(s.stateful.enumerate_ips, Variation::Fixed, "{t}");
        assert_eq!(s.stateful.responder_tuples, Variation::Pseudorandom, "{t}");
        let responder = if t == Topology::NAT66 { IpVersion::V6 } else { IpVersion::V4 };
        assert_eq!(s.right.ip_version, responder, "{t}: the Responder's IP version");
        assert!(s.forward && s.reverse, "{t}");
        let p = s.forward_ports;
        for f in [p.sport, p.dport] {
            assert_eq!(f.variation, Variation::Pseudorandom, "{t}");
        }
        assert_eq!(
            (p.sport.min, p.sport.max, p.dport.min, p.dport.max),
            (10_000, 10_999, 1, 1000),
            "{t}"
        );
        let combinations = u64::from(p.sport.max - p.sport.min + 1) * u64::from(p.dport.max - p.dport.min + 1);
        let sf = t.stateful().expect("a NAT topology is stateful");
        assert_eq!((sf.preliminary_frames, sf.state_table), (combinations, combinations), "{t}");
        assert!(combinations >= 1_000_000, "{t}");
        assert_eq!(
            sf.phase_delay_ms,
            (1000 * sf.preliminary_frames).div_ceil(sf.preliminary_rate) + 2 * sf.preliminary_timeout_ms
        );
        // The file carries phase 1 and the DUT hook as keys the reader knows.
        let pre = xlat_config::preliminary(&cfg).unwrap_or_else(|e| panic!("{t}: {e}"));
        assert_eq!(
            (
                u64::from(pre.frames),
                u64::from(pre.state_table),
                pre.rate,
                pre.timeout_ms,
                pre.phase_delay_ms
            ),
            (1_000_000, 1_000_000, sf.preliminary_rate, 2000, sf.phase_delay_ms),
            "{t}"
        );
        // xlat464's chain of two TAYGAs on one core takes phase 1 at 20,000/s, nat64's TAYGA
        // at 30,000/s (D = ceil(1000 N / R) + 2 T).
        let (rate, delay) = if t == Topology::XLAT464 {
            (20_000, 54_000)
        } else if t == Topology::NAT64 {
            (30_000, 37_334)
        } else {
            (50_000, 24_000)
        };
        assert_eq!((pre.rate, pre.phase_delay_ms), (rate, delay), "{t}");
        assert_eq!(cfg.dut.before_trial.as_deref(), Some("ip netns exec xlat-dut conntrack -F"), "{t}");
        assert_eq!(cfg.dut.between_phases, None, "{t}");
    }
    for t in [
        Topology::ROUTER4,
        Topology::ROUTER6,
        Topology::SIIT,
        Topology::LW4O6,
        Topology::MAPE,
        Topology::MAPT,
    ] {
        // (The emitter writes every key: an unset one as a "# before_trial (not set)" comment.)
        assert!(
            t.stateful().is_none() && !config_toml(t).lines().any(|l| l.starts_with("before_trial")),
            "{t}"
        );
    }
}

#[test]
fn addresses_match_the_lab() {
    // (dpdk-fwd: testpmd answers no ARP; its MACs are written, lab_dpdk.rs.)
    for t in Topology::ALL.into_iter().filter(|t| !t.dut().dpdk()) {
        let s = read(t).setup;
        let (l, r) = (&s.left, &s.right);
        // dslite, lw4o6: the left tester is B4 2001:2::2 (the tunnel's local end) with no IPv4 on the
        // link; the AFTR, 2001:2::1, is resolved by NDP. mape: the tester's end is its CE address;
        // mapt: the CE address is the left tester's IPv6 address, 198.18.0.2 its IPv4 as the right
        // side reaches it, and the right tester is in the DMR prefix.
        let (b4, mapt) = (t.softwire(), t == Topology::MAPT);
        let ce = "2001:2:0:c021:0:c612:2:1";
        let tunnel = l.tunnel.map(|x| (x.local, x.remote));
        let local = if t == Topology::MAPE { ce } else { "2001:2::2" };
        assert_eq!(tunnel, b4.then(|| (v6(local).unwrap(), v6("2001:2::1").unwrap())), "{t}");
        let l6 = match (b4, mapt) {
            (true, _) => None,
            (_, true) => v6(ce),
            _ => v6("2001:2::2"),
        };
        assert_eq!((l.ipv4_real, l.ipv6_real), (v4("198.18.0.2"), l6), "{t}");
        assert_eq!((r.ipv4_real, r.ipv6_real), (v4("198.19.0.2"), v6("2001:2:0:8000::2")), "{t}");
        let l4 = if b4 || mapt { None } else { v4("198.18.0.1") };
        assert_eq!((l.dut_ipv4, l.dut_ipv6), (l4, v6("2001:2::1")), "{t}");
        assert_eq!((r.dut_ipv4, r.dut_ipv6), (v4("198.19.0.1"), v6("2001:2:0:8000::1")), "{t}");
        assert_eq!((l.dut_mac, r.dut_mac), (None, None), "{t}: the tester resolves the DUT by ARP/NDP");
        // siit: the left tester appears on the right as 198.18.1.2 (TAYGA's static map).
        let left_virt = if t == Topology::SIIT {
            v4("198.18.1.2")
        } else if mapt {
            v4("198.18.0.2")
        } else {
            None
        };
        assert_eq!(l.ipv4_virt, left_virt, "{t}");
        assert_eq!(l.ipv6_virt, None, "{t}");
        // TAYGA and mapt: the right tester is reached from the left inside the lab's NAT64 prefix.
        let right_virt = if [Topology::SIIT, Topology::NAT64, Topology::MAPT].contains(&t) {
            v6("2001:2:0:6464::198.19.0.2")
        } else {
            None
        };
        assert_eq!(r.ipv6_virt, right_virt, "{t}");
        assert_eq!(r.ipv4_virt, None, "{t}");
    }
}

#[test]
fn trial_defaults_and_cpus() {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    for t in Topology::ALL {
        let cfg = read(t);
        assert_eq!(
            (cfg.trial.frame_size, cfg.trial.rate, cfg.trial.duration_s, cfg.trial.timeout_ms),
            (84, None, 60.0, 2000),
            "{t}"
        );
        // The DUT on the highest CPU (every topology: the kernel's processing steered there,
        // TAYGA pinned there); the tester's workers on the others: on 2 CPUs its four roles
        // share CPU 0, with more a port each on CPUs 0 and 1.
        let (cpus, dut) = match n {
            0 | 1 => (Cpus::default(), Vec::new()),
            _ => {
                let right = if n == 2 { 0 } else { 1 };
                let c = Cpus {
                    left_send: Some(0),
                    left_recv: Some(0),
                    right_send: Some(right),
                    right_recv: Some(right),
                };
                (c, vec![n - 1])
            }
        };
        assert_eq!(cfg.dut.cpus, dut, "{t}");
        assert_eq!(cfg.tester.cpus, cpus, "{t}");
    }
}

#[test]
fn the_file_says_what_the_dut_is() {
    for t in Topology::ALL {
        let text = config_toml(t);
        let comment: Vec<&str> = text.lines().take_while(|l| l.starts_with('#')).collect();
        assert_eq!(
            comment.first().copied(),
            Some(format!("# written by `xlatperf lab up {t}`").as_str())
        );
        let dut = comment.get(1).copied().unwrap_or_default();
        let what = [
            (Topology::ROUTER4, "the Linux kernel forwarding IPv4"),
            (Topology::ROUTER6, "the Linux kernel forwarding IPv6"),
            (Topology::SIIT, "TAYGA stateless NAT64"),
            (Topology::NAT44, "nftables masquerade"),
            (Topology::NAT64, "TAYGA (prefix 2001:2:0:6464::/96"),
            (Topology::NAT66, "nftables IPv6 masquerade"),
            (Topology::XLAT464, "464XLAT (RFC 6877), two translators in a chain"),
            (Topology::DSLITE, "Dual-Stack Lite AFTR (RFC 6333)"),
            (Topology::LW4O6, "lightweight 4over6 lwAFTR (RFC 7596)"),
            (Topology::MAPE, "MAP-E border relay (RFC 7597)"),
            (Topology::MAPT, "MAP-T border relay (RFC 7599)"),
            (Topology::DPDK_FWD, "dpdk-testpmd (DPDK) forwarding in MAC mode"),
        ]
        .into_iter()
        .find_map(|(x, what)| (x == t).then_some(what))
        .expect("every topology's comment is checked");
        assert!(dut.starts_with(&format!("# DUT: {what}")), "{t}: {dut}");
    }
}

/// nat66: a stateful NAT66 test, both sides IPv6 on their real addresses (no virtual ones: the
/// Initiator sends to the Responder's own address, and the Responder sees the DUT's right
/// address 2001:2:0:8000::1, the file's comment says), with the same phase 1, ports and DUT hook
/// as nat44, so that the two files differ only in what IPv6 changes.
#[test]
fn nat66_is_nat44_on_ipv6() {
    let cfg = read(Topology::NAT66);
    xlat_config::validate(&cfg).unwrap_or_else(|e| panic!("{e}"));
    let s = &cfg.setup;
    assert_eq!((s.left.ip_version, s.right.ip_version), (IpVersion::V6, IpVersion::V6));
    assert_eq!((s.left.ipv6_real, s.right.ipv6_real), (v6("2001:2::2"), v6("2001:2:0:8000::2")));
    assert_eq!((s.left.dut_ipv6, s.right.dut_ipv6), (v6("2001:2::1"), v6("2001:2:0:8000::1")));
    assert_eq!(
        (s.left.ipv4_virt, s.left.ipv6_virt, s.right.ipv4_virt, s.right.ipv6_virt),
        (None, None, None, None)
    );
    let nat44 = read(Topology::NAT44);
    assert_eq!(s.stateful, nat44.setup.stateful);
    assert_eq!(
        (s.forward_ports, s.reverse_ports),
        (nat44.setup.forward_ports, nat44.setup.reverse_ports)
    );
    assert_eq!((s.forward, s.reverse, s.fg_n, s.fg_m), (true, true, 2, 2));
    assert_eq!(cfg.stateful, nat44.stateful);
    // The same DUT commands, but the reset stops IPv6's forwarding, not IPv4's.
    assert_eq!(
        xlat_trial::DutHooks {
            reset: None,
            ..cfg.dut.clone()
        },
        xlat_trial::DutHooks {
            reset: None,
            ..nat44.dut.clone()
        }
    );
    let reset = cfg.dut.reset.as_deref().unwrap_or_default();
    assert!(
        reset.contains("echo 0 > /proc/sys/net/ipv6/conf/all/forwarding") && !reset.contains("ipv4"),
        "{reset}"
    );
    assert_eq!(cfg.trial, nat44.trial);
    let text = config_toml(Topology::NAT66);
    assert!(text.contains("# stateful: the right side sees 2001:2:0:8000::1;"), "{text}");
    for key in [
        "mode = \"initiator-left\"",
        "enumerate_ports = \"pseudorandom\"",
        "responder_tuples = \"pseudorandom\"",
        "preliminary_frames = 1000000",
        "preliminary_rate = 50000",
        "preliminary_timeout_ms = 2000",
        "before_trial = \"ip netns exec xlat-dut conntrack -F\"",
    ] {
        assert!(text.lines().any(|l| l.starts_with(key)), "{key} missing in\n{text}");
    }
    // The same keys as nat44 writes, line for line, in [stateful] and [dut] (the reset
    // command's IP version aside).
    let section = |text: &str, name: &str| -> Vec<String> {
        text.lines()
            .skip_while(|l| *l != name)
            .skip(1)
            .take_while(|l| !l.starts_with('['))
            .map(|l| l.replace("ipv6/conf/all/forwarding", "ipv4/ip_forward"))
            .collect()
    };
    let nat44_text = config_toml(Topology::NAT44);
    for name in ["[stateful]", "[dut]"] {
        assert_eq!(section(&text, name), section(&nat44_text, name), "{name}");
        assert!(!section(&text, name).is_empty(), "{name}");
    }
}
