//! ftlab's simulator: replays traces, generated workloads and periodic real-time
//! task sets through any FTL and reports what researchers publish.
//!
//! Several host flows, each with its own workload, queue and priority, can
//! share one device, with each flow's slowdown against its run alone
//! ([`flows`], `[[flow]]` tables).
//!
//! Host-side models sit above the device ([`host`]): a disk, cache managers
//! that put a flash cache in front of it (over a plain SSD or over the
//! solid-state cache's commands), and FlashTier's evaluation driving them with
//! filebench-like personalities.
//!
//! The modules in layers, each using only those before it (a test,
//! `tests/module_graph.rs`, refuses a circle):
//!
//! - [`energy`], [`host_link`]: energy per operation, the host link's timing;
//! - [`metrics`]: histograms, counters and the [`Report`];
//! - [`error`]: the error of a run, [`SimError`];
//! - [`config`]: the run configuration ([`RunConfig`]) and its parts' checks;
//! - [`source`], [`merge`]: a workload's requests, merged by the host;
//! - [`device`]: the [`device::Device`], one host command at a time;
//! - [`engine`]: the host queue and dispatch ([`Engine`]);
//! - [`flows`]: several host flows on one device;
//! - [`setup`]: a configuration validated as a whole, the FTL built;
//! - [`report`]: a run's report assembled;
//! - [`simulation`]: a run in its phases ([`Simulation`]) and [`run`];
//! - [`image`]: device images;
//! - [`host`]: FlashTier's host side over the device.
//!
//! ```
//! use ftlab_sim::{run, RunConfig};
//!
//! let mut config = RunConfig::from_toml(
//!     r#"
//!     seed = 7
//!     [device]
//!     chip = "small-slc"
//!     blocks_per_plane = 64
//!     [ftl]
//!     kind = "pagemap"
//!     over_provisioning = 0.1
//!     [workload.generator]
//!     kind = "uniform"
//!     requests = 20000
//!     "#,
//!     "example",
//! )
//! .unwrap();
//! let report = run(&config, &mut |_| {}).unwrap();
//! assert_eq!(report.integrity, "ok");
//! assert!(report.waf.unwrap() >= 1.0);
//! ```

pub mod config;
pub mod device;
pub mod energy;
pub mod engine;
pub mod error;
pub mod flows;
pub mod host;
pub mod host_link;
pub mod image;
pub mod interrupt;
mod latency_log;
pub mod merge;
pub mod metrics;
pub mod placement;
pub mod report;
pub mod setup;
pub mod simulation;
pub mod source;

pub use config::{RunConfig, Source};
pub use engine::{Engine, Progress};
pub use error::SimError;
pub use ftlab_ftl::ConfigError;
pub use image::ImageError;
pub use metrics::{Integrity, Report};
pub use setup::validate;
pub use simulation::{run, run_timed, AloneCost, Simulation};
