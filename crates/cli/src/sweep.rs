//! `ftlab sweep`: a `[base]` run configuration and a `[grid]` of dotted config
//! keys, each with an array of values. Every combination is validated before any
//! runs, then all run in parallel; each row is written and flushed as its run
//! finishes, so an interrupted sweep keeps every finished row.

use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use rayon::prelude::*;
use toml::{Table, Value};

use ftlab_sim::{Report, RunConfig};

use crate::cli::{RowFormat, SweepArgs};
use crate::config::{load_table_text, relative_to, set_path, to_config};
use crate::error::CliError;
use crate::flatten::Cell;
use crate::output::{report_scalars, Sink};
use crate::plot::{self, PlotSpec};
use crate::progress::Bar;

/// One combination of grid values.
#[derive(Debug, Clone)]
pub struct Point {
    /// Its `run` index: the position in the product, last key fastest.
    pub run: usize,
    /// `(dotted key, value)` in the grid's key order.
    pub values: Vec<(String, Value)>,
    pub config: RunConfig,
}

impl Point {
    /// `ftl.kind = "pagemap", seed = 2`.
    pub fn describe(&self) -> String {
        self.values.iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>().join(", ")
    }
}

/// A sweep file: its grid points and its plots.
#[derive(Debug)]
pub struct Sweep {
    pub points: Vec<Point>,
    pub plots: Vec<PlotSpec>,
}

/// Reads a sweep file: every point of its grid and every `[[plot]]`, validated.
pub fn load_sweep(path: &Path) -> Result<Sweep, CliError> {
    let text = std::fs::read_to_string(path).map_err(|error| CliError::Read { path: path.to_owned(), error })?;
    let origin = path.display().to_string();
    let mut file = load_table_text(&text, &origin)?;
    for key in file.keys() {
        if key != "base" && key != "grid" && key != "plot" {
            return Err(CliError::Usage(format!(
                "{origin}: unknown key `{key}`; a sweep file has a [base] run config, a [grid] table and optional [[plot]] tables"
            )));
        }
    }
    let plots: Vec<PlotSpec> = match file.remove("plot") {
        None => Vec::new(),
        Some(v) => v.try_into().map_err(|e: toml::de::Error| CliError::Usage(format!("{origin}: [[plot]]: {e}")))?,
    };
    let mut base = match file.remove("base") {
        Some(Value::Table(t)) => t,
        None => Table::new(),
        Some(_) => return Err(CliError::Usage(format!("{origin}: `base` must be a table ([base])"))),
    };
    if let Some(Value::Table(w)) = base.get_mut("workload") {
        if let Some(Value::String(trace)) = w.get_mut("trace") {
            *trace = relative_to(path, trace);
        }
    }
    to_config(base.clone(), &format!("{origin}: [base]"))?;
    let grid = match file.remove("grid") {
        Some(Value::Table(t)) if !t.is_empty() => t,
        _ => {
            return Err(CliError::Usage(format!(
                "{origin}: needs a non-empty [grid], e.g. \"ftl.kind\" = [\"pagemap\", \"pure-page-level\"]"
            )))
        }
    };
    let mut axes: Vec<(String, Vec<Value>)> = Vec::new();
    for (key, values) in grid {
        match values {
            Value::Array(a) if !a.is_empty() => {
                let a = if key == "workload.trace" {
                    a.into_iter()
                        .map(|v| if let Value::String(s) = v { Value::String(relative_to(path, &s)) } else { v })
                        .collect()
                } else {
                    a
                };
                axes.push((key, a));
            }
            _ => {
                return Err(CliError::Usage(format!("{origin}: grid key `{key}` must be a non-empty array of values")))
            }
        }
    }
    let total = axes.iter().map(|(_, v)| v.len()).product::<usize>();
    let mut points = Vec::with_capacity(total);
    for run in 0..total {
        // Mixed-radix digits of `run`, the last axis fastest.
        let mut rest = run;
        let mut values = vec![(String::new(), Value::Boolean(false)); axes.len()];
        for (i, (key, vals)) in axes.iter().enumerate().rev() {
            values[i] = (key.clone(), vals[rest % vals.len()].clone());
            rest /= vals.len();
        }
        let mut table = base.clone();
        for (k, v) in &values {
            set_path(&mut table, k, v.clone())?;
        }
        let mut point = Point { run, values, config: RunConfig::default() };
        let name = format!("{origin}: grid point {run} of {total} ({})", point.describe());
        point.config = to_config(table, &name)?;
        ftlab_sim::validate(&point.config).map_err(|e| CliError::Usage(format!("{name}: {e}")))?;
        points.push(point);
    }
    let grid: Vec<String> = axes.iter().map(|(k, _)| k.clone()).collect();
    let columns = header(&points)?;
    for plot in &plots {
        plot.validate(&grid, &columns, &origin)?;
    }
    Ok(Sweep { points, plots })
}

