//! Each cross-key rule of siitperf (docs/config.md, "Rules between keys") and of xlatperf triggers its own error
//! variant, whose message names every key involved.

use xlat_config::{parse_siitperf, parse_toml, parse_with_overrides, ConfigError, SourceKind};

/// A valid bidirectional IPv4 router test.
const BASE4: &str = "IP-L-Vers 4\nIP-R-Vers 4\nIPv4-L-Real 198.18.0.2\nIPv4-R-Real 198.19.0.2\n\
MAC-L-DUT 02:00:00:00:00:01\nMAC-R-DUT 02:00:00:00:00:02\nForward 1\nReverse 1\n";

fn conf_err(extra: &str) -> ConfigError {
    match parse_siitperf(&format!("{BASE4}{extra}"), "siitperf.conf") {
        Ok(_) => panic!("accepted:\n{extra}"),
        Err(e) => e,
    }
}

fn names(e: &ConfigError, keys: &[&str]) {
    let msg = e.to_string();
    for k in keys {
        assert!(msg.contains(&format!("'{k}'")), "message does not name '{k}': {msg}");
    }
}

#[test]
fn base_is_valid() {
    parse_siitperf(BASE4, "siitperf.conf").expect("base");
}

#[test]
fn rule_enumeration_in_stateless_test() {
    let e = conf_err("Enumerate-ports 3\n");
    assert!(matches!(e, ConfigError::EnumerationInStatelessTest { .. }), "{e}");
    names(&e, &["Enumerate-ports", "Stateful"]);
    assert!(e.to_string().starts_with("siitperf.conf:9: "), "{e}");
    let e = conf_err("Enumerate-ips 1\nIP-L-var 3\nIP-R-var 3\n");
    assert!(matches!(e, ConfigError::EnumerationInStatelessTest { .. }), "{e}");
    names(&e, &["Enumerate-ips", "Stateful"]);
}

#[test]
fn rule_port_enumeration_with_nets_on_the_responder_side() {
    let e = conf_err("Stateful 1\nEnumerate-ports 3\nNum-R-Nets 2\n");
    assert!(matches!(e, ConfigError::PortEnumerationWithNets { nets: 2, .. }), "{e}");
    names(&e, &["Enumerate-ports", "Num-R-Nets"]);
    let e = conf_err("Stateful 2\nEnumerate-ports 3\nNum-L-Nets 256\n");
    assert!(matches!(e, ConfigError::PortEnumerationWithNets { nets: 256, .. }), "{e}");
    names(&e, &["Enumerate-ports", "Num-L-Nets"]);
    // More networks on the Initiator's side are fine.
    parse_siitperf(&format!("{BASE4}Stateful 1\nEnumerate-ports 3\nNum-L-Nets 2\n"), "siitperf.conf").expect("initiator side nets");
}

#[test]
fn rule_varying_ips_with_nets() {
    let e = conf_err("IP-L-var 3\nNum-R-Nets 4\n");
    assert!(matches!(e, ConfigError::VaryingIpsWithNets { nets: 4, .. }), "{e}");
    names(&e, &["IP-L-var", "Num-R-Nets"]);
}

#[test]
fn rule_enumeration_orders_differ() {
    let e = conf_err("Stateful 1\nEnumerate-ports 1\nEnumerate-ips 3\nIP-L-var 3\nIP-R-var 3\n");
    assert!(matches!(e, ConfigError::EnumerationMismatch { .. }), "{e}");
    names(&e, &["Enumerate-ports", "Enumerate-ips"]);
    // The same order, or one of them zero: fine.
    parse_siitperf(
        &format!("{BASE4}Stateful 1\nEnumerate-ports 2\nEnumerate-ips 2\nIP-L-var 3\nIP-R-var 3\n"),
        "c",
    )
    .expect("same");
}

#[test]
fn rule_port_enumeration_and_varying_ips_need_ip_enumeration() {
    let e = conf_err("Stateful 1\nEnumerate-ports 3\nIP-L-var 3\n");
    assert!(matches!(e, ConfigError::PortEnumerationWithoutIpEnumeration { .. }), "{e}");
    names(&e, &["Enumerate-ports", "IP-L-var", "Enumerate-ips"]);
}

