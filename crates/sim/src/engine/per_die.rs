//! Per-die earliest-deadline-first dispatch (`host.dispatch = "per-die-edf"`).
//!
//! The host queue admits up to `queue_depth` requests into the device, in the
//! same order as dispatch by request (first-in first-out, or earliest deadline
//! first for task sets). An admitted request is split into page commands, each
//! carrying its request's key (its deadline; its arrival when it has none, so
//! requests without deadlines are served first-in first-out) and its admission
//! order. A command is handed to the FTL only when it can start, so flash
//! operations are reserved just in time instead of queueing on a die's timeline:
//!
//! - a read whose die the FTL names ([`ftlab_ftl::Placement::die_of`]) waits in that
//!   die's queue until the die is free (nothing reserved on it beyond now);
//! - a write the FTL places on a die of its own choosing
//!   ([`ftlab_ftl::Placement::write_die`], e.g. a Telomere task's stripe) waits until
//!   that die is free; any other write may go to any die (the FTL places it),
//!   so it waits until some die is free;
//! - a read whose die the FTL cannot name, and a trim, is issued as soon as it is
//!   ready (its operations then wait on the die's timeline, as in dispatch by
//!   request).
//!
//! At each instant the commands that can start are taken earliest key first
//! (ties: admission order). A write chosen takes one of the free dies without
//! naming it; the writes chosen at an instant are issued after the reads took
//! their dies, so the FTL finds the dies left to them free. Operations already
//! reserved are never preempted: a ready read waits for what its die is doing
//! then (one command's operations when the FTL places writes on free dies, or a
//! garbage-collection pass the FTL reserved there), measured as
//! `max_read_block_ns`.
//!
//! A request completes when its last page does; its response time is that minus
//! its arrival (closed loop: minus its admission). A page command is ready when
//! its request is admitted; its service time for the bound runs from the later
//! of that and the end of the last host operation on its die, so the flash work
//! a command waits for on its die after the host work before it (garbage
//! collection an earlier command left there) is service, whenever it was
//! reserved. When a retirement stop is reached no request is admitted any more,
//! but those admitted are finished.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use ftlab_ftl::Lpn;
use ftlab_nand::DieId;
use ftlab_workload::Op;

use super::{queue_key, Engine, HostQueue, PageCmd, Progress};
use crate::error::SimError;
use crate::source::Request;

/// A page command waiting to be issued, ordered by `(key, seq)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cmd {
    key: u64,
    seq: u64,
    /// Its request's index in [`Dies::admitted`].
    slot: usize,
    lpn: u64,
    /// When it became ready (its request's admission), ns.
    ready: u64,
    /// For a read whose die was named: when that die was next free as the read
    /// became ready, ns.
    die_free_at_ready: Option<u64>,
}

impl PartialOrd for Cmd {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Cmd {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.key, self.seq).cmp(&(other.key, other.seq))
    }
}

/// An admitted request; its slot is free again once `left` is 0.
#[derive(Debug, Clone, Copy)]
struct Admitted {
    req: Request,
    /// Its dispatch number (for error messages).
    number: u64,
    first: u64,
    last: u64,
    /// Page commands not issued yet.
    left: u64,
    completion: u64,
    rmw: u64,
}

/// Where a chosen command waits.
#[derive(Debug, Clone, Copy)]
enum Waiting {
    Asap,
    Die(usize),
    /// A write the FTL places on an idle die it names.
    WriteOn(usize),
    AnyDie,
}

/// The device's queues of page commands and the requests they belong to.
#[derive(Debug)]
struct Dies {
    per_die: Vec<BinaryHeap<Reverse<Cmd>>>,
    /// Writes, in key order: each waits for the die the FTL names for it, or
    /// for any die.
    writes: BTreeSet<Cmd>,
    asap: BinaryHeap<Reverse<Cmd>>,
    admitted: Vec<Admitted>,
    free_slots: Vec<usize>,
    /// Commands waiting in the queues.
    waiting: usize,
    seq: u64,
    /// Completions of requests whose commands are all issued, while they hold a
    /// queue-depth slot.
    completing: BinaryHeap<Reverse<u64>>,
    /// Scratch: which dies are free now, and the writes chosen at one instant.
    idle: Vec<bool>,
    chosen_writes: Vec<Cmd>,
}

impl Dies {
    fn new(dies: usize) -> Self {
        Dies {
            per_die: vec![BinaryHeap::new(); dies],
            writes: BTreeSet::new(),
            asap: BinaryHeap::new(),
            admitted: Vec::new(),
            free_slots: Vec::new(),
            waiting: 0,
            seq: 0,
            completing: BinaryHeap::new(),
            idle: vec![false; dies],
            chosen_writes: Vec::new(),
        }
    }

    /// Requests holding a queue-depth slot at the time `completing` was last
    /// trimmed to.
    fn outstanding(&self) -> usize {
        self.admitted.len() - self.free_slots.len() + self.completing.len()
    }
}

