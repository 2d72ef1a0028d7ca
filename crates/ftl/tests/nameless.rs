//! The Nameless-Write device's own suite (003 Section 3.4, Table 3), driven by
//! the file-system model `ftlab_ftl::schemes::host::nameless::host`: random file operations
//! with every data block read back at the address the host holds; power cuts
//! at random points, recovery and the replay of migrations (the crash race),
//! after which every block the recovered inodes name reads back its
//! acknowledged data; injected program and erase failures; redirects of
//! pending migrations; the typed errors of bad input; determinism.
//!
//! The random suites run 8 seeds each (the raw-command suite 32 cases);
//! `FTLAB_FUZZ_CASES=200` runs more. The fault suite runs 6 seeds;
//! `FTLAB_FAULT_SEEDS=200` runs more.
#![allow(clippy::unwrap_used)]

use ftlab_ftl::conformance::{nand_config, proptest, Geometry};
use ftlab_ftl::schemes::host::nameless::host::{tag, HostFs, Rig};
use ftlab_ftl::schemes::host::nameless::{NamelessConfig, PhysAddr};
use ftlab_ftl::{ErrorKind, Flash, FtlError};
use ftlab_nand::{BlockId, Faults, Nand, NandConfig, NandError, Payload, SimTime};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A small device so a few thousand operations fill it many times: 2 dies, 32
/// blocks of 8 pages (256 pages).
fn tiny() -> Geometry {
    Geometry {
        channels: 1,
        ways_per_channel: 1,
        dies_per_way: 2,
        planes_per_die: 1,
        blocks_per_plane: 16,
        pages_per_block: 8,
        page_size: 4096,
        oob_size: 128,
    }
}

/// 10% of the capacity as metadata space: 21 inodes on the tiny device.
fn config() -> NamelessConfig {
    NamelessConfig { virtual_share: 0.1, ..NamelessConfig::default() }
}

/// Files and blocks per file of the random workload: at most 180 data pages of
/// the 195 the tiny device holds.
const FILES: u32 = 20;
const BLOCKS: u32 = 9;

fn rig_on(nand: &NandConfig) -> Rig {
    Rig::new(Flash::new(Nand::new(nand).unwrap()), Box::new(config())).unwrap()
}

fn rig(bad_block_rate: f64, seed: u64) -> Rig {
    rig_on(&nand_config(tiny(), bad_block_rate, seed))
}

