//! The command line as clap parses it. Options are parsed here and turned into a
//! validated [`RunConfig`](ftlab_sim::RunConfig) by [`crate::config`].

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::config::DEFAULT_MAX_REQUESTS;

/// NAND flash translation layer simulator.
///
/// Runs FTLs from the literature over a strict NAND model on real block traces
/// or generated workloads and reports write amplification, response times, wear
/// and a data-integrity verdict.
#[derive(Debug, Parser)]
#[command(name = "ftlab", version, propagate_version = true, max_term_width = 100)]
#[command(after_help = "Start with `ftlab run` (a built-in default run) and `ftlab presets`.")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one simulation and print its report.
    #[command(after_long_help = run_after_help())]
    Run(RunArgs),
    /// Run the same workload through several FTLs and print one table.
    Compare(CompareArgs),
    /// Run a grid of configurations in parallel, one output row per run.
    #[command(after_long_help = SWEEP_AFTER_HELP)]
    Sweep(SweepArgs),
    /// Serve the simulated device over NBD to real clients (fio, qemu-img, nbdcopy, nbd-client).
    #[command(after_long_help = crate::serve_cmd::SERVE_AFTER_HELP)]
    Serve(ServeArgs),
    /// List chip presets, FTLs, workload presets and trace formats.
    Presets(PresetsArgs),
    /// The real-time FTLs' worst-case response times and space utilization for a chip.
    Bounds(BoundsArgs),
    /// Janus-FTL's cost model (004 Eq. 1-5): average write cost against the number of fused
    /// blocks for a hit-rate curve, and the optimum.
    JanusModel(JanusModelArgs),
    /// FlashTier's SSC evaluation (003 Section 3.3): No-Cache, SSD and SSC caches in
    /// write-back and write-through mode on fileserver, webserver and varmail, normalized
    /// to No-Cache; writes flashtier.csv and SVG plots.
    Flashtier(FlashtierArgs),
    /// Telomere's admission control (SiP, SharP) and its baselines (WAO-GC, MultiLog-Oracle)
    /// for a real-time task set.
    #[command(after_long_help = crate::admit_cmd::ADMIT_AFTER_HELP)]
    Admit(AdmitArgs),
    /// The largest storage and throughput utilizations at which all random task sets are
    /// schedulable (the Telomere paper's Figures 7-9).
    #[command(after_long_help = crate::sched_cmd::SCHED_AFTER_HELP)]
    Schedulability(SchedArgs),
    /// Run MQSim's ssdconfig.xml and workload.xml: each scenario's flows on one device
    /// (each flow alone too with --slowdown); MQSim settings ftlab does not model
    /// are listed.
    #[command(after_long_help = crate::mqsim_cmd::MQSIM_AFTER_HELP)]
    Mqsim(MqsimArgs),
    /// A grouped bar chart (SVG, PNG or PDF) of a CSV's columns: one group per value of --x, one bar
    /// per --y column (or per value of --series).
    Plot(PlotArgs),
    /// Run a JSON report's configuration again (from its `provenance`) and check that every
    /// field comes out the same, bit for bit.
    Rerun(RerunArgs),
    /// Print the JSON Schema of a JSON report: every field's type, whether it may be null or
    /// absent, its meaning and its unit (`x-unit`); FIELDS.md's tables and the Python stubs are
    /// generated from it.
    Schema(SchemaArgs),
    /// Write one self-contained HTML page (inline SVG plots, no network) of a run's JSON
    /// report or of a sweep's CSV or JSON-lines rows.
    Report(ReportArgs),
    /// Print the zone report (a zoned device's zones at the end of the run: state, pages
    /// written, valid pages and stream) or the FDP statistics (host and media pages and WAF per
    /// reclaim unit handle) of a run's JSON report.
    Zones(ZonesArgs),
    /// Inspect block traces.
    #[command(subcommand)]
    Trace(TraceCommand),
    /// Print a shell completion script.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) to stdout, or write every command's page
    /// (ftlab.1, ftlab-run.1, ftlab-trace-stats.1, ...) into a folder.
    Man {
        /// Write ftlab.1 and one page a subcommand into DIR (created if
        /// missing), for `man -M` or MANPATH: the pages the top-level one names.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<std::path::PathBuf>,
    },
}

fn run_after_help() -> String {
    format!(
        "\
Configuration: CONFIG is a TOML file with the optional tables [device], [ftl],
[workload] (or several [[flow]] tables sharing the device), [host],
[precondition], [metrics] and a top-level `seed`. Flags
override its keys, then each --set KEY=VALUE overrides in the order given. A
relative `workload.trace` in a file is relative to that file.

Default run: with no CONFIG it runs pagemap on the small-slc chip with the
skewed-random-write workload. When neither a config file nor --requests (nor
--set workload.max_requests) bounds it, a generated workload stops after
{DEFAULT_MAX_REQUESTS} requests, so that the default run takes about a second.

Output (--format): `table` for people; `json` is the report with stable field
names (waf, write_us.p99, erase_count.max, integrity, ...); `csv` is a header
and one row of its scalar fields, nested ones flattened as `read_us.p99`, the
arrays (tasks, throughput, latency) left out. Every field, its unit and meaning
are in crates/cli/FIELDS.md. JSON also says how it was made (`provenance`: the
effective configuration, ftlab's version and git revision; --stamp adds date,
host, wall and CPU time): `ftlab rerun REPORT.json` runs it again and checks it.

Exit status: 0 on success, 2 for usage and configuration errors, 1 when a run
fails (a malformed trace line, a flash or FTL error; the report of what it did
is still written, with the error in `error`) or its data-integrity check fails
(the report is still written, with the first mismatch in `integrity`)."
    )
}

