//! FSR, free-space replenishment (Chang et al. 2004), as 001_ca7ecce2bd5249b9.txt
//! compares against it (Sections 3.3, 4.2 and 6.1-6.2, Table I).
//!
//! A page map whose logical space is limited to sigma of the physical space
//! (default 0.75, the ratio of 001 Section 6.2(5)), so that a greedy victim holds
//! at most about `ceil(sigma * pi)` valid pages (Theorem 4.3, `U(lambda)` of Table
//! I). Garbage collection is triggered as in Pure-Page-Level (Section 6.1): when no
//! free page is left besides the block it copies into, one victim is reclaimed
//! before the write, in one piece.
//!
//! It is a configuration of [`PageMap`]: `over_provisioning = 1 - sigma`,
//! `gc_free_blocks = 1`, greedy victims. The wrapper only gives it its name and
//! its [`RealTime::service_bound`](crate::RealTime::service_bound): FSR's `U(R_T)` from [`ftlab_bounds::fsr`], the
//! unpartitioned worst case of Eq. 5 of 001,
//! `max{t_rd, t_wr} + (pi - 1)(t_rd + t_wr) + t_er` (page times with channel
//! transfer). **That is not a guarantee**: 001 stresses that FSR "cannot guarantee
//! the worst-case response time" for lack of the real-time tasks' information.
//! Eq. 5 assumes one collection per request; a write that finds its free block
//! used up by a collection's copies collects a second victim, and requests
//! queue behind one another, so commands may exceed it.
//!
//! The bound of Theorem 4.3 holds for the average valid count over the whole
//! device; with the few blocks free or open when a victim is picked it is
//! slightly exceeded on small devices (the Lazy-RTGC module keeps those blocks out
//! of its logical space; FSR, as in the paper, does not).

use serde::{Deserialize, Serialize};

use ftlab_nand::SimTime;

use crate::layer::{Layer, Layered};
use crate::schemes::page::pagemap::{PageMap, PageMapConfig};
use crate::schemes::realtime::lazy_rtgc::chip_params;
use crate::victim::VictimPolicy;
use crate::{Ftl, FtlBuilder, FtlError, Io};

/// Configuration of [`Fsr`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FsrConfig {
    /// sigma, the logical over the physical space, in (0, 1). Default 0.75 (001
    /// Section 6.2(5)).
    pub sigma: f64,
}

impl Default for FsrConfig {
    fn default() -> Self {
        FsrConfig { sigma: 0.75 }
    }
}

impl FsrConfig {
    /// Checks the fields; errors name the field.
    pub fn validate(&self) -> Result<(), FtlError> {
        if !(self.sigma > 0.0 && self.sigma < 1.0) {
            return Err(FtlError::config("ftl.sigma", format!("fsr.sigma must be in (0, 1), got {}", self.sigma)));
        }
        Ok(())
    }

    /// The page-map configuration FSR runs as.
    pub fn pagemap(&self) -> PageMapConfig {
        PageMapConfig {
            over_provisioning: 1.0 - self.sigma,
            gc_free_blocks: 1,
            victim: VictimPolicy::Greedy,
            background_gc_free_blocks: 0,
            free_order: crate::alloc::FreeOrder::Fifo,
            ..PageMapConfig::default()
        }
    }

    fn wrap(&self, io: &Io, inner: PageMap) -> Result<Fsr, FtlError> {
        let chip = chip_params(io, true)?;
        let b = ftlab_bounds::fsr(&chip, Some(self.sigma))
            .map_err(|e| FtlError::config("device.timing", format!("fsr: {e}")))?;
        let bound = SimTime((b.max_response_us * 1_000.0).round() as u64);
        Ok(Fsr { inner, bound })
    }
}

impl FtlBuilder for FsrConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        self.validate()?;
        let inner = PageMap::format(self.pagemap(), io)?;
        Ok(Box::new(Layered(self.wrap(io, inner)?)))
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        self.validate()?;
        let inner = PageMap::recover(self.pagemap(), io)?;
        Ok(Box::new(Layered(self.wrap(io, inner)?)))
    }
}

/// FSR: a page map with a limited logical space and FSR's (nominal) bound.
#[derive(Debug)]
pub struct Fsr {
    inner: PageMap,
    bound: SimTime,
}

