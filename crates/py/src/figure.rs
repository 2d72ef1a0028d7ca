//! `ftlab.plot`: a figure drawn by ftlab's one plotting path (the CLI's sweep
//! plots and the HTML report use the same, [`ftlab_lab::sweep_plot`] and
//! [`ftlab_lab::figure`]).

use std::path::PathBuf;

use pyo3::prelude::*;
use serde::Deserialize;

use crate::errors;

/// Bars: the rows as a table.
#[derive(Deserialize)]
struct Table {
    columns: Vec<String>,
    rows: Vec<Vec<serde_json::Value>>,
}

/// Lines: a name and its points each.
#[derive(Deserialize)]
struct Lines {
    lines: Vec<(String, Vec<(f64, f64)>)>,
}

/// Draws a figure: `kind` "bars" (`spec_json` a sweep file's `[[plot]]` table
/// as JSON, `data_json` `{"columns": [...], "rows": [[...], ...]}`) or
/// "lines" (a `kind = "lines"` plot table, `data_json` `{"lines": [[name,
/// [[x, y], ...]], ...]}`). Returns the SVG; with `path`, also writes it as
/// SVG, PNG or PDF by its extension.
#[pyfunction]
#[pyo3(signature = (kind, spec_json, data_json, path = None))]
pub(crate) fn figure(
    py: Python<'_>,
    kind: &str,
    spec_json: &str,
    data_json: &str,
    path: Option<PathBuf>,
) -> PyResult<String> {
    let bad = |what: String| errors::config(py, "plot", format!("plot: {what}"));
    let fig = match kind {
        "bars" => {
            let spec: ftlab_lab::sweep::PlotSpec = serde_json::from_str(spec_json).map_err(|e| bad(format!("{e}")))?;
            let data: Table = serde_json::from_str(data_json).map_err(|e| bad(format!("the data: {e}")))?;
            ftlab_lab::sweep_plot::bars(&spec, &data.columns, &data.rows)
        }
        "lines" => {
            let spec: ftlab_lab::sweep_out::LineSpec =
                serde_json::from_str(spec_json).map_err(|e| bad(format!("{e}")))?;
            let data: Lines = serde_json::from_str(data_json).map_err(|e| bad(format!("the data: {e}")))?;
            let lines: Vec<&ftlab_lab::sweep_out::Line> = data.lines.iter().collect();
            ftlab_lab::sweep_plot::lines(&spec, &lines)
        }
        other => return Err(bad(format!("kind = {other:?}; use \"bars\" or \"lines\""))),
    }
    .map_err(|e| errors::lab(py, e))?;
    if let Some(path) = path {
        fig.write(&path).map_err(|e| errors::lab(py, e))?;
    }
    Ok(fig.svg())
}

/// The response-time distribution of a report (JSON text) as the HTML
/// report draws it; the SVG, also written to `path` (SVG, PNG or PDF).
#[pyfunction]
#[pyo3(signature = (report_json, path = None))]
pub(crate) fn latency_figure(py: Python<'_>, report_json: &str, path: Option<PathBuf>) -> PyResult<String> {
    let report: serde_json::Value = serde_json::from_str(report_json)
        .map_err(|e| errors::config(py, "report", format!("latency_figure: the report is not JSON: {e}")))?;
    let fig = ftlab_lab::html::latency_figure(&report)
        .ok_or_else(|| errors::config(py, "report", "latency_figure: the run measured no request".into()))?;
    if let Some(path) = path {
        fig.write(&path).map_err(|e| errors::lab(py, e))?;
    }
    Ok(fig.svg())
}
