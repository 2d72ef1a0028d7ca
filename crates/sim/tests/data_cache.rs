//! MQSim's write cache in a run (`[device.data_cache]`), flows that write
//! part of a page (`flow.request_bytes`), and chips whose dies run serially
//! (`device.commands.serial_dies`): what the MQSim import sets.
#![allow(clippy::unwrap_used)]

use ftlab_sim::{run, Report, RunConfig, SimError};

/// Two channels of one chip of two dies, 8 KiB pages, fast programs (30 us;
/// 20 us a page on the channel); one closed-loop flow of 8 writes in flight
/// to never-written pages, 20 ms.
fn config(device_extra: &str, flow_extra: &str) -> RunConfig {
    config_reading(device_extra, flow_extra, 0.0)
}

/// As [`config`], with `read_fraction` of the requests reads.
fn config_reading(device_extra: &str, flow_extra: &str, read_fraction: f64) -> RunConfig {
    let depth = if flow_extra.contains("queue_depth") { "" } else { "queue_depth = 8\n" };
    let text = format!(
        "seed = 5\n[device]\nchip = \"small-slc\"\nchannels = 2\nways = 1\ndies = 2\nplanes = 2\nblocks_per_plane = 64\n\
         pages_per_block = 64\npage_size = 8192\n{device_extra}\n[device.timing]\nread_ns = 25000\nread_oob_ns = 25000\n\
         program_ns = 30000\nerase_ns = 1500000\nchannel_mb_per_s = 400\n[ftl]\nkind = \"pagemap\"\ngc_model = \"mqsim\"\n\
         gc_free_blocks = 24\nunwritten_reads = \"flash\"\n[metrics]\nslowdown = false\n\
         [[flow]]\nname = \"w\"\n{depth}stop_ms = 20\n{flow_extra}\n\
         [flow.workload.generator]\nkind = \"uniform\"\nrequests = 1099511627776\nread_fraction = {read_fraction:?}\n"
    );
    RunConfig::from_toml(&text, "test").unwrap()
}

const CACHE: &str = "[device.data_cache]\npages = 64\ndram_mt_per_s = 100\ndram_burst_bytes = 1\n";

fn gauge(r: &Report, name: &str) -> f64 {
    *r.ftl_gauges.get(name).unwrap_or_else(|| panic!("no gauge {name} in {:?}", r.ftl_gauges))
}

#[test]
fn writes_are_acknowledged_from_dram_and_written_back() {
    let cached = run(&config(CACHE, "request_bytes = 4096"), &mut |_| {}).unwrap();
    assert_eq!(cached.integrity, "ok");
    let c = &cached.flows[0];
    // The flash takes about 80,000 programs a second, the DRAM 48,800 copies
    // of 4 KiB (20.5 us each): the DRAM is the bottleneck, and 8 writes in
    // flight wait 8 x 20.5 us.
    let dram_bound = 8.0 * 20.506;
    assert!((c.response_us.mean / dram_bound - 1.0).abs() < 0.05, "{:?}", c.response_us);
    // A page written for the first time within the hot window is cold and
    // written back at once; one written again is hot and stays in DRAM.
    let writebacks = gauge(&cached, "data_cache_writebacks") as u64;
    let hot = gauge(&cached, "data_cache_hot_writes") as u64;
    assert_eq!(writebacks + hot, c.requests);
    assert!(hot > 0 && hot * 20 < c.requests, "{hot} hot of {}", c.requests);
    assert_eq!(gauge(&cached, "data_cache_held_writes"), 0.0);
    // Back pressure: with a limit of one page of write-backs in flight, the
    // flash sets the pace and writes wait for it.
    let tight =
        run(&config(&format!("{CACHE}writeback_limit_sectors = 16\n"), "request_bytes = 4096"), &mut |_| {}).unwrap();
    assert!(gauge(&tight, "data_cache_held_writes") > 0.0);
    assert!(tight.flows[0].response_us.mean > 1.3 * c.response_us.mean, "{:?}", tight.flows[0].response_us);
    assert_eq!(tight.integrity, "ok");
}

#[test]
fn a_request_of_half_a_page_moves_half_the_dram_bytes() {
    let half = run(&config(CACHE, "request_bytes = 4096"), &mut |_| {}).unwrap();
    let whole = run(&config(CACHE, ""), &mut |_| {}).unwrap();
    // DRAM-bound with 8 writes in flight: 4 KiB takes 20.5 us, 8 KiB 41 us.
    let (h, w) = (half.flows[0].response_us.mean, whole.flows[0].response_us.mean);
    assert!(w > 1.8 * h && w < 2.2 * h, "{w} against {h}");
    assert_eq!(half.flows[0].partial_page_writes, half.flows[0].requests);
    assert_eq!(whole.flows[0].partial_page_writes, 0);
}

