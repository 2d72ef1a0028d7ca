//! Lazy-RTGC with a page-level map in RAM (001_ca7ecce2bd5249b9.txt, Sections 3-4):
//! garbage collection starts only when the last free block is reached, and is split
//! into partial tasks of at most one erase, one after each write.

use serde::Serialize;

use crate::chip::{to_u32, us, ChipParams};
use crate::error::BoundsError;

/// Lazy-RTGC's guarantees and space configuration for one chip.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LazyRtgc {
    /// `U(sigma)`, the largest logical-to-physical ratio: equals [`sigma`](LazyRtgc::sigma)
    /// (Table II's `U(sigma)` column and Table III of 001).
    pub space_utilization: f64,
    /// `alpha = floor(t_er / (t_rd + t_wr))`: valid-page copies per partial task.
    ///
    /// **Corrected.** Eq. 7 of 001 prints a ceiling. Every printed value is a floor:
    /// Table II's `U(sigma)` = 0.875 for the Spansion chip needs alpha = 8 from
    /// 2000 / 225 = 8.9, Section 4.3 says the Samsung MLC ratio 1500 / 860 = 1.7 "is
    /// only 1", and Section 6.2(5) writes `ceil(2000 / (220 + 29)) = 8` for 8.03. The
    /// floor is also the physics: alpha copies must fit in the task's deadline t_er.
    pub alpha: u32,
    /// `sigma = (pi - 1) alpha / ((alpha + 1) pi)` (Eq. 11), as Table II prints it.
    pub sigma: f64,
    /// `U(lambda)`: the most valid pages a victim may hold so that the free pages its
    /// collection reclaims (`pi - lambda`) cover the writes that host its partial
    /// tasks: the largest integer `lambda` with `ceil(lambda / alpha) + 1 <= pi - lambda`
    /// (Eq. 8 and 9).
    ///
    /// **Corrected.** Eq. 10 prints `lambda <= ceil((pi - 1) alpha / (alpha + 1))`; the
    /// ceiling breaks Eq. 9 whenever the ratio is not an integer. For the Toshiba SLC
    /// chip it gives 57, whose 8 partial tasks need 8 free pages while the victim
    /// reclaims only 7. The bound here is the floor or, where the ceilings of Eq. 8 bite,
    /// lower.
    pub u_lambda: u32,
    /// `u_lambda / pi`: the largest sigma whose Theorem 4.3 bound `ceil(sigma pi)` keeps
    /// Eq. 9 true with whole pages and tasks. Eq. 11 (continuous) is up to one page per
    /// block higher (0.875 vs 0.886 on the Toshiba SLC chip).
    pub sigma_integral: f64,
    /// `N(V_G) = ceil(u_lambda / alpha) + 1` (Eq. 8): partial tasks per victim, the last
    /// one the erase.
    pub gc_tasks: u32,
    /// `U(k) = max{ceil(sigma pi / (alpha + 1)), ceil((1 - sigma) pi)}` (Eq. 12, with
    /// sigma of Eq. 11): free pages the write tasks consume during one collection.
    pub k: u32,
    /// `rho_th = U(k) + U(lambda)` (Eq. 13): free pages below which collection starts.
    /// For the chips of Table II it is exactly pi, "only one free block" (Section 6.1).
    pub rho_th: u32,
    /// `U(e_r) = t_rdpg`: no partial task follows a read.
    pub max_read_us: f64,
    /// `U(e_w) = t_wrpg`.
    pub max_write_us: f64,
    /// `U(R_T) = max{U(e_r), t_er + U(e_w)}` (Table I): one write plus one partial task.
    pub max_response_us: f64,
    /// Not defined by the paper: `None`.
    pub min_request_period_us: Option<f64>,
}

/// `alpha` of Eq. 7 (as a floor, see [`LazyRtgc::alpha`]); fails if it is 0.
pub(crate) fn alpha(chip: &ChipParams) -> Result<u64, BoundsError> {
    let copy = chip.t_rdpg_ns() + chip.t_wrpg_ns();
    match chip.t_er_ns() / copy {
        0 => Err(BoundsError::EraseShorterThanCopy { t_er_us: chip.t_er_us(), copy_us: us(copy) }),
        a => Ok(a),
    }
}

