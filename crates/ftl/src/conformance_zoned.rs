//! The conformance suite of zoned devices ([`crate::Zoned`]), exported with the
//! `testing` feature like [`crate::conformance`], so that a zoned device
//! written in another crate runs it the same way: [`zoned_suite`] runs every
//! check on a builder.
//!
//! The checks:
//!
//! - [`state_machine`]: every zone management action from every state a host
//!   can reach (empty, implicitly and explicitly opened, closed, full, and
//!   read-only by an injected program failure, then offline) against ZNS 1.1's
//!   transitions and statuses, through the device; writes off the write
//!   pointer, past the capacity and to a full zone refused; a full zone reset
//!   and written again from its start, its old data gone;
//! - [`limits`]: with the device's open and active limits, the
//!   implicitly opened zone opened first closed for room, explicitly opened
//!   zones never, and Too Many Open / Active Zones beyond them;
//! - [`appends_in_order`]: appends to several zones issued at one instant
//!   (queue depth above 1), back to back to one zone and taking turns
//!   between zones: each returns its zone's write pointer, no two
//!   the same page, each page reads back its own data, the write pointers
//!   move on by the appends, and a zone's appends are acknowledged in order;
//! - [`power_cuts`]: random appends, writes, finishes, resets, opens and
//!   closes over the zones, cut at random instants amid them, then
//!   recovery: every acknowledged write reads back, the write pointer is at
//!   least the acknowledged writes and at most those issued, every page below
//!   it holds what was written there, nothing past it reads, an acknowledged
//!   finish or reset holds, and no zone comes back open;
//! - [`deterministic`]: same seed, same completions and counters;
//! - [`zrwa::semantics`] and [`zrwa::power_cuts`], on a device with Zone
//!   Random Write Areas ([`Zoned::zrwa`]): writes and overwrites in the
//!   window, implicit and explicit flushes, appends refused, the resource
//!   limit, close, finish and reset; and a power cut at every step of a
//!   small scenario, after which every flushed or committed page reads back
//!   its newest data. On a device without ZRWAs, the ZRWA actions are
//!   refused as NVMe refuses them.
//!
//! On a medium that keeps bytes ([`crate::conformance::use_store`] with
//! `StoreKind::Bytes`) every write and append carries a whole page of bytes
//! made from its token, and every read checks the page byte for byte before
//! it returns the token: [`zoned_suite_on_bytes`].
#![allow(clippy::unwrap_used, clippy::missing_panics_doc)]

use ftlab_nand::{Geometry, Nand, Payload, SimTime, StoreKind};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::conformance::nand_config;
use crate::{Flash, Ftl, FtlBuilder, FtlError, Hint, Lpn, ZoneAction, ZoneState, ZoneStatus, Zoned};

pub mod zrwa;

/// Every check of the suite on `builder` over `geometry`.
pub fn zoned_suite(builder: &dyn FtlBuilder, geometry: Geometry) {
    state_machine(builder, geometry);
    limits(builder, geometry);
    appends_in_order(builder, geometry);
    for seed in 0..3 {
        power_cuts(builder, geometry, seed);
    }
    deterministic(builder, geometry);
    zrwa::semantics(builder, geometry);
    zrwa::power_cuts(builder, geometry);
}

/// [`zoned_suite`] on media that keep every page's bytes: the same checks,
/// each page written as bytes and read back compared byte for byte. Sets
/// this thread's store ([`crate::conformance::use_store`]) and restores
/// tokens after.
pub fn zoned_suite_on_bytes(builder: &dyn FtlBuilder, geometry: Geometry) {
    crate::conformance::use_store(StoreKind::Bytes);
    zoned_suite(builder, geometry);
    crate::conformance::use_store(StoreKind::Token);
}

/// The page that carries `token` on a medium that keeps bytes: its eight
/// bytes, then the page offset they start at, over and over.
fn page_bytes(token: u64, page_size: u32) -> Vec<u8> {
    let mut page = Vec::with_capacity(page_size as usize);
    let mut at = 0u64;
    while page.len() < page_size as usize {
        let word = if at.is_multiple_of(2) { token } else { token ^ (at * 8) };
        page.extend_from_slice(&word.to_le_bytes());
        at += 1;
    }
    page.truncate(page_size as usize);
    page
}

