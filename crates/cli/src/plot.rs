//! Plots of a sweep's results: grouped bar charts of its rows ([`draw`]) and
//! line plots of a report array, a line per run ([`draw_lines`], `kind =
//! "lines"`, see [`ftlab_lab::sweep_out`]). Both describe an
//! [`ftlab_lab::figure::Figure`] (ftlab's one plotting path, shared with the
//! HTML report and Python) and write it as SVG, PNG or PDF by the file's
//! extension.
//!
//! A sweep file may hold `[[plot]]` tables ([`PlotSpec`], read and validated by
//! [`ftlab_lab::sweep::load_sweep`]):
//!
//! ```toml
//! [[plot]]
//! file = "worst-write.svg"        # relative to the sweep file's folder; .svg, .png or .pdf
//! title = "Worst-case write response"
//! x = "workload.preset"           # a grid key: one group of bars per value
//! series = "ftl.kind"             # a grid key: one bar (and legend entry) per value
//! y = "write_us.max"              # a numeric report field (a CSV column)
//! y_label = "us"                  # optional: the axis title, or a unit it scales
//! ```
//!
//! Axis and legend titles default to the field dictionary's names
//! ([`ftlab_lab::fields`]); values that are paths show as file names.
//! Where several runs share an `x` and `series` value (other grid keys vary, e.g.
//! seeds), the bar is their mean. Runs that failed are left out. With
//! `stack = ["FIELD", ...]` (and no `series`), each group is one bar: `y` at
//! the bottom and the stacked fields on it, e.g. a period split into
//! service, cleaning and idle (002 Figure 7).

use std::path::Path;

pub use ftlab_lab::sweep::PlotSpec;
use ftlab_lab::sweep_out::{Line, LineSpec};
use ftlab_lab::sweep_plot;

use crate::error::CliError;

fn write(fig: Result<ftlab_lab::figure::Figure, ftlab_lab::LabError>, path: &Path) -> Result<(), CliError> {
    let fig = fig.map_err(|e| CliError::Usage(e.to_string()))?;
    fig.write(path).map_err(|e| CliError::Failed(e.to_string()))
}

/// Draws `spec` from finished rows (`columns` names each row's cells) into
/// `dir`, as SVG, PNG or PDF by the file's extension.
pub fn draw(spec: &PlotSpec, columns: &[String], rows: &[Vec<serde_json::Value>], dir: &Path) -> Result<(), CliError> {
    write(sweep_plot::bars(spec, columns, rows), &dir.join(&spec.file))
}

