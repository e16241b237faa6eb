//! Backend-level benchmark of the DPDK backend: how many frames per second one core sends.
//!
//! ```text
//! dpdk_txrate [--mode tx|loop] [--port DEV] [--seconds S] [--ip 4|6] [--size BYTES] [--core C]
//!             [--rx-core C] [--eal "EAL ARGS"] [--set KEY=VALUE]...
//! ```
//!
//! `tx` (default): sends fixed test frames (Ethernet + IPv4/IPv6 + UDP + the test payload, built
//! once with xlat_wire and copied into each mbuf) at full speed on one core into `--port`
//! (default `net_null0`, a discarding sink) for S seconds, and prints `tx_fps=<frames/s>`.
//!
//! `loop`: a `net_ring` pair; one core sends into one end, another core receives on the other
//! end and counts the test frames (classified with xlat_wire); prints `tx_fps=` and `rx_fps=`.
//!
//! `--set KEY=VALUE` sets the option `--KEY` (for scripts that pass settings uniformly).
//! Default EAL arguments: `--no-pci --vdev net_null0 -l <core>` (on hugepages: scripts/setup.sh reserves them).
//! Run: `cargo run --release -p xlat-io --features dpdk --example dpdk_txrate -- --seconds 5`

#[cfg(not(feature = "dpdk"))]
fn main() {
    eprintln!("dpdk_txrate needs the dpdk feature: cargo run --release -p xlat-io --features dpdk --example dpdk_txrate");
    std::process::exit(2);
}

#[cfg(feature = "dpdk")]
fn main() {
    if let Err(e) = run::main() {
        eprintln!("dpdk_txrate: {e}");
        std::process::exit(1);
    }
}

#[cfg(feature = "dpdk")]
mod run {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use xlat_io::dpdk::{self, DpdkOptions, DpdkPort};
    use xlat_io::{Port, RxQueue, TxQueue, DEFAULT_BURST};
    use xlat_wire::frame::{IpPair, TestFrame};
    use xlat_wire::{classify, MacAddr, Rx};

    type Res<T> = Result<T, String>;

    struct Args {
        mode: String,
        port: String,
        seconds: f64,
        ip: u8,
        size: usize,
        core: usize,
        rx_core: usize,
        eal: Option<String>,
    }

    fn parse() -> Res<Args> {
        let mut kv: HashMap<String, String> = HashMap::new();
        let mut it = std::env::args().skip(1);
        while let Some(a) = it.next() {
            let (key, val) = if a == "--set" {
                let s = it.next().ok_or("--set needs KEY=VALUE")?;
                let (k, v) = s.split_once('=').ok_or(format!("--set {s}: expected KEY=VALUE"))?;
                (k.to_string(), v.to_string())
            } else if let Some(k) = a.strip_prefix("--") {
                (k.to_string(), it.next().ok_or(format!("{a} needs a value"))?)
            } else {
                return Err(format!("unexpected argument {a:?}"));
            };
            kv.insert(key.replace('_', "-"), val);
        }
        let num = |k: &str, d: f64| -> Res<f64> {
            kv.get(k)
                .map(|v| v.parse::<f64>().map_err(|_| format!("--{k} {v}: not a number")))
                .unwrap_or(Ok(d))
        };
        let ip = num("ip", 4.0)? as u8;
        let a = Args {
            mode: kv.get("mode").cloned().unwrap_or_else(|| "tx".into()),
            port: kv.get("port").cloned().unwrap_or_else(|| "net_null0".into()),
            seconds: num("seconds", 5.0)?,
            ip,
            size: num("size", if ip == 6 { 84.0 } else { 64.0 })? as usize,
            core: num("core", 1.0)? as usize,
            rx_core: num("rx-core", 0.0)? as usize,
            eal: kv.get("eal").cloned(),
        };
        if !["tx", "loop"].contains(&a.mode.as_str()) || !(a.ip == 4 || a.ip == 6) {
            return Err("--mode is tx or loop, --ip is 4 or 6".into());
        }
        Ok(a)
    }

