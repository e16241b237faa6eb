//! The `mem` backend: two in-process ports joined back to back (left's transmit is right's
//! receive and vice versa), for tests and for the engine's self-test. Each direction of the wire
//! can drop, duplicate or reorder chosen test frames, and counts what it did, so that tests can
//! compare the engine's counts with what really happened.

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
    queue: VecDeque<Vec<u8>>,
    free: Vec<Vec<u8>>,
    held: Option<Vec<u8>>,
    imp: Impairment,
    counters: WireCounters,
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
            queue: VecDeque::with_capacity(capacity),
            free: Vec::new(),
            held: None,
            imp: Impairment::default(),
            counters: WireCounters::default(),
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
        self.lock().imp = imp;
    }

    pub fn counters(&self) -> WireCounters {
        self.lock().counters
    }
}

impl WireState {
    fn push(&mut self, frame: Vec<u8>, capacity: usize) {
        if self.queue.len() >= capacity {
            self.counters.overflow += 1;
            self.free.push(frame);
            return;
        }
        self.counters.carried += 1;
        self.queue.push_back(frame);
    }

    fn deliver(&mut self, frame: Vec<u8>, capacity: usize) {
        let field = match classify(&frame) {
            Rx::Test { field, .. } => Some(field),
            _ => None,
        };
        if let Some(f) = field {
            if self.imp.drop_all || self.imp.drop.contains(&f) || self.imp.drop_when.is_some_and(|p| p(&frame)) {
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

/// The transmit side of a mem port.
pub struct MemTx {
    wire: Wire,
}

/// The receive side of a mem port.
pub struct MemRx {
    wire: Wire,
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
            let k = max.min(st.queue.len());
            self.batch.extend(st.queue.drain(..k));
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
        let now = self.wire.lock().counters.overflow;
        let d = now - self.overflow_seen;
        self.overflow_seen = now;
        Ok(d)
    }
}

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

    fn queues(&mut self) -> Result<Queues<MemTx, MemRx>> {
        if self.opened {
            return Err(IoError::Backend(format!("{}: queues already opened", self.name)));
        }
        self.opened = true;
        Ok(Queues {
            tx: MemTx { wire: self.tx.clone() },
            rx: MemRx {
                wire: self.rx.clone(),
                batch: Vec::with_capacity(crate::DEFAULT_BURST),
                overflow_seen: 0,
            },
            ctl: MemTx { wire: self.tx.clone() },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlat_wire::frame::{IpPair, TestFrame};

    fn frame(seq: u64, buf: &mut [u8]) -> usize {
        TestFrame {
            eth_dst: MacAddr::BROADCAST,
            eth_src: MacAddr::ZERO,
            ip: IpPair::V4 {
                src: "198.18.0.2".parse().unwrap(),
                dst: "198.19.0.2".parse().unwrap(),
            },
            sport: 1,
            dport: 2,
            frame_size: 64,
            field: seq,
        }
        .write(buf)
        .unwrap()
        .len
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

    #[test]
    fn overflow_is_counted_and_fill_zero_ends_burst() {
        let (mut l, mut r) = pair(4);
        let mut lq = l.queues().unwrap();
        let _rq = r.queues().unwrap();
        assert_eq!(lq.tx.tx_burst(8, |i, b| if i < 6 { frame(i as u64, b) } else { 0 }).unwrap(), 6);
        assert_eq!(l.tx_wire().counters().overflow, 2);
    }
}
