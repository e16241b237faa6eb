//! A burst of frames with their varying fields computed ahead, and the scratch space that
//! holds those values between bursts. [`Burst::write`] is the sender's per-frame call.

use crate::plan::MAX_FIELDS;
use crate::template::prepared::{Prepared, PREPARED_ROW};
use crate::template::tuple::{TupleRows, Tuples4};
use crate::template::{Template, TUPLE_SLOTS};
use crate::writer::{FrameWriter, WithWriter};

/// Room for the precomputed field values of a burst, kept by the sender between bursts (see
/// [`DirectionStream::burst`](crate::DirectionStream::burst)).
#[derive(Debug, Clone, Default)]
pub struct BurstScratch {
    pub(crate) vals: Vec<u16>,
    pub(crate) fg: Vec<bool>,
    /// The Responder's foreground frames (stateful phase 2): each frame's tuple words.
    pub(crate) tuples: Vec<[u16; TUPLE_SLOTS]>,
    /// The IPv4 Responder's entries of a burst (see `responder`), and its frames' rows.
    pub(crate) entries: Vec<u64>,
    pub(crate) tuple_rows: TupleRows,
    /// The last tuple read whole from the state table (used for a frame whose entry could not
    /// be read whole), as frame words and, for the IPv4 Responder's rows, as entry words.
    pub(crate) last_tuple: [u16; TUPLE_SLOTS],
    pub(crate) last_entry: [u32; 3],
    /// Phase 1's combinations computed ahead of the bursts (see `DirectionStream::burst`).
    pub(crate) ahead: Ahead,
    /// The slot words, UDP sums and IPv4 header checksums computed ahead for a burst whose
    /// frames all have one template (see [`Prepared`]).
    pub(crate) words: Vec<u16>,
    pub(crate) udp: Vec<u32>,
    pub(crate) ip: Vec<u32>,
    pub(crate) udp_final: Vec<u16>,
    /// The subscribers and port places of a burst's frames to or from many MAP CEs.
    pub(crate) picks: Vec<u16>,
}

/// The enumerated fields of phase 1's foreground frames `k0 .. k0 + AHEAD`, row by field
/// (`enumerate::SPORT` ...), computed for the phase 1 whose id is `id` (0: none).
#[derive(Debug, Clone, Default)]
pub(crate) struct Ahead {
    pub(crate) id: u64,
    pub(crate) k0: u64,
    pub(crate) vals: Vec<u16>,
}

/// Frames whose phase 1 combinations are computed at once.
pub(crate) const AHEAD: usize = 1024;

impl BurstScratch {
    /// Room for bursts of up to `frames` frames (a longer burst grows it once).
    pub fn new(frames: usize) -> BurstScratch {
        BurstScratch {
            vals: vec![0; frames * MAX_FIELDS],
            fg: vec![false; frames],
            tuples: Vec::new(),
            entries: Vec::new(),
            tuple_rows: TupleRows::default(),
            last_tuple: [0; TUPLE_SLOTS],
            last_entry: [0; 3],
            ahead: Ahead::default(),
            words: vec![0; PREPARED_ROW * MAX_FIELDS],
            udp: vec![0; frames],
            ip: vec![0; frames],
            udp_final: vec![0; frames],
            picks: Vec::new(),
        }
    }
}

/// The frames `seq0 .. seq0 + len()` of a stream with their varying fields computed ahead (one
/// loop per field over the burst, SIMD for the pseudorandom ones): writing a frame then only
/// copies values and sums checksums.
/// `Copy`, so that a sender's per-frame closure can hold it by value (`move`): its fields then
/// stay in registers across the frame loop instead of being read again after each store into
/// a frame.
#[derive(Debug, Clone, Copy)]
pub struct Burst<'a> {
    pub(crate) fg: Option<&'a Template>,
    pub(crate) bg: Option<&'a Template>,
    /// 1: all foreground, 2: all background, 0: per frame in `fgs`.
    pub(crate) mix: u8,
    pub(crate) fgs: &'a [bool],
    pub(crate) vals: &'a [u16],
    pub(crate) n: usize,
    /// The Responder's foreground template and the tuple of each frame (stateful phase 2);
    /// then `fg` is `None`.
    pub(crate) tuple_fg: Option<&'a Template>,
    pub(crate) tuples: &'a [[u16; TUPLE_SLOTS]],
    /// What every frame's patch stores, computed ahead, when all frames have one template
    /// (all foreground or all background, not the Responder's).
    pub(crate) prepared: Option<Prepared<'a>>,
    /// The IPv4 Responder's frames from their rows, when every frame is foreground.
    pub(crate) tuples4: Option<Tuples4<'a>>,
}

impl FrameWriter for Burst<'_> {
    #[inline(always)]
    fn write(&self, i: usize, field: u64, buf: &mut [u8], cookie: &mut u64) -> usize {
        Burst::write(self, i, field, buf, cookie)
    }
}

impl<'a> Burst<'a> {
    /// Call `u` with this burst's writer, chosen once for the burst: for a burst prepared ahead
    /// (one template, `K` slots), a writer whose per-frame stores are unrolled for `K`, with no
    /// per-frame choice of template or slot count; for the IPv4 Responder's, the writer of its
    /// rows; otherwise the burst itself. The frames are
    /// those of [`Burst::write`].
    #[inline(always)]
    pub fn with_writer<U: WithWriter>(self, u: U) -> U::Out {
        if let Some(t) = self.tuples4 {
            return u.with(t);
        }
        match self.prepared {
            Some(p) => match p.with_k(u) {
                Ok(out) => out,
                Err(u) => u.with(self),
            },
            None => u.with(self),
        }
    }
}

impl Burst<'_> {
    /// The number of frames.
    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Write the burst's frame `i` (sequence number `seq0 + i`) with `field` in its 64-bit
    /// payload field into a recycled backend buffer, as
    /// [`DirectionStream::write_frame_cookie`](crate::DirectionStream::write_frame_cookie)
    /// does; returns its length (0 when `i` is outside the burst or `buf` is too short). The
    /// frame equals `write_frame_field(seq0 + i, field)`.
    #[inline(always)]
    pub fn write(&self, i: usize, field: u64, buf: &mut [u8], cookie: &mut u64) -> usize {
        if let Some(p) = &self.prepared {
            return p.write(i, field, buf, cookie);
        }
        if let Some(t) = &self.tuples4 {
            return t.write(i, field, buf, cookie);
        }
        if i >= self.n {
            return 0;
        }
        let fg = match self.mix {
            1 => true,
            2 => false,
            _ => self.fgs[i],
        };
        if fg {
            if let Some(t) = self.tuple_fg {
                let Some((out, words)) = buf.get_mut(..t.bytes.len()).zip(self.tuples.get(i)) else {
                    return 0;
                };
                if *cookie != t.id {
                    t.fresh(out);
                    *cookie = t.id;
                }
                t.patch(field, out, |k| words[k]);
                return out.len();
            }
        }
        let Some(t) = (if fg { self.fg } else { self.bg }) else { return 0 };
        let Some(out) = buf.get_mut(..t.bytes.len()) else { return 0 };
        if *cookie != t.id {
            t.fresh(out);
            *cookie = t.id;
        }
        let (vals, n) = (self.vals, self.n);
        // SAFETY: both templates have one slot per varying field, and `vals` holds `rows * n`
        // values: the slot index is below `rows`, and `i < n`.
        t.patch(field, out, |k| unsafe { *vals.get_unchecked(k * n + i) });
        out.len()
    }
}
