//! Scalability sweeps (seeds/001's tables: a rate against the number of connections): one
//! procedure run once per value of one parameter, every point in one table, one JSON document,
//! one CSV and one plot. The binary runs each point as its own process; this module reads what
//! each run wrote (its [`Document`](crate::output::Document), through the typed view
//! [`DocView`]) and makes the sweep's outputs from the points.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::error::{ResultsError, ValueError};
use crate::output::csv_field;
use crate::svg::{LinePlot, Series};
use crate::text::{group, text_table};
use crate::view::{DocView, Metric, Procedure};

/// Split `NAME=V1,V2,...` (a leading `--` of NAME is dropped).
pub fn parse_over(over: &str) -> Result<(String, Vec<String>), ValueError> {
    let usage = || ValueError::form(over, "NAME=V1,V2,... (e.g. connections=10k,100k,1M)");
    let (name, values) = over.split_once('=').ok_or_else(usage)?;
    let name = name.trim().trim_start_matches('-').to_string();
    let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect();
    if name.is_empty() || values.is_empty() {
        return Err(usage());
    }
    Ok((name, values))
}

/// The arguments that set parameter `name` to `value`: `--set NAME=VALUE` for a configuration
/// key (a name with a dot), `--NAME VALUE` for an option of the procedure.
pub fn parameter_args(name: &str, value: &str) -> [String; 2] {
    if name.contains('.') {
        ["--set".to_string(), format!("{name}={value}")]
    } else {
        [format!("--{name}"), value.to_string()]
    }
}

/// A number as the options write it: "20000", "20k", "1.5M", "14_880_952" (k, M, G: powers
/// of 1000); finite and not negative.
pub fn parse_number(s: &str) -> Result<f64, ValueError> {
    let t = s.trim().replace('_', "");
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('M') => (&t[..t.len() - 1], 1e6),
        Some('G') => (&t[..t.len() - 1], 1e9),
        _ => (&t[..], 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| ValueError::form(s, "a number (examples: 20000, 20k, 1.5M)"))?;
    let v = v * mult;
    if !v.is_finite() || v < 0.0 {
        return Err(ValueError::range(s, "a non-negative number"));
    }
    Ok(v)
}

/// One point: the procedure's figures (medians over its repetitions) at one value and frame size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    pub value: String,
    pub frame_size: u64,
    /// Metric -> median over the repetitions.
    pub metrics: BTreeMap<String, f64>,
}

/// A sweep in progress: the points and the documents of the runs so far.
#[derive(Debug, Clone)]
pub struct Sweep {
    pub parameter: String,
    pub procedure: String,
    pub values: Vec<String>,
    pub points: Vec<Point>,
    /// Every run's JSON document, in order, as it wrote it.
    pub runs: Vec<serde_json::Value>,
}

#[derive(Serialize)]
struct SweepDocument<'a> {
    sweep: &'a str,
    procedure: &'a str,
    parameter: &'a str,
    values: &'a [String],
    complete: bool,
    points: &'a [Point],
    runs: &'a [serde_json::Value],
}

impl Sweep {
    pub fn new(parameter: &str, procedure: &str, values: &[String]) -> Sweep {
        Sweep {
            parameter: parameter.to_string(),
            procedure: procedure.to_string(),
            values: values.to_vec(),
            points: Vec::new(),
            runs: Vec::new(),
        }
    }

    /// Add the run at `value` from the JSON document it wrote (one point per frame size).
    pub fn add_run(&mut self, value: &str, json: &str) -> Result<(), ResultsError> {
        let bad = |source| ResultsError::Run {
            parameter: self.parameter.clone(),
            value: value.to_string(),
            source,
        };
        let doc: serde_json::Value = serde_json::from_str(json).map_err(bad)?;
        let view = DocView::deserialize(&doc).map_err(bad)?;
        for r in view.results {
            self.points.push(Point {
                value: value.to_string(),
                frame_size: r.frame_size,
                metrics: r.result.summaries.into_iter().filter_map(|(k, s)| Some((k, s.median?))).collect(),
            });
        }
        self.runs.push(doc);
        Ok(())
    }

