//! Self-contained HTML reports: one file with inline SVG plots and no network
//! fetch (no script, no stylesheet or font from elsewhere), readable at a
//! glance. [`report_html`] draws one run's report (the JSON of
//! `ftlab run -f json`); [`sweep_html`] compares the rows of a sweep (the CSV
//! or JSON lines of `ftlab sweep`). `ftlab report` and the Python package's
//! `Report.to_html()` both call these.

use std::fmt::Write as _;

use serde_json::Value;

use crate::LabError;

/// Plot size, px.
const W: f64 = 640.0;
const H: f64 = 320.0;
/// Margins: left, right, top, bottom.
const ML: f64 = 70.0;
const MR: f64 = 40.0;
const MT: f64 = 30.0;
const MB: f64 = 45.0;
/// Series colours (colour-blind safe).
const COLOURS: [&str; 8] = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#f0e442", "#000000"];

const STYLE: &str = "body{font-family:sans-serif;max-width:1000px;margin:1em auto;color:#222}\
table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}\
th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}figure{margin:1em 0}\
figcaption{font-weight:bold}svg text{font-size:12px;font-family:sans-serif}.note{color:#666}";

/// `s` with HTML's special characters escaped.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A number as a table cell or axis label: integers whole, others with at most
/// four significant digits.
fn num(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        format!("{x:.0}")
    } else if x.abs() >= 1e-3 && x.abs() < 1e6 {
        let s = format!("{x:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        format!("{x:.3e}")
    }
}

fn cell(v: &Value) -> String {
    match v {
        Value::Null => "–".to_owned(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), num),
        Value::String(s) => esc(s),
        other => esc(&other.to_string()),
    }
}

/// One series of a line plot: a name and its points.
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
}

/// An axis: its range, whether it is logarithmic, its label.
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    label: String,
    /// A percentile axis: a value `n` is the percentile with `n` nines
    /// (0: 0%, 1: 90%, 2: 99%, 3: 99.9%), so the tail gets as much room as
    /// the body ([`nines`]); ticks at whole nines, labelled as percentiles.
    nines: bool,
}

/// Where fraction `q` of the requests falls on a percentile axis:
/// `log10(1 / (1 - q))`, capped at `cap` nines (for `q` = 1).
fn nines(q: f64, cap: f64) -> f64 {
    if q >= 1.0 {
        cap
    } else {
        (-(1.0 - q).log10()).min(cap)
    }
}

