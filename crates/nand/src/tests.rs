//! Tests of the medium's rules: each violation is an error, power cuts tear or undo
//! exactly the operations in flight, and a random operation sequence matches a
//! simple reference model.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;

use proptest::prelude::*;

use crate::*;

/// The chip timing of the crate's medium tests.
pub(crate) const TIMING: Timing =
    Timing { read_ns: 25_000, read_oob_ns: 10_000, program_ns: 200_000, erase_ns: 1_500_000, channel_mb_per_s: 400 };

pub(crate) fn config(bad_block_rate: f64) -> NandConfig {
    NandConfig {
        geometry: Geometry {
            channels: 2,
            ways_per_channel: 1,
            dies_per_way: 1,
            planes_per_die: 2,
            blocks_per_plane: 8,
            pages_per_block: 4,
            page_size: 4096,
            oob_size: 128,
        },
        timing: TIMING,
        bad_block_rate,
        wear: WearConfig::default(),
        store: StoreKind::Token,
        seed: 3,
        faults: Default::default(),
        commands: Default::default(),
    }
}

fn nand() -> Nand {
    Nand::new(&config(0.0)).unwrap()
}

const T0: SimTime = SimTime::ZERO;

#[test]
fn program_twice_without_erase_is_an_error() {
    let mut n = nand();
    let p = n.geometry().ppa(BlockId(0), 0);
    n.program(p, 1, PageKind::Data, Payload::Token(1), T0).unwrap();
    assert_eq!(n.program(p, 1, PageKind::Data, Payload::Token(2), T0), Err(NandError::AlreadyProgrammed { ppa: p }));
    // The first contents are intact.
    assert_eq!(n.read(p, T0).unwrap().0, Payload::Token(1));
}

#[test]
fn out_of_order_program_is_an_error() {
    let mut n = nand();
    let p2 = n.geometry().ppa(BlockId(1), 2);
    assert_eq!(
        n.program(p2, 1, PageKind::Data, Payload::Token(1), T0),
        Err(NandError::OutOfOrder { ppa: p2, expected: 0 })
    );
    assert_eq!(n.programmed_pages(BlockId(1)), 0);
}

#[test]
fn erase_allows_reprogramming_and_counts() {
    let mut n = nand();
    let p = n.geometry().ppa(BlockId(2), 0);
    n.program(p, 1, PageKind::Data, Payload::Token(1), T0).unwrap();
    n.erase(BlockId(2), T0).unwrap();
    assert_eq!(n.erase_count(BlockId(2)), 1);
    assert_eq!(n.read(p, T0).unwrap_err(), NandError::NotProgrammed(p));
    n.program(p, 1, PageKind::Data, Payload::Token(9), T0).unwrap();
    assert_eq!(n.read(p, T0).unwrap().0, Payload::Token(9));
}

#[test]
fn bad_blocks_refuse_every_operation() {
    let n0 = Nand::new(&config(0.3)).unwrap();
    let g = *n0.geometry();
    let bad = (0..g.total_blocks()).map(BlockId).find(|&b| n0.is_bad(b)).expect("30% rate draws a bad block");
    let mut n = n0;
    let p = g.ppa(bad, 0);
    assert_eq!(n.program(p, 1, PageKind::Data, Payload::Token(1), T0), Err(NandError::BadBlock(bad)));
    assert_eq!(n.erase(bad, T0), Err(NandError::BadBlock(bad)));
    assert_eq!(n.read(p, T0).unwrap_err(), NandError::BadBlock(bad));
    assert_eq!(n.read_oob(p, T0).unwrap_err(), NandError::BadBlock(bad));
    // The draw is seeded.
    let again = Nand::new(&config(0.3)).unwrap();
    assert!((0..g.total_blocks()).all(|b| again.is_bad(BlockId(b)) == n.is_bad(BlockId(b))));
}

#[test]
fn out_of_range_is_an_error() {
    let mut n = nand();
    let end = Ppa(n.geometry().total_pages());
    assert_eq!(n.read(end, T0).unwrap_err(), NandError::OutOfRange(end));
    let b = BlockId(n.geometry().total_blocks());
    assert_eq!(n.erase(b, T0), Err(NandError::BlockOutOfRange(b)));
}

