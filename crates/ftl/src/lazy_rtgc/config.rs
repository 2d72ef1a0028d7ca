//! Lazy-RTGC's configuration and what it comes to on a chip: alpha (Eq. 7), the
//! valid-page bound U(lambda) and sigma (Theorem 4.3, Eq. 9-11), the threshold
//! rho_th (Eq. 13) and the service bound of Table I, all from
//! [`ftlab_bounds::lazy_rtgc`].

use serde::{Deserialize, Serialize};

use ftlab_bounds::ChipParams;
use ftlab_nand::SimTime;

use crate::{FtlError, Io};

/// Configuration of [`LazyRtgc`](super::LazyRtgc). Every field has a documented
/// default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LazyRtgcConfig {
    /// sigma, the logical over the physical space, in [0, 1). 0 (the default)
    /// takes the largest the chip allows: `U(lambda) / pi` of
    /// [`ftlab_bounds::LazyRtgc::sigma_integral`] (0.875 on the Spansion SLC chip
    /// of 001, Table II). A larger value is refused: a victim could then hold more
    /// valid pages than its reclaimed space can pay for (Eq. 9).
    pub sigma: f64,
    /// The idle-time optimisation of 001 Section 3.2: in idle gaps, run the pending
    /// partial tasks and erase closed blocks with no valid page. Default false.
    pub idle_gc: bool,
}

impl Default for LazyRtgcConfig {
    fn default() -> Self {
        LazyRtgcConfig { sigma: 0.0, idle_gc: false }
    }
}

impl LazyRtgcConfig {
    /// Checks the fields; errors name the field.
    pub fn validate(&self) -> Result<(), FtlError> {
        if !(0.0..1.0).contains(&self.sigma) {
            return Err(FtlError::Config(format!(
                "lazy-rtgc.sigma must be in [0, 1) (0 = the chip's largest, Eq. 11), got {}",
                self.sigma
            )));
        }
        Ok(())
    }
}

/// What a configuration comes to on one device.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LazyRtgcPlan {
    /// Valid-page copies per partial task (Eq. 7, a floor: see
    /// [`ftlab_bounds::LazyRtgc::alpha`]). With copyback (one plane per die) a copy
    /// costs `t_rd + t_wr` array time, as in the paper; otherwise the channel
    /// transfers are added, so that alpha copies always fit in one erase time.
    pub alpha: u32,
    /// `U(lambda)`: the most valid pages a greedy victim may hold (Theorem 4.3 with
    /// the configured sigma; at most the chip's bound of Eq. 9-10).
    pub lambda_max: u32,
    /// The sigma used (the configured one or the chip's largest).
    pub sigma: f64,
    /// `rho_th` (Eq. 13): a collection starts when fewer free pages remain.
    pub rho_th: u32,
    /// Blocks kept out of the logical space besides `1 - sigma`: the free and
    /// open blocks that may exist when a victim is picked (see
    /// [`LazyRtgcPlan::logical_pages`]).
    pub reserve_blocks: u32,
    /// Logical pages exported.
    pub logical_pages: u32,
    /// `U(R_T) = max{t_rdpg, t_er + t_wrpg}` (Table I), the page times including
    /// the channel transfer the simulator charges.
    pub service_bound: SimTime,
}

/// The chip parameters of the device behind `io`, with or without the channel
/// transfer of a page (and of the OOB for an OOB read).
pub(crate) fn chip_params(io: &Io, with_transfer: bool) -> Result<ChipParams, FtlError> {
    let t = io.timing();
    let g = io.geometry();
    let (page, oob) = if with_transfer {
        (t.transfer(g.page_size + g.oob_size).as_ns(), t.transfer(g.oob_size).as_ns())
    } else {
        (0, 0)
    };
    ChipParams::from_ns(t.read_ns + page, t.program_ns + page, t.read_oob_ns + oob, t.erase_ns, g.pages_per_block)
        .map_err(|e| FtlError::Config(format!("chip parameters: {e}")))
}

/// `N(V_G)` of Eq. 8: partial tasks for a victim with `lambda` valid pages.
pub(crate) fn gc_tasks(lambda: u32, alpha: u32) -> u32 {
    lambda.div_ceil(alpha) + 1
}

/// `ceil(sigma * pi)` (Theorem 4.3), guarded against `0.875 * 64` landing a hair
/// above the integer it denotes.
fn ceil_pages(sigma: f64, pi: u32) -> u32 {
    let x = sigma * f64::from(pi);
    if (x - x.round()).abs() < 1e-9 {
        x.round() as u32
    } else {
        x.ceil() as u32
    }
}

impl LazyRtgcPlan {
    /// The plan for `config` on the device behind `io` with `good_blocks` usable
    /// blocks.
    ///
    /// The logical space is `min(floor(sigma * good * pi), U(lambda) * (good -
    /// reserve))`. Theorem 4.3 bounds the greedy victim by the average valid count
    /// of the closed blocks; when a victim is picked (fewer than rho_th free pages)
    /// at most `floor((rho_th - 1) / pi)` blocks are free and one block per die is
    /// open, so keeping that many blocks out makes the bound hold on every device,
    /// not only in the limit of many blocks.
    pub fn new(config: &LazyRtgcConfig, io: &Io, good_blocks: u32) -> Result<Self, FtlError> {
        config.validate()?;
        let g = io.geometry();
        let pi = g.pages_per_block;
        let copyback = g.planes_per_die == 1 && io.copyback_enabled();
        let task_chip = chip_params(io, !copyback)?;
        let chip = ftlab_bounds::lazy_rtgc(&task_chip).map_err(|e| FtlError::Config(format!("lazy-rtgc: {e}")))?;
        let alpha = chip.alpha;
        let (sigma, lambda_max) = if config.sigma == 0.0 {
            (chip.sigma_integral, chip.u_lambda)
        } else {
            let l = ceil_pages(config.sigma, pi);
            if l > chip.u_lambda {
                return Err(FtlError::Config(format!(
                    "lazy-rtgc.sigma = {} lets a victim hold {l} valid pages, more than this chip's U(lambda) = {} \
                     (Eq. 9-11); use at most {}",
                    config.sigma, chip.u_lambda, chip.sigma_integral
                )));
            }
            (config.sigma, l)
        };
        // Eq. 13, and never below what one collection of a worst victim consumes.
        let rho_th = chip.rho_th.max(lambda_max + gc_tasks(lambda_max, alpha));
        let reserve_blocks = (rho_th - 1) / pi + g.dies();
        let by_sigma = (f64::from(good_blocks) * f64::from(pi) * sigma).floor() as u64;
        let by_bound = u64::from(good_blocks.saturating_sub(reserve_blocks)) * u64::from(lambda_max);
        let logical_pages = u32::try_from(by_sigma.min(by_bound))
            .map_err(|_| FtlError::Config("lazy-rtgc: logical space too large".into()))?;
        if logical_pages == 0 {
            return Err(FtlError::Config(format!(
                "the device is too small for lazy-rtgc: {good_blocks} good blocks, {reserve_blocks} reserved"
            )));
        }
        let b = chip_params(io, true)?;
        let service_bound = SimTime(b.t_rdpg_ns().max(b.t_er_ns() + b.t_wrpg_ns()));
        Ok(LazyRtgcPlan { alpha, lambda_max, sigma, rho_th, reserve_blocks, logical_pages, service_bound })
    }
}
