#![allow(clippy::unwrap_used)]

use ftlab_nand::{Geometry, Payload, SimTime};

use super::*;
use crate::schemes::page::pagemap::PageMapConfig;
use crate::testing::{flash, TIMING};
use crate::Flash;

/// MQSim's root `ssdconfig.xml` DRAM: 100 MT/s, 1-byte bursts, 13 ns.
const MQSIM_DRAM: DramTiming =
    DramTiming { row_bytes: 8192, mt_per_s: 100, burst_bytes: 1, trcd_ns: 13, tcl_ns: 13, trp_ns: 13 };

/// Two dies of one plane, 4 KiB pages (8 sectors): the default write-back
/// limit is 2 x 8 = 16 sectors, two pages in flight.
fn geometry() -> Geometry {
    Geometry {
        channels: 2,
        ways_per_channel: 1,
        dies_per_way: 1,
        planes_per_die: 1,
        blocks_per_plane: 64,
        pages_per_block: 16,
        page_size: 4096,
        oob_size: 64,
    }
}

type Cache = Layered<DataCache>;

fn cache(params: DataCacheParams) -> (Flash, Cache) {
    let mut f = flash(geometry(), 1);
    let mut io = f.io(SimTime::ZERO);
    let inner = PageMapConfig::default().format(&mut io).unwrap();
    let ftl = Layered(DataCache::new(inner, params, &io).unwrap());
    (f, ftl)
}

fn params(pages: u32) -> DataCacheParams {
    DataCacheParams { dram: MQSIM_DRAM, ..DataCacheParams::new(pages) }
}

/// Writes `lpn` (token `token`) at `at` as a one-page request of `bytes`
/// (0: whole page); returns its completion.
fn write(f: &mut Flash, ftl: &mut Cache, at: u64, lpn: u32, token: u64, bytes: u32) -> u64 {
    let mut io = f.io(SimTime(at));
    ftl.write(&mut io, Lpn(lpn), Payload::Token(token), &Hint { bytes, ..Hint::default() }).unwrap();
    io.completion().0
}

fn read(f: &mut Flash, ftl: &mut Cache, at: u64, lpn: u32) -> (Option<Payload>, u64) {
    let mut io = f.io(SimTime(at));
    let got = ftl.read(&mut io, Lpn(lpn)).unwrap();
    (got, io.completion().0)
}

#[test]
fn dram_access_times_are_mqsims() {
    // 4 KiB at 100 MT/s, 1-byte bursts: 13 + 13 + 2,048 x 10 ns.
    assert_eq!(MQSIM_DRAM.access_ns(4096), 20_506);
    assert_eq!(MQSIM_DRAM.access_ns(8192), 26 + 40_960);
    // Past a row: (26 + 40,960 + 13) x (16,384 / 8,192 / 2) + 26 + 0.
    assert_eq!(MQSIM_DRAM.access_ns(16_384), 40_999 + 26);
    // MQSim's defaults: 800 MT/s, 4-byte bursts: 13 + 13 + 512 x 1.25 ns.
    assert_eq!(DramTiming::default().access_ns(4096), 26 + 640);
}

#[test]
fn a_cold_write_is_acknowledged_from_dram_and_written_back_at_once() {
    let (mut f, mut ftl) = cache(params(8));
    let done = write(&mut f, &mut ftl, 0, 3, 30, 0);
    // Acknowledged when the DRAM copy of 4 KiB ends, long before the program.
    assert_eq!(done, 20_506);
    assert_eq!(f.counters().programs.total(), 1, "written back at once");
    assert!(f.nand().die_free_at(ftlab_nand::DieId(0)).0 >= TIMING.program_ns);
    // Half a page moves half the bytes.
    let done = write(&mut f, &mut ftl, 1_000_000, 4, 40, 2048);
    assert_eq!(done, 1_000_000 + 26 + 10_240);
    assert_eq!(read(&mut f, &mut ftl, 2_000_000, 3).0, Some(Payload::Token(30)));
}

#[test]
fn the_dram_channel_serves_one_access_at_a_time() {
    let (mut f, mut ftl) = cache(DataCacheParams { writeback_limit_sectors: Some(1000), ..params(8) });
    let a = write(&mut f, &mut ftl, 0, 1, 10, 0);
    let b = write(&mut f, &mut ftl, 0, 2, 20, 0);
    assert_eq!((a, b), (20_506, 41_012));
}