/// A zoned device on a fresh medium, and a clock.
#[allow(missing_debug_implementations)]
pub struct ZonedHarness<'b> {
    pub builder: &'b dyn FtlBuilder,
    pub flash: Flash,
    pub ftl: Box<dyn Ftl>,
    pub now: SimTime,
    next_token: u64,
    /// Every completion, in order (for determinism checks).
    pub completions: Vec<u64>,
}

impl<'b> ZonedHarness<'b> {
    pub fn new(builder: &'b dyn FtlBuilder, geometry: Geometry, seed: u64) -> Self {
        let mut flash = Flash::new(Nand::new(&nand_config(geometry, 0.0, seed)).unwrap());
        let ftl = builder.format(&mut flash.io(SimTime::ZERO)).unwrap();
        let mut h = ZonedHarness { builder, flash, ftl, now: SimTime::ZERO, next_token: 1, completions: Vec::new() };
        assert!(h.zoned().zones() > 0, "{} has no zone", h.ftl.name());
        h
    }

    /// The device's zone commands.
    pub fn zoned(&mut self) -> &mut dyn Zoned {
        let name = self.ftl.name();
        match self.ftl.extension() {
            crate::Extension::Zoned(z) => z,
            other => panic!("{name} speaks {} commands, not zoned ones", other.name()),
        }
    }

    fn token(&mut self) -> u64 {
        self.next_token += 1;
        self.next_token
    }

    /// What a write of `token` carries: the token, or on a medium that keeps
    /// bytes a whole page made from it ([`page_bytes`]).
    fn payload(&self, token: u64) -> Payload {
        let nand = self.flash.nand();
        match nand.store_kind() {
            StoreKind::Bytes => Payload::Bytes(page_bytes(token, nand.geometry().page_size).into()),
            _ => Payload::Token(token),
        }
    }

    /// The token a page read back carries; a page of bytes must be the whole
    /// page its first eight bytes name.
    fn token_of(&self, page: Payload) -> u64 {
        let bytes = self.flash.nand().store_kind() == StoreKind::Bytes;
        match page {
            Payload::Token(t) => {
                assert!(!bytes, "{}: a medium that keeps bytes returned token {t}", self.ftl.name());
                t
            }
            Payload::Bytes(b) => {
                assert!(bytes, "{}: a medium that keeps tokens returned bytes", self.ftl.name());
                if b.iter().all(|&x| x == 0) {
                    // A page of zeros: a hole a ZRWA flush committed.
                    return 0;
                }
                let token = u64::from_le_bytes(b[..8].try_into().unwrap());
                let want = page_bytes(token, self.flash.nand().geometry().page_size);
                assert!(*b == *want, "{}: a page of token {token} came back with other bytes in it", self.ftl.name());
                token
            }
        }
    }

    fn done(&mut self, done: SimTime) -> SimTime {
        self.completions.push(done.as_ns());
        done
    }

    /// Appends a fresh token to `zone`: the page it went to, the token and
    /// when it was acknowledged.
    pub fn append(&mut self, zone: u32) -> Result<(Lpn, u64, SimTime), FtlError> {
        let token = self.token();
        let data = self.payload(token);
        let mut io = self.flash.io(self.now);
        let lpn = match self.ftl.extension() {
            crate::Extension::Zoned(z) => z.append(&mut io, zone, data, None)?,
            _ => unreachable!(),
        };
        let done = io.completion();
        Ok((lpn, token, self.done(done)))
    }

    /// Writes a fresh token at `lpn`.
    pub fn write(&mut self, lpn: u32) -> Result<(u64, SimTime), FtlError> {
        let token = self.token();
        let data = self.payload(token);
        let mut io = self.flash.io(self.now);
        self.ftl.write(&mut io, Lpn(lpn), data, &Hint::default())?;
        let done = io.completion();
        Ok((token, self.done(done)))
    }

    pub fn read(&mut self, lpn: u32) -> Result<Option<u64>, FtlError> {
        let mut io = self.flash.io(self.now);
        let got = self.ftl.read(&mut io, Lpn(lpn))?;
        let done = io.completion();
        self.done(done);
        Ok(got.map(|p| self.token_of(p)))
    }

