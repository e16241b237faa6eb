//! The receiver of one port, or of one of its queues: counts the test frames of the direction it
//! receives (each sequence number once: loss, duplicates and reordering apart), records their
//! delays when asked, and answers ARP and NDP for the tester's addresses.
//!
//! Reordering is judged per path: frames that different queues of the tester sent, or that
//! came in through different rings of a receive queue that reads several (a DPDK
//! `net_af_packet` device's sockets), have no order between them, so only a frame that arrives
//! after a later one of the same sending queue on the same ring counts as reordered. With
//! several receive queues the trial merges their counts (`assemble`): a frame seen on two of
//! them is a duplicate.

use super::error::Res;
use super::ring::{ts_epoch, SEQ_MASK, TAG_SHIFT, TS_CATCH_UP, TS_RING};
use super::schedule::TagPlan;
use super::seen::Seen;
use super::split::Split;
use crate::clock::{Clock, RealtimeMap};
use crate::neighbour::Neighbour;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use xlat_io::{RxQueue, TxQueue, RX_BURST};
use xlat_traffic::{Direction, Setup, StateTable, Tuple4};
use xlat_trial::delay::{DelayRecorder, IpdvRecorder};
use xlat_trial::report::DirectionReport;
use xlat_trial::spec::PdvSpec;
use xlat_wire::{classify, udp_tuple, Rx};

/// Per-frame delay state of a receiver.
pub(super) struct PdvState {
    pub(super) frame_timeout_ns: u64,
    pub(super) delays: DelayRecorder,
    pub(super) ipdv: IpdvRecorder,
    pub(super) prev_seq: Option<u64>,
    /// Frames whose delay was recorded.
    pub(super) timed: u64,
    /// Frames later than the frame timeout (counted as lost).
    pub(super) late: u64,
    /// ns = ticks * mul >> 32
    pub(super) mul: u128,
    /// With kernel stamps, a frame's transmit stamp comes back to the sender a little after
    /// the frame left, and may not be there yet when the frame arrives: such frames, and every
    /// frame after them (IPDV takes them in order), wait here (sequence number, receive stamp)
    /// until it is. `None`: the tester's own stamps, always there first.
    pub(super) pending: Option<VecDeque<(u64, u64)>>,
    /// Frames received whose transmit stamp never came.
    pub(super) unstamped: u64,
    /// Frames received that were sent in a catch-up window: their delays are left out.
    pub(super) untimed: u64,
}

/// What became of one frame's delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timed {
    Recorded,
    /// Later than the frame timeout: lost (siitperf-pdv).
    Late,
    /// Its transmit stamp is not there (yet).
    NoStamp,
}

impl PdvState {
    /// Before the first frame of a direction whose delays `p` asks for: ticks to ns by `mul`;
    /// with `kernel` stamps, frames wait for their transmit stamps.
    pub(super) fn new(p: PdvSpec, mul: u128, kernel: bool) -> PdvState {
        let (delays, ipdv) = if p.exact {
            (DelayRecorder::exact(), IpdvRecorder::exact())
        } else {
            (DelayRecorder::histogram(), IpdvRecorder::histogram())
        };
        PdvState {
            frame_timeout_ns: p.frame_timeout_ms.saturating_mul(1_000_000),
            delays,
            ipdv,
            prev_seq: None,
            timed: 0,
            late: 0,
            mul,
            pending: kernel.then(VecDeque::new),
            unstamped: 0,
            untimed: 0,
        }
    }

    /// Record the delay of frame `seq` received at `rx` (ticks).
    #[inline]
    fn time(&mut self, seq: u64, rx: u64, frame_ts: &[AtomicU64]) -> Timed {
        let e = frame_ts[seq as usize % TS_RING].load(Ordering::Acquire);
        if e == 0 || e & 0x7f != ts_epoch(seq) {
            return Timed::NoStamp;
        }
        if e & TS_CATCH_UP != 0 {
            // Sent in a catch-up: its delay includes the queue the tester's burst built.
            self.untimed += 1;
            self.prev_seq = None;
            return Timed::Recorded;
        }
        let ns = ((u128::from(rx.saturating_sub(e >> 8)) * self.mul) >> 32) as u64;
        if self.frame_timeout_ns > 0 && ns > self.frame_timeout_ns {
            self.late += 1;
            self.prev_seq = None;
            return Timed::Late;
        }
        self.timed += 1;
        self.delays.record(ns);
        if self.prev_seq.is_none_or(|q| q + 1 != seq) {
            self.ipdv.record(u64::MAX);
        }
        self.ipdv.record(ns);
        self.prev_seq = Some(seq);
        Timed::Recorded
    }

