//! `ftlab`, the command line of the ftlab NAND flash translation layer simulator.
//!
//! `run() -> anyhow::Result` does the work; `main` prints any error as one line
//! and maps it to the exit code: 2 for usage and configuration errors, 1 for
//! failed runs. Options are parsed ([`cli`]), turned into a validated run
//! configuration ([`config`], over [`ftlab_lab`]'s overlays), run, and written by
//! one exporter per format ([`output`]).

// The FTLs of other crates this program offers by name (their registry entries
// are linked in with them): the example of an FTL outside ftlab-ftl.
use ftlab_fifo_ftl as _;

mod admit_cmd;
mod bounds_cmd;
mod cli;
mod config;
mod error;
mod flashtier_cmd;
mod janus_cmd;
mod listing;
mod mqsim_cmd;
mod output;
mod plot;
mod plot_cmd;
mod progress;
mod provenance;
mod rerun_cmd;
mod sched_cmd;
mod serve_cmd;
mod sweep_cmd;
mod zones_cmd;

use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use rayon::prelude::*;

use ftlab_sim::config::HostSpec;
use ftlab_sim::{Report, RunConfig, SimError};

use crate::cli::{Cli, Command, CompareArgs, Format, OutputArgs, RunArgs};
use crate::error::CliError;
use crate::output::Sink;
use crate::progress::{expected_requests, Bar};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print to stdout and succeed; usage errors exit 2.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => match e.downcast_ref::<CliError>() {
            Some(c) if c.is_broken_pipe() => ExitCode::SUCCESS,
            c => {
                eprintln!("error: {e:#}");
                ExitCode::from(c.map_or(1, CliError::exit_code))
            }
        },
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    // The output file of a run that may take long is checked before it starts.
    let out = match &cli.command {
        Command::Run(args) => args.output.out.as_deref(),
        Command::Compare(args) => args.output.out.as_deref(),
        Command::Sweep(args) => args.out.as_deref(),
        Command::Mqsim(args) => args.output.out.as_deref(),
        _ => None,
    };
    if let Command::Sweep(args) = &cli.command {
        // The rows may go into the --out-dir the sweep makes: made first.
        if let Some(dir) = &args.out_dir {
            let what = dir.display().to_string();
            std::fs::create_dir_all(dir).map_err(error::write_err(&what))?;
        }
    }
    if let Some(path) = out {
        output::check_writable(path)?;
    }
    if matches!(cli.command, Command::Run(_) | Command::Compare(_) | Command::Sweep(_) | Command::Mqsim(_)) {
        stop_on_ctrl_c();
    }
    match cli.command {
        Command::Run(args) => run_one(&args)?,
        Command::Compare(args) => compare(&args)?,
        Command::Sweep(args) => sweep_cmd::run(&args)?,
        Command::Bounds(args) => bounds_cmd::run(&args)?,
        Command::JanusModel(args) => janus_cmd::run(&args)?,
        Command::Flashtier(args) => flashtier_cmd::run(&args)?,
        Command::Admit(args) => admit_cmd::run(&args)?,
        Command::Schedulability(args) => sched_cmd::run(&args)?,
        Command::Serve(args) => serve_cmd::run(&args)?,
        Command::Report(args) => report_page(&args)?,
        Command::Zones(args) => zones_cmd::run(&args)?,
        Command::Rerun(args) => rerun_cmd::run(&args)?,
        Command::Schema(args) => {
            let text = serde_json::to_string_pretty(&provenance::report_schema())
                .map_err(|e| CliError::Failed(format!("cannot print the schema: {e}")))?;
            Sink::open(args.out.as_deref())?.write(&(text + "\n"))?;
        }
        Command::Mqsim(args) => mqsim_cmd::run(&args)?,
        Command::Plot(args) => plot_cmd::run(&args)?,
        Command::Presets(args) => Sink::open(None)?.write(&listing::presets(args.group, args.format)?)?,
        Command::Trace(cli::TraceCommand::Stats(args)) => listing::trace_stats_cmd(&args)?,
        Command::Completions { shell } => {
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut listing::with_preset_values(Cli::command()), "ftlab", &mut buf);
            Sink::open(None)?.write(&String::from_utf8_lossy(&buf))?;
        }
        Command::Man { out_dir: Some(dir) } => {
            let what = dir.display().to_string();
            std::fs::create_dir_all(&dir).map_err(error::write_err(&what))?;
            clap_mangen::generate_to(Cli::command(), &dir).map_err(error::write_err(&what))?;
        }
        Command::Man { out_dir: None } => {
            let mut buf = Vec::new();
            clap_mangen::Man::new(Cli::command()).render(&mut buf).map_err(error::write_err("the man page"))?;
            Sink::open(None)?.write(&String::from_utf8_lossy(&buf))?;
        }
    }
    Ok(())
}

