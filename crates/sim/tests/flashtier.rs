//! FlashTier's host side (003 Sections 2.2 and 3.3): the SSC's commands on the
//! Device with flash timing, and the cache managers over a disk and a flash
//! cache, end to end with the integrity check.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;

use ftlab_ftl::ssc::Consistency;
use ftlab_ftl::ErrorKind;
use ftlab_nand::{Payload, SimTime};
use ftlab_sim::host::cache::{CacheConfig, CacheManager, Mode, SscCache, SsdCache};
use ftlab_sim::host::disk::Disk;
use ftlab_sim::host::flashtier::{check, run, run_on, FlashtierConfig, System};
use ftlab_sim::host::ssc::{SscCommand, SscReply};
use ftlab_workload::filebench::Personality;

#[test]
fn every_system_and_workload_keeps_data_intact() {
    let config = FlashtierConfig::ci(20_000);
    for p in Personality::ALL {
        for s in System::ALL {
            let o = run(&config, p, s).unwrap();
            assert_eq!(o.integrity_errors, 0, "{} on {}", s.name(), p.name());
            assert!(o.checked_blocks > 1000, "{} on {}: {} blocks checked", s.name(), p.name(), o.checked_blocks);
            if s != System::NoCache {
                assert!(o.erases > 0, "{} on {}: the cache never collected garbage", s.name(), p.name());
            }
            assert_eq!(o.recovery.is_some(), matches!(s, System::Ssc(_)));
            if let Some(r) = o.recovery {
                assert_eq!(r.dirty_after, r.dirty_before, "{} on {}: recovery lost dirty blocks", s.name(), p.name());
                assert!(r.ns > 0 && r.cached_after <= r.cached_before);
            }
        }
    }
}

/// The SSC in log mode: its log pages and checkpoints are counted as map and
/// checkpoint programs (OOB logging writes no checkpoint), they cost flash
/// programs, and a recovery after a flush keeps every dirty block.
#[test]
fn the_ssc_log_mode_counts_its_metadata() {
    for p in [Personality::Fileserver, Personality::Varmail] {
        let s = System::Ssc(Mode::WriteBack);
        let oob = run(&FlashtierConfig::ci(10_000), p, s).unwrap();
        let log_config = FlashtierConfig { ssc_consistency: Consistency::Log, ..FlashtierConfig::ci(10_000) };
        let log = run(&log_config, p, s).unwrap();
        assert_eq!((oob.checkpoint_programs, log.integrity_errors), (0, 0), "{}", p.name());
        assert!(log.map_programs > 0 && log.checkpoint_programs > 0, "{}: {log:?}", p.name());
        let meta = log.map_programs + log.checkpoint_programs;
        assert!(log.flash_programs >= log.host_programs + log.gc_copies + meta, "{}: {log:?}", p.name());
        let r = log.recovery.unwrap();
        assert!(r.dirty_before > 0 && r.dirty_after == r.dirty_before, "{}: {r:?}", p.name());
    }
}

#[test]
fn the_integrity_check_catches_lost_write_backs() {
    // A manager bug on purpose: the write-back cleaner marks blocks clean
    // without writing them to the disk; once they leave the cache the data is
    // gone, and the check must see it.
    let mut config = FlashtierConfig::ci(20_000);
    config.cache.lose_writebacks = true;
    for s in [System::Ssd(Mode::WriteBack), System::Ssc(Mode::WriteBack)] {
        let o = run(&config, Personality::Fileserver, s).unwrap();
        assert!(o.cache.cleaned_blocks > 0);
        assert!(o.integrity_errors > 0, "{}: a lost write-back went unnoticed", s.name());
    }
}

#[test]
fn runs_are_deterministic() {
    let config = FlashtierConfig::ci(5_000);
    for s in [System::Ssd(Mode::WriteBack), System::Ssc(Mode::WriteThrough)] {
        assert_eq!(run(&config, Personality::Varmail, s).unwrap(), run(&config, Personality::Varmail, s).unwrap());
    }
}

