//! Chip by chip: Eq. 20 over the work a placement puts on each chip.
//!
//! Eq. 18 charges a write job `ceil(w / S_chips) t_w` ("a write request consisting
//! of multiple pages can be distributed to different flash chips"), and Eq. 20 is
//! one EDF test over the device as if its chips were one fast resource. An FTL
//! that stripes each task over the `g` chips of its blocks (the storage test,
//! Eq. 5-16, counts `g` open blocks a stripe) puts `ceil(w / g)` pages of a job on
//! each of those chips, and each chip serves its own queue. Where `g < S_chips`
//! a set that passes Eq. 20 can overload the chips its narrow tasks share: ftlab's
//! Telomere FTL, simulated on a 4-chip device with EDF per chip, missed deadlines
//! in 5 of 12 random sets Eq. 20 admitted. [`ChipCheck`] adds, after the storage
//! test and Eq. 20, the same form on every chip:
//!
//! `t_e / min(T) + sum (ceil(r / g) t_r' / T^r + ceil(w / g) t_w' / T^w + t_e ceil(w / g) / (P T^w)) <= 1`
//!
//! over the tasks striped over the chip ([`stripes`]: one group a task under SiP,
//! one a partition of Algorithm 1 under SharP, each over its widest task's `g`
//! chips, the groups laid round robin from chip 0), where `t_r'` and `t_w'` add
//! [`ChipCheck::channel_wait_ns`] (the transfers of other chips on the page's
//! channel) and the third term is the chip's erases of expired blocks (`P` pages
//! a block). The pages of a task go to the chips of its stripe by logical
//! address, so a job's `w` consecutive pages put at most `ceil(w / g)` on a chip
//! and its freshest `r` pages lie at most `ceil(r / g)` to a chip.

use serde::Serialize;

use super::admit::Policy;
use super::device::Device;
use super::storage::{sharp_partition, sip_blocks};
use super::task::Task;

/// The chip-by-chip test and what it charges beyond the device's page times.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ChipCheck {
    /// Added to every page read and program: the transfers of the other chips on
    /// its channel that may go first, ns.
    pub channel_wait_ns: u64,
}

/// A group of tasks sharing blocks, placed on the chips.
#[derive(Debug, Clone, PartialEq)]
pub struct Stripe {
    /// Indices into the tasks given to [`stripes`].
    pub tasks: Vec<usize>,
    /// Blocks the storage test sizes it at (Eq. 10, or the partition's Eq. 13).
    pub blocks: u64,
    /// Its first chip; it covers `width` chips from there, wrapping.
    pub first_chip: u32,
    /// Its widest task's granularity.
    pub width: u32,
}

impl Stripe {
    /// Whether the stripe covers `chip` of `chips`.
    pub fn covers(&self, chip: u32, chips: u32) -> bool {
        (chip + chips - self.first_chip % chips) % chips < self.width
    }
}

/// A chip over its limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Overload {
    pub chip: u32,
    /// The chip's load (limit 1).
    pub load: f64,
}

/// The groups of the writers among `tasks` under `policy` (SiP: one a task;
/// SharP: Algorithm 1's partitions; other policies: none), laid round robin from
/// chip 0 over `d`'s chips.
pub fn stripes(tasks: &[&Task], policy: Policy, d: &Device) -> Vec<Stripe> {
    let writers: Vec<usize> = (0..tasks.len()).filter(|&i| tasks[i].write_pages > 0).collect();
    let groups: Vec<(Vec<usize>, u64)> = match policy {
        Policy::Sip => writers.iter().map(|&i| (vec![i], sip_blocks(tasks[i], d))).collect(),
        Policy::Sharp => {
            let refs: Vec<&Task> = writers.iter().map(|&i| tasks[i]).collect();
            sharp_partition(&refs, d)
                .into_iter()
                .map(|p| (p.tasks.iter().map(|&k| writers[k]).collect(), p.blocks))
                .collect()
        }
        Policy::WaoGc | Policy::MultiLog { .. } => Vec::new(),
    };
    let chips = d.parallel_units.max(1);
    let mut next = 0;
    groups
        .into_iter()
        .map(|(idx, blocks)| {
            let width = idx.iter().map(|&i| tasks[i].granularity).max().unwrap_or(1);
            let first_chip = next;
            next = (next + width) % chips;
            Stripe { tasks: idx, blocks, first_chip, width }
        })
        .collect()
}

