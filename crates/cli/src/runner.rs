//! Opening the configured backend and running trials on it, behind one object-safe trait so
//! the rest of the CLI does not care which backend it is.

use anyhow::{anyhow, bail, Context, Result};
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use xlat_config::{Backend, ConfigError, TestConfig};
use xlat_engine::{CpuPlan, PreliminarySpec, Tester, TrialReport, TrialSpec};
use xlat_io::Port;
use xlat_traffic::Stateful;

use crate::args::StatefulArgs;

/// A tester ready to run trials.
pub trait Runner {
    fn run_trial(&mut self, spec: &TrialSpec) -> Result<TrialReport>;
    /// Phase 1 of the stateful `spec` alone (RFC 9693's connection establishment rate), and a
    /// validation phase at `validation` frames/s when given.
    fn run_preliminary(&mut self, spec: &TrialSpec, validation: Option<u64>) -> Result<TrialReport> {
        let _ = (spec, validation);
        Err(anyhow!("this runner cannot run phase 1 alone"))
    }
    /// "left-port -> right-port" and the DUT MACs, for the human header.
    fn describe(&self) -> String;
    /// Choose the active directions of the next trials.
    fn set_directions(&mut self, forward: bool, reverse: bool);
}

impl<P: Port> Runner for Tester<P> {
    fn run_trial(&mut self, spec: &TrialSpec) -> Result<TrialReport> {
        Ok(Tester::run_trial(self, spec)?)
    }

    fn run_preliminary(&mut self, spec: &TrialSpec, validation: Option<u64>) -> Result<TrialReport> {
        Ok(Tester::run_preliminary(self, spec, validation)?)
    }

    fn set_directions(&mut self, forward: bool, reverse: bool) {
        Tester::set_directions(self, forward, reverse)
    }

    fn describe(&self) -> String {
        let (l, r) = self.port_names();
        let (dl, dr) = self.dut_macs();
        let m = |m: Option<xlat_wire::MacAddr>| m.map(|m| m.to_string()).unwrap_or_else(|| "?".into());
        format!("left {l} (DUT {}), right {r} (DUT {})", m(dl), m(dr))
    }
}

fn cpu_plan(cfg: &TestConfig) -> CpuPlan {
    let c = &cfg.tester.cpus;
    CpuPlan {
        left_send: c.left_send,
        right_recv: c.right_recv,
        right_send: c.right_send,
        left_recv: c.left_recv,
    }
}

/// The adapter that lets the bench procedures drive a [`Runner`].
pub struct BenchRunner(pub Box<dyn Runner>);

impl xlat_bench::TrialRunner for BenchRunner {
    fn run(&mut self, spec: &TrialSpec) -> std::result::Result<TrialReport, xlat_bench::BenchError> {
        self.0.run_trial(spec).map_err(|e| xlat_bench::BenchError::Trial(format!("{e:#}")))
    }

    fn set_directions(&mut self, forward: bool, reverse: bool) -> std::result::Result<(), xlat_bench::BenchError> {
        self.0.set_directions(forward, reverse);
        Ok(())
    }

    fn run_preliminary(&mut self, spec: &TrialSpec, validation: Option<u64>) -> std::result::Result<TrialReport, xlat_bench::BenchError> {
        self.0
            .run_preliminary(spec, validation)
            .map_err(|e| xlat_bench::BenchError::Trial(format!("{e:#}")))
    }
}

/// The longest a DUT hook may run before it is killed and the run fails.
pub const HOOK_DEADLINE: Duration = Duration::from_secs(60);

/// Run the DUT hook `name` (its configuration key): `sh -c command`, standard input and output
/// closed, standard error kept for the message. It must exit with status 0 within `deadline`;
/// otherwise it is killed (by its PID) and the error names the hook, the command, the exit
/// status or the deadline, and the end of its standard error.
pub fn run_hook(name: &str, command: &str, deadline: Duration) -> std::result::Result<(), String> {
    run_command(name, command, deadline, false).map(drop)
}

