//! Figures for a paper: the one plotting path of ftlab. The CLI's sweep plots
//! (`[[plot]]`, `[[lines]]`), `ftlab plot`, the experiments' figures, the HTML
//! report ([`crate::html`]) and the Python package all describe a [`Figure`]
//! and draw it here.
//!
//! A figure is sized for print: 3.5 inches wide (one column of a two-column
//! paper), 7 inches when its bars would not fit, and the SVG's user unit is
//! one point at that size, so text is at least 7 pt where it is printed
//! ([`MIN_PT`]). Axes show SI-scaled units (µs → ms → s, pages → 10³ pages),
//! labels come from the field dictionary ([`crate::fields`]) rather than raw
//! keys, legends have titles and sit above the plot where they cover no data,
//! and series are told apart without colour too: the palette is Okabe and
//! Ito's colour-blind-safe one, lines add dashes and markers, bars add hatches.
//!
//! [`Figure::write`] writes SVG, PNG (300 dpi, resvg) or PDF (svg2pdf) by
//! the file's extension, all from the same SVG.
//!
//! The SVG follows conventions a checker can read (experiments/check_figures.py
//! renders every committed figure in headless Chromium): the root has class
//! `ftlab-figure`, the plot area is `rect.plot-area`, each series is a
//! `g.series` with its name in `data-name`, the legend is `g.legend`.

use std::fmt::Write as _;
use std::path::Path;

use crate::LabError;

/// The smallest text, in points at print size.
pub const MIN_PT: f64 = 7.0;
/// One column, points.
const COLUMN: f64 = 252.0;
/// Two columns, points.
const WIDE: f64 = 504.0;
const HEIGHT: f64 = 172.8;
const FS_TICK: f64 = 7.5;
const FS_LABEL: f64 = 8.0;
const FS_TITLE: f64 = 8.5;
/// Okabe and Ito's palette (yellow last: it is faint on white).
const COLOURS: [&str; 8] = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"];
const DASHES: [&str; 6] = ["", "5 2", "1.5 1.5", "6 2 1.5 2", "3 3", "8 2 1.5 2 1.5 2"];
const MARKERS: usize = 7;
/// Hatches of bar series after the first (`None`: plain).
const HATCHES: [Option<&str>; 6] =
    [None, Some("M0,4 L4,0"), Some("M0,0 L4,4"), Some("M0,2 H4"), Some("M2,0 V4"), Some("M0,4 L4,0 M0,0 L4,4")];

/// How an axis maps values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scale {
    #[default]
    Linear,
    /// Decades (values must be positive; others are left out).
    Log,
    /// A percentile axis: the value `n` is the percentile with `n` nines
    /// (0: 0 %, 1: 90 %, 2: 99 %, ...), so the tail gets as much room as the
    /// body. See [`nines`].
    Nines,
}

/// An axis: its name, the unit of its values, its scale and range.
#[derive(Debug, Clone, Default)]
pub struct Axis {
    /// What is measured, without the unit ("write response, p99").
    pub label: String,
    /// The values' unit as the report gives it (`µs`, `pages`, `s`, `ratio`,
    /// ...; see [`crate::fields`]); the axis scales it (SI prefixes).
    pub unit: Option<String>,
    pub scale: Scale,
    /// Shown range (default: the data's, from zero for linear axes).
    pub range: Option<[f64; 2]>,
}

impl Axis {
    pub fn new(label: impl Into<String>, unit: Option<&str>) -> Axis {
        Axis { label: label.into(), unit: unit.map(str::to_owned), ..Axis::default() }
    }

    pub fn scale(mut self, scale: Scale) -> Axis {
        self.scale = scale;
        self
    }

    pub fn range(mut self, range: Option<[f64; 2]>) -> Axis {
        self.range = range;
        self
    }
}

/// One line: its name and its points, in x order.
#[derive(Debug, Clone, Default)]
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Draw a marker at every point and no line (measured points beside a
    /// model's line).
    pub markers_only: bool,
}

/// What a figure shows.
#[derive(Debug, Clone)]
pub enum Body {
    /// Grouped bars: `groups` along x, one bar per series in each;
    /// `values[group][series]` (None: no bar). With `stacked`, each group is
    /// one bar of the series stacked bottom up.
    Bars { groups: Vec<String>, series: Vec<String>, values: Vec<Vec<Option<f64>>>, stacked: bool },
    /// Lines; with `steps`, each value holds until the next point (a CDF).
    Lines { lines: Vec<Line>, steps: bool },
}

/// A figure: title, axes, legend title and what it shows.
#[derive(Debug, Clone)]
pub struct Figure {
    /// Prefix of the SVG's element ids (hatch patterns): unique on a page that
    /// holds several figures.
    pub id: String,
    pub title: Option<String>,
    pub x: Axis,
    pub y: Axis,
    /// The legend's title (what the series are: "FTL", "workload").
    pub legend: Option<String>,
    pub body: Body,
    /// Vertical reference lines at these x values (phase ends), grey.
    pub rules: Vec<f64>,
}

/// Where fraction `q` of the requests falls on a percentile axis:
/// `log10(1 / (1 - q))`, capped at `cap` nines (for `q` = 1).
pub fn nines(q: f64, cap: f64) -> f64 {
    if q >= 1.0 {
        cap
    } else {
        (-(1.0 - q).log10()).min(cap)
    }
}

/// `s` with XML's special characters escaped.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Estimated width of `s` at `size` points (DejaVu Sans, the widest common
/// sans-serif: its average glyph is about 0.6 em).
fn text_width(s: &str, size: f64) -> f64 {
    s.chars()
        .map(|c| match c {
            'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | ' ' => 0.33,
            'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '-' | '/' => 0.45,
            'm' | 'w' | 'M' | 'W' | '%' => 0.92,
            c if c.is_uppercase() => 0.74,
            _ => 0.63,
        })
        .sum::<f64>()
        * size
}

/// `text` broken into lines of at most `width` points.
fn wrap(text: &str, size: f64, width: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if text_width(&format!("{line} {word}"), size) <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_owned()),
        }
    }
    lines
}

