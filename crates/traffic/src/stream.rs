//! The frames of one direction: [`DirectionStream`] builds the templates (foreground and
//! background, module `template`) from the checked plan of what varies (module `plan`),
//! chooses per sequence number which one a frame is, and writes a frame or a burst of frames
//! ([`Burst`]).
//!
//! Every value is a pure function of the frame's sequence number and the seed, so `write_frame`
//! takes `&self`, a frame written twice is identical, and a seed reproduces a run exactly.

use crate::burst::{Burst, BurstScratch, AHEAD};
use crate::enumerate::{self, Digit, Enumeration};
use crate::plan::{Plan, StreamError, MAX_FIELDS};
use crate::responder::Responder;
use crate::rng::{FastMod, Stream};
use crate::setup::{AddrPair, Direction, Setup, RFC2544_DPORT, RFC2544_SPORT};
use crate::state::StateTable;
use crate::subscribers::{Subscribers, MAX_WORDS};
use crate::template::prepared::{Prepared, PREPARED_ROW};
use crate::template::tuple::Tuples4;
use crate::template::{Template, TUPLE_SLOTS};
use crate::vary::{FieldGen, Variation};
use std::sync::Arc;
use xlat_wire::MacAddr;

/// The frames one sender sends for one direction.
#[derive(Debug, Clone)]
pub struct DirectionStream {
    pub direction: Direction,
    foreground: Option<Template>,
    background: Option<Template>,
    n: FastMod,
    m: u64,
    /// 0: mixed (compute `seq % n`), 1: all foreground, 2: all background.
    mix: u8,
    seed: u64,
    /// The varying fields, in the order of the templates' slot rows.
    gens: Vec<FieldGen>,
    /// Phase 1 of a stateful test: the enumerated fields of the foreground frames.
    phase1: Option<PhaseOne>,
    /// Phase 2's Responder: foreground frames built from the learnt tuples.
    responder: Option<Responder>,
    /// Foreground frames from or to many MAP CEs: their words in the rows after `gens`.
    subs: Option<Box<Subscribers>>,
}

/// The Initiator's frames in phase 1 (RFC 9693's preliminary phase): foreground frame `k`
/// carries combination `k` of the enumeration in the rows of the fields it enumerates.
#[derive(Debug, Clone)]
struct PhaseOne {
    enumeration: Enumeration,
    /// The slot row of each enumerated field (`enumerate::SPORT` ...).
    rows: [Option<usize>; 4],
    /// Rows that vary only because phase 1 enumerates them: background frames keep the fixed
    /// value there (RFC 2544's port), as the configuration says.
    fixed: [Option<u16>; MAX_FIELDS],
    fg_n: u32,
    fg_m: u32,
    /// Keys the combinations a [`BurstScratch`] computed ahead for this phase 1 (an id no
    /// other stream has; clones share it, and their enumerations are equal).
    id: u64,
}

impl DirectionStream {
    /// Build the templates of direction `d`. `ipv6_frame_size` is siitperf's size parameter:
    /// IPv6 frames have it, IPv4 frames are 20 bytes shorter (both counting the FCS). The
    /// pseudorandom fields use `setup.seed`, or the process's random seed when it is `None`
    /// (see [`DirectionStream::seed`]).
    pub fn new(setup: &Setup, d: Direction, ipv6_frame_size: usize, src_mac: MacAddr, dst_mac: MacAddr) -> Result<Self, StreamError> {
        let seed = setup.effective_seed();
        let plan = Plan::new(setup, d, seed)?;
        // The sending side's tunnel carries its foreground (IPv4) frames; background frames
        // are native IPv6.
        let tunnel = setup.side(d.sender()).tunnel;
        let subs = Subscribers::new(setup, d, seed)?;
        let make = |pair: AddrPair, tunnel, subs| Template::build(&plan, pair, ipv6_frame_size, (src_mac, dst_mac), tunnel, subs);
        let foreground = if setup.has_foreground() {
            Some(make(setup.foreground_addresses(d)?, tunnel, subs.as_ref())?)
        } else {
            None
        };
        let background = if setup.has_background() {
            Some(make(setup.background_addresses(d)?, None, None)?)
        } else {
            None
        };
        let n = u64::from(setup.fg_n.max(1));
        let m = u64::from(setup.fg_m);
        let mix = if m >= n {
            1
        } else if m == 0 {
            2
        } else {
            0
        };
        Ok(DirectionStream {
            direction: d,
            foreground,
            background,
            n: FastMod::new(n),
            m,
            mix,
            seed,
            gens: plan.gens(),
            phase1: None,
            responder: None,
            subs: subs.map(Box::new),
        })
    }

