//! The rules that a typed configuration must follow: the ranges that depend on more than one
//! key, the siitperf cross-key rules (docs/config.md, "Rules between keys"; each its own error), the addresses the
//! chosen IP versions need, and the benchmarking address ranges.

use crate::doc::{key_name, Doc};
use crate::error::{ConfigError, Loc};
use crate::model::{
    foreground_frames, Backend, Preliminary, SourceKind, StatefulTrial, TestConfig, DEFAULT_PRELIMINARY_TIMEOUT_MS, MAX_DURATION_S,
    MAX_PHASE_DELAY_MS, MAX_PRELIMINARY_RATE, MAX_PRELIMINARY_TIMEOUT_MS,
};
use std::net::{Ipv4Addr, Ipv6Addr};
use xlat_traffic::setup::{NET_OCTET_V4, NET_OCTET_V6};
use xlat_traffic::{
    is_benchmarking_v4, is_benchmarking_v6, AddrPair, Direction, IpVarSpec, IpVersion, Setup, Side, SideId, Stateful, Variation,
};

/// How keys are named and located in messages.
pub(crate) struct Names<'a> {
    pub kind: SourceKind,
    pub file: &'a str,
    pub doc: Option<&'a Doc>,
}

impl<'a> Names<'a> {
    /// The names of a configuration's own source, without line numbers: for checking it again
    /// after a program changed it (the values may come from a command line).
    pub fn of(cfg: &'a TestConfig) -> Self {
        Names {
            kind: cfg.source.kind,
            file: &cfg.source.file,
            doc: None,
        }
    }

    pub fn name(&self, path: &str) -> String {
        key_name(self.kind, path)
    }

    pub fn loc(&self, path: &str) -> Loc {
        match self.doc {
            Some(d) => d.loc(path),
            None => Loc::File {
                file: self.file.to_string(),
            },
        }
    }

    /// The location of the first of `paths` that was given explicitly, else of the first.
    fn loc_of(&self, paths: &[&str]) -> Loc {
        if let Some(d) = self.doc {
            if let Some(p) = paths.iter().find(|p| d.is_set(p)) {
                return d.loc(p);
            }
        }
        self.loc(paths.first().copied().unwrap_or(""))
    }

    fn bad(&self, path: &str, value: impl ToString, allowed: impl Into<String>) -> ConfigError {
        ConfigError::BadValue {
            at: self.loc(path),
            key: self.name(path),
            value: value.to_string(),
            allowed: allowed.into(),
        }
    }
}

fn side_path(id: SideId) -> &'static str {
    id.name()
}

fn dir_path(d: Direction) -> &'static str {
    match d {
        Direction::Forward => "forward",
        Direction::Reverse => "reverse",
    }
}

/// The direction a stateful test's Responder sends (its frames take their addresses from the
/// state table, not from the configuration).
fn responder_direction(mode: Stateful) -> Option<Direction> {
    match mode {
        Stateful::Off => None,
        Stateful::InitiatorLeft => Some(Direction::Reverse),
        Stateful::InitiatorRight => Some(Direction::Forward),
    }
}

/// The direction the Initiator sends in phase 1 (and in phase 2 when that direction is on).
fn initiator_direction(mode: Stateful) -> Option<Direction> {
    match mode {
        Stateful::Off => None,
        Stateful::InitiatorLeft => Some(Direction::Forward),
        Stateful::InitiatorRight => Some(Direction::Reverse),
    }
}

/// The directions whose frames the tester sends: the active ones, and in a stateful test the
/// Initiator's even when it is off (phase 1 always runs).
fn sending_directions(s: &Setup) -> Vec<Direction> {
    let initiator = initiator_direction(s.stateful.mode);
    Direction::BOTH
        .into_iter()
        .filter(|d| s.is_active(*d) || Some(*d) == initiator)
        .collect()
}

/// The value of `stateful.mode` as the source writes it.
fn mode_text(kind: SourceKind, mode: Stateful) -> String {
    let (code, name) = match mode {
        Stateful::Off => (0, "off"),
        Stateful::InitiatorLeft => (1, "initiator-left"),
        Stateful::InitiatorRight => (2, "initiator-right"),
    };
    match kind {
        SourceKind::SiitperfConf => code.to_string(),
        SourceKind::Toml => format!("\"{name}\""),
    }
}

