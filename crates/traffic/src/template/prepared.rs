//! A burst's stores computed ahead: for a burst whose frames all have one template, each
//! slot's word in network byte order, each frame's IPv4 header checksum and UDP checksum, in
//! SIMD loops over the burst ([`Template::prepare`]), so that writing a frame only stores
//! ([`Prepared::write`]). The frames equal those of [`Template::patch`].

use super::Template;
use crate::writer::{FrameWriter, WithWriter};
use xlat_wire::checksum;

/// A burst's slot words and checksums computed ahead (see [`Template::prepare`]) for frames of
/// one template: what [`Prepared::write`] stores per frame. Built only by [`Prepared::new`],
/// which checks the lengths that the per-frame write relies on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Prepared<'a> {
    /// The template (its bytes, for a buffer that does not hold them yet).
    t: &'a Template,
    /// The template's id, length, slot count and offsets, copied here so that the per-frame
    /// write reads them from registers or the stack, not through `t`.
    id: u64,
    len: usize,
    nslots: usize,
    offs: [usize; PREPARED_SLOTS],
    field_off: usize,
    /// 0: no IPv4 header checksum to patch.
    ip_off: usize,
    udp_off: usize,
    /// The offsets' [`Layout`].
    layout: u8,
    /// Row `k` (from `k * PREPARED_ROW`) holds slot `k`'s word of each frame, the template's
    /// bits included, in network byte order (stored as it is).
    words: &'a [u16],
    /// Each frame's UDP one's complement sum without its payload field.
    udp: &'a [u32],
    /// Each frame's IPv4 header checksum, in network byte order (when the template has one to
    /// patch).
    ip: &'a [u32],
    /// Each frame's UDP checksum, in network byte order, with the payload field
    /// `fields + i` (when `fields` is `Some`).
    udp_final: &'a [u16],
    fields: Option<u64>,
    n: usize,
}

/// A prepared burst whose template has `K` slots and layout `L` (see [`Layout`]), chosen once
/// per burst ([`Burst::with_writer`](crate::Burst::with_writer)): its frame writes are
/// unrolled for `K`, and for a plain test frame its checksums' and payload field's offsets are
/// constants.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PreparedK<'a, const K: usize, const L: u8>(pub(crate) Prepared<'a>);

impl<const K: usize, const L: u8> FrameWriter for PreparedK<'_, K, L> {
    #[inline(always)]
    fn write(&self, i: usize, field: u64, buf: &mut [u8], cookie: &mut u64) -> usize {
        self.0.write_k::<K, L>(i, field, buf, cookie)
    }
}

/// Where a prepared frame's IPv4 header checksum (0: none to patch), UDP checksum and payload
/// field lie: read from the [`Prepared`] (`ANY`), or fixed at compile time for the plain test
/// frames (Ethernet without a VLAN tag, IP without options or extension headers, UDP), so that
/// the writer's frame loop keeps no register or stack slot for them.
struct Layout;

impl Layout {
    const ANY: u8 = 0;
    /// IPv4 with its header checksum to patch (an address varies).
    const V4_IP: u8 = 1;
    /// IPv4 with its header as the template has it.
    const V4: u8 = 2;
    const V6: u8 = 3;

    /// The layout of a template with these offsets.
    fn of(ip: usize, udp: usize, field: usize) -> u8 {
        match (ip, udp, field) {
            (24, 40, 50) => Layout::V4_IP,
            (0, 40, 50) => Layout::V4,
            (0, 60, 70) => Layout::V6,
            _ => Layout::ANY,
        }
    }

    /// Layout `L`'s offsets (ip, udp, field), or `any`'s for [`Layout::ANY`].
    #[inline(always)]
    const fn offsets<const L: u8>(any: (usize, usize, usize)) -> (usize, usize, usize) {
        match L {
            Layout::V4_IP => (24, 40, 50),
            Layout::V4 => (0, 40, 50),
            Layout::V6 => (0, 60, 70),
            _ => any,
        }
    }
}

/// One frame's write, as a [`WithWriter`] (for [`Prepared::write`]).
struct One<'b> {
    i: usize,
    field: u64,
    buf: &'b mut [u8],
    cookie: &'b mut u64,
}

