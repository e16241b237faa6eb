//! ARP requests/replies and neighbour solicitations/advertisements built by `xlat_wire`,
//! dissected by tshark (Wireshark's dissectors): no malformed frame, good ICMPv6 checksums, every
//! field as built. tshark is required: without it the test fails with a message saying so.

use std::collections::HashMap;
use std::net::{Ipv4Addr, Ipv6Addr};
use xlat_wire::{arp, ndp, MacAddr};

#[path = "common/dissect.rs"]
mod dissect;

const TESTER: MacAddr = MacAddr([0x02, 0x00, 0x00, 0x00, 0x01, 0x01]);
const DUT: MacAddr = MacAddr([0x02, 0x00, 0x00, 0x00, 0x02, 0x02]);

const FIELDS: &[&str] = &[
    "frame.len",
    "eth.src",
    "eth.dst",
    "eth.type",
    "arp.opcode",
    "arp.src.hw_mac",
    "arp.src.proto_ipv4",
    "arp.dst.hw_mac",
    "arp.dst.proto_ipv4",
    "ipv6.src",
    "ipv6.dst",
    "ipv6.hlim",
    "icmpv6.type",
    "icmpv6.code",
    "icmpv6.checksum.status",
    "icmpv6.nd.ns.target_address",
    "icmpv6.nd.na.target_address",
    "icmpv6.nd.na.flag.r",
    "icmpv6.nd.na.flag.s",
    "icmpv6.nd.na.flag.o",
    "icmpv6.opt.type",
    "icmpv6.opt.linkaddr",
    "_ws.malformed",
    "_ws.expert.severity",
    "_ws.expert.message",
];

fn tshark(name: &str, frames: &[Vec<u8>]) -> Vec<HashMap<&'static str, String>> {
    dissect::fields(name, frames, FIELDS, &[])
}

