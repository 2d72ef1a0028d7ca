//! The conformance suite for FAST (Lee et al. 2007, via 004 Sections 2-3.1), with the
//! default 3% over-provisioning and on a one-die device with larger blocks.
#![allow(clippy::unwrap_used)]

use ftlab_ftl::conformance;
use ftlab_ftl::maplog::MapPersistence;

use ftlab_ftl::schemes::block::fast::FastConfig;

conformance!(fast, FastConfig::default());
conformance!(
    fast_one_die,
    FastConfig { over_provisioning: 0.1, ..FastConfig::default() },
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
conformance!(fast_flash_maps, FastConfig { map_persistence: MapPersistence::Flash, ..FastConfig::default() });
conformance!(
    fast_flash_maps_one_die,
    FastConfig { over_provisioning: 0.1, map_persistence: MapPersistence::Flash },
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
