//! The engine: dispatches requests to the FTL page by page, keeps the clock, the
//! host queue and the reference model of what every logical page holds.
//!
//! Requests are dispatched in order of arrival (first-in first-out) or, for
//! periodic tasks, earliest deadline first with ties first-in first-out. At most
//! `queue_depth` requests are outstanding; a request is dispatched when it has
//! arrived and a slot is free, all its pages are handed to the FTL at that time
//! (so they proceed in parallel on different dies), and it completes when its
//! last page is acknowledged. Its response time is completion minus arrival (in
//! closed loop, minus dispatch). Idle gaps of at least the idle threshold are
//! offered to the FTL's background work.
//!
//! That is dispatch by request ([`Dispatch::Request`], the default). With
//! [`Dispatch::PerDieEdf`] the dispatched requests' page commands are instead
//! handed to the FTL one at a time, when a die can start them, earliest
//! deadline first per die (see `per_die.rs`).
//!
//! Invariant, checked on every page command in every build: no command starts
//! before its request's arrival or before the clock (a slot freed in the past
//! is free now, not then). Breaking it is [`SimError::Invariant`].
//!
//! A page command's service time, held against the bound, runs from the later of
//! its readiness and the end of the last host operation of another command on its
//! die ([`ftlab_ftl::Io::queued_behind`]), less its wait on the channel behind
//! other host transfers ([`ftlab_ftl::Io::queued_on_channel`]): queueing behind
//! host commands is not service; waiting for garbage collection, map or
//! wear-leveling work is, wherever and whenever it was reserved.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use ftlab_ftl::{Flash, Ftl, FtlError, Hint, Lpn, Prefetch, Purpose};

use crate::device::{Device, PageCommand, PageError, PageOp};
use ftlab_nand::{Payload, SimTime, StoreKind};
use ftlab_workload::Op;

use crate::config::{Dispatch, Host};
use crate::error::SimError;
use crate::metrics::{Content, Latency, Mismatch, RetirementWatch, TaskReport, Throughput};
use crate::source::Request;

/// How many logical pages ahead [`Engine::verify_all`] asks the FTL to
/// prefetch the page it reads: enough to overlap that many cache misses.
const VERIFY_AHEAD: u64 = 16;

mod flows;
mod flows_per_die;
mod host_queue;
mod per_die;
mod versions;

pub use flows::{Fetch, FlowInput, FlowStats};

use host_queue::HostQueue;

/// Progress of a run, for progress bars.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Requests dispatched so far (preconditioning included).
    pub requests: u64,
    /// Simulated time, ns.
    pub sim_ns: u64,
    /// Whether measurement has started.
    pub measuring: bool,
    /// The requests the whole run will dispatch (preconditioning included),
    /// when known before it starts ([`crate::Simulation::expected_requests`]):
    /// what a progress bar's ETA needs.
    pub expected: Option<u64>,
}

/// What is measured.
#[derive(Debug)]
pub struct Measured {
    pub read: Latency,
    pub write: Latency,
    pub trim: Latency,
    pub requests: u64,
    pub pages_read: u64,
    pub pages_written: u64,
    pub pages_trimmed: u64,
    /// Bytes the host's measured reads and writes asked for.
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub rmw_pages: u64,
    /// Pages read that no write had reached (counted from the start, not
    /// only while measuring; [`crate::engine::flows`] takes differences).
    pub unwritten_read_pages: u64,
    pub throughput: Throughput,
    pub tasks: Vec<TaskReport>,
    pub first_mismatch: Option<Mismatch>,
    pub mismatches: u64,
    /// Host reads refused because the data's lifetime was over when they ran.
    pub expired_reads: u64,
    /// Longest service time of one page command (see [`Engine`]), ns; read-modify-
    /// writes apart.
    pub max_service_ns: u64,
    /// Page commands (read-modify-writes apart) whose service time exceeded the
    /// bound checked.
    pub bound_violations: u64,
    /// Longest service time of a read-modify-write page command, ns.
    pub max_rmw_service_ns: u64,
    /// Read-modify-write page commands whose service time exceeded twice the
    /// bound (a read and a write, each within it).
    pub rmw_bound_violations: u64,
    /// Per-die dispatch only: the longest time a host read page command whose
    /// die the FTL names waited, from when it became ready, for flash work
    /// already on its die then, ns; `None` before the first such read.
    pub max_read_block_ns: Option<u64>,
}

