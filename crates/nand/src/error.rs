//! Errors of the medium. Every violation of a NAND rule is one of these, never a
//! silent overwrite.

use thiserror::Error;

use crate::geometry::{BlockId, Ppa};
use crate::time::SimTime;

/// An impossible device shape, naming the field and the reason.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum GeometryError {
    #[error("geometry field `{field}` is zero; every dimension of the device must be at least 1")]
    Zero { field: &'static str },
    #[error("geometry field `{field}` = {value} is not accepted: it {why}")]
    Absurd { field: &'static str, value: u64, why: &'static str },
    #[error("the device has too many pages: at most {max} pages are supported (reduce blocks_per_plane, planes, dies, ways or channels, or use larger pages)")]
    TooManyPages { max: u64 },
}

/// A chip timing the medium cannot run, naming the key.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum TimingError {
    #[error(
        "timing.{field} is 0; give the chip's time in nanoseconds (channel_mb_per_s: its transfer rate), at least 1"
    )]
    Zero { field: &'static str },
    #[error(
        "timing.{field} = {ns} ns is longer than any flash operation: give at most {max} ns (one hour); \
         chips take microseconds to milliseconds"
    )]
    TooLong { field: &'static str, ns: u64, max: u64 },
}

/// A flash operation that the medium refused or could not complete.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum NandError {
    #[error("page {0:?} is beyond the end of the device")]
    OutOfRange(Ppa),
    #[error("block {0:?} is beyond the end of the device")]
    BlockOutOfRange(BlockId),
    #[error("block {0:?} is a bad block")]
    BadBlock(BlockId),
    #[error("page {ppa:?} is already programmed; a block must be erased before its pages are programmed again")]
    AlreadyProgrammed { ppa: Ppa },
    #[error("page {ppa:?} programmed out of order: the next programmable page of its block is page {expected}")]
    OutOfOrder { ppa: Ppa, expected: u32 },
    #[error("page {0:?} has not been programmed since its block was erased")]
    NotProgrammed(Ppa),
    #[error("page {0:?} is uncorrectable (torn by a power cut, or its program failed)")]
    Uncorrectable(Ppa),
    #[error(
        "programming page {ppa:?} failed: the page is unusable and its block has gone bad; program the data on \
         another block and move the block's valid pages off it"
    )]
    ProgramFailed { ppa: Ppa },
    #[error("erasing block {block:?} failed: the block has gone bad; retire it and take another free block")]
    EraseFailed { block: BlockId },
    #[error(
        "block {0:?} has gone bad (a program or erase on it failed): it takes no program and no erase; read its \
         programmed pages to move them off, and retire it"
    )]
    GrownBad(BlockId),
    #[error("block {0:?} was torn by a power cut during erase; erase it again before use")]
    TornBlock(BlockId),
    #[error("copyback from {from:?} to {to:?}: copyback stays within one plane of one die")]
    CopybackAcrossPlanes { from: Ppa, to: Ppa },
    #[error(
        "OOB tag {tag} is out of range: a page's tag takes 6 bits (0 to 63); the FTL scheme must keep its tags \
         within them"
    )]
    TagOutOfRange { tag: u8 },
    #[error(
        "slots of {unit_bytes} bytes do not fit a page of {page_size} bytes: the mapping unit must be at least one \
         byte and divide the page size (e.g. 4096)"
    )]
    SlotSize { unit_bytes: u32, page_size: u32 },
    #[error(
        "{slots} slot records of {record_bytes} bytes each need {need} bytes of OOB, but a page has {oob_size}: use \
         a larger mapping unit (fewer slots per page) or a chip with more OOB",
        need = u64::from(*slots) * u64::from(*record_bytes)
    )]
    SlotRecordsDontFit { slots: u32, record_bytes: u32, oob_size: u32 },
    #[error("a packed program of {given} slots: a page of this unit holds 1 to {max}")]
    SlotCount { given: usize, max: u32 },
    #[error("page {ppa:?} has no slot {slot}: it holds {slots}")]
    NoSuchSlot { ppa: Ppa, slot: u32, slots: u32 },
    #[error("payload does not match the page store: {0}")]
    PayloadMismatch(&'static str),
    #[error("the device is powered off")]
    PoweredOff,
    #[error("multi-plane commands are off: set device.commands.multi_plane = true to use them")]
    MultiPlaneOff,
    #[error("a multi-plane operation of {given} planes: a die of this chip has {planes} planes")]
    MultiPlaneCount { given: usize, planes: u32 },
    #[error("a multi-plane operation cannot take {first:?} and {other:?}: {why}")]
    MultiPlane { first: Ppa, other: Ppa, why: &'static str },
    #[error(
        "an operation issued at {at} on a die busy until {busy} would start past the latest simulated time \
         (3 x 2^62 ns, about 438 years): the workload's times are too large; check its timestamps and host.time_scale"
    )]
    TimeLimit { at: SimTime, busy: SimTime },
}