    /// Time the waiting frames whose transmit stamps are there, in order; a frame that waited
    /// longer than `wait` ticks by `now` (or any, with `now` = `u64::MAX`) counts as unstamped.
    /// Returns how many turned out later than the frame timeout (lost, not received).
    pub(super) fn settle(&mut self, frame_ts: &[AtomicU64], now: u64, wait: u64) -> u64 {
        let Some(mut q) = self.pending.take() else { return 0 };
        let mut late = 0;
        while let Some(&(seq, rx)) = q.front() {
            match self.time(seq, rx, frame_ts) {
                Timed::Recorded => {}
                Timed::Late => late += 1,
                Timed::NoStamp if now.saturating_sub(rx) > wait => {
                    self.unstamped += 1;
                    self.prev_seq = None;
                }
                Timed::NoStamp => break,
            }
            q.pop_front();
        }
        self.pending = Some(q);
        late
    }
}

/// The trial tags a tester has used: `start + 1`, `start + 2`, ... `start + used` (modulo 256,
/// the tag being the field's top byte).
#[derive(Debug, Clone, Copy)]
pub(super) struct OwnTags {
    pub(super) start: u64,
    pub(super) used: u64,
}

impl OwnTags {
    /// Was `tag` (0-255) one of this tester's trials?
    pub(super) fn contains(&self, tag: u64) -> bool {
        self.used >= 256 || (tag.wrapping_sub(self.start).wrapping_sub(1) & 0xff) < self.used
    }
}

/// The counts of the direction a receiver receives.
pub(crate) struct Count {
    /// The trial tag every test frame of this trial carries.
    pub(super) tag: u64,
    /// The trial tags this tester has used (a frame with another is a foreign tester's).
    pub(super) own: OwnTags,
    pub(super) total: u64,
    /// The sequence numbers that have arrived.
    pub(super) seen: Seen,
    pub(super) report: DirectionReport,
    /// How the direction's frames are split among the sending queues.
    pub(super) split: Split,
    /// Per path (receive lane × sending queue): the highest sequence number seen on it.
    pub(super) max_seen: Vec<Option<u64>>,
    pub(super) tags: Option<TagPlan>,
    /// Receive stamps of the latency tags.
    pub(super) rx_ts: Vec<u64>,
    pub(super) pdv: Option<PdvState>,
    /// IPv4 test frames counted whose 4-tuple was learnt (stateful tests).
    pub(super) learnt: u64,
    /// Timed frames that came without the port's receive stamp (kernel stamps).
    pub(super) rx_unstamped: u64,
    /// The longest pause between received bursts of this trial's test frames.
    pub(super) gap: RxGap,
}

/// The longest time between two received bursts that carried new test frames of a direction
/// (ticks): a device reset's interruption as the receiver saw it (RFC 6201's timestamp
/// method). One clock read per such burst.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct RxGap {
    /// When the last such burst was taken; 0 before the first.
    pub(super) last: u64,
    pub(super) max: u64,
    /// When the longest gap ended.
    pub(super) max_end: u64,
}

impl RxGap {
    #[inline]
    pub(super) fn note(&mut self, now: u64) {
        if self.last != 0 && now.saturating_sub(self.last) > self.max {
            self.max = now - self.last;
            self.max_end = now;
        }
        self.last = now;
    }

    /// Another receive queue's gaps of the same direction: the longer one.
    fn merge(&mut self, o: RxGap) {
        if o.max > self.max {
            self.max = o.max;
            self.max_end = o.max_end;
        }
    }
}

