//! The field dictionary: what a report column or config key is called on a
//! figure, and its unit. Units come from the report's JSON Schema (`x-unit`,
//! [`crate::provenance::report_schema`]), names from a short list of the
//! common fields, then from the first words of the field's description, then
//! from the key itself (`gc_free_blocks` → "Gc free blocks"). Figures never
//! show a raw key or a path: a trace path shows as its file name ([`value`]).

use std::sync::OnceLock;

use serde_json::Value;

use crate::figure::Axis;

/// Short names of the common report fields and config keys.
const NAMES: &[(&str, &str)] = &[
    ("waf", "Write amplification"),
    ("erases", "Block erases"),
    ("read_us", "Read response"),
    ("write_us", "Write response"),
    ("trim_us", "Trim response"),
    ("iops", "Throughput"),
    ("read_mb_per_s", "Read throughput"),
    ("write_mb_per_s", "Write throughput"),
    ("gc_page_copies", "GC page copies"),
    ("sim_seconds", "Simulated time"),
    ("space_utilization", "Space utilization"),
    ("max_service_us", "Longest page service"),
    ("max_rmw_service_us", "Longest read-modify-write"),
    ("ftl_bound_us", "Promised worst case"),
    ("bound_us", "Bound"),
    ("bound_violations", "Bound violations"),
    ("deadline_misses", "Deadline misses"),
    ("flash_pages_programmed", "Flash page programs"),
    ("flash_pages_read", "Flash page reads"),
    ("host_pages_written", "Host pages written"),
    ("host_pages_read", "Host pages read"),
    ("ram_bytes", "FTL RAM"),
    ("requests", "Requests"),
    ("logical_pages", "Logical pages"),
    ("physical_pages", "Physical pages"),
    ("retired_fraction", "Retired blocks"),
    ("fairness", "Fairness"),
    ("ftl.kind", "FTL"),
    ("ftl", "FTL"),
    ("workload.preset", "Workload"),
    ("workload.kind", "Workload"),
    ("workload.trace", "Trace"),
    ("workload", "Workload"),
    ("case", "Case"),
    ("run", "Run"),
    ("seed", "Seed"),
    ("device.chip", "Chip"),
    ("device.over_provisioning", "Over-provisioning"),
    ("ftl.over_provisioning", "Over-provisioning"),
    ("host.queue_depth", "Queue depth"),
    ("workload.block_bytes", "Request size (bytes)"),
    ("ftl.cmt_entries", "Cached map entries"),
    ("chip", "Chip"),
];

/// The sections of a run's configuration: their keys are grid keys.
const CONFIG_SECTIONS: [&str; 7] = ["device.", "host.", "ftl.", "workload.", "precondition.", "metrics.", "gc."];

/// Names of the parts of a latency summary and of a purpose split.
const PARTS: &[(&str, &str)] = &[
    ("p50", "median"),
    ("p90", "p90"),
    ("p99", "p99"),
    ("p999", "p99.9"),
    ("p9999", "p99.99"),
    ("max", "max"),
    ("mean", "mean"),
    ("count", "count"),
    ("host", "host"),
    ("gc", "GC"),
];

/// A field's name and unit on a figure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub label: String,
    pub unit: Option<String>,
}

fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(crate::provenance::report_schema)
}

/// The schema of `key` (a dotted column name), following `$ref`s, nullable
/// unions and maps (`ftl_gauges.NAME`).
fn schema_of(key: &str) -> Option<&'static Value> {
    let root = schema();
    let resolve = |mut v: &'static Value| -> &'static Value {
        for _ in 0..8 {
            if let Some(r) = v.get("$ref").and_then(Value::as_str) {
                match r.strip_prefix("#/$defs/").and_then(|d| root.get("$defs")?.get(d)) {
                    Some(d) => v = d,
                    None => break,
                }
            } else if let Some(alt) = ["anyOf", "oneOf", "allOf"]
                .iter()
                .find_map(|k| v.get(*k)?.as_array()?.iter().find(|a| a.get("type") != Some(&Value::from("null"))))
            {
                v = alt;
            } else {
                break;
            }
        }
        v
    };
    let mut v = root;
    for part in key.split('.') {
        let node = resolve(v);
        v = match node.get("properties").and_then(|p| p.get(part)) {
            Some(p) => p,
            None => node.get("additionalProperties").filter(|a| a.is_object())?,
        };
    }
    let leaf = resolve(v);
    // A leaf's own description and unit, else the referring property's.
    Some(if v.get("x-unit").is_some() || v.get("description").is_some() { v } else { leaf })
}

/// The first clause of a description, if short enough for an axis.
fn short(description: &str) -> Option<String> {
    let end = description.find([':', '.', ';', ',', '(']).unwrap_or(description.len());
    let s = description[..end].trim();
    (!s.is_empty() && s.len() <= 36 && !s.contains('`')).then(|| s.to_owned())
}

