//! The `mem` backend: two in-process ports joined back to back (left's transmit is right's
//! receive and vice versa), for tests and for the engine's self-test. Each direction of the wire
//! can drop, duplicate or reorder chosen test frames, and counts what it did, so that tests can
//! compare the engine's counts with what really happened.
//!
//! A port may open several queue sets ([`Port::open_queues`]): every transmit queue feeds the
//! same wire, and the wire spreads what it carries among the receiving port's queues by flow
//! (a hash of the addresses and UDP ports, as RSS does), so that one flow stays in order.

use crate::{IoError, Port, Queues, Result, RxQueue, TxQueue, MAX_FRAME_LEN};
use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use xlat_wire::{classify, MacAddr, Rx};

/// What one direction of the wire does to test frames, chosen by their 64-bit field.
#[derive(Debug, Clone, Default)]
pub struct Impairment {
    /// Test frames with these fields are dropped.
    pub drop: HashSet<u64>,
    /// Test frames with these fields are delivered twice.
    pub duplicate: HashSet<u64>,
    /// Test frames with these fields are held back and delivered after the next frame.
    pub delay_one: HashSet<u64>,
    /// Drop every test frame (a DUT that forwards nothing).
    pub drop_all: bool,
    /// Drop the test frames for which this is true (e.g. a DUT that lost one connection).
    pub drop_when: Option<fn(&[u8]) -> bool>,
    /// The transmit side accepts no frame at all (a backend that takes nothing).
    pub refuse_tx: bool,
    /// Both queues of the wire fail with an error (a port that disappeared).
    pub broken: bool,
    /// Once the wire has carried this many frames, the next transmit call stalls for this
    /// long before it sends (a tester whose sending core was taken away), once.
    pub stall_tx: Option<(u64, std::time::Duration)>,
    /// A DUT of a known capacity: it forwards test frames at most at this many frames/s from a
    /// queue of this many frames, and drops a test frame that finds the queue full (a token
    /// bucket of that rate and depth, timed when the frame is sent).
    pub queue: Option<(f64, u64)>,
}

/// What a wire direction did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WireCounters {
    pub carried: u64,
    pub dropped: u64,
    pub duplicated: u64,
    pub delayed: u64,
    /// Frames lost because the receiving queue was full.
    pub overflow: u64,
}

struct WireState {
    /// One queue per receive queue of the port at the far end (one until it opens more).
    lanes: Vec<VecDeque<Vec<u8>>>,
    /// Per lane: frames lost because it was full.
    lane_overflow: Vec<u64>,
    free: Vec<Vec<u8>>,
    held: Option<Vec<u8>>,
    imp: Impairment,
    counters: WireCounters,
    /// The simulated DUT queue's (`Impairment::queue`) next free time, seconds after `epoch`.
    queue_free_at: f64,
    epoch: std::time::Instant,
}

/// One direction of the in-process wire.
#[derive(Clone)]
pub struct Wire {
    state: Arc<Mutex<WireState>>,
    capacity: usize,
}

impl Wire {
    fn new(capacity: usize) -> Wire {
        let st = WireState {
            lanes: vec![VecDeque::with_capacity(capacity)],
            lane_overflow: vec![0],
            free: Vec::new(),
            held: None,
            imp: Impairment::default(),
            counters: WireCounters::default(),
            queue_free_at: 0.0,
            epoch: std::time::Instant::now(),
        };
        Wire {
            state: Arc::new(Mutex::new(st)),
            capacity,
        }
    }

    fn lock(&self) -> MutexGuard<'_, WireState> {
        // A panic while holding the lock cannot leave the queue inconsistent: take it anyway.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Set what this direction does to test frames from now on.
    pub fn set_impairment(&self, imp: Impairment) {
        let mut st = self.lock();
        st.imp = imp;
        st.queue_free_at = 0.0;
    }

    /// Put `frame` on the wire as if a third party had sent it (another tester's test frame):
    /// it reaches the far end's receive queues as every frame does, impairments included.
    pub fn inject(&self, frame: &[u8]) {
        self.lock().deliver(frame.to_vec(), self.capacity);
    }

    pub fn counters(&self) -> WireCounters {
        self.lock().counters
    }
}

impl WireState {
    /// Whether the simulated DUT queue (if any) has room for one more frame now; if so, it
    /// takes it.
    fn queue_takes_one(&mut self) -> bool {
        let Some((rate, depth)) = self.imp.queue else { return true };
        let now = self.epoch.elapsed().as_secs_f64();
        let start = self.queue_free_at.max(now);
        if start - now >= depth as f64 / rate {
            return false;
        }
        self.queue_free_at = start + 1.0 / rate;
        true
    }

