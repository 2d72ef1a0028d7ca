//! Tests of how a power cut undoes the operations in flight (the medium's
//! private undo log).
#![allow(clippy::unwrap_used)]
use super::*;

fn nand() -> Nand {
    let geometry = Geometry {
        channels: 1,
        ways_per_channel: 1,
        dies_per_way: 1,
        planes_per_die: 1,
        blocks_per_plane: 4,
        pages_per_block: 4,
        page_size: 4096,
        oob_size: 64,
    };
    let timing = Timing {
        read_ns: 25_000,
        read_oob_ns: 10_000,
        program_ns: 200_000,
        erase_ns: 1_500_000,
        channel_mb_per_s: 400,
    };
    let config = NandConfig {
        geometry,
        timing,
        bad_block_rate: 0.0,
        wear: WearConfig::default(),
        store: StoreKind::Token,
        seed: 1,
        faults: Default::default(),
        commands: Default::default(),
    };
    Nand::new(&config).unwrap()
}

#[test]
fn undone_program_after_a_retired_erase_leaves_the_page_erased() {
    let mut n = nand();
    let p = n.geometry().ppa(BlockId(0), 0);
    let (_, s) = n.program(p, 1, PageKind::Data, Payload::Token(10), SimTime::ZERO).unwrap();
    let e = n.erase(BlockId(0), s.finish).unwrap();
    n.retire(e.finish);
    let (_, s2) = n.program(p, 2, PageKind::Map, Payload::Token(20), e.finish).unwrap();
    n.power_cut(s2.start);
    assert_eq!(n.read(p, s2.start).unwrap_err(), NandError::NotProgrammed(p));
    assert_eq!(n.peek_oob(p), None);
    assert_eq!(n.programmed_pages(BlockId(0)), 0);
    n.program(p, 3, PageKind::Data, Payload::Token(30), s2.start).unwrap();
    assert_eq!(n.read(p, s2.start).unwrap().0, Payload::Token(30));
    assert_eq!(n.peek_oob(p).map(|o| (o.lpn, o.kind)), Some((3, PageKind::Data)));
}

#[test]
fn undoing_erases_in_flight_restores_what_the_pages_held() {
    let mut n = nand();
    let g = *n.geometry();
    let (p0, p1) = (g.ppa(BlockId(1), 0), g.ppa(BlockId(1), 1));
    let (_, a) = n.program(p0, 5, PageKind::Data, Payload::Token(50), SimTime::ZERO).unwrap();
    let (_, b) = n.program(p1, 6, PageKind::Data, Payload::Token(60), SimTime::ZERO).unwrap();
    n.retire(b.finish);
    // Two erases in flight, each followed by a program over page 0.
    let e1 = n.erase(BlockId(1), b.finish).unwrap();
    n.program(p0, 7, PageKind::Data, Payload::Token(70), b.finish).unwrap();
    let e2 = n.erase(BlockId(1), b.finish).unwrap();
    n.program(p0, 8, PageKind::Data, Payload::Token(80), b.finish).unwrap();
    assert!(e1.start >= b.finish && e2.start > e1.start);
    // Retiring the first erase leaves the second undoable.
    n.retire(e1.finish);
    n.power_cut(e2.start);
    // The program after the first erase survived; the second erase never happened.
    assert_eq!(n.read(p0, e2.start).unwrap().0, Payload::Token(70));
    assert_eq!(n.peek_oob(p0).map(|o| o.lpn), Some(7));
    assert_eq!(n.read(p1, e2.start).unwrap_err(), NandError::NotProgrammed(p1));
    assert_eq!(n.erase_count(BlockId(1)), 1);
    // Everything in flight is gone: a later program saves nothing.
    assert_eq!(n.blocks[1].erases_in_flight, 0);
    let _ = a;
}

#[test]
fn a_cut_before_every_erase_restores_the_oldest_contents() {
    let mut n = nand();
    let p = n.geometry().ppa(BlockId(2), 0);
    let (_, s) = n.program(p, 9, PageKind::Meta, Payload::Token(90), SimTime::ZERO).unwrap();
    n.retire(s.finish);
    let e1 = n.erase(BlockId(2), s.finish).unwrap();
    n.program(p, 1, PageKind::Data, Payload::Token(1), s.finish).unwrap();
    n.erase(BlockId(2), s.finish).unwrap();
    n.program(p, 2, PageKind::Data, Payload::Token(2), s.finish).unwrap();
    n.power_cut(e1.start);
    assert_eq!(n.read(p, e1.start).unwrap().0, Payload::Token(90));
    let oob = n.peek_oob(p).unwrap();
    assert_eq!((oob.lpn, oob.kind), (9, PageKind::Meta));
    assert_eq!(n.erase_count(BlockId(2)), 0);
    assert_eq!(n.blocks[2].erases_in_flight, 0);
}

