//! DFTL runs the conformance suite: with the default CMT (which caches the whole
//! small device) and with a CMT of 48 entries, so that misses, evictions with
//! batched write-backs and translation-block GC happen all the time.
#![allow(clippy::unwrap_used)]

use ftlab_ftl::conformance;

use ftlab_ftl::schemes::page::dftl::DftlConfig;

conformance!(dftl, DftlConfig::default());
conformance!(dftl_small_cmt, DftlConfig { cmt_entries: 48, ..DftlConfig::default() });
conformance!(
    dftl_small_pages,
    DftlConfig { cmt_entries: 16, sigma_t: 0.25, ..DftlConfig::default() },
    // 512-byte pages: 128 entries a translation page, so the map spans many pages.
    ftlab_nand::Geometry { page_size: 512, oob_size: 16, ..conformance::small_geometry() }
);
