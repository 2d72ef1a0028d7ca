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

/// The file errors: a trace or configuration file that cannot be opened is
/// both ftlab's error and Python's `OSError` (`FileNotFoundError`,
/// `PermissionError`, ... by its errno), with `.errno`, `.strerror` and
/// `.filename` as `open()` gives them.
static FILE_ERRORS: pyo3::sync::GILOnceCell<(PyObject, PyObject)> = pyo3::sync::GILOnceCell::new();

/// Python's own mapping of errno to `OSError` subclasses, one class per pair,
/// built once: `TraceFileError(TraceError, OSError)` and
/// `ConfigFileError(ConfigError, OSError)`, each with a subclass per
/// `OSError` subclass (`TraceFileNotFoundError(TraceFileError,
/// FileNotFoundError)`, ...), picked by errno.
const FILE_ERRORS_PY: &str = r#"
import errno as _errno
def _classes(base, name, doc):
    top = type(name, (base, OSError), {"__doc__": doc, "__module__": "ftlab"})
    by_errno = {}
    for os_class, codes in [
        (FileNotFoundError, [_errno.ENOENT]),
        (PermissionError, [_errno.EACCES, _errno.EPERM]),
        (IsADirectoryError, [_errno.EISDIR]),
        (NotADirectoryError, [_errno.ENOTDIR]),
    ]:
        sub = type(name.replace("Error", "") + os_class.__name__, (top, os_class), {"__doc__": doc, "__module__": "ftlab"})
        for c in codes:
            by_errno[c] = sub
    def make(errno, strerror, filename, message):
        e = by_errno.get(errno, top)(errno, strerror, filename)
        e.message = message
        return e
    return top, make
"#;

/// Adds the exception classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add("DeviceError", py.get_type::<DeviceError>())?;
    m.add("RunError", py.get_type::<RunError>())?;
    let code = std::ffi::CString::new(FILE_ERRORS_PY).map_err(|e| PyErr::new::<PyException, _>(e.to_string()))?;
    let helpers = PyModule::from_code(py, &code, c"ftlab_file_errors.py", c"ftlab_file_errors")?;
    let classes = helpers.getattr("_classes")?;
    let trace = classes.call1((
        py.get_type::<TraceError>(),
        "TraceFileError",
        "A trace file that cannot be opened: a TraceError and an OSError (FileNotFoundError, ... by errno).",
    ))?;
    let config = classes.call1((
        py.get_type::<ConfigError>(),
        "ConfigFileError",
        "A configuration file that cannot be opened: a ConfigError and an OSError (FileNotFoundError, ... by errno).",
    ))?;
    m.add("TraceFileError", trace.get_item(0)?)?;
    m.add("ConfigFileError", config.get_item(0)?)?;
    let _ = FILE_ERRORS.set(py, (trace.get_item(1)?.unbind(), config.get_item(1)?.unbind()));
    Ok(())
}

/// A file that cannot be opened, as the file error of `trace` (else config)
/// kind: `.errno` is the OS's (2 for a missing file), `.filename` the path,
/// `str()` Python's `[Errno 2] ...: 'path'` form, `.message` ftlab's message.
fn file_error(py: Python<'_>, trace: bool, path: &std::path::Path, error: &std::io::Error, message: String) -> PyErr {
    let errno = error.raw_os_error().unwrap_or(5);
    let strerror = std::io::Error::from_raw_os_error(errno).to_string();
    // "No such file or directory (os error 2)": Python prints the errno itself.
    let strerror = strerror.split(" (os error").next().unwrap_or(&strerror).to_string();
    let made = FILE_ERRORS.get(py).and_then(|(t, c)| {
        let make = if trace { t } else { c };
        make.call1(py, (errno, strerror, path.display().to_string(), message.clone())).ok()
    });
    match made {
        Some(e) => {
            let e = e.into_bound(py);
            let _ = e.setattr("kind", "io");
            let _ = e.setattr("report", py.None());
            if !trace {
                let _ = e.setattr("key", py.None());
            }
            PyErr::from_value(e)
        }
        None if trace => new::<TraceError>(py, message, ErrorKind::Io, None),
        None => new::<ConfigError>(py, message, ErrorKind::Io, None),
    }
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
        SimError::Trace(ftlab_workload::TraceError::Io { path, source }) if report.is_none() => {
            file_error(py, true, &path, &source, message)
        }
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
        LabError::Read { ref path, ref error } => file_error(py, false, path, error, e.to_string()),
        e => new::<Error>(py, e.to_string(), ErrorKind::Io, None),
    }
}
