//! The catalogue of every key of the test description: its TOML dotted path, its siitperf.conf
//! name (where siitperf has one), its type, range, default and meaning. The readers, the
//! `--set` overrides, the error messages, `to_toml` and docs/config.md all follow this table.

use std::sync::OnceLock;

/// The TOML type of a key's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    /// A TOML integer.
    Int,
    /// A TOML string.
    Str,
    /// `true` or `false`.
    Bool,
    /// A TOML float or integer.
    Float,
    /// An array of strings.
    StrList,
    /// A string or a non-negative integer (a port name or a DPDK port id).
    Port,
}

impl ValueType {
    /// What a value of this type looks like, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            ValueType::Int => "a whole number",
            ValueType::Str => "a string",
            ValueType::Bool => "true or false",
            ValueType::Float => "a number",
            ValueType::StrList => "an array of strings",
            ValueType::Port => "a port name (string) or a DPDK port id (number)",
        }
    }
}

/// How siitperf.conf writes a key's value, and how it becomes the TOML value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfValue {
    /// 4 or 6.
    Version,
    /// An IPv4 address, kept as text.
    Ipv4,
    /// An IPv6 address, kept as text.
    Ipv6,
    /// A MAC address, kept as text.
    Mac,
    /// 0 or 1, becomes a boolean.
    Flag,
    /// A decimal or 0x hexadecimal number.
    Number,
    /// 0 fixed, 1 increasing, 2 decreasing, 3 pseudorandom.
    Variation,
    /// 0 no, 1 increasing, 2 decreasing, 3 pseudorandom.
    Enumerate,
    /// 0 stateless, 1 Initiator left, 2 Initiator right.
    Stateful,
    /// 0 one fixed tuple, 1 increasing, 2 decreasing, 3 pseudorandom.
    Tuples,
}

impl ConfValue {
    /// The values siitperf.conf allows, as the error messages list them.
    pub fn allowed(self) -> &'static str {
        match self {
            ConfValue::Version => "4 or 6",
            ConfValue::Ipv4 => "an IPv4 address, e.g. 198.18.0.2",
            ConfValue::Ipv6 => "an IPv6 address, e.g. 2001:2::2 or 64:ff9b::198.19.0.2",
            ConfValue::Mac => "a MAC address, e.g. 02:00:00:00:00:01",
            ConfValue::Flag => "0 or 1",
            ConfValue::Number => "a decimal or 0x hexadecimal number",
            ConfValue::Variation => "0 fixed, 1 increasing, 2 decreasing, 3 pseudorandom",
            ConfValue::Enumerate => "0 no, 1 increasing, 2 decreasing, 3 pseudorandom",
            ConfValue::Stateful => "0 stateless, 1 Initiator left / Responder right, 2 Initiator right / Responder left",
            ConfValue::Tuples => "0 one fixed tuple, 1 increasing, 2 decreasing, 3 pseudorandom",
        }
    }
}

/// One key of the test description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyDef {
    /// The TOML dotted path, e.g. `left.ip_variation.min`.
    pub path: String,
    /// The siitperf.conf names (the first is the canonical one); empty: TOML only.
    pub conf: Vec<&'static str>,
    pub value_type: ValueType,
    /// How siitperf.conf writes it (when `conf` is not empty).
    pub conf_value: Option<ConfValue>,
    /// Inclusive range of an integer key, checked when the file is read.
    pub range: Option<(i64, i64)>,
    /// The default, as text for people.
    pub default: &'static str,
    /// What it means, one line.
    pub doc: String,
}

impl KeyDef {
    /// The canonical siitperf.conf name, if siitperf has this key.
    pub fn conf_name(&self) -> Option<&'static str> {
        self.conf.first().copied()
    }
}

/// Names for the values of a [`xlat_traffic::Variation`] in TOML.
pub const VARIATION_NAMES: [&str; 4] = ["fixed", "increasing", "decreasing", "pseudorandom"];
/// Names for enumeration orders in TOML (`off` = no enumeration).
pub const ENUMERATE_NAMES: [&str; 4] = ["off", "increasing", "decreasing", "pseudorandom"];
/// Names for [`xlat_traffic::Stateful`] in TOML.
pub const STATEFUL_NAMES: [&str; 3] = ["off", "initiator-left", "initiator-right"];
/// Names for the backends in TOML.
pub const BACKEND_NAMES: [&str; 3] = ["mem", "afpacket", "dpdk"];

/// Every key, in the order `to_toml` prints them.
pub fn keys() -> &'static [KeyDef] {
    static KEYS: OnceLock<Vec<KeyDef>> = OnceLock::new();
    KEYS.get_or_init(build)
}