/// Check every rule; the first broken one is the error.
pub(crate) fn validate(cfg: &TestConfig, n: &Names<'_>) -> Result<(), ConfigError> {
    let s = &cfg.setup;
    single_keys(cfg, n)?;
    ranges(s, n)?;
    // In a stateful test phase 1 always runs: both directions may be off (phase 2 then sends
    // nothing).
    if !s.forward && !s.reverse && s.stateful.mode == Stateful::Off {
        return Err(ConfigError::NoDirection {
            at: n.loc_of(&["traffic.forward", "traffic.reverse"]),
            forward: n.name("traffic.forward"),
            reverse: n.name("traffic.reverse"),
        });
    }
    if s.fg_m > s.fg_n {
        return Err(ConfigError::ForegroundShare {
            at: n.loc_of(&["traffic.foreground.m", "traffic.foreground.n"]),
            n_key: n.name("traffic.foreground.n"),
            n: s.fg_n,
            m_key: n.name("traffic.foreground.m"),
            m: s.fg_m,
        });
    }
    frame_size(cfg, n)?;
    enumeration_rules(s, n)?;
    preliminary_keys(cfg, n)?;
    addresses(s, n)?;
    foreign_addresses(s, n)?;
    dut_macs(cfg, n)?;
    Ok(())
}

fn single_keys(cfg: &TestConfig, n: &Names<'_>) -> Result<(), ConfigError> {
    let s = &cfg.setup;
    for id in [SideId::Left, SideId::Right] {
        let side = s.side(id);
        let sp = side_path(id);
        let v = &side.ip_var;
        if v.ipv4_offset != 2 {
            return Err(n.bad(
                &format!("{sp}.ip_variation.ipv4_offset"),
                v.ipv4_offset,
                "only 2, the last 16 bits: the varying part must be a 16-bit word of the header for the checksum update, \
                 so offset 1 (bits 8-23) is not supported",
            ));
        }
        if !(6..=14).contains(&v.ipv6_offset) || v.ipv6_offset & 1 != 0 {
            return Err(n.bad(&format!("{sp}.ip_variation.ipv6_offset"), v.ipv6_offset, "6-14, even"));
        }
        if !(1..=256).contains(&side.num_nets) {
            return Err(n.bad(&format!("{sp}.num_nets"), side.num_nets, "1-256"));
        }
    }
    if s.fg_n < 2 {
        return Err(n.bad("traffic.foreground.n", s.fg_n, format!("2-{}", u32::MAX)));
    }
    let t = &cfg.trial;
    if !(t.duration_s.is_finite() && t.duration_s > 0.0 && t.duration_s <= MAX_DURATION_S) {
        return Err(n.bad(
            "trial.duration",
            t.duration_s,
            format!("more than 0 and at most {MAX_DURATION_S} seconds"),
        ));
    }
    if t.rate == Some(0) {
        return Err(n.bad("trial.rate", 0, "1-1000000000 frames per second"));
    }
    if t.timeout_ms > 60_000 {
        return Err(n.bad("trial.timeout_ms", t.timeout_ms, "0-60000"));
    }
    let tc = &cfg.tester;
    if tc.mem_channels == Some(0) {
        return Err(n.bad("tester.mem_channels", 0, format!("1-{}", u32::MAX)));
    }
    for (path, p) in [("tester.left_port", &tc.left_port), ("tester.right_port", &tc.right_port)] {
        if p.trim().is_empty() && tc.backend != Backend::Mem {
            return Err(n.bad(path, "''", "a non-empty port name"));
        }
    }
    Ok(())
}

fn ranges(s: &Setup, n: &Names<'_>) -> Result<(), ConfigError> {
    let check = |base: String, min: u16, max: u16| {
        if min > max {
            let (lo, hi) = (format!("{base}.min"), format!("{base}.max"));
            return Err(ConfigError::RangeInverted {
                at: n.loc_of(&[&hi, &lo]),
                min_key: n.name(&lo),
                min: i64::from(min),
                max_key: n.name(&hi),
                max: i64::from(max),
            });
        }
        Ok(())
    };
    for id in [SideId::Left, SideId::Right] {
        let v = &s.side(id).ip_var;
        check(format!("{}.ip_variation", side_path(id)), v.min, v.max)?;
    }
    for d in Direction::BOTH {
        let p = s.ports(d);
        check(format!("traffic.{}_ports.sport", dir_path(d)), p.sport.min, p.sport.max)?;
        check(format!("traffic.{}_ports.dport", dir_path(d)), p.dport.min, p.dport.max)?;
    }
    Ok(())
}

