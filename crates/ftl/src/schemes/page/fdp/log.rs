//! The FDP statistics and event log of [`super::Fdp`], and their record on
//! the medium.
//!
//! - **Events** (NVMe 2.0 base specification, FDP Events log page): each
//!   with its type, its placement identifier (if it has one), its reclaim
//!   group, when it happened and, for Media Reallocated, the pages moved. The
//!   log keeps the newest [`MAX_EVENTS`]; older ones are dropped and counted.
//!   Logged: Reclaim Unit Not Fully Written (00h, a unit a power cut left
//!   with room and recovery did not reopen), Invalid Placement Identifier
//!   (03h, a write refused for its identifier) and Media Reallocated (80h,
//!   a garbage collection of a victim, with the pages it moved).
//! - **The record**: FLUSH writes the statistics and the event log in one
//!   meta page ([`STATS_MARK`] as its logical page); recovery reads the
//!   newest, so the statistics and the log persist as of the last FLUSH, as a
//!   drive's FDP log pages persist across power cycles (what was counted after
//!   it is lost with the cut). Garbage collection that would erase the block
//!   holding the newest record writes a new one first.
//!
//! The record's bytes (little-endian): magic `FDPS`, the placement
//! identifiers `n` (u32), the events `e` (u32), 4 bytes of zero; then per
//! identifier its host and media pages (u64 each); Media Reallocated pages,
//! units not fully written, pages outside their group, events dropped (u64
//! each); then `e` events of 16 bytes (type u8, placement identifier u8,
//! reclaim group u16, pages moved u32, time in ns u64).

use std::collections::VecDeque;

use ftlab_nand::{Payload, SimTime};

/// Events the log keeps.
pub const MAX_EVENTS: usize = 64;

/// The logical page a statistics record names (no logical page).
pub const STATS_MARK: u32 = u32::MAX - 1;

const MAGIC: &[u8; 4] = b"FDPS";
const HEADER: usize = 16;
const EVENT: usize = 16;

/// An FDP event's type, by its NVMe code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// 00h: a reclaim unit closed before it was fully written.
    RuNotFullyWritten = 0x00,
    /// 03h: a write's placement identifier is not valid.
    InvalidPlacementIdentifier = 0x03,
    /// 80h: the controller moved data (garbage collection).
    MediaReallocated = 0x80,
}

/// One event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// Its type's code ([`EventType`]).
    pub kind: u8,
    /// Its placement identifier, if it has one.
    pub pid: Option<u8>,
    pub group: u16,
    /// Pages moved (Media Reallocated), else 0.
    pub moved: u32,
    pub time: SimTime,
}

/// What the record holds besides the events.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    pub host_pages: Vec<u64>,
    pub media_pages: Vec<u64>,
    pub media_reallocated: u64,
    pub ru_not_fully_written: u64,
    pub outside_group: u64,
}

/// The newest events and how many older ones were dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventLog {
    pub events: VecDeque<Event>,
    pub dropped: u64,
}

impl EventLog {
    /// Logs `kind` at `time`.
    pub fn log(&mut self, kind: EventType, pid: Option<u32>, group: u32, moved: usize, time: SimTime) {
        if self.events.len() == MAX_EVENTS {
            self.events.pop_front();
            self.dropped += 1;
        }
        self.events.push_back(Event {
            kind: kind as u8,
            pid: pid.and_then(|p| u8::try_from(p).ok()).filter(|&p| p != u8::MAX),
            group: group as u16,
            moved: moved.min(u32::MAX as usize) as u32,
            time,
        });
    }

    /// The log as curves: one value an event, oldest first.
    pub fn curves(&self) -> Vec<(&'static str, Vec<f64>)> {
        let col = |f: fn(&Event) -> f64| self.events.iter().map(f).collect::<Vec<f64>>();
        vec![
            ("fdp_event_type", col(|e| f64::from(e.kind))),
            ("fdp_event_pid", col(|e| e.pid.map_or(-1.0, f64::from))),
            ("fdp_event_group", col(|e| f64::from(e.group))),
            ("fdp_event_pages_moved", col(|e| f64::from(e.moved))),
            ("fdp_event_time_us", col(|e| e.time.0 as f64 / 1e3)),
        ]
    }
}

