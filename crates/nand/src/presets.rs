//! Named chip presets: the NAND chips and devices the papers in `/work/shared/papers`
//! evaluate on, each with its timing, its native page/block shape and a default
//! device shape.
//!
//! Every preset says where its numbers come from (paper file + table/section) and
//! which values were *not* in the paper and had to be assumed. Conventions used
//! throughout unless a preset says otherwise:
//!
//! * **OOB read time.** Few papers give a spare-area read time. A spare-area read
//!   still senses the whole page from the array (t_R); only the bus transfer is
//!   shorter, and ftlab charges that transfer separately through
//!   [`Timing::transfer`]. So `read_oob_ns = read_ns` whenever the paper is silent.
//! * **Bus rate.** When the paper gives none, the rate of the chip's class and era:
//!   40 MB/s for asynchronous SLC/MLC parts with a 25 ns read cycle, 20 MB/s for
//!   50 ns small-block parts, 200 MB/s for ONFI 2.x synchronous MLC.
//! * **Array times are the data-sheet typical values the paper prints**; ftlab adds
//!   the channel transfer on top of them.
//! * **Endurance** is never given by these papers (except GFTL's "typically
//!   100,000"); the rated P/E cycles of the cell type and era are used: 100,000
//!   for SLC, 3,000-5,000 for consumer MLC, 30,000 for enterprise MLC, 1,000 for
//!   early TLC.

use serde::Serialize;

use crate::geometry::Geometry;
use crate::timing::Timing;

/// Bits stored per cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CellType {
    /// One bit per cell.
    Slc,
    /// Two bits per cell.
    Mlc,
    /// Three bits per cell.
    Tlc,
}

/// A named chip: its timing and its native page/block shape, plus a default device shape.
#[derive(Debug, Clone, Copy)]
pub struct ChipPreset {
    /// Kebab-case id used on the command line, e.g. `"spansion-slc-512mb"`.
    pub name: &'static str,
    /// One line shown by `ftlab presets`.
    pub summary: &'static str,
    /// Paper file name and table/section the numbers come from.
    pub source: &'static str,
    /// Bits per cell.
    pub cell: CellType,
    /// Operation latencies and bus rate.
    pub timing: Timing,
    /// Rated program/erase cycles per block (used to normalise wear).
    pub endurance_cycles: u32,
    /// The chip's page size, spare size and pages per block, and a sensible
    /// default device shape.
    pub geometry: Geometry,
}

/// Microseconds to nanoseconds.
const fn us(x: u64) -> u64 {
    x * 1_000
}

/// Single-chip geometry: one channel, one way, one die, one plane.
const fn one_chip(blocks: u32, pages_per_block: u32, page_size: u32, oob_size: u32) -> Geometry {
    Geometry {
        channels: 1,
        ways_per_channel: 1,
        dies_per_way: 1,
        planes_per_die: 1,
        blocks_per_plane: blocks,
        pages_per_block,
        page_size,
        oob_size,
    }
}

// ---------------------------------------------------------------------------
// 001_ca7ecce2bd5249b9.txt (Lazy-RTGC), Table II
// ---------------------------------------------------------------------------

/// Spansion 512MB SLC (S34ML04G1), `001_ca7ecce2bd5249b9.txt` Table II:
/// t_rd = 25 us, t_wr = 200 us, t_er = 2000 us, pi = 64 pages per block.
///
/// Not in the paper (assumed):
/// * page 2048 B + 64 B OOB: the cited S34ML04G1 data sheet's 2 KiB large-block page;
/// * 4096 blocks on one chip, so the device is the named 512 MiB (one plane; the real
///   part splits them over two planes);
/// * `read_oob_ns` = t_rd (spare-area read still senses the page);
/// * 40 MB/s bus (asynchronous interface, 25 ns read cycle);
/// * 100,000 P/E cycles (SLC rating of that part class).
pub const SPANSION_SLC_512MB: ChipPreset = ChipPreset {
    name: "spansion-slc-512mb",
    summary: "Spansion S34ML04G1 512 MB SLC: 25/200/2000 us, 64 x 2 KiB pages per block",
    source: "001_ca7ecce2bd5249b9.txt Table II",
    cell: CellType::Slc,
    timing: Timing {
        read_ns: us(25),
        read_oob_ns: us(25),
        program_ns: us(200),
        erase_ns: us(2000),
        channel_mb_per_s: 40,
    },
    endurance_cycles: 100_000,
    geometry: one_chip(4096, 64, 2048, 64),
};

