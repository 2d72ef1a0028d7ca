//! [`Admitter`]: admission control at `open()` time (Section 3.1 of
//! `000_ffe2fafb22bcad8e.txt`): a stream asks for a guarantee when it opens and
//! either gets a [`TaskHandle`] or a [`Refusal`] naming the failed test and by how
//! much; nothing is silently degraded.
//!
//! ```
//! use ftlab_bounds::telomere::{Admitter, Device, Policy, Task, Test};
//! use ftlab_nand::presets::preset;
//!
//! let device = Device::from_preset(preset("cosmos-openssd").unwrap());
//! let mut a = Admitter::new(device, Policy::Sip).unwrap();
//! let cam = a.open(Task::from_ms("camera", 16, 20.0, 16, 40.0, 330).with_granularity(16)).unwrap();
//! // Eq. 3-4: data written at 100 ms expires at floor(100 / 40) 40 + (330 + 1) 40 ms.
//! assert_eq!(cam.expiry_ns(100_000_000), 80_000_000 + 331 * 40_000_000);
//! let hog = Task::from_ms("hog", 0, 0.0, 16, 40.0, 100_000).with_granularity(16);
//! let refusal = a.open(hog).unwrap_err();
//! assert_eq!(refusal.test, Test::Storage);
//! assert!(refusal.to_string().contains("hog"));
//! a.close(cam);
//! assert_eq!(a.open_tasks().count(), 0);
//! ```

use std::fmt;

use serde::Serialize;

use super::admit::{setup, Policy, Test, Tests, LOAD_TOLERANCE};
use super::chips::{overloaded, stripes, ChipCheck};
use super::device::Device;
use super::error::TelomereError;
use super::task::Task;

/// An admitted task: its stream number (the `Hint::stream` its writes carry) and
/// what its writes' expiry is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskHandle {
    /// Stream number, unique among the admitter's handles.
    pub stream: u32,
    /// The task's name.
    pub name: String,
    /// `T^w` in ns (0 for a task that only reads).
    pub write_period_ns: u64,
    /// `l^w`, write periods a page stays valid.
    pub lifetime_periods: u64,
}

impl TaskHandle {
    /// When data written at `t_ns` expires (Eq. 3-4): the start of its write period
    /// plus `l^w + 1` periods, so it outlives `l^w` full periods. `u64::MAX` for a
    /// task that writes nothing.
    pub fn expiry_ns(&self, t_ns: u64) -> u64 {
        let t = self.write_period_ns;
        if t == 0 {
            return u64::MAX;
        }
        (t_ns / t * t).saturating_add(self.lifetime_periods.saturating_add(1).saturating_mul(t))
    }
}

/// Why [`Admitter::open`] refused a task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Refusal {
    /// The task's name.
    pub task: String,
    /// The test that failed (storage is tried first).
    pub test: Test,
    /// Storage the open tasks and this one would need, in `unit`.
    pub storage_needed: u64,
    /// What the storage test allows.
    pub storage_available: f64,
    /// `blocks` or `pages`.
    pub unit: &'static str,
    /// Throughput load with this task (left side of Eq. 20; limit 1), or `None`
    /// when the storage test failed first; for [`Test::Chip`], the chip's load.
    pub throughput_load: Option<f64>,
    /// The chip over its limit, when [`Test::Chip`] failed.
    pub chip: Option<u32>,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.test, self.throughput_load) {
            (Test::Chip, Some(load)) => write!(
                f,
                "task `{}` refused by the chip test: chip {} loaded {load:.4} with the open tasks striped as \
                 placed, {:.4} over 1",
                self.task,
                self.chip.unwrap_or(0),
                load - 1.0
            ),
            (Test::Throughput, Some(load)) => write!(
                f,
                "task `{}` refused by the throughput test: load {load:.4} with the open tasks, {:.4} over 1 (Eq. 20)",
                self.task,
                load - 1.0
            ),
            _ => write!(
                f,
                "task `{}` refused by the storage test: {} {} needed with the open tasks, {:.0} over the {:.0} \
                 available",
                self.task,
                self.storage_needed,
                self.unit,
                self.storage_needed as f64 - self.storage_available,
                self.storage_available
            ),
        }
    }
}

impl std::error::Error for Refusal {}

/// Admission control of one device under one policy, task by task as streams open
/// and close. [`super::admit`] is this over a whole task set in order.
#[derive(Debug, Clone)]
pub struct Admitter {
    device: Device,
    policy: Policy,
    /// The storage test's utilization, WAF (MultiLog) and unit, from `setup`.
    lambda: f64,
    waf: f64,
    unit: &'static str,
    open: Vec<(u32, Task)>,
    next_stream: u32,
    chip_check: Option<ChipCheck>,
}

impl Admitter {
    /// An admitter with nothing open. Fails when the policy has no test for the
    /// device (see [`super::admit`]).
    pub fn new(device: Device, policy: Policy) -> Result<Self, TelomereError> {
        let (lambda, waf, unit, _) = setup(&device, policy)?;
        Ok(Admitter {
            device,
            policy,
            lambda,
            waf: waf.unwrap_or(1.0),
            unit,
            open: Vec::new(),
            next_stream: 0,
            chip_check: None,
        })
    }

    /// Adds the chip-by-chip test after Eq. 20 (SiP and SharP; see
    /// [`super::admit_with`]).
    pub fn with_chip_check(mut self, check: ChipCheck) -> Self {
        self.chip_check = Some(check).filter(|_| matches!(self.policy, Policy::Sip | Policy::Sharp));
        self
    }

