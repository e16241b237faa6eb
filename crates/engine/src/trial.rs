//! The tester: two ports, their neighbour handling, and one trial at a time.

use crate::clock::Clock;
use crate::neighbour::Neighbour;
use crate::pin::{allowed_cores, pin_current_thread};
use crate::report::{DirectionReport, TrialReport};
use crate::spec::{CpuPlan, TrialSpec};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use xlat_io::{IoError, Port, Queues, RxQueue, TxQueue};
use xlat_traffic::{BurstScratch, Direction, DirectionStream, Setup, SideId};
use xlat_wire::{classify, MacAddr, Rx};

/// siitperf's TOLERANCE: sending must end within duration x 1.00001.
pub const TOLERANCE: f64 = 1.00001;
/// The largest trial: the receiver keeps one bit per frame (2 GiB per direction at most).
pub const MAX_FRAMES: u64 = 1 << 34;
/// The top byte of the 64-bit field carries a trial tag, so that a straggler from an earlier
/// trial is never counted in a later one; the low 56 bits are the sequence number.
const TAG_SHIFT: u32 = 56;
const SEQ_MASK: u64 = (1 << TAG_SHIFT) - 1;

/// Errors that stop a trial (as opposed to an invalid trial, which is a result).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{0}")]
    Io(#[from] IoError),
    #[error("{side} port: {msg}")]
    Port { side: &'static str, msg: String },
    #[error("{0}")]
    Stream(#[from] xlat_traffic::StreamError),
    #[error("{0}")]
    Spec(String),
    #[error("{0}")]
    Cpu(String),
}

type Res<T> = std::result::Result<T, EngineError>;

/// One side's port with the MACs its frames use.
struct SidePort<P: Port> {
    id: SideId,
    name: String,
    mac: MacAddr,
    dut_mac: Option<MacAddr>,
    q: Queues<P::Tx, P::Rx>,
}

/// The tester: two ports joined through the DUT.
pub struct Tester<P: Port> {
    setup: Setup,
    clock: Clock,
    cpus: CpuPlan,
    trials: u64,
    left: SidePort<P>,
    right: SidePort<P>,
    // Dropped after the queues above (fields drop in order).
    _ports: (P, P),
}

/// When each frame is due: at `rate`, or with a rate change at `at` ticks, at `rate2` after.
#[derive(Debug, Clone, Copy)]
struct Schedule {
    hz: u128,
    r1: u128,
    r2: u128,
    /// Ticks from the start to the rate change (`u64::MAX`: none).
    at: u64,
    /// Frames due before the change.
    n1: u64,
}

impl Schedule {
    fn new(spec: &TrialSpec, clock: &Clock) -> Schedule {
        let hz = u128::from(clock.hz);
        let r1 = u128::from(spec.rate.max(1));
        match spec.rate_change {
            Some(c) if c.at_s < spec.duration_s && c.rate > 0 => {
                let at = clock.ticks(c.at_s.max(0.0));
                let n1 = (u128::from(at) * r1).div_ceil(hz) as u64;
                Schedule {
                    hz,
                    r1,
                    r2: u128::from(c.rate),
                    at,
                    n1,
                }
            }
            _ => Schedule {
                hz,
                r1,
                r2: r1,
                at: u64::MAX,
                n1: u64::MAX,
            },
        }
    }

    /// Ticks from the start to frame `i`'s scheduled time.
    #[inline]
    fn time_of(&self, i: u64) -> u64 {
        if i < self.n1 {
            (u128::from(i) * self.hz / self.r1) as u64
        } else {
            self.at + (u128::from(i - self.n1) * self.hz / self.r2) as u64
        }
    }

    /// How many frames are due `elapsed` ticks after the start.
    #[inline]
    fn due(&self, elapsed: u64) -> u64 {
        if elapsed < self.at {
            (u128::from(elapsed) * self.r1 / self.hz) as u64 + 1
        } else {
            self.n1 + (u128::from(elapsed - self.at) * self.r2 / self.hz) as u64 + 1
        }
    }
}

/// Transmit timestamps of the last `TS_RING` frames of a direction, for per-frame delays: entry
/// `seq % TS_RING` holds `tsc << 8 | (seq / TS_RING) % 256`, so a receiver can tell a stale
/// entry from the frame's own.
const TS_RING: usize = 1 << 22;
const TS_SHIFT: u32 = 22;

#[inline]
fn ts_entry(seq: u64, tsc: u64) -> u64 {
    (tsc << 8) | ((seq >> TS_SHIFT) & 0xff)
}

/// Per-frame delay state of a receiver.
struct PdvState {
    frame_timeout_ns: u64,
    delays: crate::delay::DelayRecorder,
    ipdv: crate::delay::IpdvRecorder,
    prev_seq: Option<u64>,
    timed: u64,
    late: u64,
    /// ns = ticks * mul >> 32
    mul: u128,
}

/// Latency tags: frames `first`, `first + step`, ... (`count` of them).
#[derive(Debug, Clone, Copy)]
struct TagPlan {
    first: u64,
    step: u64,
    count: u64,
}

impl TagPlan {
    fn new(spec: &TrialSpec, frames: u64) -> Option<TagPlan> {
        let l = spec.latency?;
        let first = ((l.delay_s * spec.rate as f64).floor() as u64).min(frames);
        let rest = frames - first;
        if l.tags == 0 || rest == 0 {
            return None;
        }
        let step = (rest / l.tags).max(1);
        Some(TagPlan {
            first,
            step,
            count: l.tags.min(rest.div_ceil(step)),
        })
    }

    #[inline]
    fn index(&self, seq: u64) -> Option<usize> {
        if seq < self.first {
            return None;
        }
        let d = seq - self.first;
        (d.is_multiple_of(self.step) && d / self.step < self.count).then_some((d / self.step) as usize)
    }
}

struct SendState<'s, T: TxQueue> {
    dir: Direction,
    tx: &'s mut T,
    stream: DirectionStream,
    /// The precomputed fields of the burst being sent.
    scratch: BurstScratch,
    total: u64,
    tag: u64,
    sent: u64,
    max_lag: u64,
    end: u64,
    burst: usize,
    tags: Option<TagPlan>,
    next_tag: u64,
    tx_ts: &'s [AtomicU64],
    schedule: Schedule,
    /// Per-frame transmit timestamps (PDV), empty when not measured.
    frame_ts: &'s [AtomicU64],
}

struct RecvState<'s, 'n, R: RxQueue, T: TxQueue> {
    rx: &'s mut R,
    ctl: &'s mut T,
    nb: Neighbour<'n>,
    /// The direction counted here; `None`: this port only answers ARP/NDP.
    dir: Option<Direction>,
    tag: u64,
    total: u64,
    seen: Vec<u64>,
    report: DirectionReport,
    max_seen: Option<u64>,
    tags: Option<TagPlan>,
    rx_ts: Vec<u64>,
    pdv: Option<PdvState>,
    frame_ts: &'s [AtomicU64],
}

impl<T: TxQueue> SendState<'_, T> {
    /// Send the frames that are due at `now` (at most one burst). Prompt catch-up: when late,
    /// the next call sends the next burst at once.
    #[inline]
    fn step(&mut self, clock: &Clock, t0: u64) -> Res<()> {
        let now = clock.now();
        if now < t0 {
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
        if let Some(p) = self.tags {
            // Latency tags are stamped before the burst leaves, like the per-frame stamps: on
            // veth the frame reaches the receiver during this very call.
            let mut t = self.next_tag;
            while t < p.count && p.first + t * p.step < seq0 + k as u64 {
                self.tx_ts[t as usize].store(now, Ordering::Relaxed);
                t += 1;
            }
        }
        if !self.frame_ts.is_empty() {
            // Stamped before the burst leaves: a receiver may see a frame before this call
            // returns. A frame the backend does not take is stamped again when it is sent.
            for q in seq0..seq0 + k as u64 {
                self.frame_ts[q as usize % TS_RING].store(ts_entry(q, now), Ordering::Release);
            }
        }
        let frames = self.stream.burst(seq0, k, &mut self.scratch);
        let n = self
            .tx
            .tx_burst_cookie(k, |i, buf, cookie| frames.write(i, tag | (seq0 + i as u64), buf, cookie))? as u64;
        self.sent += n;
        if let Some(p) = self.tags {
            while self.next_tag < p.count && p.first + self.next_tag * p.step < self.sent {
                self.next_tag += 1;
            }
        }
        if self.sent == self.total {
            self.tx.flush()?;
            self.end = clock.now();
        }
        Ok(())
    }
}

impl<R: RxQueue, T: TxQueue> RecvState<'_, '_, R, T> {
    #[inline]
    fn poll(&mut self, clock: &Clock) -> Res<usize> {
        // When delays are measured, the receive time is read per frame, once the frame is in
        // hand: a time read before the burst (or at its first frame) could date a frame that
        // landed in the ring during the burst earlier than its sending.
        let timed = self.pdv.is_some() || self.tags.is_some();
        let Self {
            rx,
            ctl,
            nb,
            dir,
            tag,
            total,
            seen,
            report,
            max_seen,
            tags,
            rx_ts,
            pdv,
            frame_ts,
        } = self;
        let n = rx.rx_burst(64, |f| match classify(f) {
            Rx::Test { field, .. } if dir.is_some() => {
                let now = if timed { clock.now() } else { 0 };
                let seq = field & SEQ_MASK;
                if field & !SEQ_MASK != *tag || seq >= *total {
                    report.unexpected += 1;
                    return;
                }
                let (w, b) = ((seq / 64) as usize, 1u64 << (seq % 64));
                if seen[w] & b != 0 {
                    report.duplicates += 1;
                    return;
                }
                seen[w] |= b;
                if let Some(p) = pdv {
                    let e = frame_ts[seq as usize % TS_RING].load(Ordering::Acquire);
                    if e != 0 && e & 0xff == (seq >> TS_SHIFT) & 0xff {
                        let ns = ((u128::from(now.saturating_sub(e >> 8)) * p.mul) >> 32) as u64;
                        if p.frame_timeout_ns > 0 && ns > p.frame_timeout_ns {
                            // Later than the frame timeout: lost (siitperf-pdv).
                            p.late += 1;
                            p.prev_seq = None;
                            return;
                        }
                        p.timed += 1;
                        p.delays.record(ns);
                        if p.prev_seq.is_none_or(|q| q + 1 != seq) {
                            p.ipdv.record(u64::MAX);
                        }
                        p.ipdv.record(ns);
                        p.prev_seq = Some(seq);
                    }
                }
                report.received += 1;
                match max_seen {
                    Some(m) if seq < *m => report.reordered += 1,
                    _ => *max_seen = Some(seq),
                }
                if let Some(p) = tags {
                    if let Some(i) = p.index(seq) {
                        rx_ts[i] = now;
                    }
                }
            }
            r @ (Rx::Arp { .. } | Rx::Nd { .. }) => {
                report.other += 1;
                nb.handle(&r, *ctl);
            }
            _ => report.other += 1,
        })?;
        Ok(n)
    }
}

fn default_cores() -> (usize, usize) {
    let c = allowed_cores();
    let a = c.first().copied().unwrap_or(0);
    (a, c.get(1).copied().unwrap_or(a))
}

impl<P: Port> Tester<P> {
    /// Open both ports' queues and check their links (waiting up to 5 s for them to come up).
    pub fn new(setup: Setup, mut left: P, mut right: P, cpus: CpuPlan) -> Res<Self> {
        let deadline = Instant::now() + Duration::from_secs(5);
        for (p, side) in [(&left, "left"), (&right, "right")] {
            while !p.link_up() {
                if Instant::now() > deadline {
                    return Err(EngineError::Port {
                        side,
                        msg: format!("link of {} is down", p.name()),
                    });
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let mk = |p: &mut P, id: SideId, s: &Setup| -> Res<SidePort<P>> {
            let side = s.side(id);
            Ok(SidePort {
                id,
                name: p.name(),
                mac: side.tester_mac.unwrap_or(p.mac()),
                dut_mac: side.dut_mac,
                q: p.queues()?,
            })
        };
        let l = mk(&mut left, SideId::Left, &setup)?;
        let r = mk(&mut right, SideId::Right, &setup)?;
        Ok(Tester {
            setup,
            clock: Clock::calibrate(),
            cpus,
            trials: 0,
            left: l,
            right: r,
            _ports: (left, right),
        })
    }

    pub fn setup(&self) -> &Setup {
        &self.setup
    }

    /// Choose the active directions for the next trials (e.g. the self-test's forward-only,
    /// reverse-only and bidirectional searches on the same open ports).
    pub fn set_directions(&mut self, forward: bool, reverse: bool) {
        self.setup.forward = forward;
        self.setup.reverse = reverse;
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The DUT MACs in use (after [`Tester::prepare`]).
    pub fn dut_macs(&self) -> (Option<MacAddr>, Option<MacAddr>) {
        (self.left.dut_mac, self.right.dut_mac)
    }

    pub fn port_names(&self) -> (String, String) {
        (self.left.name.clone(), self.right.name.clone())
    }

    /// Resolve the DUT's MACs that the configuration does not give, and announce the tester's
    /// addresses to the DUT. Answers the DUT's requests meanwhile. Call before the first trial;
    /// [`Tester::run_trial`] announces again before each trial.
    pub fn prepare(&mut self, timeout: Duration) -> Res<()> {
        let setup = &self.setup;
        for sp in [&mut self.left, &mut self.right] {
            let mut nb = Neighbour::new(setup, sp.id, sp.mac);
            let deadline = Instant::now() + timeout;
            let mut next_ask = Instant::now();
            while sp.dut_mac.is_none() {
                let now = Instant::now();
                if now > deadline {
                    let s = setup.side(sp.id);
                    let what = match (s.dut_ipv4, s.dut_ipv6) {
                        (Some(a), _) => format!("no ARP reply from the DUT's {a}"),
                        (None, Some(a)) => format!("no neighbour advertisement from the DUT's {a}"),
                        (None, None) => {
                            "the DUT's MAC is not configured and neither is its address to resolve it (set dut_mac, or dut_ipv4 / dut_ipv6)"
                                .into()
                        }
                    };
                    return Err(EngineError::Port {
                        side: sp.id.name(),
                        msg: format!("{} on {}", what, sp.name),
                    });
                }
                if now >= next_ask {
                    nb.solicit_dut(&mut sp.q.ctl);
                    next_ask = now + Duration::from_millis(200);
                }
                sp.q.rx.rx_burst(64, |f| nb.handle(&classify(f), &mut sp.q.ctl))?;
                if let Some(m) = nb.learnt_dut_mac {
                    sp.dut_mac = Some(m);
                }
                std::thread::yield_now();
            }
        }
        self.announce()
    }

    /// Announce all tester addresses on both sides and keep answering for 20 ms after.
    fn announce(&mut self) -> Res<()> {
        let setup = &self.setup;
        for sp in [&mut self.left, &mut self.right] {
            let mut nb = Neighbour::new(setup, sp.id, sp.mac);
            nb.learnt_dut_mac = sp.dut_mac;
            let v4 = setup.tester_addresses_v4(sp.id);
            let v6 = setup.tester_addresses_v6(sp.id);
            let mut cursor = 0;
            let start = Instant::now();
            while !nb.announce(&mut sp.q.ctl, &mut cursor, 32, &v4, &v6) {
                sp.q.rx.rx_burst(64, |f| nb.handle(&classify(f), &mut sp.q.ctl))?;
                if start.elapsed() > Duration::from_secs(30) {
                    return Err(EngineError::Port {
                        side: sp.id.name(),
                        msg: "announcing the tester's addresses takes too long".into(),
                    });
                }
            }
        }
        let until = Instant::now() + Duration::from_millis(20);
        while Instant::now() < until {
            for sp in [&mut self.left, &mut self.right] {
                let mut nb = Neighbour::new(setup, sp.id, sp.mac);
                sp.q.rx.rx_burst(64, |f| nb.handle(&classify(f), &mut sp.q.ctl))?;
            }
        }
        Ok(())
    }

    /// Run one trial.
    pub fn run_trial(&mut self, spec: &TrialSpec) -> Res<TrialReport> {
        if spec.rate == 0 || spec.duration_s.is_nan() || spec.duration_s <= 0.0 || spec.burst == 0 {
            return Err(EngineError::Spec(
                "a trial needs a rate above 0, a duration above 0 and a burst above 0".into(),
            ));
        }
        let total = spec.frames();
        if total == 0 {
            return Err(EngineError::Spec(format!(
                "{} frames/s for {} s is no frame at all",
                spec.rate, spec.duration_s
            )));
        }
        if total > MAX_FRAMES {
            return Err(EngineError::Spec(format!(
                "{total} frames per direction is more than the {MAX_FRAMES} one trial can track"
            )));
        }
        if self.left.dut_mac.is_none() || self.right.dut_mac.is_none() {
            self.prepare(Duration::from_secs(3))?;
        } else {
            self.announce()?;
        }
        self.trials += 1;
        let tag = (self.trials & 0xff) << TAG_SHIFT;
        let setup = &self.setup;
        let clock = self.clock;
        let tags = TagPlan::new(spec, total);
        let tag_count = tags.map_or(0, |p| p.count as usize);
        let tx_ts: [Vec<AtomicU64>; 2] = [
            (0..tag_count).map(|_| AtomicU64::new(0)).collect(),
            (0..tag_count).map(|_| AtomicU64::new(0)).collect(),
        ];
        let done: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
        let ring_len = if spec.pdv.is_some() { TS_RING } else { 0 };
        let frame_ts: [Vec<AtomicU64>; 2] = [
            (0..ring_len).map(|_| AtomicU64::new(0)).collect(),
            (0..ring_len).map(|_| AtomicU64::new(0)).collect(),
        ];
        let schedule = Schedule::new(spec, &clock);
        let dir_index = |d: Direction| (d == Direction::Reverse) as usize;
        let active: Vec<Direction> = setup.active_directions().collect();
        let timeout = clock.ticks_ms(spec.timeout_ms);
        let (core_a, core_b) = default_cores();

        let mut senders = Vec::new();
        let mut receivers = Vec::new();
        for sp in [&mut self.left, &mut self.right] {
            let send_dir = if sp.id == SideId::Left {
                Direction::Forward
            } else {
                Direction::Reverse
            };
            let recv_dir = if sp.id == SideId::Left {
                Direction::Reverse
            } else {
                Direction::Forward
            };
            let q = &mut sp.q;
            if setup.is_active(send_dir) {
                let dut = sp.dut_mac.ok_or(EngineError::Port {
                    side: sp.id.name(),
                    msg: "the DUT's MAC is unknown".into(),
                })?;
                let stream = DirectionStream::new(setup, send_dir, spec.frame_size, sp.mac, dut)?;
                senders.push(SendState {
                    dir: send_dir,
                    tx: &mut q.tx,
                    stream,
                    scratch: BurstScratch::new(spec.burst),
                    total,
                    tag,
                    sent: 0,
                    max_lag: 0,
                    end: 0,
                    burst: spec.burst,
                    tags,
                    next_tag: 0,
                    tx_ts: &tx_ts[dir_index(send_dir)],
                    schedule,
                    frame_ts: &frame_ts[dir_index(send_dir)],
                });
            }
            let counting = setup.is_active(recv_dir);
            let mut nb = Neighbour::new(setup, sp.id, sp.mac);
            nb.learnt_dut_mac = sp.dut_mac;
            receivers.push(RecvState {
                rx: &mut q.rx,
                ctl: &mut q.ctl,
                nb,
                dir: counting.then_some(recv_dir),
                tag,
                total,
                seen: if counting {
                    vec![0u64; total.div_ceil(64) as usize]
                } else {
                    Vec::new()
                },
                report: DirectionReport::default(),
                max_seen: None,
                tags: if counting { tags } else { None },
                rx_ts: if counting { vec![0; tag_count] } else { Vec::new() },
                pdv: match spec.pdv {
                    Some(p) if counting => Some(PdvState {
                        frame_timeout_ns: p.frame_timeout_ms.saturating_mul(1_000_000),
                        delays: if p.exact {
                            crate::delay::DelayRecorder::exact()
                        } else {
                            crate::delay::DelayRecorder::histogram()
                        },
                        ipdv: if p.exact {
                            crate::delay::IpdvRecorder::exact()
                        } else {
                            crate::delay::IpdvRecorder::histogram()
                        },
                        prev_seq: None,
                        timed: 0,
                        late: 0,
                        mul: (1_000_000_000u128 << 32) / u128::from(clock.hz),
                    }),
                    _ => None,
                },
                frame_ts: &frame_ts[dir_index(recv_dir)],
            });
        }

        // Workers: one per port doing its sending and its receiving, unless the CPU plan puts
        // a port's sender and receiver on different cores.
        struct Work<'s, 'n, T: TxQueue, R: RxQueue> {
            core: usize,
            send: Option<SendState<'s, T>>,
            recv: Option<RecvState<'s, 'n, R, T>>,
        }
        let mut works: Vec<Work<P::Tx, P::Rx>> = Vec::new();
        for r in receivers {
            let left = r.nb.side == SideId::Left;
            let (send_core, recv_core) = if left {
                (
                    self.cpus.left_send.unwrap_or(core_a),
                    self.cpus.left_recv.or(self.cpus.left_send).unwrap_or(core_a),
                )
            } else {
                (
                    self.cpus.right_send.unwrap_or(core_b),
                    self.cpus.right_recv.or(self.cpus.right_send).unwrap_or(core_b),
                )
            };
            let own_dir = if left { Direction::Forward } else { Direction::Reverse };
            let s = senders.iter().position(|s| s.dir == own_dir).map(|i| senders.swap_remove(i));
            if send_core == recv_core || s.is_none() {
                works.push(Work {
                    core: if s.is_some() { send_core } else { recv_core },
                    send: s,
                    recv: Some(r),
                });
            } else {
                works.push(Work {
                    core: send_core,
                    send: s,
                    recv: None,
                });
                works.push(Work {
                    core: recv_core,
                    send: None,
                    recv: Some(r),
                });
            }
        }

        let t0 = clock.now() + clock.ticks(0.05);
        let n_active = active.len();
        let results: Vec<Res<Work<P::Tx, P::Rx>>> = std::thread::scope(|sc| {
            let handles: Vec<_> = works
                .into_iter()
                .map(|mut w| {
                    let done = &done;
                    sc.spawn(move || -> Res<Work<P::Tx, P::Rx>> {
                        pin_current_thread(w.core).map_err(EngineError::Cpu)?;
                        crate::pin::raise_priority();
                        loop {
                            if let Some(s) = w.send.as_mut() {
                                if s.end == 0 {
                                    s.step(&clock, t0)?;
                                    if s.end != 0 {
                                        done[dir_index(s.dir)].store(s.end, Ordering::Release);
                                    }
                                }
                            }
                            if let Some(r) = w.recv.as_mut() {
                                r.poll(&clock)?;
                            }
                            let send_done = w.send.as_ref().is_none_or(|s| s.end != 0);
                            let now = clock.now();
                            let recv_done = match w.recv.as_ref() {
                                None => true,
                                Some(r) => match r.dir {
                                    Some(d) => {
                                        let e = done[dir_index(d)].load(Ordering::Acquire);
                                        e != 0 && now >= e + timeout
                                    }
                                    // Only answering ARP/NDP: until every sender is done.
                                    None => done.iter().filter(|d| d.load(Ordering::Acquire) != 0).count() >= n_active,
                                },
                            };
                            if send_done && recv_done {
                                return Ok(w);
                            }
                            if w.send.is_none() && now < t0 {
                                std::hint::spin_loop();
                            }
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(EngineError::Cpu("a worker thread panicked".into())))
                })
                .collect()
        });

        let mut report = TrialReport {
            valid: true,
            invalid_reasons: Vec::new(),
            frame_size: spec.frame_size,
            rate: spec.rate,
            duration_s: spec.duration_s,
            timeout_ms: spec.timeout_ms,
            forward: None,
            reverse: None,
        };
        let mut sends: Vec<(Direction, u64, u64, u64)> = Vec::new();
        let mut recvs: Vec<Received> = Vec::new();
        for w in results {
            let w = w?;
            if let Some(s) = w.send {
                sends.push((s.dir, s.sent, s.end, s.max_lag));
            }
            if let Some(r) = w.recv {
                if let Some(d) = r.dir {
                    recvs.push(Received {
                        dir: d,
                        report: r.report,
                        rx_ts: r.rx_ts,
                        pdv: r.pdv,
                        seen: r.seen,
                    });
                }
            }
        }
        let limit = spec.duration_s * TOLERANCE;
        for d in active {
            let Some(&(_, sent, end, lag)) = sends.iter().find(|s| s.0 == d) else {
                continue;
            };
            let Some(i) = recvs.iter().position(|r| r.dir == d) else { continue };
            let Received {
                report: mut dr,
                rx_ts,
                pdv,
                seen,
                ..
            } = recvs.swap_remove(i);
            dr.sent = sent;
            dr.lost = sent.saturating_sub(dr.received);
            dr.send_duration_s = clock.secs(end.saturating_sub(t0));
            dr.achieved_rate = if dr.send_duration_s > 0.0 {
                sent as f64 / dr.send_duration_s
            } else {
                0.0
            };
            dr.max_lag_ns = clock.ns(lag);
            if dr.lost > 0 {
                dr.last_lost_s = last_missing(&seen, sent).map(|q| clock.secs(schedule.time_of(q)));
            }
            if let Some(p) = pdv {
                let exact = p.delays.is_exact();
                dr.pdv = Some(crate::report::PdvReport {
                    pdv: crate::delay::PdvStats::of(&p.delays),
                    ipdv: p.ipdv.stats(),
                    timed: p.timed,
                    late: p.late,
                    relative_error: p.delays.relative_error(),
                    exact,
                    cdf: p.delays.cdf_points(200),
                });
            }
            if dr.send_duration_s > limit {
                report.valid = false;
                report.invalid_reasons.push(format!(
                    "{} sending exceeded the {:.10} seconds limit (took {:.6} s), the test is invalid",
                    d.title(),
                    limit,
                    dr.send_duration_s
                ));
            }
            if tag_count > 0 {
                let txs = &tx_ts[dir_index(d)];
                dr.latency_ns = (0..tag_count)
                    .map(|i| {
                        let (t, r) = (txs[i].load(Ordering::Relaxed), rx_ts[i]);
                        if t != 0 && r != 0 {
                            clock.ns(r.saturating_sub(t))
                        } else {
                            u64::MAX
                        }
                    })
                    .collect();
            }
            match d {
                Direction::Forward => report.forward = Some(dr),
                Direction::Reverse => report.reverse = Some(dr),
            }
        }
        Ok(report)
    }
}

/// What a receiver leaves when its trial ends.
struct Received {
    dir: Direction,
    report: DirectionReport,
    rx_ts: Vec<u64>,
    pdv: Option<PdvState>,
    seen: Vec<u64>,
}

/// The highest sequence number below `sent` whose bit is clear.
fn last_missing(seen: &[u64], sent: u64) -> Option<u64> {
    let words = sent.div_ceil(64) as usize;
    for w in (0..words.min(seen.len())).rev() {
        let valid = if w as u64 == sent / 64 {
            (1u64 << (sent % 64)) - 1
        } else {
            u64::MAX
        };
        let missing = !seen[w] & valid;
        if missing != 0 {
            return Some(w as u64 * 64 + 63 - u64::from(missing.leading_zeros()));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_missing_finds_the_highest_hole() {
        let mut seen = vec![u64::MAX; 4];
        assert_eq!(last_missing(&seen, 256), None);
        seen[1] &= !(1 << 5);
        assert_eq!(last_missing(&seen, 256), Some(69));
        // Bits at or above `sent` do not count.
        let seen2 = vec![u64::MAX, 0b0111];
        assert_eq!(last_missing(&seen2, 67), None);
        assert_eq!(last_missing(&seen2, 68), Some(67));
    }

    #[test]
    fn schedule_with_a_rate_change() {
        let clock = Clock::fixed_hz(1_000_000_000);
        let mut spec = TrialSpec::new(84, 1000, 10.0, 0);
        let s = Schedule::new(&spec, &clock);
        assert_eq!(s.time_of(1000), 1_000_000_000);
        assert_eq!(s.due(0), 1);
        assert_eq!(s.due(999_999_999), 1000);
        spec.rate_change = Some(crate::spec::RateChange { at_s: 2.0, rate: 500 });
        let s = Schedule::new(&spec, &clock);
        assert_eq!(s.n1, 2000);
        assert_eq!(s.time_of(1999), 1_999_000_000);
        assert_eq!(s.time_of(2000), 2_000_000_000);
        assert_eq!(s.time_of(2001), 2_002_000_000);
        assert_eq!(s.due(2_000_000_000), 2001);
        assert_eq!(s.due(2_003_999_999), 2002);
        assert_eq!(spec.frames(), 2000 + 4000);
    }
    use crate::spec::LatencySpec;

    #[test]
    fn tag_plan_spreads_tags_evenly_after_the_delay() {
        let mut s = TrialSpec::new(84, 1000, 10.0, 100);
        s.latency = Some(LatencySpec { delay_s: 2.0, tags: 500 });
        let p = TagPlan::new(&s, s.frames()).unwrap();
        assert_eq!((p.first, p.step, p.count), (2000, 16, 500));
        assert_eq!(p.index(2000), Some(0));
        assert_eq!(p.index(2016), Some(1));
        assert_eq!(p.index(2017), None);
        assert_eq!(p.index(1999), None);
        assert_eq!(p.index(2000 + 16 * 500), None);
        s.latency = Some(LatencySpec { delay_s: 20.0, tags: 500 });
        assert!(TagPlan::new(&s, s.frames()).is_none());
    }
}