impl Measured {
    fn new(interval_ns: Option<u64>, tasks: &[String]) -> Self {
        let tp = match interval_ns {
            Some(ns) => Throughput::new(ns, true),
            None => Throughput::new(1_000_000, false),
        };
        Measured {
            read: Latency::default(),
            write: Latency::default(),
            trim: Latency::default(),
            requests: 0,
            pages_read: 0,
            pages_written: 0,
            pages_trimmed: 0,
            bytes_read: 0,
            bytes_written: 0,
            rmw_pages: 0,
            unwritten_read_pages: 0,
            throughput: tp,
            tasks: tasks
                .iter()
                .map(|n| TaskReport { name: n.clone(), admitted: true, ..TaskReport::default() })
                .collect(),
            first_mismatch: None,
            mismatches: 0,
            expired_reads: 0,
            max_service_ns: 0,
            bound_violations: 0,
            max_rmw_service_ns: 0,
            rmw_bound_violations: 0,
            max_read_block_ns: None,
        }
    }
}

/// The device, the FTL and the host around them.
pub struct Engine {
    /// The device the requests are replayed on.
    pub device: Device,
    host: Host,
    page_size: u64,
    logical_pages: u64,
    /// The logical space and the FTL's task space after it ([`RealTime::stream_pages`]).
    addressable: u64,
    /// Logical pages the host uses ([`Engine::host_pages`]).
    host_pages: u64,
    /// The run stopped because it was interrupted ([`crate::interrupt`]).
    pub(crate) interrupted: bool,
    /// The requests the run will dispatch, if known ([`Progress::expected`]).
    pub(crate) expected: Option<u64>,
    /// A trace replay whose length is not known up front (a compressed
    /// trace): how far through its file it is, the requests dispatched before
    /// it, and the most it may dispatch; [`Progress::expected`] is estimated
    /// from it as the replay goes.
    input: Option<(crate::source::InputShare, u64, Option<u64>)>,
    /// The per-request latency log, if `metrics.latency_log` asks for one.
    pub(crate) latency_log: Option<crate::latency_log::LatencyLog>,
    store: StoreKind,
    /// Version of each logical page's contents ([`versions`]: odd while data
    /// is expected); the token written is `lpn << 32 | version`.
    versions: versions::Versions,
    /// Expiry (ns) of each page's newest data, 0 for none; empty until a write
    /// carries one.
    expiry: Vec<u64>,
    slots: BinaryHeap<Reverse<u64>>,
    busy_until: u64,
    dispatched: u64,
    pub measuring: bool,
    pub measure_start: u64,
    start_at_first_gc: bool,
    interval_ns: Option<u64>,
    task_names: Vec<String>,
    /// The service-time bound checked, ns: the FTL's, or one set with
    /// [`Engine::set_bound`].
    bound_ns: Option<u64>,
    pub measured: Measured,
    /// The stop condition on worn-out blocks, if any ([`Engine::stop_at_retired`]).
    pub retirement: Option<RetirementWatch>,
    /// Whether measurement ended because the retirement target was reached.
    pub stopped_at_retired_fraction: bool,
    /// How measured requests reach the flash ([`Engine::drive`]).
    dispatch: Dispatch,
    /// `host.multi_plane_reads`: per-die flow dispatch issues the reads
    /// waiting for a die's other planes at a read's page offset with it.
    multi_plane_reads: bool,
    /// The number the last page command's host programs were queued under,
    /// and how many, if the FTL queued them ([`crate::device::PageDone::queued`]); taken by
    /// the per-die flow dispatch, the only driver that turns queues on.
    queued_token: Option<(u64, u32)>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("clock", &self.device.clock)
            .field("dispatched", &self.dispatched)
            .finish_non_exhaustive()
    }
}

/// The contents written as version `version` of logical page `lpn`.
fn payload(store: StoreKind, page_size: u64, lpn: u64, version: u32) -> Payload {
    let token = (lpn << 32) | u64::from(version);
    match store {
        StoreKind::Token => Payload::Token(token),
        StoreKind::Bytes => {
            let bytes: Vec<u8> = token.to_le_bytes().iter().copied().cycle().take(page_size as usize).collect();
            Payload::Bytes(bytes.into())
        }
    }
}

/// One page command of a request, as it is issued to the FTL.
#[derive(Debug, Clone, Copy)]
struct PageCmd {
    lpn: u64,
    /// Whether the request covers the page only in part.
    partial: bool,
    /// When it is issued, ns.
    at: u64,
    /// When it became ready (at or before `at`), ns.
    ready: u64,
    /// The die the dispatcher held it for, if any.
    held: Option<usize>,
    /// For a read held for its die: when the die became free for it, ns.
    since: Option<u64>,
    /// A read issued as one more plane of the read issued just before it
    /// (`host.multi_plane_reads`).
    joins: bool,
}

