//! Opening the configured backend and running trials on it: a `Box<dyn TrialRunner>`
//! (`xlat_trial`'s one runner trait, which the engine's `Tester` implements), wrapped by
//! [`Hooks`] when the configuration has DUT commands, so that the rest of the CLI does not care
//! which backend it is.

use anyhow::{anyhow, bail, Context, Result};
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use xlat_config::{Backend, ConfigError, TestConfig};
use xlat_engine::{CpuPlan, HookRun, PhaseTwoAfter, PreliminarySpec, Tester, TrialReport, TrialSpec};
use xlat_io::Port;
use xlat_traffic::Stateful;
use xlat_trial::{TrialError, TrialRunner};

use crate::args::StatefulArgs;

fn cpu_plan(cfg: &TestConfig) -> CpuPlan {
    let c = &cfg.tester.cpus;
    CpuPlan {
        left_send: c.left_send,
        right_recv: c.right_recv,
        right_send: c.right_send,
        left_recv: c.left_recv,
        queues: cfg.tester.queues as usize,
    }
}

/// The longest a DUT hook may run before it is killed and the run fails.
pub const HOOK_DEADLINE: Duration = Duration::from_secs(60);

/// Run the DUT hook `name` (its configuration key): `sh -c command`, standard input and output
/// closed, standard error kept for the message. It must exit with status 0 within `deadline`;
/// otherwise it is killed (by its PID) and the error names the hook, the command, the exit
/// status or the deadline, and the end of its standard error.
pub fn run_hook(name: &str, command: &str, deadline: Duration) -> std::result::Result<(), String> {
    run_command(name, command, deadline, false).1.map(drop)
}

