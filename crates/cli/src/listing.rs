//! `ftlab presets` and `ftlab trace stats`.

use ftlab_workload::{trace_stats, GeneratorSpec, ReadOptions, TraceFormat, TraceReader};

use crate::cli::{PresetGroup, StatsFormat, TraceStatsArgs};
use crate::error::CliError;
use crate::output::{json, Sink};

/// A titled list of names with one line each, the names aligned.
fn group(title: &str, items: &[(&str, &str)]) -> String {
    let width = items.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let mut s = format!("{title}\n");
    for (name, line) in items {
        s.push_str(&format!("  {name:<width$}  {line}\n"));
    }
    s
}

/// The listing of `group`, or of all four.
pub fn presets(which: Option<PresetGroup>) -> String {
    let all = [PresetGroup::Chips, PresetGroup::Ftls, PresetGroup::Workloads, PresetGroup::Formats];
    let groups: Vec<PresetGroup> = which.map_or_else(|| all.to_vec(), |g| vec![g]);
    let mut parts = Vec::new();
    for g in groups {
        parts.push(match g {
            PresetGroup::Chips => {
                let items: Vec<(&str, &str)> =
                    ftlab_nand::presets::PRESETS.iter().map(|p| (p.name, p.summary)).collect();
                group("Chips (--chip, device.chip):", &items)
            }
            PresetGroup::Ftls => {
                let schemes = ftlab_ftl::registry::schemes();
                let items: Vec<(&str, &str)> = schemes.iter().map(|s| (s.name, s.summary)).collect();
                group("FTLs (--ftl, ftl.kind):", &items)
            }
            PresetGroup::Workloads => {
                let presets = GeneratorSpec::presets();
                let items: Vec<(&str, &str)> = presets.iter().map(|p| (p.name, p.description)).collect();
                group("Workloads (--workload, workload.preset):", &items)
            }
            PresetGroup::Formats => {
                let items: Vec<(&str, &str)> = TraceFormat::all().iter().map(|f| (f.name(), f.describe())).collect();
                group("Trace formats (--trace-format, workload.trace_format):", &items)
            }
        });
    }
    parts.join("\n")
}

/// `ftlab trace stats`.
pub fn trace_stats_cmd(args: &TraceStatsArgs) -> Result<(), CliError> {
    let format: TraceFormat = args.format.parse()?;
    let reader = TraceReader::open(&args.file, format, &ReadOptions { skip_bad_lines: args.skip_bad_lines })?;
    let stats = trace_stats(reader)?;
    let text = match args.output_format {
        StatsFormat::Table => format!("{}: {} trace\n{stats}\n", args.file.display(), format.name()),
        StatsFormat::Json => json(&stats)?,
    };
    Sink::open(None)?.write(&text)
}
