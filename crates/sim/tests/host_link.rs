//! The host link and controller model (`device.host_mb_per_s`,
//! `device.command_overhead_us`), the write buffer's DRAM copies
//! (`device.dram_mb_per_s`) and a generator's own block size
//! (`workload.block_bytes`), through whole runs and the `Device`.
#![allow(clippy::unwrap_used)]

use ftlab_nand::SimTime;
use ftlab_sim::device::{Command, Device};
use ftlab_sim::{run, Report, RunConfig};

fn report(toml: &str) -> Report {
    run(&RunConfig::from_toml(toml, "t").unwrap(), &mut |_| {}).unwrap()
}

fn error(toml: &str) -> String {
    match RunConfig::from_toml(toml, "t") {
        Err(e) => e.to_string(),
        Ok(c) => run(&c, &mut |_| {}).unwrap_err().to_string(),
    }
}

/// 8 dies of small-slc, closed loop at depth 32: far more flash bandwidth than
/// a 20 MB/s link.
fn sequential(extra_device: &str, op: &str) -> String {
    let read = if op == "read" { 1.0 } else { 0.0 };
    format!(
        "seed = 1\n[device]\nchannels = 4\nways = 2\nblocks_per_plane = 32\n{extra_device}\n\
         [ftl]\nkind = \"pagemap\"\n[host]\nqueue_depth = 32\nmode = \"closed\"\n\
         [precondition]\nfill = true\n\
         [workload]\ngenerator = {{ kind = \"sequential\", requests = 4000, read_fraction = {read}, \
         size = {{ kind = \"fixed\", pages = 4 }} }}\n"
    )
}

fn mb_per_s(r: &Report) -> f64 {
    let pages = (r.host_pages_read + r.host_pages_written) as f64;
    pages * 4096.0 / r.sim_seconds / 1e6
}

#[test]
fn the_link_caps_reads_and_writes_at_its_rate() {
    for op in ["write", "read"] {
        let free = report(&sequential("", op));
        let linked = report(&sequential("host_mb_per_s = 20", op));
        let (f, l) = (mb_per_s(&free), mb_per_s(&linked));
        // The flash alone is far faster than 20 MB/s; the link holds it to 20.
        assert!(f > 40.0, "{op}: {f} MB/s without a link");
        assert!((l - 20.0).abs() < 0.5, "{op}: {l} MB/s over a 20 MB/s link");
        assert!(linked.integrity == "ok", "{}", linked.integrity);
        // The report's own bandwidth and IOPS say the same.
        assert!((l - (linked.read_mb_per_s + linked.write_mb_per_s)).abs() < 1e-9, "{l} vs {linked:?}");
        assert!((linked.iops - linked.requests as f64 / linked.sim_seconds).abs() < 1e-9);
    }
}

#[test]
fn firmware_time_is_spent_one_command_at_a_time() {
    // 1,000 us a command, one at a time: at most 1,000 commands a second
    // whatever the queue depth.
    let r = report(&sequential("command_overhead_us = 1000", "write"));
    let iops = r.requests as f64 / r.sim_seconds;
    assert!((iops - 1000.0).abs() < 5.0, "{iops} commands a second");
    // Each waits for the ones queued before it: at depth 32, about 32 ms.
    assert!(r.write_us.mean > 30_000.0, "{:?}", r.write_us);
}

#[test]
fn a_read_completes_once_its_bytes_are_out() {
    // QD 1 reads of one page: the link adds exactly the transfer of 4 KiB.
    let cfg = |link: &str| {
        format!(
            "seed = 1\n[device]\nblocks_per_plane = 32\n{link}\n[ftl]\nkind = \"pagemap\"\n\
             [host]\nqueue_depth = 1\nmode = \"closed\"\n[precondition]\nfill = true\n\
             [workload]\ngenerator = {{ kind = \"uniform\", requests = 500, read_fraction = 1.0 }}\n"
        )
    };
    let free = report(&cfg(""));
    let linked = report(&cfg("host_mb_per_s = 100"));
    let added = linked.read_us.mean - free.read_us.mean;
    assert!((added - 40.96).abs() < 0.01, "the link added {added} us to a 4 KiB read");
}

