//! Print a configuration as the equivalent commented TOML (`xlatperf convert siitperf.conf`, and
//! the configuration `xlatperf lab up` writes).

use crate::error::SiitperfError;
use crate::keys::{self, ENUMERATE_NAMES, STATEFUL_NAMES, VARIATION_NAMES};
use crate::model::{Backend, SourceKind, TestConfig};
use std::fmt::Write as _;
use std::net::{Ipv4Addr, Ipv6Addr};
use xlat_traffic::{PortField, Side, SideId, Stateful, Variation};

const COLUMN: usize = 44;

fn s(v: &str) -> String {
    toml::Value::String(v.to_string()).to_string()
}

fn variation(v: Variation) -> String {
    s(VARIATION_NAMES[usize::from(v.code()).min(3)])
}

fn order(v: Variation) -> String {
    s(ENUMERATE_NAMES[usize::from(v.code()).min(3)])
}

struct Out(String);

impl Out {
    fn comment_for(path: &str) -> String {
        match keys::by_path(path) {
            Some(k) => match k.conf.first() {
                Some(c) => format!("{} (siitperf: {c})", k.doc),
                None => k.doc.to_string(),
            },
            None => String::new(),
        }
    }

    /// `key = value  # doc (siitperf: Key)`
    fn key(&mut self, path: &str, value: String) {
        let name = path.rsplit('.').next().unwrap_or(path);
        let kv = format!("{name} = {value}");
        let _ = writeln!(self.0, "{kv:<COLUMN$} # {}", Self::comment_for(path));
    }

    fn opt(&mut self, path: &str, value: Option<String>) {
        match value {
            Some(v) => self.key(path, v),
            None => {
                let name = path.rsplit('.').next().unwrap_or(path);
                let kv = format!("# {name} (not set)");
                let _ = writeln!(self.0, "{kv:<COLUMN$} # {}", Self::comment_for(path));
            }
        }
    }

    fn header(&mut self, h: &str) {
        let _ = writeln!(self.0, "\n[{h}]");
    }
}

/// The configuration as TOML that [`crate::parse_toml`] reads back into an equal
/// configuration; every key written out, each with its meaning and its siitperf.conf name. The
/// first line names the file it was read from.
pub fn to_toml(cfg: &TestConfig) -> String {
    let from = match cfg.source.kind {
        SourceKind::SiitperfConf => "a siitperf.conf",
        SourceKind::Toml => "TOML",
    };
    let first = format!(
        "xlatperf test description, written from {from} file: {}",
        cfg.source.file.replace('\n', " ")
    );
    write(cfg, &[first])
}

/// The configuration as [`to_toml`] writes it, with `comment` instead of the line that names
/// the source file: each line of `comment` becomes a `#` line (control characters become
/// spaces), e.g. to say where the file comes from and what it is for.
pub fn to_toml_with_comment(cfg: &TestConfig, comment: &str) -> String {
    let lines: Vec<String> = comment
        .lines()
        .map(|l| l.chars().map(|c| if c.is_control() { ' ' } else { c }).collect())
        .collect();
    write(cfg, &lines)
}

