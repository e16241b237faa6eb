//! The sender of one direction, or of one queue of it: frame `i` is due at t0 + i / rate
//! (RFC 2544 section 23); a late sender catches up at once (no smoothing), one burst per call.
//!
//! With several queues per port, a direction's frames are split into chunks of consecutive
//! sequence numbers dealt out in turn ([`Split`]): queue `q` of `n` sends chunks `q`, `q + n`,
//! ..., each frame at its own time in the direction's schedule, so the queues together keep
//! the direction's rate and every frame keeps its one sequence number.

use super::catch_up::{Meter, Pace, Windows};
use super::error::Res;
use super::schedule::{Schedule, TagPlan};
use crate::clock::{Clock, RealtimeMap};
use std::sync::atomic::{AtomicU64, Ordering};
use xlat_io::TxQueue;
use xlat_traffic::{BurstScratch, Direction, DirectionStream, FrameWriter, WithWriter};
use xlat_trial::LagHistogram;
use xlat_wire::{classify, Rx};

/// Transmit timestamps of the last `TS_RING` frames of a direction, for per-frame delays: entry
/// `seq % TS_RING` holds `tsc << 8 | caught_up << 7 | (seq / TS_RING) % 128`, so a receiver can
/// tell a stale entry from the frame's own, and a frame sent in a catch-up (whose delay is left
/// out) from one sent on schedule.
pub(super) const TS_RING: usize = 1 << 22;
/// [`TS_RING`] is 2^TS_SHIFT: the epoch is the sequence number's bits above the ring's.
const TS_SHIFT: u32 = TS_RING.trailing_zeros();
/// In an entry: the frame was sent inside a catch-up window.
pub(super) const TS_CATCH_UP: u64 = 0x80;
/// In a latency tag's transmit stamp: the tag was sent inside a catch-up window.
pub(super) const TAG_CATCH_UP: u64 = 1 << 63;

/// The top byte of the 64-bit field carries a trial tag, so that a straggler from an earlier
/// trial is never counted in a later one; the low 56 bits are the sequence number.
pub(super) const TAG_SHIFT: u32 = 56;
pub(super) const SEQ_MASK: u64 = (1 << TAG_SHIFT) - 1;

/// A transmit stamp entry for frame `seq` sent at `tsc` (`catch_up`: inside a catch-up window).
#[inline]
pub(super) fn ts_entry(seq: u64, tsc: u64, catch_up: bool) -> u64 {
    (tsc << 8) | (u64::from(catch_up) * TS_CATCH_UP) | ts_epoch(seq)
}

/// The epoch bits an entry for frame `seq` must carry.
#[inline]
pub(super) fn ts_epoch(seq: u64) -> u64 {
    (seq >> TS_SHIFT) & 0x7f
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

/// Which frames of a direction one sender sends: chunks of `chunk` consecutive sequence
/// numbers, chunk `k` by queue `k % queues`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Split {
    pub(super) queue: u64,
    pub(super) queues: u64,
    pub(super) chunk: u64,
}

/// With one queue (`queues` 1) every method treats the direction as one chunk.
impl Split {
    /// The queue that sends frame `seq`.
    #[inline]
    pub(super) fn queue_of(&self, seq: u64) -> u64 {
        if self.queues <= 1 {
            0
        } else {
            (seq / self.chunk) % self.queues
        }
    }

    /// This queue's first frame.
    pub(super) fn first(&self) -> u64 {
        if self.queues <= 1 {
            0
        } else {
            self.queue * self.chunk
        }
    }

    /// After this queue sent frame `seq - 1`: its next frame (`seq` itself within a chunk,
    /// else the start of its next chunk).
    #[inline]
    fn next_from(&self, seq: u64) -> u64 {
        if self.queues <= 1 || !seq.is_multiple_of(self.chunk) {
            seq
        } else {
            seq.saturating_add((self.queues - 1).saturating_mul(self.chunk))
        }
    }

    /// The end of the chunk that frame `seq` is in.
    #[inline]
    fn chunk_end(&self, seq: u64) -> u64 {
        if self.queues <= 1 {
            u64::MAX
        } else {
            (seq / self.chunk + 1).saturating_mul(self.chunk)
        }
    }

