//! On-demand Lazy-RTGC: Lazy-RTGC applied to DFTL, Section 5 of
//! 001_ca7ecce2bd5249b9.txt (the On-demand+Lazy-RTGC of its Section 6).
//!
//! The map is DFTL's ([`crate::schemes::page::dftl`]): translation pages on flash, a cached
//! mapping table (CMT) and a global translation directory in RAM. Garbage
//! collection and mapping write-back are split into partial tasks, each at most one
//! erase time long, and exactly one runs after each host write (none after reads
//! or trims), by precedence DG > TG > TW (Section 5.1):
//!
//! - **DG**, data-block GC: started when the free data pages fall to one block's
//!   worth (the "last free block"); a greedy victim's valid pages are copied
//!   `alpha` per task (Eq. 7, `alpha = floor(t_er / (t_rd + t_wr))`), then a task
//!   erases it. Moved pages' mappings go to the CMT (dirty), so DG never touches a
//!   translation page.
//! - **TG**, translation-block GC: started when the free translation pages fall to
//!   one block's worth; `alpha` valid translation pages per task are rewritten
//!   (read, merged with their dirty CMT entries, programmed), then a task erases
//!   the victim.
//! - **TW**, translation write-back: when the dirty CMT entries pass the budget less
//!   a block's worth of headroom, a task writes back up to `alpha` translation pages,
//!   the ones with the most dirty entries first (each a read and a program), keeping
//!   `lambda_t` free translation pages for TG.
//!
//! A CMT miss reads the translation page (so a write costs at most `t_rd + t_wr`,
//! a read `2 t_rd`) and makes room by dropping clean entries only: dirty entries
//! wait for TW, the CMT overflowing its budget meanwhile (Section 5.2 bounds the
//! overflow, Eq. 19; [`Ftl::ram_bytes`] reports the high-water mark). The worst
//! response is `U(R_T) = max{2 t_rd, t_er + t_wr + t_rd}` (Eq. 14), computed by
//! [`ftlab_bounds::lazy_rtgc_ondemand`] with channel transfers included.
//!
//! Space (Eq. 16-17, whole-task form from the bounds crate): a data victim holds at
//! most `lambda_d` valid pages, with `lambda_d + k_d + k_t <= pi`, so the last free
//! data block hosts a whole DG plus the writes that carry a TG. By Theorem 4.3 the
//! logical space is `lambda_d` pages per data block that can be closed when DG
//! picks a victim: all good data blocks less one open block per die and the last
//! free block (001 counts a single chip; ftlab stripes writes over dies). The
//! translation pool holds `4 + ceil(tpages / lambda_t)` blocks, `lambda_t =
//! ceil(sigma_t pi)`, so a greedy translation victim has at most `lambda_t` valid
//! pages. Recovery is DFTL's (no partial task survives a power cut; victims
//! half-collected are ordinary closed blocks again).

use serde::{Deserialize, Serialize};

use ftlab_bounds::{lazy_rtgc_ondemand, ChipParams, DEFAULT_SIGMA_T};
use ftlab_nand::{BlockId, Payload, SimTime};

use crate::schemes::page::dftl::core::{DemandMap, Evict};
use crate::schemes::page::dftl::{lambda_t, Cmt, DEFAULT_CMT_ENTRIES};
use crate::{check_lpn, Flash, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn, Purpose};

/// Configuration of [`LazyRtgcOnDemand`]. Every field has a documented default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LazyRtgcOnDemandConfig {
    /// Mapping entries the CMT is budgeted (it may overflow while GC runs, see the
    /// module documentation). Default [`DEFAULT_CMT_ENTRIES`].
    pub cmt_entries: u32,
    /// `sigma_t`, valid translation pages over the translation pool, in (0, 1).
    /// Default [`DEFAULT_SIGMA_T`] = 0.5 (001 Section 6.2(5)).
    pub sigma_t: f64,
}

impl Default for LazyRtgcOnDemandConfig {
    fn default() -> Self {
        LazyRtgcOnDemandConfig { cmt_entries: DEFAULT_CMT_ENTRIES, sigma_t: DEFAULT_SIGMA_T }
    }
}

impl LazyRtgcOnDemandConfig {
    /// Checks the fields; errors name the field.
    pub fn validate(&self) -> Result<(), FtlError> {
        if self.cmt_entries == 0 {
            return Err(FtlError::config("ftl.cmt_entries", "lazy-rtgc-ondemand.cmt_entries must be at least 1"));
        }
        if !(self.sigma_t > 0.0 && self.sigma_t < 1.0) {
            return Err(FtlError::config(
                "ftl.sigma_t",
                format!("lazy-rtgc-ondemand.sigma_t must be in (0, 1), got {}", self.sigma_t),
            ));
        }
        Ok(())
    }

