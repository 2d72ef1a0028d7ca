//! Throughput admission (Section 5 of `000_ffe2fafb22bcad8e.txt`): each task's read,
//! write and garbage-collection jobs (Eq. 17-19, or WAO-GC's Eq. 25-26) and the EDF
//! test with one non-preemptive erase (Eq. 20).

use serde::Serialize;

use super::device::{Device, GcJobReading};
use super::task::Task;

/// One periodic job: `C` every `T` (deadline = period).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Job {
    /// Worst-case execution `C` in ns.
    pub capacity_ns: f64,
    /// Period `T` in ns.
    pub period_ns: f64,
}

/// `C_i^r = ceil(r_i / g) t_r` every `T_i^r` (Eq. 17): a request striped `g` wide
/// reads `g` pages at once.
pub fn read_job(t: &Task, d: &Device) -> Option<Job> {
    (t.read_pages > 0).then(|| Job {
        capacity_ns: (t.read_pages.div_ceil(u64::from(t.granularity)) * d.t_r_ns) as f64,
        period_ns: t.read_period_ns as f64,
    })
}

/// `C_i^w = ceil(w_i / S_chips) t_w` every `T_i^w` (Eq. 18): buffered pages go to
/// any chip.
pub fn write_job(t: &Task, d: &Device) -> Option<Job> {
    (t.write_pages > 0).then(|| Job {
        capacity_ns: (t.write_pages.div_ceil(u64::from(d.parallel_units)) * d.t_w_ns) as f64,
        period_ns: t.write_period_ns as f64,
    })
}

/// The task's garbage-collection job (Eq. 19): Telomere's collection is only the
/// erase of an expired stripe of `g` blocks, `C_i^g = ceil(g / S_chips) t_e`, every
/// `T_i^g = T_i^w / ceil(w_i / (g P))` if `w_i > g P`, else `T_i^w floor(g P / w_i)`.
///
/// **Corrected.** Eq. 19 prints `C_i^g = ceil(t_e / S_chips)`, a ceiling of a time
/// over a chip count (with t_e = 2.7 ms and 64 chips it is 1 ms or 1 ns depending on
/// the unit); the stripe of `g` blocks is erased on `min(g, S_chips)` chips at once,
/// which is `ceil(g / S_chips) t_e` and just `t_e` for `g = 1`, the case Eq. 19's `P`
/// (a stripe of one block) is written for. `T_i^g` is generalized from `P` to `g P`
/// pages per stripe, as Eq. 7 does.
///
/// With [`GcJobReading::Printed`] ([`Device::gc_job`]) the equation is taken as
/// printed instead: `C_i^g = ceil(t_e / S_chips)` with times in milliseconds, the
/// unit of the paper's worked example (Section 4.2: "the period is in
/// milliseconds"), so 2.7 ms over 64 chips is 1 ms, every `T_i^w floor(P / w_i)`
/// (or `T_i^w / ceil(w_i / P)`).
pub fn gc_job(t: &Task, d: &Device) -> Option<Job> {
    if t.write_pages == 0 {
        return None;
    }
    if d.gc_job == GcJobReading::Printed {
        let p = u64::from(d.pages_per_block);
        let tw = t.write_period_ns as f64;
        let period_ns =
            if t.write_pages > p { tw / t.write_pages.div_ceil(p) as f64 } else { tw * (p / t.write_pages) as f64 };
        // The ceiling taken in milliseconds, the unit of the paper's times.
        let ms = d.t_e_ns.div_ceil(u64::from(d.parallel_units)).div_ceil(1_000_000);
        return Some(Job { capacity_ns: (ms * 1_000_000) as f64, period_ns });
    }
    let stripe = u64::from(t.granularity) * u64::from(d.pages_per_block);
    let tw = t.write_period_ns as f64;
    let period_ns = if t.write_pages > stripe {
        tw / t.write_pages.div_ceil(stripe) as f64
    } else {
        tw * (stripe / t.write_pages) as f64
    };
    let erases = u64::from(t.granularity).div_ceil(u64::from(d.parallel_units));
    Some(Job { capacity_ns: (erases * d.t_e_ns) as f64, period_ns })
}

