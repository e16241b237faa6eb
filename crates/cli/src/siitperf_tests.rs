//! siitperf's output around the trial: the enumeration warning where siitperf prints it, the
//! time lines in its format. (The command line's reading is xlat_config's:
//! crates/config/tests/siitperf_args.rs.)

use super::*;

const CONF: &str = "IP-L-Vers 4\nIP-R-Vers 4\nIPv4-L-Real 198.18.0.2\nIPv4-R-Real 198.19.0.2\n\
    MAC-L-DUT 02:00:00:00:00:01\nMAC-R-DUT 02:00:00:00:00:02\nForward 1\nReverse 1\nStateful 1\n\
    Fwd-var-sport 3\nFwd-var-dport 3\nFwd-sport-min 1024\nFwd-sport-max 1123\nFwd-dport-min 80\nFwd-dport-max 89\n";

/// The stateful test of CONF (and `extra`) read with a valid command line.
fn ok(extra: &str) -> CommandLine {
    let cfg = xlat_config::parse_siitperf(&format!("{CONF}{extra}"), "siitperf.conf").unwrap_or_else(|e| panic!("{e}"));
    let args: Vec<String> = "84 1000 10 2000 2 2 1000 1000 2000 500 1500".split(' ').map(String::from).collect();
    siitperf_args::read(siitperf_args::Program::Tp, cfg, &args, &mut Vec::new()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_enumeration_warning_of_lat_and_pdv() {
    let c = ok("Enumerate-ports 3\n");
    let lines = vec![
        "Preliminary frames sent: 1000".to_string(),
        "Info: Preliminary phase finished.".to_string(),
        "Forward frames sent: 10000".to_string(),
    ];
    let out = with_enumeration_warning(&c, Program::Lat { delay_s: 1.0 }, lines.clone());
    assert_eq!(
        out[2],
        "Warning: Port number enumeration is supported only in the preliminary phase of Latency measurements."
    );
    assert_eq!(out.len(), 4);
    assert_eq!(with_enumeration_warning(&c, Program::Tp, lines.clone()), lines);
    // Without the phase 1 lines, first.
    let out = with_enumeration_warning(
        &c,
        Program::Pdv { frame_timeout_ms: 0 },
        vec!["Forward frames sent: 10000".to_string()],
    );
    assert_eq!(
        out[0],
        "Warning: Port number enumeration is supported only in the preliminary phase of PDV measurements."
    );
    // Without port enumeration, no warning.
    let c = ok("");
    assert_eq!(
        with_enumeration_warning(&c, Program::Pdv { frame_timeout_ms: 0 }, lines.clone()),
        lines
    );
}

#[test]
fn local_time_is_siitperfs_format() {
    let t = local_time(1_735_689_599);
    assert_eq!(t.len(), 19, "{t}");
    assert_eq!((&t[4..5], &t[7..8], &t[10..11], &t[13..14]), ("-", "-", " ", ":"), "{t}");
}
