//! siitperf's command lines: every check in siitperf's order and words, and the edge cases
//! where siitperf's reading of its arguments differs from a strict one.

use std::path::Path;
use xlat_config::siitperf_args::{read, CommandLine, InputError, Program};
use xlat_config::TestConfig;
use xlat_traffic::Stateful;
use xlat_trial::{PhaseTwoAfter, PreliminarySpec};

/// A stateful NAT44 siitperf.conf: Initiator left, 100 x 10 forward port combinations.
const CONF: &str = "IP-L-Vers 4\nIP-R-Vers 4\nIPv4-L-Real 198.18.0.2\nIPv4-R-Real 198.19.0.2\n\
    MAC-L-DUT 02:00:00:00:00:01\nMAC-R-DUT 02:00:00:00:00:02\nForward 1\nReverse 1\nStateful 1\n\
    Fwd-var-sport 3\nFwd-var-dport 3\nFwd-sport-min 1024\nFwd-sport-max 1123\nFwd-dport-min 80\nFwd-dport-max 89\n";

fn cfg(extra: &str) -> TestConfig {
    xlat_config::parse_siitperf(&format!("{CONF}{extra}"), "siitperf.conf").unwrap_or_else(|e| panic!("{e}"))
}

fn stateless(extra: &str) -> TestConfig {
    let mut c = cfg(extra);
    c.setup.stateful.mode = Stateful::Off;
    c
}

