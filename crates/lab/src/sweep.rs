//! Sweeps: a `[base]` run configuration and a `[grid]` of dotted config keys,
//! each with an array of values, plus optional `[[plot]]` specs. Every
//! combination is validated before any runs ([`load_sweep`]), then all run in
//! parallel ([`run_points`]), each finished row handed to the caller as it
//! finishes, so a front end can stream it out.
//!
//! `[base]` may instead name a run config file (`base = "run.toml"`, relative
//! to the sweep file). Optional `[[case]]` tables are named variants laid over
//! the base before the grid (`name`, a `set` table of dotted keys, and an
//! `admit` test the host applies, [`crate::host_admit`]); every case runs with
//! every grid point (the grid may then be left out), and the rows get a `case`
//! column. `[[table]]` files and line plots (`kind = "lines"`) are in
//! [`crate::sweep_out`].
//!
//! ```toml
//! [base]
//! seed = 1
//! [base.workload]
//! max_requests = 10000
//!
//! [grid]
//! "ftl.kind" = ["pagemap", "pure-page-level"]
//! seed = [1, 2, 3]
//!
//! [[plot]]
//! file = "waf.svg"     # relative to the sweep file's folder
//! x = "ftl.kind"       # a grid key: one group of bars per value
//! y = "waf"            # a numeric report field (a column)
//! ```

use std::path::Path;
use std::sync::Mutex;

use rayon::prelude::*;
use serde::Deserialize;
use toml::{Table, Value};

use ftlab_ftl::ErrorKind;
use ftlab_sim::{ConfigError, Report, RunConfig, SimError};

use crate::flatten::{report_scalars, Cell};
use crate::host_admit::{self, AdmitSpec, Refusal};
use crate::overlay::{load_file, load_table_text, relative_to, set_path, to_config};
use crate::sweep_out::{Line, LineSpec, Lines, Table as OutTable, TableSpec};
use crate::LabError;

/// One combination of grid values.
#[derive(Debug, Clone)]
pub struct Point {
    /// Its `run` index: the position in the product, last key fastest.
    pub run: usize,
    /// `(dotted key, value)` in the grid's key order.
    pub values: Vec<(String, Value)>,
    pub config: RunConfig,
    /// The `[[case]]` it runs, if the sweep has cases.
    pub case: Option<String>,
    /// Tasks the case's host admission refused (left out of `config`).
    pub refused: Vec<Refusal>,
}

impl Point {
    /// `ftl.kind = "pagemap", seed = 2`.
    pub fn describe(&self) -> String {
        let case = self.case.iter().map(|c| format!("case = {:?}", c));
        case.chain(self.values.iter().map(|(k, v)| format!("{k} = {v}"))).collect::<Vec<_>>().join(", ")
    }

    /// A point of a grid without cases.
    pub fn new(run: usize, values: Vec<(String, Value)>, config: RunConfig) -> Point {
        Point { run, values, config, case: None, refused: Vec::new() }
    }
}

/// One `[[case]]` of a sweep file: a named variant of `[base]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseSpec {
    /// Its value in the `case` column (unique).
    pub name: String,
    /// Dotted config keys and their values, set on `[base]` before the grid's.
    #[serde(default)]
    pub set: Table,
    /// An admission test the host applies before the run.
    pub admit: Option<AdmitSpec>,
}

/// One `[[plot]]` of a sweep file: a grouped bar chart of one column over grid
/// values. Where several runs share an `x` and `series` value (other grid keys
/// vary, e.g. seeds), a bar is their mean; runs that failed are left out.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    /// Output figure, relative to the sweep file's folder: `.svg`, `.png` or
    /// `.pdf` ([`crate::figure`]).
    pub file: String,
    pub title: Option<String>,
    /// The x axis's title (default: the dictionary's name of `x`,
    /// [`crate::fields`]).
    #[serde(default)]
    pub x_label: Option<String>,
    /// The legend's title (default: the dictionary's name of `series`).
    #[serde(default)]
    pub legend: Option<String>,
    /// Names for the values of `x` and of `series`, in the grid's order (a
    /// grid value that is a table, a generator, has no short name of its own).
    #[serde(default)]
    pub x_names: Vec<String>,
    #[serde(default)]
    pub series_names: Vec<String>,
    /// Grid key (or `case`, in a sweep of named runs) whose values are the
    /// groups on the x axis.
    pub x: String,
    /// Grid key (or `case`) whose values are the bars of a group (one bar per
    /// group if absent).
    pub series: Option<String>,
    /// Report field plotted (e.g. `waf`, `write_us.max`).
    pub y: String,
    /// The y axis's title (default: the dictionary's name and unit of `y`); a
    /// bare unit (`"us"`) or a title ending in one (`"max write (us)"`) gives
    /// the unit the axis scales (µs shown as ms or s).
    pub y_label: Option<String>,
    /// Report fields stacked on `y`, bottom up: one bar per group made of
    /// `y` and these, a legend entry each (a time split, e.g. 002 Figure 7's
    /// service, cleaning and idle). Needs no `series` (default none).
    #[serde(default)]
    pub stack: Vec<String>,
}

