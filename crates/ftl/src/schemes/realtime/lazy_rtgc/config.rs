//! Lazy-RTGC's configuration and what it comes to on a chip: alpha (Eq. 7), the
//! valid-page bound U(lambda) and sigma (Theorem 4.3, Eq. 9-11), the threshold
//! rho_th (Eq. 13) and the service bound of Table I, all from
//! [`ftlab_bounds::lazy_rtgc`]. The steps of [`LazyRtgcPlan::new`] are shared with
//! WAO-GC's plan ([`crate::schemes::realtime::waogc`]), which runs on the same collector.

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
            return Err(FtlError::config(
                "ftl.sigma",
                format!("lazy-rtgc.sigma must be in [0, 1) (0 = the chip's largest, Eq. 11), got {}", self.sigma),
            ));
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
    /// `rho_th` (Eq. 13): Lazy-RTGC starts a die's collection when fewer free
    /// pages remain on the die. Under WAO-GC's block trigger it is `U(lambda) + N(V_G)`: the free
    /// pages one collection of a worst victim consumes, counting the write that
    /// starts it, which the trigger's free blocks always hold.
    pub rho_th: u32,
    /// When a collection starts.
    pub trigger: Trigger,
    /// Blocks kept out of the logical space besides `1 - sigma`, on the whole
    /// device: per die, the free and open blocks it may have when its victim is
    /// picked (see [`LazyRtgcPlan::new`]), `floor((rho_th - 1) / pi)` free blocks
    /// (WAO-GC: `gc_free_blocks`) and one open block, times the dies.
    pub reserve_blocks: u32,
    /// Logical pages exported.
    pub logical_pages: u32,
    /// `U(R_T) = max{t_rdpg, t_er + t_wrpg}` (Table I; for WAO-GC
    /// `t_wrpg + max{t_er, t_rdpg + t_wrpg}`, Eq. 25 of 000), the page times
    /// including the channel transfer the simulator charges.
    pub service_bound: SimTime,
}

/// When a die's collection starts: checked after each host write on the die
/// while the die has no collection in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// Fewer free pages on the die than this (Lazy-RTGC's `rho_th`, Eq. 13).
    FreePagesBelow(u32),
    /// At most this many free blocks on the die, its open block not counted
    /// (WAO-GC's `gc_free_blocks`).
    FreeBlocksAtMost(u32),
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
        .map_err(|e| FtlError::config("device.timing", format!("chip parameters: {e}")))
}

/// How long flash work of the other dies on a page command's channel can hold
/// its transfer back, ns, when each of them may have `transfers` page transfers
/// back to back in the way (a copy through the controller: a read transfer, then
/// a program transfer; a metadata program: one). Waiting for other dies' host
/// transfers is queueing and not part of a command's service; their garbage
/// collection, map or metadata transfers are, and a bound on a multi-die channel
/// must carry them. Zero with one die per channel.
pub(crate) fn channel_share_ns(io: &Io, transfers: u64) -> u64 {
    let g = io.geometry();
    let others = u64::from((g.ways_per_channel * g.dies_per_way).saturating_sub(1));
    others * transfers * io.timing().transfer(g.page_size + g.oob_size).as_ns()
}

/// Page transfers a collection step of Lazy-RTGC or WAO-GC puts on its channel:
/// none when copies are copybacks inside the die (one plane per die, copyback
/// on), else the read and program transfers of each of its at most `alpha`
/// copies. With one request at a time a die has at most one step reserved
/// ahead, and the steps of several dies interleave on the channel so that a
/// transfer may find no gap until they are done (seen with four dies on a
/// channel: two transfers a die were not enough).
pub(crate) fn gc_transfers(io: &Io, alpha: u32) -> u64 {
    if io.geometry().planes_per_die == 1 && io.copyback_enabled() {
        0
    } else {
        2 * u64::from(alpha)
    }
}

/// Lazy-RTGC's bounds for the partial tasks on the device behind `io`: with
/// copyback (one plane per die) a copy costs `t_rd + t_wr` array time, as in 001;
/// otherwise the channel transfers are added, so alpha copies fit in one erase.
pub(crate) fn task_bounds(io: &Io, scheme: &str) -> Result<ftlab_bounds::LazyRtgc, FtlError> {
    let g = io.geometry();
    let copyback = g.planes_per_die == 1 && io.copyback_enabled();
    ftlab_bounds::lazy_rtgc(&chip_params(io, !copyback)?)
        .map_err(|e| FtlError::config("device.timing", format!("{scheme}: {e}")))
}

