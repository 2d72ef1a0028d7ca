//! Seeded synthetic workloads.
//!
//! A [`GeneratorSpec`] (from code, or deserialized from a TOML `[workload]` table)
//! describes a workload over a logical space of `N` pages; [`GeneratorSpec::build`]
//! turns it into a streaming iterator of [`HostRequest`]s. Every random choice comes
//! from one [`ChaCha8Rng`] seeded with the given `u64`, drawn in a fixed order, so the
//! same spec, space and seed give the same requests on every platform.
//!
//! ```toml
//! [workload]
//! kind = "hotcold"          # sequential | uniform | zipf | hotcold | postmark | iozone | lsm | flashcache | phases
//! access_fraction = 0.8     # 80% of the accesses ...
//! space_fraction = 0.2      # ... go to the first 20% of the pages
//! requests = 1000000
//! read_fraction = 0.0
//! size = { kind = "fixed", pages = 1 }
//! arrival = { kind = "exponential", mean_ns = 50000.0 }
//! ```
//!
//! Two generators label each request with the lifetime class of its data, in
//! [`HostRequest::device`] ([`GeneratorSpec::labels_lifetimes`]), for placement
//! studies (FDP, streams, ZNS):
//!
//! ```toml
//! [workload]
//! kind = "lsm"              # a RocksDB-like LSM tree: labels WAL 0, L0 1, Li i + 1
//! operations = 200000
//! levels = 3
//! size_ratio = 10
//! sst_pages = 64
//!
//! [workload]
//! kind = "flashcache"       # a CacheLib-like flash cache: labels SOC 0, LOC 1
//! operations = 1000000
//! soc_fraction = 0.1
//! region_pages = 64
//! ```

mod dist;
mod files;
mod flashcache;
mod lsm;
mod synthetic;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::Zipf;
use serde::{Deserialize, Serialize};

use dist::Clock;
pub use dist::{Arrival, SizeDist};
use files::{IoZone, PostMark};
pub use flashcache::{FlashCacheSpec, LOC_LABEL, SOC_LABEL};
pub use lsm::LsmSpec;
use synthetic::{Placement, Synthetic};

use crate::{HostRequest, TraceError};

/// A boxed request stream, as [`GeneratorSpec::build`] returns.
pub type RequestStream = Box<dyn Iterator<Item = HostRequest> + Send>;

/// Default request count of the four address patterns.
pub const DEFAULT_REQUESTS: u64 = 1_000_000;

fn default_requests() -> u64 {
    DEFAULT_REQUESTS
}
fn half() -> f64 {
    0.5
}
fn default_files() -> u64 {
    500
}
fn default_file_pages() -> SizeDist {
    SizeDist::uniform(1, 16)
}
fn default_transactions() -> u64 {
    50_000
}
fn default_record_pages() -> u32 {
    16
}