/// Toshiba 512MB SLC (cited data sheet: TC58NVG3S0F), `001_ca7ecce2bd5249b9.txt`
/// Table II: t_rd = 25 us, t_wr = 300 us, t_er = 3000 us, pi = 64.
///
/// Not in the paper (assumed):
/// * page 4096 B + 232 B OOB: the cited TC58NVG3S0F data sheet's
///   "(4096 + 232) bytes x 64 pages" organisation (that part is 8 Gbit; the
///   capacity follows the paper's "512MB" instead, hence 2048 blocks of 256 KiB);
/// * `read_oob_ns` = t_rd (the data sheet's cell-to-register time is quoted as
///   30 us max; the paper's 25 us is kept);
/// * 40 MB/s bus (25 ns serial read cycle in the data sheet);
/// * 100,000 P/E cycles (SLC rating).
pub const TOSHIBA_SLC_512MB: ChipPreset = ChipPreset {
    name: "toshiba-slc-512mb",
    summary: "Toshiba TC58NVG3S0F-class 512 MB SLC: 25/300/3000 us, 64 x 4 KiB pages per block",
    source: "001_ca7ecce2bd5249b9.txt Table II",
    cell: CellType::Slc,
    timing: Timing {
        read_ns: us(25),
        read_oob_ns: us(25),
        program_ns: us(300),
        erase_ns: us(3000),
        channel_mb_per_s: 40,
    },
    endurance_cycles: 100_000,
    geometry: one_chip(2048, 64, 4096, 232),
};

/// Samsung 512MB MLC (K9G4G08U0A), `001_ca7ecce2bd5249b9.txt` Table II:
/// t_rd = 60 us, t_wr = 800 us, t_er = 1500 us, pi = 128.
///
/// Not in the paper (assumed):
/// * page 2048 B + 64 B OOB: the cited K9G4G08U0A data sheet has a (2K + 64) B
///   data register, so 2 KiB pages rather than the 4 KiB of later Samsung MLC;
/// * 2048 blocks of 256 KiB = the named 512 MiB, on one chip;
/// * `read_oob_ns` = t_rd;
/// * 40 MB/s bus (asynchronous interface, 25 ns cycle);
/// * 5,000 P/E cycles (the K9G4G08U0A data sheet's revised endurance).
pub const SAMSUNG_MLC_512MB: ChipPreset = ChipPreset {
    name: "samsung-mlc-512mb",
    summary: "Samsung K9G4G08U0A 512 MB MLC: 60/800/1500 us, 128 x 2 KiB pages per block",
    source: "001_ca7ecce2bd5249b9.txt Table II",
    cell: CellType::Mlc,
    timing: Timing {
        read_ns: us(60),
        read_oob_ns: us(60),
        program_ns: us(800),
        erase_ns: us(1500),
        channel_mb_per_s: 40,
    },
    endurance_cycles: 5_000,
    geometry: one_chip(2048, 128, 2048, 64),
};

/// Micron 16GB MLC (MT29E128G08CECAB, enterprise MLC), `001_ca7ecce2bd5249b9.txt`
/// Table II: t_rd = 50 us, t_wr = 1600 us, t_er = 5500 us, pi = 256.
///
/// Not in the paper (assumed):
/// * page 8192 B + 448 B OOB (the 8640-byte page of Micron's 25 nm 8 KiB-page MLC);
/// * the 128 Gbit part as two 64 Gbit dies of 4096 blocks (2 MiB each) behind one
///   channel and one way: 16 GiB in all;
/// * `read_oob_ns` = t_rd;
/// * 200 MB/s bus (ONFI 2.x synchronous interface of that generation);
/// * 30,000 P/E cycles (Micron's enterprise-MLC "E" rating).
pub const MICRON_MLC_16GB: ChipPreset = ChipPreset {
    name: "micron-mlc-16gb",
    summary: "Micron MT29E128G08CECAB 16 GB eMLC: 50/1600/5500 us, 256 x 8 KiB pages per block",
    source: "001_ca7ecce2bd5249b9.txt Table II",
    cell: CellType::Mlc,
    timing: Timing {
        read_ns: us(50),
        read_oob_ns: us(50),
        program_ns: us(1600),
        erase_ns: us(5500),
        channel_mb_per_s: 200,
    },
    endurance_cycles: 30_000,
    geometry: Geometry {
        channels: 1,
        ways_per_channel: 1,
        dies_per_way: 2,
        planes_per_die: 1,
        blocks_per_plane: 4096,
        pages_per_block: 256,
        page_size: 8192,
        oob_size: 448,
    },
};

