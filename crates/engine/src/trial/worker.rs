//! The per-core loop of a trial (DPDK l2fwd's `l2fwd_main_loop` is the model): one thread per
//! core runs the senders and receivers placed on that core, reading the clock once per pass,
//! until they are finished, a worker failed, the user interrupted, or the trial's hard deadline
//! passed. Every wait of a trial ends at that deadline.

use super::error::Res;
use super::phase::dir_index;
use super::receiver::Receiver;
use super::sender::Sender;
use crate::clock::Clock;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use xlat_io::{RxQueue, TxQueue};

/// Kernel transmit stamps waiting that make a busy sender read them.
const STAMPS_PER_READ: u64 = 128;

/// The roles one core plays.
pub(super) struct Worker<'s, 'n, T: TxQueue, R: RxQueue> {
    pub(super) core: usize,
    pub(super) senders: Vec<Sender<'s, T>>,
    pub(super) receivers: Vec<Receiver<'s, 'n, R, T>>,
    /// The loop ended at the hard deadline with a receiver not finished.
    pub(super) cut_off: bool,
}

/// What the workers of a trial share.
pub(super) struct Shared<'a> {
    pub(super) clock: Clock,
    /// When the first frame is due (ticks).
    pub(super) t0: u64,
    /// Receivers keep receiving this long after their direction's sender ended (ticks).
    pub(super) timeout: u64,
    /// No worker runs past this (ticks): the senders' give-up time plus the timeout plus a
    /// margin.
    pub(super) hard_end: u64,
    /// Per direction (forward, reverse): when its last sender ended (ticks); 0 while sending.
    pub(super) done: [AtomicU64; 2],
    /// Per direction: its senders (one per queue) still sending.
    pub(super) senders_left: [AtomicUsize; 2],
    /// Per direction: the latest end of its senders so far (ticks).
    pub(super) last_end: [AtomicU64; 2],
    /// The active directions.
    pub(super) n_active: usize,
    /// How long a sender keeps reading the kernel's transmit stamps after its last frame
    /// (ticks).
    pub(super) stamp_wait: u64,
    /// Set by a worker that failed: the others stop at once.
    pub(super) failed: AtomicBool,
    /// Set from outside (Ctrl-C): every worker stops at once.
    pub(super) abort: &'a AtomicBool,
}

impl Shared<'_> {
    /// A sender of direction `d` ended at `end`: the direction is done when it was the last.
    fn sender_ended(&self, d: usize, end: u64) {
        self.last_end[d].fetch_max(end, Ordering::AcqRel);
        if self.senders_left[d].fetch_sub(1, Ordering::AcqRel) == 1 {
            self.done[d].store(self.last_end[d].load(Ordering::Acquire), Ordering::Release);
        }
    }

    /// True when the trial must stop now, finished or not.
    #[inline]
    fn stop(&self) -> bool {
        self.failed.load(Ordering::Relaxed) || self.abort.load(Ordering::Relaxed)
    }
}

/// Run the roles of `w` until they are finished (or the trial stops); on an error, tell the
/// other workers to stop too.
pub(super) fn run_worker<T: TxQueue, R: RxQueue>(w: &mut Worker<'_, '_, T, R>, sh: &Shared<'_>) -> Res<()> {
    let r = worker_loop(w, sh);
    if r.is_err() {
        sh.failed.store(true, Ordering::Relaxed);
    }
    r
}

fn worker_loop<T: TxQueue, R: RxQueue>(w: &mut Worker<'_, '_, T, R>, sh: &Shared<'_>) -> Res<()> {
    for s in &mut w.senders {
        s.tx.dropped()?; // from here on, what the backend drops is this trial's
    }
    for r in &mut w.receivers {
        r.rx.dropped()?;
    }
    loop {
        let now = sh.clock.now();
        for s in &mut w.senders {
            let sent = s.sent;
            if s.end == 0 {
                s.step(&sh.clock, sh.t0, now)?;
                if s.end != 0 {
                    sh.sender_ended(dir_index(s.dir), s.end);
                }
            }
            // Kernel transmit stamps are read when the sender has nothing to send this pass,
            // or when many are waiting (PDV: one read for several bursts).
            if s.stamps_pending() && (s.sent == sent || s.stamps_asked - s.stamps_got >= STAMPS_PER_READ) {
                s.collect_stamps()?;
            }
        }
        for r in &mut w.receivers {
            r.poll(&sh.clock)?;
        }
        if finished(w, sh, now) || sh.stop() {
            break;
        }
        if now >= sh.hard_end {
            w.cut_off = true;
            break;
        }
    }
    for s in &mut w.senders {
        s.dropped = s.tx.dropped()?;
    }
    for r in &mut w.receivers {
        r.count.report.counts.tester_rx_dropped = r.rx.dropped()?;
    }
    Ok(())
}

/// Every sender of `w` has ended, and every receiver has waited out the timeout after its
/// direction's sender ended (a receiver that only answers ARP/NDP: until every sender ended).
#[inline]
fn finished<T: TxQueue, R: RxQueue>(w: &Worker<'_, '_, T, R>, sh: &Shared<'_>, now: u64) -> bool {
    if w.senders.iter().any(|s| s.end == 0) {
        return false;
    }
    // Kernel transmit stamps still to come: wait for them a little (a stamp that never comes
    // makes the trial invalid, see `assemble`).
    if w.senders
        .iter()
        .any(|s| s.stamps_pending() && now < s.end.saturating_add(sh.stamp_wait))
    {
        return false;
    }
    w.receivers.iter().all(|r| match r.dir {
        Some(d) => {
            let end = sh.done[dir_index(d)].load(Ordering::Acquire);
            end != 0 && now >= end.saturating_add(sh.timeout)
        }
        None => sh.done.iter().filter(|e| e.load(Ordering::Acquire) != 0).count() >= sh.n_active,
    })
}