impl PlotSpec {
    /// Checks that `x`, `series` and `y` name columns of the sweep's output.
    pub fn validate(&self, grid: &[String], columns: &[String], origin: &str) -> Result<(), LabError> {
        for (what, key) in [("x", Some(&self.x)), ("series", self.series.as_ref())] {
            if let Some(k) = key {
                if !grid.contains(k) {
                    return Err(LabError::config(
                        format!("plot.{what}"),
                        format!(
                            "{origin}: plot `{}`: {what} = \"{k}\" is not a grid key; grid keys: {}",
                            self.file,
                            grid.join(", ")
                        ),
                    ));
                }
            }
        }
        for y in std::iter::once(&self.y).chain(&self.stack) {
            if !columns.contains(y) {
                return Err(LabError::config(
                    if *y == self.y { "plot.y" } else { "plot.stack" },
                    format!("{origin}: plot `{}`: \"{y}\" is not a report field (see crates/cli/FIELDS.md)", self.file),
                ));
            }
        }
        if !self.stack.is_empty() && self.series.is_some() {
            return Err(LabError::config(
                "plot.series",
                format!(
                    "{origin}: plot `{}`: a stacked plot (stack = [...]) draws one bar per group; leave `series` out",
                    self.file
                ),
            ));
        }
        Ok(())
    }
}

/// A sweep file: its grid points, its bar plots, its tables and its line plots.
#[derive(Debug)]
pub struct Sweep {
    pub points: Vec<Point>,
    pub plots: Vec<PlotSpec>,
    pub tables: Vec<OutTable>,
    pub lines: Vec<Lines>,
    /// The columns of its rows: [`header`], then the FTL gauges
    /// (`ftl_gauges.NAME`) its bar plots name, then `error`. A run whose FTL
    /// has no such gauge leaves the cell empty.
    pub columns: Vec<String>,
}

impl Sweep {
    /// Whether a run's report is needed after its row (by a table with
    /// `each` or a line plot).
    pub fn keeps_reports(&self) -> bool {
        !self.lines.is_empty() || !self.tables.is_empty()
    }
}

/// What one run gives the sweep's tables and line plots.
#[derive(Debug, Clone, Default)]
pub struct Kept {
    /// Per `[[table]]`, its rows of this run.
    pub tables: Vec<Vec<Vec<serde_json::Value>>>,
    /// Per line plot, this run's line (none if it did not run).
    pub lines: Vec<Option<Line>>,
}

/// What the sweep's tables and line plots take of one finished run.
pub fn keep(sweep: &Sweep, row: &[serde_json::Value], report: Option<&Report>) -> Result<Kept, LabError> {
    Ok(Kept {
        tables: sweep.tables.iter().map(|t| t.rows(row, report)).collect::<Result<_, _>>()?,
        lines: sweep.lines.iter().map(|l| l.line(row, report)).collect::<Result<_, _>>()?,
    })
}

const SWEEP_KEYS: &str = "a sweep file has [base] (a run config, or the path of one), optional [[case]] \
    tables, a [grid] table, and optional [[table]] and [[plot]] tables";

