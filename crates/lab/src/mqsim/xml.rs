//! Reading MQSim's XML parameter sets: an element's children by name, each
//! read at most once, typed, with errors naming the file, the line and the
//! element; children nobody read are reported, never dropped.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::LabError;

/// `text` with the malformed closing tags MQSim's own files have
/// (`true</<Generated_Aligned_Addresses>` in fast18/data-cache-contention)
/// read as MQSim's parser reads them (it does not check closing tags), each
/// one noted in `out`.
pub(super) fn lenient<'t>(path: &Path, text: &'t str, out: &mut Vec<String>) -> std::borrow::Cow<'t, str> {
    if !text.contains("</<") {
        return text.into();
    }
    for (n, line) in text.lines().enumerate().filter(|(_, l)| l.contains("</<")) {
        out.push(format!(
            "{}:{}: malformed closing tag `{}` read as MQSim reads it (its parser does not check closing tags)",
            path.display(),
            n + 1,
            line.trim()
        ));
    }
    text.replace("</<", "</").into()
}

/// The text of an MQSim XML file, parsed.
pub(super) fn parse<'i>(path: &Path, text: &'i str) -> Result<roxmltree::Document<'i>, LabError> {
    // One of MQSim's own files (fast18/backend-contention/workload-backend-
    // contention-flow-1.xml at 7ec40e3) was committed mid-merge.
    if let Some(line) = text.lines().position(|l| l.starts_with("<<<<<<<") || l.starts_with(">>>>>>>")) {
        return Err(LabError::Mqsim {
            file: PathBuf::from(format!("{}:{}", path.display(), line + 1)),
            element: "the document".into(),
            problem: "contains git merge-conflict markers (<<<<<<< ... >>>>>>>): keep one side of each conflict \
                      and delete the markers"
                .into(),
        });
    }
    roxmltree::Document::parse(text).map_err(|e| LabError::Mqsim {
        file: path.to_path_buf(),
        element: "the document".into(),
        problem: format!("not well-formed XML ({e}); is this an MQSim file?"),
    })
}

/// One parameter-set element of a file.
pub(super) struct Section<'a, 'i> {
    file: &'a Path,
    /// Where it is, for messages: `Device_Parameter_Set` or `IO_Scenario 2 /
    /// IO_Flow_Parameter_Set_Synthetic 1`.
    pub(super) path: String,
    node: roxmltree::Node<'a, 'i>,
    read: BTreeSet<String>,
}

impl<'a, 'i> Section<'a, 'i> {
    pub(super) fn new(file: &'a Path, path: String, node: roxmltree::Node<'a, 'i>) -> Self {
        Section { file, path, node, read: BTreeSet::new() }
    }

    /// An error about child `name` (empty: the section itself).
    pub(super) fn error(&self, name: &str, problem: impl Into<String>) -> LabError {
        let at = self.child_node(name).unwrap_or(self.node);
        let line = at.document().text_pos_at(at.range().start).row;
        let element = if name.is_empty() { self.path.clone() } else { format!("{} / {name}", self.path) };
        LabError::Mqsim {
            file: PathBuf::from(format!("{}:{line}", self.file.display())),
            element,
            problem: problem.into(),
        }
    }

    fn child_node(&self, name: &str) -> Option<roxmltree::Node<'a, 'i>> {
        self.node.children().find(|c| c.is_element() && c.tag_name().name() == name)
    }

    /// The trimmed text of child `name`, if present (marked read).
    pub(super) fn text(&mut self, name: &str) -> Option<String> {
        let node = self.child_node(name)?;
        self.read.insert(name.to_string());
        Some(node.text().unwrap_or("").trim().to_string())
    }

    /// Child `name` parsed as `T` (MQSim's default when absent).
    pub(super) fn value<T: FromStr>(&mut self, name: &str, default: T) -> Result<T, LabError> {
        match self.text(name) {
            None => Ok(default),
            Some(t) => t.parse().map_err(|_| {
                self.error(name, format!("`{t}` is not a valid {}; give a number", std::any::type_name::<T>()))
            }),
        }
    }

    /// Child `name` as `true`/`false` (any case).
    pub(super) fn flag(&mut self, name: &str, default: bool) -> Result<bool, LabError> {
        match self.text(name) {
            None => Ok(default),
            Some(t) => match t.to_ascii_lowercase().as_str() {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(self.error(name, format!("`{t}` is not a boolean; give true or false"))),
            },
        }
    }

    /// Child `name` as one of `allowed` (compared in upper case, as MQSim does).
    pub(super) fn choice(&mut self, name: &str, default: &str, allowed: &[&str]) -> Result<String, LabError> {
        match self.text(name) {
            None => Ok(default.to_string()),
            Some(t) => {
                let up = t.to_ascii_uppercase();
                if allowed.contains(&up.as_str()) {
                    Ok(up)
                } else {
                    Err(self.error(name, format!("unknown value `{t}`; MQSim takes one of {}", allowed.join(", "))))
                }
            }
        }
    }

    /// The child element `name` as a section of its own (marked read).
    pub(super) fn section(&mut self, name: &str) -> Option<Section<'a, 'i>> {
        let node = self.child_node(name)?;
        self.read.insert(name.to_string());
        Some(Section::new(self.file, format!("{} / {name}", self.path), node))
    }

    /// Children no one read: not MQSim settings (MQSim skips them too).
    pub(super) fn unread(&self, out: &mut Vec<String>) {
        for c in self.node.children().filter(|c| c.is_element()) {
            let name = c.tag_name().name();
            if !self.read.contains(name) {
                out.push(format!(
                    "{} / {name}: not a setting MQSim reads here (MQSim skips it too); ignored",
                    self.path
                ));
            }
        }
    }
}
