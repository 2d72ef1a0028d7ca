//! Host-side placement policies (`[workload] placement`): what stream each
//! write carries in its hint ([`ftlab_ftl::Hint::stream`]), the placement
//! identifier an FDP device picks its reclaim unit handle by (`fdp`) and a
//! host FTL over ZNS picks its open zone by (`zns-host`, `ftl.streams`).
//!
//! ```toml
//! [workload]
//! trace = "financial1.ascii"
//! trace_format = "ssdsim-ascii"
//! placement = { policy = "lifetime", streams = 4 }
//! ```
//!
//! - `none`: no stream on any write (an FDP device's default handle, one
//!   open zone): the baseline, dropping a generator's lifetime labels.
//! - `volume`: a trace's volume (its ASU, disk, LUN or device number), modulo
//!   `streams`: placement by stream/volume, what a host that keeps each
//!   tenant apart does.
//! - `lifetime`: the lifetime the page's last write had, a SepBIT-style
//!   inference (Wang et al., FAST '22: a block invalidated young was likely
//!   written by a short-lived stream, and so is the data replacing it). The
//!   clock is pages written. When a write replaces a page written `v` pages
//!   of writes ago, `v` is an observed lifetime; `l` is the mean of those
//!   observed so far (a running mean over every write). The write's stream
//!   counts down from `streams - 1` by the thresholds `l x 4^(j - streams +
//!   3)`, j = 0 .. streams - 2, that `v` reaches (two streams: `v < 4 l` is
//!   stream 1, the short-lived, else stream 0; four: `l / 4`, `l` and `4 l`):
//!   the longest-lived data goes to stream 0, the default handle, with the
//!   writes that carry no stream (a precondition's fill). A page never written
//!   before goes to stream 0 too (its lifetime is unknown: as SepBIT, it is
//!   taken for long).
//!   The top threshold is above the mean because lifetimes spread: a page
//!   rewritten at random intervals of mean `m` outlives `m` a third of the
//!   time (SepBIT's threshold is the lifetime of whole segments of short-lived
//!   data, likewise longer than their blocks' mean). Writes into space the
//!   host trimmed are new writes: a log-structured host (an LSM tree) that
//!   writes each file into freed space gets no inference. Garbage collection's copies
//!   are the device's and are not classed here (SepBIT classes them by age
//!   too).
//! - `oracle`: the lifetime each write will have, from the workload's
//!   future: the pages of writes until its page is next written or trimmed
//!   (never: stream 0), classed by the same thresholds against the
//!   mean of the finite ones over the whole workload. The whole request
//!   stream is read first (the trace with its repeats, the requests a
//!   `max_requests` leaves out included), so it costs memory in proportion
//!   (about 64 bytes a request).
//!
//! A request spanning several pages is classed by its first page. A flow's
//! `stream` replaces the policy's stream; a generator's lifetime labels
//! (`lsm`, `flashcache`) are replaced by it.

use ftlab_workload::Op;
use serde::{Deserialize, Serialize};

use crate::error::SimError;

/// Most streams a placement policy uses.
pub const MAX_STREAMS: u32 = 64;

/// A placement policy (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    None,
    Volume,
    Lifetime,
    Oracle,
}

/// `[workload] placement`: a policy and how many streams it uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlacementSpec {
    pub policy: Policy,
    /// Streams the policy spreads writes over, 1 to [`MAX_STREAMS`]
    /// (default 2). An FDP device needs at least as many handles.
    #[serde(default = "two")]
    pub streams: u32,
}

fn two() -> u32 {
    2
}

impl PlacementSpec {
    /// Checks the fields; errors name them.
    pub fn validate(&self, trace: bool) -> Result<(), SimError> {
        if !(1..=MAX_STREAMS).contains(&self.streams) {
            return Err(SimError::config(
                "workload.placement.streams",
                format!("workload.placement.streams must be 1 to {MAX_STREAMS}, got {}", self.streams),
            ));
        }
        if self.policy == Policy::Volume && !trace {
            return Err(SimError::config(
                "workload.placement.policy",
                "workload.placement.policy = \"volume\" places by a trace's volume numbers: it needs workload.trace \
                 (a generator's lifetime labels, lsm and flashcache, reach the stream without a policy)",
            ));
        }
        Ok(())
    }
}

/// The stream of a lifetime `v` against the mean lifetime `l`: `streams -
/// 1` less how many of the thresholds `l x 4^(j - streams + 3)` it reaches
/// (the shortest-lived the highest stream); `None` (unknown or never
/// ending): stream 0.
fn class(v: Option<f64>, l: f64, streams: u32) -> u32 {
    let Some(v) = v else { return 0 };
    let reached =
        (0..streams.saturating_sub(1)).filter(|&j| v >= l * 4f64.powi(j as i32 - streams as i32 + 3)).count() as u32;
    streams - 1 - reached
}

/// The `lifetime` policy's state: each page's last write, on the clock of
/// pages written, and the running mean of the lifetimes seen.
#[derive(Debug, Clone)]
pub(crate) struct Inference {
    streams: u32,
    page_bytes: u64,
    clock: u64,
    /// Per page, 1 + the clock of its last write (0: never written).
    last: Vec<u64>,
    sum: f64,
    seen: u64,
}