/// Puts `entry` in a free slot of `items` (one `free` names), else a new
/// one; returns its index.
fn take_slot<T>(items: &mut Vec<T>, free: &mut Vec<usize>, entry: T) -> usize {
    match free.pop() {
        Some(s) => {
            items[s] = entry;
            s
        }
        None => {
            items.push(entry);
            items.len() - 1
        }
    }
}

/// A request waiting in the host queue, ordered by `(key, seq)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Queued {
    key: u64,
    seq: u64,
    req: Request,
}
impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Queued {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.key, self.seq).cmp(&(other.key, other.seq))
    }
}

/// The host queue's key of `r`: its deadline (its arrival if it has none) with
/// `edf`, else its arrival.
#[inline]
fn queue_key(r: &Request, edf: bool) -> u64 {
    if edf {
        r.deadline.unwrap_or(r.arrival)
    } else {
        r.arrival
    }
}

/// What the FTL is told about a write of `r`.
#[inline]
fn hint_of(r: &Request) -> Hint {
    Hint { stream: r.task, expiry: r.expiry.map(SimTime), deadline: r.deadline.map(SimTime), more: false, bytes: 0 }
}

/// The next request of `requests`, its times shifted by `offset` ns; a time the
/// shift takes beyond the 64-bit ns clock is [`SimError::TimeOverflow`].
#[inline]
fn next_request(
    requests: &mut dyn Iterator<Item = Result<Request, SimError>>,
    offset: u64,
) -> Result<Option<Request>, SimError> {
    let Some(mut r) = requests.next().transpose()? else { return Ok(None) };
    let arrival = r.arrival.checked_add(offset);
    let deadline = r.deadline.map(|d| d.checked_add(offset));
    let expiry = r.expiry.map(|e| e.checked_add(offset));
    match (arrival, deadline, expiry) {
        (Some(a), None | Some(Some(_)), None | Some(Some(_))) => {
            (r.arrival, r.deadline, r.expiry) = (a, deadline.flatten(), expiry.flatten());
            Ok(Some(r))
        }
        _ => Err(shift_overflow(&r, offset)),
    }
}

/// The error of a request whose times `offset` takes beyond the clock.
#[cold]
fn shift_overflow(r: &Request, offset: u64) -> SimError {
    let (what, t) = if r.arrival.checked_add(offset).is_none() {
        ("arrival", r.arrival)
    } else if let Some(d) = r.deadline.filter(|d| d.checked_add(offset).is_none()) {
        ("deadline", d)
    } else {
        ("expiry", r.expiry.unwrap_or_default())
    };
    SimError::TimeOverflow {
        input: format!("request at {} ns ({} of {} bytes at byte {})", r.arrival, r.op, r.len, r.offset),
        problem: format!("its {what} {t} ns plus the start offset {offset} ns does not fit the 64-bit ns clock"),
    }
}

impl Engine {
    /// An engine over a formatted device.
    pub fn new(flash: Flash, ftl: Box<dyn Ftl>, host: Host, store: StoreKind, interval_ns: Option<u64>) -> Self {
        // The FTL's logical page: a flash page, or its smaller mapping unit.
        let page_size = u64::from(ftl.unit_bytes().unwrap_or(flash.nand().geometry().page_size));
        let logical_pages = u64::from(ftl.logical_pages());
        let addressable = logical_pages + u64::from(ftl.realtime().map_or(0, |r| r.stream_pages()));
        let bound_ns = ftlab_ftl::service_bound(&*ftl).map(|b| b.0);
        Engine {
            device: Device::new(flash, ftl, None),
            host,
            page_size,
            logical_pages,
            host_pages: logical_pages,
            interrupted: false,
            expected: None,
            latency_log: None,
            input: None,
            addressable,
            store,
            versions: versions::Versions::new(addressable),
            expiry: Vec::new(),
            slots: BinaryHeap::new(),
            busy_until: 0,
            dispatched: 0,
            measuring: false,
            measure_start: 0,
            start_at_first_gc: false,
            interval_ns,
            task_names: Vec::new(),
            bound_ns,
            measured: Measured::new(interval_ns, &[]),
            retirement: None,
            stopped_at_retired_fraction: false,
            dispatch: Dispatch::Request,
            multi_plane_reads: false,
            queued_token: None,
        }
    }

    /// Ends [`Engine::drive`] before the next dispatch once `fraction` of the good
    /// blocks are worn out, while measuring.
    pub fn stop_at_retired(&mut self, fraction: f64) {
        self.retirement = Some(RetirementWatch::new(&self.device.flash, fraction));
    }