impl Engine {
    /// [`Engine::drive`] by page commands, earliest deadline first per die
    /// ([`crate::config::Dispatch::PerDieEdf`], see the module documentation).
    pub(super) fn drive_per_die(
        &mut self,
        requests: &mut dyn Iterator<Item = Result<Request, SimError>>,
        offset: u64,
        edf: bool,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), SimError> {
        let closed = self.host.closed;
        let qd = self.host.queue_depth as usize;
        let dies = self.device.flash.nand().geometry().dies() as usize;
        let mut dev = Dies::new(dies);
        let mut queue = HostQueue::new(requests, offset, edf, closed)?;
        let mut stopped = false;
        let mut now = self.device.clock;
        loop {
            queue.arrive_until(now)?;
            while dev.completing.peek().is_some_and(|c| c.0 <= now) {
                dev.completing.pop();
            }
            while !stopped && dev.outstanding() < qd && queue.has_next() {
                if self.retirement_reached() {
                    stopped = true;
                    break;
                }
                let Some(req) = queue.take(now)? else { break };
                self.admit(&mut dev, req, now, edf)?;
                self.dispatched += 1;
                if self.dispatched.is_multiple_of(4096) {
                    progress(Progress {
                        requests: self.dispatched,
                        sim_ns: now,
                        measuring: self.measuring,
                        expected: self.expected,
                    });
                }
            }
            self.device.clock = now;
            self.issue_ready(&mut dev, now)?;
            self.check_first_gc();

            // The next instant anything can change.
            let more = !stopped && queue.has_next();
            let mut next = u64::MAX;
            if more {
                if let Some(c) = dev.completing.peek() {
                    if c.0 <= now {
                        // A request done without flash time freed its slot now.
                        continue;
                    }
                    next = c.0;
                }
            }
            if let (false, Some(arrival)) = (stopped, queue.next_arrival()) {
                next = next.min(arrival);
            }
            let nand = self.device.flash.nand();
            for (d, queue) in dev.per_die.iter().enumerate() {
                if !queue.is_empty() {
                    next = next.min(nand.die_free_at(DieId(d as u32)).0);
                }
            }
            if !dev.writes.is_empty() {
                // A write waits for the die the FTL names for it, or for any die.
                let soonest = (0..dies as u32).map(|d| nand.die_free_at(DieId(d)).0).min().unwrap_or(u64::MAX);
                for c in &dev.writes {
                    let t = self.write_die(&dev, c).map_or(soonest, |d| nand.die_free_at(DieId(d as u32)).0);
                    next = next.min(t);
                }
            }
            if next == u64::MAX {
                break;
            }
            if next <= now {
                return Err(SimError::Invariant(format!(
                    "per-die dispatch made no progress at {:.3} us with {} page commands waiting",
                    now as f64 / 1e3,
                    dev.waiting
                )));
            }
            if dev.waiting == 0 && !queue.has_next() && !closed {
                // The device has nothing to do until the next arrival.
                self.offer_idle(next)?;
            }
            now = next;
        }
        Ok(())
    }

    /// Splits `req` into page commands ready at `now` and queues them.
    fn admit(&mut self, dev: &mut Dies, req: Request, now: u64, edf: bool) -> Result<(), SimError> {
        let (first, last) = self.pages_of(&req)?;
        let entry =
            Admitted { req, number: self.dispatched, first, last, left: last - first + 1, completion: now, rmw: 0 };
        let slot = super::take_slot(&mut dev.admitted, &mut dev.free_slots, entry);
        let key = queue_key(&req, edf);
        for lpn in first..=last {
            let mut cmd = Cmd { key, seq: dev.seq, slot, lpn, ready: now, die_free_at_ready: None };
            dev.seq += 1;
            dev.waiting += 1;
            match req.op {
                Op::Write => {
                    dev.writes.insert(cmd);
                }
                Op::Read => match self.die_of(lpn, dev.per_die.len()) {
                    Some(d) => {
                        cmd.die_free_at_ready = Some(self.device.flash.nand().die_free_at(DieId(d as u32)).0);
                        dev.per_die[d].push(Reverse(cmd));
                    }
                    None => dev.asap.push(Reverse(cmd)),
                },
                Op::Trim => dev.asap.push(Reverse(cmd)),
            }
        }
        Ok(())
    }

    /// The die the FTL names for a read of `lpn`, if it is one of the `dies`.
    pub(super) fn die_of(&self, lpn: u64, dies: usize) -> Option<usize> {
        self.device.ftl.placement()?.die_of(Lpn(lpn as u32)).map(|d| d.0 as usize).filter(|&d| d < dies)
    }

