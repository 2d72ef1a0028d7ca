//! `ftlab.sweep`: a grid of dotted config keys over a base configuration,
//! expanded and validated by [`ftlab_lab::sweep::expand`] (as `ftlab sweep`
//! does a sweep file's `[grid]`), run on local threads or handed out point by
//! point (for Ray tasks) as self-contained TOML texts.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use toml::{Table, Value};

use ftlab_lab::sweep::{self, Point};
use ftlab_lab::{overlay, LabError};

use crate::config::Config;
use crate::errors;
use crate::value::to_toml;

/// The points of a sweep, validated, and the columns of its rows (those of
/// `ftlab sweep`'s CSV).
#[pyclass(module = "ftlab")]
#[derive(Debug)]
pub struct SweepPlan {
    base: Table,
    points: Vec<Point>,
    columns: Vec<String>,
}

/// Expands `grid` (a dict of dotted config keys, each to a list of values)
/// over `base`: every point is validated before anything runs.
#[pyfunction]
pub(crate) fn plan_sweep(py: Python<'_>, base: &Config, grid: &Bound<'_, PyDict>) -> PyResult<SweepPlan> {
    let mut table = Table::new();
    for (k, v) in grid.iter() {
        let key: String = k.extract()?;
        let values = match to_toml(&v, &key)? {
            Value::Array(a) => a,
            _ => {
                return Err(errors::config(
                    py,
                    &key,
                    format!("sweep grid: `{key}` must be a list of values, e.g. {{\"{key}\": [..., ...]}}"),
                ))
            }
        };
        table.insert(key, Value::Array(values));
    }
    let base_table = base.table.clone();
    let origin = format!("sweep over {}", base.origin);
    let planned = py.allow_threads(|| -> Result<_, LabError> {
        let points = sweep::expand(&base_table, table, &origin, None)?;
        let columns = sweep::header(&points)?;
        Ok((points, columns))
    });
    let (points, columns) = planned.map_err(|e| errors::lab(py, e))?;
    Ok(SweepPlan { base: base_table, points, columns })
}

/// A point as a self-contained TOML text: its run index, its grid values and
/// its whole configuration ([`run_task`] runs it).
fn task_text(base: &Table, point: &Point) -> Result<String, LabError> {
    let mut config = base.clone();
    for (k, v) in &point.values {
        overlay::set_path(&mut config, k, v.clone())?;
    }
    let mut t = Table::new();
    t.insert("run".into(), Value::Integer(point.run as i64));
    t.insert("keys".into(), Value::Array(point.values.iter().map(|(k, _)| Value::String(k.clone())).collect()));
    t.insert("values".into(), Value::Array(point.values.iter().map(|(_, v)| v.clone()).collect()));
    t.insert("config".into(), Value::Table(config));
    // Where the sweep started: a row's `provenance.cwd` (relative trace paths
    // are relative to it), wherever the point runs.
    if let Ok(dir) = std::env::current_dir() {
        t.insert("cwd".into(), Value::String(dir.display().to_string()));
    }
    toml::to_string(&t).map_err(|e| LabError::config("config", format!("cannot write sweep point {}: {e}", point.run)))
}

/// Reads a point back from [`task_text`].
fn task_point(text: &str) -> Result<Point, LabError> {
    let mut t = overlay::load_table_text(text, "sweep task")?;
    let bad = || LabError::config("task", "sweep task: not a task written by SweepPlan.task");
    let run = t.get("run").and_then(Value::as_integer).ok_or_else(bad)?;
    let keys = t.get("keys").and_then(Value::as_array).ok_or_else(bad)?;
    let values = t.get("values").and_then(Value::as_array).ok_or_else(bad)?;
    let values = keys
        .iter()
        .zip(values)
        .map(|(k, v)| Ok((k.as_str().ok_or_else(bad)?.to_owned(), v.clone())))
        .collect::<Result<Vec<_>, LabError>>()?;
    let config = match t.remove("config") {
        Some(Value::Table(c)) => c,
        _ => return Err(bad()),
    };
    let run = usize::try_from(run).map_err(|_| bad())?;
    let config = overlay::to_config(config, &format!("sweep point {run}"))?;
    Ok(Point::new(run, values, config))
}

