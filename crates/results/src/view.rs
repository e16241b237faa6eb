//! The one typed view of a result document ([`Document`](crate::output::Document)) that every
//! reader uses (a sweep reading its runs, the campaign report reading a directory), and the names
//! the documents share: [`Procedure`] (the command, and the `procedure` a document records) and
//! [`Metric`] (the summaries' keys that readers look up by name). The tests write a document of
//! every procedure and read it back through this view.

use serde::Deserialize;
use std::collections::BTreeMap;

use crate::meta::Host;

/// A procedure with a result document, as its command and its documents name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Procedure {
    Throughput,
    FrameLoss,
    Latency,
    Pdv,
    BackToBack,
    Recovery,
    ConnRate,
    ConntrackCapacity,
    TeardownRate,
    Mlrsearch,
    Reset,
}

impl Procedure {
    /// Every procedure with a result document.
    pub const ALL: [Procedure; 11] = [
        Procedure::Throughput,
        Procedure::FrameLoss,
        Procedure::Latency,
        Procedure::Pdv,
        Procedure::BackToBack,
        Procedure::Recovery,
        Procedure::ConnRate,
        Procedure::ConntrackCapacity,
        Procedure::TeardownRate,
        Procedure::Mlrsearch,
        Procedure::Reset,
    ];

    /// The name a document records and the command runs (its last command).
    pub fn name(self) -> &'static str {
        let commands = self.commands_of();
        commands[commands.len() - 1]
    }

    /// The commands that run it, its name last (`b2b` also runs back-to-back).
    pub fn commands_of(self) -> &'static [&'static str] {
        match self {
            Procedure::Throughput => &["throughput"],
            Procedure::FrameLoss => &["frame-loss"],
            Procedure::Latency => &["latency"],
            Procedure::Pdv => &["pdv"],
            Procedure::BackToBack => &["b2b", "back-to-back"],
            Procedure::Recovery => &["recovery"],
            Procedure::ConnRate => &["conn-rate"],
            Procedure::ConntrackCapacity => &["conntrack-capacity"],
            Procedure::TeardownRate => &["teardown-rate"],
            Procedure::Mlrsearch => &["mlrsearch"],
            Procedure::Reset => &["reset"],
        }
    }

    /// The procedure a command or a document names.
    pub fn from_name(name: &str) -> Option<Procedure> {
        Procedure::ALL.into_iter().find(|p| p.commands_of().contains(&name))
    }

    /// Every command that runs a procedure with results, for messages ("throughput, frame-loss, ...").
    pub fn commands() -> String {
        let names: Vec<&str> = Procedure::ALL.iter().flat_map(|p| p.commands_of()).copied().collect();
        names.join(", ")
    }

    /// The main figure of the procedure's results: the y of a sweep's plot, its first column.
    pub fn main_metric(self) -> Option<Metric> {
        match self {
            Procedure::Throughput => Some(Metric::ThroughputFps),
            Procedure::ConnRate => Some(Metric::ConnRateCps),
            Procedure::TeardownRate => Some(Metric::TeardownRateCps),
            Procedure::ConntrackCapacity => Some(Metric::CapacityConnections),
            Procedure::BackToBack => Some(Metric::AverageFrames),
            Procedure::Recovery => Some(Metric::RecoveryTimeS),
            Procedure::Mlrsearch => Some(Metric::NdrConditionalThroughputFps),
            Procedure::Reset => Some(Metric::ForwardTimestampResetS),
            Procedure::FrameLoss | Procedure::Latency | Procedure::Pdv => None,
        }
    }
}

impl std::fmt::Display for Procedure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A metric that readers look up by name (a key of a document's `summaries`, one of a result's
/// `BenchResult::metrics`). Metrics named after something the user chose (an MLRsearch goal's
/// name, a frame-loss step's rate) are not here: their names are built where they are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Metric {
    ThroughputFps,
    TesterBoundFps,
    DutBusyPct,
    ForwardTlMs,
    ReverseTlMs,
    ForwardWclMs,
    ReverseWclMs,
    ForwardPdvMs,
    ReversePdvMs,
    AverageFrames,
    ImpliedBufferTimeS,
    CorrectedBufferTimeS,
    RecoveryTimeS,
    ConnRateCps,
    CapacityConnections,
    ConnRateAtCapacityCps,
    TeardownRateCps,
    FullS,
    EmptyS,
    NdrConditionalThroughputFps,
    ForwardTimestampResetS,
}

