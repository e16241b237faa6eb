//! siitperf's command lines end to end, through the xlatperf binary called as `siitperf-tp` and
//! `siitperf-pdv` (links, as siitperf's scripts run them) on two in-process ports (`backend =
//! "mem"` in xlatperf.toml): the lines, their order and the exit codes siitperf gives. Needs
//! no root. (Through real DUTs: lab_siitperf_dir.rs.)

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A stateful NAT44 siitperf.conf (Initiator left) with 100 x 10 port pairs, enumerated.
const CONF: &str = "IP-L-Vers 4\nIP-R-Vers 4\nIPv4-L-Real 198.18.0.2\nIPv4-R-Real 198.19.0.2\n\
    IPv4-L-Virt 198.19.0.2\nIPv4-R-Virt 198.18.0.2\nForward 1\nReverse 1\nStateful 1\n\
    Fwd-var-sport 3\nFwd-var-dport 3\nFwd-sport-min 1024\nFwd-sport-max 1123\nFwd-dport-min 80\nFwd-dport-max 89\n\
    Enumerate-ports 3\nResponder-tuples 1\n";

/// A directory with siitperf.conf (`conf`), xlatperf.toml (the mem backend) and the links.
fn dir(name: &str, conf: Option<&str>) -> PathBuf {
    let d = std::env::temp_dir().join(format!("xlat-siitperf-face-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("build")).expect("mkdir");
    if let Some(c) = conf {
        std::fs::write(d.join("siitperf.conf"), c).expect("conf");
    }
    std::fs::write(d.join("xlatperf.toml"), "[tester]\nbackend = \"mem\"\n").expect("toml");
    for p in ["siitperf-tp", "siitperf-pdv"] {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_xlatperf"), d.join("build").join(p)).expect("link");
    }
    d
}

fn run(d: &Path, program: &str, args: &str) -> Output {
    Command::new("timeout")
        .arg("60")
        .arg(d.join("build").join(program))
        .args(args.split_whitespace())
        .current_dir(d)
        .output()
        .expect("run")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

#[test]
fn a_too_slow_phase_1_prints_the_warning_then_phase_2_and_exits_0() {
    let d = dir("slow", Some(CONF));
    // R = 4,000,000,000 frames/s: 1,000 frames due in 250 ns, no tester sends them in time.
    let o = run(&d, "siitperf-tp", "84 1000 1 100 2 2 1000 1000 4000000000 100 1000");
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    let lines: Vec<&str> = out.lines().collect();
    let starts = [
        "Info: 1000*N/R+T: 100 <= D: 1000",
        "Info: number of unique port number combinations: 1000",
        "Info: number of foreground preliminary frames: 1000",
        "Info: Stateful test cmdline parameteres: N: 1000, M: 1000, R: 4000000000, T: 100, D: 1000",
        "Info: Preliminary frame sending initiated at ",
        "Info: Preliminary sender's sending took ",
        "Warning: Preliminary sending was too slow (only ",
        "Preliminary frames received: 1000",
        "Info: Preliminary phase finished.",
        "Info: Testing initiated at ",
        "Info: Forward sender's sending took ",
        "Forward frames sent: 1000",
        "Info: Reverse sender's sending took ",
        "Reverse frames sent: 1000",
        "Forward frames received: 1000",
        "Reverse frames received: 1000",
        "Info: Test finished.",
    ];
    assert_eq!(lines.len(), starts.len(), "{out}");
    for (l, s) in lines.iter().zip(starts) {
        assert!(l.starts_with(s), "{l:?} is not {s:?}:\n{out}");
    }
    assert!(lines[6].ends_with("percent of required rate), the test is invalid."), "{out}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn input_errors_exit_255_after_the_info_lines_of_the_checks_that_passed() {
    let d = dir("input", Some(CONF));
    let o = run(&d, "siitperf-tp", "84 1000 1 100 2 2 1000");
    assert_eq!(o.status.code(), Some(255));
    assert_eq!(text(&o.stderr), "Input Error: Too few command line arguments.\n");
    assert_eq!(text(&o.stdout), "");
    // Check 3 fails (1,000 combinations, 1,001 frames): the lines of checks 1 and 3 stay.
    let o = run(&d, "siitperf-tp", "84 1000 1 100 2 2 1001 1000 2000 100 1000");
    assert_eq!(o.status.code(), Some(255));
    assert_eq!(
        text(&o.stdout),
        "Info: 1000*N/R+T: 600 <= D: 1000\nInfo: number of unique port number combinations: 1000\n\
         Info: number of foreground preliminary frames: 1001\n"
    );
    assert!(text(&o.stderr).starts_with("Input Error: There are not enough unique port number combinations"));
    // siitperf-pdv: a frame timeout below 1000 x duration + global timeout.
    let o = run(&d, "siitperf-pdv", "84 1000 1 100 2 2 1000 1000 2000 100 1000 1100");
    assert_eq!(o.status.code(), Some(255), "{}", text(&o.stderr));
    assert!(text(&o.stderr).starts_with("Input Error: Frame timeout must be between 0 and 1099"));
    let _ = std::fs::remove_dir_all(&d);
    // No siitperf.conf: an input error too.
    let d = dir("noconf", None);
    let o = run(&d, "siitperf-tp", "84 1000 1 100 2 2");
    assert_eq!(o.status.code(), Some(255));
    assert!(text(&o.stderr).starts_with("Input Error: "), "{}", text(&o.stderr));
    let _ = std::fs::remove_dir_all(&d);
}
