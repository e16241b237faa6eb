//! The catalogue of every key of the test description: its TOML dotted path, its siitperf.conf
//! name (where siitperf has one), its type, range, default and meaning. The readers, the
//! `--set` overrides, the error messages, `to_toml` and docs/config.md all follow this table.
//!
//! The table is data: [`KEYS`], one row per key, written out in full (left and right, forward
//! and reverse alike) so that searching for a siitperf.conf name finds its row.

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyDef {
    /// The TOML dotted path, e.g. `left.ip_variation.min`.
    pub path: &'static str,
    /// The siitperf.conf names (the first is the canonical one); empty: TOML only.
    pub conf: &'static [&'static str],
    pub value_type: ValueType,
    /// How siitperf.conf writes it (when `conf` is not empty).
    pub conf_value: Option<ConfValue>,
    /// Inclusive range of an integer key, checked when the file is read.
    pub range: Option<(i64, i64)>,
    /// The default, as text for people.
    pub default: &'static str,
    /// What it means, one line.
    pub doc: &'static str,
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
pub const BACKEND_NAMES: [&str; 4] = ["mem", "afpacket", "afxdp", "dpdk"];

/// Every key, in the order `to_toml` prints them.
pub fn keys() -> &'static [KeyDef] {
    KEYS
}

/// The key with TOML path `path`.
pub fn by_path(path: &str) -> Option<&'static KeyDef> {
    KEYS.iter().find(|k| k.path == path)
}

/// The key with siitperf.conf name `name` (case-sensitive, as siitperf matches it).
pub fn by_conf_name(name: &str) -> Option<&'static KeyDef> {
    KEYS.iter().find(|k| k.conf.contains(&name))
}

/// True when `path` names a table that holds keys (e.g. `left`, `traffic.forward_ports.sport`).
pub fn is_table(path: &str) -> bool {
    KEYS.iter()
        .any(|k| k.path.len() > path.len() && k.path.starts_with(path) && k.path.as_bytes()[path.len()] == b'.')
}