#[test]
fn the_device_pays_the_link_too() {
    let config = RunConfig::from_toml(
        "[device]\nchip = \"small-slc\"\nblocks_per_plane = 16\nhost_mb_per_s = 10\n[ftl]\nkind = \"pagemap\"\n",
        "t",
    )
    .unwrap();
    let mut dev = Device::open(&config).unwrap();
    dev.submit(SimTime::ZERO, Command::write(0, vec![1; 4096])).unwrap();
    let w = dev.step().unwrap();
    // 4 KiB at 10 MB/s is 409.6 us before the flash work even starts.
    assert!(w.completed.0 > 409_600 + 200_000, "{:?}", w.completed);
    dev.submit(w.completed, Command::read(0, 4096)).unwrap();
    let r = dev.step().unwrap();
    assert!(r.completed.0 - w.completed.0 > 409_600, "{:?}", r.completed);
    assert_eq!(r.result.unwrap().data.unwrap(), vec![1; 4096]);
}

#[test]
fn dram_copies_take_time_in_the_write_buffer() {
    let cfg = |dram: &str| {
        format!(
            "seed = 1\n[device]\nblocks_per_plane = 32\nwrite_buffer_pages = 64\n{dram}\n\
             [ftl]\nkind = \"pagemap\"\n[host]\nqueue_depth = 1\nmode = \"closed\"\n\
             [workload]\ngenerator = {{ kind = \"uniform\", requests = 2000 }}\n"
        )
    };
    let free = report(&cfg(""));
    let timed = report(&cfg("dram_mb_per_s = 50"));
    // A write absorbed by the buffer costs its copy: 4 KiB at 50 MB/s = 81.92 us.
    assert!(free.write_us.p50 < 1.0, "{:?}", free.write_us);
    assert!((timed.write_us.p50 - 81.92).abs() < 0.5, "{:?}", timed.write_us);
    assert_eq!(timed.integrity, "ok");
}

#[test]
fn block_bytes_makes_requests_smaller_than_a_page() {
    // jasmine-openssd has 32 KiB pages: 4 KiB writes are read-modify-writes.
    let r = report(
        "seed = 1\n[device]\nchip = \"jasmine-openssd\"\nblocks_per_plane = 8\n[ftl]\nkind = \"pagemap\"\n\
         [host]\nqueue_depth = 8\nmode = \"closed\"\n\
         [workload]\nblock_bytes = 4096\n\
         generator = { kind = \"uniform\", requests = 300, size = { kind = \"fixed\", pages = 1 } }\n",
    );
    assert_eq!(r.requests, 300);
    assert_eq!(r.rmw_pages, 300);
    assert_eq!(r.host_pages_written, 300);
}

#[test]
fn bad_values_name_their_key() {
    let base = "[device]\nblocks_per_plane = 16\n";
    for (extra, key) in [
        ("host_mb_per_s = 0", "device.host_mb_per_s"),
        ("host_mb_per_s = -5.0", "device.host_mb_per_s"),
        ("command_overhead_us = -1.0", "device.command_overhead_us"),
        ("write_buffer_pages = 8\ndram_mb_per_s = 0", "device.dram_mb_per_s"),
        ("dram_mb_per_s = 100", "device.dram_mb_per_s"),
        ("read_buffer_pages = 0", "device.read_buffer_pages"),
        ("read_buffer_pages = 8\ndram_mb_per_s = -1.0", "device.dram_mb_per_s"),
        ("read_buffer_mode = \"stage\"", "device.read_buffer_mode"),
    ] {
        let e = error(&format!("{base}{extra}\n[workload]\ngenerator = {{ kind = \"uniform\", requests = 10 }}\n"));
        assert!(e.contains(key), "{extra}: {e}");
    }
    let e =
        error(&format!("{base}[workload]\nblock_bytes = 1000\ngenerator = {{ kind = \"uniform\", requests = 10 }}\n"));
    assert!(e.contains("workload.block_bytes"), "{e}");
    let e = error(&format!("{base}[workload]\nblock_bytes = 4096\ntrace = \"x.csv\"\ntrace_format = \"msr\"\n"));
    assert!(e.contains("workload.block_bytes"), "{e}");
    // Page commands dispatched per die have no host link model.
    let e = error(&format!(
        "{base}host_mb_per_s = 100\n[host]\ndispatch = \"per-die-edf\"\n\
         [workload]\ngenerator = {{ kind = \"uniform\", requests = 10 }}\n"
    ));
    assert!(e.contains("device.host_mb_per_s") && e.contains("host.dispatch"), "{e}");
}

