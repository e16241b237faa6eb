//! The boundary between the procedures (`xlat-bench`) and the tester (`xlat-engine`): what one
//! trial is asked to do ([`TrialSpec`], with its limits defined once here), what it reports
//! ([`TrialReport`], [`DirectionReport`], the delay recorders of [`delay`]). The procedures
//! depend on this crate and on the traffic description, never on the engine or the ports; the
//! engine fills these types in.
//!
//! | module | holds |
//! | --- | --- |
//! | [`spec`] | [`TrialSpec`] and its check, [`PreliminarySpec`], [`CpuPlan`], [`PhaseTwoAfter`] |
//! | [`report`] | [`TrialReport`], [`DirectionReport`], [`PreliminaryReport`], [`HookRun`] |
//! | [`delay`] | recording one-way delays (exact or a bounded histogram) and IPDV |

#![forbid(unsafe_code)]

pub mod delay;
mod error;
pub mod report;
pub mod spec;

pub use error::TrialError;
pub use report::{DirectionReport, HookRun, PdvReport, PreliminaryReport, TrialReport};
pub use spec::{CpuPlan, LatencySpec, PdvSpec, PhaseTwoAfter, PreliminarySpec, RateChange, SpecError, TrialSpec};

/// The most frames one direction of a trial may send: each receiver keeps a bit per frame
/// (2 GiB at this limit).
pub const MAX_FRAMES: u64 = 1 << 34;

/// siitperf's TOLERANCE: sending must end within duration x 1.00001.
pub const TOLERANCE: f64 = 1.00001;

/// Frames per transmit burst of a trial unless it says otherwise: the ports' own default burst
/// (`xlat_io::DEFAULT_BURST`, which the engine checks is the same).
pub const DEFAULT_BURST: usize = 32;