/// Columns: run, the grid keys, the report's scalars (but those a grid key
/// already names), error.
fn header(points: &[Point]) -> Result<Vec<String>, CliError> {
    let grid: Vec<String> =
        points.first().map(|p| p.values.iter().map(|(k, _)| k.clone()).collect()).unwrap_or_default();
    let mut cols = vec!["run".to_owned()];
    cols.extend(grid.iter().cloned());
    // The report's own `error` is the last column, with integrity failures too.
    cols.extend(
        report_scalars(&Report::default())?.into_iter().map(|(n, _)| n).filter(|n| !grid.contains(n) && n != "error"),
    );
    cols.push("error".into());
    Ok(cols)
}

/// A finished run as `(column, JSON value)`, in header order.
fn row(point: &Point, result: &Result<Report, String>, columns: &[String]) -> Result<Vec<serde_json::Value>, CliError> {
    use serde_json::Value as J;
    let mut cells: Vec<(String, J)> = vec![("run".into(), J::from(point.run))];
    for (k, v) in &point.values {
        cells.push((k.clone(), serde_json::to_value(v).unwrap_or(J::Null)));
    }
    let mut error = J::Null;
    match result {
        Ok(report) => {
            for (name, cell) in report_scalars(report)?.into_iter().filter(|(n, _)| n != "error") {
                let v = match cell {
                    Cell::Null => J::Null,
                    Cell::Bool(b) => J::Bool(b),
                    Cell::Int(i) => serde_json::to_value(i).unwrap_or(J::Null),
                    Cell::Float(x) => serde_json::Number::from_f64(x).map_or(J::Null, J::Number),
                    Cell::Str(s) => J::String(s),
                };
                cells.push((name, v));
            }
            if let Some(e) = &report.error {
                error = J::String(e.clone());
            } else if report.integrity != "ok" {
                error = J::String(format!("integrity: {}", report.integrity));
            }
        }
        Err(e) => error = J::String(e.clone()),
    }
    cells.push(("error".into(), error));
    Ok(columns.iter().map(|c| cells.iter().find(|(n, _)| n == c).map_or(J::Null, |(_, v)| v.clone())).collect())
}

