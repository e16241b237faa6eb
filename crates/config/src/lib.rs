//! xlatperf's test description: the TOML format (docs/config.md), the siitperf.conf reader
//! and siitperf's command lines (docs/siitperf-compat.md), `--set KEY=VALUE` overrides, and validation into a typed
//! [`TestConfig`] with errors that name the file, the line and the key.
//!
//! Both formats are read into one TOML document that remembers where each key came from,
//! overrides are applied to it, and one conversion turns it into the typed values and checks
//! every rule. Nothing here panics on any input.
//!
//! | module | holds | uses |
//! | --- | --- | --- |
//! | `model` | the typed [`TestConfig`] and its parts; the defaults and limits of a trial | none |
//! | [`keys`] | the catalogue of every key (TOML path, siitperf.conf name, type, range, default, meaning) | none |
//! | `error` | [`ConfigError`] and [`Loc`]: file, line and key of each problem | none |
//! | `doc` | both readers into one TOML document that remembers lines; `--set` overrides | model, keys, error |
//! | `validate` | the rules between keys, the addresses and ranges; also [`validate()`] | model, doc, error |
//! | `build` | the document into a [`TestConfig`]: defaults, per-key ranges, then `validate` | model, keys, doc, validate, error |
//! | `emit` | [`to_toml`]: a configuration as commented TOML; [`to_siitperf`]: as siitperf's files, written by [`SiitperfFiles::write_into`] | model, keys, error, files |
//! | [`files`] | writing the user's files atomically ([`files::write_atomic`]) | none |
//! | [`siitperf_args`] | siitperf's command lines (`siitperf-tp 84 1000 10 2000 2 2 ...`) on a configuration, in siitperf's order and words | model, validate |
//!
//! Imports only go down this table, never back (`tests/modules.rs` checks it), and the modules
//! name each other's items by module path, never through this file's re-exports.

#![forbid(unsafe_code)]

mod build;
mod doc;
mod emit;
mod error;
pub mod files;
pub mod keys;
mod model;
pub mod siitperf_args;
mod validate;

pub use emit::{to_siitperf, to_toml, to_toml_with_comment, SiitperfFiles};
pub use error::{ConfigError, Loc, SiitperfError};
pub use model::{
    foreground_frames, frame_size_rule, Backend, Cpus, DutHooks, FlowControl, FrameSizeRange, Preliminary, Source, SourceKind,
    StatefulTrial, TestConfig, TesterConfig, TrialDefaults, COMPANION, DEFAULT_PRELIMINARY_TIMEOUT_MS, MAX_PHASE_DELAY_MS,
    MAX_PRELIMINARY_RATE, MAX_PRELIMINARY_TIMEOUT_MS,
};

use std::path::Path;

/// Read, override and validate the configuration file `path`. The format is TOML when the
/// name ends in `.toml` or the text looks like TOML (a `[table]` or `key = value` line first),
/// else siitperf.conf. `overrides` are `--set KEY=VALUE` pairs: KEY is a TOML dotted path
/// (`traffic.reverse`) or a siitperf.conf key (`IP-L-var`); they apply before validation.
pub fn load(path: &Path, overrides: &[(String, String)]) -> Result<TestConfig, ConfigError> {
    let (text, file) = read_text(path)?;
    let kind = if is_toml(path, &text) {
        SourceKind::Toml
    } else {
        SourceKind::SiitperfConf
    };
    parse_with_overrides(&text, &file, kind, overrides)
}

/// Read `conf` (siitperf.conf, in siitperf's syntax or TOML) and, when the file
/// [`COMPANION`] exists in the same directory, its `[tester]` table (nothing else: the test
/// itself stays in siitperf.conf), then validate. Errors name the file and line of either.
pub fn load_with_companion(conf: &Path) -> Result<TestConfig, ConfigError> {
    let companion = conf.parent().unwrap_or(Path::new(".")).join(COMPANION);
    if !companion.exists() {
        return load(conf, &[]);
    }
    let (text, file) = read_text(conf)?;
    let kind = if is_toml(conf, &text) {
        SourceKind::Toml
    } else {
        SourceKind::SiitperfConf
    };
    let mut d = match kind {
        SourceKind::Toml => doc::read_toml(&text, &file)?,
        SourceKind::SiitperfConf => doc::read_siitperf(&text, &file)?,
    };
    let (ctext, cfile) = read_text(&companion)?;
    let c = doc::read_toml(&ctext, &cfile)?;
    doc::merge_tester(&mut d, c)?;
    build::build(&d)
}

