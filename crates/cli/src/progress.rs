//! The progress display on standard error: where a procedure is (procedure, frame size,
//! repetition, step, rate, search bounds), the elapsed time and an estimate of what remains.
//! On a terminal it is one line updated in place (drawn by indicatif: cut to the terminal's
//! width, redrawn at a bounded rate, lines printed above it); otherwise it is silent, or with
//! `--verbose` one line per trial, so that logs and scripts get no control characters. What the
//! line says, and the estimate of what remains (a search has no fixed length, so indicatif's own
//! ETA does not apply), are ours.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Instant;
use xlat_procedures::{Progress, ProgressEvent};
use xlat_results::text::{clock, group, trial_line};
use xlat_results::TrialRecord;

/// Is standard error a terminal?
pub fn stderr_is_tty() -> bool {
    std::io::stderr().is_terminal()
}

/// The status line of a step.
pub fn status_line(context: &str, e: &ProgressEvent<'_>, elapsed_s: f64, remaining_s: Option<f64>) -> String {
    let unit = if e.procedure == "back-to-back" { "frames" } else { "fps" };
    let mut s = format!("{} {context}step {} {}: {} {unit}", e.procedure, e.step, e.phase, group(e.rate));
    if e.low != e.high {
        s.push_str(&format!(" in [{}, {}]", group(e.low), group(e.high)));
    }
    s.push_str(&format!("  elapsed {}", clock(elapsed_s)));
    match remaining_s {
        Some(r) => s.push_str(&format!("  left ~{}", clock(r))),
        None => s.push_str("  left ?"),
    }
    s
}

/// The status line on standard error, or none.
fn status_bar(tty: bool) -> ProgressBar {
    if !tty {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{wide_msg}") {
        bar.set_style(style);
    }
    bar
}

/// A [`Progress`] on standard error.
pub struct TermProgress {
    /// The status line; hidden when standard error is not a terminal.
    bar: ProgressBar,
    tty: bool,
    verbose: bool,
    start: Instant,
    /// "84 B run 2/3 " and the like.
    context: String,
    /// Whole procedure runs still to do after the current one.
    runs_after: usize,
    /// Wall-clock seconds of the finished runs.
    finished: Vec<f64>,
    run_start: Instant,
}

impl TermProgress {
    pub fn new(verbose: bool) -> TermProgress {
        TermProgress::with_tty(stderr_is_tty(), verbose)
    }

    pub fn with_tty(tty: bool, verbose: bool) -> TermProgress {
        TermProgress {
            bar: status_bar(tty),
            tty,
            verbose,
            start: Instant::now(),
            context: String::new(),
            runs_after: 0,
            finished: Vec::new(),
            run_start: Instant::now(),
        }
    }

    /// A new run of a procedure starts.
    pub fn begin_run(&mut self, context: String, runs_after: usize) {
        self.context = if context.is_empty() { context } else { format!("{context} ") };
        self.runs_after = runs_after;
        self.run_start = Instant::now();
    }

    /// The current run finished; `summary` is shown when the display is active.
    pub fn end_run(&mut self, summary: &str) {
        self.finished.push(self.run_start.elapsed().as_secs_f64());
        if self.tty || self.verbose {
            self.note(summary);
        }
    }

    /// Print a line of its own (above the status line on a terminal).
    pub fn note(&mut self, line: &str) {
        self.bar.suspend(|| eprintln!("{line}"));
    }

    /// Remove the status line (the next step shows a new one).
    pub fn clear(&mut self) {
        self.bar.finish_and_clear();
        self.bar = status_bar(self.tty);
    }

    fn remaining(&self, e: &ProgressEvent<'_>) -> Option<f64> {
        let this = e.remaining_s?;
        if self.runs_after == 0 {
            return Some(this);
        }
        if self.finished.is_empty() {
            // The first run: its own estimate so far, times the runs to come.
            return Some(this + self.runs_after as f64 * (e.elapsed_s + this));
        }
        let avg = self.finished.iter().sum::<f64>() / self.finished.len() as f64;
        Some(this + self.runs_after as f64 * avg)
    }
}

impl Progress for TermProgress {
    fn step(&mut self, e: &ProgressEvent<'_>) {
        if !self.tty {
            return;
        }
        let line = status_line(&self.context, e, self.start.elapsed().as_secs_f64(), self.remaining(e));
        self.bar.set_message(line);
    }

    fn trial(&mut self, procedure: &str, record: &TrialRecord) {
        if self.verbose {
            let line = trial_line(procedure, &self.context, record);
            self.note(&line);
        } else if record.tester_bound && self.tty {
            let line = format!(
                "{procedure} {}trial {} at {} fps stayed invalid: the tester cannot send at this rate \
                 (an upper bound, not a failure of the DUT): {}",
                self.context,
                record.index,
                group(record.rate),
                record.invalid_reasons.join("; ")
            );
            self.note(&line);
        } else if record.pass.is_none() && self.tty {
            let line = format!(
                "{procedure} {}trial {} at {} fps was invalid, running it again: {}",
                self.context,
                record.index,
                group(record.rate),
                record.invalid_reasons.join("; ")
            );
            self.note(&line);
        }
    }
}

impl Drop for TermProgress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(remaining: Option<f64>) -> ProgressEvent<'static> {
        ProgressEvent {
            procedure: "throughput",
            phase: "search",
            step: 4,
            rate: 100_000,
            low: 50_000,
            high: 200_000,
            elapsed_s: 30.0,
            remaining_s: remaining,
        }
    }

    #[test]
    fn status_line_says_where_it_is() {
        let l = status_line("84 B run 1/3 ", &event(Some(95.0)), 62.0, Some(95.0));
        assert_eq!(
            l,
            "throughput 84 B run 1/3 step 4 search: 100,000 fps in [50,000, 200,000]  elapsed 1:02  left ~1:35"
        );
        assert!(status_line("", &event(None), 3.0, None).ends_with("left ?"));
    }

    #[test]
    fn remaining_counts_the_runs_to_come() {
        let mut p = TermProgress::with_tty(false, false);
        p.begin_run(String::new(), 2);
        // First run: 30 s done + 10 s left = 40 s per run.
        assert_eq!(p.remaining(&event(Some(10.0))), Some(10.0 + 2.0 * 40.0));
        p.finished.push(20.0);
        assert_eq!(p.remaining(&event(Some(10.0))), Some(10.0 + 2.0 * 20.0));
        assert_eq!(p.remaining(&event(None)), None);
    }
}
