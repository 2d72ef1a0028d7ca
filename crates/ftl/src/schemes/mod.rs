//! The schemes, grouped by family. Each module is one scheme (or a few named
//! configurations of one), with its config, builder, `Ftl` implementation and
//! registry entries (`SCHEMES`, listed in [`crate::registry::BUILTIN`]); the
//! machinery they share (allocation, victim pickers, page table, page core,
//! block map, hybrid core, map log, recovery scan) lives beside them at the
//! crate root.
//!
//! - [`page`]: page-mapped schemes without a real-time promise: pure page
//!   mapping, demand-based page mapping (DFTL), sub-page mapping, MultiLog.
//! - [`block`]: block- and hybrid-mapped schemes: NFTL, and the log-block
//!   schemes BAST, FAST and Janus-FTL over the hybrid core.
//! - [`realtime`]: the real-time schemes of 000, 001 and 002 and their
//!   real-time baselines: GFTL, RFTL, FSR, Lazy-RTGC, on-demand Lazy-RTGC,
//!   WAO-GC, Telomere.
//! - [`host`]: devices with a host interface beyond block commands: FlashTier's
//!   solid-state cache and the Nameless-Write device.

pub mod block;
pub mod host;
pub mod page;
pub mod realtime;