impl WithWriter for One<'_> {
    type Out = usize;

    #[inline(always)]
    fn with<W: FrameWriter>(self, w: W) -> usize {
        w.write(self.i, self.field, self.buf, self.cookie)
    }
}

/// The stride of the prepared slot rows, and so the most frames of a prepared burst: a
/// constant, so that the per-frame stores read slot `k`'s word at a displacement fixed at
/// compile time from the frame's first word (no row pointer per slot).
pub(crate) const PREPARED_ROW: usize = 64;

/// The most slots of a template whose bursts are prepared: a test frame's (both ports, both
/// addresses, the destination network: 5) and an IPv4 Responder's (its tuple: 6); the IPv6
/// Responder's 18 are patched per frame.
const PREPARED_SLOTS: usize = 6;

impl<'a> Prepared<'a> {
    /// The prepared rows of `n` frames of template `t`, `None` unless every row holds `n`
    /// values (`udp_final` only when `fields` is `Some`). Inlined into the burst it serves
    /// (once per burst): out of line, as the compiler's partitioning left it after session 24's
    /// moves, its call and the copy of its result cost 2-3 instructions per frame.
    #[inline(always)]
    pub(crate) fn new(
        t: &'a Template,
        words: &'a [u16],
        udp: &'a [u32],
        ip: &'a [u32],
        udp_final: &'a [u16],
        fields: Option<u64>,
        n: usize,
    ) -> Option<Prepared<'a>> {
        let ok = t.nslots <= PREPARED_SLOTS
            && n <= PREPARED_ROW
            && words.len() == t.nslots * PREPARED_ROW
            && udp.len() == n
            && ip.len() == n
            && (fields.is_none() || udp_final.len() == n);
        let mut offs = [0; PREPARED_SLOTS];
        for (o, s) in offs.iter_mut().zip(&t.slots[..t.nslots.min(PREPARED_SLOTS)]) {
            *o = s.off;
        }
        ok.then_some(Prepared {
            t,
            id: t.id,
            len: t.bytes.len(),
            nslots: t.nslots,
            offs,
            field_off: t.layout.field,
            ip_off: t.ip_csum_off,
            udp_off: t.layout.udp_checksum,
            layout: Layout::of(t.ip_csum_off, t.layout.udp_checksum, t.layout.field),
            words,
            udp,
            ip,
            udp_final,
            fields,
            n,
        })
    }

    /// Write frame `i` with `field` in its payload field into `buf`, a backend buffer whose
    /// `cookie` says what it holds (as [`Burst::write`](crate::Burst::write)): the template
    /// copied in only when the cookie is not its id, then stores only, but for the payload
    /// field's part of the UDP checksum when `field` is not the frame's own (`fields + i`).
    /// Returns the frame's length, or 0 when `i` is outside the burst or `buf` is too short.
    #[inline(always)]
    pub(crate) fn write(&self, i: usize, field: u64, buf: &mut [u8], cookie: &mut u64) -> usize {
        self.with_k(One { i, field, buf, cookie }).unwrap_or_else(|_| {
            debug_assert!(false, "{} slots", self.nslots);
            0
        })
    }

    /// Call `u` with this burst's writer unrolled for its slot count and layout
    /// (`PreparedK<K, L>`): the one step from the slot count at run time to one known at
    /// compile time. `Err(u)` for a count no writer is compiled for (none: [`Prepared::new`]
    /// takes at most [`PREPARED_SLOTS`]).
    #[inline(always)]
    pub(crate) fn with_k<U: WithWriter>(self, u: U) -> Result<U::Out, U> {
        match self.layout {
            Layout::V4_IP => self.with_kl::<{ Layout::V4_IP }, U>(u),
            Layout::V4 => self.with_kl::<{ Layout::V4 }, U>(u),
            Layout::V6 => self.with_kl::<{ Layout::V6 }, U>(u),
            _ => self.with_kl::<{ Layout::ANY }, U>(u),
        }
    }

    /// [`Prepared::with_k`] for layout `L`.
    #[inline(always)]
    fn with_kl<const L: u8, U: WithWriter>(self, u: U) -> Result<U::Out, U> {
        Ok(match self.nslots {
            0 => u.with(PreparedK::<0, L>(self)),
            1 => u.with(PreparedK::<1, L>(self)),
            2 => u.with(PreparedK::<2, L>(self)),
            3 => u.with(PreparedK::<3, L>(self)),
            4 => u.with(PreparedK::<4, L>(self)),
            5 => u.with(PreparedK::<5, L>(self)),
            PREPARED_SLOTS => u.with(PreparedK::<PREPARED_SLOTS, L>(self)),
            _ => return Err(u),
        })
    }

    /// [`Prepared::write`] for a template of `K` slots and layout `L` (0 when it has another
    /// count or layout).
    #[inline(always)]
    fn write_k<const K: usize, const L: u8>(&self, i: usize, field: u64, buf: &mut [u8], cookie: &mut u64) -> usize {
        if i >= self.n || K != self.nslots || (L != Layout::ANY && L != self.layout) {
            return 0;
        }
        let Some(out) = buf.get_mut(..self.len) else { return 0 };
        if *cookie != self.id {
            self.t.fresh(out);
            *cookie = self.id;
        }
        // SAFETY: `out` holds the template's length, K is its slot count, L its layout (or
        // ANY), and the prepared rows hold `K * n` words and `n` sums (`Prepared::new`) with
        // `i < n`.
        unsafe { self.store::<K, L>(field, out.as_mut_ptr(), i) };
        self.len
    }

    /// The stores of frame `i` into `o`.
    ///
    /// # Safety
    /// `o` points to the template's length of writable bytes, `K` is the slot count, `L` the
    /// layout or [`Layout::ANY`], `i < n`.
    #[inline(always)]
    unsafe fn store<const K: usize, const L: u8>(&self, field: u64, o: *mut u8, i: usize) {
        let (ip_off, udp_off, field_off) = Layout::offsets::<L>((self.ip_off, self.udp_off, self.field_off));
        // SAFETY: every offset was checked by `Template::build` to lie inside the frame with
        // its width (a layout's constants are the template's, `Prepared::new`); unaligned
        // writes of plain bytes; the reads are inside the prepared rows (`Prepared::new`,
        // `i < n`).
        unsafe {
            let words = self.words.as_ptr().add(i);
            for k in 0..K {
                o.add(*self.offs.get_unchecked(k))
                    .cast::<u16>()
                    .write_unaligned(*words.add(k * PREPARED_ROW));
            }
            o.add(field_off).cast::<u64>().write_unaligned(field.to_be());
            if ip_off != 0 {
                o.add(ip_off).cast::<u16>().write_unaligned(*self.ip.get_unchecked(i) as u16);
            }
            let c = match self.fields {
                Some(f) if f.wrapping_add(i as u64) == field => *self.udp_final.get_unchecked(i),
                _ => {
                    let udp = u64::from(*self.udp.get_unchecked(i)) + (field >> 32) + (field & 0xffff_ffff);
                    checksum::udp_nonzero(!checksum::fold64(udp)).to_be()
                }
            };
            o.add(udp_off).cast::<u16>().write_unaligned(c);
        }
    }
}

