//! Importing MQSim's own configuration files (tests/data/mqsim, from
//! CMU-SAFARI/MQSim 7ec40e3, MIT licence: see the README there).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use ftlab_lab::mqsim::{import, Options, Scenario};
use ftlab_lab::LabError;
use ftlab_sim::config::LoopMode;
use ftlab_sim::config::Priority;
use ftlab_workload::generate::{Arrival, SizeDist};
use ftlab_workload::GeneratorSpec;

fn data(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mqsim").join(p)
}

fn load(ssd: &str, workload: &str) -> Vec<Scenario> {
    import(&data(ssd), &data(workload), &Options::default()).unwrap_or_else(|e| panic!("{ssd} + {workload}: {e}"))
}

fn has(s: &Scenario, what: &str) -> bool {
    s.config.unsupported.iter().any(|u| u.contains(what))
}

#[test]
fn mqsim_default_files_import() {
    let scenarios = load("ssdconfig.xml", "workload.xml");
    assert_eq!(scenarios.len(), 3);
    let c = &scenarios[0].config;
    let d = &c.device;
    assert_eq!(
        (d.channels, d.ways, d.dies, d.planes, d.blocks_per_plane, d.pages_per_block, d.page_size),
        (Some(8), Some(4), Some(2), Some(2), Some(2048), Some(256), Some(8192))
    );
    let t = d.timing.unwrap();
    assert_eq!((t.read_ns, t.program_ns, t.erase_ns, t.channel_mb_per_s), (75_000, 750_000, 3_800_000, 333));
    assert_eq!(d.over_provisioning, Some(0.07));
    assert!(!d.copyback);
    assert_eq!(d.wear.endurance_cycles, 10_000);
    assert_eq!(c.ftl.kind, "pagemap");
    assert_eq!(c.ftl.params["gc_model"].as_str(), Some("mqsim"));
    // 5% of 2,048 blocks a plane = 102, times 128 planes.
    assert_eq!(c.ftl.params["gc_free_blocks"].as_integer(), Some(102 * 128));
    assert_eq!(c.seed, Some(321));
    assert_eq!(c.host.fetch_size, Some(512));
    assert!(!c.precondition.fill, "Enabled_Preconditioning is false");

    // Scenario 1: two closed-loop writers at queue depths 16 and 2.
    assert_eq!(c.flows.len(), 2);
    let f = &c.flows[0];
    assert_eq!(
        (f.queue_depth, f.mode, f.priority, f.seed),
        (Some(16), Some(LoopMode::Closed), Priority::High, Some(798))
    );
    assert_eq!(c.flows[1].queue_depth, Some(2));
    assert_eq!(f.stop_ms, Some(10_000.0));
    assert_eq!(f.working_set, Some(0.5));
    match f.workload.generator.as_ref().unwrap() {
        GeneratorSpec::Uniform { read_fraction, size, arrival, .. } => {
            assert_eq!(*read_fraction, 0.0);
            assert_eq!(*size, SizeDist::fixed(1), "8 sectors = half an 8 KiB page, rounded up");
            assert_eq!(f.request_bytes, Some(4096), "of which the request carries 4 KiB");
            assert_eq!(*arrival, Arrival::Closed);
        }
        g => panic!("{g:?}"),
    }
    // Scenario 2: an urgent reader beside a high one.
    let s2 = &scenarios[1].config.flows;
    assert_eq!((s2[0].priority, s2[1].priority), (Priority::Urgent, Priority::High));
    // Scenario 3: MQSim's TPC-C trace, found next to the workload file.
    let t = &scenarios[2].config.flows[0].workload;
    let tpcc = std::fs::canonicalize(data("traces/tpcc-small.trace")).unwrap();
    assert_eq!(t.trace.as_deref(), Some(tpcc.as_path()));
    assert_eq!(t.trace_format.as_deref(), Some("mqsim"));

    let s = &scenarios[0];
    for what in [
        "PCIe_Lane_Bandwidth",
        "Ideal_Mapping_Table=false, CMT_Capacity=2097152",
        // 2 MiB of 9-byte entries (2 x 26 bits of page numbers and 16 sector
        // bits) on this 2^26-page device: MQSim's 233,016 entries, modelled.
        "ftl.cmt_entries = 233016",
        // Its translation writes wait in a queue no scheduler serves.
        "MappingWriteTRQueue",
        "Transaction_Scheduling_Policy=PRIORITY_OUT_OF_ORDER",
        "GC_Block_Selection_Policy=RGA",
        "Dynamic_Wearleveling_Enabled=true",
        "Static_Wearleveling_Enabled=true",
        "CMD_Suspension_Support=ERASE",
        "IO_Flow_Parameter_Set_Synthetic 1 / Intensity: not a setting MQSim reads",
        "Preferred_suspend_*",
        "Average_Request_Size=8 sectors: 1 page(s) of 16 sectors, the last written in part",
    ] {
        assert!(has(s, what), "no `{what}` in {:#?}", s.config.unsupported);
    }
    // Both flows write through the ADVANCED write cache: modelled, with the
    // file's capacity (256 MiB of 8 KiB pages) and DRAM; the dies of a chip
    // run serially, as MQSim's scheduler issues them.
    assert!(!has(s, "Device_Level_Data_Caching_Mode"), "{:#?}", s.config.unsupported);
    let cache = s.config.device.data_cache.as_ref().expect("scenario 1 has the data cache");
    assert_eq!((cache.pages, cache.dram_mt_per_s, cache.dram_burst_bytes), (32_768, 100, 1));
    assert!(s.config.device.commands.serial_dies);
    // A chip serves host reads before queued writes, and the cache's
    // write-backs wait in their chips' queues, as MQSim's scheduler has them.
    assert!(s.config.device.commands.reads_first);
    // Its channel moves the sectors a transaction carries, not whole pages
    // with their metadata.
    assert!(s.config.device.commands.sector_transfers);
    // It pairs two-plane programs as MQSim's scheduler does, and says that
    // MQSim programs pages of a block out of order to do so.
    assert!(s.config.device.commands.multi_plane_any_page);
    assert!(has(s, "pages of a block out of order"), "{:#?}", s.config.unsupported);
    // The file's cached mapping table is modelled, its write-backs never
    // programmed, as in MQSim.
    let ftl = &s.config.ftl.params;
    assert_eq!(ftl.get("cmt_entries").and_then(|v| v.as_integer()), Some(233_016), "{ftl:?}");
    assert!(ftl.get("cmt_writes").is_none(), "{ftl:?}");
    // MQSim gives each flow a table of the whole capacity (its SHARED table
    // is created once a flow): two flows, two tables of 233,016.
    assert_eq!(ftl.get("cmt_domains").and_then(|v| v.as_integer()), Some(2), "{ftl:?}");
    assert!(
        has(s, "each of the 2 flows has its own cached mapping table of 233016 entries"),
        "{:#?}",
        s.config.unsupported
    );
    // Scenario 3's one flow has the one table.
    assert!(scenarios[2].config.ftl.params.get("cmt_domains").is_none());
    // Its fetch window shrinks with every request it loses; ftlab's does not.
    assert!(has(s, "keeps its slot"), "{:#?}", s.config.unsupported);
    assert!(cache.queue_writebacks);
    // Queue_Fetch_Size bounds each flow's requests in the device.
    assert_eq!((s.config.host.fetch_size, s.config.host.fetch_per_flow), (Some(512), Some(true)));
    // Preemptible GC is off in this file: nothing to report.
    assert!(!has(s, "Preemptible_GC_Enabled"));
    // Every scenario validates as an ftlab run.
    for s in &scenarios {
        ftlab_sim::validate(&s.config).unwrap_or_else(|e| panic!("scenario {}: {e}", s.index));
    }
}

