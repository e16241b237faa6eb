//! How fields vary from frame to frame: a [`FieldGen`] gives the value of one 16-bit field (a UDP
//! port, the varying part of an address, a destination network byte) in frame `seq`, and an
//! [`AddrSet`] is the set of addresses one configured address takes, for answering ARP/NDP and
//! announcing the tester's addresses.
//!
//! Every value is a pure function of the frame's sequence number: increasing fields are
//! `min + seq mod span`, decreasing ones `max - seq mod span` (both wrap at the range ends),
//! pseudorandom ones come from the field's own keyed stream (see [`crate::rng`]).

use crate::rng::{FastMod, Lemire, Stream};
use serde::{Deserialize, Serialize};

/// How a field varies from frame to frame (siitperf's 0-3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variation {
    #[default]
    Fixed,
    Increasing,
    Decreasing,
    Pseudorandom,
}

impl Variation {
    /// siitperf's numeric code: 0 fixed, 1 increasing, 2 decreasing, 3 pseudorandom.
    pub fn from_code(c: u64) -> Option<Variation> {
        Some(match c {
            0 => Variation::Fixed,
            1 => Variation::Increasing,
            2 => Variation::Decreasing,
            3 => Variation::Pseudorandom,
            _ => return None,
        })
    }

    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn is_fixed(self) -> bool {
        self == Variation::Fixed
    }
}

/// The values of one varying field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldGen {
    pub variation: Variation,
    pub min: u16,
    pub max: u16,
    pub(crate) modulo: FastMod,
    pub(crate) lemire: Lemire,
    pub(crate) stream: Stream,
}

impl FieldGen {
    /// A field varying over `[min, max]` (`min <= max`), with pseudorandom stream `stream`.
    pub fn new(variation: Variation, min: u16, max: u16, stream: Stream) -> FieldGen {
        let (min, max) = if min <= max { (min, max) } else { (max, min) };
        let span = u64::from(max - min) + 1;
        FieldGen {
            variation,
            min,
            max,
            modulo: FastMod::new(span),
            lemire: Lemire::new(span),
            stream,
        }
    }

    /// The number of values the field takes.
    pub fn span(&self) -> u32 {
        u32::from(self.max - self.min) + 1
    }

    /// The field's values in frames `first ..= first + out.len() - 1`, in one loop: what
    /// [`FieldGen::value`] gives for each.
    pub fn fill(&self, first: u64, out: &mut [u16]) {
        let span = self.span();
        match self.variation {
            Variation::Fixed => out.fill(self.min),
            Variation::Increasing | Variation::Decreasing => {
                let (start, flip) = if self.variation == Variation::Increasing {
                    (self.min, 0u16)
                } else {
                    (self.max, 0xffff)
                };
                let mut r = self.modulo.rem(first) as u32;
                for o in out.iter_mut() {
                    // (r ^ flip) - flip is r or -r.
                    *o = start.wrapping_add(((r as u16) ^ flip).wrapping_sub(flip));
                    r += 1;
                    if r == span {
                        r = 0;
                    }
                }
            }
            Variation::Pseudorandom => self.lemire.fill(self.stream, first, self.min, out),
        }
    }

    /// The field's value in frame `seq`.
    #[inline(always)]
    pub fn value(&self, seq: u64) -> u16 {
        match self.variation {
            Variation::Fixed => self.min,
            Variation::Increasing => self.min + self.modulo.rem(seq) as u16,
            Variation::Decreasing => self.max - self.modulo.rem(seq) as u16,
            Variation::Pseudorandom => self.min + self.lemire.reduce(self.stream.at(seq)) as u16,
        }
    }
}

/// A bit field inside an address: `width` bits (8 or 16) ending `shift` bits above the least
/// significant bit, taking the values `[min, max]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BitRange {
    pub shift: u32,
    pub width: u32,
    pub min: u16,
    pub max: u16,
}

impl BitRange {
    /// The 16 bits at byte `offset` of an address of `bytes` bytes.
    pub fn word_at(bytes: u32, offset: u8, min: u16, max: u16) -> BitRange {
        BitRange {
            shift: (bytes - 2 - u32::from(offset)) * 8,
            width: 16,
            min,
            max,
        }
    }

    /// The 8 bits at byte `octet`.
    pub fn byte_at(bytes: u32, octet: u8, min: u16, max: u16) -> BitRange {
        BitRange {
            shift: (bytes - 1 - u32::from(octet)) * 8,
            width: 8,
            min,
            max,
        }
    }

    #[inline]
    fn mask(&self) -> u128 {
        ((1u128 << self.width) - 1) << self.shift
    }

    #[inline]
    fn get(&self, a: u128) -> u16 {
        ((a >> self.shift) & ((1 << self.width) - 1)) as u16
    }

    fn count(&self) -> u64 {
        if self.min <= self.max {
            u64::from(self.max - self.min) + 1
        } else {
            0
        }
    }
}

