//! How long a run will take, from its options (for `--dry-run` and the estimated end), and how
//! long it may take before the campaign stops it (its deadline).
//!
//! The options come parsed by the command line's own parser, with its defaults (the CLI's
//! `estimate.rs` turns a run's arguments into a [`Shape`]; the campaign receives that as
//! [`Estimator`]), so no option is read and no default written a second time here.
//! Only what the options fix is estimated: a fixed-rate procedure (latency, PDV, reset) takes
//! its trials' durations; a binary throughput search takes about log2(max-rate / error) + 1
//! trials. Searches whose number of steps depends on the DUT (frame loss, MLRsearch, the
//! stateful procedures) are not estimated (`None`); while the campaign runs, finished runs
//! of the same procedure stand in for them.

use xlat_results::Procedure;

/// Seconds a trial costs beyond its duration and timeout (starting the workers, reading the
/// counters, the DUT's hooks): a rough allowance.
const TRIAL_OVERHEAD_S: f64 = 0.5;
/// A run without an estimate may take this long (a day): it is stopped and failed after it.
const UNESTIMATED_DEADLINE_S: f64 = 86_400.0;

/// The estimated seconds of a run from its command line (the program, the procedure, its
/// options); `None` when the options do not fix it (or do not parse).
pub type Estimator = fn(&[String]) -> Option<f64>;

/// What fixes a run's time: its parsed options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    pub procedure: Procedure,
    /// Seconds of each (full-length) trial.
    pub duration_s: f64,
    /// Seconds the receivers wait after sending.
    pub timeout_s: f64,
    /// Results asked for (`--repeat`).
    pub repeat: u64,
    /// Trials per result of a fixed-rate procedure (latency, PDV: `--repetitions`).
    pub repetitions: u32,
    /// A stateful phase 1 before every trial, when the options fix it: (frames, frames/s, the
    /// Responder's timeout in seconds).
    pub phase_one: Option<(f64, f64, f64)>,
    /// A binary throughput search.
    pub search: Option<Search>,
}

/// What fixes a binary search's number of trials.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Search {
    /// The highest rate over the error the search stops at (the search halves this many
    /// times in log2); `None` when the options do not fix it (an error in frames/s without
    /// `--max-rate`: the line rate).
    pub span: Option<f64>,
    /// Seconds of the short trials before the full-length one (`--short`).
    pub short_s: Option<f64>,
    /// The accelerated search, whose steps depend on the DUT.
    pub accelerated: bool,
}

/// The estimated seconds of a run of shape `s`; `None` when the options do not fix it.
pub fn run_seconds(s: &Shape) -> Option<f64> {
    // A stateful trial's phase 1 first: N frames at R, then the Responder's timeout T (twice:
    // phase 2 starts 2 T after phase 1's sending by default).
    let phase_one = match s.phase_one {
        Some((n, r, t)) if r > 0.0 => n / r + 2.0 * t,
        _ => 0.0,
    };
    let trial = |d: f64| phase_one + d + s.timeout_s + TRIAL_OVERHEAD_S;
    let one = match s.procedure {
        Procedure::Latency | Procedure::Pdv => f64::from(s.repetitions.max(1)) * trial(s.duration_s),
        Procedure::Reset => trial(s.duration_s),
        Procedure::Throughput => {
            let search = s.search?;
            if search.accelerated {
                return None;
            }
            let halvings = search.span.filter(|r| r.is_finite() && *r >= 1.0)?.log2().ceil();
            match search.short_s {
                Some(short) => (halvings + 1.0) * trial(short) + trial(s.duration_s),
                None => (halvings + 1.0) * trial(s.duration_s),
            }
        }
        _ => return None,
    };
    Some(one * s.repeat.max(1) as f64)
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

    fn shape(procedure: Procedure, duration_s: f64, timeout_s: f64) -> Shape {
        Shape {
            procedure,
            duration_s,
            timeout_s,
            repeat: 1,
            repetitions: 1,
            phase_one: None,
            search: None,
        }
    }

    #[test]
    fn estimates_follow_the_shape() {
        // 2 s + 0.5 s timeout + 0.5 s per trial.
        let latency = shape(Procedure::Latency, 2.0, 0.5);
        assert_eq!(run_seconds(&latency), Some(3.0));
        assert_eq!(
            run_seconds(&Shape {
                repetitions: 20,
                repeat: 3,
                ..latency
            }),
            Some(180.0)
        );
        assert_eq!(run_seconds(&shape(Procedure::Reset, 30.0, 0.0)), Some(30.5));
        let search = |span| Search {
            span,
            short_s: None,
            accelerated: false,
        };
        // A span of 50 (2 %): 6 halvings, 7 trials.
        let throughput = Shape {
            search: Some(search(Some(50.0))),
            ..shape(Procedure::Throughput, 2.0, 0.5)
        };
        assert_eq!(run_seconds(&throughput), Some(21.0));
        // 100k / 1k: 7 halvings, 8 trials; with 2 s short trials, 8 of them and one of 1 s.
        let t = Shape {
            search: Some(search(Some(100.0))),
            ..shape(Procedure::Throughput, 1.0, 0.0)
        };
        assert_eq!(run_seconds(&t), Some(12.0));
        let short = Search {
            short_s: Some(2.0),
            ..search(Some(100.0))
        };
        assert_eq!(run_seconds(&Shape { search: Some(short), ..t }), Some(8.0 * 2.5 + 1.5));
        assert_eq!(
            run_seconds(&Shape {
                search: Some(search(None)),
                ..t
            }),
            None,
            "the line rate"
        );
        let accelerated = Search {
            accelerated: true,
            ..search(Some(100.0))
        };
        assert_eq!(
            run_seconds(&Shape {
                search: Some(accelerated),
                ..t
            }),
            None
        );
        assert_eq!(run_seconds(&shape(Procedure::ConnRate, 60.0, 2.0)), None);
        // Phase 1 of 10,000 frames at 5,000/s and twice T = 0.25 s before each of 8 trials.
        let stateful = Shape {
            phase_one: Some((10_000.0, 5_000.0, 0.25)),
            ..t
        };
        assert_eq!(run_seconds(&stateful), Some(8.0 * 4.0));
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