const SWEEP_AFTER_HELP: &str = "\
Sweep file:

    [base]                      # a run config, as for `ftlab run CONFIG`
    seed = 1
    [base.workload]
    preset = \"skewed-random-write\"
    max_requests = 50000

    [grid]                      # dotted config keys = arrays of values
    \"ftl.kind\" = [\"pagemap\", \"pure-page-level\"]
    \"device.over_provisioning\" = [0.07, 0.1]

Every combination of the grid values is laid over [base] (the cartesian
product; runs are numbered with the last key, in alphabetical order, varying
fastest). All points are validated before any starts. Each finished run is
written and flushed at once, in completion order, with the columns: run, the
grid keys, the report's scalar fields (as `ftlab run --format csv`), and
`error` (empty unless that run failed). A run that fails does not stop the
others; the exit status is then 1.

Plots: optional [[plot]] tables draw grouped bar charts (SVG) once all runs
have finished, into the sweep file's folder:

    [[plot]]
    file = \"waf.svg\"
    title = \"Write amplification\"
    x = \"device.over_provisioning\"   # a grid key: groups on the x axis
    series = \"ftl.kind\"              # a grid key: one bar per value
    y = \"waf\"                        # a report field
    y_label = \"WAF\"

Runs sharing an x and series value (other keys varying) are averaged.