/// Toshiba 2GB TLC (TC58NVG4T2ETA00), `001_ca7ecce2bd5249b9.txt` Table II:
/// t_rd = 250 us, t_wr = 2700 us, t_er = 4000 us, pi = 192.
///
/// Not in the paper (assumed):
/// * page 8192 B + 640 B OOB (typical 8 KiB TLC page of that era);
/// * 1366 blocks of 1.5 MiB on one chip: 2 GiB does not divide into 192-page
///   blocks, so the block count is rounded up (2.0005 GiB);
/// * `read_oob_ns` = t_rd;
/// * 40 MB/s bus (asynchronous interface, 25 ns cycle, 2008);
/// * 1,000 P/E cycles (early TLC rating).
pub const TOSHIBA_TLC_2GB: ChipPreset = ChipPreset {
    name: "toshiba-tlc-2gb",
    summary: "Toshiba TC58NVG4T2E 2 GB TLC: 250/2700/4000 us, 192 x 8 KiB pages per block",
    source: "001_ca7ecce2bd5249b9.txt Table II",
    cell: CellType::Tlc,
    timing: Timing {
        read_ns: us(250),
        read_oob_ns: us(250),
        program_ns: us(2700),
        erase_ns: us(4000),
        channel_mb_per_s: 40,
    },
    endurance_cycles: 1_000,
    geometry: one_chip(1366, 192, 8192, 640),
};

/// The 32 GB SLC device of Lazy-RTGC's evaluation, `001_ca7ecce2bd5249b9.txt`
/// Section 6 (its Table IV is not in the text copy). What the text gives:
/// * 32 GB of flash (Section 6.1), 2 KB pages (Section 5: "If the size of each page
///   is 2KB"; also Table VII: a 64 MB page-level map at 4 B per entry = 16 Mi pages
///   of 2 KiB);
/// * t_wrpg + t_er = 2,220.9 us and t_rd + pi * t_rdoob + t_er = 3,885 us
///   (Section 6.2 (1)).
///
/// Derived / assumed:
/// * pi = 64 pages per block (the FlashSim SLC configuration; only the sums above
///   are printed);
/// * t_er = 2000 us (the SLC erase time of Table II), hence t_wr = 220.9 us;
/// * t_rd = t_rdoob, hence 65 * t_rd = 1885 us and t_rd = t_rdoob = 29 us exactly;
/// * 64 B OOB per 2 KiB page; one die of 262,144 blocks (32 GiB);
/// * 40 MB/s bus (the paper's times already look end-to-end; ftlab adds the
///   transfer on top, so a simulated worst case is one page transfer above 2,220.9 us);
/// * 100,000 P/E cycles (SLC).
pub const LAZY_RTGC_EVAL_SLC: ChipPreset = ChipPreset {
    name: "lazy-rtgc-eval-slc",
    summary: "Lazy-RTGC evaluation 32 GB SLC: 29/220.9/2000 us (OOB read 29 us), 64 x 2 KiB pages",
    source: "001_ca7ecce2bd5249b9.txt Sections 5, 6.1, 6.2(1), Table VII",
    cell: CellType::Slc,
    timing: Timing {
        read_ns: us(29),
        read_oob_ns: us(29),
        program_ns: 220_900,
        erase_ns: us(2000),
        channel_mb_per_s: 40,
    },
    endurance_cycles: 100_000,
    geometry: one_chip(262_144, 64, 2048, 64),
};

// ---------------------------------------------------------------------------
// 002_7b0ca1838a2bd7a1.txt (GFTL), Table I
// ---------------------------------------------------------------------------

/// Samsung 16MB small-block SLC, `002_7b0ca1838a2bd7a1.txt` Table I: 16384 B
/// blocks of 512 B pages (32 pages) with 16 B OOB; read page 36 us, read OOB
/// 10 us, write page 200 us, erase 2000 us. 100,000 erase cycles ("typically
/// 100,000", Section 1).
///
/// Not in the paper (assumed):
/// * 1024 blocks on one chip (16 MiB, the name's capacity);
/// * 20 MB/s bus (50 ns read cycle of small-block parts). Note that the printed
///   36 us page read looks like 10 us array time + 528 B at 50 ns/B; the printed
///   values are kept as they are, so ftlab adds the transfer again on top;
/// * SLC (small-block Samsung parts of the time are SLC).
pub const SAMSUNG_SLC_16MB_SMALL_BLOCK: ChipPreset = ChipPreset {
    name: "samsung-slc-16mb-small-block",
    summary: "Samsung 16 MB small-block SLC (GFTL): 36/200/2000 us, OOB read 10 us, 32 x 512 B pages",
    source: "002_7b0ca1838a2bd7a1.txt Table I",
    cell: CellType::Slc,
    timing: Timing {
        read_ns: us(36),
        read_oob_ns: us(10),
        program_ns: us(200),
        erase_ns: us(2000),
        channel_mb_per_s: 20,
    },
    endurance_cycles: 100_000,
    geometry: one_chip(1024, 32, 512, 16),
};

