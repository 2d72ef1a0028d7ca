//! `ftlab zones`: the zone report or the FDP statistics of a run's JSON
//! report, as a table, CSV or JSON: the same rows as the Python
//! `Report.zones()` and `Report.fdp_handles()` DataFrames.
//!
//! A zoned device's host FTL (`zns-host`) reports, per zone at the end of
//! the run, its state (`ftl_curves.zone_state_by_zone`, by
//! [`ZoneState::code`]), the pages written below its write pointer, and the
//! host FTL's valid pages and stream; an FDP device (`fdp`) reports per
//! reclaim unit handle the host and media pages written since measurement
//! started (`fdp_host_pages_by_handle`, `fdp_media_pages_by_handle`), and
//! with `--events` its FDP event log (`fdp_event_*`: Python's
//! `Report.fdp_events()`).

use std::fmt::Write as _;

use ftlab_ftl::ZoneState;
use serde_json::{json, Map, Value};

use crate::cli::{TableFormat, ZonesArgs};
use crate::error::CliError;
use crate::output::Sink;

/// Reads the report and prints its rows.
pub fn run(args: &ZonesArgs) -> Result<(), CliError> {
    let name = args.file.display().to_string();
    let text =
        std::fs::read_to_string(&args.file).map_err(|error| CliError::Read { path: args.file.clone(), error })?;
    let (columns, rows) = if args.events { events(&text, &name)? } else { rows(&text, &name)? };
    Sink::open(args.out.as_deref())?.write(&render(&columns, &rows, args.format))
}

