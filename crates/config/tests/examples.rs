//! Every example parses; siitperf.conf samples parse; siitperf.conf -> TOML -> the same
//! configuration; the documentation names every key.

use std::path::{Path, PathBuf};
use xlat_config::{keys, load, parse_siitperf, parse_toml, to_toml, validate, Backend, SourceKind, TestConfig};
use xlat_traffic::{IpVersion, Stateful, Variation};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example(name: &str) -> TestConfig {
    let p = root().join("examples").join(name);
    match load(&p, &[]) {
        Ok(c) => c,
        Err(e) => panic!("{}: {e}", p.display()),
    }
}

/// Same content, source aside.
fn assert_same(a: &TestConfig, b: &TestConfig) {
    assert_eq!(a.setup, b.setup);
    assert_eq!(a.tester, b.tester);
    assert_eq!(a.trial, b.trial);
    assert_eq!(a.stateful, b.stateful);
    assert_eq!(a.dut, b.dut);
}

/// Every file under examples/, found by reading the directory (and its subdirectories), so that
/// a new example is checked without being listed here; but examples/campaigns/, which holds
/// campaign plans, not test descriptions (crates/cli/tests/lab_campaign.rs dry-runs each).
fn example_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for e in entries {
            let p = e.expect("directory entry").path();
            if p.is_dir() && p.file_name().is_some_and(|n| n == "campaigns") {
                continue;
            } else if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root().join("examples"), &mut files);
    files.sort();
    files
}

