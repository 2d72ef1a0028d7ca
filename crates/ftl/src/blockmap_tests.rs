//! Tests of the block-mapping unit: logical pages of all 32 bits and the
//! scheme's tag survive the OOB, the searches and the recovery scan.
#![allow(clippy::unwrap_used)]

use ftlab_nand::{BlockId, PageKind, Payload, SimTime};

use super::*;
use crate::testing;

/// Logical pages above 2^29 (the three high bits set in turn, and all of
/// them), and one that shares its low 29 bits with each of them.
const HIGH: [u32; 4] = [(1 << 29) | 5, (1 << 30) | 5, (1 << 31) | 5, u32::MAX - 1];

#[test]
fn merge_tags_mark_the_last_copy() {
    assert_eq!((0..3).map(|k| tag::merge(k, 3)).collect::<Vec<_>>(), [tag::MERGE, tag::MERGE, tag::MERGE | tag::END]);
}

#[test]
fn logical_pages_above_2_pow_29_round_trip_through_the_oob() {
    let mut fl = testing::flash(testing::one_die(4, 8), 1);
    let g = *fl.nand().geometry();
    let mut io = fl.io(SimTime::ZERO);
    // Block 0: lpn 5, then the high ones as a merge's copies, the last one
    // ending it; block 1: one queue page.
    let lpns = [5, HIGH[0], HIGH[1], HIGH[2], HIGH[3]];
    for (k, &lpn) in lpns.iter().enumerate() {
        let t = if k == 0 { 0 } else { tag::merge(k - 1, lpns.len() - 1) };
        io.program_tagged(g.ppa(BlockId(0), k as u32), lpn, PageKind::Data, t, Payload::Token(k as u64), Purpose::Host)
            .unwrap();
    }
    io.program_tagged(g.ppa(BlockId(1), 0), HIGH[2], PageKind::Data, tag::QUEUE, Payload::Token(9), Purpose::Host)
        .unwrap();
    // Each logical page is found at its own page, never at one sharing its low
    // bits.
    for (k, &lpn) in lpns.iter().enumerate() {
        let found = search_block(&mut io, BlockId(0), 5, lpn, Purpose::Host).unwrap();
        assert_eq!(found, Some(g.ppa(BlockId(0), k as u32)), "lpn {lpn:#x}");
    }
    assert_eq!(search_block(&mut io, BlockId(0), 5, ((1 << 29) - 1) & HIGH[3], Purpose::Host).unwrap(), None);

    let (used, erased) = scan_device(&mut io).unwrap();
    assert_eq!(erased, [BlockId(2), BlockId(3)]);
    let [data, queue] = &used[..] else { panic!("{used:?}") };
    let got: Vec<(u32, u8)> = data.pages.iter().map(|p| (p.lpn, p.tag)).collect();
    let merge = tag::MERGE;
    assert_eq!(got, [(5, 0), (HIGH[0], merge), (HIGH[1], merge), (HIGH[2], merge), (HIGH[3], merge | tag::END)]);
    assert!(data.complete_merge() && !data.incomplete_merge() && !data.first_tagged(tag::QUEUE));
    assert_eq!((queue.first().lpn, queue.first().tag), (HIGH[2], tag::QUEUE));
    assert!(queue.first_tagged(tag::QUEUE) && !queue.complete_merge());
}

#[test]
fn a_merge_without_its_last_copy_is_incomplete() {
    let mut fl = testing::flash(testing::one_die(4, 8), 1);
    let g = *fl.nand().geometry();
    let mut io = fl.io(SimTime::ZERO);
    for k in 0..3 {
        let ppa = g.ppa(BlockId(2), k);
        io.program_tagged(ppa, HIGH[3] - k, PageKind::Data, tag::MERGE, Payload::Token(1), Purpose::Gc).unwrap();
    }
    let (used, _) = scan_device(&mut io).unwrap();
    assert_eq!(used.len(), 1);
    assert!(used[0].incomplete_merge() && !used[0].complete_merge());
    assert_eq!(used[0].pages.iter().map(|p| p.lpn).collect::<Vec<_>>(), [HIGH[3], HIGH[3] - 1, HIGH[3] - 2]);
}

#[test]
fn the_logical_space_takes_every_page_below_the_sentinel() {
    // 2^30 logical pages: beyond the 2^29 that flag bits in the logical page
    // left.
    assert_eq!(logical_pages("nftl", 1 << 20, 1 << 10).unwrap(), 1 << 30);
    assert_eq!(logical_pages("nftl", (1 << 22) - 1, 1 << 10).unwrap(), u32::MAX - 1023);
    let e = logical_pages("gftl", 1 << 22, 1 << 10).unwrap_err();
    assert!(matches!(&e, FtlError::Config(c) if c.key == "device"), "{e}");
    assert!(e.to_string().contains("gftl supports fewer than 4294967295 logical pages"), "{e}");
}

#[test]
fn logical_blocks_keep_the_spare_and_name_the_key() {
    assert_eq!(logical_blocks("nftl", 100, 0.16, 2).unwrap(), 84);
    assert_eq!(logical_blocks("bast", 10, 0.0, 3).unwrap(), 7);
    let e = logical_blocks("nftl", 2, 0.16, 2).unwrap_err();
    assert!(e.to_string().contains("too small for nftl: 2 good blocks, 2 of them spare"), "{e}");
    let e = logical_blocks("nftl", 100, 1.0, 2).unwrap_err();
    assert!(matches!(&e, FtlError::Config(c) if c.key == "ftl.over_provisioning"), "{e}");
    assert!(crate::config::over_provisioning("nftl", 0.999_999_999).is_ok());
    assert!(crate::config::over_provisioning("nftl", f64::NAN).is_err());
}
