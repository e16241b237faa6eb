//! Shared helpers of the traffic integration tests: setups per the "Which address is used"
//! table, a pcap + tshark runner, and reading fields back out of frames.

#![allow(dead_code)]

use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;
use std::process::Command;
use xlat_traffic::{IpVersion, PortSpec, Setup, Side, StatefulSpec};
use xlat_wire::MacAddr;

pub const SRC_MAC: MacAddr = MacAddr([0x02, 0x00, 0x00, 0x00, 0x01, 0x01]);
pub const DST_MAC: MacAddr = MacAddr([0x02, 0x00, 0x00, 0x00, 0x02, 0x02]);

pub const L4_REAL: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
pub const L4_VIRT: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 66);
pub const R4_REAL: Ipv4Addr = Ipv4Addr::new(198, 19, 0, 2);
pub const R4_VIRT: Ipv4Addr = Ipv4Addr::new(198, 19, 0, 66);
pub const L6_REAL: Ipv6Addr = Ipv6Addr::new(0x2001, 2, 0, 0, 0, 0, 0, 2);
pub const L6_VIRT: Ipv6Addr = Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0xc612, 0x0042);
pub const R6_REAL: Ipv6Addr = Ipv6Addr::new(0x2001, 2, 0, 0x8000, 0, 0, 0, 2);
pub const R6_VIRT: Ipv6Addr = Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0xc613, 0x0042);

/// The IPv4 frame sizes (with FCS) of RFC 2544 plus 768 and 1280; IPv6 frames are 20 bytes longer.
pub const IPV4_SIZES: [usize; 8] = [64, 128, 256, 512, 768, 1024, 1280, 1518];

/// A setup with every address set (real and virtual, both families, both sides).
pub fn setup(left: IpVersion, right: IpVersion, n: u32, m: u32) -> Setup {
    let side = |v: IpVersion, r4, v4, r6, v6| {
        let mut s = Side::new(v);
        s.ipv4_real = Some(r4);
        s.ipv4_virt = Some(v4);
        s.ipv6_real = Some(r6);
        s.ipv6_virt = Some(v6);
        s
    };
    Setup {
        left: side(left, L4_REAL, L4_VIRT, L6_REAL, L6_VIRT),
        right: side(right, R4_REAL, R4_VIRT, R6_REAL, R6_VIRT),
        forward: true,
        reverse: true,
        forward_ports: PortSpec::default(),
        reverse_ports: PortSpec::default(),
        fg_n: n,
        fg_m: m,
        stateful: StatefulSpec::default(),
        seed: Some(0x5eed),
        allow_foreign_addresses: false,
    }
}

/// An address as tshark prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Addr {
    V4(Ipv4Addr),
    V6(Ipv6Addr),
}

/// The foreground source and destination of a direction, per docs/config.md's table, written
/// out independently of `Setup::foreground_addresses`.
pub fn table_addresses(left: IpVersion, right: IpVersion, forward: bool) -> (Addr, Addr) {
    use IpVersion::*;
    match (left, right, forward) {
        (V6, V4, true) => (Addr::V6(L6_REAL), Addr::V6(R6_VIRT)),
        (V6, V4, false) => (Addr::V4(R4_REAL), Addr::V4(L4_VIRT)),
        (V4, V6, true) => (Addr::V4(L4_REAL), Addr::V4(R4_VIRT)),
        (V4, V6, false) => (Addr::V6(R6_REAL), Addr::V6(L6_VIRT)),
        (V4, V4, true) => (Addr::V4(L4_REAL), Addr::V4(R4_REAL)),
        (V4, V4, false) => (Addr::V4(R4_REAL), Addr::V4(L4_REAL)),
        (V6, V6, true) => (Addr::V6(L6_REAL), Addr::V6(R6_REAL)),
        (V6, V6, false) => (Addr::V6(R6_REAL), Addr::V6(L6_REAL)),
    }
}

/// Background frames: IPv6 real to IPv6 real.
pub fn background_addresses(forward: bool) -> (Addr, Addr) {
    if forward {
        (Addr::V6(L6_REAL), Addr::V6(R6_REAL))
    } else {
        (Addr::V6(R6_REAL), Addr::V6(L6_REAL))
    }
}

/// Write `frames` to a pcap file in the temporary directory and return its path.
pub fn write_pcap(name: &str, frames: &[Vec<u8>]) -> PathBuf {
    let path = std::env::temp_dir().join(format!("xlat-traffic-{}-{name}.pcap", std::process::id()));
    std::fs::write(&path, xlat_wire::pcap::file_of(frames)).expect("write pcap");
    path
}

