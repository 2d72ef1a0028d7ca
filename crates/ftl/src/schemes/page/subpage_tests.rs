//! Unit tests of the sub-page FTL: packing k units a page, garbage collection
//! of partly valid pages, flush padding, recovery from slot records, power cuts
//! with the byte store (including cuts inside a flush), and configuration
//! errors that name the key.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::testing::{one_die, TIMING};
use ftlab_nand::{Nand, NandConfig, WearConfig};

/// One die of `blocks` blocks of 8 pages of 4 KiB (128-byte OOB), `store`.
fn flash(blocks: u32, store: StoreKind, seed: u64) -> Flash {
    let geometry = Geometry { oob_size: 128, pages_per_block: 8, ..one_die(blocks, 8) };
    let config = NandConfig {
        geometry,
        timing: TIMING,
        bad_block_rate: 0.0,
        wear: WearConfig::default(),
        store,
        seed,
        faults: Default::default(),
        commands: Default::default(),
    };
    Flash::new(Nand::new(&config).unwrap())
}

/// 1 KiB units: 4 a page.
fn config() -> SubPageConfig {
    SubPageConfig { unit_bytes: 1024, over_provisioning: 0.25, gc_free_blocks: 1, packing: Packing::MergeBuffer }
}

/// A request of `units` (lpn, payload) written as one host request (the
/// [`Hint::more`] chain); its completion.
fn write_request(ftl: &mut SubPage, f: &mut Flash, now: &mut SimTime, units: &[(u32, Payload)]) -> SimTime {
    let mut io = f.io(*now);
    for (i, (lpn, d)) in units.iter().enumerate() {
        let hint = Hint { more: i + 1 < units.len(), ..Hint::default() };
        ftl.write(&mut io, Lpn(*lpn), d.clone(), &hint).unwrap();
    }
    let done = io.completion();
    *now = SimTime(io.last_finish().0.max(now.0) + 1_000);
    done
}

/// The payload of version `v` of unit `lpn` for `store`.
fn data(store: StoreKind, lpn: u32, v: u64) -> Payload {
    let token = (u64::from(lpn) << 32) | v;
    match store {
        StoreKind::Token => Payload::Token(token),
        StoreKind::Bytes => Payload::Bytes(token.to_le_bytes().iter().copied().cycle().take(1024).collect()),
    }
}

fn write(ftl: &mut SubPage, f: &mut Flash, now: &mut SimTime, lpn: u32, d: Payload) -> SimTime {
    let mut io = f.io(*now);
    ftl.write(&mut io, Lpn(lpn), d, &Hint::default()).unwrap();
    let done = io.completion();
    *now = SimTime(io.last_finish().0.max(now.0) + 1_000);
    done
}

fn flush(ftl: &mut SubPage, f: &mut Flash, now: &mut SimTime) -> SimTime {
    let mut io = f.io(*now);
    ftl.flush(&mut io).unwrap();
    let done = io.completion();
    *now = SimTime(io.last_finish().0.max(now.0) + 1_000);
    done
}

fn read(ftl: &mut SubPage, f: &mut Flash, now: SimTime, lpn: u32) -> Option<Payload> {
    let mut io = f.io(now);
    ftl.read(&mut io, Lpn(lpn)).unwrap()
}

#[test]
fn units_are_packed_k_to_a_page_and_a_flush_pads_the_last() {
    let mut f = flash(16, StoreKind::Token, 1);
    let mut ftl = SubPage::empty(config(), &f.io(SimTime::ZERO)).unwrap();
    for b in 0..16 {
        ftl.alloc.release(BlockId(b));
    }
    assert_eq!((ftl.slots_per_page(), ftl.unit_bytes()), (4, Some(1024)));
    let mut now = SimTime::ZERO;
    for lpn in 0..10 {
        write(&mut ftl, &mut f, &mut now, lpn, data(StoreKind::Token, lpn, 1));
    }
    // Ten units: two full pages programmed, two units in the open page.
    assert_eq!((f.counters().programs.get(Purpose::Host), ftl.buffered()), (2, 2));
    // A rewrite of a buffered unit replaces it there.
    write(&mut ftl, &mut f, &mut now, 9, data(StoreKind::Token, 9, 2));
    assert_eq!(ftl.buffered(), 2);
    flush(&mut ftl, &mut f, &mut now);
    assert_eq!((f.counters().programs.get(Purpose::Host), ftl.buffered()), (3, 0));
    for lpn in 0..10 {
        let v = if lpn == 9 { 2 } else { 1 };
        assert_eq!(read(&mut ftl, &mut f, now, lpn), Some(data(StoreKind::Token, lpn, v)));
    }
    ftl.check_invariants(&f).unwrap();
}