#[test]
fn arp_and_ndp_frames_dissect_cleanly() {
    let tester4 = Ipv4Addr::new(198, 18, 0, 2);
    let dut4 = Ipv4Addr::new(198, 18, 0, 1);
    let tester6: Ipv6Addr = "2001:2::2".parse().unwrap();
    let dut6: Ipv6Addr = "2001:2::1".parse().unwrap();
    let mut frames = Vec::new();
    let mut b = [0u8; 128];

    let req = arp::request(TESTER, tester4, dut4);
    let n = arp::write_frame(&mut b, MacAddr::BROADCAST, &req).unwrap();
    frames.push(b[..n].to_vec());
    let rep = arp::reply_to(&req, DUT);
    let n = arp::write_frame(&mut b, TESTER, &rep).unwrap();
    frames.push(b[..n].to_vec());

    let (ns_mac, ns) = ndp::solicitation(tester6, TESTER, dut6);
    let n = ndp::write_frame(&mut b, ns_mac, TESTER, &ns).unwrap();
    frames.push(b[..n].to_vec());
    let (na_mac, na) = ndp::advertisement_for(&ns, TESTER, DUT);
    let n = ndp::write_frame(&mut b, na_mac, DUT, &na).unwrap();
    frames.push(b[..n].to_vec());
    // The answer to a solicitation from the unspecified address (duplicate address detection).
    let dad = ndp::Nd {
        src: Ipv6Addr::UNSPECIFIED,
        ..ns
    };
    let (dad_mac, dad_na) = ndp::advertisement_for(&dad, DUT, TESTER);
    let n = ndp::write_frame(&mut b, dad_mac, TESTER, &dad_na).unwrap();
    frames.push(b[..n].to_vec());

    let rows = tshark("neighbour", &frames);
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["_ws.malformed"], "", "frame {i}: {r:?}");
        assert_eq!(r["_ws.expert.severity"], "", "frame {i}: {}", r["_ws.expert.message"]);
    }
    // ARP request: broadcast, who has 198.18.0.1, tell 198.18.0.2.
    let a = &rows[0];
    assert_eq!(a["frame.len"], "60");
    assert_eq!(a["eth.dst"], "ff:ff:ff:ff:ff:ff");
    assert_eq!(a["eth.src"], TESTER.to_string());
    assert_eq!(a["eth.type"], "0x0806");
    assert_eq!(a["arp.opcode"], "1");
    assert_eq!(a["arp.src.hw_mac"], TESTER.to_string());
    assert_eq!(a["arp.src.proto_ipv4"], "198.18.0.2");
    assert_eq!(a["arp.dst.hw_mac"], "00:00:00:00:00:00");
    assert_eq!(a["arp.dst.proto_ipv4"], "198.18.0.1");
    // ARP reply: 198.18.0.1 is at the DUT's MAC, unicast to the requester.
    let a = &rows[1];
    assert_eq!(
        (a["eth.dst"].as_str(), a["eth.src"].as_str()),
        (TESTER.to_string().as_str(), DUT.to_string().as_str())
    );
    assert_eq!(a["arp.opcode"], "2");
    assert_eq!(a["arp.src.hw_mac"], DUT.to_string());
    assert_eq!(a["arp.src.proto_ipv4"], "198.18.0.1");
    assert_eq!(a["arp.dst.hw_mac"], TESTER.to_string());
    assert_eq!(a["arp.dst.proto_ipv4"], "198.18.0.2");
    // NS: to the solicited-node group of 2001:2::1 and its 33:33 MAC, hop limit 255, SLLA.
    let s = &rows[2];
    assert_eq!(s["frame.len"], "86");
    assert_eq!(s["eth.dst"], "33:33:ff:00:00:01");
    assert_eq!(s["ipv6.src"], "2001:2::2");
    assert_eq!(s["ipv6.dst"], "ff02::1:ff00:1");
    assert_eq!(s["ipv6.hlim"], "255");
    assert_eq!((s["icmpv6.type"].as_str(), s["icmpv6.code"].as_str()), ("135", "0"));
    assert_eq!(s["icmpv6.checksum.status"], "1");
    assert_eq!(s["icmpv6.nd.ns.target_address"], "2001:2::1");
    assert_eq!(s["icmpv6.opt.type"], "1");
    assert_eq!(s["icmpv6.opt.linkaddr"], TESTER.to_string());
    // NA: solicited + override, not router, unicast back, TLLA of the DUT.
    let s = &rows[3];
    assert_eq!(s["eth.dst"], TESTER.to_string());
    assert_eq!((s["ipv6.src"].as_str(), s["ipv6.dst"].as_str()), ("2001:2::1", "2001:2::2"));
    assert_eq!(s["ipv6.hlim"], "255");
    assert_eq!(s["icmpv6.type"], "136");
    assert_eq!(s["icmpv6.checksum.status"], "1");
    assert_eq!(s["icmpv6.nd.na.target_address"], "2001:2::1");
    assert_eq!(
        (
            s["icmpv6.nd.na.flag.r"].as_str(),
            s["icmpv6.nd.na.flag.s"].as_str(),
            s["icmpv6.nd.na.flag.o"].as_str()
        ),
        ("0", "1", "1")
    );
    assert_eq!(s["icmpv6.opt.type"], "2");
    assert_eq!(s["icmpv6.opt.linkaddr"], DUT.to_string());
    // NA answering DAD: to all-nodes, override only.
    let s = &rows[4];
    assert_eq!(s["eth.dst"], "33:33:00:00:00:01");
    assert_eq!(s["ipv6.dst"], "ff02::1");
    assert_eq!(s["icmpv6.checksum.status"], "1");
    assert_eq!((s["icmpv6.nd.na.flag.s"].as_str(), s["icmpv6.nd.na.flag.o"].as_str()), ("0", "1"));
}

#[test]
fn tshark_reports_a_bad_icmpv6_checksum() {
    let (mac, ns) = ndp::solicitation("2001:2::2".parse().unwrap(), TESTER, "2001:2::1".parse().unwrap());
    let mut b = [0u8; 128];
    let n = ndp::write_frame(&mut b, mac, TESTER, &ns).unwrap();
    let mut bad = b[..n].to_vec();
    bad[14 + 40 + 2] ^= 0x10;
    let rows = tshark("bad-icmpv6", &[bad]);
    assert_eq!(rows[0]["icmpv6.checksum.status"], "0");
}
