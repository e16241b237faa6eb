//! The connection tear-down rate (RFC 9693 section 4.5): the result (`xlat_procedures::teardown` runs the procedure).

use serde::{Deserialize, Serialize};

use crate::record::TrialRecord;
use crate::result::BenchResult;
use crate::text::group;
use crate::view::{Metric, Procedure};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeardownResult {
    pub frame_size: usize,
    pub connections: u64,
    /// Seconds `dut.delete_all` took on the full table.
    pub full_s: f64,
    /// Seconds it took on the empty table of the same size, right after.
    pub empty_s: f64,
    /// N / (full - empty), connections/s; `None` when the full deletion was not slower.
    pub rate_cps: Option<f64>,
    /// The load (phase 1) attempts.
    pub trials: Vec<TrialRecord>,
}

impl BenchResult for TeardownResult {
    fn procedure(&self) -> Procedure {
        Procedure::TeardownRate
    }
    fn trials(&self) -> &[TrialRecord] {
        &self.trials
    }
    fn metrics(&self) -> Vec<(String, f64)> {
        let mut m = vec![Metric::FullS.of(self.full_s), Metric::EmptyS.of(self.empty_s)];
        if let Some(r) = self.rate_cps {
            m.push(Metric::TeardownRateCps.of(r));
        }
        m
    }
    fn human_table(&self) -> String {
        let mut s = format!(
            "Connection tear-down rate, frame size {}, {} connections (RFC 9693)\n",
            self.frame_size,
            group(self.connections)
        );
        s.push_str(&format!(
            "deleting the full table: {:.6} s; the empty table: {:.6} s\n{}\n",
            self.full_s,
            self.empty_s,
            self.headline()
        ));
        s
    }
    fn headline(&self) -> String {
        match self.rate_cps {
            Some(r) => format!("{} B: {} connections/s torn down", self.frame_size, group(r.round() as u64)),
            None => format!(
                "{} B: deleting the full table was not slower than the empty one: no rate",
                self.frame_size
            ),
        }
    }
}
