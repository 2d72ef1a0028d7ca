//! Admission applied by the host: a sweep case's `admit = { policy = ... }`
//! runs one of Telomere's admission tests or a baseline's
//! ([`ftlab_bounds::telomere::admit_with`], as `ftlab admit` does) over the
//! run's periodic tasks before the run, drops the tasks it refuses from the
//! workload, and after the run puts them back in the report's `tasks`, in their
//! place, as refused (no jobs) with the test that refused them. For FTLs
//! without admission control of their own (WAO-GC, 000 Eq. 24-26): the host
//! keeps to what the scheme's analysis admits.

use serde::Deserialize;

use ftlab_bounds::telomere::{admit_with, ChipCheck, Device, Policy, Task, TaskSet};
use ftlab_nand::presets::ChipPreset;
use ftlab_sim::metrics::TaskReport;
use ftlab_sim::{Report, RunConfig};

use crate::LabError;

/// `admit = { policy = "waogc", blocks = 304 }` of a `[[case]]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdmitSpec {
    /// `sip`, `sharp` (Telomere) or `waogc` (WAO-GC), as `ftlab admit --policy`.
    pub policy: String,
    /// Blocks the test sees (default: the run's device's, as `ftlab admit --blocks`).
    pub blocks: Option<u64>,
    /// Over-provisioning alpha (lambda = 1 - alpha; default: the policy's own).
    pub over_provisioning: Option<f64>,
    /// Also test every chip with the tasks striped over their own chips
    /// (`ftlab admit --per-chip`; sip and sharp). Default false.
    #[serde(default)]
    pub per_chip: bool,
}

/// A task the host's admission refused: its place in `workload.task` and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub index: usize,
    pub name: String,
    /// `storage: ... (ftlab admit --policy waogc; t_r 75 us, t_w 1300 us, t_e
    /// 3800 us)`: the test and by how much, the policy, and the times it
    /// assumed (the run's device's).
    pub reason: String,
}

/// The tasks of `config` that `spec`'s test refuses, in task order. `origin`
/// names the case in errors.
pub fn refusals(spec: &AdmitSpec, config: &RunConfig, origin: &str) -> Result<Vec<Refusal>, LabError> {
    let bad = |msg: String| LabError::config("admit", format!("{origin}: admit: {msg}"));
    let policy = match spec.policy.as_str() {
        "sip" => Policy::Sip,
        "sharp" => Policy::Sharp,
        "waogc" => Policy::WaoGc,
        other => return Err(bad(format!("policy = \"{other}\" is not one of sip, sharp, waogc"))),
    };
    let w = &config.workload;
    if w.tasks.is_empty() {
        return Err(bad("the run has no periodic tasks ([[workload.task]]) to admit".into()));
    }
    // The run's device as configured (`device.timing`, `device.blocks_per_plane`,
    // ...), not the chip preset's: a case that changes the erase time is
    // admitted with that erase time.
    let (preset, nand) = config
        .device
        .preset()
        .and_then(|p| Ok((p, config.device.nand_config(config.seed())?)))
        .map_err(|e| bad(e.to_string()))?;
    let as_run = ChipPreset { geometry: nand.geometry, timing: nand.timing, ..*preset };
    let mut device = Device::from_preset(&as_run);
    let fix = |e: ftlab_bounds::telomere::TelomereError| bad(e.to_string());
    if let Some(blocks) = spec.blocks {
        device = device.with_blocks(blocks).map_err(fix)?;
    }
    if let Some(op) = spec.over_provisioning {
        device = device.with_over_provisioning(op).map_err(fix)?;
    }
    let duration_ms = w.duration_ms.unwrap_or(1000.0);
    let tasks = w.tasks.iter().map(|t| task(t, duration_ms)).collect();
    let set = TaskSet::new(device, tasks).map_err(|e| bad(e.to_string()))?;
    let g = nand.geometry;
    let channel_wait_ns = u64::from(g.ways_per_channel * g.dies_per_way).saturating_sub(1)
        * nand.timing.transfer(g.page_size + g.oob_size).0;
    let check = spec.per_chip.then_some(ChipCheck { channel_wait_ns });
    let admission = admit_with(&set, policy, check).map_err(|e| bad(e.to_string()))?;
    let d = &set.device;
    let times = format!("t_r {} us, t_w {} us, t_e {} us", d.t_r_ns / 1000, d.t_w_ns / 1000, d.t_e_ns / 1000);
    Ok(admission
        .tasks
        .iter()
        .enumerate()
        .filter_map(|(index, v)| {
            v.refused_by.map(|test| {
                let test = serde_json::to_value(test).ok().and_then(|t| t.as_str().map(str::to_owned));
                let by = match (test.unwrap_or_default(), v.excess) {
                    (t, Some(x)) if t == "storage" => format!(
                        "storage: needs {} {}, {x:.0} more than the {:.0} available at lambda {:.3}",
                        v.storage_needed, admission.storage_unit, admission.storage_available, admission.lambda
                    ),
                    (t, Some(x)) => format!("{t}: load {:.3} > 1", 1.0 + x),
                    (t, None) => t,
                };
                Refusal {
                    index,
                    name: v.name.clone(),
                    reason: format!("{by} (ftlab admit --policy {}; {times})", spec.policy),
                }
            })
        })
        .collect())
}

