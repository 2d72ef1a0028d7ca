//! Plots of a sweep's results written as SVG (plotters): grouped bar charts of
//! its rows ([`draw`]) and line plots of a report array, a line per run
//! ([`draw_lines`], `kind = "lines"`, see [`ftlab_lab::sweep_out`]).
//!
//! A sweep file may hold `[[plot]]` tables ([`PlotSpec`], read and validated by
//! [`ftlab_lab::sweep::load_sweep`]):
//!
//! ```toml
//! [[plot]]
//! file = "worst-write.svg"        # relative to the sweep file's folder
//! title = "Worst-case write response"
//! x = "workload.preset"           # a grid key: one group of bars per value
//! series = "ftl.kind"             # a grid key: one bar (and legend entry) per value
//! y = "write_us.max"              # a numeric report field (a CSV column)
//! y_label = "us"
//! ```
//!
//! Where several runs share an `x` and `series` value (other grid keys vary, e.g.
//! seeds), the bar is their mean. Runs that failed are left out. With
//! `stack = ["FIELD", ...]` (and no `series`), each group is one bar: `y` at
//! the bottom and the stacked fields on it, e.g. a period split into
//! service, cleaning and idle (002 Figure 7).

use std::path::Path;

use plotters::prelude::*;

pub use ftlab_lab::sweep::PlotSpec;
use ftlab_lab::sweep_out::{Line, LineSpec, Scale};

use crate::error::CliError;

fn label(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Draws `spec` from finished rows (`columns` names each row's cells).
pub fn draw(spec: &PlotSpec, columns: &[String], rows: &[Vec<serde_json::Value>], dir: &Path) -> Result<(), CliError> {
    if !spec.stack.is_empty() {
        return draw_stacked(spec, columns, rows, dir);
    }
    let col = |name: &str| columns.iter().position(|c| c == name);
    let (xi, yi) = match (col(&spec.x), col(&spec.y)) {
        (Some(x), Some(y)) => (x, y),
        _ => return Err(CliError::Usage(format!("plot `{}`: unknown column", spec.file))),
    };
    let si = spec.series.as_deref().and_then(col);
    let mut groups: Vec<String> = Vec::new();
    let mut series: Vec<String> = Vec::new();
    // (group, series) -> (sum, count)
    let mut cells: Vec<((usize, usize), f64, u32)> = Vec::new();
    for row in rows {
        let Some(y) = row[yi].as_f64() else { continue };
        let g = label(&row[xi]);
        let s = si.map_or_else(|| spec.y.clone(), |i| label(&row[i]));
        let gi = groups.iter().position(|v| *v == g).unwrap_or_else(|| {
            groups.push(g);
            groups.len() - 1
        });
        let sj = series.iter().position(|v| *v == s).unwrap_or_else(|| {
            series.push(s);
            series.len() - 1
        });
        match cells.iter_mut().find(|c| c.0 == (gi, sj)) {
            Some(c) => {
                c.1 += y;
                c.2 += 1;
            }
            None => cells.push(((gi, sj), y, 1)),
        }
    }
    let path = dir.join(&spec.file);
    let fail = |e: &dyn std::fmt::Display| CliError::Failed(format!("cannot draw {}: {e}", path.display()));
    let ymax = cells.iter().map(|c| c.1 / f64::from(c.2)).fold(0.0f64, f64::max).max(1e-9) * 1.15;
    let root = SVGBackend::new(&path, (960, 540)).into_drawing_area();
    let mut chart = bar_frame(&root, spec, &groups, ymax).map_err(|e| fail(&e))?;
    let width = 0.8 / series.len().max(1) as f64;
    for (j, name) in series.iter().enumerate() {
        let color = Palette99::pick(j).to_rgba();
        let bars: Vec<Rectangle<(f64, f64)>> = cells
            .iter()
            .filter(|c| c.0 .1 == j)
            .map(|c| {
                let x0 = c.0 .0 as f64 + 0.1 + j as f64 * width;
                Rectangle::new([(x0, 0.0), (x0 + width * 0.95, c.1 / f64::from(c.2))], color.filled())
            })
            .collect();
        series_with_legend(&mut chart, bars, name, color).map_err(|e| fail(&e))?;
    }
    legend_and_present(&mut chart, &root).map_err(|e| fail(&e))
}

/// Draws one series of bars with its legend entry (a square of its colour).
fn series_with_legend<'a>(
    chart: &mut BarChart<'a>,
    bars: Vec<Rectangle<(f64, f64)>>,
    name: &str,
    color: RGBAColor,
) -> Result<(), DrawingAreaErrorKind<<SVGBackend<'a> as DrawingBackend>::ErrorType>> {
    chart
        .draw_series(bars)?
        .label(name)
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    Ok(())
}

type BarChart<'a> = ChartContext<
    'a,
    SVGBackend<'a>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;
type DrawResult<T> = Result<T, DrawingAreaErrorKind<std::io::Error>>;

