//! A campaign run's time estimate from its arguments as this program parses them
//! (`run_estimate` in main.rs parses them and picks the procedure): the procedure's own options
//! with their own defaults, turned into an [`xlat_campaign::estimate::Shape`] (which does the
//! arithmetic). A procedure whose number of trials depends on the DUT has none.

use xlat_campaign::estimate::{Search, Shape};
use xlat_results::Procedure;

use crate::args::{CommonArgs, SearchError, StatefulArgs};
use crate::procedure_args::{LatencyArgs, PdvArgs, ResetArgs, ThroughputArgs};

/// A throughput search: its trials follow from `--error`, `--max-rate` and `--short`.
pub fn throughput(a: &ThroughputArgs) -> Shape {
    Shape {
        search: Some(Search {
            span: span(a.search.error.unwrap_or(SearchError::DEFAULT), a.search.max_rate),
            short_s: a.short,
            accelerated: a.accelerated,
        }),
        ..base(Procedure::Throughput, &a.common, a.duration, &a.stateful)
    }
}

/// RFC 8219's latency: `--repetitions` trials per result.
pub fn latency(a: &LatencyArgs) -> Shape {
    Shape {
        repetitions: a.repetitions,
        ..base(Procedure::Latency, &a.common, a.duration, &a.stateful)
    }
}

/// RFC 8219's PDV: `--repetitions` trials per result.
pub fn pdv(a: &PdvArgs) -> Shape {
    Shape {
        repetitions: a.repetitions,
        ..base(Procedure::Pdv, &a.common, a.duration, &a.stateful)
    }
}

/// RFC 6201's reset: one trial.
pub fn reset(a: &ResetArgs) -> Shape {
    base(Procedure::Reset, &a.common, a.duration, &a.stateful)
}

/// What every procedure's options fix: its trials' duration and timeout, the results asked
/// for, a phase 1 the command line gives.
fn base(procedure: Procedure, common: &CommonArgs, duration_s: f64, stateful: &StatefulArgs) -> Shape {
    Shape {
        procedure,
        duration_s,
        timeout_s: common.timeout as f64 / 1000.0,
        repeat: common.repeat,
        repetitions: 1,
        phase_one: phase_one(stateful),
        search: None,
    }
}

/// The search's highest rate over its error: what `--error` and `--max-rate` fix.
fn span(error: SearchError, max_rate: Option<u64>) -> Option<f64> {
    match error {
        SearchError::PercentOfMax(p) => Some(100.0 / p),
        SearchError::Fps(e) => max_rate.map(|m| m as f64 / e.max(1) as f64),
    }
}

/// Phase 1 when the command line fixes it (its frames and rate; the Responder's timeout from
/// `--preliminary-timeout` or the configuration's default).
fn phase_one(s: &StatefulArgs) -> Option<(f64, f64, f64)> {
    let timeout_ms = s.preliminary_timeout.unwrap_or(xlat_config::DEFAULT_PRELIMINARY_TIMEOUT_MS);
    Some((
        f64::from(s.preliminary_frames?),
        s.preliminary_rate? as f64,
        timeout_ms as f64 / 1000.0,
    ))
}

#[cfg(test)]
mod tests {
    /// A run as a campaign gives it: the configuration and the JSON file added.
    fn seconds(procedure: &str, args: &[&str]) -> Option<f64> {
        let mut command: Vec<String> = ["xlatperf", procedure, "-c", "lab-router4.toml"].map(String::from).to_vec();
        command.extend(args.iter().map(|s| s.to_string()));
        command.extend(["--json".to_string(), "runs/r.json".to_string()]);
        crate::run_estimate(&command)
    }

    #[test]
    fn estimates_follow_the_options_as_the_commands_parse_them() {
        // 2 s + 0.5 s timeout + 0.5 s per trial.
        assert_eq!(
            seconds(
                "latency",
                &["--rate", "1000", "--duration", "2", "--timeout", "500", "--repetitions", "1"]
            ),
            Some(3.0)
        );
        // The latency test's 20 repetitions by default (Procedure::Latency.defaults()).
        assert_eq!(
            seconds("latency", &["--rate=1k", "--duration=2", "--timeout", "500", "--repeat", "3"]),
            Some(180.0)
        );
        // The reset test's 30 s and the 2 s timeout by default.
        assert_eq!(seconds("reset", &["--rate", "1000", "--timeout", "0"]), Some(30.5));
        assert_eq!(seconds("reset", &["--rate", "1000"]), Some(32.5));
        // 2 % error: log2(50) -> 6 halvings, 7 trials.
        assert_eq!(
            seconds("throughput", &["--duration", "2", "--timeout", "500", "--error", "2%"]),
            Some(21.0)
        );
        // The default error, 0.1 %: log2(1000) -> 10 halvings, 11 trials of 60 + 2 + 0.5 s.
        assert_eq!(seconds("throughput", &[]), Some(11.0 * 62.5));
        // 100k / 1k: 7 halvings, 8 trials.
        let fixed = ["--duration", "1", "--timeout", "0", "--max-rate", "100k", "--error", "1k"];
        assert_eq!(seconds("throughput", &fixed), Some(12.0));
        assert_eq!(seconds("throughput", &["--error", "1k"]), None, "no --max-rate: the line rate");
        assert_eq!(seconds("conn-rate", &[]), None);
        // Phase 1 of 10,000 frames at 5,000/s and twice T = 0.25 s before each of 8 trials.
        let stateful = [
            &fixed[..],
            &[
                "--preliminary-frames",
                "10000",
                "--preliminary-rate",
                "5000",
                "--preliminary-timeout",
                "250",
            ],
        ]
        .concat();
        assert_eq!(seconds("throughput", &stateful), Some(8.0 * 4.0));
        // T from the configuration's default (500 ms) when the command line leaves it out.
        let default_t = [&fixed[..], &["--preliminary-frames", "10000", "--preliminary-rate", "5000"]].concat();
        assert_eq!(seconds("throughput", &default_t), Some(8.0 * 4.5));
        assert_eq!(seconds("throughput", &["--accelerated"]), None);
        // Options the command refuses give no estimate.
        assert_eq!(seconds("latency", &["--rate", "1000", "--duration", "x"]), None);
        assert_eq!(seconds("nonsense", &[]), None);
    }
}