impl Inference {
    pub(crate) fn new(streams: u32, page_bytes: u32, pages: u64) -> Self {
        Inference {
            streams,
            page_bytes: u64::from(page_bytes.max(1)),
            clock: 0,
            last: vec![0; pages as usize],
            sum: 0.0,
            seen: 0,
        }
    }

    /// The stream of a request of `op` over `len` bytes at `offset`: for a
    /// write, `Some(stream)`; `None` for a read or a trim (a trim forgets its
    /// pages).
    pub(crate) fn place(&mut self, op: Op, offset: u64, len: u32) -> Option<u32> {
        let first = offset / self.page_bytes;
        let pages = u64::from(len).div_ceil(self.page_bytes).max(1);
        match op {
            Op::Write => {
                let mut lifetime = None;
                for (k, p) in (first..first + pages).enumerate() {
                    let Some(slot) = self.last.get_mut(p as usize) else { continue };
                    if *slot > 0 {
                        let v = (self.clock + k as u64 + 1 - *slot) as f64;
                        self.sum += v;
                        self.seen += 1;
                        if k == 0 {
                            lifetime = Some(v);
                        }
                    }
                    *slot = self.clock + k as u64 + 1;
                }
                self.clock += pages;
                let mean = if self.seen > 0 { self.sum / self.seen as f64 } else { 1.0 };
                Some(class(lifetime, mean, self.streams))
            }
            Op::Trim => {
                for p in first..first + pages {
                    if let Some(slot) = self.last.get_mut(p as usize) {
                        *slot = 0;
                    }
                }
                None
            }
            Op::Read => None,
        }
    }
}

/// The `oracle` policy over the whole workload, each request given as
/// `(op, offset, len)` in order: each write's stream, from its first page's
/// future lifetime (`None` for a read or a trim).
pub(crate) fn oracle(requests: &[(Op, u64, u32)], streams: u32, page_bytes: u32) -> Vec<Option<u32>> {
    let page_bytes = u64::from(page_bytes.max(1));
    let pages_of = |len: u32| u64::from(len).div_ceil(page_bytes).max(1);
    // Each request's first page and clock (pages written before it).
    let mut clock = 0u64;
    let mut at = Vec::with_capacity(requests.len());
    for &(op, offset, len) in requests {
        at.push((offset / page_bytes, clock));
        if op == Op::Write {
            clock += pages_of(len);
        }
    }
    // Backwards: the clock of each page's next write or trim.
    let mut next: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    let mut life: Vec<Option<f64>> = vec![None; requests.len()];
    for (k, &(op, _, len)) in requests.iter().enumerate().rev() {
        let (page, t) = at[k];
        if op == Op::Write {
            life[k] = next.get(&page).map(|&n| (n - t) as f64);
        }
        if op != Op::Read {
            for p in page..page + pages_of(len) {
                next.insert(p, t);
            }
        }
    }
    let finite: Vec<f64> = life.iter().flatten().copied().collect();
    let mean = if finite.is_empty() { 1.0 } else { finite.iter().sum::<f64>() / finite.len() as f64 };
    requests.iter().zip(&life).map(|(&(op, _, _), &l)| (op == Op::Write).then(|| class(l, mean, streams))).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn write(page: u64) -> (Op, u64, u32) {
        (Op::Write, page * 4096, 4096)
    }

    #[test]
    fn classes_count_the_thresholds_a_lifetime_reaches() {
        assert_eq!(class(Some(3.9), 1.0, 2), 1);
        assert_eq!(class(Some(4.0), 1.0, 2), 0);
        assert_eq!(class(None, 1.0, 2), 0);
        // Three streams: thresholds l and 4 l.
        assert_eq!(class(Some(0.9), 1.0, 3), 2);
        assert_eq!(class(Some(2.0), 1.0, 3), 1);
        assert_eq!(class(Some(5.0), 1.0, 3), 0);
        assert_eq!(class(Some(5.0), 1.0, 1), 0);
    }

    #[test]
    fn a_page_rewritten_young_goes_to_the_short_stream() {
        let mut inf = Inference::new(2, 4096, 100);
        let classes: Vec<u32> = [0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 1]
            .into_iter()
            .map(|p| {
                let (op, offset, len) = write(p);
                inf.place(op, offset, len).unwrap()
            })
            .collect();
        // New pages: the last stream. Page 0 rewritten after 9 writes (mean
        // 9: not below 4 x 9), then after 1 and 1 (below it), page 1 after 12
        // (mean 7: below 28).
        assert_eq!(classes, vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1]);
    }

    #[test]
    fn the_oracle_classes_by_the_future() {
        // Pages 0 and 1 are rewritten at once, page 2 much later, the rest
        // never.
        let pages = [0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 2];
        let reqs: Vec<(Op, u64, u32)> = pages.into_iter().map(write).collect();
        let out: Vec<u32> = oracle(&reqs, 2, 4096).into_iter().map(Option::unwrap).collect();
        // Lifetimes 1, 1 and 17: mean 6.33, threshold 25.3.
        assert_eq!(&out[..4], &[1, 0, 1, 0]);
        assert_eq!(out[4], 1, "17 is under the threshold");
        assert!(out[5..].iter().all(|&c| c == 0), "{out:?}");
    }
}