#[test]
fn request_queue_packing_gives_each_request_pages_of_its_own() {
    let mut f = flash(16, StoreKind::Token, 1);
    let rq = SubPageConfig { packing: Packing::RequestQueue, ..config() };
    let mut ftl = SubPage::empty(rq, &f.io(SimTime::ZERO)).unwrap();
    for b in 0..16 {
        ftl.alloc.release(BlockId(b));
    }
    assert_eq!((ftl.name(), ftl.durability()), ("nameless-split", Durability::OnAck));
    let mut now = SimTime::ZERO;
    // Four one-unit requests: four pages, one unit each (no page is shared
    // between requests), each complete once programmed.
    for lpn in 0..4 {
        let at = now;
        let done = write_request(&mut ftl, &mut f, &mut now, &[(lpn, data(StoreKind::Token, lpn, 1))]);
        assert!(done.0 >= at.0 + TIMING.program_ns, "a request completes after its program");
        assert_eq!(ftl.buffered(), 0);
    }
    assert_eq!(f.counters().programs.get(Purpose::Host), 4);
    // One request of six units: a full page and a page of two.
    let units: Vec<(u32, Payload)> = (4..10).map(|l| (l, data(StoreKind::Token, l, 1))).collect();
    write_request(&mut ftl, &mut f, &mut now, &units);
    assert_eq!((f.counters().programs.get(Purpose::Host), ftl.buffered()), (6, 0));
    // The units of one request share its pages, in order.
    let page_of = |ftl: &SubPage, l: u32| ftl.split(ftl.map[l as usize]);
    assert_eq!(page_of(&ftl, 4).0, page_of(&ftl, 7).0);
    assert_eq!((page_of(&ftl, 7).1, page_of(&ftl, 8).1), (3, 0));
    assert_ne!(page_of(&ftl, 0).0, page_of(&ftl, 1).0);
    for lpn in 0..10 {
        assert_eq!(read(&mut ftl, &mut f, now, lpn), Some(data(StoreKind::Token, lpn, 1)));
    }
    ftl.check_invariants(&f).unwrap();
    // With a merge buffer the same writes fill pages: 10 units, 2 pages.
    let mut g = flash(16, StoreKind::Token, 1);
    let mut mb = SubPage::empty(config(), &g.io(SimTime::ZERO)).unwrap();
    for b in 0..16 {
        mb.alloc.release(BlockId(b));
    }
    let mut now = SimTime::ZERO;
    for lpn in 0..10 {
        write_request(&mut mb, &mut g, &mut now, &[(lpn, data(StoreKind::Token, lpn, 1))]);
    }
    assert_eq!(g.counters().programs.get(Purpose::Host), 2);
}

#[test]
fn request_queue_packing_loses_no_acknowledged_write_at_a_power_cut() {
    let mut f = flash(16, StoreKind::Bytes, 3);
    let rq = SubPageConfig { packing: Packing::RequestQueue, ..config() };
    let mut ftl: Box<dyn Ftl> = rq.format(&mut f.io(SimTime::ZERO)).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let mut latest: HashMap<u32, Payload> = HashMap::new();
    let mut now = SimTime::ZERO;
    for round in 0..6u64 {
        for r in 0..40u64 {
            let n = rng.gen_range(1..=6u32);
            let first = rng.gen_range(0..ftl.logical_pages() - n);
            let mut io = f.io(now);
            for i in 0..n {
                let d = data(StoreKind::Bytes, first + i, round * 1000 + r);
                let hint = Hint { more: i + 1 < n, ..Hint::default() };
                ftl.write(&mut io, Lpn(first + i), d.clone(), &hint).unwrap();
                latest.insert(first + i, d);
            }
            now = SimTime(io.last_finish().0.max(now.0) + 1_000);
        }
        // No flush: every request was acknowledged, so a cut keeps it all.
        f.power_cut(now);
        ftl = rq.recover(&mut f.io(now)).unwrap();
        for (&lpn, d) in &latest {
            let mut io = f.io(now);
            assert_eq!(ftl.read(&mut io, Lpn(lpn)).unwrap().as_ref(), Some(d), "unit {lpn} after cut {round}");
        }
        ftl.check_invariants(&f).unwrap();
    }
    assert!(f.counters().erases.get(Purpose::Gc) > 0, "garbage collection ran");
}