    /// Whether measurement must stop for worn-out blocks (and records it).
    fn retirement_reached(&mut self) -> bool {
        if crate::interrupt::interrupted() {
            self.interrupted = true;
            return true;
        }
        if self.measuring && !self.stopped_at_retired_fraction {
            if let Some(w) = &mut self.retirement {
                self.stopped_at_retired_fraction = w.reached(&self.device.flash);
            }
        }
        self.stopped_at_retired_fraction
    }

    /// Chooses how [`Engine::drive`] hands requests to the FTL (default
    /// [`Dispatch::Request`]).
    pub fn set_dispatch(&mut self, dispatch: Dispatch) {
        self.dispatch = dispatch;
    }

    /// With per-die dispatch of `[[flow]]`s: a die that takes a waiting read
    /// takes with it the reads waiting in the same class for its other
    /// planes at the same page offset, as one multi-plane read (default off;
    /// `host.multi_plane_reads`).
    pub fn set_multi_plane_reads(&mut self, on: bool) {
        self.multi_plane_reads = on;
    }

    /// Holds every page command to `bound_ns` instead of the FTL's own bound.
    pub fn set_bound(&mut self, bound_ns: u64) {
        self.bound_ns = Some(bound_ns);
    }

    /// The service-time bound page commands are checked against, ns.
    pub fn bound_ns(&self) -> Option<u64> {
        self.bound_ns
    }

    /// Names the periodic tasks whose deadline misses are reported.
    pub fn set_tasks(&mut self, names: Vec<String>) {
        self.task_names = names;
        self.measured = Measured::new(self.interval_ns, &self.task_names);
    }

    /// Logical pages the FTL exports.
    pub fn logical_pages(&self) -> u64 {
        self.logical_pages
    }

    /// Logical pages the host uses, from the first (`host.logical_pages`;
    /// all the FTL exports unless limited).
    pub fn host_pages(&self) -> u64 {
        self.host_pages
    }

    /// Limits the host to the first `pages` logical pages (at most those the
    /// FTL exports; the caller checks).
    pub fn set_host_pages(&mut self, pages: u64) {
        self.host_pages = pages.min(self.logical_pages);
    }

    /// Bytes of a logical page: the flash page, or the FTL's smaller mapping
    /// unit ([`Ftl::unit_bytes`]). Requests' bytes map to logical pages of it.
    pub fn unit_bytes(&self) -> u64 {
        self.page_size
    }

    /// Bytes of a flash page.
    pub fn flash_page_bytes(&self) -> u64 {
        u64::from(self.device.flash.nand().geometry().page_size)
    }

    /// The latest time anything finished.
    pub fn busy_until(&self) -> u64 {
        self.busy_until.max(self.device.clock)
    }

    /// Starts measuring now (or at the first GC erase): counters and metrics reset.
    pub fn start_measuring(&mut self, at_first_gc: bool) {
        if at_first_gc {
            self.start_at_first_gc = true;
            self.measuring = false;
            return;
        }
        self.measuring = true;
        self.measure_start = self.busy_until();
        self.device.flash.reset_counters();
        self.device.ftl.reset_counters();
        self.measured = Measured::new(self.interval_ns, &self.task_names);
    }

    fn verify(&mut self, lpn: u64, got: Option<Payload>, at: u64) {
        let version = self.versions.get(lpn);
        let want = (version % 2 == 1).then(|| payload(self.store, self.page_size, lpn, version));
        if got != want {
            self.measured.mismatches += 1;
            if self.measured.first_mismatch.is_none() {
                let content = |p: &Option<Payload>| {
                    let token = match p {
                        None => return Content::Nothing,
                        Some(Payload::Token(t)) => *t,
                        Some(Payload::Bytes(b)) => {
                            let mut w = [0u8; 8];
                            w.copy_from_slice(&b[..8.min(b.len())]);
                            u64::from_le_bytes(w)
                        }
                    };
                    Content::Version { page: token >> 32, version: (token & 0xffff_ffff) as u32 }
                };
                self.measured.first_mismatch =
                    Some(Mismatch { lpn, at_ns: at, got: content(&got), expected: content(&want) });
            }
        }
    }

    /// A performance hint with no effect on results, given before serving a
    /// request: `next` is most likely served after it, so the random lookups
    /// its first page needs (its version here, the FTL's mapping entry,
    /// [`Ftl::prefetch`]) start loading now and overlap the request served
    /// meanwhile instead of stalling it.
    #[inline]
    fn prefetch(&self, next: &Request) {
        let lpn = next.offset / self.page_size;
        if lpn < self.addressable {
            self.versions.prefetch(lpn);
            self.device.ftl.prefetch(&self.device.flash, Lpn(lpn as u32), Prefetch::Map);
        }
    }