/// The fields every frame check reads, in this order.
pub const FIELDS: [&str; 17] = [
    "frame.len",
    "eth.src",
    "eth.dst",
    "ip.src",
    "ip.dst",
    "ipv6.src",
    "ipv6.dst",
    "udp.srcport",
    "udp.dstport",
    "ip.checksum.status",
    "udp.checksum.status",
    "_ws.malformed",
    "_ws.expert.severity",
    "_ws.expert.message",
    "udp.payload",
    "ip.len",
    "ipv6.plen",
];

/// tshark's `checksum.status` value for a good checksum (0 bad, 1 good, 2 unverified).
pub const CHECKSUM_GOOD: &str = "1";

/// Run tshark on `frames` (written to a pcap) with checksum validation on, and return the
/// tab-separated `fields` of each frame. Panics (fails the test) when tshark cannot run: CI
/// installs it, and these checks must not pass silently without it.
pub fn tshark(name: &str, frames: &[Vec<u8>], fields: &[&str]) -> Vec<Vec<String>> {
    let path = write_pcap(name, frames);
    let mut cmd = Command::new("tshark");
    cmd.args(["-n", "-r"]).arg(&path);
    cmd.args(["-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE"]);
    // The payload is test data whatever the port: without this, a pseudorandom port such as
    // 49 (TACACS) makes tshark dissect it as that protocol and report it malformed.
    cmd.args(["-d", "udp.port==0-65535,data"]);
    cmd.args(["-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = match cmd.output() {
        Ok(o) => o,
        Err(e) => panic!(
            "tshark cannot be run ({e}): these tests validate frames with Wireshark's dissectors and need it \
             (Debian: apt-get install -y tshark)"
        ),
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tshark failed on {}: {stderr}", path.display());
    let text = String::from_utf8(out.stdout).expect("tshark output is UTF-8");
    let rows: Vec<Vec<String>> = text.lines().map(|l| l.split('\t').map(str::to_string).collect()).collect();
    assert_eq!(
        rows.len(),
        frames.len(),
        "tshark read {} frames of {} ({})",
        rows.len(),
        frames.len(),
        path.display()
    );
    if std::env::var_os("XLAT_KEEP_PCAP").is_some() {
        eprintln!("kept {}", path.display());
    } else {
        let _ = std::fs::remove_file(&path);
    }
    rows
}

/// The rows of `tshark` as maps from field name to value.
pub fn tshark_map(name: &str, frames: &[Vec<u8>], fields: &[&str]) -> Vec<std::collections::HashMap<String, String>> {
    tshark(name, frames, fields)
        .into_iter()
        .map(|r| {
            fields
                .iter()
                .map(|f| f.to_string())
                .zip(r.into_iter().chain(std::iter::repeat(String::new())))
                .collect()
        })
        .collect()
}

// ---- Variation: setting it up and checking frames against an independent model ----

use xlat_traffic::{Direction, PortField, SideId, Variation};
use xlat_wire::frame::{IpPair, TestFrame};

pub fn set_ports(s: &mut Setup, d: Direction, sport: (Variation, u16, u16), dport: (Variation, u16, u16)) {
    let p = match d {
        Direction::Forward => &mut s.forward_ports,
        Direction::Reverse => &mut s.reverse_ports,
    };
    p.sport = PortField {
        variation: sport.0,
        min: sport.1,
        max: sport.2,
    };
    p.dport = PortField {
        variation: dport.0,
        min: dport.1,
        max: dport.2,
    };
}

pub fn set_ip_var(s: &mut Setup, id: SideId, v: Variation, min: u16, max: u16, ipv6_offset: u8) {
    let iv = &mut s.side_mut(id).ip_var;
    iv.variation = v;
    iv.min = min;
    iv.max = max;
    iv.ipv4_offset = 2;
    iv.ipv6_offset = ipv6_offset;
}

/// What a frame carries, read back from its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded {
    pub fg: bool,
    pub src: Addr,
    pub dst: Addr,
    pub sport: u16,
    pub dport: u16,
    /// The varying 16 bits of the source and destination, the network byte (when they vary).
    pub src_var: Option<u16>,
    pub dst_var: Option<u16>,
    pub net: Option<u8>,
}

fn addr_bytes(a: Addr) -> Vec<u8> {
    match a {
        Addr::V4(x) => x.octets().to_vec(),
        Addr::V6(x) => x.octets().to_vec(),
    }
}

fn addr_from(v6: bool, b: &[u8]) -> Addr {
    if v6 {
        Addr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(b).unwrap()))
    } else {
        Addr::V4(Ipv4Addr::from(<[u8; 4]>::try_from(b).unwrap()))
    }
}