    fn pin(core: usize) -> Res<()> {
        // SAFETY: cpu_set_t is plain data; CPU_SET and sched_setaffinity get a valid set.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(core, &mut set);
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(format!("cannot pin to core {core}: {}", std::io::Error::last_os_error()));
            }
        }
        Ok(())
    }

    fn template(ip: u8, size: usize) -> Res<Vec<u8>> {
        let pair = if ip == 6 {
            IpPair::V6 {
                src: "2001:2::2".parse().unwrap(),
                dst: "2001:2:0:8000::2".parse().unwrap(),
            }
        } else {
            IpPair::V4 {
                src: "198.18.0.2".parse().unwrap(),
                dst: "198.19.0.2".parse().unwrap(),
            }
        };
        let f = TestFrame {
            eth_dst: MacAddr([0x02, 0, 0, 0, 0, 2]),
            eth_src: MacAddr([0x02, 0, 0, 0, 0, 1]),
            ip: pair,
            sport: 0xc020,
            dport: 0x0007,
            frame_size: size,
            field: 0,
            tunnel: None,
        };
        let mut buf = vec![0u8; size];
        let len = f.write(&mut buf).map_err(|e| e.to_string())?.len;
        buf.truncate(len);
        Ok(buf)
    }

    /// Send copies of `frame` at full speed for `seconds`; returns (frames, seconds taken).
    fn send(tx: &mut impl TxQueue, frame: &[u8], seconds: f64) -> Res<(u64, f64)> {
        let hz = dpdk::tsc_hz() as f64;
        let start = dpdk::rdtsc();
        let end = start + (seconds * hz) as u64;
        let mut sent = 0u64;
        let len = frame.len();
        loop {
            let now = dpdk::rdtsc();
            if now >= end {
                return Ok((sent, (now - start) as f64 / hz));
            }
            for _ in 0..64 {
                sent += tx
                    .tx_burst(DEFAULT_BURST, |_, buf| {
                        buf[..len].copy_from_slice(frame);
                        len
                    })
                    .map_err(|e| e.to_string())? as u64;
            }
        }
    }

    pub fn main() -> Res<()> {
        let a = parse()?;
        let eal = a.eal.clone().unwrap_or_else(|| match a.mode.as_str() {
            "tx" => format!("--no-pci --vdev {} -l {}", a.port, a.core),
            _ => format!("--no-pci -l {}", a.core),
        });
        let eal: Vec<String> = eal.split_whitespace().map(String::from).collect();
        dpdk::eal_init(&eal).map_err(|e| e.to_string())?;
        let frame = template(a.ip, a.size)?;
        let opts = DpdkOptions::default();
        match a.mode.as_str() {
            "tx" => {
                let mut port = DpdkPort::open(&a.port, &opts).map_err(|e| e.to_string())?;
                let mut q = port.queues().map_err(|e| e.to_string())?;
                pin(a.core)?;
                let (sent, secs) = send(&mut q.tx, &frame, a.seconds)?;
                let fps = sent as f64 / secs;
                println!(
                    "{}: IPv{} {}-byte frames: {sent} in {secs:.3} s = {fps:.0} frames/s on core {}",
                    port.name(),
                    a.ip,
                    a.size,
                    a.core
                );
                println!("tx_fps={fps:.0}");
            }
            _ => {
                let (da, db) = dpdk::ring_pair("txrate_a", "txrate_b", 1024).map_err(|e| e.to_string())?;
                let mut pa = DpdkPort::open(&da, &opts).map_err(|e| e.to_string())?;
                let mut pb = DpdkPort::open(&db, &opts).map_err(|e| e.to_string())?;
                let mut qa = pa.queues().map_err(|e| e.to_string())?;
                let qb = pb.queues().map_err(|e| e.to_string())?;
                let stop = Arc::new(AtomicBool::new(false));
                let (stop2, rx_core) = (stop.clone(), a.rx_core);
                let receiver = std::thread::spawn(move || -> Res<(u64, u64)> {
                    pin(rx_core)?;
                    let mut rx = qb.rx;
                    let (mut all, mut test) = (0u64, 0u64);
                    let mut idle_after_stop = 0;
                    while idle_after_stop < 1000 {
                        let n = rx
                            .rx_burst(32, |f| {
                                if let Rx::Test { .. } = classify(f) {
                                    test += 1;
                                }
                            })
                            .map_err(|e| e.to_string())?;
                        all += n as u64;
                        if stop2.load(Ordering::Relaxed) && n == 0 {
                            idle_after_stop += 1;
                        }
                    }
                    Ok((all, test))
                });
                pin(a.core)?;
                let (sent, secs) = send(&mut qa.tx, &frame, a.seconds)?;
                stop.store(true, Ordering::Relaxed);
                let (all, test) = receiver.join().map_err(|_| "receiver panicked")??;
                println!(
                    "{da} -> {db}: IPv{} {}-byte frames: sent {sent}, received {all} ({test} test frames) in {secs:.3} s",
                    a.ip, a.size
                );
                println!("tx_fps={:.0}", sent as f64 / secs);
                println!("rx_fps={:.0}", test as f64 / secs);
            }
        }
        Ok(())
    }
}
