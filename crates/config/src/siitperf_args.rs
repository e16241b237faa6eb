//! siitperf's command lines (docs/siitperf-compat.md): what `siitperf-tp`, `siitperf-lat` and
//! `siitperf-pdv` take after siitperf.conf is read, as siitperf (lencsegabor/siitperf 2c82add)
//! reads and checks it: its positional arguments in its order (extra ones are ignored, fewer give
//! `Input Error: Too few command line arguments.`), each read as `sscanf("%u")` reads it, its
//! cross-checks of a stateful test's `N M R T D`, in its words. The `Info:` lines siitperf prints
//! as its checks pass go to the caller as each passes: they stay printed when a later one fails.
//!
//! This is the one reader of a command line that xlatperf's own clap definitions do not check,
//! and it reads arguments typed by hand: it is fuzzed (fuzz/fuzz_targets/siitperf_args.rs).

use crate::model::{self, StatefulTrial, TestConfig};
use crate::validate::{self, Names};
use xlat_traffic::{IpVersion, Setup, Stateful, Variation};
use xlat_trial::{LatencySpec, PdvSpec, PhaseTwoAfter, PreliminarySpec, TrialSpec};

/// One of siitperf's three programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    /// `siitperf-tp`: throughput and frame loss.
    Tp,
    /// `siitperf-lat`: latency tags; takes `<delay> <timestamps>` after the common arguments.
    Lat,
    /// `siitperf-pdv`: per-frame delays; takes `<frame timeout>` after the common arguments.
    Pdv,
}

impl Program {
    /// The program of a command name (`siitperf-tp`, `siitperf-lat`, `siitperf-pdv`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "siitperf-tp" => Some(Program::Tp),
            "siitperf-lat" => Some(Program::Lat),
            "siitperf-pdv" => Some(Program::Pdv),
            _ => None,
        }
    }

    /// How many arguments the program takes after the common ones.
    fn extra(self) -> usize {
        match self {
            Program::Tp => 0,
            Program::Lat => 2,
            Program::Pdv => 1,
        }
    }
}

/// A command line read: the configuration with its foreground share n/m (and, in a stateful
/// test, phase 1) applied, and the trial it asks for.
#[derive(Debug, Clone)]
pub struct CommandLine {
    pub cfg: TestConfig,
    pub spec: TrialSpec,
}

/// siitperf's frame rate limit (10 Gbit/s Ethernet, 64-byte frames), for `<rate>`.
const MAX_RATE: u64 = 14_880_952;

/// An input error in siitperf's words (its whole line, `Input Error: ...`, with xlatperf's
/// detail where it adds one): what siitperf's users' scripts read.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

type Input<T> = Result<T, InputError>;

/// Fail with siitperf's input error line `line`.
fn input<T>(line: impl Into<String>) -> Input<T> {
    Err(InputError(line.into()))
}

/// Check siitperf's stateful parameters `N M R T D` (already in range) against each other and
/// the configuration, in siitperf's order, with 64-bit (128-bit for the combinations)
/// arithmetic. The `Info:` lines siitperf prints on the way go to `info` as each check passes.
/// `n`/`m` are the foreground share of the command line.
fn stateful_checks(setup: &Setup, n: u32, m: u32, p: &PreliminarySpec, info: &mut Vec<String>) -> Input<()> {
    // 1. Phase 1 fits in D (siitperf's formula: the sending time rounded down, plus T).
    let needed = u128::from(p.frames) * 1000 / u128::from(p.rate) + u128::from(p.timeout_ms);
    if needed > u128::from(p.phase_delay_ms) {
        return input(format!(
            "Input Error: 1000*N/R+T > D (preliminary test may not be performed in the available time period). \
             (1000*N/R+T: {needed} > D: {})",
            p.phase_delay_ms
        ));
    }
    info.push(format!("Info: 1000*N/R+T: {needed} <= D: {}", p.phase_delay_ms));
    // 2. Enough foreground frames to fill the state table: the exact count (siitperf's
    //    N-N*(n-m)/n can be one less).
    let eff = model::foreground_frames(p.frames, n, m);
    if eff < p.state_table {
        return input(format!(
            "Input Error: N-N*(n-m)/n < M (there are not enough foreground frames to fill the state table). \
             (xlatperf counts them exactly: {eff} foreground frames among N = {} with n = {n}, m = {m}; M = {}.)",
            p.frames, p.state_table
        ));
    }
    // 3. A unique combination for every foreground frame of a pseudorandom enumeration.
    if let Some((c, what)) = validate::combinations(setup) {
        info.push(format!("Info: number of unique {what} combinations: {c}"));
        info.push(format!("Info: number of foreground preliminary frames: {eff}"));
        if c < u128::from(eff) {
            // siitperf says "IP address" also when both are enumerated (sic "foregound").
            let said = if what == "port number" { what } else { "IP address" };
            return input(format!(
                "Input Error: There are not enough unique {said} combinations for each (foregound) preliminary frames. ({c} < {eff})"
            ));
        }
    }
    // 4. More than one tuple to choose from needs a state table of more than one entry.
    if setup.stateful.responder_tuples != Variation::Fixed && p.state_table == 1 {
        return input("Input Error: 'Responder-tuples' MUST be set to 0, if the size of the state table (M) is 1.");
    }
    // 5. (sic: siitperf's spelling, which scripts may match)
    info.push(format!(
        "Info: Stateful test cmdline parameteres: N: {}, M: {}, R: {}, T: {}, D: {}",
        p.frames, p.state_table, p.rate, p.timeout_ms, p.phase_delay_ms
    ));
    Ok(())
}

