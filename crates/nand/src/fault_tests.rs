//! Tests of injected faults: each rule of a failed program or erase, countdowns
//! and rates, and that a medium without faults runs exactly as before.
#![allow(clippy::unwrap_used)]

use crate::*;

fn config(faults: Faults) -> NandConfig {
    NandConfig {
        geometry: Geometry {
            channels: 1,
            ways_per_channel: 1,
            dies_per_way: 2,
            planes_per_die: 1,
            blocks_per_plane: 8,
            pages_per_block: 4,
            page_size: 4096,
            oob_size: 128,
        },
        timing: crate::tests::TIMING,
        bad_block_rate: 0.0,
        wear: WearConfig::default(),
        store: StoreKind::Token,
        seed: 3,
        faults,
        commands: Default::default(),
    }
}

fn nand() -> Nand {
    Nand::new(&config(Faults::default())).unwrap()
}

fn tok(t: u64) -> Payload {
    Payload::Token(t)
}

#[test]
fn a_failed_program_takes_its_time_leaves_the_page_unreadable_and_the_block_grown_bad() {
    let mut n = nand();
    let g = *n.geometry();
    let (p0, p1, p2) = (g.ppa(BlockId(1), 0), g.ppa(BlockId(1), 1), g.ppa(BlockId(1), 2));
    let (_, s0) = n.program(p0, 10, PageKind::Data, tok(100), SimTime::ZERO).unwrap();
    n.fail_program_in(1);
    let failure = n.try_program(p1, 11, PageKind::Data, tok(110), SimTime::ZERO).unwrap_err();
    assert_eq!(failure.error, NandError::ProgramFailed { ppa: p1 });
    // The data comes back for a program elsewhere.
    assert_eq!(failure.data, Some(tok(110)));
    // The failed program occupied the die for a program's time.
    let die = g.die_of_block(BlockId(1));
    assert!(n.die_free_at(die).0 >= s0.finish.0 + 200_000);
    assert!(n.is_grown_bad(BlockId(1)));
    assert!(!n.is_bad(BlockId(1)), "a grown-bad block is not a factory-bad one");
    // The failed page is unusable; the page programmed before it still reads.
    assert_eq!(n.read(p1, s0.finish).unwrap_err(), NandError::Uncorrectable(p1));
    assert_eq!(n.read_oob(p1, s0.finish).unwrap_err(), NandError::Uncorrectable(p1));
    assert_eq!(n.read(p0, s0.finish).unwrap().0, tok(100));
    assert_eq!(n.peek_oob(p0).map(|o| o.lpn), Some(10));
    // No further program, copyback into it, or erase.
    assert_eq!(n.program(p2, 12, PageKind::Data, tok(120), s0.finish).unwrap_err(), NandError::GrownBad(BlockId(1)));
    assert_eq!(n.copyback(p0, p2, s0.finish).unwrap_err(), NandError::GrownBad(BlockId(1)));
    assert_eq!(n.erase(BlockId(1), s0.finish).unwrap_err(), NandError::GrownBad(BlockId(1)));
    assert_eq!(n.programmed_pages(BlockId(1)), 1);
    // Other blocks are unaffected; the countdown is spent.
    n.program(g.ppa(BlockId(2), 0), 13, PageKind::Data, tok(130), s0.finish).unwrap();
}

#[test]
fn a_failed_copyback_leaves_the_source_readable_and_the_target_block_grown_bad() {
    let mut n = nand();
    let g = *n.geometry();
    let (from, to) = (g.ppa(BlockId(0), 0), g.ppa(BlockId(2), 0));
    n.program(from, 7, PageKind::Data, tok(70), SimTime::ZERO).unwrap();
    n.fail_program_in(1);
    assert_eq!(n.copyback(from, to, SimTime::ZERO).unwrap_err(), NandError::ProgramFailed { ppa: to });
    assert!(n.is_grown_bad(BlockId(2)));
    assert!(!n.is_grown_bad(BlockId(0)));
    assert_eq!(n.read(from, SimTime::ZERO).unwrap().0, tok(70));
}

