//! The SVG plot of every procedure command: [`Plot`], over the results of every frame size.

use crate::b2b::BackToBackResult;
use crate::delay::DelayRecorder;
use crate::frame_loss::FrameLossResult;
use crate::latency::LatencyResult;
use crate::mlrsearch::MlrResult;
use crate::output::{Collected, SizeResult};
use crate::pdv::PdvResult;
use crate::recovery::RecoveryResult;
use crate::reset::ResetResult;
use crate::result::BenchResult;
use crate::svg::{self, LinePlot, Series};
use crate::throughput::ThroughputResult;
use crate::view::Metric;

/// The plot of a procedure's results.
pub trait Plot: BenchResult + Sized {
    /// The SVG plot of the results of every frame size; `None` when there is nothing to draw.
    fn plot(results: &[SizeResult<Self>], collected: &Collected) -> Option<String>;
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
                dots: false,
            }],
            y_range: None,
        }
        .to_svg(),
    )
}

impl Plot for ThroughputResult {
    fn plot(results: &[SizeResult<Self>], _: &Collected) -> Option<String> {
        let pts: Vec<(usize, f64, f64, f64)> = results
            .iter()
            .filter_map(|r| {
                r.result
                    .summaries
                    .get(Metric::ThroughputFps.name())
                    .map(|s| (r.frame_size, s.median, s.min, s.max))
            })
            .collect();
        (!pts.is_empty()).then(|| svg::throughput_vs_frame_size("Throughput against frame size", &pts))
    }
}

impl Plot for MlrResult {
    /// One run: the search's trace (the load of every trial, one series per goal it was
    /// measured for). Several: the first goal's Conditional Throughput against frame size.
    fn plot(results: &[SizeResult<Self>], _: &Collected) -> Option<String> {
        if let [one] = results {
            if let [run] = one.result.runs.as_slice() {
                let series = run
                    .goals
                    .iter()
                    .map(|g| Series {
                        label: format!("trials for {}", g.goal.name),
                        points: run
                            .search
                            .iter()
                            .filter(|t| t.goal == g.goal.name)
                            .map(|t| (t.trial as f64 + 1.0, t.load as f64))
                            .collect(),
                        error_bars: None,
                        step: false,
                        dots: false,
                    })
                    .filter(|s| !s.points.is_empty())
                    .collect();
                return Some(
                    LinePlot {
                        title: format!("MLRsearch, {} B: the load of each trial", one.frame_size),
                        x_label: "trial".into(),
                        y_label: "load (frames/s per direction)".into(),
                        series,
                        y_range: None,
                    }
                    .to_svg(),
                );
            }
        }
        let first = results.first()?.result.runs.first()?.goals.first()?.goal.name.to_lowercase();
        metric_vs_size(
            "MLRsearch: Conditional Throughput against frame size",
            "frames/s per direction",
            results,
            &format!("{first}_conditional_throughput_fps"),
        )
    }
}

impl Plot for ResetResult {
    /// The forward direction's reset time (timestamp method) against frame size.
    fn plot(results: &[SizeResult<Self>], _: &Collected) -> Option<String> {
        metric_vs_size(
            "Reset time (RFC 6201, timestamp method)",
            "seconds",
            results,
            Metric::ForwardTimestampResetS.name(),
        )
    }
}

impl Plot for FrameLossResult {
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
                        dots: false,
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
}

impl Plot for LatencyResult {
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
}

impl Plot for PdvResult {
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
                    dots: false,
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
}

impl Plot for BackToBackResult {
    fn plot(results: &[SizeResult<Self>], _: &Collected) -> Option<String> {
        metric_vs_size(
            "Back-to-back frames against frame size",
            "back-to-back frames",
            results,
            Metric::AverageFrames.name(),
        )
    }
}

impl Plot for crate::conn_rate::ConnRateResult {
    fn plot(results: &[SizeResult<Self>], _: &Collected) -> Option<String> {
        metric_vs_size(
            "Maximum connection establishment rate against frame size",
            "connections/s",
            results,
            Metric::ConnRateCps.name(),
        )
    }
}

impl Plot for crate::teardown::TeardownResult {
    fn plot(results: &[SizeResult<Self>], _: &Collected) -> Option<String> {
        metric_vs_size(
            "Connection tear-down rate against frame size",
            "connections/s",
            results,
            Metric::TeardownRateCps.name(),
        )
    }
}

impl Plot for RecoveryResult {
    fn plot(results: &[SizeResult<Self>], _: &Collected) -> Option<String> {
        metric_vs_size(
            "System recovery time against frame size",
            "recovery time (s)",
            results,
            Metric::RecoveryTimeS.name(),
        )
    }
}

impl Plot for crate::capacity::CapacityResult {
    /// The shape cttc.sh's searches trace: the validated connection establishment rate at
    /// each number of connections tried (0 where none passed), one line per frame size and run.
    fn plot(results: &[SizeResult<Self>], _: &Collected) -> Option<String> {
        let mut series = Vec::new();
        for r in results {
            for (rep, run) in r.result.runs.iter().enumerate() {
                let mut pts: Vec<(f64, f64)> = run
                    .searches
                    .iter()
                    .map(|s| (s.connections as f64, s.rate.unwrap_or(0) as f64))
                    .collect();
                if pts.is_empty() {
                    continue;
                }
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                let label = if r.result.runs.len() > 1 {
                    format!("{} B run {}", r.frame_size, rep + 1)
                } else {
                    format!("{} B", r.frame_size)
                };
                series.push(Series {
                    label,
                    points: pts,
                    error_bars: None,
                    step: false,
                    dots: false,
                });
            }
        }
        (!series.is_empty()).then(|| {
            LinePlot {
                title: "Connection establishment rate against connections (table capacity search)".into(),
                x_label: "connections".into(),
                y_label: "connections/s (validated)".into(),
                series,
                y_range: None,
            }
            .to_svg()
        })
    }
}
