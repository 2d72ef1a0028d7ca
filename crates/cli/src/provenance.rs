//! How a JSON report was made: [`ftlab_lab::provenance`] (shared with the
//! Python package), with the CLI's errors.

pub use ftlab_lab::provenance::{report_schema, Clock, Provenance, WithProvenance, GIT_REVISION};

use ftlab_sim::RunConfig;

use crate::error::CliError;

/// The provenance of a report of `command` that ran `config`.
pub fn of(
    command: &str,
    config: &RunConfig,
    stamp: Option<&ftlab_lab::provenance::Stamp>,
) -> Result<Provenance, CliError> {
    ftlab_lab::provenance::of(command, config, stamp)
        .map_err(|e| CliError::Failed(format!("cannot print the configuration: {e}")))
}
