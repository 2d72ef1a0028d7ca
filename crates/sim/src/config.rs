//! Run configuration: what a TOML file or the command line says, and its
//! validation into what the engine runs. Unknown keys are errors that name them;
//! every default is written on its field.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use ftlab_nand::presets::{self, ChipPreset};
use ftlab_nand::{Commands, Geometry, NandConfig, StoreKind, Timing, WearConfig};
use ftlab_workload::generate::Arrival;
use ftlab_workload::{AddressMode, GeneratorSpec, TraceFormat};

use crate::error::SimError;

/// A whole run, as written in a TOML file. Every table is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    pub device: DeviceSpec,
    pub ftl: FtlSpec,
    pub workload: WorkloadSpec,
    pub host: HostSpec,
    pub precondition: PreconditionSpec,
    pub metrics: MetricsSpec,
    /// Seed of every random draw of the run (default 1).
    pub seed: Option<u64>,
    /// `[[flow]]`: several host flows sharing the device instead of one
    /// `[workload]` ([`crate::flows`]; default none).
    #[serde(rename = "flow", skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowSpec>,
    /// Settings of an imported configuration (`ftlab mqsim`) that ftlab does
    /// not model, by name: copied into the report's `unsupported` so they are
    /// never silently dropped (default none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unsupported: Vec<String>,
}

/// `[device]`: a chip preset and any geometry or timing overrides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeviceSpec {
    /// Chip preset (default `small-slc`; `ftlab presets` lists them).
    pub chip: String,
    pub channels: Option<u32>,
    /// Ways (chips) per channel.
    pub ways: Option<u32>,
    /// Dies per way.
    pub dies: Option<u32>,
    /// Planes per die.
    pub planes: Option<u32>,
    pub blocks_per_plane: Option<u32>,
    pub pages_per_block: Option<u32>,
    pub page_size: Option<u32>,
    pub oob_size: Option<u32>,
    /// Raw capacity in GiB: sets `blocks_per_plane` to reach it (rounded down).
    pub capacity_gib: Option<f64>,
    /// Fraction of the physical space hidden from the host; passed to the FTL as
    /// its `over_provisioning` key.
    pub over_provisioning: Option<f64>,
    /// Explicit timing instead of the preset's.
    pub timing: Option<Timing>,
    /// Energy of each flash operation, nJ (default none: the report has no
    /// `energy` section; [`crate::energy::EnergySpec`]).
    pub energy: Option<crate::energy::EnergySpec>,
    /// Factory bad-block rate (default 0).
    pub bad_block_rate: f64,
    /// Page store: `token` (default) or `bytes`.
    pub store: StoreKind,
    /// GC moves within a plane use copyback (default true).
    pub copyback: bool,
    /// RBER wear model parameters (000 Eq. 27). `endurance_cycles` defaults to
    /// the chip preset's rated endurance.
    pub wear: WearConfig,
    /// Pages of write-back buffer in device RAM in front of the FTL (default
    /// none): writes are acknowledged from it and reach the FTL when it is full,
    /// on flush and in idle time; durability becomes "on flush"
    /// (`ftlab_ftl::buffer`).
    pub write_buffer_pages: Option<u32>,
    /// Flash pages of read buffer in device DRAM (default none): a host read
    /// brings the whole flash page in, later host reads of it are served from
    /// DRAM until it is evicted, least recently used first
    /// (`ftlab_ftl::read_buffer`).
    pub read_buffer_pages: Option<u32>,
    /// What the read buffer holds pages for: `cache` (the default: until
    /// evicted, serving later requests) or `stage` (for the request that read
    /// them only, as a buffer that stages pages on their way to the host).
    /// Needs `read_buffer_pages`.
    pub read_buffer_mode: Option<ReadBufferMode>,
    /// DRAM copy rate of the write and read buffers, MB/s (10^6 bytes a second;
    /// default: copies take no time): every page the host writes into the
    /// write buffer or reads from it, and every page a read takes out of the
    /// read buffer, is a copy at this rate, one at a time per buffer
    /// (`ftlab_ftl::buffer`, `ftlab_ftl::read_buffer`). Needs a buffer.
    pub dram_mb_per_s: Option<f64>,
    /// Host link rate, MB/s (default: no link cost): a write's data crosses the
    /// link before the FTL sees it, a read's after its flash work, one transfer
    /// at a time ([`crate::host_link`]).
    pub host_mb_per_s: Option<f64>,
    /// Controller firmware time per command, us (default 0), spent one command
    /// at a time before its flash work ([`crate::host_link`]).
    pub command_overhead_us: Option<f64>,
    /// Rate of write data over the host link, MB/s (default: the link's rate,
    /// `host_mb_per_s`, which it needs): for a link whose writes are slower than
    /// its reads ([`crate::host_link`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_write_mb_per_s: Option<f64>,
    /// MQSim's write cache in device DRAM (`[device.data_cache]`, default
    /// none): writes are acknowledged when their bytes are in DRAM, cold pages
    /// are written back at once, hot ones stay until evicted, and writes wait
    /// while the write-backs in flight reach a limit; durability becomes "on
    /// flush" (`ftlab_ftl::data_cache`). `ftlab mqsim` sets it from
    /// `Caching_Mechanism=ADVANCED` with `WRITE_CACHE` flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_cache: Option<DataCacheSpec>,
    /// The chip's advanced commands (`[device.commands]`, all off by default):
    /// multi-plane operations, cache program, suspension of programs and
    /// erases for host reads (`ftlab_nand::commands`).
    #[serde(skip_serializing_if = "Commands::is_none")]
    pub commands: Commands,
}

