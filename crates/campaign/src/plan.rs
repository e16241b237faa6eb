//! A campaign's plan (`PLAN.toml`): the test descriptions (a TOML or siitperf.conf file, or a
//! lab topology brought up for them and down after), the procedures with their options, the
//! axes to vary and the repetitions; and its expansion into [`Run`]s, each one command of
//! xlatperf's.
//!
//! ```toml
//! [campaign]
//! name = "router4-small"
//! repetitions = 2               # every run this many times, each a run of its own
//! on_failure = "continue"       # or "stop"
//! axes = { frame-sizes = [84, 1518] }   # for every procedure
//!
//! [[test]]
//! name = "router4"
//! lab = "router4"               # or: config = "dut.toml" (relative to this file)
//!
//! [[procedure]]
//! command = "throughput"
//! args = ["--duration", "2", "--max-rate", "200k"]
//! axes = { "tester.backend" = ["afpacket", "afxdp"] }   # a key with a dot: --set KEY=V
//! tests = ["router4"]           # only on these tests (default: every test)
//! ```
//!
//! An axis is an option of the procedure without its dashes (`frame-sizes`, `connections`,
//! `rate`, ...) or a configuration key (given as `--set KEY=V`), as `xlatperf sweep --over`
//! takes it. Runs are ordered test by test, then repetition by repetition (a campaign cut
//! short has whole first repetitions rather than all repetitions of the first points), then
//! procedure by procedure, then over the axes (the last axis varying fastest).

use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The procedures a campaign runs: every command that writes a JSON result document.
use xlat_results::Procedure as Command;

/// Options the campaign gives each run itself.
const OWN_OPTIONS: [&str; 6] = ["--json", "--csv", "--summary-csv", "--plot", "--config", "-c"];

/// An error in a plan, naming the file, the line (when known) and the key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{}: {key}: {msg}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct PlanError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub key: String,
    pub msg: String,
}

/// What the campaign does after a failed run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnFailure {
    /// Record it as failed and go on with the next run.
    #[default]
    Continue,
    /// Record it as failed and stop the campaign (it resumes with the next run).
    Stop,
}

/// Where a test's description comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum TestSource {
    /// `xlatperf lab up TOPOLOGY OPTIONS...` before the test's runs, `xlatperf lab down` after;
    /// the runs use the configuration the lab writes.
    Lab { topology: String, options: Vec<String> },
    /// A TOML test description or a siitperf.conf (absolute, or relative to the plan).
    Config(PathBuf),
}

/// One test description of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Test {
    pub name: String,
    pub source: TestSource,
}

/// One procedure of the plan with its fixed options and its axes.
#[derive(Debug, Clone, PartialEq)]
pub struct Procedure {
    pub command: String,
    pub args: Vec<String>,
    /// (name, values), the campaign's axes merged in (the procedure's own win).
    pub axes: Vec<(String, Vec<String>)>,
    /// The tests it runs on, by name; empty: every test.
    pub tests: Vec<String>,
}

/// A parsed plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub file: PathBuf,
    pub name: String,
    pub repetitions: u32,
    pub on_failure: OnFailure,
    /// Seconds a run may take before it is stopped and recorded as failed; `None`: the
    /// default of [`crate::estimate::deadline_s`].
    pub run_deadline_s: Option<f64>,
    pub tests: Vec<Test>,
    pub procedures: Vec<Procedure>,
}

/// One run of a campaign: one command of xlatperf's.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// Unique in the campaign and stable for the same plan: `003-router4-throughput-frame-sizes=84-r1`.
    pub id: String,
    /// Index into [`Plan::tests`].
    pub test: usize,
    pub procedure: String,
    /// (axis, value) of this run.
    pub axes: Vec<(String, String)>,
    /// From 1.
    pub repetition: u32,
    /// The procedure's arguments after its name, without `-c` and `--json` (the campaign adds
    /// them): the plan's args, then the axes'.
    pub args: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanFile {
    campaign: Option<CampaignSection>,
    #[serde(default, rename = "test")]
    tests: Vec<TestSection>,
    #[serde(default, rename = "procedure")]
    procedures: Vec<ProcedureSection>,
}

