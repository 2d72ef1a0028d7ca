//! MQSim's `workload.xml` (`MQSim_IO_Scenarios`: one or more `IO_Scenario`s,
//! each one or more flows, trace-based or synthetic) as ftlab `[[flow]]`s.
//! Defaults are MQSim's (`src/exec/IO_Flow_Parameter_Set.cpp`, where the
//! constructor leaves one it sets none: then the element is required).

use ftlab_ftl::schemes::page::pagemap::Partition;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use ftlab_sim::config::{FlowSpec, Priority};
use ftlab_sim::config::{LoopMode, WorkloadSpec};
use ftlab_workload::generate::{Arrival, SizeDist};
use ftlab_workload::GeneratorSpec;

use super::device::Ssd;
use super::xml::Section;
use super::SECTOR;
use crate::LabError;

/// Requests a synthetic flow that stops on time may issue: more than any
/// run reaches.
const UNBOUNDED_REQUESTS: u64 = 1 << 40;

/// One scenario's flows, what of them ftlab does not model, whether its
/// writes go through the device's data cache, and the resources each flow's
/// part of the logical space is placed on (empty: the whole device for all).
pub(super) type Flows = (Vec<FlowSpec>, Vec<String>, bool, Vec<Partition>);

/// The flows of each scenario of `workload.xml` at `path`.
pub(super) fn read(path: &Path, text: &str, ssd: &Ssd) -> Result<Vec<Flows>, LabError> {
    let mut leftovers = Vec::new();
    let text = super::xml::lenient(path, text, &mut leftovers);
    let doc = super::xml::parse(path, &text)?;
    let root = doc.root_element();
    let top = Section::new(path, root.tag_name().name().to_string(), root);
    if root.tag_name().name() != "MQSim_IO_Scenarios" {
        return Err(top.error(
            "",
            "the root element is not <MQSim_IO_Scenarios>: give MQSim's workload definitions (workload.xml) with \
             --workload, the SSD configuration with --ssd",
        ));
    }
    let mut scenarios = Vec::new();
    for (s, node) in root.children().filter(|c| c.is_element()).enumerate() {
        if node.tag_name().name() != "IO_Scenario" {
            leftovers.push(format!("<{}> in MQSim_IO_Scenarios: not an IO_Scenario; ignored", node.tag_name().name()));
            continue;
        }
        let mut flows = Vec::new();
        let mut out = leftovers.clone();
        let mut cached = Vec::new();
        let mut parts = Vec::new();
        for (i, flow) in node.children().filter(|c| c.is_element()).enumerate() {
            let kind = flow.tag_name().name();
            let mut sec = Section::new(path, format!("IO_Scenario {} / {kind} {}", s + 1, i + 1), flow);
            let name = format!("flow-{}", i + 1);
            let spec = match kind {
                "IO_Flow_Parameter_Set_Synthetic" => synthetic(&mut sec, ssd, &name, &mut out)?,
                "IO_Flow_Parameter_Set_Trace_Based" => trace(&mut sec, path, ssd, &name)?,
                _ => {
                    out.push(format!("{}: not a flow MQSim knows; ignored", sec.path));
                    continue;
                }
            };
            let (spec, caching, resources) = common(&mut sec, spec, ssd, &mut out)?;
            cached.push((format!("{name} ({caching})"), caching));
            parts.push(resources);
            sec.unread(&mut out);
            flows.push(spec);
        }
        if flows.is_empty() {
            return Err(Section::new(path, format!("IO_Scenario {}", s + 1), node)
                .error("", "has no IO_Flow_Parameter_Set_Synthetic or IO_Flow_Parameter_Set_Trace_Based: add a flow"));
        }
        let uses_cache = data_cache_notes(&cached, ssd, &mut out);
        // Resource lists: the flows' parts of the logical space go to their
        // own resources (MQSim's address mapping domains) when any flow names
        // less than the whole device.
        if parts.iter().all(|p: &Partition| *p == Partition::default()) {
            parts.clear();
        }
        scenarios.push((flows, out, uses_cache, parts));
    }
    if scenarios.is_empty() {
        return Err(top.error("", "has no <IO_Scenario>: add one with at least one flow"));
    }
    Ok(scenarios)
}

