//! Where output goes: files written atomically (to FILE.tmp, then renamed) so that a failure
//! never leaves a half-written file, `--json FILE` or `-` for standard output ([`JsonTo`]: the
//! same on every command), and plots as SVG or PNG. What is written (text, JSON, CSV, SVG) is
//! made by the results crate (`xlat_results::output`, `text`, `plot`).

use anyhow::{bail, Context, Result};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Where `--json` writes: FILE, or `-` for standard output. Every command takes it the same
/// way; with `-`, the JSON replaces the human text on standard output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonTo {
    Stdout,
    File(PathBuf),
}

/// The value parser of `--json`.
pub fn parse_json_to(s: &str) -> Result<JsonTo, xlat_results::ValueError> {
    match s {
        "" => Err(xlat_results::ValueError::form(s, "a file name, or - for standard output")),
        "-" => Ok(JsonTo::Stdout),
        _ => Ok(JsonTo::File(PathBuf::from(s))),
    }
}

impl JsonTo {
    pub fn is_file(&self) -> bool {
        matches!(self, JsonTo::File(_))
    }

    /// Fail early (before any trial) if the file cannot be written.
    pub fn check(&self) -> Result<()> {
        match self {
            JsonTo::Stdout => Ok(()),
            JsonTo::File(p) => check_writable("--json", p),
        }
    }

    /// Write `json` (and a newline) to the file, atomically, or to standard output.
    pub fn write(&self, json: &str) -> Result<()> {
        match self {
            JsonTo::Stdout => {
                let mut out = std::io::stdout().lock();
                writeln!(out, "{json}")
                    .and_then(|_| out.flush())
                    .context("writing JSON to standard output")
            }
            JsonTo::File(p) => write_atomic(p, format!("{json}\n").as_bytes()),
        }
    }
}

impl std::fmt::Display for JsonTo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JsonTo::Stdout => f.write_str("standard output"),
            JsonTo::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// Write `contents` to `path` atomically (`xlat_config::files::write_atomic`: a temporary file
/// of its own beside it, renamed over it): readers see the old file or the new one, never a part.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    xlat_config::files::write_atomic(path, contents).with_context(|| format!("writing {}", path.display()))
}

/// Fail early (before any trial) if `path` cannot be written: its directory must exist.
pub fn check_writable(option: &str, path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        bail!("{option} {}: the directory {} does not exist", path.display(), dir.display());
    }
    if path.is_dir() {
        bail!("{option} {}: is a directory", path.display());
    }
    Ok(())
}

/// The format of a plot file, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlotFormat {
    Svg,
    /// Drawn as SVG and converted by `rsvg-convert`.
    Png,
}

/// Check `--plot FILE` before anything runs.
pub fn plot_format(path: &Path) -> Result<PlotFormat> {
    check_writable("--plot", path)?;
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("svg") => Ok(PlotFormat::Svg),
        Some("png") if xlat_lab::have_tool("rsvg-convert") => Ok(PlotFormat::Png),
        Some("png") => bail!(
            "--plot {}: only SVG plots are built in; give a FILE.svg, or install rsvg-convert \
             (Debian package librsvg2-bin) to get PNG",
            path.display()
        ),
        _ => bail!(
            "--plot {}: give a file name ending in .svg (or .png, with rsvg-convert)",
            path.display()
        ),
    }
}

/// Write a plot as SVG, or as PNG through rsvg-convert.
pub fn write_plot(path: &Path, svg: &str) -> Result<()> {
    match plot_format(path)? {
        PlotFormat::Svg => write_atomic(path, svg.as_bytes()),
        PlotFormat::Png => {
            let src = xlat_config::files::temp_path(&path.with_extension("svg"));
            std::fs::write(&src, svg).with_context(|| format!("writing {}", src.display()))?;
            let tmp = xlat_config::files::temp_path(path);
            let out = std::process::Command::new("rsvg-convert")
                .arg("-f")
                .arg("png")
                .arg("-o")
                .arg(&tmp)
                .arg(&src)
                .output()
                .context("running rsvg-convert");
            let _ = std::fs::remove_file(&src);
            let out = out?;
            if !out.status.success() {
                let _ = std::fs::remove_file(&tmp);
                bail!("rsvg-convert failed: {}", String::from_utf8_lossy(&out.stderr).trim());
            }
            std::fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
        }
    }
}

pub use xlat_results::output::{rfc3339, rfc3339_now};

/// The git commit this binary was built from (build.rs), when known.
pub fn git_commit() -> Option<String> {
    option_env!("XLAT_GIT_COMMIT").filter(|s| !s.is_empty()).map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_and_plot_names() {
        let dir = std::env::temp_dir().join(format!("xlatperf-out-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a.json");
        write_atomic(&f, b"{}").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"{}");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary file left");
        assert_eq!(plot_format(&dir.join("p.svg")).unwrap(), PlotFormat::Svg);
        let e = plot_format(&dir.join("p.pdf")).unwrap_err().to_string();
        assert!(e.contains(".svg"), "{e}");
        if !xlat_lab::have_tool("rsvg-convert") {
            let e = plot_format(&dir.join("p.png")).unwrap_err().to_string();
            assert!(e.contains("only SVG"), "{e}");
        }
        let e = check_writable("--json", Path::new("/nonexistent-dir/x.json"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--json") && e.contains("does not exist"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn json_of_a_stateful_trial_keeps_the_preliminary_phase() {
        // What `xlatperf trial --json FILE` writes: the report as serde_json makes it.
        let report = xlat_engine::TrialReport {
            dut_hooks: Vec::new(),
            preliminary: Some(xlat_engine::PreliminaryReport {
                frames: 1000,
                rate: 500,
                sent: 1000,
                received: 999,
                foreground_received: 999,
                foreground_sent: 1000,
                valid_entries: 999,
                state_table: 1000,
                send_duration_s: 2.0,
                sending_valid: true,
                duplicate_tuples: Some(0),
                ..Default::default()
            }),
            invalid_reasons: vec!["Failed to fill state table (valid entries: 999, state table size: 1000)".into()],
            ..Default::default()
        };
        let dir = std::env::temp_dir().join(format!("xlatperf-out-pre-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("trial.json");
        JsonTo::File(f.clone()).write(&serde_json::to_string(&report).unwrap()).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
        let p = &v["preliminary"];
        assert_eq!((p["valid_entries"].as_u64(), p["state_table"].as_u64()), (Some(999), Some(1000)));
        assert_eq!(p["foreground_received"].as_u64(), Some(999));
        assert_eq!(p["duplicate_tuples"].as_u64(), Some(0));
        assert_eq!(p["sending_valid"].as_bool(), Some(true));
        assert!(v["forward"].is_null());
        let back: xlat_engine::TrialReport = serde_json::from_value(v).unwrap();
        assert_eq!(back, report);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn json_goes_to_a_file_or_to_standard_output() {
        assert_eq!(parse_json_to("-"), Ok(JsonTo::Stdout));
        assert_eq!(parse_json_to("r.json"), Ok(JsonTo::File(PathBuf::from("r.json"))));
        assert!(parse_json_to("").is_err());
        assert!(!JsonTo::Stdout.is_file());
        assert!(JsonTo::Stdout.check().is_ok());
        let e = JsonTo::File(PathBuf::from("/nonexistent-dir/x.json"))
            .check()
            .unwrap_err()
            .to_string();
        assert!(e.contains("--json") && e.contains("does not exist"), "{e}");
        assert_eq!(JsonTo::Stdout.to_string(), "standard output");
    }
}