#[test]
fn a_failed_erase_takes_its_time_and_leaves_the_block_grown_bad_with_nothing_readable() {
    let mut n = nand();
    let g = *n.geometry();
    let p = g.ppa(BlockId(3), 0);
    let (_, s) = n.program(p, 1, PageKind::Data, tok(1), SimTime::ZERO).unwrap();
    n.fail_erase_in(2);
    n.erase(BlockId(4), s.finish).unwrap();
    assert_eq!(n.erase(BlockId(3), s.finish).unwrap_err(), NandError::EraseFailed { block: BlockId(3) });
    let die = g.die_of_block(BlockId(3));
    // Two erases queued on the die after the program.
    assert!(n.die_free_at(die).0 >= s.finish.0 + 2 * 1_500_000);
    assert!(n.is_grown_bad(BlockId(3)));
    assert_eq!(n.read(p, s.finish).unwrap_err(), NandError::NotProgrammed(p));
    assert_eq!(n.program(p, 2, PageKind::Data, tok(2), s.finish).unwrap_err(), NandError::GrownBad(BlockId(3)));
    assert_eq!(n.erase(BlockId(3), s.finish).unwrap_err(), NandError::GrownBad(BlockId(3)));
    // The erase that succeeded left its block usable.
    assert!(!n.is_grown_bad(BlockId(4)));
    n.program(g.ppa(BlockId(4), 0), 3, PageKind::Data, tok(3), s.finish).unwrap();
}

#[test]
fn a_power_cut_undoes_a_fault_that_had_not_started_and_keeps_one_that_had() {
    let mut n = nand();
    let g = *n.geometry();
    let (p, q) = (g.ppa(BlockId(5), 0), g.ppa(BlockId(6), 0));
    n.program(p, 1, PageKind::Data, tok(1), SimTime::ZERO).unwrap();
    let (_, s) = n.program(q, 3, PageKind::Data, tok(3), SimTime::ZERO).unwrap();
    n.retire(s.finish);
    // Both faults are issued after the cut's time: they never happened.
    n.fail_program_in(1);
    n.program(g.ppa(BlockId(5), 1), 2, PageKind::Data, tok(2), s.finish).unwrap_err();
    n.fail_erase_in(1);
    n.erase(BlockId(6), s.finish).unwrap_err();
    n.power_cut(s.finish);
    assert!(!n.is_grown_bad(BlockId(5)) && !n.is_grown_bad(BlockId(6)));
    // The failed erase's block holds what it held.
    assert_eq!(n.read(q, s.finish).unwrap().0, tok(3));
    assert_eq!(n.read(p, s.finish).unwrap().0, tok(1));
    n.program(g.ppa(BlockId(5), 1), 2, PageKind::Data, tok(2), s.finish).unwrap();
    n.erase(BlockId(6), s.finish).unwrap();
}

#[test]
fn a_power_cut_does_not_undo_a_fault_that_had_started() {
    let mut n = nand();
    let g = *n.geometry();
    let (p0, p1) = (g.ppa(BlockId(5), 0), g.ppa(BlockId(5), 1));
    let (_, s0) = n.program(p0, 1, PageKind::Data, tok(1), SimTime::ZERO).unwrap();
    n.retire(s0.finish);
    n.fail_program_in(1);
    n.program(p1, 2, PageKind::Data, tok(2), s0.finish).unwrap_err();
    // On the other die, so that it starts at once.
    n.fail_erase_in(1);
    n.erase(BlockId(9), s0.finish).unwrap_err();
    // Both are under way 1 ns after they were issued.
    n.power_cut(SimTime(s0.finish.0 + 1));
    assert!(n.is_grown_bad(BlockId(5)) && n.is_grown_bad(BlockId(9)));
    assert_eq!(n.read(p0, s0.finish).unwrap().0, tok(1));
    assert_eq!(n.read(p1, s0.finish).unwrap_err(), NandError::Uncorrectable(p1));
}

#[test]
fn countdowns_from_the_config_count_from_format() {
    let faults = Faults { fail_program: 3, fail_erase: 2, ..Faults::default() };
    let mut n = Nand::new(&config(faults)).unwrap();
    let g = *n.geometry();
    for page in 0..2 {
        n.program(g.ppa(BlockId(0), page), page, PageKind::Data, tok(1), SimTime::ZERO).unwrap();
    }
    let third = g.ppa(BlockId(0), 2);
    assert_eq!(
        n.program(third, 2, PageKind::Data, tok(1), SimTime::ZERO).unwrap_err(),
        NandError::ProgramFailed { ppa: third }
    );
    n.erase(BlockId(1), SimTime::ZERO).unwrap();
    assert_eq!(n.erase(BlockId(2), SimTime::ZERO).unwrap_err(), NandError::EraseFailed { block: BlockId(2) });
    // Each countdown strikes once.
    n.program(g.ppa(BlockId(1), 0), 0, PageKind::Data, tok(1), SimTime::ZERO).unwrap();
    n.erase(BlockId(3), SimTime::ZERO).unwrap();
    // Arming 0 disarms.
    n.fail_program_in(1);
    n.fail_program_in(0);
    n.program(g.ppa(BlockId(1), 1), 1, PageKind::Data, tok(1), SimTime::ZERO).unwrap();
}

