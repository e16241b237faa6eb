//! The IPv4 Responder's frames (stateful phase 2) written from rows computed ahead: its
//! addresses and ports lie in 12 consecutive bytes of the frame (source address, destination
//! address, source port, destination port), so for a burst the tuples are read from the state
//! table into three rows of entry words, from which one SIMD loop computes each frame's
//! addresses and ports in the frame's byte order, its IPv4 header checksum and its UDP checksum
//! ([`Template::tuple_rows`]); writing a frame is then five stores ([`Tuples4`]). The frames
//! equal those of [`Template::patch`] with the tuple's six words.

use super::prepared::udp_finals;
use super::Template;
use crate::writer::FrameWriter;
use xlat_wire::checksum;

/// Where an IPv4 Responder frame's parts lie (Ethernet without a VLAN tag, IPv4 without
/// options, UDP): the header checksum, the addresses and ports (12 bytes), the UDP checksum and
/// the payload field. [`Tuples4::new`] checks the template against them.
const IP_CSUM: usize = 24;
const TUPLE: usize = 26;
const UDP_CSUM: usize = 40;
const FIELD: usize = 50;

/// A burst of IPv4 Responder frames, a row per part, a value per frame: the entries' words as
/// the state table holds them (filled by the reader), and what [`Template::tuple_rows`]
/// computes from them.
#[derive(Debug, Clone, Default)]
pub(crate) struct TupleRows {
    /// Initiator address, responder address, ports (initiator << 16 | responder).
    pub(crate) ini: Vec<u32>,
    pub(crate) res: Vec<u32>,
    pub(crate) ports: Vec<u32>,
    /// The source and destination addresses (the Responder's, the Initiator's) as the frame
    /// holds them.
    addrs: Vec<u64>,
    /// The source and destination ports as the frame holds them.
    pbe: Vec<u32>,
    /// The IPv4 header checksum as the frame holds it (low 16 bits).
    ip: Vec<u32>,
    /// The UDP one's complement sum without the payload field.
    udp: Vec<u32>,
    /// The UDP checksum as the frame holds it with payload field `fields + i`.
    fin: Vec<u16>,
}

impl TupleRows {
    /// Room for `n` frames.
    pub(crate) fn reserve(&mut self, n: usize) {
        if self.ini.len() < n {
            for r in [
                &mut self.ini,
                &mut self.res,
                &mut self.ports,
                &mut self.pbe,
                &mut self.ip,
                &mut self.udp,
            ] {
                r.resize(n, 0);
            }
            self.addrs.resize(n, 0);
            self.fin.resize(n, 0);
        }
    }
}

impl Template {
    /// From the entry words of rows `ini`, `res` and `ports` (`n` frames), each frame's
    /// addresses, ports, IPv4 header checksum and UDP sum, and with `fields` (frame `i`'s
    /// payload field being `fields + i`) its UDP checksum: what [`Tuples4`] stores. The frame
    /// goes from the Responder to the Initiator.
    pub(crate) fn tuple_rows(&self, rows: &mut TupleRows, n: usize, fields: Option<u64>) {
        rows.reserve(n);
        let (ip_sum, udp_sum) = (self.ip_sum, self.udp_sum as u32);
        let r = rows;
        let ins = (&r.ini[..n], &r.res[..n], &r.ports[..n]);
        let outs = (&mut r.addrs[..n], &mut r.pbe[..n], &mut r.ip[..n], &mut r.udp[..n]);
        simd::run(ip_sum, udp_sum, ins, outs);
        if let Some(f) = fields {
            udp_finals(f, &r.udp[..n], &mut r.fin[..n]);
        }
    }
}

/// The loop of [`Template::tuple_rows`], compiled for AVX-512, AVX2 and the baseline, picked
/// at run time (as the prepare loops, `super::prepared`).
mod simd {
    use xlat_wire::checksum;