/// Shipped by MQSim with git merge-conflict markers at line 69 (and a
/// malformed closing tag inside them): not XML, and reported so.
const BROKEN: &str = "fast18/backend-contention/workload-backend-contention-flow-1.xml";

#[test]
fn every_fast18_experiment_imports() {
    let experiments = [
        ("backend-contention", &["ssdconfig-backend-contention.xml"][..], "backend-contention"),
        ("data-cache-contention", &["ssdconfig-datacache-contention.xml"][..], "datacache-contention"),
        (
            "queue-fetch-size",
            &["ssdconfig-queue-fetch-size=16.xml", "ssdconfig-queue-fetch-size=1024.xml"][..],
            "queue-fetch-size",
        ),
    ];
    let mut imported = 0;
    for (dir, ssds, stem) in experiments {
        for ssd in ssds {
            for (workload, flows) in [("flow-1", 1), ("flow-2", 1), ("flow-1-flow-2", 2)] {
                let w = format!("fast18/{dir}/workload-{stem}-{workload}.xml");
                if w == BROKEN {
                    let e = import(&data(&format!("fast18/{dir}/{ssd}")), &data(&w), &Options::default()).unwrap_err();
                    let e = e.to_string();
                    assert!(e.contains("flow-1.xml:69: the document: contains git merge-conflict markers"), "{e}");
                    continue;
                }
                let scenarios = load(&format!("fast18/{dir}/{ssd}"), &w);
                assert!(!scenarios.is_empty());
                for s in &scenarios {
                    assert_eq!(s.config.flows.len(), flows, "{w}");
                    ftlab_sim::validate(&s.config).unwrap_or_else(|e| panic!("{w} scenario {}: {e}", s.index));
                    assert!(has(s, "Transaction_Scheduling_Policy"), "{w}");
                }
                imported += scenarios.len();
            }
        }
    }
    assert!(imported >= 15, "{imported} scenarios");
    let fetch16 = load(
        "fast18/queue-fetch-size/ssdconfig-queue-fetch-size=16.xml",
        "fast18/queue-fetch-size/workload-queue-fetch-size-flow-1-flow-2.xml",
    );
    assert_eq!(fetch16[0].config.host.fetch_size, Some(16));
    // The backend-contention flows use chips 0 and 1 of 4: each flow's part
    // of the space goes to those chips only (ftl.partitions).
    let backend = load(
        "fast18/backend-contention/ssdconfig-backend-contention.xml",
        "fast18/backend-contention/workload-backend-contention-flow-1-flow-2.xml",
    );
    assert!(!has(&backend[0], "Chip_IDs"));
    let parts = backend[0].config.ftl.params["partitions"].as_array().unwrap();
    assert_eq!(parts.len(), 2);
    for p in parts {
        assert_eq!(p.to_string(), "{ ways = [0, 1] }");
    }
    // The data-cache-contention flows have a channel half each.
    let halves = load(
        "fast18/data-cache-contention/ssdconfig-datacache-contention.xml",
        "fast18/data-cache-contention/workload-datacache-contention-flow-1-flow-2.xml",
    );
    let parts = halves[0].config.ftl.params["partitions"].as_array().unwrap();
    let shown: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
    assert_eq!(shown, ["{ channels = [0, 1, 2, 3] }", "{ channels = [4, 5, 6, 7] }"]);
    // MQSim's parser takes `true</<Generated_Aligned_Addresses>`; so does the import, saying so.
    let typo = load(
        "fast18/data-cache-contention/ssdconfig-datacache-contention.xml",
        "fast18/data-cache-contention/workload-datacache-contention-flow-1.xml",
    );
    assert!(has(
        &typo[0],
        "flow-1.xml:17: malformed closing tag `<Generated_Aligned_Addresses>true</<Generated_Aligned_Addresses>`"
    ));
}

