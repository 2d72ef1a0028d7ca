//! `ftlab.run`: one run with the GIL released, its progress reported to a
//! Python callable and Python's signals checked at each progress call, so
//! Ctrl-C stops a long run.

use std::cell::RefCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use pyo3::prelude::*;

use ftlab_sim::{Progress, Report, RunConfig, SimError};

use crate::config::Config;
use crate::errors;

/// The payload a run is unwound with when Python asked it to stop.
struct Interrupted;

/// Runs `config` with the GIL released; `progress` (if given) is called as
/// `progress(requests, sim_ns, measuring)` every few thousand requests. Each
/// call checks Python's signals first: a pending KeyboardInterrupt (or an
/// exception the callable raises) stops the run and is raised here.
pub(crate) fn run_with_progress(
    py: Python<'_>,
    config: &RunConfig,
    progress: Option<Py<PyAny>>,
) -> PyResult<Result<Report, SimError>> {
    let outcome = py.allow_threads(|| {
        let stop: RefCell<Option<PyErr>> = RefCell::new(None);
        let mut on_progress = |p: Progress| {
            let checked = Python::with_gil(|py| -> PyResult<()> {
                py.check_signals()?;
                if let Some(cb) = &progress {
                    cb.call1(py, (p.requests, p.sim_ns, p.measuring))?;
                }
                Ok(())
            });
            if let Err(e) = checked {
                *stop.borrow_mut() = Some(e);
                // The simulator's progress callback cannot end a run, so the run
                // is unwound (without the panic hook) and caught below; the
                // simulation is dropped whole.
                resume_unwind(Box::new(Interrupted));
            }
        };
        let result = catch_unwind(AssertUnwindSafe(|| ftlab_sim::run(config, &mut on_progress)));
        match result {
            Ok(r) => Ok(r),
            Err(payload) => match stop.into_inner() {
                Some(e) if payload.is::<Interrupted>() => Err(e),
                _ => resume_unwind(payload),
            },
        }
    })?;
    Ok(outcome)
}

/// Runs `config` and returns its report as JSON text, with its `provenance`
/// (the Python `ftlab.run` wraps it in a `Report`). `progress`: None, or a callable
/// `progress(requests, sim_ns, measuring)`.
#[pyfunction]
#[pyo3(signature = (config, progress = None))]
pub(crate) fn run_json(py: Python<'_>, config: &Config, progress: Option<Py<PyAny>>) -> PyResult<String> {
    let run_config = config.run_config(py)?;
    let report = run_with_progress(py, &run_config, progress)?.map_err(|e| errors::sim(py, e))?;
    // The report carries its provenance as `ftlab run -f json`'s does, so a
    // saved `Report.to_json()` reruns with `ftlab rerun`.
    let provenance = ftlab_lab::provenance::of("run", &run_config, None)
        .map_err(|e| errors::Error::new_err(format!("cannot print the configuration: {e}")))?;
    serde_json::to_string(&ftlab_lab::provenance::WithProvenance { report: &report, provenance })
        .map_err(|e| errors::Error::new_err(format!("cannot serialize the report: {e}")))
}

/// The self-contained HTML page of a report given as JSON text (inline SVG
/// plots, no network fetch).
#[pyfunction]
#[pyo3(signature = (report_json, title = ""))]
pub(crate) fn report_html(py: Python<'_>, report_json: &str, title: &str) -> PyResult<String> {
    let report: serde_json::Value = serde_json::from_str(report_json)
        .map_err(|e| errors::config(py, "report", format!("report_html: the report is not JSON: {e}")))?;
    Ok(ftlab_lab::html::report_html(&report, title))
}

/// The HTML page of a results file's text (`ftlab report`): a run's JSON
/// report, or a sweep's CSV or JSON-lines rows; `origin` names it in errors.
#[pyfunction]
#[pyo3(signature = (text, origin = "results", title = ""))]
pub(crate) fn results_html(py: Python<'_>, text: &str, origin: &str, title: &str) -> PyResult<String> {
    ftlab_lab::html::results_html(text, origin, title).map_err(|e| errors::lab(py, e))
}
