//! [`TelomereConfig`] and the plan it gives on a device: admission of the task set
//! (000 Sections 4-5, through `ftlab_bounds::telomere`), the block groups it
//! reserves, and the logical space left for the default pool.

use serde::{Deserialize, Serialize};

use ftlab_bounds::telomere::{admit_with, sharp_blocks, stripes, ChipCheck, Device, Policy, Task, TaskSet, Test};
use ftlab_nand::{BlockId, Geometry};

use crate::alloc::FreeOrder;
use crate::{FtlError, Io, StreamVerdict};

/// How blocks are shared among tasks (000 Section 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Single Task Placement (Section 4.1): each task has its own blocks.
    Sip,
    /// Shared Task Placement (Section 4.2): Algorithm 1's partitions share blocks.
    #[default]
    Sharp,
}

pub use crate::entry::TaskConfig;

impl TaskConfig {
    /// The bounds crate's task (`l^w = ceil(lifetime / T^w)`, so no page expires
    /// before the lifetime given).
    fn task(&self, index: usize) -> Task {
        let name = if self.name.is_empty() { format!("#{}", index + 1) } else { self.name.clone() };
        let ns = |ms: f64| (ms * 1e6).round().max(0.0) as u64;
        let wp = ns(self.write_period_ms);
        let lifetime = if wp == 0 { 0 } else { ns(self.lifetime_ms).div_ceil(wp) };
        Task::from_ms(&name, self.read_pages, self.read_period_ms, self.write_pages, self.write_period_ms, lifetime)
            .with_granularity(self.granularity)
    }
}

/// Configuration of [`super::Telomere`]. Every field has a documented default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TelomereConfig {
    /// `sip` or `sharp` (default `sharp`; the registry names `telomere-sip` and
    /// `telomere-sharp` set it).
    pub policy: Placement,
    /// The task set, admitted at format time; empty (the default) makes the FTL a
    /// page-mapped FTL with greedy GC whose blocks are stamped by expiry.
    pub tasks: Vec<TaskConfig>,
    /// Fraction of the default pool's pages hidden from the host, in [0, 1).
    /// Default 0: the largest logical space the pool's greedy GC allows.
    pub over_provisioning: f64,
    /// Default-pool GC runs before a write while the free blocks not reserved for
    /// tasks are at most this many (at least 1). Default 1.
    pub gc_free_blocks: u32,
    /// A task the admission tests refuse is a configuration error (default true);
    /// when false its writes go to the default pool (counted GC may then copy).
    pub strict_admission: bool,
    /// Expired blocks erased after each write command's acknowledgement (default 1;
    /// a block holds at least one page, so one erase a write keeps up with any
    /// write rate). 0 leaves reclaiming to allocation and idle time. A write that
    /// programs a block summary erases one less: the `P - 2` writes of a group
    /// block still erase `P - 4` blocks, and a group at its quota erases what it
    /// needs before it writes.
    pub erases_per_write: u32,
    /// Which free block a group or the pool opens (000 Section 6.2): `fifo` (the
    /// default; no wear leveling), `rber` (the lowest RBER) or `health-bin` (by
    /// the heat of the group: see the module documentation).
    pub free_order: FreeOrder,
    /// Dies the default pool writes and copies on: dies `0 .. pool_dies` (default
    /// 0: every die). The pool then keeps at most this many open blocks, so its
    /// slack ([`TelomereConfig::pool_slack`]) shrinks and the tasks get the
    /// blocks. It opens its blocks on its dies while they have free blocks, else
    /// on the next die with one (see the module documentation). At most the
    /// device's dies.
    pub pool_dies: u32,
}

impl Default for TelomereConfig {
    fn default() -> Self {
        TelomereConfig {
            policy: Placement::Sharp,
            tasks: Vec::new(),
            over_provisioning: 0.0,
            gc_free_blocks: 1,
            strict_admission: true,
            erases_per_write: 1,
            free_order: FreeOrder::Fifo,
            pool_dies: 0,
        }
    }
}

