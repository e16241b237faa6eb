//! Stateful trials (RFC 9693) in the procedures: every trial a procedure runs carries the
//! configured preliminary phase; a phase 1 that did not fill the state table is rerun, then
//! stops the procedure with an error that names the preliminary rate; a phase 1 that sent too
//! slowly is an invalid trial (the tester's limit) like any other. And the preliminary part
//! reaches the trial records, the trials CSV, the human tables and the JSON.

use xlat_procedures::trial::FILL_ATTEMPTS;
use xlat_procedures::*;
use xlat_results::output::{trial_csv_row, Document, SizeResult, TRIALS_CSV_HEADER};
use xlat_results::text::trials_table;
use xlat_results::*;
use xlat_testkit::fake::Fake;
use xlat_testkit::sim::SimDut;
use xlat_trial::{PreliminarySpec, TrialSpec};

/// N = M = 10,000 at R = 100,000 fps.
const PRE: PreliminarySpec = PreliminarySpec {
    frames: 10_000,
    state_table: 10_000,
    rate: 100_000,
    timeout_ms: 100,
    phase_delay_ms: 300,
};

fn stateful(mut t: TrialSpec) -> TrialSpec {
    t.duration_s = 1.0;
    t.timeout_ms = 10;
    t.preliminary = Some(PRE);
    t
}

fn tp_config(method: SearchMethod) -> ThroughputConfig {
    let mut c = ThroughputConfig::new(84, 1_000_000, 10_000);
    c.trial = stateful(c.trial);
    c.method = method;
    c
}

fn every_trial_had_phase_1(dut: &SimDut) {
    assert!(!dut.log.is_empty());
    for (i, s) in dut.log.iter().enumerate() {
        assert_eq!(s.preliminary, Some(PRE), "trial {i} ran without the preliminary phase: {s:?}");
    }
}

#[test]
fn every_throughput_search_runs_phase_1_before_every_trial() {
    for method in [
        SearchMethod::Binary,
        SearchMethod::ShortThenConfirm { short_s: 0.5 },
        SearchMethod::Accelerated { initial_s: 0.2, phases: 3 },
    ] {
        let mut dut = SimDut::new(400_000.0, 1);
        let r = throughput(&mut dut, &tp_config(method.clone()), &mut NoProgress).unwrap();
        every_trial_had_phase_1(&dut);
        assert!(r.throughput > 390_000 && r.throughput <= 400_000, "{method:?}: {}", r.throughput);
        assert_eq!(r.trials.len(), dut.log.len());
        for t in &r.trials {
            let p = t.preliminary.as_ref().expect("the record keeps the preliminary phase");
            assert_eq!(
                (p.frames, p.valid_entries, p.state_table, p.rate),
                (10_000, 10_000, 10_000, 100_000)
            );
        }
    }
}

#[test]
fn stateful_and_stateless_searches_agree_on_a_dut_that_takes_the_preliminary_rate() {
    let mut a = SimDut::new(400_000.0, 3).noise(0.01);
    let mut b = SimDut::new(400_000.0, 3).noise(0.01);
    let with = throughput(&mut a, &tp_config(SearchMethod::Binary), &mut NoProgress).unwrap();
    let mut plain = tp_config(SearchMethod::Binary);
    plain.trial.preliminary = None;
    let without = throughput(&mut b, &plain, &mut NoProgress).unwrap();
    assert_eq!(with.throughput, without.throughput);
    assert_eq!(with.trials.len(), without.trials.len());
    assert!(b.log.iter().all(|s| s.preliminary.is_none()));
}

