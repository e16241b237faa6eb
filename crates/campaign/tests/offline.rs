//! The campaign runner and the report without a lab: the runs are a stand-in program (a shell
//! script that writes a result document made by the procedures crate against its simulated DUT, or
//! fails, or hangs, as its arguments say), so that failures, stops, deadlines, the directory
//! lock and every kind of bad input are checked in seconds.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use xlat_campaign::manifest::{Manifest, Status};
use xlat_campaign::plan::Plan;
use xlat_campaign::run::{run, CampaignError, Options, Outcome};
use xlat_campaign::shard::Shard;
use xlat_procedures::{repeat, throughput, NoProgress, ThroughputConfig};
use xlat_results::output::{Document, RunMeta, SizeResult};
use xlat_testkit::sim::SimDut;

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("xlat-campaign-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A throughput document of two repetitions against a simulated DUT of 500,000 frames/s.
fn throughput_doc(frame_size: usize) -> String {
    let mut dut = SimDut::new(500_000.0, 7);
    let cfg = ThroughputConfig::new(frame_size, 1_000_000, 1000);
    let result = repeat(2, |_| throughput(&mut dut, &cfg, &mut NoProgress)).unwrap();
    let mut meta = RunMeta::new("0.1.0-test");
    meta.config = serde_json::json!({"setup": {"left": {"ip_version": "V4"}}, "source": {"file": "/x/sim.toml"}});
    Document::new("throughput", meta, vec![SizeResult { frame_size, result }])
        .to_json()
        .unwrap()
}

/// The stand-in xlatperf: `lab ...` succeeds; a run writes the fixture to its --json file,
/// except with `--frame-sizes 1518` (fails, saying why) and `--frame-sizes 999` (hangs).
/// Every call is appended to calls.log.
fn fake_program(dir: &Path) -> PathBuf {
    let fixture = dir.join("fixture.json");
    std::fs::write(&fixture, throughput_doc(84)).unwrap();
    let script = dir.join("fake-xlatperf");
    let text = format!(
        r#"#!/bin/sh
echo "$*" >> "{calls}"
[ "$1" = lab ] && exit 0
json=""; prev=""
for a in "$@"; do [ "$prev" = "--json" ] && json="$a"; prev="$a"; done
case " $* " in
  *" --frame-sizes 1518 "*) echo "Error: the DUT stopped answering" >&2; exit 1;;
  *" --frame-sizes 999 "*) exec sleep 30;;
esac
cp "{fixture}" "$json"
"#,
        calls = dir.join("calls.log").display(),
        fixture = fixture.display()
    );
    std::fs::write(&script, text).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// A plan of throughput runs at `sizes` on a test described by a file (the stand-in program
/// never reads it); `extra` goes into [campaign].
fn plan_text(sizes: &str, extra: &str) -> String {
    plan_with_test(sizes, extra, "config = \"dut.toml\"")
}

/// The same with the test's source given (`lab = "router4"`: the machine's one lab, whose
/// lock only one test of this file takes).
fn plan_with_test(sizes: &str, extra: &str, source: &str) -> String {
    format!(
        "[campaign]\nname = \"t\"\n{extra}\naxes = {{ frame-sizes = [{sizes}] }}\n[[test]]\nname = \"sim\"\n{source}\n[[procedure]]\ncommand = \"throughput\"\nargs = [\"--duration\", \"1\"]\n"
    )
}

fn go(s: &Scratch, text: &str, retry_failed: bool) -> Result<Outcome, CampaignError> {
    go_in(s, text, retry_failed, "out", Shard::WHOLE)
}

/// [`go`] into `s/dir`, only `shard`'s runs.
fn go_in(s: &Scratch, text: &str, retry_failed: bool, dir: &str, shard: Shard) -> Result<Outcome, CampaignError> {
    let plan_file = s.0.join("plan.toml");
    std::fs::write(&plan_file, text).unwrap();
    let plan = Plan::load(&plan_file).unwrap();
    let opts = Options {
        dir: s.0.join(dir),
        plan_arg: plan_file.display().to_string(),
        program: fake_program(&s.0),
        retry_failed,
        shard,
        xlatperf_version: "test".into(),
        git_commit: None,
        estimate: |_| None,
    };
    run(&plan, text, &opts, &AtomicBool::new(false), &mut |_| {})
}