/// The comment lines `header`, the line that points to the documentation, then every key.
fn write(cfg: &TestConfig, header: &[String]) -> String {
    let mut o = Out(String::new());
    for line in header {
        let _ = writeln!(o.0, "# {line}");
    }
    let _ = writeln!(
        o.0,
        "# Every key is described in docs/config.md; \"siitperf: Key\" names the siitperf.conf key."
    );

    let t = &cfg.tester;
    o.header("tester");
    let backend = match t.backend {
        Backend::Mem => "mem",
        Backend::AfPacket => "afpacket",
        Backend::AfXdp => "afxdp",
        Backend::Dpdk => "dpdk",
    };
    o.key("tester.backend", s(backend));
    o.key("tester.left_port", s(&t.left_port));
    o.key("tester.right_port", s(&t.right_port));
    o.opt("tester.netns", t.netns.as_deref().map(s));
    o.key(
        "tester.eal_args",
        toml::Value::Array(t.eal_args.iter().map(|a| toml::Value::String(a.clone())).collect()).to_string(),
    );
    o.key("tester.promisc", t.promisc.to_string());
    o.key("tester.loopback", t.loopback.to_string());
    o.opt("tester.mem_channels", t.mem_channels.map(|m| m.to_string()));
    o.key("tester.queues", t.queues.to_string());
    o.opt("tester.max_send_lag_us", t.max_send_lag_us.map(|m| m.to_string()));
    o.opt("tester.max_send_lag_frames", t.max_send_lag_frames.map(|m| m.to_string()));
    o.opt("tester.catch_up_percent", t.catch_up_percent.map(|m| m.to_string()));
    o.opt("tester.timestamps", t.timestamps.map(|m| s(m.name())));
    o.key("tester.flow_control", s(t.flow_control.name()));
    o.opt("tester.rx_descriptors", t.rx_descriptors.map(|d| d.to_string()));
    o.opt("tester.tx_descriptors", t.tx_descriptors.map(|d| d.to_string()));
    o.header("tester.cpus");
    o.opt("tester.cpus.left_send", t.cpus.left_send.map(|c| c.to_string()));
    o.opt("tester.cpus.right_recv", t.cpus.right_recv.map(|c| c.to_string()));
    o.opt("tester.cpus.right_send", t.cpus.right_send.map(|c| c.to_string()));
    o.opt("tester.cpus.left_recv", t.cpus.left_recv.map(|c| c.to_string()));

    let st = &cfg.setup;
    for id in [SideId::Left, SideId::Right] {
        side(&mut o, id.name(), st.side(id));
    }

    o.header("traffic");
    o.key("traffic.forward", st.forward.to_string());
    o.key("traffic.reverse", st.reverse.to_string());
    let kv = format!("foreground = {{ n = {}, m = {} }}", st.fg_n, st.fg_m);
    let _ = writeln!(
        o.0,
        "{kv:<COLUMN$} # frame i is foreground when i % n < m (siitperf: <n> <m> on the command line)"
    );
    // TOML integers are signed 64-bit: a larger seed (never read from a file) cannot be written.
    o.opt("traffic.seed", st.seed.filter(|v| i64::try_from(*v).is_ok()).map(|v| v.to_string()));
    o.key("traffic.allow_foreign_addresses", st.allow_foreign_addresses.to_string());
    for (dir, d, ports) in [("forward", "Fwd", &st.forward_ports), ("reverse", "Rev", &st.reverse_ports)] {
        o.header(&format!("traffic.{dir}_ports"));
        for (name, p, f) in [("sport", "s", &ports.sport), ("dport", "d", &ports.dport)] {
            let kv = format!("{name} = {}", port_field(f));
            let _ = writeln!(o.0, "{kv:<COLUMN$} # (siitperf: {d}-var-{p}port, {d}-{p}port-min, {d}-{p}port-max)");
        }
    }

    let sf = &st.stateful;
    o.header("stateful");
    let mode = match sf.mode {
        Stateful::Off => STATEFUL_NAMES[0],
        Stateful::InitiatorLeft => STATEFUL_NAMES[1],
        Stateful::InitiatorRight => STATEFUL_NAMES[2],
    };
    o.key("stateful.mode", s(mode));
    o.key("stateful.enumerate_ports", order(sf.enumerate_ports));
    o.key("stateful.enumerate_ips", order(sf.enumerate_ips));
    o.key("stateful.responder_tuples", variation(sf.responder_tuples));
    let pre = &cfg.stateful;
    o.opt("stateful.preliminary_frames", pre.preliminary_frames.map(|v| v.to_string()));
    o.opt("stateful.state_table", pre.state_table.map(|v| v.to_string()));
    o.opt("stateful.preliminary_rate", pre.preliminary_rate.map(|v| v.to_string()));
    o.opt("stateful.preliminary_timeout_ms", pre.preliminary_timeout_ms.map(|v| v.to_string()));
    o.opt("stateful.phase_delay_ms", pre.phase_delay_ms.map(|v| v.to_string()));

    let tr = &cfg.trial;
    o.header("trial");
    o.key("trial.frame_size", tr.frame_size.to_string());
    o.opt("trial.rate", tr.rate.map(|r| r.to_string()));
    o.key("trial.duration", toml::Value::Float(tr.duration_s).to_string());
    o.key("trial.timeout_ms", tr.timeout_ms.to_string());

    let dut = &cfg.dut;
    o.header("dut");
    o.opt("dut.before_trial", dut.before_trial.as_deref().map(s));
    o.opt("dut.between_phases", dut.between_phases.as_deref().map(s));
    o.opt("dut.delete_all", dut.delete_all.as_deref().map(s));
    o.opt("dut.count", dut.count.as_deref().map(s));
    o.opt("dut.reset", dut.reset.as_deref().map(s));
    o.opt(
        "dut.cpus",
        (!dut.cpus.is_empty()).then(|| s(&xlat_trial::load::cpu_list(&dut.cpus))),
    );
    o.opt("dut.load", dut.load.as_deref().map(s));
    o.0
}