    /// The Initiator's frames of phase 1 of a stateful test (direction `d` is the Initiator's):
    /// the foreground frames enumerate the fields that `setup.stateful` enumerates over the
    /// ranges of the direction's port keys and the sides' address variation; everything else
    /// is as [`DirectionStream::new`] makes it.
    pub fn preliminary(
        setup: &Setup,
        d: Direction,
        ipv6_frame_size: usize,
        src_mac: MacAddr,
        dst_mac: MacAddr,
    ) -> Result<Self, StreamError> {
        let st = setup.stateful;
        let mut s = setup.clone();
        let seed = setup.effective_seed();
        s.seed = Some(seed);
        let ports = !st.enumerate_ports.is_fixed();
        let ips = !st.enumerate_ips.is_fixed();
        let mut forced = [None, None];
        if ports {
            // A port phase 1 enumerates needs a slot even when the configuration fixes it.
            let p = match d {
                Direction::Forward => &mut s.forward_ports,
                Direction::Reverse => &mut s.reverse_ports,
            };
            for (f, fixed, slot) in [(&mut p.sport, RFC2544_SPORT, 0), (&mut p.dport, RFC2544_DPORT, 1)] {
                if f.variation.is_fixed() {
                    f.variation = Variation::Pseudorandom;
                    forced[slot] = Some(fixed);
                }
            }
        }
        let (snd, rcv) = (setup.side(d.sender()).ip_var, setup.side(d.receiver()).ip_var);
        if ips && (snd.variation.is_fixed() || rcv.variation.is_fixed()) {
            return Err(StreamError::Invalid(
                "Enumerate-ips needs IP-L-var and IP-R-var (the address parts it enumerates) to be on".into(),
            ));
        }
        let mut stream = DirectionStream::new(&s, d, ipv6_frame_size, src_mac, dst_mac)?;
        let p = s.ports(d);
        let order = if ports { st.enumerate_ports } else { st.enumerate_ips };
        let digit = |on: bool, min: u16, max: u16| on.then_some(Digit { min, max });
        let digits = [
            digit(ports, p.sport.min, p.sport.max),
            digit(ports, p.dport.min, p.dport.max),
            digit(ips, snd.min, snd.max),
            digit(ips, rcv.min, rcv.max),
        ];
        let Some(enumeration) = Enumeration::new(order, digits, Stream::derive(seed, 2 + d as u64, 6).key) else {
            return Ok(stream);
        };
        // Slot rows in `Plan::gens` order: sport, dport, source part, destination part.
        let varies = [
            !p.sport.variation.is_fixed(),
            !p.dport.variation.is_fixed(),
            !snd.variation.is_fixed(),
            !rcv.variation.is_fixed(),
        ];
        let mut rows = [None; 4];
        let mut fixed = [None; MAX_FIELDS];
        let mut row = 0;
        for f in 0..4 {
            if varies[f] {
                if enumeration.enumerates(f) {
                    rows[f] = Some(row);
                }
                if f < 2 {
                    fixed[row] = forced[f];
                }
                row += 1;
            }
        }
        stream.phase1 = Some(PhaseOne {
            enumeration,
            rows,
            fixed,
            fg_n: setup.fg_n,
            fg_m: setup.fg_m,
            id: crate::template::next_id(),
        });
        Ok(stream)
    }

