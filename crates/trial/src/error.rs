//! Why a trial could not run (as opposed to an invalid trial, which is a result).

use std::error::Error;
use std::sync::Arc;

/// What kind of [`TrialError`] it is: what a procedure does about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrialErrorKind {
    /// The tester failed (an engine, port or DUT hook error): the procedure stops.
    Failed,
    /// Ctrl-C: the procedure stops and keeps its trials so far.
    Interrupted,
    /// The runner cannot do what was asked (e.g. phase 1 alone on a simulated DUT).
    Unsupported,
    /// The configuration lacks what was asked (e.g. no `dut.delete_all` command).
    Config,
}

/// A trial that could not run: the tester's error (an engine, port or hook failure) with its
/// chain of causes kept (`source()`), so that the procedures pass it on whole instead of as
/// text, and its [`TrialErrorKind`]. Cheap to clone; equal when kinds and messages are.
#[derive(Debug, Clone)]
pub struct TrialError {
    kind: TrialErrorKind,
    message: String,
    source: Option<Arc<dyn Error + Send + Sync>>,
}

impl TrialError {
    /// An error of the tester: its message is `e`'s, its causes `e`'s causes.
    pub fn new(e: impl Into<Box<dyn Error + Send + Sync>>) -> TrialError {
        let e: Arc<dyn Error + Send + Sync> = Arc::from(e.into());
        TrialError {
            kind: TrialErrorKind::Failed,
            message: e.to_string(),
            source: e.source().is_some().then_some(e),
        }
    }

    /// A failure that is only a message (no cause).
    pub fn msg(message: impl Into<String>) -> TrialError {
        TrialError::of(TrialErrorKind::Failed, message)
    }

    /// An error of `kind` that is only a message.
    pub fn of(kind: TrialErrorKind, message: impl Into<String>) -> TrialError {
        TrialError {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// Ctrl-C stopped the trial (or kept it from starting).
    pub fn interrupted() -> TrialError {
        TrialError::of(TrialErrorKind::Interrupted, "interrupted")
    }

    /// The runner cannot do `what`.
    pub fn unsupported(what: impl Into<String>) -> TrialError {
        TrialError::of(TrialErrorKind::Unsupported, what)
    }

    pub fn kind(&self) -> TrialErrorKind {
        self.kind
    }

    /// The message with every cause after it, `": "`-separated (anyhow's `{:#}`).
    pub fn chain(&self) -> String {
        chain(self)
    }
}

/// Any error's message with every cause after it, `": "`-separated (anyhow's `{:#}`), for a
/// record that keeps text (a trial's, a campaign manifest's).
pub fn chain(e: &dyn Error) -> String {
    let mut s = e.to_string();
    let mut next = e.source();
    while let Some(c) = next {
        s.push_str(": ");
        s.push_str(&c.to_string());
        next = c.source();
    }
    s
}

impl std::fmt::Display for TrialError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl Error for TrialError {
    /// The first cause of the error `new` was given (whose own message is this one's).
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.source.as_ref().and_then(|e| e.source())
    }
}

impl PartialEq for TrialError {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.chain() == other.chain()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Outer(std::io::Error);
    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("opening left port xlat-tl")
        }
    }
    impl Error for Outer {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn the_chain_of_causes_is_kept() {
        let e = TrialError::new(Outer(std::io::Error::other("no such device")));
        assert_eq!(e.to_string(), "opening left port xlat-tl");
        assert_eq!(e.source().map(|s| s.to_string()).as_deref(), Some("no such device"));
        assert_eq!(e.chain(), "opening left port xlat-tl: no such device");
        assert_eq!(e.clone(), e);
        let m = TrialError::msg("link down");
        assert_eq!((m.chain(), m.source().is_none()), ("link down".to_string(), true));
        assert_ne!(m, e);
        assert_eq!(
            (e.kind(), TrialError::interrupted().kind()),
            (TrialErrorKind::Failed, TrialErrorKind::Interrupted)
        );
        assert_ne!(TrialError::unsupported("x"), TrialError::msg("x"));
    }
}
