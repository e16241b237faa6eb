//! A direction's frames from or to a side of many MAP CEs ([`SideMap`]): per frame a
//! pseudorandom subscriber and a pseudorandom port of its set (RFC 4814), and the 16-bit words
//! of the frame they set (addresses and port), each a slot of the foreground template after the
//! direction's own varying fields (see `Template::build`).
//!
//! Only the words that differ between the subscribers are slots; the others are the template's,
//! written from subscriber 0. The subscribers' words are computed once (a table of N rows, the
//! port's word holding the PSID's bits), so that a frame's are copied, and its port's index
//! bits ORed in.

use crate::maprule::{Ce, PortSplit};
use crate::plan::{field_id, StreamError};
use crate::rng::Stream;
use crate::setup::{Direction, IpVersion, Setup, SideId, SideMap, MAX_SUBSCRIBERS};
use crate::vary::{FieldGen, Variation};

/// A frame word a subscriber sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Word {
    /// Word `k` (0-1) of the subscriber's IPv4 address: the frame's (inner) source, or its
    /// destination.
    Ipv4(usize),
    /// Word `k` (0-7) of its IPv6 address: the outer source of a tunnel side's frame, or the
    /// source of an IPv6 frame (MAP-T).
    Ipv6(usize),
    /// Its port: the source port, or the destination port.
    Port,
}

/// The subscribers of one direction's foreground frames.
#[derive(Debug, Clone)]
pub(crate) struct Subscribers {
    /// Subscriber 0's IPv4 address, PSID and IPv6 address (the template's fixed words).
    first: (u32, u16, u128),
    /// Per subscriber its [`Subscribers::words`], a row each; the port's holds the PSID's bits.
    rows: Vec<u16>,
    split: PortSplit,
    pick: FieldGen,
    port: FieldGen,
    /// True when the side sends (its subscribers are the frames' sources).
    pub(crate) source: bool,
    /// The words that differ between subscribers, in slot order.
    pub(crate) words: Vec<Word>,
}

/// The most words a subscriber sets: two of IPv4, eight of IPv6, the port.
pub(crate) const MAX_WORDS: usize = 11;

