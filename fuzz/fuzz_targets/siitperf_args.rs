//! siitperf's command lines (`siitperf-tp 84 1000 10 2000 2 2 ...`) on a siitperf.conf: read
//! and checked, never a panic. The input is the siitperf.conf text, a NUL byte, then argv a
//! line each (so an argument may hold blanks, as one typed in quotes does), the program's name
//! first. Without a NUL, the whole input is argv on the stateful NAT44 configuration below.
use xlat_config::siitperf_args::{read, Program};

/// A stateful NAT44 test with pseudorandom port enumeration: every cross-check of `N M R T D`
/// is reached from it.
const CONF: &str = "IP-L-Vers 4\nIP-R-Vers 4\nIPv4-L-Real 198.18.0.2\nIPv4-R-Real 198.19.0.2\n\
    MAC-L-DUT 02:00:00:00:00:01\nMAC-R-DUT 02:00:00:00:00:02\nForward 1\nReverse 1\nStateful 1\n\
    Enumerate-ports 3\nFwd-var-sport 3\nFwd-var-dport 3\nFwd-sport-min 1024\nFwd-sport-max 1123\n\
    Fwd-dport-min 80\nFwd-dport-max 89\n";

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(text) = std::str::from_utf8(data) else { return };
        let (conf, argv) = text.split_once('\0').unwrap_or((CONF, text));
        let Ok(cfg) = xlat_config::parse_siitperf(conf, "siitperf.conf") else { return };
        let mut argv = argv.split('\n');
        let Some(program) = argv.next().and_then(Program::from_name) else { return };
        let args: Vec<String> = argv.map(String::from).collect();
        let _ = read(program, cfg, &args, &mut Vec::new());
    });
}
