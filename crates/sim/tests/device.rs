//! The device driven one command at a time, with real bytes: sector-granular
//! partial writes against a byte model through garbage collection, flush and
//! FUA with a write-back buffer, power cuts, ordering of completions and the
//! kinds of errors.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use ftlab_ftl::ErrorKind;
use ftlab_nand::SimTime;
use ftlab_sim::device::{Command, Completion, Device, DeviceError, SECTOR};
use ftlab_sim::RunConfig;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A small device (small-slc, 16 blocks per plane) with FTL `kind` and extra
/// `[device]` lines.
fn device(kind: &str, device_extra: &str) -> Device {
    let toml = format!(
        "seed = 3\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 16\n{device_extra}\n[ftl]\nkind = \"{kind}\"\n"
    );
    let config = RunConfig::from_toml(&toml, "test").unwrap();
    Device::open(&config).unwrap()
}

/// Runs `cmd` at the clock and returns its completion, which must succeed.
fn ok(dev: &mut Device, cmd: Command) -> Completion {
    let name = cmd.name();
    let c = dev.execute(cmd);
    assert!(c.result.is_ok(), "{name} failed: {:?}", c.result);
    c
}

fn read(dev: &mut Device, offset: u64, len: u64) -> Vec<u8> {
    ok(dev, Command::read(offset, len)).result.unwrap().data.unwrap()
}

/// Random sector-aligned writes, write-zeroes and trims of 1 sector to 3 pages
/// over the whole device, totalling `rounds` times its capacity, at queue depth
/// 4; every read is checked against a byte model, then the whole device.
fn random_bytes_match_the_model(kind: &str, rounds: u64) {
    let mut dev = device(kind, "");
    let cap = dev.capacity();
    let ps = dev.page_size();
    let sectors = cap / SECTOR;
    let mut model = vec![0u8; cap as usize];
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut written = 0;
    let mut at = 0u64;
    // Reads in flight: what they must return (the model when they were served,
    // at submission).
    let mut reads: BTreeMap<u64, (u64, Vec<u8>)> = BTreeMap::new();
    let check = |reads: &mut BTreeMap<u64, (u64, Vec<u8>)>, c: Completion| {
        assert!(c.result.is_ok(), "{kind}: {} failed: {:?}", c.command, c.result);
        if let Some((offset, want)) = reads.remove(&c.tag) {
            let got = c.result.unwrap().data.unwrap();
            assert!(got == want, "{kind}: read of {} bytes at {offset} differs from what was written", want.len());
        }
    };
    while written < rounds * cap {
        let len = rng.gen_range(1..=3 * ps / SECTOR) * SECTOR;
        let offset = rng.gen_range(0..=sectors - len / SECTOR) * SECTOR;
        let range = offset as usize..(offset + len) as usize;
        let cmd = match rng.gen_range(0..20) {
            0..=12 => {
                let fill: u8 = rng.gen_range(1..=255);
                let data: Vec<u8> = (0..len).map(|i| fill ^ (i as u8)).collect();
                model[range.clone()].copy_from_slice(&data);
                written += len;
                Command::write(offset, data)
            }
            13..=16 => Command::read(offset, len),
            17 => {
                model[range.clone()].fill(0);
                Command::WriteZeroes { offset, len, fua: false, may_trim: rng.gen() }
            }
            _ => {
                // A trim is advisory: only pages it covers whole and the FTL
                // trims read as zeroes; write zeroes there first so the model
                // knows what they hold either way.
                let first = offset.div_ceil(ps) * ps;
                let end = (offset + len) / ps * ps;
                if first < end {
                    let zero = Command::WriteZeroes { offset: first, len: end - first, fua: false, may_trim: false };
                    dev.submit(SimTime(at), zero).unwrap();
                    model[first as usize..end as usize].fill(0);
                }
                Command::Trim { offset, len }
            }
        };
        let expect = matches!(cmd, Command::Read { .. }).then(|| model[range.clone()].to_vec());
        let tag = dev.submit(SimTime(at), cmd).unwrap();
        if let Some(want) = expect {
            reads.insert(tag, (offset, want));
        }
        // Queue depth 4: collect completions once four are in flight.
        while dev.in_flight() >= 4 {
            check(&mut reads, dev.step().unwrap());
        }
        at = dev.now().0 + rng.gen_range(0..200_000);
    }
    while let Some(c) = dev.step() {
        check(&mut reads, c);
    }
    assert!(reads.is_empty());
    for start in (0..cap).step_by(64 * ps as usize) {
        let len = (64 * ps).min(cap - start);
        let got = read(&mut dev, start, len);
        assert!(got == model[start as usize..(start + len) as usize], "{kind}: bytes at {start} differ after the run");
    }
    let c = dev.counters();
    assert!(c.erases > 0, "{kind}: {rounds} rounds over the device must reclaim blocks");
    assert!(c.rmw_pages > 0, "{kind}: partial-page writes are read-modify-writes");
    assert_eq!(c.errors, 0);
}

