//! Self-contained HTML reports: one file with inline SVG plots and no network
//! fetch (no script, no stylesheet or font from elsewhere), readable at a
//! glance. [`report_html`] draws one run's report (the JSON of
//! `ftlab run -f json`); [`sweep_html`] compares the rows of a sweep (the CSV
//! or JSON lines of `ftlab sweep`). `ftlab report` and the Python package's
//! `Report.to_html()` both call these.

use std::fmt::Write as _;

use serde_json::Value;

use crate::figure::{nines, Axis, Figure, Line, Scale};
use crate::LabError;

const STYLE: &str = "body{font-family:sans-serif;max-width:1000px;margin:1em auto;color:#222}\
table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}\
th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}figure{margin:1em 0}\
figcaption{font-weight:bold}svg.ftlab-figure{width:100%;max-width:600px;height:auto;display:block}.note{color:#666}";

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

/// A figure on the page: its caption and the figure's SVG, drawn by
/// ftlab's one plotting path ([`crate::figure`]), scaled to the page.
fn embed(caption: &str, fig: &Figure) -> String {
    format!("<figure><figcaption>{}</figcaption>{}</figure>\n", esc(caption), fig.svg())
}

/// Lines of `(name, points)`.
fn lines_of(series: Vec<(String, Vec<(f64, f64)>)>) -> Vec<Line> {
    series.into_iter().map(|(name, points)| Line { name, points, markers_only: false }).collect()
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

/// The response-time distribution of a run's report (`report`: the JSON of
/// `ftlab run -f json`) as a figure: a line per operation, percentiles along x
/// with as much room for the tail as for the body (as HdrHistogram's and wrk's
/// percentile plots), response times up on a log axis. None when the run
/// measured no request.
pub fn latency_figure(report: &Value) -> Option<Figure> {
    let cdf: Vec<(String, Vec<(f64, f64)>)> = ["read", "write", "trim"]
        .into_iter()
        .filter_map(|op| {
            let l = &report[format!("{op}_us")];
            (f(l, "count").unwrap_or(0.0) > 0.0).then(|| (op.to_owned(), percentile_points(report, op, l)))
        })
        .collect();
    (!cdf.is_empty()).then(|| {
        Figure::lines(
            "latency-cdf",
            Axis::new("Percentile of requests", None).scale(Scale::Nines),
            Axis::new("Response time", Some("µs")).scale(Scale::Log),
            lines_of(cdf),
        )
        .legend(Some("Operation".into()))
    })
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
    }
    body.push_str("</table>\n");
    if let Some(fig) = latency_figure(report) {
        body += &embed("Response-time distribution by percentile", &fig);
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
        let series: Vec<(String, Vec<(f64, f64)>)> = [("read pages", &reads), ("write pages", &writes)]
            .into_iter()
            .filter(|(_, v)| v.iter().any(|x| *x > 0.0))
            .map(|(name, v)| (name.into(), v.iter().enumerate().map(|(i, y)| (i as f64 * step, *y)).collect()))
            .collect();
        let fig = Figure::lines(
            "throughput",
            Axis::new("Simulated time", Some("s")),
            Axis::new(format!("Host pages per {} s", num(step)), Some("pages")),
            lines_of(series),
        );
        body += &embed("Host throughput over time", &fig);
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
            let fig = Figure::lines(
                "waf-over-time",
                Axis::new("Simulated time", Some("s")),
                Axis::new("Flash programs per host page", None),
                lines_of(vec![("WAF".into(), points)]),
            );
            body += &embed("Write amplification over time", &fig);
        }
        let series: Vec<(String, Vec<(f64, f64)>)> = [("GC page programs", &gc), ("erases", &erases)]
            .into_iter()
            .filter(|(_, v)| v.iter().any(|x| *x > 0.0))
            .map(|(name, v)| (name.into(), v.iter().enumerate().map(|(i, y)| (i as f64 * step, *y)).collect()))
            .collect();
        if !series.is_empty() {
            let fig = Figure::lines(
                "gc-over-time",
                Axis::new("Simulated time", Some("s")),
                Axis::new(format!("Per {} s", num(step)), None),
                lines_of(series),
            );
            body += &embed("Garbage collection over time", &fig);
        }
    }
    // The FTL's own gauges (Janus-FTL's page-mapping area, for one), a plot
    // each: their scales differ. An FDP device's per-handle pages make one
    // plot of each handle's WAF, a zoned device's zone counts one of its
    // zone states.
    if let Some(gauges) = tp["gauges"].as_object().filter(|_| step > 0.0) {
        let values_of = |name: &str| -> Vec<f64> {
            gauges
                .get(name)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default()
        };
        let mut handles = Vec::new();
        for h in 0.. {
            let (host, media) =
                (values_of(&format!("fdp_host_pages_h{h}")), values_of(&format!("fdp_media_pages_h{h}")));
            if host.is_empty() {
                break;
            }
            // Each interval's WAF: the media pages it added over the host
            // pages it added (intervals without host pages left out).
            let mut points = Vec::new();
            let (mut last_host, mut last_media) = (0.0, 0.0);
            for (i, (h, m)) in host.iter().zip(&media).enumerate() {
                if h - last_host > 0.0 {
                    points.push((i as f64 * step, (m - last_media) / (h - last_host)));
                }
                (last_host, last_media) = (*h, *m);
            }
            if points.len() > 1 {
                handles.push((format!("handle {h}"), points));
            }
        }
        if !handles.is_empty() {
            let fig = Figure::lines(
                "waf-by-handle",
                Axis::new("Simulated time", Some("s")),
                Axis::new("Media pages per host page", None),
                lines_of(handles),
            );
            body += &embed("Write amplification by reclaim unit handle over time (FDP)", &fig);
        }
        let zones: Vec<(String, Vec<(f64, f64)>)> = ["zones_open", "zones_active", "zones_full", "zones_free"]
            .into_iter()
            .map(|n| (n.trim_start_matches("zones_").to_owned(), values_of(n)))
            .filter(|(_, v)| v.len() > 1)
            .map(|(n, v)| (n, v.iter().enumerate().map(|(i, y)| (i as f64 * step, *y)).collect()))
            .collect();
        if !zones.is_empty() {
            let fig = Figure::lines(
                "zone-states",
                Axis::new("Simulated time", Some("s")),
                Axis::new("Zones", None),
                lines_of(zones),
            );
            body += &embed("Zone states over time (ZNS)", &fig);
        }
        let drawn = |name: &str| {
            name.starts_with("zones_")
                || ["fdp_host_pages_h", "fdp_media_pages_h"]
                    .iter()
                    .any(|p| name.strip_prefix(p).is_some_and(|h| h.parse::<u32>().is_ok()))
        };
        for (name, values) in gauges.iter().filter(|(n, _)| !drawn(n)) {
            let points: Vec<(f64, f64)> = values
                .as_array()
                .map(|a| a.iter().enumerate().filter_map(|(i, v)| Some((i as f64 * step, v.as_f64()?))).collect())
                .unwrap_or_default();
            if points.len() > 1 {
                let id = format!("gauge-{}", name.replace(|c: char| !c.is_ascii_alphanumeric(), "-"));
                let label = crate::fields::field(&format!("ftl_gauges.{name}")).label;
                let fig = Figure::lines(
                    &id,
                    Axis::new("Simulated time", Some("s")),
                    Axis::new(label, None),
                    lines_of(vec![(name.clone(), points)]),
                );
                body += &embed(&format!("FTL gauge over time: {name}"), &fig);
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
            let fig = Figure::bars(
                "flash-ops",
                Axis::new("Flash operation", None),
                Axis::new("Operations", Some("operations")),
                kinds,
                purposes,
                values,
            )
            .legend(Some("Purpose".into()));
            body += &embed("Flash work by purpose (GC activity)", &fig);
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
        let fig = Figure::bars(
            "erase-counts",
            Axis::new("Erase count", None),
            Axis::new("Blocks", Some("blocks")),
            groups,
            vec!["blocks".into()],
            values,
        );
        body += &embed(&caption, &fig);
    } else if let (Some(lo), Some(mean), Some(hi)) = (f(e, "min"), f(e, "mean"), f(e, "max")) {
        // A report from before the distribution was recorded: its summary.
        let fig = Figure::bars(
            "erase-counts",
            Axis::new("", None),
            Axis::new("Erases per block", None),
            vec!["min".into(), "mean".into(), "max".into()],
            vec!["erases per block".into()],
            vec![vec![Some(lo)], vec![Some(mean)], vec![Some(hi)]],
        );
        body += &embed(&caption, &fig);
    }
    if let Some(points) = report.get("rber_cdf").and_then(Value::as_array) {
        let points: Vec<(f64, f64)> =
            points.iter().filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64()?))).collect();
        if points.len() > 1 {
            let fig = Figure::lines(
                "rber-cdf",
                Axis::new("Raw bit error rate", None).scale(Scale::Log),
                Axis::new("Fraction of blocks", None).range(Some([0.0, 1.0])),
                lines_of(vec![("blocks".into(), points)]),
            )
            .stacked_or_steps(true);
            body += &embed("RBER of the good blocks (CDF)", &fig);
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
        let fig = Figure::bars(
            &format!("compare-{i}"),
            Axis::new("Run", None),
            crate::fields::axis(name, None),
            labels.clone(),
            vec![(*name).to_owned()],
            values,
        );
        body += &embed(&format!("{what} ({name}) per run"), &fig);
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
    fn an_fdp_device_gets_its_handles_waf_and_a_zoned_one_its_zone_states() {
        let run = |ftl: &str| {
            let text = format!(
                "[device]\nchip = \"small-slc\"\nblocks_per_plane = 64\n[ftl]\n{ftl}\n[metrics]\nslowdown = false\n\
                 [[flow]]\nname = \"random\"\nqueue_depth = 4\nstream = 0\n[flow.workload.generator]\nkind = \"uniform\"\nrequests = 30000\n\
                 [[flow]]\nname = \"sequential\"\nqueue_depth = 4\nstream = 1\n[flow.workload.generator]\nkind = \"sequential\"\nrequests = 30000\n"
            );
            let config = ftlab_sim::RunConfig::from_toml(&text, "test").unwrap();
            report_html(&serde_json::to_value(ftlab_sim::run(&config, &mut |_| {}).unwrap()).unwrap(), "")
        };
        let fdp = run("kind = \"fdp\"\nhandles = 2\nisolation = \"persistently\"");
        assert!(fdp.contains("id=\"waf-by-handle\""));
        assert!(fdp.contains("data-name=\"handle 0\"") && fdp.contains("data-name=\"handle 1\""));
        assert!(!fdp.contains("id=\"gauge-fdp-host-pages-h0\""), "per-handle gauges are drawn together");
        assert!(!fdp.contains("id=\"zone-states\""));
        let zns = run("kind = \"zns-host\"\nstreams = 2");
        assert!(zns.contains("id=\"zone-states\""));
        assert!(zns.contains("data-name=\"full\"") && zns.contains("data-name=\"free\""));
        assert!(!zns.contains("id=\"gauge-zones-full\"") && !zns.contains("id=\"waf-by-handle\""));
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
        assert!(html.contains(">dftl<") && html.contains("<title>dftl: 2</title>"), "{html}");
    }
}