/// WAO-GC's write job (Eq. 25 of 000): every write round may be followed by one
/// partial collection step, `C_i^w = ceil(w_i / S_chips) (t_w + max(t_e, t_r + t_w))`.
/// It has no separate collection job (Eq. 26, `C_i^g = 0`).
pub fn waogc_write_job(t: &Task, d: &Device) -> Option<Job> {
    (t.write_pages > 0).then(|| {
        let step = d.t_e_ns.max(d.t_r_ns + d.t_w_ns);
        Job {
            capacity_ns: (t.write_pages.div_ceil(u64::from(d.parallel_units)) * (d.t_w_ns + step)) as f64,
            period_ns: t.write_period_ns as f64,
        }
    })
}

/// Telomere's jobs of a task: read (Eq. 17), write (Eq. 18), collection (Eq. 19).
pub fn telomere_jobs(t: &Task, d: &Device) -> impl Iterator<Item = Job> {
    [read_job(t, d), write_job(t, d), gc_job(t, d)].into_iter().flatten()
}

/// WAO-GC's jobs of a task: read (Eq. 17) and write (Eq. 25).
pub fn waogc_jobs(t: &Task, d: &Device) -> impl Iterator<Item = Job> {
    [read_job(t, d), waogc_write_job(t, d)].into_iter().flatten()
}

/// The left side of Eq. 20: `t_e / min(T) + sum C / T` over all jobs, the blocking
/// of one non-preemptive erase plus the jobs' utilization (Baker's SRP test under
/// EDF). The jobs are schedulable if it is at most 1. 0 for no job.
pub fn edf_load(jobs: &[Job], t_e_ns: u64) -> f64 {
    let min_period = jobs.iter().map(|j| j.period_ns).fold(f64::INFINITY, f64::min);
    if !min_period.is_finite() {
        return 0.0;
    }
    t_e_ns as f64 / min_period + jobs.iter().map(|j| j.capacity_ns / j.period_ns).sum::<f64>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ftlab_nand::presets::preset;

    #[test]
    fn capacities_of_eq_17_to_19() {
        let d = Device::from_preset(preset("telomere-1tb-ssd").unwrap());
        let t = Task::from_ms("t", 100, 50.0, 130, 20.0, 5).with_granularity(64);
        let r = read_job(&t, &d).unwrap();
        assert_eq!((r.capacity_ns, r.period_ns), (2.0 * 200_000.0, 50e6));
        let w = write_job(&t, &d).unwrap();
        assert_eq!(w.capacity_ns, 3.0 * 700_000.0, "ceil(130 / 64) = 3 rounds of t_w");
        let g = gc_job(&t, &d).unwrap();
        // 130 pages < 64 * 128: one stripe every floor(8192 / 130) = 63 periods.
        assert_eq!((g.capacity_ns, g.period_ns), (2_700_000.0, 63.0 * 20e6));
        let big = Task::from_ms("b", 0, 0.0, 300, 20.0, 5);
        assert_eq!(gc_job(&big, &d).unwrap().period_ns, 20e6 / 3.0, "w > P: ceil(300 / 128) erases per period");
        let wao = waogc_write_job(&t, &d).unwrap();
        assert_eq!(wao.capacity_ns, 3.0 * (700_000.0 + 2_700_000.0));
        let jobs: Vec<Job> = telomere_jobs(&t, &d).collect();
        let load = edf_load(&jobs, d.t_e_ns);
        let expected = 2.7 / 20.0 + 0.4 / 50.0 + 2.1 / 20.0 + 2.7 / (63.0 * 20.0);
        assert!((load - expected).abs() < 1e-12, "{load} vs {expected}");
        assert_eq!(edf_load(&[], d.t_e_ns), 0.0);
        // As printed: one block (128 pages) per collection, ceil(2.7 ms / 64) = 1 ms.
        let printed = d.clone().with_gc_job(GcJobReading::Printed);
        let g = gc_job(&t, &printed).unwrap();
        assert_eq!(
            (g.capacity_ns, g.period_ns),
            (1e6, 10e6),
            "ceil(2.7 ms / 64); w = 130 > P: ceil(130 / 128) = 2 a period"
        );
        let small = Task::from_ms("s", 0, 0.0, 10, 20.0, 5).with_granularity(64);
        assert_eq!(gc_job(&small, &printed).unwrap().period_ns, 12.0 * 20e6, "floor(128 / 10) periods");
    }
}