    /// The hint two requests ahead, with `next`'s mapping entry loaded by the
    /// [`Engine::prefetch`] given one request earlier: what its first page's
    /// read or overwrite looks up through that entry ([`Prefetch::Page`],
    /// [`Prefetch::Write`]). No effect on results.
    #[inline]
    fn prefetch_next(&self, next: &Request) {
        let lpn = next.offset / self.page_size;
        if lpn < self.addressable {
            let what = if matches!(next.op, Op::Read) { Prefetch::Page } else { Prefetch::Write };
            self.device.ftl.prefetch(&self.device.flash, Lpn(lpn as u32), what);
        }
    }

    /// The first and last logical page of `req`, checked against the logical space.
    #[inline(always)]
    fn pages_of(&self, req: &Request) -> Result<(u64, u64), SimError> {
        let ps = self.page_size;
        let first = req.offset / ps;
        let last = (req.offset + u64::from(req.len) - 1) / ps;
        if last >= self.addressable {
            return Err(SimError::config(
                "workload",
                format!(
                    "request at byte {} of {} bytes runs past the logical space of {} pages",
                    req.offset, req.len, self.addressable
                ),
            ));
        }
        Ok((first, last))
    }

    /// Whether page `lpn` of `req` is only partly covered by it.
    #[inline]
    fn partial(&self, req: &Request, lpn: u64, first: u64, last: u64) -> bool {
        let ps = self.page_size;
        (lpn == first && !req.offset.is_multiple_of(ps))
            || (lpn == last && !(req.offset + u64::from(req.len)).is_multiple_of(ps))
    }

    /// Bytes of page `lpn` that `req` covers.
    #[inline]
    fn covered(&self, req: &Request, lpn: u64) -> u32 {
        let ps = self.page_size;
        let (start, end) = (req.offset.max(lpn * ps), (req.offset + u64::from(req.len)).min((lpn + 1) * ps));
        end.saturating_sub(start) as u32
    }

    /// Models the host link and controller ([`crate::host_link`]) for requests
    /// dispatched whole.
    pub fn set_host_link(&mut self, link: Option<crate::host_link::HostLink>) {
        self.device.set_host_link(link);
    }

    /// Serves one request dispatched at `d`; returns its completion time.
    #[inline(always)]
    fn serve(&mut self, req: &Request, d: u64) -> Result<u64, SimError> {
        let (first, last) = self.pages_of(req)?;
        self.device.flash.request_start();
        // Firmware time, and a write's data crossing the host link, come first.
        let d = match self.device.host_link.as_mut() {
            Some(link) => link.start(d, if req.op == Op::Write { u64::from(req.len) } else { 0 }),
            None => d,
        };
        let mut completion = d;
        let mut rmw = 0;
        for lpn in first..=last {
            let partial = self.partial(req, lpn, first, last);
            if req.op == Op::Read && self.versions.get(lpn) == 0 {
                self.measured.unwritten_read_pages += 1;
            }
            // A page command is ready at the request's dispatch, or when the
            // request's earlier pages are done (on one die they are served one
            // after another).
            let cmd = PageCmd { lpn, partial, at: d, ready: completion, held: None, since: None, joins: false };
            let page_done = self.serve_page(req, cmd, lpn < last, self.dispatched)?;
            rmw += u64::from(partial && req.op == Op::Write);
            completion = completion.max(page_done);
        }
        if req.op == Op::Read {
            if let Some(link) = self.device.host_link.as_mut() {
                completion = link.finish(completion, u64::from(req.len));
            }
        }
        self.record_request(req, last - first + 1, rmw, completion);
        Ok(completion)
    }

