//! siitperf's lines, byte for byte, for each case siitperf's code distinguishes.

use super::*;
use crate::delay::DelayRecorder;
use crate::output::{preliminary_summary, trial_summary};
use xlat_trial::{DirectionReport, PdvReport};

fn direction(sent: u64, received: u64) -> DirectionReport {
    DirectionReport {
        counts: xlat_trial::DirectionCounts {
            sent,
            received,
            lost: sent - received,
            ..Default::default()
        },
        send_duration_s: 60.0000012345,
        latency_ns: vec![1_000_000; 10],
        ..Default::default()
    }
}

/// A stateless trial of 60 s at 4,000,000 frames/s, both directions.
fn stateless() -> TrialReport {
    TrialReport {
        valid: true,
        duration_s: 60.0,
        timeout_ms: 2000,
        forward: Some(direction(240_000_000, 240_000_000)),
        reverse: Some(direction(240_000_000, 239_999_990)),
        ..Default::default()
    }
}

/// siitperf's example of STATEFUL.md section 7: N = M = 4,000,000 at R = 8,000,000.
fn preliminary() -> PreliminaryReport {
    PreliminaryReport {
        frames: 4_000_000,
        rate: 8_000_000,
        sent: 4_000_000,
        received: 4_000_000,
        foreground_received: 4_000_000,
        foreground_sent: 4_000_000,
        valid_entries: 4_000_000,
        state_table: 4_000_000,
        send_duration_s: 0.5000001234,
        sending_valid: true,
        ..Default::default()
    }
}

fn stateful(p: PreliminaryReport) -> TrialReport {
    TrialReport {
        preliminary: Some(p),
        ..stateless()
    }
}

fn times() -> Times {
    Times {
        preliminary: Some("2025-01-01 12:00:00".into()),
        testing: Some("2025-01-01 12:00:01".into()),
    }
}

fn tp(r: &TrialReport) -> Output {
    output(r, Program::Tp, &times())
}

const PHASE_2: [&str; 7] = [
    "Info: Testing initiated at 2025-01-01 12:00:01",
    "Info: Forward sender's sending took 60.0000012345 seconds.",
    "Forward frames sent: 240000000",
    "Info: Reverse sender's sending took 60.0000012345 seconds.",
    "Reverse frames sent: 240000000",
    "Forward frames received: 240000000",
    "Reverse frames received: 239999990",
];

#[test]
fn a_stateless_trial_prints_the_senders_then_the_receivers() {
    let o = tp(&stateless());
    let mut want = PHASE_2.to_vec();
    want.push("Info: Test finished.");
    assert_eq!(
        (o.stdout, o.stderr, o.exit_code),
        (want.iter().map(|s| s.to_string()).collect(), vec![], 0)
    );
    // Without times (xlatperf's trial command) the wall-clock line is left out.
    assert_eq!(
        tp_lines(&stateless())[0],
        "Info: Forward sender's sending took 60.0000012345 seconds."
    );
}

#[test]
fn duplicates_count_as_often_as_they_arrive_and_xlatperf_says_more_on_an_info_line() {
    let mut r = stateless();
    let f = r.forward.as_mut().unwrap();
    (f.counts.received, f.counts.duplicates, f.counts.reordered) = (239_999_998, 2, 1);
    let l = tp(&r).stdout;
    assert_eq!(l[5], "Forward frames received: 240000000");
    assert_eq!(
        l[6],
        "Info: Forward: 239999998 distinct frames received, 2 duplicates, 1 reordered; tester dropped: tx 0, rx 0"
    );
}

