//! The report is safe to open and shows every name whole (issues 42 and 43), in a real browser.
//!
//! A campaign on the mem backend (no lab, no root) whose test name, DUT hook and procedure
//! arguments carry `<script>`, quotes and `</td>`, beside a test whose name is 60 characters
//! long, each at two frame sizes (so both are series of the throughput plot). `xlatperf report`
//! makes the page and headless Chromium opens it (crates/campaign/tests/browser/check_report.py):
//! no console error, no script element and no script ran, every hostile text shows literally,
//! and every legend entry is drawn whole inside its plot.

mod common;

use common::{check_in_browser, ok, xlatperf};

/// Sets `window.xlatInjected` if it ever runs; closes a cell and an attribute first.
const PAYLOAD: &str = r#"</td>"'><script>window.xlatInjected=1</script>"#;
const LONG: &str = "mem-loopback-with-a-long-descriptive-name-of-sixty-chars-xyz";

#[test]
fn hostile_names_show_as_text_and_long_names_whole() {
    assert_eq!(LONG.len(), 60);
    let dir = common::fresh_dir("xlat-report-browser");
    let mem = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/mem.toml");
    std::fs::copy(mem, dir.join("mem.toml")).unwrap();
    // The hook runs (as a shell command) before every trial: harmless, and recorded. The mem
    // backend's trials are judged by the tester's timing: on a loaded host a 0.3 s trial is
    // often invalid (sending ended microseconds late), so each may run again up to 50 times.
    let hook = format!("true '{}'", PAYLOAD.replace('\'', ""));
    let args = r#"["--max-rate", "20k", "--error", "50%", "--duration", "0.3", "--timeout", "50", "--retries", "50", "--set", "dut.before_trial=HOOK"]"#
        .replace("HOOK", &hook.replace('"', "\\\""));
    let plan = format!(
        "[campaign]\nname = \"hostile\"\naxes = {{ frame-sizes = [84, 1518] }}\n\
         [[test]]\nname = {name}\nconfig = \"mem.toml\"\n\
         [[test]]\nname = \"{LONG}\"\nconfig = \"mem.toml\"\n\
         [[procedure]]\ncommand = \"throughput\"\nargs = {args}\n",
        name = toml_string(&format!("sim {PAYLOAD}")),
    );
    let plan_file = dir.join("hostile.toml");
    std::fs::write(&plan_file, &plan).unwrap();
    let out = dir.join("out");
    let o = xlatperf(&["campaign", plan_file.to_str().unwrap(), "--dir", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    // A plan is code: its DUT command is shown, with where it comes from, before the first run.
    let listed = err.find(&format!(
        "campaign:   {hook}    [sim {PAYLOAD} dut.before_trial, {LONG} dut.before_trial]"
    ));
    let first_run = err.find("campaign: [1/4] 001-");
    assert!(listed.is_some() && listed < first_run, "{err}");
    let html = dir.join("report.html");
    ok(&["report", out.to_str().unwrap(), "--output", html.to_str().unwrap()]);
    let Some(page) = check_in_browser(&html) else { return };

    assert_eq!(page["console"], serde_json::json!([]), "{page}");
    assert_eq!(page["injected"], false, "a script from the plan ran");
    assert_eq!(page["scripts"], 0, "the page has script elements");
    let text = page["text"].as_str().unwrap();
    // The test name (summary, figures, runs), the hook (tester table) and the arguments (the
    // runs' commands) show as the characters they are.
    assert!(text.matches(&format!("sim {PAYLOAD}")).count() >= 3, "{text}");
    assert!(text.contains(&hook), "the DUT hook as written: {text}");
    assert!(
        text.contains(&format!("dut.before_trial={hook}")),
        "the argument as written: {text}"
    );
    // Both tests are series of the throughput plot, each name whole within the picture.
    let legends = page["legends"].as_array().unwrap();
    for name in [LONG.to_string(), format!("sim {PAYLOAD}")] {
        let l = legends
            .iter()
            .find(|l| l["text"] == name.as_str())
            .unwrap_or_else(|| panic!("{name} not in a legend: {legends:?}"));
        let (right, width) = (l["right"].as_f64().unwrap(), l["svg_width"].as_f64().unwrap());
        assert!(right <= width, "{name}: drawn to x={right} in a picture {width} wide");
        assert!(l["rendered"].as_f64().unwrap() > 0.0);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}
