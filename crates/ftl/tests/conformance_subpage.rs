//! The sub-page FTL runs the conformance suite: with 1 KiB units of the suite's
//! 4 KiB pages (4 a page), and with the Jasmine board's shape, 4 KiB units of
//! 32 KiB pages (8 a page). Its writes are durable on flush, and the suite's
//! power cuts (some inside a flush) hold it to exactly that. With request-queue
//! packing (`nameless-split`) every acknowledged write is durable.
#![allow(clippy::unwrap_used)]

use ftlab_ftl::conformance;
use ftlab_ftl::schemes::page::subpage::{Packing, SubPageConfig};

conformance!(subpage_quarter_pages, SubPageConfig { unit_bytes: 1024, ..SubPageConfig::default() });
conformance!(subpage_jasmine_shape, SubPageConfig::default(), ftlab_ftl::conformance::jasmine_geometry());
conformance!(
    nameless_split_jasmine_shape,
    SubPageConfig { packing: Packing::RequestQueue, ..SubPageConfig::default() },
    ftlab_ftl::conformance::jasmine_geometry()
);