#[test]
fn copyback_stays_in_its_plane() {
    let mut n = nand();
    let g = *n.geometry();
    let from = g.ppa(BlockId(0), 0);
    n.program(from, 5, PageKind::Data, Payload::Token(55), T0).unwrap();
    // Block 8 is plane 1 of die 0; block 1 is plane 0 of die 0.
    let other_plane = g.ppa(BlockId(8), 0);
    assert_eq!(n.copyback(from, other_plane, T0), Err(NandError::CopybackAcrossPlanes { from, to: other_plane }));
    let same_plane = g.ppa(BlockId(1), 0);
    let (src, seq, _) = n.copyback(from, same_plane, T0).unwrap();
    assert_eq!(src.lpn, 5);
    let (data, oob, _) = n.read(same_plane, T0).unwrap();
    assert_eq!(data, Payload::Token(55));
    assert_eq!((oob.lpn, oob.seq), (5, seq));
}

#[test]
fn payload_must_fit_the_store() {
    let mut n = nand();
    let p = n.geometry().ppa(BlockId(0), 0);
    // A token store takes bytes of exactly one page (an FTL's metadata), no other length.
    assert!(matches!(
        n.program(p, 1, PageKind::Data, Payload::Bytes(vec![0; 100].into()), T0),
        Err(NandError::PayloadMismatch(_))
    ));
    // The refused program left the page erased.
    n.program(p, 1, PageKind::Data, Payload::Token(1), T0).unwrap();
    let q = n.geometry().ppa(BlockId(0), 1);
    n.program(q, 2, PageKind::Meta, Payload::Bytes(vec![7; 4096].into()), T0).unwrap();
    assert_eq!(n.read(q, T0).unwrap().0, Payload::Bytes(vec![7; 4096].into()));
}

#[test]
fn oob_carries_lpn_seq_and_kind() {
    let mut n = nand();
    let g = *n.geometry();
    let (s1, _) = n.program(g.ppa(BlockId(0), 0), 10, PageKind::Data, Payload::Token(1), T0).unwrap();
    let (s2, _) = n.program(g.ppa(BlockId(3), 0), 11, PageKind::Map, Payload::Token(2), T0).unwrap();
    assert!(s2 > s1);
    let (oob, _) = n.read_oob(g.ppa(BlockId(3), 0), T0).unwrap();
    assert_eq!(oob, Some(Oob::new(11, s2, PageKind::Map)));
    let (erased, _) = n.read_oob(g.ppa(BlockId(3), 1), T0).unwrap();
    assert_eq!(erased, None);
}

#[test]
fn the_tag_packs_beside_seq_and_kind_and_travels_with_a_copyback() {
    let mut n = nand();
    let g = *n.geometry();
    let kinds = [PageKind::Data, PageKind::Map, PageKind::Checkpoint, PageKind::Meta];
    // Every kind with the smallest, largest and a mixed tag; logical pages
    // using all 32 bits.
    let mut page = 0;
    for (i, &kind) in kinds.iter().enumerate() {
        for tag in [0, Oob::MAX_TAG, 0b10_1010] {
            let lpn = (0xf000_0000 - ((i as u32) << 28)) | u32::from(tag);
            let ppa = g.ppa(BlockId(page / 4), page % 4);
            let (seq, _) = n.program_tagged(ppa, lpn, kind, tag, Payload::Token(7), T0).unwrap();
            assert_eq!(n.peek_oob(ppa), Some(Oob { lpn, seq, kind, tag }), "{kind:?} tag {tag}");
            page += 1;
        }
    }
    // A copyback (blocks 0 and 4 are in one plane) keeps the tag.
    let from = g.ppa(BlockId(0), 1);
    let to = g.ppa(BlockId(4), 0);
    let (src, seq, _) = n.copyback(from, to, T0).unwrap();
    assert_eq!(src.tag, Oob::MAX_TAG);
    assert_eq!(n.peek_oob(to), Some(Oob { seq, ..src }));
}

#[test]
fn a_tag_out_of_range_is_refused_and_the_page_stays_erased() {
    let mut n = nand();
    let ppa = n.geometry().ppa(BlockId(0), 0);
    let tag = Oob::MAX_TAG + 1;
    let e = n.program_tagged(ppa, 1, PageKind::Data, tag, Payload::Token(1), T0).unwrap_err();
    assert_eq!(e, NandError::TagOutOfRange { tag: 64 });
    assert!(e.to_string().contains("0 to 63"), "{e}");
    let f = n.try_program_tagged(ppa, 1, PageKind::Data, u8::MAX, Payload::Token(2), T0).unwrap_err();
    assert_eq!((f.error, f.data), (NandError::TagOutOfRange { tag: u8::MAX }, Some(Payload::Token(2))));
    assert_eq!(Oob::check_tag(Oob::MAX_TAG), Ok(63));
    assert_eq!(n.peek_oob(ppa), None);
    n.program_tagged(ppa, 1, PageKind::Data, Oob::MAX_TAG, Payload::Token(3), T0).unwrap();
}