    /// Runs both tests on the open tasks plus `task`; admits it or says why not. A
    /// refused task changes nothing.
    pub fn open(&mut self, task: Task) -> Result<TaskHandle, Refusal> {
        let (lambda, unit) = (self.lambda, self.unit);
        let tests = Tests::new(self.policy, &self.device, self.waf);
        let mut with: Vec<&Task> = self.open.iter().map(|(_, t)| t).collect();
        with.push(&task);
        let available = lambda * tests.capacity() as f64;
        let storage_needed = tests.storage(&with);
        let refusal = |test, load, chip| Refusal {
            task: task.name.clone(),
            test,
            storage_needed,
            storage_available: available,
            unit,
            throughput_load: load,
            chip,
        };
        if storage_needed as f64 > available {
            return Err(refusal(Test::Storage, None, None));
        }
        let load = tests.load(&with);
        if load > 1.0 + LOAD_TOLERANCE {
            return Err(refusal(Test::Throughput, Some(load), None));
        }
        if let Some(o) =
            self.chip_check.and_then(|c| overloaded(&with, &stripes(&with, self.policy, &self.device), &self.device, c))
        {
            return Err(refusal(Test::Chip, Some(o.load), Some(o.chip)));
        }
        let stream = self.next_stream;
        self.next_stream += 1;
        let handle = TaskHandle {
            stream,
            name: task.name.clone(),
            write_period_ns: task.write_period_ns,
            lifetime_periods: task.lifetime_periods,
        };
        self.open.push((stream, task));
        Ok(handle)
    }

    /// Releases a task's reservation (its data may still be live until it
    /// expires; the caller closes a stream once that is over).
    pub fn close(&mut self, handle: TaskHandle) {
        self.open.retain(|(s, _)| *s != handle.stream);
    }

    /// The open tasks, with their streams.
    pub fn open_tasks(&self) -> impl Iterator<Item = (u32, &Task)> {
        self.open.iter().map(|(s, t)| (*s, t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telomere::{admit, TaskSet};
    use ftlab_nand::presets::preset;

    fn table3() -> Vec<Task> {
        let t = |n: &str, r, tr, w, l| Task::from_ms(n, r, tr, w, if n == "tau0" { 80.0 } else { 40.0 }, l);
        vec![
            t("tau0", 16, 20.0, 16, 250),
            t("tau1", 8, 20.0, 16, 33),
            t("tau2", 16, 20.0, 16, 330),
            t("tau3", 0, 0.0, 16, 990),
            t("tau4", 0, 0.0, 11, 1980),
            t("tau5", 0, 0.0, 5, 1980),
        ]
        .into_iter()
        .map(|t| t.with_granularity(16))
        .collect()
    }

    #[test]
    fn open_one_by_one_agrees_with_admit() {
        let device = Device::from_preset(preset("cosmos-openssd").unwrap());
        for policy in [Policy::Sip, Policy::Sharp, Policy::WaoGc] {
            let set = TaskSet::new(device.clone(), table3()).unwrap();
            let whole = admit(&set, policy).unwrap();
            let mut a = Admitter::new(device.clone(), policy).unwrap();
            for (task, verdict) in table3().into_iter().zip(&whole.tasks) {
                match a.open(task) {
                    Ok(h) => assert!(verdict.admitted, "{policy:?} {}", h.name),
                    Err(r) => {
                        assert_eq!(Some(r.test), verdict.refused_by, "{policy:?} {r}");
                        assert_eq!(r.storage_needed, verdict.storage_needed);
                    }
                }
            }
            assert_eq!(a.open_tasks().count(), whole.admitted);
        }
    }

    #[test]
    fn sip_refuses_tau5_by_32_blocks_and_closing_makes_room() {
        let device = Device::from_preset(preset("cosmos-openssd").unwrap());
        let mut a = Admitter::new(device, Policy::Sip).unwrap();
        let handles: Vec<TaskHandle> = table3().into_iter().take(5).map(|t| a.open(t).unwrap()).collect();
        let tau5 = table3().pop().unwrap();
        let r = a.open(tau5.clone()).unwrap_err();
        assert_eq!((r.test, r.storage_needed, r.storage_available), (Test::Storage, 368, 336.0));
        assert_eq!(
            r.to_string(),
            "task `tau5` refused by the storage test: 368 blocks needed with the open tasks, 32 over the 336 available"
        );
        assert_eq!(handles.iter().map(|h| h.stream).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
        a.close(handles[3].clone());
        let h = a.open(tau5).unwrap();
        assert_eq!(h.stream, 5, "streams are never reused");
    }

    #[test]
    fn throughput_refusals_say_by_how_much() {
        let device = Device::from_preset(preset("telomere-1tb-ssd").unwrap());
        let mut a = Admitter::new(device, Policy::Sharp).unwrap();
        // 64 pages of 0.7 ms on 64 chips every 1 ms, plus t_e / T = 2.7: far over 1.
        let r = a.open(Task::from_ms("burst", 0, 0.0, 64, 1.0, 10).with_granularity(64)).unwrap_err();
        assert_eq!(r.test, Test::Throughput);
        let load = r.throughput_load.unwrap();
        assert!(load > 3.0, "{load}");
        assert!(r.to_string().contains("throughput test: load"), "{r}");
        // A read-only task's data never expires.
        let reader = a.open(Task::from_ms("reader", 4, 100.0, 0, 0.0, 0)).unwrap();
        assert_eq!(reader.expiry_ns(5), u64::MAX);
    }
}
