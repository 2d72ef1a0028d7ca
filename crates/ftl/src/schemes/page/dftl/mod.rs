//! DFTL, demand-based page mapping (Gupta, Kim and Urgaonkar, ASPLOS 2009), as
//! Section 5.1 of 001_ca7ecce2bd5249b9.txt describes it.
//!
//! The whole page-level map lives on flash in *translation pages*, each holding
//! `page_size / 4` consecutive mapping entries (PageKind::Map, in a pool of
//! *translation blocks* separate from the data blocks). RAM holds a *global
//! translation directory* (GTD: where each translation page is) and a *cached
//! mapping table* (CMT) of a configured number of entries, least recently used
//! out:
//!
//! - a CMT miss reads the entry's translation page (a map read);
//! - making room evicts the least recently used entry; a dirty one is written
//!   back first, with every other dirty entry of its translation page (DFTL's
//!   batching): a read of the current version and a program of the new one, both
//!   map operations;
//! - data-block GC (greedy, before a write while at most `gc_free_blocks` data
//!   blocks are free) moves valid pages; a moved page's new mapping updates its
//!   CMT entry if cached, otherwise the moves of one pass are merged into their
//!   translation pages, one write-back per translation page (DFTL's batch update);
//! - translation-block GC (greedy, when a write-back would leave less than a
//!   block of free translation pages) moves valid translation pages, merging
//!   their dirty CMT entries on the way.
//!
//! Recovery (module `recover`): the GTD from the translation pages'
//! OOB, then data pages newer than their translation page replayed into the CMT.
//!
//! The translation pool holds `4 + ceil(tpages / lambda_t)` blocks, `lambda_t =
//! ceil(sigma_t pi)`: by Theorem 4.3 of 001 a greedy translation victim then has at
//! most `lambda_t` valid pages, so translation GC always gains space.
//!
//! RAM ([`Ftl::ram_bytes`]): CMT entries (16 bytes each, at their high-water mark),
//! the GTD (4 bytes a translation page), dirty counts per translation page, the
//! valid-page bitmap, pickers and allocators — Table VII of 001 counts the same
//! kind of footprint for On-demand Lazy-RTGC.

mod cmt;
pub(crate) mod core;
mod recover;
#[cfg(test)]
pub(crate) mod tests;

use serde::{Deserialize, Serialize};

use ftlab_nand::{Geometry, Payload};

pub use self::cmt::{Cmt, CmtCounters, CMT_ENTRY_BYTES};
use self::core::{DemandMap, Evict};
use crate::{check_lpn, Flash, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn, Purpose};

/// CMT entries by default: 256 KiB at 8 bytes an entry (logical and physical page
/// numbers), the CMT size 001 Section 6.2(2) evaluates with.
pub const DEFAULT_CMT_ENTRIES: u32 = 32_768;

/// Configuration of [`Dftl`]. Every field has a documented default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DftlConfig {
    /// Mapping entries the CMT holds. Default [`DEFAULT_CMT_ENTRIES`].
    pub cmt_entries: u32,
    /// Fraction of the data pages hidden from the host, in [0, 1). Default 0: the
    /// largest logical space greedy GC allows (as `pagemap`).
    pub over_provisioning: f64,
    /// Data GC runs before a write while at most this many data blocks are free
    /// (at least 1). Default 1.
    pub gc_free_blocks: u32,
    /// Valid translation pages over the translation pool's pages, in (0, 1):
    /// sizes the pool. Default 0.5 (001 Section 6.2(5)).
    pub sigma_t: f64,
}

impl Default for DftlConfig {
    fn default() -> Self {
        DftlConfig { cmt_entries: DEFAULT_CMT_ENTRIES, over_provisioning: 0.0, gc_free_blocks: 1, sigma_t: 0.5 }
    }
}

/// `lambda_t = ceil(sigma_t pi)`, checked to leave a translation victim an invalid
/// page.
pub(crate) fn lambda_t(scheme: &str, sigma_t: f64, pages_per_block: u32) -> Result<u32, FtlError> {
    let l = (sigma_t * f64::from(pages_per_block)).ceil();
    if !(sigma_t > 0.0 && sigma_t < 1.0) || l >= f64::from(pages_per_block) {
        return Err(FtlError::config(
            "ftl.sigma_t",
            format!(
                "{scheme}.sigma_t must be in (0, 1) and leave a translation block an invalid page \
             (ceil(sigma_t * {pages_per_block}) < {pages_per_block}), got {sigma_t}"
            ),
        ));
    }
    Ok(l as u32)
}

