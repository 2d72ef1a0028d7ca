#![allow(clippy::unwrap_used)]

use ftlab_nand::{Geometry, Payload, SimTime};

use super::*;
use crate::{Flash, Hint, Lpn, Purpose};

pub(crate) fn flash() -> Flash {
    let geometry = Geometry {
        channels: 2,
        ways_per_channel: 1,
        dies_per_way: 2,
        planes_per_die: 2,
        blocks_per_plane: 12,
        pages_per_block: 16,
        page_size: 4096,
        oob_size: 128,
    };
    crate::testing::flash(geometry, 1)
}

fn build(flash: &mut Flash, config: DftlConfig, recover: bool, now: SimTime) -> Dftl {
    config.build(&mut flash.io(now), recover).unwrap()
}

/// Writes `lpn` = token `v` at `*now`, then moves `*now` to its completion.
fn write(ftl: &mut Dftl, flash: &mut Flash, now: &mut SimTime, lpn: u32, v: u64) {
    let mut io = flash.io(*now);
    ftl.write(&mut io, Lpn(lpn), Payload::Token(v), &Hint::default()).unwrap();
    *now = io.completion();
}

fn read(ftl: &mut Dftl, flash: &mut Flash, now: SimTime, lpn: u32) -> Option<Payload> {
    ftl.read(&mut flash.io(now), Lpn(lpn)).unwrap()
}

#[test]
fn misses_read_translation_pages_and_evictions_write_back_in_batches() {
    let mut flash = flash();
    let config = DftlConfig { cmt_entries: 8, ..DftlConfig::default() };
    let mut ftl = build(&mut flash, config, false, SimTime::ZERO);
    let mut now = SimTime::ZERO;
    // 64 logical pages, all in translation page 0 (1024 entries a page).
    for lpn in 0..64 {
        write(&mut ftl, &mut flash, &mut now, lpn, u64::from(lpn) + 1);
    }
    let c = *flash.counters();
    // 56 evictions, but one write-back takes every dirty entry of the page: the
    // first eviction writes 8 entries back, then 8 writes refill the CMT.
    let map_programs = c.programs.get(Purpose::Map);
    assert!((1..=8).contains(&map_programs), "{map_programs} translation-page programs");
    assert_eq!(ftl.cmt().len(), 8);
    for lpn in 0..64 {
        assert_eq!(read(&mut ftl, &mut flash, now, lpn), Some(Payload::Token(u64::from(lpn) + 1)));
    }
    // Each of the 56 evicted entries misses once and reads its translation page.
    let map_reads = flash.counters().reads.get(Purpose::Map) - c.reads.get(Purpose::Map);
    assert!(map_reads >= 56, "{map_reads} translation-page reads");
    ftl.check_invariants(&flash).unwrap();
}

#[test]
fn writes_whose_mapping_was_only_cached_survive_a_power_cut() {
    let mut flash = flash();
    let config = DftlConfig { cmt_entries: 1000, ..DftlConfig::default() };
    let mut ftl = build(&mut flash, config, false, SimTime::ZERO);
    let mut now = SimTime::ZERO;
    for lpn in 0..100 {
        write(&mut ftl, &mut flash, &mut now, lpn, u64::from(lpn) + 7);
    }
    assert_eq!(flash.counters().programs.get(Purpose::Map), 0, "no translation page was ever written");
    flash.power_cut(now);
    let mut ftl = build(&mut flash, config, true, now);
    // The data pages are newer than their (absent) translation page: replayed.
    assert_eq!(ftl.cmt().dirty_len(), 100);
    for lpn in 0..100 {
        assert_eq!(read(&mut ftl, &mut flash, now, lpn), Some(Payload::Token(u64::from(lpn) + 7)));
    }
    ftl.check_invariants(&flash).unwrap();
}

#[test]
fn recovery_takes_old_entries_from_translation_pages_and_replays_newer_ones() {
    let mut flash = flash();
    let config = DftlConfig { cmt_entries: 8, ..DftlConfig::default() };
    let mut ftl = build(&mut flash, config, false, SimTime::ZERO);
    let mut now = SimTime::ZERO;
    for lpn in 0..40 {
        write(&mut ftl, &mut flash, &mut now, lpn, 100 + u64::from(lpn));
    }
    // Overwrite three pages: their new mappings are dirty in the CMT only.
    for lpn in 0..3 {
        write(&mut ftl, &mut flash, &mut now, lpn, 200 + u64::from(lpn));
    }
    let dirty = ftl.cmt().dirty_len();
    assert!(dirty >= 3, "{dirty}");
    flash.power_cut(now);
    let mut ftl = build(&mut flash, config, true, now);
    // Exactly the entries newer than the translation page come back dirty.
    assert_eq!(ftl.cmt().dirty_len(), dirty);
    for lpn in 0..40 {
        let want = if lpn < 3 { 200 } else { 100 } + u64::from(lpn);
        assert_eq!(read(&mut ftl, &mut flash, now, lpn), Some(Payload::Token(want)), "lpn {lpn}");
    }
    ftl.check_invariants(&flash).unwrap();
}

#[test]
fn bad_configurations_are_refused_by_name() {
    for (config, key) in [
        (DftlConfig { cmt_entries: 0, ..DftlConfig::default() }, "cmt_entries"),
        (DftlConfig { sigma_t: 1.0, ..DftlConfig::default() }, "sigma_t"),
        (DftlConfig { over_provisioning: 1.0, ..DftlConfig::default() }, "over_provisioning"),
        (DftlConfig { gc_free_blocks: 0, ..DftlConfig::default() }, "gc_free_blocks"),
    ] {
        let e = config.validate().unwrap_err().to_string();
        assert!(e.contains(key), "{e}");
    }
}
