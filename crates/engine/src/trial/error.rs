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
    #[error("{0}")]
    Stream(#[from] xlat_traffic::StreamError),
    #[error("{0}")]
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
    #[error("CPU core {core}: {msg}")]
    Cpu { core: usize, msg: String },
    #[error("a worker thread panicked")]
    Panicked,
    #[error("interrupted")]
    Interrupted,
    #[error("the hook between the phases failed: {0}")]
    Hook(String),
    #[error("{0}")]
    State(#[from] xlat_traffic::StateError),
}

pub(crate) type Res<T> = std::result::Result<T, EngineError>;
