//! MQSim's `ssdconfig.xml` (`Execution_Parameter_Set`: `Host_Parameter_Set`,
//! `Device_Parameter_Set` with its `Flash_Parameter_Set`) as ftlab's device,
//! FTL and host. Defaults are MQSim's (`src/exec/*_Parameter_Set.cpp` at
//! CMU-SAFARI/MQSim 7ec40e3).

use std::path::Path;

use ftlab_nand::{Timing, WearConfig};
use ftlab_sim::config::{DataCacheSpec, DeviceSpec, Dispatch, FtlSpec};

use super::xml::Section;
use super::{Options, SECTOR};
use crate::LabError;

/// What the workload import needs of the device.
#[derive(Debug, Clone)]
pub(super) struct Ssd {
    pub device: DeviceSpec,
    pub ftl: FtlSpec,
    pub seed: u64,
    pub precondition: bool,
    pub io_queue_depth: u32,
    pub fetch_size: u32,
    /// How a fetched read reaches its chip (`Transaction_Scheduling_Policy`).
    pub dispatch: Dispatch,
    /// The device's DRAM data cache, described for the "not modelled" list.
    pub data_cache: String,
    /// The cache as ftlab models it (`Caching_Mechanism=ADVANCED`), for
    /// scenarios whose flows all write through it.
    pub cache: Option<DataCacheSpec>,
    /// `Data_Cache_Sharing_Mode`.
    pub cache_sharing: String,
    /// `CMT_Sharing_Mode`, when the cached mapping table is modelled
    /// (`Ideal_Mapping_Table=false`).
    pub cmt_sharing: Option<String>,
    pub page_size: u32,
    /// Channels, chips a channel, dies a chip, planes a die.
    pub shape: [u32; 4],
    /// Settings ftlab does not model.
    pub unsupported: Vec<String>,
}

const SCHEMES: &[&str] = &[
    "CDPW", "CDWP", "CPDW", "CPWD", "CWDP", "CWPD", "DCPW", "DCWP", "DPCW", "DPWC", "DWCP", "DWPC", "PCDW", "PCWD",
    "PDCW", "PDWC", "PWCD", "PWDC", "WCDP", "WCPD", "WDCP", "WDPC", "WPCD", "WPDC",
];