/// Partial tasks to collect a victim with `lambda` valid pages (Eq. 8).
pub(crate) fn gc_tasks(lambda: u64, alpha: u64) -> u64 {
    lambda.div_ceil(alpha) + 1
}

/// The largest `lambda` with `lambda + gc_tasks(lambda) + reserved <= pi`, if any
/// (Eq. 9; Eq. 16 with `reserved` = the translation collection's tasks).
pub(crate) fn max_valid_pages(pi: u64, alpha: u64, reserved: u64) -> Option<u64> {
    // Since ceil(l / a) >= l / a, a feasible l is at most (pi - 1 - reserved) a / (a + 1).
    let mut lambda = pi.checked_sub(1 + reserved)? * alpha / (alpha + 1);
    loop {
        if lambda + gc_tasks(lambda, alpha) + reserved <= pi {
            return Some(lambda);
        }
        lambda = lambda.checked_sub(1)?;
    }
}

/// Lazy-RTGC's guarantees for `chip`. Fails if an erase cannot hold one page copy.
pub fn lazy_rtgc(chip: &ChipParams) -> Result<LazyRtgc, BoundsError> {
    let a = alpha(chip)?;
    let pi = chip.pi();
    let sigma = ((pi - 1) * a) as f64 / ((a + 1) * pi) as f64;
    // alpha >= 1 and pi >= 2, so lambda = 0 (one task, the erase) always fits.
    let u_lambda = max_valid_pages(pi, a, 0).unwrap_or(0);
    // Eq. 12 in integers: sigma pi = (pi - 1) a / (a + 1), (1 - sigma) pi = (pi + a) / (a + 1).
    let k = ((pi - 1) * a).div_ceil((a + 1) * (a + 1)).max((pi + a).div_ceil(a + 1));
    let write = chip.t_wrpg_ns();
    Ok(LazyRtgc {
        space_utilization: sigma,
        alpha: to_u32(a),
        sigma,
        u_lambda: to_u32(u_lambda),
        sigma_integral: u_lambda as f64 / pi as f64,
        gc_tasks: to_u32(gc_tasks(u_lambda, a)),
        k: to_u32(k),
        rho_th: to_u32(k + u_lambda),
        max_read_us: chip.t_rdpg_us(),
        max_write_us: us(write),
        max_response_us: us(chip.t_rdpg_ns().max(chip.t_er_ns() + write)),
        min_request_period_us: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_zero_is_refused() {
        let chip = ChipParams::new(60.0, 1600.0, 60.0, 1500.0, 128).unwrap();
        let e = lazy_rtgc(&chip).unwrap_err();
        assert_eq!(e, BoundsError::EraseShorterThanCopy { t_er_us: 1500.0, copy_us: 1660.0 });
        assert!(e.to_string().contains("alpha = floor(t_er / (t_rdpg + t_wrpg)) = 0"), "{e}");
    }

    #[test]
    fn valid_page_bound_keeps_eq9_for_every_small_chip() {
        for pi in 2..=300u64 {
            for a in 1..=12u64 {
                let l = max_valid_pages(pi, a, 0).unwrap();
                assert!(l + gc_tasks(l, a) <= pi, "pi {pi} alpha {a}");
                assert!(l + 1 + gc_tasks(l + 1, a) > pi, "pi {pi} alpha {a}: {l} is not the largest");
            }
        }
        assert_eq!(max_valid_pages(3, 1, 2), Some(0));
        assert_eq!(max_valid_pages(3, 1, 3), None);
    }

    #[test]
    fn eq10_as_printed_would_deadlock_on_the_toshiba_slc_chip() {
        // pi = 64, alpha = 9: Eq. 10 prints ceil(63 * 9 / 10) = ceil(56.7) = 57.
        let printed = (63u64 * 9).div_ceil(10);
        assert_eq!(printed, 57);
        assert!(printed + gc_tasks(printed, 9) > 64, "57 valid pages: 8 tasks, 7 reclaimed");
        let chip = ChipParams::new(25.0, 300.0, 25.0, 3000.0, 64).unwrap();
        let l = lazy_rtgc(&chip).unwrap();
        assert_eq!((l.alpha, l.u_lambda, l.gc_tasks, l.k, l.rho_th), (9, 56, 8, 8, 64));
        assert_eq!(l.sigma_integral, 0.875);
    }
}
