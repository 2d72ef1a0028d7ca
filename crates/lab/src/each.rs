//! The report's arrays as rows: a sweep's `[[table]]` and line `[[plot]]`
//! take one row per element of one of them (`each = "tasks"`), with fields
//! named `EACH.FIELD`:
//!
//! - `tasks`: one row per periodic task, its fields as in the JSON report
//!   (`tasks.name`, `tasks.admitted`, `tasks.worst_response_us`, ...);
//! - `throughput`: one row per interval of the time series: `throughput.t_s`
//!   (the interval's end, s, rounded to the microsecond), each series' count
//!   (`throughput.write_pages`) and its rate per second
//!   (`throughput.write_pages_per_s`, the count over `interval_s`), and the
//!   FTL's gauges (`throughput.gauges.NAME`, e.g. GFTL's
//!   `throughput.gauges.write_queue_pages`: a level, no rate; null in the
//!   rows of a run whose FTL has no such gauge);
//! - `rber_cdf`: one row per point of the RBER CDF, `rber_cdf.rber` and
//!   `rber_cdf.fraction`;
//! - `erase_histogram`: `erase_histogram.erase_count` and `erase_histogram.blocks`.
//!
//! The field names come from the report's own types, so a field the report
//! gains is a field here.

use serde_json::{Map, Value as J};

use ftlab_sim::metrics::{TaskReport, ThroughputSeries};
use ftlab_sim::Report;

use crate::LabError;

/// Arrays of `[x, y]` pairs and the names of their two fields.
const PAIRS: [(&str, [&str; 2]); 2] =
    [("rber_cdf", ["rber", "fraction"]), ("erase_histogram", ["erase_count", "blocks"])];

/// One of the report's arrays, taken a row per element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Each {
    Tasks,
    Throughput,
    Pairs(&'static str, [&'static str; 2]),
}

impl Each {
    /// The array named `name`, or an error listing those there are.
    pub fn parse(name: &str) -> Result<Each, String> {
        match name {
            "tasks" => Ok(Each::Tasks),
            "throughput" => Ok(Each::Throughput),
            _ => PAIRS.iter().find(|(k, _)| *k == name).map(|(k, f)| Each::Pairs(k, *f)).ok_or_else(|| {
                format!(
                    "each = \"{name}\" is not a report array; they are: tasks, throughput, rber_cdf, erase_histogram"
                )
            }),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Each::Tasks => "tasks",
            Each::Throughput => "throughput",
            Each::Pairs(k, _) => k,
        }
    }

    /// The fields of its rows, `EACH.FIELD`.
    pub fn fields(self) -> Vec<String> {
        let p = self.name();
        let keys: Vec<String> = match self {
            Each::Tasks => object_keys(&TaskReport::default()),
            Each::Throughput => std::iter::once("t_s".to_owned())
                .chain(series_keys().into_iter().flat_map(|k| [format!("{k}_per_s"), k]))
                .collect(),
            Each::Pairs(_, names) => names.iter().map(|n| (*n).to_owned()).collect(),
        };
        keys.into_iter().map(|k| format!("{p}.{k}")).collect()
    }

    /// Whether rows have field `f`: one of [`Each::fields`], or for
    /// `throughput` any `throughput.gauges.NAME` (gauge names are the FTL's).
    pub fn has_field(self, f: &str) -> bool {
        self.fields().iter().any(|k| k == f)
            || (self == Each::Throughput && f.strip_prefix(GAUGE_PREFIX).is_some_and(|n| !n.is_empty()))
    }

    /// [`Each::fields`] for an error message.
    pub fn field_list(self) -> String {
        let mut list = self.fields().join(", ");
        if self == Each::Throughput {
            list.push_str(", throughput.gauges.NAME (the FTL's gauges, see `ftl_gauges`)");
        }
        list
    }

