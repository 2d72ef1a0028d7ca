//! Fuzzing the device's command stream against a byte model: random reads,
//! writes, trims, write-zeroes and flushes at any offset and length (aligned or
//! not, inside the device or past it), with power cuts and recovery in between,
//! at queue depth up to 8. Bad commands must fail with an `Invalid` error and
//! change nothing; everything else must read back what the model holds; nothing
//! may panic. Proptest shrinks a failure to a minimal command sequence.
//!
//! For a long run outside CI: `FTLAB_FUZZ_CASES=5000 cargo test --release -p
//! ftlab-sim --test fuzz_device`; failures are kept by proptest in
//! `fuzz_device.proptest-regressions` and replayed by every later run.
#![allow(clippy::unwrap_used)]

use ftlab_ftl::ErrorKind;
use ftlab_sim::device::{Command, Completion, Device};
use ftlab_sim::RunConfig;
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("FTLAB_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(24)
}

/// A small device: 2 channels x 2 ways x 1 die x 1 plane (2 planes for
/// `pagemap-multi-plane` and `pagemap-mqsim-pcwd`) x 6 blocks (10 for
/// `pagemap-mqsim-pcwd`) x 8 pages of 4 KiB, so GC runs within a few hundred
/// commands. `subpage-1k` is the
/// sub-page FTL with 1 KiB units (4 a page), `nameless-split-1k` the same with
/// request-queue packing.
fn device(kind: &str, buffer: bool) -> Device {
    let ftl = match kind {
        "subpage-1k" => "kind = \"subpage\"\nunit_bytes = 1024".to_owned(),
        "nameless-split-1k" => "kind = \"nameless-split\"\nunit_bytes = 1024".to_owned(),
        "pagemap-multi-plane" => "kind = \"pagemap\"\nplane_allocation = \"multi-plane\"".to_owned(),
        "pagemap-mqsim-pcwd" => "kind = \"pagemap\"\ngc_model = \"mqsim\"\ngc_max_victims_per_plane = 2\n\
                                 plane_allocation_scheme = \"PCWD\""
            .to_owned(),
        _ => format!("kind = \"{kind}\""),
    };
    // The multi-plane placement needs the chip's multi-plane programs; cache
    // program and erase suspension come with them here.
    let commands = if kind == "pagemap-multi-plane" {
        "planes = 2\n[device.commands]\nmulti_plane = true\ncache_program = true\nerase_suspension = true\nsuspend_erase_ns = 20000\n"
    } else if kind == "pagemap-mqsim-pcwd" {
        "planes = 2\n[device.commands]\nmulti_plane = true\n"
    } else {
        ""
    };
    // The mqsim model keeps 6 blocks a plane besides data.
    let blocks = if kind == "pagemap-mqsim-pcwd" { 10 } else { 6 };
    let toml = format!(
        "[device]\nchip = \"small-slc\"\nblocks_per_plane = {blocks}\npages_per_block = 8\n{}\n{commands}[ftl]\n{ftl}\n",
        if buffer { "write_buffer_pages = 4" } else { "" }
    );
    Device::open(&RunConfig::from_toml(&toml, "fuzz").unwrap()).unwrap()
}

#[derive(Debug, Clone)]
enum Op {
    /// A command at sector `sector` of `sectors` sectors, shifted by `skew`
    /// bytes (0 most of the time: aligned); `what` picks the command.
    Cmd { what: u8, sector: u64, sectors: u64, skew: u64, fill: u8 },
    /// Let the in-flight commands complete.
    Drain,
    /// Flush, cut the power at the clock, recover.
    Cut,
}

fn op() -> impl Strategy<Value = Op> {
    let skew = prop_oneof![8 => Just(0u64), 1 => 1..512u64];
    prop_oneof![
        20 => (0..6u8, 0..800u64, 0..20u64, skew, any::<u8>())
            .prop_map(|(what, sector, sectors, skew, fill)| Op::Cmd { what, sector, sectors, skew, fill }),
        2 => Just(Op::Drain),
        1 => Just(Op::Cut),
    ]
}