    /// How many of a direction's `total` frames this queue sends.
    #[cfg(test)]
    pub(super) fn share(&self, total: u64) -> u64 {
        if self.queues <= 1 {
            return total;
        }
        let span = self.chunk * self.queues;
        let (rounds, rest) = (total / span, total % span);
        rounds * self.chunk + rest.saturating_sub(self.queue * self.chunk).min(self.chunk)
    }
}

/// One direction's sender (or one queue's share of it, see [`Split`]).
pub(super) struct Sender<'s, T: TxQueue> {
    pub(super) dir: Direction,
    pub(super) split: Split,
    /// The next frame this sender sends (a sequence number of the direction).
    pub(super) next: u64,
    pub(super) tx: &'s mut T,
    pub(super) stream: DirectionStream,
    /// The precomputed fields of the burst being sent.
    pub(super) scratch: BurstScratch,
    /// The direction's frames (all queues').
    pub(super) total: u64,
    /// The trial tag in the top byte of the 64-bit field.
    pub(super) tag: u64,
    pub(super) burst: usize,
    pub(super) schedule: Schedule,
    /// The sender stops trying at this time (ticks) even with frames left: the backend takes
    /// none (link down, port gone), and the trial is invalid anyway.
    pub(super) give_up_at: u64,
    /// Further behind than this (ticks) is a stall.
    pub(super) stall: u64,
    /// Further behind than this (ticks) opens a catch-up window (the trial's lag bound;
    /// `u64::MAX`: none).
    pub(super) bound: u64,
    /// The catch-up pace (`None`: no lag bound, siitperf's catch-up at once).
    pub(super) pace: Option<Pace>,
    pub(super) meter: Meter,
    pub(super) windows: Windows,
    pub(super) tags: Option<TagPlan>,
    /// Latency tags' transmit stamps.
    pub(super) tx_ts: &'s [AtomicU64],
    /// Per-frame transmit stamps (PDV), empty when not measured.
    pub(super) frame_ts: &'s [AtomicU64],
    /// With kernel stamps: their clock on the trial's ticks (`None`: stamped here).
    pub(super) kernel: Option<RealtimeMap>,
    // What it did:
    /// Kernel stamps asked for, and of them received.
    pub(super) stamps_asked: u64,
    pub(super) stamps_got: u64,
    /// Frames the backend accepted (of this sender's share).
    pub(super) sent: u64,
    /// How far behind its schedule each burst left (ticks).
    pub(super) lag: LagHistogram,
    /// When the last frame was handed over, or when the sender gave up (ticks); 0 while sending.
    pub(super) end: u64,
    pub(super) gave_up: bool,
    pub(super) skew: StampSkew,
    /// Frames the backend accepted but did not transmit (read when the trial ends).
    pub(super) dropped: u64,
}

