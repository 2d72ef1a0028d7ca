//! ftlab's simulator: replays traces, generated workloads and periodic real-time
//! task sets through any FTL and reports what researchers publish.
//!
//! Several host flows, each with its own workload, queue and priority, can
//! share one device, with each flow's slowdown against its run alone
//! ([`flows`], `[[flow]]` tables).
//!
//! Host-side models sit beside the replay engine: a disk ([`disk`]), cache
//! managers that put a flash cache in front of it ([`cache`], over a plain SSD
//! or over the solid-state cache's commands of [`ssc`]), and FlashTier's
//! evaluation driving them with filebench-like personalities ([`flashtier`]).
//!
//! ```
//! use ftlab_sim::{run, RunConfig};
//!
//! let mut config = RunConfig::from_toml(
//!     r#"
//!     seed = 7
//!     [device]
//!     chip = "small-slc"
//!     blocks_per_plane = 64
//!     [ftl]
//!     kind = "pagemap"
//!     over_provisioning = 0.1
//!     [workload.generator]
//!     kind = "uniform"
//!     requests = 20000
//!     "#,
//!     "example",
//! )
//! .unwrap();
//! let report = run(&config, &mut |_| {}).unwrap();
//! assert_eq!(report.integrity, "ok");
//! assert!(report.waf.unwrap() >= 1.0);
//! ```

pub mod cache;
pub mod config;
pub mod device;
pub mod disk;
pub mod energy;
pub mod engine;
pub mod flashtier;
pub mod flows;
pub mod host_link;
pub mod image;
pub mod merge;
pub mod metrics;
pub mod source;
pub mod ssc;

use thiserror::Error;

pub use ftlab_ftl::ConfigError;
use ftlab_ftl::{registry, ErrorKind, Flash, FtlError};
use ftlab_nand::{Nand, SimTime};
use ftlab_workload::TraceError;

pub use config::{RunConfig, Source};
pub use engine::{Engine, Progress};
pub use image::ImageError;
pub use metrics::{Integrity, Report};

use crate::source::{Request, Requests, TaskSpace};

/// Errors of a run.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SimError {
    /// A configuration that cannot run, found before anything ran: the key
    /// path and the problem ([`ConfigError`]; its `key` is empty when the
    /// config file itself cannot be read or parsed, its message then names the
    /// file and the place).
    #[error("{0}")]
    Config(ConfigError),
    /// A cache manager of the FlashTier host side ([`cache`]) failed: a bad
    /// cache configuration, the disk or the cache device refusing a request, or
    /// a solid-state cache that lost a dirty block.
    #[error("{system}: {source}")]
    Cache {
        system: String,
        #[source]
        source: Box<cache::CacheError>,
    },
    /// Formatting the device for the FTL failed for a reason other than its
    /// configuration (the flash refused an operation).
    #[error("formatting the device for FTL `{ftl}` failed: {source}")]
    Format {
        ftl: String,
        #[source]
        source: FtlError,
    },
    #[error(transparent)]
    Trace(TraceError),
    /// The engine broke one of its own invariants (a defect of ftlab, not of the
    /// input): the run's numbers cannot be trusted.
    #[error("engine invariant broken: {0}")]
    Invariant(String),
    /// A time that does not fit the simulator's 64-bit ns clock; `input` names where
    /// it came from (a trace's file and line, or the request).
    #[error("{input}: {problem}")]
    TimeOverflow { input: String, problem: String },
    /// The workload yielded no request to run.
    #[error("workload {workload} yields no request: {reason}")]
    NoRequests { workload: String, reason: String },
    #[error("{op} of logical page {lpn} (request {request}, at {at_us:.3} us) failed: {source}")]
    Ftl {
        request: u64,
        op: String,
        lpn: u64,
        at_us: f64,
        #[source]
        source: FtlError,
    },
    /// A run that stopped with `error` after it started, and the report of what it
    /// did until then (its `error` field says why it stopped).
    #[error("{error}")]
    Stopped { error: Box<SimError>, report: Box<Report> },
}

impl SimError {
    /// A configuration error for `key` with `problem` ([`ConfigError`]).
    pub fn config(key: impl Into<String>, problem: impl Into<String>) -> Self {
        SimError::Config(ConfigError::new(key, problem))
    }