/// How an axis shows its unit: values are divided by `factor` and the unit
/// shown is `unit` (None: a bare number).
#[derive(Debug, Clone, PartialEq)]
struct Shown {
    factor: f64,
    unit: Option<String>,
}

/// Time units and their length in seconds.
const TIME: [(&str, f64); 4] = [("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0)];

fn time_unit(unit: &str) -> Option<f64> {
    match unit {
        "us" | "µs" => Some(1e-6),
        "ns" => Some(1e-9),
        "ms" => Some(1e-3),
        "s" => Some(1.0),
        _ => None,
    }
}

/// Units that are not counts: never given a power of ten.
fn unscaled(unit: &str) -> bool {
    unitless(unit) || matches!(unit, "%" | "x" | "MB/s" | "°C")
}

/// Units an axis title does not name: the values are bare numbers.
fn unitless(unit: &str) -> bool {
    matches!(unit, "ratio" | "fraction" | "name" | "text" | "integer" | "")
}

/// The SI form of `unit` for values up to `top` (absolute).
fn si(unit: Option<&str>, top: f64) -> Shown {
    let Some(unit) = unit else { return Shown { factor: 1.0, unit: None } };
    // The report's rates of requests (`iops`).
    let unit = if unit == "1/s" { "requests/s" } else { unit };
    if let Some(sec) = time_unit(unit) {
        let top_s = top * sec;
        let (name, len) = TIME.iter().rev().find(|(_, len)| top_s >= *len).copied().unwrap_or(TIME[0]);
        return Shown { factor: len / sec, unit: Some(name.to_owned()) };
    }
    if unit == "bytes" || unit == "B" {
        let (name, f) =
            [("GB", 1e9), ("MB", 1e6), ("kB", 1e3)].into_iter().find(|(_, f)| top >= *f).unwrap_or(("B", 1.0));
        return Shown { factor: f, unit: Some(name.to_owned()) };
    }
    if unscaled(unit) {
        return Shown { factor: 1.0, unit: (!unitless(unit)).then(|| unit.to_owned()) };
    }
    match [(1e9, "10⁹"), (1e6, "10⁶"), (1e3, "10³")].into_iter().find(|(f, _)| top >= *f * 1.0) {
        Some((f, p)) => Shown { factor: f, unit: Some(format!("{p} {unit}")) },
        None => Shown { factor: 1.0, unit: Some(unit.to_owned()) },
    }
}

/// The smallest of 1, 2, 2.5 or 5 times a power of ten at or above `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw > 0.0 && raw.is_finite()) {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * p).find(|s| *s >= raw * (1.0 - 1e-9)).unwrap_or(10.0 * p)
}

/// Decimals a tick label needs for ticks `step` apart.
fn decimals(step: f64) -> usize {
    let mut d = 0usize;
    while d < 9 && ((step * 10f64.powi(d as i32)).round() - step * 10f64.powi(d as i32)).abs() > 1e-6 {
        d += 1;
    }
    d
}

/// `v` with at most three decimals, no trailing zeros.
fn trimmed(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// `v` with `d` decimals, no "-0".
fn fixed(v: f64, d: usize) -> String {
    let s = format!("{v:.d$}");
    if s.trim_start_matches('-').chars().all(|c| c == '0' || c == '.') {
        s.trim_start_matches('-').to_owned()
    } else {
        s
    }
}

/// An axis fitted to its data: range, ticks and their labels.
struct Fitted {
    lo: f64,
    hi: f64,
    scale: Scale,
    ticks: Vec<(f64, String)>,
    /// The title drawn beside the axis: label and shown unit.
    title: String,
}

impl Fitted {
    /// `axis` fitted to `values`, with about `n` ticks.
    fn new(axis: &Axis, values: &[f64], n: usize) -> Fitted {
        let ok: Vec<f64> =
            values.iter().copied().filter(|v| v.is_finite() && (axis.scale != Scale::Log || *v > 0.0)).collect();
        let (mut lo, mut hi) = ok.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(*v), b.max(*v)));
        if let Some([a, b]) = axis.range {
            (lo, hi) = (a, b);
        }
        let unit = axis.unit.as_deref();
        match axis.scale {
            Scale::Nines => {
                // Nine nines is past the last of a billion requests.
                let hi = if hi.is_finite() { hi.ceil().clamp(1.0, 9.0) } else { 1.0 };
                let ticks = (0..=hi as u32)
                    .map(|t| {
                        let label = match t {
                            0 => "0%".to_owned(),
                            1 => "90%".to_owned(),
                            2 => "99%".to_owned(),
                            n => format!("99.{}%", "9".repeat(n as usize - 2)),
                        };
                        (f64::from(t), label)
                    })
                    .collect();
                Fitted { lo: 0.0, hi, scale: Scale::Nines, ticks, title: axis.label.clone() }
            }
            Scale::Log => {
                if !lo.is_finite() || lo <= 0.0 {
                    (lo, hi) = (1.0, 10.0);
                }
                let (a, b) = (lo.log10().floor() as i32, (hi.log10().ceil() as i32).max(lo.log10().floor() as i32 + 1));
                let every = ((b - a) as usize).div_ceil(n.max(2) + 2).max(1);
                let ticks = (a..=b)
                    .filter(|e| ((e - a) as usize).is_multiple_of(every))
                    .map(|e| {
                        let v = 10f64.powi(e);
                        (v, log_tick(v, unit))
                    })
                    .collect();
                let title = match unit.filter(|u| time_unit(u).is_none() && !unscaled(u)) {
                    Some(u) => format!("{} ({u})", axis.label),
                    None => axis.label.clone(),
                };
                Fitted { lo: 10f64.powi(a), hi: 10f64.powi(b), scale: Scale::Log, ticks, title }
            }
            Scale::Linear => {
                if !lo.is_finite() {
                    (lo, hi) = (0.0, 1.0);
                }
                if axis.range.is_none() {
                    lo = lo.min(0.0);
                    hi = hi.max(0.0);
                }
                if hi <= lo {
                    hi = lo + 1.0;
                }
                let shown = si(unit, lo.abs().max(hi.abs()));
                let (slo, shi) = (lo / shown.factor, hi / shown.factor);
                let step = nice_step((shi - slo) / n.max(1) as f64);
                if axis.range.is_none() {
                    lo = (slo / step).floor() * step * shown.factor;
                    hi = (shi / step - 1e-9).ceil() * step * shown.factor;
                }
                let d = decimals(step);
                let first = (lo / shown.factor / step - 1e-9).ceil() as i64;
                let last = (hi / shown.factor / step + 1e-9).floor() as i64;
                let ticks = (first..=last)
                    .map(|i| {
                        let s = i as f64 * step;
                        (s * shown.factor, fixed(s, d))
                    })
                    .collect();
                let title = match &shown.unit {
                    Some(u) if !axis.label.is_empty() => format!("{} ({u})", axis.label),
                    Some(u) => u.clone(),
                    None => axis.label.clone(),
                };
                Fitted { lo, hi, scale: Scale::Linear, ticks, title }
            }
        }
    }

    /// Where `v` falls, 0 to 1.
    fn frac(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Log => (v.max(self.lo * 1e-3).log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10()),
            _ => (v - self.lo) / (self.hi - self.lo),
        }
    }

    fn widest_tick(&self) -> f64 {
        self.ticks.iter().map(|(_, l)| text_width(l, FS_TICK)).fold(0.0, f64::max)
    }
}

