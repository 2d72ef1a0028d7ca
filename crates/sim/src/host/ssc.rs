//! The solid-state cache's commands on the [`Device`], with completion times
//! from the flash model (FlashTier, `003_9b28d6a0046a8156.txt` Section 2.2:
//! write-clean, write-dirty, read, evict, clean, exists, plus flush).
//!
//! A cache manager (the host side, [`crate::host::cache`]) sends one command at a
//! time with [`Device::ssc`] at a simulated time at or after the device's
//! clock; the command is carried out then through the FTL's
//! [`SolidStateCache`](ftlab_ftl::ssc::SolidStateCache) capability, its flash
//! work is reserved on the die and channel timelines, and its completion time
//! is returned at once. Like [`Device::page`], the call does not move the
//! clock, so a driver with several requests in flight may issue commands at
//! times out of order (each waits for the dies it needs).
//!
//! Timing of what touches no flash: a read miss, `evict`, `clean` and
//! `exists` change or consult the map in the device's RAM and complete when
//! issued (the prototype returns a miss as a data pattern over the SATA link,
//! Section 3.2; the host link is not modelled by ftlab's device). A `flush`
//! completes when every flash operation issued before it has finished.

use ftlab_ftl::{ErrorKind, FtlError};
use ftlab_nand::{Payload, SimTime};

use crate::device::{Device, DeviceError};

/// A command of the solid-state cache, over disk block numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SscCommand {
    /// Caches `data` as the clean contents of `block`.
    WriteClean { block: u64, data: Payload },
    /// Caches `data` as the dirty contents of `block`.
    WriteDirty { block: u64, data: Payload },
    /// Reads `block`: a hit returns its data, a miss `None`.
    Read { block: u64 },
    /// Removes `block` from the cache.
    Evict { block: u64 },
    /// Marks a dirty `block` clean.
    Clean { block: u64 },
    /// Which of `count` blocks from `first` are dirty.
    Exists { first: u64, count: u64 },
    /// Makes earlier evicts and cleans durable.
    Flush,
}

impl SscCommand {
    /// The command's name, as errors give it.
    pub fn name(&self) -> &'static str {
        match self {
            SscCommand::WriteClean { .. } => "write-clean",
            SscCommand::WriteDirty { .. } => "write-dirty",
            SscCommand::Read { .. } => "ssc-read",
            SscCommand::Evict { .. } => "evict",
            SscCommand::Clean { .. } => "clean",
            SscCommand::Exists { .. } => "exists",
            SscCommand::Flush => "ssc-flush",
        }
    }

    fn block(&self) -> u64 {
        match self {
            SscCommand::WriteClean { block, .. }
            | SscCommand::WriteDirty { block, .. }
            | SscCommand::Read { block }
            | SscCommand::Evict { block }
            | SscCommand::Clean { block } => *block,
            SscCommand::Exists { first, .. } => *first,
            SscCommand::Flush => 0,
        }
    }
}

/// What a successful SSC command returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SscReply {
    /// A write, evict, clean or flush was carried out.
    Done,
    /// A read: the data on a hit, `None` on a miss.
    Read(Option<Payload>),
    /// An exists: one flag per block, dirty or not.
    Dirty(Vec<bool>),
}

/// A completed SSC command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SscDone {
    /// When it completed.
    pub completed: SimTime,
    /// What it returned.
    pub reply: SscReply,
}

impl Device {
    /// Whether the FTL is a solid-state cache (has the SSC capability).
    pub fn is_ssc(&mut self) -> bool {
        self.ftl.ssc().is_some()
    }

    /// Carries out SSC command `cmd` at `at` (at or after the clock, which it
    /// does not move) through the FTL's solid-state cache capability; see the
    /// [module documentation](crate::host::ssc) for its timing. Fails with
    /// [`DeviceError::Ftl`] (kind unsupported) when the FTL is not a cache,
    /// [`DeviceError::InThePast`] before the clock, [`DeviceError::PoweredOff`]
    /// after a power cut, and the FTL's error otherwise (a dirty write into a
    /// cache full of dirty blocks: kind no space).
    pub fn ssc(&mut self, at: SimTime, cmd: SscCommand) -> Result<SscDone, DeviceError> {
        let command = cmd.name();
        if at.0 < self.clock {
            return Err(DeviceError::InThePast { command, at: at.0, clock: self.clock });
        }
        if self.off_since.is_some() {
            return Err(DeviceError::PoweredOff { command });
        }
        let lpn = cmd.block();
        let fail = |source| DeviceError::Ftl { command, lpn, source };
        let mut io = self.flash.io(at);
        let cache = self
            .ftl
            .ssc()
            .ok_or_else(|| fail(FtlError::Unsupported("the solid-state cache's commands (use ftl kind `ssc`)")))?;
        let reply = match cmd {
            SscCommand::WriteClean { block, data } => cache.write_clean(&mut io, block, data).map(|()| SscReply::Done),
            SscCommand::WriteDirty { block, data } => cache.write_dirty(&mut io, block, data).map(|()| SscReply::Done),
            SscCommand::Read { block } => cache.read(&mut io, block).map(SscReply::Read),
            SscCommand::Evict { block } => cache.evict(&mut io, block).map(|()| SscReply::Done),
            SscCommand::Clean { block } => cache.clean(&mut io, block).map(|()| SscReply::Done),
            SscCommand::Exists { first, count } => cache.exists(&mut io, first, count).map(SscReply::Dirty),
            SscCommand::Flush => cache.flush(&mut io).map(|()| SscReply::Done),
        }
        .map_err(fail)?;
        Ok(SscDone { completed: io.completion().max(at), reply })
    }

    /// The SSC's occupancy and silent evictions, or `None` when the FTL is
    /// not a cache.
    pub fn ssc_state(&mut self) -> Option<SscState> {
        let c = self.ftl.ssc()?;
        Some(SscState {
            cached: c.cached_blocks(),
            dirty: c.dirty_blocks(),
            capacity: c.capacity(),
            evictions: c.evictions(),
        })
    }
}

/// A solid-state cache's occupancy and silent evictions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct SscState {
    /// Blocks cached (clean and dirty).
    pub cached: u64,
    /// Dirty blocks cached.
    pub dirty: u64,
    /// The most dirty blocks the cache may hold.
    pub capacity: u64,
    /// Clean blocks evicted silently by garbage collection so far.
    pub evictions: u64,
}

/// Whether `e` is the SSC's refusal of a dirty write into a cache full of
/// dirty blocks (the manager cleans and retries).
pub fn is_full(e: &DeviceError) -> bool {
    e.kind() == ErrorKind::NoSpace
}