Also (see experiments/telomere/table3-sweep.toml): `base = \"run.toml\"` takes
[base] from a run config file; [[case]] tables (name, set = { \"KEY\" = value },
admit = { policy = \"waogc\", blocks = N }) are named variants run with every
grid point (a `case` column; `admit`: the host drops the tasks that policy's
test refuses, as `ftlab admit`, and reports them refused); [[table]] tables
write CSV files of chosen columns (file, columns = [\"NAME=FIELD\", ...],
each = \"tasks\" | \"throughput\" | \"rber_cdf\" | \"erase_histogram\" for a row
per element, dialect = \"ftlab\" | \"python\"); [[plot]] with kind = \"lines\"
draws one line per run through such rows (each, x, y, series, x_scale = \"log\",
x_range, steps).";

/// `ftlab run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// FTL to run (`ftlab presets ftls` lists them) [ftl.kind].
    #[arg(long, value_name = "KIND", help_heading = "Configuration")]
    pub ftl: Option<String>,
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Print the effective configuration as TOML and exit without running.
    #[arg(long)]
    pub print_config: bool,
}

/// `ftlab compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// FTLs to compare, comma-separated (e.g. `pagemap,pure-page-level`).
    #[arg(long, value_name = "A,B,...", value_delimiter = ',', required = true, num_args = 1..)]
    pub ftl: Vec<String>,
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Run at most this many simulations at once (default: one per core).
    #[arg(long, allow_negative_numbers = true, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
    /// Run each FTL on all the logical space it exports, its own spare space. By default every FTL
    /// keeps the same data on the same flash: the host uses the space of the FTL that exports
    /// least (host.logical_pages), so WAF compares schemes, not spare space.
    #[arg(long)]
    pub own_space: bool,
}

/// `ftlab serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// FTL of the main export (`ftlab presets ftls` lists them) [ftl.kind].
    #[arg(long, value_name = "KIND", help_heading = "Configuration")]
    pub ftl: Option<String>,
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Where to listen: unix:PATH (clients use nbd+unix:///?socket=PATH) or tcp:HOST:PORT. The
    /// default takes connections from this machine only; another host needs tcp:ADDRESS:PORT, best
    /// with --tls require.
    #[arg(long, value_name = "ADDRESS", default_value = "tcp:127.0.0.1:10809", help_heading = "Server")]
    pub listen: String,
    /// TLS by NBD's STARTTLS: `off`, `on` (offered, the client chooses) or `require` (every option
    /// before STARTTLS is refused; nothing of an export is seen without TLS). Default: `require`
    /// with --tls-certificates, else `off`.
    #[arg(long, value_enum, value_name = "MODE", help_heading = "Server")]
    pub tls: Option<TlsMode>,
    /// Directory of the TLS credentials, nbdkit's and qemu's layout: server-cert.pem (the chain),
    /// server-key.pem, and ca-cert.pem for --tls-verify-peer. Clients (libnbd:
    /// nbds://HOST/?tls-certificates=DIR) trust the server through ca-cert.pem.
    #[arg(long, value_name = "DIR", help_heading = "Server")]
    pub tls_certificates: Option<PathBuf>,
    /// Accept only clients presenting a certificate signed by DIR/ca-cert.pem (access control;
    /// TLS-PSK is not available).
    #[arg(long, requires = "tls_certificates", help_heading = "Server")]
    pub tls_verify_peer: bool,
    /// Name of the main export (default: its FTL kind); the empty name also selects it.
    #[arg(long, value_name = "NAME", help_heading = "Server")]
    pub name: Option<String>,
    /// Another export, with a device of its own: NAME=CONFIG.toml (a run config file, its
    /// [device] and [ftl] tables) or NAME=KIND (the main configuration with another FTL).
    /// Repeatable.
    #[arg(long = "export", value_name = "NAME=CONFIG", help_heading = "Server")]
    pub exports: Vec<String>,
    /// Rewrite this JSON file with every export's counters every --stats-interval seconds.
    #[arg(long, value_name = "FILE", help_heading = "Server")]
    pub stats: Option<PathBuf>,
    /// Seconds between rewrites of --stats.
    #[arg(long, allow_negative_numbers = true, value_name = "S", default_value_t = 1.0, help_heading = "Server")]
    pub stats_interval: f64,
    /// Pace replies to the wall clock: a simulated second lasts SCALE seconds (1 is real time,
    /// 10 ten times slower). Without it the device runs in simulated time as fast as it can.
    #[arg(long, allow_negative_numbers = true, value_name = "SCALE", help_heading = "Server")]
    pub pace: Option<f64>,
    /// Cut the power once after N commands have completed (per export), recover with the FTL's
    /// own recovery and carry on; commands in flight then fail with EIO.
    #[arg(long, allow_negative_numbers = true, value_name = "N", help_heading = "Server")]
    pub cut_after: Option<u64>,
    /// Connections open at once; more are closed at once (logged).
    #[arg(long, allow_negative_numbers = true, value_name = "N", default_value_t = 128, help_heading = "Server")]
    pub max_connections: usize,
    /// Seconds a client has to finish negotiating before it is closed.
    #[arg(long, allow_negative_numbers = true, value_name = "S", default_value_t = 30.0, help_heading = "Server")]
    pub handshake_timeout: f64,
    /// Close a connection that sends no request for S seconds (default: never).
    #[arg(long, allow_negative_numbers = true, value_name = "S", help_heading = "Server")]
    pub idle_timeout: Option<f64>,
    /// MiB one connection's requests may hold in the server (read buffers, write payloads)
    /// before the server stops reading from it; 4 times that over all connections.
    #[arg(long, allow_negative_numbers = true, value_name = "MIB", default_value_t = 64, help_heading = "Server")]
    pub connection_mib: u64,
    /// Keep an export's device in an image file: [NAME=]FILE (NAME one of the exports; without
    /// it, the main export). If FILE exists the device is opened from it (rebuilt by the FTL's own
    /// recovery, as after a power cut) instead of formatted. Every FLUSH and FUA write is synced
    /// to FILE's journal (FILE.journal) before it is acknowledged, so a crash loses nothing
    /// flushed; on SIGINT/SIGTERM the device is flushed and saved whole to FILE. FILE.lock keeps a
    /// second server off it. Repeatable, one image per export.
    #[arg(long = "image", value_name = "[NAME=]FILE", help_heading = "Server")]
    pub images: Vec<String>,
}

/// `ftlab serve --tls`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TlsMode {
    /// No TLS: STARTTLS is refused.
    Off,
    /// TLS offered; clients may use it or not.
    On,
    /// TLS required of every client.
    Require,
}

/// A config file and the flags that override its keys (shared by `run` and `compare`).
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// TOML run configuration; every key is optional (described at the end of `--help`).
    #[arg(value_name = "CONFIG.toml")]
    pub config: Option<PathBuf>,
    /// Chip preset (`ftlab presets chips`) [device.chip].
    #[arg(long, value_name = "NAME", help_heading = "Device")]
    pub chip: Option<String>,
    /// Raw capacity in GiB; sets blocks per plane (replaces device.blocks_per_plane) [device.capacity_gib].
    #[arg(long, allow_negative_numbers = true, value_name = "GIB", help_heading = "Device")]
    pub capacity_gib: Option<f64>,
    /// Blocks per plane (replaces device.capacity_gib) [device.blocks_per_plane].
    #[arg(long, allow_negative_numbers = true, value_name = "N", help_heading = "Device")]
    pub blocks_per_plane: Option<u32>,
    /// Pages per block [device.pages_per_block].
    #[arg(long, allow_negative_numbers = true, value_name = "N", help_heading = "Device")]
    pub pages_per_block: Option<u32>,
    /// Page size in bytes [device.page_size].
    #[arg(long, allow_negative_numbers = true, value_name = "BYTES", help_heading = "Device")]
    pub page_size: Option<u32>,
    /// Channels [device.channels].
    #[arg(long, allow_negative_numbers = true, value_name = "N", help_heading = "Device")]
    pub channels: Option<u32>,
    /// Ways (chips) per channel [device.ways].
    #[arg(long, allow_negative_numbers = true, value_name = "N", help_heading = "Device")]
    pub ways: Option<u32>,
    /// Dies per way [device.dies].
    #[arg(long, allow_negative_numbers = true, value_name = "N", help_heading = "Device")]
    pub dies: Option<u32>,
    /// Planes per die [device.planes].
    #[arg(long, allow_negative_numbers = true, value_name = "N", help_heading = "Device")]
    pub planes: Option<u32>,
    /// Fraction of physical space hidden from the host, e.g. 0.07 (replaces ftl.over_provisioning)
    /// [device.over_provisioning].
    #[arg(long, allow_negative_numbers = true, value_name = "FRACTION", help_heading = "Device")]
    pub over_provisioning: Option<f64>,

    /// Replay this block trace (replaces the config's workload source) [workload.trace].
    #[arg(long, value_name = "FILE", requires = "trace_format", help_heading = "Workload")]
    pub trace: Option<PathBuf>,
    /// Format of --trace (`ftlab presets formats`) [workload.trace_format].
    #[arg(long, value_name = "FORMAT", help_heading = "Workload")]
    pub trace_format: Option<String>,
    /// How trace addresses fold into the device: modulo, compact, concat, device:N [workload.address].
    #[arg(long, value_name = "MODE", help_heading = "Workload")]
    pub address: Option<String>,
    /// Count and skip malformed trace lines instead of stopping [workload.skip_bad_lines].
    #[arg(long, help_heading = "Workload")]
    pub skip_bad_lines: bool,
    /// Generated workload preset (`ftlab presets workloads`; replaces the config's workload
    /// source) [workload.preset].
    #[arg(long, value_name = "NAME", conflicts_with = "trace", help_heading = "Workload")]
    pub workload: Option<String>,
    /// Stop after N requests [workload.max_requests].
    #[arg(long, allow_negative_numbers = true, value_name = "N", help_heading = "Workload")]
    #[arg(long_help = format!(
        "Stop after N requests [workload.max_requests]. Without a config file, a generated \
         workload defaults to {DEFAULT_MAX_REQUESTS} requests. N above the requests a generator \
         issues (a million for the presets) is an error; a trace shorter than N replays whole."
    ))]
    pub requests: Option<u64>,
    /// Requests outstanding at once [host.queue_depth].
    #[arg(long, allow_negative_numbers = true, value_name = "N", help_heading = "Host")]
    pub queue_depth: Option<u32>,
    /// Open loop (requests arrive at their timestamps) or closed loop (as fast as the queue
    /// allows) [host.mode].
    #[arg(long, value_enum, help_heading = "Host")]
    pub mode: Option<LoopMode>,
    /// Multiply trace timestamps by this (0.5 replays twice as fast) [host.time_scale].
    #[arg(long, allow_negative_numbers = true, value_name = "F", help_heading = "Host")]
    pub time_scale: Option<f64>,
    /// Hold every page command to this service time in microseconds instead of the FTL's own
    /// bound, so any scheme can be checked against a real-time scheme's promise
    /// [metrics.bound_us].
    #[arg(long, allow_negative_numbers = true, value_name = "US", help_heading = "Host")]
    pub bound_us: Option<f64>,
    /// Write every measured request's response time to FILE, a line each in fio's latency-log
    /// layout (time ms, latency ns, direction, bytes, offset, priority); with several runs
    /// (compare, sweep) each gets its own, FILE's name tagged with the FTL or run index
    /// [metrics.latency_log].
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub latency_log: Option<std::path::PathBuf>,
    /// Write the whole logical space sequentially before measuring [precondition.fill].
    #[arg(long, help_heading = "Precondition")]
    pub precondition_fill: bool,
    /// Then overwrite this many logical spaces' worth of random pages
    /// [precondition.random_overwrites].
    #[arg(long, allow_negative_numbers = true, value_name = "F", help_heading = "Precondition")]
    pub random_overwrites: Option<f64>,
    /// Start measuring at the first garbage-collection erase [precondition.start_at_first_gc].
    #[arg(long, help_heading = "Precondition")]
    pub start_at_first_gc: bool,
    /// Seed of every random draw (default 1) [seed].
    #[arg(long, allow_negative_numbers = true, value_name = "N", help_heading = "Configuration")]
    pub seed: Option<u64>,
    /// Set any config key: KEY is a dotted path, VALUE a TOML value (a bare word is a
    /// string), e.g. `--set ftl.gc_free_blocks=3`. Repeatable; applied after the other flags.
    #[arg(long = "set", value_name = "KEY=VALUE", help_heading = "Configuration")]
    pub set: Vec<String>,
}

