//! FlashTier's SSC evaluation (`003_9b28d6a0046a8156.txt` Section 3.3): the
//! filebench personalities ([`ftlab_workload::filebench`]) through a cache
//! manager ([`crate::host::cache`]) over a flash cache and a disk ([`crate::host::disk`]),
//! for the five systems No-Cache, SSD-WB, SSD-WT, SSC-WB and SSC-WT.
//!
//! # The run
//!
//! Filebench's threads run closed loop: each thread issues its next flowop
//! when its previous one completes, the flowop's block I/Os one after the
//! other; the thread whose flowop completes first goes next (ties by thread
//! number). A run first runs `warmup_ops` flowops to fill the cache (the
//! paper's runs start on a cache already full, "to force garbage
//! collection"), then measures `ops` flowops: counters are differences over
//! the measurement, time runs from the start of its first flowop. Its throughput is flowops per
//! simulated second (filebench's ops/s); its latency is the mean response of
//! the flowops that do I/O.
//!
//! # The devices
//!
//! The cache device ([`FlashtierConfig::device_toml`]) is the OpenSSD Jasmine
//! board of Section 2 (`jasmine-openssd`: 8 banks over 4 channels, 4 MiB erase
//! blocks) with 4 KiB pages, one cache block each. Per page it takes the
//! optimized FTL's cost (Section 3.1: a merge buffer packs eight 4 KiB writes
//! into one 32 KiB virtual page): a program is 1300 / 8 = 163 us, a read
//! 60 us (one t_R), an erase 3 ms. The SSD system runs `pagemap` (the
//! optimized baseline is page-mapped) and the SSC `ssc`, both holding back
//! 7% of the flash. The disk is [`DiskConfig::default`], the WD1502FAEX.
//! The SSC keeps its map by per-write OOB logging or, with
//! [`FlashtierConfig::ssc_consistency`] `log`, by the prototype's map log and
//! checkpoints ([`ftlab_ftl::ssc::Consistency`]).
//!
//! # Metadata and recovery
//!
//! Each outcome counts the device's map programs (the SSC's records or log
//! pages; [`ftlab_ftl::Purpose::Map`]) and checkpoint programs
//! ([`ftlab_ftl::Purpose::Checkpoint`]) over the measurement. After the
//! integrity check, [`run`] flushes an SSC system's device, cuts its power when the
//! flush completes, and recovers it ([`Recovery`]): the simulated time of the
//! recovery, and the dirty blocks before and after, which must match (every
//! dirty block acknowledged before a completed flush survives, dirty).
//!
//! # Integrity
//!
//! Every write carries a fresh 64-bit token and the run remembers the last
//! token of each block. Every read during the run, and a read of every
//! written block through the manager after it, must return that token (0 for
//! a block never written): the number of blocks that did not is
//! [`Outcome::integrity_errors`].

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use serde::{Deserialize, Serialize};

use ftlab_ftl::ssc::Consistency;
use ftlab_ftl::Purpose;
use ftlab_nand::{SimTime, StoreKind};
use ftlab_workload::filebench::{BlockIo, FilePick, Filebench, FilebenchSpec, Personality};

use crate::config::RunConfig;
use crate::device::Device;
use crate::error::SimError;
use crate::host::cache::{CacheConfig, CacheError, CacheManager, CacheStats, Mode, NoCache, SscCache, SsdCache};
use crate::host::disk::{Disk, DiskConfig, DiskCounters};
use crate::host::ssc::SscCommand;
use crate::host::HostError;
use crate::metrics::Latency;

/// A system of the evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum System {
    /// The disk alone.
    NoCache,
    /// FlashCache over an SSD.
    Ssd(Mode),
    /// FlashTier's manager over the SSC.
    Ssc(Mode),
}

impl System {
    /// The five systems, in the paper's order.
    pub const ALL: [System; 5] = [
        System::NoCache,
        System::Ssd(Mode::WriteBack),
        System::Ssd(Mode::WriteThrough),
        System::Ssc(Mode::WriteBack),
        System::Ssc(Mode::WriteThrough),
    ];

    /// `no-cache`, `ssd-wb`, ...
    pub fn name(self) -> String {
        match self {
            System::NoCache => "no-cache".into(),
            System::Ssd(m) => format!("ssd-{}", m.short()),
            System::Ssc(m) => format!("ssc-{}", m.short()),
        }
    }
}

