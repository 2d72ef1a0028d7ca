//! A CacheLib-like flash cache (`kind = "flashcache"`): the two engines of
//! CacheLib's Navy on one block device.
//!
//! - **Small-object cache (SOC)**: the first `soc_fraction` of the space, a
//!   set-associative hash of buckets of one page each. A small object (at most
//!   `small_threshold_bytes`) hashes to a bucket; inserting it rewrites the bucket's
//!   page, evicting the bucket's oldest objects until the new one fits (FIFO within
//!   the bucket). So SOC writes are random overwrites of single pages.
//! - **Large-object cache (LOC)**: the rest of the space, log-structured in regions
//!   of `region_pages`. A large object is appended (rounded up to whole pages) to the
//!   open region; when it does not fit, the next region opens, and when that region
//!   still holds objects (the LOC is full) the oldest region is evicted whole: its
//!   written pages are trimmed and its objects leave the index (FIFO eviction). So
//!   LOC writes are sequential within a region and each region dies at once.
//! - **Operations**: `operations` of them, each on a key drawn Zipf(`zipf_theta`)
//!   over `key_space` keys (key 0 most popular). A get (`get_fraction`) reads where
//!   the object lives (its bucket page, or its pages in the LOC) if it is cached; a
//!   miss inserts it, as a look-aside cache fills itself. A set inserts it with a
//!   fresh size, replacing any cached copy. Object sizes, in bytes, are drawn from
//!   `object_bytes` at each insertion.
//!
//! Each request's [`HostRequest::device`] is its **lifetime label**: 0 for the SOC
//! (short-lived pages, overwritten at random), 1 for the LOC (long-lived,
//! sequential, trimmed a region at a time). The simulator passes it on as the
//! write's stream (`Hint::stream`), the placement handle of an FDP device.

use std::collections::{HashMap, VecDeque};

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Zipf};
use serde::{Deserialize, Serialize};

use super::dist::{Arrival, Clock, SizeDist, SizeSampler};
use super::{check_fraction, invalid};
use crate::{HostRequest, Op, TraceError};

/// Label of the small-object cache's requests.
pub const SOC_LABEL: u32 = 0;
/// Label of the large-object cache's requests.
pub const LOC_LABEL: u32 = 1;

/// Parameters of [`GeneratorSpec::Flashcache`](super::GeneratorSpec::Flashcache).
/// Every field has the default written on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FlashCacheSpec {
    /// Cache operations (gets and sets), > 0 (default 1,000,000).
    pub operations: u64,
    /// Probability that an operation is a get, else a set (default 0.8).
    pub get_fraction: f64,
    /// Share of the space given to the small-object cache, in (0, 1) (default 0.1).
    pub soc_fraction: f64,
    /// Pages of a large-object cache region, > 0 (default 64).
    pub region_pages: u64,
    /// Object sizes in bytes (a size distribution read in bytes; default 256 B
    /// 40%, 1 KiB 35%, 8 KiB 15%, 32 KiB 10%).
    pub object_bytes: SizeDist,
    /// Largest small object, bytes: at most a page (default 2048).
    pub small_threshold_bytes: u32,
    /// Distinct keys, > 0 (default 1,000,000).
    pub key_space: u64,
    /// Zipf skew of the keys' popularity, > 0 (default 0.9).
    pub zipf_theta: f64,
    /// Arrival process of the operations (default closed loop).
    pub arrival: Arrival,
}

impl Default for FlashCacheSpec {
    fn default() -> Self {
        FlashCacheSpec {
            operations: 1_000_000,
            get_fraction: 0.8,
            soc_fraction: 0.1,
            region_pages: 64,
            object_bytes: SizeDist::discrete(vec![(256, 0.4), (1024, 0.35), (8192, 0.15), (32768, 0.1)]),
            small_threshold_bytes: 2048,
            key_space: 1_000_000,
            zipf_theta: 0.9,
            arrival: Arrival::Closed,
        }
    }
}

fn fc_invalid<T>(m: String) -> Result<T, TraceError> {
    invalid(format!("flashcache {m}"))
}

