//! Commands in the DUT's namespace: running one, switching forwarding, reading its neighbours.

use crate::cmd::{self, require_root};
use crate::error::LabError;
use crate::topology::DUT_NS;
use crate::{setup, state};
use std::net::IpAddr;

pub(crate) fn require_dut() -> Result<(), LabError> {
    require_root()?;
    if setup::list_netns()?.iter().any(|n| n == DUT_NS) {
        Ok(())
    } else {
        Err(LabError::NotUp { ns: DUT_NS.to_string() })
    }
}

/// Run a command (program and arguments, no shell) in the DUT namespace; return its stdout.
pub fn dut_exec(args: &[&str]) -> Result<String, LabError> {
    let Some((program, rest)) = args.split_first() else {
        return Err(LabError::InvalidInput("dut_exec needs a command".into()));
    };
    if program.is_empty() {
        return Err(LabError::InvalidInput("dut_exec: empty program name".into()));
    }
    require_dut()?;
    cmd::run_in(DUT_NS, program, rest)
}

/// Switch the DUT's forwarding on or off: the families the topology forwards (IPv4 for router4
/// and nat44, IPv6 for router6, both for siit and nat64; both without a state file).
pub fn set_forwarding(on: bool) -> Result<(), LabError> {
    require_dut()?;
    let (v4, v6) = match state::read() {
        Ok(Some(st)) => st.topology.forwarding(),
        _ => (true, true),
    };
    let value = if on { "1" } else { "0" };
    if v4 {
        cmd::sysctl_set(Some(DUT_NS), "net.ipv4.ip_forward", value)?;
    }
    if v6 {
        cmd::sysctl_set(Some(DUT_NS), "net.ipv6.conf.all.forwarding", value)?;
    }
    Ok(())
}

/// Check an interface name before handing it to `ip`.
fn valid_ifname(name: &str) -> bool {
    !name.is_empty()
        && name.len() < 16
        && !name.starts_with('-')
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// The DUT's neighbour entries on `iface` (IPv4 and IPv6): address, MAC ("" while unresolved),
/// state (e.g. "REACHABLE", "STALE,NOARP" when several).
pub fn dut_neighbours(iface: &str) -> Result<Vec<(IpAddr, String, String)>, LabError> {
    if !valid_ifname(iface) {
        return Err(LabError::InvalidInput(format!("not an interface name: {iface:?}")));
    }
    require_dut()?;
    let out = cmd::ip_in(DUT_NS, &["-j", "neighbour", "show", "dev", iface])?;
    parse_neighbours(&out)
}

fn parse_neighbours(out: &str) -> Result<Vec<(IpAddr, String, String)>, LabError> {
    let bad = |detail: String| LabError::Output {
        command: "ip -j neighbour show".into(),
        detail,
    };
    let out = out.trim();
    if out.is_empty() {
        return Ok(Vec::new());
    }
    let v: serde_json::Value = serde_json::from_str(out).map_err(|e| bad(e.to_string()))?;
    let mut list = Vec::new();
    for n in v.as_array().ok_or_else(|| bad("not a JSON array".into()))? {
        let dst = n
            .get("dst")
            .and_then(|d| d.as_str())
            .ok_or_else(|| bad(format!("entry without dst: {n}")))?;
        let ip: IpAddr = dst.parse().map_err(|_| bad(format!("bad address {dst:?}")))?;
        let mac = n.get("lladdr").and_then(|m| m.as_str()).unwrap_or("").to_string();
        let state: Vec<&str> = n
            .get("state")
            .and_then(|s| s.as_array())
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str())
            .collect();
        list.push((ip, mac, state.join(",")));
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::*;

    #[test]
    fn neighbour_json_is_parsed() {
        let out = r#"[{"dst":"198.18.0.2","lladdr":"02:00:00:00:00:01","state":["REACHABLE"]},
                      {"dst":"2001:2::2","state":["INCOMPLETE"]},
                      {"dst":"198.18.0.3","lladdr":"02:00:00:00:00:03","state":["STALE","NOARP"]}]"#;
        let n = parse_neighbours(out).unwrap();
        assert_eq!(n.len(), 3);
        assert_eq!(
            n[0],
            ("198.18.0.2".parse().unwrap(), "02:00:00:00:00:01".into(), "REACHABLE".into())
        );
        assert_eq!(n[1].1, "");
        assert_eq!(n[2].2, "STALE,NOARP");
        assert!(parse_neighbours("").unwrap().is_empty());
        assert!(parse_neighbours("[]").unwrap().is_empty());
        assert!(parse_neighbours("{").is_err());
        assert!(parse_neighbours(r#"[{"dst":"nonsense"}]"#).is_err());
        assert!(parse_neighbours(r#"{"dst":"1.2.3.4"}"#).is_err());
    }

    #[test]
    fn interface_names_are_checked() {
        assert!(valid_ifname("xlat-dl"));
        for bad in ["", "-x", "a b", "a/b", "0123456789abcdef", "..", "x;rm"] {
            assert!(!valid_ifname(bad), "{bad}");
            assert!(matches!(dut_neighbours(bad), Err(LabError::InvalidInput(_))));
        }
    }

    #[test]
    fn dut_exec_rejects_empty_commands() {
        assert!(matches!(dut_exec(&[]), Err(LabError::InvalidInput(_))));
        assert!(matches!(dut_exec(&[""]), Err(LabError::InvalidInput(_))));
    }

    #[test]
    fn down_report_display() {
        assert_eq!(DownReport::default().to_string(), "no lab found; nothing to do\n");
        let r = DownReport {
            had_state: true,
            topology: Some(Topology::SIIT),
            killed: vec![7],
            namespaces_removed: vec![DUT_NS.into()],
            ..Default::default()
        };
        let s = r.to_string();
        assert!(
            s.contains("lab siit removed") && s.contains("pid 7") && s.contains("xlat-dut"),
            "{s}"
        );
    }
}