#[test]
fn the_read_of_a_read_modify_write_costs_nothing_for_a_page_never_written() {
    // unwritten_reads = "flash" charges a host read of a page never written a
    // flash read, but a partial write's read of one has nothing to keep: the
    // host reads are those of pages written before, as with "free".
    let host_reads = |mode: &str| {
        let mut c = config("", "request_bytes = 4096");
        c.ftl.params.insert("unwritten_reads".into(), toml::Value::String(mode.into()));
        let r = run(&c, &mut |_| {}).unwrap();
        assert_eq!(r.integrity, "ok");
        (r.flash_ops.reads.get(ftlab_ftl::Purpose::Host), r.flows[0].requests)
    };
    let (flash, requests) = host_reads("flash");
    assert_eq!((flash, requests), host_reads("free"));
    assert!(flash * 20 < requests, "{flash} reads for {requests} partial writes");
}

#[test]
fn serial_dies_halve_a_two_die_chip() {
    let interleaved = run(&config("", ""), &mut |_| {}).unwrap();
    let serial = run(&config("[device.commands]\nserial_dies = true\n", ""), &mut |_| {}).unwrap();
    let (i, s) = (interleaved.flows[0].requests as f64, serial.flows[0].requests as f64);
    // Two chips of two dies: serial dies leave two operations at a time
    // instead of four.
    assert!(s < 0.6 * i, "{s} requests against {i}");
    assert_eq!(serial.integrity, "ok");
}

/// `config`'s device with the cache and serial dies, one closed-loop flow of
/// half reads (of pages never written too: they read flash) and half
/// writes, 16 in flight, 200 ms.
fn mixed(cache_extra: &str, reads_first: bool) -> RunConfig {
    let text = format!(
        "seed = 5\n[device]\nchip = \"small-slc\"\nchannels = 2\nways = 1\ndies = 2\nplanes = 2\nblocks_per_plane = 64\n\
         pages_per_block = 64\npage_size = 8192\n{CACHE}{cache_extra}\n[device.commands]\nserial_dies = true\n\
         reads_first = {reads_first}\n[device.timing]\nread_ns = 25000\nread_oob_ns = 25000\nprogram_ns = 300000\n\
         erase_ns = 1500000\nchannel_mb_per_s = 400\n[ftl]\nkind = \"pagemap\"\ngc_model = \"mqsim\"\n\
         gc_free_blocks = 24\nunwritten_reads = \"flash\"\n[metrics]\nslowdown = false\n\
         [[flow]]\nname = \"rw\"\nqueue_depth = 16\nstop_ms = 200\n\
         [flow.workload.generator]\nkind = \"uniform\"\nrequests = 1099511627776\nread_fraction = 0.5\n"
    );
    RunConfig::from_toml(&text, "test").unwrap()
}

#[test]
fn reads_pass_the_write_backs_queued_on_their_chip() {
    // MQSim's scheduling: write-backs wait in their chips' queues and reads
    // go first.
    let first = run(&mixed("", true), &mut |_| {}).unwrap();
    // Every write-back issued at once, every chip serving in issue order: a
    // read waits behind the write-backs the limit allows (a chip's share of
    // planes x a page of sectors).
    let fifo = run(&mixed("queue_writebacks = false\n", false), &mut |_| {}).unwrap();
    for r in [&first, &fifo] {
        assert_eq!(r.integrity, "ok");
        assert!(r.flows[0].read_us.count > 500, "{:?}", r.flows[0].read_us);
    }
    let (f, q) = (&first.flows[0].read_us, &fifo.flows[0].read_us);
    // First: one program (300 us) under way at most, and the reads before.
    assert!(f.mean < 0.6 * q.mean, "reads first {f:?}, in issue order {q:?}");
    assert!(f.p99 < q.p99, "reads first {f:?}, in issue order {q:?}");
    // The write-backs waited in their queues (the gauge counts them), and
    // reads first alone, over write-backs issued at once, already lets reads
    // pass the programs that have not started.
    assert!(gauge(&first, "data_cache_queued_writebacks") > 0.0);
    let passing = run(&mixed("queue_writebacks = false\n", true), &mut |_| {}).unwrap();
    assert!(passing.flows[0].read_us.mean < 0.6 * q.mean, "{:?}", passing.flows[0].read_us);
    assert_eq!(passing.integrity, "ok");
}

