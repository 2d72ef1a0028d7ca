//! The conformance suite of Flexible Data Placement devices, exported with
//! the `testing` feature like [`crate::conformance`] (which an FDP device
//! passes as any FTL: data, utilization, power cuts): what FDP adds, checked
//! through the device's commands and its medium only, so that an FDP device
//! written elsewhere runs it the same way. [`fdp_suite`] runs every check.
//!
//! The device under test takes a write's placement handle from its hint's
//! stream ([`crate::Hint::stream`]; none: handle 0), reports the FDP
//! statistics per handle as the curves `fdp_host_pages_by_handle` and
//! `fdp_media_pages_by_handle` and keeps each page's handle in its OOB tag.
//!
//! - [`handles_apart`]: host writes through different handles never share an
//!   erase block (checked on the medium, by the tags of every programmed
//!   page, before any garbage collection); with `persistently` isolated
//!   handles, never, garbage collection included;
//! - [`statistics`]: each handle's host pages are the writes acknowledged
//!   through it, its media pages at least those, and the media pages over
//!   all handles the flash programs;
//! - [`invalid_handles`]: a write through a handle past the last is refused
//!   (an invalid-command error) and changes nothing: the page reads what it
//!   held, no statistic moves;
//! - [`power_cuts_keep_handles`]: random writes through random handles,
//!   trims and cuts: after recovery every page reads its last acknowledged
//!   data (or data written later), and the newest copy of each page on the
//!   medium carries the handle of the write that wrote it;
//! - [`groups_and_units`] (run by [`fdp_suite_grouped`], for a device of
//!   several reclaim groups or reclaim units of several blocks): units hold
//!   one placement identifier's host data, every page stays in the group its
//!   identifier names, garbage collection included, and units are erased
//!   whole.
//!
//! With reclaim groups, the device under test takes placement identifier
//! `group * handles + handle`, its groups are equal runs of consecutive dies
//! and a reclaim unit is the blocks at one index of `unit_blocks`
//! consecutive dies of its group.
#![allow(clippy::unwrap_used, clippy::missing_panics_doc)]

use std::collections::HashMap;

use ftlab_nand::{BlockId, Geometry, Nand, PageKind, Payload, SimTime};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::conformance::nand_config;
use crate::{ErrorKind, Flash, Ftl, FtlBuilder, Hint, Lpn};

/// Every check of the suite on `builder` (an FDP device of `handles`
/// handles, `persistently` isolated or not) over `geometry`.
pub fn fdp_suite(builder: &dyn FtlBuilder, geometry: Geometry, handles: u32, persistently: bool) {
    handles_apart(builder, geometry, handles, persistently);
    statistics(builder, geometry, handles);
    invalid_handles(builder, geometry, handles);
    for seed in 0..4 {
        power_cuts_keep_handles(builder, geometry, handles, seed);
    }
    statistics_survive_power_cuts(builder, geometry, handles);
}

/// Every check of [`fdp_suite`] over the device's `groups * handles`
/// placement identifiers, then [`groups_and_units`].
pub fn fdp_suite_grouped(
    builder: &dyn FtlBuilder,
    geometry: Geometry,
    handles: u32,
    groups: u32,
    unit_blocks: u32,
    persistently: bool,
) {
    let pids = handles * groups;
    handles_apart(builder, geometry, pids, persistently);
    statistics_grouped(builder, geometry, handles, groups);
    invalid_handles(builder, geometry, pids);
    for seed in 0..4 {
        power_cuts_keep_handles(builder, geometry, pids, seed);
    }
    statistics_survive_power_cuts(builder, geometry, pids);
    groups_and_units(builder, geometry, handles, groups, unit_blocks);
}

