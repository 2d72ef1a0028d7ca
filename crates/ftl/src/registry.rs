//! FTLs by name, for configuration files and the command line.
//!
//! A scheme is named by `kind` (e.g. `"pagemap"`, or a named configuration such as
//! `"pure-page-level"`) and configured by a table of its own keys; unknown keys are
//! an error that names them.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::{FtlBuilder, FtlError};

/// A buildable, configured FTL.
pub type Builder = Box<dyn FtlBuilder + Send + Sync>;

/// One scheme, as configuration files and the command line name it: each
/// scheme module exports its entries (`SCHEMES`), [`BUILTIN`] lists the
/// modules, and an FTL in another crate registers in [`PLUGINS`] with one
/// attribute:
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
    /// admission control): [`build_with_tasks`] hands it a task set.
    pub admits_tasks: bool,
    /// Whether `ftlab bounds` lists the service bound it promises as a run
    /// builds it (the hard real-time schemes of 001 and 002).
    pub bounds: bool,
    /// Builds it with `params` laid over its defaults and, for a scheme that
    /// admits tasks, the task set (stream `i` is task `i`).
    pub build: fn(&toml::Table, Option<&[PeriodicTask]>) -> Result<Builder, FtlError>,
}

/// The schemes of this crate, one module's entries a line.
pub const BUILTIN: [&[Scheme]; 17] = [
    &crate::schemes::page::pagemap::SCHEMES,
    &crate::schemes::realtime::gftl::SCHEMES,
    &crate::schemes::realtime::rftl::SCHEMES,
    &crate::schemes::realtime::fsr::SCHEMES,
    &crate::schemes::realtime::lazy_rtgc::SCHEMES,
    &crate::schemes::block::nftl::SCHEMES,
    &crate::schemes::block::bast::SCHEMES,
    &crate::schemes::block::fast::SCHEMES,
    &crate::schemes::block::janus::SCHEMES,
    &crate::schemes::page::dftl::SCHEMES,
    &crate::schemes::realtime::lazy_rtgc_ondemand::SCHEMES,
    &crate::schemes::realtime::waogc::SCHEMES,
    &crate::schemes::realtime::telomere::SCHEMES,
    &crate::schemes::host::ssc::SCHEMES,
    &crate::schemes::host::nameless::SCHEMES,
    &crate::schemes::page::subpage::SCHEMES,
    &crate::schemes::page::multilog::SCHEMES,
];

/// Schemes of other crates, registered where they are defined (see
/// [`Scheme`]); listed after [`BUILTIN`]'s, by name.
#[linkme::distributed_slice]
pub static PLUGINS: [Scheme];

/// Every scheme: [`BUILTIN`]'s in their order, then [`PLUGINS`] by name. A
/// plugin whose name a scheme before it took is left out (the test
/// `registry_names_are_unique` keeps the built-in names apart).
pub fn schemes() -> Vec<Scheme> {
    let mut v: Vec<Scheme> = BUILTIN.iter().flat_map(|m| m.iter().copied()).collect();
    let mut plugins: Vec<Scheme> = PLUGINS.iter().copied().collect();
    plugins.sort_by_key(|s| s.name);
    for p in plugins {
        if !v.iter().any(|s| s.name == p.name) {
            v.push(p);
        }
    }
    v
}

/// The scheme named `kind`, with its capability record.
pub fn scheme(kind: &str) -> Option<Scheme> {
    schemes().into_iter().find(|s| s.name == kind)
}

/// The scheme `kind`, or a configuration error (key `ftl.kind`) listing the
/// known ones: the lookup [`build`] and [`build_with_tasks`] do, for a front end
/// or another crate that needs the entry itself.
pub fn lookup(kind: &str) -> Result<Scheme, FtlError> {
    scheme(kind).ok_or_else(|| {
        FtlError::config(
            "ftl.kind",
            format!(
                "unknown FTL `{kind}`; known FTLs: {}",
                schemes().iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
            ),
        )
    })
}

/// Builds the FTL `kind`, which admits tasks ([`Scheme::admits_tasks`]), with
/// `params` laid over the scheme's defaults and the task set `tasks` (stream `i`
/// is task `i`); refused tasks are reported, not an error, unless `params` sets
/// `strict_admission`. A `tasks` key in `params` replaces the set.
pub fn build_with_tasks(kind: &str, params: &toml::Table, tasks: &[PeriodicTask]) -> Result<Builder, FtlError> {
    let s = lookup(kind)?;
    if !s.admits_tasks {
        return Err(FtlError::config("ftl.kind", format!("FTL `{kind}` does not admit periodic tasks")));
    }
    (s.build)(params, Some(tasks))
}

/// One periodic task of a task set, as an admitting FTL takes it (periods and
/// lifetime in ms).
pub use crate::schemes::realtime::telomere::TaskConfig as PeriodicTask;

/// Builds the FTL `kind` with `params` laid over the scheme's defaults.
pub fn build(kind: &str, params: &toml::Table) -> Result<Builder, FtlError> {
    (lookup(kind)?.build)(params, None)
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
        if !table.contains_key(k) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_are_unique() {
        let names: Vec<&str> = BUILTIN.iter().flat_map(|m| m.iter().map(|s| s.name)).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "{names:?}");
    }

    #[test]
    fn presets_and_overrides() {
        let mut p = toml::Table::new();
        p.insert("over_provisioning".into(), toml::Value::Float(0.2));
        assert!(build("pure-page-level", &p).is_ok());
        assert!(build("ppm-ftl", &toml::Table::new()).is_ok());
    }

    #[test]
    fn unknown_kind_and_key_are_named() {
        let e = build("nope", &toml::Table::new()).unwrap_err().to_string();
        assert!(e.contains("nope") && e.contains("pagemap"), "{e}");
        let mut p = toml::Table::new();
        p.insert("gc_treshold".into(), toml::Value::Integer(3));
        let e = build("pagemap", &p).unwrap_err().to_string();
        assert!(e.contains("gc_treshold") && e.contains("gc_free_blocks"), "{e}");
        let mut p = toml::Table::new();
        p.insert("over_provisioning".into(), toml::Value::String("lots".into()));
        let e = build("pagemap", &p).unwrap_err().to_string();
        assert!(e.contains("over_provisioning") || e.contains("invalid type"), "{e}");
    }
}
