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
//! last), so an interrupted sweep keeps what it measured. The points, table, CSV and plot are
//! `xlat_results::sweep`'s, from each run's document read through its typed view.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use xlat_results::sweep::Sweep;
use xlat_results::Procedure;

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

/// Options that the sweep writes itself.
const OUTPUTS: [&str; 4] = ["--json", "--csv", "--plot", "--summary-csv"];

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
    args.extend(xlat_results::sweep::parameter_args(name, value));
    args.extend(["--json".to_string(), json.display().to_string()]);
    args
}

/// Run the sweep of `a`.
pub fn run(a: &SweepArgs) -> Result<()> {
    let (name, values) = xlat_results::sweep::parse_over(&a.over).context("--over")?;
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
    if Procedure::from_name(procedure).is_none() {
        bail!("sweep: {procedure:?} is not a procedure with results ({})", Procedure::commands());
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
    let mut sw = Sweep::new(name, procedure, values);
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
            write_outputs(&sw, false, json, csv)?;
            bail!("sweep: the run with {name} = {value} failed ({status}); the points before it are kept");
        }
        sw.add_run(value, &text.with_context(|| format!("reading the run's JSON {}", tmp.display()))?)?;
        write_outputs(&sw, false, json, csv)?;
    }
    write_outputs(&sw, true, json, csv)?;
    print!("{}", sw.table());
    if let Some(p) = plot {
        // The one plot writer: SVG, or PNG through rsvg-convert, or a clear refusal.
        crate::output::write_plot(p, &sw.plot_svg())?;
    }
    Ok(())
}

fn write_outputs(sw: &Sweep, complete: bool, json: Option<&Path>, csv: Option<&Path>) -> Result<()> {
    if let Some(path) = json {
        crate::output::write_atomic(path, sw.to_json(complete)?.as_bytes())?;
    }
    if let Some(path) = csv {
        crate::output::write_atomic(path, sw.to_csv().as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
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
