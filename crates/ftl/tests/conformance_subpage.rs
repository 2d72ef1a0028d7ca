//! The sub-page FTL runs the conformance suite: with 1 KiB units of the suite's
//! 4 KiB pages (4 a page), and with the Jasmine board's shape, 4 KiB units of
//! 32 KiB pages (8 a page). Its writes are durable on flush, and the suite's
//! power cuts (some inside a flush) hold it to exactly that. With request-queue
//! packing (`nameless-split`) every acknowledged write is durable.
#![allow(clippy::unwrap_used)]

use ftlab_ftl::conformance;
use ftlab_ftl::subpage::{Packing, SubPageConfig};

conformance!(subpage_quarter_pages, SubPageConfig { unit_bytes: 1024, ..SubPageConfig::default() });
conformance!(subpage_jasmine_shape, SubPageConfig::default(), jasmine_shape());
conformance!(
    nameless_split_jasmine_shape,
    SubPageConfig { packing: Packing::RequestQueue, ..SubPageConfig::default() },
    jasmine_shape()
);

/// The Jasmine board's shape, scaled down: 32 KiB pages, 4 dies, 12 blocks a
/// die, 8 units of 4 KiB a page.
fn jasmine_shape() -> ftlab_nand::Geometry {
    ftlab_nand::Geometry {
        channels: 2,
        ways_per_channel: 2,
        dies_per_way: 1,
        planes_per_die: 1,
        blocks_per_plane: 12,
        pages_per_block: 8,
        page_size: 32 * 1024,
        oob_size: 1744,
    }
}
