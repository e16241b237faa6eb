//! Running a campaign: every pending run of the manifest, one xlatperf process each (so that a
//! run is exactly what its command does alone, and a crash of one is the campaign's record,
//! not its end), test by test with the test's lab brought up before and down after.
//!
//! - The manifest is rewritten after every run; a run is `done` only when its process exited
//!   with success and its result document says `complete`.
//! - Each run has a deadline ([`crate::estimate::deadline_s`]): at it the run is asked to stop
//!   (SIGINT: it ends its trial and writes what it has), killed 30 s later, and recorded failed.
//! - Ctrl-C: the run in progress gets it too (it is in the terminal's process group); the
//!   campaign waits for it, leaves it pending and stops. SIGKILL of the campaign takes the run
//!   with it (the parent-death signal), so that a resumed campaign never meets an orphan run on
//!   its ports.
//! - One campaign at a time per directory (a lock file), and one campaign with lab tests at a
//!   time per machine (the lab is one per machine: a second `lab up --replace` would take the
//!   first campaign's DUT away in the middle of its run).

use std::fs::File;
use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use xlat_trial::chain;

use crate::estimate::{deadline_s, human_seconds};
use crate::manifest::{check_plan_copy, host, DirError, Manifest, RunEntry, Session, Status, LOG};
use crate::plan::{OnFailure, Plan};
use crate::shard::Shard;

/// How long a lab may take to come up or go down.
const LAB_DEADLINE: Duration = Duration::from_secs(300);
/// How long a run asked to stop (deadline, Ctrl-C) may take to write its result and exit.
const STOP_GRACE: Duration = Duration::from_secs(30);

/// How to run a campaign.
#[derive(Debug, Clone)]
pub struct Options {
    /// The campaign directory.
    pub dir: PathBuf,
    /// The plan file as given (recorded in the manifest).
    pub plan_arg: String,
    /// The xlatperf program the runs start.
    pub program: PathBuf,
    /// Run the failed runs again.
    pub retry_failed: bool,
    /// The part of the plan to run (`--shard K/N`; [`Shard::WHOLE`]: all of it).
    pub shard: Shard,
    pub xlatperf_version: String,
    pub git_commit: Option<String>,
    /// How long a run will take, by the program's own reading of its options.
    pub estimate: crate::estimate::Estimator,
}

/// How a campaign session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every run finished; `failed` of them failed.
    Finished { done: usize, failed: usize },
    /// Stopped by a failed run (`on_failure = "stop"`).
    StoppedOnFailure { id: String },
    /// Stopped by Ctrl-C; the run in progress stays pending.
    Interrupted,
}

/// An error that stops a campaign (a run's failure does not: it is recorded).
#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    #[error(transparent)]
    Dir(#[from] DirError),
    #[error("{0}")]
    Other(String),
}

/// An exclusive lock (flock) on a file, held while the campaign runs.
struct Lock {
    _file: File,
}

impl Lock {
    /// Take the lock on `path` (created if need be), or fail with `busy`.
    fn take(path: &Path, busy: impl FnOnce() -> String) -> Result<Lock, CampaignError> {
        let f = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| CampaignError::Other(format!("{}: cannot open the lock file: {e}", path.display())))?;
        use std::os::fd::AsRawFd as _;
        // SAFETY: flock on a file descriptor this function owns.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return Err(CampaignError::Other(busy()));
        }
        Ok(Lock { _file: f })
    }
}

/// The machine's one lab is shared by every campaign with a lab test: one at a time.
fn lab_lock(plan: &Plan) -> Result<Option<Lock>, CampaignError> {
    if !plan.tests.iter().any(|t| matches!(t.source, crate::plan::TestSource::Lab { .. })) {
        return Ok(None);
    }
    let dir = Path::new(xlat_lab::RUN_DIR);
    std::fs::create_dir_all(dir).map_err(|e| CampaignError::Other(format!("{}: cannot create it: {e}", dir.display())))?;
    let path = dir.join("campaign-lab.lock");
    Lock::take(&path, || {
        format!(
            "another xlatperf campaign with lab tests is running on this machine (it holds {}): the lab is one per machine",
            path.display()
        )
    })
    .map(Some)
}

/// A campaign in progress: its directory, manifest and log.
pub struct Campaign<'a> {
    plan: &'a Plan,
    opts: &'a Options,
    pub manifest: Manifest,
    log: File,
    _locks: (Lock, Option<Lock>),
    abort: &'a AtomicBool,
    /// Progress lines go here (the CLI prints them on standard error).
    progress: &'a mut dyn FnMut(&str),
    started: Instant,
}