/// Checks a completion: errors where the command was bad, the model's bytes
/// where it read.
fn check(c: Completion, expect: &mut std::collections::BTreeMap<u64, Option<Vec<u8>>>) {
    let want = expect.remove(&c.tag).unwrap();
    match (want, c.result) {
        (None, Err(e)) => assert_eq!(e.kind(), ErrorKind::Invalid, "{e}"),
        (None, Ok(_)) => panic!("tag {}: a bad {} succeeded", c.tag, c.command),
        (Some(_), Err(e)) => panic!("tag {}: {} failed: {e}", c.tag, c.command),
        (Some(want), Ok(reply)) => {
            if let Some(got) = reply.data {
                assert!(got == want, "tag {}: a read returned other bytes than written", c.tag);
            }
        }
    }
}

/// Pages of `offset..offset + len` are written again: no longer trimmed.
fn forget_trims(trimmed: &mut std::collections::BTreeSet<u64>, offset: u64, len: u64, ps: u64) {
    for lpn in offset / ps..(offset + len).div_ceil(ps) {
        trimmed.remove(&lpn);
    }
}

fn run(kind: &str, buffer: bool, ops: &[Op]) {
    let mut dev = device(kind, buffer);
    let cap = dev.capacity();
    let mut model = vec![0u8; cap as usize];
    // What each command in flight must return: `None` an error, else the bytes
    // a read must return (empty for other commands).
    let mut expect = std::collections::BTreeMap::new();
    // Pages trimmed since they were last written.
    let mut trimmed = std::collections::BTreeSet::new();
    if kind == "pagemap-multi-plane" || kind == "pagemap-mqsim-pcwd" {
        // An opening write of 8 aligned pages on the fresh device, whose
        // planes all stand at page 0: pages on the two planes of a die go out
        // as multi-plane programs (whether a random command's pages can pair
        // depends on where each plane's open block stands).
        let len = 8 * dev.page_size();
        let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        model[..len as usize].copy_from_slice(&data);
        let c = dev.execute(Command::Write { offset: 0, data, fua: false });
        assert!(c.result.is_ok(), "the opening write failed");
        assert!(dev.flash().counters().multi_plane.total() > 0, "no multi-plane program in the opening write");
    }
    for op in ops {
        match *op {
            Op::Cmd { what, sector, sectors, skew, fill } => {
                let offset = sector * 512 + skew;
                let len = sectors * 512;
                let valid = skew == 0 && len > 0 && offset + len <= cap;
                let range = offset as usize..(offset + len) as usize;
                let (cmd, want) = match what {
                    0 | 1 => {
                        let data: Vec<u8> = (0..len).map(|i| fill.wrapping_add(i as u8)).collect();
                        if valid {
                            model[range].copy_from_slice(&data);
                            forget_trims(&mut trimmed, offset, len, dev.page_size());
                        }
                        (Command::Write { offset, data, fua: what == 1 }, Vec::new())
                    }
                    2 => (Command::read(offset, len), if valid { model[range].to_vec() } else { Vec::new() }),
                    3 => {
                        if valid {
                            model[range].fill(0);
                            forget_trims(&mut trimmed, offset, len, dev.page_size());
                        }
                        (Command::WriteZeroes { offset, len, fua: false, may_trim: fill % 2 == 0 }, Vec::new())
                    }
                    4 => (Command::Flush, Vec::new()),
                    _ => {
                        // Trim whole pages after zeroing them, so the model
                        // holds either way (a trim is advisory); after a power
                        // cut they may hold older data (a trim is not durable).
                        if valid {
                            let ps = dev.page_size();
                            let (a, b) = (offset.div_ceil(ps) * ps, (offset + len) / ps * ps);
                            if a < b {
                                let z = Command::WriteZeroes { offset: a, len: b - a, fua: false, may_trim: false };
                                let tag = dev.submit(dev.now(), z).unwrap();
                                expect.insert(tag, Some(Vec::new()));
                                model[a as usize..b as usize].fill(0);
                                trimmed.extend(a / ps..b / ps);
                            }
                        }
                        (Command::Trim { offset, len }, Vec::new())
                    }
                };
                let valid = valid || matches!(cmd, Command::Flush);
                let tag = dev.submit(dev.now(), cmd).unwrap();
                expect.insert(tag, valid.then_some(want));
                while dev.in_flight() >= 8 {
                    check(dev.step().unwrap(), &mut expect);
                }
            }
            Op::Drain => {
                while let Some(c) = dev.step() {
                    check(c, &mut expect);
                }
            }
            Op::Cut => {
                let tag = dev.submit(dev.now(), Command::Flush).unwrap();
                expect.insert(tag, Some(Vec::new()));
                while let Some(c) = dev.step() {
                    check(c, &mut expect);
                }
                let now = dev.now();
                dev.cut_power(now).unwrap();
                dev.recover().unwrap();
                // A trimmed page may come back with any data it held.
                let ps = dev.page_size();
                for lpn in std::mem::take(&mut trimmed) {
                    let got = dev.execute(Command::read(lpn * ps, ps)).result.unwrap().data.unwrap();
                    model[(lpn * ps) as usize..((lpn + 1) * ps) as usize].copy_from_slice(&got);
                }
            }
        }
    }
    while let Some(c) = dev.step() {
        check(c, &mut expect);
    }
    assert!(expect.is_empty());
    let c = dev.execute(Command::read(0, cap));
    assert!(c.result.unwrap().data.unwrap() == model, "the device differs from the model at the end");
}