/// A decade tick's label with its unit scaled (`1 ms`, `10k`).
fn log_tick(v: f64, unit: Option<&str>) -> String {
    if unit.and_then(time_unit).is_some() {
        let shown = si(unit, v);
        return format!("{} {}", fixed(v / shown.factor, 0), shown.unit.unwrap_or_default());
    }
    for (f, p) in [(1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if v >= f {
            return format!("{}{p}", fixed(v / f, 0));
        }
    }
    if v >= 1.0 {
        fixed(v, 0)
    } else {
        let d = (-v.log10()).round().max(0.0) as usize;
        fixed(v, d)
    }
}

/// The marker `k` centred on `(x, y)`, `r` points across.
fn marker(k: usize, x: f64, y: f64, colour: &str) -> String {
    let r = 2.2;
    match k % MARKERS {
        0 => format!("<circle cx=\"{x:.2}\" cy=\"{y:.2}\" r=\"{r}\" fill=\"{colour}\"/>"),
        1 => format!(
            "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"{}\" height=\"{}\" fill=\"{colour}\"/>",
            x - r,
            y - r,
            2.0 * r,
            2.0 * r
        ),
        2 => format!(
            "<path d=\"M{x:.2},{:.2} L{:.2},{:.2} L{:.2},{:.2} Z\" fill=\"{colour}\"/>",
            y - r * 1.2,
            x + r * 1.1,
            y + r * 0.9,
            x - r * 1.1,
            y + r * 0.9
        ),
        3 => format!(
            "<path d=\"M{x:.2},{:.2} L{:.2},{y:.2} L{x:.2},{:.2} L{:.2},{y:.2} Z\" fill=\"{colour}\"/>",
            y - r * 1.3,
            x + r * 1.3,
            y + r * 1.3,
            x - r * 1.3
        ),
        4 => format!(
            "<circle cx=\"{x:.2}\" cy=\"{y:.2}\" r=\"{r}\" fill=\"white\" stroke=\"{colour}\" stroke-width=\"1\"/>"
        ),
        5 => format!(
            "<path d=\"M{:.2},{:.2} L{:.2},{:.2} M{:.2},{:.2} L{:.2},{:.2}\" stroke=\"{colour}\" stroke-width=\"1.2\"/>",
            x - r,
            y - r,
            x + r,
            y + r,
            x - r,
            y + r,
            x + r,
            y - r
        ),
        _ => format!(
            "<path d=\"M{x:.2},{:.2} L{:.2},{:.2} L{:.2},{:.2} Z\" fill=\"white\" stroke=\"{colour}\" stroke-width=\"1\"/>",
            y + r * 1.2,
            x + r * 1.1,
            y - r * 0.9,
            x - r * 1.1,
            y - r * 0.9
        ),
    }
}

/// A legend entry's swatch and name, laid out.
struct Entry {
    name: String,
    width: f64,
}

impl Figure {
    /// A figure of grouped bars (see [`Body::Bars`]).
    pub fn bars(
        id: &str,
        x: Axis,
        y: Axis,
        groups: Vec<String>,
        series: Vec<String>,
        values: Vec<Vec<Option<f64>>>,
    ) -> Figure {
        Figure {
            id: id.to_owned(),
            title: None,
            x,
            y,
            legend: None,
            body: Body::Bars { groups, series, values, stacked: false },
            rules: Vec::new(),
        }
    }

    /// A figure of lines (see [`Body::Lines`]).
    pub fn lines(id: &str, x: Axis, y: Axis, lines: Vec<Line>) -> Figure {
        Figure {
            id: id.to_owned(),
            title: None,
            x,
            y,
            legend: None,
            body: Body::Lines { lines, steps: false },
            rules: Vec::new(),
        }
    }

    pub fn title(mut self, title: Option<String>) -> Figure {
        self.title = title.filter(|t| !t.is_empty());
        self
    }

    pub fn rules(mut self, rules: Vec<f64>) -> Figure {
        self.rules = rules;
        self
    }

    pub fn legend(mut self, legend: Option<String>) -> Figure {
        self.legend = legend.filter(|t| !t.is_empty());
        self
    }

    /// Draw bars stacked (one bar per group) or lines as steps.
    pub fn stacked_or_steps(mut self, on: bool) -> Figure {
        match &mut self.body {
            Body::Bars { stacked, .. } => *stacked = on,
            Body::Lines { steps, .. } => *steps = on,
        }
        self
    }

    /// The series that have data, with their index (colour, dash, marker).
    fn shown_series(&self) -> Vec<(usize, String)> {
        match &self.body {
            Body::Bars { series, values, .. } => series
                .iter()
                .enumerate()
                .filter(|(j, _)| values.iter().any(|g| g.get(*j).copied().flatten().is_some_and(f64::is_finite)))
                .map(|(j, s)| (j, s.clone()))
                .collect(),
            Body::Lines { lines, .. } => lines
                .iter()
                .enumerate()
                .filter(|(_, l)| l.points.iter().any(|(x, y)| x.is_finite() && y.is_finite()))
                .map(|(j, l)| (j, l.name.clone()))
                .collect(),
        }
    }

    /// The figure as a standalone SVG document.
    pub fn svg(&self) -> String {
        self.render()
    }

    /// Writes the figure to `path`: SVG, PNG (300 dpi) or PDF by its extension.
    pub fn write(&self, path: &Path) -> Result<(), LabError> {
        let fail = |problem: String| LabError::Figure { path: path.to_path_buf(), problem };
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
        let svg = self.svg();
        let bytes = match ext.as_str() {
            "svg" => svg.into_bytes(),
            "png" => to_png(&svg, 300.0).map_err(fail)?,
            "pdf" => to_pdf(&svg).map_err(fail)?,
            other => {
                return Err(fail(format!("cannot write a figure as `.{other}`; name the file .svg, .png or .pdf")))
            }
        };
        std::fs::write(path, bytes).map_err(|e| fail(e.to_string()))
    }

    fn render(&self) -> String {
        let shown = self.shown_series();
        let (xs, ys): (Vec<f64>, Vec<f64>) = match &self.body {
            Body::Bars { values, stacked, .. } => {
                let ys = if *stacked {
                    values.iter().map(|g| g.iter().flatten().filter(|v| v.is_finite()).sum()).collect()
                } else {
                    values.iter().flatten().flatten().copied().collect()
                };
                (Vec::new(), ys)
            }
            Body::Lines { lines, .. } => lines.iter().flat_map(|l| l.points.iter().copied()).unzip(),
        };
        let bars = matches!(self.body, Body::Bars { .. });
        let groups: &[String] = match &self.body {
            Body::Bars { groups, .. } => groups,
            Body::Lines { .. } => &[],
        };
        let nbars = match &self.body {
            Body::Bars { stacked: true, groups, .. } => groups.len(),
            Body::Bars { groups, .. } => groups.len() * shown.len().max(1),
            Body::Lines { .. } => 0,
        };
        // Wide when the bars would be thinner than 5 pt or the group names do
        // not fit even slanted.
        let widest_group = groups.iter().map(|g| text_width(g, FS_TICK)).fold(0.0, f64::max);
        let width = if nbars > 36 || (bars && groups.len() > 8 && widest_group > 40.0) { WIDE } else { COLUMN };
        let y = Fitted::new(&self.y, &ys, 5);
        let x = (!bars).then(|| Fitted::new(&self.x, &xs, if width > COLUMN { 8 } else { 5 }));

        // Top: title, then the legend's rows.
        let mut top = 4.0;
        // Bold glyphs are about a tenth wider.
        let title_lines = self.title.as_deref().map(|t| wrap(t, FS_TITLE * 1.1, width - 8.0)).unwrap_or_default();
        top += title_lines.len() as f64 * (FS_TITLE + 2.0);
        let entries: Vec<Entry> = shown
            .iter()
            .map(|(_, name)| Entry { name: name.clone(), width: 14.0 + text_width(name, FS_TICK) + 8.0 })
            .collect();
        let legend_title = self.legend.as_deref().map(|t| format!("{t}:"));
        let want_legend = shown.len() > 1 || (!bars && !shown.is_empty());
        let mut rows: Vec<Vec<usize>> = Vec::new();
        if want_legend {
            let mut used = legend_title.as_deref().map_or(0.0, |t| text_width(t, FS_TICK * 1.1) + 6.0);
            rows.push(Vec::new());
            for (i, e) in entries.iter().enumerate() {
                let row = rows.last().map_or(0, Vec::len);
                if row > 0 && used + e.width > width - 8.0 {
                    rows.push(Vec::new());
                    used = legend_title.as_deref().map_or(0.0, |t| text_width(t, FS_TICK * 1.1) + 6.0);
                }
                used += e.width;
                if let Some(r) = rows.last_mut() {
                    r.push(i);
                }
            }
        }
        let legend_top = top + 2.0;
        top = legend_top + rows.len() as f64 * (FS_TICK + 4.0) + 4.0;

        let mut left = 4.0 + FS_LABEL + 4.0 + y.widest_tick() + 5.0;
        let right = match &x {
            Some(x) => x.ticks.last().map_or(6.0, |(_, l)| (text_width(l, FS_TICK) / 2.0 + 2.0).max(6.0)),
            None => 6.0,
        };
        // Bottom: tick labels (group names slanted when they do not fit), axis title.
        let slant = bars && widest_group > (width - left - right) / groups.len().max(1) as f64 * 0.95;
        let tick_h = if slant { widest_group * 0.643 + FS_TICK * 0.766 + 2.0 } else { FS_TICK + 6.0 };
        let x_title = if bars { self.x.label.clone() } else { x.as_ref().map(|x| x.title.clone()).unwrap_or_default() };
        // The x title in as many lines as the figure's width needs.
        let x_lines = wrap(&x_title, FS_LABEL, width - 12.0);
        let bottom =
            3.0 + tick_h + if x_lines.is_empty() { 2.0 } else { x_lines.len() as f64 * (FS_LABEL + 2.0) + 2.0 };
        let height = (top + bottom + 100.0).max(HEIGHT);
        let plot_h = height - top - bottom;
        // The y title in as many lines as the plot's height needs.
        let y_lines = wrap(&y.title, FS_LABEL, plot_h);
        left += y_lines.len().saturating_sub(1) as f64 * (FS_LABEL + 2.0);
        // The first slanted group name must not leave the figure on the left.
        if slant {
            let first = groups.first().map_or(0.0, |g| text_width(g, FS_TICK));
            for _ in 0..4 {
                let slot = (width - left - right) / groups.len().max(1) as f64;
                left = left.max(first * 0.766 + FS_TICK * 0.3 + 3.0 - slot / 2.0);
            }
        }
        let plot_w = width - left - right;
        let slot = plot_w / groups.len().max(1) as f64;
        // Label every k-th x tick, so labels keep apart.
        let x = x.map(|mut x| {
            let n = x.ticks.len().max(2) - 1;
            let widest = x.widest_tick() + 4.0;
            let every = (1..=n).find(|k| plot_w / n as f64 * *k as f64 >= widest).unwrap_or(n);
            if every > 1 {
                x.ticks =
                    x.ticks.into_iter().enumerate().filter(|(i, _)| i.is_multiple_of(every)).map(|(_, t)| t).collect();
            }
            x
        });
        let (x0, y0) = (left, top);
        let py = |v: f64| y0 + plot_h * (1.0 - y.frac(v).clamp(-0.02, 1.02));

        let mut s = String::new();
        let id = esc(&self.id);
        let label = esc(self.title.as_deref().unwrap_or(&y.title));
        let _ = write!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"ftlab-figure\" id=\"{id}\" width=\"{}in\" height=\"{}in\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"{label}\" font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\"><title>{label}</title>",
            trimmed(width / 72.0),
            trimmed(height / 72.0),
        );
        // Hatches for the bar series after the first.
        if bars {
            s.push_str("<defs>");
            for (k, h) in HATCHES.iter().enumerate() {
                if let Some(d) = h {
                    let _ = write!(
                        s,
                        "<pattern id=\"{id}-h{k}\" patternUnits=\"userSpaceOnUse\" width=\"4\" height=\"4\"><path d=\"{d}\" stroke=\"#000\" stroke-opacity=\"0.55\" stroke-width=\"0.6\"/></pattern>"
                    );
                }
            }
            s.push_str("</defs>");
        }
        let _ = write!(s, "<rect width=\"{width}\" height=\"{height}\" fill=\"white\"/>");
        for (i, line) in title_lines.iter().enumerate() {
            let _ = write!(
                s,
                "<text x=\"{:.2}\" y=\"{:.2}\" font-size=\"{FS_TITLE}\" font-weight=\"bold\" text-anchor=\"middle\">{}</text>",
                width / 2.0,
                4.0 + FS_TITLE * 0.8 + i as f64 * (FS_TITLE + 2.0),
                esc(line)
            );
        }
        // Grid and y ticks.
        for (v, l) in &y.ticks {
            let yy = py(*v);
            let _ = write!(
                s,
                "<line x1=\"{x0:.2}\" x2=\"{:.2}\" y1=\"{yy:.2}\" y2=\"{yy:.2}\" stroke=\"#e4e4e4\" stroke-width=\"0.5\"/><text x=\"{:.2}\" y=\"{:.2}\" font-size=\"{FS_TICK}\" text-anchor=\"end\">{}</text>",
                x0 + plot_w,
                x0 - 4.0,
                yy + FS_TICK * 0.3,
                esc(l)
            );
        }
        for (i, line) in y_lines.iter().enumerate() {
            let _ = write!(
                s,
                "<text transform=\"translate({:.2},{:.2}) rotate(-90)\" font-size=\"{FS_LABEL}\" text-anchor=\"middle\">{}</text>",
                4.0 + FS_LABEL * 0.8 + i as f64 * (FS_LABEL + 2.0),
                y0 + plot_h / 2.0,
                esc(line)
            );
        }
        if let Some(x) = &x {
            let px = |v: f64| x0 + plot_w * x.frac(v);
            for (v, l) in &x.ticks {
                let xx = px(*v);
                let _ = write!(
                    s,
                    "<line x1=\"{xx:.2}\" x2=\"{xx:.2}\" y1=\"{y0:.2}\" y2=\"{:.2}\" stroke=\"#e4e4e4\" stroke-width=\"0.5\"/><text x=\"{xx:.2}\" y=\"{:.2}\" font-size=\"{FS_TICK}\" text-anchor=\"middle\">{}</text>",
                    y0 + plot_h,
                    y0 + plot_h + 5.5 + FS_TICK * 0.8,
                    esc(l)
                );
            }
        }
        for (i, line) in x_lines.iter().enumerate() {
            // Under the plot's middle, moved in where it would leave the figure.
            let half = (text_width(line, FS_LABEL) / 2.0 + 4.0).min(width / 2.0);
            let _ = write!(
                s,
                "<text x=\"{:.2}\" y=\"{:.2}\" font-size=\"{FS_LABEL}\" text-anchor=\"middle\">{}</text>",
                (x0 + plot_w / 2.0).clamp(half, width - half),
                height - 4.0 - (x_lines.len() - 1 - i) as f64 * (FS_LABEL + 2.0),
                esc(line)
            );
        }
        // The data, clipped to the plot area.
        let _ = write!(
            s,
            "<clipPath id=\"{id}-clip\"><rect x=\"{x0:.2}\" y=\"{:.2}\" width=\"{plot_w:.2}\" height=\"{:.2}\"/></clipPath>",
            y0 - 3.0,
            plot_h + 3.0
        );
        match &self.body {
            Body::Bars { values, stacked, .. } => {
                let base = py(y.lo.max(0.0).min(y.hi));
                for (g, name) in groups.iter().enumerate() {
                    let gx = x0 + slot * g as f64;
                    let ly = y0 + plot_h + 4.0 + FS_TICK * 0.8;
                    if slant {
                        let cx = gx + slot / 2.0;
                        let _ = write!(
                            s,
                            "<text x=\"{cx:.2}\" y=\"{ly:.2}\" font-size=\"{FS_TICK}\" text-anchor=\"end\" transform=\"rotate(-40 {cx:.2} {ly:.2})\">{}</text>",
                            esc(name)
                        );
                    } else {
                        let _ = write!(
                            s,
                            "<text x=\"{:.2}\" y=\"{ly:.2}\" font-size=\"{FS_TICK}\" text-anchor=\"middle\">{}</text>",
                            gx + slot / 2.0,
                            esc(name)
                        );
                    }
                }
                let n = if *stacked { 1 } else { shown.len().max(1) };
                let bw = slot * 0.8 / n as f64;
                for (k, (j, name)) in shown.iter().enumerate() {
                    let colour = COLOURS[k % COLOURS.len()];
                    let hatch = HATCHES[k % HATCHES.len()];
                    let _ = write!(s, "<g class=\"series\" data-name=\"{}\" clip-path=\"url(#{id}-clip)\">", esc(name));
                    for (g, row) in values.iter().enumerate() {
                        let Some(v) = row.get(*j).copied().flatten().filter(|v| v.is_finite()) else { continue };
                        let below: f64 =
                            if *stacked { row[..*j].iter().flatten().filter(|v| v.is_finite()).sum() } else { 0.0 };
                        let bx = x0 + slot * g as f64 + slot * 0.1 + if *stacked { 0.0 } else { bw * k as f64 };
                        let (a, b) = (py(below + v), py(below));
                        let (top_y, mut h) = (a.min(b), (a - b).abs());
                        // A zero is drawn as a hairline on the axis, not left out.
                        if h < 0.75 {
                            h = 0.75;
                        }
                        let top_y = if *stacked || v >= 0.0 { top_y.min(base.max(b) - h) } else { top_y };
                        let _ = write!(
                            s,
                            "<rect x=\"{bx:.2}\" y=\"{top_y:.2}\" width=\"{:.2}\" height=\"{h:.2}\" fill=\"{colour}\" stroke=\"#222\" stroke-width=\"0.3\"><title>{}: {}</title></rect>",
                            (bw * 0.92).max(0.8),
                            esc(&groups[g]),
                            esc(&human(v, self.y.unit.as_deref()))
                        );
                        if let Some(_d) = hatch {
                            let _ = write!(
                                s,
                                "<rect x=\"{bx:.2}\" y=\"{top_y:.2}\" width=\"{:.2}\" height=\"{h:.2}\" fill=\"url(#{id}-h{})\"/>",
                                (bw * 0.92).max(0.8),
                                k % HATCHES.len()
                            );
                        }
                    }
                    s.push_str("</g>");
                }
                let _ = write!(
                    s,
                    "<line x1=\"{x0:.2}\" x2=\"{:.2}\" y1=\"{base:.2}\" y2=\"{base:.2}\" stroke=\"#444\" stroke-width=\"0.6\"/>",
                    x0 + plot_w
                );
            }
            Body::Lines { lines, steps } => {
                let Some(x) = &x else { unreachable!("a line figure has an x axis") };
                let px = |v: f64| x0 + plot_w * x.frac(v).clamp(-0.02, 1.02);
                for &r in &self.rules {
                    let _ = write!(
                        s,
                        "<line x1=\"{0:.2}\" x2=\"{0:.2}\" y1=\"{y0:.2}\" y2=\"{1:.2}\" stroke=\"#999\" stroke-width=\"0.6\"/>",
                        px(r),
                        y0 + plot_h
                    );
                }
                for (k, (j, name)) in shown.iter().enumerate() {
                    let colour = COLOURS[k % COLOURS.len()];
                    let dash = DASHES[k % DASHES.len()];
                    let pts: Vec<(f64, f64)> = lines[*j]
                        .points
                        .iter()
                        .filter(|(a, b)| {
                            a.is_finite()
                                && b.is_finite()
                                && (x.scale != Scale::Log || *a > 0.0)
                                && (y.scale != Scale::Log || *b > 0.0)
                        })
                        .map(|&(a, b)| (px(a), py(b)))
                        .collect();
                    let mut d = String::new();
                    for (i, &(a, b)) in pts.iter().enumerate() {
                        if i == 0 {
                            let _ = write!(d, "M{a:.2},{b:.2}");
                        } else if *steps {
                            let _ = write!(d, " H{a:.2} V{b:.2}");
                        } else {
                            let _ = write!(d, " L{a:.2},{b:.2}");
                        }
                    }
                    if pts.len() == 1 {
                        let _ = write!(d, " h0.01");
                    }
                    let only = lines[*j].markers_only;
                    let _ = write!(s, "<g class=\"series\" data-name=\"{}\" clip-path=\"url(#{id}-clip)\">", esc(name));
                    if !only {
                        let _ = write!(
                            s,
                            "<path d=\"{d}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.2\" stroke-linejoin=\"round\"{}/>",
                            if dash.is_empty() { String::new() } else { format!(" stroke-dasharray=\"{dash}\"") }
                        );
                    }
                    // Up to eight markers a line, spread along it and staggered
                    // between lines so they do not sit on each other.
                    let every = if only { 1 } else { pts.len().div_ceil(8).max(1) };
                    let offset =
                        if only { 0 } else { (k * every / shown.len().max(1)).min(pts.len().saturating_sub(1)) };
                    for &(a, b) in pts.iter().skip(offset).step_by(every) {
                        s.push_str(&marker(k, a, b, colour));
                    }
                    s.push_str("</g>");
                }
            }
        }
        let _ = write!(
            s,
            "<rect class=\"plot-area\" x=\"{x0:.2}\" y=\"{y0:.2}\" width=\"{plot_w:.2}\" height=\"{plot_h:.2}\" fill=\"none\" stroke=\"#444\" stroke-width=\"0.6\"/>"
        );
        // The legend, above the plot.
        if !rows.is_empty() {
            s.push_str("<g class=\"legend\">");
            for (r, row) in rows.iter().enumerate() {
                let ly = legend_top + r as f64 * (FS_TICK + 4.0) + FS_TICK * 0.8;
                let mut lx = 4.0;
                if let Some(t) = &legend_title {
                    if r == 0 {
                        let _ = write!(
                            s,
                            "<text class=\"legend-title\" x=\"{lx:.2}\" y=\"{ly:.2}\" font-size=\"{FS_TICK}\" font-weight=\"bold\">{}</text>",
                            esc(t)
                        );
                    }
                    lx += text_width(t, FS_TICK * 1.1) + 6.0;
                }
                for &i in row {
                    let colour = COLOURS[i % COLOURS.len()];
                    let sy = ly - FS_TICK * 0.35;
                    if bars {
                        let _ = write!(
                            s,
                            "<rect x=\"{lx:.2}\" y=\"{:.2}\" width=\"10\" height=\"7\" fill=\"{colour}\" stroke=\"#222\" stroke-width=\"0.3\"/>",
                            sy - 3.5
                        );
                        if HATCHES[i % HATCHES.len()].is_some() {
                            let _ = write!(
                                s,
                                "<rect x=\"{lx:.2}\" y=\"{:.2}\" width=\"10\" height=\"7\" fill=\"url(#{id}-h{})\"/>",
                                sy - 3.5,
                                i % HATCHES.len()
                            );
                        }
                    } else {
                        let dash = DASHES[i % DASHES.len()];
                        let only = match &self.body {
                            Body::Lines { lines, .. } => lines.get(shown[i].0).is_some_and(|l| l.markers_only),
                            Body::Bars { .. } => false,
                        };
                        if !only {
                            let _ = write!(
                                s,
                                "<path d=\"M{lx:.2},{sy:.2} h12\" stroke=\"{colour}\" stroke-width=\"1.2\"{}/>",
                                if dash.is_empty() { String::new() } else { format!(" stroke-dasharray=\"{dash}\"") }
                            );
                        }
                        s.push_str(&marker(i, lx + 6.0, sy, colour));
                    }
                    let _ = write!(
                        s,
                        "<text x=\"{:.2}\" y=\"{ly:.2}\" font-size=\"{FS_TICK}\">{}</text>",
                        lx + 14.0,
                        esc(&entries[i].name)
                    );
                    lx += entries[i].width;
                }
            }
            s.push_str("</g>");
        }
        s.push_str("</svg>\n");
        s
    }
}