/// Run (or resume) the campaign of `plan` (whose text is `plan_text`) in `opts.dir`.
pub fn run(
    plan: &Plan,
    plan_text: &str,
    opts: &Options,
    abort: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> Result<Outcome, CampaignError> {
    check_plan_copy(&opts.dir, plan_text, &plan.file)?;
    let lock = Lock::take(&opts.dir.join(".lock"), || {
        format!(
            "another xlatperf campaign is running in {} (it holds {})",
            opts.dir.display(),
            opts.dir.join(".lock").display()
        )
    })?;
    let locks = (lock, lab_lock(plan)?);
    remove_temporaries(&opts.dir);
    let fresh = Manifest::new(plan, &opts.plan_arg, "xlatperf", opts.estimate).only(opts.shard);
    let mut manifest = match Manifest::read(&opts.dir)? {
        Some(m) => {
            if m.shard != fresh.shard {
                let part = |s: Option<Shard>| s.map_or("the whole plan".to_string(), |s| format!("shard {s}"));
                return Err(CampaignError::Other(format!(
                    "{}: this directory runs {} and this command asks for {}: give the same --shard, or another directory",
                    opts.dir.join(crate::manifest::MANIFEST).display(),
                    part(m.shard),
                    part(fresh.shard)
                )));
            }
            let same = m.runs.len() == fresh.runs.len() && m.runs.iter().zip(&fresh.runs).all(|(a, b)| a.id == b.id);
            if !same {
                return Err(CampaignError::Other(format!(
                    "{}: its runs are not the plan's (was it written by another version?): give a new directory",
                    opts.dir.join(crate::manifest::MANIFEST).display()
                )));
            }
            m
        }
        None => fresh,
    };
    for r in &mut manifest.runs {
        if opts.retry_failed && r.status == Status::Failed {
            r.status = Status::Pending;
            r.error = None;
        }
    }
    manifest.sessions.push(Session {
        started_at: xlat_results::output::rfc3339_now(),
        xlatperf_version: opts.xlatperf_version.clone(),
        git_commit: opts.git_commit.clone(),
        host: host(),
    });
    manifest.complete = manifest.counts().2 == 0;
    manifest.write(&opts.dir)?;
    let log_path = opts.dir.join(LOG);
    let log = File::options()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|e| CampaignError::Other(format!("{}: cannot open it: {e}", log_path.display())))?;
    let mut c = Campaign {
        plan,
        opts,
        manifest,
        log,
        _locks: locks,
        abort,
        progress,
        started: Instant::now(),
    };
    // A plan is code: say what it will run on the DUT, and as whom, before it runs anything.
    for line in crate::commands::listing(&c.manifest) {
        c.note(&line);
    }
    c.go()
}