    /// Issues page command `cmd` of `req` (request number `number`) to the FTL
    /// and checks what a read returns; returns the page's completion. `more`:
    /// later pages of the request follow ([`Hint::more`]).
    ///
    /// Its service time, checked against the bound, runs from the later of
    /// `ready` and the end of the last host operation (of another command) on
    /// the dies its own host operations use, or on the die `held` it was held
    /// for by the dispatcher (a command may end up doing nothing on the die it
    /// waited for, e.g. a read of data that expired meanwhile), to its
    /// completion, less the time
    /// its host transfers waited on the channel behind other host transfers:
    /// waiting behind other host commands is queueing; waiting behind
    /// garbage-collection, map or wear-leveling work is service.
    #[inline]
    fn serve_page(&mut self, req: &Request, cmd: PageCmd, more: bool, number: u64) -> Result<u64, SimError> {
        let PageCmd { lpn, partial, at, ready, held, since, joins } = cmd;
        let fail = |e: FtlError| SimError::Ftl {
            request: number,
            op: req.op.to_string(),
            lpn,
            at_us: at as f64 / 1e3,
            source: e,
        };
        let rmw = partial && req.op == Op::Write;
        let mut version = 0;
        let op = match req.op {
            Op::Read if joins => PageOp::ReadJoined,
            Op::Read => PageOp::Read,
            Op::Write => {
                version = self.versions.next_write(lpn);
                let data = payload(self.store, self.page_size, lpn, version);
                let bytes = if partial { self.covered(req, lpn) } else { 0 };
                PageOp::Write { data, hint: Hint { more, bytes, ..hint_of(req) }, rmw: partial }
            }
            Op::Trim => PageOp::Trim,
        };
        let trim_part = req.op == Op::Trim && partial;
        let mut read_back = None;
        let mut trimmed = false;
        let page_done = if trim_part {
            // Part of a page is not trimmed: nothing is issued.
            if at < req.arrival || at < self.device.clock {
                return Err(self.early(req, lpn, at, number));
            }
            at
        } else {
            let bytes = if partial && req.op == Op::Read { self.covered(req, lpn) } else { 0 };
            let cmd = PageCommand { lpn, at, ready, arrival: req.arrival, held, since, op, bytes };
            let done = match self.device.page(cmd) {
                Ok(d) => d,
                Err(PageError::Early) => return Err(self.early(req, lpn, at, number)),
                Err(PageError::Ftl(e)) => return Err(fail(e)),
            };
            trimmed = done.trimmed;
            self.queued_token = done.queued;
            match done.read {
                Some(Ok(got)) => read_back = Some(got),
                // A late read of data past its lifetime: the FTL's contract,
                // counted (a real-time task missed its data), not a failure.
                Some(Err(FtlError::Expired { .. }))
                    if self.expiry.get(lpn as usize).is_some_and(|&e| e != 0 && e <= at) =>
                {
                    self.measured.expired_reads += 1;
                }
                Some(Err(e)) => return Err(fail(e)),
                None => {}
            }
            if self.measuring {
                self.check_service(done.service_ns, rmw);
            }
            done.done
        };
        if let Some(got) = read_back {
            self.verify(lpn, got, at);
        }
        if req.op == Op::Write {
            self.note_expiry(lpn, req.expiry);
        }
        match req.op {
            Op::Write => self.versions.written(lpn, version),
            Op::Trim if trimmed => self.versions.trimmed(lpn),
            _ => {}
        }
        Ok(page_done)
    }

    /// The invariant error of a page command of `req` that would start at `at`,
    /// before its arrival or the clock.
    #[cold]
    fn early(&self, req: &Request, lpn: u64, at: u64, number: u64) -> SimError {
        SimError::Invariant(format!(
            "request {number} ({} of logical page {lpn}) would start at {:.3} us, before its arrival at {:.3} us \
             or the clock at {:.3} us",
            req.op,
            at as f64 / 1e3,
            req.arrival as f64 / 1e3,
            self.device.clock as f64 / 1e3
        ))
    }

    /// Checks one page command's service time against the bound: a
    /// read-modify-write (`rmw`, two commands) against twice the bound.
    #[inline]
    fn check_service(&mut self, service: u64, rmw: bool) {
        let m = &mut self.measured;
        let (max, violations, bound) = if rmw {
            (&mut m.max_rmw_service_ns, &mut m.rmw_bound_violations, self.bound_ns.map(|b| b.saturating_mul(2)))
        } else {
            (&mut m.max_service_ns, &mut m.bound_violations, self.bound_ns)
        };
        *max = (*max).max(service);
        if bound.is_some_and(|b| service > b) {
            *violations += 1;
        }
    }

    /// RAM of the engine's model, in bytes (allocated capacity): the version
    /// of every logical page, the expiry table and the host queue's slots.
    pub fn model_bytes(&self) -> u64 {
        self.versions.ram_bytes()
            + (self.expiry.capacity() * std::mem::size_of::<u64>()
                + self.slots.capacity() * std::mem::size_of::<Reverse<u64>>()) as u64
    }