#[test]
fn every_other_procedure_carries_the_preliminary_phase() {
    let mut dut = SimDut::new(400_000.0, 1);
    let mut fl = FrameLossConfig::new(84, 1_000_000);
    fl.trial = stateful(fl.trial);
    frame_loss(&mut dut, &fl, &mut NoProgress).unwrap();
    every_trial_had_phase_1(&dut);

    let mut dut = SimDut::new(400_000.0, 1);
    let mut lc = LatencyConfig::new(84, 100_000);
    lc.trial = stateful(lc.trial);
    lc.delay_s = 0.5;
    lc.repetitions = 3;
    let r = latency(&mut dut, &lc, &mut NoProgress).unwrap();
    every_trial_had_phase_1(&dut);
    assert!(dut.log.iter().all(|s| s.latency.is_some()));
    assert!(r.trials.iter().all(|t| t.preliminary.is_some()));

    let mut dut = SimDut::new(400_000.0, 1);
    let pc = PdvConfig {
        trial: stateful(TrialSpec::new(84, 10_000, 1.0, 10)),
        frame_timeout_ms: 0,
        exact: true,
        repetitions: 2,
        retries: 1,
    };
    pdv(&mut dut, &pc, &mut NoProgress).unwrap();
    every_trial_had_phase_1(&dut);
    assert!(dut.log.iter().all(|s| s.pdv.is_some()));

    let mut dut = SimDut::new(400_000.0, 1).buffer(20_000);
    let mut bc = BackToBackConfig::new(84, 1_000_000);
    bc.trial = stateful(bc.trial);
    bc.repetitions = 2;
    bc.idle_s = 0.0;
    back_to_back(&mut dut, &bc, &mut NoProgress, &mut NoSleep::default()).unwrap();
    every_trial_had_phase_1(&dut);

    let mut dut = SimDut::new(400_000.0, 1);
    let mut rc = RecoveryConfig::new(84, 400_000);
    rc.trial = stateful(rc.trial);
    rc.overload_s = 1.0;
    rc.recovery_s = 1.0;
    system_recovery(&mut dut, &rc, &mut NoProgress).unwrap();
    every_trial_had_phase_1(&dut);
    assert!(dut.log.iter().all(|s| s.rate_change.is_some()));
}

#[test]
fn an_unfilled_state_table_is_rerun_and_the_search_goes_on() {
    let mut dut = SimDut::new(400_000.0, 1).unfilled_next(FILL_ATTEMPTS - 1);
    let mut cfg = tp_config(SearchMethod::Binary);
    cfg.retries = 0;
    let r = throughput(&mut dut, &cfg, &mut NoProgress).unwrap();
    every_trial_had_phase_1(&dut);
    assert!(r.throughput > 390_000 && r.throughput <= 400_000, "{}", r.throughput);
    // The first spec ran three times: two failed fills, then phase 2 (1,000,000 fps fails).
    let first: Vec<_> = r.trials.iter().take(3).map(|t| (t.rate, t.attempt, t.pass)).collect();
    assert_eq!(first, vec![(1_000_000, 1, None), (1_000_000, 2, None), (1_000_000, 3, Some(false))]);
    for t in &r.trials[..2] {
        let p = t.preliminary.as_ref().unwrap();
        assert!(p.valid_entries < p.state_table && p.sending_valid);
        assert!(t.forward.is_none() && t.reverse.is_none(), "phase 2 did not run");
        // Not the tester's limit, although retries is 0 and the trial was invalid.
        assert!(!t.tester_bound);
    }
    assert_eq!(r.tester_bound, None);
    assert!(trials_table(&r.trials).contains("phase 1: table not filled"));
}

#[test]
fn fill_reruns_do_not_use_up_the_invalid_trial_retries() {
    // Two failed fills, then a phase 2 that the tester botched, then a valid trial: with one
    // retry for invalid trials, the rate is not tester-bound.
    let mut dut = SimDut::new(2_000_000.0, 1).unfilled_next(2);
    dut.invalid_next = 1;
    let mut cfg = tp_config(SearchMethod::Binary);
    cfg.retries = 1;
    let r = throughput(&mut dut, &cfg, &mut NoProgress).unwrap();
    assert_eq!(r.throughput, 1_000_000);
    let att: Vec<_> = r.trials.iter().map(|t| (t.attempt, t.pass, t.tester_bound)).collect();
    assert_eq!(
        att,
        vec![(1, None, false), (2, None, false), (3, None, false), (4, Some(true), false)]
    );
}