/// The frame of a bar chart on `root`: white, `spec`'s title and labels, one
/// slot of width 1 per group named under its middle, y from 0 to `ymax`.
fn bar_frame<'a>(
    root: &DrawingArea<SVGBackend<'a>, plotters::coord::Shift>,
    spec: &PlotSpec,
    groups: &[String],
    ymax: f64,
) -> DrawResult<BarChart<'a>> {
    root.fill(&WHITE)?;
    let n = groups.len().max(1) as f64;
    let mut chart = ChartBuilder::on(root)
        .caption(spec.title.as_deref().unwrap_or(&spec.y), ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..n, 0f64..ymax)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(groups.len().max(1) * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x.fract() - 0.5).abs() < 1e-6 {
                groups.get(i).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_desc(spec.x.as_str())
        .y_desc(spec.y_label.as_deref().unwrap_or(&spec.y))
        .draw()?;
    Ok(chart)
}

/// The legend, then the file written.
fn legend_and_present(
    chart: &mut BarChart<'_>,
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
) -> DrawResult<()> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    root.present()
}

/// Draws a stacked plot (`stack = [...]`): per group of `x`, one bar of `y`
/// and the `stack` fields on it, each the mean over the group's runs that
/// have every field.
fn draw_stacked(
    spec: &PlotSpec,
    columns: &[String],
    rows: &[Vec<serde_json::Value>],
    dir: &Path,
) -> Result<(), CliError> {
    let fields: Vec<&String> = std::iter::once(&spec.y).chain(&spec.stack).collect();
    let col = |name: &str| {
        columns
            .iter()
            .position(|c| c == name)
            .ok_or_else(|| CliError::Usage(format!("plot `{}`: unknown column {name}", spec.file)))
    };
    let xi = col(&spec.x)?;
    let idx: Vec<usize> = fields.iter().map(|f| col(f)).collect::<Result<_, _>>()?;
    // Per group: the sums of each field and the runs counted.
    let mut groups: Vec<(String, Vec<f64>, u32)> = Vec::new();
    for row in rows {
        let Some(values) = idx.iter().map(|&i| row[i].as_f64()).collect::<Option<Vec<f64>>>() else { continue };
        let g = label(&row[xi]);
        let k = groups.iter().position(|(n, ..)| *n == g).unwrap_or_else(|| {
            groups.push((g, vec![0.0; values.len()], 0));
            groups.len() - 1
        });
        let (_, sums, n) = &mut groups[k];
        sums.iter_mut().zip(&values).for_each(|(s, v)| *s += v);
        *n += 1;
    }
    let means: Vec<Vec<f64>> =
        groups.iter().map(|(_, sums, n)| sums.iter().map(|s| s / f64::from((*n).max(1))).collect()).collect();
    let path = dir.join(&spec.file);
    let fail = |e: &dyn std::fmt::Display| CliError::Failed(format!("cannot draw {}: {e}", path.display()));
    let ymax = means.iter().map(|m| m.iter().sum::<f64>()).fold(0.0f64, f64::max).max(1e-9) * 1.25;
    let root = SVGBackend::new(&path, (960, 540)).into_drawing_area();
    let names: Vec<String> = groups.iter().map(|(g, ..)| g.clone()).collect();
    let mut chart = bar_frame(&root, spec, &names, ymax).map_err(|e| fail(&e))?;
    for (j, name) in fields.iter().enumerate() {
        let color = Palette99::pick(j).to_rgba();
        let bars: Vec<Rectangle<(f64, f64)>> = means
            .iter()
            .enumerate()
            .map(|(g, m)| {
                let below: f64 = m[..j].iter().sum();
                Rectangle::new([(g as f64 + 0.2, below), (g as f64 + 0.8, below + m[j])], color.filled())
            })
            .collect();
        series_with_legend(&mut chart, bars, name, color).map_err(|e| fail(&e))?;
    }
    legend_and_present(&mut chart, &root).map_err(|e| fail(&e))
}

