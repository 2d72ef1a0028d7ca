//! FTLs by name, for configuration files and the command line.
//!
//! A scheme is named by `kind` (e.g. `"pagemap"`, or a named configuration such as
//! `"pure-page-level"`) and configured by a table of its own keys; unknown keys are
//! an error that names them.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::pagemap::PageMapConfig;
use crate::{FtlBuilder, FtlError};

/// A buildable, configured FTL.
pub type Builder = Box<dyn FtlBuilder + Send + Sync>;

/// One named FTL configuration.
#[derive(Debug, Clone, Copy)]
pub struct Scheme {
    /// The name used in `kind = "..."` and `--ftl`.
    pub name: &'static str,
    /// One line of description.
    pub summary: &'static str,
}

/// Every FTL name accepted by [`build`].
pub fn schemes() -> Vec<Scheme> {
    let mut v = vec![Scheme {
        name: "pagemap",
        summary: "pure page mapping, greedy GC, configurable over-provisioning (defaults of the 000 baseline)",
    }];
    v.extend(
        PageMapConfig::PRESETS.iter().filter(|(n, _)| *n != "pagemap").map(|&(name, summary)| Scheme { name, summary }),
    );
    v
}

/// Builds the FTL `kind` with `params` laid over the scheme's defaults.
pub fn build(kind: &str, params: &toml::Table) -> Result<Builder, FtlError> {
    match kind {
        "pagemap" | "pure-page-level" | "ppm-ftl" => {
            let base = PageMapConfig::preset(kind).unwrap_or_default();
            let config = overlay(kind, base, params)?;
            config.validate()?;
            Ok(Box::new(config))
        }
        _ => Err(FtlError::Config(format!(
            "unknown FTL `{kind}`; known FTLs: {}",
            schemes().iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// `base` with the keys of `params` replacing its fields; unknown keys and bad
/// values are errors naming the key.
fn overlay<T: Serialize + DeserializeOwned>(kind: &str, base: T, params: &toml::Table) -> Result<T, FtlError> {
    let mut table = toml::Table::try_from(&base).map_err(|e| FtlError::Config(format!("{kind}: {e}")))?;
    for (k, v) in params {
        if !table.contains_key(k) {
            let known: Vec<&String> = table.keys().collect();
            return Err(FtlError::Config(format!(
                "unknown key `{k}` for FTL `{kind}`; its keys are: {}",
                known.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            )));
        }
        table.insert(k.clone(), v.clone());
    }
    T::deserialize(toml::Value::Table(table)).map_err(|e| FtlError::Config(format!("FTL `{kind}`: {}", e.message())))
}

#[cfg(test)]
mod tests {
    use super::*;

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
