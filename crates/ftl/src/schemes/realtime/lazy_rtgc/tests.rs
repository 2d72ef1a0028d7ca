#![allow(clippy::unwrap_used)]

use crate::RealTime;
use ftlab_nand::presets::preset;
use ftlab_nand::{Geometry, Nand, NandConfig, StoreKind, WearConfig};

use super::config::gc_tasks;
use super::*;

fn flash_with(geometry: Geometry, chip: &str, bad_block_rate: f64) -> Flash {
    let p = preset(chip).unwrap();
    let config = NandConfig {
        geometry,
        timing: p.timing,
        bad_block_rate,
        wear: WearConfig::default(),
        store: StoreKind::Token,
        seed: 3,
        faults: Default::default(),
        commands: Default::default(),
    };
    Flash::new(Nand::new(&config).unwrap())
}

/// The Spansion SLC chip of 001 Table II, one die, `blocks` blocks.
fn spansion(blocks: u32) -> Flash {
    let mut g = preset("spansion-slc-512mb").unwrap().geometry;
    g.blocks_per_plane = blocks;
    flash_with(g, "spansion-slc-512mb", 0.0)
}

fn format(f: &mut Flash, config: LazyRtgcConfig) -> LazyRtgc {
    LazyRtgc::format(config, &mut f.io(SimTime::ZERO)).unwrap()
}

/// A tiny deterministic generator (no dependency on the crate's RNG).
struct Lcg(u64);
impl Lcg {
    fn below(&mut self, n: u32) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32 % n
    }
}

#[test]
fn plan_follows_table_ii_on_the_spansion_chip() {
    let mut f = spansion(256);
    let ftl = format(&mut f, LazyRtgcConfig::default());
    let p = ftl.plan();
    // alpha = floor(2000 / 225) = 8, U(lambda) = 56 (56 + 7 + 1 = 64), rho_th = pi.
    assert_eq!((p.alpha, p.lambda_max, p.rho_th, p.reserve_blocks), (8, 56, 64, 1));
    assert_eq!(p.sigma, 0.875);
    assert_eq!(p.logical_pages, 56 * 255);
    // U(R_T) = t_er + t_wrpg, with the 52.8 us transfer of 2112 bytes at 40 MB/s;
    // the same as the bounds crate computes from the preset with transfer.
    assert_eq!(ftl.service_bound(), Some(SimTime(2_252_800)));
    let chip = ftlab_bounds::ChipParams::from_preset_with_transfer(preset("spansion-slc-512mb").unwrap()).unwrap();
    assert_eq!(ftlab_bounds::lazy_rtgc(&chip).unwrap().max_response_us, 2252.8);
}

#[test]
fn without_copyback_alpha_pays_the_transfers() {
    let mut f = spansion(256);
    f.set_copyback(false);
    let p = format(&mut f, LazyRtgcConfig::default()).plan();
    // floor(2000 / (77.8 + 252.8)) = 6; 54 + 9 + 1 = 64.
    assert_eq!((p.alpha, p.lambda_max), (6, 54));
}

#[test]
fn sigma_is_configurable_up_to_the_chip_bound() {
    let mut f = spansion(256);
    let p = format(&mut f, LazyRtgcConfig { sigma: 0.75, idle_gc: false }).plan();
    assert_eq!((p.lambda_max, p.logical_pages), (48, 255 * 48));
    let e = LazyRtgc::format(LazyRtgcConfig { sigma: 0.9, idle_gc: false }, &mut f.io(SimTime::ZERO)).unwrap_err();
    assert!(e.to_string().contains("U(lambda) = 56"), "{e}");
    assert!(LazyRtgcConfig { sigma: 1.0, idle_gc: false }.validate().is_err());
}

