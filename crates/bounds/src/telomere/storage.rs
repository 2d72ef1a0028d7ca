//! Telomere's storage admission (Section 4 of `000_ffe2fafb22bcad8e.txt`): the blocks
//! a task needs alone (SiP, Eq. 5-11) and a partition of tasks sharing blocks needs
//! (SharP, Eq. 12-16), and SharP's partitioning (Algorithm 1).

use serde::Serialize;

use super::device::Device;
use super::task::Task;

/// `ceil(x)` that takes a value within rounding error of an integer as that integer
/// (the fluid ratios of Eq. 13 are computed in `f64`).
fn ceil_tol(x: f64) -> u64 {
    let r = x.round();
    if (x - r).abs() <= 1e-9 * x.abs().max(1.0) {
        r as u64
    } else {
        x.ceil() as u64
    }
}

/// `g P`: pages in one stripe of `g` blocks.
fn stripe_pages(t: &Task, d: &Device) -> u64 {
    u64::from(t.granularity).saturating_mul(u64::from(d.pages_per_block))
}

/// `w_i % (g P)`: the pages of a period that share partly-filled blocks (Eq. 8, 15).
fn partial_pages(t: &Task, d: &Device) -> u64 {
    t.write_pages % stripe_pages(t, d)
}

/// `K(tau_i) = (w_i % (g P)) (l_i^w + 1)` (Eq. 8; Eq. 5 when `w_i < g P`): the most
/// valid pages the task keeps in partly-shared blocks.
pub fn k(t: &Task, d: &Device) -> u64 {
    partial_pages(t, d).saturating_mul(t.lifetime_periods.saturating_add(1))
}

/// `K'(tau_i) = g floor(w_i / (g P)) (l_i^w + 1)`: the blocks a task fills whole each
/// period, kept for `l + 1` periods (the "trivial case" of Section 4.1).
///
/// **Corrected.** Eq. 9 prints `ceil(w_i / (g P))`. With the ceiling a task with
/// `w_i < g P` would pay `g (l + 1)` extra blocks and Eq. 10 would not reduce to
/// Eq. 7 as the text says it does; the remainder `w_i % (g P)` is already in `K`.
pub fn k_prime(t: &Task, d: &Device) -> u64 {
    let full = t.write_pages / stripe_pages(t, d);
    u64::from(t.granularity).saturating_mul(full).saturating_mul(t.lifetime_periods.saturating_add(1))
}

/// `H_g(tau_i)`, blocks task `tau_i` needs under SiP (Eq. 10, which is Eq. 7 when
/// `w_i < g P` and Eq. 6 when also `g = 1`):
/// `g (ceil((K + w_i ceil(t_e / T_i^w)) / (g P)) + 1) + K'`. 0 for a task that
/// writes nothing.
pub fn sip_blocks(t: &Task, d: &Device) -> u64 {
    if t.write_pages == 0 {
        return 0;
    }
    let erase_periods = d.t_e_ns.div_ceil(t.write_period_ns.max(1));
    let pages = k(t, d).saturating_add(t.write_pages.saturating_mul(erase_periods));
    let g = u64::from(t.granularity);
    g.saturating_mul(pages.div_ceil(stripe_pages(t, d)) + 1).saturating_add(k_prime(t, d))
}

/// `H_g({tau_i .. tau_k})`, blocks a partition of tasks sharing blocks needs (SharP,
/// Eq. 12-16): `max_j J(tau_j, set) + sum_j K'(tau_j)`, with
/// `J(tau_j, set) = g (ceil((K(tau_j) + w_j t_e / T_j^w) / (g P Q(tau_j, set))) + 1)`
/// and `Q(tau_j, set) = ((w_j % gP) / T_j^w) / sum_k ((w_k % gP) / T_k^w)` (Eq. 12, 15).
/// A partition of one writing task is [`sip_blocks`] (footnote 2 of 000). 0 when
/// empty.
///
/// **Corrected (Eq. 13 and 16)**: the erase term is the pages the task writes
/// *during* an erase at its rate, `w_j t_e / T_j^w`, not `w_j ceil(t_e / T_j^w)`.
/// Divided by `Q`, the printed term charges the whole partition's writes over a full
/// period of `tau_j` (14 ms for tau_1 of Section 4.2's example) instead of over one
/// erase (2.7 ms), and the worked example of Section 4.2 does not come out: the
/// printed form gives `H([tau_0, tau_1]) = 12` and `H([tau_1, tau_2]) = 13`, so
/// opt1 = 21 and opt2 = 20, where the paper prints 11, 12, 20 and 19. With the erase
/// term at the task's rate every value of the example is reproduced (opt1 = 20,
/// opt2 = 19, opt3 = 21); it is the same fluid view of the partition that `Q`
/// already takes (all pages of a partition go to its blocks at rate
/// `sum_k w_k / T_k`, so `J` reduces to `ceil(((l_j + 1) T_j + t_e) R / (g P)) + 1`).
/// Eq. 16 also adds `K'(tau_i)` inside the maximum: every task's whole-block part
/// needs its own blocks, so here they are summed.
pub fn sharp_blocks(tasks: &[&Task], d: &Device) -> u64 {
    let writers: Vec<&Task> = tasks.iter().copied().filter(|t| t.write_pages > 0).collect();
    match writers.as_slice() {
        [] => return 0,
        [one] => return sip_blocks(one, d),
        _ => {}
    }
    let rate = |t: &Task| partial_pages(t, d) as f64 / t.write_period_ns as f64;
    let total_rate: f64 = writers.iter().map(|t| rate(t)).sum();
    let shared = writers
        .iter()
        .filter(|t| partial_pages(t, d) > 0)
        .map(|t| {
            let q = rate(t) / total_rate;
            let erase = t.write_pages as f64 * d.t_e_ns as f64 / t.write_period_ns as f64;
            let x = (k(t, d) as f64 + erase) / (stripe_pages(t, d) as f64 * q);
            u64::from(t.granularity).saturating_mul(ceil_tol(x) + 1)
        })
        .max()
        .unwrap_or(0);
    writers.iter().fold(shared, |acc, t| acc.saturating_add(k_prime(t, d)))
}