    fn push(&mut self, frame: Vec<u8>, capacity: usize) {
        let lane = flow_lane(&frame, self.lanes.len());
        let q = &mut self.lanes[lane];
        if q.len() >= capacity {
            self.counters.overflow += 1;
            self.lane_overflow[lane] += 1;
            self.free.push(frame);
            return;
        }
        self.counters.carried += 1;
        q.push_back(frame);
    }

    fn deliver(&mut self, frame: Vec<u8>, capacity: usize) {
        let field = match classify(&frame) {
            Rx::Test { field, .. } => Some(field),
            _ => None,
        };
        if let Some(f) = field {
            if self.imp.drop_all || self.imp.drop.contains(&f) || self.imp.drop_when.is_some_and(|p| p(&frame)) || !self.queue_takes_one() {
                self.counters.dropped += 1;
                self.free.push(frame);
                return;
            }
            if self.imp.duplicate.contains(&f) {
                self.counters.duplicated += 1;
                let mut copy = self.free.pop().unwrap_or_default();
                copy.clear();
                copy.extend_from_slice(&frame);
                self.push(copy, capacity);
            }
            if self.imp.delay_one.contains(&f) && self.held.is_none() {
                self.counters.delayed += 1;
                self.held = Some(frame);
                return;
            }
        }
        self.push(frame, capacity);
        if let Some(h) = self.held.take() {
            self.push(h, capacity);
        }
    }
}

/// The receive queue (of `lanes`) a frame goes to: by a hash of its addresses and UDP ports
/// (FNV-1a, finalised), so that the frames of one flow stay on one queue; frames without them (ARP, NDP)
/// go to the first.
fn flow_lane(frame: &[u8], lanes: usize) -> usize {
    if lanes <= 1 {
        return 0;
    }
    let Some((src, dst, sport, dport)) = xlat_wire::udp_tuple(frame) else {
        return 0;
    };
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    for a in [src, dst] {
        match a {
            std::net::IpAddr::V4(a) => eat(&a.octets()),
            std::net::IpAddr::V6(a) => eat(&a.octets()),
        }
    }
    eat(&sport.to_be_bytes());
    eat(&dport.to_be_bytes());
    // MurmurHash3's finaliser: FNV's low bits barely change with the last bytes.
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    (h % lanes as u64) as usize
}

/// The transmit side of a mem port.
pub struct MemTx {
    wire: Wire,
}

/// The receive side of a mem port.
pub struct MemRx {
    wire: Wire,
    /// Which of the wire's lanes this queue receives.
    lane: usize,
    batch: Vec<Vec<u8>>,
    /// `overflow` when `dropped` was last called.
    overflow_seen: u64,
}

fn gone() -> IoError {
    IoError::Backend("mem port: the wire is broken (simulated)".into())
}

impl TxQueue for MemTx {
    fn tx_burst<F: FnMut(usize, &mut [u8]) -> usize>(&mut self, n: usize, mut fill: F) -> Result<usize> {
        let mut st = self.wire.lock();
        if let Some((_, stall)) = st.imp.stall_tx.filter(|(after, _)| st.counters.carried >= *after) {
            st.imp.stall_tx = None;
            drop(st);
            std::thread::sleep(stall);
            st = self.wire.lock();
        }
        if st.imp.broken {
            return Err(gone());
        }
        if st.imp.refuse_tx {
            return Ok(0);
        }
        let mut sent = 0;
        for i in 0..n {
            let mut buf = st.free.pop().unwrap_or_default();
            buf.resize(MAX_FRAME_LEN, 0);
            let len = fill(i, &mut buf);
            if len == 0 || len > MAX_FRAME_LEN {
                st.free.push(buf);
                break;
            }
            buf.truncate(len);
            st.deliver(buf, self.wire.capacity);
            sent += 1;
        }
        Ok(sent)
    }

    fn flush(&mut self) -> Result<()> {
        let mut st = self.wire.lock();
        if let Some(h) = st.held.take() {
            st.push(h, self.wire.capacity);
        }
        Ok(())
    }
}

