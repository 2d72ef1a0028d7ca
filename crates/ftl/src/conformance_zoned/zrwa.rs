//! The Zone Random Write Area part of the zoned suite (TP 4076; see
//! [`crate::schemes::host::zns`], "Zone Random Write Area"): [`semantics`]
//! and [`power_cuts`], run by [`super::zoned_suite`]. On a device whose
//! [`crate::Zoned::zrwa`] is `None` both check that the ZRWA actions are refused
//! (Invalid Zone Operation Request) and return.

use std::collections::BTreeMap;

use ftlab_nand::{Geometry, SimTime};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{status, ZonedHarness};
use crate::{FtlBuilder, ZoneAction, ZoneState, ZoneStatus, ZrwaLimits};

/// The device's ZRWA limits, or `None` after checking that a device
/// without ZRWAs refuses their actions.
fn limits(h: &mut ZonedHarness<'_>) -> Option<ZrwaLimits> {
    let limits = h.zoned().zrwa();
    if limits.is_none() {
        assert_eq!(status(h.manage(0, ZoneAction::OpenZrwa)), ZoneStatus::InvalidZoneOperation);
        let upto = h.start(0) + 1;
        assert_eq!(status(h.manage(0, ZoneAction::FlushZrwa { upto })), ZoneStatus::InvalidZoneOperation);
        assert_eq!(h.state(0), ZoneState::Empty, "a refused ZRWA action changes nothing");
    }
    limits
}

/// Checks that every page of `zone` from its start up to `end` reads back
/// what `model` says (pages it lacks: none, or zeros below the write
/// pointer).
fn reads_back(h: &mut ZonedHarness<'_>, zone: u32, model: &BTreeMap<u32, u64>, end: u32, what: &str) {
    let (start, wp) = (h.start(zone), h.written(zone));
    for i in 0..end {
        let want = match model.get(&i) {
            Some(&t) => Some(t),
            None if i < wp => Some(0),
            None => None,
        };
        assert_eq!(h.read(start + i).unwrap(), want, "{what}: page {i} of zone {zone} (write pointer at {wp})");
    }
}

/// Writes a fresh token at page `i` of `zone` and records it.
fn put(h: &mut ZonedHarness<'_>, zone: u32, i: u32, model: &mut BTreeMap<u32, u64>) {
    let start = h.start(zone);
    let (t, _) = h.write(start + i).unwrap_or_else(|e| panic!("a write at page {i} of zone {zone}: {e}"));
    model.insert(i, t);
    h.advance(20_000);
}

