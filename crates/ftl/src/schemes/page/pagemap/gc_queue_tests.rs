//! The per-die queues' rules, command by command: what a die takes first,
//! what goes with it as one multi-plane command, when an erase may go, and
//! that a host program waits for the collection queued on its die.
#![allow(clippy::unwrap_used)]

use ftlab_nand::{BlockId, Geometry, SimTime};

use super::*;
use crate::{testing, Purpose};

/// One die of two planes, 8 blocks of 16 pages each.
fn geometry() -> Geometry {
    Geometry {
        channels: 1,
        ways_per_channel: 1,
        dies_per_way: 1,
        planes_per_die: 2,
        blocks_per_plane: 8,
        pages_per_block: 16,
        page_size: 4096,
        oob_size: 64,
    }
}

fn queue() -> GcQueue {
    let mut q = GcQueue::new(2, 2, 16, true, false);
    q.set_on(true).unwrap();
    q
}

/// Plays the die until its queue is empty: what it was given, and the
/// instants it took a command.
fn drain(q: &mut GcQueue, flash: &mut Flash) -> (Played, Vec<SimTime>) {
    let mut played = Played::default();
    let mut at = Vec::new();
    let mut now = SimTime::ZERO;
    while q.queued() > 0 {
        now = q.next_play(flash, now);
        assert!(now < SimTime::MAX, "work queued and no die to take it");
        let mut io = flash.io(now);
        q.play(&mut io, &mut played).unwrap();
        at.push(now);
    }
    assert_eq!(q.next_play(flash, now), SimTime::MAX);
    (played, at)
}

/// Two victims, one a plane, whose valid pages share offsets 1 and 2: those
/// reads go two at a time, every copy pairs with the other plane's copy at
/// the same page of the copy blocks, the erases go together, and the host
/// program queued first waits for all of it.
#[test]
fn a_die_pairs_its_planes_collections_and_serves_the_host_after_them() {
    let mut flash = testing::flash(geometry(), 1);
    let mut q = queue();
    q.push_host(0, 0, 0, 7);
    q.push_victim(0, BlockId(0), [0, 1, 2].into_iter());
    q.push_victim(1, BlockId(8), [1, 2, 5].into_iter());
    assert!(q.collecting(0));
    assert_eq!(q.queued(), 1 + 4 + 4);
    let (played, at) = drain(&mut q, &mut flash);
    let c = flash.counters();
    // Reads: offset 0 alone, 1 and 2 paired, 5 alone; programs: three pairs;
    // one two-plane erase; then the host program.
    assert_eq!(at.len(), 4 + 3 + 1 + 1, "{at:?}");
    assert_eq!(c.multi_plane.get(Purpose::Gc), 2 + 3 + 1);
    assert_eq!(c.multi_plane.get(Purpose::Host), 0);
    assert_eq!(played.erases.len(), 2);
    assert_eq!(played.erases[0].2, played.erases[1].2, "one erase command");
    assert_eq!(played.hosts.len(), 1);
    let (token, finish) = played.hosts[0];
    assert_eq!(token, 7);
    assert!(finish > played.erases[0].2, "the host program went after the collection");
    assert!(!q.collecting(0));
    // Time: 4 read commands, 3 program commands, 1 erase, 1 program.
    let t = flash.nand().timing();
    let array = SimTime(4 * t.read_ns + 4 * t.program_ns + t.erase_ns);
    assert!(finish > array, "{finish:?} <= {array:?}");
}

/// The same victims without a shared offset: no read pairs (the copies still
/// do, at the copy blocks' pages), so the die takes two more commands and
/// finishes later: the pairing is what the time saved comes from.
#[test]
fn victims_without_shared_offsets_read_one_plane_at_a_time() {
    let mut flash = testing::flash(geometry(), 1);
    let mut q = queue();
    q.push_victim(0, BlockId(0), [0, 2, 4].into_iter());
    q.push_victim(1, BlockId(8), [1, 3, 5].into_iter());
    let (played, at) = drain(&mut q, &mut flash);
    assert_eq!(at.len(), 6 + 3 + 1);
    assert_eq!(flash.counters().multi_plane.get(Purpose::Gc), 3 + 1);
    let apart = played.erases[0].2;

    let mut flash = testing::flash(geometry(), 1);
    let mut q = queue();
    q.push_victim(0, BlockId(0), [0, 2, 4].into_iter());
    q.push_victim(1, BlockId(8), [0, 2, 4].into_iter());
    let (played, at) = drain(&mut q, &mut flash);
    assert_eq!(at.len(), 3 + 3 + 1);
    assert!(played.erases[0].2 < apart);
}