/// Whether a scenario whose flows have the caching modes `cached` (name,
/// mode) writes through the device's data cache, as ftlab models MQSim's
/// `ADVANCED` write cache (`ftlab_ftl::data_cache`); what it does not model is
/// added to `out`.
fn data_cache_notes(cached: &[(String, String)], ssd: &Ssd, out: &mut Vec<String>) -> bool {
    let on: Vec<&str> = cached.iter().filter(|(_, m)| m != "TURNED_OFF").map(|(n, _)| n.as_str()).collect();
    if on.is_empty() {
        return false;
    }
    let writes_cached = cached.iter().all(|(_, m)| m == "WRITE_CACHE" || m == "WRITE_READ_CACHE");
    if ssd.cache.is_none() || !writes_cached {
        let why = if ssd.cache.is_none() {
            "only Caching_Mechanism=ADVANCED is modelled"
        } else {
            "the cache is modelled for a scenario whose flows all use WRITE_CACHE or WRITE_READ_CACHE"
        };
        out.push(format!(
            "Device_Level_Data_Caching_Mode of {} with {}: the device's DRAM data cache is not modelled here ({why}; \
             every request goes to flash)",
            on.join(", "),
            ssd.data_cache
        ));
        return false;
    }
    if cached.iter().any(|(_, m)| m == "READ_CACHE" || m == "WRITE_READ_CACHE") {
        out.push(
            "Device_Level_Data_Caching_Mode=WRITE_READ_CACHE: writes go through the data cache; pages read from \
             flash are not kept in it (its read half is not modelled)"
                .into(),
        );
    }
    if ssd.cache_sharing != "SHARED" {
        out.push(format!(
            "Data_Cache_Sharing_Mode={}: the flows share one data cache and one DRAM queue",
            ssd.cache_sharing
        ));
    }
    true
}

/// The elements both kinds of flow have; returns the flow and its caching mode.
fn common(
    sec: &mut Section,
    mut spec: FlowSpec,
    ssd: &Ssd,
    out: &mut Vec<String>,
) -> Result<(FlowSpec, String, Partition), LabError> {
    let caching = sec.choice(
        "Device_Level_Data_Caching_Mode",
        "WRITE_CACHE",
        &["TURNED_OFF", "WRITE_CACHE", "READ_CACHE", "WRITE_READ_CACHE"],
    )?;
    spec.priority = match sec.choice("Priority_Class", "HIGH", &["URGENT", "HIGH", "MEDIUM", "LOW"])?.as_str() {
        "URGENT" => Priority::Urgent,
        "MEDIUM" => Priority::Medium,
        "LOW" => Priority::Low,
        _ => Priority::High,
    };
    let names = ["Channel_IDs", "Chip_IDs", "Die_IDs", "Plane_IDs"];
    let mut resources = Partition::default();
    for (u, (name, &count)) in names.iter().zip(&ssd.shape).enumerate() {
        let Some(text) = sec.text(name) else { continue };
        let mut ids = Vec::new();
        for id in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let id: u32 = id.parse().map_err(|_| sec.error(name, format!("`{id}` is not a number")))?;
            if id >= count {
                return Err(sec.error(name, format!("id {id} is past the device's {count}; give ids below {count}")));
            }
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        if ids.len() as u32 != count {
            ids.sort_unstable();
            *[&mut resources.channels, &mut resources.ways, &mut resources.dies, &mut resources.planes][u] = ids;
        }
    }
    let occupancy: u32 = sec.value("Initial_Occupancy_Percentage", 50)?;
    if ssd.precondition {
        out.push(format!(
            "{} / Initial_Occupancy_Percentage={occupancy}: preconditioning fills the whole logical space \
             (precondition.fill), not this percentage",
            sec.path
        ));
    }
    Ok((spec, caching, resources))
}