    /// Flushes the device ([`Ftl::flush`]); returns when it was acknowledged.
    pub fn flush(&mut self) -> Result<SimTime, FtlError> {
        let mut io = self.flash.io(self.now);
        self.ftl.flush(&mut io)?;
        let done = io.completion();
        Ok(self.done(done).max(self.now))
    }

    /// Runs `action` on `zone`; returns when it was acknowledged.
    pub fn manage(&mut self, zone: u32, action: ZoneAction) -> Result<SimTime, FtlError> {
        let mut io = self.flash.io(self.now);
        match self.ftl.extension() {
            crate::Extension::Zoned(z) => z.manage(&mut io, zone, action)?,
            _ => unreachable!(),
        }
        let done = io.completion();
        Ok(self.done(done).max(self.now))
    }

    pub fn state(&mut self, zone: u32) -> ZoneState {
        self.zoned().zone(zone).unwrap().state
    }

    /// Pages written to `zone` (its write pointer less its start).
    pub fn written(&mut self, zone: u32) -> u32 {
        let d = self.zoned().zone(zone).unwrap();
        d.write_pointer - d.start
    }

    pub fn start(&mut self, zone: u32) -> u32 {
        self.zoned().zone(zone).unwrap().start
    }

    pub fn advance(&mut self, ns: u64) {
        self.now = SimTime(self.now.0 + ns);
    }

    /// Cuts power at `t` and rebuilds the device from the medium.
    pub fn cut_and_recover(&mut self, t: SimTime) {
        self.flash.power_cut(t);
        let mut io = self.flash.io(t);
        self.ftl = self.builder.recover(&mut io).unwrap();
        self.now = io.last_finish().max(t);
        self.ftl.check_invariants(&self.flash).unwrap();
    }
}

/// The zone status of `r`'s error.
pub(crate) fn status<T: std::fmt::Debug>(r: Result<T, FtlError>) -> ZoneStatus {
    match r {
        Err(FtlError::Zone(z)) => z.status,
        other => panic!("expected a zone error, got {other:?}"),
    }
}