/// Blocks reserved for one group of tasks (a SiP task or a SharP partition).
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// Task names, for messages.
    pub names: Vec<String>,
    /// Blocks the group may hold at once (`H_g`, Eq. 10 or 14-16).
    pub quota: u32,
    /// Dies the group's pages are striped over: `first, first + 1, ...` (mod dies).
    pub first_die: u32,
    /// `g` of the group: its widest task's granularity.
    pub width: u32,
    /// The longest a page of the group lives, ns: `max (l^w + 1) T^w` over its
    /// tasks (Eq. 3-4). A write of the group's tasks whose expiry is further away
    /// goes to the pool; so after a power cut, data in a group block without a
    /// summary expires within this long.
    pub lifetime_ns: u64,
}

/// What [`TelomereConfig::plan`] decides for a device.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The block groups; group `k` is allocator stream `k + 1` (0 is the pool).
    pub groups: Vec<Group>,
    /// Group of each configured task (`None`: refused or writes nothing).
    pub group_of_task: Vec<Option<u32>>,
    /// Per configured task: `T^w` and `l^w` in ns and periods, for expiries the
    /// host does not give (Eq. 3-4).
    pub periods: Vec<(u64, u64)>,
    /// Logical pages exported to every writer.
    pub logical_pages: u32,
    /// Logical pages after those for the admitted tasks' data
    /// ([`crate::RealTime::stream_pages`]): `sum w (l^w + 1)` over admitted writers (Eq. 24's
    /// left side), so a task set that fits its reserved blocks fits its addresses.
    pub stream_pages: u32,
    /// Admission's verdict on each configured task, in order.
    pub verdicts: Vec<StreamVerdict>,
}

impl TelomereConfig {
    /// Checks the fields; errors name the field.
    pub fn validate(&self) -> Result<(), FtlError> {
        crate::config::over_provisioning("telomere", self.over_provisioning)?;
        crate::config::gc_free_blocks("telomere", self.gc_free_blocks, " (pool GC needs a free block to copy into)")?;
        for (i, t) in self.tasks.iter().enumerate() {
            let task = t.task(i);
            if t.lifetime_ms < 0.0 || !t.lifetime_ms.is_finite() {
                return Err(FtlError::config(
                    "ftl.tasks",
                    format!("telomere task `{}`: lifetime_ms must be >= 0", task.name),
                ));
            }
            task.validate().map_err(|e| FtlError::config("ftl.tasks", format!("telomere.tasks[{i}]: {e}")))?;
        }
        Ok(())
    }

    /// Dies the pool uses: `pool_dies`, or every die when it is 0.
    pub(super) fn pool_die_count(&self, g: &Geometry) -> u32 {
        if self.pool_dies == 0 {
            g.dies()
        } else {
            self.pool_dies.min(g.dies())
        }
    }

    /// Blocks the pool keeps outside any reservation: its GC threshold, one open
    /// block per pool die and one block of slack (as [`crate::schemes::page::pagemap`]).
    pub fn pool_slack(&self, g: &Geometry) -> u32 {
        // Saturating: a hostile gc_free_blocks leaves no pool ("too small"), not an overflow.
        self.gc_free_blocks.saturating_add(self.pool_die_count(g)).saturating_add(1)
    }

    /// The admission device for this medium: its shape, with `P - 2` pages per
    /// block (a group block keeps two pages for its summary, module `summary`),
    /// `t_r` and `t_w` with the channel transfer of a page (the simulator charges
    /// it), `t_w` times `P / (P - 2)` (the summary's two programs shared by the
    /// block's data pages), `t_e`, and as blocks the good blocks less the pool's
    /// slack and one pool block.
    fn device(&self, io: &Io, good: u32) -> Device {
        let g = io.geometry();
        let t = io.timing();
        let xfer = t.transfer(g.page_size + g.oob_size).0;
        let bus = f64::from(g.channels) * f64::from(t.channel_mb_per_s.max(1));
        let data_pages = g.pages_per_block.saturating_sub(super::summary::PAGES).max(1);
        // Each data page carries its share of its block's summary programs.
        let t_w = (t.program_ns + xfer).saturating_mul(u64::from(g.pages_per_block)).div_ceil(u64::from(data_pages));
        Device {
            name: "telomere FTL device".into(),
            pages_per_block: data_pages,
            blocks: u64::from(good.saturating_sub(self.pool_slack(g) + 1)),
            parallel_units: g.dies(),
            page_size: g.page_size,
            t_r_ns: t.read_ns + xfer,
            t_w_ns: t_w,
            t_e_ns: t.erase_ns,
            lambda: 1.0,
            read_bandwidth_mb_s: bus,
            write_bandwidth_mb_s: bus,
            gc_job: Default::default(),
        }
    }

