//! Tests of `topology.rs`.

use super::*;

/// `lab up --backend afxdp`: the same configuration with the afxdp backend.
#[test]
fn the_afxdp_backend_and_queues_are_written_when_asked() {
    for t in Topology::ALL {
        let text = config_toml_for(t, Some(Backend::AfXdp), 1, None);
        assert!(text.contains("backend = \"afxdp\""), "{t}: {text}");
        let back = xlat_config::parse_toml(&text, "lab.toml").unwrap_or_else(|e| panic!("{t}: {e}"));
        let mut want = config(t);
        want.tester.backend = Backend::AfXdp;
        assert_eq!((back.tester, back.setup), (want.tester, want.setup), "{t}");
        assert_eq!(config_toml_for(t, None, 1, None), config_toml(t));
        let two = config_toml_for(t, None, 2, None);
        assert!(two.contains("queues = 2"), "{t}: {two}");
        let mut want = config(t);
        want.tester.queues = 2;
        assert_eq!(xlat_config::parse_toml(&two, "lab.toml").unwrap().tester, want.tester);
    }
}

/// The same configuration, where it was read from aside.
fn assert_same(a: &TestConfig, b: &TestConfig, what: &str) {
    assert_eq!(a.setup, b.setup, "{what}");
    assert_eq!(a.tester, b.tester, "{what}");
    assert_eq!(a.trial, b.trial, "{what}");
}

fn splits() -> [Option<Placement>; 4] {
    let eight: Vec<usize> = (0..8).collect();
    [
        None,
        Placement::choose(None, &[0, 1], true).unwrap(),
        Placement::choose(None, &eight, true).unwrap(),
        Placement::choose(Some(&[2, 3]), &eight, false).unwrap(),
    ]
}

/// Every topology: the tester's workers on the tester's CPUs (one thread on 2 CPUs, a port
/// each with more), `dut.cpus` the DUT's, and the comment says where each runs.
#[test]
fn the_dut_gets_cpus_of_its_own_in_every_topology() {
    let all_on = |c: usize| Cpus {
        left_send: Some(c),
        right_recv: Some(c),
        right_send: Some(c),
        left_recv: Some(c),
    };
    let [none, two, eight, steer_off] = splits();
    for t in Topology::ALL {
        let cfg = config_for(t, two.as_ref());
        assert_eq!((cfg.tester.cpus, cfg.dut.cpus), (all_on(0), vec![1]), "{t}");
        // Every lab trial bounds the tester's catch-up bursts (docs/lab.md "The tester's stalls").
        // (dpdk-fwd's bound is half a virtio ring, duts/testpmd.rs.)
        let bound = if t.dut().dpdk() {
            crate::duts::testpmd::DPDK_FWD_MAX_SEND_LAG_FRAMES
        } else {
            250
        };
        assert_eq!(cfg.tester.max_send_lag_frames, Some(bound), "{t}");
        // dpdk-fwd's tester fills its virtio receive rings (duts/testpmd.rs); the others keep DPDK's
        // default.
        let ring = t.dut().dpdk().then_some(crate::duts::testpmd::VIRTIO_QUEUE_SIZE);
        assert_eq!((cfg.tester.rx_descriptors, cfg.tester.tx_descriptors), (ring, None), "{t}");
        let cfg = config_for(t, eight.as_ref());
        let ports = Cpus {
            left_send: Some(0),
            left_recv: Some(0),
            right_send: Some(1),
            right_recv: Some(1),
        };
        assert_eq!((cfg.tester.cpus, cfg.dut.cpus), (ports, vec![7]), "{t}");
        assert_eq!(config_for(t, none.as_ref()).tester.cpus, Cpus::default(), "{t}");
        let c = config_comment(t, two.as_ref());
        let how = if t.dut().dpdk() {
            "on CPU 1 (polling: 100 % busy whatever it forwards)"
        } else {
            "on CPU 1 (steered by RPS)"
        };
        assert!(c.contains(&format!("{how}; the tester's senders and receivers share CPU 0")), "{c}");
        assert_eq!(c.contains("TAYGA"), t.uses_tayga(), "{c}");
        if !t.dut().dpdk() {
            assert!(config_comment(t, steer_off.as_ref()).contains("on CPU 2-3 (NOT steered"), "{t}");
        }
        assert!(config_comment(t, none.as_ref()).contains("one CPU"), "{t}");
    }
    assert!(config_comment(Topology::XLAT464, two.as_ref()).contains("both TAYGAs and the kernel's packet processing"));
    // This machine's file: the default placement (the DUT on the highest CPU).
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    for t in Topology::ALL {
        let cfg = xlat_config::parse_toml(&config_toml(t), "lab.toml").unwrap();
        let dut = if n >= 2 { vec![n - 1] } else { Vec::new() };
        assert_eq!(cfg.dut.cpus, dut, "{t}");
    }
}

