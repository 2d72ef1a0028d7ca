//! Tests of the advanced commands on the medium: multi-plane address rules,
//! per-page results, and durability of an operation a read suspended.
#![allow(clippy::unwrap_used)]

use crate::tests::TIMING;
use crate::*;

/// The medium tests' device ([`crate::tests::config`]: die 0 has planes of
/// blocks 0-7 and 8-15, die 1 blocks 16-31) offering `commands`.
fn nand(commands: Commands) -> Nand {
    Nand::new(&NandConfig { commands, ..crate::tests::config(0.0) }).unwrap()
}

const MULTI: Commands = Commands {
    multi_plane: true,
    multi_plane_same_block: false,
    cache_program: false,
    erase_suspension: false,
    suspend_erase_ns: 0,
    serial_dies: false,
    reads_first: false,
    sector_transfers: false,
    multi_plane_any_page: false,
};

fn page(n: &Nand, block: u32, page: u32, v: u64) -> PlanePage {
    PlanePage {
        ppa: n.geometry().ppa(BlockId(block), page),
        lpn: v as u32,
        kind: PageKind::Data,
        data: Payload::Token(v),
        bytes: 0,
    }
}

/// Die 0: plane 0 holds blocks 0-7, plane 1 blocks 8-15; die 1 blocks 16-31.
#[test]
fn a_multi_plane_program_takes_one_array_time_and_both_pages_read_back() {
    let mut n = nand(MULTI);
    let (seqs, span) = n.program_multi(vec![page(&n, 0, 0, 1), page(&n, 9, 0, 2)], SimTime::ZERO).unwrap();
    assert!(seqs.iter().all(Result::is_ok));
    let xfer = TIMING.transfer(4096 + 128);
    assert_eq!(span.finish, xfer + xfer + SimTime(TIMING.program_ns));
    let ppas = [n.geometry().ppa(BlockId(0), 0), n.geometry().ppa(BlockId(9), 0)];
    let (got, read) = n.read_multi(&ppas, span.finish).unwrap();
    assert_eq!(
        got.iter().map(|(d, o)| (d.clone(), o.lpn)).collect::<Vec<_>>(),
        [(Payload::Token(1), 1), (Payload::Token(2), 2)]
    );
    assert_eq!(read.finish, span.finish + SimTime(TIMING.read_ns) + xfer + xfer);
    let (erased, e) = n.erase_multi(&[BlockId(0), BlockId(9)], read.finish).unwrap();
    assert!(erased.iter().all(Result::is_ok));
    assert_eq!(e.finish, read.finish + SimTime(TIMING.erase_ns));
    assert_eq!((n.erase_count(BlockId(0)), n.erase_count(BlockId(9))), (1, 1));
    assert_eq!(n.programmed_pages(BlockId(9)), 0);
}

#[test]
fn a_read_joins_the_last_read_as_another_plane_only_where_a_multi_plane_read_could_take_it() {
    let mut n = nand(MULTI);
    let g = *n.geometry();
    // Pages 0 and 1 of block 0 (plane 0), of block 9 (plane 1), of block 16 (die 1).
    for (b, p) in [(0, 0), (0, 1), (9, 0), (9, 1), (16, 0)] {
        n.program(
            g.ppa(BlockId(b), p),
            b * 10 + p,
            PageKind::Data,
            Payload::Token(u64::from(b * 10 + p)),
            SimTime::ZERO,
        )
        .unwrap();
    }
    let at = SimTime::from_ms(10);
    let (_, _, lead) = n.read(g.ppa(BlockId(0), 0), at).unwrap();
    let group = [g.ppa(BlockId(0), 0)];
    // Same plane, another offset, another die: not joined, nothing reserved.
    for ppa in [g.ppa(BlockId(0), 1), g.ppa(BlockId(9), 1), g.ppa(BlockId(16), 0)] {
        assert!(n.read_join(&group, lead, ppa, at).unwrap().is_none(), "{ppa:?}");
        assert_eq!(n.die_free_at(DieId(0)), lead.finish);
    }
    // Plane 1 at the same offset: one more transfer, no second array time,
    // and its data back.
    let (data, oob, j) = n.read_join(&group, lead, g.ppa(BlockId(9), 0), at).unwrap().unwrap();
    assert_eq!((data, oob.lpn), (Payload::Token(90), 90));
    assert_eq!((j.start, j.finish), (lead.finish, lead.finish + TIMING.transfer(4096 + 128)));
    // An unwritten page is the error a read gives; without multi-plane
    // commands nothing joins.
    assert!(n.read_join(&group, lead, g.ppa(BlockId(9), 5), at).is_err());
    let mut off = nand(Commands::default());
    off.program(g.ppa(BlockId(0), 0), 1, PageKind::Data, Payload::Token(1), SimTime::ZERO).unwrap();
    off.program(g.ppa(BlockId(9), 0), 2, PageKind::Data, Payload::Token(2), SimTime::ZERO).unwrap();
    let (_, _, lead) = off.read(g.ppa(BlockId(0), 0), at).unwrap();
    assert!(off.read_join(&group, lead, g.ppa(BlockId(9), 0), at).unwrap().is_none());
    assert!(off.read_time_join(DieId(0), lead, at).unwrap().is_none());
}