fn manifest(s: &Scratch) -> Manifest {
    Manifest::read(&s.0.join("out")).unwrap().unwrap()
}

#[test]
fn a_failed_run_is_recorded_with_its_error_and_the_campaign_goes_on() {
    let s = Scratch::new("failed");
    let lab_plan = plan_with_test("1518, 84", "", "lab = \"router4\"");
    let o = go(&s, &lab_plan, false).unwrap();
    assert_eq!(o, Outcome::Finished { done: 1, failed: 1 });
    let m = manifest(&s);
    assert_eq!((m.runs[0].status, m.runs[1].status), (Status::Failed, Status::Done));
    let e = m.runs[0].error.as_deref().unwrap();
    assert!(e.contains("exited with") && e.contains("the DUT stopped answering"), "{e}");
    assert!(m.complete);
    let calls = std::fs::read_to_string(s.0.join("calls.log")).unwrap();
    let lines: Vec<&str> = calls.lines().collect();
    assert_eq!(lines.len(), 4, "{calls}");
    assert!(
        lines[0].starts_with("lab up router4 --replace") && lines[3] == "lab down",
        "{calls}"
    );
    // Run again: nothing to do; with --retry-failed the failed run runs again (and fails).
    assert_eq!(go(&s, &lab_plan, false).unwrap(), Outcome::Finished { done: 1, failed: 1 });
    assert_eq!(
        std::fs::read_to_string(s.0.join("calls.log")).unwrap().lines().count(),
        4,
        "nothing ran"
    );
    go(&s, &lab_plan, true).unwrap();
    assert_eq!(std::fs::read_to_string(s.0.join("calls.log")).unwrap().lines().count(), 7);
    // The report shows the failure beside what was read.
    let r = xlat_campaign::report::build(&s.0.join("out")).unwrap();
    assert_eq!(r.results, 1);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("failed") && w.contains("the DUT stopped answering")),
        "{:?}",
        r.warnings
    );
    assert!(r.html.contains("FAILED: exited with"));
}

#[test]
fn on_failure_stop_stops_and_the_next_session_resumes_after_it() {
    let s = Scratch::new("stop");
    let text = plan_text("1518, 84", "on_failure = \"stop\"");
    let o = go(&s, &text, false).unwrap();
    assert!(matches!(o, Outcome::StoppedOnFailure { ref id } if id.contains("1518")), "{o:?}");
    assert_eq!(manifest(&s).counts(), (0, 1, 1));
    assert!(!manifest(&s).complete);
    assert_eq!(go(&s, &text, false).unwrap(), Outcome::Finished { done: 1, failed: 1 });
    assert_eq!(manifest(&s).sessions.len(), 2);
}

/// Also with SIGINT ignored in this process (a campaign started in the background, or this
/// suite run under nohup): the run's SIGINT at its deadline must still stop it at once.
#[test]
fn a_run_past_its_deadline_is_stopped_and_failed_and_the_directory_is_locked_meanwhile() {
    // SAFETY: sets this test process's SIGINT disposition; nothing here handles SIGINT.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
    }
    let s = Scratch::new("deadline");
    let text = plan_text("999", "run_deadline_s = 1.5");
    let t0 = std::time::Instant::now();
    let second = std::thread::scope(|sc| {
        let h = sc.spawn(|| go(&s, &text, false));
        // While the first campaign's run hangs, a second one on the directory is refused.
        let end = t0 + std::time::Duration::from_secs(10);
        while !s.0.join("out/campaign.json").exists() && std::time::Instant::now() < end {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        let second = go(&s, &text, false);
        (h.join().unwrap(), second)
    });
    let (first, second) = second;
    assert_eq!(first.unwrap(), Outcome::Finished { done: 0, failed: 1 });
    let e = second.unwrap_err().to_string();
    assert!(e.contains("another xlatperf campaign is running"), "{e}");
    assert!(t0.elapsed().as_secs_f64() < 10.0, "stopped at its deadline, not when it ended");
    let m = manifest(&s);
    assert!(
        m.runs[0].error.as_deref().unwrap().contains("exceeded its deadline"),
        "{:?}",
        m.runs[0].error
    );
}