#[test]
fn the_ssc_beats_the_ssd_on_fileserver_erases() {
    // Silent eviction: the SSD's garbage collection copies cached clean data
    // the SSC drops (003 Section 3.3, "90% fewer erases").
    let config = FlashtierConfig::ci(20_000);
    for mode in [Mode::WriteBack, Mode::WriteThrough] {
        let ssd = run(&config, Personality::Fileserver, System::Ssd(mode)).unwrap();
        let ssc = run(&config, Personality::Fileserver, System::Ssc(mode)).unwrap();
        assert!(ssc.erases < ssd.erases, "{mode:?}: ssc {} vs ssd {} erases", ssc.erases, ssd.erases);
        assert!(ssc.gc_copies < ssd.gc_copies / 4, "{mode:?}: ssc {} vs ssd {} copies", ssc.gc_copies, ssd.gc_copies);
        assert!(ssc.silent_evictions > 0);
    }
}

#[test]
fn ssc_write_back_keeps_dirty_data_across_a_power_cut() {
    for consistency in [Consistency::Oob, Consistency::Log] {
        write_back_keeps_dirty_data_across_a_power_cut(consistency);
    }
}

fn write_back_keeps_dirty_data_across_a_power_cut(consistency: Consistency) {
    let config = FlashtierConfig { ssc_consistency: consistency, ..FlashtierConfig::ci(10_000) };
    let cache = CacheConfig { mode: Mode::WriteBack, ..config.cache };
    let disk = Disk::new(config.disk).unwrap();
    let mut manager = SscCache::new(cache, disk, config.device("ssc").unwrap()).unwrap();
    let mut fb = config.workload(Personality::Varmail).unwrap();
    let mut last = HashMap::new();
    let o = run_on(&config, &mut fb, &mut manager, System::Ssc(Mode::WriteBack), &mut last).unwrap();
    assert_eq!(o.integrity_errors, 0);
    let dirty = manager.dirty_blocks();
    assert!(dirty > 50, "only {dirty} dirty blocks: the test would prove little");
    // An fsync makes the evicts and cleans durable; then the power goes.
    let synced = manager.fsync(SimTime(o.end_ns)).unwrap();
    let (disk, mut dev) = manager.into_parts();
    let cut = SimTime(synced.done.0.max(disk.busy_until().0));
    dev.cut_power(cut).unwrap();
    assert!(dev.ssc(cut, SscCommand::Read { block: 0 }).is_err(), "a powered-off device answers nothing");
    dev.recover().unwrap();
    let at = dev.now();
    let mut recovered = SscCache::recover(cache, disk, dev, fb.disk_blocks(), at).unwrap();
    assert_eq!(recovered.dirty_blocks(), dirty, "the dirty list rebuilt with exists");
    let (checked, wrong) = check(&mut recovered, &last, at).unwrap();
    assert!(checked > 1000);
    assert_eq!(wrong, 0, "blocks lost or stale after the power cut");
}

#[test]
fn ssc_commands_on_the_device_take_flash_time() {
    let config = FlashtierConfig::ci(0);
    let mut dev = config.device("ssc").unwrap();
    assert!(dev.is_ssc());
    let t0 = SimTime::from_us(10);
    let w = dev.ssc(t0, SscCommand::WriteDirty { block: 5_000_000, data: Payload::Token(9) }).unwrap();
    // One program of a 4 KiB page (163 us) and its transfer.
    assert!(w.completed.0 >= t0.0 + 163_000, "write-dirty done at {}", w.completed.0);
    let hit = dev.ssc(w.completed, SscCommand::Read { block: 5_000_000 }).unwrap();
    assert_eq!(hit.reply, SscReply::Read(Some(Payload::Token(9))));
    assert!(hit.completed.0 >= w.completed.0 + 60_000, "a hit reads the flash");
    let miss = dev.ssc(w.completed, SscCommand::Read { block: 7 }).unwrap();
    assert_eq!(miss, ftlab_sim::host::ssc::SscDone { completed: w.completed, reply: SscReply::Read(None) });
    let exists = dev.ssc(w.completed, SscCommand::Exists { first: 4_999_999, count: 3 }).unwrap();
    assert_eq!(exists.reply, SscReply::Dirty(vec![false, true, false]));
    dev.ssc(w.completed, SscCommand::Clean { block: 5_000_000 }).unwrap();
    let flush = dev.ssc(w.completed, SscCommand::Flush).unwrap();
    assert!(flush.completed > w.completed, "the flush programs the clean record");
    let state = dev.ssc_state().unwrap();
    assert_eq!((state.cached, state.dirty), (1, 0));
    dev.ssc(flush.completed, SscCommand::Evict { block: 5_000_000 }).unwrap();
    assert_eq!(dev.ssc_state().unwrap().cached, 0);
    // Odd input: a block beyond the SSC's address space, a plain SSD.
    let e = dev.ssc(flush.completed, SscCommand::WriteClean { block: 1 << 40, data: Payload::Token(1) }).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    let mut ssd = config.device("pagemap").unwrap();
    assert!(!ssd.is_ssc());
    let e = ssd.ssc(SimTime::ZERO, SscCommand::Read { block: 1 }).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(SscCache::new(CacheConfig::default(), Disk::new(config.disk).unwrap(), ssd).is_err());
}