/// Check field `got` of frame `seq` against its variation over `[min, max]`: in range, and for
/// increasing/decreasing exactly `min + seq mod span` / `max - seq mod span`.
fn check_value(what: &str, v: Variation, min: u16, max: u16, seq: u64, got: u16) {
    let span = u64::from(max - min) + 1;
    assert!((min..=max).contains(&got), "{what}: {got} outside [{min}, {max}] in frame {seq:#x}");
    match v {
        Variation::Increasing => assert_eq!(u64::from(got), u64::from(min) + seq % span, "{what}, frame {seq:#x}"),
        Variation::Decreasing => assert_eq!(u64::from(got), u64::from(max) - seq % span, "{what}, frame {seq:#x}"),
        _ => {}
    }
}

/// Check `frame` (frame `seq` of direction `d`) against a model written from the specification:
/// every varying field within its range (and increasing/decreasing ones exactly where they must
/// be), and the whole frame byte-equal to one built from scratch with those field values and the
/// configured addresses everywhere else. So no other bit changed and both checksums are right.
pub fn check_frame(s: &Setup, d: Direction, ipv6_size: usize, seq: u64, frame: &[u8], src_mac: MacAddr, dst_mac: MacAddr) -> Decoded {
    let fg = seq % u64::from(s.fg_n) < u64::from(s.fg_m);
    let (src0, dst0) = if fg {
        table_addresses(s.left.ip_version, s.right.ip_version, d == Direction::Forward)
    } else {
        background_addresses(d == Direction::Forward)
    };
    let v6 = matches!(src0, Addr::V6(_));
    let ip = 14;
    let l4 = ip + if v6 { 40 } else { 20 };
    let (so, dof) = if v6 { (ip + 8, ip + 24) } else { (ip + 12, ip + 16) };
    let alen = if v6 { 16 } else { 4 };
    let be16 = |o: usize| u16::from_be_bytes([frame[o], frame[o + 1]]);

    let ps = s.ports(d);
    let port = |f: &PortField, fixed: u16, got: u16, what: &str| {
        if f.variation.is_fixed() {
            assert_eq!(got, fixed, "{what} fixed, frame {seq:#x}");
        } else {
            check_value(what, f.variation, f.min, f.max, seq, got);
        }
    };
    let (sport, dport) = (be16(l4), be16(l4 + 2));
    port(&ps.sport, 0xc020, sport, "source port");
    port(&ps.dport, 7, dport, "destination port");

    let mut src = addr_bytes(src0);
    let mut dst = addr_bytes(dst0);
    let var = |id: SideId, a: &mut Vec<u8>, base: usize, what: &str| -> Option<u16> {
        let iv = s.side(id).ip_var;
        if iv.variation.is_fixed() {
            return None;
        }
        let o = usize::from(if v6 { iv.ipv6_offset } else { iv.ipv4_offset });
        let w = be16(base + o);
        check_value(what, iv.variation, iv.min, iv.max, seq, w);
        a[o..o + 2].copy_from_slice(&w.to_be_bytes());
        Some(w)
    };
    let src_var = var(d.sender(), &mut src, so, "source address");
    let dst_var = var(d.receiver(), &mut dst, dof, "destination address");
    let nets = s.side(d.receiver()).num_nets;
    let net = (nets > 1).then(|| {
        let o = if v6 { 7 } else { 2 };
        let b = frame[dof + o];
        assert!(u16::from(b) < nets, "network {b} of {nets}, frame {seq:#x}");
        dst[o] = b;
        b
    });
    assert_eq!(src.len(), alen);
    let (src, dst) = (addr_from(v6, &src), addr_from(v6, &dst));
    let ipp = match (src, dst) {
        (Addr::V4(a), Addr::V4(b)) => IpPair::V4 { src: a, dst: b },
        (Addr::V6(a), Addr::V6(b)) => IpPair::V6 { src: a, dst: b },
        _ => unreachable!(),
    };
    let frame_size = if v6 { ipv6_size } else { ipv6_size - 20 };
    let model = TestFrame {
        eth_dst: dst_mac,
        eth_src: src_mac,
        ip: ipp,
        sport,
        dport,
        frame_size,
        field: seq,
        tunnel: None,
    };
    let mut want = vec![0u8; model.len()];
    model.write(&mut want).unwrap();
    if frame != want.as_slice() {
        let diff: Vec<usize> = (0..want.len().max(frame.len())).filter(|i| frame.get(*i) != want.get(*i)).collect();
        panic!("frame {seq:#x} of {d} differs from the model at bytes {diff:?}");
    }
    Decoded {
        fg,
        src,
        dst,
        sport,
        dport,
        src_var,
        dst_var,
        net,
    }
}

/// The chi-square critical value for `k` degrees of freedom at the upper-tail standard normal
/// quantile `z` (3.0902 for p = 0.001), by the Wilson-Hilferty approximation.
pub fn chi2_critical(k: f64, z: f64) -> f64 {
    let a = 2.0 / (9.0 * k);
    k * (1.0 - a + z * a.sqrt()).powi(3)
}

pub const Z_0_001: f64 = 3.090_232;

