//! [`admit`]: a task set through one policy's storage and throughput tests, task by
//! task.

use serde::Serialize;

use super::baselines::{bank_reservation_load, multilog_waf, valid_pages, waogc_max_lambda, MultiLogWorkload};
use super::chips::{overloaded, stripes, ChipCheck};
use super::device::Device;
use super::error::TelomereError;
use super::storage::{sharp_partition, sip_blocks};
use super::task::{Task, TaskSet};
use super::throughput::{edf_load, telomere_jobs, waogc_jobs, Job};

/// Whose admission tests to apply.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// Telomere, one set of blocks per task (Eq. 10-11) + Eq. 20.
    Sip,
    /// Telomere, blocks shared by Algorithm 1's partitions (Eq. 12-16) + Eq. 20.
    Sharp,
    /// WAO-GC: page mapping within `min(lambda, U(sigma))` (Eq. 24) + Eq. 20 with
    /// Eq. 25-26.
    WaoGc,
    /// MultiLog-Oracle: page mapping within `lambda` (Eq. 24) + bank reservation with
    /// Table 2's WAF (or `waf`, when given).
    MultiLog {
        /// Which column of Table 2.
        workload: MultiLogWorkload,
        /// A WAF to use instead of Table 2's.
        waf: Option<f64>,
    },
}

impl Policy {
    /// The policy's name on the command line: `sip`, `sharp`, `waogc`, `multilog`.
    pub fn name(&self) -> &'static str {
        match self {
            Policy::Sip => "sip",
            Policy::Sharp => "sharp",
            Policy::WaoGc => "waogc",
            Policy::MultiLog { .. } => "multilog",
        }
    }
}

/// Which admission test refused a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    /// Not enough free space (Eq. 11 or 24).
    Storage,
    /// Not schedulable (Eq. 20) or, for MultiLog, more than the device's average rate.
    Throughput,
    /// A chip over its limit with the stripes as placed ([`super::chips`]; only
    /// when a [`ChipCheck`] is asked for).
    Chip,
}

/// One task's verdict. Storage and load are those of the admitted tasks plus this one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskVerdict {
    /// The task's name.
    pub name: String,
    /// Whether it was admitted.
    pub admitted: bool,
    /// The first test that failed (storage is tried first), if refused.
    pub refused_by: Option<Test>,
    /// Storage the admitted tasks and this one need, in [`Admission::storage_unit`].
    pub storage_needed: u64,
    /// Throughput load of the admitted tasks and this one (left side of Eq. 20; 1 is
    /// the limit).
    pub throughput_load: f64,
    /// How far over the failing test's limit: storage units over
    /// [`Admission::storage_available`], or load (of Eq. 20, or of the chip) over
    /// 1. `None` when admitted.
    pub excess: Option<f64>,
    /// The chip over its limit, when [`Test::Chip`] refused the task.
    pub chip: Option<u32>,
}

/// The outcome of [`admit`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Admission {
    /// [`Policy::name`].
    pub policy: &'static str,
    /// The device's name.
    pub device: String,
    /// `blocks` (SiP, SharP: Eq. 11) or `pages` (WAO-GC, MultiLog: Eq. 24).
    pub storage_unit: &'static str,
    /// The utilization the storage test allows: the device's `lambda`, for WAO-GC
    /// capped by its derived maximum.
    pub lambda: f64,
    /// `lambda x S_blocks` or `lambda x S_pages`.
    pub storage_available: f64,
    /// The WAF MultiLog's bank reservation assumed; `None` for the other policies.
    pub waf: Option<f64>,
    /// The chip-by-chip test applied after Eq. 20 (SiP and SharP), if any.
    pub chip_check: Option<ChipCheck>,
    /// One verdict per task, in the task set's order.
    pub tasks: Vec<TaskVerdict>,
    /// How many tasks were admitted.
    pub admitted: usize,
    /// How many were refused.
    pub refused: usize,
    /// Storage the admitted tasks need.
    pub storage_needed: u64,
    /// Throughput load of the admitted tasks.
    pub throughput_load: f64,
    /// Names of the admitted tasks by shared blocks: SharP's partitions, one task each
    /// under SiP, empty for the page-mapped baselines.
    pub partitions: Vec<Vec<String>>,
}