/// The record's bytes on a page of `page_size` bytes: the newest events
/// that fit (the others counted as dropped).
pub fn encode(page_size: u32, stats: &Stats, log: &EventLog) -> Payload {
    let n = stats.host_pages.len();
    let fixed = HEADER + n * 16 + 4 * 8;
    let room = (page_size as usize).saturating_sub(fixed) / EVENT;
    let keep = log.events.len().min(room);
    let skip = log.events.len() - keep;
    let mut b = vec![0u8; page_size as usize];
    b[0..4].copy_from_slice(MAGIC);
    b[4..8].copy_from_slice(&(n as u32).to_le_bytes());
    b[8..12].copy_from_slice(&(keep as u32).to_le_bytes());
    let mut at = HEADER;
    let mut put = |b: &mut [u8], v: &[u8]| {
        b[at..at + v.len()].copy_from_slice(v);
        at += v.len();
    };
    for (h, m) in stats.host_pages.iter().zip(&stats.media_pages) {
        put(&mut b, &h.to_le_bytes());
        put(&mut b, &m.to_le_bytes());
    }
    for v in [stats.media_reallocated, stats.ru_not_fully_written, stats.outside_group, log.dropped + skip as u64] {
        put(&mut b, &v.to_le_bytes());
    }
    for e in log.events.iter().skip(skip) {
        put(&mut b, &[e.kind, e.pid.unwrap_or(u8::MAX)]);
        put(&mut b, &e.group.to_le_bytes());
        put(&mut b, &e.moved.to_le_bytes());
        put(&mut b, &e.time.0.to_le_bytes());
    }
    Payload::Bytes(b.into())
}

/// The statistics and the log a record holds, if `payload` is one with `pids`
/// placement identifiers.
pub fn decode(payload: &Payload, pids: usize) -> Option<(Stats, EventLog)> {
    let Payload::Bytes(b) = payload else { return None };
    let u16_at = |i: usize| b.get(i..i + 2).and_then(|s| s.try_into().ok()).map(u16::from_le_bytes);
    let u32_at = |i: usize| b.get(i..i + 4).and_then(|s| s.try_into().ok()).map(u32::from_le_bytes);
    let u64_at = |i: usize| b.get(i..i + 8).and_then(|s| s.try_into().ok()).map(u64::from_le_bytes);
    if b.get(0..4)? != MAGIC || u32_at(4)? as usize != pids {
        return None;
    }
    let events = u32_at(8)? as usize;
    let mut stats = Stats::default();
    let mut at = HEADER;
    for _ in 0..pids {
        stats.host_pages.push(u64_at(at)?);
        stats.media_pages.push(u64_at(at + 8)?);
        at += 16;
    }
    stats.media_reallocated = u64_at(at)?;
    stats.ru_not_fully_written = u64_at(at + 8)?;
    stats.outside_group = u64_at(at + 16)?;
    let mut log = EventLog { events: VecDeque::new(), dropped: u64_at(at + 24)? };
    at += 32;
    for _ in 0..events {
        let (kind, pid) = (*b.get(at)?, *b.get(at + 1)?);
        log.events.push_back(Event {
            kind,
            pid: (pid != u8::MAX).then_some(pid),
            group: u16_at(at + 2)?,
            moved: u32_at(at + 4)?,
            time: SimTime(u64_at(at + 8)?),
        });
        at += EVENT;
    }
    Some((stats, log))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_record_reads_back_what_it_wrote_and_keeps_the_newest_events_that_fit() {
        let stats = Stats {
            host_pages: vec![10, 0, 7],
            media_pages: vec![15, 0, 9],
            media_reallocated: 7,
            ru_not_fully_written: 2,
            outside_group: 1,
        };
        let mut log = EventLog::default();
        for i in 0..MAX_EVENTS + 3 {
            log.log(EventType::MediaReallocated, None, 1, i, SimTime(i as u64 * 1000));
        }
        log.log(EventType::RuNotFullyWritten, Some(2), 0, 0, SimTime(99));
        assert_eq!(log.events.len(), MAX_EVENTS);
        assert_eq!(log.dropped, 4);
        let (s, l) = decode(&encode(4096, &stats, &log), 3).unwrap();
        assert_eq!((s, l), (stats.clone(), log.clone()));
        // A small page keeps the newest events it holds; the rest count as dropped.
        let (_, small) = decode(&encode(512, &stats, &log), 3).unwrap();
        let fit = (512 - HEADER - 3 * 16 - 32) / EVENT;
        assert_eq!(small.events.len(), fit);
        assert_eq!(small.events.back(), log.events.back());
        assert_eq!(small.dropped, log.dropped + (MAX_EVENTS - fit) as u64);
        // Another device's record, or a token, is not one.
        assert!(decode(&encode(4096, &stats, &log), 4).is_none());
        assert!(decode(&Payload::Token(5), 3).is_none());
    }
}
