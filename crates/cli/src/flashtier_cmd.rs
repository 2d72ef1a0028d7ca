//! `ftlab flashtier`: FlashTier's SSC evaluation (003 Section 3.3,
//! [`ftlab_sim::host::flashtier`]): No-Cache, SSD-WB, SSD-WT, SSC-WB and SSC-WT on
//! the fileserver, webserver and varmail personalities, normalized to
//! No-Cache, written as a CSV and SVG bar charts; the SSC systems' metadata
//! programs, write amplification and recovery after the run in a second CSV.

use std::io::Write as _;

use ftlab_ftl::ssc::Consistency;
use ftlab_sim::host::flashtier::{run as run_system, FlashtierConfig, Outcome, System};
use ftlab_sim::host::HostError;
use ftlab_workload::filebench::{FilePick, Personality};

use crate::cli::{FlashtierArgs, SscConsistency};
use crate::error::CliError;
use crate::plot::{draw, PlotSpec};

/// The configuration `--scale` and the overrides describe.
fn config(args: &FlashtierArgs) -> Result<FlashtierConfig, CliError> {
    let ops = |default| args.ops.unwrap_or(default);
    let mut c = match args.scale.as_str() {
        "paper" => FlashtierConfig { ops: ops(FlashtierConfig::paper().ops), ..FlashtierConfig::paper() },
        "ci" => FlashtierConfig::ci(ops(20_000)),
        n => match n.parse::<u64>() {
            Ok(f) if f >= 1 => FlashtierConfig::scaled(f, ops(FlashtierConfig::paper().ops / f)),
            _ => {
                return Err(CliError::Usage(format!(
                    "--scale `{n}`: give `paper`, `ci` or a divisor of the paper's sizes (e.g. 16)"
                )))
            }
        },
    };
    if c.ops == 0 {
        return Err(CliError::Usage(format!(
            "--ops 0 measures nothing (every rate would be 0 ops/s): give at least 1 flowop (--scale {} runs {})",
            args.scale,
            match args.scale.as_str() {
                "paper" => FlashtierConfig::paper().ops,
                "ci" => 20_000,
                _ => FlashtierConfig::paper().ops / args.scale.parse::<u64>().unwrap_or(1).max(1),
            }
        )));
    }
    if let Some(d) = args.data_bytes {
        c.data_bytes = d;
    }
    if let Some(w) = args.warmup {
        c.warmup_ops = w;
    }
    c.seed = args.seed;
    c.ssd_ftl.clone_from(&args.ssd_ftl);
    c.cache.set_blocks = args.ssd_set_blocks;
    c.ssc_consistency = match args.ssc_consistency {
        SscConsistency::Oob => Consistency::Oob,
        SscConsistency::Log => Consistency::Log,
    };
    c.ssc_flush_checkpoint = match args.ssc_flush_checkpoint.as_str() {
        "on" => true,
        "off" => false,
        v => return Err(CliError::Usage(format!("--ssc-flush-checkpoint `{v}`: give `on` or `off`"))),
    };
    c.file_pick = match args.file_pick.as_str() {
        "uniform" => FilePick::Uniform,
        "rotor" => FilePick::Rotor,
        v => return Err(CliError::Usage(format!("--file-pick `{v}`: give `uniform` or `rotor`"))),
    };
    c.layout_bytes = args.layout_bytes;
    c.cache.read_fill_sync = args.read_fill_sync;
    c.cache.metadata_on_dirty_transition = args.metadata_on_dirty_transition;
    c.cache.sequential_blocks = args.sequential_blocks;
    Ok(c)
}

/// CSV columns, in order.
const COLUMNS: [&str; 21] = [
    "workload",
    "system",
    "warmup_ops",
    "ops",
    "sim_s",
    "ops_per_s",
    "normalized_ops",
    "mean_latency_us",
    "normalized_latency",
    "erases",
    "gc_copies",
    "flash_programs",
    "silent_evictions",
    "hit_rate",
    "bypass_blocks",
    "cleaned_blocks",
    "metadata_writes",
    "disk_reads",
    "disk_writes",
    "integrity_errors",
    "checked_blocks",
];

/// Columns of waits.csv, in order: each system's mean flowop response split
/// into the time its block I/Os waited for the disk and for the flash along
/// their critical paths (`ftlab_sim::host::cache::Completion`).
const WAIT_COLUMNS: [&str; 6] =
    ["workload", "system", "mean_latency_us", "disk_wait_us", "flash_wait_us", "flash_share"];