    /// The error of building or formatting FTL `kind`: its configuration
    /// errors keep their key, with the FTL named in the message.
    pub fn building(kind: &str, e: FtlError) -> Self {
        match e {
            FtlError::Config(c) => {
                SimError::Config(ConfigError { key: c.key, problem: format!("ftl `{kind}`: {}", c.problem) })
            }
            source => SimError::Format { ftl: kind.to_string(), source },
        }
    }

    /// The kind of failure, for front ends that map it to an errno or an
    /// exception class: a flash or FTL failure keeps the FTL's kind; bad input
    /// (configuration, trace, times) is [`ErrorKind::Invalid`]; a broken engine
    /// invariant is [`ErrorKind::Io`].
    pub fn kind(&self) -> ErrorKind {
        match self {
            SimError::Ftl { source, .. } | SimError::Format { source, .. } => source.kind(),
            SimError::Cache { source, .. } => match &**source {
                cache::CacheError::Config(_) | cache::CacheError::Disk(_) => ErrorKind::Invalid,
                cache::CacheError::Device(e) => e.kind(),
                _ => ErrorKind::Io,
            },
            SimError::Stopped { error, .. } => error.kind(),
            SimError::Invariant(_) => ErrorKind::Io,
            _ => ErrorKind::Invalid,
        }
    }
}

/// A run's validated parts, before time zero.
struct Prepared {
    nand: ftlab_nand::NandConfig,
    builder: registry::Builder,
    source: Source,
    host: config::Host,
    dispatch: config::Dispatch,
    /// `metrics.bound_us`, ns.
    bound_ns: Option<u64>,
    /// `[[flow]]`s (empty: `source` is the workload) and `host.fetch_size`.
    flows: Vec<flows::Flow>,
    fetch: u32,
}

fn prepare(config: &RunConfig) -> Result<Prepared, SimError> {
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
    if dispatch == config::Dispatch::PerDieEdf && config.device.host_link()?.is_some() {
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
    if !flows.is_empty() && dispatch != config::Dispatch::Request {
        return Err(SimError::config(
            "host.dispatch",
            "[[flow]] runs dispatch by request: leave host.dispatch out or set it to \"request\"",
        ));
    }
    Ok(Prepared { nand, builder, source, host, dispatch, bound_ns, flows, fetch })
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

/// Requests of the sequential fill and random overwrites of preconditioning.
/// The fill writes `fill_span` logical pages a request (one flash page's worth
/// when the FTL's unit is smaller than the flash page, as a sequential writer's
/// requests merged by the host arrive), the last one cut at the end of the
/// space; the overwrites one logical page each.
fn precondition_requests(
    logical_pages: u64,
    page_size: u32,
    fill_span: u64,
    overwrites: f64,
    seed: u64,
    fill: bool,
) -> impl Iterator<Item = Result<Request, SimError>> {
    use ftlab_workload::Op;
    let ps = u64::from(page_size);
    let span = fill_span.max(1);
    let fill_pages = if fill { logical_pages.div_ceil(span) } else { 0 };
    let random = (overwrites * logical_pages as f64) as u64;
    // A small, seeded xorshift is enough here and keeps the stream independent of
    // the workload's own generator.
    let mut x = seed ^ 0x9e37_79b9_7f4a_7c15;
    (0..fill_pages + random).map(move |i| {
        let (lpn, pages) = if i < fill_pages {
            (i * span, span.min(logical_pages - i * span))
        } else {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % logical_pages, 1)
        };
        Ok(Request {
            arrival: 0,
            op: Op::Write,
            offset: lpn * ps,
            len: (pages * ps) as u32,
            deadline: None,
            task: None,
            expiry: None,
        })
    })
}

/// Runs `config` and reports. `progress` is called every few thousand requests.
///
/// With `[[flow]]`s, each flow then runs alone on a fresh device too (same
/// preconditioning, same part of the space, same seed), and the report gives
/// each flow's slowdown ([`flows`]).
pub fn run(config: &RunConfig, progress: &mut dyn FnMut(Progress)) -> Result<Report, SimError> {
    let mut shared = run_one(config, None, progress)?;
    if shared.flows.is_empty() {
        return Ok(shared);
    }
    let mut alone = Vec::with_capacity(config.flows.len());
    for i in 0..config.flows.len() {
        alone.push(run_one(config, Some(i), progress)?);
    }
    flows::set_slowdowns(&mut shared, &alone);
    Ok(shared)
}

/// One run of `config`; with `[[flow]]`s, of all flows or of flow `only`.
fn run_one(config: &RunConfig, only: Option<usize>, progress: &mut dyn FnMut(Progress)) -> Result<Report, SimError> {
    let mut sim = Simulation::new(config)?;
    if let Err(e) = sim.precondition(progress) {
        let (report, outcome) = report(config, &sim.prepared, &mut sim.engine, None, Err(e));
        return finish(report, outcome);
    }
    if sim.prepared.flows.is_empty() {
        sim.measure(progress)
    } else {
        sim.measure_flows(only, progress)
    }
}

/// `report`, or the error that stopped the run carrying the report (its `error`
/// set).
fn finish(mut report: Report, outcome: Result<(), SimError>) -> Result<Report, SimError> {
    match outcome {
        Ok(()) => Ok(report),
        Err(error) => {
            report.error = Some(error.to_string());
            Err(SimError::Stopped { error: Box::new(error), report: Box::new(report) })
        }
    }
}

/// A run in its phases: [`Simulation::new`] validates and formats the device,
/// [`Simulation::precondition`] brings it to steady state unmeasured, and
/// [`Simulation::measure`] replays the workload and reports.
pub struct Simulation {
    config: RunConfig,
    prepared: Prepared,
    engine: Engine,
    /// The FTL's admission verdicts on the task set, if it admits tasks.
    admission: Option<Vec<ftlab_ftl::StreamVerdict>>,
}

impl std::fmt::Debug for Simulation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulation").field("engine", &self.engine).finish_non_exhaustive()
    }
}