#[test]
fn sector_writes_keep_real_bytes_through_gc_pagemap() {
    random_bytes_match_the_model("pagemap", 3);
}

#[test]
fn sector_writes_keep_real_bytes_through_gc_other_schemes() {
    for kind in ["dftl", "nftl", "gftl", "rftl", "lazy-rtgc", "fsr", "waogc", "multilog", "zns-host"] {
        random_bytes_match_the_model(kind, 2);
    }
}

#[test]
fn a_partial_write_merges_into_the_old_page() {
    let mut dev = device("pagemap", "");
    let ps = dev.page_size() as usize;
    ok(&mut dev, Command::write(0, vec![0xaa; ps]));
    ok(&mut dev, Command::write(512, vec![0x55; 1024]));
    let page = read(&mut dev, 0, ps as u64);
    assert_eq!(&page[..512], &vec![0xaa; 512][..]);
    assert_eq!(&page[512..1536], &vec![0x55; 1024][..]);
    assert_eq!(&page[1536..], &vec![0xaa; ps - 1536][..]);
    assert_eq!(dev.counters().rmw_pages, 1);
    // Never written: zeroes, with no flash read needed.
    assert_eq!(read(&mut dev, 8 * ps as u64, 1024), vec![0; 1024]);
}

#[test]
fn completions_come_in_time_order_and_never_before_submission() {
    let mut dev = device("pagemap", "");
    let ps = dev.page_size();
    // Three writes to one die-sized stride and a read, all submitted at t = 0.
    let tags: Vec<u64> = (0..4)
        .map(|i| {
            let cmd =
                if i < 3 { Command::write(i * 64 * ps, vec![i as u8 + 1; ps as usize]) } else { Command::read(0, ps) };
            dev.submit(SimTime::ZERO, cmd).unwrap()
        })
        .collect();
    assert_eq!(dev.in_flight(), 4);
    let mut last = 0;
    let mut seen = Vec::new();
    while let Some(c) = dev.step() {
        assert!(c.completed >= c.submitted);
        assert!(c.completed.0 >= last, "completions out of time order");
        last = c.completed.0;
        assert_eq!(dev.now(), c.completed);
        seen.push(c.tag);
    }
    seen.sort_unstable();
    assert_eq!(seen, tags);
    // A submission before the clock is refused, not served in the past.
    let err = dev.submit(SimTime(last - 1), Command::read(0, 512)).unwrap_err();
    assert!(matches!(err, DeviceError::InThePast { .. }));
    assert_eq!(err.kind(), ErrorKind::Invalid);
    // step_until delivers what is due and moves the clock.
    let t = dev.submit(SimTime(last), Command::write(0, vec![9; ps as usize])).unwrap();
    assert!(dev.step_until(SimTime(last)).is_empty());
    let due = dev.step_until(SimTime(last + 10_000_000));
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].tag, t);
    assert_eq!(dev.now(), SimTime(last + 10_000_000));
}

