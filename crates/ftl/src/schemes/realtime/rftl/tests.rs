#![allow(clippy::unwrap_used)]

use super::*;
use crate::RealTime;

/// One die, one plane, 6 blocks of 16 pages: two logical blocks.
fn geometry() -> Geometry {
    Geometry {
        channels: 1,
        ways_per_channel: 1,
        dies_per_way: 1,
        planes_per_die: 1,
        blocks_per_plane: 6,
        pages_per_block: 16,
        page_size: 4096,
        oob_size: 128,
    }
}

fn timing() -> Timing {
    crate::testing::TIMING
}

fn flash(g: Geometry) -> Flash {
    crate::testing::flash(g, 1)
}

fn format(flash: &mut Flash, config: RftlConfig) -> Rftl {
    Rftl::format(config, &mut flash.io(SimTime::ZERO)).unwrap()
}

/// Writes `lpn` at `now`; returns the command's completion.
fn write(ftl: &mut Rftl, flash: &mut Flash, now: SimTime, lpn: u32, token: u64) -> SimTime {
    let mut io = flash.io(now);
    ftl.write(&mut io, Lpn(lpn), Payload::Token(token), &Hint::default()).unwrap();
    io.completion()
}

#[test]
fn plan_follows_the_erase_time_and_the_block_size() {
    let g = geometry();
    // Copyback: 1500 / (25 + 200) = 6 copies; without it each copy also moves
    // 4224 bytes over a 200 MB/s channel twice (2 x 21.12 us): 1500 / 267.24 = 5.
    assert_eq!(RftlConfig::max_copies_per_step(&g, &timing(), true), 6);
    assert_eq!(RftlConfig::max_copies_per_step(&g, &timing(), false), 5);
    // n + ceil(n / k) + 1 <= pi.
    assert_eq!(RftlConfig::max_pages_per_logical_block(16, 6), 12);
    assert_eq!(RftlConfig::max_pages_per_logical_block(64, 6), 54);
    assert_eq!(RftlConfig::max_pages_per_logical_block(64, 3), 47);
    assert_eq!(RftlConfig::max_pages_per_logical_block(2, 1), 0);
    let plan = RftlConfig::default().plan(&g, &timing(), true).unwrap();
    assert_eq!(plan, RftlPlan { copies_per_step: 6, pages_per_logical_block: 12 });
    let e = RftlConfig { copies_per_step: 7, ..RftlConfig::default() }.plan(&g, &timing(), true).unwrap_err();
    assert!(e.to_string().contains("copies_per_step = 7") && e.to_string().contains("at most 6"), "{e}");
    let e = RftlConfig { pages_per_logical_block: 13, ..RftlConfig::default() }.plan(&g, &timing(), true).unwrap_err();
    assert!(e.to_string().contains("at most 12"), "{e}");
    let slow_erase = Timing { erase_ns: 200_000, ..timing() };
    assert!(RftlConfig::default().plan(&g, &slow_erase, true).is_err());
}

#[test]
fn logical_space_is_a_third_of_the_blocks_minus_the_collection_room() {
    let mut f = flash(geometry());
    let ftl = format(&mut f, RftlConfig::default());
    // 6 blocks -> 2 logical blocks of 12 pages.
    assert_eq!(ftl.logical_pages(), 24);
    let mut f = flash(Geometry { blocks_per_plane: 8, planes_per_die: 2, ..geometry() });
    let ftl = format(&mut f, RftlConfig { pages_per_logical_block: 10, ..RftlConfig::default() });
    // Two triples per plane (2 blocks per plane unused), 10 pages each.
    assert_eq!(ftl.logical_pages(), 40);
    // Neighbouring logical blocks alternate planes.
    assert_ne!(ftl.lblocks[0].blocks[0].0 / 8, ftl.lblocks[1].blocks[0].0 / 8);
}