impl DftlConfig {
    /// Checks the fields; errors name the field.
    pub fn validate(&self) -> Result<(), FtlError> {
        if self.cmt_entries == 0 {
            return Err(FtlError::config("ftl.cmt_entries", "dftl.cmt_entries must be at least 1"));
        }
        crate::config::over_provisioning("dftl", self.over_provisioning)?;
        crate::config::gc_free_blocks("dftl", self.gc_free_blocks, "")?;
        if !(self.sigma_t > 0.0 && self.sigma_t < 1.0) {
            return Err(FtlError::config(
                "ftl.sigma_t",
                format!("dftl.sigma_t must be in (0, 1), got {}", self.sigma_t),
            ));
        }
        Ok(())
    }

    /// Logical pages over `data_blocks` good data blocks: `pagemap`'s rule (keep
    /// `gc_free_blocks`, an open block per die and one more block).
    fn logical(&self, g: &Geometry, data_blocks: u32) -> u64 {
        let ppb = u64::from(g.pages_per_block);
        let slack = u64::from(self.gc_free_blocks) + u64::from(g.dies()) + 1;
        let max = u64::from(data_blocks).saturating_sub(slack) * ppb;
        let wanted = ((u64::from(data_blocks) * ppb) as f64 * (1.0 - self.over_provisioning)).floor() as u64;
        wanted.min(max)
    }

    fn build(&self, io: &mut Io, recover: bool) -> Result<Dftl, FtlError> {
        self.validate()?;
        let g = *io.geometry();
        let lt = lambda_t("dftl", self.sigma_t, g.pages_per_block)?;
        let logical = |nd| self.logical(&g, nd);
        let map = if recover {
            DemandMap::recover(io, self.cmt_entries, lt, logical)?
        } else {
            DemandMap::format(io, self.cmt_entries, lt, logical)?
        };
        Ok(Dftl { config: *self, map })
    }
}

impl FtlBuilder for DftlConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(self.build(io, false)?))
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(self.build(io, true)?))
    }
}

/// The DFTL FTL.
#[derive(Debug)]
pub struct Dftl {
    config: DftlConfig,
    map: DemandMap,
}

impl Dftl {
    /// The cached mapping table (for tests and reports).
    pub fn cmt(&self) -> &Cmt {
        &self.map.cmt
    }

    /// Reclaims one data block: moves its valid pages, updates their mappings
    /// (CMT or batched translation-page updates), erases it.
    fn collect_data_one(&mut self, io: &mut Io) -> Result<bool, FtlError> {
        let Some(victim) = self.map.pick_data_victim() else {
            return Ok(false);
        };
        let ppb = self.map.geometry.pages_per_block;
        self.map.ensure_translation_space(io, u64::from(ppb))?;
        let mut moves = Vec::new();
        if let Err(e) = self.map.copy_data_pages(io, victim, ppb, true, &mut moves) {
            // The pages moved so far are mapped where they went; the rest stay
            // valid in the victim, a candidate again.
            self.map.map_moves(&moves);
            self.map.data_picker.insert(victim);
            return Err(e);
        }
        self.map.write_back_moves(io, &mut moves)?;
        self.map.erase(io, victim)?;
        Ok(true)
    }
}

impl Ftl for Dftl {
    fn name(&self) -> &'static str {
        "dftl"
    }

    fn logical_pages(&self) -> u32 {
        self.map.logical_pages
    }

    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        check_lpn(lpn, self.map.logical_pages)?;
        match self.map.resolve(io, lpn.0, Evict::WriteBack)? {
            Some(ppa) => Ok(Some(io.read(ppa, Purpose::Host)?.0)),
            None => Ok(None),
        }
    }

    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, _hint: &Hint) -> Result<(), FtlError> {
        check_lpn(lpn, self.map.logical_pages)?;
        let threshold = self.config.gc_free_blocks;
        io.independent(|io| {
            while self.map.data_alloc.free_blocks() <= threshold {
                if !self.collect_data_one(io)? {
                    break;
                }
            }
            Ok::<_, FtlError>(())
        })?;
        let old = self.map.resolve(io, lpn.0, Evict::WriteBack)?;
        self.map.host_program(io, lpn.0, data, old)?;
        io.ack();
        Ok(())
    }

    fn trim(&mut self, io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        check_lpn(lpn, self.map.logical_pages)?;
        let old = self.map.resolve(io, lpn.0, Evict::WriteBack)?;
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
}

/// The registry's entries for this module's schemes ([`crate::registry`]).
pub const SCHEMES: [crate::entry::Scheme; 1] = [crate::entry::Scheme {
    name: "dftl",
    summary: "DFTL (Gupta 2009, via 001 Section 5): cached mapping table over translation pages on flash",
    paper: "001 Section 5 (Gupta et al. 2009)",
    admits_tasks: false,
    bounds: false,
    build: |p, _| crate::entry::configured("dftl", DftlConfig::default(), p, DftlConfig::validate),
}];