/// One configuration of the reproduction. Every field has a documented
/// default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FlashtierConfig {
    /// Bytes of files. Default 75 GB (the paper's partition).
    pub data_bytes: u64,
    /// Bytes of flash in the cache device. Default 8 GiB (the paper's).
    pub flash_bytes: u64,
    /// 4 KiB pages per erase block. Default 1024 (4 MiB, the Jasmine's).
    pub pages_per_block: u32,
    /// Flowops run first to fill the cache, not measured. Default 4,000,000.
    pub warmup_ops: u64,
    /// Flowops measured per run, after the warm-up. Default 2,000,000.
    pub ops: u64,
    /// Threads; `None` keeps each personality's filebench count.
    pub threads: Option<u32>,
    /// The seed of the workload. Default 1.
    pub seed: u64,
    /// The FTL of the SSD system (any registered FTL without task admission).
    /// Default `pagemap` (the paper's optimized baseline is page-mapped).
    pub ssd_ftl: String,
    /// The managers' policy (the mode is set per system).
    pub cache: CacheConfig,
    /// The disk.
    pub disk: DiskConfig,
    /// How the SSC keeps its map across a power cut: `oob` (per-write OOB
    /// logging) or `log` (the prototype's map log and checkpoints). Default
    /// `oob`.
    pub ssc_consistency: Consistency,
    /// With `ssc_consistency = log`: whether a flush checkpoints the whole
    /// map (the prototype's "we trigger a checkpoint as part of flush"), or
    /// only writes out the log (checkpoints then come after a number of log
    /// pages and when idle, FlashTier's fixed schedule). Default true.
    #[serde(skip_serializing_if = "is_true")]
    pub ssc_flush_checkpoint: bool,
    /// How filebench's flowops choose files. Default `uniform` (ftlab's
    /// original choice; filebench's own is `rotor`).
    #[serde(skip_serializing_if = "is_uniform")]
    pub file_pick: FilePick,
    /// Bytes of disk the file layout spans, if more than 1.5 x the data set.
    /// Default 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub layout_bytes: u64,
}

fn is_true(v: &bool) -> bool {
    *v
}

