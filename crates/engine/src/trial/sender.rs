//! The sender of one direction, or of one queue of it ([`Split`]): frame `i` is due at
//! t0 + i / rate (RFC 2544 section 23), one burst per call; a late sender catches up within its
//! pace (`catch_up.rs`), or at once without a lag bound. A burst goes out by one of three paths:
//! plain, stamped by the kernel, or stamped by this thread ([`Sender::step`]).

use super::catch_up::{Meter, Pace, Windows};
use super::error::Res;
use super::phase::{dir_index, TrialPlan};
use super::ring::{tag_stamp, ts_entry, SEQ_MASK, TS_RING};
use super::schedule::{Schedule, TagPlan};
use super::split::Split;
use crate::clock::{Clock, RealtimeMap};
use std::sync::atomic::{AtomicU64, Ordering};
use xlat_io::TxQueue;
use xlat_traffic::{BurstScratch, Direction, DirectionStream, FrameWriter, WithWriter};
use xlat_trial::LagHistogram;
use xlat_wire::{classify, Rx};

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

/// One direction's sender (or one queue's share of it, see [`Split`]): what it is given
/// ([`Sender::new`]) is its own; what it did is read by the worker and the trial's assembly.
pub(super) struct Sender<'s, T: TxQueue> {
    pub(super) dir: Direction,
    split: Split,
    /// The next frame this sender sends (a sequence number of the direction).
    next: u64,
    pub(super) tx: &'s mut T,
    stream: DirectionStream,
    /// The precomputed fields of the burst being sent.
    scratch: BurstScratch,
    /// The direction's frames (all queues').
    pub(super) total: u64,
    /// The trial tag in the top byte of the 64-bit field.
    tag: u64,
    burst: usize,
    schedule: Schedule,
    /// The sender stops trying at this time (ticks) even with frames left: the backend takes
    /// none (link down, port gone), and the trial is invalid anyway.
    give_up_at: u64,
    /// Further behind than this (ticks) is a stall.
    stall: u64,
    /// Further behind than this (ticks) opens a catch-up window (the trial's lag bound;
    /// `u64::MAX`: none).
    bound: u64,
    /// The catch-up pace (`None`: no lag bound, siitperf's catch-up at once).
    pace: Option<Pace>,
    tags: Option<TagPlan>,
    /// Latency tags' transmit stamps.
    tx_ts: &'s [AtomicU64],
    /// Per-frame transmit stamps (PDV), empty when not measured.
    frame_ts: &'s [AtomicU64],
    /// With kernel stamps: their clock on the trial's ticks (`None`: stamped here).
    kernel: Option<RealtimeMap>,
    // What it did:
    /// How bursty its sending was (against the catch-up pace).
    pub(super) meter: Meter,
    /// The catch-up windows it opened.
    pub(super) windows: Windows,
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

impl<'s, T: TxQueue> Sender<'s, T> {
    /// The sender of `dir`'s frames in `split` on `tx`, written by `stream`, as `trial` plans
    /// them: its schedule, lag bound, catch-up pace (its share of the rate), tags and stamps.
    pub(super) fn new(trial: &TrialPlan<'s>, dir: Direction, split: Split, tx: &'s mut T, stream: DirectionStream) -> Self {
        let (pace, meter) = catch_up_of(trial, split);
        let d = dir_index(dir);
        Sender {
            dir,
            split,
            next: split.first(),
            tx,
            stream,
            scratch: BurstScratch::new(trial.spec.burst),
            total: trial.total,
            tag: trial.tag,
            burst: trial.spec.burst,
            schedule: trial.schedule,
            give_up_at: trial.give_up_at,
            stall: trial.stall,
            bound: trial.bound,
            pace,
            tags: trial.tags,
            tx_ts: &trial.tx_ts[d],
            frame_ts: &trial.frame_ts[d],
            kernel: trial.kernel,
            meter,
            windows: Windows::new(),
            stamps_asked: 0,
            stamps_got: 0,
            sent: 0,
            lag: LagHistogram::default(),
            end: 0,
            gave_up: false,
            skew: StampSkew::default(),
            dropped: 0,
        }
    }
}