/// A victim's erase waits until each of its pages was read and programmed,
/// even when the die has nothing else to do; reads go before programs.
#[test]
fn an_erase_waits_for_its_victims_copies() {
    let mut flash = testing::flash(geometry(), 1);
    let mut q = queue();
    q.push_victim(0, BlockId(3), [4, 9].into_iter());
    let (played, at) = drain(&mut q, &mut flash);
    assert_eq!(at.len(), 5);
    let t = *flash.nand().timing();
    let c = flash.counters();
    assert!(c.die_ns.get(Purpose::Gc) >= 2 * t.read_ns + 2 * t.program_ns + t.erase_ns);
    let (plane, block, finish) = played.erases[0];
    assert_eq!((plane, block), (0, BlockId(3)));
    assert!(finish.0 >= 2 * t.read_ns + 2 * t.program_ns + t.erase_ns);
    // A victim with no valid page is erased at once.
    let mut q = queue();
    q.push_victim(1, BlockId(12), std::iter::empty());
    let (played, at) = drain(&mut q, &mut flash);
    assert_eq!((at.len(), played.erases.len()), (1, 1));
}

/// Host programs of the two planes at one page offset go together; at
/// different offsets, one at a time.
#[test]
fn host_programs_pair_at_one_offset() {
    let mut flash = testing::flash(geometry(), 1);
    let mut q = queue();
    q.push_host(0, 3, 0, 1);
    q.push_host(1, 5, 0, 2);
    q.push_host(0, 4, 0, 3);
    q.push_host(1, 6, 0, 4);
    q.push_host(0, 5, 0, 5);
    let (played, at) = drain(&mut q, &mut flash);
    // 3 alone, 5 with 5 (tokens 5 and 2), 4 alone, 6 alone.
    assert_eq!(at.len(), 4, "{:?}", played.hosts);
    assert_eq!(flash.counters().multi_plane.get(Purpose::Host), 1);
    let finish = |token: u64| played.hosts.iter().find(|h| h.0 == token).unwrap().1;
    assert_eq!(finish(5), finish(2));
    assert!(finish(1) < finish(2) && finish(2) < finish(3) && finish(3) < finish(4));
}

/// A chip without multi-plane commands takes every command alone.
#[test]
fn without_multi_plane_commands_nothing_pairs() {
    let mut flash = testing::flash(geometry(), 1);
    let mut q = GcQueue::new(2, 2, 16, false, false);
    q.set_on(true).unwrap();
    q.push_victim(0, BlockId(0), [0, 1, 2].into_iter());
    q.push_victim(1, BlockId(8), [0, 1, 2].into_iter());
    q.push_host(0, 0, 0, 1);
    q.push_host(1, 0, 0, 2);
    let (_, at) = drain(&mut q, &mut flash);
    assert_eq!(at.len(), 6 + 6 + 2 + 2);
    assert_eq!(flash.counters().multi_plane.total(), 0);
}

#[test]
fn queues_cannot_be_turned_off_with_work_in_them() {
    let mut q = queue();
    q.push_host(1, 0, 0, 9);
    let e = q.set_on(false).unwrap_err();
    assert!(e.to_string().contains("play them first"), "{e}");
    let mut flash = testing::flash(geometry(), 1);
    drain(&mut q, &mut flash);
    q.set_on(false).unwrap();
    assert!(!q.on());
}

/// With copyback a read played is the page's whole move: one command a page
/// (two pages when the planes pair), no program queued after it.
#[test]
fn with_copyback_a_read_is_the_whole_move() {
    let mut flash = testing::flash(geometry(), 1);
    let mut q = GcQueue::new(2, 2, 16, true, true);
    q.set_on(true).unwrap();
    q.push_victim(0, BlockId(0), [0, 1, 2].into_iter());
    q.push_victim(1, BlockId(8), [1, 2, 5].into_iter());
    let (played, at) = drain(&mut q, &mut flash);
    assert_eq!(at.len(), 4 + 1);
    assert_eq!(flash.counters().multi_plane.get(Purpose::Gc), 2 + 1);
    let t = *flash.nand().timing();
    assert!(played.erases[0].2 .0 >= 4 * (t.read_ns + t.program_ns) + t.erase_ns);
}
