//! `ftlab.Config`: a run configuration kept as its TOML table, so keyword
//! overrides use the same dotted key paths as `ftlab run --set KEY=VALUE` and
//! go through the same overlay code ([`ftlab_lab::overlay`]).

use std::path::{Path, PathBuf};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use toml::{Table, Value};

use ftlab_lab::overlay;
use ftlab_sim::RunConfig;

use crate::errors;
use crate::value::{to_py, to_toml};

/// A run configuration: the `[device]`, `[ftl]`, `[workload]`, `[host]`,
/// `[precondition]` and `[metrics]` tables of `ftlab run`'s config files.
///
/// Build one with `Config.from_toml(path_or_text, **overrides)` or
/// `Config(**overrides)`; set keys with `cfg.set("ftl.kind", "dftl")` or
/// `cfg.replace(**{"ftl.kind": "dftl"})` (a copy). Keys are dotted paths, as
/// with `ftlab run --set`; unknown keys raise `ConfigError` naming them.
#[pyclass(module = "ftlab", name = "Config", eq)]
#[derive(Debug, Clone)]
pub struct Config {
    pub(crate) table: Table,
    /// Names the configuration in errors (its file, or how it was made).
    pub(crate) origin: String,
}

/// Two configurations are equal when they set the same keys to the same
/// values, wherever they came from.
impl PartialEq for Config {
    fn eq(&self, other: &Self) -> bool {
        self.table == other.table
    }
}

impl Config {
    /// The run configuration the table deserializes into.
    pub(crate) fn run_config(&self, py: Python<'_>) -> PyResult<RunConfig> {
        overlay::to_config(self.table.clone(), &self.origin).map_err(|e| errors::lab(py, e))
    }

    /// Sets every `key: value` of `overrides` (None removes the key).
    fn apply(&mut self, py: Python<'_>, overrides: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        let mut table = self.table.clone();
        for (k, v) in overrides.into_iter().flatten() {
            let key: String = k.extract()?;
            set_key(py, &mut table, &key, &v)?;
        }
        // Unknown keys are named now, not when the configuration runs.
        overlay::to_config(table.clone(), &self.origin).map_err(|e| errors::lab(py, e))?;
        self.table = table;
        Ok(())
    }

    /// Reads a config file as `ftlab run -c` does (a relative trace path is
    /// relative to the file).
    fn from_file(py: Python<'_>, path: &Path) -> PyResult<Config> {
        let table = overlay::load_file(path).map_err(|e| errors::lab(py, e))?;
        Ok(Config { table, origin: path.display().to_string() })
    }

    /// Parses TOML text; unknown keys are named with their line.
    fn from_text(py: Python<'_>, text: &str) -> PyResult<Config> {
        let origin = "<toml text>";
        RunConfig::from_toml(text, origin).map_err(|e| errors::sim(py, e))?;
        let table = overlay::load_table_text(text, origin).map_err(|e| errors::lab(py, e))?;
        Ok(Config { table, origin: origin.to_owned() })
    }
}

/// Sets the dotted `key` of `table` to the Python `value` (None removes it).
fn set_key(py: Python<'_>, table: &mut Table, key: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
    if key.is_empty() || key.split('.').any(str::is_empty) {
        return Err(errors::config(
            py,
            key,
            format!("`{key}` is not a config key: give a dotted path such as \"ftl.gc_free_blocks\""),
        ));
    }
    if value.is_none() {
        overlay::remove_path(table, key);
        return Ok(());
    }
    let v = to_toml(value, key)?;
    overlay::set_path(table, key, v).map_err(|e| errors::lab(py, e))
}

/// Whether a string given to `from_toml` names a file rather than holding TOML:
/// one line with no `=` or `[` (TOML text always has one of them).
fn looks_like_path(s: &str) -> bool {
    !s.is_empty() && !s.contains(['\n', '=', '['])
}

#[pymethods]
impl Config {
    /// A configuration with every default, then `overrides` (dotted keys).
    #[new]
    #[pyo3(signature = (**overrides))]
    fn new(py: Python<'_>, overrides: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut c = Config { table: Table::new(), origin: "Config()".to_owned() };
        c.apply(py, overrides)?;
        Ok(c)
    }

    /// Reads a configuration from a TOML file (a `str` path or an
    /// `os.PathLike`) or from TOML text, then sets `overrides`, e.g.
    /// `Config.from_toml("run.toml", **{"ftl.kind": "dftl", "seed": 2})`.
    #[staticmethod]
    #[pyo3(signature = (source, **overrides))]
    fn from_toml(py: Python<'_>, source: &Bound<'_, PyAny>, overrides: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut c = if let Ok(s) = source.downcast::<PyString>() {
            let s = s.to_cow()?;
            if looks_like_path(&s) {
                Config::from_file(py, Path::new(&*s))?
            } else {
                Config::from_text(py, &s)?
            }
        } else if let Ok(path) = source.extract::<PathBuf>() {
            Config::from_file(py, &path)?
        } else {
            return Err(PyTypeError::new_err("Config.from_toml takes a path (str or os.PathLike) or TOML text"));
        };
        c.apply(py, overrides)?;
        Ok(c)
    }

    /// Sets the dotted `key` (as `ftlab run --set key=value`) to `value`;
    /// None removes it. Raises ConfigError for an unknown key.
    fn set(&mut self, py: Python<'_>, key: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let d = PyDict::new(py);
        d.set_item(key, value)?;
        self.apply(py, Some(&d))
    }

    /// A copy with `overrides` set.
    #[pyo3(signature = (**overrides))]
    fn replace(&self, py: Python<'_>, overrides: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut c = self.clone();
        c.apply(py, overrides)?;
        Ok(c)
    }

    /// The value set at the dotted `key`, or None if the file and overrides
    /// leave it to its default.
    fn get(&self, py: Python<'_>, key: &str) -> PyResult<PyObject> {
        let mut t = &self.table;
        let mut parts = key.split('.').peekable();
        while let Some(part) = parts.next() {
            match (t.get(part), parts.peek()) {
                (Some(v), None) => return to_py(py, v),
                (Some(Value::Table(inner)), Some(_)) => t = inner,
                _ => break,
            }
        }
        Ok(py.None())
    }

    /// Checks the configuration without running it: every error a run would
    /// raise before time zero (ConfigError, TraceError).
    fn validate(&self, py: Python<'_>) -> PyResult<()> {
        let config = self.run_config(py)?;
        py.allow_threads(|| ftlab_sim::validate(&config)).map_err(|e| errors::sim(py, e))
    }

    /// The configuration as TOML text (what `from_toml` reads back).
    fn to_toml(&self) -> PyResult<String> {
        toml::to_string(&self.table)
            .map_err(|e| errors::Error::new_err(format!("cannot write the config as TOML: {e}")))
    }

    /// The keys set, as nested dicts.
    fn to_dict(&self, py: Python<'_>) -> PyResult<PyObject> {
        to_py(py, &self.table)
    }

    fn __repr__(&self) -> PyResult<String> {
        Ok(format!("Config.from_toml({:?})", self.to_toml()?))
    }

    /// Pickles as its TOML text (so a Ray task or a process pool can take it).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let text = slf.borrow().to_toml()?;
        let from_toml = slf.get_type().getattr("from_toml")?;
        // An empty table is written as "": give the reader a comment line.
        PyTuple::new(py, [from_toml.into_any(), PyTuple::new(py, [format!("# ftlab config\n{text}")])?.into_any()])
    }
}
