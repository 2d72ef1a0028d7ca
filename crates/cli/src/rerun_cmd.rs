//! `ftlab rerun REPORT.json` (or `RESULTS.csv`): runs the configuration a JSON
//! report carries in its `provenance` (a CSV row in its `provenance.config`)
//! again and checks that every field comes out the same (the
//! `provenance.stamp`, when and where, apart).

use serde_json::Value;

use ftlab_sim::{Report, RunConfig};

use crate::cli::RerunArgs;
use crate::error::CliError;
use crate::output::{self, Sink};
use crate::progress::Bar;
use crate::provenance::{self, Provenance};

pub fn run(args: &RerunArgs) -> Result<(), CliError> {
    let name = args.report.display().to_string();
    let text =
        std::fs::read_to_string(&args.report).map_err(|error| CliError::Read { path: args.report.clone(), error })?;
    let json: Value = match serde_json::from_str(&text) {
        Ok(json) => json,
        Err(e) => {
            let first = text.lines().next().unwrap_or("");
            if !text.trim_start().starts_with(['{', '[']) && first.contains(',') {
                return rerun_csv(args, &name, &text);
            }
            return Err(CliError::Usage(format!(
                "{name}: not a JSON report: {e} (give the JSON of ftlab run -f json, or the CSV of ftlab run -f csv)"
            )));
        }
    };
    let old: Vec<Value> = match json {
        Value::Array(a) => a,
        v => vec![v],
    };
    let mut new = Vec::with_capacity(old.len());
    let mut differences = Vec::new();
    for (i, report) in old.iter().enumerate() {
        let at = if old.len() == 1 { name.clone() } else { format!("{name}: report {}", i + 1) };
        let prov: Provenance = report
            .get("provenance")
            .ok_or_else(|| {
                CliError::Usage(format!(
                    "{at}: no `provenance`: the report does not say how it was made (reports of ftlab run, compare \
                     and mqsim with -f json carry it)"
                ))
            })
            .and_then(|p| {
                serde_json::from_value(p.clone())
                    .map_err(|e| CliError::Usage(format!("{at}: `provenance` is malformed: {e}")))
            })?;
        let fresh = rerun_one(&prov, &at, args.quiet)?;
        // The rerun's report as `ftlab run -f json` writes it, under the
        // original's provenance (its stamp apart), so the two compare field
        // by field and, unstamped, byte for byte.
        let prov = Provenance { stamp: None, ..prov };
        let again: Value =
            serde_json::to_value(provenance::WithProvenance { report: &fresh, provenance: prov.clone() })
                .map_err(|e| CliError::Failed(format!("cannot serialize the report: {e}")))?;
        let differ = differing_fields(report, &again);
        if !differ.is_empty() {
            let fields = differ.join(", ");
            differences.push(if old.len() == 1 { fields } else { format!("report {}: {fields}", i + 1) });
        }
        new.push((fresh, prov));
    }
    let new: Vec<provenance::WithProvenance> =
        new.iter().map(|(report, prov)| provenance::WithProvenance { report, provenance: prov.clone() }).collect();
    let again = if new.len() == 1 { output::json(&new[0])? } else { output::json(&new)? };
    if let Some(out) = &args.out {
        Sink::open(Some(out))?.write(&again)?;
    }
    let layout = if again == text {
        "byte for byte"
    } else {
        "every field equal bit for bit (provenance.stamp, or the file's layout, apart)"
    };
    verdict(&name, new.len(), "report", layout, &differences)
}

/// Runs `prov.config` again (in `prov.cwd` when it names one) and returns
/// the report; warns when another ftlab made the original.
fn rerun_one(prov: &Provenance, at: &str, quiet: bool) -> Result<Report, CliError> {
    let here = provenance::GIT_REVISION;
    if prov.ftlab != env!("CARGO_PKG_VERSION") || prov.git_revision.as_deref().unwrap_or("") != here {
        eprintln!(
            "warning: {at} was made by ftlab {} (revision {}); this is ftlab {} (revision {}): a difference may come \
             from the version",
            prov.ftlab,
            prov.git_revision.as_deref().unwrap_or("unknown"),
            env!("CARGO_PKG_VERSION"),
            if here.is_empty() { "unknown" } else { here }
        );
    }
    // Relative trace paths are relative to the folder the run started in.
    let here_dir = std::env::current_dir().ok();
    if let Some(dir) = &prov.cwd {
        if let Err(e) = std::env::set_current_dir(dir) {
            eprintln!(
                "warning: {at}: cannot go to the run's folder {dir} ({e}): its relative trace paths are taken from here"
            );
        }
    }
    let mut config =
        RunConfig::from_toml(&prov.config, &format!("{at}: provenance.config")).map_err(|e| CliError::sim("", e))?;
    // The rerun writes no latency log over the original's.
    config.metrics.latency_log = None;
    ftlab_sim::validate(&config).map_err(|e| CliError::sim(format!("{at}: "), e))?;
    let bar = Bar::new(quiet, crate::progress::expected_requests(&config), "requests");
    let result = crate::simulate(&config, &bar, &format!("{at}: "));
    bar.finish();
    if let Some(dir) = &here_dir {
        let _ = std::env::set_current_dir(dir);
    }
    Ok(result?.0)
}

