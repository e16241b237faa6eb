//! Why a trial stops (as opposed to an invalid trial, which is a result).

use xlat_io::IoError;
use xlat_trial::spec::SpecError;

/// Errors that stop a trial (as opposed to an invalid trial, which is a result).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Io(#[from] IoError),
    #[error("{side} port: {msg}")]
    Port { side: &'static str, msg: String },
    #[error(transparent)]
    Stream(#[from] xlat_traffic::StreamError),
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(
        "frame size {frame_size} makes {len}-byte frames (without FCS) on the {side} port {port}, \
         which carries at most {max} bytes (its MTU plus the 14-byte Ethernet header, or its buffers)"
    )]
    FrameTooLong {
        frame_size: usize,
        len: usize,
        side: &'static str,
        port: String,
        max: usize,
    },
    #[error("CPU core {core}")]
    Cpu {
        core: usize,
        #[source]
        source: crate::pin::PinError,
    },
    #[error("a worker thread panicked")]
    Panicked,
    #[error("interrupted")]
    Interrupted,
    #[error("the hook between the phases failed")]
    Hook(#[source] xlat_trial::HookError),
    #[error(transparent)]
    State(#[from] xlat_traffic::StateError),
}

pub(crate) type Res<T> = std::result::Result<T, EngineError>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    /// A wrapped error says its message once: the wrapper is transparent, not a second link of
    /// the chain (`{:#}` printed "frame size 9058 exceeds 9018 bytes: frame size 9058 ...").
    #[test]
    fn wrapped_errors_are_said_once() {
        let e = EngineError::from(xlat_traffic::StreamError::Frame("frame size 9058 exceeds 9018 bytes".into()));
        assert_eq!(e.to_string(), "frame size 9058 exceeds 9018 bytes");
        assert!(e.source().is_none());
    }
}
