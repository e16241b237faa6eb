//! Tests of `main.rs`.

use super::*;

fn parse(args: &[&str]) -> Result<Cmd, clap::Error> {
    let mut v = vec!["xlatperf"];
    v.extend_from_slice(args);
    Cli::try_parse_from(v).map(|c| c.cmd)
}

fn err(args: &[&str]) -> String {
    match parse(args) {
        Ok(_) => panic!("{args:?} parsed"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn throughput_options() {
    let Ok(Cmd::Throughput(t)) = parse(&[
        "throughput",
        "-c",
        "x.toml",
        "--loss-tolerance",
        "0.1%",
        "--frame-sizes",
        "84,148,276",
        "--max-rate",
        "200k",
        "--error",
        "1%",
        "--short",
        "2",
        "--repeat",
        "3",
        "--set",
        "traffic.reverse=false",
    ]) else {
        panic!("not throughput")
    };
    assert!((t.search.loss_tolerance - 0.001).abs() < 1e-15);
    assert_eq!(t.common.frame_sizes, vec![84, 148, 276]);
    assert_eq!(t.search.max_rate, Some(200_000));
    assert_eq!(t.search.error.unwrap().resolve(200_000), 2000);
    assert_eq!(t.short, Some(2.0));
    assert_eq!(t.common.repeat, 3);
    assert_eq!(t.duration, 60.0);
    assert_eq!(t.common.timeout, 2000);
    assert_eq!(t.common.cfg.set, vec!["traffic.reverse=false"]);
    // Repeated --frame-size works as well as a list.
    let Ok(Cmd::Throughput(t)) = parse(&["throughput", "-c", "x", "--frame-size", "84", "--frame-size", "1518"]) else {
        panic!()
    };
    assert_eq!(t.common.frame_sizes, vec![84, 1518]);
    assert_eq!(t.search.loss_tolerance, 0.0);
}

#[test]
fn bad_values_name_their_option() {
    for (args, option) in [
        (vec!["throughput", "-c", "x", "--loss-tolerance", "150%"], "--loss-tolerance"),
        (vec!["throughput", "-c", "x", "--loss-tolerance", "lots"], "--loss-tolerance"),
        (vec!["throughput", "-c", "x", "--frame-sizes", "84,64"], "--frame-sizes"),
        (vec!["throughput", "-c", "x", "--frame-sizes", "84,,148"], "--frame-sizes"),
        (vec!["throughput", "-c", "x", "--max-rate", "0"], "--max-rate"),
        (vec!["throughput", "-c", "x", "--error", "0%"], "--error"),
        (vec!["throughput", "-c", "x", "--duration", "-1"], "--duration"),
        (vec!["throughput", "-c", "x", "--short", "0"], "--short"),
        (vec!["throughput", "-c", "x", "--repeat", "0"], "--repeat"),
        (vec!["throughput", "-c", "x", "--timeout", "70000"], "--timeout"),
        (vec!["frame-loss", "-c", "x", "--step", "20%"], "--step"),
        (vec!["frame-loss", "-c", "x", "--rates", "1000,x"], "--rates"),
        (vec!["latency", "-c", "x", "--rate", "1000", "--tags", "100"], "--tags"),
        (vec!["latency", "-c", "x", "--rate", "1000", "--tags", "50001"], "--tags"),
        (vec!["latency", "-c", "x", "--rate", "1000", "--delay", "x"], "--delay"),
        (vec!["b2b", "-c", "x", "--idle", "1"], "--idle"),
        (
            vec!["recovery", "-c", "x", "--throughput", "1000", "--overload-factor", "0"],
            "--overload-factor",
        ),
    ] {
        let e = err(&args);
        assert!(e.contains(option), "{args:?}: {e}");
    }
    // A required rate is asked for by name.
    assert!(err(&["latency", "-c", "x"]).contains("--rate"));
    assert!(err(&["recovery", "-c", "x"]).contains("--throughput"));
}

#[test]
fn other_procedures_parse() {
    let Ok(Cmd::FrameLoss(f)) = parse(&["frame-loss", "-c", "x", "--rates", "30000,20k", "--step", "5%"]) else {
        panic!()
    };
    assert_eq!(f.rates, vec![30_000, 20_000]);
    assert_eq!(f.step, 0.05);
    let Ok(Cmd::Latency(l)) = parse(&["latency", "-c", "x", "--rate", "20k"]) else {
        panic!()
    };
    assert_eq!(
        (l.rate, l.duration, l.delay, l.tags, l.repetitions),
        (20_000, 120.0, 60.0, 50_000, 20)
    );
    let Ok(Cmd::Pdv(p)) = parse(&["pdv", "-c", "x", "--rate", "1000", "--exact", "--frame-timeout", "10"]) else {
        panic!()
    };
    assert!(p.exact);
    assert_eq!((p.frame_timeout, p.duration), (10, 60.0));
    let Ok(Cmd::B2b(b)) = parse(&["back-to-back", "-c", "x", "--line-rate", "50000"]) else {
        panic!()
    };
    assert_eq!((b.line_rate, b.idle, b.repetitions), (Some(50_000), 2.0, 50));
    let Ok(Cmd::Recovery(r)) = parse(&["recovery", "-c", "x", "--throughput", "1000"]) else {
        panic!()
    };
    assert_eq!(
        (r.overload_factor, r.reduced_factor, r.overload, r.recovery),
        (1.1, 0.5, 60.0, 60.0)
    );
    assert!(matches!(
        parse(&["siitperf-lat", "84", "1000", "10", "2000", "2", "2", "5", "500"]),
        Ok(Cmd::SiitperfLat { .. })
    ));
    assert!(matches!(
        parse(&["siitperf-pdv", "84", "1000", "10", "2000", "2", "2", "0"]),
        Ok(Cmd::SiitperfPdv { .. })
    ));
}

#[test]
fn json_takes_a_file_or_a_dash_on_every_command() {
    use output::JsonTo;
    let Ok(Cmd::Trial { json, .. }) = parse(&["trial", "-c", "x", "--json", "-"]) else {
        panic!()
    };
    assert_eq!(json, Some(JsonTo::Stdout));
    let Ok(Cmd::Trial { json, .. }) = parse(&["trial", "-c", "x", "--json", "r.json"]) else {
        panic!()
    };
    assert_eq!(json, Some(JsonTo::File("r.json".into())));
    let Ok(Cmd::Throughput(t)) = parse(&["throughput", "-c", "x", "--json", "-"]) else {
        panic!()
    };
    assert_eq!(t.common.json, Some(JsonTo::Stdout));
    let Ok(Cmd::Selftest { args, .. }) = parse(&["selftest", "-c", "x", "--json", "s.json"]) else {
        panic!()
    };
    assert_eq!(args.json, Some(JsonTo::File("s.json".into())));
    // A value is required everywhere: the old `trial --json` flag is gone.
    for cmd in ["trial", "selftest", "latency"] {
        assert!(err(&[cmd, "-c", "x", "--json"]).contains("--json"), "{cmd}");
    }
}

#[test]
fn stateful_options_on_every_command_that_runs_trials() {
    let flags = [
        "--preliminary-frames",
        "1000000",
        "--state-table",
        "900000",
        "--preliminary-rate",
        "500k",
        "--preliminary-timeout",
        "200",
        "--phase-delay",
        "3000",
    ];
    let want = StatefulArgs {
        preliminary_frames: Some(1_000_000),
        state_table: Some(900_000),
        preliminary_rate: Some(500_000),
        preliminary_timeout: Some(200),
        phase_delay: Some(3000),
    };
    let with = |cmd: &[&str]| -> Vec<String> { cmd.iter().chain(flags.iter()).map(|s| s.to_string()).collect() };
    let parsed = |v: Vec<String>| -> Cmd {
        let mut all = vec!["xlatperf".to_string()];
        all.extend(v);
        Cli::try_parse_from(all).map(|c| c.cmd).unwrap_or_else(|e| panic!("{e}"))
    };
    let Cmd::Trial { stateful, .. } = parsed(with(&["trial", "-c", "x"])) else {
        panic!()
    };
    assert_eq!(stateful, want);
    let Cmd::Throughput(t) = parsed(with(&["throughput", "-c", "x"])) else {
        panic!()
    };
    assert_eq!(t.stateful, want);
    let Cmd::FrameLoss(f) = parsed(with(&["frame-loss", "-c", "x"])) else {
        panic!()
    };
    assert_eq!(f.stateful, want);
    let Cmd::Latency(l) = parsed(with(&["latency", "-c", "x", "--rate", "1000"])) else {
        panic!()
    };
    assert_eq!(l.stateful, want);
    let Cmd::Pdv(p) = parsed(with(&["pdv", "-c", "x", "--rate", "1000"])) else {
        panic!()
    };
    assert_eq!(p.stateful, want);
    let Cmd::B2b(b) = parsed(with(&["b2b", "-c", "x"])) else { panic!() };
    assert_eq!(b.stateful, want);
    // Not given: all None.
    let Ok(Cmd::Trial { stateful, .. }) = parse(&["trial", "-c", "x"]) else {
        panic!()
    };
    assert_eq!(stateful, StatefulArgs::default());
    // Commands that cannot run a stateful test do not take them.
    assert!(err(&["recovery", "-c", "x", "--throughput", "1000", "--preliminary-frames", "10"]).contains("--preliminary-frames"));
    assert!(err(&["selftest", "-c", "x", "--phase-delay", "10"]).contains("--phase-delay"));
    // Bad values name their option.
    for (args, option) in [
        (vec!["trial", "-c", "x", "--preliminary-frames", "0"], "--preliminary-frames"),
        (
            vec!["trial", "-c", "x", "--preliminary-frames", "4294967296"],
            "--preliminary-frames",
        ),
        (vec!["trial", "-c", "x", "--state-table", "0"], "--state-table"),
        (vec!["trial", "-c", "x", "--preliminary-rate", "0"], "--preliminary-rate"),
        (vec!["trial", "-c", "x", "--preliminary-rate", "1.5G"], "--preliminary-rate"),
        (vec!["trial", "-c", "x", "--preliminary-timeout", "0"], "--preliminary-timeout"),
        (vec!["trial", "-c", "x", "--preliminary-timeout", "2001"], "--preliminary-timeout"),
        (vec!["trial", "-c", "x", "--phase-delay", "0"], "--phase-delay"),
        (vec!["throughput", "-c", "x", "--phase-delay", "100000001"], "--phase-delay"),
    ] {
        let e = err(&args);
        assert!(e.contains(option), "{args:?}: {e}");
    }
}

/// A stateful configuration file for the tests below.
fn stateful_file(name: &str, extra: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("xlatperf-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    let text = format!(
        "[tester]\nbackend = \"mem\"\n[left]\nip_version = 4\nipv4_real = \"198.18.0.2\"\n[right]\nip_version = 4\n\
         ipv4_real = \"198.19.0.2\"\n[stateful]\nmode = \"initiator-left\"\n{extra}[trial]\nrate = 1000\nduration = 2\n"
    );
    std::fs::write(&p, text).expect("write");
    p
}

#[test]
fn trial_builds_phase_1_from_the_file_and_the_options() {
    let p = stateful_file("trial.toml", "preliminary_frames = 1000\npreliminary_rate = 1000\n");
    let c = ConfigArgs {
        config: p.clone(),
        set: Vec::new(),
    };
    let flags = StatefulArgs::default();
    let o = TrialOptions {
        rate: None,
        duration: None,
        frame_size: None,
        timeout: None,
        json: None,
        stateful: &flags,
    };
    let (_, spec) = trial_spec(&c, &o).expect("spec");
    let pre = spec.preliminary.expect("phase 1");
    assert_eq!(
        (pre.frames, pre.state_table, pre.rate, pre.timeout_ms, pre.phase_delay_ms),
        (1000, 1000, 1000, 500, 2000)
    );
    let flags = StatefulArgs {
        preliminary_rate: Some(4000),
        ..Default::default()
    };
    let (cfg, spec) = trial_spec(&c, &TrialOptions { stateful: &flags, ..o }).expect("spec");
    assert_eq!(spec.preliminary.map(|p| (p.rate, p.phase_delay_ms)), Some((4000, 1250)));
    assert_eq!(cfg.stateful.preliminary_rate, Some(4000));
    // Without N anywhere: an error naming the key and the option.
    let p2 = stateful_file("no-n.toml", "");
    let c2 = ConfigArgs {
        config: p2,
        set: Vec::new(),
    };
    let e = trial_spec(&c2, &o).expect_err("no N");
    assert!(e.to_string().contains("'stateful.preliminary_frames' must be set"), "{e}");
    assert!(e.to_string().contains("--preliminary-frames N"), "{e}");
    // Stateless: the options are refused, and no phase 1 without them.
    let c3 = ConfigArgs {
        config: p2_stateless(&c2.config),
        set: Vec::new(),
    };
    let (_, spec) = trial_spec(&c3, &o).expect("stateless");
    assert_eq!((spec.preliminary, spec.max_send_lag_ns), (None, None));
    // The bound of the sender's lag, from the configuration.
    let c4 = ConfigArgs {
        set: vec!["tester.max_send_lag_us=500".into()],
        ..c3.clone()
    };
    let (_, spec) = trial_spec(&c4, &o).expect("bounded");
    assert_eq!(spec.max_send_lag_ns, Some(500_000));
    let c5 = ConfigArgs {
        set: vec!["tester.max_send_lag_frames=250".into()],
        ..c3.clone()
    };
    let (_, spec) = trial_spec(&c5, &o).expect("bounded in frames");
    assert_eq!((spec.max_send_lag_ns, spec.max_send_lag_frames), (None, Some(250)));
    let flags = StatefulArgs {
        preliminary_frames: Some(5),
        ..Default::default()
    };
    let e = trial_spec(&c3, &TrialOptions { stateful: &flags, ..o }).expect_err("refused");
    assert!(e.to_string().starts_with("--preliminary-frames is only for a stateful test"), "{e}");
}

fn p2_stateless(p: &Path) -> PathBuf {
    let text = std::fs::read_to_string(p)
        .expect("read")
        .replace("mode = \"initiator-left\"", "mode = \"off\"");
    let q = p.with_file_name("stateless.toml");
    std::fs::write(&q, text).expect("write");
    q
}

#[test]
fn procedures_give_every_trial_phase_1_and_the_others_refuse() {
    let p = stateful_file("proc.toml", "preliminary_frames = 1000\npreliminary_rate = 1000\n");
    let common = |extra: &[&str]| -> args::CommonArgs {
        let mut v = vec!["xlatperf", "throughput", "-c", p.to_str().expect("utf-8")];
        v.extend_from_slice(extra);
        match Cli::try_parse_from(v).map(|c| c.cmd) {
            Ok(Cmd::Throughput(t)) => t.common,
            _ => panic!(),
        }
    };
    let flags = StatefulArgs {
        state_table: Some(10),
        ..Default::default()
    };
    let prepared = procedures::prepare(&common(&[]), Some(&flags), xlat_results::Procedure::Throughput, &[]).expect("prepared");
    assert_eq!(prepared.preliminary.map(|p| p.state_table), Some(10));
    // The configuration recorded in the JSON is the one the trials run with.
    assert_eq!(prepared.meta.config["stateful"]["state_table"], 10);
    let e = procedures::prepare(&common(&[]), None, xlat_results::Procedure::Recovery, &[])
        .err()
        .expect("refused");
    assert!(e.to_string().starts_with("recovery cannot run a stateful test"), "{e}");
    let e = run(
        &Cli::try_parse_from(["xlatperf", "selftest", "-c", p.to_str().expect("utf-8")]).expect("parse"),
        &[],
    )
    .expect_err("selftest");
    assert!(e.to_string().starts_with("selftest cannot run a stateful test"), "{e}");
}

#[test]
fn line_rate_of_ten_gigabit_ethernet() {
    let cfg = xlat_config::parse_toml(
        "[tester]\nbackend = \"mem\"\nleft_port = \"a\"\nright_port = \"b\"\n[left]\nip_version = 4\nipv4_real = \"198.18.0.2\"\n\
         [right]\nip_version = 4\nipv4_real = \"198.19.0.2\"\n",
        "t.toml",
    );
    let cfg = cfg.unwrap();
    assert_eq!(xlat_procedures::setup_line_rate(&cfg.setup, 84, 10.0), 14_880_952);
    assert_eq!(xlat_procedures::setup_line_rate(&cfg.setup, 1538, 10.0), 812_743);
    assert_eq!(xlat_procedures::setup_line_rate(&cfg.setup, 84, 1.0), 1_488_095);
}

/// A frame size from the command line that does not fit the configuration (here a B4 side's
/// 40-byte outer header) is refused once, naming the option and the range, before any port
/// opens.
#[test]
fn a_frame_size_option_too_large_for_a_tunnel_names_the_option() {
    let dir = std::env::temp_dir().join(format!("xlatperf-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join("b4.toml");
    let text = "[tester]\nbackend = \"mem\"\n[left]\nip_version = 4\nipv4_real = \"198.18.0.2\"\ndut_ipv6 = \"2001:2::1\"\n\
                [left.tunnel]\nlocal = \"2001:2::2\"\nremote = \"2001:2::1\"\n[right]\nip_version = 4\nipv4_real = \"198.19.0.2\"\n\
                [trial]\nrate = 1000\n";
    std::fs::write(&p, text).expect("write");
    let c = ConfigArgs {
        config: p,
        set: Vec::new(),
    };
    let flags = StatefulArgs::default();
    let o = |frame_size| TrialOptions {
        rate: None,
        duration: None,
        frame_size,
        timeout: None,
        json: None,
        stateful: &flags,
    };
    assert_eq!(trial_spec(&c, &o(Some(8998))).expect("fits").1.frame_size, 8998);
    let e = format!("{:#}", trial_spec(&c, &o(Some(8999))).expect_err("too large"));
    assert_eq!(
        e,
        "--frame-size 8999 is not allowed here (84-8998: all frames are IPv4, 20 bytes shorter than the size, and 40 bytes \
         longer in the tunnel)"
    );
}
