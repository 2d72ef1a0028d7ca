#![allow(clippy::unwrap_used)]
//! The conformance suite for Lazy-RTGC (001 Sections 3-4), with and without the
//! idle-time optimisation, on the suite's multi-die device and on one chip of the
//! paper's SLC geometry (64 pages of 2 KiB per block, copyback).

use ftlab_ftl::conformance;

use ftlab_ftl::schemes::realtime::lazy_rtgc::LazyRtgcConfig;

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

conformance!(lazy_rtgc, LazyRtgcConfig::default());
conformance!(lazy_rtgc_idle, LazyRtgcConfig { idle_gc: true, ..LazyRtgcConfig::default() });
conformance!(lazy_rtgc_one_chip, LazyRtgcConfig::default(), one_chip());
conformance!(lazy_rtgc_sigma, LazyRtgcConfig { sigma: 0.5, idle_gc: true }, one_chip());
