//! The DUT's commands around the trials ([`DutHooks`]): each is a process run with `sh -c`
//! under a deadline, killed by its PID when it overruns, timed and recorded in the trial's
//! report. [`Hooks`] wraps any [`TrialRunner`] with them, so that every command (the procedures,
//! the self-test, siitperf's command lines) runs the same commands the same way.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use xlat_trial::{DutHooks, HookError, HookRun, PhaseHook, TrialError, TrialErrorKind, TrialReport, TrialRunner, TrialSpec};

/// The longest a DUT hook may run before it is killed and the run fails.
pub const HOOK_DEADLINE: Duration = Duration::from_secs(60);

/// How much of a command's standard output or error is kept, in characters (the end).
const KEPT_CHARS: usize = 500;

/// Run the DUT hook `key` (its configuration key): `sh -c command`, standard input and output
/// closed, standard error kept for the message. It must exit with status 0 within `deadline`;
/// otherwise it is killed (by its PID) and the error names the hook, the command, the exit
/// status or the deadline, and the end of its standard error.
pub fn run_hook(key: &str, command: &str, deadline: Duration) -> Result<(), HookError> {
    run_command(key, command, deadline, false).1
}

/// [`run_hook`]: the record of the run (with the end of the standard output when `capture`,
/// else it is closed) and its verdict.
pub fn run_command(key: &str, command: &str, deadline: Duration, capture: bool) -> (HookRun, Result<(), HookError>) {
    run_command_with(key, command, &[], deadline, capture)
}

/// [`run_command`] with variables `env` added to the command's environment.
fn run_command_with(
    key: &str,
    command: &str,
    env: &[(&str, String)],
    deadline: Duration,
    capture: bool,
) -> (HookRun, Result<(), HookError>) {
    let started = Instant::now();
    let mut run = HookRun {
        key: key.to_string(),
        command: command.to_string(),
        ..HookRun::default()
    };
    let r = run_child(&mut run, env, deadline, capture);
    run.seconds = started.elapsed().as_secs_f64();
    (run, r)
}

/// Read a pipe to its end on a thread (a command writing much must not block on a full pipe; a
/// process the command left behind may keep the pipe open, so it is never joined).
fn drain(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut p) = pipe {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = p.read_to_end(&mut buf);
            let _ = tx.send(buf);
        });
    }
    rx
}

/// The end of what a drained pipe gave within a second (a process the command left behind may
/// hold it open).
fn tail(rx: &mpsc::Receiver<Vec<u8>>) -> String {
    let buf = rx.recv_timeout(Duration::from_secs(1)).unwrap_or_default();
    let text = String::from_utf8_lossy(&buf);
    let text = text.trim_end();
    let start = text.char_indices().rev().nth(KEPT_CHARS - 1).map_or(0, |(i, _)| i);
    text[start..].to_string()
}

fn stderr_tail(rx: &mpsc::Receiver<Vec<u8>>) -> String {
    let text = tail(rx);
    let text = text.trim();
    if text.is_empty() {
        "no output on standard error".to_string()
    } else {
        format!("standard error: {}", text.replace('\n', " | "))
    }
}

fn run_child(run: &mut HookRun, env: &[(&str, String)], deadline: Duration, capture: bool) -> Result<(), HookError> {
    let what = format!("DUT hook {} ({:?})", run.key, run.command);
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(&run.command)
        .envs(env.iter().map(|(k, v)| (k, v)))
        // A group of its own: at the deadline the command goes with everything it started
        // (a `sleep` under the shell would otherwise live on, holding the lab's files).
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(if capture { Stdio::piped() } else { Stdio::null() })
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| HookError::Start {
            what: what.clone(),
            source,
        })?;
    let err = drain(child.stderr.take());
    let out = drain(child.stdout.take());
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= deadline => {
                let pid = child.id();
                kill_group(pid);
                let _ = child.kill();
                let _ = child.wait();
                return Err(HookError::Deadline {
                    what,
                    deadline_s: deadline.as_secs_f64(),
                    pid,
                    stderr: stderr_tail(&err),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                kill_group(child.id());
                let _ = child.kill();
                let _ = child.wait();
                return Err(HookError::Wait { what, source: e });
            }
        }
    };
    run.exit_status = status.code();
    if capture {
        run.output = tail(&out);
    }
    if status.success() {
        Ok(())
    } else {
        Err(HookError::Failed {
            what,
            status: status.to_string(),
            stderr: stderr_tail(&err),
        })
    }
}

