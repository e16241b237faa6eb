//! Turning what the workers counted into the trial's report, and judging its validity.

use super::phase::dir_index;
use super::phase::TrialPlan;
use super::receiver::{PdvState, Receiver};
use super::ring::TAG_CATCH_UP;
use super::sender::{Sender, StampSkew};
use super::worker::{Shared, Worker};
use crate::clock::Clock;
use std::sync::atomic::Ordering;
use xlat_io::{RxQueue, TxQueue};
use xlat_traffic::Direction;
use xlat_trial::report::{PdvReport, TrialReport};
use xlat_trial::validity::{MAX_UNTIMED_SHARE, MIN_TAGS};
use xlat_trial::{Rule, TOLERANCE};

/// A sender still sending this long after the duration x TOLERANCE limit gives up.
pub(super) const GIVE_UP_S: f64 = 0.5;
/// RFC 8219 section 7.3.1: PDV takes the 99.9th percentile, so with more than 0.1 % of the
/// frames lost (infinite delay) PDV is infinite; the same holds for IPDV here.
const PDV_LOST_LIMIT: f64 = 0.001;

/// Turn what the workers counted into the trial's report, judging its validity.
pub(super) fn assemble<T: TxQueue, R: RxQueue>(
    trial: &TrialPlan<'_>,
    sh: &Shared<'_>,
    workers: Vec<Worker<'_, '_, T, R>>,
) -> (TrialReport, [u64; 2]) {
    let clock = sh.clock;
    let spec = trial.spec;
    let mut report = TrialReport::of(spec);
    let mut invalid = |rule: Rule, why: String| report.invalidate_by(rule, why);
    if workers.iter().any(|w| w.cut_off) {
        invalid(Rule::Deadline, format!(
            "the trial was stopped at its deadline ({:.3} s after the start) before every receiver had waited out the timeout, the test is invalid",
            clock.secs(sh.hard_end - sh.t0)
        ));
    }
    // One sender and one receiver per direction: the queues' own merged into the first's.
    let mut senders: Vec<Sender<'_, T>> = Vec::new();
    let mut receivers: Vec<Receiver<'_, '_, R, T>> = Vec::new();
    for w in workers {
        for s in w.senders {
            match senders.iter_mut().find(|m| m.dir == s.dir) {
                Some(m) => m.absorb(&s),
                None => senders.push(s),
            }
        }
        for mut r in w.receivers.into_iter().filter(|r| r.dir.is_some()) {
            r.count.settle_all(r.frame_ts);
            match receivers.iter_mut().find(|m| m.dir == r.dir) {
                Some(m) => m.count.absorb(r.count),
                None => receivers.push(r),
            }
        }
    }
    let limit = spec.duration_s * TOLERANCE;
    // What slows a sender that the user can change: the kernel stamping every frame (PDV).
    let hint = if trial.kernel.is_some() && spec.pdv.is_some() {
        " (the kernel stamps every frame for PDV, which slows the sender: tester.timestamps = user sends faster)"
    } else {
        ""
    };
    let mut dirs = Vec::new();
    let mut learnt = [0u64; 2];
    for s in senders {
        let Some(i) = receivers.iter().position(|r| r.dir == Some(s.dir)) else {
            continue;
        };
        let count = receivers.swap_remove(i).count;
        let d = s.dir;
        learnt[dir_index(d)] = count.learnt;
        let mut dr = count.report;
        dr.counts.sent = s.sent;
        dr.counts.lost = s.sent.saturating_sub(dr.counts.received);
        dr.counts.tester_tx_dropped = s.dropped;
        dr.send_duration_s = clock.secs(s.end.saturating_sub(sh.t0));
        dr.counts.achieved_rate = if dr.send_duration_s > 0.0 {
            s.sent as f64 / dr.send_duration_s
        } else {
            0.0
        };
        dr.counts.max_lag_ns = clock.ns(s.lag.max());
        dr.counts.lag_p999_ns = clock.ns(s.lag.quantile(0.999));
        dr.counts.stalls = s.lag.stalls();
        dr.counts.stamps_missing =
            s.stamps_asked.saturating_sub(s.stamps_got) + count.rx_unstamped + count.pdv.as_ref().map_or(0, |p| p.unstamped);
        if dr.counts.lost > 0 {
            dr.last_lost_seq = count.seen.last_missing(s.sent);
        }
        dr.max_rx_gap_ns = clock.ns(count.gap.max);
        if count.gap.max > 0 {
            dr.max_rx_gap_end_ns = clock.ns(count.gap.max_end.saturating_sub(sh.t0));
        }
        if let Some(p) = count.pdv {
            dr.pdv = Some(pdv_report(p, dr.counts.lost, s.sent, &s.skew, &clock));
        }
        if s.gave_up {
            invalid(Rule::EndOfSending, format!(
                "{} sending stopped {:.1} s after the {:.10} seconds limit with {} of {} frames sent (the port took no more){hint}, the test is invalid",
                d.title(),
                GIVE_UP_S,
                limit,
                s.sent,
                s.total
            ));
        } else if dr.send_duration_s > limit {
            invalid(
                Rule::EndOfSending,
                format!(
                    "{} sending exceeded the {:.10} seconds limit (took {:.6} s){hint}, the test is invalid",
                    d.title(),
                    limit,
                    dr.send_duration_s
                ),
            );
        }
        // The lag alone harms nothing: frames lost that were sent in a catch-up from beyond the
        // bound (or while the DUT's queue drained after it) may be the tester's burst.
        dr.counts.catch_ups = s.windows.count;
        dr.counts.catch_up_burst = s.meter.max;
        let drain = spec.catch_up().map_or(0, |c| c.burst_frames);
        let harmed = s.windows.harmed(drain, s.total);
        dr.counts.lost_in_catch_up = harmed
            .iter()
            .map(|&(a, b)| count.seen.missing_in(a, b))
            .sum::<u64>()
            .min(dr.counts.lost);
        if dr.counts.lost_in_catch_up > 0 {
            let bound = spec.send_lag_bound_ns().unwrap_or(0);
            invalid(
                Rule::LagHarm,
                format!(
                    "{}: {} of the {} frames lost were sent while the sender caught up from {} lag{} beyond the {:.3} ms allowed (tester.max_send_lag_{}, {:.0} ms at most), or right after: the loss may be the tester's burst, not the DUT's, the test is invalid",
                    d.title(),
                    dr.counts.lost_in_catch_up,
                    dr.counts.lost,
                    dr.counts.catch_ups,
                    if dr.counts.catch_ups == 1 { "" } else { "s" },
                    bound as f64 / 1e6,
                    if spec.max_send_lag_ns == Some(bound) { "us" } else { "frames" },
                    dr.counts.max_lag_ns as f64 / 1e6,
                ),
            );
        }
        if dr.counts.tester_tx_dropped + dr.counts.tester_rx_dropped > 0 {
            invalid(
                Rule::TesterDrops,
                format!(
                    "{}: the tester itself dropped frames ({} not transmitted, {} not received by its port), the test is invalid",
                    d.title(),
                    dr.counts.tester_tx_dropped,
                    dr.counts.tester_rx_dropped
                ),
            );
        }
        if dr.counts.stamps_missing > 0 {
            invalid(
                Rule::StampsMissing,
                format!(
                "{}: {} frames to be timed got no kernel timestamp (transmit or receive), so their delays are unknown, the test is invalid",
                d.title(),
                dr.counts.stamps_missing
            ),
            );
        }
        if dr.counts.foreign > 0 {
            invalid(Rule::Foreign, format!(
                "{}: {} test frames carried a trial tag this tester never used: another tester is sending into these ports (or frames of an earlier run came back late), the test is invalid",
                d.title(),
                dr.counts.foreign
            ));
        }
        if let Some(p) = trial.tags {
            // A tag sent in a catch-up is left out (its delay includes the tester's burst).
            let txs = &trial.tx_ts[dir_index(d)];
            dr.latency_ns = (0..p.count as usize)
                .filter_map(|i| {
                    let (t, r) = (txs[i].load(Ordering::Relaxed), count.rx_ts[i]);
                    if t & TAG_CATCH_UP != 0 {
                        return None;
                    }
                    Some(if t != 0 && r != 0 {
                        clock.ns(r.saturating_sub(t))
                    } else {
                        u64::MAX
                    })
                })
                .collect();
            let left_out = p.count - dr.latency_ns.len() as u64;
            dr.counts.untimed_catch_up += left_out;
            if left_out > 0 && (dr.latency_ns.len() as u64) < MIN_TAGS.min(p.count) {
                invalid(
                    Rule::TooFewTimed,
                    format!(
                        "{}: {} of the {} latency tags were sent while the sender caught up from a stall and are left out, leaving {} (fewer than {}), the test is invalid",
                        d.title(),
                        left_out,
                        p.count,
                        dr.latency_ns.len(),
                        MIN_TAGS.min(p.count)
                    ),
                );
            }
        }
        if let Some(p) = &dr.pdv {
            dr.counts.untimed_catch_up += p.untimed_catch_up;
            if p.untimed_catch_up as f64 > MAX_UNTIMED_SHARE * dr.counts.sent as f64 {
                invalid(
                    Rule::TooFewTimed,
                    format!(
                        "{}: {} of the {} frames were sent while the sender caught up from a stall and their delays are left out, more than {} %, the test is invalid",
                        d.title(),
                        p.untimed_catch_up,
                        dr.counts.sent,
                        MAX_UNTIMED_SHARE * 100.0
                    ),
                );
            }
        }
        dirs.push((d, dr));
    }
    for (d, dr) in dirs {
        match d {
            Direction::Forward => report.forward = Some(dr),
            Direction::Reverse => report.reverse = Some(dr),
        }
    }
    (report, learnt)
}

/// What a direction recorded of its delays: every lost frame (including those later than the
/// frame timeout) is recorded as an infinite delay (RFC 8219 section 7.3.1), so PDV is infinite
/// when more than 0.1 % of the frames were lost; IPDV is then marked infinite too. The
/// statistics are computed from the record by the results crate (`xlat_results::delay`).
pub(super) fn pdv_report(mut p: PdvState, lost: u64, sent: u64, skew: &StampSkew, clock: &Clock) -> PdvReport {
    p.delays.record_lost(lost);
    PdvReport {
        delays: p.delays,
        ipdv_infinite: sent > 0 && lost as f64 > PDV_LOST_LIMIT * sent as f64,
        ipdv: p.ipdv,
        timed: p.timed,
        late: p.late,
        untimed_catch_up: p.untimed,
        burst_stamp_skew_mean_ns: skew.sum_ticks.checked_div(skew.frames).map_or(0, |t| clock.ns(t)),
        burst_stamp_skew_max_ns: clock.ns(skew.max_ticks),
    }
}