#[test]
fn a_changed_plan_is_refused_in_the_same_directory() {
    let s = Scratch::new("changed");
    go(&s, &plan_text("84", ""), false).unwrap();
    let e = go(&s, &plan_text("84, 200", ""), false).unwrap_err().to_string();
    assert!(e.contains("plan.toml") && e.contains("another plan"), "{e}");
}

#[test]
fn the_report_reads_what_it_can_and_names_what_it_cannot() {
    let s = Scratch::new("report");
    let e = xlat_campaign::report::build(&s.0).unwrap_err().to_string();
    assert!(e.contains("no xlatperf results"), "{e}");
    let good = throughput_doc(84);
    std::fs::write(s.0.join("good.json"), &good).unwrap();
    std::fs::write(s.0.join("truncated.json"), &good[..good.len() / 2]).unwrap();
    let mut old: serde_json::Value = serde_json::from_str(&good).unwrap();
    old["results"][0]["result"].as_object_mut().unwrap().remove("summaries");
    std::fs::write(s.0.join("old.json"), old.to_string()).unwrap();
    std::fs::write(s.0.join("other.json"), "{\"a\": 1}").unwrap();
    let r = xlat_campaign::report::build(&s.0).unwrap();
    assert_eq!(r.results, 1);
    let w = r.warnings.join("\n");
    assert_eq!(r.warnings.len(), 3, "{w}");
    assert!(w.contains("truncated.json: truncated JSON"), "{w}");
    assert!(
        w.contains("old.json: written by xlatperf 0.1.0-test in a format this report cannot read") && w.contains("summaries"),
        "{w}"
    );
    assert!(w.contains("other.json: not an xlatperf result document"), "{w}");
    assert!(r.html.contains("<h2 id=\"unread\">") && r.html.contains("truncated.json"));
    // The summary row: the median of the two repetitions, the DUT named after its config file.
    let doc: serde_json::Value = serde_json::from_str(&good).unwrap();
    let v: Vec<f64> = doc["results"][0]["result"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["throughput"].as_f64().unwrap())
        .collect();
    let median = (v[0] + v[1]) / 2.0;
    assert!(
        r.html.contains("data-dut=\"sim\" data-variant=\"\" data-frame-size=\"84\""),
        "{}",
        r.html
    );
    assert!(
        r.html.contains(&format!("data-metric=\"throughput_fps\" data-value=\"{median}\"")),
        "{median}"
    );
    // Self-contained: no script, nothing fetched.
    let page = r.html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    for bad in ["<script", "http:", "https:", "<link", "@import", "src=", "href=", "url("] {
        assert!(!page.contains(bad), "the page has {bad}");
    }
    // One frame size: no plot against the frame size.
    assert_eq!(r.html.matches("<figure class=\"plot\"").count(), 0);
    // Nothing readable at all: an error naming each file.
    std::fs::remove_file(s.0.join("good.json")).unwrap();
    let e = xlat_campaign::report::build(&s.0).unwrap_err().to_string();
    assert!(
        e.contains("none of its results could be read") && e.contains("truncated.json"),
        "{e}"
    );
}

