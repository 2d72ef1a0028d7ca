//! Every FTL runs the conformance suite (`ftlab_ftl::conformance`). To add a scheme,
//! add one `conformance!` line.
#![allow(clippy::unwrap_used)]

use ftlab_ftl::conformance;

use ftlab_ftl::alloc::FreeOrder;
use ftlab_ftl::schemes::page::pagemap::{GcModel, PageMapConfig, PlaneAllocation};
use ftlab_ftl::victim::VictimPolicy;

conformance!(pure_page_level, PageMapConfig::preset("pure-page-level").unwrap());
conformance!(pagemap_000, PageMapConfig::preset("pagemap").unwrap());
conformance!(ppm_ftl_004, PageMapConfig::preset("ppm-ftl").unwrap());
conformance!(
    pagemap_rber_free_order,
    PageMapConfig { free_order: FreeOrder::Rber, ..PageMapConfig::preset("pagemap").unwrap() }
);
conformance!(
    pagemap_cost_benefit,
    PageMapConfig { victim: VictimPolicy::CostBenefit, background_gc_free_blocks: 4, ..PageMapConfig::default() }
);

// The mqsim garbage-collection model: per-plane pools and victims, victims in
// flight until their erase finishes, host writes stalled below the stall level;
// with 2 victims a plane on the suite's device (12 blocks a plane), and with the
// default 10 on planes of 32 blocks.
conformance!(
    pagemap_mqsim_gc,
    PageMapConfig { gc_model: GcModel::Mqsim, gc_max_victims_per_plane: 2, ..PageMapConfig::default() }
);
conformance!(
    pagemap_mqsim_gc_ten_victims,
    PageMapConfig { gc_model: GcModel::Mqsim, gc_free_blocks: 8, ..PageMapConfig::default() },
    ftlab_nand::Geometry {
        channels: 1,
        ways_per_channel: 2,
        dies_per_way: 1,
        planes_per_die: 2,
        blocks_per_plane: 32,
        pages_per_block: 16,
        page_size: 4096,
        oob_size: 128,
    }
);

// The mqsim model with a plane-first allocation (PCWD) on a chip with
// multi-plane programs: a request's pages wait in RAM and go out by
// multi-plane programs where they share a die and a page offset (the suite's
// writes are one page a request; `crates/sim/tests/fuzz_device.rs` and
// `plane_gc_tests.rs` drive multi-page requests).
conformance!(
    pagemap_mqsim_gc_pcwd_multi_plane,
    PageMapConfig {
        gc_model: GcModel::Mqsim,
        gc_max_victims_per_plane: 2,
        plane_allocation_scheme: "PCWD".parse().unwrap(),
        ..PageMapConfig::default()
    },
    conformance::small_geometry(),
    commands: ftlab_nand::Commands { multi_plane: true, ..Default::default() }
);

// Multi-plane placement on a chip with multi-plane programs: open blocks per
// plane, copies inside the victim's plane (the suite's writes are one page a
// request, so each is programmed alone; `crates/sim/tests/fuzz_device.rs`
// drives multi-page requests, programmed by multi-plane programs).
conformance!(
    pagemap_multi_plane,
    PageMapConfig { plane_allocation: PlaneAllocation::MultiPlane, ..PageMapConfig::default() },
    conformance::small_geometry(),
    commands: ftlab_nand::Commands { multi_plane: true, ..Default::default() }
);
conformance!(
    pagemap_multi_plane_cache_program_and_suspension,
    PageMapConfig { plane_allocation: PlaneAllocation::MultiPlane, ..PageMapConfig::preset("pagemap").unwrap() },
    conformance::small_geometry(),
    commands: ftlab_nand::Commands {
        multi_plane: true,
        cache_program: true,
        erase_suspension: true,
        suspend_erase_ns: 50_000,
        ..Default::default()
    }
);

