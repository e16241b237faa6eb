//! Frames per second of the sender's frame writing without a backend: `DirectionStream::burst`
//! and `Burst::write` into a ring of 32 recycled frame buffers (a burst of backend buffers, each
//! holding its template already, as recycled mbufs do), per variation mode, for the smallest IPv4
//! and IPv6 frames. A figure for the sender's per-frame cost, not a test:
//!
//! ```text
//! cargo run --release -p xlat-traffic --example patch_rate [seconds per mode, default 0.5]
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};
use xlat_traffic::{BurstScratch, Direction, DirectionStream, IpVersion, PortField, Setup, Variation};
use xlat_wire::MacAddr;

fn setup(v: IpVersion, ports: bool, ips: bool, nets: bool) -> Setup {
    let mut s = xlat_testkit::setup::benchmarking(v);
    if ports {
        s.forward_ports.sport = PortField {
            variation: Variation::Pseudorandom,
            min: 1024,
            max: 65535,
        };
        s.forward_ports.dport = PortField {
            variation: Variation::Pseudorandom,
            min: 1,
            max: 49151,
        };
        s.reverse_ports = s.forward_ports;
    }
    for side in [&mut s.left, &mut s.right] {
        if ips {
            side.ip_var.variation = Variation::Pseudorandom;
            side.ip_var.min = 2;
            side.ip_var.max = 65534;
            side.ip_var.ipv6_offset = 12;
        }
        if nets {
            side.num_nets = 256;
        }
    }
    s
}

const RING: usize = 32;

fn rate(st: &DirectionStream, secs: f64) -> f64 {
    let mut ring = vec![([0u8; 2048], 0u64); RING];
    let mut scratch = BurstScratch::new(RING);
    let mut seq = 0u64;
    // Warm up, then measure in chunks of 32 * 1024 frames between clock reads.
    let mut run = |seq: &mut u64, ring: &mut Vec<([u8; 2048], u64)>, chunks: u64| {
        for _ in 0..chunks * 1024 {
            let burst = st.burst(*seq, RING, &mut scratch);
            for (i, (b, cookie)) in ring.iter_mut().enumerate() {
                black_box(burst.write(i, *seq + i as u64, black_box(&mut b[..]), cookie));
            }
            *seq += RING as u64;
        }
    };
    run(&mut seq, &mut ring, 4);
    let start = Instant::now();
    let mut frames = 0u64;
    let end = Duration::from_secs_f64(secs);
    while start.elapsed() < end {
        run(&mut seq, &mut ring, 1);
        frames += (RING * 1024) as u64;
    }
    frames as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(0.5);
    let mac = MacAddr([2, 0, 0, 0, 0, 1]);
    println!("{:<34} {:>10} {:>10} {:>9}", "mode", "frame", "Mframes/s", "ns/frame");
    for (v, name) in [(IpVersion::V4, "IPv4 64 B"), (IpVersion::V6, "IPv6 84 B")] {
        for (mode, ports, ips, nets) in [
            ("fixed", false, false, false),
            ("ports (RFC 4814 pseudorandom)", true, false, false),
            ("ips (pseudorandom src+dst)", false, true, false),
            ("both", true, true, false),
            ("256 destination networks", false, false, true),
        ] {
            let s = setup(v, ports, ips, nets);
            let st = DirectionStream::new(&s, Direction::Forward, 84, mac, mac).expect("stream");
            let r = rate(&st, secs);
            println!("{:<34} {:>10} {:>10.1} {:>9.2}", mode, name, r / 1e6, 1e9 / r);
        }
    }
}