fn is_uniform(v: &FilePick) -> bool {
    *v == FilePick::Uniform
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl Default for FlashtierConfig {
    fn default() -> Self {
        FlashtierConfig {
            data_bytes: 75_000_000_000,
            flash_bytes: 8 << 30,
            pages_per_block: 1024,
            warmup_ops: 4_000_000,
            ops: 2_000_000,
            threads: None,
            seed: 1,
            ssd_ftl: "pagemap".into(),
            cache: CacheConfig::default(),
            disk: DiskConfig::default(),
            ssc_consistency: Consistency::Oob,
            ssc_flush_checkpoint: true,
            file_pick: FilePick::Uniform,
            layout_bytes: 0,
        }
    }
}

impl FlashtierConfig {
    /// The paper's scale: 8 GiB of flash before 75 GB of data.
    pub fn paper() -> FlashtierConfig {
        FlashtierConfig::default()
    }

    /// The paper's scale divided by `factor` (same flash:data ratio), with
    /// the warm-up divided too and `ops` flowops measured.
    pub fn scaled(factor: u64, ops: u64) -> FlashtierConfig {
        let p = FlashtierConfig::paper();
        let factor = factor.max(1);
        FlashtierConfig {
            data_bytes: p.data_bytes / factor,
            flash_bytes: p.flash_bytes / factor,
            pages_per_block: if factor >= 16 { 256 } else { 1024 },
            warmup_ops: p.warmup_ops / factor,
            ops,
            ..p
        }
    }

    /// A CI-sized configuration: 16 MiB of flash in blocks of 32 pages before
    /// 150 MB of data (the paper's ratio), 20,000 flowops of warm-up, `ops`
    /// flowops measured.
    pub fn ci(ops: u64) -> FlashtierConfig {
        FlashtierConfig {
            data_bytes: 150_000_000,
            flash_bytes: 16 << 20,
            pages_per_block: 32,
            warmup_ops: 20_000,
            ops,
            ..FlashtierConfig::paper()
        }
    }

    /// The `[device]` and `[ftl]` tables of the cache device for FTL `kind`.
    pub fn device_toml(&self, kind: &str) -> Result<String, SimError> {
        let dies = 8u64;
        let block = u64::from(self.pages_per_block) * 4096;
        let blocks = self.flash_bytes / (dies * block.max(1));
        if self.pages_per_block == 0 || blocks < 16 {
            return Err(SimError::config(
                "flashtier.flash_bytes",
                format!(
                "flashtier: {} bytes of flash in 8 dies of {}-page blocks is fewer than 16 blocks per die: give more \
                 flash_bytes or fewer pages_per_block",
                self.flash_bytes, self.pages_per_block
            ),
            ));
        }
        let reserve = match (kind, self.ssc_consistency) {
            ("ssc", Consistency::Oob) => "reserve = 0.07",
            ("ssc", Consistency::Log) if !self.ssc_flush_checkpoint => {
                "reserve = 0.07\nconsistency = \"log\"\ncheckpoint_on_flush = false"
            }
            ("ssc", Consistency::Log) => "reserve = 0.07\nconsistency = \"log\"",
            _ => "over_provisioning = 0.07",
        };
        Ok(format!(
            "seed = {seed}\n[device]\nchip = \"jasmine-openssd\"\npage_size = 4096\noob_size = 128\n\
             pages_per_block = {ppb}\nblocks_per_plane = {blocks}\n\
             [device.timing]\nread_ns = 60000\nread_oob_ns = 60000\nprogram_ns = 163000\nerase_ns = 3000000\n\
             channel_mb_per_s = 80\n[ftl]\nkind = \"{kind}\"\n{reserve}\n",
            seed = self.seed,
            ppb = self.pages_per_block,
        ))
    }

    /// The cache device for FTL `kind`, formatted, keeping tokens.
    pub fn device(&self, kind: &str) -> Result<Device, SimError> {
        let config = RunConfig::from_toml(&self.device_toml(kind)?, "flashtier device")?;
        Device::open_with_store(&config, StoreKind::Token)
    }

    /// The manager of `system`, over a new disk and device.
    pub fn manager(&self, system: System) -> Result<Box<dyn CacheManager>, HostError> {
        let disk = Disk::new(self.disk).map_err(|e| match e {
            crate::host::disk::DiskError::Config { field, .. } => {
                SimError::config(format!("flashtier.disk.{field}"), e.to_string())
            }
            e => SimError::config("flashtier.disk", e.to_string()),
        })?;
        let cfg = |mode| CacheConfig { mode, ..self.cache };
        let err = |e: CacheError| HostError::Cache { system: system.name().to_string(), source: Box::new(e) };
        Ok(match system {
            System::NoCache => Box::new(NoCache::new(disk)),
            System::Ssd(mode) => Box::new(SsdCache::new(cfg(mode), disk, self.device(&self.ssd_ftl)?).map_err(err)?),
            System::Ssc(mode) => Box::new(SscCache::new(cfg(mode), disk, self.device("ssc")?).map_err(err)?),
        })
    }

    /// The workload of `personality` at this scale.
    pub fn workload(&self, personality: Personality) -> Result<Filebench, SimError> {
        let spec = FilebenchSpec {
            personality,
            data_bytes: self.data_bytes,
            threads: self.threads,
            pick: self.file_pick,
            layout_bytes: self.layout_bytes,
        };
        let fb = Filebench::new(spec, self.seed).map_err(SimError::Trace)?;
        if fb.disk_blocks() > self.disk.blocks {
            return Err(SimError::config(
                "flashtier.data_bytes",
                format!(
                    "flashtier: the data set needs {} disk blocks, the disk has {}",
                    fb.disk_blocks(),
                    self.disk.blocks
                ),
            ));
        }
        Ok(fb)
    }
}

/// What a run measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    pub workload: &'static str,
    pub system: String,
    /// Flowops run before the measurement (counters below leave them out).
    pub warmup_ops: u64,
    /// Flowops measured.
    pub ops: u64,
    /// Simulated time of the measurement, ns: from the start of its first
    /// flowop to the end of the last one.
    pub sim_ns: u64,
    /// When the run ended, ns.
    pub end_ns: u64,
    /// Flowops per simulated second.
    pub ops_per_s: f64,
    /// Mean response of the flowops that did I/O, us.
    pub mean_latency_us: f64,
    /// Of that mean, the time spent waiting for disk commands and for flash
    /// commands on each block I/O's critical path
    /// ([`crate::host::cache::Completion`]), us; the two add up to it.
    pub disk_wait_us: f64,
    pub flash_wait_us: f64,
    /// Flash erases (all purposes).
    pub erases: u64,
    /// Pages garbage collection copied.
    pub gc_copies: u64,
    /// Flash pages programmed (all purposes).
    pub flash_programs: u64,
    /// Clean blocks the SSC evicted silently.
    pub silent_evictions: u64,
    /// Blocks read or written that the run found wrong (0: the check passed).
    pub integrity_errors: u64,
    /// Blocks the final check read.
    pub checked_blocks: u64,
    /// Flash pages programmed for the host.
    pub host_programs: u64,
    /// Flash pages programmed for the map (the SSC's records or log pages).
    pub map_programs: u64,
    /// Flash pages programmed for checkpoints.
    pub checkpoint_programs: u64,
    /// The SSC's flush, power cut and recovery after the run ([`run`] only;
    /// `None` for the other systems and from [`run_on`]).
    pub recovery: Option<Recovery>,
    pub cache: CacheStats,
    pub disk: DiskCounters,
}

