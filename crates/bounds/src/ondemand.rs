//! Lazy-RTGC over on-demand page-level mapping (DFTL), Section 5 of
//! 001_ca7ecce2bd5249b9.txt: the map lives in translation blocks with a RAM cache
//! (CMT); data-block collection (DG), translation-block collection (TG) and
//! translation write-back (TW) all run as partial tasks of at most one erase.

use serde::Serialize;

use crate::baseline::ceil_ratio;
use crate::chip::{to_u32, us, ChipParams};
use crate::error::BoundsError;
use crate::lazy_rtgc::{alpha, gc_tasks, max_valid_pages};

/// The translation blocks' logical-to-physical ratio 001 evaluates with
/// (Section 6.2(5): "we configure the sigma_t = 0.5 first").
pub const DEFAULT_SIGMA_T: f64 = 0.5;

/// Bytes of one page-level mapping entry in a translation page (Section 5.2 of 001).
pub const MAPPING_ENTRY_BYTES: u32 = 4;

/// On-demand Lazy-RTGC's guarantees and space configuration for one chip.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LazyRtgcOnDemand {
    /// The paper's space utilization: [`sigma_d`](LazyRtgcOnDemand::sigma_d) ("about
    /// 80%" for the evaluation chip, Section 6.2(5)).
    pub space_utilization: f64,
    /// `alpha` of Eq. 7 (a floor, see [`crate::LazyRtgc::alpha`]).
    pub alpha: u32,
    /// `sigma_t`: valid translation pages over the physical translation space.
    pub sigma_t: f64,
    /// `lambda_t = ceil(sigma_t pi)` (Eq. 17 with Theorem 4.3): most valid pages in a
    /// victim translation block.
    pub lambda_t: u32,
    /// `sigma_d <= ((pi - 2) alpha - lambda_t) / ((alpha + 1) pi)` (Eq. 17): logical
    /// space over the data blocks.
    pub sigma_d: f64,
    /// Most valid pages in a victim data block: the largest integer `lambda_d` with
    /// `lambda_d + k_d + k_t <= pi` (Eq. 16 with whole tasks; Eq. 17 is its continuous
    /// form, up to one page higher).
    pub lambda_d: u32,
    /// `k_d = N(V_Gd) = ceil(lambda_d / alpha) + 1` (Eq. 16): data pages written while
    /// a data block is collected.
    pub k_d: u32,
    /// `k_t = N(V_Gt) = ceil(lambda_t / alpha) + 1` (Eq. 16): data pages written while
    /// a translation block is collected.
    pub k_t: u32,
    /// `pi - lambda_d - k_d - k_t` (Section 5.2): write-back tasks the last free data
    /// block leaves room for.
    pub writeback_tasks: u32,
    /// Translation pages updated per cycle by TW and TG, `alpha * writeback_tasks +
    /// lambda_t` (the whole-task form of Eq. 18; with sigma_d at Eq. 17's bound, Eq. 18
    /// itself gives exactly lambda_t).
    pub gamma_min: u32,
    /// Eq. 15: `U(R_avg) = 2 (t_wr + t_rd)`, a DFTL request that collects nothing but
    /// misses the CMT and evicts a dirty entry (data write, translation read, and the
    /// translation read-modify-write of the eviction).
    pub max_request_without_gc_us: f64,
    /// Logical space over all physical space, translation blocks included, when the
    /// page size is known: `sigma_d / (1 + sigma_d / (E sigma_t))` with `E` =
    /// page size / [`MAPPING_ENTRY_BYTES`] entries per translation page.
    ///
    /// **Corrected.** Section 5.2 prints `N_t = sigma_t x Lambda_t`, which would make
    /// the physical translation space smaller than the table it holds; with sigma_t
    /// defined as valid over physical translation space, `N_t = Lambda_t / sigma_t`.
    pub device_utilization: Option<f64>,
    /// `U(e_r) = 2 t_rdpg`: a CMT miss reads the translation page first. Write-back of
    /// dirty entries is left to TW tasks, so a read never programs.
    pub max_read_us: f64,
    /// `U(e_w + e_r) = t_wrpg + t_rdpg`: a write that misses the CMT (Section 5.2).
    pub max_write_us: f64,
    /// `U(R_T) = max{U(e_r), t_er + U(e_w + e_r)}` (Eq. 14).
    pub max_response_us: f64,
    /// Not defined by the paper: `None`.
    pub min_request_period_us: Option<f64>,
}