/// A small device and two flows, written to `dir`.
fn small(dir: &Path, ssd_extra: &str, flows: &str) -> (PathBuf, PathBuf) {
    let ssd = format!(
        "<?xml version=\"1.0\"?><Execution_Parameter_Set><Device_Parameter_Set>\
         <Seed>5</Seed><Enabled_Preconditioning>true</Enabled_Preconditioning><Queue_Fetch_Size>4</Queue_Fetch_Size>\
         <Flash_Channel_Count>2</Flash_Channel_Count><Chip_No_Per_Channel>1</Chip_No_Per_Channel>{ssd_extra}\
         <Flash_Parameter_Set><Die_No_Per_Chip>1</Die_No_Per_Chip><Plane_No_Per_Die>1</Plane_No_Per_Die>\
         <Block_No_Per_Plane>64</Block_No_Per_Plane><Page_No_Per_Block>64</Page_No_Per_Block>\
         <Page_Capacity>4096</Page_Capacity><Page_Metadat_Capacity>128</Page_Metadat_Capacity>\
         </Flash_Parameter_Set></Device_Parameter_Set></Execution_Parameter_Set>"
    );
    let workload = format!("<MQSim_IO_Scenarios><IO_Scenario>{flows}</IO_Scenario></MQSim_IO_Scenarios>");
    let (s, w) = (dir.join("ssd.xml"), dir.join("workload.xml"));
    std::fs::write(&s, ssd).unwrap();
    std::fs::write(&w, workload).unwrap();
    (s, w)
}

