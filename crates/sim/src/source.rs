//! Request sources: a trace (address-folded, time-scaled, sorted within a
//! window), a generator, or periodic real-time tasks.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use ftlab_workload::generate::RequestStream;
use ftlab_workload::{AddressMapper, HostRequest, Op, ReadOptions, TraceError, TraceReader};

use crate::config::{Source, TaskSpec};
use crate::error::SimError;

/// One host request as the engine sees it: byte range inside the logical space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Arrival, ns since the start of the workload.
    pub arrival: u64,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    /// Absolute deadline (periodic tasks), ns since the start of the workload.
    pub deadline: Option<u64>,
    /// Index of the task that issued it, or the stream of its data: a flow's
    /// `stream`, or the lifetime label of a generator that labels its requests
    /// (`lsm`, `flashcache`). It becomes the write's [`ftlab_ftl::Hint::stream`];
    /// per-task statistics count only requests with a deadline (periodic tasks).
    pub task: Option<u32>,
    /// When the written data expires, ns since the start of the workload.
    pub expiry: Option<u64>,
}

impl Request {
    fn from_host(r: HostRequest, arrival: u64) -> Request {
        Request { arrival, op: r.op, offset: r.offset, len: r.len, deadline: None, task: None, expiry: None }
    }
}

/// A stream of requests in arrival order.
/// How far a trace replay is through its file ([`Requests::input_share`]).
#[derive(Debug, Clone)]
pub struct InputShare {
    read: std::sync::Arc<std::sync::atomic::AtomicU64>,
    total: u64,
    taken: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl InputShare {
    /// Requests the whole replay will yield, estimated from those it yielded
    /// so far and the share of the file read for them (read ahead in buffers,
    /// so low at first, converging as the replay goes); `None` before
    /// anything is read.
    pub fn estimate(&self) -> Option<u64> {
        use std::sync::atomic::Ordering::Relaxed;
        let (read, taken) = (self.read.load(Relaxed), self.taken.load(Relaxed));
        (read > 0 && taken > 0).then(|| (taken as f64 * self.total as f64 / read.min(self.total) as f64).round() as u64)
    }
}

pub struct Requests {
    inner: Inner,
    /// A placement policy applied to each request as it is taken, if any
    /// (the oracle's is applied when the stream is read ahead).
    placer: Option<Placer>,
    /// Requests whose timestamps came too late for the reorder window.
    pub late: u64,
}

impl std::fmt::Debug for Requests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Requests").field("late", &self.late).finish_non_exhaustive()
    }
}

/// A placement policy applied request by request ([`crate::placement`]).
enum Placer {
    /// Every write's stream dropped.
    None,
    /// Each write's stream inferred from its page's last lifetime.
    Lifetime(crate::placement::Inference),
}

enum Inner {
    Trace(Box<TraceSource>),
    /// The stream, its time scale, and whether its `device` is a lifetime
    /// label to pass on as the request's stream.
    Generator(RequestStream, f64, bool),
    Tasks(TaskSource),
    /// Read ahead and placed by the oracle.
    Buffered(VecDeque<Result<Request, SimError>>),
}

struct TraceSource {
    reader: TraceReader,
    mapper: AddressMapper,
    pending: Vec<HostRequest>,
    /// Requests read ahead with the trace line each came from, sorted by time
    /// (stable): traces are nearly sorted, so an insertion from the back is almost
    /// always a push.
    window: VecDeque<(u64, u64, HostRequest)>,
    window_size: usize,
    base: Option<u64>,
    last: u64,
    time_scale: f64,
    exhausted: bool,
    /// The end was reached and reported.
    ended: bool,
    /// Passes over the trace still to start after this one, how to open it
    /// again, the shift of this pass's arrivals (ns) and the requests it yielded.
    passes_left: u32,
    reopen: (std::path::PathBuf, ftlab_workload::TraceFormat, ReadOptions),
    pass_offset: u64,
    pass_requests: u64,
    /// Bytes read from the file over every pass, and the bytes of all passes
    /// (the file's size times the passes), for [`Requests::input_share`].
    read: std::sync::Arc<std::sync::atomic::AtomicU64>,
    total_bytes: Option<u64>,
    /// Requests yielded over every pass.
    taken: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// With placement by volume: the streams its volume numbers are folded
    /// into (a request's stream is its volume modulo this).
    volume_streams: Option<u32>,
}