/// `wait` takes one command's completion out of order, and the others stay
/// for `step`, in time order, their data intact.
#[test]
fn waiting_for_one_command_keeps_the_others() {
    let mut dev = device("pagemap", "");
    let ps = dev.page_size();
    let w: Vec<u64> = (0..3)
        .map(|i| dev.submit(SimTime::ZERO, Command::write(i * 64 * ps, vec![i as u8 + 1; ps as usize])).unwrap())
        .collect();
    let r = dev.submit(SimTime::ZERO, Command::read(0, ps)).unwrap();
    let last = dev.wait(w[2]).unwrap();
    assert_eq!(last.tag, w[2]);
    assert_eq!(dev.now(), last.completed);
    assert!(dev.wait(w[2]).is_none(), "a delivered completion is not delivered twice");
    assert_eq!(dev.in_flight(), 3);
    let mut rest = Vec::new();
    while let Some(c) = dev.step() {
        assert!(dev.now() >= last.completed, "the clock never goes back");
        rest.push(c);
    }
    let tags: Vec<u64> = rest.iter().map(|c| c.tag).collect();
    assert_eq!(tags.len(), 3);
    assert!(tags.contains(&w[0]) && tags.contains(&w[1]) && tags.contains(&r), "{tags:?}");
    assert!(rest.windows(2).all(|p| p[0].completed <= p[1].completed));
    let read = rest.iter().find(|c| c.tag == r).unwrap();
    assert_eq!(read.result.as_ref().unwrap().data.as_deref(), Some(&vec![1; ps as usize][..]));
    assert!(dev.wait(12345).is_none());
}

#[test]
fn errors_carry_their_kind() {
    let mut dev = device("pagemap", "");
    let cap = dev.capacity();
    let err = |dev: &mut Device, cmd: Command| dev.execute(cmd).result.unwrap_err();
    let e = err(&mut dev, Command::read(100, 512));
    assert!(matches!(e, DeviceError::Misaligned { what: "offset", .. }), "{e}");
    assert_eq!((e.kind(), e.kind().errno()), (ErrorKind::Invalid, 22));
    let e = err(&mut dev, Command::write(0, vec![1; 700]));
    assert!(matches!(e, DeviceError::Misaligned { what: "length", .. }), "{e}");
    let e = err(&mut dev, Command::read(0, 0));
    assert!(matches!(e, DeviceError::Empty { .. }), "{e}");
    let e = err(&mut dev, Command::read(cap - 512, 1024));
    assert!(matches!(e, DeviceError::OutOfRange { .. }), "{e}");
    assert!(e.to_string().contains("runs past the device"), "{e}");
    let e = err(&mut dev, Command::Trim { offset: u64::MAX - 511, len: 512 });
    assert!(matches!(e, DeviceError::OutOfRange { .. }), "{e}");
    assert_eq!(dev.counters().errors, 5);
    // Nothing was lost or changed by the bad commands.
    ok(&mut dev, Command::write(0, vec![3; 4096]));
    assert_eq!(read(&mut dev, 0, 4096), vec![3; 4096]);
    // Powered off: an I/O error until recovered.
    let now = dev.now();
    dev.cut_power(now).unwrap();
    let e = err(&mut dev, Command::read(0, 512));
    assert_eq!((e.kind(), e.kind().errno()), (ErrorKind::Io, 5));
    dev.recover().unwrap();
    assert_eq!(read(&mut dev, 0, 4096), vec![3; 4096]);
}

#[test]
fn a_device_keeping_tokens_refuses_data_commands_clearly() {
    let config = RunConfig::from_toml("[device]\nblocks_per_plane = 16\n[ftl]\nkind = \"pagemap\"\n", "t").unwrap();
    let mut sim_dev = {
        // A device built for token simulation, as the replay engine builds it.
        let nand = config.device.nand_config(1).unwrap();
        let mut flash = ftlab_ftl::Flash::new(ftlab_nand::Nand::new(&nand).unwrap());
        let builder = ftlab_ftl::registry::build("pagemap", &toml::Table::new()).unwrap();
        let ftl = builder.format(&mut flash.io(SimTime::ZERO)).unwrap();
        Device::new(flash, ftl, Some(builder))
    };
    let e = sim_dev.execute(Command::write(0, vec![0; 4096])).result.unwrap_err();
    assert!(matches!(e, DeviceError::NoBytes { .. }), "{e}");
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(e.to_string().contains("device.store = \"bytes\""), "{e}");
}

