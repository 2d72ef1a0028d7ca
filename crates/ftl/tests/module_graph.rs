//! The modules of `crates/ftl/src` use each other one way only: the graph of
//! their `use crate::…` / `use super::…` imports and `crate::…` / `super::…`
//! paths, with each module owning the modules it declares, has no circle.
//!
//! The crate root (`lib.rs`) is the bottom: it defines the `Ftl` trait and the
//! core types every module may use, so no edge points at it (its own `pub use`
//! of modules and of their items are re-exports, not uses). A path through one
//! of the root's re-exports (`crate::Io`, `crate::pagemap::…`) counts as a use
//! of the module it re-exports. A module may use its ancestors' items (a part
//! of `dftl` uses `DftlConfig`). Comments and `#[cfg(test)]` items (test
//! modules, in the file or in files of their own, and test-only functions) do
//! not count; the conformance suite (feature `testing`) does.
//!
//! The layers this keeps, bottom up: the root; the shared units (flash,
//! capability, mapping, alloc, victim, pagecore, scan, blockmap, maplog,
//! hybrid with its recovery `hybrid::replay`, config, layer, buffer,
//! read_buffer, dram) and `entry` (a scheme's registry entry: `Scheme`,
//! `configured`, `PeriodicTask`); the schemes under `schemes/`, each declaring
//! its own entries, one building on another only one way; `registry`, the list
//! of the entries and the lookups over it (it re-exports `entry`'s types, so
//! `ftlab_ftl::registry::Scheme` still names the entry); the conformance
//! suite, which drives every entry through the registry.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module by its path from the crate root (`schemes::page::dftl`); the root
/// is the empty path.
type Module = Vec<String>;

fn name(m: &Module) -> String {
    if m.is_empty() {
        "crate (lib.rs)".to_owned()
    } else {
        m.join("::")
    }
}

fn module(s: &str) -> Module {
    s.split("::").filter(|p| !p.is_empty()).map(str::to_owned).collect()
}

/// Whether a line is an attribute (`#[...]`), which an item may carry before
/// its keyword.
fn attribute(line: &str) -> bool {
    line.trim_start().starts_with("#[")
}

/// The code of a file: comments removed and `#[cfg(test)]` items left out
/// (test code may use anything): an item ending on its line (`mod tests;`) is
/// dropped with it, an item with a body up to its closing brace.
fn code(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(|l| match l.find("//") {
            // `//` inside a string literal is rare in this crate's imports
            // and paths; a line cut there loses no `use`.
            Some(i) => &l[..i],
            None => l,
        })
        .collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() == "#[cfg(test)]" {
            // Skip the attributes after it, then the item.
            i += 1;
            while i < lines.len() && attribute(lines[i]) {
                i += 1;
            }
            let mut depth = 0i64;
            let mut opened = false;
            while i < lines.len() {
                let l = lines[i];
                i += 1;
                for c in l.chars() {
                    match c {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                if (opened && depth <= 0) || (!opened && l.trim_end().ends_with(';')) {
                    break;
                }
            }
            continue;
        }
        out.push_str(lines[i]);
        out.push('\n');
        i += 1;
    }
    out
}

/// The modules a file declares with `mod NAME;` (not inline `mod NAME { … }`,
/// whose code is the file's), each with the file it lives in. `dir` is the
/// directory a child's file is looked for in (a `#[path]` is relative to the
/// declaring file's directory).
fn declared(code: &str, file: &Path, dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut path_attr: Option<String> = None;
    for line in code.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("#[path = \"") {
            path_attr = rest.split('"').next().map(str::to_owned);
            continue;
        }
        if attribute(t) {
            continue;
        }
        let item = t
            .strip_prefix("pub(crate) ")
            .or_else(|| t.strip_prefix("pub(super) "))
            .or_else(|| t.strip_prefix("pub "))
            .unwrap_or(t);
        if let Some(rest) = item.strip_prefix("mod ") {
            if let Some(n) = rest.strip_suffix(';') {
                let n = n.trim().to_owned();
                let f = match path_attr.take() {
                    Some(p) => file.parent().expect("a directory").join(p),
                    None if dir.join(format!("{n}.rs")).exists() => dir.join(format!("{n}.rs")),
                    None => dir.join(&n).join("mod.rs"),
                };
                out.push((n, f));
            }
        }
        path_attr = None;
    }
    out
}