#[test]
fn a_state_table_that_never_fills_stops_the_search_naming_the_preliminary_rate() {
    // The DUT establishes 50,000 connections/s: at R = 100,000 half the phase 1 frames are lost.
    let mut dut = SimDut::new(400_000.0, 1).preliminary_capacity(50_000.0);
    let e = throughput(&mut dut, &tp_config(SearchMethod::Binary), &mut NoProgress).unwrap_err();
    assert_eq!(dut.log.len(), FILL_ATTEMPTS as usize, "rerun, then stop");
    match &e {
        ProcedureError::StateTableNotFilled {
            rate,
            frames,
            valid_entries,
            state_table,
            attempts,
            trials,
        } => {
            assert_eq!(
                (*rate, *frames, *valid_entries, *state_table, *attempts),
                (100_000, 10_000, 5_000, 10_000, FILL_ATTEMPTS)
            );
            assert_eq!(trials.len(), FILL_ATTEMPTS as usize);
            assert!(trials.iter().all(|t| t.pass.is_none() && t.preliminary.is_some()));
        }
        e => panic!("{e:?}"),
    }
    let msg = e.to_string();
    assert!(
        msg.contains("100000 frames/s") && msg.contains("lower the preliminary rate") && msg.contains("5000 of 10000"),
        "{msg}"
    );
    // The same in a procedure with a fixed rate.
    let mut dut = SimDut::new(400_000.0, 1).preliminary_capacity(50_000.0);
    let mut lc = LatencyConfig::new(84, 100_000);
    lc.trial = stateful(lc.trial);
    lc.delay_s = 0.5;
    let e = latency(&mut dut, &lc, &mut NoProgress).unwrap_err();
    assert!(matches!(e, ProcedureError::StateTableNotFilled { rate: 100_000, .. }), "{e:?}");
}

#[test]
fn phase_1_sending_too_slowly_is_the_tester_limit() {
    // The tester sends phase 1 at 80,000 fps at most: every trial is invalid, at every rate.
    let mut dut = SimDut::new(400_000.0, 1).preliminary_tester_max(80_000);
    let mut cfg = tp_config(SearchMethod::Binary);
    cfg.min_rate = 100_000;
    cfg.retries = 1;
    let e = throughput(&mut dut, &cfg, &mut NoProgress).unwrap_err();
    match &e {
        ProcedureError::TesterLimit { rate, attempts, reasons } => {
            assert_eq!((*rate, *attempts), (100_000, 2));
            assert!(reasons.contains("Preliminary sending was too slow"), "{reasons}");
        }
        e => panic!("{e:?}"),
    }
    every_trial_had_phase_1(&dut);

    // Once only (the next attempt sends in time): retried like an invalid trial.
    let (mut dut, mut slow) = (
        SimDut::new(400_000.0, 1),
        Some(SimDut::new(400_000.0, 1).preliminary_tester_max(80_000)),
    );
    let mut once_slow = Fake::new(|spec| slow.take().map_or_else(|| dut.run(spec), |mut s| s.run(spec)));
    let res = throughput(&mut once_slow, &tp_config(SearchMethod::Binary), &mut NoProgress).unwrap();
    assert!(res.throughput > 390_000);
    assert_eq!((res.trials[0].attempt, res.trials[0].pass), (1, None));
    assert!(!res.trials[0].preliminary.as_ref().unwrap().sending_valid);
    assert_eq!(res.trials[1].attempt, 2);
}