#[test]
fn writes_wait_while_the_write_backs_in_flight_reach_the_limit() {
    // Limit 16 sectors: two 4 KiB write-backs; the third write waits for the
    // first program to finish.
    let (mut f, mut ftl) = cache(params(8));
    write(&mut f, &mut ftl, 0, 1, 10, 0);
    write(&mut f, &mut ftl, 0, 2, 20, 0);
    let third = write(&mut f, &mut ftl, 0, 3, 30, 0);
    let DataCacheStats { held_writes, held_ns, .. } = stats(&ftl);
    assert_eq!(held_writes, 1);
    assert!(held_ns >= TIMING.program_ns, "held {held_ns} ns");
    assert!(third >= TIMING.program_ns + 20_506, "third acknowledged at {third}");
    // Without the limit it would have been acknowledged from DRAM at once.
    let (mut f, mut ftl) = cache(DataCacheParams { writeback_limit_sectors: Some(1 << 20), ..params(8) });
    for l in 1..=3 {
        write(&mut f, &mut ftl, 0, l, 10 * u64::from(l), 0);
    }
    assert_eq!(stats(&ftl).held_writes, 0);
}

#[test]
fn a_read_hit_is_not_kept_waiting_by_the_dram_copy_of_a_held_write() {
    // Page 1 is written twice (the second time hot: it stays in DRAM), page
    // 2 once: two write-backs fill the limit, and the write of page 3 waits
    // for the first program (200 us) and books its DRAM copy for then. A
    // read hit asked for before that is served at once, as MQSim asks for
    // the held write's copy only when it gets in.
    let (mut f, mut ftl) = cache(params(8));
    write(&mut f, &mut ftl, 0, 1, 10, 0);
    write(&mut f, &mut ftl, 0, 1, 11, 0);
    write(&mut f, &mut ftl, 0, 2, 20, 0);
    let third = write(&mut f, &mut ftl, 0, 3, 30, 0);
    assert!(third >= TIMING.program_ns + 20_506, "third acknowledged at {third}");
    assert_eq!(stats(&ftl).held_writes, 1);
    // The DRAM copies so far end at 3 x 20,506 ns.
    let (got, done) = read(&mut f, &mut ftl, 70_000, 1);
    assert_eq!((got, done), (Some(Payload::Token(11)), 70_000 + 20_506));
    // One asked for while the held copy runs waits for it to end.
    let (got, done) = read(&mut f, &mut ftl, third - 10_000, 1);
    assert_eq!((got, done), (Some(Payload::Token(11)), third + 20_506));
    assert_eq!(stats(&ftl).read_hits, 2);
}

#[test]
fn the_cache_says_when_it_has_room_for_a_write() {
    let (mut f, mut ftl) = cache(params(8));
    assert_eq!(room(&mut f, &mut ftl, 0), Some(SimTime(0)));
    write(&mut f, &mut ftl, 0, 1, 10, 0);
    assert_eq!(room(&mut f, &mut ftl, 0), Some(SimTime(0)), "one write-back in flight of two allowed");
    write(&mut f, &mut ftl, 0, 2, 20, 0);
    // Full: room when the first write-back finishes, after its program.
    let Some(SimTime(t)) = room(&mut f, &mut ftl, 0) else { panic!("the cache holds writes back") };
    assert!(t >= TIMING.program_ns, "room at {t}");
    assert_eq!(room(&mut f, &mut ftl, t - 1), Some(SimTime(t)));
    assert_eq!(room(&mut f, &mut ftl, t), Some(SimTime(t)));
    // Taken then, a write is not held in the cache.
    write(&mut f, &mut ftl, t, 3, 30, 0);
    assert_eq!(stats(&ftl).held_writes, 0);
}

/// When the cache says, at `at`, it next takes a write.
fn room(f: &mut Flash, ftl: &mut Cache, at: u64) -> Option<SimTime> {
    ftl.write_room_at(&mut f.io(SimTime(at))).unwrap()
}