/// On-demand Lazy-RTGC for `chip` with translation-space ratio `sigma_t` in (0, 1)
/// (001 uses [`DEFAULT_SIGMA_T`]).
pub fn lazy_rtgc_ondemand(chip: &ChipParams, sigma_t: f64) -> Result<LazyRtgcOnDemand, BoundsError> {
    let a = alpha(chip)?;
    let pi = chip.pi();
    let bad_sigma = || BoundsError::InvalidSigma {
        name: "sigma_t",
        value: sigma_t,
        range: "(0, (pi - 1) / pi]",
        hint: "a victim translation block must keep an invalid page; 001 uses 0.5",
    };
    if !(sigma_t > 0.0 && sigma_t < 1.0) {
        return Err(bad_sigma());
    }
    let lambda_t = u64::from(ceil_ratio(sigma_t, chip.pages_per_block()));
    if lambda_t >= pi {
        return Err(bad_sigma());
    }
    let no_space = BoundsError::NoDataSpace {
        pages_per_block: chip.pages_per_block(),
        alpha: to_u32(a),
        lambda_t: to_u32(lambda_t),
    };
    let k_t = gc_tasks(lambda_t, a);
    let lambda_d = match max_valid_pages(pi, a, k_t) {
        Some(l) if l > 0 => l,
        _ => return Err(no_space),
    };
    let eq17_numerator = (pi - 2) * a;
    let sigma_d = eq17_numerator.saturating_sub(lambda_t) as f64 / ((a + 1) * pi) as f64;
    let k_d = gc_tasks(lambda_d, a);
    let writeback_tasks = pi - lambda_d - k_d - k_t;
    let device_utilization = chip
        .page_size()
        .map(|b| b / MAPPING_ENTRY_BYTES)
        .filter(|&entries| entries > 0)
        .map(|entries| sigma_d / (1.0 + sigma_d / (f64::from(entries) * sigma_t)));
    let (rd, wr) = (chip.t_rdpg_ns(), chip.t_wrpg_ns());
    Ok(LazyRtgcOnDemand {
        space_utilization: sigma_d,
        alpha: to_u32(a),
        sigma_t,
        lambda_t: to_u32(lambda_t),
        sigma_d,
        lambda_d: to_u32(lambda_d),
        k_d: to_u32(k_d),
        k_t: to_u32(k_t),
        writeback_tasks: to_u32(writeback_tasks),
        gamma_min: to_u32(a * writeback_tasks + lambda_t),
        max_request_without_gc_us: us(2 * (wr + rd)),
        device_utilization,
        max_read_us: us(2 * rd),
        max_write_us: us(wr + rd),
        max_response_us: us((2 * rd).max(chip.t_er_ns() + wr + rd)),
        min_request_period_us: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spansion() -> ChipParams {
        ChipParams::new(25.0, 200.0, 25.0, 2000.0, 64).unwrap()
    }

    #[test]
    fn sigma_t_must_leave_an_invalid_translation_page() {
        for bad in [0.0, -0.1, 1.0, 0.999, f64::NAN] {
            let e = lazy_rtgc_ondemand(&spansion(), bad).unwrap_err();
            assert!(e.to_string().starts_with("sigma_t = "), "{bad}: {e}");
        }
        assert!(lazy_rtgc_ondemand(&spansion(), 63.0 / 64.0).is_ok());
    }

    #[test]
    fn a_tiny_block_has_no_room_for_data() {
        // pi = 3, alpha = 8, lambda_t = 2: k_t = 2, so lambda_d = 0 is all that fits.
        let chip = spansion().with_pages_per_block(3).unwrap();
        let e = lazy_rtgc_ondemand(&chip, 0.5).unwrap_err();
        assert_eq!(e, BoundsError::NoDataSpace { pages_per_block: 3, alpha: 8, lambda_t: 2 });
        assert!(e.to_string().contains("lower sigma_t"), "{e}");
    }

    #[test]
    fn the_page_budget_of_the_last_free_block_adds_up() {
        let o = lazy_rtgc_ondemand(&spansion(), 0.25).unwrap();
        assert_eq!(o.lambda_t, 16);
        assert_eq!(o.k_t, 3);
        assert_eq!(o.lambda_d + o.k_d + o.k_t + o.writeback_tasks, 64);
        assert!(o.lambda_d as f64 <= o.sigma_d * 64.0);
        assert_eq!(o.device_utilization, None, "no page size given");
    }
}