#[test]
fn the_preliminary_part_reaches_the_csv_the_table_and_the_json() {
    let mut dut = SimDut::new(400_000.0, 1).unfilled_next(1);
    let r = throughput(&mut dut, &tp_config(SearchMethod::Binary), &mut NoProgress).unwrap();

    let header: Vec<&str> = TRIALS_CSV_HEADER.split(',').collect();
    // The columns before the preliminary ones did not move.
    assert_eq!(header.iter().position(|h| *h == "invalid_reasons"), Some(24));
    assert_eq!(header[25], "pre_frames");
    let cell = |t: &TrialRecord, name: &str| {
        let row = trial_csv_row("throughput", 0, t);
        let pos = header.iter().position(|h| *h == name).unwrap();
        // invalid_reasons may be quoted with commas: count from the end.
        row.trim_end().rsplit(',').nth(header.len() - 1 - pos).unwrap().to_string()
    };
    let unfilled = &r.trials[0];
    assert_eq!(cell(unfilled, "pre_valid_entries"), "9999");
    assert_eq!(cell(unfilled, "pre_state_table"), "10000");
    assert_eq!(cell(unfilled, "pre_sending_valid"), "true");
    assert_eq!(cell(unfilled, "pre_duplicate_tuples"), "");
    assert_eq!(cell(&r.trials[1], "pre_valid_entries"), "10000");
    assert_eq!(cell(&r.trials[1], "pre_received"), "10000");
    assert_eq!(cell(&r.trials[1], "pre_rate"), "100000");

    let table = r.human_table();
    assert!(table.contains("Preliminary phases"), "{table}");
    assert!(table.contains("9,999/10,000") && table.contains("not filled"), "{table}");

    // The JSON of a procedure command (`--json`): every trial keeps its preliminary part.
    let doc = Document::new(
        "throughput",
        RunMeta::new("test"),
        vec![SizeResult {
            frame_size: 84,
            result: Repeated::from_runs(vec![r.clone()]),
        }],
    );
    let json = doc.to_json().unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let trials = v["results"][0]["result"]["runs"][0]["trials"].as_array().unwrap();
    assert_eq!(trials[0]["preliminary"]["valid_entries"], 9999);
    assert_eq!(trials[1]["preliminary"]["valid_entries"], 10000);
    assert_eq!(trials[1]["preliminary"]["state_table"], 10000);
    let back: Document<ThroughputResult> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, doc);

    // A stateless trial's record and CSV row carry no preliminary part.
    let mut plain = SimDut::new(400_000.0, 1);
    let mut c = tp_config(SearchMethod::Binary);
    c.trial.preliminary = None;
    let r = throughput(&mut plain, &c, &mut NoProgress).unwrap();
    let row = trial_csv_row("throughput", 0, &r.trials[0]);
    for name in header.iter().filter(|h| h.starts_with("pre_")) {
        assert_eq!(cell(&r.trials[0], name), "", "{name}: {row}");
    }
    // The timing columns after them: the sender's lag and what stamped the frames.
    assert_eq!(cell(&r.trials[0], "fwd_stamps"), "user", "{row}");
    assert_eq!(cell(&r.trials[0], "rev_stamps_missing"), "0", "{row}");
    assert!(cell(&r.trials[0], "fwd_max_lag_ns").parse::<u64>().is_ok(), "{row}");
    assert_eq!(row.trim_end().split(',').count(), header.len());
    assert!(!serde_json::to_string(&r.trials[0]).unwrap().contains("preliminary"));
    assert!(!r.human_table().contains("Preliminary"));
}

#[test]
fn the_trial_json_has_the_preliminary_part() {
    // `xlatperf trial --json` writes the engine's TrialReport with serde_json.
    let mut dut = SimDut::new(400_000.0, 1);
    let report = dut.run(&stateful(TrialSpec::new(84, 100_000, 1.0, 10))).unwrap();
    let v: serde_json::Value = serde_json::from_str(&serde_json::to_string(&report).unwrap()).unwrap();
    assert_eq!(v["preliminary"]["frames"], 10_000);
    assert_eq!(v["preliminary"]["foreground_received"], 10_000);
    assert_eq!(v["preliminary"]["sending_valid"], true);
    assert!(v["forward"]["sent"].as_u64().unwrap() > 0);
}
