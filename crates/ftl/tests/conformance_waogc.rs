#![allow(clippy::unwrap_used)]
//! The conformance suite for WAO-GC (000 Sections 6.1.5 and 6.2): at the chip's
//! largest lambda on the suite's multi-die device and on one chip of 001's SLC
//! geometry (64 pages of 2 KiB per block, copyback), and with more
//! over-provisioning, a higher free-block threshold and idle-time collection.

use ftlab_ftl::conformance;

use ftlab_ftl::schemes::realtime::waogc::WaoGcConfig;

fn one_chip() -> ftlab_nand::Geometry {
    ftlab_nand::Geometry {
        channels: 1,
        ways_per_channel: 1,
        dies_per_way: 1,
        planes_per_die: 1,
        blocks_per_plane: 24,
        pages_per_block: 64,
        page_size: 2048,
        oob_size: 64,
    }
}

conformance!(waogc, WaoGcConfig::default());
conformance!(waogc_one_chip, WaoGcConfig::default(), one_chip());
conformance!(waogc_op, WaoGcConfig { lambda: 0.5, gc_free_blocks: 3, idle_gc: false });
conformance!(waogc_op_one_chip_idle, WaoGcConfig { lambda: 0.6, gc_free_blocks: 2, idle_gc: true }, one_chip());
