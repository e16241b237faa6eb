//! siitperf.conf with an xlatperf.toml beside it: the tester's ports without touching the file
//! siitperf's scripts expect (docs/siitperf-compat.md).

use std::path::PathBuf;
use xlat_config::{load_with_companion, Backend, ConfigError, Loc};

const CONF: &str = "IP-L-Vers 4\nIP-R-Vers 4\nIPv4-L-Real 198.18.0.2\nIPv4-R-Real 198.19.0.2\n\
                    MAC-L-DUT 02:00:00:00:00:01\nMAC-R-DUT 02:00:00:00:00:02\n";

/// A fresh directory holding siitperf.conf and, if given, xlatperf.toml.
fn dir(name: &str, companion: Option<&str>) -> PathBuf {
    let d = std::env::temp_dir().join(format!("xlat-companion-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    std::fs::write(d.join("siitperf.conf"), CONF).expect("write");
    if let Some(c) = companion {
        std::fs::write(d.join("xlatperf.toml"), c).expect("write");
    }
    d
}

#[test]
fn without_a_companion_the_ports_are_dpdk_0_and_1() {
    let d = dir("none", None);
    let c = load_with_companion(&d.join("siitperf.conf")).expect("load");
    assert_eq!(c.tester.backend, Backend::Dpdk);
    assert_eq!((c.tester.left_port.as_str(), c.tester.right_port.as_str()), ("0", "1"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_companion_gives_backend_ports_and_eal_arguments() {
    let d = dir(
        "ports",
        Some("# the lab's ports\n[tester]\nbackend = \"afpacket\"\nleft_port = \"xlat-t0\"\nright_port = \"xlat-t1\"\nnetns = \"xlat-tester\"\n"),
    );
    let c = load_with_companion(&d.join("siitperf.conf")).expect("load");
    assert_eq!(c.tester.backend, Backend::AfPacket);
    assert_eq!((c.tester.left_port.as_str(), c.tester.right_port.as_str()), ("xlat-t0", "xlat-t1"));
    assert_eq!(c.tester.netns.as_deref(), Some("xlat-tester"));
    // siitperf.conf's own keys and siitperf's defaults are kept.
    assert!(c.setup.forward && c.setup.reverse && c.tester.promisc);
    let d2 = dir("eal", Some("[tester]\nbackend = \"dpdk\"\nleft_port = \"net_ring0\"\nright_port = \"net_ring0\"\neal_args = [\"--no-huge\", \"--vdev\", \"net_ring0\"]\n"));
    let c = load_with_companion(&d2.join("siitperf.conf")).expect("load");
    assert_eq!(c.tester.eal_args, ["--no-huge", "--vdev", "net_ring0"]);
    let _ = std::fs::remove_dir_all(&d);
    let _ = std::fs::remove_dir_all(&d2);
}

#[test]
fn the_companion_holds_the_tester_table_only_and_its_errors_name_its_lines() {
    let d = dir("other", Some("[tester]\nbackend = \"afpacket\"\n\n[traffic]\nreverse = false\n"));
    let e = load_with_companion(&d.join("siitperf.conf")).expect_err("traffic in the companion");
    let file = d.join("xlatperf.toml").display().to_string();
    assert!(matches!(e, ConfigError::Invalid { .. }), "{e}");
    assert_eq!(
        e.location(),
        Some(&Loc::Line {
            file: file.clone(),
            line: 4
        }),
        "{e}"
    );
    assert!(e.to_string().contains("[tester] table only"), "{e}");
    // A bad value in the companion: its file, line and key.
    let d2 = dir("bad", Some("[tester]\nbackend = \"afpacket\"\npromisc = 3\n"));
    let e = load_with_companion(&d2.join("siitperf.conf")).expect_err("bad promisc");
    let file2 = d2.join("xlatperf.toml").display().to_string();
    assert!(e.to_string().starts_with(&format!("{file2}:3:")), "{e}");
    assert!(e.to_string().to_lowercase().contains("promisc"), "{e}");
    let _ = std::fs::remove_dir_all(&d);
    let _ = std::fs::remove_dir_all(&d2);
}

/// Every example TOML written as siitperf.conf + xlatperf.toml reads back into the same frames
/// and ports (the trial's parameters go to siitperf's command line, named in a comment); what
/// siitperf cannot express is refused with the key named.
#[test]
fn toml_to_siitperf_and_back_keeps_the_test() {
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let (mut converted, mut refused) = (0, 0);
    for e in std::fs::read_dir(&examples).expect("examples") {
        let path = e.expect("entry").path();
        if path.extension().and_then(|x| x.to_str()) != Some("toml") {
            continue;
        }
        // The lab's examples leave the DUT's MACs to resolution; siitperf needs them given.
        let macs = [
            ("left.dut_mac".to_string(), "02:00:00:00:00:01".to_string()),
            ("right.dut_mac".to_string(), "02:00:00:00:00:02".to_string()),
        ];
        let cfg = xlat_config::load(&path, &macs).unwrap_or_else(|e| panic!("{e}"));
        let files = match xlat_config::to_siitperf(&cfg) {
            Ok(f) => f,
            Err(why) => {
                assert!(why.to_string().starts_with("key 'dut."), "{}: {why}", path.display());
                refused += 1;
                continue;
            }
        };
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("x").to_string();
        let d = dir(&format!("rt-{name}"), Some(&files.companion));
        std::fs::write(d.join("siitperf.conf"), &files.conf).expect("write");
        let back = load_with_companion(&d.join("siitperf.conf")).unwrap_or_else(|e| panic!("{}: {e}\n{}", path.display(), files.conf));
        let mut want = cfg.setup.clone();
        // siitperf has no seed, and no check of foreign addresses; n and m are command-line arguments.
        want.seed = back.setup.seed;
        want.allow_foreign_addresses = back.setup.allow_foreign_addresses;
        (want.fg_n, want.fg_m) = (back.setup.fg_n, back.setup.fg_m);
        // The DUT's addresses serve to resolve its MAC, which siitperf.conf gives instead.
        for (w, b) in [(&mut want.left, &back.setup.left), (&mut want.right, &back.setup.right)] {
            (w.dut_ipv4, w.dut_ipv6) = (b.dut_ipv4, b.dut_ipv6);
        }
        assert_eq!(back.setup, want, "{}\n{}", path.display(), files.conf);
        assert_eq!(back.tester, cfg.tester, "{}", path.display());
        assert!(files.conf.contains("# command line: siitperf-tp "), "{}", files.conf);
        converted += 1;
        let _ = std::fs::remove_dir_all(&d);
    }
    assert!(
        converted >= 8,
        "only {converted} examples converted ({refused} with DUT hooks refused)"
    );
}

#[test]
fn what_siitperf_cannot_express_is_refused_with_the_key() {
    let text = "[tester]\nbackend = \"mem\"\n[left]\nip_version = 4\nipv4_real = \"198.18.0.2\"\ndut_ipv4 = \"198.18.0.1\"\n\
                [right]\nip_version = 4\nipv4_real = \"198.19.0.2\"\ndut_mac = \"02:00:00:00:00:02\"\n";
    let cfg = xlat_config::parse_toml(text, "t.toml").expect("parse");
    let e = xlat_config::to_siitperf(&cfg).expect_err("no left DUT MAC");
    assert!(
        e.to_string().starts_with("key 'left.dut_mac' is not set: siitperf needs MAC-L-DUT"),
        "{e}"
    );
    let text = format!("{text}[dut]\nbefore_trial = \"true\"\n").replace("dut_ipv4 = \"198.18.0.1\"", "dut_mac = \"02:00:00:00:00:01\"");
    let cfg = xlat_config::parse_toml(&text, "t.toml").expect("parse");
    let e = xlat_config::to_siitperf(&cfg).expect_err("hooks");
    assert!(e.to_string().starts_with("key 'dut.before_trial'"), "{e}");
}