/// Loads within this of 1 pass (the sums are floating point).
pub(super) const LOAD_TOLERANCE: f64 = 1e-9;

/// A policy's two tests on a candidate set of tasks.
pub(super) struct Tests<'a> {
    policy: Policy,
    device: &'a Device,
    waf: f64,
}

impl Tests<'_> {
    pub(super) fn storage(&self, tasks: &[&Task]) -> u64 {
        match self.policy {
            Policy::Sip => tasks.iter().map(|t| sip_blocks(t, self.device)).sum(),
            Policy::Sharp => sharp_partition(tasks, self.device).iter().map(|p| p.blocks).sum(),
            Policy::WaoGc | Policy::MultiLog { .. } => valid_pages(tasks),
        }
    }

    pub(super) fn load(&self, tasks: &[&Task]) -> f64 {
        let d = self.device;
        let jobs: Vec<Job> = match self.policy {
            Policy::Sip | Policy::Sharp => tasks.iter().flat_map(|t| telomere_jobs(t, d)).collect(),
            Policy::WaoGc => tasks.iter().flat_map(|t| waogc_jobs(t, d)).collect(),
            Policy::MultiLog { .. } => return bank_reservation_load(tasks, d, self.waf),
        };
        edf_load(&jobs, d.t_e_ns)
    }
}

/// A policy's storage limit and tests on `d`: `(lambda, waf, storage unit, tests)`.
pub(super) fn setup(d: &Device, policy: Policy) -> Result<(f64, Option<f64>, &'static str, Tests<'_>), TelomereError> {
    d.validate()?;
    let (lambda, waf) = match policy {
        Policy::Sip | Policy::Sharp => (d.lambda, None),
        Policy::WaoGc => (d.lambda.min(waogc_max_lambda(d)?), None),
        Policy::MultiLog { waf: Some(w), .. } if w.is_finite() && w >= 1.0 => (d.lambda, Some(w)),
        Policy::MultiLog { waf: Some(w), .. } => {
            return Err(TelomereError::InvalidDevice {
                device: d.name.clone(),
                field: "waf",
                reason: format!("is {w}: a write amplification factor is at least 1"),
            })
        }
        Policy::MultiLog { workload, waf: None } => (d.lambda, Some(multilog_waf(d.over_provisioning(), workload)?)),
    };
    let unit = match policy {
        Policy::Sip | Policy::Sharp => "blocks",
        Policy::WaoGc | Policy::MultiLog { .. } => "pages",
    };
    Ok((lambda, waf, unit, Tests { policy, device: d, waf: waf.unwrap_or(1.0) }))
}

impl<'a> Tests<'a> {
    pub(super) fn new(policy: Policy, device: &'a Device, waf: f64) -> Self {
        Tests { policy, device, waf }
    }

    pub(super) fn capacity(&self) -> u64 {
        match self.policy {
            Policy::Sip | Policy::Sharp => self.device.blocks,
            Policy::WaoGc | Policy::MultiLog { .. } => self.device.pages(),
        }
    }
}

/// Whether a whole task set is schedulable under a policy ([`check_set`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SetVerdict {
    /// Storage all the tasks need, in the policy's unit (blocks or pages).
    pub storage_needed: u64,
    /// What the storage test allows (`lambda` x blocks or pages).
    pub storage_available: f64,
    /// Throughput load of all the tasks (left side of Eq. 20, limit 1).
    pub throughput_load: f64,
    /// The first test the set fails (storage is tried first), if any.
    pub refused_by: Option<Test>,
}

impl SetVerdict {
    /// Both tests pass.
    pub fn schedulable(&self) -> bool {
        self.refused_by.is_none()
    }
}