fn stats(ftl: &Cache) -> DataCacheStats {
    let g = ftl.gauges();
    let get = |name: &str| g.iter().find(|(n, _)| *n == name).map(|&(_, v)| v).unwrap();
    let from_gauges = DataCacheStats {
        writebacks: get("data_cache_writebacks") as u64,
        hot_writes: get("data_cache_hot_writes") as u64,
        evictions: get("data_cache_evictions") as u64,
        flushed: get("data_cache_flushed") as u64,
        read_hits: get("data_cache_read_hits") as u64,
        held_writes: get("data_cache_held_writes") as u64,
        held_ns: (get("data_cache_held_ms") * 1e6).round() as u64,
        queued_writebacks: get("data_cache_queued_writebacks") as u64,
        queued_ns: (get("data_cache_queued_ms") * 1e6).round() as u64,
    };
    assert_eq!(from_gauges, ftl.layer().stats(), "the gauges report the stats");
    from_gauges
}

#[test]
fn a_page_written_again_within_the_window_stays_in_dram_until_evicted() {
    let (mut f, mut ftl) = cache(params(2));
    write(&mut f, &mut ftl, 0, 5, 50, 0);
    assert_eq!(f.counters().programs.total(), 1);
    // Hot: in DRAM only, the flash still holds the first version.
    write(&mut f, &mut ftl, 100_000, 5, 51, 0);
    assert_eq!(f.counters().programs.total(), 1);
    assert_eq!(stats(&ftl).hot_writes, 1);
    let (got, done) = read(&mut f, &mut ftl, 200_000, 5);
    assert_eq!(got, Some(Payload::Token(51)));
    assert_eq!(done, 200_000 + 20_506, "one DRAM access");
    assert_eq!(stats(&ftl).read_hits, 1);
    // Two more pages while the first one's write-back is in flight (it holds
    // its slot until its program ends): page 5 is the least recently written
    // and goes to flash on its way out.
    write(&mut f, &mut ftl, 300_000, 6, 60, 0);
    write(&mut f, &mut ftl, 300_000, 7, 70, 0);
    assert_eq!(stats(&ftl).evictions, 1);
    assert_eq!(f.counters().programs.total(), 4);
    let (got, _) = read(&mut f, &mut ftl, 5_000_000, 5);
    assert_eq!(got, Some(Payload::Token(51)));
    assert!(!ftl.layer().holds(Lpn(5)));
}

#[test]
fn the_hot_window_ends() {
    let (mut f, mut ftl) = cache(DataCacheParams { hot_window_ns: 1_000_000, ..params(8) });
    write(&mut f, &mut ftl, 10, 5, 50, 0);
    // 2 ms later the window has been cleared: the page is cold again.
    write(&mut f, &mut ftl, 2_000_000, 6, 60, 0);
    write(&mut f, &mut ftl, 2_100_000, 5, 51, 0);
    assert_eq!(f.counters().programs.total(), 3);
    assert_eq!(stats(&ftl).hot_writes, 0);
}

#[test]
fn a_written_back_page_leaves_the_cache_and_a_flush_writes_the_dirty_ones() {
    let (mut f, mut ftl) = cache(params(8));
    write(&mut f, &mut ftl, 0, 1, 10, 0);
    assert!(ftl.layer().holds(Lpn(1)));
    // After its program the page has left: a read goes to flash.
    let (got, done) = read(&mut f, &mut ftl, 1_000_000, 1);
    assert_eq!(got, Some(Payload::Token(10)));
    assert!(done >= 1_000_000 + TIMING.read_ns);
    assert!(!ftl.layer().holds(Lpn(1)));
    // A hot page is dirty until the flush writes it back.
    write(&mut f, &mut ftl, 1_100_000, 1, 11, 0);
    assert_eq!(f.counters().programs.total(), 1);
    let mut io = f.io(SimTime(1_200_000));
    ftl.flush(&mut io).unwrap();
    let flushed = io.completion().0;
    assert_eq!(f.counters().programs.total(), 2);
    assert!(flushed >= 1_200_000 + TIMING.program_ns, "the flush waits for the program: {flushed}");
    assert_eq!(stats(&ftl).flushed, 1);
}