impl Axis {
    fn fit(values: impl Iterator<Item = f64>, log: bool, label: &str) -> Axis {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            (lo, hi) = (if log { 1.0 } else { 0.0 }, 1.0);
        }
        if log {
            lo = 10f64.powf(lo.log10().floor());
            hi = 10f64.powf(hi.log10().ceil().max(lo.log10() + 1.0));
        } else {
            lo = lo.min(0.0);
            if hi <= lo {
                hi = lo + 1.0;
            }
            // Round the top up to a whole number of nice steps, so ticks are short.
            let step = nice_step((hi - lo) / 4.0);
            lo = (lo / step).floor() * step;
            hi = (hi / step).ceil() * step;
        }
        Axis { lo, hi, log, label: label.to_owned(), nines: false }
    }

    /// A percentile axis from 0% to `n` nines.
    fn percentiles(n: u32, label: &str) -> Axis {
        Axis { lo: 0.0, hi: f64::from(n.max(1)), log: false, label: label.to_owned(), nines: true }
    }

    /// A tick's label.
    fn tick_label(&self, t: f64) -> String {
        if !self.nines {
            return num(t);
        }
        match t.round() as usize {
            0 => "0%".into(),
            1 => "90%".into(),
            2 => "99%".into(),
            n => format!("99.{}%", "9".repeat(n - 2)),
        }
    }

    /// Where `v` falls, 0 to 1.
    fn frac(&self, v: f64) -> f64 {
        if self.log {
            (v.max(self.lo).log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }

    fn ticks(&self) -> Vec<f64> {
        if self.nines {
            return (0..=self.hi.round() as u32).map(f64::from).collect();
        }
        if self.log {
            let (a, b) = (self.lo.log10().round() as i32, self.hi.log10().round() as i32);
            (a..=b).map(|e| 10f64.powi(e)).collect()
        } else {
            let step = nice_step((self.hi - self.lo) / 4.0);
            let n = ((self.hi - self.lo) / step).round() as u32;
            (0..=n).map(|i| self.lo + step * f64::from(i)).collect()
        }
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

fn px(x: &Axis, v: f64) -> f64 {
    ML + x.frac(v) * (W - ML - MR)
}

fn py(y: &Axis, v: f64) -> f64 {
    H - MB - y.frac(v) * (H - MT - MB)
}

/// The axes, grid lines and labels of a plot.
fn frame(svg: &mut String, x: Option<&Axis>, y: &Axis) {
    let _ = write!(
        svg,
        "<rect x=\"{ML}\" y=\"{MT}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888\"/>",
        W - ML - MR,
        H - MT - MB
    );
    for t in y.ticks() {
        let yy = py(y, t);
        let _ = write!(
            svg,
            "<line x1=\"{ML}\" x2=\"{}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"#eee\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            W - MR,
            ML - 4.0,
            yy + 4.0,
            y.tick_label(t)
        );
    }
    if let Some(x) = x {
        for t in x.ticks() {
            let xx = px(x, t);
            let _ = write!(
                svg,
                "<line x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"{MT}\" y2=\"{}\" stroke=\"#eee\"/><text x=\"{xx:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                H - MB,
                H - MB + 15.0,
                x.tick_label(t)
            );
        }
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            (ML + W - MR) / 2.0,
            H - 8.0,
            esc(&x.label)
        );
    }
    let _ = write!(
        svg,
        "<text transform=\"translate(14,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        (MT + H - MB) / 2.0,
        esc(&y.label)
    );
}

/// The legend of `names`, top left inside the plot.
fn legend(svg: &mut String, names: &[String]) {
    for (i, name) in names.iter().enumerate() {
        let y = MT + 14.0 + 16.0 * i as f64;
        let c = COLOURS[i % COLOURS.len()];
        let _ = write!(
            svg,
            "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{c}\"/><text x=\"{}\" y=\"{}\">{}</text>",
            ML + 8.0,
            y - 9.0,
            ML + 22.0,
            y,
            esc(name)
        );
    }
}

/// A figure holding a line plot of `series` (steps if `steps`).
fn line_plot(id: &str, title: &str, series: &[Series], x: Axis, y: Axis, steps: bool) -> String {
    let mut svg = format!(
        "<figure><figcaption>{}</figcaption><svg id=\"{id}\" class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{}\">",
        esc(title),
        esc(title)
    );
    frame(&mut svg, Some(&x), &y);
    for (i, s) in series.iter().enumerate() {
        let mut d = String::new();
        let mut last: Option<f64> = None;
        for &(a, b) in &s.points {
            let (xx, yy) = (px(&x, a), py(&y, b));
            match last {
                None => {
                    let _ = write!(d, "M{xx:.1},{yy:.1}");
                }
                Some(prev) if steps => {
                    let _ = write!(d, " L{xx:.1},{prev:.1} L{xx:.1},{yy:.1}");
                }
                Some(_) => {
                    let _ = write!(d, " L{xx:.1},{yy:.1}");
                }
            }
            last = Some(yy);
        }
        let _ = write!(
            svg,
            "<path class=\"series\" d=\"{d}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"><title>{}</title></path>",
            COLOURS[i % COLOURS.len()],
            esc(&s.name)
        );
    }
    legend(&mut svg, &series.iter().map(|s| s.name.clone()).collect::<Vec<_>>());
    svg.push_str("</svg></figure>\n");
    svg
}

/// A figure holding a grouped bar chart: `groups` on the x axis, one bar per
/// series in each (`values[group][series]`, None for no bar).
fn bar_plot(
    id: &str,
    title: &str,
    groups: &[String],
    series: &[String],
    values: &[Vec<Option<f64>>],
    y_label: &str,
) -> String {
    let y = Axis::fit(values.iter().flatten().flatten().copied(), false, y_label);
    let mut svg = format!(
        "<figure><figcaption>{}</figcaption><svg id=\"{id}\" class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{}\">",
        esc(title),
        esc(title)
    );
    frame(&mut svg, None, &y);
    let slot = (W - ML - MR) / groups.len().max(1) as f64;
    let bar = slot * 0.8 / series.len().max(1) as f64;
    for (g, name) in groups.iter().enumerate() {
        let x0 = ML + slot * g as f64 + slot * 0.1;
        for (s, v) in values.get(g).into_iter().flatten().enumerate() {
            let Some(v) = v else { continue };
            let (top, base) = (py(&y, *v), py(&y, 0.0));
            let _ = write!(
                svg,
                "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"><title>{}: {}</title></rect>",
                x0 + bar * s as f64,
                top.min(base),
                bar.max(1.0),
                (base - top).abs(),
                COLOURS[s % COLOURS.len()],
                esc(name),
                num(*v)
            );
        }
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            x0 + slot * 0.4,
            H - MB + 15.0,
            esc(name)
        );
    }
    if series.len() > 1 {
        legend(&mut svg, series);
    }
    svg.push_str("</svg></figure>\n");
    svg
}

fn f(v: &Value, path: &str) -> Option<f64> {
    path.split('.').try_fold(v, |v, k| v.get(k)).and_then(Value::as_f64)
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>{STYLE}</style></head>\n<body><h1>{t}</h1>\n{body}<p class=\"note\">Written by ftlab; field meanings: crates/cli/FIELDS.md.</p></body></html>\n",
        t = esc(title)
    )
}