/// The two tests of `policy` on all of `set`'s tasks at once: the paper's "task set
/// is schedulable" (Section 6.1), without [`admit`]'s task-by-task order.
pub fn check_set(set: &TaskSet, policy: Policy) -> Result<SetVerdict, TelomereError> {
    let (lambda, _, _, tests) = setup(&set.device, policy)?;
    let all: Vec<&Task> = set.tasks.iter().collect();
    let storage_available = lambda * tests.capacity() as f64;
    let storage_needed = tests.storage(&all);
    let refused_by = if storage_needed as f64 > storage_available { Some(Test::Storage) } else { None };
    // The load is only needed when storage passed (sweeps call this many times).
    let throughput_load = if refused_by.is_none() { tests.load(&all) } else { f64::NAN };
    let refused_by = refused_by.or((throughput_load > 1.0 + LOAD_TOLERANCE).then_some(Test::Throughput));
    Ok(SetVerdict { storage_needed, storage_available, throughput_load, refused_by })
}

/// Admits `set`'s tasks under `policy`.
///
/// **Order rule.** Tasks are considered in the task set's order, as `open()` calls
/// ([`super::Admitter::open`]) arriving one after the other (Section 3.1 of 000). Each task is tested together
/// with the tasks admitted before it: first the storage test, then the throughput
/// test. A refused task consumes nothing, so a later, smaller task may still be
/// admitted. Under SharP the partitioning (Algorithm 1) is recomputed over the
/// admitted tasks plus the candidate each time.
///
/// Fails only when the policy has no test for the device: WAO-GC when an erase
/// cannot hold a page copy (no Lazy-RTGC `U(sigma)`), MultiLog when Table 2 has no
/// WAF for the device's over-provisioning and none is given.
pub fn admit(set: &TaskSet, policy: Policy) -> Result<Admission, TelomereError> {
    admit_with(set, policy, None)
}

/// [`admit`], and with `chip_check` under SiP and SharP a third test after Eq.
/// 20: no chip over its limit with the admitted tasks and the candidate striped
/// as [`super::chips`] places them. The test an FTL that stripes each task over
/// its own `g` chips needs (ftlab's `telomere-sip` and `telomere-sharp` apply it).
pub fn admit_with(set: &TaskSet, policy: Policy, chip_check: Option<ChipCheck>) -> Result<Admission, TelomereError> {
    let d = &set.device;
    let chip_check = chip_check.filter(|_| matches!(policy, Policy::Sip | Policy::Sharp));
    let (lambda, waf, storage_unit, tests) = setup(d, policy)?;
    let available = lambda * tests.capacity() as f64;

    let mut admitted: Vec<&Task> = Vec::new();
    let mut verdicts = Vec::with_capacity(set.tasks.len());
    for task in &set.tasks {
        admitted.push(task);
        let storage_needed = tests.storage(&admitted);
        let throughput_load = tests.load(&admitted);
        let mut chip = None;
        let (refused_by, excess) = if storage_needed as f64 > available {
            (Some(Test::Storage), Some(storage_needed as f64 - available))
        } else if throughput_load > 1.0 + LOAD_TOLERANCE {
            (Some(Test::Throughput), Some(throughput_load - 1.0))
        } else if let Some(o) = chip_check.and_then(|c| overloaded(&admitted, &stripes(&admitted, policy, d), d, c)) {
            chip = Some(o.chip);
            (Some(Test::Chip), Some(o.load - 1.0))
        } else {
            (None, None)
        };
        if refused_by.is_some() {
            admitted.pop();
        }
        verdicts.push(TaskVerdict {
            name: task.name.clone(),
            admitted: refused_by.is_none(),
            refused_by,
            storage_needed,
            throughput_load,
            excess,
            chip,
        });
    }
    let names = |idx: &[usize]| idx.iter().map(|&i| admitted[i].name.clone()).collect::<Vec<_>>();
    let partitions = match policy {
        Policy::Sip => admitted.iter().map(|t| vec![t.name.clone()]).collect(),
        Policy::Sharp => sharp_partition(&admitted, d).iter().map(|p| names(&p.tasks)).collect(),
        Policy::WaoGc | Policy::MultiLog { .. } => Vec::new(),
    };
    Ok(Admission {
        policy: policy.name(),
        device: d.name.clone(),
        storage_unit,
        lambda,
        storage_available: available,
        waf,
        chip_check,
        admitted: admitted.len(),
        refused: set.tasks.len() - admitted.len(),
        storage_needed: tests.storage(&admitted),
        throughput_load: tests.load(&admitted),
        tasks: verdicts,
        partitions,
    })
}
