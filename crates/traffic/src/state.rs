//! The Responder's state table (RFC 9693): the 4-tuples of the foreground frames that arrived
//! from the Initiator, as the DUT rewrote them, in a ring of `M` entries of 12 bytes (IPv4:
//! NAT44, NAT64) or 36 bytes (IPv6: NAT66, NAT46).
//!
//! One receiver writes it (the Responder's receiver, in both phases) while the Responder's
//! sender reads it on another core. There is no lock: an entry is three (nine) 32-bit atomics, and one
//! sequence counter for the whole table tells a reader whether the entry it read may have been
//! written meanwhile (a seqlock whose sequence also numbers the writes: write `w` goes to
//! entry `w mod M`, and the counter is `2w + 1` while it is being made and `2w + 2` after). A
//! reader loads the counter (`s0`), the entry, and the counter again (`s1`); the writes that
//! may have overlapped its reads are those not finished at `s0` and started by `s1`. If none
//! of them falls on the entry, what it read is one whole tuple, else it reads again. siitperf
//! keeps `std::atomic` 4-tuples, which libstdc++ implements with a lock or padding.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering};

/// A connection as the Responder saw it: the Initiator's address and port after the DUT's
/// translation (the frame's source), and the Responder's (its destination). Both addresses are
/// of the Responder's IP version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tuple4 {
    pub initiator: IpAddr,
    pub responder: IpAddr,
    pub initiator_port: u16,
    pub responder_port: u16,
}

/// The 32-bit words of an entry: initiator address, responder address, ports (initiator << 16
/// | responder); 3 for IPv4, 9 for IPv6.
const MAX_WORDS: usize = 9;

impl Tuple4 {
    /// The entry words of the tuple, and how many there are; `None` when the two addresses are
    /// of different versions.
    fn words(&self) -> Option<([u32; MAX_WORDS], usize)> {
        let mut w = [0u32; MAX_WORDS];
        let ports = (u32::from(self.initiator_port) << 16) | u32::from(self.responder_port);
        match (self.initiator, self.responder) {
            (IpAddr::V4(a), IpAddr::V4(b)) => {
                w[..3].copy_from_slice(&[u32::from(a), u32::from(b), ports]);
                Some((w, 3))
            }
            (IpAddr::V6(a), IpAddr::V6(b)) => {
                let (a, b) = (u128::from(a), u128::from(b));
                for k in 0..4 {
                    w[k] = (a >> (96 - 32 * k)) as u32;
                    w[4 + k] = (b >> (96 - 32 * k)) as u32;
                }
                w[8] = ports;
                Some((w, 9))
            }
            _ => None,
        }
    }

    fn from_words(w: &[u32]) -> Tuple4 {
        let ports = w[w.len() - 1];
        let (initiator, responder) = if w.len() == 3 {
            (IpAddr::V4(Ipv4Addr::from(w[0])), IpAddr::V4(Ipv4Addr::from(w[1])))
        } else {
            let a = |o: usize| IpAddr::V6(Ipv6Addr::from((0..4).fold(0u128, |acc, k| (acc << 32) | u128::from(w[o + k]))));
            (a(0), a(4))
        };
        Tuple4 {
            initiator,
            responder,
            initiator_port: (ports >> 16) as u16,
            responder_port: ports as u16,
        }
    }
}

/// A reader gives up on an entry after this many torn reads in a row (each needs the writer
/// to write that very entry during the read).
const READ_TRIES: usize = 64;

/// Why a state table cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    #[error("a state table needs at least one entry")]
    Empty,
    #[error("a state table of {entries} entries needs {bytes} bytes of memory, which could not be allocated")]
    NoMemory { entries: u64, bytes: u64 },
}

/// The ring of learnt tuples.
pub struct StateTable {
    /// `width` words per entry (see [`Tuple4::words`]).
    words: Box<[AtomicU32]>,
    width: usize,
    len: u64,
    /// The sequence: twice the writes finished, plus one while a write is being made.
    seq: AtomicU64,
    /// Held by the writer of the moment: the Responder's receivers (one per queue) take turns,
    /// so that the sequence always has one writer.
    writing: AtomicBool,
}

