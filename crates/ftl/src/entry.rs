//! One scheme's entry in the registry, and what an entry's `build` uses: the
//! types every scheme module (and an FTL in another crate) declares its
//! [`Scheme`]s with. They sit below the schemes; the list of the entries and
//! the lookups over it ([`crate::registry`], which re-exports these) sit
//! above them.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::{FtlBuilder, FtlError};

/// A buildable, configured FTL.
pub type Builder = Box<dyn FtlBuilder + Send + Sync>;

/// One scheme, as configuration files and the command line name it: each
/// scheme module exports its entries (`SCHEMES`),
/// [`crate::registry::BUILTIN`] lists the modules, and an FTL in another
/// crate registers in [`crate::registry::PLUGINS`] with one attribute:
///
/// ```ignore
/// #[linkme::distributed_slice(ftlab_ftl::registry::PLUGINS)]
/// static FIFO: Scheme = Scheme { name: "fifo", ..., build: |p, _| configured("fifo", FifoConfig::default(), p, FifoConfig::validate) };
/// ```
///
/// after which `ftlab run --ftl fifo`, sweeps and Python reach it in any
/// program that links the crate.
#[derive(Debug, Clone, Copy)]
pub struct Scheme {
    /// The name used in `kind = "..."` and `--ftl`.
    pub name: &'static str,
    /// One line of description.
    pub summary: &'static str,
    /// The paper and section it implements (`NNN Section S`, papers by file
    /// number), or where it comes from.
    pub paper: &'static str,
    /// Whether it admits periodic tasks (a [`crate::RealTime`] scheme with
    /// admission control): [`crate::registry::build_with_tasks`] hands it a
    /// task set.
    pub admits_tasks: bool,
    /// Whether `ftlab bounds` lists the service bound it promises as a run
    /// builds it (the hard real-time schemes of 001 and 002).
    pub bounds: bool,
    /// Builds it with `params` laid over its defaults and, for a scheme that
    /// admits tasks, the task set (stream `i` is task `i`).
    pub build: fn(&toml::Table, Option<&[PeriodicTask]>) -> Result<Builder, FtlError>,
}

/// One periodic task of a task set, as an admitting FTL takes it (periods and
/// lifetime in ms): [`TaskConfig`], the task of 000 (Telomere) Section 3.1.
pub use self::TaskConfig as PeriodicTask;

/// One periodic task of 000 Section 3.1, as configured. Task `i` of the list
/// is the stream `Hint::stream == Some(i)`; the simulator numbers a
/// workload's `[[workload.task]]` tables the same way, so the FTL's list must
/// follow the workload's order (the workload gives periods in microseconds,
/// this list in milliseconds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TaskConfig {
    /// Name for messages (default `#i`, its 1-based position).
    pub name: String,
    /// `T^r` in ms (0, the default, when the task reads nothing).
    pub read_period_ms: f64,
    /// `T^w` in ms (0, the default, when the task writes nothing).
    pub write_period_ms: f64,
    /// `r`, pages read per read period (default 0).
    pub read_pages: u64,
    /// `w`, pages written per write period (default 0).
    pub write_pages: u64,
    /// How long written data stays valid, in ms; rounded up to whole write
    /// periods (`l^w`). Default 0.
    pub lifetime_ms: f64,
    /// `g`, dies a task's pages are striped over (default 1; at most the dies).
    pub granularity: u32,
}

impl Default for TaskConfig {
    fn default() -> Self {
        TaskConfig {
            name: String::new(),
            read_period_ms: 0.0,
            write_period_ms: 0.0,
            read_pages: 0,
            write_pages: 0,
            lifetime_ms: 0.0,
            granularity: 1,
        }
    }
}

/// `base` with `params` laid over it, validated, boxed: what a [`Scheme`]'s
/// `build` does with its config type.
pub fn configured<C>(
    kind: &str,
    base: C,
    params: &toml::Table,
    validate: fn(&C) -> Result<(), FtlError>,
) -> Result<Builder, FtlError>
where
    C: Serialize + DeserializeOwned + FtlBuilder + Send + Sync + 'static,
{
    let config = overlay(kind, base, params)?;
    validate(&config)?;
    Ok(Box::new(config))
}

/// `base` with the keys of `params` replacing its fields; unknown keys and bad
/// values are errors naming the key.
fn overlay<T: Serialize + DeserializeOwned>(kind: &str, base: T, params: &toml::Table) -> Result<T, FtlError> {
    let mut table = toml::Table::try_from(&base).map_err(|e| FtlError::config("ftl", format!("{kind}: {e}")))?;
    let defaults = table.clone();
    for (k, v) in params {
        // A key whose default is left out when serialized (an empty list) is
        // known all the same: the config type takes it.
        let skipped_default = || {
            let mut probe = table.clone();
            probe.insert(k.clone(), v.clone());
            match T::deserialize(toml::Value::Table(probe)) {
                Ok(_) => true,
                Err(e) => !e.to_string().contains(&format!("unknown field `{k}`")),
            }
        };
        if !table.contains_key(k) && !skipped_default() {
            let known: Vec<&String> = table.keys().collect();
            return Err(FtlError::config(
                format!("ftl.{k}"),
                format!(
                    "unknown key `{k}` for FTL `{kind}`; its keys are: {}",
                    known.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        table.insert(k.clone(), v.clone());
    }
    T::deserialize(toml::Value::Table(table)).map_err(|e| {
        // The key whose value alone fails, if one does.
        let bad = params.iter().find(|&(k, v)| {
            let mut one = defaults.clone();
            one.insert(k.clone(), v.clone());
            T::deserialize(toml::Value::Table(one)).is_err()
        });
        match bad {
            Some((k, _)) => FtlError::config(format!("ftl.{k}"), format!("FTL `{kind}`: ftl.{k}: {}", e.message())),
            None => FtlError::config("ftl", format!("FTL `{kind}`: {}", e.message())),
        }
    })
}