fn synthetic(priority: &str, read: u32, qd: u32, requests: u32) -> String {
    format!(
        "<IO_Flow_Parameter_Set_Synthetic><Priority_Class>{priority}</Priority_Class>\
         <Device_Level_Data_Caching_Mode>TURNED_OFF</Device_Level_Data_Caching_Mode>\
         <Synthetic_Generator_Type>QUEUE_DEPTH</Synthetic_Generator_Type><Read_Percentage>{read}</Read_Percentage>\
         <Address_Distribution>RANDOM_UNIFORM</Address_Distribution><Request_Size_Distribution>FIXED</Request_Size_Distribution>\
         <Average_Request_Size>8</Average_Request_Size><Seed>7</Seed><Average_No_of_Reqs_in_Queue>{qd}</Average_No_of_Reqs_in_Queue>\
         <Stop_Time>0</Stop_Time><Total_Requests_To_Generate>{requests}</Total_Requests_To_Generate>\
         </IO_Flow_Parameter_Set_Synthetic>"
    )
}

#[test]
fn equal_partitioning_gives_each_flow_its_part_of_the_cached_mapping_table() {
    let dir = tempfile::tempdir().unwrap();
    let flows =
        format!("{}{}{}", synthetic("HIGH", 100, 4, 10), synthetic("HIGH", 100, 4, 10), synthetic("LOW", 0, 1, 10));
    let entries = |sharing: &str| {
        let extra = format!(
            "<Ideal_Mapping_Table>false</Ideal_Mapping_Table><CMT_Capacity>65536</CMT_Capacity>\
             <CMT_Sharing_Mode>{sharing}</CMT_Sharing_Mode>"
        );
        let (ssd, workload) = small(dir.path(), &extra, &flows);
        let s = import(&ssd, &workload, &Options::default()).unwrap().remove(0);
        ftlab_sim::validate(&s.config).unwrap();
        let p = &s.config.ftl.params;
        (p["cmt_entries"].as_integer().unwrap(), p["cmt_domains"].as_integer().unwrap())
    };
    let (shared, domains) = entries("SHARED");
    assert_eq!(domains, 3);
    // 2 x 13 bits of page numbers (2^13 pages) and 8 sector bits: 5 bytes.
    assert_eq!(shared, 65_536 / 5);
    assert_eq!(entries("EQUAL_PARTITIONING"), (shared / 3, 3));
}

#[test]
fn an_imported_scenario_runs_with_per_flow_slowdowns() {
    let dir = tempfile::tempdir().unwrap();
    let flows = format!("{}{}", synthetic("URGENT", 0, 4, 3000), synthetic("LOW", 100, 1, 300));
    let (ssd, workload) = small(dir.path(), "", &flows);
    // MQSim makes no alone runs, so neither does the import by default.
    let plain = import(&ssd, &workload, &Options::default()).unwrap();
    assert_eq!(plain[0].config.metrics.slowdown, Some(false));
    let (report, cost) = ftlab_sim::run_timed(&plain[0].config, &mut |_| {}).unwrap();
    assert!(cost.is_none() && report.flows.iter().all(|f| f.slowdown.is_none() && f.alone_response_us.is_none()));
    let scenarios = import(&ssd, &workload, &Options { slowdown: true, ..Options::default() }).unwrap();
    let (report, cost) = ftlab_sim::run_timed(&scenarios[0].config, &mut |_| {}).unwrap();
    assert_eq!(cost.map(|c| c.runs), Some(2));
    // The shared run is the same with or without the alone runs, and the
    // alone runs (side by side on the machine's cores) the same every time.
    let without = |r: &ftlab_sim::Report| {
        let mut r = r.clone();
        for f in &mut r.flows {
            (f.slowdown, f.alone_response_us) = (None, None);
        }
        r.fairness = None;
        r
    };
    assert_eq!(without(&report), without(&ftlab_sim::run(&plain[0].config, &mut |_| {}).unwrap()));
    assert_eq!(report, ftlab_sim::run(&scenarios[0].config, &mut |_| {}).unwrap());
    assert_eq!(report.integrity, "ok");
    assert_eq!(report.flows.len(), 2);
    assert_eq!(report.flows[0].requests, 3000);
    assert_eq!(report.flows[1].requests, 300);
    let urgent = report.flows[0].slowdown.unwrap();
    let low = report.flows[1].slowdown.unwrap();
    // The reader's reads wait at their chip for the writer's program under
    // way (they pass its queued ones, as MQSim's scheduler lets them).
    assert!(low > 2.0 * urgent, "the low-priority reader waits for the urgent writer: {low} vs {urgent}");
    assert!(report.unsupported.iter().any(|u| u.contains("Initial_Occupancy_Percentage=50")));
    assert!(!report.unsupported.iter().any(|u| u.contains("Data_Cache")), "no flow caches");
}