impl std::fmt::Debug for StateTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateTable")
            .field("len", &self.len)
            .field("written", &self.written())
            .finish()
    }
}

impl StateTable {
    /// A table of `entries` entries of IPv4 tuples (12 bytes each), none written yet.
    pub fn new(entries: u64) -> Result<StateTable, StateError> {
        StateTable::with_version(entries, false)
    }

    /// A table of `entries` entries of IPv6 tuples (`v6`, 36 bytes each) or IPv4 tuples.
    pub fn with_version(entries: u64, v6: bool) -> Result<StateTable, StateError> {
        if entries == 0 {
            return Err(StateError::Empty);
        }
        let width = if v6 { 9 } else { 3 };
        let n = entries.checked_mul(width).and_then(|n| usize::try_from(n).ok());
        let bytes = entries.saturating_mul(4 * width);
        let Some(n) = n else {
            return Err(StateError::NoMemory { entries, bytes });
        };
        let mut v: Vec<AtomicU32> = Vec::new();
        v.try_reserve_exact(n).map_err(|_| StateError::NoMemory { entries, bytes })?;
        v.resize_with(n, || AtomicU32::new(0));
        Ok(StateTable {
            words: v.into_boxed_slice(),
            width: width as usize,
            len: entries,
            seq: AtomicU64::new(0),
            writing: AtomicBool::new(false),
        })
    }

    /// M: the number of entries.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True for a table of IPv6 tuples.
    pub fn is_v6(&self) -> bool {
        self.width == 9
    }

    /// Tuples learnt so far (all writes, also those that overwrote an older entry).
    pub fn written(&self) -> u64 {
        self.seq.load(Ordering::Acquire) / 2
    }

    /// Entries that hold a learnt tuple: min(written, M).
    pub fn valid(&self) -> u64 {
        self.written().min(self.len)
    }

    /// Learn `t` into the next entry of the ring; false (nothing learnt) when its addresses are
    /// not of the table's IP version. Threads that learn at once (the Responder's receivers,
    /// one per queue) take turns: a write is a few stores, so a turn is short.
    #[inline]
    pub fn learn(&self, t: Tuple4) -> bool {
        let Some((w, width)) = t.words() else { return false };
        if width != self.width {
            return false;
        }
        while self
            .writing
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
        let s = self.seq.load(Ordering::Relaxed);
        let at = ((s / 2) % self.len) as usize * width;
        self.seq.store(s + 1, Ordering::Relaxed);
        // Orders the store above before the entry's: a reader that sees one of the entry's
        // new words then sees the sequence at s + 1 or later.
        fence(Ordering::Release);
        for (slot, v) in self.words[at..at + width].iter().zip(w) {
            slot.store(v, Ordering::Relaxed);
        }
        self.seq.store(s + 2, Ordering::Release);
        self.writing.store(false, Ordering::Release);
        true
    }

    /// The tuple in entry `i` (`i < M`), whole; `None` when the entry was never written (or,
    /// after 64 torn reads in a row, when the writer kept rewriting it).
    #[inline]
    pub fn read(&self, i: u64) -> Option<Tuple4> {
        let mut w = [0u32; MAX_WORDS];
        self.read_words(i, &mut w).then(|| Tuple4::from_words(&w[..self.width]))
    }