fn config_error(device_extra: &str, flow_extra: &str) -> String {
    match run(&config(device_extra, flow_extra), &mut |_| {}) {
        Err(SimError::Config(c)) => c.key,
        other => panic!("expected a config error, got {other:?}"),
    }
}

#[test]
fn bad_cache_settings_name_their_key() {
    assert_eq!(config_error(&format!("{CACHE}hot_window_ms = 0\n"), ""), "device.data_cache.hot_window_ms");
    assert_eq!(config_error("[device.data_cache]\npages = 0\n", ""), "device.data_cache.pages");
    assert_eq!(config_error(&format!("write_buffer_pages = 8\n{CACHE}"), ""), "device.data_cache");
    assert_eq!(config_error("", "request_bytes = 0"), "flow[0].request_bytes");
}

#[test]
fn with_sector_transfers_a_part_of_a_page_crosses_the_channel_alone() {
    // One read in flight of 4 KiB of a never-written 8 KiB page (read from
    // flash): the array's 25 us, then the transfer out: 4 KiB at 400 MB/s
    // with sector transfers (10.24 us), else the page and its spare area.
    let read = |sector: bool| {
        let device = format!("[device.commands]\nsector_transfers = {sector}\n");
        let c = config_reading(&device, "request_bytes = 4096\nqueue_depth = 1", 1.0);
        let r = run(&c, &mut |_| {}).unwrap();
        assert_eq!(r.integrity, "ok");
        r.flows[0].response_us.mean
    };
    let (on, off) = (read(true), read(false));
    assert!((on - 35.24).abs() < 0.1, "{on}");
    assert!(off > 45.0, "{off}");
    // Flash-bound writes (one page of write-backs in flight): each
    // write-back of half a page moves 4 KiB, not the page.
    let write = |sector: bool| {
        let device = format!("{CACHE}writeback_limit_sectors = 16\n[device.commands]\nsector_transfers = {sector}\n");
        let r = run(&config(&device, "request_bytes = 4096"), &mut |_| {}).unwrap();
        assert_eq!(r.integrity, "ok");
        assert!(gauge(&r, "data_cache_held_writes") > 0.0);
        r.flows[0].response_us.mean
    };
    let (on, off) = (write(true), write(false));
    assert!(on < 0.92 * off, "{on} against {off}");
}

#[test]
fn flows_dispatched_per_die_hold_writes_until_the_cache_has_room() {
    // A limit of one page of write-backs, half reads that pass the queued
    // write-backs: a write the cache cannot take waits.
    let tight = format!("{CACHE}writeback_limit_sectors = 16\n");
    let by_request = run(&config_reading(&tight, "request_bytes = 8192", 0.5), &mut |_| {}).unwrap();
    let mut held = config_reading(&tight, "request_bytes = 8192", 0.5);
    held.host.dispatch = Some(ftlab_sim::config::Dispatch::PerDiePriority);
    let per_die = run(&held, &mut |_| {}).unwrap();
    for r in [&by_request, &per_die] {
        assert_eq!(r.integrity, "ok");
        assert!(r.flows[0].write_us.count > 100 && r.flows[0].read_us.count > 100, "{:?}", r.flows[0]);
    }
    // Dispatched by request, the cache holds writes back itself and works
    // out on arrival when each gets in; per die, the dispatcher holds them
    // until the cache has room, and none waits in the cache.
    assert!(gauge(&by_request, "data_cache_held_writes") > 0.0);
    assert_eq!(gauge(&per_die, "data_cache_held_writes"), 0.0);
    // They still wait, for a program at least (30 us) behind the limit, and
    // about as long as the cache's own estimate made them (the same device
    // and load; not twice as long).
    let (w, e) = (&per_die.flows[0].write_us, &by_request.flows[0].write_us);
    assert!(w.mean > 30.0, "{w:?}");
    assert!(w.mean < 2.0 * e.mean && e.mean < 2.0 * w.mean, "held {w:?}, estimated {e:?}");
    // Each write is counted once, in the run and in its flow.
    assert_eq!(per_die.write_us.count, w.count);
    assert_eq!(per_die.requests, per_die.flows[0].requests);
    assert_eq!(per_die, run(&held, &mut |_| {}).unwrap(), "deterministic");
}
