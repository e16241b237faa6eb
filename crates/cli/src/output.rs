//! Printing results: a trial's siitperf lines (which scripts grep) and human summary; the JSON
//! document, CSV files and plots of the procedures, each written atomically (to FILE.tmp, then
//! renamed) so that a failure never leaves a half-written file.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use xlat_bench::b2b::BackToBackResult;
use xlat_bench::delay::DelayRecorder;
use xlat_bench::output::{group, text_table, SUMMARY_CSV_HEADER};
use xlat_bench::recovery::RecoveryResult;
use xlat_bench::svg::{self, LinePlot, Series};
use xlat_bench::{BenchResult, FrameLossResult, LatencyResult, Repeated, RunMeta, ThroughputResult, TrialRecord};
use xlat_engine::TrialReport;

use crate::pdv::PdvResult;

/// The lines siitperf-tp prints, in its order, and a line with `invalid` when the trial is.
pub fn siitperf_lines(r: &TrialReport) -> Vec<String> {
    let mut v = Vec::new();
    for reason in &r.invalid_reasons {
        v.push(format!("Warning: {reason}."));
    }
    for (name, d) in r.directions() {
        let title = if name == "forward" { "Forward" } else { "Reverse" };
        v.push(format!("{title} frames sent: {}", d.sent));
        v.push(format!("{title} frames received: {}", d.received));
    }
    v
}

/// A short human summary of one trial.
pub fn human(r: &TrialReport) -> String {
    let mut s = String::new();
    for (name, d) in r.directions() {
        let loss = if d.sent > 0 { 100.0 * d.lost as f64 / d.sent as f64 } else { 0.0 };
        s.push_str(&format!(
            "{name:<8} sent {:>12}  received {:>12}  lost {:>10} ({loss:.4} %)  tester dropped: tx {}, rx {}  dup {:>6}  reordered {:>6}  rate {:>12.1}/s  max lag {:>9.1} us\n",
            d.sent,
            d.received,
            d.lost,
            d.tester_tx_dropped,
            d.tester_rx_dropped,
            d.duplicates,
            d.reordered,
            d.achieved_rate,
            d.max_lag_ns as f64 / 1000.0
        ));
        if d.unexpected > 0 {
            s.push_str(&format!(
                "{name:<8} {} test frames not of this trial (foreign or late)\n",
                d.unexpected
            ));
        }
    }
    if r.valid {
        let verdict = if r.total_lost() == 0 { "no loss" } else { "loss" };
        s.push_str(&format!("trial valid: {verdict}\n"));
    } else {
        for reason in &r.invalid_reasons {
            s.push_str(&format!("trial INVALID: {reason}\n"));
        }
    }
    s
}

/// The results of one frame size: every repetition and the summary over them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeResult<T> {
    pub frame_size: usize,
    pub result: Repeated<T>,
}

/// The JSON document of a procedure command: who ran what with which configuration, and every
/// trial of every repetition of every frame size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document<T> {
    /// "throughput", "frame-loss", "latency", "pdv", "back-to-back", "recovery".
    pub procedure: String,
    /// False while the command is still running (the file is rewritten after every finished
    /// repetition) or when it stopped early.
    pub complete: bool,
    pub meta: RunMeta,
    pub frame_sizes: Vec<usize>,
    /// Every finished repetition (`result.runs`) of every frame size begun.
    pub results: Vec<SizeResult<T>>,
    /// The command was stopped by Ctrl-C: `results` holds the finished repetitions and
    /// `interrupted_run` the trials of the one in progress.
    #[serde(default)]
    pub interrupted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted_run: Option<InterruptedRun>,
}

/// The repetition that Ctrl-C stopped: every trial it had done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterruptedRun {
    pub frame_size: usize,
    /// From 0, as in the trials CSV.
    pub repetition: usize,
    pub trials: Vec<TrialRecord>,
}

/// Write `contents` to `path` through `path.tmp` and a rename: readers see the old file or the
/// new one, never a part.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, contents).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
    Ok(())
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

fn have_tool(tool: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
        .unwrap_or(false)
}