#[test]
fn a_late_sender_prints_the_warning_instead_of_its_sent_line() {
    let mut r = stateless();
    r.valid = false;
    r.forward.as_mut().unwrap().send_duration_s = 60.01;
    r.invalid_reasons
        .push("Forward sending exceeded the 60.0006000000 seconds limit (took 60.010000 s), the test is invalid".into());
    let o = tp(&r);
    assert_eq!(
        o.stdout[1..4],
        [
            "Info: Forward sender's sending took 60.0100000000 seconds.",
            "Warning: Forward sending exceeded the 60.0006000000 seconds limit, the test is invalid.",
            "Info: Reverse sender's sending took 60.0000012345 seconds.",
        ]
    );
    assert!(!o.stdout.iter().any(|l| l.starts_with("Forward frames sent")), "{:?}", o.stdout);
    // Said once, in siitperf's words; the run finished: exit code 0.
    assert_eq!(o.stdout.iter().filter(|l| l.contains("exceeded")).count(), 1);
    assert_eq!(o.exit_code, 0);
    // -lat words it the same; -pdv says Error.
    let lat = output(&r, Program::Lat { delay_s: 10.0 }, &times());
    assert_eq!(
        lat.stdout[2],
        "Warning: Forward sending exceeded the 60.0006000000 seconds limit, the test is invalid."
    );
    assert_eq!(lat.stdout[0], "Info: Testing started.");
    let pdv = output(&r, Program::Pdv { frame_timeout_ms: 0 }, &times());
    assert_eq!(
        pdv.stdout[2],
        "Error: Forward sending exceeded the 60.0006000000 seconds limit, the test is invalid."
    );
    // A sender that gave up (the port took no more) is late too.
    let mut g = stateless();
    g.invalid_reasons
        .push("Reverse sending stopped 2.0 s after the 60.0006000000 seconds limit with 5 of 9 frames sent (the port took no more), the test is invalid".into());
    let l = tp(&g).stdout;
    assert_eq!(
        l[4],
        "Warning: Reverse sending exceeded the 60.0006000000 seconds limit, the test is invalid."
    );
    assert!(!l.iter().any(|x| x.starts_with("Info: xlatperf")), "{l:?}");
}

#[test]
fn what_only_xlatperf_knows_goes_on_info_lines_that_scripts_do_not_grep() {
    let mut r = stateless();
    r.valid = false;
    r.invalid_reasons
        .push("Forward: the tester itself dropped frames (3 not transmitted, 0 not received by its port), the test is invalid".into());
    let l = tp(&r).stdout;
    assert_eq!(
        l[7],
        "Info: xlatperf: Forward: the tester itself dropped frames (3 not transmitted, 0 not received by its port); \
         by xlatperf's judgement this trial does not count."
    );
    assert_eq!(l[8], "Info: Test finished.");
    assert!(!l.iter().any(|x| x.contains("invalid") || x.contains("Error:")), "{l:?}");
}

#[test]
fn a_stateful_trial_prints_phase_1_then_phase_2() {
    let o = tp(&stateful(preliminary()));
    let mut want = vec![
        "Info: Preliminary frame sending initiated at 2025-01-01 12:00:00",
        "Info: Preliminary sender's sending took 0.5000001234 seconds.",
        "Preliminary frames sent: 4000000",
        "Preliminary frames received: 4000000",
        "Info: Preliminary phase finished.",
    ];
    want.extend(PHASE_2);
    want.push("Info: Test finished.");
    assert_eq!(o.stdout, want);
    assert_eq!(o.exit_code, 0);
}

#[test]
fn a_too_slow_phase_1_prints_its_warning_and_phase_2_still_prints_its_lines() {
    let mut p = preliminary();
    (p.send_duration_s, p.sending_valid) = (1.0, false);
    let mut r = stateful(p);
    r.valid = false;
    r.invalid_reasons = vec!["Preliminary sending was too slow (only 50.0000000000 percent of required rate), the test is invalid".into()];
    let o = tp(&r);
    assert_eq!(
        o.stdout[1..5],
        [
            "Info: Preliminary sender's sending took 1.0000000000 seconds.",
            "Warning: Preliminary sending was too slow (only 50.0000000000 percent of required rate), the test is invalid.",
            "Preliminary frames received: 4000000",
            "Info: Preliminary phase finished.",
        ]
    );
    assert!(!o.stdout.iter().any(|l| l.starts_with("Preliminary frames sent")));
    // Phase 2's lines, which cttc.sh compares, are all there.
    assert_eq!(o.stdout[5..12], PHASE_2);
    assert_eq!((o.stdout.len(), o.exit_code), (13, 0));
}

#[test]
fn an_unfilled_table_is_an_error_line_and_phase_2_runs_except_in_pdv() {
    let mut p = preliminary();
    (p.received, p.foreground_received, p.valid_entries) = (3_999_990, 3_999_990, 3_999_990);
    let mut r = stateful(p);
    r.valid = false;
    r.invalid_reasons = vec!["Failed to fill state table (valid entries: 3999990, state table size: 4000000)".into()];
    let error = "Error: Failed to fill state table (valid entries: 3999990, state table size: 4000000)!";
    for program in [Program::Tp, Program::Lat { delay_s: 10.0 }] {
        let o = output(&r, program, &times());
        assert_eq!(o.stdout[3..5], ["Preliminary frames received: 3999990", error], "{program:?}");
        assert!(o.stdout.iter().any(|l| l == "Reverse frames received: 239999990"), "{program:?}");
        assert_eq!(o.exit_code, 0, "{program:?}");
    }
    // siitperf-pdv: rte_exit (the error on standard error, exit code 1), no phase 2.
    let o = output(&r, Program::Pdv { frame_timeout_ms: 0 }, &times());
    assert_eq!(
        o.stdout,
        [
            "Info: Preliminary frame sending started.",
            "Info: Preliminary sender's sending took 0.5000001234 seconds.",
            "Preliminary frames sent: 4000000",
            "Preliminary frames received: 3999990",
        ]
    );
    assert_eq!((o.stderr, o.exit_code), (vec![error.to_string()], 1));
}