fn frame_size(cfg: &TestConfig, n: &Names<'_>) -> Result<(), ConfigError> {
    let size = cfg.trial.frame_size;
    crate::model::frame_size_rule(&cfg.setup, size).map_err(|why| n.bad("trial.frame_size", size, why.to_string()))
}

/// The siitperf rules on enumeration, varying addresses and destination networks.
fn enumeration_rules(s: &Setup, n: &Names<'_>) -> Result<(), ConfigError> {
    let st = &s.stateful;
    let (ep, ei) = ("stateful.enumerate_ports", "stateful.enumerate_ips");
    let enum_ports = !st.enumerate_ports.is_fixed();
    let enum_ips = !st.enumerate_ips.is_fixed();
    let var_path = |id: SideId| format!("{}.ip_variation.variation", side_path(id));
    let nets_path = |id: SideId| format!("{}.num_nets", side_path(id));
    // The rules are about the addresses inside the frames: on a tunnel side (a B4) the
    // variation moves the outer source only, and the inner addresses stay fixed.
    let inner_varies = |id: SideId| !s.side(id).ip_var.variation.is_fixed() && s.side(id).tunnel.is_none();
    let varying_side = [SideId::Left, SideId::Right].into_iter().find(|id| inner_varies(*id));
    let fixed_side = [SideId::Left, SideId::Right].into_iter().find(|id| !inner_varies(*id));
    let nets_side = [SideId::Left, SideId::Right].into_iter().find(|id| s.side(*id).num_nets > 1);

    // 1. Enumeration only in a stateful test.
    if st.mode == Stateful::Off {
        if let Some(key) = [(enum_ports, ep), (enum_ips, ei)].into_iter().find_map(|(on, k)| on.then_some(k)) {
            return Err(ConfigError::EnumerationInStatelessTest {
                at: n.loc_of(&[key]),
                key: n.name(key),
                stateful_key: n.name("stateful.mode"),
            });
        }
    }
    // 2. Port enumeration with more than one destination network on the Responder's side.
    let responder = match st.mode {
        Stateful::Off => None,
        Stateful::InitiatorLeft => Some(SideId::Right),
        Stateful::InitiatorRight => Some(SideId::Left),
    };
    if let (true, Some(r)) = (enum_ports, responder) {
        let side = s.side(r);
        if side.num_nets > 1 {
            let np = nets_path(r);
            return Err(ConfigError::PortEnumerationWithNets {
                at: n.loc_of(&[ep, &np]),
                enumerate_key: n.name(ep),
                nets_key: n.name(&np),
                nets: side.num_nets,
            });
        }
    }
    // 3. Varying IP addresses together with more than one destination network.
    if let (Some(v), Some(m)) = (varying_side, nets_side) {
        let (vp, np) = (var_path(v), nets_path(m));
        return Err(ConfigError::VaryingIpsWithNets {
            at: n.loc_of(&[&vp, &np]),
            var_key: n.name(&vp),
            nets_key: n.name(&np),
            nets: s.side(m).num_nets,
        });
    }
    // 4. Both enumerations on, in different orders.
    if enum_ports && enum_ips && st.enumerate_ports != st.enumerate_ips {
        return Err(ConfigError::EnumerationMismatch {
            at: n.loc_of(&[ei, ep]),
            ports_key: n.name(ep),
            ports: order_name(st.enumerate_ports),
            ips_key: n.name(ei),
            ips: order_name(st.enumerate_ips),
        });
    }
    let Some(initiator_dir) = responder.map(|r| {
        if r == SideId::Right {
            Direction::Forward
        } else {
            Direction::Reverse
        }
    }) else {
        return Ok(());
    };
    // 5. Stateful, port enumeration and varying IPs without IP enumeration.
    if let (true, false, Some(v)) = (enum_ports, enum_ips, varying_side) {
        let vp = var_path(v);
        return Err(ConfigError::PortEnumerationWithoutIpEnumeration {
            at: n.loc_of(&[ep, &vp]),
            ports_key: n.name(ep),
            var_key: n.name(&vp),
            ips_key: n.name(ei),
        });
    }
    // 6. Stateful, IP enumeration and varying ports (of phase 1, the Initiator's direction)
    //    without port enumeration.
    let ports = s.ports(initiator_dir);
    let varying_port = [("sport", ports.sport.variation), ("dport", ports.dport.variation)]
        .into_iter()
        .find(|(_, v)| !v.is_fixed());
    if let (true, false, Some((which, _))) = (enum_ips, enum_ports, varying_port) {
        let vp = format!("traffic.{}_ports.{which}.variation", dir_path(initiator_dir));
        return Err(ConfigError::IpEnumerationWithoutPortEnumeration {
            at: n.loc_of(&[ei, &vp]),
            ips_key: n.name(ei),
            var_key: n.name(&vp),
            ports_key: n.name(ep),
        });
    }
    // 7. Stateful, IP enumeration with a side's addresses fixed.
    if let (true, Some(f)) = (enum_ips, fixed_side) {
        let vp = var_path(f);
        return Err(ConfigError::IpEnumerationWithFixedIps {
            at: n.loc_of(&[ei, &vp]),
            ips_key: n.name(ei),
            var_key: n.name(&vp),
        });
    }
    Ok(())
}

