//! Starting the dpdk-fwd DUT (`dpdk-testpmd`, as testpmd.rs describes it) and finding it
//! again: its pid recorded before anything else can fail, and after a crash the testpmd that
//! serves the lab's socket.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::LabError;
use crate::placement::Placement;
use crate::process::process_is;
use crate::state::{self, LabState, RUN_DIR};
use crate::testpmd::{command, HUGEPAGES_NEEDED, LEFT_SOCKET, RIGHT_SOCKET, TESTPMD, TESTPMD_LOG};

/// Free hugepages in /proc/meminfo's `text` (2 MiB pages on these hosts).
fn free_hugepages(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("HugePages_Free:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Start testpmd on the DUT's CPUs, its pid in `st` before anything else can fail, and wait
/// until both its sockets listen.
pub(crate) fn start(st: &mut LabState, placement: &Placement, queues: u32) -> Result<(), LabError> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").map_err(|e| LabError::io("/proc/meminfo", e))?;
    let free = free_hugepages(&meminfo).unwrap_or(0);
    if free < HUGEPAGES_NEEDED {
        return Err(LabError::InvalidInput(format!(
            "dpdk-fwd needs {HUGEPAGES_NEEDED} free hugepages (testpmd, the tester and their virtio rings) and this host has {free} \
             (/proc/meminfo): reserve them as root with scripts/setup.sh (or `echo 512 > /proc/sys/vm/nr_hugepages` and \
             hugetlbfs mounted on /dev/hugepages)"
        )));
    }
    std::fs::create_dir_all(RUN_DIR).map_err(|e| LabError::io(RUN_DIR, e))?;
    for f in [TESTPMD_LOG, LEFT_SOCKET, RIGHT_SOCKET] {
        st.files.push(PathBuf::from(f));
        state::remove_file_if_exists(std::path::Path::new(f))?;
    }
    state::write(st)?;
    let log = std::fs::File::create(TESTPMD_LOG).map_err(|e| LabError::io(TESTPMD_LOG, e))?;
    let err = log.try_clone().map_err(|e| LabError::io(TESTPMD_LOG, e))?;
    let args = command(&placement.dut, queues);
    let mut cmd = Command::new(TESTPMD);
    cmd.args(&args).stdin(Stdio::null()).stdout(log).stderr(err);
    // Its own session: `lab down` ends it by its pid, a Ctrl-C at the terminal does not.
    crate::cmd::detach(&mut cmd);
    let child = cmd.spawn().map_err(|source| LabError::Spawn {
        command: TESTPMD.to_string(),
        source,
    })?;
    let pid = child.id();
    // Not waited for: it outlives `lab up` (a detached daemon, like TAYGA).
    drop(child);
    st.dut_pid = Some(pid);
    state::write(st)?;

    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let log = std::fs::read_to_string(TESTPMD_LOG).unwrap_or_default();
        if !process_is(pid, TESTPMD) {
            return Err(LabError::Output {
                command: crate::cmd::display(TESTPMD, &args.iter().map(String::as_str).collect::<Vec<_>>()),
                detail: format!("exited at start; the end of {TESTPMD_LOG}:\n{}", tail(&log, 8)),
            });
        }
        let listening = [LEFT_SOCKET, RIGHT_SOCKET].iter().all(|s| std::path::Path::new(s).exists());
        if listening && (log.contains("Press enter to exit") || log.contains("Port statistics")) {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(LabError::Output {
                command: TESTPMD.to_string(),
                detail: format!("not forwarding after 20 s; the end of {TESTPMD_LOG}:\n{}", tail(&log, 8)),
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The last `n` lines of `text`.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// testpmd processes the lab started (a vhost-user server on its left socket) that no state file
/// names: after a crash between the start and the state's write.
pub(crate) fn strays() -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| process_is(pid, TESTPMD))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| {
                    c.split(|&b| b == 0)
                        .any(|a| a.windows(LEFT_SOCKET.len()).any(|w| w == LEFT_SOCKET.as_bytes()))
                })
                .unwrap_or(false)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_hugepages_are_read_from_meminfo() {
        assert_eq!(free_hugepages("HugePages_Total:     512\nHugePages_Free:      486\n"), Some(486));
        assert_eq!(free_hugepages("MemTotal: 1 kB\n"), None);
    }
}
