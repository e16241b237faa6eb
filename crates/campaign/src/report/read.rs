//! Reading results for the report: a campaign directory (its manifest names the runs) or any
//! directory of xlatperf's JSON documents, each read through the typed view of the document
//! format (`xlat_results::view`, the one a sweep reads its runs with); what cannot be read is named with the reason, and the rest is reported.

use std::path::{Path, PathBuf};

pub use xlat_results::view::{DocView, MetaView, RepeatedView, SizeView, SummaryView};

use crate::manifest::{Manifest, RunEntry, Status, MANIFEST};
use crate::shard::Shard;

/// One result document that was read.
#[derive(Debug, Clone)]
pub struct Source {
    /// The file, relative to the directory reported on (to the campaign directory it came
    /// from, after that directory's name, when several are merged).
    pub file: String,
    /// The directory it was read from (where its run's command runs).
    pub origin: PathBuf,
    /// Its run in the campaign's manifest, if it came from a campaign.
    pub run: Option<RunEntry>,
    /// The DUT (test) it measured: the campaign's test name, else the configuration file's name.
    pub dut: String,
    /// The campaign axes of its run other than the frame size ("tester.backend=afxdp"), joined.
    pub variant: String,
    pub doc: DocView,
}

/// Everything the report is made from.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// The directories reported on: one, or the campaign directories merged.
    pub dirs: Vec<PathBuf>,
    /// The campaign's manifest; merged, one manifest with every directory's runs and sessions.
    pub manifest: Option<Manifest>,
    pub sources: Vec<Source>,
    /// (file, why) of every file that could not be read.
    pub unread: Vec<(String, String)>,
    /// Merged shards: the parts of the plan none of the directories holds.
    pub missing_shards: Vec<Shard>,
}

/// Why there is no report at all.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{}: {msg}", dir.display())]
    Dir { dir: PathBuf, msg: String },
}

/// Every `*.json` file under `dir` (not hidden, not the manifest), sorted.
fn json_files(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.starts_with('.') || name == MANIFEST {
            continue;
        }
        if p.is_dir() && depth < 8 {
            json_files(&p, out, depth + 1);
        } else if name.ends_with(".json") {
            out.push(p);
        }
    }
}

/// Why a document, or a result in it, cannot be read (the report lists it with its file).
#[derive(Debug, thiserror::Error)]
pub enum DocError {
    #[error("cannot read it: {0}")]
    Io(std::io::Error),
    #[error("truncated JSON (it ends at line {line}, column {column})")]
    Truncated { line: usize, column: usize },
    #[error("not JSON: {0}")]
    NotJson(serde_json::Error),
    #[error("a sweep's document (report on the runs instead: xlatperf campaign writes one file per run)")]
    Sweep,
    #[error("not an xlatperf result document (no procedure and meta.xlatperf_version)")]
    NotAResult,
    #[error("written by xlatperf {version} in a format this report cannot read ({error}); run it again with this xlatperf")]
    OtherFormat { version: String, error: serde_json::Error },
    /// One repetition's result is not its procedure's.
    #[error("{0}")]
    Result(serde_json::Error),
    #[error("procedure {0:?} is not one the report knows")]
    UnknownProcedure(String),
}

/// Read one document; the reason when it cannot be read.
pub fn read_doc(path: &Path) -> Result<DocView, DocError> {
    parse_doc(&std::fs::read_to_string(path).map_err(DocError::Io)?)
}

/// A document's text as the report reads it (what [`read_doc`] does after reading the file).
pub fn parse_doc(text: &str) -> Result<DocView, DocError> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        if e.is_eof() {
            DocError::Truncated {
                line: e.line(),
                column: e.column(),
            }
        } else {
            DocError::NotJson(e)
        }
    })?;
    let version = v.pointer("/meta/xlatperf_version").and_then(|x| x.as_str());
    if v.get("procedure").is_none() || version.is_none() {
        if v.get("parameter").is_some() && v.get("points").is_some() {
            return Err(DocError::Sweep);
        }
        return Err(DocError::NotAResult);
    }
    serde_json::from_value::<DocView>(v.clone()).map_err(|error| DocError::OtherFormat {
        version: version.unwrap_or("?").to_string(),
        error,
    })
}

/// The DUT's name when no campaign names it: the configuration file's stem.
fn dut_name(doc: &DocView, file: &Path) -> String {
    doc.meta
        .config
        .pointer("/source/file")
        .and_then(|f| f.as_str())
        .and_then(|f| Path::new(f).file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default())
}