/// How and where a report is written.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = Format::Table, help_heading = "Output")]
    pub format: Format,
    /// Write the output to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE", help_heading = "Output")]
    pub out: Option<PathBuf>,
    /// No progress bar (it is also hidden when stderr is not a terminal).
    #[arg(long, short = 'q', help_heading = "Output")]
    pub quiet: bool,
    /// With -f json: also record when, where and how long the run took
    /// (provenance.stamp: date, host, wall and CPU seconds), which differ from run to run.
    #[arg(long, help_heading = "Output")]
    pub stamp: bool,
}

/// `ftlab rerun`.
#[derive(Debug, Args)]
pub struct RerunArgs {
    /// A JSON report of `ftlab run -f json`, `compare -f json` or `mqsim -f json`, or the CSV of
    /// `ftlab run -f csv`, `compare -f csv` or `sweep` (each row carries its `provenance.config`).
    #[arg(value_name = "REPORT.json|RESULTS.csv")]
    pub report: std::path::PathBuf,
    /// Also write the new report(s) to FILE, in the input's format.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<std::path::PathBuf>,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// `ftlab schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Write the schema to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<std::path::PathBuf>,
}

/// Report formats of `run` and `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A human summary.
    Table,
    /// The report(s) as pretty JSON with stable field names.
    Json,
    /// A header and one row per report of the scalar fields.
    Csv,
}

