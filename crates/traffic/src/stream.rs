//! The frames of one direction: templates built once, and a per-frame patcher that writes only
//! what changes and updates the checksums incrementally (RFC 1624).
//!
//! What varies per frame (docs/frame-format.md; G. Lencse, "Adding RFC 4814 random port feature
//! to siitperf", and "Making stateless and stateful network performance measurements unbiased"):
//! - the 64-bit payload field (sequence number, latency tag);
//! - the UDP source and destination ports of the direction (`Fwd-var-sport` ...), fixed ones
//!   being RFC 2544's 0xC020 and 7;
//! - the 16-bit varying part of the source address (the sender side's `IP-{L,R}-var`) and of the
//!   destination address (the receiver side's), real and virtual addresses alike;
//! - the destination network byte (IPv4 octet 2, IPv6 octet 7) when the receiver side has more
//!   than one destination network (`Num-{L,R}-Nets`).
//!
//! Background frames vary exactly like foreground frames (ports, both addresses at the sides'
//! IPv6 offsets, destination networks). siitperf does the same: its senders set working pointers
//! into whichever frame (foreground or background) goes next and modify it at one point
//! (the RFC 4814 paper, section III.B; the "unbiased" paper, section 4.3, skips only the IPv4
//! header checksum for background frames). Otherwise the native IPv6 share of an RFC 8219 test would be a single
//! flow that one DUT core handles.
//!
//! Every value is a pure function of the frame's sequence number and the seed, so `write_frame`
//! takes `&self`, a frame written twice is identical, and a seed reproduces a run exactly.
//!
//! The template holds zero in every varying field (as siitperf masks them), so a frame's
//! checksums are the template's one's complement sums plus the new field values: one addition per
//! field and a single fold at the end, with no per-frame subtraction of old values.

use crate::rng::Stream;
use crate::setup::{AddrPair, Direction, IpVarSpec, MissingAddress, PortField, Setup, SideId, Variation};
use crate::vary::FieldGen;
use std::net::{Ipv4Addr, Ipv6Addr};
use xlat_wire::frame::{IpPair, TestFrame, TestFrameLayout};
use xlat_wire::MacAddr;

/// Why a direction's frames cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    #[error("{0}")]
    Missing(#[from] MissingAddress),
    #[error("{0}")]
    Frame(String),
    /// A variation setting that cannot be applied (range, offset, network count).
    #[error("{0}")]
    Invalid(String),
}

/// The pseudorandom stream numbers of the fields of one direction (with the direction, they key
/// the field's stream under the seed).
pub mod field_id {
    pub const SPORT: u64 = 0;
    pub const DPORT: u64 = 1;
    pub const SRC_ADDR: u64 = 2;
    pub const DST_ADDR: u64 = 3;
    pub const DST_NET: u64 = 4;
}

/// The most fields a direction varies: the source and destination ports, the varying parts of
/// the source and destination addresses, and the destination network byte.
pub const MAX_FIELDS: usize = 5;

/// Where a varying 16-bit word is: `base | value << shift` is written at `off`, `value` being the
/// value of the direction's varying field with the slot's index (see `Plan::gens`).
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    off: usize,
    /// The template's word there (zero in the varying bits).
    base: u16,
    /// 8 when a network byte is the high byte of its word, else 0.
    shift: u32,
    /// All ones when the word is in the IPv4 header (its checksum covers it), else zero.
    ip_mask: u32,
}

/// A pre-built frame, where its fields are, and what varies in it.
#[derive(Debug, Clone)]
struct Template {
    /// Unique in the process (never 0): a buffer whose cookie holds it holds this template's
    /// bytes, possibly patched for another frame.
    id: u64,
    bytes: Vec<u8>,
    layout: TestFrameLayout,
    /// The complement of the template's UDP checksum: its one's complement sum.
    udp_sum: u64,
    /// The complement of the IPv4 header checksum; 0 for IPv6.
    ip_sum: u32,
    /// Offset of the IPv4 header checksum when some patch is in the IPv4 header, else 0.
    ip_csum_off: usize,
    slots: [Slot; MAX_FIELDS],
    nslots: usize,
}

/// Fold a 64-bit one's complement accumulator to 16 bits. Sums of 16- and 32-bit pieces fold
/// to the same value, because 2^16 and 2^32 are 1 modulo 0xffff.
#[inline(always)]
fn fold64(a: u64) -> u16 {
    let a = (a & 0xffff_ffff) + (a >> 32);
    let a = (a & 0xffff) + (a >> 16);
    let a = (a & 0xffff) + (a >> 16);
    ((a & 0xffff) + (a >> 16)) as u16
}

