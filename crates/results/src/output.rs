//! The output of every command, as text: a trial's siitperf lines and summary, the JSON
//! [`Document`] of a procedure command (every trial of every repetition of every frame size,
//! with [`RunMeta`]), the trials and summary CSV files, and the human text over frame sizes. The
//! tables of each result are in [`crate::text`], the plots in [`crate::plot`]; writing files
//! (atomically, or to standard output) is the binary's.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use xlat_trial::{PreliminaryReport, TrialReport};

use crate::error::ResultsError;
pub use crate::meta::{rfc3339, rfc3339_now, Host, RunMeta};
use crate::record::{loss_percent, DirectionCounts, TrialRecord};
use crate::repeat::Repeated;
use crate::result::BenchResult;
use crate::siitperf::preliminary_rate_percent;
use crate::text::{group, text_table};

/// One line about the preliminary phase of a stateful trial: "phase 1: N frames at R fps, X of
/// Y foreground frames learnt, state table V/M", then what went wrong, if anything.
pub fn preliminary_summary(p: &PreliminaryReport) -> String {
    let mut s = format!(
        "phase 1: {} frames at {} fps, {} of {} foreground frames learnt, state table {}/{}",
        group(p.frames),
        group(p.rate),
        group(p.foreground_received),
        group(p.foreground_sent),
        group(p.valid_entries),
        group(p.state_table)
    );
    if !p.sending_valid {
        let _ = write!(
            s,
            "; sending too slow: {:.6} s, {:.4} % of the rate",
            p.send_duration_s,
            preliminary_rate_percent(p)
        );
    } else if !p.table_filled() {
        s.push_str("; state table NOT filled");
    }
    if let Some(n) = p.dut_connections {
        let _ = write!(s, "; the DUT counted {} connections", group(n));
    }
    if let Some(d) = p.duplicate_tuples.filter(|&d| d > 0) {
        let _ = write!(s, "; {} duplicate tuples (the DUT mapped connections onto one tuple)", group(d));
    }
    if p.tester_tx_dropped + p.tester_rx_dropped > 0 {
        let _ = write!(s, "; tester dropped: tx {}, rx {}", p.tester_tx_dropped, p.tester_rx_dropped);
    }
    s
}

