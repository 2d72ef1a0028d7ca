//! `ftlab schedulability`: the largest storage and throughput utilizations at which
//! every random task set passes a policy's admission tests (Figures 7-9 of the
//! Telomere paper), over a grid of granularities, task-set sizes and
//! over-provisioning levels.

use std::fmt::Write as _;
use std::path::Path;

use clap::ValueEnum;
use ftlab_bounds::telomere::{
    max_schedulable, Axis, Device, GcJobReading, Limit, MultiLogWorkload, Policy, SweepSpec, Test,
};
use serde::Serialize;

use crate::admit_cmd::{AdmitPolicy, AdmitWorkload};
use crate::cli::SchedArgs;
use crate::error::CliError;
use crate::output::Sink;
use crate::plot::{draw, PlotSpec};

/// `--axis`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchedAxis {
    /// Storage utilization U^s swept, U^b fixed at --other-util.
    Storage,
    /// Throughput (bandwidth) utilization U^b swept, U^s fixed at --other-util.
    Throughput,
    /// Both, one row each.
    Both,
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchedFormat {
    Table,
    Csv,
    Json,
}

/// `--plot-x`: the grid key on a plot's x axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlotX {
    Granularity,
    Tasks,
    OverProvisioning,
}

impl PlotX {
    fn column(self) -> &'static str {
        match self {
            PlotX::Granularity => "granularity",
            PlotX::Tasks => "tasks",
            PlotX::OverProvisioning => "over_provisioning",
        }
    }
}

/// The long help's tail.
pub const SCHED_AFTER_HELP: &str = "\
For every combination of --policy, --granularity, --tasks and
--over-provisioning, and for each swept axis, draws --sets random task sets
(UUniFast, Eq. 21-23 of the Telomere paper; set k uses seed --seed + k) at
utilizations --step, 2 --step, ... up to --max, the other utilization fixed at
--other-util, and reports the largest utilization at which all of them pass
both admission tests (storage and throughput, all tasks at once). Each task
reads and writes --pages pages per period (default: one page per chip).

Fields (csv/json, stable): policy, axis (storage|throughput), granularity,
tasks, over_provisioning, max_util, first_failure (the first grid value where
a set failed, empty if none), failed_by (storage|throughput, empty if none).

--plot FILE.svg draws max_util as grouped bars: --plot-x on the x axis, one
bar per policy and axis.";

/// One output row.
#[derive(Debug, Clone, Serialize)]
struct Row {
    policy: &'static str,
    axis: &'static str,
    granularity: u32,
    tasks: usize,
    over_provisioning: f64,
    max_util: f64,
    first_failure: Option<f64>,
    failed_by: Option<&'static str>,
}

fn test_name(t: Test) -> &'static str {
    match t {
        Test::Storage => "storage",
        Test::Throughput => "throughput",
        Test::Chip => "chip",
    }
}

/// `--gc-job`: how Eq. 19 is read ([`GcJobReading`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GcJobArg {
    /// ftlab's generalized reading.
    Generalized,
    /// As printed in the paper.
    Printed,
}

/// `--bandwidth-unit`: what a megabyte of the paper's bandwidths is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BandwidthUnit {
    /// 10^6 bytes.
    Mb,
    /// 2^20 bytes.
    Mib,
}

