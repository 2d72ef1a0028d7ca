//! WAO-GC, "Worst-case and Average-case joint Optimization for Garbage
//! Collection" (Zhang et al., RTAS 2015), the real-time page-mapped baseline of
//! Telomere's evaluation, as 000_ffe2fafb22bcad8e.txt describes it (Sections 6.1.5
//! and 6.2).
//!
//! - **Partial GC** (6.1.5): page-level mapping; a victim's collection is split
//!   into steps of at most one erase time (at most alpha valid-page copies, or the
//!   victim's erase), and at most one step follows each host write, so "a page
//!   write will only be blocked by one partial GC step".
//! - **Space** (6.1.5, Eq. 24): the logical space is `lambda` of the physical
//!   (key `lambda`), at most the largest lambda that keeps the one-step guarantee:
//!   a greedy victim then holds at most `U(lambda) = ceil(lambda pi)` valid pages
//!   (Theorem 4.3 of 001), few enough that the pages its erase returns pay for the
//!   writes hosting its steps. That largest lambda is Lazy-RTGC's (001 Eq. 7-11),
//!   as [`ftlab_bounds::telomere::waogc_max_lambda`] computes it: 0.74 on 000's
//!   1 TB SSD. A larger `lambda` is refused with a message naming the largest.
//! - **Per chip** (6.1.5, Eq. 25: `C_w = ceil(w / S_chips) (t_w + max(t_e, t_r +
//!   t_w))`, `C_g = 0`): every chip (die) takes writes in parallel, each followed
//!   by at most one step on that chip. Each die is collected on its own: its
//!   free blocks, its trigger, its greedy victim among its closed blocks, its
//!   steps after the writes it takes, its copies into its open block. Host
//!   writes are striped over idle dies whether or not collections run.
//! - **Trigger** (6.1.5, "using over-provisioning to delay GC"): nothing is
//!   collected on a die while more than `gc_free_blocks` of its blocks are free,
//!   so the over-provisioned space is used up before the first copy, and the smaller
//!   `lambda` is, the emptier the victims are and the fewer steps and erases a
//!   write costs. Default 1, the least that keeps the guarantee: a victim with at
//!   most `U` valid pages is collected in at most `N = ceil(U / alpha) + 1` steps
//!   (001 Eq. 8), the first after the write that starts the collection, so while
//!   it runs the die programs `U` copies and `N - 1` host pages, `U + N - 1 <=
//!   pi - 1` pages (Eq. 9: `U + N <= pi`, the same argument as Lazy-RTGC's
//!   `rho_th`, Eq. 13). One free block of the die holds them whatever is left in
//!   its open block, and the erase returns a block before the die's next
//!   collection starts. 0 free blocks would leave only the open block's rest,
//!   which need not hold them.
//! - **One stream** (6.2: "valid pages of a victim block \[are\] written to the same
//!   block as incoming write requests, regardless of data hotness"): copies and
//!   host writes share the die's one open block.
//! - **Service bound** (Eq. 25 of 000 per page): `t_wrpg + max{t_er, t_rdpg +
//!   t_wrpg}` ([`RealTime::service_bound`](crate::RealTime::service_bound)), page times with the channel transfer the
//!   simulator charges: one host write plus the one step of its die it may be
//!   blocked by (a read waits for at most one step too, and `t_rdpg < t_wrpg`).
//!   It holds on every die, provided nothing else is queued before the command on
//!   its die and no other die's transfer holds its channel.
//!
//! WAO-GC is a configuration of Lazy-RTGC's collector ([`LazyRtgc`]), not a copy
//! of it: 000 describes WAO-GC by exactly the properties that collector has
//! (partial steps of at most one erase, one after each write, greedy victims,
//! a lambda bound taken from Lazy-RTGC, copies in the host's stream). What differs
//! is the plan: the key `lambda`, the trigger on free blocks instead of free
//! pages ([`Trigger::FreeBlocksAtMost`]), the blocks kept back for it, and Eq. 25's
//! bound. This module computes that plan; the collector, recovery, idle-time
//! option and statistics are Lazy-RTGC's.
//!
//! Deviations, and why:
//! - 000 gives WAO-GC's properties, not its algorithm; the step sizes (alpha =
//!   `floor(t_er / (t_rd + t_wr))`, with the channel transfers unless copies are
//!   copybacks) and the greedy victim are Lazy-RTGC's (001 Sections 3-4).
//! - The largest lambda is `U(lambda) / pi` (integral pages), not Eq. 11's
//!   continuous `(pi - 1) alpha / ((alpha + 1) pi)`: 95/128 = 0.742 instead of
//!   381/512 = 0.744 on 000's SSD (both print as 0.74). The continuous value lets a
//!   victim hold one valid page more than its steps can pay for.
//! - A block trigger keeps one block more per die than Lazy-RTGC's page trigger
//!   (`rho_th = pi` fires only when no free block is left): the logical space
//!   leaves out `gc_free_blocks` free blocks and one open block per die, those a
//!   die may have when its victim is picked, so Theorem 4.3's bound holds on every
//!   die; a host write takes only a die it keeps within `U(lambda)` valid pages
//!   per block beyond them (see [`crate::schemes::realtime::lazy_rtgc::LazyRtgcPlan::new`]). On 000's
//!   Cosmos board (16 chips of 22 blocks here) that is 32 blocks, not 17.
//! - The idle-time option (`idle_gc`) is Lazy-RTGC's (001 Section 3.2), not
//!   WAO-GC's; off by default.