/// `ftlab rerun RESULTS.csv`: each row of `ftlab run -f csv`, `compare -f
/// csv` or `sweep` run again from its `provenance.config`, every cell
/// compared (a sweep row's report cells: its run index and grid values are
/// not a report's).
fn rerun_csv(args: &RerunArgs, name: &str, text: &str) -> Result<(), CliError> {
    let bad = |e: csv::Error| CliError::Usage(format!("{name}: not a CSV of ftlab run -f csv: {e}"));
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().map_err(bad)?.iter().map(str::to_owned).collect();
    let column = |n: &str| header.iter().position(|h| h == n);
    let Some(config_at) = column("provenance.config") else {
        return Err(CliError::Usage(format!(
            "{name}: no `provenance.config` column: the rows do not say how they were made (the CSVs of ftlab run, \
             compare and sweep carry it; rows written before they did rerun with the command that made them)"
        )));
    };
    fn cell<'r>(header: &[String], row: &'r csv::StringRecord, n: &str) -> Option<&'r str> {
        let i = header.iter().position(|h| h == n)?;
        row.get(i).filter(|c| !c.is_empty())
    }
    let rows: Vec<csv::StringRecord> = reader.records().collect::<Result<_, _>>().map_err(bad)?;
    let mut differences = Vec::new();
    let mut again = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let at = if rows.len() == 1 { name.to_owned() } else { format!("{name}: row {}", i + 1) };
        let prov = Provenance {
            command: cell(&header, row, "provenance.command").unwrap_or("run").to_owned(),
            ftlab: cell(&header, row, "provenance.ftlab").unwrap_or("").to_owned(),
            git_revision: cell(&header, row, "provenance.git_revision").map(str::to_owned),
            config: row.get(config_at).unwrap_or("").to_owned(),
            cwd: cell(&header, row, "provenance.cwd").map(str::to_owned),
            stamp: None,
        };
        let fresh = rerun_one(&prov, &at, args.quiet)?;
        let cells = output::csv_cells(&fresh, &prov)?;
        // A sweep's row also holds its run index, grid values and `error`,
        // which a run's report has no field for: its report columns are compared.
        let sweep = prov.command == "sweep";
        let mut differ: Vec<String> = header
            .iter()
            .enumerate()
            .filter(|(_, h)| !h.starts_with("provenance.stamp."))
            .filter(|(_, h)| !sweep || cells.iter().any(|(n, _)| n == *h))
            .filter(|(c, h)| {
                // A column of another row's FTL is empty in this one.
                let new = cells.iter().find(|(n, _)| n == *h).map(|(_, v)| v.to_string()).unwrap_or_default();
                Some(new.as_str()) != row.get(*c)
            })
            .map(|(_, h)| h.clone())
            .collect();
        differ.truncate(10);
        if !differ.is_empty() {
            let fields = differ.join(", ");
            differences.push(if rows.len() == 1 { fields } else { format!("row {}: {fields}", i + 1) });
        }
        again.push((fresh, prov));
    }
    if let Some(out) = &args.out {
        let (reports, provs): (Vec<Report>, Vec<Provenance>) = again.into_iter().unzip();
        Sink::open(Some(out))?.write(&output::csv(&reports, &provs)?)?;
    }
    verdict(name, rows.len(), "row", "every cell equal (provenance.stamp apart)", &differences)
}

/// The outcome: reproduced (a line on stdout), or an error naming what differs.
fn verdict(name: &str, n: usize, what: &str, how: &str, differences: &[String]) -> Result<(), CliError> {
    if differences.is_empty() {
        println!("{name}: reproduced: {n} {what}{}, {how}", if n == 1 { "" } else { "s" });
        Ok(())
    } else {
        Err(CliError::Failed(format!(
            "{name}: not reproduced: the rerun differs in {} (the file's values against what this ftlab makes of its \
             provenance.config)",
            differences.join("; ")
        )))
    }
}

/// Dotted names of the fields where `old` and `new` differ (the provenance's
/// stamp apart), at most 10.
fn differing_fields(old: &Value, new: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk("", old, new, &mut out);
    out.truncate(10);
    out
}

fn walk(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    if path == "provenance.stamp" {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                match y.get(k) {
                    Some(w) => walk(&p, v, w, out),
                    None if p == "provenance.stamp" => {}
                    None => out.push(p),
                }
            }
            for k in y.keys().filter(|k| !x.contains_key(*k)) {
                out.push(if path.is_empty() { k.clone() } else { format!("{path}.{k}") });
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                walk(&format!("{path}[{i}]"), v, w, out);
            }
        }
        _ if a == b => {}
        _ => out.push(path.to_owned()),
    }
}