#[test]
fn bad_settings_name_their_key() {
    let mut f = flash(geometry(), 1);
    let mut io = f.io(SimTime::ZERO);
    let ftl = PageMapConfig::default().format(&mut io).unwrap();
    let logical = ftl.logical_pages();
    let cases: Vec<(DataCacheParams, &str)> = vec![
        (DataCacheParams::new(0), "device.data_cache.pages"),
        (DataCacheParams::new(logical), "device.data_cache.pages"),
        (DataCacheParams { dram: DramTiming { mt_per_s: 0, ..MQSIM_DRAM }, ..params(4) }, "dram_mt_per_s"),
        (DataCacheParams { dram: DramTiming { burst_bytes: 0, ..MQSIM_DRAM }, ..params(4) }, "dram_burst_bytes"),
        (DataCacheParams { writeback_limit_sectors: Some(0), ..params(4) }, "writeback_limit_sectors"),
        (DataCacheParams { hot_window_ns: 0, ..params(4) }, "hot_window_ms"),
    ];
    for (p, key) in cases {
        let inner = PageMapConfig::default().format(&mut io).unwrap();
        let e = DataCache::new(inner, p.clone(), &io).unwrap_err().to_string();
        assert!(e.contains(key), "{p:?}: {e}");
    }
}

/// The cache over the mqsim GC model, which tells each page's die (even pages
/// on die 0, odd on die 1: channel first), so write-backs wait in die queues.
fn queued_cache(params: DataCacheParams) -> (Flash, Cache) {
    use crate::schemes::page::pagemap::GcModel;
    let mut f = flash(geometry(), 1);
    let mut io = f.io(SimTime::ZERO);
    let inner = PageMapConfig { gc_model: GcModel::Mqsim, ..PageMapConfig::default() }.format(&mut io).unwrap();
    let ftl = Layered(DataCache::new(inner, params, &io).unwrap());
    (f, ftl)
}

#[test]
fn write_backs_wait_for_their_die_and_a_read_passes_them() {
    let program = TIMING.program_ns;
    let mut done = Vec::new();
    for queue_writebacks in [true, false] {
        let p = DataCacheParams { writeback_limit_sectors: Some(1 << 20), queue_writebacks, ..params(64) };
        let (mut f, mut ftl) = queued_cache(p);
        // Page 10 (die 0) is on flash and out of the cache long before.
        write(&mut f, &mut ftl, 0, 10, 100, 0);
        let t = 100 * program;
        // Four cold pages of die 0 at once: four write-backs for one die.
        for l in [0, 2, 4, 6] {
            write(&mut f, &mut ftl, t, l, u64::from(l), 0);
        }
        // A host read of die 0 shortly after.
        let (got, at) = read(&mut f, &mut ftl, t + 50_000, 10);
        assert_eq!(got, Some(Payload::Token(100)));
        done.push(at - t);
        if queue_writebacks {
            // One write-back is under way; three still wait.
            assert_eq!(ftl.gauges().iter().find(|g| g.0 == "data_cache_waiting_writebacks").unwrap().1, 3.0);
        }
        // A flush writes every page back; all five are on flash after it.
        let mut io = f.io(SimTime(t + 60_000));
        ftl.flush(&mut io).unwrap();
        assert!(io.completion().0 >= t + 4 * program, "flush done at {}", io.completion().0);
        assert_eq!(f.counters().programs.total(), 5);
        for l in [0, 2, 4, 6] {
            assert_eq!(read(&mut f, &mut ftl, 1000 * program, l).0, Some(Payload::Token(u64::from(l))));
        }
    }
    // Queued: the read waits for the write-back under way only; issued at
    // once: for all four.
    assert!(done[0] < 2 * program, "queued: read done after {} ns", done[0]);
    assert!(done[1] > 4 * program, "at once: read done after {} ns", done[1]);
}

#[test]
fn writes_at_the_limit_wait_in_the_cache_and_their_write_backs_follow_in_order() {
    // Limit 16 sectors: two 4 KiB write-backs on the dies; six cold writes of
    // die 0 at once.
    let (mut f, mut ftl) = queued_cache(params(16));
    let mut acks = Vec::new();
    for l in [0, 2, 4, 6, 8, 10] {
        acks.push(write(&mut f, &mut ftl, 0, l, u64::from(l) + 1, 0));
    }
    let s = stats(&ftl);
    assert_eq!(s.held_writes, 4, "{s:?}");
    // Each write past the second waits about a program more than the one
    // before (one die: one write-back at a time).
    for w in acks.windows(2).skip(1) {
        assert!(w[1] >= w[0], "{acks:?}");
    }
    assert!(acks[5] >= 4 * TIMING.program_ns, "{acks:?}");
    // Written again while waiting: the newer data is what reaches the flash.
    write(&mut f, &mut ftl, 10, 8, 99, 0);
    let mut io = f.io(SimTime(20));
    ftl.flush(&mut io).unwrap();
    let flushed = io.completion().0;
    assert!(flushed >= 6 * TIMING.program_ns, "flush done at {flushed}");
    assert!(f.counters().programs.total() >= 6);
    for (l, token) in [(0, 1), (2, 3), (4, 5), (6, 7), (8, 99), (10, 11)] {
        assert_eq!(read(&mut f, &mut ftl, flushed + 1, l).0, Some(Payload::Token(token)), "page {l}");
    }
    // The gauges count the queue.
    assert!(stats(&ftl).queued_writebacks > 0);
}

