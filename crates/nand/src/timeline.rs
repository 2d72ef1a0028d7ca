//! Resource timelines: when each die and each channel is next free.
//!
//! An operation issued at `at` starts when its resources are free and returns its
//! `(start, finish)`. Read = array time on the die, then transfer on the channel
//! (the die's page register stays occupied until the transfer is done); program =
//! transfer on the channel into the die's register, then array time on the die;
//! erase = die only; copyback = read and program inside the die, no channel.
//!
//! A die is busy until its last operation finishes. A channel is a calendar of
//! the transfers reserved on it: a transfer takes the earliest gap long enough
//! for it at or after the time it may start, so a transfer reserved for later
//! (the second program of a chain, a read's transfer after its array time) does
//! not hold up another die's transfer that fits before it, as on a real bus.
//! Transfers that finished by the time of the latest [`Timelines::retire`] are
//! forgotten; at most [`CALENDAR`] are kept a channel, the oldest dropped first.
//!
//! An operation is issued for the host or not ([`Issue::host`]); its transfers
//! carry the tag, and each operation reports how long its own transfer waited
//! behind host transfers reserved before it ([`Span::queued`]): the share of its
//! wait for the channel that is queueing behind other host commands rather than
//! service.

use std::collections::VecDeque;

use crate::geometry::{DieId, Divisor, Geometry};
use crate::time::SimTime;
use crate::timing::Timing;

/// Transfers kept a channel (see the module documentation): far more than a
/// channel's dies have in flight at once.
const CALENDAR: usize = 256;

/// Busy-until per die, reserved transfers per channel.
#[derive(Debug, Clone)]
pub struct Timelines {
    die_busy: Vec<SimTime>,
    /// Per channel, reserved transfers `[start, finish)` and whether each is
    /// the host's, disjoint, by start (so by finish too).
    channel: Vec<VecDeque<(SimTime, SimTime, bool)>>,
    dies_per_channel: Divisor,
    read: SimTime,
    read_oob: SimTime,
    program: SimTime,
    erase: SimTime,
    page_transfer: SimTime,
    oob_transfer: SimTime,
}

/// When an operation started and when it finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: SimTime,
    pub finish: SimTime,
    /// How long its channel transfer waited behind host transfers reserved
    /// before it (zero for operations without a transfer, and for every
    /// operation when no host transfer was in its way).
    pub queued: SimTime,
    /// The die it ran on.
    pub die: DieId,
}

/// When an operation is issued and whether it is the host's (a read or write
/// the host asked for, as opposed to garbage collection, map or wear-leveling
/// work). A bare [`SimTime`] is an issue that is not the host's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Issue {
    pub at: SimTime,
    pub host: bool,
}

impl From<SimTime> for Issue {
    #[inline]
    fn from(at: SimTime) -> Self {
        Issue { at, host: false }
    }
}

impl Timelines {
    /// RAM of the timelines, in bytes (allocated capacity).
    pub fn ram_bytes(&self) -> u64 {
        let reserved: usize =
            self.channel.iter().map(|c| c.capacity() * std::mem::size_of::<(SimTime, SimTime, bool)>()).sum();
        (self.die_busy.capacity() * std::mem::size_of::<SimTime>()
            + self.channel.capacity() * std::mem::size_of::<VecDeque<(SimTime, SimTime, bool)>>()
            + reserved) as u64
    }

    /// All resources free at time zero.
    pub fn new(geometry: &Geometry, timing: &Timing) -> Self {
        Timelines {
            die_busy: vec![SimTime::ZERO; geometry.dies() as usize],
            channel: vec![VecDeque::new(); geometry.channels as usize],
            dies_per_channel: Divisor::new(geometry.ways_per_channel * geometry.dies_per_way),
            read: SimTime(timing.read_ns),
            read_oob: SimTime(timing.read_oob_ns),
            program: SimTime(timing.program_ns),
            erase: SimTime(timing.erase_ns),
            page_transfer: timing.transfer(geometry.page_size + geometry.oob_size),
            oob_transfer: timing.transfer(geometry.oob_size.max(1)),
        }
    }

    #[inline]
    fn channel(&self, die: DieId) -> usize {
        self.dies_per_channel.div(die.0) as usize
    }

    /// Reserves a transfer of `len` on channel `c` in the earliest gap at or
    /// after `earliest`, tagged `host`; returns its start and how long it waited
    /// behind host transfers.
    #[inline]
    fn transfer(&mut self, c: usize, earliest: SimTime, len: SimTime, host: bool) -> (SimTime, SimTime) {
        let cal = &mut self.channel[c];
        if cal.back().is_none_or(|r| r.1 <= earliest) {
            // After everything reserved: the common case.
            if cal.len() == CALENDAR {
                cal.pop_front();
            }
            cal.push_back((earliest, earliest + len, host));
            return (earliest, SimTime::ZERO);
        }
        let mut t = earliest;
        let mut queued = SimTime::ZERO;
        // The first transfer that finishes after `t`, then the first gap. The
        // host transfers passed on the way, with the gaps before them too short
        // to use, are what it queued behind.
        let mut i = cal.partition_point(|r| r.1 <= t);
        while i < cal.len() && cal[i].0 < t + len {
            if cal[i].2 {
                queued += cal[i].1 - t;
            }
            t = cal[i].1;
            i += 1;
        }
        if cal.len() == CALENDAR {
            cal.pop_front();
            i = i.saturating_sub(1);
        }
        cal.insert(i, (t, t + len, host));
        (t, queued)
    }

