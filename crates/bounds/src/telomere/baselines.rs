//! The schemes 000 compares Telomere with (Sections 6.1.5-6.1.6): WAO-GC's largest
//! device utilization and MultiLog-Oracle's write amplification with bank
//! reservation.

use serde::{Deserialize, Serialize};

use super::device::Device;
use super::error::TelomereError;
use super::task::Task;
use crate::chip::ChipParams;
use crate::lazy_rtgc::lazy_rtgc;

/// WAO-GC's largest `lambda`: the space utilization at which a page write is blocked
/// by at most one partial collection step, derived as Lazy-RTGC's `U(sigma)`
/// (`(P - 1) alpha / ((alpha + 1) P)`, `alpha = floor(t_e / (t_r + t_w))`, Eq. 7 and
/// 11 of 001). For the 1 TB SSD of Section 6.1.1 it is 381 / 512 = 0.744, the
/// paper's 0.74.
pub fn waogc_max_lambda(d: &Device) -> Result<f64, TelomereError> {
    let chip = ChipParams::from_ns(d.t_r_ns, d.t_w_ns, d.t_r_ns, d.t_e_ns, d.pages_per_block)?;
    Ok(lazy_rtgc(&chip)?.sigma)
}

/// Pages a page-mapped FTL keeps valid for the tasks: `sum w_i (l_i^w + 1)` (left
/// side of Eq. 24).
pub fn valid_pages(tasks: &[&Task]) -> u64 {
    tasks
        .iter()
        .fold(0u64, |acc, t| acc.saturating_add(t.write_pages.saturating_mul(t.lifetime_periods.saturating_add(1))))
}

/// The two workloads of Table 2 of 000 (from Stoica and Ailamaki).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MultiLogWorkload {
    /// Uniformly random updates.
    Random,
    /// Skewed Zipf 80/20 updates.
    Zipf,
}

/// Table 2 of 000: `(alpha, WAF random, WAF Zipf 80/20)` of MultiLog-Oracle.
pub const MULTILOG_WAF: [(f64, f64, f64); 3] = [(0.10, 5.00, 2.00), (0.30, 2.20, 1.50), (0.75, 1.25, 1.13)];

/// MultiLog-Oracle's observed WAF (Table 2) for over-provisioning `alpha`: the row of
/// the largest tabulated `alpha` not above it (WAF falls as `alpha` grows, so this
/// errs on the safe side). Fails below 0.10, where the table has no value.
pub fn multilog_waf(alpha: f64, workload: MultiLogWorkload) -> Result<f64, TelomereError> {
    MULTILOG_WAF
        .iter()
        .rev()
        .find(|(a, _, _)| *a <= alpha + 1e-9)
        .map(|&(_, random, zipf)| match workload {
            MultiLogWorkload::Random => random,
            MultiLogWorkload::Zipf => zipf,
        })
        .ok_or(TelomereError::NoMultiLogWaf { over_provisioning: alpha })
}

/// Bank reservation's average load for MultiLog-Oracle: the fraction of the device's
/// chip time the tasks use on average, `sum_i (r_i / T_i^r) t_r + (w_i / T_i^w)
/// (WAF t_w + (WAF - 1) t_r + (WAF / P) t_e)` over `S_chips` chips. Each host page
/// costs WAF programs, WAF - 1 valid-page reads and WAF / P erases. At most 1 means
/// the total rate is sustained on average; unlike Eq. 20 it promises no deadline
/// (Section 6.1.6: "not real time"). The paper cites bank reservation without a
/// formula; this is ftlab's rendering of it.
pub fn bank_reservation_load(tasks: &[&Task], d: &Device, waf: f64) -> f64 {
    let per_write = waf * d.t_w_ns as f64
        + (waf - 1.0).max(0.0) * d.t_r_ns as f64
        + waf / f64::from(d.pages_per_block) * d.t_e_ns as f64;
    let demand: f64 = tasks
        .iter()
        .map(|t| {
            let reads =
                if t.read_pages > 0 { t.read_pages as f64 / t.read_period_ns as f64 * d.t_r_ns as f64 } else { 0.0 };
            let writes =
                if t.write_pages > 0 { t.write_pages as f64 / t.write_period_ns as f64 * per_write } else { 0.0 };
            reads + writes
        })
        .sum();
    demand / f64::from(d.parallel_units)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ftlab_nand::presets::preset;

    #[test]
    fn waf_lookup() {
        assert_eq!(multilog_waf(0.1, MultiLogWorkload::Random).unwrap(), 5.0);
        assert_eq!(multilog_waf(0.5, MultiLogWorkload::Zipf).unwrap(), 1.5);
        assert_eq!(multilog_waf(0.75, MultiLogWorkload::Random).unwrap(), 1.25);
        assert!(multilog_waf(0.05, MultiLogWorkload::Random).unwrap_err().to_string().contains("alpha >= 0.10"));
    }

    #[test]
    fn bank_reservation_counts_copies_and_erases() {
        let d = Device::from_preset(preset("telomere-1tb-ssd").unwrap());
        let t = Task::from_ms("t", 64, 1.0, 64, 1.0, 5);
        let load = bank_reservation_load(&[&t], &d, 2.0);
        // 64 reads of 0.2 ms + 64 x (2 x 0.7 + 0.2 + 2 / 128 x 2.7) ms, per ms, over 64 chips.
        let expected = (64.0 * 0.2 + 64.0 * (1.4 + 0.2 + 2.7 / 64.0)) / 64.0;
        assert!((load - expected).abs() < 1e-12, "{load}");
    }
}