/// Read `dir`: a campaign directory (with `campaign.json`) or a directory of result documents.
pub fn read(dir: &Path) -> Result<Inputs, ReadError> {
    let derr = |msg: String| ReadError::Dir {
        dir: dir.to_path_buf(),
        msg,
    };
    if !dir.is_dir() {
        return Err(derr("not a directory".into()));
    }
    let manifest = Manifest::read(dir).map_err(|e| derr(e.to_string()))?;
    let mut inputs = Inputs {
        dirs: vec![dir.to_path_buf()],
        ..Inputs::default()
    };
    let rel = |p: &Path| p.strip_prefix(dir).unwrap_or(p).display().to_string();
    match &manifest {
        Some(m) => {
            for r in m.runs.iter().filter(|r| r.status == Status::Done) {
                let path = dir.join(&r.file);
                match read_doc(&path) {
                    Ok(doc) => inputs.sources.push(Source {
                        file: r.file.clone(),
                        origin: dir.to_path_buf(),
                        run: Some(r.clone()),
                        dut: r.test.clone(),
                        variant: r
                            .axes
                            .iter()
                            .filter(|(k, _)| k.as_str() != "frame-sizes" && k.as_str() != "frame-size")
                            .map(|(k, v)| format!("{k}={v}"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        doc,
                    }),
                    Err(why) => inputs.unread.push((r.file.clone(), why.to_string())),
                }
            }
        }
        None => {
            let mut files = Vec::new();
            json_files(dir, &mut files, 0);
            if files.is_empty() {
                return Err(derr("no xlatperf results in it (no *.json files, no campaign.json)".into()));
            }
            for f in files {
                match read_doc(&f) {
                    Ok(doc) => inputs.sources.push(Source {
                        file: rel(&f),
                        origin: dir.to_path_buf(),
                        run: None,
                        dut: dut_name(&doc, &f),
                        variant: String::new(),
                        doc,
                    }),
                    Err(why) => inputs.unread.push((rel(&f), why.to_string())),
                }
            }
        }
    }
    inputs.manifest = manifest;
    if inputs.sources.is_empty()
        && inputs
            .manifest
            .as_ref()
            .is_none_or(|m| !m.runs.is_empty() && m.runs.iter().all(|r| r.status == Status::Pending))
    {
        let why: Vec<String> = inputs.unread.iter().map(|(f, w)| format!("{f}: {w}")).collect();
        return Err(derr(if why.is_empty() {
            "no finished runs yet".into()
        } else {
            format!("none of its results could be read:\n  {}", why.join("\n  "))
        }));
    }
    Ok(inputs)
}

/// Read several campaign directories of one plan into one report: its shards (`campaign
/// --shard K/N` on several testbeds), or the same campaign run again. Refused: a directory that
/// is not a campaign's, directories of different plans (their `plan.toml` copies differ), and
/// shards of different partitions (K/2 beside K/3 overlap). One directory is [`read`].
pub fn read_all(dirs: &[PathBuf]) -> Result<Inputs, ReadError> {
    let Some(first) = dirs.first() else {
        return Err(ReadError::Dir {
            dir: PathBuf::from("."),
            msg: "no directory given".into(),
        });
    };
    if dirs.len() == 1 {
        let mut one = read(first)?;
        one.missing_shards = missing_shards(&[one.manifest.as_ref().and_then(|m| m.shard)]);
        return Ok(one);
    }
    let mut merged = Inputs {
        dirs: dirs.to_vec(),
        ..Inputs::default()
    };
    let mut plan: Option<(PathBuf, String)> = None;
    let mut counts: Option<(PathBuf, u32)> = None;
    let mut shards = Vec::new();
    for dir in dirs {
        let derr = |msg: String| ReadError::Dir { dir: dir.clone(), msg };
        let copy = dir.join(crate::manifest::PLAN_COPY);
        if Manifest::read(dir).map_err(|e| derr(e.to_string()))?.is_none() {
            return Err(derr(
                "not a campaign directory (no campaign.json): only campaigns' directories merge".into(),
            ));
        }
        let text = std::fs::read_to_string(&copy).map_err(|e| derr(format!("cannot read {}: {e}", copy.display())))?;
        same_as_first(&mut plan, dir, text, |first, _| {
            format!("made from another plan than {first} (their plan.toml differ): only one plan's directories merge")
        })?;
        let one = read(dir)?;
        let m = one
            .manifest
            .ok_or_else(|| derr("its campaign.json went away while it was read".into()))?;
        let n = m.shard.map_or(1, |s| s.count);
        shards.push(m.shard);
        same_as_first(&mut counts, dir, n, |first, c| {
            format!("a part of {n} of the plan, and {first} a part of {c}: shards of different --shard N overlap")
        })?;
        let name = dir.display().to_string();
        for mut s in one.sources {
            s.file = format!("{name}/{}", s.file);
            merged.sources.push(s);
        }
        merged
            .unread
            .extend(one.unread.into_iter().map(|(f, why)| (format!("{name}/{f}"), why)));
        merged.manifest = Some(match merged.manifest.take() {
            None => Manifest { shard: None, ..m },
            Some(mut all) => {
                all.complete &= m.complete;
                all.sessions.extend(m.sessions);
                all.runs.extend(m.runs);
                all
            }
        });
    }
    if let Some(m) = &mut merged.manifest {
        // In the plan's order, as one campaign would list them (ids begin with their number).
        m.runs.sort_by(|a, b| a.id.cmp(&b.id));
    }
    merged.missing_shards = missing_shards(&shards);
    Ok(merged)
}

/// Keep the first directory's `value` in `first`; an error naming `dir` (the message from the
/// first directory's name and value) when a later one's differs.
fn same_as_first<T: PartialEq>(
    first: &mut Option<(PathBuf, T)>,
    dir: &Path,
    value: T,
    differ: impl FnOnce(String, &T) -> String,
) -> Result<(), ReadError> {
    match first {
        Some((d, v)) if *v != value => Err(ReadError::Dir {
            dir: dir.to_path_buf(),
            msg: differ(d.display().to_string(), v),
        }),
        Some(_) => Ok(()),
        None => {
            *first = Some((dir.to_path_buf(), value));
            Ok(())
        }
    }
}

/// The shards of a plan of `count` parts that none of `given` is: what a merged report lacks.
fn missing_shards(given: &[Option<Shard>]) -> Vec<Shard> {
    let Some(count) = given.iter().flatten().map(|s| s.count).next() else {
        return Vec::new();
    };
    (1..=count)
        .filter(|k| !given.iter().flatten().any(|s| s.index == *k))
        .map(|index| Shard { index, count })
        .collect()
}