/// An IPv6 address as text; in the NAT64 well-known prefix 64:ff9b::/96 with its embedded
/// IPv4 address written as one (RFC 6052), e.g. `64:ff9b::198.19.0.2`.
fn ipv6_text(a: Ipv6Addr) -> String {
    let o = a.octets();
    if a.segments()[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return format!("64:ff9b::{}", Ipv4Addr::new(o[12], o[13], o[14], o[15]));
    }
    a.to_string()
}

fn port_field(f: &PortField) -> String {
    format!("{{ variation = {}, min = {}, max = {} }}", variation(f.variation), f.min, f.max)
}

fn side(o: &mut Out, id: &str, sd: &Side) {
    let p = |k: &str| format!("{id}.{k}");
    o.header(id);
    o.key(&p("ip_version"), sd.ip_version.number().to_string());
    o.opt(&p("ipv4_real"), sd.ipv4_real.map(|a| s(&a.to_string())));
    o.opt(&p("ipv4_virt"), sd.ipv4_virt.map(|a| s(&a.to_string())));
    o.opt(&p("ipv6_real"), sd.ipv6_real.map(|a| s(&ipv6_text(a))));
    o.opt(&p("ipv6_virt"), sd.ipv6_virt.map(|a| s(&ipv6_text(a))));
    o.opt(&p("tester_mac"), sd.tester_mac.map(|a| s(&a.to_string())));
    o.opt(&p("dut_mac"), sd.dut_mac.map(|a| s(&a.to_string())));
    o.opt(&p("dut_ipv4"), sd.dut_ipv4.map(|a| s(&a.to_string())));
    o.opt(&p("dut_ipv6"), sd.dut_ipv6.map(|a| s(&a.to_string())));
    o.key(&p("num_nets"), sd.num_nets.to_string());
    o.header(&p("ip_variation"));
    let v = &sd.ip_var;
    o.key(&p("ip_variation.variation"), variation(v.variation));
    o.key(&p("ip_variation.min"), v.min.to_string());
    o.key(&p("ip_variation.max"), v.max.to_string());
    o.key(&p("ip_variation.ipv4_offset"), v.ipv4_offset.to_string());
    o.key(&p("ip_variation.ipv6_offset"), v.ipv6_offset.to_string());
    if let Some(t) = sd.tunnel {
        o.header(&p("tunnel"));
        o.key(&p("tunnel.local"), s(&t.local.to_string()));
        o.key(&p("tunnel.remote"), s(&t.remote.to_string()));
    }
    if let Some(m) = sd.map {
        o.header(&p("map"));
        let (a6, l6) = m.rule.ipv6_prefix();
        let (a4, l4) = m.rule.ipv4_prefix();
        o.key(&p("map.rule_ipv6"), s(&format!("{a6}/{l6}")));
        o.key(&p("map.rule_ipv4"), s(&format!("{a4}/{l4}")));
        o.key(&p("map.ea_bits"), m.rule.ea_len().to_string());
        o.key(&p("map.psid_offset"), m.rule.psid_offset().to_string());
        o.key(&p("map.psid_len"), m.rule.psid_len().to_string());
        o.key(&p("map.subscribers"), m.subscribers.to_string());
        o.opt(&p("map.ports"), m.ports.map(|n| n.to_string()));
        o.opt(&p("map.binding_psid"), m.binding_psid.map(|n| n.to_string()));
    }
}

/// A configuration as siitperf's files: `siitperf.conf` in siitperf's own syntax and the
/// `[tester]` table for the companion file beside it ([`crate::COMPANION`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiitperfFiles {
    pub conf: String,
    pub companion: String,
}

impl SiitperfFiles {
    /// Write `DIR/siitperf.conf` and the companion beside it, each atomically
    /// ([`crate::files::write_atomic`]), creating `dir` if needed; an error names the path.
    pub fn write_into(&self, dir: &std::path::Path) -> std::io::Result<()> {
        let named = |p: &std::path::Path, e: std::io::Error| std::io::Error::new(e.kind(), format!("writing {}: {e}", p.display()));
        std::fs::create_dir_all(dir).map_err(|e| named(dir, e))?;
        for (name, text) in [("siitperf.conf", &self.conf), (crate::model::COMPANION, &self.companion)] {
            let path = dir.join(name);
            crate::files::write_atomic(&path, text.as_bytes()).map_err(|e| named(&path, e))?;
        }
        Ok(())
    }
}