/// Draws a line plot ([`LineSpec`]) into `dir`: one line per `(label, points)`.
pub fn draw_lines(spec: &LineSpec, lines: &[&Line], dir: &Path) -> Result<(), CliError> {
    write(sweep_plot::lines(spec, lines), &dir.join(&spec.file))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn spec(file: &str, x: &str, series: Option<&str>, y: &str, stack: &[&str]) -> PlotSpec {
        PlotSpec {
            x_names: Vec::new(),
            series_names: Vec::new(),
            file: file.into(),
            title: Some("WAF".into()),
            x_label: None,
            legend: None,
            x: x.into(),
            series: series.map(Into::into),
            y: y.into(),
            y_label: None,
            stack: stack.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn draws_grouped_bars_with_means() {
        let dir = tempfile::tempdir().unwrap();
        let spec = spec("p.svg", "workload.preset", Some("ftl.kind"), "waf", &[]);
        let columns: Vec<String> =
            ["run", "workload.preset", "ftl.kind", "waf"].iter().map(|s| s.to_string()).collect();
        let rows = vec![
            vec![json!(0), json!("a"), json!("pagemap"), json!(2.0)],
            vec![json!(1), json!("a"), json!("pagemap"), json!(4.0)],
            vec![json!(2), json!("b/c/trace.csv.gz"), json!("nftl"), json!(9.5)],
            vec![json!(3), json!("b/c/trace.csv.gz"), json!("nftl"), json!(null)],
        ];
        draw(&spec, &columns, &rows, dir.path()).unwrap();
        let svg = std::fs::read_to_string(dir.path().join("p.svg")).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains(">pagemap<") && svg.contains(">nftl<"), "{svg}");
        // The mean of 2 and 4; labels from the dictionary; a path as its file name.
        assert!(svg.contains("a: 3<"), "{svg}");
        assert!(svg.contains(">FTL:<") && svg.contains(">Workload<") && svg.contains(">Write amplification<"));
        assert!(svg.contains(">trace.csv<") && !svg.contains("b/c/"), "{svg}");
        let bad = PlotSpec { y: "nope".into(), ..spec.clone() };
        assert!(bad.validate(&columns[1..3], &columns, "s.toml").unwrap_err().to_string().contains("nope"));
        // Names for the series, in their order; a count that does not match is named.
        let named = PlotSpec { series_names: vec!["Page map".into(), "NFTL".into()], ..spec.clone() };
        draw(&named, &columns, &rows, dir.path()).unwrap();
        let svg = std::fs::read_to_string(dir.path().join("p.svg")).unwrap();
        assert!(svg.contains(">Page map<") && svg.contains(">NFTL<") && !svg.contains(">nftl<"), "{svg}");
        let short = PlotSpec { series_names: vec!["one".into()], ..spec.clone() };
        let e = draw(&short, &columns, &rows, dir.path()).unwrap_err().to_string();
        assert!(e.contains("series_names gives 1 names but series has 2 values (pagemap; nftl)"), "{e}");
        // Values whose shortened names agree stay apart (the names are only shown).
        let long = |f: f64| json!({"kind": "sequential", "read_fraction": 0.2811, "requests": 6704, "f": f});
        let rows2 =
            vec![vec![json!(0), json!("a"), long(1.0), json!(2.0)], vec![json!(1), json!("a"), long(2.0), json!(4.0)]];
        let fig = ftlab_lab::sweep_plot::bars(&spec, &columns, &rows2).unwrap();
        assert_eq!(fig.svg().matches("class=\"series\"").count(), 2);
        // PNG and PDF by the extension.
        draw(&PlotSpec { file: "p.pdf".into(), ..spec }, &columns, &rows, dir.path()).unwrap();
        assert!(std::fs::read(dir.path().join("p.pdf")).unwrap().starts_with(b"%PDF"));
    }

    #[test]
    fn draws_stacked_bars_of_the_group_means() {
        let dir = tempfile::tempdir().unwrap();
        let spec = spec("s.svg", "pi", None, "service", &["gc", "idle"]);
        let columns: Vec<String> = ["run", "pi", "service", "gc", "idle"].iter().map(|s| s.to_string()).collect();
        let rows = vec![
            vec![json!(0), json!(16), json!(300.0), json!(1000.0), json!(1125.0)],
            vec![json!(1), json!(32), json!(400.0), json!(1500.0), json!(925.0)],
            vec![json!(2), json!(32), json!(null), json!(1500.0), json!(925.0)],
        ];
        draw(&spec, &columns, &rows, dir.path()).unwrap();
        let svg = std::fs::read_to_string(dir.path().join("s.svg")).unwrap();
        for name in [">service<", ">gc<", ">idle<", ">16<", ">32<"] {
            assert!(svg.contains(name), "{name}: {svg}");
        }
        // Three series, one bar a group each.
        assert_eq!(svg.matches("class=\"series\"").count(), 3, "{svg}");
        let both = PlotSpec { series: Some("pi".into()), ..spec.clone() };
        assert!(both.validate(&columns[1..2], &columns, "s.toml").unwrap_err().to_string().contains("series"));
        let bad = PlotSpec { stack: vec!["nope".into()], ..spec };
        assert!(bad.validate(&columns[1..2], &columns, "s.toml").unwrap_err().to_string().contains("nope"));
    }
}