    /// Entry `i` as the 16-bit words a Responder's frame carries, in this order: the
    /// Responder's port, the Initiator's port, the Responder's address words, the Initiator's
    /// (6 words for IPv4, 18 for IPv6); `None` as for [`StateTable::read`]. The same tuple
    /// as `read`, without going through `IpAddr`.
    #[inline]
    pub(crate) fn read_frame_words(&self, i: u64) -> Option<[u16; 18]> {
        let mut out = [0u16; 18];
        if let Some(w) = self.read_frame_words_v4(i) {
            out[..6].copy_from_slice(&w);
            return Some(out);
        }
        let mut w = [0u32; MAX_WORDS];
        if self.width == 3 || !self.read_words(i, &mut w) {
            return None;
        }
        let ports = w[8];
        out[0] = ports as u16;
        out[1] = (ports >> 16) as u16;
        for k in 0..4 {
            let (ini, res) = (w[k], w[4 + k]);
            out[2 + 2 * k] = (res >> 16) as u16;
            out[3 + 2 * k] = res as u16;
            out[10 + 2 * k] = (ini >> 16) as u16;
            out[11 + 2 * k] = ini as u16;
        }
        Some(out)
    }

    /// [`StateTable::read_frame_words`] of an IPv4 table (`None` for an IPv6 one).
    #[inline(always)]
    pub(crate) fn read_frame_words_v4(&self, i: u64) -> Option<[u16; 6]> {
        self.read_entry_v4(i).map(|[ini, res, ports]| frame_words_v4(ini, res, ports))
    }

    /// Entry `i` of an IPv4 table as its three words (initiator address, responder address,
    /// ports: initiator << 16 | responder), `None` as for [`StateTable::read`] and for an IPv6
    /// table: one try without the general loop; a read that may have overlapped a write is made
    /// again by `read_words`.
    #[inline(always)]
    fn read_entry_v4(&self, i: u64) -> Option<[u32; 3]> {
        if self.width != 3 {
            return None;
        }
        let e = self.words.get(i as usize * 3..i as usize * 3 + 3)?;
        let s0 = self.seq.load(Ordering::Acquire);
        if i >= (s0 / 2).min(self.len) {
            return None;
        }
        let mut w = [0u32; MAX_WORDS];
        w[..3].copy_from_slice(&[
            e[0].load(Ordering::Relaxed),
            e[1].load(Ordering::Relaxed),
            e[2].load(Ordering::Relaxed),
        ]);
        fence(Ordering::Acquire);
        let s1 = self.seq.load(Ordering::Relaxed);
        // (An odd s0 is a write under way from the start: with s1 == s0 it may still be
        // writing entry i.)
        if (s1 != s0 || s0 % 2 == 1) && self.overwritten(i, s0, s1) && !self.read_words(i, &mut w) {
            return None;
        }
        Some([w[0], w[1], w[2]])
    }

    /// The IPv4 Responder's frames of the entries `entries`: frame `i` gets entry
    /// `entries[i]`'s words (as [`StateTable::read_entry_v4`] gives them) in `rows[k][i]`. The
    /// burst is read under one check of the sequence, and read again entry by entry when a
    /// write overlapped it. A frame whose entry cannot be read gets the previous frame's words,
    /// the first one `last`'s; `last` ends as the last frame's. False (nothing written) for an
    /// IPv6 table or rows shorter than `entries`.
    pub(crate) fn read_rows_v4(&self, entries: &[u64], rows: [&mut [u32]; 3], last: &mut [u32; 3]) -> bool {
        let n = entries.len();
        let [Some(r0), Some(r1), Some(r2)] = rows.map(|r| r.get_mut(..n)) else {
            return false;
        };
        if self.width != 3 {
            return false;
        }
        let (start, s0) = (*last, self.seq.load(Ordering::Acquire));
        let valid = (s0 / 2).min(self.len);
        let mut w = start;
        let words = &self.words[..];
        for (&e, ((a, b), c)) in entries.iter().zip(r0.iter_mut().zip(r1.iter_mut()).zip(r2.iter_mut())) {
            if e < valid {
                // SAFETY: `words` holds 3 words for each of `len` entries, and e < valid <= len.
                let x = unsafe { words.get_unchecked(e as usize * 3..e as usize * 3 + 3) };
                w = [
                    x[0].load(Ordering::Relaxed),
                    x[1].load(Ordering::Relaxed),
                    x[2].load(Ordering::Relaxed),
                ];
            }
            (*a, *b, *c) = (w[0], w[1], w[2]);
        }
        fence(Ordering::Acquire);
        if self.seq.load(Ordering::Relaxed) != s0 || s0 % 2 == 1 {
            // A learn overlapped the burst (or was under way when it began: an odd sequence):
            // each entry again, on its own check.
            w = start;
            for (&e, ((a, b), c)) in entries.iter().zip(r0.iter_mut().zip(r1.iter_mut()).zip(r2.iter_mut())) {
                if let Some(x) = self.read_entry_v4(e) {
                    w = x;
                }
                (*a, *b, *c) = (w[0], w[1], w[2]);
            }
        }
        *last = w;
        true
    }