/// Nines the percentile axis shows at most: the last request of a run of a
/// million is at 6, so 7 leaves the max room past it.
const MAX_NINES: f64 = 7.0;

/// `(nines, µs)` points of operation `op`'s response-time distribution: from
/// the report's histogram buckets (`latency.<op>.bins`, the fraction at or
/// below each bucket's edge), or from its summary's percentiles in a report
/// without them (an older report).
fn percentile_points(report: &Value, op: &str, summary: &Value) -> Vec<(f64, f64)> {
    let bins: Vec<(f64, f64)> = report["latency"][op]["bins"]
        .as_array()
        .map(|a| a.iter().filter_map(|b| Some((b.get(0)?.as_f64()?, b.get(1)?.as_f64()?))).collect())
        .unwrap_or_default();
    let total: f64 = bins.iter().map(|b| b.1).sum();
    if total > 0.0 {
        // The max sits at the last request's own rank, not at 100%
        // (infinitely many nines): one past it.
        let cap = (total.log10() + 1.0).min(MAX_NINES);
        let mut seen = 0.0;
        let mut points = vec![(0.0, bins[0].0 / 1e3)];
        for (ns, n) in bins {
            seen += n;
            points.push((nines(seen / total, cap), ns / 1e3));
        }
        return points;
    }
    [("p50", 0.5), ("p99", 0.99), ("p999", 0.999), ("p9999", 0.9999), ("max", 1.0)]
        .iter()
        .filter_map(|(k, q)| f(summary, k).map(|us| (nines(*q, 5.0), us)))
        .collect()
}