/// The configuration as siitperf.conf (every key siitperf has, in its syntax) and the tester's
/// ports as the companion TOML; what belongs on siitperf's command line (frame size, rate,
/// duration, timeout, n, m, and N M R T D) is named in a comment. `Err` names the first key
/// whose setting siitperf cannot express (its DUT hooks, a DUT MAC left to resolution).
pub fn to_siitperf(cfg: &TestConfig) -> Result<SiitperfFiles, SiitperfError> {
    let d = &cfg.dut;
    for (key, h) in [
        ("dut.before_trial", &d.before_trial),
        ("dut.between_phases", &d.between_phases),
        ("dut.delete_all", &d.delete_all),
        ("dut.count", &d.count),
        ("dut.reset", &d.reset),
        ("dut.load", &d.load),
    ] {
        if let Some(h) = h {
            return Err(SiitperfError::DutCommand { key, command: h.clone() });
        }
    }
    let s = &cfg.setup;
    for (side, on, name) in [(&s.left, s.forward, "left"), (&s.right, s.reverse, "right")] {
        if side.tunnel.is_some() {
            let why = "encapsulated frames (it has no IPv4-in-IPv6 keys)";
            return Err(SiitperfError::NotInSiitperf {
                side: name,
                what: "tunnel",
                why,
            });
        }
        if side.map.is_some() {
            let why = "frames of many MAP CEs (it has no mapping rule keys)";
            return Err(SiitperfError::NotInSiitperf {
                side: name,
                what: "map",
                why,
            });
        }
        if side.dut_mac.is_none() && (on || s.stateful.mode != Stateful::Off) {
            let conf = if name == "left" { "MAC-L-DUT" } else { "MAC-R-DUT" };
            return Err(SiitperfError::DutMac { side: name, conf });
        }
    }
    let table: toml::Table = to_toml(cfg).parse().map_err(SiitperfError::Internal)?;
    let lookup = |path: &str| -> Option<&toml::Value> {
        let mut parts = path.split('.');
        let mut v = table.get(parts.next()?)?;
        for p in parts {
            v = v.get(p)?;
        }
        Some(v)
    };
    let mut conf = String::new();
    let _ = writeln!(
        conf,
        "# siitperf.conf written by xlatperf from {}",
        cfg.source.file.replace('\n', " ")
    );
    let t = &cfg.trial;
    let rate = t.rate.map_or("<rate>".to_string(), |r| r.to_string());
    let mut line = format!(
        "# command line: siitperf-tp {} {rate} {} {} {} {}",
        t.frame_size, t.duration_s, t.timeout_ms, s.fg_n, s.fg_m
    );
    if s.stateful.mode != Stateful::Off {
        let p = &cfg.stateful;
        let n = |v: Option<u64>, name: &str| v.map_or(format!("<{name}>"), |v| v.to_string());
        let _ = write!(
            line,
            " {} {} {} {} {}",
            n(p.preliminary_frames.map(u64::from), "N"),
            n(p.state_table.map(u64::from), "M"),
            n(p.preliminary_rate, "R"),
            n(p.preliminary_timeout_ms, "T"),
            n(p.phase_delay_ms, "D")
        );
    }
    let _ = writeln!(conf, "{line}");
    for k in keys::KEYS {
        let (Some(name), Some(cv)) = (k.conf_name(), k.conf_value) else {
            continue;
        };
        if k.path.starts_with("tester.") && k.path != "tester.promisc" {
            continue;
        }
        let Some(v) = lookup(k.path) else { continue };
        let code = |names: &[&str]| v.as_str().and_then(|x| names.iter().position(|n| *n == x)).map(|i| i.to_string());
        let text = match cv {
            keys::ConfValue::Version | keys::ConfValue::Number => v.as_integer().map(|i| i.to_string()),
            keys::ConfValue::Ipv4 | keys::ConfValue::Ipv6 | keys::ConfValue::Mac => v.as_str().map(str::to_string),
            keys::ConfValue::Flag => v.as_bool().map(|b| u8::from(b).to_string()),
            keys::ConfValue::Variation | keys::ConfValue::Tuples => code(&VARIATION_NAMES),
            keys::ConfValue::Enumerate => code(&ENUMERATE_NAMES),
            keys::ConfValue::Stateful => code(&STATEFUL_NAMES),
        };
        let Some(text) = text else {
            return Err(SiitperfError::NoForm {
                key: k.path,
                value: v.to_string(),
            });
        };
        let _ = writeln!(conf, "{name} {text}");
    }
    // The companion: the [tester] table as to_toml writes it.
    let full = to_toml(cfg);
    let mut companion = format!(
        "# The tester's ports for siitperf.conf beside this file ({}): siitperf compiles them into its binary.\n",
        crate::model::COMPANION
    );
    let mut inside = false;
    for l in full.lines() {
        if l.starts_with('[') {
            inside = l == "[tester]" || l.starts_with("[tester.");
        }
        if inside {
            let _ = writeln!(companion, "{l}");
        }
    }
    Ok(SiitperfFiles { conf, companion })
}
