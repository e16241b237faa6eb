//! `xlatperf demo`: a complete measurement in a couple of minutes with nothing but root: the lab
//! with a Linux router as the DUT, a throughput search with short trials and a full-length
//! confirmation, a short latency test at the throughput found, and the lab taken down again.
//! Each step is an ordinary xlatperf command, printed before it runs, so the demo also shows
//! how to use the tool.
//!
//! The lab goes down on success, on error and on the first Ctrl-C (which stops after the
//! current trial; see [`crate::interrupt`]). After a second Ctrl-C or a crash,
//! `xlatperf lab down` removes whatever is left.

use anyhow::{bail, Result};
use clap::{Args, Parser};
use xlat_bench::output::human_results;
use xlat_bench::text::group;

use crate::args::parse_rate;
use crate::{interrupt, procedures, Cli, Cmd};

#[derive(Args, Clone, Debug)]
pub struct DemoArgs {
    /// The lab DUT: router4 (the kernel forwarding IPv4) or router6.
    #[arg(long, default_value = "router4")]
    pub topology: String,
    /// The highest rate the throughput search tries, frames/s per direction.
    #[arg(long = "max-rate", value_name = "FPS", default_value = "200000", value_parser = parse_rate)]
    pub max_rate: u64,
    /// Leave the lab up at the end (for trying more commands on it).
    #[arg(long)]
    pub keep: bool,
    /// One line per trial.
    #[arg(short, long)]
    pub verbose: bool,
}

/// Takes the lab down when dropped.
struct LabGuard {
    keep: bool,
}

impl Drop for LabGuard {
    fn drop(&mut self) {
        if self.keep {
            eprintln!("== the lab stays up (--keep); remove it with: xlatperf lab down");
            return;
        }
        eprintln!("== taking the lab down");
        match xlat_lab::down() {
            Ok(r) => eprint!("{r}"),
            Err(e) => eprintln!("warning: taking the lab down failed ({e}); run `xlatperf lab down`"),
        }
    }
}

fn parse(argv: &[String]) -> Result<Cmd> {
    Ok(Cli::try_parse_from(argv)?.cmd)
}

fn show(argv: &[String]) {
    eprintln!("\n$ {}", argv.join(" "));
}

pub fn run(a: &DemoArgs) -> Result<()> {
    let topology: xlat_lab::Topology = a.topology.parse().map_err(|e| anyhow::anyhow!("--topology: {e}"))?;
    if !matches!(topology, xlat_lab::Topology::Router4 | xlat_lab::Topology::Router6) {
        bail!("--topology {topology}: the demo runs on router4 or router6");
    }
    interrupt::install();
    eprintln!("== xlatperf demo: building the lab ({topology}: the Linux kernel forwards between two namespaces)");
    let info = xlat_lab::up(
        topology,
        &xlat_lab::UpOptions {
            replace: true,
            ..Default::default()
        },
    )?;
    let _guard = LabGuard { keep: a.keep };
    let conf = info.config_path.display().to_string();
    eprintln!(
        "lab is up: tester ports {} and {} in {}, DUT in {}",
        info.left_port, info.right_port, info.tester_ns, info.dut_ns
    );
    let verbose: Vec<String> = if a.verbose { vec!["--verbose".into()] } else { vec![] };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<String>>();

    eprintln!("\n== 1. throughput (RFC 2544 26.1, RFC 8219 7.1): binary search with 2 s trials, then a 10 s confirmation");
    // On a small machine the tester may not keep up with --max-rate: the search then treats the
    // rates it cannot send as upper bounds (tester-bound, not failures) and goes on below them.
    let mut argv = s(&[
        "xlatperf",
        "throughput",
        "-c",
        &conf,
        "--short",
        "2",
        "--duration",
        "10",
        "--max-rate",
        &a.max_rate.to_string(),
        "--error",
        "1%",
        "--timeout",
        "500",
        "--retries",
        "2",
    ]);
    argv.extend(verbose.iter().cloned());
    show(&argv);
    let Cmd::Throughput(t) = parse(&argv)? else {
        bail!("internal: not a throughput command")
    };
    let tp = procedures::throughput(&t, &argv)?;
    print!("{}", human_results(&tp));
    if interrupt::requested() {
        bail!("interrupted by Ctrl-C");
    }
    let run = tp.first().and_then(|r| r.result.runs.first());
    let throughput = run.map_or(0, |r| r.throughput);
    let tester_bound = run.and_then(|r| r.bounded_by_tester.then_some(r.tester_bound).flatten());
    if throughput == 0 {
        bail!("the DUT lost frames at every rate tried: no throughput to measure the latency at");
    }

    eprintln!("\n== 2. latency (RFC 8219 7.2) at the throughput: one 20 s trial, 500 tagged frames after 5 s");
    let mut argv = s(&[
        "xlatperf",
        "latency",
        "-c",
        &conf,
        "--rate",
        &throughput.to_string(),
        "--duration",
        "20",
        "--delay",
        "5",
        "--tags",
        "500",
        "--repetitions",
        "1",
        "--timeout",
        "500",
    ]);
    argv.extend(verbose.iter().cloned());
    show(&argv);
    let Cmd::Latency(l) = parse(&argv)? else {
        bail!("internal: not a latency command")
    };
    let lat = procedures::latency(&l, &argv)?;
    print!("{}", human_results(&lat));

    println!(
        "\n== xlatperf demo: results ({topology}, frame size {}, bidirectional)",
        tp[0].frame_size
    );
    println!("throughput: {} frames/s per direction", group(throughput));
    if let Some(b) = tester_bound {
        println!(
            "(bounded by the tester at {} frames/s: the DUT forwarded all the tester could send; on this machine the tester \
             is the limit, not the DUT)",
            group(b)
        );
    } else if throughput >= a.max_rate {
        println!(
            "(no loss up to --max-rate {}: the throughput is at least this; try a higher --max-rate)",
            group(a.max_rate)
        );
    }
    if let Some(run) = lat.first().and_then(|r| r.result.runs.first()) {
        for (name, sum) in [("forward", &run.forward), ("reverse", &run.reverse)] {
            if let Some(sum) = sum {
                println!("{name} latency: typical {}, worst case {}", sum.typical, sum.worst_case);
            }
        }
    }
    println!(
        "These are whole-system figures: the tester and the DUT share this machine's CPUs. Next: the same commands against \
         your own DUT with RFC durations (drop --short/--duration), --repeat 20 --json results.json --plot tp.svg."
    );
    Ok(())
}
