//! What a sweep writes besides its rows: `[[table]]` CSV files of chosen
//! columns, one row per run or one per element of a report array ([`Each`]),
//! and the points of line `[[plot]]`s (`kind = "lines"`), one line per run.
//!
//! ```toml
//! [[table]]
//! file = "throughput.csv"                  # relative to the sweep file's folder
//! each = "throughput"                      # optional: a row per interval, not per run
//! columns = ["ftl=case", "t_s=throughput.t_s", "throughput.write_pages_per_s"]
//! dialect = "ftlab"                        # or "python": as Python's csv module writes
//!
//! [[plot]]
//! kind = "lines"
//! file = "write.svg"
//! each = "throughput"
//! x = "throughput.t_s"
//! y = "throughput.write_pages_per_s"
//! series = "case"                          # a run column naming each line (default: case, else run)
//! ```
//!
//! A column is `FIELD` or `NAME=FIELD`; a field is a column of the sweep's rows
//! (`run`, `case`, a grid key, a report field such as `waf` or `rber.p99`) or,
//! with `each`, a field of the array's rows (`tasks.name`). Every field is
//! checked before anything runs.

use serde::Deserialize;
use serde_json::Value as J;

use ftlab_sim::Report;

use crate::each::Each;
use crate::LabError;

/// How a table's cells are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// As the sweep's own CSV: `\n` line ends, `true`/`false`, numbers as in
    /// the JSON report, null empty.
    #[default]
    Ftlab,
    /// As Python's `csv` module writes `json.load`ed values: `\r\n` line ends,
    /// `True`/`False`, floats as Python's `repr` (`1e-05`, `2.0`), null empty.
    /// Files an earlier Python script wrote regenerate byte for byte.
    Python,
}

/// `[[table]]` of a sweep file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    /// Output CSV, relative to the sweep file's folder (or `--out-dir`).
    pub file: String,
    /// A report array: one row per element of it in each run, not one per run.
    pub each: Option<String>,
    /// `FIELD` or `NAME=FIELD`, in order.
    pub columns: Vec<String>,
    #[serde(default)]
    pub dialect: Dialect,
}

/// Axis scale of a line plot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    #[default]
    Linear,
    Log,
}

/// `[[plot]]` with `kind = "lines"`: one line per run through the rows of a
/// report array.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineSpec {
    /// Output figure (`.svg`, `.png` or `.pdf`), relative to the sweep file's
    /// folder (or `--out-dir`).
    pub file: String,
    pub title: Option<String>,
    /// The report array (`throughput`, `rber_cdf`, ...).
    pub each: String,
    /// Fields of its rows.
    pub x: String,
    pub y: String,
    /// A run column whose value names each run's line (default `case` when the
    /// sweep has cases, else `run`).
    pub series: Option<String>,
    /// Axis titles (default: the dictionary's names and units of `x` and
    /// `y`, [`crate::fields`]; a title ending in a unit, `"time (s)"`, gives
    /// the unit the axis scales).
    pub x_label: Option<String>,
    pub y_label: Option<String>,
    /// The legend's title (default: the dictionary's name of `series`).
    #[serde(default)]
    pub legend: Option<String>,
    #[serde(default)]
    pub x_scale: Scale,
    /// Shown range of x (default: the data's).
    pub x_range: Option<[f64; 2]>,
    /// Draw steps (each value holds until the next x), as a CDF is drawn.
    #[serde(default)]
    pub steps: bool,
}

/// Where a table cell comes from.
#[derive(Debug, Clone, PartialEq)]
enum Source {
    /// A column of the run's row.
    Run(usize),
    /// A field of the array's row.
    Each(String),
    /// A report field left out of reports it does not apply to, hence not a run
    /// column (`max_read_block_us`): null where absent.
    Optional(String),
}

/// The report's scalar fields that only some runs have ([`Source::Optional`]).
fn optional_fields() -> Vec<String> {
    let full = Report { max_read_block_us: Some(0.0), energy: Some(Default::default()), ..Report::default() };
    let always: Vec<String> = crate::flatten::report_scalars(&Report::default())
        .map(|c| c.into_iter().map(|(n, _)| n).collect())
        .unwrap_or_default();
    crate::flatten::report_scalars(&full)
        .map(|c| c.into_iter().map(|(n, _)| n).filter(|n| !always.contains(n)).collect())
        .unwrap_or_default()
}

