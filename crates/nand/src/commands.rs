//! The advanced commands a chip may offer beyond page read, page program and
//! block erase, all off by default (`[device.commands]`):
//!
//! - **Multi-plane** program, read and erase ([`crate::Nand::program_multi`],
//!   [`crate::Nand::read_multi`], [`crate::Nand::erase_multi`]): one operation on
//!   up to `planes_per_die` planes of one die at once, one plane each, every page
//!   at the same page offset of its block (and, with `multi_plane_same_block`,
//!   the same block offset in its plane, as older chips require). A program
//!   moves each page over the channel into its plane's register, one after the
//!   other, then programs them all in one array time; a read senses them all in
//!   one array time, then moves each out; an erase takes one erase time. The
//!   planes of a die otherwise share its timeline: without these commands two
//!   planes' operations run one after the other.
//! - **Cache program**: the die has a cache register beside its page register.
//!   The next program's data moves into the cache register while the array
//!   programs the previous page, so a chain of programs on one die costs one
//!   transfer plus one program time per page instead of both. Reads and erases
//!   still wait for the die.
//! - **Erase suspension** for host reads (`erase_suspension`): a host read
//!   that finds its die in the middle of an erase, with nothing queued on the
//!   die behind it, suspends the erase (taking `suspend_erase_ns`), is sensed
//!   and moved out, and the erase resumes where it stopped: it finishes later
//!   by the time the die spent on the read and the suspension (a power cut
//!   before its new finish tears it). Reads that arrive while the erase is
//!   suspended run after the reads before them without another suspension. A
//!   read suspends only when that makes it start before the erase would have
//!   finished. Reads of garbage collection, maps and recovery never suspend.
//!
//! **Program suspension is not offered.** ftlab reserves an operation's time
//! when it is issued, and a write is acknowledged, and a garbage-collection
//! copy lets its victim be erased, at that reserved finish. A read issued later
//! that suspended the program would move the program's finish past a moment
//! already promised: an acknowledged write could be torn by a power cut, and
//! the victim of a copy erased before the copy is durable. An erase promises
//! nothing to anyone (a victim's pages were copied before it), so it can be
//! suspended. (MQSim's `CMD_Suspension_Support` of `PROGRAM` or
//! `PROGRAM_ERASE` is imported as erase suspension and the program part
//! reported as not modelled.)
//!
//! **Reads first** (`reads_first`): a host read that finds programs or erases
//! reserved on its die (or chip, with `serial_dies`) that have not started
//! when it is issued runs before them, after the operation under way and the
//! reads queued before it (or in a gap before such a read, if it fits there
//! whole: a read whose command first waited elsewhere, for a translation read
//! say, is reserved late and leaves the die idle until then), as MQSim's
//! transaction schedulers serve a chip's
//! read transactions before its writes and erases
//! (`src/ssd/TSU_OutofOrder.cpp:284-300`, `TSU_Priority_OutOfOrder.cpp:393-406`:
//! `service_read_transaction` first, then writes, then erases). The die's
//! later work moves later by the read's time, so the die does the same work in
//! all; the operations it passed keep the finish they were given when they were
//! issued (acknowledgements, a cache's write-backs and the power-cut model use
//! it), so their own delay is not seen: for a write acknowledged at its program
//! that is optimistic by the reads that passed it; behind a write cache, which
//! acknowledges from DRAM, it shortens only the back pressure. It does not
//! combine with cache program or erase suspension (refused).
//!
//! **Sector transfers** (`sector_transfers`): a page's transfer over the
//! channel moves its data without its spare area, and a host read or
//! program of part of a page moves only the bytes its request covers (a
//! read-modify-write's read the rest of the page), as MQSim's channel model
//! does: a transfer takes `Data_and_metadata_size_in_byte` of its
//! transaction (`src/ssd/NVM_PHY_ONFI_NVDDR2.cpp:101, 230-231, 629-632`,
//! `ONFI_Channel_NVDDR2.h:8-9`), the sectors a request's transaction carries
//! (`Host_Interface_NVMe.cpp:187-208`), an update read's the sectors it
//! fetches (`Address_Mapping_Unit_Page_Level.cpp:1172-1176`), and a garbage
//! collection move's the page's sectors (`GC_and_WL_Unit_Page_Level.cpp:167-174`),
//! never the page's metadata. The bytes are whole 512-byte sectors in MQSim;
//! ftlab moves the bytes the request covers. A multi-plane read moves whole
//! pages.
//!
//! **Multi-plane at any page** (`multi_plane_any_page`): a multi-plane
//! operation's pages may be at different page offsets of their blocks.
//! Chips pair planes at one page offset; this is the one relaxation that
//! lets ftlab's strict medium, which programs a block's pages in order,
//! take MQSim's scheduler's pairings. MQSim places a write's page when the
//! transaction is queued (`Address_Mapping_Unit_Page_Level.cpp`,
//! `allocate_page_in_plane_for_user_write`) and its scheduler pairs a chip's
//! queued writes for distinct planes at one page offset from anywhere in the
//! queue (`TSU_Base.cpp`, `issue_command_to_chip`), so it programs pages of
//! a block out of order: on the root file's scenario 3 with the map in RAM,
//! 2,987 of its 5,007 programmed pages, and 192 of its 245 two-plane
//! programs hold one. ftlab's write cache pairs its queued write-backs by the
//! same rule (the offset each would have had, counted when it joins its
//! die's queue), and the page map then programs them together at their
//! planes' next pages.
//!
//! Die interleaving (operations of different dies on one channel overlapping,
//! each die's array time hidden behind the others' transfers) is the default:
//! the timelines model it ([`crate::timeline`]). `serial_dies` turns it off
//! inside a chip: the dies of one chip (way) then run one operation at a time,
//! as MQSim's transaction scheduler issues them (a chip takes a command only
//! when it is idle, and a command addresses one die:
//! `src/ssd/TSU_Base.cpp:72-128`, `TSU_Priority_OutOfOrder.cpp:517-531`).