/// The HTML page of one run's report (`report` is the JSON of
/// `ftlab run -f json`): a summary, the response times per operation with
/// their CDFs, throughput over time, flash work by purpose (host, GC, map,
/// wear leveling), erase counts and the RBER distribution.
pub fn report_html(report: &Value, title: &str) -> String {
    let s = |k: &str| report.get(k).map_or_else(String::new, cell);
    let title = if title.is_empty() { format!("ftlab run: {} on {}", s("ftl"), s("chip")) } else { title.to_owned() };
    let mut body = String::from("<h2>Summary</h2><table>");
    for key in [
        "ftl",
        "chip",
        "workload",
        "seed",
        "requests",
        "sim_seconds",
        "waf",
        "host_pages_written",
        "flash_pages_programmed",
        "gc_page_copies",
        "erases",
        "space_utilization",
        "bound_us",
        "bound_violations",
        "deadline_misses",
        "integrity",
        "error",
    ] {
        if let Some(v) = report.get(key) {
            let _ = write!(body, "<tr><th>{key}</th><td>{}</td></tr>", cell(v));
        }
    }
    body.push_str("</table>\n<h2>Response times (µs)</h2><table><tr><th>op</th><th>count</th><th>mean</th><th>p50</th><th>p99</th><th>p99.9</th><th>p99.99</th><th>max</th></tr>");
    let mut cdf = Vec::new();
    for op in ["read", "write", "trim"] {
        let l = &report[format!("{op}_us")];
        if f(l, "count").unwrap_or(0.0) == 0.0 {
            continue;
        }
        let _ = write!(body, "<tr><td>{op}</td>");
        for k in ["count", "mean", "p50", "p99", "p999", "p9999", "max"] {
            let _ = write!(body, "<td>{}</td>", l.get(k).map_or_else(String::new, cell));
        }
        body.push_str("</tr>");
        cdf.push(Series { name: op.to_owned(), points: percentile_points(report, op, l) });
    }
    body.push_str("</table>\n");
    if !cdf.is_empty() {
        // Percentiles along x with as much room for the tail as for the body
        // (as HdrHistogram's and wrk's percentile plots), response times up.
        let most = cdf.iter().flat_map(|s| s.points.iter().map(|p| p.0)).fold(0.0f64, f64::max);
        let x = Axis::percentiles(most.ceil() as u32, "percentile of requests");
        let y = Axis::fit(cdf.iter().flat_map(|s| s.points.iter().map(|p| p.1)), true, "response time, µs (log)");
        body += &line_plot("latency-cdf", "Response-time distribution by percentile", &cdf, x, y, false);
    }
    // How the report was made, when it says (`provenance`): enough to run
    // it again (`ftlab rerun`).
    if let Some(p) = report.get("provenance").filter(|p| p.is_object()) {
        body.push_str("<h2>Provenance</h2><table>");
        for key in ["command", "ftlab", "git_revision"] {
            let _ = write!(body, "<tr><th>{key}</th><td>{}</td></tr>", p.get(key).map_or_else(String::new, cell));
        }
        if let Some(stamp) = p.get("stamp").and_then(Value::as_object) {
            for (key, v) in stamp {
                let _ = write!(body, "<tr><th>{}</th><td>{}</td></tr>", esc(key), cell(v));
            }
        }
        body.push_str("</table>\n");
        if let Some(config) = p.get("config").and_then(Value::as_str) {
            let _ = writeln!(
                body,
                "<details><summary>Configuration (ftlab rerun runs it again)</summary><pre>{}</pre></details>",
                esc(config)
            );
        }
    }
    let tp = &report["throughput"];
    let step = f(tp, "interval_s").unwrap_or(0.0);
    let col = |k: &str| -> Vec<f64> {
        tp[k].as_array().map(|a| a.iter().filter_map(Value::as_f64).collect()).unwrap_or_default()
    };
    let (reads, writes) = (col("read_pages"), col("write_pages"));
    if step > 0.0 && reads.len().max(writes.len()) > 1 {
        let series: Vec<Series> = [("read pages", &reads), ("write pages", &writes)]
            .into_iter()
            .filter(|(_, v)| v.iter().any(|x| *x > 0.0))
            .map(|(name, v)| Series {
                name: name.into(),
                points: v.iter().enumerate().map(|(i, y)| (i as f64 * step, *y)).collect(),
            })
            .collect();
        let x = Axis::fit(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)), false, "simulated time, s");
        let y = Axis::fit(
            series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
            false,
            &format!("host pages per {} s", num(step)),
        );
        body += &line_plot("throughput", "Host throughput over time", &series, x, y, false);
    }
    let (programs, gc, erases) = (col("flash_programs"), col("gc_programs"), col("erases"));
    if step > 0.0 && writes.len() > 1 && programs.len() == writes.len() {
        // Write amplification of each interval with host writes in it.
        let points: Vec<(f64, f64)> = writes
            .iter()
            .zip(&programs)
            .enumerate()
            .filter(|(_, (w, _))| **w > 0.0)
            .map(|(i, (w, p))| (i as f64 * step, p / w))
            .collect();
        if points.len() > 1 {
            let x = Axis::fit(points.iter().map(|p| p.0), false, "simulated time, s");
            let y = Axis::fit(points.iter().map(|p| p.1), false, "flash programs per host page written");
            let series = [Series { name: "WAF".into(), points }];
            body += &line_plot("waf-over-time", "Write amplification over time", &series, x, y, false);
        }
        let series: Vec<Series> = [("GC page programs", &gc), ("erases", &erases)]
            .into_iter()
            .filter(|(_, v)| v.iter().any(|x| *x > 0.0))
            .map(|(name, v)| Series {
                name: name.into(),
                points: v.iter().enumerate().map(|(i, y)| (i as f64 * step, *y)).collect(),
            })
            .collect();
        if !series.is_empty() {
            let x = Axis::fit(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)), false, "simulated time, s");
            let y = Axis::fit(
                series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
                false,
                &format!("per {} s", num(step)),
            );
            body += &line_plot("gc-over-time", "Garbage collection over time", &series, x, y, false);
        }
    }
    // The FTL's own gauges (Janus-FTL's page-mapping area, for one), a plot
    // each: their scales differ.
    if let Some(gauges) = tp["gauges"].as_object().filter(|_| step > 0.0) {
        for (name, values) in gauges {
            let points: Vec<(f64, f64)> = values
                .as_array()
                .map(|a| a.iter().enumerate().filter_map(|(i, v)| Some((i as f64 * step, v.as_f64()?))).collect())
                .unwrap_or_default();
            if points.len() > 1 {
                let x = Axis::fit(points.iter().map(|p| p.0), false, "simulated time, s");
                let y = Axis::fit(points.iter().map(|p| p.1), false, name);
                let series = [Series { name: name.clone(), points }];
                let id = format!("gauge-{}", name.replace(|c: char| !c.is_ascii_alphanumeric(), "-"));
                body += &line_plot(&id, &format!("FTL gauge over time: {name}"), &series, x, y, false);
            }
        }
    }
    if let Some(ops) = report.get("flash_ops").and_then(Value::as_object) {
        let purposes: Vec<String> =
            ops.values().filter_map(Value::as_object).flat_map(|m| m.keys().cloned()).fold(Vec::new(), |mut acc, k| {
                if !acc.contains(&k) && k != "total" {
                    acc.push(k);
                }
                acc
            });
        let kinds: Vec<String> = ops.keys().cloned().collect();
        let values: Vec<Vec<Option<f64>>> =
            kinds.iter().map(|k| purposes.iter().map(|p| ops[k].get(p).and_then(Value::as_f64)).collect()).collect();
        if !purposes.is_empty() {
            body +=
                &bar_plot("flash-ops", "Flash work by purpose (GC activity)", &kinds, &purposes, &values, "operations");
        }
    }
    let e = &report["erase_count"];
    let histogram: Vec<(u64, u64)> = report
        .get("erase_histogram")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|p| Some((p.get(0)?.as_u64()?, p.get(1)?.as_u64()?))).collect())
        .unwrap_or_default();
    let caption = format!(
        "Erase counts of the good blocks (mean {}, std {}, wear index {})",
        e.get("mean").map_or_else(String::new, cell),
        e.get("std").map_or_else(String::new, cell),
        e.get("wear_index").map_or_else(String::new, cell)
    );
    if !histogram.is_empty() {
        let (groups, values) = erase_bins(&histogram);
        body += &bar_plot("erase-counts", &caption, &groups, &["blocks".into()], &values, "blocks");
    } else if let (Some(lo), Some(mean), Some(hi)) = (f(e, "min"), f(e, "mean"), f(e, "max")) {
        // A report from before the distribution was recorded: its summary.
        body += &bar_plot(
            "erase-counts",
            &caption,
            &["min".into(), "mean".into(), "max".into()],
            &["erases per block".into()],
            &[vec![Some(lo)], vec![Some(mean)], vec![Some(hi)]],
            "erases per block",
        );
    }
    if let Some(points) = report.get("rber_cdf").and_then(Value::as_array) {
        let points: Vec<(f64, f64)> =
            points.iter().filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64()?))).collect();
        if points.len() > 1 {
            let x = Axis::fit(points.iter().map(|p| p.0), true, "raw bit error rate (log)");
            let y = Axis { lo: 0.0, hi: 1.0, log: false, label: "fraction of blocks".into(), nines: false };
            body += &line_plot(
                "rber-cdf",
                "RBER of the good blocks (CDF)",
                &[Series { name: "blocks".into(), points }],
                x,
                y,
                true,
            );
        }
    }
    page(&title, &body)
}

