//! ftlab's exception classes and the mapping of Rust errors onto them. Every
//! ftlab exception carries the Rust message, `.errno` (the Linux errno of its
//! kind: 22 invalid, 28 no space, 95 unsupported, 5 I/O), `.kind` (`"invalid"`,
//! `"no-space"`, `"unsupported"`, `"io"`) and `.report` (the report of a run
//! that stopped after it started, as a dict; else None).

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::PyTypeInfo;

use ftlab_ftl::ErrorKind;
use ftlab_lab::LabError;
use ftlab_sim::SimError;

create_exception!(ftlab, Error, PyException, "Base class of ftlab's errors; has `.errno`, `.kind` and `.report`.");
create_exception!(
    ftlab,
    ConfigError,
    Error,
    "A bad configuration, key, value, sweep grid or task set: nothing ran. The message names the input and the fix; \
     `.key` is the key path of the bad setting (`ftl.gc_free_blocks`, `device`, ...) where one is known, else None."
);
create_exception!(
    ftlab,
    TraceError,
    Error,
    "A trace that cannot be read or has a malformed line (named in the message)."
);
create_exception!(
    ftlab,
    DeviceError,
    Error,
    "A device command failed (misaligned, out of range, powered off, the FTL failed it); `.errno` tells its kind."
);
create_exception!(
    ftlab,
    RunError,
    Error,
    "A run failed after it started (the FTL or the flash failed a command); `.report` holds what it did until then."
);

/// Adds the exception classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add("DeviceError", py.get_type::<DeviceError>())?;
    m.add("RunError", py.get_type::<RunError>())?;
    Ok(())
}

/// The kind's name in `.kind`.
fn kind_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Invalid => "invalid",
        ErrorKind::NoSpace => "no-space",
        ErrorKind::Unsupported => "unsupported",
        _ => "io",
    }
}

/// An exception of class `T` with `message`, its kind's errno and `report`.
pub(crate) fn new<T: PyTypeInfo>(py: Python<'_>, message: String, kind: ErrorKind, report: Option<PyObject>) -> PyErr {
    let err = PyErr::new::<T, _>(message);
    let value = err.value(py);
    // Setting attributes on a fresh exception instance cannot fail; if it did,
    // the exception would still carry its class and message.
    let _ = value.setattr("errno", kind.errno());
    let _ = value.setattr("kind", kind_name(kind));
    let _ = value.setattr("report", report.unwrap_or_else(|| py.None()));
    if value.is_instance_of::<ConfigError>() {
        let _ = value.setattr("key", py.None());
    }
    err
}

/// A configuration error (invalid input) of the setting `key` (a dotted key
/// path, or the argument's name).
pub(crate) fn config(py: Python<'_>, key: &str, message: String) -> PyErr {
    let err = new::<ConfigError>(py, message, ErrorKind::Invalid, None);
    set_key(py, &err, key);
    err
}

/// Sets `.key` of a [`ConfigError`] (it stays None for an empty key).
fn set_key(py: Python<'_>, err: &PyErr, key: &str) {
    if !key.is_empty() {
        let _ = err.value(py).setattr("key", key);
    }
}

/// A simulator error as its exception: a trace's is a [`TraceError`], bad
/// input before time zero a [`ConfigError`], a failure after the run started a
/// [`RunError`] with the report of what it did.
pub(crate) fn sim(py: Python<'_>, e: SimError) -> PyErr {
    let kind = e.kind();
    let message = e.to_string();
    let (cause, report) = match e {
        SimError::Stopped { error, report } => (*error, crate::value::to_py(py, &*report).ok()),
        e => (e, None),
    };
    match cause {
        SimError::Trace(_) => new::<TraceError>(py, message, kind, report),
        SimError::Config(c) => {
            let err = new::<ConfigError>(py, message, kind, report);
            set_key(py, &err, &c.key);
            err
        }
        SimError::TimeOverflow { .. } | SimError::NoRequests { .. } => new::<ConfigError>(py, message, kind, report),
        _ => new::<RunError>(py, message, kind, report),
    }
}

/// A run library error as its exception.
pub(crate) fn lab(py: Python<'_>, e: LabError) -> PyErr {
    match e {
        LabError::Run(e) => sim(py, e),
        LabError::Config(c) => config(py, &c.key, c.problem),
        e @ LabError::Read { .. } => config(py, "", e.to_string()),
        e => new::<Error>(py, e.to_string(), ErrorKind::Io, None),
    }
}