/// The addresses one configured address takes: the configured bits outside the varying fields,
/// and each varying field over its range. Addresses are held as `u128` (IPv4 in the low 32 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddrSet {
    /// The address with the varying fields zeroed.
    pub base: u128,
    pub var: Option<BitRange>,
    pub net: Option<BitRange>,
}

impl AddrSet {
    pub fn fixed(a: u128) -> AddrSet {
        AddrSet {
            base: a,
            var: None,
            net: None,
        }
    }

    /// `a` with field `var` (if any) and field `net` (if any) varying.
    pub fn new(a: u128, var: Option<BitRange>, net: Option<BitRange>) -> AddrSet {
        let mask = var.map_or(0, |r| r.mask()) | net.map_or(0, |r| r.mask());
        AddrSet { base: a & !mask, var, net }
    }

    /// O(1): is `a` one of the addresses?
    #[inline]
    pub fn contains(&self, a: u128) -> bool {
        let mask = self.var.map_or(0, |r| r.mask()) | self.net.map_or(0, |r| r.mask());
        let within = |r: Option<BitRange>| match r {
            Some(r) => (r.min..=r.max).contains(&r.get(a)),
            None => true,
        };
        a & !mask == self.base && within(self.var) && within(self.net)
    }

    /// The number of addresses.
    pub fn len(&self) -> u64 {
        self.var.map_or(1, |r| r.count()) * self.net.map_or(1, |r| r.count())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// All addresses, the network field outermost, each field increasing.
    pub fn iter(&self) -> impl Iterator<Item = u128> + '_ {
        let vals = |r: Option<BitRange>| -> (u128, u64, u32) {
            match r {
                Some(r) => (u128::from(r.min), r.count(), r.shift),
                None => (0, 1, 0),
            }
        };
        let (v0, vn, vs) = vals(self.var);
        let (n0, nn, ns) = vals(self.net);
        (0..nn).flat_map(move |i| (0..vn).map(move |j| self.base | ((n0 + u128::from(i)) << ns) | ((v0 + u128::from(j)) << vs)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    #[test]
    fn increasing_and_decreasing_wrap_at_the_range_ends() {
        let s = Stream::derive(1, 0, 0);
        let inc = FieldGen::new(Variation::Increasing, 1024, 1027, s);
        let v: Vec<u16> = (0..9).map(|i| inc.value(i)).collect();
        assert_eq!(v, [1024, 1025, 1026, 1027, 1024, 1025, 1026, 1027, 1024]);
        let dec = FieldGen::new(Variation::Decreasing, 65533, 65535, s);
        let v: Vec<u16> = (0..7).map(|i| dec.value(i)).collect();
        assert_eq!(v, [65535, 65534, 65533, 65535, 65534, 65533, 65535]);
        let full = FieldGen::new(Variation::Increasing, 0, 65535, s);
        assert_eq!(full.value(65535), 65535);
        assert_eq!(full.value(65536), 0);
        let one = FieldGen::new(Variation::Pseudorandom, 7, 7, s);
        assert!((0..1000).all(|i| one.value(i) == 7));
    }

    #[test]
    fn pseudorandom_stays_in_range() {
        let g = FieldGen::new(Variation::Pseudorandom, 1, 49151, Stream::derive(9, 1, 2));
        let (mut lo, mut hi) = (u16::MAX, 0);
        for i in 0..200_000 {
            let v = g.value(i);
            lo = lo.min(v);
            hi = hi.max(v);
        }
        assert!((1..10).contains(&lo) && (49141..=49151).contains(&hi), "{lo} {hi}");
    }

    #[test]
    fn addr_set_membership() {
        let a = u128::from(u32::from(std::net::Ipv4Addr::new(198, 19, 7, 9)));
        let s = AddrSet::new(a, Some(BitRange::word_at(4, 2, 2, 1001)), None);
        assert_eq!(s.len(), 1000);
        let ip = |x: [u8; 4]| u128::from(u32::from_be_bytes(x));
        assert!(s.contains(ip([198, 19, 0, 2])));
        assert!(s.contains(ip([198, 19, 3, 0xe9])));
        assert!(!s.contains(ip([198, 19, 3, 0xea])));
        assert!(!s.contains(ip([198, 19, 0, 1])));
        assert!(!s.contains(ip([198, 18, 0, 2])));
        let all: Vec<u128> = s.iter().collect();
        assert_eq!(all.len(), 1000);
        assert!(all.iter().all(|x| s.contains(*x)));
        assert_eq!(all[0], ip([198, 19, 0, 2]));

        let n = AddrSet::new(a, None, Some(BitRange::byte_at(4, 2, 0, 255)));
        assert_eq!(n.len(), 256);
        assert!(n.contains(ip([198, 19, 200, 9])));
        assert!(!n.contains(ip([198, 19, 200, 8])));
        assert_eq!(n.iter().nth(3), Some(ip([198, 19, 3, 9])));
    }
}