/// `[device.data_cache]`: MQSim's write cache (`ftlab_ftl::data_cache`), its
/// DRAM keys named and defaulted as MQSim's `Data_Cache_*` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataCacheSpec {
    /// Pages the cache holds (MQSim: `Data_Cache_Capacity` / page size).
    pub pages: u32,
    /// DRAM row, bytes (default 8,192).
    #[serde(default = "DataCacheSpec::row")]
    pub dram_row_bytes: u32,
    /// DRAM transfers a second, millions (default 800).
    #[serde(default = "DataCacheSpec::rate")]
    pub dram_mt_per_s: u32,
    /// Bytes a DRAM burst carries (default 4).
    #[serde(default = "DataCacheSpec::burst")]
    pub dram_burst_bytes: u32,
    /// tRCD, ns (default 13).
    #[serde(default = "DataCacheSpec::t13")]
    pub dram_trcd_ns: u64,
    /// tCL, ns (default 13).
    #[serde(default = "DataCacheSpec::t13")]
    pub dram_tcl_ns: u64,
    /// tRP, ns (default 13).
    #[serde(default = "DataCacheSpec::t13")]
    pub dram_trp_ns: u64,
    /// Sectors (512 bytes) the write-backs in flight may hold before writes
    /// wait (default: planes x sectors per page, MQSim's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writeback_limit_sectors: Option<u64>,
    /// How long a written page stays hot, ms (default 1,000, MQSim's).
    #[serde(default = "DataCacheSpec::window")]
    pub hot_window_ms: f64,
    /// Write-backs wait in a queue of their die and are issued when it falls
    /// free, so host reads pass them, as with MQSim's transaction scheduler
    /// (default true; it needs an FTL that places each page's writes on a
    /// fixed die, the page map's `gc_model = "mqsim"`; otherwise, or false,
    /// each is issued at once and a read waits behind all of them).
    #[serde(default = "DataCacheSpec::yes")]
    pub queue_writebacks: bool,
}

impl DataCacheSpec {
    fn row() -> u32 {
        8192
    }
    fn rate() -> u32 {
        800
    }
    fn burst() -> u32 {
        4
    }
    fn t13() -> u64 {
        13
    }
    fn window() -> f64 {
        1000.0
    }
    fn yes() -> bool {
        true
    }

    /// The layer's settings, or the key that is out of range.
    pub fn params(&self) -> Result<ftlab_ftl::data_cache::DataCacheParams, SimError> {
        let ms = self.hot_window_ms;
        if !(ms.is_finite() && ms > 0.0 && ms <= 1e9) {
            return Err(SimError::config(
                "device.data_cache.hot_window_ms",
                format!("device.data_cache.hot_window_ms must be more than 0 and at most 1e9 ms, got {ms}"),
            ));
        }
        let dram = ftlab_ftl::data_cache::DramTiming {
            row_bytes: self.dram_row_bytes,
            mt_per_s: self.dram_mt_per_s,
            burst_bytes: self.dram_burst_bytes,
            trcd_ns: self.dram_trcd_ns,
            tcl_ns: self.dram_tcl_ns,
            trp_ns: self.dram_trp_ns,
        };
        Ok(ftlab_ftl::data_cache::DataCacheParams {
            pages: self.pages,
            dram,
            writeback_limit_sectors: self.writeback_limit_sectors,
            hot_window_ns: (ms * 1e6).round() as u64,
            queue_writebacks: self.queue_writebacks,
        })
    }
}

impl Default for DeviceSpec {
    fn default() -> Self {
        DeviceSpec {
            chip: "small-slc".into(),
            channels: None,
            ways: None,
            dies: None,
            planes: None,
            blocks_per_plane: None,
            pages_per_block: None,
            page_size: None,
            oob_size: None,
            capacity_gib: None,
            over_provisioning: None,
            timing: None,
            energy: None,
            bad_block_rate: 0.0,
            store: StoreKind::Token,
            copyback: true,
            wear: WearConfig::default(),
            write_buffer_pages: None,
            read_buffer_pages: None,
            read_buffer_mode: None,
            dram_mb_per_s: None,
            host_mb_per_s: None,
            command_overhead_us: None,
            host_write_mb_per_s: None,
            data_cache: None,
            commands: Commands::default(),
        }
    }
}

impl DeviceSpec {
    /// Sets what the device configures on the medium's wrapper: copyback and
    /// the read buffer. Errors name the key.
    pub fn configure_flash(&self, flash: &mut ftlab_ftl::Flash) -> Result<(), SimError> {
        flash.set_copyback(self.copyback);
        let buffer = match self.read_buffer_pages {
            None => None,
            Some(pages) => {
                let ps = match self.dram_mb_per_s {
                    Some(r) => ftlab_ftl::dram::ps_per_byte(r)
                        .map_err(|e| SimError::config("device.dram_mb_per_s", format!("device.dram_mb_per_s {e}")))?,
                    None => 0,
                };
                Some(
                    ftlab_ftl::read_buffer::ReadBuffer::new(pages, ps)
                        .map_err(|e| SimError::config("device.read_buffer_pages", e.to_string()))?
                        .stage_only(self.read_buffer_mode == Some(ReadBufferMode::Stage)),
                )
            }
        };
        flash.set_read_buffer(buffer);
        Ok(())
    }

    /// The host link and controller model `host_mb_per_s` and
    /// `command_overhead_us` describe, if any.
    pub fn host_link(&self) -> Result<Option<crate::host_link::HostLink>, SimError> {
        if self.host_write_mb_per_s.is_some() && self.host_mb_per_s.is_none() {
            return Err(SimError::config(
                "device.host_write_mb_per_s",
                "device.host_write_mb_per_s needs device.host_mb_per_s (the link's rate for reads)",
            ));
        }
        match crate::host_link::HostLink::new(self.host_mb_per_s, self.command_overhead_us)? {
            Some(link) => Ok(Some(link.with_write_rate(self.host_write_mb_per_s)?)),
            None => Ok(None),
        }
    }