/// Host writes of every placement identifier, interleaved page by page, fill
/// half the device: every reclaim unit holds one identifier's data. Then
/// random overwrites, each logical page through random handles of one group,
/// garbage collection running: the newest copy of every page is on a die of
/// the group its last identifier names, and every unit's blocks have been
/// erased equally often (units are reclaimed whole).
pub fn groups_and_units(builder: &dyn FtlBuilder, geometry: Geometry, handles: u32, groups: u32, unit_blocks: u32) {
    let mut b = Bench::new(builder, geometry, 9);
    let n = b.ftl.logical_pages();
    let g = geometry;
    let die_blocks = g.planes_per_die * g.blocks_per_plane;
    let group_dies = g.dies() / groups;
    let unit_of = |blk: u32| ((blk / die_blocks) / unit_blocks, blk % die_blocks);
    // Every identifier in turn, page by page, each page in group `lpn % groups`.
    let first_pid = |lpn: u32| (lpn % groups) * handles + (lpn / groups) % handles;
    let tags_by_unit = |b: &Bench| {
        let mut units: HashMap<(u32, u32), Vec<u8>> = HashMap::new();
        for (blk, tags) in b.tags_by_block() {
            units.entry(unit_of(blk.0)).or_default().extend(tags);
        }
        units
    };
    for lpn in 0..n / 2 {
        b.write(lpn, u64::from(lpn) + 1, Some(first_pid(lpn))).unwrap();
    }
    for (unit, tags) in tags_by_unit(&b) {
        assert!(
            tags.iter().all(|&t| t == tags[0]),
            "reclaim unit {unit:?} (slot, index) holds host data of several placement identifiers: {tags:?}"
        );
    }
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut pid_of: Vec<u32> = (0..n).map(first_pid).collect();
    for lpn in n / 2..n {
        b.write(lpn, u64::from(lpn) + 1, Some(first_pid(lpn))).unwrap();
    }
    // Each logical page keeps to one group (a host partitioning its data
    // over the groups, as each group holds only its share), any handle.
    for i in 0..u64::from(n) * 3 {
        let lpn = rng.gen_range(0..n);
        let pid = (lpn % groups) * handles + rng.gen_range(0..handles);
        b.write(lpn, u64::from(n) + i + 1, Some(pid)).unwrap();
        pid_of[lpn as usize] = pid;
    }
    assert!(b.flash.counters().page_copies() > 0, "no garbage collection ran: the check saw none");
    // The newest copy of each page, by the medium's sequence numbers, is on a
    // die of the group of the identifier it was last written through.
    let nand = b.flash.nand();
    let mut newest: HashMap<u32, (u64, u32)> = HashMap::new();
    for blk in 0..g.total_blocks() {
        for p in 0..g.pages_per_block {
            let Some(oob) = nand.peek_oob(g.ppa(BlockId(blk), p)).filter(|o| o.kind == PageKind::Data) else {
                continue;
            };
            if newest.get(&oob.lpn).is_none_or(|&(seq, _)| oob.seq > seq) {
                newest.insert(oob.lpn, (oob.seq, blk));
            }
        }
    }
    for (lpn, (_, blk)) in newest {
        let (group, pid) = (blk / die_blocks / group_dies, pid_of[lpn as usize]);
        assert_eq!(
            pid / handles,
            group,
            "lpn {lpn}, last written through placement identifier {pid} (group {}), is in block {blk} of group \
             {group}",
            pid / handles
        );
    }
    let mut erases: HashMap<(u32, u32), Vec<u32>> = HashMap::new();
    for blk in 0..g.total_blocks() {
        erases.entry(unit_of(blk)).or_default().push(nand.erase_count(BlockId(blk)));
    }
    assert!(erases.values().flatten().any(|&e| e > 0), "no unit was erased: the check saw none");
    for (unit, counts) in erases {
        assert!(
            counts.iter().all(|&c| c == counts[0]),
            "reclaim unit {unit:?} (slot, index): its blocks were erased {counts:?} times: not reclaimed whole"
        );
    }
    b.ftl.check_invariants(&b.flash).unwrap();
}

