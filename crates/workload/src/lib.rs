//! ftlab's workload inputs: what the simulator replays.
//!
//! * [`trace`] streams real block traces (UMass/SPC, MSR Cambridge, SYSTOR '17,
//!   blkparse text, DiskSim, MQSim, SSDsim) as [`HostRequest`]s, with transparent
//!   gzip / bzip2 / zstd decompression detected by magic bytes, in constant memory.
//!   A trace that yields no request, a time beyond the 64-bit ns clock or a file
//!   named `.gz`/`.bz2`/`.zst` that is not so compressed is an error, not a quiet
//!   empty or saturated result.
//! * [`address`] folds a trace's huge address space into a simulated device
//!   (modulo, compaction of the footprint, one device only, devices side by side).
//! * [`generate`] builds seeded, deterministic synthetic workloads (sequential,
//!   uniform, Zipf, hot/cold, PostMark-like, IOzone-like, and an LSM tree and a
//!   flash cache that label each request with its data's lifetime) from a serde
//!   [`GeneratorSpec`] that can come from a TOML `[workload]` table.
//! * [`filebench`] runs filebench-like personalities (fileserver, webserver,
//!   varmail) as block I/O over a simple extent layout.
//! * [`stats`] summarises any request stream (mix, sizes, footprint, sequentiality).
//!
//! Time is integer nanoseconds everywhere (`arrival_ns`); offsets and lengths are
//! bytes. Requests are returned in file order: some traces (TPC-C, SYSTOR) are not
//! time-sorted and the simulator is the one to sort them.
//!
//! ```
//! use ftlab_workload::{generate::GeneratorSpec, stats::trace_stats, Op};
//!
//! // The simulator's default workload: hot/cold 80/20 random single-page writes.
//! let spec = GeneratorSpec::preset("skewed-random-write").expect("built-in preset");
//! let requests = spec.build(1 << 16, 4096, 42).expect("valid spec").take(10_000);
//! let stats = trace_stats(requests.map(Ok)).expect("generators cannot fail");
//! assert_eq!(stats.requests, 10_000);
//! assert_eq!(stats.writes, 10_000);
//! println!("{stats}");
//!
//! // A real trace is read the same way (any of the formats in `TraceFormat::all()`):
//! // let reader = TraceReader::open("hm_0.csv.gz", "msr".parse()?, &ReadOptions::default())?;
//! # let _ = Op::Read;
//! ```
#![deny(missing_docs)]

pub mod address;
mod error;
pub mod filebench;
pub mod generate;
pub mod stats;
pub mod trace;

pub use address::{AddressMapper, AddressMode, AddressReport};
pub use error::TraceError;
pub use generate::GeneratorSpec;
pub use stats::{trace_stats, TraceStats};
pub use trace::{BlkEvent, ReadOptions, TraceFormat, TraceReader};

use serde::{Deserialize, Serialize};

/// What a host request asks of the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// Read `len` bytes.
    Read,
    /// Write `len` bytes.
    Write,
    /// Discard (trim / unmap) `len` bytes.
    Trim,
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Trim => "trim",
        })
    }
}

/// One block request as the host issues it.
///
/// Invariant (upheld by every reader and generator of this crate): `len > 0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HostRequest {
    /// Arrival time in nanoseconds (trace time; 0 for closed-loop generators).
    pub arrival_ns: u64,
    /// Read, write or trim.
    pub op: Op,
    /// Start, in bytes.
    pub offset: u64,
    /// Length in bytes, > 0.
    pub len: u32,
    /// ASU / disk number / LUN / device number; 0 if the source has none. For
    /// the generators that label lifetimes (`lsm`, `flashcache`:
    /// [`GeneratorSpec::labels_lifetimes`]), the lifetime label of the data.
    pub device: u32,
}

impl HostRequest {
    /// One past the last byte (`offset + len`), saturating.
    pub fn end(&self) -> u64 {
        self.offset.saturating_add(u64::from(self.len))
    }
}