    /// Every metric any point has, the procedure's main one first.
    pub fn columns(&self) -> Vec<String> {
        let main = Procedure::from_name(&self.procedure)
            .and_then(Procedure::main_metric)
            .map_or("", Metric::name);
        let mut cols: Vec<String> = Vec::new();
        if self.points.iter().any(|p| p.metrics.contains_key(main)) {
            cols.push(main.to_string());
        }
        for p in &self.points {
            for k in p.metrics.keys() {
                if !cols.contains(k) {
                    cols.push(k.clone());
                }
            }
        }
        cols
    }

    /// The sweep's JSON document: every point, every run's document; `complete` false until the
    /// last run.
    pub fn to_json(&self, complete: bool) -> Result<String, ResultsError> {
        let doc = SweepDocument {
            sweep: "xlatperf sweep",
            procedure: &self.procedure,
            parameter: &self.parameter,
            values: &self.values,
            complete,
            points: &self.points,
            runs: &self.runs,
        };
        serde_json::to_string_pretty(&doc).map(|s| s + "\n").map_err(ResultsError::Write)
    }

    /// One CSV row per point: the parameter, the frame size, every metric (empty where a point
    /// has none).
    pub fn to_csv(&self) -> String {
        let cols = self.columns();
        let mut s = format!("{},frame_size", csv_field(&self.parameter));
        for c in &cols {
            s.push(',');
            s.push_str(c);
        }
        s.push('\n');
        for p in &self.points {
            s.push_str(&format!("{},{}", csv_field(&p.value), p.frame_size));
            for c in &cols {
                s.push(',');
                if let Some(v) = p.metrics.get(c) {
                    s.push_str(&v.to_string());
                }
            }
            s.push('\n');
        }
        s
    }

    /// The sweep's table for a human: one row per value and frame size.
    pub fn table(&self) -> String {
        let figure = |v: Option<&f64>| match v {
            Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => group(*x as u64),
            Some(x) => format!("{x:.6}"),
            None => "-".into(),
        };
        let cols = self.columns();
        let mut headers: Vec<&str> = vec![&self.parameter, "frame size"];
        headers.extend(cols.iter().map(String::as_str));
        let rows: Vec<Vec<String>> = self
            .points
            .iter()
            .map(|p| {
                let mut row = vec![p.value.clone(), p.frame_size.to_string()];
                row.extend(cols.iter().map(|c| figure(p.metrics.get(c))));
                row
            })
            .collect();
        format!(
            "\nSweep of {} over {} (medians over the repetitions)\n{}",
            self.procedure,
            self.parameter,
            text_table(&headers, &rows)
        )
    }

    /// The main metric against the parameter, one line per frame size (the parameter's values
    /// in order when they are not all numbers).
    pub fn plot_svg(&self) -> String {
        let metric = self.columns().first().cloned().unwrap_or_default();
        let numeric = |v: &str| parse_number(v).ok();
        let all_numeric = self.points.iter().all(|p| numeric(&p.value).is_some());
        let mut order: Vec<&str> = Vec::new();
        for p in &self.points {
            if !order.contains(&p.value.as_str()) {
                order.push(&p.value);
            }
        }
        let mut by_size: BTreeMap<u64, Vec<(f64, f64)>> = BTreeMap::new();
        for p in &self.points {
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
                    dots: false,
                }
            })
            .collect();
        LinePlot {
            title: format!("{}: {metric} against {}", self.procedure, self.parameter),
            x_label: if all_numeric {
                self.parameter.clone()
            } else {
                format!("{} ({})", self.parameter, order.join(", "))
            },
            y_label: metric,
            series,
            y_range: None,
        }
        .to_svg()
    }
}

#[cfg(test)]
#[path = "sweep_tests.rs"]
mod tests;
