//! Scalability sweeps (seeds/001's tables: a rate against the number of connections): run a
//! procedure once per value of one parameter and report every point in one table, one JSON
//! document, one CSV and one plot.
//!
//! `xlatperf sweep --over connections=10k,100k,1M -- conn-rate -c lab.toml --max-rate 1M`
//! runs `xlatperf conn-rate ... --connections V` for each V; a parameter with a dot in its
//! name is a configuration key, given as `--set KEY=V`. `conn-rate --connections 10k,100k,1M`
//! (and teardown-rate's) is the same sweep. Each run is this program run again with its own
//! JSON file, so a run is exactly what the command alone would do; its table is shown as it
//! finishes, and the sweep's JSON is rewritten after every point (`complete: false` until the
//! last), so an interrupted sweep keeps what it measured.

use anyhow::{bail, Context, Result};
use clap::Args;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use xlat_bench::svg::{LinePlot, Series};
use xlat_bench::text::text_table;

/// `xlatperf sweep`.
#[derive(Args, Clone, Debug)]
pub struct SweepArgs {
    /// NAME=V1,V2,...: the parameter and its values; NAME is an option of the procedure without
    /// its dashes (connections, preliminary-frames, preliminary-rate, max-rate, ...) or a
    /// configuration key (stateful.preliminary_rate, given as --set KEY=V).
    #[arg(long, value_name = "NAME=V1,V2,...")]
    pub over: String,
    /// Write every point (and every run's whole JSON document) to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one CSV row per point and frame size to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write an SVG plot of the procedure's main figure against the parameter to FILE.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// The procedure and its arguments, after `--` (without --json, --csv, --plot: the
    /// sweep writes those).
    #[arg(last = true, required = true, value_name = "PROCEDURE ARGS")]
    pub command: Vec<String>,
}

/// One point: the procedure's figures (medians over its repetitions) at one value and frame size.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub value: String,
    pub frame_size: u64,
    /// Metric -> median over the repetitions.
    pub metrics: BTreeMap<String, f64>,
}

#[derive(Debug, Serialize)]
struct SweepDocument<'a> {
    sweep: &'a str,
    procedure: &'a str,
    parameter: &'a str,
    values: &'a [String],
    complete: bool,
    points: &'a [Point],
    /// Every run's JSON document, in order.
    runs: &'a [Value],
}

/// The procedures a sweep can run (those with JSON results).
const PROCEDURES: [&str; 10] = [
    "throughput",
    "frame-loss",
    "latency",
    "pdv",
    "b2b",
    "back-to-back",
    "recovery",
    "conn-rate",
    "conntrack-capacity",
    "teardown-rate",
];

/// Options that the sweep writes itself.
const OUTPUTS: [&str; 4] = ["--json", "--csv", "--plot", "--summary-csv"];

/// The main figure of each procedure's results: the y of the plot.
fn main_metric(procedure: &str) -> &'static str {
    match procedure {
        "throughput" => "throughput_fps",
        "conn-rate" => "conn_rate_cps",
        "teardown-rate" => "teardown_rate_cps",
        "conntrack-capacity" => "capacity_connections",
        "b2b" | "back-to-back" => "average_frames",
        "recovery" => "recovery_time_s",
        _ => "",
    }
}

/// Split `NAME=V1,V2,...`.
pub fn parse_over(over: &str) -> Result<(String, Vec<String>)> {
    let Some((name, values)) = over.split_once('=') else {
        bail!("--over {over:?}: give NAME=V1,V2,... (e.g. connections=10k,100k,1M)");
    };
    let name = name.trim().trim_start_matches('-').to_string();
    let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect();
    if name.is_empty() || values.is_empty() {
        bail!("--over {over:?}: give NAME=V1,V2,... (e.g. connections=10k,100k,1M)");
    }
    Ok((name, values))
}

