//! The errors of the procedures.

use xlat_results::record::TrialRecord;

/// Why a procedure could not produce a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProcedureError {
    /// The procedure's parameters make no sense (min > max, zero error, bad durations, ...).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// Even the lowest rate the procedure tried stayed invalid after every retry: the tester
    /// itself cannot send at it, so there is nothing below it to measure the DUT with. (A rate
    /// above a valid one that stays invalid is not an error: it bounds the search, see
    /// [`crate::throughput`].)
    #[error(
        "the tester cannot send even at {rate} frames/s, the lowest rate tried: {attempts} trial(s) in a row were \
         invalid ({reasons}); a result would measure the tester, not the DUT"
    )]
    TesterLimit { rate: u64, attempts: u32, reasons: String },
    /// A stateful trial's preliminary phase (RFC 9693) sent its frames in time, but the DUT let
    /// too few of them through to fill the Responder's state table, [`crate::trial::FILL_ATTEMPTS`]
    /// times in a row (siitperf's `Failed to fill state table`). That depends on the
    /// preliminary rate `rate` (R), not on the trial's rate: the procedure cannot go on, and R
    /// must be lowered (or the DUT's connection table and timeouts checked). `trials` holds
    /// every trial of this run of the procedure, the failed ones last.
    #[error(
        "the DUT did not fill the state table in the preliminary phase at {rate} frames/s: {valid_entries} of \
         {state_table} entries learnt from {frames} frames, {attempts} times in a row; the fill depends on the \
         preliminary rate, not on the trial's rate: lower the preliminary rate (R) below {rate} frames/s, or check \
         that the DUT's connection table holds {state_table} connections"
    )]
    StateTableNotFilled {
        rate: u64,
        frames: u64,
        valid_entries: u64,
        state_table: u64,
        attempts: u32,
        trials: Vec<TrialRecord>,
    },
    /// The run was interrupted (Ctrl-C) before a trial: every trial done so far in this run of
    /// the procedure, so that the caller can still write them out.
    #[error("interrupted by Ctrl-C after {} trial(s)", trials.len())]
    Interrupted { trials: Vec<TrialRecord> },
    /// The trial runner cannot do what the procedure needs.
    #[error("not supported by this trial runner: {0}")]
    Unsupported(String),
    /// The trial runner failed (an engine, port or DUT hook error). The error keeps its causes
    /// (`TrialError::source`); the message shows them all, so the variant is not itself marked as
    /// a source (an error report would print them twice).
    #[error("trial failed: {}", .0.chain())]
    Trial(xlat_trial::TrialError),
    /// A trial report that cannot be judged (for example, no active direction).
    #[error("unusable trial report: {0}")]
    Report(String),
    /// Writing a result failed.
    #[error("output: {0}")]
    Output(String),
}

/// A runner's error as the procedures report it: Ctrl-C as [`ProcedureError::Interrupted`] (the
/// procedure fills in its trials), a runner that cannot do something as
/// [`ProcedureError::Unsupported`], a missing DUT command as [`ProcedureError::Config`], a failure as
/// [`ProcedureError::Trial`] with its causes.
impl From<xlat_trial::TrialError> for ProcedureError {
    fn from(e: xlat_trial::TrialError) -> Self {
        use xlat_trial::TrialErrorKind as K;
        match e.kind() {
            K::Interrupted => ProcedureError::Interrupted { trials: Vec::new() },
            K::Unsupported => ProcedureError::Unsupported(e.to_string()),
            K::Config => ProcedureError::Config(e.to_string()),
            K::Failed => ProcedureError::Trial(e),
        }
    }
}

pub(crate) fn config<T>(msg: impl Into<String>) -> Result<T, ProcedureError> {
    Err(ProcedureError::Config(msg.into()))
}