/// A synthetic workload. Fields left out of a TOML table take the default written on
/// them; unknown fields are an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum GeneratorSpec {
    /// Back-to-back requests from page 0, wrapping to 0 at the end of the space.
    Sequential {
        /// Requests to issue (default 1,000,000).
        #[serde(default = "default_requests")]
        requests: u64,
        /// Probability that a request is a read, else a write (default 0).
        #[serde(default)]
        read_fraction: f64,
        /// Request size in pages (default one page).
        #[serde(default)]
        size: SizeDist,
        /// Arrival process (default closed loop).
        #[serde(default)]
        arrival: Arrival,
        /// Pages from one request's start to the next, >= 1 (default: the
        /// request's size, back to back). With a stride `s`, a pass starts
        /// at page `k` and visits `k, k + s, k + 2s, ...`; when the next
        /// request would not fit, the next pass starts at `k + 1` (at 0 after
        /// pass `s - 1`). `s` = pages per block writes the logical blocks
        /// round-robin, page 0 of each, then page 1, ...: the worst-case
        /// arrival sequence of 002 Section IV-D (Figure 6).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stride: Option<u64>,
    },
    /// Start pages uniform over the space.
    Uniform {
        /// Requests to issue (default 1,000,000).
        #[serde(default = "default_requests")]
        requests: u64,
        /// Probability that a request is a read, else a write (default 0).
        #[serde(default)]
        read_fraction: f64,
        /// Request size in pages (default one page).
        #[serde(default)]
        size: SizeDist,
        /// Arrival process (default closed loop).
        #[serde(default)]
        arrival: Arrival,
    },
    /// Start pages Zipf-distributed: page `k` has weight `1 / (k + 1)^theta`, so the
    /// popular pages are the lowest addresses.
    Zipf {
        /// Skew, > 0 (0.99 is the YCSB default).
        theta: f64,
        /// Requests to issue (default 1,000,000).
        #[serde(default = "default_requests")]
        requests: u64,
        /// Probability that a request is a read, else a write (default 0).
        #[serde(default)]
        read_fraction: f64,
        /// Request size in pages (default one page).
        #[serde(default)]
        size: SizeDist,
        /// Arrival process (default closed loop).
        #[serde(default)]
        arrival: Arrival,
    },
    /// `access_fraction` of the requests start in the hot region (the first
    /// `space_fraction` of the pages), the rest in the cold region, uniformly in each.
    Hotcold {
        /// Share of requests to the hot region, in (0, 1).
        access_fraction: f64,
        /// Share of the space that is hot, in (0, 1).
        space_fraction: f64,
        /// Requests to issue (default 1,000,000).
        #[serde(default = "default_requests")]
        requests: u64,
        /// Probability that a request is a read, else a write (default 0).
        #[serde(default)]
        read_fraction: f64,
        /// Request size in pages (default one page).
        #[serde(default)]
        size: SizeDist,
        /// Arrival process (default closed loop).
        #[serde(default)]
        arrival: Arrival,
    },
    /// PostMark-like small-file churn: create `files` files, run `transactions`
    /// transactions (read or append, then create or delete), delete what is left.
    /// Deletes are trims. Each file has a slot as large as the largest file size.
    Postmark {
        /// Files created up front, > 0 (default 500).
        #[serde(default = "default_files")]
        files: u64,
        /// File size and append size in pages (default uniform 1..=16).
        #[serde(default = "default_file_pages")]
        file_pages: SizeDist,
        /// Transactions (default 50,000).
        #[serde(default = "default_transactions")]
        transactions: u64,
        /// Probability that a transaction reads its file rather than appends (default 0.5).
        #[serde(default = "half")]
        read_fraction: f64,
        /// Probability that a transaction creates rather than deletes a file (default 0.5).
        #[serde(default = "half")]
        create_fraction: f64,
        /// Arrival process (default closed loop).
        #[serde(default)]
        arrival: Arrival,
    },
    /// IOzone-like: over a test file at page 0, sequential write, rewrite, read and
    /// reread passes in records, then random record reads and writes.
    Iozone {
        /// Test file size in pages (default: half the space).
        #[serde(default)]
        file_pages: Option<u64>,
        /// Record (request) size in pages, > 0 (default 16).
        #[serde(default = "default_record_pages")]
        record_pages: u32,
        /// Random-phase operations (default: as many as the file has records).
        #[serde(default)]
        random_ops: Option<u64>,
        /// Probability that a random-phase operation is a read (default 0.5).
        #[serde(default = "half")]
        read_fraction: f64,
        /// Arrival process (default closed loop).
        #[serde(default)]
        arrival: Arrival,
    },
    /// A RocksDB-like LSM tree ([`LsmSpec`], module `lsm`): write-ahead log,
    /// memtable flushes to L0, leveled compaction, deleted files trimmed, optional
    /// point reads. Each request's `device` is its lifetime label, not a device
    /// number: 0 for the log, 1 for L0, `i + 1` for level `i`; the simulator makes
    /// it the write's stream (an FDP device's placement handle).
    Lsm(LsmSpec),
    /// A CacheLib-like flash cache ([`FlashCacheSpec`], module `flashcache`): a
    /// small-object cache of one-page buckets rewritten in place and a
    /// log-structured large-object cache evicted a region at a time (trims). Each
    /// request's `device` is its lifetime label: [`SOC_LABEL`] (0) or
    /// [`LOC_LABEL`] (1); the simulator makes it the write's stream.
    Flashcache(FlashCacheSpec),
    /// Workloads one after another (e.g. PostMark runs with different file
    /// sets, 004 Figure 8): phase `i` is built with seed `seed + i` over the
    /// same space, its arrivals shifted to start at the last arrival of the
    /// phase before. Every phase has the same arrival process.
    Phases {
        /// The phases, in order; at least one.
        phases: Vec<GeneratorSpec>,
    },
}