    /// The chip as the simulator runs it: array times plus channel transfers.
    fn chip(io: &Io) -> Result<ChipParams, FtlError> {
        let (g, t) = (io.geometry(), io.timing());
        let page = t.transfer(g.page_size + g.oob_size).as_ns();
        let oob = t.transfer(g.oob_size).as_ns();
        ChipParams::from_ns(t.read_ns + page, t.program_ns + page, t.read_oob_ns + oob, t.erase_ns, g.pages_per_block)
            .map(|c| c.with_page_size(g.page_size))
            .map_err(|e| FtlError::config("device.timing", format!("lazy-rtgc-ondemand: {e}")))
    }

    fn build(&self, io: &mut Io, recover: bool) -> Result<LazyRtgcOnDemand, FtlError> {
        self.validate()?;
        let bounds = lazy_rtgc_ondemand(&Self::chip(io)?, self.sigma_t)
            .map_err(|e| FtlError::config("device.timing", format!("lazy-rtgc-ondemand: {e}")))?;
        let g = *io.geometry();
        let lt = lambda_t("lazy-rtgc-ondemand", self.sigma_t, g.pages_per_block)?;
        let reserve = g.dies() + 1;
        let logical = |nd: u32| u64::from(bounds.lambda_d) * u64::from(nd.saturating_sub(reserve));
        let map = if recover {
            DemandMap::recover(io, self.cmt_entries, lt, logical)?
        } else {
            DemandMap::format(io, self.cmt_entries, lt, logical)?
        };
        let mut ftl = LazyRtgcOnDemand {
            config: *self,
            map,
            bounds,
            service_bound: SimTime((bounds.max_response_us * 1000.0).round() as u64),
            dg: None,
            tg: None,
            fence: SimTime::ZERO,
            stats: TaskStats::default(),
        };
        if recover {
            ftl.settle(io)?;
        }
        Ok(ftl)
    }
}

impl FtlBuilder for LazyRtgcOnDemandConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(self.build(io, false)?))
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(self.build(io, true)?))
    }
}

/// The partial task run after one write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// Nothing was due.
    Idle,
    /// DG copied this many valid data pages.
    DataCopy(u32),
    /// DG erased its victim.
    DataErase,
    /// TG rewrote this many valid translation pages.
    TranslationCopy(u32),
    /// TG erased its victim.
    TranslationErase,
    /// TW wrote this many translation pages back.
    WriteBack(u32),
}

/// What the partial tasks did so far (for tests and reports).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskStats {
    /// Tasks of DG, TG and TW.
    pub dg_tasks: u64,
    pub tg_tasks: u64,
    pub tw_tasks: u64,
    /// Most pages copied or written back by one task (at most alpha).
    pub max_pages_per_task: u32,
    /// Most valid pages a data victim held when picked (at most lambda_d).
    pub max_data_victim_valid: u32,
    /// Most valid pages a translation victim held when picked (at most lambda_t).
    pub max_translation_victim_valid: u32,
    /// Most tasks one data victim took (at most k_d).
    pub max_tasks_per_data_victim: u32,
}

/// The On-demand Lazy-RTGC FTL.
#[derive(Debug)]
pub struct LazyRtgcOnDemand {
    config: LazyRtgcOnDemandConfig,
    map: DemandMap,
    bounds: ftlab_bounds::LazyRtgcOnDemand,
    service_bound: SimTime,
    /// The data victim DG is collecting, and the tasks spent on it so far.
    dg: Option<(BlockId, u32)>,
    /// The translation victim TG is collecting.
    tg: Option<BlockId>,
    /// When the last partial task finishes: the next write starts after it, as on
    /// the paper's single chip, so a power cut never keeps a write that spent space
    /// a lost task was to reclaim (recovery can then always finish collecting).
    fence: SimTime,
    stats: TaskStats,
}

impl LazyRtgcOnDemand {
    /// The scheme's bounds for this chip (alpha, lambda_d, lambda_t, k_d, ...).
    pub fn bounds(&self) -> &ftlab_bounds::LazyRtgcOnDemand {
        &self.bounds
    }
    /// What the partial tasks did so far.
    pub fn stats(&self) -> &TaskStats {
        &self.stats
    }
    /// The cached mapping table.
    pub fn cmt(&self) -> &Cmt {
        &self.map.cmt
    }

