//! Single-key ranges and defaults, the siitperf.conf syntax, TOML errors with lines, overrides,
//! format detection.

use std::path::PathBuf;
use xlat_config::{
    load, looks_like_toml, parse_siitperf, parse_toml, parse_with_overrides, validate, Backend, ConfigError, Loc, SourceKind,
};
use xlat_traffic::{IpVersion, Stateful, Variation, RFC4814_DPORT, RFC4814_SPORT};

const BASE4: &str = "IP-L-Vers 4\nIP-R-Vers 4\nIPv4-L-Real 198.18.0.2\nIPv4-R-Real 198.19.0.2\n\
MAC-L-DUT 02:00:00:00:00:01\nMAC-R-DUT 02:00:00:00:00:02\nForward 1\nReverse 1\n";

const MIN_TOML: &str = "[tester]\nbackend = \"mem\"\n[left]\nip_version = 4\nipv4_real = \"198.18.0.2\"\n[right]\nip_version = 4\nipv4_real = \"198.19.0.2\"\n";

fn conf(extra: &str) -> Result<xlat_config::TestConfig, ConfigError> {
    parse_siitperf(&format!("{BASE4}{extra}"), "siitperf.conf")
}

fn set(k: &str, v: &str) -> (String, String) {
    (k.to_string(), v.to_string())
}

#[test]
fn the_message_of_the_brief() {
    let text = format!("{BASE4}#\n\n  # comment\nNum-L-Nets 1\n\nIP-L-var 7   # oops\n");
    let e = parse_siitperf(&text, "siitperf.conf").expect_err("7");
    assert_eq!(
        e.to_string(),
        "siitperf.conf:14: key 'IP-L-var': 7 is not allowed (0 fixed, 1 increasing, 2 decreasing, 3 pseudorandom)"
    );
    assert_eq!(
        e.location(),
        Some(&Loc::Line {
            file: "siitperf.conf".into(),
            line: 14
        })
    );
}

#[test]
fn siitperf_defaults() {
    let c = parse_siitperf(BASE4, "siitperf.conf").expect("base");
    assert_eq!(c.tester.backend, Backend::Dpdk);
    assert_eq!((c.tester.left_port.as_str(), c.tester.right_port.as_str()), ("0", "1"));
    // siitperf sets Promisc, Forward and Reverse to 1 when siitperf.conf leaves them out.
    assert!(c.tester.promisc);
    assert!(c.setup.forward && c.setup.reverse);
    assert_eq!(c.tester.cpus, xlat_config::Cpus::default());
    let s = &c.setup;
    assert_eq!((s.left.num_nets, s.right.num_nets), (1, 1));
    assert_eq!(s.left.ip_var, xlat_traffic::IpVarSpec::default());
    assert_eq!(s.forward_ports, xlat_traffic::PortSpec::default());
    assert_eq!(s.stateful, xlat_traffic::StatefulSpec::default());
    assert_eq!((s.fg_n, s.fg_m), (2, 2));
    assert_eq!(s.left.ipv6_real, None);
    assert_eq!(s.seed, None);
    assert!(!s.allow_foreign_addresses);
    assert_eq!(
        (c.trial.frame_size, c.trial.rate, c.trial.duration_s, c.trial.timeout_ms),
        (84, None, 60.0, 2000)
    );
}

#[test]
fn toml_defaults() {
    let c = parse_toml(MIN_TOML, "t.toml").expect("minimal");
    assert_eq!(c.tester.backend, Backend::Mem);
    assert_eq!((c.tester.left_port.as_str(), c.tester.right_port.as_str()), ("mem0", "mem1"));
    let s = &c.setup;
    assert!(s.forward && s.reverse);
    assert_eq!(
        s.forward_ports.sport.min..=s.forward_ports.sport.max,
        RFC4814_SPORT.0..=RFC4814_SPORT.1
    );
    assert_eq!(
        s.reverse_ports.dport.min..=s.reverse_ports.dport.max,
        RFC4814_DPORT.0..=RFC4814_DPORT.1
    );
    assert_eq!(s.forward_ports.sport.variation, Variation::Fixed);
    assert_eq!(
        (
            s.left.ip_var.ipv4_offset,
            s.left.ip_var.ipv6_offset,
            s.left.ip_var.min,
            s.left.ip_var.max
        ),
        (2, 14, 0, 65535)
    );
    assert_eq!(s.stateful.mode, Stateful::Off);
    assert_eq!(
        (c.trial.frame_size, c.trial.rate, c.trial.duration_s, c.trial.timeout_ms),
        (84, None, 60.0, 2000)
    );
    // afpacket (the default backend) needs port names; dpdk defaults to 0 and 1.
    let t = MIN_TOML.replace("backend = \"mem\"", "");
    let e = parse_toml(&t, "t.toml").expect_err("afpacket without ports");
    assert!(matches!(e, ConfigError::Required { .. }), "{e}");
    assert!(e.to_string().contains("'tester.left_port'"), "{e}");
    let t = MIN_TOML.replace("backend = \"mem\"", "backend = \"dpdk\"\nleft_port = 0\nright_port = \"net_null1\"")
        + "dut_mac = \"02:00:00:00:00:01\"\n[left.ip_variation]\n[traffic]\n";
    let e = parse_toml(&t, "t.toml").expect_err("left dut mac");
    assert!(matches!(e, ConfigError::DutMacUnknown { .. }), "{e}");
    let c = parse_toml(
        &t.replace("[left.ip_variation]", "[left.ip_variation]\n")
            .replace("[traffic]\n", "[traffic]\nforward = false\n"),
        "t",
    )
    .expect("dpdk, reverse only");
    assert_eq!((c.tester.left_port.as_str(), c.tester.right_port.as_str()), ("0", "net_null1"));
}