#[test]
fn the_ssd_manager_runs_over_other_ftls() {
    let config = FlashtierConfig::ci(5_000);
    for kind in ["dftl", "fast"] {
        for mode in [Mode::WriteBack, Mode::WriteThrough] {
            let cache = CacheConfig { mode, ..config.cache };
            let disk = Disk::new(config.disk).unwrap();
            let mut manager = SsdCache::new(cache, disk, config.device(kind).unwrap()).unwrap();
            let mut fb = config.workload(Personality::Fileserver).unwrap();
            let o = run_on(&config, &mut fb, &mut manager, System::Ssd(mode), &mut HashMap::new()).unwrap();
            assert_eq!(o.integrity_errors, 0, "{kind} {mode:?}");
            assert!(o.cache.hits > 0 && o.erases > 0, "{kind} {mode:?}: {o:?}");
        }
    }
}

/// FlashCache's set-associative placement (`set_blocks`): 600 blocks that all
/// fall in one set of 512 slots evict the set's least recently used blocks
/// while other sets are empty; one global LRU keeps all 600. Every block reads
/// back its last data either way.
#[test]
fn the_ssd_manager_replaces_within_a_set() {
    let config = FlashtierConfig::ci(0);
    let run = |set_blocks| {
        let cache = CacheConfig { mode: Mode::WriteThrough, set_blocks, ..config.cache };
        let disk = Disk::new(config.disk).unwrap();
        let mut m = SsdCache::new(cache, disk, config.device("pagemap").unwrap()).unwrap();
        let sets = m.slots().checked_div(set_blocks).unwrap_or(1);
        let mut now = SimTime::ZERO;
        for k in 0..600u64 {
            now = m.write(now, k * sets, &[k + 1]).unwrap().done;
        }
        let evictions = m.stats().evictions;
        for k in 0..600u64 {
            let (done, got) = m.read(now, k * sets, 1).unwrap();
            assert_eq!(got, vec![k + 1], "block {}", k * sets);
            now = done.done;
        }
        (sets, evictions)
    };
    let (sets, evictions) = run(512);
    assert!(sets > 1, "{sets} sets");
    assert_eq!(evictions, 600 - 512, "{sets} sets of 512");
    assert_eq!(run(0), (1, 0));
    // A set larger than the cache is refused, naming the field.
    let cache = CacheConfig { set_blocks: 1 << 40, ..config.cache };
    let e = SsdCache::new(cache, Disk::new(config.disk).unwrap(), config.device("pagemap").unwrap()).unwrap_err();
    assert!(e.to_string().contains("set_blocks"), "{e}");
}