/// Every action from every reachable state; writes refused as ZNS refuses
/// them; a full zone reset and rewritten.
pub fn state_machine(builder: &dyn FtlBuilder, geometry: Geometry) {
    use ZoneState::*;
    let mut h = ZonedHarness::new(builder, geometry, 1);
    let (size, cap) = (h.zoned().zone_size(), h.zoned().zone_capacity());
    assert!(cap >= 2 && cap <= size, "capacity {cap}, size {size}");
    for z in 0..h.zoned().zones() {
        let d = h.zoned().zone(z).unwrap();
        assert_eq!((d.start, d.capacity, d.write_pointer, d.state), (z * size, cap, z * size, Empty), "zone {z}");
    }
    let zones = h.zoned().zones();
    assert!(matches!(h.zoned().zone(zones), Err(FtlError::BadCommand(_))), "a zone past the last is refused");

    // Writes off the write pointer, past the capacity, to a full zone.
    assert_eq!(status(h.write(1)), ZoneStatus::InvalidWrite);
    if cap < size {
        assert_eq!(status(h.write(cap)), ZoneStatus::Boundary);
    }
    assert_eq!(h.state(0), Empty, "a refused write changes nothing");
    let mut tokens = Vec::new();
    for i in 0..cap {
        tokens.push(h.write(i).unwrap().0);
        h.advance(1_000_000);
    }
    assert_eq!((h.state(0), h.written(0)), (Full, cap));
    assert_eq!(status(h.write(cap - 1)), ZoneStatus::Full);
    assert_eq!(status(h.append(0)), ZoneStatus::Full);
    for (i, &t) in tokens.iter().enumerate() {
        assert_eq!(h.read(i as u32).unwrap(), Some(t), "page {i}");
    }
    h.manage(0, ZoneAction::Reset).unwrap();
    h.advance(10_000_000);
    assert_eq!((h.state(0), h.written(0), h.read(0).unwrap()), (Empty, 0, None));
    let (lpn, t, _) = h.append(0).unwrap();
    assert_eq!((lpn, h.read(0).unwrap()), (Lpn(0), Some(t)), "a reset zone is written from its start");

    // Every action from every state a host reaches, each on a zone of its own.
    let actions = [ZoneAction::Open, ZoneAction::Close, ZoneAction::Finish, ZoneAction::Reset, ZoneAction::Offline];
    let expect = |from: ZoneState, a: ZoneAction| -> Result<ZoneState, ZoneStatus> {
        match (a, from) {
            (ZoneAction::Open, Empty | ImplicitlyOpened | Closed | ExplicitlyOpened) => Ok(ExplicitlyOpened),
            (ZoneAction::Close, ImplicitlyOpened | ExplicitlyOpened | Closed) => Ok(Closed),
            (ZoneAction::Finish, Empty | ImplicitlyOpened | ExplicitlyOpened | Closed | Full) => Ok(Full),
            (ZoneAction::Reset, Empty | ImplicitlyOpened | ExplicitlyOpened | Closed | Full) => Ok(Empty),
            (ZoneAction::Offline, ReadOnly | Offline) => Ok(Offline),
            (_, ReadOnly) => Err(ZoneStatus::ReadOnly),
            (_, Offline) => Err(ZoneStatus::Offline),
            _ => Err(ZoneStatus::InvalidTransition),
        }
    };
    let mut zone = 1;
    for from in [Empty, ImplicitlyOpened, ExplicitlyOpened, Closed, Full, ReadOnly, Offline] {
        for a in actions {
            if zone >= zones {
                let mut fresh = ZonedHarness::new(builder, geometry, 1);
                std::mem::swap(&mut h, &mut fresh);
                zone = 0;
            }
            let z = zone;
            zone += 1;
            let start = h.start(z);
            let mut data = None;
            match from {
                Empty => {}
                ReadOnly | Offline => {
                    data = Some(h.append(z).unwrap().1);
                    h.flash.fail_program_in(1);
                    assert!(h.append(z).is_err(), "an injected program failure fails the write");
                    if from == Offline {
                        h.manage(z, ZoneAction::Offline).unwrap();
                    }
                }
                _ => {
                    data = Some(h.append(z).unwrap().1);
                    match from {
                        ExplicitlyOpened => drop(h.manage(z, ZoneAction::Open).unwrap()),
                        Closed => drop(h.manage(z, ZoneAction::Close).unwrap()),
                        Full => drop(h.manage(z, ZoneAction::Finish).unwrap()),
                        _ => {}
                    }
                }
            }
            assert_eq!(h.state(z), from, "zone {z} set up as {from:?}");
            h.advance(10_000_000);
            let got = h.manage(z, a).map(|_| h.state(z)).map_err(|e| status::<()>(Err(e)));
            assert_eq!(got, expect(from, a), "{a:?} on a zone that is {from:?}");
            h.advance(10_000_000);
            // What the zone holds afterwards.
            match h.state(z) {
                Empty => assert_eq!((h.written(z), h.read(start).unwrap()), (0, None), "{a:?} from {from:?}"),
                Offline => assert_eq!(status(h.read(start)), ZoneStatus::Offline),
                _ => assert_eq!(h.read(start).unwrap(), data, "{a:?} from {from:?}: the zone's data"),
            }
            if h.state(z) == Full && h.written(z) < h.zoned().zone_capacity() {
                let past = start + h.written(z);
                assert_eq!(h.read(past).unwrap(), None, "past a finished zone's data");
            }
            // Free its resources for the next zones (a device may limit them).
            if h.state(z).is_active() {
                h.manage(z, ZoneAction::Reset).unwrap();
                h.advance(10_000_000);
            }
        }
    }
    h.ftl.check_invariants(&h.flash).unwrap();
}

