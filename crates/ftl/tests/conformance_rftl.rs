//! RFTL runs the conformance suite (`ftlab_ftl::conformance`): on the suite's small device
//! (16 pages per block, 12 pages per logical block), with two-page steps (10 pages
//! per logical block, no OOB lookups), and on a one-die device with 64-page blocks.
#![allow(clippy::unwrap_used)]

use ftlab_ftl::conformance;

use ftlab_ftl::schemes::realtime::rftl::RftlConfig;

conformance!(rftl, RftlConfig::default());
conformance!(rftl_two_copies_per_step, RftlConfig { copies_per_step: 2, oob_lookup: false, ..RftlConfig::default() });
conformance!(
    rftl_custom,
    RftlConfig::default(),
    ftlab_nand::Geometry {
        channels: 1,
        ways_per_channel: 1,
        dies_per_way: 1,
        planes_per_die: 2,
        blocks_per_plane: 7,
        pages_per_block: 64,
        page_size: 4096,
        oob_size: 128,
    }
);