/// Run the DUT hook `name` that prints a count (`dut.count`): [`run_hook`], and its standard
/// output must be one whole number.
pub fn run_count_hook(name: &str, command: &str, deadline: Duration) -> std::result::Result<u64, String> {
    let out = run_command(name, command, deadline, true)?;
    let text = out.trim();
    text.parse::<u64>().map_err(|_| {
        let shown: String = text.chars().take(200).collect();
        format!("DUT hook {name} ({command:?}) printed {shown:?}, not a whole number of connections")
    })
}

/// Read a pipe to its end on a thread (a command writing much must not block on a full pipe; a
/// process the command left behind may keep the pipe open, so it is never joined).
fn drain(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut p) = pipe {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = p.read_to_end(&mut buf);
            let _ = tx.send(buf);
        });
    }
    rx
}

/// [`run_hook`], returning the standard output when `capture` (else it is closed).
fn run_command(name: &str, command: &str, deadline: Duration, capture: bool) -> std::result::Result<String, String> {
    let what = format!("DUT hook {name} ({command:?})");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(if capture { Stdio::piped() } else { Stdio::null() })
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{what}: cannot start sh: {e}"))?;
    let rx = drain(child.stderr.take());
    let out = drain(child.stdout.take());
    let stderr_tail = |rx: &mpsc::Receiver<Vec<u8>>| {
        let buf = rx.recv_timeout(Duration::from_secs(1)).unwrap_or_default();
        let text = String::from_utf8_lossy(&buf);
        let text = text.trim();
        let start = text.char_indices().rev().nth(499).map_or(0, |(i, _)| i);
        if text.is_empty() {
            "no output on standard error".to_string()
        } else {
            format!("standard error: {}", text[start..].replace('\n', " | "))
        }
    };
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= deadline => {
                let pid = child.id();
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{what} did not end within {} s and was killed (PID {pid}); {}",
                    deadline.as_secs_f64(),
                    stderr_tail(&rx)
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{what}: waiting for it failed: {e}"));
            }
        }
    };
    if status.success() {
        let buf = if capture {
            out.recv_timeout(Duration::from_secs(1)).unwrap_or_default()
        } else {
            Vec::new()
        };
        Ok(String::from_utf8_lossy(&buf).into_owned())
    } else {
        Err(format!("{what} failed ({status}); {}", stderr_tail(&rx)))
    }
}

/// A runner that runs the `dut.before_trial` hook before every trial.
struct BeforeTrial {
    inner: Box<dyn Runner>,
    command: String,
}

impl Runner for BeforeTrial {
    fn run_trial(&mut self, spec: &TrialSpec) -> Result<TrialReport> {
        run_hook("dut.before_trial", &self.command, HOOK_DEADLINE).map_err(|e| anyhow!("{e}; the trial was not run"))?;
        self.inner.run_trial(spec)
    }

    fn run_preliminary(&mut self, spec: &TrialSpec, validation: Option<u64>) -> Result<TrialReport> {
        run_hook("dut.before_trial", &self.command, HOOK_DEADLINE).map_err(|e| anyhow!("{e}; the step was not run"))?;
        self.inner.run_preliminary(spec, validation)
    }

    fn describe(&self) -> String {
        format!("{}; before every trial: {}", self.inner.describe(), self.command)
    }

    fn set_directions(&mut self, forward: bool, reverse: bool) {
        self.inner.set_directions(forward, reverse)
    }
}

/// The command-line option that gives the configuration key `path` of phase 1.
fn option_of(path: &str) -> &'static str {
    match path {
        "stateful.preliminary_frames" => "--preliminary-frames N",
        "stateful.state_table" => "--state-table M",
        "stateful.preliminary_rate" => "--preliminary-rate R",
        "stateful.preliminary_timeout_ms" => "--preliminary-timeout T",
        _ => "--phase-delay D",
    }
}

