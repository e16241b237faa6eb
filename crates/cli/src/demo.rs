//! `xlatperf demo`: a complete measurement in a couple of minutes with nothing but root: the lab
//! with a Linux router as the DUT, a throughput search with short trials and a full-length
//! confirmation, a short latency test at the throughput found, and the lab taken down again.
//! Each step is an ordinary xlatperf command, printed before it runs, so the demo also shows
//! how to use the tool.
//!
//! `xlatperf demo --stateful` does the same for a stateful DUT (RFC 9693; nftables masquerade
//! in the lab's nat44, or TAYGA with masquerade in nat64): the maximum connection
//! establishment rate with validation, a stateful throughput search (every step after phase 1
//! at half that rate, with the DUT's connection count), and the connection tear-down rate.
//!
//! The lab goes down on success, on error and on the first Ctrl-C (which stops after the
//! current trial; see [`crate::interrupt`]). After a second Ctrl-C or a crash,
//! `xlatperf lab down` removes whatever is left.

use anyhow::{bail, Result};
use clap::{Args, Parser};
use xlat_lab::Topology;
use xlat_results::output::{human_results, SizeResult};
use xlat_results::text::group;
use xlat_results::BenchResult;

use crate::args::parse_rate;
use crate::{interrupt, procedures};

/// A step's command line parsed as `xlatperf`'s own subcommand `A` parses it, so that a line
/// runs as shown when typed.
#[derive(clap::Parser)]
struct Shown<A: Args> {
    #[command(flatten)]
    args: A,
}