/// Runs `ftlab schedulability`.
pub fn run(args: &SchedArgs) -> Result<(), CliError> {
    let usage = |e: ftlab_bounds::telomere::TelomereError| CliError::Usage(e.to_string());
    let preset = ftlab_nand::presets::preset(&args.chip).ok_or_else(|| {
        CliError::Usage(format!(
            "unknown chip `{}`; known chips: {}",
            args.chip,
            ftlab_nand::presets::names().collect::<Vec<_>>().join(", ")
        ))
    })?;
    let mut base = Device::from_preset(preset).with_gc_job(match args.gc_job {
        GcJobArg::Generalized => GcJobReading::Generalized,
        GcJobArg::Printed => GcJobReading::Printed,
    });
    if args.bandwidth_unit == BandwidthUnit::Mib {
        // The generator reads the bandwidths in 10^6 bytes a second.
        const MIB_IN_MB: f64 = 1_048_576.0 / 1_000_000.0;
        base.read_bandwidth_mb_s *= MIB_IN_MB;
        base.write_bandwidth_mb_s *= MIB_IN_MB;
    }
    let axes: &[Axis] = match args.axis {
        SchedAxis::Storage => &[Axis::Storage],
        SchedAxis::Throughput => &[Axis::Throughput],
        SchedAxis::Both => &[Axis::Storage, Axis::Throughput],
    };
    let workload = match args.multilog_workload {
        AdmitWorkload::Random => MultiLogWorkload::Random,
        AdmitWorkload::Zipf => MultiLogWorkload::Zipf,
    };
    let granularities: Vec<u32> =
        if args.granularity.is_empty() { vec![base.parallel_units] } else { args.granularity.clone() };
    let mut rows = Vec::new();
    for &op in &args.over_provisioning {
        let device = base.clone().with_over_provisioning(op).map_err(usage)?;
        for &g in &granularities {
            for &n in &args.tasks {
                for p in &args.policy {
                    let policy = match p {
                        AdmitPolicy::Sip => Policy::Sip,
                        AdmitPolicy::Sharp => Policy::Sharp,
                        AdmitPolicy::Waogc => Policy::WaoGc,
                        AdmitPolicy::Multilog => Policy::MultiLog { workload, waf: args.waf },
                    };
                    for &axis in axes {
                        let spec = SweepSpec {
                            tasks: n,
                            sets: args.sets,
                            granularity: Some(g),
                            pages: args.pages,
                            other_util: args.other_util,
                            step: args.step,
                            max: args.max,
                            seed: args.seed,
                        };
                        let Limit { max_util, first_failure, failed_by } =
                            max_schedulable(&device, policy, axis, &spec).map_err(usage)?;
                        rows.push(Row {
                            policy: policy.name(),
                            axis: axis.name(),
                            granularity: g,
                            tasks: n,
                            over_provisioning: op,
                            max_util,
                            first_failure,
                            failed_by: failed_by.map(test_name),
                        });
                    }
                }
            }
        }
    }
    let text = match args.format {
        SchedFormat::Table => table(&rows, &base, args),
        SchedFormat::Csv => csv(&rows)?,
        SchedFormat::Json => {
            let mut s = serde_json::to_string_pretty(&rows)
                .map_err(|e| CliError::Failed(format!("cannot serialize the results: {e}")))?;
            s.push('\n');
            s
        }
    };
    Sink::open(args.out.as_deref())?.write(&text)?;
    if let Some(svg) = &args.plot {
        plot(&rows, svg, args.plot_x, args.plot_title.as_deref())?;
    }
    Ok(())
}

fn csv(rows: &[Row]) -> Result<String, CliError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r).map_err(|e| CliError::Failed(format!("cannot write CSV: {e}")))?;
    }
    let bytes = w.into_inner().map_err(|e| CliError::Failed(format!("cannot write CSV: {e}")))?;
    String::from_utf8(bytes).map_err(|e| CliError::Failed(format!("cannot write CSV: {e}")))
}

fn table(rows: &[Row], d: &Device, args: &SchedArgs) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} sets of each size on {} ({} blocks of {} pages, {} chips), grid {}..{} step {}, other utilization {}",
        args.sets,
        d.name,
        d.blocks,
        d.pages_per_block,
        d.parallel_units,
        args.step,
        args.max,
        args.step,
        args.other_util
    );
    let _ = writeln!(
        s,
        "\n{:<9}  {:<10}  {:>4}  {:>6}  {:>6}  {:>8}  {:>13}  {:<10}",
        "policy", "axis", "g", "tasks", "alpha", "max util", "first failure", "failed by"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:<9}  {:<10}  {:>4}  {:>6}  {:>6.2}  {:>8.2}  {:>13}  {:<10}",
            r.policy,
            r.axis,
            r.granularity,
            r.tasks,
            r.over_provisioning,
            r.max_util,
            r.first_failure.map_or("-".into(), |f| format!("{f:.2}")),
            r.failed_by.unwrap_or("-")
        );
    }
    s
}

fn plot(rows: &[Row], svg: &Path, x: PlotX, title: Option<&str>) -> Result<(), CliError> {
    let columns: Vec<String> = [x.column(), "series", "max_util"].iter().map(|s| s.to_string()).collect();
    let cells: Vec<Vec<serde_json::Value>> = rows
        .iter()
        .map(|r| {
            let xv = match x {
                PlotX::Granularity => serde_json::json!(r.granularity),
                PlotX::Tasks => serde_json::json!(r.tasks),
                PlotX::OverProvisioning => serde_json::json!(r.over_provisioning),
            };
            vec![xv, serde_json::json!(format!("{} {}", r.policy, r.axis)), serde_json::json!(r.max_util)]
        })
        .collect();
    let dir = svg.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let file = svg.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    let spec = PlotSpec {
        x_names: Vec::new(),
        series_names: Vec::new(),
        x_label: Some(
            match x {
                PlotX::Granularity => "Granularity g (blocks)",
                PlotX::Tasks => "Tasks",
                PlotX::OverProvisioning => "Over-provisioning",
            }
            .into(),
        ),
        legend: Some("Policy".into()),
        file,
        title: Some(title.unwrap_or("Largest utilization at which every task set is schedulable").into()),
        x: x.column().into(),
        series: Some("series".into()),
        y: "max_util".into(),
        y_label: Some("Utilization".into()),

        stack: Vec::new(),
    };
    draw(&spec, &columns, &cells, dir)
}