#[test]
fn names_round_trip() {
    for t in Topology::ALL {
        assert_eq!(t.to_string().parse::<Topology>().unwrap(), t);
        assert_eq!(serde_json::to_string(&t).unwrap(), format!("\"{t}\""));
    }
    assert_eq!(" Router4 ".parse::<Topology>().unwrap(), Topology::ROUTER4);
    let e = "router5".parse::<Topology>().unwrap_err();
    assert!(matches!(e, LabError::UnknownTopology { .. }));
    // The list is every topology there is (it once forgot lw4o6).
    let listed = e.to_string();
    for t in Topology::ALL {
        assert!(listed.contains(t.name()), "{t} not in {listed}");
    }
    // The other names a user may try.
    assert_eq!("MAP-T".parse::<Topology>().unwrap(), Topology::MAPT);
    assert_eq!("map-e".parse::<Topology>().unwrap(), Topology::MAPE);
    assert_eq!("464XLAT".parse::<Topology>().unwrap(), Topology::XLAT464);
    assert_eq!("ds-lite".parse::<Topology>().unwrap(), Topology::DSLITE);
    assert!("".parse::<Topology>().is_err());
}

/// The file reads back, with the config crate's own reader, as the typed value it was
/// written from, and opens with the comment that says what the DUT is.
#[test]
fn every_file_reads_back_as_its_typed_value() {
    for t in Topology::ALL {
        for split in splits() {
            let cfg = config_for(t, split.as_ref());
            xlat_config::validate(&cfg).unwrap_or_else(|e| panic!("{t}: {e}"));
            let text = to_toml_with_comment(&cfg, &config_comment(t, split.as_ref()));
            let back = xlat_config::parse_toml(&text, "lab.toml").unwrap_or_else(|e| panic!("{t}: {e}\n{text}"));
            assert_same(&cfg, &back, &format!("{t} {split:?}"));
            assert_eq!(cfg.dut, back.dut, "{t} {split:?}");
            let head: Vec<&str> = text.lines().take_while(|l| l.starts_with('#')).collect();
            assert_eq!(head[0], format!("# written by `xlatperf lab up {t}`"));
            assert!(head[1].starts_with("# DUT: "), "{text}");
        }
        let back = xlat_config::parse_toml(&config_toml(t), "lab.toml").unwrap();
        assert_same(&config(t), &back, t.name());
    }
}

/// What `xlatperf lab up router4` wrote before the lab used the config crate's writer: the
/// file it writes now means the same.
#[test]
fn router4_means_what_it_meant() {
    let before = r#"# written by `xlatperf lab up router4`
# DUT: the Linux kernel forwarding IPv4 in namespace xlat-dut
[tester]
backend = "afpacket"
left_port = "xlat-tl"
right_port = "xlat-tr"
netns = "xlat-tester"
max_send_lag_frames = 250

[left]
ip_version = 4
ipv4_real = "198.18.0.2"
ipv6_real = "2001:2::2"
dut_ipv4 = "198.18.0.1"
dut_ipv6 = "2001:2::1"

[right]
ip_version = 4
ipv4_real = "198.19.0.2"
ipv6_real = "2001:2:0:8000::2"
dut_ipv4 = "198.19.0.1"
dut_ipv6 = "2001:2:0:8000::1"

[traffic]
forward = true
reverse = true
foreground = { n = 2, m = 2 }

[trial]
frame_size = 84
duration = 60
timeout_ms = 2000
"#;
    let before = xlat_config::parse_toml(before, "before.toml").unwrap();
    // The same, but for where the tester and the DUT run: the placement (tested above) adds
    // tester.cpus and dut.cpus. (The bound of the tester's lag is new: a trial the tester's
    // stall made bursty is invalid now, docs/lab.md "The tester's stalls".)
    assert_same(&before, &config_for(Topology::ROUTER4, None), "router4");
    let now = config_toml(Topology::ROUTER4);
    assert!(now.starts_with("# written by `xlatperf lab up router4`\n# DUT: the Linux kernel forwarding IPv4 in namespace xlat-dut\n"));
}