fn order_name(v: Variation) -> &'static str {
    match v {
        Variation::Fixed => "off",
        Variation::Increasing => "increasing",
        Variation::Decreasing => "decreasing",
        Variation::Pseudorandom => "pseudorandom",
    }
}

/// The TOML paths of the source and destination address keys of direction `d`'s foreground
/// frames (docs/config.md, "Which addresses a direction uses").
fn foreground_keys(s: &Setup, d: Direction) -> (String, String) {
    let (snd, rcv) = (d.sender(), d.receiver());
    let (sp, rp) = (side_path(snd), side_path(rcv));
    match (s.side(snd).ip_version, s.side(rcv).ip_version) {
        (IpVersion::V4, IpVersion::V4) => (format!("{sp}.ipv4_real"), format!("{rp}.ipv4_real")),
        (IpVersion::V6, IpVersion::V6) => (format!("{sp}.ipv6_real"), format!("{rp}.ipv6_real")),
        (IpVersion::V6, IpVersion::V4) => (format!("{sp}.ipv6_real"), format!("{rp}.ipv6_virt")),
        (IpVersion::V4, IpVersion::V6) => (format!("{sp}.ipv4_real"), format!("{rp}.ipv4_virt")),
    }
}

fn background_keys(d: Direction) -> (String, String) {
    (
        format!("{}.ipv6_real", side_path(d.sender())),
        format!("{}.ipv6_real", side_path(d.receiver())),
    )
}

/// Every address that the active directions and the foreground/background mix need is set.
fn addresses(s: &Setup, n: &Names<'_>) -> Result<(), ConfigError> {
    let responder_dir = responder_direction(s.stateful.mode);
    for d in sending_directions(s) {
        let dir_key = n.name(&format!("traffic.{}", dir_path(d)));
        // Why the direction sends: it is on, or it is the Initiator's (phase 1).
        let sends = if s.is_active(d) {
            format!("'{dir_key}' is on")
        } else {
            format!(
                "the Initiator sends phase 1 of the stateful test ('{}' {}) even though '{dir_key}' is off",
                n.name("stateful.mode"),
                mode_text(n.kind, s.stateful.mode)
            )
        };
        if s.has_foreground() && Some(d) != responder_dir {
            if let Err(m) = s.foreground_addresses(d) {
                let (src, dst) = foreground_keys(s, d);
                let path = format!("{}.ipv{}_{}", side_path(m.side), m.version, m.kind.to_ascii_lowercase());
                let (lv, rv) = ("left.ip_version", "right.ip_version");
                let reason = format!(
                    "{sends} and '{}' is {}, '{}' is {}, so {d} foreground frames go from '{}' to '{}'",
                    n.name(lv),
                    s.left.ip_version.number(),
                    n.name(rv),
                    s.right.ip_version.number(),
                    n.name(&src),
                    n.name(&dst)
                );
                return Err(ConfigError::AddressNeeded {
                    at: n.loc_of(&[&path, lv, rv]),
                    key: n.name(&path),
                    reason,
                });
            }
        }
        if s.has_background() {
            if let Err(m) = s.background_addresses(d) {
                let (src, dst) = background_keys(d);
                let path = format!("{}.ipv6_real", side_path(m.side));
                let reason = format!(
                    "{sends} and '{}' ({}) is less than '{}' ({}), so {d} background frames (native IPv6) go from '{}' to '{}'",
                    n.name("traffic.foreground.m"),
                    s.fg_m,
                    n.name("traffic.foreground.n"),
                    s.fg_n,
                    n.name(&src),
                    n.name(&dst)
                );
                return Err(ConfigError::AddressNeeded {
                    at: n.loc_of(&[&path]),
                    key: n.name(&path),
                    reason,
                });
            }
        }
    }
    Ok(())
}

