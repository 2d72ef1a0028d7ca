//! From the command line to a [`RunConfig`]: the config file is read as a TOML
//! table, each flag overrides one key of it (some also remove the keys they
//! replace), then each `--set KEY=VALUE` in order, and the result is
//! deserialized, so a flag and the key it names can never disagree. The table
//! operations are [`ftlab_lab::overlay`]'s; the flags are the command line's.

use std::path::Path;

use toml::{Table, Value};

use ftlab_lab::overlay::{load_file, parse_assignment, remove_path, set_path, to_config};
use ftlab_sim::RunConfig;

use crate::cli::ConfigArgs;
use crate::error::CliError;

/// Requests a generated workload stops after when neither a config file nor
/// `--requests` / `--set workload.max_requests` bounds the run: the workload
/// presets issue a million requests, which takes too long for a first try.
pub const DEFAULT_MAX_REQUESTS: u64 = 200_000;

/// A configuration built from the command line.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub config: RunConfig,
    /// [`DEFAULT_MAX_REQUESTS`] was applied.
    pub capped: bool,
}

/// The configuration of `ftlab run` / `ftlab compare`: the file, then the flags
/// (`ftl` is `run`'s `--ftl`), then `--set`.
pub fn from_args(args: &ConfigArgs, ftl: Option<&str>) -> Result<Resolved, CliError> {
    let mut table = match &args.config {
        Some(path) => load_file(path)?,
        None => Table::new(),
    };
    for op in flag_overrides(args, ftl)? {
        match op {
            Override::Set(key, value) => set_path(&mut table, key, value)?,
            Override::Remove(key) => remove_path(&mut table, key),
        }
    }
    for assignment in &args.set {
        let (key, value) = parse_assignment(assignment)?;
        set_path(&mut table, &key, value)?;
    }
    let origin = match &args.config {
        Some(path) => format!("{} with command-line overrides", path.display()),
        None => "command line".to_owned(),
    };
    let mut config = to_config(table, &origin)?;
    let w = &config.workload;
    // Generators of a known length no longer than the cap run whole.
    let long = crate::progress::generated_requests(&config).is_none_or(|n| n > DEFAULT_MAX_REQUESTS);
    let capped = args.config.is_none() && w.max_requests.is_none() && w.trace.is_none() && w.tasks.is_empty() && long;
    if capped {
        config.workload.max_requests = Some(DEFAULT_MAX_REQUESTS);
    }
    Ok(Resolved { config, capped })
}

enum Override {
    Set(&'static str, Value),
    Remove(&'static str),
}

/// The keys the named flags set, in order; a flag that replaces other keys
/// removes them first (`--trace` replaces the workload source, `--capacity-gib`
/// and `--blocks-per-plane` replace each other, `--over-provisioning` replaces
/// `ftl.over_provisioning`).
fn flag_overrides(a: &ConfigArgs, ftl: Option<&str>) -> Result<Vec<Override>, CliError> {
    use Override::{Remove, Set};
    let mut ops = Vec::new();
    let int = |v: u64| -> Result<Value, CliError> {
        i64::try_from(v).map(Value::Integer).map_err(|_| CliError::Usage(format!("{v} is too large")))
    };
    let string = |s: &str| Value::String(s.to_owned());
    if let Some(kind) = ftl {
        ops.push(Set("ftl.kind", string(kind)));
    }
    if let Some(chip) = &a.chip {
        ops.push(Set("device.chip", string(chip)));
    }
    if let Some(gib) = a.capacity_gib {
        ops.extend([Remove("device.blocks_per_plane"), Set("device.capacity_gib", Value::Float(gib))]);
    }
    if let Some(n) = a.blocks_per_plane {
        ops.extend([Remove("device.capacity_gib"), Set("device.blocks_per_plane", int(n.into())?)]);
    }
    for (key, v) in [
        ("device.pages_per_block", a.pages_per_block),
        ("device.page_size", a.page_size),
        ("device.channels", a.channels),
        ("device.ways", a.ways),
        ("device.dies", a.dies),
        ("device.planes", a.planes),
        ("host.queue_depth", a.queue_depth),
    ] {
        if let Some(v) = v {
            ops.push(Set(key, int(v.into())?));
        }
    }
    if let Some(op) = a.over_provisioning {
        ops.extend([Remove("ftl.over_provisioning"), Set("device.over_provisioning", Value::Float(op))]);
    }
    if let Some(trace) = &a.trace {
        let path = path_str(trace)?;
        ops.extend(["workload.preset", "workload.generator", "workload.task"].map(Remove));
        ops.push(Set("workload.trace", string(path)));
    }
    if let Some(f) = &a.trace_format {
        ops.push(Set("workload.trace_format", string(f)));
    }
    if let Some(m) = &a.address {
        ops.push(Set("workload.address", string(m)));
    }
    if a.skip_bad_lines {
        ops.push(Set("workload.skip_bad_lines", Value::Boolean(true)));
    }
    if let Some(name) = &a.workload {
        ops.extend(
            ["workload.trace", "workload.trace_format", "workload.address", "workload.generator", "workload.task"]
                .map(Remove),
        );
        ops.push(Set("workload.preset", string(name)));
    }
    if let Some(n) = a.requests {
        ops.push(Set("workload.max_requests", int(n)?));
    }
    if let Some(m) = a.mode {
        ops.push(Set("host.mode", string(m.name())));
    }
    if let Some(us) = a.bound_us {
        ops.push(Set("metrics.bound_us", Value::Float(us)));
    }
    if let Some(path) = &a.latency_log {
        ops.push(Set("metrics.latency_log", string(&path.to_string_lossy())));
    }
    if let Some(f) = a.time_scale {
        ops.push(Set("host.time_scale", Value::Float(f)));
    }
    if a.precondition_fill {
        ops.push(Set("precondition.fill", Value::Boolean(true)));
    }
    if let Some(f) = a.random_overwrites {
        ops.push(Set("precondition.random_overwrites", Value::Float(f)));
    }
    if a.start_at_first_gc {
        ops.push(Set("precondition.start_at_first_gc", Value::Boolean(true)));
    }
    if let Some(seed) = a.seed {
        ops.push(Set("seed", int(seed)?));
    }
    Ok(ops)
}

fn path_str(p: &Path) -> Result<&str, CliError> {
    p.to_str().ok_or_else(|| CliError::Usage(format!("path {} is not valid UTF-8", p.display())))
}
