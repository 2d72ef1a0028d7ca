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
    ftlab_ftl::conformance::one_die_geometry()
);
conformance!(bast_flash_maps, BastConfig { map_persistence: MapPersistence::Flash, ..BastConfig::default() });
conformance!(
    bast_flash_maps_one_die,
    BastConfig { over_provisioning: 0.1, map_persistence: MapPersistence::Flash },
    ftlab_ftl::conformance::one_die_geometry()
);