impl Simulation {
    /// Validates `config` and formats the device.
    pub fn new(config: &RunConfig) -> Result<Simulation, SimError> {
        let p = prepare(config)?;
        let nand = Nand::new(&p.nand).map_err(|e| SimError::config("device", format!("device: {e}")))?;
        let mut flash = Flash::new(nand);
        // A replay never cuts the power: the medium keeps no undo log.
        flash.set_power_cuts(false);
        config.device.configure_flash(&mut flash)?;
        let ftl = {
            let mut io = flash.io(SimTime::ZERO);
            p.builder.format(&mut io).map_err(|e| SimError::building(&config.ftl.kind, e))?
        };
        let interval_ns = config.metrics.interval_ms.map(|ms| (ms * 1e6) as u64);
        let admission = ftl.realtime().and_then(|r| r.admission());
        let mut engine = Engine::new(flash, ftl, p.host, p.nand.store, interval_ns);
        engine.set_host_link(config.device.host_link()?);
        if let Some(b) = p.bound_ns {
            engine.set_bound(b);
        }
        Ok(Simulation { config: config.clone(), prepared: p, engine, admission })
    }

    /// Logical pages the FTL exports.
    pub fn logical_pages(&self) -> u64 {
        self.engine.logical_pages()
    }

    /// Bytes of one logical page: the flash page, or the FTL's smaller
    /// mapping unit ([`ftlab_ftl::Ftl::unit_bytes`]).
    pub fn page_size(&self) -> u32 {
        self.engine.unit_bytes() as u32
    }

    /// Physical pages of the device.
    pub fn physical_pages(&self) -> u64 {
        u64::from(self.engine.device.flash.nand().geometry().total_pages())
    }

    /// The FTL's own service-time bound of one page command on this device
    /// (what a run checks unless `metrics.bound_us` is set), if it promises one.
    pub fn ftl_bound(&self) -> Option<SimTime> {
        ftlab_ftl::service_bound(&*self.engine.device.ftl)
    }

    /// Runs the `[precondition]` writes (closed loop, unmeasured).
    pub fn precondition(&mut self, progress: &mut dyn FnMut(Progress)) -> Result<(), SimError> {
        let pre = &self.config.precondition;
        if pre.fill || pre.random_overwrites > 0.0 {
            let page_size = self.engine.unit_bytes() as u32;
            let span = self.engine.flash_page_bytes() / u64::from(page_size);
            let mut reqs = precondition_requests(
                self.engine.logical_pages(),
                page_size,
                span,
                pre.random_overwrites,
                self.config.seed(),
                pre.fill,
            );
            self.engine.drive_closed(&mut reqs, self.prepared.host, progress)?;
        }
        Ok(())
    }