#[test]
fn power_cut_tears_running_and_undoes_unstarted_operations() {
    let mut n = nand();
    let g = *n.geometry();
    let a = g.ppa(BlockId(0), 0);
    let b = g.ppa(BlockId(0), 1);
    let c = g.ppa(BlockId(0), 2);
    let (_, sa) = n.program(a, 1, PageKind::Data, Payload::Token(1), T0).unwrap();
    let (_, sb) = n.program(b, 2, PageKind::Data, Payload::Token(2), T0).unwrap();
    let (_, sc) = n.program(c, 3, PageKind::Data, Payload::Token(3), T0).unwrap();
    assert!(sa.finish <= sb.start && sb.finish <= sc.start);
    // Cut while b is being programmed: a survives, b is torn, c never happened.
    let cut = SimTime((sb.start.0 + sb.finish.0) / 2);
    n.power_cut(cut);
    assert_eq!(n.read(a, cut).unwrap().0, Payload::Token(1));
    assert_eq!(n.read(b, cut).unwrap_err(), NandError::Uncorrectable(b));
    assert_eq!(n.read_oob(b, cut).unwrap_err(), NandError::Uncorrectable(b));
    assert_eq!(n.read(c, cut).unwrap_err(), NandError::NotProgrammed(c));
    assert!(n.is_torn(b));
    // c can be programmed again (it stayed erased); the block is otherwise usable.
    n.program(c, 3, PageKind::Data, Payload::Token(4), cut).unwrap();
    n.erase(BlockId(0), cut).unwrap();
    assert!(!n.is_torn(b));
}

#[test]
fn power_cut_restores_a_block_whose_erase_had_not_started() {
    let mut n = nand();
    let g = *n.geometry();
    let p = g.ppa(BlockId(1), 0);
    let (_, sp) = n.program(p, 7, PageKind::Data, Payload::Token(70), T0).unwrap();
    n.retire(sp.finish);
    // A long erase elsewhere on the die delays the erase of block 1.
    let first = n.erase(BlockId(2), sp.finish).unwrap();
    let second = n.erase(BlockId(1), sp.finish).unwrap();
    assert!(second.start >= first.finish);
    // Reprogramming block 1 after its erase, then cutting before that erase begins.
    n.program(p, 8, PageKind::Data, Payload::Token(80), sp.finish).unwrap();
    let cut = SimTime(second.start.0 - 1);
    n.power_cut(cut);
    assert_eq!(n.read(p, cut).unwrap().0, Payload::Token(70));
    assert_eq!(n.erase_count(BlockId(1)), 0);
    // The erase under way at the cut is torn: block 2 must be erased before use.
    let torn = g.ppa(BlockId(2), 0);
    assert_eq!(n.program(torn, 1, PageKind::Data, Payload::Token(1), cut), Err(NandError::TornBlock(BlockId(2))));
    assert_eq!(n.read_oob(torn, cut).unwrap_err(), NandError::Uncorrectable(torn));
}

#[test]
fn retired_operations_survive_a_later_cut() {
    let mut n = nand();
    let p = n.geometry().ppa(BlockId(0), 0);
    let (_, s) = n.program(p, 1, PageKind::Data, Payload::Token(1), T0).unwrap();
    n.retire(s.finish);
    n.power_cut(s.finish);
    assert_eq!(n.read(p, s.finish).unwrap().0, Payload::Token(1));
}

#[derive(Debug, Clone)]
enum Op {
    Program(u32),
    Erase(u32),
    Read(u32, u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u32..32).prop_map(Op::Program),
        1 => (0u32..32).prop_map(Op::Erase),
        2 => ((0u32..32), (0u32..4)).prop_map(|(b, p)| Op::Read(b, p)),
    ]
}

