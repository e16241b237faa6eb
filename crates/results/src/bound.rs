//! What bounded a search's figure: the DUT, the tester, or the search's own range. A figure a
//! reader compares across DUTs must say which: a throughput equal to `--max-rate` is only a
//! lower bound, one at the tester's limit says nothing of the DUT beyond "at least".

use serde::{Deserialize, Serialize};

use crate::record::TrialRecord;
use crate::text::group;

/// What bounded a figure (a throughput, a connection rate, an MLRsearch load).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "kebab-case")]
pub enum Bound {
    /// The DUT: a trial at `rate`, just above the figure, failed (judged: the tester sent it in
    /// time and dropped nothing itself). `dut_busy`: the DUT's CPUs' busy share (0 to 1) in
    /// that trial, when the DUT runs on this host and its load was read.
    Dut {
        rate: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dut_busy: Option<f64>,
    },
    /// The DUT or the tester: at `rate`, just above the figure, frames were lost in every
    /// attempt, but only frames the tester sent while it caught up from a pause of its own
    /// (rule `lag_harm`): the DUT may be faster than the figure.
    DutOrTester {
        rate: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dut_busy: Option<f64>,
    },
    /// The tester: it could not send at `rate` (every attempt invalid), and the figure is
    /// within the search's precision of it. The DUT may be faster.
    Tester { rate: u64 },
    /// The search's range: nothing failed up to its top, `max`: the figure is at least this.
    Range { max: u64 },
    /// Nothing above the figure was judged (a search stopped by its trial limit).
    #[default]
    Undetermined,
}

impl Bound {
    /// The bound of a search whose figure is `figure`: `tester_bound` when the tester's limit
    /// ends the search within its precision, else the range's top `max` when the figure
    /// reached it, else the DUT when a valid trial at `upper` failed (the lowest such trial's
    /// load recorded), else undetermined.
    pub fn of_search(figure: u64, upper: u64, max: u64, tester_bound: Option<u64>, trials: &[TrialRecord]) -> Bound {
        if let Some(rate) = tester_bound {
            return Bound::Tester { rate };
        }
        if figure >= max {
            return Bound::Range { max };
        }
        let failed = trials
            .iter()
            // A judged failure (an invalid trial has no verdict: `pass` is `None`); a stateful
            // step that failed to fill its table is one, though the trial is marked invalid.
            .filter(|t| t.pass == Some(false) && t.rate > figure && t.rate <= upper)
            .min_by_key(|t| t.rate);
        match failed {
            Some(t) if t.possibly_tester => Bound::DutOrTester {
                rate: t.rate,
                dut_busy: t.load.as_ref().and_then(|l| l.dut.as_ref()).map(|d| d.busy),
            },
            Some(t) => Bound::Dut {
                rate: t.rate,
                dut_busy: t.load.as_ref().and_then(|l| l.dut.as_ref()).map(|d| d.busy),
            },
            None => Bound::Undetermined,
        }
    }

    /// The figure is a lower bound only (the tester's limit or the search's range).
    pub fn at_least(&self) -> bool {
        matches!(self, Bound::Tester { .. } | Bound::Range { .. } | Bound::DutOrTester { .. })
    }

    /// The short name: "dut", "dut_or_tester", "tester", "range", "undetermined".
    pub fn name(&self) -> &'static str {
        match self {
            Bound::Dut { .. } => "dut",
            Bound::DutOrTester { .. } => "dut_or_tester",
            Bound::Tester { .. } => "tester",
            Bound::Range { .. } => "range",
            Bound::Undetermined => "undetermined",
        }
    }

    /// One sentence for a human, `unit` the figure's ("frames/s").
    pub fn describe(&self, unit: &str) -> String {
        match self {
            Bound::Dut { rate, dut_busy } => {
                let busy = dut_busy.map_or(String::new(), |b| format!("; the DUT's CPUs were {:.0} % busy", 100.0 * b));
                format!(
                    "bounded by the DUT: it lost frames in a valid trial at {} {unit}{busy}",
                    group(*rate)
                )
            }
            Bound::DutOrTester { rate, dut_busy } => {
                let busy = dut_busy.map_or(String::new(), |b| format!("; the DUT's CPUs were {:.0} % busy", 100.0 * b));
                format!(
                    "bounded by the DUT or the tester: at {} {unit} every attempt lost frames only while the tester caught up from a pause of its own (possibly the tester's burst){busy}; the figure is a lower bound",
                    group(*rate)
                )
            }
            Bound::Tester { rate } => format!(
                "bounded by the tester: it could not send {} {unit}; the figure is a lower bound",
                group(*rate)
            ),
            Bound::Range { max } => format!(
                "bounded by the search's range: no loss up to its maximum {} {unit}; the figure is at least this",
                group(*max)
            ),
            Bound::Undetermined => "bound undetermined: nothing above the figure was measured validly".to_string(),
        }
    }
}