fn read_text(path: &Path) -> Result<(String, String), ConfigError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| ConfigError::Io {
        file: file.clone(),
        msg: e.to_string(),
    })?;
    match String::from_utf8(bytes) {
        Ok(t) => Ok((t, file)),
        Err(e) => {
            let bytes = e.as_bytes();
            let at = e.utf8_error().valid_up_to();
            let line = bytes[..at.min(bytes.len())].iter().filter(|b| **b == b'\n').count() + 1;
            Err(ConfigError::NotText {
                at: Loc::Line { file, line },
            })
        }
    }
}

fn is_toml(path: &Path, text: &str) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("toml")) || looks_like_toml(text)
}

/// True when the first line that is not blank or a comment is a TOML table header or a
/// `key = value` line (siitperf.conf lines are `Key value`).
pub fn looks_like_toml(text: &str) -> bool {
    let Some(line) = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#')) else {
        return false;
    };
    if line.starts_with('[') {
        return true;
    }
    match line.split_once('=') {
        Some((key, _)) => {
            let key = key.trim();
            !key.is_empty() && !key.contains(char::is_whitespace) && !key.contains('#')
        }
        None => false,
    }
}

/// Read and validate a TOML test description. `file_name` is used in messages.
pub fn parse_toml(text: &str, file_name: &str) -> Result<TestConfig, ConfigError> {
    parse_with_overrides(text, file_name, SourceKind::Toml, &[])
}

/// Read and validate a siitperf.conf. `file_name` is used in messages.
pub fn parse_siitperf(text: &str, file_name: &str) -> Result<TestConfig, ConfigError> {
    parse_with_overrides(text, file_name, SourceKind::SiitperfConf, &[])
}

/// Read a text of the given format, apply `--set` overrides, and validate.
pub fn parse_with_overrides(
    text: &str,
    file_name: &str,
    kind: SourceKind,
    overrides: &[(String, String)],
) -> Result<TestConfig, ConfigError> {
    let mut d = match kind {
        SourceKind::Toml => doc::read_toml(text, file_name)?,
        SourceKind::SiitperfConf => doc::read_siitperf(text, file_name)?,
    };
    doc::apply_overrides(&mut d, overrides)?;
    build::build(&d)
}

/// Check a configuration again after a program changed it (e.g. the foreground share n/m
/// from siitperf's command line). Keys are named in the style of its source; no line numbers.
pub fn validate(cfg: &TestConfig) -> Result<(), ConfigError> {
    validate::validate(cfg, &validate::Names::of(cfg))
}

/// The preliminary phase (phase 1) of a stateful test with its defaults filled in (M: the
/// foreground frames among N; T: 500 ms; D: ceil(1000 N / R) + 2 T) and checked: N and R must
/// be given, D must be at least floor(1000 N / R) + T, M at most the foreground frames among N,
/// and with pseudorandom enumeration there must be a unique combination for every foreground
/// frame. Call it after changing `cfg.stateful` (command-line options) or the foreground share.
/// Errors name the file and the key (no line: the values may come from the command line).
pub fn preliminary(cfg: &TestConfig) -> Result<Preliminary, ConfigError> {
    validate::preliminary(cfg, &validate::Names::of(cfg))
}

/// How many distinct combinations a stateful test's pseudorandom enumeration can give in phase 1,
/// and of what ("port number", "IP address", "IP address and port number"; siitperf's Info
/// line `Info: number of unique <what> combinations: <C>`); `None` without pseudorandom
/// enumeration.
pub fn combinations(setup: &xlat_traffic::Setup) -> Option<(u128, &'static str)> {
    validate::combinations(setup)
}

/// Phase 1 of a stateful test (RFC 9693; siitperf's `N M R T D`) as command-line options give
/// it: each overrides its `[stateful]` key, and every one is refused in a stateless test.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhaseOneOptions {
    /// N: `--preliminary-frames`, `stateful.preliminary_frames`.
    pub preliminary_frames: Option<u32>,
    /// M: `--state-table`, `stateful.state_table`.
    pub state_table: Option<u32>,
    /// R: `--preliminary-rate`, `stateful.preliminary_rate`.
    pub preliminary_rate: Option<u64>,
    /// T: `--preliminary-timeout`, `stateful.preliminary_timeout_ms`.
    pub preliminary_timeout: Option<u64>,
    /// D: `--phase-delay`, `stateful.phase_delay_ms`.
    pub phase_delay: Option<u64>,
}