/// A short human summary of one trial.
pub fn trial_summary(r: &TrialReport) -> String {
    let mut s = String::new();
    if let Some(p) = &r.preliminary {
        s.push_str(&preliminary_summary(p));
        s.push('\n');
        if r.directions().next().is_none() {
            s.push_str("phase 2 did not run\n");
        }
    }
    for (name, d) in r.directions() {
        let loss = loss_percent(d.counts.sent, d.counts.received).unwrap_or(0.0);
        s.push_str(&format!(
            "{name:<8} sent {:>12}  received {:>12}  lost {:>10} ({loss:.4} %)  tester dropped: tx {}, rx {}  dup {:>6}  reordered {:>6}  rate {:>12.1}/s  max lag {:>9.1} us (99.9 %: {:.1} us; stalls over 100 us: {})\n",
            d.counts.sent,
            d.counts.received,
            d.counts.lost,
            d.counts.tester_tx_dropped,
            d.counts.tester_rx_dropped,
            d.counts.duplicates,
            d.counts.reordered,
            d.counts.achieved_rate,
            d.counts.max_lag_ns as f64 / 1000.0,
            d.counts.lag_p999_ns as f64 / 1000.0,
            d.counts.stalls
        ));
        if d.counts.catch_ups > 0 || d.counts.untimed_catch_up > 0 {
            s.push_str(&format!(
                "{name:<8} caught up {} times from beyond the lag bound (largest burst above the catch-up pace: {} frames): {} of the lost frames sent in a catch-up, {} tags or frames left out of the delays\n",
                d.counts.catch_ups, d.counts.catch_up_burst, d.counts.lost_in_catch_up, d.counts.untimed_catch_up
            ));
        }
        if d.counts.unexpected > 0 {
            s.push_str(&format!(
                "{name:<8} {} test frames not of this trial (late, or another tester's: {})\n",
                d.counts.unexpected, d.counts.foreign
            ));
        }
    }
    if let Some(l) = &r.load {
        s.push_str(&format!("load over {:.1} s: {}\n", l.seconds, l.summary()));
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

impl<T: BenchResult + Serialize> Document<T> {
    /// The document of a finished run.
    pub fn new(procedure: &str, meta: RunMeta, results: Vec<SizeResult<T>>) -> Document<T> {
        Document {
            procedure: procedure.to_string(),
            complete: true,
            meta,
            frame_sizes: results.iter().map(|r| r.frame_size).collect(),
            results,
            interrupted: false,
            interrupted_run: None,
        }
    }

    /// Pretty JSON. Non-finite numbers become `null`.
    pub fn to_json(&self) -> Result<String, ResultsError> {
        serde_json::to_string_pretty(self).map_err(ResultsError::Write)
    }
}

/// What a procedure run collected beside its result, for plots.
#[derive(Debug, Clone, Default)]
pub struct Collected {
    /// Latency samples (ns, `u64::MAX` lost) by frame size and direction, over every valid trial.
    pub latency: BTreeMap<(usize, &'static str), Vec<u64>>,
}

/// One CSV field, quoted when needed (RFC 4180).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn float(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else if v > 0.0 {
        "inf".into()
    } else {
        String::new()
    }
}

/// The header of [`trials_csv`]. `tester_bound` marks the last attempt at a rate whose every
/// attempt was invalid; `*_tester_tx_dropped` / `*_tester_rx_dropped` are the frames the tester
/// itself failed to send / its receiving port dropped. The `pre_*` columns are the preliminary
/// phase of a stateful trial (empty for a stateless one): N, R, frames sent and received, the
/// foreground frames sent and learnt, the state table's valid entries and size M, the sending
/// time, whether it was in time, the duplicate learnt tuples (empty when not checked), the
/// tester's own drops, and the DUT's connection count after phase 1 (`dut.count`; empty when
/// not counted). Then per direction the sender's lag behind its schedule (the most and the
/// 99.9th percentile, ns, and the stalls over 100 us), what stamped its frames (`user`,
/// `kernel`) and how many frames to be timed got no stamp. Last the CPUs' load over the trial
/// (empty when not read): the DUT's CPUs (a CPU list), their busy and softirq shares (0 to 1)
/// and NET_RX softirq runs, then the tester's. Last what the lag did (docs/validity.md): whether
/// the trial is a failure possibly the tester's, the rules behind `invalid_reasons` (`;`
/// between), per direction the catch-ups beyond the lag bound, the frames lost in them, the
/// largest burst above the catch-up pace and the tags or frames left out of the delays; and
/// the DUT's and the tester's CPUs' steal share (0 to 1).
pub const TRIALS_CSV_HEADER: &str = "procedure,repetition,index,phase,attempt,frame_size,rate,duration_s,frames,valid,pass,tester_bound,\
fwd_sent,fwd_received,fwd_lost,fwd_loss_percent,fwd_tester_tx_dropped,fwd_tester_rx_dropped,\
rev_sent,rev_received,rev_lost,rev_loss_percent,rev_tester_tx_dropped,rev_tester_rx_dropped,invalid_reasons,\
pre_frames,pre_rate,pre_sent,pre_received,pre_foreground_sent,pre_foreground_received,pre_valid_entries,pre_state_table,\
pre_send_duration_s,pre_sending_valid,pre_duplicate_tuples,pre_tester_tx_dropped,pre_tester_rx_dropped,pre_dut_connections,\
fwd_max_lag_ns,fwd_lag_p999_ns,fwd_stalls,fwd_stamps,fwd_stamps_missing,rev_max_lag_ns,rev_lag_p999_ns,rev_stalls,rev_stamps,rev_stamps_missing,\
dut_cpus,dut_busy,dut_softirq,dut_net_rx,tester_cpus,tester_busy,tester_softirq,tester_net_rx,\
possibly_tester,invalid_rules,fwd_catch_ups,fwd_lost_in_catch_up,fwd_catch_up_burst,fwd_untimed_catch_up,\
rev_catch_ups,rev_lost_in_catch_up,rev_catch_up_burst,rev_untimed_catch_up,dut_steal,tester_steal";

/// One row of [`trials_csv`] (with its newline): trial `t` of repetition `repetition`.
pub fn trial_csv_row(procedure: &str, repetition: usize, t: &TrialRecord) -> String {
    let dir = |d: Option<&DirectionCounts>| match d {
        Some(d) => format!(
            "{},{},{},{},{},{}",
            d.sent,
            d.received,
            d.lost,
            opt(d.loss_percent()),
            d.tester_tx_dropped,
            d.tester_rx_dropped
        ),
        None => ",,,,,".to_string(),
    };
    let pre = match &t.preliminary {
        Some(p) => format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            p.frames,
            p.rate,
            p.sent,
            p.received,
            p.foreground_sent,
            p.foreground_received,
            p.valid_entries,
            p.state_table,
            float(p.send_duration_s),
            p.sending_valid,
            opt(p.duplicate_tuples),
            p.tester_tx_dropped,
            p.tester_rx_dropped,
            opt(p.dut_connections)
        ),
        None => ",".repeat(13),
    };
    let timing = |d: Option<&DirectionCounts>| match d {
        Some(d) => format!(
            "{},{},{},{},{}",
            d.max_lag_ns,
            d.lag_p999_ns,
            d.stalls,
            d.stamps.name(),
            d.stamps_missing
        ),
        None => ",,,,".to_string(),
    };
    let cpus = |l: Option<&xlat_trial::CpuLoad>| match l {
        Some(l) => format!(
            "{},{},{},{}",
            csv_field(&xlat_trial::load::cpu_list(&l.cpus)),
            float(l.busy),
            float(l.softirq),
            l.net_rx
        ),
        None => ",,,".to_string(),
    };
    let load = format!(
        "{},{}",
        cpus(t.load.as_ref().and_then(|l| l.dut.as_ref())),
        cpus(t.load.as_ref().map(|l| &l.tester))
    );
    let catch_up = |d: Option<&DirectionCounts>| match d {
        Some(d) => format!("{},{},{},{}", d.catch_ups, d.lost_in_catch_up, d.catch_up_burst, d.untimed_catch_up),
        None => ",,,".to_string(),
    };
    let steal = |l: Option<&xlat_trial::CpuLoad>| l.map_or(String::new(), |l| float(l.steal));
    let lag = format!(
        "{},{},{},{},{},{}",
        t.possibly_tester,
        csv_field(&t.invalid_rules.iter().map(|r| r.name()).collect::<Vec<_>>().join(";")),
        catch_up(t.forward.as_ref()),
        catch_up(t.reverse.as_ref()),
        steal(t.load.as_ref().and_then(|l| l.dut.as_ref())),
        steal(t.load.as_ref().map(|l| &l.tester))
    );
    format!(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
        csv_field(procedure),
        repetition,
        t.index,
        csv_field(&t.phase),
        t.attempt,
        t.frame_size,
        t.rate,
        float(t.duration_s),
        t.frames,
        t.valid,
        opt(t.pass),
        t.tester_bound,
        dir(t.forward.as_ref()),
        dir(t.reverse.as_ref()),
        csv_field(&t.invalid_reasons.join("; ")),
        pre,
        timing(t.forward.as_ref()),
        timing(t.reverse.as_ref()),
        load,
        lag
    )
}

