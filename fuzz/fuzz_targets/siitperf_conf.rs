//! siitperf.conf as the config reader reads it: parsed, validated, never a panic.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        if let Ok(text) = std::str::from_utf8(data) {
            let _ = xlat_config::parse_with_overrides(text, "fuzz.conf", xlat_config::SourceKind::SiitperfConf, &[]);
        }
    });
}