impl<T: TxQueue> Sender<'_, T> {
    /// Take in what another queue's sender of the same direction did: the direction sent what
    /// both sent, ended when the later ended, gave up when either did.
    pub(super) fn absorb(&mut self, o: &Sender<'_, T>) {
        self.sent += o.sent;
        self.dropped += o.dropped;
        self.stamps_asked += o.stamps_asked;
        self.stamps_got += o.stamps_got;
        self.lag.merge(&o.lag);
        self.meter.max = self.meter.max.max(o.meter.max);
        self.windows.absorb(&o.windows);
        self.end = self.end.max(o.end);
        self.gave_up |= o.gave_up;
        self.skew.frames += o.skew.frames;
        self.skew.sum_ticks = self.skew.sum_ticks.saturating_add(o.skew.sum_ticks);
        self.skew.max_ticks = self.skew.max_ticks.max(o.skew.max_ticks);
    }

    /// Send the frames that are due at `now` (at most one burst). When late, the next call
    /// sends the next burst at once, within the catch-up pace when the trial has one.
    #[inline]
    pub(super) fn step(&mut self, clock: &Clock, t0: u64, now: u64) -> Res<()> {
        if now < t0 {
            return Ok(());
        }
        if self.next >= self.total {
            // A share with no frames (a trial shorter than the queues' chunks).
            self.tx.flush()?;
            self.end = clock.now();
            return Ok(());
        }
        if now >= self.give_up_at {
            self.gave_up = true;
            self.end = now;
            self.tx.flush()?;
            return Ok(());
        }
        let due = self.schedule.due(now - t0).min(self.total).min(self.split.chunk_end(self.next));
        if due <= self.next {
            return Ok(());
        }
        let sched = t0 + self.schedule.time_of(self.next);
        let lag = now.saturating_sub(sched);
        let mut k = ((due - self.next) as usize).min(self.burst);
        if let Some(p) = &self.pace {
            k = k.min(p.allowed(now) as usize);
            if k == 0 {
                return Ok(());
            }
        }
        let (seq0, tag) = (self.next, self.tag);
        let caught = self.windows.at(seq0, lag, self.bound, self.stall);
        let timed = self.tags.is_some() || !self.frame_ts.is_empty();
        if timed && self.kernel.is_some() {
            k = k.min(64); // a stamp mask's worth
        }
        let frames = self.stream.burst_tagged(seq0, k, tag, &mut self.scratch);
        let n = if !timed {
            frames.with_writer(BurstSend::<T, false> {
                tx: &mut *self.tx,
                k,
                tag,
                seq0,
            })?
        } else if self.kernel.is_some() {
            // The kernel stamps the frames asked for as the driver takes them; the stamps come
            // back a little later (`collect_stamps`).
            let stamp = if self.frame_ts.is_empty() {
                let p = self.tags;
                (0..k).fold(0u64, |m, i| {
                    m | (u64::from(p.and_then(|p| p.index(seq0 + i as u64)).is_some()) << i)
                })
            } else {
                u64::MAX >> (64 - k)
            };
            let n = self.tx.tx_burst_stamped(k, stamp, move |i, buf, cookie| {
                frames.write(i, tag | (seq0 + i as u64), buf, cookie)
            })?;
            let asked = if n >= 64 { stamp } else { stamp & ((1u64 << n) - 1) };
            self.stamps_asked += u64::from(asked.count_ones());
            n
        } else {
            // Each frame is stamped when it is in the backend's buffer, before the backend
            // sends the burst: on veth a receiver may see the frame before this call returns.
            // A frame the backend does not take is stamped again when it is offered again.
            let (tags, tx_ts, frame_ts, skew) = (self.tags, self.tx_ts, self.frame_ts, &mut self.skew);
            let flag = if caught { TAG_CATCH_UP } else { 0 };
            self.tx.tx_burst_cookie(k, |i, buf, cookie| {
                let seq = seq0 + i as u64;
                let len = frames.write(i, tag | seq, buf, cookie);
                let t = clock.now();
                if let Some(j) = tags.and_then(|p| p.index(seq)) {
                    tx_ts[j].store(t | flag, Ordering::Relaxed);
                }
                if !frame_ts.is_empty() {
                    frame_ts[seq as usize % TS_RING].store(ts_entry(seq, t, caught), Ordering::Release);
                    skew.add(t.saturating_sub(now));
                }
                len
            })?
        } as u64;
        self.lag.record(lag, n, self.stall);
        if let Some(p) = &mut self.pace {
            p.sent(now, n);
        }
        self.meter.sent(now, n);
        self.sent += n;
        if n > 0 {
            self.next = self.split.next_from(seq0 + n);
        }
        if self.next >= self.total {
            self.tx.flush()?;
            self.end = clock.now();
        }
        Ok(())
    }

    /// Kernel stamps asked for and not received yet.
    #[inline]
    pub(super) fn stamps_pending(&self) -> bool {
        self.stamps_got < self.stamps_asked
    }

    /// Take the kernel's transmit stamps that came back: each goes where the tester's own
    /// stamp of the frame would have gone (the latency tag's, the per-frame ring's entry).
    pub(super) fn collect_stamps(&mut self) -> Res<()> {
        let Some(map) = self.kernel else { return Ok(()) };
        let (tag, total, tags, tx_ts, frame_ts) = (self.tag, self.total, self.tags, self.tx_ts, self.frame_ts);
        let windows = &self.windows;
        let mut got = 0;
        self.tx.tx_stamps(|frame, ns| {
            let Rx::Test { field, .. } = classify(frame) else { return };
            let seq = field & SEQ_MASK;
            if field & !SEQ_MASK != tag || seq >= total {
                return;
            }
            let t = map.ticks(ns);
            let tagged = tags.and_then(|p| p.index(seq));
            let caught = windows.contains(seq);
            if let Some(j) = tagged {
                tx_ts[j].store(if caught { t | TAG_CATCH_UP } else { t }, Ordering::Relaxed);
            }
            if !frame_ts.is_empty() {
                frame_ts[seq as usize % TS_RING].store(ts_entry(seq, t, caught), Ordering::Release);
            }
            got += u64::from(tagged.is_some() || !frame_ts.is_empty());
        })?;
        self.stamps_got += got;
        Ok(())
    }
}

