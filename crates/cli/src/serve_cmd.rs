//! `ftlab serve`: the simulated device as a Network Block Device, one export
//! per device, with live counters in a stats file and the full counters on
//! exit (SIGINT or SIGTERM stop it cleanly), device images kept across runs
//! (`--image`) and power cuts on demand (SIGUSR1).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ftlab_lab::overlay::{load_file, to_config};
use ftlab_server::{
    Export, ExportOptions, ExportStats, Limits, Listen, Listener, Server, ServerError, Tls, MAX_PAYLOAD,
};
use ftlab_sim::device::Device;
use ftlab_sim::{ImageError, RunConfig};

use crate::cli::{ServeArgs, TlsMode};
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
rewritten every --stats-interval seconds, when a client's connection ends
and at exit. The same JSON is printed
on stdout when the server stops (SIGINT, SIGTERM).

Images: --image FILE keeps the main export's device in FILE, --image NAME=FILE
the export NAME's (one image per export; a NAME that is no export's is an
error). A FILE that exists is opened instead of formatting the device: the
medium is read back and the FTL rebuilt by its own recovery, as after a power
cut. It must have been saved with the same chip, geometry and [ftl] table.
FILE is durable: at start the device is written to it and a journal,
FILE.journal, is started beside it; every completed FLUSH and FUA write is
appended to the journal and synced to the disk before it is acknowledged, so
a crash, kill -9 or an abort of the server loses nothing a client flushed
(opening FILE applies its journal). When SIGINT or SIGTERM stops the server,
every connection is drained, then each device is flushed (a write-back buffer
too) and saved whole to FILE (written to FILE.tmp, synced, renamed). FILE.lock
is locked while a server uses FILE: a second server on it is refused.

Power cuts: SIGUSR1 (kill -USR1 PID) cuts the power on every export at its
current simulated time and recovers it with the FTL's own recovery; commands in
flight fail with EIO, as with --cut-after. power_cuts counts both.";

/// What the stats file and the exit report hold.
#[derive(Debug, serde::Serialize)]
struct Stats {
    exports: Vec<ExportStats>,
}

/// The server's TLS as `--tls`, `--tls-certificates` and
/// `--tls-verify-peer` ask.
fn tls(args: &ServeArgs) -> Result<Option<Tls>, CliError> {
    let mode = args.tls.unwrap_or(if args.tls_certificates.is_some() { TlsMode::Require } else { TlsMode::Off });
    match (mode, &args.tls_certificates) {
        (TlsMode::Off, None) => Ok(None),
        (TlsMode::Off, Some(_)) => {
            Err(CliError::Usage("--tls off with --tls-certificates: leave one out (the certificates mean TLS)".into()))
        }
        (_, None) => Err(CliError::Usage(
            "--tls on/require needs --tls-certificates DIR (server-cert.pem, server-key.pem; ca-cert.pem for \
             --tls-verify-peer)"
                .into(),
        )),
        (mode, Some(dir)) => Ok(Some(Tls::from_dir(dir, args.tls_verify_peer, mode == TlsMode::Require)?)),
    }
}

/// What to warn about where the server listens: any host may reach it and
/// nothing keeps it out.
fn exposure_warning(listen: &Listen, tls: Option<&Tls>) -> Option<String> {
    let Listen::Tcp(addr) = listen else { return None };
    let host = addr.rsplit_once(':').map_or("", |(h, _)| h);
    let loopback = host == "localhost"
        || host.trim_matches(['[', ']']).parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    if loopback {
        return None;
    }
    let wildcard = ["0.0.0.0", "[::]", "::", "*"].contains(&host);
    let reach = if wildcard { format!("every interface ({addr})") } else { addr.clone() };
    match tls {
        Some(t) if t.require() && t.verify_peer() => None,
        Some(t) if t.require() => Some(format!(
            "listening on {reach} with TLS but no client certificates: traffic is encrypted, but any host \
             that reaches this port can read and write the devices; add --tls-verify-peer"
        )),
        _ => Some(format!(
            "listening on {reach} without required TLS: any host that reaches this port can read and write \
             the devices, in the clear; use --tls require with --tls-verify-peer, or listen on 127.0.0.1 or \
             a unix: socket unless the network is trusted"
        )),
    }
}