    /// Records a request of `pages` pages (`rmw` of them read-modify-writes),
    /// completed at `completion`, if measuring. Its response time runs from its
    /// arrival (in closed loop, its dispatch).
    fn record_request(&mut self, req: &Request, pages: u64, rmw: u64, completion: u64) {
        if !self.measuring {
            return;
        }
        let m = &mut self.measured;
        m.requests += 1;
        m.rmw_pages += rmw;
        let response = completion - req.arrival;
        if let Some(log) = self.latency_log.as_mut() {
            log.record(completion.saturating_sub(self.measure_start), response, req.op, req.len, req.offset);
        }
        match req.op {
            Op::Read => {
                m.read.record(response);
                m.pages_read += pages;
                m.bytes_read += u64::from(req.len);
            }
            Op::Write => {
                m.write.record(response);
                m.pages_written += pages;
                m.bytes_written += u64::from(req.len);
            }
            Op::Trim => {
                m.trim.record(response);
                m.pages_trimmed += pages;
            }
        }
        let since = SimTime(completion.saturating_sub(self.measure_start));
        if req.op != Op::Trim {
            m.throughput.add(since, req.op == Op::Read, pages);
        }
        m.throughput.flash(since, self.device.flash.counters());
        m.throughput.gauges(since, &self.device.ftl.gauges());
        if let (Some(t), Some(deadline)) = (req.task, req.deadline) {
            if let Some(task) = m.tasks.get_mut(t as usize) {
                task.jobs += 1;
                task.worst_response_us = task.worst_response_us.max(response as f64 / 1e3);
                if completion > deadline {
                    task.deadline_misses += 1;
                }
            }
        }
    }

    /// Runs `requests` (arrivals relative to `offset` ns) to the end, dispatched
    /// as [`Engine::set_dispatch`] chose. `edf` orders the host queue by deadline
    /// instead of arrival.
    pub fn drive(
        &mut self,
        requests: &mut dyn Iterator<Item = Result<Request, SimError>>,
        offset: u64,
        edf: bool,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), SimError> {
        match self.dispatch {
            Dispatch::Request => self.drive_requests(requests, offset, edf, progress),
            Dispatch::PerDieEdf | Dispatch::PerDiePriority => self.drive_per_die(requests, offset, edf, progress),
        }
    }

    /// [`Engine::drive`] by whole requests ([`Dispatch::Request`]).
    fn drive_requests(
        &mut self,
        requests: &mut dyn Iterator<Item = Result<Request, SimError>>,
        offset: u64,
        edf: bool,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), SimError> {
        let qd = self.host.queue_depth as usize;
        let mut queue = HostQueue::new(requests, offset, edf, self.host.closed)?;
        loop {
            if self.retirement_reached() {
                break;
            }
            // A slot frees when a request completes; one that completed in the
            // past is free now, not then.
            let slot_free = if self.slots.len() < qd {
                self.device.clock
            } else {
                self.slots.peek().map_or(self.device.clock, |r| r.0)
            }
            .max(self.device.clock);
            let t = if queue.has_next() {
                slot_free
            } else {
                match queue.next_arrival() {
                    None => break,
                    Some(arrival) => {
                        self.offer_idle(arrival)?;
                        slot_free.max(arrival)
                    }
                }
            };
            queue.arrive_until(t)?;
            let Some(req) = queue.take(t)? else { continue };
            if let Some(next) = queue.upcoming() {
                self.prefetch_next(next);
            }
            if let Some(after) = queue.upcoming_after() {
                self.prefetch(after);
            }
            if self.slots.len() >= qd {
                self.slots.pop();
            }
            let completion = self.serve(&req, t)?;
            self.slots.push(Reverse(completion));
            self.dispatched_at(t, completion, progress);
        }
        Ok(())
    }

    /// Book-keeping after a request dispatched at `t` that completes at
    /// `completion`: the clock, the busy horizon, the count, the first-GC
    /// check and the progress report every 4,096 requests.
    #[inline]
    pub(crate) fn dispatched_at(&mut self, t: u64, completion: u64, progress: &mut dyn FnMut(Progress)) {
        self.device.clock = t;
        self.busy_until = self.busy_until.max(completion);
        self.check_first_gc();
        self.count_dispatch(t, progress);
    }

    /// Counts a request dispatched at `t`, with the progress report every
    /// 4,096 requests.
    #[inline]
    fn count_dispatch(&mut self, t: u64, progress: &mut dyn FnMut(Progress)) {
        self.dispatched += 1;
        if self.dispatched.is_multiple_of(4096) {
            progress(Progress {
                requests: self.dispatched,
                sim_ns: t,
                measuring: self.measuring,
                expected: self.expected.or_else(|| self.estimated()),
            });
        }
    }

