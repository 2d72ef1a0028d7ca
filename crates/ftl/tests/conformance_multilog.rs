//! The conformance suite for MultiLog (Stoica and Ailamaki 2013, via 000 Section
//! 6.1.4): the suite writes without hints, so the Oracle falls back to the online
//! estimator; with the online estimator and four logs; with one log per die on a
//! one-die device (every collection moves pages into another log).
#![allow(clippy::unwrap_used)]

use ftlab_ftl::conformance;

use ftlab_ftl::schemes::page::multilog::{Estimator, MultiLogConfig};

conformance!(multilog_oracle, MultiLogConfig::default());
conformance!(multilog_online, MultiLogConfig { estimator: Estimator::Online, logs: 4, ..MultiLogConfig::default() });
conformance!(
    multilog_one_die,
    MultiLogConfig {
        estimator: Estimator::Online,
        over_provisioning: 0.0,
        gc_free_blocks: 1,
        ..MultiLogConfig::default()
    },
    ftlab_nand::Geometry {
        channels: 1,
        ways_per_channel: 1,
        dies_per_way: 1,
        planes_per_die: 1,
        blocks_per_plane: 48,
        pages_per_block: 16,
        page_size: 4096,
        oob_size: 128,
    }
);