#[test]
fn rule_ip_enumeration_and_varying_ports_need_port_enumeration() {
    let e = conf_err("Stateful 1\nEnumerate-ips 3\nIP-L-var 3\nIP-R-var 3\nFwd-var-dport 3\n");
    assert!(matches!(e, ConfigError::IpEnumerationWithoutPortEnumeration { .. }), "{e}");
    names(&e, &["Enumerate-ips", "Fwd-var-dport", "Enumerate-ports"]);
    // Initiator on the right: phase 1 uses the reverse ports.
    let e = conf_err("Stateful 2\nEnumerate-ips 3\nIP-L-var 3\nIP-R-var 3\nRev-var-sport 3\n");
    assert!(matches!(e, ConfigError::IpEnumerationWithoutPortEnumeration { .. }), "{e}");
    names(&e, &["Enumerate-ips", "Rev-var-sport", "Enumerate-ports"]);
}

#[test]
fn rule_ip_enumeration_with_fixed_ips() {
    let e = conf_err("Stateful 1\nEnumerate-ips 3\nIP-L-var 3\n");
    assert!(matches!(e, ConfigError::IpEnumerationWithFixedIps { .. }), "{e}");
    names(&e, &["Enumerate-ips", "IP-R-var"]);
    let e = conf_err("Stateful 1\nEnumerate-ips 3\nIP-R-var 1\n");
    names(&e, &["Enumerate-ips", "IP-L-var"]);
}

#[test]
fn rule_at_least_one_direction() {
    let e = conf_err("Forward 0\nReverse 0\n");
    assert!(matches!(e, ConfigError::NoDirection { .. }), "{e}");
    names(&e, &["Forward", "Reverse"]);
    // Absent means 0 in a siitperf.conf.
    let e = parse_siitperf("IP-L-Vers 4\nIP-R-Vers 4\n", "siitperf.conf").expect_err("no direction");
    assert!(matches!(e, ConfigError::NoDirection { .. }), "{e}");
}

#[test]
fn rule_min_not_above_max() {
    let e = conf_err("IP-L-min 5\nIP-L-max 4\n");
    assert!(matches!(e, ConfigError::RangeInverted { min: 5, max: 4, .. }), "{e}");
    names(&e, &["IP-L-min", "IP-L-max"]);
    let e = conf_err("Rev-dport-min 0x100\nRev-dport-max 0xff\n");
    assert!(matches!(e, ConfigError::RangeInverted { min: 256, max: 255, .. }), "{e}");
    names(&e, &["Rev-dport-min", "Rev-dport-max"]);
}