/// FlashCache's read-miss path (`read_fill_sync`): the request ends after the
/// cache fill (READDISK, then READFILL, then the bio ends), so a miss takes
/// the disk read plus a flash program; without it the request ends with the
/// disk read. Both managers.
#[test]
fn a_read_miss_waits_for_its_fill_when_asked() {
    let config = FlashtierConfig::ci(0);
    for kind in ["pagemap", "ssc"] {
        let miss = |read_fill_sync| {
            let cache = CacheConfig { mode: Mode::WriteThrough, read_fill_sync, ..config.cache };
            let disk = Disk::new(config.disk).unwrap();
            let dev = config.device(kind).unwrap();
            let mut m: Box<dyn CacheManager> = if kind == "ssc" {
                Box::new(SscCache::new(cache, disk, dev).unwrap())
            } else {
                Box::new(SsdCache::new(cache, disk, dev).unwrap())
            };
            let t0 = SimTime::from_us(10);
            let (done, _) = m.read(t0, 1000, 1).unwrap();
            let (hit, _) = m.read(done.done, 1000, 1).unwrap();
            assert_eq!(m.stats().hits, 1, "{kind}: the fill cached the block");
            // The split of each request adds up to its response; a hit
            // waits for the flash only.
            assert_eq!(done.disk_ns + done.flash_ns, done.done.0 - t0.0, "{kind}: {done:?}");
            assert_eq!((hit.disk_ns, hit.flash_ns), (0, hit.done.0 - done.done.0), "{kind}: {hit:?}");
            (done, hit)
        };
        let (async_miss, _) = miss(false);
        let (sync_miss, _) = miss(true);
        // One 4 KiB program is 163 us, and it is flash time on the path.
        let (a, s) = (async_miss.disk_ns + async_miss.flash_ns, sync_miss.disk_ns + sync_miss.flash_ns);
        assert!(s >= a + 163_000, "{kind}: miss {s} ns synchronous, {a} ns not");
        assert_eq!(async_miss.flash_ns, 0, "{kind}: the fill behind the request is on no path: {async_miss:?}");
        assert_eq!(sync_miss.disk_ns, async_miss.disk_ns, "{kind}: the same disk read");
        assert!(sync_miss.flash_ns >= 163_000, "{kind}: the synchronous fill is flash time: {sync_miss:?}");
    }
}

/// A flowop's response splits into disk and flash wait that add up to it:
/// No-Cache waits for the disk only; the caches wait for both, and the
/// synchronous read fill moves time onto the flash.
#[test]
fn a_flowops_response_splits_into_disk_and_flash_wait() {
    let config = FlashtierConfig::ci(10_000);
    let close = |o: &ftlab_sim::host::flashtier::Outcome| {
        let sum = o.disk_wait_us + o.flash_wait_us;
        assert!((sum - o.mean_latency_us).abs() <= 1e-6 * o.mean_latency_us, "{}: {sum} against {o:?}", o.system);
    };
    let none = run(&config, Personality::Fileserver, System::NoCache).unwrap();
    close(&none);
    assert_eq!(none.flash_wait_us, 0.0);
    assert!(none.disk_wait_us > 0.0);
    for s in [System::Ssd(Mode::WriteBack), System::Ssd(Mode::WriteThrough), System::Ssc(Mode::WriteBack)] {
        let o = run(&config, Personality::Fileserver, s).unwrap();
        close(&o);
        assert!(o.disk_wait_us > 0.0 && o.flash_wait_us > 0.0, "{}: {o:?}", s.name());
        let mut sync = config.clone();
        sync.cache.read_fill_sync = true;
        let f = run(&sync, Personality::Fileserver, s).unwrap();
        close(&f);
        assert!(
            f.flash_wait_us > o.flash_wait_us * 1.2,
            "{}: fill {} us against {} us",
            s.name(),
            f.flash_wait_us,
            o.flash_wait_us
        );
    }
}

/// FlashCache writes its metadata on a clean-to-dirty transition only
/// (`metadata_on_dirty_transition`): rewriting a dirty block writes no
/// metadata page; by default every dirty write does.
#[test]
fn rewriting_a_dirty_block_writes_no_metadata_when_asked() {
    let config = FlashtierConfig::ci(0);
    let meta = |metadata_on_dirty_transition| {
        let cache = CacheConfig { mode: Mode::WriteBack, metadata_on_dirty_transition, ..config.cache };
        let disk = Disk::new(config.disk).unwrap();
        let mut m = SsdCache::new(cache, disk, config.device("pagemap").unwrap()).unwrap();
        let mut now = SimTime::ZERO;
        for token in 1..=5 {
            now = m.write(now, 77, &[token]).unwrap().done;
        }
        let (_, got) = m.read(now, 77, 1).unwrap();
        assert_eq!(got, vec![5]);
        m.stats().metadata_writes
    };
    assert_eq!(meta(false), 5);
    assert_eq!(meta(true), 1);
}
