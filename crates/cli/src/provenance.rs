//! How a JSON report was made (`provenance`): the effective configuration, as
//! TOML (enough to run it again: `ftlab rerun`), the command, ftlab's version
//! and git revision; with `--stamp`, also when, where and how long
//! (`provenance.stamp`), which differs between runs of the same configuration,
//! so it is asked for: without it, the same configuration and seed give the
//! same output bit for bit.

use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};

use ftlab_sim::{Report, RunConfig};

use crate::error::CliError;

/// The git revision ftlab was built from (empty outside a git checkout).
pub const GIT_REVISION: &str = env!("FTLAB_GIT_REVISION");

/// The `provenance` object of a JSON report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// `run` or `compare`.
    pub command: String,
    /// ftlab's version.
    pub ftlab: String,
    /// The git commit ftlab was built from; null when built outside a git
    /// checkout.
    pub git_revision: Option<String>,
    /// The effective configuration, as `ftlab run --print-config` prints it.
    pub config: String,
    /// The folder the run started in, when the configuration names a trace
    /// by a relative path (it is relative to that folder; `ftlab rerun` runs
    /// there). Left out otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// When, where and how long (with `--stamp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamp: Option<Stamp>,
}

/// When, where and how long a run took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stamp {
    /// When the run started, RFC 3339 UTC.
    pub date: String,
    /// The machine's host name.
    pub host: String,
    /// Wall-clock seconds the command took to run its simulations.
    pub wall_s: f64,
    /// CPU seconds the process spent on them (user and system, every thread;
    /// runs side by side add up).
    pub cpu_s: f64,
    /// Cores the machine offers.
    pub cores: usize,
}

/// The configuration as TOML text.
pub fn config_text(config: &RunConfig) -> Result<String, CliError> {
    let mut text =
        toml::to_string_pretty(config).map_err(|e| CliError::Failed(format!("cannot print the configuration: {e}")))?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// A clock started before the runs, for `--stamp`.
pub struct Clock {
    date: SystemTime,
    wall: Instant,
    cpu: Option<Duration>,
}

impl Clock {
    pub fn start() -> Clock {
        Clock { date: SystemTime::now(), wall: Instant::now(), cpu: cpu_time() }
    }

    /// The stamp of the runs since [`Clock::start`].
    pub fn stamp(&self) -> Stamp {
        let date = time::OffsetDateTime::from(self.date)
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let cpu = cpu_time().zip(self.cpu).map_or(0.0, |(now, then)| now.saturating_sub(then).as_secs_f64());
        Stamp {
            date,
            host: host_name(),
            wall_s: self.wall.elapsed().as_secs_f64(),
            cpu_s: cpu,
            cores: std::thread::available_parallelism().map_or(1, |c| c.get()),
        }
    }
}

/// The process's user and system CPU time so far.
#[cfg(unix)]
fn cpu_time() -> Option<Duration> {
    use nix::sys::resource::{getrusage, UsageWho};
    let u = getrusage(UsageWho::RUSAGE_SELF).ok()?;
    let d = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(t.tv_sec().max(0) as u64) + Duration::from_micros(t.tv_usec().max(0) as u64)
    };
    Some(d(u.user_time()) + d(u.system_time()))
}

#[cfg(not(unix))]
fn cpu_time() -> Option<Duration> {
    None
}

#[cfg(unix)]
fn host_name() -> String {
    nix::unistd::gethostname().map(|h| h.to_string_lossy().into_owned()).unwrap_or_default()
}

#[cfg(not(unix))]
fn host_name() -> String {
    std::env::var("COMPUTERNAME").unwrap_or_default()
}

/// Whether `config` names a trace by a relative path.
fn relative_trace(config: &RunConfig) -> bool {
    std::iter::once(&config.workload.trace)
        .chain(config.flows.iter().map(|f| &f.workload.trace))
        .any(|t| t.as_ref().is_some_and(|p| p.is_relative()))
}

/// The provenance of a report of `command` that ran `config`.
pub fn of(command: &str, config: &RunConfig, stamp: Option<&Stamp>) -> Result<Provenance, CliError> {
    Ok(Provenance {
        command: command.to_owned(),
        ftlab: env!("CARGO_PKG_VERSION").to_owned(),
        git_revision: (!GIT_REVISION.is_empty()).then(|| GIT_REVISION.to_owned()),
        config: config_text(config)?,
        cwd: relative_trace(config).then(|| std::env::current_dir().ok().map(|d| d.display().to_string())).flatten(),
        stamp: stamp.cloned(),
    })
}

/// A report with its provenance, as JSON writes it: the report's fields, then
/// `provenance`.
#[derive(Serialize)]
pub struct WithProvenance<'a> {
    #[serde(flatten)]
    pub report: &'a Report,
    pub provenance: Provenance,
}
