//! The measurement procedures of xlatperf (RFC 2544, RFC 8219, RFC 9004) over a [`TrialRunner`]
//! (`xlat_trial`'s one runner trait, which performs one trial), and the statistics they
//! compute; their results are `xlat_results`' types. Nothing here touches hardware: the engine's `Tester` implements
//! [`TrialRunner`], `xlat_dut::Hooks` wraps it with the DUT's commands, and the binary
//! with Ctrl-C and phase 1 (`CliRunner` in `crates/cli/src/procedures.rs`);
//! `xlat_testkit::sim::SimDut` (a dev-dependency, not in this library) implements it for tests.
//!
//! | procedure | function | RFC |
//! | --- | --- | --- |
//! | throughput | [`throughput::throughput`] | 2544 section 26.1, 8219 section 7.1 (binary search; short trials with confirmation; MLRsearch-style) |
//! | frame loss rate | [`frame_loss::frame_loss`] | 2544 section 26.3 |
//! | latency | [`latency::latency`] | 8219 section 7.2 (TL = median, WCL = 99.9th percentile) |
//! | PDV, IPDV | [`pdv::pdv`] | 8219 sections 7.3.1, 7.3.2 |
//! | back-to-back | [`b2b::back_to_back`] | 2544 section 26.4, 9004 |
//! | system recovery | [`recovery::system_recovery`] | 2544 section 26.5 |
//! | MLRsearch (NDR, PDR, any Search Goals) | [`mlrsearch::mlrsearch`] | 9971 (load classification in [`mlr_classify`]) |
//! | reset time | [`reset::reset_time`] | 6201 (frame-loss and timestamp methods) |
//! | tester self-test | [`selftest::selftest`] | throughput searches with the ports looped back |
//! | repetitions | [`repeat::repeat`] | median, min, max, 1st/99th percentile, dispersion |
//!
//! Where things are:
//!
//! | module | holds |
//! | --- | --- |
//! | [`runner`] | [`TrialRunner`], the [`Progress`] sink, the [`Sleeper`] of idle gaps |
//! | [`trial`] | [`judge`], and the `Session` every procedure runs its trials through (the invalid-trial retry rule) |
//! | [`media`] | [`media::line_rate`], of a frame size and of a test setup |
//! | [`repeat`](mod@repeat) | [`repeat()`](fn@repeat): a procedure N times |
//! | [`error`] | [`ProcedureError`] |
//!
//! What the procedures find (each result type, the trial records, delay statistics, what
//! bounded a figure) and everything that writes or reads it (documents, CSV, text, plots,
//! siitperf's lines, sweeps) is `xlat_results`: the campaign report reads results without
//! linking this crate.
//!
//! Every result records every trial (`xlat_results::TrialRecord`) and serialises with serde.
//!
//! Invalid trials (the tester could not keep its own schedule) are never judged: each is retried
//! up to `retries` times. A rate whose trials stay invalid is tester-bound: the searches
//! (throughput, back-to-back) take it as an upper bound and go on below it, the frame loss sweep
//! marks the step, and the result names it (`tester_bound`). Only when even the lowest rate
//! tried (for latency, PDV and system recovery: their one rate) stays invalid does a procedure
//! stop with [`ProcedureError::TesterLimit`]. A stateful trial (RFC 9693) runs its preliminary phase
//! (`TrialSpec::preliminary`, kept in every trial a procedure runs) before each trial; one that
//! sent in time but left the state table unfilled is the DUT's failure at the preliminary rate,
//! rerun up to [`trial::FILL_ATTEMPTS`] times and then [`ProcedureError::StateTableNotFilled`]; one
//! that sent too slowly is an invalid trial like the others. Ctrl-C in the CLI surfaces as
//! [`ProcedureError::Interrupted`] with every trial so far.

pub mod b2b;
pub mod capacity;
pub mod conn_rate;
pub mod error;
pub mod frame_loss;
pub mod latency;
pub mod media;
pub mod mlr_classify;
pub mod mlrsearch;
pub mod pdv;
pub mod recovery;
pub mod repeat;
pub mod reset;
pub mod runner;
pub mod selftest;
pub mod teardown;
pub mod throughput;
pub mod trial;

pub use b2b::{back_to_back, BackToBackConfig};
pub use capacity::conntrack_capacity;
pub use conn_rate::{conn_rate, ConnRateConfig};
pub use error::ProcedureError;
pub use frame_loss::{frame_loss, FrameLossConfig};
pub use latency::{latency, LatencyConfig};
pub use media::{line_rate, setup_line_rate};
pub use mlrsearch::{mlrsearch, MlrConfig};
pub use pdv::{pdv, PdvConfig};
pub use recovery::{system_recovery, RecoveryConfig, RecoverySpec};
pub use repeat::repeat;
pub use reset::{reset_time, ResetConfig};
pub use runner::{NoProgress, NoSleep, Progress, ProgressEvent, RealSleeper, Sleeper, TrialRunner};
pub use selftest::{selftest, SelftestConfig, SelftestResult, SelftestSearch};
pub use teardown::{teardown_rate, TeardownConfig};
pub use throughput::{throughput, ThroughputConfig};
pub use trial::{judge, judge_by};
