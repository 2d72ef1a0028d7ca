//! Schedulability sweeps (Section 6.1 of `000_ffe2fafb22bcad8e.txt`, Figures 7-9):
//! the largest storage or throughput utilization at which every one of a number of
//! random task sets passes a policy's tests.
//!
//! A sweep fixes the other utilization at a small value (default 0.01) and raises
//! the swept one from `step` to `max` in steps of `step` (0.01 to 1.0 in the paper).
//! Set `k` of a sweep is drawn with seed `seed + k` at every utilization: UUniFast's
//! draws scale with the total, so a set grows task by task as the utilization rises
//! and each set has one utilization from which it fails. The limit is the last step
//! below the first failure of any set ("the maximum utilization at which 100% of the
//! task sets are schedulable"); the first failing step and the test that failed are
//! reported too.

use serde::Serialize;

use super::admit::{check_set, Policy, Test};
use super::device::Device;
use super::error::TelomereError;
use super::generate::GeneratorSpec;
use super::task::TaskSet;

/// Which utilization a sweep raises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// `U^s`, the task set's storage utilization.
    Storage,
    /// `U^b`, its bandwidth (throughput) utilization.
    Throughput,
}

impl Axis {
    /// `storage` or `throughput`.
    pub fn name(self) -> &'static str {
        match self {
            Axis::Storage => "storage",
            Axis::Throughput => "throughput",
        }
    }
}

/// The task sets of a sweep and its grid.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SweepSpec {
    /// Tasks per set (the paper: 500).
    pub tasks: usize,
    /// Random sets per utilization (the paper: 50).
    pub sets: usize,
    /// `g` of every task; `None`: `S_chips`.
    pub granularity: Option<u32>,
    /// `r_i = w_i`; `None`: `S_chips`.
    pub pages: Option<u64>,
    /// The utilization on the axis not swept.
    pub other_util: f64,
    /// Grid step and first value (0.01).
    pub step: f64,
    /// Last value tried (1.0).
    pub max: f64,
    /// Set `k` uses seed `seed + k`.
    pub seed: u64,
}

impl Default for SweepSpec {
    fn default() -> Self {
        SweepSpec {
            tasks: 500,
            sets: 50,
            granularity: None,
            pages: None,
            other_util: 0.01,
            step: 0.01,
            max: 1.0,
            seed: 1,
        }
    }
}

/// The outcome of [`max_schedulable`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Limit {
    /// The largest utilization on the grid at which every set passed: 0 when some
    /// set failed at the first step.
    pub max_util: f64,
    /// The first grid value at which some set failed; `None` when all passed up to
    /// the grid's end.
    pub first_failure: Option<f64>,
    /// Which test that set failed first there.
    pub failed_by: Option<Test>,
}

/// Grid value `i` (1-based), rounded to the step's decimals so that printed values
/// are exact.
fn grid(i: usize, step: f64) -> f64 {
    (i as f64 * step * 1e9).round() / 1e9
}

/// The most grid steps [`max_schedulable`] takes: a step of 10^-9 was 10^9
/// steps, each generating a task set, and never ended.
pub const MAX_STEPS: usize = 10_000;

