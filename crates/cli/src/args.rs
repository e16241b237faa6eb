//! Command-line options of the measurement procedures and the parsers of their values. Every
//! parser returns a message that clap prefixes with the option's name, so a bad value always
//! says which option it was given to.

use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;
use xlat_results::ValueError;

/// The test description and its overrides.
#[derive(Args, Clone, Debug)]
pub struct ConfigArgs {
    /// Test description: a TOML file or a siitperf.conf.
    #[arg(short = 'c', long = "config")]
    pub config: PathBuf,
    /// Override a configuration key, by TOML path (traffic.reverse=false) or siitperf.conf name
    /// (IP-L-var=3). Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

/// Options every procedure has: configuration, frame sizes, repetitions, output files.
#[derive(Args, Clone, Debug)]
pub struct CommonArgs {
    #[command(flatten)]
    pub cfg: ConfigArgs,
    /// siitperf's frame sizes (IPv6 frames have them, IPv4 frames are 20 bytes shorter; FCS
    /// counted), comma-separated: the procedure runs once per size. Default: the configuration's.
    #[arg(long = "frame-sizes", visible_alias = "frame-size", value_name = "SIZES", value_delimiter = ',', value_parser = parse_frame_size)]
    pub frame_sizes: Vec<usize>,
    /// Milliseconds the receivers keep receiving after sending ended (RFC 2544: 2000).
    #[arg(long, value_name = "MS", default_value_t = xlat_results::defaults::DEFAULT_TIMEOUT_MS, value_parser = clap::value_parser!(u64).range(0..=60_000))]
    pub timeout: u64,
    /// Run the whole procedure N times per frame size and report median, minimum, maximum,
    /// 1st and 99th percentile and dispersion of its results.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub repeat: u64,
    /// Times an invalid trial (the tester missed its own schedule) is run again. A rate that
    /// stays invalid is one the tester cannot send: a search takes it as an upper bound and goes
    /// on below it (the result says "bounded by the tester"); for a fixed rate it is an error.
    #[arg(long, value_name = "N", default_value_t = xlat_results::defaults::DEFAULT_RETRIES, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub retries: u32,
    /// Write every trial of every repetition, the configuration, the seeds and the command line
    /// as JSON to FILE (rewritten after every repetition), or with `-` to standard output at the
    /// end, instead of the human text.
    #[arg(long, value_name = "FILE|-", value_parser = crate::output::parse_json_to)]
    pub json: Option<crate::output::JsonTo>,
    /// Write one CSV row per trial to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write one CSV row per summarised metric and frame size to FILE.
    #[arg(long = "summary-csv", value_name = "FILE")]
    pub summary_csv: Option<PathBuf>,
    /// Draw the result as an SVG plot in FILE.svg (FILE.png if rsvg-convert is installed).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Print one line per trial on standard error (also when it is not a terminal).
    #[arg(short, long)]
    pub verbose: bool,
}

/// Phase 1 of a stateful test (RFC 9693; siitperf's `N M R T D`), overriding `[stateful]` in
/// the configuration. Refused in a stateless test.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq)]
pub struct StatefulArgs {
    /// Stateful test: N, the frames the Initiator sends in phase 1 (foreground and background).
    #[arg(long = "preliminary-frames", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub preliminary_frames: Option<u32>,
    /// Stateful test: M, the entries of the Responder's state table. Default: the foreground
    /// frames among N.
    #[arg(long = "state-table", value_name = "M", value_parser = clap::value_parser!(u32).range(1..))]
    pub state_table: Option<u32>,
    /// Stateful test: R, the frames/s of phase 1.
    #[arg(long = "preliminary-rate", value_name = "FPS", value_parser = parse_preliminary_rate)]
    pub preliminary_rate: Option<u64>,
    /// Stateful test: T, milliseconds the Responder keeps receiving after phase 1's sending
    /// ended (default 500).
    #[arg(long = "preliminary-timeout", value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=2000))]
    pub preliminary_timeout: Option<u64>,
    /// Stateful test: D, milliseconds from the start of phase 1 to the start of phase 2.
    /// Default: 1000 N / R rounded up, plus 2 T.
    #[arg(long = "phase-delay", value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub phase_delay: Option<u64>,
}

impl StatefulArgs {
    /// The options for the configuration's phase 1 ([`xlat_config::load_stateful`]).
    pub fn options(&self) -> xlat_config::PhaseOneOptions {
        xlat_config::PhaseOneOptions {
            preliminary_frames: self.preliminary_frames,
            state_table: self.state_table,
            preliminary_rate: self.preliminary_rate,
            preliminary_timeout: self.preliminary_timeout,
            phase_delay: self.phase_delay,
        }
    }
}

/// Phase 1's rate: a rate, as `trial.rate` allows it (1 to 10^9 frames/s).
pub fn parse_preliminary_rate(s: &str) -> Result<u64, ValueError> {
    let v = parse_rate(s)?;
    if v > xlat_config::MAX_PRELIMINARY_RATE {
        let allowed = format!("at most {} frames/s", xlat_config::MAX_PRELIMINARY_RATE);
        return Err(ValueError::range(s, allowed));
    }
    Ok(v)
}

/// The throughput search's bounds and precision.
#[derive(Args, Clone, Debug)]
pub struct SearchArgs {
    /// The lowest rate searched, frames/s per direction.
    #[arg(long = "min-rate", value_name = "FPS", default_value = "0", value_parser = parse_rate_or_zero)]
    pub min_rate: u64,
    /// The highest rate searched, frames/s per direction (tried first). Default: the line rate
    /// of --link-gbps for the frame size.
    #[arg(long = "max-rate", value_name = "FPS", value_parser = parse_rate)]
    pub max_rate: Option<u64>,
    /// The search stops when the interval is at most this wide: frames/s, or a percentage of
    /// --max-rate ("1%"). Default: 0.1% of --max-rate.
    #[arg(long, value_name = "FPS|P%", value_parser = parse_error)]
    pub error: Option<SearchError>,
    /// Loss allowed per direction: a fraction of the frames sent (0.001) or a percentage ("0.1%").
    /// RFC 2544: 0.
    #[arg(long = "loss-tolerance", value_name = "FRACTION|P%", default_value = "0", value_parser = parse_fraction)]
    pub loss_tolerance: f64,
}

/// The media: what the maximum frame rate is.
#[derive(Args, Clone, Debug)]
pub struct LinkArgs {
    /// Link speed in Gbit/s, for the default line rate (frame + 20 bytes of preamble and gap).
    #[arg(long = "link-gbps", value_name = "GBPS", default_value = "10", value_parser = parse_gbps)]
    pub link_gbps: f64,
}

/// A search width: absolute or relative to the maximum rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SearchError {
    Fps(u64),
    PercentOfMax(f64),
}

