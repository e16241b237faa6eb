//! The lab's daemons (TAYGA, dpdk-testpmd): whether a PID is still the process the lab
//! started, and stopping it by that PID only.

use std::time::{Duration, Instant};

use crate::cmd::run;
use crate::error::LabError;

/// Is `pid` a live (not zombie) process?
pub(crate) fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state is the first field after the command name in parentheses.
    match stat.rfind(')').and_then(|i| stat[i + 1..].split_whitespace().next()) {
        Some(state) => state != "Z" && state != "X",
        None => false,
    }
}

/// Is `pid` a live process named `comm`?
pub(crate) fn process_is(pid: u32, comm: &str) -> bool {
    alive(pid)
        && std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|c| c.trim() == comm)
            .unwrap_or(false)
}

fn wait_gone(pid: u32, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// Stop the daemon `pid` if it is still the process named `comm` that the lab started: SIGTERM,
/// then SIGKILL. `Ok(true)` if stopped.
pub(crate) fn stop(pid: u32, comm: &str, notes: &mut Vec<String>) -> Result<bool, LabError> {
    if !alive(pid) {
        return Ok(false);
    }
    if !process_is(pid, comm) {
        notes.push(format!("pid {pid} is no longer {comm}; left alone"));
        return Ok(false);
    }
    let p = pid.to_string();
    run("kill", &["-TERM", &p])?;
    if wait_gone(pid, Duration::from_secs(5)) {
        return Ok(true);
    }
    run("kill", &["-KILL", &p])?;
    if wait_gone(pid, Duration::from_secs(2)) {
        Ok(true)
    } else {
        Err(LabError::Teardown(vec![format!("{comm} (pid {pid}) does not exit")]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_checks() {
        let me = std::process::id();
        assert!(alive(me));
        assert!(!process_is(me, "tayga"));
        assert!(!alive(u32::MAX));
        let mut notes = Vec::new();
        assert!(!stop(me, "tayga", &mut notes).unwrap(), "not a tayga: left alone");
        assert_eq!(notes.len(), 1);
    }
}