/// The latest arrival a trace may ask for, in ns after its first request: half the
/// 64-bit ns clock (292 years), leaving the other half for the time the device
/// takes to serve what arrived.
const MAX_TRACE_ARRIVAL_NS: u64 = u64::MAX / 2;

/// `t` times `factor`, rounded; `None` if it does not fit the 64-bit ns clock.
fn scale(t: u64, factor: f64) -> Option<u64> {
    if factor == 1.0 {
        return Some(t);
    }
    let scaled = (t as f64 * factor).round();
    // `u64::MAX as f64` is 2^64: at or beyond it the cast would saturate silently.
    (scaled < u64::MAX as f64).then_some(scaled as u64)
}

fn scale_overflow(t: u64, factor: f64) -> String {
    format!("time {t} ns x time_scale {factor} does not fit the 64-bit ns clock; use a smaller time_scale")
}

impl TraceSource {
    fn time_overflow(&self, line: u64, problem: String) -> SimError {
        SimError::TimeOverflow { input: format!("{}:{line}", self.reader.path().display()), problem }
    }

    fn fill(&mut self) -> Result<(), SimError> {
        while !self.exhausted && self.window.len() < self.window_size {
            if let Some(r) = self.pending.pop() {
                // `pending` holds the pieces of the line just read.
                let line = self.reader.lines_read();
                let Some(t) = scale(r.arrival_ns, self.time_scale) else {
                    return Err(self.time_overflow(line, scale_overflow(r.arrival_ns, self.time_scale)));
                };
                if self.window.back().is_none_or(|(u, _, _)| *u <= t) {
                    self.window.push_back((t, line, r));
                } else {
                    let at = self.window.iter().rposition(|(u, _, _)| *u <= t).map_or(0, |i| i + 1);
                    self.window.insert(at, (t, line, r));
                }
                continue;
            }
            match self.reader.next() {
                None => self.exhausted = true,
                Some(r) => {
                    let r = r.map_err(SimError::Trace)?;
                    self.mapper.map(r, &mut self.pending).map_err(SimError::Trace)?;
                    // `map` appends in order; pop from the back after reversing.
                    self.pending.reverse();
                }
            }
        }
        Ok(())
    }

    fn next(&mut self, late: &mut u64) -> Option<Result<Request, SimError>> {
        if let Err(e) = self.fill() {
            return Some(Err(e));
        }
        let Some((t, line, r)) = self.window.pop_front() else {
            if self.passes_left > 0 && self.pass_requests > 0 {
                return self.next_pass(late);
            }
            return self.end();
        };
        self.pass_requests += 1;
        self.taken.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let base = *self.base.get_or_insert(t);
        let Some(mut at) = t.saturating_sub(base).checked_add(self.pass_offset) else {
            return Some(Err(self.time_overflow(
                line,
                format!("pass offset {} ns of workload.repeat does not fit the 64-bit ns clock", self.pass_offset),
            )));
        };
        if at > MAX_TRACE_ARRIVAL_NS {
            return Some(Err(self.time_overflow(
                line,
                format!(
                    "arrival {at} ns after the trace's first request is beyond {MAX_TRACE_ARRIVAL_NS} ns (292 years), \
                     half the simulator's 64-bit ns clock; check the time column's unit (the trace format) \
                     or use a smaller time_scale"
                ),
            )));
        }
        if at < self.last {
            *late += 1;
            at = self.last;
        }
        self.last = at;
        let task = self.volume_streams.map(|n| r.device % n);
        Some(Ok(Request { task, ..Request::from_host(r, at) }))
    }

