//! Figures of a sweep's results, for the CLI (`[[plot]]` tables, `ftlab
//! plot`, the experiments' commands) and Python (`ftlab.plot`) alike: grouped
//! or stacked bars of its rows ([`bars`], [`PlotSpec`]) and lines of a report
//! array, one per run ([`lines`], [`LineSpec`]). Axis and legend titles
//! default to the field dictionary's names ([`crate::fields`]); values that
//! are paths show as file names. Where several runs share an `x` and `series`
//! value (other grid keys vary, e.g. seeds), the bar is their mean; runs that
//! failed are left out. With `stack`, each group is one bar: `y` at the
//! bottom and the stacked fields on it.

use std::path::Path;

use crate::fields;
use crate::figure::{self, Figure};
use crate::sweep::PlotSpec;
use crate::sweep_out::{Line, LineSpec, Scale};
use crate::LabError;

/// A figure's id: its file's stem.
pub fn id_of(file: impl AsRef<Path>) -> String {
    file.as_ref().file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "figure".into())
}

/// The figure of `spec` ([`PlotSpec`]) from finished rows (`columns` names
/// each row's cells).
pub fn bars(spec: &PlotSpec, columns: &[String], rows: &[Vec<serde_json::Value>]) -> Result<Figure, LabError> {
    let col = |name: &str| {
        columns.iter().position(|c| c == name).ok_or_else(|| {
            LabError::config(
                "plot",
                format!("plot `{}`: unknown column {name}; columns: {}", spec.file, columns.join(", ")),
            )
        })
    };
    let xi = col(&spec.x)?;
    let stacked = !spec.stack.is_empty();
    // The fields drawn: `y` and the stacked ones, or `y` alone split by `series`.
    let fields: Vec<&String> = std::iter::once(&spec.y).chain(&spec.stack).collect();
    let idx: Vec<usize> = fields.iter().map(|f| col(f)).collect::<Result<_, _>>()?;
    let si = if stacked { None } else { spec.series.as_deref().map(col).transpose()? };
    let mut groups: Vec<String> = Vec::new();
    let mut group_keys: Vec<String> = Vec::new();
    let mut series_keys: Vec<String> = Vec::new();
    let mut series: Vec<String> =
        if stacked { fields.iter().map(|f| fields::field(f).label).collect() } else { Vec::new() };
    // (group, series) -> (sum, count)
    let mut cells: Vec<((usize, usize), f64, u32)> = Vec::new();
    for row in rows {
        let values: Vec<f64> = if stacked {
            // A stacked bar needs every part.
            let Some(v) = idx.iter().map(|&i| row[i].as_f64()).collect::<Option<Vec<f64>>>() else { continue };
            v
        } else {
            let Some(v) = row[idx[0]].as_f64() else { continue };
            vec![v]
        };
        // Values are told apart by their own text; the names shown may shorten them.
        let g = row[xi].to_string();
        let gi = group_keys.iter().position(|v| *v == g).unwrap_or_else(|| {
            group_keys.push(g);
            groups.push(fields::value(&row[xi]));
            groups.len() - 1
        });
        for (k, y) in values.into_iter().enumerate() {
            let sj = if stacked {
                k
            } else {
                let s = si.map_or_else(String::new, |i| row[i].to_string());
                series_keys.iter().position(|v| *v == s).unwrap_or_else(|| {
                    series_keys.push(s);
                    series.push(si.map_or_else(|| fields::field(&spec.y).label, |i| fields::value(&row[i])));
                    series.len() - 1
                })
            };
            match cells.iter_mut().find(|c| c.0 == (gi, sj)) {
                Some(c) => {
                    c.1 += y;
                    c.2 += 1;
                }
                None => cells.push(((gi, sj), y, 1)),
            }
        }
    }
    for (names, values, key, what) in
        [(&spec.x_names, &mut groups, "x_names", "x"), (&spec.series_names, &mut series, "series_names", "series")]
    {
        if names.is_empty() || (stacked && what == "series") {
            continue;
        }
        if names.len() != values.len() {
            return Err(LabError::config(
                format!("plot.{key}"),
                format!(
                    "plot `{}`: {key} gives {} names but {what} has {} values ({}); give one name a value, in the grid's order",
                    spec.file,
                    names.len(),
                    values.len(),
                    values.join("; ")
                ),
            ));
        }
        values.clone_from(names);
    }
    let mut values = vec![vec![None; series.len()]; groups.len()];
    for ((g, s), sum, n) in cells {
        values[g][s] = Some(sum / f64::from(n));
    }
    let x_label = spec.x_label.clone().unwrap_or_else(|| fields::field(&spec.x).label);
    let legend = spec.legend.clone().or_else(|| spec.series.as_deref().map(|s| fields::field(s).label));
    let fig = Figure::bars(
        &id_of(&spec.file),
        figure::Axis::new(x_label, None),
        fields::axis(&spec.y, spec.y_label.as_deref()),
        groups,
        series,
        values,
    )
    .title(spec.title.clone())
    .legend(if stacked { spec.legend.clone() } else { legend })
    .stacked_or_steps(stacked);
    Ok(fig)
}

/// The figure of a line plot ([`LineSpec`]): one line per `(label, points)`,
/// in order.
pub fn lines(spec: &LineSpec, lines: &[&Line]) -> Result<Figure, LabError> {
    let log = spec.x_scale == Scale::Log;
    if let Some([x0, x1]) = spec.x_range {
        if x0.partial_cmp(&x1) != Some(std::cmp::Ordering::Less) || (log && x0 <= 0.0) {
            return Err(LabError::config(
                "plot.x_range",
                format!(
                    "plot `{}`: x_range = [{x0}, {x1}] is not an increasing range{}",
                    spec.file,
                    if log { " of positive values (x_scale = \"log\")" } else { "" }
                ),
            ));
        }
    }
    // Points outside the x range are clamped to its edges, so a line leaves the
    // plot where it crosses them.
    let lines: Vec<figure::Line> = lines
        .iter()
        .map(|(label, points)| figure::Line {
            name: fields::value(&serde_json::Value::String(label.clone())),
            points: points.iter().map(|&(x, y)| (spec.x_range.map_or(x, |[a, b]| x.clamp(a, b)), y)).collect(),
            markers_only: false,
        })
        .collect();
    let x = fields::axis(&spec.x, spec.x_label.as_deref())
        .scale(if log { figure::Scale::Log } else { figure::Scale::Linear })
        .range(spec.x_range);
    let legend = spec.legend.clone().or_else(|| spec.series.as_deref().map(|s| fields::field(s).label));
    let fig = Figure::lines(&id_of(&spec.file), x, fields::axis(&spec.y, spec.y_label.as_deref()), lines)
        .title(spec.title.clone())
        .legend(legend)
        .stacked_or_steps(spec.steps);
    Ok(fig)
}