/// A device built without power cuts (as the replay engine builds its own)
/// refuses one clearly and keeps working; the same device with them takes it.
#[test]
fn a_device_without_power_cuts_refuses_a_cut() {
    let config = RunConfig::from_toml("[device]\nblocks_per_plane = 16\n[ftl]\nkind = \"pagemap\"\n", "t").unwrap();
    let build = |cuts: bool| {
        let mut nand = config.device.nand_config(1).unwrap();
        nand.store = ftlab_nand::StoreKind::Bytes;
        let mut flash = ftlab_ftl::Flash::new(ftlab_nand::Nand::new(&nand).unwrap());
        flash.set_power_cuts(cuts);
        let builder = ftlab_ftl::registry::build("pagemap", &toml::Table::new()).unwrap();
        let ftl = builder.format(&mut flash.io(SimTime::ZERO)).unwrap();
        Device::new(flash, ftl, Some(builder))
    };
    let mut dev = build(false);
    ok(&mut dev, Command::write(0, vec![5; 4096]));
    let now = dev.now();
    let e = dev.cut_power(now).unwrap_err();
    assert!(matches!(e, DeviceError::NoPowerCuts), "{e}");
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert_eq!(read(&mut dev, 0, 4096), vec![5; 4096]);
    let mut dev = build(true);
    ok(&mut dev, Command::write(0, vec![5; 4096]));
    let now = dev.now();
    dev.cut_power(now).unwrap();
}

/// With a write-back buffer: a flush or a FUA write makes what was written
/// before it survive a power cut; a write after the last flush is lost (the
/// buffer is real), and commands in flight at the cut fail with an I/O error.
#[test]
fn flush_and_fua_with_a_write_back_buffer() {
    let mut dev = device("pagemap", "write_buffer_pages = 32");
    assert_eq!(dev.durability(), ftlab_ftl::Durability::OnFlush);
    let ps = dev.page_size();
    let page = |b: u8| vec![b; ps as usize];
    // A: flushed explicitly.
    ok(&mut dev, Command::write(0, page(0xa1)));
    ok(&mut dev, Command::write(ps, page(0xa2)));
    let flush = ok(&mut dev, Command::Flush);
    assert!(flush.latency_ns() > 0, "a flush of buffered pages programs them");
    // B: written, then C with FUA (a FUA write flushes what is buffered).
    ok(&mut dev, Command::write(2 * ps, page(0xb0)));
    ok(&mut dev, Command::Write { offset: 3 * ps, data: page(0xc0), fua: true });
    // D: acknowledged from the buffer, never flushed.
    let d = ok(&mut dev, Command::write(4 * ps, page(0xd0)));
    assert_eq!(d.latency_ns(), 0, "a buffered write is acknowledged from RAM");
    // E: submitted, still in flight at the cut.
    ok(&mut dev, Command::write(5 * ps, page(0xe0)));
    let e = dev.submit(dev.now(), Command::Flush).unwrap();
    let cut = dev.now();
    dev.cut_power(cut).unwrap();
    let lost = dev.step().unwrap();
    assert_eq!(lost.tag, e);
    let err = lost.result.unwrap_err();
    assert!(matches!(err, DeviceError::PowerCut { .. }), "{err}");
    assert_eq!(err.kind(), ErrorKind::Io);
    dev.recover().unwrap();
    assert_eq!(read(&mut dev, 0, ps), page(0xa1));
    assert_eq!(read(&mut dev, ps, ps), page(0xa2));
    assert_eq!(read(&mut dev, 2 * ps, ps), page(0xb0));
    assert_eq!(read(&mut dev, 3 * ps, ps), page(0xc0));
    assert_eq!(read(&mut dev, 4 * ps, ps), page(0), "an unflushed buffered write does not survive the cut");
}

/// Without a buffer (durable on acknowledgement) every completed write survives,
/// including partial ones.
#[test]
fn a_cut_keeps_every_completed_write_of_a_write_through_ftl() {
    let mut dev = device("pagemap", "");
    let ps = dev.page_size();
    let mut model = vec![0u8; 16 * ps as usize];
    for i in 0..16u64 {
        let data = vec![i as u8 + 1; 1536];
        let off = i * ps + 512 * (i % 3);
        model[off as usize..off as usize + 1536].copy_from_slice(&data);
        ok(&mut dev, Command::write(off, data));
    }
    let now = dev.now();
    dev.cut_power(now).unwrap();
    dev.recover().unwrap();
    assert!(read(&mut dev, 0, 16 * ps) == model);
}

