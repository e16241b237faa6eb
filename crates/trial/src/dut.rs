//! The DUT's commands: shell commands the tester runs around its trials.

use serde::{Deserialize, Serialize};

/// Shell commands (run with `sh -c`) that prepare the DUT, e.g. `ip netns exec xlat-dut
/// conntrack -F` to empty a stateful DUT's connection table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DutHooks {
    /// Run before every trial; a failure stops the run before the trial.
    pub before_trial: Option<String>,
    /// Run between phase 1 and phase 2 of every stateful trial; a failure ends the trial.
    pub between_phases: Option<String>,
    /// Deletes every connection of the DUT and returns when done: `xlatperf teardown-rate`
    /// times it on a full and on an empty table.
    #[serde(default)]
    pub delete_all: Option<String>,
    /// Prints the number of connections in the DUT's table (a whole number on its standard
    /// output): run after phase 1 of every stateful trial, the number goes into the trial's
    /// report (`preliminary.dut_connections`).
    #[serde(default)]
    pub count: Option<String>,
    /// Resets the DUT (RFC 6201) and returns: `xlatperf reset` runs it during a trial and
    /// measures how long the DUT forwarded nothing.
    #[serde(default)]
    pub reset: Option<String>,
    /// Not a command: the CPUs of a DUT that runs on the tester's host (the lab's), whose load
    /// every trial reads (`TrialReport::load`) and which the tester's workers keep off.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<usize>,
    /// Prints the DUT's CPU busy share over the trial's sending, in percent (one number): for a
    /// DUT outside this host. Started with every trial, in parallel, with the seconds to
    /// measure in `XLAT_TRIAL_SECONDS`; its figure goes into the trial's `load.dut`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<String>,
}

/// Why a DUT command failed. `what` names it: "DUT hook KEY (COMMAND)".
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("{what}: cannot start sh")]
    Start {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{what}: waiting for it failed")]
    Wait {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{what} did not end within {deadline_s} s and was killed (PID {pid}); {stderr}")]
    Deadline {
        what: String,
        deadline_s: f64,
        pid: u32,
        stderr: String,
    },
    /// It exited with another status than 0 (`status` as the system words it).
    #[error("{what} failed ({status}); {stderr}")]
    Failed { what: String, status: String, stderr: String },
    /// It printed something else than what its key asks for (`expected`).
    #[error("{what} printed {shown:?}, not {expected}")]
    Output {
        what: String,
        shown: String,
        expected: &'static str,
    },
    /// A hook given as code (a test's, a wrapper's) failed for its own reason.
    #[error("{0}")]
    Other(String),
}

/// What runs between phase 1 and phase 2 of a stateful trial (its spec's `between_phases`);
/// an `Err` ends the trial with its message. Two are equal when they are the same hook.
#[derive(Clone)]
pub struct PhaseHook(std::sync::Arc<dyn Fn() -> Result<(), HookError> + Send + Sync>);

impl PhaseHook {
    pub fn new(f: impl Fn() -> Result<(), HookError> + Send + Sync + 'static) -> PhaseHook {
        PhaseHook(std::sync::Arc::new(f))
    }

    pub fn run(&self) -> Result<(), HookError> {
        (self.0)()
    }
}

impl std::fmt::Debug for PhaseHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PhaseHook")
    }
}

impl PartialEq for PhaseHook {
    fn eq(&self, other: &PhaseHook) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}