#[test]
fn gc_repacks_the_valid_units_of_partly_valid_pages() {
    let store = StoreKind::Bytes;
    let mut f = flash(8, store, 2);
    let mut ftl = SubPage::empty(config(), &f.io(SimTime::ZERO)).unwrap();
    for b in 0..8 {
        ftl.alloc.release(BlockId(b));
    }
    let mut now = SimTime::ZERO;
    // One block: 8 pages of 4 units, units 0..32.
    for lpn in 0..32 {
        write(&mut ftl, &mut f, &mut now, lpn, data(store, lpn, 1));
    }
    // Rewrite 3 units of every page but the last: 7 pages hold one valid
    // unit each, the last page 4, and the first block fills up and closes.
    let mut v = HashMap::new();
    for page in 0..7u32 {
        for s in 0..3 {
            let lpn = page * 4 + s;
            write(&mut ftl, &mut f, &mut now, lpn, data(store, lpn, 2));
            v.insert(lpn, 2);
        }
    }
    flush(&mut ftl, &mut f, &mut now);
    let first = BlockId(0);
    assert!(!ftl.alloc.is_open(first));
    assert_eq!(ftl.picker.valid(first), 7 + 4);
    let before = *f.counters();
    let collected = {
        let mut io = f.io(now);
        let c = ftl.collect_one(&mut io).unwrap();
        now = SimTime(io.last_finish().0 + 1_000);
        c
    };
    assert!(collected);
    let after = *f.counters();
    // 11 valid units repacked into 3 pages (4 + 4 + 3), not 8 page copies;
    // every programmed page's records read once, and each page with a valid
    // unit read once.
    assert_eq!(after.programs.get(Purpose::Gc) - before.programs.get(Purpose::Gc), 3);
    assert_eq!(after.oob_reads.get(Purpose::Gc) - before.oob_reads.get(Purpose::Gc), 8);
    assert_eq!(after.reads.get(Purpose::Gc) - before.reads.get(Purpose::Gc), 8);
    assert_eq!(after.erases.get(Purpose::Gc) - before.erases.get(Purpose::Gc), 1);
    ftl.check_invariants(&f).unwrap();
    for lpn in 0..32 {
        let want = data(store, lpn, *v.get(&lpn).unwrap_or(&1));
        assert_eq!(read(&mut ftl, &mut f, now, lpn), Some(want), "unit {lpn}");
    }
    // And the same after a power cut: recovery finds the repacked units.
    f.power_cut(now);
    let mut ftl = SubPage::recover(config(), &mut f.io(now)).unwrap();
    ftl.check_invariants(&f).unwrap();
    for lpn in 0..32 {
        let want = data(store, lpn, *v.get(&lpn).unwrap_or(&1));
        assert_eq!(read(&mut ftl, &mut f, now, lpn), Some(want), "unit {lpn} after recovery");
    }
}

/// Random writes, trims and flushes with the byte store, power cuts at random
/// times (many inside a flush's program): after recovery every unit reads its
/// value as of the last completed flush before the cut, or a later one.
#[test]
fn byte_store_power_cuts_keep_everything_flushed() {
    let store = StoreKind::Bytes;
    for seed in 0..6 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut f = flash(12, store, seed);
        let builder = config();
        let mut ftl: Box<dyn Ftl> = builder.format(&mut f.io(SimTime::ZERO)).unwrap();
        let n = ftl.logical_pages();
        let mut now = SimTime::ZERO;
        // Per unit: every version written since the last completed flush
        // before the cut, starting with the durable one (0 = nothing).
        let mut durable: Vec<u64> = vec![0; n as usize];
        let mut since: Vec<Vec<u64>> = vec![Vec::new(); n as usize];
        let mut version = 1u64;
        for round in 0..4 {
            let mut last_flush = None;
            for _ in 0..rng.gen_range(100..600) {
                let lpn = rng.gen_range(0..n);
                let mut io = f.io(now);
                if rng.gen_range(0..12) == 0 {
                    ftl.flush(&mut io).unwrap();
                    last_flush = Some((io.completion(), since.clone()));
                } else {
                    version += 1;
                    ftl.write(&mut io, Lpn(lpn), data(store, lpn, version), &Hint::default()).unwrap();
                    since[lpn as usize].push(version);
                }
                now = SimTime(io.completion().0.max(now.0) + rng.gen_range(0..200_000));
            }
            // A flush, then a cut at a random time around its program.
            let mut io = f.io(now);
            ftl.flush(&mut io).unwrap();
            let flush_done = io.completion();
            let span = io.last_finish().0.saturating_sub(now.0).max(1);
            let cut = SimTime(now.0 + rng.gen_range(0..span + span / 2));
            let flushed = if flush_done <= cut { Some(since.clone()) } else { last_flush.map(|l| l.1) };
            if let Some(fl) = flushed {
                for (u, vs) in fl.iter().enumerate() {
                    if let Some(&v) = vs.last() {
                        durable[u] = v;
                    }
                }
            }
            f.power_cut(cut);
            ftl = builder.recover(&mut f.io(cut)).unwrap();
            ftl.check_invariants(&f).unwrap();
            now = SimTime(cut.0 + 1_000_000);
            for lpn in 0..n {
                let got = ftl.read(&mut f.io(now), Lpn(lpn)).unwrap();
                let mut ok: Vec<Option<Payload>> =
                    since[lpn as usize].iter().map(|&v| Some(data(store, lpn, v))).collect();
                ok.push(if durable[lpn as usize] == 0 { None } else { Some(data(store, lpn, durable[lpn as usize])) });
                assert!(ok.contains(&got), "seed {seed} round {round}: unit {lpn} reads {got:?}");
                // What was read is now the durable value.
                durable[lpn as usize] = match got {
                    None => 0,
                    Some(Payload::Bytes(b)) => u64::from_le_bytes(b[..8].try_into().unwrap()) & 0xffff_ffff,
                    Some(Payload::Token(_)) => unreachable!("a byte store"),
                };
                since[lpn as usize].clear();
            }
        }
    }
}