#[test]
fn versions_and_virtual_addresses() {
    let v = |t: Topology| {
        let c = config(t);
        (c.setup.left.ip_version.number(), c.setup.right.ip_version.number())
    };
    for t in Topology::ALL {
        assert_eq!(v(t), t.ip_versions(), "{t}");
    }
    assert_eq!(v(Topology::ROUTER6), (6, 6));
    assert_eq!(v(Topology::SIIT), (6, 4));
    assert_eq!(v(Topology::NAT66), (6, 6));
    let nat66 = config(Topology::NAT66).setup;
    assert_eq!(
        (nat66.left.ipv6_real, nat66.right.ipv6_real),
        (v6(TESTER_LEFT_IPV6), v6(TESTER_RIGHT_IPV6))
    );
    assert_eq!(
        (nat66.left.ipv4_virt, nat66.right.ipv4_virt, nat66.right.ipv6_virt),
        (None, None, None)
    );
    let siit = config(Topology::SIIT).setup;
    assert_eq!(siit.left.ipv4_virt, Some(Ipv4Addr::new(198, 18, 1, 2)));
    assert_eq!(siit.right.ipv6_virt, Some("2001:2:0:6464::198.19.0.2".parse().unwrap()));
    assert_eq!(config(Topology::NAT64).setup.left.ipv4_virt, None);
    assert!(config(Topology::NAT64).setup.right.ipv6_virt.is_some());
    for t in Topology::ALL {
        assert!(config(t).setup.forward && config(t).setup.reverse, "{t}");
    }
}

/// nat44, nat64 and nat66 are stateful tests, Initiator left (an IPv4 Responder for nat44
/// and nat64, an IPv6 one for nat66); the others stay stateless.
#[test]
fn the_nat_topologies_are_stateful() {
    for t in Topology::ALL {
        let s = config(t).setup;
        if !t.uses_nat() {
            assert_eq!(s.stateful, StatefulSpec::default(), "{t}");
            // (lw4o6's, mape's and mapt's ports are in their port sets:
            // lw4o6_ports_are_the_testers_port_set, map_tester_is_the_ce_the_rule_gives.)
            if t != Topology::LW4O6 && !t.dut().map_rule() {
                assert_eq!(s.forward_ports, PortSpec::default(), "{t}");
            }
            assert!(t.stateful().is_none(), "{t}");
            // (The writer writes every key: an unset one as a "# preliminary_frames (not
            // set)" comment.)
            assert!(!config_toml(t).lines().any(|l| l.starts_with("preliminary")), "{t}");
            continue;
        }
        assert_eq!(s.stateful.mode, Stateful::InitiatorLeft, "{t}");
        assert_eq!(s.stateful.enumerate_ports, Variation::Pseudorandom, "{t}");
        assert_eq!(s.stateful.enumerate_ips, Variation::Fixed, "{t}");
        assert_eq!(s.stateful.responder_tuples, Variation::Pseudorandom, "{t}");
        let responder = if t == Topology::NAT66 { IpVersion::V6 } else { IpVersion::V4 };
        assert_eq!(s.right.ip_version, responder, "{t}");
        let p = s.forward_ports;
        assert_eq!(
            (p.sport.variation, p.dport.variation),
            (Variation::Pseudorandom, Variation::Pseudorandom)
        );
        let combinations = u64::from(p.sport.max - p.sport.min + 1) * u64::from(p.dport.max - p.dport.min + 1);
        let sf = t.stateful().unwrap();
        // Phase 1 enumerates every combination exactly once: N = M = the combinations.
        assert_eq!(combinations, sf.preliminary_frames, "{t}");
        assert_eq!(sf.state_table, sf.preliminary_frames, "{t}");
        assert!(sf.preliminary_frames >= 1_000_000, "{t}: the must-show run needs 1,000,000");
        // The file the lab writes says what it means: it reads back as the same test (every
        // rule between N, M, R and the ranges checked on the way), the flush runs before every
        // trial and is the tear-down's delete-all, and the count the procedures read is there.
        let back = xlat_config::parse_toml(&config_toml(t), "lab.toml").unwrap_or_else(|e| panic!("{t}: {e}"));
        assert_eq!(back.setup, s, "{t}");
        assert_eq!(back.dut.before_trial, Some(sf.before_trial), "{t}");
        assert_eq!(back.dut.delete_all, back.dut.before_trial, "{t}");
        assert!(back.dut.count.is_some(), "{t}");
    }
}

