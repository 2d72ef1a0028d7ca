//! The modules of `crates/sim/src` use each other one way only: the graph of
//! their `use crate::…` / `use super::…` imports and `crate::…` / `super::…`
//! paths, with each module owning the modules it declares, has no circle.
//!
//! A module may use its ancestors' items (a child of `engine` uses `Engine`),
//! but nothing uses the crate root: `lib.rs` owns every module and re-exports
//! the public API, so an import of `crate::Name` is a circle through it. Doc
//! comments and `#[cfg(test)]` modules do not count.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module by its path from the crate root (`engine::per_die`); the root is
/// the empty path.
type Module = Vec<String>;

fn name(m: &Module) -> String {
    if m.is_empty() {
        "crate (lib.rs)".to_owned()
    } else {
        m.join("::")
    }
}

/// Every `.rs` file under `dir`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> =
        std::fs::read_dir(dir).expect("src is readable").map(|e| e.expect("entry").path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The module a file under `src` holds: `lib.rs` the root, `a/mod.rs` and
/// `a.rs` module `a`, `a/b.rs` module `a::b`.
fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if !(stem == "mod" || (parts.is_empty() && stem == "lib")) {
        parts.push(stem.to_owned());
    }
    parts
}

/// The code of a file: comments removed, and the `#[cfg(test)]` module at its
/// end left out (test code may use anything).
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" && lines.peek().is_some_and(|l| l.trim_start().starts_with("mod ")) {
            break;
        }
        let line = match line.find("//") {
            // `//` inside a string literal is rare in this crate's imports and
            // paths; a line cut there loses no `use`.
            Some(i) => &line[..i],
            None => line,
        };
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The paths a `use` tree names (`crate::{a::B, c}` gives `crate::a::B` and
/// `crate::c`), each as its segments.
fn expand(tree: &str) -> Vec<Vec<String>> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let mut out = Vec::new();
    expand_into(&tree, &mut Vec::new(), &mut out);
    out
}

fn expand_into(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree.find('{') {
        None => {
            let path = tree.split(" as ").next().unwrap_or(tree);
            let mut p = prefix.clone();
            p.extend(path.split("::").filter(|s| !s.is_empty()).map(str::to_owned));
            out.push(p);
        }
        Some(open) => {
            let head = &tree[..open];
            let inner = &tree[open + 1..tree.rfind('}').expect("a closing brace")];
            let n = prefix.len();
            prefix.extend(head.split("::").filter(|s| !s.is_empty()).map(str::to_owned));
            // Split at top-level commas.
            let (mut depth, mut start) = (0, 0);
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        if !inner[start..i].is_empty() {
                            expand_into(&inner[start..i], prefix, out);
                        }
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            if !inner[start..].is_empty() {
                expand_into(&inner[start..], prefix, out);
            }
            prefix.truncate(n);
        }
    }
}

/// Every path in `code` that starts at `crate`, `super` or `self` (from `use`
/// trees and from paths written in the code), and in the root, `use` paths
/// that start at one of its modules.
fn paths(code: &str, root: bool, top: &BTreeSet<String>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = String::new();
    let mut remaining = code;
    while let Some(i) = find_use(remaining) {
        rest.push_str(&remaining[..i]);
        let after = &remaining[i..];
        let stmt_start = after.find("use ").map_or(0, |k| k + 4);
        let end = after.find(';').unwrap_or(after.len());
        for p in expand(&after[stmt_start..end]) {
            let starts_here = p.first().is_some_and(|s| s == "crate" || s == "super" || s == "self");
            if starts_here || (root && p.first().is_some_and(|s| top.contains(s))) {
                out.push(p);
            }
        }
        remaining = &after[(end + 1).min(after.len())..];
    }
    rest.push_str(remaining);
    // Paths in the code: `crate::a::b`, `super::x`.
    let bytes = rest.as_bytes();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(k) = rest[from..].find(start) {
            let at = from + k;
            from = at + start.len();
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
                continue;
            }
            let path: String =
                rest[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':').collect();
            out.push(path.split("::").filter(|s| !s.is_empty()).map(str::to_owned).collect());
        }
    }
    out
}

/// The byte offset of the next `use` statement (`use`, `pub use`,
/// `pub(crate) use`, at the start of a line).
fn find_use(code: &str) -> Option<usize> {
    let mut offset = 0;
    for line in code.split_inclusive('\n') {
        let t = line.trim_start();
        let t = t
            .strip_prefix("pub(crate) ")
            .or_else(|| t.strip_prefix("pub(super) "))
            .or_else(|| t.strip_prefix("pub "))
            .unwrap_or(t);
        if t.starts_with("use ") {
            return Some(offset);
        }
        offset += line.len();
    }
    None
}

/// The module a path from module `from` names (the longest prefix that is a
/// module; its item's module otherwise).
fn resolve(from: &Module, path: &[String], modules: &BTreeSet<Module>, root: bool) -> Module {
    let mut base: Module = Vec::new();
    let mut segs = path;
    match path.first().map(String::as_str) {
        Some("crate") => segs = &path[1..],
        Some("self") => {
            base = from.clone();
            segs = &path[1..];
        }
        Some("super") => {
            base = from.clone();
            while segs.first().is_some_and(|s| s == "super") {
                base.pop();
                segs = &segs[1..];
            }
        }
        _ if root => {}
        _ => base = from.clone(),
    }
    let mut m = base;
    for s in segs {
        let mut next = m.clone();
        next.push(s.clone());
        if modules.contains(&next) {
            m = next;
        } else {
            break;
        }
    }
    m
}