use serde::{Deserialize, Serialize};

use ftlab_nand::SimTime;

use crate::schemes::realtime::lazy_rtgc::{
    channel_share_ns, chip_params, gc_tasks, gc_transfers, good_blocks, logical_space, task_bounds, valid_bound,
    LazyRtgc, LazyRtgcPlan, Setup, Trigger,
};
use crate::{Ftl, FtlBuilder, FtlError, Io};

/// Configuration of WAO-GC. Every field has a documented default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WaoGcConfig {
    /// lambda, the logical over the physical space, in [0, 1). 0 (the default)
    /// takes the largest the chip allows, Lazy-RTGC's `U(lambda) / pi` (0.875 on
    /// the Spansion SLC chip of 001, 0.742 on 000's SSD). A larger value is
    /// refused with a message naming the largest.
    pub lambda: f64,
    /// A collection starts on a die after a write on it that leaves the die at
    /// most this many free blocks (its open block not counted). At least 1 (the
    /// default, see the module documentation): one free block holds the pages a
    /// collection consumes. Kept back from the logical space on every die.
    pub gc_free_blocks: u32,
    /// Lazy-RTGC's idle-time optimisation (001 Section 3.2): idle gaps run the
    /// pending steps and erase closed blocks with no valid page. Default false.
    pub idle_gc: bool,
}

impl Default for WaoGcConfig {
    fn default() -> Self {
        WaoGcConfig { lambda: 0.0, gc_free_blocks: 1, idle_gc: false }
    }
}

impl WaoGcConfig {
    /// Checks the fields; errors name the field.
    pub fn validate(&self) -> Result<(), FtlError> {
        if !(0.0..1.0).contains(&self.lambda) {
            return Err(FtlError::config(
                "ftl.lambda",
                format!("waogc.lambda must be in [0, 1) (0 = the chip's largest), got {}", self.lambda),
            ));
        }
        crate::config::gc_free_blocks(
            "waogc",
            self.gc_free_blocks,
            ": a collection must start with a free block to hold its \
                 copies and the writes during it",
        )?;
        Ok(())
    }

    /// What the configuration comes to on the device behind `io` with
    /// `good_blocks` usable blocks: Lazy-RTGC's alpha and valid-page bound for
    /// `lambda`, the block trigger, the blocks it keeps back and Eq. 25's bound.
    pub fn plan(&self, io: &Io, good_blocks: u32) -> Result<LazyRtgcPlan, FtlError> {
        self.validate()?;
        let g = io.geometry();
        let pi = g.pages_per_block;
        let chip = task_bounds(io, "waogc")?;
        let (lambda, lambda_max) = valid_bound(self.lambda, "waogc.lambda", &chip, pi)?;
        let reserve_blocks = self.gc_free_blocks.saturating_add(1).saturating_mul(g.dies());
        let logical_pages = logical_space("waogc", lambda, lambda_max, good_blocks, reserve_blocks, pi)?;
        let b = chip_params(io, true)?;
        let service_bound = SimTime(
            b.t_wrpg_ns()
                + b.t_er_ns().max(b.t_rdpg_ns() + b.t_wrpg_ns())
                + channel_share_ns(io, gc_transfers(io, chip.alpha)),
        );
        Ok(LazyRtgcPlan {
            alpha: chip.alpha,
            lambda_max,
            sigma: lambda,
            rho_th: lambda_max + gc_tasks(lambda_max, chip.alpha),
            trigger: Trigger::FreeBlocksAtMost(self.gc_free_blocks),
            reserve_blocks,
            logical_pages,
            service_bound,
        })
    }

    fn setup(&self, io: &Io) -> Result<Setup, FtlError> {
        Ok(Setup { name: "waogc", idle_gc: self.idle_gc, plan: self.plan(io, good_blocks(io))? })
    }
}

