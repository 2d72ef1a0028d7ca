//! Design-time guarantees of the real-time FTLs: pure calculations, no simulation.
//!
//! From a chip's data-sheet times and pages per block ([`ChipParams`]) this crate
//! computes, for each scheme of Table I of `001_ca7ecce2bd5249b9.txt` (Lazy-RTGC) and
//! Table III of `002_7b0ca1838a2bd7a1.txt` (GFTL), the worst-case read and write
//! execution times `U(e_r)`, `U(e_w)`, the worst response `U(R_T)`, the shortest
//! request period `L(p)` where the paper defines one, and the largest space
//! utilization `U(sigma)` (logical over physical space), with the scheme's own
//! parameters by the papers' names. Times are the papers' array times, without
//! channel transfer (see [`ChipParams`]).
//!
//! * **Ideal** ([`ideal`]; 001 Section 3.3, 002 Section III): a hypothetical FTL in
//!   which every request costs one page operation; the erase, the longest atomic
//!   operation, is the only wait, so `U(R_T) = L(p) = t_er` and `U(sigma) = 1`.
//! * **FSR** ([`fsr`]; 001 Sections 1, 3.3): free-space replenishment keeps the logical
//!   space below the physical, which bounds a greedy victim's valid pages by
//!   `ceil(sigma pi)` (Theorem 4.3), but without the tasks' information it neither
//!   bounds sigma ("N/A") nor the response, which stays the unpartitioned worst case of
//!   Eq. 5: `max{t_rd, t_wr} + (pi - 1)(t_rd + t_wr) + t_er`.
//! * **GFTL** ([`gftl`]; 002 Sections IV-A to IV-D, 001 Table I): block mapping with
//!   the logical page in the OOB area, so a read may scan all pi OOB areas,
//!   `U(e_r) = pi t_rdoob + t_rdpg`; writes go to the block or a central write queue,
//!   `U(e_w) = t_wrpg`; one partial cleaning step of at most `t_er` follows every
//!   request, so `U(R_T) = L(p) = t_er + max{U(e_r), U(e_w)}`. A block is cleaned in
//!   kappa steps; the write queue holds `L = N (kappa + 1) / 2` pages (002 IV-D), and
//!   001 turns that into `U(sigma) = 1 - (kappa + 1) / (2 pi)`.
//! * **RFTL** ([`rftl`]; 001 Sections 1, 3.3): three physical blocks per logical block,
//!   so `U(sigma) = 1/3`; the map is partly in OOB, so reads and writes pay one OOB
//!   read, and a partial step follows writes only:
//!   `U(R_T) = max{U(e_r), t_er + t_wrpg + t_rdoob}`.
//! * **Lazy-RTGC** ([`lazy_rtgc`]; 001 Sections 3-4): page mapping in RAM, collection
//!   deferred to the last free block, each partial task copying `alpha` pages
//!   (Eq. 7) or erasing, one per write: `U(R_T) = t_er + t_wrpg`. Sigma is sized so a
//!   victim's reclaimed pages pay for the writes hosting its tasks (Eq. 8-13):
//!   `U(sigma) = (pi - 1) alpha / ((alpha + 1) pi)`.
//! * **On-demand Lazy-RTGC** ([`lazy_rtgc_ondemand`]; 001 Section 5): the same over
//!   DFTL; a CMT miss adds a translation-page read, `U(R_T) = t_er + t_wrpg + t_rdpg`
//!   (Eq. 14), and the last free data block must also cover a translation-block
//!   collection, `sigma_d = ((pi - 2) alpha - lambda_t) / ((alpha + 1) pi)` (Eq. 17).
//!
//! * **Telomere** ([`telomere`]; 000 Sections 3-6): storage admission by Single and
//!   Shared Task Placement (Eq. 5-16, Algorithm 1), throughput admission under EDF
//!   (Eq. 17-20), the WAO-GC and MultiLog-Oracle baselines (Eq. 24-26, Table 2), and a
//!   UUniFast task-set generator (Section 6.1.2); [`telomere::admit`] is the entry.
//!
//! Where a printed equation disagrees with the paper's own tables, the tables win and
//! the field's documentation says what was corrected: 001 Eq. 7 (alpha is a floor,
//! [`LazyRtgc::alpha`]), 001 Eq. 10 (integer valid-page bound, [`LazyRtgc::u_lambda`]),
//! 001's GFTL kappa (integer part, [`Gftl::kappa`]), 002's alpha (phase time,
//! [`GftlSteps::alpha`]) and 001 Section 5.2's `N_t`
//! ([`LazyRtgcOnDemand::device_utilization`]).
//!
//! ```
//! use ftlab_bounds::{all_schemes, ChipParams};
//! use ftlab_nand::presets::preset;
//!
//! // Lazy-RTGC's evaluation chip (001 Section 6.2(1)).
//! let chip = ChipParams::from_preset(preset("lazy-rtgc-eval-slc").unwrap()).unwrap();
//! let b = all_schemes(&chip).unwrap();
//! assert_eq!(b.lazy_rtgc.max_response_us, 2220.9); // t_wrpg + t_er
//! assert_eq!(b.gftl.max_response_us, 3885.0); // t_rd + pi t_rdoob + t_er
//! assert_eq!(b.lazy_rtgc.space_utilization, 0.875);
//! ```

mod baseline;
mod chip;
mod error;
mod gftl;
pub mod janus;
mod lazy_rtgc;
mod ondemand;
mod table;
pub mod telomere;

use serde::Serialize;

pub use baseline::{fsr, gc_execution_us, ideal, rftl, Fsr, Ideal, Rftl};
pub use chip::{ChipParams, MAX_PAGES_PER_BLOCK, MIN_PAGES_PER_BLOCK};
pub use error::BoundsError;
pub use gftl::{gftl, Gftl, GftlSteps};
pub use lazy_rtgc::{lazy_rtgc, LazyRtgc};
pub use ondemand::{lazy_rtgc_ondemand, LazyRtgcOnDemand, DEFAULT_SIGMA_T, MAPPING_ENTRY_BYTES};
pub use table::table;

/// The bounds of every scheme of Table I of 001 (plus the on-demand variant) for one
/// chip. Serializes as an object keyed `ideal`, `fsr`, `gftl`, `rftl`, `lazy_rtgc`,
/// `lazy_rtgc_ondemand`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Bounds {
    /// The hypothetical ideal FTL.
    pub ideal: Ideal,
    /// Free-space replenishment, with no sigma configured.
    pub fsr: Fsr,
    /// GFTL.
    pub gftl: Gftl,
    /// RFTL.
    pub rftl: Rftl,
    /// Lazy-RTGC with the page map in RAM.
    pub lazy_rtgc: LazyRtgc,
    /// Lazy-RTGC over DFTL with `sigma_t` = [`DEFAULT_SIGMA_T`].
    pub lazy_rtgc_ondemand: LazyRtgcOnDemand,
}

/// Every scheme's bounds for `chip`. Fails where a scheme has no bound: an erase
/// shorter than a page copy (Lazy-RTGC's alpha = 0), a page operation longer than an
/// erase (GFTL), or a block too small for on-demand Lazy-RTGC.
pub fn all_schemes(chip: &ChipParams) -> Result<Bounds, BoundsError> {
    Ok(Bounds {
        ideal: ideal(chip),
        fsr: fsr(chip, None)?,
        gftl: gftl(chip)?,
        rftl: rftl(chip),
        lazy_rtgc: lazy_rtgc(chip)?,
        lazy_rtgc_ondemand: lazy_rtgc_ondemand(chip, DEFAULT_SIGMA_T)?,
    })
}