/// Reads a sweep file: every point of its grid and every `[[plot]]` and
/// `[[table]]`, validated.
pub fn load_sweep(path: &Path) -> Result<Sweep, LabError> {
    let text = std::fs::read_to_string(path).map_err(|error| LabError::Read { path: path.to_owned(), error })?;
    let origin = path.display().to_string();
    let mut file = load_table_text(&text, &origin)?;
    for key in file.keys() {
        if !["base", "grid", "plot", "case", "table"].contains(&key.as_str()) {
            return Err(LabError::config(key.as_str(), format!("{origin}: unknown key `{key}`; {SWEEP_KEYS}")));
        }
    }
    let (plots, line_specs) = plot_specs(file.remove("plot"), &origin)?;
    let cases: Vec<CaseSpec> = array_of(file.remove("case"), "case", &origin)?;
    let table_specs: Vec<TableSpec> = array_of(file.remove("table"), "table", &origin)?;
    let base = match file.remove("base") {
        Some(Value::Table(mut t)) => {
            // An inline base's trace is relative to the sweep file (a base
            // file's, to that file: `load_file` did it).
            if let Some(Value::Table(w)) = t.get_mut("workload") {
                if let Some(Value::String(trace)) = w.get_mut("trace") {
                    *trace = relative_to(path, trace);
                }
            }
            t
        }
        None => Table::new(),
        Some(Value::String(f)) => load_file(Path::new(&relative_to(path, &f)))?,
        Some(_) => {
            return Err(LabError::config(
                "base",
                format!("{origin}: `base` must be a table ([base]) or the path of a run config file"),
            ))
        }
    };
    to_config(base.clone(), &format!("{origin}: [base]"))?;
    let grid = match file.remove("grid") {
        Some(Value::Table(t)) => t,
        None => Table::new(),
        Some(_) => return Err(LabError::config("grid", format!("{origin}: `grid` must be a table ([grid])"))),
    };
    let points = expand_cases(&base, &cases, grid, &origin, Some(path))?;
    let mut grid: Vec<String> =
        points.first().map(|p| p.values.iter().map(|(k, _)| k.clone()).collect()).unwrap_or_default();
    let mut columns = header(&points)?;
    // An FTL's gauges are columns only where a plot or a table names them: they depend on
    // the scheme, so a report's fixed fields cannot list them.
    // They go with the report's fields: before the provenance and `error`.
    let tail = columns.split_off(columns.len() - 1 - PROVENANCE_COLUMNS.len());
    let named_by_tables =
        table_specs.iter().flat_map(|t| &t.columns).map(|c| c.split_once('=').map_or(c.as_str(), |(_, f)| f));
    for field in plots.iter().map(|p| p.y.as_str()).chain(named_by_tables) {
        if field.starts_with(GAUGE_PREFIX) && !columns.iter().any(|c| c == field) {
            columns.push(field.to_owned());
        }
    }
    columns.extend(tail);
    // Bars can also be grouped or told apart by the named run.
    if !cases.is_empty() {
        grid.push("case".to_owned());
    }
    for plot in &plots {
        plot.validate(&grid, &columns, &origin)?;
    }
    let tables = table_specs.into_iter().map(|t| OutTable::new(t, &columns, &origin)).collect::<Result<_, _>>()?;
    let lines = line_specs
        .into_iter()
        .map(|l| Lines::new(l, &columns, !cases.is_empty(), &origin))
        .collect::<Result<_, _>>()?;
    Ok(Sweep { points, plots, tables, lines, columns })
}

/// How a report names an FTL's gauges (`Ftl::gauges` of `ftlab_ftl`) as fields.
const GAUGE_PREFIX: &str = "ftl_gauges.";

/// `[[name]]` tables as `T`s; errors name the table and its position.
fn array_of<T: serde::de::DeserializeOwned>(v: Option<Value>, name: &str, origin: &str) -> Result<Vec<T>, LabError> {
    let Some(v) = v else { return Ok(Vec::new()) };
    let Value::Array(items) = v else {
        return Err(LabError::config(name, format!("{origin}: `{name}` must be an array of tables ([[{name}]])")));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let id = item.get("file").or_else(|| item.get("name")).and_then(Value::as_str).map(str::to_owned);
            item.try_into().map_err(|e: toml::de::Error| {
                let id = id.map_or_else(String::new, |f| format!(" (`{f}`)"));
                LabError::config(name, format!("{origin}: [[{name}]] {}{id}: {}", i + 1, e.message().trim()))
            })
        })
        .collect()
}

/// The `[[plot]]` tables: bar charts (`kind = "bars"`, the default) and line
/// plots (`kind = "lines"`).
fn plot_specs(v: Option<Value>, origin: &str) -> Result<(Vec<PlotSpec>, Vec<LineSpec>), LabError> {
    let mut bars = Vec::new();
    let mut lines = Vec::new();
    let items: Vec<Table> = array_of(v, "plot", origin)?;
    for (i, mut item) in items.into_iter().enumerate() {
        let kind = item.remove("kind");
        let one = Some(Value::Array(vec![Value::Table(item)]));
        let at =
            |e: LabError| LabError::config("plot", e.to_string().replace("[[plot]] 1", &format!("[[plot]] {}", i + 1)));
        match kind.as_ref().map(|k| k.as_str()) {
            None | Some(Some("bars")) => bars.extend(array_of::<PlotSpec>(one, "plot", origin).map_err(at)?),
            Some(Some("lines")) => lines.extend(array_of::<LineSpec>(one, "plot", origin).map_err(at)?),
            _ => {
                return Err(LabError::config(
                    "plot.kind",
                    format!(
                        "{origin}: [[plot]] {}: kind = {} is not \"bars\" or \"lines\"",
                        i + 1,
                        kind.map_or_else(String::new, |k| k.to_string())
                    ),
                ))
            }
        }
    }
    Ok((bars, lines))
}

/// The most points one sweep may have: each is a validated configuration held
/// in memory before anything runs.
pub const MAX_POINTS: usize = 1_000_000;

/// Every point of `grid` (dotted config keys, each with a non-empty array of
/// values) over the `base` run configuration, in `run` order (the product of
/// the keys in the table's order, the last key fastest), each validated before
/// anything runs. `origin` names the sweep in errors; with `file`, relative
/// `workload.trace` values in the grid are taken relative to that file's folder.
pub fn expand(base: &Table, grid: Table, origin: &str, file: Option<&Path>) -> Result<Vec<Point>, LabError> {
    expand_cases(base, &[], grid, origin, file)
}

