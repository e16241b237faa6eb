//! Host-wide sysctls the lab changes (neighbour table limits, connection tracking limits): each
//! old value saved in the state file before it changes, and restored by `down` (also after a
//! crash: `down`, or `up --replace`, finds the state file) unless someone changed it since.

use crate::cmd::{sysctl_get, sysctl_set};
use crate::error::LabError;
use crate::report::DownReport;
use crate::state::{self, LabState, SavedSysctl};

/// Raise the sysctls of `wanted` that are lower than wanted.
pub(crate) fn raise(st: &mut LabState, wanted: &[(&str, u64)]) -> Result<(), LabError> {
    change(st, wanted, |current, want| current.parse::<u64>().map(|v| v < want).unwrap_or(true))
}

/// Set the sysctls of `wanted` to exactly those values (lower too).
pub(crate) fn set(st: &mut LabState, wanted: &[(&str, u64)]) -> Result<(), LabError> {
    change(st, wanted, |current, want| current != want.to_string())
}

/// Set each sysctl of `wanted` whose current value `needed(current, wanted)` says to, recording
/// the old value in the state file first, and then the value the kernel took (it may round:
/// the hash size goes to a multiple of a page of buckets), so that `down` recognises its own
/// value and restores the old one.
fn change(st: &mut LabState, wanted: &[(&str, u64)], needed: impl Fn(&str, u64) -> bool) -> Result<(), LabError> {
    for &(key, want) in wanted {
        let current = sysctl_get(None, key)?;
        if !needed(current.trim(), want) {
            continue;
        }
        st.saved_sysctls.push(SavedSysctl {
            key: key.to_string(),
            original: current,
            set: want.to_string(),
        });
        state::write(st)?;
        sysctl_set(None, key, &want.to_string())?;
        let took = sysctl_get(None, key)?;
        if let Some(saved) = st.saved_sysctls.last_mut() {
            saved.set = took.trim().to_string();
        }
        state::write(st)?;
    }
    Ok(())
}

/// `down`: put back every sysctl `st` saved that still has the lab's value.
pub(crate) fn restore(st: &LabState, report: &mut DownReport, failures: &mut Vec<String>) {
    for s in &st.saved_sysctls {
        match sysctl_get(None, &s.key) {
            Ok(v) if v == s.set => match sysctl_set(None, &s.key, &s.original) {
                Ok(()) => report.sysctls_restored.push(format!("{}={}", s.key, s.original)),
                Err(e) => failures.push(e.to_string()),
            },
            Ok(v) => report.notes.push(format!("{} is {v}, not the lab's {}; left alone", s.key, s.set)),
            Err(e) => failures.push(e.to_string()),
        }
    }
}
