//! The sub-page FTL through the device and the replay engine, on the OpenSSD
//! Jasmine board's geometry (32 KiB pages, `jasmine-openssd`, blocks per plane
//! shrunk): 4 KiB random writes are read-modify-writes of whole 32 KiB pages
//! for the page-mapped baseline, and none for `subpage` with its 4 KiB units,
//! which programs one flash page per 8 host writes (003_9b28d6a0046a8156.txt
//! Sections 2-3.1).
#![allow(clippy::unwrap_used)]

use std::io::Write;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use ftlab_nand::SimTime;
use ftlab_sim::device::{Command, Device};
use ftlab_sim::{run, RunConfig};

fn jasmine(kind: &str) -> RunConfig {
    let text =
        format!("seed = 3\n[device]\nchip = \"jasmine-openssd\"\nblocks_per_plane = 8\n[ftl]\nkind = \"{kind}\"\n");
    RunConfig::from_toml(&text, "subpage-test").unwrap()
}

/// `n` random 4 KiB writes at 4 KiB-aligned offsets of the first `span`
/// bytes, then every one read back; returns the device.
fn random_4k_writes(kind: &str, n: u64) -> Device {
    let mut dev = Device::open(&jasmine(kind)).unwrap();
    let span = dev.capacity().min(64 << 20) / 4096;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut model = std::collections::BTreeMap::new();
    let mut t = SimTime::ZERO;
    for i in 0..n {
        let off = rng.gen_range(0..span) * 4096;
        let fill = (i % 251) as u8 + 1;
        dev.submit(t, Command::write(off, vec![fill; 4096])).unwrap();
        let c = dev.step().unwrap();
        assert!(c.result.is_ok(), "{kind}: {:?}", c.result);
        model.insert(off, fill);
        t = c.completed;
    }
    for (&off, &fill) in &model {
        dev.submit(t, Command::read(off, 4096)).unwrap();
        let c = dev.step().unwrap();
        assert_eq!(c.result.unwrap().data.unwrap(), vec![fill; 4096], "{kind}: bytes at {off}");
        t = c.completed;
    }
    dev
}

#[test]
fn four_kib_random_writes_need_no_read_modify_write_with_subpage() {
    let n = 2000;
    let sub = random_4k_writes("subpage", n);
    assert_eq!(sub.page_size(), 4096, "the host unit is the FTL's 4 KiB unit");
    let s = sub.counters();
    assert_eq!(s.rmw_pages, 0);
    // k = 8 units a 32 KiB page: one flash page programmed per 8 host writes
    // (the last, partly filled page is still in the merge buffer, and a
    // rewrite of a unit still buffered is absorbed there).
    assert!((n / 8 - 3..=n / 8).contains(&s.host_pages_written), "{s:?}");
    let base = random_4k_writes("pagemap", n);
    assert_eq!(base.page_size(), 32 * 1024);
    let b = base.counters();
    assert_eq!(b.rmw_pages, n, "every 4 KiB write is a read-modify-write of a 32 KiB page");
    assert_eq!(b.host_pages_written, n);
    // The same capacity (the same reserve of blocks), counted in each FTL's
    // own unit.
    assert_eq!(sub.capacity(), base.capacity());
    assert_eq!(sub.logical_pages(), 8 * base.logical_pages());
}

#[test]
fn a_flush_makes_the_merge_buffer_durable_across_a_power_cut() {
    let mut dev = Device::open(&jasmine("subpage")).unwrap();
    let mut t = SimTime::ZERO;
    for (i, off) in [0u64, 8192, 4096 * 17].into_iter().enumerate() {
        dev.submit(t, Command::write(off, vec![i as u8 + 1; 4096])).unwrap();
        t = dev.step().unwrap().completed;
    }
    dev.submit(t, Command::Flush).unwrap();
    t = dev.step().unwrap().completed;
    // A write after the flush, then a cut: only the flushed ones must survive.
    dev.submit(t, Command::write(4096, vec![9; 4096])).unwrap();
    t = dev.step().unwrap().completed;
    dev.cut_power(t).unwrap();
    dev.recover().unwrap();
    t = dev.now();
    for (i, off) in [0u64, 8192, 4096 * 17].into_iter().enumerate() {
        dev.submit(t, Command::read(off, 4096)).unwrap();
        let c = dev.step().unwrap();
        assert_eq!(c.result.unwrap().data.unwrap(), vec![i as u8 + 1; 4096]);
        t = c.completed;
    }
}