/// The open and active limits, if the device has them.
pub fn limits(builder: &dyn FtlBuilder, geometry: Geometry) {
    let mut h = ZonedHarness::new(builder, geometry, 2);
    let (max_open, max_active, zones) = (h.zoned().max_open(), h.zoned().max_active(), h.zoned().zones());
    if max_open == 0 && max_active == 0 {
        // No limits: every zone opens at once.
        for z in 0..zones {
            h.append(z).unwrap();
        }
        assert!((0..zones).all(|z| h.state(z) == ZoneState::ImplicitlyOpened));
        return;
    }
    let active = if max_active == 0 { zones } else { max_active.min(zones) };
    let open = if max_open == 0 { active } else { max_open.min(active) };
    assert!(active < zones, "the suite needs more zones ({zones}) than active ones ({active})");
    // Writes open zones implicitly up to the open limit, then close the first
    // opened for each next one, up to the active limit.
    for z in 0..active {
        h.append(z).unwrap();
        h.advance(1_000_000);
    }
    let closed = active - open;
    for z in 0..active {
        let want = if z < closed { ZoneState::Closed } else { ZoneState::ImplicitlyOpened };
        assert_eq!(h.state(z), want, "zone {z} of {active} written, {open} may be open");
    }
    assert_eq!(status(h.append(active)), ZoneStatus::TooManyActive);
    assert_eq!(status(h.manage(active, ZoneAction::Open)), ZoneStatus::TooManyActive);
    assert_eq!(h.state(active), ZoneState::Empty);
    // Explicitly opened zones are never closed for room.
    for z in closed..active {
        h.manage(z, ZoneAction::Open).unwrap();
    }
    if closed > 0 {
        assert_eq!(status(h.append(0)), ZoneStatus::TooManyOpen);
        assert_eq!(status(h.manage(0, ZoneAction::Open)), ZoneStatus::TooManyOpen);
        assert_eq!(h.state(0), ZoneState::Closed);
    }
    // Finishing an open zone frees both its resources.
    h.manage(active - 1, ZoneAction::Finish).unwrap();
    h.advance(10_000_000);
    h.append(active).unwrap();
    assert_eq!(h.state(active), ZoneState::ImplicitlyOpened);
    h.ftl.check_invariants(&h.flash).unwrap();
}

/// Appends to several zones at one instant, round after round.
pub fn appends_in_order(builder: &dyn FtlBuilder, geometry: Geometry) {
    let mut h = ZonedHarness::new(builder, geometry, 3);
    let zones = h.zoned().zones().min(4);
    let per_zone = h.zoned().zone_capacity().min(24);
    let mut seen = std::collections::HashMap::new();
    let mut last_ack = vec![SimTime::ZERO; zones as usize];
    for round in 0..per_zone.div_ceil(4) {
        // Four appends to each zone, all issued at this instant: two back
        // to back, then two taking turns with the other zones.
        let order = (0..zones).flat_map(|z| [z, z]).chain((0..2).flat_map(|_| 0..zones));
        for z in order {
            {
                if h.written(z) == per_zone {
                    continue;
                }
                let wp = h.zoned().zone(z).unwrap().write_pointer;
                let (lpn, token, acked) = h.append(z).unwrap();
                assert_eq!(lpn.0, wp, "round {round}: zone {z}'s append went to {lpn:?}, its write pointer was {wp}");
                assert!(seen.insert(lpn.0, token).is_none(), "two appends returned page {}", lpn.0);
                assert!(acked >= last_ack[z as usize], "zone {z}: an append acknowledged before an earlier one");
                last_ack[z as usize] = acked;
                assert_eq!(h.zoned().zone(z).unwrap().write_pointer, wp + 1);
            }
        }
        h.advance(5_000_000);
    }
    for (&lpn, &token) in &seen {
        assert_eq!(h.read(lpn).unwrap(), Some(token), "page {lpn}: an append's data");
    }
    h.ftl.check_invariants(&h.flash).unwrap();
}

/// What the host knows of a zone since its last reset: the pages written in
/// order with when each was acknowledged, and a finish.
#[derive(Debug, Clone, Default)]
struct ZoneModel {
    pages: Vec<(u64, SimTime)>,
    finished: Option<SimTime>,
    /// A reset issued, acknowledged at this time, and the zone before it.
    reset: Option<(SimTime, Box<ZoneModel>)>,
}