impl Count {
    /// The counts of a direction of `total` frames of trial `tag`, before its first frame, over
    /// `paths` paths (receive lanes x sending queues): nothing tagged or timed (a trial's plan
    /// adds those). Without `counting` (a port that only answers ARP/NDP) no frame is tracked.
    pub(super) fn new(tag: u64, own: OwnTags, total: u64, counting: bool, split: Split, paths: usize) -> Count {
        Count {
            tag,
            own,
            total,
            seen: Seen::new(if counting { total } else { 0 }),
            report: DirectionReport::default(),
            split,
            max_seen: vec![None; paths],
            tags: None,
            rx_ts: Vec::new(),
            pdv: None,
            learnt: 0,
            rx_unstamped: 0,
            gap: RxGap::default(),
        }
    }

    /// The counts of a benchmark's direction: `total` frames that one queue sends, all with
    /// trial tag 0, the only one this tester used; `lanes` receive lanes.
    pub(crate) fn single(total: u64, lanes: usize) -> Count {
        let split = Split {
            queue: 0,
            queues: 1,
            chunk: total,
        };
        Count::new(0, OwnTags { start: 0, used: 1 }, total, true, split, lanes)
    }

    /// Take in what another receive queue counted of the same direction: a frame both saw
    /// counts once as received and once as a duplicate; the delay records merge (IPDV pairs
    /// only frames that came in on one queue).
    pub(super) fn absorb(&mut self, o: Count) {
        let both = self.seen.absorb(o.seen);
        let (r, x) = (&mut self.report, &o.report);
        r.counts.received += x.counts.received.saturating_sub(both);
        r.counts.duplicates += x.counts.duplicates + both;
        r.counts.reordered += x.counts.reordered;
        r.counts.unexpected += x.counts.unexpected;
        r.counts.foreign += x.counts.foreign;
        r.counts.corrupted += x.counts.corrupted;
        r.other += x.other;
        r.counts.tester_rx_dropped += x.counts.tester_rx_dropped;
        for (a, b) in self.rx_ts.iter_mut().zip(&o.rx_ts) {
            if *a == 0 || (*b != 0 && *b < *a) {
                *a = *b;
            }
        }
        match (&mut self.pdv, o.pdv) {
            (Some(a), Some(b)) => {
                a.delays.merge(b.delays);
                a.ipdv.merge(b.ipdv);
                a.timed += b.timed;
                a.late += b.late;
                a.unstamped += b.unstamped;
                a.untimed += b.untimed;
            }
            (None, b) => self.pdv = b,
            (Some(_), None) => {}
        }
        self.learnt += o.learnt;
        self.rx_unstamped += o.rx_unstamped;
        self.gap.merge(o.gap);
    }

    /// Time the frames waiting for their transmit stamps whose stamps are in (see
    /// [`PdvState::settle`]); those later than the frame timeout leave the received count.
    fn settle(&mut self, frame_ts: &[AtomicU64], now: u64, wait: u64) {
        if let Some(p) = &mut self.pdv {
            if p.pending.as_ref().is_some_and(|q| !q.is_empty()) {
                self.report.counts.received -= p.settle(frame_ts, now, wait);
            }
        }
    }

    /// Time every frame still waiting for its transmit stamp (the trial is over: the stamps
    /// that came are all in).
    pub(super) fn settle_all(&mut self, frame_ts: &[AtomicU64]) {
        self.settle(frame_ts, u64::MAX, 0);
    }

