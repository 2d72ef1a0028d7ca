//! The host queue both dispatch modes share: requests from a source, their times
//! shifted by the run's start, waiting in first-in first-out or earliest-deadline
//! order until the dispatcher takes them.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::{next_request, queue_key, Queued};
use crate::error::SimError;
use crate::source::Request;

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
    /// The source's request after `peeked`, read ahead too (a prefetch hint
    /// two requests ahead, [`HostQueue::upcoming_after`]); `None` if `peeked`
    /// is the last or the source failed there.
    after: Option<Request>,
    /// The source's error in `after`'s place: it waits here until it would
    /// have been read, so a bad request stops the run no sooner than without
    /// the read-ahead.
    after_error: Option<SimError>,
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
        let mut queue = HostQueue {
            source,
            offset,
            edf,
            closed,
            peeked,
            after: None,
            after_error: None,
            ordered: VecDeque::new(),
            heap: BinaryHeap::new(),
            seq: 0,
        };
        if queue.peeked.is_some() {
            queue.read_after();
        }
        Ok(queue)
    }

    /// Reads the source's next request into `after`, or its error into
    /// `after_error`.
    #[inline]
    fn read_after(&mut self) {
        match next_request(self.source, self.offset) {
            Ok(r) => self.after = r,
            Err(e) => self.after_error = Some(e),
        }
    }

    /// Moves the read-ahead on by one request: `after` becomes `peeked`. The
    /// source is not asked again once it has ended.
    #[inline]
    fn advance(&mut self) -> Result<(), SimError> {
        if let Some(e) = self.after_error.take() {
            self.peeked = None;
            return Err(e);
        }
        self.peeked = self.after.take();
        if self.peeked.is_some() {
            self.read_after();
        }
        Ok(())
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
            self.advance()?;
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

    /// The request most likely taken after [`HostQueue::upcoming`], if one is
    /// known: a hint for prefetching two requests ahead, not a promise.
    #[inline]
    pub(super) fn upcoming_after(&self) -> Option<&Request> {
        let after = self.after.as_ref();
        if self.closed {
            return after;
        }
        if !self.heap.is_empty() {
            return None;
        }
        match self.ordered.len() {
            0 => after,
            1 => self.peeked.as_ref(),
            _ => self.ordered.get(1).map(|q| &q.req),
        }
    }

    /// The next request to dispatch at `now`, if one can be taken: in closed
    /// loop the source's next, arriving now.
    #[inline]
    pub(super) fn take(&mut self, now: u64) -> Result<Option<Request>, SimError> {
        if self.closed {
            let Some(mut r) = self.peeked else { return Ok(None) };
            self.advance()?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use ftlab_workload::Op;

    fn req(arrival: u64, page: u64) -> Request {
        Request { arrival, op: Op::Write, offset: page * 4096, len: 4096, deadline: None, task: None, expiry: None }
    }

    /// Before each take, the pages of the two hints (next, after it), then
    /// the page taken.
    type Seen = Vec<(Option<u64>, Option<u64>, u64)>;

    /// What the queue hinted and took; the error the source gave, if the
    /// queue passed it on.
    fn drain(items: Vec<Result<Request, SimError>>, closed: bool) -> (Seen, Option<String>) {
        let mut source = items.into_iter();
        let mut q = match HostQueue::new(&mut source, 0, false, closed) {
            Ok(q) => q,
            Err(e) => return (Vec::new(), Some(e.to_string())),
        };
        let mut seen = Vec::new();
        let mut t = 0;
        loop {
            if let Err(e) = q.arrive_until(t) {
                return (seen, Some(e.to_string()));
            }
            let page = |r: Option<&Request>| r.map(|r| r.offset / 4096);
            let (next, after) = (page(q.upcoming()), page(q.upcoming_after()));
            match q.take(t) {
                Ok(Some(r)) => seen.push((next, after, r.offset / 4096)),
                Ok(None) if q.next_arrival().is_some() => t = q.next_arrival().unwrap_or(t),
                Ok(None) => return (seen, None),
                Err(e) => return (seen, Some(e.to_string())),
            }
        }
    }

    #[test]
    fn the_hints_name_the_next_two_requests_in_both_loops() {
        for closed in [true, false] {
            let items = (0..4).map(|i| Ok(req(i * 10, 100 + i))).collect();
            let (seen, err) = drain(items, closed);
            assert_eq!(err, None);
            let want = vec![
                (Some(100), Some(101), 100),
                (Some(101), Some(102), 101),
                (Some(102), Some(103), 102),
                (Some(103), None, 103),
            ];
            assert_eq!(seen, want, "closed loop: {closed}");
        }
        // Open loop, all arrived at once: the second hint is the second waiting.
        let items = (0..3).map(|i| Ok(req(0, 7 + i))).collect();
        let (seen, _) = drain(items, false);
        assert_eq!(seen[0], (Some(7), Some(8), 7));
    }

    #[test]
    fn a_source_error_read_ahead_stops_the_queue_no_sooner() {
        for closed in [true, false] {
            let bad = || Err(SimError::Invariant("bad third request".into()));
            let items = vec![Ok(req(0, 1)), Ok(req(10, 2)), bad(), Ok(req(30, 4))];
            let (seen, err) = drain(items, closed);
            // Reading one ahead, the error surfaces when the second request is
            // taken (its successor is read then), as without the second hint.
            let pages: Vec<u64> = seen.iter().map(|s| s.2).collect();
            assert_eq!(pages, vec![1], "closed loop: {closed}");
            assert!(err.is_some_and(|e| e.contains("bad third request")), "closed loop: {closed}");
        }
    }
}