/// Check `--plot FILE` before anything runs.
pub fn plot_format(path: &Path) -> Result<PlotFormat> {
    check_writable("--plot", path)?;
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("svg") => Ok(PlotFormat::Svg),
        Some("png") if have_tool("rsvg-convert") => Ok(PlotFormat::Png),
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
            let mut src = path.as_os_str().to_owned();
            src.push(".svg.tmp");
            let src = PathBuf::from(src);
            std::fs::write(&src, svg).with_context(|| format!("writing {}", src.display()))?;
            let mut tmp = path.as_os_str().to_owned();
            tmp.push(".tmp");
            let tmp = PathBuf::from(tmp);
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

/// Now as RFC 3339 UTC ("2025-01-31T12:34:56Z").
pub fn rfc3339_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    rfc3339(secs)
}

/// Seconds since 1970 as RFC 3339 UTC.
pub fn rfc3339(secs: u64) -> String {
    // Howard Hinnant's civil_from_days.
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, (rem / 60) % 60, rem % 60)
}

/// One CSV row per trial of every repetition of every frame size, then those of an
/// interrupted repetition.
pub fn trials_csv<T: BenchResult>(procedure: &str, results: &[SizeResult<T>], interrupted: Option<&InterruptedRun>) -> String {
    let mut out = format!("{}\n", xlat_bench::output::TRIALS_CSV_HEADER);
    for r in results {
        out.extend(xlat_bench::trials_csv(&r.result).split_inclusive('\n').skip(1));
    }
    if let Some(i) = interrupted {
        for t in &i.trials {
            out.push_str(&xlat_bench::output::trial_csv_row(procedure, i.repetition, t));
        }
    }
    out
}

/// One CSV row per summarised metric and frame size.
pub fn summary_csv<T: BenchResult>(results: &[SizeResult<T>]) -> String {
    let mut out = format!("frame_size,{SUMMARY_CSV_HEADER}\n");
    for r in results {
        for line in xlat_bench::summary_csv(&r.result).lines().skip(1) {
            let _ = writeln!(out, "{},{line}", r.frame_size);
        }
    }
    out
}

/// What a procedure run collected beside its result, for plots.
#[derive(Debug, Clone, Default)]
pub struct Collected {
    /// Latency samples (ns, `u64::MAX` lost) by frame size and direction, over every valid trial.
    pub latency: BTreeMap<(usize, &'static str), Vec<u64>>,
}

/// What the CLI adds to a procedure result: its plot and its one-line summary.
pub trait CliResult: BenchResult + Serialize + Clone {
    /// The SVG plot of the results of every frame size; `None` when there is nothing to draw.
    fn plot(results: &[SizeResult<Self>], collected: &Collected) -> Option<String>;
    /// "84 B: 123,456 fps" and the like, for the progress display and the overview.
    fn headline(&self) -> String;
}

/// A metric against frame size: median with min-max bars over the repetitions.
fn metric_vs_size<T: BenchResult>(title: &str, y_label: &str, results: &[SizeResult<T>], metric: &str) -> Option<String> {
    let mut points = Vec::new();
    let mut bars = Vec::new();
    for r in results {
        if let Some(s) = r.result.summaries.get(metric) {
            if s.median.is_finite() {
                points.push((r.frame_size as f64, s.median));
                bars.push((s.min, if s.max.is_finite() { s.max } else { s.median }));
            }
        }
    }
    if points.is_empty() {
        return None;
    }
    Some(
        LinePlot {
            title: title.into(),
            x_label: "frame size (bytes)".into(),
            y_label: y_label.into(),
            series: vec![Series {
                label: "median, min-max".into(),
                points,
                error_bars: Some(bars),
                step: false,
            }],
            y_range: None,
        }
        .to_svg(),
    )
}

impl CliResult for ThroughputResult {
    fn plot(results: &[SizeResult<Self>], _: &Collected) -> Option<String> {
        let pts: Vec<(usize, f64, f64, f64)> = results
            .iter()
            .filter_map(|r| {
                r.result
                    .summaries
                    .get("throughput_fps")
                    .map(|s| (r.frame_size, s.median, s.min, s.max))
            })
            .collect();
        (!pts.is_empty()).then(|| svg::throughput_vs_frame_size("Throughput against frame size", &pts))
    }