/// SIGKILL the process group `pgid` (a hook's: its shell and whatever the shell started; the
/// shell is the group's leader, so the group is this process's child's, no one else's).
fn kill_group(pgid: u32) {
    if let Ok(pgid) = libc::pid_t::try_from(pgid) {
        // SAFETY: kill(2) takes plain integers; a negative PID names the process group.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

/// The count a `dut.count` command printed: one whole number.
fn parse_count(run: &HookRun) -> Result<u64, HookError> {
    let text = run.output.trim();
    text.parse::<u64>().map_err(|_| printed(run, "a whole number of connections"))
}

/// What a command printed that is not what its key asks for.
fn printed(run: &HookRun, expected: &'static str) -> HookError {
    HookError::Output {
        what: format!("DUT hook {} ({:?})", run.key, run.command),
        shown: run.output.trim().chars().take(200).collect(),
        expected,
    }
}

/// The busy share (0 to 1) a `dut.load` command printed: one number, a percent from 0 to 100.
fn parse_load(run: &HookRun) -> Result<f64, HookError> {
    match run.output.trim().parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p / 100.0),
        _ => Err(printed(run, "a CPU busy percent from 0 to 100")),
    }
}

/// When a trial of `spec` sends (the DUT's load is read then): seconds from the moment the
/// trial is asked for to the start of its (last phase's) sending, and the sending's length.
/// `phase_one` for a stateful trial's phase 1 alone.
fn sending_window(spec: &TrialSpec, phase_one: bool) -> (f64, f64) {
    match (&spec.preliminary, phase_one) {
        (Some(p), true) => (0.0, p.frames as f64 / p.rate.max(1) as f64),
        (Some(p), false) => (p.phase_delay_ms as f64 / 1000.0, spec.duration_s),
        (None, _) => (0.0, spec.duration_s),
    }
}

/// A command's record and verdict ([`run_command`]'s).
type Ran = (HookRun, Result<(), HookError>);

/// No `dut.count` reading yet.
const NOT_COUNTED: u64 = u64::MAX;

fn record(log: &Mutex<Vec<HookRun>>, run: HookRun) {
    log.lock().unwrap_or_else(|e| e.into_inner()).push(run);
}

/// A runner with the DUT's commands: `dut.before_trial` before every trial (a failure stops the
/// run before the trial); `dut.between_phases` and `dut.count` between the phases (installed
/// in the inner runner), `dut.count` after phase 1 alone, into the report's
/// `preliminary.dut_connections`; `dut.delete_all` timed for the tear-down rate; `dut.load`
/// started with every trial, its figure the report's `load.dut`. Every command run for a trial
/// is recorded in the report's `dut_hooks`. Without commands it changes nothing.
pub struct Hooks<R> {
    inner: R,
    dut: DutHooks,
    count: Arc<AtomicU64>,
    log: Arc<Mutex<Vec<HookRun>>>,
    /// `dut.between_phases` and `dut.count`, put into every stateful trial's spec.
    between: Option<PhaseHook>,
}

impl<R: TrialRunner> Hooks<R> {
    /// Wrap `inner`; with `dut.between_phases` or `dut.count`, every stateful trial's spec
    /// asks `inner` to run them between the phases (a runner that cannot refuses the trial).
    pub fn new(inner: R, dut: DutHooks) -> Hooks<R> {
        let log: Arc<Mutex<Vec<HookRun>>> = Arc::default();
        let count = Arc::new(AtomicU64::new(NOT_COUNTED));
        let (between, count_command) = (dut.between_phases.clone(), dut.count.clone());
        let hook = (between.is_some() || count_command.is_some()).then(|| {
            let (log, count) = (Arc::clone(&log), Arc::clone(&count));
            PhaseHook::new(move || {
                if let Some(command) = &between {
                    let (run, r) = run_command("dut.between_phases", command, HOOK_DEADLINE, false);
                    record(&log, run);
                    r?;
                }
                if let Some(command) = &count_command {
                    let (run, r) = run_command("dut.count", command, HOOK_DEADLINE, true);
                    record(&log, run.clone());
                    r?;
                    count.store(parse_count(&run)?, Ordering::Relaxed);
                }
                Ok(())
            })
        });
        Hooks {
            inner,
            dut,
            count,
            log,
            between: hook,
        }
    }

