//! Values between Python and Rust: Python values as TOML values (what a config
//! key is set to), and serializable Rust values as plain Python objects (dicts,
//! lists, numbers, strings, None) through their JSON form, so Python sees the
//! same field names and order as `ftlab run -f json`.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString, PyTuple};
use serde::Serialize;
use toml::{Table, Value};

/// `value` as a plain Python object (via its JSON, keys in declaration order).
pub(crate) fn to_py<T: Serialize + ?Sized>(py: Python<'_>, value: &T) -> PyResult<PyObject> {
    let text = serde_json::to_string(value)
        .map_err(|e| PyErr::new::<crate::errors::Error, _>(format!("cannot serialize to Python: {e}")))?;
    json_to_py(py, &text)
}

/// JSON text as a Python object (`json.loads`).
pub(crate) fn json_to_py(py: Python<'_>, text: &str) -> PyResult<PyObject> {
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

/// A Python value as a TOML value: bool, int, float, str (or a path), list or
/// tuple of them, dict with str keys. `what` names it in the error.
pub(crate) fn to_toml(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    if let Ok(b) = v.downcast::<PyBool>() {
        return Ok(Value::Boolean(b.is_true()));
    }
    if v.downcast::<PyFloat>().is_ok() {
        return Ok(Value::Float(v.extract::<f64>()?));
    }
    if let Ok(i) = v.extract::<i64>() {
        return Ok(Value::Integer(i));
    }
    if let Ok(s) = v.downcast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.into_owned()));
    }
    if let Ok(d) = v.downcast::<PyDict>() {
        let mut t = Table::new();
        for (k, item) in d.iter() {
            let key: String = k
                .extract()
                .map_err(|_| PyTypeError::new_err(format!("{what}: table keys must be str, got {}", type_name(&k))))?;
            let inner = to_toml(&item, &format!("{what}.{key}"))?;
            t.insert(key, inner);
        }
        return Ok(Value::Table(t));
    }
    if v.downcast::<PyList>().is_ok() || v.downcast::<PyTuple>().is_ok() {
        let mut a = Vec::new();
        for (i, item) in v.try_iter()?.enumerate() {
            a.push(to_toml(&item?, &format!("{what}[{i}]"))?);
        }
        return Ok(Value::Array(a));
    }
    if let Ok(x) = v.extract::<f64>() {
        return Ok(Value::Float(x));
    }
    if let Ok(p) = v.extract::<std::path::PathBuf>() {
        return Ok(Value::String(p.to_string_lossy().into_owned()));
    }
    Err(PyTypeError::new_err(format!(
        "{what}: a {} is not a config value; give a bool, int, float, str, list or dict",
        type_name(v)
    )))
}

/// The name of `v`'s type, for messages.
fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type().name().map_or_else(|_| "value".to_owned(), |n| n.to_string())
}
