//! Heat of each allocator stream for health binning (000 Section 6.2, after
//! Pletka & Tomic, SYSTOR '16): the hotter a stream, the healthier the free
//! block it opens.

use super::{Plan, TaskConfig};

/// Heat of the default pool: it mixes data of every lifetime.
pub(super) const POOL_HEAT: f64 = 0.5;

/// Heat in [0, 1] of each allocator stream (index 0 the pool, `k + 1` group `k`).
///
/// A block of group `k` stays out of the free list for about its *residence*
/// `R_k`: the time to fill it (`P g / sum_i (w_i / T^w_i)` over the group's
/// tasks, its pages striped over `g` dies) plus the longest time its data lives
/// (`(l^w + 1) T^w`, Eq. 3-4). A block in that group's rotation is erased about
/// once per `R_k`, so the shorter `R_k`, the hotter the group. Groups are ranked
/// by `R_k` (equal residences share a rank); the shortest gets heat 1, the
/// longest 0, the others evenly spaced by rank; a lone group gets 1. The pool
/// gets [`POOL_HEAT`].
pub(super) fn stream_heat(plan: &Plan, tasks: &[TaskConfig], pages_per_block: u32) -> Vec<f64> {
    let n = plan.groups.len();
    let mut rate = vec![0.0f64; n];
    let mut life = vec![0.0f64; n];
    for (i, g) in plan.group_of_task.iter().enumerate() {
        let (Some(k), Some(&(period, periods)), Some(t)) = (g, plan.periods.get(i), tasks.get(i)) else { continue };
        if period == 0 {
            continue;
        }
        let k = *k as usize;
        rate[k] += t.write_pages as f64 / period as f64;
        life[k] = life[k].max((periods as f64 + 1.0) * period as f64);
    }
    let residence: Vec<f64> = (0..n)
        .map(|k| {
            let fill = f64::from(pages_per_block) * f64::from(plan.groups[k].width.max(1));
            life[k] + if rate[k] > 0.0 { fill / rate[k] } else { f64::INFINITY }
        })
        .collect();
    let mut distinct = residence.clone();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    let top = distinct.len().saturating_sub(1);
    let mut heat = vec![POOL_HEAT];
    heat.extend(residence.iter().map(|r| {
        if top == 0 {
            return 1.0;
        }
        let rank = distinct.partition_point(|d| d < r);
        1.0 - rank as f64 / top as f64
    }));
    heat
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use ftlab_nand::{BlockId, DieId, Geometry, Payload, SimTime};

    use super::super::{Placement, Telomere, TelomereConfig};
    use super::*;
    use crate::alloc::FreeOrder;
    use crate::{Ftl, Hint, Lpn, Purpose};

    /// 2 channels x 2 dies, 32 blocks of 16 pages per die.
    fn geometry() -> Geometry {
        Geometry {
            channels: 2,
            ways_per_channel: 1,
            dies_per_way: 2,
            planes_per_die: 1,
            blocks_per_plane: 32,
            pages_per_block: 16,
            page_size: 4096,
            oob_size: 128,
        }
    }

    fn task(name: &str, write_pages: u64, period_ms: f64, lifetime_ms: f64, granularity: u32) -> TaskConfig {
        TaskConfig {
            name: name.into(),
            write_period_ms: period_ms,
            write_pages,
            lifetime_ms,
            granularity,
            ..TaskConfig::default()
        }
    }

    /// SiP groups 0, 1, 2 = cam (dies 0-1), imu (die 2), log (die 3). Residences:
    /// cam (5 + 1) 10 ms + 16 x 2 / 0.4 = 140 ms, imu (5 + 1) 20 + 16 / 0.1 = 280 ms,
    /// log (6 + 1) 5 + 16 / 0.2 = 115 ms.
    fn config(free_order: FreeOrder) -> TelomereConfig {
        TelomereConfig {
            policy: Placement::Sip,
            tasks: vec![task("cam", 4, 10.0, 50.0, 2), task("imu", 2, 20.0, 100.0, 1), task("log", 1, 5.0, 30.0, 1)],
            free_order,
            ..TelomereConfig::default()
        }
    }

    #[test]
    fn shorter_residence_is_hotter_and_the_pool_sits_in_the_middle() {
        let mut flash = crate::testing::flash(geometry(), 7);
        let plan = config(FreeOrder::HealthBin).plan(&flash.io(SimTime::ZERO)).unwrap();
        assert_eq!(plan.groups.len(), 3);
        let heat = stream_heat(&plan, &config(FreeOrder::HealthBin).tasks, 16);
        assert_eq!(heat, vec![POOL_HEAT, 0.5, 0.0, 1.0]);
        // Equal residences share a heat; a lone group is the hottest.
        let mut twins = config(FreeOrder::HealthBin);
        twins.tasks.truncate(1);
        twins.tasks.push(task("cam2", 4, 10.0, 50.0, 2));
        let plan = twins.plan(&flash.io(SimTime::ZERO)).unwrap();
        assert_eq!(stream_heat(&plan, &twins.tasks, 16), vec![POOL_HEAT, 1.0, 1.0]);
    }

    /// With every block worn a different amount, the hottest group opens the
    /// lowest-RBER free block of its die and the coldest the least healthy of the
    /// four bins (three groups and the pool); FIFO opens the first released.
    #[test]
    fn health_bin_opens_healthy_blocks_for_hot_groups() {
        let g = geometry();
        let opened = |order: FreeOrder| {
            let mut flash = crate::testing::flash(g, 7);
            {
                let mut io = flash.io(SimTime::ZERO);
                for b in 0..g.total_blocks() {
                    for _ in 0..1 + (b * 7) % 5 {
                        io.erase(BlockId(b), Purpose::Gc).unwrap();
                    }
                }
            }
            let now = SimTime(1_000_000_000);
            let mut ftl = Telomere::format(config(order), &mut flash.io(now)).unwrap();
            let mut blocks = Vec::new();
            for (lpn, task) in [(0u32, 2u32), (1, 1)] {
                let mut io = flash.io(now);
                // 20 ms: within both tasks' admitted lifetimes, so the writes go to their groups.
                let hint = Hint {
                    stream: Some(task),
                    expiry: Some(SimTime(now.0 + 20_000_000)),
                    deadline: None,
                    more: false,
                    bytes: 0,
                };
                ftl.write(&mut io, Lpn(lpn), Payload::Token(u64::from(lpn) + 1), &hint).unwrap();
                blocks.push(g.block_of(ftl.table.get(lpn as usize).unwrap()));
            }
            let rber_on = |die: u32| -> Vec<(f64, BlockId)> {
                (0..g.total_blocks())
                    .map(BlockId)
                    .filter(|&b| g.die_of_block(b) == DieId(die))
                    .map(|b| (flash.nand().rber(b), b))
                    .collect()
            };
            (blocks, rber_on(3), rber_on(2))
        };
        let (hb, mut die3, mut die2) = opened(FreeOrder::HealthBin);
        let (fifo3, fifo2) = (die3[0].1, die2[0].1);
        die3.sort_by(|a, b| a.0.total_cmp(&b.0));
        die2.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert!(die2.windows(2).all(|w| w[0].0 < w[1].0), "distinct RBERs");
        assert_eq!(hb, vec![die3[0].1, die2[3].1], "log (hottest) on die 3, imu (coldest) on die 2");
        let (fifo, _, _) = opened(FreeOrder::Fifo);
        assert_eq!(fifo, vec![fifo3, fifo2]);
        assert_ne!(fifo, hb);
        let (rber, _, _) = opened(FreeOrder::Rber);
        assert_eq!(rber, vec![die3[0].1, die2[0].1]);
    }
}