/// Phase 1 of every trial of a stateful test: the options override `[stateful]` in `cfg`
/// (and are refused in a stateless test), then the defaults are filled in and the values
/// checked ([`xlat_config::preliminary`]). `None` for a stateless test.
/// Load the configuration with the `--set` overrides `sets` and the phase 1 options `flags`
/// (which override `[stateful]` as `--set` does, so that every check sees them), and resolve
/// phase 1 ([`preliminary`]). Phase 1 options with a stateless configuration are refused
/// by their names.
pub fn load_stateful(
    path: &std::path::Path,
    sets: &[(String, String)],
    flags: &StatefulArgs,
) -> Result<(TestConfig, Option<PreliminarySpec>)> {
    let mut all = sets.to_vec();
    all.extend(flags.as_sets());
    let mut cfg = match xlat_config::load(path, &all) {
        Ok(c) => c,
        Err(e) if !flags.given().is_empty() => {
            // A stateless configuration refuses the keys: name the options instead.
            if let Ok(mut plain) = xlat_config::load(path, sets) {
                if plain.setup.stateful.mode == Stateful::Off {
                    preliminary(&mut plain, flags)?;
                }
            }
            return Err(e.into());
        }
        Err(e) => return Err(e.into()),
    };
    let pre = preliminary(&mut cfg, flags)?;
    Ok((cfg, pre))
}

pub fn preliminary(cfg: &mut TestConfig, flags: &StatefulArgs) -> Result<Option<PreliminarySpec>> {
    if cfg.setup.stateful.mode == Stateful::Off {
        let given = flags.given();
        if !given.is_empty() {
            bail!(
                "{} {} only for a stateful test, but stateful.mode is off in {} (set it, e.g. --set stateful.mode=initiator-left)",
                given.join(", "),
                if given.len() == 1 { "is" } else { "are" },
                cfg.source.file
            );
        }
        return Ok(None);
    }
    let p = &mut cfg.stateful;
    p.preliminary_frames = flags.preliminary_frames.or(p.preliminary_frames);
    p.state_table = flags.state_table.or(p.state_table);
    p.preliminary_rate = flags.preliminary_rate.or(p.preliminary_rate);
    p.preliminary_timeout_ms = flags.preliminary_timeout.or(p.preliminary_timeout_ms);
    p.phase_delay_ms = flags.phase_delay.or(p.phase_delay_ms);
    let resolved = xlat_config::preliminary(cfg).map_err(|e| match &e {
        ConfigError::Required { key, .. } => anyhow!("{e}; or give {}", option_of(key)),
        _ => anyhow!("{e}"),
    })?;
    Ok(Some(PreliminarySpec {
        frames: u64::from(resolved.frames),
        state_table: u64::from(resolved.state_table),
        rate: resolved.rate,
        timeout_ms: resolved.timeout_ms,
        phase_delay_ms: resolved.phase_delay_ms,
    }))
}

/// Refuse a stateful configuration in a command that cannot run one (rather than run it
/// stateless without a word).
pub fn refuse_stateful(cfg: &TestConfig, command: &str) -> Result<()> {
    if cfg.setup.stateful.mode != Stateful::Off {
        bail!(
            "{command} cannot run a stateful test (RFC 9693), but stateful.mode is on in {}: use a stateless configuration \
             (e.g. --set stateful.mode=off, with the enumeration and phase 1 keys removed)",
            cfg.source.file
        );
    }
    Ok(())
}