/// `v` in its SI-scaled unit, four significant digits at most (`450 ms`).
fn human(v: f64, unit: Option<&str>) -> String {
    let shown = si(unit, v.abs());
    let x = v / shown.factor;
    match shown.unit {
        Some(u) => format!("{} {u}", fixed(x, decimals_of(x))),
        None => fixed(x, decimals_of(x)),
    }
}

/// Decimals to show `v` with four significant digits at most.
fn decimals_of(v: f64) -> usize {
    if v == v.trunc() || v.abs() >= 1000.0 {
        0
    } else {
        (3 - v.abs().log10().floor() as i32).clamp(0, 9) as usize
    }
}

/// The fonts text is drawn with in PNG and PDF: the system's.
fn fonts() -> std::sync::Arc<resvg::usvg::fontdb::Database> {
    static DB: std::sync::OnceLock<std::sync::Arc<resvg::usvg::fontdb::Database>> = std::sync::OnceLock::new();
    DB.get_or_init(|| {
        let mut db = resvg::usvg::fontdb::Database::new();
        db.load_system_fonts();
        std::sync::Arc::new(db)
    })
    .clone()
}

fn tree(svg: &str) -> Result<resvg::usvg::Tree, String> {
    let db = fonts();
    if db.is_empty() {
        return Err("no font is installed to draw the text with; install one (Debian: apt-get install fonts-dejavu-core) or write .svg".into());
    }
    let options = resvg::usvg::Options { fontdb: db, ..resvg::usvg::Options::default() };
    resvg::usvg::Tree::from_str(svg, &options).map_err(|e| format!("cannot read the figure's SVG: {e}"))
}

