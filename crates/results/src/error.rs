//! The errors of writing and reading result documents, and of the values that name a run
//! (a sweep's parameter values, a number as the options write it).

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

/// A value given on the command line or in a campaign plan that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValueError {
    /// Not of the form asked for (`expected`: "a number (examples: 20000, 20k, 1.5M)").
    #[error("'{value}' is not {expected}")]
    Form { value: String, expected: &'static str },
    /// Of the right form, outside what is allowed (`allowed`: "above 0 and at most 86400
    /// seconds").
    #[error("'{value}' must be {allowed}")]
    Range { value: String, allowed: String },
}

impl ValueError {
    pub fn form(value: &str, expected: &'static str) -> ValueError {
        ValueError::Form {
            value: value.to_string(),
            expected,
        }
    }

    pub fn range(value: &str, allowed: impl Into<String>) -> ValueError {
        ValueError::Range {
            value: value.to_string(),
            allowed: allowed.into(),
        }
    }
}
