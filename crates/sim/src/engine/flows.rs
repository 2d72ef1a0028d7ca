//! Several host flows on one device (`[[flow]]`, MQSim's multi-queue studies).
//!
//! Each flow has its own request source, its own submission queue of
//! `queue_depth` outstanding requests, open or closed loop, a priority class
//! and a weight. The device fetches at most `fetch` requests from all the
//! queues together (MQSim's `Queue_Fetch_Size`); when a device slot frees and
//! several flows have a request ready, the flow of the most urgent class goes
//! first (strict priority), and within a class the one that has had the fewest
//! requests per unit of weight (weighted fair sharing; ties: the lower flow
//! index). A fetched request is served as in dispatch by request: all its pages
//! are handed to the FTL at once. Its response time runs from its arrival (in
//! closed loop, from when its flow's queue had room for it) to its completion,
//! so time waiting for a device slot counts.
//!
//! One flow with an unlimited fetch is the single-source engine's dispatch by
//! request; single-source runs never come here, so they stay as they were.
//! With `host.dispatch = "per-die-priority"` or `"per-die-edf"` a fetched
//! read's pages wait at their dies instead (`flows_per_die.rs`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use ftlab_workload::Op;

use super::host_queue::HostQueue;
use super::{Engine, Progress};
use crate::error::SimError;
use crate::metrics::Latency;
use crate::source::Request;

/// Requests served at one instant, in a flow bounded by a stop time, after
/// which the run stops with an error: time does not advance, so the stop time
/// would never come. Far above what deep queues dispatch at one instant.
pub(super) const STALL_LIMIT: u64 = 1 << 20;

/// One flow as the engine drives it.
pub struct FlowInput<'a> {
    /// Its requests, arrivals relative to the start of the measured run.
    pub requests: &'a mut dyn Iterator<Item = Result<Request, SimError>>,
    /// Requests of this flow outstanding at once.
    pub queue_depth: u32,
    /// Closed loop: a request is ready as soon as the flow's queue has room.
    pub closed: bool,
    /// Priority class: 0 is served first.
    pub rank: u8,
    /// Share within its class, > 0.
    pub weight: u32,
    /// The flow ends at its first request that could not start until after
    /// this time (ns after the start) by its arrival and its own queue.
    pub stop_ns: Option<u64>,
    /// The flow's name and configuration key (`flow[i]`), for errors.
    pub name: String,
    pub key: String,
    /// What was measured of the flow.
    pub stats: FlowStats,
}

impl std::fmt::Debug for FlowInput<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlowInput").field("queue_depth", &self.queue_depth).field("rank", &self.rank).finish()
    }
}

/// Response times of one flow's requests (measured ones only).
#[derive(Debug, Clone, Default)]
pub struct FlowStats {
    pub requests: u64,
    pub pages: u64,
    pub all: Latency,
    pub read: Latency,
    pub write: Latency,
    /// Requests whose offset or length is not a whole number of pages.
    pub unaligned: u64,
    /// Pages written in part (each a read-modify-write).
    pub partial_writes: u64,
    /// Pages read that no write had reached.
    pub unwritten_reads: u64,
}

impl FlowStats {
    pub(super) fn record(&mut self, op: Op, pages: u64, response: u64) {
        self.requests += 1;
        self.pages += pages;
        self.all.record(response);
        match op {
            Op::Read => self.read.record(response),
            Op::Write => self.write.record(response),
            Op::Trim => {}
        }
    }
}

/// A flow's queue and what it holds in the device.
struct Lane<'s> {
    queue: HostQueue<'s>,
    /// `queue_depth` entries: when each slot of the flow's queue was or will be
    /// free (the start, or a completion). The earliest is the next request's
    /// room; in closed loop, also its arrival.
    slots: BinaryHeap<Reverse<u64>>,
    served: u64,
    done: bool,
    /// With a fetch limit per flow: the completions of its requests in the
    /// device, at most the limit.
    fetched: BinaryHeap<Reverse<u64>>,
}

/// How many requests the device holds at once ([`Engine::drive_flows`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fetch {
    /// The limit (`u32::MAX`: none).
    pub size: u32,
    /// Whether it bounds each flow's requests (MQSim's per-queue
    /// `Queue_Fetch_Size`) rather than all flows' together.
    pub per_flow: bool,
}

/// Whether a flow `(class, requests served, weight)` has its request fetched
/// before another's with one ready at the same time: the more urgent class,
/// then the fewer requests per unit of weight (ties: the other, the lower
/// index when scanning in flow order).
pub(super) fn fetch_before(a: (u8, u64, u32), b: (u8, u64, u32)) -> bool {
    let share_a = u128::from(a.1) * u128::from(b.2);
    let share_b = u128::from(b.1) * u128::from(a.2);
    (a.0, share_a) < (b.0, share_b)
}

/// The error of flow `name` (configuration key `key`) bounded by a stop time
/// `stop` ns after the start, after `still` requests served at `t` without
/// time advancing.
pub(super) fn stall_error(name: &str, key: &str, still: u64, t: u64, stop: u64) -> SimError {
    SimError::config(
        format!("{key}.stop_ms"),
        format!(
            "flow `{name}`: {still} requests served at {:.3} us without simulated time advancing, so its stop time \
             ({:.3} ms) is never reached: its requests take no device time (reads of pages never written, or trims, \
             on a scheme that answers them at once); fill the device first (precondition.fill = true), give the flow \
             a request count, or make such reads cost a flash read (ftl.unwritten_reads = \"flash\" with gc_model = \
             \"mqsim\")",
            t as f64 / 1e3,
            stop as f64 / 1e6,
        ),
    )
}