fn synthetic(sec: &mut Section, ssd: &Ssd, name: &str, out: &mut Vec<String>) -> Result<FlowSpec, LabError> {
    let sectors_per_page = ssd.page_size / SECTOR;
    let working_set: u32 = sec.value("Working_Set_Percentage", 100)?;
    // MQSim takes anything outside 1..=100 as 100 (Host_System.cpp:48-50).
    let working_set = if (1..=100).contains(&working_set) { working_set } else { 100 };
    let generator = sec.choice("Synthetic_Generator_Type", "", &["BANDWIDTH", "QUEUE_DEPTH"])?;
    let read: u32 = sec.value("Read_Percentage", 0)?;
    if read > 100 {
        return Err(sec.error("Read_Percentage", format!("{read} is not a percentage; give 0 to 100")));
    }
    let address = sec.choice("Address_Distribution", "", &["STREAMING", "RANDOM_HOTCOLD", "RANDOM_UNIFORM"])?;
    let hot: u32 = sec.value("Percentage_of_Hot_Region", 0)?;
    let aligned = sec.flag("Generated_Aligned_Addresses", true)?;
    let unit: u32 = sec.value("Address_Alignment_Unit", sectors_per_page)?;
    if !aligned || unit != sectors_per_page {
        out.push(format!(
            "{} / Generated_Aligned_Addresses={aligned}, Address_Alignment_Unit={unit}: requests start on page \
             boundaries ({sectors_per_page} sectors)",
            sec.path
        ));
    }
    let size_kind = sec.choice("Request_Size_Distribution", "", &["FIXED", "NORMAL"])?;
    let mean: u32 = sec.value("Average_Request_Size", 0)?;
    let variance: u32 = sec.value("Variance_Request_Size", 0)?;
    if mean == 0 {
        return Err(sec.error("Average_Request_Size", "missing or 0: give the mean request size in 512-byte sectors"));
    }
    let pages = |sectors: f64| ((sectors / f64::from(sectors_per_page)).round() as u32).max(1);
    let mut request_bytes = None;
    let size = if size_kind == "NORMAL" && variance > 0 {
        let sd = f64::from(variance).sqrt();
        let (lo, hi) = (f64::from(mean) - 3f64.sqrt() * sd, f64::from(mean) + 3f64.sqrt() * sd);
        let (lo, hi) = (pages(lo.max(1.0)), pages(hi));
        out.push(format!(
            "{} / Request_Size_Distribution=NORMAL (mean {mean}, variance {variance} sectors): sizes are uniform \
             over {lo}..={hi} pages of {sectors_per_page} sectors (the same mean and variance, in whole pages)",
            sec.path
        ));
        SizeDist::uniform(lo, hi.max(lo))
    } else {
        let p = mean.div_ceil(sectors_per_page);
        if !mean.is_multiple_of(sectors_per_page) {
            // The request carries its sectors from the start of its first
            // page (flow.request_bytes); the last page is written in part.
            request_bytes = Some(mean.saturating_mul(SECTOR));
            out.push(format!(
                "{} / Average_Request_Size={mean} sectors: {p} page(s) of {sectors_per_page} sectors, the last \
                 written in part as a read-modify-write of the whole page (MQSim moves only the request's sectors \
                 over the flash channel)",
                sec.path
            ));
        }
        SizeDist::fixed(p)
    };
    let seed: u64 = sec.value("Seed", 0)?;
    let qd: u32 = sec.value("Average_No_of_Reqs_in_Queue", 1)?;
    let bandwidth: u64 = sec.value("Bandwidth", 0)?;
    let stop_ns: u64 = sec.value("Stop_Time", 0)?;
    let total: u64 = sec.value("Total_Requests_To_Generate", 0)?;
    let (arrival, queue_depth, mode) = if generator == "QUEUE_DEPTH" {
        if qd == 0 {
            return Err(sec.error("Average_No_of_Reqs_in_Queue", "0: give the flow's queue depth, at least 1"));
        }
        (Arrival::Closed, qd.min(ssd.io_queue_depth), LoopMode::Closed)
    } else {
        if bandwidth == 0 {
            return Err(sec.error(
                "Bandwidth",
                "a BANDWIDTH generator needs <Bandwidth> in bytes per second (MQSim reads Bandwidth, not Intensity)",
            ));
        }
        // MQSim: exponential gaps of mean 1 s / (bandwidth / sector / mean size).
        let mean_ns = 1e9 * f64::from(mean) * f64::from(SECTOR) / bandwidth as f64;
        (Arrival::Exponential { mean_ns }, ssd.io_queue_depth, LoopMode::Open)
    };
    let requests = match (stop_ns, total) {
        (0, 0) => {
            return Err(sec.error(
                "Stop_Time",
                "Stop_Time and Total_Requests_To_Generate are both 0 or missing: give one of them",
            ))
        }
        (0, n) => n,
        _ => UNBOUNDED_REQUESTS,
    };
    if read > 0 && !ssd.precondition {
        out.push(format!(
            "{} / Read_Percentage={read} with Enabled_Preconditioning=false: MQSim maps a page never written when \
             it is read, taking a flash page for it (Address_Mapping_Unit_Page_Level.cpp:590, \
             online_create_entry_for_reads); ftlab charges such a read a flash read on the die of the page's plane \
             (ftl.unwritten_reads = \"flash\") and counts the page taken only where it moves the page offsets \
             writes are paired at (the medium programs a block's pages in order), so garbage collection does not \
             see those pages; give --precondition-fill (precondition.fill = true) to read written data",
            sec.path
        ));
    }
    let read_fraction = f64::from(read) / 100.0;
    let generator = match address.as_str() {
        "STREAMING" => GeneratorSpec::Sequential { requests, read_fraction, size, arrival, stride: None },
        "RANDOM_UNIFORM" => GeneratorSpec::Uniform { requests, read_fraction, size, arrival },
        _ => {
            if !(1..=99).contains(&hot) {
                return Err(sec.error(
                    "Percentage_of_Hot_Region",
                    format!("{hot}: RANDOM_HOTCOLD needs a hot region of 1 to 99 percent"),
                ));
            }
            // MQSim: (100 - H)% of the requests go to the first H% of the space.
            GeneratorSpec::Hotcold {
                access_fraction: f64::from(100 - hot) / 100.0,
                space_fraction: f64::from(hot) / 100.0,
                requests,
                read_fraction,
                size,
                arrival,
            }
        }
    };
    Ok(FlowSpec {
        name: Some(name.into()),
        workload: WorkloadSpec { generator: Some(generator), ..WorkloadSpec::default() },
        queue_depth: Some(queue_depth),
        mode: Some(mode),
        seed: Some(seed),
        stop_ms: (stop_ns > 0).then(|| stop_ns as f64 / 1e6),
        working_set: (working_set < 100).then(|| f64::from(working_set) / 100.0),
        request_bytes,
        ..FlowSpec::default()
    })
}