/// FSR is pagemap with the logical space limited and a bound of its own: a
/// [`Layer`] over [`PageMap`], which keeps the page map's placement, memory,
/// gauges and prefetch hints.
impl Layer for Fsr {
    type Inner = PageMap;
    fn inner(&self) -> &PageMap {
        &self.inner
    }
    fn inner_mut(&mut self) -> &mut PageMap {
        &mut self.inner
    }
    fn name(&self) -> &'static str {
        "fsr"
    }
    fn own_ram_bytes(&self) -> u64 {
        8
    }
    fn realtime(&self) -> Option<&dyn crate::RealTime> {
        Some(self)
    }
}

impl crate::RealTime for Fsr {
    /// FSR's `U(R_T)` of Table I (Eq. 5): nominal, not guaranteed (see the module
    /// documentation).
    fn service_bound(&self) -> Option<SimTime> {
        Some(self.bound)
    }
}

/// The registry's entries for this module's schemes ([`crate::registry`]).
pub const SCHEMES: [crate::entry::Scheme; 1] = [crate::entry::Scheme {
    name: "fsr",
    summary: "FSR (001): page mapping, logical space limited to sigma = 0.75, GC when no free page is left",
    paper: "001 Section 6 (Chang et al. 2004)",
    admits_tasks: false,
    bounds: true,
    build: |p, _| crate::entry::configured("fsr", FsrConfig::default(), p, FsrConfig::validate),
}];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::{Flash, Hint, Lpn, Purpose};
    use ftlab_nand::presets::preset;
    use ftlab_nand::Payload;
    use ftlab_nand::{Nand, NandConfig, StoreKind, WearConfig};

    fn flash(blocks: u32) -> Flash {
        let p = preset("spansion-slc-512mb").unwrap();
        let mut geometry = p.geometry;
        geometry.blocks_per_plane = blocks;
        let config = NandConfig {
            geometry,
            timing: p.timing,
            bad_block_rate: 0.0,
            wear: WearConfig::default(),
            store: StoreKind::Token,
            seed: 3,
            faults: Default::default(),
            commands: Default::default(),
        };
        Flash::new(Nand::new(&config).unwrap())
    }

    #[test]
    fn logical_space_is_sigma_and_bound_is_eq5_with_transfer() {
        let mut f = flash(128);
        let ftl = FsrConfig::default().format(&mut f.io(SimTime::ZERO)).unwrap();
        assert_eq!(ftl.name(), "fsr");
        assert_eq!(ftl.logical_pages(), 128 * 64 * 3 / 4);
        // 2112 bytes at 40 MB/s: 52.8 us per page transfer.
        let (rd, wr) = (25.0 + 52.8, 200.0 + 52.8);
        let eq5 = f64::max(rd, wr) + 63.0 * (rd + wr) + 2000.0;
        assert_eq!(crate::service_bound(&*ftl).unwrap().0, (eq5 * 1000.0f64).round() as u64);
        assert!(FsrConfig { sigma: 1.0 }.validate().is_err());
    }

    #[test]
    fn victims_hold_about_sigma_pi_valid_pages() {
        // Random overwrites of the whole logical space: the copies per reclaimed
        // block stay near the greedy bound ceil(0.75 * 64) = 48, far below pi.
        let mut f = flash(64);
        let mut ftl = FsrConfig::default().format(&mut f.io(SimTime::ZERO)).unwrap();
        let n = ftl.logical_pages();
        let mut x = 12345u64;
        let mut now = SimTime::ZERO;
        let mut worst = 0;
        for i in 0..n * 8 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let lpn = if i < n { i } else { (x >> 33) as u32 % n };
            let before = *f.counters();
            let mut io = f.io(now);
            ftl.write(&mut io, Lpn(lpn), Payload::Token(u64::from(i) + 1), &Hint::default()).unwrap();
            now = io.completion();
            let c = f.counters();
            let erases = c.erases.get(Purpose::Gc) - before.erases.get(Purpose::Gc);
            let copies = c.programs.get(Purpose::Gc) - before.programs.get(Purpose::Gc);
            if let Some(per_victim) = copies.checked_div(erases) {
                worst = worst.max(per_victim);
            }
        }
        assert!(f.counters().erases.get(Purpose::Gc) > 100);
        assert!(worst <= 50, "a victim held {worst} valid pages");
        ftl.check_invariants(&f).unwrap();
    }
}
