//! From the command line to a [`RunConfig`]: the config file is read as a TOML
//! table, each flag overrides one key of it (some also remove the keys they
//! replace), then each `--set KEY=VALUE` in order, and the result is
//! deserialized, so a flag and the key it names can never disagree.

use std::path::Path;

use serde::Deserialize;
use toml::{Table, Value};

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

/// Reads a TOML run configuration as a table. Unknown keys are reported here,
/// with their line, and a relative `workload.trace` is made relative to the file.
pub fn load_file(path: &Path) -> Result<Table, CliError> {
    let text = std::fs::read_to_string(path).map_err(|error| CliError::Read { path: path.to_owned(), error })?;
    let origin = path.display().to_string();
    RunConfig::from_toml(&text, &origin).map_err(|e| CliError::Usage(e.to_string()))?;
    let mut table = load_table_text(&text, &origin)?;
    if let Some(Value::Table(workload)) = table.get_mut("workload") {
        if let Some(Value::String(trace)) = workload.get_mut("trace") {
            *trace = relative_to(path, trace);
        }
    }
    Ok(table)
}

/// Parses a TOML document.
pub fn load_table_text(text: &str, origin: &str) -> Result<Table, CliError> {
    text.parse::<Table>().map_err(|e| CliError::Usage(format!("{origin}: {e}")))
}

/// `file` as written in the config file at `config`: relative paths are relative
/// to the config file's folder.
pub fn relative_to(config: &Path, file: &str) -> String {
    let p = Path::new(file);
    match config.parent() {
        Some(dir) if p.is_relative() && !dir.as_os_str().is_empty() => dir.join(p).to_string_lossy().into_owned(),
        _ => file.to_owned(),
    }
}

/// Deserializes a table into a run configuration; unknown keys are errors naming them.
pub fn to_config(table: Table, origin: &str) -> Result<RunConfig, CliError> {
    RunConfig::deserialize(Value::Table(table)).map_err(|e| CliError::Usage(format!("{origin}: {}", e.message())))
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

/// Splits `KEY=VALUE`; VALUE is a TOML value, or a string when it is a bare word
/// that is not one (`--set device.chip=small-slc`).
pub fn parse_assignment(s: &str) -> Result<(String, Value), CliError> {
    let (key, raw) = s
        .split_once('=')
        .ok_or_else(|| CliError::Usage(format!("--set expects KEY=VALUE (e.g. ftl.gc_free_blocks=3), got `{s}`")))?;
    let key = key.trim();
    if key.is_empty() || key.split('.').any(str::is_empty) {
        return Err(CliError::Usage(format!("--set `{s}`: the key must be a dotted path such as ftl.gc_free_blocks")));
    }
    Ok((key.to_owned(), parse_value(raw.trim()).map_err(|e| CliError::Usage(format!("--set `{s}`: {e}")))?))
}

/// A TOML value written alone (`3`, `0.1`, `true`, `"x"`, `[1, 2]`), or a bare word as a string.
fn parse_value(raw: &str) -> Result<Value, String> {
    if raw.is_empty() {
        return Err("the value is empty (write \"\" for an empty string)".into());
    }
    match format!("v = {raw}").parse::<Table>() {
        Ok(mut t) => t.remove("v").ok_or_else(|| "no value".to_owned()),
        Err(_) if !raw.is_empty() && !raw.starts_with(['[', '{', '"', '\'']) && !raw.contains(['\n', '"']) => {
            Ok(Value::String(raw.to_owned()))
        }
        Err(e) => Err(format!("invalid TOML value `{raw}`: {}", e.message().trim())),
    }
}

/// Sets the dotted `key` in `table`, creating the tables on the way.
pub fn set_path(table: &mut Table, key: &str, value: Value) -> Result<(), CliError> {
    let mut parts: Vec<&str> = key.split('.').collect();
    let last = parts.pop().unwrap_or(key);
    let mut t = table;
    for (i, part) in parts.iter().enumerate() {
        let entry = t.entry(part.to_string()).or_insert_with(|| Value::Table(Table::new()));
        t = match entry {
            Value::Table(inner) => inner,
            _ => {
                return Err(CliError::Usage(format!(
                    "cannot set `{key}`: `{}` is a value, not a table",
                    parts[..=i].join(".")
                )))
            }
        };
    }
    t.insert(last.to_owned(), value);
    Ok(())
}

/// Removes the dotted `key` from `table` if present.
fn remove_path(table: &mut Table, key: &str) {
    let mut parts: Vec<&str> = key.split('.').collect();
    let last = parts.pop().unwrap_or(key);
    let mut t = table;
    for part in parts {
        match t.get_mut(part) {
            Some(Value::Table(inner)) => t = inner,
            _ => return,
        }
    }
    t.remove(last);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn values_parse_as_toml_or_bare_words() {
        assert_eq!(parse_assignment("ftl.gc_free_blocks=3").unwrap(), ("ftl.gc_free_blocks".into(), Value::Integer(3)));
        assert_eq!(parse_assignment("device.chip=small-slc").unwrap().1, Value::String("small-slc".into()));
        assert_eq!(parse_assignment("a.b=\"x y\"").unwrap().1, Value::String("x y".into()));
        assert_eq!(parse_assignment("a=0.5").unwrap().1, Value::Float(0.5));
        assert!(parse_assignment("a=[1,").is_err());
        assert!(parse_assignment("noequals").is_err());
        assert!(parse_assignment("a..b=1").is_err());
    }

    #[test]
    fn set_and_remove_paths() {
        let mut t = Table::new();
        set_path(&mut t, "device.chip", Value::String("x".into())).unwrap();
        set_path(&mut t, "seed", Value::Integer(3)).unwrap();
        assert!(set_path(&mut t, "seed.x", Value::Integer(1)).is_err());
        assert_eq!(t["device"]["chip"].as_str(), Some("x"));
        remove_path(&mut t, "device.chip");
        remove_path(&mut t, "nothing.here");
        assert!(t["device"].as_table().unwrap().is_empty());
    }

    #[test]
    fn unknown_keys_are_named() {
        let mut t = Table::new();
        set_path(&mut t, "device.blocks_per_plan", Value::Integer(3)).unwrap();
        let e = to_config(t, "test").unwrap_err().to_string();
        assert!(e.contains("blocks_per_plan"), "{e}");
    }

    #[test]
    fn relative_trace_paths_follow_the_config_file() {
        assert_eq!(relative_to(Path::new("exp/a.toml"), "t.csv"), Path::new("exp").join("t.csv").to_string_lossy());
        assert_eq!(relative_to(Path::new("a.toml"), "t.csv"), "t.csv");
        assert_eq!(relative_to(Path::new("exp/a.toml"), "/abs/t.csv"), "/abs/t.csv");
    }
}
