//! FTLs by name, for configuration files and the command line.
//!
//! A scheme is named by `kind` (e.g. `"pagemap"`, or a named configuration such as
//! `"pure-page-level"`) and configured by a table of its own keys; unknown keys are
//! an error that names them.
//!
//! This module is the top of the crate's schemes: it lists every scheme
//! module's entries ([`BUILTIN`]) and other crates' ([`PLUGINS`]) and looks
//! them up. The entry type and what an entry's `build` uses ([`Scheme`],
//! [`configured`], [`Builder`], [`PeriodicTask`]) live in [`crate::entry`],
//! below the schemes that declare their entries with them, and are
//! re-exported here.

use crate::FtlError;

pub use crate::entry::{configured, Builder, PeriodicTask, Scheme};

/// The schemes of this crate, one module's entries a line.
pub const BUILTIN: [&[Scheme]; 19] = [
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
    &crate::schemes::host::zns::SCHEMES,
    &crate::schemes::page::fdp::SCHEMES,
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

/// Builds the FTL `kind` with `params` laid over the scheme's defaults.
pub fn build(kind: &str, params: &toml::Table) -> Result<Builder, FtlError> {
    (lookup(kind)?.build)(params, None)
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