/// Most bars of the erase-count distribution.
const ERASE_BINS: u64 = 32;

/// The erase-count distribution `[(erase count, blocks)]` as bars: one per
/// count, or, over [`ERASE_BINS`] distinct counts, equal ranges of counts
/// labelled `lo-hi`.
fn erase_bins(histogram: &[(u64, u64)]) -> (Vec<String>, Vec<Vec<Option<f64>>>) {
    let (lo, hi) = (histogram[0].0, histogram[histogram.len() - 1].0);
    if hi - lo < ERASE_BINS {
        let groups = histogram.iter().map(|(c, _)| c.to_string()).collect();
        let values = histogram.iter().map(|(_, n)| vec![Some(*n as f64)]).collect();
        return (groups, values);
    }
    let width = (hi - lo + 1).div_ceil(ERASE_BINS);
    let bins = (hi - lo) / width + 1;
    let mut counts = vec![0u64; bins as usize];
    for (c, n) in histogram {
        counts[((c - lo) / width) as usize] += n;
    }
    let groups = (0..bins).map(|b| format!("{}-{}", lo + b * width, lo + b * width + width - 1)).collect();
    let values = counts.iter().map(|n| vec![Some(*n as f64)]).collect();
    (groups, values)
}

/// The metrics a sweep's page compares, when they are columns.
const COMPARED: [(&str, &str); 6] = [
    ("waf", "write amplification"),
    ("write_us.p99", "write p99, µs"),
    ("write_us.max", "write max, µs"),
    ("read_us.p99", "read p99, µs"),
    ("erases", "erases"),
    ("gc_page_copies", "GC page copies"),
];

