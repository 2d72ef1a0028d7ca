//! The comparison rows of Table I of 001 that need no scheme-specific step counts:
//! the ideal case, FSR and RFTL, and the unpartitioned garbage collection they are
//! measured against (Eq. 5-6 of 001).

use serde::Serialize;

use crate::chip::{us, ChipParams};
use crate::error::BoundsError;

/// Eq. 6 of 001: one whole (unpartitioned) garbage collection of a victim block with
/// `lambda` valid pages, `e_G = lambda * (t_rd + t_wr) + t_er`, in microseconds.
///
/// Section 2.2's example (t_rd = 29, t_wr = 220, t_er = 2000 us): 4988 us for
/// lambda = 12 and 2498 us for lambda = 2.
pub fn gc_execution_us(chip: &ChipParams, lambda: u32) -> f64 {
    us(gc_execution_ns(chip, u64::from(lambda)))
}

pub(crate) fn gc_execution_ns(chip: &ChipParams, lambda: u64) -> u64 {
    lambda * (chip.t_rdpg_ns() + chip.t_wrpg_ns()) + chip.t_er_ns()
}

/// Eq. 5 of 001: the worst response of a request that waits for one whole garbage
/// collection of a victim with `pi - 1` valid pages,
/// `max{t_rd, t_wr} + (pi - 1)(t_rd + t_wr) + t_er`.
pub(crate) fn unpartitioned_worst_ns(chip: &ChipParams) -> u64 {
    chip.t_rdpg_ns().max(chip.t_wrpg_ns()) + gc_execution_ns(chip, chip.pi() - 1)
}

/// The hypothetical ideal FTL (pure page-level mapping, Table I of 001; Table III of
/// 002): every request runs at the speed of one page operation and the only thing a
/// request can wait for is one erase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ideal {
    /// `U(sigma)` = 1 (Table III of 001). Table I of 001 prints 0.99: the one swap
    /// block a pure page-level FTL keeps (Section 6.1); Table III and Section 6.2(5)
    /// ("close to 100%") round it to 1.
    pub space_utilization: f64,
    /// `U(e_r) = t_rdpg` (001, page-level mapping in RAM). 002's Table III ideal is
    /// block-mapped and adds one OOB read: `t_rdpg + t_rdoob`.
    pub max_read_us: f64,
    /// `U(e_w) = t_wrpg`.
    pub max_write_us: f64,
    /// `U(R_T) = t_er` (Table I of 001): the erase is the longest atomic operation.
    pub max_response_us: f64,
    /// `L(p) = t_er` (Table III of 002 and its axiom: the erase time is the lower bound
    /// on the inter-arrival time of requests).
    pub min_request_period_us: Option<f64>,
    /// `U(lambda) = pi` (Table I of 001).
    pub u_lambda: u32,
}

/// The ideal case for `chip`.
pub fn ideal(chip: &ChipParams) -> Ideal {
    Ideal {
        space_utilization: 1.0,
        max_read_us: chip.t_rdpg_us(),
        max_write_us: chip.t_wrpg_us(),
        max_response_us: chip.t_er_us(),
        min_request_period_us: Some(chip.t_er_us()),
        u_lambda: chip.pages_per_block(),
    }
}

/// FSR, free-space replenishment (Chang et al. 2004, as summarised in Table I and
/// Section 3.3 of 001): a logical space smaller than the physical bounds the valid
/// pages of a greedy victim (`U(lambda) = ceil(sigma * pi)`, Theorem 4.3), but without
/// the real-time tasks' information FSR bounds neither `sigma` nor the response.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fsr {
    /// `U(sigma)`: "N/A" in Tables I and III of 001, always `None`.
    pub space_utilization: Option<f64>,
    /// The logical-to-physical ratio the designer configured, if any (Section 6.2(5)
    /// of 001 runs FSR at 0.75).
    pub sigma: Option<f64>,
    /// `U(lambda) = ceil(sigma * pi)` (Theorem 4.3 of 001), when `sigma` is configured.
    pub lambda_max: Option<u32>,
    /// `U(e_r) = t_rdpg`.
    pub max_read_us: f64,
    /// `U(e_w) = t_wrpg`.
    pub max_write_us: f64,
    /// `U(R_T) = U(e_T) + U(e_G)`, the unpartitioned worst case of Eq. 5 of 001:
    /// `max{t_rd, t_wr} + (pi - 1)(t_rd + t_wr) + t_er`.
    pub max_response_us: f64,
    /// Not defined for FSR: `None`.
    pub min_request_period_us: Option<f64>,
}