/// Writes, overwrites and flushes in the window; the limits; close,
/// finish and reset with a ZRWA.
pub fn semantics(builder: &dyn FtlBuilder, geometry: Geometry) {
    let mut h = ZonedHarness::new(builder, geometry, 11);
    let Some(ZrwaLimits { size: s, flush_granularity: g, max_zones }) = limits(&mut h) else { return };
    let (cap, zones) = (h.zoned().zone_capacity(), h.zoned().zones());
    assert!(s >= 1 && s.is_multiple_of(g) && max_zones >= 1, "ZRWA of {s} pages, granule {g}, {max_zones} zones");
    assert!(cap >= 3 * s, "the suite needs a capacity ({cap}) of three ZRWAs ({s}) at least");
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut model = BTreeMap::new();

    h.manage(0, ZoneAction::OpenZrwa).unwrap();
    let d = h.zoned().zone(0).unwrap();
    assert_eq!((d.state, d.zrwa, d.write_pointer), (ZoneState::ExplicitlyOpened, true, d.start));
    let start = d.start;
    assert_eq!(status(h.append(0)), ZoneStatus::InvalidZoneOperation, "a zone append to a zone with a ZRWA");

    // Random writes and overwrites in the window read back newest; the
    // write pointer stays.
    for _ in 0..4 * s {
        put(&mut h, 0, rng.gen_range(0..s), &mut model);
    }
    assert_eq!(h.written(0), 0, "writes in the ZRWA do not move the write pointer");
    reads_back(&mut h, 0, &model, 2 * s, "overwrites in the ZRWA");
    for i in 0..s {
        if !model.contains_key(&i) {
            put(&mut h, 0, i, &mut model);
        }
    }
    assert_eq!(status(h.write(start + 2 * s)), ZoneStatus::InvalidWrite, "a write twice the ZRWA past the pointer");

    // Explicit flushes: refused off the granule, at the pointer and past the
    // window; then one granule.
    if g > 1 {
        assert_eq!(status(h.manage(0, ZoneAction::FlushZrwa { upto: start + 1 })), ZoneStatus::InvalidField);
    }
    assert_eq!(status(h.manage(0, ZoneAction::FlushZrwa { upto: start })), ZoneStatus::Boundary);
    assert_eq!(status(h.manage(0, ZoneAction::FlushZrwa { upto: start + s + g })), ZoneStatus::Boundary);
    assert_eq!(h.written(0), 0, "a refused flush commits nothing");
    h.manage(0, ZoneAction::FlushZrwa { upto: start + g }).unwrap();
    h.advance(1_000_000);
    assert_eq!(h.written(0), g, "an explicit flush of one granule");
    assert_eq!(status(h.write(start + g - 1)), ZoneStatus::InvalidWrite, "a write below the write pointer");
    reads_back(&mut h, 0, &model, 2 * s, "after an explicit flush");
    // The whole window: its pages never written (past the first ZRWA) are
    // committed as zeros.
    h.manage(0, ZoneAction::FlushZrwa { upto: start + g + s }).unwrap();
    h.advance(1_000_000);
    assert_eq!(h.written(0), g + s, "an explicit flush of the whole ZRWA");
    assert_eq!(h.read(start + s).unwrap(), Some(0), "a hole committed from the ZRWA");
    reads_back(&mut h, 0, &model, 2 * s + g, "after a flush of holes");

    // Implicit flushes: a write k pages past the window moves the pointer by
    // the fewest granules that bring it in.
    for _ in 0..3 {
        let wp = h.written(0);
        for i in wp..wp + s {
            if !model.contains_key(&i) {
                put(&mut h, 0, i, &mut model);
            }
        }
        let k = rng.gen_range(0..s);
        if wp + s + k >= cap {
            break;
        }
        put(&mut h, 0, wp + s + k, &mut model);
        h.advance(1_000_000);
        let moved = (k + 1).div_ceil(g) * g;
        assert_eq!(h.written(0), wp + moved, "a write {k} pages past the ZRWA from write pointer {wp}");
        let end = (h.written(0) + 2 * s).min(cap);
        reads_back(&mut h, 0, &model, end, "after an implicit flush");
    }

    // Close keeps the ZRWA; a write opens the zone again, with it.
    h.manage(0, ZoneAction::Close).unwrap();
    let d = h.zoned().zone(0).unwrap();
    assert_eq!((d.state, d.zrwa), (ZoneState::Closed, true), "close keeps the ZRWA");
    let wp = h.written(0);
    put(&mut h, 0, wp + 1, &mut model);
    let d = h.zoned().zone(0).unwrap();
    assert_eq!((d.state, d.zrwa), (ZoneState::ImplicitlyOpened, true));
    reads_back(&mut h, 0, &model, (wp + 2 * s).min(cap), "after a close");

    // The resource limit.
    let max_open = h.zoned().max_open();
    let room = max_zones + 2 < zones && (max_open == 0 || max_open > max_zones);
    if room {
        for z in 1..max_zones {
            h.manage(z, ZoneAction::OpenZrwa).unwrap();
        }
        let z = max_zones;
        assert_eq!(status(h.manage(z, ZoneAction::OpenZrwa)), ZoneStatus::ZrwaUnavailable, "one ZRWA too many");
        assert_eq!(h.state(z), ZoneState::Empty);
        // An open with a ZRWA at a write pointer off the granule.
        if max_zones > 1 {
            h.manage(1, ZoneAction::Reset).unwrap();
            h.advance(10_000_000);
        } else {
            h.manage(0, ZoneAction::Finish).unwrap();
            h.advance(10_000_000);
        }
        h.append(z).unwrap();
        h.advance(1_000_000);
        if g > 1 {
            assert_eq!(status(h.manage(z, ZoneAction::OpenZrwa)), ZoneStatus::ZrwaUnavailable, "write pointer 1");
            for _ in 1..g {
                h.append(z).unwrap();
            }
            h.advance(1_000_000);
        }
        h.manage(z, ZoneAction::OpenZrwa).unwrap();
        assert!(h.zoned().zone(z).unwrap().zrwa);
        // Reset discards the ZRWA and frees it.
        let zs = h.start(z);
        h.write(zs + g + 1).unwrap();
        h.manage(z, ZoneAction::Reset).unwrap();
        h.advance(10_000_000);
        let d = h.zoned().zone(z).unwrap();
        assert_eq!((d.state, d.zrwa, h.read(zs + g + 1).unwrap()), (ZoneState::Empty, false, None), "after reset");
        h.manage(z, ZoneAction::OpenZrwa).unwrap();
        h.manage(z, ZoneAction::Reset).unwrap();
        h.advance(10_000_000);
    }
    // A flush of a zone with no ZRWA.
    let last = zones - 1;
    h.append(last).unwrap();
    let ls = h.start(last);
    assert_eq!(status(h.manage(last, ZoneAction::FlushZrwa { upto: ls + 1 })), ZoneStatus::InvalidField);

    // Finish commits the ZRWA: every page reads back from the full zone.
    if h.state(0) != ZoneState::Full {
        let wp = h.written(0);
        for i in (wp..(wp + s).min(cap)).step_by(3) {
            put(&mut h, 0, i, &mut model);
        }
        let top = model.keys().max().map_or(0, |&i| i + 1).max(wp);
        h.manage(0, ZoneAction::Finish).unwrap();
        h.advance(10_000_000);
        let d = h.zoned().zone(0).unwrap();
        assert_eq!((d.state, d.zrwa, d.write_pointer), (ZoneState::Full, false, start + top), "finish");
        reads_back(&mut h, 0, &model, cap, "after a finish");
    }
    h.ftl.check_invariants(&h.flash).unwrap();
}