/// Closed loop at queue depth 1: each command is issued when the previous one
/// completes. Checks, per command, the service bound (if `bounded`), one task per
/// write and none per read, and the task sizes. Returns the FTL.
fn closed_loop(f: &mut Flash, config: LazyRtgcConfig, ops: u32, idle_every: Option<u32>, bounded: bool) -> LazyRtgc {
    let mut ftl = format(f, config);
    let n = ftl.logical_pages();
    let bound = ftl.service_bound().unwrap();
    let alpha = u64::from(ftl.plan().alpha);
    let mut rng = Lcg(42);
    let mut now = SimTime::ZERO;
    for i in 0..ops {
        let before = *f.counters();
        let tasks = ftl.stats().tasks;
        let write = i < n || rng.below(10) < 7;
        let lpn = if i < n { i } else { rng.below(n) };
        let mut io = f.io(now);
        if write {
            ftl.write(&mut io, Lpn(lpn), Payload::Token(u64::from(i) + 1), &Hint::default()).unwrap();
        } else {
            assert!(ftl.read(&mut io, Lpn(lpn)).unwrap().is_some());
        }
        let done = io.completion();
        assert!(!bounded || done - now <= bound, "command {i} took {} > {bound}", done - now);
        now = done;
        let c = f.counters();
        let copies = c.programs.get(Purpose::Gc) - before.programs.get(Purpose::Gc);
        let erases = c.erases.get(Purpose::Gc) - before.erases.get(Purpose::Gc);
        let ran = ftl.stats().tasks - tasks;
        if write {
            assert!(ran <= 1, "write {i} ran {ran} tasks");
            assert!(
                copies <= alpha && erases <= 1 && (copies == 0 || erases == 0),
                "task: {copies} copies, {erases} erases"
            );
        } else {
            assert_eq!((ran, copies, erases), (0, 0, 0), "a read ran GC");
        }
        if idle_every.is_some_and(|k| i % k == k - 1) {
            // An idle gap of 10 ms.
            let mut io = f.io(now);
            ftl.background(&mut io, now + SimTime(10_000_000)).unwrap();
            now = io.last_finish().max(now + SimTime(10_000_000));
        }
    }
    ftl.check_invariants(f).unwrap();
    ftl
}

#[test]
fn every_command_meets_the_bound_and_victims_stay_under_u_lambda() {
    let mut f = spansion(64);
    let ftl = closed_loop(&mut f, LazyRtgcConfig::default(), 40_000, None, true);
    let s = ftl.stats();
    let p = ftl.plan();
    assert!(s.collections > 200, "{s:?}");
    assert!(s.max_victim_valid <= p.lambda_max, "{s:?}");
    assert!(s.max_task_copies <= p.alpha);
    assert!(s.max_tasks_per_collection <= gc_tasks(p.lambda_max, p.alpha), "{s:?}");
}

#[test]
fn no_collection_while_free_pages_last() {
    let mut f = spansion(64);
    let mut ftl = format(&mut f, LazyRtgcConfig::default());
    let rho = u64::from(ftl.plan().rho_th);
    let mut now = SimTime::ZERO;
    let mut i = 0u64;
    while ftl.free_pages() > rho {
        let mut io = f.io(now);
        ftl.write(&mut io, Lpn((i % 64) as u32), Payload::Token(i + 1), &Hint::default()).unwrap();
        now = io.completion();
        i += 1;
    }
    assert_eq!(f.counters().programs.get(Purpose::Gc) + f.counters().erases.get(Purpose::Gc), 0);
    assert!(!ftl.collecting());
    // The write that leaves fewer than rho_th free pages starts a collection (its
    // victim holds overwritten pages only, so the first task is the erase).
    let mut io = f.io(now);
    ftl.write(&mut io, Lpn(0), Payload::Token(i + 1), &Hint::default()).unwrap();
    assert_eq!(f.counters().erases.get(Purpose::Gc), 1);
}

#[test]
fn multi_die_device_collects_in_bounded_tasks() {
    // Each die collects on its own, so the one-chip bound holds on every die, bad
    // blocks and copies across planes (no copyback) included. One die a channel:
    // the bound does not count another die's transfers on a shared channel.
    let g = Geometry {
        channels: 4,
        ways_per_channel: 1,
        dies_per_way: 1,
        planes_per_die: 2,
        blocks_per_plane: 16,
        pages_per_block: 64,
        page_size: 2048,
        oob_size: 64,
    };
    let mut f = flash_with(g, "spansion-slc-512mb", 0.03);
    let ftl = closed_loop(&mut f, LazyRtgcConfig::default(), 30_000, None, true);
    assert!(ftl.stats().collections > 50);
    assert!(ftl.stats().max_victim_valid <= ftl.plan().lambda_max);
}

#[test]
fn idle_time_runs_pending_tasks_and_erases_empty_blocks() {
    let mut f = spansion(64);
    let ftl = closed_loop(&mut f, LazyRtgcConfig { sigma: 0.0, idle_gc: true }, 30_000, Some(50), true);
    let s = ftl.stats();
    assert!(s.idle_tasks > 0, "{s:?}");
    assert!(s.max_victim_valid <= ftl.plan().lambda_max);
    // Without the option, background does nothing.
    let mut f = spansion(64);
    let plain = closed_loop(&mut f, LazyRtgcConfig::default(), 30_000, Some(50), true);
    assert_eq!(plain.stats().idle_tasks, 0);
}