/// FSR for `chip`, optionally with a configured logical-to-physical ratio `sigma`
/// in (0, 1].
pub fn fsr(chip: &ChipParams, sigma: Option<f64>) -> Result<Fsr, BoundsError> {
    let lambda_max = match sigma {
        None => None,
        Some(s) if s > 0.0 && s <= 1.0 => Some(ceil_ratio(s, chip.pages_per_block())),
        Some(s) => {
            return Err(BoundsError::InvalidSigma {
                name: "sigma",
                value: s,
                range: "(0, 1]",
                hint: "give FSR's logical-to-physical space ratio, e.g. 0.75, or none",
            })
        }
    };
    Ok(Fsr {
        space_utilization: None,
        sigma,
        lambda_max,
        max_read_us: chip.t_rdpg_us(),
        max_write_us: chip.t_wrpg_us(),
        max_response_us: us(unpartitioned_worst_ns(chip)),
        min_request_period_us: None,
    })
}

/// `ceil(sigma * pi)` as pages, guarded against a product like 0.5 * 64 landing a hair
/// above the integer it denotes.
pub(crate) fn ceil_ratio(sigma: f64, pi: u32) -> u32 {
    let x = sigma * f64::from(pi);
    let nearest = x.round();
    if (x - nearest).abs() < 1e-9 {
        nearest as u32
    } else {
        x.ceil() as u32
    }
}

/// RFTL (Qin et al. 2012, as summarised in Table I of 001): hybrid mapping with three
/// physical blocks (primary, buffer, replacement) per logical block; the mapping is
/// partly in the OOB area, so a read or write pays one OOB read, and a partial
/// garbage-collection step (at most one erase) follows a write only.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rftl {
    /// `U(sigma) = 1/3` (Table I and III of 001): three physical blocks per logical one.
    pub space_utilization: f64,
    /// `U(e_r) = t_rdpg + t_rdoob`.
    pub max_read_us: f64,
    /// `U(e_w) = t_wrpg + t_rdoob`.
    pub max_write_us: f64,
    /// `U(R_T) = max{U(e_r), t_er + U(e_w)}`.
    pub max_response_us: f64,
    /// Not defined by the papers: `None`.
    pub min_request_period_us: Option<f64>,
    /// `U(lambda) = pi` (Table I of 001).
    pub u_lambda: u32,
}

/// RFTL for `chip`.
pub fn rftl(chip: &ChipParams) -> Rftl {
    let read = chip.t_rdpg_ns() + chip.t_rdoob_ns();
    let write = chip.t_wrpg_ns() + chip.t_rdoob_ns();
    Rftl {
        space_utilization: 1.0 / 3.0,
        max_read_us: us(read),
        max_write_us: us(write),
        max_response_us: us(read.max(chip.t_er_ns() + write)),
        min_request_period_us: None,
        u_lambda: chip.pages_per_block(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq6_reproduces_the_section_2_2_example() {
        // Figure 1 of 001: t_wr = 220, t_rd = 29, t_er = 2000 us.
        let chip = ChipParams::new(29.0, 220.0, 29.0, 2000.0, 64).unwrap();
        assert_eq!(gc_execution_us(&chip, 12), 4988.0);
        assert_eq!(gc_execution_us(&chip, 2), 2498.0);
        // The responses of T_w2: one write plus the collection.
        assert_eq!(chip.t_wrpg_us() + gc_execution_us(&chip, 12), 5208.0);
        assert_eq!(chip.t_wrpg_us() + gc_execution_us(&chip, 2), 2718.0);
    }

    #[test]
    fn fsr_lambda_follows_theorem_4_3() {
        let chip = ChipParams::new(25.0, 200.0, 25.0, 2000.0, 64).unwrap();
        assert_eq!(fsr(&chip, Some(0.75)).unwrap().lambda_max, Some(48));
        assert_eq!(fsr(&chip, Some(0.76)).unwrap().lambda_max, Some(49));
        assert_eq!(fsr(&chip, None).unwrap().lambda_max, None);
        let e = fsr(&chip, Some(1.5)).unwrap_err();
        assert!(e.to_string().starts_with("sigma = 1.5 is outside (0, 1]"), "{e}");
        assert!(fsr(&chip, Some(f64::NAN)).is_err());
    }
}
