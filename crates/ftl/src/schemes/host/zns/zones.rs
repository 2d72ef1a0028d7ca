//! The zone state machine of ZNS 1.1 (Section 2.1.1, Figure "Zone State
//! Machine") with its open and active limits, apart from the medium: states,
//! write pointers and the transitions each command makes or refuses.
//!
//! - A write or an append to an empty or closed zone opens it implicitly; an
//!   empty zone needs an active resource (else Too Many Active Zones), any
//!   zone being opened an open one. When every open resource is taken, the
//!   implicitly opened zone opened first is closed to free one (the
//!   controller may do so, Section 2.1.1.4); with none, Too Many Open Zones.
//! - Open (explicit) takes the same resources; Close turns an open zone
//!   closed, or empty if nothing was written; Finish makes any zone but a
//!   read-only or offline one full; Reset empties any zone but those;
//!   Offline takes a read-only zone offline. Anything else is Zone Invalid
//!   State Transition (Zone Is Read Only or Zone Is Offline for a zone in
//!   those states); a command on a zone already where it leads is a no-op.
//! - A write not at the write pointer is Zone Invalid Write; past the
//!   capacity, Zone Boundary Error; to a full zone, Zone Is Full; to a
//!   read-only or offline one, Zone Is Read Only or Zone Is Offline. The
//!   write that fills the capacity makes the zone full, freeing its resources.
//! - Zone Random Write Area (TP 4076, as QEMU's `hw/nvme` models it): Open
//!   with the ZRWA flag takes a ZRWA resource too (Zone ZRWA Resources
//!   Unavailable without one, or with the write pointer not a multiple of
//!   the flush granularity). A zone with a ZRWA takes writes from its write
//!   pointer to twice the ZRWA size past it (Zone Invalid Write elsewhere);
//!   one past the ZRWA moves the write pointer on by the fewest flush
//!   granules that bring it in (an implicit flush). An explicit flush moves
//!   it by a multiple of the granule within the ZRWA. Close keeps the ZRWA
//!   (the zone stays closed, even with nothing committed); Finish, Reset and
//!   Offline free it, as does the commit that fills the capacity.

use std::collections::VecDeque;

use crate::{ZoneAction, ZoneError, ZoneState, ZoneStatus, ZrwaLimits};

/// Every zone's state and write pointer, and the resources they hold.
#[derive(Debug, Clone)]
pub(super) struct Zones {
    state: Vec<ZoneState>,
    /// Pages written (the write pointer relative to the zone's start); for a
    /// full zone, the pages that hold data.
    written: Vec<u32>,
    capacity: u32,
    max_open: u32,
    max_active: u32,
    open: u32,
    active: u32,
    /// Implicitly opened zones, the first opened first: the one the
    /// controller closes when an open resource is needed.
    implicit: VecDeque<u32>,
    /// Pages a zone spans (its logical pages start at `z * size`).
    size: u32,
    /// The ZRWA rules, if the device has ZRWAs.
    rules: Option<ZrwaLimits>,
    /// Whether each zone has a ZRWA allocated.
    zrwa: Vec<bool>,
    /// Zones with a ZRWA allocated.
    zrwas: u32,
}

/// What a write the state machine allowed does ([`Zones::before_write`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Write {
    /// Programs the page at the write pointer.
    AtPointer,
    /// Lands in the zone's ZRWA, after committing `flush` pages from the
    /// write pointer (an implicit flush; 0 for none).
    Zrwa { flush: u32 },
}

impl Zones {
    /// `zones` empty zones of `capacity` writable pages; limits of 0 are none.
    #[cfg(test)]
    pub(super) fn new(zones: u32, capacity: u32, max_open: u32, max_active: u32) -> Self {
        Self::with_zrwa(zones, capacity, max_open, max_active, capacity, None)
    }