    /// The chip preset named by `chip`.
    pub fn preset(&self) -> Result<&'static ChipPreset, SimError> {
        presets::preset(&self.chip).ok_or_else(|| {
            SimError::config(
                "device.chip",
                format!(
                    "unknown chip `{}` in device.chip; known chips: {}",
                    self.chip,
                    presets::names().collect::<Vec<_>>().join(", ")
                ),
            )
        })
    }

    /// Refuses a device whose tables cannot fit in this machine's memory (or
    /// under the process's address-space limit), before anything is
    /// allocated: a device of 2 TiB needs about 8 GiB of them, and running
    /// out of memory aborts the process with no message.
    fn check_memory(&self, g: &Geometry) -> Result<(), SimError> {
        let need = g.total_pages() as u64 * TABLE_BYTES_PER_PAGE;
        let Some((limit, what)) = memory_limit() else { return Ok(()) };
        if need <= limit {
            return Ok(());
        }
        let key = if self.capacity_gib.is_some() { "device.capacity_gib" } else { "device.blocks_per_plane" };
        let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
        Err(SimError::config(
            key,
            format!(
                "the device has {} physical pages, whose tables need at least {:.1} GiB of memory \
                 ({TABLE_BYTES_PER_PAGE} bytes a page for the medium's records and the FTL's maps), \
                 more than {what} ({:.1} GiB); choose a smaller {key}",
                g.total_pages(),
                gib(need),
                gib(limit)
            ),
        ))
    }

    /// The least memory this device's tables take, bytes
    /// ([`TABLE_BYTES_PER_PAGE`] a physical page).
    pub fn table_bytes(&self, seed: u64) -> Result<u64, SimError> {
        Ok(self.nand_config(seed)?.geometry.total_pages() as u64 * TABLE_BYTES_PER_PAGE)
    }

    /// The medium configuration.
    pub fn nand_config(&self, seed: u64) -> Result<NandConfig, SimError> {
        let chip = self.preset()?;
        let mut g: Geometry = chip.geometry;
        let set = |v: Option<u32>, f: &mut u32| {
            if let Some(v) = v {
                *f = v;
            }
        };
        set(self.channels, &mut g.channels);
        set(self.ways, &mut g.ways_per_channel);
        set(self.dies, &mut g.dies_per_way);
        set(self.planes, &mut g.planes_per_die);
        set(self.blocks_per_plane, &mut g.blocks_per_plane);
        set(self.pages_per_block, &mut g.pages_per_block);
        set(self.page_size, &mut g.page_size);
        set(self.oob_size, &mut g.oob_size);
        if let Some(gib) = self.capacity_gib {
            if self.blocks_per_plane.is_some() {
                return Err(SimError::config(
                    "device.capacity_gib",
                    "device.capacity_gib and device.blocks_per_plane both given; set only one",
                ));
            }
            if !(gib > 0.0 && gib.is_finite()) {
                return Err(SimError::config(
                    "device.capacity_gib",
                    format!("device.capacity_gib must be positive, got {gib}"),
                ));
            }
            // In f64: six u32 factors of a hostile shape overflow u64.
            let per_block_plane_column =
                [g.channels, g.ways_per_channel, g.dies_per_way, g.planes_per_die, g.pages_per_block, g.page_size]
                    .iter()
                    .map(|&f| f64::from(f))
                    .product::<f64>();
            let blocks = (gib * (1u64 << 30) as f64 / per_block_plane_column.max(1.0)).floor();
            if blocks < 1.0 || blocks > f64::from(u32::MAX) {
                return Err(SimError::config("device.capacity_gib", format!(
                    "device.capacity_gib = {gib} gives {blocks} blocks per plane for this shape; choose another capacity"
                )));
            }
            g.blocks_per_plane = blocks as u32;
        }
        g.validate().map_err(|e| SimError::config("device", format!("device: {e}")))?;
        self.check_memory(&g)?;
        let timing = self.timing.unwrap_or(chip.timing);
        timing.validate().map_err(|e| SimError::config("device.timing", format!("device.{e}")))?;
        self.commands.validate().map_err(|e| SimError::config("device.commands", format!("device.{e}")))?;
        if let Some(energy) = &self.energy {
            energy.validate()?;
        }
        Ok(NandConfig {
            geometry: g,
            timing,
            bad_block_rate: self.bad_block_rate,
            // The chip's rated endurance, unless `[device.wear] endurance_cycles`
            // was set (to anything but the generic default).
            wear: if self.wear.endurance_cycles == WearConfig::default().endurance_cycles {
                WearConfig { endurance_cycles: chip.endurance_cycles, ..self.wear }
            } else {
                self.wear
            },
            store: self.store,
            seed,
            faults: Default::default(),
            commands: self.commands,
        })
    }
}

/// `[ftl]`: `kind` and the scheme's own keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FtlSpec {
    /// FTL name (default `pagemap`; `ftlab presets` lists them).
    #[serde(default = "default_ftl")]
    pub kind: String,
    /// The scheme's own keys.
    #[serde(flatten)]
    pub params: toml::Table,
}

fn default_ftl() -> String {
    "pagemap".into()
}

impl Default for FtlSpec {
    fn default() -> Self {
        FtlSpec { kind: default_ftl(), params: toml::Table::new() }
    }
}