/// Samsung 128MB large-block SLC, `002_7b0ca1838a2bd7a1.txt` Table I: 65536 B
/// blocks of 2048 B pages (32 pages) with 64 B OOB; read page 25 us, read OOB
/// 25 us, write page 300 us, erase 2000 us. 100,000 erase cycles (Section 1).
/// The paper's simulations use this chip (Section 5).
///
/// Not in the paper (assumed):
/// * 2048 blocks on one chip (128 MiB, the name's capacity);
/// * 40 MB/s bus (25 ns read cycle of large-block parts);
/// * SLC.
pub const SAMSUNG_SLC_128MB_LARGE_BLOCK: ChipPreset = ChipPreset {
    name: "samsung-slc-128mb-large-block",
    summary: "Samsung 128 MB large-block SLC (GFTL): 25/300/2000 us, OOB read 25 us, 32 x 2 KiB pages",
    source: "002_7b0ca1838a2bd7a1.txt Table I",
    cell: CellType::Slc,
    timing: Timing {
        read_ns: us(25),
        read_oob_ns: us(25),
        program_ns: us(300),
        erase_ns: us(2000),
        channel_mb_per_s: 40,
    },
    endurance_cycles: 100_000,
    geometry: one_chip(2048, 32, 2048, 64),
};

// ---------------------------------------------------------------------------
// 000_ffe2fafb22bcad8e.txt (Telomere)
// ---------------------------------------------------------------------------

/// The 1 TB SSD of Telomere's simulations, `000_ffe2fafb22bcad8e.txt` Section 6.1.1:
/// 16 channels x 4 chips, 4096 blocks per chip, 128 pages per block, 32 KB pages;
/// page read 0.2 ms, page write 0.7 ms, block erase 2.7 ms; read bandwidth 100 MB/s.
/// 16 x 4 x 4096 x 128 = 33,554,432 pages (< 2^32), 1 TiB.
///
/// Not in the paper (assumed):
/// * `channel_mb_per_s` = 100 from the paper's "read bandwidth is 100 MB/s". The
///   paper also quotes a 41.4 MB/s write and 1.4 GB/s erase bandwidth (from its
///   reference \[16\]); these are per-chip throughputs, not bus rates, and are not
///   modelled. (A bus of ~256 MB/s would instead make one chip's
///   t_R + transfer equal 32 KiB / 100 MB/s.)
/// * `read_oob_ns` = page read time;
/// * 2048 B OOB per 32 KiB page (~6%, typical);
/// * MLC with 3,000 P/E cycles (the wear model of Section 6.3 follows a 16 nm MLC
///   chip; the cell type of the simulated SSD is not stated).
pub const TELOMERE_1TB_SSD: ChipPreset = ChipPreset {
    name: "telomere-1tb-ssd",
    summary: "Telomere 1 TB SSD: 16 ch x 4 chips, 200/700/2700 us, 128 x 32 KiB pages, 100 MB/s",
    source: "000_ffe2fafb22bcad8e.txt Section 6.1.1",
    cell: CellType::Mlc,
    timing: Timing {
        read_ns: us(200),
        read_oob_ns: us(200),
        program_ns: us(700),
        erase_ns: us(2700),
        channel_mb_per_s: 100,
    },
    endurance_cycles: 3_000,
    geometry: Geometry {
        channels: 16,
        ways_per_channel: 4,
        dies_per_way: 1,
        planes_per_die: 1,
        blocks_per_plane: 4096,
        pages_per_block: 128,
        page_size: 32 * 1024,
        oob_size: 2048,
    },
};

/// The OpenSSD Cosmos board of Telomere's hardware experiment,
/// `000_ffe2fafb22bcad8e.txt` Section 7: Micron MT29F256G08CMCABH2 MLC, 256 pages
/// of 8 KB per block, 21 blocks per flash chip in the Table 3 experiment. The
/// controller keeps 60 B ECC parity + 90 reserved bytes per 2 KB chunk, i.e.
/// 4 x 150 = 600 B of spare per 8 KB page (used as `oob_size`).
///
/// Not in the paper (assumed):
/// * 4 channels x 4 ways (the Cosmos OpenSSD Greedy FTL's `CHANNEL_NUM`/`WAY_NUM`);
/// * t_R 75 us, t_PROG 1300 us, t_BERS 3.8 ms: typical values of Micron's
///   64 Gbit-per-die 8 KiB-page MLC (25 nm class) data sheets, which this part
///   belongs to; `read_oob_ns` = t_R;
/// * 200 MB/s bus (ONFI 2.x synchronous mode of that part);
/// * 3,000 P/E cycles (consumer MLC rating of that generation).
pub const COSMOS_OPENSSD: ChipPreset = ChipPreset {
    name: "cosmos-openssd",
    summary: "OpenSSD Cosmos (Micron MT29F256G08 MLC): 4 ch x 4 ways, 21 blocks x 256 x 8 KiB pages",
    source: "000_ffe2fafb22bcad8e.txt Section 7 (Table 3 experiment)",
    cell: CellType::Mlc,
    timing: Timing {
        read_ns: us(75),
        read_oob_ns: us(75),
        program_ns: us(1300),
        erase_ns: us(3800),
        channel_mb_per_s: 200,
    },
    endurance_cycles: 3_000,
    geometry: Geometry {
        channels: 4,
        ways_per_channel: 4,
        dies_per_way: 1,
        planes_per_die: 1,
        blocks_per_plane: 21,
        pages_per_block: 256,
        page_size: 8192,
        oob_size: 600,
    },
};