impl PhaseOneOptions {
    /// (option, configuration key, value) of each of N, M, R, T, D.
    fn each(&self) -> [(&'static str, &'static str, Option<u64>); 5] {
        [
            (
                "--preliminary-frames N",
                "stateful.preliminary_frames",
                self.preliminary_frames.map(u64::from),
            ),
            ("--state-table M", "stateful.state_table", self.state_table.map(u64::from)),
            ("--preliminary-rate R", "stateful.preliminary_rate", self.preliminary_rate),
            (
                "--preliminary-timeout T",
                "stateful.preliminary_timeout_ms",
                self.preliminary_timeout,
            ),
            ("--phase-delay D", "stateful.phase_delay_ms", self.phase_delay),
        ]
    }

    /// The options given, as `--set` overrides of the `[stateful]` keys they stand for (so
    /// that the configuration's checks between N, M, R, T, D and the ranges see them).
    pub fn as_sets(&self) -> Vec<(String, String)> {
        self.each()
            .into_iter()
            .filter_map(|(_, k, v)| v.map(|v| (k.to_string(), v.to_string())))
            .collect()
    }

    /// The options given, by name (`--phase-delay`).
    pub fn given(&self) -> Vec<&'static str> {
        self.each()
            .into_iter()
            .filter_map(|(o, _, v)| v.map(|_| o.split(' ').next().unwrap_or(o)))
            .collect()
    }
}

/// Load the configuration `path` with the `--set` overrides `sets` and the phase 1 options
/// (which override `[stateful]` as `--set` does, so that every check sees them), and resolve
/// phase 1 ([`phase_one`]). Phase 1 options with a stateless configuration are refused by
/// their names.
pub fn load_stateful(
    path: &Path,
    sets: &[(String, String)],
    options: &PhaseOneOptions,
) -> Result<(TestConfig, Option<Preliminary>), ConfigError> {
    let mut all = sets.to_vec();
    all.extend(options.as_sets());
    let mut cfg = match load(path, &all) {
        Ok(c) => c,
        Err(e) if !options.given().is_empty() => {
            // A stateless configuration refuses the keys: name the options instead.
            if let Ok(mut plain) = load(path, sets) {
                if plain.setup.stateful.mode == xlat_traffic::Stateful::Off {
                    phase_one(&mut plain, options)?;
                }
            }
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    let pre = phase_one(&mut cfg, options)?;
    Ok((cfg, pre))
}

/// Phase 1 of every trial of `cfg`'s stateful test, the options overriding `[stateful]`, with
/// the defaults filled in and the values checked ([`preliminary`]); an error that a value is
/// missing names its option too. `None` for a stateless test, which refuses the options.
pub fn phase_one(cfg: &mut TestConfig, options: &PhaseOneOptions) -> Result<Option<Preliminary>, ConfigError> {
    if cfg.setup.stateful.mode == xlat_traffic::Stateful::Off {
        let given = options.given();
        if given.is_empty() {
            return Ok(None);
        }
        return Err(ConfigError::CommandLine {
            msg: format!(
                "{} {} only for a stateful test, but stateful.mode is off in {} (set it, e.g. --set stateful.mode=initiator-left)",
                given.join(", "),
                if given.len() == 1 { "is" } else { "are" },
                cfg.source.file
            ),
        });
    }
    let p = &mut cfg.stateful;
    p.preliminary_frames = options.preliminary_frames.or(p.preliminary_frames);
    p.state_table = options.state_table.or(p.state_table);
    p.preliminary_rate = options.preliminary_rate.or(p.preliminary_rate);
    p.preliminary_timeout_ms = options.preliminary_timeout.or(p.preliminary_timeout_ms);
    p.phase_delay_ms = options.phase_delay.or(p.phase_delay_ms);
    preliminary(cfg).map(Some).map_err(|e| match &e {
        ConfigError::Required { key, .. } => {
            let option = options
                .each()
                .into_iter()
                .find(|(_, k, _)| k == key)
                .map_or("--phase-delay D", |(o, _, _)| o);
            ConfigError::CommandLine {
                msg: format!("{e}; or give {option}"),
            }
        }
        _ => e,
    })
}

/// Refuse a stateful configuration in a command that cannot run one (rather than run it
/// stateless without a word).
pub fn refuse_stateful(cfg: &TestConfig, command: &str) -> Result<(), ConfigError> {
    if cfg.setup.stateful.mode == xlat_traffic::Stateful::Off {
        return Ok(());
    }
    Err(ConfigError::CommandLine {
        msg: format!(
            "{command} cannot run a stateful test (RFC 9693), but stateful.mode is on in {}: use a stateless configuration \
             (e.g. --set stateful.mode=off, with the enumeration and phase 1 keys removed)",
            cfg.source.file
        ),
    })
}