/// Runs `personality` on `system` at `config`'s scale.
pub fn run(config: &FlashtierConfig, personality: Personality, system: System) -> Result<Outcome, HostError> {
    let mut manager = config.manager(system)?;
    let mut fb = config.workload(personality)?;
    let mut o = run_on(config, &mut fb, &mut *manager, system, &mut HashMap::new())?;
    if let (System::Ssc(_), Some(device)) = (system, manager.device_mut()) {
        let err = |e: CacheError| HostError::Cache { system: system.name().to_string(), source: Box::new(e) };
        o.recovery = Some(recover_after(device, SimTime(o.end_ns)).map_err(err)?);
    }
    Ok(o)
}

/// Runs `fb` through `manager` for `config.ops` flowops, then checks every
/// written block (see the [module documentation](self)). `last` is the last
/// token written to each block (empty for a fresh disk), updated by the run.
pub fn run_on(
    config: &FlashtierConfig,
    fb: &mut Filebench,
    manager: &mut dyn CacheManager,
    system: System,
    last: &mut HashMap<u64, u64>,
) -> Result<Outcome, HostError> {
    let err = |e: CacheError| HostError::Cache { system: system.name().to_string(), source: Box::new(e) };
    let threads = fb.spec().threads() as usize;
    let mut ready: BinaryHeap<Reverse<(u64, usize)>> = (0..threads).map(|t| Reverse((0, t))).collect();
    let mut next_token = last.values().max().map_or(1, |t| t + 1);
    let mut errors = 0u64;
    let mut latency = Latency::default();
    let (mut disk_ns, mut flash_ns) = (0u128, 0u128);
    let mut end = 0u64;
    let mut before = Snapshot::of(manager);
    let mut t0 = 0u64;
    for i in 0..config.warmup_ops + config.ops {
        let Some(Reverse((start, thread))) = ready.pop() else { break };
        if i == config.warmup_ops {
            // Measurement starts here: counters from now on.
            before = Snapshot::of(manager);
            t0 = start;
        }
        let flowop = fb.next(thread);
        let mut now = SimTime(start);
        let (mut disk, mut flash) = (0u64, 0u64);
        for io in &flowop.ios {
            let done = match *io {
                BlockIo::Read { block, len } => {
                    let (done, tokens) = manager.read(now, block, len).map_err(err)?;
                    for (b, t) in (block..).zip(tokens) {
                        errors += u64::from(last.get(&b).copied().unwrap_or(0) != t);
                    }
                    done
                }
                BlockIo::Write { block, len } => {
                    let tokens: Vec<u64> = (next_token..next_token + len).collect();
                    next_token += len;
                    for (b, &t) in (block..).zip(&tokens) {
                        last.insert(b, t);
                    }
                    manager.write(now, block, &tokens).map_err(err)?
                }
                BlockIo::Fsync => manager.fsync(now).map_err(err)?,
            };
            now = done.done;
            disk += done.disk_ns;
            flash += done.flash_ns;
        }
        if !flowop.ios.is_empty() && i >= config.warmup_ops {
            latency.record(now.0.saturating_sub(start));
            disk_ns += u128::from(disk);
            flash_ns += u128::from(flash);
        }
        end = end.max(now.0);
        ready.push(Reverse((now.0, thread)));
    }
    let after = Snapshot::of(manager);
    let (checked_blocks, final_errors) = check(manager, last, SimTime(end)).map_err(err)?;
    let ops = config.ops;
    let span = end.saturating_sub(t0);
    let summary = latency.summary();
    let per_flowop = |ns: u128| if summary.count == 0 { 0.0 } else { ns as f64 / summary.count as f64 / 1000.0 };
    Ok(Outcome {
        workload: fb.spec().personality.name(),
        system: system.name(),
        warmup_ops: config.warmup_ops,
        ops,
        sim_ns: span,
        end_ns: end,
        ops_per_s: if span == 0 { 0.0 } else { ops as f64 * 1e9 / span as f64 },
        mean_latency_us: summary.mean,
        disk_wait_us: per_flowop(disk_ns),
        flash_wait_us: per_flowop(flash_ns),
        erases: after.erases - before.erases,
        gc_copies: after.gc_copies - before.gc_copies,
        flash_programs: after.flash_programs - before.flash_programs,
        silent_evictions: after.silent_evictions - before.silent_evictions,
        integrity_errors: errors + final_errors,
        checked_blocks,
        host_programs: after.host_programs - before.host_programs,
        map_programs: after.map_programs - before.map_programs,
        checkpoint_programs: after.checkpoint_programs - before.checkpoint_programs,
        recovery: None,
        cache: after.cache.since(&before.cache),
        disk: after.disk.since(&before.disk),
    })
}

