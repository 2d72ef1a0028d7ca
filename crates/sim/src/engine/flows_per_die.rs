//! `[[flow]]`s whose reads wait at their die (`host.dispatch =
//! "per-die-priority"`, or `"per-die-edf"` for first come, first served).
//!
//! Requests are fetched from the flows' queues as in dispatch by request
//! (`flows.rs`: queue depths, fetch limits, strict priority then weighted
//! sharing between flows). A fetched write or trim is then served whole at
//! once, as there, unless the FTL may hold writes back (below). A fetched
//! read is split into page commands: a page whose
//! die the FTL names ([`ftlab_ftl::Placement::die_of`]) waits in that die's
//! queue, for its flow's priority class, until the die can start a host read
//! ([`ftlab_nand::Nand::read_free_at`]: free, or with reads first only busy
//! with programs and erases it may pass); any other page (held in RAM, or on no
//! die the FTL names) is issued at once. A die that can start a read takes one:
//!
//! - `per-die-priority`: an urgent read if one waits, else the next class by
//!   MQSim's weighted round robin (high 4, medium 2, low 1;
//!   `TSU_Priority_OutOfOrder.cpp`, `get_next_read_service_queue`), first come
//!   first served within a class. Where MQSim's round robin passes over a class
//!   whose turn has not come round, it serves it at a later call; here the die
//!   takes the first class that has a read, so no die stands idle with reads
//!   waiting.
//! - `per-die-edf`: the read that was fetched first (flows have no deadlines).
//!
//! So a read's flash time is reserved when its die takes it, against what the
//! dies and channels have reserved by then, and an urgent flow's reads pass the
//! reads of other classes queued on a die, as on MQSim's chips. A read request
//! completes when its last page does and holds its flow's queue slot and its
//! fetch slot until then.
//!
//! Writes wait too where the FTL may hold them back ([`ftlab_ftl::Ftl::write_room_at`]:
//! MQSim's write cache while its write-backs fill the back-pressure limit,
//! `Data_Cache_Manager_Flash_Advanced.cpp:271-283, 466-479`): every fetched
//! write to such an FTL (and a trim behind a waiting write) queues first come,
//! first served, and its pages go to the FTL one by one, each once the FTL
//! has room for it (at once if it has), so a write is
//! acknowledged when it is really taken in rather than when it was estimated
//! to be on arrival.
//!
//! An FTL with per-die queues ([`ftlab_ftl::DieQueues`], the page map's
//! `gc_queue`) has them turned on for the run: its garbage collection, and
//! the host programs that arrive while a die has some queued, wait in the
//! die's queue, and the dispatcher has each die take its next command
//! whenever it falls free ([`crate::device::Device::play_queued`]). Every
//! write then goes page by page as above, and a page whose program was
//! queued completes when the die takes it.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use std::collections::HashMap;

use ftlab_ftl::Lpn;
use ftlab_nand::{DieId, SimTime};
use ftlab_workload::Op;

use super::flows::{fetch_before, stall_error, Fetch, FlowInput, FlowStats, STALL_LIMIT};
use super::host_queue::HostQueue;
use super::{Engine, PageCmd, Progress};
use crate::config::Dispatch;
use crate::error::SimError;
use crate::source::Request;

/// Priority classes: urgent, high, medium, low.
const CLASSES: usize = 4;
/// Each class's weight in the round robin after urgent, MQSim's
/// (`Host_Interface_NVMe_Priorities.h`, `get_scheduling_weight`).
const WEIGHT: [i32; CLASSES] = [i32::MAX, 4, 2, 1];

/// A read's page waiting for its die.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Page {
    /// Its request's index in the admitted requests.
    slot: usize,
    lpn: u64,
    /// The die it was queued for.
    die: usize,
    class: usize,
    /// When its request was fetched, ns.
    ready: u64,
    /// With `host.multi_plane_reads`: the plane of its die and the page
    /// offset the FTL said it was at when it joined its die's queue
    /// ([`ftlab_ftl::Placement::read_slot`]; `NOWHERE` if it did not say).
    place: (u32, u32),
}

/// [`Page::place`] when not known.
const NOWHERE: (u32, u32) = (u32::MAX, u32::MAX);