#[test]
fn an_undone_erase_brings_back_the_sequence_numbers_of_the_pages_it_covered() {
    // Pages keep their sequence numbers relative to their block's first
    // program; a program after an erase moves that base, and undoing the
    // erase must move it back, or the pages left below the write pointer
    // would read with shifted sequence numbers (and recovery order them wrongly).
    let mut n = nand();
    let g = *n.geometry();
    let pages: Vec<Ppa> = (0..3).map(|i| g.ppa(BlockId(3), i)).collect();
    let mut seqs = Vec::new();
    let mut at = SimTime::ZERO;
    // Other programs in between, so the block's pages are not consecutive.
    for (i, &p) in pages.iter().enumerate() {
        n.program(g.ppa(BlockId(0), i as u32), 0, PageKind::Data, Payload::Token(0), at).unwrap();
        let (seq, s) = n.program(p, 40 + i as u32, PageKind::Data, Payload::Token(i as u64), at).unwrap();
        seqs.push(seq);
        at = s.finish;
    }
    n.retire(at);
    let e = n.erase(BlockId(3), at).unwrap();
    let (new_seq, _) = n.program(pages[0], 99, PageKind::Map, Payload::Token(9), at).unwrap();
    assert!(new_seq > seqs[2]);
    n.power_cut(e.start);
    for (i, &p) in pages.iter().enumerate() {
        let oob = n.peek_oob(p).unwrap();
        assert_eq!((oob.lpn, oob.seq, oob.kind), (40 + i as u32, seqs[i], PageKind::Data), "page {i}");
        assert_eq!(n.read(p, e.start).unwrap().0, Payload::Token(i as u64));
    }
}

/// Without power cuts ([`Nand::set_power_cuts`]) the medium logs nothing and
/// answers every operation exactly as with them: programs into blocks whose
/// erase is still in flight, erases, copybacks, reads, and a program whose
/// payload the store refuses (the page stays erased). A power cut is then
/// refused.
#[test]
fn without_power_cuts_nothing_is_logged_and_nothing_else_changes() {
    let mut with = nand();
    let mut without = nand();
    without.set_power_cuts(false);
    let g = *with.geometry();
    let mut t = SimTime::ZERO;
    for round in 0..3u64 {
        // A payload the store refuses leaves the page erased on both: the
        // program below takes it.
        let bad = Payload::Bytes(vec![0; 10].into());
        let e = with.program(g.ppa(BlockId(0), 0), 1, PageKind::Data, bad.clone(), t);
        assert!(matches!(e, Err(NandError::PayloadMismatch(_))), "{e:?}");
        assert_eq!(e, without.program(g.ppa(BlockId(0), 0), 1, PageKind::Data, bad, t));
        for b in 0..4 {
            for page in 0..3 {
                let ppa = g.ppa(BlockId(b), page);
                let data = Payload::Token(round * 100 + u64::from(b * 4 + page));
                let x = with.program(ppa, b * 4 + page, PageKind::Data, data.clone(), t);
                assert_eq!(x, without.program(ppa, b * 4 + page, PageKind::Data, data, t));
            }
            // The last page by copyback from the first.
            let (from, to) = (g.ppa(BlockId(b), 0), g.ppa(BlockId(b), 3));
            assert_eq!(with.copyback(from, to, t), without.copyback(from, to, t));
        }
        for p in 0..g.total_pages() {
            assert_eq!(with.peek_oob(Ppa(p)), without.peek_oob(Ppa(p)));
            if with.peek_oob(Ppa(p)).is_some() {
                assert_eq!(with.read(Ppa(p), t), without.read(Ppa(p), t));
            }
        }
        // Erases issued at once: the next round programs over blocks whose
        // erase is still in flight.
        for b in 0..4 {
            assert_eq!(with.erase(BlockId(b), t), without.erase(BlockId(b), t));
        }
        t = SimTime(t.0 + 1_000);
        with.retire(t);
        without.retire(t);
    }
    assert!(!with.in_flight.is_empty(), "the log is kept with power cuts");
    assert!(without.in_flight.is_empty(), "and empty without");
    assert!(without.blocks.iter().all(|b| b.erases_in_flight == 0));
    let cut = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| without.power_cut(t)));
    assert!(cut.is_err(), "a power cut without the log is refused");
}