/// One step of a power-cut scenario; offsets are from the zone's write
/// pointer when the step is issued. A step the zone cannot take then (a
/// write to a zone with no ZRWA or past its capacity, a flush past the
/// window) is skipped.
#[derive(Debug, Clone, Copy)]
enum Step {
    OpenZrwa(u32),
    Write(u32, u32),
    /// A flush of the device ([`crate::Ftl::flush`]).
    Flush,
    /// An explicit ZRWA flush of this many granules.
    FlushZrwa(u32, u32),
    Close(u32),
    Finish(u32),
    Reset(u32),
}

/// What the host knows of a zone since its last reset: every value written
/// at each page (in order, with its step), and the write pointers the
/// commits reached.
#[derive(Debug, Clone, Default)]
struct Host {
    values: BTreeMap<u32, Vec<(u64, usize)>>,
    /// (step, acknowledged at, write pointer after it).
    commits: Vec<(usize, SimTime, u32)>,
    finished: Option<SimTime>,
}

/// The fixed scenario on zones 0 and 1.
fn script(s: u32, g: u32, rng: &mut ChaCha8Rng) -> Vec<Step> {
    let mut steps = vec![Step::OpenZrwa(0), Step::OpenZrwa(1)];
    let mut window: Vec<u32> = (0..s).collect();
    window.shuffle(rng);
    steps.extend(window.iter().map(|&i| Step::Write(0, i)));
    steps.extend([Step::Write(1, 0), Step::Write(1, s - 1), Step::Flush]);
    steps.extend((0..3).map(|_| Step::Write(0, rng.gen_range(0..s))));
    steps.extend([Step::Write(1, 1), Step::Flush, Step::Write(0, s + g / 2), Step::Write(0, 0)]);
    steps.extend([Step::FlushZrwa(0, 1), Step::Write(0, s - 1), Step::Flush, Step::Close(1)]);
    steps.extend([Step::Write(1, 2), Step::Write(0, 1), Step::Flush, Step::Finish(1), Step::Write(0, 2)]);
    steps.extend([Step::Write(0, 2 * s - 1), Step::Flush, Step::FlushZrwa(0, s / g)]);
    steps
}

/// A random scenario of `n` steps on `zones` zones: mostly writes in the
/// window and device flushes, some past it, explicit flushes, closes, and
/// resets followed by a new ZRWA; enough flushes to wrap the journal.
fn storm(s: u32, zones: u32, n: usize, rng: &mut ChaCha8Rng) -> Vec<Step> {
    let mut steps: Vec<Step> = (0..zones).map(Step::OpenZrwa).collect();
    while steps.len() < n {
        let z = rng.gen_range(0..zones);
        let next: &[Step] = match rng.gen_range(0..40) {
            0..=19 => &[Step::Write(z, rng.gen_range(0..s))],
            20..=21 => &[Step::Write(z, s + rng.gen_range(0..s))],
            22..=33 => &[Step::Flush],
            34..=35 => &[Step::FlushZrwa(z, 1)],
            36 => &[Step::Close(z)],
            _ => &[Step::Reset(z), Step::OpenZrwa(z)],
        };
        steps.extend_from_slice(next);
    }
    steps
}