/// `[workload]`: a trace, a generator (by preset name or as a table), or a set
/// of periodic real-time tasks. With none given, the `skewed-random-write` preset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkloadSpec {
    /// A trace file (gzip, bzip2 or zstd compressed or plain).
    pub trace: Option<PathBuf>,
    /// Its format (`ftlab presets` lists them).
    pub trace_format: Option<String>,
    /// How trace addresses are folded into the logical space: `modulo` (default),
    /// `compact`, `concat` or `device:N`.
    pub address: Option<String>,
    /// Count and skip malformed trace lines instead of stopping (default false).
    pub skip_bad_lines: bool,
    /// Replays the trace this many times back to back (default 1): every pass
    /// has the trace's requests and addresses, its arrivals shifted to start
    /// one mean inter-arrival gap after the previous pass's last request. For
    /// traces too short to reach a steady state.
    pub repeat: Option<u32>,
    /// A built-in generator by name.
    pub preset: Option<String>,
    /// A generator given in full (`kind = "zipf"`, ...).
    pub generator: Option<GeneratorSpec>,
    /// The unit a generator's sizes and addresses count in, bytes (default: the
    /// device's logical page), as fio's block size: e.g. 4096 makes
    /// `size = { kind = "fixed", pages = 1 }` a 4 KiB request on a device of
    /// 32 KiB pages. A multiple of 512; generators only.
    pub block_bytes: Option<u32>,
    /// Periodic real-time tasks.
    #[serde(rename = "task")]
    pub tasks: Vec<TaskSpec>,
    /// How long task sets run, in milliseconds of simulated time (default 1000).
    pub duration_ms: Option<f64>,
    /// Stop after this many requests.
    pub max_requests: Option<u64>,
    /// End the measured run once this fraction of the good blocks has reached the
    /// retirement RBER `device.wear.retirement_rber` (000 Section 6.2 runs until
    /// 0.02); checked before each request is dispatched. Default: no such stop.
    pub stop_at_retired_fraction: Option<f64>,
    /// A host-side placement policy setting each write's stream (the FDP
    /// handle, zns-host's open zone): `{ policy = "none" | "volume" |
    /// "lifetime" | "oracle", streams = N }` ([`crate::placement`]).
    /// Default: none given (writes carry a generator's lifetime labels, if
    /// any).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<crate::placement::PlacementSpec>,
}

/// A periodic real-time task (000 Section 3.1; 001/002 task model): every
/// `write_period_us` it writes `write_pages` pages, every `read_period_us` it reads
/// `read_pages` of its most recently written pages. Each job's deadline is its
/// release plus its period. Data written lives `lifetime_us`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    pub name: String,
    #[serde(default)]
    pub write_period_us: Option<f64>,
    #[serde(default)]
    pub write_pages: u32,
    #[serde(default)]
    pub read_period_us: Option<f64>,
    #[serde(default)]
    pub read_pages: u32,
    /// Data lifetime; default: as long as the run.
    #[serde(default)]
    pub lifetime_us: Option<f64>,
    /// When the task's reads start (default 0).
    #[serde(default)]
    pub read_start_us: f64,
    /// Dies its pages are striped over, for FTLs that admit tasks (Telomere's `g`;
    /// default 1).
    #[serde(default)]
    pub granularity: Option<u32>,
}

/// `[host]`: how requests reach the device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostSpec {
    /// Requests outstanding at once (default 32; task sets default to
    /// [`TASK_QUEUE_DEPTH`], so that every released job is in the device and EDF
    /// chooses among them).
    pub queue_depth: Option<u32>,
    /// `open` (requests arrive at their timestamps) or `closed` (issued as fast as
    /// the queue depth allows; response time counts from issue). Default: open for
    /// traces and task sets, and for generators with an arrival process; closed
    /// otherwise.
    pub mode: Option<LoopMode>,
    /// Multiply trace timestamps by this (default 1; 0.5 replays twice as fast).
    pub time_scale: f64,
    /// Idle gaps at least this long are offered to the FTL's background work
    /// (default 1000 us).
    pub idle_threshold_us: f64,
    /// Unsorted traces are sorted within a window of this many requests (default 4096).
    pub reorder_window: usize,
    /// How requests reach the flash (default `request`, `per-die-edf` for task
    /// sets; see [`Dispatch`]).
    pub dispatch: Option<Dispatch>,
    /// `[[flow]]` runs only: requests of all flows in the device at once
    /// (MQSim's `Queue_Fetch_Size`; default no limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetch_size: Option<u32>,
    /// `fetch_size` bounds each flow's requests in the device rather than all
    /// flows' together (default false): MQSim's `Queue_Fetch_Size` is per
    /// submission queue (`Host_Interface_NVMe.cpp:44-47`, `:102-116`), and the
    /// import sets it. Needs `fetch_size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetch_per_flow: Option<bool>,
    /// Logical pages the host uses, from the first (default: all the FTL
    /// exports): the workload's addresses, the flows' parts and the
    /// preconditioning fill stay within them, as a partition smaller than the
    /// disk. `ftlab compare` sets it to the smallest space of the FTLs it
    /// compares, so that each keeps the same data on the same flash.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logical_pages: Option<u64>,
    /// Closed-loop runs only: consecutive requests of the same kind whose byte
    /// ranges follow each other are merged into one device request of at most
    /// this many bytes before the host queue, as an operating system's block
    /// layer merges them (default: no merging; [`crate::merge`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge_bytes: Option<u32>,
    /// `[[flow]]`s dispatched per die only (`per-die-priority` or
    /// `per-die-edf`), on a chip with `device.commands.multi_plane`: a die
    /// that takes a waiting read takes with it, as one multi-plane read, the
    /// reads waiting in the same class for its other planes at the same page
    /// offset, as MQSim's transaction scheduler does (`TSU_Base.cpp`,
    /// `issue_command_to_chip`). Default false; the MQSim import sets it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multi_plane_reads: Option<bool>,
}