fn seeds() -> u64 {
    std::env::var("FTLAB_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(8)
}

/// Every block of every file reads back, at the address its inode holds, the
/// last data the host wrote to it; the device's invariants hold.
fn check_all(host: &mut HostFs, rig: &mut Rig) {
    check_blocks(host, rig);
    assert_eq!(rig.device().pending_migrations(), 0, "the host acknowledged every migration");
}

/// As [`check_all`], on a faulty medium: a migration whose inode write failed
/// stays pending (redirected) until the host writes the inode again.
fn check_blocks(host: &mut HostFs, rig: &mut Rig) {
    let blocks: Vec<(u32, u32, u64)> =
        host.files.iter().flat_map(|(&f, v)| v.iter().enumerate().map(move |(i, b)| (f, i as u32, b.token))).collect();
    for (f, i, token) in blocks {
        let got = host.read(rig, f, i).unwrap_or_else(|e| panic!("file {f} block {i}: {e}"));
        assert_eq!(got, Payload::Token(token), "file {f} block {i}");
    }
    rig.ftl.check_invariants(&rig.flash).unwrap();
    let data: usize = host.files.values().map(Vec::len).sum();
    let d = rig.device();
    assert_eq!(d.data_pages(), data as u64, "live data pages on the device, data blocks in the files");
}

/// An error a fault on the medium may cause (or a full device): of kind I/O
/// or no space, never the use of a block gone bad.
fn fault_error(e: &FtlError) {
    assert!(matches!(e.kind(), ErrorKind::Io | ErrorKind::NoSpace), "{e:?} ({e})");
    assert!(!matches!(e, FtlError::Nand(NandError::GrownBad(_) | NandError::BadBlock(_))), "{e}");
}

/// A raw command of the Table 3 interface, for the model-based suite.
#[derive(Debug, Clone)]
enum Cmd {
    /// A nameless write of a new block.
    Write,
    /// A new version of held block `i` (modulo the blocks held), then the old
    /// one freed.
    Overwrite(usize),
    Free(usize),
    Read(usize),
    VirtualWrite(u32),
    VirtualRead(u32),
    /// Take the queued migrations and apply them; acknowledge them (and every
    /// one applied earlier) only if `ack`.
    Drain {
        ack: bool,
    },
}

fn cmds() -> impl Strategy<Value = Vec<Cmd>> {
    let cmd = prop_oneof![
        3 => Just(Cmd::Write),
        6 => any::<usize>().prop_map(Cmd::Overwrite),
        1 => any::<usize>().prop_map(Cmd::Free),
        3 => any::<usize>().prop_map(Cmd::Read),
        1 => (0u32..21).prop_map(Cmd::VirtualWrite),
        1 => (0u32..21).prop_map(Cmd::VirtualRead),
        2 => any::<bool>().prop_map(|ack| Cmd::Drain { ack }),
    ];
    proptest::collection::vec(cmd, 1..2000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: seeds() as u32 * 4, ..ProptestConfig::default() })]
    /// Random raw commands against a reference model of what the host holds:
    /// every data block reads back its last data at the address the host
    /// holds, whether the migrations of it were applied and acknowledged,
    /// applied only, or not yet taken (redirected, through chains of moves);
    /// metadata reads back its last write. The first divergence fails and
    /// shrinks.
    #[test]
    fn raw_commands_match_the_model(ops in cmds()) {
        let mut rig = rig(0.0, 3);
        // Held blocks: tag, address, token.
        let mut held: Vec<(u32, PhysAddr, u64)> = Vec::new();
        let mut meta: Vec<Option<u64>> = vec![None; 21];
        let mut applied = Vec::new();
        let limit = rig.device().data_capacity() as usize - 2;
        for (next, op) in (1u64..).zip(ops.iter()) {
            match *op {
                Cmd::Write if held.len() < limit => {
                    let (tag, token) = (next as u32, next);
                    let a = rig.cmd(|d, io| d.nameless_write(io, tag, Payload::Token(token))).0.unwrap();
                    held.push((tag, a, token));
                }
                Cmd::Overwrite(i) if !held.is_empty() => {
                    let i = i % held.len();
                    let (tag, old, _) = held[i];
                    let a = rig.cmd(|d, io| d.nameless_write(io, tag, Payload::Token(next))).0.unwrap();
                    rig.cmd(|d, io| d.free(io, old)).0.unwrap();
                    held[i] = (tag, a, next);
                }
                Cmd::Free(i) if !held.is_empty() => {
                    let (_, a, _) = held.swap_remove(i % held.len());
                    rig.cmd(|d, io| d.free(io, a)).0.unwrap();
                }
                Cmd::Read(i) if !held.is_empty() => {
                    let (tag, a, token) = held[i % held.len()];
                    let got = rig.cmd(|d, io| d.physical_read(io, a)).0;
                    prop_assert_eq!(got, Ok(Payload::Token(token)), "tag {} at {}", tag, a);
                }
                Cmd::VirtualWrite(l) => {
                    rig.cmd(|d, io| d.virtual_write(io, l, Payload::Token(next))).0.unwrap();
                    meta[l as usize] = Some(next);
                }
                Cmd::VirtualRead(l) => {
                    let got = rig.cmd(|d, io| d.virtual_read(io, l)).0.unwrap();
                    prop_assert_eq!(got, meta[l as usize].map(Payload::Token), "metadata {}", l);
                }
                Cmd::Drain { ack } => {
                    for m in rig.device().take_migrations() {
                        if let Some(h) = held.iter_mut().find(|h| Some(h.1) == m.old) {
                            prop_assert_eq!(h.0, m.tag);
                            h.1 = m.new;
                        }
                        applied.push(m);
                    }
                    if ack {
                        for m in applied.drain(..) {
                            rig.device().ack_migration(&m);
                        }
                    }
                }
                _ => {}
            }
            rig.now = SimTime(rig.now.0 + 20_000);
        }
        rig.ftl.check_invariants(&rig.flash).unwrap();
        prop_assert_eq!(rig.device().data_pages(), held.len() as u64);
        for (tag, a, token) in held {
            prop_assert_eq!(rig.cmd(|d, io| d.physical_read(io, a)).0, Ok(Payload::Token(token)), "tag {}", tag);
        }
    }
}