/// `ftlab serve`.
pub fn run(args: &ServeArgs) -> Result<(), CliError> {
    if let Some(scale) = args.pace {
        // Beyond these a reply would wait for ages, or simulated time would
        // run past its end within seconds.
        if !(scale.is_finite() && (1e-6..=1e6).contains(&scale)) {
            return Err(CliError::Usage(format!(
                "--pace {scale}: give a time scale from 0.000001 to 1000000 (1 is real time, 10 ten times slower)"
            )));
        }
    }
    if !(args.stats_interval.is_finite() && (0.01..=1e6).contains(&args.stats_interval)) {
        return Err(CliError::Usage(format!(
            "--stats-interval {}: give a number of seconds from 0.01 to 1000000",
            args.stats_interval
        )));
    }
    if args.cut_after == Some(0) {
        return Err(CliError::Usage("--cut-after 0: give the number of commands (1 or more) to cut after".into()));
    }
    let limits = limits(args)?;
    let listen: Listen = args.listen.parse()?;
    let tls = tls(args)?;
    if let Some(warning) = exposure_warning(&listen, tls.as_ref()) {
        eprintln!("ftlab serve: warning: {warning}");
    }
    let options = ExportOptions { pace: args.pace, cut_after: args.cut_after };
    let main = config::from_args(&args.config, args.ftl.as_deref())?.config;
    if let Some(log) = &main.metrics.latency_log {
        return Err(CliError::Usage(format!(
            "metrics.latency_log = {}: the latency log is written by simulated runs (run, compare, sweep), not by \
             ftlab serve; leave it out (a client such as fio logs its own latencies: --write_lat_log)",
            log.display()
        )));
    }
    let main_name = args.name.clone().unwrap_or_else(|| main.ftl.kind.clone());
    let mut specs = vec![(main_name, main.clone(), String::new())];
    for spec in &args.exports {
        let (name, config) = export_config(spec, &main)?;
        let context = format!("--export {name}: ");
        specs.push((name, config, context));
    }
    let names: Vec<&str> = specs.iter().map(|(name, ..)| name.as_str()).collect();
    let images = image_paths(&args.images, &names)?;
    let mut exports = Vec::with_capacity(specs.len());
    for ((name, config, context), image) in specs.iter().zip(images) {
        let device = open(config, context, image.as_deref())?;
        if let Some(path) = &image {
            if path.exists() {
                let at = device.now().0;
                eprintln!("ftlab serve: export `{name}`: opened from {} (recovered at {at} ns)", path.display());
            } else {
                eprintln!("ftlab serve: export `{name}`: formatted; kept in {}", path.display());
            }
        }
        let export = Export::new(name.clone(), device, options.clone());
        exports.push(match image {
            Some(path) => export.with_image(path)?,
            None => export,
        });
    }
    let mut server = Server::new(exports)?.with_limits(limits);
    if let Some(tls) = tls {
        eprintln!(
            "ftlab serve: TLS {} ({}), credentials from {}",
            if tls.require() { "required" } else { "offered" },
            if tls.verify_peer() {
                "clients must present a certificate signed by ca-cert.pem"
            } else {
                "no client certificates"
            },
            args.tls_certificates.as_deref().map_or(String::new(), |d| d.display().to_string())
        );
        server = server.with_tls(tls);
    }
    let server = Arc::new(server);
    // Before any thread starts: every thread inherits SIGUSR1 blocked, and the
    // socket appears only once a SIGUSR1 cuts the power instead of ending the process.
    cut_on_sigusr1(&server)?;
    let listener = Listener::bind(&listen)?;
    for e in server.exports() {
        eprintln!("ftlab serve: export `{}`: {}", e.name(), e.description());
    }
    eprintln!("ftlab serve: listening on {} (stop with Ctrl-C or SIGTERM; SIGUSR1 cuts the power)", listener.address());
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
    // Every connection is closed and every command answered: the images hold
    // everything acknowledged.
    let failures = server.save_images();
    for e in server.exports() {
        if let Some(path) = e.image() {
            if !failures.iter().any(|f| matches!(f, ServerError::Image { export, .. } if export == e.name())) {
                eprintln!("ftlab serve: export `{}`: saved to {}", e.name(), path.display());
            }
        }
    }
    let stats = Stats { exports: server.stats() };
    if let Some(path) = &args.stats {
        write_stats(path, &stats)?;
    }
    let mut text = serde_json::to_string_pretty(&stats)
        .map_err(|e| CliError::Failed(format!("cannot write the counters as JSON: {e}")))?;
    text.push('\n');
    Sink::open(None)?.write(&text)?;
    served.map_err(CliError::from)?;
    if failures.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = failures.iter().map(ToString::to_string).collect();
    Err(CliError::Failed(lines.join("\n")))
}