/// Destination addresses stay inside the benchmarking ranges unless the user allows otherwise,
/// with every value of their varying part and destination network byte.
fn foreign_addresses(s: &Setup, n: &Names<'_>) -> Result<(), ConfigError> {
    if s.allow_foreign_addresses {
        return Ok(());
    }
    let responder_dir = responder_direction(s.stateful.mode);
    for d in sending_directions(s) {
        let rcv = s.side(d.receiver());
        let mut checks: Vec<(String, Option<AddrPair>)> = Vec::new();
        if s.has_foreground() && Some(d) != responder_dir {
            checks.push((foreground_keys(s, d).1, s.foreground_addresses(d).ok()));
        }
        if s.has_background() {
            checks.push((background_keys(d).1, s.background_addresses(d).ok()));
        }
        for (path, pair) in checks {
            let bad = match pair {
                Some(AddrPair::V4(_, dst)) => v4_variants(dst, rcv)
                    .into_iter()
                    .find(|a| !is_benchmarking_v4(*a))
                    .map(|a| (dst.to_string(), a.to_string())),
                Some(AddrPair::V6(_, dst)) => v6_variants(dst, rcv)
                    .into_iter()
                    .find(|a| !is_benchmarking_v6(*a))
                    .map(|a| (dst.to_string(), a.to_string())),
                None => None,
            };
            if let Some((configured, example)) = bad {
                let addr = if configured == example {
                    configured
                } else {
                    format!("{configured} (as {example}, one of the addresses its varying part gives)")
                };
                return Err(ConfigError::ForeignAddress {
                    at: n.loc_of(&[&path]),
                    key: n.name(&path),
                    addr,
                    allow_key: n.name("traffic.allow_foreign_addresses"),
                });
            }
        }
    }
    Ok(())
}

/// The extreme values of the varying bits of a destination address: the varying 16 bits at
/// their offset (min and max) and the destination network byte (0 and num_nets - 1).
fn extremes(var: &IpVarSpec, nets: u16) -> Vec<(Option<u16>, Option<u8>)> {
    let vs: Vec<Option<u16>> = if var.variation.is_fixed() {
        vec![None]
    } else {
        vec![Some(var.min), Some(var.max)]
    };
    let ns: Vec<Option<u8>> = if nets > 1 {
        vec![Some(0), Some(u8::try_from(nets - 1).unwrap_or(u8::MAX))]
    } else {
        vec![None]
    };
    vs.iter().flat_map(|v| ns.iter().map(move |m| (*v, *m))).collect()
}

fn patch(bytes: &mut [u8], offset: usize, net_byte: usize, v: Option<u16>, net: Option<u8>) {
    if let (Some(net), Some(b)) = (net, bytes.get_mut(net_byte)) {
        *b = net;
    }
    if let (Some(v), Some(w)) = (v, bytes.get_mut(offset..offset + 2)) {
        w.copy_from_slice(&v.to_be_bytes());
    }
}