/// Argument `i` read as siitperf's `sscanf("%u")` reads it (leading blanks and a `+` allowed,
/// digits up to the first other character, at least one), within `lo..=hi`; else `message`.
fn arg(args: &[String], i: usize, lo: u64, hi: u64, message: &str) -> Input<u64> {
    let s = args.get(i).map(|s| s.trim_start()).unwrap_or("");
    let s = s.strip_prefix('+').unwrap_or(s);
    let digits: &str = &s[..s.bytes().take_while(u8::is_ascii_digit).count()];
    match digits.parse::<u64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => input(format!("Input Error: {message}")),
    }
}

/// Parse `<IPv6 size> <rate> <duration> <global timeout> <n> <m> [N M R T D] <extra...>` on
/// a configuration already read, in siitperf's order; `extra` is how many arguments the program
/// takes after them, which follow at the returned index. `Info:` lines go to `info`.
fn common(cfg: TestConfig, args: &[String], extra: usize, info: &mut Vec<String>) -> Input<(CommandLine, usize)> {
    let stateful = cfg.setup.stateful.mode != Stateful::Off;
    let base = if stateful { 11 } else { 6 };
    if args.len() < base + extra {
        return input("Input Error: Too few command line arguments.");
    }
    let size = arg(args, 0, 84, 1538, "IPv6 frame size must be between 84 and 1538.")? as usize;
    let rate = arg(args, 1, 1, MAX_RATE, "Frame rate must be between 1 and 14880952.")?;
    let duration = arg(args, 2, 1, 3600, "Test duration must be between 1 and 3600.")?;
    let timeout = arg(args, 3, 0, 60_000, "Global timeout must be between 0 and 60000.")?;
    let n = arg(args, 4, 2, u64::from(u32::MAX), "The value of 'n' must be at least 2.")? as u32;
    let m = arg(args, 5, 0, u64::from(u32::MAX), "Cannot read the value of 'm'.")? as u32;
    let setup = &cfg.setup;
    let v6 = |d: bool, v: IpVersion| d && v == IpVersion::V6;
    if size > 1518 && (v6(setup.forward, setup.left.ip_version) || v6(setup.reverse, setup.right.ip_version) || m < n) {
        return input(
            "Input Error: IPv6 frame sizes between 1518 and 1538 are allowed for pure IPv4 traffic only (as IPv4 frames are 20 bytes shorter).",
        );
    }
    let preliminary = if stateful {
        let u32_max = u64::from(u32::MAX);
        Some(PreliminarySpec {
            frames: arg(
                args,
                6,
                1,
                u32_max,
                "'N' (the number of preliminary frames) must be between 1 and 2^32-1.",
            )?,
            state_table: arg(
                args,
                7,
                1,
                u32_max,
                "'M' (the size of the state table of the Responder) must be between 1 and 2^32-1.",
            )?,
            // siitperf checks <rate> here where it means R, so R is any 32-bit value; 0, which
            // siitperf divides by, is refused.
            rate: arg(args, 8, 1, u32_max, "Preliminary frame rate 'R' must be between 1 and 2^32-1.")?,
            timeout_ms: arg(
                args,
                9,
                1,
                model::MAX_PRELIMINARY_TIMEOUT_MS,
                "the value of 'T' (global timeout for the preliminary frames) must be between 1 and 2000.",
            )?,
            phase_delay_ms: arg(
                args,
                10,
                1,
                model::MAX_PHASE_DELAY_MS,
                "the value of 'D' (delay caused by the preliminary phase) must be between 1 and 100000000.",
            )?,
        })
    } else {
        None
    };
    let mut cfg = cfg;
    // m > n: every frame is foreground (i mod n < m), as with m = n.
    let m = m.min(n);
    cfg.setup.fg_n = n;
    cfg.setup.fg_m = m;
    if let Some(p) = &preliminary {
        stateful_checks(&cfg.setup, n, m, p, info)?;
        // The command line's N M R T D are the configuration's phase 1 (for the checks of
        // validate); an R above what a TOML file may say is checked there at its limit.
        cfg.stateful = StatefulTrial {
            preliminary_frames: u32::try_from(p.frames).ok(),
            state_table: u32::try_from(p.state_table).ok(),
            preliminary_rate: Some(p.rate.min(model::MAX_PRELIMINARY_RATE)),
            preliminary_timeout_ms: Some(p.timeout_ms),
            phase_delay_ms: Some(p.phase_delay_ms),
        };
    }
    validate::validate(&cfg, &Names::of(&cfg)).map_err(|e| InputError(format!("Input Error: {e}")))?;
    let spec = cfg.tester.bound_send_lag(TrialSpec {
        preliminary,
        ..TrialSpec::new(size, rate, duration as f64, timeout)
    });
    Ok((CommandLine { cfg, spec }, base))
}

