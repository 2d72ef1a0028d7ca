//! The binary's error type and its exit codes.
//!
//! Each variant's message already includes its cause, so none is exposed as a
//! `source`: `error: {e:#}` prints every part exactly once.

use std::path::PathBuf;

use ftlab_lab::LabError;
use ftlab_sim::SimError;
use ftlab_workload::TraceError;

/// Everything `ftlab` can fail with. `main` prints it as one line and exits with
/// [`CliError::exit_code`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// A bad flag value, config key or sweep file: nothing was run.
    #[error("{0}")]
    Usage(String),
    /// A file given on the command line could not be read.
    #[error("cannot read {}: {error}", path.display())]
    Read { path: PathBuf, error: std::io::Error },
    /// Output could not be written.
    #[error("cannot write {what}: {error}")]
    Write { what: String, error: std::io::Error },
    /// A simulation failed (configuration errors it finds count as usage errors).
    #[error("{context}{error}")]
    Sim { context: String, error: SimError },
    /// A trace could not be read.
    #[error("{0}")]
    Trace(TraceError),
    /// Runs finished but some failed their integrity check or stopped with an error;
    /// their reports were written.
    #[error("{0}")]
    Failed(String),
    /// Ctrl-C stopped the runs; what they measured was written (exit 130).
    #[error("{0}")]
    Interrupted(String),
}

impl From<TraceError> for CliError {
    fn from(e: TraceError) -> Self {
        CliError::Trace(e)
    }
}

/// The library's errors as the command's: bad files and keys are usage errors
/// (exit 2), with the same messages.
impl From<LabError> for CliError {
    fn from(e: LabError) -> Self {
        match e {
            LabError::Read { path, error } => CliError::Read { path, error },
            e @ LabError::Config(_) => CliError::Usage(e.to_string()),
            e @ (LabError::Threads { .. } | LabError::Mqsim { .. }) => CliError::Usage(e.to_string()),
            LabError::Run(error) => CliError::sim("", error),
            e => CliError::Failed(e.to_string()),
        }
    }
}

/// The server's errors: bad addresses, exports and TLS credentials are usage
/// errors (exit 2).
impl From<ftlab_server::ServerError> for CliError {
    fn from(e: ftlab_server::ServerError) -> Self {
        match e {
            e @ (ftlab_server::ServerError::BadListen(_)
            | ftlab_server::ServerError::Exports(_)
            | ftlab_server::ServerError::Tls(_)) => CliError::Usage(e.to_string()),
            e => CliError::Failed(e.to_string()),
        }
    }
}

impl CliError {
    /// 2 for usage and configuration errors, 1 for failed runs.
    pub fn exit_code(&self) -> u8 {
        match self {
            // Stopped by Ctrl-C (the shell's code for SIGINT): the partial
            // report was written.
            CliError::Sim { error: SimError::Interrupted { .. }, .. } | CliError::Interrupted(_) => 130,
            CliError::Sim { error: SimError::Stopped { error, .. }, .. }
                if matches!(**error, SimError::Interrupted { .. }) =>
            {
                130
            }
            CliError::Usage(_) | CliError::Read { .. } => 2,
            CliError::Sim { error: SimError::Config(_), .. } => 2,
            CliError::Trace(TraceError::UnknownFormat { .. }) => 2,
            // A trace that cannot be opened is a bad input, like any other file.
            CliError::Trace(e) | CliError::Sim { error: SimError::Trace(e), .. } if missing(e) => 2,
            _ => 1,
        }
    }

    /// A simulation error, with `context` (e.g. `"pagemap: "`) before its message.
    pub fn sim(context: impl Into<String>, error: SimError) -> Self {
        CliError::Sim { context: context.into(), error }
    }

    /// Whether this is only a closed pipe on stdout (`ftlab ... | head`).
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, CliError::Write { error, .. } if error.kind() == std::io::ErrorKind::BrokenPipe)
    }
}

/// Whether `e` is a trace file that is not there or may not be read.
fn missing(e: &TraceError) -> bool {
    use std::io::ErrorKind::{IsADirectory, NotFound, PermissionDenied};
    matches!(e, TraceError::Io { source, .. } if matches!(source.kind(), NotFound | PermissionDenied | IsADirectory))
}

/// Maps an output error to [`CliError::Write`] naming `what`.
pub fn write_err(what: &str) -> impl FnOnce(std::io::Error) -> CliError + '_ {
    move |error| CliError::Write { what: what.to_string(), error }
}