#[test]
fn service_bound_is_table_i_with_transfers() {
    let mut f = flash(geometry());
    let ftl = format(&mut f, RftlConfig::default());
    // t_er + t_wrpg + t_rdoob: 1500 + (200 + 21.12) + (25 + 0.64) us.
    assert_eq!(ftl.service_bound(), Some(SimTime(1_500_000 + 221_120 + 25_640)));
}

/// Per write: the flash work of its partial step.
fn step_work(f: &Flash, before: &crate::Counters) -> (u64, u64) {
    let c = f.counters();
    (
        c.programs.get(Purpose::Gc) - before.programs.get(Purpose::Gc),
        c.erases.get(Purpose::Gc) - before.erases.get(Purpose::Gc),
    )
}

#[test]
fn collection_runs_in_bounded_steps_then_rotates_the_roles() {
    let mut f = flash(geometry());
    let mut ftl = format(&mut f, RftlConfig::default());
    let n = ftl.plan().pages_per_logical_block;
    let k = u64::from(ftl.plan().copies_per_step);
    let ppb = 16;
    let roles0 = ftl.lblocks[0].roles;
    let mut now = SimTime::ZERO;
    let mut token = 1;
    // Fill the primary and the buffer of logical block 0 with all n pages once,
    // then overwrite pages 0..3 only: the buffer's last write starts a collection
    // that copies pages 4..n from the primary and 0..3 from the buffer.
    let mut lpns: Vec<u32> = (0..n).collect();
    while lpns.len() < 2 * ppb {
        lpns.push(lpns.len() as u32 % 4);
    }
    for &lpn in &lpns[..2 * ppb - 1] {
        let before = *f.counters();
        now = write(&mut ftl, &mut f, now, lpn, token);
        token += 1;
        assert_eq!(step_work(&f, &before), (0, 0), "no collection before the buffer is full");
    }
    let mut steps = Vec::new();
    let mut lpn = 4;
    loop {
        let before = *f.counters();
        now = write(&mut ftl, &mut f, now, lpn % n, token);
        token += 1;
        lpn += 1;
        let (copies, erases) = step_work(&f, &before);
        assert!(copies <= k && erases <= 1 && (copies == 0 || erases == 0), "step ({copies}, {erases})");
        steps.push((copies, erases));
        if ftl.lblocks[0].phase == Phase::Normal {
            break;
        }
        now = f.nand().die_free_at(ftlab_nand::DieId(0)).max(now);
    }
    // Every page was valid: n copies in ceil(n / k) steps, then two erases; the
    // writes that drove the later steps went to the replacement too.
    let copies: u64 = steps.iter().map(|s| s.0).sum();
    assert_eq!(copies, u64::from(n));
    assert_eq!(steps.len() as u64, u64::from(n).div_ceil(k) + 2);
    assert_eq!(steps.iter().filter(|s| s.1 == 1).count(), 2);
    let l = ftl.lblocks[0];
    assert_eq!(u64::from(l.written[l.role(PRIMARY)]), u64::from(n) + steps.len() as u64 - 1);
    assert_eq!(l.roles, [roles0[2], roles0[0], roles0[1]], "replacement -> primary -> buffer -> replacement");
    assert_eq!(l.written[l.role(BUFFER)], 0);
    assert_eq!(l.written[l.role(REPLACEMENT)], 0);
    ftl.check_invariants(&f).unwrap();
}

