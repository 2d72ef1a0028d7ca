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
    ftlab_ftl::conformance::one_die_geometry()
);
conformance!(
    janus_all_writes_logged_one_die,
    JanusConfig {
        over_provisioning: 0.1,
        adaptation_period: 50,
        sequential_log: SequentialLog::All,
        ..JanusConfig::default()
    },
    ftlab_ftl::conformance::one_die_geometry()
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
    ftlab_ftl::conformance::one_die_geometry()
);
