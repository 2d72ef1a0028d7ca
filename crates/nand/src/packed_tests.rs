//! Tests of packed pages ([`crate::medium::packed`]): slots read back with
//! their records in both stores, the OOB check, the strict rules, power cuts
//! and undone erases, copyback, and images (version 3, and version 2 still
//! opens).
#![allow(clippy::unwrap_used)]

use crate::*;

fn config(store: StoreKind) -> NandConfig {
    NandConfig {
        geometry: Geometry {
            channels: 1,
            ways_per_channel: 1,
            dies_per_way: 1,
            planes_per_die: 1,
            blocks_per_plane: 4,
            pages_per_block: 4,
            page_size: 2048,
            oob_size: 64,
        },
        timing: crate::tests::TIMING,
        bad_block_rate: 0.0,
        wear: WearConfig::default(),
        store,
        seed: 1,
        faults: Default::default(),
        commands: Default::default(),
    }
}

/// Slot `i` of unit 512 for `store`: a token or 512 bytes of `i`.
fn unit(store: StoreKind, i: u64) -> Payload {
    match store {
        StoreKind::Token => Payload::Token(1000 + i),
        StoreKind::Bytes => Payload::Bytes(vec![i as u8; 512].into()),
    }
}

fn slots(store: StoreKind, lpns: &[u32]) -> Vec<(u32, Payload)> {
    lpns.iter().map(|&l| (l, unit(store, u64::from(l)))).collect()
}

#[test]
fn slots_read_back_with_their_own_records_in_both_stores() {
    for store in [StoreKind::Token, StoreKind::Bytes] {
        let mut n = Nand::new(&config(store)).unwrap();
        assert_eq!(n.slots_per_page(512).unwrap(), 4);
        let ppa = n.geometry().ppa(BlockId(0), 0);
        let (seq, span) = n.program_packed(ppa, PageKind::Data, &slots(store, &[7, 3, 9]), 512, SimTime::ZERO).unwrap();
        let oobs = n.peek_slot_oobs(ppa).unwrap();
        assert_eq!(oobs.iter().map(|o| (o.lpn, o.seq)).collect::<Vec<_>>(), vec![(7, seq), (3, seq), (9, seq)]);
        for (i, lpn) in [7u32, 3, 9].into_iter().enumerate() {
            let (data, oob, _) = n.read_slot(ppa, i as u32, span.finish).unwrap();
            assert_eq!((data, oob.lpn), (unit(store, u64::from(lpn)), lpn), "{store:?} slot {i}");
        }
        // Three slots of four: there is no slot 3; the page's own OOB is slot 0's.
        assert!(matches!(n.read_slot(ppa, 3, span.finish), Err(NandError::NoSuchSlot { slots: 3, .. })));
        assert_eq!(n.peek_oob(ppa).unwrap().lpn, 7);
        // A page of one record has one slot: the page.
        let one = n.geometry().ppa(BlockId(0), 1);
        let whole = match store {
            StoreKind::Token => Payload::Token(5),
            StoreKind::Bytes => Payload::Bytes(vec![5; 2048].into()),
        };
        n.program(one, 11, PageKind::Data, whole.clone(), span.finish).unwrap();
        assert_eq!(n.read_slot(one, 0, span.finish).unwrap().0, whole);
        assert_eq!(n.peek_slot_oobs(one).unwrap().len(), 1);
    }
}