/// As [`expand`], for every case in turn (the grid fastest); with cases the
/// grid may be empty. A case's `admit` test runs on each of its points now,
/// before anything runs.
pub fn expand_cases(
    base: &Table,
    cases: &[CaseSpec],
    grid: Table,
    origin: &str,
    file: Option<&Path>,
) -> Result<Vec<Point>, LabError> {
    if grid.is_empty() && cases.is_empty() {
        return Err(LabError::config(
            "grid",
            format!("{origin}: needs a non-empty [grid], e.g. \"ftl.kind\" = [\"pagemap\", \"pure-page-level\"]"),
        ));
    }
    let mut axes: Vec<(String, Vec<Value>)> = Vec::new();
    for (key, values) in grid {
        match values {
            Value::Array(a) if !a.is_empty() => {
                let a = match file {
                    Some(path) if key == "workload.trace" => a
                        .into_iter()
                        .map(|v| if let Value::String(s) = v { Value::String(relative_to(path, &s)) } else { v })
                        .collect(),
                    _ => a,
                };
                axes.push((key, a));
            }
            _ => {
                return Err(LabError::config(
                    key.as_str(),
                    format!("{origin}: grid key `{key}` must be a non-empty array of values"),
                ))
            }
        }
    }
    for (i, c) in cases.iter().enumerate() {
        if cases[..i].iter().any(|d| d.name == c.name) {
            return Err(LabError::config("case.name", format!("{origin}: two [[case]] tables are named `{}`", c.name)));
        }
    }
    // Checked: a grid of many keys overflows usize (16 keys of 16 values is
    // 2^64 points, which wrapped to "0 runs").
    let per_case = axes.iter().try_fold(1usize, |n, (_, v)| n.checked_mul(v.len()));
    let total = per_case.and_then(|n| n.checked_mul(cases.len().max(1))).filter(|&n| n <= MAX_POINTS);
    let (Some(per_case), Some(total)) = (per_case, total) else {
        let sizes: Vec<String> = axes.iter().map(|(k, v)| format!("{k}: {}", v.len())).collect();
        let points = axes.iter().fold(cases.len().max(1) as f64, |n, (_, v)| n * v.len() as f64);
        return Err(LabError::config(
            "grid",
            format!(
                "{origin}: the grid has {points:.3e} points ({}{}), more than the {MAX_POINTS} one sweep may hold; \
             use fewer values per key, or split it into several sweeps",
                sizes.join(", "),
                if cases.is_empty() { String::new() } else { format!(", times {} cases", cases.len()) }
            ),
        ));
    };
    let mut points = Vec::with_capacity(total);
    for run in 0..total {
        let case = cases.get(run / per_case);
        // Mixed-radix digits of `run`, the last axis fastest.
        let mut rest = run % per_case;
        let mut values = vec![(String::new(), Value::Boolean(false)); axes.len()];
        for (i, (key, vals)) in axes.iter().enumerate().rev() {
            values[i] = (key.clone(), vals[rest % vals.len()].clone());
            rest /= vals.len();
        }
        let mut table = base.clone();
        for (k, v) in case.iter().flat_map(|c| c.set.iter()) {
            // A case's trace is relative to the sweep file, as the grid's.
            let v = match (file, k.as_str(), v) {
                (Some(path), "workload.trace", Value::String(s)) => Value::String(relative_to(path, s)),
                _ => v.clone(),
            };
            set_path(&mut table, k, v)?;
        }
        for (k, v) in values.iter() {
            set_path(&mut table, k, v.clone())?;
        }
        let mut point = Point::new(run, values, RunConfig::default());
        point.case = case.map(|c| c.name.clone());
        let name = format!("{origin}: grid point {run} of {total} ({})", point.describe());
        point.config = to_config(table, &name)?;
        // Each point logs to its own file (fio numbers its jobs' logs alike).
        if let Some(log) = &point.config.metrics.latency_log {
            point.config.metrics.latency_log = Some(ftlab_sim::config::tagged_path(log, &run.to_string()));
        }
        ftlab_sim::validate(&point.config).map_err(|e| point_config_error(&name, e))?;
        if let Some(spec) = case.and_then(|c| c.admit.as_ref()) {
            point.refused = host_admit::refusals(spec, &point.config, &name)?;
            host_admit::without(&mut point.config, &point.refused);
        }
        points.push(point);
    }
    Ok(points)
}

/// The columns of a sweep's rows: run, the grid keys, the report's scalars (but
/// those a grid key already names), error.
pub fn header(points: &[Point]) -> Result<Vec<String>, LabError> {
    let grid: Vec<String> =
        points.first().map(|p| p.values.iter().map(|(k, _)| k.clone()).collect()).unwrap_or_default();
    let mut cols = vec!["run".to_owned()];
    if points.iter().any(|p| p.case.is_some()) {
        cols.push("case".to_owned());
    }
    cols.extend(grid.iter().cloned());
    // The report's own `error` is the last column, with integrity failures too.
    // `energy` is a report section only runs with `[device.energy]` have: its
    // fields are columns when some point sets it.
    let energy = points.iter().any(|p| p.config.device.energy.is_some());
    let fields = Report { energy: energy.then(Default::default), ..Report::default() };
    cols.extend(report_scalars(&fields)?.into_iter().map(|(n, _)| n).filter(|n| !grid.contains(n) && n != "error"));
    // How each row was made: its own effective configuration (`ftlab rerun
    // ROWS.csv` runs a row again from it).
    cols.extend(PROVENANCE_COLUMNS.iter().map(|c| (*c).to_owned()));
    cols.push("error".into());
    Ok(cols)
}

