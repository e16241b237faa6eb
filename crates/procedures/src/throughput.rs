//! Throughput (RFC 2544 section 26.1, RFC 8219 section 7.1): the highest rate at which no frame
//! is lost (or at most `loss_tolerance` x sent frames, per direction), found by binary search.
//!
//! A trial passes only if it is valid and every active direction is within the loss tolerance.
//! An invalid trial is neither pass nor fail: it is retried up to `retries` times, and a rate
//! whose trials all stay invalid is **tester-bound**: the tester, not the DUT, cannot go that
//! fast. It becomes an upper bound of the search like a failure (without being one: its records
//! keep `pass: None`), and the search goes on below it. The result's `tester_bound` is the lowest
//! such rate, and `bounded_by_tester` says that the final interval ends at it within `error`:
//! the DUT forwarded everything the tester could send, so it may be faster than measured. If no
//! trial passes and no valid trial failed below the lowest tester-bound rate (the tester could
//! not send even at the lowest rate tried), the search fails with [`ProcedureError::TesterLimit`].
//!
//! Three methods ([`SearchMethod`]):
//!
//! * `Binary`: RFC 2544. Optionally probe `max_rate` first (one trial when the DUT handles line
//!   rate). Then bisect: low := mid on pass, high := mid on fail, until high - low <= error. The
//!   result is `low`; if `low` is still `min_rate` > 0 and untested, it is tested once.
//! * `ShortThenConfirm`: the same search with trials of `short_s`, then one full-length trial at
//!   the result. **Rule when that confirmation fails**: the failed rate r becomes the upper bound;
//!   full-length trials go down from it in steps that double (r - e, r - 3e, r - 7e, ...: each
//!   step is twice the previous, starting at e = `error`) until one passes or `min_rate` fails;
//!   then full-length bisection between the last pass and the lowest fail until the width is at
//!   most `error`. So every reported throughput passed a full-length trial.
//! * `Accelerated`: in the spirit of MLRsearch (RFC 9971, draft-ietf-bmwg-mlrsearch). Phases with
//!   trial durations growing geometrically from `initial_s` to the full duration and target
//!   widths halving down to `error` (phase i of P has width error x 2^(P-1-i)). Phase 0 first
//!   tries `max_rate`; a failed trial gives a forwarding-rate estimate (rate x received / sent,
//!   the smallest over the directions), which is the next rate tried. A lower bound must pass at
//!   the phase's own duration (each phase starts by re-testing the previous phase's lower
//!   bound); an upper bound (a failure or a tester-bound rate) from a shorter trial stays
//!   valid, on the assumption that a longer trial never loses less (and a tester that cannot
//!   send a rate briefly cannot send it longer). Within a phase: with no lower bound yet, go
//!   down from the upper bound by doubling steps (never above the estimate of the last
//!   failure; a tester-bound rate gives no estimate); with a lower
//!   bound more than two up-steps below the upper bound, go up by doubling steps (starting at
//!   the phase's width); otherwise bisect. Only the
//!   last phase uses full-length trials, and it starts next to the edge, so it needs about two
//!   of them instead of log2(range / error).
//!
//! Every result lists every trial and the total trial-seconds.

use serde::{Deserialize, Serialize};
pub use xlat_results::throughput::{SearchMethod, ThroughputResult};
use xlat_trial::TrialSpec;

use crate::error::{config, ProcedureError};
use crate::runner::{Progress, TrialRunner};
use crate::trial::{check_duration, check_tolerance, Session};
use xlat_results::bound::Bound;
use xlat_results::Procedure;

pub use xlat_results::defaults::{DEFAULT_RETRIES, DEFAULT_TIMEOUT_MS};
/// RFC 2544 / siitperf trial duration, seconds.
pub const DEFAULT_DURATION_S: f64 = Procedure::Throughput.defaults().duration_s;

