//! The IPv4 Responder's frames (stateful phase 2) written from one record per frame: its
//! addresses and ports lie in 12 consecutive bytes of the frame (source address, destination
//! address, source port, destination port), so a burst's tuples are read from the state table
//! into records already in the frame's byte order, with the IPv4 header checksum and the UDP
//! sum they give ([`Template::tuple_record`]); writing a frame is then three stores of the
//! record, the payload field and the UDP checksum ([`Tuples4`]). The frames equal those of
//! [`Template::patch`] with the tuple's six words.

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

/// One IPv4 Responder frame's changing bytes but its payload field, computed ahead.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TupleRecord {
    /// The source and destination addresses (the Responder's, the Initiator's), as the frame
    /// holds them.
    addrs: u64,
    /// The source and destination ports, as the frame holds them.
    ports: u32,
    /// The IPv4 header checksum, as the frame holds it.
    ip: u16,
    /// The UDP one's complement sum without the payload field (folded).
    udp: u16,
}

impl Template {
    /// The record of the Responder's frame on a state table entry's words `[initiator address,
    /// responder address, initiator port << 16 | responder port]`: the frame goes from the
    /// Responder to the Initiator.
    #[inline(always)]
    pub(crate) fn tuple_record(&self, [ini, res, ports]: [u32; 3]) -> TupleRecord {
        let mut a = [0u8; 8];
        a[..4].copy_from_slice(&res.to_be_bytes());
        a[4..].copy_from_slice(&ini.to_be_bytes());
        let mut p = [0u8; 4];
        p[..2].copy_from_slice(&(ports as u16).to_be_bytes());
        p[2..].copy_from_slice(&((ports >> 16) as u16).to_be_bytes());
        // 32-bit pieces fold as their 16-bit halves do (`checksum::fold64`).
        let addrs = u64::from(res) + u64::from(ini);
        TupleRecord {
            addrs: u64::from_ne_bytes(a),
            ports: u32::from_ne_bytes(p),
            ip: (!checksum::fold64(u64::from(self.ip_sum) + addrs)).to_be(),
            udp: checksum::fold64(self.udp_sum + addrs + u64::from(ports)),
        }
    }
}

/// A burst of IPv4 Responder frames from their records: the burst's writer
/// ([`Burst::with_writer`](crate::Burst::with_writer)).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tuples4<'a> {
    t: &'a Template,
    id: u64,
    len: usize,
    recs: &'a [TupleRecord],
}

impl<'a> Tuples4<'a> {
    /// The frames of template `t` with the records `recs`; `None` unless `t` is an IPv4
    /// Responder's template (its six tuple slots and checksums where this writer puts them).
    pub(crate) fn new(t: &'a Template, recs: &'a [TupleRecord]) -> Option<Tuples4<'a>> {
        let l = &t.layout;
        // The slots of `Template::build_tuple`: both ports, then both addresses' words, with
        // nothing of the template's in them.
        let slots = t.nslots == 6
            && t.slots[..6].iter().map(|s| s.off).eq([TUPLE + 8, TUPLE + 10, TUPLE, TUPLE + 2, TUPLE + 4, TUPLE + 6])
            && t.slots[..6].iter().all(|s| s.base == 0 && s.shift == 0);
        let fits = !l.is_v6
            && l.ip_src == TUPLE
            && l.ip_dst == TUPLE + 4
            && l.sport == TUPLE + 8
            && l.dport == TUPLE + 10
            && l.ip_checksum == Some(IP_CSUM)
            && t.ip_csum_off == IP_CSUM
            && l.udp_checksum == UDP_CSUM
            && l.field == FIELD
            && t.bytes.len() >= FIELD + 8
            && slots;
        fits.then_some(Tuples4 {
            t,
            id: t.id,
            len: t.bytes.len(),
            recs,
        })
    }
}

impl FrameWriter for Tuples4<'_> {
    /// Frame `i` into `buf` as [`Burst::write`](crate::Burst::write) writes it.
    #[inline(always)]
    fn write(&self, i: usize, field: u64, buf: &mut [u8], cookie: &mut u64) -> usize {
        let (Some(r), Some(out)) = (self.recs.get(i), buf.get_mut(..self.len)) else {
            return 0;
        };
        if *cookie != self.id {
            self.t.fresh(out);
            *cookie = self.id;
        }
        let udp = u64::from(r.udp) + (field >> 32) + (field & 0xffff_ffff);
        let o = out.as_mut_ptr();
        // SAFETY: `out` holds the template's length, at least FIELD + 8 bytes (`Tuples4::new`),
        // and every store lies before FIELD + 8; unaligned writes of plain bytes.
        unsafe {
            o.add(IP_CSUM).cast::<u16>().write_unaligned(r.ip);
            o.add(TUPLE).cast::<u64>().write_unaligned(r.addrs);
            o.add(TUPLE + 8).cast::<u32>().write_unaligned(r.ports);
            o.add(UDP_CSUM)
                .cast::<u16>()
                .write_unaligned(checksum::udp_nonzero(!checksum::fold64(udp)).to_be());
            o.add(FIELD).cast::<u64>().write_unaligned(field.to_be());
        }
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record's frame equals the template patched with the tuple's six words, for tuples
    /// at the ends of every range and payload fields whose sums carry.
    #[test]
    fn record_frames_equal_patched_frames() {
        let mac = xlat_wire::MacAddr([2, 0, 0, 0, 0, 1]);
        let t = Template::build_tuple(false, 84, mac, mac).unwrap();
        let mut g = crate::rng::SplitMix64::new(5);
        let mut words = vec![[0u32; 3], [u32::MAX; 3], [0xffff_0000, 0x0000_ffff, 0xffff_0001]];
        words.extend((0..2000).map(|_| [g.next() as u32, g.next() as u32, g.next() as u32]));
        let recs: Vec<TupleRecord> = words.iter().map(|&w| t.tuple_record(w)).collect();
        let w = Tuples4::new(&t, &recs).unwrap();
        for (i, &[ini, res, ports]) in words.iter().enumerate() {
            let six = [ports as u16, (ports >> 16) as u16, (res >> 16) as u16, res as u16, (ini >> 16) as u16, ini as u16];
            for field in [0, u64::MAX, 0xffff_ffff_0000_0001, g.next()] {
                let mut want = t.bytes.clone();
                t.patch(field, &mut want, |k| six[k]);
                // Into a recycled buffer, and into one that held something else.
                let (mut got, mut cookie) = (want.clone(), t.id);
                for r in [IP_CSUM..TUPLE + 12, UDP_CSUM..UDP_CSUM + 2, FIELD..FIELD + 8] {
                    got[r].fill(0x5a);
                }
                assert_eq!(w.write(i, field, &mut got, &mut cookie), t.bytes.len());
                assert_eq!(got, want, "tuple {i} field {field:#x}");
                let (mut fresh, mut cookie) = (vec![0xaa; 100], 0);
                assert_eq!(w.write(i, field, &mut fresh, &mut cookie), t.bytes.len());
                assert_eq!((&fresh[..t.bytes.len()], cookie), (&want[..], t.id));
            }
        }
        // Past the records, or into a short buffer: nothing.
        let mut buf = t.bytes.clone();
        assert_eq!(w.write(recs.len(), 0, &mut buf, &mut 0), 0);
        assert_eq!(w.write(0, 0, &mut buf[..40], &mut 0), 0);
        // Other templates have no records.
        assert!(Tuples4::new(&Template::build_tuple(true, 84, mac, mac).unwrap(), &recs).is_none());
    }
}