/// The provenance columns of a sweep's rows, before `error`.
pub const PROVENANCE_COLUMNS: [&str; 5] =
    ["provenance.command", "provenance.ftlab", "provenance.git_revision", "provenance.config", "provenance.cwd"];

/// The error of grid point `name` whose run refused its configuration before
/// time zero: a configuration error keeps its key; a trace's names
/// `workload.trace`, any other the workload.
fn point_config_error(name: &str, e: SimError) -> LabError {
    let key = match &e {
        SimError::Config(c) => c.key.as_str(),
        SimError::Trace(_) => "workload.trace",
        _ => "workload",
    };
    let problem = match &e {
        SimError::Config(c) => &c.problem,
        _ => &e.to_string(),
    };
    LabError::config(key, format!("{name}: {problem}"))
}

/// Why a sweep point has no report: the run could not start. Its message is
/// the row's `error`; its kind is kept for front ends (a configuration error
/// names its key).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PointError {
    /// The configuration cannot run, found before time zero.
    #[error("{0}")]
    Config(ConfigError),
    /// Anything else that stopped the run before it started (a trace that
    /// cannot be read, a workload that yields nothing, the flash refusing
    /// the format).
    #[error("{0}")]
    Run(SimError),
}

impl PointError {
    /// The kind of failure ([`SimError::kind`]; a configuration error is
    /// [`ErrorKind::Invalid`]).
    pub fn kind(&self) -> ErrorKind {
        match self {
            PointError::Config(_) => ErrorKind::Invalid,
            PointError::Run(e) => e.kind(),
        }
    }

    /// The key path of a configuration error.
    pub fn key(&self) -> Option<&str> {
        match self {
            PointError::Config(c) if !c.key.is_empty() => Some(&c.key),
            _ => None,
        }
    }
}

impl From<SimError> for PointError {
    fn from(e: SimError) -> Self {
        match e {
            SimError::Config(c) => PointError::Config(c),
            e => PointError::Run(e),
        }
    }
}

/// Runs one point. A run stopped by an error after it started gives its report
/// (with `error`); a run that could not start gives the error, of its kind.
/// The tasks a case's host admission refused are put back into the report,
/// refused.
pub fn run_point(point: &Point) -> Result<Report, PointError> {
    let mut result = ftlab_sim::run(&point.config, &mut |_| {}).or_else(|e| match e {
        SimError::Stopped { report, .. } => Ok(*report),
        e => Err(PointError::from(e)),
    });
    if let Ok(report) = &mut result {
        host_admit::restore(report, &point.refused);
    }
    result
}

/// A finished run as JSON values, one per column of `columns` (from [`header`]).
/// The last, `error`, is a string when the run failed: it could not start, it
/// stopped with an error, or its data integrity check failed.
pub fn row(
    point: &Point,
    result: &Result<Report, PointError>,
    columns: &[String],
) -> Result<Vec<serde_json::Value>, LabError> {
    use serde_json::Value as J;
    let mut cells: Vec<(String, J)> = vec![("run".into(), J::from(point.run))];
    if let Some(c) = &point.case {
        cells.push(("case".into(), J::String(c.clone())));
    }
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
        Err(e) => error = J::String(e.to_string()),
    }
    let prov = crate::provenance::of("sweep", &point.config, None).map_err(|e| {
        LabError::config("provenance", format!("run {}: cannot write its configuration: {e}", point.run))
    })?;
    cells.extend([
        ("provenance.command".into(), J::String(prov.command)),
        ("provenance.ftlab".into(), J::String(prov.ftlab)),
        ("provenance.git_revision".into(), prov.git_revision.map_or(J::Null, J::String)),
        ("provenance.config".into(), J::String(prov.config)),
        ("provenance.cwd".into(), prov.cwd.map_or(J::Null, J::String)),
    ]);
    cells.push(("error".into(), error));
    Ok(columns.iter().map(|c| cells.iter().find(|(n, _)| n == c).map_or(J::Null, |(_, v)| v.clone())).collect())
}

/// The message in a row's `error` column, if the run failed.
pub fn row_error(values: &[serde_json::Value]) -> Option<&str> {
    values.last().and_then(serde_json::Value::as_str)
}

/// A finished run: its `run` index and its row.
pub type Row = (usize, Vec<serde_json::Value>);

