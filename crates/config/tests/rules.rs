//! Each cross-key rule of siitperf (docs/config.md, "Rules between keys") and of xlatperf triggers its own error
//! variant, whose message names every key involved.

use xlat_config::{parse_siitperf, parse_toml, parse_with_overrides, preliminary, to_toml, validate, ConfigError, Preliminary, SourceKind};

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
    // Absent means 1 (siitperf sets both directions on): then the addresses are needed.
    let e = parse_siitperf("IP-L-Vers 4\nIP-R-Vers 4\n", "siitperf.conf").expect_err("addresses");
    assert!(matches!(e, ConfigError::AddressNeeded { .. }), "{e}");
    assert!(e.to_string().contains("'Forward' is on"), "{e}");
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
                IP-R-max 5\nIPv6-R-offset 6\nMAC-L-DUT 02:00:00:00:00:01\nForward 1\nReverse 0\n";
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

#[test]
fn rule_no_direction_is_fine_in_a_stateful_test() {
    // Phase 1 always runs: both phase 2 directions may be off.
    let cfg = parse_siitperf(&format!("{BASE4}Stateful 1\nForward 0\nReverse 0\n"), "c").expect("stateful, no direction");
    assert!(!cfg.setup.forward && !cfg.setup.reverse);
    let e = conf_err("Stateful 0\nForward 0\nReverse 0\n");
    assert!(matches!(e, ConfigError::NoDirection { .. }), "{e}");
}

/// A stateful NAT64 test: Initiator left on IPv6, Responder right on IPv4.
const NAT64: &str = "IP-L-Vers 6\nIP-R-Vers 4\nIPv6-L-Real 2001:2::2\nIPv6-R-Virt 64:ff9b::198.19.0.2\nIPv4-R-Real 198.19.0.2\n\
MAC-L-DUT 02:00:00:00:00:01\nMAC-R-DUT 02:00:00:00:00:02\nStateful 1\n";

#[test]
fn rule_initiator_addresses_needed_even_when_its_direction_is_off() {
    parse_siitperf(&format!("{NAT64}Forward 0\nReverse 1\n"), "c").expect("complete");
    // The Initiator's destination (IPv6-R-Virt) is needed although Forward is 0.
    let text = format!("{NAT64}Forward 0\nReverse 1\n").replace("IPv6-R-Virt 64:ff9b::198.19.0.2\n", "");
    let e = parse_siitperf(&text, "siitperf.conf").expect_err("no IPv6-R-Virt");
    assert!(matches!(e, ConfigError::AddressNeeded { .. }), "{e}");
    names(&e, &["IPv6-R-Virt", "Stateful", "Forward", "IPv6-L-Real"]);
    assert!(
        e.to_string()
            .contains("the Initiator sends phase 1 of the stateful test ('Stateful' 1)"),
        "{e}"
    );
    // ... and its source, with the Initiator on the right (Stateful 2, Reverse is its direction).
    let text = "IP-L-Vers 4\nIP-R-Vers 4\nIPv4-L-Real 198.18.0.2\nMAC-L-DUT 02:00:00:00:00:01\nMAC-R-DUT 02:00:00:00:00:02\n\
                Stateful 2\nForward 1\nReverse 0\n";
    let e = parse_siitperf(text, "siitperf.conf").expect_err("no IPv4-R-Real");
    assert!(matches!(e, ConfigError::AddressNeeded { .. }), "{e}");
    names(&e, &["IPv4-R-Real", "Stateful", "Reverse"]);
    // Stateless, the same file is fine with the direction off.
    parse_with_overrides(
        &format!("{NAT64}Forward 0\nReverse 1\nIPv4-L-Virt 198.18.0.2\n").replace("IPv6-R-Virt 64:ff9b::198.19.0.2\n", ""),
        "c",
        SourceKind::SiitperfConf,
        &[("Stateful".into(), "0".into())],
    )
    .expect("stateless, forward off");
    // The Initiator's port needs the DUT's MAC too, and its destination must be benchmarking.
    let e = parse_siitperf(
        &format!("{NAT64}Forward 0\nReverse 1\n").replace("MAC-L-DUT 02:00:00:00:00:01\n", ""),
        "c",
    )
    .expect_err("no MAC-L-DUT");
    assert!(matches!(e, ConfigError::DutMacUnknown { .. }), "{e}");
    let e = parse_siitperf(&format!("{BASE4}Stateful 1\nForward 0\nIPv4-R-Real 10.0.0.2\n"), "c").expect_err("foreign");
    assert!(matches!(e, ConfigError::ForeignAddress { .. }), "{e}");
}