/// `ftlab report`: the HTML page of a results file.
fn report_page(args: &cli::ReportArgs) -> Result<(), CliError> {
    let text =
        std::fs::read_to_string(&args.file).map_err(|error| CliError::Read { path: args.file.clone(), error })?;
    let html =
        ftlab_lab::html::results_html(&text, &args.file.display().to_string(), args.title.as_deref().unwrap_or(""))?;
    Sink::open(args.out.as_deref())?.write(&html)
}

/// Runs `config`, advancing `bar`; `label` names it in errors. A run that
/// stopped with an error after it started gives its report and the error, so
/// the report is written before the error is returned.
pub(crate) fn simulate(config: &RunConfig, bar: &Bar, label: &str) -> Result<(Report, Option<CliError>), CliError> {
    match ftlab_sim::run_timed(config, &mut bar.tracker()) {
        Ok((report, cost)) => {
            if let Some(c) = cost {
                eprintln!(
                    "{label}the {} alone runs for the flows' slowdowns took {:.2} s on {} thread{} \
                     (metrics.slowdown = false skips them)",
                    c.runs,
                    c.wall_s,
                    c.threads,
                    if c.threads == 1 { "" } else { "s" }
                );
            }
            Ok((report, None))
        }
        Err(SimError::Stopped { error, report }) => Ok((*report, Some(CliError::sim(label, *error)))),
        Err(e) => Err(CliError::sim(label, e)),
    }
}

/// An error if any report failed its integrity check (after the reports are written).
pub(crate) fn check_integrity(reports: &[Report]) -> Result<(), CliError> {
    match reports.iter().find(|r| r.integrity != "ok") {
        None => Ok(()),
        Some(r) => Err(CliError::Failed(format!("{}: data integrity check failed: {}", r.ftl, r.integrity))),
    }
}

/// Writes `reports` (`reports[i]` ran `configs[i]` for `command`) in the
/// output format; JSON and CSV carry each one's provenance, stamped from
/// `clock` with `--stamp`. One report is an object (an array for `mqsim`, one a
/// scenario).
pub(crate) fn write_reports(
    reports: &[Report],
    configs: &[RunConfig],
    command: &str,
    clock: &provenance::Clock,
    out: &OutputArgs,
    table: impl FnOnce() -> String,
) -> Result<(), CliError> {
    let provenances = || -> Result<Vec<provenance::Provenance>, CliError> {
        let stamp = out.stamp.then(|| clock.stamp());
        configs.iter().map(|c| provenance::of(command, c, stamp.as_ref())).collect()
    };
    let text = match out.format {
        Format::Table => table(),
        Format::Json => {
            let with: Vec<provenance::WithProvenance> = reports
                .iter()
                .zip(provenances()?)
                .map(|(report, provenance)| provenance::WithProvenance { report, provenance })
                .collect();
            if with.len() == 1 && command != "mqsim" {
                output::json(&with[0])?
            } else {
                output::json(&with)?
            }
        }
        Format::Csv => output::csv(reports, &provenances()?)?,
    };
    Sink::open(out.out.as_deref())?.write(&text)
}

/// `ftlab run`.
fn run_one(args: &RunArgs) -> Result<(), CliError> {
    let resolved = config::from_args(&args.config, args.ftl.as_deref())?;
    let config = &resolved.config;
    if args.print_config {
        let mut text = toml::to_string_pretty(config)
            .map_err(|e| CliError::Failed(format!("cannot print the configuration: {e}")))?;
        if !text.ends_with('\n') {
            text.push('\n');
        }
        return Sink::open(args.output.out.as_deref())?.write(&text);
    }
    ftlab_sim::validate(config).map_err(|e| CliError::sim("", e))?;
    let clock = provenance::Clock::start();
    let bar = Bar::new(args.output.quiet, expected_requests(config), "requests");
    let result = simulate(config, &bar, "");
    bar.finish();
    let (report, stopped) = result?;
    let reports = [report];
    let warnings = wear_warnings(&reports, std::slice::from_ref(config), args.output.format)?;
    write_reports(&reports, std::slice::from_ref(config), "run", &clock, &args.output, || {
        let mut text = output::summary(&reports[0], config, resolved.capped);
        for w in &warnings {
            text.push_str(&format!("warning: {w}\n"));
        }
        text
    })?;
    stopped.map_or_else(|| check_integrity(&reports), Err)
}

/// The warnings of runs that wore a block past the chip's rated cycles
/// (`reports[i]` ran `configs[i]`); printed on stderr here unless the output is
/// the table, which shows them under it.
fn wear_warnings(reports: &[Report], configs: &[RunConfig], format: Format) -> Result<Vec<String>, CliError> {
    let rated = configs
        .iter()
        .map(|c| c.device.nand_config(c.seed()).map(|n| n.wear.endurance_cycles))
        .collect::<Result<Vec<u32>, SimError>>()
        .map_err(|e| CliError::sim("", e))?;
    let warnings = output::wear_warnings(reports, &rated);
    if format != Format::Table {
        for w in &warnings {
            eprintln!("warning: {w}");
        }
    }
    Ok(warnings)
}

