//! The library's error type.
//!
//! Each variant's message already includes its cause, so none is exposed as a
//! `source`: printing it with `{e:#}` shows every part exactly once.

use std::path::PathBuf;

use ftlab_sim::SimError;

/// Everything loading, overlaying, sweeping or flattening can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LabError {
    /// A config or sweep file could not be read.
    #[error("cannot read {}: {error}", path.display())]
    Read { path: PathBuf, error: std::io::Error },
    /// A bad config key, value or sweep file: the message names the file, the key
    /// path and the fix. Nothing was run.
    #[error("{0}")]
    Config(String),
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
    /// A simulation failed.
    #[error("{0}")]
    Run(SimError),
}

impl From<SimError> for LabError {
    fn from(e: SimError) -> Self {
        LabError::Run(e)
    }
}