/// A named built-in workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    /// Name to select it by.
    pub name: &'static str,
    /// One line.
    pub description: &'static str,
    /// The workload.
    pub spec: GeneratorSpec,
}

/// The fields shared by the four address patterns.
struct Mix<'a> {
    requests: u64,
    read_fraction: f64,
    size: &'a SizeDist,
    arrival: Arrival,
}

fn invalid<T>(message: String) -> Result<T, TraceError> {
    Err(TraceError::InvalidSpec(message))
}

/// The message of an invalid-spec error without its wrapper's prefix, to nest.
fn strip(e: &TraceError) -> String {
    match e {
        TraceError::InvalidSpec(m) => m.clone(),
        e => e.to_string(),
    }
}

/// [`GeneratorSpec::Phases`]: the phases' streams one after another.
struct Phased {
    streams: std::collections::VecDeque<RequestStream>,
    /// Shift of the current phase's arrivals, and the last arrival issued.
    offset: u64,
    last: u64,
}

impl Iterator for Phased {
    type Item = HostRequest;

    fn next(&mut self) -> Option<HostRequest> {
        loop {
            let s = self.streams.front_mut()?;
            if let Some(mut r) = s.next() {
                r.arrival_ns = r.arrival_ns.saturating_add(self.offset);
                self.last = r.arrival_ns;
                return Some(r);
            }
            self.streams.pop_front();
            self.offset = self.last;
        }
    }
}

/// A request of a generator that labels its data's lifetimes (`lsm`,
/// `flashcache`), in pages: operation, first page, pages, label.
type Labelled = (crate::Op, u64, u64, u32);

/// `r` as the host request it is at `now`, pages of `page_size` bytes (the
/// label in [`HostRequest::device`]); a length past `u32` bytes saturates
/// (the generators refuse such sizes when built).
fn labelled_request((op, start, pages, label): Labelled, now: u64, page_size: u64) -> HostRequest {
    HostRequest {
        arrival_ns: now,
        op,
        offset: start * page_size,
        len: u32::try_from(pages * page_size).unwrap_or(u32::MAX),
        device: label,
    }
}

fn check_fraction(kind: &str, name: &str, x: f64, open: bool) -> Result<(), TraceError> {
    let ok = if open { x > 0.0 && x < 1.0 } else { (0.0..=1.0).contains(&x) };
    if ok {
        return Ok(());
    }
    let range = if open { "(0, 1)" } else { "[0, 1]" };
    invalid(format!("{kind} {name} must be in {range}, got {x}"))
}

