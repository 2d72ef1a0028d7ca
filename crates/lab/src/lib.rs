//! ftlab's run library: what every front end (the `ftlab` command, a block-device
//! server, the Python package) shares to turn files and overrides into runs and
//! runs into rows.
//!
//! - [`overlay`]: a run configuration read as a TOML table, dotted keys set on it
//!   (`--set KEY=VALUE`), deserialized into an [`ftlab_sim::RunConfig`];
//! - [`sweep`]: sweep files (`[base]`, `[[case]]`, `[grid]`, `[[plot]]`), their grid points
//!   validated before anything runs, run in parallel with each row streamed to the
//!   caller;
//! - [`sweep_out`]: a sweep's `[[table]]` files and line plots, over runs or
//!   over the elements of a report array ([`each`]: tasks, the throughput time
//!   series, the RBER CDF);
//! - [`host_admit`]: an admission test the host applies before a run (a sweep
//!   case's `admit`), for FTLs without admission control of their own;
//! - [`flatten`]: a report's scalar fields as named columns (`read_us.p99`), the
//!   CSV and JSON-lines output;
//! - [`bounds`]: a chip's design-time bounds, as the papers give them and as
//!   its real-time FTLs run, and the device Telomere's admission tests see;
//! - [`html`]: self-contained HTML reports of a run or a sweep (inline SVG);
//! - [`janus`]: what Janus-FTL's figures need beyond a sweep: the ends of a
//!   phased workload's phases, the measured utilization of GC victims.
//!
//! ```
//! use ftlab_lab::{flatten, overlay, LabError};
//!
//! let mut table = overlay::load_table_text(
//!     r#"
//!     seed = 7
//!     [device]
//!     chip = "small-slc"
//!     blocks_per_plane = 64
//!     [workload.generator]
//!     kind = "uniform"
//!     requests = 2000
//!     "#,
//!     "example",
//! )?;
//! let (key, value) = overlay::parse_assignment("ftl.kind=pagemap")?;
//! overlay::set_path(&mut table, &key, value)?;
//! let config = overlay::to_config(table, "example")?;
//! let report = ftlab_sim::run(&config, &mut |_| {})?;
//! let columns = flatten::report_scalars(&report)?;
//! let ftl = columns.iter().find(|(name, _)| name == "ftl").map(|(_, cell)| cell.to_string());
//! assert_eq!(ftl.as_deref(), Some("pagemap"));
//! assert!(columns.iter().any(|(name, _)| name == "read_us.p99"));
//! # Ok::<(), LabError>(())
//! ```

pub mod bounds;
pub mod each;
mod error;
pub mod fields;
pub mod figure;
pub mod flatten;
pub mod host_admit;
pub mod html;
pub mod janus;
pub mod mqsim;
pub mod overlay;
pub mod provenance;
pub mod sweep;
pub mod sweep_out;
pub mod sweep_plot;

pub use error::LabError;