    /// Count one test frame with 64-bit field `field`, received at `now` (ticks; read only when
    /// delays are measured). Its sequence number when it was this trial's and not seen before.
    #[inline]
    fn test_frame(&mut self, field: u64, lane: usize, now: u64, frame_ts: &[AtomicU64]) -> Option<u64> {
        let seq = field & SEQ_MASK;
        if field & !SEQ_MASK != self.tag || seq >= self.total {
            // Another trial's straggler, or a frame this trial never sent.
            self.report.counts.unexpected += 1;
            if !self.own.contains(field >> TAG_SHIFT) {
                self.report.counts.foreign += 1;
            }
            return None;
        }
        if !self.seen.insert(seq) {
            self.report.counts.duplicates += 1;
            return None;
        }
        if let Some(p) = &mut self.pdv {
            let waiting = p.pending.as_ref().is_some_and(|q| !q.is_empty());
            match if waiting { Timed::NoStamp } else { p.time(seq, now, frame_ts) } {
                Timed::Late => return None,
                Timed::NoStamp => {
                    if let Some(q) = &mut p.pending {
                        q.push_back((seq, now));
                    }
                }
                Timed::Recorded => {}
            }
        }
        self.report.counts.received += 1;
        let path = lane * self.split.queues as usize + self.split.queue_of(seq) as usize;
        if let Some(max) = self.max_seen.get_mut(path) {
            match *max {
                Some(m) if seq < m => self.report.counts.reordered += 1,
                _ => *max = Some(seq),
            }
        }
        if let Some(i) = self.tags.and_then(|p| p.index(seq)) {
            self.rx_ts[i] = now;
        }
        Some(seq)
    }
}

/// One port's receiver.
pub(crate) struct Receiver<'s, 'n, R: RxQueue, T: TxQueue> {
    pub(super) rx: &'s mut R,
    /// The port's control queue, for ARP and NDP answers.
    pub(super) ctl: &'s mut T,
    pub(super) nb: Neighbour<'n>,
    /// The direction counted here; `None`: this port only answers ARP/NDP.
    pub(super) dir: Option<Direction>,
    pub(super) count: Count,
    /// The sender's per-frame transmit stamps of `dir` (PDV), empty when not measured.
    pub(super) frame_ts: &'s [AtomicU64],
    /// The Responder's state table (stateful tests, on the Responder's port): the 4-tuple of
    /// every foreground test frame counted is learnt into it.
    pub(super) learn: Option<&'s StateTable>,
    /// The foreground share (n, m): frame `seq` is foreground when `seq % n < m`.
    pub(super) fg: (u64, u64),
    /// With kernel stamps: their clock on the trial's ticks (`None`: stamped here).
    pub(super) kernel: Option<RealtimeMap>,
    /// How long a frame waits for its kernel transmit stamp (ticks).
    pub(super) stamp_wait: u64,
}

impl<'s, 'n, R: RxQueue, T: TxQueue> Receiver<'s, 'n, R, T> {
    /// A receiver on a port's receive queue and control queue (`ctl`, for ARP and NDP answers)
    /// that counts direction `dir` into `count` (`None`: it only answers ARP/NDP), with the
    /// setup's foreground share; it stamps its own receive times and learns nothing unless
    /// [`Receiver::timed`] and [`Receiver::learning`] say otherwise.
    pub(crate) fn new(queues: (&'s mut R, &'s mut T), nb: Neighbour<'n>, setup: &Setup, dir: Option<Direction>, count: Count) -> Self {
        Receiver {
            rx: queues.0,
            ctl: queues.1,
            nb,
            dir,
            count,
            frame_ts: &[],
            learn: None,
            fg: (u64::from(setup.fg_n.max(1)), u64::from(setup.fg_m)),
            kernel: None,
            stamp_wait: 0,
        }
    }

    /// Delays against the sender's per-frame stamps `frame_ts`; with `kernel` stamps, a frame
    /// waits up to `stamp_wait` ticks for its transmit stamp.
    pub(super) fn timed(self, frame_ts: &'s [AtomicU64], kernel: Option<RealtimeMap>, stamp_wait: u64) -> Self {
        Receiver {
            frame_ts,
            kernel,
            stamp_wait,
            ..self
        }
    }

    /// Learn the 4-tuple of every foreground test frame counted into `table` (the Responder).
    pub(crate) fn learning(self, table: Option<&'s StateTable>) -> Self {
        Receiver { learn: table, ..self }
    }

    /// What it counted: the direction's report, and the tuples it learnt.
    pub(crate) fn counted(&self) -> (&DirectionReport, u64) {
        (&self.count.report, self.count.learnt)
    }