    /// Starts the next pass over the trace (`workload.repeat`): its first
    /// request one mean inter-arrival gap of this pass after this pass's last.
    fn next_pass(&mut self, late: &mut u64) -> Option<Result<Request, SimError>> {
        let (path, format, opts) = &self.reopen;
        self.reader = match TraceReader::open_counted(path, *format, opts, self.read.clone()) {
            Ok(r) => r,
            Err(e) => return Some(Err(SimError::Trace(e))),
        };
        let span = self.last - self.pass_offset;
        self.pass_offset = self.last + span / self.pass_requests.saturating_sub(1).max(1);
        self.passes_left -= 1;
        self.pass_requests = 0;
        self.exhausted = false;
        self.next(late)
    }

    /// The end of the trace: an error, once, if the address mapping kept none of its
    /// requests (a trace that yields none is the reader's error).
    fn end(&mut self) -> Option<Result<Request, SimError>> {
        if self.base.is_some() || std::mem::replace(&mut self.ended, true) {
            return None;
        }
        let report = self.mapper.report();
        Some(Err(SimError::NoRequests {
            workload: format!("trace {}", self.reader.path().display()),
            reason: format!(
                "the address mapping kept none of its {} requests ({} dropped by address mode {}); \
                 choose a device the trace has (`ftlab trace stats` lists them) or another address mode",
                report.requests_in, report.dropped, report.mode
            ),
        }))
    }
}

/// Where periodic tasks keep their data and which of them run.
#[derive(Debug, Clone, Default)]
pub struct TaskSpace {
    /// First logical page of the tasks' regions.
    pub first_page: u64,
    /// Pages available to them from there.
    pub pages: u64,
    /// Per task, whether admission control let it run; empty: all run.
    pub admitted: Vec<bool>,
}

impl Requests {
    /// Opens `source` over a logical space of `logical_pages` pages of `page_size`;
    /// periodic tasks use `tasks` (by default the whole logical space).
    #[allow(clippy::too_many_arguments)]
    pub fn open(
        source: &Source,
        tasks_space: &TaskSpace,
        logical_pages: u64,
        page_size: u32,
        seed: u64,
        time_scale: f64,
        reorder_window: usize,
    ) -> Result<Requests, SimError> {
        let inner = match source {
            Source::Trace { path, format, address, skip_bad_lines, repeat } => {
                let opts = ReadOptions { skip_bad_lines: *skip_bad_lines };
                let logical_bytes = logical_pages * u64::from(page_size);
                let mut mapper = AddressMapper::new(*address, logical_bytes, page_size).map_err(SimError::Trace)?;
                if mapper.needs_scan() {
                    let scan = TraceReader::open(path, *format, &opts).map_err(SimError::Trace)?;
                    mapper.try_scan(scan).map_err(SimError::Trace)?;
                }
                let read = std::sync::Arc::default();
                let reader = TraceReader::open_counted(path, *format, &opts, std::sync::Arc::clone(&read))
                    .map_err(SimError::Trace)?;
                let total_bytes = reader.input_len().map(|len| len.saturating_mul(u64::from((*repeat).max(1))));
                Inner::Trace(Box::new(TraceSource {
                    read,
                    total_bytes,
                    taken: std::sync::Arc::default(),
                    reader,
                    mapper,
                    pending: Vec::new(),
                    window: VecDeque::new(),
                    window_size: reorder_window,
                    base: None,
                    last: 0,
                    time_scale,
                    exhausted: false,
                    ended: false,
                    passes_left: repeat.saturating_sub(1),
                    reopen: (path.clone(), *format, opts),
                    pass_offset: 0,
                    pass_requests: 0,
                    volume_streams: None,
                }))
            }
            Source::Generator { spec, block_bytes, .. } => {
                // Sizes and addresses in the generator's own unit, if it has one.
                let (blocks, unit) = match *block_bytes {
                    Some(b) => (logical_pages * u64::from(page_size) / u64::from(b), b),
                    None => (logical_pages, page_size),
                };
                let labels = spec.labels_lifetimes();
                Inner::Generator(spec.build(blocks, unit, seed).map_err(SimError::Trace)?, time_scale, labels)
            }
            Source::Tasks { tasks, duration_ns } => {
                let mut space = tasks_space.clone();
                if space.pages == 0 {
                    space.pages = logical_pages;
                }
                Inner::Tasks(TaskSource::new(tasks, *duration_ns, &space, page_size)?)
            }
        };
        Ok(Requests { inner, placer: None, late: 0 })
    }

