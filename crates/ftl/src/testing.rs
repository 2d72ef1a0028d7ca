//! Fixtures for the schemes' unit tests: a token-store device of a given shape
//! with the suite's SLC timing.
#![allow(clippy::unwrap_used)]

use ftlab_nand::{Geometry, Nand, NandConfig, StoreKind, Timing, WearConfig};

use crate::Flash;

/// The SLC timing the unit tests use: 25 us read, 200 us program, 1.5 ms erase,
/// 200 MB/s channel.
pub(crate) const TIMING: Timing =
    Timing { read_ns: 25_000, read_oob_ns: 25_000, program_ns: 200_000, erase_ns: 1_500_000, channel_mb_per_s: 200 };

/// One die of `blocks` blocks of `pages_per_block` 4 KiB pages (64-byte OOB):
/// the shape most schemes' unit tests use.
pub(crate) fn one_die(blocks: u32, pages_per_block: u32) -> Geometry {
    Geometry {
        channels: 1,
        ways_per_channel: 1,
        dies_per_way: 1,
        planes_per_die: 1,
        blocks_per_plane: blocks,
        pages_per_block,
        page_size: 4096,
        oob_size: 64,
    }
}

/// A freshly formatted device of `geometry` with [`TIMING`], no bad blocks.
pub(crate) fn flash(geometry: Geometry, seed: u64) -> Flash {
    flash_with(geometry, seed, Default::default())
}

/// As [`flash`], with the chip's advanced `commands`.
pub(crate) fn flash_with(geometry: Geometry, seed: u64, commands: ftlab_nand::Commands) -> Flash {
    let config = NandConfig {
        geometry,
        timing: TIMING,
        bad_block_rate: 0.0,
        wear: WearConfig::default(),
        store: StoreKind::Token,
        seed,
        faults: Default::default(),
        commands,
    };
    Flash::new(Nand::new(&config).unwrap())
}

/// Writes `lpns` as one host request at `now` (all but the last with
/// [`crate::Hint::more`], page `l` holding token `token + l`); returns the
/// request's completion.
pub(crate) fn write_request(
    ftl: &mut dyn crate::Ftl,
    flash: &mut Flash,
    now: ftlab_nand::SimTime,
    lpns: &[u32],
    token: u64,
) -> ftlab_nand::SimTime {
    let mut done = now;
    for (i, &l) in lpns.iter().enumerate() {
        let mut io = flash.io(now);
        let hint = crate::Hint { more: i + 1 < lpns.len(), ..crate::Hint::default() };
        ftl.write(&mut io, crate::Lpn(l), ftlab_nand::Payload::Token(token + u64::from(l)), &hint).unwrap();
        done = done.max(io.completion());
    }
    done
}