impl RxQueue for MemRx {
    fn rx_burst<F: FnMut(&[u8])>(&mut self, max: usize, mut f: F) -> Result<usize> {
        {
            let mut st = self.wire.lock();
            if st.imp.broken {
                return Err(gone());
            }
            let q = &mut st.lanes[self.lane];
            let k = max.min(q.len());
            self.batch.extend(q.drain(..k));
        }
        let n = self.batch.len();
        for b in &self.batch {
            f(b);
        }
        let mut st = self.wire.lock();
        st.free.append(&mut self.batch);
        Ok(n)
    }

    /// Frames lost because this port's receive queue was full: the tester's own loss.
    fn dropped(&mut self) -> Result<u64> {
        let now = self.wire.lock().lane_overflow[self.lane];
        let d = now - self.overflow_seen;
        self.overflow_seen = now;
        Ok(d)
    }
}

/// The most queue sets a mem port opens.
pub const MAX_QUEUES: usize = 64;

/// One end of a mem pair.
pub struct MemPort {
    name: String,
    mac: MacAddr,
    tx: Wire,
    rx: Wire,
    opened: bool,
    max_frame_len: usize,
}

impl MemPort {
    /// Give the port an MTU: frames longer than it plus the Ethernet header are refused.
    pub fn set_mtu(&mut self, mtu: usize) {
        self.max_frame_len = (mtu + 14).min(MAX_FRAME_LEN);
    }

    /// The wire this port transmits onto (to impair or count it).
    pub fn tx_wire(&self) -> Wire {
        self.tx.clone()
    }
}

/// Two ports joined back to back; each direction holds up to `capacity` frames in flight.
pub fn pair(capacity: usize) -> (MemPort, MemPort) {
    let l2r = Wire::new(capacity);
    let r2l = Wire::new(capacity);
    let left = MemPort {
        name: "mem:left".into(),
        mac: MacAddr([0x02, 0x78, 0x6c, 0, 0, 1]),
        tx: l2r.clone(),
        rx: r2l.clone(),
        opened: false,
        max_frame_len: MAX_FRAME_LEN,
    };
    let right = MemPort {
        name: "mem:right".into(),
        mac: MacAddr([0x02, 0x78, 0x6c, 0, 0, 2]),
        tx: r2l,
        rx: l2r,
        opened: false,
        max_frame_len: MAX_FRAME_LEN,
    };
    (left, right)
}

impl Port for MemPort {
    type Tx = MemTx;
    type Rx = MemRx;

    fn name(&self) -> String {
        self.name.clone()
    }

    fn mac(&self) -> MacAddr {
        self.mac
    }

    fn link_up(&self) -> bool {
        true
    }

    fn max_frame_len(&self) -> usize {
        self.max_frame_len
    }

    fn max_queues(&self) -> usize {
        MAX_QUEUES
    }

