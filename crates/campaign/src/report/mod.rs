//! `xlatperf report DIR`: one self-contained HTML page from a campaign directory or any
//! directory of xlatperf's JSON results ([`read`]), its figures grouped and summarised
//! ([`model`]), and laid out ([`html`]) with inline plots ([`plots`]), or as a table of
//! tab-separated values ([`table`]). What cannot be read is listed in the
//! page and returned as warnings; the rest is reported.

pub mod html;
pub mod model;
pub mod plots;
pub mod read;
pub mod scale;
pub mod table;

use std::path::{Path, PathBuf};

pub use read::ReadError;

/// A report, ready to write.
#[derive(Debug, Clone)]
pub struct Report {
    pub html: String,
    /// Its summaries as tab-separated values ([`table`]).
    pub table: String,
    /// Result documents read.
    pub results: usize,
    /// One line per file (or part of one) that could not be read, and per failed run.
    pub warnings: Vec<String>,
}

/// The report of `dir`.
pub fn build(dir: &Path) -> Result<Report, ReadError> {
    build_all(&[dir.to_path_buf()])
}

/// The report of several campaign directories of one plan, merged ([`read::read_all`]).
pub fn build_all(dirs: &[PathBuf]) -> Result<Report, ReadError> {
    let inputs = read::read_all(dirs)?;
    let (rows, bad_reps) = model::rows(&inputs.sources);
    let mut unread = inputs.unread.clone();
    unread.extend(bad_reps);
    let mut warnings: Vec<String> = unread.iter().map(|(f, why)| format!("{f}: {why}")).collect();
    for s in inputs.sources.iter().filter(|s| !s.doc.complete) {
        warnings.push(format!("{}: the run did not finish; its finished repetitions are reported", s.file));
    }
    for s in &inputs.missing_shards {
        warnings.push(format!("shard {s} of the plan is in none of the directories: its runs are missing"));
    }
    if let Some(m) = &inputs.manifest {
        for r in m.runs.iter().filter(|r| r.status == crate::manifest::Status::Failed) {
            warnings.push(format!("run {} failed: {}", r.id, r.error.as_deref().unwrap_or("")));
        }
    }
    let html = html::page(&inputs, &rows, &unread, &xlat_results::output::rfc3339_now());
    Ok(Report {
        html,
        table: table::tsv(&rows),
        results: inputs.sources.len(),
        warnings,
    })
}
