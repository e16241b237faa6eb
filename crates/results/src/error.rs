//! The errors of writing and reading result documents.

/// Why a result document could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// A result could not be written as JSON.
    #[error("writing the JSON document")]
    Write(#[source] serde_json::Error),
    /// A sweep's run wrote a document that cannot be read back.
    #[error("the run with {parameter} = {value}: its JSON")]
    Run {
        parameter: String,
        value: String,
        #[source]
        source: serde_json::Error,
    },
}
