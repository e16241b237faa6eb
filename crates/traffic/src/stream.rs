//! The frames of one direction: [`DirectionStream`] builds the templates (foreground and
//! background, module `template`) from the checked plan of what varies (module `plan`),
//! chooses per sequence number which one a frame is, and writes a frame or a burst of frames
//! ([`Burst`]).
//!
//! Every value is a pure function of the frame's sequence number and the seed, so `write_frame`
//! takes `&self`, a frame written twice is identical, and a seed reproduces a run exactly.

use crate::burst::{Burst, BurstScratch};
use crate::plan::{Plan, StreamError};
use crate::rng::FastMod;
use crate::setup::{AddrPair, Direction, Setup};
use crate::template::Template;
use crate::vary::FieldGen;
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
            n: FastMod::new(n),
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
    use crate::vary::Variation;
    use xlat_wire::frame::{IpPair, TestFrame};
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
    fn missing_address_is_named() {
        let mut s = router_setup(IpVersion::V6);
        s.right.ipv6_real = None;
        let e = DirectionStream::new(&s, Direction::Forward, 84, MacAddr::ZERO, MacAddr::ZERO).unwrap_err();
        assert_eq!(e.to_string(), "IPv6-R-Real is needed but not set");
    }
}