#[test]
fn queued_write_backs_pair_at_the_page_offsets_they_would_have_had_as_mqsim_pairs_them() {
    use crate::schemes::page::pagemap::GcModel;
    use ftlab_nand::{BlockId, Commands, Ppa};
    // One die of two planes: even pages on plane 0, odd on plane 1.
    let g = Geometry { channels: 1, planes_per_die: 2, ..geometry() };
    for any_page in [true, false] {
        let commands = Commands { multi_plane: true, multi_plane_any_page: any_page, ..Commands::default() };
        let mut f = crate::testing::flash_with(g, 1, commands);
        let mut io = f.io(SimTime::ZERO);
        let inner = PageMapConfig { gc_model: GcModel::Mqsim, ..PageMapConfig::default() }.format(&mut io).unwrap();
        let p = DataCacheParams { writeback_limit_sectors: Some(1 << 20), ..params(64) };
        let mut ftl = Layered(DataCache::new(inner, p, &io).unwrap());
        // Page 0 goes to plane 0's first page: plane 0's next is 1, plane 1's 0.
        write(&mut f, &mut ftl, 0, 0, 100, 0);
        let t = 100 * TIMING.program_ns;
        // A read of page 0 holds the die while three cold pages arrive: 2
        // (plane 0, at page 1), then 1 and 3 (plane 1, at pages 0 and 1).
        assert_eq!(read(&mut f, &mut ftl, t, 0).0, Some(Payload::Token(100)));
        for l in [2, 1, 3] {
            write(&mut f, &mut ftl, t, l, u64::from(l), 0);
        }
        let mut io = f.io(SimTime(t + 1));
        ftl.flush(&mut io).unwrap();
        // Where each page landed: (plane, page in its block, sequence).
        let nand = f.nand();
        let mut at = std::collections::HashMap::new();
        for b in 0..g.blocks_per_plane * g.planes_per_die {
            for page in 0..g.pages_per_block {
                let ppa: Ppa = nand.layout().ppa(BlockId(b), page);
                if let Ok((Payload::Token(token), oob)) = nand.read_untimed(ppa) {
                    at.insert(token, (nand.layout().plane_of_block(BlockId(b)), page, oob.seq));
                }
            }
        }
        let multi = f.counters().multi_plane.get(crate::Purpose::Host);
        if any_page {
            // MQSim's rule: the head (2, at page 1) goes with the write-back
            // of plane 1 at page 1 (3), from anywhere in the queue, at
            // plane 1's next page (0); 1 follows alone.
            assert_eq!(multi, 1);
            assert_eq!((at[&2].0, at[&2].1, at[&3].0, at[&3].1), (0, 1, 1, 0), "{at:?}");
            assert_eq!((at[&1].0, at[&1].1), (1, 1), "{at:?}");
            assert!(at[&3].2 < at[&1].2, "{at:?}");
        } else {
            // Pairs only at one page offset: 2 and 1 are one page apart,
            // every page goes alone, in queue order.
            assert_eq!(multi, 0);
            assert_eq!((at[&1].0, at[&1].1, at[&3].0, at[&3].1), (1, 0, 1, 1), "{at:?}");
        }
        for l in [0u32, 1, 2, 3] {
            let expect = if l == 0 { 100 } else { u64::from(l) };
            assert_eq!(read(&mut f, &mut ftl, t * 10, l).0, Some(Payload::Token(expect)), "page {l}");
        }
    }
}