/// The parameters of a throughput search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThroughputConfig {
    /// Frame size, full trial duration, timeout, burst, PDV frame timeout; `rate` is ignored and
    /// `latency` is cleared.
    pub trial: TrialSpec,
    pub min_rate: u64,
    pub max_rate: u64,
    /// The search stops when high - low <= error (frames/s), at least 1.
    pub error: u64,
    /// Allowed loss per direction as a fraction of sent frames; 0 is RFC 2544.
    pub loss_tolerance: f64,
    pub retries: u32,
    /// Try `max_rate` before bisecting.
    pub probe_max_first: bool,
    pub method: SearchMethod,
}

impl ThroughputConfig {
    /// Defaults: 60 s trials, 2000 ms timeout, min rate 0, no loss tolerated, 3 retries, binary.
    pub fn new(frame_size: usize, max_rate: u64, error: u64) -> ThroughputConfig {
        ThroughputConfig {
            trial: TrialSpec::new(frame_size, max_rate, DEFAULT_DURATION_S, DEFAULT_TIMEOUT_MS),
            min_rate: 0,
            max_rate,
            error,
            loss_tolerance: 0.0,
            retries: DEFAULT_RETRIES,
            probe_max_first: true,
            method: SearchMethod::Binary,
        }
    }

    pub fn validate(&self) -> Result<(), ProcedureError> {
        if self.max_rate == 0 {
            return config("the maximum rate must be above 0 frames/s");
        }
        if self.min_rate > self.max_rate {
            return config(format!(
                "the minimum rate ({}) is above the maximum rate ({})",
                self.min_rate, self.max_rate
            ));
        }
        if self.error == 0 {
            return config("the error of the binary search must be at least 1 frame/s");
        }
        check_tolerance(self.loss_tolerance)?;
        check_duration("the trial duration", self.trial.duration_s)?;
        match self.method {
            SearchMethod::Binary => {}
            SearchMethod::ShortThenConfirm { short_s } => {
                check_duration("the short trial duration", short_s)?;
                if short_s > self.trial.duration_s {
                    return config("the short trial duration is longer than the full one");
                }
            }
            SearchMethod::Accelerated { initial_s, phases } => {
                check_duration("the initial trial duration", initial_s)?;
                if initial_s > self.trial.duration_s {
                    return config("the initial trial duration is longer than the full one");
                }
                if !(1..=16).contains(&phases) {
                    return config(format!("the accelerated search needs 1 to 16 phases, not {phases}"));
                }
            }
        }
        Ok(())
    }

    fn spec(&self, rate: u64, duration_s: f64) -> TrialSpec {
        TrialSpec {
            rate,
            duration_s,
            latency: None,
            ..self.trial.clone()
        }
    }
}

/// Search the throughput.
pub fn throughput(
    runner: &mut dyn TrialRunner,
    cfg: &ThroughputConfig,
    progress: &mut dyn Progress,
) -> Result<ThroughputResult, ProcedureError> {
    cfg.validate()?;
    let mut s = Session::new(runner, progress, "throughput", cfg.retries).accepts_late();
    let full = cfg.trial.duration_s;
    let Bounds {
        low: lower,
        high: upper,
        low_ok: ok,
    } = match cfg.method {
        SearchMethod::Binary => binary(&mut s, cfg, full, "search")?,
        SearchMethod::ShortThenConfirm { short_s } => short_then_confirm(&mut s, cfg, short_s)?,
        SearchMethod::Accelerated { initial_s, phases } => accelerated(&mut s, cfg, initial_s, phases)?,
    };
    let lower = if ok { lower } else { 0 };
    if lower == 0 {
        // Nothing passed. A DUT that failed a valid trial below every tester-bound rate has a
        // throughput of 0; otherwise the tester could not send even at the lowest rate tried.
        if let Some(inv) = &s.lowest_invalid {
            if !s.trials.iter().any(|t| t.pass == Some(false) && t.rate < inv.rate) {
                return Err(inv.error());
            }
        }
    }
    // A rate the tester could not offer on time: every attempt invalid, or a pass only at a
    // lower rate it really offered.
    let late = s
        .trials
        .iter()
        .filter(|t| t.passed_at.is_some_and(|a| a < t.rate) && t.rate > lower)
        .map(|t| t.rate)
        .min();
    let tester_bound = s.lowest_invalid.as_ref().map(|i| i.rate).into_iter().chain(late).min();
    let bounded_by_tester = tester_bound == Some(upper) && upper.saturating_sub(lower) <= cfg.error;
    // Nothing the DUT failed above the figure: the tester's limit is what ended the search.
    let dut_failed_above = s.trials.iter().any(|t| t.pass == Some(false) && t.rate > lower);
    let bound = Bound::of_search(
        lower,
        upper,
        cfg.max_rate,
        tester_bound.filter(|_| bounded_by_tester || !dut_failed_above),
        &s.trials,
    );
    Ok(ThroughputResult {
        frame_size: cfg.trial.frame_size,
        method: cfg.method.clone(),
        throughput: lower,
        lower,
        upper,
        error: cfg.error,
        loss_tolerance: cfg.loss_tolerance,
        duration_s: full,
        trial_seconds: s.trial_seconds,
        elapsed_s: s.elapsed_s,
        tester_bound,
        bounded_by_tester,
        bound,
        trials: s.trials,
    })
}