/// The trial of `program`: `spec` with its latency tags or delay recording, from the extra
/// arguments at `at`, and what follows phase 1: siitperf-tp and -lat run phase 2 after any
/// phase 1, -pdv stops on an unfilled state table.
fn program_spec(program: Program, spec: TrialSpec, args: &[String], at: usize) -> Input<TrialSpec> {
    let phase_two_after = match program {
        Program::Pdv => PhaseTwoAfter::FilledTable,
        _ => PhaseTwoAfter::AnyPhaseOne,
    };
    let spec = TrialSpec { phase_two_after, ..spec };
    match program {
        Program::Lat => {
            let delay = arg(args, at, 0, 3600, "Delay before timestamps must be between 0 and 3600.")?;
            if delay as f64 >= spec.duration_s {
                return input("Input Error: Test duration MUST be longer than the delay before timestamps.");
            }
            let tags = arg(args, at + 1, 1, 50_000, "Number of timestamps must be between 1 and 50000.")?;
            if (spec.duration_s - delay as f64) * (spec.rate as f64) < tags as f64 {
                return input(
                    "Input Error: There are not enough test frames in the (duration-delay) interval to carry so many timestamps.",
                );
            }
            let latency = Some(LatencySpec {
                delay_s: delay as f64,
                tags,
            });
            Ok(TrialSpec { latency, ..spec })
        }
        Program::Pdv => {
            // A frame timeout is below the longest a frame can take: duration + global timeout.
            let bound = (spec.duration_s as u64 * 1000 + spec.timeout_ms).saturating_sub(1);
            let frame_timeout_ms = arg(
                args,
                at,
                0,
                bound.min(u64::from(u16::MAX)),
                &format!(
                    "Frame timeout must be between 0 and {} (below 1000*duration+global timeout).",
                    bound.min(u64::from(u16::MAX))
                ),
            )?;
            let pdv = Some(PdvSpec {
                frame_timeout_ms,
                exact: false,
            });
            Ok(TrialSpec { pdv, ..spec })
        }
        Program::Tp => Ok(spec),
    }
}

/// Read `program`'s command line `args` (without the program's name) on `cfg`, siitperf.conf
/// as read: `<IPv6 size> <rate> <duration> <global timeout> <n> <m>`, then `N M R T D` in a
/// stateful test, then the program's own (`<delay> <timestamps>`, `<frame timeout>`). The
/// `Info:` lines siitperf prints on the way are pushed to `info` as each check passes.
pub fn read(program: Program, cfg: TestConfig, args: &[String], info: &mut Vec<String>) -> Result<CommandLine, InputError> {
    let (c, at) = common(cfg, args, program.extra(), info)?;
    let spec = program_spec(program, c.spec, args, at)?;
    Ok(CommandLine { cfg: c.cfg, spec })
}