// A write-back buffer in device RAM over a page-mapped and a block-mapped FTL:
// durable on flush, and the power-cut check holds it to exactly that.
conformance!(
    write_buffer_over_pagemap,
    ftlab_ftl::buffer::WriteBufferBuilder::new(Box::new(PageMapConfig::default()), 8)
);
conformance!(
    write_buffer_over_nftl,
    ftlab_ftl::buffer::WriteBufferBuilder::new(Box::new(ftlab_ftl::schemes::block::nftl::NftlConfig::default()), 16)
);

// MQSim's write cache over a page-mapped and a block-mapped FTL: acknowledged
// from DRAM, durable on flush; the power-cut check holds it to exactly that.
conformance!(
    data_cache_over_pagemap,
    ftlab_ftl::data_cache::DataCacheBuilder {
        inner: Box::new(PageMapConfig::default()),
        params: ftlab_ftl::data_cache::DataCacheParams::new(8),
    }
);
conformance!(
    data_cache_over_nftl,
    ftlab_ftl::data_cache::DataCacheBuilder {
        inner: Box::new(ftlab_ftl::schemes::block::nftl::NftlConfig::default()),
        params: ftlab_ftl::data_cache::DataCacheParams {
            writeback_limit_sectors: Some(8),
            hot_window_ns: 50_000_000,
            ..ftlab_ftl::data_cache::DataCacheParams::new(16)
        },
    }
);

// MQSim's write cache over the mqsim GC model, as the MQSim import builds it:
// write-backs wait in a queue of their die (the model tells each page's die)
// and are issued when it falls free, a tight limit so writes wait in the cache,
// on chips whose dies run serially and serve host reads before queued work.
conformance!(
    data_cache_queued_over_pagemap_mqsim_gc,
    ftlab_ftl::data_cache::DataCacheBuilder {
        inner: Box::new(PageMapConfig { gc_model: GcModel::Mqsim, gc_max_victims_per_plane: 2, ..PageMapConfig::default() }),
        params: ftlab_ftl::data_cache::DataCacheParams {
            writeback_limit_sectors: Some(16),
            hot_window_ns: 50_000_000,
            ..ftlab_ftl::data_cache::DataCacheParams::new(8)
        },
    },
    conformance::small_geometry(),
    commands: ftlab_nand::Commands { serial_dies: true, reads_first: true, sector_transfers: true, ..Default::default() }
);
// The same with two-plane programs paired as MQSim's scheduler pairs them:
// queued write-backs at one page offset they would have had, programmed
// together at their planes' next pages.
conformance!(
    data_cache_queued_over_pagemap_mqsim_gc_paired_planes,
    ftlab_ftl::data_cache::DataCacheBuilder {
        inner: Box::new(PageMapConfig { gc_model: GcModel::Mqsim, gc_max_victims_per_plane: 2, ..PageMapConfig::default() }),
        params: ftlab_ftl::data_cache::DataCacheParams {
            writeback_limit_sectors: Some(64),
            hot_window_ns: 50_000_000,
            ..ftlab_ftl::data_cache::DataCacheParams::new(8)
        },
    },
    conformance::small_geometry(),
    commands: ftlab_nand::Commands {
        multi_plane: true,
        multi_plane_any_page: true,
        serial_dies: true,
        reads_first: true,
        sector_transfers: true,
        ..Default::default()
    }
);
conformance!(
    pagemap_mqsim_gc_reads_first,
    PageMapConfig { gc_model: GcModel::Mqsim, gc_max_victims_per_plane: 2, ..PageMapConfig::default() },
    conformance::small_geometry(),
    commands: ftlab_nand::Commands { reads_first: true, ..Default::default() }
);
// With MQSim's cached mapping table modelled (a table of 8 entries, 16 to a
// translation page): translation reads and write-backs beside the data, on
// serial dies with reads first, where late reservations leave gaps.
conformance!(
    pagemap_mqsim_gc_cached_map,
    PageMapConfig {
        gc_model: GcModel::Mqsim,
        gc_max_victims_per_plane: 2,
        cmt_entries: 8,
        cmt_entries_per_page: 16,
        ..PageMapConfig::default()
    },
    conformance::small_geometry(),
    commands: ftlab_nand::Commands { reads_first: true, serial_dies: true, ..Default::default() }
);
// The same with its translation write-backs programmed.
conformance!(
    pagemap_mqsim_gc_cached_map_programmed,
    PageMapConfig {
        gc_model: GcModel::Mqsim,
        gc_max_victims_per_plane: 2,
        cmt_entries: 8,
        cmt_entries_per_page: 16,
        cmt_writes: ftlab_ftl::schemes::page::pagemap::CmtWrites::Programmed,
        ..PageMapConfig::default()
    },
    conformance::small_geometry(),
    commands: ftlab_nand::Commands { reads_first: true, serial_dies: true, ..Default::default() }
);