/// A workload task as the admission tests take it, as an admitting FTL does
/// (`l^w` = the lifetime in whole write periods, rounded up; a task without a
/// lifetime keeps its data for the whole run).
fn task(t: &ftlab_sim::config::TaskSpec, duration_ms: f64) -> Task {
    let ms = |us: Option<f64>| us.map_or(0.0, |u| u / 1e3);
    let ns = |ms: f64| (ms * 1e6).round().max(0.0) as u64;
    let (t_r, t_w) = (ms(t.read_period_us), ms(t.write_period_us));
    let lifetime_ms = t.lifetime_us.map_or(duration_ms, |l| l / 1e3);
    let periods = match ns(t_w) {
        0 => 0,
        wp => ns(lifetime_ms).div_ceil(wp),
    };
    Task::from_ms(&t.name, u64::from(t.read_pages), t_r, u64::from(t.write_pages), t_w, periods)
        .with_granularity(t.granularity.unwrap_or(1))
}

/// `config` without the refused tasks.
pub fn without(config: &mut RunConfig, refused: &[Refusal]) {
    for r in refused.iter().rev() {
        if r.index < config.workload.tasks.len() {
            config.workload.tasks.remove(r.index);
        }
    }
}

/// Puts the refused tasks back into the report, in their places, refused.
pub fn restore(report: &mut Report, refused: &[Refusal]) {
    for r in refused {
        let task = TaskReport {
            name: r.name.clone(),
            admitted: false,
            refused_by: Some(r.reason.clone()),
            ..TaskReport::default()
        };
        let at = r.index.min(report.tasks.len());
        report.tasks.insert(at, task);
    }
    report.tasks_refused += refused.len() as u64;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn config(text: &str) -> RunConfig {
        RunConfig::from_toml(text, "t").unwrap()
    }

    const TASKS: &str = "[device]\nchip = \"cosmos-openssd\"\n[workload]\nduration_ms = 1000\n\
        [[workload.task]]\nname = \"a\"\nwrite_pages = 16\nwrite_period_us = 40000\nlifetime_us = 1320000\ngranularity = 16\n\
        [[workload.task]]\nname = \"big\"\nwrite_pages = 16\nwrite_period_us = 40000\nlifetime_us = 900000000\ngranularity = 16\n\
        [[workload.task]]\nname = \"c\"\nwrite_pages = 1\nwrite_period_us = 40000\nlifetime_us = 40000\n";

    #[test]
    fn refused_tasks_leave_the_run_and_come_back_refused_in_place() {
        let mut c = config(TASKS);
        let spec = AdmitSpec { policy: "waogc".into(), blocks: None, over_provisioning: None, per_chip: false };
        let refused = refusals(&spec, &c, "case x").unwrap();
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert_eq!((refused[0].index, refused[0].name.as_str()), (1, "big"));
        assert_eq!(
            refused[0].reason,
            "storage: needs 360560 pages, 303440 more than the 57120 available at lambda 0.664 \
             (ftlab admit --policy waogc; t_r 75 us, t_w 1300 us, t_e 3800 us)"
        );
        without(&mut c, &refused);
        assert_eq!(c.workload.tasks.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["a", "c"]);
        let tasks = ["a", "c"]
            .iter()
            .map(|n| TaskReport { name: (*n).into(), jobs: 3, admitted: true, ..TaskReport::default() })
            .collect();
        let mut report = Report { tasks, ..Report::default() };
        restore(&mut report, &refused);
        assert_eq!(report.tasks[1].name, "big");
        assert!(!report.tasks[1].admitted && report.tasks[1].jobs == 0);
        assert_eq!(report.tasks_refused, 1);
    }

    #[test]
    fn the_test_sees_the_runs_device_not_the_presets() {
        // Table 3's tau0-tau3 (000 Section 6.3) on the board: with the preset's
        // 3.8 ms erase WAO-GC's Eq. 20 (with Eq. 25) admits all four; with a
        // 7 ms erase set in the run's `device.timing` it refuses tau3: 7 / 20
        // + 3 x 0.075 / 20 + (1.3 + 7) x (1 / 80 + 3 / 40) = 1.0875 (Eq. 20, 25).
        let tasks = "[workload]\nduration_ms = 1000\n\
            [[workload.task]]\nname = \"t0\"\nread_pages = 16\nread_period_us = 20000\nwrite_pages = 16\nwrite_period_us = 80000\ngranularity = 16\n\
            [[workload.task]]\nname = \"t1\"\nread_pages = 8\nread_period_us = 20000\nwrite_pages = 16\nwrite_period_us = 40000\ngranularity = 16\n\
            [[workload.task]]\nname = \"t2\"\nread_pages = 16\nread_period_us = 20000\nwrite_pages = 16\nwrite_period_us = 40000\ngranularity = 16\n\
            [[workload.task]]\nname = \"t3\"\nwrite_pages = 16\nwrite_period_us = 40000\ngranularity = 16\n";
        let spec = AdmitSpec { policy: "waogc".into(), blocks: None, over_provisioning: None, per_chip: false };
        let preset = config(&format!("[device]\nchip = \"cosmos-openssd\"\n{tasks}"));
        assert_eq!(refusals(&spec, &preset, "x").unwrap(), []);
        let slow = config(&format!(
            "[device]\nchip = \"cosmos-openssd\"\ntiming = {{ read_ns = 75000, read_oob_ns = 75000, \
             program_ns = 1300000, erase_ns = 7000000, channel_mb_per_s = 200 }}\n{tasks}"
        ));
        let refused = refusals(&spec, &slow, "x").unwrap();
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert_eq!(refused[0].name, "t3");
        assert_eq!(
            refused[0].reason,
            "throughput: load 1.087 > 1 (ftlab admit --policy waogc; t_r 75 us, t_w 1300 us, t_e 7000 us)"
        );
    }

    #[test]
    fn a_bad_policy_or_no_tasks_is_named() {
        let c = config(TASKS);
        let spec = AdmitSpec { policy: "nope".into(), blocks: None, over_provisioning: None, per_chip: false };
        let e = refusals(&spec, &c, "case x").unwrap_err().to_string();
        assert!(e.contains("case x") && e.contains("nope") && e.contains("waogc"), "{e}");
        let spec = AdmitSpec { policy: "sip".into(), ..spec };
        let e = refusals(&spec, &RunConfig::default(), "case y").unwrap_err().to_string();
        assert!(e.contains("case y") && e.contains("no periodic tasks"), "{e}");
    }
}