    /// Dirty CMT entries above which TW runs: the budget less a block's worth of
    /// headroom for the entries a DG and a TG add (at least half the budget).
    fn tw_threshold(&self) -> u32 {
        let c = self.config.cmt_entries;
        c.saturating_sub(self.map.geometry.pages_per_block).max(c / 2)
    }

    /// After recovery: a collection cut short by the power cut has lost its
    /// progress, so victims are collected whole (recovery is not a real-time
    /// command) until each pool has more than its last free block, the state the
    /// partial tasks start from. When blocks gone bad left no room for that, the
    /// settling stops there: later writes report no space, reads still work.
    fn settle(&mut self, io: &mut Io) -> Result<(), FtlError> {
        match self.settle_pools(io) {
            Err(e) if e.kind() == crate::ErrorKind::NoSpace => Ok(()),
            r => r,
        }
    }

    fn settle_pools(&mut self, io: &mut Io) -> Result<(), FtlError> {
        let ppb = self.map.geometry.pages_per_block;
        while self.map.data_free_pages <= u64::from(ppb) {
            let Some(v) = self.map.pick_data_victim() else { break };
            let collected = self.map.copy_data_pages(io, v, ppb, false, &mut Vec::new());
            if let Err(e) = collected {
                // What was not moved stays valid in the victim, a candidate again.
                self.map.data_picker.insert(v);
                return Err(e);
            }
            self.map.erase(io, v)?;
        }
        while self.map.t_free_pages <= u64::from(ppb) {
            let Some(v) = self.map.pick_translation_victim() else { break };
            if let Err(e) = self.map.copy_tpages(io, v, ppb) {
                self.map.tpicker.insert(v);
                return Err(e);
            }
            self.map.erase(io, v)?;
        }
        Ok(())
    }

    /// Runs the partial task due after a write, by precedence DG > TG > TW.
    fn partial_task(&mut self, io: &mut Io) -> Result<Task, FtlError> {
        let ppb = self.map.geometry.pages_per_block;
        let alpha = self.bounds.alpha;
        if self.dg.is_none() && self.map.data_free_pages <= u64::from(ppb) {
            if let Some(v) = self.map.pick_data_victim() {
                let valid = self.map.valid_in(v);
                self.stats.max_data_victim_valid = self.stats.max_data_victim_valid.max(valid);
                self.dg = Some((v, 0));
            }
        }
        if let Some((v, tasks)) = self.dg {
            self.stats.dg_tasks += 1;
            self.stats.max_tasks_per_data_victim = self.stats.max_tasks_per_data_victim.max(tasks + 1);
            if self.map.valid_in(v) > 0 {
                let n = self.map.copy_data_pages(io, v, alpha, false, &mut Vec::new())?;
                self.stats.max_pages_per_task = self.stats.max_pages_per_task.max(n);
                self.dg = Some((v, tasks + 1));
                return Ok(Task::DataCopy(n));
            }
            self.map.erase(io, v)?;
            self.dg = None;
            return Ok(Task::DataErase);
        }
        if self.tg.is_none() && self.map.t_free_pages <= u64::from(ppb) {
            self.tg = self.map.pick_translation_victim();
            if let Some(v) = self.tg {
                let valid = self.map.valid_in(v);
                self.stats.max_translation_victim_valid = self.stats.max_translation_victim_valid.max(valid);
            }
        }
        if let Some(v) = self.tg {
            self.stats.tg_tasks += 1;
            if self.map.valid_in(v) > 0 {
                let n = self.map.copy_tpages(io, v, alpha)?;
                self.stats.max_pages_per_task = self.stats.max_pages_per_task.max(n);
                return Ok(Task::TranslationCopy(n));
            }
            self.map.erase(io, v)?;
            self.tg = None;
            return Ok(Task::TranslationErase);
        }
        if self.map.cmt.dirty_len() > self.tw_threshold() {
            let room = self.map.t_free_pages.saturating_sub(u64::from(self.bounds.lambda_t));
            let mut n = 0;
            while n < u64::from(alpha).min(room) {
                let Some(t) = self.map.cmt.most_dirty_tpage() else { break };
                self.map.write_back(io, t, Purpose::Map)?;
                n += 1;
            }
            self.map.drop_clean();
            if n > 0 {
                self.stats.tw_tasks += 1;
                self.stats.max_pages_per_task = self.stats.max_pages_per_task.max(n as u32);
                return Ok(Task::WriteBack(n as u32));
            }
        }
        Ok(Task::Idle)
    }