use serde::{Deserialize, Serialize};

use crate::timing::Timing;

/// The advanced commands a chip offers (see the module documentation); every
/// one off by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Commands {
    /// Multi-plane program, read and erase are accepted.
    pub multi_plane: bool,
    /// A multi-plane operation's blocks must also have the same block offset in
    /// their planes (MQSim's `block_address_constraint_for_multiplane`; its
    /// transaction scheduler groups by page offset only).
    pub multi_plane_same_block: bool,
    /// Cache program: the next program's transfer overlaps the array time of
    /// the one before on the same die.
    pub cache_program: bool,
    /// A host read may suspend an erase.
    pub erase_suspension: bool,
    /// Time to suspend an erase, ns (MQSim's `Suspend_Erase_Time`).
    pub suspend_erase_ns: u64,
    /// The dies of one chip run one operation at a time (no die interleaving
    /// inside a chip; channels and chips still run side by side).
    pub serial_dies: bool,
    /// A host read runs before the programs and erases reserved on its die
    /// that have not started (MQSim's transaction scheduler).
    pub reads_first: bool,
    /// A page's transfer moves its data without its spare area, and a host
    /// read or program of part of a page moves only the bytes its request
    /// carries (MQSim's channel model).
    pub sector_transfers: bool,
    /// A multi-plane operation's pages may be at different page offsets of
    /// their blocks (each block still programs its pages in order): what a
    /// strict medium can offer of MQSim's scheduler, which pairs pages it
    /// placed at one offset but programs out of order in their blocks.
    pub multi_plane_any_page: bool,
}

impl Commands {
    /// Whether every command is off (the default).
    pub fn is_none(&self) -> bool {
        *self == Commands::default()
    }

    /// Whether any command changes the timelines' arithmetic (multi-plane
    /// commands are explicit calls and need no state).
    #[inline]
    pub fn changes_timing(&self) -> bool {
        self.cache_program || self.erase_suspension
    }

    /// Checks the suspension time: at most [`Timing::MAX_OPERATION_NS`]; the
    /// error names the key.
    pub fn validate(&self) -> Result<(), String> {
        if self.reads_first && self.changes_timing() {
            let other = if self.cache_program { "cache_program" } else { "erase_suspension" };
            return Err(format!(
                "commands.reads_first does not combine with commands.{other}: a read that passes queued work and \
                 one that waits for the die's cache register or suspends its erase are two schedulers; turn one off"
            ));
        }
        let ns = self.suspend_erase_ns;
        if ns > Timing::MAX_OPERATION_NS {
            return Err(format!(
                "commands.suspend_erase_ns = {ns} ns is longer than any operation ({} ns); give the chip's erase \
                 suspend latency in nanoseconds",
                Timing::MAX_OPERATION_NS
            ));
        }
        Ok(())
    }
}