/// Runs the point `task` (from `SweepPlan.task`) and returns its row, as JSON
/// text of one value per column of `columns`. A run that fails gives its row
/// with the message in `error`, as `ftlab sweep` does.
///
/// `traces`: `(path in the task, local copy)` pairs for a worker without the
/// driver's files (the trace shipped with the task): the run reads the local
/// copy, and the row names the original path, as the driver's own run would.
#[pyfunction]
#[pyo3(signature = (task, columns, traces=None))]
pub(crate) fn run_task(
    py: Python<'_>,
    task: &str,
    columns: Vec<String>,
    traces: Option<Vec<(String, String)>>,
) -> PyResult<String> {
    let mut point = task_point(task).map_err(|e| errors::lab(py, e))?;
    let traces = traces.unwrap_or_default();
    // Whether the task names a trace by a relative path (before the shipped
    // copies replace them): then its row's provenance.cwd is the sweep's folder.
    let relative = ftlab_lab::provenance::relative_trace(&point.config);
    let local = |path: &mut Option<std::path::PathBuf>| {
        if let Some(p) = path.as_mut() {
            if let Some((_, copy)) = traces.iter().find(|(original, _)| std::path::Path::new(original) == p.as_path()) {
                *p = copy.into();
            }
        }
    };
    local(&mut point.config.workload.trace);
    for flow in &mut point.config.flows {
        local(&mut flow.workload.trace);
    }
    let row = py.allow_threads(|| sweep::row(&point, &sweep::run_point(&point), &columns));
    let mut row = row.map_err(|e| errors::lab(py, e))?;
    // The folder the sweep started in, not the worker's.
    let driver_cwd = overlay::load_table_text(task, "sweep task")
        .ok()
        .and_then(|t| t.get("cwd").and_then(Value::as_str).map(str::to_owned));
    if let (Some(i), Some(dir)) = (columns.iter().position(|c| c == "provenance.cwd"), driver_cwd) {
        row[i] = if relative { serde_json::Value::String(dir) } else { serde_json::Value::Null };
    }
    // The row names the task's paths (the workload, an error's message).
    for cell in &mut row {
        if let serde_json::Value::String(s) = cell {
            for (original, copy) in &traces {
                if s.contains(copy.as_str()) {
                    *s = s.replace(copy.as_str(), original);
                }
            }
        }
    }
    serde_json::to_string(&row).map_err(|e| errors::Error::new_err(format!("cannot serialize a row: {e}")))
}

#[pymethods]
impl SweepPlan {
    /// The columns of the rows: run, the grid keys, the report's scalar fields,
    /// error.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.columns.clone()
    }

    fn __len__(&self) -> usize {
        self.points.len()
    }

    /// Point `i` as a self-contained TOML text for `run_task` (on any machine).
    fn task(&self, py: Python<'_>, i: usize) -> PyResult<String> {
        let point = self.points.get(i).ok_or_else(|| {
            errors::config(py, "i", format!("sweep point {i}: the sweep has {} points", self.points.len()))
        })?;
        task_text(&self.base, point).map_err(|e| errors::lab(py, e))
    }

    /// Runs every point on `workers` threads (None or 0: one per core) with the
    /// GIL released; returns the rows in run order as JSON text. `on_row`, if
    /// given, is called with each run index as it finishes. Python's signals are
    /// checked every 50 ms while the sweep runs: Ctrl-C stops the runs under way
    /// at their next request and the points not started at once
    /// ([`ftlab_sim::interrupt`]), and the KeyboardInterrupt is raised here.
    #[pyo3(signature = (workers = None, on_row = None))]
    fn run_local(&self, py: Python<'_>, workers: Option<usize>, on_row: Option<Py<PyAny>>) -> PyResult<String> {
        /// Why a sweep stopped: the library's error or Python's.
        enum Stop {
            Lab(LabError),
            Py(PyErr),
        }
        impl From<LabError> for Stop {
            fn from(e: LabError) -> Self {
                Stop::Lab(e)
            }
        }
        let (rows, signalled) = py.allow_threads(|| {
            std::thread::scope(|s| {
                let sweep = s.spawn(|| {
                    sweep::run_points(&self.points, &self.columns, workers.unwrap_or(0), |point, _| {
                        Python::with_gil(|py| -> PyResult<()> {
                            if let Some(cb) = &on_row {
                                cb.call1(py, (point.run,))?;
                            }
                            Ok(())
                        })
                        .map_err(Stop::Py)
                    })
                });
                // This (the calling, main) thread watches Python's signals:
                // only the main thread sees them.
                let mut signalled = None;
                while !sweep.is_finished() {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    if signalled.is_none() {
                        if let Err(e) = Python::with_gil(|py| py.check_signals()) {
                            ftlab_sim::interrupt::interrupt();
                            signalled = Some(e);
                        }
                    }
                }
                let rows = sweep.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                if signalled.is_some() {
                    ftlab_sim::interrupt::clear_interrupt();
                }
                (rows, signalled)
            })
        });
        if let Some(e) = signalled {
            return Err(e);
        }
        let rows = match rows {
            Ok(rows) => rows,
            Err(Stop::Lab(e)) => return Err(errors::lab(py, e)),
            Err(Stop::Py(e)) => return Err(e),
        };
        let rows: Vec<Vec<serde_json::Value>> = rows.into_iter().map(|(_, r)| r).collect();
        serde_json::to_string(&rows).map_err(|e| errors::Error::new_err(format!("cannot serialize the rows: {e}")))
    }
}
