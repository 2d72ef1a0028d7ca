//! `ftlab serve`: the simulated device as a Network Block Device, one export
//! per device, with live counters in a stats file and the full counters on
//! exit (SIGINT or SIGTERM stop it cleanly).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ftlab_lab::overlay::{load_file, to_config};
use ftlab_server::{Export, ExportOptions, ExportStats, Listen, Listener, Server};
use ftlab_sim::device::Device;
use ftlab_sim::RunConfig;

use crate::cli::ServeArgs;
use crate::config;
use crate::error::{write_err, CliError};
use crate::output::Sink;

pub const SERVE_AFTER_HELP: &str = "\
Clients: fio --ioengine=nbd --uri='nbd+unix:///?socket=PATH', nbdinfo, qemu-img,
nbdcopy and nbd-client reach the export named by the URI's path (empty: the
main export). Block sizes: minimum 512, preferred the flash page, maximum
32 MiB; smaller-than-page writes are read-modify-writes on the device.

Time: without --pace the device runs in simulated time as fast as the host
serves it; a client's wall-clock latencies and IOPS then measure the host, and
the device's counters (the stats file, the exit report) give the simulated
response times. With --pace SCALE each reply waits until its simulated
completion time comes on the wall clock (scaled), so the client's own latency
figures show the FTL's, garbage-collection stalls included.

Counters: with --stats FILE, every export's counters as JSON ({\"exports\":
[...]}, fields as in `ftlab run`'s report where they mean the same: waf,
gc_page_copies, erases, write_us.p99, ... plus free_blocks and power_cuts),
rewritten every --stats-interval seconds and at exit. The same JSON is printed
on stdout when the server stops (SIGINT, SIGTERM).";

/// What the stats file and the exit report hold.
#[derive(Debug, serde::Serialize)]
struct Stats {
    exports: Vec<ExportStats>,
}

/// `ftlab serve`.
pub fn run(args: &ServeArgs) -> Result<(), CliError> {
    if let Some(scale) = args.pace {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(CliError::Usage(format!("--pace {scale}: give a time scale above 0 (1 is real time)")));
        }
    }
    if !(args.stats_interval.is_finite() && args.stats_interval > 0.0) {
        return Err(CliError::Usage(format!(
            "--stats-interval {}: give a number of seconds above 0",
            args.stats_interval
        )));
    }
    if args.cut_after == Some(0) {
        return Err(CliError::Usage("--cut-after 0: give the number of commands (1 or more) to cut after".into()));
    }
    let listen: Listen = args.listen.parse()?;
    let options = ExportOptions { pace: args.pace, cut_after: args.cut_after };
    let main = config::from_args(&args.config, args.ftl.as_deref())?.config;
    let main_name = args.name.clone().unwrap_or_else(|| main.ftl.kind.clone());
    let mut exports = vec![Export::new(main_name, open(&main, "")?, options.clone())];
    for spec in &args.exports {
        let (name, config) = export_config(spec, &main)?;
        let device = open(&config, &format!("--export {name}: "))?;
        exports.push(Export::new(name, device, options.clone()));
    }
    let server = Arc::new(Server::new(exports)?);
    let listener = Listener::bind(&listen)?;
    for e in server.exports() {
        eprintln!("ftlab serve: export `{}`: {}", e.name(), e.description());
    }
    eprintln!("ftlab serve: listening on {} (stop with Ctrl-C or SIGTERM)", listener.address());
    let stopper = server.clone();
    ctrlc::set_handler(move || stopper.stop())
        .map_err(|e| CliError::Failed(format!("cannot install the SIGINT/SIGTERM handler: {e}")))?;

    let served = std::thread::scope(|scope| {
        if let Some(path) = &args.stats {
            let server = &server;
            scope.spawn(move || stats_loop(server, path, Duration::from_secs_f64(args.stats_interval)));
        }
        server.serve(&listener)
    });
    let stats = Stats { exports: server.stats() };
    if let Some(path) = &args.stats {
        write_stats(path, &stats)?;
    }
    let mut text = serde_json::to_string_pretty(&stats)
        .map_err(|e| CliError::Failed(format!("cannot write the counters as JSON: {e}")))?;
    text.push('\n');
    Sink::open(None)?.write(&text)?;
    served.map_err(CliError::from)
}

/// The device `config` describes; `context` names it in errors.
fn open(config: &RunConfig, context: &str) -> Result<Device, CliError> {
    ftlab_sim::validate(config).map_err(|e| CliError::sim(context, e))?;
    Device::open(config).map_err(|e| CliError::sim(context, e))
}

/// `NAME=CONFIG.toml` or `NAME=KIND`: the export's name and configuration.
fn export_config(spec: &str, main: &RunConfig) -> Result<(String, RunConfig), CliError> {
    let usage = || {
        CliError::Usage(format!(
            "--export `{spec}`: write NAME=CONFIG.toml (a run config file) or NAME=KIND (an FTL, e.g. dftl=dftl)"
        ))
    };
    let (name, source) = spec.split_once('=').ok_or_else(usage)?;
    let (name, source) = (name.trim(), source.trim());
    if name.is_empty() || source.is_empty() {
        return Err(usage());
    }
    let path = Path::new(source);
    let config = if source.ends_with(".toml") || path.is_file() {
        let table = load_file(path)?;
        to_config(table, &path.display().to_string())?
    } else {
        let mut config = main.clone();
        config.ftl.kind = source.to_owned();
        config
    };
    Ok((name.to_owned(), config))
}

/// Rewrites the stats file every `interval` until the server stops.
fn stats_loop(server: &Server, path: &Path, interval: Duration) {
    let mut last = None::<Instant>;
    while !server.stopping() {
        if last.is_none_or(|t| t.elapsed() >= interval) {
            if let Err(e) = write_stats(path, &Stats { exports: server.stats() }) {
                eprintln!("ftlab serve: {e}");
            }
            last = Some(Instant::now());
        }
        std::thread::sleep(interval.min(Duration::from_millis(100)));
    }
}

/// Writes `stats` to `path` whole: a reader never sees half a file.
fn write_stats(path: &Path, stats: &Stats) -> Result<(), CliError> {
    let what = format!("the stats file {}", path.display());
    let text = serde_json::to_string_pretty(stats).map_err(|e| CliError::Failed(format!("{what}: {e}")))?;
    let mut tmp = PathBuf::from(path);
    tmp.as_mut_os_string().push(".tmp");
    std::fs::write(&tmp, text + "\n").map_err(write_err(&what))?;
    std::fs::rename(&tmp, path).map_err(write_err(&what))
}