type Axes = BTreeMap<Spanned<String>, Spanned<Vec<toml::Value>>>;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CampaignSection {
    name: Option<String>,
    repetitions: Option<Spanned<i64>>,
    on_failure: Option<Spanned<String>>,
    run_deadline_s: Option<Spanned<f64>>,
    #[serde(default)]
    axes: Axes,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TestSection {
    name: Spanned<String>,
    lab: Option<Spanned<String>>,
    #[serde(default)]
    lab_options: Vec<String>,
    config: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProcedureSection {
    command: Spanned<String>,
    args: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    axes: Axes,
    tests: Option<Spanned<Vec<String>>>,
}

/// The 1-based line of byte `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// A value of an axis as the command line takes it.
fn axis_value(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

impl Plan {
    /// Read and check the plan in `file`.
    pub fn load(file: &Path) -> Result<Plan, PlanError> {
        let text = std::fs::read_to_string(file).map_err(|e| PlanError {
            file: file.to_path_buf(),
            line: None,
            key: "file".into(),
            msg: format!("cannot read it: {e}"),
        })?;
        // Relative paths in the plan start from its directory, whatever the runs' working
        // directory (the campaign's).
        let abs = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
        Plan::parse(&text, &abs)
    }

    /// Parse and check a plan's `text`, read from `file` (which relative paths start from).
    pub fn parse(text: &str, file: &Path) -> Result<Plan, PlanError> {
        let err = |span: Option<Range<usize>>, key: &str, msg: String| PlanError {
            file: file.to_path_buf(),
            line: span.map(|s| line_of(text, s.start)),
            key: key.to_string(),
            msg,
        };
        let raw: PlanFile = toml::from_str(text).map_err(|e| {
            let msg = e.message().to_string();
            err(e.span(), "toml", msg)
        })?;
        let c = raw.campaign.unwrap_or_default();
        let repetitions = match &c.repetitions {
            None => 1,
            Some(r) if (1..=10_000).contains(r.get_ref()) => *r.get_ref() as u32,
            Some(r) => return Err(err(Some(r.span()), "campaign.repetitions", "give 1 to 10000".into())),
        };
        let on_failure = match c.on_failure.as_ref().map(|s| (s.get_ref().as_str(), s.span())) {
            None | Some(("continue", _)) => OnFailure::Continue,
            Some(("stop", _)) => OnFailure::Stop,
            Some((other, span)) => {
                return Err(err(
                    Some(span),
                    "campaign.on_failure",
                    format!("{other:?}: give \"continue\" or \"stop\""),
                ))
            }
        };
        let run_deadline_s = match &c.run_deadline_s {
            None => None,
            Some(d) if d.get_ref().is_finite() && *d.get_ref() > 0.0 => Some(*d.get_ref()),
            Some(d) => {
                return Err(err(
                    Some(d.span()),
                    "campaign.run_deadline_s",
                    "give a number of seconds above 0".into(),
                ))
            }
        };
        let campaign_axes = axes(text, file, "campaign.axes", &c.axes)?;
        let base = file.parent().unwrap_or(Path::new("."));
        let mut tests: Vec<Test> = Vec::new();
        for (i, t) in raw.tests.iter().enumerate() {
            let key = format!("test[{i}]");
            let name = t.name.get_ref().trim().to_string();
            if name.is_empty() || tests.iter().any(|x| x.name == name) {
                return Err(err(
                    Some(t.name.span()),
                    &format!("{key}.name"),
                    format!("{name:?}: give each test a name of its own"),
                ));
            }
            let source = match (&t.lab, &t.config) {
                (Some(lab), None) if lab.get_ref().parse::<xlat_lab::Topology>().is_err() => {
                    return Err(err(
                        Some(lab.span()),
                        &format!("{key}.lab"),
                        format!(
                            "{:?} is not a lab topology ({})",
                            lab.get_ref(),
                            xlat_lab::Topology::ALL.map(|t| t.name()).join(", ")
                        ),
                    ))
                }
                (Some(lab), None) => TestSource::Lab {
                    topology: lab.get_ref().clone(),
                    options: t.lab_options.clone(),
                },
                (None, Some(c)) => {
                    if !t.lab_options.is_empty() {
                        return Err(err(
                            Some(c.span()),
                            &format!("{key}.lab_options"),
                            "only with lab = TOPOLOGY".into(),
                        ));
                    }
                    let p = Path::new(c.get_ref());
                    TestSource::Config(if p.is_absolute() { p.to_path_buf() } else { base.join(p) })
                }
                _ => {
                    return Err(err(
                        Some(t.name.span()),
                        &key,
                        "give either lab = TOPOLOGY (router4, nat64, ...) or config = FILE".into(),
                    ))
                }
            };
            tests.push(Test { name, source });
        }
        if tests.is_empty() {
            return Err(err(
                None,
                "test",
                "the plan has no [[test]]: give at least one (lab = TOPOLOGY or config = FILE)".into(),
            ));
        }
        let mut procedures = Vec::new();
        for (i, p) in raw.procedures.iter().enumerate() {
            let key = format!("procedure[{i}]");
            let command = p.command.get_ref().clone();
            if Command::from_name(&command).is_none() {
                return Err(err(
                    Some(p.command.span()),
                    &format!("{key}.command"),
                    format!("{command:?} is not a procedure with results ({})", Command::commands()),
                ));
            }
            let args = p.args.as_ref().map(|a| a.get_ref().clone()).unwrap_or_default();
            let args_span = p.args.as_ref().map_or(p.command.span(), |a| a.span());
            for a in &args {
                if OWN_OPTIONS.iter().any(|o| a == o || a.starts_with(&format!("{o}="))) {
                    return Err(err(
                        Some(args_span.clone()),
                        &format!("{key}.args"),
                        format!("{a}: the campaign gives each run its test description and its JSON file; leave it out"),
                    ));
                }
            }
            let mut merged = campaign_axes.clone();
            for (name, values) in axes(text, file, &format!("{key}.axes"), &p.axes)? {
                merged.retain(|(n, _)| *n != name);
                merged.push((name, values));
            }
            merged.sort();
            for (name, _) in &merged {
                let option = format!("--{name}");
                if !name.contains('.') && args.iter().any(|a| *a == option || a.starts_with(&format!("{option}="))) {
                    return Err(err(
                        Some(args_span.clone()),
                        &format!("{key}.args"),
                        format!("{option} is an axis; leave it out of args"),
                    ));
                }
            }
            let only = p.tests.as_ref().map(|t| t.get_ref().clone()).unwrap_or_default();
            if let Some(unknown) = only.iter().find(|n| !tests.iter().any(|t| t.name == **n)) {
                let names: Vec<&str> = tests.iter().map(|t| t.name.as_str()).collect();
                return Err(err(
                    p.tests.as_ref().map(|t| t.span()),
                    &format!("{key}.tests"),
                    format!("{unknown:?} is no [[test]] of this plan ({})", names.join(", ")),
                ));
            }
            if p.tests.is_some() && only.is_empty() {
                return Err(err(
                    p.tests.as_ref().map(|t| t.span()),
                    &format!("{key}.tests"),
                    "name at least one test, or leave tests out for every test".into(),
                ));
            }
            procedures.push(Procedure {
                command,
                args,
                axes: merged,
                tests: only,
            });
        }
        if procedures.is_empty() {
            return Err(err(
                None,
                "procedure",
                "the plan has no [[procedure]]: give at least one (command = \"throughput\", ...)".into(),
            ));
        }
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "campaign".into());
        Ok(Plan {
            file: file.to_path_buf(),
            name: c.name.unwrap_or(stem),
            repetitions,
            on_failure,
            run_deadline_s,
            tests,
            procedures,
        })
    }

    /// Every run, in the order they run (see the module).
    pub fn runs(&self) -> Vec<Run> {
        let mut runs = Vec::new();
        for (ti, test) in self.tests.iter().enumerate() {
            for repetition in 1..=self.repetitions {
                for p in self
                    .procedures
                    .iter()
                    .filter(|p| p.tests.is_empty() || p.tests.contains(&test.name))
                {
                    for combo in product(&p.axes) {
                        let mut args = p.args.clone();
                        for (name, value) in &combo {
                            args.extend(xlat_results::sweep::parameter_args(name, value));
                        }
                        let mut id = format!("{:03}-{}-{}", runs.len() + 1, test.name, p.command);
                        for (name, value) in &combo {
                            id.push_str(&format!("-{name}={value}"));
                        }
                        id.push_str(&format!("-r{repetition}"));
                        runs.push(Run {
                            id: file_name_safe(&id),
                            test: ti,
                            procedure: p.command.clone(),
                            axes: combo,
                            repetition,
                            args,
                        });
                    }
                }
            }
        }
        runs
    }
}

/// The axes of one table, checked.
fn axes(text: &str, file: &Path, key: &str, raw: &Axes) -> Result<Vec<(String, Vec<String>)>, PlanError> {
    let mut out = Vec::new();
    for (name, values) in raw {
        let k = format!("{key}.{}", name.get_ref());
        let e = |msg: String| PlanError {
            file: file.to_path_buf(),
            line: Some(line_of(text, values.span().start)),
            key: k.clone(),
            msg,
        };
        let n = name.get_ref().trim().trim_start_matches('-').to_string();
        if n.is_empty() || n.contains(char::is_whitespace) {
            return Err(e("an axis is an option without its dashes or a configuration key".into()));
        }
        let vs: Option<Vec<String>> = values.get_ref().iter().map(axis_value).collect();
        let vs = vs.ok_or_else(|| e("give the values as a list of numbers or strings".into()))?;
        if vs.is_empty() {
            return Err(e("an axis needs at least one value".into()));
        }
        if vs.iter().enumerate().any(|(i, v)| vs[..i].contains(v)) {
            return Err(e("a value is given twice".into()));
        }
        out.push((n, vs));
    }
    Ok(out)
}

/// Every combination of one value per axis (the last axis varying fastest); one empty
/// combination for no axes.
fn product(axes: &[(String, Vec<String>)]) -> Vec<Vec<(String, String)>> {
    let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (name, values) in axes {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push((name.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    combos
}

/// `s` with every character that does not belong in a file name replaced by `_`.
fn file_name_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._=,+-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: &str = r#"
[campaign]
name = "small"
repetitions = 2
axes = { frame-sizes = [84, 1518] }

[[test]]
name = "router4"
lab = "router4"

[[test]]
name = "mine"
config = "dut.toml"

[[procedure]]
command = "throughput"
args = ["--duration", "2"]

[[procedure]]
command = "latency"
args = ["--rate", "1000"]
axes = { "tester.backend" = ["afpacket", "afxdp"] }
"#;

    fn parse(text: &str) -> Result<Plan, PlanError> {
        Plan::parse(text, Path::new("/plans/p.toml"))
    }

    #[test]
    fn a_plan_expands_test_by_test_then_repetition_then_procedure_then_axes() {
        let p = parse(PLAN).unwrap();
        assert_eq!(p.tests[1].source, TestSource::Config(PathBuf::from("/plans/dut.toml")));
        let runs = p.runs();
        // 2 tests x 2 repetitions x (2 sizes + 2 sizes x 2 backends)
        assert_eq!(runs.len(), 2 * 2 * (2 + 4));
        assert_eq!(runs[0].id, "001-router4-throughput-frame-sizes=84-r1");
        assert_eq!(runs[0].args, ["--duration", "2", "--frame-sizes", "84"]);
        assert_eq!(runs[2].id, "003-router4-latency-frame-sizes=84-tester.backend=afpacket-r1");
        assert_eq!(
            runs[2].args,
            ["--rate", "1000", "--frame-sizes", "84", "--set", "tester.backend=afpacket"]
        );
        assert_eq!((runs[6].repetition, runs[6].test), (2, 0));
        assert_eq!((runs[12].repetition, runs[12].test), (1, 1));
        let mut ids: Vec<&str> = runs.iter().map(|r| r.id.as_str()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), runs.len(), "ids are unique");
        assert_eq!(parse(PLAN).unwrap().runs(), runs, "the same plan, the same runs");
    }

    #[test]
    fn bad_plans_name_the_line_and_the_key() {
        let cases: &[(&str, &str, Option<usize>, &str)] = &[
            ("[[test]]\nname = \"a\"\n", "test[0]", Some(2), "either lab"),
            ("[[test]]\nname = \"a\"\nlab = \"router5\"\n", "test[0].lab", Some(3), "not a lab topology"),
            ("[[test]]\nname = \"a\"\nlab = \"router4\"\n", "procedure", None, "no [[procedure]]"),
            (
                "[[test]]\nname = \"a\"\nlab = \"router4\"\n[[procedure]]\ncommand = \"trial\"\n",
                "procedure[0].command",
                Some(5),
                "not a procedure",
            ),
            (
                "[[test]]\nname = \"a\"\nlab = \"router4\"\n[[procedure]]\ncommand = \"latency\"\nargs = [\"--json\", \"x\"]\n",
                "procedure[0].args",
                Some(6),
                "leave it out",
            ),
            (
                "[campaign]\naxes = { frame-sizes = [84] }\n[[test]]\nname = \"a\"\nlab = \"router4\"\n[[procedure]]\ncommand = \"latency\"\nargs = [\"--frame-sizes\", \"64\"]\n",
                "procedure[0].args",
                Some(8),
                "is an axis",
            ),
            ("[campaign]\nrepetitions = 0\n", "campaign.repetitions", Some(2), "1 to 10000"),
            ("[campaign]\non_failure = \"maybe\"\n", "campaign.on_failure", Some(2), "continue"),
            ("[campaign]\nrepetition = 2\n", "toml", Some(2), "unknown field `repetition`"),
            ("[campaign]\naxes = { rate = [] }\n", "campaign.axes.rate", Some(2), "at least one"),
            ("[campaign]\naxes = { rate = [1, 1] }\n", "campaign.axes.rate", Some(2), "twice"),
            ("[campaign\n", "toml", Some(1), ""),
            (
                "[[test]]\nname = \"a\"\nlab = \"router4\"\n[[procedure]]\ncommand = \"latency\"\ntests = [\"b\"]\n",
                "procedure[0].tests",
                Some(6),
                "\"b\" is no [[test]] of this plan (a)",
            ),
            (
                "[[test]]\nname = \"a\"\nlab = \"router4\"\n[[procedure]]\ncommand = \"latency\"\ntests = []\n",
                "procedure[0].tests",
                Some(6),
                "at least one test",
            ),
        ];
        for (text, key, line, msg) in cases {
            let e = parse(text).unwrap_err();
            assert_eq!((e.key.as_str(), e.line), (*key, *line), "{text}: {e}");
            assert!(e.msg.contains(msg), "{text}: {e}");
            assert!(e.to_string().starts_with("/plans/p.toml"), "{e}");
        }
    }

    /// A procedure with `tests` runs on those tests only, the others on every test.
    #[test]
    fn a_procedure_runs_on_its_tests_only() {
        let text = "[[test]]\nname = \"a\"\nlab = \"router4\"\n[[test]]\nname = \"b\"\nlab = \"mape\"\n\
            [[procedure]]\ncommand = \"throughput\"\ntests = [\"b\"]\naxes = { \"left.map.subscribers\" = [1, 1000] }\n\
            [[procedure]]\ncommand = \"latency\"\n";
        let p = parse(text).unwrap();
        let all = p.runs();
        let runs: Vec<(usize, &str, Vec<String>)> = all.iter().map(|r| (r.test, r.procedure.as_str(), r.args.clone())).collect();
        let set = |n: &str| vec!["--set".to_string(), format!("left.map.subscribers={n}")];
        assert_eq!(
            runs,
            [
                (0, "latency", vec![]),
                (1, "throughput", set("1")),
                (1, "throughput", set("1000")),
                (1, "latency", vec![]),
            ]
        );
    }

    #[test]
    fn names_become_file_names() {
        assert_eq!(file_name_safe("001-a b/c-x=1,2-r1"), "001-a_b_c-x=1,2-r1");
    }
}