impl FlashCacheSpec {
    /// Checks the parameters that do not depend on the space.
    pub fn validate(&self) -> Result<(), TraceError> {
        for (name, v) in
            [("operations", self.operations), ("region_pages", self.region_pages), ("key_space", self.key_space)]
        {
            if v == 0 {
                return fc_invalid(format!("{name} must be > 0, got 0"));
            }
        }
        if self.small_threshold_bytes == 0 {
            return fc_invalid("small_threshold_bytes must be > 0, got 0".into());
        }
        check_fraction("flashcache", "get_fraction", self.get_fraction, false)?;
        check_fraction("flashcache", "soc_fraction", self.soc_fraction, true)?;
        if !(self.zipf_theta.is_finite() && self.zipf_theta > 0.0) {
            return fc_invalid(format!("zipf_theta must be > 0, got {}", self.zipf_theta));
        }
        self.object_bytes.validate("flashcache object_bytes")?;
        self.arrival.validate()
    }

    /// The generator over `pages` pages of `page_size` bytes.
    pub(crate) fn build(&self, pages: u64, page_size: u64, mut rng: ChaCha8Rng) -> Result<FlashCache, TraceError> {
        if u64::from(self.small_threshold_bytes) > page_size {
            return fc_invalid(format!(
                "small_threshold_bytes ({}) exceeds the page ({page_size} bytes): a small object lives in one bucket \
                 page; give at most {page_size}",
                self.small_threshold_bytes
            ));
        }
        // Rounded to the nearest page, at least one bucket.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
        let soc = ((self.soc_fraction * pages as f64).round() as u64).max(1);
        let regions = pages.saturating_sub(soc) / self.region_pages;
        if regions < 2 {
            return fc_invalid(format!(
                "needs at least 2 regions of region_pages ({}) after the {soc} SOC pages, the space of {pages} pages \
                 has {regions}: give a smaller region_pages or soc_fraction, or a larger space",
                self.region_pages
            ));
        }
        let largest = u64::from(self.object_bytes.max_pages()).div_ceil(page_size);
        if largest > self.region_pages {
            return fc_invalid(format!(
                "object_bytes up to {} bytes need {largest} pages, more than region_pages ({}): give larger regions \
                 or smaller objects",
                self.object_bytes.max_pages(),
                self.region_pages
            ));
        }
        if self.region_pages * page_size > u64::from(u32::MAX) {
            return fc_invalid(format!(
                "region_pages ({}) of {page_size} bytes exceeds the 4 GiB request limit",
                self.region_pages
            ));
        }
        let zipf = Zipf::new(self.key_space, self.zipf_theta)
            .map_err(|e| TraceError::InvalidSpec(format!("flashcache zipf_theta: {e}")))?;
        let salt = rng.gen();
        let regions_len = usize::try_from(regions).unwrap_or(usize::MAX);
        Ok(FlashCache {
            sizes: self.object_bytes.sampler()?,
            rng,
            clock: Clock::new(self.arrival),
            zipf,
            page_size,
            remaining: self.operations,
            get_fraction: self.get_fraction,
            small: u64::from(self.small_threshold_bytes),
            salt,
            soc_pages: soc,
            buckets: HashMap::new(),
            region_pages: self.region_pages,
            regions,
            open: 0,
            fill: vec![0; regions_len],
            members: vec![Vec::new(); regions_len],
            index: HashMap::new(),
            pending: VecDeque::new(),
            now: 0,
        })
    }
}

/// Where a cached object lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Soc { bucket: u64 },
    Loc { region: u64, start: u64, pages: u64 },
}

/// The stream of [`FlashCacheSpec`].
#[derive(Debug, Clone)]
pub(crate) struct FlashCache {
    rng: ChaCha8Rng,
    clock: Clock,
    zipf: Zipf<f64>,
    sizes: SizeSampler,
    page_size: u64,
    remaining: u64,
    get_fraction: f64,
    small: u64,
    salt: u64,
    soc_pages: u64,
    /// The objects (key, bytes) of each bucket written so far, oldest first.
    buckets: HashMap<u64, VecDeque<(u64, u64)>>,
    region_pages: u64,
    regions: u64,
    /// The region being filled, and the pages written and keys appended per region.
    open: u64,
    fill: Vec<u64>,
    members: Vec<Vec<u64>>,
    index: HashMap<u64, Place>,
    /// (op, first page, pages, label) still to issue.
    pending: VecDeque<super::Labelled>,
    now: u64,
}