/// The Responder may be IPv6 (stateful NAT66 and NAT46), as it may be IPv4 (NAT44, NAT64); the
/// Initiator's foreground frames still need their addresses, whichever side they go to.
#[test]
fn rule_responder_may_be_ipv6() {
    // NAT66: both sides IPv6, Initiator left.
    let nat66 = "IP-L-Vers 6\nIP-R-Vers 6\nIPv6-L-Real 2001:2::2\nIPv6-R-Real 2001:2:0:8000::2\nMAC-L-DUT 02:00:00:00:00:01\n\
                 MAC-R-DUT 02:00:00:00:00:02\nForward 1\nReverse 1\nStateful 1\n";
    let cfg = parse_siitperf(nat66, "siitperf.conf").expect("NAT66");
    assert_eq!(cfg.setup.right.ip_version, xlat_traffic::IpVersion::V6);
    // The Initiator's destination is the Responder's real IPv6 address.
    let e = parse_siitperf(&nat66.replace("IPv6-R-Real 2001:2:0:8000::2\n", ""), "siitperf.conf").expect_err("no IPv6-R-Real");
    assert!(matches!(e, ConfigError::AddressNeeded { .. }), "{e}");
    names(&e, &["IPv6-R-Real", "Forward"]);
    // NAT66 with the Initiator on the right.
    parse_siitperf(&nat66.replace("Stateful 1", "Stateful 2"), "c").expect("NAT66, Initiator right");

    // NAT46: the Initiator on IPv4 at the right, the Responder on IPv6 at the left; the
    // Initiator sends to the Responder's IPv4 address (IPv4-L-Virt).
    let nat46 = "IP-L-Vers 6\nIP-R-Vers 4\nIPv6-L-Real 2001:2::2\nIPv4-L-Virt 198.18.0.2\nIPv4-R-Real 198.19.0.2\n\
                 MAC-L-DUT 02:00:00:00:00:01\nMAC-R-DUT 02:00:00:00:00:02\nForward 1\nReverse 1\nStateful 2\n";
    let cfg = parse_siitperf(nat46, "siitperf.conf").expect("NAT46");
    assert_eq!(cfg.setup.left.ipv4_virt, Some("198.18.0.2".parse().unwrap()));
    let e = parse_siitperf(&nat46.replace("IPv4-L-Virt 198.18.0.2\n", ""), "siitperf.conf").expect_err("no IPv4-L-Virt");
    assert!(matches!(e, ConfigError::AddressNeeded { .. }), "{e}");
    names(&e, &["IPv4-L-Virt", "Reverse"]);
    // ... also with the Initiator's direction (Reverse) off: phase 1 always runs.
    let e = parse_siitperf(
        &nat46.replace("IPv4-L-Virt 198.18.0.2\n", "").replace("Reverse 1", "Reverse 0"),
        "siitperf.conf",
    )
    .expect_err("no IPv4-L-Virt, Reverse 0");
    assert!(matches!(e, ConfigError::AddressNeeded { .. }), "{e}");
    names(&e, &["IPv4-L-Virt", "Stateful"]);

    // NAT64 with the Responder on the IPv4 side stays fine.
    parse_siitperf(&format!("{NAT64}Forward 1\nReverse 1\n"), "c").expect("NAT64");

    // TOML, NAT46 with the Initiator left: left IPv4, right IPv6; in TOML the message uses TOML
    // names.
    let toml46 = "[tester]\nbackend = \"mem\"\n[left]\nip_version = 4\nipv4_real = \"198.18.0.2\"\n[right]\nip_version = 6\n\
                  ipv6_real = \"2001:2:0:8000::2\"\nipv4_virt = \"198.19.0.2\"\n[stateful]\nmode = \"initiator-left\"\n";
    let cfg = parse_toml(toml46, "t.toml").expect("TOML NAT46");
    assert_eq!(cfg.setup.right.ipv4_virt, Some("198.19.0.2".parse().unwrap()));
    let e = parse_toml(&toml46.replace("ipv4_virt = \"198.19.0.2\"\n", ""), "t.toml").expect_err("no right.ipv4_virt");
    assert!(matches!(e, ConfigError::AddressNeeded { .. }), "{e}");
    assert!(e.to_string().contains("'right.ipv4_virt'"), "{e}");
    // MIN_TOML with the Initiator right: the Responder (left) is IPv6, and the IPv4 Initiator
    // needs the Responder's left.ipv4_virt.
    let t = format!("{MIN_TOML}[stateful]\nmode = \"initiator-right\"\n");
    let e = parse_toml(&t, "t.toml").expect_err("no left.ipv4_virt");
    assert!(matches!(e, ConfigError::AddressNeeded { .. }), "{e}");
    assert!(e.to_string().contains("'left.ipv4_virt'"), "{e}");
    parse_toml(&t.replace("[right]", "ipv4_virt = \"198.18.0.2\"\n[right]"), "t.toml").expect("TOML NAT46, Initiator right");
}

