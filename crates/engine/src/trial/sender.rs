//! The sender of one direction: frame `i` is due at t0 + i / rate (RFC 2544 section 23); a late
//! sender catches up at once (no smoothing), one burst per call.

use super::schedule::{Schedule, TagPlan};
use super::Res;
use crate::clock::Clock;
use std::sync::atomic::{AtomicU64, Ordering};
use xlat_io::TxQueue;
use xlat_traffic::{BurstScratch, Direction, DirectionStream};

/// Transmit timestamps of the last `TS_RING` frames of a direction, for per-frame delays: entry
/// `seq % TS_RING` holds `tsc << 8 | (seq / TS_RING) % 256`, so a receiver can tell a stale
/// entry from the frame's own.
pub(super) const TS_RING: usize = 1 << 22;
const TS_SHIFT: u32 = 22;

/// A transmit stamp entry for frame `seq` sent at `tsc`.
#[inline]
pub(super) fn ts_entry(seq: u64, tsc: u64) -> u64 {
    (tsc << 8) | ts_epoch(seq)
}

/// The epoch byte an entry for frame `seq` must carry.
#[inline]
pub(super) fn ts_epoch(seq: u64) -> u64 {
    (seq >> TS_SHIFT) & 0xff
}

/// How far each frame's own transmit stamp lies after the start of its burst: what one stamp per
/// burst would have added to the frame's measured delay.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct StampSkew {
    pub(super) frames: u64,
    pub(super) sum_ticks: u64,
    pub(super) max_ticks: u64,
}

impl StampSkew {
    #[inline]
    fn add(&mut self, ticks: u64) {
        self.frames += 1;
        self.sum_ticks = self.sum_ticks.saturating_add(ticks);
        self.max_ticks = self.max_ticks.max(ticks);
    }
}

/// One direction's sender.
pub(super) struct Sender<'s, T: TxQueue> {
    pub(super) dir: Direction,
    pub(super) tx: &'s mut T,
    pub(super) stream: DirectionStream,
    /// The precomputed fields of the burst being sent.
    pub(super) scratch: BurstScratch,
    pub(super) total: u64,
    /// The trial tag in the top byte of the 64-bit field.
    pub(super) tag: u64,
    pub(super) burst: usize,
    pub(super) schedule: Schedule,
    /// The sender stops trying at this time (ticks) even with frames left: the backend takes
    /// none (link down, port gone), and the trial is invalid anyway.
    pub(super) give_up_at: u64,
    pub(super) tags: Option<TagPlan>,
    /// Latency tags' transmit stamps.
    pub(super) tx_ts: &'s [AtomicU64],
    /// Per-frame transmit stamps (PDV), empty when not measured.
    pub(super) frame_ts: &'s [AtomicU64],
    // What it did:
    /// Frames the backend accepted.
    pub(super) sent: u64,
    pub(super) max_lag: u64,
    /// When the last frame was handed over, or when the sender gave up (ticks); 0 while sending.
    pub(super) end: u64,
    pub(super) gave_up: bool,
    pub(super) skew: StampSkew,
    /// Frames the backend accepted but did not transmit (read when the trial ends).
    pub(super) dropped: u64,
}

impl<T: TxQueue> Sender<'_, T> {
    /// Send the frames that are due at `now` (at most one burst). Prompt catch-up: when late,
    /// the next call sends the next burst at once.
    #[inline]
    pub(super) fn step(&mut self, clock: &Clock, t0: u64, now: u64) -> Res<()> {
        if now < t0 {
            return Ok(());
        }
        if now >= self.give_up_at {
            self.gave_up = true;
            self.end = now;
            self.tx.flush()?;
            return Ok(());
        }
        let due = self.schedule.due(now - t0).min(self.total);
        if due <= self.sent {
            return Ok(());
        }
        let sched = t0 + self.schedule.time_of(self.sent);
        self.max_lag = self.max_lag.max(now.saturating_sub(sched));
        let k = ((due - self.sent) as usize).min(self.burst);
        let (seq0, tag) = (self.sent, self.tag);
        let frames = self.stream.burst(seq0, k, &mut self.scratch);
        let n = if self.tags.is_none() && self.frame_ts.is_empty() {
            self.tx
                .tx_burst_cookie(k, |i, buf, cookie| frames.write(i, tag | (seq0 + i as u64), buf, cookie))?
        } else {
            // Each frame is stamped when it is in the backend's buffer, before the backend
            // sends the burst: on veth a receiver may see the frame before this call returns.
            // A frame the backend does not take is stamped again when it is offered again.
            let (tags, tx_ts, frame_ts, skew) = (self.tags, self.tx_ts, self.frame_ts, &mut self.skew);
            self.tx.tx_burst_cookie(k, |i, buf, cookie| {
                let seq = seq0 + i as u64;
                let len = frames.write(i, tag | seq, buf, cookie);
                let t = clock.now();
                if let Some(j) = tags.and_then(|p| p.index(seq)) {
                    tx_ts[j].store(t, Ordering::Relaxed);
                }
                if !frame_ts.is_empty() {
                    frame_ts[seq as usize % TS_RING].store(ts_entry(seq, t), Ordering::Release);
                    skew.add(t.saturating_sub(now));
                }
                len
            })?
        } as u64;
        self.sent += n;
        if self.sent == self.total {
            self.tx.flush()?;
            self.end = clock.now();
        }
        Ok(())
    }
}
