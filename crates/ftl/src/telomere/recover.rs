//! Rebuilding Telomere after a power cut.

use super::{State, Telomere, TelomereConfig, POOL};
use crate::alloc::BlockAllocator;
use crate::{FtlError, Io};

impl Telomere {
    /// Rebuilds Telomere from the medium: reads every programmed page's OOB; for
    /// each logical page the copy with the newest sequence number wins. Blocks
    /// whose erase was torn are erased again. The OOB holds no expiry, so every
    /// written block joins the default pool with a stamp of "never" (its data is
    /// kept until overwritten); on each die the partly written block with the
    /// newest data is reopened for the pool, other partly written blocks are
    /// closed. Groups restart empty: the pool's GC frees their quota before the
    /// next write.
    pub fn recover(config: TelomereConfig, io: &mut Io) -> Result<Self, FtlError> {
        let mut ftl = Self::empty(config, io)?;
        let g = ftl.geometry;
        ftl.alloc = BlockAllocator::empty(&g, ftl.plan.groups.len() as u32 + 1);
        let scan = crate::scan::scan(io, &mut ftl.table)?;
        for b in scan.free {
            ftl.alloc.release(b);
        }
        let closed = scan.closed;
        for &b in closed.iter().chain(scan.open.iter().map(|(b, _)| b)) {
            ftl.owner[b.0 as usize] = POOL;
        }
        let mapped: Vec<(usize, ftlab_nand::Ppa)> = ftl.table.iter().collect();
        for (lpn, ppa) in mapped {
            ftl.map(lpn, ppa);
        }
        for b in closed {
            ftl.state[b.0 as usize] = State::Closed;
            ftl.picker.insert(b);
        }
        for (b, next) in scan.open {
            ftl.state[b.0 as usize] = State::Open;
            ftl.alloc.reopen(POOL, b, next);
        }
        Ok(ftl)
    }
}