    /// Entry `i`'s words into `out`, whole (see [`StateTable::read`]).
    #[inline]
    fn read_words(&self, i: u64, out: &mut [u32; MAX_WORDS]) -> bool {
        if i >= self.len {
            return false;
        }
        let at = i as usize * self.width;
        for _ in 0..READ_TRIES {
            let s0 = self.seq.load(Ordering::Acquire);
            if i >= (s0 / 2).min(self.len) {
                return false;
            }
            for (o, slot) in out.iter_mut().zip(&self.words[at..at + self.width]) {
                *o = slot.load(Ordering::Relaxed);
            }
            fence(Ordering::Acquire);
            let s1 = self.seq.load(Ordering::Relaxed);
            if !self.overwritten(i, s0, s1) {
                return true;
            }
        }
        false
    }

    /// True when a write not finished at sequence `s0` and started by sequence `s1` (the
    /// writes `s0 / 2 ..= (s1 - 1) / 2`) goes to entry `i`.
    #[inline]
    fn overwritten(&self, i: u64, s0: u64, s1: u64) -> bool {
        let w0 = s0 / 2;
        if s1 == 0 || (s1 - 1) / 2 < w0 {
            return false;
        }
        let span = (s1 - 1) / 2 - w0; // the writes w0 ..= w0 + span
        if span + 1 >= self.len {
            return true;
        }
        // Distance from the first of those writes' entry to entry i, around the ring.
        let first = w0 % self.len;
        (i + self.len - first) % self.len <= span
    }

    /// The valid entries that equal an earlier valid entry (a DUT that mapped two
    /// connections onto one tuple). Sorts a copy: 16 (IPv4) or 36 (IPv6) bytes per entry for the
    /// check's duration. `None` when that memory cannot be had.
    pub fn duplicates(&self) -> Option<u64> {
        let n = usize::try_from(self.valid()).ok()?;
        let mut w = [0u32; MAX_WORDS];
        if self.width == 3 {
            let mut keys: Vec<u128> = Vec::new();
            keys.try_reserve_exact(n).ok()?;
            for i in 0..n as u64 {
                if self.read_words(i, &mut w) {
                    keys.push((u128::from(w[0]) << 64) | (u128::from(w[1]) << 32) | u128::from(w[2]));
                }
            }
            keys.sort_unstable();
            Some(keys.windows(2).filter(|k| k[0] == k[1]).count() as u64)
        } else {
            let mut keys: Vec<[u32; MAX_WORDS]> = Vec::new();
            keys.try_reserve_exact(n).ok()?;
            for i in 0..n as u64 {
                if self.read_words(i, &mut w) {
                    keys.push(w);
                }
            }
            keys.sort_unstable();
            Some(keys.windows(2).filter(|k| k[0] == k[1]).count() as u64)
        }
    }
}

