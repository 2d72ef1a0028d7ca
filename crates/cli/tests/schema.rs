//! The JSON Schema of a report (`ftlab schema`, generated from the Rust
//! types) is the one source of the report's field documentation: the
//! committed `report.schema.json`, the field tables of `FIELDS.md` and the
//! Python classes and stubs of `ftlab.Report` are generated from it, and these
//! tests fail when any of them is out of date. `FTLAB_BLESS=1 cargo test -p
//! ftlab-cli --test schema` rewrites them.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn schema_text() -> String {
    let out = Command::cargo_bin("ftlab").unwrap().arg("schema").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn schema() -> Value {
    serde_json::from_str(&schema_text()).unwrap()
}

/// Compares a generated file with the committed one; with `FTLAB_BLESS=1`
/// writes it instead.
fn check(path: &Path, generated: &str) {
    let current = std::fs::read_to_string(path).unwrap_or_default();
    if current == generated {
        return;
    }
    if std::env::var_os("FTLAB_BLESS").is_some() {
        std::fs::write(path, generated).unwrap();
        return;
    }
    let line = current.lines().zip(generated.lines()).position(|(a, b)| a != b).unwrap_or(0);
    panic!(
        "{} is out of date with `ftlab schema` (first difference at line {}: {:?}); run `FTLAB_BLESS=1 cargo test -p \
         ftlab-cli --test schema` and commit the result",
        path.display(),
        line + 1,
        generated.lines().nth(line).unwrap_or("<end>")
    );
}

/// The schema behind a property: `$ref`s followed, and of an `anyOf` with
/// `null` the other variant. Returns it and whether null is allowed.
fn resolve<'a>(schema: &'a Value, node: &'a Value) -> (&'a Value, bool) {
    if let Some(r) = node.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").unwrap();
        let (target, nullable) = resolve(schema, &schema["$defs"][name]);
        return (target, nullable);
    }
    if let Some(any) = node.get("anyOf").and_then(Value::as_array) {
        let others: Vec<&Value> = any.iter().filter(|v| v.get("type") != Some(&Value::from("null"))).collect();
        if others.len() == 1 && any.len() == 2 {
            return (resolve(schema, others[0]).0, true);
        }
    }
    let nullable = node["type"].as_array().is_some_and(|t| t.contains(&Value::from("null")));
    (node, nullable)
}

/// The name of the `$defs` entry a property refers to, if any.
fn def_name(node: &Value) -> Option<&str> {
    let r = node
        .get("$ref")
        .or_else(|| node.get("anyOf").and_then(|a| a.as_array()?.iter().find_map(|v| v.get("$ref"))))?;
    r.as_str()?.strip_prefix("#/$defs/")
}

/// An object's properties in the order a reader wants them: the required ones
/// in declaration order, then those that may be left out (alphabetical).
fn properties(object: &Value) -> Vec<(&str, &Value)> {
    let props = object["properties"].as_object().unwrap();
    let required: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out: Vec<(&str, &Value)> = required.iter().map(|k| (*k, &props[*k])).collect();
    out.extend(props.iter().filter(|(k, _)| !required.contains(&k.as_str())).map(|(k, v)| (k.as_str(), v)));
    out
}

fn is_record(node: &Value) -> bool {
    node.get("properties").is_some()
}

/// Every leaf under `node` (a property schema) at `path`: objects recursed,
/// arrays of objects as `path[]`.
fn leaves<'a>(schema: &'a Value, path: &str, node: &'a Value, out: &mut Vec<(String, &'a Value)>) {
    let (resolved, _) = resolve(schema, node);
    if is_record(resolved) {
        for (name, prop) in properties(resolved) {
            leaves(schema, &join(path, name), prop, out);
        }
        return;
    }
    if let Some(items) = resolved.get("items") {
        let (item, _) = resolve(schema, items);
        if is_record(item) {
            leaves(schema, &format!("{path}[]"), items, out);
            return;
        }
    }
    out.push((path.to_string(), node));
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// The property schema at a dotted path (`flows[].name`, `read_us.p99`).
fn at<'a>(schema: &'a Value, path: &str) -> &'a Value {
    let mut node = schema;
    let mut first = true;
    for part in path.split('.') {
        let (resolved, _) = if first { (schema, false) } else { resolve(schema, node) };
        first = false;
        let (name, array) = match part.strip_suffix("[]") {
            Some(n) => (n, true),
            None => (part, false),
        };
        node = resolved["properties"].get(name).unwrap_or_else(|| panic!("FIELDS.md names `{path}`: no such field"));
        if array {
            node = &resolve(schema, node).0["items"];
        }
    }
    node
}