/// Ctrl-C stops the runs under way and writes what they measured, marked as
/// partial (exit 130); a second Ctrl-C quits at once.
fn stop_on_ctrl_c() {
    let presses = std::sync::atomic::AtomicU32::new(0);
    let handler = move || {
        if presses.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 0 {
            ftlab_sim::interrupt::interrupt();
            eprintln!("\nftlab: stopping; writing the partial report (Ctrl-C again to quit at once)");
        } else {
            std::process::exit(130);
        }
    };
    if let Err(e) = ctrlc::set_handler(handler) {
        eprintln!("warning: Ctrl-C will quit without a report: {e}");
    }
}

/// `ftlab compare`.
fn compare(args: &CompareArgs) -> Result<(), CliError> {
    let resolved = config::from_args(&args.config, None)?;
    let mut configs = Vec::new();
    for kind in &args.ftl {
        let mut c = resolved.config.clone();
        c.ftl.kind = kind.trim().to_owned();
        // Each FTL logs to its own file.
        if let Some(log) = &c.metrics.latency_log {
            c.metrics.latency_log = Some(ftlab_sim::config::tagged_path(log, &c.ftl.kind));
        }
        ftlab_sim::validate(&c).map_err(|e| CliError::sim(format!("--ftl {}: ", c.ftl.kind), e))?;
        configs.push(c);
    }
    let space = if args.own_space { None } else { Some(equal_space(&mut configs)?) };
    let per_run = expected_requests(&resolved.config);
    let clock = provenance::Clock::start();
    let bar = Bar::new(args.output.quiet, per_run.map(|n| n * configs.len() as u64), "requests");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs.unwrap_or(0))
        .build()
        .map_err(|e| CliError::Usage(format!("cannot start worker threads: {e}")))?;
    let runs: Result<Vec<(Report, Option<CliError>)>, CliError> =
        pool.install(|| configs.par_iter().map(|c| simulate(c, &bar, &format!("{}: ", c.ftl.kind))).collect());
    bar.finish();
    let (reports, stopped): (Vec<Report>, Vec<Option<CliError>>) = runs?.into_iter().unzip();
    let warnings = wear_warnings(&reports, &configs, args.output.format)?;
    write_reports(&reports, &configs, "compare", &clock, &args.output, || {
        output::comparison(&reports, resolved.capped, space.as_ref(), &warnings)
    })?;
    stopped.into_iter().flatten().next().map_or_else(|| check_integrity(&reports), Err)
}

/// Gives every configuration the same logical space in bytes, the smallest
/// any of the FTLs exports (or the configuration's own `host.logical_pages`,
/// checked against each), as `host.logical_pages`: what it chose, per FTL.
fn equal_space(configs: &mut [RunConfig]) -> Result<output::SharedSpace, CliError> {
    let mut exported = Vec::new();
    for c in configs.iter() {
        let sim = ftlab_sim::Simulation::new(&RunConfig {
            host: HostSpec { logical_pages: None, ..c.host.clone() },
            ..c.clone()
        })
        .map_err(|e| CliError::sim(format!("--ftl {}: ", c.ftl.kind), e))?;
        exported.push((sim.logical_pages(), sim.unit_bytes(), sim.physical_bytes()));
    }
    let given = configs.first().and_then(|c| c.host.logical_pages);
    let bytes = match given {
        // The user's own limit, in the first FTL's units.
        Some(n) => n * exported[0].1,
        None => exported.iter().map(|&(pages, unit, _)| pages * unit).min().unwrap_or(0),
    };
    let smallest = exported.iter().position(|&(pages, unit, _)| pages * unit == bytes);
    let mut per_ftl = Vec::new();
    for (c, &(pages, unit, physical)) in configs.iter_mut().zip(&exported) {
        let host = bytes / unit;
        if host > pages {
            return Err(CliError::Usage(format!(
                "--ftl {}: host.logical_pages = {} is more than the {pages} logical pages it exports; give at most \
                 that, or leave host.logical_pages out to use the smallest space of the FTLs compared",
                c.ftl.kind,
                given.unwrap_or(host)
            )));
        }
        c.host.logical_pages = Some(host);
        per_ftl.push(output::FtlSpace {
            kind: c.ftl.kind.clone(),
            exported: (pages * unit) as f64 / physical as f64,
            used: (host * unit) as f64 / physical as f64,
        });
    }
    Ok(output::SharedSpace {
        bytes,
        set_by: if given.is_some() { None } else { smallest.map(|i| configs[i].ftl.kind.clone()) },
        per_ftl,
    })
}
