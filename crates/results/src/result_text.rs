//! The [`BenchResult`] implementations of every procedure (metrics, human tables, headlines)
//! and the summary table of repetitions, made with the helpers of [`crate::text`].

use std::fmt::Write as _;

use crate::b2b::BackToBackResult;
use crate::bound::{dut_busy_percent_at, Bound};
use crate::delay::{Delay, LatencyStats};
use crate::frame_loss::FrameLossResult;
use crate::latency::{LatencyResult, LatencySummary};
use crate::pdv::{PdvDirection, PdvResult};
use crate::record::TrialRecord;
use crate::recovery::{RecoveryDirectionResult, RecoveryResult};
use crate::repeat::Repeated;
use crate::result::BenchResult;
use crate::text::{group, text_table, trials_table};
use crate::throughput::ThroughputResult;
use crate::view::{Metric, Procedure};

impl BenchResult for ThroughputResult {
    fn procedure(&self) -> Procedure {
        Procedure::Throughput
    }
    fn trials(&self) -> &[TrialRecord] {
        &self.trials
    }
    fn metrics(&self) -> Vec<(String, f64)> {
        let mut m = vec![
            Metric::ThroughputFps.of(self.throughput as f64),
            ("trial_seconds".into(), self.trial_seconds),
        ];
        if let Some(b) = self.tester_bound {
            m.push(Metric::TesterBoundFps.of(b as f64));
        }
        if let Some(b) = dut_busy_percent_at(&self.trials, self.throughput) {
            m.push(Metric::DutBusyPct.of(b));
        }
        m
    }
    fn human_table(&self) -> String {
        let mut s = format!(
            "Throughput, frame size {}: {} frames/s per direction ({} search)\n\
             final interval [{}, {}] fps, error {} fps, loss tolerance {}, full trial {} s\n\
             {} trials, {:.1} trial-seconds ({:.1} s with timeouts)\n\n",
            self.frame_size,
            group(self.throughput),
            self.method.name(),
            group(self.lower),
            group(self.upper),
            group(self.error),
            self.loss_tolerance,
            self.duration_s,
            self.trials.len(),
            self.trial_seconds,
            self.elapsed_s
        );
        let _ = writeln!(s, "{}", self.bound.describe("frames/s"));
        if let Some(b) = dut_busy_percent_at(&self.trials, self.throughput) {
            let _ = writeln!(s, "at the throughput the DUT's CPUs were {b:.0} % busy");
        }
        s.push('\n');
        if let Some(b) = self.tester_bound {
            if self.bounded_by_tester {
                let _ = writeln!(
                    s,
                    "bounded by the tester at {} frames/s: the tester could not send faster (its trials were invalid or ended late), \
                     the DUT lost nothing up to {} frames/s and may be faster than measured\n",
                    group(b),
                    group(self.throughput)
                );
            } else {
                let _ = writeln!(
                    s,
                    "the tester could not send at {} frames/s (its trials were invalid or ended late); the DUT's limit was found below it\n",
                    group(b)
                );
            }
        }
        s.push_str(&trials_table(&self.trials));
        s
    }
    fn headline(&self) -> String {
        let at_least = if self.bound.at_least() { "at least " } else { "" };
        let mut s = format!("{} B: {at_least}{} fps per direction", self.frame_size, group(self.throughput));
        if let (true, Some(b)) = (self.bounded_by_tester, self.tester_bound) {
            let _ = write!(s, " (bounded by the tester at {} frames/s)", group(b));
        } else if let Bound::Range { max } = self.bound {
            let _ = write!(s, " (no loss up to the search's maximum {} frames/s)", group(max));
        }
        s
    }
}