fn description(schema: &Value, node: &Value) -> String {
    let text = node
        .get("description")
        .or_else(|| resolve(schema, node).0.get("description"))
        .and_then(Value::as_str)
        .unwrap_or("");
    text.replace("\n\n", " ").replace('|', "\\|")
}

/// The unit column: `x-unit`, else what the type is.
fn unit(schema: &Value, node: &Value) -> String {
    if let Some(u) = node.get("x-unit").and_then(Value::as_str) {
        return u.to_string();
    }
    let (resolved, _) = resolve(schema, node);
    let types: Vec<&str> = match &resolved["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(t) => t.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect(),
        _ => vec![],
    };
    match types.first().copied() {
        Some("object") => match resolved.get("additionalProperties") {
            Some(v) if v.get("type") == Some(&Value::from("array")) => "object of arrays".into(),
            Some(v) if v.is_object() => "object of numbers".into(),
            _ => "object".into(),
        },
        Some("array") => "array".into(),
        Some("boolean") => "bool".into(),
        Some("string") => "text".into(),
        Some("integer") => "count".into(),
        Some("number") => "—".into(),
        _ => "—".into(),
    }
}

/// The rows of one `<!-- fields: ... -->` token.
///
/// - `a.b`: one row for that field;
/// - `a.*`: one row per leaf under `a`;
/// - `a.+`: one row for `a` listing every leaf under it (its description and unit);
/// - one `{x,y,z}` group: the same for each alternative; with `.*` (or none)
///   the alternatives' rows are merged (row i lists each alternative's i-th
///   path, described by the first), with `.+` each alternative is a row.
fn rows(schema: &Value, token: &str) -> Vec<String> {
    let alternatives: Vec<String> = match (token.find('{'), token.find('}')) {
        (Some(i), Some(j)) => {
            token[i + 1..j].split(',').map(|alt| format!("{}{}{}", &token[..i], alt, &token[j + 1..])).collect()
        }
        _ => vec![token.to_string()],
    };
    let expand = |t: &str| -> Vec<(Vec<String>, &Value)> {
        if let Some(base) = t.strip_suffix(".*") {
            let mut out = Vec::new();
            leaves(schema, base, at(schema, base), &mut out);
            out.into_iter().map(|(p, n)| (vec![p], n)).collect()
        } else if let Some(base) = t.strip_suffix(".+") {
            let node = at(schema, base);
            let mut out = Vec::new();
            leaves(schema, base, node, &mut out);
            vec![(out.into_iter().map(|(p, _)| p).collect(), node)]
        } else {
            vec![(vec![t.to_string()], at(schema, t))]
        }
    };
    let expanded: Vec<Vec<(Vec<String>, &Value)>> = alternatives.iter().map(|a| expand(a)).collect();
    let merge = alternatives.len() > 1 && !token.ends_with(".+");
    let mut out = Vec::new();
    if merge {
        for i in 0..expanded[0].len() {
            let paths: Vec<String> = expanded.iter().flat_map(|e| e[i].0.clone()).collect();
            out.push(row(schema, &paths, expanded[0][i].1));
        }
    } else {
        for e in &expanded {
            for (paths, node) in e {
                out.push(row(schema, paths, node));
            }
        }
    }
    out
}

fn row(schema: &Value, paths: &[String], node: &Value) -> String {
    let names: Vec<String> = paths.iter().map(|p| format!("`{p}`")).collect();
    format!("| {} | {} | {} |", names.join(", "), unit(schema, node), description(schema, node))
}

const OPEN: &str = "<!-- fields: ";
const CLOSE: &str = "<!-- /fields -->";