/// The catch-up pace of one of a direction's queue senders (its share of the rate, and of the
/// burst, never less than a transmit burst or, with several queues, a queue's chunk), and the
/// meter of its burstiness (against the same pace, also without a bound).
fn catch_up_of(trial: &TrialPlan<'_>, split: Split) -> (Option<Pace>, Meter) {
    let spec = trial.spec;
    let queues = split.queues.max(1);
    let rate = spec.highest_rate().div_ceil(queues);
    let c = spec.catch_up();
    let percent = c.map_or(xlat_trial::validity::DEFAULT_CATCH_UP_PERCENT, |c| c.percent);
    let floor = if queues > 1 {
        split.chunk.max(spec.burst as u64)
    } else {
        spec.burst as u64
    };
    let pace = c.map(|c| Pace::new(trial.clock_hz, rate, percent, (c.burst_frames / queues).max(floor)));
    (pace, Meter::new(trial.clock_hz, rate, percent))
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
        let seq0 = self.next;
        let caught = self.windows.at(seq0, lag, self.bound, self.stall);
        let timed = self.tags.is_some() || !self.frame_ts.is_empty();
        let n = if !timed {
            self.send_plain(seq0, k)?
        } else if self.kernel.is_some() {
            self.send_kernel_stamped(seq0, k)?
        } else {
            self.send_user_stamped(clock, now, seq0, k, caught)?
        };
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

    /// Frames `seq0 .. seq0 + k` with no stamp (neither latency tags nor PDV): how many the
    /// backend took.
    #[inline]
    fn send_plain(&mut self, seq0: u64, k: usize) -> Res<u64> {
        let (tag, tx) = (self.tag, &mut *self.tx);
        let frames = self.stream.burst_tagged(seq0, k, tag, &mut self.scratch);
        Ok(frames.with_writer(BurstSend::<T, false> { tx, k, tag, seq0 })? as u64)
    }

    /// Frames `seq0 .. seq0 + k` (at most 64, a stamp mask's worth), the kernel asked to stamp
    /// the timed ones as the driver takes them; the stamps come back a little later
    /// ([`Sender::collect_stamps`]).
    #[inline]
    fn send_kernel_stamped(&mut self, seq0: u64, k: usize) -> Res<u64> {
        let (tag, k) = (self.tag, k.min(64));
        let stamp = if self.frame_ts.is_empty() {
            let p = self.tags;
            (0..k).fold(0u64, |m, i| {
                m | (u64::from(p.and_then(|p| p.index(seq0 + i as u64)).is_some()) << i)
            })
        } else {
            u64::MAX >> (64 - k)
        };
        let frames = self.stream.burst_tagged(seq0, k, tag, &mut self.scratch);
        let n = self.tx.tx_burst_stamped(k, stamp, move |i, buf, cookie| {
            frames.write(i, tag | (seq0 + i as u64), buf, cookie)
        })?;
        let asked = if n >= 64 { stamp } else { stamp & ((1u64 << n) - 1) };
        self.stamps_asked += u64::from(asked.count_ones());
        Ok(n as u64)
    }

    /// Frames `seq0 .. seq0 + k`, each stamped by this thread when it is in the backend's
    /// buffer, before the backend sends the burst (on veth a receiver may see the frame before
    /// this call returns); a frame the backend does not take is stamped again when it is
    /// offered again. `caught`: the burst is inside a catch-up window (its stamps say so).
    #[inline]
    fn send_user_stamped(&mut self, clock: &Clock, now: u64, seq0: u64, k: usize, caught: bool) -> Res<u64> {
        let (tag, tags, tx_ts, frame_ts, skew) = (self.tag, self.tags, self.tx_ts, self.frame_ts, &mut self.skew);
        let frames = self.stream.burst_tagged(seq0, k, tag, &mut self.scratch);
        let n = self.tx.tx_burst_cookie(k, |i, buf, cookie| {
            let seq = seq0 + i as u64;
            let len = frames.write(i, tag | seq, buf, cookie);
            let t = clock.now();
            if let Some(j) = tags.and_then(|p| p.index(seq)) {
                tx_ts[j].store(tag_stamp(t, caught), Ordering::Relaxed);
            }
            if !frame_ts.is_empty() {
                frame_ts[seq as usize % TS_RING].store(ts_entry(seq, t, caught), Ordering::Release);
                skew.add(t.saturating_sub(now));
            }
            len
        })?;
        Ok(n as u64)
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
                tx_ts[j].store(tag_stamp(t, caught), Ordering::Relaxed);
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