/// The waiting reads of one die, or with serial dies of one chip (the dies
/// that share a busy-until), a queue per class, and where its round robin is.
#[derive(Debug, Clone)]
struct DieQueue {
    classes: [VecDeque<Page>; CLASSES],
    next: usize,
    weight: i32,
    waiting: usize,
    /// Since when the die has been free for a read while the channel kept
    /// it from taking one, if it has.
    since: Option<u64>,
}

impl DieQueue {
    fn new() -> Self {
        DieQueue { classes: Default::default(), next: 0, weight: WEIGHT[1], waiting: 0, since: None }
    }

    /// The die of some read waiting here, if any.
    fn front_die(&self) -> Option<usize> {
        self.classes.iter().find_map(|c| c.front()).map(|p| p.die)
    }

    fn push(&mut self, page: Page) {
        self.classes[page.class].push_back(page);
        self.waiting += 1;
    }

    /// The read the die takes next: urgent first, then MQSim's weighted round
    /// robin, then (where that passes over every class that waits) the most
    /// urgent class that waits.
    fn take(&mut self) -> Option<Page> {
        if self.waiting == 0 {
            return None;
        }
        self.waiting -= 1;
        if let Some(p) = self.classes[0].pop_front() {
            return Some(p);
        }
        let mut tries = 0;
        while tries < WEIGHT[1] {
            self.next = (self.next + 1) % CLASSES;
            if self.next == 0 {
                self.next = 1;
            }
            if self.next == 1 {
                tries += 1;
                self.weight -= 1;
                if self.weight <= 0 {
                    self.weight = WEIGHT[1];
                }
            }
            if WEIGHT[self.next] >= self.weight {
                if let Some(p) = self.classes[self.next].pop_front() {
                    return Some(p);
                }
            }
        }
        self.classes.iter_mut().find_map(VecDeque::pop_front)
    }
}

/// A fetched read, or a write or trim waiting for the FTL, whose pages are
/// not all issued yet.
#[derive(Debug, Clone, Copy)]
struct Admitted {
    req: Request,
    lane: usize,
    /// Its dispatch number (for error messages).
    number: u64,
    first: u64,
    last: u64,
    left: u64,
    completion: u64,
    /// Its pages no write had reached.
    unwritten: u64,
    /// A held write's next page to issue, and its pages written in part.
    next: u64,
    rmw: u64,
}

/// A flow's queue and what it holds in the device.
struct Lane<'s> {
    queue: HostQueue<'s>,
    /// When each free or freeing slot of the flow's queue was or will be free;
    /// a slot whose request's completion is not known yet is not here.
    slots: BinaryHeap<Reverse<u64>>,
    served: u64,
    done: bool,
    /// With a fetch limit per flow: the known completions of its requests in
    /// the device (those in the past dropped as time goes).
    fetched: BinaryHeap<Reverse<u64>>,
    /// Its requests in the device whose completion is not known yet.
    open: usize,
}

/// When a flow can next have a request fetched, device slots apart.
enum Next {
    /// At this time (at or after now).
    At(u64),
    /// Not before one of its requests in the device completes.
    Blocked,
    /// Never: its source has ended or its stop time has passed.
    Done,
}

/// Everything the dispatcher keeps between instants.
struct State<'s> {
    lanes: Vec<Lane<'s>>,
    stats: Vec<FlowStats>,
    /// Per flow: closed loop, class, weight, stop time (absolute).
    shape: Vec<(bool, usize, u32, Option<u64>)>,
    dies: Vec<DieQueue>,
    admitted: Vec<Admitted>,
    free: Vec<usize>,
    /// Pages waiting on dies, or for their translation.
    waiting: usize,
    /// Pages waiting for their translation (the FTL's
    /// [`ftlab_ftl::Ftl::prepare_read`]) before they join their die's queue,
    /// by when it is done, then in the order they came.
    pending: BinaryHeap<Reverse<(u64, u64, Page)>>,
    seq: u64,
    /// The known completions of requests in the device, with one limit for
    /// all flows, and how many are in it with their completion not known.
    device: BinaryHeap<Reverse<u64>>,
    device_open: usize,
    per_flow: bool,
    fetch: usize,
    shared: usize,
    fifo: bool,
    /// Writes and trims waiting for the FTL to take them, first come first
    /// served (their indices in `admitted`), and when the FTL next has room
    /// if the first waits (`u64::MAX`: none waits).
    writes: VecDeque<usize>,
    write_wake: u64,
    /// The reads a die takes with the one it takes (`host.multi_plane_reads`),
    /// kept to reuse its room.
    group: Vec<Page>,
    /// Whether the FTL's per-die queues are on for the run.
    queues: bool,
    /// Per number a page command's host programs were queued under: the
    /// write (its index in `admitted`) and its programs not played yet.
    tokens: HashMap<u64, (usize, u32)>,
    /// Host programs the dies took (number, finish), kept to reuse its room.
    played: Vec<(u64, u64)>,
}