/// Each example is read by the reader its name calls for (`.toml`: TOML, `.conf`:
/// siitperf.conf; nothing else belongs in examples/), validated, read the same by `load` (what
/// `xlatperf` runs), and survives `to_toml` and back.
#[test]
fn every_example_parses_and_round_trips() {
    let files = example_files();
    assert!(files.len() >= 13, "only {} examples", files.len());
    for p in &files {
        let name = p.display().to_string();
        let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (read, kind) = match p.extension().and_then(|e| e.to_str()) {
            Some("toml") => (parse_toml(&text, &name), SourceKind::Toml),
            Some("conf") => (parse_siitperf(&text, &name), SourceKind::SiitperfConf),
            _ => panic!("{name}: an example is a TOML test description (.toml) or a siitperf.conf (.conf)"),
        };
        let cfg = read.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cfg.source.kind, kind, "{name}");
        validate(&cfg).unwrap_or_else(|e| panic!("{name}: {e}"));
        let loaded = load(p, &[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(loaded.source.kind, kind, "{name}: load chose the other reader");
        assert_same(&cfg, &loaded);
        let text = to_toml(&cfg);
        let back = parse_toml(&text, "converted.toml").unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
        assert_same(&cfg, &back);
    }
}

#[test]
fn the_example_setups() {
    let r4 = example("router4.toml");
    assert_eq!(r4.tester.backend, Backend::AfPacket);
    assert_eq!(r4.tester.netns.as_deref(), Some("xlat-tester"));
    assert_eq!(r4.setup.left.ip_version, IpVersion::V4);
    assert_eq!(r4.trial.rate, Some(10000));
    assert_eq!(r4.trial.duration_s, 10.0);

    let m4 = example("router4-multi-ip.toml");
    assert_eq!(m4.setup.left.ip_var.variation, Variation::Pseudorandom);
    assert_eq!(
        (m4.setup.left.ip_var.min, m4.setup.left.ip_var.max, m4.setup.left.ip_var.ipv4_offset),
        (2, 65534, 2)
    );
    assert_eq!(m4.setup.forward_ports.sport.variation, Variation::Pseudorandom);

    let m6 = example("router6-multi-ip.toml");
    assert_eq!(
        (
            m6.setup.right.ip_var.min,
            m6.setup.right.ip_var.max,
            m6.setup.right.ip_var.ipv6_offset
        ),
        (0, 0xffff, 12)
    );

    let siit = example("siit.toml");
    assert_eq!(
        (siit.setup.left.ip_version, siit.setup.right.ip_version),
        (IpVersion::V6, IpVersion::V4)
    );
    assert_eq!(siit.setup.right.ipv6_virt, Some("64:ff9b::c613:2".parse().expect("addr")));

    let nat64 = example("nat64-multi-ip.toml");
    assert_eq!(nat64.setup.stateful.mode, Stateful::InitiatorLeft);
    assert_eq!(nat64.setup.stateful.enumerate_ips, Variation::Pseudorandom);
    assert_eq!(nat64.setup.right.ip_var.ipv6_offset, 14);

    let nat44 = example("nat44.toml");
    assert_eq!(nat44.setup.stateful.enumerate_ports, Variation::Pseudorandom);
    assert_eq!(nat44.setup.stateful.responder_tuples, Variation::Pseudorandom);
    assert_eq!(nat44.stateful.preliminary_frames, Some(100_000));
    assert_eq!(nat44.stateful.preliminary_rate, Some(50_000));
    let p = xlat_config::preliminary(&nat44).expect("phase 1 of nat44.toml");
    assert_eq!((p.state_table, p.timeout_ms, p.phase_delay_ms), (100_000, 500, 3000));
    for name in ["nat64.toml", "nat44-multi-ip.toml", "nat64-multi-ip.toml"] {
        xlat_config::preliminary(&example(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    }

    let mem = example("mem.toml");
    assert_eq!(mem.tester.backend, Backend::Mem);
    assert_eq!(mem.setup.seed, Some(1));
}

#[test]
fn the_siitperf_conf_example_has_every_key() {
    let text = std::fs::read_to_string(root().join("examples/siitperf.conf")).expect("read");
    for k in keys::keys() {
        let Some(c) = k.conf_name() else { continue };
        assert!(
            text.lines().any(|l| l.trim_start().starts_with(&format!("{c} "))),
            "examples/siitperf.conf lacks {c}"
        );
    }
    let cfg = example("siitperf.conf");
    assert_eq!(cfg.tester.backend, Backend::Dpdk);
    assert_eq!((cfg.tester.left_port.as_str(), cfg.tester.right_port.as_str()), ("0", "1"));
    assert_eq!(cfg.tester.cpus.left_recv, Some(8));
    assert_eq!(cfg.tester.mem_channels, Some(2));
    assert_eq!(
        cfg.setup.left.tester_mac.map(|m| m.to_string()).as_deref(),
        Some("a0:36:9f:c5:fa:1c")
    );
    assert_eq!(cfg.setup.right.dut_mac.map(|m| m.to_string()).as_deref(), Some("a0:36:9f:c5:e6:5a"));
    assert_eq!(cfg.setup.left.ip_var.max, 0xffff);
    assert_eq!(cfg.setup.reverse_ports.dport.max, 49151);
}

#[test]
fn siitperf_conf_to_toml_to_the_same_config() {
    for name in ["siitperf.conf", "siitperf-nat64.conf"] {
        let a = example(name);
        let text = to_toml(&a);
        assert!(text.contains("(siitperf: IP-L-Vers)"), "{text}");
        let b = parse_toml(&text, "x.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_same(&a, &b);
        // And once more: TOML -> TOML is stable.
        assert_eq!(
            to_toml(&b).lines().skip(2).collect::<Vec<_>>(),
            text.lines().skip(2).collect::<Vec<_>>()
        );
    }
}

/// The parameter settings of Appendix A2 of G. Lencse, "Making stateless and stateful network
/// performance measurements unbiased" (Computer Communications, 2024), as siitperf.conf
/// fragments on top of a base.
#[test]
fn appendix_a2_fragments_parse() {
    let base4 = "IP-L-Vers 4\nIP-R-Vers 4\nIPv4-L-Real 198.18.0.2\nIPv4-R-Real 198.19.0.2\nMAC-L-DUT 02:00:00:00:00:01\nMAC-R-DUT 02:00:00:00:00:02\nForward 1\nReverse 1\n";
    let base6 = "IP-L-Vers 6\nIP-R-Vers 6\nIPv6-L-Real 2001:2::2\nIPv6-R-Real 2001:2:0:8000::2\nMAC-L-DUT 02:00:00:00:00:01\nMAC-R-DUT 02:00:00:00:00:02\nForward 1\nReverse 1\n";
    let base64 = "IP-L-Vers 6\nIP-R-Vers 4\nIPv6-L-Real 2001:2::2\nIPv4-R-Real 198.19.0.2\nIPv6-R-Virt 64:ff9b::198.19.0.2\nIPv4-L-Virt 198.18.0.2\nMAC-L-DUT 02:00:00:00:00:01\nMAC-R-DUT 02:00:00:00:00:02\nForward 1\nReverse 1\n";
    let fixed = "IP-L-var 0 # fixed\nIP-R-var 0 # fixed\n";
    let pr = "IP-L-var 3 # pseudorandom\nIP-R-var 3 # pseudorandom\n";
    let router4 = "IP-L-min 2 # \".1\" is for the DUT\nIP-L-max 65534 # \".255.255\" is broadcast\nIP-R-min 2\nIP-R-max 65534\nIPv4-L-offset 2 # last 16 bits\nIPv4-R-offset 2 # last 16 bits\n";
    let router6 = "IP-L-min 0 # The full range\nIP-L-max 0xffff # can be used.\nIP-R-min 0\nIP-R-max 0xffff\nIPv6-L-offset 12 # bits 96-111\nIPv6-R-offset 12 # bits 96-111\n";
    let stateful = "Stateful 1\nEnumerate-ports 3\nEnumerate-ips 3\nResponder-ports 3\nFwd-var-sport 3\nFwd-var-dport 3\n";
    let nat64 = "IP-L-min 0\nIP-L-max 0xffff\nIP-R-min 0\nIP-R-max 65534\nIPv6-L-offset 12 # bits 96-111\nIPv6-R-offset 14 # bits 112-127 (for IPv6-R-Virt!)\n";
    let nat44 = "IP-L-min 2\nIP-L-max 65534\nIP-R-min 0\nIP-R-max 65534\nIPv4-L-offset 2\nIPv4-R-offset 2\n";
    let cases = [
        format!("{base4}{fixed}"),
        format!("{base64}{fixed}Stateful 1\nEnumerate-ports 3\n"),
        format!("{base4}{pr}{router4}"),
        format!("{base6}{pr}{router6}"),
        format!("{base64}{pr}{nat64}{stateful}"),
        format!("{base4}{pr}{nat44}{stateful}"),
    ];
    for (i, c) in cases.iter().enumerate() {
        let cfg = parse_siitperf(c, "siitperf.conf").unwrap_or_else(|e| panic!("case {i}: {e}\n{c}"));
        let back = parse_toml(&to_toml(&cfg), "x.toml").unwrap_or_else(|e| panic!("case {i}: {e}"));
        assert_same(&cfg, &back);
    }
}

#[test]
fn docs_name_every_key() {
    let doc = std::fs::read_to_string(root().join("docs/config.md")).expect("docs/config.md");
    for k in keys::keys() {
        let leaf = k.path.rsplit('.').next().unwrap_or(k.path);
        assert!(
            doc.contains(&format!("`{}`", k.path)) || doc.contains(&format!("`{leaf}`")),
            "docs/config.md lacks {}",
            k.path
        );
        for c in k.conf {
            assert!(doc.contains(&format!("`{c}`")), "docs/config.md lacks {c}");
        }
    }
}

#[test]
fn the_complete_file_in_the_docs_parses() {
    let doc = std::fs::read_to_string(root().join("docs/config.md")).expect("docs/config.md");
    let start = doc.find("```toml\n").expect("a toml block") + "```toml\n".len();
    let end = start + doc[start..].find("```").expect("its end");
    let cfg = parse_toml(&doc[start..end], "docs/config.md").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cfg.setup.seed, Some(1234));
    assert_eq!(cfg.tester.cpus.left_recv, Some(8));
    assert_eq!(cfg.tester.eal_args, ["--no-pci", "--vdev", "net_null0"]);
}
