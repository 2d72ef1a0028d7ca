//! The error of a run ([`SimError`]): a configuration refused before time
//! zero, a trace, a time or a workload that cannot run, the flash or the FTL
//! failing a command, or a run stopped with the report of what it did.

use thiserror::Error;

use ftlab_ftl::{ConfigError, ErrorKind, FtlError};
use ftlab_workload::TraceError;

use crate::metrics::Report;

/// Errors of a run.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SimError {
    /// A configuration that cannot run, found before anything ran: the key
    /// path and the problem ([`ConfigError`]; its `key` is empty when the
    /// config file itself cannot be read or parsed, its message then names the
    /// file and the place).
    #[error("{0}")]
    Config(ConfigError),
    /// Formatting the device for the FTL failed for a reason other than its
    /// configuration (the flash refused an operation).
    #[error("formatting the device for FTL `{ftl}` failed: {source}")]
    Format {
        ftl: String,
        #[source]
        source: FtlError,
    },
    #[error(transparent)]
    Trace(TraceError),
    /// The engine broke one of its own invariants (a defect of ftlab, not of the
    /// input): the run's numbers cannot be trusted.
    #[error("engine invariant broken: {0}")]
    Invariant(String),
    /// A time that does not fit the simulator's 64-bit ns clock; `input` names where
    /// it came from (a trace's file and line, or the request).
    #[error("{input}: {problem}")]
    TimeOverflow { input: String, problem: String },
    /// The workload yielded no request to run.
    #[error("workload {workload} yields no request: {reason}")]
    NoRequests { workload: String, reason: String },
    #[error("{op} of logical page {lpn} (request {request}, at {at_us:.3} us) failed: {source}")]
    Ftl {
        request: u64,
        op: String,
        lpn: u64,
        at_us: f64,
        #[source]
        source: FtlError,
    },
    /// The per-request latency log (`metrics.latency_log`) could not be
    /// created or written.
    #[error(
        "metrics.latency_log: cannot write the latency log {path}: {source} (give a writable file path, or leave the \
         key out for no log)"
    )]
    LatencyLog {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The run was interrupted from outside ([`crate::interrupt`], Ctrl-C)
    /// after `requests` measured requests; the report covers those, and the
    /// final read-back of every page was skipped.
    #[error(
        "interrupted after {requests} measured requests: the report covers those (a partial run; its final \
         integrity read-back was skipped)"
    )]
    Interrupted { requests: u64 },
    /// A run that stopped with `error` after it started, and the report of what it
    /// did until then (its `error` field says why it stopped).
    #[error("{error}")]
    Stopped { error: Box<SimError>, report: Box<Report> },
}

impl From<ConfigError> for SimError {
    fn from(e: ConfigError) -> Self {
        SimError::Config(e)
    }
}

impl SimError {
    /// A configuration error for `key` with `problem` ([`ConfigError`]).
    pub fn config(key: impl Into<String>, problem: impl Into<String>) -> Self {
        SimError::Config(ConfigError::new(key, problem))
    }

    /// The error of building or formatting FTL `kind`: its configuration
    /// errors keep their key, with the FTL named in the message.
    pub fn building(kind: &str, e: FtlError) -> Self {
        match e {
            FtlError::Config(c) => {
                SimError::Config(ConfigError { key: c.key, problem: format!("ftl `{kind}`: {}", c.problem) })
            }
            source => SimError::Format { ftl: kind.to_string(), source },
        }
    }

    /// The kind of failure, for front ends that map it to an errno or an
    /// exception class: a flash or FTL failure keeps the FTL's kind; bad input
    /// (configuration, trace, times) is [`ErrorKind::Invalid`]; a broken engine
    /// invariant is [`ErrorKind::Io`].
    pub fn kind(&self) -> ErrorKind {
        match self {
            SimError::Ftl { source, .. } | SimError::Format { source, .. } => source.kind(),
            SimError::Stopped { error, .. } => error.kind(),
            SimError::Invariant(_) => ErrorKind::Io,
            _ => ErrorKind::Invalid,
        }
    }
}