/// D = ceil(1000 N / R) + 2 T (siitperf's, rounded up), and the DUT forgets nothing before phase 2 ends; its
/// table holds twice the lab's connections.
#[test]
fn stateful_timing_fits_the_dut() {
    assert_eq!(StatefulLab::default().phase_delay_ms, STATEFUL_PHASE_DELAY_MS);
    for t in Topology::ALL.into_iter().filter(|t| t.uses_nat()) {
        let sf = t.stateful().unwrap();
        assert_eq!(
            sf.phase_delay_ms,
            (1000 * sf.preliminary_frames).div_ceil(sf.preliminary_rate) + 2 * sf.preliminary_timeout_ms
        );
        // TAYGA creates its pool mappings slower than conntrack its entries; xlat464's chain of
        // two TAYGAs on one core forwards about 30,000 frames/s.
        let rate = if t == Topology::XLAT464 {
            20_000
        } else if t == Topology::NAT64 {
            30_000
        } else {
            50_000
        };
        assert_eq!(sf.preliminary_rate, rate, "{t}");
        let trial = config(t).trial;
        let end_of_phase2_s = (sf.phase_delay_ms + trial.timeout_ms) as f64 / 1000.0 + trial.duration_s;
        assert!((CONNTRACK_UDP_TIMEOUT_S as f64) > 5.0 * end_of_phase2_s, "{t}: {end_of_phase2_s}");
        assert!(CONNTRACK_MAX >= 2 * sf.state_table);
    }
    const { assert!(CONNTRACK_MAX >= 2_000_000 && CONNTRACK_BUCKETS >= 2_000_000) };
}

#[test]
fn addresses_parse_and_stay_in_benchmarking_ranges() {
    let v6: Ipv6Addr = RIGHT_IPV6_VIRT.parse().unwrap();
    assert_eq!(v6.segments()[..6], [0x2001, 2, 0, 0x6464, 0, 0]);
    assert_eq!(v6.segments()[6..], [0xc613, 0x0002]);
    for a in [
        TESTER_LEFT_IPV4,
        TESTER_RIGHT_IPV4,
        SIIT_LEFT_IPV4_VIRT,
        TAYGA_IPV4,
        addr(DUT_LEFT_IPV4),
        addr(DUT_RIGHT_IPV4),
        addr(CLAT_MAP_IPV4),
        addr(CLAT_IPV4_ROUTE),
    ] {
        let o = a.parse::<std::net::Ipv4Addr>().unwrap().octets();
        assert!(o[0] == 198 && (o[1] == 18 || o[1] == 19), "{a}");
    }
    for a in [
        TESTER_LEFT_IPV6,
        TESTER_RIGHT_IPV6,
        addr(DUT_LEFT_IPV6),
        addr(DUT_RIGHT_IPV6),
        addr(NAT64_PREFIX),
        addr(CLAT_RIGHT_IPV6),
        addr(CLAT_PREFIX),
        addr(CLAT_MAP_IPV6),
    ] {
        let s = a.parse::<Ipv6Addr>().unwrap().segments();
        assert_eq!(s[..3], [0x2001, 2, 0], "{a}");
    }
}

/// xlat464: the tester sees IPv4 on both sides, as through nat44 (the DUT's left address is
/// the CLAT's), with the same stateful test; the CLAT's map puts the left tester into the
/// CLAT-side prefix by RFC 6052's /96 rule, and the two prefixes differ.
#[test]
fn xlat464_is_nat44_to_the_tester_with_a_clat_in_front() {
    let (x, n) = (config(Topology::XLAT464).setup, config(Topology::NAT44).setup);
    assert_eq!(x, n);
    assert_eq!(Topology::XLAT464.namespaces(), &[TESTER_NS, DUT_NS, CLAT_NS]);
    assert_eq!(Topology::NAT64.namespaces(), &[TESTER_NS, DUT_NS]);
    assert_eq!(Topology::XLAT464.left_peer(), (CLAT_NS, CLAT_LEFT));
    assert_eq!(Topology::ROUTER4.left_peer(), (DUT_NS, DUT_LEFT));
    assert_eq!(Topology::XLAT464.links().len(), LINK_NAMES.len());
    assert!(!Topology::NAT64.links().contains(&CLAT_LEFT) && Topology::NAT64.links().contains(&TAYGA_TUN));
    assert!(!Topology::NAT44.links().contains(&TAYGA_TUN));
    let map4: Ipv4Addr = addr(CLAT_MAP_IPV4).parse().unwrap();
    let map6: Ipv6Addr = addr(CLAT_MAP_IPV6).parse().unwrap();
    let prefix: Ipv6Addr = addr(CLAT_PREFIX).parse().unwrap();
    assert_eq!(map6.segments()[..6], prefix.segments()[..6]);
    assert_eq!(u128::from(map6) as u32, u32::from(map4));
    // The map's host bits match: /17 <-> /113.
    let len = |s: &str| s.rsplit('/').next().unwrap().parse::<u32>().unwrap();
    assert_eq!(len(CLAT_MAP_IPV4) + 96, len(CLAT_MAP_IPV6));
    assert_ne!(addr(CLAT_PREFIX), addr(NAT64_PREFIX));
    let left: Ipv4Addr = TESTER_LEFT_IPV4.parse().unwrap();
    assert_eq!(
        u32::from(left) >> (32 - len(CLAT_MAP_IPV4)),
        u32::from(map4) >> (32 - len(CLAT_MAP_IPV4))
    );
}

