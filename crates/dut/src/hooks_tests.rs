use super::*;
use std::cell::Cell;
use xlat_testkit::fake::Fake;

/// A hook killed at its deadline takes what it started with it: a `sleep` the shell runs (not
/// execs) would otherwise outlive it, holding whatever the shell had open.
#[test]
fn a_hook_killed_at_its_deadline_takes_its_children_with_it() {
    let file = std::env::temp_dir().join(format!("xlatperf-hook-child-{}", std::process::id()));
    let command = format!("sleep 300 & echo $! > {}; wait", file.display());
    let e = run_hook("dut.reset", &command, Duration::from_millis(300))
        .expect_err("deadline")
        .to_string();
    assert!(e.contains("was killed"), "{e}");
    let pid: u32 = std::fs::read_to_string(&file)
        .expect("the child's PID")
        .trim()
        .parse()
        .expect("a PID");
    let _ = std::fs::remove_file(&file);
    let proc_dir = format!("/proc/{pid}");
    let started = Instant::now();
    // Killed at once; its reaping by the new parent may take a moment.
    while std::path::Path::new(&proc_dir).exists() && started.elapsed() < Duration::from_secs(5) {
        let state = std::fs::read_to_string(format!("{proc_dir}/stat")).unwrap_or_default();
        if state.split_whitespace().nth(2) == Some("Z") {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let state = std::fs::read_to_string(format!("{proc_dir}/stat")).unwrap_or_default();
    assert!(
        state.is_empty() || state.split_whitespace().nth(2) == Some("Z"),
        "the hook's child {pid} lives on: {state}"
    );
}

#[test]
fn hooks_succeed_fail_and_time_out() {
    assert!(run_hook("dut.before_trial", "true", HOOK_DEADLINE).is_ok());
    // A chatty command does not block on a full pipe.
    assert!(run_hook("dut.before_trial", "head -c 1000000 /dev/zero >&2", HOOK_DEADLINE).is_ok());
    let e = run_hook("dut.before_trial", "echo no table >&2; exit 3", HOOK_DEADLINE)
        .expect_err("exit 3")
        .to_string();
    assert!(
        e.starts_with("DUT hook dut.before_trial (\"echo no table >&2; exit 3\") failed (exit status: 3)"),
        "{e}"
    );
    assert!(e.ends_with("standard error: no table"), "{e}");
    let e = run_hook("dut.between_phases", "exit 1", HOOK_DEADLINE)
        .expect_err("exit 1")
        .to_string();
    assert!(e.contains("no output on standard error"), "{e}");
    let started = Instant::now();
    let e = run_hook("dut.between_phases", "echo slow >&2; exec sleep 30", Duration::from_millis(300))
        .expect_err("deadline")
        .to_string();
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert!(e.contains("did not end within 0.3 s and was killed (PID "), "{e}");
    assert!(e.contains("slow"), "{e}");
    // The end of a long output is kept.
    let (run, r) = run_command("dut.count", "seq 1 100000", HOOK_DEADLINE, true);
    assert!(r.is_ok(), "{r:?}");
    assert!(
        run.output.ends_with("99999\n100000") && run.output.chars().count() == KEPT_CHARS,
        "{}",
        run.output
    );
}

/// Records the trials it is asked to run (`asked`), each an empty report.
fn recorder() -> Fake<'static> {
    Fake::new(|_| Ok(TrialReport::default()))
}

fn before_trial(command: &str) -> DutHooks {
    DutHooks {
        before_trial: Some(command.to_string()),
        ..DutHooks::default()
    }
}

#[test]
fn before_trial_runs_first_and_a_failure_skips_the_trial() {
    let dir = std::env::temp_dir().join(format!("xlatperf-hook-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let marker = dir.join("count");
    let mut r = Hooks::new(recorder(), before_trial(&format!("echo x >> {}", marker.display())));
    let spec = TrialSpec::new(84, 1000, 1.0, 10);
    r.run(&spec).expect("trial 1");
    let report = r.run(&spec).expect("trial 2");
    // Each trial records its own hook runs: the command, its exit status, its time.
    assert_eq!(report.dut_hooks.len(), 1, "{:?}", report.dut_hooks);
    let h = &report.dut_hooks[0];
    assert_eq!((h.key.as_str(), h.exit_status), ("dut.before_trial", Some(0)));
    assert!(h.seconds > 0.0 && h.command.starts_with("echo x"), "{h:?}");
    assert_eq!(std::fs::read_to_string(&marker).expect("marker"), "x\nx\n");
    assert_eq!(r.inner.asked.len(), 2);
    let mut r = Hooks::new(recorder(), before_trial("echo conntrack: no such table >&2; exit 1"));
    let e = r.run(&spec).expect_err("hook fails").to_string();
    assert!(e.contains("DUT hook dut.before_trial"), "{e}");
    assert!(e.contains("(exit status: 1)"), "{e}");
    assert!(e.contains("conntrack: no such table"), "{e}");
    assert!(e.ends_with("the trial was not run"), "{e}");
    assert_eq!(r.inner.asked.len(), 0, "the trial ran after a failed hook");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Phase 1, valid, alone (a stateful DUT's conn-rate step) or followed by phase 2 with the
/// hook between them, as the engine runs it.
fn phase_one() -> Fake<'static> {
    let phase_one = |spec: &TrialSpec| TrialReport {
        preliminary: Some(xlat_trial::PreliminaryReport::default()),
        ..TrialReport::of(spec)
    };
    Fake::new(move |spec| {
        if let Some(hook) = &spec.between_phases {
            hook.run().map_err(TrialError::new)?;
        }
        Ok(TrialReport {
            forward: Some(xlat_trial::DirectionReport::default()),
            ..phase_one(spec)
        })
    })
    .with_preliminary(move |spec, _| Ok(phase_one(spec)))
}

#[test]
fn the_count_after_phase_one_is_reported_and_must_be_a_number() {
    let spec = TrialSpec::new(84, 1000, 1.0, 10);
    let dut = DutHooks {
        before_trial: Some("true".into()),
        count: Some("echo 1234".into()),
        ..DutHooks::default()
    };
    let mut r = Hooks::new(phase_one(), dut);
    let report = r.run_preliminary(&spec, None).expect("step");
    assert_eq!(report.preliminary.as_ref().and_then(|p| p.dut_connections), Some(1234));
    let keys: Vec<&str> = report.dut_hooks.iter().map(|h| h.key.as_str()).collect();
    assert_eq!(keys, ["dut.before_trial", "dut.count"]);
    assert_eq!(report.dut_hooks[1].output, "1234");
    assert!(r.describe().contains("counted after phase 1: echo 1234"), "{}", r.describe());
    let dut = DutHooks {
        count: Some("echo table full".into()),
        ..DutHooks::default()
    };
    let mut r = Hooks::new(phase_one(), dut);
    let e = r.run_preliminary(&spec, None).expect_err("not a number");
    assert!(
        e.to_string().contains("printed \"table full\", not a whole number of connections"),
        "{e}"
    );
}

/// A stateful trial's spec.
fn stateful() -> TrialSpec {
    TrialSpec {
        preliminary: Some(xlat_trial::PreliminarySpec {
            frames: 10,
            state_table: 10,
            rate: 100,
            timeout_ms: 10,
            phase_delay_ms: 200,
        }),
        ..TrialSpec::new(84, 1000, 1.0, 10)
    }
}

#[test]
fn between_phases_and_the_count_run_between_the_phases() {
    let spec = stateful();
    let dut = DutHooks {
        between_phases: Some("true".into()),
        count: Some("echo 77".into()),
        ..DutHooks::default()
    };
    let mut r = Hooks::new(phase_one(), dut);
    let report = r.run(&spec).expect("trial");
    let keys: Vec<&str> = report.dut_hooks.iter().map(|h| h.key.as_str()).collect();
    assert_eq!(keys, ["dut.between_phases", "dut.count"]);
    assert_eq!(report.preliminary.as_ref().and_then(|p| p.dut_connections), Some(77));
    // The hook goes with every stateful trial's spec, and with no stateless one.
    let dut = DutHooks {
        between_phases: Some("true".into()),
        ..DutHooks::default()
    };
    let mut r = Hooks::new(recorder(), dut);
    r.run(&spec).expect("stateful");
    r.run(&TrialSpec::new(84, 1000, 1.0, 10)).expect("stateless");
    let hooks: Vec<bool> = r.inner.asked.iter().map(|s| s.between_phases.is_some()).collect();
    assert_eq!(hooks, [true, false]);
}

#[test]
fn delete_all_is_timed_or_named_missing() {
    let dut = DutHooks {
        delete_all: Some("sleep 0.05".into()),
        ..DutHooks::default()
    };
    let mut r = Hooks::new(recorder(), dut);
    let s = r.time_dut_command("dut.delete_all").expect("timed");
    assert!(s >= 0.05, "{s}");
    let mut r = Hooks::new(recorder(), DutHooks::default());
    let e = r.time_dut_command("dut.delete_all").expect_err("none");
    assert_eq!(e.kind(), TrialErrorKind::Config);
    assert_eq!(
        e.to_string(),
        "the configuration has no dut.delete_all command (TOML [dut] delete_all)"
    );
}

/// Sends for the spec's duration (sleeps), and notes in `seen_during` whether `marker` existed
/// by its end.
fn sender<'a>(marker: &'a std::path::Path, seen_during: &'a Cell<bool>) -> Fake<'a> {
    Fake::new(move |spec| {
        std::thread::sleep(Duration::from_secs_f64(spec.duration_s));
        seen_during.set(marker.exists());
        Ok(TrialReport::of(spec))
    })
}

fn load(command: &str) -> DutHooks {
    DutHooks {
        load: Some(command.to_string()),
        ..DutHooks::default()
    }
}

#[test]
fn the_dut_load_command_runs_during_the_sending_and_its_figure_is_the_dut_load() {
    let marker = std::env::temp_dir().join(format!("xlatperf-load-{}", std::process::id()));
    let _ = std::fs::remove_file(&marker);
    let command = format!(
        "touch {}; sleep \"$XLAT_TRIAL_SECONDS\"; test \"$XLAT_TRIAL_SECONDS\" = 0.3 && echo 42.5",
        marker.display()
    );
    let seen_during = Cell::new(false);
    let mut r = Hooks::new(sender(&marker, &seen_during), load(&command));
    let report = r.run(&TrialSpec::new(84, 1000, 0.3, 10)).expect("trial");
    let _ = std::fs::remove_file(&marker);
    assert!(seen_during.get(), "dut.load did not start with the sending");
    let dut = report.load.as_ref().and_then(|l| l.dut.as_ref()).expect("the DUT's load");
    assert_eq!((dut.busy, dut.busy_max), (0.425, 0.425));
    assert!(dut.cpus.is_empty(), "{dut:?}");
    let run = &report.dut_hooks[0];
    assert_eq!((run.key.as_str(), run.output.as_str()), ("dut.load", "42.5"));
    assert!(r.describe().contains("load read with every trial"), "{}", r.describe());
}

#[test]
fn a_dut_load_that_is_no_percent_or_fails_stops_the_run() {
    let spec = TrialSpec::new(84, 1000, 0.05, 10);
    for (command, says) in [
        ("echo 120", "printed \"120\", not a CPU busy percent from 0 to 100"),
        ("echo busy", "printed \"busy\", not a CPU busy percent"),
        ("echo 50; exit 2", "DUT hook dut.load (\"echo 50; exit 2\") failed (exit status: 2)"),
    ] {
        let mut r = Hooks::new(recorder(), load(command));
        let e = r.run(&spec).expect_err(command).to_string();
        assert!(e.contains(says), "{command}: {e}");
    }
}

#[test]
fn the_load_is_read_over_the_phase_that_sends_last() {
    let mut spec = TrialSpec::new(84, 1000, 2.0, 10);
    assert_eq!(sending_window(&spec, false), (0.0, 2.0));
    spec.preliminary = Some(xlat_trial::PreliminarySpec {
        frames: 5_000,
        state_table: 5_000,
        rate: 10_000,
        timeout_ms: 100,
        phase_delay_ms: 700,
    });
    // Phase 2 starts D after phase 1; phase 1 alone sends N / R seconds.
    assert_eq!(sending_window(&spec, false), (0.7, 2.0));
    assert_eq!(sending_window(&spec, true), (0.0, 0.5));
}