    /// Estimates the run's requests from how far the trace replay is through
    /// its file (when [`Engine::estimate_from`] was given one).
    fn estimated(&self) -> Option<u64> {
        let (share, base, cap) = self.input.as_ref()?;
        let total = base + share.estimate()?;
        Some(cap.map_or(total, |c| total.min(c)).max(self.dispatched))
    }

    /// The run's length is estimated from `share` as the replay starting now
    /// goes (at most `max_requests` of it).
    pub(crate) fn estimate_from(&mut self, share: crate::source::InputShare, max_requests: Option<u64>) {
        let base = self.dispatched;
        self.input = Some((share, base, max_requests.map(|n| base + n)));
    }

    /// Starts measuring at the first GC erase, if asked to.
    #[inline]
    fn check_first_gc(&mut self) {
        if self.start_at_first_gc && !self.measuring && self.device.flash.counters().erases.get(Purpose::Gc) > 0 {
            self.start_at_first_gc = false;
            self.start_measuring(false);
        }
    }

    /// Runs `requests` closed loop with `host`'s queue depth, unmeasured
    /// (preconditioning), dispatched by request whatever [`Engine::set_dispatch`]
    /// chose, so that every dispatch mode measures from the same device state.
    pub fn drive_closed(
        &mut self,
        requests: &mut dyn Iterator<Item = Result<Request, SimError>>,
        host: Host,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), SimError> {
        let saved = self.host;
        self.host = Host { closed: true, ..host };
        let r = self.drive_requests(requests, self.busy_until(), false, progress);
        self.host = saved;
        r
    }

    /// Offers the gap before `arrival` to the FTL's background work if the device
    /// is idle for at least the idle threshold.
    fn offer_idle(&mut self, arrival: u64) -> Result<(), SimError> {
        let idle_from = self.busy_until();
        if arrival < idle_from.saturating_add(self.host.idle_threshold_ns) || self.host.idle_threshold_ns == u64::MAX {
            return Ok(());
        }
        let mut io = self.device.flash.io(SimTime(idle_from));
        self.device.ftl.background(&mut io, SimTime(arrival)).map_err(|e| SimError::Ftl {
            request: self.dispatched,
            op: "background".into(),
            lpn: 0,
            at_us: idle_from as f64 / 1e3,
            source: e,
        })?;
        self.busy_until = self.busy_until.max(io.last_finish().0);
        Ok(())
    }

    /// Records the expiry of `lpn`'s newest data (0: none). The table is only
    /// allocated once some write carries an expiry.
    fn note_expiry(&mut self, lpn: u64, expiry: Option<u64>) {
        match expiry {
            Some(e) => {
                if self.expiry.is_empty() {
                    self.expiry = vec![0; self.addressable as usize];
                }
                self.expiry[lpn as usize] = e.max(1);
            }
            None => {
                if let Some(x) = self.expiry.get_mut(lpn as usize) {
                    *x = 0;
                }
            }
        }
    }

    /// Logical pages including the FTL's task space.
    pub fn addressable_pages(&self) -> u64 {
        self.addressable
    }

    /// Reads back every logical page outside measurement and checks it against
    /// the model; returns the number of mismatches found.
    pub fn verify_all(&mut self) -> Result<u64, SimError> {
        let before = self.measured.mismatches;
        let at = self.busy_until();
        // Nothing reports the read-back's timing: its page reads take none.
        self.device.flash.set_untimed_reads(true);
        let checked = self.verify_pages(at);
        self.device.flash.set_untimed_reads(false);
        checked?;
        Ok(self.measured.mismatches - before)
    }

    /// [`Engine::verify_all`]'s pass over every logical page, read at `at`.
    fn verify_pages(&mut self, at: u64) -> Result<(), SimError> {
        for lpn in 0..self.addressable {
            // The table is walked in order; the pages it maps to are scattered.
            if lpn + VERIFY_AHEAD < self.addressable {
                let ahead = Lpn((lpn + VERIFY_AHEAD) as u32);
                self.device.ftl.prefetch(&self.device.flash, ahead, Prefetch::Page);
            }
            let mut io = self.device.flash.io(SimTime(at));
            let got = self.device.ftl.read(&mut io, Lpn(lpn as u32));
            // Data whose lifetime is over may not be readable: that is the contract.
            if matches!(got, Err(FtlError::Expired { .. }))
                && self.expiry.get(lpn as usize).is_some_and(|&e| e != 0 && e <= at)
            {
                continue;
            }
            let got = got.map_err(|e| SimError::Ftl {
                request: self.dispatched,
                op: "verify".into(),
                lpn,
                at_us: at as f64 / 1e3,
                source: e,
            })?;
            self.verify(lpn, got, at);
        }
        Ok(())
    }
}