/// dslite: the AFTR is the DUT's left address, the B4s a /112 of the left link (2001:2::2, the
/// tester's left address, is B4 2), and the tester's left side is that B4: IPv4 in IPv6 to the
/// AFTR, the AFTR's MAC by NDP, the NAT44 stateful test.
#[test]
fn dslite_addresses_and_the_b4_side() {
    assert_eq!(DSLITE_AFTR, addr(DUT_LEFT_IPV6));
    let (b4, len) = DSLITE_B4_PREFIX.split_once('/').unwrap();
    assert_eq!(len, "112");
    let b4: Ipv6Addr = b4.parse().unwrap();
    let tester: Ipv6Addr = TESTER_LEFT_IPV6.parse().unwrap();
    assert_eq!(u128::from(tester) >> 16, u128::from(b4) >> 16);
    assert_eq!(b4.segments()[..3], [0x2001, 2, 0]);
    let route: std::net::Ipv4Addr = DSLITE_B4_IPV4_ROUTE.split('/').next().unwrap().parse().unwrap();
    assert_eq!(route.octets()[..2], [198, 18]);
    assert_eq!("dslite".parse::<Topology>().unwrap(), Topology::DSLITE);
    let c = config(Topology::DSLITE);
    let t = c.setup.left.tunnel.expect("the left side is a B4");
    assert_eq!((t.local, t.remote), (tester, DSLITE_AFTR.parse().unwrap()));
    assert_eq!((c.setup.left.dut_ipv4, c.setup.left.dut_ipv6), (None, Some(t.remote)));
    assert!(c.setup.right.tunnel.is_none());
    assert_eq!(c.setup.stateful.mode, config(Topology::NAT44).setup.stateful.mode);
    assert_eq!(Topology::DSLITE.nat_family(), Some("ip"));
    assert_eq!(Topology::DSLITE.forwarding(), (true, false));
}

/// lw4o6: the left tester is the binding table's first lwB4, and its `left.map` (one lwB4
/// unless told more) reads the binding table: subscriber k is binding k, its port set the
/// binding's; stateless (no NAT, no stateful test).
#[test]
fn lw4o6_ports_are_the_testers_port_set() {
    assert_eq!("lw4o6".parse::<Topology>().unwrap(), Topology::LW4O6);
    let c = config(Topology::LW4O6);
    let t = c.setup.left.tunnel.expect("the left side is an lwB4");
    let (v4, psid, b4) = crate::duts::lwaftr::binding(0);
    assert_eq!((t.local, t.remote), (b4, DSLITE_AFTR.parse().unwrap()));
    assert_eq!(c.setup.left.ipv4_real, Some(v4));
    assert_eq!(crate::duts::lwaftr::port_set(psid), LW4O6_PORTS);
    let map = c.setup.left.map.expect("the lwB4s");
    assert_eq!((map.subscribers, map.ports, map.binding_psid), (1, None, Some(psid)));
    assert_eq!(
        (c.setup.forward_ports, c.setup.reverse_ports),
        (PortSpec::default(), PortSpec::default())
    );
    // The rule's order is the table's: binding k is CE k after the tester's, its ports the
    // rule's set of its PSID.
    let rule = map.rule;
    let own = rule.index(xlat_traffic::maprule::Ce { ipv4: v4, psid }).unwrap();
    for k in [0u32, 1, 62, 63, 5000, LW4O6_BINDINGS - 1] {
        let (v4k, psid_k, b4k) = crate::duts::lwaftr::binding(k);
        let ce = rule.ce(own + u64::from(k)).unwrap();
        assert_eq!((ce.ipv4, ce.psid), (v4k, psid_k), "binding {k}");
        assert_eq!(u128::from(b4k) - u128::from(b4), u128::from(k));
        let (lo, hi) = crate::duts::lwaftr::port_set(psid_k);
        let n = rule.ports_per_set() - 1;
        assert_eq!((rule.port(psid_k, 0), rule.port(psid_k, n)), (Some(lo), Some(hi)), "binding {k}");
    }
    assert!(Topology::LW4O6.stateful().is_none() && !Topology::LW4O6.uses_nat());
    assert_eq!(Topology::LW4O6.forwarding(), (true, false));
    assert!(Topology::LW4O6.softwire() && Topology::DSLITE.softwire() && !Topology::XLAT464.softwire());
}