    /// The Responder's frames of phase 2 of a stateful test (direction `d` is the
    /// Responder's): foreground frames are of the Responder side's IP version (that of
    /// `table`), on the tuples learnt into `table`, chosen as
    /// `setup.stateful.responder_tuples` says; background frames are native IPv6 as in a
    /// stateless test.
    pub fn responder(
        setup: &Setup,
        d: Direction,
        ipv6_frame_size: usize,
        src_mac: MacAddr,
        dst_mac: MacAddr,
        table: Arc<StateTable>,
    ) -> Result<Self, StreamError> {
        let seed = setup.effective_seed();
        let plan = Plan::new(setup, d, seed)?;
        let background = if setup.has_background() {
            Some(Template::build(
                &plan,
                setup.background_addresses(d)?,
                ipv6_frame_size,
                (src_mac, dst_mac),
                None,
                None,
            )?)
        } else {
            None
        };
        let n = u64::from(setup.fg_n.max(1));
        let m = u64::from(setup.fg_m);
        Ok(DirectionStream {
            direction: d,
            foreground: None,
            background,
            n: FastMod::new(n),
            m,
            mix: if m >= n {
                1
            } else if m == 0 {
                2
            } else {
                0
            },
            seed,
            gens: plan.gens(),
            phase1: None,
            subs: None,
            responder: Some({
                let template = Template::build_tuple(table.is_v6(), ipv6_frame_size, src_mac, dst_mac)?;
                Responder {
                    rows: Tuples4::fits(&template),
                    template,
                    table,
                    select: setup.stateful.responder_tuples,
                    key: Stream::derive(seed, 2 + d as u64, 7).key,
                    fg_n: setup.fg_n,
                    fg_m: setup.fg_m,
                }
            }),
        })
    }

    /// The number of foreground frames among the first `frames` frames.
    pub fn foreground_count(&self, frames: u64) -> u64 {
        match self.mix {
            1 => frames,
            2 => 0,
            _ => enumerate::foreground_count(frames, self.n.divisor() as u32, self.m as u32),
        }
    }

    /// Phase 1: the number of distinct combinations its foreground frames go through (`C`),
    /// and whether each is used once before any repeats (the unique pseudorandom order, or
    /// a linear order); `None` when the stream enumerates nothing.
    pub fn enumeration_count(&self) -> Option<u128> {
        self.phase1.as_ref().map(|p| p.enumeration.count())
    }

    /// The value of slot row `row` in frame `seq`: phase 1's enumerated combination for
    /// foreground frames, else the field's own variation.
    #[inline]
    fn row_value(&self, row: usize, seq: u64) -> u16 {
        if let Some(p) = &self.phase1 {
            if self.is_foreground(seq) {
                if let Some(f) = p.rows.iter().position(|r| *r == Some(row)) {
                    let k = enumerate::foreground_index(seq, p.fg_n, p.fg_m);
                    return p.enumeration.values(k)[f];
                }
            } else if let Some(v) = p.fixed[row] {
                return v;
            }
        }
        self.gens[row].value(seq)
    }

    /// Phase 1: overwrite the rows of a burst's precomputed values (`n` frames from `seq0`)
    /// with the enumeration (foreground) or the fixed values (background).
    fn enumerate_burst(&self, p: &PhaseOne, seq0: u64, n: usize, scratch: &mut BurstScratch) {
        if self.mix == 1 {
            // All foreground: combinations seq0 .. seq0 + n.
            if n > AHEAD {
                // Straight into the burst's rows.
                let mut out: [Option<&mut [u16]>; 4] = Default::default();
                let rows = p.rows.iter().flatten().max().map_or(0, |r| r + 1);
                let Some(vals) = scratch.vals.get_mut(..rows * n) else { return };
                for (r, row) in vals.chunks_exact_mut(n).enumerate() {
                    if let Some(f) = p.rows.iter().position(|x| *x == Some(r)) {
                        out[f] = Some(row);
                    }
                }
                p.enumeration.fill(seq0, &mut out);
                return;
            }
            // Copied from those computed AHEAD at once: a permutation's rounds are a chain of
            // dependent multiplications, and a burst's 32 lanes alone leave the core waiting on
            // it (bench/modes.sh enum).
            let a = &mut scratch.ahead;
            let end = seq0.saturating_add(n as u64);
            if !(a.id == p.id && seq0 >= a.k0 && end <= a.k0.saturating_add(AHEAD as u64)) {
                a.vals.resize(4 * AHEAD, 0);
                let mut rows = a.vals.chunks_exact_mut(AHEAD);
                let mut out: [Option<&mut [u16]>; 4] = Default::default();
                for (o, r) in out.iter_mut().zip(p.rows) {
                    let row = rows.next();
                    if r.is_some() {
                        *o = row;
                    }
                }
                p.enumeration.fill(seq0, &mut out);
                a.id = p.id;
                a.k0 = seq0;
            }
            let off = (seq0 - a.k0) as usize;
            for (f, r) in p.rows.iter().enumerate() {
                let Some(r) = *r else { continue };
                let src = a.vals.get(f * AHEAD + off..f * AHEAD + off + n);
                if let (Some(dst), Some(src)) = (scratch.vals.get_mut(r * n..(r + 1) * n), src) {
                    dst.copy_from_slice(src);
                }
            }
            return;
        }
        for i in 0..n {
            if self.burst_fg(scratch, i) {
                let k = enumerate::foreground_index(seq0 + i as u64, p.fg_n, p.fg_m);
                let v = p.enumeration.values(k);
                for (f, row) in p.rows.iter().enumerate() {
                    if let Some(r) = row {
                        scratch.vals[r * n + i] = v[f];
                    }
                }
            } else {
                for (r, v) in p.fixed.iter().enumerate() {
                    if let Some(v) = v {
                        scratch.vals[r * n + i] = *v;
                    }
                }
            }
        }
    }