    /// Sets each write's stream by `spec` ([`crate::placement`]), over a
    /// logical space of `logical_pages` pages of `page_size`. The oracle reads
    /// the whole stream now.
    pub fn place(&mut self, spec: &crate::placement::PlacementSpec, logical_pages: u64, page_size: u32) {
        use crate::placement::Policy;
        match spec.policy {
            Policy::Volume => {
                if let Inner::Trace(t) = &mut self.inner {
                    t.volume_streams = Some(spec.streams);
                }
            }
            Policy::Lifetime => {
                self.placer =
                    Some(Placer::Lifetime(crate::placement::Inference::new(spec.streams, page_size, logical_pages)));
            }
            Policy::None => self.placer = Some(Placer::None),
            Policy::Oracle => {
                let mut all = Vec::new();
                for r in self.by_ref() {
                    let stop = r.is_err();
                    all.push(r);
                    if stop {
                        break;
                    }
                }
                let shape: Vec<(Op, u64, u32)> = all.iter().flatten().map(|r| (r.op, r.offset, r.len)).collect();
                let mut streams = crate::placement::oracle(&shape, spec.streams, page_size).into_iter();
                for r in all.iter_mut().flatten() {
                    if let Some(Some(s)) = streams.next() {
                        r.task = Some(s);
                    }
                }
                self.inner = Inner::Buffered(all.into());
            }
        }
    }

    /// For a trace read from a file: the bytes read from it so far (over
    /// every pass) and the bytes the whole replay reads, to estimate its length
    /// while it runs (a compressed trace's lines are not counted up front).
    pub fn input_share(&self) -> Option<InputShare> {
        match &self.inner {
            Inner::Trace(t) => t.total_bytes.filter(|&n| n > 0).map(|total| InputShare {
                read: t.read.clone(),
                total,
                taken: t.taken.clone(),
            }),
            _ => None,
        }
    }

    /// Lines skipped as malformed, and the address report, for traces.
    pub fn trace_info(&self) -> Option<(u64, String)> {
        match &self.inner {
            Inner::Trace(t) => Some((t.reader.skipped(), t.mapper.report().to_string())),
            _ => None,
        }
    }

    /// Names of the periodic tasks, if any.
    pub fn task_names(&self) -> Vec<String> {
        match &self.inner {
            Inner::Tasks(t) => t.tasks.iter().map(|t| t.spec.name.clone()).collect(),
            _ => Vec::new(),
        }
    }
}

impl Iterator for Requests {
    type Item = Result<Request, SimError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut next = self.next_unplaced();
        if let (Some(placer), Some(Ok(r))) = (&mut self.placer, &mut next) {
            match placer {
                Placer::None if r.op == Op::Write => r.task = None,
                Placer::None => {}
                Placer::Lifetime(inference) => {
                    if let Some(stream) = inference.place(r.op, r.offset, r.len) {
                        r.task = Some(stream);
                    }
                }
            }
        }
        next
    }
}

impl Requests {
    fn next_unplaced(&mut self) -> Option<Result<Request, SimError>> {
        match &mut self.inner {
            Inner::Buffered(b) => b.pop_front(),
            Inner::Trace(t) => t.next(&mut self.late),
            Inner::Generator(g, factor, labels) => {
                let (factor, labels) = (*factor, *labels);
                g.next().map(|r| match scale(r.arrival_ns, factor) {
                    Some(at) => Ok(Request { task: labels.then_some(r.device), ..Request::from_host(r, at) }),
                    None => Err(SimError::TimeOverflow {
                        input: "generated request".into(),
                        problem: scale_overflow(r.arrival_ns, factor),
                    }),
                })
            }
            Inner::Tasks(t) => t.next().map(Ok),
        }
    }
}

/// Periodic tasks. Each task owns a region of the logical space large enough for
/// its live data (`write_pages` x the number of write periods in its lifetime),
/// written cyclically one job slot after another; a read job reads the
/// `read_pages` pages just before the write cursor (its freshest data).
struct TaskSource {
    tasks: Vec<TaskState>,
    releases: BinaryHeap<Reverse<(u64, u32, bool)>>,
    duration_ns: u64,
    page_size: u64,
}

