//! GFTL (002_7b0ca1838a2bd7a1.txt; summarised in Table I of 001): block mapping with
//! the logical page number in the OOB area, a central write queue, and garbage
//! collection of one block split into steps no longer than one erase.

use serde::Serialize;

use crate::chip::{to_u32, us, ChipParams};
use crate::error::BoundsError;

/// GFTL's own partial block cleaning steps (Section IV-C of 002).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GftlSteps {
    /// `alpha`: erase-long steps of the block-read phase,
    /// `ceil(((2 pi - 1) t_rdoob + pi t_rdpg) / t_er)`.
    ///
    /// **Corrected.** 002 prints `alpha = ceil((2 pi - 1) T_rdpg / T_er)`, but the
    /// sentence before it gives the phase's worst-case time as
    /// `(2 pi - 1) T_rdoob + pi T_rdpg`, and a step must not exceed `T_er`, so the
    /// phase time is divided. Table V's Delta column agrees better with the phase time
    /// (see [`Gftl::extra_block_fraction`]).
    pub alpha: u32,
    /// `beta = ceil(pi T_wrpg / T_er)`: steps of the block-write phase.
    pub beta: u32,
    /// `kappa = alpha + beta + 1` (the `+ 1` is the erase step): steps per block.
    pub kappa: u32,
}

/// GFTL's guarantees for one chip.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Gftl {
    /// `U(sigma) = 1 - (kappa + 1) / (2 pi)` with 001's [`kappa`](Gftl::kappa)
    /// (Table I and III of 001).
    pub space_utilization: f64,
    /// 001's kappa (Section 3.3): `floor(((pi - 1) t_rdpg + pi t_rdoob + pi t_wrpg) /
    /// t_er) + 1`, the steps of one block cleaning as 001 counts them.
    ///
    /// **Read as a floor.** 001 prints `kappa = [(pi - 1)t_rdpg + pi t_rdoob +
    /// pi t_wrpg]/t_er + 1`; taken literally (no rounding) Table III would read 92.2%
    /// for the Spansion chip, not 92.9%. With the bracket as the integer part, all five
    /// rows of Table III and Section 6.2(5)'s "about 92.18%" come out. (This equals
    /// `ceil(x / t_er)` unless `x` is a multiple of `t_er`; a physical step count
    /// including the erase step would be `ceil(x / t_er) + 1`, one more.)
    pub kappa: u32,
    /// GFTL's own step counts (Section IV-C of 002), used for the write queue.
    pub steps: GftlSteps,
    /// Extra blocks of the write queue per data block, `(kappa + 1) / (2 pi)` with
    /// [`steps.kappa`](GftlSteps::kappa) (Section IV-D of 002: `L / pi` blocks over
    /// `N`): the Delta column of Table V of 002 as a fraction. Table V's Delta is a
    /// measured value that differs between traces at the same pi (14% vs 13% at
    /// pi = 32), so no chip-only formula gives all of it: this one gives 18.75%,
    /// 14.06% and 11.72% for pi = 16, 32, 64 against 16/16, 14/13 and 14/12.
    pub extra_block_fraction: f64,
    /// `L = ceil(N (kappa + 1) / 2)` pages (Section IV-D of 002, with `steps.kappa`),
    /// when the device's block count `N` is known.
    pub write_queue_length: Option<u64>,
    /// `ceil(L / pi)`: physical blocks the write queue adds, when `N` is known.
    pub extra_blocks: Option<u64>,
    /// `U(e_r) = pi t_rdoob + t_rdpg`: a read may scan every OOB area of its block.
    pub max_read_us: f64,
    /// `U(e_w) = t_wrpg`: a write goes to the block or the write queue.
    pub max_write_us: f64,
    /// `U(R_T) = t_er + max{U(e_r), U(e_w)}` (Table I of 001): a partial step follows
    /// reads as well as writes.
    pub max_response_us: f64,
    /// `L(p_r) = L(p_w) = T_er + max{U(e_w), U(e_r)}` (Table III of 002).
    pub min_request_period_us: Option<f64>,
    /// `U(lambda) = pi` (Table I of 001): GFTL cannot bound a victim's valid pages.
    pub u_lambda: u32,
}