/// `command` without the option `name` (`--name V` or `--name=V`); the values it had.
pub fn strip_option(command: &[String], name: &str) -> (Vec<String>, Vec<String>) {
    let (mut rest, mut found) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < command.len() {
        let a = &command[i];
        if a == name {
            if let Some(v) = command.get(i + 1) {
                found.push(v.clone());
            }
            i += 2;
            continue;
        }
        if let Some(v) = a.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
            found.push(v.to_string());
        } else {
            rest.push(a.clone());
        }
        i += 1;
    }
    (rest, found)
}

/// The arguments of one run: `command` with the parameter set to `value`.
fn run_args(command: &[String], name: &str, value: &str, json: &Path) -> Vec<String> {
    let mut args = command.to_vec();
    if name.contains('.') {
        args.extend(["--set".to_string(), format!("{name}={value}")]);
    } else {
        args.extend([format!("--{name}"), value.to_string()]);
    }
    args.extend(["--json".to_string(), json.display().to_string()]);
    args
}

/// Run the sweep of `a`.
pub fn run(a: &SweepArgs) -> Result<()> {
    let (name, values) = parse_over(&a.over)?;
    sweep(&name, &values, &a.command, a.json.as_deref(), a.csv.as_deref(), a.plot.as_deref())
}

/// Run `command` (a procedure and its arguments) once per value of `name`.
pub fn sweep(
    name: &str,
    values: &[String],
    command: &[String],
    json: Option<&Path>,
    csv: Option<&Path>,
    plot: Option<&Path>,
) -> Result<()> {
    let Some(procedure) = command.first() else {
        bail!("sweep: give the procedure to run after --, e.g. -- conn-rate -c lab.toml --max-rate 1M");
    };
    if !PROCEDURES.contains(&procedure.as_str()) {
        bail!("sweep: {procedure:?} is not a procedure with results ({})", PROCEDURES.join(", "));
    }
    for o in OUTPUTS {
        if !strip_option(command, o).1.is_empty() || command.iter().any(|x| x == o) {
            bail!("sweep: give {o} to the sweep, not to the procedure (it writes every point into one file)");
        }
    }
    // Every output checked before hours of trials: the plot's format too.
    for (o, p) in [("--json", json), ("--csv", csv)] {
        if let Some(p) = p {
            crate::output::check_writable(o, p)?;
        }
    }
    if let Some(p) = plot {
        crate::output::plot_format(p)?;
    }
    let option = format!("--{name}");
    if !name.contains('.') && command.iter().any(|x| *x == option || x.starts_with(&format!("{option}="))) {
        bail!("sweep: {option} is swept; leave it out of the procedure's arguments");
    }
    let exe = std::env::current_exe().context("finding this program's path")?;
    let tmp = std::env::temp_dir().join(format!("xlatperf-sweep-{}.json", std::process::id()));
    let mut points: Vec<Point> = Vec::new();
    let mut runs: Vec<Value> = Vec::new();
    for (i, value) in values.iter().enumerate() {
        eprintln!("sweep: {name} = {value} ({} of {})", i + 1, values.len());
        let args = run_args(command, name, value, &tmp);
        let status = Command::new(&exe)
            .args(&args)
            .stdin(Stdio::null())
            .status()
            .with_context(|| format!("running {} {}", exe.display(), args.join(" ")))?;
        let text = std::fs::read_to_string(&tmp);
        let _ = std::fs::remove_file(&tmp);
        if !status.success() {
            write_outputs(name, procedure, values, false, &points, &runs, json, csv)?;
            bail!("sweep: the run with {name} = {value} failed ({status}); the points before it are kept");
        }
        let doc: Value =
            serde_json::from_str(&text.with_context(|| format!("reading the run's JSON {}", tmp.display()))?).context("the run's JSON")?;
        points.extend(points_of(&doc, value));
        runs.push(doc);
        write_outputs(name, procedure, values, false, &points, &runs, json, csv)?;
    }
    write_outputs(name, procedure, values, true, &points, &runs, json, csv)?;
    print!("{}", human(name, procedure, &points));
    if let Some(p) = plot {
        let svg = plot_svg(name, procedure, &points);
        // The one plot writer: SVG, or PNG through rsvg-convert, or a clear refusal.
        crate::output::write_plot(p, &svg)?;
    }
    Ok(())
}

