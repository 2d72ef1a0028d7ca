//! MQSim's configuration files as ftlab runs: `ssdconfig.xml` (the device)
//! and `workload.xml` (scenarios of host flows), read into one
//! [`ftlab_sim::RunConfig`] a scenario, with the settings ftlab does not model
//! named in the config's `unsupported` list (and so in every report).
//!
//! ```no_run
//! use std::path::Path;
//! use ftlab_lab::mqsim::{import, Options};
//!
//! let scenarios = import(Path::new("ssdconfig.xml"), Path::new("workload.xml"), &Options::default())?;
//! for s in &scenarios {
//!     for w in &s.config.unsupported {
//!         eprintln!("scenario {}: not modelled: {w}", s.index);
//!     }
//!     let report = ftlab_sim::run(&s.config, &mut |_| {})?;
//!     for f in &report.flows {
//!         println!("{}: {:.1} us, slowdown {:?}", f.name, f.response_us.mean, f.slowdown);
//!     }
//! }
//! # Ok::<(), ftlab_lab::LabError>(())
//! ```
//!
//! The mapping: MQSim's geometry and latencies become `[device]` (one latency
//! per operation: the mean of the LSB/CSB/MSB values the cell type uses; the
//! channel rate is `Channel_Transfer_Rate` x `Flash_Channel_Width` MB/s);
//! the page-level FTL becomes `pagemap` with `gc_model = "mqsim"`, greedy
//! victims, `gc_free_blocks` = `GC_Exec_Threshold` of each plane's blocks
//! (truncated, as MQSim does) x planes; `Overprovisioning_Ratio`,
//! `Use_Copyback_for_GC`, `Block_PE_Cycles_Limit` and `Seed` carry over;
//! `Enabled_Preconditioning` fills the logical space first; each flow of a
//! scenario becomes a `[[flow]]` (`Queue_Fetch_Size` is `host.fetch_size`, per flow).

mod device;
mod workload;
mod xml;

use std::path::Path;

use ftlab_ftl::schemes::page::pagemap::Partition;
use ftlab_sim::config::{DeviceSpec, FtlSpec, HostSpec, MetricsSpec, PreconditionSpec};
use ftlab_sim::RunConfig;

use crate::LabError;

/// MQSim's sector, bytes: its request sizes and addresses count these.
const SECTOR: u32 = 512;

/// Changes to the imported setup, each recorded in `unsupported`.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Replaces `Block_No_Per_Plane` (a smaller device for a quick run).
    pub blocks_per_plane: Option<u32>,
    /// Fills the logical space before measuring even when
    /// `Enabled_Preconditioning` is false.
    pub precondition_fill: bool,
    /// Runs each flow alone too, for its slowdown (`metrics.slowdown`): one
    /// more run a flow, which MQSim does not make. Default false.
    pub slowdown: bool,
}

/// One `IO_Scenario`, ready to run.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Its number in the workload file, from 1.
    pub index: usize,
    /// The run: device, FTL, host and flows; `config.unsupported` names what
    /// ftlab does not model.
    pub config: RunConfig,
}

/// `ftl` with each flow's resources as `ftl.partitions` (none: `ftl` as it
/// is): MQSim places each flow's logical pages on the channels, chips, dies
/// and planes its `*_IDs` list (`Address_Mapping_Unit_Page_Level.cpp`, one
/// address mapping domain a flow).
fn with_partitions(ftl: &FtlSpec, partitions: &[Partition]) -> FtlSpec {
    let mut ftl = ftl.clone();
    if !partitions.is_empty() {
        let list = Vec::from_iter(partitions.iter().map(|p| {
            let ids = |v: &[u32]| toml::Value::Array(v.iter().map(|&i| toml::Value::Integer(i64::from(i))).collect());
            let mut t = toml::Table::new();
            for (k, v) in [("channels", &p.channels), ("ways", &p.ways), ("dies", &p.dies), ("planes", &p.planes)] {
                if !v.is_empty() {
                    t.insert(k.into(), ids(v));
                }
            }
            toml::Value::Table(t)
        }));
        ftl.params.insert("partitions".into(), toml::Value::Array(list));
    }
    ftl
}

/// One cached mapping table a flow (`ftl.cmt_domains`), as MQSim gives each
/// flow's address mapping domain its own: with `CMT_Sharing_Mode=SHARED` the
/// table is created inside the loop over the flows, so each gets one of the
/// whole `CMT_Capacity` (`Address_Mapping_Unit_Page_Level.cpp:322-338`, the
/// `new Cached_Mapping_Table` at 338 runs once a flow; the domain keeps it at
/// 212-214); with `EQUAL_PARTITIONING` each gets its part (340-341, 208-210).
fn cmt_domains(ftl: &mut FtlSpec, sharing: &str, flows: usize, out: &mut Vec<String>) {
    let Some(entries) = ftl.params.get("cmt_entries").and_then(toml::Value::as_integer) else { return };
    if flows < 2 {
        return;
    }
    let each = if sharing == "SHARED" { entries } else { entries / flows as i64 };
    ftl.params.insert("cmt_entries".into(), toml::Value::Integer(each.max(1)));
    ftl.params.insert("cmt_domains".into(), toml::Value::Integer(flows as i64));
    let why = if sharing == "SHARED" {
        "MQSim creates the SHARED table once a flow, inside its loop over the flows \
         (Address_Mapping_Unit_Page_Level.cpp:322-338), so each flow has a table of the whole CMT_Capacity, not a \
         share of one"
    } else {
        "EQUAL_PARTITIONING gives each flow its part of CMT_Capacity (Address_Mapping_Unit_Page_Level.cpp:340-341)"
    };
    out.push(format!(
        "CMT_Sharing_Mode={sharing}: each of the {flows} flows has its own cached mapping table of {} entries and its \
         own translation pages (ftl.cmt_domains = {flows}, ftl.cmt_entries = {}): {why}",
        each.max(1),
        each.max(1)
    ));
}