/// The counters of a manager, its disk and its device at one moment.
#[derive(Debug, Clone, Copy)]
struct Snapshot {
    erases: u64,
    gc_copies: u64,
    flash_programs: u64,
    silent_evictions: u64,
    host_programs: u64,
    map_programs: u64,
    checkpoint_programs: u64,
    cache: CacheStats,
    disk: DiskCounters,
}

impl Snapshot {
    fn of(manager: &mut dyn CacheManager) -> Snapshot {
        let (erases, gc_copies, flash_programs) = manager.device().map_or((0, 0, 0), |d| {
            let c = d.counters();
            (c.erases, c.gc_page_copies, c.flash_pages_programmed)
        });
        let programs = |p| manager.device().map_or(0, |d| d.flash().counters().programs.get(p));
        Snapshot {
            erases,
            gc_copies,
            flash_programs,
            host_programs: programs(Purpose::Host),
            map_programs: programs(Purpose::Map),
            checkpoint_programs: programs(Purpose::Checkpoint),
            silent_evictions: manager.device_mut().and_then(|d| d.ssc_state()).map_or(0, |s| s.evictions),
            cache: manager.stats(),
            disk: manager.disk().counters(),
        }
    }
}

/// Reads every block of `last` through `manager` from `at`: blocks checked and
/// blocks wrong.
pub fn check(manager: &mut dyn CacheManager, last: &HashMap<u64, u64>, at: SimTime) -> Result<(u64, u64), CacheError> {
    let mut blocks: Vec<(&u64, &u64)> = last.iter().collect();
    blocks.sort_unstable();
    let mut now = at;
    let mut wrong = 0;
    for (&b, &t) in &blocks {
        let (done, got) = manager.read(now, b, 1)?;
        now = done.done;
        wrong += u64::from(got.first() != Some(&t));
    }
    Ok((blocks.len() as u64, wrong))
}

/// An SSC's recovery after a run: flushed at the end of the run, power cut
/// when the flush completed, recovered from the medium.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Recovery {
    /// Simulated time of the recovery (the scan and, in log mode, reading the
    /// checkpoint and the log), ns.
    pub ns: u64,
    /// Dirty blocks at the cut, and after the recovery (equal, or the device
    /// lost dirty data).
    pub dirty_before: u64,
    pub dirty_after: u64,
    /// Cached blocks at the cut, and after the recovery (clean blocks may go).
    pub cached_before: u64,
    pub cached_after: u64,
}

/// Flushes `device` at `at`, cuts its power when the flush completed and
/// recovers it.
fn recover_after(device: &mut Device, at: SimTime) -> Result<Recovery, CacheError> {
    let flushed = device.ssc(at, SscCommand::Flush)?.completed;
    let before = device.ssc_state().unwrap_or_default();
    device.cut_power(flushed)?;
    device.recover()?;
    let after = device.ssc_state().unwrap_or_default();
    Ok(Recovery {
        ns: device.counters().now_ns.saturating_sub(flushed.0),
        dirty_before: before.dirty,
        dirty_after: after.dirty,
        cached_before: before.cached,
        cached_after: after.cached,
    })
}