#[test]
fn with_queued_write_backs_the_cache_has_room_when_one_finishes() {
    // Limit 16 sectors: two 4 KiB write-backs; pages 0 and 2 both on die 0,
    // the second waits in the die's queue.
    let (mut f, mut ftl) = queued_cache(params(8));
    assert_eq!(room(&mut f, &mut ftl, 0), Some(SimTime(0)));
    write(&mut f, &mut ftl, 0, 0, 10, 0);
    write(&mut f, &mut ftl, 0, 2, 20, 0);
    let Some(SimTime(t)) = room(&mut f, &mut ftl, 0) else { panic!("the cache holds writes back") };
    assert!(t >= TIMING.program_ns, "room at {t}");
    assert_eq!(room(&mut f, &mut ftl, t - 1), Some(SimTime(t)));
    // Then the first is done and the second is issued: one in flight.
    assert_eq!(room(&mut f, &mut ftl, t), Some(SimTime(t)));
    write(&mut f, &mut ftl, t, 4, 40, 0);
    assert_eq!(stats(&ftl).held_writes, 0);
    // Full again: room when the next finishes.
    let Some(SimTime(u)) = room(&mut f, &mut ftl, t) else { panic!("the cache holds writes back") };
    assert!(u > t, "room at {u}");
}

#[test]
fn a_read_of_a_page_never_written_moves_the_offset_of_the_write_backs_queued_behind_it() {
    use crate::schemes::page::pagemap::{GcModel, UnwrittenReads};
    use ftlab_nand::Commands;
    // One die of two planes: even pages on plane 0, odd on plane 1.
    let g = Geometry { channels: 1, planes_per_die: 2, ..geometry() };
    let offsets = |read_between: bool| {
        let commands = Commands { multi_plane: true, multi_plane_any_page: true, ..Commands::default() };
        let mut f = crate::testing::flash_with(g, 1, commands);
        let mut io = f.io(SimTime::ZERO);
        let config = PageMapConfig {
            gc_model: GcModel::Mqsim,
            unwritten_reads: UnwrittenReads::Flash,
            ..PageMapConfig::default()
        };
        let inner = config.format(&mut io).unwrap();
        let p = DataCacheParams { writeback_limit_sectors: Some(1 << 20), ..params(64) };
        let mut ftl = Layered(DataCache::new(inner, p, &io).unwrap());
        // Page 0 at plane 0's first page; long after, a read of it holds the
        // die while cold pages 2 and 6 (plane 0) queue, with or without a
        // read of page 4 (plane 0, never written) between them.
        write(&mut f, &mut ftl, 0, 0, 100, 0);
        let t = 100 * TIMING.program_ns;
        assert_eq!(read(&mut f, &mut ftl, t, 0).0, Some(Payload::Token(100)));
        write(&mut f, &mut ftl, t, 2, 2, 0);
        if read_between {
            assert_eq!(read(&mut f, &mut ftl, t, 4).0, None);
        }
        write(&mut f, &mut ftl, t, 6, 6, 0);
        let q: Vec<(u32, u32)> = ftl.0.queues[0].iter().map(|w| (w.lpn, w.offset)).collect();
        let mut io = f.io(SimTime(t + 1));
        ftl.flush(&mut io).unwrap();
        for l in [2u32, 6] {
            assert_eq!(read(&mut f, &mut ftl, t * 10, l).0, Some(Payload::Token(u64::from(l))));
        }
        q
    };
    // Page 2 at plane 0's next page (1); page 6 after it, and after the page
    // the read took when there was one.
    assert_eq!(offsets(false), [(2, 1), (6, 2)]);
    assert_eq!(offsets(true), [(2, 1), (6, 3)]);
}

#[test]
fn a_write_back_joins_its_dies_queue_by_when_it_may_be_issued() {
    // The queue is kept by `at` (when each may be issued: joined, or its
    // translation ready): one that joins with an earlier time goes before
    // those queued later than it, and equal times keep their order.
    let (mut f, mut ftl) = cache(params(8));
    for (lpn, at) in [(1, 100), (2, 300), (3, 200), (4, 300), (5, 50)] {
        let mut io = f.io(SimTime(at));
        ftl.0.enqueue(&mut io, Queued::new(lpn, (0, 0), SimTime(at), 8, 0)).unwrap();
    }
    let order: Vec<u32> = ftl.0.queues[0].iter().map(|w| w.lpn).collect();
    assert_eq!(order, [5, 1, 3, 2, 4]);
    assert_eq!(ftl.0.queued, 5);
    assert_eq!(ftl.0.depth, 40, "each holds its sectors from when it joins");
}