fn resolve(field: &str, each: Option<Each>, columns: &[String], what: &str) -> Result<Source, LabError> {
    let key = "table.columns";
    if let Some(i) = columns.iter().position(|c| c == field) {
        return Ok(Source::Run(i));
    }
    if optional_fields().iter().any(|f| f == field) {
        return Ok(Source::Optional(field.to_owned()));
    }
    match each {
        Some(e) if e.has_field(field) => Ok(Source::Each(field.to_owned())),
        Some(e) => Err(LabError::config(
            key,
            format!(
                "{what}: `{field}` is neither a run column (run, case, a grid key or a report field, see \
             crates/cli/FIELDS.md) nor a field of each row: {}",
                e.field_list()
            ),
        )),
        None => Err(LabError::config(
            key,
            format!(
                "{what}: `{field}` is not a run column (run, case, a grid key or a report field, see \
             crates/cli/FIELDS.md); fields of a report array need `each`, e.g. each = \"tasks\""
            ),
        )),
    }
}

fn parse_each(each: Option<&str>, what: &str, key: &str) -> Result<Option<Each>, LabError> {
    each.map(|e| Each::parse(e).map_err(|m| LabError::config(key, format!("{what}: {m}")))).transpose()
}

/// A validated `[[table]]`.
#[derive(Debug, Clone)]
pub struct Table {
    pub spec: TableSpec,
    each: Option<Each>,
    header: Vec<String>,
    sources: Vec<Source>,
}

impl Table {
    /// Checks `spec` against the sweep's `columns`; `origin` names the sweep.
    pub fn new(spec: TableSpec, columns: &[String], origin: &str) -> Result<Table, LabError> {
        let what = format!("{origin}: table `{}`", spec.file);
        let each = parse_each(spec.each.as_deref(), &what, "table.each")?;
        if spec.columns.is_empty() {
            return Err(LabError::config(
                "table.columns",
                format!("{what}: `columns` is empty: name at least one field"),
            ));
        }
        let mut header = Vec::new();
        let mut sources = Vec::new();
        for c in &spec.columns {
            let (name, field) = c.split_once('=').map_or((c.trim(), c.trim()), |(n, f)| (n.trim(), f.trim()));
            if name.is_empty() {
                return Err(LabError::config(
                    "table.columns",
                    format!("{what}: column `{c}` has an empty name (write NAME=FIELD)"),
                ));
            }
            sources.push(resolve(field, each, columns, &what)?);
            header.push(name.to_owned());
        }
        Ok(Table { spec, each, header, sources })
    }

    /// The table's rows of one run (`row`: its sweep row; `report`: its report
    /// if it ran). A run that did not start has no rows under `each`.
    pub fn rows(&self, row: &[J], report: Option<&Report>) -> Result<Vec<Vec<J>>, LabError> {
        let optional = match report {
            Some(r) if self.sources.iter().any(|s| matches!(s, Source::Optional(_))) => {
                serde_json::to_value(r).map_err(LabError::Serialize)?
            }
            _ => J::Null,
        };
        let cell = |s: &Source, e: Option<&serde_json::Map<String, J>>| match s {
            Source::Run(i) => row.get(*i).cloned().unwrap_or(J::Null),
            Source::Each(f) => e.and_then(|e| e.get(f)).cloned().unwrap_or(J::Null),
            Source::Optional(f) => f.split('.').try_fold(&optional, |v, k| v.get(k)).cloned().unwrap_or(J::Null),
        };
        match (self.each, report) {
            (None, _) => Ok(vec![self.sources.iter().map(|s| cell(s, None)).collect()]),
            (Some(_), None) => Ok(Vec::new()),
            (Some(each), Some(r)) => {
                Ok(each.rows(r)?.iter().map(|e| self.sources.iter().map(|s| cell(s, Some(e))).collect()).collect())
            }
        }
    }

