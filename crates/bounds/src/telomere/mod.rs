//! Telomere's admission control (`000_ffe2fafb22bcad8e.txt`, Sections 3-6) and the
//! baselines it is compared with.
//!
//! A [`TaskSet`] is periodic tasks (Section 3.1: read period `T^r`, write period
//! `T^w`, pages `r` and `w` per period, lifetime `l^w` in write periods, striping
//! granularity `g`) on a [`Device`] (`P`, `S_blocks`, `S_chips`, `t_r`, `t_w`, `t_e`,
//! `lambda`). [`admit`] runs one [`Policy`]'s two tests task by task (see its order
//! rule) and says which tasks are admitted, which test refused the others and by how
//! much:
//!
//! * **SiP** (Section 4.1): each task has its own blocks, [`sip_blocks`] (Eq. 5-10),
//!   and their sum must fit in `lambda S_blocks` (Eq. 11).
//! * **SharP** (Section 4.2): tasks with similar lifetimes share blocks; Algorithm 1
//!   ([`sharp_partition`]) chooses the partitions, [`sharp_blocks`] (Eq. 12-16) sizes
//!   them.
//! * **Throughput** (Section 5): read, write and erase jobs (Eq. 17-19,
//!   [`telomere_jobs`]) under EDF with one non-preemptive erase, [`edf_load`] <= 1
//!   (Eq. 20).
//! * **WAO-GC** (Section 6.1.5): page mapping, `sum w (l + 1) <= lambda S_pages`
//!   (Eq. 24) with `lambda` capped at [`waogc_max_lambda`] (Lazy-RTGC's `U(sigma)`,
//!   0.74 on the 1 TB SSD); writes pay a partial collection step (Eq. 25-26).
//! * **Chip by chip** ([`admit_with`] with a [`ChipCheck`]): Eq. 20's form over
//!   the work each chip gets when every task is striped over its own `g` chips
//!   (Eq. 18 spreads writes over all chips), which an FTL that stripes so needs.
//! * **MultiLog-Oracle** (Section 6.1.6): Eq. 24 and bank reservation with Table 2's
//!   average WAF ([`bank_reservation_load`]): an average, not a real-time, guarantee.
//!
//! [`Admitter`] is the same tests at `open()` time, one stream after another: a
//! [`TaskHandle`] (stream number, expiry of its writes by Eq. 3-4) or a [`Refusal`]
//! naming the failed test and by how much.
//!
//! [`TaskSet::generate`] draws task sets as Section 6.1.2 does (UUniFast, Eq. 21-23);
//! [`max_schedulable`] finds the utilization up to which all of them pass (Figures 7-9).
//!
//! Corrections to printed equations, each documented where it is applied: Eq. 9
//! ([`k_prime`], a floor), Eq. 13 and 16 ([`sharp_blocks`]: the erase term at the
//! task's rate, so the worked example of Section 4.2 comes out: opt1 = 20,
//! opt2 = 19, opt3 = 21), Algorithm 1 line 27 ([`sharp_partition`]) and Eq. 19's
//! `C^g` ([`gc_job`]).
//!
//! ```
//! use ftlab_bounds::telomere::{admit, Device, Policy, Task, TaskSet};
//! use ftlab_nand::presets::preset;
//!
//! let device = Device::from_preset(preset("telomere-1tb-ssd").unwrap());
//! let task = Task::from_ms("camera", 64, 100.0, 64, 100.0, 600).with_granularity(64);
//! let set = TaskSet::new(device, vec![task]).unwrap();
//! let a = admit(&set, Policy::Sharp).unwrap();
//! assert!(a.tasks[0].admitted);
//! // Eq. 7: g (ceil((w (l + 1) + w ceil(t_e / T^w)) / (g P)) + 1)
//! assert_eq!(a.storage_needed, 64 * ((64 * 601 + 64u64).div_ceil(64 * 128) + 1));
//! ```

mod admit;
mod baselines;
mod chips;
mod device;
mod error;
mod generate;
mod open;
mod schedulability;
mod storage;
mod task;
mod throughput;

pub use admit::{admit, admit_with, check_set, Admission, Policy, SetVerdict, TaskVerdict, Test};
pub use baselines::{
    bank_reservation_load, multilog_waf, valid_pages, waogc_max_lambda, MultiLogWorkload, MULTILOG_WAF,
};
pub use chips::{overloaded, stripes, ChipCheck, Overload, Stripe};
pub use device::{Device, GcJobReading};
pub use error::TelomereError;
pub use generate::{uunifast, GeneratorSpec, MAX_GENERATED_TASKS};
pub use open::{Admitter, Refusal, TaskHandle};
pub use schedulability::{max_schedulable, Axis, Limit, SweepSpec};
pub use storage::{k, k_prime, sharp_blocks, sharp_partition, sip_blocks, Partition};
pub use task::{Task, TaskSet};
pub use throughput::{edf_load, gc_job, read_job, telomere_jobs, waogc_jobs, waogc_write_job, write_job, Job};