/// Random zone commands cut by power losses.
pub fn power_cuts(builder: &dyn FtlBuilder, geometry: Geometry, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut h = ZonedHarness::new(builder, geometry, seed);
    let zones = h.zoned().zones();
    let cap = h.zoned().zone_capacity();
    let mut model = vec![ZoneModel::default(); zones as usize];
    for _ in 0..4 {
        for _ in 0..rng.gen_range(100..600) {
            let z = rng.gen_range(0..zones);
            let m = &mut model[z as usize];
            let r = match rng.gen_range(0..20) {
                0..=12 => h.append(z).map(|(lpn, token, at)| {
                    assert_eq!(lpn.0 - h.start(z), m.pages.len() as u32);
                    m.pages.push((token, at));
                }),
                13..=14 => {
                    let lpn = h.zoned().zone(z).unwrap().write_pointer;
                    h.write(lpn).map(|(token, at)| m.pages.push((token, at)))
                }
                15 => h.manage(z, ZoneAction::Finish).map(|at| m.finished = m.finished.or(Some(at))),
                16 => h.manage(z, ZoneAction::Reset).map(|at| {
                    let before = std::mem::take(m);
                    m.reset = Some((at, Box::new(before)));
                }),
                17 => h.manage(z, ZoneAction::Open).map(drop),
                18 => h.manage(z, ZoneAction::Close).map(drop),
                _ => {
                    let lpn = h.start(z) + rng.gen_range(0..cap);
                    h.read(lpn).map(drop)
                }
            };
            match r {
                Ok(()) => {}
                // A command the zone's state or the limits refuse (a random
                // close of an empty zone, an append to a full one).
                Err(FtlError::Zone(e)) => assert!(
                    matches!(
                        e.status,
                        ZoneStatus::Full
                            | ZoneStatus::TooManyActive
                            | ZoneStatus::TooManyOpen
                            | ZoneStatus::InvalidTransition
                    ),
                    "{e}"
                ),
                Err(e) => panic!("zone {z}: {e}"),
            }
            h.advance(rng.gen_range(0..400_000));
        }
        let t = SimTime(h.now.0 + rng.gen_range(0..4_000_000));
        h.cut_and_recover(t);
        for z in 0..zones {
            let m = std::mem::take(&mut model[z as usize]);
            let start = h.start(z);
            let d = h.zoned().zone(z).unwrap();
            let written = d.write_pointer - start;
            assert!(!d.state.is_open(), "zone {z} came back {:?}", d.state);
            // The zone as the last reset left it, or, if that reset was not
            // acknowledged by the cut, possibly as it was before it.
            let candidates: Vec<&ZoneModel> = match &m.reset {
                Some((at, before)) if *at > t => vec![&m, before],
                _ => vec![&m],
            };
            let mut pages = Vec::new();
            for i in 0..written {
                pages.push(h.read(start + i).unwrap());
            }
            let past = if written < cap { h.read(start + written).unwrap() } else { None };
            let fits = |c: &ZoneModel| {
                let acked = c.pages.iter().take_while(|p| p.1 <= t).count() as u32;
                acked <= written
                    && written as usize <= c.pages.len()
                    && pages.iter().zip(&c.pages).all(|(got, want)| *got == Some(want.0))
                    && past.is_none()
                    && (c.finished.is_none_or(|f| f > t) || d.state == ZoneState::Full)
            };
            assert!(
                candidates.iter().any(|c| fits(c)),
                "zone {z} after a cut at {t}: {:?} with {written} pages {pages:?}; issued {:?}",
                d.state,
                candidates
            );
            // What recovery found is what the zone holds now.
            let now = ZoneModel {
                pages: pages.iter().map(|p| (p.unwrap(), SimTime::ZERO)).collect(),
                finished: (d.state == ZoneState::Full).then_some(SimTime::ZERO),
                reset: None,
            };
            model[z as usize] = now;
        }
        h.advance(1_000_000);
    }
}

/// Same seed, same completions and counters.
pub fn deterministic(builder: &dyn FtlBuilder, geometry: Geometry) {
    let run = || {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut h = ZonedHarness::new(builder, geometry, 7);
        let zones = h.zoned().zones();
        for _ in 0..500 {
            let z = rng.gen_range(0..zones);
            if rng.gen_range(0..10) == 0 {
                let _ = h.manage(z, ZoneAction::Reset);
            } else {
                let _ = h.append(z);
            }
            h.advance(rng.gen_range(0..200_000));
        }
        (*h.flash.counters(), h.completions)
    };
    let (a, b) = (run(), run());
    assert_eq!(a.0, b.0);
    assert_eq!(a.1, b.1);
}
