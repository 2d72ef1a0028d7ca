//! `ftlab.bounds` and `ftlab.admit`: the design-time calculators of
//! `ftlab bounds` and `ftlab admit`, returning what their JSON output holds
//! as plain dicts.

use std::path::Path;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use toml::{Table, Value};

use ftlab_bounds::telomere::{admit_with, ChipCheck, MultiLogWorkload, Policy, TaskSet};
use ftlab_lab::bounds::{admit_device, channel_wait_ns, chip_bounds};

use crate::errors;
use crate::value::{to_py, to_toml};

/// The real-time schemes' bounds for chip preset `chip`: the papers' figures
/// (keys `ideal`, `fsr`, `gftl`, `rftl`, `lazy_rtgc`, `lazy_rtgc_ondemand`) and
/// `as_run`, each real-time FTL's bound and space utilization as a run builds
/// it (absent for a device too large to build). `with_transfer` adds the
/// channel transfer to each page operation of the papers' figures.
#[pyfunction]
#[pyo3(signature = (chip, *, with_transfer = false))]
pub(crate) fn bounds(py: Python<'_>, chip: &str, with_transfer: bool) -> PyResult<PyObject> {
    let b = py.allow_threads(|| chip_bounds(chip, with_transfer)).map_err(|e| errors::lab(py, e))?;
    to_py(py, &b)
}

/// The task set `taskset` as TOML text: a path, TOML text, or a list of task
/// dicts (the `[[task]]` tables of a task set file).
fn taskset_text(py: Python<'_>, taskset: &Bound<'_, PyAny>) -> PyResult<(String, String)> {
    if let Ok(s) = taskset.downcast::<PyString>() {
        let s = s.to_cow()?;
        if !s.is_empty() && !s.contains(['\n', '=', '[']) {
            let text = std::fs::read_to_string(Path::new(&*s))
                .map_err(|e| errors::config(py, "taskset", format!("cannot read task set {s}: {e}")))?;
            return Ok((text, s.into_owned()));
        }
        return Ok((s.into_owned(), "<task set text>".to_owned()));
    }
    if taskset.downcast::<PyList>().is_ok() || taskset.downcast::<PyDict>().is_ok() {
        let table = match to_toml(taskset, "taskset")? {
            Value::Table(t) => t,
            tasks => Table::from_iter([("task".to_owned(), tasks)]),
        };
        let text = toml::to_string(&table).map_err(|e| errors::config(py, "taskset", format!("taskset: {e}")))?;
        return Ok((text, "<task list>".to_owned()));
    }
    if let Ok(path) = taskset.extract::<std::path::PathBuf>() {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| errors::config(py, "taskset", format!("cannot read task set {}: {e}", path.display())))?;
        return Ok((text, path.display().to_string()));
    }
    Err(errors::config(py, "taskset", "taskset: give a path, TOML text or a list of task dicts".to_owned()))
}

/// Telomere's admission control (or a baseline's) for a periodic task set on
/// chip preset `chip`, as `ftlab admit -f json`: a dict with the policy, the
/// device, lambda, storage and throughput figures and one verdict per task.
///
/// `taskset`: a task set file's path, its TOML text, or a list of task dicts
/// (`name`, `read_pages`, `read_period_ms`, `write_pages`, `write_period_ms`,
/// `lifetime_ms`, optional `granularity`). `policy`: `"sip"`, `"sharp"`,
/// `"waogc"` or `"multilog"`.
#[pyfunction]
#[pyo3(signature = (taskset, policy = "sharp", chip = "telomere-1tb-ssd", *, blocks = None,
    over_provisioning = None, per_chip = false, multilog_workload = "random", waf = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn admit(
    py: Python<'_>,
    taskset: &Bound<'_, PyAny>,
    policy: &str,
    chip: &str,
    blocks: Option<u64>,
    over_provisioning: Option<f64>,
    per_chip: bool,
    multilog_workload: &str,
    waf: Option<f64>,
) -> PyResult<PyObject> {
    let bad = |e: ftlab_bounds::telomere::TelomereError| errors::config(py, "taskset", e.to_string());
    let device = admit_device(chip, blocks, over_provisioning).map_err(|e| errors::lab(py, e))?;
    let (text, origin) = taskset_text(py, taskset)?;
    let set = TaskSet::from_toml(&text, Some(&origin), device).map_err(bad)?;
    let workload = match multilog_workload {
        "random" => MultiLogWorkload::Random,
        "zipf" => MultiLogWorkload::Zipf,
        other => {
            return Err(errors::config(
                py,
                "multilog_workload",
                format!("multilog_workload `{other}`: give \"random\" or \"zipf\""),
            ));
        }
    };
    let policy = match policy {
        "sip" => Policy::Sip,
        "sharp" => Policy::Sharp,
        "waogc" => Policy::WaoGc,
        "multilog" => Policy::MultiLog { workload, waf },
        other => {
            return Err(errors::config(
                py,
                "policy",
                format!("policy `{other}`: give one of \"sip\", \"sharp\", \"waogc\", \"multilog\""),
            ));
        }
    };
    let chip_check = per_chip.then(|| ChipCheck { channel_wait_ns: channel_wait_ns(chip) });
    let admission = py.allow_threads(|| admit_with(&set, policy, chip_check)).map_err(bad)?;
    to_py(py, &admission)
}
