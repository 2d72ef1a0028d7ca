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
    /// Whether it admits periodic tasks (a [`crate::RealTime`] scheme with
    /// admission control): [`build_with_tasks`] hands it a task set.
    pub admits_tasks: bool,
}

/// Every FTL name accepted by [`build`].
pub fn schemes() -> Vec<Scheme> {
    let mut v = vec![Scheme {
        name: "pagemap",
        summary: "pure page mapping, greedy GC, configurable over-provisioning (defaults of the 000 baseline)",
        admits_tasks: false,
    }];
    v.extend(PageMapConfig::PRESETS.iter().filter(|(n, _)| *n != "pagemap").map(|&(name, summary)| Scheme {
        name,
        summary,
        admits_tasks: false,
    }));
    v.push(Scheme {
        name: "rftl",
        summary: "RFTL (001): primary, buffer and replacement block per logical block, partial GC after writes only",
        admits_tasks: false,
    });
    v.push(Scheme {
        name: "fsr",
        summary: "FSR (001): page mapping, logical space limited to sigma = 0.75, GC when no free page is left",
        admits_tasks: false,
    });
    v.push(Scheme {
        name: "lazy-rtgc",
        summary: "Lazy-RTGC (001): page mapping, sigma from the chip, one partial GC task (<= t_er) after each write",
        admits_tasks: false,
    });
    v.push(Scheme {
        name: "nftl",
        summary: "NFTL (002 Section II): primary and replacement block per logical block, fold when both are full",
        admits_tasks: false,
    });
    v.push(Scheme {
        name: "bast",
        summary: "BAST (Kim 2002, via 004): one log block per data block, switch / partial / full merges",
        admits_tasks: false,
    });
    v.push(Scheme {
        name: "fast",
        summary: "FAST (Lee 2007, via 004): a sequential and fully associative random log blocks, three merges",
        admits_tasks: false,
    });
    v.push(Scheme {
        name: "janus",
        summary: "Janus-FTL (004): page- and block-mapping areas, fusion / defusion, PMA sized by ghost buffers",
        admits_tasks: false,
    });
    v.push(Scheme {
        name: "janus-fix",
        summary: "Janus-FTL with the PMA at a fixed utilization u_d = 0.75 (004 Figure 7's Janus(Fix))",
        admits_tasks: false,
    });
    v.extend(crate::gftl::GftlConfig::PRESETS.iter().map(|&(name, summary)| Scheme {
        name,
        summary,
        admits_tasks: false,
    }));
    v.push(Scheme {
        name: "lazy-rtgc-idle",
        summary: "Lazy-RTGC with the idle-time optimisation (001 Section 3.2)",
        admits_tasks: false,
    });
    v.push(Scheme {
        name: "dftl",
        summary: "DFTL (Gupta 2009, via 001 Section 5): cached mapping table over translation pages on flash",
        admits_tasks: false,
    });
    v.push(Scheme {
        name: "lazy-rtgc-ondemand",
        summary: "On-demand Lazy-RTGC (001 Section 5): DFTL with partial DG > TG > TW tasks (<= t_er) after each write",
        admits_tasks: false,
    });
    v.push(Scheme {
        name: "waogc",
        summary: "WAO-GC (000 Section 6.1.5): Lazy-RTGC's partial steps, lambda <= the chip's max, GC at 1 free block",
        admits_tasks: false,
    });
    v.push(Scheme {
        name: "telomere-sip",
        summary:
            "Telomere SiP (000): blocks reserved per admitted task, placed by expiry, GC only erases expired blocks",
        admits_tasks: true,
    });
    v.push(Scheme {
        name: "telomere-sharp",
        summary: "Telomere SharP (000): blocks shared by Algorithm 1's task partitions, GC only erases expired blocks",
        admits_tasks: true,
    });
    v.push(Scheme {
        name: "ssc",
        summary: "FlashTier SSC (003): cache commands by disk block, hash-table map, silent eviction of clean data, \
                  OOB logging; 7% reserve",
        admits_tasks: false,
    });
    v.push(Scheme {
        name: "nameless",
        summary: "Nameless Writes (003 Section 3.4): device-chosen physical addresses for data, a map for metadata \
                  only, migration up-calls recorded in the OOB; block commands use the metadata space",
        admits_tasks: false,
    });
    v.push(Scheme {
        name: "subpage",
        summary: "sub-page mapping (003 Jasmine's optimized FTL): 4 KB units of larger pages via a merge buffer, \
                  greedy GC repacking valid units; ftl.unit_bytes",
        admits_tasks: false,
    });
    v.push(Scheme {
        name: "nameless-split",
        summary: "the Nameless-Write prototype's host FTL (003 Section 3.4): each request's 4 KB units packed into \
                  fresh virtual pages of their own, no merge buffer, GC through host RAM (subpage, request-queue \
                  packing)",
        admits_tasks: false,
    });
    v.push(Scheme {
        name: "multilog",
        summary:
            "MultiLog-Oracle (Stoica 2013, via 000 Section 6.1.4): one log per update-frequency set, by expiry hints",
        admits_tasks: false,
    });
    v
}

