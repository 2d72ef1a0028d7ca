//! The cost model of Janus-FTL (004_15edfc19ad848aee.txt Section 4): the write
//! cost of a page-mapping area (PMA) of utilization `u_d` holding `N_F` fused
//! logical blocks beside `N_O` over-provisioned blocks, and the number of fused
//! blocks that minimizes it for a workload's PMA hit-rate curve.
//!
//! Costs are model quantities in nanoseconds (`f64`), not simulation times.

/// The chip's costs the model uses (004 Section 4.1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JanusCosts {
    /// `N_P`: pages per block.
    pub pages_per_block: u32,
    /// `C_E`: block erase cost.
    pub erase_ns: f64,
    /// `C_CP`: page copy cost.
    pub copy_ns: f64,
    /// `C_PROG`: page write cost.
    pub program_ns: f64,
}

impl JanusCosts {
    /// The example of 004's Figure 4: `N_P = 64`, `C_E = 2 ms`, `C_CP = 225 us`,
    /// `C_PROG = 200 us`.
    pub const FIGURE_4: JanusCosts =
        JanusCosts { pages_per_block: 64, erase_ns: 2_000_000.0, copy_ns: 225_000.0, program_ns: 200_000.0 };

    fn np(&self) -> f64 {
        f64::from(self.pages_per_block)
    }

    /// Eq. 1: `C_GC = u N_P C_CP + C_E`, the cost of collecting a victim of
    /// utilization `u`.
    pub fn gc(&self, u: f64) -> f64 {
        u * self.np() * self.copy_ns + self.erase_ns
    }

    /// Eq. 2: `C_PW = C_GC / ((1 - u) N_P) + C_PROG`, the average cost of a page
    /// write in the PMA.
    pub fn page_write(&self, u: f64) -> f64 {
        self.gc(u) / ((1.0 - u) * self.np()) + self.program_ns
    }

    /// Eq. 3: `C_Defusion = N_P C_CP + C_E + u N_P C_PW`.
    pub fn defusion(&self, u: f64) -> f64 {
        self.np() * self.copy_ns + self.erase_ns + u * self.np() * self.page_write(u)
    }

    /// Eq. 4: `C_AvgW = (1 - r) C_Defusion + C_PW` at hit rate `r`.
    pub fn average_write(&self, u: f64, r: f64) -> f64 {
        (1.0 - r) * self.defusion(u) + self.page_write(u)
    }
}

/// PMA utilization `u_d = N_F / (N_O + N_F)` (004 Section 4.2).
pub fn pma_utilization(over_provisioned: u32, fused: u32) -> f64 {
    let total = f64::from(over_provisioned) + f64::from(fused);
    if total == 0.0 {
        0.0
    } else {
        f64::from(fused) / total
    }
}

/// Eq. 5, `u_d = (u - 1) / ln u`: the PMA utilization at which greedy victims
/// have utilization `u`.
pub fn pma_utilization_of_victim(u: f64) -> f64 {
    if u <= 0.0 {
        0.0
    } else if u >= 1.0 {
        1.0
    } else {
        (u - 1.0) / u.ln()
    }
}