#[test]
fn tpcc_trace_flow_runs() {
    let scenarios = import(
        &data("ssdconfig.xml"),
        &data("workload.xml"),
        &Options { blocks_per_plane: Some(16), slowdown: true, ..Options::default() },
    )
    .unwrap();
    let mut config = scenarios[2].config.clone();
    assert!(config.unsupported.iter().any(|u| u.contains("Block_No_Per_Plane=2048 replaced by 16")));
    config.flows[0].workload.max_requests = Some(2000);
    let report = ftlab_sim::run(&config, &mut |_| {}).unwrap();
    assert_eq!(report.flows[0].requests, 2000);
    assert_eq!(report.flows[0].slowdown, Some(1.0));
    assert_eq!(report.integrity, "ok");
}

fn error(ssd: &Path, workload: &Path) -> String {
    match import(ssd, workload, &Options::default()) {
        Err(e @ LabError::Mqsim { .. }) | Err(e @ LabError::Read { .. }) => e.to_string(),
        other => panic!("expected an import error, got {other:?}"),
    }
}

#[test]
fn bad_files_are_errors_naming_file_element_and_fix() {
    let dir = tempfile::tempdir().unwrap();
    let ok = synthetic("HIGH", 0, 1, 10);
    // Files swapped.
    let e = error(&data("workload.xml"), &data("ssdconfig.xml"));
    assert!(e.contains("workload.xml:") && e.contains("not <Execution_Parameter_Set>") && e.contains("--ssd"), "{e}");
    // Not XML.
    let junk = dir.path().join("junk.xml");
    std::fs::write(&junk, "<Execution_Parameter_Set><oops></Execution_Parameter_Set>").unwrap();
    let e = error(&junk, &data("workload.xml"));
    assert!(e.contains("junk.xml") && e.contains("not well-formed XML"), "{e}");
    // A value that is not a number, on its line.
    let (ssd, w) = small(dir.path(), "<IO_Queue_Depth>lots</IO_Queue_Depth>", &ok);
    let e = error(&ssd, &w);
    assert!(
        e.contains("ssd.xml:1") && e.contains("Device_Parameter_Set / IO_Queue_Depth") && e.contains("`lots`"),
        "{e}"
    );
    // An unknown enumeration value.
    let (ssd, w) = small(dir.path(), "<GC_Block_Selection_Policy>BEST</GC_Block_Selection_Policy>", &ok);
    let e = error(&ssd, &w);
    assert!(e.contains("GC_Block_Selection_Policy") && e.contains("GREEDY, RGA"), "{e}");
    // A missing trace.
    let trace =
        "<IO_Flow_Parameter_Set_Trace_Based><File_Path>nowhere.trace</File_Path></IO_Flow_Parameter_Set_Trace_Based>";
    let (ssd, w) = small(dir.path(), "", trace);
    let e = error(&ssd, &w);
    assert!(
        e.contains("IO_Scenario 1 / IO_Flow_Parameter_Set_Trace_Based 1 / File_Path") && e.contains("nowhere.trace"),
        "{e}"
    );
    // Hot/cold without a hot region.
    let hotcold = ok.replace("RANDOM_UNIFORM", "RANDOM_HOTCOLD");
    let (ssd, w) = small(dir.path(), "", &hotcold);
    let e = error(&ssd, &w);
    assert!(e.contains("Percentage_of_Hot_Region") && e.contains("1 to 99"), "{e}");
    // Neither a stop time nor a request count.
    let endless = ok.replace("<Total_Requests_To_Generate>10<", "<Total_Requests_To_Generate>0<");
    let (ssd, w) = small(dir.path(), "", &endless);
    assert!(error(&ssd, &w).contains("give one of them"));
    // An empty scenario, and a missing file.
    let (ssd, w) = small(dir.path(), "", "");
    assert!(error(&ssd, &w).contains("has no IO_Flow_Parameter_Set_Synthetic"));
    let e = error(&dir.path().join("absent.xml"), &w);
    assert!(e.contains("absent.xml"), "{e}");
}