#[test]
fn runs_with_a_link_are_deterministic() {
    let t = sequential("host_mb_per_s = 30\ncommand_overhead_us = 3", "write");
    let a = serde_json::to_string(&report(&t)).unwrap();
    let b = serde_json::to_string(&report(&t)).unwrap();
    assert_eq!(a, b);
}

/// jasmine-openssd (32 KiB pages), shrunk.
fn jasmine(extra: &str, generator: &str, precondition: bool) -> Report {
    report(&format!(
        "seed = 1\n[device]\nchip = \"jasmine-openssd\"\nblocks_per_plane = 8\n{extra}\n\
         [ftl]\nkind = \"pagemap\"\n[host]\nqueue_depth = 1\nmode = \"closed\"\n\
         [precondition]\nfill = {precondition}\n\
         [workload]\nblock_bytes = 4096\ngenerator = {generator}\n"
    ))
}

#[test]
fn the_read_buffer_serves_the_rest_of_a_page_from_dram() {
    let seq = "{ kind = \"sequential\", requests = 8000, read_fraction = 1.0 }";
    let without = jasmine("", seq, true);
    let with = jasmine("read_buffer_pages = 4", seq, true);
    // Eight 4 KiB reads a 32 KiB page: every one reads flash without the
    // buffer, one in eight with it.
    assert_eq!(without.flash_pages_read, 8000);
    assert_eq!(with.flash_pages_read, 1000);
    assert!(with.read_us.mean < without.read_us.mean / 4.0, "{:?} vs {:?}", with.read_us, without.read_us);
    assert_eq!(with.integrity, "ok");
    // Copies out of the buffer cost DRAM time: slower than free copies.
    let slow = jasmine("read_buffer_pages = 4\ndram_mb_per_s = 100", seq, true);
    assert!(slow.read_us.mean > with.read_us.mean + 40.0, "{:?} vs {:?}", slow.read_us, with.read_us);
}

#[test]
fn a_staging_read_buffer_serves_no_later_request() {
    let seq = "{ kind = \"sequential\", requests = 8000, read_fraction = 1.0 }";
    let cache = jasmine("read_buffer_pages = 4", seq, true);
    let stage = jasmine("read_buffer_pages = 4\nread_buffer_mode = \"stage\"", seq, true);
    // Each 4 KiB request reads its 32 KiB page again: the page read for the
    // previous request is gone.
    assert_eq!(cache.flash_pages_read, 1000);
    assert_eq!(stage.flash_pages_read, 8000);
    assert!(stage.read_us.mean > cache.read_us.mean * 4.0, "{:?} vs {:?}", stage.read_us, cache.read_us);
    assert_eq!(stage.integrity, "ok");
    // Within one request the buffer stages: a 32 KiB request of eight 4 KiB
    // units packed in one page reads that page once.
    let whole =
        "{ kind = \"sequential\", requests = 1000, read_fraction = 1.0, size = { kind = \"fixed\", pages = 8 } }";
    let subpage = |mode: &str| {
        report(&format!(
            "seed = 1\n[device]\nchip = \"jasmine-openssd\"\nblocks_per_plane = 8\nread_buffer_pages = 4\n{mode}\n\
             [ftl]\nkind = \"subpage\"\nunit_bytes = 4096\n[host]\nqueue_depth = 1\nmode = \"closed\"\n\
             [precondition]\nfill = true\n[workload]\nblock_bytes = 4096\ngenerator = {whole}\n"
        ))
    };
    let staged = subpage("read_buffer_mode = \"stage\"");
    assert_eq!(staged.host_pages_read, 8000, "{staged:?}");
    assert_eq!(staged.flash_pages_read, 1000, "one flash read a request");
    assert_eq!(staged.integrity, "ok");
}