/// The configured logical-to-physical ratio and the most valid pages a greedy
/// victim may then hold, `ceil(ratio * pi)` (Theorem 4.3). A ratio of 0 takes the
/// chip's largest, `U(lambda) / pi`; a ratio whose bound exceeds the chip's
/// `U(lambda)` (Eq. 9-10) is refused with a message naming `key` and the largest.
pub(crate) fn valid_bound(
    ratio: f64,
    key: &str,
    chip: &ftlab_bounds::LazyRtgc,
    pi: u32,
) -> Result<(f64, u32), FtlError> {
    if ratio == 0.0 {
        return Ok((chip.sigma_integral, chip.u_lambda));
    }
    let l = ceil_pages(ratio, pi);
    if l > chip.u_lambda {
        let param = key.rsplit('.').next().unwrap_or(key);
        return Err(FtlError::config(
            format!("ftl.{param}"),
            format!(
                "{key} = {ratio} lets a victim hold {l} valid pages, more than this chip's U(lambda) = {} \
             (Eq. 9-11); use at most {}",
                chip.u_lambda, chip.sigma_integral
            ),
        ));
    }
    Ok((ratio, l))
}

/// The logical space, `min(floor(ratio * good * pi), U(lambda) * (good -
/// reserve))` (see [`LazyRtgcPlan::new`]); refused when it is empty.
pub(crate) fn logical_space(
    scheme: &str,
    ratio: f64,
    lambda_max: u32,
    good_blocks: u32,
    reserve_blocks: u32,
    pi: u32,
) -> Result<u32, FtlError> {
    let by_ratio = (f64::from(good_blocks) * f64::from(pi) * ratio).floor() as u64;
    let by_bound = u64::from(good_blocks.saturating_sub(reserve_blocks)) * u64::from(lambda_max);
    let logical_pages = u32::try_from(by_ratio.min(by_bound))
        .map_err(|_| FtlError::config("device", format!("{scheme}: logical space too large")))?;
    if logical_pages == 0 {
        return Err(FtlError::config(
            "device",
            format!("the device is too small for {scheme}: {good_blocks} good blocks, {reserve_blocks} reserved"),
        ));
    }
    Ok(logical_pages)
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
    /// of the closed blocks; each die is collected on its own, and when a die's
    /// victim is picked (fewer than rho_th free pages on the die) at most
    /// `floor((rho_th - 1) / pi)` of its blocks are free and one is open. Keeping
    /// that many blocks per die out makes the bound hold on every device, not only
    /// in the limit of many blocks: the logical space fits in the dies' quotas of
    /// `U(lambda)` valid pages per block beyond the reserve, which host writes
    /// respect (the collector's `dies` module). On the paper's chips (`rho_th =
    /// pi`) the reserve is one open block per die.
    pub fn new(config: &LazyRtgcConfig, io: &Io, good_blocks: u32) -> Result<Self, FtlError> {
        config.validate()?;
        let g = io.geometry();
        let pi = g.pages_per_block;
        let chip = task_bounds(io, "lazy-rtgc")?;
        let alpha = chip.alpha;
        let (sigma, lambda_max) = valid_bound(config.sigma, "lazy-rtgc.sigma", &chip, pi)?;
        // Eq. 13, and never below what one collection of a worst victim consumes.
        let rho_th = chip.rho_th.max(lambda_max + gc_tasks(lambda_max, alpha));
        let reserve_blocks = ((rho_th - 1) / pi + 1).saturating_mul(g.dies());
        let logical_pages = logical_space("lazy-rtgc", sigma, lambda_max, good_blocks, reserve_blocks, pi)?;
        let b = chip_params(io, true)?;
        // Eq. 14's U(R_T), and the other dies' collection steps on the channel.
        let service_bound =
            SimTime(b.t_rdpg_ns().max(b.t_er_ns() + b.t_wrpg_ns()) + channel_share_ns(io, gc_transfers(io, alpha)));
        Ok(LazyRtgcPlan {
            alpha,
            lambda_max,
            sigma,
            rho_th,
            trigger: Trigger::FreePagesBelow(rho_th),
            reserve_blocks,
            logical_pages,
            service_bound,
        })
    }
}