proptest! {
    /// A random operation stream against a map of what each page should hold.
    #[test]
    fn medium_matches_a_reference_model(ops in proptest::collection::vec(op(), 1..200)) {
        let mut n = nand();
        let g = *n.geometry();
        let mut model: HashMap<u32, Vec<u64>> = HashMap::new();
        let mut token = 0u64;
        for o in ops {
            match o {
                Op::Program(b) => {
                    let pages = model.entry(b).or_default();
                    token += 1;
                    let next = pages.len() as u32;
                    let r = n.program(g.ppa(BlockId(b), next.min(3)), 0, PageKind::Data, Payload::Token(token), T0);
                    if next < 4 {
                        prop_assert!(r.is_ok());
                        pages.push(token);
                    } else {
                        prop_assert!(matches!(r, Err(NandError::AlreadyProgrammed { .. })), "{:?}", r);
                    }
                }
                Op::Erase(b) => {
                    n.erase(BlockId(b), T0).unwrap();
                    model.insert(b, Vec::new());
                }
                Op::Read(b, p) => {
                    let r = n.read(g.ppa(BlockId(b), p), T0);
                    match model.get(&b).and_then(|v| v.get(p as usize)) {
                        Some(&t) => prop_assert_eq!(r.unwrap().0, Payload::Token(t)),
                        None => prop_assert!(matches!(r, Err(NandError::NotProgrammed(_)))),
                    }
                }
            }
        }
    }
}

#[test]
fn timings_beyond_an_hour_are_refused_naming_the_key() {
    for (field, set) in [
        ("timing.read_ns", (|t: &mut Timing| t.read_ns = u64::MAX) as fn(&mut Timing)),
        ("timing.read_oob_ns", |t| t.read_oob_ns = 1 << 62),
        ("timing.program_ns", |t| t.program_ns = i64::MAX as u64),
        ("timing.erase_ns", |t| t.erase_ns = Timing::MAX_OPERATION_NS + 1),
    ] {
        let mut c = config(0.0);
        set(&mut c.timing);
        let e = Nand::new(&c).unwrap_err().to_string();
        assert!(e.starts_with(field) && e.contains("at most 3600000000000 ns (one hour)"), "{field}: {e}");
    }
    let mut c = config(0.0);
    c.timing.erase_ns = Timing::MAX_OPERATION_NS;
    assert!(Nand::new(&c).is_ok(), "an hour itself is accepted");
}

#[test]
fn an_operation_that_would_start_past_the_latest_time_is_an_error() {
    let mut n = nand();
    let g = *n.geometry();
    let late = SimTime(SimTime::LATEST.0 + 1);
    let e = n.program(g.ppa(BlockId(0), 0), 1, PageKind::Data, Payload::Token(1), late).unwrap_err();
    assert!(matches!(e, NandError::TimeLimit { .. }), "{e}");
    assert!(n.erase(BlockId(0), SimTime::MAX).is_err());
    assert_eq!(n.erase_count(BlockId(0)), 0, "a refused erase changes nothing");
    // Just before the limit the operation runs, and its end is exact (past the limit).
    let at = SimTime(SimTime::LATEST.0 - 1_000);
    let (_, span) = n.program(g.ppa(BlockId(0), 0), 1, PageKind::Data, Payload::Token(1), at).unwrap();
    assert!(span.finish > at && span.finish < SimTime::MAX);
    // The die is now busy past the limit: the next operation on it is refused.
    let e = n.read(g.ppa(BlockId(0), 0), SimTime::ZERO).unwrap_err();
    assert!(e.to_string().contains("latest simulated time"), "{e}");
}

#[test]
fn an_untimed_read_answers_as_a_read_and_takes_no_time() {
    let mut n = nand();
    let g = *n.geometry();
    let p = g.ppa(BlockId(0), 0);
    n.program(p, 7, PageKind::Data, Payload::Token(70), T0).unwrap();
    let die = n.layout().die_of(p);
    let busy = n.die_free_at(die);
    let (data, oob) = n.read_untimed(p).unwrap();
    assert_eq!(n.die_free_at(die), busy, "no time taken");
    let (d2, o2, _) = n.read(p, T0).unwrap();
    assert_eq!((data, oob), (d2, o2));
    assert!(n.die_free_at(die) > busy, "a timed read takes its time");
    let erased = g.ppa(BlockId(0), 1);
    assert_eq!(n.read_untimed(erased), Err(NandError::NotProgrammed(erased)));
    assert_eq!(n.read(erased, T0).map(|(d, o, _)| (d, o)), n.read_untimed(erased));
}