    /// Take one burst of received frames.
    #[inline]
    pub(crate) fn poll(&mut self, clock: &Clock) -> Res<usize> {
        // When delays are measured, the receive time is read per frame, once the frame is in
        // hand: a time read before the burst (or at its first frame) could date a frame that
        // landed in the ring during the burst earlier than its sending.
        let timed = self.count.pdv.is_some() || self.count.tags.is_some();
        let counting = self.dir.is_some();
        let (learn, (fg_n, fg_m), kernel) = (self.learn, self.fg, self.kernel);
        if self.kernel.is_some() {
            self.count.settle(self.frame_ts, clock.now(), self.stamp_wait);
        }
        let received = self.count.report.counts.received;
        let n = self.rx.rx_burst_stamped(RX_BURST, |lane, f, ns| match classify(f) {
            Rx::Test { field, .. } if counting => {
                let now = match kernel {
                    _ if !timed => 0,
                    None => clock.now(),
                    Some(_) if ns == 0 => {
                        self.count.rx_unstamped += 1;
                        0
                    }
                    Some(m) => m.ticks(ns),
                };
                let seq = self.count.test_frame(field, lane, now, self.frame_ts);
                // A foreground frame (by its sequence number: background frames are IPv6
                // too in a NAT66 or NAT46 test) teaches the Responder its tuple as received,
                // after the DUT's translation.
                if let (Some(t), Some(seq)) = (learn, seq) {
                    if seq % fg_n < fg_m {
                        if let Some((src, dst, sport, dport)) = udp_tuple(f) {
                            let learnt = t.learn(Tuple4 {
                                initiator: src,
                                responder: dst,
                                initiator_port: sport,
                                responder_port: dport,
                            });
                            self.count.learnt += u64::from(learnt);
                        }
                    }
                }
            }
            Rx::Corrupt { .. } if counting => self.count.report.counts.corrupted += 1,
            r @ (Rx::Arp { .. } | Rx::Nd { .. }) => {
                self.count.report.other += 1;
                self.nb.handle(&r, &mut *self.ctl);
            }
            _ => self.count.report.other += 1,
        })?;
        if self.count.report.counts.received > received {
            self.count.gap.note(clock.now());
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::super::ring::ts_entry;
    use super::*;

    /// A count of a 256-frame direction sent by two queues in chunks of 64 (trial tag 0).
    fn count(lanes: usize) -> Count {
        let split = Split {
            queue: 0,
            queues: 2,
            chunk: 64,
        };
        Count::new(0, OwnTags { start: 0, used: 0 }, 256, true, split, 2 * lanes)
    }

    /// A PDV count whose frames wait for their kernel transmit stamps, 1 tick = 1 ns, frame
    /// timeout `timeout_ns` (0: none).
    fn pdv_count(timeout_ns: u64) -> Count {
        let mut c = count(1);
        c.pdv = Some(PdvState {
            frame_timeout_ns: timeout_ns,
            delays: DelayRecorder::exact(),
            ipdv: IpdvRecorder::exact(),
            prev_seq: None,
            timed: 0,
            late: 0,
            mul: 1 << 32,
            pending: Some(VecDeque::new()),
            unstamped: 0,
            untimed: 0,
        });
        c
    }

    /// Frames whose kernel transmit stamp comes after them wait for it, in order, and are
    /// timed once it is there; a late one (over the frame timeout) leaves the received count;
    /// one whose stamp never comes is counted unstamped, not timed and not lost.
    #[test]
    fn frames_wait_for_their_kernel_transmit_stamps_in_order() {
        let ts: Vec<AtomicU64> = (0..8).map(|_| AtomicU64::new(0)).collect();
        let stamp = |seq: u64, t: u64| ts[seq as usize].store(ts_entry(seq, t, false), Ordering::Release);
        let mut c = pdv_count(1_000);
        stamp(0, 100);
        // Frame 0 is timed at once (stamp there); frame 1's stamp is not there yet: it waits,
        // and so does frame 2 behind it although its stamp is there.
        c.test_frame(0, 0, 150, &ts);
        c.test_frame(1, 0, 260, &ts);
        stamp(2, 300);
        c.test_frame(2, 0, 340, &ts);
        let p = c.pdv.as_mut().unwrap();
        assert_eq!((p.timed, p.pending.as_ref().unwrap().len()), (1, 2));
        // Nothing moves while frame 1's stamp is missing and the wait is not over.
        assert_eq!(p.settle(&ts, 400, 1_000), 0);
        assert_eq!(p.timed, 1);
        stamp(1, 200);
        assert_eq!(p.settle(&ts, 400, 1_000), 0);
        assert_eq!((p.timed, p.pending.as_ref().unwrap().len()), (3, 0));
        // Delays 50, 60, 40 in arrival order: IPDV pairs 0-1 and 1-2.
        assert_eq!(p.ipdv.pairs(), 2);
        // Frame 3 is late (stamped at 1000, received at 2500 > 1000 ns later) and frame 4's
        // stamp never comes: after the trial, 3 is lost, 4 unstamped.
        c.test_frame(3, 0, 2_500, &ts);
        c.test_frame(4, 0, 2_600, &ts);
        stamp(3, 1_000);
        assert_eq!(c.report.counts.received, 5);
        c.settle_all(&ts);
        let p = c.pdv.as_ref().unwrap();
        assert_eq!((p.timed, p.late, p.unstamped), (3, 1, 1));
        assert_eq!(c.report.counts.received, 4, "the late frame is not received");
        // Without a wait list (user stamps) a frame without a stamp is simply not timed.
        let mut u = pdv_count(0);
        u.pdv.as_mut().unwrap().pending = None;
        u.test_frame(5, 0, 10, &ts);
        assert_eq!((u.pdv.as_ref().unwrap().timed, u.report.counts.received), (0, 1));
    }

    #[test]
    fn own_tags_wrap_at_256() {
        let none = OwnTags { start: 250, used: 0 };
        assert!((0..256).all(|t| !none.contains(t)));
        // Tags 251 ..= 255, 0, 1.
        let some = OwnTags { start: 250, used: 7 };
        let own: Vec<u64> = (0..256).filter(|t| some.contains(*t)).collect();
        assert_eq!(own, vec![0, 1, 251, 252, 253, 254, 255]);
        let all = OwnTags { start: 3, used: 300 };
        assert!((0..256).all(|t| all.contains(t)));
    }

    #[test]
    fn frames_of_other_sending_queues_or_rings_are_not_reordered() {
        let mut c = count(2);
        // Queue 1's chunk (64..128) arrives before queue 0's (0..64): no reordering.
        for seq in (64..128).chain(0..64) {
            assert_eq!(c.test_frame(seq, 0, 0, &[]), Some(seq));
        }
        assert_eq!(c.report.counts.reordered, 0);
        // Ring 1 brings frames of queue 0 older than those ring 0 brought: no reordering.
        c.test_frame(130, 1, 0, &[]);
        c.test_frame(129, 0, 0, &[]);
        assert_eq!(c.report.counts.reordered, 0);
        // Within one path, an older frame after a newer one is reordered.
        c.test_frame(128, 0, 0, &[]);
        assert_eq!(c.report.counts.reordered, 1);
        assert_eq!((c.report.counts.received, c.report.counts.duplicates), (131, 0));
    }

    #[test]
    fn merged_queues_count_a_frame_seen_twice_once() {
        let (mut a, mut b) = (count(1), count(1));
        for seq in 0..100 {
            a.test_frame(seq, 0, 0, &[]);
        }
        for seq in 90..200 {
            b.test_frame(seq, 0, 0, &[]);
        }
        b.report.counts.tester_rx_dropped = 3;
        a.absorb(b);
        // 0..200 once each; 90..100 arrived on both queues: duplicates, not received twice.
        assert_eq!((a.report.counts.received, a.report.counts.duplicates), (200, 10));
        assert_eq!(a.report.counts.tester_rx_dropped, 3);
        assert_eq!(a.seen.len(), 200);
    }
}