/// The ranges and settings of one direction's varying fields, checked.
#[derive(Debug, Clone, Copy)]
struct Plan {
    sport: Option<FieldGen>,
    dport: Option<FieldGen>,
    src: Option<(FieldGen, IpVarSpec)>,
    dst: Option<(FieldGen, IpVarSpec)>,
    net: Option<FieldGen>,
}

fn side_key(id: SideId) -> &'static str {
    match id {
        SideId::Left => "L",
        SideId::Right => "R",
    }
}

impl Plan {
    fn new(setup: &Setup, d: Direction, seed: u64) -> Result<Plan, StreamError> {
        let fam = d as u64;
        let dir = if d == Direction::Forward { "Fwd" } else { "Rev" };
        let port = |f: &PortField, name: &str, id: u64| -> Result<Option<FieldGen>, StreamError> {
            if f.variation.is_fixed() {
                return Ok(None);
            }
            if f.min > f.max {
                return Err(StreamError::Invalid(format!(
                    "{dir}-{name}-min {} is above {dir}-{name}-max {}",
                    f.min, f.max
                )));
            }
            Ok(Some(FieldGen::new(f.variation, f.min, f.max, Stream::derive(seed, fam, id))))
        };
        let ports = setup.ports(d);
        let sport = port(&ports.sport, "sport", field_id::SPORT)?;
        let dport = port(&ports.dport, "dport", field_id::DPORT)?;
        let addr = |id: SideId, field: u64| -> Result<Option<(FieldGen, IpVarSpec)>, StreamError> {
            let v = setup.side(id).ip_var;
            if v.variation.is_fixed() {
                return Ok(None);
            }
            let k = side_key(id);
            if v.min > v.max {
                return Err(StreamError::Invalid(format!("IP-{k}-min {} is above IP-{k}-max {}", v.min, v.max)));
            }
            if v.ipv4_offset != 2 {
                return Err(StreamError::Invalid(format!(
                    "IPv4-{k}-offset {} is not supported: only 2 (the last 16 bits)",
                    v.ipv4_offset
                )));
            }
            if !(6..=14).contains(&v.ipv6_offset) || v.ipv6_offset & 1 != 0 {
                return Err(StreamError::Invalid(format!(
                    "IPv6-{k}-offset {} must be even and within 6-14",
                    v.ipv6_offset
                )));
            }
            Ok(Some((
                FieldGen::new(v.variation, v.min, v.max, Stream::derive(seed, fam, field)),
                v,
            )))
        };
        let src = addr(d.sender(), field_id::SRC_ADDR)?;
        let dst = addr(d.receiver(), field_id::DST_ADDR)?;
        let rcv = setup.side(d.receiver());
        let k = side_key(d.receiver());
        if rcv.num_nets == 0 || rcv.num_nets > 256 {
            return Err(StreamError::Invalid(format!("Num-{k}-Nets {} is outside 1-256", rcv.num_nets)));
        }
        let net = if rcv.num_nets > 1 {
            if dst.is_some() {
                return Err(StreamError::Invalid(format!(
                    "IP-{k}-var and Num-{k}-Nets above 1 cannot be combined"
                )));
            }
            Some(FieldGen::new(
                Variation::Pseudorandom,
                0,
                rcv.num_nets - 1,
                Stream::derive(seed, fam, field_id::DST_NET),
            ))
        } else {
            None
        };
        Ok(Plan {
            sport,
            dport,
            src,
            dst,
            net,
        })
    }
}

impl Plan {
    /// The varying fields in slot-row order (see `Template::build`).
    fn gens(&self) -> Vec<FieldGen> {
        [self.sport, self.dport, self.src.map(|(g, _)| g), self.dst.map(|(g, _)| g), self.net]
            .into_iter()
            .flatten()
            .collect()
    }
}

/// Octet of the destination network byte: IPv4 bits 16-23, IPv6 bits 56-63.
pub const NET_OCTET_V4: u8 = 2;
pub const NET_OCTET_V6: u8 = 7;