impl Template {
    /// The number of varying-field slots.
    pub(crate) fn slots(&self) -> usize {
        self.nslots
    }

    /// For the `n` frames whose slot values are `vals` (row `k` = slot `k`, `n` values a row),
    /// compute ahead, in SIMD loops, what [`Prepared::write`] writes: each slot's word with the
    /// template's bits, in network byte order, into `words` (row `k` from `k * PREPARED_ROW`,
    /// `n` at most [`PREPARED_ROW`]); each frame's UDP
    /// sum without the payload field into `udp`; each frame's IPv4 header checksum into `ip`;
    /// and with `fields` (frame `i`'s payload field being `fields + i`), each frame's UDP
    /// checksum into `udp_final`. The frames equal those of [`Template::patch`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn prepare(
        &self,
        vals: &[u16],
        n: usize,
        fields: Option<u64>,
        words: &mut [u16],
        udp: &mut [u32],
        ip: &mut [u32],
        udp_final: &mut [u16],
    ) {
        let k = self.nslots;
        let (Some(vals), Some(words), Some(udp), Some(ip), Some(fin)) = (
            vals.get(..k * n),
            words.get_mut(..k * PREPARED_ROW).filter(|_| n <= PREPARED_ROW),
            udp.get_mut(..n),
            ip.get_mut(..n),
            udp_final.get_mut(..n),
        ) else {
            debug_assert!(false, "prepare: short scratch");
            return;
        };
        prep::run(self, vals, n, words, udp, ip);
        if let Some(f) = fields {
            udp_finals(f, udp, fin);
        }
    }
}