/// A valid TOML stateful NAT44 test (mem backend), without phase 1's values.
const MIN_TOML: &str = "[tester]\nbackend = \"mem\"\n[left]\nip_version = 6\nipv6_real = \"2001:2::2\"\n[right]\nip_version = 4\n\
ipv4_real = \"198.19.0.2\"\nipv6_virt = \"64:ff9b::198.19.0.2\"\n";

const NAT44_TOML: &str = "[tester]\nbackend = \"mem\"\n[left]\nip_version = 4\nipv4_real = \"198.18.0.2\"\n[right]\nip_version = 4\n\
ipv4_real = \"198.19.0.2\"\n[traffic.forward_ports]\nsport = { variation = \"pseudorandom\", min = 1024, max = 1123 }\n\
dport = { variation = \"pseudorandom\", min = 80, max = 89 }\n[stateful]\nmode = \"initiator-left\"\nenumerate_ports = \"pseudorandom\"\n";

fn nat44(extra: &str) -> Result<xlat_config::TestConfig, ConfigError> {
    parse_toml(&format!("{NAT44_TOML}{extra}"), "t.toml")
}

#[test]
fn preliminary_defaults_and_requirements() {
    // N and R are required to run; the error names the key.
    let cfg = nat44("").expect("no N, R: fine to read");
    let e = preliminary(&cfg).expect_err("no N");
    assert!(matches!(e, ConfigError::Required { .. }), "{e}");
    assert!(
        e.to_string().starts_with("t.toml: key 'stateful.preliminary_frames' must be set"),
        "{e}"
    );
    let cfg = nat44("preliminary_frames = 1000\n").expect("N only");
    let e = preliminary(&cfg).expect_err("no R");
    assert!(e.to_string().contains("'stateful.preliminary_rate'"), "{e}");
    // Defaults: M = the foreground frames, T = 500, D = ceil(1000 N / R) + 2 T.
    let cfg = nat44("preliminary_frames = 1000\npreliminary_rate = 3000\n").expect("N, R");
    assert_eq!(
        preliminary(&cfg).expect("resolved"),
        Preliminary {
            frames: 1000,
            state_table: 1000,
            rate: 3000,
            timeout_ms: 500,
            phase_delay_ms: 334 + 1000,
        }
    );
    // With foreground 3 of 5: N = 8 has 6 foreground frames (siitperf's formula says 5).
    let mut cfg = nat44("preliminary_frames = 8\npreliminary_rate = 1000\n").expect("N = 8");
    cfg.setup.fg_n = 5;
    cfg.setup.fg_m = 3;
    assert_eq!(preliminary(&cfg).expect("resolved").state_table, 6);
    assert_eq!(xlat_config::foreground_frames(8, 5, 3), 6);
    assert_eq!(xlat_config::foreground_frames(10, 5, 3), 6);
    assert_eq!(xlat_config::foreground_frames(u64::from(u32::MAX), 2, 2), u64::from(u32::MAX));
    // Everything given.
    let cfg = nat44(
        "preliminary_frames = 1000\nstate_table = 10\npreliminary_rate = 1000\npreliminary_timeout_ms = 2000\nphase_delay_ms = 3000\n",
    )
    .expect("all");
    assert_eq!(
        preliminary(&cfg).expect("resolved"),
        Preliminary {
            frames: 1000,
            state_table: 10,
            rate: 1000,
            timeout_ms: 2000,
            phase_delay_ms: 3000,
        }
    );
}