/// `gc_free_blocks` → "Gc free blocks".
fn humane(key: &str) -> String {
    let last = key.rsplit('.').next().unwrap_or(key).replace('_', " ");
    let mut c = last.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The dictionary's entry for `key`: a report column (`write_us.p99`,
/// `flash_ops.programs.gc`) or a config key (`ftl.kind`).
pub fn field(key: &str) -> Field {
    let named = |k: &str| NAMES.iter().find(|(n, _)| *n == k).map(|(_, l)| (*l).to_owned());
    let node = schema_of(key);
    let unit = node.and_then(|n| n.get("x-unit")).and_then(Value::as_str).map(str::to_owned);
    if let Some(label) = named(key) {
        return Field { label, unit };
    }
    // `write_us.p99`: the parent's name and the part's.
    if let Some((parent, part)) = key.rsplit_once('.') {
        if let (Some(p), Some((_, name))) = (named(parent), PARTS.iter().find(|(n, _)| *n == part)) {
            return Field { label: format!("{p}, {name}"), unit };
        }
    }
    // A configuration key (a sweep's grid key) made readable; any other key
    // the report does not have (a column of the user's own CSV) keeps its
    // name: it is the user's.
    let Some(node) = node else {
        let config = CONFIG_SECTIONS.iter().any(|s| key.starts_with(s));
        return Field { label: if config { humane(key) } else { key.to_owned() }, unit };
    };
    let label = node.get("description").and_then(Value::as_str).and_then(short).unwrap_or_else(|| humane(key));
    Field { label, unit }
}

/// Units an explicit label may name in its last parentheses, `mean write
/// time (us)`.
const UNITS: &[&str] =
    &["us", "µs", "ms", "s", "ns", "pages", "blocks", "bytes", "B", "erases", "page copies", "requests", "MB/s"];

/// An axis for `key`, named `explicit` when given: an explicit name that is a
/// bare unit (`"us"`) or ends in one (`"max write time (us)"`) gives the
/// unit, which the axis then scales; otherwise the dictionary's unit is used
/// when the name has no parentheses of its own.
pub fn axis(key: &str, explicit: Option<&str>) -> Axis {
    let f = field(key);
    let Some(text) = explicit.map(str::trim).filter(|t| !t.is_empty()) else {
        return Axis::new(f.label, f.unit.as_deref());
    };
    if UNITS.contains(&text) {
        return Axis::new(f.label, Some(text));
    }
    if let Some(open) = text.rfind(" (") {
        let inner = text[open + 2..].strip_suffix(')').unwrap_or("");
        if UNITS.contains(&inner) {
            return Axis::new(&text[..open], Some(inner));
        }
        return Axis::new(text, None);
    }
    Axis::new(text, f.unit.as_deref())
}

/// A value as a figure shows it (a group or a legend entry): a path as its
/// file name, without `.gz`.
pub fn value(v: &Value) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        Value::Null => "–".to_owned(),
        other => other.to_string(),
    };
    // A table (a generator given inline in a grid): its fields, shortened;
    // a plot's `x_names` / `series_names` name it better.
    if v.is_object() {
        let text: String = v
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(_, x)| !x.is_object())
            .map(|(k, x)| format!("{k}={}", x.as_str().map_or_else(|| x.to_string(), str::to_owned)))
            .collect::<Vec<_>>()
            .join(" ");
        return if text.chars().count() > 32 { text.chars().take(31).chain(['…']).collect() } else { text };
    }
    if s.contains('/') && !s.contains(' ') {
        let name = s.rsplit('/').next().unwrap_or(&s);
        return name.strip_suffix(".gz").unwrap_or(name).to_owned();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_units_come_from_the_dictionary_and_schema() {
        assert_eq!(field("waf"), Field { label: "Write amplification".into(), unit: Some("ratio".into()) });
        assert_eq!(field("write_us.p99"), Field { label: "Write response, p99".into(), unit: Some("µs".into()) });
        assert_eq!(field("erases").unit.as_deref(), Some("blocks"));
        // Not in the list: the description's first words, or the key made readable.
        assert_eq!(field("integrity_errors").label, "Mismatching reads found");
        assert_eq!(field("ftl_gauges.write_queue_pages").label, "Write queue pages");
        assert_eq!(field("a_iops").label, "a_iops", "a column of the user's own keeps its name");
        assert_eq!(field("device.pages_per_block").label, "Pages per block");
        assert_eq!(field("device.over_provisioning").label, "Over-provisioning");
        assert_eq!(field("ftl.kind").label, "FTL");
    }

    #[test]
    fn explicit_labels_give_units_to_scale() {
        let a = axis("write_us.max", Some("us"));
        assert_eq!((a.label.as_str(), a.unit.as_deref()), ("Write response, max", Some("us")));
        let a = axis("x", Some("max write time (us)"));
        assert_eq!((a.label.as_str(), a.unit.as_deref()), ("max write time", Some("us")));
        let a = axis("waf", Some("us per period (service, GC, idle)"));
        assert_eq!(a.unit, None);
        assert_eq!(value(&Value::from("experiments/x/../../shared/traces/web.csv.gz")), "web.csv");
        assert_eq!(value(&Value::from(3)), "3");
    }
}
