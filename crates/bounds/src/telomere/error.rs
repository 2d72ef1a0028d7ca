//! [`TelomereError`]: why a task set or device cannot be admitted against.

use crate::error::BoundsError;

/// Why a Telomere admission cannot be computed (a refused task is not an error: it is
/// a verdict in [`Admission`](super::Admission)). Every message names the input and
/// what to change.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TelomereError {
    /// A task field is missing, out of range or inconsistent.
    #[error("task `{task}`: {field} {reason}")]
    InvalidTask {
        /// The task's name (or `#N`, its position, when it has none).
        task: String,
        /// The field, by its TOML key.
        field: &'static str,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// The task set file is not valid TOML or has unknown keys.
    #[error("task set{origin}: {message}")]
    Parse {
        /// ` FILE` when known, else empty.
        origin: String,
        /// The TOML parser's message (it names the line).
        message: String,
    },
    /// The task set has no task.
    #[error("the task set has no [[task]] table: add at least one task")]
    NoTasks,
    /// Two tasks share a name.
    #[error("two tasks are named `{0}`: give every task a distinct name")]
    DuplicateName(String),
    /// A device parameter is out of range.
    #[error("device `{device}`: {field} {reason}")]
    InvalidDevice {
        /// The device's name.
        device: String,
        /// The parameter.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A generator parameter is out of range.
    #[error("generator: {0}")]
    InvalidGenerator(String),
    /// Table 2 of 000 has no MultiLog-Oracle WAF for this over-provisioning.
    #[error(
        "MultiLog-Oracle's WAF is known only for over-provisioning alpha >= 0.10 (Table 2 of \
         the Telomere paper); the device has alpha = {over_provisioning}: raise the over-provisioning or give \
         the WAF explicitly"
    )]
    NoMultiLogWaf {
        /// The device's `1 - lambda`.
        over_provisioning: f64,
    },
    /// A bound of another scheme (WAO-GC's lambda from Lazy-RTGC) does not exist.
    #[error("{0}")]
    Bounds(#[from] BoundsError),
}

/// Shorthand for an [`TelomereError::InvalidTask`].
pub(crate) fn task_err(task: &str, field: &'static str, reason: impl Into<String>) -> TelomereError {
    TelomereError::InvalidTask { task: task.to_owned(), field, reason: reason.into() }
}