/// What a search trial said about its rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Pass,
    /// A trial that ended late without loss: a pass at the rate the tester offered, below the
    /// one asked (the bisection takes it as its lower bound; elsewhere it counts as the
    /// tester's limit at the rate asked).
    PassAt(u64),
    /// The DUT lost too much.
    Fail,
    /// Every attempt was invalid: the tester cannot send at this rate (an upper bound, not a
    /// failure).
    TesterBound,
}

impl Verdict {
    fn of(pass: Option<bool>, passed_at: Option<u64>) -> Verdict {
        match (pass, passed_at) {
            (Some(true), Some(at)) => Verdict::PassAt(at),
            (Some(true), None) => Verdict::Pass,
            (Some(false), _) => Verdict::Fail,
            (None, _) => Verdict::TesterBound,
        }
    }
}

fn steps_left(low: u64, high: u64, width: u64) -> f64 {
    let mut n = 0.0;
    let mut w = high.saturating_sub(low);
    while w > width && n < 64.0 {
        w /= 2;
        n += 1.0;
    }
    n
}

/// One trial at `rate` (retried while invalid).
fn probe(
    s: &mut Session,
    cfg: &ThroughputConfig,
    rate: u64,
    duration_s: f64,
    phase: &str,
    bounds: (u64, u64),
    remaining_s: Option<f64>,
) -> Result<Verdict, ProcedureError> {
    s.announce(phase, rate, bounds.0, bounds.1, remaining_s);
    let o = s.run(&cfg.spec(rate, duration_s), phase, cfg.loss_tolerance)?;
    Ok(Verdict::of(o.pass, o.passed_at))
}

/// A search interval: `low` passed (or is assumed), `high` failed, is tester-bound, or is
/// assumed. What a search returns: its last interval.
struct Bounds {
    low: u64,
    high: u64,
    /// `low` passed a trial of the duration searched with.
    low_ok: bool,
}

impl Bounds {
    /// `low` passed, `high` did not (or is the maximum).
    fn passed(low: u64, high: u64) -> Bounds {
        Bounds { low, high, low_ok: true }
    }

    /// Nothing passed; `high` is the lowest rate that failed.
    fn nothing(high: u64) -> Bounds {
        Bounds {
            low: 0,
            high,
            low_ok: false,
        }
    }

    /// The interval a search ends with: a lower bound of 0 counts as passed (nothing to try).
    fn settled(self) -> Bounds {
        Bounds {
            low_ok: self.low_ok || self.low == 0,
            ..self
        }
    }
}