fn trace(sec: &mut Section, workload: &Path, ssd: &Ssd, name: &str) -> Result<FlowSpec, LabError> {
    let file = sec
        .text("File_Path")
        .filter(|f| !f.is_empty())
        .ok_or_else(|| sec.error("File_Path", "missing: give the trace file (MQSim's ASCII trace format)"))?;
    let path = resolve(&file, workload).ok_or_else(|| {
        sec.error(
            "File_Path",
            format!(
                "trace `{file}` not found next to {} nor in the current directory: copy it there or give its \
                 absolute path",
                workload.display()
            ),
        )
    })?;
    let percent: u32 = sec.value("Percentage_To_Be_Executed", 100)?;
    if !(1..=100).contains(&percent) {
        return Err(sec.error("Percentage_To_Be_Executed", format!("{percent}: give 1 to 100")));
    }
    let replays: u32 = sec.value("Relay_Count", 1)?;
    if replays == 0 {
        return Err(sec.error("Relay_Count", "0 replays nothing: give at least 1"));
    }
    let time_scale = match sec.choice("Time_Unit", "NANOSECOND", &["PICOSECOND", "NANOSECOND", "MICROSECOND"])?.as_str()
    {
        "PICOSECOND" => 1e-3,
        "MICROSECOND" => 1e3,
        _ => 1.0,
    };
    let max_requests = if percent < 100 {
        let lines =
            count_lines(&path).map_err(|e| sec.error("File_Path", format!("cannot read {}: {e}", path.display())))?;
        // MQSim executes this share of each replay's requests.
        Some((lines * u64::from(percent) / 100).max(1) * u64::from(replays))
    } else {
        None
    };
    Ok(FlowSpec {
        name: Some(name.into()),
        workload: WorkloadSpec {
            trace: Some(path),
            trace_format: Some("mqsim".into()),
            repeat: (replays > 1).then_some(replays),
            max_requests,
            ..WorkloadSpec::default()
        },
        queue_depth: Some(ssd.io_queue_depth),
        mode: Some(LoopMode::Open),
        time_scale: (time_scale != 1.0).then_some(time_scale),
        ..FlowSpec::default()
    })
}

/// `file` as given if absolute, else next to the workload file, else in the
/// current directory.
fn resolve(file: &str, workload: &Path) -> Option<PathBuf> {
    let given = PathBuf::from(file);
    if given.is_absolute() {
        return given.is_file().then_some(given);
    }
    let beside = workload.parent().map(|d| d.join(&given));
    let found = beside.into_iter().chain([given]).find(|p| p.is_file())?;
    // Absolute, so that a config written elsewhere still finds it.
    Some(std::fs::canonicalize(&found).unwrap_or(found))
}

fn count_lines(path: &Path) -> std::io::Result<u64> {
    let reader = std::io::BufReader::new(std::fs::File::open(path)?);
    let mut n = 0;
    for line in reader.lines() {
        if !line?.trim().is_empty() {
            n += 1;
        }
    }
    Ok(n)
}
