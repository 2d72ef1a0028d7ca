//! [`Task`] and [`TaskSet`]: Telomere's periodic task model (Section 3.1 of 000) and
//! its TOML form.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::device::{Device, MAX_TIME_NS};
use super::error::{task_err, TelomereError};

/// One periodic task `tau_i` (Section 3.1 of `000_ffe2fafb22bcad8e.txt`): every
/// `T^r` it reads `r` pages, every `T^w` it writes `w` pages, each written page
/// stays valid for `l^w` write periods; requests are striped `g` pages wide.
/// Deadlines equal periods.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Task {
    /// A name for messages and reports.
    pub name: String,
    /// `T_i^r` in nanoseconds (0 when the task reads nothing).
    pub read_period_ns: u64,
    /// `T_i^w` in nanoseconds (0 when the task writes nothing).
    pub write_period_ns: u64,
    /// `r_i`, pages read per read period.
    pub read_pages: u64,
    /// `w_i`, pages written per write period.
    pub write_pages: u64,
    /// `l_i^w`, write periods a page stays valid.
    pub lifetime_periods: u64,
    /// `g`, read and write granularity in pages (striping width), at least 1.
    pub granularity: u32,
    /// `U_i^s`, the storage utilization the generator drew for this task, if generated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub storage_util: Option<f64>,
    /// `U_i^b`, the bandwidth utilization the generator drew, if generated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bandwidth_util: Option<f64>,
}

impl Task {
    /// A task from the paper's symbols, periods in milliseconds, granularity 1.
    /// Panics never; call [`Task::validate`] before use.
    pub fn from_ms(name: &str, r: u64, t_r_ms: f64, w: u64, t_w_ms: f64, l: u64) -> Self {
        Task {
            name: name.to_owned(),
            read_period_ns: ms_to_ns(t_r_ms).unwrap_or(u64::MAX),
            write_period_ns: ms_to_ns(t_w_ms).unwrap_or(u64::MAX),
            read_pages: r,
            write_pages: w,
            lifetime_periods: l,
            granularity: 1,
            storage_util: None,
            bandwidth_util: None,
        }
    }

    /// The same task striped `g` pages wide.
    pub fn with_granularity(mut self, g: u32) -> Self {
        self.granularity = g;
        self
    }

    /// Checks the fields are consistent: positive periods where pages are moved,
    /// some page moved, granularity at least 1, and a writing task's data alive at
    /// least one write period.
    pub fn validate(&self) -> Result<(), TelomereError> {
        let n = &self.name;
        if self.read_pages == 0 && self.write_pages == 0 {
            return Err(task_err(n, "read_pages", "and write_pages are both 0: the task must read or write"));
        }
        for (field, pages, period) in [
            ("read_period_ms", self.read_pages, self.read_period_ns),
            ("write_period_ms", self.write_pages, self.write_period_ns),
        ] {
            if pages > 0 && (period == 0 || period > MAX_TIME_NS) {
                return Err(task_err(n, field, "must be a positive time (ms) when pages are moved"));
            }
        }
        if self.granularity == 0 {
            return Err(task_err(n, "granularity", "is 0: give the striping width in pages, at least 1"));
        }
        if self.write_pages > 0 && self.lifetime_periods == 0 {
            return Err(task_err(
                n,
                "lifetime_periods",
                "is 0: a written page stays valid at least one write period (l^w >= 1); give lifetime_periods >= 1 \
                 or a positive lifetime_ms",
            ));
        }
        Ok(())
    }

    /// `(l^w + 1) T^w` in ns: how long the task's data is kept (Algorithm 1's sort key).
    pub fn data_alive_ns(&self) -> u128 {
        u128::from(self.lifetime_periods + 1) * u128::from(self.write_period_ns)
    }
}

/// A task set and the device it is admitted on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskSet {
    /// The device.
    pub device: Device,
    /// The tasks, in the order admission considers them.
    pub tasks: Vec<Task>,
}

/// A `[[task]]` table as written.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawTask {
    name: Option<String>,
    read_period_ms: Option<f64>,
    write_period_ms: Option<f64>,
    #[serde(default)]
    read_pages: u64,
    #[serde(default)]
    write_pages: u64,
    lifetime_ms: Option<f64>,
    lifetime_periods: Option<u64>,
    granularity: Option<u32>,
}

/// A task set file: an optional default `granularity` and `[[task]]` tables.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawTaskSet {
    granularity: Option<u32>,
    #[serde(default, rename = "task")]
    tasks: Vec<RawTask>,
}

