//! The configuration `xlatperf lab up` writes for each topology, read by the config crate's own
//! reader, says what the lab builds: the tester's ports and namespace, each side's IP version
//! and addresses, the directions. Needs no root: nothing is built, only the file's text is made.

use std::net::{Ipv4Addr, Ipv6Addr};
use xlat_config::{parse_toml, Backend, Cpus, SourceKind, TestConfig};
use xlat_lab::{config, config_toml, Topology};
use xlat_traffic::{IpVersion, Stateful};

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
    for t in Topology::ALL {
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
        (Topology::Router4, V4, V4, true),
        (Topology::Router6, V6, V6, true),
        (Topology::Siit, V6, V4, true),
        (Topology::Nat44, V4, V4, false),
        (Topology::Nat64, V6, V4, false),
    ];
    assert_eq!(expected.map(|e| e.0), Topology::ALL);
    for (t, left, right, reverse) in expected {
        let s = read(t).setup;
        assert_eq!((s.left.ip_version, s.right.ip_version), (left, right), "{t}");
        assert!(s.forward, "{t}");
        assert_eq!(s.reverse, reverse, "{t}: the NAT topologies only open mappings from the left");
        assert_eq!(s.stateful.mode, Stateful::Off, "{t}");
        assert_eq!((s.fg_n, s.fg_m), (2, 2), "{t}");
    }
}

#[test]
fn addresses_match_the_lab() {
    for t in Topology::ALL {
        let s = read(t).setup;
        let (l, r) = (&s.left, &s.right);
        assert_eq!((l.ipv4_real, l.ipv6_real), (v4("198.18.0.2"), v6("2001:2::2")), "{t}");
        assert_eq!((r.ipv4_real, r.ipv6_real), (v4("198.19.0.2"), v6("2001:2:0:8000::2")), "{t}");
        assert_eq!((l.dut_ipv4, l.dut_ipv6), (v4("198.18.0.1"), v6("2001:2::1")), "{t}");
        assert_eq!((r.dut_ipv4, r.dut_ipv6), (v4("198.19.0.1"), v6("2001:2:0:8000::1")), "{t}");
        assert_eq!((l.dut_mac, r.dut_mac), (None, None), "{t}: the tester resolves the DUT by ARP/NDP");
        // siit: the left tester appears on the right as 198.18.1.2 (TAYGA's static map).
        let left_virt = if t == Topology::Siit { v4("198.18.1.2") } else { None };
        assert_eq!(l.ipv4_virt, left_virt, "{t}");
        assert_eq!(l.ipv6_virt, None, "{t}");
        // TAYGA: the right tester is reached from the left inside the lab's NAT64 prefix.
        let right_virt = if matches!(t, Topology::Siit | Topology::Nat64) {
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
    let two_cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) == 2;
    for t in Topology::ALL {
        let cfg = read(t);
        assert_eq!(
            (cfg.trial.frame_size, cfg.trial.rate, cfg.trial.duration_s, cfg.trial.timeout_ms),
            (84, None, 60.0, 2000),
            "{t}"
        );
        // On a 2-CPU machine TAYGA gets CPU 1 and the tester's four roles share CPU 0.
        let cpus = if two_cpus && matches!(t, Topology::Siit | Topology::Nat64) {
            Cpus {
                left_send: Some(0),
                right_recv: Some(0),
                right_send: Some(0),
                left_recv: Some(0),
            }
        } else {
            Cpus::default()
        };
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
        let what = match t {
            Topology::Router4 => "the Linux kernel forwarding IPv4",
            Topology::Router6 => "the Linux kernel forwarding IPv6",
            Topology::Siit => "TAYGA stateless NAT64",
            Topology::Nat44 => "nftables masquerade",
            Topology::Nat64 => "TAYGA (prefix 2001:2:0:6464::/96",
        };
        assert!(dut.starts_with(&format!("# DUT: {what}")), "{t}: {dut}");
    }
}