    #[inline]
    fn array_then_transfer(&mut self, die: DieId, at: Issue, array: SimTime, xfer: SimTime) -> Span {
        let d = die.0 as usize;
        let c = self.channel(die);
        let start = at.at.max(self.die_busy[d]);
        let (t, queued) = self.transfer(c, start + array, xfer, at.host);
        let finish = t + xfer;
        self.die_busy[d] = finish;
        Span { start, finish, queued, die }
    }

    /// A page read on `die` issued at `at`.
    #[inline]
    pub fn read(&mut self, die: DieId, at: impl Into<Issue>) -> Span {
        self.array_then_transfer(die, at.into(), self.read, self.page_transfer)
    }

    /// A spare-area read on `die` issued at `at`.
    #[inline]
    pub fn read_oob(&mut self, die: DieId, at: impl Into<Issue>) -> Span {
        self.array_then_transfer(die, at.into(), self.read_oob, self.oob_transfer)
    }

    /// A page program on `die` issued at `at`.
    #[inline]
    pub fn program(&mut self, die: DieId, at: impl Into<Issue>) -> Span {
        let at = at.into();
        let d = die.0 as usize;
        let c = self.channel(die);
        let (start, queued) = self.transfer(c, at.at.max(self.die_busy[d]), self.page_transfer, at.host);
        let finish = start + self.page_transfer + self.program;
        self.die_busy[d] = finish;
        Span { start, finish, queued, die }
    }

    /// A block erase on `die` issued at `at`.
    #[inline]
    pub fn erase(&mut self, die: DieId, at: impl Into<Issue>) -> Span {
        let d = die.0 as usize;
        let start = at.into().at.max(self.die_busy[d]);
        let finish = start + self.erase;
        self.die_busy[d] = finish;
        Span { start, finish, queued: SimTime::ZERO, die }
    }

    /// A copyback (internal read then program) on `die` issued at `at`.
    #[inline]
    pub fn copyback(&mut self, die: DieId, at: impl Into<Issue>) -> Span {
        let d = die.0 as usize;
        let start = at.into().at.max(self.die_busy[d]);
        let finish = start + self.read + self.program;
        self.die_busy[d] = finish;
        Span { start, finish, queued: SimTime::ZERO, die }
    }

    /// When `die` is next free.
    #[inline]
    pub fn die_free_at(&self, die: DieId) -> SimTime {
        self.die_busy[die.0 as usize]
    }

    /// The die that is free soonest (lowest index on ties).
    pub fn soonest_free_die(&self) -> DieId {
        let mut best = 0;
        for (i, &t) in self.die_busy.iter().enumerate() {
            if t < self.die_busy[best] {
                best = i;
            }
        }
        DieId(best as u32)
    }

    /// The first die, scanning from `start` in index order and wrapping, that is
    /// free by `now`; if none is, the die free soonest (the first such in scan
    /// order).
    pub fn free_die_from(&self, start: DieId, now: SimTime) -> DieId {
        let n = self.die_busy.len();
        let mut best = start.0 as usize % n;
        for k in 0..n {
            let i = (start.0 as usize + k) % n;
            let t = self.die_busy[i];
            if t <= now {
                return DieId(i as u32);
            }
            if t < self.die_busy[best] {
                best = i;
            }
        }
        DieId(best as u32)
    }

    /// Forgets the transfers finished by `now`: no operation is issued before
    /// `now` any more.
    #[inline]
    pub fn retire(&mut self, now: SimTime) {
        for cal in &mut self.channel {
            while cal.front().is_some_and(|r| r.1 <= now) {
                cal.pop_front();
            }
        }
    }