/// `host.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LoopMode {
    Open,
    Closed,
}

impl LoopMode {
    pub fn name(self) -> &'static str {
        match self {
            LoopMode::Open => "open",
            LoopMode::Closed => "closed",
        }
    }
}

/// `ftlab sweep`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Results: the JSON of `ftlab run -f json`, or `ftlab sweep`'s CSV or JSON lines.
    #[arg(value_name = "RESULTS")]
    pub file: PathBuf,
    /// Write the page to FILE (created or truncated) instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The page's title (default: the FTL and chip of a run, the number of runs of a sweep).
    #[arg(long)]
    pub title: Option<String>,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  ftlab run zns-host.toml -f json -o run.json && ftlab zones run.json\n  \
                        ftlab zones run.json -f csv -o zones.csv\n  ftlab zones fdp-run.json --events")]
pub struct ZonesArgs {
    /// A run's JSON report (`ftlab run -f json`) of a zoned device's host FTL (`zns-host`)
    /// or of an FDP device (`fdp`).
    #[arg(value_name = "REPORT.json")]
    pub file: PathBuf,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = TableFormat::Table)]
    pub format: TableFormat,
    /// Write to FILE (created or truncated) instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// An FDP device's event log instead of its statistics: one row an event,
    /// oldest first (time_us, type, name, pid, group, pages_moved).
    #[arg(long)]
    pub events: bool,
}

/// How `ftlab zones` prints its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TableFormat {
    /// Aligned columns for reading.
    Table,
    /// Comma-separated values with a header line.
    Csv,
    /// One JSON array of objects.
    Json,
}

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Sweep file: a [base] run config and a [grid] of values (see below).
    #[arg(value_name = "SWEEP.toml")]
    pub file: PathBuf,
    /// Row format.
    #[arg(long, short = 'f', value_enum, default_value_t = RowFormat::Csv)]
    pub format: RowFormat,
    /// Write rows to FILE (created or truncated) instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Run at most this many simulations at once (default: one per core).
    #[arg(long, allow_negative_numbers = true, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
    /// Write the sweep's [[table]] files and plots into DIR (created) instead of
    /// the sweep file's folder.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// Validate every grid point, list them and exit without running.
    #[arg(long)]
    pub dry_run: bool,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// `ftlab plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// CSV file with a header line.
    #[arg(value_name = "FILE.csv")]
    pub csv: PathBuf,
    /// Column whose values are the groups on the x axis.
    #[arg(long)]
    pub x: String,
    /// Numeric column(s) plotted, comma-separated: one bar each per group.
    #[arg(long, value_delimiter = ',', required = true)]
    pub y: Vec<String>,
    /// Column whose values are the bars of a group (with a single --y).
    #[arg(long)]
    pub series: Option<String>,
    /// Chart title.
    #[arg(long)]
    pub title: Option<String>,
    /// Y axis title (default: the field dictionary's name and unit of the --y
    /// column); a unit ("us") or a title ending in one ("max write (us)") gives the
    /// unit the axis scales.
    #[arg(long)]
    pub y_label: Option<String>,
    /// Output figure: SVG, PNG (300 dpi) or PDF, by the extension.
    #[arg(long, short = 'o', value_name = "FILE.svg|png|pdf")]
    pub out: PathBuf,
}

/// Row formats of `sweep`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RowFormat {
    /// Comma-separated values with a header line.
    Csv,
    /// One JSON object per line.
    Jsonl,
}

