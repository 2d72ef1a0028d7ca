//! The conformance suite for Janus-FTL (004 Sections 3-5), adaptive and at a
//! fixed utilization, with the default 3% over-provisioning, and on a one-die
//! device with larger blocks and a short adaptation period.
#![allow(clippy::unwrap_used)]

use ftlab_ftl::conformance;
use ftlab_ftl::maplog::MapPersistence;

use ftlab_ftl::schemes::block::janus::{JanusConfig, SequentialLog};

conformance!(janus, JanusConfig::default());
conformance!(janus_all_writes_logged, JanusConfig { sequential_log: SequentialLog::All, ..JanusConfig::default() });
conformance!(janus_fix_all_writes_logged, JanusConfig { sequential_log: SequentialLog::All, ..JanusConfig::fixed() });
conformance!(janus_fix, JanusConfig::fixed());
conformance!(
    janus_one_die,
    JanusConfig { over_provisioning: 0.1, adaptation_period: 50, ..JanusConfig::default() },
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
conformance!(
    janus_all_writes_logged_one_die,
    JanusConfig {
        over_provisioning: 0.1,
        adaptation_period: 50,
        sequential_log: SequentialLog::All,
        ..JanusConfig::default()
    },
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
conformance!(janus_flash_maps, JanusConfig { map_persistence: MapPersistence::Flash, ..JanusConfig::default() });
conformance!(janus_fix_flash_maps, JanusConfig { map_persistence: MapPersistence::Flash, ..JanusConfig::fixed() });
conformance!(
    janus_flash_maps_one_die,
    JanusConfig {
        over_provisioning: 0.1,
        adaptation_period: 50,
        map_persistence: MapPersistence::Flash,
        ..JanusConfig::default()
    },
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