    /// As [`Zones::new`], zones of `size` pages, with ZRWAs under `rules`.
    pub(super) fn with_zrwa(
        zones: u32,
        capacity: u32,
        max_open: u32,
        max_active: u32,
        size: u32,
        rules: Option<ZrwaLimits>,
    ) -> Self {
        Zones {
            size,
            rules,
            zrwa: vec![false; zones as usize],
            zrwas: 0,
            state: vec![ZoneState::Empty; zones as usize],
            written: vec![0; zones as usize],
            capacity,
            max_open: if max_open == 0 { u32::MAX } else { max_open },
            max_active: if max_active == 0 { u32::MAX } else { max_active },
            open: 0,
            active: 0,
            implicit: VecDeque::new(),
        }
    }

    pub(super) fn len(&self) -> u32 {
        self.state.len() as u32
    }

    pub(super) fn state(&self, z: u32) -> ZoneState {
        self.state[z as usize]
    }

    /// Pages written to zone `z` (those that hold data, for a full zone).
    pub(super) fn written(&self, z: u32) -> u32 {
        self.written[z as usize]
    }

    /// Zones holding open resources, and active ones.
    pub(super) fn counts(&self) -> (u32, u32) {
        (self.open, self.active)
    }

    /// Sets zone `z` as recovery found it (with `written` pages of data),
    /// taking the resources its state holds.
    pub(super) fn restore(&mut self, z: u32, state: ZoneState, written: u32) {
        self.set(z, state);
        self.written[z as usize] = written;
        self.release_zrwa(z);
    }

    /// Gives zone `z` a ZRWA again (recovery found flushed pages of it).
    pub(super) fn restore_zrwa(&mut self, z: u32) {
        if !self.zrwa[z as usize] {
            self.zrwa[z as usize] = true;
            self.zrwas += 1;
        }
    }

    /// Whether zone `z` has a ZRWA allocated.
    pub(super) fn has_zrwa(&self, z: u32) -> bool {
        self.zrwa[z as usize]
    }

    /// Zones with a ZRWA allocated.
    pub(super) fn zrwa_count(&self) -> u32 {
        self.zrwas
    }

    fn release_zrwa(&mut self, z: u32) {
        if std::mem::take(&mut self.zrwa[z as usize]) {
            self.zrwas -= 1;
        }
    }

    fn error(&self, z: u32, status: ZoneStatus, message: String) -> ZoneError {
        ZoneError { zone: z, status, message }
    }

    /// Moves zone `z` to `to`, keeping the resource counts.
    fn set(&mut self, z: u32, to: ZoneState) {
        let from = self.state[z as usize];
        if from == ZoneState::ImplicitlyOpened {
            self.implicit.retain(|&i| i != z);
        }
        self.open = self.open + u32::from(to.is_open()) - u32::from(from.is_open());
        self.active = self.active + u32::from(to.is_active()) - u32::from(from.is_active());
        if to == ZoneState::ImplicitlyOpened {
            self.implicit.push_back(z);
        }
        self.state[z as usize] = to;
    }

    /// Takes the resources zone `z` needs to become open (`to`).
    fn open_as(&mut self, z: u32, to: ZoneState) -> Result<(), ZoneError> {
        let from = self.state(z);
        if !from.is_active() && self.active >= self.max_active {
            return Err(self.error(
                z,
                ZoneStatus::TooManyActive,
                format!(
                    "{} of {} zones are active (open or closed): finish or reset one, then open this one",
                    self.active, self.max_active
                ),
            ));
        }
        if !from.is_open() && self.open >= self.max_open {
            match self.implicit.front().copied() {
                Some(victim) => self.set(victim, ZoneState::Closed),
                None => {
                    return Err(self.error(
                        z,
                        ZoneStatus::TooManyOpen,
                        format!(
                            "{} of {} zones are explicitly open: close or finish one, then open this one",
                            self.open, self.max_open
                        ),
                    ))
                }
            }
        }
        self.set(z, to);
        Ok(())
    }