/// WAO-GC on a freshly formatted medium.
pub fn format(config: WaoGcConfig, io: &mut Io) -> Result<LazyRtgc, FtlError> {
    LazyRtgc::format_as(config.setup(io)?, io)
}

/// WAO-GC rebuilt from the medium after a power cut (as Lazy-RTGC: a collection
/// cut short is forgotten).
pub fn recover(config: WaoGcConfig, io: &mut Io) -> Result<LazyRtgc, FtlError> {
    LazyRtgc::recover_as(config.setup(io)?, io)
}

impl FtlBuilder for WaoGcConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(format(*self, io)?))
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(recover(*self, io)?))
    }
}

/// The registry's entries for this module's schemes ([`crate::registry`]).
pub const SCHEMES: [crate::entry::Scheme; 1] = [crate::entry::Scheme {
    name: "waogc",
    summary: "WAO-GC (000 Section 6.1.5): Lazy-RTGC's partial steps, lambda <= the chip's max, GC at 1 free block",
    paper: "000 Sections 6.1.5, 6.2 (Zhang et al. 2015)",
    admits_tasks: false,
    bounds: true,
    build: |p, _| crate::entry::configured("waogc", WaoGcConfig::default(), p, WaoGcConfig::validate),
}];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::schemes::realtime::lazy_rtgc::tests::{check_step, Step};
    use crate::RealTime;
    use crate::{Flash, Hint, Lpn};
    use ftlab_nand::{Geometry, Nand, NandConfig, Payload, StoreKind, WearConfig};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// One die, one plane (copies are copybacks), 64 blocks of 64 pages, the unit
    /// tests' SLC timing: alpha = floor(1500 / 225) = 6, U(lambda) = 54 (54 + 9 +
    /// 1 = 64), the largest lambda 54 / 64.
    fn one_die() -> Flash {
        let g = Geometry {
            channels: 1,
            ways_per_channel: 1,
            dies_per_way: 1,
            planes_per_die: 1,
            blocks_per_plane: 64,
            pages_per_block: 64,
            page_size: 2048,
            oob_size: 64,
        };
        crate::testing::flash(g, 5)
    }

    fn fmt(f: &mut Flash, config: WaoGcConfig) -> LazyRtgc {
        format(config, &mut f.io(SimTime::ZERO)).unwrap()
    }

    #[test]
    fn plan_on_000s_ssd_takes_lambda_0_74_and_eq25() {
        let p = ftlab_nand::presets::preset("telomere-1tb-ssd").unwrap();
        let geometry = Geometry { channels: 1, ways_per_channel: 1, blocks_per_plane: 64, ..p.geometry };
        let config = NandConfig {
            geometry,
            timing: p.timing,
            bad_block_rate: 0.0,
            wear: WearConfig::default(),
            store: StoreKind::Token,
            seed: 1,
            faults: Default::default(),
            commands: Default::default(),
        };
        let mut f = Flash::new(Nand::new(&config).unwrap());
        let plan = fmt(&mut f, WaoGcConfig::default()).plan();
        // alpha = floor(2700 / (200 + 700)) = 3 (copyback); 95 + ceil(95 / 3) + 1 = 128.
        assert_eq!((plan.alpha, plan.lambda_max, plan.rho_th), (3, 95, 128));
        assert_eq!(plan.sigma, 95.0 / 128.0);
        assert_eq!((plan.sigma * 100.0).floor(), 74.0);
        // The bounds crate's Eq. 11 value is at most one page per block above it.
        let eq11 = ftlab_bounds::telomere::waogc_max_lambda(&ftlab_bounds::telomere::Device::from_preset(p)).unwrap();
        assert_eq!(eq11, 381.0 / 512.0);
        assert!(eq11 >= plan.sigma && eq11 - plan.sigma < 1.0 / 128.0);
        assert_eq!(plan.trigger, Trigger::FreeBlocksAtMost(1));
        // One free and one open block kept back: 62 blocks of 95 valid pages,
        // under floor(95 / 128 * 64 * 128) = 6080.
        assert_eq!((plan.reserve_blocks, plan.logical_pages), (2, 62 * 95));
        // Eq. 25: t_w + max(t_e, t_r + t_w), 34 KiB at 100 MB/s on the channel.
        let xfer = 348_160;
        assert_eq!(plan.service_bound, SimTime(700_000 + xfer + 2_700_000));
    }

    #[test]
    fn lambda_above_the_maximum_and_no_free_block_are_refused() {
        let mut f = one_die();
        let p = fmt(&mut f, WaoGcConfig::default()).plan();
        assert_eq!((p.alpha, p.lambda_max, p.sigma), (6, 54, 0.84375));
        let e = format(WaoGcConfig { lambda: 0.86, ..Default::default() }, &mut f.io(SimTime::ZERO)).unwrap_err();
        let e = e.to_string();
        assert!(e.contains("waogc.lambda = 0.86") && e.contains("use at most 0.84375"), "{e}");
        assert_eq!(fmt(&mut f, WaoGcConfig { lambda: 0.84375, ..Default::default() }).plan().lambda_max, 54);
        let e = WaoGcConfig { gc_free_blocks: 0, ..Default::default() }.validate().unwrap_err().to_string();
        assert!(e.contains("waogc.gc_free_blocks must be at least 1"), "{e}");
        assert!(WaoGcConfig { lambda: 1.0, ..Default::default() }.validate().is_err());
        // gc_free_blocks and one open block are kept back: 59 blocks of 32 pages.
        let p = fmt(&mut f, WaoGcConfig { lambda: 0.5, gc_free_blocks: 4, idle_gc: false }).plan();
        assert_eq!((p.lambda_max, p.reserve_blocks, p.logical_pages), (32, 5, 59 * 32));
        let e = format(WaoGcConfig { gc_free_blocks: 63, ..Default::default() }, &mut f.io(SimTime::ZERO));
        assert!(e.unwrap_err().to_string().contains("too small for waogc"));
    }

    /// What a closed loop of writes saw.
    #[derive(Debug, Default)]
    struct Run {
        steps: u64,
        copies: u64,
        erases: u64,
        /// The first write followed by a step.
        first_gc: Option<u32>,
    }

    /// Fills the logical space, then overwrites uniformly random logical pages,
    /// `writes` writes in all, each issued when the previous one completes (queue
    /// depth 1). Checks every write: its service time is within the bound, at
    /// most one step follows it, a step is alpha copies at most or one erase and
    /// takes at most one erase time. `on_copies(flash, k)` is called after each
    /// write whose step copied `k > 0` pages.
    fn closed_loop(
        f: &mut Flash,
        config: WaoGcConfig,
        writes: u32,
        on_copies: &mut dyn FnMut(&Flash, u64),
    ) -> (LazyRtgc, Run) {
        let mut ftl = fmt(f, config);
        let n = ftl.logical_pages();
        let bound = ftl.service_bound().unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut now = SimTime::ZERO;
        let mut run = Run::default();
        for i in 0..writes {
            let lpn = if i < n { i } else { rng.gen_range(0..n) };
            let (before, steps) = (*f.counters(), ftl.stats().tasks);
            let mut io = f.io(now);
            ftl.write(&mut io, Lpn(lpn), Payload::Token(u64::from(i) + 1), &Hint::default()).unwrap();
            let (done, last) = (io.completion(), io.last_finish());
            assert!(done - now <= bound, "write {i} took {} > {bound}", done - now);
            let Step { ran, copies, erases } = check_step(i, f, &ftl, &before, steps, done, last);
            if ran > 0 {
                run.first_gc.get_or_insert(i);
            }
            if copies > 0 {
                on_copies(f, copies);
            }
            (run.steps, run.copies, run.erases) = (run.steps + ran, run.copies + copies, run.erases + erases);
            now = done;
        }
        ftl.check_invariants(f).unwrap();
        (ftl, run)
    }

    #[test]
    fn at_the_maximum_lambda_each_write_is_blocked_by_at_most_one_step() {
        let mut f = one_die();
        let (ftl, run) = closed_loop(&mut f, WaoGcConfig::default(), 40_000, &mut |_, _| {});
        let (s, p) = (ftl.stats(), ftl.plan());
        assert!(s.collections > 300 && run.copies > 10_000, "{s:?} {run:?}");
        assert_eq!(s.max_task_copies, p.alpha);
        assert!(s.max_victim_valid <= p.lambda_max, "{s:?}");
        assert!(s.max_tasks_per_collection <= gc_tasks(p.lambda_max, p.alpha), "{s:?}");
        assert_eq!(ftl.service_bound(), Some(SimTime(210_560 + 1_500_000)));
    }

    #[test]
    fn collection_starts_when_free_blocks_fall_to_gc_free_blocks() {
        // Block k is opened by write 64 k, leaving 63 - k blocks free.
        for (blocks, first) in [(1, 62 * 64), (4, 59 * 64)] {
            let mut f = one_die();
            let config = WaoGcConfig { gc_free_blocks: blocks, ..Default::default() };
            let (_, run) = closed_loop(&mut f, config, 5_000, &mut |_, _| {});
            assert_eq!(run.first_gc, Some(first), "gc_free_blocks = {blocks}");
        }
    }

    #[test]
    fn more_over_provisioning_means_fewer_steps_and_erases() {
        let writes = 16_000;
        let (_, max) = closed_loop(&mut one_die(), WaoGcConfig::default(), writes, &mut |_, _| {});
        let half = WaoGcConfig { lambda: 0.5, ..Default::default() };
        let (_, op) = closed_loop(&mut one_die(), half, writes, &mut |_, _| {});
        // Both use up the free blocks before collecting, then the emptier victims
        // of the smaller logical space cost fewer steps, erases and copies.
        assert_eq!((max.first_gc, op.first_gc), (Some(62 * 64), Some(62 * 64)));
        assert!(op.steps * 2 < max.steps, "{op:?} vs {max:?}");
        assert!(op.erases < max.erases, "{op:?} vs {max:?}");
        assert!(op.copies * 4 < max.copies, "{op:?} vs {max:?}");
    }

    #[test]
    fn copies_land_in_the_host_writes_open_block() {
        let mut f = one_die();
        let (mut steps, mut same_block) = (0, 0);
        let mut check = |f: &Flash, copies: u64| {
            if steps >= 200 {
                return;
            }
            steps += 1;
            // The write's host page and its step's copies are the newest pages.
            let g = *f.nand().geometry();
            let mut pages: Vec<(u64, ftlab_nand::Ppa)> = (0..g.total_pages())
                .map(ftlab_nand::Ppa)
                .filter_map(|p| f.nand().peek_oob(p).map(|o| (o.seq, p)))
                .collect();
            pages.sort_unstable();
            let newest = &pages[pages.len() - 1 - copies as usize..];
            // One stream: each page is the next slot after the previous one.
            for w in newest.windows(2) {
                let (a, b) = (w[0].1, w[1].1);
                let next = if g.page_in_block(a) + 1 == g.pages_per_block {
                    g.page_in_block(b) == 0
                } else {
                    g.block_of(a) == g.block_of(b) && g.page_in_block(b) == g.page_in_block(a) + 1
                };
                assert!(next, "{a:?} then {b:?}: copies went to another block than the host write");
            }
            same_block += u32::from(newest.iter().all(|&(_, p)| g.block_of(p) == g.block_of(newest[0].1)));
        };
        closed_loop(&mut f, WaoGcConfig::default(), 12_000, &mut check);
        assert_eq!(steps, 200);
        assert!(same_block > 150, "{same_block} of 200 steps copied into the host write's block");
    }

    #[test]
    fn on_four_dies_a_write_is_blocked_by_at_most_one_step_of_its_own_die() {
        use crate::schemes::realtime::lazy_rtgc::tests::{assert_striped, four_dies, striped_writes};
        // Requests of one page (queue depth 1) and of eight pages issued together,
        // as the simulator issues a multi-page request.
        for burst in [1, 8] {
            let mut f = four_dies();
            let mut ftl = fmt(&mut f, WaoGcConfig::default());
            let p = ftl.plan();
            // gc_free_blocks and an open block per die: 120 blocks of 54 pages.
            assert_eq!((p.lambda_max, p.reserve_blocks, p.logical_pages), (54, 8, 120 * 54));
            let run = striped_writes(&mut f, &mut ftl, 40_000, burst);
            assert_striped(&run);
            let s = ftl.stats();
            assert!(s.collections > 200 && run.steps > 2_000, "{s:?} {run:?}");
            assert!(s.max_victim_valid <= p.lambda_max, "{s:?}");
            assert!(s.max_tasks_per_collection <= gc_tasks(p.lambda_max, p.alpha), "{s:?}");
        }
    }

    #[test]
    fn registry_builds_waogc_and_names_its_keys() {
        let mut p = toml::Table::new();
        p.insert("lambda".into(), toml::Value::Float(0.5));
        p.insert("gc_free_blocks".into(), toml::Value::Integer(2));
        p.insert("idle_gc".into(), toml::Value::Boolean(true));
        let ftl = crate::registry::build("waogc", &p).unwrap().format(&mut one_die().io(SimTime::ZERO)).unwrap();
        assert_eq!(ftl.name(), "waogc");
        assert_eq!(ftl.logical_pages(), 32 * (64 - 3));
        p.insert("sigma".into(), toml::Value::Float(0.5));
        let e = crate::registry::build("waogc", &p).unwrap_err().to_string();
        assert!(e.contains("sigma") && e.contains("lambda") && e.contains("gc_free_blocks"), "{e}");
        assert!(crate::registry::schemes().iter().any(|s| s.name == "waogc"));
    }
}
