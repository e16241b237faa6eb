//! A TOML test description: parsed, validated (and a valid one written back as siitperf.conf),
//! never a panic.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        if let Ok(text) = std::str::from_utf8(data) {
            if let Ok(cfg) = xlat_config::parse_with_overrides(text, "fuzz.toml", xlat_config::SourceKind::Toml, &[]) {
                let _ = xlat_config::to_siitperf(&cfg);
                let _ = xlat_config::to_toml(&cfg);
            }
        }
    });
}