/// SplitMix64's finalizer: a fixed, platform-independent hash of a key.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl FlashCache {
    fn region_start(&self, r: u64) -> u64 {
        self.soc_pages + r * self.region_pages
    }

    fn ix(r: u64) -> usize {
        usize::try_from(r).unwrap_or(usize::MAX)
    }

    /// Drops the cached copy of `key`, if any (an LOC copy stays as garbage
    /// in its region until the region is evicted).
    fn forget(&mut self, key: u64) {
        if let Some(Place::Soc { bucket }) = self.index.remove(&key) {
            if let Some(b) = self.buckets.get_mut(&bucket) {
                b.retain(|&(k, _)| k != key);
            }
        }
    }

    fn insert(&mut self, key: u64) {
        let bytes = u64::from(self.sizes.sample(&mut self.rng));
        self.forget(key);
        if bytes <= self.small {
            let bucket = mix(key ^ self.salt) % self.soc_pages;
            let objects = self.buckets.entry(bucket).or_default();
            objects.push_back((key, bytes));
            let mut used: u64 = objects.iter().map(|o| o.1).sum();
            while used > self.page_size {
                let Some((old, b)) = objects.pop_front() else { break };
                used -= b;
                self.index.remove(&old);
            }
            self.index.insert(key, Place::Soc { bucket });
            self.pending.push_back((Op::Write, bucket, 1, SOC_LABEL));
            return;
        }
        let pages = bytes.div_ceil(self.page_size);
        if self.fill[Self::ix(self.open)] + pages > self.region_pages {
            self.open = (self.open + 1) % self.regions;
            self.evict(self.open);
        }
        let r = self.open;
        let start = self.region_start(r) + self.fill[Self::ix(r)];
        self.fill[Self::ix(r)] += pages;
        self.members[Self::ix(r)].push(key);
        self.index.insert(key, Place::Loc { region: r, start, pages });
        self.pending.push_back((Op::Write, start, pages, LOC_LABEL));
    }

    /// Evicts region `r` if it holds anything: trims its written pages and
    /// drops its objects from the index.
    fn evict(&mut self, r: u64) {
        let written = std::mem::take(&mut self.fill[Self::ix(r)]);
        if written == 0 {
            return;
        }
        self.pending.push_back((Op::Trim, self.region_start(r), written, LOC_LABEL));
        for key in std::mem::take(&mut self.members[Self::ix(r)]) {
            if matches!(self.index.get(&key), Some(Place::Loc { region, .. }) if *region == r) {
                self.index.remove(&key);
            }
        }
    }

    fn operation(&mut self) {
        // Ranks are 1..=key_space as integral floats.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let key = (self.zipf.sample(&mut self.rng) as u64).saturating_sub(1);
        let get = self.rng.gen::<f64>() < self.get_fraction;
        match self.index.get(&key) {
            Some(&Place::Soc { bucket }) if get => self.pending.push_back((Op::Read, bucket, 1, SOC_LABEL)),
            Some(&Place::Loc { start, pages, .. }) if get => {
                self.pending.push_back((Op::Read, start, pages, LOC_LABEL))
            }
            _ => self.insert(key),
        }
    }
}

impl Iterator for FlashCache {
    type Item = HostRequest;

    fn next(&mut self) -> Option<HostRequest> {
        loop {
            if let Some(r) = self.pending.pop_front() {
                return Some(super::labelled_request(r, self.now, self.page_size));
            }
            if self.remaining == 0 {
                return None;
            }
            self.remaining -= 1;
            self.now = self.clock.tick(&mut self.rng);
            self.operation();
        }
    }
}