/// The SVG drawn at `dpi` as PNG.
pub fn to_png(svg: &str, dpi: f32) -> Result<Vec<u8>, String> {
    let tree = tree(svg)?;
    // usvg reads the print size in CSS pixels, 96 an inch.
    let scale = dpi / 96.0;
    let size = tree.size().to_int_size().scale_by(scale).ok_or("the figure has no size")?;
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).ok_or("the figure has no size")?;
    resvg::render(&tree, resvg::tiny_skia::Transform::from_scale(scale, scale), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| format!("cannot encode the PNG: {e}"))
}

/// The SVG as a one-page PDF of its print size.
pub fn to_pdf(svg: &str) -> Result<Vec<u8>, String> {
    let tree = tree(svg)?;
    // Text as outlines: the PDF needs no font and is the same bytes every
    // time (embedded fonts' resources are written in hash-map order). usvg
    // reads the print size in CSS pixels, 96 an inch.
    let options = svg2pdf::ConversionOptions { embed_text: false, ..svg2pdf::ConversionOptions::default() };
    svg2pdf::to_pdf(&tree, options, svg2pdf::PageOptions { dpi: 96.0 })
        .map(stable_pdf)
        .map_err(|e| format!("cannot convert the figure to PDF: {e}"))
}

/// `pdf` with the entries of each resource dictionary sorted: svg2pdf
/// writes them (`/po1 8 0 R`, one a line) in hash-map order, which changes
/// from run to run. Sorting the lines of a run keeps every object's length,
/// so the cross-reference table stays right; stream data is left alone.
fn stable_pdf(pdf: Vec<u8>) -> Vec<u8> {
    let is_entry = |line: &[u8]| {
        let t = line.trim_ascii_start();
        t.first() == Some(&b'/')
            && t.ends_with(b" 0 R")
            && t.iter().filter(|&&c| c == b' ').count() == 3
            && t.is_ascii()
    };
    let mut out = Vec::with_capacity(pdf.len());
    let mut run: Vec<&[u8]> = Vec::new();
    let mut in_stream = false;
    let flush = |run: &mut Vec<&[u8]>, out: &mut Vec<u8>| {
        run.sort_unstable();
        for l in run.drain(..) {
            out.extend_from_slice(l);
            out.push(b'\n');
        }
    };
    let lines: Vec<&[u8]> = pdf.split(|&c| c == b'\n').collect();
    let last = lines.len() - 1;
    for (i, line) in lines.into_iter().enumerate() {
        if !in_stream && is_entry(line) {
            run.push(line);
            continue;
        }
        flush(&mut run, &mut out);
        match line {
            b"stream" => in_stream = true,
            b"endstream" => in_stream = false,
            _ => {}
        }
        out.extend_from_slice(line);
        if i != last {
            out.push(b'\n');
        }
    }
    flush(&mut run, &mut out);
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn bars() -> Figure {
        Figure::bars(
            "f",
            Axis::new("Workload", None),
            Axis::new("Write response, max", Some("µs")),
            vec!["web".into(), "mail".into()],
            vec!["pagemap".into(), "dftl".into(), "empty".into()],
            vec![vec![Some(450_000.0), Some(0.0), None], vec![Some(120_000.0), Some(30_000.0), None]],
        )
        .legend(Some("FTL".into()))
    }

    #[test]
    fn units_are_si_scaled_and_ticks_short() {
        let svg = bars().svg();
        assert!(svg.contains("Write response, max (ms)"), "{svg}");
        assert!(svg.contains(">500<") && !svg.contains("450000"), "{svg}");
        assert!(!svg.contains(".0<"), "{svg}");
        assert_eq!(si(Some("us"), 2.5e6), Shown { factor: 1e6, unit: Some("s".into()) });
        assert_eq!(si(Some("us"), 0.5), Shown { factor: 1e-3, unit: Some("ns".into()) });
        assert_eq!(si(Some("pages"), 3.2e6), Shown { factor: 1e6, unit: Some("10⁶ pages".into()) });
        assert_eq!(si(Some("ratio"), 3.2e6), Shown { factor: 1.0, unit: None });
        assert_eq!(log_tick(1000.0, Some("µs")), "1 ms");
        assert_eq!(log_tick(1e5, None), "100k");
    }

    #[test]
    fn series_are_grouped_named_and_told_apart() {
        let svg = bars().svg();
        assert!(svg.contains("class=\"ftlab-figure\"") && svg.contains("width=\"3.5in\""), "{svg}");
        // A series of no values has no group and no legend entry; a zero is a hairline.
        assert_eq!(svg.matches("class=\"series\"").count(), 2, "{svg}");
        assert!(!svg.contains("empty"));
        assert!(svg.contains("legend-title") && svg.contains("FTL:"));
        assert!(svg.contains("url(#f-h1)"), "the second series is hatched");
        assert!(svg.contains("height=\"0.75\""), "the zero bar is drawn: {svg}");
        let lines = Figure::lines(
            "l",
            Axis::new("Time", Some("s")),
            Axis::new("Pages", Some("pages")),
            vec![
                Line { name: "a".into(), points: vec![(0.0, 1.0), (1.0, 2.0)], markers_only: false },
                Line { name: "b".into(), points: vec![(0.0, 2.0), (1.0, 1.0)], markers_only: false },
            ],
        );
        let svg = lines.svg();
        assert!(svg.contains("stroke-dasharray"), "the second line is dashed");
        assert!(svg.contains("<circle") && svg.contains("<rect x"), "markers differ");
    }

    #[test]
    fn text_is_never_smaller_than_seven_points() {
        for svg in [bars().svg()] {
            for size in svg.split("font-size=\"").skip(1) {
                let v: f64 = size.split('"').next().unwrap().parse().unwrap();
                assert!(v >= MIN_PT, "{v}");
            }
        }
    }

    /// Any data (NaN, infinities, negatives, zeros, huge and tiny values, long
    /// names, many series) gives an SVG that parses, has no non-number in it,
    /// and no text under 7 pt.
    mod any_data {
        use super::super::*;
        use proptest::prelude::*;

        fn value() -> impl Strategy<Value = Option<f64>> {
            prop_oneof![
                Just(None),
                Just(Some(f64::NAN)),
                Just(Some(f64::INFINITY)),
                Just(Some(0.0)),
                (-1e12f64..1e12).prop_map(Some),
                (0.0f64..1e-6).prop_map(Some),
            ]
        }

        fn check(svg: &str) {
            assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
            for size in svg.split("font-size=\"").skip(1) {
                let v: f64 = size.split('"').next().unwrap().parse().unwrap();
                assert!(v >= MIN_PT, "{v}");
            }
            let tree = resvg::usvg::Tree::from_str(svg, &resvg::usvg::Options::default());
            assert!(tree.is_ok(), "{svg}");
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]
            #[test]
            fn bars(groups in 1usize..12, series in 1usize..11, name in "[a-e /]{0,40}", stacked: bool,
                    unit in prop::sample::select(vec!["µs", "pages", "ratio", "bytes", "1/s"]),
                    values in prop::collection::vec(value(), 132)) {
                let values = (0..groups).map(|g| (0..series).map(|s| values[g * 11 + s]).collect()).collect();
                let fig = Figure::bars(
                    "p",
                    Axis::new(name.clone(), None),
                    Axis::new("y", Some(unit)),
                    (0..groups).map(|g| format!("{name}{g}")).collect(),
                    (0..series).map(|s| format!("{name}-{s}")).collect(),
                    values,
                )
                .title(Some(name.repeat(3)))
                .legend(Some(name.clone()))
                .stacked_or_steps(stacked);
                check(&fig.svg());
            }

            #[test]
            fn lines(n in 1usize..9, log in prop::sample::select(vec![Scale::Linear, Scale::Log, Scale::Nines]),
                     points in prop::collection::vec((value(), value()), 0..40)) {
                let pts: Vec<(f64, f64)> =
                    points.iter().map(|(x, y)| (x.unwrap_or(f64::NAN), y.unwrap_or(f64::NAN))).collect();
                let lines = (0..n).map(|i| Line { name: format!("l{i}"), points: pts.clone(), markers_only: i == 1 }).collect();
                let fig = Figure::lines("l", Axis::new("x", Some("s")).scale(log), Axis::new("y", Some("µs")).scale(Scale::Log), lines)
                    .rules(vec![1.0]);
                check(&fig.svg());
            }
        }
    }

    #[test]
    fn png_and_pdf_come_from_the_svg() {
        let dir = tempfile::tempdir().unwrap();
        for ext in ["svg", "png", "pdf"] {
            let path = dir.path().join(format!("f.{ext}"));
            bars().write(&path).unwrap();
            let bytes = std::fs::read(&path).unwrap();
            let head: &[u8] = match ext {
                "svg" => b"<svg",
                "png" => b"\x89PNG",
                _ => b"%PDF",
            };
            assert!(bytes.starts_with(head), "{ext}");
        }
        // 3.5 inches at 300 dpi.
        let png = std::fs::read(dir.path().join("f.png")).unwrap();
        let w = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
        assert_eq!(w, 1050);
        let err = bars().write(&dir.path().join("f.jpg")).unwrap_err().to_string();
        assert!(err.contains("f.jpg") && err.contains(".svg, .png or .pdf"), "{err}");
        // The same figure gives the same bytes.
        bars().write(&dir.path().join("g.pdf")).unwrap();
        assert_eq!(std::fs::read(dir.path().join("f.pdf")).unwrap(), std::fs::read(dir.path().join("g.pdf")).unwrap());
    }
}