/// Random file operations at about half fill, many times over: every read
/// matches (checked inside the model), and at the end every block reads back.
#[test]
fn random_file_operations_read_back() {
    for seed in 0..seeds() {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut rig = rig(if seed % 2 == 0 { 0.0 } else { 0.05 }, seed);
        let mut host = HostFs::new();
        for _ in 0..3000 {
            host.random_op(&mut rig, &mut rng, FILES, BLOCKS).unwrap();
        }
        check_all(&mut host, &mut rig);
        let migrations = rig.device().migrations();
        assert!(migrations > 100, "seed {seed}: only {migrations} migrations; GC must move data pages");
        assert_eq!(
            host.migrations_applied + host.migrations_stale,
            migrations,
            "seed {seed}: every migration reached the host"
        );
        assert!(host.migrations_applied * 10 > migrations * 9, "seed {seed}: few migrations applied");
    }
}

/// What the recovered device must give back after a cut at `t`: each inode
/// reads back a version written at or after the last one acknowledged by `t`
/// (or nothing, if none was), and once the replay is applied every block an
/// inode names reads back, at the address the host holds, the token that
/// inode version names or one written later under the same tag.
fn check_after_cut(host: &mut HostFs, rig: &mut Rig, t: SimTime, faulty: bool) {
    for (&lba, versions) in &host.inode_writes {
        let (r, _) = rig.cmd(|d, io| d.virtual_read(io, lba));
        let got = match r.unwrap() {
            Some(Payload::Token(tok)) => Some(tok),
            None => None,
            Some(p) => panic!("inode {lba}: {p:?}"),
        };
        let last_acked = versions.iter().rposition(|v| v.1.is_some_and(|a| a <= t));
        let ok = match (got, last_acked) {
            (None, None) => true,
            (None, Some(_)) => false,
            (Some(tok), m) => versions.iter().position(|v| v.0 == tok).is_some_and(|i| m.is_none_or(|m| i >= m)),
        };
        assert!(ok, "inode {lba} after a cut at {t}: read {got:?}, versions {versions:?}");
    }
    if let Err(e) = host.recover(rig) {
        // On a faulty medium the inodes the replay changed may fail to be
        // written (blocks gone bad ate the spare space): the addresses in RAM
        // are set all the same, and reads must still find every block.
        assert!(faulty, "recovery of the host after a cut at {t}: {e}");
        fault_error(&e);
    }
    let blocks: Vec<(u32, u32, u64)> =
        host.files.iter().flat_map(|(&f, v)| v.iter().enumerate().map(move |(i, b)| (f, i as u32, b.token))).collect();
    for (f, i, token) in blocks {
        let got = match host.read(rig, f, i) {
            Ok(Payload::Token(g)) => g,
            r => panic!("file {f} block {i} after a cut at {t}: {r:?} (acknowledged data lost)"),
        };
        let w = &host.written[&tag(f, i)];
        let at = w.iter().position(|&x| x == token).unwrap();
        assert!(
            w[at..].contains(&got),
            "file {f} block {i} after a cut at {t}: read token {got}, the inode names {token}, written {w:?}"
        );
        // From now on the block holds what it read.
        host.files.get_mut(&f).unwrap()[i as usize].token = got;
    }
    rig.ftl.check_invariants(&rig.flash).unwrap();
}