#[test]
fn a_packed_program_is_refused_when_its_records_or_units_do_not_fit() {
    let mut n = Nand::new(&config(StoreKind::Token)).unwrap();
    // 2048 / 256 = 8 records of 12 bytes = 96 > 64 bytes of OOB.
    let e = n.slots_per_page(256).unwrap_err();
    assert!(matches!(e, NandError::SlotRecordsDontFit { slots: 8, record_bytes: 12, oob_size: 64 }), "{e}");
    assert!(e.to_string().contains("96 bytes of OOB"), "{e}");
    assert!(matches!(n.slots_per_page(1000), Err(NandError::SlotSize { .. })));
    assert!(matches!(n.slots_per_page(0), Err(NandError::SlotSize { .. })));
    let ppa = n.geometry().ppa(BlockId(0), 0);
    let five = slots(StoreKind::Token, &[1, 2, 3, 4, 5]);
    assert!(matches!(
        n.program_packed(ppa, PageKind::Data, &five, 512, SimTime::ZERO),
        Err(NandError::SlotCount { .. })
    ));
    assert!(matches!(n.program_packed(ppa, PageKind::Data, &[], 512, SimTime::ZERO), Err(NandError::SlotCount { .. })));
    let short = [(1, Payload::Bytes(vec![0; 100].into()))];
    assert!(matches!(
        n.program_packed(ppa, PageKind::Data, &short, 512, SimTime::ZERO),
        Err(NandError::PayloadMismatch(_))
    ));
    let mut b = Nand::new(&config(StoreKind::Bytes)).unwrap();
    let tokens = slots(StoreKind::Token, &[1]);
    assert!(matches!(
        b.program_packed(ppa, PageKind::Data, &tokens, 512, SimTime::ZERO),
        Err(NandError::PayloadMismatch(_))
    ));
    // Nothing was programmed: the page is still erased, and takes a program.
    assert_eq!((n.programmed_pages(BlockId(0)), b.programmed_pages(BlockId(0))), (0, 0));
    // Strict rules: one program per page, in order.
    n.program_packed(ppa, PageKind::Data, &slots(StoreKind::Token, &[1]), 512, SimTime::ZERO).unwrap();
    let again = n.program_packed(ppa, PageKind::Data, &slots(StoreKind::Token, &[2]), 512, SimTime::ZERO);
    assert!(matches!(again, Err(NandError::AlreadyProgrammed { .. })));
    let skip = n.geometry().ppa(BlockId(0), 2);
    let out_of_order = n.program_packed(skip, PageKind::Data, &slots(StoreKind::Token, &[2]), 512, SimTime::ZERO);
    assert!(matches!(out_of_order, Err(NandError::OutOfOrder { .. })));
}

#[test]
fn a_page_programmed_again_after_an_erase_loses_its_slots() {
    let mut n = Nand::new(&config(StoreKind::Token)).unwrap();
    let ppa = n.geometry().ppa(BlockId(0), 0);
    let (_, s) = n.program_packed(ppa, PageKind::Data, &slots(StoreKind::Token, &[1, 2]), 512, SimTime::ZERO).unwrap();
    let s = n.erase(BlockId(0), s.finish).unwrap();
    n.retire(s.finish);
    n.program(ppa, 8, PageKind::Data, Payload::Token(8), s.finish).unwrap();
    assert_eq!(n.peek_slot_oobs(ppa).unwrap().iter().map(|o| o.lpn).collect::<Vec<_>>(), vec![8]);
    assert_eq!(n.read_slot(ppa, 0, s.finish).unwrap().0, Payload::Token(8));
}

#[test]
fn a_power_cut_undoes_tears_or_keeps_packed_programs_and_undone_erases_bring_slots_back() {
    for store in [StoreKind::Token, StoreKind::Bytes] {
        let mut n = Nand::new(&config(store)).unwrap();
        let (p0, p1) = (n.geometry().ppa(BlockId(0), 0), n.geometry().ppa(BlockId(0), 1));
        let (_, a) = n.program_packed(p0, PageKind::Data, &slots(store, &[1, 2]), 512, SimTime::ZERO).unwrap();
        n.retire(a.finish);
        // An erase and a packed program over the erased page, both cut before
        // they start: the block holds its old packed page again.
        let t = a.finish;
        let at = SimTime(t.0 + 1_000_000);
        n.erase(BlockId(0), at).unwrap();
        n.program_packed(p0, PageKind::Data, &slots(store, &[5, 6, 7]), 512, at).unwrap();
        n.power_cut(t);
        let lpns: Vec<u32> = n.peek_slot_oobs(p0).unwrap().iter().map(|o| o.lpn).collect();
        assert_eq!(lpns, vec![1, 2], "{store:?}");
        assert_eq!(n.read_slot(p0, 1, t).unwrap().0, unit(store, 2));
        // A packed program cut in its course is torn; one cut before it started
        // never happened.
        let (_, b) = n.program_packed(p1, PageKind::Data, &slots(store, &[3]), 512, t).unwrap();
        n.power_cut(SimTime(b.finish.0 - 1));
        assert!(matches!(n.read_slot(p1, 0, b.finish), Err(NandError::Uncorrectable(_))));
        assert_eq!(n.read_slot(p0, 0, b.finish).unwrap().0, unit(store, 1));
    }
}