/// Draws a line plot ([`LineSpec`]): one line per `(label, points)`, in order.
pub fn draw_lines(spec: &LineSpec, lines: &[&Line], dir: &Path) -> Result<(), CliError> {
    let path = dir.join(&spec.file);
    let fail = |e: &dyn std::fmt::Display| CliError::Failed(format!("cannot draw {}: {e}", path.display()));
    let log = spec.x_scale == Scale::Log;
    let all = || lines.iter().flat_map(|(_, p)| p.iter()).filter(|(x, _)| !log || *x > 0.0);
    let [x0, x1] = spec.x_range.unwrap_or_else(|| {
        let (lo, hi) = all().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (x, _)| (a.min(*x), b.max(*x)));
        if lo.is_finite() {
            [lo, hi]
        } else {
            [1.0, 10.0]
        }
    });
    if x0.partial_cmp(&x1) != Some(std::cmp::Ordering::Less) || (log && x0 <= 0.0) {
        return Err(CliError::Usage(format!(
            "plot `{}`: x_range = [{x0}, {x1}] is not an increasing range{}",
            spec.file,
            if log { " of positive values (x_scale = \"log\")" } else { "" }
        )));
    }
    let (y0, y1) = all().fold((0.0f64, f64::NEG_INFINITY), |(a, b), (_, y)| (a.min(*y), b.max(*y)));
    let y1 = if y1.is_finite() && y1 > y0 { y1 + (y1 - y0) * 0.05 } else { y0 + 1.0 };
    // Points outside the x range are clamped to its edges, so a line leaves the
    // plot where it crosses them.
    let clamp = |points: &[(f64, f64)]| -> Vec<(f64, f64)> {
        let mut out = Vec::with_capacity(points.len() * 2);
        for (i, &(x, y)) in points.iter().enumerate() {
            if log && x <= 0.0 {
                continue;
            }
            if spec.steps && i > 0 {
                if let Some(&(_, prev)) = out.last() {
                    out.push((x.clamp(x0, x1), prev));
                }
            }
            out.push((x.clamp(x0, x1), y));
        }
        out
    };
    let root = SVGBackend::new(&path, (960, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut builder = ChartBuilder::on(&root);
    builder
        .caption(spec.title.as_deref().unwrap_or(&spec.y), ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(70);
    let x_desc = spec.x_label.as_deref().unwrap_or(&spec.x);
    let y_desc = spec.y_label.as_deref().unwrap_or(&spec.y);
    macro_rules! plot_on {
        ($chart:expr) => {{
            let mut chart = $chart.map_err(|e| fail(&e))?;
            chart.configure_mesh().x_desc(x_desc).y_desc(y_desc).draw().map_err(|e| fail(&e))?;
            for (j, (label, points)) in lines.iter().enumerate() {
                let color = Palette99::pick(j).to_rgba();
                chart
                    .draw_series(LineSeries::new(clamp(points), color.stroke_width(2)))
                    .map_err(|e| fail(&e))?
                    .label(label.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .position(SeriesLabelPosition::UpperLeft)
                .draw()
                .map_err(|e| fail(&e))?;
        }};
    }
    if log {
        plot_on!(builder.build_cartesian_2d((x0..x1).log_scale(), y0..y1));
    } else {
        plot_on!(builder.build_cartesian_2d(x0..x1, y0..y1));
    }
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn draws_grouped_bars_with_means() {
        let dir = tempfile::tempdir().unwrap();
        let spec = PlotSpec {
            file: "p.svg".into(),
            title: Some("WAF".into()),
            x: "workload.preset".into(),
            series: Some("ftl.kind".into()),
            y: "waf".into(),
            y_label: None,
            stack: Vec::new(),
        };
        let columns: Vec<String> =
            ["run", "workload.preset", "ftl.kind", "waf"].iter().map(|s| s.to_string()).collect();
        let rows = vec![
            vec![json!(0), json!("a"), json!("pagemap"), json!(2.0)],
            vec![json!(1), json!("a"), json!("pagemap"), json!(4.0)],
            vec![json!(2), json!("b"), json!("nftl"), json!(9.5)],
            vec![json!(3), json!("b"), json!("nftl"), json!(null)],
        ];
        draw(&spec, &columns, &rows, dir.path()).unwrap();
        let svg = std::fs::read_to_string(dir.path().join("p.svg")).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("pagemap") && svg.contains("nftl"), "{svg}");
        assert!(svg.matches("<rect").count() >= 3);
        let bad = PlotSpec { y: "nope".into(), ..spec };
        assert!(bad.validate(&columns[1..3], &columns, "s.toml").unwrap_err().to_string().contains("nope"));
    }

    #[test]
    fn draws_stacked_bars_of_the_group_means() {
        let dir = tempfile::tempdir().unwrap();
        let spec = PlotSpec {
            file: "s.svg".into(),
            title: None,
            x: "pi".into(),
            series: None,
            y: "service".into(),
            y_label: None,
            stack: vec!["gc".into(), "idle".into()],
        };
        let columns: Vec<String> = ["run", "pi", "service", "gc", "idle"].iter().map(|s| s.to_string()).collect();
        let rows = vec![
            vec![json!(0), json!(16), json!(300.0), json!(1000.0), json!(1125.0)],
            vec![json!(1), json!(32), json!(400.0), json!(1500.0), json!(925.0)],
            vec![json!(2), json!(32), json!(null), json!(1500.0), json!(925.0)],
        ];
        draw(&spec, &columns, &rows, dir.path()).unwrap();
        let svg = std::fs::read_to_string(dir.path().join("s.svg")).unwrap();
        for name in ["service", "gc", "idle", "16", "32"] {
            assert!(svg.contains(name), "{name}: {svg}");
        }
        // Three segments per group, two groups, and the legend's three.
        assert!(svg.matches("<rect").count() >= 9, "{svg}");
        let both = PlotSpec { series: Some("pi".into()), ..spec.clone() };
        assert!(both.validate(&columns[1..2], &columns, "s.toml").unwrap_err().to_string().contains("series"));
        let bad = PlotSpec { stack: vec!["nope".into()], ..spec };
        assert!(bad.validate(&columns[1..2], &columns, "s.toml").unwrap_err().to_string().contains("nope"));
    }
}
