//! What a bpf(2) call or an assembly failed at.

/// What a bpf(2) call or an assembly failed at.
#[derive(Debug, thiserror::Error)]
pub enum BpfError {
    /// A system call failed.
    #[error("{what}: {os}")]
    Os { what: String, os: std::io::Error },
    /// The verifier refused a program: its log says why.
    #[error("{what}: {os}; verifier log: {log}")]
    Verifier { what: String, os: std::io::Error, log: String },
    /// A jump to a label the program does not define, or one defined twice.
    #[error("eBPF assembly: {0}")]
    Asm(String),
}

impl BpfError {
    pub(crate) fn last_os(what: impl Into<String>) -> BpfError {
        BpfError::Os {
            what: what.into(),
            os: std::io::Error::last_os_error(),
        }
    }
}

pub type Result<T> = std::result::Result<T, BpfError>;