#[test]
fn copyback_carries_the_slots() {
    let mut n = Nand::new(&config(StoreKind::Token)).unwrap();
    let from = n.geometry().ppa(BlockId(0), 0);
    let to = n.geometry().ppa(BlockId(1), 0);
    let (_, s) = n.program_packed(from, PageKind::Data, &slots(StoreKind::Token, &[4, 9]), 512, SimTime::ZERO).unwrap();
    let (_, seq, s) = n.copyback(from, to, s.finish).unwrap();
    let oobs = n.peek_slot_oobs(to).unwrap();
    assert_eq!(oobs.iter().map(|o| (o.lpn, o.seq)).collect::<Vec<_>>(), vec![(4, seq), (9, seq)]);
    assert_eq!(n.read_slot(to, 1, s.finish).unwrap().0, unit(StoreKind::Token, 9));
}

/// A medium with a packed and a plain page, saved and opened again.
fn roundtrip(store: StoreKind) -> (Nand, Vec<u8>) {
    let mut n = Nand::new(&config(store)).unwrap();
    let (p0, p1) = (n.geometry().ppa(BlockId(0), 0), n.geometry().ppa(BlockId(0), 1));
    let (_, s) = n.program_packed(p0, PageKind::Data, &slots(store, &[1, 2, 3, 4]), 512, SimTime::ZERO).unwrap();
    let plain = match store {
        StoreKind::Token => Payload::Token(77),
        StoreKind::Bytes => Payload::Bytes(vec![77; 2048].into()),
    };
    let (_, s) = n.program(p1, 6, PageKind::Data, plain, s.finish).unwrap();
    n.retire(s.finish);
    let mut image = Vec::new();
    n.save_image(&mut image, s.finish, "x").unwrap();
    (n, image)
}

#[test]
fn images_keep_packed_pages_in_both_stores() {
    for store in [StoreKind::Token, StoreKind::Bytes] {
        let (n, image) = roundtrip(store);
        let (mut m, at, _) = Nand::open_image(&config(store), &image[..]).unwrap();
        let p0 = n.geometry().ppa(BlockId(0), 0);
        for p in [p0, n.geometry().ppa(BlockId(0), 1)] {
            assert_eq!(m.peek_slot_oobs(p), n.peek_slot_oobs(p), "{store:?}");
        }
        for i in 0..4 {
            assert_eq!(m.read_slot(p0, i, at).unwrap().0, unit(store, u64::from(i) + 1), "{store:?}");
        }
    }
}

#[test]
fn a_version_2_image_still_opens() {
    // A token-store medium without packed pages, saved as version 3, turned
    // into version 2: each page's record loses its slot byte (0).
    let mut n = Nand::new(&config(StoreKind::Token)).unwrap();
    let mut t = SimTime::ZERO;
    for p in 0..3 {
        let ppa = n.geometry().ppa(BlockId(1), p);
        t = n.program(ppa, p + 10, PageKind::Data, Payload::Token(u64::from(p) + 50), t).unwrap().1.finish;
    }
    n.retire(t);
    let mut v3 = Vec::new();
    n.save_image(&mut v3, t, "").unwrap();
    let blocks = n.geometry().total_blocks() as usize;
    let pages_at = 8 + 4 + 32 + 1 + 4 + 8 + 8 + blocks * 18 + 4;
    let mut v2 = v3[..pages_at].to_vec();
    v2[8..12].copy_from_slice(&2u32.to_le_bytes());
    for page in v3[pages_at..v3.len() - 4].chunks(21) {
        assert_eq!(page[20], 0, "no page is packed");
        v2.extend_from_slice(&page[..20]);
    }
    let crc = crate::medium::image::crc32(&v2);
    v2.extend_from_slice(&crc.to_le_bytes());
    let (m, _, _) = Nand::open_image(&config(StoreKind::Token), &v2[..]).unwrap();
    for p in 0..3 {
        let ppa = n.geometry().ppa(BlockId(1), p);
        assert_eq!(m.peek_slot_oobs(ppa), n.peek_slot_oobs(ppa));
    }
    // Version 1 is refused, naming what this build reads.
    v2[8..12].copy_from_slice(&1u32.to_le_bytes());
    let e = Nand::open_image(&config(StoreKind::Token), &v2[..]).unwrap_err();
    assert!(e.to_string().contains("versions 2 to 3"), "{e}");
}
