#![allow(clippy::unwrap_used)]
//! The conformance suite for FSR (001's comparison scheme, a page-map configuration).

use ftlab_ftl::conformance;

use ftlab_ftl::schemes::realtime::fsr::FsrConfig;

conformance!(fsr, FsrConfig::default());
conformance!(fsr_tight, FsrConfig { sigma: 0.9 });