    /// `spec` with this runner's between-phases hook after any of its own (a stateful trial).
    fn with_hook<'s>(&self, spec: &'s TrialSpec) -> std::borrow::Cow<'s, TrialSpec> {
        let (Some(ours), Some(_)) = (&self.between, &spec.preliminary) else {
            return std::borrow::Cow::Borrowed(spec);
        };
        let hook = match spec.between_phases.clone() {
            None => ours.clone(),
            Some(theirs) => {
                let ours = ours.clone();
                PhaseHook::new(move || {
                    theirs.run()?;
                    ours.run()
                })
            }
        };
        std::borrow::Cow::Owned(TrialSpec {
            between_phases: Some(hook),
            ..spec.clone()
        })
    }

    /// The command of configuration key `key` (`dut.delete_all`, `dut.reset`).
    fn command(&self, key: &str) -> Result<String, TrialError> {
        match key {
            "dut.delete_all" => self.dut.delete_all.clone(),
            "dut.reset" => self.dut.reset.clone(),
            _ => None,
        }
        .ok_or_else(|| {
            let name = key.trim_start_matches("dut.");
            TrialError::of(
                TrialErrorKind::Config,
                format!("the configuration has no {key} command (TOML [dut] {name})"),
            )
        })
    }

    /// Before a trial: forget the last one's records, run `dut.before_trial`.
    fn before(&mut self, what: &str) -> Result<(), TrialError> {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.count.store(NOT_COUNTED, Ordering::Relaxed);
        if let Some(command) = &self.dut.before_trial {
            let (run, r) = run_command("dut.before_trial", command, HOOK_DEADLINE, false);
            record(&self.log, run);
            r.map_err(|e| TrialError::msg(format!("{e}; the {what} was not run")))?;
        }
        Ok(())
    }

    /// Start `dut.load` for a trial of `spec` (see [`sending_window`]): on a thread of its own,
    /// when the sending starts, with `XLAT_TRIAL_SECONDS` the sending's length; its deadline is
    /// that and [`HOOK_DEADLINE`].
    fn start_load(&self, spec: &TrialSpec, phase_one: bool) -> Option<(mpsc::Receiver<Ran>, Duration)> {
        let command = self.dut.load.clone()?;
        let (after, seconds) = sending_window(spec, phase_one);
        let after = Duration::from_secs_f64(after);
        let deadline = Duration::from_secs_f64(seconds) + HOOK_DEADLINE;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            std::thread::sleep(after);
            let env = [("XLAT_TRIAL_SECONDS", format!("{seconds}"))];
            let _ = tx.send(run_command_with("dut.load", &command, &env, deadline, true));
        });
        Some((rx, after + deadline))
    }

    /// The figure of the `dut.load` started by [`Hooks::start_load`], into `r.load.dut`.
    fn finish_load(&self, r: &mut TrialReport, started: Option<(mpsc::Receiver<Ran>, Duration)>) -> Result<(), TrialError> {
        let Some((rx, within)) = started else { return Ok(()) };
        // The command is killed at its deadline; its thread reports by then (plus the second
        // that reading its pipes may take).
        let (run, verdict) = rx.recv_timeout(within + Duration::from_secs(5)).map_err(|_| {
            TrialError::msg(format!(
                "the DUT command dut.load did not report within {:.1} s",
                within.as_secs_f64() + 5.0
            ))
        })?;
        record(&self.log, run.clone());
        verdict.map_err(TrialError::new)?;
        let busy = parse_load(&run).map_err(TrialError::new)?;
        let load = r.load.get_or_insert_with(Default::default);
        load.dut = Some(xlat_trial::CpuLoad {
            busy,
            busy_max: busy,
            ..Default::default()
        });
        Ok(())
    }

    /// Run a trial of `spec` with `run` (the inner runner's way; `phase_one` for phase 1
    /// alone): `dut.load` alongside its sending, the between-phases hook in its spec.
    fn run_inner(
        &mut self,
        spec: &TrialSpec,
        phase_one: bool,
        run: impl FnOnce(&mut R, &TrialSpec) -> Result<TrialReport, TrialError>,
    ) -> Result<TrialReport, TrialError> {
        let load = self.start_load(spec, phase_one);
        let spec = self.with_hook(spec);
        let mut r = run(&mut self.inner, &spec)?;
        self.finish_load(&mut r, load)?;
        Ok(r)
    }

    /// After a trial: the count (read now after a valid phase 1 that ran alone) and the
    /// records into the report.
    fn after(&mut self, mut r: TrialReport) -> Result<TrialReport, TrialError> {
        let mut n = self.count.swap(NOT_COUNTED, Ordering::Relaxed);
        if let (Some(command), Some(_)) = (&self.dut.count, &r.preliminary) {
            if n == NOT_COUNTED && r.forward.is_none() && r.reverse.is_none() && r.valid {
                let (run, res) = run_command("dut.count", command, HOOK_DEADLINE, true);
                record(&self.log, run.clone());
                res.map_err(TrialError::new)?;
                n = parse_count(&run).map_err(TrialError::new)?;
            }
        }
        if let Some(p) = r.preliminary.as_mut() {
            p.dut_connections = (n != NOT_COUNTED).then_some(n);
        }
        r.dut_hooks = std::mem::take(&mut *self.log.lock().unwrap_or_else(|e| e.into_inner()));
        Ok(r)
    }
}

