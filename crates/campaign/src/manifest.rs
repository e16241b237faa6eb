//! A campaign's directory and its manifest (`campaign.json`): the plan as it was when the
//! campaign began (`plan.toml`), every run with its command, its result file (`runs/ID.json`),
//! its log (`logs/ID.log`) and its status, rewritten atomically after every run, so that a
//! campaign stopped anywhere (Ctrl-C, SIGKILL, a reboot) resumes with its first unfinished
//! run and never runs a finished one again.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use xlat_results::output::Host;

use crate::plan::{Plan, TestSource};
use crate::shard::Shard;

/// The manifest's file name in a campaign directory.
pub const MANIFEST: &str = "campaign.json";
/// The plan's copy in a campaign directory.
pub const PLAN_COPY: &str = "plan.toml";
/// The campaign's log: one line per event.
pub const LOG: &str = "campaign.log";
/// The manifest format this build writes and reads.
pub const FORMAT: u32 = 1;

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Not run yet, or stopped before it finished (it runs again).
    Pending,
    /// Finished: its result file is complete.
    Done,
    /// Finished with an error (recorded in `error`); runs again only with `--retry-failed`.
    Failed,
}

/// One run in the manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunEntry {
    pub id: String,
    /// The test's name.
    pub test: String,
    pub procedure: String,
    pub axes: BTreeMap<String, String>,
    pub repetition: u32,
    /// The command that reproduces the run, as run (`xlatperf PROCEDURE -c CONFIG ... --json FILE`).
    pub command: Vec<String>,
    /// The result document, relative to the campaign directory.
    pub file: String,
    /// The run's standard output and error, relative to the campaign directory.
    pub log: String,
    pub status: Status,
    /// An estimate of the run's duration before it ran, seconds (`None`: not estimated).
    pub estimate_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_s: Option<f64>,
    /// Why a failed run failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One test description of the manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestEntry {
    pub name: String,
    /// The lab topology brought up for it, or `None`.
    pub lab: Option<String>,
    #[serde(default)]
    pub lab_options: Vec<String>,
    /// The configuration file its runs read.
    pub config: String,
}

/// One invocation of `xlatperf campaign` on the directory (the first, then every resumption).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub started_at: String,
    pub xlatperf_version: String,
    pub git_commit: Option<String>,
    pub host: Host,
}

/// `campaign.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    pub name: String,
    /// The plan file as given on the command line.
    pub plan: String,
    /// The part of the plan this directory runs (`--shard K/N`); absent: the whole plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// Every run has finished (done or failed).
    pub complete: bool,
    pub sessions: Vec<Session>,
    pub tests: Vec<TestEntry>,
    pub runs: Vec<RunEntry>,
}

/// An error about a campaign directory, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum DirError {
    #[error("{}: {msg}", path.display())]
    File { path: PathBuf, msg: String },
}

fn file_err(path: &Path, msg: impl std::fmt::Display) -> DirError {
    DirError::File {
        path: path.to_path_buf(),
        msg: msg.to_string(),
    }
}

/// The configuration file a test's runs read (a lab topology's: where `xlatperf lab up` writes it).
pub fn test_config(source: &TestSource) -> PathBuf {
    match source {
        TestSource::Lab { topology, .. } => match topology.parse::<xlat_lab::Topology>() {
            Ok(t) => xlat_lab::config_path(t),
            Err(_) => PathBuf::from(format!("{}/lab-{topology}.toml", xlat_lab::RUN_DIR)),
        },
        TestSource::Config(p) => p.clone(),
    }
}

impl Manifest {
    /// A new manifest for `plan`: every run pending. `program` is the name the commands
    /// start with; `estimate` gives each run's estimated seconds.
    pub fn new(plan: &Plan, plan_arg: &str, program: &str, estimate: impl Fn(&[String]) -> Option<f64>) -> Manifest {
        let tests: Vec<TestEntry> = plan
            .tests
            .iter()
            .map(|t| TestEntry {
                name: t.name.clone(),
                lab: match &t.source {
                    TestSource::Lab { topology, .. } => Some(topology.clone()),
                    TestSource::Config(_) => None,
                },
                lab_options: match &t.source {
                    TestSource::Lab { options, .. } => options.clone(),
                    TestSource::Config(_) => Vec::new(),
                },
                config: test_config(&t.source).display().to_string(),
            })
            .collect();
        let runs = plan
            .runs()
            .iter()
            .map(|r| {
                let file = format!("runs/{}.json", r.id);
                let mut command = vec![
                    program.to_string(),
                    r.procedure.clone(),
                    "-c".to_string(),
                    tests[r.test].config.clone(),
                ];
                command.extend(r.args.iter().cloned());
                command.extend(["--json".to_string(), file.clone()]);
                let estimate_s = estimate(&command);
                RunEntry {
                    id: r.id.clone(),
                    test: tests[r.test].name.clone(),
                    procedure: r.procedure.clone(),
                    axes: r.axes.iter().cloned().collect(),
                    repetition: r.repetition,
                    command,
                    log: format!("logs/{}.log", r.id),
                    file,
                    status: Status::Pending,
                    estimate_s,
                    started_at: None,
                    elapsed_s: None,
                    error: None,
                }
            })
            .collect();
        Manifest {
            format: FORMAT,
            name: plan.name.clone(),
            plan: plan_arg.to_string(),
            shard: None,
            complete: false,
            sessions: Vec::new(),
            tests,
            runs,
        }
    }