#[test]
fn idle_erase_picks_only_blocks_without_valid_pages() {
    let mut f = spansion(16);
    let mut ftl = format(&mut f, LazyRtgcConfig { sigma: 0.0, idle_gc: true });
    let mut now = SimTime::ZERO;
    // Fill two blocks with lpns 0..64, then overwrite them: block 0 holds no valid page.
    for i in 0..128u32 {
        let mut io = f.io(now);
        ftl.write(&mut io, Lpn(i % 64), Payload::Token(u64::from(i) + 1), &Hint::default()).unwrap();
        now = io.completion();
    }
    let free = ftl.free_pages();
    let mut io = f.io(now);
    ftl.background(&mut io, now + SimTime(100_000_000)).unwrap();
    assert_eq!(f.counters().erases.get(Purpose::Gc), 1);
    assert_eq!(f.counters().programs.get(Purpose::Gc), 0);
    assert_eq!(ftl.free_pages(), free + 64);
    ftl.check_invariants(&f).unwrap();
}

#[test]
fn registry_names_and_keys() {
    let mut f = spansion(64);
    let mut p = toml::Table::new();
    p.insert("sigma".into(), toml::Value::Float(0.8));
    let ftl = crate::registry::build("lazy-rtgc-idle", &p).unwrap().format(&mut f.io(SimTime::ZERO)).unwrap();
    assert_eq!(ftl.name(), "lazy-rtgc-idle");
    // ceil(0.8 * 64) = 52 valid pages at most, 63 blocks outside the reserve.
    assert_eq!(ftl.logical_pages(), 52 * 63);
    let plain = crate::registry::build("lazy-rtgc", &toml::Table::new()).unwrap();
    assert_eq!(plain.format(&mut spansion(64).io(SimTime::ZERO)).unwrap().name(), "lazy-rtgc");
    p.insert("alpha".into(), toml::Value::Integer(3));
    let e = crate::registry::build("lazy-rtgc", &p).unwrap_err().to_string();
    assert!(e.contains("alpha") && e.contains("idle_gc"), "{e}");
    assert!(crate::registry::build("fsr", &toml::Table::new()).is_ok());
}

/// Four dies (two channels of two), one plane each (copies are copybacks), 32
/// blocks of 64 pages per die, the unit tests' SLC timing.
pub(crate) fn four_dies() -> Flash {
    let g = Geometry {
        channels: 2,
        ways_per_channel: 1,
        dies_per_way: 2,
        planes_per_die: 1,
        blocks_per_plane: 32,
        pages_per_block: 64,
        page_size: 2048,
        oob_size: 64,
    };
    crate::testing::flash(g, 11)
}

/// Writes per window of [`DieRun::gc_windows`].
const WINDOW: u32 = 16;

/// What [`striped_writes`] saw.
#[derive(Debug, Default)]
pub(crate) struct DieRun {
    /// Host pages written to each die while some die was collecting.
    pub during_gc: Vec<u64>,
    /// Windows of [`WINDOW`] consecutive writes, each issued while some die was
    /// collecting.
    pub gc_windows: u64,
    /// Those of them in which every die took a write.
    pub gc_windows_all_dies: u64,
    /// Most dies collecting at once.
    pub max_collecting: usize,
    /// Writes followed by a step.
    pub steps: u64,
}

/// The garbage collection that followed write `i` (Algorithm 1 of 001).
#[derive(Debug)]
pub(crate) struct Step {
    /// Partial tasks (steps) that ran: 0 or 1.
    pub ran: u64,
    pub copies: u64,
    pub erases: u64,
}

/// Checks what followed write `i`, given the counters and the FTL's task count
/// before it and the write's completion `done` and last finish `last`: at most
/// one step, no GC work outside it, a step of at most alpha copies or one erase
/// that lasts at most one erase time.
pub(crate) fn check_step(
    i: u32,
    f: &Flash,
    ftl: &LazyRtgc,
    before: &crate::flash::Counters,
    tasks_before: u64,
    done: SimTime,
    last: SimTime,
) -> Step {
    let c = f.counters();
    let copies = c.programs.get(Purpose::Gc) - before.programs.get(Purpose::Gc);
    let erases = c.erases.get(Purpose::Gc) - before.erases.get(Purpose::Gc);
    let ran = ftl.stats().tasks - tasks_before;
    assert!(ran <= 1, "write {i} was followed by {ran} steps");
    if ran == 0 {
        assert_eq!((copies, erases), (0, 0), "write {i}: GC work outside a step");
    } else {
        let erase = SimTime(f.nand().timing().erase_ns);
        assert!(last - done <= erase, "write {i}: a step of {} > t_e", last - done);
    }
    let alpha = u64::from(ftl.plan().alpha);
    assert!(copies <= alpha && erases <= 1 && (copies == 0 || erases == 0), "{copies} copies, {erases} erases");
    Step { ran, copies, erases }
}