    fn headline(&self) -> String {
        let mut s = format!("{} B: {} fps per direction", self.frame_size, group(self.throughput));
        if let (true, Some(b)) = (self.bounded_by_tester, self.tester_bound) {
            let _ = write!(s, " (bounded by the tester at {} frames/s)", group(b));
        }
        s
    }
}

impl CliResult for FrameLossResult {
    fn plot(results: &[SizeResult<Self>], _: &Collected) -> Option<String> {
        if let [one] = results {
            if let [run] = one.result.runs.as_slice() {
                return Some(svg::frame_loss_curve(run));
            }
        }
        let mut series = Vec::new();
        for r in results {
            for (rep, run) in r.result.runs.iter().enumerate() {
                for (name, fwd) in [("forward", true), ("reverse", false)] {
                    let mut pts: Vec<(f64, f64)> = run
                        .points
                        .iter()
                        .filter_map(|p| if fwd { p.forward_loss_percent } else { p.reverse_loss_percent }.map(|l| (p.percent_of_max, l)))
                        .collect();
                    if pts.is_empty() {
                        continue;
                    }
                    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                    let label = if r.result.runs.len() > 1 {
                        format!("{} B {name} run {}", r.frame_size, rep + 1)
                    } else {
                        format!("{} B {name}", r.frame_size)
                    };
                    series.push(Series {
                        label,
                        points: pts,
                        error_bars: None,
                        step: false,
                    });
                }
            }
        }
        Some(
            LinePlot {
                title: "Frame loss rate".into(),
                x_label: "offered rate (% of maximum)".into(),
                y_label: "frame loss (%)".into(),
                series,
                y_range: None,
            }
            .to_svg(),
        )
    }

    fn headline(&self) -> String {
        let worst = self.points.iter().map(|p| p.max_loss_percent()).fold(0.0, f64::max);
        format!(
            "{} B: {} rates from {} fps, largest loss {worst:.4} %",
            self.frame_size,
            self.points.len(),
            group(self.points.first().map_or(0, |p| p.rate))
        )
    }
}

impl CliResult for LatencyResult {
    fn plot(_results: &[SizeResult<Self>], collected: &Collected) -> Option<String> {
        if collected.latency.is_empty() {
            return None;
        }
        let recorders: Vec<(String, DelayRecorder)> = collected
            .latency
            .iter()
            .map(|((size, dir), v)| (format!("{size} B {dir}"), DelayRecorder::from_samples(v)))
            .collect();
        let refs: Vec<(&str, &DelayRecorder)> = recorders.iter().map(|(l, r)| (l.as_str(), r)).collect();
        Some(svg::delay_cdf("Latency of the tagged frames (CDF)", &refs))
    }

    fn headline(&self) -> String {
        let mut s = format!("{} B:", self.frame_size);
        for (name, sum) in [("forward", &self.forward), ("reverse", &self.reverse)] {
            if let Some(sum) = sum {
                let _ = write!(s, " {name} TL {} WCL {}", sum.typical, sum.worst_case);
            }
        }
        s
    }
}

impl CliResult for PdvResult {
    fn plot(results: &[SizeResult<Self>], _: &Collected) -> Option<String> {
        let mut series = Vec::new();
        for r in results {
            let Some(run) = r.result.runs.first().and_then(|x| x.runs.first()) else {
                continue;
            };
            for (name, d) in [("forward", &run.forward), ("reverse", &run.reverse)] {
                let Some(cdf) = d.as_ref().and_then(|d| d.report.as_ref()).map(|p| &p.cdf) else {
                    continue;
                };
                if cdf.is_empty() {
                    continue;
                }
                series.push(Series {
                    label: format!("{} B {name}", r.frame_size),
                    points: cdf.iter().map(|&(ns, f)| (ns as f64 / 1.0e6, f)).collect(),
                    error_bars: None,
                    step: true,
                });
            }
        }
        if series.is_empty() {
            return None;
        }
        Some(
            LinePlot {
                title: "One-way delay of every frame (CDF, first trial)".into(),
                x_label: "delay (ms)".into(),
                y_label: "fraction of frames".into(),
                series,
                y_range: Some((0.0, 1.0)),
            }
            .to_svg(),
        )
    }