impl BenchResult for FrameLossResult {
    fn procedure(&self) -> Procedure {
        Procedure::FrameLoss
    }
    fn trials(&self) -> &[TrialRecord] {
        &self.trials
    }
    fn metrics(&self) -> Vec<(String, f64)> {
        let mut m = Vec::new();
        for p in &self.points {
            if let Some(f) = p.forward_loss_percent {
                m.push((format!("forward_loss_percent@{}", p.rate), f));
            }
            if let Some(r) = p.reverse_loss_percent {
                m.push((format!("reverse_loss_percent@{}", p.rate), r));
            }
        }
        m
    }
    fn human_table(&self) -> String {
        let mut s = format!(
            "Frame loss rate, frame size {}, maximum rate {} fps{}\n\n",
            self.frame_size,
            group(self.max_rate),
            if self.two_zero_loss {
                " (ended by two zero-loss trials)"
            } else {
                ""
            }
        );
        let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.4}"));
        let rows: Vec<Vec<String>> = self
            .points
            .iter()
            .map(|p| {
                if p.tester_bound {
                    let na = "invalid: tester-bound".to_string();
                    vec![group(p.rate), format!("{:.1}", p.percent_of_max), na.clone(), na]
                } else {
                    vec![
                        group(p.rate),
                        format!("{:.1}", p.percent_of_max),
                        pct(p.forward_loss_percent),
                        pct(p.reverse_loss_percent),
                    ]
                }
            })
            .collect();
        s.push_str(&text_table(&["rate (fps)", "% of max", "fwd loss %", "rev loss %"], &rows));
        if let Some(b) = self.tester_bound {
            let _ = writeln!(
                s,
                "note: the tester could not send at {} frames/s and above where marked (invalid trials, not loss)",
                group(b)
            );
        }
        s
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

/// Which source stamped each direction's frames, as the trials say (RFC 8219's delays are
/// differences of two stamps: whose they are is part of the figure).
pub fn stamps_line(trials: &[TrialRecord]) -> String {
    let mut parts = Vec::new();
    let mut sources = Vec::new();
    for (name, pick) in [("forward", 0), ("reverse", 1)] {
        let dir = |t: &TrialRecord| if pick == 0 { t.forward.clone() } else { t.reverse.clone() };
        if let Some(d) = trials.iter().filter_map(dir).next() {
            parts.push(format!("{name} {}", d.stamps.name()));
            if !sources.contains(&d.stamps) {
                sources.push(d.stamps);
            }
        }
    }
    let why: Vec<String> = sources.iter().map(|s| format!("{}: {}", s.name(), s.describe())).collect();
    format!("Timestamps: {} ({})\n", parts.join(", "), why.join("; "))
}

fn delay_metric(m: &mut Vec<(String, f64)>, metric: Metric, d: Delay) {
    m.push(metric.of(d.ms()));
}

impl BenchResult for LatencyResult {
    fn procedure(&self) -> Procedure {
        Procedure::Latency
    }
    fn trials(&self) -> &[TrialRecord] {
        &self.trials
    }
    fn metrics(&self) -> Vec<(String, f64)> {
        let mut m = Vec::new();
        for (tl, wcl, s) in [
            (Metric::ForwardTlMs, Metric::ForwardWclMs, &self.forward),
            (Metric::ReverseTlMs, Metric::ReverseWclMs, &self.reverse),
        ] {
            if let Some(LatencySummary { typical, worst_case }) = s {
                delay_metric(&mut m, tl, *typical);
                delay_metric(&mut m, wcl, *worst_case);
            }
        }
        m
    }
    fn human_table(&self) -> String {
        let mut s = format!(
            "Latency, frame size {}, {} fps, {} tags after {} s of {} s, {} repetitions\n",
            self.frame_size,
            group(self.rate),
            self.tags,
            self.delay_s,
            self.duration_s,
            self.runs.len()
        );
        for (name, sum) in [("Forward", &self.forward), ("Reverse", &self.reverse)] {
            if let Some(sum) = sum {
                let _ = writeln!(
                    s,
                    "{name} TL (median of medians): {}   WCL (median of 99.9th percentiles): {}",
                    sum.typical, sum.worst_case
                );
            }
        }
        s.push_str(&stamps_line(&self.trials));
        s.push('\n');
        let cell = |st: &Option<LatencyStats>, wcl: bool| {
            st.as_ref().map_or(
                "-".to_string(),
                |x| if wcl { x.worst_case.to_string() } else { x.typical.to_string() },
            )
        };
        let rows: Vec<Vec<String>> = self
            .runs
            .iter()
            .map(|r| {
                let lost = r.forward.as_ref().map_or(0, |x| x.lost) + r.reverse.as_ref().map_or(0, |x| x.lost);
                vec![
                    (r.repetition + 1).to_string(),
                    cell(&r.forward, false),
                    cell(&r.forward, true),
                    cell(&r.reverse, false),
                    cell(&r.reverse, true),
                    lost.to_string(),
                ]
            })
            .collect();
        s.push_str(&text_table(&["run", "fwd TL", "fwd WCL", "rev TL", "rev WCL", "lost tags"], &rows));
        s
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

fn ms(ns: Option<i64>) -> String {
    ns.map_or("-".into(), |v| format!("{:.6}", v as f64 / 1.0e6))
}

impl BenchResult for PdvResult {
    fn procedure(&self) -> Procedure {
        Procedure::Pdv
    }

    fn trials(&self) -> &[TrialRecord] {
        &self.trials
    }

    fn metrics(&self) -> Vec<(String, f64)> {
        let mut m = Vec::new();
        for (name, pdv, s) in [
            ("forward", Metric::ForwardPdvMs, &self.forward),
            ("reverse", Metric::ReversePdvMs, &self.reverse),
        ] {
            let Some(s) = s else { continue };
            if let Some(p) = s.pdv {
                m.push(pdv.of(p.ms()));
            }
            for (k, v) in [("min", s.ipdv_min_ns), ("median", s.ipdv_median_ns), ("max", s.ipdv_max_ns)] {
                if let Some(v) = v {
                    m.push((format!("{name}_ipdv_{k}_ms"), v as f64 / 1.0e6));
                }
            }
        }
        if self.frame_timeout_ms > 0 {
            for (name, pick) in [("forward", 0), ("reverse", 1)] {
                let loss: Vec<f64> = self
                    .runs
                    .iter()
                    .filter_map(|r| if pick == 0 { r.forward.as_ref() } else { r.reverse.as_ref() })
                    .filter_map(PdvDirection::loss_percent)
                    .collect();
                if !loss.is_empty() {
                    m.push((format!("{name}_loss_percent"), loss.iter().sum::<f64>() / loss.len() as f64));
                }
            }
        }
        m
    }

    fn human_table(&self) -> String {
        let mut s = if self.frame_timeout_ms > 0 {
            format!(
                "Frame timeout test (siitperf-pdv), frame size {}, {} fps for {} s, a frame later than {} ms is lost, {} repetitions\n",
                self.frame_size,
                group(self.rate),
                self.duration_s,
                self.frame_timeout_ms,
                self.runs.len()
            )
        } else {
            format!(
                "PDV and IPDV, frame size {}, {} fps for {} s, {} repetitions{}\n",
                self.frame_size,
                group(self.rate),
                self.duration_s,
                self.runs.len(),
                if self.exact { " (exact)" } else { "" }
            )
        };
        for (name, sum) in [("Forward", &self.forward), ("Reverse", &self.reverse)] {
            if let Some(sum) = sum {
                let pdv = sum.pdv.map_or("-".to_string(), |d| d.to_string());
                let _ = writeln!(
                    s,
                    "{name} PDV (median): {pdv}   IPDV min/median/max (medians): {} / {} / {} ms",
                    ms(sum.ipdv_min_ns),
                    ms(sum.ipdv_median_ns),
                    ms(sum.ipdv_max_ns)
                );
            }
        }
        s.push_str(&stamps_line(&self.trials));
        s.push('\n');
        let cell_pdv = |d: &Option<PdvDirection>| {
            d.as_ref()
                .and_then(|d| d.pdv.as_ref())
                .map_or("-".to_string(), |p| p.pdv.to_string())
        };
        let cell_ipdv = |d: &Option<PdvDirection>| {
            d.as_ref().and_then(|d| d.ipdv.as_ref()).map_or("-".to_string(), |i| {
                format!("{} / {} / {}", ms(Some(i.min_ns)), ms(Some(i.median_ns)), ms(Some(i.max_ns)))
            })
        };
        let lost = |d: &Option<PdvDirection>| {
            d.as_ref().map_or("-".to_string(), |d| {
                format!(
                    "{} ({} late; tester dropped: tx {}, rx {})",
                    d.lost, d.late, d.tester_tx_dropped, d.tester_rx_dropped
                )
            })
        };
        let rows: Vec<Vec<String>> = self
            .runs
            .iter()
            .map(|r| {
                vec![
                    (r.repetition + 1).to_string(),
                    cell_pdv(&r.forward),
                    cell_ipdv(&r.forward),
                    lost(&r.forward),
                    cell_pdv(&r.reverse),
                    cell_ipdv(&r.reverse),
                    lost(&r.reverse),
                    if r.pass { "pass".into() } else { "fail".into() },
                ]
            })
            .collect();
        s.push_str(&text_table(
            &[
                "run",
                "fwd PDV",
                "fwd IPDV min/med/max (ms)",
                "fwd lost",
                "rev PDV",
                "rev IPDV min/med/max (ms)",
                "rev lost",
                "loss",
            ],
            &rows,
        ));
        s
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

impl BenchResult for BackToBackResult {
    fn procedure(&self) -> Procedure {
        Procedure::BackToBack
    }
    fn trials(&self) -> &[TrialRecord] {
        &self.trials
    }
    fn metrics(&self) -> Vec<(String, f64)> {
        let mut m = vec![
            Metric::AverageFrames.of(self.average_frames),
            Metric::ImpliedBufferTimeS.of(self.implied_buffer_time_s),
        ];
        if let Some(c) = self.corrected_buffer_time_s {
            m.push(Metric::CorrectedBufferTimeS.of(c));
        }
        m
    }
    fn human_table(&self) -> String {
        let mut s = format!(
            "Back-to-back frames, frame size {}, line rate {} fps, {} repetitions\n",
            self.frame_size,
            group(self.line_rate),
            self.runs.len()
        );
        let rows = vec![vec![
            format!("{:.1}", self.average_frames),
            group(self.min_frames),
            group(self.max_frames),
            format!("{:.1}", self.std_dev_frames),
            format!("{:.6}", self.implied_buffer_time_s),
            self.corrected_buffer_time_s.map_or("-".to_string(), |c| format!("{c:.6}")),
        ]];
        s.push_str(&text_table(
            &[
                "average frames",
                "min",
                "max",
                "std dev",
                "implied buffer (s)",
                "corrected buffer (s)",
            ],
            &rows,
        ));
        if let Some(b) = self.tester_bound {
            let _ = writeln!(
                s,
                "note: the tester could not send bursts of {} frames at the line rate (invalid trials, not loss): \
                 where a run found within {} frames of that, the buffer may be larger (bounded by the tester)",
                group(b),
                group(self.error)
            );
        }
        if self.runs.iter().any(|r| r.at_max) {
            let _ = writeln!(
                s,
                "note: the longest burst tried ({} frames) passed: the buffer may be larger",
                group(self.max_burst)
            );
        }
        let _ = writeln!(
            s,
            "{} trials, {:.3} trial-seconds, {:.1} s idle",
            self.trials.len(),
            self.trial_seconds,
            self.idle_seconds
        );
        s
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

impl BenchResult for RecoveryResult {
    fn procedure(&self) -> Procedure {
        Procedure::Recovery
    }
    fn trials(&self) -> &[TrialRecord] {
        &self.trials
    }
    fn metrics(&self) -> Vec<(String, f64)> {
        self.recovery_time_s.map(|t| vec![Metric::RecoveryTimeS.of(t)]).unwrap_or_default()
    }
    fn human_table(&self) -> String {
        let mut s = format!(
            "System recovery, frame size {}: {} fps for {} s, then {} fps for {} s (throughput {} fps)\n",
            self.frame_size,
            group(self.overload_rate),
            self.overload_s,
            group(self.reduced_rate),
            self.recovery_s,
            group(self.throughput)
        );
        let drops = |name: &str| {
            let t = self.trials.iter().rev().find(|t| t.valid);
            let d = t.and_then(|t| {
                if name == "forward" {
                    t.forward.as_ref()
                } else {
                    t.reverse.as_ref()
                }
            });
            d.map_or("-".to_string(), |d| {
                format!("{}/{}", group(d.tester_tx_dropped), group(d.tester_rx_dropped))
            })
        };
        let row = |name: &str, d: &Option<RecoveryDirectionResult>| {
            d.as_ref().map(|d| {
                vec![
                    name.to_string(),
                    group(d.sent),
                    group(d.lost),
                    drops(name),
                    d.recovery_time_s.map_or("-".to_string(), |t| format!("{:.3}", t * 1000.0)),
                    if d.lost_until_end { "no".into() } else { "yes".into() },
                ]
            })
        };
        let rows: Vec<Vec<String>> = [row("forward", &self.forward), row("reverse", &self.reverse)]
            .into_iter()
            .flatten()
            .collect();
        s.push_str(&text_table(
            &[
                "direction",
                "sent",
                "lost",
                "tester dropped tx/rx",
                "recovery time (ms)",
                "recovered",
            ],
            &rows,
        ));
        if !self.overloaded {
            s.push_str("note: no frame was lost, the DUT was not overloaded: the recovery time is undefined\n");
        }
        s
    }
    fn headline(&self) -> String {
        match self.recovery_time_s {
            Some(t) => format!("{} B: recovery time {:.3} ms", self.frame_size, t * 1000.0),
            None => format!("{} B: no frame lost, the DUT was not overloaded", self.frame_size),
        }
    }
}

impl<T: BenchResult> Repeated<T> {
    /// Each run's table, then the summary over the runs.
    pub fn human_table(&self) -> String {
        let mut s = String::new();
        for (i, r) in self.runs.iter().enumerate() {
            if self.runs.len() > 1 {
                let _ = writeln!(s, "=== repetition {} of {} ===", i + 1, self.runs.len());
            }
            s.push_str(&r.human_table());
            s.push('\n');
        }
        if self.runs.len() > 1 {
            s.push_str(&self.summary_table());
        }
        s
    }

    /// Median, min, max, 1st and 99th percentile and dispersion of each metric.
    pub fn summary_table(&self) -> String {
        let f = |v: f64| {
            if v.is_finite() && v.abs() >= 1000.0 {
                format!("{}{}", if v < 0.0 { "-" } else { "" }, group(v.abs().round() as u64))
            } else {
                format!("{v:.6}")
            }
        };
        let rows: Vec<Vec<String>> = self
            .summaries
            .iter()
            .map(|(k, s)| {
                vec![
                    k.clone(),
                    s.n.to_string(),
                    f(s.median),
                    f(s.min),
                    f(s.max),
                    f(s.p1),
                    f(s.p99),
                    s.dispersion_percent.map_or("-".into(), |d| format!("{d:.2}")),
                ]
            })
            .collect();
        text_table(&["metric", "n", "median", "min", "max", "p1", "p99", "dispersion %"], &rows)
    }
}
