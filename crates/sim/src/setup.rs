//! A run's setup before time zero: the configuration validated as a whole
//! ([`validate`]), the FTL its `[ftl]` table names built (behind the write
//! buffer when `device.write_buffer_pages` is set), and a [`Device`] opened
//! from a configuration.

use ftlab_ftl::{registry, Flash};
use ftlab_nand::SimTime;

use crate::config::{self, RunConfig, Source};
use crate::device::Device;
use crate::error::SimError;
use crate::flows;

/// A run's validated parts, before time zero.
pub(crate) struct Prepared {
    pub(crate) nand: ftlab_nand::NandConfig,
    pub(crate) builder: registry::Builder,
    pub(crate) source: Source,
    pub(crate) host: config::Host,
    pub(crate) dispatch: config::Dispatch,
    /// `metrics.bound_us`, ns.
    pub(crate) bound_ns: Option<u64>,
    /// `[[flow]]`s (empty: `source` is the workload) and `host.fetch_size`.
    pub(crate) flows: Vec<flows::Flow>,
    pub(crate) fetch: crate::engine::Fetch,
    /// `host.multi_plane_reads`.
    pub(crate) multi_plane_reads: bool,
}

/// `config` checked as a whole, each part by its own check and the parts
/// against each other: every error a run finds before time zero.
pub(crate) fn prepare(config: &RunConfig) -> Result<Prepared, SimError> {
    let seed = config.seed();
    let nand = config.device.nand_config(seed)?;
    let flows = flows::flows(config)?;
    let fetch = flows::fetch_size(config)?;
    let source = match flows.first() {
        Some(f) => f.source.clone(),
        None => config.workload.source()?,
    };
    let builder = ftl_builder(config, Some(&source))?;
    let host = config.host.resolve(&source)?;
    config.precondition.validate()?;
    if let Some(f) = config.workload.stop_at_retired_fraction {
        if !(f > 0.0 && f <= 1.0) {
            return Err(SimError::config(
                "workload.stop_at_retired_fraction",
                format!("workload.stop_at_retired_fraction must be in (0, 1] (a fraction of the good blocks), got {f}"),
            ));
        }
    }
    if let Some(ms) = config.metrics.interval_ms {
        // Time is kept in nanoseconds: a shorter interval was 0 ns wide.
        if !(1e-6..=1e9).contains(&ms) {
            return Err(SimError::config(
                "metrics.interval_ms",
                format!("metrics.interval_ms must be from 0.000001 (1 ns) to 1e9 (about 11.6 days), got {ms}"),
            ));
        }
    }
    let bound_ns = config.metrics.bound_ns()?;
    // Periodic tasks are dispatched earliest deadline first per die (000 Section
    // 5); everything else by request.
    let tasks = matches!(source, Source::Tasks { .. });
    let dispatch =
        config.host.dispatch.unwrap_or(if tasks { config::Dispatch::PerDieEdf } else { config::Dispatch::Request });
    if dispatch != config::Dispatch::Request && config.device.host_link()?.is_some() {
        let key =
            if config.device.host_mb_per_s.is_some() { "device.host_mb_per_s" } else { "device.command_overhead_us" };
        return Err(SimError::config(
            key,
            format!(
                "{key} models the host link of requests dispatched whole (host.dispatch = \"request\"); \
                 page commands dispatched per die (periodic tasks' default) have no host link model: \
                 set host.dispatch = \"request\" or leave {key} out"
            ),
        ));
    }
    if flows.is_empty() && dispatch == config::Dispatch::PerDiePriority {
        return Err(SimError::config(
            "host.dispatch",
            "\"per-die-priority\" orders the reads of [[flow]]s by their flows' priority classes, and this run \
             has no [[flow]]: set host.dispatch = \"per-die-edf\" (per die, earliest deadline first) or \
             \"request\"",
        ));
    }
    let multi_plane_reads = config.host.multi_plane_reads.unwrap_or(false);
    if multi_plane_reads && (flows.is_empty() || dispatch == config::Dispatch::Request) {
        return Err(SimError::config(
            "host.multi_plane_reads",
            "host.multi_plane_reads groups the reads of [[flow]]s that wait at their dies, and this run has \
             no [[flow]] or dispatches by request: give it [[flow]]s with host.dispatch = \"per-die-priority\" \
             or \"per-die-edf\", or leave host.multi_plane_reads out",
        ));
    }
    if multi_plane_reads && !nand.commands.multi_plane {
        return Err(SimError::config(
            "host.multi_plane_reads",
            "host.multi_plane_reads issues multi-plane reads, which the chip takes only with \
             device.commands.multi_plane = true: set that, or leave host.multi_plane_reads out",
        ));
    }
    if multi_plane_reads && config.device.read_buffer_pages.is_some_and(|p| p > 0) {
        return Err(SimError::config(
            "host.multi_plane_reads",
            "host.multi_plane_reads joins host reads of the flash into multi-plane reads, and with \
             device.read_buffer_pages every host read goes through the read buffer, one page at a time: \
             leave one of the two out",
        ));
    }
    Ok(Prepared { nand, builder, source, host, dispatch, bound_ns, flows, fetch, multi_plane_reads })
}

