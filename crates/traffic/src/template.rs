//! A direction's frame template and the per-frame patcher: the frame built once with zero in
//! every varying field, where its fields are, and `patch`, which writes only what changes.
//!
//! The template holds zero in every varying field (as siitperf masks them), so a frame's
//! checksums are the template's one's complement sums plus the new field values: one addition per
//! field and a single fold at the end, with no per-frame subtraction of old values (RFC 1624
//! equation 3 with every old value zero).

use crate::plan::{Plan, StreamError, MAX_FIELDS};
use crate::setup::SideTunnel;
use crate::setup::{AddrPair, IpVarSpec, NET_OCTET_V4, NET_OCTET_V6, RFC2544_DPORT, RFC2544_SPORT};
use crate::subscribers::{Subscribers, Word};
use std::net::{Ipv4Addr, Ipv6Addr};
use xlat_wire::frame::{IpPair, TestFrame, TestFrameLayout, Tunnel};
use xlat_wire::{checksum, MacAddr};

pub(crate) mod prepared;
pub(crate) mod tuple;

/// The slots of a Responder's template: source port, destination port, the 16-bit words of
/// the source address, those of the destination address: 6 for IPv4, 18 for IPv6 (room for
/// the larger).
pub(crate) const TUPLE_SLOTS: usize = 18;

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
    /// All ones when the UDP checksum covers the word (ports, the addresses of its
    /// pseudo-header), zero for the outer IPv6 source of an IPv4-in-IPv6 frame.
    udp_mask: u32,
}