// ---------------------------------------------------------------------------
// 003_9b28d6a0046a8156.txt (FlashTier / Nameless Writes on OpenSSD)
// ---------------------------------------------------------------------------

/// The OpenSSD Jasmine board, `003_9b28d6a0046a8156.txt` Section 2: MLC chips with
/// two planes and 8 KB physical pages; the firmware uses 32 KB virtual pages
/// striped over 2 planes on 2 chips of a bank, and 4 MB erase blocks of 128 virtual
/// pages; 8 slots; 16-bit flash channel. One ftlab page is one 32 KiB virtual
/// page and one ftlab die is one bank.
///
/// Not in the paper (assumed):
/// * 8 banks as 4 channels x 2 ways, 2048 virtual blocks per bank (64 GiB): the
///   Jasmine firmware's default `BANK_BMP` (0x00330033) with Samsung K9LCG08U1M
///   (2 x 32 Gbit dies, 4096 blocks of 128 x 8 KiB pages each);
/// * OOB 4 x 436 = 1744 B per virtual page (K9LCG08U1M pages are 8192 + 436 B);
/// * t_R 60 us, t_PROG 1300 us, t_BERS 3 ms: typical values of Samsung 3x nm
///   8 KiB-page MLC (K9LCG08U1M class); the planes and chips of a bank work in
///   parallel, so a virtual page takes one t_R / t_PROG; `read_oob_ns` = t_R;
/// * 80 MB/s bus (16-bit channel at an assumed 40 MHz). The paper only gives
///   device-level 90 MB/s writes and 125 MB/s reads, both below this model's
///   bounds;
/// * 3,000 P/E cycles (3x nm MLC).
pub const JASMINE_OPENSSD: ChipPreset = ChipPreset {
    name: "jasmine-openssd",
    summary: "OpenSSD Jasmine (Samsung K9LCG08U1M MLC): 4 ch x 2 banks, 4 MB blocks of 128 x 32 KiB vpages",
    source: "003_9b28d6a0046a8156.txt Section 2 (OpenSSD platform)",
    cell: CellType::Mlc,
    timing: Timing {
        read_ns: us(60),
        read_oob_ns: us(60),
        program_ns: us(1300),
        erase_ns: us(3000),
        channel_mb_per_s: 80,
    },
    endurance_cycles: 3_000,
    geometry: Geometry {
        channels: 4,
        ways_per_channel: 2,
        dies_per_way: 1,
        planes_per_die: 1,
        blocks_per_plane: 2048,
        pages_per_block: 128,
        page_size: 32 * 1024,
        oob_size: 1744,
    },
};

// ---------------------------------------------------------------------------
// 004_15edfc19ad848aee.txt (Janus-FTL)
// ---------------------------------------------------------------------------

/// The Janus-FTL simulator, `004_15edfc19ad848aee.txt` Figure 4 caption and
/// Section 6: N_P = 64 pages per block, C_E = 2 ms, C_PROG = 200 us, page copy
/// C_CP = 225 us; 8192 blocks in the experiments (the Figure 4 analysis uses 1024).
///
/// Derived / assumed:
/// * read 25 us = C_CP - C_PROG (a copy is a read plus a program);
///   `read_oob_ns` = read;
/// * page 2048 B + 64 B OOB (not given; typical SLC large-block page for 64-page
///   blocks), so the 8192 blocks make 1 GiB on one chip;
/// * 40 MB/s bus (asynchronous SLC);
/// * SLC with 100,000 P/E cycles (the timings are SLC timings).
pub const JANUS_FTL_SIM: ChipPreset = ChipPreset {
    name: "janus-ftl-sim",
    summary: "Janus-FTL simulator: 25/200/2000 us (copy 225 us), 8192 blocks x 64 x 2 KiB pages",
    source: "004_15edfc19ad848aee.txt Figure 4 caption, Section 6",
    cell: CellType::Slc,
    timing: Timing {
        read_ns: us(25),
        read_oob_ns: us(25),
        program_ns: us(200),
        erase_ns: us(2000),
        channel_mb_per_s: 40,
    },
    endurance_cycles: 100_000,
    geometry: one_chip(8192, 64, 2048, 64),
};