/// The FTL `config`'s `[ftl]` table (and `device.over_provisioning`) names,
/// configured; an FTL that admits tasks gets `source`'s task set unless the
/// table gives one.
pub(crate) fn ftl_builder(config: &RunConfig, source: Option<&Source>) -> Result<registry::Builder, SimError> {
    let mut params = config.ftl.params.clone();
    if let Some(op) = config.device.over_provisioning {
        if params.contains_key("over_provisioning") {
            return Err(SimError::config(
                "ftl.over_provisioning",
                "over_provisioning is set in both [device] and [ftl]; set it once",
            ));
        }
        params.insert("over_provisioning".into(), toml::Value::Float(op));
    }
    let kind = &config.ftl.kind;
    let builder = match source {
        // FTLs with admission control get the workload's task set unless the
        // configuration gives one; refused tasks then simply do not run.
        Some(Source::Tasks { tasks, duration_ns })
            if registry::scheme(kind).is_some_and(|s| s.admits_tasks) && !params.contains_key("tasks") =>
        {
            registry::build_with_tasks(kind, &params, &periodic_tasks(tasks, *duration_ns))
        }
        _ => registry::build(kind, &params),
    }
    .map_err(|e| SimError::building(kind, e))?;
    if config.device.read_buffer_mode.is_some() && config.device.read_buffer_pages.is_none() {
        return Err(SimError::config(
            "device.read_buffer_mode",
            "device.read_buffer_mode says what the read buffer holds pages for: set device.read_buffer_pages too, \
             or leave it out",
        ));
    }
    let builder: Box<dyn ftlab_ftl::FtlBuilder + Send + Sync> =
        match &config.device.data_cache {
            None => builder,
            Some(_) if config.device.write_buffer_pages.is_some() => return Err(SimError::config(
                "device.data_cache",
                "[device.data_cache] and device.write_buffer_pages are two write caches in front of the FTL: keep one",
            )),
            Some(spec) => Box::new(ftlab_ftl::data_cache::DataCacheBuilder { inner: builder, params: spec.params()? }),
        };
    Ok(match config.device.write_buffer_pages {
        None if config.device.dram_mb_per_s.is_some() && config.device.read_buffer_pages.is_none() => {
            return Err(SimError::config(
                "device.dram_mb_per_s",
                "device.dram_mb_per_s is the buffers' copy rate: set device.write_buffer_pages or \
                 device.read_buffer_pages too, or leave it out",
            ))
        }
        None => builder,
        Some(0) => {
            return Err(SimError::config(
                "device.write_buffer_pages",
                "device.write_buffer_pages = 0 is no buffer: leave it out, or give it at least 1 page",
            ))
        }
        Some(pages) => {
            let b = ftlab_ftl::buffer::WriteBufferBuilder::new(builder, pages as usize);
            Box::new(match config.device.dram_mb_per_s {
                Some(rate) => b.with_dram(rate).map_err(|e| SimError::building(kind, e))?,
                None => b,
            })
        }
    })
}

/// The workload's periodic tasks as an admitting FTL takes them (periods in ms;
/// a task without a lifetime keeps its data for the whole run).
fn periodic_tasks(tasks: &[config::TaskSpec], duration_ns: u64) -> Vec<registry::PeriodicTask> {
    let ms = |us: Option<f64>| us.map_or(0.0, |u| u / 1e3);
    tasks
        .iter()
        .map(|t| registry::PeriodicTask {
            name: t.name.clone(),
            read_period_ms: ms(t.read_period_us),
            write_period_ms: ms(t.write_period_us),
            read_pages: u64::from(t.read_pages),
            write_pages: u64::from(t.write_pages),
            lifetime_ms: t.lifetime_us.map_or(duration_ns as f64 / 1e6, |l| l / 1e3),
            granularity: t.granularity.unwrap_or(1),
        })
        .collect()
}

/// Checks a configuration without running it: every error a run would hit
/// before time zero.
pub fn validate(config: &RunConfig) -> Result<(), SimError> {
    prepare(config).map(|_| ())
}

/// What an image records of the FTL: its kind and keys (with
/// `device.over_provisioning`), as one line of TOML.
pub(crate) fn ftl_label(config: &RunConfig) -> String {
    let mut table = config.ftl.params.clone();
    table.insert("kind".into(), toml::Value::String(config.ftl.kind.clone()));
    if let Some(op) = config.device.over_provisioning {
        table.insert("over_provisioning".into(), toml::Value::Float(op));
    }
    toml::Value::Table(table).to_string()
}

impl Device {
    /// The device `config`'s `[device]` and `[ftl]` tables describe, formatted,
    /// keeping real bytes (its workload is not used).
    pub fn open(config: &RunConfig) -> Result<Device, SimError> {
        Device::open_with_store(config, ftlab_nand::StoreKind::Bytes)
    }

    /// The device `config` describes, formatted, keeping page contents as
    /// `store` says (tokens for drivers that only need to prove integrity, such
    /// as the cache managers of [`crate::host::cache`]; the host commands of
    /// [`Device::submit`] need bytes).
    pub fn open_with_store(config: &RunConfig, store: ftlab_nand::StoreKind) -> Result<Device, SimError> {
        let mut nand = config.device.nand_config(config.seed())?;
        nand.store = store;
        let builder = ftl_builder(config, None)?;
        let nand = ftlab_nand::Nand::new(&nand).map_err(|e| SimError::config("device", format!("device: {e}")))?;
        let mut flash = Flash::new(nand);
        config.device.configure_flash(&mut flash)?;
        let ftl = {
            let mut io = flash.io(SimTime::ZERO);
            builder.format(&mut io).map_err(|e| SimError::building(&config.ftl.kind, e))?
        };
        let mut device = Device::new(flash, ftl, Some(builder));
        device.label = ftl_label(config);
        device.host_link = config.device.host_link()?;
        Ok(device)
    }
}