#[test]
fn preliminary_ranges() {
    for (key, bad, allowed) in [
        ("preliminary_frames", "0", "1-4294967295"),
        ("preliminary_frames", "4294967296", "1-4294967295"),
        ("state_table", "0", "1-4294967295"),
        ("preliminary_rate", "0", "1-1000000000"),
        ("preliminary_rate", "1000000001", "1-1000000000"),
        ("preliminary_timeout_ms", "0", "1-2000"),
        ("preliminary_timeout_ms", "2001", "1-2000"),
        ("phase_delay_ms", "0", "1-100000000"),
        ("phase_delay_ms", "100000001", "1-100000000"),
    ] {
        let e = nat44(&format!("{key} = {bad}\n")).expect_err(key);
        assert_eq!(
            e.to_string(),
            format!("t.toml:15: key 'stateful.{key}': {bad} is not allowed ({allowed})"),
            "{key}"
        );
    }
    // A program (the command line) setting a value out of range: validate() finds it.
    let mut cfg = nat44("").expect("base");
    cfg.stateful.preliminary_timeout_ms = Some(2001);
    let e = validate(&cfg).expect_err("T 2001");
    assert!(
        e.to_string()
            .contains("'stateful.preliminary_timeout_ms': 2001 is not allowed (1-2000)"),
        "{e}"
    );
}