/// GFTL's guarantees for `chip`. Fails if a page operation is longer than an erase.
pub fn gftl(chip: &ChipParams) -> Result<Gftl, BoundsError> {
    let t_er = chip.t_er_ns();
    for (op, t) in [("t_rdpg", chip.t_rdpg_ns()), ("t_wrpg", chip.t_wrpg_ns()), ("t_rdoob", chip.t_rdoob_ns())] {
        if t > t_er {
            return Err(BoundsError::EraseNotLongest { op, op_us: us(t), t_er_us: chip.t_er_us() });
        }
    }
    let pi = chip.pi();
    let kappa_001 = ((pi - 1) * chip.t_rdpg_ns() + pi * chip.t_rdoob_ns() + pi * chip.t_wrpg_ns()) / t_er + 1;
    let alpha = ((2 * pi - 1) * chip.t_rdoob_ns() + pi * chip.t_rdpg_ns()).div_ceil(t_er);
    let beta = (pi * chip.t_wrpg_ns()).div_ceil(t_er);
    let kappa = alpha + beta + 1;
    let write_queue_length = chip.blocks().map(|n| (n * (kappa + 1)).div_ceil(2));
    let read = pi * chip.t_rdoob_ns() + chip.t_rdpg_ns();
    let write = chip.t_wrpg_ns();
    let period = us(t_er + read.max(write));
    Ok(Gftl {
        space_utilization: 1.0 - (kappa_001 + 1) as f64 / (2 * pi) as f64,
        kappa: to_u32(kappa_001),
        steps: GftlSteps { alpha: to_u32(alpha), beta: to_u32(beta), kappa: to_u32(kappa) },
        extra_block_fraction: (kappa + 1) as f64 / (2 * pi) as f64,
        write_queue_length,
        extra_blocks: write_queue_length.map(|l| l.div_ceil(pi)),
        max_read_us: us(read),
        max_write_us: us(write),
        max_response_us: period,
        min_request_period_us: Some(period),
        u_lambda: chip.pages_per_block(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_operation_longer_than_an_erase_is_refused() {
        let chip = ChipParams::new(25.0, 2500.0, 25.0, 2000.0, 64).unwrap();
        let e = gftl(&chip).unwrap_err();
        assert!(e.to_string().starts_with("t_wrpg = 2500 us is longer than t_er = 2000 us"), "{e}");
    }

    #[test]
    fn kappa_is_the_floor_of_the_printed_ratio_plus_one() {
        // x = 63*25 + 64*25 + 64*200 = 15975 us; 15975/2000 = 7.99 -> 8.
        let chip = ChipParams::new(25.0, 200.0, 25.0, 2000.0, 64).unwrap();
        assert_eq!(gftl(&chip).unwrap().kappa, 8);
        // x an exact multiple of t_er (t_er = 15975 / 8 us): floor(8) + 1 = 9.
        let chip = ChipParams::new(25.0, 200.0, 25.0, 1996.875, 64).unwrap();
        assert_eq!(gftl(&chip).unwrap().kappa, 9);
    }

    #[test]
    fn write_queue_needs_the_block_count() {
        let chip = ChipParams::new(25.0, 300.0, 25.0, 2000.0, 32).unwrap();
        let g = gftl(&chip).unwrap();
        assert_eq!((g.write_queue_length, g.extra_blocks), (None, None));
        let g = gftl(&chip.with_blocks(2048).unwrap()).unwrap();
        // kappa = 2 + 5 + 1 = 8: L = 2048 * 9 / 2 = 9216 pages = 288 blocks of 32.
        assert_eq!(g.steps, GftlSteps { alpha: 2, beta: 5, kappa: 8 });
        assert_eq!(g.write_queue_length, Some(9216));
        assert_eq!(g.extra_blocks, Some(288));
        let odd = gftl(&chip.with_blocks(3).unwrap()).unwrap();
        assert_eq!(odd.write_queue_length, Some(14), "ceil(27 / 2)");
        assert_eq!(odd.extra_blocks, Some(1));
    }
}