/// Runs the steps issued at or before `cut` (all with `None`), recording
/// what the host knows in `host` (one per zone); returns each step's issue
/// and acknowledgement (both the issue for a step skipped).
fn run(h: &mut ZonedHarness<'_>, steps: &[Step], cut: Option<SimTime>, host: &mut [Host]) -> Vec<(SimTime, SimTime)> {
    let limits = h.zoned().zrwa().unwrap();
    let (s, g, cap) = (limits.size, limits.flush_granularity, h.zoned().zone_capacity());
    let mut times = Vec::new();
    for (n, &step) in steps.iter().enumerate() {
        if cut.is_some_and(|t| h.now > t) {
            break;
        }
        let issued = h.now;
        let with_zrwa = |h: &mut ZonedHarness<'_>, z: u32| {
            let d = h.zoned().zone(z).unwrap();
            d.zrwa && d.state != ZoneState::Full
        };
        let acked = match step {
            Step::OpenZrwa(z) if h.state(z) != ZoneState::Full => h.manage(z, ZoneAction::OpenZrwa).unwrap(),
            Step::Close(z) if h.state(z).is_open() => h.manage(z, ZoneAction::Close).unwrap(),
            Step::Write(z, off) if with_zrwa(h, z) && h.written(z) + off < cap => {
                let (start, before) = (h.start(z), h.written(z));
                let (token, at) = h.write(start + before + off).unwrap();
                host[z as usize].values.entry(before + off).or_default().push((token, n));
                let after = h.written(z);
                if after > before {
                    host[z as usize].commits.push((n, at, after));
                }
                at
            }
            Step::Flush => h.flush().unwrap(),
            Step::FlushZrwa(z, k) if with_zrwa(h, z) && h.written(z) + k * g <= cap.min(h.written(z) + s) => {
                let upto = h.start(z) + h.written(z) + k * g;
                let at = h.manage(z, ZoneAction::FlushZrwa { upto }).unwrap();
                let w = h.written(z);
                host[z as usize].commits.push((n, at, w));
                at
            }
            Step::Finish(z) => {
                let at = h.manage(z, ZoneAction::Finish).unwrap();
                let w = h.written(z);
                let m = &mut host[z as usize];
                m.commits.push((n, at, w));
                m.finished = Some(at);
                at
            }
            Step::Reset(z) => {
                let at = h.manage(z, ZoneAction::Reset).unwrap();
                host[z as usize] = Host::default();
                // The next step waits for the reset: a cut amid one is the
                // zoned suite's power_cuts, not this check's.
                h.advance(at.0.saturating_sub(h.now.0));
                at
            }
            _ => issued,
        };
        times.push((issued, acked));
        h.advance(150_000);
    }
    times
}