    /// Runs the `[[flow]]`s (all, or only flow `only`), measuring, and reports
    /// each flow's response times (no slowdowns: [`run`] adds them).
    pub fn measure_flows(
        mut self,
        only: Option<usize>,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Report, SimError> {
        let config = &self.config;
        if config.host.merge_bytes.is_some() {
            return Err(SimError::config("host.merge_bytes", "host.merge_bytes does not apply to [[flow]] runs"));
        }
        let p = &self.prepared;
        let engine = &mut self.engine;
        engine.start_measuring(config.precondition.start_at_first_gc);
        if let Some(f) = config.workload.stop_at_retired_fraction {
            engine.stop_at_retired(f);
        }
        let offset = engine.busy_until();
        let driven = flows::drive(engine, &p.flows, only, p.fetch, &p.host, offset, progress);
        let (flows, driven) = match driven {
            Ok(f) => (f, Ok(())),
            Err(e) => (Vec::new(), Err(e)),
        };
        let (mut report, outcome) = report(config, p, engine, None, driven);
        if only.is_some() {
            report.workload = format!("{} alone", report.workload);
        }
        report.flows = flows;
        finish(report, outcome)
    }

    /// Replays the workload, measuring, and reports. A run that stops with an
    /// error is [`SimError::Stopped`], with the report of what it did.
    pub fn measure(mut self, progress: &mut dyn FnMut(Progress)) -> Result<Report, SimError> {
        let config = &self.config;
        let p = &self.prepared;
        let seed = config.seed();
        let engine = &mut self.engine;
        let logical_pages = engine.logical_pages();
        let space = TaskSpace {
            // With a task space the tasks' data lives there; else in the logical space.
            first_page: logical_pages,
            pages: engine.addressable_pages() - logical_pages,
            admitted: self.admission.iter().flatten().map(|v| v.admitted).collect(),
        };
        let space = if space.pages == 0 { TaskSpace { first_page: 0, ..space } } else { space };
        let mut requests = Requests::open(
            &p.source,
            &space,
            logical_pages,
            engine.unit_bytes() as u32,
            seed,
            p.host.time_scale,
            p.host.reorder_window,
        )?;
        engine.set_dispatch(p.dispatch);
        engine.set_tasks(requests.task_names());
        engine.start_measuring(config.precondition.start_at_first_gc);
        if let Some(f) = config.workload.stop_at_retired_fraction {
            engine.stop_at_retired(f);
        }
        let offset = engine.busy_until();
        let edf = matches!(p.source, Source::Tasks { .. });
        let driven = match (config.workload.max_requests, config.host.merge_bytes) {
            (Some(n), None) => engine.drive(&mut requests.by_ref().take(n as usize), offset, edf, progress),
            (None, None) => engine.drive(&mut requests, offset, edf, progress),
            (n, Some(max)) => {
                let mut limited = requests.by_ref().take(n.map_or(usize::MAX, |n| n as usize));
                engine.drive(&mut merge::Merge::new(&mut limited, max), offset, edf, progress)
            }
        };
        let (mut report, outcome) = report(config, p, engine, Some(&requests), driven);
        for (task, verdict) in report.tasks.iter_mut().zip(self.admission.iter().flatten()) {
            task.admitted = verdict.admitted;
            task.refused_by = verdict.reason.clone();
        }
        report.tasks_refused = report.tasks.iter().filter(|t| !t.admitted).count() as u64;
        finish(report, outcome)
    }
}

/// The report of a run whose replay ended with `outcome`, and the run's outcome:
/// the final read-back of every page (data integrity) runs only after a replay
/// that succeeded, and its own error is the outcome then.
fn report(
    config: &RunConfig,
    p: &Prepared,
    engine: &mut Engine,
    requests: Option<&Requests>,
    outcome: Result<(), SimError>,
) -> (Report, Result<(), SimError>) {
    let seed = config.seed();
    let geometry = *engine.device.flash.nand().geometry();
    let logical_pages = engine.logical_pages();
    let end = engine.busy_until();
    let counters = *engine.device.flash.counters();
    let erase_count = metrics::EraseStats::of(&engine.device.flash);
    let (rber, retired_fraction) = metrics::RberStats::of(&engine.device.flash);
    let ram_bytes = engine.device.ftl.ram_bytes();
    let memory = metrics::MemoryReport::of(
        engine.device.ftl.memory(),
        engine.device.flash.nand().memory(),
        engine.model_bytes(),
        u64::from(geometry.total_pages()),
    );
    let outcome = outcome.and_then(|()| engine.verify_all().map(drop));
    let m = &engine.measured;
    let verdict = match m.first_mismatch {
        None => metrics::Integrity::Ok,
        Some(first) => metrics::Integrity::Failed { mismatches: m.mismatches, first },
    };
    let sim_seconds = if engine.measuring { end.saturating_sub(engine.measure_start) as f64 / 1e9 } else { 0.0 };
    let per_second = |x: f64| if sim_seconds > 0.0 { x / sim_seconds } else { 0.0 };
    let mut report = Report {
        ftl: config.ftl.kind.clone(),
        chip: config.device.chip.clone(),
        workload: if p.flows.is_empty() {
            p.source.describe()
        } else {
            p.flows.iter().map(|f| format!("{}: {}", f.name, f.source.describe())).collect::<Vec<_>>().join("; ")
        },
        seed,
        requests: m.requests,
        host_pages_read: m.pages_read,
        host_pages_written: m.pages_written,
        host_pages_trimmed: m.pages_trimmed,
        rmw_pages: m.rmw_pages,
        read_us: m.read.summary(),
        write_us: m.write.summary(),
        trim_us: m.trim.summary(),
        erase_count,
        rber,
        retired_fraction,
        rber_cdf: metrics::rber_cdf(&engine.device.flash),
        erase_histogram: metrics::erase_histogram(&engine.device.flash),
        stopped_at_retired_fraction: engine.stopped_at_retired_fraction,
        // Logical pages of a sub-page unit fill a fraction of a flash page
        // (factor 1 for flash-page units, so those figures are unchanged).
        space_utilization: logical_pages as f64
            / (f64::from(geometry.total_pages()) * (u64::from(geometry.page_size) / engine.unit_bytes()) as f64),
        logical_pages,
        physical_pages: u64::from(geometry.total_pages()),
        ram_bytes,
        memory,
        ftl_bound_us: ftlab_ftl::service_bound(&*engine.device.ftl).map(|b| b.0 as f64 / 1e3),
        bound_us: engine.bound_ns().map(|b| b as f64 / 1e3),
        bound_violations: engine.bound_ns().map(|_| m.bound_violations),
        max_service_us: m.max_service_ns as f64 / 1e3,
        rmw_bound_us: engine.bound_ns().map(|b| b.saturating_mul(2) as f64 / 1e3),
        rmw_bound_violations: engine.bound_ns().map(|_| m.rmw_bound_violations),
        max_rmw_service_us: m.max_rmw_service_ns as f64 / 1e3,
        max_read_block_us: m.max_read_block_ns.map(|ns| ns as f64 / 1e3),
        deadline_misses: m.tasks.iter().map(|t| t.deadline_misses).sum(),
        tasks: m.tasks.clone(),
        sim_seconds,
        iops: per_second(m.requests as f64),
        read_mb_per_s: per_second(m.bytes_read as f64 / 1e6),
        write_mb_per_s: per_second(m.bytes_written as f64 / 1e6),
        throughput: {
            let mut s = m.throughput.series_at_end(&counters);
            s.fill_die_idle(geometry.dies());
            s
        },
        energy: config.device.energy.map(|e| e.report(&counters, m.pages_read, m.pages_written)),
        die_time: energy::DieTimeReport::of(
            &counters,
            geometry.dies(),
            if engine.measuring { end.saturating_sub(engine.measure_start) } else { 0 },
            m.requests,
        ),
        ftl_gauges: m.throughput.final_gauges(),
        ftl_curves: engine.device.ftl.curves().into_iter().map(|(n, c)| (n.to_owned(), c)).collect(),
        integrity: verdict.to_string(),
        verdict,
        integrity_errors: m.mismatches,
        expired_reads: m.expired_reads,
        late_requests: requests.map_or(0, |r| r.late),
        unsupported: config.unsupported.clone(),
        ..Report::default()
    };
    report.set_flash(&counters);
    if let Some((skipped, address)) = requests.and_then(Requests::trace_info) {
        report.skipped_lines = skipped;
        report.address = Some(address);
    }
    (report, outcome)
}
