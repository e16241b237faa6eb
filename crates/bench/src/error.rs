//! The errors of the procedures.

/// Why a procedure could not produce a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BenchError {
    /// The procedure's parameters make no sense (min > max, zero error, bad durations, ...).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// Every attempt of a trial was invalid: the tester itself could not keep the rate.
    #[error(
        "the tester could not keep up at {rate} frames/s: {attempts} trial(s) in a row were invalid ({reasons}); \
         the result would measure the tester, not the DUT"
    )]
    TesterLimit { rate: u64, attempts: u32, reasons: String },
    /// The trial runner cannot do what the procedure needs.
    #[error("not supported by this trial runner: {0}")]
    Unsupported(String),
    /// The trial runner failed (an engine or I/O error, as text).
    #[error("trial failed: {0}")]
    Trial(String),
    /// A trial report that cannot be judged (for example, no active direction).
    #[error("unusable trial report: {0}")]
    Report(String),
    /// Writing a result failed.
    #[error("output: {0}")]
    Output(String),
}

pub(crate) fn config<T>(msg: impl Into<String>) -> Result<T, BenchError> {
    Err(BenchError::Config(msg.into()))
}
