//! PDV and IPDV (RFC 8219 sections 7.3.1, 7.3.2): the result of the repetitions (`xlat_procedures::pdv` runs them).

use serde::{Deserialize, Serialize};

use crate::delay::{Delay, IpdvStats, PdvDetail, PdvStats};
use crate::record::loss_percent;
use crate::record::TrialRecord;
use xlat_trial::DirectionReport;

/// One direction of one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PdvDirection {
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    /// Frames later than the frame timeout (counted as lost).
    pub late: u64,
    /// Frames the tester itself failed to send after its backend accepted them.
    #[serde(default)]
    pub tester_tx_dropped: u64,
    /// Frames the tester's receiving port dropped before its receiver saw them.
    #[serde(default)]
    pub tester_rx_dropped: u64,
    /// PDV (RFC 8219 s.7.3.1): minimum, 99.9th percentile and their difference.
    pub pdv: Option<PdvStats>,
    /// IPDV (RFC 8219 s.7.3.2): minimum, median, maximum.
    pub ipdv: Option<IpdvStats>,
    /// The statistics of the engine's record (CDF points, relative error, exact mode).
    pub report: Option<PdvDetail>,
}

impl PdvDirection {
    pub fn of(d: &DirectionReport) -> PdvDirection {
        let detail = d.pdv.as_ref().map(PdvDetail::of);
        PdvDirection {
            sent: d.counts.sent,
            received: d.counts.received,
            lost: d.counts.lost,
            late: d.pdv.as_ref().map_or(0, |p| p.late),
            tester_tx_dropped: d.counts.tester_tx_dropped,
            tester_rx_dropped: d.counts.tester_rx_dropped,
            pdv: detail.as_ref().and_then(|p| p.pdv.clone()),
            ipdv: detail.as_ref().and_then(|p| p.ipdv.clone()),
            report: detail,
        }
    }

    pub fn loss_percent(&self) -> Option<f64> {
        loss_percent(self.sent, self.received)
    }
}

/// One repetition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PdvRun {
    pub repetition: usize,
    /// Index of the valid trial in `trials`.
    pub trial: usize,
    /// Frame-timeout mode: no direction lost a frame (late ones included).
    pub pass: bool,
    pub forward: Option<PdvDirection>,
    pub reverse: Option<PdvDirection>,
}

/// Medians over the repetitions of one direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PdvSummary {
    /// Median of the PDVs; `None` if no run had one.
    pub pdv: Option<Delay>,
    pub ipdv_min_ns: Option<i64>,
    pub ipdv_median_ns: Option<i64>,
    pub ipdv_max_ns: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PdvResult {
    pub frame_size: usize,
    pub rate: u64,
    pub duration_s: f64,
    pub frame_timeout_ms: u64,
    pub exact: bool,
    pub runs: Vec<PdvRun>,
    pub forward: Option<PdvSummary>,
    pub reverse: Option<PdvSummary>,
    pub trial_seconds: f64,
    pub elapsed_s: f64,
    pub trials: Vec<TrialRecord>,
}