    /// The die the FTL names for the write `cmd`, if it is one of the dies.
    fn write_die(&self, dev: &Dies, cmd: &Cmd) -> Option<usize> {
        let hint = super::hint_of(&dev.admitted[cmd.slot].req);
        self.device
            .ftl
            .placement()?
            .write_die(Lpn(cmd.lpn as u32), &hint)
            .map(|d| d.0 as usize)
            .filter(|&d| d < dev.per_die.len())
    }

    /// Issues, at `now`, every waiting command that can start, earliest key first.
    fn issue_ready(&mut self, dev: &mut Dies, now: u64) -> Result<(), SimError> {
        loop {
            let mut issued = false;
            let mut free = self.mark_idle(dev, now);
            loop {
                let mut best: Option<(Cmd, Waiting)> = dev.asap.peek().map(|c| (c.0, Waiting::Asap));
                let better = |best: &Option<(Cmd, Waiting)>, c: &Cmd| best.as_ref().is_none_or(|(b, _)| c < b);
                if free > 0 {
                    for (d, queue) in dev.per_die.iter().enumerate() {
                        if let (true, Some(Reverse(c))) = (dev.idle[d], queue.peek()) {
                            if better(&best, c) {
                                best = Some((*c, Waiting::Die(d)));
                            }
                        }
                    }
                    // The first write, in key order, whose die is free.
                    for c in &dev.writes {
                        if !better(&best, c) {
                            break;
                        }
                        match self.write_die(dev, c) {
                            Some(d) if dev.idle[d] => best = Some((*c, Waiting::WriteOn(d))),
                            Some(_) => continue,
                            None => best = Some((*c, Waiting::AnyDie)),
                        }
                        break;
                    }
                }
                let Some((cmd, from)) = best else { break };
                // The die the command was held for, if any.
                let mut held = None;
                match from {
                    Waiting::Asap => {
                        dev.asap.pop();
                    }
                    Waiting::Die(d) => {
                        held = Some(d);
                        dev.per_die[d].pop();
                        // The FTL may have moved the page since the read was queued.
                        match self.die_of(cmd.lpn, dev.per_die.len()) {
                            Some(e) if e != d => {
                                dev.per_die[e].push(Reverse(cmd));
                                continue;
                            }
                            None => {
                                dev.asap.push(Reverse(cmd));
                                continue;
                            }
                            Some(_) => {}
                        }
                    }
                    Waiting::WriteOn(d) => {
                        held = Some(d);
                        dev.writes.remove(&cmd);
                    }
                    Waiting::AnyDie => {
                        dev.writes.remove(&cmd);
                        dev.chosen_writes.push(cmd);
                        free -= 1;
                        continue;
                    }
                }
                self.issue(dev, cmd, now, held)?;
                issued = true;
                free = self.mark_idle(dev, now).saturating_sub(dev.chosen_writes.len());
            }
            let writes = std::mem::take(&mut dev.chosen_writes);
            for &cmd in &writes {
                self.issue(dev, cmd, now, None)?;
                issued = true;
            }
            dev.chosen_writes = writes;
            dev.chosen_writes.clear();
            if !issued {
                return Ok(());
            }
        }
    }

    /// Marks the dies free at `now` in `dev.idle`; returns how many are.
    fn mark_idle(&self, dev: &mut Dies, now: u64) -> usize {
        let nand = self.device.flash.nand();
        let mut free = 0;
        for (d, idle) in dev.idle.iter_mut().enumerate() {
            *idle = nand.die_free_at(DieId(d as u32)).0 <= now;
            free += usize::from(*idle);
        }
        free
    }

    /// Hands `cmd`, held for die `held` if any, to the FTL at `now`; completes
    /// its request after its last page.
    fn issue(&mut self, dev: &mut Dies, cmd: Cmd, now: u64, held: Option<usize>) -> Result<(), SimError> {
        let a = dev.admitted[cmd.slot];
        let partial = self.partial(&a.req, cmd.lpn, a.first, a.last);
        let page = PageCmd { lpn: cmd.lpn, partial, at: now, ready: cmd.ready, held, since: None, joins: false };
        // The dies serve a request's pages apart: each is a request of its own
        // to the FTL (no `Hint::more`).
        let done = self.serve_page(&a.req, page, false, a.number)?;
        dev.waiting -= 1;
        if let (true, Some(busy)) = (self.measuring, cmd.die_free_at_ready) {
            let block = busy.min(now).saturating_sub(cmd.ready);
            let m = &mut self.measured.max_read_block_ns;
            *m = Some(m.map_or(block, |b| b.max(block)));
        }
        let a = &mut dev.admitted[cmd.slot];
        a.completion = a.completion.max(done);
        a.rmw += u64::from(partial && a.req.op == Op::Write);
        a.left -= 1;
        if a.left == 0 {
            let a = *a;
            dev.free_slots.push(cmd.slot);
            dev.completing.push(Reverse(a.completion));
            self.busy_until = self.busy_until.max(a.completion);
            self.record_request(&a.req, a.last - a.first + 1, a.rmw, a.completion);
        }
        Ok(())
    }
}