fn ms_to_ns(ms: f64) -> Option<u64> {
    let ns = (ms * 1e6).round();
    (ms.is_finite() && ms >= 0.0 && ns <= MAX_TIME_NS as f64).then_some(ns as u64)
}

fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

impl RawTask {
    fn into_task(self, index: usize, default_g: Option<u32>) -> Result<Task, TelomereError> {
        let name = self.name.unwrap_or_else(|| format!("#{}", index + 1));
        let period = |field: &'static str, v: Option<f64>, pages: u64| -> Result<u64, TelomereError> {
            match v {
                None if pages == 0 => Ok(0),
                None => Err(task_err(&name, field, "is missing: give the period in milliseconds")),
                Some(ms) => ms_to_ns(ms).ok_or_else(|| {
                    task_err(&name, field, format!("is {ms}: give a finite, non-negative time in milliseconds"))
                }),
            }
        };
        let read_period_ns = period("read_period_ms", self.read_period_ms, self.read_pages)?;
        let write_period_ns = period("write_period_ms", self.write_period_ms, self.write_pages)?;
        let lifetime_periods = match (self.lifetime_ms, self.lifetime_periods) {
            (Some(_), Some(_)) => {
                return Err(task_err(&name, "lifetime_ms", "and lifetime_periods are both given: keep one"))
            }
            (None, Some(l)) => l,
            (Some(ms), None) => {
                let ns = ms_to_ns(ms).ok_or_else(|| {
                    task_err(&name, "lifetime_ms", format!("is {ms}: give a finite, non-negative time"))
                })?;
                if ns == 0 && self.write_pages > 0 {
                    return Err(task_err(&name, "lifetime_ms", "is 0: give how long written data stays valid, in ms"));
                }
                // Data lives l^w whole write periods; a lifetime between two whole
                // numbers of periods is rounded up so no page expires early.
                if write_period_ns == 0 {
                    0
                } else {
                    ns.div_ceil(write_period_ns)
                }
            }
            (None, None) if self.write_pages == 0 => 0,
            (None, None) => {
                return Err(task_err(
                    &name,
                    "lifetime_ms",
                    "is missing: give lifetime_ms (or lifetime_periods, the paper's l^w)",
                ))
            }
        };
        let task = Task {
            name,
            read_period_ns,
            write_period_ns,
            read_pages: self.read_pages,
            write_pages: self.write_pages,
            lifetime_periods,
            granularity: self.granularity.or(default_g).unwrap_or(1),
            storage_util: None,
            bandwidth_util: None,
        };
        task.validate()?;
        Ok(task)
    }

    fn from_task(t: &Task) -> Self {
        RawTask {
            name: Some(t.name.clone()),
            read_period_ms: (t.read_pages > 0).then(|| ns_to_ms(t.read_period_ns)),
            write_period_ms: (t.write_pages > 0).then(|| ns_to_ms(t.write_period_ns)),
            read_pages: t.read_pages,
            write_pages: t.write_pages,
            lifetime_ms: None,
            lifetime_periods: Some(t.lifetime_periods),
            granularity: Some(t.granularity),
        }
    }
}

impl TaskSet {
    /// A checked task set: at least one task, distinct names, every task valid, a
    /// valid device.
    pub fn new(device: Device, tasks: Vec<Task>) -> Result<Self, TelomereError> {
        device.validate()?;
        if tasks.is_empty() {
            return Err(TelomereError::NoTasks);
        }
        let mut names = HashSet::new();
        for t in &tasks {
            t.validate()?;
            if !names.insert(t.name.as_str()) {
                return Err(TelomereError::DuplicateName(t.name.clone()));
            }
        }
        Ok(TaskSet { device, tasks })
    }

    /// Parses a task set file (`[[task]]` tables with `name`, `read_period_ms`,
    /// `write_period_ms`, `read_pages`, `write_pages`, `lifetime_ms` or
    /// `lifetime_periods`, optional `granularity`; an optional top-level `granularity`
    /// is the default of every task, else 1). `origin` names the file in messages.
    pub fn from_toml(text: &str, origin: Option<&str>, device: Device) -> Result<Self, TelomereError> {
        let origin = origin.map(|o| format!(" {o}")).unwrap_or_default();
        let raw: RawTaskSet =
            toml::from_str(text).map_err(|e| TelomereError::Parse { origin, message: e.to_string() })?;
        let tasks = raw
            .tasks
            .into_iter()
            .enumerate()
            .map(|(i, t)| t.into_task(i, raw.granularity))
            .collect::<Result<Vec<_>, _>>()?;
        TaskSet::new(device, tasks)
    }