    fn headline(&self) -> String {
        let mut s = format!("{} B:", self.frame_size);
        if self.frame_timeout_ms > 0 {
            let passed = self.runs.iter().filter(|r| r.pass).count();
            let _ = write!(s, " {passed} of {} trials without loss (late frames lost)", self.runs.len());
        }
        for (name, sum) in [("forward", &self.forward), ("reverse", &self.reverse)] {
            if let Some(p) = sum.as_ref().and_then(|x| x.pdv) {
                let _ = write!(s, " {name} PDV {p}");
            }
        }
        s
    }
}

impl CliResult for BackToBackResult {
    fn plot(results: &[SizeResult<Self>], _: &Collected) -> Option<String> {
        metric_vs_size(
            "Back-to-back frames against frame size",
            "back-to-back frames",
            results,
            "average_frames",
        )
    }

    fn headline(&self) -> String {
        format!(
            "{} B: {:.1} back-to-back frames on average (min {}, max {})",
            self.frame_size,
            self.average_frames,
            group(self.min_frames),
            group(self.max_frames)
        )
    }
}

impl CliResult for RecoveryResult {
    fn plot(results: &[SizeResult<Self>], _: &Collected) -> Option<String> {
        metric_vs_size(
            "System recovery time against frame size",
            "recovery time (s)",
            results,
            "recovery_time_s",
        )
    }

    fn headline(&self) -> String {
        match self.recovery_time_s {
            Some(t) => format!("{} B: recovery time {:.3} ms", self.frame_size, t * 1000.0),
            None => format!("{} B: no frame lost, the DUT was not overloaded", self.frame_size),
        }
    }
}

/// The human output of a command: each frame size's tables, then, for several sizes, an
/// overview of the summaries.
pub fn human_results<T: CliResult>(results: &[SizeResult<T>]) -> String {
    let mut s = String::new();
    for r in results {
        if results.len() > 1 {
            let _ = writeln!(s, "##### frame size {} #####", r.frame_size);
        }
        s.push_str(&r.result.human_table());
    }
    if results.len() > 1 {
        let rows: Vec<Vec<String>> = results
            .iter()
            .flat_map(|r| {
                r.result.summaries.iter().map(move |(k, v)| {
                    vec![
                        r.frame_size.to_string(),
                        k.clone(),
                        format!("{}", v.median),
                        format!("{}", v.min),
                        format!("{}", v.max),
                        v.dispersion_percent.map_or("-".into(), |d| format!("{d:.2}")),
                    ]
                })
            })
            .collect();
        s.push_str("Overview\n");
        s.push_str(&text_table(
            &["frame size", "metric", "median", "min", "max", "dispersion %"],
            &rows,
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlat_engine::DirectionReport;

    #[test]
    fn siitperf_lines_and_invalid_word() {
        let mut r = TrialReport {
            valid: true,
            forward: Some(DirectionReport {
                sent: 10,
                received: 9,
                lost: 1,
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(siitperf_lines(&r), vec!["Forward frames sent: 10", "Forward frames received: 9"]);
        assert!(human(&r).contains("trial valid: loss"));
        assert!(
            human(&r).contains("lost          1 (10.0000 %)  tester dropped: tx 0, rx 0"),
            "{}",
            human(&r)
        );
        let f = r.forward.as_mut().unwrap();
        (f.tester_tx_dropped, f.tester_rx_dropped) = (3, 4);
        assert!(human(&r).contains("tester dropped: tx 3, rx 4"), "{}", human(&r));
        r.valid = false;
        r.invalid_reasons
            .push("Forward sending exceeded the 1.0000100000 seconds limit, the test is invalid".into());
        assert!(siitperf_lines(&r)[0].contains("invalid"));
        assert!(human(&r).contains("INVALID"));
    }

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_735_689_599), "2024-12-31T23:59:59Z");
    }

    #[test]
    fn atomic_write_and_plot_names() {
        let dir = std::env::temp_dir().join(format!("xlatperf-out-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a.json");
        write_atomic(&f, b"{}").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"{}");
        assert!(!dir.join("a.json.tmp").exists());
        assert_eq!(plot_format(&dir.join("p.svg")).unwrap(), PlotFormat::Svg);
        let e = plot_format(&dir.join("p.pdf")).unwrap_err().to_string();
        assert!(e.contains(".svg"), "{e}");
        if !have_tool("rsvg-convert") {
            let e = plot_format(&dir.join("p.png")).unwrap_err().to_string();
            assert!(e.contains("only SVG"), "{e}");
        }
        let e = check_writable("--json", Path::new("/nonexistent-dir/x.json"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--json") && e.contains("does not exist"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