struct TaskState {
    spec: TaskSpec,
    base: u64,
    slots: u64,
    written_jobs: u64,
    write_period: u64,
    read_period: u64,
    lifetime: u64,
}

impl TaskSource {
    fn new(specs: &[TaskSpec], duration_ns: u64, space: &TaskSpace, page_size: u32) -> Result<Self, SimError> {
        let mut tasks = Vec::new();
        let mut base = space.first_page;
        let mut releases = BinaryHeap::new();
        for (i, s) in specs.iter().enumerate() {
            let wp = s.write_period_us.map(|p| (p * 1e3) as u64).unwrap_or(0);
            let rp = s.read_period_us.map(|p| (p * 1e3) as u64).unwrap_or(0);
            if (s.write_pages > 0 && wp == 0) || (s.read_pages > 0 && rp == 0) {
                return Err(SimError::config(
                    "workload.task",
                    format!("task `{}`: periods must be at least 1 ns", s.name),
                ));
            }
            let lifetime = s.lifetime_us.map(|l| (l * 1e3) as u64).unwrap_or(duration_ns).max(1);
            let slots = if s.write_pages > 0 { lifetime.div_ceil(wp).max(1) } else { 0 };
            let region = slots * u64::from(s.write_pages);
            if s.write_pages > 0 && u64::from(s.read_pages) > region {
                return Err(SimError::config(
                    "workload.task",
                    format!(
                        "task `{}` reads {} pages per period but keeps only {region} pages of live data",
                        s.name, s.read_pages
                    ),
                ));
            }
            let region = region.max(u64::from(s.read_pages));
            let runs = space.admitted.get(i).copied().unwrap_or(true);
            // A refused task issues nothing and takes no addresses.
            let region = if runs { region } else { 0 };
            tasks.push(TaskState {
                spec: s.clone(),
                base,
                slots,
                written_jobs: 0,
                write_period: wp,
                read_period: rp,
                lifetime,
            });
            base += region;
            if s.write_pages > 0 && runs {
                releases.push(Reverse((0, i as u32, true)));
            }
            if s.read_pages > 0 && runs {
                releases.push(Reverse(((s.read_start_us * 1e3) as u64, i as u32, false)));
            }
        }
        let used = base - space.first_page;
        if used > space.pages {
            return Err(SimError::config(
                "workload.task",
                format!(
                    "the task set keeps {used} pages of live data but the FTL has {} logical pages for it; \
                 shorten lifetimes, drop tasks or use a larger device",
                    space.pages
                ),
            ));
        }
        Ok(TaskSource { tasks, releases, duration_ns, page_size: u64::from(page_size) })
    }

    fn next(&mut self) -> Option<Request> {
        let Reverse((t, i, write)) = self.releases.pop()?;
        if t >= self.duration_ns {
            return None;
        }
        let task = &mut self.tasks[i as usize];
        let (period, pages, start) = if write {
            let slot = task.written_jobs % task.slots;
            task.written_jobs += 1;
            (task.write_period, task.spec.write_pages, slot * u64::from(task.spec.write_pages))
        } else {
            let cursor = if task.written_jobs == 0 {
                0
            } else {
                ((task.written_jobs - 1) % task.slots.max(1) + 1) * u64::from(task.spec.write_pages)
            };
            (task.read_period, task.spec.read_pages, cursor.saturating_sub(u64::from(task.spec.read_pages)))
        };
        self.releases.push(Reverse((t + period, i, write)));
        Some(Request {
            arrival: t,
            op: if write { Op::Write } else { Op::Read },
            offset: (task.base + start) * self.page_size,
            len: (u64::from(pages) * self.page_size).min(u64::from(u32::MAX)) as u32,
            deadline: Some(t + period),
            task: Some(i),
            expiry: write.then_some(t + task.lifetime),
        })
    }
}

/// A trace error, for `?` in this module.
impl From<TraceError> for SimError {
    fn from(e: TraceError) -> Self {
        SimError::Trace(e)
    }
}