    /// The tasks as a task set file [`TaskSet::from_toml`] reads back (lifetimes as
    /// `lifetime_periods`).
    pub fn to_toml(&self) -> String {
        let raw = RawTaskSet { granularity: None, tasks: self.tasks.iter().map(RawTask::from_task).collect() };
        toml::to_string(&raw).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ftlab_nand::presets::preset;

    fn dev() -> Device {
        Device::from_preset(preset("cosmos-openssd").unwrap())
    }

    #[test]
    fn parses_lifetimes_in_ms_or_periods() {
        let text = r#"
            granularity = 16
            [[task]]
            name = "a"
            read_period_ms = 20
            read_pages = 16
            write_period_ms = 80
            write_pages = 16
            lifetime_ms = 20000
            [[task]]
            name = "b"
            write_period_ms = 40
            write_pages = 5
            lifetime_periods = 1980
            granularity = 4
            [[task]]
            name = "c"
            write_period_ms = 40
            write_pages = 5
            lifetime_ms = 41
        "#;
        let set = TaskSet::from_toml(text, None, dev()).unwrap();
        let a = &set.tasks[0];
        assert_eq!(
            (a.read_period_ns, a.write_period_ns, a.lifetime_periods, a.granularity),
            (20_000_000, 80_000_000, 250, 16)
        );
        assert_eq!(
            (set.tasks[1].lifetime_periods, set.tasks[1].granularity, set.tasks[1].read_period_ns),
            (1980, 4, 0)
        );
        assert_eq!(set.tasks[2].lifetime_periods, 2, "41 ms is rounded up to 2 periods of 40 ms");
        let back = TaskSet::from_toml(&set.to_toml(), None, dev()).unwrap();
        assert_eq!(back.tasks, set.tasks);
    }

    #[test]
    fn errors_name_the_task_and_field() {
        let e =
            TaskSet::from_toml("[[task]]\nname = \"x\"\nwrite_pages = 3\nlifetime_ms = 9", None, dev()).unwrap_err();
        assert_eq!(e.to_string(), "task `x`: write_period_ms is missing: give the period in milliseconds");
        let e = TaskSet::from_toml("[[task]]\nwrite_pages = 3\nwrite_period_ms = 9", None, dev()).unwrap_err();
        assert!(e.to_string().starts_with("task `#1`: lifetime_ms is missing"), "{e}");
        let e = TaskSet::from_toml("[[task]]\nname = \"y\"\nread_pages = 0", None, dev()).unwrap_err();
        assert!(e.to_string().contains("task `y`: read_pages and write_pages are both 0"), "{e}");
        let e = TaskSet::from_toml(
            "[[task]]\nname = \"y\"\nwrite_pages = 1\nwrite_period_ms = -4\nlifetime_ms = 1",
            None,
            dev(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("write_period_ms is -4"), "{e}");
        // A writing task whose data lives no period at all (000 Section 3.1: l^w >= 1).
        let zero = "[[task]]\nname = \"z\"\nwrite_pages = 4\nwrite_period_ms = 10\nlifetime_periods = 0";
        let e = TaskSet::from_toml(zero, None, dev()).unwrap_err();
        assert!(e.to_string().starts_with("task `z`: lifetime_periods is 0"), "{e}");
        let e = TaskSet::from_toml(&zero.replace("lifetime_periods", "lifetime_ms"), None, dev()).unwrap_err();
        assert!(e.to_string().contains("task `z`: lifetime_ms is 0"), "{e}");
        let direct = Task::from_ms("d", 0, 0.0, 4, 10.0, 0);
        assert!(direct.validate().unwrap_err().to_string().contains("lifetime_periods is 0"));
        assert!(Task::from_ms("r", 4, 10.0, 0, 0.0, 0).validate().is_ok(), "a read-only task keeps no data");
        let e = TaskSet::from_toml("[[task]]\nnmae = \"y\"", Some("s.toml"), dev()).unwrap_err();
        assert!(e.to_string().starts_with("task set s.toml: ") && e.to_string().contains("nmae"), "{e}");
        assert_eq!(TaskSet::from_toml("", None, dev()).unwrap_err(), TelomereError::NoTasks);
        let two = "[[task]]\nname=\"a\"\nread_pages=1\nread_period_ms=1\n[[task]]\nname=\"a\"\nread_pages=1\nread_period_ms=1";
        assert_eq!(TaskSet::from_toml(two, None, dev()).unwrap_err(), TelomereError::DuplicateName("a".into()));
    }
}