/// The replay engine maps a trace's sectors to 4 KiB units: 4 KiB writes are
/// whole units, 2 KiB ones are merged into theirs.
#[test]
fn a_trace_of_4k_writes_replays_in_units_without_read_modify_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.trace");
    let mut f = std::fs::File::create(&path).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    // MQSim format: time_ns dev lba_sectors size_sectors op (0 = write).
    for i in 0..800u64 {
        writeln!(f, "{} 0 {} 8 0", i * 10_000, rng.gen_range(0..4096u64) * 8).unwrap();
    }
    writeln!(f, "9000000 0 4 4 0").unwrap(); // 2 KiB inside unit 0: merged
    writeln!(f, "9100000 0 0 64 1").unwrap(); // read 32 KiB back
    drop(f);
    let trace = |kind: &str| {
        let mut c = jasmine(kind);
        let extra = RunConfig::from_toml(
            &format!(
                "seed = 3\n[device]\nchip = \"jasmine-openssd\"\nblocks_per_plane = 8\n[ftl]\nkind = \"{kind}\"\n\
                 [workload]\ntrace = \"{}\"\ntrace_format = \"mqsim\"\naddress = \"compact\"\n",
                path.display()
            ),
            "t",
        )
        .unwrap();
        c.workload = extra.workload;
        run(&c, &mut |_| {}).unwrap()
    };
    let sub = trace("subpage");
    assert_eq!(sub.integrity, "ok");
    assert_eq!((sub.host_pages_written, sub.rmw_pages, sub.host_pages_read), (801, 1, 8));
    assert!(sub.space_utilization < 1.0 && sub.space_utilization > 0.8, "{}", sub.space_utilization);
    let base = trace("pagemap");
    assert_eq!(base.integrity, "ok");
    assert_eq!((base.host_pages_written, base.rmw_pages, base.host_pages_read), (801, 801, 1));
}

/// `nameless-split` (request-queue packing, the Nameless-Write prototype's
/// host FTL): each host command's units go to fresh pages of their own, so a
/// 32 KiB command is one page program and eight 4 KiB commands are eight;
/// every completed write survives a power cut without a flush.
#[test]
fn nameless_split_gives_each_command_its_own_pages_and_keeps_every_completed_write() {
    let mut dev = Device::open(&jasmine("nameless-split")).unwrap();
    assert_eq!(dev.page_size(), 4096);
    let mut t = SimTime::ZERO;
    let programs = |dev: &Device| dev.flash().counters().programs.get(ftlab_ftl::Purpose::Host);
    // One 32 KiB command: its eight units in one page.
    let whole: Vec<u8> = (0..32 * 1024).map(|i| (i / 4096) as u8 + 1).collect();
    dev.submit(t, Command::write(0, whole.clone())).unwrap();
    t = dev.step().unwrap().completed;
    assert_eq!(programs(&dev), 1);
    // Eight 4 KiB commands: a page each.
    for i in 0..8u64 {
        dev.submit(t, Command::write(65536 + i * 4096, vec![i as u8 + 20; 4096])).unwrap();
        t = dev.step().unwrap().completed;
    }
    assert_eq!(programs(&dev), 9);
    // A 12 KiB command across a 32 KiB boundary: three units, one page.
    dev.submit(t, Command::write(7 * 4096, vec![99; 3 * 4096])).unwrap();
    t = dev.step().unwrap().completed;
    assert_eq!(programs(&dev), 10);
    // No flush: a cut keeps every completed write.
    dev.cut_power(t).unwrap();
    dev.recover().unwrap();
    t = dev.now();
    let mut want = whole;
    want[7 * 4096..].copy_from_slice(&[99; 4096]);
    for (off, bytes) in [(0u64, want), (8 * 4096, vec![99; 8192])] {
        dev.submit(t, Command::read(off, bytes.len() as u64)).unwrap();
        let c = dev.step().unwrap();
        assert_eq!(c.result.unwrap().data.unwrap(), bytes, "bytes at {off}");
        t = c.completed;
    }
    for i in 0..8u64 {
        dev.submit(t, Command::read(65536 + i * 4096, 4096)).unwrap();
        let c = dev.step().unwrap();
        assert_eq!(c.result.unwrap().data.unwrap(), vec![i as u8 + 20; 4096]);
        t = c.completed;
    }
}

/// The replay engine hands a request's units to the FTL as one request
/// (`Hint::more`): 16 KiB random writes on `nameless-split` program one page
/// each, 4 KiB ones one page each too, and `subpage` packs both 8 units a page.
#[test]
fn the_engine_hands_nameless_split_each_request_as_one_request_queue() {
    let programmed = |kind: &str, block: u32| {
        let text = format!(
            "seed = 3\n[device]\nchip = \"jasmine-openssd\"\nblocks_per_plane = 8\n[ftl]\nkind = \"{kind}\"\n\
             [host]\nqueue_depth = 4\nmode = \"closed\"\n[workload]\nblock_bytes = {block}\n\
             generator = {{ kind = \"uniform\", requests = 400, read_fraction = 0.0 }}\n"
        );
        let r = run(&RunConfig::from_toml(&text, "t").unwrap(), &mut |_| {}).unwrap();
        assert_eq!(r.integrity, "ok");
        (r.host_pages_written, r.flash_pages_programmed)
    };
    assert_eq!(programmed("nameless-split", 16384), (1600, 400));
    assert_eq!(programmed("nameless-split", 4096), (400, 400));
    let (units, pages) = programmed("subpage", 16384);
    assert_eq!(units, 1600);
    assert!((195..=200).contains(&pages), "{pages}");
}
