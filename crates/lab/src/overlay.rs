//! Run configurations as TOML tables: a config file is read as a table, dotted
//! keys are set on it (`--set KEY=VALUE` and the flags that name one key), and
//! the result is deserialized into a [`RunConfig`], so an overlay and the key it
//! names can never disagree.

use std::path::Path;

use serde::Deserialize;
use toml::{Table, Value};

use ftlab_sim::{RunConfig, SimError};

use crate::LabError;

/// Reads a TOML run configuration as a table. Unknown keys are reported here,
/// with their line, and a relative `workload.trace` is made relative to the file.
pub fn load_file(path: &Path) -> Result<Table, LabError> {
    let text = std::fs::read_to_string(path).map_err(|error| LabError::Read { path: path.to_owned(), error })?;
    let origin = path.display().to_string();
    RunConfig::from_toml(&text, &origin).map_err(|e| match e {
        SimError::Config(c) => LabError::Config(c),
        e => LabError::Run(e),
    })?;
    let mut table = load_table_text(&text, &origin)?;
    if let Some(Value::Table(workload)) = table.get_mut("workload") {
        if let Some(Value::String(trace)) = workload.get_mut("trace") {
            *trace = relative_to(path, trace);
        }
    }
    Ok(table)
}

/// Parses a TOML document; `origin` names it in errors.
pub fn load_table_text(text: &str, origin: &str) -> Result<Table, LabError> {
    text.parse::<Table>().map_err(|e| {
        let key = e.span().map_or_else(String::new, |span| ftlab_sim::config::key_at(text, span.start));
        LabError::config(key, format!("{origin}: {e}"))
    })
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
pub fn to_config(table: Table, origin: &str) -> Result<RunConfig, LabError> {
    RunConfig::deserialize(Value::Table(table.clone())).map_err(|e| {
        // A table's own errors have no place; the same table as text has one,
        // and the line there names the key.
        let key = toml::to_string(&table)
            .ok()
            .and_then(|text| match RunConfig::from_toml(&text, origin) {
                Err(SimError::Config(c)) => Some(c.key),
                _ => None,
            })
            .unwrap_or_default();
        LabError::config(key, format!("{origin}: {}", e.message()))
    })
}

/// Splits `KEY=VALUE`; VALUE is a TOML value, or a string when it is a bare word
/// that is not one (`--set device.chip=small-slc`).
pub fn parse_assignment(s: &str) -> Result<(String, Value), LabError> {
    let (key, raw) = s.split_once('=').ok_or_else(|| {
        LabError::config(s.trim(), format!("--set expects KEY=VALUE (e.g. ftl.gc_free_blocks=3), got `{s}`"))
    })?;
    let key = key.trim();
    if key.is_empty() || key.split('.').any(str::is_empty) {
        return Err(LabError::config(
            key,
            format!("--set `{s}`: the key must be a dotted path such as ftl.gc_free_blocks"),
        ));
    }
    Ok((key.to_owned(), parse_value(raw.trim()).map_err(|e| LabError::config(key, format!("--set `{s}`: {e}")))?))
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
pub fn set_path(table: &mut Table, key: &str, value: Value) -> Result<(), LabError> {
    let mut parts: Vec<&str> = key.split('.').collect();
    let last = parts.pop().unwrap_or(key);
    let mut t = table;
    for (i, part) in parts.iter().enumerate() {
        let entry = t.entry(part.to_string()).or_insert_with(|| Value::Table(Table::new()));
        t = match entry {
            Value::Table(inner) => inner,
            _ => {
                return Err(LabError::config(
                    key,
                    format!("cannot set `{key}`: `{}` is a value, not a table", parts[..=i].join(".")),
                ))
            }
        };
    }
    t.insert(last.to_owned(), value);
    Ok(())
}

/// Removes the dotted `key` from `table` if present.
pub fn remove_path(table: &mut Table, key: &str) {
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
        assert_eq!(parse_assignment("a.b=[1,").unwrap_err().key(), Some("a.b"));
        assert_eq!(parse_assignment("noequals").unwrap_err().key(), Some("noequals"));
        assert_eq!(parse_assignment("a..b=1").unwrap_err().key(), Some("a..b"));
    }

    #[test]
    fn set_and_remove_paths() {
        let mut t = Table::new();
        set_path(&mut t, "device.chip", Value::String("x".into())).unwrap();
        set_path(&mut t, "seed", Value::Integer(3)).unwrap();
        assert_eq!(set_path(&mut t, "seed.x", Value::Integer(1)).unwrap_err().key(), Some("seed.x"));
        assert_eq!(t["device"]["chip"].as_str(), Some("x"));
        remove_path(&mut t, "device.chip");
        remove_path(&mut t, "nothing.here");
        assert!(t["device"].as_table().unwrap().is_empty());
    }

    #[test]
    fn unknown_keys_are_named() {
        let mut t = Table::new();
        set_path(&mut t, "device.blocks_per_plan", Value::Integer(3)).unwrap();
        let e = to_config(t, "test").unwrap_err();
        assert!(e.to_string().contains("blocks_per_plan"), "{e}");
        assert_eq!(e.key(), Some("device.blocks_per_plan"));
        let mut t = Table::new();
        set_path(&mut t, "ftl.kind", Value::Integer(3)).unwrap();
        assert_eq!(to_config(t, "test").unwrap_err().key(), Some("ftl.kind"));
    }

    #[test]
    fn errors_of_a_file_name_the_key() {
        let e = load_table_text("[device]\nchip = \n", "t").unwrap_err();
        assert_eq!(e.key(), Some("device.chip"));
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.toml");
        std::fs::write(&p, "seed = 1\n[device]\nblocks_per_plane = \"x\"\n").unwrap();
        assert_eq!(load_file(&p).unwrap_err().key(), Some("device.blocks_per_plane"));
    }

    #[test]
    fn relative_trace_paths_follow_the_config_file() {
        assert_eq!(relative_to(Path::new("exp/a.toml"), "t.csv"), Path::new("exp").join("t.csv").to_string_lossy());
        assert_eq!(relative_to(Path::new("a.toml"), "t.csv"), "t.csv");
        assert_eq!(relative_to(Path::new("exp/a.toml"), "/abs/t.csv"), "/abs/t.csv");
    }
}
