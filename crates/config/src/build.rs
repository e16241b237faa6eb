//! From the document (TOML table) to the typed [`TestConfig`]: the serde shape of the TOML
//! format, and the conversion of each key with its range.

use crate::doc::{self, Doc};
use crate::error::{quote, ConfigError, Loc};
use crate::keys::{self, ConfValue};
use crate::model::{
    Backend, Cpus, DutHooks, FlowControl, Source, SourceKind, StatefulTrial, TestConfig, TesterConfig, TrialDefaults, DEFAULT_DURATION_S,
    DEFAULT_FRAME_SIZE, DEFAULT_TIMEOUT_MS,
};
use crate::validate::{self, Names};
use serde::{Deserialize, Serialize};
use std::net::{Ipv4Addr, Ipv6Addr};
use xlat_traffic::maprule::{MapRule, RuleError};
use xlat_traffic::{IpVarSpec, IpVersion, PortField, PortSpec, Setup, Side, SideMap, SideTunnel, Stateful, StatefulSpec, Variation};
use xlat_trial::StampSource;
use xlat_wire::MacAddr;

/// The TOML file as written: every leaf optional, so that defaults and required keys are
/// handled (and reported) by the conversion, which knows the key names and lines.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawFile {
    pub tester: RawTester,
    pub left: RawSide,
    pub right: RawSide,
    pub traffic: RawTraffic,
    pub stateful: RawStateful,
    pub trial: RawTrial,
    pub dut: RawDut,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum PortName {
    Name(String),
    Id(i64),
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawTester {
    pub backend: Option<String>,
    pub left_port: Option<PortName>,
    pub right_port: Option<PortName>,
    pub netns: Option<String>,
    pub eal_args: Option<Vec<String>>,
    pub promisc: Option<bool>,
    pub loopback: Option<bool>,
    pub mem_channels: Option<i64>,
    pub queues: Option<i64>,
    pub max_send_lag_us: Option<i64>,
    pub max_send_lag_frames: Option<i64>,
    pub catch_up_percent: Option<i64>,
    pub timestamps: Option<String>,
    pub flow_control: Option<String>,
    pub rx_descriptors: Option<i64>,
    pub tx_descriptors: Option<i64>,
    pub cpus: RawCpus,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawCpus {
    pub left_send: Option<i64>,
    pub right_recv: Option<i64>,
    pub right_send: Option<i64>,
    pub left_recv: Option<i64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawSide {
    pub ip_version: Option<i64>,
    pub ipv4_real: Option<String>,
    pub ipv4_virt: Option<String>,
    pub ipv6_real: Option<String>,
    pub ipv6_virt: Option<String>,
    pub tester_mac: Option<String>,
    pub dut_mac: Option<String>,
    pub dut_ipv4: Option<String>,
    pub dut_ipv6: Option<String>,
    pub num_nets: Option<i64>,
    pub ip_variation: RawIpVar,
    pub tunnel: Option<RawTunnel>,
    pub map: Option<RawMap>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawMap {
    pub rule_ipv6: Option<String>,
    pub rule_ipv4: Option<String>,
    pub ea_bits: Option<i64>,
    pub psid_offset: Option<i64>,
    pub psid_len: Option<i64>,
    pub subscribers: Option<i64>,
    pub ports: Option<i64>,
    pub binding_psid: Option<i64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawTunnel {
    pub local: Option<String>,
    pub remote: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawIpVar {
    pub variation: Option<String>,
    pub min: Option<i64>,
    pub max: Option<i64>,
    pub ipv4_offset: Option<i64>,
    pub ipv6_offset: Option<i64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawTraffic {
    pub forward: Option<bool>,
    pub reverse: Option<bool>,
    pub foreground: RawForeground,
    pub seed: Option<i64>,
    pub allow_foreign_addresses: Option<bool>,
    pub forward_ports: RawPorts,
    pub reverse_ports: RawPorts,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawForeground {
    pub n: Option<i64>,
    pub m: Option<i64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawPorts {
    pub sport: RawPortField,
    pub dport: RawPortField,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawPortField {
    pub variation: Option<String>,
    pub min: Option<i64>,
    pub max: Option<i64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawStateful {
    pub mode: Option<String>,
    pub enumerate_ports: Option<String>,
    pub enumerate_ips: Option<String>,
    pub responder_tuples: Option<String>,
    pub preliminary_frames: Option<i64>,
    pub state_table: Option<i64>,
    pub preliminary_rate: Option<i64>,
    pub preliminary_timeout_ms: Option<i64>,
    pub phase_delay_ms: Option<i64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawDut {
    pub before_trial: Option<String>,
    pub between_phases: Option<String>,
    pub delete_all: Option<String>,
    pub count: Option<String>,
    pub reset: Option<String>,
    pub cpus: Option<String>,
    pub load: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawTrial {
    pub frame_size: Option<i64>,
    pub rate: Option<i64>,
    pub duration: Option<f64>,
    pub timeout_ms: Option<i64>,
}

const VARIATIONS: [Variation; 4] = [
    Variation::Fixed,
    Variation::Increasing,
    Variation::Decreasing,
    Variation::Pseudorandom,
];

/// Convert and validate a document.
pub(crate) fn build(doc: &Doc) -> Result<TestConfig, ConfigError> {
    doc::check_keys(doc)?;
    let raw: RawFile = doc.table.clone().try_into().map_err(|e: toml::de::Error| serde_error(doc, &e))?;
    let c = Conv { doc };
    let siitperf = doc.kind == SourceKind::SiitperfConf;

    let t = &raw.tester;
    let default_backend = if siitperf { Backend::Dpdk } else { Backend::AfPacket };
    let backend = c.choice(
        "tester.backend",
        &t.backend,
        &keys::BACKEND_NAMES,
        &[Backend::Mem, Backend::AfPacket, Backend::AfXdp, Backend::Dpdk],
        default_backend,
    )?;
    let tester = TesterConfig {
        backend,
        left_port: c.port("tester.left_port", &t.left_port, backend, "0", "mem0")?,
        right_port: c.port("tester.right_port", &t.right_port, backend, "1", "mem1")?,
        netns: t.netns.clone(),
        eal_args: t.eal_args.clone().unwrap_or_default(),
        // siitperf sets Promisc, Forward and Reverse to 1 when siitperf.conf leaves them out.
        promisc: t.promisc.unwrap_or(siitperf),
        loopback: t.loopback.unwrap_or(false),
        cpus: Cpus {
            left_send: c.opt_int("tester.cpus.left_send", t.cpus.left_send)?,
            right_recv: c.opt_int("tester.cpus.right_recv", t.cpus.right_recv)?,
            right_send: c.opt_int("tester.cpus.right_send", t.cpus.right_send)?,
            left_recv: c.opt_int("tester.cpus.left_recv", t.cpus.left_recv)?,
        },
        mem_channels: c.opt_int("tester.mem_channels", t.mem_channels)?,
        queues: c.opt_int("tester.queues", t.queues)?.unwrap_or(1),
        max_send_lag_us: c.opt_int("tester.max_send_lag_us", t.max_send_lag_us)?,
        max_send_lag_frames: c.opt_int("tester.max_send_lag_frames", t.max_send_lag_frames)?,
        catch_up_percent: c.opt_int("tester.catch_up_percent", t.catch_up_percent)?,
        timestamps: c.choice(
            "tester.timestamps",
            &t.timestamps,
            &["auto", "user", "kernel", "hardware"],
            &[
                None,
                Some(StampSource::User),
                Some(StampSource::Kernel),
                Some(StampSource::Hardware),
            ],
            None,
        )?,
        flow_control: c.choice(
            "tester.flow_control",
            &t.flow_control,
            &["off", "on", "keep"],
            &[FlowControl::Off, FlowControl::On, FlowControl::Keep],
            FlowControl::Off,
        )?,
        rx_descriptors: c.opt_int("tester.rx_descriptors", t.rx_descriptors)?,
        tx_descriptors: c.opt_int("tester.tx_descriptors", t.tx_descriptors)?,
    };

    let tr = &raw.traffic;
    let st = &raw.stateful;
    let setup = Setup {
        left: c.side("left", &raw.left)?,
        right: c.side("right", &raw.right)?,
        forward: tr.forward.unwrap_or(true),
        reverse: tr.reverse.unwrap_or(true),
        forward_ports: c.ports("forward", &tr.forward_ports)?,
        reverse_ports: c.ports("reverse", &tr.reverse_ports)?,
        fg_n: c.int_or("traffic.foreground.n", tr.foreground.n, 2)?,
        fg_m: c.int_or("traffic.foreground.m", tr.foreground.m, 2)?,
        stateful: StatefulSpec {
            mode: c.choice(
                "stateful.mode",
                &st.mode,
                &keys::STATEFUL_NAMES,
                &[Stateful::Off, Stateful::InitiatorLeft, Stateful::InitiatorRight],
                Stateful::Off,
            )?,
            enumerate_ports: c.choice(
                "stateful.enumerate_ports",
                &st.enumerate_ports,
                &keys::ENUMERATE_NAMES,
                &VARIATIONS,
                Variation::Fixed,
            )?,
            enumerate_ips: c.choice(
                "stateful.enumerate_ips",
                &st.enumerate_ips,
                &keys::ENUMERATE_NAMES,
                &VARIATIONS,
                Variation::Fixed,
            )?,
            responder_tuples: c.choice(
                "stateful.responder_tuples",
                &st.responder_tuples,
                &keys::VARIATION_NAMES,
                &VARIATIONS,
                Variation::Fixed,
            )?,
        },
        seed: c.opt_int("traffic.seed", tr.seed)?,
        allow_foreign_addresses: tr.allow_foreign_addresses.unwrap_or(false),
    };

    let tl = &raw.trial;
    let trial = TrialDefaults {
        frame_size: c.int_or("trial.frame_size", tl.frame_size, DEFAULT_FRAME_SIZE)?,
        rate: c.opt_int("trial.rate", tl.rate)?,
        duration_s: tl.duration.unwrap_or(DEFAULT_DURATION_S),
        timeout_ms: c.int_or("trial.timeout_ms", tl.timeout_ms, DEFAULT_TIMEOUT_MS)?,
    };

    let stateful = StatefulTrial {
        preliminary_frames: c.opt_int("stateful.preliminary_frames", st.preliminary_frames)?,
        state_table: c.opt_int("stateful.state_table", st.state_table)?,
        preliminary_rate: c.opt_int("stateful.preliminary_rate", st.preliminary_rate)?,
        preliminary_timeout_ms: c.opt_int("stateful.preliminary_timeout_ms", st.preliminary_timeout_ms)?,
        phase_delay_ms: c.opt_int("stateful.phase_delay_ms", st.phase_delay_ms)?,
    };
    let dut = DutHooks {
        before_trial: c.command("dut.before_trial", &raw.dut.before_trial)?,
        between_phases: c.command("dut.between_phases", &raw.dut.between_phases)?,
        delete_all: c.command("dut.delete_all", &raw.dut.delete_all)?,
        count: c.command("dut.count", &raw.dut.count)?,
        reset: c.command("dut.reset", &raw.dut.reset)?,
        cpus: c.cpu_list("dut.cpus", &raw.dut.cpus)?,
        load: c.command("dut.load", &raw.dut.load)?,
    };
    if let (Some(load), false) = (&dut.load, dut.cpus.is_empty()) {
        return Err(c.bad(
            "dut.load",
            quote(load),
            "no dut.load beside dut.cpus: the load of a DUT on this host's CPUs is read from the kernel already; give one of the two",
        ));
    }

    let cfg = TestConfig {
        setup,
        tester,
        trial,
        stateful,
        dut,
        source: Source {
            file: doc.file.clone(),
            kind: doc.kind,
        },
    };
    validate::validate(
        &cfg,
        &Names {
            kind: doc.kind,
            file: &doc.file,
            doc: Some(doc),
        },
    )?;
    Ok(cfg)
}

/// A serde error (rare: [`doc::check_keys`] has checked names and types) with the key it
/// names ("in `left.num_nets`") turned into a location.
fn serde_error(doc: &Doc, e: &toml::de::Error) -> ConfigError {
    let text = e.to_string();
    let path = text
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("in `").and_then(|r| r.strip_suffix('`')).map(str::to_string));
    let at = match &path {
        Some(p) => doc.loc(p),
        None => Loc::File { file: doc.file.clone() },
    };
    ConfigError::Invalid {
        at,
        msg: e.message().trim().to_string(),
    }
}

struct Conv<'a> {
    doc: &'a Doc,
}

impl Conv<'_> {
    fn bad(&self, path: &str, value: String, allowed: impl Into<String>) -> ConfigError {
        ConfigError::BadValue {
            at: self.doc.loc(path),
            key: self.doc.name(path),
            value,
            allowed: allowed.into(),
        }
    }

    /// An optional integer key, checked against its range and converted to `T`.
    fn opt_int<T: TryFrom<i64>>(&self, path: &str, v: Option<i64>) -> Result<Option<T>, ConfigError> {
        let Some(v) = v else { return Ok(None) };
        let range = keys::by_path(path).and_then(|k| k.range);
        let (lo, hi) = range.unwrap_or((i64::MIN, i64::MAX));
        if v < lo || v > hi {
            return Err(self.bad(path, v.to_string(), format!("{lo}-{hi}")));
        }
        T::try_from(v)
            .map(Some)
            .map_err(|_| self.bad(path, v.to_string(), format!("{lo}-{hi}")))
    }

    fn int_or<T: TryFrom<i64>>(&self, path: &str, v: Option<i64>, default: T) -> Result<T, ConfigError> {
        Ok(self.opt_int(path, v)?.unwrap_or(default))
    }

    /// A key whose value is one of `names`, meaning the corresponding one of `values`.
    fn choice<T: Copy>(&self, path: &str, v: &Option<String>, names: &[&str], values: &[T], default: T) -> Result<T, ConfigError> {
        let Some(s) = v else { return Ok(default) };
        match names.iter().position(|n| n == s).and_then(|i| values.get(i)) {
            Some(t) => Ok(*t),
            None => Err(self.bad(path, quote(s), names.join(", "))),
        }
    }

    /// A shell command: any text but an empty one.
    fn cpu_list(&self, path: &str, v: &Option<String>) -> Result<Vec<usize>, ConfigError> {
        match v {
            None => Ok(Vec::new()),
            Some(s) => xlat_trial::load::parse_cpu_list(s)
                .map_err(|why| self.bad(path, quote(s), format!("a CPU list such as \"1\" or \"2-3,6\" ({why})"))),
        }
    }

    fn command(&self, path: &str, v: &Option<String>) -> Result<Option<String>, ConfigError> {
        match v {
            Some(s) if s.trim().is_empty() => Err(self.bad(path, quote(s), "a shell command, run with sh -c")),
            _ => Ok(v.clone()),
        }
    }

    fn port(&self, path: &str, v: &Option<PortName>, backend: Backend, dpdk: &str, mem: &str) -> Result<String, ConfigError> {
        match v {
            Some(PortName::Name(s)) if s.trim().is_empty() => Err(self.bad(path, quote(s), "a non-empty port name")),
            Some(PortName::Name(s)) => Ok(s.clone()),
            Some(PortName::Id(i)) if *i >= 0 => Ok(i.to_string()),
            Some(PortName::Id(i)) => Err(self.bad(path, i.to_string(), "a port name or a DPDK port id (0 or more)")),
            None => match backend {
                Backend::Dpdk => Ok(dpdk.to_string()),
                Backend::Mem => Ok(mem.to_string()),
                Backend::AfPacket | Backend::AfXdp => Err(ConfigError::Required {
                    at: self.doc.loc(path),
                    key: self.doc.name(path),
                    why: format!("the {} backend needs the name of the interface to open", backend.name()),
                }),
            },
        }
    }

    fn parsed<T: std::str::FromStr>(&self, path: &str, v: &Option<String>, cv: ConfValue) -> Result<Option<T>, ConfigError> {
        match v {
            None => Ok(None),
            Some(s) => s.trim().parse().map(Some).map_err(|_| self.bad(path, quote(s), cv.allowed())),
        }
    }

    fn side(&self, id: &str, raw: &RawSide) -> Result<Side, ConfigError> {
        let p = |k: &str| format!("{id}.{k}");
        let ip_version = match raw.ip_version {
            Some(4) => IpVersion::V4,
            Some(6) => IpVersion::V6,
            Some(other) => return Err(self.bad(&p("ip_version"), other.to_string(), "4 or 6")),
            None => {
                return Err(ConfigError::Required {
                    at: self.doc.loc(&p("ip_version")),
                    key: self.doc.name(&p("ip_version")),
                    why: "4 or 6".to_string(),
                })
            }
        };
        let v = &raw.ip_variation;
        let d = IpVarSpec::default();
        let tunnel = match &raw.tunnel {
            None => None,
            Some(t) => {
                let end = |k: &str, a: &Option<String>| -> Result<Ipv6Addr, ConfigError> {
                    let key = p(&format!("tunnel.{k}"));
                    self.parsed::<Ipv6Addr>(&key, a, ConfValue::Ipv6)?
                        .ok_or_else(|| ConfigError::Required {
                            at: self.doc.loc(&p("tunnel")),
                            key: self.doc.name(&key),
                            why: "IPv4 in IPv6 needs both ends of the tunnel (IPv6 addresses)".to_string(),
                        })
                };
                let tunnel = SideTunnel {
                    local: end("local", &t.local)?,
                    remote: end("remote", &t.remote)?,
                };
                if ip_version != IpVersion::V4 {
                    return Err(self.bad(
                        &p("tunnel"),
                        format!("a tunnel with {}.ip_version = 6", id),
                        "a tunnel carries IPv4 in IPv6 (RFC 2473): the side's ip_version must be 4",
                    ));
                }
                Some(tunnel)
            }
        };
        let map = match &raw.map {
            None => None,
            Some(m) => Some(self.map(id, m)?),
        };
        Ok(Side {
            tunnel,
            map,
            ip_version,
            ipv4_real: self.parsed::<Ipv4Addr>(&p("ipv4_real"), &raw.ipv4_real, ConfValue::Ipv4)?,
            ipv4_virt: self.parsed::<Ipv4Addr>(&p("ipv4_virt"), &raw.ipv4_virt, ConfValue::Ipv4)?,
            ipv6_real: self.parsed::<Ipv6Addr>(&p("ipv6_real"), &raw.ipv6_real, ConfValue::Ipv6)?,
            ipv6_virt: self.parsed::<Ipv6Addr>(&p("ipv6_virt"), &raw.ipv6_virt, ConfValue::Ipv6)?,
            tester_mac: self.parsed::<MacAddr>(&p("tester_mac"), &raw.tester_mac, ConfValue::Mac)?,
            dut_mac: self.parsed::<MacAddr>(&p("dut_mac"), &raw.dut_mac, ConfValue::Mac)?,
            dut_ipv4: self.parsed::<Ipv4Addr>(&p("dut_ipv4"), &raw.dut_ipv4, ConfValue::Ipv4)?,
            dut_ipv6: self.parsed::<Ipv6Addr>(&p("dut_ipv6"), &raw.dut_ipv6, ConfValue::Ipv6)?,
            num_nets: self.int_or(&p("num_nets"), raw.num_nets, 1)?,
            ip_var: IpVarSpec {
                variation: self.choice(
                    &p("ip_variation.variation"),
                    &v.variation,
                    &keys::VARIATION_NAMES,
                    &VARIATIONS,
                    d.variation,
                )?,
                min: self.int_or(&p("ip_variation.min"), v.min, d.min)?,
                max: self.int_or(&p("ip_variation.max"), v.max, d.max)?,
                ipv4_offset: self.int_or(&p("ip_variation.ipv4_offset"), v.ipv4_offset, d.ipv4_offset)?,
                ipv6_offset: self.int_or(&p("ip_variation.ipv6_offset"), v.ipv6_offset, d.ipv6_offset)?,
            },
        })
    }

    /// `[<side>.map]`: the rule (each of its errors named by the key it comes from) and the CEs.
    fn map(&self, id: &str, m: &RawMap) -> Result<SideMap, ConfigError> {
        let p = |k: &str| format!("{id}.map.{k}");
        let required = |k: &str, why: &str| ConfigError::Required {
            at: self.doc.loc(&format!("{id}.map")),
            key: self.doc.name(&p(k)),
            why: why.to_string(),
        };
        let prefix = |k: &str, v: &Option<String>, bits: u8| -> Result<(String, u8), ConfigError> {
            let s = v
                .as_ref()
                .ok_or_else(|| required(k, "a mapping rule needs both prefixes (address/length)"))?;
            let bad = || {
                self.bad(
                    &p(k),
                    quote(s),
                    format!(
                        "a prefix such as \"{}\"",
                        if bits == 32 { "198.18.0.0/22" } else { "2001:2:0:c000::/50" }
                    ),
                )
            };
            let (a, len) = s.trim().split_once('/').ok_or_else(bad)?;
            let len: u8 = len.parse().ok().filter(|l| *l <= bits).ok_or_else(bad)?;
            Ok((a.to_string(), len))
        };
        // lw4o6's lwB4 addresses are not the rule's: its IPv6 prefix may be left out.
        let binding_psid: Option<u16> = self.opt_int(&p("binding_psid"), m.binding_psid)?;
        let any = Some("::/0".to_string());
        let rule_ipv6 = if binding_psid.is_some() && m.rule_ipv6.is_none() {
            &any
        } else {
            &m.rule_ipv6
        };
        let (a6, l6) = prefix("rule_ipv6", rule_ipv6, 128)?;
        let (a4, l4) = prefix("rule_ipv4", &m.rule_ipv4, 32)?;
        let a6: Ipv6Addr = self
            .parsed(&p("rule_ipv6"), &Some(a6), ConfValue::Ipv6)?
            .unwrap_or(Ipv6Addr::UNSPECIFIED);
        let a4: Ipv4Addr = self
            .parsed(&p("rule_ipv4"), &Some(a4), ConfValue::Ipv4)?
            .unwrap_or(Ipv4Addr::UNSPECIFIED);
        let ea: u8 = self
            .opt_int(&p("ea_bits"), m.ea_bits)?
            .ok_or_else(|| required("ea_bits", "the rule's EA-bits length (0 for a whole IPv4 address per CE)"))?;
        let offset: u8 = self.int_or(&p("psid_offset"), m.psid_offset, 6)?;
        let rule_error = |e: RuleError| {
            use RuleError::*;
            let (k, v) = match &e {
                Ipv4Len(_) | HostBits { which: "IPv4" } => ("rule_ipv4", m.rule_ipv4.clone().unwrap_or_default()),
                Ipv6Len(_) | HostBits { .. } => ("rule_ipv6", m.rule_ipv6.clone().unwrap_or_default()),
                EaShort { .. } | EaLong { .. } => ("ea_bits", ea.to_string()),
                PsidBits { .. } if m.psid_len.is_some() => ("psid_len", m.psid_len.unwrap_or(0).to_string()),
                PsidBits { .. } => ("psid_offset", offset.to_string()),
                PsidLenWithEa => ("psid_len", m.psid_len.unwrap_or(0).to_string()),
            };
            self.bad(&p(k), v, format!("a usable mapping rule: {e}"))
        };
        let mut rule = MapRule::new((a6, l6), (a4, l4), ea, offset).map_err(rule_error)?;
        if let Some(len) = self.opt_int::<u8>(&p("psid_len"), m.psid_len)? {
            if len != rule.psid_len() {
                rule = rule.with_psid_len(len).map_err(rule_error)?;
            }
        }
        let subscribers: u32 = self.int_or(&p("subscribers"), m.subscribers, 1)?;
        if u64::from(subscribers) > rule.ces() {
            return Err(self.bad(
                &p("subscribers"),
                subscribers.to_string(),
                format!("1-{}: the rule gives {} CEs", rule.ces(), rule.ces()),
            ));
        }
        let ports: Option<u32> = self.opt_int(&p("ports"), m.ports)?;
        if let Some(n) = ports.filter(|n| *n > rule.ports_per_set()) {
            return Err(self.bad(
                &p("ports"),
                n.to_string(),
                format!(
                    "1-{}: a PSID of {} bits at offset {} leaves {} ports in each set",
                    rule.ports_per_set(),
                    rule.psid_len(),
                    rule.psid_offset(),
                    rule.ports_per_set()
                ),
            ));
        }
        Ok(SideMap {
            rule,
            subscribers,
            ports,
            binding_psid,
        })
    }

    fn ports(&self, dir: &str, raw: &RawPorts) -> Result<PortSpec, ConfigError> {
        let d = PortSpec::default();
        let field = |name: &str, r: &RawPortField, def: PortField| -> Result<PortField, ConfigError> {
            let p = |k: &str| format!("traffic.{dir}_ports.{name}.{k}");
            Ok(PortField {
                variation: self.choice(&p("variation"), &r.variation, &keys::VARIATION_NAMES, &VARIATIONS, def.variation)?,
                min: self.int_or(&p("min"), r.min, def.min)?,
                max: self.int_or(&p("max"), r.max, def.max)?,
            })
        };
        Ok(PortSpec {
            sport: field("sport", &raw.sport, d.sport)?,
            dport: field("dport", &raw.dport, d.dport)?,
        })
    }
}
