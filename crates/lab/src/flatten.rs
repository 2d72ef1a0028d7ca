//! Scalar fields of any serializable value, in declaration order, nested objects
//! flattened with dotted names (`read_us.p99`) and arrays left out: the columns of
//! CSV output. The value is serialized to JSON and read back by a visitor that
//! keeps the key order (`serde_json::Value` would sort it).

use std::fmt;

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Serialize;

use ftlab_sim::Report;

use crate::LabError;

/// One scalar.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
}

impl fmt::Display for Cell {
    /// As written in a CSV cell: null is empty, numbers as in the JSON output
    /// (shortest exact form, `1.0` for a whole float; non-finite floats empty).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cell::Null => Ok(()),
            Cell::Bool(b) => write!(f, "{b}"),
            Cell::Int(i) => write!(f, "{i}"),
            Cell::Float(x) => match serde_json::Number::from_f64(*x) {
                Some(n) => write!(f, "{n}"),
                None => Ok(()),
            },
            Cell::Str(s) => f.write_str(s),
        }
    }
}

/// The scalar fields of `value` as `(dotted name, cell)`, in order.
pub fn scalars<T: Serialize>(value: &T) -> Result<Vec<(String, Cell)>, serde_json::Error> {
    let text = serde_json::to_string(value)?;
    let mut out = Vec::new();
    let mut de = serde_json::Deserializer::from_str(&text);
    Flatten { prefix: String::new(), out: &mut out }.deserialize(&mut de)?;
    de.end()?;
    Ok(out)
}

/// The scalar fields of a report, named as in its JSON (`read_us.p99`): the
/// columns of CSV and JSON-lines output. The time series (`throughput`) and the
/// per-task list (`tasks`) are not scalars: left out.
pub fn report_scalars(report: &Report) -> Result<Vec<(String, Cell)>, LabError> {
    let mut cells = scalars(report).map_err(LabError::Serialize)?;
    cells.retain(|(name, _)| !name.starts_with("throughput."));
    Ok(cells)
}

struct Flatten<'a> {
    prefix: String,
    out: &'a mut Vec<(String, Cell)>,
}

impl Flatten<'_> {
    fn push(self, cell: Cell) {
        self.out.push((self.prefix, cell));
    }
}

impl<'de> DeserializeSeed<'de> for Flatten<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Flatten<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        self.push(Cell::Bool(v));
        Ok(())
    }
    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        self.push(Cell::Int(v.into()));
        Ok(())
    }
    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        self.push(Cell::Int(v.into()));
        Ok(())
    }
    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        self.push(Cell::Float(v));
        Ok(())
    }
    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.push(Cell::Str(v.to_owned()));
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        self.push(Cell::Null);
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        self.push(Cell::Null);
        Ok(())
    }
    /// Arrays are not scalars: skipped.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let out = self.out;
        while let Some(key) = map.next_key::<String>()? {
            let prefix = if self.prefix.is_empty() { key } else { format!("{}.{key}", self.prefix) };
            map.next_value_seed(Flatten { prefix, out: &mut *out })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[derive(Serialize)]
    struct Inner {
        z: f64,
        a: Option<u32>,
    }
    #[derive(Serialize)]
    struct Outer {
        name: &'static str,
        inner: Inner,
        list: Vec<u32>,
        last: bool,
    }

    #[test]
    fn keeps_order_flattens_objects_and_skips_arrays() {
        let v = Outer { name: "x", inner: Inner { z: 0.1 + 0.2, a: None }, list: vec![1, 2], last: true };
        let s = scalars(&v).unwrap();
        let names: Vec<&str> = s.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["name", "inner.z", "inner.a", "last"]);
        assert_eq!(s[1].1, Cell::Float(0.1 + 0.2));
        assert_eq!(s[2].1.to_string(), "");
        assert_eq!(s[3].1.to_string(), "true");
    }
}
