//! `ftlab admit`: Telomere's admission control and its baselines for a task set
//! (`ftlab_bounds::telomere`, pure calculations, no simulation).

use std::fmt::Write as _;

use clap::ValueEnum;
use ftlab_bounds::telomere::{admit_with, Admission, ChipCheck, Device, MultiLogWorkload, Policy, TaskSet, Test};

use crate::cli::AdmitArgs;
use crate::error::CliError;
use crate::output::Sink;

/// `--policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AdmitPolicy {
    /// Telomere Single Task Placement: blocks per task (Eq. 5-11) + EDF (Eq. 20).
    Sip,
    /// Telomere Shared Task Placement: Algorithm 1's partitions (Eq. 12-16) + EDF.
    Sharp,
    /// WAO-GC: page mapping within min(lambda, Lazy-RTGC's U(sigma)) (Eq. 24-26).
    Waogc,
    /// MultiLog-Oracle: page mapping + bank reservation with Table 2's WAF.
    Multilog,
}

/// `--multilog-workload`: the column of Table 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AdmitWorkload {
    /// Uniform random updates.
    Random,
    /// Zipf 80/20 updates.
    Zipf,
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AdmitFormat {
    Table,
    Json,
}

/// The long help's tail: inputs, order rule and JSON fields.
pub const ADMIT_AFTER_HELP: &str = "\
Task set file: [[task]] tables with `name`, `read_pages`, `read_period_ms`,
`write_pages`, `write_period_ms`, `lifetime_ms` (or `lifetime_periods`, the
paper's l^w) and optional `granularity` (pages striped per request; a top-level
`granularity` is the default of every task, else 1). Periods are in ms.

Order: tasks are considered in file order, each with the tasks admitted before
it; storage is tested first, then throughput. A refused task consumes nothing.
A refused task is a verdict, not an error: the exit status is 0.

Device: the chip preset's pages per block, total blocks and chips (channels x
ways); --blocks and --over-provisioning (lambda = 1 - F) override them, and
--erase-us the erase time t_e (the header line prints the times used).