/// The server's limits from the flags, each checked.
fn limits(args: &ServeArgs) -> Result<Limits, CliError> {
    let seconds = |flag: &str, s: f64| {
        if s.is_finite() && (0.001..=1e6).contains(&s) {
            Ok(Duration::from_secs_f64(s))
        } else {
            Err(CliError::Usage(format!("{flag} {s}: give a number of seconds from 0.001 to 1000000")))
        }
    };
    if !(1..=1 << 20).contains(&args.max_connections) {
        return Err(CliError::Usage(format!(
            "--max-connections {}: give 1 to 1048576 (each connection takes two threads and a socket)",
            args.max_connections
        )));
    }
    let min_mib = u64::from(MAX_PAYLOAD >> 20);
    if !(min_mib..=1 << 20).contains(&args.connection_mib) {
        return Err(CliError::Usage(format!(
            "--connection-mib {}: give {min_mib} (one request of the largest size) to 1048576",
            args.connection_mib
        )));
    }
    let connection_bytes = args.connection_mib << 20;
    Ok(Limits {
        max_connections: args.max_connections,
        handshake_timeout: seconds("--handshake-timeout", args.handshake_timeout)?,
        idle_timeout: args.idle_timeout.map(|s| seconds("--idle-timeout", s)).transpose()?,
        connection_bytes,
        total_bytes: connection_bytes.saturating_mul(4),
        ..Limits::default()
    })
}

/// Per export (in `names`' order), the image `--image` gives it: `NAME=FILE`
/// for the export NAME, or FILE for the main export. A value with `=` whose
/// part before it names no export is an error (a misspelt name must not
/// become the main export's file), unless that part has a `/` (`./a=b.img`
/// is a path).
fn image_paths(specs: &[String], names: &[&str]) -> Result<Vec<Option<PathBuf>>, CliError> {
    let mut paths: Vec<Option<PathBuf>> = vec![None; names.len()];
    for spec in specs {
        let (i, file) = match spec.split_once('=') {
            Some((name, file)) => match names.iter().position(|n| *n == name.trim()) {
                Some(i) => (i, file.trim()),
                // A directory before the `=`: a path that has `=` in it.
                None if name.contains(std::path::MAIN_SEPARATOR) || name.contains('/') => (0, spec.trim()),
                None => {
                    return Err(CliError::Usage(format!(
                        "--image `{spec}`: no export is named `{}`; the exports are {}. Give NAME=FILE with one of \
                         them, or ./{spec} for a file whose name has `=` in it",
                        name.trim(),
                        names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
                    )))
                }
            },
            None => (0, spec.trim()),
        };
        if file.is_empty() {
            return Err(CliError::Usage(format!("--image `{spec}`: give a file, FILE or NAME=FILE")));
        }
        if paths[i].is_some() {
            return Err(CliError::Usage(format!(
                "--image `{spec}`: export `{}` has an image already; give one per export, as NAME=FILE for the \
                 exports other than the main one ({})",
                names[i],
                names.join(", ")
            )));
        }
        let path = PathBuf::from(file);
        // Found now rather than when the image is saved at exit.
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !path.exists() && !dir.is_dir() {
            return Err(CliError::Usage(format!(
                "--image `{spec}`: the directory {} does not exist, so the image could not be saved there; \
                 create it or give another path",
                dir.display()
            )));
        }
        if let Some(j) = paths.iter().position(|p| p.as_deref() == Some(path.as_path())) {
            return Err(CliError::Usage(format!(
                "--image `{spec}`: {} is the image of export `{}` already; give each export a file of its own",
                path.display(),
                names[j]
            )));
        }
        paths[i] = Some(path);
    }
    Ok(paths)
}