fn ready<P: Port + 'static>(cfg: &TestConfig, left: P, right: P) -> Result<Box<dyn Runner>> {
    let mut setup = cfg.setup.clone();
    if cfg.tester.loopback || cfg.tester.backend == Backend::Mem {
        // The ports are cabled to each other (self-test): each side's "DUT" is the other port.
        setup.left.dut_mac = setup.left.dut_mac.or(Some(right.mac()));
        setup.right.dut_mac = setup.right.dut_mac.or(Some(left.mac()));
    }
    let mut t = Tester::new(setup, left, right, cpu_plan(cfg))?;
    t.prepare(Duration::from_secs(3)).context("resolving the DUT's MAC addresses")?;
    let between = cfg.dut.between_phases.clone();
    let count = cfg.dut.count.clone().map(|c| (c, Arc::new(AtomicU64::new(NOT_COUNTED))));
    if between.is_some() || count.is_some() {
        let count = count.clone();
        t.set_between_phases(Some(Box::new(move || {
            if let Some(command) = &between {
                run_hook("dut.between_phases", command, HOOK_DEADLINE)?;
            }
            if let Some((command, slot)) = &count {
                slot.store(run_count_hook("dut.count", command, HOOK_DEADLINE)?, Ordering::Relaxed);
            }
            Ok(())
        })));
    }
    let mut runner: Box<dyn Runner> = Box::new(t);
    if let Some((command, slot)) = count {
        runner = Box::new(Count {
            inner: runner,
            command,
            slot,
        });
    }
    if let Some(command) = cfg.dut.before_trial.clone() {
        runner = Box::new(BeforeTrial { inner: runner, command });
    }
    Ok(runner)
}

/// No `dut.count` reading yet.
const NOT_COUNTED: u64 = u64::MAX;

/// A runner that reports the DUT's connection count (`dut.count`, read between the phases, or
/// after phase 1 alone) in each stateful trial's `preliminary.dut_connections`.
struct Count {
    inner: Box<dyn Runner>,
    command: String,
    slot: Arc<AtomicU64>,
}

impl Count {
    /// The count read during the trial (or now, after a valid phase 1 that ran alone).
    fn report(&mut self, mut r: TrialReport) -> Result<TrialReport> {
        let mut n = self.slot.swap(NOT_COUNTED, Ordering::Relaxed);
        let Some(p) = r.preliminary.as_mut() else {
            return Ok(r);
        };
        if n == NOT_COUNTED && r.forward.is_none() && r.reverse.is_none() && r.valid {
            n = run_count_hook("dut.count", &self.command, HOOK_DEADLINE).map_err(|e| anyhow!(e))?;
        }
        p.dut_connections = (n != NOT_COUNTED).then_some(n);
        Ok(r)
    }
}

impl Runner for Count {
    fn run_trial(&mut self, spec: &TrialSpec) -> Result<TrialReport> {
        self.slot.store(NOT_COUNTED, Ordering::Relaxed);
        let r = self.inner.run_trial(spec)?;
        self.report(r)
    }

    fn run_preliminary(&mut self, spec: &TrialSpec, validation: Option<u64>) -> Result<TrialReport> {
        self.slot.store(NOT_COUNTED, Ordering::Relaxed);
        let r = self.inner.run_preliminary(spec, validation)?;
        self.report(r)
    }

    fn describe(&self) -> String {
        format!("{}; connections counted after phase 1: {}", self.inner.describe(), self.command)
    }

    fn set_directions(&mut self, forward: bool, reverse: bool) {
        self.inner.set_directions(forward, reverse)
    }
}

/// Open both ports of the configured backend and resolve the DUT.
pub fn open(cfg: &TestConfig) -> Result<Box<dyn Runner>> {
    let t = &cfg.tester;
    match t.backend {
        Backend::Mem => {
            let (l, r) = xlat_io::mem::pair(1 << 16);
            ready(cfg, l, r)
        }
        Backend::AfPacket => {
            let opts = xlat_io::afpacket::AfPacketOptions {
                netns: t.netns.clone(),
                promisc: t.promisc,
                ..Default::default()
            };
            let l = xlat_io::afpacket::AfPacketPort::open(&t.left_port, opts.clone())
                .with_context(|| format!("opening left port {}", t.left_port))?;
            let r = xlat_io::afpacket::AfPacketPort::open(&t.right_port, opts)
                .with_context(|| format!("opening right port {}", t.right_port))?;
            ready(cfg, l, r)
        }
        Backend::AfXdp => {
            let opts = xlat_io::afxdp::AfXdpOptions {
                netns: t.netns.clone(),
                promisc: t.promisc,
                ..Default::default()
            };
            let l = open_afxdp(&t.left_port, "left", &opts)?;
            let r = open_afxdp(&t.right_port, "right", &opts)?;
            ready(cfg, l, r)
        }
        Backend::Dpdk => open_dpdk(cfg),
    }
}