impl SearchError {
    /// A search's error when `--error` says nothing: 0.1 % of `--max-rate`.
    pub const DEFAULT: SearchError = SearchError::PercentOfMax(0.1);

    /// In frames/s for a search up to `max_rate`; at least 1.
    pub fn resolve(self, max_rate: u64) -> u64 {
        match self {
            SearchError::Fps(v) => v.max(1),
            SearchError::PercentOfMax(p) => ((max_rate as f64 * p / 100.0).round() as u64).max(1),
        }
    }
}

/// The largest frame size parameter any setup takes: the configuration's own range (84 up to
/// the largest IPv6 frame, 20 more when every frame is IPv4), so that every command accepts
/// the same sizes as `trial.frame_size`. What a port cannot carry (its MTU) the engine refuses
/// before sending, naming the limit.
pub const MAX_FRAME_SIZE_PARAM: usize = xlat_wire::frame::MAX_FRAME_SIZE + 20;

/// A frame size parameter: 84 to [`MAX_FRAME_SIZE_PARAM`], as the configuration's.
pub fn parse_frame_size(s: &str) -> Result<usize, ValueError> {
    let v: usize = s.trim().parse().map_err(|_| ValueError::form(s, "a whole number of bytes"))?;
    if !(84..=MAX_FRAME_SIZE_PARAM).contains(&v) {
        let allowed = format!("84 to {MAX_FRAME_SIZE_PARAM} bytes (the IPv6 frame size, FCS included)");
        return Err(ValueError::range(s, allowed));
    }
    Ok(v)
}

