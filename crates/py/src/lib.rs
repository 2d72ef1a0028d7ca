//! ftlab's Python package, the native part (`ftlab._ftlab`): thin wrappers over
//! the run library ([`ftlab_lab`]), the simulator ([`ftlab_sim`]) and its
//! [`Device`](ftlab_sim::device::Device), and the design-time bounds. The
//! Python side (`python/ftlab`) adds the report object, DataFrames and the Ray
//! executor; nothing here re-implements what those crates do.
//!
//! Built by maturin (`pip install ./crates/py`), which turns on the
//! `extension-module` feature; the tests are pytest's, in `crates/py/tests`.
//! The GIL is released while Rust runs; a run checks Python's signals from its
//! progress callback, so Ctrl-C stops it.

use pyo3::prelude::*;
// The FTLs of other crates offered by name (registered where they are defined).
use ftlab_fifo_ftl as _;

mod bounds;
mod config;
mod device;
mod errors;
mod figure;
mod run;
mod sweep;
mod value;

/// The chip presets, FTLs, workload presets and trace formats, as
/// `{"chips": [{"name", "summary"}], "ftls": [...], "workloads": [...], "formats": [...]}`.
#[pyfunction]
fn presets(py: Python<'_>) -> PyResult<PyObject> {
    #[derive(serde::Serialize)]
    struct Item<'a> {
        name: &'a str,
        summary: &'a str,
    }
    #[derive(serde::Serialize)]
    struct Presets<'a> {
        chips: Vec<Item<'a>>,
        ftls: Vec<Item<'a>>,
        workloads: Vec<Item<'a>>,
        formats: Vec<Item<'a>>,
    }
    let schemes = ftlab_ftl::registry::schemes();
    let workloads = ftlab_workload::GeneratorSpec::presets();
    let formats = ftlab_workload::TraceFormat::all();
    let all = Presets {
        chips: ftlab_nand::presets::PRESETS.iter().map(|p| Item { name: p.name, summary: p.summary }).collect(),
        ftls: schemes.iter().map(|s| Item { name: s.name, summary: s.summary }).collect(),
        workloads: workloads.iter().map(|p| Item { name: p.name, summary: p.description }).collect(),
        formats: formats.iter().map(|f| Item { name: f.name(), summary: f.describe() }).collect(),
    };
    value::to_py(py, &all)
}

/// The native module; `ftlab/__init__.py` re-exports it.
#[pymodule]
fn _ftlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_class::<config::Config>()?;
    m.add_class::<device::Device>()?;
    m.add_class::<device::PyCompletion>()?;
    m.add_class::<sweep::SweepPlan>()?;
    m.add_function(wrap_pyfunction!(run::run_json, m)?)?;
    m.add_function(wrap_pyfunction!(run::report_html, m)?)?;
    m.add_function(wrap_pyfunction!(run::results_html, m)?)?;
    m.add_function(wrap_pyfunction!(figure::figure, m)?)?;
    m.add_function(wrap_pyfunction!(figure::latency_figure, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::plan_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::run_task, m)?)?;
    m.add_function(wrap_pyfunction!(bounds::bounds, m)?)?;
    m.add_function(wrap_pyfunction!(bounds::admit, m)?)?;
    errors::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
