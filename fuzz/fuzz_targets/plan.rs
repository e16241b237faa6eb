//! A campaign plan: parsed, and a valid one expanded into its runs, never a panic.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        if let Ok(text) = std::str::from_utf8(data) {
            if let Ok(plan) = xlat_campaign::plan::Plan::parse(text, std::path::Path::new("/fuzz/plan.toml")) {
                let _ = plan.runs();
            }
        }
    });
}