impl Template {
    fn build(plan: &Plan, pair: AddrPair, ipv6_frame_size: usize, src_mac: MacAddr, dst_mac: MacAddr) -> Result<Template, StreamError> {
        let v6 = matches!(pair, AddrPair::V6(..));
        let (bytes_per_addr, net_octet) = if v6 { (16usize, NET_OCTET_V6) } else { (4, NET_OCTET_V4) };
        let var_off = |v: &IpVarSpec| usize::from(if v6 { v.ipv6_offset } else { v.ipv4_offset });
        // Zero every varying part of the addresses.
        let zero = |a: &mut [u8], off: usize, n: usize| a[off..off + n].fill(0);
        let (mut src, mut dst) = match pair {
            AddrPair::V4(s, d) => (s.octets().to_vec(), d.octets().to_vec()),
            AddrPair::V6(s, d) => (s.octets().to_vec(), d.octets().to_vec()),
        };
        debug_assert_eq!(src.len(), bytes_per_addr);
        if let Some((_, v)) = &plan.src {
            zero(&mut src, var_off(v), 2);
        }
        if let Some((_, v)) = &plan.dst {
            zero(&mut dst, var_off(v), 2);
        }
        if plan.net.is_some() {
            zero(&mut dst, usize::from(net_octet), 1);
        }
        let ip = if v6 {
            let a = |b: &[u8]| Ipv6Addr::from(<[u8; 16]>::try_from(b).unwrap_or([0; 16]));
            IpPair::V6 {
                src: a(&src),
                dst: a(&dst),
            }
        } else {
            let a = |b: &[u8]| Ipv4Addr::from(<[u8; 4]>::try_from(b).unwrap_or([0; 4]));
            IpPair::V4 {
                src: a(&src),
                dst: a(&dst),
            }
        };
        let sport = if plan.sport.is_some() { 0 } else { crate::RFC2544_SPORT };
        let dport = if plan.dport.is_some() { 0 } else { crate::RFC2544_DPORT };
        let frame_size = if v6 { ipv6_frame_size } else { ipv6_frame_size.saturating_sub(20) };
        let frame = TestFrame {
            eth_dst: dst_mac,
            eth_src: src_mac,
            ip,
            sport,
            dport,
            frame_size,
            field: 0,
        };
        let mut bytes = vec![0u8; frame.len()];
        let layout = frame.write(&mut bytes).map_err(|e| StreamError::Frame(e.to_string()))?;
        let word = |o: usize| u16::from_be_bytes([bytes[o], bytes[o + 1]]);
        let ip_mask = if v6 { 0 } else { u32::MAX };
        let mut slots = [Slot::default(); MAX_FIELDS];
        let mut nslots = 0;
        // The same order as `Plan::gens`: slot k holds varying field k.
        let mut push = |off: usize, shift: u32, ip_mask: u32| {
            slots[nslots] = Slot {
                off,
                base: word(off),
                shift,
                ip_mask,
            };
            nslots += 1;
        };
        if plan.sport.is_some() {
            push(layout.sport, 0, 0);
        }
        if plan.dport.is_some() {
            push(layout.dport, 0, 0);
        }
        if let Some((_, v)) = &plan.src {
            push(layout.ip_src + var_off(v), 0, ip_mask);
        }
        if let Some((_, v)) = &plan.dst {
            push(layout.ip_dst + var_off(v), 0, ip_mask);
        }
        if plan.net.is_some() {
            let o = usize::from(net_octet);
            push(layout.ip_dst + (o & !1), if o % 2 == 0 { 8 } else { 0 }, ip_mask);
        }
        // What `patch_fast` relies on: every word it writes lies inside the frame.
        let len = bytes.len();
        let inside = |off: usize, n: usize| off.checked_add(n).is_some_and(|end| end <= len);
        if !(slots[..nslots].iter().all(|s| inside(s.off, 2))
            && inside(layout.field, 8)
            && inside(layout.udp_checksum, 2)
            && layout.ip_checksum.is_none_or(|o| inside(o, 2)))
        {
            return Err(StreamError::Frame(format!("a varying field lies outside the {len}-byte frame")));
        }
        let in_ip = slots[..nslots].iter().any(|s| s.ip_mask != 0);
        let ip_csum_off = match layout.ip_checksum {
            Some(o) if in_ip => o,
            _ => 0,
        };
        let ip_sum = layout.ip_checksum.map_or(0, |o| u32::from(!word(o)));
        let udp_sum = u64::from(!word(layout.udp_checksum));
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Ok(Template {
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            bytes,
            layout,
            udp_sum,
            ip_sum,
            ip_csum_off,
            slots,
            nslots,
        })
    }

