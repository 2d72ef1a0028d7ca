//! `ftlab plot`: a grouped bar chart (SVG, PNG or PDF by `-o`'s extension) of any CSV's columns, e.g. of an
//! experiment that is not a sweep. One group of bars per value of `--x`; the
//! bars are the `--y` columns (several: one bar each, named by the column) or
//! the values of `--series`.

use std::path::Path;

use crate::cli::PlotArgs;
use crate::error::CliError;
use crate::plot::{self, PlotSpec};

/// Reads the CSV, checks the columns and draws the chart.
pub fn run(args: &PlotArgs) -> Result<(), CliError> {
    let bad = |what: String| CliError::Usage(format!("ftlab plot {}: {what}", args.csv.display()));
    let mut reader = csv::Reader::from_path(&args.csv).map_err(|e| bad(format!("cannot read it: {e}")))?;
    let header: Vec<String> =
        reader.headers().map_err(|e| bad(format!("no header line: {e}")))?.iter().map(str::to_owned).collect();
    let col = |name: &str, flag: &str| {
        header
            .iter()
            .position(|c| c == name)
            .ok_or_else(|| bad(format!("{flag} `{name}` is not a column; columns: {}", header.join(", "))))
    };
    let x = col(&args.x, "--x")?;
    let ys: Vec<(usize, &str)> =
        args.y.iter().map(|y| col(y, "--y").map(|i| (i, y.as_str()))).collect::<Result<_, _>>()?;
    if args.series.is_some() && ys.len() > 1 {
        return Err(bad("give --series with one --y column, or several --y columns without --series".into()));
    }
    let series = args.series.as_deref().map(|s| col(s, "--series")).transpose()?;
    let mut rows = Vec::new();
    for (line, record) in reader.records().enumerate() {
        let record = record.map_err(|e| bad(format!("row {}: {e}", line + 2)))?;
        let cell = |i: usize| record.get(i).unwrap_or("").to_owned();
        for &(yi, yname) in &ys {
            let text = cell(yi);
            let value = match text.trim() {
                "" => serde_json::Value::Null,
                t => t
                    .parse::<f64>()
                    .map(serde_json::Value::from)
                    .map_err(|_| bad(format!("row {}: column `{yname}` holds `{t}`, not a number", line + 2)))?,
            };
            let name = series.map_or_else(|| ftlab_lab::fields::field(yname).label, cell);
            rows.push(vec![serde_json::Value::String(cell(x)), serde_json::Value::String(name), value]);
        }
    }
    if rows.is_empty() {
        return Err(bad("no rows to plot".into()));
    }
    let out = &args.out;
    let file = out.file_name().ok_or_else(|| bad(format!("-o {}: not a file name", out.display())))?;
    let dir = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    // The columns keep their names, so the axes take the field dictionary's
    // titles and units; several --y columns share a "value" axis.
    let y = if ys.len() == 1 { ys[0].1.to_owned() } else { "value".to_owned() };
    let spec = PlotSpec {
        x_names: Vec::new(),
        series_names: Vec::new(),
        file: file.to_string_lossy().into_owned(),
        title: args.title.clone(),
        x_label: None,
        legend: args.series.as_deref().map(|s| ftlab_lab::fields::field(s).label),
        x: args.x.clone(),
        series: Some("series".into()),
        y: y.clone(),
        y_label: args.y_label.clone(),
        stack: Vec::new(),
    };
    plot::draw(&spec, &[args.x.clone(), "series".into(), y], &rows, dir)?;
    eprintln!("ftlab plot: wrote {}", out.display());
    Ok(())
}