impl Default for HostSpec {
    fn default() -> Self {
        HostSpec {
            queue_depth: None,
            mode: None,
            time_scale: 1.0,
            idle_threshold_us: 1000.0,
            reorder_window: 4096,
            dispatch: None,
            fetch_size: None,
            fetch_per_flow: None,
            logical_pages: None,
            merge_bytes: None,
            multi_plane_reads: None,
        }
    }
}

/// How the requests the host queue lets through reach the flash.
/// What the read buffer holds pages for ([`DeviceSpec::read_buffer_mode`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadBufferMode {
    /// Until evicted, least recently used first: later requests are served
    /// from DRAM.
    #[default]
    Cache,
    /// For the request that read them only.
    Stage,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dispatch {
    /// A dispatched request hands all its pages to the FTL at once; each die
    /// serves the operations reserved on it in dispatch order (host reads
    /// before queued programs and erases with `device.commands.reads_first`).
    #[default]
    Request,
    /// Requests are split into page commands carrying their request's deadline
    /// (its arrival when it has none, the host queue's key); each die takes,
    /// when it is free, the waiting command with the earliest deadline (ties:
    /// arrival), and a command is handed to the FTL only then (see
    /// [`crate::engine`]'s per-die dispatch). With `[[flow]]`, whose
    /// requests have no deadlines, each die takes the read that arrived first.
    PerDieEdf,
    /// `[[flow]]` runs only: a read waits in its die's queue for its flow's
    /// priority class until the die can start it, and each die takes its
    /// urgent reads first, then the other classes by weighted round robin
    /// (high 4, medium 2, low 1), as MQSim's `PRIORITY_OUT_OF_ORDER`
    /// transaction scheduler does (`TSU_Priority_OutOfOrder.cpp`,
    /// `get_next_read_service_queue`); writes and trims go to the FTL when
    /// fetched.
    PerDiePriority,
}

/// Open or closed loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoopMode {
    Open,
    Closed,
}

/// `[precondition]`: bring the device to a steady state before measuring.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PreconditionSpec {
    /// Write the whole logical space sequentially first.
    pub fill: bool,
    /// Then overwrite this many logical spaces' worth of uniformly random pages.
    pub random_overwrites: f64,
    /// Start measuring at the first garbage-collection erase of the workload
    /// (001 Section 6.1).
    pub start_at_first_gc: bool,
}

/// `[metrics]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsSpec {
    /// Width of the throughput time series buckets in ms (default: adaptive, at
    /// most 4096 buckets).
    pub interval_ms: Option<f64>,
    /// Holds every page command to this service time, in microseconds, instead
    /// of the FTL's own bound (default: the FTL's, none for schemes that promise
    /// none), so any scheme can be compared against a real-time scheme's promise.
    pub bound_us: Option<f64>,
    /// With `[[flow]]`s, also run each flow alone on a fresh device for its
    /// slowdown (shared mean / alone mean): one more run a flow. Default
    /// true; `ftlab mqsim` sets it false unless `--slowdown` (MQSim makes no
    /// such runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown: Option<bool>,
    /// Writes every measured request's response time to this file, one line
    /// a request in fio's latency-log layout (`write_lat_log`): completion
    /// time in ms since measuring started, response time in ns, direction
    /// (0 read, 1 write, 2 trim), bytes, byte offset, priority (0). Created
    /// (or truncated) when the run starts; left out: no log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_log: Option<std::path::PathBuf>,
}

/// `path` with `.tag` before its extension (`lat.log` and tag `7`:
/// `lat.7.log`; `lat`: `lat.7`): the latency log of one of several runs
/// (`metrics.latency_log` in a sweep or a comparison).
pub fn tagged_path(path: &std::path::Path, tag: &str) -> std::path::PathBuf {
    let stem = path.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let name = match path.extension() {
        Some(ext) => format!("{stem}.{tag}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{tag}"),
    };
    path.with_file_name(name)
}

/// The longest bound `metrics.bound_us` takes: an hour, in microseconds.
const MAX_BOUND_US: f64 = 3.6e9;

impl MetricsSpec {
    /// `bound_us` in nanoseconds, validated.
    pub fn bound_ns(&self) -> Result<Option<u64>, SimError> {
        match self.bound_us {
            None => Ok(None),
            Some(us) if us > 0.0 && us <= MAX_BOUND_US => Ok(Some((us * 1e3).round() as u64)),
            Some(us) => Err(SimError::config(
                "metrics.bound_us",
                format!(
                "metrics.bound_us (--bound-us) must be a positive service time of at most {MAX_BOUND_US} us, got {us}"
            ),
            )),
        }
    }
}

/// Where requests come from, validated.
#[derive(Debug, Clone)]
pub enum Source {
    Trace { path: PathBuf, format: TraceFormat, address: AddressMode, skip_bad_lines: bool, repeat: u32 },
    Generator { name: String, spec: GeneratorSpec, block_bytes: Option<u32> },
    Tasks { tasks: Vec<TaskSpec>, duration_ns: u64 },
}

impl Source {
    /// A short description for reports.
    pub fn describe(&self) -> String {
        match self {
            Source::Trace { path, format, repeat: 1, .. } => format!("{} ({})", path.display(), format.name()),
            Source::Trace { path, format, repeat, .. } => {
                format!("{} ({}) x {repeat}", path.display(), format.name())
            }
            Source::Generator { name, .. } => name.clone(),
            Source::Tasks { tasks, .. } => format!("{} periodic tasks", tasks.len()),
        }
    }
}