    /// True when frame `i` of the burst whose flags `scratch` holds is a foreground frame.
    #[inline(always)]
    fn burst_fg(&self, scratch: &BurstScratch, i: usize) -> bool {
        match self.mix {
            1 => true,
            2 => false,
            _ => scratch.fg[i],
        }
    }

    /// Phase 2's Responder: the tuple words of each foreground frame of a burst.
    fn responder_burst(&self, r: &Responder, seq0: u64, n: usize, scratch: &mut BurstScratch) {
        if scratch.tuples.len() < n {
            scratch.tuples.resize(n, [0; TUPLE_SLOTS]);
        }
        for i in 0..n {
            if self.burst_fg(scratch, i) {
                if let Some(w) = r.words(seq0 + i as u64) {
                    scratch.last_tuple = w;
                }
                scratch.tuples[i] = scratch.last_tuple;
            }
        }
    }

    /// Phase 2's IPv4 Responder with every frame foreground: each frame's rows (its tuple in the
    /// frame's byte order, its checksums; `fields` as in `Template::tuple_rows`): the burst's
    /// entries chosen in one loop, then read under one check of the table's sequence.
    fn responder_rows(&self, r: &Responder, seq0: u64, n: usize, fields: Option<u64>, scratch: &mut BurstScratch) {
        if scratch.entries.len() < n {
            scratch.entries.resize(n, 0);
        }
        let (entries, rows) = (&mut scratch.entries[..n], &mut scratch.tuple_rows);
        r.entries(seq0, entries);
        rows.reserve(n);
        r.table
            .read_rows_v4(entries, [&mut rows.ini, &mut rows.res, &mut rows.ports], &mut scratch.last_entry);
        r.template.tuple_rows(rows, n, fields);
    }

    /// The seed the pseudorandom fields of this stream derive from: `Setup::seed`, or the
    /// process's random seed. Setting `Setup::seed` to it reproduces every frame.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// True when frame `seq` is a foreground frame (`seq % n < m`).
    #[inline]
    pub fn is_foreground(&self, seq: u64) -> bool {
        match self.mix {
            1 => true,
            2 => false,
            _ => self.n.rem(seq) < self.m,
        }
    }

    /// The longest frame this stream writes.
    pub fn max_len(&self) -> usize {
        self.templates().map(|t| t.bytes.len()).max().unwrap_or(0)
    }

    /// Every template this stream writes frames of.
    fn templates(&self) -> impl Iterator<Item = &Template> {
        [
            self.foreground.as_ref(),
            self.background.as_ref(),
            self.responder.as_ref().map(|r| &r.template),
        ]
        .into_iter()
        .flatten()
    }