/// The largest `axis` utilization at which all of `spec.sets` random sets are
/// schedulable under `policy` on `device` (see the module docs).
pub fn max_schedulable(device: &Device, policy: Policy, axis: Axis, spec: &SweepSpec) -> Result<Limit, TelomereError> {
    if spec.sets == 0 {
        return Err(TelomereError::InvalidGenerator("sets is 0: give the number of task sets per step".into()));
    }
    if !(spec.step.is_finite() && spec.step > 0.0 && spec.step <= spec.max && spec.max.is_finite()) {
        return Err(TelomereError::InvalidGenerator(format!(
            "the grid step {} and end {} are not a grid: give 0 < step <= max, e.g. 0.01 and 1.0",
            spec.step, spec.max
        )));
    }
    let steps = ((spec.max / spec.step) + 1e-9).floor();
    if steps > MAX_STEPS as f64 {
        return Err(TelomereError::InvalidGenerator(format!(
            "the grid step {} up to {} is {steps:.0} steps, more than the {MAX_STEPS} one sweep may take \
             (each generates and tests every set); give a step of at least {}",
            spec.step,
            spec.max,
            spec.max / MAX_STEPS as f64
        )));
    }
    let steps = steps as usize;
    // Each set's first failing step, scanning only below the earliest failure so far.
    let mut first: Option<(usize, Test)> = None;
    for k in 0..spec.sets {
        let seed = spec.seed.wrapping_add(k as u64);
        let end = first.map_or(steps, |(i, _)| i - 1);
        for i in 1..=end {
            let u = grid(i, spec.step);
            let (us, ub) = match axis {
                Axis::Storage => (u, spec.other_util),
                Axis::Throughput => (spec.other_util, u),
            };
            let gen = GeneratorSpec {
                tasks: spec.tasks,
                storage_util: us,
                throughput_util: ub,
                pages: spec.pages,
                granularity: spec.granularity,
                seed,
            };
            let set = TaskSet::generate_with(&gen, device.clone())?;
            let verdict = check_set(&set, policy)?;
            if let Some(test) = verdict.refused_by {
                first = Some((i, test));
                break;
            }
        }
    }
    Ok(match first {
        None => Limit { max_util: grid(steps, spec.step), first_failure: None, failed_by: None },
        Some((i, test)) => {
            Limit { max_util: grid(i - 1, spec.step), first_failure: Some(grid(i, spec.step)), failed_by: Some(test) }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ftlab_nand::presets::preset;

    fn ssd() -> Device {
        Device::from_preset(preset("telomere-1tb-ssd").unwrap()).with_over_provisioning(0.1).unwrap()
    }

    #[test]
    fn a_limit_is_the_step_before_the_first_failure() {
        let spec = SweepSpec { tasks: 20, sets: 5, step: 0.05, ..SweepSpec::default() };
        let l = max_schedulable(&ssd(), Policy::Sharp, Axis::Storage, &spec).unwrap();
        let fail = l.first_failure.unwrap();
        assert!((fail - l.max_util - 0.05).abs() < 1e-9, "{l:?}");
        assert_eq!(l.failed_by, Some(Test::Storage));
        // Below lambda = 0.9 and above the SiP-like overheads of 20 tasks.
        assert!(l.max_util > 0.5 && l.max_util < 0.9, "{l:?}");
        // Every set passes at the limit, one fails at the next step.
        let pass = |u: f64, k: u64| {
            let gen = GeneratorSpec { seed: 1 + k, ..GeneratorSpec::new(20, u, 0.01, 0) };
            check_set(&TaskSet::generate_with(&gen, ssd()).unwrap(), Policy::Sharp).unwrap().schedulable()
        };
        assert!((0..5).all(|k| pass(l.max_util, k)));
        assert!((0..5).any(|k| !pass(fail, k)));
    }

    #[test]
    fn waogc_is_refused_on_throughput_well_before_telomere() {
        let spec = SweepSpec { tasks: 50, sets: 5, step: 0.02, ..SweepSpec::default() };
        let wao = max_schedulable(&ssd(), Policy::WaoGc, Axis::Throughput, &spec).unwrap();
        let sharp = max_schedulable(&ssd(), Policy::Sharp, Axis::Throughput, &spec).unwrap();
        assert_eq!(wao.failed_by, Some(Test::Throughput));
        assert!(wao.max_util > 0.2 && wao.max_util < 0.5, "{wao:?}");
        assert!(sharp.max_util > 2.0 * wao.max_util, "{sharp:?} vs {wao:?}");
    }

    #[test]
    fn bad_grids_are_refused() {
        let spec = SweepSpec { step: 0.0, ..SweepSpec::default() };
        let e = max_schedulable(&ssd(), Policy::Sip, Axis::Storage, &spec).unwrap_err();
        assert!(e.to_string().contains("grid step 0"), "{e}");
        let spec = SweepSpec { sets: 0, ..SweepSpec::default() };
        assert!(max_schedulable(&ssd(), Policy::Sip, Axis::Storage, &spec).is_err());
        // A step so fine the sweep would never end (10^9 steps).
        let spec = SweepSpec { step: 1e-9, max: 1.0, ..SweepSpec::default() };
        let e = max_schedulable(&ssd(), Policy::Sip, Axis::Storage, &spec).unwrap_err().to_string();
        assert!(e.contains("999999999 steps") && e.contains("at least 0.0001"), "{e}");
        // The last grid allowed runs.
        let spec = SweepSpec { tasks: 5, sets: 1, step: 1.0 / MAX_STEPS as f64, max: 1.0, ..SweepSpec::default() };
        assert!(max_schedulable(&ssd(), Policy::Sip, Axis::Storage, &spec).is_ok());
    }
}
