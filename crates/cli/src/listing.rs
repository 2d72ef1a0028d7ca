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

/// `(name, summary)` pairs of a group.
type Items = Vec<(String, String)>;
/// A group of names: its JSON key, its title and `(name, summary)` items.
type Group = (&'static str, &'static str, Items);

/// Each group of `which` (all four when `None`).
fn groups(which: Option<PresetGroup>) -> Vec<Group> {
    let all = [PresetGroup::Chips, PresetGroup::Ftls, PresetGroup::Workloads, PresetGroup::Formats];
    let owned = |items: Vec<(&str, &str)>| items.into_iter().map(|(n, s)| (n.to_string(), s.to_string())).collect();
    which
        .map_or_else(|| all.to_vec(), |g| vec![g])
        .into_iter()
        .map(|g| match g {
            PresetGroup::Chips => (
                "chips",
                "Chips (--chip, device.chip):",
                owned(ftlab_nand::presets::PRESETS.iter().map(|p| (p.name, p.summary)).collect()),
            ),
            PresetGroup::Ftls => (
                "ftls",
                "FTLs (--ftl, ftl.kind):",
                owned(ftlab_ftl::registry::schemes().iter().map(|s| (s.name, s.summary)).collect()),
            ),
            PresetGroup::Workloads => (
                "workloads",
                "Workloads (--workload, workload.preset):",
                owned(GeneratorSpec::presets().iter().map(|p| (p.name, p.description)).collect()),
            ),
            PresetGroup::Formats => (
                "formats",
                "Trace formats (--trace-format, workload.trace_format):",
                TraceFormat::all().iter().map(|f| (f.name().to_string(), f.describe().to_string())).collect(),
            ),
        })
        .collect()
}

/// `cmd` with the preset names as the possible values of every argument that
/// takes one (`--ftl`, `--ssd-ftl`, `--chip`, `--workload`, `--trace-format`,
/// in every subcommand), for shell completions only: parsing keeps ftlab's
/// own checks and messages. Each value carries its summary (zsh and fish
/// show it).
pub fn with_preset_values(cmd: clap::Command) -> clap::Command {
    let by_arg = |id: &str| -> Option<Items> {
        let group = match id {
            "ftl" | "ssd_ftl" => PresetGroup::Ftls,
            "chip" => PresetGroup::Chips,
            "workload" => PresetGroup::Workloads,
            "trace_format" => PresetGroup::Formats,
            _ => return None,
        };
        groups(Some(group)).pop().map(|(_, _, items)| items)
    };
    fn walk(cmd: clap::Command, by_arg: &dyn Fn(&str) -> Option<Items>) -> clap::Command {
        let ids: Vec<String> = cmd.get_arguments().map(|a| a.get_id().to_string()).collect();
        let mut cmd = cmd;
        for id in ids {
            if let Some(items) = by_arg(&id) {
                // clap keeps value names as `&'static str`; this runs once,
                // for the completion script, so the names are leaked.
                let values: Vec<clap::builder::PossibleValue> = items
                    .into_iter()
                    .map(|(name, summary)| clap::builder::PossibleValue::new(&*name.leak()).help(summary))
                    .collect();
                cmd = cmd.mut_arg(id, |a| a.value_parser(clap::builder::PossibleValuesParser::new(values)));
            }
        }
        let subs: Vec<String> = cmd.get_subcommands().map(|c| c.get_name().to_string()).collect();
        for name in subs {
            cmd = cmd.mut_subcommand(name, |c| walk(c, by_arg));
        }
        cmd
    }
    walk(cmd, &by_arg)
}

/// The listing of `group`, or of all four, as text or JSON.
pub fn presets(which: Option<PresetGroup>, format: StatsFormat) -> Result<String, CliError> {
    let groups = groups(which);
    match format {
        StatsFormat::Table => Ok(groups
            .iter()
            .map(|(_, title, items)| {
                let items: Vec<(&str, &str)> = items.iter().map(|(n, s)| (n.as_str(), s.as_str())).collect();
                group(title, &items)
            })
            .collect::<Vec<_>>()
            .join("\n")),
        StatsFormat::Json => {
            let mut out = serde_json::Map::new();
            for (key, _, items) in groups {
                let list =
                    items.into_iter().map(|(name, summary)| serde_json::json!({"name": name, "summary": summary}));
                out.insert(key.to_string(), serde_json::Value::Array(list.collect()));
            }
            json(&serde_json::Value::Object(out))
        }
    }
}

/// `ftlab trace stats`.
pub fn trace_stats_cmd(args: &TraceStatsArgs) -> Result<(), CliError> {
    let format: TraceFormat = args.trace_format.parse()?;
    let reader = TraceReader::open(&args.file, format, &ReadOptions { skip_bad_lines: args.skip_bad_lines })?;
    let stats = trace_stats(reader)?;
    let text = match args.format {
        StatsFormat::Table => format!("{}: {} trace\n{stats}\n", args.file.display(), format.name()),
        StatsFormat::Json => json(&stats)?,
    };
    Sink::open(None)?.write(&text)
}