pub use xlat_results::sweep::parse_number;

/// A frame rate above 0: "20000", "20k", "1.5M", "14_880_952".
pub fn parse_rate(s: &str) -> Result<u64, ValueError> {
    let v = parse_rate_or_zero(s)?;
    if v == 0 {
        return Err(ValueError::range(s, "above 0 frames/s"));
    }
    Ok(v)
}

/// A frame rate, 0 allowed.
pub fn parse_rate_or_zero(s: &str) -> Result<u64, ValueError> {
    let v = parse_number(s)?;
    if v.fract() != 0.0 {
        return Err(ValueError::form(s, "a whole number of frames/s"));
    }
    if v > 1.0e12 {
        return Err(ValueError::range(s, "within any link's frame rate (at most 10^12 frames/s)"));
    }
    Ok(v as u64)
}

/// A fraction in [0, 1): "0.001" or a percentage "0.1%".
pub fn parse_fraction(s: &str) -> Result<f64, ValueError> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => {
            let p: f64 = p.trim().parse().map_err(|_| ValueError::form(s, "a percentage (example: 0.1%)"))?;
            p / 100.0
        }
        None => t
            .parse::<f64>()
            .map_err(|_| ValueError::form(s, "a fraction (example: 0.001) or a percentage (example: 0.1%)"))?,
    };
    if !(v.is_finite() && (0.0..1.0).contains(&v)) {
        return Err(ValueError::range(s, "at least 0 and below 1 (100%)"));
    }
    Ok(v)
}

/// The frame-loss step: a fraction in (0, 0.1] of the maximum rate, or a percentage.
pub fn parse_step(s: &str) -> Result<f64, ValueError> {
    let v = parse_fraction(s)?;
    if !(v > 0.0 && v <= 0.1 + 1e-12) {
        return Err(ValueError::range(s, "above 0 and at most 10% (RFC 2544 section 26.3)"));
    }
    Ok(v.min(0.1))
}

/// A search width: frames/s ("2000", "2k") or a percentage of the maximum rate ("1%").
pub fn parse_error(s: &str) -> Result<SearchError, ValueError> {
    let t = s.trim();
    match t.strip_suffix('%') {
        Some(p) => {
            let p: f64 = p.trim().parse().map_err(|_| ValueError::form(s, "a percentage"))?;
            if !(p.is_finite() && p > 0.0 && p <= 100.0) {
                return Err(ValueError::range(s, "above 0% and at most 100%"));
            }
            Ok(SearchError::PercentOfMax(p))
        }
        None => {
            let v = parse_rate(t)?;
            Ok(SearchError::Fps(v))
        }
    }
}

/// A number read from `s` (`expected`: what it is) for which `ok` holds (`allowed`: when).
fn number_in(s: &str, expected: &'static str, ok: impl Fn(f64) -> bool, allowed: &str) -> Result<f64, ValueError> {
    let v: f64 = s.trim().parse().map_err(|_| ValueError::form(s, expected))?;
    if !(v.is_finite() && ok(v)) {
        return Err(ValueError::range(s, allowed));
    }
    Ok(v)
}

/// Seconds above 0 (fractions allowed), at most a day.
pub fn parse_seconds(s: &str) -> Result<f64, ValueError> {
    let allowed = "above 0 and at most 86400 seconds";
    number_in(s, "a number of seconds", |v| v > 0.0 && v <= 86_400.0, allowed)
}

/// Seconds, 0 allowed.
pub fn parse_seconds_or_zero(s: &str) -> Result<f64, ValueError> {
    number_in(s, "a number of seconds", |v| (0.0..=86_400.0).contains(&v), "0 to 86400 seconds")
}

