//! `make_seeds DIR`: the seeds of the binary targets, into DIR/frame, DIR/pcap and
//! DIR/result_doc: valid test frames of every kind xlatperf sends (IPv4, IPv6, IPv4 in IPv6;
//! the smallest and a large size), a pcap file of them, and result documents of two procedures
//! measured against the simulated DUT.
use std::net::{Ipv4Addr, Ipv6Addr};
use xlat_wire::eth::MacAddr;
use xlat_wire::frame::{IpPair, TestFrame, Tunnel};

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("usage: make_seeds DIR"));
    let v4 = IpPair::V4 {
        src: Ipv4Addr::new(198, 18, 0, 2),
        dst: Ipv4Addr::new(198, 19, 0, 2),
    };
    let v6 = IpPair::V6 {
        src: "2001:2::2".parse::<Ipv6Addr>().unwrap(),
        dst: "2001:2:0:8000::2".parse::<Ipv6Addr>().unwrap(),
    };
    let tunnel = Tunnel {
        src: "2001:2::1:2".parse().unwrap(),
        dst: "2001:2::1:1".parse().unwrap(),
    };
    let mut frames = Vec::new();
    for (ip, tunnel, sizes) in [(v4, None, [64, 1518]), (v6, None, [84, 1518]), (v4, Some(tunnel), [104, 1518])] {
        for frame_size in sizes {
            let t = TestFrame {
                eth_dst: MacAddr([2, 0, 0, 0, 0, 2]),
                eth_src: MacAddr([2, 0, 0, 0, 0, 1]),
                ip,
                sport: 10_233,
                dport: 352,
                frame_size,
                field: 0x0123_4567_89ab_cdef,
                tunnel,
            };
            let mut buf = vec![0u8; frame_size];
            let layout = t.write(&mut buf).expect("a valid frame");
            buf.truncate(layout.len);
            frames.push(buf);
        }
    }
    let write = |sub: &str, name: String, bytes: &[u8]| {
        let d = dir.join(sub);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(name), bytes).unwrap();
    };
    for (i, f) in frames.iter().enumerate() {
        write("frame", format!("frame-{i}"), f);
    }
    write("pcap", "frames.pcap".into(), &xlat_wire::pcap::file_of(&frames[..3]));
    for (name, doc) in docs() {
        write("result_doc", format!("{name}.json"), doc.as_bytes());
    }
}

/// A throughput and a latency document against the simulated DUT, as xlatperf writes them.
fn docs() -> Vec<(&'static str, String)> {
    use xlat_procedures::{repeat, throughput, NoProgress, ThroughputConfig};
    use xlat_results::output::{Document, RunMeta, SizeResult};
    let mut dut = xlat_testkit::sim::SimDut::new(500_000.0, 7);
    let cfg = ThroughputConfig::new(84, 1_000_000, 1000);
    let result = repeat(2, |_| throughput(&mut dut, &cfg, &mut NoProgress)).unwrap();
    let mut meta = RunMeta::new("0.1.0-seed");
    meta.config = serde_json::json!({"setup": {"left": {"ip_version": "V4"}}, "source": {"file": "/x/sim.toml"},
        "dut": {"before_trial": "true"}});
    let tp = Document::new("throughput", meta.clone(), vec![SizeResult { frame_size: 84, result }]);
    let lat_cfg = xlat_procedures::latency::LatencyConfig::new(84, 100_000);
    let lat = repeat(2, |_| xlat_procedures::latency::latency(&mut dut, &lat_cfg, &mut NoProgress)).unwrap();
    let lat = Document::new(
        "latency",
        meta,
        vec![SizeResult {
            frame_size: 84,
            result: lat,
        }],
    );
    vec![("throughput", tp.to_json().unwrap()), ("latency", lat.to_json().unwrap())]
}