/// Chi-square statistic of `values` (all within `[min, max]`) against the uniform distribution,
/// in at most `max_bins` bins of (nearly) equal width; returns (statistic, degrees of freedom).
pub fn chi2_uniform(values: &[u16], min: u16, max: u16, max_bins: usize) -> (f64, f64) {
    let span = usize::from(max - min) + 1;
    let bins = span.min(max_bins);
    let bin = |v: u16| usize::from(v - min) * bins / span;
    let mut width = vec![0u64; bins];
    for v in 0..span {
        width[v * bins / span] += 1;
    }
    let mut count = vec![0u64; bins];
    for &v in values {
        assert!((min..=max).contains(&v));
        count[bin(v)] += 1;
    }
    let n = values.len() as f64;
    let stat = count.iter().zip(&width).map(|(&c, &w)| {
        let e = n * w as f64 / span as f64;
        (c as f64 - e).powi(2) / e
    });
    (stat.sum(), (bins - 1) as f64)
}

// ---- The variation modes that the variation and tshark tests share ----

use Variation::{Decreasing as Dec, Fixed, Increasing as Inc, Pseudorandom as Rnd};

pub const SPORT: (u16, u16) = (1024, 65535);
pub const DPORT: (u16, u16) = (1, 49151);

/// A named way of varying fields, applied to a setup.
pub struct Mode {
    pub name: &'static str,
    pub apply: fn(&mut Setup),
}

pub fn modes() -> Vec<Mode> {
    vec![
        Mode {
            name: "fixed",
            apply: |_| {},
        },
        Mode {
            name: "ports increasing",
            apply: |s| {
                for d in Direction::BOTH {
                    set_ports(s, d, (Inc, SPORT.0, SPORT.1), (Inc, DPORT.0, DPORT.1));
                }
            },
        },
        Mode {
            name: "ports decreasing",
            apply: |s| {
                for d in Direction::BOTH {
                    set_ports(s, d, (Dec, SPORT.0, SPORT.1), (Dec, 1000, 1009));
                }
            },
        },
        Mode {
            name: "ports pseudorandom (RFC 4814)",
            apply: |s| {
                for d in Direction::BOTH {
                    set_ports(s, d, (Rnd, SPORT.0, SPORT.1), (Rnd, DPORT.0, DPORT.1));
                }
            },
        },
        Mode {
            name: "forward source port only",
            apply: |s| set_ports(s, Direction::Forward, (Rnd, 0, 65535), (Fixed, 1, 1)),
        },
        Mode {
            name: "ips pseudorandom, offsets 12/14",
            apply: |s| {
                set_ip_var(s, SideId::Left, Rnd, 0, 65535, 12);
                set_ip_var(s, SideId::Right, Rnd, 0, 65535, 14);
            },
        },
        Mode {
            name: "ips increasing/decreasing, offsets 6/10",
            apply: |s| {
                set_ip_var(s, SideId::Left, Inc, 2, 1001, 6);
                set_ip_var(s, SideId::Right, Dec, 0, 999, 10);
            },
        },
        Mode {
            name: "ips left only, offset 8",
            apply: |s| set_ip_var(s, SideId::Left, Rnd, 2, 65534, 8),
        },
        Mode {
            name: "256 networks both sides",
            apply: |s| {
                s.left.num_nets = 256;
                s.right.num_nets = 256;
            },
        },
        Mode {
            name: "10 right networks, left ips",
            apply: |s| {
                s.right.num_nets = 10;
                set_ip_var(s, SideId::Left, Rnd, 100, 200, 14);
            },
        },
        Mode {
            name: "ports and ips pseudorandom",
            apply: |s| {
                for d in Direction::BOTH {
                    set_ports(s, d, (Rnd, SPORT.0, SPORT.1), (Rnd, DPORT.0, DPORT.1));
                }
                set_ip_var(s, SideId::Left, Rnd, 0, 65535, 8);
                set_ip_var(s, SideId::Right, Rnd, 2, 65534, 12);
            },
        },
    ]
}

pub const COMBOS: [(IpVersion, IpVersion); 4] = [
    (IpVersion::V6, IpVersion::V4),
    (IpVersion::V4, IpVersion::V6),
    (IpVersion::V4, IpVersion::V4),
    (IpVersion::V6, IpVersion::V6),
];
pub const MIXES: [(u32, u32); 3] = [(2, 2), (10, 9), (2, 0)];

/// Sequence numbers around every range end used above, and with high (tag) bits set.
pub fn seqs() -> Vec<u64> {
    let mut v: Vec<u64> = (0..300).collect();
    for end in [10u64, 101, 1000, 49151, 64512, 65535, 65536] {
        v.extend(end.saturating_sub(3)..end + 3);
    }
    v.extend([1 << 32, (1 << 56) | 5, u64::MAX - 1, u64::MAX]);
    v
}