#[test]
fn duplicates_in_phase_1_are_counted_as_received_and_a_doubly_mapped_tuple_is_an_info_line() {
    let mut p = preliminary();
    (p.received, p.duplicates, p.duplicate_tuples) = (3_999_999, 5, Some(1));
    let mut r = stateful(p);
    r.valid = false;
    r.invalid_reasons = vec![
        "the DUT mapped 1 of the 4000000 connections of phase 1 onto 4-tuples it had already used (the enumeration sent each one once), the test is invalid".into(),
    ];
    let l = tp(&r).stdout;
    assert_eq!(l[3], "Preliminary frames received: 4000004");
    assert_eq!(l[4], "Info: Preliminary phase finished.");
    assert_eq!(
        l[12],
        "Info: xlatperf: the DUT mapped 1 of the 4000000 connections of phase 1 onto 4-tuples it had already used \
         (the enumeration sent each one once); by xlatperf's judgement this trial does not count."
    );
}

#[test]
fn latency_lines_with_siitperfs_penalty_for_a_lost_tag() {
    let mut r = stateless();
    let mut lat = vec![1_000_000u64; 999];
    lat.push(u64::MAX);
    r.forward.as_mut().unwrap().latency_ns = lat;
    r.reverse.as_mut().unwrap().latency_ns = vec![u64::MAX; 3];
    let l = output(&r, Program::Lat { delay_s: 20.0 }, &times()).stdout;
    let tail: Vec<&str> = l.iter().rev().take(5).rev().map(String::as_str).collect();
    assert_eq!(
        tail,
        [
            "Info: Test finished.",
            "Forward TL: 1.000000",
            "Forward WCL: 1.000000",
            // 1000 x (60 - 20) + 2000 ms.
            "Reverse TL: 42000.000000",
            "Reverse WCL: 42000.000000",
        ]
    );
}

#[test]
fn pdv_lines_and_the_second_test_finished() {
    let mut r = stateless();
    // Ten delays: the 99.9th percentile is the largest, 0.25 ms above the smallest.
    let mut delays = vec![1000u64; 9];
    delays.push(251_000);
    r.forward.as_mut().unwrap().pdv = Some(PdvReport {
        delays: DelayRecorder::from_samples(&delays),
        ..Default::default()
    });
    let l = output(&r, Program::Pdv { frame_timeout_ms: 0 }, &times()).stdout;
    let n = l.len();
    assert_eq!(
        l[n - 4..],
        [
            "Info: Test finished.",
            "Forward PDV: 0.250000",
            "Error: Reverse direction: no PDV statistics",
            "Info: Test finished.",
        ]
    );
    // With a frame timeout: the counts only.
    let l = output(&r, Program::Pdv { frame_timeout_ms: 10 }, &times()).stdout;
    assert_eq!(l.len(), 9);
    assert_eq!(l[7..], ["Info: Test finished.", "Info: Test finished."]);
}

#[test]
fn the_summary_says_what_phase_1_did() {
    let r = stateful(preliminary());
    assert_eq!(
        preliminary_summary(r.preliminary.as_ref().unwrap()),
        "phase 1: 4,000,000 frames at 8,000,000 fps, 4,000,000 of 4,000,000 foreground frames learnt, \
         state table 4,000,000/4,000,000"
    );
    let mut p = preliminary();
    (p.send_duration_s, p.sending_valid) = (1.0, false);
    let mut r = stateful(p);
    (r.forward, r.reverse) = (None, None);
    r.invalidate("Preliminary sending was too slow".into());
    let s = trial_summary(&r);
    assert!(s.contains("sending too slow: 1.000000 s, 50.0000 % of the rate"), "{s}");
    assert!(s.contains("phase 2 did not run") && s.contains("trial INVALID"), "{s}");
    let mut p = preliminary();
    (p.valid_entries, p.duplicate_tuples) = (3_999_990, Some(2));
    let s = preliminary_summary(&p);
    assert!(
        s.contains("state table 3,999,990/4,000,000; state table NOT filled; 2 duplicate tuples"),
        "{s}"
    );
}
