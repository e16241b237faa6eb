//! Plots as standalone SVG documents, written by hand (no plotting dependency): a general
//! [`LinePlot`] and three ready-made plots: throughput against frame size, the frame loss rate
//! curve, and the CDF of latency or one-way delay.

use std::fmt::Write as _;

use crate::delay::{DelayRecorder, DelayStats};
use crate::frame_loss::FrameLossResult;

const W: f64 = 800.0;
/// The height without the legend, which is below the plot, a line per series.
const H: f64 = 500.0;
const LEFT: f64 = 90.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 60.0;
/// Where the legend's first line is, under the x label; a line's height; where its text begins
/// after the line's swatch.
const LEGEND_TOP: f64 = H + 10.0;
const LEGEND_LINE: f64 = 20.0;
const LEGEND_TEXT_X: f64 = 26.0;
const FONT_PX: f64 = 12.0;
const COLOURS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

/// One line of a plot.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Optional (low, high) error bar per point.
    pub error_bars: Option<Vec<(f64, f64)>>,
    /// Draw as a staircase (for CDFs).
    pub step: bool,
    /// Draw the points alone, unjoined, as hollow rings (marks such as "bounded by the tester").
    pub dots: bool,
}

/// A line plot with linear axes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinePlot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    /// Fixed y range; otherwise from the data (starting at 0 when all values are positive).
    pub y_range: Option<(f64, f64)>,
}

/// Escape text for SVG.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// About `n` round tick values covering [lo, hi].
pub fn nice_ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo || n == 0 {
        return vec![lo];
    }
    let raw = (hi - lo) / n as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 && out.len() < 100 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

/// A width that `text` at `px` pixels does not exceed in a sans-serif font (we draw without
/// font files, so it is estimated per character, on the wide side: a legend laid out by it is
/// never cut; the browser test measures the real one).
pub fn text_width(text: &str, px: f64) -> f64 {
    let em: f64 = text
        .chars()
        .map(|c| match c {
            'i' | 'j' | 'l' | 'I' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | ' ' => 0.35,
            'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '-' | '/' => 0.45,
            'm' | 'w' | 'M' | 'W' | '@' | '%' => 0.95,
            'A'..='Z' | '&' | '#' => 0.75,
            c if c.is_ascii() => 0.6,
            // Accented letters, CJK, symbols: as wide as the widest.
            _ => 1.0,
        })
        .sum();
    em * px
}

