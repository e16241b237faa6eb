//! A minimal packet-socket tester for the lab tests: send a UDP frame into the DUT on one
//! tester port, answer the DUT's ARP and NDP on the other, and see the frame come out.
//! Independent of xlatperf's own io/wire crates on purpose.

#![allow(dead_code)]

use std::ffi::CString;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

pub const MARK: &[u8; 8] = b"IDENTIFY";

/// An AF_PACKET socket bound to one interface of a namespace.
pub struct PacketSocket {
    fd: OwnedFd,
    pub mac: [u8; 6],
}

fn os_err(what: &str) -> std::io::Error {
    let e = std::io::Error::last_os_error();
    std::io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// The MAC address of `iface` in namespace `ns`.
pub fn mac_of(ns: &str, iface: &str) -> [u8; 6] {
    let out = std::process::Command::new("ip")
        .args(["-n", ns, "-j", "link", "show", "dev", iface])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = v[0]["address"].as_str().unwrap();
    let mut mac = [0u8; 6];
    for (i, part) in text.split(':').enumerate() {
        mac[i] = u8::from_str_radix(part, 16).unwrap();
    }
    mac
}

impl PacketSocket {
    /// Open a packet socket on `iface` inside namespace `ns`.
    pub fn open(ns: &str, iface: &str) -> PacketSocket {
        let mac = mac_of(ns, iface);
        let ns_path = format!("/run/netns/{ns}");
        let name = CString::new(iface).unwrap();
        let fd = std::thread::spawn(move || -> std::io::Result<OwnedFd> {
            let nsf = std::fs::File::open(&ns_path)?;
            // SAFETY: setns(2) on a valid namespace fd; only this short-lived thread moves.
            if unsafe { libc::setns(nsf.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                return Err(os_err("setns"));
            }
            let proto = (libc::ETH_P_ALL as u16).to_be();
            // SAFETY: socket(2) with constant arguments.
            let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, i32::from(proto)) };
            if raw < 0 {
                return Err(os_err("socket"));
            }
            // SAFETY: `raw` is a fresh descriptor nobody else owns.
            let fd = unsafe { OwnedFd::from_raw_fd(raw) };
            // SAFETY: `name` is a valid NUL-terminated string.
            let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
            if ifindex == 0 {
                return Err(os_err("if_nametoindex"));
            }
            // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
            let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            sll.sll_family = libc::AF_PACKET as u16;
            sll.sll_protocol = proto;
            sll.sll_ifindex = ifindex as i32;
            let len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            // SAFETY: `sll` is a valid sockaddr_ll of `len` bytes.
            if unsafe { libc::bind(fd.as_raw_fd(), (&sll as *const libc::sockaddr_ll).cast(), len) } != 0 {
                return Err(os_err("bind"));
            }
            let tv = libc::timeval {
                tv_sec: 0,
                tv_usec: 20_000,
            };
            let tlen = std::mem::size_of::<libc::timeval>() as libc::socklen_t;
            // SAFETY: `tv` is a valid timeval of `tlen` bytes.
            if unsafe {
                libc::setsockopt(
                    fd.as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_RCVTIMEO,
                    (&tv as *const libc::timeval).cast(),
                    tlen,
                )
            } != 0
            {
                return Err(os_err("setsockopt"));
            }
            Ok(fd)
        })
        .join()
        .unwrap()
        .unwrap();
        PacketSocket { fd, mac }
    }

    pub fn send(&self, frame: &[u8]) {
        // SAFETY: the buffer is valid for `frame.len()` bytes; the socket is bound.
        let n = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
        assert_eq!(n, frame.len() as isize, "send: {}", std::io::Error::last_os_error());
    }

    /// The next frame received (not sent) on the port before `deadline`.
    pub fn recv(&self, deadline: Instant) -> Option<Vec<u8>> {
        let mut buf = vec![0u8; 2048];
        while Instant::now() < deadline {
            // SAFETY: plain old data, all-zero is valid.
            let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            // SAFETY: `buf` and `sll` are valid for the sizes given.
            let n = unsafe {
                libc::recvfrom(
                    self.fd.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    0,
                    (&mut sll as *mut libc::sockaddr_ll).cast(),
                    &mut len,
                )
            };
            if n <= 0 || i32::from(sll.sll_pkttype) == i32::from(libc::PACKET_OUTGOING) {
                continue;
            }
            return Some(buf[..n as usize].to_vec());
        }
        None
    }

    /// Discard what is queued.
    pub fn drain(&self) {
        while self.recv(Instant::now() + Duration::from_millis(5)).is_some() {}
    }
}

