//! Running the system tools (`ip`, `nft`, `sysctl`, `tayga`, `kill`): always with argument
//! vectors, never through a shell, and with the failing command and its stderr in the error.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use crate::error::LabError;

/// The Debian package that provides a tool, for the "not installed" hint.
pub(crate) fn package_of(tool: &str) -> &'static str {
    match tool {
        "ip" => "iproute2",
        "nft" => "nftables",
        "sysctl" | "kill" => "procps",
        "tayga" => "tayga",
        "taskset" => "util-linux",
        "dpdk-testpmd" => "dpdk",
        _ => "?",
    }
}

/// The command line as a human reads it (for error messages only; never executed).
pub(crate) fn display(program: &str, args: &[&str]) -> String {
    let mut s = String::from(program);
    for a in args {
        s.push(' ');
        if a.is_empty() || a.contains(|c: char| c.is_whitespace() || c == '"' || c == '\'') {
            s.push('\'');
            s.push_str(&a.replace('\'', "'\\''"));
            s.push('\'');
        } else {
            s.push_str(a);
        }
    }
    s
}

/// A tool starts with standard input, output and error only: every other descriptor of ours
/// (inherited from whoever ran xlatperf) is closed at its exec. TAYGA, a daemon, would otherwise
/// keep them for its whole life: a script's `flock` on the lab lock stayed held after the script
/// had ended, and a pipe's write end kept its reader waiting.
#[allow(unsafe_code)]
fn only_standard_descriptors(cmd: &mut Command) {
    // SAFETY: the closure runs in the child between fork and exec; it makes one system call
    // (async-signal-safe), allocates nothing and takes no lock. close_range with
    // CLOSE_RANGE_CLOEXEC only marks the descriptors from 3 up, so the spawn's own error pipe
    // (close-on-exec already) still reports a failed exec. Linux < 5.11 has no close_range:
    // the call fails and the tool inherits as before.
    unsafe {
        cmd.pre_exec(|| {
            libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, libc::CLOSE_RANGE_CLOEXEC);
            Ok(())
        });
    }
}

/// A daemon the lab starts and `down` stops by its pid: in a session of its own (a Ctrl-C at
/// the terminal that ran `lab up` does not reach it), with only the standard descriptors.
#[allow(unsafe_code)]
pub(crate) fn detach(cmd: &mut Command) {
    only_standard_descriptors(cmd);
    // SAFETY: runs in the child between fork and exec; setsid is async-signal-safe and
    // allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
}

/// Run `program args...`, optionally feeding `input` on stdin; return stdout on success.
pub(crate) fn run_with_input(program: &str, args: &[&str], input: Option<&str>) -> Result<String, LabError> {
    let command = display(program, args);
    let mut cmd = Command::new(program);
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    only_standard_descriptors(&mut cmd);
    cmd.stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() });
    let mut child = cmd.spawn().map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            LabError::MissingTool {
                tool: program.to_string(),
                package: package_of(program),
            }
        } else {
            LabError::Spawn {
                command: command.clone(),
                source,
            }
        }
    })?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin.write_all(text.as_bytes()).map_err(|source| LabError::Spawn {
            command: command.clone(),
            source,
        })?;
        // stdin is dropped here, so the tool sees EOF.
    }
    let out = child.wait_with_output().map_err(|source| LabError::Spawn {
        command: command.clone(),
        source,
    })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let mut stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        if stderr.is_empty() {
            stderr = String::from_utf8_lossy(&out.stdout).trim().to_string();
        }
        if stderr.is_empty() {
            stderr = "(no output)".to_string();
        }
        Err(LabError::Command {
            command,
            status: out.status.to_string(),
            stderr,
        })
    }
}

/// Run `program args...` and return its stdout.
pub(crate) fn run(program: &str, args: &[&str]) -> Result<String, LabError> {
    run_with_input(program, args, None)
}

/// Run `program args...` inside network namespace `ns` (`ip netns exec`).
pub(crate) fn run_in(ns: &str, program: &str, args: &[&str]) -> Result<String, LabError> {
    let mut full = vec!["netns", "exec", ns, program];
    full.extend_from_slice(args);
    run("ip", &full)
}

/// Run `ip -n ns args...`.
pub(crate) fn ip_in(ns: &str, args: &[&str]) -> Result<String, LabError> {
    let mut full = vec!["-n", ns];
    full.extend_from_slice(args);
    run("ip", &full)
}

/// Set a sysctl: in namespace `ns`, or in the initial namespace with `None`.
pub(crate) fn sysctl_set(ns: Option<&str>, key: &str, value: &str) -> Result<(), LabError> {
    let kv = format!("{key}={value}");
    match ns {
        Some(ns) => run_in(ns, "sysctl", &["-q", "-w", &kv]).map(drop),
        None => run("sysctl", &["-q", "-w", &kv]).map(drop),
    }
}

/// Read a sysctl: in namespace `ns`, or in the initial namespace with `None`.
pub(crate) fn sysctl_get(ns: Option<&str>, key: &str) -> Result<String, LabError> {
    let out = match ns {
        Some(ns) => run_in(ns, "sysctl", &["-n", key])?,
        None => run("sysctl", &["-n", key])?,
    };
    Ok(out.trim().to_string())
}

/// Is `tool` runnable (found in PATH)?
pub fn have_tool(tool: &str) -> bool {
    let Some(path) = std::env::var_os("PATH") else { return false };
    std::env::split_paths(&path).any(|dir| dir.join(tool).is_file())
}

/// Is this process running with effective uid 0? (The lab needs CAP_NET_ADMIN and CAP_SYS_ADMIN.)
pub fn is_root() -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1).map(|euid| euid == "0"))
        .unwrap_or(false)
}

pub(crate) fn require_root() -> Result<(), LabError> {
    if is_root() {
        Ok(())
    } else {
        Err(LabError::NotRoot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_quotes_only_when_needed() {
        assert_eq!(display("ip", &["-n", "xlat-dut", "link"]), "ip -n xlat-dut link");
        assert_eq!(display("nft", &["-f", "a b"]), "nft -f 'a b'");
        assert_eq!(display("x", &[""]), "x ''");
    }

    #[test]
    fn missing_tool_is_reported_with_package() {
        match run("xlat-no-such-tool-here", &[]) {
            Err(LabError::MissingTool { tool, .. }) => assert_eq!(tool, "xlat-no-such-tool-here"),
            other => panic!("unexpected: {other:?}"),
        }
    }

    #[test]
    fn failing_command_carries_stderr() {
        let err = run("sh", &["-c", "echo oops >&2; exit 3"]).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("oops") && text.contains("sh -c"), "{text}");
    }

    #[test]
    fn stdin_is_fed() {
        assert_eq!(run_with_input("cat", &[], Some("hello")).unwrap(), "hello");
    }
}