    /// Writes `lpn` and runs the partial task due; returns the task (for tests).
    pub fn write_with_task(&mut self, io: &mut Io, lpn: Lpn, data: Payload) -> Result<Task, FtlError> {
        check_lpn(lpn, self.map.logical_pages)?;
        io.start_after(self.fence);
        let old = self.map.resolve(io, lpn.0, Evict::CleanOnly)?;
        self.map.host_program(io, lpn.0, data, old)?;
        io.ack();
        let task = self.partial_task(io)?;
        if task != Task::Idle {
            self.fence = io.last_finish();
        }
        Ok(task)
    }
}

impl Ftl for LazyRtgcOnDemand {
    fn name(&self) -> &'static str {
        "lazy-rtgc-ondemand"
    }

    fn logical_pages(&self) -> u32 {
        self.map.logical_pages
    }

    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        check_lpn(lpn, self.map.logical_pages)?;
        match self.map.resolve(io, lpn.0, Evict::CleanOnly)? {
            Some(ppa) => Ok(Some(io.read(ppa, Purpose::Host)?.0)),
            None => Ok(None),
        }
    }

    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, _hint: &Hint) -> Result<(), FtlError> {
        self.write_with_task(io, lpn, data).map(|_| ())
    }

    fn trim(&mut self, io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        check_lpn(lpn, self.map.logical_pages)?;
        let old = self.map.resolve(io, lpn.0, Evict::CleanOnly)?;
        self.map.unmap(lpn.0, old);
        Ok(())
    }

    fn ram_bytes(&self) -> u64 {
        self.map.ram_bytes()
    }

    /// `cmt_hits`, `cmt_misses` and `cmt_hit_ratio`: host lookups of the
    /// cached mapping table since measurement started (001 Figure 8(a)).
    fn gauges(&self) -> Vec<(&'static str, f64)> {
        self.map.cmt.counters().gauges()
    }

    fn reset_counters(&mut self) {
        self.map.cmt.reset_counters();
    }

    fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
        self.map.check_invariants(flash)
    }

    fn capabilities(&self) -> crate::Capabilities<'_> {
        crate::Capabilities { realtime: Some(self), placement: None }
    }
}

impl crate::RealTime for LazyRtgcOnDemand {
    fn service_bound(&self) -> Option<SimTime> {
        Some(self.service_bound)
    }
}

