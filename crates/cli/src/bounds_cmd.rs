//! `ftlab bounds`: the real-time schemes' guarantees for a chip, from
//! `ftlab-bounds` (pure calculations, no simulation).

use ftlab_bounds::{all_schemes, table, ChipParams};
use ftlab_lab::bounds::{as_run, AsRun, ChipBounds};
use ftlab_nand::presets;

use crate::cli::{BoundsArgs, BoundsFormat};
use crate::error::CliError;
use crate::output::Sink;

fn as_run_table(rows: &[AsRun]) -> String {
    let mut s = String::from(
        "\nAs `ftlab run` builds them on this chip's default device (channel transfers included; the\n\
         bound a run checks, and the share of the flash the FTL exports):\n\n\
         ftl                  bound_us  utilization\n",
    );
    for r in rows {
        let bound = r.bound_us.map_or("-".to_owned(), |b| format!("{b:.1}"));
        s += &format!("{:<18} {bound:>10}  {:>10.2}%\n", r.ftl, r.space_utilization * 100.0);
    }
    s
}

/// Runs `ftlab bounds`.
pub fn run(args: &BoundsArgs) -> Result<(), CliError> {
    let chip = chip_params(args)?;
    let bounds = all_schemes(&chip).map_err(|e| CliError::Usage(format!("no bounds for this chip: {e}")))?;
    let as_run = match &args.chip {
        Some(name) => as_run(name).map_err(|e| CliError::Failed(e.to_string()))?,
        None => None,
    };
    let text = match args.format {
        BoundsFormat::Table => {
            let name = args.chip.as_deref().unwrap_or("explicit timing");
            let mut text = format!(
                "{name}: t_rdpg {} us, t_wrpg {} us, t_rdoob {} us, t_er {} us, {} pages per block{}\n\n\
                 The papers' bounds and space utilization (001 Table III, 002 Table V):\n\n{}",
                chip.t_rdpg_us(),
                chip.t_wrpg_us(),
                chip.t_rdoob_us(),
                chip.t_er_us(),
                chip.pages_per_block(),
                if args.with_transfer { " (channel transfer included)" } else { "" },
                table(&bounds)
            );
            if let Some(rows) = &as_run {
                text += &as_run_table(rows);
            }
            text
        }
        BoundsFormat::Json => {
            let mut s = serde_json::to_string_pretty(&ChipBounds { paper: bounds, as_run })
                .map_err(|e| CliError::Failed(format!("cannot serialize the bounds: {e}")))?;
            s.push('\n');
            s
        }
    };
    Sink::open(args.out.as_deref())?.write(&text)
}

fn chip_params(args: &BoundsArgs) -> Result<ChipParams, CliError> {
    let usage = |e: ftlab_bounds::BoundsError| CliError::Usage(e.to_string());
    let explicit = [args.read_us, args.program_us, args.erase_us];
    let chip = match (&args.chip, explicit.iter().all(Option::is_some)) {
        (Some(name), false) if explicit.iter().all(Option::is_none) => {
            let p = presets::preset(name).ok_or_else(|| {
                CliError::Usage(format!(
                    "unknown chip `{name}`; known chips: {}",
                    presets::names().collect::<Vec<_>>().join(", ")
                ))
            })?;
            if args.with_transfer {
                ChipParams::from_preset_with_transfer(p).map_err(usage)?
            } else {
                ChipParams::from_preset(p).map_err(usage)?
            }
        }
        (None, true) => {
            let ppb = args
                .pages_per_block
                .ok_or_else(|| CliError::Usage("explicit timing needs --pages-per-block as well".into()))?;
            ChipParams::new(
                args.read_us.unwrap_or_default(),
                args.program_us.unwrap_or_default(),
                args.oob_read_us.or(args.read_us).unwrap_or_default(),
                args.erase_us.unwrap_or_default(),
                ppb,
            )
            .map_err(usage)?
        }
        _ => {
            return Err(CliError::Usage(
                "give either --chip NAME or all of --read-us, --program-us, --erase-us (with --pages-per-block)".into(),
            ))
        }
    };
    match args.pages_per_block {
        Some(ppb) if args.chip.is_some() => chip.with_pages_per_block(ppb).map_err(usage),
        _ => Ok(chip),
    }
}
