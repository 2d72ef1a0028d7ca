//! The conformance suite for NFTL (002 Section II), on the suite's device and on a
//! one-die device with larger blocks.
#![allow(clippy::unwrap_used)]

use ftlab_ftl::conformance;

use ftlab_ftl::schemes::block::nftl::NftlConfig;

conformance!(nftl, NftlConfig::default());
conformance!(nftl_one_die, NftlConfig { over_provisioning: 0.05 }, ftlab_ftl::conformance::one_die_geometry());
