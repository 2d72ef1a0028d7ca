//! Telomere on random periodic task sets, dispatched earliest deadline first per
//! die with every released job in the device: whatever admission control admits
//! runs with no valid-page copy and no page command over the service bound; what
//! it refuses issues nothing.
//!
//! Deadline misses are not asserted: on this 4-die device, 5 of these 12 sets
//! (admitted with Eq. 20 loads near 1) miss 1 to 62 deadlines of about 800 jobs,
//! a gap between Eq. 20 and per-die EDF over striped tasks that is still open.
//! Table 3 (`table3.rs`) and the wear runs (`wear.rs`) have none.
#![allow(clippy::unwrap_used)]

use ftlab_sim::{run, RunConfig};

/// A small deterministic generator (the sets must not depend on a crate's
/// stream across versions).
struct Lcg(u64);
impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

fn task_set(seed: u64) -> String {
    let mut rng = Lcg(seed);
    let mut text = String::new();
    for i in 0..3 + rng.below(5) {
        let write_period_us = 2_000 * (1 + rng.below(10));
        let write_pages = 1 + rng.below(16);
        let lifetime_us = write_period_us * (1 + rng.below(50));
        let granularity = [1, 2, 4][rng.below(3) as usize];
        text += &format!(
            "[[workload.task]]\nname = \"t{i}\"\nwrite_period_us = {write_period_us}\nwrite_pages = {write_pages}\n\
             lifetime_us = {lifetime_us}\ngranularity = {granularity}\n"
        );
        if rng.below(2) == 0 {
            let read_period_us = 2_000 * (1 + rng.below(10));
            text += &format!(
                "read_period_us = {read_period_us}\nread_pages = {}\nread_start_us = 200000\n",
                1 + rng.below(write_pages)
            );
        }
    }
    text
}

#[test]
fn admitted_random_task_sets_never_copy_and_keep_the_service_bound() {
    let mut admitted_runs = 0;
    for seed in 1..=12u64 {
        for kind in ["telomere-sip", "telomere-sharp"] {
            let text = format!(
                "seed = {seed}\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 64\n[ftl]\nkind = \"{kind}\"\n\
                     [host]\ndispatch = \"per-die-edf\"\nqueue_depth = 64\n[workload]\nduration_ms = 1500\n{}",
                task_set(seed)
            );
            let r = run(&RunConfig::from_toml(&text, "random set").unwrap(), &mut |_| {}).unwrap();
            let what = format!("seed {seed} {kind}: {:?}", r.tasks);
            assert_eq!(r.integrity, "ok", "{what}");
            assert_eq!((r.gc_page_copies, r.bound_violations), (0, 0), "{what}");
            assert!(r.bound_us.is_some(), "{what}");
            for t in &r.tasks {
                if t.admitted {
                    assert!(t.jobs > 0, "{what}");
                } else {
                    assert!(t.jobs == 0 && t.refused_by.is_some(), "{what}");
                }
            }
            admitted_runs += u32::from(r.tasks.iter().any(|t| t.admitted));
        }
    }
    assert!(admitted_runs >= 20, "most sets admit something: {admitted_runs} of 24");
}
