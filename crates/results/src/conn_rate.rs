//! The maximum connection establishment rate (RFC 9693 section 4.2): the result and its step table (`xlat_procedures::conn_rate` runs the search).

use serde::{Deserialize, Serialize};

use crate::record::TrialRecord;
use crate::result::BenchResult;
use crate::text::{group, text_table};
use crate::view::{Metric, Procedure};

/// The result of one search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnRateResult {
    pub frame_size: usize,
    pub connections: u64,
    pub max_rate: u64,
    pub error: u64,
    /// The validation rate factor, when steps were validated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<f64>,
    /// The highest rate at which every connection was established; `None` if none was.
    pub rate: Option<u64>,
    /// The lowest rate at which the tester could not send phase 1 in time (after the
    /// retries): the search's upper bound from the tester, not the DUT.
    pub tester_bound: Option<u64>,
    /// What bounded the rate: the DUT (a valid step above it failed, with the DUT's CPU load
    /// in it), the tester (its limit within `error` of the rate), or `max_rate` (at least this).
    #[serde(default)]
    pub bound: crate::bound::Bound,
    pub trials: Vec<TrialRecord>,
}

/// The steps of connection establishment searches as a table: rate, phase 1's counts, the
/// validation's (when any step had one), the verdict; with `label`, the search each belongs to.
pub(crate) fn step_table(trials: &[TrialRecord], label: bool) -> String {
    let validated = trials.iter().any(|t| t.directions().next().is_some());
    let rows: Vec<Vec<String>> = trials
        .iter()
        .map(|t| {
            let p = t.preliminary.as_ref();
            let mut row = Vec::new();
            if label {
                row.push(t.phase.clone());
            }
            row.extend([
                group(t.rate),
                p.map_or("-".into(), |p| group(p.sent)),
                p.map_or("-".into(), |p| group(p.received)),
                p.map_or("-".into(), |p| group(p.valid_entries)),
            ]);
            if validated {
                row.push(
                    t.directions()
                        .next()
                        .map_or("-".into(), |(_, d)| format!("{} of {}", group(d.received), group(d.sent))),
                );
            }
            row.push(
                match t.pass {
                    Some(true) => "pass",
                    Some(false) => "fail",
                    None => "invalid",
                }
                .into(),
            );
            row
        })
        .collect();
    let mut headers = Vec::new();
    if label {
        headers.push("search");
    }
    headers.extend(["rate (conn/s)", "sent", "received", "table entries"]);
    if validated {
        headers.push("validation back");
    }
    headers.push("result");
    text_table(&headers, &rows)
}

impl BenchResult for ConnRateResult {
    fn procedure(&self) -> Procedure {
        Procedure::ConnRate
    }
    fn trials(&self) -> &[TrialRecord] {
        &self.trials
    }
    fn metrics(&self) -> Vec<(String, f64)> {
        let mut m = Vec::new();
        if let Some(r) = self.rate {
            m.push(Metric::ConnRateCps.of(r as f64));
            if let Some(b) = crate::bound::dut_busy_percent_at(&self.trials, r) {
                m.push(Metric::DutBusyPct.of(b));
            }
        }
        m
    }
    fn human_table(&self) -> String {
        let mut s = format!(
            "Maximum connection establishment rate, frame size {}, {} connections per step (RFC 9693)\n",
            self.frame_size,
            group(self.connections)
        );
        if let Some(a) = self.validation {
            s.push_str(&format!(
                "each step validated: the Responder sent once to every learnt tuple at {a} x the rate\n"
            ));
        }
        s.push_str(&step_table(&self.trials, false));
        s.push_str(&format!("{}\n", self.headline()));
        if let crate::bound::Bound::Dut { .. } = self.bound {
            s.push_str(&format!("{}\n", self.bound.describe("conn/s")));
        }
        if let Some(b) = self.tester_bound {
            s.push_str(&format!(
                "note: the tester could not send phase 1 in time at {} conn/s: the result is bounded by the tester\n",
                group(b)
            ));
        } else if self.rate == Some(self.max_rate) {
            s.push_str("note: every step passed up to --max-rate: the DUT's limit is higher\n");
        }
        s
    }
    fn headline(&self) -> String {
        match self.rate {
            Some(r) => format!("{} B: {} connections/s", self.frame_size, group(r)),
            None => format!("{} B: no rate established every connection", self.frame_size),
        }
    }
}
