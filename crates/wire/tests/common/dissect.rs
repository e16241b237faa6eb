//! Frames written to a pcap file and dissected by tshark (Wireshark's dissectors), field by
//! field: shared by the wire crate's tshark tests (`#[path]`-included). tshark is required:
//! without it the test fails with a message saying so.

use std::collections::HashMap;
use std::process::Command;
use xlat_wire::pcap;

/// `fields` of every frame of `frames` as tshark reads them (a field it does not show is
/// empty; several occurrences joined by commas), with tshark preferences `prefs` (`-o`).
pub fn fields(name: &str, frames: &[Vec<u8>], fields: &[&'static str], prefs: &[&str]) -> Vec<HashMap<&'static str, String>> {
    let path = std::env::temp_dir().join(format!("xlat-wire-{}-{name}.pcap", std::process::id()));
    std::fs::write(&path, pcap::file_of(frames)).expect("write pcap");
    let mut cmd = Command::new("tshark");
    // The UDP payload is test data whatever the port (a port such as 4341, LISP data, would
    // have it dissected as a packet of its own).
    cmd.args(["-n", "-r"]).arg(&path).args(["-d", "udp.port==0-65535,data"]).args([
        "-T",
        "fields",
        "-E",
        "separator=/t",
        "-E",
        "occurrence=a",
        "-E",
        "aggregator=,",
    ]);
    for p in prefs {
        cmd.args(["-o", p]);
    }
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("tshark cannot be run ({e}): this test validates frames with Wireshark's dissectors (apt-get install -y tshark)")
    });
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    if std::env::var_os("XLAT_KEEP_PCAP").is_none() {
        let _ = std::fs::remove_file(&path);
    }
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<HashMap<&'static str, String>> = text
        .lines()
        .map(|l| {
            fields
                .iter()
                .copied()
                .zip(l.split('\t').map(str::to_string).chain(std::iter::repeat(String::new())))
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), frames.len());
    rows
}
