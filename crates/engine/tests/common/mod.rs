//! What the engine's integration tests share: a setup of two mem ports back to back.
#![allow(dead_code)]

use xlat_traffic::{IpVersion, Setup};

use xlat_wire::MacAddr;

/// The benchmarking setup (xlat_testkit::setup) in the directions asked, seed 7, and each
/// side's "DUT MAC" the other mem port's MAC (no DUT between mem ports).
pub fn setup(v: IpVersion, forward: bool, reverse: bool) -> Setup {
    let mut s = Setup {
        forward,
        reverse,
        seed: Some(7),
        ..xlat_testkit::setup::benchmarking(v)
    };
    s.left.dut_mac = Some(MacAddr([0x02, 0x78, 0x6c, 0, 0, 2]));
    s.right.dut_mac = Some(MacAddr([0x02, 0x78, 0x6c, 0, 0, 1]));
    s
}

/// Trials pin busy threads to the cores: run one at a time.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}