    /// Admits the task set on the device behind `io` and reserves its blocks.
    pub fn plan(&self, io: &Io) -> Result<Plan, FtlError> {
        self.validate()?;
        let g = *io.geometry();
        let good = (0..g.total_blocks()).filter(|&b| !io.is_bad(BlockId(b))).count() as u32;
        let tasks: Vec<Task> = self.tasks.iter().enumerate().map(|(i, t)| t.task(i)).collect();
        if self.pool_dies > g.dies() {
            return Err(FtlError::config(
                "ftl.pool_dies",
                format!(
                    "telomere.pool_dies is {} but the device has {} dies: use 0 (every die) up to {}",
                    self.pool_dies,
                    g.dies(),
                    g.dies()
                ),
            ));
        }
        if !tasks.is_empty() && g.pages_per_block < super::summary::PAGES + 2 {
            return Err(FtlError::config(
                "device.pages_per_block",
                format!(
                    "telomere with tasks needs at least {} pages per block (a task block keeps {} for its summary), \
                 the device has {}",
                    super::summary::PAGES + 2,
                    super::summary::PAGES,
                    g.pages_per_block
                ),
            ));
        }
        if let Some(t) = tasks.iter().find(|t| t.granularity > g.dies()) {
            return Err(FtlError::config(
                "ftl.tasks",
                format!(
                    "telomere task `{}`: granularity {} exceeds the device's {} dies",
                    t.name,
                    t.granularity,
                    g.dies()
                ),
            ));
        }
        let mut groups = Vec::new();
        let mut group_of_task = vec![None; tasks.len()];
        let mut verdicts = Vec::new();
        let mut stream_pages = 0u64;
        if !tasks.is_empty() {
            let device = self.device(io, good);
            let set = TaskSet::new(device.clone(), tasks.clone())
                .map_err(|e| FtlError::config("ftl.tasks", e.to_string()))?;
            let policy = match self.policy {
                Placement::Sip => Policy::Sip,
                Placement::Sharp => Policy::Sharp,
            };
            // Eq. 20, then chip by chip with the stripes as this FTL places them
            // (ftlab_bounds::telomere::chips): a page's time also counts the
            // transfers of the other dies on its channel.
            let xfer = io.timing().transfer(g.page_size + g.oob_size).0;
            let channel_wait_ns = u64::from(g.ways_per_channel * g.dies_per_way).saturating_sub(1) * xfer;
            let a = admit_with(&set, policy, Some(ChipCheck { channel_wait_ns }))
                .map_err(|e| FtlError::config("ftl.tasks", e.to_string()))?;
            verdicts = a
                .tasks
                .iter()
                .map(|v| StreamVerdict {
                    name: v.name.clone(),
                    admitted: v.admitted,
                    reason: v.refused_by.map(|t| match (t, v.excess) {
                        (Test::Storage, Some(x)) => format!(
                            "storage: needs {} blocks with the tasks admitted before it, {x:.0} more than the {} \
                             for tasks ({})",
                            v.storage_needed,
                            device.blocks,
                            policy.name()
                        ),
                        (Test::Throughput, Some(x)) => {
                            format!("throughput: EDF load {:.4}, {x:.4} over 1 (Eq. 20)", v.throughput_load)
                        }
                        (Test::Chip, Some(x)) => format!(
                            "throughput: die {} loaded {:.4}, {x:.4} over 1, with the tasks striped as placed \
                             (ftlab_bounds::telomere::chips)",
                            v.chip.unwrap_or(0),
                            1.0 + x
                        ),
                        (t, _) => format!("{t:?}"),
                    }),
                })
                .collect();
            let refused: Vec<String> = verdicts
                .iter()
                .filter(|v| !v.admitted)
                .map(|v| format!("`{}` ({})", v.name, v.reason.as_deref().unwrap_or("?")))
                .collect();
            if self.strict_admission && !refused.is_empty() {
                return Err(FtlError::config(
                    "ftl.tasks",
                    format!(
                        "telomere ({}) refuses task(s) {} on this device ({} blocks for tasks): drop or shrink them, \
                     use a larger device, or set strict_admission = false to send their writes to the pool",
                        policy.name(),
                        refused.join(", "),
                        device.blocks
                    ),
                ));
            }
            stream_pages = (0..tasks.len())
                .filter(|&i| verdicts[i].admitted)
                .map(|i| tasks[i].write_pages.saturating_mul(tasks[i].lifetime_periods.saturating_add(1)))
                .fold(0u64, u64::saturating_add);
            let admitted: Vec<usize> = (0..tasks.len()).filter(|&i| verdicts[i].admitted).collect();
            let refs: Vec<&Task> = admitted.iter().map(|&i| &tasks[i]).collect();
            let mut placed = stripes(&refs, policy, &device);
            for p in &mut placed {
                // Indices into the configured tasks; blocks as this FTL stripes them.
                p.tasks = p.tasks.iter().map(|&k| admitted[k]).collect();
                p.blocks = p.blocks.max(uniform_stripe_blocks(&tasks, &p.tasks, &device));
            }
            let reserved: u64 = placed.iter().map(|p| p.blocks).sum();
            if reserved > device.blocks {
                return Err(FtlError::config(
                    "ftl.tasks",
                    format!(
                    "telomere (sharp): striping each partition over its widest task's granularity needs {reserved} \
                     blocks, more than the {} for tasks: give the tasks of similar lifetimes one granularity",
                    device.blocks
                ),
                ));
            }
            for (k, p) in placed.into_iter().enumerate() {
                let (idx, blocks, first_die, width) = (p.tasks, p.blocks, p.first_chip, p.width);
                for &i in &idx {
                    group_of_task[i] = Some(k as u32);
                }
                let lifetime_ns = idx
                    .iter()
                    .map(|&i| tasks[i].lifetime_periods.saturating_add(1).saturating_mul(tasks[i].write_period_ns))
                    .max()
                    .unwrap_or(0);
                groups.push(Group {
                    names: idx.iter().map(|&i| tasks[i].name.clone()).collect(),
                    quota: u32::try_from(blocks).unwrap_or(u32::MAX),
                    first_die,
                    width,
                    lifetime_ns,
                });
            }
        }
        let reserved: u64 = groups.iter().map(|x| u64::from(x.quota)).sum();
        let pool = u64::from(good).saturating_sub(reserved + u64::from(self.pool_slack(&g)));
        let logical = ((pool * u64::from(g.pages_per_block)) as f64 * (1.0 - self.over_provisioning)).floor() as u64;
        if logical == 0 {
            return Err(FtlError::config(
                "device",
                format!(
                    "the device is too small for telomere: {good} good blocks, {reserved} reserved for tasks, {} for \
                 the pool's GC and open blocks",
                    self.pool_slack(&g)
                ),
            ));
        }
        if logical.saturating_add(stream_pages) > u64::from(u32::MAX) {
            return Err(FtlError::config(
                "device",
                format!(
                "telomere: {logical} logical pages and {stream_pages} for the tasks' data exceed 2^32 pages: use a \
                 smaller device or shorter lifetimes"
            ),
            ));
        }
        let periods = tasks.iter().map(|t| (t.write_period_ns, t.lifetime_periods)).collect();
        Ok(Plan {
            groups,
            group_of_task,
            periods,
            logical_pages: logical as u32,
            stream_pages: stream_pages as u32,
            verdicts,
        })
    }
}

/// Blocks a SharP partition needs when all its tasks are striped over the widest
/// task's `g` dies, as they are here (one set of open blocks per partition).
/// Eq. 13 sizes each task at its own `g`; a narrow task sharing wide stripes fills
/// each block more slowly, so its data holds more blocks than Eq. 13 says.
fn uniform_stripe_blocks(tasks: &[Task], idx: &[usize], device: &Device) -> u64 {
    let width = idx.iter().map(|&i| tasks[i].granularity).max().unwrap_or(1);
    let striped: Vec<Task> = idx.iter().map(|&i| tasks[i].clone().with_granularity(width)).collect();
    let refs: Vec<&Task> = striped.iter().collect();
    sharp_blocks(&refs, device)
}
