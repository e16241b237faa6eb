//! Ethernet flow control (`tester.flow_control`, issue 41): set on both ports when they are
//! opened, read back and recorded per port (`trial --json`'s `ports`, every procedure
//! document's `meta.ports`); a port that has none is recorded as "unsupported", and asking
//! `on` of it is refused before any trial, naming the port. This machine's ports (veth, DPDK's
//! software devices) have no PAUSE settings, so the refusals and the records are what can be
//! checked here (docs/config.md, "Flow control").

mod common;

use common::procedures::Lab;
use common::{last_json, ok, skip_unless_root, xlatperf, LAB_TOOLS};
use serde_json::{json, Value};

/// The `ports` of a `trial --json -` output.
fn trial_ports(conf: &str, extra: &[&str]) -> Value {
    let out = ok(&[
        &["trial", "-c", conf, "--rate", "1000", "--duration", "1", "--json", "-"][..],
        extra,
    ]
    .concat());
    last_json(&out)["ports"].clone()
}

/// A trial with `tester.flow_control` set to `value`, which must fail; its standard error.
fn refused(conf: &str, value: &str) -> String {
    let set = format!("tester.flow_control={value}");
    let args = ["trial", "-c", conf, "--rate", "1000", "--duration", "1", "--set", &set];
    let o = xlatperf(&args);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(!o.status.success(), "{args:?} succeeded: {err}");
    err
}

fn unsupported(left: &str, right: &str) -> Value {
    json!([
        {"side": "left", "port": left, "flow_control": "unsupported"},
        {"side": "right", "port": right, "flow_control": "unsupported"},
    ])
}

/// Through lab router4 on veths (afpacket): the default and `keep` record both ports as
/// having none, and so does a procedure's document; `on` is refused naming the left port.
#[test]
fn veth_ports_have_none_and_refuse_on() {
    if skip_unless_root(LAB_TOOLS) {
        return;
    }
    let lab = Lab::up("router4", "flow-control");
    let conf = lab.config.as_str();
    let expected = unsupported("xlat-tester/xlat-tl", "xlat-tester/xlat-tr");
    assert_eq!(trial_ports(conf, &[]), expected);
    assert_eq!(trial_ports(conf, &["--set", "tester.flow_control=keep"]), expected);
    let search = [
        "--max-rate",
        "1000",
        "--min-rate",
        "500",
        "--error",
        "50%",
        "--duration",
        "1",
        "--timeout",
        "200",
    ];
    let (doc, _) = lab.run("throughput", &search);
    assert_eq!(doc["meta"]["ports"], expected, "{}", doc["meta"]);
    assert_eq!(doc["meta"]["config"]["tester"]["flow_control"], "off");
    let err = refused(conf, "on");
    assert!(
        err.contains("tester.flow_control = \"on\"") && err.contains("xlat-tester/xlat-tl has no Ethernet flow control"),
        "{err}"
    );
}

/// DPDK's net_null has no flow control API: recorded as none, `on` refused naming the port,
/// and a value that is none of off, on, keep refused naming the key.
#[cfg(feature = "dpdk")]
#[test]
fn net_null_has_none_and_refuses_on() {
    let _serial = common::lab_lock();
    let dir = std::env::temp_dir().join(format!("xlat-fc-null-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let conf = dir.join("null.toml");
    std::fs::write(
        &conf,
        "[tester]\nbackend = \"dpdk\"\nleft_port = \"net_null0\"\nright_port = \"net_null1\"\n\
         eal_args = [\"--no-pci\", \"-l\", \"0\", \"--vdev\", \"net_null0\", \"--vdev\", \"net_null1\"]\nloopback = true\n\
         [left]\nip_version = 4\nipv4_real = \"198.18.0.2\"\n[right]\nip_version = 4\nipv4_real = \"198.19.0.2\"\n",
    )
    .unwrap();
    let conf = conf.to_str().unwrap();
    assert_eq!(trial_ports(conf, &[]), unsupported("dpdk:net_null0", "dpdk:net_null1"));
    let err = refused(conf, "on");
    assert!(err.contains("dpdk:net_null0 has no Ethernet flow control"), "{err}");
    let err = refused(conf, "maybe");
    assert!(err.contains("tester.flow_control") && err.contains("(off, on, keep)"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
