//! ftlab's NAND flash medium.
//!
//! The bottom layer of ftlab: the device shape ([`Geometry`]) with packed physical
//! addresses, chip timing ([`Timing`]) and the named chip presets of the papers
//! ([`presets`]), and a strict medium ([`Nand`]) that refuses what real NAND
//! refuses — programming a page that is not erased, programming out of order inside
//! a block, touching a bad block — keeps OOB metadata with every page, counts
//! erases, models wear (Eq. 27 of 000_ffe2fafb22bcad8e.txt), turns each operation
//! into a finish time on per-die and per-channel timelines, can lose power, and
//! injects program and erase failures ([`faults`]), writes its durable state
//! to a device image and reads it back ([`medium::image`]), and packs pages
//! with several logical units each, one OOB record per slot
//! ([`medium::packed`]).
//!
//! ```
//! use ftlab_nand::{presets, Nand, NandConfig, PageKind, Payload, SimTime};
//!
//! let chip = presets::preset("small-slc").unwrap();
//! let config = NandConfig {
//!     geometry: chip.geometry,
//!     timing: chip.timing,
//!     bad_block_rate: 0.0,
//!     wear: Default::default(),
//!     store: Default::default(),
//!     seed: 1,
//!     faults: Default::default(),
//!     commands: Default::default(),
//! };
//! let mut nand = Nand::new(&config).unwrap();
//! let ppa = nand.geometry().ppa(ftlab_nand::BlockId(0), 0);
//! let (_seq, span) = nand.program(ppa, 42, PageKind::Data, Payload::Token(7), SimTime::ZERO).unwrap();
//! assert!(span.finish > SimTime::ZERO);
//! // Programming it again without an erase is refused.
//! assert!(nand.program(ppa, 42, PageKind::Data, Payload::Token(8), span.finish).is_err());
//! ```

pub mod commands;
pub mod error;
pub mod faults;
pub mod geometry;
pub mod huge;
pub mod medium;
pub mod oob;
pub mod presets;
pub mod store;
pub mod time;
pub mod timeline;
pub mod timing;
pub mod wear;

pub use commands::Commands;
pub use error::{GeometryError, NandError, TimingError};
pub use faults::Faults;
pub use geometry::{BlockId, DieId, Geometry, PageAddr, Ppa};
pub use huge::HugeArray;
pub use medium::image::ImageError;
pub use medium::multi_plane::PlanePage;
pub use medium::packed::SLOT_RECORD_BYTES;
pub use medium::{MediumMemory, Nand, NandConfig, NandConfigError, Oob, PageKind, ProgramFailure};
pub use store::{PageStore, Payload, StoreKind};
pub use time::SimTime;
pub use timeline::{Issue, Span, Suspended};
pub use timing::Timing;
pub use wear::{WearConfig, WearModel};

#[cfg(test)]
mod commands_tests;
#[cfg(test)]
mod fault_tests;
#[cfg(test)]
mod image_tests;
#[cfg(test)]
mod packed_tests;
#[cfg(test)]
mod tests;