impl State<'_> {
    fn next_of(&mut self, i: usize, now: u64) -> Next {
        let lane = &mut self.lanes[i];
        if lane.done {
            return Next::Done;
        }
        while lane.fetched.peek().is_some_and(|r| r.0 <= now) {
            lane.fetched.pop();
        }
        let arrival = if lane.queue.has_next() {
            now
        } else {
            match lane.queue.next_arrival() {
                None => {
                    lane.done = true;
                    return Next::Done;
                }
                Some(a) => a,
            }
        };
        let Some(slot) = lane.slots.peek().map(|r| r.0) else { return Next::Blocked };
        let mut t = slot.max(arrival).max(now);
        if self.per_flow && lane.open + lane.fetched.len() >= self.fetch {
            match lane.fetched.peek() {
                Some(r) => t = t.max(r.0),
                None => return Next::Blocked,
            }
        }
        if self.shape[i].3.is_some_and(|s| t > s) {
            lane.done = true;
            return Next::Done;
        }
        Next::At(t)
    }

    /// When all flows' shared fetch limit lets a request in (`None`: when a
    /// request whose completion is not known yet completes).
    fn device_free(&mut self, now: u64) -> Option<u64> {
        while self.device.peek().is_some_and(|r| r.0 <= now) {
            self.device.pop();
        }
        if self.device_open + self.device.len() < self.shared {
            Some(now)
        } else {
            self.device.peek().map(|r| r.0)
        }
    }

    /// The flow to fetch from at `now`, if any can: the most urgent class,
    /// then the fewest requests per weight, then the lowest index.
    fn pick(&mut self, now: u64) -> Option<usize> {
        if self.device_free(now) != Some(now) {
            return None;
        }
        let mut pick: Option<usize> = None;
        for i in 0..self.lanes.len() {
            if !matches!(self.next_of(i, now), Next::At(t) if t <= now) {
                continue;
            }
            pick = match pick {
                Some(j) if !fetch_before(self.turn(i), self.turn(j)) => Some(j),
                _ => Some(i),
            };
        }
        pick
    }

    /// Flow `i`'s class, requests served and weight.
    fn turn(&self, i: usize) -> (u8, u64, u32) {
        (self.shape[i].1 as u8, self.lanes[i].served, self.shape[i].2)
    }

    /// The next instant after `now` at which a flow could have a request
    /// fetched (`u64::MAX`: none known).
    fn next_fetch(&mut self, now: u64) -> u64 {
        let device = self.device_free(now);
        let mut next = u64::MAX;
        for i in 0..self.lanes.len() {
            if let Next::At(t) = self.next_of(i, now) {
                if let Some(d) = device {
                    next = next.min(t.max(d));
                }
            }
        }
        next
    }
}