/// Found by `fuzz_device`: write-zeroes allowed to trim used to trim whole
/// pages, and a trim is not durable, so after a power cut the pages read back
/// their old data. Zeroes must stay zeroes.
#[test]
fn write_zeroes_stay_zeroes_across_a_power_cut() {
    let mut dev = device("pagemap", "");
    let ps = dev.page_size();
    ok(&mut dev, Command::write(0, vec![0x77; 4 * ps as usize]));
    ok(&mut dev, Command::WriteZeroes { offset: 0, len: 4 * ps, fua: false, may_trim: true });
    assert_eq!(read(&mut dev, 0, 4 * ps), vec![0; 4 * ps as usize]);
    let now = dev.now();
    dev.cut_power(now).unwrap();
    dev.recover().unwrap();
    assert_eq!(read(&mut dev, 0, 4 * ps), vec![0; 4 * ps as usize]);
}

/// The raw ZNS device through the command-level device: zone appends at the
/// write pointer, a block write there too, a write off it refused with ZNS's
/// status, reset, the report; a replay refuses it and names the host FTL.
#[test]
fn a_zoned_device_takes_zone_commands_and_replays_refuse_it() {
    let config = RunConfig::from_toml(
        "[device]\nchip = \"small-slc\"\nblocks_per_plane = 16\nstore = \"bytes\"\n[ftl]\nkind = \"zns\"\n",
        "test",
    )
    .unwrap();
    let mut dev = Device::open(&config).unwrap();
    assert!(dev.is_zoned());
    let page = dev.page_size() as usize;
    let report = dev.zone_report().unwrap();
    assert!(report.len() > 4 && report.iter().all(|z| z.state == ftlab_ftl::ZoneState::Empty));
    let zone_bytes = u64::from(report[1].start) * page as u64;
    // Two pages appended to zone 1, then a block write at its write pointer.
    let (offset, done) = dev.zone_append(dev.now(), 1, &vec![7u8; 2 * page]).unwrap();
    assert_eq!(offset, zone_bytes);
    assert!(done > SimTime::ZERO);
    let c = dev.execute(Command::write(zone_bytes + 2 * page as u64, vec![8u8; page]));
    assert!(c.result.is_ok(), "{:?}", c.result);
    // Off the write pointer: Zone Invalid Write.
    let c = dev.execute(Command::write(zone_bytes + 5 * page as u64, vec![9u8; page]));
    let e = c.result.unwrap_err();
    assert!(e.to_string().contains("whose write pointer is at page 3"), "{e}");
    let z = &dev.zone_report().unwrap()[1];
    assert_eq!((z.write_pointer - z.start, z.state), (3, ftlab_ftl::ZoneState::ImplicitlyOpened));
    let c = dev.execute(Command::read(zone_bytes, 3 * page as u64));
    let data = c.result.unwrap().data.unwrap();
    assert_eq!((&data[..page], &data[2 * page..]), (&vec![7u8; page][..], &vec![8u8; page][..]));
    // Finish (a marker page, in the store's bytes), then reset: empty, its
    // data gone.
    dev.zone_manage(dev.now(), 1, ftlab_ftl::ZoneAction::Finish).unwrap();
    assert_eq!(dev.zone_report().unwrap()[1].state, ftlab_ftl::ZoneState::Full);
    dev.zone_manage(dev.now(), 1, ftlab_ftl::ZoneAction::Reset).unwrap();
    assert_eq!(dev.zone_report().unwrap()[1].state, ftlab_ftl::ZoneState::Empty);
    let e = dev.zone_manage(dev.now(), 1, ftlab_ftl::ZoneAction::Offline).unwrap_err();
    assert!(e.to_string().contains("zone 1"), "{e}");
    // A block device refuses zone commands; a replay refuses the zoned device.
    let pagemap = RunConfig::from_toml("[device]\nchip = \"small-slc\"\nblocks_per_plane = 16\n", "test").unwrap();
    let e = Device::open(&pagemap).unwrap().zone_report().unwrap_err();
    assert_eq!(e.kind(), ftlab_ftl::ErrorKind::Unsupported, "{e}");
    let e = ftlab_sim::run(&config, &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("zns-host"), "{e}");
}
