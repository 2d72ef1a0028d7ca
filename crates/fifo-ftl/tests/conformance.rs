//! The FIFO-cleaning FTL, defined in this crate, passes ftlab's conformance
//! suite exactly as the schemes of `ftlab-ftl` do: one line.
#![allow(clippy::unwrap_used)]

use ftlab_fifo_ftl::FifoConfig;
use ftlab_ftl::conformance;

conformance!(fifo, FifoConfig::default());
conformance!(fifo_tight, FifoConfig { over_provisioning: 0.07 });