// ---------------------------------------------------------------------------
// Built-in default
// ---------------------------------------------------------------------------

/// A small generic SLC device, ftlab's built-in default: 25 us read, 200 us
/// program, 1.5 ms erase, 4 KiB pages with 128 B OOB, 64 pages per block,
/// 2 channels x 2 ways x 1 die x 1 plane x 256 blocks (256 MiB). Not from a paper:
/// all values are typical SLC values; `read_oob_ns` = read, 40 MB/s bus, 100,000
/// P/E cycles.
pub const SMALL_SLC: ChipPreset = ChipPreset {
    name: "small-slc",
    summary: "Generic small SLC (built-in default): 25/200/1500 us, 2 ch x 2 ways, 256 blocks x 64 x 4 KiB",
    source: "built-in (typical SLC values, no paper)",
    cell: CellType::Slc,
    timing: Timing {
        read_ns: us(25),
        read_oob_ns: us(25),
        program_ns: us(200),
        erase_ns: us(1500),
        channel_mb_per_s: 40,
    },
    endurance_cycles: 100_000,
    geometry: Geometry {
        channels: 2,
        ways_per_channel: 2,
        dies_per_way: 1,
        planes_per_die: 1,
        blocks_per_plane: 256,
        pages_per_block: 64,
        page_size: 4096,
        oob_size: 128,
    },
};

/// Every preset, in the order `ftlab presets` lists them.
pub const PRESETS: &[ChipPreset] = &[
    SMALL_SLC,
    SPANSION_SLC_512MB,
    TOSHIBA_SLC_512MB,
    SAMSUNG_MLC_512MB,
    MICRON_MLC_16GB,
    TOSHIBA_TLC_2GB,
    LAZY_RTGC_EVAL_SLC,
    SAMSUNG_SLC_16MB_SMALL_BLOCK,
    SAMSUNG_SLC_128MB_LARGE_BLOCK,
    TELOMERE_1TB_SSD,
    COSMOS_OPENSSD,
    JASMINE_OPENSSD,
    JANUS_FTL_SIM,
];

/// The preset called `name` (ASCII case-insensitive), if any.
pub fn preset(name: &str) -> Option<&'static ChipPreset> {
    PRESETS.iter().find(|p| p.name.eq_ignore_ascii_case(name))
}

