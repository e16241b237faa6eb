//! The boundary between the procedures (`xlat-procedures`) and the tester (`xlat-engine`): what one
//! trial is asked to do ([`TrialSpec`], with its limits defined once here), what it reports
//! ([`TrialReport`], [`DirectionReport`], the delay recorders of [`delay`]). The procedures
//! depend on this crate and on the traffic description, never on the engine or the ports; the
//! engine fills these types in.
//!
//! | module | holds |
//! | --- | --- |
//! | [`spec`] | [`TrialSpec`] and its check, [`PreliminarySpec`], [`CpuPlan`], [`PhaseTwoAfter`] |
//! | [`load`] | [`LoadReport`], [`CpuLoad`]: the DUT's and the tester's CPUs over a trial; CPU lists |
//! | [`report`] | [`TrialReport`], [`DirectionReport`], [`PreliminaryReport`], [`HookRun`] |
//! | `dut` | [`DutHooks`], the DUT's commands around trials, and the [`PhaseHook`] run between the phases |
//! | `lag` | [`LagHistogram`], the sender's lag behind its schedule, in fixed memory |
//! | [`validity`] | [`Rule`]: the rules a trial is judged by, and their constants |
//! | `stamps` | [`StampSource`]: which clock readings a delay is the difference of |
//! | [`delay`] | recording one-way delays (exact or a bounded histogram) and IPDV |
//! | `runner` | [`TrialRunner`], the one interface the procedures run trials through, and [`TrialError`] |

#![forbid(unsafe_code)]

pub mod delay;
mod dut;
mod error;
mod lag;
mod limits;
pub mod load;
pub mod report;
mod runner;
pub mod spec;
mod stamps;
pub mod validity;

pub use dut::{DutHooks, HookError, PhaseHook};
pub use error::{chain, TrialError, TrialErrorKind};
pub use load::{CpuLoad, LoadReport};
pub use report::{loss_percent, DirectionCounts, DirectionReport, HookRun, PdvReport, PreliminaryReport, TrialReport};
pub use runner::{PortSettings, TrialRunner};
pub use spec::{
    CatchUp, CpuPlan, Directions, LatencySpec, PdvSpec, PhaseTwoAfter, PreliminarySpec, RateChange, SendLag, SpecError, TrialSpec,
};
pub use stamps::StampSource;
pub use validity::Rule;

pub use lag::LagHistogram;
pub use limits::{DEFAULT_BURST, DEFAULT_DURATION_S, DEFAULT_TIMEOUT_MS, MAX_FRAMES, STALL_NS, TOLERANCE};