/// The count a `dut.count` command printed: one whole number.
fn parse_count(run: &HookRun) -> std::result::Result<u64, String> {
    let text = run.output.trim();
    text.parse::<u64>().map_err(|_| {
        let shown: String = text.chars().take(200).collect();
        format!(
            "DUT hook {} ({:?}) printed {shown:?}, not a whole number of connections",
            run.key, run.command
        )
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

/// [`run_hook`]: the record of the run (with the end of the standard output when `capture`,
/// else it is closed) and its verdict.
fn run_command(name: &str, command: &str, deadline: Duration, capture: bool) -> (HookRun, std::result::Result<(), String>) {
    let started = Instant::now();
    let mut run = HookRun {
        key: name.to_string(),
        command: command.to_string(),
        ..HookRun::default()
    };
    let r = run_child(&mut run, deadline, capture);
    run.seconds = started.elapsed().as_secs_f64();
    (run, r)
}

fn run_child(run: &mut HookRun, deadline: Duration, capture: bool) -> std::result::Result<(), String> {
    let what = format!("DUT hook {} ({:?})", run.key, run.command);
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(&run.command)
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
    run.exit_status = status.code();
    if capture {
        let buf = out.recv_timeout(Duration::from_secs(1)).unwrap_or_default();
        let text = String::from_utf8_lossy(&buf);
        let text = text.trim_end();
        let start = text.char_indices().rev().nth(499).map_or(0, |(i, _)| i);
        run.output = text[start..].to_string();
    }
    if status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed ({status}); {}", stderr_tail(&rx)))
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

/// Where this process's trial tags start: apart in two processes started apart (the clock's
/// nanoseconds and the process id), so that two testers sending into the same ports see each
/// other's frames as foreign (the trial is then invalid) instead of counting them as their own.
/// Only the tags depend on it, never a result.
fn tag_start() -> u8 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mixed = u64::from(nanos ^ std::process::id().wrapping_mul(0x9e37_79b9)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    (mixed >> 56) as u8
}

fn ready<P: Port + 'static>(cfg: &TestConfig, left: P, right: P) -> Result<Box<dyn TrialRunner>> {
    let mut setup = cfg.setup.clone();
    if cfg.tester.loopback || cfg.tester.backend == Backend::Mem {
        // The ports are cabled to each other (self-test): each side's "DUT" is the other port.
        setup.left.dut_mac = setup.left.dut_mac.or(Some(right.mac()));
        setup.right.dut_mac = setup.right.dut_mac.or(Some(left.mac()));
    }
    let mut t = Tester::new(setup, left, right, cpu_plan(cfg))?;
    t.set_trial_tag_start(tag_start());
    t.prepare(Duration::from_secs(3)).context("resolving the DUT's MAC addresses")?;
    let log: Arc<Mutex<Vec<HookRun>>> = Arc::default();
    let count = Arc::new(AtomicU64::new(NOT_COUNTED));
    let between = cfg.dut.between_phases.clone();
    let count_command = cfg.dut.count.clone();
    if between.is_some() || count_command.is_some() {
        let (log, count, count_command) = (Arc::clone(&log), Arc::clone(&count), count_command.clone());
        t.set_between_phases(Some(Box::new(move || {
            if let Some(command) = &between {
                let (run, r) = run_command("dut.between_phases", command, HOOK_DEADLINE, false);
                record(&log, run.clone());
                r?;
            }
            if let Some(command) = &count_command {
                let (run, r) = run_command("dut.count", command, HOOK_DEADLINE, true);
                record(&log, run.clone());
                r?;
                count.store(parse_count(&run)?, Ordering::Relaxed);
            }
            Ok(())
        })));
    }
    let hooks = [&cfg.dut.before_trial, &cfg.dut.between_phases, &cfg.dut.count];
    if hooks.iter().all(|h| h.is_none()) {
        return Ok(Box::new(t));
    }
    Ok(Box::new(Hooks {
        inner: Box::new(t),
        before_trial: cfg.dut.before_trial.clone(),
        count_command,
        count,
        log,
    }))
}

/// No `dut.count` reading yet.
const NOT_COUNTED: u64 = u64::MAX;

fn record(log: &Mutex<Vec<HookRun>>, run: HookRun) {
    log.lock().unwrap_or_else(|e| e.into_inner()).push(run);
}

/// A runner with DUT commands: `dut.before_trial` before every trial (a failure stops the
/// run before the trial); `dut.count` read between the phases (or after phase 1 alone) into
/// the report's `preliminary.dut_connections`; every command run for a trial (also
/// `dut.between_phases`, which the tester runs) recorded in the report's `dut_hooks`.
struct Hooks {
    inner: Box<dyn TrialRunner>,
    before_trial: Option<String>,
    count_command: Option<String>,
    count: Arc<AtomicU64>,
    log: Arc<Mutex<Vec<HookRun>>>,
}

impl Hooks {
    /// Before a trial: forget the last one's records, run `dut.before_trial`.
    fn before(&mut self, what: &str) -> std::result::Result<(), TrialError> {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.count.store(NOT_COUNTED, Ordering::Relaxed);
        if let Some(command) = &self.before_trial {
            let (run, r) = run_command("dut.before_trial", command, HOOK_DEADLINE, false);
            record(&self.log, run);
            r.map_err(|e| TrialError::msg(format!("{e}; the {what} was not run")))?;
        }
        Ok(())
    }

    /// After a trial: the count (read now after a valid phase 1 that ran alone) and the
    /// records into the report.
    fn after(&mut self, mut r: TrialReport) -> std::result::Result<TrialReport, TrialError> {
        let mut n = self.count.swap(NOT_COUNTED, Ordering::Relaxed);
        if let (Some(command), Some(_)) = (&self.count_command, &r.preliminary) {
            if n == NOT_COUNTED && r.forward.is_none() && r.reverse.is_none() && r.valid {
                let (run, res) = run_command("dut.count", command, HOOK_DEADLINE, true);
                record(&self.log, run.clone());
                res.map_err(TrialError::msg)?;
                n = parse_count(&run).map_err(TrialError::msg)?;
            }
        }
        if let Some(p) = r.preliminary.as_mut() {
            p.dut_connections = (n != NOT_COUNTED).then_some(n);
        }
        r.dut_hooks = std::mem::take(&mut *self.log.lock().unwrap_or_else(|e| e.into_inner()));
        Ok(r)
    }
}

impl TrialRunner for Hooks {
    fn run(&mut self, spec: &TrialSpec) -> std::result::Result<TrialReport, TrialError> {
        self.before("trial")?;
        let r = self.inner.run(spec)?;
        self.after(r)
    }

    fn run_preliminary(&mut self, spec: &TrialSpec, validation: Option<u64>) -> std::result::Result<TrialReport, TrialError> {
        self.before("step")?;
        let r = self.inner.run_preliminary(spec, validation)?;
        self.after(r)
    }

    fn describe(&self) -> String {
        let mut s = self.inner.describe();
        if let Some(c) = &self.before_trial {
            s.push_str(&format!("; before every trial: {c}"));
        }
        if let Some(c) = &self.count_command {
            s.push_str(&format!("; connections counted after phase 1: {c}"));
        }
        s
    }

    fn set_directions(&mut self, forward: bool, reverse: bool) -> std::result::Result<(), TrialError> {
        self.inner.set_directions(forward, reverse)
    }

    fn set_phase_two_after(&mut self, when: PhaseTwoAfter) -> std::result::Result<(), TrialError> {
        self.inner.set_phase_two_after(when)
    }
}

/// Open both ports of the configured backend and resolve the DUT.
pub fn open(cfg: &TestConfig) -> Result<Box<dyn TrialRunner>> {
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
                queues: t.queues.max(1),
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
fn open_dpdk(cfg: &TestConfig) -> Result<Box<dyn TrialRunner>> {
    crate::dpdk_glue::open(cfg, |l, r| ready(cfg, l, r))
}

#[cfg(not(feature = "dpdk"))]
fn open_dpdk(_cfg: &TestConfig) -> Result<Box<dyn TrialRunner>> {
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

    impl TrialRunner for Recorder {
        fn run(&mut self, spec: &TrialSpec) -> std::result::Result<TrialReport, TrialError> {
            self.0.lock().expect("lock").push(spec.clone());
            Ok(TrialReport::default())
        }
        fn describe(&self) -> String {
            "recorder".into()
        }
    }

    #[test]
    fn before_trial_runs_first_and_a_failure_skips_the_trial() {
        let dir = std::env::temp_dir().join(format!("xlatperf-hook-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let marker = dir.join("count");
        let trials = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut r = Hooks {
            inner: Box::new(Recorder(trials.clone())),
            before_trial: Some(format!("echo x >> {}", marker.display())),
            count_command: None,
            count: Arc::new(AtomicU64::new(NOT_COUNTED)),
            log: Arc::default(),
        };
        let spec = TrialSpec::new(84, 1000, 1.0, 10);
        r.run(&spec).expect("trial 1");
        let report = r.run(&spec).expect("trial 2");
        // Each trial records its own hook runs: the command, its exit status, its time.
        assert_eq!(report.dut_hooks.len(), 1, "{:?}", report.dut_hooks);
        let h = &report.dut_hooks[0];
        assert_eq!((h.key.as_str(), h.exit_status), ("dut.before_trial", Some(0)));
        assert!(h.seconds > 0.0 && h.command.starts_with("echo x"), "{h:?}");
        assert_eq!(std::fs::read_to_string(&marker).expect("marker"), "x\nx\n");
        assert_eq!(trials.lock().expect("lock").len(), 2);
        let mut r = Hooks {
            inner: Box::new(Recorder(trials.clone())),
            before_trial: Some("echo conntrack: no such table >&2; exit 1".into()),
            count_command: None,
            count: Arc::new(AtomicU64::new(NOT_COUNTED)),
            log: Arc::default(),
        };
        let e = r.run(&spec).expect_err("hook fails");
        assert!(e.to_string().contains("DUT hook dut.before_trial"), "{e}");
        assert!(e.to_string().contains("(exit status: 1)"), "{e}");
        assert!(e.to_string().contains("conntrack: no such table"), "{e}");
        assert!(e.to_string().ends_with("the trial was not run"), "{e}");
        assert_eq!(trials.lock().expect("lock").len(), 2, "the trial ran after a failed hook");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Phase 1 alone, valid, as a stateful DUT's conn-rate step.
    struct PhaseOne;

    impl TrialRunner for PhaseOne {
        fn run(&mut self, _: &TrialSpec) -> std::result::Result<TrialReport, TrialError> {
            Err(TrialError::msg("phase 1 only"))
        }
        fn run_preliminary(&mut self, spec: &TrialSpec, _: Option<u64>) -> std::result::Result<TrialReport, TrialError> {
            let mut r = TrialReport::of(spec);
            r.preliminary = Some(xlat_engine::PreliminaryReport::default());
            Ok(r)
        }
        fn describe(&self) -> String {
            "phase one".into()
        }
    }

    #[test]
    fn the_count_after_phase_one_is_reported_and_must_be_a_number() {
        let spec = TrialSpec::new(84, 1000, 1.0, 10);
        let mut r = Hooks {
            inner: Box::new(PhaseOne),
            before_trial: Some("true".into()),
            count_command: Some("echo 1234".into()),
            count: Arc::new(AtomicU64::new(NOT_COUNTED)),
            log: Arc::default(),
        };
        let report = r.run_preliminary(&spec, None).expect("step");
        assert_eq!(report.preliminary.as_ref().and_then(|p| p.dut_connections), Some(1234));
        let keys: Vec<&str> = report.dut_hooks.iter().map(|h| h.key.as_str()).collect();
        assert_eq!(keys, ["dut.before_trial", "dut.count"]);
        assert_eq!(report.dut_hooks[1].output, "1234");
        assert!(r.describe().contains("counted after phase 1: echo 1234"), "{}", r.describe());
        let mut r = Hooks {
            inner: Box::new(PhaseOne),
            before_trial: None,
            count_command: Some("echo table full".into()),
            count: Arc::new(AtomicU64::new(NOT_COUNTED)),
            log: Arc::default(),
        };
        let e = r.run_preliminary(&spec, None).expect_err("not a number");
        assert!(
            e.to_string().contains("printed \"table full\", not a whole number of connections"),
            "{e}"
        );
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