fn label(v: f64) -> String {
    if v.abs() >= 1.0e6 {
        format!("{}M", trim(v / 1.0e6))
    } else if v.abs() >= 1.0e4 {
        format!("{}k", trim(v / 1.0e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

impl LinePlot {
    pub fn to_svg(&self) -> String {
        let finite = |p: &(f64, f64)| p.0.is_finite() && p.1.is_finite();
        let pts: Vec<(f64, f64)> = self.series.iter().flat_map(|s| s.points.iter().copied().filter(finite)).collect();
        let bars: Vec<f64> = self
            .series
            .iter()
            .filter_map(|s| s.error_bars.as_ref())
            .flatten()
            .flat_map(|&(a, b)| [a, b])
            .filter(|v| v.is_finite())
            .collect();
        let (mut x0, mut x1) = pts
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.0), b.max(p.0)));
        let (mut y0, mut y1) = pts
            .iter()
            .map(|p| p.1)
            .chain(bars)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| (a.min(y), b.max(y)));
        if pts.is_empty() {
            (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
        }
        if let Some((a, b)) = self.y_range {
            (y0, y1) = (a, b);
        } else if y0 > 0.0 {
            y0 = 0.0;
        }
        if x1 <= x0 {
            (x0, x1) = (x0 - 1.0, x1 + 1.0);
        }
        if y1 <= y0 {
            y1 = y0 + 1.0;
        }
        let yt = nice_ticks(y0, y1, 6);
        if self.y_range.is_none() {
            y1 = y1.max(*yt.last().unwrap_or(&y1));
        }
        let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
        // The legend below the x label, every name whole: the picture widens for a long one.
        let widest = self.series.iter().map(|se| text_width(&se.label, FONT_PX)).fold(0.0, f64::max);
        let width = W.max((LEFT + LEGEND_TEXT_X + widest + RIGHT).ceil());
        let height = LEGEND_TOP + LEGEND_LINE * self.series.len() as f64;
        let sx = |x: f64| LEFT + (x - x0) / (x1 - x0) * pw;
        let sy = |y: f64| TOP + ph - (y - y0) / (y1 - y0) * ph;
        let mut s = String::new();
        let _ = writeln!(s, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="{FONT_PX}">"#
        );
        let _ = writeln!(s, r#"<rect width="{width}" height="{height}" fill="white"/>"#);
        let _ = writeln!(
            s,
            r#"<text x="{}" y="28" text-anchor="middle" font-size="16">{}</text>"#,
            LEFT + pw / 2.0,
            escape(&self.title)
        );
        // Grid and ticks.
        for t in nice_ticks(x0, x1, 8) {
            let x = sx(t);
            let _ = writeln!(
                s,
                r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/>"##,
                TOP + ph
            );
            let _ = writeln!(
                s,
                r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                TOP + ph + 18.0,
                label(t)
            );
        }
        for t in yt.iter().copied().filter(|t| *t <= y1 + 1e-12) {
            let y = sy(t);
            let _ = writeln!(
                s,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/>"##,
                LEFT + pw
            );
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                LEFT - 6.0,
                y + 4.0,
                label(t)
            );
        }
        let _ = writeln!(
            s,
            r#"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            LEFT + pw / 2.0,
            H - 15.0,
            escape(&self.x_label)
        );
        let _ = writeln!(
            s,
            r#"<text x="20" y="{:.1}" text-anchor="middle" transform="rotate(-90 20 {:.1})">{}</text>"#,
            TOP + ph / 2.0,
            TOP + ph / 2.0,
            escape(&self.y_label)
        );
        for (i, se) in self.series.iter().enumerate() {
            let c = COLOURS[i % COLOURS.len()];
            let p: Vec<(f64, f64)> = se.points.iter().copied().filter(finite).collect();
            let mut path = String::new();
            for (j, &(x, y)) in p.iter().enumerate() {
                if j == 0 {
                    let _ = write!(path, "M{:.2},{:.2}", sx(x), sy(y));
                } else if se.step {
                    let _ = write!(path, " H{:.2} V{:.2}", sx(x), sy(y));
                } else {
                    let _ = write!(path, " L{:.2},{:.2}", sx(x), sy(y));
                }
            }
            if se.dots {
                for &(x, y) in &p {
                    let _ = writeln!(
                        s,
                        r#"<circle cx="{:.2}" cy="{:.2}" r="7" fill="none" stroke="{c}" stroke-width="2"/>"#,
                        sx(x),
                        sy(y)
                    );
                }
            } else if !path.is_empty() {
                let _ = writeln!(s, r#"<path d="{path}" fill="none" stroke="{c}" stroke-width="2"/>"#);
            }
            if !se.step && !se.dots {
                for &(x, y) in &p {
                    let _ = writeln!(s, r#"<circle cx="{:.2}" cy="{:.2}" r="3" fill="{c}"/>"#, sx(x), sy(y));
                }
            }
            if let Some(bars) = &se.error_bars {
                for (&(x, _), &(lo, hi)) in se.points.iter().zip(bars) {
                    if x.is_finite() && lo.is_finite() && hi.is_finite() {
                        let _ = writeln!(
                            s,
                            r#"<line x1="{:.2}" y1="{:.2}" x2="{:.2}" y2="{:.2}" stroke="{c}"/>"#,
                            sx(x),
                            sy(lo),
                            sx(x),
                            sy(hi)
                        );
                    }
                }
            }
            let ly = LEGEND_TOP + LEGEND_LINE * i as f64;
            let _ = writeln!(
                s,
                r#"<line x1="{LEFT}" y1="{ly}" x2="{}" y2="{ly}" stroke="{c}" stroke-width="2"/>"#,
                LEFT + 20.0
            );
            let _ = writeln!(
                s,
                r#"<text class="legend" x="{}" y="{}">{}</text>"#,
                LEFT + LEGEND_TEXT_X,
                ly + 4.0,
                escape(&se.label)
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

/// Throughput against frame size: `points` are (frame size, median, min, max) in frames/s.
pub fn throughput_vs_frame_size(title: &str, points: &[(usize, f64, f64, f64)]) -> String {
    LinePlot {
        title: title.to_string(),
        x_label: "frame size (bytes)".into(),
        y_label: "throughput (frames/s)".into(),
        series: vec![Series {
            label: "median, min-max".into(),
            points: points.iter().map(|p| (p.0 as f64, p.1)).collect(),
            error_bars: Some(points.iter().map(|p| (p.2, p.3)).collect()),
            step: false,
            dots: false,
        }],
        y_range: None,
    }
    .to_svg()
}

/// Frame loss rate (%) against offered rate (% of the maximum), a line per direction.
pub fn frame_loss_curve(result: &FrameLossResult) -> String {
    let mut series = Vec::new();
    for (name, pick) in [("forward", 0), ("reverse", 1)] {
        let pts: Vec<(f64, f64)> = result
            .points
            .iter()
            .filter_map(|p| {
                if pick == 0 {
                    p.forward_loss_percent
                } else {
                    p.reverse_loss_percent
                }
                .map(|l| (p.percent_of_max, l))
            })
            .collect();
        if !pts.is_empty() {
            let mut pts = pts;
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            series.push(Series {
                label: name.into(),
                points: pts,
                error_bars: None,
                step: false,
                dots: false,
            });
        }
    }
    LinePlot {
        title: format!("Frame loss rate, frame size {}", result.frame_size),
        x_label: "offered rate (% of maximum)".into(),
        y_label: "frame loss (%)".into(),
        series,
        y_range: None,
    }
    .to_svg()
}

/// CDF of delays (latency or one-way delay), one staircase per recorder; x in milliseconds.
/// Lost frames keep a curve below 1.
pub fn delay_cdf(title: &str, recorders: &[(&str, &DelayRecorder)]) -> String {
    let series = recorders
        .iter()
        .map(|(name, r)| Series {
            label: name.to_string(),
            points: r.cdf_points(2000).into_iter().map(|(ns, f)| (ns as f64 / 1.0e6, f)).collect(),
            error_bars: None,
            step: true,
            dots: false,
        })
        .collect();
    LinePlot {
        title: title.to_string(),
        x_label: "delay (ms)".into(),
        y_label: "fraction of frames".into(),
        series,
        y_range: Some((0.0, 1.0)),
    }
    .to_svg()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover() {
        assert_eq!(nice_ticks(0.0, 10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(nice_ticks(5.0, 5.0, 5), vec![5.0]);
        assert_eq!(nice_ticks(f64::NAN, 1.0, 5).len(), 1);
    }

    #[test]
    fn the_legend_holds_every_name_whole() {
        let series = |label: &str| Series {
            label: label.into(),
            points: vec![(64.0, 1.0), (1518.0, 2.0)],
            ..Series::default()
        };
        let plot = |labels: &[&str]| LinePlot {
            series: labels.iter().map(|l| series(l)).collect(),
            ..LinePlot::default()
        };
        let size = |svg: &str| -> (f64, f64) {
            let num = |k: &str| {
                svg.split(&format!(" {k}=\""))
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            };
            (num("width"), num("height"))
        };
        let short = plot(&["router4"]).to_svg();
        assert_eq!(size(&short), (W, LEGEND_TOP + LEGEND_LINE));
        let long = "nat64-tayga-with-a-rather-long-descriptive-name-of-60-chars!";
        assert_eq!(long.len(), 60);
        let svg = plot(&[
            "router4",
            long,
            "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW",
        ])
        .to_svg();
        let (w, h) = size(&svg);
        assert_eq!(h, LEGEND_TOP + 3.0 * LEGEND_LINE);
        // 76 W of 0.95 em at 12 px: 866 px of text after the swatch.
        assert!(w >= LEFT + LEGEND_TEXT_X + 866.0, "{w}");
        assert!(svg.contains(&format!(">{long}</text>")), "the name whole, uncut");
        assert!(
            text_width(long, 12.0) < W - LEFT - LEGEND_TEXT_X - RIGHT,
            "60 characters fit the plain width"
        );
    }

    #[test]
    fn empty_plot_is_still_svg() {
        let s = LinePlot::default().to_svg();
        assert!(s.starts_with("<?xml") && s.trim_end().ends_with("</svg>"));
    }
}