/// Runs `steps` once, then again from a fresh device for each cut `pick`
/// chooses among the steps' issues, midpoints and acknowledgements (not
/// amid a reset), cutting there: after recovery every page flushed or
/// committed by an acknowledged command reads back its newest data (or a
/// newer one written since), every page at all reads something written
/// there (or nothing, or zeros), the write pointer is at least that of the
/// acknowledged commits and at most the one reached, an acknowledged finish
/// holds, a zone with flushed pages past its write pointer still has its
/// ZRWA, no zone comes back open, and the device takes writes and flushes
/// again.
fn cut_everywhere(
    builder: &dyn FtlBuilder,
    geometry: Geometry,
    steps: &[Step],
    zones: u32,
    pick: &mut dyn FnMut(&[SimTime]) -> Vec<SimTime>,
) {
    let mut h = ZonedHarness::new(builder, geometry, 12);
    let times = run(&mut h, steps, None, &mut vec![Host::default(); zones as usize]);
    let resets: Vec<(SimTime, SimTime)> =
        steps.iter().zip(&times).filter(|(s, _)| matches!(s, Step::Reset(_))).map(|(_, &t)| t).collect();
    let mut cuts: Vec<SimTime> =
        times.iter().flat_map(|&(i, a)| [i, SimTime((i.0 + a.0) / 2), a, SimTime(a.0 + 1)]).collect();
    cuts.retain(|t| !resets.iter().any(|(i, a)| i <= t && t < a));
    cuts.sort();
    cuts.dedup();
    for t in pick(&cuts) {
        let mut h = ZonedHarness::new(builder, geometry, 12);
        let mut host = vec![Host::default(); zones as usize];
        let times = run(&mut h, steps, Some(t), &mut host);
        let reached: Vec<u32> = (0..zones).map(|z| h.written(z)).collect();
        h.cut_and_recover(t);
        // The last device flush acknowledged by the cut.
        let flushed = steps
            .iter()
            .zip(&times)
            .enumerate()
            .filter(|(_, (s, (_, a)))| matches!(s, Step::Flush) && *a <= t)
            .map(|(n, _)| n)
            .max();
        for z in 0..zones {
            let m = &host[z as usize];
            let d = h.zoned().zone(z).unwrap();
            let wp = d.write_pointer - d.start;
            let what = format!("cut at {t}: zone {z} {:?} with its write pointer at {wp}", d.state);
            assert!(!d.state.is_open(), "{what}: came back open");
            let acked_wp = m.commits.iter().filter(|c| c.1 <= t).map(|c| c.2).max().unwrap_or(0);
            assert!(wp >= acked_wp, "{what}: below the acknowledged commits' {acked_wp}");
            assert!(wp <= reached[z as usize], "{what}: past the {} reached", reached[z as usize]);
            if m.finished.is_some_and(|f| f <= t) {
                assert_eq!(d.state, ZoneState::Full, "{what}: an acknowledged finish");
            }
            for (&i, vals) in &m.values {
                // The newest value durable at the cut: written before an
                // acknowledged flush, or committed by an acknowledged step.
                let durable_step = |&&(_, step): &&(u64, usize)| {
                    flushed.is_some_and(|f| step < f) || m.commits.iter().any(|c| c.1 <= t && c.0 >= step && i < c.2)
                };
                let durable = vals.iter().rposition(|v| durable_step(&v));
                let got = h.read(d.start + i).unwrap();
                let ok = match durable {
                    Some(k) => vals[k..].iter().any(|v| got == Some(v.0)),
                    None => got.is_none() || got == Some(0) || vals.iter().any(|v| got == Some(v.0)),
                };
                assert!(ok, "{what}: page {i} read {got:?}; written {vals:?}, durable from {durable:?}");
                if durable.is_some() && i >= wp {
                    assert!(d.zrwa, "{what}: flushed page {i} past the write pointer, and no ZRWA");
                }
            }
        }
        h.ftl.check_invariants(&h.flash).unwrap();
        // The device goes on, and holds through a second cut.
        let revive = || {
            let mut h = ZonedHarness::new(builder, geometry, 12);
            run(&mut h, steps, Some(t), &mut vec![Host::default(); zones as usize]);
            h.cut_and_recover(t);
            h
        };
        second_life(revive, zones, t.0);
    }
}

/// Pages of each zone's ZRWA after a recovery (all durable: recovery
/// restored them from the journal): per zone its write pointer and the
/// window's pages.
type Baseline = Vec<(u32, BTreeMap<u32, Option<u64>>)>;

fn baseline(h: &mut ZonedHarness<'_>, zones: u32) -> Baseline {
    let s = h.zoned().zrwa().unwrap().size;
    let cap = h.zoned().zone_capacity();
    (0..zones)
        .map(|z| {
            let (start, wp) = (h.start(z), h.written(z));
            (wp, (wp..(wp + s).min(cap)).map(|i| (i, h.read(start + i).unwrap())).collect())
        })
        .collect()
}

