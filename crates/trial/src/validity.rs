//! The rules a trial is judged by, named once: a trial's report lists the rule behind each
//! reason it gives for being invalid, so that a procedure can tell a loss the tester may have
//! caused (run again, then a failure marked as possibly the tester's) from a trial the tester
//! could not run at all (run again, then an upper bound of the search). docs/validity.md states
//! every rule with its keys and defaults.

use serde::{Deserialize, Serialize};

/// Why a trial is invalid: one rule each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// Sending did not end within duration x 1.00001 (siitperf's TOLERANCE), or the sender
    /// gave up: the tester did not offer the rate.
    EndOfSending,
    /// Frames were lost that the sender had sent while it caught up from a lag beyond
    /// `tester.max_send_lag_*` (or right after): the loss may be the tester's burst.
    LagHarm,
    /// The tester dropped frames itself (transmit or receive).
    TesterDrops,
    /// Frames to be timed got no kernel timestamp.
    StampsMissing,
    /// Test frames with a trial tag this tester never used arrived.
    Foreign,
    /// Too few latency tags (or PDV frames) were left after those sent in a catch-up.
    TooFewTimed,
    /// The trial was stopped at its hard deadline.
    Deadline,
    /// Phase 1 of a stateful test (its own sending, its table, the DUT's mapping).
    Preliminary,
    /// Anything else a runner reported (a simulated DUT's, a DUT command's).
    Other,
}

impl Rule {
    /// The rule's name as the docs and the JSON write it.
    pub fn name(self) -> &'static str {
        match self {
            Rule::EndOfSending => "end_of_sending",
            Rule::LagHarm => "lag_harm",
            Rule::TesterDrops => "tester_drops",
            Rule::StampsMissing => "stamps_missing",
            Rule::Foreign => "foreign",
            Rule::TooFewTimed => "too_few_timed",
            Rule::Deadline => "deadline",
            Rule::Preliminary => "preliminary",
            Rule::Other => "other",
        }
    }
}

/// RFC 8219 section 7.2 asks for at least 500 latency tags: a latency trial whose tags sent in a
/// catch-up are left out is invalid when fewer than this many remain (or, with fewer tags asked
/// for, when any is left out).
pub const MIN_TAGS: u64 = 500;

/// A PDV trial is invalid when more than this share of its frames were left out because they
/// were sent in a catch-up: the rest would then be a sample the tester's pauses chose more than
/// the trial's schedule. (Which frames are left out depends on the tester's timing, not on their
/// delays, so the rest is still a fair sample of the DUT's: this host pauses the tester for
/// 7-35 % of a trial, measured.)
pub const MAX_UNTIMED_SHARE: f64 = 0.5;

/// The catch-up pace unless a trial says otherwise: a sender behind its schedule sends at most
/// this many percent above its rate (after at most its lag bound in frames at once), so a DUT
/// with that much headroom never queues a stall's frames. Chosen by measurement (BENCHMARKS.md,
/// session 31): it keeps a trial's end on time through this host's 20-50 ms pauses.
pub const DEFAULT_CATCH_UP_PERCENT: u64 = 100;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_json_names() {
        for r in [
            Rule::EndOfSending,
            Rule::LagHarm,
            Rule::TesterDrops,
            Rule::StampsMissing,
            Rule::Foreign,
            Rule::TooFewTimed,
            Rule::Deadline,
            Rule::Preliminary,
            Rule::Other,
        ] {
            assert_eq!(serde_json::to_string(&r).unwrap(), format!("\"{}\"", r.name()));
        }
    }
}