/// The columns and rows of the report in `text` (named `name` in errors):
/// its zones, or its reclaim unit handles.
pub fn rows(text: &str, name: &str) -> Result<(Vec<&'static str>, Vec<Vec<Value>>), CliError> {
    let bad = |what: String| CliError::Usage(format!("ftlab zones {name}: {what}"));
    let report: Value = serde_json::from_str(text)
        .map_err(|e| bad(format!("not a JSON report ({e}); write one with `ftlab run CONFIG -f json -o FILE`")))?;
    let Some(report) = report.as_object() else {
        return Err(bad("not a JSON report (not an object); write one with `ftlab run CONFIG -f json -o FILE`".into()));
    };
    let empty = Map::new();
    let curves = report.get("ftl_curves").and_then(Value::as_object).unwrap_or(&empty);
    let curve = |key: &str| -> Result<Option<Vec<u64>>, CliError> {
        let Some(v) = curves.get(key) else { return Ok(None) };
        let values = v.as_array().ok_or_else(|| bad(format!("ftl_curves.{key} is not a list")))?;
        values
            .iter()
            .enumerate()
            .map(|(i, x)| {
                x.as_f64()
                    .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                    .map(|f| f as u64)
                    .ok_or_else(|| bad(format!("ftl_curves.{key}[{i}] = {x} is not a count")))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    };
    if let Some(states) = curve("zone_state_by_zone")? {
        let mut columns = vec!["zone", "state"];
        let extra = [
            ("zone_written_pages_by_zone", "written_pages"),
            ("zone_valid_pages_by_zone", "valid_pages"),
            ("zone_stream_by_zone", "stream"),
        ];
        let mut lists = Vec::new();
        for (key, column) in extra {
            if let Some(list) = curve(key)? {
                if list.len() != states.len() {
                    return Err(bad(format!(
                        "ftl_curves.{key} has {} zones and zone_state_by_zone {}",
                        list.len(),
                        states.len()
                    )));
                }
                columns.push(column);
                lists.push(list);
            }
        }
        let mut rows = Vec::with_capacity(states.len());
        for (zone, &code) in states.iter().enumerate() {
            let state = u8::try_from(code)
                .ok()
                .and_then(ZoneState::from_code)
                .ok_or_else(|| bad(format!("ftl_curves.zone_state_by_zone[{zone}] = {code} is no zone state")))?;
            let mut row = vec![json!(zone), json!(state.name())];
            row.extend(lists.iter().map(|l| json!(l[zone])));
            rows.push(row);
        }
        return Ok((columns, rows));
    }
    if let (Some(host), Some(media)) = (curve("fdp_host_pages_by_handle")?, curve("fdp_media_pages_by_handle")?) {
        if host.len() != media.len() {
            return Err(bad(format!(
                "ftl_curves.fdp_host_pages_by_handle has {} handles and fdp_media_pages_by_handle {}",
                host.len(),
                media.len()
            )));
        }
        let rows = host
            .iter()
            .zip(&media)
            .enumerate()
            .map(|(h, (&host, &media))| {
                let waf = if host == 0 { Value::Null } else { json!(media as f64 / host as f64) };
                vec![json!(h), json!(host), json!(media), waf]
            })
            .collect();
        return Ok((vec!["handle", "host_pages", "media_pages", "waf"], rows));
    }
    let ftl = report.get("ftl").and_then(Value::as_str).unwrap_or("?");
    Err(bad(format!(
        "the run's FTL, `{ftl}`, reports no zones and no FDP statistics: give the report of a zoned device's host \
         FTL (ftl.kind = \"zns-host\") or of an FDP device (ftl.kind = \"fdp\")"
    )))
}

/// The FDP event log of the report in `text` (named `name` in errors).
pub fn events(text: &str, name: &str) -> Result<(Vec<&'static str>, Vec<Vec<Value>>), CliError> {
    let bad = |what: String| CliError::Usage(format!("ftlab zones {name} --events: {what}"));
    let report: Value = serde_json::from_str(text)
        .map_err(|e| bad(format!("not a JSON report ({e}); write one with `ftlab run CONFIG -f json -o FILE`")))?;
    let curves = report.get("ftl_curves").and_then(Value::as_object);
    let keys = ["fdp_event_time_us", "fdp_event_type", "fdp_event_pid", "fdp_event_group", "fdp_event_pages_moved"];
    let mut lists = Vec::new();
    for key in keys {
        let Some(list) = curves.and_then(|c| c.get(key)) else {
            let ftl = report.get("ftl").and_then(Value::as_str).unwrap_or("?");
            return Err(bad(format!(
                "the run's FTL, `{ftl}`, keeps no FDP event log (no ftl_curves.{key}): give the report of an FDP \
                 device (ftl.kind = \"fdp\")"
            )));
        };
        let values = list
            .as_array()
            .ok_or_else(|| bad(format!("ftl_curves.{key} is not a list")))?
            .iter()
            .enumerate()
            .map(|(i, x)| x.as_f64().ok_or_else(|| bad(format!("ftl_curves.{key}[{i}] = {x} is not a number"))))
            .collect::<Result<Vec<f64>, _>>()?;
        if lists.first().is_some_and(|first: &Vec<f64>| first.len() != values.len()) {
            return Err(bad(format!(
                "ftl_curves.{key} has {} events and fdp_event_time_us {}",
                values.len(),
                lists[0].len()
            )));
        }
        lists.push(values);
    }
    let rows = (0..lists[0].len())
        .map(|i| {
            let name = match lists[1][i] as u32 {
                0x00 => "reclaim unit not fully written",
                0x03 => "invalid placement identifier",
                0x80 => "media reallocated",
                _ => "other",
            };
            let pid = if lists[2][i] < 0.0 { Value::Null } else { json!(lists[2][i] as u64) };
            vec![
                json!(lists[0][i]),
                json!(lists[1][i] as u64),
                json!(name),
                pid,
                json!(lists[3][i] as u64),
                json!(lists[4][i] as u64),
            ]
        })
        .collect();
    Ok((vec!["time_us", "type", "name", "pid", "group", "pages_moved"], rows))
}

/// A cell as text: a number as JSON writes it (a WAF with 3 decimals in a
/// table), null as empty.
fn cell(v: &Value, table: bool) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Number(n) if table && n.is_f64() => format!("{:.3}", n.as_f64().unwrap_or(f64::NAN)),
        other => other.to_string(),
    }
}