impl<R: TrialRunner> TrialRunner for Hooks<R> {
    fn run(&mut self, spec: &TrialSpec) -> Result<TrialReport, TrialError> {
        self.before("trial")?;
        let r = self.run_inner(spec, false, |inner, spec| inner.run(spec))?;
        self.after(r)
    }

    fn run_preliminary(&mut self, spec: &TrialSpec, validation: Option<u64>) -> Result<TrialReport, TrialError> {
        self.before("step")?;
        let r = self.run_inner(spec, true, |inner, spec| inner.run_preliminary(spec, validation))?;
        self.after(r)
    }

    fn time_dut_command(&mut self, key: &str) -> Result<f64, TrialError> {
        let command = self.command(key)?;
        let start = Instant::now();
        run_hook(key, &command, HOOK_DEADLINE).map_err(TrialError::new)?;
        Ok(start.elapsed().as_secs_f64())
    }

    /// The command starts on a thread of its own `after_s` seconds after the trial was asked
    /// for (the trial's own start, its ports ready, comes a few milliseconds later); its
    /// deadline is the rest of the trial and its timeout (at most [`HOOK_DEADLINE`]).
    fn run_with_dut_command(&mut self, spec: &TrialSpec, key: &str, after_s: f64) -> Result<(TrialReport, HookRun), TrialError> {
        let command = self.command(key)?;
        self.before("trial")?;
        let rest_s = (spec.duration_s - after_s).max(0.0) + spec.timeout_ms as f64 / 1000.0;
        let deadline = Duration::from_secs_f64(rest_s).min(HOOK_DEADLINE);
        let after = Duration::from_secs_f64(after_s.max(0.0));
        let (tx, rx) = mpsc::channel();
        let name = key.to_string();
        std::thread::spawn(move || {
            std::thread::sleep(after);
            let _ = tx.send(run_command(&name, &command, deadline, false).0);
        });
        let report = self.run_inner(spec, false, |inner, spec| inner.run(spec));
        // The command is killed at its deadline; its thread reports by then (plus the second
        // that reading its pipes may take).
        let run = rx.recv_timeout(after + deadline + Duration::from_secs(5)).map_err(|_| {
            TrialError::msg(format!(
                "the DUT command {key} did not report within {:.1} s",
                (after + deadline).as_secs_f64() + 5.0
            ))
        });
        let report = self.after(report?)?;
        Ok((report, run?))
    }

    fn ports(&self) -> Vec<xlat_trial::PortSettings> {
        self.inner.ports()
    }

    fn describe(&self) -> String {
        let mut s = self.inner.describe();
        if let Some(c) = &self.dut.before_trial {
            s.push_str(&format!("; before every trial: {c}"));
        }
        if let Some(c) = &self.dut.count {
            s.push_str(&format!("; connections counted after phase 1: {c}"));
        }
        if let Some(c) = &self.dut.load {
            s.push_str(&format!("; the DUT's load read with every trial: {c}"));
        }
        s
    }

    fn stamp_sources(&self) -> Vec<xlat_trial::StampSource> {
        self.inner.stamp_sources()
    }
}

#[cfg(test)]
#[path = "hooks_tests.rs"]
mod tests;