/// One SharP partition: indices into the task list given to [`sharp_partition`], and
/// its blocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Partition {
    /// Task indices, in Algorithm 1's order (increasing `T^w (l^w + 1)`).
    pub tasks: Vec<usize>,
    /// `H_g` of the partition.
    pub blocks: u64,
}

/// SharP's partitioning (Algorithm 1 of 000) of `tasks`; every task is in exactly
/// one partition. Sorting is stable: tasks whose data live equally long keep their
/// given order.
///
/// **Corrected.** Line 27 prints `opt1 = H(tasks[idx : tlen - 1])`, which leaves the
/// last task out of "the current partition with the last task" and would always
/// merge it; it is `H(tasks[idx : tlen])`. Empty partitions (`tasks[idx : i]` with
/// `idx = i`, which lines 16 and 32 can add) are dropped.
pub fn sharp_partition(tasks: &[&Task], d: &Device) -> Vec<Partition> {
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_by_key(|&i| tasks[i].data_alive_ns());
    let h = |idx: &[usize]| {
        let group: Vec<&Task> = idx.iter().map(|&i| tasks[i]).collect();
        sharp_blocks(&group, d)
    };
    let mut parts: Vec<Vec<usize>> = Vec::new();
    let n = order.len();
    let (mut idx, mut i) = (0, 0);
    while i + 1 < n {
        let (t1, t2) = (order[i], order[i + 1]);
        let opt1 = h(&order[idx..=i]) + h(&[t2]);
        let opt2 = h(&order[idx..i]) + h(&[t1, t2]);
        let opt3 = h(&order[idx..i]) + h(&[t1]) + h(&[t2]);
        let min = opt1.min(opt2).min(opt3);
        if opt1 == min {
            i += 1;
        } else {
            parts.push(order[idx..i].to_vec());
            if opt2 == min {
                idx = i;
                i += 1;
            } else {
                parts.push(vec![t1]);
                idx = i + 1;
                i += 2;
            }
        }
    }
    if idx < n {
        let opt1 = h(&order[idx..]);
        let opt2 = h(&order[idx..n - 1]) + h(&order[n - 1..]);
        if opt1 < opt2 {
            parts.push(order[idx..].to_vec());
        } else {
            parts.push(order[idx..n - 1].to_vec());
            parts.push(order[n - 1..].to_vec());
        }
    }
    parts.into_iter().filter(|p| !p.is_empty()).map(|p| Partition { blocks: h(&p), tasks: p }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ftlab_nand::presets::preset;

    /// Section 4.2's device: eight-page blocks, t_e = 2.7 ms, g = 1.
    fn example_device() -> Device {
        let mut d = Device::from_preset(preset("telomere-1tb-ssd").unwrap());
        d.pages_per_block = 8;
        d.t_e_ns = 2_700_000;
        d
    }

    #[test]
    fn sip_reduces_to_eq6_and_eq7() {
        let d = example_device();
        // tau_0 = (w 4, T 9, l 9): K = 40, ceil(2.7 / 9) = 1: ceil(44 / 8) + 1 = 7.
        let t0 = Task::from_ms("t0", 0, 0.0, 4, 9.0, 9);
        assert_eq!((k(&t0, &d), k_prime(&t0, &d), sip_blocks(&t0, &d)), (40, 0, 7));
        // g = 2: 2 (ceil(44 / 16) + 1) = 8.
        assert_eq!(sip_blocks(&t0.clone().with_granularity(2), &d), 8);
        // w >= gP: 20 pages = 2 whole blocks + 4; K = 40, K' = 2 * 10 = 20.
        let big = Task::from_ms("big", 0, 0.0, 20, 9.0, 9);
        assert_eq!((k(&big, &d), k_prime(&big, &d)), (40, 20));
        assert_eq!(sip_blocks(&big, &d), ((40u64 + 20).div_ceil(8) + 1) + 20);
    }

    #[test]
    fn a_partition_of_one_is_sip() {
        let d = example_device();
        let t = Task::from_ms("t", 0, 0.0, 3, 14.0, 7);
        let r = Task::from_ms("r", 4, 10.0, 0, 0.0, 0);
        assert_eq!(sharp_blocks(&[&t], &d), sip_blocks(&t, &d));
        assert_eq!(sharp_blocks(&[&t, &r], &d), sip_blocks(&t, &d));
        assert_eq!(sharp_blocks(&[], &d), 0);
    }

    #[test]
    fn partitioning_covers_every_task_once() {
        let d = example_device();
        let ts: Vec<Task> =
            (0..9).map(|i| Task::from_ms(&format!("t{i}"), 0, 0.0, 1 + i % 7, 5.0 + i as f64, 3 * i)).collect();
        let refs: Vec<&Task> = ts.iter().collect();
        for n in 0..=refs.len() {
            let parts = sharp_partition(&refs[..n], &d);
            let mut seen: Vec<usize> = parts.iter().flat_map(|p| p.tasks.clone()).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>());
            let total: u64 = parts.iter().map(|p| p.blocks).sum();
            let sip: u64 = refs[..n].iter().map(|t| sip_blocks(t, &d)).sum();
            assert!(total <= sip, "SharP never needs more than SiP here: {total} > {sip}");
        }
    }
}