impl Engine {
    /// [`Engine::drive_flows`] with reads held at their dies (see the module
    /// documentation).
    pub(super) fn drive_flows_per_die(
        &mut self,
        flows: &mut [FlowInput<'_>],
        offset: u64,
        fetch: Fetch,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), SimError> {
        let dies = self.device.flash.nand().geometry().dies() as usize;
        let labels: Vec<(String, String)> = flows.iter().map(|f| (f.name.clone(), f.key.clone())).collect();
        let mut st = State {
            lanes: Vec::with_capacity(flows.len()),
            stats: Vec::with_capacity(flows.len()),
            shape: Vec::with_capacity(flows.len()),
            dies: vec![DieQueue::new(); dies],
            admitted: Vec::new(),
            free: Vec::new(),
            waiting: 0,
            pending: BinaryHeap::new(),
            seq: 0,
            device: BinaryHeap::new(),
            device_open: 0,
            per_flow: fetch.per_flow,
            fetch: fetch.size as usize,
            shared: if fetch.per_flow { usize::MAX } else { fetch.size as usize },
            fifo: self.dispatch == Dispatch::PerDieEdf,
            writes: VecDeque::new(),
            write_wake: u64::MAX,
            group: Vec::new(),
            queues: false,
            tokens: HashMap::new(),
            played: Vec::new(),
        };
        st.queues = self.device.set_queueing(true).map_err(self.queue_error(self.device.clock))?;
        for f in flows.iter_mut() {
            let queue = HostQueue::new(f.requests, offset, false, f.closed)?;
            let slots = (0..f.queue_depth.max(1)).map(|_| Reverse(offset)).collect();
            st.lanes.push(Lane { queue, slots, served: 0, done: false, fetched: BinaryHeap::new(), open: 0 });
            st.stats.push(std::mem::take(&mut f.stats));
            let class = usize::from(f.rank).min(CLASSES - 1);
            st.shape.push((f.closed, class, f.weight.max(1), f.stop_ns.map(|s| s.saturating_add(offset))));
        }
        let mut now = self.device.clock;
        let mut stopped = false;
        // Requests fetched at `still_at`: a flow bounded by a stop time whose
        // requests take no device time would never reach it.
        let (mut still, mut still_at) = (0u64, u64::MAX);
        loop {
            self.device.clock = now;
            while !stopped {
                if self.retirement_reached() {
                    stopped = true;
                    break;
                }
                let Some(i) = st.pick(now) else { break };
                let lane = &mut st.lanes[i];
                lane.queue.arrive_until(now)?;
                let Some(mut req) = lane.queue.take(now)? else { break };
                let room = lane.slots.pop().map_or(now, |r| r.0);
                if st.shape[i].0 {
                    req.arrival = room.min(now);
                }
                if now == still_at {
                    still += 1;
                    if let (true, Some(stop)) = (still > STALL_LIMIT, st.shape[i].3) {
                        let (name, key) = &labels[i];
                        return Err(stall_error(name, key, still, now, stop.saturating_sub(offset)));
                    }
                } else {
                    (still, still_at) = (1, now);
                }
                self.fetch_flow_request(&mut st, i, req, now, progress)?;
            }
            self.issue_writes(&mut st, now)?;
            self.issue_waiting(&mut st, now)?;
            if st.queues {
                self.play_queues(&mut st, now)?;
                if st.waiting > 0 {
                    // Reads a collection held until now go too.
                    self.issue_waiting(&mut st, now)?;
                }
            }
            self.check_first_gc();

            let mut next = if stopped { u64::MAX } else { st.next_fetch(now) };
            if next <= now {
                // A request done without flash time freed a slot now.
                continue;
            }
            if let Some(p) = st.pending.peek() {
                next = next.min(p.0 .0);
            }
            next = next.min(st.write_wake);
            let queued = if st.queues { self.device.queued() } else { 0 };
            if queued > 0 {
                next = next.min(self.device.next_play(now).max(now + 1));
            }
            for q in &st.dies {
                if let Some(d) = q.front_die() {
                    // A die whose collection holds its reads is woken by its queue.
                    if !(st.queues && self.device.holds_reads(d)) {
                        next = next.min(self.can_take(q, d, now).0);
                    }
                }
            }
            if next == u64::MAX {
                if st.waiting > 0 || !st.writes.is_empty() || !st.tokens.is_empty() {
                    return Err(SimError::Invariant(format!(
                        "per-die flow dispatch stopped at {:.3} us with {} reads and {} writes waiting and {} \
                         page commands queued",
                        now as f64 / 1e3,
                        st.waiting,
                        st.writes.len(),
                        st.tokens.len()
                    )));
                }
                break;
            }
            if next <= now {
                return Err(SimError::Invariant(format!(
                    "per-die flow dispatch made no progress at {:.3} us with {} reads and {} writes waiting",
                    now as f64 / 1e3,
                    st.waiting,
                    st.writes.len()
                )));
            }
            if st.waiting == 0
                && st.writes.is_empty()
                && queued == 0
                && st.device_open == 0
                && !st.lanes.iter().any(|l| !l.done && l.queue.has_next())
            {
                // The device has nothing to do until the next arrival.
                self.offer_idle(next)?;
            }
            now = next;
        }
        if st.queues {
            self.device.set_queueing(false).map_err(self.queue_error(now))?;
        }
        let State { lanes, stats, .. } = st;
        drop(lanes);
        for (f, s) in flows.iter_mut().zip(stats) {
            f.stats = s;
        }
        Ok(())
    }

    /// Fetches `req` of flow `i` at `now`: a write or trim is served whole,
    /// or, to an FTL that may hold writes back, joins the waiting writes; a
    /// read's pages wait at their dies or are issued at once.
    fn fetch_flow_request(
        &mut self,
        st: &mut State<'_>,
        i: usize,
        req: Request,
        now: u64,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), SimError> {
        let number = self.dispatched;
        self.count_dispatch(now, progress);
        st.lanes[i].served += 1;
        st.lanes[i].open += 1;
        st.device_open += usize::from(!st.per_flow);
        let (first, last) = self.pages_of(&req)?;
        let entry = Admitted {
            req,
            lane: i,
            number,
            first,
            last,
            left: last - first + 1,
            completion: now,
            unwritten: 0,
            next: first,
            rmw: 0,
        };
        // A write to an FTL that may hold writes back goes page by page, each
        // when the FTL has room; a trim behind a waiting write waits too, so
        // the two keep their order.
        let held = match req.op {
            Op::Read => false,
            Op::Trim => !st.writes.is_empty(),
            Op::Write => st.queues || !st.writes.is_empty() || self.write_room(now, &req, number, first)?.is_some(),
        };
        if held {
            let slot = super::take_slot(&mut st.admitted, &mut st.free, entry);
            st.writes.push_back(slot);
            return self.issue_writes(st, now);
        }
        if req.op != Op::Read {
            let before = self.measured.rmw_pages;
            let completion = self.serve(&req, now)?;
            let rmw = self.measured.rmw_pages - before;
            self.complete_flow_request(st, i, &req, last - first + 1, rmw, 0, completion);
            return Ok(());
        }
        self.device.flash.request_start();
        let slot = super::take_slot(&mut st.admitted, &mut st.free, entry);
        let class = if st.fifo { 0 } else { st.shape[i].1 };
        for lpn in first..=last {
            match self.die_of(lpn, st.dies.len()) {
                Some(d) => {
                    // Its translation first, wherever the FTL keeps it; the
                    // page joins its die's queue once that is done.
                    let at = self.device.prepare_read(lpn, now).map_err(|e| SimError::Ftl {
                        request: number,
                        op: req.op.to_string(),
                        lpn,
                        at_us: now as f64 / 1e3,
                        source: e,
                    })?;
                    let page = Page { slot, lpn, die: d, class, ready: now, place: NOWHERE };
                    st.waiting += 1;
                    if at > now {
                        st.pending.push(Reverse((at, st.seq, page)));
                        st.seq += 1;
                    } else {
                        let q = self.device.flash.nand().die_slot(DieId(d as u32));
                        st.dies[q].push(self.placed(page));
                    }
                }
                None => self.issue_flow_page(st, slot, lpn, now, now, None, false)?,
            }
        }
        Ok(())
    }

    /// When the FTL next takes a write without holding it back, asked at
    /// `now` for request `req` (number `number`, first page `lpn`); `None`:
    /// at any time.
    fn write_room(&mut self, now: u64, req: &Request, number: u64, lpn: u64) -> Result<Option<u64>, SimError> {
        self.device.write_room(now).map_err(|e| SimError::Ftl {
            request: number,
            op: req.op.to_string(),
            lpn,
            at_us: now as f64 / 1e3,
            source: e,
        })
    }

    /// Issues, at `now`, the pages of the waiting writes (and trims) in
    /// order, each a write page once the FTL has room for it; notes when to
    /// try again if the first must wait.
    fn issue_writes(&mut self, st: &mut State<'_>, now: u64) -> Result<(), SimError> {
        st.write_wake = u64::MAX;
        while let Some(&slot) = st.writes.front() {
            let a = st.admitted[slot];
            let lpn = a.next;
            if a.req.op == Op::Write {
                if let Some(t) = self.write_room(now, &a.req, a.number, lpn)? {
                    if t > now {
                        st.write_wake = t;
                        return Ok(());
                    }
                }
            }
            if lpn == a.first {
                self.device.flash.request_start();
            }
            let partial = self.partial(&a.req, lpn, a.first, a.last);
            let page = PageCmd { lpn, partial, at: now, ready: now, held: None, since: None, joins: false };
            let done = self.serve_page(&a.req, page, lpn < a.last, a.number)?;
            let queued = self.queued_token.take();
            let e = &mut st.admitted[slot];
            e.rmw += u64::from(partial && a.req.op == Op::Write);
            e.next += 1;
            match queued {
                // Done when the die takes its program.
                Some((token, programs)) => {
                    st.tokens.insert(token, (slot, programs));
                }
                None => {
                    e.completion = e.completion.max(done);
                    e.left -= 1;
                }
            }
            if e.next > e.last {
                st.writes.pop_front();
                if e.left == 0 {
                    self.complete_write(st, slot);
                }
            }
        }
        Ok(())
    }

    /// Records held write (or trim) `slot`, all its pages done, and frees its
    /// slots.
    fn complete_write(&mut self, st: &mut State<'_>, slot: usize) {
        let e = st.admitted[slot];
        st.free.push(slot);
        let pages = e.last - e.first + 1;
        self.record_request(&e.req, pages, e.rmw, e.completion);
        self.complete_flow_request(st, e.lane, &e.req, pages, e.rmw, 0, e.completion);
    }

    /// The error of the FTL's per-die queues failing at `now` (turned on or
    /// off, or played): no one request's.
    fn queue_error(&self, now: u64) -> impl FnOnce(ftlab_ftl::FtlError) -> SimError {
        let request = self.dispatched;
        move |source| SimError::Ftl { request, op: "write".to_string(), lpn: 0, at_us: now as f64 / 1e3, source }
    }

    /// Has the dies free at `now` take their queued commands, and completes
    /// the writes whose last program was taken.
    fn play_queues(&mut self, st: &mut State<'_>, now: u64) -> Result<(), SimError> {
        let mut played = std::mem::take(&mut st.played);
        self.device.play_queued(now, &mut played).map_err(self.queue_error(now))?;
        for (token, finish) in played.drain(..) {
            // Programs queued under a read's number (a write's pages the FTL
            // held until then) complete no request.
            let Some((slot, left)) = st.tokens.get_mut(&token) else { continue };
            let slot = *slot;
            *left -= 1;
            if *left > 0 {
                continue;
            }
            st.tokens.remove(&token);
            let e = &mut st.admitted[slot];
            e.completion = e.completion.max(finish);
            e.left -= 1;
            if e.left == 0 && e.next > e.last {
                self.complete_write(st, slot);
            }
        }
        st.played = played;
        Ok(())
    }

    /// Issues, at `now`, a waiting read on every die that can start one, until
    /// none can.
    fn issue_waiting(&mut self, st: &mut State<'_>, now: u64) -> Result<(), SimError> {
        if st.waiting == 0 {
            return Ok(());
        }
        while st.pending.peek().is_some_and(|p| p.0 .0 <= now) {
            let Some(Reverse((_, _, page))) = st.pending.pop() else { break };
            let q = self.device.flash.nand().die_slot(DieId(page.die as u32));
            st.dies[q].push(self.placed(page));
        }
        loop {
            let mut issued = false;
            for q in 0..st.dies.len() {
                let Some(first) = st.dies[q].front_die() else { continue };
                if st.queues && self.device.holds_reads(first) {
                    // Its collection goes first (the matched simulator's
                    // urgent mode, TSU_Priority_OutOfOrder.cpp,
                    // service_read_transaction).
                    continue;
                }
                let (at, since) = self.can_take(&st.dies[q], first, now);
                if at > now {
                    // Free but the channel busy: what starts on the die
                    // meanwhile, the read passes (with reads first).
                    st.dies[q].since = (since <= now).then_some(since);
                    continue;
                }
                st.dies[q].since = None;
                let Some(page) = st.dies[q].take() else { continue };
                st.waiting -= 1;
                issued = true;
                // The FTL may have moved the page since it was queued.
                match self.die_of(page.lpn, st.dies.len()) {
                    Some(e) if e != page.die => {
                        let to = self.device.flash.nand().die_slot(DieId(e as u32));
                        st.dies[to].push(self.placed(Page { die: e, ..page }));
                        st.waiting += 1;
                    }
                    held => {
                        let held = held.zip(Some(since));
                        let mut group = std::mem::take(&mut st.group);
                        if self.multi_plane_reads && held.is_some() {
                            self.companions(&mut st.dies[q], &page, &mut group);
                            st.waiting -= group.len();
                        }
                        self.issue_flow_page(st, page.slot, page.lpn, now, page.ready, held, false)?;
                        for p in group.drain(..) {
                            self.issue_flow_page(st, p.slot, p.lpn, now, p.ready, held, true)?;
                        }
                        st.group = group;
                    }
                }
            }
            if !issued {
                return Ok(());
            }
        }
    }

    /// With `host.multi_plane_reads`: into `group`, the reads waiting in
    /// `lead`'s class of queue `queue` on its die, in other planes at its
    /// page offset, at most one a plane, the first in queue order of each
    /// (taken from the queue): what MQSim's scheduler sends to a chip with
    /// the read it takes, as one multi-plane read (`TSU_Base.cpp:85-140`,
    /// `issue_command_to_chip`, which takes them from the queue the read came
    /// from). Nothing when the FTL cannot say where the reads are.
    fn companions(&self, queue: &mut DieQueue, lead: &Page, group: &mut Vec<Page>) {
        let Some(placement) = self.device.ftl.placement() else { return };
        let planes = self.device.flash.nand().geometry().planes_per_die;
        let Some((plane, offset)) = placement.read_slot(Lpn(lead.lpn as u32)) else { return };
        let mut taken = 1u64 << plane.min(63);
        let class = &mut queue.classes[lead.class];
        let mut i = 0;
        while i < class.len() && group.len() + 1 < planes as usize {
            let p = class[i];
            let bit = 1u64 << p.place.0.min(63);
            // Where it was when queued, then (only for a match) where it is
            // now: the FTL may have moved it since.
            let fits = p.die == lead.die
                && p.place.1 == offset
                && taken & bit == 0
                && placement.read_slot(Lpn(p.lpn as u32)) == Some(p.place)
                && self.die_of(p.lpn, usize::MAX) == Some(p.die);
            if fits {
                taken |= bit;
                group.extend(class.remove(i));
                queue.waiting -= 1;
            } else {
                i += 1;
            }
        }
    }

    /// `page` with where the FTL says it is now, when reads are grouped.
    fn placed(&self, page: Page) -> Page {
        if !self.multi_plane_reads {
            return page;
        }
        let place = self.device.ftl.placement().and_then(|p| p.read_slot(Lpn(page.lpn as u32)));
        Page { place: place.unwrap_or(NOWHERE), ..page }
    }

    /// When queue `q` (die `d` and the dies that share its busy-until) can
    /// next take a read, at or after `now`: the die can start one, and its
    /// channel is idle to carry the command; and since when the die has been
    /// free for it (after `now` if it is not yet). A die found free while the
    /// channel was busy stays free for the read from then: what starts there
    /// meanwhile, the read passes with reads first, as a chip the channel
    /// keeps from taking a command starts nothing either.
    fn can_take(&self, q: &DieQueue, d: usize, now: u64) -> (u64, u64) {
        let nand = self.device.flash.nand();
        let die = DieId(d as u32);
        let mark = q.since.unwrap_or(now);
        let free = nand.read_free_at(die, SimTime(mark)).0.max(mark);
        if free > now {
            return (free, free);
        }
        (nand.channel_idle_at(die, SimTime(now)).0, free)
    }

    /// Hands page `lpn` of admitted read `slot` to the FTL at `now`, held for
    /// a die free for it since a time if `held`, and as one more plane of the
    /// read issued just before it if `joins`; completes the request after its
    /// last page.
    #[allow(clippy::too_many_arguments)]
    fn issue_flow_page(
        &mut self,
        st: &mut State<'_>,
        slot: usize,
        lpn: u64,
        now: u64,
        ready: u64,
        held: Option<(usize, u64)>,
        joins: bool,
    ) -> Result<(), SimError> {
        let a = st.admitted[slot];
        let partial = self.partial(&a.req, lpn, a.first, a.last);
        let unwritten = u64::from(self.versions.get(lpn) == 0);
        self.measured.unwritten_read_pages += unwritten;
        let page = PageCmd { lpn, partial, at: now, ready, held: held.map(|h| h.0), since: held.map(|h| h.1), joins };
        // Each page is a request of its own to the FTL (no `Hint::more`).
        let done = self.serve_page(&a.req, page, false, a.number)?;
        let a = &mut st.admitted[slot];
        a.completion = a.completion.max(done);
        a.unwritten += unwritten;
        a.left -= 1;
        if a.left == 0 {
            let a = *a;
            st.free.push(slot);
            self.complete_flow_request(st, a.lane, &a.req, a.last - a.first + 1, 0, a.unwritten, a.completion);
        }
        Ok(())
    }

    /// Records flow `i`'s request `req` of `pages` pages (`rmw` written in part,
    /// `unwritten` read unwritten), complete at `completion`, and frees its
    /// slots then.
    #[allow(clippy::too_many_arguments)]
    fn complete_flow_request(
        &mut self,
        st: &mut State<'_>,
        i: usize,
        req: &Request,
        pages: u64,
        rmw: u64,
        unwritten: u64,
        completion: u64,
    ) {
        if req.op == Op::Read {
            self.record_request(req, pages, 0, completion);
        }
        // (A write or trim served whole, or held, was recorded already.)
        self.busy_until = self.busy_until.max(completion);
        let lane = &mut st.lanes[i];
        lane.open -= 1;
        lane.slots.push(Reverse(completion));
        if st.per_flow {
            lane.fetched.push(Reverse(completion));
        } else {
            st.device_open -= 1;
            st.device.push(Reverse(completion));
        }
        if self.measuring {
            let s = &mut st.stats[i];
            s.record(req.op, pages, completion - req.arrival);
            let ps = self.page_size;
            s.unaligned += u64::from(!req.offset.is_multiple_of(ps) || !u64::from(req.len).is_multiple_of(ps));
            s.partial_writes += rmw;
            s.unwritten_reads += unwritten;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(class: usize, n: u64) -> Page {
        Page { slot: 0, lpn: n, die: 0, class, ready: 0, place: NOWHERE }
    }

    #[test]
    fn a_die_takes_urgent_reads_first_then_high_medium_low_four_two_one() {
        let mut q = DieQueue::new();
        for n in 0..40 {
            for class in 1..CLASSES {
                q.push(page(class, n));
            }
        }
        q.push(page(0, 100));
        q.push(page(0, 101));
        let taken: Vec<usize> = (0..16).map(|_| q.take().unwrap().class).collect();
        // Urgent first, in order; then MQSim's round robin: high, high,
        // medium, high, medium, low, high (weights 3, 2, 1, 4 in turn), ...
        assert_eq!(taken[..2], [0, 0]);
        assert_eq!(taken[2..9], [1, 1, 2, 1, 2, 3, 1]);
        let count = |c: usize| taken[2..].iter().filter(|&&t| t == c).count();
        assert_eq!((count(1), count(2), count(3)), (8, 4, 2), "{taken:?}");
        // First come, first served within a class.
        let mut q = DieQueue::new();
        q.push(page(1, 7));
        q.push(page(1, 8));
        assert_eq!(q.take().unwrap().lpn, 7);
        // A class whose turn the round robin passes over is still served: no
        // die stands idle with reads waiting.
        let mut q = DieQueue::new();
        for n in 0..5 {
            q.push(page(3, n));
        }
        for n in 0..5 {
            assert_eq!(q.take().map(|p| p.lpn), Some(n));
        }
        assert!(q.take().is_none() && q.front_die().is_none());
    }
}