/// Reads `ssdconfig.xml` at `path`.
pub(super) fn read(path: &Path, text: &str, options: &Options) -> Result<Ssd, LabError> {
    let mut out = Vec::new();
    let text = super::xml::lenient(path, text, &mut out);
    let doc = super::xml::parse(path, &text)?;
    let root = doc.root_element();
    let mut top = Section::new(path, root.tag_name().name().to_string(), root);
    if root.tag_name().name() != "Execution_Parameter_Set" {
        return Err(top.error(
            "",
            "the root element is not <Execution_Parameter_Set>: give MQSim's SSD configuration (ssdconfig.xml) \
             with --ssd, the workload definitions with --workload",
        ));
    }
    if let Some(mut host) = top.section("Host_Parameter_Set") {
        let bw: f64 = host.value("PCIe_Lane_Bandwidth", 1.0)?;
        let lanes: u32 = host.value("PCIe_Lane_Count", 4)?;
        out.push(format!(
            "PCIe_Lane_Bandwidth={bw} GB/s x PCIe_Lane_Count={lanes}: the host link is not modelled (transfers to \
             and from the host take no time)"
        ));
        let _sata_delay: u64 = host.value("SATA_Processing_Delay", 400_000)?; // judged with HostInterface_Type
        if host.flag("Enable_ResponseTime_Logging", false)? {
            out.push(
                "Enable_ResponseTime_Logging=true: no per-period response-time log is written (the report's \
                 throughput series and per-flow summaries stand in)"
                    .into(),
            );
        }
        let _period: u64 = host.value("ResponseTime_Logging_Period_Length", 400_000)?;
        host.unread(&mut out);
    }
    let mut d = top
        .section("Device_Parameter_Set")
        .ok_or_else(|| top.error("", "no <Device_Parameter_Set>: MQSim needs one; copy MQSim's ssdconfig.xml"))?;
    let seed: u64 = d.value("Seed", 123)?;
    let precondition = d.flag("Enabled_Preconditioning", true)?;
    d.choice("Memory_Type", "FLASH", &["FLASH"])?;
    let interface = d.choice("HostInterface_Type", "NVME", &["NVME", "SATA"])?;
    if interface == "SATA" {
        out.push(
            "HostInterface_Type=SATA (with SATA_Processing_Delay): modelled as NVMe queues; the SATA NCQ and its \
             processing delay are not"
                .into(),
        );
    }
    let io_queue_depth: u32 = d.value("IO_Queue_Depth", 1024)?;
    let fetch_size: u32 = d.value("Queue_Fetch_Size", 512)?;
    if io_queue_depth == 0 || fetch_size == 0 {
        return Err(d.error("IO_Queue_Depth", "IO_Queue_Depth and Queue_Fetch_Size must be at least 1"));
    }
    out.push(format!(
        "Queue_Fetch_Size={fetch_size}: MQSim frees a request's fetch slot only when the request is serviced \
         (Host_Interface_NVMe.cpp:44-47, 102), and a request it loses under garbage collection keeps its slot \
         for good, so its window shrinks through a run that loses requests (its response times then grow); \
         ftlab serves every request and keeps the window whole"
    ));
    let caching = d.choice("Caching_Mechanism", "ADVANCED", &["SIMPLE", "ADVANCED"])?;
    let sharing = d.choice("Data_Cache_Sharing_Mode", "SHARED", &["SHARED", "EQUAL_PARTITIONING"])?;
    let cache_bytes: u64 = d.value("Data_Cache_Capacity", 512 << 20)?;
    // MQSim's defaults (Device_Parameter_Set.cpp:14-20).
    let dram_row: u32 = d.value("Data_Cache_DRAM_Row_Size", 8192)?;
    let dram_rate: u32 = d.value("Data_Cache_DRAM_Data_Rate", 800)?;
    let dram_burst: u32 = d.value("Data_Cache_DRAM_Data_Busrt_Size", 4)?;
    let trcd: u64 = d.value("Data_Cache_DRAM_tRCD", 13)?;
    let tcl: u64 = d.value("Data_Cache_DRAM_tCL", 13)?;
    let trp: u64 = d.value("Data_Cache_DRAM_tRP", 13)?;
    if dram_row == 0 || dram_rate == 0 || dram_burst == 0 {
        return Err(d.error(
            "Data_Cache_DRAM_Row_Size",
            "Data_Cache_DRAM_Row_Size, Data_Cache_DRAM_Data_Rate and Data_Cache_DRAM_Data_Busrt_Size must be at least 1",
        ));
    }
    let data_cache = format!(
        "Caching_Mechanism={caching}, Data_Cache_Sharing_Mode={sharing}, Data_Cache_Capacity={cache_bytes} and the \
         Data_Cache_DRAM_* timings"
    );
    let mapping = d.choice("Address_Mapping", "PAGE_LEVEL", &["PAGE_LEVEL", "HYBRID"])?;
    if mapping == "HYBRID" {
        return Err(d.error(
            "Address_Mapping",
            "HYBRID: MQSim does not implement hybrid mapping either; give PAGE_LEVEL (ftlab's hybrid FTLs run \
             with --set ftl.kind=fast or bast on the written TOML)",
        ));
    }
    let ideal = d.flag("Ideal_Mapping_Table", false)?;
    let cmt: u64 = d.value("CMT_Capacity", 2 << 20)?;
    let cmt_sharing = d.choice("CMT_Sharing_Mode", "SHARED", &["SHARED", "EQUAL_PARTITIONING"])?;
    // The mqsim GC model places logical pages by the same static schemes
    // (`ftl.plane_allocation_scheme`).
    let scheme = d.choice("Plane_Allocation_Scheme", "CWDP", SCHEMES)?;
    let sched =
        d.choice("Transaction_Scheduling_Policy", "OUT_OF_ORDER", &["OUT_OF_ORDER", "PRIORITY_OUT_OF_ORDER", "FLIN"])?;
    // A fetched read waits in its chip's queue and is issued when the chip
    // and its channel are idle (TSU_OutofOrder.cpp:210-218 and
    // TSU_Priority_OutOfOrder.cpp:278-292: a chip is given a command only
    // while its channel is idle; NVM_PHY_ONFI_NVDDR2.cpp:464-487: an idle
    // channel moves the data of reads waiting for it first);
    // PRIORITY_OUT_OF_ORDER serves a chip's queues by class
    // (TSU_Priority_OutOfOrder.cpp:301-333).
    let dispatch = if sched == "PRIORITY_OUT_OF_ORDER" { Dispatch::PerDiePriority } else { Dispatch::PerDieEdf };
    let order = match sched.as_str() {
        "PRIORITY_OUT_OF_ORDER" => {
            "its host reads urgent class first, then the other classes by weighted round \
                                    robin (host.dispatch = \"per-die-priority\")"
        }
        "FLIN" => {
            "its host reads in arrival order (host.dispatch = \"per-die-edf\"): FLIN's fairness control \
                   between flows is not modelled"
        }
        _ => "its host reads in arrival order (host.dispatch = \"per-die-edf\")",
    };
    out.push(format!(
        "Transaction_Scheduling_Policy={sched}: a fetched read waits in its chip's queue until the chip and its \
         channel are idle (no read's data moving or waiting to), and the chip takes {order}, as MQSim's \
         transaction schedulers do (TSU_OutofOrder.cpp:210-218, TSU_Priority_OutOfOrder.cpp:278-292 and 301-333, \
         NVM_PHY_ONFI_NVDDR2.cpp:464-487); host reads pass a chip's queued programs and erases \
         (device.commands.reads_first; TSU_Base.h:95-97); a fetched write waits, first come first served, \
         while a write cache's write-backs fill its back-pressure limit and goes in page by page as it has room \
         (MQSim's advanced cache manager, write_to_destage_buffer), then to the cache or its chip, and a chip \
         is given one command at a time (garbage collection's place in the chip's queues: the TSU note)"
    ));
    let op: f64 = d.value("Overprovisioning_Ratio", 0.07)?;
    let gc_threshold: f64 = d.value("GC_Exec_Threshold", 0.05)?;
    if !(0.0..1.0).contains(&op) || !(0.0..1.0).contains(&gc_threshold) {
        return Err(d.error("Overprovisioning_Ratio", "Overprovisioning_Ratio and GC_Exec_Threshold must be in [0, 1)"));
    }
    let policy =
        d.choice("GC_Block_Selection_Policy", "RGA", &["GREEDY", "RGA", "RANDOM", "RANDOM_P", "RANDOM_PP", "FIFO"])?;
    if policy != "GREEDY" {
        out.push(format!("GC_Block_Selection_Policy={policy}: victims are chosen greedily (fewest valid pages)"));
    }
    let copyback = d.flag("Use_Copyback_for_GC", false)?;
    let preemptible = d.flag("Preemptible_GC_Enabled", true)?;
    let hard: f64 = d.value("GC_Hard_Threshold", 0.005)?;
    if preemptible {
        out.push(format!(
            "Preemptible_GC_Enabled=true, GC_Hard_Threshold={hard}: GC is not preempted by user requests"
        ));
    }
    if d.flag("Dynamic_Wearleveling_Enabled", true)? {
        out.push(
            "Dynamic_Wearleveling_Enabled=true: free blocks are taken first in, first out, not by erase count".into(),
        );
    }
    let static_wl = d.flag("Static_Wearleveling_Enabled", true)?;
    let static_threshold: u32 = d.value("Static_Wearleveling_Threshold", 100)?;
    if static_wl {
        out.push(format!(
            "Static_Wearleveling_Enabled=true, Static_Wearleveling_Threshold={static_threshold}: no static wear \
             leveling"
        ));
    }
    // MQSim reads the first of these under its misspelt name only.
    for name in [
        "Prefered_suspend_erase_time_for_read",
        "Preferred_suspend_erase_time_for_read",
        "Preferred_suspend_erase_time_for_write",
        "Preferred_suspend_write_time_for_read",
    ] {
        let _: u64 = d.value(name, 0)?;
    }
    let channels: u32 = d.value("Flash_Channel_Count", 8)?;
    let width: u32 = d.value("Flash_Channel_Width", 1)?;
    let rate: u32 = d.value("Channel_Transfer_Rate", 300)?;
    let chips: u32 = d.value("Chip_No_Per_Channel", 4)?;
    d.choice("Flash_Comm_Protocol", "NVDDR2", &["NVDDR2"])?;

    let mut f = d.section("Flash_Parameter_Set").ok_or_else(|| {
        d.error(
            "",
            "no <Flash_Parameter_Set>: MQSim needs one inside <Device_Parameter_Set>; copy MQSim's ssdconfig.xml",
        )
    })?;
    let tech = f.choice("Flash_Technology", "MLC", &["SLC", "MLC", "TLC"])?;
    let suspension = f.choice("CMD_Suspension_Support", "ERASE", &["NONE", "ERASE", "PROGRAM", "PROGRAM_ERASE"])?;
    let level = |f: &mut Section, what: &str, default: u64| -> Result<[u64; 3], LabError> {
        Ok([
            f.value(&format!("Page_{what}_Latency_LSB"), default)?,
            f.value(&format!("Page_{what}_Latency_CSB"), default)?,
            f.value(&format!("Page_{what}_Latency_MSB"), default)?,
        ])
    };
    let reads = level(&mut f, "Read", 75_000)?;
    let programs = level(&mut f, "Program", 750_000)?;
    let erase_ns: u64 = f.value("Block_Erase_Latency", 3_800_000)?;
    let endurance: u32 = f.value("Block_PE_Cycles_Limit", 10_000)?;
    let suspend_erase: u64 = f.value("Suspend_Erase_Time", 700_000)?;
    let suspend_program: u64 = f.value("Suspend_Program_Time", 100_000)?;
    if suspension != "NONE" {
        out.push(format!(
            "CMD_Suspension_Support={suspension} (Suspend_Erase_Time={suspend_erase}, \
             Suspend_Program_Time={suspend_program}, Preferred_suspend_*): not suspended, as in MQSim itself, \
             whose transaction schedulers never issue one (src/ssd/TSU_OutofOrder.cpp:305-326 and \
             TSU_Priority_OutOfOrder.cpp:408-429, 522-528: the \
             WRITING and ERASING cases fall through to `default: return false`); ftlab can model erase \
             suspension with device.commands.erase_suspension = true and suspend_erase_ns"
        ));
    }
    let dies: u32 = f.value("Die_No_Per_Chip", 2)?;
    let planes: u32 = f.value("Plane_No_Per_Die", 2)?;
    let mut blocks: u32 = f.value("Block_No_Per_Plane", 2048)?;
    let pages: u32 = f.value("Page_No_Per_Block", 256)?;
    let page_size: u32 = f.value("Page_Capacity", 8192)?;
    let oob: u32 = f.value("Page_Metadat_Capacity", 1872)?;
    if page_size == 0 || !page_size.is_multiple_of(SECTOR) {
        return Err(f.error("Page_Capacity", format!("{page_size} bytes is not a whole number of 512-byte sectors")));
    }
    let bits = match tech.as_str() {
        "SLC" => 1,
        "MLC" => 2,
        _ => 3,
    };
    let latency = |name: &str, l: [u64; 3], out: &mut Vec<String>| {
        let used = &l[..bits];
        let mean = used.iter().sum::<u64>() / bits as u64;
        if used.iter().any(|&x| x != used[0]) {
            out.push(format!(
                "Page_{name}_Latency_LSB/CSB/MSB = {used:?} ns differ: every page takes their mean, {mean} ns"
            ));
        }
        mean
    };
    let read_ns = latency("Read", reads, &mut out);
    let program_ns = latency("Program", programs, &mut out);
    if let Some(b) = options.blocks_per_plane {
        out.push(format!("Block_No_Per_Plane={blocks} replaced by {b} (--blocks-per-plane)"));
        blocks = b;
    }
    f.unread(&mut out);
    d.unread(&mut out);
    top.unread(&mut out);

    let mut cmt_entries = None;
    if !ideal {
        // Entries by MQSim's sizes (Address_Mapping_Unit_Page_Level.cpp:326-333).
        let physical = u64::from(channels)
            * u64::from(chips)
            * u64::from(dies)
            * u64::from(planes)
            * u64::from(blocks)
            * u64::from(pages);
        let entries = ftlab_ftl::schemes::page::pagemap::plane_gc::mqsim_cmt_entries(cmt, physical, page_size);
        if entries == 0 {
            return Err(d.error(
                "CMT_Capacity",
                format!(
                    "{cmt} bytes hold no mapping entry on this device; give a larger CMT_Capacity (MQSim's \
                     default is 2097152), or Ideal_Mapping_Table=true"
                ),
            ));
        }
        let entries = entries.min(u64::from(u32::MAX));
        cmt_entries = Some(entries);
        out.push(format!(
            "Ideal_Mapping_Table=false, CMT_Capacity={cmt}: the cached mapping table's flash work is modelled \
             (ftl.cmt_entries = {entries}, MQSim's entry size), the map itself kept in RAM as MQSim keeps it; its \
             translation writes are never programmed, as MQSim's transaction schedulers never serve the queue \
             they wait in (MappingWriteTRQueue, filled at TSU_OutofOrder.cpp:191 and \
             TSU_Priority_OutOfOrder.cpp:259, served nowhere), so a translation page once written back is served \
             from RAM from then on (ftl.cmt_writes = \"never\"; \"programmed\" programs them); preconditioning \
             leaves the table holding the pages it wrote last, clean"
        ));
    }
    if planes > 1 {
        out.push(
            "Plane_No_Per_Die > 1: MQSim places a write's page when its transaction is queued and pairs a chip's \
             queued writes for distinct planes at one page offset from anywhere in the queue, so it programs \
             pages of a block out of order (Address_Mapping_Unit_Page_Level.cpp, \
             allocate_page_in_plane_for_user_write; TSU_Base.cpp, issue_command_to_chip); ftlab programs every \
             block in order, pairs the write cache's queued write-backs by MQSim's rule and programs each pair \
             at its planes' next pages (device.commands.multi_plane_any_page); without the write cache a \
             request's own pages are paired only at one page offset. A chip takes with the read it takes the \
             reads waiting in the same queue for the other planes of its die at the same page offset, as one \
             multi-plane read (host.multi_plane_reads; TSU_Base.cpp:85-140); a page never written is read at \
             the page offset taken for it when its read was fetched"
                .to_string(),
        );
    }
    let chip = match tech.as_str() {
        "SLC" => "small-slc",
        "MLC" => "cosmos-openssd",
        _ => "toshiba-tlc-2gb",
    };
    let device = DeviceSpec {
        chip: chip.into(),
        channels: Some(channels),
        ways: Some(chips),
        dies: Some(dies),
        planes: Some(planes),
        blocks_per_plane: Some(blocks),
        pages_per_block: Some(pages),
        page_size: Some(page_size),
        oob_size: Some(oob),
        over_provisioning: Some(op),
        timing: Some(Timing {
            read_ns,
            read_oob_ns: read_ns,
            program_ns,
            erase_ns,
            channel_mb_per_s: rate.saturating_mul(width),
        }),
        copyback,
        // The matched simulator has no setting for multi-plane commands: its
        // transaction scheduler always groups the transactions waiting for a
        // die that go to distinct planes at the same page offset
        // (TSU_Base.cpp, issue_command_to_chip). ftlab's chip offers them,
        // and the mqsim GC model groups a request's own pages. It issues a
        // command to a chip only when the chip is idle, and a command
        // addresses one die (TSU_Base.cpp:72-128,
        // TSU_Priority_OutOfOrder.cpp:517-531, TSU_OutofOrder.cpp alike): the
        // dies of a chip never overlap, so ftlab's chip runs them serially.
        // When a chip falls idle it takes a read transaction if one waits,
        // else a write, else an erase (TSU_Base.h:95-97): host reads pass the
        // programs and erases queued on it. Its channel moves a
        // transaction's sectors, never a page's metadata
        // (NVM_PHY_ONFI_NVDDR2.cpp:101, 230-231, 629-632): sector transfers. It
        // places a write's page when the transaction is queued and pairs
        // queued writes for distinct planes at one page offset from anywhere
        // in a chip's queue, programming pages of a block out of order; the
        // write cache pairs its write-backs by that rule and the chip takes
        // the pairs at their planes' next pages (multi_plane_any_page).
        commands: ftlab_nand::Commands {
            multi_plane: true,
            serial_dies: true,
            reads_first: true,
            sector_transfers: true,
            multi_plane_any_page: true,
            ..ftlab_nand::Commands::default()
        },
        wear: WearConfig { endurance_cycles: endurance, ..WearConfig::default() },
        ..DeviceSpec::default()
    };
    // MQSim's threshold is per plane, truncated (GC_and_WL_Unit_Base.cpp:22);
    // the mqsim model takes the device-wide count and divides it by the planes.
    let all_planes = u64::from(channels) * u64::from(chips) * u64::from(dies) * u64::from(planes);
    let per_plane = (gc_threshold * f64::from(blocks)).floor() as u64;
    let gc_free_blocks = (per_plane * all_planes).clamp(1, u64::from(u32::MAX));
    let mut params = toml::Table::new();
    params.insert("victim".into(), toml::Value::String("greedy".into()));
    params.insert("gc_model".into(), toml::Value::String("mqsim".into()));
    params.insert("gc_max_victims_per_plane".into(), toml::Value::Integer(10));
    params.insert("gc_free_blocks".into(), toml::Value::Integer(gc_free_blocks as i64));
    params.insert("plane_allocation_scheme".into(), toml::Value::String(scheme));
    // MQSim maps a page never written when it is read and reads flash for it
    // (Address_Mapping_Unit_Page_Level.cpp:590, online_create_entry_for_reads).
    params.insert("unwritten_reads".into(), toml::Value::String("flash".into()));
    if let Some(entries) = cmt_entries {
        params.insert("cmt_entries".into(), toml::Value::Integer(entries as i64));
    }
    let cache = (caching == "ADVANCED").then(|| DataCacheSpec {
        // MQSim's slots: Data_Cache_Capacity / page size
        // (Data_Cache_Manager_Flash_Advanced.cpp:19).
        pages: (cache_bytes / u64::from(page_size)).min(u64::from(u32::MAX)) as u32,
        dram_row_bytes: dram_row,
        dram_mt_per_s: dram_rate,
        dram_burst_bytes: dram_burst,
        dram_trcd_ns: trcd,
        dram_tcl_ns: tcl,
        dram_trp_ns: trp,
        writeback_limit_sectors: None,
        hot_window_ms: 1000.0,
        // Its write-backs are transactions in the scheduler's queues of
        // their chips (Data_Cache_Manager_Flash_Advanced.cpp:337-345).
        queue_writebacks: true,
    });
    Ok(Ssd {
        device,
        cache,
        cache_sharing: sharing,
        cmt_sharing: (!ideal).then_some(cmt_sharing),
        ftl: FtlSpec { kind: "pagemap".into(), params },
        seed,
        precondition,
        io_queue_depth,
        fetch_size,
        dispatch,
        data_cache,
        page_size,
        shape: [channels, chips, dies, planes],
        unsupported: out,
    })
}