    /// Checks a write of page `page` (relative to the zone's start) of zone
    /// `z` and opens the zone if it must be; the write then happens and
    /// [`Zones::wrote`] (or, into a ZRWA, [`Zones::committed`] for the pages
    /// its implicit flush commits) records it.
    pub(super) fn before_write(&mut self, z: u32, page: u32) -> Result<Write, ZoneError> {
        let state = self.state(z);
        let wp = self.written(z);
        let refuse = |status, what: &str| Err(self.error(z, status, what.to_string()));
        match state {
            ZoneState::Full => return refuse(ZoneStatus::Full, "is full: reset it before writing it again"),
            ZoneState::ReadOnly => {
                return refuse(ZoneStatus::ReadOnly, "is read-only: its data can be read, not written")
            }
            ZoneState::Offline => return refuse(ZoneStatus::Offline, "is offline: it can be neither read nor written"),
            _ => {}
        }
        if page >= self.capacity {
            return Err(self.error(
                z,
                ZoneStatus::Boundary,
                format!("page {page} of the zone is past its capacity of {} pages: write below it", self.capacity),
            ));
        }
        if let (true, Some(r)) = (self.has_zrwa(z), self.rules) {
            if page < wp || page - wp >= 2 * r.size {
                return Err(self.error(
                    z,
                    ZoneStatus::InvalidWrite,
                    format!(
                        "a write at page {page} of the zone, whose write pointer is at page {wp} with a ZRWA of {} \
                         pages: write at pages {wp} to {} (past page {}, the write pointer moves on)",
                        r.size,
                        wp + 2 * r.size - 1,
                        wp + r.size - 1
                    ),
                ));
            }
            self.open_implicitly(z)?;
            let past = (page + 1).saturating_sub(wp + r.size);
            return Ok(Write::Zrwa { flush: past.div_ceil(r.flush_granularity) * r.flush_granularity });
        }
        if page != wp {
            return Err(self.error(
                z,
                ZoneStatus::InvalidWrite,
                format!(
                    "a write at page {page} of the zone, whose write pointer is at page {wp}: write at the write \
                     pointer, or use zone append"
                ),
            ));
        }
        self.open_implicitly(z)?;
        Ok(Write::AtPointer)
    }

    /// Opens zone `z` implicitly unless it is open.
    pub(super) fn open_implicitly(&mut self, z: u32) -> Result<(), ZoneError> {
        if !self.state(z).is_open() {
            self.open_as(z, ZoneState::ImplicitlyOpened)?;
        }
        Ok(())
    }

    /// Records a page written at zone `z`'s write pointer; the zone is full
    /// when it reaches the capacity.
    pub(super) fn wrote(&mut self, z: u32) {
        self.committed(z, 1);
    }

    /// Records `pages` committed at zone `z`'s write pointer (written, or
    /// flushed from its ZRWA); the zone is full, its ZRWA freed, when it
    /// reaches the capacity.
    pub(super) fn committed(&mut self, z: u32, pages: u32) {
        self.written[z as usize] += pages;
        if self.written(z) >= self.capacity {
            self.release_zrwa(z);
            self.set(z, ZoneState::Full);
        }
    }

    /// Checks an explicit ZRWA flush of zone `z` up to (device-wide) page
    /// `upto`; returns the pages it commits.
    fn check_flush(&self, z: u32, upto: u32) -> Result<u32, ZoneError> {
        let (start, wp) = (z * self.size, self.written(z));
        let size = self.rules.map_or(0, |r| r.size);
        let fg = self.rules.map_or(1, |r| r.flush_granularity);
        let end = (wp + size).min(self.capacity);
        let rel = upto.checked_sub(start).filter(|&r| r > wp && r <= end);
        let Some(rel) = rel else {
            return Err(self.error(
                z,
                ZoneStatus::Boundary,
                format!(
                    "flush-zrwa up to page {upto}: the zone's ZRWA spans pages {} to {}; give a page from {} to {} \
                     (the write pointer moves there)",
                    start + wp,
                    start + end - 1,
                    start + wp + 1,
                    start + end
                ),
            ));
        };
        if !(rel - wp).is_multiple_of(fg) && rel != self.capacity {
            return Err(self.error(
                z,
                ZoneStatus::InvalidField,
                format!(
                    "flush-zrwa up to page {upto} commits {} pages, not a multiple of the flush granularity of {fg} \
                     pages: give the write pointer ({}) plus a multiple of {fg}",
                    rel - wp,
                    start + wp
                ),
            ));
        }
        Ok(rel - wp)
    }

