//! How long a run will take, from its options (for `--dry-run` and the estimated end), and how
//! long it may take before the campaign stops it (its deadline).
//!
//! Only what the options fix is estimated: a fixed-rate procedure (latency, PDV, reset) takes
//! its trials' durations; a binary throughput search takes about log2(max-rate / error) + 1
//! trials. Searches whose number of steps depends on the DUT (frame loss, MLRsearch, the
//! stateful procedures) are not estimated (`None`); while the campaign runs, finished runs
//! of the same procedure stand in for them.

use xlat_results::defaults::DEFAULT_TIMEOUT_MS;
use xlat_results::sweep::parse_number;
use xlat_results::Procedure;

/// Seconds a trial costs beyond its duration and timeout (starting the workers, reading the
/// counters, the DUT's hooks): a rough allowance.
const TRIAL_OVERHEAD_S: f64 = 0.5;
/// A run without an estimate may take this long (a day): it is stopped and failed after it.
const UNESTIMATED_DEADLINE_S: f64 = 86_400.0;

/// The value of option `name` in `args` (`--name V` or `--name=V`), the last one given.
fn option<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    let mut found = None;
    for (i, a) in args.iter().enumerate() {
        if a == name {
            found = args.get(i + 1).map(String::as_str);
        } else if let Some(v) = a.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
            found = Some(v);
        }
    }
    found
}

fn number(args: &[String], name: &str, default: f64) -> f64 {
    option(args, name).and_then(|v| parse_number(v).ok()).unwrap_or(default)
}

/// The estimated seconds of a run of `procedure` with `args`; `None` when the options do not
/// fix it.
pub fn run_seconds(procedure: &str, args: &[String]) -> Option<f64> {
    let p = Procedure::from_name(procedure)?;
    let defaults = p.defaults();
    let duration = number(args, "--duration", defaults.duration_s);
    let timeout = number(args, "--timeout", DEFAULT_TIMEOUT_MS as f64) / 1000.0;
    let repeat = number(args, "--repeat", 1.0).max(1.0);
    // A stateful trial's phase 1 first: N frames at R, then the Responder's timeout T (twice:
    // phase 2 starts 2 T after phase 1's sending by default).
    let phase_one = match (option(args, "--preliminary-frames"), option(args, "--preliminary-rate")) {
        (Some(n), Some(r)) => match (parse_number(n), parse_number(r)) {
            (Ok(n), Ok(r)) if r > 0.0 => n / r + 2.0 * number(args, "--preliminary-timeout", 500.0) / 1000.0,
            _ => 0.0,
        },
        _ => 0.0,
    };
    let trial = |d: f64| phase_one + d + timeout + TRIAL_OVERHEAD_S;
    let one = match p {
        // RFC 8219's 20 trials per latency or PDV result by default.
        Procedure::Latency | Procedure::Pdv => number(args, "--repetitions", f64::from(defaults.repetitions)).max(1.0) * trial(duration),
        Procedure::Reset => trial(duration),
        Procedure::Throughput => {
            if args.iter().any(|a| a == "--accelerated") {
                return None;
            }
            // The search ends when the interval is at most --error wide: 0.1 % of the
            // maximum by default, so about log2(max / error) halvings after the first trial.
            let halvings = match option(args, "--error") {
                Some(e) if e.ends_with('%') => parse_number(e.trim_end_matches('%')).ok().map(|p| 100.0 / p),
                Some(e) => {
                    let max = option(args, "--max-rate").and_then(|m| parse_number(m).ok())?;
                    parse_number(e).ok().map(|e| max / e)
                }
                None => Some(1000.0),
            }
            .filter(|r| r.is_finite() && *r >= 1.0)?
            .log2()
            .ceil();
            match option(args, "--short").and_then(|s| parse_number(s).ok()) {
                Some(short) => (halvings + 1.0) * trial(short) + trial(duration),
                None => (halvings + 1.0) * trial(duration),
            }
        }
        _ => return None,
    };
    Some(one * repeat)
}

/// The deadline of a run: the plan's `run_deadline_s`, or four times its estimate plus ten
/// minutes, at least an hour; a day when it has no estimate.
pub fn deadline_s(plan_deadline_s: Option<f64>, estimate_s: Option<f64>) -> f64 {
    match (plan_deadline_s, estimate_s) {
        (Some(d), _) => d,
        (None, Some(e)) => (4.0 * e + 600.0).max(3600.0),
        (None, None) => UNESTIMATED_DEADLINE_S,
    }
}

/// Seconds as "1 h 02 min", "3 min 20 s" or "45 s".
pub fn human_seconds(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s / 60) % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn estimates_follow_the_options() {
        // 2 s + 0.5 s timeout + 0.5 s per trial.
        assert_eq!(
            run_seconds("latency", &a(&["--duration", "2", "--timeout", "500", "--repetitions", "1"])),
            Some(3.0)
        );
        assert_eq!(
            run_seconds("latency", &a(&["--duration=2", "--timeout", "500", "--repeat", "3"])),
            Some(180.0)
        );
        assert_eq!(run_seconds("reset", &a(&["--timeout", "0"])), Some(30.5));
        // 2 % error: log2(50) -> 6 halvings, 7 trials.
        assert_eq!(
            run_seconds("throughput", &a(&["--duration", "2", "--timeout", "500", "--error", "2%"])),
            Some(21.0)
        );
        // 100k / 1k: 7 halvings, 8 trials.
        assert_eq!(
            run_seconds(
                "throughput",
                &a(&["--duration", "1", "--timeout", "0", "--max-rate", "100k", "--error", "1k"])
            ),
            Some(12.0)
        );
        assert_eq!(
            run_seconds("throughput", &a(&["--error", "1k"])),
            None,
            "no --max-rate: the line rate"
        );
        assert_eq!(run_seconds("conn-rate", &[]), None);
        // Phase 1 of 10,000 frames at 5,000/s and twice T = 0.25 s before each of 8 trials.
        assert_eq!(
            run_seconds(
                "throughput",
                &a(&[
                    "--duration",
                    "1",
                    "--timeout",
                    "0",
                    "--max-rate",
                    "100k",
                    "--error",
                    "1k",
                    "--preliminary-frames",
                    "10k",
                    "--preliminary-rate",
                    "5k",
                    "--preliminary-timeout",
                    "250"
                ])
            ),
            Some(8.0 * 4.0)
        );
        assert_eq!(run_seconds("throughput", &a(&["--accelerated"])), None);
    }

    #[test]
    fn deadlines_and_durations() {
        assert_eq!(deadline_s(Some(5.0), Some(100.0)), 5.0);
        assert_eq!(deadline_s(None, Some(10.0)), 3600.0);
        assert_eq!(deadline_s(None, Some(1000.0)), 4600.0);
        assert_eq!(deadline_s(None, None), 86_400.0);
        assert_eq!(human_seconds(45.4), "45 s");
        assert_eq!(human_seconds(200.0), "3 min 20 s");
        assert_eq!(human_seconds(3720.0), "1 h 02 min");
    }
}
