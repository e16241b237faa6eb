//! The one error type of the crate. Every message says where (file and line, or the `--set`
//! override), which key (named as the source names it: `IP-L-var` in a siitperf.conf,
//! `left.ip_variation.variation` in TOML) and what is allowed.

use std::fmt;

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Loc {
    /// A line of a file (1-based).
    Line { file: String, line: usize },
    /// A file, where no line applies (e.g. a key that is absent).
    File { file: String },
    /// A `--set KEY=VALUE` override.
    Set { key: String },
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Loc::Line { file, line } => write!(f, "{file}:{line}"),
            Loc::File { file } => f.write_str(file),
            Loc::Set { key } => write!(f, "--set {key}"),
        }
    }
}

/// Everything that can be wrong with a test description.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: cannot read the file: {msg}")]
    Io { file: String, msg: String },

    #[error("{at}: the file is not UTF-8 text")]
    NotText { at: Loc },

    #[error("{at}: TOML syntax error: {msg}")]
    Syntax { at: Loc, msg: String },

    #[error("{at}: {text} is neither a known key nor a comment")]
    UnknownLine { at: Loc, text: String },

    #[error("{at}: unknown key '{key}'{hint}")]
    UnknownKey { at: Loc, key: String, hint: String },

    #[error("{at}: key '{key}' has no value")]
    MissingValue { at: Loc, key: String },

    #[error("{at}: key '{key}': {value} is not allowed ({allowed})")]
    BadValue {
        at: Loc,
        key: String,
        value: String,
        allowed: String,
    },

    #[error("{at}: key '{key}' must be set ({why})")]
    Required { at: Loc, key: String, why: String },

    #[error("{at}: {msg}")]
    Invalid { at: Loc, msg: String },

    /// A problem of the command line's options with the configuration (the message names
    /// both).
    #[error("{msg}")]
    CommandLine { msg: String },

    // Cross-key rules: each names every key it involves.
    #[error("{at}: keys '{forward}' and '{reverse}' are both off: at least one direction must be active")]
    NoDirection { at: Loc, forward: String, reverse: String },

    #[error("{at}: key '{min_key}' ({min}) is greater than key '{max_key}' ({max}): a range needs min <= max")]
    RangeInverted {
        at: Loc,
        min_key: String,
        min: i64,
        max_key: String,
        max: i64,
    },

    #[error("{at}: key '{m_key}' ({m}) is greater than key '{n_key}' ({n}): m of every n frames are foreground")]
    ForegroundShare {
        at: Loc,
        n_key: String,
        n: u32,
        m_key: String,
        m: u32,
    },

    #[error("{at}: key '{key}' is needed but not set: {reason}")]
    AddressNeeded { at: Loc, key: String, reason: String },

    #[error(
        "{at}: key '{key}': {addr} is outside the benchmarking ranges (198.18.0.0/15, 2001:2::/48, 64:ff9b::/96, \
         64:ff9b:1::/48); a tester at line rate must not flood a real network: set '{allow_key}' to true to send there anyway"
    )]
    ForeignAddress {
        at: Loc,
        key: String,
        addr: String,
        allow_key: String,
    },

    #[error(
        "{at}: key '{key}' asks for enumeration, but key '{stateful_key}' is off: enumeration happens only in phase 1 of a stateful test"
    )]
    EnumerationInStatelessTest { at: Loc, key: String, stateful_key: String },

    #[error(
        "{at}: key '{enumerate_key}' (port enumeration) cannot be used with key '{nets_key}' {nets}: \
         more than one destination network on the Responder's side"
    )]
    PortEnumerationWithNets {
        at: Loc,
        enumerate_key: String,
        nets_key: String,
        nets: u16,
    },

    #[error(
        "{at}: key '{var_key}' varies the IP addresses, which cannot be combined with key '{nets_key}' {nets}: \
         more than one destination network (both use the same address bits)"
    )]
    VaryingIpsWithNets {
        at: Loc,
        var_key: String,
        nets_key: String,
        nets: u16,
    },

    #[error(
        "{at}: keys '{ports_key}' ({ports}) and '{ips_key}' ({ips}) are both non-zero but different: \
         when both enumerate, they must use the same order"
    )]
    EnumerationMismatch {
        at: Loc,
        ports_key: String,
        ports: &'static str,
        ips_key: String,
        ips: &'static str,
    },

    #[error(
        "{at}: key '{ports_key}' enumerates ports in a stateful test while key '{var_key}' varies the IP addresses, \
         but key '{ips_key}' is off: set it too, or phase 1 would not open every connection that phase 2 uses"
    )]
    PortEnumerationWithoutIpEnumeration {
        at: Loc,
        ports_key: String,
        var_key: String,
        ips_key: String,
    },

    #[error(
        "{at}: key '{ips_key}' enumerates IP addresses in a stateful test while key '{var_key}' varies the ports, \
         but key '{ports_key}' is off: set it too, or phase 1 would not open every connection that phase 2 uses"
    )]
    IpEnumerationWithoutPortEnumeration {
        at: Loc,
        ips_key: String,
        var_key: String,
        ports_key: String,
    },

    #[error(
        "{at}: key '{ips_key}' enumerates IP addresses, but key '{var_key}' is fixed: IP enumeration needs varying addresses on both sides"
    )]
    IpEnumerationWithFixedIps { at: Loc, ips_key: String, var_key: String },

    #[error("{at}: key '{key}' belongs to phase 1 of a stateful test, but key '{stateful_key}' is off")]
    PreliminaryInStatelessTest { at: Loc, key: String, stateful_key: String },

    #[error("{at}: key '{delay_key}' ({delay} ms) is shorter than phase 1 lasts: 1000*N/R + T = {needed} ms ({inputs})")]
    PhaseDelayTooShort {
        at: Loc,
        delay_key: String,
        delay: u64,
        needed: u64,
        /// N, R and T with their keys, e.g. `'stateful.preliminary_frames' 1000, ...`.
        inputs: String,
    },

    #[error(
        "{at}: key '{table_key}' ({state_table}) is more than the {foreground} foreground frames of phase 1 \
         ('{frames_key}' {frames}, foreground {fg_m} of every {fg_n}): the state table could never be filled"
    )]
    StateTableTooLarge {
        at: Loc,
        table_key: String,
        state_table: u32,
        foreground: u64,
        frames_key: String,
        frames: u32,
        fg_n: u32,
        fg_m: u32,
    },

    #[error(
        "{at}: phase 1 sends {foreground} foreground frames, each with a unique combination ('{enumerate_key}' is pseudorandom), \
         but there are only {combinations} {what} combinations: lower N ('stateful.preliminary_frames') or widen the ranges"
    )]
    TooFewCombinations {
        at: Loc,
        enumerate_key: String,
        what: &'static str,
        /// Fewer than the foreground frames, so it fits.
        combinations: u64,
        foreground: u64,
    },

    #[error("{at}: key '{key}' is not set and neither is '{ipv4_key}' or '{ipv6_key}' to resolve it by ARP/NDP: this side's port sends and needs the DUT's MAC")]
    DutMacUnknown {
        at: Loc,
        key: String,
        ipv4_key: String,
        ipv6_key: String,
    },
}