/// Programs every page of the device in order (erasing each block first), then
/// returns the programs that failed, the erases that failed and the finish times.
fn workload(n: &mut Nand) -> (Vec<Ppa>, Vec<BlockId>, Vec<SimTime>) {
    let g = *n.geometry();
    let (mut failed_programs, mut failed_erases, mut times) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..4u64 {
        for b in (0..g.total_blocks()).map(BlockId) {
            if n.is_bad(b) || n.is_grown_bad(b) {
                continue;
            }
            if round > 0 {
                match n.erase(b, SimTime::ZERO) {
                    Ok(s) => times.push(s.finish),
                    Err(NandError::EraseFailed { block }) => {
                        failed_erases.push(block);
                        continue;
                    }
                    Err(e) => panic!("{e}"),
                }
            }
            for page in 0..g.pages_per_block {
                let ppa = g.ppa(b, page);
                match n.program(ppa, page, PageKind::Data, tok(round), SimTime::ZERO) {
                    Ok((_, s)) => times.push(s.finish),
                    Err(NandError::ProgramFailed { ppa }) => {
                        failed_programs.push(ppa);
                        break;
                    }
                    Err(e) => panic!("{e}"),
                }
            }
        }
    }
    (failed_programs, failed_erases, times)
}

#[test]
fn seeded_rates_fail_some_operations_the_same_way_every_run() {
    let faults = Faults { program_fail_rate: 0.02, erase_fail_rate: 0.1, ..Faults::default() };
    let a = workload(&mut Nand::new(&config(faults)).unwrap());
    let b = workload(&mut Nand::new(&config(faults)).unwrap());
    assert!(!a.0.is_empty() && !a.1.is_empty(), "rates this high fail some operations: {a:?}");
    assert_eq!(a, b);
    // Another seed fails other operations.
    let c = workload(&mut Nand::new(&NandConfig { seed: 4, ..config(faults) }).unwrap());
    assert_ne!((a.0, a.1), (c.0, c.1));
}

#[test]
fn no_faults_changes_nothing() {
    let faults = Faults { program_fail_rate: 0.0, erase_fail_rate: 0.0, fail_program: 0, fail_erase: 0 };
    let cfg = NandConfig { bad_block_rate: 0.1, ..config(faults) };
    let (mut a, mut b) = (Nand::new(&cfg).unwrap(), Nand::new(&cfg).unwrap());
    // Same factory-bad blocks and wear as a medium that never heard of faults.
    let g = *a.geometry();
    for blk in (0..g.total_blocks()).map(BlockId) {
        assert_eq!(a.is_bad(blk), b.is_bad(blk));
        assert_eq!(a.rber(blk), b.rber(blk));
    }
    let (wa, wb) = (workload(&mut a), workload(&mut b));
    assert!(wa.0.is_empty() && wa.1.is_empty());
    assert_eq!(wa, wb);
    // Turning a rate on draws from a stream of its own: the factory-bad blocks
    // and the wear parameters stay those of the run without faults.
    let on = Nand::new(&NandConfig { faults: Faults { program_fail_rate: 0.5, ..faults }, ..cfg }).unwrap();
    let off = Nand::new(&cfg).unwrap();
    for blk in (0..g.total_blocks()).map(BlockId) {
        assert_eq!(on.is_bad(blk), off.is_bad(blk));
        assert_eq!(on.rber(blk), off.rber(blk));
    }
}

#[test]
fn the_default_config_has_no_faults_and_serializes_as_before() {
    let cfg = config(Faults::default());
    assert!(cfg.faults.is_none());
    let text = toml::to_string(&cfg).unwrap();
    assert!(!text.contains("faults"), "{text}");
    let back: NandConfig = toml::from_str(&text).unwrap();
    assert_eq!(back, cfg);
    let with: NandConfig = toml::from_str(&format!("{text}\n[faults]\nprogram_fail_rate = 0.001\n")).unwrap();
    assert_eq!(with.faults.program_fail_rate, 0.001);
}

#[test]
fn rates_out_of_range_are_refused_naming_the_key() {
    for faults in [
        Faults { program_fail_rate: 1.0, ..Faults::default() },
        Faults { erase_fail_rate: -0.1, ..Faults::default() },
        Faults { program_fail_rate: f64::NAN, ..Faults::default() },
    ] {
        let err = Nand::new(&config(faults)).unwrap_err().to_string();
        assert!(err.contains("faults.") && err.contains("[0, 1)"), "{err}");
    }
}
