//! The conformance suite for NFTL (002 Section II), on the suite's device and on a
//! one-die device with larger blocks.
#![allow(clippy::unwrap_used)]

use ftlab_ftl::conformance;

use ftlab_ftl::schemes::block::nftl::NftlConfig;

conformance!(nftl, NftlConfig::default());
conformance!(
    nftl_one_die,
    NftlConfig { over_provisioning: 0.05 },
    ftlab_nand::Geometry {
        channels: 1,
        ways_per_channel: 1,
        dies_per_way: 1,
        planes_per_die: 1,
        blocks_per_plane: 48,
        pages_per_block: 32,
        page_size: 4096,
        oob_size: 128,
    }
);
