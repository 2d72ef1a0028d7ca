//! Per-chip throughput admission: Eq. 20 with the placement the FTL really uses.
//!
//! Eq. 18 of 000 charges a write job `ceil(w / S_chips) t_w`, "a write request
//! consisting of multiple pages can be distributed to different flash chips", and
//! Eq. 20 is one EDF test over the device as if its chips were one fast resource.
//! Telomere's FTL stripes a task over the `g` chips of its group (the storage
//! admission, Eq. 5-16, counts `g` open blocks per stripe), so a job puts
//! `ceil(w / g)` pages on each of those chips, and the chips are scheduled one by
//! one (earliest deadline first per chip). Where `g < S_chips` a set that passes
//! Eq. 20 can overload the chips its narrow tasks share: in simulation 5 of 12
//! random sets on a 4-chip device missed deadlines. So after Eq. 20 the FTL checks
//! every chip with Eq. 20's form over the work placed on it:
//!
//! `t_e / min(T) + sum (ceil(r / g) t_r' / T^r + ceil(w / g) t_w' / T^w + t_e ceil(w / g) / (P T^w)) <= 1`
//!
//! over the tasks striped over the chip, where `t_r'` and `t_w'` add to a page's
//! time the transfers of the other chips on its channel that may go first, and
//! the last term is the erases of the chip's expired blocks (`P` data pages a
//! block). A task that fails it is refused, the latest admitted first.

use ftlab_bounds::telomere::{Device, Task};

/// A group as placed: its tasks (indices into the task list), the blocks
/// reserved for it, its first chip and its width.
#[derive(Debug, Clone)]
pub(super) struct Placed {
    pub tasks: Vec<usize>,
    pub blocks: u64,
    pub first_die: u32,
    pub width: u32,
}

/// The first chip whose load exceeds 1: `(chip, load, the latest admitted task
/// placed on it)`. `channel_wait_ns`: the transfers of the other chips of a
/// channel, which a page may wait for.
pub(super) fn overloaded(
    tasks: &[Task],
    placed: &[Placed],
    device: &Device,
    dies: u32,
    channel_wait_ns: u64,
) -> Option<(u32, f64, usize)> {
    let t_r = (device.t_r_ns + channel_wait_ns) as f64;
    let t_w = (device.t_w_ns + channel_wait_ns) as f64;
    let t_e = device.t_e_ns as f64;
    let p = f64::from(device.pages_per_block.max(1));
    for d in 0..dies {
        let mut load = 0.0;
        let mut min_period = f64::INFINITY;
        let mut latest = None;
        for g in placed.iter().filter(|g| (d + dies - g.first_die % dies) % dies < g.width) {
            for &i in &g.tasks {
                let t = &tasks[i];
                if t.write_pages > 0 {
                    let pages = t.write_pages.div_ceil(u64::from(g.width)) as f64;
                    let period = t.write_period_ns as f64;
                    load += pages * t_w / period + t_e * pages / (p * period);
                    min_period = min_period.min(period);
                }
                if t.read_pages > 0 {
                    let period = t.read_period_ns as f64;
                    load += t.read_pages.div_ceil(u64::from(g.width)) as f64 * t_r / period;
                    min_period = min_period.min(period);
                }
                latest = latest.max(Some(i));
            }
        }
        if let Some(i) = latest {
            load += t_e / min_period;
            if load > 1.0 {
                return Some((d, load, i));
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
        }
    }

    fn task(name: &str, w: u64, t_w_ms: u64, g: u32) -> Task {
        Task::from_ms(name, 0, 0.0, w, t_w_ms as f64, 10).with_granularity(g)
    }

    #[test]
    fn a_narrow_stripe_loads_its_chips_with_ceil_w_over_g_pages() {
        // 16 pages every 6 ms on 2 of 4 chips: 8 pages a chip, 8 x 0.3 / 6 =
        // 0.40, erases 1.5 x 8 / (62 x 6) = 0.032, blocking 1.5 / 6 = 0.25.
        let tasks = vec![task("a", 16, 6, 2), task("b", 16, 6, 2)];
        let one = [Placed { tasks: vec![0], blocks: 0, first_die: 0, width: 2 }];
        assert_eq!(overloaded(&tasks, &one, &device(), 4, 0), None);
        // Both on chips 0-1: 0.25 + 2 x 0.432 > 1, and `b` is the one refused.
        let both = [
            Placed { tasks: vec![0], blocks: 0, first_die: 0, width: 2 },
            Placed { tasks: vec![1], blocks: 0, first_die: 0, width: 2 },
        ];
        let (die, load, victim) = overloaded(&tasks, &both, &device(), 4, 0).unwrap();
        assert_eq!((die, victim), (0, 1));
        assert!((load - (0.25 + 2.0 * (0.4 + 1.5 * 8.0 / (62.0 * 6.0)))).abs() < 1e-9, "{load}");
        // On chips 0-1 and 2-3 each chip holds one task.
        let apart = [
            Placed { tasks: vec![0], blocks: 0, first_die: 0, width: 2 },
            Placed { tasks: vec![1], blocks: 0, first_die: 2, width: 2 },
        ];
        assert_eq!(overloaded(&tasks, &apart, &device(), 4, 0), None);
        // A stripe that wraps past the last chip covers chips 3 and 0.
        let wrap = [
            Placed { tasks: vec![0], blocks: 0, first_die: 3, width: 2 },
            Placed { tasks: vec![1], blocks: 0, first_die: 0, width: 1 },
        ];
        assert_eq!(overloaded(&tasks, &wrap, &device(), 4, 0).map(|o| o.0), Some(0));
    }

    #[test]
    fn waiting_for_the_channel_counts_per_page() {
        let tasks = vec![task("a", 12, 6, 2)];
        let one = [Placed { tasks: vec![0], blocks: 0, first_die: 0, width: 2 }];
        // 6 pages of 0.3 ms: 0.30 + 0.024 + 0.25; with 0.5 ms of channel wait a
        // page, 6 x 0.8 / 6 = 0.8 and the chip is over 1.
        assert_eq!(overloaded(&tasks, &one, &device(), 4, 0), None);
        assert!(overloaded(&tasks, &one, &device(), 4, 500_000).is_some());
    }
}