/// Runs `points` on `jobs` worker threads (0: one per core) and calls `on_row`
/// with each point and its row (see [`row`]) as the run finishes, from the worker
/// that ran it. The first error `on_row` returns stops the sweep (runs under way
/// finish) and is returned. Returns every row, by `run` index.
pub fn run_points<E, F>(points: &[Point], columns: &[String], jobs: usize, on_row: F) -> Result<Vec<Row>, E>
where
    E: From<LabError> + Send,
    F: Fn(&Point, &[serde_json::Value]) -> Result<(), E> + Sync,
{
    let rows = run_points_keeping(points, columns, jobs, |_, _| Ok(()), on_row)?;
    Ok(rows.into_iter().map(|(run, values, ())| (run, values)).collect())
}

/// As [`run_points`], and `keep` takes what it wants of each finished run (its
/// row, and its report if it ran) before the report is dropped; returns every
/// row with what was kept, by `run` index.
pub fn run_points_keeping<T, E, K, F>(
    points: &[Point],
    columns: &[String],
    jobs: usize,
    keep: K,
    on_row: F,
) -> Result<Vec<(usize, Vec<serde_json::Value>, T)>, E>
where
    T: Send,
    E: From<LabError> + Send,
    K: Fn(&[serde_json::Value], Option<&Report>) -> Result<T, LabError> + Sync,
    F: Fn(&Point, &[serde_json::Value]) -> Result<(), E> + Sync,
{
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| LabError::Threads { jobs, error: e.to_string() })?;
    let finished = Mutex::new(Vec::with_capacity(points.len()));
    pool.install(|| {
        points.par_iter().try_for_each(|point| -> Result<(), E> {
            let result = run_point(point);
            let values = row(point, &result, columns)?;
            let kept = keep(&values, result.as_ref().ok())?;
            on_row(point, &values)?;
            lock(&finished).push((point.run, values, kept));
            Ok(())
        })
    })?;
    let mut finished = finished.into_inner().unwrap_or_else(|e| e.into_inner());
    finished.sort_by_key(|(run, _, _)| *run);
    Ok(finished)
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
    fn traces_are_relative_to_the_file_that_names_them() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("exp");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("run.toml"), "[workload]\ntrace = \"out/a.trace\"\ntrace_format = \"mqsim\"\n")
            .unwrap();
        let p = sub.join("s.toml");
        std::fs::write(
            &p,
            "base = \"run.toml\"\n[[case]]\nname = \"a\"\n[[case]]\nname = \"b\"\nset = { \"workload.trace\" = \"out/b.trace\" }\n",
        )
        .unwrap();
        let points = load_sweep(&p).map(|s| s.points).unwrap();
        // The base file's trace once relative to its folder, not twice; a
        // case's relative to the sweep file.
        assert_eq!(points[0].config.workload.trace.as_deref(), Some(sub.join("out/a.trace").as_path()));
        assert_eq!(points[1].config.workload.trace.as_deref(), Some(sub.join("out/b.trace").as_path()));
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
    fn a_grid_too_large_to_hold_is_refused_not_wrapped() {
        // 16 keys of 16 values: 2^64 points, which wrapped to 0 in usize.
        let keys: String = (0..16).map(|k| format!("\"workload.k{k}\" = [{}]\n", vec!["1"; 16].join(", "))).collect();
        let (_d, p) = write(&format!("[grid]\n{keys}"));
        let e = load_sweep(&p).map(|s| s.points.len()).unwrap_err().to_string();
        assert!(e.contains("1.845e19 points") && e.contains("split it"), "{e}");
        // Seven keys of 1,000 values overflowed into a capacity panic.
        let keys: String = (0..7).map(|k| format!("\"workload.k{k}\" = [{}]\n", vec!["1"; 1000].join(", "))).collect();
        let (_d, p) = write(&format!("[grid]\n{keys}"));
        let e = load_sweep(&p).map(|s| s.points.len()).unwrap_err().to_string();
        assert!(e.contains("1.000e21 points") && e.contains("workload.k6: 1000"), "{e}");
        // Just over the limit without overflow is refused too, before anything
        // is built.
        let (_d, p) = write(&format!(
            "[grid]\nseed = [{}]\n\"workload.max_requests\" = [{}]\n",
            vec!["1"; 1001].join(", "),
            vec!["1"; 1000].join(", ")
        ));
        let e = load_sweep(&p).map(|s| s.points.len()).unwrap_err().to_string();
        assert!(e.contains("1.001e6 points") && e.contains("1000000"), "{e}");
    }

    #[test]
    fn cases_run_with_every_grid_point_case_slowest_and_the_grid_set_last() {
        let (_d, p) = write(
            "[base.workload]\nmax_requests = 10\n\
             [[case]]\nname = \"pm\"\nset = { \"ftl.kind\" = \"pagemap\", seed = 9 }\n\
             [[case]]\nname = \"nftl\"\nset = { ftl = { kind = \"nftl\" } }\n\
             [grid]\nseed = [1, 2]\n",
        );
        let points = load_sweep(&p).unwrap().points;
        assert_eq!(points.len(), 4);
        assert_eq!(points[1].describe(), "case = \"pm\", seed = 2");
        assert_eq!((points[1].config.ftl.kind.as_str(), points[1].config.seed), ("pagemap", Some(2)));
        assert_eq!(points[2].case.as_deref(), Some("nftl"));
        assert_eq!(points[2].config.ftl.kind, "nftl");
        let cols = header(&points).unwrap();
        assert_eq!(cols[..3], ["run", "case", "seed"]);
        // Without a grid, one run per case.
        let (_d, p) = write("[[case]]\nname = \"a\"\n[[case]]\nname = \"b\"\nset = { seed = 4 }\n");
        let points = load_sweep(&p).unwrap().points;
        assert_eq!(points.iter().map(|p| p.config.seed).collect::<Vec<_>>(), [None, Some(4)]);
        let (_d, p) = write("[[case]]\nname = \"a\"\nsett = {}\n");
        let e = load_sweep(&p).unwrap_err().to_string();
        assert!(e.contains("[[case]] 1 (`a`)") && e.contains("sett"), "{e}");
    }

    #[test]
    fn bars_can_be_grouped_by_case_only_in_a_sweep_of_cases() {
        let plot = "[[plot]]\nfile = \"a.svg\"\nx = \"seed\"\nseries = \"case\"\ny = \"iops\"\n";
        let (_d, p) = write(&format!(
            "[base.workload]\nmax_requests = 10\n[[case]]\nname = \"a\"\n[grid]\nseed = [1, 2]\n{plot}"
        ));
        assert_eq!(load_sweep(&p).unwrap().points.len(), 2);
        let (_d, p) = write(&format!("[base.workload]\nmax_requests = 10\n[grid]\nseed = [1, 2]\n{plot}"));
        let e = load_sweep(&p).map(|s| s.points).unwrap_err().to_string();
        assert!(e.contains("series = \"case\" is not a grid key"), "{e}");
    }

    #[test]
    fn errors_keep_their_key() {
        let key = |text: &str| load_sweep(&write(text).1).unwrap_err().key().map(str::to_owned);
        assert_eq!(key("[grid]\n\"ftl.gc_free_blocks\" = [2, 0]\n").as_deref(), Some("ftl.gc_free_blocks"));
        assert_eq!(key("[grid]\nseed = []\n").as_deref(), Some("seed"));
        assert_eq!(key("[grid]\n\"device.blocks_per_plan\" = [3]\n").as_deref(), Some("device.blocks_per_plan"));
        assert_eq!(key("[extra]\n").as_deref(), Some("extra"));
        assert_eq!(key("grid = 1\n").as_deref(), Some("grid"));
        assert_eq!(
            key("[grid]\nseed = [1]\n[[plot]]\nfile = \"a.svg\"\nx = \"seed\"\ny = \"nosuch\"\n").as_deref(),
            Some("plot.y")
        );
        assert_eq!(
            key("[grid]\nseed = [1]\n[[table]]\nfile = \"a.csv\"\ncolumns = [\"nosuch\"]\n").as_deref(),
            Some("table.columns")
        );
        // A point that fails when it runs keeps its key and kind too.
        let point = Point::new(
            0,
            Vec::new(),
            to_config(load_table_text("[device]\nchip = \"nosuch\"\n", "t").unwrap(), "t").unwrap(),
        );
        let e = run_point(&point).unwrap_err();
        assert_eq!((e.key(), e.kind()), (Some("device.chip"), ErrorKind::Invalid), "{e}");
        let row = row(&point, &Err(e), &header(std::slice::from_ref(&point)).unwrap()).unwrap();
        assert!(row_error(&row).is_some_and(|m| m.contains("nosuch")), "{row:?}");
    }

    #[test]
    fn header_skips_report_fields_named_by_the_grid() {
        let (_d, p) = write("[grid]\nseed = [1, 2]\n");
        let cols = header(&load_sweep(&p).map(|s| s.points).unwrap()).unwrap();
        assert_eq!(cols.iter().filter(|c| *c == "seed").count(), 1);
        assert_eq!(cols[0], "run");
        assert_eq!(cols.last().unwrap(), "error");
    }

    #[test]
    fn a_gauge_a_plot_names_is_a_column_filled_where_the_ftl_has_it() {
        let (_d, p) = write(
            "[base.device]\nblocks_per_plane = 64\n[base.workload.generator]\nkind = \"uniform\"\nrequests = 300\n\
             read_fraction = 0.5\n[grid]\n\"ftl.kind\" = [\"dftl\", \"pagemap\"]\n\
             [[plot]]\nfile = \"h.svg\"\nx = \"ftl.kind\"\ny = \"ftl_gauges.cmt_hit_ratio\"\n",
        );
        let sweep = load_sweep(&p).unwrap();
        let n = sweep.columns.len();
        assert_eq!(sweep.columns[n - 7..n - 5], ["ftl_gauges.cmt_hit_ratio", "provenance.command"]);
        assert_eq!(sweep.columns.last().unwrap(), "error");
        assert_eq!(sweep.columns[..n - 7], header(&sweep.points).unwrap()[..n - 7]);
        let rows = run_points(&sweep.points, &sweep.columns, 1, |_, _| Ok::<_, LabError>(())).unwrap();
        let ratio = |run: usize| rows[run].1[n - 7].clone();
        // Each row says how it was made: its own configuration.
        let config = |run: usize| rows[run].1[n - 3].as_str().unwrap_or_default().to_owned();
        assert!(config(0).contains("kind = \"dftl\"") && config(1).contains("kind = \"pagemap\""), "{}", config(0));
        assert_eq!(rows[0].1[n - 6], serde_json::Value::from("sweep"));
        assert!(ratio(0).as_f64().is_some_and(|r| r > 0.0 && r < 1.0), "{:?}", ratio(0));
        assert_eq!(ratio(1), serde_json::Value::Null, "pagemap has no CMT");
        // Without a plot naming it, no gauge column.
        let (_d, p) = write("[grid]\n\"ftl.kind\" = [\"dftl\"]\n");
        assert!(!load_sweep(&p).unwrap().columns.iter().any(|c| c.starts_with("ftl_gauges.")));
    }

    #[test]
    fn energy_columns_are_in_the_rows_when_a_run_sets_device_energy() {
        let base = "[base.device]\nblocks_per_plane = 64\n[base.precondition]\nfill = true\n\
                    [base.workload.generator]\nkind = \"uniform\"\nrequests = 300\nread_fraction = 0.5\n";
        let (_d, p) = write(&format!(
            "{base}[[case]]\nname = \"plain\"\n[[case]]\nname = \"metered\"\n\
             set = {{ \"device.energy\" = {{ read_nj = 825, program_nj = 9900, erase_nj = 66000 }} }}\n"
        ));
        let sweep = load_sweep(&p).unwrap();
        let col = |name: &str| sweep.columns.iter().position(|c| c == name).unwrap();
        let (rd, wr) = (col("energy.host_read_access_nj"), col("energy.host_write_access_nj"));
        let rows = run_points(&sweep.points, &sweep.columns, 1, |_, _| Ok::<_, LabError>(())).unwrap();
        assert_eq!(rows[0].1[wr], serde_json::Value::Null, "no [device.energy], no energy");
        assert_eq!(rows[1].1[rd].as_f64(), Some(825.0), "pagemap reads a flash page per host page read");
        assert!(rows[1].1[wr].as_f64().unwrap() >= 9900.0);
        // Without a run that sets it, no energy columns.
        let (_d, p) = write(&format!("{base}[grid]\nseed = [1, 2]\n"));
        assert!(!load_sweep(&p).unwrap().columns.iter().any(|c| c.starts_with("energy.")));
    }

    #[test]
    fn each_point_gets_its_own_latency_log() {
        let (_d, p) = write(
            "[base.metrics]\nlatency_log = \"out/lat.log\"\n[base.workload.generator]\nkind = \"uniform\"\nrequests = 500\n[grid]\nseed = [1, 2]\n",
        );
        let points = load_sweep(&p).unwrap().points;
        let logs: Vec<_> = points.iter().map(|p| p.config.metrics.latency_log.clone().unwrap()).collect();
        assert_eq!(logs, [std::path::PathBuf::from("out/lat.0.log"), std::path::PathBuf::from("out/lat.1.log")]);
    }

    #[test]
    fn points_run_in_parallel_and_rows_come_back_by_run_index() {
        let (_d, p) = write(
            "[base]\nseed = 3\n[base.device]\nblocks_per_plane = 64\n[base.workload.generator]\nkind = \"uniform\"\nrequests = 500\n[grid]\n\"ftl.kind\" = [\"pagemap\", \"nftl\"]\nseed = [1, 2]\n",
        );
        let points = load_sweep(&p).unwrap().points;
        let columns = header(&points).unwrap();
        let seen = Mutex::new(Vec::new());
        let rows = run_points(&points, &columns, 2, |point, values| -> Result<(), LabError> {
            assert_eq!(values.len(), columns.len());
            assert_eq!(row_error(values), None);
            lock(&seen).push(point.run);
            Ok(())
        })
        .unwrap();
        assert_eq!(rows.iter().map(|(run, _)| *run).collect::<Vec<_>>(), [0, 1, 2, 3]);
        let mut seen = seen.into_inner().unwrap();
        seen.sort_unstable();
        assert_eq!(seen, [0, 1, 2, 3]);
        let waf = columns.iter().position(|c| c == "waf").unwrap();
        assert!(rows.iter().all(|(_, r)| r[waf].as_f64().unwrap() >= 1.0));
        assert_eq!(rows[1].1[2], serde_json::json!(2));
    }
}
