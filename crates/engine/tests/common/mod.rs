//! What the engine's integration tests share: a setup of two mem ports back to back.
#![allow(dead_code)]

use xlat_traffic::{IpVersion, PortSpec, Setup, Side, StatefulSpec};

use xlat_wire::MacAddr;

/// Tester addresses on both sides, and each side's "DUT MAC" the other mem port's MAC (no DUT
/// between mem ports).
pub fn setup(v: IpVersion, forward: bool, reverse: bool) -> Setup {
    let mut left = Side::new(v);
    let mut right = Side::new(v);
    left.ipv4_real = Some("198.18.0.2".parse().unwrap());
    right.ipv4_real = Some("198.19.0.2".parse().unwrap());
    left.ipv6_real = Some("2001:2::2".parse().unwrap());
    right.ipv6_real = Some("2001:2:0:8000::2".parse().unwrap());
    left.dut_mac = Some(MacAddr([0x02, 0x78, 0x6c, 0, 0, 2]));
    right.dut_mac = Some(MacAddr([0x02, 0x78, 0x6c, 0, 0, 1]));
    Setup {
        left,
        right,
        forward,
        reverse,
        forward_ports: PortSpec::default(),
        reverse_ports: PortSpec::default(),
        fg_n: 2,
        fg_m: 2,
        stateful: StatefulSpec::default(),
        seed: Some(7),
        allow_foreign_addresses: false,
    }
}

/// Trials pin busy threads to the cores: run one at a time.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}