#[test]
fn preliminary_cross_checks() {
    // D must cover phase 1: floor(1000 * 1000 / 3000) + 500 = 833.
    let e = nat44("preliminary_frames = 1000\npreliminary_rate = 3000\nphase_delay_ms = 832\n").expect_err("D short");
    assert!(matches!(e, ConfigError::PhaseDelayTooShort { needed: 833, .. }), "{e}");
    assert!(
        e.to_string().starts_with("t.toml:17: key 'stateful.phase_delay_ms' (832 ms)"),
        "{e}"
    );
    names(
        &e,
        &[
            "stateful.preliminary_frames",
            "stateful.preliminary_rate",
            "stateful.preliminary_timeout_ms",
        ],
    );
    nat44("preliminary_frames = 1000\npreliminary_rate = 3000\nphase_delay_ms = 833\n").expect("D exact");
    // No overflow in 32 bits: N = 2^32-1 at 1 frame/s.
    let e = nat44("preliminary_frames = 4294967295\npreliminary_rate = 1\nphase_delay_ms = 100000000\n").expect_err("D short for 2^32-1 s");
    assert!(
        matches!(
            e,
            ConfigError::PhaseDelayTooShort {
                needed: 4_294_967_295_500,
                ..
            }
        ),
        "{e}"
    );
    // M cannot exceed the foreground frames.
    let e = nat44("preliminary_frames = 1000\nstate_table = 1001\npreliminary_rate = 3000\n").expect_err("M > N");
    assert!(matches!(e, ConfigError::StateTableTooLarge { foreground: 1000, .. }), "{e}");
    names(&e, &["stateful.state_table", "stateful.preliminary_frames"]);
    // 100 x 10 port combinations for 1001 unique foreground frames.
    nat44("preliminary_frames = 1000\npreliminary_rate = 3000\n").expect("1000 combinations");
    let e = nat44("preliminary_frames = 1001\npreliminary_rate = 3000\n").expect_err("C < N");
    assert!(
        matches!(
            e,
            ConfigError::TooFewCombinations {
                combinations: 1000,
                foreground: 1001,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("only 1000 port number combinations"), "{e}");
    names(&e, &["stateful.enumerate_ports", "stateful.preliminary_frames"]);
    // Linear enumeration wraps around: not checked.
    parse_toml(
        &format!("{NAT44_TOML}preliminary_frames = 5000\npreliminary_rate = 3000\n")
            .replace("enumerate_ports = \"pseudorandom\"", "enumerate_ports = \"increasing\""),
        "t.toml",
    )
    .expect("increasing wraps");
    // The checks run again after a program changed the values.
    let mut cfg = nat44("").expect("base");
    cfg.stateful.preliminary_frames = Some(2000);
    cfg.stateful.preliminary_rate = Some(1000);
    let e = preliminary(&cfg).expect_err("C < N");
    assert!(e.to_string().starts_with("t.toml: "), "{e}");
}

#[test]
fn combinations_are_counted_in_128_bits() {
    let full = "[tester]\nbackend = \"mem\"\n[left]\nip_version = 4\nipv4_real = \"198.18.0.2\"\n\
                ip_variation = { variation = \"pseudorandom\", min = 0, max = 65535 }\n[right]\nip_version = 4\n\
                ipv4_real = \"198.19.0.2\"\nip_variation = { variation = \"pseudorandom\", min = 0, max = 65535 }\n\
                [traffic.forward_ports]\nsport = { variation = \"pseudorandom\", min = 0, max = 65535 }\n\
                dport = { variation = \"pseudorandom\", min = 0, max = 65535 }\n[stateful]\nmode = \"initiator-left\"\n";
    let both = parse_toml(
        &format!("{full}enumerate_ports = \"pseudorandom\"\nenumerate_ips = \"pseudorandom\"\n"),
        "t",
    )
    .expect("both");
    assert_eq!(
        xlat_config::combinations(&both.setup),
        Some((1u128 << 64, "IP address and port number"))
    );
    let ips = parse_toml(
        &format!("{full}enumerate_ips = \"pseudorandom\"\n").replace(
            "[traffic.forward_ports]\nsport = { variation = \"pseudorandom\", min = 0, max = 65535 }\n\
             dport = { variation = \"pseudorandom\", min = 0, max = 65535 }\n",
            "",
        ),
        "t",
    )
    .expect("ips");
    assert_eq!(xlat_config::combinations(&ips.setup), Some((1u128 << 32, "IP address")));
    assert_eq!(
        xlat_config::combinations(&nat44("").expect("ports").setup),
        Some((1000, "port number"))
    );
}

#[test]
fn preliminary_keys_only_in_a_stateful_test() {
    let t = "[tester]\nbackend = \"mem\"\n[left]\nip_version = 4\nipv4_real = \"198.18.0.2\"\n[right]\nip_version = 4\n\
             ipv4_real = \"198.19.0.2\"\n[stateful]\nstate_table = 5\n";
    let e = parse_toml(t, "t.toml").expect_err("stateless M");
    assert!(matches!(e, ConfigError::PreliminaryInStatelessTest { .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "t.toml:10: key 'stateful.state_table' belongs to phase 1 of a stateful test, but key 'stateful.mode' is off"
    );
}

#[test]
fn dut_hooks_round_trip() {
    let cfg = nat44(
        "preliminary_frames = 1000\npreliminary_rate = 3000\n[dut]\nbefore_trial = \"ip netns exec xlat-dut conntrack -F\"\n\
         between_phases = \"echo 'a \\\"quoted\\\" word'\"\n",
    )
    .expect("hooks");
    assert_eq!(cfg.dut.before_trial.as_deref(), Some("ip netns exec xlat-dut conntrack -F"));
    assert_eq!(cfg.dut.between_phases.as_deref(), Some("echo 'a \"quoted\" word'"));
    let text = to_toml(&cfg);
    let back = parse_toml(&text, "back.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back.dut, cfg.dut);
    assert_eq!(back.stateful, cfg.stateful);
    assert_eq!(back.setup, cfg.setup);
    assert!(text.contains("preliminary_frames = 1000"), "{text}");
    assert!(text.contains("# state_table (not set)"), "{text}");
    // An empty command is refused; an unknown key in [dut] too.
    let e = nat44("[dut]\nbefore_trial = \" \"\n").expect_err("empty");
    assert!(
        e.to_string()
            .contains("key 'dut.before_trial': ' ' is not allowed (a shell command"),
        "{e}"
    );
    let e = nat44("[dut]\nafter_trial = \"x\"\n").expect_err("unknown");
    assert!(matches!(e, ConfigError::UnknownKey { .. }), "{e}");
    // --set reaches them too.
    let cfg = parse_with_overrides(
        NAT44_TOML,
        "t.toml",
        SourceKind::Toml,
        &[
            ("dut.before_trial".into(), "conntrack -F".into()),
            ("stateful.preliminary_frames".into(), "100".into()),
        ],
    )
    .expect("set");
    assert_eq!(cfg.dut.before_trial.as_deref(), Some("conntrack -F"));
    assert_eq!(cfg.stateful.preliminary_frames, Some(100));
}

#[test]
fn a_dut_load_command_is_for_a_dut_elsewhere() {
    let cfg = nat44("[dut]\nload = \"ssh dut busy-percent $XLAT_TRIAL_SECONDS\"\n").expect("load");
    assert_eq!(cfg.dut.load.as_deref(), Some("ssh dut busy-percent $XLAT_TRIAL_SECONDS"));
    let text = to_toml(&cfg);
    assert_eq!(
        parse_toml(&text, "back.toml").unwrap_or_else(|e| panic!("{e}\n{text}")).dut,
        cfg.dut
    );
    // Beside the CPUs of a DUT on this host (whose load the kernel gives): refused, named.
    let e = nat44("[dut]\ncpus = \"1\"\nload = \"echo 50\"\n").expect_err("both");
    let e = e.to_string();
    assert!(e.contains("key 'dut.load'") && e.contains("no dut.load beside dut.cpus"), "{e}");
    assert!(e.starts_with("t.toml:17: "), "the file and line of the key: {e}");
}