/// The HTML page of a sweep's rows (`columns` from the CSV header or the JSON
/// lines' keys; the columns between `run` and the first report field are the
/// grid keys): a table of the runs and, for the main metrics, bars per run
/// labelled by its grid values.
pub fn sweep_html(columns: &[String], rows: &[Vec<Value>], title: &str) -> String {
    let title = if title.is_empty() { format!("ftlab sweep: {} runs", rows.len()) } else { title.to_owned() };
    let report_start = columns.iter().position(|c| c == "ftl" || c == "chip").unwrap_or(columns.len());
    let grid: Vec<usize> = (1..report_start).collect();
    let at = |name: &str| columns.iter().position(|c| c == name);
    let label = |row: &[Value]| -> String {
        let parts: Vec<String> = grid
            .iter()
            .map(|&i| match &row[i] {
                Value::String(s) => s.clone(),
                v => v.to_string(),
            })
            .collect();
        if parts.is_empty() {
            row.first().map_or_else(String::new, |v| format!("run {v}"))
        } else {
            parts.join(", ")
        }
    };
    let labels: Vec<String> = rows.iter().map(|r| label(r)).collect();
    let mut body = String::new();
    for (i, (name, what)) in COMPARED.iter().enumerate() {
        let Some(c) = at(name) else { continue };
        let values: Vec<Vec<Option<f64>>> = rows.iter().map(|r| vec![r.get(c).and_then(Value::as_f64)]).collect();
        if values.iter().flatten().all(Option::is_none) {
            continue;
        }
        body += &bar_plot(
            &format!("compare-{i}"),
            &format!("{what} ({name}) per run"),
            &labels,
            &[(*name).to_owned()],
            &values,
            what,
        );
    }
    let shown: Vec<usize> = [0]
        .into_iter()
        .chain(grid.iter().copied())
        .chain(COMPARED.iter().filter_map(|(n, _)| at(n)))
        .chain(at("error"))
        .collect();
    body.push_str("<h2>Runs</h2><table><tr>");
    for &i in &shown {
        let _ = write!(body, "<th>{}</th>", esc(&columns[i]));
    }
    body.push_str("</tr>");
    for row in rows {
        body.push_str("<tr>");
        for &i in &shown {
            let _ = write!(body, "<td>{}</td>", row.get(i).map_or_else(String::new, cell));
        }
        body.push_str("</tr>");
    }
    body.push_str("</table>\n");
    page(&title, &body)
}

/// The HTML page of a results file's text: the JSON report of `ftlab run -f
/// json`, or the rows of `ftlab sweep` as CSV (with its header) or JSON lines.
/// `origin` names the file in errors.
pub fn results_html(text: &str, origin: &str, title: &str) -> Result<String, LabError> {
    let bad = |what: String| {
        LabError::config(
            "results",
            format!("{origin}: {what}; give the JSON of `ftlab run -f json`, or `ftlab sweep`'s CSV or JSON lines"),
        )
    };
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        // One report, or JSON lines of sweep rows.
        if let Ok(report) = serde_json::from_str::<Value>(text) {
            return if report.get("ftl").is_some() && report.get("run").is_none() {
                Ok(report_html(&report, title))
            } else {
                rows_html(vec![report], title)
            };
        }
        let rows = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .enumerate()
            .map(|(i, l)| serde_json::from_str::<Value>(l).map_err(|e| bad(format!("line {}: {e}", i + 1))))
            .collect::<Result<Vec<_>, _>>()?;
        return rows_html(rows, title);
    }
    let mut reader = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let columns: Vec<String> =
        reader.headers().map_err(|e| bad(format!("not CSV: {e}")))?.iter().map(str::to_owned).collect();
    if columns.first().map(String::as_str) != Some("run") {
        return Err(bad("the first CSV column is not `run`".into()));
    }
    let mut rows = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let record = record.map_err(|e| bad(format!("CSV row {}: {e}", i + 1)))?;
        rows.push(record.iter().map(csv_value).collect());
    }
    Ok(sweep_html(&columns, &rows, title))
}