/// The idle time between back-to-back trials: RFC 2544 and RFC 9004 ask for at least 2 s.
pub fn parse_idle(s: &str) -> Result<f64, ValueError> {
    let v = parse_seconds(s)?;
    if v < 2.0 {
        let allowed = "at least 2 seconds: RFC 2544 and RFC 9004 require them between trials";
        return Err(ValueError::range(s, allowed));
    }
    Ok(v)
}

/// A link speed, Gbit/s.
pub fn parse_gbps(s: &str) -> Result<f64, ValueError> {
    let allowed = "above 0 and at most 10000 Gbit/s";
    number_in(s, "a number of Gbit/s", |v| v > 0.0 && v <= 10_000.0, allowed)
}

/// A factor of the throughput for the system recovery test.
pub fn parse_factor(s: &str) -> Result<f64, ValueError> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| ValueError::form(s, "a factor (1.1) or a percentage (110%)"))?;
    if !(v.is_finite() && v > 0.0 && v <= 10.0) {
        return Err(ValueError::range(s, "above 0 and at most 10 (1000%)"));
    }
    Ok(v)
}

/// `--set KEY=VALUE` options as pairs.
pub fn parse_sets(sets: &[String]) -> Result<Vec<(String, String)>> {
    sets.iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
            _ => bail!("--set {s}: expected KEY=VALUE"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_and_percentages() {
        assert_eq!(parse_fraction("0"), Ok(0.0));
        assert_eq!(parse_fraction("0.001"), Ok(0.001));
        assert!((parse_fraction("0.1%").unwrap() - 0.001).abs() < 1e-15);
        assert!((parse_fraction(" 5 %").unwrap() - 0.05).abs() < 1e-15);
        assert!(parse_fraction("1").is_err());
        assert!(parse_fraction("100%").is_err());
        assert!(parse_fraction("-0.1").is_err());
        assert!(parse_fraction("abc").is_err());
        assert!(parse_fraction("NaN").is_err());
    }

    #[test]
    fn rates_with_suffixes() {
        assert_eq!(parse_rate("20000"), Ok(20_000));
        assert_eq!(parse_rate("20k"), Ok(20_000));
        assert_eq!(parse_rate("1.5M"), Ok(1_500_000));
        assert_eq!(parse_rate("14_880_952"), Ok(14_880_952));
        assert!(parse_rate("0").is_err());
        assert_eq!(parse_rate_or_zero("0"), Ok(0));
        assert!(parse_rate("1.5").is_err());
        assert!(parse_rate("-3").is_err());
        assert!(parse_rate("fast").is_err());
    }

    #[test]
    fn search_error_absolute_or_relative() {
        assert_eq!(parse_error("2000"), Ok(SearchError::Fps(2000)));
        assert_eq!(parse_error("1%"), Ok(SearchError::PercentOfMax(1.0)));
        assert_eq!(parse_error("1%").unwrap().resolve(200_000), 2000);
        assert_eq!(parse_error("0.0001%").unwrap().resolve(100), 1);
        assert!(parse_error("0%").is_err());
        assert!(parse_error("0").is_err());
    }

    #[test]
    fn frame_sizes_and_steps() {
        assert_eq!(parse_frame_size("84"), Ok(84));
        assert_eq!(parse_frame_size("1538"), Ok(1538));
        assert!(parse_frame_size("64").is_err());
        assert_eq!(parse_frame_size("1539"), Ok(1539));
        assert_eq!(parse_frame_size("9038"), Ok(9038));
        assert!(parse_frame_size("9039").is_err());
        assert!(parse_frame_size("x").is_err());
        assert_eq!(parse_step("10%"), Ok(0.1));
        assert_eq!(parse_step("0.05"), Ok(0.05));
        assert!(parse_step("20%").is_err());
        assert!(parse_step("0").is_err());
        assert!(parse_idle("1").is_err());
        assert_eq!(parse_idle("2"), Ok(2.0));
        assert_eq!(parse_factor("110%"), Ok(1.1));
    }
}