#[test]
fn hotcold_normal_sizes_and_bandwidth_map_to_generators() {
    let dir = tempfile::tempdir().unwrap();
    let flow = synthetic("MEDIUM", 30, 1, 100)
        .replace("QUEUE_DEPTH", "BANDWIDTH")
        .replace("RANDOM_UNIFORM", "RANDOM_HOTCOLD")
        .replace("FIXED", "NORMAL")
        .replace("<Average_Request_Size>8<", "<Bandwidth>1000000</Bandwidth><Percentage_of_Hot_Region>20</Percentage_of_Hot_Region><Variance_Request_Size>48</Variance_Request_Size><Average_Request_Size>32<");
    let (ssd, workload) = small(dir.path(), "", &flow);
    let s = &import(&ssd, &workload, &Options::default()).unwrap()[0];
    let f = &s.config.flows[0];
    assert_eq!((f.priority, f.mode, f.queue_depth), (Priority::Medium, Some(LoopMode::Open), Some(1024)));
    match f.workload.generator.as_ref().unwrap() {
        GeneratorSpec::Hotcold { access_fraction, space_fraction, read_fraction, size, arrival, requests } => {
            // MQSim: (100 - H)% of the requests go to H% of the space.
            assert_eq!((*access_fraction, *space_fraction, *read_fraction, *requests), (0.8, 0.2, 0.3, 100));
            // 32 +- sqrt(3 x 48) = 32 +- 12 sectors, in 4 KiB pages of 8 sectors: 3..=6 (rounded).
            assert_eq!(*size, SizeDist::uniform(3, 6));
            // 32 sectors of 512 B at 1 MB/s: one request every 16.384 ms on average.
            assert_eq!(*arrival, Arrival::Exponential { mean_ns: 16_384_000.0 });
        }
        g => panic!("{g:?}"),
    }
    assert!(has(s, "Request_Size_Distribution=NORMAL"));
    let report = ftlab_sim::run(&s.config, &mut |_| {}).unwrap();
    assert_eq!(report.flows[0].requests, 100);
}

/// `Plane_Allocation_Scheme` becomes the mqsim model's
/// `ftl.plane_allocation_scheme`, and the chip offers multi-plane programs as
/// MQSim's always does (it has no setting for them).
#[test]
fn the_plane_allocation_scheme_and_multi_plane_programs_come_across() {
    let scenarios = load("ssdconfig.xml", "workload.xml");
    let c = &scenarios[0].config;
    assert_eq!(c.ftl.params["plane_allocation_scheme"].as_str(), Some("CWDP"));
    assert!(c.device.commands.multi_plane && !c.device.commands.multi_plane_same_block);
    let dir = tempfile::tempdir().unwrap();
    let extra = "<Plane_Allocation_Scheme>PCWD</Plane_Allocation_Scheme>";
    let (ssd, workload) = small(dir.path(), extra, &synthetic("HIGH", 0, 4, 2000));
    let scenarios = import(&ssd, &workload, &Options::default()).unwrap();
    let s = &scenarios[0];
    assert_eq!(s.config.ftl.params["plane_allocation_scheme"].as_str(), Some("PCWD"));
    assert!(!has(s, "Plane_Allocation_Scheme"), "{:?}", s.config.unsupported);
    let report = ftlab_sim::run(&s.config, &mut |_| {}).unwrap();
    assert_eq!(report.integrity, "ok");
    // An unknown scheme is refused naming the setting.
    let (ssd, workload) = small(dir.path(), "<Plane_Allocation_Scheme>CWXP</Plane_Allocation_Scheme>", "");
    let e = import(&ssd, &workload, &Options::default()).unwrap_err();
    assert!(e.to_string().contains("Plane_Allocation_Scheme"), "{e}");
}