// The solid-state cache through the block interface (write = write-dirty, trim =
// evict): dirty blocks are never evicted silently, so it is a plain FTL here.
conformance!(ssc_block_interface, ftlab_ftl::schemes::host::ssc::SscConfig::default());
conformance!(
    ssc_dirty_victims,
    ftlab_ftl::schemes::host::ssc::SscConfig {
        eviction: ftlab_ftl::schemes::host::ssc::Eviction::Dirty,
        ..Default::default()
    }
);
// The map log with checkpoints: writes are durable at the next flush.
conformance!(
    ssc_map_log,
    ftlab_ftl::schemes::host::ssc::SscConfig {
        consistency: ftlab_ftl::schemes::host::ssc::Consistency::Log,
        ..Default::default()
    }
);

// The host FTL over the zoned device (zones striped over the dies, and zones
// on one die with open and active limits).
conformance!(zns_host, ftlab_ftl::zns::ZnsHostConfig::default());
// Garbage collection's copies in SepBIT's classes (four copy zones).
conformance!(
    zns_host_sepbit,
    ftlab_ftl::zns::ZnsHostConfig { gc_placement: ftlab_ftl::zns::GcPlacement::Sepbit, ..Default::default() }
);
conformance!(
    zns_host_one_die_limited,
    ftlab_ftl::zns::ZnsHostConfig {
        zns: ftlab_ftl::zns::ZnsConfig {
            zone_mapping: ftlab_ftl::zns::ZoneMapping::Die,
            zone_blocks: 2,
            max_open_zones: 3,
            max_active_zones: 4,
            ..Default::default()
        },
        ..Default::default()
    }
);

// The FDP device, its copies shared and kept apart by handle.
conformance!(fdp, ftlab_ftl::schemes::page::fdp::FdpConfig::default());
conformance!(
    fdp_persistently_isolated,
    ftlab_ftl::schemes::page::fdp::FdpConfig {
        handles: 4,
        isolation: ftlab_ftl::schemes::page::fdp::Isolation::Persistently,
        ..Default::default()
    }
);

// The FDP device with two reclaim groups (writes without an identifier go to
// the group with the most free units) and with reclaim units of several
// blocks (superblocks over the dies of a group, collected whole).
conformance!(
    fdp_reclaim_groups,
    ftlab_ftl::schemes::page::fdp::FdpConfig { handles: 4, reclaim_groups: 2, ..Default::default() }
);
conformance!(
    fdp_superblock_units_persistently_isolated,
    ftlab_ftl::schemes::page::fdp::FdpConfig {
        handles: 2,
        reclaim_unit_blocks: 4,
        isolation: ftlab_ftl::schemes::page::fdp::Isolation::Persistently,
        ..Default::default()
    }
);
conformance!(
    fdp_groups_of_two_block_units,
    ftlab_ftl::schemes::page::fdp::FdpConfig {
        handles: 2,
        reclaim_groups: 2,
        reclaim_unit_blocks: 2,
        ..Default::default()
    }
);