/// A CSV cell as a JSON value: empty is null, numbers and booleans as such.
fn csv_value(s: &str) -> Value {
    if s.is_empty() {
        return Value::Null;
    }
    if let Ok(i) = s.parse::<i64>() {
        return Value::from(i);
    }
    if let Ok(x) = s.parse::<f64>() {
        return serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number);
    }
    match s {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => Value::String(s.to_owned()),
    }
}

/// JSON-lines sweep rows (objects keyed by column, in column order).
fn rows_html(objects: Vec<Value>, title: &str) -> Result<String, LabError> {
    let columns: Vec<String> =
        objects.first().and_then(Value::as_object).map(|o| o.keys().cloned().collect()).unwrap_or_default();
    let rows = objects
        .iter()
        .map(|o| columns.iter().map(|c| o.get(c).cloned().unwrap_or(Value::Null)).collect())
        .collect::<Vec<_>>();
    Ok(sweep_html(&columns, &rows, title))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_report_page_has_its_plots_and_fetches_nothing() {
        let config = ftlab_sim::RunConfig::from_toml(
            "[device]\nchip = \"small-slc\"\nblocks_per_plane = 64\n[workload.generator]\nkind = \"uniform\"\nrequests = 3000\n[precondition]\nfill = true\n",
            "test",
        )
        .unwrap();
        let report = ftlab_sim::run(&config, &mut |_| {}).unwrap();
        let html = report_html(&serde_json::to_value(&report).unwrap(), "");
        for id in ["latency-cdf", "throughput", "waf-over-time", "gc-over-time", "flash-ops", "erase-counts"] {
            assert!(html.contains(&format!("id=\"{id}\"")), "{id} missing");
        }
        assert!(!html.contains("<h2>Provenance</h2>"), "a report without provenance shows none");
        let mut with = serde_json::to_value(&report).unwrap();
        with["provenance"] = serde_json::json!({"command": "run", "ftlab": "0.1.0", "git_revision": null,
            "config": "seed = 1\n[ftl]\nkind = \"<pagemap>\"\n", "stamp": {"date": "2026-12-06T00:00:00Z", "host": "h"}});
        let html = report_html(&with, "");
        assert!(html.contains("<h2>Provenance</h2>") && html.contains("2026-12-06T00:00:00Z"));
        assert!(
            html.contains("kind = &quot;&lt;pagemap&gt;&quot;") || html.contains("kind = \"&lt;pagemap&gt;\""),
            "escaped config"
        );
        // The only URL is the SVG namespace, a name that is never fetched.
        assert_eq!(html.matches("http://").count(), html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count());
        assert!(!html.contains("https://") && !html.contains("<script") && !html.contains("src="));
    }

    #[test]
    fn an_ftl_with_gauges_gets_a_plot_of_each() {
        let config = ftlab_sim::RunConfig::from_toml(
            "[device]\nchip = \"small-slc\"\nblocks_per_plane = 64\n[ftl]\nkind = \"janus\"\n[workload.generator]\nkind = \"uniform\"\nrequests = 3000\n[precondition]\nfill = true\n",
            "test",
        )
        .unwrap();
        let report = serde_json::to_value(ftlab_sim::run(&config, &mut |_| {}).unwrap()).unwrap();
        let names: Vec<String> = report["throughput"]["gauges"].as_object().unwrap().keys().cloned().collect();
        assert!(names.iter().any(|n| n == "fused_blocks"), "{names:?}");
        let html = report_html(&report, "");
        for name in &names {
            assert!(html.contains(&format!("id=\"gauge-{}\"", name.replace('_', "-"))), "{name} missing");
        }
        // A scheme without gauges has none.
        let pagemap = ftlab_sim::RunConfig::from_toml(
            "[device]\nchip = \"small-slc\"\nblocks_per_plane = 64\n[workload.generator]\nkind = \"uniform\"\nrequests = 3000\n",
            "test",
        )
        .unwrap();
        let html = report_html(&serde_json::to_value(ftlab_sim::run(&pagemap, &mut |_| {}).unwrap()).unwrap(), "");
        assert!(!html.contains("id=\"gauge-"));
    }

    #[test]
    fn the_latency_plot_gives_the_tail_its_own_room() {
        // 9,990 fast reads and 10 slow ones: the slow tenth of a percent
        // spans a third of the percentile axis (99.9% to 99.99%+).
        let report = serde_json::json!({
            "read_us": {"count": 10000, "mean": 1.0, "p50": 100.0, "p99": 100.0, "p999": 100.0, "p9999": 5000.0, "max": 5000.0},
            "latency": {"read": {"percentiles": [], "bins": [[100000, 9990], [5000000, 10]]}}
        });
        let points = percentile_points(&report, "read", &report["read_us"]);
        assert_eq!(points[0], (0.0, 100.0));
        assert!((points[1].0 - 3.0).abs() < 1e-9 && points[1].1 == 100.0, "99.9% at 3 nines: {:?}", points[1]);
        assert!(
            (points[2].0 - 5.0).abs() < 1e-9 && points[2].1 == 5000.0,
            "the max one past the last rank: {:?}",
            points[2]
        );
        let html = report_html(&report, "");
        for label in [">0%<", ">90%<", ">99%<", ">99.9%<", ">99.99%<", ">99.999%<"] {
            assert!(html.contains(label), "tick {label} missing");
        }
        // An older report without buckets still plots its percentiles.
        let old = serde_json::json!({"read_us": report["read_us"].clone()});
        let points = percentile_points(&old, "read", &old["read_us"]);
        assert_eq!(points.len(), 5);
        assert!((points[1].0 - 2.0).abs() < 1e-9, "p99 at 2 nines");
    }

    #[test]
    fn erase_counts_are_binned_when_they_spread() {
        let (groups, values) = erase_bins(&[(3, 10), (4, 5)]);
        assert_eq!(groups, ["3", "4"]);
        assert_eq!(values, [vec![Some(10.0)], vec![Some(5.0)]]);
        let wide: Vec<(u64, u64)> = (100..300).map(|c| (c, 1)).collect();
        let (groups, values) = erase_bins(&wide);
        assert!(groups.len() as u64 <= ERASE_BINS, "{}", groups.len());
        assert_eq!(groups[0], "100-106");
        assert_eq!(values.iter().map(|v| v[0].unwrap()).sum::<f64>(), 200.0);
    }

    #[test]
    fn axes_tick_at_nice_steps() {
        assert_eq!(nice_step(130_000.0), 200_000.0);
        assert_eq!(nice_step(2.5), 2.5);
        assert_eq!(nice_step(0.3), 0.5);
        let a = Axis::fit([0.0, 639_631.359].into_iter(), false, "us");
        assert_eq!((a.lo, a.hi), (0.0, 800_000.0));
        assert_eq!(
            a.ticks().iter().map(|t| num(*t)).collect::<Vec<_>>(),
            ["0", "200000", "400000", "600000", "800000"]
        );
    }

    #[test]
    fn results_files_are_told_apart() {
        let csv = "run,ftl.kind,ftl,waf,error\n0,pagemap,pagemap,1.5,\n1,dftl,dftl,2,\n";
        let html = results_html(csv, "rows.csv", "").unwrap();
        assert!(html.contains("2 runs") && html.contains("id=\"compare-0\""));
        let jsonl = "{\"run\":0,\"ftl.kind\":\"pagemap\",\"ftl\":\"pagemap\",\"waf\":1.5}\n{\"run\":1,\"ftl.kind\":\"dftl\",\"ftl\":\"dftl\",\"waf\":2.0}\n";
        assert!(results_html(jsonl, "rows.jsonl", "").unwrap().contains("2 runs"));
        let e = results_html("a,b\n1,2\n", "x.csv", "").unwrap_err().to_string();
        assert!(e.contains("x.csv") && e.contains("ftlab sweep"), "{e}");
    }

    #[test]
    fn a_sweep_page_labels_runs_by_their_grid_values() {
        let columns: Vec<String> = ["run", "ftl.kind", "ftl", "waf", "error"].iter().map(|s| s.to_string()).collect();
        let rows = vec![
            vec![Value::from(0), Value::from("pagemap"), Value::from("pagemap"), Value::from(1.5), Value::Null],
            vec![Value::from(1), Value::from("dftl"), Value::from("dftl"), Value::from(2.0), Value::Null],
        ];
        let html = sweep_html(&columns, &rows, "");
        assert!(html.contains("id=\"compare-0\""));
        assert!(html.contains(">dftl<") && html.contains("<title>dftl: 2</title>"));
    }
}