/// Writes in the ZRWAs a recovery left and device flushes, enough to
/// compact the journal (after a recovery that found either region the
/// active one), issued until `cut`; returns the writes (zone, page, token,
/// step) and each step's issue and acknowledgement, flushes marked.
#[allow(clippy::type_complexity)]
fn life(
    h: &mut ZonedHarness<'_>,
    zones: u32,
    seed: u64,
    cut: Option<SimTime>,
) -> (Vec<(u32, u32, u64, usize)>, Vec<(SimTime, SimTime, bool)>) {
    let s = h.zoned().zrwa().unwrap().size;
    let cap = h.zoned().zone_capacity();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut writes, mut times) = (Vec::new(), Vec::new());
    let open: Vec<u32> =
        (0..zones).filter(|&z| h.zoned().zone(z).unwrap().zrwa && h.state(z) != ZoneState::Full).collect();
    if open.is_empty() {
        return (writes, times);
    }
    for n in 0..120 {
        if cut.is_some_and(|t| h.now > t) {
            break;
        }
        let issued = h.now;
        if n % 2 == 1 {
            let at = h.flush().unwrap();
            times.push((issued, at, true));
        } else {
            let z = open[rng.gen_range(0..open.len())];
            let wp = h.written(z);
            let i = wp + rng.gen_range(0..s.min(cap - wp));
            let start = h.start(z);
            let (token, at) = h.write(start + i).unwrap();
            writes.push((z, i, token, n));
            times.push((issued, at, false));
        }
        h.advance(150_000);
    }
    (writes, times)
}

/// A second life after a first cut (`revive` rebuilds the device as the
/// first recovery left it): writes and flushes in the ZRWAs, cut amid three
/// of the flushes; after each, every page reads its newest flushed data (or
/// a newer one), and no write pointer moved.
fn second_life<'b>(revive: impl Fn() -> ZonedHarness<'b>, zones: u32, seed: u64) {
    let mut h = revive();
    let before = baseline(&mut h, zones);
    let (_, times) = life(&mut h, zones, seed, None);
    let flushes: Vec<(SimTime, SimTime)> = times.iter().filter(|t| t.2).map(|t| (t.0, t.1)).collect();
    if flushes.is_empty() {
        return;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..3 {
        let (i, a) = flushes[rng.gen_range(0..flushes.len())];
        let t = SimTime(i.0 + rng.gen_range(0..=a.0 - i.0));
        let mut h = revive();
        baseline(&mut h, zones);
        let (writes, times) = life(&mut h, zones, seed, Some(t));
        h.cut_and_recover(t);
        let last_flush = times.iter().enumerate().filter(|(_, x)| x.2 && x.1 <= t).map(|(n, _)| n).max();
        for (z, (wp, pages)) in before.iter().enumerate() {
            let z = z as u32;
            let what = format!("a second cut at {t}: zone {z}");
            assert_eq!(h.written(z), *wp, "{what}: its write pointer moved with no commit");
            for (&i, &old) in pages {
                let vals: Vec<(u64, usize)> =
                    writes.iter().filter(|w| w.0 == z && w.1 == i).map(|w| (w.2, w.3)).collect();
                let durable = vals.iter().rposition(|v| last_flush.is_some_and(|f| v.1 < f));
                let start = h.start(z);
                let got = h.read(start + i).unwrap();
                let ok = match durable {
                    Some(k) => vals[k..].iter().any(|v| got == Some(v.0)),
                    None => got == old || vals.iter().any(|v| got == Some(v.0)),
                };
                assert!(
                    ok,
                    "{what}: page {i} read {got:?}; before {old:?}, written {vals:?}, durable from {durable:?}"
                );
            }
        }
        h.ftl.check_invariants(&h.flash).unwrap();
    }
}

/// Power cuts at every step of a small scenario on two zones with ZRWAs
/// (writes, overwrites, device flushes, implicit and explicit ZRWA
/// flushes, close and finish), then at random steps of long random ones
/// that wrap the journal many times (and reset zones); see
/// [`cut_everywhere`] for what each recovery must show.
pub fn power_cuts(builder: &dyn FtlBuilder, geometry: Geometry) {
    let mut h = ZonedHarness::new(builder, geometry, 12);
    let Some(ZrwaLimits { size: s, flush_granularity: g, max_zones }) = limits(&mut h) else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    if max_zones >= 2 {
        let steps = script(s, g, &mut rng);
        cut_everywhere(builder, geometry, &steps, 2, &mut |cuts| cuts.to_vec());
    }
    let zones = max_zones.min(3);
    for _ in 0..3 {
        let steps = storm(s, zones, 400, &mut rng);
        let mut pick = |cuts: &[SimTime]| (0..12).map(|_| cuts[rng.gen_range(0..cuts.len())]).collect();
        cut_everywhere(builder, geometry, &steps, zones, &mut pick);
    }
}