/// Bisect `b` with trials of `duration_s` until high - low <= width.
fn bisect(s: &mut Session, cfg: &ThroughputConfig, duration_s: f64, phase: &str, b: &mut Bounds, width: u64) -> Result<(), ProcedureError> {
    let per_trial = duration_s + cfg.trial.timeout_ms as f64 / 1000.0;
    while b.high - b.low > width {
        let mid = b.low + (b.high - b.low) / 2;
        if mid == b.low {
            break;
        }
        let remaining = steps_left(b.low, b.high, width) * per_trial;
        match probe(s, cfg, mid, duration_s, phase, (b.low, b.high), Some(remaining))? {
            Verdict::Pass => {
                b.low = mid;
                b.low_ok = true;
            }
            // Late but lossless: what the tester offered passed; the rate asked stays open
            // above it (and an offer no higher than the lower bound says nothing new).
            Verdict::PassAt(at) if at > b.low => {
                b.low = at;
                b.low_ok = true;
            }
            _ => b.high = mid,
        }
    }
    Ok(())
}

/// RFC 2544 binary search with trials of `duration_s`.
fn binary(s: &mut Session, cfg: &ThroughputConfig, duration_s: f64, phase: &str) -> Result<Bounds, ProcedureError> {
    let mut b = Bounds {
        low: cfg.min_rate,
        high: cfg.max_rate,
        low_ok: false,
    };
    let per_trial = duration_s + cfg.trial.timeout_ms as f64 / 1000.0;
    if cfg.probe_max_first {
        let remaining = (1.0 + steps_left(b.low, b.high, cfg.error)) * per_trial;
        match probe(s, cfg, b.high, duration_s, phase, (b.low, b.high), Some(remaining))? {
            Verdict::Pass => return Ok(Bounds::passed(b.high, b.high)),
            // What the tester could offer of the maximum passed: the search goes on above it.
            Verdict::PassAt(at) if at > b.low => (b.low, b.low_ok) = (at, true),
            _ => {}
        }
    }
    bisect(s, cfg, duration_s, phase, &mut b, cfg.error)?;
    if !b.low_ok && b.low > 0 {
        match probe(s, cfg, b.low, duration_s, phase, (b.low, b.high), Some(per_trial))? {
            Verdict::Pass => b.low_ok = true,
            Verdict::PassAt(at) => (b.low, b.low_ok) = (at, true),
            _ => b.high = b.low,
        }
    }
    Ok(b.settled())
}

fn short_then_confirm(s: &mut Session, cfg: &ThroughputConfig, short_s: f64) -> Result<Bounds, ProcedureError> {
    let full = cfg.trial.duration_s;
    let per_trial = full + cfg.trial.timeout_ms as f64 / 1000.0;
    let Bounds { low, high, low_ok } = binary(s, cfg, short_s, "search")?;
    if low == 0 || !low_ok {
        return Ok(Bounds::nothing(high));
    }
    match probe(s, cfg, low, full, "confirm", (low, high), Some(per_trial))? {
        Verdict::Pass => return Ok(Bounds::passed(low, high)),
        // Late without loss: confirmed at the rate the tester offered.
        Verdict::PassAt(at) => return Ok(Bounds::passed(at, high)),
        _ => {}
    }
    // Confirmation failed (or the tester could not send that long): go down from it with
    // doubling steps, full length.
    let mut high_full = low;
    let mut step = cfg.error;
    let low_full;
    loop {
        let r = high_full.saturating_sub(step).max(cfg.min_rate);
        if r == 0 {
            low_full = 0;
            break;
        }
        if r >= high_full {
            // min_rate itself failed.
            return Ok(Bounds::nothing(high_full));
        }
        match probe(s, cfg, r, full, "confirm-down", (cfg.min_rate, high_full), None)? {
            Verdict::Pass => {
                low_full = r;
                break;
            }
            Verdict::PassAt(at) => {
                low_full = at;
                break;
            }
            _ => {}
        }
        high_full = r;
        step = step.saturating_mul(2);
    }
    let mut b = Bounds {
        low: low_full,
        high: high_full,
        low_ok: low_full > 0,
    };
    bisect(s, cfg, full, "confirm-bisect", &mut b, cfg.error)?;
    Ok(b.settled())
}