/// The closest known key to an unknown one, for "did you mean" hints.
pub fn suggest(unknown: &str) -> Option<String> {
    if let Some(k) = by_conf_name(unknown) {
        return Some(k.path.to_string());
    }
    if let Some(k) = KEYS.iter().find(|k| k.conf.iter().any(|c| c.eq_ignore_ascii_case(unknown))) {
        return Some(k.conf_name().unwrap_or(k.path).to_string());
    }
    let mut best: Option<(usize, &KeyDef)> = None;
    for k in KEYS {
        let d = edit_distance(unknown, k.path);
        if !matches!(best, Some((b, _)) if b <= d) {
            best = Some((d, k));
        }
    }
    match best {
        Some((d, k)) if d <= 3 => Some(k.path.to_string()),
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

/// A key of the TOML file that siitperf.conf does not have.
const fn toml(path: &'static str, value_type: ValueType, range: Option<(i64, i64)>, default: &'static str, doc: &'static str) -> KeyDef {
    KeyDef {
        path,
        conf: &[],
        value_type,
        conf_value: None,
        range,
        default,
        doc,
    }
}

/// A key that siitperf.conf has too, under the names `conf` (the first one canonical).
const fn conf(
    path: &'static str,
    conf: &'static [&'static str],
    value_type: ValueType,
    conf_value: ConfValue,
    range: Option<(i64, i64)>,
    default: &'static str,
    doc: &'static str,
) -> KeyDef {
    KeyDef {
        path,
        conf,
        value_type,
        conf_value: Some(conf_value),
        range,
        default,
        doc,
    }
}

/// Largest value of a u32 key.
const U32_MAX: i64 = u32::MAX as i64;

/// Every key, in the order `to_toml` prints them: `toml(path, type, range, default, doc)` or
/// `conf(path, siitperf.conf names, type, siitperf.conf value, range, default, doc)`.
#[rustfmt::skip]
pub static KEYS: &[KeyDef] = {
    use ConfValue as C;
    use ValueType as T;
    &[
    // [tester]
    toml("tester.backend",                                   T::Str,     None,                  "\"afpacket\" (siitperf.conf: \"dpdk\")",
         "how the tester opens its ports: mem, afpacket, afxdp or dpdk"),
    toml("tester.left_port",                                 T::Port,    None, "dpdk: \"0\"; mem: \"mem0\"; afpacket, afxdp: required",
         "left port: interface name (afpacket, afxdp), DPDK port id or vdev name (dpdk)"),
    toml("tester.right_port",                                T::Port,    None, "dpdk: \"1\"; mem: \"mem1\"; afpacket, afxdp: required",
         "right port: interface name (afpacket, afxdp), DPDK port id or vdev name (dpdk)"),
    toml("tester.netns",                                     T::Str,     None,                  "none (the current namespace)",
         "network namespace the tester ports live in (afpacket, afxdp)"),
    toml("tester.eal_args",                                  T::StrList, None,                  "[]",
         "DPDK EAL arguments (dpdk only)"),
    toml("tester.loopback",                                  T::Bool,    None,                  "false",
         "the ports are cabled to each other, no DUT (self-test)"),
    conf("tester.promisc",        &["Promisc"],              T::Bool,    C::Flag,    None,                  "false (siitperf.conf: 1)",
         "receive in promiscuous mode"),
    conf("tester.mem_channels",   &["MEM-Channels"],         T::Int,     C::Number,  Some((1, U32_MAX)),    "none",
         "DPDK memory channels: accepted, not passed on (give EAL's -n in eal_args)"),
    toml("tester.queues",                                    T::Int,     Some((1, 64)),         "1",
         "queues per port: each runs a sender and a receiver on a core of its own (afpacket: a fanout group; mem); the direction's frames are dealt out among them in chunks of 64"),
    toml("tester.max_send_lag_us",                           T::Int,     Some((1, 10_000_000)), "none",
         "a trial whose sender fell more than this many microseconds behind its schedule is invalid (a stall of the tester's, which the DUT would see as a burst); none: only the end of sending is judged"),
    toml("tester.max_send_lag_frames",                       T::Int,     Some((1, 10_000_000)), "none (the lab's: 250)",
         "the same bound in frames: a trial whose sender fell more than this many of its frames behind (its lag times the rate: the burst it then sends to catch up) is invalid; with max_send_lag_us the tighter one holds"),
    toml("tester.catch_up_percent",                          T::Int,     Some((1, 10_000)),     "100",
         "with a lag bound: a sender that fell behind its schedule catches up at most this many percent above its rate, after at most the bound in frames at once (a token bucket); lost frames sent in a catch-up, or right after it, make the trial invalid (docs/validity.md)"),
    toml("tester.timestamps",                                T::Str,     None,                  "\"auto\"",
         "what stamps the frames for latency and delays: auto (the best the ports offer that xlatperf reads), user (the tester's own clock in user space), kernel, hardware; a source the port or this build cannot give is refused, naming the port"),
    toml("tester.flow_control",                              T::Str,     None,                  "\"off\"",
         "Ethernet flow control (PAUSE frames) on the tester's ports: off (a DUT's overload is its loss, not the tester's slowing down), on, keep (as the port is); read back and recorded in every result (meta.ports); on is refused for a port that has none (a veth, net_null)"),
    toml("tester.rx_descriptors",                            T::Int,     Some((64, 32_768)),    "1024 (the dpdk-fwd lab's: its virtio ring)",
         "dpdk: receive descriptors per receive queue, as testpmd's --rxd: frames the port holds while the receiver is away (the driver may adjust; the mempool grows with it)"),
    toml("tester.tx_descriptors",                            T::Int,     Some((64, 32_768)),    "1024 (the dpdk-fwd lab's: its virtio ring)",
         "dpdk: transmit descriptors per transmit queue, as testpmd's --txd (the driver may adjust; the mempool grows with it)"),
    // [tester.cpus]
    conf("tester.cpus.left_send",  &["CPU-L-Send"],          T::Int,     C::Number,  Some((0, 1023)),       "chosen by xlatperf",
         "CPU core of the left sender (forward)"),
    conf("tester.cpus.right_recv", &["CPU-R-Recv"],          T::Int,     C::Number,  Some((0, 1023)),       "chosen by xlatperf",
         "CPU core of the right receiver (forward)"),
    conf("tester.cpus.right_send", &["CPU-R-Send"],          T::Int,     C::Number,  Some((0, 1023)),       "chosen by xlatperf",
         "CPU core of the right sender (reverse)"),
    conf("tester.cpus.left_recv",  &["CPU-L-Recv"],          T::Int,     C::Number,  Some((0, 1023)),       "chosen by xlatperf",
         "CPU core of the left receiver (reverse)"),
    // [left]
    conf("left.ip_version",       &["IP-L-Vers"],            T::Int,     C::Version, None,                  "required",
         "IP version of the left side's foreground traffic: 4 or 6"),
    conf("left.ipv4_real",        &["IPv4-L-Real"],          T::Str,     C::Ipv4,    None,                  "not set",
         "left side's real IPv4 address"),
    conf("left.ipv4_virt",        &["IPv4-L-Virt"],          T::Str,     C::Ipv4,    None,                  "not set",
         "left side's virtual IPv4 address"),
    conf("left.ipv6_real",        &["IPv6-L-Real"],          T::Str,     C::Ipv6,    None,                  "not set",
         "left side's real IPv6 address"),
    conf("left.ipv6_virt",        &["IPv6-L-Virt"],          T::Str,     C::Ipv6,    None,                  "not set",
         "left side's virtual IPv6 address"),
    conf("left.tester_mac",       &["MAC-L-Tester"],         T::Str,     C::Mac,     None,                  "the port's own MAC",
         "Ethernet source of the left port's frames"),
    conf("left.dut_mac",          &["MAC-L-DUT"],            T::Str,     C::Mac,     None,                  "resolved by ARP/NDP",
         "Ethernet destination of the left port's frames (the DUT's left MAC)"),
    toml("left.dut_ipv4",                                    T::Str,     None,                  "not set",
         "the DUT's IPv4 address on this side, to resolve dut_mac by ARP"),
    toml("left.dut_ipv6",                                    T::Str,     None,                  "not set",
         "the DUT's IPv6 address on this side, to resolve dut_mac by NDP"),
    conf("left.num_nets",         &["Num-L-Nets"],           T::Int,     C::Number,  Some((1, 256)),        "1",
         "destination networks of frames sent to the left side"),
    conf("left.ip_variation.variation",   &["IP-L-var"],     T::Str,     C::Variation, None,                "\"fixed\"",
         "how the 16-bit varying part of the left side's addresses varies"),
    conf("left.ip_variation.min",         &["IP-L-min"],     T::Int,     C::Number,  Some((0, 65535)),      "0",
         "smallest value of the varying part"),
    conf("left.ip_variation.max",         &["IP-L-max"],     T::Int,     C::Number,  Some((0, 65535)),      "65535",
         "largest value of the varying part"),
    conf("left.ip_variation.ipv4_offset", &["IPv4-L-offset"], T::Int,    C::Number,  Some((0, 255)),        "2",
         "byte offset of the varying part in IPv4 addresses: only 2 (the last 16 bits)"),
    conf("left.ip_variation.ipv6_offset", &["IPv6-L-offset"], T::Int,    C::Number,  Some((0, 255)),        "14",
         "byte offset of the varying part in IPv6 addresses: 6-14, even"),
    toml("left.tunnel.local",                               T::Str,     None,                  "not set (native frames)",
         "IPv4 in IPv6 (RFC 2473; DS-Lite B4, lw4o6/MAP-E CE): the outer source of this side's frames, the B4's (first) address; ip_variation then varies it"),
    toml("left.tunnel.remote",                              T::Str,     None,                  "not set (native frames)",
         "IPv4 in IPv6: the outer destination of this side's frames (the AFTR or border relay); set dut_ipv6 to it to resolve the DUT's MAC"),
    toml("left.map.rule_ipv6",                               T::Str,     None,                  "not set (the side's own addresses)",
         "many MAP CEs on this side (RFC 7597, RFC 7599): the Basic Mapping Rule's IPv6 prefix, as address/length (at most /64)"),
    toml("left.map.rule_ipv4",                               T::Str,     None,                  "required with the map table",
         "the rule's IPv4 prefix, as address/length"),
    toml("left.map.ea_bits",                                 T::Int,     Some((0, 48)),         "required with the map table",
         "the rule's EA-bits length: the IPv4 suffix, then the PSID"),
    toml("left.map.psid_offset",                             T::Int,     Some((0, 15)),         "6",
         "the PSID's offset in a port (RFC 7597 section 5.1: ports whose first bits are 0 are in no set)"),
    toml("left.map.psid_len",                                T::Int,     Some((0, 16)),         "what the EA bits leave after the IPv4 suffix",
         "the PSID's length, for a rule without EA bits and with a whole IPv4 address (/32) only"),
    toml("left.map.subscribers",                             T::Int,     Some((1, 65536)),      "1",
         "CEs of the rule, from the side's own on: each frame from or to the side is a pseudorandom one's (RFC 4814)"),
    toml("left.map.ports",                                   T::Int,     Some((1, 65536)),      "the whole set",
         "ports of each CE's set the frames use (from its first), a pseudorandom one per frame"),
    toml("left.map.binding_psid",                            T::Int,     Some((0, 65535)),      "not set (MAP: the rule's CE addresses)",
         "lw4o6 (RFC 7596): the side's own PSID; the CEs are lwB4s whose addresses count up from tunnel.local (a binding table), rule_ipv6 may then be omitted"),
    // [right]
    conf("right.ip_version",      &["IP-R-Vers"],            T::Int,     C::Version, None,                  "required",
         "IP version of the right side's foreground traffic: 4 or 6"),
    conf("right.ipv4_real",       &["IPv4-R-Real"],          T::Str,     C::Ipv4,    None,                  "not set",
         "right side's real IPv4 address"),
    conf("right.ipv4_virt",       &["IPv4-R-Virt"],          T::Str,     C::Ipv4,    None,                  "not set",
         "right side's virtual IPv4 address"),
    conf("right.ipv6_real",       &["IPv6-R-Real"],          T::Str,     C::Ipv6,    None,                  "not set",
         "right side's real IPv6 address"),
    conf("right.ipv6_virt",       &["IPv6-R-Virt"],          T::Str,     C::Ipv6,    None,                  "not set",
         "right side's virtual IPv6 address"),
    conf("right.tester_mac",      &["MAC-R-Tester"],         T::Str,     C::Mac,     None,                  "the port's own MAC",
         "Ethernet source of the right port's frames"),
    conf("right.dut_mac",         &["MAC-R-DUT"],            T::Str,     C::Mac,     None,                  "resolved by ARP/NDP",
         "Ethernet destination of the right port's frames (the DUT's right MAC)"),
    toml("right.dut_ipv4",                                   T::Str,     None,                  "not set",
         "the DUT's IPv4 address on this side, to resolve dut_mac by ARP"),
    toml("right.dut_ipv6",                                   T::Str,     None,                  "not set",
         "the DUT's IPv6 address on this side, to resolve dut_mac by NDP"),
    conf("right.num_nets",        &["Num-R-Nets"],           T::Int,     C::Number,  Some((1, 256)),        "1",
         "destination networks of frames sent to the right side"),
    conf("right.ip_variation.variation",   &["IP-R-var"],    T::Str,     C::Variation, None,                "\"fixed\"",
         "how the 16-bit varying part of the right side's addresses varies"),
    conf("right.ip_variation.min",         &["IP-R-min"],    T::Int,     C::Number,  Some((0, 65535)),      "0",
         "smallest value of the varying part"),
    conf("right.ip_variation.max",         &["IP-R-max"],    T::Int,     C::Number,  Some((0, 65535)),      "65535",
         "largest value of the varying part"),
    conf("right.ip_variation.ipv4_offset", &["IPv4-R-offset"], T::Int,   C::Number,  Some((0, 255)),        "2",
         "byte offset of the varying part in IPv4 addresses: only 2 (the last 16 bits)"),
    conf("right.ip_variation.ipv6_offset", &["IPv6-R-offset"], T::Int,   C::Number,  Some((0, 255)),        "14",
         "byte offset of the varying part in IPv6 addresses: 6-14, even"),
    toml("right.tunnel.local",                               T::Str,     None,                  "not set (native frames)",
         "IPv4 in IPv6 (RFC 2473; DS-Lite B4, lw4o6/MAP-E CE): the outer source of this side's frames, the B4's (first) address; ip_variation then varies it"),
    toml("right.tunnel.remote",                              T::Str,     None,                  "not set (native frames)",
         "IPv4 in IPv6: the outer destination of this side's frames (the AFTR or border relay); set dut_ipv6 to it to resolve the DUT's MAC"),
    toml("right.map.rule_ipv6",                               T::Str,     None,                  "not set (the side's own addresses)",
         "many MAP CEs on this side (RFC 7597, RFC 7599): the Basic Mapping Rule's IPv6 prefix, as address/length (at most /64)"),
    toml("right.map.rule_ipv4",                               T::Str,     None,                  "required with the map table",
         "the rule's IPv4 prefix, as address/length"),
    toml("right.map.ea_bits",                                 T::Int,     Some((0, 48)),         "required with the map table",
         "the rule's EA-bits length: the IPv4 suffix, then the PSID"),
    toml("right.map.psid_offset",                             T::Int,     Some((0, 15)),         "6",
         "the PSID's offset in a port (RFC 7597 section 5.1: ports whose first bits are 0 are in no set)"),
    toml("right.map.psid_len",                                T::Int,     Some((0, 16)),         "what the EA bits leave after the IPv4 suffix",
         "the PSID's length, for a rule without EA bits and with a whole IPv4 address (/32) only"),
    toml("right.map.subscribers",                             T::Int,     Some((1, 65536)),      "1",
         "CEs of the rule, from the side's own on: each frame from or to the side is a pseudorandom one's (RFC 4814)"),
    toml("right.map.ports",                                   T::Int,     Some((1, 65536)),      "the whole set",
         "ports of each CE's set the frames use (from its first), a pseudorandom one per frame"),
    toml("right.map.binding_psid",                            T::Int,     Some((0, 65535)),      "not set (MAP: the rule's CE addresses)",
         "lw4o6 (RFC 7596): the side's own PSID; the CEs are lwB4s whose addresses count up from tunnel.local (a binding table), rule_ipv6 may then be omitted"),
    // [traffic]
    conf("traffic.forward",       &["Forward"],              T::Bool,    C::Flag,    None,                  "true",
         "left to right direction active"),
    conf("traffic.reverse",       &["Reverse"],              T::Bool,    C::Flag,    None,                  "true",
         "right to left direction active"),
    toml("traffic.foreground.n",                             T::Int,     Some((2, U32_MAX)),    "2",
         "frame i is foreground when i % n < m"),
    toml("traffic.foreground.m",                             T::Int,     Some((0, U32_MAX)),    "2",
         "foreground frames of every n (m = n: all foreground)"),
    toml("traffic.seed",                                     T::Int,     Some((0, i64::MAX)),   "drawn at random and reported",
         "seed of the pseudorandom streams"),
    toml("traffic.allow_foreign_addresses",                  T::Bool,    None,                  "false",
         "allow destination addresses outside the benchmarking ranges"),
    // [traffic.forward_ports] and [traffic.reverse_ports]; the defaults are RFC 4814's ranges
    conf("traffic.forward_ports.sport.variation", &["Fwd-var-sport"], T::Str, C::Variation, None,        "\"fixed\"",
         "how the UDP source port of forward frames varies (RFC 4814: pseudorandom)"),
    conf("traffic.forward_ports.sport.min",       &["Fwd-sport-min"], T::Int, C::Number, Some((0, 65535)), "1024",
         "smallest source port of forward frames"),
    conf("traffic.forward_ports.sport.max",       &["Fwd-sport-max"], T::Int, C::Number, Some((0, 65535)), "65535",
         "largest source port of forward frames"),
    conf("traffic.forward_ports.dport.variation", &["Fwd-var-dport"], T::Str, C::Variation, None,        "\"fixed\"",
         "how the UDP destination port of forward frames varies (RFC 4814: pseudorandom)"),
    conf("traffic.forward_ports.dport.min",       &["Fwd-dport-min"], T::Int, C::Number, Some((0, 65535)), "1",
         "smallest destination port of forward frames"),
    conf("traffic.forward_ports.dport.max",       &["Fwd-dport-max"], T::Int, C::Number, Some((0, 65535)), "49151",
         "largest destination port of forward frames"),
    conf("traffic.reverse_ports.sport.variation", &["Rev-var-sport"], T::Str, C::Variation, None,        "\"fixed\"",
         "how the UDP source port of reverse frames varies (RFC 4814: pseudorandom)"),
    conf("traffic.reverse_ports.sport.min",       &["Rev-sport-min"], T::Int, C::Number, Some((0, 65535)), "1024",
         "smallest source port of reverse frames"),
    conf("traffic.reverse_ports.sport.max",       &["Rev-sport-max"], T::Int, C::Number, Some((0, 65535)), "65535",
         "largest source port of reverse frames"),
    conf("traffic.reverse_ports.dport.variation", &["Rev-var-dport"], T::Str, C::Variation, None,        "\"fixed\"",
         "how the UDP destination port of reverse frames varies (RFC 4814: pseudorandom)"),
    conf("traffic.reverse_ports.dport.min",       &["Rev-dport-min"], T::Int, C::Number, Some((0, 65535)), "1",
         "smallest destination port of reverse frames"),
    conf("traffic.reverse_ports.dport.max",       &["Rev-dport-max"], T::Int, C::Number, Some((0, 65535)), "49151",
         "largest destination port of reverse frames"),
    // [stateful]
    conf("stateful.mode",            &["Stateful"],          T::Str,     C::Stateful,  None,                "\"off\"",
         "stateful test (RFC 9693): where the Initiator is"),
    conf("stateful.enumerate_ports", &["Enumerate-ports"],   T::Str,     C::Enumerate, None,                "\"off\"",
         "phase 1 enumerates all port number combinations"),
    conf("stateful.enumerate_ips",   &["Enumerate-ips"],     T::Str,     C::Enumerate, None,                "\"off\"",
         "phase 1 enumerates all IP address combinations"),
    conf("stateful.responder_tuples", &["Responder-tuples", "Responder-ports"], T::Str, C::Tuples, None,   "\"fixed\"",
         "how the Responder picks four-tuples from its state table in phase 2"),
    toml("stateful.preliminary_frames",                      T::Int,     Some((1, U32_MAX)),    "required to run a trial (or --preliminary-frames)",
         "N: frames the Initiator sends in phase 1, foreground and background"),
    toml("stateful.state_table",                             T::Int,     Some((1, U32_MAX)),    "the foreground frames among N",
         "M: entries of the Responder's state table"),
    toml("stateful.preliminary_rate",                        T::Int,     Some((1, 1_000_000_000)), "required to run a trial (or --preliminary-rate)",
         "R: frames per second of phase 1"),
    toml("stateful.preliminary_timeout_ms",                  T::Int,     Some((1, 2000)),       "500",
         "T: ms the Responder keeps receiving after phase 1's sending ended"),
    toml("stateful.phase_delay_ms",                          T::Int,     Some((1, 100_000_000)), "ceil(1000 N / R) + 2 T",
         "D: ms from the start of phase 1 to the start of phase 2"),
    // [dut]
    toml("dut.before_trial",                                 T::Str,     None,                  "none",
         "shell command (sh -c) run before every trial, e.g. to empty the DUT's connection table"),
    toml("dut.between_phases",                               T::Str,     None,                  "none",
         "shell command (sh -c) run between phase 1 and phase 2 of every stateful trial"),
    toml("dut.delete_all",                                   T::Str,     None,                  "none",
         "shell command (sh -c) that deletes every connection of the DUT and returns when done (teardown-rate times it)"),
    toml("dut.count",                                        T::Str,     None,                  "none",
         "shell command (sh -c) that prints the number of connections in the DUT's table; run after phase 1 of every stateful trial, reported"),
    toml("dut.reset",                                        T::Str,     None,                  "none",
         "shell command (sh -c) that resets the DUT and returns (RFC 6201); `xlatperf reset` runs it during a trial"),
    toml("dut.cpus",                                         T::Str,     None,                  "none",
         "CPU list (\"1\", \"2-3\") of a DUT on this host (the lab's): every trial records their load, the tester's workers keep off them"),
    toml("dut.load",                                         T::Str,     None,                  "none",
         "shell command (sh -c) started with every trial that prints the DUT's CPU busy percent over XLAT_TRIAL_SECONDS seconds (a DUT elsewhere); recorded as the trial's DUT load"),
    // [trial]
    toml("trial.frame_size",                                 T::Int,     Some((0, 65535)),      "84",
         "siitperf's IPv6 frame size incl. FCS; IPv4 frames are 20 bytes shorter"),
    toml("trial.rate",                                       T::Int,     Some((1, 1_000_000_000)), "none (give --rate)",
         "frames per second per active direction"),
    toml("trial.duration",                                   T::Float,   None,                  "60",
         "seconds of sending"),
    toml("trial.timeout_ms",                                 T::Int,     Some((0, 60_000)),     "2000",
         "ms the receivers keep receiving after sending ended"),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_consistent() {
        let mut paths = HashSet::new();
        let mut confs = HashSet::new();
        for k in keys() {
            assert!(paths.insert(k.path), "{} twice", k.path);
            for c in k.conf {
                assert!(confs.insert(*c), "{c} twice");
            }
            assert_eq!(k.conf.is_empty(), k.conf_value.is_none(), "{}", k.path);
            assert!(!is_table(k.path), "{} is a key and a table", k.path);
        }
        // siitperf's 50 siitperf.conf keys (docs/siitperf-compat.md), plus the Responder-ports alias.
        assert_eq!(confs.len(), 51);
        assert_eq!(keys().len(), 108);
        assert!(is_table("traffic.forward_ports.sport") && is_table("left") && !is_table("lef"));
    }

    /// The rows written out twice (left and right, forward and reverse) differ only in the
    /// side's or the direction's words.
    #[test]
    fn mirrored_rows_agree() {
        let pairs = [
            ("left.", "right.", [("-L-", "-R-"), ("left", "right")]),
            (
                "traffic.forward_ports.",
                "traffic.reverse_ports.",
                [("Fwd-", "Rev-"), ("forward", "reverse")],
            ),
        ];
        for (a, b, words) in pairs {
            let from: Vec<&KeyDef> = keys().iter().filter(|k| k.path.starts_with(a)).collect();
            let to: Vec<&KeyDef> = keys().iter().filter(|k| k.path.starts_with(b)).collect();
            assert_eq!(from.len(), to.len(), "{a} {b}");
            assert!(!from.is_empty());
            for (x, y) in from.iter().zip(&to) {
                let swap = |s: &str| words.iter().fold(s.to_string(), |s, (p, q)| s.replace(p, q));
                assert_eq!(swap(x.path), y.path);
                assert_eq!(x.conf.iter().map(|c| swap(c)).collect::<Vec<_>>(), y.conf);
                assert_eq!(swap(x.doc), y.doc, "{}", y.path);
                assert_eq!(
                    (x.value_type, x.conf_value, x.range, x.default),
                    (y.value_type, y.conf_value, y.range, y.default),
                    "{}",
                    y.path
                );
            }
        }
    }

    /// The defaults written as text are the values the conversion uses.
    #[test]
    fn documented_defaults_are_the_real_ones() {
        let default = |p: &str| by_path(p).map(|k| k.default).unwrap_or_else(|| panic!("{p}"));
        for dir in ["forward", "reverse"] {
            for (port, (lo, hi)) in [("sport", xlat_traffic::RFC4814_SPORT), ("dport", xlat_traffic::RFC4814_DPORT)] {
                assert_eq!(default(&format!("traffic.{dir}_ports.{port}.min")), lo.to_string());
                assert_eq!(default(&format!("traffic.{dir}_ports.{port}.max")), hi.to_string());
            }
        }
        let ip_var = xlat_traffic::IpVarSpec::default();
        assert_eq!(default("left.ip_variation.min"), ip_var.min.to_string());
        assert_eq!(default("left.ip_variation.max"), ip_var.max.to_string());
        assert_eq!(default("left.ip_variation.ipv4_offset"), ip_var.ipv4_offset.to_string());
        assert_eq!(default("left.ip_variation.ipv6_offset"), ip_var.ipv6_offset.to_string());
        let trial = crate::model::TrialDefaults::default();
        assert_eq!(default("trial.frame_size"), trial.frame_size.to_string());
        assert_eq!(default("trial.duration"), trial.duration_s.to_string());
        assert_eq!(default("trial.timeout_ms"), trial.timeout_ms.to_string());
        assert_eq!(
            default("stateful.preliminary_timeout_ms"),
            crate::model::DEFAULT_PRELIMINARY_TIMEOUT_MS.to_string()
        );
        let range = |p: &str| by_path(p).and_then(|k| k.range).unwrap_or_else(|| panic!("{p}"));
        assert_eq!(
            range("stateful.preliminary_timeout_ms").1 as u64,
            crate::model::MAX_PRELIMINARY_TIMEOUT_MS
        );
        assert_eq!(range("stateful.phase_delay_ms").1 as u64, crate::model::MAX_PHASE_DELAY_MS);
        assert_eq!(range("stateful.preliminary_rate").1 as u64, crate::model::MAX_PRELIMINARY_RATE);
    }

    #[test]
    fn suggestions() {
        assert_eq!(suggest("left.ipv4_rael").as_deref(), Some("left.ipv4_real"));
        assert_eq!(suggest("IP-L-Vers").as_deref(), Some("left.ip_version"));
        assert_eq!(suggest("ip-l-vers").as_deref(), Some("IP-L-Vers"));
        assert_eq!(suggest("completely.different.thing"), None);
    }
}
