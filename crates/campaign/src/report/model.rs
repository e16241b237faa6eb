//! The report's figures: every repetition of every result read back as its procedure's typed
//! result, its metrics taken by the procedure's own definition (`BenchResult::metrics`, the
//! numbers `--repeat` summarises), grouped per DUT, variant and frame size, and summarised over
//! all repetitions of all runs of the group (`xlat_results::Summary`: median, minimum, maximum,
//! dispersion).

use serde::de::DeserializeOwned;
use std::collections::BTreeMap;

use xlat_results::view::{Metric, Procedure};
use xlat_results::{
    BackToBackResult, BenchResult, CapacityResult, ConnRateResult, FrameLossResult, LatencyResult, MlrResult, PdvResult, RecoveryResult,
    ResetResult, Summary, TeardownResult, ThroughputResult,
};

use super::read::{DocError, Source};

/// The group a figure belongs to: a row of the summary.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RowKey {
    pub dut: String,
    pub variant: String,
    pub frame_size: u64,
}

impl RowKey {
    /// The DUT as the report names it: with its variant (the campaign's other axes), if any.
    pub fn label(&self) -> String {
        if self.variant.is_empty() {
            self.dut.clone()
        } else {
            format!("{} ({})", self.dut, self.variant)
        }
    }
}