/// The points of one run's JSON document (one per frame size).
fn points_of(doc: &Value, value: &str) -> Vec<Point> {
    let mut out = Vec::new();
    for r in doc["results"].as_array().into_iter().flatten() {
        let mut metrics = BTreeMap::new();
        for (k, s) in r["result"]["summaries"].as_object().into_iter().flatten() {
            if let Some(m) = s["median"].as_f64() {
                metrics.insert(k.clone(), m);
            }
        }
        out.push(Point {
            value: value.to_string(),
            frame_size: r["frame_size"].as_u64().unwrap_or(0),
            metrics,
        });
    }
    out
}

/// Every metric any point has, the procedure's main one first.
fn columns(procedure: &str, points: &[Point]) -> Vec<String> {
    let main = main_metric(procedure);
    let mut cols: Vec<String> = Vec::new();
    if points.iter().any(|p| p.metrics.contains_key(main)) {
        cols.push(main.to_string());
    }
    for p in points {
        for k in p.metrics.keys() {
            if !cols.contains(k) {
                cols.push(k.clone());
            }
        }
    }
    cols
}

fn figure(v: Option<&f64>) -> String {
    match v {
        Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => xlat_bench::text::group(*x as u64),
        Some(x) => format!("{x:.6}"),
        None => "-".into(),
    }
}

/// The sweep's table: one row per value and frame size.
fn human(name: &str, procedure: &str, points: &[Point]) -> String {
    let cols = columns(procedure, points);
    let mut headers: Vec<&str> = vec![name, "frame size"];
    headers.extend(cols.iter().map(String::as_str));
    let rows: Vec<Vec<String>> = points
        .iter()
        .map(|p| {
            let mut row = vec![p.value.clone(), p.frame_size.to_string()];
            row.extend(cols.iter().map(|c| figure(p.metrics.get(c))));
            row
        })
        .collect();
    format!(
        "\nSweep of {procedure} over {name} (medians over the repetitions)\n{}",
        text_table(&headers, &rows)
    )
}

#[allow(clippy::too_many_arguments)]
fn write_outputs(
    name: &str,
    procedure: &str,
    values: &[String],
    complete: bool,
    points: &[Point],
    runs: &[Value],
    json: Option<&Path>,
    csv: Option<&Path>,
) -> Result<()> {
    if let Some(path) = json {
        let doc = SweepDocument {
            sweep: "xlatperf sweep",
            procedure,
            parameter: name,
            values,
            complete,
            points,
            runs,
        };
        crate::output::write_atomic(path, (serde_json::to_string_pretty(&doc)? + "\n").as_bytes())?;
    }
    if let Some(path) = csv {
        let cols = columns(procedure, points);
        let mut s = format!("{},frame_size", xlat_bench::output::csv_field(name));
        for c in &cols {
            s.push(',');
            s.push_str(c);
        }
        s.push('\n');
        for p in points {
            s.push_str(&format!("{},{}", xlat_bench::output::csv_field(&p.value), p.frame_size));
            for c in &cols {
                s.push(',');
                if let Some(v) = p.metrics.get(c) {
                    s.push_str(&v.to_string());
                }
            }
            s.push('\n');
        }
        crate::output::write_atomic(path, s.as_bytes())?;
    }
    Ok(())
}

/// A number written the way the options take it ("10k", "1.5M", "4194304").
fn numeric(v: &str) -> Option<f64> {
    crate::args::parse_number(v).ok()
}

