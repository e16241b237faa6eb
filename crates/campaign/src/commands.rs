//! A plan is code: its tests' descriptions name shell commands for the DUT (the `[dut]` hooks of
//! a test description or of a lab topology, and `--set dut.KEY=...` in a procedure's arguments
//! or axes), and the runs execute them with `sh -c` as the user who runs the campaign. This
//! lists every distinct one before anything runs: `campaign --dry-run` shows them, and
//! `campaign` writes them to its log and standard error before its first run.

use xlat_config::SourceKind;

use crate::manifest::Manifest;

/// One distinct DUT command and where the plan gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DutCommand {
    pub command: String,
    /// `(test, hook)`: e.g. `("nat44", "before_trial")`.
    pub uses: Vec<(String, &'static str)>,
}

/// The `--set KEY=VALUE` pairs of a run's command line.
fn sets(command: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut it = command.iter();
    while let Some(a) = it.next() {
        let pair = match a.strip_prefix("--set=") {
            Some(p) => Some(p),
            None if a == "--set" => it.next().map(String::as_str),
            None => None,
        };
        if let Some((k, v)) = pair.and_then(|p| p.split_once('=')) {
            out.push((k.to_string(), v.to_string()));
        }
    }
    out
}

/// Every distinct DUT command the runs of `m` may run (a hook runs only in the procedures that
/// use it: `reset` in `reset`, `delete_all` in `teardown-rate`), in the order of the runs.
/// `Err` names a test description that cannot be read, with its file and line.
pub fn dut_commands(m: &Manifest) -> Result<Vec<DutCommand>, xlat_config::ConfigError> {
    let mut out: Vec<DutCommand> = Vec::new();
    let mut read: Vec<(&str, Vec<(String, String)>)> = Vec::new();
    for r in &m.runs {
        let sets = sets(&r.command);
        if read.iter().any(|(t, s)| *t == r.test && *s == sets) {
            continue;
        }
        let Some(t) = m.tests.iter().find(|t| t.name == r.test) else {
            continue;
        };
        // A lab's description is the one `lab up` will write; a file is read as its runs read it.
        let cfg = match t.lab.as_deref().map(str::parse::<xlat_lab::Topology>) {
            Some(Ok(top)) => xlat_config::parse_with_overrides(&xlat_lab::config_toml(top), &t.config, SourceKind::Toml, &sets)?,
            Some(Err(_)) => continue,
            None => xlat_config::load(std::path::Path::new(&t.config), &sets)?,
        };
        let h = &cfg.dut;
        let hooks = [
            ("before_trial", &h.before_trial),
            ("between_phases", &h.between_phases),
            ("count", &h.count),
            ("delete_all", &h.delete_all),
            ("reset", &h.reset),
            ("load", &h.load),
        ];
        for (hook, c) in hooks {
            let Some(c) = c else { continue };
            let use_ = (r.test.clone(), hook);
            match out.iter_mut().find(|d| d.command == *c) {
                Some(d) if d.uses.contains(&use_) => {}
                Some(d) => d.uses.push(use_),
                None => out.push(DutCommand {
                    command: c.clone(),
                    uses: vec![use_],
                }),
            }
        }
        read.push((&r.test, sets));
    }
    Ok(out)
}

/// The user this process runs as: `name (uid N)`.
pub fn user() -> String {
    // SAFETY: geteuid cannot fail; getpwuid_r writes only into `pw` and `buf`, both ours and
    // alive for the call, and `found` points at `pw` or is null.
    let uid = unsafe { libc::geteuid() };
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    let r = unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut found) };
    if r == 0 && !found.is_null() && !pw.pw_name.is_null() {
        // SAFETY: pw_name points into `buf`, NUL-terminated by getpwuid_r.
        let name = unsafe { std::ffi::CStr::from_ptr(pw.pw_name) };
        return format!("{} (uid {uid})", name.to_string_lossy());
    }
    format!("uid {uid}")
}

/// The listing: a heading line, then per command its text and where the plan gives it.
pub fn listing(m: &Manifest) -> Vec<String> {
    let commands = match dut_commands(m) {
        Ok(c) => c,
        Err(e) => return vec![format!("DUT commands: cannot list them: {e}")],
    };
    if commands.is_empty() {
        return vec!["DUT commands: none".into()];
    }
    let mut lines = vec![format!(
        "DUT commands the plan's runs may execute with sh -c as {}, who runs this campaign (a plan from elsewhere runs its commands as you):",
        user()
    )];
    for d in commands {
        let uses: Vec<String> = d.uses.iter().map(|(t, h)| format!("{t} dut.{h}")).collect();
        lines.push(format!("  {}    [{}]", d.command, uses.join(", ")));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_pairs_from_a_command_line() {
        let c: Vec<String> = [
            "xlatperf",
            "throughput",
            "--set",
            "dut.reset=x=1",
            "--rate",
            "5",
            "--set=traffic.seed=3",
            "--set",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            sets(&c),
            [
                ("dut.reset".to_string(), "x=1".to_string()),
                ("traffic.seed".to_string(), "3".to_string())
            ]
        );
    }
}