/// FIELDS.md with each `<!-- fields: ... -->` region's table regenerated.
fn fields_md(schema: &Value, doc: &str) -> String {
    let mut out = String::new();
    let mut rest = doc;
    while let Some(i) = rest.find(OPEN) {
        let line_end = i + rest[i..].find("-->\n").expect("an unclosed <!-- fields: comment") + 4;
        out.push_str(&rest[..line_end]);
        let tokens = &rest[i + OPEN.len()..line_end - 4];
        out.push_str("| field | unit | meaning |\n|---|---|---|\n");
        for token in tokens.split_whitespace() {
            for r in rows(schema, token) {
                out.push_str(&r);
                out.push('\n');
            }
        }
        let end = rest[line_end..].find(CLOSE).expect("a <!-- fields: region without <!-- /fields -->") + line_end;
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn committed_schema_is_current() {
    check(&root().join("report.schema.json"), &schema_text());
}

#[test]
fn fields_md_is_generated_from_the_schema() {
    let s = schema();
    let path = root().join("FIELDS.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let generated = fields_md(&s, &doc);
    // Every field of the schema, nested ones included, is in a table.
    let mut all = Vec::new();
    leaves(&s, "", &s, &mut all);
    let missing: Vec<&String> = all.iter().map(|(p, _)| p).filter(|p| !generated.contains(&format!("`{p}`"))).collect();
    assert!(missing.is_empty(), "FIELDS.md's tables leave out {missing:?}: add them to a <!-- fields: --> region");
    check(&path, &generated);
}

/// The generator catches what it should: a field the tables leave out, and a
/// table that no longer says what the schema says.
#[test]
fn fields_md_check_can_fail() {
    let s = schema();
    let doc = "# t\n<!-- fields: ftl waf read_us.* -->\n| stale |\n<!-- /fields -->\nprose\n";
    let generated = fields_md(&s, doc);
    assert!(generated.contains("| `waf` | ratio | Write amplification factor"), "{generated}");
    assert!(generated.contains("| `read_us.p99` | µs |"), "{generated}");
    assert!(!generated.contains("stale") && generated.ends_with("<!-- /fields -->\nprose\n"), "{generated}");
    let merged = rows(&s, "{read_us,write_us}.*");
    assert!(merged.iter().any(|r| r.starts_with("| `read_us.mean`, `write_us.mean` |")), "{merged:?}");
    let one = rows(&s, "die_time.busy_ns.+");
    assert_eq!(one.len(), 1);
    assert!(one[0].contains("`die_time.busy_ns.host`") && one[0].contains("`die_time.busy_ns.recovery`"), "{one:?}");
    let arrays = rows(&s, "flows[].*");
    assert!(arrays.iter().any(|r| r.starts_with("| `flows[].slowdown` |")), "{arrays:?}");
}

// ---- Python -------------------------------------------------------------

/// The Python type of a property, for the stubs.
fn py_type(schema: &Value, node: &Value) -> String {
    let (resolved, nullable) = resolve(schema, node);
    let inner = if let Some(name) = def_name(node) {
        name.to_string()
    } else if let Some(items) = resolved.get("items") {
        format!("List[{}]", py_type(schema, items))
    } else if let Some(prefix) = resolved.get("prefixItems").and_then(Value::as_array) {
        let parts: Vec<String> = prefix.iter().map(|p| py_type(schema, p)).collect();
        format!("Tuple[{}]", parts.join(", "))
    } else {
        let types: Vec<&str> = match &resolved["type"] {
            Value::String(t) => vec![t.as_str()],
            Value::Array(t) => t.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect(),
            _ => vec![],
        };
        match types.first().copied() {
            Some("integer") => "int".into(),
            Some("number") => "float".into(),
            Some("string") => "str".into(),
            Some("boolean") => "bool".into(),
            Some("object") => match resolved.get("additionalProperties") {
                Some(v) if v.is_object() => format!("Dict[str, {}]", py_type(schema, v)),
                _ => "Dict[str, Any]".into(),
            },
            _ => "Any".into(),
        }
    };
    if nullable {
        format!("Optional[{inner}]")
    } else {
        inner
    }
}

/// A docstring's text: plain, wrapped at 88 columns with `indent`.
fn docstring(text: &str, indent: &str) -> String {
    let text = text.replace('\\', "\\\\").replace("\"\"\"", "'''");
    let mut lines = Vec::new();
    for paragraph in text.split("\n\n") {
        if !lines.is_empty() {
            lines.push(String::new());
        }
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && indent.len() + line.len() + word.len() + 1 > 84 {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
    }
    let body: Vec<String> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| if i == 0 || l.is_empty() { l.clone() } else { format!("{indent}{l}") })
        .collect();
    format!("{indent}\"\"\"{}\"\"\"\n", body.join("\n"))
}

/// The classes of the report's nested objects, in dependency order
/// (a class after those its fields name), the report last.
fn classes(schema: &Value) -> Vec<(String, &Value)> {
    let defs = schema["$defs"].as_object().unwrap();
    let mut order: Vec<String> = Vec::new();
    fn visit(schema: &Value, name: &str, order: &mut Vec<String>) {
        if order.iter().any(|n| n == name) {
            return;
        }
        let def = &schema["$defs"][name];
        for (_, prop) in properties(def) {
            for n in refs(prop) {
                visit(schema, n, order);
            }
        }
        order.push(name.to_string());
    }
    for name in defs.keys() {
        if is_record(&defs[name]) {
            visit(schema, name, &mut order);
        }
    }
    let mut out: Vec<(String, &Value)> = order.into_iter().map(|n| (n.clone(), &defs[&n])).collect();
    out.push(("Report".into(), schema));
    out
}

/// Every `$defs` name a property refers to, at any depth.
fn refs(node: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    match node {
        Value::Object(map) => {
            if let Some(r) = map.get("$ref").and_then(Value::as_str) {
                out.push(r.strip_prefix("#/$defs/").unwrap());
            }
            for v in map.values() {
                out.extend(refs(v));
            }
        }
        Value::Array(items) => items.iter().for_each(|v| out.extend(refs(v))),
        _ => {}
    }
    out
}

/// For each field that holds a nested object, the class that wraps it
/// (`Optional[...]` and `List[...]` of one included).
fn nested(schema: &Value, object: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (name, prop) in properties(object) {
        let (resolved, _) = resolve(schema, prop);
        if let Some(def) = def_name(prop) {
            out.insert(name.to_string(), def.to_string());
        } else if let Some(def) = resolved.get("items").and_then(def_name) {
            out.insert(name.to_string(), def.to_string());
        }
    }
    out
}

const PY_HEADER: &str = "# Generated from the report's JSON Schema (`ftlab schema`) by crates/cli/tests/schema.rs;\n# do not edit: run `FTLAB_BLESS=1 cargo test -p ftlab-cli --test schema`.\n";

/// `_fields.py`: a runtime class per nested object of the report, with its
/// docstring and the classes of its own nested fields.
fn py_runtime(schema: &Value) -> String {
    let mut out = format!(
        "{PY_HEADER}\"\"\"The classes of a report's nested objects (``report.read_us`` is a\n``LatencySummary``), generated from the report's JSON Schema.\"\"\"\n\nfrom __future__ import annotations\n\nfrom typing import ClassVar, Dict, FrozenSet\n\nfrom ._record import Record\n"
    );
    let mut names = Vec::new();
    for (name, def) in classes(schema) {
        if name == "Report" {
            continue;
        }
        names.push(name.clone());
        out.push_str(&format!("\n\nclass {name}(Record):\n"));
        out.push_str(&docstring(def["description"].as_str().unwrap_or(&name), "    "));
        out.push_str("\n    __slots__ = ()\n");
        let fields = nested(schema, def);
        out.push_str(&py_fields_map(&fields));
        let optional = optional(def);
        if !optional.is_empty() {
            out.push_str(&format!(
                "    _optional: ClassVar[FrozenSet[str]] = frozenset({{{}}})\n",
                py_names(&optional)
            ));
        }
    }
    out.push_str(&format!(
        "\n\n# The classes of the report's own nested fields.\nREPORT_FIELDS: Dict[str, type] = {}\n",
        py_dict(&nested(schema, schema))
    ));
    out.push_str(&format!(
        "\n# The report's fields that may be left out (None when they are).\nREPORT_OPTIONAL: FrozenSet[str] = frozenset({{{}}})\n",
        py_names(&optional(schema))
    ));
    out.push_str("\n__all__ = [\n");
    for n in names {
        out.push_str(&format!("    \"{n}\",\n"));
    }
    out.push_str("]\n");
    out
}

/// The fields of an object that may be left out of the JSON.
fn optional(object: &Value) -> Vec<&str> {
    properties(object)
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| !object["required"].as_array().is_some_and(|r| r.contains(&Value::from(*name))))
        .collect()
}

fn py_names(names: &[&str]) -> String {
    names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ")
}

fn py_dict(fields: &BTreeMap<String, String>) -> String {
    if fields.is_empty() {
        return "{}".into();
    }
    let items: Vec<String> = fields.iter().map(|(k, v)| format!("    \"{k}\": {v},\n")).collect();
    format!("{{\n{}}}", items.join(""))
}

fn py_fields_map(fields: &BTreeMap<String, String>) -> String {
    if fields.is_empty() {
        return String::new();
    }
    let items: Vec<String> = fields.iter().map(|(k, v)| format!("        \"{k}\": {v},\n")).collect();
    format!("    _fields: ClassVar[Dict[str, type]] = {{\n{}    }}\n", items.join(""))
}

const STUB_OPEN: &str = "# --- generated from the report's JSON Schema";
const STUB_CLOSE: &str = "# --- end of generated";

/// The stub classes, and the report's attributes.
fn py_stubs(schema: &Value) -> (String, String) {
    let mut classes_out = String::new();
    let mut report = String::new();
    let names: Vec<String> = classes(schema)
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| n != "Report")
        .map(|n| format!("    \"{n}\",\n"))
        .collect();
    classes_out.push_str(&format!("__all__ += [\n{}]\n\n", names.join("")));
    for (name, def) in classes(schema) {
        let mut body = String::new();
        for (field, prop) in properties(def) {
            let required = def["required"].as_array().is_some_and(|r| r.contains(&Value::from(field)));
            let ty = py_type(schema, prop);
            let ty = if required || ty.starts_with("Optional[") { ty } else { format!("Optional[{ty}]") };
            body.push_str(&format!("    {field}: {ty}\n"));
            let text = description(schema, prop).replace("\\|", "|");
            if !text.is_empty() {
                body.push_str(&docstring(&text, "    "));
            }
        }
        if name == "Report" {
            report = body;
        } else {
            classes_out.push_str(&format!("class {name}(Record):\n"));
            classes_out.push_str(&docstring(def["description"].as_str().unwrap_or(&name), "    "));
            classes_out.push('\n');
            classes_out.push_str(&body);
            classes_out.push('\n');
        }
    }
    (classes_out, report)
}

/// Replaces the text between the `marker` comment lines (`STUB_OPEN marker`
/// and `STUB_CLOSE marker`).
fn replace_region(text: &str, marker: &str, with: &str) -> String {
    let open = text.find(&format!("{STUB_OPEN} {marker}")).unwrap_or_else(|| panic!("no `{STUB_OPEN} {marker}` line"));
    let open_end = open + text[open..].find('\n').unwrap() + 1;
    let close = text[open_end..].find(&format!("{STUB_CLOSE} {marker}")).unwrap() + open_end;
    let indent_start = text[..close].rfind('\n').unwrap() + 1;
    format!("{}{}{}", &text[..open_end], with, &text[indent_start..])
}

#[test]
fn python_classes_and_stubs_are_generated_from_the_schema() {
    let s = schema();
    let py = root().join("../py/python/ftlab");
    check(&py.join("_fields.py"), &py_runtime(&s));
    let stub_path = py.join("__init__.pyi");
    let stub = std::fs::read_to_string(&stub_path).unwrap();
    let (classes, report) = py_stubs(&s);
    let stub = replace_region(&stub, "(classes)", &classes);
    let stub = replace_region(&stub, "(Report)", &report);
    check(&stub_path, &stub);
}

#[test]
fn python_types_follow_the_schema() {
    let s = schema();
    assert_eq!(py_type(&s, at(&s, "waf")), "Optional[float]");
    assert_eq!(py_type(&s, at(&s, "read_us")), "LatencySummary");
    assert_eq!(py_type(&s, at(&s, "energy")), "Optional[EnergyReport]");
    assert_eq!(py_type(&s, at(&s, "flows")), "List[FlowReport]");
    assert_eq!(py_type(&s, at(&s, "ftl_gauges")), "Dict[str, float]");
    assert_eq!(py_type(&s, at(&s, "integrity")), "str");
    let (_, report) = py_stubs(&s);
    assert!(report.contains("    waf: Optional[float]\n"), "{report}");
    // A field that may be left out is Optional even when it is never null.
    assert!(report.contains("    flows: Optional[List[FlowReport]]\n"), "{report}");
}