/// The DUT's CPUs' busy share, in percent, in the last passing trial at `rate` (the rate a
/// search found), when the trial read the DUT's load: how hard the DUT worked at its figure.
pub fn dut_busy_percent_at(trials: &[TrialRecord], rate: u64) -> Option<f64> {
    let t = trials.iter().rev().find(|t| t.rate == rate && t.pass == Some(true))?;
    Some(100.0 * t.load.as_ref()?.dut.as_ref()?.busy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlat_trial::{CpuLoad, LoadReport};

    fn trial(rate: u64, valid: bool, pass: Option<bool>, dut_busy: Option<f64>) -> TrialRecord {
        TrialRecord {
            index: 0,
            phase: "search".into(),
            attempt: 1,
            frame_size: 84,
            rate,
            duration_s: 1.0,
            frames: rate,
            valid,
            pass,
            invalid_reasons: Vec::new(),
            invalid_rules: Vec::new(),
            tester_bound: false,
            possibly_tester: false,
            passed_at: None,
            forward: None,
            reverse: None,
            preliminary: None,
            dut_hooks: Vec::new(),
            load: dut_busy.map(|b| LoadReport {
                seconds: 1.0,
                dut: Some(CpuLoad {
                    cpus: vec![1],
                    busy: b,
                    ..CpuLoad::default()
                }),
                tester: CpuLoad::default(),
            }),
        }
    }

    #[test]
    fn the_dut_load_at_a_figure_is_its_last_passing_trials() {
        let trials = [
            trial(100, true, Some(true), Some(0.5)),
            trial(200, true, Some(false), Some(0.97)),
            trial(100, true, Some(true), Some(0.25)),
            trial(150, false, None, Some(0.9)),
        ];
        assert_eq!(dut_busy_percent_at(&trials, 100), Some(25.0));
        // No passing trial at the rate, or no load read: none.
        assert_eq!(dut_busy_percent_at(&trials, 200), None);
        assert_eq!(dut_busy_percent_at(&trials, 150), None);
        assert_eq!(dut_busy_percent_at(&[trial(100, true, Some(true), None)], 100), None);
    }

    #[test]
    fn each_bound_from_its_search() {
        let trials = [
            trial(100, true, Some(true), Some(0.5)),
            trial(200, true, Some(false), Some(0.97)),
            trial(150, false, None, None),
            trial(175, true, Some(false), Some(0.93)),
        ];
        // A valid failure just above: the DUT, with its load in that trial (the lowest failing
        // rate inside the final interval).
        assert_eq!(
            Bound::of_search(100, 200, 1000, None, &trials),
            Bound::Dut {
                rate: 175,
                dut_busy: Some(0.93)
            }
        );
        // At the range's top: a lower bound, whatever failed elsewhere.
        let b = Bound::of_search(1000, 1000, 1000, None, &trials);
        assert!(b.at_least() && b.describe("frames/s").contains("at least"));
        // The tester's limit first.
        assert_eq!(Bound::of_search(100, 150, 1000, Some(150), &trials), Bound::Tester { rate: 150 });
        // Only an invalid trial above: undetermined.
        assert_eq!(Bound::of_search(100, 160, 1000, None, &trials[..3]), Bound::Undetermined);
        let d = Bound::of_search(100, 200, 1000, None, &trials).describe("frames/s");
        assert!(d.contains("175 frames/s") && d.contains("93 % busy"), "{d}");
        // JSON: tagged by what bounded it.
        let j = serde_json::to_string(&Bound::Range { max: 5 }).unwrap();
        assert_eq!(j, r#"{"by":"range","max":5}"#);
    }
}