    /// Every resource free from `t` on (after a power cut).
    pub fn reset(&mut self, t: SimTime) {
        self.die_busy.iter_mut().for_each(|b| *b = t);
        for cal in &mut self.channel {
            cal.clear();
            cal.push_back((SimTime::ZERO, t, false));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> Timelines {
        let g = Geometry {
            channels: 1,
            ways_per_channel: 2,
            dies_per_way: 1,
            planes_per_die: 1,
            blocks_per_plane: 4,
            pages_per_block: 4,
            page_size: 4096,
            oob_size: 0,
        };
        // 4096 bytes at 4096 MB/s = 1000 ns transfer.
        let t = Timing {
            read_ns: 25_000,
            read_oob_ns: 10_000,
            program_ns: 200_000,
            erase_ns: 1_500_000,
            channel_mb_per_s: 4096,
        };
        Timelines::new(&g, &t)
    }

    #[test]
    fn read_is_array_then_transfer() {
        let mut tl = setup();
        let s = tl.read(DieId(0), SimTime(100));
        assert_eq!(
            s,
            Span { start: SimTime(100), finish: SimTime(100 + 25_000 + 1000), queued: SimTime::ZERO, die: DieId(0) }
        );
    }

    #[test]
    fn program_is_transfer_then_array_and_frees_the_channel_early() {
        let mut tl = setup();
        let a = tl.program(DieId(0), SimTime(0));
        assert_eq!(a.finish, SimTime(1000 + 200_000));
        // The other die on the same channel only waits for the transfer.
        let b = tl.program(DieId(1), SimTime(0));
        assert_eq!(b.start, SimTime(1000));
        // The same die waits for the array.
        let c = tl.program(DieId(0), SimTime(0));
        assert_eq!(c.start, a.finish);
    }

    #[test]
    fn a_transfer_reserved_for_later_does_not_hold_the_channel_before_it() {
        let mut tl = setup();
        // Die 0: a program, then a second one chained after it (its transfer at
        // 201-202 us).
        let a = tl.program(DieId(0), SimTime(0));
        let b = tl.program(DieId(0), a.finish);
        assert_eq!(b.start, a.finish);
        // Die 1's program at 0 fits in the gap before that transfer.
        let c = tl.program(DieId(1), SimTime(0));
        assert_eq!(c.start, SimTime(1000));
        assert_eq!(c.finish, SimTime(202_000));
        // A read on die 1: array time, then a transfer that would overlap die 0's
        // second one, so it goes right after it.
        let r = tl.read(DieId(1), SimTime(176_000));
        assert_eq!(r.start, c.finish);
        assert_eq!(r.finish, SimTime(202_000 + 25_000 + 1000));
        let mut tl = setup();
        let a = tl.program(DieId(0), SimTime(0));
        tl.program(DieId(0), a.finish);
        let r = tl.read(DieId(1), SimTime(176_000));
        assert_eq!(r.finish, SimTime(202_000 + 1000), "array until 201 us, the channel busy until 202 us");
        // Nothing overlaps on the channel.
        let cal = &tl.channel[0];
        assert!(cal.iter().zip(cal.iter().skip(1)).all(|(a, b)| a.1 <= b.0), "{cal:?}");
        tl.retire(SimTime(202_000));
        assert_eq!(tl.channel[0], [(SimTime(202_000), SimTime(203_000), false)]);
    }

    #[test]
    fn a_transfer_reports_its_wait_behind_host_transfers_only() {
        let host = |at| Issue { at: SimTime(at), host: true };
        let mut tl = setup();
        // Die 0: a host program (transfer 0-1 us), then garbage collection's
        // program chained after it (transfer 201-202 us).
        let a = tl.program(DieId(0), host(0));
        assert_eq!(a.queued, SimTime::ZERO);
        tl.program(DieId(0), a.finish);
        // A read on die 1 whose transfer would overlap the GC transfer waits
        // for it, and that is not queueing.
        let r = tl.read(DieId(1), host(176_000));
        assert_eq!((r.finish, r.queued), (SimTime(203_000), SimTime::ZERO));
        // Die 1's host program at 0 waits 1 us behind the host transfer.
        let mut tl = setup();
        tl.program(DieId(0), host(0));
        let b = tl.program(DieId(1), host(0));
        assert_eq!((b.start, b.queued), (SimTime(1000), SimTime(1000)));
        // Behind a transfer that is not the host's, it does not count.
        let mut tl = setup();
        tl.program(DieId(0), SimTime(0));
        let b = tl.program(DieId(1), host(0));
        assert_eq!((b.start, b.queued), (SimTime(1000), SimTime::ZERO));
        // Behind a host transfer it partly overlaps, it queued for the rest.
        let mut tl = setup();
        tl.read(DieId(0), host(0));
        let r = tl.read(DieId(1), host(0));
        assert_eq!((r.finish, r.queued), (SimTime(25_000 + 2000), SimTime(1000)));
        // A gap too short for it before a host transfer is queueing too.
        let mut tl = setup();
        tl.program(DieId(0), host(500));
        let b = tl.program(DieId(1), host(0));
        assert_eq!((b.start, b.queued), (SimTime(1500), SimTime(1500)));
    }

    #[test]
    fn erase_and_copyback_use_only_the_die() {
        let mut tl = setup();
        let e = tl.erase(DieId(0), SimTime(0));
        assert_eq!(e.finish, SimTime(1_500_000));
        let r = tl.read(DieId(1), SimTime(0));
        assert_eq!(r.start, SimTime(0), "a busy die does not hold the channel");
        let cb = tl.copyback(DieId(0), SimTime(0));
        assert_eq!(cb.start, e.finish);
        assert_eq!(cb.finish, e.finish + SimTime(225_000));
        assert_eq!(tl.soonest_free_die(), DieId(1));
        // Die 1 is busy with the read until 26 us; die 0 much longer.
        assert_eq!(tl.free_die_from(DieId(0), SimTime(0)), DieId(1));
        assert_eq!(tl.free_die_from(DieId(1), SimTime(30_000)), DieId(1));
        tl.erase(DieId(1), SimTime(0));
        assert_eq!(tl.free_die_from(DieId(0), SimTime(30_000)), DieId(1), "the die free soonest");
    }
}