/// Eq. 5 solved for `u` (bisection; `(u - 1) / ln u` grows from 0 to 1 on (0, 1)).
pub fn victim_utilization(u_d: f64) -> f64 {
    if u_d <= 0.0 {
        return 0.0;
    }
    if u_d >= 1.0 {
        return 1.0;
    }
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if pma_utilization_of_victim(mid) < u_d {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Eq. 4 at `fused` fused blocks: `u_d` from `N_O` and `N_F`, `u` by Eq. 5, and
/// the hit rate `hit_rate(N_F)`.
pub fn write_cost_at(costs: &JanusCosts, over_provisioned: u32, fused: u32, hit_rate: f64) -> f64 {
    write_cost_with(costs, over_provisioned, fused, hit_rate, true)
}

/// Eq. 4 with or without the last term of Eq. 3 (`u N_P C_PW`, the cost of
/// making an empty block again after a defusion): without it a miss costs
/// `N_P C_CP + C_E`, as when the defused block's pages leave a PMA block empty.
pub fn write_cost_with(costs: &JanusCosts, over_provisioned: u32, fused: u32, hit_rate: f64, refill: bool) -> f64 {
    let u = victim_utilization(pma_utilization(over_provisioned, fused));
    if refill {
        costs.average_write(u, hit_rate)
    } else {
        (1.0 - hit_rate) * (costs.np() * costs.copy_ns + costs.erase_ns) + costs.page_write(u)
    }
}

/// The number of fused blocks in `0..=max_fused` minimizing Eq. 4 for the hit-rate
/// curve `hit_rate` (fused blocks to hit rate), with its cost; the smallest on ties.
pub fn optimal_fused(
    costs: &JanusCosts,
    over_provisioned: u32,
    max_fused: u32,
    hit_rate: impl Fn(u32) -> f64,
) -> (u32, f64) {
    optimal_fused_with(costs, over_provisioned, max_fused, hit_rate, true)
}

/// [`optimal_fused`] with or without Eq. 3's last term ([`write_cost_with`]).
pub fn optimal_fused_with(
    costs: &JanusCosts,
    over_provisioned: u32,
    max_fused: u32,
    hit_rate: impl Fn(u32) -> f64,
    refill: bool,
) -> (u32, f64) {
    let mut best = (0, f64::INFINITY);
    for n in 0..=max_fused {
        let c = write_cost_with(costs, over_provisioned, n, hit_rate(n), refill);
        if c < best.1 {
            best = (n, c);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equations_1_to_3_at_a_known_point() {
        let c = JanusCosts::FIGURE_4;
        // u = 0.5: 32 copies and an erase.
        assert_eq!(c.gc(0.5), 32.0 * 225_000.0 + 2_000_000.0);
        // Shared by the 32 writes the victim's free half serves.
        assert!((c.page_write(0.5) - (9_200_000.0 / 32.0 + 200_000.0)).abs() < 1e-6);
        assert!((c.defusion(0.5) - (64.0 * 225_000.0 + 2_000_000.0 + 32.0 * 487_500.0)).abs() < 1e-6);
        assert_eq!(c.average_write(0.5, 1.0), c.page_write(0.5));
    }

    #[test]
    fn equation_5_round_trips() {
        // u = 0.5 gives u_d = 0.5 / ln 2.
        assert!((pma_utilization_of_victim(0.5) - 0.5 / 2f64.ln()).abs() < 1e-12);
        for u_d in [0.1, 0.5, 0.75, 0.9, 0.99] {
            let u = victim_utilization(u_d);
            assert!(u < u_d, "a greedy victim is emptier than the PMA");
            assert!((pma_utilization_of_victim(u) - u_d).abs() < 1e-9);
        }
    }

    /// Figure 4: 1024 blocks, 20 over-provisioned; a strongly local workload's hit
    /// rate soars with the first fused blocks and then flattens, so the cost has an
    /// interior minimum; a uniformly random one's optimum is page mapping.
    #[test]
    fn figure_4_has_an_interior_optimum_and_random_goes_to_page_mapping() {
        let c = JanusCosts::FIGURE_4;
        let (n_o, n_d) = (20, 1004);
        let local = |n: u32| 1.0 - (-f64::from(n) / 40.0).exp() * 0.95 - 0.05 * (1.0 - f64::from(n) / f64::from(n_d));
        let (best, cost) = optimal_fused(&c, n_o, n_d, local);
        assert!(best > 20 && best < 400, "optimum {best}");
        assert!(cost < write_cost_at(&c, n_o, 0, local(0)));
        assert!(cost < write_cost_at(&c, n_o, n_d, local(n_d)));
        // Without Eq. 3's last term a miss costs a block copy and an erase only.
        let no_refill = write_cost_with(&c, n_o, 60, 0.8, false);
        assert!(
            (no_refill - (0.2 * (64.0 * 225_000.0 + 2_000_000.0) + c.page_write(victim_utilization(0.75)))).abs()
                < 1e-6
        );
        assert!(no_refill < write_cost_at(&c, n_o, 60, 0.8));
        let random = |n: u32| f64::from(n) / f64::from(n_d);
        let (best, _) = optimal_fused(&c, n_o, n_d, random);
        assert_eq!(best, n_d);
    }
}