/// The key with TOML path `path`.
pub fn by_path(path: &str) -> Option<&'static KeyDef> {
    keys().iter().find(|k| k.path == path)
}

/// The key with siitperf.conf name `name` (case-sensitive, as siitperf matches it).
pub fn by_conf_name(name: &str) -> Option<&'static KeyDef> {
    keys().iter().find(|k| k.conf.contains(&name))
}

/// True when `path` names a table that holds keys (e.g. `left`, `traffic.forward_ports.sport`).
pub fn is_table(path: &str) -> bool {
    keys()
        .iter()
        .any(|k| k.path.len() > path.len() && k.path.starts_with(path) && k.path.as_bytes()[path.len()] == b'.')
}

/// The closest known key to an unknown one, for "did you mean" hints.
pub fn suggest(unknown: &str) -> Option<String> {
    if let Some(k) = by_conf_name(unknown) {
        return Some(k.path.clone());
    }
    if let Some(k) = keys().iter().find(|k| k.conf.iter().any(|c| c.eq_ignore_ascii_case(unknown))) {
        return Some(k.conf_name().unwrap_or(&k.path).to_string());
    }
    let mut best: Option<(usize, &KeyDef)> = None;
    for k in keys() {
        let d = edit_distance(unknown, &k.path);
        if !matches!(best, Some((b, _)) if b <= d) {
            best = Some((d, k));
        }
    }
    match best {
        Some((d, k)) if d <= 3 => Some(k.path.clone()),
        _ => None,
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().take(64).collect(), b.chars().collect());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

struct Builder(Vec<KeyDef>);

impl Builder {
    #[allow(clippy::too_many_arguments)]
    fn key(
        &mut self,
        path: String,
        conf: Vec<&'static str>,
        value_type: ValueType,
        conf_value: Option<ConfValue>,
        range: Option<(i64, i64)>,
        default: &'static str,
        doc: String,
    ) {
        self.0.push(KeyDef {
            path,
            conf,
            value_type,
            conf_value,
            range,
            default,
            doc,
        });
    }

    fn toml(&mut self, path: &str, t: ValueType, range: Option<(i64, i64)>, default: &'static str, doc: &str) {
        self.key(path.to_string(), vec![], t, None, range, default, doc.to_string());
    }

    #[allow(clippy::too_many_arguments)]
    fn both(
        &mut self,
        path: String,
        conf: &'static str,
        t: ValueType,
        cv: ConfValue,
        range: Option<(i64, i64)>,
        default: &'static str,
        doc: String,
    ) {
        self.key(path, vec![conf], t, Some(cv), range, default, doc);
    }
}

/// siitperf.conf names are built from parts; leak them once so that the catalogue can hand out
/// `&'static str` (the catalogue itself is built once per process).
fn name(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn build() -> Vec<KeyDef> {
    use ConfValue as C;
    use ValueType as T;
    let mut b = Builder(Vec::new());
    b.toml(
        "tester.backend",
        T::Str,
        None,
        "\"afpacket\" (siitperf.conf: \"dpdk\")",
        "how the tester opens its ports: mem, afpacket or dpdk",
    );
    b.toml(
        "tester.left_port",
        T::Port,
        None,
        "dpdk: \"0\"; mem: \"mem0\"; afpacket: required",
        "left port: interface name (afpacket), DPDK port id or vdev name (dpdk)",
    );
    b.toml(
        "tester.right_port",
        T::Port,
        None,
        "dpdk: \"1\"; mem: \"mem1\"; afpacket: required",
        "right port: interface name (afpacket), DPDK port id or vdev name (dpdk)",
    );
    b.toml(
        "tester.netns",
        T::Str,
        None,
        "none (the current namespace)",
        "network namespace the tester ports live in (afpacket)",
    );
    b.toml("tester.eal_args", T::StrList, None, "[]", "DPDK EAL arguments (dpdk only)");
    b.toml(
        "tester.loopback",
        T::Bool,
        None,
        "false",
        "the ports are cabled to each other, no DUT (self-test)",
    );
    b.both(
        "tester.promisc".into(),
        "Promisc",
        T::Bool,
        C::Flag,
        None,
        "false",
        "receive in promiscuous mode".into(),
    );
    b.both(
        "tester.mem_channels".into(),
        "MEM-Channels",
        T::Int,
        C::Number,
        Some((1, i64::from(u32::MAX))),
        "none",
        "DPDK memory channels: accepted, not passed on (give EAL's -n in eal_args)".into(),
    );
    for (role, conf, what) in [
        ("left_send", "CPU-L-Send", "left sender (forward)"),
        ("right_recv", "CPU-R-Recv", "right receiver (forward)"),
        ("right_send", "CPU-R-Send", "right sender (reverse)"),
        ("left_recv", "CPU-L-Recv", "left receiver (reverse)"),
    ] {
        b.both(
            format!("tester.cpus.{role}"),
            conf,
            T::Int,
            C::Number,
            Some((0, 1023)),
            "chosen by xlatperf",
            format!("CPU core of the {what}"),
        );
    }
    for (side, l) in [("left", "L"), ("right", "R")] {
        b.both(
            format!("{side}.ip_version"),
            name(format!("IP-{l}-Vers")),
            T::Int,
            C::Version,
            None,
            "required",
            format!("IP version of the {side} side's foreground traffic: 4 or 6"),
        );
        for (fam, kind, cv) in [
            ("4", "real", C::Ipv4),
            ("4", "virt", C::Ipv4),
            ("6", "real", C::Ipv6),
            ("6", "virt", C::Ipv6),
        ] {
            let (kind_title, kind_word) = if kind == "real" { ("Real", "real") } else { ("Virt", "virtual") };
            b.both(
                format!("{side}.ipv{fam}_{kind}"),
                name(format!("IPv{fam}-{l}-{kind_title}")),
                T::Str,
                cv,
                None,
                "not set",
                format!("{side} side's {kind_word} IPv{fam} address"),
            );
        }
        b.both(
            format!("{side}.tester_mac"),
            name(format!("MAC-{l}-Tester")),
            T::Str,
            C::Mac,
            None,
            "the port's own MAC",
            format!("Ethernet source of the {side} port's frames"),
        );
        b.both(
            format!("{side}.dut_mac"),
            name(format!("MAC-{l}-DUT")),
            T::Str,
            C::Mac,
            None,
            "resolved by ARP/NDP",
            format!("Ethernet destination of the {side} port's frames (the DUT's {side} MAC)"),
        );
        b.toml(
            &format!("{side}.dut_ipv4"),
            T::Str,
            None,
            "not set",
            "the DUT's IPv4 address on this side, to resolve dut_mac by ARP",
        );
        b.toml(
            &format!("{side}.dut_ipv6"),
            T::Str,
            None,
            "not set",
            "the DUT's IPv6 address on this side, to resolve dut_mac by NDP",
        );
        b.both(
            format!("{side}.num_nets"),
            name(format!("Num-{l}-Nets")),
            T::Int,
            C::Number,
            Some((1, 256)),
            "1",
            format!("destination networks of frames sent to the {side} side"),
        );
        b.both(
            format!("{side}.ip_variation.variation"),
            name(format!("IP-{l}-var")),
            T::Str,
            C::Variation,
            None,
            "\"fixed\"",
            format!("how the 16-bit varying part of the {side} side's addresses varies"),
        );
        b.both(
            format!("{side}.ip_variation.min"),
            name(format!("IP-{l}-min")),
            T::Int,
            C::Number,
            Some((0, 65535)),
            "0",
            "smallest value of the varying part".into(),
        );
        b.both(
            format!("{side}.ip_variation.max"),
            name(format!("IP-{l}-max")),
            T::Int,
            C::Number,
            Some((0, 65535)),
            "65535",
            "largest value of the varying part".into(),
        );
        b.both(
            format!("{side}.ip_variation.ipv4_offset"),
            name(format!("IPv4-{l}-offset")),
            T::Int,
            C::Number,
            Some((0, 255)),
            "2",
            "byte offset of the varying part in IPv4 addresses: only 2 (the last 16 bits)".into(),
        );
        b.both(
            format!("{side}.ip_variation.ipv6_offset"),
            name(format!("IPv6-{l}-offset")),
            T::Int,
            C::Number,
            Some((0, 255)),
            "14",
            "byte offset of the varying part in IPv6 addresses: 6-14, even".into(),
        );
    }
    b.both(
        "traffic.forward".into(),
        "Forward",
        T::Bool,
        C::Flag,
        None,
        "true (siitperf.conf: 0)",
        "left to right direction active".into(),
    );
    b.both(
        "traffic.reverse".into(),
        "Reverse",
        T::Bool,
        C::Flag,
        None,
        "true (siitperf.conf: 0)",
        "right to left direction active".into(),
    );
    b.toml(
        "traffic.foreground.n",
        T::Int,
        Some((2, i64::from(u32::MAX))),
        "2",
        "frame i is foreground when i % n < m",
    );
    b.toml(
        "traffic.foreground.m",
        T::Int,
        Some((0, i64::from(u32::MAX))),
        "2",
        "foreground frames of every n (m = n: all foreground)",
    );
    b.toml(
        "traffic.seed",
        T::Int,
        Some((0, i64::MAX)),
        "drawn at random and reported",
        "seed of the pseudorandom streams",
    );
    b.toml(
        "traffic.allow_foreign_addresses",
        T::Bool,
        None,
        "false",
        "allow destination addresses outside the benchmarking ranges",
    );
    for (dir, d) in [("forward", "Fwd"), ("reverse", "Rev")] {
        for (port, p, (lo, hi)) in [
            ("sport", "s", xlat_traffic::RFC4814_SPORT),
            ("dport", "d", xlat_traffic::RFC4814_DPORT),
        ] {
            let what = if port == "sport" { "source" } else { "destination" };
            b.both(
                format!("traffic.{dir}_ports.{port}.variation"),
                name(format!("{d}-var-{p}port")),
                T::Str,
                C::Variation,
                None,
                "\"fixed\"",
                format!("how the UDP {what} port of {dir} frames varies (RFC 4814: pseudorandom)"),
            );
            let (dmin, dmax): (&'static str, &'static str) = (name(lo.to_string()), name(hi.to_string()));
            b.both(
                format!("traffic.{dir}_ports.{port}.min"),
                name(format!("{d}-{p}port-min")),
                T::Int,
                C::Number,
                Some((0, 65535)),
                dmin,
                format!("smallest {what} port of {dir} frames"),
            );
            b.both(
                format!("traffic.{dir}_ports.{port}.max"),
                name(format!("{d}-{p}port-max")),
                T::Int,
                C::Number,
                Some((0, 65535)),
                dmax,
                format!("largest {what} port of {dir} frames"),
            );
        }
    }
    b.both(
        "stateful.mode".into(),
        "Stateful",
        T::Str,
        C::Stateful,
        None,
        "\"off\"",
        "stateful test (RFC 9693): where the Initiator is".into(),
    );
    b.both(
        "stateful.enumerate_ports".into(),
        "Enumerate-ports",
        T::Str,
        C::Enumerate,
        None,
        "\"off\"",
        "phase 1 enumerates all port number combinations".into(),
    );
    b.both(
        "stateful.enumerate_ips".into(),
        "Enumerate-ips",
        T::Str,
        C::Enumerate,
        None,
        "\"off\"",
        "phase 1 enumerates all IP address combinations".into(),
    );
    b.key(
        "stateful.responder_tuples".into(),
        vec!["Responder-tuples", "Responder-ports"],
        T::Str,
        Some(C::Tuples),
        None,
        "\"fixed\"",
        "how the Responder picks four-tuples from its state table in phase 2".into(),
    );
    b.toml(
        "trial.frame_size",
        T::Int,
        Some((0, 65535)),
        "84",
        "siitperf's IPv6 frame size incl. FCS; IPv4 frames are 20 bytes shorter",
    );
    b.toml(
        "trial.rate",
        T::Int,
        Some((1, 1_000_000_000)),
        "none (give --rate)",
        "frames per second per active direction",
    );
    b.toml("trial.duration", T::Float, None, "60", "seconds of sending");
    b.toml(
        "trial.timeout_ms",
        T::Int,
        Some((0, 60_000)),
        "2000",
        "ms the receivers keep receiving after sending ended",
    );
    b.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_consistent() {
        let mut paths = HashSet::new();
        let mut confs = HashSet::new();
        for k in keys() {
            assert!(paths.insert(k.path.as_str()), "{} twice", k.path);
            for c in &k.conf {
                assert!(confs.insert(*c), "{c} twice");
            }
            assert_eq!(k.conf.is_empty(), k.conf_value.is_none(), "{}", k.path);
            assert!(!is_table(&k.path), "{} is a key and a table", k.path);
        }
        // siitperf's 50 siitperf.conf keys (docs/siitperf-compat.md), plus the Responder-ports alias.
        assert_eq!(confs.len(), 51);
        assert!(is_table("traffic.forward_ports.sport") && is_table("left") && !is_table("lef"));
    }

    #[test]
    fn suggestions() {
        assert_eq!(suggest("left.ipv4_rael").as_deref(), Some("left.ipv4_real"));
        assert_eq!(suggest("IP-L-Vers").as_deref(), Some("left.ip_version"));
        assert_eq!(suggest("ip-l-vers").as_deref(), Some("IP-L-Vers"));
        assert_eq!(suggest("completely.different.thing"), None);
    }
}