/// The temporary files of atomic writes a killed campaign or run left in `dir`, `runs/` and
/// `logs/` (`xlat_config::files::temp_path`'s names, [`xlat_config::files::is_temporary`]): with the directory's lock held, no one
/// else is writing them, and the runs of a killed campaign died with it (their parent-death
/// signal).
fn remove_temporaries(dir: &Path) {
    for sub in [dir.to_path_buf(), dir.join("runs"), dir.join("logs")] {
        for e in std::fs::read_dir(&sub).into_iter().flatten().flatten() {
            if xlat_config::files::is_temporary(&e.file_name().to_string_lossy()) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

impl Campaign<'_> {
    fn note(&mut self, line: &str) {
        let _ = writeln!(self.log, "{} {line}", xlat_results::output::rfc3339_now());
        (self.progress)(line);
    }

    fn save(&mut self) -> Result<(), CampaignError> {
        self.manifest.complete = self.manifest.counts().2 == 0;
        Ok(self.manifest.write(&self.opts.dir)?)
    }

    fn go(&mut self) -> Result<Outcome, CampaignError> {
        let (done, failed, pending) = self.manifest.counts();
        self.note(&format!(
            "campaign {}: {} runs, {done} done, {failed} failed, {pending} to run; directory {}",
            self.manifest.name,
            self.manifest.runs.len(),
            self.opts.dir.display()
        ));
        for ti in 0..self.manifest.tests.len() {
            let test = self.manifest.tests[ti].clone();
            let todo: Vec<usize> = (0..self.manifest.runs.len())
                .filter(|&i| self.manifest.runs[i].test == test.name && self.manifest.runs[i].status == Status::Pending)
                .collect();
            if todo.is_empty() {
                continue;
            }
            if let Some(topology) = &test.lab {
                let mut args = vec!["lab".to_string(), "up".into(), topology.clone(), "--replace".into()];
                args.extend(test.lab_options.iter().cloned());
                self.note(&format!("test {}: xlatperf {}", test.name, args.join(" ")));
                let log = format!("logs/lab-{}.log", test.name);
                if let Err(e) = self.command(&args, &log, LAB_DEADLINE, false) {
                    let error = format!("bringing the lab up failed: {}", chain(&e));
                    for &i in &todo {
                        self.manifest.runs[i].status = Status::Failed;
                        self.manifest.runs[i].error = Some(error.clone());
                    }
                    self.save()?;
                    self.note(&format!("test {}: {error}; its {} runs failed", test.name, todo.len()));
                    if self.plan.on_failure == OnFailure::Stop {
                        return Ok(Outcome::StoppedOnFailure {
                            id: self.manifest.runs[todo[0]].id.clone(),
                        });
                    }
                    continue;
                }
            }
            let outcome = self.runs(&todo);
            if test.lab.is_some() {
                self.note(&format!("test {}: xlatperf lab down", test.name));
                let log = format!("logs/lab-{}.log", test.name);
                if let Err(e) = self.command(&["lab".into(), "down".into()], &log, LAB_DEADLINE, true) {
                    self.note(&format!(
                        "warning: taking the lab down failed ({}); run `xlatperf lab down`",
                        chain(&e)
                    ));
                }
            }
            if let Some(o) = outcome? {
                return Ok(o);
            }
        }
        let (done, failed, _) = self.manifest.counts();
        self.note(&format!(
            "campaign {}: finished, {done} runs done, {failed} failed, in {}",
            self.manifest.name,
            human_seconds(self.started.elapsed().as_secs_f64())
        ));
        Ok(Outcome::Finished { done, failed })
    }

    /// Run the runs `todo` (indices); `Some` when the campaign stops.
    fn runs(&mut self, todo: &[usize]) -> Result<Option<Outcome>, CampaignError> {
        for &i in todo {
            if self.abort.load(Ordering::Relaxed) {
                return Ok(Some(Outcome::Interrupted));
            }
            let total = self.manifest.runs.len();
            let (done, failed, _) = self.manifest.counts();
            let entry = self.manifest.runs[i].clone();
            self.note(&format!(
                "[{}/{total}] {} ({done} done, {failed} failed; {})",
                done + failed + 1,
                entry.id,
                self.eta()
            ));
            let started = Instant::now();
            self.manifest.runs[i].started_at = Some(xlat_results::output::rfc3339_now());
            let deadline = Duration::from_secs_f64(deadline_s(self.plan.run_deadline_s, entry.estimate_s));
            let result = self.command(&entry.command[1..], &entry.log, deadline, false);
            let elapsed = started.elapsed().as_secs_f64();
            if self.abort.load(Ordering::Relaxed) {
                self.manifest.runs[i].started_at = None;
                self.save()?;
                self.note(&format!("{}: interrupted; it runs again when the campaign resumes", entry.id));
                return Ok(Some(Outcome::Interrupted));
            }
            let result = result.and_then(|()| complete_result(&self.opts.dir.join(&entry.file)));
            let r = &mut self.manifest.runs[i];
            r.elapsed_s = Some(elapsed);
            match result {
                Ok(()) => {
                    r.status = Status::Done;
                    r.error = None;
                    self.save()?;
                    self.note(&format!("{}: done in {}", entry.id, human_seconds(elapsed)));
                }
                Err(e) => {
                    let e = chain(&e);
                    r.status = Status::Failed;
                    r.error = Some(e.clone());
                    self.save()?;
                    self.note(&format!("{}: FAILED after {}: {e}", entry.id, human_seconds(elapsed)));
                    if self.plan.on_failure == OnFailure::Stop {
                        return Ok(Some(Outcome::StoppedOnFailure { id: entry.id }));
                    }
                }
            }
        }
        Ok(None)
    }

    /// The estimated end, from the pending runs' estimates scaled by how the finished runs (of every
    /// session) compared with theirs.
    fn eta(&self) -> String {
        let finished: Vec<&RunEntry> = self
            .manifest
            .runs
            .iter()
            .filter(|r| r.status != Status::Pending && r.elapsed_s.is_some())
            .collect();
        let (mut actual, mut estimated) = (0.0, 0.0);
        for r in &finished {
            if let (Some(a), Some(e)) = (r.elapsed_s, r.estimate_s) {
                actual += a;
                estimated += e;
            }
        }
        let scale = if estimated > 0.0 { actual / estimated } else { 1.0 };
        let (mut left, mut unknown) = (0.0, 0);
        for r in self.manifest.runs.iter().filter(|r| r.status == Status::Pending) {
            let same: Vec<f64> = finished
                .iter()
                .filter(|f| f.procedure == r.procedure)
                .filter_map(|f| f.elapsed_s)
                .collect();
            match (r.estimate_s, same.is_empty()) {
                (Some(e), _) => left += e * scale,
                (None, false) => left += same.iter().sum::<f64>() / same.len() as f64,
                (None, true) => unknown += 1,
            }
        }
        let end = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
            + left as u64;
        let mut s = format!("{} left, estimated end {}", human_seconds(left), xlat_results::output::rfc3339(end));
        if unknown > 0 {
            s.push_str(&format!(" plus {unknown} runs not estimated"));
        }
        s
    }

    /// Run `program args` in the campaign directory, its output to `log` (relative), within
    /// `deadline`; `append` appends instead of truncating the log.
    fn command(&mut self, args: &[String], log: &str, deadline: Duration, append: bool) -> Result<(), RunFailure> {
        let path = self.opts.dir.join(log);
        let out = File::options()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(&path)
            .and_then(|out| Ok((out.try_clone()?, out)))
            .map_err(|source| RunFailure::Log {
                path: path.clone(),
                source,
            });
        let (err, out) = out?;
        let mut cmd = Command::new(&self.opts.program);
        cmd.args(args)
            .current_dir(&self.opts.dir)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        // SAFETY: prctl and sigaction are async-signal-safe; they only set this child's
        // parent-death signal and its SIGINT disposition.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The run must stop when asked at its deadline (SIGINT), also when this
                // campaign was started with SIGINT ignored (in the background: `&`, nohup),
                // which a child inherits across exec.
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                if libc::sigaction(libc::SIGINT, &dfl, std::ptr::null_mut()) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(|source| RunFailure::Start {
            program: self.opts.program.clone(),
            source,
        })?;
        wait(child, deadline, self.abort).map_err(|e| {
            let tail = log_tail(&path, 4);
            if tail.is_empty() {
                e
            } else {
                RunFailure::Logged {
                    failure: Box::new(e),
                    tail,
                }
            }
        })
    }
}

/// Wait for `child` until `deadline`; at the deadline ask it to stop, then kill it.
fn wait(mut child: Child, deadline: Duration, abort: &AtomicBool) -> Result<(), RunFailure> {
    let start = Instant::now();
    let mut asked: Option<Instant> = None;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => {
                return Err(match asked {
                    Some(_) if !abort.load(Ordering::Relaxed) => RunFailure::Deadline {
                        deadline: human_seconds(deadline.as_secs_f64()),
                        status,
                    },
                    _ => RunFailure::Exit(status),
                })
            }
            Ok(None) => {}
            Err(e) => return Err(RunFailure::Wait(e)),
        }
        let now = Instant::now();
        match asked {
            None if now - start >= deadline => {
                // SAFETY: a signal to the child this function started and has not reaped.
                unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
                asked = Some(now);
            }
            // Ctrl-C reached the child by the terminal; it has the same grace.
            None if abort.load(Ordering::Relaxed) => asked = Some(now),
            Some(t) if now - t >= STOP_GRACE => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RunFailure::Killed(human_seconds(STOP_GRACE.as_secs_f64())));
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The last `n` non-empty lines of a log, joined with " | ".
fn log_tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// The run's result document exists and says it is complete.
fn complete_result(path: &Path) -> Result<(), RunFailure> {
    let path_buf = || path.to_path_buf();
    let text = std::fs::read_to_string(path).map_err(|source| RunFailure::NoResult { path: path_buf(), source })?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|source| RunFailure::NotJson { path: path_buf(), source })?;
    if v.get("complete") != Some(&serde_json::Value::Bool(true)) {
        return Err(RunFailure::Incomplete { path: path_buf() });
    }
    Ok(())
}

/// Why a run (or a lab command) of the campaign failed. The manifest records
/// `xlat_trial::chain`: the message with its causes.
#[derive(Debug, thiserror::Error)]
pub enum RunFailure {
    #[error("{}: cannot open it", path.display())]
    Log {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start {}", program.display())]
    Start {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("exceeded its deadline of {deadline} and was stopped ({status})")]
    Deadline {
        deadline: String,
        status: std::process::ExitStatus,
    },
    #[error("exited with {0}")]
    Exit(std::process::ExitStatus),
    #[error("waiting for it")]
    Wait(#[source] std::io::Error),
    #[error("did not stop within {0} of being asked; killed")]
    Killed(String),
    /// A failure and the end of the command's log (what it said last).
    #[error("{}: {tail}", chain(failure))]
    Logged { failure: Box<RunFailure>, tail: String },
    #[error("no result file {}", path.display())]
    NoResult {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not JSON", path.display())]
    NotJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: the result is not complete", path.display())]
    Incomplete { path: PathBuf },
}