    pub(super) type Ins<'a> = (&'a [u32], &'a [u32], &'a [u32]);
    pub(super) type Outs<'a> = (&'a mut [u64], &'a mut [u32], &'a mut [u32], &'a mut [u32]);

    #[inline(always)]
    pub(super) fn body(ip_sum: u32, udp_sum: u32, (ini, res, ports): Ins, (addrs, pbe, ip, udp): Outs) {
        let n = ini
            .len()
            .min(res.len())
            .min(ports.len())
            .min(addrs.len())
            .min(pbe.len())
            .min(ip.len())
            .min(udp.len());
        for i in 0..n {
            let (a, r, p) = (ini[i], res[i], ports[i]);
            addrs[i] = u64::from(r.swap_bytes()) | (u64::from(a.swap_bytes()) << 32);
            // Source port (the Responder's, low half), then destination port.
            pbe[i] = p.rotate_left(16).swap_bytes();
            let s = (r >> 16) + (r & 0xffff) + (a >> 16) + (a & 0xffff);
            ip[i] = u32::from((!checksum::fold(ip_sum + s)).to_be());
            udp[i] = udp_sum + s + (p >> 16) + (p & 0xffff);
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn body_avx2(ip_sum: u32, udp_sum: u32, ins: Ins, outs: Outs) {
        body(ip_sum, udp_sum, ins, outs)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    unsafe fn body_avx512(ip_sum: u32, udp_sum: u32, ins: Ins, outs: Outs) {
        body(ip_sum, udp_sum, ins, outs)
    }

    pub(super) fn run(ip_sum: u32, udp_sum: u32, ins: Ins, outs: Outs) {
        #[cfg(target_arch = "x86_64")]
        match crate::rng::simd_level() {
            // SAFETY: the CPU has AVX-512 F, BW and VL (checked at run time).
            2 => return unsafe { body_avx512(ip_sum, udp_sum, ins, outs) },
            // SAFETY: the CPU has AVX2 (checked at run time).
            1 => return unsafe { body_avx2(ip_sum, udp_sum, ins, outs) },
            _ => {}
        }
        body(ip_sum, udp_sum, ins, outs)
    }

    /// A variant of the loop: (template's IPv4 header sum, its UDP sum, rows in, rows out).
    #[cfg(test)]
    pub(super) type Body = fn(u32, u32, Ins, Outs);

    /// Every variant this CPU can run, with its name, for tests.
    #[cfg(test)]
    pub(super) fn variants() -> Vec<(&'static str, Body)> {
        let mut v: Vec<(&'static str, Body)> = vec![("baseline", body)];
        #[cfg(target_arch = "x86_64")]
        {
            if crate::rng::simd_level() >= 1 {
                // SAFETY: the CPU has AVX2.
                v.push(("avx2", |a, b, i, o| unsafe { body_avx2(a, b, i, o) }));
            }
            if crate::rng::simd_level() == 2 {
                // SAFETY: the CPU has AVX-512 F, BW and VL.
                v.push(("avx512", |a, b, i, o| unsafe { body_avx512(a, b, i, o) }));
            }
        }
        v
    }
}

/// A burst of IPv4 Responder frames from their rows: the burst's writer
/// ([`Burst::with_writer`](crate::Burst::with_writer)).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tuples4<'a> {
    t: &'a Template,
    id: u64,
    len: usize,
    n: usize,
    addrs: &'a [u64],
    pbe: &'a [u32],
    ip: &'a [u32],
    udp: &'a [u32],
    fin: &'a [u16],
    fields: Option<u64>,
}

impl<'a> Tuples4<'a> {
    /// Whether template `t` is an IPv4 Responder's whose frames this writer writes (its six
    /// tuple slots and its checksums where this writer puts them).
    pub(crate) fn fits(t: &Template) -> bool {
        let l = &t.layout;
        // The slots of `Template::build_tuple`: both ports, then both addresses' words, with
        // nothing of the template's in them.
        let slots = t.nslots == 6
            && t.slots[..6]
                .iter()
                .map(|s| s.off)
                .eq([TUPLE + 8, TUPLE + 10, TUPLE, TUPLE + 2, TUPLE + 4, TUPLE + 6])
            && t.slots[..6].iter().all(|s| s.base == 0 && s.shift == 0);
        !l.is_v6
            && l.ip_src == TUPLE
            && l.ip_dst == TUPLE + 4
            && l.sport == TUPLE + 8
            && l.dport == TUPLE + 10
            && l.ip_checksum == Some(IP_CSUM)
            && t.ip_csum_off == IP_CSUM
            && l.udp_checksum == UDP_CSUM
            && l.field == FIELD
            && t.bytes.len() >= FIELD + 8
            && slots
    }

    /// The `n` frames of template `t` whose rows [`Template::tuple_rows`] computed (with
    /// `fields`); `t` must [`fit`](Tuples4::fits), which the Responder decides once
    /// (`Responder::rows`), not per burst. `None` unless the rows hold `n` frames and the
    /// template is long enough for the stores.
    pub(crate) fn new(t: &'a Template, rows: &'a TupleRows, n: usize, fields: Option<u64>) -> Option<Tuples4<'a>> {
        debug_assert!(Tuples4::fits(t));
        let ok = t.bytes.len() >= FIELD + 8
            && [rows.pbe.len(), rows.ip.len(), rows.udp.len(), rows.addrs.len(), rows.fin.len()]
                .iter()
                .all(|&l| l >= n);
        ok.then(|| Tuples4 {
            t,
            id: t.id,
            len: t.bytes.len(),
            n,
            addrs: &rows.addrs[..n],
            pbe: &rows.pbe[..n],
            ip: &rows.ip[..n],
            udp: &rows.udp[..n],
            fin: &rows.fin[..n],
            fields,
        })
    }
}

impl FrameWriter for Tuples4<'_> {
    /// Frame `i` into `buf` as [`Burst::write`](crate::Burst::write) writes it.
    #[inline(always)]
    fn write(&self, i: usize, field: u64, buf: &mut [u8], cookie: &mut u64) -> usize {
        if i >= self.n {
            return 0;
        }
        let Some(out) = buf.get_mut(..self.len) else { return 0 };
        if *cookie != self.id {
            self.t.fresh(out);
            *cookie = self.id;
        }
        let o = out.as_mut_ptr();
        // SAFETY: every row holds `n` values (`Tuples4::new`) and i < n; `out` holds the
        // template's length, at least FIELD + 8 bytes (`Tuples4::new`), and every store lies
        // before FIELD + 8; unaligned writes of plain bytes.
        unsafe {
            let c = match self.fields {
                Some(f) if f.wrapping_add(i as u64) == field => *self.fin.get_unchecked(i),
                _ => {
                    let udp = u64::from(*self.udp.get_unchecked(i)) + (field >> 32) + (field & 0xffff_ffff);
                    checksum::udp_nonzero(!checksum::fold64(udp)).to_be()
                }
            };
            o.add(IP_CSUM).cast::<u16>().write_unaligned(*self.ip.get_unchecked(i) as u16);
            o.add(TUPLE).cast::<u64>().write_unaligned(*self.addrs.get_unchecked(i));
            o.add(TUPLE + 8).cast::<u32>().write_unaligned(*self.pbe.get_unchecked(i));
            o.add(UDP_CSUM).cast::<u16>().write_unaligned(c);
            o.add(FIELD).cast::<u64>().write_unaligned(field.to_be());
        }
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entry words `[ini, res, ports]` as the state table gives a Responder's frame words.
    fn six_words(ini: u32, res: u32, ports: u32) -> [u16; 6] {
        let table = crate::state::StateTable::new(1).unwrap();
        table.learn(crate::state::Tuple4 {
            initiator: std::net::Ipv4Addr::from(ini).into(),
            responder: std::net::Ipv4Addr::from(res).into(),
            initiator_port: (ports >> 16) as u16,
            responder_port: ports as u16,
        });
        let w = table.read_frame_words(0).unwrap();
        [w[0], w[1], w[2], w[3], w[4], w[5]]
    }

    /// Every compiled variant's frames equal the template patched with the tuple's six words,
    /// for tuples at the ends of every range and payload fields whose sums carry, the frame's
    /// own payload field (`fields + i`) and any other.
    #[test]
    fn row_frames_equal_patched_frames_in_every_variant() {
        let mac = xlat_wire::MacAddr([2, 0, 0, 0, 0, 1]);
        let t = Template::build_tuple(false, 84, mac, mac).unwrap();
        let mut g = crate::rng::SplitMix64::new(5);
        let mut words = vec![[0u32; 3], [u32::MAX; 3], [0xffff_0000, 0x0000_ffff, 0xffff_0001]];
        words.extend((0..61).map(|_| [g.next() as u32, g.next() as u32, g.next() as u32]));
        let n = words.len();
        for (name, body) in simd::variants() {
            let mut rows = TupleRows::default();
            rows.reserve(n);
            for (i, &[a, r, p]) in words.iter().enumerate() {
                (rows.ini[i], rows.res[i], rows.ports[i]) = (a, r, p);
            }
            let f0 = 0xffff_fff0u64;
            t.tuple_rows(&mut rows, n, Some(f0));
            // The variant under test over the same rows (the dispatch above took one).
            let ins = (&rows.ini[..n], &rows.res[..n], &rows.ports[..n]);
            let outs = (&mut rows.addrs[..n], &mut rows.pbe[..n], &mut rows.ip[..n], &mut rows.udp[..n]);
            body(t.ip_sum, t.udp_sum as u32, ins, outs);
            let w = Tuples4::new(&t, &rows, n, Some(f0)).unwrap();
            for (i, &[ini, res, ports]) in words.iter().enumerate() {
                // The tuple's six words as the per-frame path takes them from the state table.
                let six = six_words(ini, res, ports);
                for field in [f0 + i as u64, 0, u64::MAX, 0xffff_ffff_0000_0001, g.next()] {
                    let mut want = t.bytes.clone();
                    t.patch(field, &mut want, |k| six[k]);
                    // Into a recycled buffer, and into one that held something else.
                    let (mut got, mut cookie) = (want.clone(), t.id);
                    for r in [IP_CSUM..TUPLE + 12, UDP_CSUM..UDP_CSUM + 2, FIELD..FIELD + 8] {
                        got[r].fill(0x5a);
                    }
                    assert_eq!(w.write(i, field, &mut got, &mut cookie), t.bytes.len());
                    assert_eq!(got, want, "{name}: tuple {i} field {field:#x}");
                    let (mut fresh, mut cookie) = (vec![0xaa; 100], 0);
                    assert_eq!(w.write(i, field, &mut fresh, &mut cookie), t.bytes.len());
                    assert_eq!((&fresh[..t.bytes.len()], cookie), (&want[..], t.id));
                }
            }
            // Past the burst, or into a short buffer: nothing.
            let mut buf = t.bytes.clone();
            assert_eq!(w.write(n, 0, &mut buf, &mut 0), 0);
            assert_eq!(w.write(0, 0, &mut buf[..40], &mut 0), 0);
            assert!(Tuples4::new(&t, &rows, n + 1, None).is_none(), "rows shorter than the burst");
        }
        // Other templates are not written this way.
        let v6 = Template::build_tuple(true, 84, mac, mac).unwrap();
        assert!(!Tuples4::fits(&v6) && Tuples4::fits(&t));
    }
}