impl Subscribers {
    /// The subscribers of direction `d`'s frames: of its sending side (sources) or of its
    /// receiving side (destinations); `None` when neither has a map.
    pub(crate) fn new(setup: &Setup, d: Direction, seed: u64) -> Result<Option<Subscribers>, StreamError> {
        let (snd, rcv) = (d.sender(), d.receiver());
        let (id, map, source) = match (setup.side(snd).map, setup.side(rcv).map) {
            (None, None) => return Ok(None),
            (Some(_), Some(_)) => {
                return Err(StreamError::Invalid(
                    "left.map and right.map: only one side can be the MAP CEs (the other is the IPv4 side)".into(),
                ))
            }
            (Some(m), None) => (snd, m, true),
            (None, Some(m)) => (rcv, m, false),
        };
        let key = |k: &str| format!("{}.map.{k}", side_name(id));
        let side = setup.side(id);
        if setup.stateful.mode != crate::setup::Stateful::Off {
            return Err(StreamError::Invalid(format!(
                "{}: a stateful test with many MAP CEs is not built",
                key("subscribers")
            )));
        }
        // The side's own CE: of its tunnel's local end, or of its IPv6 address; lw4o6's: its
        // IPv4 address with its binding's PSID.
        let name = side_name(id);
        let (own, what) = match (map.binding_psid, side.tunnel, side.ip_version) {
            (Some(_), None, _) => {
                return Err(StreamError::Invalid(format!(
                    "{}: lw4o6's lwB4s need {name}.tunnel (their addresses count up from its local end)",
                    key("binding_psid")
                )))
            }
            (Some(psid), Some(_), _) => {
                let ipv4 = side
                    .ipv4_real
                    .ok_or_else(|| StreamError::Invalid(format!("{}: lw4o6's lwB4s need {name}.ipv4_real", key("binding_psid"))))?;
                let ce = Ce { ipv4, psid };
                let n = map.rule.index(ce).ok_or_else(|| {
                    StreamError::Invalid(format!(
                        "{name}.ipv4_real {ipv4} with {} {psid} is no CE of {name}.map's rule",
                        key("binding_psid")
                    ))
                })?;
                (Ok(n), "")
            }
            (None, Some(t), _) => (Err(Some(t.local)), "tunnel.local"),
            (None, None, IpVersion::V6) => (Err(side.ipv6_real), "ipv6_real"),
            (None, None, IpVersion::V4) => (Err(None), "tunnel"),
        };
        let first = match own {
            Ok(n) => n,
            Err(None) => {
                return Err(StreamError::Invalid(format!(
                    "{}: the CEs need the side's IPv6 address ({name}.tunnel.local for MAP-E, {name}.ipv6_real for MAP-T)",
                    key("subscribers")
                )))
            }
            Err(Some(a)) => map.rule.ce_of(a).and_then(|ce| map.rule.index(ce)).ok_or_else(|| {
                StreamError::Invalid(format!(
                    "{name}.{what} {a} is no CE address of {name}.map's rule (RFC 7597 section 6)"
                ))
            })?,
        };
        check(&map, &key)?;
        // The CEs choose the coupled fields: nothing else may vary them.
        let dir = if d == Direction::Forward { "forward" } else { "reverse" };
        let (port, port_name) = if source {
            (setup.ports(d).sport, "sport")
        } else {
            (setup.ports(d).dport, "dport")
        };
        let taken = |what: String| {
            StreamError::Invalid(format!(
                "{what}: {} chooses it (each frame's CE and a port of its set); leave it fixed",
                key("subscribers")
            ))
        };
        if !port.variation.is_fixed() {
            return Err(taken(format!("traffic.{dir}_ports.{port_name}.variation")));
        }
        if !side.ip_var.variation.is_fixed() {
            return Err(taken(format!("{name}.ip_variation.variation")));
        }
        if !source && side.num_nets > 1 {
            return Err(taken(format!("{name}.num_nets")));
        }
        // The other side must send IPv4 to the CEs (their IPv4 addresses are the destinations).
        if !source && setup.side(snd).ip_version != IpVersion::V4 {
            return Err(StreamError::Invalid(format!(
                "{}: frames to the MAP CEs are IPv4; {}.ip_version must be 4",
                key("subscribers"),
                side_name(snd)
            )));
        }
        let ces = map.rule.ces();
        // lw4o6's lwB4s count up from the tunnel's local end; MAP's CE addresses are the rule's.
        let b4 = side.tunnel.filter(|_| map.binding_psid.is_some()).map(|t| u128::from(t.local));
        let table: Vec<(u32, u16, u128)> = (0..u64::from(map.subscribers))
            .filter_map(|k| Some((k, map.rule.ce((first + k) % ces)?)))
            .map(|(k, ce): (u64, Ce)| {
                let v6 = match b4 {
                    Some(b) => b.wrapping_add(u128::from(k)),
                    None => map.rule.ce_address(ce).map_or(0, u128::from),
                };
                (u32::from(ce.ipv4), ce.psid, v6)
            })
            .collect();
        let Some(&zero) = table.first() else {
            return Err(StreamError::Invalid(format!("{} is 0", key("subscribers"))));
        };
        let (v4_0, _, v6_0) = zero;
        let v4_differs = |k: usize| {
            table
                .iter()
                .any(|e| (e.0 >> (16 * (1 - k))) as u16 != (v4_0 >> (16 * (1 - k))) as u16)
        };
        let v6_differs = |k: usize| {
            table
                .iter()
                .any(|e| (e.2 >> (16 * (7 - k))) as u16 != (v6_0 >> (16 * (7 - k))) as u16)
        };
        // The frame's words: a tunnel side's frames carry both addresses, an IPv6 side's only
        // its IPv6 one, frames to the side only its IPv4 one.
        let (with_v4, with_v6) = match (source, side.tunnel.is_some(), side.ip_version) {
            (false, _, _) => (true, false),
            (true, true, _) => (true, true),
            (true, false, IpVersion::V6) => (false, true),
            (true, false, IpVersion::V4) => (true, false),
        };
        let mut words: Vec<Word> = Vec::with_capacity(MAX_WORDS);
        if with_v4 {
            words.extend((0..2).filter(|&k| v4_differs(k)).map(Word::Ipv4));
        }
        if with_v6 {
            words.extend((0..8).filter(|&k| v6_differs(k)).map(Word::Ipv6));
        }
        words.push(Word::Port);
        let split = map.rule.port_split();
        let rows: Vec<u16> = table
            .iter()
            .flat_map(|&(v4, psid, v6)| {
                words.iter().map(move |w| match *w {
                    Word::Ipv4(k) => (v4 >> (16 * (1 - k))) as u16,
                    Word::Ipv6(k) => (v6 >> (16 * (7 - k))) as u16,
                    Word::Port => split.psid_bits(psid),
                })
            })
            .collect();
        let ports = map.ports.unwrap_or(map.rule.ports_per_set());
        let fam = d as u64;
        let gen = |max: u32, field: u64| {
            FieldGen::new(
                Variation::Pseudorandom,
                0,
                max.saturating_sub(1).min(0xffff) as u16,
                Stream::derive(seed, fam, field),
            )
        };
        Ok(Some(Subscribers {
            pick: gen(table.len() as u32, field_id::SUBSCRIBER),
            port: gen(ports, field_id::SUBSCRIBER_PORT),
            first: zero,
            rows,
            split,
            source,
            words,
        }))
    }