/// Power cuts at random points of random file operations, recovery, the
/// replay applied by the host, more operations, another cut.
#[test]
fn power_cuts_then_replay_keep_acknowledged_data() {
    let mut replays = 0;
    for seed in 0..seeds() {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut rig = rig(if seed % 2 == 0 { 0.0 } else { 0.05 }, seed);
        let mut host = HostFs::new();
        for _ in 0..3 {
            for _ in 0..rng.gen_range(100..2000) {
                host.random_op(&mut rig, &mut rng, FILES, BLOCKS).unwrap();
            }
            // From the issue of the last command (tearing it, unacknowledged)
            // to 3 ms after its completion (tearing background work).
            let t = SimTime(rig.last_issue.0 + rng.gen_range(0..=rig.now.0 - rig.last_issue.0 + 3_000_000));
            rig.cut_and_recover(t).unwrap();
            check_after_cut(&mut host, &mut rig, t, false);
            for _ in 0..200 {
                host.random_op(&mut rig, &mut rng, FILES, BLOCKS).unwrap();
            }
            check_all(&mut host, &mut rig);
        }
        replays += host.replays_applied;
    }
    assert!(replays > 0, "no cut left the host holding a moved block's old address: the suite tests nothing");
}

/// A cut right after garbage collection moved pages whose migrations the host
/// has not applied: without the replay the host would hold erased addresses.
#[test]
fn a_cut_before_the_host_applies_migrations_is_replayed() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut rig = rig(0.0, 7);
    let mut host = HostFs::new();
    for f in 0..FILES {
        host.create(&mut rig, f, BLOCKS).unwrap();
    }
    host.drain(&mut rig).unwrap();
    // Overwrite without draining until garbage collection moved some blocks.
    let mut n = 0;
    while rig.device().pending_migrations() == 0 {
        let f = rng.gen_range(0..FILES);
        host.overwrite(&mut rig, f, rng.gen_range(0..BLOCKS)).unwrap();
        n += 1;
        assert!(n < 10_000, "garbage collection never moved a data page");
    }
    let t = rig.now;
    rig.cut_and_recover(t).unwrap();
    check_after_cut(&mut host, &mut rig, t, false);
    assert!(host.replays_applied > 0, "the host held old addresses of moved blocks; the replay must fix them");
    check_all(&mut host, &mut rig);
}

/// While a migration is pending, the old address reads (and frees) the moved
/// page; once acknowledged the old address is refused, naming the reason.
#[test]
fn pending_migrations_redirect_until_acknowledged() {
    let mut rig = rig(0.0, 1);
    let mut addrs = Vec::new();
    // Fill most of the device with data, then overwrite a subset (freeing the
    // old versions) until garbage collection moves the rest.
    let cap = rig.device().data_capacity();
    for i in 0..cap as u32 - 8 {
        let (a, _) = rig.cmd(|d, io| d.nameless_write(io, i, Payload::Token(u64::from(i) + 1)));
        addrs.push(a.unwrap());
    }
    let mut tokens: Vec<u64> = (1..=addrs.len() as u64).collect();
    let mut i = 0u64;
    let moved = loop {
        let ms = rig.device().take_migrations();
        if let Some(m) = ms.into_iter().find(|m| m.old.is_some()) {
            break m;
        }
        let k = (i * 7919 % addrs.len() as u64) as usize;
        let (a, _) = rig.cmd(|d, io| d.nameless_write(io, k as u32, Payload::Token(1000 + i)));
        tokens[k] = 1000 + i;
        let old = std::mem::replace(&mut addrs[k], a.unwrap());
        rig.cmd(|d, io| d.free(io, old)).0.unwrap();
        i += 1;
        assert!(i < 10_000);
    };
    let old = moved.old.unwrap();
    assert!(rig.device().pending_migrations() > 0);
    let want = Payload::Token(tokens[moved.tag as usize]);
    assert_eq!(rig.cmd(|d, io| d.physical_read(io, old)).0.unwrap(), want, "redirected read");
    assert_eq!(rig.cmd(|d, io| d.physical_read(io, moved.new)).0.unwrap(), want);
    rig.device().ack_migration(&moved);
    let e = rig.cmd(|d, io| d.physical_read(io, old)).0.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    let msg = e.to_string();
    assert!(msg.contains(&format!("{:#x}", old.0)) && msg.contains("migrations"), "{msg}");
    // Acknowledging again is a no-op; the new address still reads.
    rig.device().ack_migration(&moved);
    assert_eq!(rig.cmd(|d, io| d.physical_read(io, moved.new)).0.unwrap(), want);
    rig.ftl.check_invariants(&rig.flash).unwrap();
}

