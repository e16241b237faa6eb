//! Phase 1 of a stateful test from the file and the command-line options
//! ([`xlat_config::phase_one`], [`xlat_config::load_stateful`]).

use xlat_config::{PhaseOneOptions, Preliminary, TestConfig};
use xlat_traffic::Stateful;

fn stateful_cfg(extra: &str) -> TestConfig {
    let text = format!(
        "[tester]\nbackend = \"mem\"\n[left]\nip_version = 4\nipv4_real = \"198.18.0.2\"\n[right]\nip_version = 4\n\
         ipv4_real = \"198.19.0.2\"\n[stateful]\nmode = \"initiator-left\"\n{extra}"
    );
    xlat_config::parse_toml(&text, "t.toml").expect("config")
}

#[test]
fn phase_1_from_the_file_and_the_options() {
    let none = PhaseOneOptions::default();
    // From the file, with the defaults.
    let mut cfg = stateful_cfg("preliminary_frames = 1000\npreliminary_rate = 2000\n");
    let p = xlat_config::phase_one(&mut cfg, &none).expect("ok").expect("stateful");
    let want = Preliminary {
        frames: 1000,
        state_table: 1000,
        rate: 2000,
        timeout_ms: 500,
        phase_delay_ms: 1500,
    };
    assert_eq!(p, want);
    assert_eq!(xlat_trial::PreliminarySpec::from(p).phase_delay_ms, 1500);
    // The options override the file.
    let all = PhaseOneOptions {
        preliminary_frames: Some(4000),
        state_table: Some(3000),
        preliminary_rate: Some(1000),
        preliminary_timeout: Some(100),
        phase_delay: Some(5000),
    };
    let p = xlat_config::phase_one(&mut cfg, &all).expect("ok").expect("stateful");
    let want = Preliminary {
        frames: 4000,
        state_table: 3000,
        rate: 1000,
        timeout_ms: 100,
        phase_delay_ms: 5000,
    };
    assert_eq!(p, want);
    assert_eq!(all.as_sets()[4], ("stateful.phase_delay_ms".to_string(), "5000".to_string()));
    // Missing N names the key and the option.
    let mut cfg = stateful_cfg("");
    let e = xlat_config::phase_one(&mut cfg, &none).expect_err("no N").to_string();
    assert!(e.contains("'stateful.preliminary_frames' must be set"), "{e}");
    assert!(e.ends_with("or give --preliminary-frames N"), "{e}");
    let n_only = PhaseOneOptions {
        preliminary_frames: Some(10),
        ..Default::default()
    };
    let e = xlat_config::phase_one(&mut cfg, &n_only).expect_err("no R").to_string();
    assert!(e.ends_with("or give --preliminary-rate R"), "{e}");
    // The checks apply to the options too: D shorter than phase 1.
    let short = PhaseOneOptions {
        preliminary_frames: Some(1000),
        preliminary_rate: Some(1000),
        phase_delay: Some(1499),
        ..Default::default()
    };
    let e = xlat_config::phase_one(&mut cfg, &short).expect_err("D short").to_string();
    assert!(e.contains("'stateful.phase_delay_ms' (1499 ms)"), "{e}");
}

#[test]
fn phase_1_options_refused_in_a_stateless_test() {
    let mut cfg = stateful_cfg("");
    cfg.setup.stateful.mode = Stateful::Off;
    assert_eq!(
        xlat_config::phase_one(&mut cfg, &PhaseOneOptions::default()).expect("stateless"),
        None
    );
    let two = PhaseOneOptions {
        preliminary_frames: Some(10),
        phase_delay: Some(10),
        ..Default::default()
    };
    assert_eq!(two.given(), ["--preliminary-frames", "--phase-delay"]);
    let e = xlat_config::phase_one(&mut cfg, &two).expect_err("refused").to_string();
    assert!(
        e.starts_with("--preliminary-frames, --phase-delay are only for a stateful test, but stateful.mode is off in t.toml"),
        "{e}"
    );
    xlat_config::refuse_stateful(&cfg, "selftest").expect("stateless is fine");
    let e = xlat_config::refuse_stateful(&stateful_cfg(""), "selftest").expect_err("stateful");
    assert!(e.to_string().starts_with("selftest cannot run a stateful test"), "{e}");
}

#[test]
fn load_stateful_names_the_options_a_stateless_file_refuses() {
    let dir = std::env::temp_dir().join(format!("xlat-phase-one-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("plain.toml");
    std::fs::write(
        &path,
        "[tester]\nbackend = \"mem\"\n[left]\nip_version = 4\nipv4_real = \"198.18.0.2\"\n[right]\nip_version = 4\nipv4_real = \"198.19.0.2\"\n",
    )
    .expect("write");
    let (_, pre) = xlat_config::load_stateful(&path, &[], &PhaseOneOptions::default()).expect("stateless");
    assert_eq!(pre, None);
    let n = PhaseOneOptions {
        preliminary_frames: Some(10),
        ..Default::default()
    };
    let e = xlat_config::load_stateful(&path, &[], &n).expect_err("refused").to_string();
    assert!(e.starts_with("--preliminary-frames is only for a stateful test"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