fn args(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

fn ok(extra: &str, line: &str) -> (CommandLine, Vec<String>) {
    let mut info = Vec::new();
    let c = read(Program::Tp, cfg(extra), &args(line), &mut info).unwrap_or_else(|e| panic!("{line}: {e}"));
    (c, info)
}

/// The error and the Info lines printed before it.
fn err_info(c: TestConfig, line: &str) -> (String, Vec<String>) {
    let mut info = Vec::new();
    match read(Program::Tp, c, &args(line), &mut info) {
        Ok(_) => panic!("{line}: accepted"),
        Err(e) => (e.to_string(), info),
    }
}

fn err(extra: &str, line: &str) -> String {
    err_info(cfg(extra), line).0
}

#[test]
fn stateful_parameters_become_phase_1() {
    let (c, info) = ok("", "84 1000 10 2000 2 2 1000 1000 2000 500 1500");
    assert_eq!(
        c.spec.preliminary,
        Some(PreliminarySpec {
            frames: 1000,
            state_table: 1000,
            rate: 2000,
            timeout_ms: 500,
            phase_delay_ms: 1500,
        })
    );
    assert_eq!((c.spec.rate, c.spec.duration_s, c.spec.timeout_ms), (1000, 10.0, 2000));
    assert_eq!(c.cfg.stateful.preliminary_frames, Some(1000));
    assert_eq!(
        info,
        vec![
            "Info: 1000*N/R+T: 1000 <= D: 1500",
            "Info: Stateful test cmdline parameteres: N: 1000, M: 1000, R: 2000, T: 500, D: 1500",
        ]
    );
    // A stateless configuration takes six arguments and has no phase 1.
    let mut info = Vec::new();
    let c = read(Program::Tp, stateless(""), &args("84 1000 10 2000 2 2"), &mut info).expect("stateless");
    assert_eq!((c.spec.preliminary, info.len()), (None, 0));
    // ... and the program's own arguments follow at argv[6].
    let c = read(Program::Lat, stateless(""), &args("84 1000 10 2000 2 2 5 500"), &mut info).expect("lat");
    assert_eq!(c.spec.latency.map(|l| (l.delay_s, l.tags)), Some((5.0, 500)));
}

#[test]
fn too_few_arguments_and_extra_ones_ignored() {
    let too_few = "Input Error: Too few command line arguments.";
    assert_eq!(err("", "84 1000 10 2000 2 2"), too_few);
    assert_eq!(err("", "84 1000 10 2000 2 2 1000 1000 2000 500"), too_few);
    assert_eq!(err_info(stateless(""), "84 1000 10 2000 2").0, too_few);
    let mut info = Vec::new();
    // -lat needs two arguments after the stateful eleven, -pdv one.
    for (program, line) in [
        (Program::Lat, "84 1000 10 2000 2 2 1000 1000 2000 500 1500 5"),
        (Program::Pdv, "84 1000 10 2000 2 2 1000 1000 2000 500 1500"),
    ] {
        let r = read(program, cfg(""), &args(line), &mut info);
        assert_eq!(r.err().map(|e| e.to_string()).as_deref(), Some(too_few), "{program:?}");
    }
    // siitperf reads what it needs and ignores the rest.
    let (c, _) = ok("", "84 1000 10 2000 2 2 1000 1000 2000 500 1500 and more");
    assert_eq!(c.spec.preliminary.map(|p| p.phase_delay_ms), Some(1500));
    // The -lat extras follow argv[11] in a stateful test.
    let c = read(
        Program::Lat,
        cfg(""),
        &args("84 1000 10 2000 2 2 1000 1000 2000 500 1500 5 500 x"),
        &mut info,
    )
    .expect("lat");
    assert_eq!(c.spec.latency.map(|l| (l.delay_s, l.tags)), Some((5.0, 500)));
}

#[test]
fn parameter_ranges_in_siitperfs_words() {
    for (line, msg) in [
        ("83 1000 10 2000 2 2", "IPv6 frame size must be between 84 and 1538."),
        ("1539 1000 10 2000 2 2", "IPv6 frame size must be between 84 and 1538."),
        ("84 0 10 2000 2 2", "Frame rate must be between 1 and 14880952."),
        ("84 14880953 10 2000 2 2", "Frame rate must be between 1 and 14880952."),
        ("84 1000 0 2000 2 2", "Test duration must be between 1 and 3600."),
        ("84 1000 10 60001 2 2", "Global timeout must be between 0 and 60000."),
        ("84 1000 10 2000 1 1", "The value of 'n' must be at least 2."),
        ("84 1000 10 2000 2 x", "Cannot read the value of 'm'."),
    ] {
        assert_eq!(err_info(stateless(""), line).0, format!("Input Error: {msg}"), "{line}");
    }
    for (line, msg) in [
        (
            "0 1000 2000 500 1500",
            "'N' (the number of preliminary frames) must be between 1 and 2^32-1.",
        ),
        (
            "4294967296 1000 2000 500 1500",
            "'N' (the number of preliminary frames) must be between 1 and 2^32-1.",
        ),
        (
            "x 1000 2000 500 1500",
            "'N' (the number of preliminary frames) must be between 1 and 2^32-1.",
        ),
        (
            "1000 0 2000 500 1500",
            "'M' (the size of the state table of the Responder) must be between 1 and 2^32-1.",
        ),
        ("1000 1000 0 500 1500", "Preliminary frame rate 'R' must be between 1 and 2^32-1."),
        (
            "1000 1000 4294967296 500 1500",
            "Preliminary frame rate 'R' must be between 1 and 2^32-1.",
        ),
        (
            "1000 1000 2000 0 1500",
            "the value of 'T' (global timeout for the preliminary frames) must be between 1 and 2000.",
        ),
        (
            "1000 1000 2000 2001 1500",
            "the value of 'T' (global timeout for the preliminary frames) must be between 1 and 2000.",
        ),
        (
            "1000 1000 2000 500 0",
            "the value of 'D' (delay caused by the preliminary phase) must be between 1 and 100000000.",
        ),
        (
            "1000 1000 2000 500 100000001",
            "the value of 'D' (delay caused by the preliminary phase) must be between 1 and 100000000.",
        ),
    ] {
        assert_eq!(
            err("", &format!("84 1000 10 2000 2 2 {line}")),
            format!("Input Error: {msg}"),
            "{line}"
        );
    }
    // sscanf("%u") reads leading digits: "12abc" is 12, "+5" is 5.
    let (c, _) = ok("", "84 +1000 10 2000 2 2 1000 1000 2000abc 500 1500");
    assert_eq!((c.spec.rate, c.spec.preliminary.map(|p| p.rate)), (1000, Some(2000)));
}

#[test]
fn r_is_any_32_bit_value_and_m_above_n_is_all_foreground() {
    // siitperf checks <rate> where it means R: R is not capped at 14,880,952 (the -R script
    // searches up to 16,000,000).
    let (c, _) = ok("", "84 1000 10 2000 2 2 1000 1000 16000000 500 1500");
    assert_eq!(c.spec.preliminary.map(|p| p.rate), Some(16_000_000));
    let (c, _) = ok("", "84 1000 10 2000 2 2 1000 1000 4294967295 500 1500");
    assert_eq!(c.spec.preliminary.map(|p| p.rate), Some(4_294_967_295));
    // m > n: every frame is foreground (i mod n < m), the same as m = n.
    let (c, _) = ok("", "84 1000 10 2000 2 5 1000 1000 2000 500 1500");
    assert_eq!((c.cfg.setup.fg_n, c.cfg.setup.fg_m), (2, 2));
}

#[test]
fn the_1518_byte_limit_is_judged_with_the_command_lines_n_and_m() {
    // All IPv4 and all foreground: up to 1538.
    ok("", "1538 1000 10 2000 2 2 1000 1000 2000 500 1500");
    // Background frames (m < n) are IPv6 and 20 bytes longer: siitperf refuses, whatever the file says.
    let bg = "IPv6-L-Real 2001:2::2\nIPv6-R-Real 2001:2:0:8000::2\n";
    let e = err(bg, "1538 1000 10 2000 2 1 2000 1000 2000 500 1500");
    assert_eq!(
        e,
        "Input Error: IPv6 frame sizes between 1518 and 1538 are allowed for pure IPv4 traffic only (as IPv4 frames are 20 bytes shorter)."
    );
    // An IPv6 side with its direction on.
    let nat64 = "IP-L-Vers 6\nIPv6-L-Real 2001:2::2\nIPv6-R-Virt 64:ff9b::c613:2\nIPv4-L-Virt 198.19.0.3\n";
    let mut v6 = stateless(nat64);
    assert!(err_info(v6.clone(), "1519 1000 10 2000 2 2").0.contains("pure IPv4 traffic only"));
    v6.setup.forward = false;
    let mut info = Vec::new();
    let r = read(Program::Tp, v6, &args("1519 1000 10 2000 2 2"), &mut info).map(|_| ());
    assert!(r.is_ok(), "forward off: its IPv6 side sends nothing: {r:?}");
}

#[test]
fn cross_check_1_phase_1_fits_in_d() {
    let e = err("", "84 1000 10 2000 2 2 1000 1000 1000 500 1499");
    assert_eq!(
        e,
        "Input Error: 1000*N/R+T > D (preliminary test may not be performed in the available time period). \
         (1000*N/R+T: 1500 > D: 1499)"
    );
    let (_, info) = ok("", "84 1000 10 2000 2 2 1000 1000 1000 500 1500");
    assert_eq!(info[0], "Info: 1000*N/R+T: 1500 <= D: 1500");
    // 1000*N/R rounds down: 1000 frames at 3000 frames/s take 333 ms.
    let (_, info) = ok("", "84 1000 10 2000 2 2 1000 1000 3000 1 334");
    assert_eq!(info[0], "Info: 1000*N/R+T: 334 <= D: 334");
    // 64-bit: 1000 * (2^32-1) does not wrap around in 32 bits.
    let e = err("Enumerate-ports 0\n", "84 1000 10 2000 2 2 4294967295 1000 1 2000 100000000");
    assert!(e.ends_with("(1000*N/R+T: 4294967297000 > D: 100000000)"), "{e}");
}

#[test]
fn cross_check_2_exact_foreground_count_and_the_info_line_before_it_stays() {
    // n = 5, m = 3, N = 8: frames 0-2 and 5-7 are foreground, 6 of them (siitperf's
    // N-N*(n-m)/n says 5 and would refuse M = 6).
    let both_v4_bg = "IPv6-L-Real 2001:2::2\nIPv6-R-Real 2001:2:0:8000::2\n";
    let (c, _) = ok(both_v4_bg, "84 1000 10 2000 5 3 8 6 1000 1 1000");
    assert_eq!(c.spec.preliminary.map(|p| p.state_table), Some(6));
    let (e, info) = err_info(cfg(both_v4_bg), "84 1000 10 2000 5 3 8 7 1000 1 1000");
    assert_eq!(
        e,
        "Input Error: N-N*(n-m)/n < M (there are not enough foreground frames to fill the state table). \
         (xlatperf counts them exactly: 6 foreground frames among N = 8 with n = 5, m = 3; M = 7.)"
    );
    // siitperf printed the line of check 1 before check 2 failed.
    assert_eq!(info, vec!["Info: 1000*N/R+T: 9 <= D: 1000"]);
}

#[test]
fn cross_check_3_unique_combinations() {
    // Ports: 100 x 10 = 1000 combinations.
    let (_, info) = ok("Enumerate-ports 3\n", "84 1000 10 2000 2 2 1000 1000 2000 500 1500");
    assert_eq!(
        info,
        vec![
            "Info: 1000*N/R+T: 1000 <= D: 1500",
            "Info: number of unique port number combinations: 1000",
            "Info: number of foreground preliminary frames: 1000",
            "Info: Stateful test cmdline parameteres: N: 1000, M: 1000, R: 2000, T: 500, D: 1500",
        ]
    );
    let (e, info) = err_info(cfg("Enumerate-ports 3\n"), "84 1000 10 2000 2 2 1001 1000 2000 500 1500");
    assert_eq!(
        e,
        "Input Error: There are not enough unique port number combinations for each (foregound) preliminary frames. (1000 < 1001)"
    );
    assert_eq!(info.len(), 3, "the Info lines before the failed check stay: {info:?}");
    // Linear enumeration wraps around and is not counted.
    let (_, info) = ok("Enumerate-ports 1\n", "84 1000 10 2000 2 2 5000 1000 5000 500 1500");
    assert_eq!(info.len(), 2);
    // IP addresses: 10 x 20 = 200 combinations (ports fixed).
    let ips = "Fwd-var-sport 0\nFwd-var-dport 0\nEnumerate-ips 3\nIP-L-var 3\nIP-R-var 3\nIP-L-min 1\nIP-L-max 10\n\
               IP-R-min 1\nIP-R-max 20\n";
    let (_, info) = ok(ips, "84 1000 10 2000 2 2 200 200 2000 500 1500");
    assert_eq!(info[1], "Info: number of unique IP address combinations: 200");
    assert_eq!(info[2], "Info: number of foreground preliminary frames: 200");
    let e = err(ips, "84 1000 10 2000 2 2 201 200 2000 500 1500");
    assert!(
        e.starts_with("Input Error: There are not enough unique IP address combinations for each (foregound)"),
        "{e}"
    );
    // Both: all four ranges full: 2^64 combinations (siitperf's 32-bit product wraps to 0).
    let both = "Enumerate-ports 3\nEnumerate-ips 3\nIP-L-var 3\nIP-R-var 3\nFwd-sport-min 0\nFwd-sport-max 65535\n\
                Fwd-dport-min 0\nFwd-dport-max 65535\n";
    let (_, info) = ok(both, "84 1000 10 2000 2 2 1000 1000 2000 500 1500");
    assert_eq!(
        info[1],
        "Info: number of unique IP address and port number combinations: 18446744073709551616"
    );
    // With the Initiator on the right, the reverse ports count.
    let right = "Stateful 2\nEnumerate-ports 3\nRev-var-sport 3\nRev-var-dport 3\nRev-sport-min 1\nRev-sport-max 3\n\
                 Rev-dport-min 1\nRev-dport-max 2\n";
    let (_, info) = ok(right, "84 1000 10 2000 2 2 6 6 2000 500 1500");
    assert_eq!(info[1], "Info: number of unique port number combinations: 6");
}

#[test]
fn cross_check_4_responder_tuples_need_more_than_one_entry() {
    let e = err("Responder-tuples 3\n", "84 1000 10 2000 2 2 1000 1 2000 500 1500");
    assert_eq!(
        e,
        "Input Error: 'Responder-tuples' MUST be set to 0, if the size of the state table (M) is 1."
    );
    ok("Responder-ports 0\n", "84 1000 10 2000 2 2 1000 1 2000 500 1500");
    ok("Responder-tuples 3\n", "84 1000 10 2000 2 2 1000 2 2000 500 1500");
}

#[test]
fn latency_and_pdv_arguments() {
    let line = |e: &str| args(&format!("84 1000 10 2000 2 2 1000 1000 2000 500 1500 {e}"));
    let run = |p: Program, e: &str| read(p, cfg(""), &line(e), &mut Vec::new());
    let lat = |e: &str| run(Program::Lat, e).map(|c| c.spec.latency.map(|l| l.tags));
    assert_eq!(lat("5 500"), Ok(Some(500)));
    assert_eq!(
        lat("10 500"),
        Err(InputError(
            "Input Error: Test duration MUST be longer than the delay before timestamps.".to_string()
        ))
    );
    assert!(lat("9 1001").is_err_and(|e| e.0.contains("not enough test frames")));
    assert!(lat("x 500").is_err_and(|e| e.0 == "Input Error: Delay before timestamps must be between 0 and 3600."));
    let pdv = |e: &str| run(Program::Pdv, e).map(|c| c.spec.pdv.map(|p| p.frame_timeout_ms));
    assert_eq!(pdv("0"), Ok(Some(0)));
    // Below 1000 x duration + global timeout: 10 s and 2000 ms give at most 11999 ms.
    assert_eq!(pdv("11999"), Ok(Some(11_999)));
    assert_eq!(
        pdv("12000"),
        Err(InputError(
            "Input Error: Frame timeout must be between 0 and 11999 (below 1000*duration+global timeout).".to_string()
        ))
    );
    // What follows phase 1: -tp and -lat measure after any phase 1, -pdv only after a filled
    // state table (siitperf-pdv exits on an unfilled one); only -lat tags, only -pdv records.
    for (p, e, after, lat, pdv) in [
        (Program::Tp, "", PhaseTwoAfter::AnyPhaseOne, false, false),
        (Program::Lat, "5 500", PhaseTwoAfter::AnyPhaseOne, true, false),
        (Program::Pdv, "0", PhaseTwoAfter::FilledTable, false, true),
    ] {
        let c = run(p, e).expect("valid");
        assert_eq!(
            (c.spec.phase_two_after, c.spec.latency.is_some(), c.spec.pdv.is_some()),
            (after, lat, pdv),
            "{p:?}"
        );
    }
}

#[test]
fn program_names() {
    assert_eq!(Program::from_name("siitperf-tp"), Some(Program::Tp));
    assert_eq!(Program::from_name("siitperf-lat"), Some(Program::Lat));
    assert_eq!(Program::from_name("siitperf-pdv"), Some(Program::Pdv));
    assert_eq!(Program::from_name("siitperf"), None);
    assert_eq!(Program::from_name("xlatperf"), None);
}

/// The command line in the comment of examples/siitperf-nat64.conf passes every check.
#[test]
fn the_example_command_line() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/siitperf-nat64.conf");
    let cfg = xlat_config::load(&path, &[]).expect("example");
    let mut info = Vec::new();
    let c = read(
        Program::Tp,
        cfg,
        &args("84 10000 10 2000 2 2 100000 100000 50000 500 3000"),
        &mut info,
    )
    .expect("ok");
    assert!(c.spec.preliminary.is_some());
    assert_eq!(info.len(), 4, "{info:?}");
    assert!(
        info[1].starts_with("Info: number of unique IP address and port number combinations: "),
        "{info:?}"
    );
}