/// What one repetition gave.
#[derive(Debug, Clone, Default)]
pub struct RepFigures {
    pub metrics: Vec<(String, f64)>,
    /// Invalid trials (the tester missed its own schedule) among its trials.
    pub invalid: usize,
    /// Trials that were retries of an invalid one.
    pub retries: usize,
    /// The tester's own limit bounded the result.
    pub tester_bound: bool,
    /// The figure is a lower bound: nothing failed up to the search's maximum (`--max-rate`,
    /// Max Load), or the tester's limit ended it.
    pub at_least: bool,
    /// What bounded the figure (throughput, conn-rate, capacity; MLRsearch's first goal).
    pub bound: Option<xlat_results::Bound>,
    /// Connections per step (conn-rate), for the plot against the number of connections.
    pub connections: Option<u64>,
    /// (direction, CDF points (delay ns, fraction)) of a PDV repetition.
    pub pdv_cdf: Vec<(&'static str, Vec<(u64, f64)>)>,
}

fn typed<T: DeserializeOwned + BenchResult>(v: &serde_json::Value, f: impl Fn(&T, &mut RepFigures)) -> Result<RepFigures, DocError> {
    let r: T = serde_json::from_value(v.clone()).map_err(DocError::Result)?;
    let trials = r.trials();
    let mut out = RepFigures {
        metrics: r.metrics(),
        invalid: trials.iter().filter(|t| !t.valid).count(),
        retries: trials.iter().filter(|t| t.attempt > 1).count(),
        tester_bound: trials.iter().any(|t| t.tester_bound),
        ..RepFigures::default()
    };
    f(&r, &mut out);
    Ok(out)
}

/// Nothing beyond the metrics and trials.
fn none<T>(_: &T, _: &mut RepFigures) {}

/// The figures of one repetition of `procedure`.
pub fn rep_figures(procedure: Procedure, v: &serde_json::Value) -> Result<RepFigures, DocError> {
    match procedure {
        Procedure::Throughput => typed(v, |r: &ThroughputResult, o| {
            o.tester_bound |= r.tester_bound.is_some();
            o.at_least = r.bound.at_least();
            o.bound = Some(r.bound.clone());
        }),
        Procedure::FrameLoss => typed::<FrameLossResult>(v, none),
        Procedure::Latency => typed::<LatencyResult>(v, none),
        Procedure::Pdv => typed(v, |r: &PdvResult, o| {
            let last = r.runs.iter().rev().find(|x| x.pass).or(r.runs.last());
            for (name, d) in last
                .map(|x| [("forward", &x.forward), ("reverse", &x.reverse)])
                .into_iter()
                .flatten()
            {
                if let Some(cdf) = d
                    .as_ref()
                    .and_then(|d| d.pdv.as_ref())
                    .map(|p| p.cdf.clone())
                    .filter(|c| !c.is_empty())
                {
                    o.pdv_cdf.push((name, cdf));
                }
            }
        }),
        Procedure::BackToBack => typed::<BackToBackResult>(v, none),
        Procedure::Recovery => typed::<RecoveryResult>(v, none),
        Procedure::ConnRate => typed(v, |r: &ConnRateResult, o| {
            o.tester_bound |= r.tester_bound.is_some();
            o.at_least = r.bound.at_least();
            o.bound = Some(r.bound.clone());
            o.connections = Some(r.connections);
        }),
        Procedure::ConntrackCapacity => typed(v, |r: &CapacityResult, o| {
            o.tester_bound |= r.tester_bound.is_some();
            o.at_least = r.bound.at_least();
            o.bound = Some(r.bound.clone());
        }),
        Procedure::TeardownRate => typed::<TeardownResult>(v, none),
        Procedure::Mlrsearch => typed(v, |r: &MlrResult, o| {
            o.at_least = r.goals.iter().any(|g| g.bound.at_least());
            o.bound = r.goals.first().map(|g| g.bound.clone());
        }),
        Procedure::Reset => typed::<ResetResult>(v, none),
    }
}

/// One repetition in a group: what it measured, from which source.
#[derive(Debug, Clone)]
pub struct Rep {
    pub procedure: Procedure,
    /// The index of its result document in the report's sources.
    pub source: usize,
    pub figures: RepFigures,
}

/// Every repetition of one group, and the summaries over them.
#[derive(Debug, Clone, Default)]
pub struct Row {
    pub reps: Vec<Rep>,
    /// (procedure, metric) -> summary over every repetition of the group.
    pub summaries: BTreeMap<(Procedure, String), Summary>,
    /// IPv4 frames on the forward sender's side (20 bytes shorter than the frame size).
    pub forward_ipv4: bool,
}

impl Row {
    pub fn invalid(&self) -> usize {
        self.reps.iter().map(|r| r.figures.invalid).sum()
    }
    pub fn retries(&self) -> usize {
        self.reps.iter().map(|r| r.figures.retries).sum()
    }
    pub fn tester_bound(&self, procedure: Procedure) -> bool {
        self.reps.iter().any(|r| r.procedure == procedure && r.figures.tester_bound)
    }
    /// Some repetition of `procedure` gave only a lower bound.
    pub fn at_least(&self, procedure: Procedure) -> bool {
        self.reps.iter().any(|r| r.procedure == procedure && r.figures.at_least)
    }
    /// The figures of `procedure`'s repetitions.
    pub fn figures_of(&self, procedure: Procedure) -> impl Iterator<Item = &RepFigures> {
        self.reps.iter().filter(move |r| r.procedure == procedure).map(|r| &r.figures)
    }
    pub fn has(&self, procedure: Procedure) -> bool {
        self.reps.iter().any(|r| r.procedure == procedure)
    }
    pub fn summary(&self, procedure: Procedure, metric: Metric) -> Option<&Summary> {
        self.summaries.get(&(procedure, metric.name().to_string()))
    }
}

/// The groups of the report, in order; and the repetitions that could not be read.
pub fn rows(sources: &[Source]) -> (BTreeMap<RowKey, Row>, Vec<(String, String)>) {
    let mut rows: BTreeMap<RowKey, Row> = BTreeMap::new();
    let mut unread = Vec::new();
    for (si, s) in sources.iter().enumerate() {
        let v4 = s.doc.meta.config.pointer("/setup/left/ip_version").and_then(|v| v.as_str()) == Some("V4");
        let Some(procedure) = s.doc.procedure() else {
            unread.push((s.file.clone(), DocError::UnknownProcedure(s.doc.procedure.clone()).to_string()));
            continue;
        };
        for size in &s.doc.results {
            let key = RowKey {
                dut: s.dut.clone(),
                variant: s.variant.clone(),
                frame_size: size.frame_size,
            };
            for (i, run) in size.result.runs.iter().enumerate() {
                match rep_figures(procedure, run) {
                    Ok(f) => {
                        let row = rows.entry(key.clone()).or_default();
                        row.forward_ipv4 = v4;
                        row.reps.push(Rep {
                            procedure,
                            source: si,
                            figures: f,
                        });
                    }
                    Err(e) => unread.push((
                        s.file.clone(),
                        format!(
                            "frame size {}, repetition {}: not a {} result ({e})",
                            size.frame_size,
                            i + 1,
                            s.doc.procedure
                        ),
                    )),
                }
            }
        }
    }
    for row in rows.values_mut() {
        let mut values: BTreeMap<(Procedure, String), Vec<f64>> = BTreeMap::new();
        for r in &row.reps {
            for (m, v) in &r.figures.metrics {
                values.entry((r.procedure, m.clone())).or_default().push(*v);
            }
        }
        row.summaries = values.into_iter().filter_map(|(k, v)| Summary::of(&v).map(|s| (k, s))).collect();
    }
    (rows, unread)
}