/// Bad input: a physical read or free of an address never written, beyond the
/// device, freed, or metadata is refused with an error of kind invalid naming
/// the address and what to do; nothing panics, nothing changes.
#[test]
fn bad_addresses_are_refused_with_named_errors() {
    let mut rig = rig(0.0, 1);
    let (a, _) = rig.cmd(|d, io| d.nameless_write(io, 5, Payload::Token(50)));
    let a = a.unwrap();
    rig.cmd(|d, io| d.virtual_write(io, 0, Payload::Token(7))).0.unwrap();
    let pages = u64::from(tiny().total_pages());
    let never = PhysAddr(a.0 + 100);
    let beyond = PhysAddr(pages + 3);
    let huge = PhysAddr(u64::MAX);
    let stale = PhysAddr(a.0 + (5 << 32));
    for bad in [never, beyond, huge, stale] {
        for e in
            [rig.cmd(|d, io| d.physical_read(io, bad)).0.unwrap_err(), rig.cmd(|d, io| d.free(io, bad)).0.unwrap_err()]
        {
            assert!(matches!(e, FtlError::BadCommand(_)) && e.kind() == ErrorKind::Invalid, "{e:?}");
            let msg = e.to_string();
            assert!(msg.contains(&format!("{:#x}", bad.0)), "{msg}");
            assert!(msg.contains("use an address") || msg.contains("migrations"), "{msg}");
        }
    }
    // The metadata page's own address is not a data block.
    let meta = (0..pages).map(PhysAddr).find(|p| p.0 != a.0 && rig.flash.nand().peek_oob(p.ppa()).is_some()).unwrap();
    assert_eq!(rig.cmd(|d, io| d.physical_read(io, meta)).0.unwrap_err().kind(), ErrorKind::Invalid);
    // A freed address: refused afterwards, once.
    rig.cmd(|d, io| d.free(io, a)).0.unwrap();
    let e = rig.cmd(|d, io| d.free(io, a)).0.unwrap_err();
    assert!(e.to_string().contains("freed"), "{e}");
    assert!(rig.cmd(|d, io| d.physical_read(io, a)).0.is_err());
    // Metadata beyond the virtual space: out of range, naming it.
    let vp = rig.device().virtual_pages();
    let e = rig.cmd(|d, io| d.virtual_write(io, vp, Payload::Token(1))).0.unwrap_err();
    assert!(matches!(e, FtlError::LpnOutOfRange { .. }), "{e}");
    assert_eq!(rig.cmd(|d, io| d.virtual_read(io, 1)).0.unwrap(), None);
    assert_eq!(rig.cmd(|d, io| d.virtual_read(io, 0)).0.unwrap(), Some(Payload::Token(7)));
    assert_eq!(rig.device().data_pages(), 0);
    rig.ftl.check_invariants(&rig.flash).unwrap();
}