    /// The CSV text: header, then `rows`.
    pub fn text<'a>(&self, rows: impl IntoIterator<Item = &'a Vec<J>>) -> Result<String, LabError> {
        let terminator = match self.spec.dialect {
            Dialect::Ftlab => csv::Terminator::Any(b'\n'),
            Dialect::Python => csv::Terminator::CRLF,
        };
        let mut w = csv::WriterBuilder::new().terminator(terminator).from_writer(Vec::new());
        let fail =
            |e: &dyn std::fmt::Display| LabError::config("table.file", format!("cannot write {}: {e}", self.spec.file));
        w.write_record(&self.header).map_err(|e| fail(&e))?;
        for r in rows {
            w.write_record(r.iter().map(|v| cell_text(v, self.spec.dialect))).map_err(|e| fail(&e))?;
        }
        let bytes = w.into_inner().map_err(|e| fail(&e))?;
        String::from_utf8(bytes).map_err(|e| fail(&e))
    }
}

/// A cell in `dialect`.
pub fn cell_text(v: &J, dialect: Dialect) -> String {
    match (v, dialect) {
        (J::Null, _) => String::new(),
        (J::String(s), _) => s.clone(),
        (J::Bool(b), Dialect::Python) => if *b { "True" } else { "False" }.to_owned(),
        (J::Number(n), Dialect::Python) if n.is_f64() => n.as_f64().map(python_repr).unwrap_or_default(),
        (other, _) => other.to_string(),
    }
}