    /// Checks an explicit ZRWA flush of zone `z` up to `upto` and opens the
    /// zone if it must be (a flush is a write); returns the pages to commit,
    /// which the device then commits ([`Zones::committed`]).
    pub(super) fn before_flush(&mut self, z: u32, upto: u32) -> Result<u32, ZoneError> {
        let pages = self.check_flush(z, upto)?;
        self.open_implicitly(z)?;
        Ok(pages)
    }

    /// Checks `action` on zone `z`: `Ok(true)` if it changes the zone (then
    /// the device does its work and calls [`Zones::apply`]), `Ok(false)` if it
    /// is a no-op.
    pub(super) fn check(&self, z: u32, action: ZoneAction) -> Result<bool, ZoneError> {
        use ZoneState::*;
        let state = self.state(z);
        if matches!(action, ZoneAction::OpenZrwa | ZoneAction::FlushZrwa { .. }) && self.rules.is_none() {
            return Err(self.error(
                z,
                ZoneStatus::InvalidZoneOperation,
                format!(
                    "{} on a device with no zone random write area: configure one with ftl.zrwa_pages (and \
                     ftl.zrwa_flush_granularity), or use open and block writes at the write pointer",
                    action.name()
                ),
            ));
        }
        let allowed = match action {
            ZoneAction::OpenZrwa => match state {
                ExplicitlyOpened if self.has_zrwa(z) => return Ok(false),
                Empty | ImplicitlyOpened | ExplicitlyOpened | Closed => true,
                _ => false,
            },
            ZoneAction::FlushZrwa { upto } => match state {
                ImplicitlyOpened | ExplicitlyOpened | Closed | Full if self.has_zrwa(z) => {
                    if state == Full {
                        return Err(self.error(
                            z,
                            ZoneStatus::Full,
                            "is full: its ZRWA can no longer be flushed".into(),
                        ));
                    }
                    self.check_flush(z, upto)?;
                    true
                }
                ReadOnly | Offline => false,
                _ => {
                    return Err(self.error(
                        z,
                        ZoneStatus::InvalidField,
                        format!("flush-zrwa on a zone that is {state:?} with no ZRWA: open it with open-zrwa first"),
                    ))
                }
            },
            ZoneAction::Open => match state {
                ExplicitlyOpened => return Ok(false),
                Empty | ImplicitlyOpened | Closed => true,
                _ => false,
            },
            ZoneAction::Close => match state {
                Closed => return Ok(false),
                ImplicitlyOpened | ExplicitlyOpened => true,
                _ => false,
            },
            ZoneAction::Finish => match state {
                Full => return Ok(false),
                Empty | ImplicitlyOpened | ExplicitlyOpened | Closed => true,
                _ => false,
            },
            ZoneAction::Reset => match state {
                Empty => return Ok(false),
                ImplicitlyOpened | ExplicitlyOpened | Closed | Full => true,
                _ => false,
            },
            ZoneAction::Offline => match state {
                Offline => return Ok(false),
                ReadOnly => true,
                _ => false,
            },
        };
        if allowed {
            return Ok(true);
        }
        let status = match state {
            ReadOnly => ZoneStatus::ReadOnly,
            Offline => ZoneStatus::Offline,
            _ => ZoneStatus::InvalidTransition,
        };
        Err(self.error(z, status, format!("{} is not a transition of a zone that is {state:?}", action.name())))
    }

