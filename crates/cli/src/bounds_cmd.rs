//! `ftlab bounds`: the real-time schemes' guarantees for a chip, from
//! `ftlab-bounds` (pure calculations, no simulation).

use ftlab_bounds::{all_schemes, table, ChipParams};
use ftlab_nand::presets;
use ftlab_sim::{RunConfig, Simulation};
use serde::Serialize;

use crate::cli::{BoundsArgs, BoundsFormat};
use crate::error::CliError;
use crate::output::Sink;

/// The real-time FTLs as `ftlab run` builds them, and the paper scheme each
/// implements.
const RUN_SCHEMES: [&str; 6] = ["gftl", "rftl", "fsr", "lazy-rtgc", "lazy-rtgc-ondemand", "waogc"];

/// Devices larger than this many pages are not built to read their FTLs' bounds
/// (the medium's tables would take gigabytes).
const MAX_BUILT_PAGES: u64 = 1 << 25;

/// One real-time FTL as a run builds it on the chip's default device.
#[derive(Debug, Serialize)]
struct AsRun {
    ftl: &'static str,
    /// The bound a run checks, µs (channel transfers included).
    bound_us: Option<f64>,
    /// Logical pages exported / physical pages.
    space_utilization: f64,
}

/// The paper's figures and, for a named chip, what the FTLs run with.
#[derive(Debug, Serialize)]
struct Output {
    #[serde(flatten)]
    paper: ftlab_bounds::Bounds,
    /// Absent with explicit timing or a device too large to build.
    #[serde(skip_serializing_if = "Option::is_none")]
    as_run: Option<Vec<AsRun>>,
}

/// Builds each real-time FTL on `chip`'s default device, as `ftlab run` would.
fn as_run(chip: &str) -> Result<Option<Vec<AsRun>>, CliError> {
    let mut out = Vec::new();
    for ftl in RUN_SCHEMES {
        let text = format!("[device]\nchip = {chip:?}\n[ftl]\nkind = {ftl:?}\n");
        let config = RunConfig::from_toml(&text, "bounds").map_err(|e| CliError::Failed(e.to_string()))?;
        let pages = u64::from(
            config.device.nand_config(1).map_err(|e| CliError::Failed(e.to_string()))?.geometry.total_pages(),
        );
        if pages > MAX_BUILT_PAGES {
            return Ok(None);
        }
        // A scheme that cannot run on this chip is left out.
        let Ok(sim) = Simulation::new(&config) else { continue };
        out.push(AsRun {
            ftl,
            bound_us: sim.ftl_bound().map(|b| b.0 as f64 / 1e3),
            space_utilization: sim.logical_pages() as f64 / sim.physical_pages() as f64,
        });
    }
    Ok(Some(out))
}

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
        Some(name) => as_run(name)?,
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
            let mut s = serde_json::to_string_pretty(&Output { paper: bounds, as_run })
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
