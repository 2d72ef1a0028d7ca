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
    ftlab_ftl::conformance::one_die_geometry()
);
conformance!(fast_flash_maps, FastConfig { map_persistence: MapPersistence::Flash, ..FastConfig::default() });
conformance!(
    fast_flash_maps_one_die,
    FastConfig { over_provisioning: 0.1, map_persistence: MapPersistence::Flash },
    ftlab_ftl::conformance::one_die_geometry()
);