/// The first chip of `d` whose load under `stripes` exceeds 1.
pub fn overloaded(tasks: &[&Task], stripes: &[Stripe], d: &Device, check: ChipCheck) -> Option<Overload> {
    let t_r = (d.t_r_ns + check.channel_wait_ns) as f64;
    let t_w = (d.t_w_ns + check.channel_wait_ns) as f64;
    let t_e = d.t_e_ns as f64;
    let p = f64::from(d.pages_per_block.max(1));
    let chips = d.parallel_units.max(1);
    for chip in 0..chips {
        let mut load = 0.0;
        let mut min_period = f64::INFINITY;
        for s in stripes.iter().filter(|s| s.covers(chip, chips)) {
            for t in s.tasks.iter().map(|&i| tasks[i]) {
                if t.write_pages > 0 {
                    let pages = t.write_pages.div_ceil(u64::from(s.width)) as f64;
                    let period = t.write_period_ns as f64;
                    load += pages * t_w / period + t_e * pages / (p * period);
                    min_period = min_period.min(period);
                }
                if t.read_pages > 0 {
                    let period = t.read_period_ns as f64;
                    load += t.read_pages.div_ceil(u64::from(s.width)) as f64 * t_r / period;
                    min_period = min_period.min(period);
                }
            }
        }
        if min_period.is_finite() {
            load += t_e / min_period;
            if load > 1.0 + super::admit::LOAD_TOLERANCE {
                return Some(Overload { chip, load });
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device() -> Device {
        Device {
            name: "test".into(),
            pages_per_block: 62,
            blocks: 1000,
            parallel_units: 4,
            page_size: 4096,
            t_r_ns: 100_000,
            t_w_ns: 300_000,
            t_e_ns: 1_500_000,
            lambda: 1.0,
            read_bandwidth_mb_s: 100.0,
            write_bandwidth_mb_s: 100.0,
            gc_job: Default::default(),
        }
    }

    fn task(name: &str, w: u64, t_w_ms: f64, g: u32) -> Task {
        Task::from_ms(name, 0, 0.0, w, t_w_ms, 10).with_granularity(g)
    }

    fn stripe(i: usize, first_chip: u32, width: u32) -> Stripe {
        Stripe { tasks: vec![i], blocks: 0, first_chip, width }
    }

    #[test]
    fn a_narrow_stripe_loads_its_chips_with_ceil_w_over_g_pages() {
        let (a, b) = (task("a", 16, 6.0, 2), task("b", 16, 6.0, 2));
        let tasks = [&a, &b];
        let none = ChipCheck::default();
        // 16 pages every 6 ms on 2 of 4 chips: 8 a chip, 8 x 0.3 / 6 = 0.40,
        // erases 1.5 x 8 / (62 x 6) = 0.032, blocking 1.5 / 6 = 0.25.
        assert_eq!(overloaded(&tasks, &[stripe(0, 0, 2)], &device(), none), None);
        // Both on chips 0-1: 0.25 + 2 x 0.432 > 1.
        let o = overloaded(&tasks, &[stripe(0, 0, 2), stripe(1, 0, 2)], &device(), none).unwrap();
        assert_eq!(o.chip, 0);
        assert!((o.load - (0.25 + 2.0 * (0.4 + 1.5 * 8.0 / (62.0 * 6.0)))).abs() < 1e-9, "{o:?}");
        // On chips 0-1 and 2-3 each chip holds one task.
        assert_eq!(overloaded(&tasks, &[stripe(0, 0, 2), stripe(1, 2, 2)], &device(), none), None);
        // A stripe that wraps past the last chip covers chips 3 and 0.
        let o = overloaded(&tasks, &[stripe(0, 3, 2), stripe(1, 0, 1)], &device(), none).unwrap();
        assert_eq!(o.chip, 0);
    }

    #[test]
    fn waiting_for_the_channel_counts_per_page() {
        let a = task("a", 12, 6.0, 2);
        // 6 pages of 0.3 ms: 0.30 + 0.024 + 0.25; with 0.5 ms of channel wait a
        // page, 6 x 0.8 / 6 = 0.8 and the chip is over 1.
        assert_eq!(overloaded(&[&a], &[stripe(0, 0, 2)], &device(), ChipCheck::default()), None);
        assert!(overloaded(&[&a], &[stripe(0, 0, 2)], &device(), ChipCheck { channel_wait_ns: 500_000 }).is_some());
    }

    #[test]
    fn stripes_are_laid_round_robin_by_width() {
        let (a, b, c) = (task("a", 4, 6.0, 4), task("b", 4, 6.0, 2), task("c", 4, 6.0, 2));
        let s = stripes(&[&a, &b, &c], Policy::Sip, &device());
        let placed: Vec<(Vec<usize>, u32, u32)> = s.iter().map(|s| (s.tasks.clone(), s.first_chip, s.width)).collect();
        assert_eq!(placed, [(vec![0], 0, 4), (vec![1], 0, 2), (vec![2], 2, 2)]);
        assert!(s[1].covers(1, 4) && !s[1].covers(2, 4));
        assert_eq!(s[0].blocks, sip_blocks(&a, &device()));
        assert!(stripes(&[&a], Policy::WaoGc, &device()).is_empty());
    }
}
