//! The measurement procedures of xlatperf (RFC 2544, RFC 8219, RFC 9004) over a [`TrialRunner`]:
//! a trait that performs one trial. The engine implements it over real ports; [`sim::SimDut`]
//! implements it for tests. Nothing here touches hardware.
//!
//! | procedure | function | RFC |
//! | --- | --- | --- |
//! | throughput | [`throughput::throughput`] | 2544 s.26.1, 8219 s.7.1 (binary search; short trials with confirmation; MLRsearch-style) |
//! | frame loss rate | [`frame_loss::frame_loss`] | 2544 s.26.3 |
//! | latency | [`latency::latency`] | 8219 s.7.2 (TL = median, WCL = 99.9th percentile) |
//! | PDV, IPDV | [`delay::PdvStats`], [`delay::IpdvRecorder`] | 8219 s.7.3.1, s.7.3.2 |
//! | back-to-back | [`b2b::back_to_back`] | 2544 s.26.4, 9004 |
//! | system recovery | [`recovery::system_recovery`] | 2544 s.26.5 |
//! | repetitions | [`repeat::repeat`] | median, min, max, 1st/99th percentile, dispersion |
//!
//! Every result records every trial ([`trial::TrialRecord`]), serialises with serde, writes CSV
//! ([`output::trials_csv`], [`output::summary_csv`]), a human table ([`output::BenchResult`]) and
//! SVG plots ([`svg`]).
//!
//! Invalid trials (the tester could not keep its own schedule) are never judged: each is retried
//! up to `retries` times. A rate whose trials stay invalid is tester-bound: the searches
//! (throughput, back-to-back) take it as an upper bound and go on below it, the frame loss sweep
//! marks the step, and the result names it (`tester_bound`). Only when even the lowest rate
//! tried (for latency and system recovery: their one rate) stays invalid does a procedure stop
//! with [`BenchError::TesterLimit`]. Ctrl-C in the CLI surfaces as [`BenchError::Interrupted`]
//! with every trial so far.

pub mod b2b;
pub use xlat_engine::delay;
pub mod error;
pub mod frame_loss;
pub mod latency;
pub mod output;
pub mod recovery;
pub mod repeat;
pub mod runner;
pub mod sim;
pub mod svg;
pub mod throughput;
pub mod trial;

pub use b2b::{back_to_back, BackToBackConfig, BackToBackResult};
pub use delay::{Delay, DelayRecorder, IpdvRecorder, IpdvStats, LatencyStats, LogHistogram, PdvStats};
pub use error::BenchError;
pub use frame_loss::{frame_loss, FrameLossConfig, FrameLossResult};
pub use latency::{latency, LatencyConfig, LatencyResult};
pub use output::{summary_csv, trials_csv, BenchOutput, BenchResult, RunMeta};
pub use recovery::{system_recovery, RecoveryConfig, RecoveryResult};
pub use repeat::{repeat, Repeated, Summary};
pub use runner::{
    NoProgress, NoSleep, Progress, ProgressEvent, RealSleeper, RecoveryDirection, RecoveryReport, RecoverySpec, Sleeper, TrialRunner,
};
pub use throughput::{throughput, SearchMethod, ThroughputConfig, ThroughputResult};
pub use trial::{judge, DirectionCounts, TrialRecord};
