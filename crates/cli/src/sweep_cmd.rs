//! `ftlab sweep`: a sweep file's grid ([`ftlab_lab::sweep`]) run on all cores,
//! each row written and flushed as its run finishes, so an interrupted sweep
//! keeps every finished row; then its tables and plots.

use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use ftlab_lab::sweep::{keep, load_sweep, row_error, run_points_keeping, Kept};

use crate::cli::{RowFormat, SweepArgs};
use crate::error::CliError;
use crate::output::Sink;
use crate::plot;
use crate::progress::Bar;

/// A CSV cell: strings raw, null empty, anything else as JSON.
fn csv_cell(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn csv_line(cells: impl IntoIterator<Item = String>) -> Result<String, CliError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(cells).map_err(|e| CliError::Failed(format!("cannot write CSV: {e}")))?;
    let bytes = w.into_inner().map_err(|e| CliError::Failed(format!("cannot write CSV: {e}")))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// One JSON object per line, keys in column order.
fn json_line(columns: &[String], values: &[serde_json::Value]) -> String {
    let fields: Vec<String> =
        columns.iter().zip(values).map(|(c, v)| format!("{}:{v}", serde_json::Value::String(c.clone()))).collect();
    format!("{{{}}}\n", fields.join(","))
}

/// `ftlab sweep`.
pub fn run(args: &SweepArgs) -> Result<(), CliError> {
    let sweep = load_sweep(&args.file)?;
    let points = &sweep.points;
    let total = points.len();
    if args.dry_run {
        let mut out = Sink::open(args.out.as_deref())?;
        let mut text = format!("{total} runs, all valid:\n");
        for p in points {
            text.push_str(&format!("  run {}: {}\n", p.run, p.describe()));
        }
        return out.write(&text);
    }
    let columns = &sweep.columns;
    // Created before anything runs, so a bad folder fails at once.
    let dir = match &args.out_dir {
        Some(d) => {
            std::fs::create_dir_all(d)
                .map_err(|e| CliError::Failed(format!("cannot create --out-dir {}: {e}", d.display())))?;
            d.as_path()
        }
        None => args.file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")),
    };
    let sink = Mutex::new(Sink::open(args.out.as_deref())?);
    if args.format == RowFormat::Csv {
        lock(&sink).write(&csv_line(columns.iter().cloned())?)?;
    }
    let bar = Bar::new(args.quiet, Some(total as u64), "runs");
    let failed = Mutex::new(Vec::new());
    let start = Instant::now();
    let keeper = |row: &[serde_json::Value], report: Option<&ftlab_sim::Report>| {
        if sweep.keeps_reports() {
            keep(&sweep, row, report)
        } else {
            Ok(Kept::default())
        }
    };
    let jobs = args.jobs.unwrap_or(0);
    let finished = run_points_keeping(points, columns, jobs, keeper, |point, values| -> Result<(), CliError> {
        let line = match args.format {
            RowFormat::Csv => csv_line(values.iter().map(csv_cell))?,
            RowFormat::Jsonl => json_line(columns, values),
        };
        lock(&sink).write(&line)?;
        if let Some(e) = row_error(values) {
            let msg = format!("run {} ({}): {e}", point.run, point.describe());
            bar.println(&format!("ftlab sweep: {msg}"));
            lock(&failed).push(msg);
        }
        bar.set_message(format!("last: run {}", point.run));
        bar.inc(1);
        Ok(())
    });
    bar.finish();
    let (rows, kept): (Vec<Vec<serde_json::Value>>, Vec<Kept>) = finished?.into_iter().map(|(_, v, k)| (v, k)).unzip();
    let said = |what: &str, file: &str| {
        if !args.quiet {
            eprintln!("ftlab sweep: {what} {}", dir.join(file).display());
        }
    };
    for plot in &sweep.plots {
        plot::draw(plot, columns, &rows, dir)?;
        said("plotted", &plot.file);
    }
    for (i, table) in sweep.tables.iter().enumerate() {
        let text = table.text(kept.iter().flat_map(|k| k.tables.get(i).into_iter().flatten()))?;
        let path = dir.join(&table.spec.file);
        std::fs::write(&path, text).map_err(|e| CliError::Failed(format!("cannot write {}: {e}", path.display())))?;
        said("wrote", &table.spec.file);
    }
    for (i, lines) in sweep.lines.iter().enumerate() {
        let data: Vec<&ftlab_lab::sweep_out::Line> =
            kept.iter().filter_map(|k| k.lines.get(i).and_then(Option::as_ref)).collect();
        plot::draw_lines(&lines.spec, &data, dir)?;
        said("plotted", &lines.spec.file);
    }
    let failed = failed.into_inner().unwrap_or_else(|e| e.into_inner());
    if !args.quiet {
        let to = args.out.as_ref().map_or_else(|| "stdout".to_owned(), |p| p.display().to_string());
        eprintln!(
            "ftlab sweep: {total} runs in {:.1} s, {} failed; rows written to {to}",
            start.elapsed().as_secs_f64(),
            failed.len()
        );
    }
    if ftlab_sim::interrupt::interrupted() {
        // Ctrl-C: the rows of the runs stopped (and of those that ended
        // before) are written; exit 130.
        return Err(CliError::Interrupted(format!(
            "interrupted: {} of {total} runs stopped early (their rows are partial, see the `error` column)",
            failed.len()
        )));
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(CliError::Failed(format!("{} of {total} runs failed (see their `error` column)", failed.len())))
    }
}

/// The lock, even if another thread panicked holding it (its data is still fine
/// for appending rows).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