/// Queues garbage collection and host programs per die as MQSim's
/// transaction scheduler does (`ftl.gc_queue`), unless a data cache's
/// write-backs reach the flash (whose estimates cannot follow queued
/// programs); says which in `out`.
fn gc_queue(ftl: &mut FtlSpec, data_cache: bool, out: &mut Vec<String>) {
    if data_cache {
        out.push(
            "TSU (transaction scheduling) with the data cache: garbage collection's copies and erases are \
             booked on a die's timeline when the victim is picked, one plane at a time, where MQSim queues them \
             in the chip's queues, serves them before the host's transactions (its urgent mode, always on with \
             garbage collection not preemptible: TSU_Priority_OutOfOrder.cpp, service_read_transaction and \
             service_write_transaction) and pairs \
             those of a die's planes at one page offset (TSU_Base.cpp:97-135, issue_command_to_chip): a die \
             whose planes collect together takes up to twice as long here. ftl.gc_queue models that, but not \
             under the data cache, whose write-back estimates cannot follow programs booked later"
                .into(),
        );
        return;
    }
    ftl.params.insert("gc_queue".into(), toml::Value::Boolean(true));
    out.push(
        "TSU (transaction scheduling): garbage collection's reads, programs and erases and every host program \
         wait in their chip's queues and go to the chip as it falls free, garbage collection first (MQSim's \
         urgent mode, always on with garbage collection not preemptible: reads, then programs, then erases, \
         then the host's reads and programs; \
         TSU_Priority_OutOfOrder.cpp, service_read_transaction, service_write_transaction, \
         service_erase_transaction), each with the first queued one of each other plane of its die at the same \
         page offset as one multi-plane command (TSU_Base.cpp:97-135, issue_command_to_chip) (ftl.gc_queue = \
         true). A page's data moves when its write arrives or its victim is picked; the GC reads do not pair \
         with host reads"
            .into(),
    );
}

/// Reads MQSim's `ssd` configuration and `workload` definitions: one run a
/// scenario. A file that cannot be read, is not MQSim's, or has a value MQSim
/// would reject is [`LabError::Mqsim`], naming the file, the line and the
/// element.
pub fn import(ssd: &Path, workload: &Path, options: &Options) -> Result<Vec<Scenario>, LabError> {
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|error| LabError::Read { path: p.to_path_buf(), error });
    let device = device::read(ssd, &read(ssd)?, options)?;
    let scenarios = workload::read(workload, &read(workload)?, &device)?;
    Ok(scenarios
        .into_iter()
        .enumerate()
        .map(|(i, (flows, flow_notes, uses_cache, partitions))| {
            let mut unsupported = device.unsupported.clone();
            unsupported.extend(flow_notes);
            let mut ftl = with_partitions(&device.ftl, &partitions);
            if let Some(sharing) = &device.cmt_sharing {
                cmt_domains(&mut ftl, sharing, flows.len(), &mut unsupported);
            }
            let data_cache = if uses_cache { device.cache.clone() } else { None };
            gc_queue(&mut ftl, data_cache.is_some(), &mut unsupported);
            if options.precondition_fill && !device.precondition {
                unsupported.push(
                    "Enabled_Preconditioning=false overridden: the logical space is filled first (--precondition-fill)"
                        .into(),
                );
            }
            let config = RunConfig {
                device: DeviceSpec { data_cache, ..device.device.clone() },
                ftl,
                // Queue_Fetch_Size bounds each submission queue's requests in
                // the device (Host_Interface_NVMe.cpp:44-47).
                host: HostSpec {
                    fetch_size: Some(device.fetch_size),
                    fetch_per_flow: Some(true),
                    dispatch: Some(device.dispatch),
                    // Its scheduler sends a chip the reads waiting for other
                    // planes of a die at one page offset with the read it
                    // takes (TSU_Base.cpp:85-140).
                    multi_plane_reads: (device.device.planes.unwrap_or(1) > 1).then_some(true),
                    ..HostSpec::default()
                },
                precondition: PreconditionSpec {
                    fill: device.precondition || options.precondition_fill,
                    ..PreconditionSpec::default()
                },
                seed: Some(device.seed),
                metrics: MetricsSpec { slowdown: Some(options.slowdown), ..MetricsSpec::default() },
                flows,
                unsupported,
                ..RunConfig::default()
            };
            Scenario { index: i + 1, config }
        })
        .collect())
}