/// Cuts the power on every export of `server` each time SIGUSR1 arrives (a
/// thread waits for it; the calling thread, and every thread it starts
/// afterwards, keeps it blocked).
#[cfg(unix)]
fn cut_on_sigusr1(server: &Arc<Server>) -> Result<(), CliError> {
    use nix::sys::signal::{SigSet, Signal};
    let mut set = SigSet::empty();
    set.add(Signal::SIGUSR1);
    set.thread_block().map_err(|e| CliError::Failed(format!("cannot block SIGUSR1: {e}")))?;
    let server = server.clone();
    std::thread::Builder::new()
        .name("sigusr1".into())
        .spawn(move || {
            while set.wait().is_ok() {
                for (name, cut) in server.cut_power() {
                    if let Err(e) = cut {
                        eprintln!("ftlab serve: export `{name}`: SIGUSR1: {e}");
                    }
                }
            }
        })
        .map_err(|e| CliError::Failed(format!("cannot start the SIGUSR1 thread: {e}")))?;
    Ok(())
}

/// Power cuts on demand wait for SIGUSR1, which only unix has.
#[cfg(not(unix))]
fn cut_on_sigusr1(_server: &Arc<Server>) -> Result<(), CliError> {
    Ok(())
}

/// The device `config` describes, opened from `image` if that file exists,
/// else formatted; `context` names it in errors.
fn open(config: &RunConfig, context: &str, image: Option<&Path>) -> Result<Device, CliError> {
    ftlab_sim::validate(config).map_err(|e| CliError::sim(context, e))?;
    match image {
        Some(path) if path.exists() => {
            let device = Device::open_image(config, path).map_err(|e| match e {
                ImageError::Config(e) => CliError::sim(context, e),
                e @ (ImageError::Recover { .. } | ImageError::Device { .. }) => {
                    CliError::Failed(format!("{context}{e}"))
                }
                e => CliError::Usage(format!("{context}{e}")),
            })?;
            Ok(device)
        }
        _ => Device::open(config).map_err(|e| CliError::sim(context, e)),
    }
    .and_then(|mut device| {
        if device.is_zoned() {
            return Err(CliError::Usage(format!(
                "{context}ftl.kind = \"{}\" is a zoned device: a block device's writes land anywhere, a zone's only at \
                 its write pointer; export the host FTL over it, ftl.kind = \"zns-host\", or drive its zones from \
                 Python's ftlab.Device",
                config.ftl.kind
            )));
        }
        Ok(device)
    })
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

/// Rewrites the stats file every `interval`, and within 10 ms of a client
/// leaving (so its last counters are there once its session is over), until
/// the server stops.
fn stats_loop(server: &Server, path: &Path, interval: Duration) {
    let mut last = None::<Instant>;
    let mut ended = server.connections_ended();
    while !server.stopping() {
        let now_ended = server.connections_ended();
        if last.is_none_or(|t| t.elapsed() >= interval) || now_ended != ended {
            ended = now_ended;
            if let Err(e) = write_stats(path, &Stats { exports: server.stats() }) {
                eprintln!("ftlab serve: {e}");
            }
            last = Some(Instant::now());
        }
        std::thread::sleep(interval.min(Duration::from_millis(10)));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_for_an_export_that_does_not_exist_is_an_error_not_the_main_export_s_file() {
        let names = ["pagemap", "dftl"];
        let dir = std::env::temp_dir();
        let file = |name: &str| dir.join(name).display().to_string();
        let got = image_paths(&[file("main.img"), format!("dftl={}", file("d.img"))], &names).expect("valid");
        assert_eq!(got, vec![Some(dir.join("main.img")), Some(dir.join("d.img"))]);
        // Misspelt: `dtfl` is no export.
        let err = image_paths(&[format!("dtfl={}", file("d.img"))], &names).expect_err("misspelt");
        let text = err.to_string();
        assert!(text.contains("no export is named `dtfl`") && text.contains("`dftl`"), "{text}");
        assert_eq!(err.exit_code(), 2);
        // A path with `=` in it: written as a path.
        let odd = format!("{}/a=b.img", dir.display());
        assert_eq!(
            image_paths(std::slice::from_ref(&odd), &names).expect("a path"),
            vec![Some(PathBuf::from(odd)), None]
        );
    }
}