/// Fills the logical space of `ftl`, then overwrites uniformly random logical
/// pages, `writes` writes in all, in requests of `burst` pages issued together,
/// each request dispatched when the previous one completes. A page's service
/// runs, as in the simulator, from the later of its request's dispatch and the
/// completion of the request's earlier pages. Checks every write: its service is
/// within [`RealTime::service_bound`]; at most one step follows it, a step is alpha
/// copies at most or one erase and takes at most one erase time; the write and
/// its step touch one die (the write's: no other die's timeline moves) and no
/// other die's collection changes; every die's valid pages stay within its quota.
pub(crate) fn striped_writes(f: &mut Flash, ftl: &mut LazyRtgc, writes: u32, burst: u32) -> DieRun {
    let dies = f.nand().geometry().dies();
    let n = ftl.logical_pages();
    let bound = ftl.service_bound().unwrap();
    let mut rng = Lcg(7);
    let mut run = DieRun { during_gc: vec![0; dies as usize], ..DieRun::default() };
    let (mut dispatch, mut completion) = (SimTime::ZERO, SimTime::ZERO);
    let (mut window, mut window_in_gc) = (vec![false; dies as usize], true);
    for i in 0..writes {
        if i % burst == 0 {
            dispatch = completion;
        }
        let lpn = if i < n { i } else { rng.below(n) };
        let busy: Vec<SimTime> = (0..dies).map(|d| f.nand().die_free_at(DieId(d))).collect();
        let victims: Vec<Option<BlockId>> = (0..dies).map(|d| ftl.victim_on(DieId(d))).collect();
        let collecting = victims.iter().filter(|v| v.is_some()).count();
        run.max_collecting = run.max_collecting.max(collecting);
        let (before, steps) = (*f.counters(), ftl.stats().tasks);
        let mut io = f.io(dispatch);
        ftl.write(&mut io, Lpn(lpn), Payload::Token(u64::from(i) + 1), &Hint::default()).unwrap();
        let (done, last) = (io.completion(), io.last_finish());
        let start = if i % burst == 0 { dispatch } else { completion.max(dispatch) };
        assert!(done - start <= bound, "write {i} took {} > {bound}", done - start);
        completion = completion.max(done);
        let moved: Vec<u32> = (0..dies).filter(|&d| f.nand().die_free_at(DieId(d)) != busy[d as usize]).collect();
        assert_eq!(moved.len(), 1, "write {i} and its step ran on dies {moved:?}");
        let die = moved[0];
        for d in (0..dies).filter(|&d| d != die) {
            assert_eq!(
                ftl.victim_on(DieId(d)),
                victims[d as usize],
                "write {i} on die {die} moved die {d}'s collection"
            );
        }
        let Step { ran, .. } = check_step(i, f, ftl, &before, steps, done, last);
        for d in (0..dies).map(DieId) {
            let (valid, cap) = (ftl.books.valid_on(d), ftl.books.cap(d));
            assert!(valid <= cap, "write {i}: die {} holds {valid} valid pages, over its quota of {cap}", d.0);
        }
        run.steps += ran;
        if collecting > 0 {
            run.during_gc[die as usize] += 1;
        }
        window[die as usize] = true;
        window_in_gc &= collecting > 0;
        if i % WINDOW == WINDOW - 1 {
            if window_in_gc {
                run.gc_windows += 1;
                run.gc_windows_all_dies += u64::from(window.iter().all(|&w| w));
            }
            (window, window_in_gc) = (vec![false; dies as usize], true);
        }
    }
    ftl.check_invariants(f).unwrap();
    run
}

/// Writes went to every die while collections ran: each die took at least four
/// fifths of its even share, in nine of ten windows of [`WINDOW`] writes issued
/// during collections every die took a write, and several dies collected at once.
pub(crate) fn assert_striped(run: &DieRun) {
    let total: u64 = run.during_gc.iter().sum();
    let dies = run.during_gc.len() as u64;
    assert!(total > 10_000 && run.gc_windows > 500, "{run:?}");
    assert!(run.during_gc.iter().all(|&w| w * dies * 5 > total * 4), "writes during collections per die: {run:?}");
    assert!(run.gc_windows_all_dies * 10 >= run.gc_windows * 9, "{run:?}");
    assert!(run.max_collecting >= 2, "{run:?}");
}

#[test]
fn on_four_dies_each_die_collects_its_own_victims_while_writes_stripe() {
    for burst in [1, 8] {
        let mut f = four_dies();
        let mut ftl = format(&mut f, LazyRtgcConfig::default());
        let p = ftl.plan();
        assert_eq!((p.rho_th, p.reserve_blocks), (64, 4), "one open block per die");
        let run = striped_writes(&mut f, &mut ftl, 40_000, burst);
        assert_striped(&run);
        let s = ftl.stats();
        assert!(s.collections > 200, "{s:?}");
        assert!(s.max_victim_valid <= p.lambda_max, "{s:?}");
        assert!(s.max_tasks_per_collection <= gc_tasks(p.lambda_max, p.alpha), "{s:?}");
    }
}