/// An IPv4 entry's words (initiator, responder, ports) as the Responder's frame words: its
/// port, the Initiator's port, its address, the Initiator's.
#[inline(always)]
fn frame_words_v4(ini: u32, res: u32, ports: u32) -> [u16; 6] {
    [
        ports as u16,
        (ports >> 16) as u16,
        (res >> 16) as u16,
        res as u16,
        (ini >> 16) as u16,
        ini as u16,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    fn tuple(k: u64) -> Tuple4 {
        // Every word derives from k: a torn entry mixes two k and fails `consistent`.
        let h = crate::rng::mix64(k);
        Tuple4 {
            initiator: Ipv4Addr::from(k as u32).into(),
            responder: Ipv4Addr::from((h >> 32) as u32).into(),
            initiator_port: (h >> 16) as u16,
            responder_port: (k as u16) ^ (h as u16),
        }
    }

    fn consistent(t: &Tuple4) -> bool {
        // The table only ever holds tuple(k) for k below 2^32 here.
        let IpAddr::V4(a) = t.initiator else { return false };
        *t == tuple(u64::from(u32::from(a)))
    }

    #[test]
    fn a_ring_of_m_entries() {
        let t = StateTable::new(3).unwrap();
        assert_eq!((t.len(), t.valid()), (3, 0));
        assert_eq!(t.read(0), None);
        assert!(t.learn(tuple(1)));
        t.learn(tuple(2));
        assert_eq!((t.valid(), t.read(1), t.read(2)), (2, Some(tuple(2)), None));
        t.learn(tuple(3));
        t.learn(tuple(4)); // wraps onto entry 0
        assert_eq!((t.written(), t.valid()), (4, 3));
        assert_eq!(t.read(0), Some(tuple(4)));
        assert_eq!(t.read(3), None);
        assert_eq!(t.duplicates(), Some(0));
        t.learn(tuple(3)); // entry 1 now repeats entry 2
        assert_eq!(t.duplicates(), Some(1));
        assert!(matches!(StateTable::new(0), Err(StateError::Empty)));
        assert!(matches!(StateTable::new(u64::MAX / 2), Err(StateError::NoMemory { .. })));
    }

    #[test]
    fn ipv6_tuples_in_36_byte_entries() {
        let t = StateTable::with_version(2, true).unwrap();
        assert!(t.is_v6());
        let x = Tuple4 {
            initiator: "2001:2:0:8000::1".parse().unwrap(),
            responder: "2001:2:0:8000::2".parse().unwrap(),
            initiator_port: 40_000,
            responder_port: 7,
        };
        assert!(!t.learn(tuple(1)), "an IPv4 tuple does not go into an IPv6 table");
        assert!(t.learn(x));
        assert_eq!(t.read(0), Some(x));
        assert!(t.learn(x));
        assert_eq!(t.duplicates(), Some(1));
        let mixed = Tuple4 {
            responder: "198.19.0.2".parse().unwrap(),
            ..x
        };
        assert!(!t.learn(mixed));
        assert!(!StateTable::new(2).unwrap().learn(x));
    }

    /// The frame words are the tuple's, swapped to the Responder's view, in both versions.
    #[test]
    fn frame_words_are_the_tuple_read_whole() {
        let v4 = StateTable::new(2).unwrap();
        v4.learn(Tuple4 {
            initiator: "198.19.0.1".parse().unwrap(),
            responder: "198.18.2.3".parse().unwrap(),
            initiator_port: 40_001,
            responder_port: 80,
        });
        let want4 = [80, 40_001, 0xc612, 0x0203, 0xc613, 0x0001];
        assert_eq!(v4.read_frame_words(0).unwrap()[..6], want4);
        assert_eq!(v4.read_frame_words(1), None, "never written");
        let v6 = StateTable::with_version(1, true).unwrap();
        v6.learn(Tuple4 {
            initiator: "2001:2::1".parse().unwrap(),
            responder: "2001:2:0:8000::abcd".parse().unwrap(),
            initiator_port: 7,
            responder_port: 9,
        });
        let w = v6.read_frame_words(0).unwrap();
        assert_eq!(w[..2], [9, 7]);
        assert_eq!(w[2..10], [0x2001, 2, 0, 0x8000, 0, 0, 0, 0xabcd]);
        assert_eq!(w[10..18], [0x2001, 2, 0, 0, 0, 0, 0, 1]);
    }

    /// `StateTable::read_rows_v4` as each frame's words (`None` when it writes nothing).
    fn read_frames(t: &StateTable, entries: &[u64], last: &mut [u32; 3]) -> Option<Vec<[u16; 6]>> {
        let mut rows = [vec![0; entries.len()], vec![0; entries.len()], vec![0; entries.len()]];
        let [a, b, c] = &mut rows;
        t.read_rows_v4(entries, [a, b, c], last).then(|| {
            (0..entries.len())
                .map(|i| frame_words_v4(rows[0][i], rows[1][i], rows[2][i]))
                .collect()
        })
    }

    /// A burst's frames get their entries' words, frame by frame; an entry not written yet
    /// keeps the previous frame's words (the first frame `last`'s), as the per-entry read does.
    #[test]
    fn burst_frames_get_the_entries_words() {
        let t = StateTable::new(10).unwrap();
        for k in 0..6 {
            t.learn(tuple(k + 1));
        }
        let entries = [3u64, 7, 0, 5, 9, 9, 2];
        let mut last = [0x0005_0006, 0x0003_0004, 0x0002_0001];
        let out = read_frames(&t, &entries, &mut last).unwrap();
        let mut want = [1, 2, 3, 4, 5, 6];
        for (i, &e) in entries.iter().enumerate() {
            if let Some(w) = t.read_frame_words_v4(e) {
                want = w;
            }
            assert_eq!(out[i], want, "frame {i}, entry {e}");
        }
        assert_eq!(frame_words_v4(last[0], last[1], last[2]), want);
        // The first frame's entry (7) is not written: it keeps `last`'s words.
        assert_eq!(out[1], t.read_frame_words_v4(3).unwrap());
        // Every entry learnt: each frame its own.
        let learnt = [5u64, 0, 3, 3];
        let out = read_frames(&t, &learnt, &mut last).unwrap();
        for (i, &e) in learnt.iter().enumerate() {
            assert_eq!(out[i], t.read_frame_words_v4(e).unwrap(), "frame {i}, entry {e}");
        }
        assert_eq!(frame_words_v4(last[0], last[1], last[2]), out[3]);
        let mut short = [vec![0; 3], vec![0; 4], vec![0; 4]];
        let [a, b, c] = &mut short;
        assert!(!t.read_rows_v4(&learnt, [a, b, c], &mut last), "rows shorter than the burst");
        let v6 = StateTable::with_version(2, true).unwrap();
        assert!(read_frames(&v6, &entries, &mut last).is_none(), "an IPv6 table has no IPv4 entries");
    }

    /// Bursts read while a writer keeps learning: every frame's words are one whole tuple.
    #[test]
    fn burst_frames_are_whole_tuples_under_a_writer() {
        let t = StateTable::new(64).unwrap();
        for k in 0..64 {
            t.learn(tuple(k));
        }
        let stop = AtomicBool::new(false);
        // The writer stops when the reader is done, also when its assertion fails (the guard
        // is dropped while unwinding), and after 10 s at most.
        struct Stop<'a>(&'a AtomicBool);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        std::thread::scope(|sc| {
            sc.spawn(|| {
                let (mut k, end) = (64, std::time::Instant::now() + std::time::Duration::from_secs(10));
                while !stop.load(Ordering::Relaxed) && std::time::Instant::now() < end {
                    t.learn(tuple(k));
                    k += 1;
                }
            });
            let _stop = Stop(&stop);
            let entries: Vec<u64> = (0..64).collect();
            for _ in 0..20_000 {
                let mut last = [0; 3];
                let out = read_frames(&t, &entries, &mut last).unwrap();
                for (i, burst) in out.iter().enumerate() {
                    // The per-entry read too (it accepted an entry whose write was under way
                    // from before its first look at the sequence until after its second).
                    let one = t.read_frame_words_v4(i as u64).map(|w| w.to_vec());
                    let burst = Some(burst.to_vec());
                    for w in [burst, one].into_iter().flatten() {
                        let ini = Ipv4Addr::from((u32::from(w[4]) << 16) | u32::from(w[5]));
                        let back = tuple(u64::from(u32::from(ini)));
                        let IpAddr::V4(res) = back.responder else { unreachable!() };
                        let r = u32::from(res);
                        assert_eq!(
                            [w[0], w[1], w[2], w[3]],
                            [back.responder_port, back.initiator_port, (r >> 16) as u16, r as u16],
                            "a torn frame: {w:?}"
                        );
                    }
                }
            }
        });
    }

    #[test]
    fn overlap_rule() {
        let t = StateTable::new(8).unwrap();
        // Idle writer (even, equal sequences): nothing overlaps, not even the next entry.
        assert!(!t.overwritten(5, 10, 10) && !t.overwritten(4, 10, 10));
        // Write 5 in progress at the first read: entry 5.
        assert!(t.overwritten(5, 11, 11) && !t.overwritten(6, 11, 11));
        // Writes 5 and 6 (from 10: idle, to 13: write 6 in progress).
        assert!(t.overwritten(5, 10, 13) && t.overwritten(6, 10, 13));
        assert!(!t.overwritten(4, 10, 13) && !t.overwritten(7, 10, 13));
        // Writes 7..=9 go to entries 7, 0, 1.
        assert!(t.overwritten(0, 14, 19) && t.overwritten(1, 14, 19) && !t.overwritten(2, 14, 19));
        // Eight writes cover the ring.
        assert!(t.overwritten(3, 20, 35));
    }

    /// The writer rewrites a small ring as fast as it can while readers on other threads read
    /// it: every tuple a reader accepts must be one whole learnt tuple. (Without the overlap
    /// check in `read`, this fails within a few million reads on two cores.)
    #[test]
    fn concurrent_reads_never_see_a_torn_entry() {
        let t = StateTable::new(16).unwrap();
        let stop = AtomicBool::new(false);
        let (accepted, torn) = std::thread::scope(|s| {
            let readers: Vec<_> = (0..2)
                .map(|r| {
                    let (t, stop) = (&t, &stop);
                    s.spawn(move || {
                        let (mut ok, mut bad, mut i) = (0u64, 0u64, r as u64);
                        while !stop.load(Ordering::Relaxed) {
                            i = (i * 5 + 3) % 16;
                            if let Some(x) = t.read(i) {
                                if consistent(&x) {
                                    ok += 1;
                                } else {
                                    bad += 1;
                                }
                            }
                        }
                        (ok, bad)
                    })
                })
                .collect();
            for k in 0..20_000_000u64 {
                t.learn(tuple(k));
            }
            stop.store(true, Ordering::Relaxed);
            readers
                .into_iter()
                .map(|h| h.join().unwrap())
                .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        });
        assert_eq!(torn, 0, "{torn} torn entries accepted ({accepted} whole)");
        assert!(accepted > 1000, "the readers read too little to judge: {accepted}");
    }

    /// Two writers (the receivers of two queues) learn at once while a reader reads: every
    /// write counts, and no entry is ever torn.
    #[test]
    fn concurrent_writers_take_turns() {
        let t = StateTable::new(64).unwrap();
        let stop = AtomicBool::new(false);
        let torn = std::thread::scope(|s| {
            let reader = s.spawn(|| {
                let mut bad = 0u64;
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    i = (i * 5 + 3) % 64;
                    if let Some(x) = t.read(i) {
                        bad += u64::from(!consistent(&x));
                    }
                }
                bad
            });
            let writers: Vec<_> = (0..2u64)
                .map(|w| {
                    let t = &t;
                    s.spawn(move || {
                        for k in 0..2_000_000u64 {
                            t.learn(tuple(2 * k + w));
                        }
                    })
                })
                .collect();
            for h in writers {
                h.join().unwrap();
            }
            stop.store(true, Ordering::Relaxed);
            reader.join().unwrap()
        });
        assert_eq!(t.written(), 4_000_000, "every write of both writers counts");
        assert_eq!(torn, 0);
        assert!((0..64).all(|i| t.read(i).is_some_and(|x| consistent(&x))));
    }
}