    /// The rows of `report`'s array: field name to value.
    pub fn rows(self, report: &Report) -> Result<Vec<Map<String, J>>, LabError> {
        let p = self.name();
        Ok(match self {
            Each::Tasks => report
                .tasks
                .iter()
                .map(|t| {
                    Ok(match json(t)? {
                        J::Object(o) => o.into_iter().map(|(k, v)| (format!("{p}.{k}"), v)).collect(),
                        _ => Map::new(),
                    })
                })
                .collect::<Result<_, LabError>>()?,
            Each::Throughput => {
                let s = &report.throughput;
                let J::Object(series) = json(s)? else { return Ok(Vec::new()) };
                let arrays: Vec<(&String, &Vec<J>)> =
                    series.iter().filter_map(|(k, v)| v.as_array().map(|a| (k, a))).collect();
                let n = arrays.iter().map(|(_, a)| a.len()).max().unwrap_or(0);
                let dt = s.interval_s;
                (0..n)
                    .map(|i| {
                        let mut row = Map::new();
                        let t = ((i + 1) as f64 * dt * 1e6).round() / 1e6;
                        row.insert(format!("{p}.t_s"), number(t));
                        for (k, a) in &arrays {
                            let v = a.get(i).cloned().unwrap_or(J::Null);
                            let rate = v.as_f64().filter(|_| dt > 0.0).map_or(J::Null, |c| number(c / dt));
                            row.insert(format!("{p}.{k}_per_s"), rate);
                            row.insert(format!("{p}.{k}"), v);
                        }
                        for (k, g) in &s.gauges {
                            row.insert(format!("{GAUGE_PREFIX}{k}"), g.get(i).map_or(J::Null, |&v| number(v)));
                        }
                        row
                    })
                    .collect()
            }
            Each::Pairs(key, names) => {
                let v = json(report)?;
                v.get(key)
                    .and_then(J::as_array)
                    .map(|a| {
                        a.iter()
                            .map(|pair| {
                                names
                                    .iter()
                                    .enumerate()
                                    .map(|(i, n)| (format!("{p}.{n}"), pair.get(i).cloned().unwrap_or(J::Null)))
                                    .collect()
                            })
                            .collect()
                    })
                    .unwrap_or_default()
            }
        })
    }
}

/// Rows' names of the FTL's gauges: `throughput.gauges.NAME`.
const GAUGE_PREFIX: &str = "throughput.gauges.";

/// A float as a JSON number (null if not finite).
fn number(x: f64) -> J {
    serde_json::Number::from_f64(x).map_or(J::Null, J::Number)
}

/// The keys of a value serialized as a JSON object.
fn object_keys<T: serde::Serialize>(v: &T) -> Vec<String> {
    match serde_json::to_value(v) {
        Ok(J::Object(o)) => o.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// The time series of [`ThroughputSeries`] (its array fields).
fn series_keys() -> Vec<String> {
    match serde_json::to_value(ThroughputSeries::default()) {
        Ok(J::Object(o)) => o.into_iter().filter(|(_, v)| v.is_array()).map(|(k, _)| k).collect(),
        _ => Vec::new(),
    }
}

fn json<T: serde::Serialize>(v: &T) -> Result<J, LabError> {
    serde_json::to_value(v).map_err(LabError::Serialize)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn throughput_rows_have_times_counts_and_rates() {
        let mut r = Report::default();
        r.throughput.interval_s = 0.5;
        r.throughput.write_pages = vec![10, 20];
        r.throughput.read_pages = vec![1, 0];
        let rows = Each::Throughput.rows(&r).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1]["throughput.t_s"], serde_json::json!(1.0));
        assert_eq!(rows[1]["throughput.write_pages"], serde_json::json!(20));
        assert_eq!(rows[1]["throughput.write_pages_per_s"], serde_json::json!(40.0));
        for f in Each::Throughput.fields() {
            assert!(rows[0].contains_key(&f), "{f} is a field but not in a row");
        }
        assert!(!rows[0].contains_key("throughput.gauges.queue"));
    }

    #[test]
    fn throughput_rows_carry_the_ftls_gauges() {
        let mut r = Report::default();
        r.throughput.interval_s = 0.5;
        r.throughput.write_pages = vec![10, 20];
        r.throughput.gauges.insert("queue".into(), vec![3.0, 5.0]);
        let rows = Each::Throughput.rows(&r).unwrap();
        assert_eq!(rows[1]["throughput.gauges.queue"], serde_json::json!(5.0));
        assert!(!rows[1].contains_key("throughput.gauges.queue_per_s"), "a level has no rate");
        assert!(Each::Throughput.has_field("throughput.gauges.queue"));
        assert!(Each::Throughput.has_field("throughput.write_pages"));
        assert!(!Each::Throughput.has_field("throughput.gauges."));
        assert!(!Each::Tasks.has_field("throughput.gauges.queue"));
        assert!(Each::Throughput.field_list().contains("throughput.gauges.NAME"));
    }

    #[test]
    fn pairs_and_tasks_are_named_and_unknown_arrays_listed() {
        let r = Report { rber_cdf: vec![[1e-5, 0.0], [1e-2, 1.0]], ..Report::default() };
        let rows = Each::parse("rber_cdf").unwrap().rows(&r).unwrap();
        assert_eq!(rows[1]["rber_cdf.rber"], serde_json::json!(1e-2));
        assert!(Each::Tasks.fields().contains(&"tasks.refused_by".to_owned()));
        let e = Each::parse("task").unwrap_err();
        assert!(e.contains("\"task\"") && e.contains("tasks, throughput"), "{e}");
    }
}