/// Module `from`'s edges: the modules it declares and those it uses (but
/// itself and its ancestors other than the root).
fn graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut list = Vec::new();
    files(src, &mut list);
    let texts: Vec<(Module, String)> =
        list.iter().map(|f| (module_of(src, f), code(&std::fs::read_to_string(f).expect("readable")))).collect();
    let modules: BTreeSet<Module> = texts.iter().map(|(m, _)| m.clone()).collect();
    let top: BTreeSet<String> = modules.iter().filter(|m| m.len() == 1).map(|m| m[0].clone()).collect();
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for m in &modules {
        let e = edges.entry(m.clone()).or_default();
        // A module owns its children.
        for c in modules.iter().filter(|c| c.len() == m.len() + 1 && c.starts_with(m)) {
            e.insert(c.clone());
        }
    }
    for (m, text) in &texts {
        for p in paths(text, m.is_empty(), &top) {
            let to = resolve(m, &p, &modules, m.is_empty());
            let ancestor = to.len() < m.len() && m.starts_with(&to) && !to.is_empty();
            if &to != m && !ancestor {
                edges.entry(m.clone()).or_default().insert(to);
            }
        }
    }
    edges
}

/// A circle of `edges`, if any, as its modules in order.
fn circle(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Option<Vec<Module>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(
        m: &Module,
        edges: &BTreeMap<Module, BTreeSet<Module>>,
        mark: &mut BTreeMap<Module, Mark>,
        stack: &mut Vec<Module>,
    ) -> Option<Vec<Module>> {
        mark.insert(m.clone(), Mark::Open);
        stack.push(m.clone());
        for n in edges.get(m).into_iter().flatten() {
            match mark.get(n).copied().unwrap_or(Mark::New) {
                Mark::Open => {
                    let at = stack.iter().position(|s| s == n).unwrap_or(0);
                    let mut c = stack[at..].to_vec();
                    c.push(n.clone());
                    return Some(c);
                }
                Mark::New => {
                    if let Some(c) = visit(n, edges, mark, stack) {
                        return Some(c);
                    }
                }
                Mark::Done => {}
            }
        }
        stack.pop();
        mark.insert(m.clone(), Mark::Done);
        None
    }
    let mut mark = BTreeMap::new();
    for m in edges.keys() {
        if mark.get(m).copied().unwrap_or(Mark::New) == Mark::New {
            if let Some(c) = visit(m, edges, &mut mark, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_modules_of_sim_use_each_other_one_way() {
    let edges = graph(&src());
    if let Some(c) = circle(&edges) {
        panic!(
            "the modules of crates/sim/src use each other in a circle: {}",
            c.iter().map(name).collect::<Vec<_>>().join(" -> ")
        );
    }
}

#[test]
fn the_graph_sees_the_imports() {
    let edges = graph(&src());
    let m = |s: &str| s.split("::").filter(|p| !p.is_empty()).map(str::to_owned).collect::<Module>();
    let uses = |a: &str, b: &str| edges.get(&m(a)).is_some_and(|e| e.contains(&m(b)));
    // Imports the sim crate has, in each form the parser reads.
    assert!(uses("engine", "device"), "use crate::device::{{...}}");
    assert!(uses("engine::per_die", "source"), "a submodule's use crate::");
    assert!(uses("host::cache::tier", "host::ssc"), "a nested module's");
    assert!(uses("simulation", "report"), "use crate::report::{{finish, report}}");
    assert!(uses("", "simulation") && uses("host", "host::cache"), "the root's and a module's own");
    assert!(!uses("engine::per_die", "engine"), "an ancestor is not an edge");
    assert!(!uses("merge", ""), "test modules do not count");
}

#[test]
fn a_circle_is_found() {
    let m = |s: &str| s.split("::").filter(|p| !p.is_empty()).map(str::to_owned).collect::<Module>();
    // The crate's graph with one import added against the layers: metrics
    // using the engine, which uses metrics.
    let mut edges = graph(&src());
    assert!(circle(&edges).is_none());
    edges.entry(m("metrics")).or_default().insert(m("engine"));
    let c = circle(&edges).expect("a circle");
    assert!(c.contains(&m("metrics")) && c.contains(&m("engine")), "{c:?}");
    // An import of the root's re-export is a circle through lib.rs.
    let mut edges = graph(&src());
    edges.entry(m("device")).or_default().insert(Vec::new());
    assert!(circle(&edges).is_some());
    // And the parser: `use crate::{SimError, engine::Engine};` in a module.
    let top: BTreeSet<String> = ["engine".to_owned()].into();
    let p = paths("use crate::{SimError, engine::{Engine, Progress}};\nfn f() { crate::engine::x(); }\n", false, &top);
    assert_eq!(p.len(), 4, "{p:?}");
    assert_eq!(p[0], ["crate", "SimError"]);
}