/// A CSV cell: strings raw, null empty, anything else as JSON.
fn csv_cell(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn csv_line(cells: impl IntoIterator<Item = String>) -> Result<String, CliError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(cells).map_err(|e| CliError::Failed(format!("cannot write CSV: {e}")))?;
    let bytes = w.into_inner().map_err(|e| CliError::Failed(format!("cannot write CSV: {e}")))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// One JSON object per line, keys in column order.
fn json_line(columns: &[String], values: &[serde_json::Value]) -> String {
    let fields: Vec<String> =
        columns.iter().zip(values).map(|(c, v)| format!("{}:{v}", serde_json::Value::String(c.clone()))).collect();
    format!("{{{}}}\n", fields.join(","))
}

/// `ftlab sweep`.
pub fn run(args: &SweepArgs) -> Result<(), CliError> {
    let Sweep { points, plots } = load_sweep(&args.file)?;
    let total = points.len();
    if args.dry_run {
        let mut out = Sink::open(args.out.as_deref())?;
        let mut text = format!("{total} runs, all valid:\n");
        for p in &points {
            text.push_str(&format!("  run {}: {}\n", p.run, p.describe()));
        }
        return out.write(&text);
    }
    let columns = header(&points)?;
    let sink = Mutex::new(Sink::open(args.out.as_deref())?);
    if args.format == RowFormat::Csv {
        lock(&sink).write(&csv_line(columns.iter().cloned())?)?;
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs.unwrap_or(0))
        .build()
        .map_err(|e| CliError::Usage(format!("cannot start {} worker threads: {e}", args.jobs.unwrap_or(0))))?;
    let bar = Bar::new(args.quiet, Some(total as u64), "runs");
    let failed = Mutex::new(Vec::new());
    let finished = Mutex::new(Vec::new());
    let start = Instant::now();
    let written = pool.install(|| {
        points.par_iter().try_for_each(|point| -> Result<(), CliError> {
            // A run stopped by an error after it started has a report (with `error`).
            let result = ftlab_sim::run(&point.config, &mut |_| {}).or_else(|e| match e {
                ftlab_sim::SimError::Stopped { report, .. } => Ok(*report),
                e => Err(e.to_string()),
            });
            let values = row(point, &result, &columns)?;
            let line = match args.format {
                RowFormat::Csv => csv_line(values.iter().map(csv_cell))?,
                RowFormat::Jsonl => json_line(&columns, &values),
            };
            lock(&sink).write(&line)?;
            lock(&finished).push((point.run, values.clone()));
            if let Some(serde_json::Value::String(e)) = values.last() {
                let msg = format!("run {} ({}): {e}", point.run, point.describe());
                bar.println(&format!("ftlab sweep: {msg}"));
                lock(&failed).push(msg);
            }
            bar.set_message(format!("last: run {}", point.run));
            bar.inc(1);
            Ok(())
        })
    });
    bar.finish();
    written?;
    let mut finished = finished.into_inner().unwrap_or_else(|e| e.into_inner());
    finished.sort_by_key(|(run, _)| *run);
    let rows: Vec<Vec<serde_json::Value>> = finished.into_iter().map(|(_, v)| v).collect();
    let dir = args.file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    for plot in &plots {
        plot::draw(plot, &columns, &rows, dir)?;
        if !args.quiet {
            eprintln!("ftlab sweep: plotted {}", dir.join(&plot.file).display());
        }
    }
    let failed = failed.into_inner().unwrap_or_else(|e| e.into_inner());
    if !args.quiet {
        let to = args.out.as_ref().map_or_else(|| "stdout".to_owned(), |p| p.display().to_string());
        eprintln!(
            "ftlab sweep: {total} runs in {:.1} s, {} failed; rows written to {to}",
            start.elapsed().as_secs_f64(),
            failed.len()
        );
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(CliError::Failed(format!("{} of {total} runs failed (see their `error` column)", failed.len())))
    }
}

/// The lock, even if another thread panicked holding it (its data is still fine
/// for appending rows).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.toml");
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    #[test]
    fn the_grid_is_a_cartesian_product_last_key_fastest() {
        let (_d, p) = write(
            "[base.workload]\nmax_requests = 10\n[grid]\n\"ftl.kind\" = [\"pagemap\", \"pure-page-level\"]\nseed = [1, 2, 3]\n",
        );
        let points = load_sweep(&p).map(|s| s.points).unwrap();
        assert_eq!(points.len(), 6);
        assert_eq!(points[1].describe(), "ftl.kind = \"pagemap\", seed = 2");
        assert_eq!(points[3].config.ftl.kind, "pure-page-level");
        assert_eq!(points[3].config.seed, Some(1));
        assert_eq!(points[5].config.workload.max_requests, Some(10));
    }

    #[test]
    fn a_bad_point_is_named_before_anything_runs() {
        let (_d, p) = write("[grid]\n\"ftl.kind\" = [\"pagemap\", \"nosuch\"]\n");
        let e = load_sweep(&p).map(|s| s.points).unwrap_err().to_string();
        assert!(e.contains("grid point 1 of 2") && e.contains("nosuch") && e.contains("pagemap"), "{e}");
        let (_d, p) = write("[grid]\nseed = []\n");
        assert!(load_sweep(&p).map(|s| s.points).unwrap_err().to_string().contains("non-empty array"));
        let (_d, p) = write("[grid]\nseed = [1]\n[extra]\n");
        assert!(load_sweep(&p).map(|s| s.points).unwrap_err().to_string().contains("`extra`"));
    }

    #[test]
    fn header_skips_report_fields_named_by_the_grid() {
        let (_d, p) = write("[grid]\nseed = [1, 2]\n");
        let cols = header(&load_sweep(&p).map(|s| s.points).unwrap()).unwrap();
        assert_eq!(cols.iter().filter(|c| *c == "seed").count(), 1);
        assert_eq!(cols[0], "run");
        assert_eq!(cols.last().unwrap(), "error");
    }
}