/// mape and mapt: the rule is the one names.rs describes, and the left tester is the CE it gives
/// the tester's address with PSID 1: its address worked by hand (suffix 2 of the /22 and PSID 1
/// are the EA bits 0x21 after the /50; the interface identifier 0:c612:2:1), its ports the first
/// range of its set, forward source and reverse destination; stateless. mape's tunnel starts at
/// the CE address; mapt's left side sends from it (no tunnel) to the DMR prefix, where the right
/// tester's address is embedded (RFC 6052, /96), and the right side reaches it at 198.18.0.2.
#[test]
fn map_tester_is_the_ce_the_rule_gives() {
    use xlat_traffic::maprule::Ce;
    let rule = map_rule().expect("names.rs's rule");
    assert_eq!((rule.psid_len(), rule.ces(), rule.ports_per_set()), (4, 16_384, 63 * 64));
    let ce: std::net::Ipv6Addr = "2001:2:0:c021:0:c612:2:1".parse().unwrap();
    assert_eq!(map_tester_ce(), Some(ce));
    let tester = Ce {
        ipv4: TESTER_LEFT_IPV4.parse().unwrap(),
        psid: MAP_TESTER_PSID,
    };
    assert_eq!(rule.ce_of(ce), Some(tester));
    assert_eq!(
        (rule.port(1, 0), rule.port(1, 63), rule.port(1, 64)),
        (Some(MAP_PORTS.0), Some(MAP_PORTS.1), Some(2112))
    );
    // The CEs choose the ports: one CE (the tester's), its whole set.
    let one_ce_of_its_whole_set = |s: &xlat_traffic::Setup| {
        let map = xlat_traffic::SideMap {
            rule,
            subscribers: 1,
            ports: None,
            binding_psid: None,
        };
        assert_eq!(s.left.map, Some(map));
        assert_eq!((s.forward_ports, s.reverse_ports), (PortSpec::default(), PortSpec::default()));
    };
    let c = config(Topology::MAPE);
    let t = c.setup.left.tunnel.expect("the left side is a CE");
    assert_eq!((t.local, t.remote), (ce, DSLITE_AFTR.parse().unwrap()));
    one_ce_of_its_whole_set(&c.setup);
    assert!(Topology::MAPE.stateful().is_none() && Topology::MAPE.softwire());
    assert_eq!(Topology::MAPE.forwarding(), (true, false));

    let c = config(Topology::MAPT);
    let (l, r) = (&c.setup.left, &c.setup.right);
    assert_eq!(
        config_toml(Topology::MAPT).parse::<toml::Table>().unwrap()["left"]["map"]["subscribers"].as_integer(),
        Some(1)
    );
    assert_eq!(
        (l.tunnel, l.ipv6_real, l.ipv4_virt, l.dut_ipv4),
        (None, Some(ce), Some(tester.ipv4), None)
    );
    let dmr = (MAPT_DMR.split('/').next().unwrap().parse().unwrap(), 96);
    let right4 = TESTER_RIGHT_IPV4.parse().unwrap();
    assert_eq!(r.ipv6_virt, xlat_traffic::maprule::embed(dmr.0, dmr.1, right4));
    assert_eq!(MAPT_DMR, "2001:2:0:6464::/96");
    one_ce_of_its_whole_set(&c.setup);
    assert!(Topology::MAPT.stateful().is_none() && !Topology::MAPT.softwire() && Topology::MAPT.dut().left_ipv6_only());
    assert_eq!(Topology::MAPT.forwarding(), (true, false));
}