JSON fields (stable): policy, device, storage_unit (\"blocks\" for sip/sharp,
\"pages\" for waogc/multilog), lambda (the utilization the storage test allows),
storage_available (lambda x blocks or pages), waf (multilog, else null),
admitted, refused (counts), storage_needed and throughput_load (of the admitted
tasks; the load is the left side of Eq. 20, limit 1), partitions (names of
tasks sharing blocks), chip_check ({channel_wait_ns} with --per-chip under
sip/sharp, else null), tasks: [{name, admitted, refused_by (\"storage\",
\"throughput\", \"chip\" or null), storage_needed, throughput_load (of the
admitted tasks plus this one), excess (amount over the failing limit: for
\"chip\" the chip's load over 1, or null), chip (the chip over its limit, or
null)}].

--per-chip (sip, sharp): after Eq. 20, every chip is tested with Eq. 20's form
over the work placed on it when each task is striped over its own g chips (Eq.
18 spreads writes over all chips): the test ftlab's telomere FTLs apply.

Generated sets (--generate N): UUniFast storage and bandwidth utilizations
summing to --storage-util and --throughput-util, periods and lifetimes from
Eq. 21-23 of the Telomere paper, each task reading and writing one stripe over
all chips; --seed makes them reproducible.";

/// Runs `ftlab admit`.
pub fn run(args: &AdmitArgs) -> Result<(), CliError> {
    let usage = |e: ftlab_bounds::telomere::TelomereError| CliError::Usage(e.to_string());
    let device = device(args)?;
    let set = match (&args.taskset, args.generate) {
        (Some(path), None) => {
            let text = std::fs::read_to_string(path).map_err(|error| CliError::Read { path: path.clone(), error })?;
            TaskSet::from_toml(&text, Some(&path.display().to_string()), device).map_err(usage)?
        }
        (None, Some(n)) => {
            let (Some(us), Some(ub)) = (args.storage_util, args.throughput_util) else {
                return Err(CliError::Usage("--generate needs --storage-util and --throughput-util".into()));
            };
            TaskSet::generate(n, us, ub, args.seed, device).map_err(usage)?
        }
        _ => return Err(CliError::Usage("give a TASKSET.toml file or --generate N (not both)".into())),
    };
    let workload = match args.multilog_workload {
        AdmitWorkload::Random => MultiLogWorkload::Random,
        AdmitWorkload::Zipf => MultiLogWorkload::Zipf,
    };
    let policy = match args.policy {
        AdmitPolicy::Sip => Policy::Sip,
        AdmitPolicy::Sharp => Policy::Sharp,
        AdmitPolicy::Waogc => Policy::WaoGc,
        AdmitPolicy::Multilog => Policy::MultiLog { workload, waf: args.waf },
    };
    let chip_check =
        args.per_chip.then(|| ChipCheck { channel_wait_ns: ftlab_lab::bounds::channel_wait_ns(&args.chip) });
    let admission = admit_with(&set, policy, chip_check).map_err(usage)?;
    let text = match args.format {
        AdmitFormat::Table => table(&admission, &set.device),
        AdmitFormat::Json => {
            let mut s = serde_json::to_string_pretty(&admission)
                .map_err(|e| CliError::Failed(format!("cannot serialize the admission: {e}")))?;
            s.push('\n');
            s
        }
    };
    Sink::open(args.out.as_deref())?.write(&text)
}

fn device(args: &AdmitArgs) -> Result<Device, CliError> {
    let mut d = ftlab_lab::bounds::admit_device(&args.chip, args.blocks, args.over_provisioning)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    // At most an hour: a page or erase time, not a typo's 1e30.
    let time = |flag: &str, what: &str, us: Option<f64>, example: &str| -> Result<Option<u64>, CliError> {
        match us {
            None => Ok(None),
            Some(us) if us > 0.0 && us <= 3.6e9 => Ok(Some((us * 1e3).round() as u64)),
            Some(us) => Err(CliError::Usage(format!(
                "{flag} must be a positive {what} time in microseconds (at most 3.6e9), got {us}; e.g. {example}"
            ))),
        }
    };
    if let Some(ns) = time("--erase-us", "erase", args.erase_us, "7000")? {
        d.t_e_ns = ns;
    }
    if let Some(ns) = time("--read-us", "read", args.read_us, "200")? {
        d.t_r_ns = ns;
    }
    if let Some(ns) = time("--program-us", "program", args.program_us, "700")? {
        d.t_w_ns = ns;
    }
    Ok(d)
}

fn table(a: &Admission, d: &Device) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} on {}: {} blocks of {} pages, {} chips, t_r {} us, t_w {} us, t_e {} us, lambda {:.4}{}",
        a.policy,
        d.name,
        d.blocks,
        d.pages_per_block,
        d.parallel_units,
        d.t_r_ns as f64 / 1e3,
        d.t_w_ns as f64 / 1e3,
        d.t_e_ns as f64 / 1e3,
        a.lambda,
        a.waf.map(|w| format!(", WAF {w}")).unwrap_or_default()
    );
    let width = a.tasks.iter().map(|t| t.name.len()).max().unwrap_or(4).max(4);
    let unit = format!("storage ({})", a.storage_unit);
    let _ = writeln!(
        s,
        "\n{:<width$}  {:<8}  {:<10}  {:>16}  {:>8}  {:>12}",
        "task", "verdict", "refused by", unit, "load", "excess"
    );
    for t in &a.tasks {
        let (verdict, by) = match t.refused_by {
            None => ("admitted", "-"),
            Some(Test::Storage) => ("refused", "storage"),
            Some(Test::Throughput) => ("refused", "throughput"),
            Some(Test::Chip) => ("refused", "chip"),
        };
        let excess = match (t.refused_by, t.excess) {
            (Some(Test::Storage), Some(x)) => format!("+{x:.1}"),
            (Some(Test::Throughput), Some(x)) => format!("+{x:.4}"),
            (Some(Test::Chip), Some(x)) => format!("+{x:.4} (chip {})", t.chip.unwrap_or(0)),
            _ => "-".into(),
        };
        let _ = writeln!(
            s,
            "{:<width$}  {verdict:<8}  {by:<10}  {:>16}  {:>8.4}  {excess:>12}",
            t.name, t.storage_needed, t.throughput_load
        );
    }
    let _ = writeln!(
        s,
        "\nadmitted {} of {}; storage {} of {:.1} {} ({:.1}%); throughput load {:.4} (limit 1)",
        a.admitted,
        a.tasks.len(),
        a.storage_needed,
        a.storage_available,
        a.storage_unit,
        100.0 * a.storage_needed as f64 / a.storage_available,
        a.throughput_load
    );
    if a.policy == "sharp" {
        let parts: Vec<String> = a.partitions.iter().map(|p| format!("[{}]", p.join(" "))).collect();
        let _ = writeln!(s, "partitions: {}", parts.join(" "));
    }
    s
}