impl ConfigError {
    /// Where the error is, when it has a place.
    pub fn location(&self) -> Option<&Loc> {
        use ConfigError::*;
        match self {
            Io { .. } | CommandLine { .. } => None,
            NotText { at }
            | Syntax { at, .. }
            | UnknownLine { at, .. }
            | UnknownKey { at, .. }
            | MissingValue { at, .. }
            | BadValue { at, .. }
            | Required { at, .. }
            | Invalid { at, .. }
            | NoDirection { at, .. }
            | RangeInverted { at, .. }
            | ForegroundShare { at, .. }
            | AddressNeeded { at, .. }
            | ForeignAddress { at, .. }
            | EnumerationInStatelessTest { at, .. }
            | PortEnumerationWithNets { at, .. }
            | VaryingIpsWithNets { at, .. }
            | EnumerationMismatch { at, .. }
            | PortEnumerationWithoutIpEnumeration { at, .. }
            | IpEnumerationWithoutPortEnumeration { at, .. }
            | IpEnumerationWithFixedIps { at, .. }
            | PreliminaryInStatelessTest { at, .. }
            | PhaseDelayTooShort { at, .. }
            | StateTableTooLarge { at, .. }
            | TooFewCombinations { at, .. }
            | DutMacUnknown { at, .. } => Some(at),
        }
    }
}

/// Quote a text value for a message: single quotes, control characters escaped, long text cut.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::from("'");
    for (i, c) in s.chars().enumerate() {
        if i == 60 {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// What siitperf cannot express of a configuration (`to_siitperf`): the key and why.
#[derive(Debug, thiserror::Error)]
pub enum SiitperfError {
    #[error("key '{key}' ({command:?}): siitperf runs no commands for the DUT; run it in your script instead")]
    DutCommand { key: &'static str, command: String },
    #[error("key '{side}.{what}': siitperf sends no {why}")]
    NotInSiitperf {
        side: &'static str,
        what: &'static str,
        why: &'static str,
    },
    #[error(
        "key '{side}.dut_mac' is not set: siitperf needs {conf} (xlatperf can resolve it from {side}.dut_ipv4/dut_ipv6, siitperf cannot)"
    )]
    DutMac { side: &'static str, conf: &'static str },
    #[error("key '{key}': {value} has no siitperf.conf form")]
    NoForm { key: &'static str, value: String },
    #[error("internal: the TOML written for the configuration does not parse")]
    Internal(#[source] toml::de::Error),
}