    /// Copy the template into `out` (exactly its length): a buffer that held something else.
    #[cold]
    #[inline(never)]
    fn fresh(&self, out: &mut [u8]) {
        out.copy_from_slice(&self.bytes);
    }

    /// Patch a frame into `out`, which holds this template's bytes (fresh, or patched for
    /// another frame: every field a patch touches is written whole, and the checksums are
    /// computed from the template's sums, not from what `out` holds). `field` goes into the
    /// 64-bit payload field, `value(k)` into slot `k` (varying field `k`). Writes nothing when
    /// `out` is not exactly the template's length.
    #[inline(always)]
    fn patch(&self, field: u64, out: &mut [u8], value: impl Fn(usize) -> u16) {
        if out.len() != self.bytes.len() {
            return;
        }
        // SAFETY (all arms): `out` is exactly the template's length and K is its slot count.
        unsafe {
            match self.nslots {
                0 => self.patch_fast::<0>(field, out, value),
                1 => self.patch_fast::<1>(field, out, value),
                2 => self.patch_fast::<2>(field, out, value),
                3 => self.patch_fast::<3>(field, out, value),
                4 => self.patch_fast::<4>(field, out, value),
                _ => self.patch_fast::<MAX_FIELDS>(field, out, value),
            }
        }
    }

    /// [`Template::patch`] for a template with `K` slots, without bounds checks.
    ///
    /// # Safety
    /// `out.len()` is `self.bytes.len()` and `K` is `self.nslots`. (`Template::build` checked that
    /// every slot, the payload field and the checksums lie inside the frame.)
    #[inline(always)]
    unsafe fn patch_fast<const K: usize>(&self, field: u64, out: &mut [u8], value: impl Fn(usize) -> u16) {
        debug_assert!(out.len() == self.bytes.len() && K == self.nslots);
        let p = out.as_mut_ptr();
        let put = |off: usize, b: &[u8]| {
            // SAFETY: off + b.len() <= out.len() (see above); unaligned writes of plain bytes.
            unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), p.add(off), b.len()) }
        };
        let mut udp = self.udp_sum + (field >> 32) + (field & 0xffff_ffff);
        let mut ip = self.ip_sum;
        // SAFETY: K <= MAX_FIELDS is the slots' count.
        let slots = unsafe { self.slots.get_unchecked(..K) };
        for (k, s) in slots.iter().enumerate() {
            let v = u32::from(value(k)) << s.shift;
            put(s.off, &((u32::from(s.base) | v) as u16).to_be_bytes());
            udp += u64::from(v);
            ip += v & s.ip_mask;
        }
        put(self.layout.field, &field.to_be_bytes());
        if self.ip_csum_off != 0 {
            put(self.ip_csum_off, &(!fold64(u64::from(ip))).to_be_bytes());
        }
        let c = xlat_wire::checksum::udp_nonzero(!fold64(udp));
        put(self.layout.udp_checksum, &c.to_be_bytes());
    }
}

/// Room for the precomputed field values of a burst, kept by the sender between bursts (see
/// [`DirectionStream::burst`]).
#[derive(Debug, Clone, Default)]
pub struct BurstScratch {
    vals: Vec<u16>,
    fg: Vec<bool>,
}

impl BurstScratch {
    /// Room for bursts of up to `frames` frames (a longer burst grows it once).
    pub fn new(frames: usize) -> BurstScratch {
        BurstScratch {
            vals: vec![0; frames * MAX_FIELDS],
            fg: vec![false; frames],
        }
    }
}