impl Metric {
    /// Its key in a document's `summaries`.
    pub fn name(self) -> &'static str {
        match self {
            Metric::ThroughputFps => "throughput_fps",
            Metric::TesterBoundFps => "tester_bound_fps",
            Metric::DutBusyPct => "dut_busy_pct",
            Metric::ForwardTlMs => "forward_tl_ms",
            Metric::ReverseTlMs => "reverse_tl_ms",
            Metric::ForwardWclMs => "forward_wcl_ms",
            Metric::ReverseWclMs => "reverse_wcl_ms",
            Metric::ForwardPdvMs => "forward_pdv_ms",
            Metric::ReversePdvMs => "reverse_pdv_ms",
            Metric::AverageFrames => "average_frames",
            Metric::ImpliedBufferTimeS => "implied_buffer_time_s",
            Metric::CorrectedBufferTimeS => "corrected_buffer_time_s",
            Metric::RecoveryTimeS => "recovery_time_s",
            Metric::ConnRateCps => "conn_rate_cps",
            Metric::CapacityConnections => "capacity_connections",
            Metric::ConnRateAtCapacityCps => "conn_rate_at_capacity_cps",
            Metric::TeardownRateCps => "teardown_rate_cps",
            Metric::FullS => "full_s",
            Metric::EmptyS => "empty_s",
            Metric::NdrConditionalThroughputFps => "ndr_conditional_throughput_fps",
            Metric::ForwardTimestampResetS => "forward_timestamp_reset_s",
        }
    }

    /// The metric and its value, as `BenchResult::metrics` lists it.
    pub fn of(self, value: f64) -> (String, f64) {
        (self.name().to_string(), value)
    }
}

/// A result document (`xlat_results::output::Document`) as its readers see it.
#[derive(Debug, Clone, Deserialize)]
pub struct DocView {
    /// [`Procedure::name`] of the procedure that wrote it.
    pub procedure: String,
    #[serde(default)]
    pub complete: bool,
    pub meta: MetaView,
    pub results: Vec<SizeView>,
    #[serde(default)]
    pub interrupted: bool,
}

impl DocView {
    /// The procedure it records, if this xlatperf knows it.
    pub fn procedure(&self) -> Option<Procedure> {
        Procedure::from_name(&self.procedure)
    }
}

/// A document's `meta`.
#[derive(Debug, Clone, Deserialize)]
pub struct MetaView {
    pub xlatperf_version: String,
    #[serde(default)]
    pub config: serde_json::Value,
    #[serde(default)]
    pub started_at: Option<String>,
    #[serde(default)]
    pub command_line: Option<Vec<String>>,
    #[serde(default)]
    pub host: Option<Host>,
    #[serde(default)]
    pub git_commit: Option<String>,
}

/// One frame size of a document: every repetition's result as the procedure wrote it, and the
/// summaries over them.
#[derive(Debug, Clone, Deserialize)]
pub struct SizeView {
    pub frame_size: u64,
    pub result: RepeatedView,
}

/// The repetitions of a [`SizeView`] ([`Repeated`](crate::repeat::Repeated) as written).
#[derive(Debug, Clone, Deserialize)]
pub struct RepeatedView {
    pub runs: Vec<serde_json::Value>,
    pub summaries: BTreeMap<String, SummaryView>,
}

/// A [`Summary`](crate::repeat::Summary) as written: the median is `None` when it is not
/// finite (`null`).
#[derive(Debug, Clone, Deserialize)]
pub struct SummaryView {
    pub n: usize,
    pub median: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_procedure_is_found_by_its_name_and_b2b_by_its_command() {
        for p in Procedure::ALL {
            assert_eq!(Procedure::from_name(p.name()), Some(p));
        }
        assert_eq!(Procedure::from_name("b2b"), Some(Procedure::BackToBack));
        assert_eq!(Procedure::from_name("selftest"), None);
        assert_eq!(
            Procedure::commands(),
            "throughput, frame-loss, latency, pdv, b2b, back-to-back, recovery, conn-rate, conntrack-capacity, \
             teardown-rate, mlrsearch, reset"
        );
    }
}