/// A device full of data refuses another nameless write with a no-space error
/// naming its capacity, and takes one again once a block is freed.
#[test]
fn a_full_device_refuses_nameless_writes() {
    let mut rig = rig(0.0, 1);
    let cap = rig.device().data_capacity();
    let mut first = None;
    for i in 0..cap {
        let a = rig.cmd(|d, io| d.nameless_write(io, i as u32, Payload::Token(i))).0.unwrap();
        first.get_or_insert(a);
    }
    let e = rig.cmd(|d, io| d.nameless_write(io, 9999, Payload::Token(1))).0.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoSpace);
    assert!(e.to_string().contains(&cap.to_string()), "{e}");
    rig.cmd(|d, io| d.free(io, first.unwrap())).0.unwrap();
    rig.cmd(|d, io| d.nameless_write(io, 9999, Payload::Token(1))).0.unwrap();
}

/// Random file operations on a medium that fails programs and erases (at a
/// seeded rate and by countdowns armed at random points), with power cuts: a
/// failed operation fails with an I/O or no-space error, and every block the
/// host acknowledged reads back.
#[test]
fn injected_faults_lose_nothing_acknowledged() {
    let mut grown = 0;
    let fault_seeds = std::env::var("FTLAB_FAULT_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(6u64);
    for seed in 0..fault_seeds {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let faults = Faults { program_fail_rate: 0.001, erase_fail_rate: 0.001, ..Faults::default() };
        let bad = if seed % 2 == 0 { 0.0 } else { 0.03 };
        let mut rig = rig_on(&NandConfig { faults, ..nand_config(tiny(), bad, seed) });
        let mut host = HostFs::new();
        rig.flash.fail_program_in(rng.gen_range(1..20));
        for _ in 0..2 {
            for _ in 0..1500 {
                if rng.gen_ratio(1, 300) {
                    rig.flash.fail_program_in(rng.gen_range(1..40));
                }
                if rng.gen_ratio(1, 600) {
                    rig.flash.fail_erase_in(rng.gen_range(1..6));
                }
                if let Err(e) = host.random_op(&mut rig, &mut rng, 12, 6) {
                    fault_error(&e);
                }
            }
            // Inodes whose write failed are written again.
            if let Err(e) = host.drain(&mut rig) {
                fault_error(&e);
            }
            check_blocks(&mut host, &mut rig);
            let nand = rig.flash.nand();
            grown += (0..nand.geometry().total_blocks()).filter(|&b| nand.is_grown_bad(BlockId(b))).count();
            let t = SimTime(rig.now.0 + rng.gen_range(0..3_000_000));
            rig.cut_and_recover(t).unwrap();
            check_after_cut(&mut host, &mut rig, t, true);
        }
    }
    assert!(grown > 0, "the runs must have made blocks go bad");
}

/// Same seed, same counters and completion times.
#[test]
fn deterministic() {
    let run = || {
        let mut rng = ChaCha8Rng::seed_from_u64(99);
        let mut rig = rig(0.02, 5);
        let mut host = HostFs::new();
        for _ in 0..2000 {
            host.random_op(&mut rig, &mut rng, FILES, BLOCKS).unwrap();
        }
        let t = SimTime(rig.now.0 + 1_000_000);
        rig.cut_and_recover(t).unwrap();
        host.recover(&mut rig).unwrap();
        (*rig.flash.counters(), rig.completions.clone(), rig.device().migrations())
    };
    assert_eq!(run(), run());
}

/// Registered as `nameless`; the block interface is the metadata space; the
/// device keeps far less RAM than a page-mapped FTL on the same chip (Table 4:
/// no map of the data pages).
#[test]
fn registered_and_smaller_than_a_page_map() {
    let b = ftlab_ftl::registry::build("nameless", &toml::Table::new()).unwrap();
    let g = ftlab_ftl::conformance::small_geometry();
    let mut flash = Flash::new(Nand::new(&nand_config(g, 0.0, 1)).unwrap());
    let mut ftl = b.format(&mut flash.io(SimTime::ZERO)).unwrap();
    assert_eq!(ftl.name(), "nameless");
    let vp = ftl.nameless().unwrap().virtual_pages();
    assert_eq!(ftl.logical_pages(), vp);
    let mut io = flash.io(SimTime::ZERO);
    let h = ftlab_ftl::Hint::default();
    ftl.write(&mut io, ftlab_ftl::Lpn(3), Payload::Token(5), &h).unwrap();
    assert_eq!(ftl.nameless().unwrap().virtual_read(&mut io, 3).unwrap(), Some(Payload::Token(5)));
    assert!(ftl.write(&mut io, ftlab_ftl::Lpn(vp), Payload::Token(5), &h).is_err());
    let pm = ftlab_ftl::registry::build("pagemap", &toml::Table::new()).unwrap();
    let mut flash2 = Flash::new(Nand::new(&nand_config(g, 0.0, 1)).unwrap());
    let mut pm = pm.format(&mut flash2.io(SimTime::ZERO)).unwrap();
    assert!(pm.nameless().is_none());
    let (n, p) = (ftl.ram_bytes(), pm.ram_bytes());
    assert!(n < p, "nameless {n} B, pagemap {p} B");
    let mut bad = toml::Table::new();
    bad.insert("virtual_share".into(), toml::Value::Float(1.5));
    let e = ftlab_ftl::registry::build("nameless", &bad).unwrap_err().to_string();
    assert!(e.contains("virtual_share"), "{e}");
}

/// Erase-count spread over the good blocks, and the wear-leveling moves.
fn wear_after_hot_overwrites(delta: u32, cut_every: Option<u32>) -> (u32, f64) {
    let nand = nand_config(tiny(), 0.0, 3);
    let config = NamelessConfig { virtual_share: 0.1, wear_leveling_delta: delta, ..NamelessConfig::default() };
    let mut rig = Rig::new(Flash::new(Nand::new(&nand).unwrap()), Box::new(config)).unwrap();
    let mut host = HostFs::new();
    // Cold files, written once, fill most of the device; one hot file is then
    // overwritten again and again.
    for f in 0..16 {
        host.create(&mut rig, f, 9).unwrap();
    }
    host.create(&mut rig, 16, 4).unwrap();
    let mut t = 0;
    for i in 0..6000u32 {
        host.overwrite(&mut rig, 16, i % 4).unwrap();
        host.drain(&mut rig).unwrap();
        if cut_every.is_some_and(|n| i % n == n - 1) {
            t += 1;
            rig.cut_and_recover(SimTime(rig.flash.nand().die_free_at(ftlab_nand::DieId(0)).0 + t)).unwrap();
            host.recover(&mut rig).unwrap();
        }
    }
    check_all(&mut host, &mut rig);
    let erases: Vec<u32> = (0..tiny().total_blocks()).map(|b| rig.flash.nand().erase_count(BlockId(b))).collect();
    let spread = erases.iter().max().unwrap() - erases.iter().min().unwrap();
    let moves = rig.ftl.gauges().iter().find(|(n, _)| *n == "wear_level_moves").map_or(0.0, |g| g.1);
    (spread, moves)
}

#[test]
fn wear_leveling_moves_cold_blocks_with_migration_up_calls() {
    let (spread_off, moves_off) = wear_after_hot_overwrites(0, None);
    let (spread_on, moves_on) = wear_after_hot_overwrites(4, None);
    eprintln!("spread {spread_off} without, {spread_on} with ({moves_on} moves)");
    assert_eq!(moves_off, 0.0);
    assert!(moves_on > 0.0, "no wear-leveling move");
    // Without it the hot blocks wear and the cold ones never do.
    assert!(spread_off > 3 * spread_on, "spread {spread_off} without, {spread_on} with wear leveling");
    assert!(spread_on <= 4 + 2, "spread {spread_on} with a delta of 4");
    // Through power cuts too: every block reads back at the address the host
    // holds after the moves are replayed.
    let (spread_cut, moves_cut) = wear_after_hot_overwrites(4, Some(700));
    assert!(moves_cut > 0.0 && spread_cut <= 4 + 2, "{spread_cut} {moves_cut}");
}