/// Python's `repr` of a float: the shortest digits that read back exactly (as
/// Rust's `{:?}`), in exponent form below 1e-4 or from 1e16 with a signed,
/// two-digit exponent (`1e-05`, `1.5e+16`).
pub fn python_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let s = format!("{x:?}");
    match s.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = e.strip_prefix('-').map_or(("+", e), |d| ("-", d));
            format!("{m}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

/// One run's line: its label (the series column's value) and its `(x, y)` points.
pub type Line = (String, Vec<(f64, f64)>);

/// A validated line plot.
#[derive(Debug, Clone)]
pub struct Lines {
    pub spec: LineSpec,
    each: Each,
    series: usize,
}

impl Lines {
    /// Checks `spec` against the sweep's `columns` (`has_cases`: whether the
    /// sweep has a `case` column, the default series).
    pub fn new(spec: LineSpec, columns: &[String], has_cases: bool, origin: &str) -> Result<Lines, LabError> {
        let what = format!("{origin}: plot `{}`", spec.file);
        let each = parse_each(Some(&spec.each), &what, "plot.each")?.unwrap_or(Each::Tasks);
        for (key, field) in [("x", &spec.x), ("y", &spec.y)] {
            if !each.has_field(field) {
                return Err(LabError::config(
                    format!("plot.{key}"),
                    format!(
                        "{what}: {key} = \"{field}\" is not a field of each = \"{}\"; its fields: {}",
                        spec.each,
                        each.field_list()
                    ),
                ));
            }
        }
        if let Some([lo, hi]) = spec.x_range {
            if lo.partial_cmp(&hi) != Some(std::cmp::Ordering::Less) || (spec.x_scale == Scale::Log && lo <= 0.0) {
                return Err(LabError::config(
                    "plot.x_range",
                    format!(
                        "{what}: x_range = [{lo}, {hi}] must be increasing{}",
                        if spec.x_scale == Scale::Log { ", and positive with x_scale = \"log\"" } else { "" }
                    ),
                ));
            }
        }
        let series = spec.series.clone().unwrap_or_else(|| if has_cases { "case" } else { "run" }.to_owned());
        let series = columns.iter().position(|c| *c == series).ok_or_else(|| {
            LabError::config(
                "plot.series",
                format!("{what}: series = \"{series}\" is not a run column (run, case or a grid key)"),
            )
        })?;
        Ok(Lines { spec, each, series })
    }

    /// One run's line: its label and its `(x, y)` points (rows whose x or y is
    /// not a number are left out). A run that did not start has no line.
    pub fn line(&self, row: &[J], report: Option<&Report>) -> Result<Option<Line>, LabError> {
        let Some(report) = report else { return Ok(None) };
        let label = match row.get(self.series) {
            Some(J::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => String::new(),
        };
        let points = self
            .each
            .rows(report)?
            .iter()
            .filter_map(|r| Some((r.get(&self.spec.x)?.as_f64()?, r.get(&self.spec.y)?.as_f64()?)))
            .collect();
        Ok(Some((label, points)))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn python_repr_matches_python() {
        for (x, s) in [
            (0.0, "0.0"),
            (1683.0, "1683.0"),
            (1e-5, "1e-05"),
            (1.2663801734674022e-05, "1.2663801734674022e-05"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1.0077014925373133, "1.0077014925373133"),
            (-2.5e-7, "-2.5e-07"),
        ] {
            assert_eq!(python_repr(x), s);
        }
        assert_eq!(cell_text(&json!(true), Dialect::Python), "True");
        assert_eq!(cell_text(&json!(true), Dialect::Ftlab), "true");
        assert_eq!(cell_text(&json!(3), Dialect::Python), "3");
        assert_eq!(cell_text(&json!(null), Dialect::Python), "");
    }

    fn columns() -> Vec<String> {
        ["run", "case", "waf", "error"].iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_table_names_its_bad_field_and_writes_its_dialect() {
        let spec = |cols: &[&str], each: Option<&str>| TableSpec {
            file: "t.csv".into(),
            each: each.map(str::to_owned),
            columns: cols.iter().map(|s| (*s).to_owned()).collect(),
            dialect: Dialect::Python,
        };
        let e = Table::new(spec(&["run", "wafx"], None), &columns(), "s.toml").unwrap_err().to_string();
        assert!(e.contains("s.toml") && e.contains("table `t.csv`") && e.contains("`wafx`"), "{e}");
        let e = Table::new(spec(&["tasks.nam"], Some("tasks")), &columns(), "s.toml").unwrap_err().to_string();
        assert!(e.contains("`tasks.nam`") && e.contains("tasks.name"), "{e}");
        let t = Table::new(spec(&["ftl=case", "waf"], None), &columns(), "s.toml").unwrap();
        let rows = t.rows(&[json!(0), json!("a"), json!(1.0), json!(null)], None).unwrap();
        assert_eq!(t.text(&rows).unwrap(), "ftl,waf\r\na,1.0\r\n");
    }

    /// Write pages per second over time, one line per run.
    fn line_spec() -> LineSpec {
        LineSpec {
            file: "p.svg".into(),
            title: None,
            each: "throughput".into(),
            x: "throughput.t_s".into(),
            y: "throughput.write_pages_per_s".into(),
            series: None,
            x_label: None,
            y_label: None,
            legend: None,
            x_scale: Scale::Linear,
            x_range: None,
            steps: false,
        }
    }

    #[test]
    fn a_line_plot_of_a_missing_field_is_named() {
        let spec = LineSpec { y: "throughput.write_pagez".into(), ..line_spec() };
        let e = Lines::new(spec.clone(), &columns(), true, "s.toml").unwrap_err().to_string();
        assert!(e.contains("plot `p.svg`") && e.contains("y = \"throughput.write_pagez\""), "{e}");
        assert!(e.contains("throughput.write_pages_per_s"), "{e}");
        let ok = LineSpec { y: "throughput.write_pages_per_s".into(), ..spec.clone() };
        let e = Lines::new(ok.clone(), &columns(), false, "s.toml");
        assert!(e.is_ok());
        let e = Lines::new(LineSpec { series: Some("nope".into()), ..ok }, &columns(), true, "s.toml").unwrap_err();
        assert!(e.to_string().contains("series = \"nope\""), "{e}");
    }

    #[test]
    fn a_line_is_its_runs_x_and_y_labelled_by_its_series() {
        let spec = line_spec();
        let lines = Lines::new(spec, &columns(), true, "s.toml").unwrap();
        let mut r = Report::default();
        r.throughput.interval_s = 0.5;
        r.throughput.write_pages = vec![10, 20];
        r.throughput.read_pages = vec![7, 9];
        let (label, points) =
            lines.line(&[json!(3), json!("sip"), json!(1.0), json!(null)], Some(&r)).unwrap().unwrap();
        assert_eq!(label, "sip");
        assert_eq!(points, [(0.5, 20.0), (1.0, 40.0)]);
        assert!(lines.line(&[json!(3), json!("sip")], None).unwrap().is_none());
    }
}
