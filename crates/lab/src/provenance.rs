//! How a JSON report was made (`provenance`): the effective configuration, as
//! TOML (enough to run it again: `ftlab rerun`), the command, ftlab's version
//! and git revision; with `--stamp`, also when, where and how long
//! (`provenance.stamp`), which differs between runs of the same configuration,
//! so it is asked for: without it, the same configuration and seed give the
//! same output bit for bit.

use std::time::{Duration, Instant, SystemTime};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use ftlab_sim::{Report, RunConfig};

/// The git revision ftlab was built from (empty outside a git checkout).
pub const GIT_REVISION: &str = env!("FTLAB_GIT_REVISION");

/// The `provenance` object of a JSON report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Provenance {
    /// `run`, `compare`, `mqsim` or `sweep` (`run` for Python's `ftlab.run`,
    /// `sweep` for each row of `ftlab sweep` and Python's `ftlab.sweep`).
    #[schemars(extend("x-unit" = "text"))]
    pub command: String,
    /// ftlab's version.
    #[schemars(extend("x-unit" = "text"))]
    pub ftlab: String,
    /// The git commit ftlab was built from; null when built outside a git
    /// checkout.
    #[schemars(extend("x-unit" = "text"))]
    pub git_revision: Option<String>,
    /// The effective configuration, as `ftlab run --print-config` prints it
    /// (flags and `--set` applied; a comparison's reports each carry their
    /// FTL's, with the shared `host.logical_pages`).
    #[schemars(extend("x-unit" = "TOML text"))]
    pub config: String,
    /// The folder the run started in, only when the configuration names a
    /// trace by a relative path (relative to it; `ftlab rerun` runs there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-unit" = "path"))]
    pub cwd: Option<String>,
    /// With `--stamp` only: when, where and how long. These differ from run
    /// to run; `ftlab rerun` sets them aside.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamp: Option<Stamp>,
}

/// When, where and how long a run took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Stamp {
    /// When the run started, RFC 3339 UTC.
    #[schemars(extend("x-unit" = "date"))]
    pub date: String,
    /// The machine's host name.
    #[schemars(extend("x-unit" = "name"))]
    pub host: String,
    /// Wall-clock seconds the command took to run its simulations.
    #[schemars(extend("x-unit" = "s"))]
    pub wall_s: f64,
    /// CPU seconds the process spent on them (user and system, every thread;
    /// runs side by side add up).
    #[schemars(extend("x-unit" = "s"))]
    pub cpu_s: f64,
    /// Cores the machine offers.
    #[schemars(extend("x-unit" = "cores"))]
    pub cores: usize,
}

/// The configuration as TOML text.
pub fn config_text(config: &RunConfig) -> Result<String, toml::ser::Error> {
    let mut text = toml::to_string_pretty(config)?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// A clock started before the runs, for `--stamp`.
#[derive(Debug)]
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
pub fn relative_trace(config: &RunConfig) -> bool {
    std::iter::once(&config.workload.trace)
        .chain(config.flows.iter().map(|f| &f.workload.trace))
        .any(|t| t.as_ref().is_some_and(|p| p.is_relative()))
}

/// The provenance of a report of `command` that ran `config`.
pub fn of(command: &str, config: &RunConfig, stamp: Option<&Stamp>) -> Result<Provenance, toml::ser::Error> {
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
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(
    title = "ftlab report",
    description = "The JSON report of one ftlab run (`ftlab run -f json`; each element of `compare -f json`, each \
                   scenario of `mqsim -f json`)."
)]
pub struct WithProvenance<'a> {
    #[serde(flatten)]
    pub report: &'a Report,
    /// How the report was made: enough to run it again (`ftlab rerun`).
    pub provenance: Provenance,
}

/// The JSON Schema (draft 2020-12) of a JSON report, from the Rust types:
/// each field's type, whether it may be absent or null, its meaning (the doc
/// comment) and its unit (`x-unit`).
pub fn report_schema() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().for_serialize().into_generator();
    let mut schema =
        serde_json::to_value(generator.into_root_schema_for::<WithProvenance<'static>>()).expect("a schema is JSON");
    plain_descriptions(&mut schema);
    schema
}

/// Descriptions as a reader of the schema wants them: the doc comments'
/// lines joined into paragraphs, and rustdoc's links (``[`x`]``) as plain
/// code (`` `x` ``).
fn plain_descriptions(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match v {
                    serde_json::Value::String(text) if key == "description" => *text = plain(text),
                    _ => plain_descriptions(v),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(plain_descriptions),
        _ => {}
    }
}

fn plain(text: &str) -> String {
    let paragraphs: Vec<String> =
        text.split("\n\n").map(|p| p.split('\n').map(str::trim).collect::<Vec<_>>().join(" ")).collect();
    let mut out = paragraphs.join("\n\n");
    // [`path`] not followed by a markdown link target: rustdoc's link.
    let mut from = 0;
    while let Some(i) = out[from..].find("[`").map(|i| i + from) {
        let Some(j) = out[i + 2..].find("`]").map(|j| j + i + 2) else { break };
        if out[j + 2..].starts_with('(') {
            from = j + 2;
            continue;
        }
        let code = out[i + 1..j + 1].to_string();
        out.replace_range(i..j + 2, &code);
        from = i + code.len();
    }
    out
}