/// Open an afxdp port, saying on standard error how its XDP program and socket work.
pub(crate) fn open_afxdp(iface: &str, side: &str, opts: &xlat_io::afxdp::AfXdpOptions) -> Result<xlat_io::afxdp::AfXdpPort> {
    let p = xlat_io::afxdp::AfXdpPort::open(iface, opts.clone()).with_context(|| format!("opening {side} port {iface}"))?;
    eprintln!("afxdp: {side} port {}: {}", xlat_io::Port::name(&p), p.mode());
    Ok(p)
}

#[cfg(feature = "dpdk")]
fn open_dpdk(cfg: &TestConfig) -> Result<Box<dyn Runner>> {
    crate::dpdk_glue::open(cfg, |l, r| ready(cfg, l, r))
}

#[cfg(not(feature = "dpdk"))]
fn open_dpdk(_cfg: &TestConfig) -> Result<Box<dyn Runner>> {
    anyhow::bail!("{}", xlat_io::IoError::Absent("dpdk"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn hooks_succeed_fail_and_time_out() {
        assert_eq!(run_hook("dut.before_trial", "true", HOOK_DEADLINE), Ok(()));
        // A chatty command does not block on a full pipe.
        assert_eq!(run_hook("dut.before_trial", "head -c 1000000 /dev/zero >&2", HOOK_DEADLINE), Ok(()));
        let e = run_hook("dut.before_trial", "echo no table >&2; exit 3", HOOK_DEADLINE).expect_err("exit 3");
        assert!(
            e.starts_with("DUT hook dut.before_trial (\"echo no table >&2; exit 3\") failed (exit status: 3)"),
            "{e}"
        );
        assert!(e.ends_with("standard error: no table"), "{e}");
        let e = run_hook("dut.between_phases", "exit 1", HOOK_DEADLINE).expect_err("exit 1");
        assert!(e.contains("no output on standard error"), "{e}");
        let started = Instant::now();
        let e = run_hook("dut.between_phases", "echo slow >&2; exec sleep 30", Duration::from_millis(300)).expect_err("deadline");
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        assert!(e.contains("did not end within 0.3 s and was killed (PID "), "{e}");
        assert!(e.contains("slow"), "{e}");
    }

    /// Records the trials it is asked to run.
    pub(crate) struct Recorder(pub std::sync::Arc<std::sync::Mutex<Vec<TrialSpec>>>);

    impl Runner for Recorder {
        fn run_trial(&mut self, spec: &TrialSpec) -> Result<TrialReport> {
            self.0.lock().expect("lock").push(spec.clone());
            Ok(TrialReport::default())
        }
        fn describe(&self) -> String {
            "recorder".into()
        }
        fn set_directions(&mut self, _: bool, _: bool) {}
    }

    #[test]
    fn before_trial_runs_first_and_a_failure_skips_the_trial() {
        let dir = std::env::temp_dir().join(format!("xlatperf-hook-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let marker = dir.join("count");
        let trials = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut r = BeforeTrial {
            inner: Box::new(Recorder(trials.clone())),
            command: format!("echo x >> {}", marker.display()),
        };
        let spec = TrialSpec::new(84, 1000, 1.0, 10);
        r.run_trial(&spec).expect("trial 1");
        r.run_trial(&spec).expect("trial 2");
        assert_eq!(std::fs::read_to_string(&marker).expect("marker"), "x\nx\n");
        assert_eq!(trials.lock().expect("lock").len(), 2);
        let mut r = BeforeTrial {
            inner: Box::new(Recorder(trials.clone())),
            command: "echo conntrack: no such table >&2; exit 1".into(),
        };
        let e = r.run_trial(&spec).expect_err("hook fails");
        assert!(e.to_string().contains("DUT hook dut.before_trial"), "{e}");
        assert!(e.to_string().contains("(exit status: 1)"), "{e}");
        assert!(e.to_string().contains("conntrack: no such table"), "{e}");
        assert!(e.to_string().ends_with("the trial was not run"), "{e}");
        assert_eq!(trials.lock().expect("lock").len(), 2, "the trial ran after a failed hook");
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn stateful_cfg(extra: &str) -> TestConfig {
        let text = format!(
            "[tester]\nbackend = \"mem\"\n[left]\nip_version = 4\nipv4_real = \"198.18.0.2\"\n[right]\nip_version = 4\n\
             ipv4_real = \"198.19.0.2\"\n[stateful]\nmode = \"initiator-left\"\n{extra}"
        );
        xlat_config::parse_toml(&text, "t.toml").expect("config")
    }

    #[test]
    fn phase_1_from_the_file_and_the_options() {
        let flags = StatefulArgs::default();
        // From the file, with the defaults.
        let mut cfg = stateful_cfg("preliminary_frames = 1000\npreliminary_rate = 2000\n");
        let p = preliminary(&mut cfg, &flags).expect("ok").expect("stateful");
        assert_eq!(
            p,
            PreliminarySpec {
                frames: 1000,
                state_table: 1000,
                rate: 2000,
                timeout_ms: 500,
                phase_delay_ms: 1500,
            }
        );
        // The options override the file.
        let flags = StatefulArgs {
            preliminary_frames: Some(4000),
            state_table: Some(3000),
            preliminary_rate: Some(1000),
            preliminary_timeout: Some(100),
            phase_delay: Some(5000),
        };
        let p = preliminary(&mut cfg, &flags).expect("ok").expect("stateful");
        assert_eq!(
            p,
            PreliminarySpec {
                frames: 4000,
                state_table: 3000,
                rate: 1000,
                timeout_ms: 100,
                phase_delay_ms: 5000,
            }
        );
        // Missing N names the key and the option.
        let mut cfg = stateful_cfg("");
        let e = preliminary(&mut cfg, &StatefulArgs::default()).expect_err("no N");
        assert!(e.to_string().contains("'stateful.preliminary_frames' must be set"), "{e}");
        assert!(e.to_string().ends_with("or give --preliminary-frames N"), "{e}");
        let e = preliminary(
            &mut cfg,
            &StatefulArgs {
                preliminary_frames: Some(10),
                ..Default::default()
            },
        )
        .expect_err("no R");
        assert!(e.to_string().ends_with("or give --preliminary-rate R"), "{e}");
        // The checks apply to the options too: D shorter than phase 1.
        let e = preliminary(
            &mut cfg,
            &StatefulArgs {
                preliminary_frames: Some(1000),
                preliminary_rate: Some(1000),
                phase_delay: Some(1499),
                ..Default::default()
            },
        )
        .expect_err("D short");
        assert!(e.to_string().contains("'stateful.phase_delay_ms' (1499 ms)"), "{e}");
    }

    #[test]
    fn phase_1_options_refused_in_a_stateless_test() {
        let mut cfg = stateful_cfg("");
        cfg.setup.stateful.mode = Stateful::Off;
        assert_eq!(preliminary(&mut cfg, &StatefulArgs::default()).expect("stateless"), None);
        let e = preliminary(
            &mut cfg,
            &StatefulArgs {
                preliminary_frames: Some(10),
                phase_delay: Some(10),
                ..Default::default()
            },
        )
        .expect_err("refused");
        assert!(
            e.to_string()
                .starts_with("--preliminary-frames, --phase-delay are only for a stateful test, but stateful.mode is off in t.toml"),
            "{e}"
        );
        refuse_stateful(&cfg, "selftest").expect("stateless is fine");
        let e = refuse_stateful(&stateful_cfg(""), "selftest").expect_err("stateful");
        assert!(e.to_string().starts_with("selftest cannot run a stateful test"), "{e}");
    }
}