/// One burst into the queue, frame `i` with payload field `tag | (seq0 + i)`, written by the
/// burst's writer (chosen once per burst: `Burst::with_writer`). With `RESET` (the benchmark's
/// like-for-like line, `saturate`) every frame is written whole and vouched for by no cookie, so
/// that a DPDK mbuf is reset before it goes out; a trial's sender recycles (`RESET` false).
pub(crate) struct BurstSend<'t, T, const RESET: bool> {
    pub(crate) tx: &'t mut T,
    pub(crate) k: usize,
    pub(crate) tag: u64,
    pub(crate) seq0: u64,
}

impl<'t, T: TxQueue, const RESET: bool> BurstSend<'t, T, RESET> {
    /// Frames `seq0 .. seq0 + k` of `stream` with payload fields `tag | seq`, computed ahead in
    /// `scratch` and sent in one burst on `tx` (the benchmarks' loops): how many `tx` took.
    #[inline(always)]
    pub(crate) fn send(
        tx: &'t mut T,
        stream: &DirectionStream,
        scratch: &mut BurstScratch,
        seq0: u64,
        k: usize,
        tag: u64,
    ) -> xlat_io::Result<usize> {
        stream
            .burst_tagged(seq0, k, tag, scratch)
            .with_writer(BurstSend::<T, RESET> { tx, k, tag, seq0 })
    }
}

impl<T: TxQueue, const RESET: bool> WithWriter for BurstSend<'_, T, RESET> {
    type Out = xlat_io::Result<usize>;

    #[inline(always)]
    fn with<W: FrameWriter>(self, w: W) -> xlat_io::Result<usize> {
        let (tag, seq0) = (self.tag, self.seq0);
        self.tx.tx_burst_cookie(self.k, move |i, buf, cookie| {
            let field = tag | (seq0 + i as u64);
            if RESET {
                // No cookie: the template is copied whole, and the mbuf reset when sent.
                *cookie = 0;
                let n = w.write(i, field, buf, cookie);
                *cookie = 0;
                n
            } else {
                w.write(i, field, buf, cookie)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Split;

    /// The frames queue `q` of `queues` sends, by walking it as the sender does.
    fn walk(split: Split, total: u64) -> Vec<u64> {
        let mut out = Vec::new();
        let mut seq = split.first();
        while seq < total {
            out.push(seq);
            seq = split.next_from(seq + 1);
        }
        out
    }

    #[test]
    fn queues_share_every_frame_once_in_chunks() {
        for (queues, chunk, total) in [(2, 32, 1000), (3, 7, 100), (2, 32, 10), (4, 1, 9), (1, u64::MAX, 77)] {
            let mut all = Vec::new();
            for queue in 0..queues {
                let s = Split { queue, queues, chunk };
                let mine = walk(s, total);
                assert_eq!(mine.len() as u64, s.share(total), "share of {s:?}");
                assert!(mine.iter().all(|q| s.queue_of(*q) == queue));
                all.extend(mine);
            }
            all.sort_unstable();
            assert_eq!(all, (0..total).collect::<Vec<_>>(), "{queues} queues, chunks of {chunk}");
        }
        let s = Split {
            queue: 1,
            queues: 2,
            chunk: 32,
        };
        assert_eq!((s.first(), s.chunk_end(40), s.next_from(64)), (32, 64, 96));
        let one = Split {
            queue: 0,
            queues: 1,
            chunk: 64,
        };
        assert_eq!(
            (one.share(500), one.first(), one.chunk_end(70), one.next_from(128)),
            (500, 0, u64::MAX, 128)
        );
    }
}