/// One CSV row per trial of every repetition of every frame size, then those of an
/// interrupted repetition.
pub fn trials_csv<T: BenchResult>(procedure: &str, results: &[SizeResult<T>], interrupted: Option<&InterruptedRun>) -> String {
    let mut out = format!("{TRIALS_CSV_HEADER}\n");
    for r in results {
        for (rep, run) in r.result.runs.iter().enumerate() {
            for t in run.trials() {
                out.push_str(&trial_csv_row(run.procedure().name(), rep, t));
            }
        }
    }
    if let Some(i) = interrupted {
        for t in &i.trials {
            out.push_str(&trial_csv_row(procedure, i.repetition, t));
        }
    }
    out
}

/// The header of [`summary_csv`] after its first column, `frame_size`.
pub const SUMMARY_CSV_HEADER: &str = "procedure,metric,n,infinite,median,min,max,p1,p99,dispersion_percent";

/// One CSV row per summarised metric and frame size.
pub fn summary_csv<T: BenchResult>(results: &[SizeResult<T>]) -> String {
    let mut out = format!("frame_size,{SUMMARY_CSV_HEADER}\n");
    for r in results {
        let procedure = r.result.runs.first().map_or("unknown", |x| x.procedure().name());
        for (name, s) in &r.result.summaries {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{}",
                r.frame_size,
                procedure,
                csv_field(name),
                s.n,
                s.infinite,
                float(s.median),
                float(s.min),
                float(s.max),
                float(s.p1),
                float(s.p99),
                s.dispersion_percent.map(float).unwrap_or_default()
            );
        }
    }
    out
}

/// The human output of a command: each frame size's tables, then, for several sizes, an
/// overview of the summaries.
pub fn human_results<T: BenchResult>(results: &[SizeResult<T>]) -> String {
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

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_735_689_599), "2024-12-31T23:59:59Z");
    }
    use xlat_trial::DirectionReport;

    #[test]
    fn csv_quoting() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }

    #[test]
    fn the_summary_of_a_trial_with_loss_and_tester_drops() {
        let mut r = TrialReport {
            valid: true,
            forward: Some(DirectionReport {
                counts: xlat_trial::DirectionCounts {
                    sent: 10,
                    received: 9,
                    lost: 1,
                    ..Default::default()
                },
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(trial_summary(&r).contains("trial valid: loss"));
        assert!(
            trial_summary(&r).contains("lost          1 (10.0000 %)  tester dropped: tx 0, rx 0"),
            "{}",
            trial_summary(&r)
        );
        let f = r.forward.as_mut().unwrap();
        (f.counts.tester_tx_dropped, f.counts.tester_rx_dropped) = (3, 4);
        assert!(trial_summary(&r).contains("tester dropped: tx 3, rx 4"), "{}", trial_summary(&r));
        r.invalidate("the tester dropped 7 frames".into());
        assert!(trial_summary(&r).contains("trial INVALID: the tester dropped 7 frames"));
    }
}