impl WorkloadSpec {
    /// The validated source.
    pub fn source(&self) -> Result<Source, SimError> {
        let given = [self.trace.is_some(), self.preset.is_some(), self.generator.is_some(), !self.tasks.is_empty()];
        if given.iter().filter(|&&g| g).count() > 1 {
            return Err(SimError::config("workload", "workload: give only one of trace, preset, generator or task"));
        }
        if let Some(p) = &self.placement {
            if !self.tasks.is_empty() {
                return Err(SimError::config(
                    "workload.placement",
                    "workload.placement sets the streams of a trace's or a generator's writes; periodic tasks have \
                     theirs (their task index): leave it out",
                ));
            }
            p.validate(self.trace.is_some())?;
        }
        if self.max_requests == Some(0) {
            // A run of nothing would report numbers of nothing.
            return Err(SimError::config(
                "workload.max_requests",
                "workload.max_requests (--requests) = 0 runs nothing: give at least 1, or leave it out",
            ));
        }
        if self.block_bytes.is_some() && (self.trace.is_some() || !self.tasks.is_empty()) {
            return Err(SimError::config(
                "workload.block_bytes",
                "workload.block_bytes is the unit of a generator's sizes and addresses; traces give bytes and \
                 tasks pages: leave it out",
            ));
        }
        if let Some(path) = &self.trace {
            let format = self.trace_format.as_deref().ok_or_else(|| {
                SimError::config(
                    "workload.trace_format",
                    format!(
                        "workload.trace_format is required with a trace; one of: {}",
                        TraceFormat::all().iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
                    ),
                )
            })?;
            let format: TraceFormat = format
                .parse()
                .map_err(|e| SimError::config("workload.trace_format", format!("workload.trace_format: {e}")))?;
            let address = match &self.address {
                Some(a) => {
                    a.parse().map_err(|e| SimError::config("workload.address", format!("workload.address: {e}")))?
                }
                None => AddressMode::Modulo,
            };
            let repeat = self.repeat.unwrap_or(1);
            if repeat == 0 {
                return Err(SimError::config(
                    "workload.repeat",
                    "workload.repeat = 0 replays nothing: give at least 1 (the default), or leave it out",
                ));
            }
            return Ok(Source::Trace {
                path: path.clone(),
                format,
                address,
                skip_bad_lines: self.skip_bad_lines,
                repeat,
            });
        }
        if self.trace_format.is_some() || self.address.is_some() || self.repeat.is_some() {
            return Err(SimError::config(
                "workload.trace",
                "workload.trace_format, workload.address and workload.repeat need workload.trace",
            ));
        }
        if !self.tasks.is_empty() {
            for t in &self.tasks {
                t.validate()?;
            }
            let ms = self.duration_ms.unwrap_or(1000.0);
            if !(ms > 0.0 && ms.is_finite()) {
                return Err(SimError::config(
                    "workload.duration_ms",
                    format!("workload.duration_ms must be positive, got {ms}"),
                ));
            }
            if ms * 1e6 > LATEST_NS {
                return Err(SimError::config(
                    "workload.duration_ms",
                    format!(
                    "workload.duration_ms = {ms:e} is past the latest simulated time (3 x 2^62 ns, about 438 years): \
                     give a shorter run"
                ),
                ));
            }
            return Ok(Source::Tasks { tasks: self.tasks.clone(), duration_ns: (ms * 1e6) as u64 });
        }
        if let Some(b) = self.block_bytes {
            if b == 0 || b % 512 != 0 {
                return Err(SimError::config(
                    "workload.block_bytes",
                    format!("workload.block_bytes must be a positive multiple of 512 bytes, got {b}"),
                ));
            }
        }
        let block_bytes = self.block_bytes;
        if let Some(spec) = &self.generator {
            spec.validate().map_err(|e| SimError::config("workload.generator", format!("workload.generator: {e}")))?;
            self.check_max_requests(spec, &format!("the workload.generator ({})", spec.kind()))?;
            return Ok(Source::Generator { name: spec.kind().to_string(), spec: spec.clone(), block_bytes });
        }
        let name = self.preset.clone().unwrap_or_else(|| "skewed-random-write".into());
        let spec = GeneratorSpec::preset(&name).ok_or_else(|| {
            SimError::config(
                "workload.preset",
                format!(
                    "unknown workload preset `{name}`; known: {}",
                    GeneratorSpec::presets().iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
                ),
            )
        })?;
        self.check_max_requests(&spec, &format!("workload preset `{name}`"))?;
        Ok(Source::Generator { name, spec, block_bytes })
    }

    /// `max_requests` above the requests a generator issues would end the run
    /// early with fewer requests than asked: an error, before time zero.
    fn check_max_requests(&self, spec: &GeneratorSpec, what: &str) -> Result<(), SimError> {
        match (self.max_requests, spec.requests()) {
            (Some(max), Some(n)) if max > n => Err(SimError::config(
                "workload.max_requests",
                format!(
                    "workload.max_requests (--requests) = {max} is more than the {n} requests {what} issues: \
                 give at most {n}, or a generator table with `requests = {max}` (ftlab presets workloads shows \
                 each preset's table)"
                ),
            )),
            _ => Ok(()),
        }
    }
}

impl TaskSpec {
    fn validate(&self) -> Result<(), SimError> {
        let bad = |what: String| Err(SimError::config("workload.task", format!("task `{}`: {what}", self.name)));
        for (field, v) in [
            ("write_period_us", self.write_period_us),
            ("read_period_us", self.read_period_us),
            ("lifetime_us", self.lifetime_us),
        ] {
            if let Some(v) = v {
                if !(v > 0.0 && v.is_finite()) {
                    return bad(format!("{field} must be positive, got {v}"));
                }
                if v * 1e3 > LATEST_NS {
                    return bad(format!(
                        "{field} = {v:e} is past the latest simulated time (3 x 2^62 ns, about 438 years): give a shorter time"
                    ));
                }
            }
        }
        if self.write_pages > 0 && self.write_period_us.is_none() {
            return bad("write_pages needs write_period_us".into());
        }
        if self.read_pages > 0 && self.read_period_us.is_none() {
            return bad("read_pages needs read_period_us".into());
        }
        if self.write_pages == 0 && self.read_pages == 0 {
            return bad("a task must read or write at least one page per period".into());
        }
        Ok(())
    }
}