fn v4_variants(a: Ipv4Addr, rcv: &Side) -> Vec<Ipv4Addr> {
    let mut out = vec![a];
    for (v, net) in extremes(&rcv.ip_var, rcv.num_nets) {
        let mut o = a.octets();
        patch(&mut o, usize::from(rcv.ip_var.ipv4_offset), usize::from(NET_OCTET_V4), v, net);
        out.push(Ipv4Addr::from(o));
    }
    out
}

fn v6_variants(a: Ipv6Addr, rcv: &Side) -> Vec<Ipv6Addr> {
    let mut out = vec![a];
    for (v, net) in extremes(&rcv.ip_var, rcv.num_nets) {
        let mut o = a.octets();
        patch(&mut o, usize::from(rcv.ip_var.ipv6_offset), usize::from(NET_OCTET_V6), v, net);
        out.push(Ipv6Addr::from(o));
    }
    out
}

/// A sending port needs the DUT's MAC, or an address to resolve it from (not with `mem`).
fn dut_macs(cfg: &TestConfig, n: &Names<'_>) -> Result<(), ConfigError> {
    if cfg.tester.backend == Backend::Mem || cfg.tester.loopback {
        return Ok(());
    }
    for d in sending_directions(&cfg.setup) {
        let id = d.sender();
        let side = cfg.setup.side(id);
        if side.dut_mac.is_none() && side.dut_ipv4.is_none() && side.dut_ipv6.is_none() {
            let sp = side_path(id);
            let key = format!("{sp}.dut_mac");
            return Err(ConfigError::DutMacUnknown {
                at: n.loc_of(&[&key]),
                key: n.name(&key),
                ipv4_key: n.name(&format!("{sp}.dut_ipv4")),
                ipv6_key: n.name(&format!("{sp}.dut_ipv6")),
            });
        }
    }
    Ok(())
}

const PRELIMINARY_PATHS: [&str; 5] = [
    "stateful.preliminary_frames",
    "stateful.state_table",
    "stateful.preliminary_rate",
    "stateful.preliminary_timeout_ms",
    "stateful.phase_delay_ms",
];

/// The preliminary phase's keys: only in a stateful test, each in its range (also when a
/// program set them), and, when N and R are known, the checks between them.
fn preliminary_keys(cfg: &TestConfig, n: &Names<'_>) -> Result<(), ConfigError> {
    let p = &cfg.stateful;
    let given = [
        p.preliminary_frames.is_some(),
        p.state_table.is_some(),
        p.preliminary_rate.is_some(),
        p.preliminary_timeout_ms.is_some(),
        p.phase_delay_ms.is_some(),
    ];
    if cfg.setup.stateful.mode == Stateful::Off {
        if let Some(i) = given.iter().position(|g| *g) {
            let key = PRELIMINARY_PATHS[i];
            return Err(ConfigError::PreliminaryInStatelessTest {
                at: n.loc_of(&[key]),
                key: n.name(key),
                stateful_key: n.name("stateful.mode"),
            });
        }
        return Ok(());
    }
    let u32_max = u64::from(u32::MAX);
    let checks = [
        (PRELIMINARY_PATHS[0], p.preliminary_frames.map(u64::from), u32_max),
        (PRELIMINARY_PATHS[1], p.state_table.map(u64::from), u32_max),
        (PRELIMINARY_PATHS[2], p.preliminary_rate, MAX_PRELIMINARY_RATE),
        (PRELIMINARY_PATHS[3], p.preliminary_timeout_ms, MAX_PRELIMINARY_TIMEOUT_MS),
        (PRELIMINARY_PATHS[4], p.phase_delay_ms, MAX_PHASE_DELAY_MS),
    ];
    for (path, v, max) in checks {
        if let Some(v) = v {
            if !(1..=max).contains(&v) {
                return Err(n.bad(path, v, format!("1-{max}")));
            }
        }
    }
    if p.preliminary_frames.is_some() && p.preliminary_rate.is_some() {
        preliminary(cfg, n)?;
    }
    Ok(())
}