impl Engine {
    /// Runs `flows` to the end (arrivals relative to `offset` ns), at most
    /// `fetch.size` requests of all flows (or of each flow, with
    /// `fetch.per_flow`) in the device at once.
    pub fn drive_flows(
        &mut self,
        flows: &mut [FlowInput<'_>],
        offset: u64,
        fetch: Fetch,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), SimError> {
        if self.dispatch != crate::config::Dispatch::Request {
            return self.drive_flows_per_die(flows, offset, fetch, progress);
        }
        let mut lanes = Vec::with_capacity(flows.len());
        let mut stats = Vec::with_capacity(flows.len());
        let mut shape = Vec::with_capacity(flows.len());
        let labels: Vec<(String, String)> = flows.iter().map(|f| (f.name.clone(), f.key.clone())).collect();
        for f in flows.iter_mut() {
            let queue = HostQueue::new(f.requests, offset, false, f.closed)?;
            let slots = (0..f.queue_depth.max(1)).map(|_| Reverse(offset)).collect();
            lanes.push(Lane { queue, slots, served: 0, done: false, fetched: BinaryHeap::new() });
            stats.push(std::mem::take(&mut f.stats));
            shape.push((f.closed, f.rank, f.weight.max(1), f.stop_ns.map(|s| s.saturating_add(offset))));
        }
        let mut device: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
        let (per_flow, fetch) = (fetch.per_flow, fetch.size as usize);
        // The limit all flows share (none when each flow has its own).
        let shared = if per_flow { usize::MAX } else { fetch };
        // Requests dispatched since the clock last moved: a flow bounded by a
        // stop time whose requests take no device time would never reach it.
        let (mut still, mut still_at) = (0u64, u64::MAX);
        loop {
            let clock = self.device.clock;
            // When each flow could next have a request fetched, device slots apart.
            let mut earliest = u64::MAX;
            let mut ready = vec![None; lanes.len()];
            for (i, lane) in lanes.iter_mut().enumerate() {
                if lane.done {
                    continue;
                }
                let stop = shape[i].3;
                let slot = lane.slots.peek().map_or(clock, |r| r.0);
                let arrival = if lane.queue.has_next() {
                    clock
                } else {
                    match lane.queue.next_arrival() {
                        None => {
                            lane.done = true;
                            continue;
                        }
                        Some(a) => a,
                    }
                };
                let mut t = slot.max(arrival).max(clock);
                if per_flow && lane.fetched.len() >= fetch {
                    // Its own requests in the device are at the limit: the
                    // next waits for the first of them to complete.
                    t = t.max(lane.fetched.peek().map_or(clock, |r| r.0));
                }
                if stop.is_some_and(|s| t > s) {
                    lane.done = true;
                    continue;
                }
                ready[i] = Some(t);
                earliest = earliest.min(t);
            }
            if earliest == u64::MAX || self.retirement_reached() {
                break;
            }
            if !lanes.iter().any(|l| !l.done && l.queue.has_next()) {
                self.offer_idle(earliest)?;
            }
            let device_free = if device.len() < shared { clock } else { device.peek().map_or(clock, |r| r.0) };
            let t = earliest.max(device_free).max(clock);
            // The most urgent class first, then the fewest requests per weight.
            let mut pick: Option<usize> = None;
            for (i, r) in ready.iter().enumerate() {
                if !r.is_some_and(|r| r <= t) {
                    continue;
                }
                pick = match pick {
                    Some(j)
                        if !fetch_before(
                            (shape[i].1, lanes[i].served, shape[i].2),
                            (shape[j].1, lanes[j].served, shape[j].2),
                        ) =>
                    {
                        Some(j)
                    }
                    _ => Some(i),
                };
            }
            let Some(i) = pick else { continue };
            let lane = &mut lanes[i];
            lane.queue.arrive_until(t)?;
            let Some(mut req) = lane.queue.take(t)? else { continue };
            let room = lane.slots.pop().map_or(t, |r| r.0);
            if shape[i].0 {
                // Closed loop: the request was issued when its flow's queue had
                // room, and waits from then.
                req.arrival = room.min(t);
            }
            if device.len() >= shared {
                device.pop();
            }
            if per_flow && lane.fetched.len() >= fetch {
                lane.fetched.pop();
            }
            if t == still_at {
                still += 1;
                if still > STALL_LIMIT {
                    if let Some(stop) = shape[i].3 {
                        let (name, key) = &labels[i];
                        return Err(stall_error(name, key, still, t, stop.saturating_sub(offset)));
                    }
                }
            } else {
                (still, still_at) = (0, t);
            }
            let (first, last) = self.pages_of(&req)?;
            let before = (self.measured.rmw_pages, self.measured.unwritten_read_pages);
            let completion = self.serve(&req, t)?;
            lane.slots.push(Reverse(completion));
            lane.served += 1;
            if per_flow {
                lane.fetched.push(Reverse(completion));
            } else {
                device.push(Reverse(completion));
            }
            if self.measuring {
                let s = &mut stats[i];
                s.record(req.op, last - first + 1, completion - req.arrival);
                s.unaligned += u64::from(req.offset % self.page_size != 0 || u64::from(req.len) % self.page_size != 0);
                s.partial_writes += self.measured.rmw_pages - before.0;
                s.unwritten_reads += self.measured.unwritten_read_pages - before.1;
            }
            self.dispatched_at(t, completion, progress);
        }
        for (f, s) in flows.iter_mut().zip(stats) {
            f.stats = s;
        }
        Ok(())
    }
}