fn wait_row(o: &Outcome) -> Vec<serde_json::Value> {
    use serde_json::json;
    let share = if o.mean_latency_us > 0.0 { o.flash_wait_us / o.mean_latency_us } else { 0.0 };
    vec![
        json!(o.workload),
        json!(o.system),
        json!(o.mean_latency_us),
        json!(o.disk_wait_us),
        json!(o.flash_wait_us),
        json!(share),
    ]
}

/// Columns of ssc-metadata.csv (the SSC systems), in order.
const SSC_COLUMNS: [&str; 14] = [
    "workload",
    "system",
    "consistency",
    "host_programs",
    "map_programs",
    "checkpoint_programs",
    "flash_programs",
    "waf",
    "erases",
    "recovery_ms",
    "dirty_before_cut",
    "dirty_after_recovery",
    "cached_before_cut",
    "cached_after_recovery",
];

fn ssc_row(o: &Outcome, consistency: Consistency) -> Option<Vec<serde_json::Value>> {
    use serde_json::json;
    let r = o.recovery?;
    let waf = if o.host_programs > 0 { o.flash_programs as f64 / o.host_programs as f64 } else { 0.0 };
    Some(vec![
        json!(o.workload),
        json!(o.system),
        json!(match consistency {
            Consistency::Oob => "oob",
            Consistency::Log => "log",
        }),
        json!(o.host_programs),
        json!(o.map_programs),
        json!(o.checkpoint_programs),
        json!(o.flash_programs),
        json!(waf),
        json!(o.erases),
        json!(r.ns as f64 / 1e6),
        json!(r.dirty_before),
        json!(r.dirty_after),
        json!(r.cached_before),
        json!(r.cached_after),
    ])
}

fn row(o: &Outcome, base: &Outcome) -> Vec<serde_json::Value> {
    use serde_json::json;
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    let hit = ratio(o.cache.hits as f64, o.cache.read_blocks as f64);
    vec![
        json!(o.workload),
        json!(o.system),
        json!(o.warmup_ops),
        json!(o.ops),
        json!(o.sim_ns as f64 / 1e9),
        json!(o.ops_per_s),
        json!(ratio(o.ops_per_s, base.ops_per_s)),
        json!(o.mean_latency_us),
        json!(ratio(o.mean_latency_us, base.mean_latency_us)),
        json!(o.erases),
        json!(o.gc_copies),
        json!(o.flash_programs),
        json!(o.silent_evictions),
        json!(hit),
        json!(o.cache.bypass_blocks),
        json!(o.cache.cleaned_blocks),
        json!(o.cache.metadata_writes),
        json!(o.disk.reads),
        json!(o.disk.writes),
        json!(o.integrity_errors),
        json!(o.checked_blocks),
    ]
}

/// Runs `ftlab flashtier`.
pub fn run(args: &FlashtierArgs) -> Result<(), CliError> {
    if let Some(csv) = &args.replot {
        return replot(csv, &args.out);
    }
    let config = config(args)?;
    let workloads: Vec<Personality> = match &args.workloads {
        None => Personality::ALL.to_vec(),
        Some(list) => list
            .split(',')
            .map(|w| {
                Personality::parse(w.trim()).ok_or_else(|| {
                    CliError::Usage(format!("--workloads: unknown `{w}`; use fileserver, webserver, varmail"))
                })
            })
            .collect::<Result<_, _>>()?,
    };
    std::fs::create_dir_all(&args.out)
        .map_err(|error| CliError::Write { what: args.out.display().to_string(), error })?;
    let mut rows = Vec::new();
    let mut ssc_rows = Vec::new();
    let mut wait_rows = Vec::new();
    let mut broken = Vec::new();
    for w in workloads {
        let mut base: Option<Outcome> = None;
        for s in System::ALL {
            let o = run_system(&config, w, s).map_err(|e| {
                let context = format!("{} on {}: ", s.name(), w.name());
                match e {
                    HostError::Sim(e) => CliError::sim(context, e),
                    e => CliError::Failed(format!("{context}{e}")),
                }
            })?;
            println!(
                "{:<10} {:<8} {:>10.1} ops/s  {:>9.0} us ({:.0} disk, {:.0} flash)  {:>7} erases  {:>8} copies  \
                 integrity errors {}",
                o.workload,
                o.system,
                o.ops_per_s,
                o.mean_latency_us,
                o.disk_wait_us,
                o.flash_wait_us,
                o.erases,
                o.gc_copies,
                o.integrity_errors
            );
            if o.integrity_errors > 0 {
                broken.push(format!("{} on {}", o.system, o.workload));
            }
            if let Some(r) = o.recovery {
                println!(
                    "{:<10} {:<8} map {} + checkpoint {} programs; recovery {:.1} ms, dirty {} -> {}",
                    o.workload,
                    o.system,
                    o.map_programs,
                    o.checkpoint_programs,
                    r.ns as f64 / 1e6,
                    r.dirty_before,
                    r.dirty_after
                );
                if r.dirty_after != r.dirty_before {
                    broken.push(format!("{} on {} (recovery lost dirty blocks)", o.system, o.workload));
                }
            }
            ssc_rows.extend(ssc_row(&o, config.ssc_consistency));
            wait_rows.push(wait_row(&o));
            let b = base.get_or_insert_with(|| o.clone());
            rows.push(row(&o, b));
        }
    }
    write_csv(&args.out.join("flashtier.csv"), &COLUMNS, &rows)?;
    write_csv(&args.out.join("ssc-metadata.csv"), &SSC_COLUMNS, &ssc_rows)?;
    write_csv(&args.out.join("waits.csv"), &WAIT_COLUMNS, &wait_rows)?;
    // Drawn from the CSV as written, so a figure redrawn later (--replot) is
    // the same bytes.
    replot(&args.out.join("flashtier.csv"), &args.out)?;
    if broken.is_empty() {
        Ok(())
    } else {
        Err(CliError::Failed(format!("integrity check failed: {}", broken.join(", "))))
    }
}