/// The main metric against the parameter, one line per frame size (the parameter's values in
/// order when they are not numbers).
fn plot_svg(name: &str, procedure: &str, points: &[Point]) -> String {
    let cols = columns(procedure, points);
    let metric = cols.first().cloned().unwrap_or_default();
    let all_numeric = points.iter().all(|p| numeric(&p.value).is_some());
    let mut order: Vec<&str> = Vec::new();
    for p in points {
        if !order.contains(&p.value.as_str()) {
            order.push(&p.value);
        }
    }
    let mut by_size: BTreeMap<u64, Vec<(f64, f64)>> = BTreeMap::new();
    for p in points {
        let x = if all_numeric {
            numeric(&p.value).unwrap_or(0.0)
        } else {
            order.iter().position(|v| *v == p.value).unwrap_or(0) as f64
        };
        if let Some(y) = p.metrics.get(&metric).filter(|y| y.is_finite()) {
            by_size.entry(p.frame_size).or_default().push((x, *y));
        }
    }
    let series = by_size
        .into_iter()
        .map(|(size, mut pts)| {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series {
                label: format!("{size} B"),
                points: pts,
                error_bars: None,
                step: false,
            }
        })
        .collect();
    LinePlot {
        title: format!("{procedure}: {metric} against {name}"),
        x_label: if all_numeric {
            name.to_string()
        } else {
            format!("{name} ({})", order.join(", "))
        },
        y_label: metric,
        series,
        y_range: None,
    }
    .to_svg()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn over_is_a_name_and_values() {
        assert_eq!(
            parse_over("connections=10k, 100k,1M").unwrap(),
            ("connections".to_string(), s(&["10k", "100k", "1M"]))
        );
        assert_eq!(parse_over("--max-rate=1").unwrap().0, "max-rate");
        for bad in ["connections", "=1,2", "connections=", "connections=,"] {
            assert!(parse_over(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_option_is_stripped_in_both_spellings() {
        let c = s(&["conn-rate", "--connections", "1,2", "-c", "x.toml", "--connections=3"]);
        assert_eq!(
            strip_option(&c, "--connections"),
            (s(&["conn-rate", "-c", "x.toml"]), s(&["1,2", "3"]))
        );
    }

    #[test]
    fn a_run_sets_an_option_or_a_configuration_key() {
        let c = s(&["conn-rate", "-c", "x.toml"]);
        let j = Path::new("/tmp/j.json");
        assert_eq!(
            run_args(&c, "connections", "10k", j),
            s(&["conn-rate", "-c", "x.toml", "--connections", "10k", "--json", "/tmp/j.json"])
        );
        assert_eq!(
            run_args(&c, "stateful.preliminary_rate", "5000", j)[3..5],
            s(&["--set", "stateful.preliminary_rate=5000"])[..]
        );
    }

    #[test]
    fn points_table_csv_and_plot() {
        let doc: Value = serde_json::from_str(
            r#"{"results":[{"frame_size":84,"result":{"runs":[],"summaries":{"conn_rate_cps":{"median":30000.0}}}}]}"#,
        )
        .unwrap();
        let mut points = points_of(&doc, "10k");
        points.extend(points_of(&doc, "100k"));
        assert_eq!(points.len(), 2);
        assert_eq!(points[1].metrics["conn_rate_cps"], 30_000.0);
        let t = human("connections", "conn-rate", &points);
        assert!(t.contains("conn_rate_cps") && t.contains("30,000") && t.contains("100k"), "{t}");
        let svg = plot_svg("connections", "conn-rate", &points);
        assert!(svg.starts_with("<svg") || svg.contains("<svg"), "{svg}");
        assert!(svg.contains("conn_rate_cps against connections"), "{svg}");
    }

    #[test]
    fn the_sweep_refuses_what_it_cannot_do() {
        let e = sweep("connections", &s(&["1"]), &s(&["trial", "-c", "x"]), None, None, None).unwrap_err();
        assert!(e.to_string().contains("not a procedure"), "{e}");
        let e = sweep("connections", &s(&["1"]), &s(&["conn-rate", "--json", "x"]), None, None, None).unwrap_err();
        assert!(e.to_string().contains("give --json to the sweep"), "{e}");
        let e = sweep(
            "connections",
            &s(&["1"]),
            &s(&["conn-rate", "--connections", "5"]),
            None,
            None,
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("is swept"), "{e}");
    }
}
