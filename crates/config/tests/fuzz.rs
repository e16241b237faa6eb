//! Nothing panics on any input: random byte strings and random mutations of valid files, fed
//! to both readers, with and without random `--set` overrides.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use xlat_config::{keys, looks_like_toml, parse_with_overrides, to_toml, SourceKind};
use xlat_testkit::rng::Rng;

const ALPHABET: &[u8] = b" \t\n\r#=[]{}\".,:-_0123456789abcdefxABCDEFX'\\";

const TOKENS: &[&str] = &[
    "IP-L-Vers",
    "IP-R-var",
    "Stateful",
    "Enumerate-ips",
    "Num-L-Nets",
    "IPv6-R-offset",
    "Forward",
    "0",
    "1",
    "3",
    "4",
    "6",
    "7",
    "0x",
    "0xffff",
    "0x10000",
    "65536",
    "-1",
    "99999999999999999999999",
    "198.18.0.1",
    "10.0.0.1",
    "2001:2::1",
    "64:ff9b::198.19.0.2",
    "::",
    "02:00:00:00:00:01",
    "#",
    "=",
    "[",
    "]",
    "[[",
    "{",
    "}",
    "\"",
    "'",
    "\n",
    " = ",
    "true",
    "false",
    "1e400",
    "nan",
    "inf",
    "\u{0}",
    "é",
    "[left]",
    "[right.ip_variation]",
    "[traffic]",
    "foreground = { n = 0, m = 0 }",
    "variation = \"pseudorandom\"",
    "mode = \"initiator-right\"",
    "enumerate_ips = \"increasing\"",
    "num_nets = 256",
    "frame_size = 9018",
    "duration = -1",
    "ipv6_offset = 6",
    "1979-05-27T07:32:00Z",
];

/// Parse; true when accepted. Panics (failing the test) with the input when the reader panics.
fn check(text: &str, kind: SourceKind, overrides: &[(String, String)]) -> bool {
    let r = catch_unwind(AssertUnwindSafe(|| {
        let _ = looks_like_toml(text);
        match parse_with_overrides(text, "fuzz", kind, overrides) {
            Ok(cfg) => {
                // What was accepted converts to TOML that reads back to the same.
                let t = to_toml(&cfg);
                match parse_with_overrides(&t, "fuzz.toml", SourceKind::Toml, &[]) {
                    Ok(back) => assert!(
                        back.setup == cfg.setup && back.tester == cfg.tester && back.trial == cfg.trial,
                        "{t}"
                    ),
                    Err(e) => panic!("accepted input does not round-trip: {e}\n{t}"),
                }
                true
            }
            Err(e) => {
                let _ = e.to_string();
                false
            }
        }
    }));
    match r {
        Ok(accepted) => accepted,
        Err(_) => panic!("panicked on {kind:?} input {text:?} with overrides {overrides:?}"),
    }
}

fn random_text(rng: &mut Rng) -> String {
    let len = rng.index(200);
    let mut b = Vec::with_capacity(len);
    let mode = rng.index(3);
    while b.len() < len {
        match mode {
            0 => b.push(rng.next_u64() as u8),
            1 => b.push(*rng.pick(ALPHABET)),
            _ => {
                b.extend_from_slice(rng.pick(TOKENS).as_bytes());
                b.push(*rng.pick(b" \n"));
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn random_overrides(rng: &mut Rng) -> Vec<(String, String)> {
    let all = keys::keys();
    (0..rng.index(3))
        .map(|_| {
            let k = rng.pick(all);
            let key = if rng.index(2) == 0 {
                k.path.to_string()
            } else {
                k.conf_name().unwrap_or("bogus-key").to_string()
            };
            (key, rng.pick(TOKENS).to_string())
        })
        .collect()
}

fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut b = text.as_bytes().to_vec();
    for _ in 0..1 + rng.index(6) {
        let at = rng.index(b.len() + 1);
        match rng.index(6) {
            0 if at < b.len() => b[at] = *rng.pick(ALPHABET),
            1 => {
                let t = rng.pick(TOKENS).as_bytes();
                b.splice(at..at, t.iter().copied());
            }
            2 => {
                let end = (at + rng.index(20)).min(b.len());
                b.drain(at..end);
            }
            3 if at < b.len() => b[at] = rng.next_u64() as u8,
            _ => {
                // Duplicate or move a line.
                let s = String::from_utf8_lossy(&b).into_owned();
                let mut lines: Vec<&str> = s.lines().collect();
                if !lines.is_empty() {
                    let i = rng.index(lines.len());
                    let j = rng.index(lines.len());
                    let l = lines[i];
                    if rng.index(2) == 0 {
                        lines.insert(j, l);
                    } else {
                        lines.swap(i, j);
                    }
                }
                b = lines.join("\n").into_bytes();
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

#[test]
fn random_byte_strings_never_panic() {
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    for i in 0..100_000 {
        let text = random_text(&mut rng);
        let overrides = if i % 4 == 0 { random_overrides(&mut rng) } else { Vec::new() };
        let _ = check(&text, SourceKind::SiitperfConf, &overrides);
        let _ = check(&text, SourceKind::Toml, &overrides);
    }
}

#[test]
fn mutated_valid_files_never_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut corpus: Vec<(String, SourceKind)> = Vec::new();
    for e in std::fs::read_dir(dir).expect("examples/") {
        let p = e.expect("entry").path();
        let kind = match p.extension().and_then(|e| e.to_str()) {
            Some("toml") => SourceKind::Toml,
            Some("conf") => SourceKind::SiitperfConf,
            _ => continue,
        };
        corpus.push((std::fs::read_to_string(&p).expect("read"), kind));
    }
    assert!(!corpus.is_empty());
    let mut rng = Rng::new(0xD1B5_4A32_D192_ED03);
    let (mut accepted, total) = (0, 20_000);
    for i in 0..total {
        let (text, kind) = rng.pick(&corpus).clone();
        let m = mutate(&mut rng, &text);
        let overrides = if i % 3 == 0 { random_overrides(&mut rng) } else { Vec::new() };
        if check(&m, kind, &overrides) {
            accepted += 1;
        }
        // The other reader on the same text.
        let other = if kind == SourceKind::Toml {
            SourceKind::SiitperfConf
        } else {
            SourceKind::Toml
        };
        let _ = check(&m, other, &[]);
    }
    // The mutations are mild enough that some files still pass: the checks above ran on
    // accepted configurations too.
    assert!(accepted > total / 100, "only {accepted} mutated files accepted");
}