/// The FDP statistics and event log persist as of the last FLUSH, as a
/// drive's FDP log pages do: writes through every handle, FLUSH, then
/// random overwrites (garbage collection erasing blocks, the one holding the
/// flushed record among them) and a cut long after: after recovery each
/// handle's host pages are at least what they were at the FLUSH (and at
/// most what was written), and the Media Reallocated events logged before
/// the FLUSH are still in the log. A cut right after a second FLUSH keeps
/// the statistics exactly.
pub fn statistics_survive_power_cuts(builder: &dyn FtlBuilder, geometry: Geometry, handles: u32) {
    let mut b = Bench::new(builder, geometry, 4);
    let n = b.ftl.logical_pages();
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let flush = |b: &mut Bench| {
        let mut io = b.flash.io(b.now);
        b.ftl.flush(&mut io).unwrap();
        let done = io.completion();
        b.now = b.now.max(done);
        done
    };
    let cut_and_recover = |b: &mut Bench, at: SimTime| {
        b.flash.power_cut(at);
        let mut io = b.flash.io(at);
        b.ftl = builder.recover(&mut io).unwrap();
        b.now = io.last_finish().max(at);
    };
    for i in 0..u64::from(n) * 2 {
        let lpn = if i < u64::from(n) { i as u32 } else { rng.gen_range(0..n) };
        b.write(lpn, i + 1, Some(rng.gen_range(0..handles))).unwrap();
    }
    assert!(b.flash.counters().page_copies() > 0, "no garbage collection ran before the flush");
    let reallocated = |b: &Bench| b.curve("fdp_event_type").iter().filter(|&&t| t == 128.0).count();
    let before = reallocated(&b);
    assert!(before > 0, "garbage collection ran and no Media Reallocated event was logged");
    flush(&mut b);
    let flushed = b.curve("fdp_host_pages_by_handle");
    let erases = b.flash.counters().erases.total();
    for i in 0..u64::from(n) * 3 {
        let lpn = rng.gen_range(0..n);
        b.write(lpn, u64::from(n) * 2 + i + 1, Some(rng.gen_range(0..handles))).unwrap();
    }
    assert!(
        b.flash.counters().erases.total() > erases + u64::from(geometry.total_blocks()),
        "too few erases after the flush to have collected every block"
    );
    let written = b.curve("fdp_host_pages_by_handle");
    let at = SimTime(b.now.0 + 1_000_000_000);
    cut_and_recover(&mut b, at);
    let got = b.curve("fdp_host_pages_by_handle");
    for h in 0..handles as usize {
        assert!(
            flushed[h] <= got[h] && got[h] <= written[h],
            "handle {h}: {} host pages after the cut, {} at the flush and {} written: the FDP statistics did not \
             persist as of the flush",
            got[h],
            flushed[h],
            written[h]
        );
    }
    assert!(reallocated(&b) > 0, "the event log was lost in the cut");
    for i in 0..u64::from(n) {
        let lpn = rng.gen_range(0..n);
        b.write(lpn, u64::from(n) * 6 + i + 1, Some(rng.gen_range(0..handles))).unwrap();
    }
    let done = flush(&mut b);
    let exact = b.curve("fdp_host_pages_by_handle");
    cut_and_recover(&mut b, done);
    assert_eq!(b.curve("fdp_host_pages_by_handle"), exact, "a cut right after a flush changed the statistics");
    b.ftl.check_invariants(&b.flash).unwrap();
}

/// A device under test: its flash, the FTL, the clock.
struct Bench {
    flash: Flash,
    ftl: Box<dyn Ftl>,
    now: SimTime,
}

impl Bench {
    fn new(builder: &dyn FtlBuilder, geometry: Geometry, seed: u64) -> Self {
        let mut flash = Flash::new(Nand::new(&nand_config(geometry, 0.0, seed)).unwrap());
        let ftl = builder.format(&mut flash.io(SimTime::ZERO)).unwrap();
        Bench { flash, ftl, now: SimTime::ZERO }
    }

    fn write(&mut self, lpn: u32, token: u64, handle: Option<u32>) -> Result<SimTime, crate::FtlError> {
        let mut io = self.flash.io(self.now);
        let hint = Hint { stream: handle, ..Hint::default() };
        self.ftl.write(&mut io, Lpn(lpn), Payload::Token(token), &hint)?;
        let done = io.completion();
        self.now += SimTime::from_us(50);
        Ok(done)
    }

    fn read(&mut self, lpn: u32) -> Option<u64> {
        let mut io = self.flash.io(self.now);
        match self.ftl.read(&mut io, Lpn(lpn)).unwrap() {
            Some(Payload::Token(t)) => Some(t),
            None => None,
            Some(other) => panic!("lpn {lpn}: read {other:?}, written as tokens"),
        }
    }

    fn curve(&self, name: &str) -> Vec<f64> {
        self.ftl
            .curves()
            .into_iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("the device reports no curve `{name}`"))
            .1
    }

    /// Per block of the medium, the handles (OOB tags) of its programmed data
    /// pages.
    fn tags_by_block(&self) -> HashMap<BlockId, Vec<u8>> {
        let nand = self.flash.nand();
        let g = *nand.geometry();
        let mut out: HashMap<BlockId, Vec<u8>> = HashMap::new();
        for b in 0..g.total_blocks() {
            for p in 0..g.pages_per_block {
                let ppa = g.ppa(BlockId(b), p);
                if let Some(oob) = nand.peek_oob(ppa).filter(|o| o.kind == PageKind::Data) {
                    out.entry(BlockId(b)).or_default().push(oob.tag);
                }
            }
        }
        out
    }
}

fn assert_blocks_single_handle(bench: &Bench, what: &str) {
    for (block, tags) in bench.tags_by_block() {
        assert!(
            tags.iter().all(|&t| t == tags[0]),
            "{what}: block {} holds pages of handles {:?}: data of different handles shares an erase block",
            block.0,
            {
                let mut t = tags.clone();
                t.sort_unstable();
                t.dedup();
                t
            }
        );
    }
}

