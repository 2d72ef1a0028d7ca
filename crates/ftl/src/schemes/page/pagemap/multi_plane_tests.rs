//! Tests of the page map's `multi-plane` placement: a request's pages become
//! one multi-plane program when the planes are level, the planes stay level,
//! writes without the request hint are programmed alone, a page whose program
//! fails is programmed elsewhere, and the placement needs the chip command.
#![allow(clippy::unwrap_used)]

use ftlab_nand::{Commands, Geometry, Nand, NandConfig, Payload, SimTime, StoreKind, WearConfig};

use super::*;
use crate::testing::TIMING;
use crate::{ErrorKind, Flash, Ftl, FtlBuilder, Lpn};

/// One die of 2 planes x 8 blocks x 16 pages.
fn two_planes() -> Geometry {
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

fn flash(multi_plane: bool) -> Flash {
    let config = NandConfig {
        geometry: two_planes(),
        timing: TIMING,
        bad_block_rate: 0.0,
        wear: WearConfig::default(),
        store: StoreKind::Token,
        seed: 1,
        faults: Default::default(),
        commands: Commands { multi_plane, ..Commands::default() },
    };
    Flash::new(Nand::new(&config).unwrap())
}

fn config() -> PageMapConfig {
    PageMapConfig { plane_allocation: PlaneAllocation::MultiPlane, gc_free_blocks: 2, ..PageMapConfig::default() }
}

use crate::testing::write_request as request;

fn read(ftl: &mut dyn Ftl, flash: &mut Flash, now: SimTime, lpn: u32) -> Option<Payload> {
    ftl.read(&mut flash.io(now), Lpn(lpn)).unwrap()
}

#[test]
fn a_two_page_request_is_one_multi_plane_program() {
    let mut flash = flash(true);
    let mut ftl = config().format(&mut flash.io(SimTime::ZERO)).unwrap();
    let done = request(&mut *ftl, &mut flash, SimTime::ZERO, &[0, 1], 100);
    let c = *flash.counters();
    assert_eq!((c.programs.get(Purpose::Host), c.multi_plane.get(Purpose::Host)), (2, 1));
    // Two transfers, one array time.
    let xfer = TIMING.transfer(4096 + 64);
    assert_eq!(done, xfer + xfer + SimTime(TIMING.program_ns));
    assert_eq!(read(&mut *ftl, &mut flash, done, 0), Some(Payload::Token(100)));
    assert_eq!(read(&mut *ftl, &mut flash, done, 1), Some(Payload::Token(101)));
}

#[test]
fn the_planes_stay_level_and_single_writes_go_alone() {
    let mut flash = flash(true);
    let mut ftl = config().format(&mut flash.io(SimTime::ZERO)).unwrap();
    let mut now = SimTime::ZERO;
    // One page alone: plane 0 is one page ahead.
    now = request(&mut *ftl, &mut flash, now, &[0], 0);
    // A two-page request levels the planes first (plane 1 alone), then its
    // last page goes alone (on a one-die device there is no other die to
    // level), leaving plane 0 ahead again.
    now = request(&mut *ftl, &mut flash, now, &[1, 2], 0);
    assert_eq!(flash.counters().multi_plane.get(Purpose::Host), 0);
    // A three-page request: plane 1 alone, then the two level planes together.
    now = request(&mut *ftl, &mut flash, now, &[3, 4, 5], 0);
    assert_eq!(flash.counters().multi_plane.get(Purpose::Host), 1);
    // Level now: a four-page request is two multi-plane programs.
    now = request(&mut *ftl, &mut flash, now, &[5, 6, 7, 8], 0);
    assert_eq!(flash.counters().multi_plane.get(Purpose::Host), 3);
    // Without the request hint every write is alone.
    for l in 9..20 {
        now = request(&mut *ftl, &mut flash, now, &[l], 7);
    }
    assert_eq!(flash.counters().multi_plane.get(Purpose::Host), 3);
    assert_eq!(flash.counters().programs.get(Purpose::Host), 21);
    for l in 0..20 {
        let want = if l >= 9 { 7 + u64::from(l) } else { u64::from(l) };
        assert_eq!(read(&mut *ftl, &mut flash, now, l), Some(Payload::Token(want)), "lpn {l}");
    }
}

#[test]
fn random_multi_page_requests_read_back_through_garbage_collection_and_a_failed_program() {
    let mut flash = flash(true);
    let mut ftl = config().format(&mut flash.io(SimTime::ZERO)).unwrap();
    let n = ftl.logical_pages();
    let mut model = vec![None; n as usize];
    let mut now = SimTime::ZERO;
    let mut x: u64 = 12345;
    flash.fail_program_in(700);
    for i in 0..3000u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let len = 1 + (x >> 60) as u32 % 4;
        let start = ((x >> 20) % u64::from(n - len)) as u32;
        let lpns: Vec<u32> = (start..start + len).collect();
        now = request(&mut *ftl, &mut flash, now, &lpns, i * 1000);
        for &l in &lpns {
            model[l as usize] = Some(Payload::Token(i * 1000 + u64::from(l)));
        }
    }
    let c = *flash.counters();
    assert!(c.erases.get(Purpose::Gc) > 0, "garbage collection ran");
    assert!(c.multi_plane.get(Purpose::Host) > 500, "{c:?}");
    for l in 0..n {
        assert_eq!(read(&mut *ftl, &mut flash, now, l), model[l as usize], "lpn {l}");
    }
    ftl.check_invariants(&flash).unwrap();
}

#[test]
fn multi_plane_placement_needs_the_chip_command_and_the_ftlab_gc_model() {
    let mut flash = flash(false);
    let e = config().format(&mut flash.io(SimTime::ZERO)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    assert!(e.to_string().contains("device.commands.multi_plane"), "{e}");
    let e = PageMapConfig { gc_model: GcModel::Mqsim, ..config() }.validate().unwrap_err();
    assert!(e.to_string().contains("plane_allocation"), "{e}");
}