#[test]
fn primary_full_trigger_collects_when_the_primary_fills_and_never_uses_the_buffer() {
    let config = RftlConfig { collect_at: CollectAt::PrimaryFull, ..RftlConfig::default() };
    let mut f = flash(geometry());
    let mut ftl = format(&mut f, config);
    let n = ftl.plan().pages_per_logical_block;
    let ppb = 16u32;
    let mut now = SimTime::ZERO;
    let mut token = 1;
    // The write that fills the primary starts the collection: its step copies.
    for i in 0..ppb {
        let before = *f.counters();
        now = write(&mut ftl, &mut f, now, i % n, token);
        token += 1;
        let (copies, _) = step_work(&f, &before);
        if i + 1 < ppb {
            assert_eq!(copies, 0, "no collection before the primary is full (write {i})");
        } else {
            assert!(copies > 0, "the write that fills the primary starts the collection");
        }
        now = f.nand().die_free_at(ftlab_nand::DieId(0)).max(now);
    }
    // Many collections later the buffer has never been written, and each
    // collection erased one block (the primary), not two.
    let mut erases = 0;
    for i in 0..20 * ppb {
        let before = *f.counters();
        now = write(&mut ftl, &mut f, now, i % n, token);
        token += 1;
        erases += step_work(&f, &before).1;
        assert_eq!(ftl.lblocks[0].written[ftl.lblocks[0].role(BUFFER)], 0, "the buffer is never written");
        now = f.nand().die_free_at(ftlab_nand::DieId(0)).max(now);
    }
    assert!(erases >= 16, "{erases} erases in 320 writes");
    ftl.check_invariants(&f).unwrap();
    // The default waits for the buffer too.
    let mut f = flash(geometry());
    let mut ftl = format(&mut f, RftlConfig::default());
    for i in 0..ppb {
        let before = *f.counters();
        now = write(&mut ftl, &mut f, now, i % n, token);
        token += 1;
        assert_eq!(step_work(&f, &before), (0, 0));
    }
    // A medium written with the primary-full trigger is not recovered.
    let e = Rftl::recover(config, &mut f.io(now)).unwrap_err();
    assert!(e.to_string().contains("collect_at"), "{e}");
}

#[test]
fn reads_never_collect() {
    let mut f = flash(geometry());
    let mut ftl = format(&mut f, RftlConfig::default());
    let mut now = SimTime::ZERO;
    // 31 writes to one logical page: primary and buffer all but full.
    for t in 0..32 {
        now = write(&mut ftl, &mut f, now, 3, t + 1);
    }
    assert_ne!(ftl.lblocks[0].phase, Phase::Normal, "the 32nd write started a collection");
    let before = *f.counters();
    for _ in 0..10 {
        let mut io = f.io(now);
        assert_eq!(ftl.read(&mut io, Lpn(3)).unwrap(), Some(Payload::Token(32)));
        now = io.completion();
    }
    let c = f.counters();
    assert_eq!(c.programs.total(), before.programs.total());
    assert_eq!(c.erases.total(), before.erases.total());
    assert_eq!(c.oob_reads.get(Purpose::Map) - before.oob_reads.get(Purpose::Map), 10, "one OOB read per read");
}

#[test]
fn closed_loop_adversarial_writes_stay_within_the_bound() {
    let mut f = flash(Geometry { dies_per_way: 2, ..geometry() });
    let mut ftl = format(&mut f, RftlConfig::default());
    let bound = ftl.service_bound().unwrap();
    let n = ftl.logical_pages();
    let mut now = SimTime::ZERO;
    let mut x: u64 = 12345;
    for t in 0..20_000u64 {
        // Mixed: sequential sweeps, one hot page, random pages.
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let lpn = match (t / 500) % 3 {
            0 => (t % u64::from(n)) as u32,
            1 => 5,
            _ => ((x >> 33) % u64::from(n)) as u32,
        };
        let done = write(&mut ftl, &mut f, now, lpn, t + 1);
        assert!(done.0 - now.0 <= bound.0, "write {t} of lpn {lpn} took {} ns > {}", done.0 - now.0, bound.0);
        if t % 7 == 0 {
            let mut io = f.io(done);
            ftl.read(&mut io, Lpn(lpn)).unwrap();
            assert!(io.completion().0 - done.0 <= bound.0);
            now = io.completion();
        } else {
            now = done;
        }
    }
    ftl.check_invariants(&f).unwrap();
}

