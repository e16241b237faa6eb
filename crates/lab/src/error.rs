//! Errors of the lab.

use std::path::PathBuf;

/// Everything that can go wrong while building, checking or removing a lab.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error("the lab needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN): run as root")]
    NotRoot,
    #[error("a lab already exists ({detail}); run `xlatperf lab down` first")]
    AlreadyUp { detail: String },
    #[error("no lab is up (namespace {ns} does not exist); run `xlatperf lab up <topology>` first")]
    NotUp { ns: String },
    #[error("unknown topology `{name}`; expected one of: {known}")]
    UnknownTopology { name: String, known: String },
    #[error("invalid input: {0}")]
    InvalidInput(String),
    #[error("`{tool}` is not installed; install the Debian package `{package}` (apt-get install -y {package})")]
    MissingTool { tool: String, package: &'static str },
    #[error("cannot run `{command}`: {source}")]
    Spawn { command: String, source: std::io::Error },
    #[error("`{command}` failed ({status}): {stderr}")]
    Command { command: String, status: String, stderr: String },
    #[error("unexpected output of `{command}`: {detail}")]
    Output { command: String, detail: String },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("state file {path}: {detail}")]
    State { path: PathBuf, detail: String },
    #[error("setting up the lab failed: {error}; tearing down what was made also failed: {teardown}")]
    SetupAndTeardown { error: Box<LabError>, teardown: Box<LabError> },
    #[error("lab teardown incomplete: {}", .0.join("; "))]
    Teardown(Vec<String>),
    #[error("eBPF: {0}")]
    Bpf(#[from] xlat_bpf::BpfError),
}

impl LabError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> LabError {
        LabError::Io { path: path.into(), source }
    }
}