#[test]
fn siitperf_value_ranges() {
    let cases: &[(&str, &str)] = &[
        ("IP-L-Vers 5", "4 or 6"),
        ("Forward 2", "0 or 1"),
        ("Promisc -1", "0 or 1"),
        ("Num-L-Nets 0", "1-256"),
        ("Num-R-Nets 257", "1-256"),
        ("Fwd-var-sport 4", "0 fixed, 1 increasing, 2 decreasing, 3 pseudorandom"),
        ("Rev-sport-max 65536", "0-65535"),
        ("IP-R-min 0x10000", "0-65535"),
        ("Stateful 3", "0 stateless"),
        ("Enumerate-ports 4", "0 no, 1 increasing"),
        ("Responder-tuples 9", "0 one fixed tuple"),
        ("MEM-Channels 0", "1-4294967295"),
        ("CPU-L-Send 5000", "0-1023"),
        ("IPv4-L-Real 198.18.0.256", "an IPv4 address"),
        ("IPv6-R-Virt 64:ff9b::198.19.0", "an IPv6 address"),
        ("MAC-L-DUT 02:00:00:00:00", "a MAC address"),
        ("IP-L-max 12abc", "a decimal or 0x hexadecimal number"),
        ("IP-L-max 0x", "a decimal or 0x hexadecimal number"),
    ];
    for (line, allowed) in cases {
        let e = conf(&format!("{line}\n")).expect_err(line);
        assert!(matches!(e, ConfigError::BadValue { .. }), "{line}: {e}");
        let key = line.split(' ').next().unwrap_or_default();
        let msg = e.to_string();
        assert!(msg.starts_with(&format!("siitperf.conf:9: key '{key}': ")), "{msg}");
        assert!(msg.contains(allowed), "{line}: {msg}");
    }
    for ok in [
        "Num-L-Nets 256",
        "IP-L-max 0xFFFF",
        "IP-L-min 0",
        "Fwd-dport-max 65535",
        "CPU-L-Send 1023",
        "Responder-ports 3",
    ] {
        conf(&format!("{ok}\n")).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
}

#[test]
fn siitperf_syntax() {
    // Leading blanks, tabs, comments after values, CRLF, extra tokens after the value.
    let text = "  IP-L-Vers\t6 # left\r\n\tIP-R-Vers 6#right\r\nIPv6-L-Real 2001:2::2 ignored words\nIPv6-R-Real 2001:2:0:8000::2\nMAC-L-DUT 02:00:00:00:00:01\nForward 0x1\nReverse 0\n";
    let c = parse_siitperf(text, "s.conf").expect("syntax");
    assert_eq!(c.setup.left.ip_version, IpVersion::V6);
    assert!(c.setup.forward && !c.setup.reverse);
    // The last of a repeated key counts.
    let c = conf("Num-L-Nets 2\nNum-L-Nets 3\n").expect("repeat");
    assert_eq!(c.setup.left.num_nets, 3);
    // Unknown line, misspelt or lower-case key, key without value.
    for (line, want) in [
        ("Frwd 1", "siitperf.conf:9: 'Frwd 1' is neither a known key nor a comment"),
        ("forward 1", "siitperf.conf:9: 'forward 1' is neither a known key nor a comment"),
        ("IP-L-Vers=4", "siitperf.conf:9: 'IP-L-Vers=4' is neither a known key nor a comment"),
        ("Forward   # no value", "siitperf.conf:9: key 'Forward' has no value"),
    ] {
        let e = conf(&format!("{line}\n")).expect_err(line);
        assert_eq!(e.to_string(), want);
    }
    let e = parse_siitperf("IP-L-Vers 4\n", "siitperf.conf").expect_err("no right");
    assert_eq!(e.to_string(), "siitperf.conf: key 'IP-R-Vers' must be set (4 or 6)");
}

#[test]
fn toml_errors_have_lines() {
    let cases = [
        (
            MIN_TOML.replace("ipv4_real = \"198.18.0.2\"", "ipv4_rael = \"198.18.0.2\""),
            "t.toml:5: unknown key 'left.ipv4_rael' (did you mean 'left.ipv4_real'?)",
        ),
        (
            MIN_TOML.replace("ip_version = 4\nipv4_real = \"198.19", "ip_version = 5\nipv4_real = \"198.19"),
            "t.toml:7: key 'right.ip_version': 5 is not allowed (4 or 6)",
        ),
        (
            MIN_TOML.replace("backend = \"mem\"", "backend = \"pcap\""),
            "t.toml:2: key 'tester.backend': 'pcap' is not allowed (mem, afpacket, afxdp, dpdk)",
        ),
        (
            MIN_TOML.replace("ip_version = 4\nipv4_real = \"198.18", "ip_version = \"4\"\nipv4_real = \"198.18"),
            "t.toml:4: key 'left.ip_version': '4' is not allowed (a whole number)",
        ),
        (
            format!("{MIN_TOML}[trial]\nframe_size = 64\n"),
            "t.toml:10: key 'trial.frame_size': 64 is not allowed (84-9038: all frames are IPv4, 20 bytes shorter than the size)",
        ),
        (
            format!("{MIN_TOML}[trial]\nduration = 0\n"),
            "t.toml:10: key 'trial.duration': 0 is not allowed (more than 0 and at most 86400 seconds)",
        ),
        (
            format!("{MIN_TOML}[trial]\nrate = 0\n"),
            "t.toml:10: key 'trial.rate': 0 is not allowed (1-1000000000)",
        ),
        (
            format!("{MIN_TOML}[trial]\ntimeout_ms = 60001\n"),
            "t.toml:10: key 'trial.timeout_ms': 60001 is not allowed (0-60000)",
        ),
        (
            format!("{MIN_TOML}[left.ip_variation]\nvariation = \"random\"\n"),
            "t.toml:10: key 'left.ip_variation.variation': 'random' is not allowed (fixed, increasing, decreasing, pseudorandom)",
        ),
        (
            format!("{MIN_TOML}[traffic]\nforeground = {{ n = 1, m = 1 }}\n"),
            "t.toml:10: key 'traffic.foreground.n': 1 is not allowed (2-4294967295)",
        ),
        (
            format!("{MIN_TOML}[stateful]\nmode = \"on\"\n"),
            "t.toml:10: key 'stateful.mode': 'on' is not allowed (off, initiator-left, initiator-right)",
        ),
        (format!("{MIN_TOML}[extra]\n"), "t.toml:9: unknown key 'extra'"),
        (format!("{MIN_TOML}IP-L-Vers = 4\n"), "t.toml:9: unknown key 'right.IP-L-Vers'"),
        (
            format!("IP-L-Vers = 4\n{MIN_TOML}"),
            "t.toml:1: unknown key 'IP-L-Vers' (did you mean 'left.ip_version'?)",
        ),
        (
            format!("{MIN_TOML}[left]\n"),
            "t.toml:9: TOML syntax error: invalid table header; duplicate key `left` in document root",
        ),
        (
            "[left\n".to_string(),
            "t.toml:1: TOML syntax error: invalid table header; expected `.`, `]`",
        ),
    ];
    for (text, want) in cases {
        let e = parse_toml(&text, "t.toml").expect_err(want);
        assert_eq!(e.to_string(), want, "{text}");
    }
    let e = parse_toml("[tester]\nbackend = \"mem\"\n", "t.toml").expect_err("no sides");
    assert_eq!(e.to_string(), "t.toml: key 'left.ip_version' must be set (4 or 6)");
    let e = parse_toml("[tester]\nbackend = \"mem\"\n[left]\nipv4_real = \"198.18.0.2\"\n", "t.toml").expect_err("no version");
    assert_eq!(e.to_string(), "t.toml:3: key 'left.ip_version' must be set (4 or 6)");
}

#[test]
fn frame_size_range_depends_on_the_versions() {
    let with = |size: usize, extra: &str| parse_toml(&format!("{MIN_TOML}{extra}[trial]\nframe_size = {size}\n"), "t.toml");
    assert!(with(84, "").is_ok());
    assert!(with(9038, "").is_ok());
    assert!(with(1538, "").is_ok());
    assert!(with(83, "").is_err());
    assert!(with(9039, "").is_err());
    // With IPv6 frames (background traffic), the size is the IPv6 frame's: at most 9018.
    let bg = "[traffic]\nforeground = { n = 10, m = 9 }\n";
    let six = MIN_TOML
        .replace(
            "ipv4_real = \"198.18.0.2\"",
            "ipv4_real = \"198.18.0.2\"\nipv6_real = \"2001:2::2\"",
        )
        .replace(
            "ipv4_real = \"198.19.0.2\"",
            "ipv4_real = \"198.19.0.2\"\nipv6_real = \"2001:2:0:8000::2\"",
        );
    assert!(parse_toml(&format!("{six}{bg}[trial]\nframe_size = 9018\n"), "t").is_ok());
    let e = parse_toml(&format!("{six}{bg}[trial]\nframe_size = 9019\n"), "t").expect_err("9019");
    assert!(e.to_string().contains("84-9018"), "{e}");
}

#[test]
fn overrides() {
    let text = BASE4;
    let kind = SourceKind::SiitperfConf;
    let c = parse_with_overrides(
        text,
        "siitperf.conf",
        kind,
        &[
            set("traffic.reverse", "false"),
            set("left.ipv4_real", "198.18.0.9"),
            set("tester.backend", "afpacket"),
            set("tester.left_port", "veth1"),
            set("tester.right_port", "\"veth2\""),
            set("trial.frame_size", "128"),
            set("trial.duration", "2.5"),
            set("IP-L-var", "3"),
            set("tester.eal_args", "--no-huge -m 512"),
            set("traffic.seed", "0x10"),
        ],
    )
    .expect("overrides");
    assert!(!c.setup.reverse);
    assert_eq!(c.setup.left.ipv4_real, Some("198.18.0.9".parse().expect("a")));
    assert_eq!(
        (c.tester.backend, c.tester.left_port.as_str(), c.tester.right_port.as_str()),
        (Backend::AfPacket, "veth1", "veth2")
    );
    assert_eq!((c.trial.frame_size, c.trial.duration_s), (128, 2.5));
    assert_eq!(c.setup.left.ip_var.variation, Variation::Pseudorandom);
    assert_eq!(c.tester.eal_args, ["--no-huge", "-m", "512"]);
    assert_eq!(c.setup.seed, Some(16));

    // Overrides apply to TOML files too, by either name.
    let c = parse_with_overrides(
        MIN_TOML,
        "t.toml",
        SourceKind::Toml,
        &[set("Forward", "0"), set("tester.eal_args", "[\"a\", \"b\"]")],
    )
    .expect("toml");
    assert!(!c.setup.forward && c.setup.reverse);
    assert_eq!(c.tester.eal_args, ["a", "b"]);

    // Bad overrides name --set KEY.
    let bad = [
        (
            set("IP-L-var", "7"),
            "--set IP-L-var: key 'IP-L-var': 7 is not allowed (0 fixed, 1 increasing, 2 decreasing, 3 pseudorandom)",
        ),
        (
            set("trial.frame_size", "big"),
            "--set trial.frame_size: key 'trial.frame_size': 'big' is not allowed (a whole number)",
        ),
        (
            set("traffic.reverse", "0"),
            "--set traffic.reverse: key 'traffic.reverse': '0' is not allowed (true or false)",
        ),
        (
            set("trafic.reverse", "false"),
            "--set trafic.reverse: unknown key 'trafic.reverse' (did you mean 'traffic.reverse'?)",
        ),
        (set("Forward", ""), "--set Forward: key 'Forward' has no value"),
        (
            set("Num-L-Nets", "0"),
            "--set Num-L-Nets: key 'Num-L-Nets': 0 is not allowed (1-256)",
        ),
        (
            set("left.num_nets", "300"),
            "--set left.num_nets: key 'Num-L-Nets': 300 is not allowed (1-256)",
        ),
        (
            set("Forward", "0"),
            "--set Forward: keys 'Forward' and 'Reverse' are both off: at least one direction must be active",
        ),
        (
            set("nonsense", "1"),
            "--set nonsense: unknown key 'nonsense' (a TOML dotted path like traffic.reverse or a siitperf.conf key like IP-L-var)",
        ),
    ];
    for (o, want) in bad {
        let e = parse_with_overrides(
            &BASE4.replace("Reverse 1\n", "Reverse 0\n"),
            "siitperf.conf",
            kind,
            std::slice::from_ref(&o),
        )
        .expect_err(want);
        assert_eq!(e.to_string(), want, "{o:?}");
    }
}

#[test]
fn validate_after_a_change() {
    let mut c = parse_siitperf(BASE4, "siitperf.conf").expect("base");
    assert!(validate(&c).is_ok());
    c.setup.fg_m = 0; // siitperf-tp ... 2 0: all background, needs IPv6 addresses
    let e = validate(&c).expect_err("background");
    assert!(matches!(e, ConfigError::AddressNeeded { .. }), "{e}");
    assert!(e.to_string().starts_with("siitperf.conf: key 'IPv6-L-Real' is needed"), "{e}");
}

fn temp_file(name: &str, text: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xlat-config-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

#[test]
fn load_detects_the_format() {
    assert!(looks_like_toml("# c\n\n[left]\n"));
    assert!(looks_like_toml("  tester.backend = \"mem\"\n"));
    assert!(!looks_like_toml("# c\nIP-L-Vers 4 # a = b\n"));
    assert!(!looks_like_toml(""));
    let p = temp_file("siitperf.conf", BASE4.as_bytes());
    let c = load(&p, &[]).expect("conf");
    assert_eq!(c.source.kind, SourceKind::SiitperfConf);
    let p = temp_file("test.conf", MIN_TOML.as_bytes());
    assert_eq!(load(&p, &[]).expect("toml content").source.kind, SourceKind::Toml);
    let p = temp_file("bad.toml", BASE4.as_bytes());
    assert!(matches!(load(&p, &[]), Err(ConfigError::Syntax { .. })));
    let p = temp_file("latin1.conf", b"IP-L-Vers 4\n# caf\xe9\n");
    let e = load(&p, &[]).expect_err("latin-1");
    assert_eq!(
        e.location(),
        Some(&Loc::Line {
            file: p.display().to_string(),
            line: 2
        })
    );
    let e = load(&p.with_file_name("absent.conf"), &[]).expect_err("absent");
    assert!(matches!(e, ConfigError::Io { .. }), "{e}");
    let p = temp_file("o.conf", BASE4.as_bytes());
    let e = load(&p, &[set("IP-L-var", "9")]).expect_err("override");
    assert!(e.to_string().starts_with("--set IP-L-var: "), "{e}");
}

/// The afxdp backend: interface names required as with afpacket, a namespace allowed, and the
/// file the writer makes reads back the same.
#[test]
fn afxdp_needs_port_names_and_round_trips() {
    let t = MIN_TOML.replace("backend = \"mem\"", "backend = \"afxdp\"");
    let e = parse_toml(&t, "t.toml").expect_err("afxdp without ports");
    assert!(matches!(e, ConfigError::Required { .. }), "{e}");
    assert!(
        e.to_string().contains("'tester.left_port'") && e.to_string().contains("afxdp"),
        "{e}"
    );
    let t = MIN_TOML.replace(
        "backend = \"mem\"",
        "backend = \"afxdp\"\nleft_port = \"xlat-tl\"\nright_port = \"xlat-tr\"\nnetns = \"xlat-tester\"",
    ) + "dut_mac = \"02:00:00:00:00:01\"\n[left.ip_variation]\n";
    let t = t.replace("[right]", "dut_mac = \"02:00:00:00:00:02\"\n[right]");
    let c = parse_toml(&t, "t.toml").expect("afxdp with ports");
    assert_eq!(c.tester.backend, Backend::AfXdp);
    assert_eq!(c.tester.backend.name(), "afxdp");
    assert_eq!(
        (c.tester.left_port.as_str(), c.tester.right_port.as_str(), c.tester.netns.as_deref()),
        ("xlat-tl", "xlat-tr", Some("xlat-tester"))
    );
    let text = xlat_config::to_toml(&c);
    assert!(text.contains("backend = \"afxdp\""), "{text}");
    let back = parse_toml(&text, "back.toml").expect("reads back");
    assert_eq!((back.tester, back.setup), (c.tester, c.setup));
    let o = parse_with_overrides(
        &t.replace("backend = \"afxdp\"", "backend = \"mem\""),
        "t.toml",
        SourceKind::Toml,
        &[
            ("tester.backend".to_string(), "afxdp".to_string()),
            ("tester.left_port".to_string(), "a".to_string()),
            ("tester.right_port".to_string(), "b".to_string()),
        ],
    );
    assert_eq!(o.map(|c| c.tester.backend).map_err(|e| e.to_string()), Ok(Backend::AfXdp));
}