/// [`SimTime::LATEST`](ftlab_nand::SimTime::LATEST) in ns, the bound of every
/// time a configuration gives.
const LATEST_NS: f64 = ftlab_nand::SimTime::LATEST.0 as f64;

/// The default queue depth of task sets: more than their released jobs at once.
pub const TASK_QUEUE_DEPTH: u32 = 4096;

/// How the host issues requests, resolved for a source.
#[derive(Debug, Clone, Copy)]
pub struct Host {
    pub queue_depth: u32,
    pub closed: bool,
    pub time_scale: f64,
    pub idle_threshold_ns: u64,
    pub reorder_window: usize,
}

impl HostSpec {
    /// Validated host settings for `source`.
    pub fn resolve(&self, source: &Source) -> Result<Host, SimError> {
        let is_tasks = matches!(source, Source::Tasks { .. });
        let queue_depth = self.queue_depth.unwrap_or(if is_tasks { TASK_QUEUE_DEPTH } else { 32 });
        if queue_depth == 0 {
            return Err(SimError::config("host.queue_depth", "host.queue_depth must be at least 1"));
        }
        if !(self.time_scale > 0.0 && self.time_scale.is_finite()) {
            return Err(SimError::config(
                "host.time_scale",
                format!("host.time_scale must be positive, got {}", self.time_scale),
            ));
        }
        if !(self.idle_threshold_us >= 0.0 && self.idle_threshold_us.is_finite()) {
            return Err(SimError::config(
                "host.idle_threshold_us",
                format!("host.idle_threshold_us must be >= 0, got {}", self.idle_threshold_us),
            ));
        }
        if self.reorder_window == 0 {
            return Err(SimError::config("host.reorder_window", "host.reorder_window must be at least 1"));
        }
        let closed = match (self.mode, source) {
            (Some(m), _) => m == LoopMode::Closed,
            (None, Source::Generator { spec, .. }) => spec.arrival() == Arrival::Closed,
            (None, _) => false,
        };
        if closed && is_tasks {
            return Err(SimError::config("host.mode", "host.mode = \"closed\" does not apply to periodic tasks"));
        }
        match self.merge_bytes {
            Some(0) => {
                return Err(SimError::config("host.merge_bytes", "host.merge_bytes must be at least 1 (or left out)"));
            }
            Some(_) if !closed => {
                return Err(SimError::config(
                    "host.merge_bytes",
                    "host.merge_bytes applies to closed-loop runs only (host.mode = \"closed\")",
                ));
            }
            _ => {}
        }
        Ok(Host {
            queue_depth,
            closed,
            time_scale: self.time_scale,
            idle_threshold_ns: (self.idle_threshold_us * 1e3) as u64,
            reorder_window: self.reorder_window,
        })
    }
}

impl PreconditionSpec {
    /// The most logical spaces of random overwrites: steady state is reached
    /// after a few, and each costs as many page writes as the device exports.
    pub const MAX_RANDOM_OVERWRITES: f64 = 100.0;

    pub(crate) fn validate(&self) -> Result<(), SimError> {
        if !(self.random_overwrites >= 0.0 && self.random_overwrites.is_finite()) {
            return Err(SimError::config(
                "precondition.random_overwrites",
                format!("precondition.random_overwrites must be >= 0, got {}", self.random_overwrites),
            ));
        }
        if self.random_overwrites > Self::MAX_RANDOM_OVERWRITES {
            return Err(SimError::config(
                "precondition.random_overwrites",
                format!(
                    "precondition.random_overwrites = {} logical spaces is more than the {} allowed: steady state \
                 needs a few; give at most {}",
                    self.random_overwrites,
                    Self::MAX_RANDOM_OVERWRITES,
                    Self::MAX_RANDOM_OVERWRITES
                ),
            ));
        }
        Ok(())
    }
}

/// A flow's priority class (MQSim's NVMe classes); a more urgent class is
/// always fetched first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    Urgent,
    /// The default.
    #[default]
    High,
    Medium,
    Low,
}

impl Priority {
    /// Its name in reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Priority::Urgent => "urgent",
            Priority::High => "high",
            Priority::Medium => "medium",
            Priority::Low => "low",
        }
    }
}

/// `[[flow]]`: one host flow ([`crate::flows`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FlowSpec {
    /// Name in reports (default `flow-1`, `flow-2`, ... in table order).
    pub name: Option<String>,
    /// Its requests: a trace, a preset or a generator, as in `[workload]`
    /// (periodic tasks are not flows).
    pub workload: WorkloadSpec,
    /// Its requests outstanding at once (default 32).
    pub queue_depth: Option<u32>,
    /// Open or closed loop (default: closed for generators without an arrival
    /// process, open otherwise).
    pub mode: Option<LoopMode>,
    /// Priority class (default `high`).
    pub priority: Priority,
    /// Share of the device within its class (default 1).
    pub weight: Option<u32>,
    /// Seed of its generator (default: the run's seed plus the flow's index).
    pub seed: Option<u64>,
    /// The flow ends at its first request that could not start until after
    /// this many ms of the measured run, by its arrival and its own queue
    /// (a wait for a device slot does not end it; MQSim's `Stop_Time`;
    /// default: until its source ends).
    pub stop_ms: Option<f64>,
    /// Multiplies its trace timestamps, on top of `host.time_scale` (default 1;
    /// MQSim's `Time_Unit`).
    pub time_scale: Option<f64>,
    /// The fraction of its part of the logical space it addresses, from the
    /// part's start, in (0, 1] (default 1; MQSim's `Working_Set_Percentage`).
    pub working_set: Option<f64>,
    /// Bytes each request carries from the start of its first page, when
    /// fewer than its pages hold (default: whole pages; MQSim's request sizes
    /// in sectors): a 4 KiB request on 8 KiB pages writes or reads half a
    /// page, a read-modify-write for a write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_bytes: Option<u32>,
    /// The stream its writes carry in their hint (`Hint::stream`): the
    /// placement identifier an FDP device chooses its reclaim unit handle by
    /// (`ftl.kind = "fdp"`), placement by flow. Default: none (an FDP
    /// device's default handle, or the labels of a generator that labels
    /// its data's lifetimes, `lsm` and `flashcache`). Given, it replaces
    /// those labels: all the flow's writes go through one handle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<u32>,
}