    /// Makes the transition of `action` that [`Zones::check`] allowed.
    pub(super) fn apply(&mut self, z: u32, action: ZoneAction) -> Result<(), ZoneError> {
        match action {
            ZoneAction::Open => self.open_as(z, ZoneState::ExplicitlyOpened)?,
            ZoneAction::OpenZrwa => {
                if !self.has_zrwa(z) {
                    let r = self.rules.unwrap_or(ZrwaLimits { size: 0, flush_granularity: 1, max_zones: 0 });
                    if !self.written(z).is_multiple_of(r.flush_granularity) {
                        return Err(self.error(
                            z,
                            ZoneStatus::ZrwaUnavailable,
                            format!(
                                "open-zrwa with the write pointer at page {} of the zone, not a multiple of the flush \
                                 granularity of {} pages: write up to the next multiple first",
                                self.written(z),
                                r.flush_granularity
                            ),
                        ));
                    }
                    if self.zrwas >= r.max_zones {
                        return Err(self.error(
                            z,
                            ZoneStatus::ZrwaUnavailable,
                            format!(
                                "{} of {} zones have a ZRWA: finish or reset one, then open this one with a ZRWA",
                                self.zrwas, r.max_zones
                            ),
                        ));
                    }
                }
                self.open_as(z, ZoneState::ExplicitlyOpened)?;
                self.restore_zrwa(z);
            }
            ZoneAction::FlushZrwa { .. } => {}
            ZoneAction::Close => {
                let to = if self.written(z) == 0 && !self.has_zrwa(z) { ZoneState::Empty } else { ZoneState::Closed };
                self.set(z, to);
            }
            ZoneAction::Finish => {
                self.release_zrwa(z);
                self.set(z, ZoneState::Full);
            }
            ZoneAction::Reset => {
                self.release_zrwa(z);
                self.set(z, ZoneState::Empty);
                self.written[z as usize] = 0;
            }
            ZoneAction::Offline => {
                self.release_zrwa(z);
                self.set(z, ZoneState::Offline);
                self.written[z as usize] = 0;
            }
        }
        Ok(())
    }

