//! The host queue both dispatch modes share: requests from a source, their times
//! shifted by the run's start, waiting in first-in first-out or earliest-deadline
//! order until the dispatcher takes them.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::{next_request, queue_key, Queued};
use crate::source::Request;
use crate::SimError;

/// Requests of a source on their way to the device.
///
/// Open loop: a request waits from its arrival; [`HostQueue::take`] gives the
/// waiting one with the smallest key (its deadline with EDF, else its arrival;
/// ties in arrival order). Closed loop: the next request of the source is
/// always ready, and arrives when it is taken.
pub(super) struct HostQueue<'s> {
    source: &'s mut dyn Iterator<Item = Result<Request, SimError>>,
    offset: u64,
    edf: bool,
    closed: bool,
    /// The source's next request, read ahead.
    peeked: Option<Request>,
    /// Requests arrived and not dispatched (open loop), in two parts: `ordered`
    /// holds those that arrived with a key no smaller than every key before
    /// them, so it is sorted by `(key, seq)` as it stands (the common case: a
    /// source in time order with FIFO dispatch never touches the heap); `heap`
    /// holds the others. The next to take is the smaller of the two fronts.
    ordered: VecDeque<Queued>,
    heap: BinaryHeap<Reverse<Queued>>,
    seq: u64,
}

impl<'s> HostQueue<'s> {
    /// The queue of `source`'s requests, their times shifted by `offset` ns.
    pub(super) fn new(
        source: &'s mut dyn Iterator<Item = Result<Request, SimError>>,
        offset: u64,
        edf: bool,
        closed: bool,
    ) -> Result<Self, SimError> {
        let peeked = next_request(source, offset)?;
        Ok(HostQueue { source, offset, edf, closed, peeked, ordered: VecDeque::new(), heap: BinaryHeap::new(), seq: 0 })
    }

    /// Whether a request can be taken now (one waits, or in closed loop the
    /// source has one more).
    #[inline]
    pub(super) fn has_next(&self) -> bool {
        if self.closed {
            self.peeked.is_some()
        } else {
            !self.ordered.is_empty() || !self.heap.is_empty()
        }
    }

    /// Open loop: when the next request not arrived yet arrives, if any.
    #[inline]
    pub(super) fn next_arrival(&self) -> Option<u64> {
        if self.closed {
            None
        } else {
            self.peeked.map(|r| r.arrival)
        }
    }

    /// Open loop: every request arrived by `t` joins the waiting ones.
    #[inline]
    pub(super) fn arrive_until(&mut self, t: u64) -> Result<(), SimError> {
        if self.closed {
            return Ok(());
        }
        while let Some(r) = self.peeked {
            if r.arrival > t {
                break;
            }
            let q = Queued { key: queue_key(&r, self.edf), seq: self.seq, req: r };
            self.seq += 1;
            if self.ordered.back().is_none_or(|b| b.key <= q.key) {
                self.ordered.push_back(q);
            } else {
                self.heap.push(Reverse(q));
            }
            self.peeked = next_request(self.source, self.offset)?;
        }
        Ok(())
    }

    /// The request most likely taken next, if one is known: a hint for
    /// prefetching ([`super::Engine::prefetch`]), not a promise.
    #[inline]
    pub(super) fn upcoming(&self) -> Option<&Request> {
        if self.closed {
            return self.peeked.as_ref();
        }
        match (self.ordered.front(), self.heap.peek()) {
            (Some(o), Some(Reverse(h))) => Some(if h < o { &h.req } else { &o.req }),
            (Some(o), None) => Some(&o.req),
            (None, Some(Reverse(h))) => Some(&h.req),
            (None, None) => self.peeked.as_ref(),
        }
    }

    /// The next request to dispatch at `now`, if one can be taken: in closed
    /// loop the source's next, arriving now.
    #[inline]
    pub(super) fn take(&mut self, now: u64) -> Result<Option<Request>, SimError> {
        if self.closed {
            let Some(mut r) = self.peeked else { return Ok(None) };
            self.peeked = next_request(self.source, self.offset)?;
            r.arrival = now;
            Ok(Some(r))
        } else {
            let from_heap = match (self.ordered.front(), self.heap.peek()) {
                (Some(o), Some(Reverse(h))) => h < o,
                (None, Some(_)) => true,
                _ => false,
            };
            Ok(if from_heap {
                self.heap.pop().map(|Reverse(q)| q.req)
            } else {
                self.ordered.pop_front().map(|q| q.req)
            })
        }
    }
}