/// A power cut right after a write that folded a logical block lost the
/// acknowledged pages 91-94 (found by `nftl_command_stream_matches_the_model`).
#[test]
fn nftl_cut_after_a_fold_keeps_acknowledged_pages() {
    let ops = vec![
        Op::Cmd { what: 0, sector: 373, sectors: 12, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 128, sectors: 0, skew: 0, fill: 0 },
        Op::Cmd { what: 2, sector: 0, sectors: 0, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 303, sectors: 18, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 64, sectors: 1, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 0, sectors: 0, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 256, sectors: 9, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 724, sectors: 13, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 64, sectors: 0, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 120, sectors: 9, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 64, sectors: 0, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 189, sectors: 4, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 752, sectors: 17, skew: 0, fill: 0 },
        Op::Cmd { what: 5, sector: 317, sectors: 19, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 688, sectors: 17, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 0, sectors: 0, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 0, sectors: 0, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 323, sectors: 6, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 314, sectors: 7, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 254, sectors: 19, skew: 0, fill: 0 },
        Op::Cmd { what: 5, sector: 311, sectors: 17, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 0, sectors: 0, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 443, sectors: 6, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 738, sectors: 7, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 699, sectors: 6, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 0, sectors: 0, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 0, sectors: 0, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 0, sectors: 0, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 0, sectors: 0, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 686, sectors: 19, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 0, sectors: 0, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 710, sectors: 11, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 0, sectors: 0, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 0, sectors: 0, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 705, sectors: 16, skew: 0, fill: 0 },
        Op::Cmd { what: 0, sector: 760, sectors: 1, skew: 0, fill: 0 },
        Op::Cut,
    ];
    run("nftl", false, &ops);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn pagemap_command_stream_matches_the_model(ops in proptest::collection::vec(op(), 1..300)) {
        run("pagemap", false, &ops);
    }

    #[test]
    fn buffered_pagemap_command_stream_matches_the_model(ops in proptest::collection::vec(op(), 1..300)) {
        run("pagemap", true, &ops);
    }

    #[test]
    fn nftl_command_stream_matches_the_model(ops in proptest::collection::vec(op(), 1..300)) {
        run("nftl", false, &ops);
    }

    #[test]
    fn dftl_command_stream_matches_the_model(ops in proptest::collection::vec(op(), 1..300)) {
        run("dftl", false, &ops);
    }

    /// Byte-store power cuts (after a flush) of the sub-page FTL, with
    /// commands in 512-byte sectors on 1 KiB units.
    #[test]
    fn subpage_command_stream_matches_the_model(ops in proptest::collection::vec(op(), 1..300)) {
        run("subpage-1k", false, &ops);
    }

    /// The page map placing a command's pages by multi-plane programs, with
    /// cache program and erase suspension on.
    #[test]
    fn multi_plane_pagemap_command_stream_matches_the_model(ops in proptest::collection::vec(op(), 1..300)) {
        run("pagemap-multi-plane", false, &ops);
    }

    /// The page map with the mqsim GC model and a plane-first allocation
    /// (PCWD) on a chip with multi-plane programs: a command's pages on the
    /// planes of a die go out together.
    #[test]
    fn mqsim_pcwd_multi_plane_command_stream_matches_the_model(ops in proptest::collection::vec(op(), 1..300)) {
        run("pagemap-mqsim-pcwd", false, &ops);
    }

    /// The same with request-queue packing (`nameless-split`): each command's
    /// units in pages of their own, durable once completed.
    #[test]
    fn nameless_split_command_stream_matches_the_model(ops in proptest::collection::vec(op(), 1..300)) {
        run("nameless-split-1k", false, &ops);
    }
}