    /// The bytes of this stream's frames that change from frame to frame (from the first to the
    /// last, over all its templates), for xlat-io's `TxQueue::place_frames`: the varying fields,
    /// the checksums they change and the payload field.
    pub fn hot_bytes(&self) -> std::ops::Range<usize> {
        self.templates()
            .map(|t| t.hot())
            .reduce(|a, b| a.start.min(b.start)..a.end.max(b.end))
            .unwrap_or(0..0)
    }

    /// Write frame `seq` into `buf` and return its length (0 when `buf` is too short).
    #[inline]
    pub fn write_frame(&self, seq: u64, buf: &mut [u8]) -> usize {
        self.write_frame_field(seq, seq, buf)
    }

    /// [`DirectionStream::write_frame_field`] into a recycled backend buffer whose `cookie`
    /// tells what it holds: when it holds the same template (from an earlier frame of this
    /// stream), only the changing fields are written; else the whole frame is, and the cookie
    /// is set. The backend keeps the cookie with the buffer (see `xlat_io::TxQueue::tx_burst_cookie`).
    #[inline]
    pub fn write_frame_cookie(&self, seq: u64, field: u64, buf: &mut [u8], cookie: &mut u64) -> usize {
        let Some((t, out)) = self.target(seq, buf) else { return 0 };
        if *cookie != t.id {
            t.fresh(out);
            *cookie = t.id;
        }
        self.patch_one(t, seq, field, out)
    }

    /// Patch frame `seq` into `out`, which holds template `t`'s bytes.
    #[inline]
    fn patch_one(&self, t: &Template, seq: u64, field: u64, out: &mut [u8]) -> usize {
        match &self.responder {
            Some(r) if self.is_foreground(seq) => {
                let w = r.words(seq).unwrap_or([0; TUPLE_SLOTS]);
                t.patch(field, out, |k| w[k]);
            }
            _ if self.phase1.is_some() => t.patch(field, out, |k| self.row_value(k, seq)),
            _ => match &self.subs {
                Some(s) if self.is_foreground(seq) => {
                    let mut w = [0; MAX_WORDS];
                    s.values(seq, &mut w);
                    let g = self.gens.len();
                    t.patch(field, out, |k| if k < g { self.gens[k].value(seq) } else { w[k - g] });
                }
                _ => t.patch(field, out, |k| self.gens[k].value(seq)),
            },
        }
        out.len()
    }

    /// Write frame `seq` (its variation and foreground/background choice follow `seq`) with
    /// `field` in its 64-bit payload field, e.g. the sequence number with a trial tag.
    #[inline]
    pub fn write_frame_field(&self, seq: u64, field: u64, buf: &mut [u8]) -> usize {
        let Some((t, out)) = self.target(seq, buf) else { return 0 };
        t.fresh(out);
        self.patch_one(t, seq, field, out)
    }

    /// The frames `seq0 .. seq0 + n` with their varying fields computed ahead, for writing into
    /// a burst of backend buffers with [`Burst::write`]. `scratch` holds the values (it grows
    /// once if `n` is above its room). Frame `i` is written fastest with payload field
    /// `seq0 + i` (see [`DirectionStream::burst_tagged`]); any other field costs a little more.
    pub fn burst<'a>(&'a self, seq0: u64, n: usize, scratch: &'a mut BurstScratch) -> Burst<'a> {
        self.burst_tagged(seq0, n, 0, scratch)
    }