/// The dotted key path of the setting at byte `at` of the TOML document `text`
/// (where a parse or deserialization error points): the key of its line under
/// the last `[table]` or `[[array]]` header before it, or the header itself;
/// empty where the line names no key. Inline tables are not looked into.
pub fn key_at(text: &str, at: usize) -> String {
    let at = at.min(text.len());
    let start = text.get(..at).and_then(|t| t.rfind('\n')).map_or(0, |i| i + 1);
    let line = text.get(start..).and_then(|t| t.lines().next()).unwrap_or("").trim();
    let header = |l: &str| {
        let l = l.trim();
        let inner = l.strip_prefix("[[").and_then(|l| l.split("]]").next());
        let inner = inner.or_else(|| l.strip_prefix('[').and_then(|l| l.split(']').next()));
        inner.map(unquote)
    };
    if let Some(h) = header(line) {
        return h;
    }
    let key = line.split('=').next().filter(|_| line.contains('=')).map(unquote).unwrap_or_default();
    let table = text.get(..start).and_then(|t| t.lines().rev().find_map(header)).unwrap_or_default();
    match (table.is_empty(), key.is_empty()) {
        (_, true) => String::new(),
        (true, false) => key,
        (false, false) => format!("{table}.{key}"),
    }
}

/// A dotted key as written (`a."b".c`, with spaces) as its plain path (`a.b.c`).
fn unquote(key: &str) -> String {
    key.split('.').map(|p| p.trim().trim_matches(['"', '\''])).collect::<Vec<_>>().join(".")
}

impl RunConfig {
    /// Parses a TOML document; unknown keys are errors naming them.
    pub fn from_toml(text: &str, origin: &str) -> Result<RunConfig, SimError> {
        toml::from_str(text).map_err(|e: toml::de::Error| {
            let key = e.span().map_or_else(String::new, |span| key_at(text, span.start));
            SimError::config(key, format!("{origin}: {e}"))
        })
    }

    /// Reads a TOML file; a relative `workload.trace` is taken relative to the
    /// file's directory.
    pub fn from_file(path: &std::path::Path) -> Result<RunConfig, SimError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| SimError::config("", format!("cannot read config {}: {e}", path.display())))?;
        let mut config = RunConfig::from_toml(&text, &path.display().to_string())?;
        if let Some(dir) = path.parent() {
            config.resolve_paths(dir);
        }
        Ok(config)
    }

    /// Makes a relative `workload.trace` (and each flow's) relative to `dir`.
    pub fn resolve_paths(&mut self, dir: &std::path::Path) {
        let workloads = std::iter::once(&mut self.workload).chain(self.flows.iter_mut().map(|f| &mut f.workload));
        for w in workloads {
            if let Some(trace) = &mut w.trace {
                if trace.is_relative() {
                    *trace = dir.join(&*trace);
                }
            }
        }
    }

    /// The seed (default 1).
    pub fn seed(&self) -> u64 {
        self.seed.unwrap_or(1)
    }
}

/// Memory a run keeps per physical page, at least: the medium's out-of-band
/// records and the FTL's maps. Measured as peak resident memory between
/// devices of 1 and 5 GiB: 9 (nameless) to 23 (telomere) bytes a page, 50 for
/// the solid-state cache.
pub const TABLE_BYTES_PER_PAGE: u64 = 16;

/// The smaller of this machine's memory and the process's address-space limit,
/// with what it is; `None` where neither is known (outside Linux).
pub(crate) fn memory_limit() -> Option<(u64, &'static str)> {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        let line = m.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some((kib.saturating_mul(1024), "this machine's memory"))
    });
    // "Max address space  <soft>  <hard>  bytes", the soft limit `unlimited`
    // when unset.
    let address_space = std::fs::read_to_string("/proc/self/limits").ok().and_then(|m| {
        let line = m.lines().find(|l| l.starts_with("Max address space"))?;
        let soft: u64 = line["Max address space".len()..].split_whitespace().next()?.parse().ok()?;
        Some((soft, "the process's address-space limit (ulimit -v)"))
    });
    match (total, address_space) {
        (Some(t), Some(a)) => Some(if a.0 < t.0 { a } else { t }),
        (t, a) => t.or(a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_of_a_config_file_name_the_key() {
        for (text, key) in [
            ("[device]\nblocks_per_plan = 3\n", "device.blocks_per_plan"),
            ("seed = 1\n[ftl]\nkind = \"pagemap\"\n[device]\nchip = 3\n", "device.chip"),
            ("sed = 1\n", "sed"),
            ("[devic]\nchip = \"x\"\n", "devic"),
            ("[device]\nchip = \n", "device.chip"),
        ] {
            match RunConfig::from_toml(text, "t") {
                Err(SimError::Config(c)) => assert_eq!(c.key, key, "{text:?}: {}", c.problem),
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }
}