/// The rows in `format`.
pub fn render(columns: &[&str], rows: &[Vec<Value>], format: TableFormat) -> String {
    let mut out = String::new();
    match format {
        TableFormat::Json => {
            let objects: Vec<Value> = rows
                .iter()
                .map(|r| Value::Object(columns.iter().map(|c| (*c).to_owned()).zip(r.iter().cloned()).collect()))
                .collect();
            out = serde_json::to_string_pretty(&objects).unwrap_or_default();
            out.push('\n');
        }
        TableFormat::Csv => {
            let mut w = csv::Writer::from_writer(Vec::new());
            let _ = w.write_record(columns);
            for r in rows {
                let _ = w.write_record(r.iter().map(|v| cell(v, false)));
            }
            out = String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default();
        }
        TableFormat::Table => {
            let text: Vec<Vec<String>> = rows.iter().map(|r| r.iter().map(|v| cell(v, true)).collect()).collect();
            let widths: Vec<usize> = (0..columns.len())
                .map(|i| text.iter().map(|r| r[i].len()).chain([columns[i].len()]).max().unwrap_or(0))
                .collect();
            let line = |cells: &mut dyn Iterator<Item = &str>, out: &mut String| {
                let parts: Vec<String> = cells.zip(&widths).map(|(c, w)| format!("{c:>w$}")).collect();
                let _ = writeln!(out, "{}", parts.join("  ").trim_end());
            };
            line(&mut columns.iter().copied(), &mut out);
            for r in &text {
                line(&mut r.iter().map(String::as_str), &mut out);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZONES: &str = r#"{"ftl":"zns-host","ftl_curves":{"zone_state_by_zone":[4,1,0],
        "zone_written_pages_by_zone":[64,3,0],"zone_valid_pages_by_zone":[10,3,0],"zone_stream_by_zone":[0,2,0]}}"#;

    #[test]
    fn zones_come_out_as_a_table_csv_and_json() {
        let (columns, rows) = rows(ZONES, "r.json").unwrap();
        assert_eq!(columns, ["zone", "state", "written_pages", "valid_pages", "stream"]);
        let csv = render(&columns, &rows, TableFormat::Csv);
        assert_eq!(
            csv,
            "zone,state,written_pages,valid_pages,stream\n0,full,64,10,0\n1,implicitly-opened,3,3,2\n2,empty,0,0,0\n"
        );
        let table = render(&columns, &rows, TableFormat::Table);
        assert!(table.lines().nth(2).unwrap().contains("implicitly-opened"), "{table}");
        let json: Value = serde_json::from_str(&render(&columns, &rows, TableFormat::Json)).unwrap();
        assert_eq!(json[0]["state"], "full");
        assert_eq!(json[2]["written_pages"], 0);
    }

    #[test]
    fn fdp_handles_have_their_waf() {
        let text =
            r#"{"ftl":"fdp","ftl_curves":{"fdp_host_pages_by_handle":[100,0],"fdp_media_pages_by_handle":[150,7]}}"#;
        let (columns, rows) = rows(text, "r.json").unwrap();
        assert_eq!(columns, ["handle", "host_pages", "media_pages", "waf"]);
        assert_eq!(
            render(&columns, &rows, TableFormat::Csv),
            "handle,host_pages,media_pages,waf\n0,100,150,1.5\n1,0,7,\n"
        );
    }

    #[test]
    fn bad_reports_are_errors_naming_the_file_and_the_fix() {
        let e = rows(r#"{"ftl":"pagemap"}"#, "r.json").unwrap_err().to_string();
        assert!(e.contains("r.json") && e.contains("pagemap") && e.contains("zns-host"), "{e}");
        let e = rows("not json", "r.json").unwrap_err().to_string();
        assert!(e.contains("ftlab run CONFIG -f json"), "{e}");
        let e = rows(r#"{"ftl_curves":{"zone_state_by_zone":[9]}}"#, "r.json").unwrap_err().to_string();
        assert!(e.contains("zone_state_by_zone[0] = 9"), "{e}");
        let e = rows(r#"{"ftl_curves":{"zone_state_by_zone":[1,2],"zone_written_pages_by_zone":[1]}}"#, "r.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("has 1 zones"), "{e}");
    }
}
