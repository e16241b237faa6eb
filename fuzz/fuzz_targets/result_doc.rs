//! A result document as `xlatperf report` reads it: parsed, and every repetition of a readable
//! one turned into the report's figures, never a panic.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        if let Ok(text) = std::str::from_utf8(data) {
            if let Ok(doc) = xlat_campaign::report::read::parse_doc(text) {
                if let Some(p) = doc.procedure() {
                    for size in &doc.results {
                        for run in &size.result.runs {
                            let _ = xlat_campaign::report::model::rep_figures(p, run);
                        }
                    }
                }
            }
        }
    });
}