/// The forwarding-rate estimate of a failed trial: rate x received / sent, smallest direction.
fn forwarding_estimate(report: &xlat_trial::TrialReport, rate: u64) -> u64 {
    report
        .directions()
        .map(|(_, d)| {
            if d.counts.sent == 0 {
                rate
            } else {
                (rate as f64 * d.counts.received.min(d.counts.sent) as f64 / d.counts.sent as f64).floor() as u64
            }
        })
        .min()
        .unwrap_or(rate)
}

fn accelerated(s: &mut Session, cfg: &ThroughputConfig, initial_s: f64, phases: u32) -> Result<Bounds, ProcedureError> {
    let full = cfg.trial.duration_s;
    let timeout_s = cfg.trial.timeout_ms as f64 / 1000.0;
    let p = phases.max(1);
    let durations: Vec<f64> = (0..p)
        .map(|i| {
            if p == 1 || i == p - 1 {
                full
            } else {
                initial_s * (full / initial_s).powf(f64::from(i) / f64::from(p - 1))
            }
        })
        .collect();
    let widths: Vec<u64> = (0..p).map(|i| cfg.error.saturating_mul(1u64 << (p - 1 - i).min(62))).collect();
    let (min, max) = (cfg.min_rate, cfg.max_rate);
    let mut high: Option<u64> = None;
    let mut cand: Option<u64> = Some(max);
    let mut est: Option<u64> = None;
    let mut low: Option<u64> = None;
    for i in 0..p as usize {
        let (d, w) = (durations[i], widths[i]);
        let phase = format!("mlr-{i}");
        low = None;
        let (mut step_up, mut step_down) = (w, w);
        loop {
            if let Some(l) = low {
                match high {
                    None if l >= max => break,
                    Some(h) if h - l <= w => break,
                    _ => {}
                }
            } else if high.is_some_and(|h| h <= min) {
                // min_rate failed: nothing passes.
                return Ok(Bounds::nothing(high.unwrap_or(min)));
            }
            let h_eff = high.unwrap_or(max.saturating_add(1));
            let (r, going_up, stepping_down) = match low {
                None => match cand.take() {
                    Some(c) if c < h_eff => (c.max(min), false, false),
                    _ => {
                        let mut r = h_eff.saturating_sub(step_down);
                        if let Some(e) = est {
                            r = r.min(e);
                        }
                        (r.max(min).min(h_eff.saturating_sub(1)), false, true)
                    }
                },
                Some(l) => {
                    // Far from the upper bound: go up by doubling steps; near it: bisect.
                    let up = l.saturating_add(step_up).min(max);
                    if h_eff - l > step_up.saturating_mul(2) && up > l {
                        (up, true, false)
                    } else {
                        (l + (h_eff - l) / 2, false, false)
                    }
                }
            };
            if r == 0 {
                low = Some(0);
                continue;
            }
            if low.is_some_and(|l| r <= l) {
                // The interval cannot be split further.
                break;
            }
            let later: f64 = durations[i + 1..].iter().map(|d| 2.0 * (d + timeout_s)).sum();
            let remaining = steps_left(low.unwrap_or(min), h_eff.min(max), w) * (d + timeout_s) + later;
            s.announce(&phase, r, low.unwrap_or(min), h_eff.min(max), Some(remaining));
            let outcome = s.run(&cfg.spec(r, d), &phase, cfg.loss_tolerance)?;
            match Verdict::of(outcome.pass, outcome.passed_at) {
                Verdict::Pass => {
                    low = Some(r);
                    if going_up {
                        step_up = step_up.saturating_mul(2);
                    }
                }
                verdict => {
                    high = Some(r);
                    if verdict == Verdict::Fail {
                        // An invalid trial's counts say nothing about the DUT: no estimate.
                        est = Some(forwarding_estimate(&outcome.report, r));
                    }
                    if stepping_down {
                        step_down = step_down.saturating_mul(2);
                    }
                }
            }
        }
        cand = low;
        est = None;
    }
    match low {
        Some(l) => Ok(Bounds::passed(l, high.unwrap_or(l))),
        None => Ok(Bounds::nothing(high.unwrap_or(min))),
    }
}