/// Host writes of every handle, interleaved page by page, fill half the
/// device once (no garbage collection yet): no block holds two handles'
/// data. With `persistently` isolated handles the device is then
/// overwritten at random through the same handles, garbage collection
/// running, and still no block holds two.
pub fn handles_apart(builder: &dyn FtlBuilder, geometry: Geometry, handles: u32, persistently: bool) {
    let mut b = Bench::new(builder, geometry, 1);
    let n = b.ftl.logical_pages();
    for lpn in 0..n / 2 {
        b.write(lpn, u64::from(lpn) + 1, Some(lpn % handles)).unwrap();
    }
    assert_blocks_single_handle(&b, "interleaved host writes of every handle");
    if persistently {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for lpn in n / 2..n {
            b.write(lpn, u64::from(lpn) + 1, Some(lpn % handles)).unwrap();
        }
        for i in 0..u64::from(n) * 3 {
            let lpn = rng.gen_range(0..n);
            b.write(lpn, u64::from(n) + i + 1, Some(lpn % handles)).unwrap();
        }
        assert!(b.flash.counters().page_copies() > 0, "no garbage collection ran: the check saw none");
        assert_blocks_single_handle(&b, "persistently isolated handles after garbage collection");
    }
    b.ftl.check_invariants(&b.flash).unwrap();
}

/// Random overwrites through random handles (and none: handle 0), garbage
/// collection running: each handle's host pages are exactly the writes
/// acknowledged through it; media pages are at least the host pages per
/// handle and, over all handles, the flash programs.
pub fn statistics(builder: &dyn FtlBuilder, geometry: Geometry, handles: u32) {
    statistics_grouped(builder, geometry, handles, 1);
}

/// [`statistics`] on a device of `groups` reclaim groups of `handles`
/// handles: a write without an identifier goes to handle 0 of a group the
/// device picks, so handle 0's host pages are checked summed over the groups.
pub fn statistics_grouped(builder: &dyn FtlBuilder, geometry: Geometry, handles: u32, groups: u32) {
    let fold = |v: &[f64]| -> Vec<f64> {
        let mut v = v.to_vec();
        let zero: f64 = (0..groups).map(|g| v[(g * handles) as usize]).sum();
        (0..groups).for_each(|g| v[(g * handles) as usize] = 0.0);
        v[0] = zero;
        v
    };
    let handles = handles * groups;
    let mut b = Bench::new(builder, geometry, 2);
    let n = b.ftl.logical_pages();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut written = vec![0f64; handles as usize];
    for i in 0..u64::from(n) * 4 {
        let lpn = if i < u64::from(n) { i as u32 } else { rng.gen_range(0..n) };
        let handle = rng.gen_range(0..=handles);
        let stream = (handle < handles).then_some(handle);
        b.write(lpn, i + 1, stream).unwrap();
        written[stream.unwrap_or(0) as usize] += 1.0;
    }
    let (host, media) = (b.curve("fdp_host_pages_by_handle"), b.curve("fdp_media_pages_by_handle"));
    assert_eq!(fold(&host), fold(&written), "host pages per handle against the writes acknowledged through each");
    for h in 0..handles as usize {
        assert!(media[h] >= host[h], "handle {h}: {} media pages under {} host pages", media[h], host[h]);
    }
    let programs = b.flash.counters().programs.total() as f64;
    assert!(b.flash.counters().page_copies() > 0, "no garbage collection ran: the media pages were not tried");
    assert_eq!(media.iter().sum::<f64>(), programs, "media pages over all handles against the flash programs");
}

/// A write through a handle past the last is refused as an invalid command
/// and changes nothing.
pub fn invalid_handles(builder: &dyn FtlBuilder, geometry: Geometry, handles: u32) {
    let mut b = Bench::new(builder, geometry, 3);
    b.write(7, 1, Some(0)).unwrap();
    let before = (b.curve("fdp_host_pages_by_handle"), b.flash.counters().programs.total());
    for bad in [handles, handles + 1, u32::MAX] {
        let e = b.write(7, 99, Some(bad)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid, "handle {bad}: {e}");
    }
    assert_eq!(b.read(7), Some(1), "a refused write changed the page");
    assert_eq!((b.curve("fdp_host_pages_by_handle"), b.flash.counters().programs.total()), before);
}