fn checksum(chunks: &[&[u8]]) -> u16 {
    let mut sum: u32 = 0;
    for c in chunks {
        let mut i = 0;
        while i + 1 < c.len() {
            sum += u32::from(u16::from_be_bytes([c[i], c[i + 1]]));
            i += 2;
        }
        if c.len() % 2 == 1 {
            sum += u32::from(c[c.len() - 1]) << 8;
        }
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

fn eth(dst: [u8; 6], src: [u8; 6], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(14 + payload.len());
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

fn udp(sport: u16, dport: u16, payload: &[u8], pseudo: &[u8]) -> Vec<u8> {
    let len = (8 + payload.len()) as u16;
    let mut u = Vec::with_capacity(len as usize);
    u.extend_from_slice(&sport.to_be_bytes());
    u.extend_from_slice(&dport.to_be_bytes());
    u.extend_from_slice(&len.to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(payload);
    let mut c = checksum(&[pseudo, &u]);
    if c == 0 {
        c = 0xffff;
    }
    u[6..8].copy_from_slice(&c.to_be_bytes());
    u
}

fn payload(seq: u64) -> Vec<u8> {
    let mut p = MARK.to_vec();
    p.extend_from_slice(&seq.to_be_bytes());
    p.resize(26, 0);
    p
}

/// An Ethernet/IPv4/UDP test frame with valid checksums.
pub fn udp4(dst_mac: [u8; 6], src_mac: [u8; 6], src: Ipv4Addr, dst: Ipv4Addr, sport: u16, dport: u16, seq: u64) -> Vec<u8> {
    let data = payload(seq);
    let ulen = (8 + data.len()) as u16;
    let mut pseudo = Vec::new();
    pseudo.extend_from_slice(&src.octets());
    pseudo.extend_from_slice(&dst.octets());
    pseudo.extend_from_slice(&[0, 17]);
    pseudo.extend_from_slice(&ulen.to_be_bytes());
    let u = udp(sport, dport, &data, &pseudo);
    let total = (20 + u.len()) as u16;
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&total.to_be_bytes());
    ip.extend_from_slice(&[0, 1, 0, 0, 64, 17, 0, 0]);
    ip.extend_from_slice(&src.octets());
    ip.extend_from_slice(&dst.octets());
    let c = checksum(&[&ip]);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    ip.extend_from_slice(&u);
    eth(dst_mac, src_mac, 0x0800, &ip)
}

fn ipv6(src: Ipv6Addr, dst: Ipv6Addr, next: u8, hop: u8, l4: &[u8]) -> Vec<u8> {
    let mut ip = vec![0x60, 0, 0, 0];
    ip.extend_from_slice(&(l4.len() as u16).to_be_bytes());
    ip.push(next);
    ip.push(hop);
    ip.extend_from_slice(&src.octets());
    ip.extend_from_slice(&dst.octets());
    ip.extend_from_slice(l4);
    ip
}

fn pseudo6(src: Ipv6Addr, dst: Ipv6Addr, next: u8, len: usize) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    p.extend_from_slice(&(len as u32).to_be_bytes());
    p.extend_from_slice(&[0, 0, 0, next]);
    p
}

/// An Ethernet/IPv6/UDP test frame with a valid checksum.
pub fn udp6(dst_mac: [u8; 6], src_mac: [u8; 6], src: Ipv6Addr, dst: Ipv6Addr, sport: u16, dport: u16, seq: u64) -> Vec<u8> {
    let data = payload(seq);
    let u = udp(sport, dport, &data, &pseudo6(src, dst, 17, 8 + data.len()));
    eth(dst_mac, src_mac, 0x86dd, &ipv6(src, dst, 17, 64, &u))
}

/// The UDP checksum an IPv6 sender computes for test datagram `seq` from `src` to `dst`,
/// before a result of 0 is sent as 0xffff (RFC 8200 8.1): 0 means the datagram carries 0xffff.
pub fn udp6_sum(src: Ipv6Addr, dst: Ipv6Addr, sport: u16, dport: u16, seq: u64) -> u16 {
    let data = payload(seq);
    let mut u = udp(sport, dport, &data, &[]);
    u[6..8].copy_from_slice(&[0, 0]);
    checksum(&[&pseudo6(src, dst, 17, u.len()), &u])
}

/// A received UDP test frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Udp {
    pub dst_mac: [u8; 6],
    pub src: std::net::IpAddr,
    pub dst: std::net::IpAddr,
    pub sport: u16,
    pub dport: u16,
    /// TTL or hop limit.
    pub ttl: u8,
    /// The UDP checksum field as it came.
    pub csum: u16,
    pub seq: u64,
    /// IPv4 in IPv6 (RFC 2473): the outer (source, destination).
    pub tunnel: Option<(Ipv6Addr, Ipv6Addr)>,
}

fn be16(f: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*f.get(at)?, *f.get(at + 1)?]))
}

