//! A run in its phases ([`Simulation`]: validate and format, precondition,
//! measure) and a whole run ([`run`]: with `[[flow]]`s, each flow alone too).

use ftlab_ftl::Flash;
use ftlab_nand::{Nand, SimTime};

use crate::config::{RunConfig, Source};
use crate::engine::{Engine, Progress};
use crate::error::SimError;
use crate::flows;
use crate::merge;
use crate::metrics::Report;
use crate::report::{finish, report};
use crate::setup::{prepare, Prepared};
use crate::source::{Request, Requests, TaskSpace};

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
/// each flow's slowdown ([`flows`]), unless `metrics.slowdown = false`.
pub fn run(config: &RunConfig, progress: &mut dyn FnMut(Progress)) -> Result<Report, SimError> {
    run_timed(config, progress).map(|(report, _)| report)
}

/// What the alone runs of a `[[flow]]` run cost ([`run_timed`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AloneCost {
    /// Runs made, one a flow.
    pub runs: usize,
    /// Threads they ran on at once.
    pub threads: usize,
    /// Wall time they took, s.
    pub wall_s: f64,
}

/// [`run`], and what its alone runs cost (`None` when none were made). The
/// alone runs are independent, so they run side by side on as many threads
/// as the machine has cores and memory for the device's tables (each run
/// keeps its own device); the report is the same whatever the number.
pub fn run_timed(
    config: &RunConfig,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Report, Option<AloneCost>), SimError> {
    let mut shared = run_one(config, None, progress)?;
    if shared.flows.is_empty() || config.metrics.slowdown == Some(false) {
        return Ok((shared, None));
    }
    let started = std::time::Instant::now();
    let n = config.flows.len();
    let threads = parallel_runs(config, n);
    let mut alone = Vec::with_capacity(n);
    if threads <= 1 {
        for i in 0..n {
            alone.push(run_one(config, Some(i), progress)?);
        }
    } else {
        let order: Vec<usize> = (0..n).collect();
        for chunk in order.chunks(threads) {
            let results: Vec<Result<Report, SimError>> = std::thread::scope(|s| {
                let handles: Vec<_> =
                    chunk.iter().map(|&i| s.spawn(move || run_one(config, Some(i), &mut |_| {}))).collect();
                handles.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
            });
            for r in results {
                alone.push(r?);
            }
        }
    }
    flows::set_slowdowns(&mut shared, &alone);
    let cost = AloneCost { runs: n, threads: threads.max(1), wall_s: started.elapsed().as_secs_f64() };
    Ok((shared, Some(cost)))
}

/// How many of `n` runs of `config` go side by side: the machine's cores, and
/// no more devices than its memory holds ([`crate::config::TABLE_BYTES_PER_PAGE`]
/// a physical page, twice over for the run's other state).
fn parallel_runs(config: &RunConfig, n: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let by_memory = config
        .device
        .table_bytes(config.seed())
        .ok()
        .zip(crate::config::memory_limit())
        .map_or(1, |(need, (limit, _))| (limit / need.saturating_mul(2).max(1)) as usize);
    cores.min(n).min(by_memory).max(1)
}