    /// [`DirectionStream::burst`] for frames whose payload fields will be `tag | (seq0 + i)`
    /// (a trial's tag in the high bits): their UDP checksums are computed ahead with the
    /// other fields, in SIMD loops, so that writing a frame only stores. [`Burst::write`] still
    /// writes any field correctly.
    pub fn burst_tagged<'a>(&'a self, seq0: u64, n: usize, tag: u64, scratch: &'a mut BurstScratch) -> Burst<'a> {
        // The IPv4 Responder with every frame foreground: rows per frame (below). (An IPv6
        // Responder's 18 words, or a mix with background frames, are patched per frame.)
        let tuple_rows = match &self.responder {
            Some(r) if self.mix == 1 && r.rows => Some(r),
            _ => None,
        };
        let rows = self.gens.len() + self.subs.as_ref().map_or(0, |s| s.words.len());
        if scratch.vals.len() < rows * n {
            scratch.vals.resize(rows * n, 0);
        }
        if scratch.fg.len() < n {
            scratch.fg.resize(n, false);
        }
        // Phase 1 with every frame foreground: the enumerated rows are written below, not here.
        let enumerated = |r: usize| self.mix == 1 && self.phase1.as_ref().is_some_and(|p| p.rows.contains(&Some(r)));
        for (r, (g, out)) in self.gens.iter().zip(scratch.vals.chunks_exact_mut(n.max(1))).enumerate() {
            if !enumerated(r) && self.responder.is_none() {
                g.fill(seq0, out);
            }
        }
        if self.mix == 0 {
            let m = self.m;
            let period = self.n.divisor();
            let mut r = self.n.rem(seq0);
            for f in &mut scratch.fg[..n] {
                *f = r < m;
                r += 1;
                if r == period {
                    r = 0;
                }
            }
        }
        if let Some(p) = &self.phase1 {
            self.enumerate_burst(p, seq0, n, scratch);
        }
        if let Some(s) = &self.subs {
            // (A background frame's template has no slots there.)
            let g = self.gens.len() * n;
            s.fill(seq0, n, &mut scratch.picks, &mut scratch.vals[g..rows * n]);
        }
        if let (Some(r), None) = (&self.responder, tuple_rows) {
            self.responder_burst(r, seq0, n, scratch);
        }
        // A burst of one template: its stores computed ahead, in SIMD loops. (A Responder's
        // burst has its rows, or its words per frame.)
        let one = match (&self.responder, self.mix) {
            (Some(_), _) => None,
            (None, 1) => self.foreground.as_ref(),
            (None, 2) => self.background.as_ref(),
            _ => None,
        };
        // The payload field of frame i is `tag | (seq0 + i)`: `fields + i` while no sum
        // reaches the tag's bits, and then the UDP checksums are computed here too.
        let fields = match tag {
            0 => Some(seq0),
            t => (seq0.checked_add(n as u64).is_some_and(|end| end <= 1 << t.trailing_zeros())).then_some(t | seq0),
        };
        if let Some(r) = tuple_rows {
            self.responder_rows(r, seq0, n, fields, scratch);
        }
        let mut prepared = None;
        if let Some(t) = one.filter(|t| t.slots() == rows && n <= PREPARED_ROW) {
            if scratch.words.len() < rows * PREPARED_ROW {
                scratch.words.resize(rows * PREPARED_ROW, 0);
            }
            if scratch.udp.len() < n {
                scratch.udp.resize(n, 0);
                scratch.ip.resize(n, 0);
                scratch.udp_final.resize(n, 0);
            }
            t.prepare(
                &scratch.vals[..rows * n],
                n,
                fields,
                &mut scratch.words,
                &mut scratch.udp,
                &mut scratch.ip,
                &mut scratch.udp_final,
            );
            prepared = Prepared::new(
                t,
                &scratch.words[..rows * PREPARED_ROW],
                &scratch.udp[..n],
                &scratch.ip[..n],
                &scratch.udp_final[..n],
                fields,
                n,
            );
        }
        let tuples4 = tuple_rows.and_then(|r| Tuples4::new(&r.template, &scratch.tuple_rows, n, fields));
        Burst {
            prepared,
            tuples4,
            fg: self.foreground.as_ref(),
            bg: self.background.as_ref(),
            mix: self.mix,
            fgs: &scratch.fg[..n],
            vals: &scratch.vals[..rows * n],
            n,
            tuple_fg: self.responder.as_ref().map(|r| &r.template),
            tuples: if self.responder.is_some() && tuple_rows.is_none() {
                &scratch.tuples[..n]
            } else {
                &[]
            },
        }
    }

    /// The template of frame `seq` and the part of `buf` its frame fills; `None` when this
    /// stream has no such frame or `buf` is too short.
    #[inline(always)]
    fn target<'b>(&self, seq: u64, buf: &'b mut [u8]) -> Option<(&Template, &'b mut [u8])> {
        let t = if self.is_foreground(seq) {
            self.responder.as_ref().map(|r| &r.template).or(self.foreground.as_ref())
        } else {
            self.background.as_ref()
        }?;
        Some((t, buf.get_mut(..t.bytes.len())?))
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
pub(crate) mod tests;