/// `frame4` (Ethernet + IPv4) in IPv6 from `src` to `dst` (next header 4, RFC 2473), between
/// the same MACs.
pub fn encap6(frame4: &[u8], src: Ipv6Addr, dst: Ipv6Addr) -> Vec<u8> {
    let macs: [u8; 12] = frame4[..12].try_into().unwrap();
    let (dst_mac, src_mac) = (macs[..6].try_into().unwrap(), macs[6..].try_into().unwrap());
    eth(dst_mac, src_mac, 0x86dd, &ipv6(src, dst, 4, 64, &frame4[14..]))
}

/// Do the IPv4 header checksum and the UDP checksum of the IPv4 UDP frame `f` (native, or
/// in IPv6 with next header 4) verify?
pub fn v4_sums_ok(f: &[u8]) -> bool {
    let ip = match (be16(f, 12), f.get(20)) {
        (Some(0x86dd), Some(4)) => &f[54..],
        (Some(0x0800), _) => &f[14..],
        _ => return false,
    };
    let hl = usize::from(ip[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
    if ip.len() < total || total < hl + 8 || ip[9] != 17 {
        return false;
    }
    let udp = &ip[hl..total];
    let mut pseudo = ip[12..20].to_vec();
    pseudo.extend_from_slice(&[0, 17]);
    pseudo.extend_from_slice(&(udp.len() as u16).to_be_bytes());
    checksum(&[&ip[..hl]]) == 0 && (udp[6..8] == [0, 0] || checksum(&[&pseudo, udp]) == 0)
}

/// Parse a UDP test frame (one that carries [`MARK`]), also one in IPv6 (next header 4).
pub fn parse_udp(f: &[u8]) -> Option<Udp> {
    if be16(f, 12)? == 0x86dd && *f.get(20)? == 4 {
        let s: [u8; 16] = f.get(22..38)?.try_into().ok()?;
        let d: [u8; 16] = f.get(38..54)?.try_into().ok()?;
        let inner = [f.get(..12)?, &[8, 0], f.get(54..)?].concat();
        let u = parse_udp(&inner)?;
        return Some(Udp {
            tunnel: Some((s.into(), d.into())),
            ..u
        });
    }
    let dst_mac: [u8; 6] = f.get(0..6)?.try_into().ok()?;
    let (src, dst, ttl, l4) = match be16(f, 12)? {
        0x0800 if *f.get(23)? == 17 => {
            let ihl = usize::from(f.get(14)? & 0x0f) * 4;
            let s: [u8; 4] = f.get(26..30)?.try_into().ok()?;
            let d: [u8; 4] = f.get(30..34)?.try_into().ok()?;
            (Ipv4Addr::from(s).into(), Ipv4Addr::from(d).into(), *f.get(22)?, 14 + ihl)
        }
        0x86dd if *f.get(20)? == 17 => {
            let s: [u8; 16] = f.get(22..38)?.try_into().ok()?;
            let d: [u8; 16] = f.get(38..54)?.try_into().ok()?;
            (Ipv6Addr::from(s).into(), Ipv6Addr::from(d).into(), *f.get(21)?, 54)
        }
        _ => return None,
    };
    if f.get(l4 + 8..l4 + 16)? != MARK {
        return None;
    }
    let seq = u64::from_be_bytes(f.get(l4 + 16..l4 + 24)?.try_into().ok()?);
    Some(Udp {
        dst_mac,
        src,
        dst,
        sport: be16(f, l4)?,
        dport: be16(f, l4 + 2)?,
        ttl,
        csum: be16(f, l4 + 6)?,
        seq,
        tunnel: None,
    })
}

/// If `f` is an ARP request for `ip`, the reply from `mac`.
pub fn arp_reply(f: &[u8], mac: [u8; 6], ip: Ipv4Addr) -> Option<Vec<u8>> {
    if be16(f, 12)? != 0x0806 || be16(f, 20)? != 1 || f.get(38..42)? != ip.octets() {
        return None;
    }
    let sha: [u8; 6] = f.get(22..28)?.try_into().ok()?;
    let spa = f.get(28..32)?;
    let mut arp = vec![0, 1, 8, 0, 6, 4, 0, 2];
    arp.extend_from_slice(&mac);
    arp.extend_from_slice(&ip.octets());
    arp.extend_from_slice(&sha);
    arp.extend_from_slice(spa);
    Some(eth(sha, mac, 0x0806, &arp))
}

/// If `f` is a neighbour solicitation for `ip`, the advertisement from `mac`.
pub fn na_reply(f: &[u8], mac: [u8; 6], ip: Ipv6Addr) -> Option<Vec<u8>> {
    if be16(f, 12)? != 0x86dd || *f.get(20)? != 58 || *f.get(54)? != 135 || f.get(62..78)? != ip.octets() {
        return None;
    }
    let src_mac: [u8; 6] = f.get(6..12)?.try_into().ok()?;
    let ns_src: [u8; 16] = f.get(22..38)?.try_into().ok()?;
    let ns_src = Ipv6Addr::from(ns_src);
    let (dst, flags) = if ns_src.is_unspecified() {
        (Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1), 0x20)
    } else {
        (ns_src, 0x60)
    };
    let mut icmp = vec![136, 0, 0, 0, flags, 0, 0, 0];
    icmp.extend_from_slice(&ip.octets());
    icmp.extend_from_slice(&[2, 1]);
    icmp.extend_from_slice(&mac);
    let c = checksum(&[&pseudo6(ip, dst, 58, icmp.len()), &icmp]);
    icmp[2..4].copy_from_slice(&c.to_be_bytes());
    Some(eth(src_mac, mac, 0x86dd, &ipv6(ip, dst, 58, 255, &icmp)))
}

/// Wait for a UDP test frame on `sock`, answering ARP for `v4` and NDP for `v6` meanwhile.
pub fn expect_udp(sock: &PacketSocket, v4: Option<Ipv4Addr>, v6: Option<Ipv6Addr>, within: Duration) -> Option<Udp> {
    let deadline = Instant::now() + within;
    while let Some(f) = sock.recv(deadline) {
        if let Some(reply) = v4.and_then(|ip| arp_reply(&f, sock.mac, ip)) {
            sock.send(&reply);
        } else if let Some(reply) = v6.and_then(|ip| na_reply(&f, sock.mac, ip)) {
            sock.send(&reply);
        } else if let Some(u) = parse_udp(&f) {
            return Some(u);
        }
    }
    None
}

#[test]
fn own_frames_parse_back() {
    let a = Ipv4Addr::new(198, 18, 0, 2);
    let b = Ipv4Addr::new(198, 19, 0, 2);
    let f = udp4([1; 6], [2; 6], a, b, 1000, 2000, 7);
    assert_eq!(checksum(&[&f[14..34]]), 0);
    let u = parse_udp(&f).unwrap();
    assert_eq!(
        (u.src, u.dst, u.sport, u.dport, u.ttl, u.seq),
        (a.into(), b.into(), 1000, 2000, 64, 7)
    );
    let x: Ipv6Addr = "2001:2::2".parse().unwrap();
    let y: Ipv6Addr = "2001:2:0:8000::2".parse().unwrap();
    let f = udp6([1; 6], [2; 6], x, y, 1, 2, 9);
    assert_eq!(checksum(&[&pseudo6(x, y, 17, f.len() - 54), &f[54..]]), 0);
    assert_eq!(parse_udp(&f).unwrap().seq, 9);
}
