//! The conformance suite for GFTL (002 Sections IV, VI, VII) and its two
//! soft-real-time presets, on the suite's device and on a one-die device.
#![allow(clippy::unwrap_used)]

use ftlab_ftl::conformance;

use ftlab_ftl::schemes::realtime::gftl::GftlConfig;

conformance!(gftl, GftlConfig::default());
conformance!(gftl_threshold, GftlConfig::preset("gftl-threshold").unwrap());
conformance!(gftl_priority, GftlConfig::preset("gftl-priority").unwrap());
conformance!(
    gftl_one_die,
    GftlConfig::default(),
    ftlab_nand::Geometry {
        channels: 1,
        ways_per_channel: 1,
        dies_per_way: 1,
        planes_per_die: 1,
        blocks_per_plane: 64,
        pages_per_block: 32,
        page_size: 4096,
        oob_size: 128,
    }
);