/// Every module of the crate, from the root's declarations down, with its
/// code.
fn modules(src: &Path) -> BTreeMap<Module, String> {
    let mut out = BTreeMap::new();
    let mut todo = vec![(Vec::new(), src.join("lib.rs"), src.to_path_buf())];
    while let Some((m, file, dir)) = todo.pop() {
        let text = code(&std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display())));
        for (n, f) in declared(&text, &file, &dir) {
            let mut c = m.clone();
            c.push(n.clone());
            let d = if f.file_name().is_some_and(|s| s == "mod.rs") {
                f.parent().expect("a directory").to_path_buf()
            } else {
                f.with_extension("")
            };
            todo.push((c, f, d));
        }
        out.insert(m, text);
    }
    out
}

/// The paths a `use` tree names (`crate::{a::B, c}` gives `crate::a::B` and
/// `crate::c`), each as its segments; a renaming `as` names its source.
fn expand(tree: &str) -> Vec<Vec<String>> {
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = Vec::new();
    expand_into(&tree, &mut Vec::new(), &mut out);
    out
}

fn segments(path: &str) -> impl Iterator<Item = String> + '_ {
    path.split("::").map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned)
}

fn expand_into(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree.find('{') {
        None => {
            let path = tree.split(" as ").next().unwrap_or(tree);
            let mut p = prefix.clone();
            p.extend(segments(path));
            out.push(p);
        }
        Some(open) => {
            let head = &tree[..open];
            let inner = &tree[open + 1..tree.rfind('}').expect("a closing brace")];
            let n = prefix.len();
            prefix.extend(segments(head));
            // Split at top-level commas.
            let (mut depth, mut start) = (0, 0);
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        if !inner[start..i].trim().is_empty() {
                            expand_into(&inner[start..i], prefix, out);
                        }
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            if !inner[start..].trim().is_empty() {
                expand_into(&inner[start..], prefix, out);
            }
            prefix.truncate(n);
        }
    }
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

/// Every path in `code` that starts at `crate`, `super` or `self` (from `use`
/// trees and from paths written in the code, `$crate::` in macros too), and
/// `use` paths that start at one of `children` (the module's own).
fn paths(code: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = String::new();
    let mut remaining = code;
    while let Some(i) = find_use(remaining) {
        rest.push_str(&remaining[..i]);
        let after = &remaining[i..];
        let stmt_start = after.find("use ").map_or(0, |k| k + 4);
        let end = after.find(';').unwrap_or(after.len());
        for p in expand(&after[stmt_start..end]) {
            let first = p.first().map(String::as_str).unwrap_or("");
            if matches!(first, "crate" | "super" | "self") || children.contains(first) {
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
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_' || bytes[at - 1] == b':') {
                continue;
            }
            let path: String =
                rest[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':').collect();
            out.push(segments(&path).collect());
        }
    }
    out
}

/// The root's re-exports: a name at the root (`Io`, `pagemap`) and the path
/// it stands for (`flash::Io`, `schemes::page::pagemap`).
fn reexports(root: &str) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    let mut remaining = root;
    while let Some(i) = find_use(remaining) {
        let after = &remaining[i..];
        let line_end = after.find('\n').unwrap_or(after.len());
        let public = after[..line_end].trim_start().starts_with("pub ");
        let stmt_start = after.find("use ").map_or(0, |k| k + 4);
        let end = after.find(';').unwrap_or(after.len());
        let tree: String = after[stmt_start..end].split_whitespace().collect::<Vec<_>>().join(" ");
        if public {
            let mut flat = Vec::new();
            expand_renamed(&tree, &mut Vec::new(), &mut flat);
            for (alias, path) in flat {
                if path.first().is_some_and(|s| s != "crate" && s != "self" && s != "super") {
                    out.insert(alias, path);
                }
            }
        }
        remaining = &after[(end + 1).min(after.len())..];
    }
    out
}

/// Like [`expand_into`], keeping each path's name (its `as` name or its last
/// segment).
fn expand_renamed(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
    let mut plain = Vec::new();
    expand_into(tree, prefix, &mut plain);
    // Names in the order `expand_into` produced the paths.
    let mut names = Vec::new();
    collect_names(tree, &mut names);
    for (p, n) in plain.into_iter().zip(names) {
        out.push((n.unwrap_or_else(|| p.last().cloned().unwrap_or_default()), p));
    }
}

fn collect_names(tree: &str, out: &mut Vec<Option<String>>) {
    match tree.find('{') {
        None => out.push(tree.split(" as ").nth(1).map(|s| s.trim().to_owned())),
        Some(open) => {
            let inner = &tree[open + 1..tree.rfind('}').expect("a closing brace")];
            let (mut depth, mut start) = (0, 0);
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        if !inner[start..i].trim().is_empty() {
                            collect_names(&inner[start..i], out);
                        }
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            if !inner[start..].trim().is_empty() {
                collect_names(&inner[start..], out);
            }
        }
    }
}