    /// Subscriber 0's IPv4 address, PSID and IPv6 address (the template's fixed words).
    pub(crate) fn first(&self) -> (u32, u16, u128) {
        self.first
    }

    /// The slot values of frame `seq`: its subscriber's words (see [`Subscribers::words`]).
    #[inline]
    pub(crate) fn values(&self, seq: u64, out: &mut [u16; MAX_WORDS]) {
        self.write(self.pick.value(seq), self.port.value(seq), out);
    }

    /// The words of subscriber `s` at port `i` of its set (the port last, as `words` has it).
    #[inline(always)]
    fn write(&self, s: u16, i: u16, out: &mut [u16; MAX_WORDS]) {
        let nw = self.words.len();
        let at = usize::from(s) * nw;
        if let (Some(row), Some(o)) = (self.rows.get(at..at + nw), out.get_mut(..nw)) {
            o.copy_from_slice(row);
            o[nw - 1] |= self.split.index_bits(u32::from(i));
        }
    }

    /// Frames `seq0 .. seq0 + n`: their words into `rows` (a row of `n` per word), with
    /// `picks` as room for the subscribers and ports chosen.
    pub(crate) fn fill(&self, seq0: u64, n: usize, picks: &mut Vec<u16>, rows: &mut [u16]) {
        if picks.len() < 2 * n {
            picks.resize(2 * n, 0);
        }
        let (s, p) = picks.split_at_mut(n);
        self.pick.fill(seq0, s);
        self.port.fill(seq0, &mut p[..n]);
        let nw = self.words.len();
        if rows.len() < nw * n {
            return;
        }
        // Word by word: a row of the output per word, read from each frame's subscriber's row.
        for (k, out) in rows.chunks_exact_mut(n).take(nw).enumerate() {
            for (o, &sub) in out.iter_mut().zip(s.iter()) {
                *o = self.rows.get(usize::from(sub) * nw + k).copied().unwrap_or(0);
            }
        }
        if let Some(out) = rows.get_mut((nw - 1) * n..nw * n) {
            for (o, &i) in out.iter_mut().zip(p.iter()) {
                *o |= self.split.index_bits(u32::from(i));
            }
        }
    }
}

fn side_name(id: SideId) -> &'static str {
    match id {
        SideId::Left => "left",
        SideId::Right => "right",
    }
}

/// The map's own figures: subscribers within the rule and the frame's field, ports within a set.
fn check(map: &SideMap, key: &dyn Fn(&str) -> String) -> Result<(), StreamError> {
    let ces = map.rule.ces();
    if map.subscribers == 0 || u64::from(map.subscribers) > ces || map.subscribers > MAX_SUBSCRIBERS {
        return Err(StreamError::Invalid(format!(
            "{} {} is outside 1-{}: the rule gives {ces} CEs{}",
            key("subscribers"),
            map.subscribers,
            ces.min(u64::from(MAX_SUBSCRIBERS)),
            if ces > u64::from(MAX_SUBSCRIBERS) {
                format!(" and a side has at most {MAX_SUBSCRIBERS}")
            } else {
                String::new()
            }
        )));
    }
    let set = map.rule.ports_per_set();
    if let Some(p) = map.ports {
        if p == 0 || p > set {
            return Err(StreamError::Invalid(format!(
                "{} {p} is outside 1-{set}: a PSID of {} bits at offset {} leaves {set} ports in each set",
                key("ports"),
                map.rule.psid_len(),
                map.rule.psid_offset()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "subscribers_tests.rs"]
mod tests;