#[test]
fn bad_units_are_config_errors_naming_the_key() {
    let f = &mut flash(8, StoreKind::Token, 1);
    let io = f.io(SimTime::ZERO);
    let cases = [
        (SubPageConfig { unit_bytes: 3000, ..config() }, "ftl.unit_bytes", "divisor of the flash page size 4096"),
        // 4096 / 256 = 16 records of 12 bytes = 192 > 128 bytes of OOB.
        (SubPageConfig { unit_bytes: 256, ..config() }, "ftl.unit_bytes", "bytes of OOB"),
        (SubPageConfig { unit_bytes: 0, ..config() }, "ftl.unit_bytes", "divisor"),
        (SubPageConfig { over_provisioning: 1.0, ..config() }, "ftl.over_provisioning", "[0, 1)"),
        (SubPageConfig { gc_free_blocks: 0, ..config() }, "ftl.gc_free_blocks", "at least 1"),
    ];
    for (c, key, words) in cases {
        match SubPage::empty(c, &io).unwrap_err() {
            FtlError::Config(e) => {
                assert_eq!(e.key, key, "{}", e.problem);
                assert!(e.problem.contains(words), "{}", e.problem);
            }
            e => panic!("{e}"),
        }
    }
    // Through the registry too: unknown keys and bad values name the key.
    let mut p = toml::Table::new();
    p.insert("unit_bytes".into(), toml::Value::String("4k".into()));
    let e = crate::registry::build("subpage", &p).unwrap_err();
    assert!(matches!(&e, FtlError::Config(c) if c.key == "ftl.unit_bytes"), "{e}");
}

#[test]
fn ram_counts_a_map_entry_per_unit_and_the_open_page() {
    let f = &mut flash(16, StoreKind::Token, 1);
    let ftl = SubPage::empty(config(), &f.io(SimTime::ZERO)).unwrap();
    let n = u64::from(ftl.logical_pages());
    // 16 blocks x 8 pages x 4 units, 25% hidden.
    assert_eq!(n, 16 * 8 * 4 * 3 / 4);
    let open = 4 * (1024 + 4);
    assert_eq!(ftl.ram_bytes(), n * 4 + open + ftl.picker.ram_bytes() + ftl.alloc.ram_bytes());
}

#[test]
fn payloads_of_the_wrong_size_are_refused_before_acknowledgement() {
    let mut f = flash(8, StoreKind::Bytes, 1);
    let mut ftl = SubPage::empty(config(), &f.io(SimTime::ZERO)).unwrap();
    let mut io = f.io(SimTime::ZERO);
    let e = ftl.write(&mut io, Lpn(0), Payload::Bytes(vec![0; 4096].into()), &Hint::default()).unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::Invalid, "{e}");
    let e = ftl.write(&mut io, Lpn(0), Payload::Token(1), &Hint::default()).unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::Invalid, "{e}");
    assert_eq!(ftl.buffered(), 0);
}