/// The frames `seq0 .. seq0 + len()` of a stream with their varying fields computed ahead (one
/// loop per field over the burst, SIMD for the pseudorandom ones): writing a frame then only
/// copies values and sums checksums.
#[derive(Debug)]
pub struct Burst<'a> {
    fg: Option<&'a Template>,
    bg: Option<&'a Template>,
    /// 1: all foreground, 2: all background, 0: per frame in `fgs`.
    mix: u8,
    fgs: &'a [bool],
    vals: &'a [u16],
    n: usize,
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
    /// [`DirectionStream::write_frame_cookie`] does; returns its length (0 when `i` is outside
    /// the burst or `buf` is too short). The frame equals `write_frame_field(seq0 + i, field)`.
    #[inline(always)]
    pub fn write(&self, i: usize, field: u64, buf: &mut [u8], cookie: &mut u64) -> usize {
        if i >= self.n {
            return 0;
        }
        let fg = match self.mix {
            1 => true,
            2 => false,
            _ => self.fgs[i],
        };
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

/// The frames one sender sends for one direction.
#[derive(Debug, Clone)]
pub struct DirectionStream {
    pub direction: Direction,
    foreground: Option<Template>,
    background: Option<Template>,
    n: crate::rng::FastMod,
    m: u64,
    /// 0: mixed (compute `seq % n`), 1: all foreground, 2: all background.
    mix: u8,
    seed: u64,
    /// The varying fields, in the order of the templates' slot rows.
    gens: Vec<FieldGen>,
}

impl DirectionStream {
    /// Build the templates of direction `d`. `ipv6_frame_size` is siitperf's size parameter:
    /// IPv6 frames have it, IPv4 frames are 20 bytes shorter (both counting the FCS). The
    /// pseudorandom fields use `setup.seed`, or the process's random seed when it is `None`
    /// (see [`DirectionStream::seed`]).
    pub fn new(setup: &Setup, d: Direction, ipv6_frame_size: usize, src_mac: MacAddr, dst_mac: MacAddr) -> Result<Self, StreamError> {
        let seed = setup.effective_seed();
        let plan = Plan::new(setup, d, seed)?;
        let make = |pair: AddrPair| Template::build(&plan, pair, ipv6_frame_size, src_mac, dst_mac);
        let foreground = if setup.has_foreground() {
            Some(make(setup.foreground_addresses(d)?)?)
        } else {
            None
        };
        let background = if setup.has_background() {
            Some(make(setup.background_addresses(d)?)?)
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
            n: crate::rng::FastMod::new(n),
            m,
            mix,
            seed,
            gens: plan.gens(),
        })
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
        [&self.foreground, &self.background]
            .iter()
            .filter_map(|t| t.as_ref().map(|t| t.bytes.len()))
            .max()
            .unwrap_or(0)
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
        t.patch(field, out, |k| self.gens[k].value(seq));
        out.len()
    }

    /// Write frame `seq` (its variation and foreground/background choice follow `seq`) with
    /// `field` in its 64-bit payload field, e.g. the sequence number with a trial tag.
    #[inline]
    pub fn write_frame_field(&self, seq: u64, field: u64, buf: &mut [u8]) -> usize {
        let Some((t, out)) = self.target(seq, buf) else { return 0 };
        t.fresh(out);
        t.patch(field, out, |k| self.gens[k].value(seq));
        out.len()
    }

    /// The frames `seq0 .. seq0 + n` with their varying fields computed ahead, for writing into
    /// a burst of backend buffers with [`Burst::write`]. `scratch` holds the values (it grows
    /// once if `n` is above its room).
    pub fn burst<'a>(&'a self, seq0: u64, n: usize, scratch: &'a mut BurstScratch) -> Burst<'a> {
        let rows = self.gens.len();
        if scratch.vals.len() < rows * n {
            scratch.vals.resize(rows * n, 0);
        }
        if scratch.fg.len() < n {
            scratch.fg.resize(n, false);
        }
        for (g, out) in self.gens.iter().zip(scratch.vals.chunks_exact_mut(n.max(1))) {
            g.fill(seq0, out);
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
        Burst {
            fg: self.foreground.as_ref(),
            bg: self.background.as_ref(),
            mix: self.mix,
            fgs: &scratch.fg[..n],
            vals: &scratch.vals[..rows * n],
            n,
        }
    }

    /// The template of frame `seq` and the part of `buf` its frame fills; `None` when this
    /// stream has no such frame or `buf` is too short.
    #[inline(always)]
    fn target<'b>(&self, seq: u64, buf: &'b mut [u8]) -> Option<(&Template, &'b mut [u8])> {
        let t = if self.is_foreground(seq) {
            self.foreground.as_ref()
        } else {
            self.background.as_ref()
        }?;
        Some((t, buf.get_mut(..t.bytes.len())?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setup::*;
    use xlat_wire::checksum;
    use xlat_wire::{classify, Rx};

    #[test]
    fn patching_a_recycled_buffer_equals_writing_afresh() {
        for v in [IpVersion::V4, IpVersion::V6] {
            let mut s = router_setup(v);
            s.fg_n = 10;
            s.fg_m = 9;
            s.forward_ports.sport.variation = Variation::Pseudorandom;
            s.forward_ports.dport.variation = Variation::Increasing;
            s.left.ip_var.variation = Variation::Pseudorandom;
            s.right.ip_var.variation = Variation::Decreasing;
            s.right.ip_var.min = 2;
            s.right.ip_var.max = 1001;
            let mac = xlat_wire::MacAddr([2, 0, 0, 0, 0, 1]);
            let st = DirectionStream::new(&s, Direction::Forward, 84, mac, mac).unwrap();
            let other = DirectionStream::new(&s, Direction::Reverse, 84, mac, mac).unwrap();
            // A pool of recycled buffers, as a backend's mempool hands them out; one of them is
            // used meanwhile by another stream (another cookie, other bytes).
            let mut pool = vec![(vec![0xa5u8; 256], 0u64); 5];
            let mut fresh = [0u8; 256];
            for seq in 0..5_000u64 {
                let (buf, cookie) = &mut pool[(seq as usize * 7) % 5];
                if seq % 13 == 0 {
                    other.write_frame_cookie(seq, seq, buf, cookie);
                }
                let n = st.write_frame_cookie(seq, seq | (3 << 56), buf, cookie);
                let m = st.write_frame_field(seq, seq | (3 << 56), &mut fresh);
                assert_eq!(n, m);
                assert_eq!(&buf[..n], &fresh[..m], "{v:?} seq {seq}");
            }
        }
    }

    #[test]
    fn a_burst_writes_the_frames_of_write_frame_field() {
        let mac = xlat_wire::MacAddr([2, 0, 0, 0, 0, 1]);
        let modes: [fn(&mut Setup); 5] = [
            |_| {},
            |s| {
                s.forward_ports.sport.variation = Variation::Pseudorandom;
                s.forward_ports.dport.variation = Variation::Pseudorandom;
            },
            |s| {
                s.forward_ports.sport.variation = Variation::Increasing;
                s.forward_ports.dport.variation = Variation::Decreasing;
                s.forward_ports.dport.min = 7;
                s.forward_ports.dport.max = 11;
                s.left.ip_var.variation = Variation::Pseudorandom;
                s.right.num_nets = 256;
            },
            |s| {
                s.forward_ports.sport.variation = Variation::Pseudorandom;
                s.forward_ports.dport.variation = Variation::Pseudorandom;
                s.left.ip_var.variation = Variation::Pseudorandom;
                s.right.ip_var.variation = Variation::Decreasing;
                s.right.ip_var.min = 2;
                s.right.ip_var.max = 1001;
                s.fg_n = 7;
                s.fg_m = 5;
            },
            |s| {
                s.fg_m = 0;
                s.left.ip_var.variation = Variation::Increasing;
            },
        ];
        for v in [IpVersion::V4, IpVersion::V6] {
            for (k, mode) in modes.iter().enumerate() {
                let mut s = router_setup(v);
                mode(&mut s);
                let st = DirectionStream::new(&s, Direction::Forward, 84, mac, mac).unwrap();
                let mut scratch = BurstScratch::new(4);
                let mut bufs = vec![(vec![0u8; 256], 0u64); 32];
                let mut fresh = [0u8; 256];
                for seq0 in [0u64, 1, 100, (1 << 32) - 17, 0x00ab_cdef_0123_4567] {
                    for n in [1usize, 5, 32] {
                        let b = st.burst(seq0, n, &mut scratch);
                        assert_eq!(b.len(), n);
                        for (i, (buf, cookie)) in bufs.iter_mut().enumerate().take(n) {
                            let field = (seq0 + i as u64) | (9 << 56);
                            let len = b.write(i, field, buf, cookie);
                            let want = st.write_frame_field(seq0 + i as u64, field, &mut fresh);
                            assert_eq!(len, want);
                            assert_eq!(&buf[..len], &fresh[..want], "{v:?} mode {k} seq {}", seq0 + i as u64);
                        }
                        assert_eq!(b.write(n, 0, &mut fresh, &mut 0), 0);
                    }
                }
            }
        }
    }

    pub(crate) fn router_setup(v: IpVersion) -> Setup {
        let mut left = Side::new(v);
        let mut right = Side::new(v);
        left.ipv4_real = Some("198.18.0.2".parse().unwrap());
        right.ipv4_real = Some("198.19.0.2".parse().unwrap());
        left.ipv6_real = Some("2001:2::2".parse().unwrap());
        right.ipv6_real = Some("2001:2:0:8000::2".parse().unwrap());
        Setup {
            left,
            right,
            forward: true,
            reverse: true,
            forward_ports: PortSpec::default(),
            reverse_ports: PortSpec::default(),
            fg_n: 2,
            fg_m: 2,
            stateful: StatefulSpec::default(),
            seed: Some(1),
            allow_foreign_addresses: false,
        }
    }

    #[test]
    fn patched_frames_have_valid_checksums_and_sequence() {
        let s = router_setup(IpVersion::V4);
        let st = DirectionStream::new(&s, Direction::Forward, 84, MacAddr([2, 0, 0, 0, 0, 1]), MacAddr([2, 0, 0, 0, 0, 2])).unwrap();
        let mut buf = [0u8; 2048];
        for seq in [0u64, 1, 0xffff, 0x1_0000_0000, u64::MAX, 0x0123_4567_89ab_cdef] {
            let len = st.write_frame(seq, &mut buf);
            assert_eq!(len, 60);
            assert_eq!(classify(&buf[..len]), Rx::Test { v6: false, field: seq });
            let f = TestFrame {
                eth_dst: MacAddr([2, 0, 0, 0, 0, 2]),
                eth_src: MacAddr([2, 0, 0, 0, 0, 1]),
                ip: IpPair::V4 {
                    src: "198.18.0.2".parse().unwrap(),
                    dst: "198.19.0.2".parse().unwrap(),
                },
                sport: RFC2544_SPORT,
                dport: RFC2544_DPORT,
                frame_size: 64,
                field: seq,
            };
            let mut full = [0u8; 60];
            f.write(&mut full).unwrap();
            assert_eq!(&buf[..60], &full[..], "seq {seq:#x}");
        }
    }

    #[test]
    fn background_mix_follows_n_m() {
        let mut s = router_setup(IpVersion::V4);
        s.fg_n = 10;
        s.fg_m = 9;
        let st = DirectionStream::new(&s, Direction::Reverse, 84, MacAddr([2, 0, 0, 0, 0, 1]), MacAddr([2, 0, 0, 0, 0, 2])).unwrap();
        let mut buf = [0u8; 256];
        let v6: Vec<bool> = (0..20)
            .map(|i| {
                let n = st.write_frame(i, &mut buf);
                match classify(&buf[..n]) {
                    Rx::Test { v6, .. } => v6,
                    other => panic!("{other:?}"),
                }
            })
            .collect();
        assert_eq!(v6.iter().filter(|b| **b).count(), 2);
        assert!(v6[9] && v6[19]);
        // 84-byte IPv6 background frames next to 64-byte IPv4 foreground frames.
        assert_eq!(st.write_frame(9, &mut buf), 80);
        assert_eq!(st.write_frame(0, &mut buf), 60);
    }

    #[test]
    fn fold64_matches_16_bit_folding() {
        let mut g = crate::rng::SplitMix64::new(5);
        for _ in 0..100_000 {
            let words: Vec<u16> = (0..12).map(|_| g.next() as u16).collect();
            let want = checksum::fold(words.iter().fold(0, |a, w| checksum::add16(a, *w)));
            // The same words summed as a mix of 16- and 32-bit pieces into 64 bits.
            let mut acc = 0u64;
            for p in words.chunks(2) {
                acc += if g.next() & 1 == 0 {
                    (u64::from(p[0]) << 16) | u64::from(p[1])
                } else {
                    u64::from(p[0]) + u64::from(p[1])
                };
            }
            let got = fold64(acc);
            assert!(
                got == want || (got == 0xffff && want == 0) || (got == 0 && want == 0xffff),
                "{got:#x} {want:#x}"
            );
        }
        assert_eq!(fold64(0), 0);
        assert_eq!(fold64(1 << 32), 1);
        assert_eq!(fold64(1 << 48), 1);
        assert_eq!(fold64(0xffff_ffff), 0xffff);
        assert_eq!(fold64(u64::MAX), 0xffff);
    }

    #[test]
    fn missing_address_is_named() {
        let mut s = router_setup(IpVersion::V6);
        s.right.ipv6_real = None;
        let e = DirectionStream::new(&s, Direction::Forward, 84, MacAddr::ZERO, MacAddr::ZERO).unwrap_err();
        assert_eq!(e.to_string(), "IPv6-R-Real is needed but not set");
    }
}