    /// Only `shard`'s runs, each keeping its id in the whole plan (see [`crate::shard`]).
    pub fn only(mut self, shard: Shard) -> Manifest {
        if !shard.is_whole() {
            let mut i = 0;
            self.runs.retain(|_| {
                i += 1;
                shard.holds(i - 1)
            });
            self.shard = Some(shard);
        }
        self
    }

    /// Read `dir`'s manifest; `None` when the directory has none.
    pub fn read(dir: &Path) -> Result<Option<Manifest>, DirError> {
        let path = dir.join(MANIFEST);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(file_err(&path, format!("cannot read it: {e}"))),
        };
        let m: Manifest = serde_json::from_str(&text).map_err(|e| file_err(&path, format!("not a campaign manifest: {e}")))?;
        if m.format != FORMAT {
            return Err(file_err(
                &path,
                format!("manifest format {} (this xlatperf reads format {FORMAT})", m.format),
            ));
        }
        Ok(Some(m))
    }

    /// Write the manifest into `dir`, atomically.
    pub fn write(&self, dir: &Path) -> Result<(), DirError> {
        let path = dir.join(MANIFEST);
        let json = serde_json::to_string_pretty(self).map_err(|e| file_err(&path, e))?;
        xlat_config::files::write_atomic(&path, format!("{json}\n").as_bytes())
            .map_err(|e| file_err(&path, format!("cannot write it: {e}")))
    }

    /// The runs done, failed and pending.
    pub fn counts(&self) -> (usize, usize, usize) {
        let n = |s: Status| self.runs.iter().filter(|r| r.status == s).count();
        (n(Status::Done), n(Status::Failed), n(Status::Pending))
    }
}

/// Open (or create) the campaign directory `dir` for `plan_text`: a new directory gets the
/// plan's copy; an existing one must hold the same plan (a changed plan would renumber the
/// runs: start a new directory, or put the old plan back).
pub fn check_plan_copy(dir: &Path, plan_text: &str, plan_file: &Path) -> Result<(), DirError> {
    let copy = dir.join(PLAN_COPY);
    match std::fs::read_to_string(&copy) {
        Ok(old) if old == plan_text => Ok(()),
        Ok(_) => Err(file_err(
            &copy,
            format!(
                "this campaign began with another plan than {}: give a new directory (--dir), or put the plan back as it was",
                plan_file.display()
            ),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if dir.join(MANIFEST).exists() {
                return Err(file_err(&copy, "missing beside campaign.json: this directory is damaged"));
            }
            std::fs::create_dir_all(dir.join("runs"))
                .and_then(|_| std::fs::create_dir_all(dir.join("logs")))
                .map_err(|e| file_err(dir, format!("cannot create it: {e}")))?;
            xlat_config::files::write_atomic(&copy, plan_text.as_bytes()).map_err(|e| file_err(&copy, format!("cannot write it: {e}")))
        }
        Err(e) => Err(file_err(&copy, format!("cannot read it: {e}"))),
    }
}

/// The machine this process runs on.
pub fn host() -> Host {
    let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into())
    };
    Host {
        cpu_model,
        cpus: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        kernel: read("/proc/sys/kernel/osrelease"),
        hostname: read("/proc/sys/kernel/hostname"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_names_every_run_with_its_command_and_reads_back() {
        let text =
            "[[test]]\nname = \"r\"\nlab = \"router4\"\n[[procedure]]\ncommand = \"throughput\"\naxes = { frame-sizes = [84, 1518] }\n";
        let plan = Plan::parse(text, Path::new("p.toml")).unwrap();
        let m = Manifest::new(&plan, "p.toml", "xlatperf", |_| Some(10.0));
        assert_eq!(m.runs.len(), 2);
        assert_eq!(
            m.runs[1].command,
            [
                "xlatperf",
                "throughput",
                "-c",
                "/run/xlatperf/lab-router4.toml",
                "--frame-sizes",
                "1518",
                "--json",
                "runs/002-r-throughput-frame-sizes=1518-r1.json"
            ]
        );
        assert_eq!(m.counts(), (0, 0, 2));
        let dir = std::env::temp_dir().join(format!("xlat-manifest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        m.write(&dir).unwrap();
        assert_eq!(Manifest::read(&dir).unwrap(), Some(m));
        std::fs::write(dir.join(MANIFEST), "{\"format\": 9}").unwrap();
        let e = Manifest::read(&dir).unwrap_err().to_string();
        assert!(e.contains("campaign.json") && e.contains("not a campaign manifest"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_directory_holds_one_plan() {
        let dir = std::env::temp_dir().join(format!("xlat-plancopy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        check_plan_copy(&dir, "a", Path::new("p.toml")).unwrap();
        assert!(dir.join("runs").is_dir() && dir.join("logs").is_dir());
        check_plan_copy(&dir, "a", Path::new("p.toml")).unwrap();
        let e = check_plan_copy(&dir, "b", Path::new("p.toml")).unwrap_err().to_string();
        assert!(e.contains("plan.toml") && e.contains("another plan"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