/// A pre-built frame, where its fields are, and what varies in it.
#[derive(Debug, Clone)]
pub(crate) struct Template {
    /// Unique in the process (never 0): a buffer whose cookie holds it holds this template's
    /// bytes, possibly patched for another frame.
    pub(crate) id: u64,
    pub(crate) bytes: Vec<u8>,
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

/// Is `addr` (an address's bytes) an IPv6 one?
fn v6_frame(addr: &[u8]) -> bool {
    addr.len() == 16
}

/// A template id not used before in this process (never 0).
pub(crate) fn next_id() -> u64 {
    static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Template {
    /// The template of frames from `pair` (zero in every varying part) with their slots, per
    /// `plan`. `ipv6_frame_size` as in [`DirectionStream::new`](crate::DirectionStream::new).
    /// With `tunnel` (the sending side's), the frames are IPv4 in IPv6, 40 bytes longer, and a
    /// varying source is the outer one (the B4's address). With `subs` (foreground frames from
    /// or to many MAP CEs), the words the subscribers set are slots after the plan's fields,
    /// the others subscriber 0's.
    pub(crate) fn build(
        plan: &Plan,
        pair: AddrPair,
        ipv6_frame_size: usize,
        (src_mac, dst_mac): (MacAddr, MacAddr),
        tunnel: Option<SideTunnel>,
        subs: Option<&Subscribers>,
    ) -> Result<Template, StreamError> {
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
        let mut outer = tunnel.map(|t| (t.local.octets(), t.remote));
        match (&plan.src, outer.as_mut()) {
            (Some((_, v)), Some((local, _))) => zero(local, usize::from(v.ipv6_offset), 2),
            (Some((_, v)), None) => zero(&mut src, var_off(v), 2),
            _ => {}
        }
        if let Some((_, v)) = &plan.dst {
            zero(&mut dst, var_off(v), 2);
        }
        if plan.net.is_some() {
            zero(&mut dst, usize::from(net_octet), 1);
        }
        if let Some(s) = subs {
            // Subscriber 0's addresses, zero in the words that vary.
            let (v4, _, v6) = s.first();
            let with = |value: &[u8], of: fn(Word) -> Option<usize>| {
                let mut a = value.to_vec();
                for k in s.words.iter().filter_map(|w| of(*w)) {
                    a[2 * k..2 * k + 2].fill(0);
                }
                a
            };
            let ipv4 = |w| if let Word::Ipv4(k) = w { Some(k) } else { None };
            let ipv6 = |w| if let Word::Ipv6(k) = w { Some(k) } else { None };
            let (v4, v6) = (Ipv4Addr::from(v4).octets(), Ipv6Addr::from(v6).octets());
            match (s.source, outer.as_mut()) {
                (false, _) => dst = with(&v4, ipv4),
                (true, Some((local, _))) => {
                    local.copy_from_slice(&with(&v6, ipv6));
                    src = with(&v4, ipv4);
                }
                (true, None) if v6_frame(&src) => src = with(&v6, ipv6),
                (true, None) => src = with(&v4, ipv4),
            }
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
        let sport = if plan.sport.is_some() || subs.is_some_and(|s| s.source) {
            0
        } else {
            RFC2544_SPORT
        };
        let dport = if plan.dport.is_some() || subs.is_some_and(|s| !s.source) {
            0
        } else {
            RFC2544_DPORT
        };
        let frame_size = if v6 { ipv6_frame_size } else { ipv6_frame_size.saturating_sub(20) };
        let frame = TestFrame {
            eth_dst: dst_mac,
            eth_src: src_mac,
            ip,
            sport,
            dport,
            frame_size: frame_size + if outer.is_some() { xlat_wire::ipv6::HDR_LEN } else { 0 },
            field: 0,
            tunnel: outer.map(|(local, remote)| Tunnel {
                src: Ipv6Addr::from(local),
                dst: remote,
            }),
        };
        let mut bytes = vec![0u8; frame.len()];
        let layout = frame.write(&mut bytes).map_err(|e| StreamError::Frame(e.to_string()))?;
        let word = |o: usize| u16::from_be_bytes([bytes[o], bytes[o + 1]]);
        let ip_mask = if v6 { 0 } else { u32::MAX };
        let mut slots = [Slot::default(); MAX_FIELDS];
        let mut nslots = 0;
        // The same order as `Plan::gens`: slot k holds varying field k.
        let mut push = |off: usize, shift: u32, ip_mask: u32, udp_mask: u32| {
            slots[nslots] = Slot {
                off,
                base: word(off),
                shift,
                ip_mask,
                udp_mask,
            };
            nslots += 1;
        };
        let all = u32::MAX;
        if plan.sport.is_some() {
            push(layout.sport, 0, 0, all);
        }
        if plan.dport.is_some() {
            push(layout.dport, 0, 0, all);
        }
        if let Some((_, v)) = &plan.src {
            match layout.tunnel_src {
                // The B4's address: in no checksum.
                Some(outer) => push(outer + usize::from(v.ipv6_offset), 0, 0, 0),
                None => push(layout.ip_src + var_off(v), 0, ip_mask, all),
            }
        }
        if let Some((_, v)) = &plan.dst {
            push(layout.ip_dst + var_off(v), 0, ip_mask, all);
        }
        if plan.net.is_some() {
            let o = usize::from(net_octet);
            push(layout.ip_dst + (o & !1), if o % 2 == 0 { 8 } else { 0 }, ip_mask, all);
        }
        if let Some(s) = subs {
            let others = [
                plan.sport.is_some(),
                plan.dport.is_some(),
                plan.src.is_some(),
                plan.dst.is_some(),
                plan.net.is_some(),
            ];
            let others = others.iter().filter(|x| **x).count();
            if others + s.words.len() > MAX_FIELDS {
                return Err(StreamError::Invalid(format!(
                    "the MAP CEs vary {} words of the frame beside {others} other fields: at most {MAX_FIELDS} in all",
                    s.words.len()
                )));
            }
            for w in &s.words {
                match (*w, s.source, layout.tunnel_src) {
                    (Word::Ipv4(k), true, _) => push(layout.ip_src + 2 * k, 0, ip_mask, all),
                    (Word::Ipv4(k), false, _) => push(layout.ip_dst + 2 * k, 0, ip_mask, all),
                    // The CE's address: a tunnel's outer source is in no checksum.
                    (Word::Ipv6(k), _, Some(outer)) => push(outer + 2 * k, 0, 0, 0),
                    (Word::Ipv6(k), _, None) => push(layout.ip_src + 2 * k, 0, 0, all),
                    (Word::Port, true, _) => push(layout.sport, 0, 0, all),
                    (Word::Port, false, _) => push(layout.dport, 0, 0, all),
                }
            }
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
        Ok(Template {
            id: next_id(),
            bytes,
            layout,
            udp_sum,
            ip_sum,
            ip_csum_off,
            slots,
            nslots,
        })
    }

    /// The template of the Responder's foreground frames in phase 2 of a stateful test: UDP
    /// over IPv4 (`v6` false) or IPv6 with both addresses and both ports varying, slots in
    /// this order: source port, destination port, the source address's 16-bit words, the
    /// destination address's (6 slots for IPv4, 18 for IPv6).
    pub(crate) fn build_tuple(v6: bool, ipv6_frame_size: usize, src_mac: MacAddr, dst_mac: MacAddr) -> Result<Template, StreamError> {
        let (ip, frame_size, words) = if v6 {
            let z = Ipv6Addr::UNSPECIFIED;
            (IpPair::V6 { src: z, dst: z }, ipv6_frame_size, 8)
        } else {
            let z = Ipv4Addr::UNSPECIFIED;
            (IpPair::V4 { src: z, dst: z }, ipv6_frame_size.saturating_sub(20), 2)
        };
        let frame = TestFrame {
            eth_dst: dst_mac,
            eth_src: src_mac,
            ip,
            sport: 0,
            dport: 0,
            frame_size,
            field: 0,
            tunnel: None,
        };
        let mut bytes = vec![0u8; frame.len()];
        let layout = frame.write(&mut bytes).map_err(|e| StreamError::Frame(e.to_string()))?;
        let len = bytes.len();
        // The IPv4 header checksum covers the addresses; IPv6 has none.
        let ip_mask = if v6 { 0 } else { u32::MAX };
        let mut offs = vec![(layout.sport, 0), (layout.dport, 0)];
        offs.extend((0..words).map(|k| (layout.ip_src + 2 * k, ip_mask)));
        offs.extend((0..words).map(|k| (layout.ip_dst + 2 * k, ip_mask)));
        let inside = |off: usize, n: usize| off + n <= len;
        if !(offs.iter().all(|(o, _)| inside(*o, 2))
            && inside(layout.field, 8)
            && inside(layout.udp_checksum, 2)
            && layout.ip_checksum.is_none_or(|o| inside(o, 2)))
        {
            return Err(StreamError::Frame(format!("a varying field lies outside the {len}-byte frame")));
        }
        let word = |o: usize| u16::from_be_bytes([bytes[o], bytes[o + 1]]);
        let mut slots = [Slot::default(); MAX_FIELDS];
        for (s, (off, ip_mask)) in slots.iter_mut().zip(offs.iter().copied()) {
            *s = Slot {
                off,
                base: word(off),
                shift: 0,
                ip_mask,
                udp_mask: u32::MAX,
            };
        }
        Ok(Template {
            id: next_id(),
            ip_sum: layout.ip_checksum.map_or(0, |o| u32::from(!word(o))),
            udp_sum: u64::from(!word(layout.udp_checksum)),
            ip_csum_off: layout.ip_checksum.unwrap_or(0),
            nslots: offs.len(),
            bytes,
            layout,
            slots,
        })
    }

    /// The bytes a patch writes, from the first to the last: the slots, the IPv4 header checksum
    /// when a slot is in its header, the UDP checksum and the payload field.
    pub(crate) fn hot(&self) -> std::ops::Range<usize> {
        let field = self.layout.field..self.layout.field + 8;
        let csums = [self.ip_csum_off, self.layout.udp_checksum]
            .into_iter()
            .filter(|&o| o != 0)
            .map(|o| o..o + 2);
        let slots = self.slots[..self.nslots].iter().map(|s| s.off..s.off + 2);
        csums.chain(slots).fold(field, |h, r| h.start.min(r.start)..h.end.max(r.end))
    }

    /// Copy the template into `out` (exactly its length): a buffer that held something else.
    #[cold]
    #[inline(never)]
    pub(crate) fn fresh(&self, out: &mut [u8]) {
        out.copy_from_slice(&self.bytes);
    }

    /// Patch a frame into `out`, which holds this template's bytes (fresh, or patched for
    /// another frame: every field a patch touches is written whole, and the checksums are
    /// computed from the template's sums, not from what `out` holds). `field` goes into the
    /// 64-bit payload field, `value(k)` into slot `k` (varying field `k`). Writes nothing when
    /// `out` is not exactly the template's length.
    #[inline(always)]
    pub(crate) fn patch(&self, field: u64, out: &mut [u8], value: impl Fn(usize) -> u16) {
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
                5 => self.patch_fast::<5>(field, out, value),
                6 => self.patch_fast::<6>(field, out, value),
                MAX_FIELDS => self.patch_fast::<MAX_FIELDS>(field, out, value),
                // Frames of many MAP CEs (build's subscriber words).
                _ => self.patch_slow(field, out, value),
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
        // SAFETY: K <= MAX_FIELDS is the slots' count; the rest as the caller promises.
        unsafe { self.patch_slots(self.slots.get_unchecked(..K), field, out, value) }
    }

    /// [`Template::patch`] for any slot count: the frames of many MAP CEs, whose words are more
    /// than the fast path's counts.
    #[cold]
    #[inline(never)]
    fn patch_slow(&self, field: u64, out: &mut [u8], value: impl Fn(usize) -> u16) {
        if out.len() == self.bytes.len() {
            // SAFETY: `out` is the template's length; the slots are the template's own.
            unsafe { self.patch_slots(&self.slots[..self.nslots.min(MAX_FIELDS)], field, out, value) }
        }
    }

    /// Write `slots` (`value(k)` into slot `k`), the payload field and the checksums into `out`.
    ///
    /// # Safety
    /// `out.len()` is `self.bytes.len()` and `slots` are this template's (checked inside the
    /// frame by `Template::build`).
    #[inline(always)]
    unsafe fn patch_slots(&self, slots: &[Slot], field: u64, out: &mut [u8], value: impl Fn(usize) -> u16) {
        let p = out.as_mut_ptr();
        let put = |off: usize, b: &[u8]| {
            // SAFETY: off + b.len() <= out.len() (see above); unaligned writes of plain bytes.
            unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), p.add(off), b.len()) }
        };
        let mut udp = self.udp_sum + (field >> 32) + (field & 0xffff_ffff);
        let mut ip = self.ip_sum;
        for (k, s) in slots.iter().enumerate() {
            let v = u32::from(value(k)) << s.shift;
            put(s.off, &((u32::from(s.base) | v) as u16).to_be_bytes());
            udp += u64::from(v & s.udp_mask);
            ip += v & s.ip_mask;
        }
        put(self.layout.field, &field.to_be_bytes());
        if self.ip_csum_off != 0 {
            put(self.ip_csum_off, &(!checksum::fold(ip)).to_be_bytes());
        }
        let c = checksum::udp_nonzero(!checksum::fold64(udp));
        put(self.layout.udp_checksum, &c.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use xlat_wire::checksum::{self, fold64};

    /// What `patch` relies on: the template's sums, in 16- and 32-bit pieces, fold as words do.
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
}