/// The module a path from module `from` names (the longest prefix that is a
/// module; its item's module otherwise), through the root's re-exports.
fn resolve(
    from: &Module,
    path: &[String],
    modules: &BTreeSet<Module>,
    reexported: &BTreeMap<String, Vec<String>>,
) -> Module {
    let mut base: Module = Vec::new();
    let mut segs: Vec<String> = path.to_vec();
    match path.first().map(String::as_str) {
        Some("crate" | "$crate") => {
            segs.remove(0);
        }
        Some("self") => {
            base = from.clone();
            segs.remove(0);
        }
        Some("super") => {
            base = from.clone();
            while segs.first().is_some_and(|s| s == "super") {
                base.pop();
                segs.remove(0);
            }
        }
        _ => base = from.clone(),
    }
    // A name the root re-exports stands for its source.
    if base.is_empty() {
        if let Some(target) = segs.first().and_then(|s| reexported.get(s)) {
            let mut s = target.clone();
            s.extend(segs[1..].iter().cloned());
            segs = s;
        }
    }
    let mut m = base;
    for s in &segs {
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

/// Each module's edges: the modules it declares and those it uses (but the
/// root, itself and its ancestors).
fn graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let texts = modules(src);
    let all: BTreeSet<Module> = texts.keys().cloned().collect();
    let reexported = reexports(&texts[&Vec::new()]);
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for m in &all {
        let e = edges.entry(m.clone()).or_default();
        // A module owns its children.
        for c in all.iter().filter(|c| c.len() == m.len() + 1 && c.starts_with(m)) {
            e.insert(c.clone());
        }
    }
    for (m, text) in &texts {
        if m.is_empty() {
            // The root declares and re-exports; nothing points back at it.
            continue;
        }
        let children: BTreeSet<String> =
            all.iter().filter(|c| c.len() == m.len() + 1 && c.starts_with(m)).map(|c| c[m.len()].clone()).collect();
        for p in paths(text, &children) {
            let to = resolve(m, &p, &all, &reexported);
            let ancestor = to.len() < m.len() && m.starts_with(&to);
            if &to != m && !ancestor {
                edges.entry(m.clone()).or_default().insert(to);
            }
        }
    }
    edges
}

/// The circles of `edges`: each strongly connected component of more than one
/// module (Tarjan), its modules sorted.
fn circles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on: BTreeSet<&'a Module>,
        out: Vec<Vec<Module>>,
    }
    fn visit<'a>(m: &'a Module, s: &mut State<'a>) {
        let i = s.index.len();
        s.index.insert(m, i);
        s.low.insert(m, i);
        s.stack.push(m);
        s.on.insert(m);
        let edges = s.edges;
        for n in edges.get(m).into_iter().flatten() {
            if !s.index.contains_key(n) {
                visit(n, s);
                let l = s.low[n].min(s.low[m]);
                s.low.insert(m, l);
            } else if s.on.contains(n) {
                let l = s.index[n].min(s.low[m]);
                s.low.insert(m, l);
            }
        }
        if s.low[m] == s.index[m] {
            let mut c = Vec::new();
            while let Some(x) = s.stack.pop() {
                s.on.remove(x);
                c.push(x.clone());
                if x == m {
                    break;
                }
            }
            if c.len() > 1 {
                c.sort();
                s.out.push(c);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for m in edges.keys() {
        if !s.index.contains_key(m) {
            visit(m, &mut s);
        }
    }
    s.out.sort();
    s.out
}

/// One circle through `within` (a component of `edges`), as its modules in
/// order: a shortest way back from its first module to itself.
fn one_circle(edges: &BTreeMap<Module, BTreeSet<Module>>, within: &[Module]) -> Vec<Module> {
    let start = &within[0];
    let inside: BTreeSet<&Module> = within.iter().collect();
    let mut prev: BTreeMap<&Module, &Module> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(m) = queue.pop_front() {
        for n in edges.get(m).into_iter().flatten().filter(|n| inside.contains(n)) {
            if n == start {
                let mut path = vec![start.clone()];
                let mut at = m;
                while at != start {
                    path.push(at.clone());
                    at = prev[at];
                }
                path.push(start.clone());
                path.reverse();
                return path;
            }
            if !prev.contains_key(n) {
                prev.insert(n, m);
                queue.push_back(n);
            }
        }
    }
    within.to_vec()
}

fn report(edges: &BTreeMap<Module, BTreeSet<Module>>, found: &[Vec<Module>]) -> String {
    found
        .iter()
        .map(|c| {
            let inside: BTreeSet<&Module> = c.iter().collect();
            let arrows: Vec<String> = c
                .iter()
                .flat_map(|m| {
                    edges[m].iter().filter(|n| inside.contains(n)).map(move |n| format!("{} -> {}", name(m), name(n)))
                })
                .collect();
            format!(
                "\n- {} modules: {}\n  e.g. {}\n  arrows inside: {}",
                c.len(),
                c.iter().map(name).collect::<Vec<_>>().join(", "),
                one_circle(edges, c).iter().map(name).collect::<Vec<_>>().join(" -> "),
                arrows.join("; ")
            )
        })
        .collect()
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_modules_of_ftl_use_each_other_one_way() {
    let edges = graph(&src());
    let found = circles(&edges);
    assert!(found.is_empty(), "the modules of crates/ftl/src use each other in a circle:{}", report(&edges, &found));
}

#[test]
fn the_graph_sees_the_imports() {
    let edges = graph(&src());
    let uses = |a: &str, b: &str| edges.get(&module(a)).is_some_and(|e| e.contains(&module(b)));
    // Imports the ftl crate has, in each form the parser reads.
    assert!(uses("hybrid", "maplog"), "use crate::maplog::{{...}}");
    assert!(uses("schemes::page::dftl::core", "pagecore") || uses("schemes::page::dftl", "flash"), "a nested module's");
    assert!(uses("schemes::block::bast", "hybrid"), "a scheme's use of the hybrid core");
    assert!(uses("buffer", "layer"), "crate::Layer through the root's re-export");
    assert!(uses("flash", "flash::packed"), "a #[path] child");
    assert!(uses("", "schemes") && uses("schemes", "schemes::page"), "the root's and a module's own");
    assert!(!uses("schemes::page::dftl::cmt", "schemes::page::dftl"), "an ancestor is not an edge");
    assert!(edges.values().all(|e| !e.contains(&Vec::new())), "nothing points at the root");
    assert!(!edges.contains_key(&module("schemes::page::multilog::tests")), "test modules do not count");
    assert!(!uses("blockmap", "blockmap::tests"), "nor test files of their own");
    // The layers: entries below the schemes, the list above them.
    assert!(uses("registry", "entry") && uses("registry", "schemes::block::bast"), "the list");
    assert!(uses("schemes::block::bast", "entry") && !uses("schemes::block::bast", "registry"), "an entry");
    assert!(uses("conformance", "registry"), "the suite drives the registry");
    assert!(uses("hybrid::replay", "maplog") && !uses("maplog", "hybrid"), "the map log below the core");
    assert!(uses("schemes::host::ssc::log", "schemes::host::ssc::core"), "the log's code above the cache");
    assert!(!uses("schemes::host::ssc::core", "schemes::host::ssc::log"), "the cache holds only the log's state");
}

#[test]
fn a_circle_is_found() {
    // A synthetic graph: a -> b -> c -> a, and d -> a outside the circle.
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a"), ("e", "e::f")] {
        edges.entry(module(a)).or_default().insert(module(b));
        edges.entry(module(b)).or_default();
    }
    let found = circles(&edges);
    assert_eq!(found, vec![vec![module("a"), module("b"), module("c")]]);
    assert_eq!(one_circle(&edges, &found[0]), ["a", "b", "c", "a"].map(module));
    // The crate's graph with one import added against the layers: the hybrid
    // core using a scheme built on it.
    let mut edges = graph(&src());
    assert!(circles(&edges).is_empty());
    edges.entry(module("hybrid")).or_default().insert(module("schemes::block::bast"));
    let c = circles(&edges);
    assert!(c.iter().any(|c| c.contains(&module("hybrid")) && c.contains(&module("schemes::block::bast"))), "{c:?}");
    // And the parser: `use crate::{FtlError, hybrid::{HybridCore, retrying}};`.
    let p = paths(
        "use crate::{FtlError, hybrid::{HybridCore, retrying}};\nfn f() { crate::maplog::x(); }\n",
        &BTreeSet::new(),
    );
    assert_eq!(p.len(), 4, "{p:?}");
    assert_eq!(p[0], ["crate", "FtlError"]);
    // A test item is left out, up to its closing brace or its `;`.
    let c = code("use crate::a;\n#[cfg(test)]\nmod tests {\n    use crate::b;\n}\n#[cfg(test)]\n#[path = \"t.rs\"]\nmod t;\nuse crate::c;\n");
    assert_eq!(c, "use crate::a;\nuse crate::c;\n");
}