#[test]
fn a_multi_plane_command_that_breaks_an_address_rule_is_refused_and_changes_nothing() {
    let mut n = nand(Commands::default());
    assert_eq!(
        n.program_multi(vec![page(&n, 0, 0, 1), page(&n, 8, 0, 2)], SimTime::ZERO).unwrap_err(),
        NandError::MultiPlaneOff
    );
    let mut n = nand(MULTI);
    let why = |e: NandError| match e {
        NandError::MultiPlane { why, .. } => why,
        e => panic!("{e}"),
    };
    // Same plane.
    assert!(why(n.program_multi(vec![page(&n, 0, 0, 1), page(&n, 1, 0, 2)], SimTime::ZERO).unwrap_err())
        .contains("same plane"));
    // Different dies.
    assert!(why(n.program_multi(vec![page(&n, 0, 0, 1), page(&n, 24, 0, 2)], SimTime::ZERO).unwrap_err())
        .contains("different dies"));
    // Three planes on a two-plane die.
    assert!(matches!(
        n.erase_multi(&[BlockId(0), BlockId(8), BlockId(9)], SimTime::ZERO),
        Err(NandError::MultiPlaneCount { given: 3, planes: 2 })
    ));
    // Different page offsets: program page 0 of block 8 first.
    n.program(n.geometry().ppa(BlockId(8), 0), 7, PageKind::Data, Payload::Token(7), SimTime::ZERO).unwrap();
    let e = n.program_multi(vec![page(&n, 0, 0, 1), page(&n, 8, 1, 2)], SimTime::ZERO).unwrap_err();
    assert!(why(e).contains("different offsets of their blocks"));
    // Nothing was programmed by the refused commands.
    assert_eq!((n.programmed_pages(BlockId(0)), n.programmed_pages(BlockId(8))), (0, 1));
    // The same block offset rule, when the chip has it.
    let mut n = nand(Commands { multi_plane_same_block: true, ..MULTI });
    let e = n.program_multi(vec![page(&n, 0, 0, 1), page(&n, 9, 0, 2)], SimTime::ZERO).unwrap_err();
    assert!(why(e).contains("different offsets of their planes"));
    n.program_multi(vec![page(&n, 1, 0, 1), page(&n, 9, 0, 2)], SimTime::ZERO).unwrap();
    // Pages at different offsets, when the chip takes them (each block
    // still in order: a page out of order in its block stays refused).
    let mut n = nand(Commands { multi_plane_any_page: true, ..MULTI });
    n.program(n.geometry().ppa(BlockId(8), 0), 7, PageKind::Data, Payload::Token(7), SimTime::ZERO).unwrap();
    n.program_multi(vec![page(&n, 0, 0, 1), page(&n, 8, 1, 2)], SimTime::ZERO).unwrap();
    assert_eq!((n.programmed_pages(BlockId(0)), n.programmed_pages(BlockId(8))), (1, 2));
    assert!(n.program_multi(vec![page(&n, 0, 2, 3), page(&n, 8, 2, 4)], SimTime::ZERO).is_err());
}

#[test]
fn a_program_failure_strikes_one_plane_of_a_multi_plane_program() {
    let mut n = nand(MULTI);
    n.fail_program_in(2);
    let (seqs, _) = n.program_multi(vec![page(&n, 0, 0, 1), page(&n, 8, 0, 2)], SimTime::ZERO).unwrap();
    assert!(seqs[0].is_ok());
    let failed = seqs[1].as_ref().unwrap_err();
    assert_eq!(failed.data, Some(Payload::Token(2)), "the failed page's data is handed back");
    assert!(n.is_grown_bad(BlockId(8)) && !n.is_grown_bad(BlockId(0)));
}

#[test]
fn an_erase_a_read_suspended_is_torn_by_a_cut_before_its_new_finish() {
    let commands = Commands { erase_suspension: true, suspend_erase_ns: 10_000, ..Commands::default() };
    let mut n = nand(commands);
    let p = n.geometry().ppa(BlockId(1), 0);
    n.program(p, 1, PageKind::Data, Payload::Token(1), SimTime::ZERO).unwrap();
    let e = n.erase(BlockId(0), SimTime(300_000)).unwrap();
    // A host read at 400 us suspends the erase: it ends 10 us + the read later.
    let (_, _, r) = n.read(p, Issue::new(SimTime(400_000), true)).unwrap();
    assert!(r.finish < e.finish);
    let late = e.finish + (r.finish - SimTime(400_000));
    assert_eq!(n.die_free_at(DieId(0)), late);
    // Cut after the erase's first finish, before its real one: it was under way.
    n.power_cut(e.finish + SimTime(1));
    assert_eq!(
        n.read(n.geometry().ppa(BlockId(0), 0), late),
        Err(NandError::Uncorrectable(n.geometry().ppa(BlockId(0), 0)))
    );
}

#[test]
fn suspension_times_beyond_any_operation_are_refused() {
    let config_err = Commands { suspend_erase_ns: Timing::MAX_OPERATION_NS + 1, ..Commands::default() };
    let e = Nand::new(&NandConfig { commands: config_err, ..crate::tests::config(0.0) }).unwrap_err();
    assert!(e.to_string().contains("suspend_erase_ns"), "{e}");
}