/// Each frame's final UDP checksum, in network byte order, from its UDP sum without the payload
/// field (`udp`) and its payload field `f + i` (frame `i`), in a SIMD loop.
pub(super) fn udp_finals(f: u64, udp: &[u32], fin: &mut [u16]) {
    prep::finals(f, udp, fin)
}

/// The loops of [`Template::prepare`], compiled for AVX-512, AVX2 and the baseline, picked at
/// run time (as the generator's, `crate::rng`).
mod prep {
    use super::super::Template;
    use xlat_wire::checksum;

    #[inline(always)]
    fn body(t: &Template, vals: &[u16], n: usize, words: &mut [u16], udp: &mut [u32], ip: &mut [u32]) {
        udp.fill(t.udp_sum as u32);
        ip.fill(t.ip_sum);
        for (s, (row, w)) in t.slots[..t.nslots]
            .iter()
            .zip(vals.chunks_exact(n).zip(words.chunks_exact_mut(super::PREPARED_ROW)))
        {
            let (base, shift) = (u32::from(s.base), s.shift);
            if s.ip_mask != 0 {
                for (((v, w), u), a) in row.iter().zip(w.iter_mut()).zip(udp.iter_mut()).zip(ip.iter_mut()) {
                    let v = u32::from(*v) << shift;
                    *w = ((base | v) as u16).to_be();
                    *u += v;
                    *a += v;
                }
            } else if s.udp_mask != 0 {
                for ((v, w), u) in row.iter().zip(w.iter_mut()).zip(udp.iter_mut()) {
                    let v = u32::from(*v) << shift;
                    *w = ((base | v) as u16).to_be();
                    *u += v;
                }
            } else {
                // An outer IPv6 address (IPv4 in IPv6): no checksum covers it.
                for (v, w) in row.iter().zip(w.iter_mut()) {
                    *w = ((base | (u32::from(*v) << shift)) as u16).to_be();
                }
            }
        }
        if t.ip_csum_off != 0 {
            for a in ip.iter_mut() {
                *a = u32::from((!checksum::fold(*a)).to_be());
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn body_avx2(t: &Template, vals: &[u16], n: usize, words: &mut [u16], udp: &mut [u32], ip: &mut [u32]) {
        body(t, vals, n, words, udp, ip)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    unsafe fn body_avx512(t: &Template, vals: &[u16], n: usize, words: &mut [u16], udp: &mut [u32], ip: &mut [u32]) {
        body(t, vals, n, words, udp, ip)
    }

    /// Each frame's final UDP checksum from its sum without the payload field (`udp`) and its
    /// payload field `f + i`: the field's four 16-bit words added in 32-bit lanes (2^16 and
    /// 2^32 being 1 modulo 0xffff, the sum folds to what `fold64` of the 64-bit sum gives).
    #[inline(always)]
    fn finals_body(f: u64, udp: &[u32], fin: &mut [u16]) {
        let (lo0, hi0) = (f as u32, (f >> 32) as u32);
        for (i, (u, c)) in udp.iter().zip(fin.iter_mut()).enumerate() {
            let lo = lo0.wrapping_add(i as u32);
            let hi = hi0.wrapping_add(u32::from(lo < lo0));
            let s = u + (lo & 0xffff) + (lo >> 16) + (hi & 0xffff) + (hi >> 16);
            let x = !checksum::fold(s);
            *c = (if x == 0 { 0xffff } else { x }).to_be();
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn finals_avx2(f: u64, udp: &[u32], fin: &mut [u16]) {
        finals_body(f, udp, fin)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    unsafe fn finals_avx512(f: u64, udp: &[u32], fin: &mut [u16]) {
        finals_body(f, udp, fin)
    }

    pub(super) fn finals(f: u64, udp: &[u32], fin: &mut [u16]) {
        #[cfg(target_arch = "x86_64")]
        match crate::rng::simd_level() {
            // SAFETY: the CPU has AVX-512 F, BW and VL (checked at run time).
            2 => return unsafe { finals_avx512(f, udp, fin) },
            // SAFETY: the CPU has AVX2 (checked at run time).
            1 => return unsafe { finals_avx2(f, udp, fin) },
            _ => {}
        }
        finals_body(f, udp, fin)
    }

    /// Every variant of `body` and `finals_body` this CPU can run, with its name, for tests.
    #[cfg(test)]
    #[allow(clippy::type_complexity)]
    pub(super) fn variants() -> Vec<(
        &'static str,
        fn(&Template, &[u16], usize, &mut [u16], &mut [u32], &mut [u32]),
        fn(u64, &[u32], &mut [u16]),
    )> {
        let mut v: Vec<(
            &'static str,
            fn(&Template, &[u16], usize, &mut [u16], &mut [u32], &mut [u32]),
            fn(u64, &[u32], &mut [u16]),
        )> = vec![("baseline", body, finals_body)];
        #[cfg(target_arch = "x86_64")]
        {
            if crate::rng::simd_level() >= 1 {
                // SAFETY: the CPU has AVX2.
                v.push((
                    "avx2",
                    |t, a, n, w, u, i| unsafe { body_avx2(t, a, n, w, u, i) },
                    |f, u, c| unsafe { finals_avx2(f, u, c) },
                ));
            }
            if crate::rng::simd_level() == 2 {
                // SAFETY: the CPU has AVX-512 F, BW and VL.
                v.push((
                    "avx512",
                    |t, a, n, w, u, i| unsafe { body_avx512(t, a, n, w, u, i) },
                    |f, u, c| unsafe { finals_avx512(f, u, c) },
                ));
            }
        }
        v
    }

    pub(super) fn run(t: &Template, vals: &[u16], n: usize, words: &mut [u16], udp: &mut [u32], ip: &mut [u32]) {
        if n == 0 {
            return;
        }
        #[cfg(target_arch = "x86_64")]
        match crate::rng::simd_level() {
            // SAFETY: the CPU has AVX-512 F, BW and VL (checked at run time).
            2 => return unsafe { body_avx512(t, vals, n, words, udp, ip) },
            // SAFETY: the CPU has AVX2 (checked at run time).
            1 => return unsafe { body_avx2(t, vals, n, words, udp, ip) },
            _ => {}
        }
        body(t, vals, n, words, udp, ip)
    }
}

#[cfg(test)]
mod tests {
    use crate::writer::FrameWriter;

    /// `PreparedK::<k>(p).write(...)`, for a `k` known at run time: `p`'s own slot count (through
    /// `Prepared::with_k`), or any other (1 for a template of none, else 0).
    fn write_k(p: super::Prepared, k: usize, i: usize, field: u64, buf: &mut [u8], cookie: &mut u64) -> usize {
        if k == p.nslots {
            return p.with_k(super::One { i, field, buf, cookie }).unwrap_or(usize::MAX);
        }
        assert_eq!(
            k,
            usize::from(p.nslots == 0),
            "another slot count: 1 for a template of none, else 0"
        );
        match k {
            0 => super::PreparedK::<0, { super::Layout::ANY }>(p).write(i, field, buf, cookie),
            _ => super::PreparedK::<1, { super::Layout::ANY }>(p).write(i, field, buf, cookie),
        }
    }

    /// Every compiled variant of the prepare loops gives the frames of `patch`, for every slot
    /// count, values at the range ends, and payload fields whose low half wraps in the burst.
    #[test]
    fn prepared_frames_equal_patched_frames_in_every_variant() {
        use crate::setup::{Direction, IpVersion};
        use crate::vary::Variation;
        let mac = xlat_wire::MacAddr([2, 0, 0, 0, 0, 1]);
        let mut g = crate::rng::SplitMix64::new(11);
        for v in [IpVersion::V4, IpVersion::V6] {
            for mode in 0..5 {
                let mut s = crate::stream::tests::router_setup(v);
                // Mode 4: IPv4 in IPv6 with many B4 addresses (the outer source varies, in no
                // checksum).
                if mode == 4 {
                    if v == IpVersion::V6 {
                        continue;
                    }
                    s.left.tunnel = Some(crate::setup::SideTunnel {
                        local: "2001:2::2".parse().unwrap(),
                        remote: "2001:2::1".parse().unwrap(),
                    });
                }
                if mode >= 1 {
                    s.forward_ports.sport.variation = Variation::Pseudorandom;
                }
                if mode >= 2 {
                    s.forward_ports.dport.variation = Variation::Increasing;
                    s.left.ip_var.variation = Variation::Pseudorandom;
                }
                match mode {
                    2 => s.right.ip_var.variation = Variation::Decreasing,
                    3 | 4 => s.right.num_nets = 256,
                    _ => {}
                }
                let plan = crate::plan::Plan::new(&s, Direction::Forward, 1).unwrap();
                let t = &super::super::Template::build(
                    &plan,
                    s.foreground_addresses(Direction::Forward).unwrap(),
                    84,
                    (mac, mac),
                    s.left.tunnel,
                    None,
                )
                .unwrap();
                let k = t.nslots;
                for (name, body, finals) in super::prep::variants() {
                    for n in [1usize, 7, 32, 33] {
                        let vals: Vec<u16> = (0..k * n)
                            .map(|j| {
                                let x = match j % 3 {
                                    0 => 0,
                                    1 => g.next() as u16,
                                    _ => 0xffff,
                                };
                                // A network byte's slot holds 8 bits.
                                if t.slots[j / n].shift == 8 {
                                    x & 0xff
                                } else {
                                    x
                                }
                            })
                            .collect();
                        let (mut w, mut u, mut ip, mut fin) = (vec![0; k * super::PREPARED_ROW], vec![0; n], vec![0; n], vec![0; n]);
                        body(t, &vals, n, &mut w, &mut u, &mut ip);
                        let f0 = (g.next() & 0xff00_0000_ffff_ffff) | 0xffff_fff0;
                        finals(f0, &u, &mut fin);
                        let p = super::Prepared::new(t, &w, &u, &ip, &fin, Some(f0), n).unwrap();
                        for i in 0..n {
                            for field in [f0.wrapping_add(i as u64), g.next()] {
                                let (mut a, mut b) = (t.bytes.clone(), t.bytes.clone());
                                t.patch(field, &mut a, |j| vals[j * n + i]);
                                let mut cookie = t.id;
                                assert_eq!(p.write(i, field, &mut b, &mut cookie), t.bytes.len());
                                assert_eq!(a, b, "{name} {v:?} mode {mode} n {n} frame {i} field {field:#x}");
                                // The writer chosen once per burst writes the same frame; one
                                // unrolled for another slot count writes nothing.
                                let mut c = t.bytes.clone();
                                assert_eq!(write_k(p, k, i, field, &mut c, &mut cookie), t.bytes.len());
                                assert_eq!(a, c, "{name} {v:?} mode {mode}: the writer for {k} slots");
                                let other = if k == 0 { 1 } else { 0 };
                                assert_eq!(write_k(p, other, i, field, &mut c, &mut cookie), 0);
                                // Nor does one compiled for another layout.
                                if k == 0 && p.layout != super::Layout::V6 {
                                    let w = super::PreparedK::<0, { super::Layout::V6 }>(p);
                                    assert_eq!(w.write(i, field, &mut c, &mut cookie), 0);
                                }
                                // Into a buffer that held something else (longer than the frame, or
                                // exactly as long): the template copied in first.
                                for room in [t.bytes.len() + 100, t.bytes.len()] {
                                    let (mut c, mut cookie) = (vec![0xaa; room], 0);
                                    assert_eq!(p.write(i, field, &mut c, &mut cookie), t.bytes.len());
                                    assert_eq!((&c[..t.bytes.len()], cookie), (&a[..], t.id), "{name} room {room}");
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
