//! The conformance suite for BAST (Kim et al. 2002, via 004 Section 2), with the
//! default 3% over-provisioning and on a one-die device with larger blocks.
#![allow(clippy::unwrap_used)]

use ftlab_ftl::conformance;
use ftlab_ftl::maplog::MapPersistence;

use ftlab_ftl::schemes::block::bast::BastConfig;

conformance!(bast, BastConfig::default());
conformance!(
    bast_one_die,
    BastConfig { over_provisioning: 0.1, ..BastConfig::default() },
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
conformance!(bast_flash_maps, BastConfig { map_persistence: MapPersistence::Flash, ..BastConfig::default() });
conformance!(
    bast_flash_maps_one_die,
    BastConfig { over_provisioning: 0.1, map_persistence: MapPersistence::Flash },
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