/// The names of all presets, in [`PRESETS`] order.
pub fn names() -> impl Iterator<Item = &'static str> {
    PRESETS.iter().map(|p| p.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    const GIB: u64 = 1024 * MIB;

    fn get(name: &str) -> &'static ChipPreset {
        preset(name).unwrap_or_else(|| panic!("preset {name} is missing"))
    }

    #[test]
    fn every_geometry_validates() {
        for p in PRESETS {
            if let Err(e) = p.geometry.validate() {
                panic!("{}: {e}", p.name);
            }
        }
    }

    #[test]
    fn names_are_unique_and_kebab_case() {
        let mut seen = std::collections::HashSet::new();
        for name in names() {
            assert!(seen.insert(name), "duplicate preset name {name}");
            assert!(!name.is_empty());
            assert!(
                name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{name} is not kebab-case"
            );
            assert!(!name.starts_with('-') && !name.ends_with('-') && !name.contains("--"), "{name}");
        }
        assert_eq!(seen.len(), PRESETS.len());
    }

    #[test]
    fn lookup_is_case_insensitive() {
        assert_eq!(get("SPANSION-SLC-512MB").name, "spansion-slc-512mb");
        assert_eq!(get("Small-SLC").name, "small-slc");
        for name in names() {
            assert_eq!(get(&name.to_ascii_uppercase()).name, name);
        }
        assert!(preset("no-such-chip").is_none());
        assert!(preset("").is_none());
    }

    #[test]
    fn text_fields_are_one_line_and_cite_a_source() {
        const PAPERS: [&str; 5] = [
            "000_ffe2fafb22bcad8e.txt",
            "001_ca7ecce2bd5249b9.txt",
            "002_7b0ca1838a2bd7a1.txt",
            "003_9b28d6a0046a8156.txt",
            "004_15edfc19ad848aee.txt",
        ];
        for p in PRESETS {
            assert!(!p.summary.is_empty() && !p.summary.contains('\n'), "{}", p.name);
            assert!(!p.source.is_empty() && !p.source.contains('\n'), "{}", p.name);
            if p.name != "small-slc" {
                assert!(PAPERS.iter().any(|f| p.source.starts_with(f)), "{}: {}", p.name, p.source);
            }
        }
    }

    #[test]
    fn timings_are_sane() {
        for p in PRESETS {
            let t = p.timing;
            assert!(t.read_ns > 0 && t.read_oob_ns > 0, "{}", p.name);
            assert!(t.read_oob_ns <= t.read_ns, "{}", p.name);
            assert!(t.read_ns < t.program_ns && t.program_ns < t.erase_ns, "{}", p.name);
            assert!(t.channel_mb_per_s > 0 && p.endurance_cycles > 0, "{}", p.name);
            assert!(p.geometry.oob_size > 0, "{}", p.name);
        }
    }

    #[test]
    fn default_preset_is_the_small_slc() {
        let p = get("small-slc");
        assert_eq!(PRESETS[0].name, "small-slc");
        assert_eq!(p.cell, CellType::Slc);
        assert_eq!(p.timing.read_ns, 25_000);
        assert_eq!(p.timing.program_ns, 200_000);
        assert_eq!(p.timing.erase_ns, 1_500_000);
        let g = p.geometry;
        assert_eq!((g.channels, g.ways_per_channel, g.dies_per_way, g.planes_per_die), (2, 2, 1, 1));
        assert_eq!((g.blocks_per_plane, g.pages_per_block, g.page_size), (256, 64, 4096));
    }

    /// 001_ca7ecce2bd5249b9.txt Table II: t_rd, t_wr, t_er (us), pi, and the named capacity.
    #[test]
    fn golden_lazy_rtgc_table_ii() {
        let rows: [(&str, u64, u64, u64, u32, CellType, u64); 5] = [
            ("spansion-slc-512mb", 25, 200, 2000, 64, CellType::Slc, 512 * MIB),
            ("toshiba-slc-512mb", 25, 300, 3000, 64, CellType::Slc, 512 * MIB),
            ("samsung-mlc-512mb", 60, 800, 1500, 128, CellType::Mlc, 512 * MIB),
            ("micron-mlc-16gb", 50, 1600, 5500, 256, CellType::Mlc, 16 * GIB),
            ("toshiba-tlc-2gb", 250, 2700, 4000, 192, CellType::Tlc, 2 * GIB),
        ];
        for (name, rd, wr, er, pi, cell, capacity) in rows {
            let p = get(name);
            assert_eq!(p.source, "001_ca7ecce2bd5249b9.txt Table II", "{name}");
            assert_eq!(p.timing.read_ns, rd * 1000, "{name} t_rd");
            assert_eq!(p.timing.read_oob_ns, rd * 1000, "{name} t_rdoob");
            assert_eq!(p.timing.program_ns, wr * 1000, "{name} t_wr");
            assert_eq!(p.timing.erase_ns, er * 1000, "{name} t_er");
            assert_eq!(p.geometry.pages_per_block, pi, "{name} pi");
            assert_eq!(p.cell, cell, "{name}");
            // Within 0.1% of the name's capacity (the TLC block count is rounded up).
            let got = p.geometry.capacity_bytes();
            assert!(got >= capacity && got - capacity <= capacity / 1000, "{name}: {got}");
        }
        // The paper's space-utilisation bound U(sigma) = (pi-1)alpha / ((alpha+1)pi) with
        // alpha = floor(t_er / (t_rd + t_wr)) reproduces Table II's last column.
        let expect = [
            ("spansion-slc-512mb", 0.875),
            ("toshiba-slc-512mb", 0.886),
            ("samsung-mlc-512mb", 0.496),
            ("micron-mlc-16gb", 0.747),
            ("toshiba-tlc-2gb", 0.497),
        ];
        for (name, u) in expect {
            let p = get(name);
            let alpha = (p.timing.erase_ns / (p.timing.read_ns + p.timing.program_ns)) as f64;
            let pi = f64::from(p.geometry.pages_per_block);
            let sigma = (pi - 1.0) * alpha / ((alpha + 1.0) * pi);
            assert!((sigma - u).abs() < 0.0006, "{name}: U(sigma) = {sigma}, table says {u}");
        }
    }

    /// 001_ca7ecce2bd5249b9.txt Section 6: the evaluation device's sums and size.
    #[test]
    fn golden_lazy_rtgc_eval_device() {
        let p = get("lazy-rtgc-eval-slc");
        let t = p.timing;
        let g = p.geometry;
        let pi = u64::from(g.pages_per_block);
        assert_eq!(pi, 64);
        assert_eq!(t.program_ns + t.erase_ns, 2_220_900, "t_wrpg + t_er = 2,220.9 us");
        assert_eq!(t.read_ns + pi * t.read_oob_ns + t.erase_ns, 3_885_000, "t_rd + pi t_rdoob + t_er");
        assert_eq!(g.page_size, 2048);
        assert_eq!(g.capacity_bytes(), 32 * GIB);
        // Table VII: the Pure-Page-Level map is 65,536 KB at 4 B per page.
        assert_eq!(u64::from(g.total_pages()) * 4, 65_536 * KIB);
    }

    /// 002_7b0ca1838a2bd7a1.txt Table I, both columns.
    #[test]
    fn golden_gftl_table_i() {
        // (name, block bytes, page bytes, OOB bytes, read page, read OOB, write page, erase) in us
        let rows = [
            ("samsung-slc-16mb-small-block", 16_384u64, 512u32, 16u32, 36u64, 10u64, 200u64, 2000u64, 16 * MIB),
            ("samsung-slc-128mb-large-block", 65_536, 2048, 64, 25, 25, 300, 2000, 128 * MIB),
        ];
        for (name, block, page, oob, rd, rdoob, wr, er, capacity) in rows {
            let p = get(name);
            let g = p.geometry;
            assert_eq!(p.source, "002_7b0ca1838a2bd7a1.txt Table I", "{name}");
            assert_eq!(g.page_size, page, "{name}");
            assert_eq!(g.oob_size, oob, "{name}");
            assert_eq!(u64::from(g.pages_per_block) * u64::from(g.page_size), block, "{name}");
            assert_eq!(p.timing.read_ns, rd * 1000, "{name}");
            assert_eq!(p.timing.read_oob_ns, rdoob * 1000, "{name}");
            assert_eq!(p.timing.program_ns, wr * 1000, "{name}");
            assert_eq!(p.timing.erase_ns, er * 1000, "{name}");
            assert_eq!(p.endurance_cycles, 100_000, "{name}");
            assert_eq!(g.capacity_bytes(), capacity, "{name}");
        }
    }

    /// 000_ffe2fafb22bcad8e.txt Section 6.1.1: the 1 TB SSD.
    #[test]
    fn golden_telomere_ssd() {
        let p = get("telomere-1tb-ssd");
        let g = p.geometry;
        assert_eq!((g.channels, g.ways_per_channel * g.dies_per_way), (16, 4));
        assert_eq!(g.blocks_per_die(), 4096);
        assert_eq!(g.pages_per_block, 128);
        assert_eq!(g.page_size, 32 * 1024);
        assert_eq!(p.timing.read_ns, 200_000);
        assert_eq!(p.timing.program_ns, 700_000);
        assert_eq!(p.timing.erase_ns, 2_700_000);
        assert_eq!(p.timing.channel_mb_per_s, 100);
        assert_eq!(g.total_pages(), 33_554_432);
        assert!(u64::from(g.total_pages()) < 1u64 << 32);
        assert_eq!(g.capacity_bytes(), 1024 * GIB);
    }

    /// 000_ffe2fafb22bcad8e.txt Section 7: the Cosmos board.
    #[test]
    fn golden_cosmos_board() {
        let p = get("cosmos-openssd");
        let g = p.geometry;
        assert_eq!(p.cell, CellType::Mlc);
        assert_eq!(g.pages_per_block, 256);
        assert_eq!(g.page_size, 8192);
        assert_eq!(g.blocks_per_die(), 21);
        assert_eq!(g.oob_size, 4 * (60 + 90));
    }

    /// 003_9b28d6a0046a8156.txt Section 2: the Jasmine board.
    #[test]
    fn golden_jasmine_board() {
        let p = get("jasmine-openssd");
        let g = p.geometry;
        assert_eq!(p.cell, CellType::Mlc);
        assert_eq!(g.page_size, 32 * 1024);
        assert_eq!(g.pages_per_block, 128);
        assert_eq!(u64::from(g.pages_per_block) * u64::from(g.page_size), 4 * MIB);
        assert_eq!(g.page_size, 2 * 2 * 8192, "2 planes x 2 chips x 8 KB");
    }

    /// 004_15edfc19ad848aee.txt Figure 4 caption and Section 6.
    #[test]
    fn golden_janus_ftl() {
        let p = get("janus-ftl-sim");
        let t = p.timing;
        assert_eq!(p.geometry.pages_per_block, 64);
        assert_eq!(t.erase_ns, 2_000_000);
        assert_eq!(t.program_ns, 200_000);
        assert_eq!(t.read_ns + t.program_ns, 225_000, "C_CP");
        assert_eq!(p.geometry.total_blocks(), 8192);
    }
}