/// The scheme named `kind`, with its capability record.
pub fn scheme(kind: &str) -> Option<Scheme> {
    schemes().into_iter().find(|s| s.name == kind)
}

/// Builds the FTL `kind`, which admits tasks ([`Scheme::admits_tasks`]), with
/// `params` laid over the scheme's defaults and the task set `tasks` (stream `i`
/// is task `i`); refused tasks are reported, not an error, unless `params` sets
/// `strict_admission`. A `tasks` key in `params` replaces the set.
pub fn build_with_tasks(kind: &str, params: &toml::Table, tasks: &[PeriodicTask]) -> Result<Builder, FtlError> {
    let base = telomere_base(kind)
        .ok_or_else(|| FtlError::config("ftl.kind", format!("FTL `{kind}` does not admit periodic tasks")))?;
    let base = crate::telomere::TelomereConfig { tasks: tasks.to_vec(), strict_admission: false, ..base };
    configured(kind, base, params, crate::telomere::TelomereConfig::validate)
}

/// Telomere's defaults under the name `kind`, if it is one of its policies.
fn telomere_base(kind: &str) -> Option<crate::telomere::TelomereConfig> {
    use crate::telomere::{Placement, TelomereConfig};
    let policy = match kind {
        "telomere-sip" => Placement::Sip,
        "telomere-sharp" => Placement::Sharp,
        _ => return None,
    };
    Some(TelomereConfig { policy, ..Default::default() })
}

/// One periodic task of a task set, as an admitting FTL takes it (periods and
/// lifetime in ms).
pub use crate::telomere::TaskConfig as PeriodicTask;

/// Builds the FTL `kind` with `params` laid over the scheme's defaults.
pub fn build(kind: &str, params: &toml::Table) -> Result<Builder, FtlError> {
    use crate::{dftl, fsr, gftl, lazy_rtgc, lazy_rtgc_ondemand, nftl, rftl, telomere, waogc};
    match kind {
        "pagemap" | "pure-page-level" | "ppm-ftl" => {
            configured(kind, PageMapConfig::preset(kind).unwrap_or_default(), params, PageMapConfig::validate)
        }
        "bast" => configured(kind, crate::bast::BastConfig::default(), params, crate::bast::BastConfig::validate),
        "fast" => configured(kind, crate::fast::FastConfig::default(), params, crate::fast::FastConfig::validate),
        "janus" | "janus-fix" => {
            use crate::janus::JanusConfig as C;
            let base = if kind == "janus" { C::default() } else { C::fixed() };
            configured(kind, base, params, C::validate)
        }
        "nftl" => configured(kind, nftl::NftlConfig::default(), params, nftl::NftlConfig::validate),
        "gftl" | "gftl-threshold" | "gftl-priority" => {
            configured(kind, gftl::GftlConfig::preset(kind).unwrap_or_default(), params, gftl::GftlConfig::validate)
        }
        "rftl" => configured(kind, rftl::RftlConfig::default(), params, rftl::RftlConfig::validate),
        "fsr" => configured(kind, fsr::FsrConfig::default(), params, fsr::FsrConfig::validate),
        "lazy-rtgc" | "lazy-rtgc-idle" => {
            let base = lazy_rtgc::LazyRtgcConfig { idle_gc: kind == "lazy-rtgc-idle", ..Default::default() };
            configured(kind, base, params, lazy_rtgc::LazyRtgcConfig::validate)
        }
        "dftl" => configured(kind, dftl::DftlConfig::default(), params, dftl::DftlConfig::validate),
        "multilog" => {
            use crate::multilog::MultiLogConfig as C;
            configured(kind, C::default(), params, C::validate)
        }
        "lazy-rtgc-ondemand" => {
            use lazy_rtgc_ondemand::LazyRtgcOnDemandConfig as C;
            configured(kind, C::default(), params, C::validate)
        }
        "waogc" => configured(kind, waogc::WaoGcConfig::default(), params, waogc::WaoGcConfig::validate),
        "ssc" => configured(kind, crate::ssc::SscConfig::default(), params, crate::ssc::SscConfig::validate),
        "subpage" => {
            use crate::subpage::SubPageConfig as C;
            configured(kind, C::default(), params, C::validate)
        }
        "nameless-split" => {
            use crate::subpage::{Packing, SubPageConfig as C};
            configured(kind, C { packing: Packing::RequestQueue, ..C::default() }, params, C::validate)
        }
        "nameless" => {
            use crate::nameless::NamelessConfig as C;
            configured(kind, C::default(), params, C::validate)
        }
        "telomere-sip" | "telomere-sharp" => {
            let base = telomere_base(kind).unwrap_or_default();
            configured(kind, base, params, telomere::TelomereConfig::validate)
        }
        _ => Err(FtlError::config(
            "ftl.kind",
            format!(
                "unknown FTL `{kind}`; known FTLs: {}",
                schemes().iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

/// `base` with `params` laid over it, validated, boxed.
fn configured<C>(
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
