//! What xlatperf's procedures found, and everything that writes or reads it. The procedures
//! themselves (`xlat_procedures`) produce these results; the campaign report (`xlat_campaign`) reads
//! them back without linking any procedure.
//!
//! | module | holds |
//! | --- | --- |
//! | [`record`] | [`TrialRecord`] (a trial as a result keeps it), the one loss formula [`record::loss_percent`] |
//! | [`bound`] | [`Bound`]: what bounded a figure (the DUT, the tester, the search's range) and the DUT's load there |
//! | [`delay`] | every delay statistic: nearest-rank percentiles, [`LatencyStats`], [`PdvStats`], [`IpdvStats`], [`delay::PdvDetail`] |
//! | [`throughput`], [`frame_loss`], [`latency`], [`pdv`], [`b2b`], [`recovery`], [`mlrsearch`], [`reset`], [`conn_rate`], [`capacity`], [`teardown`] | each procedure's result type (and what it records of its parameters) |
//! | [`result`] | [`BenchResult`], what every result offers: its trials, metrics, text |
//! | [`result_text`], [`mlr_reset_text`] | the text of each result (the [`BenchResult`] implementations) |
//! | [`repeat`] | [`Repeated`] and [`Summary`] over repetitions |
//! | [`meta`] | who produced a result, on which machine, when ([`RunMeta`], [`meta::Host`]) |
//! | [`output`] | text of a trial, the JSON [`output::Document`], the CSV files, the human text over frame sizes |
//! | [`text`] | the tables and headlines of every result |
//! | [`plot`], [`svg`] | the plot of every procedure command, and the SVG drawing |
//! | [`siitperf`] | siitperf's output lines of a trial |
//! | [`defaults`] | each procedure's defaults ([`view::Procedure::defaults`]), written once for its configuration, its command's options and a campaign's estimate |
//! | [`view`] | the one typed view of a result document ([`view::DocView`]), [`view::Procedure`] and [`view::Metric`] |
//! | [`sweep`] | a sweep's points, table, CSV and plot from its runs' typed documents |
//! | [`error`] | [`ResultsError`] |

pub mod b2b;
pub mod bound;
pub mod capacity;
pub mod conn_rate;
pub mod defaults;
pub mod delay;
pub mod error;
pub mod frame_loss;
pub mod latency;
pub mod meta;
pub mod mlr_reset_text;
pub mod mlrsearch;
pub mod output;
pub mod pdv;
pub mod plot;
pub mod record;
pub mod recovery;
pub mod repeat;
pub mod reset;
pub mod result;
pub mod result_text;
pub mod siitperf;
pub mod svg;
pub mod sweep;
pub mod teardown;
pub mod text;
pub mod throughput;
pub mod view;

pub use b2b::{BackToBackResult, BackToBackRun};
pub use bound::Bound;
pub use capacity::{CapacityConfig, CapacityResult, CapacitySearch};
pub use conn_rate::ConnRateResult;
pub use delay::{
    Delay, DelayRecorder, DelayStats, HistogramStats, IpdvRecorder, IpdvStatistics, IpdvStats, LatencyStats, LogHistogram, PdvStats,
};
pub use error::{ResultsError, ValueError};
pub use frame_loss::{FrameLossPoint, FrameLossResult};
pub use latency::{LatencyResult, LatencyRun, LatencySamples, LatencySummary};
pub use mlrsearch::{Classification, GoalResult, MlrResult, MlrTrial, SearchGoal};
pub use output::{summary_csv, trials_csv, Collected, Document, InterruptedRun, RunMeta, SizeResult};
pub use pdv::{PdvDirection, PdvResult, PdvRun, PdvSummary};
pub use plot::Plot;
pub use record::{DirectionCounts, TrialRecord};
pub use recovery::{RecoveryDirectionResult, RecoveryResult};
pub use repeat::{Repeated, Summary};
pub use reset::{ResetDirection, ResetResult};
pub use result::BenchResult;
pub use teardown::TeardownResult;
pub use throughput::{SearchMethod, ThroughputResult};
pub use view::{Metric, Procedure};