/// Random writes through random handles and trims, cut at random instants:
/// after recovery every page reads its last acknowledged data or data
/// written after it, and the newest copy of each page on the medium carries
/// the handle of the write that put its data there.
pub fn power_cuts_keep_handles(builder: &dyn FtlBuilder, geometry: Geometry, handles: u32, seed: u64) {
    let mut b = Bench::new(builder, geometry, seed);
    let n = b.ftl.logical_pages();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Per page, every write since its last acknowledged one: (token, handle,
    // acknowledged at); a trim clears it.
    let mut model: HashMap<u32, Vec<(u64, u8, SimTime)>> = HashMap::new();
    let mut handle_of: HashMap<u64, u8> = HashMap::new();
    // Pages trimmed since the last cut (a trim need not survive one: such a
    // page may read any data it ever held, or nothing), and what each held.
    let mut trimmed: std::collections::HashSet<u32> = std::collections::HashSet::new();
    let mut ever: HashMap<u32, Vec<u64>> = HashMap::new();
    let mut token = 0u64;
    for round in 0..3 {
        let ops = if round == 0 { n as usize * 2 } else { rng.gen_range(200..2000) };
        for _ in 0..ops {
            let lpn = rng.gen_range(0..n);
            if rng.gen_range(0..20) == 0 {
                let mut io = b.flash.io(b.now);
                b.ftl.trim(&mut io, Lpn(lpn)).unwrap();
                model.remove(&lpn);
                trimmed.insert(lpn);
                continue;
            }
            token += 1;
            let h = rng.gen_range(0..handles);
            let done = b.write(lpn, token, Some(h)).unwrap();
            model.entry(lpn).or_default().push((token, h as u8, done));
            ever.entry(lpn).or_default().push(token);
            handle_of.insert(token, h as u8);
        }
        // Somewhere amid the operations still in flight.
        let cut = SimTime(b.now.0 + rng.gen_range(0..3_000_000));
        b.flash.power_cut(cut);
        let mut io = b.flash.io(cut);
        b.ftl = builder.recover(&mut io).unwrap();
        b.now = io.last_finish().max(cut);
        // A page trimmed since the last cut may read anything it ever held.
        for lpn in std::mem::take(&mut trimmed) {
            let got = b.read(lpn);
            let held = ever.get(&lpn).cloned().unwrap_or_default();
            assert!(got.is_none_or(|t| held.contains(&t)), "lpn {lpn}: read token {got:?}, never written there");
            match got {
                Some(t) => {
                    model.insert(lpn, vec![(t, handle_of[&t], SimTime::ZERO)]);
                }
                None => {
                    model.remove(&lpn);
                }
            }
        }
        // What each page may read: its last write acknowledged by the cut, or
        // any later one.
        for (lpn, writes) in &mut model {
            let acked = writes.iter().rposition(|w| w.2 <= cut);
            let allowed: Vec<u64> = match acked {
                Some(i) => writes[i..].iter().map(|w| w.0).collect(),
                None => writes.iter().map(|w| w.0).collect(),
            };
            let got = b.read(*lpn);
            match (acked, got) {
                (Some(_), Some(t)) | (None, Some(t)) => {
                    assert!(allowed.contains(&t), "lpn {lpn}: read token {t} after the cut, allowed {allowed:?}")
                }
                (Some(i), None) => panic!("lpn {lpn}: lost its acknowledged token {} in the cut", writes[i].0),
                (None, None) => {}
            }
            // From now on the page holds what it read.
            writes.retain(|w| Some(w.0) == got);
            if let Some(w) = writes.first_mut() {
                w.2 = SimTime::ZERO;
            }
        }
        model.retain(|_, w| !w.is_empty());
        // The newest copy of each page carries its writer's handle.
        let nand = b.flash.nand();
        let g = *nand.geometry();
        let mut newest: HashMap<u32, (u64, u8, u64)> = HashMap::new();
        for blk in 0..g.total_blocks() {
            for p in 0..g.pages_per_block {
                let ppa = g.ppa(BlockId(blk), p);
                let Some(oob) = nand.peek_oob(ppa).filter(|o| o.kind == PageKind::Data) else { continue };
                if newest.get(&oob.lpn).is_none_or(|&(seq, _, _)| oob.seq > seq) {
                    let t = match nand.read_untimed(ppa) {
                        Ok((Payload::Token(t), _)) => t,
                        _ => continue,
                    };
                    newest.insert(oob.lpn, (oob.seq, oob.tag, t));
                }
            }
        }
        for (lpn, writes) in &model {
            let Some(&(_, tag, t)) = newest.get(lpn) else { continue };
            if writes.iter().any(|w| w.0 == t) {
                assert_eq!(Some(&tag), handle_of.get(&t), "lpn {lpn}: its newest copy's handle is not its writer's");
            }
        }
        b.ftl.check_invariants(&b.flash).unwrap();
    }
}