/// How many distinct combinations phase 1's pseudorandom enumeration can give, and of what:
/// with `Enumerate-ports` pseudorandom the Initiator's direction's source port range times its
/// destination port range; with `Enumerate-ips` pseudorandom the left side's varying address
/// range times the right side's; both: the product of the four. `None` without pseudorandom
/// enumeration (increasing and decreasing enumeration wrap around and are not checked).
pub(crate) fn combinations(s: &Setup) -> Option<(u128, &'static str)> {
    let dir = initiator_direction(s.stateful.mode)?;
    let st = &s.stateful;
    let size = |min: u16, max: u16| u128::from(max.saturating_sub(min)) + 1;
    let ports = s.ports(dir);
    let port_count = size(ports.sport.min, ports.sport.max) * size(ports.dport.min, ports.dport.max);
    let ip_count = size(s.left.ip_var.min, s.left.ip_var.max) * size(s.right.ip_var.min, s.right.ip_var.max);
    match (
        st.enumerate_ports == Variation::Pseudorandom,
        st.enumerate_ips == Variation::Pseudorandom,
    ) {
        (true, false) => Some((port_count, "port number")),
        (false, true) => Some((ip_count, "IP address")),
        (true, true) => Some((port_count * ip_count, "IP address and port number")),
        (false, false) => None,
    }
}

/// The preliminary phase with its defaults filled in, checked: N and R given; D at least
/// floor(1000 N / R) + T; M at most the foreground frames among N; with pseudorandom
/// enumeration, at least as many combinations as foreground frames.
pub(crate) fn preliminary(cfg: &TestConfig, n: &Names<'_>) -> Result<Preliminary, ConfigError> {
    let s = &cfg.setup;
    let p: &StatefulTrial = &cfg.stateful;
    let [frames_key, table_key, rate_key, timeout_key, delay_key] = PRELIMINARY_PATHS;
    let required = |path: &str, what: &str| ConfigError::Required {
        at: n.loc(path),
        key: n.name(path),
        why: format!("'{}' is on, and phase 1 needs {what}", n.name("stateful.mode")),
    };
    let frames = p
        .preliminary_frames
        .ok_or_else(|| required(frames_key, "N, the frames the Initiator sends"))?;
    let rate = p.preliminary_rate.ok_or_else(|| required(rate_key, "R, its rate in frames/s"))?;
    let timeout_ms = p.preliminary_timeout_ms.unwrap_or(DEFAULT_PRELIMINARY_TIMEOUT_MS);
    let foreground = foreground_frames(u64::from(frames), s.fg_n, s.fg_m);
    let state_table = match p.state_table {
        Some(m) => m,
        None => u32::try_from(foreground).unwrap_or(u32::MAX),
    };
    let phase_delay_ms = p
        .phase_delay_ms
        .unwrap_or_else(|| StatefulTrial::default_phase_delay_ms(frames, rate, timeout_ms));
    let needed = (u128::from(frames) * 1000 / u128::from(rate.max(1))) + u128::from(timeout_ms);
    if u128::from(phase_delay_ms) < needed {
        return Err(ConfigError::PhaseDelayTooShort {
            at: n.loc_of(&[delay_key, frames_key, rate_key]),
            delay_key: n.name(delay_key),
            delay: phase_delay_ms,
            needed: u64::try_from(needed).unwrap_or(u64::MAX),
            inputs: format!(
                "'{}' {frames}, '{}' {rate}, '{}' {timeout_ms}",
                n.name(frames_key),
                n.name(rate_key),
                n.name(timeout_key)
            ),
        });
    }
    if u64::from(state_table) > foreground || state_table == 0 {
        return Err(ConfigError::StateTableTooLarge {
            at: n.loc_of(&[table_key, frames_key]),
            table_key: n.name(table_key),
            state_table,
            foreground,
            frames_key: n.name(frames_key),
            frames,
            fg_n: s.fg_n,
            fg_m: s.fg_m,
        });
    }
    if let Some((c, what)) = combinations(s) {
        if c < u128::from(foreground) {
            let key = if s.stateful.enumerate_ports == Variation::Pseudorandom {
                "stateful.enumerate_ports"
            } else {
                "stateful.enumerate_ips"
            };
            return Err(ConfigError::TooFewCombinations {
                at: n.loc_of(&[frames_key, key]),
                enumerate_key: n.name(key),
                what,
                combinations: u64::try_from(c).unwrap_or(u64::MAX),
                foreground,
            });
        }
    }
    Ok(Preliminary {
        frames,
        state_table,
        rate,
        timeout_ms,
        phase_delay_ms,
    })
}