    /// A media failure: zone `z` becomes read-only.
    pub(super) fn fail(&mut self, z: u32) {
        if self.state(z) != ZoneState::Offline {
            self.set(z, ZoneState::ReadOnly);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn status<T: std::fmt::Debug>(r: Result<T, ZoneError>) -> ZoneStatus {
        r.unwrap_err().status
    }

    #[test]
    fn writes_open_implicitly_fill_and_refuse_what_the_specification_refuses() {
        let mut z = Zones::new(4, 3, 0, 0);
        assert_eq!(status(z.before_write(0, 1)), ZoneStatus::InvalidWrite);
        assert_eq!(status(z.before_write(0, 3)), ZoneStatus::Boundary);
        assert_eq!(z.state(0), ZoneState::Empty, "a refused write changes nothing");
        for page in 0..3 {
            z.before_write(0, page).unwrap();
            assert_eq!(z.state(0), ZoneState::ImplicitlyOpened);
            z.wrote(0);
        }
        assert_eq!((z.state(0), z.written(0), z.counts()), (ZoneState::Full, 3, (0, 0)));
        assert_eq!(status(z.before_write(0, 3)), ZoneStatus::Full);
        z.fail(1);
        assert_eq!(status(z.before_write(1, 0)), ZoneStatus::ReadOnly);
        z.apply(1, ZoneAction::Offline).unwrap();
        assert_eq!(status(z.before_write(1, 0)), ZoneStatus::Offline);
    }

    #[test]
    fn every_action_from_every_state_is_allowed_a_no_op_or_refused_as_the_specification_says() {
        use ZoneState::*;
        let states = [Empty, ImplicitlyOpened, ExplicitlyOpened, Closed, Full, ReadOnly, Offline];
        let actions = [ZoneAction::Open, ZoneAction::Close, ZoneAction::Finish, ZoneAction::Reset, ZoneAction::Offline];
        // (from, action) -> Some(to) allowed, None a no-op, Err(status).
        let expect = |from: ZoneState, a: ZoneAction| -> Result<Option<ZoneState>, ZoneStatus> {
            match (a, from) {
                (ZoneAction::Open, ExplicitlyOpened) | (ZoneAction::Close, Closed) => Ok(None),
                (ZoneAction::Finish, Full) | (ZoneAction::Reset, Empty) | (ZoneAction::Offline, Offline) => Ok(None),
                (ZoneAction::Open, Empty | ImplicitlyOpened | Closed) => Ok(Some(ExplicitlyOpened)),
                (ZoneAction::Close, ImplicitlyOpened | ExplicitlyOpened) => Ok(Some(Closed)),
                (ZoneAction::Finish, Empty | ImplicitlyOpened | ExplicitlyOpened | Closed) => Ok(Some(Full)),
                (ZoneAction::Reset, ImplicitlyOpened | ExplicitlyOpened | Closed | Full) => Ok(Some(Empty)),
                (ZoneAction::Offline, ReadOnly) => Ok(Some(Offline)),
                (_, ReadOnly) => Err(ZoneStatus::ReadOnly),
                (_, Offline) => Err(ZoneStatus::Offline),
                _ => Err(ZoneStatus::InvalidTransition),
            }
        };
        for from in states {
            for a in actions {
                let mut z = Zones::new(2, 4, 0, 0);
                match from {
                    Empty => {}
                    ReadOnly => z.fail(0),
                    Offline => {
                        z.fail(0);
                        z.apply(0, ZoneAction::Offline).unwrap();
                    }
                    _ => {
                        z.before_write(0, 0).unwrap();
                        z.wrote(0);
                        match from {
                            ExplicitlyOpened => z.apply(0, ZoneAction::Open).unwrap(),
                            Closed => z.apply(0, ZoneAction::Close).unwrap(),
                            Full => z.apply(0, ZoneAction::Finish).unwrap(),
                            _ => {}
                        }
                    }
                }
                assert_eq!(z.state(0), from);
                let got = z.check(0, a).map_err(|e| e.status).and_then(|changes| {
                    if !changes {
                        return Ok(None);
                    }
                    z.apply(0, a).map_err(|e| e.status)?;
                    Ok(Some(z.state(0)))
                });
                assert_eq!(got, expect(from, a), "{a:?} from {from:?}");
                let (open, active) = z.counts();
                assert_eq!(open, u32::from(z.state(0).is_open()), "{a:?} from {from:?}");
                assert_eq!(active, u32::from(z.state(0).is_active()), "{a:?} from {from:?}");
            }
        }
        // Closing an open zone with nothing written empties it.
        let mut z = Zones::new(1, 4, 0, 0);
        z.apply(0, ZoneAction::Open).unwrap();
        z.apply(0, ZoneAction::Close).unwrap();
        assert_eq!((z.state(0), z.counts()), (Empty, (0, 0)));
    }

    #[test]
    fn limits_close_the_first_implicitly_opened_zone_and_refuse_beyond_them() {
        let mut z = Zones::new(6, 8, 2, 3);
        let write = |z: &mut Zones, zone| {
            let page = z.written(zone);
            z.before_write(zone, page).map(|_| z.wrote(zone))
        };
        write(&mut z, 0).unwrap();
        write(&mut z, 1).unwrap();
        // A third open zone: zone 0, opened first, is closed for it.
        write(&mut z, 2).unwrap();
        assert_eq!(
            (z.state(0), z.state(1), z.state(2)),
            (ZoneState::Closed, ZoneState::ImplicitlyOpened, ZoneState::ImplicitlyOpened)
        );
        assert_eq!(z.counts(), (2, 3));
        // A fourth active zone is refused, and nothing changes.
        assert_eq!(status(write(&mut z, 3)), ZoneStatus::TooManyActive);
        assert_eq!(z.state(3), ZoneState::Empty);
        // Explicitly opened zones are never closed for room.
        z.apply(1, ZoneAction::Open).unwrap();
        z.apply(2, ZoneAction::Open).unwrap();
        assert_eq!(status(write(&mut z, 0)), ZoneStatus::TooManyOpen);
        assert_eq!(status(z.apply(0, ZoneAction::Open)), ZoneStatus::TooManyOpen);
        // Finishing one frees an open and an active resource.
        z.apply(1, ZoneAction::Finish).unwrap();
        write(&mut z, 0).unwrap();
        assert_eq!(z.counts(), (2, 2));
        // Zone 0, implicitly opened again, is closed for zone 4.
        write(&mut z, 4).unwrap();
        assert_eq!((z.state(0), z.state(4), z.counts()), (ZoneState::Closed, ZoneState::ImplicitlyOpened, (2, 3)));
    }

    #[test]
    fn a_zrwa_takes_writes_in_its_window_and_flushes_by_whole_granules() {
        let rules = ZrwaLimits { size: 4, flush_granularity: 2, max_zones: 1 };
        let mut z = Zones::with_zrwa(3, 12, 0, 0, 16, Some(rules));
        z.check(0, ZoneAction::OpenZrwa).unwrap();
        z.apply(0, ZoneAction::OpenZrwa).unwrap();
        assert!(z.has_zrwa(0) && z.state(0) == ZoneState::ExplicitlyOpened);
        assert_eq!(z.before_write(0, 3), Ok(Write::Zrwa { flush: 0 }));
        assert_eq!(z.before_write(0, 1), Ok(Write::Zrwa { flush: 0 }));
        // One past the window: one granule; three past: two.
        assert_eq!(z.before_write(0, 4), Ok(Write::Zrwa { flush: 2 }));
        assert_eq!(z.before_write(0, 6), Ok(Write::Zrwa { flush: 4 }));
        assert_eq!(status(z.before_write(0, 8)), ZoneStatus::InvalidWrite);
        z.committed(0, 2);
        assert_eq!(status(z.before_write(0, 1)), ZoneStatus::InvalidWrite, "below the write pointer");
        // Explicit flushes: within the window, by granules.
        assert_eq!(status(z.check(0, ZoneAction::FlushZrwa { upto: 3 })), ZoneStatus::InvalidField);
        assert_eq!(status(z.check(0, ZoneAction::FlushZrwa { upto: 8 })), ZoneStatus::Boundary);
        assert_eq!(z.before_flush(0, 6), Ok(4));
        // One ZRWA resource; a zone without a ZRWA has nothing to flush.
        assert_eq!(status(z.apply(1, ZoneAction::OpenZrwa)), ZoneStatus::ZrwaUnavailable);
        assert_eq!(status(z.check(1, ZoneAction::FlushZrwa { upto: 17 })), ZoneStatus::InvalidField);
        // Close keeps it; the commit that fills the capacity frees it.
        z.apply(0, ZoneAction::Close).unwrap();
        assert!(z.has_zrwa(0) && z.state(0) == ZoneState::Closed);
        z.committed(0, 10);
        assert_eq!((z.state(0), z.has_zrwa(0), z.zrwa_count()), (ZoneState::Full, false, 0));
        z.apply(1, ZoneAction::OpenZrwa).unwrap();
        // No ZRWA configured: Invalid Zone Operation Request.
        let none = Zones::new(2, 8, 0, 0);
        assert_eq!(status(none.check(0, ZoneAction::OpenZrwa)), ZoneStatus::InvalidZoneOperation);
    }
}