/// `ftlab admit`.
#[derive(Debug, Args)]
pub struct AdmitArgs {
    /// Task set file ([[task]] tables, see below).
    #[arg(value_name = "TASKSET.toml", required_unless_present = "generate", conflicts_with = "generate")]
    pub taskset: Option<PathBuf>,
    /// Whose admission tests to apply.
    #[arg(long, value_enum, default_value = "sharp")]
    pub policy: crate::admit_cmd::AdmitPolicy,
    /// Chip preset giving the device (`ftlab presets chips`), e.g. telomere-1tb-ssd, cosmos-openssd.
    #[arg(long, value_name = "NAME")]
    pub chip: String,
    /// Physical blocks of the whole device (overrides the preset's).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub blocks: Option<u64>,
    /// Block erase time t_e in microseconds (overrides the preset's, e.g. for a
    /// board whose paper prints no timing: 000's Cosmos board).
    #[arg(long, allow_negative_numbers = true, value_name = "US")]
    pub erase_us: Option<f64>,
    /// Page read time t_r in microseconds (overrides the preset's).
    #[arg(long, allow_negative_numbers = true, value_name = "US")]
    pub read_us: Option<f64>,
    /// Page program time t_w in microseconds (overrides the preset's).
    #[arg(long, allow_negative_numbers = true, value_name = "US")]
    pub program_us: Option<f64>,
    /// Fraction of physical space the tasks may not use, in [0, 1) (lambda = 1 - F; default 0).
    #[arg(long, allow_negative_numbers = true, value_name = "F")]
    pub over_provisioning: Option<f64>,
    /// MultiLog-Oracle's workload, the column of the paper's Table 2.
    #[arg(long, value_enum, default_value = "random")]
    pub multilog_workload: crate::admit_cmd::AdmitWorkload,
    /// MultiLog-Oracle's write amplification, instead of Table 2's.
    #[arg(long, allow_negative_numbers = true, value_name = "F")]
    pub waf: Option<f64>,
    /// SiP and SharP: after Eq. 20, test every chip with the tasks striped over
    /// their own g chips, as ftlab's telomere FTLs place them (a page also waits
    /// for the other chips' transfers on its channel).
    #[arg(long)]
    pub per_chip: bool,
    /// Admit N generated tasks (at most 10000) instead of a file.
    #[arg(long, allow_negative_numbers = true, value_name = "N", help_heading = "Generator")]
    pub generate: Option<usize>,
    /// Total storage utilization of the generated tasks, e.g. 0.5.
    #[arg(long, allow_negative_numbers = true, value_name = "U", requires = "generate", help_heading = "Generator")]
    pub storage_util: Option<f64>,
    /// Total bandwidth utilization of the generated tasks, e.g. 0.5.
    #[arg(long, allow_negative_numbers = true, value_name = "V", requires = "generate", help_heading = "Generator")]
    pub throughput_util: Option<f64>,
    /// Seed of the generator.
    #[arg(long, allow_negative_numbers = true, value_name = "S", default_value_t = 1, help_heading = "Generator")]
    pub seed: u64,
    /// `table` or `json` (fields below).
    #[arg(long, short = 'f', value_enum, default_value = "table")]
    pub format: crate::admit_cmd::AdmitFormat,
    /// Write to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `ftlab schedulability`.
#[derive(Debug, Args)]
pub struct SchedArgs {
    /// Chip preset giving the device (`ftlab presets chips`).
    #[arg(long, value_name = "NAME", default_value = "telomere-1tb-ssd")]
    pub chip: String,
    /// Policies, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "sip,sharp")]
    pub policy: Vec<crate::admit_cmd::AdmitPolicy>,
    /// Which utilization to sweep.
    #[arg(long, value_enum, default_value = "both")]
    pub axis: crate::sched_cmd::SchedAxis,
    /// Read and write granularities g, comma-separated (default: the number of chips).
    #[arg(long, allow_negative_numbers = true, value_delimiter = ',', value_name = "G")]
    pub granularity: Vec<u32>,
    /// Tasks per set, comma-separated.
    #[arg(long, allow_negative_numbers = true, value_delimiter = ',', value_name = "N", default_value = "500")]
    pub tasks: Vec<usize>,
    /// Over-provisioning alpha (lambda = 1 - alpha), comma-separated.
    #[arg(long, allow_negative_numbers = true, value_delimiter = ',', value_name = "F", default_value = "0.1")]
    pub over_provisioning: Vec<f64>,
    /// Random task sets per utilization.
    #[arg(long, allow_negative_numbers = true, value_name = "N", default_value_t = 50)]
    pub sets: usize,
    /// Pages each task reads and writes per period (default: the number of chips).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub pages: Option<u64>,
    /// Utilization on the axis not swept.
    #[arg(long, allow_negative_numbers = true, value_name = "U", default_value_t = 0.01)]
    pub other_util: f64,
    /// Grid step (and first value).
    #[arg(long, allow_negative_numbers = true, value_name = "U", default_value_t = 0.01)]
    pub step: f64,
    /// Largest utilization tried.
    #[arg(long, allow_negative_numbers = true, value_name = "U", default_value_t = 1.0)]
    pub max: f64,
    /// Seed of set 0 (set k uses seed + k).
    #[arg(long, allow_negative_numbers = true, value_name = "S", default_value_t = 1)]
    pub seed: u64,
    /// MultiLog-Oracle's workload, the column of the paper's Table 2.
    #[arg(long, value_enum, default_value = "random")]
    pub multilog_workload: crate::admit_cmd::AdmitWorkload,
    /// MultiLog-Oracle's write amplification, instead of Table 2's.
    #[arg(long, allow_negative_numbers = true, value_name = "F")]
    pub waf: Option<f64>,
    /// How Telomere's garbage-collection job (000 Eq. 19) is read: `generalized`
    /// (ftlab's: a g-block stripe erased on min(g, S_chips) chips, once per g*P
    /// pages written) or `printed` (as printed: ceil(t_e / S_chips) once per P
    /// pages written; the paper's Figure 9 follows it).
    #[arg(long, value_enum, default_value = "generalized")]
    pub gc_job: crate::sched_cmd::GcJobArg,
    /// The unit of the bandwidths the generator turns into pages per period (Eq.
    /// 21-22): `mb` (10^6 bytes, ftlab's) or `mib` (2^20 bytes, so 100 MB/s is
    /// exactly 3,200 pages of 32 KiB a second).
    #[arg(long, value_enum, default_value = "mb")]
    pub bandwidth_unit: crate::sched_cmd::BandwidthUnit,
    /// `table`, `csv` or `json`.
    #[arg(long, short = 'f', value_enum, default_value = "table")]
    pub format: crate::sched_cmd::SchedFormat,
    /// Write to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Also draw the limits as grouped bars into this file (SVG, PNG or PDF by the
    /// extension).
    #[arg(long, value_name = "FILE.svg|png|pdf")]
    pub plot: Option<PathBuf>,
    /// The grid key on the plot's x axis.
    #[arg(long, value_enum, default_value = "granularity")]
    pub plot_x: crate::sched_cmd::PlotX,
    /// The plot's title.
    #[arg(long, value_name = "TEXT")]
    pub plot_title: Option<String>,
}

/// `ftlab bounds`.
#[derive(Debug, Args)]
pub struct BoundsArgs {
    /// Chip preset (`ftlab presets chips`).
    #[arg(long)]
    pub chip: Option<String>,
    /// Pages per block (overrides the chip's; required with explicit timing).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub pages_per_block: Option<u32>,
    /// Explicit page read time, us (instead of --chip).
    #[arg(long, allow_negative_numbers = true, value_name = "US")]
    pub read_us: Option<f64>,
    /// Explicit page program time, us.
    #[arg(long, allow_negative_numbers = true, value_name = "US")]
    pub program_us: Option<f64>,
    /// Explicit OOB read time, us (default: the page read time).
    #[arg(long, allow_negative_numbers = true, value_name = "US")]
    pub oob_read_us: Option<f64>,
    /// Explicit block erase time, us.
    #[arg(long, allow_negative_numbers = true, value_name = "US")]
    pub erase_us: Option<f64>,
    /// Add the channel transfer the simulator charges to each page operation (the
    /// papers' tables use array times only).
    #[arg(long)]
    pub with_transfer: bool,
    /// `table` or `json` (an object keyed by scheme).
    #[arg(long, short = 'f', value_enum, default_value = "table")]
    pub format: BoundsFormat,
    /// Write to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `ftlab flashtier`.
#[derive(Debug, Args)]
pub struct FlashtierArgs {
    /// `paper` (8 GiB of flash before 75 GB of data, 4,000,000 flowops of warm-up then
    /// 2,000,000 measured per run), `ci` (16 MiB before 150 MB, 20,000 then 20,000) or N:
    /// the paper's sizes and flowops divided by N.
    #[arg(long, value_name = "SCALE", default_value = "ci")]
    pub scale: String,
    /// Flowops measured per run (default: the scale's).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub ops: Option<u64>,
    /// Flowops of warm-up before the measurement (default: the scale's).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub warmup: Option<u64>,
    /// Bytes of files instead of the scale's; 0 keeps filebench's file counts.
    #[arg(long, allow_negative_numbers = true, value_name = "BYTES")]
    pub data_bytes: Option<u64>,
    /// Comma-separated personalities (default: fileserver,webserver,varmail).
    #[arg(long, value_name = "LIST")]
    pub workloads: Option<String>,
    /// Seed of the workload and the devices.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    pub seed: u64,
    /// The FTL of the SSD systems.
    #[arg(long, value_name = "KIND", default_value = "pagemap")]
    pub ssd_ftl: String,
    /// The SSD manager's placement: 0 for one global LRU, N for FlashCache's set-associative
    /// placement with sets of N blocks (FlashCache's are 512) and LRU within each set.
    #[arg(long, allow_negative_numbers = true, value_name = "N", default_value_t = 0)]
    pub ssd_set_blocks: u64,
    /// How the SSC keeps its map across a power cut: `oob` (per-write OOB logging) or `log`
    /// (the OpenSSD prototype's map log and checkpoints).
    #[arg(long, value_enum, value_name = "MODE", default_value = "oob")]
    pub ssc_consistency: SscConsistency,
    /// With `--ssc-consistency log`: `on` checkpoints the whole map on each flush (the
    /// prototype's), `off` writes only the log at a flush (FlashTier's checkpoint schedule).
    #[arg(long, value_name = "on|off", default_value = "on")]
    pub ssc_flush_checkpoint: String,
    /// How filebench's flowops choose files: `uniform` (ftlab's original) or `rotor`
    /// (filebench's own: in index order, one rotor shared by all threads).
    #[arg(long, value_name = "MODE", default_value = "uniform")]
    pub file_pick: String,
    /// Bytes of disk the file layout spans, if more than 1.5 x the data set (e.g. the
    /// partition's size).
    #[arg(long, allow_negative_numbers = true, value_name = "BYTES", default_value_t = 0)]
    pub layout_bytes: u64,
    /// A read miss completes only after its cache fill (FlashCache's READFILL before the
    /// request ends); default: it completes after the disk read.
    #[arg(long)]
    pub read_fill_sync: bool,
    /// The SSD manager writes its metadata only when a block becomes dirty (FlashCache);
    /// default: after every dirty write.
    #[arg(long)]
    pub metadata_on_dirty_transition: bool,
    /// Selective caching: a write in a sequential run of at least N blocks bypasses the
    /// cache (0: off). Default 16 (64 KiB).
    #[arg(long, allow_negative_numbers = true, value_name = "N", default_value_t = 16)]
    pub sequential_blocks: u64,
    /// Folder for flashtier.csv, ssc-metadata.csv, waits.csv (each mean flowop response split into disk and flash wait), throughput.svg, latency.svg and erases.svg.
    #[arg(long, short, value_name = "DIR")]
    pub out: std::path::PathBuf,
    /// Run nothing: redraw throughput.svg, latency.svg and erases.svg into --out from
    /// FILE, the flashtier.csv of an earlier run (a figure redrawn without the hours a
    /// paper-scale run takes).
    #[arg(long, value_name = "FILE")]
    pub replot: Option<std::path::PathBuf>,
}

/// `ftlab mqsim`.
#[derive(Debug, Args)]
pub struct MqsimArgs {
    /// MQSim's SSD configuration (ssdconfig.xml).
    #[arg(long, value_name = "FILE")]
    pub ssd: PathBuf,
    /// MQSim's workload definitions (workload.xml).
    #[arg(long, value_name = "FILE")]
    pub workload: PathBuf,
    /// Run only scenario N (from 1) of the workload file (default: every one).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub scenario: Option<usize>,
    /// Write each scenario's ftlab config (scenario-N.toml) and JSON report
    /// (scenario-N.json) into DIR, created if missing.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// Write the configs (with --out-dir) or print them, and run nothing.
    #[arg(long)]
    pub no_run: bool,
    /// Replace MQSim's Block_No_Per_Plane (a smaller device, for a quick run).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub blocks_per_plane: Option<u32>,
    /// At most N requests a flow (for a quick run of flows that stop on time).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub requests: Option<u64>,
    /// Fill the logical space before measuring even if Enabled_Preconditioning is false
    /// (so that reads find written data).
    #[arg(long)]
    pub precondition_fill: bool,
    /// Also run each flow alone, for its slowdown (one more run a flow; MQSim makes none).
    #[arg(long)]
    pub slowdown: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `ftlab janus-model`. The defaults are 004's Figure 4 example.
#[derive(Debug, Args)]
pub struct JanusModelArgs {
    /// Blocks of the device.
    #[arg(long, allow_negative_numbers = true, value_name = "N", default_value_t = 1024)]
    pub blocks: u32,
    /// Over-provisioned blocks N_O.
    #[arg(long, allow_negative_numbers = true, value_name = "N", default_value_t = 20)]
    pub over_provisioned: u32,
    /// Pages per block N_P.
    #[arg(long, allow_negative_numbers = true, value_name = "N", default_value_t = 64)]
    pub pages_per_block: u32,
    /// Block erase cost C_E, us.
    #[arg(long, allow_negative_numbers = true, value_name = "US", default_value_t = 2000.0)]
    pub erase_us: f64,
    /// Page copy cost C_CP, us.
    #[arg(long, allow_negative_numbers = true, value_name = "US", default_value_t = 225.0)]
    pub copy_us: f64,
    /// Page write cost C_PROG, us.
    #[arg(long, allow_negative_numbers = true, value_name = "US", default_value_t = 200.0)]
    pub program_us: f64,
    /// A strongly local workload: hit rate 1 - exp(-n / L) at n fused blocks (default: a
    /// uniformly random one, n / N_D).
    #[arg(long, allow_negative_numbers = true, value_name = "L")]
    pub locality: Option<f64>,
    /// Hit rates from a file, one per line for 0, 1, 2, ... fused blocks, or the JSON report
    /// of an `ftlab run` of janus (its ghost-buffer estimate, `ftl_curves.ghost_hit_rates`);
    /// the last holds beyond.
    #[arg(long, value_name = "FILE", conflicts_with = "locality")]
    pub hit_rates: Option<PathBuf>,
}

/// `ftlab flashtier --ssc-consistency`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SscConsistency {
    Oob,
    Log,
}

/// Formats of `ftlab bounds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BoundsFormat {
    Table,
    Json,
}

/// `ftlab presets`.
#[derive(Debug, Args)]
pub struct PresetsArgs {
    /// Which group to list (all of them when omitted).
    #[arg(value_enum)]
    pub group: Option<PresetGroup>,
    /// Output format: `table`, or `json` (an object with a list of
    /// {name, summary} per group: chips, ftls, workloads, formats).
    #[arg(long, short = 'f', value_enum, default_value_t = StatsFormat::Table)]
    pub format: StatsFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PresetGroup {
    /// NAND chip presets (`--chip`).
    Chips,
    /// FTL schemes (`--ftl`).
    Ftls,
    /// Generated workload presets (`--workload`).
    Workloads,
    /// Trace formats (`--trace-format`).
    Formats,
}

/// `ftlab trace`.
#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Summarise a trace: mix, sizes, footprint, sequentiality, duration.
    Stats(TraceStatsArgs),
}

#[derive(Debug, Args)]
pub struct TraceStatsArgs {
    /// The trace file (plain, gzip, bzip2 or zstd).
    pub file: PathBuf,
    /// Its format (`ftlab presets formats`), as `--trace-format` of `ftlab run`.
    #[arg(long, value_name = "FORMAT")]
    pub trace_format: String,
    /// Count and skip malformed lines instead of stopping at the first.
    #[arg(long)]
    pub skip_bad_lines: bool,
    /// Output format, as `-f` everywhere else (`--output-format` is its old name).
    #[arg(long, short = 'f', alias = "output-format", value_enum, default_value_t = StatsFormat::Table)]
    pub format: StatsFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StatsFormat {
    Table,
    Json,
}