/// A plan run in two shards (two directories, as on two testbeds) and merged by the report
/// holds every run once, with the ids, statuses and procedures of the same plan run whole; a
/// missing shard is named; directories of another plan, overlapping partitions and a resumption
/// with another shard are refused.
#[test]
fn shards_merge_into_the_whole_plans_report() {
    let s = Scratch::new("shards");
    let text = plan_text("84, 200, 300, 1518, 500", "repetitions = 2");
    assert_eq!(go(&s, &text, false).unwrap(), Outcome::Finished { done: 8, failed: 2 });
    let half = |k| Shard { index: k, count: 2 };
    assert_eq!(
        go_in(&s, &text, false, "a", half(1)).unwrap(),
        Outcome::Finished { done: 4, failed: 1 }
    );
    assert_eq!(
        go_in(&s, &text, false, "b", half(2)).unwrap(),
        Outcome::Finished { done: 4, failed: 1 }
    );
    let ids = |m: &Manifest| m.runs.iter().map(|r| r.id.clone()).collect::<Vec<_>>();
    let (a, b) = (
        Manifest::read(&s.0.join("a")).unwrap().unwrap(),
        Manifest::read(&s.0.join("b")).unwrap().unwrap(),
    );
    assert_eq!((a.shard, b.shard), (Some(half(1)), Some(half(2))));
    assert!(ids(&a).iter().all(|id| !ids(&b).contains(id)), "{:?} {:?}", ids(&a), ids(&b));

    let dirs = |names: &[&str]| names.iter().map(|n| s.0.join(n)).collect::<Vec<_>>();
    let whole = xlat_campaign::report::read::read(&s.0.join("out")).unwrap();
    let merged = xlat_campaign::report::read::read_all(&dirs(&["b", "a"])).unwrap();
    let table = |i: &xlat_campaign::report::read::Inputs| {
        let m = i.manifest.as_ref().unwrap();
        m.runs
            .iter()
            .map(|r| (r.id.clone(), r.status, r.procedure.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(table(&merged), table(&whole));
    let read_ids = |i: &xlat_campaign::report::read::Inputs| {
        let mut v: Vec<String> = i.sources.iter().map(|s| s.run.as_ref().unwrap().id.clone()).collect();
        v.sort();
        v
    };
    assert_eq!(read_ids(&merged), read_ids(&whole));
    assert_eq!(merged.sources.len(), 8);
    let r = xlat_campaign::report::build_all(&dirs(&["a", "b"])).unwrap();
    assert_eq!(r.results, 8);
    assert!(r.warnings.iter().all(|w| !w.contains("missing")), "{:?}", r.warnings);
    assert!(r
        .html
        .contains(&format!("cd {} &amp;&amp; xlatperf throughput", s.0.join("b").display())));

    // One shard alone: its runs, and the other named as missing.
    let r = xlat_campaign::report::build_all(&dirs(&["a", "a"])).unwrap();
    assert!(
        r.warnings.iter().any(|w| w.contains("shard 2/2 of the plan is in none")),
        "{:?}",
        r.warnings
    );
    assert!(r.html.contains("shards 2/2 of the plan missing"));

    // Refused: another plan, another partition, a resumption as another shard.
    let other = plan_text("84", "");
    go_in(&s, &other, false, "c", Shard::WHOLE).unwrap();
    let e = xlat_campaign::report::build_all(&dirs(&["a", "c"])).unwrap_err().to_string();
    assert!(e.contains("another plan") && e.contains("/c:"), "{e}");
    go_in(&s, &text, false, "third", Shard { index: 1, count: 3 }).unwrap();
    let e = xlat_campaign::report::build_all(&dirs(&["a", "third"])).unwrap_err().to_string();
    assert!(e.contains("a part of 3") && e.contains("overlap"), "{e}");
    let e = go_in(&s, &text, false, "a", half(2)).unwrap_err().to_string();
    assert!(e.contains("runs shard 1/2") && e.contains("asks for shard 2/2"), "{e}");
    let e = xlat_campaign::report::build_all(&[s.0.join("out"), s.0.clone()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a campaign directory"), "{e}");

    // More testbeds than runs: a part with none finishes at once and merges.
    let one = plan_text("84", "");
    go_in(&s, &one, false, "e1", half(1)).unwrap();
    assert_eq!(
        go_in(&s, &one, false, "e2", half(2)).unwrap(),
        Outcome::Finished { done: 0, failed: 0 }
    );
    let r = xlat_campaign::report::build_all(&dirs(&["e1", "e2"])).unwrap();
    assert_eq!(r.results, 1, "{:?}", r.warnings);
}