impl GeneratorSpec {
    /// The `kind` tag.
    pub fn kind(&self) -> &'static str {
        match self {
            GeneratorSpec::Sequential { .. } => "sequential",
            GeneratorSpec::Uniform { .. } => "uniform",
            GeneratorSpec::Zipf { .. } => "zipf",
            GeneratorSpec::Hotcold { .. } => "hotcold",
            GeneratorSpec::Postmark { .. } => "postmark",
            GeneratorSpec::Iozone { .. } => "iozone",
            GeneratorSpec::Lsm(_) => "lsm",
            GeneratorSpec::Flashcache(_) => "flashcache",
            GeneratorSpec::Phases { .. } => "phases",
        }
    }

    /// The arrival process of the workload.
    pub fn arrival(&self) -> Arrival {
        match self {
            GeneratorSpec::Sequential { arrival, .. }
            | GeneratorSpec::Uniform { arrival, .. }
            | GeneratorSpec::Zipf { arrival, .. }
            | GeneratorSpec::Hotcold { arrival, .. }
            | GeneratorSpec::Postmark { arrival, .. }
            | GeneratorSpec::Iozone { arrival, .. }
            | GeneratorSpec::Lsm(LsmSpec { arrival, .. })
            | GeneratorSpec::Flashcache(FlashCacheSpec { arrival, .. }) => *arrival,
            GeneratorSpec::Phases { phases } => phases.first().map_or(Arrival::Closed, GeneratorSpec::arrival),
        }
    }

    /// Requests the workload issues, where a field fixes them (`None` for
    /// `postmark`, `iozone`, `lsm` and `flashcache`, whose count follows from
    /// their state, and for `phases` with one of those).
    pub fn requests(&self) -> Option<u64> {
        if let GeneratorSpec::Phases { phases } = self {
            return phases.iter().map(GeneratorSpec::requests).sum();
        }
        self.mix().map(|m| m.requests)
    }

    fn mix(&self) -> Option<Mix<'_>> {
        match self {
            GeneratorSpec::Sequential { requests, read_fraction, size, arrival, .. }
            | GeneratorSpec::Uniform { requests, read_fraction, size, arrival }
            | GeneratorSpec::Zipf { requests, read_fraction, size, arrival, .. }
            | GeneratorSpec::Hotcold { requests, read_fraction, size, arrival, .. } => {
                Some(Mix { requests: *requests, read_fraction: *read_fraction, size, arrival: *arrival })
            }
            GeneratorSpec::Postmark { .. }
            | GeneratorSpec::Iozone { .. }
            | GeneratorSpec::Lsm(_)
            | GeneratorSpec::Flashcache(_)
            | GeneratorSpec::Phases { .. } => None,
        }
    }

    /// Whether each request's [`HostRequest::device`] is the lifetime label of its
    /// data (`lsm`, `flashcache`, and `phases` made only of them) rather than a
    /// device number: a simulator passes it on as the write's stream.
    pub fn labels_lifetimes(&self) -> bool {
        match self {
            GeneratorSpec::Lsm(_) | GeneratorSpec::Flashcache(_) => true,
            GeneratorSpec::Phases { phases } => phases.iter().all(GeneratorSpec::labels_lifetimes),
            _ => false,
        }
    }

    /// Checks the parameters that do not depend on the device.
    pub fn validate(&self) -> Result<(), TraceError> {
        let kind = self.kind();
        if let Some(m) = self.mix() {
            if m.requests == 0 {
                return invalid(format!("{kind} requests must be > 0, got 0"));
            }
            check_fraction(kind, "read_fraction", m.read_fraction, false)?;
            m.size.validate(&format!("{kind} size"))?;
            m.arrival.validate()?;
        }
        match self {
            GeneratorSpec::Zipf { theta, .. } if !(theta.is_finite() && *theta > 0.0) => {
                invalid(format!("zipf theta must be > 0, got {theta}"))
            }
            GeneratorSpec::Hotcold { access_fraction, space_fraction, .. } => {
                check_fraction(kind, "access_fraction", *access_fraction, true)?;
                check_fraction(kind, "space_fraction", *space_fraction, true)
            }
            GeneratorSpec::Postmark { files, file_pages, read_fraction, create_fraction, arrival, .. } => {
                if *files == 0 {
                    return invalid("postmark files must be > 0, got 0".into());
                }
                file_pages.validate("postmark file_pages")?;
                check_fraction(kind, "read_fraction", *read_fraction, false)?;
                check_fraction(kind, "create_fraction", *create_fraction, false)?;
                arrival.validate()
            }
            GeneratorSpec::Iozone { file_pages, record_pages, read_fraction, arrival, .. } => {
                if *record_pages == 0 {
                    return invalid("iozone record_pages must be > 0, got 0".into());
                }
                if *file_pages == Some(0) {
                    return invalid("iozone file_pages must be > 0, got 0".into());
                }
                check_fraction(kind, "read_fraction", *read_fraction, false)?;
                arrival.validate()
            }
            GeneratorSpec::Lsm(spec) => spec.validate(),
            GeneratorSpec::Flashcache(spec) => spec.validate(),
            GeneratorSpec::Phases { phases } => {
                let Some(first) = phases.first() else {
                    return invalid("phases needs at least one phase, got none".into());
                };
                for (i, p) in phases.iter().enumerate() {
                    p.validate().map_err(|e| TraceError::InvalidSpec(format!("phases[{i}]: {}", strip(&e))))?;
                    if p.arrival() != first.arrival() {
                        return invalid(format!(
                            "phases[{i}]: every phase needs the same arrival process as phases[0] ({:?}), got {:?}",
                            first.arrival(),
                            p.arrival()
                        ));
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Validates the spec against a space of `logical_pages` pages of `page_size`
    /// bytes and returns its request stream, seeded with `seed`.
    pub fn build(&self, logical_pages: u64, page_size: u32, seed: u64) -> Result<RequestStream, TraceError> {
        self.validate()?;
        let kind = self.kind();
        let n = logical_pages;
        if n == 0 || page_size == 0 {
            return invalid(format!(
                "{kind}: the space needs at least one page of at least one byte, got {n} pages of {page_size} bytes"
            ));
        }
        let ps = u64::from(page_size);
        let fits = |what: &str, pages: u64| -> Result<(), TraceError> {
            if pages > n {
                return invalid(format!("{kind} {what} of {pages} pages exceeds the space of {n} pages"));
            }
            if pages * ps > u64::from(u32::MAX) {
                return invalid(format!(
                    "{kind} {what} of {pages} pages of {page_size} bytes exceeds the 4 GiB request limit"
                ));
            }
            Ok(())
        };
        let rng = ChaCha8Rng::seed_from_u64(seed);
        if let Some(m) = self.mix() {
            fits("request size", u64::from(m.size.max_pages()))?;
            let placement = match self {
                GeneratorSpec::Zipf { theta, .. } => {
                    Placement::Zipf(Zipf::new(n, *theta).map_err(|e| TraceError::InvalidSpec(format!("zipf: {e}")))?)
                }
                GeneratorSpec::Hotcold { access_fraction, space_fraction, .. } => {
                    if n < 2 {
                        return invalid(format!("hotcold needs at least 2 pages, got {n}"));
                    }
                    // Round to the nearest page, keeping both regions non-empty.
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
                    let hot = ((space_fraction * n as f64).round() as u64).clamp(1, n - 1);
                    Placement::HotCold { access: *access_fraction, hot_pages: hot }
                }
                GeneratorSpec::Sequential { stride, .. } => {
                    if *stride == Some(0) {
                        return invalid("sequential stride must be >= 1 page, got 0".into());
                    }
                    Placement::Sequential { next: 0, pass: 0, stride: *stride }
                }
                _ => Placement::Uniform,
            };
            return Ok(Box::new(Synthetic {
                rng,
                placement,
                pages: n,
                page_size: ps,
                remaining: m.requests,
                read_fraction: m.read_fraction,
                size: m.size.sampler()?,
                clock: Clock::new(m.arrival),
            }));
        }
        match self {
            GeneratorSpec::Postmark { files, file_pages, transactions, read_fraction, create_fraction, arrival } => {
                let slot_pages = u64::from(file_pages.max_pages());
                fits("file", slot_pages)?;
                let slots = n / slot_pages;
                if slots < *files {
                    return invalid(format!(
                        "postmark: {files} files of up to {slot_pages} pages need {} pages, the space has {n}",
                        files.saturating_mul(slot_pages)
                    ));
                }
                Ok(Box::new(PostMark::new(
                    rng,
                    Clock::new(*arrival),
                    ps,
                    file_pages.sampler()?,
                    slot_pages,
                    slots,
                    *files,
                    *transactions,
                    *read_fraction,
                    *create_fraction,
                )))
            }
            GeneratorSpec::Iozone { file_pages, record_pages, random_ops, read_fraction, arrival } => {
                let file = file_pages.unwrap_or((n / 2).max(1));
                fits("test file", file)?;
                let record = u64::from(*record_pages);
                if record > file {
                    return invalid(format!("iozone record_pages ({record}) exceeds the test file ({file} pages)"));
                }
                fits("record", record)?;
                Ok(Box::new(IoZone {
                    rng,
                    clock: Clock::new(*arrival),
                    page_size: ps,
                    file_pages: file,
                    record_pages: record,
                    random_ops: random_ops.unwrap_or(file.div_ceil(record)),
                    read_fraction: *read_fraction,
                    phase: 0,
                    pos: 0,
                }))
            }
            GeneratorSpec::Lsm(spec) => Ok(Box::new(spec.build(n, ps, rng)?)),
            GeneratorSpec::Flashcache(spec) => Ok(Box::new(spec.build(n, ps, rng)?)),
            GeneratorSpec::Phases { phases } => {
                let mut streams = Vec::with_capacity(phases.len());
                for (i, p) in phases.iter().enumerate() {
                    let s = p
                        .build(n, page_size, seed.wrapping_add(i as u64))
                        .map_err(|e| TraceError::InvalidSpec(format!("phases[{i}]: {}", strip(&e))))?;
                    streams.push(s);
                }
                Ok(Box::new(Phased { streams: streams.into_iter().collect(), offset: 0, last: 0 }))
            }
            // The four address patterns returned above.
            _ => invalid(format!("{kind}: no generator")),
        }
    }

    /// The named built-in workloads.
    pub fn presets() -> Vec<Preset> {
        let one_page = SizeDist::fixed(1);
        vec![
            Preset {
                name: "skewed-random-write",
                description: "hot/cold 80/20 random single-page writes (the simulator's default)",
                spec: GeneratorSpec::Hotcold {
                    access_fraction: 0.8,
                    space_fraction: 0.2,
                    requests: DEFAULT_REQUESTS,
                    read_fraction: 0.0,
                    size: one_page.clone(),
                    arrival: Arrival::Closed,
                },
            },
            Preset {
                name: "uniform-random-write",
                description: "uniform random single-page writes",
                spec: GeneratorSpec::Uniform {
                    requests: DEFAULT_REQUESTS,
                    read_fraction: 0.0,
                    size: one_page.clone(),
                    arrival: Arrival::Closed,
                },
            },
            Preset {
                name: "sequential-write",
                description: "sequential 32-page writes, wrapping over the space",
                spec: GeneratorSpec::Sequential {
                    requests: DEFAULT_REQUESTS,
                    read_fraction: 0.0,
                    size: SizeDist::fixed(32),
                    arrival: Arrival::Closed,
                    stride: None,
                },
            },
            Preset {
                name: "random-read-write",
                description: "uniform random single-page requests, 70% reads",
                spec: GeneratorSpec::Uniform {
                    requests: DEFAULT_REQUESTS,
                    read_fraction: 0.7,
                    size: one_page,
                    arrival: Arrival::Closed,
                },
            },
            Preset {
                name: "zipf-mixed",
                description: "Zipf 0.99 start pages, half reads, 1/2/8-page requests (70/20/10%)",
                spec: GeneratorSpec::Zipf {
                    theta: 0.99,
                    requests: DEFAULT_REQUESTS,
                    read_fraction: 0.5,
                    size: SizeDist::discrete(vec![(1, 0.7), (2, 0.2), (8, 0.1)]),
                    arrival: Arrival::Closed,
                },
            },
            Preset {
                name: "postmark",
                description: "PostMark-like: 500 small files, 50,000 transactions, deletes as trims",
                spec: GeneratorSpec::Postmark {
                    files: default_files(),
                    file_pages: default_file_pages(),
                    transactions: default_transactions(),
                    read_fraction: 0.5,
                    create_fraction: 0.5,
                    arrival: Arrival::Closed,
                },
            },
            Preset {
                name: "iozone",
                description: "IOzone-like: write, rewrite, read, reread, random phases over half the space",
                spec: GeneratorSpec::Iozone {
                    file_pages: None,
                    record_pages: default_record_pages(),
                    random_ops: None,
                    read_fraction: 0.5,
                    arrival: Arrival::Closed,
                },
            },
        ]
    }

    /// The preset called `name`, if any.
    pub fn preset(name: &str) -> Option<GeneratorSpec> {
        Self::presets().into_iter().find(|p| p.name == name).map(|p| p.spec)
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_lifetimes;