#[derive(Args, Clone, Debug)]
pub struct DemoArgs {
    /// The lab DUT: router4 (the kernel forwarding IPv4), router6, lw4o6 (an lwAFTR, the
    /// tester as an lwB4), mape or mapt (a MAP border relay, the tester as a CE); with
    /// --stateful nat44 (the default), nat64, xlat464 or dslite.
    #[arg(long)]
    pub topology: Option<String>,
    /// Measure a stateful DUT (RFC 9693): connection establishment rate, stateful throughput,
    /// connection tear-down rate.
    #[arg(long)]
    pub stateful: bool,
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

/// One step: the command `xlatperf <command> <words>` with `--timeout 500 --retries 2` (and
/// `--verbose` when asked), shown, parsed as the user would have typed it and run by the
/// command's own function `run`.
fn step<A: Args + clap::FromArgMatches, T>(
    command: &str,
    words: &[&str],
    verbose: bool,
    run: impl FnOnce(&A, &[String]) -> Result<Vec<SizeResult<T>>>,
) -> Result<Vec<SizeResult<T>>> {
    let mut argv = strings(&["xlatperf", command]);
    argv.extend(strings(words));
    argv.extend(strings(&["--timeout", "500", "--retries", "2"]));
    if verbose {
        argv.push("--verbose".into());
    }
    eprintln!("\n$ {}", argv.join(" "));
    // The subcommand's name stands where clap expects the program's.
    let a = Shown::<A>::try_parse_from(&argv[1..])?.args;
    run(&a, &argv)
}

/// Print a step's results; stop there after a Ctrl-C.
fn shown<T: BenchResult>(results: Vec<SizeResult<T>>) -> Result<Vec<SizeResult<T>>> {
    print!("{}", human_results(&results));
    if interrupt::requested() {
        bail!("interrupted by Ctrl-C");
    }
    Ok(results)
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// Bring up the lab of `topology` (described as `what`); the guard takes it down again.
/// The topology `--topology` names (the first of `allowed` without it), one of `allowed`.
fn chosen(a: &DemoArgs, allowed: &[Topology], why: &str) -> Result<Topology> {
    let t: Topology = match &a.topology {
        Some(name) => name.parse().map_err(|e| anyhow::anyhow!("--topology: {e}"))?,
        None => allowed[0],
    };
    if !allowed.contains(&t) {
        bail!("--topology {t}: {why}");
    }
    Ok(t)
}

fn lab(topology: Topology, what: &str, keep: bool) -> Result<(String, LabGuard)> {
    interrupt::install();
    eprintln!("== xlatperf demo: building the lab ({topology}: {what})");
    let info = xlat_lab::up(
        topology,
        &xlat_lab::UpOptions {
            replace: true,
            ..Default::default()
        },
    )?;
    let guard = LabGuard { keep };
    eprintln!(
        "lab is up: tester ports {} and {} in {}, DUT in {}",
        info.left_port, info.right_port, info.tester_ns, info.dut_ns
    );
    if let Some(p) = &info.placement {
        eprintln!("CPUs: {}", p.describe());
    }
    Ok((info.config_path.display().to_string(), guard))
}

pub fn run(a: &DemoArgs) -> Result<()> {
    if a.stateful {
        return stateful(a);
    }
    // The stateless topologies whose DUT the kernel runs (TAYGA forwards too slowly for its
    // minutes); the stateful ones with --stateful.
    let why = "the demo runs on router4, router6, lw4o6, mape or mapt (nat44, nat64, xlat464 and dslite with --stateful)";
    let stateless = [
        Topology::ROUTER4,
        Topology::ROUTER6,
        Topology::LW4O6,
        Topology::MAPE,
        Topology::MAPT,
    ];
    let topology = chosen(a, &stateless, why)?;
    let (conf, _guard) = lab(topology, topology.summary(), a.keep)?;

    eprintln!("\n== 1. throughput (RFC 2544 26.1, RFC 8219 7.1): binary search with 2 s trials, then a 5 s confirmation");
    // On a small machine the tester may not keep up with --max-rate: the search then treats the
    // rates it cannot send as upper bounds (tester-bound, not failures) and goes on below them.
    let max = a.max_rate.to_string();
    let tp = shown(step(
        "throughput",
        &["-c", &conf, "--short", "2", "--duration", "5", "--max-rate", &max, "--error", "2%"],
        a.verbose,
        procedures::throughput,
    )?)?;
    let run = tp.first().and_then(|r| r.result.runs.first());
    let throughput = run.map_or(0, |r| r.throughput);
    let tester_bound = run.and_then(|r| r.bounded_by_tester.then_some(r.tester_bound).flatten());
    let bound = run.map(|r| r.bound.clone()).unwrap_or_default();
    if throughput == 0 {
        bail!("the DUT lost frames at every rate tried: no throughput to measure the latency at");
    }

    // What was measured is printed whatever a later step does.
    let mut results = vec![format!("throughput: {} frames/s per direction", group(throughput))];
    results.push(if let Some(b) = tester_bound {
        format!(
            "(bounded by the tester at {} frames/s: the DUT forwarded all the tester could send; on this machine the tester \
             is the limit, not the DUT)",
            group(b)
        )
    } else if throughput >= a.max_rate {
        format!(
            "(no loss up to --max-rate {}: the throughput is at least this; try a higher --max-rate)",
            group(a.max_rate)
        )
    } else {
        format!("({})", bound.describe("frames/s"))
    });

    // 2,000 tags: RFC 8219's 500 remain even when the tester's pauses leave tags out.
    eprintln!("\n== 2. latency (RFC 8219 7.2) at the throughput: one 20 s trial, 2,000 tagged frames after 5 s");
    let rate = throughput.to_string();
    let latency = step(
        "latency",
        &[
            "-c",
            &conf,
            "--rate",
            &rate,
            "--duration",
            "20",
            "--delay",
            "5",
            "--tags",
            "2000",
            "--repetitions",
            "1",
        ],
        a.verbose,
        procedures::latency,
    )
    .and_then(shown);
    let header = format!(
        "\n== xlatperf demo: results ({topology}, frame size {}, bidirectional)",
        tp[0].frame_size
    );
    let lat = match latency {
        Ok(lat) => lat,
        Err(e) => {
            println!("{header}");
            for line in &results {
                println!("{line}");
            }
            println!("latency: not measured ({e:#})");
            return Err(e.context("the demo's latency step failed (the throughput above was measured)"));
        }
    };
    if let Some(run) = lat.first().and_then(|r| r.result.runs.first()) {
        for (name, sum) in [("forward", &run.forward), ("reverse", &run.reverse)] {
            if let Some(sum) = sum {
                results.push(format!("{name} latency: typical {}, worst case {}", sum.typical, sum.worst_case));
            }
        }
        let lost: u64 = run
            .runs
            .iter()
            .flat_map(|r| [&r.forward, &r.reverse])
            .flatten()
            .map(|x| x.lost)
            .sum();
        if lost > 0 {
            // RFC 8219: a lost tag's delay is infinite, so the worst case may be too.
            results.push(format!(
                "({} tags lost, each counted as an infinite delay: the DUT lost frames at {} frames/s over the 20 s \
                 trial, which the search's shorter trials did not show)",
                group(lost),
                group(throughput)
            ));
        }
    }
    println!("{header}");
    for line in &results {
        println!("{line}");
    }
    println!(
        "The DUT ran on CPUs of its own where there are two or more (the line \"CPUs:\" above says which; every trial's JSON has both sides' CPU load). Next: the \
         same commands against your own DUT with RFC durations (drop --short/--duration), --repeat 20 --json results.json \
         --plot tp.svg."
    );
    Ok(())
}

/// The connections each step of the stateful demo opens: 100,000 of the lab's 1,000,000 port
/// pairs (10000-10999 x 1-1000), each once.
const DEMO_CONNECTIONS: &str = "100000";

/// `xlatperf demo --stateful`.
fn stateful(a: &DemoArgs) -> Result<()> {
    let why = "the stateful demo runs on nat44, nat64, xlat464 or dslite";
    let topology = chosen(a, &[Topology::NAT44, Topology::NAT64, Topology::XLAT464, Topology::DSLITE], why)?;
    let (conf, _guard) = lab(topology, topology.summary(), a.keep)?;
    let max = a.max_rate.to_string();
    let error = (a.max_rate / 20).max(1).to_string();

    eprintln!(
        "\n== 1. maximum connection establishment rate (RFC 9693 4.4): binary search on phase 1's rate, {DEMO_CONNECTIONS} \
         connections per step, each step validated (the Responder sends to every connection, all must come back)"
    );
    let cr = shown(step(
        "conn-rate",
        &[
            "-c",
            &conf,
            "--connections",
            DEMO_CONNECTIONS,
            "--max-rate",
            &max,
            "--error",
            &error,
            "--validate",
        ],
        a.verbose,
        procedures::conn_rate,
    )?)?;
    let run = cr.first().and_then(|r| r.result.runs.first());
    let Some(conn_rate) = run.and_then(|r| r.rate) else {
        bail!("no rate established every connection: nothing to load the DUT's table with");
    };
    let conn_bound = run.and_then(|r| r.tester_bound);
    // Phase 1 of the next steps at half that rate: safely below the DUT's limit.
    let safe = (conn_rate / 2).max(1).to_string();

    eprintln!(
        "\n== 2. throughput with a stateful DUT (RFC 9693 4.3): every step empties the DUT's table, opens {DEMO_CONNECTIONS} \
         connections (phase 1 at {safe}/s) and searches with 2 s trials, then a 5 s confirmation"
    );
    let tp = shown(step(
        "throughput",
        &[
            "-c",
            &conf,
            "--short",
            "2",
            "--duration",
            "5",
            "--max-rate",
            &max,
            "--error",
            "2%",
            "--preliminary-frames",
            DEMO_CONNECTIONS,
            "--preliminary-rate",
            &safe,
        ],
        a.verbose,
        procedures::throughput,
    )?)?;
    let tp_run = tp.first().and_then(|r| r.result.runs.first());

    eprintln!("\n== 3. connection tear-down rate (RFC 9693 4.6): load {DEMO_CONNECTIONS} connections, time the DUT's delete-all on the full and on the empty table");
    let td = shown(step(
        "teardown-rate",
        &["-c", &conf, "--connections", DEMO_CONNECTIONS, "--rate", &safe],
        a.verbose,
        procedures::teardown,
    )?)?;

    println!(
        "\n== xlatperf demo --stateful: results ({topology}, {} connections)",
        group(100_000)
    );
    println!(
        "maximum connection establishment rate: {} connections/s (validated)",
        group(conn_rate)
    );
    if let Some(b) = conn_bound {
        println!("(bounded by the tester: it could not send phase 1 at {} connections/s)", group(b));
    }
    if let Some(r) = tp_run {
        println!("throughput: {} frames/s per direction", group(r.throughput));
        if r.bounded_by_tester {
            println!("(bounded by the tester: on this machine the tester is the limit, not the DUT)");
        }
        let counts: Vec<u64> = r.trials.iter().filter_map(|t| t.preliminary.as_ref()?.dut_connections).collect();
        if let (Some(lo), Some(hi)) = (counts.iter().min(), counts.iter().max()) {
            println!(
                "the DUT's table after each phase 1: {} to {} connections ({} steps)",
                group(*lo),
                group(*hi),
                counts.len()
            );
        }
    }
    if let Some(r) = td.first().and_then(|r| r.result.runs.first()) {
        match r.rate_cps {
            Some(x) => println!(
                "connection tear-down rate: {} connections/s ({:.3} s full, {:.3} s empty)",
                group(x as u64),
                r.full_s,
                r.empty_s
            ),
            None => println!("connection tear-down rate: not measurable (the full table was not slower to delete)"),
        }
    }
    println!(
        "The DUT ran on CPUs of its own where there are two or more (the line \"CPUs:\" above says which; every trial's JSON has both sides' CPU load). Next: \
         conntrack-capacity, --connections 10k,100k,1M sweeps, --repeat 20 --json results.json --plot figure.svg \
         (docs/stateful.md)."
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(topology: &str, stateful: bool) -> DemoArgs {
        DemoArgs {
            topology: Some(topology.into()),
            stateful,
            max_rate: 1000,
            keep: false,
            verbose: false,
        }
    }

    /// Each demo runs on its own kind of DUT, refused before any lab is built.
    #[test]
    fn each_demo_names_the_topologies_it_runs_on() {
        let e = run(&args("router4", true)).unwrap_err();
        assert!(
            e.to_string().contains("the stateful demo runs on nat44, nat64, xlat464 or dslite"),
            "{e}"
        );
        let e = run(&args("lw4o6", true)).unwrap_err();
        assert!(e.to_string().contains("the stateful demo runs on"), "{e}");
        let e = run(&args("nat44", false)).unwrap_err();
        assert!(e.to_string().contains("nat44, nat64, xlat464 and dslite with --stateful"), "{e}");
        let e = run(&args("bogus", true)).unwrap_err();
        assert!(e.to_string().contains("--topology"), "{e}");
    }
}