#[test]
fn rule_ipv4_offset_only_2() {
    let e = conf_err("IPv4-L-offset 1\n");
    assert!(matches!(e, ConfigError::BadValue { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.starts_with("siitperf.conf:9: key 'IPv4-L-offset': 1 is not allowed (only 2"),
        "{msg}"
    );
    assert!(msg.contains("offset 1"), "{msg}");
    parse_siitperf(&format!("{BASE4}IPv4-L-offset 2\nIPv4-R-offset 0x2\n"), "c").expect("2 is fine");
}

#[test]
fn rule_ipv6_offset_6_to_14_even() {
    for bad in ["4", "5", "7", "13", "15", "16"] {
        let e = conf_err(&format!("IPv6-R-offset {bad}\n"));
        assert_eq!(
            e.to_string(),
            format!("siitperf.conf:9: key 'IPv6-R-offset': {bad} is not allowed (6-14, even)")
        );
    }
    for good in ["6", "8", "10", "12", "14"] {
        parse_siitperf(&format!("{BASE4}IPv6-R-offset {good}\n"), "c").expect(good);
    }
}

#[test]
fn rule_needed_addresses_are_set() {
    // SIIT 6/4 without the right side's IPv6 virtual address.
    let text = "IP-L-Vers 6\nIP-R-Vers 4\nIPv6-L-Real 2001:2::2\nIPv4-R-Real 198.19.0.2\nIPv4-L-Virt 198.18.0.2\n\
                MAC-L-DUT 02:00:00:00:00:01\nMAC-R-DUT 02:00:00:00:00:02\nForward 1\nReverse 1\n";
    let e = parse_siitperf(text, "siitperf.conf").expect_err("missing IPv6-R-Virt");
    assert!(matches!(e, ConfigError::AddressNeeded { .. }), "{e}");
    names(&e, &["IPv6-R-Virt", "IP-L-Vers", "IP-R-Vers", "Forward", "IPv6-L-Real"]);
    // Only the forward direction: not needed.
    parse_with_overrides(text, "siitperf.conf", SourceKind::SiitperfConf, &[("Forward".into(), "0".into())]).expect("reverse only");
    // Background traffic needs both sides' IPv6 real addresses.
    let e = parse_with_overrides(
        BASE4,
        "siitperf.conf",
        SourceKind::SiitperfConf,
        &[("traffic.foreground.m".into(), "1".into())],
    )
    .expect_err("background without IPv6");
    assert!(matches!(e, ConfigError::AddressNeeded { .. }), "{e}");
    names(&e, &["IPv6-L-Real", "traffic.foreground.m", "traffic.foreground.n"]);
}

#[test]
fn rule_destinations_in_benchmarking_ranges() {
    let e = conf_err("IPv4-R-Real 10.0.0.2\n");
    assert!(matches!(e, ConfigError::ForeignAddress { .. }), "{e}");
    names(&e, &["IPv4-R-Real", "traffic.allow_foreign_addresses"]);
    assert!(e.to_string().starts_with("siitperf.conf:9: "), "{e}");
    let ok = parse_with_overrides(
        &format!("{BASE4}IPv4-R-Real 10.0.0.2\n"),
        "c",
        SourceKind::SiitperfConf,
        &[("traffic.allow_foreign_addresses".into(), "true".into())],
    );
    assert!(ok.is_ok(), "{ok:?}");
    // A source outside the ranges is not refused.
    parse_siitperf(&format!("{BASE4}Forward 0\nIPv4-R-Real 10.0.0.2\n"), "c").expect("foreign source only");
    // The varying part can leave the range: 64:ff9b::/96 with bytes 6-7 varying.
    let text = "IP-L-Vers 6\nIP-R-Vers 4\nIPv6-L-Real 2001:2::2\nIPv6-R-Virt 64:ff9b::198.19.0.2\nIP-R-var 3\nIP-R-min 0\n\
                IP-R-max 5\nIPv6-R-offset 6\nMAC-L-DUT 02:00:00:00:00:01\nForward 1\n";
    let e = parse_siitperf(text, "siitperf.conf").expect_err("varying part leaves 64:ff9b::/96");
    assert!(matches!(e, ConfigError::ForeignAddress { .. }), "{e}");
    assert!(e.to_string().contains("64:ff9b:0:5::c613:2"), "{e}");
    // ... but not with offset 14.
    parse_siitperf(&text.replace("IPv6-R-offset 6", "IPv6-R-offset 14"), "c").expect("offset 14 stays inside");
}

#[test]
fn rule_dut_mac_known_or_resolvable() {
    let text = BASE4.replace("MAC-R-DUT 02:00:00:00:00:02\n", "");
    let e = parse_siitperf(&text, "siitperf.conf").expect_err("no MAC-R-DUT");
    assert!(matches!(e, ConfigError::DutMacUnknown { .. }), "{e}");
    names(&e, &["MAC-R-DUT", "right.dut_ipv4", "right.dut_ipv6"]);
    for fix in [("right.dut_ipv4", "198.19.0.1"), ("tester.backend", "mem"), ("Reverse", "0")] {
        parse_with_overrides(&text, "c", SourceKind::SiitperfConf, &[(fix.0.into(), fix.1.into())]).expect(fix.0);
    }
}

#[test]
fn rule_foreground_share() {
    let t = "[tester]\nbackend = \"mem\"\n[left]\nip_version = 4\nipv4_real = \"198.18.0.2\"\n[right]\nip_version = 4\n\
             ipv4_real = \"198.19.0.2\"\n[traffic]\nforeground = { n = 2, m = 3 }\n";
    let e = parse_toml(t, "t.toml").expect_err("m > n");
    assert!(matches!(e, ConfigError::ForegroundShare { n: 2, m: 3, .. }), "{e}");
    names(&e, &["traffic.foreground.n", "traffic.foreground.m"]);
    assert!(e.to_string().starts_with("t.toml:10: "), "{e}");
}

#[test]
fn toml_errors_use_toml_names() {
    let t = "[tester]\nbackend = \"mem\"\n[left]\nip_version = 4\nipv4_real = \"198.18.0.2\"\n[right]\nip_version = 4\n\
             ipv4_real = \"198.19.0.2\"\n[stateful]\nenumerate_ports = \"pseudorandom\"\n";
    let e = parse_toml(t, "t.toml").expect_err("stateless enumeration");
    assert!(matches!(e, ConfigError::EnumerationInStatelessTest { .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "t.toml:10: key 'stateful.enumerate_ports' asks for enumeration, but key 'stateful.mode' is off: \
         enumeration happens only in phase 1 of a stateful test"
    );
}