/// One run of `config`; with `[[flow]]`s, of all flows or of flow `only`.
fn run_one(config: &RunConfig, only: Option<usize>, progress: &mut dyn FnMut(Progress)) -> Result<Report, SimError> {
    // A flow's alone run logs nothing: the shared run's log is the run's.
    let mut sim = if only.is_some() && config.metrics.latency_log.is_some() {
        let mut alone = config.clone();
        alone.metrics.latency_log = None;
        Simulation::new(&alone)?
    } else {
        Simulation::new(config)?
    };
    sim.engine.expected = sim.expected_requests();
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

/// Lines of the uncompressed trace at `path` (`None` for a compressed one
/// or one that cannot be read: the replay reports those errors).
fn trace_lines(path: &std::path::Path) -> Option<u64> {
    use std::io::Read;
    if path.extension().is_some_and(|e| e == "gz" || e == "zst" || e == "xz" || e == "bz2") {
        return None;
    }
    let mut file = std::fs::File::open(path).ok()?;
    let mut buf = vec![0u8; 1 << 20];
    let mut lines = 0u64;
    loop {
        let n = file.read(&mut buf).ok()?;
        if n == 0 {
            return Some(lines);
        }
        lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
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
        let mut ftl = {
            let mut io = flash.io(SimTime::ZERO);
            p.builder.format(&mut io).map_err(|e| SimError::building(&config.ftl.kind, e))?
        };
        if ftl.zoned().is_some() {
            return Err(SimError::config(
                "ftl.kind",
                format!(
                    "ftl.kind = \"{}\" is a zoned device: it takes zone commands, not a replay's block writes \
                     (each zone is written at its write pointer only); replay through the host FTL over it, \
                     ftl.kind = \"zns-host\", or drive its zones from Python's ftlab.Device (zones, zone_append, \
                     zone_write, zone_manage)",
                    config.ftl.kind
                ),
            ));
        }
        let interval_ns = config.metrics.interval_ms.map(|ms| (ms * 1e6) as u64);
        let admission = ftl.realtime().and_then(|r| r.admission());
        let mut engine = Engine::new(flash, ftl, p.host, p.nand.store, interval_ns);
        engine.set_host_link(config.device.host_link()?);
        if let Some(b) = p.bound_ns {
            engine.set_bound(b);
        }
        if let Some(path) = &config.metrics.latency_log {
            engine.latency_log = Some(crate::latency_log::LatencyLog::create(path)?);
        }
        if let Some(n) = config.host.logical_pages {
            if n == 0 || n > engine.logical_pages() {
                return Err(SimError::config(
                    "host.logical_pages",
                    format!(
                        "host.logical_pages = {n}: give from 1 to the {} logical pages {} exports here, or leave it \
                         out for all of them",
                        engine.logical_pages(),
                        config.ftl.kind
                    ),
                ));
            }
            engine.set_host_pages(n);
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

    /// Bytes of a logical page (the flash page, or the FTL's smaller unit).
    pub fn unit_bytes(&self) -> u64 {
        self.engine.unit_bytes()
    }

    /// Bytes of the flash: its pages times the page size.
    pub fn physical_bytes(&self) -> u64 {
        let g = self.engine.device.flash.nand().geometry();
        u64::from(g.total_pages()) * u64::from(g.page_size)
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

    /// The requests the run will dispatch, preconditioning included, when
    /// that is known before it starts: a generated workload of fixed length,
    /// or an uncompressed trace (its lines counted, so a reading of the file:
    /// fast next to the replay), capped by `workload.max_requests`. `None` for
    /// flows (they end by their stop times), task sets and compressed traces.
    pub fn expected_requests(&self) -> Option<u64> {
        if !self.prepared.flows.is_empty() {
            return None;
        }
        let pre = &self.config.precondition;
        let logical = self.engine.host_pages();
        let span = (self.engine.flash_page_bytes() / self.engine.unit_bytes()).max(1);
        let fill = if pre.fill { logical.div_ceil(span) } else { 0 };
        let random = (pre.random_overwrites * logical as f64) as u64;
        let measured = match &self.prepared.source {
            Source::Generator { spec, .. } => spec.requests(),
            Source::Trace { path, repeat, .. } => trace_lines(path).map(|n| n * u64::from(*repeat)),
            Source::Tasks { .. } => None,
        }?;
        let measured = self.config.workload.max_requests.map_or(measured, |m| measured.min(m));
        Some(fill + random + measured)
    }

    /// Runs the `[precondition]` writes (closed loop, unmeasured).
    pub fn precondition(&mut self, progress: &mut dyn FnMut(Progress)) -> Result<(), SimError> {
        let pre = &self.config.precondition;
        if pre.fill || pre.random_overwrites > 0.0 {
            let page_size = self.engine.unit_bytes() as u32;
            let span = self.engine.flash_page_bytes() / u64::from(page_size);
            let mut reqs = precondition_requests(
                self.engine.host_pages(),
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
        engine.set_dispatch(p.dispatch);
        engine.set_multi_plane_reads(p.multi_plane_reads);
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
            engine.host_pages(),
            engine.unit_bytes() as u32,
            seed,
            p.host.time_scale,
            p.host.reorder_window,
        )?;
        if let Some(spec) = &config.workload.placement {
            requests.place(spec, engine.host_pages(), engine.unit_bytes() as u32);
        }
        engine.set_dispatch(p.dispatch);
        engine.set_multi_plane_reads(p.multi_plane_reads);
        if engine.expected.is_none() {
            if let Some(share) = requests.input_share() {
                engine.estimate_from(share, config.workload.max_requests);
            }
        }
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
