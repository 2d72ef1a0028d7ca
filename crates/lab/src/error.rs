//! The library's error type.
//!
//! Each variant's message already includes its cause, so none is exposed as a
//! `source`: printing it with `{e:#}` shows every part exactly once.

use std::path::PathBuf;

use ftlab_sim::{ConfigError, SimError};

/// Everything loading, overlaying, sweeping or flattening can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LabError {
    /// A config or sweep file could not be read.
    #[error("cannot read {}: {error}", path.display())]
    Read { path: PathBuf, error: std::io::Error },
    /// A bad config key, value or sweep file: `key` is the key path of the bad
    /// setting (`ftl.gc_free_blocks`, a sweep file's `grid`, `plot`, `case`,
    /// `table` or `base`, a `--set` argument's key); the message names the
    /// file, the key path and the fix. Nothing was run. The key is empty only
    /// where none can be named (text that is not TOML at all).
    #[error("{0}")]
    Config(ConfigError),
    /// The worker threads of a sweep could not be started.
    #[error("cannot start {jobs} worker threads: {error}")]
    Threads { jobs: usize, error: String },
    /// A report could not be serialized to its columns.
    #[error("cannot serialize the report: {0}")]
    Serialize(serde_json::Error),
    /// An MQSim configuration file (`ftlab mqsim`) that cannot be imported:
    /// `file` (with `:line` where known), the element, the problem and the fix.
    #[error("{}: {element}: {problem}", file.display())]
    Mqsim { file: PathBuf, element: String, problem: String },
    /// A figure could not be drawn or written to `path`.
    #[error("cannot write the figure {}: {problem}", path.display())]
    Figure { path: PathBuf, problem: String },
    /// A simulation failed.
    #[error("{0}")]
    Run(SimError),
}

impl LabError {
    /// A configuration error for `key` with `problem` ([`ConfigError`]).
    pub fn config(key: impl Into<String>, problem: impl Into<String>) -> Self {
        LabError::Config(ConfigError::new(key, problem))
    }

    /// The key path of a configuration error (its own, or the run's when a
    /// run refused its configuration before time zero), if it names one.
    pub fn key(&self) -> Option<&str> {
        match self {
            LabError::Config(c) | LabError::Run(SimError::Config(c)) if !c.key.is_empty() => Some(&c.key),
            _ => None,
        }
    }
}

impl From<SimError> for LabError {
    fn from(e: SimError) -> Self {
        LabError::Run(e)
    }
}