/// Draws throughput.svg, latency.svg and erases.svg into `out` from the rows
/// of flashtier.csv ([`COLUMNS`]).
fn draw_figures(rows: &[Vec<serde_json::Value>], out: &std::path::Path) -> Result<(), CliError> {
    let columns: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
    for (file, y, title, label) in [
        (
            "throughput.svg",
            "normalized_ops",
            "Throughput normalized to No-Cache (003 Section 3.3)",
            "Throughput / No-Cache's",
        ),
        ("latency.svg", "normalized_latency", "Mean I/O flowop latency normalized to No-Cache", "Latency / No-Cache's"),
        ("erases.svg", "erases", "Flash erases", "Erases (blocks)"),
    ] {
        let spec = PlotSpec {
            x_names: Vec::new(),
            series_names: Vec::new(),
            x_label: Some("Workload".into()),
            legend: Some("Cache".into()),
            file: file.into(),
            title: Some(title.into()),
            x: "workload".into(),
            series: Some("system".into()),
            y: y.into(),
            y_label: Some(label.into()),
            stack: Vec::new(),
        };
        draw(&spec, &columns, rows, out)?;
    }
    Ok(())
}

/// `--replot FILE`: the figures of an earlier run's flashtier.csv, redrawn.
fn replot(csv_path: &std::path::Path, out: &std::path::Path) -> Result<(), CliError> {
    let bad = |what: String| CliError::Usage(format!("--replot {}: {what}", csv_path.display()));
    let mut reader = csv::Reader::from_path(csv_path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    let header: Vec<String> =
        reader.headers().map_err(|e| bad(format!("no header line: {e}")))?.iter().map(str::to_owned).collect();
    if header != COLUMNS {
        return Err(bad(format!(
            "not a flashtier.csv of this version: its columns are {}; give the flashtier.csv that ftlab flashtier -o DIR wrote",
            header.join(",")
        )));
    }
    let mut rows = Vec::new();
    for (line, record) in reader.records().enumerate() {
        let record = record.map_err(|e| bad(format!("row {}: {e}", line + 2)))?;
        rows.push(
            record
                .iter()
                .map(|cell| match cell.parse::<f64>() {
                    Ok(v) => serde_json::Value::from(v),
                    Err(_) => serde_json::Value::String(cell.to_owned()),
                })
                .collect(),
        );
    }
    if rows.is_empty() {
        return Err(bad("no rows to plot".into()));
    }
    std::fs::create_dir_all(out).map_err(|error| CliError::Write { what: out.display().to_string(), error })?;
    draw_figures(&rows, out)
}

fn write_csv(path: &std::path::Path, columns: &[&str], rows: &[Vec<serde_json::Value>]) -> Result<(), CliError> {
    let fail = |error| CliError::Write { what: path.display().to_string(), error };
    let mut f = std::fs::File::create(path).map_err(fail)?;
    let mut text = columns.join(",") + "\n";
    for r in rows {
        let cells: Vec<String> = r
            .iter()
            .map(|v| match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Number(n) if n.is_f64() => format!("{:.4}", n.as_f64().unwrap_or_default()),
                other => other.to_string(),
            })
            .collect();
        text += &(cells.join(",") + "\n");
    }
    f.write_all(text.as_bytes()).map_err(fail)
}
