//! On-demand Lazy-RTGC runs the conformance suite: with the default CMT, with a
//! small one (write-back and translation GC tasks all the time), and on a device
//! with small pages, whose map spans many translation pages.
#![allow(clippy::unwrap_used)]

use ftlab_ftl::conformance;

use ftlab_ftl::schemes::realtime::lazy_rtgc_ondemand::LazyRtgcOnDemandConfig;

conformance!(lazy_rtgc_ondemand, LazyRtgcOnDemandConfig::default());
conformance!(lazy_rtgc_ondemand_small_cmt, LazyRtgcOnDemandConfig { cmt_entries: 48, ..Default::default() });
conformance!(
    lazy_rtgc_ondemand_small_pages,
    LazyRtgcOnDemandConfig { cmt_entries: 16, sigma_t: 0.25 },
    ftlab_nand::Geometry { page_size: 512, oob_size: 16, ..conformance::small_geometry() }
);
