//! What each procedure does when its options say nothing: the one place its defaults are
//! written. The procedures' configurations (`xlat_procedures`), the command line's options
//! (`crates/cli/src/procedure_args.rs`, `args.rs`) and a campaign's time estimate
//! (`xlat_campaign::estimate`) all read them from here, so no default is written twice.
//!
//! The figures are the RFCs': trials of 60 s (RFC 2544 section 24, RFC 8219), a 2 s timeout
//! (RFC 2544 section 23), 120 s latency trials with 20 repetitions and tags from 60 s on (RFC
//! 8219 section 7.2), 20 PDV trials, 50 back-to-back searches (RFC 9004), 60 s of overload and
//! of recovery (RFC 2544 section 26.5).

use crate::view::Procedure;

/// Milliseconds the receivers keep receiving after sending ended (RFC 2544 section 23): the
/// trial's own default.
pub use xlat_trial::DEFAULT_TIMEOUT_MS;
/// Times an invalid trial is run again before it counts as the tester's limit.
pub const DEFAULT_RETRIES: u32 = 3;

/// One procedure's defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Defaults {
    /// Seconds of each full-length trial (recovery: of the overload; reset: of the trial
    /// during which the DUT is reset).
    pub duration_s: f64,
    /// How many times the procedure's fixed trial (or search) is repeated for one result; 1
    /// for a search that gives one figure.
    pub repetitions: u32,
}

impl Procedure {
    /// This procedure's defaults.
    pub const fn defaults(self) -> Defaults {
        let (duration_s, repetitions) = match self {
            Procedure::Latency => (120.0, 20),
            Procedure::Pdv => (60.0, 20),
            Procedure::BackToBack => (60.0, 50),
            Procedure::Reset => (30.0, 1),
            Procedure::Throughput
            | Procedure::FrameLoss
            | Procedure::Recovery
            | Procedure::Mlrsearch
            | Procedure::ConnRate
            | Procedure::ConntrackCapacity
            | Procedure::TeardownRate => (xlat_trial::DEFAULT_DURATION_S, 1),
        };
        Defaults { duration_s, repetitions }
    }
}

/// Latency: tags are sent from this many seconds into the trial (RFC 8219 section 7.2: after
/// 60 s of a 120 s trial).
pub const DEFAULT_LATENCY_DELAY_S: f64 = 60.0;
/// Latency: tagged frames per trial (RFC 8219 section 7.2: at least 500, 50,000 at most).
pub const DEFAULT_TAGS: u64 = 50_000;
/// Recovery: seconds at the reduced rate after the overload (the longest recovery seen).
pub const DEFAULT_RECOVERY_S: f64 = 60.0;
/// Reset: seconds into the trial at which the reset command starts.
pub const DEFAULT_RESET_AT_S: f64 = 10.0;
/// Back-to-back: seconds of idle time between trials (RFC 9004: at least 2).
pub const DEFAULT_IDLE_S: f64 = 2.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rfcs_defaults() {
        assert_eq!(Procedure::Throughput.defaults().duration_s, 60.0);
        assert_eq!(
            Procedure::Latency.defaults(),
            Defaults {
                duration_s: 120.0,
                repetitions: 20
            }
        );
        assert_eq!(Procedure::Pdv.defaults().repetitions, 20);
        assert_eq!(Procedure::BackToBack.defaults().repetitions, 50);
        assert_eq!(Procedure::Reset.defaults().duration_s, 30.0);
        // The tags fit after the delay at any rate the latency test allows (500 tags at least).
        assert!(DEFAULT_LATENCY_DELAY_S < Procedure::Latency.defaults().duration_s);
    }
}