#[test]
fn recovery_finishes_an_interrupted_collection() {
    let g = geometry();
    let mut f = flash(g);
    let config = RftlConfig::default();
    let mut ftl = format(&mut f, config);
    let n = ftl.plan().pages_per_logical_block;
    let mut now = SimTime::ZERO;
    // Fill primary and buffer, then one more write: the collection is under way.
    for t in 0..33u64 {
        now = write(&mut ftl, &mut f, now, (t % u64::from(n)) as u32, t + 1);
    }
    assert_ne!(ftl.lblocks[0].phase, Phase::Normal);
    let t = f.nand().die_free_at(ftlab_nand::DieId(0));
    f.power_cut(t);
    let mut io = f.io(t);
    let mut ftl = Rftl::recover(config, &mut io).unwrap();
    let at = io.last_finish();
    assert_eq!(ftl.lblocks[0].phase, Phase::Normal);
    ftl.check_invariants(&f).unwrap();
    // Token of the last write of each page: writes t = 21..=32 covered lpns 9..11 and 0..8.
    for lpn in 0..n {
        let last = (0..33u64).filter(|t| t % u64::from(n) == u64::from(lpn)).max().unwrap() + 1;
        let mut io = f.io(at);
        assert_eq!(ftl.read(&mut io, Lpn(lpn)).unwrap(), Some(Payload::Token(last)), "lpn {lpn}");
    }
}

#[test]
fn a_cut_at_any_point_of_a_collection_loses_no_acknowledged_write() {
    let config = RftlConfig::default();
    // Hot writes to logical block 0, issued back to back; 60 writes run about two
    // collections. Cut at many points of them.
    let lpns: Vec<u32> = (0..60u32).map(|t| (t * 7) % 12).collect();
    let run_until = |cut: Option<SimTime>| {
        let mut f = flash(geometry());
        let mut ftl = format(&mut f, config);
        let mut now = SimTime::ZERO;
        let mut acked: Vec<(u32, u64, SimTime)> = Vec::new();
        for (t, &lpn) in lpns.iter().enumerate() {
            if cut.is_some_and(|c| now >= c) {
                break;
            }
            let done = write(&mut ftl, &mut f, now, lpn, t as u64 + 1);
            acked.push((lpn, t as u64 + 1, done));
            now = done;
        }
        (f, acked, now)
    };
    let (_, _, end) = run_until(None);
    for i in 0..200u64 {
        let cut = SimTime(end.0 * i / 200 + 1_337);
        let (mut f, acked, _) = run_until(Some(cut));
        f.power_cut(cut);
        let mut io = f.io(cut);
        let mut ftl = Rftl::recover(config, &mut io).unwrap();
        let at = io.last_finish();
        ftl.check_invariants(&f).unwrap();
        for lpn in 0..12 {
            let mut io = f.io(at);
            let got = match ftl.read(&mut io, Lpn(lpn)).unwrap() {
                Some(Payload::Token(t)) => Some(t),
                _ => None,
            };
            let history: Vec<&(u32, u64, SimTime)> = acked.iter().filter(|a| a.0 == lpn).collect();
            // The last write acknowledged by the cut, or any later one.
            let durable = history.iter().rposition(|a| a.2 <= cut);
            let ok: Vec<Option<u64>> = match durable {
                Some(d) => history[d..].iter().map(|a| Some(a.1)).collect(),
                None => std::iter::once(None).chain(history.iter().map(|a| Some(a.1))).collect(),
            };
            assert!(ok.contains(&got), "cut at {cut}: lpn {lpn} reads {got:?}, acceptable {ok:?}");
        }
        // And it keeps working: another round of writes, within the bound.
        let mut now = at;
        for t in 0..40u32 {
            let done = write(&mut ftl, &mut f, now, (t * 5) % 24, 1000 + u64::from(t));
            assert!(done.0 - now.0 <= ftl.service_bound().unwrap().0);
            now = done;
        }
        ftl.check_invariants(&f).unwrap();
    }
}