    fn open_queues(&mut self, n: usize) -> Result<Vec<Queues<MemTx, MemRx>>> {
        if self.opened {
            return Err(IoError::Backend(format!("{}: queues already opened", self.name)));
        }
        if n == 0 || n > MAX_QUEUES {
            return Err(IoError::Backend(format!(
                "{}: {n} queues asked, 1 to {MAX_QUEUES} possible",
                self.name
            )));
        }
        self.opened = true;
        {
            let mut st = self.rx.lock();
            let stranded: Vec<Vec<u8>> = st.lanes.drain(..).flatten().collect();
            st.lanes = (0..n).map(|_| VecDeque::with_capacity(self.rx.capacity)).collect();
            st.lane_overflow = vec![0; n];
            for f in stranded {
                let lane = flow_lane(&f, n);
                st.lanes[lane].push_back(f);
            }
        }
        Ok((0..n)
            .map(|lane| Queues {
                tx: MemTx { wire: self.tx.clone() },
                rx: MemRx {
                    wire: self.rx.clone(),
                    lane,
                    batch: Vec::with_capacity(crate::DEFAULT_BURST),
                    overflow_seen: 0,
                },
                ctl: MemTx { wire: self.tx.clone() },
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlat_wire::frame::{IpPair, TestFrame};

    fn frame(seq: u64, buf: &mut [u8]) -> usize {
        flow_frame(1, seq, buf)
    }

    fn recv_all(rx: &mut MemRx) -> Vec<u64> {
        let mut got = Vec::new();
        while rx
            .rx_burst(32, |f| {
                if let Rx::Test { field, .. } = classify(f) {
                    got.push(field)
                }
            })
            .unwrap()
            > 0
        {}
        got
    }

    #[test]
    fn carries_drops_duplicates_and_reorders() {
        let (mut l, mut r) = pair(1024);
        let imp = Impairment {
            drop: [3].into(),
            duplicate: [5].into(),
            delay_one: [7].into(),
            drop_all: false,
            ..Default::default()
        };
        l.tx_wire().set_impairment(imp);
        let mut lq = l.queues().unwrap();
        let mut rq = r.queues().unwrap();
        assert!(l.queues().is_err());
        let sent = lq.tx.tx_burst(10, |i, b| frame(i as u64, b)).unwrap();
        assert_eq!(sent, 10);
        lq.tx.flush().unwrap();
        assert_eq!(recv_all(&mut rq.rx), vec![0, 1, 2, 4, 5, 5, 6, 8, 7, 9]);
        let c = l.tx_wire().counters();
        assert_eq!((c.dropped, c.duplicated, c.delayed), (1, 1, 1));
        // The other direction is untouched.
        rq.tx.tx_burst(3, |i, b| frame(i as u64, b)).unwrap();
        assert_eq!(recv_all(&mut lq.rx), vec![0, 1, 2]);
    }

    /// A UDP test frame of flow `port` with field `seq`.
    fn flow_frame(port: u16, seq: u64, buf: &mut [u8]) -> usize {
        TestFrame {
            eth_dst: MacAddr::BROADCAST,
            eth_src: MacAddr::ZERO,
            ip: IpPair::V4 {
                src: "198.18.0.2".parse().unwrap(),
                dst: "198.19.0.2".parse().unwrap(),
            },
            sport: port,
            dport: 2,
            frame_size: 64,
            field: seq,
            tunnel: None,
        }
        .write(buf)
        .unwrap()
        .len
    }

    #[test]
    fn several_queues_spread_flows_and_keep_each_in_order() {
        let (mut l, mut r) = pair(4096);
        let mut lq = l.open_queues(2).unwrap();
        let mut rq = r.open_queues(3).unwrap();
        assert!(r.open_queues(1).is_err());
        // Two senders, 16 flows, each flow's frames numbered in the order they are sent.
        for round in 0..8u64 {
            for (k, q) in lq.iter_mut().enumerate() {
                let sent = q.tx.tx_burst(8, |i, b| flow_frame((k * 8 + i) as u16, round, b)).unwrap();
                assert_eq!(sent, 8);
            }
        }
        let mut per_queue = Vec::new();
        let mut all = Vec::new();
        for q in &mut rq {
            let mut got = Vec::new();
            while q
                .rx
                .rx_burst(32, |f| {
                    if let (Rx::Test { field, .. }, Some((_, _, sport, _))) = (classify(f), xlat_wire::udp_tuple(f)) {
                        got.push((sport, field))
                    }
                })
                .unwrap()
                > 0
            {}
            per_queue.push(got.len());
            all.extend(got);
        }
        assert_eq!(all.len(), 128, "every frame arrives once");
        assert!(per_queue.iter().all(|n| *n > 0), "flows spread over every queue: {per_queue:?}");
        for flow in 0..16u16 {
            let seqs: Vec<u64> = all.iter().filter(|(p, _)| *p == flow).map(|(_, s)| *s).collect();
            assert_eq!(seqs, (0..8).collect::<Vec<_>>(), "flow {flow} in order on one queue");
        }
        // Opened once: never again, whatever the count.
        let again = l.open_queues(2).err().map(|e| e.to_string());
        assert!(again.as_deref().is_some_and(|e| e.ends_with("queues already opened")), "{again:?}");
        // A count out of range is refused for what it is, and leaves the port to be opened.
        let (mut a, _) = pair(4);
        for n in [0, MAX_QUEUES + 1] {
            let e = a.open_queues(n).err().map(|e| e.to_string());
            let why = format!("{n} queues asked, 1 to {MAX_QUEUES} possible");
            assert!(e.as_deref().is_some_and(|e| e.ends_with(&why)), "{n}: {e:?}");
        }
        assert_eq!(a.open_queues(MAX_QUEUES).map(|q| q.len()).ok(), Some(MAX_QUEUES));
    }

    #[test]
    fn overflow_is_counted_and_fill_zero_ends_burst() {
        let (mut l, mut r) = pair(4);
        let mut lq = l.queues().unwrap();
        let _rq = r.queues().unwrap();
        assert_eq!(lq.tx.tx_burst(8, |i, b| if i < 6 { frame(i as u64, b) } else { 0 }).unwrap(), 6);
        assert_eq!(l.tx_wire().counters().overflow, 2);
    }
}