#[test]
fn the_read_buffer_never_serves_a_page_that_changed() {
    // Mixed reads and overwrites over a small space with garbage collection:
    // every read is checked against the data last written.
    let mixed = "{ kind = \"uniform\", requests = 30000, read_fraction = 0.5 }";
    // A buffer as large as the device: every page ever read stays buffered,
    // so a page whose block was erased and programmed again since is in it.
    let r = jasmine("read_buffer_pages = 8192", mixed, true);
    assert_eq!(r.integrity, "ok");
    assert!(r.gc_page_copies > 0, "no garbage collection: {r:?}");
}

#[test]
fn a_power_cut_empties_the_read_buffer() {
    let config = RunConfig::from_toml(
        "[device]\nchip = \"small-slc\"\nblocks_per_plane = 16\nread_buffer_pages = 8\n[ftl]\nkind = \"pagemap\"\n",
        "t",
    )
    .unwrap();
    let mut dev = Device::open(&config).unwrap();
    dev.submit(SimTime::ZERO, Command::write(0, vec![5; 4096])).unwrap();
    let w = dev.step().unwrap();
    let mut at = w.completed;
    let mut reads = Vec::new();
    for _ in 0..3 {
        dev.submit(at, Command::read(0, 4096)).unwrap();
        let r = dev.step().unwrap();
        at = r.completed;
        reads.push(dev.flash().counters().reads.total());
        assert_eq!(r.result.unwrap().data.unwrap(), vec![5; 4096]);
    }
    // The first read went to the flash, the next two to the buffer.
    assert_eq!(reads[0], reads[2]);
    dev.cut_power(at).unwrap();
    dev.recover().unwrap();
    let before = dev.flash().counters().reads.total();
    let at = dev.now();
    dev.submit(at, Command::read(0, 4096)).unwrap();
    assert_eq!(dev.step().unwrap().result.unwrap().data.unwrap(), vec![5; 4096]);
    assert_eq!(dev.flash().counters().reads.total(), before + 1, "served from a buffer the cut emptied");
}

/// `subpage` (4 KiB units of jasmine-openssd's 32 KiB pages), QD 1 reads after a
/// fill.
fn subpage_reads(extra: &str, kind: &str) -> Report {
    report(&format!(
        "seed = 1\n[device]\nchip = \"jasmine-openssd\"\nblocks_per_plane = 8\n{extra}\n\
         [ftl]\nkind = \"subpage\"\n[host]\nqueue_depth = 1\nmode = \"closed\"\n\
         [precondition]\nfill = true\n\
         [workload]\ngenerator = {{ kind = \"{kind}\", requests = 4000, read_fraction = 1.0 }}\n"
    ))
}

#[test]
fn a_unit_read_through_the_read_buffer_replies_once_its_unit_is_in() {
    let plain = subpage_reads("", "uniform");
    let buffered = subpage_reads("read_buffer_pages = 16", "uniform");
    assert_eq!(plain.integrity, "ok");
    assert_eq!(buffered.integrity, "ok");
    // jasmine-openssd: 60 us array read, 32 KiB (+ OOB) at 80 MB/s = 431 us.
    // Without the buffer a 4 KiB read waits for the whole page; with it, for
    // its own unit (and for the rest of the previous read's page still on
    // the channel): half the reads wait for about half a page less (medians;
    // the first read waits behind the fill's last programs).
    assert!(plain.read_us.p50 > 60.0 + 32768.0 / 80.0, "{:?}", plain.read_us);
    assert!(plain.read_us.p50 - buffered.read_us.p50 > 100.0, "{:?} vs {:?}", plain.read_us, buffered.read_us);
    // Sequential 4 KiB reads: one flash read a page.
    let seq = subpage_reads("read_buffer_pages = 16", "sequential");
    assert_eq!(seq.flash_pages_read, 500);
    assert_eq!(seq.integrity, "ok");
}