/// The registry's entries for this module's schemes ([`crate::registry`]).
pub const SCHEMES: [crate::entry::Scheme; 1] = [crate::entry::Scheme {
    name: "lazy-rtgc-ondemand",
    summary: "On-demand Lazy-RTGC (001 Section 5): DFTL with partial DG > TG > TW tasks (<= t_er) after each write",
    paper: "001 Section 5",
    admits_tasks: false,
    bounds: true,
    build: |p, _| {
        crate::entry::configured(
            "lazy-rtgc-ondemand",
            LazyRtgcOnDemandConfig::default(),
            p,
            LazyRtgcOnDemandConfig::validate,
        )
    },
}];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::schemes::page::dftl::tests::flash;
    use crate::RealTime;

    fn format(flash: &mut Flash, cmt_entries: u32) -> LazyRtgcOnDemand {
        let config = LazyRtgcOnDemandConfig { cmt_entries, ..Default::default() };
        config.build(&mut flash.io(SimTime::ZERO), false).unwrap()
    }

    #[test]
    fn sizing_follows_eq17_and_the_bound_counts_transfers() {
        let mut flash = flash();
        let ftl = format(&mut flash, 48);
        let b = *ftl.bounds();
        // t_rd = 25 + 21.12, t_wr = 200 + 21.12 (4224 bytes at 200 MB/s), t_er = 1500.
        assert_eq!((b.alpha, b.lambda_t, b.lambda_d, b.k_d, b.k_t), (5, 8, 10, 3, 3));
        assert_eq!(ftl.service_bound(), Some(SimTime(1_500_000 + 221_120 + 46_120)));
        // 96 blocks, 5 translation blocks (4 + ceil(1 / 8)), 4 dies + 1 reserved.
        assert_eq!(ftl.logical_pages(), 10 * (96 - 5 - 5));
    }

    fn gauge(ftl: &LazyRtgcOnDemand, name: &str) -> f64 {
        ftl.gauges().into_iter().find(|(n, _)| *n == name).map(|(_, v)| v).unwrap()
    }

    /// 001 Figure 8(a): the CMT's hit ratio. Reads of a set that fits in the
    /// CMT miss once each, then hit; uniform reads over a space 18 times the
    /// CMT hit about as often as the CMT's share of the space; a reset (the
    /// start of measurement) restarts the counts.
    #[test]
    fn cmt_hit_ratio_is_the_cached_share_of_host_lookups() {
        let mut flash = flash();
        let mut ftl = format(&mut flash, 48);
        let n = ftl.logical_pages();
        let mut now = SimTime::ZERO;
        for lpn in 0..n {
            let mut io = flash.io(now);
            ftl.write(&mut io, Lpn(lpn), Payload::Token(u64::from(lpn)), &Hint::default()).unwrap();
            now = io.completion();
        }
        assert_eq!(gauge(&ftl, "cmt_hits") + gauge(&ftl, "cmt_misses"), f64::from(n), "one lookup per write");
        let mut read = |ftl: &mut LazyRtgcOnDemand, lpn: u32| {
            let mut io = flash.io(now);
            assert_eq!(ftl.read(&mut io, Lpn(lpn)).unwrap(), Some(Payload::Token(u64::from(lpn))));
            now = io.completion();
        };
        ftl.reset_counters();
        assert_eq!((gauge(&ftl, "cmt_hits"), gauge(&ftl, "cmt_misses"), gauge(&ftl, "cmt_hit_ratio")), (0.0, 0.0, 0.0));
        for i in 0..1600 {
            read(&mut ftl, 100 + i % 16);
        }
        assert_eq!((gauge(&ftl, "cmt_hits"), gauge(&ftl, "cmt_misses")), (1584.0, 16.0));
        assert_eq!(gauge(&ftl, "cmt_hit_ratio"), 0.99);

        ftl.reset_counters();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for _ in 0..20_000 {
            read(&mut ftl, rng.gen_range(0..n));
        }
        let share = 48.0 / f64::from(n);
        let ratio = gauge(&ftl, "cmt_hit_ratio");
        assert_eq!(gauge(&ftl, "cmt_hits") + gauge(&ftl, "cmt_misses"), 20_000.0);
        assert!((ratio - share).abs() < 0.2 * share, "hit ratio {ratio}, CMT share of the space {share}");
    }

    /// A closed loop at queue depth 1 (each command dispatched when the previous
    /// completes) over the whole logical space: every command within the bound,
    /// every task within its page budget, DG > TG > TW.
    #[test]
    fn closed_loop_stays_within_the_bound_and_the_task_budgets() {
        let mut flash = flash();
        let mut ftl = format(&mut flash, 48);
        let bound = ftl.service_bound().unwrap();
        let n = ftl.logical_pages();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut now = SimTime::ZERO;
        let (mut in_dg, mut in_tg) = (false, false);
        for i in 0..(6 * n) {
            let lpn = if i < n { i } else { rng.gen_range(0..n) };
            let mut io = flash.io(now);
            if i % 4 == 3 {
                ftl.read(&mut io, Lpn(lpn)).unwrap();
            } else {
                let task = ftl.write_with_task(&mut io, Lpn(lpn), Payload::Token(u64::from(i))).unwrap();
                match task {
                    Task::DataCopy(k) => {
                        assert!(k <= ftl.bounds().alpha);
                        in_dg = true;
                    }
                    Task::DataErase => in_dg = false,
                    Task::TranslationCopy(_) | Task::TranslationErase => {
                        assert!(!in_dg, "TG ran while a data victim was being collected");
                        in_tg = matches!(task, Task::TranslationCopy(_));
                    }
                    Task::WriteBack(k) => {
                        assert!(!in_dg && !in_tg, "TW ran before DG and TG were done");
                        assert!(k <= ftl.bounds().alpha);
                    }
                    Task::Idle => {}
                }
            }
            let done = io.completion();
            assert!(done - now <= bound, "command {i} took {} > {bound}", done - now);
            now = done;
        }
        let (s, b) = (*ftl.stats(), *ftl.bounds());
        assert!(s.dg_tasks > 0 && s.tg_tasks > 0 && s.tw_tasks > 0, "{s:?}");
        assert!(s.max_pages_per_task <= b.alpha, "{s:?}");
        assert!(s.max_data_victim_valid <= b.lambda_d, "{s:?} vs {b:?}");
        assert!(s.max_translation_victim_valid <= b.lambda_t, "{s:?} vs {b:?}");
        assert!(s.max_tasks_per_data_victim <= b.k_d, "{s:?} vs {b:?}");
        ftl.check_invariants(&flash).unwrap();
    }
}
