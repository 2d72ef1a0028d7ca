//! What a run measures and reports. Field names of [`Report`] are stable: they
//! are the JSON and CSV output of `ftlab`.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use schemars::JsonSchema;
use serde::Serialize;

use ftlab_ftl::{Counters, Flash, Purpose};
use ftlab_nand::{BlockId, SimTime};

/// Response times of one operation type, recorded in nanoseconds (HDR histogram,
/// three significant digits) and reported in microseconds.
#[derive(Debug, Clone)]
pub struct Latency {
    hist: Histogram<u64>,
    sum_ns: u128,
    /// Exact largest response (the histogram's max is its bucket's upper edge).
    max_ns: u64,
}

impl Default for Latency {
    fn default() -> Self {
        // Auto-resizing, so no response is ever clamped.
        let mut hist = Histogram::new(3).unwrap_or_else(|_| unreachable!("3 significant digits is valid"));
        hist.auto(true);
        Latency { hist, sum_ns: 0, max_ns: 0 }
    }
}

impl Latency {
    /// Records one response.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        // With auto-resize on, recording only fails for values beyond u64 range.
        let _ = self.hist.record(ns.max(1));
        self.sum_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// The summary in microseconds.
    pub fn summary(&self) -> LatencySummary {
        let n = self.hist.len();
        let us = |ns: u64| ns as f64 / 1000.0;
        if n == 0 {
            return LatencySummary::default();
        }
        // A percentile is its bucket's highest equivalent value, which can lie
        // above every recorded response: clamped to the exact max.
        let pct = |q: f64| us(self.hist.value_at_quantile(q).min(self.max_ns));
        LatencySummary {
            count: n,
            mean: (self.sum_ns as f64 / n as f64) / 1000.0,
            p50: pct(0.5),
            p99: pct(0.99),
            p999: pct(0.999),
            p9999: pct(0.9999),
            max: us(self.max_ns),
        }
    }

    /// The exact sum of the responses recorded, ns.
    pub fn sum_ns(&self) -> u128 {
        self.sum_ns
    }

    /// The exact largest response recorded, ns.
    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    /// Responses recorded above `bound_ns`.
    pub fn count_above(&self, bound_ns: u64) -> u64 {
        self.hist.count_between(bound_ns.saturating_add(1), u64::MAX)
    }

    /// The whole distribution: fio's default percentiles and the non-empty
    /// buckets with their exact counts.
    pub fn distribution(&self) -> LatencyDistribution {
        if self.hist.is_empty() {
            return LatencyDistribution::default();
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        let percentiles =
            FIO_PERCENTILES.iter().map(|&p| [p, us(self.hist.value_at_quantile(p / 100.0).min(self.max_ns))]).collect();
        // HDR's buckets (0.1% wide) merged into fio's (64 a power of two,
        // under 1.6% wide), so a report stays compact: each keeps the upper
        // edge of the last HDR bucket in it, the last clamped to the exact max
        // (no earlier edge can reach it).
        let fio_bucket = |ns: u64| match ns {
            0..64 => ns,
            _ => {
                let e = 63 - u64::from(ns.leading_zeros());
                (e << 8) | (ns >> (e - 6))
            }
        };
        let mut bins: Vec<[u64; 2]> = Vec::new();
        let mut last = None;
        for v in self.hist.iter_recorded() {
            let edge = v.value_iterated_to().min(self.max_ns);
            let key = fio_bucket(edge);
            match bins.last_mut() {
                Some(b) if last == Some(key) => *b = [edge, b[1] + v.count_at_value()],
                _ => bins.push([edge, v.count_at_value()]),
            }
            last = Some(key);
        }
        LatencyDistribution { percentiles, bins }
    }
}

/// fio's default completion-latency percentiles (`percentile_list`), in percent.
pub const FIO_PERCENTILES: [f64; 17] =
    [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

/// One operation's whole response-time distribution (JSON only: arrays are
/// left out of CSV).
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct LatencyDistribution {
    /// fio's default percentile list (1, 5, 10, 20, 30, 40, 50, 60, 70, 80,
    /// 90, 95, 99, 99.5, 99.9, 99.95, 99.99) as `[percent, µs]` pairs: HDR
    /// values (three significant digits) as the summary's percentiles, never
    /// above the exact max; empty when the operation has no request.
    #[schemars(extend("x-unit" = "[percent, µs] pairs"))]
    pub percentiles: Vec<[f64; 2]>,
    /// Every non-empty bucket, in increasing order, as `[ns, requests]`
    /// pairs: the bucket's upper edge in **nanoseconds** (the highest HDR
    /// value in it) and the responses in it (those at or below the edge and
    /// above the previous bucket's). The buckets are fio's (`json+`: 64 a
    /// power of two, under 1.6% wide), the HDR histogram's merged into them;
    /// the counts are exact and add up to `count`; the last edge is the exact
    /// `max`. A CDF is the running sum of the counts over `count`.
    #[schemars(extend("x-unit" = "[ns, requests] pairs"))]
    pub bins: Vec<[u64; 2]>,
}

/// The response-time distributions of the measured requests, per operation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct LatencyDistributions {
    /// The reads' distribution (`latency.write` and `latency.trim` are the
    /// writes' and the trims'); both arrays empty when there was none.
    pub read: LatencyDistribution,
    /// The writes' distribution, as `latency.read`.
    pub write: LatencyDistribution,
    /// The trims' distribution, as `latency.read`.
    pub trim: LatencyDistribution,
}

/// Response-time summary, microseconds. Percentiles are HDR-histogram values
/// (three significant digits), never above `max`; mean and max are exact.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, JsonSchema)]
pub struct LatencySummary {
    /// Requests of that type completed.
    #[schemars(extend("x-unit" = "requests"))]
    pub count: u64,
    /// Mean response time (exact).
    #[schemars(extend("x-unit" = "µs"))]
    pub mean: f64,
    /// Median.
    #[schemars(extend("x-unit" = "µs"))]
    pub p50: f64,
    /// 99th percentile.
    #[schemars(extend("x-unit" = "µs"))]
    pub p99: f64,
    /// 99.9th percentile.
    #[schemars(extend("x-unit" = "µs"))]
    pub p999: f64,
    /// 99.99th percentile.
    #[schemars(extend("x-unit" = "µs"))]
    pub p9999: f64,
    /// Worst response (exact).
    #[schemars(extend("x-unit" = "µs"))]
    pub max: f64,
}

/// Erase counts over the good blocks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, JsonSchema)]
pub struct EraseStats {
    /// Mean erases per block.
    #[schemars(extend("x-unit" = "erases"))]
    pub mean: f64,
    /// Standard deviation.
    #[schemars(extend("x-unit" = "erases"))]
    pub std: f64,
    /// Least-erased block.
    #[schemars(extend("x-unit" = "erases"))]
    pub min: u32,
    /// Most-erased block.
    #[schemars(extend("x-unit" = "erases"))]
    pub max: u32,
    /// GFTL's wear index (002 Section VI): `std` / number of blocks × 100;
    /// lower is more even.
    #[schemars(extend("x-unit" = "—"))]
    pub wear_index: f64,
}

/// The erase-count distribution of the good blocks of `flash`: `[erase count,
/// blocks]` for each count some block has, in increasing order.
pub fn erase_histogram(flash: &Flash) -> Vec<[u64; 2]> {
    let nand = flash.nand();
    let mut by_count = std::collections::BTreeMap::new();
    for b in (0..nand.geometry().total_blocks()).map(BlockId).filter(|&b| !nand.is_bad(b)) {
        *by_count.entry(u64::from(nand.erase_count(b))).or_insert(0u64) += 1;
    }
    by_count.into_iter().map(|(c, n)| [c, n]).collect()
}

impl EraseStats {
    /// Over the good blocks of `flash`.
    pub fn of(flash: &Flash) -> EraseStats {
        let nand = flash.nand();
        let counts: Vec<u32> = (0..nand.geometry().total_blocks())
            .map(BlockId)
            .filter(|&b| !nand.is_bad(b))
            .map(|b| nand.erase_count(b))
            .collect();
        if counts.is_empty() {
            return EraseStats::default();
        }
        let n = counts.len() as f64;
        let mean = counts.iter().map(|&c| f64::from(c)).sum::<f64>() / n;
        let var = counts.iter().map(|&c| (f64::from(c) - mean).powi(2)).sum::<f64>() / n;
        let std = var.sqrt();
        EraseStats {
            mean,
            std,
            min: counts.iter().copied().min().unwrap_or(0),
            max: counts.iter().copied().max().unwrap_or(0),
            wear_index: std / n * 100.0,
        }
    }
}

/// Raw bit error rates of the good blocks by the wear model (Eq. 27 of
/// 000_ffe2fafb22bcad8e.txt), at the end of the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, JsonSchema)]
pub struct RberStats {
    /// Mean RBER.
    #[schemars(extend("x-unit" = "—"))]
    pub mean: f64,
    /// Median RBER (nearest rank).
    #[schemars(extend("x-unit" = "—"))]
    pub p50: f64,
    /// 99th-percentile RBER (nearest rank).
    #[schemars(extend("x-unit" = "—"))]
    pub p99: f64,
    /// Highest RBER.
    #[schemars(extend("x-unit" = "—"))]
    pub max: f64,
}

impl RberStats {
    /// Over the good blocks of `flash`, with the fraction of them at or above
    /// the wear model's retirement RBER.
    pub fn of(flash: &Flash) -> (RberStats, f64) {
        let nand = flash.nand();
        let good: Vec<BlockId> =
            (0..nand.geometry().total_blocks()).map(BlockId).filter(|&b| !nand.is_bad(b)).collect();
        if good.is_empty() {
            return (RberStats::default(), 0.0);
        }
        let mut rber: Vec<f64> = good.iter().map(|&b| nand.rber(b)).collect();
        let worn = good.iter().filter(|&&b| nand.wear().is_worn_out(b, nand.erase_count(b))).count();
        rber.sort_by(f64::total_cmp);
        let n = rber.len();
        let rank = |q: f64| rber[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
        let stats =
            RberStats { mean: rber.iter().sum::<f64>() / n as f64, p50: rank(0.5), p99: rank(0.99), max: rber[n - 1] };
        (stats, worn as f64 / n as f64)
    }
}

/// Points of [`rber_cdf`]: this many RBER values, evenly spaced in log10 from
/// [`RBER_CDF_FROM`] to [`RBER_CDF_TO`].
pub const RBER_CDF_POINTS: usize = 40;
/// Lowest RBER of [`rber_cdf`].
pub const RBER_CDF_FROM: f64 = 1e-5;
/// Highest RBER of [`rber_cdf`].
pub const RBER_CDF_TO: f64 = 1e-1;

/// The cumulative distribution of the good blocks' RBER (000 Figure 10):
/// `[rber, fraction of good blocks with RBER <= rber]` at [`RBER_CDF_POINTS`]
/// fixed RBER values, the same for every run so that runs can be plotted
/// together. Blocks never erased (RBER 0) count at every point.
pub fn rber_cdf(flash: &Flash) -> Vec<[f64; 2]> {
    let nand = flash.nand();
    let mut rber: Vec<f64> =
        (0..nand.geometry().total_blocks()).map(BlockId).filter(|&b| !nand.is_bad(b)).map(|b| nand.rber(b)).collect();
    rber.sort_by(f64::total_cmp);
    let (lo, hi) = (RBER_CDF_FROM.log10(), RBER_CDF_TO.log10());
    (0..RBER_CDF_POINTS)
        .map(|i| {
            let x = 10f64.powf(lo + (hi - lo) * i as f64 / (RBER_CDF_POINTS - 1) as f64);
            let below = rber.partition_point(|&r| r <= x);
            [x, if rber.is_empty() { 0.0 } else { below as f64 / rber.len() as f64 }]
        })
        .collect()
}

/// The stop condition `workload.stop_at_retired_fraction`: at least `target`
/// good blocks at or above the retirement RBER. A block's RBER changes only when
/// it is erased, one cycle per erase, so after a scan that finds fewer worn
/// blocks than the target, none is needed until the device has done as many
/// erases (of any purpose) as the unworn blocks closest to retirement still need
/// between them to make up the difference. A scan is O(good blocks); polling is
/// O(1).
#[derive(Debug, Clone)]
pub struct RetirementWatch {
    /// Good blocks and the erase count at which each is worn out.
    blocks: Vec<(BlockId, u32)>,
    target: usize,
    /// The flash's erase counter at the last scan, and the erases needed since.
    last_total: u64,
    gap: u64,
    /// Scans done.
    pub scans: u64,
}

impl RetirementWatch {
    /// Watches for `fraction` (in (0, 1]) of the good blocks of `flash` worn out;
    /// the target is the fewest blocks whose share is at least `fraction`, as
    /// `retired_fraction` computes it.
    pub fn new(flash: &Flash, fraction: f64) -> Self {
        let nand = flash.nand();
        let blocks: Vec<(BlockId, u32)> = (0..nand.geometry().total_blocks())
            .map(BlockId)
            .filter(|&b| !nand.is_bad(b))
            .map(|b| (b, nand.wear().retirement_cycles(b)))
            .collect();
        let n = blocks.len();
        let mut target = ((fraction * n as f64).floor() as usize).min(n);
        while target < n && (target as f64 / n as f64) < fraction {
            target += 1;
        }
        while target > 0 && ((target - 1) as f64 / n as f64) >= fraction {
            target -= 1;
        }
        RetirementWatch { blocks, target: target.max(1), last_total: 0, gap: 0, scans: 0 }
    }

    /// Whether the target is reached; scans the blocks only when enough erases
    /// happened since the last scan (or the counters were reset).
    pub fn reached(&mut self, flash: &Flash) -> bool {
        let total = flash.counters().erases.total();
        if total >= self.last_total && total - self.last_total < self.gap {
            return false;
        }
        self.scans += 1;
        self.last_total = total;
        let nand = flash.nand();
        let mut slack: Vec<u64> = Vec::new();
        let mut worn = 0;
        for &(b, cycles) in &self.blocks {
            let e = nand.erase_count(b);
            if e >= cycles {
                worn += 1;
            } else {
                slack.push(u64::from(cycles - e));
            }
        }
        if worn >= self.target {
            return true;
        }
        let k = self.target - worn;
        self.gap = if k >= slack.len() {
            slack.iter().sum()
        } else {
            slack.select_nth_unstable(k - 1);
            slack[..k].iter().sum()
        };
        false
    }
}

/// Pages completed per time bucket, and the flash work done by then. Buckets
/// start at `bucket_ns` wide; when more than [`Throughput::MAX_BUCKETS`] would
/// be needed, neighbours merge and the width doubles (unless the width was fixed
/// by the user: then only past [`Throughput::MAX_FIXED_BUCKETS`], so a tiny
/// interval over a long run cannot take all memory; the series reports the
/// width it ended with).
#[derive(Debug, Clone)]
pub struct Throughput {
    bucket_ns: u64,
    fixed: bool,
    read: Vec<u64>,
    write: Vec<u64>,
    /// Flash page programs (every purpose), programs of garbage collection and
    /// erases (every purpose), in the bucket of the request whose completion
    /// first saw them counted.
    programs: Vec<u64>,
    gc_programs: Vec<u64>,
    erases: Vec<u64>,
    /// Those three counters as of the last request recorded.
    seen: FlashTotals,
    /// Nanoseconds the dies were occupied by host operations, by garbage
    /// collection and by the other purposes (map, wear leveling, checkpoint,
    /// recovery), per bucket: counted only when a completion falls in another
    /// bucket than the last one (`die_bucket`), so it costs one comparison a
    /// request; the die time up to that completion goes to the bucket of the
    /// completions before it. `die_seen`: the three totals then.
    die_ns: Vec<[u64; 3]>,
    die_bucket: usize,
    die_seen: [u64; 3],
    /// The FTL's gauges by name, in the order it gives them: per bucket, the
    /// value at the last request completion recorded in it (a bucket without
    /// one keeps the value before it).
    gauges: Vec<(&'static str, Vec<f64>)>,
}

/// Cumulative flash counters of a run as [`Throughput::flash`] counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlashTotals {
    /// Page programs of every purpose.
    pub programs: u64,
    /// Page programs of garbage collection.
    pub gc_programs: u64,
    /// Erases of every purpose.
    pub erases: u64,
}

impl FlashTotals {
    /// From the FTL's counters.
    #[inline]
    pub fn of(c: &ftlab_ftl::Counters) -> Self {
        FlashTotals {
            programs: c.programs.total(),
            gc_programs: c.programs.get(ftlab_ftl::Purpose::Gc),
            erases: c.erases.total(),
        }
    }
}

impl Throughput {
    /// At most this many buckets when the width is adaptive.
    pub const MAX_BUCKETS: usize = 4096;
    /// At most this many buckets when the width was fixed by the user (about
    /// 64 MiB of them).
    pub const MAX_FIXED_BUCKETS: usize = 1 << 20;

    /// Buckets of `bucket_ns`; `fixed` keeps that width whatever the run's length.
    pub fn new(bucket_ns: u64, fixed: bool) -> Self {
        Throughput {
            bucket_ns: bucket_ns.max(1),
            fixed,
            read: Vec::new(),
            write: Vec::new(),
            programs: Vec::new(),
            gc_programs: Vec::new(),
            erases: Vec::new(),
            seen: FlashTotals::default(),
            die_ns: Vec::new(),
            die_bucket: 0,
            die_seen: [0; 3],
            gauges: Vec::new(),
        }
    }

    /// The bucket of `t`, made to exist.
    #[inline]
    fn bucket(&mut self, t: SimTime) -> usize {
        let i = (t.0 / self.bucket_ns) as usize;
        if i < self.read.len() {
            return i;
        }
        self.grow(t)
    }

    /// [`Throughput::bucket`] past the last bucket: merges buckets in pairs
    /// while there would be too many, then adds buckets up to `t`'s.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, t: SimTime) -> usize {
        let mut i = (t.0 / self.bucket_ns) as usize;
        while i >= if self.fixed { Self::MAX_FIXED_BUCKETS } else { Self::MAX_BUCKETS } {
            self.bucket_ns *= 2;
            for v in self.counts() {
                let merged: Vec<u64> = v.chunks(2).map(|c| c.iter().sum()).collect();
                *v = merged;
            }
            self.die_ns = self
                .die_ns
                .chunks(2)
                .map(|c| c.iter().fold([0; 3], |a, b| [a[0] + b[0], a[1] + b[1], a[2] + b[2]]))
                .collect();
            self.die_bucket /= 2;
            // A merged interval ends where its later half ends.
            for (_, g) in &mut self.gauges {
                let merged: Vec<f64> = g.chunks(2).map(|c| c[c.len() - 1]).collect();
                *g = merged;
            }
            i = (t.0 / self.bucket_ns) as usize;
        }
        if self.read.len() <= i {
            for v in self.counts() {
                v.resize(i + 1, 0);
            }
            self.die_ns.resize(i + 1, [0; 3]);
            for (_, g) in &mut self.gauges {
                let last = g.last().copied().unwrap_or(0.0);
                g.resize(i + 1, last);
            }
        }
        i
    }

    /// Every per-bucket count.
    fn counts(&mut self) -> [&mut Vec<u64>; 5] {
        [&mut self.read, &mut self.write, &mut self.programs, &mut self.gc_programs, &mut self.erases]
    }

    /// The FTL's gauges ([`ftlab_ftl::Ftl::gauges`]) after a request completed
    /// at `t`: they become the values of `t`'s bucket and of the empty buckets
    /// after it. A gauge seen for the first time takes its value back to the
    /// first bucket.
    #[inline]
    pub fn gauges(&mut self, t: SimTime, now: &[(&'static str, f64)]) {
        if now.is_empty() {
            return;
        }
        let i = self.bucket(t);
        let len = self.read.len();
        for &(name, v) in now {
            let k = match self.gauges.iter().position(|(n, _)| *n == name) {
                Some(k) => k,
                None => {
                    self.gauges.push((name, vec![v; len]));
                    self.gauges.len() - 1
                }
            };
            let g = &mut self.gauges[k].1;
            g[i..].iter_mut().for_each(|x| *x = v);
        }
    }

    /// `pages` completed at `t` (relative to the start of measurement).
    #[inline]
    pub fn add(&mut self, t: SimTime, read: bool, pages: u64) {
        let i = self.bucket(t);
        if read {
            self.read[i] += pages;
        } else {
            self.write[i] += pages;
        }
    }

    /// The flash work counted by the completion at `t` of a request, from
    /// the run's counters `c` (since measurement started): what is new since
    /// the last call goes to `t`'s bucket; the die time when `t` is in
    /// another bucket than the last completion.
    #[inline]
    pub fn flash(&mut self, t: SimTime, c: &Counters) {
        let now = FlashTotals::of(c);
        if now != self.seen {
            let i = self.bucket(t);
            let s = self.seen;
            self.programs[i] += now.programs.saturating_sub(s.programs);
            self.gc_programs[i] += now.gc_programs.saturating_sub(s.gc_programs);
            self.erases[i] += now.erases.saturating_sub(s.erases);
            self.seen = now;
        }
        if (t.0 / self.bucket_ns) as usize != self.die_bucket {
            self.die_moved(t, c);
        }
    }

    /// A completion at `t` in another bucket than the last: the die time
    /// since the last count goes to the last bucket (which `bucket` made
    /// exist: every series has the same buckets).
    #[cold]
    #[inline(never)]
    fn die_moved(&mut self, t: SimTime, c: &Counters) {
        let j = self.bucket(t);
        let now = die_totals(c);
        let d = &mut self.die_ns[self.die_bucket];
        for k in 0..3 {
            d[k] += now[k].saturating_sub(self.die_seen[k]);
        }
        self.die_seen = now;
        self.die_bucket = j;
    }

    /// [`Throughput::series`] with the die time not yet counted at the end
    /// of the run (`c`: the run's counters then) in the last bucket counted.
    pub fn series_at_end(&self, c: &Counters) -> ThroughputSeries {
        let mut die = self.die_ns.clone();
        let now = die_totals(c);
        if let Some(d) = die.get_mut(self.die_bucket) {
            for k in 0..3 {
                d[k] += now[k].saturating_sub(self.die_seen[k]);
            }
        }
        ThroughputSeries {
            die_host_us: us(&die, 0),
            die_gc_us: us(&die, 1),
            die_other_us: us(&die, 2),
            ..self.series()
        }
    }

    /// The series.
    pub fn series(&self) -> ThroughputSeries {
        ThroughputSeries {
            interval_s: self.bucket_ns as f64 / 1e9,
            read_pages: self.read.clone(),
            write_pages: self.write.clone(),
            flash_programs: self.programs.clone(),
            gc_programs: self.gc_programs.clone(),
            erases: self.erases.clone(),
            die_host_us: us(&self.die_ns, 0),
            die_gc_us: us(&self.die_ns, 1),
            die_other_us: us(&self.die_ns, 2),
            die_idle_us: Vec::new(),
            gauges: self.gauges.iter().map(|(n, g)| ((*n).to_owned(), g.clone())).collect(),
        }
    }

    /// The gauges' latest values, by name.
    pub fn final_gauges(&self) -> BTreeMap<String, f64> {
        self.gauges.iter().filter_map(|(n, g)| Some(((*n).to_owned(), *g.last()?))).collect()
    }
}

/// Die time of host operations, of garbage collection and of the other
/// purposes in `c`, ns.
fn die_totals(c: &Counters) -> [u64; 3] {
    let host = c.die_ns.get(Purpose::Host);
    let gc = c.die_ns.get(Purpose::Gc);
    [host, gc, c.die_ns.total() - host - gc]
}

/// Element `k` of each bucket's nanoseconds, as microseconds.
fn us(ns: &[[u64; 3]], k: usize) -> Vec<f64> {
    ns.iter().map(|n| n[k] as f64 / 1e3).collect()
}

/// Host pages completed per interval, and the flash work of each interval
/// (counted when a request completing in it first saw it): write
/// amplification over time is `flash_programs / write_pages`, garbage
/// collection's activity `gc_programs` and `erases`. `die_host_us`,
/// `die_gc_us`, `die_other_us`: the time the dies were occupied by host
/// operations, by garbage collection and by the other purposes (map, wear
/// leveling, checkpoint), summed over the dies (see
/// [`ftlab_ftl::Counters::die_ns`]): an interval holds the die time of the
/// operations issued from its first request completion to the first
/// completion in a later interval (before the first completion: the first
/// interval's; after the last: the last's), so a request's service at an
/// interval's start may be counted in the interval before; `die_idle_us`
/// the rest of the interval's die time (dies x interval, less the three, at
/// least 0; the last interval counts whole, though the run ends inside it).
/// The split is exact over the run (they sum to the report's `die_time`) and
/// close where requests complete in every interval. `gauges`: the FTL's
/// gauges ([`ftlab_ftl::Ftl::gauges`], e.g. Janus-FTL's `fused_blocks`) per
/// interval, each the value after the last request completed in it (an
/// interval without one keeps the value before it); left out of the JSON for
/// schemes without gauges.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct ThroughputSeries {
    /// Width of one interval (adaptive, at most 4096 intervals, unless
    /// `metrics.interval_ms` fixes it).
    #[schemars(extend("x-unit" = "s"))]
    pub interval_s: f64,
    /// Host pages read completed per interval, interval 0 starting when
    /// measurement starts.
    #[schemars(extend("x-unit" = "pages per interval"))]
    pub read_pages: Vec<u64>,
    /// Host pages written completed per interval.
    #[schemars(extend("x-unit" = "pages per interval"))]
    pub write_pages: Vec<u64>,
    /// Flash page programs of every purpose, counted in the interval of the
    /// first request completion after it was issued (work after the last
    /// completion is in the totals only); `flash_programs / write_pages` is
    /// the interval's write amplification. Sums to `flash_pages_programmed`
    /// when nothing runs after the last request.
    #[schemars(extend("x-unit" = "pages per interval"))]
    pub flash_programs: Vec<u64>,
    /// Page programs of garbage collection, counted as `flash_programs`;
    /// sums to `flash_ops.programs.gc`.
    #[schemars(extend("x-unit" = "pages per interval"))]
    pub gc_programs: Vec<u64>,
    /// Erases, counted as `flash_programs`; sums to `erases`.
    #[schemars(extend("x-unit" = "blocks per interval"))]
    pub erases: Vec<u64>,
    /// Die time (as `die_time`) of host operations, counted as the flash work
    /// above (in the interval of the first request completion after it).
    #[schemars(extend("x-unit" = "µs per interval"))]
    pub die_host_us: Vec<f64>,
    /// Die time of garbage collection, as `die_host_us`.
    #[schemars(extend("x-unit" = "µs per interval"))]
    pub die_gc_us: Vec<f64>,
    /// Die time of the other purposes (map, wear leveling, checkpoint,
    /// recovery), as `die_host_us`. The three sum to `die_time.busy_ns` when
    /// nothing runs after the last request.
    #[schemars(extend("x-unit" = "µs per interval"))]
    pub die_other_us: Vec<f64>,
    /// Dies x the interval, less the three (at least 0; the last interval
    /// counts whole though the run ends inside it). Exact only where requests
    /// complete in every interval; over the run, `die_time` is exact.
    #[schemars(extend("x-unit" = "µs per interval"))]
    pub die_idle_us: Vec<f64>,
    /// Only for an FTL with gauges (left out otherwise): per gauge name, its
    /// value after the last request completed in each interval (an interval
    /// without a completion keeps the value before it); same intervals as the
    /// other series.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub gauges: BTreeMap<String, Vec<f64>>,
}

impl ThroughputSeries {
    /// Fills `die_idle_us` for a device of `dies` dies.
    pub fn fill_die_idle(&mut self, dies: u32) {
        let span_us = self.interval_s * 1e6 * f64::from(dies);
        self.die_idle_us = (0..self.die_host_us.len())
            .map(|i| (span_us - self.die_host_us[i] - self.die_gc_us[i] - self.die_other_us[i]).max(0.0))
            .collect();
    }
}

/// Deadline misses of one periodic task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct TaskReport {
    /// The task's name.
    #[schemars(extend("x-unit" = "name"))]
    pub name: String,
    /// Jobs released.
    #[schemars(extend("x-unit" = "jobs"))]
    pub jobs: u64,
    /// Jobs that missed their deadline (release + period).
    #[schemars(extend("x-unit" = "jobs"))]
    pub deadline_misses: u64,
    /// The longest response of one of its jobs.
    #[schemars(extend("x-unit" = "µs"))]
    pub worst_response_us: f64,
    /// False: refused by the FTL's admission control, nothing issued (true
    /// without one).
    pub admitted: bool,
    /// The failed test and by how much, or null.
    #[schemars(extend("x-unit" = "text"))]
    pub refused_by: Option<String>,
}

/// Flash operations by purpose during measurement.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, JsonSchema)]
pub struct FlashOps {
    /// Flash page reads by purpose (a copyback counts as a read and a program).
    #[schemars(with = "crate::energy::PerPurposeSchema", extend("x-unit" = "pages"))]
    pub reads: ftlab_ftl::PerPurpose,
    /// Flash page programs by purpose.
    #[schemars(with = "crate::energy::PerPurposeSchema", extend("x-unit" = "pages"))]
    pub programs: ftlab_ftl::PerPurpose,
    /// Block erases by purpose.
    #[schemars(with = "crate::energy::PerPurposeSchema", extend("x-unit" = "blocks"))]
    pub erases: ftlab_ftl::PerPurpose,
    /// Out-of-band area reads by purpose (e.g. while rebuilding maps).
    #[schemars(with = "crate::energy::PerPurposeSchema", extend("x-unit" = "pages"))]
    pub oob_reads: ftlab_ftl::PerPurpose,
    /// In-plane page moves by purpose.
    #[schemars(with = "crate::energy::PerPurposeSchema", extend("x-unit" = "pages"))]
    pub copybacks: ftlab_ftl::PerPurpose,
    /// Multi-plane commands by purpose (`device.commands.multi_plane`), each
    /// counted once here and per page or block in its kind.
    #[schemars(with = "crate::energy::PerPurposeSchema", extend("x-unit" = "commands"))]
    pub multi_plane: ftlab_ftl::PerPurpose,
    /// Host reads that suspended an erase under way
    /// (`device.commands.erase_suspension`); 0 without it.
    #[schemars(extend("x-unit" = "count"))]
    pub suspensions: u64,
}

impl From<&Counters> for FlashOps {
    fn from(c: &Counters) -> Self {
        FlashOps {
            reads: c.reads,
            programs: c.programs,
            erases: c.erases,
            oob_reads: c.oob_reads,
            copybacks: c.copybacks,
            multi_plane: c.multi_plane,
            suspensions: c.suspensions,
        }
    }
}

/// What a logical page held, or was expected to hold, in the integrity check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Content {
    /// Never written, or trimmed.
    Nothing,
    /// Version `version` of the contents written to logical page `page`.
    Version { page: u64, version: u32 },
}

impl std::fmt::Display for Content {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Content::Nothing => f.write_str("nothing"),
            Content::Version { page, version } => write!(f, "version {version} of page {page}"),
        }
    }
}

/// The first read that returned other data than the last written.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Mismatch {
    /// The logical page read.
    pub lpn: u64,
    /// When it was read, ns.
    pub at_ns: u64,
    /// What it returned.
    pub got: Content,
    /// What was written last.
    pub expected: Content,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "logical page {} read at {:.3} us returned {}, expected {}",
            self.lpn,
            self.at_ns as f64 / 1e3,
            self.got,
            self.expected
        )
    }
}

/// A run's data-integrity verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Integrity {
    /// Every read returned the last value written.
    #[default]
    Ok,
    /// `mismatches` reads did not; the first is `first`.
    Failed { mismatches: u64, first: Mismatch },
}

impl Integrity {
    /// Whether every read returned the last value written.
    pub fn is_ok(&self) -> bool {
        matches!(self, Integrity::Ok)
    }
}

impl std::fmt::Display for Integrity {
    /// `ok`, or the first mismatch (the report's `integrity` field).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Integrity::Ok => f.write_str("ok"),
            Integrity::Failed { first, .. } => first.fmt(f),
        }
    }
}

/// RAM the simulator's structures hold at the end of a run, by part, from
/// their allocated capacity (not estimates): what a run of this device costs
/// in memory besides the program itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, JsonSchema)]
pub struct MemoryReport {
    /// The FTL's logical-to-physical page table (0 for schemes that do not
    /// report theirs apart: then in `memory.ftl_other_bytes`).
    #[schemars(extend("x-unit" = "bytes"))]
    pub map_bytes: u64,
    /// The FTL's valid-page bitmap (likewise).
    #[schemars(extend("x-unit" = "bytes"))]
    pub valid_bytes: u64,
    /// The rest of the FTL: allocator, victim picker, caches, logs.
    #[schemars(extend("x-unit" = "bytes"))]
    pub ftl_other_bytes: u64,
    /// The medium's OOB records (logical page, sequence number, kind and tag
    /// of every physical page).
    #[schemars(extend("x-unit" = "bytes"))]
    pub oob_bytes: u64,
    /// The medium's page contents (2 bytes a page for tokens of data pages).
    #[schemars(extend("x-unit" = "bytes"))]
    pub store_bytes: u64,
    /// The medium's per-block state, wear model and timelines.
    #[schemars(extend("x-unit" = "bytes"))]
    pub blocks_bytes: u64,
    /// The engine's model: each logical page's version (what the integrity
    /// check expects), the expiry table, the host queue's slots.
    #[schemars(extend("x-unit" = "bytes"))]
    pub engine_bytes: u64,
    /// RAM the simulator's structures hold at the end of the run, from their
    /// allocated capacity: the sum of the parts.
    #[schemars(extend("x-unit" = "bytes"))]
    pub total_bytes: u64,
    /// `memory.total_bytes` / `physical_pages`.
    #[schemars(extend("x-unit" = "bytes"))]
    pub bytes_per_physical_page: f64,
}

impl MemoryReport {
    /// The report of these parts on a device of `physical_pages` pages.
    pub fn of(
        ftl: ftlab_ftl::FtlMemory,
        medium: ftlab_nand::MediumMemory,
        engine_bytes: u64,
        physical_pages: u64,
    ) -> Self {
        let total_bytes = ftl.map + ftl.valid + ftl.other + medium.oob + medium.store + medium.blocks + engine_bytes;
        MemoryReport {
            map_bytes: ftl.map,
            valid_bytes: ftl.valid,
            ftl_other_bytes: ftl.other,
            oob_bytes: medium.oob,
            store_bytes: medium.store,
            blocks_bytes: medium.blocks,
            engine_bytes,
            total_bytes,
            bytes_per_physical_page: if physical_pages > 0 { total_bytes as f64 / physical_pages as f64 } else { 0.0 },
        }
    }
}

/// The result of one run. Field names are stable (JSON and CSV output); each
/// field's doc comment is its meaning in the report's JSON Schema (`ftlab
/// schema`), from which FIELDS.md's tables and the Python stubs are generated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[schemars(title = "ftlab report", description = "The report of one ftlab run (`ftlab run -f json`).")]
pub struct Report {
    /// FTL scheme (`ftl.kind`).
    #[schemars(extend("x-unit" = "name"))]
    pub ftl: String,
    /// Chip preset (`device.chip`).
    #[schemars(extend("x-unit" = "name"))]
    pub chip: String,
    /// Generator preset or kind, `N periodic tasks`, or `PATH (format)` for a
    /// trace (`PATH (format) x N` when `workload.repeat` replays it N times).
    #[schemars(extend("x-unit" = "text"))]
    pub workload: String,
    /// Seed of every random draw (default 1).
    #[schemars(extend("x-unit" = "integer"))]
    pub seed: u64,
    /// Host requests completed during measurement (a trace request that
    /// address compaction splits counts once per piece; see `address`).
    #[schemars(extend("x-unit" = "requests"))]
    pub requests: u64,
    /// Pages the host read. Pages here and in `rmw_pages` and `logical_pages`
    /// are the FTL's logical pages: flash pages, or the FTL's smaller mapping
    /// unit (`ftl.unit_bytes` of `subpage`); the flash counters (programs,
    /// reads, WAF) count flash pages.
    #[schemars(extend("x-unit" = "pages"))]
    pub host_pages_read: u64,
    /// Pages the host wrote.
    #[schemars(extend("x-unit" = "pages"))]
    pub host_pages_written: u64,
    /// Pages the host trimmed (discarded).
    #[schemars(extend("x-unit" = "pages"))]
    pub host_pages_trimmed: u64,
    /// Partial-page writes served by read-modify-write.
    #[schemars(extend("x-unit" = "pages"))]
    pub rmw_pages: u64,
    /// Flash page reads of every purpose (a copyback counts as one read and one
    /// program).
    #[schemars(extend("x-unit" = "pages"))]
    pub flash_pages_read: u64,
    /// Flash page programs of every purpose.
    #[schemars(extend("x-unit" = "pages"))]
    pub flash_pages_programmed: u64,
    /// Valid pages copied by garbage collection and wear leveling.
    #[schemars(extend("x-unit" = "pages"))]
    pub gc_page_copies: u64,
    /// Block erases (recovery erases excluded).
    #[schemars(extend("x-unit" = "blocks"))]
    pub erases: u64,
    /// Write amplification factor: `flash_pages_programmed` / host page
    /// programs; 1.0 is ideal, the excess is GC, mapping and wear-leveling
    /// traffic; null before any host write.
    #[schemars(extend("x-unit" = "ratio"))]
    pub waf: Option<f64>,
    /// The response times of the measured host reads: count, mean,
    /// percentiles, max (`write_us` and `trim_us` are the writes' and the
    /// trims').
    #[schemars(extend("x-unit" = "µs"))]
    pub read_us: LatencySummary,
    /// Response times of the measured host writes, as `read_us`.
    #[schemars(extend("x-unit" = "µs"))]
    pub write_us: LatencySummary,
    /// Response times of the measured host trims, as `read_us`.
    #[schemars(extend("x-unit" = "µs"))]
    pub trim_us: LatencySummary,
    /// The whole response-time distribution per operation: fio's percentile
    /// list and the histogram's buckets (JSON only).
    pub latency: LatencyDistributions,
    /// Erase counts of the good blocks at the end of the run (preconditioning
    /// included).
    pub erase_count: EraseStats,
    /// Raw bit error rate of every good block at the end of the run, by the
    /// wear model (000 Section 6.2, Eq. 27: `log10 RBER = x_b + y_b
    /// log10(erases / device.wear.endurance_cycles)`; 0 for a block never
    /// erased).
    pub rber: RberStats,
    /// Good blocks whose RBER reached the retirement threshold
    /// `device.wear.retirement_rber` (default 1e-2), over all good blocks; the
    /// blocks are not taken out of service, this only reports how many would
    /// be.
    #[schemars(extend("x-unit" = "fraction"))]
    pub retired_fraction: f64,
    /// Cumulative distribution of the good blocks' RBER at the end of the run
    /// (000 Figure 10): 40 pairs `[rber, fraction]`, `rber` at fixed points
    /// evenly spaced in log10 from 1e-5 to 1e-1 (the same in every run),
    /// `fraction` the share of good blocks with RBER ≤ `rber` (never-erased
    /// blocks, RBER 0, count at every point). JSON only.
    pub rber_cdf: Vec<[f64; 2]>,
    /// The good blocks' erase counts at the end of the run: pairs `[erase
    /// count, blocks]`, one for each count some block has, in increasing
    /// order. JSON only.
    pub erase_histogram: Vec<[u64; 2]>,
    /// True when the measured run ended because
    /// `workload.stop_at_retired_fraction` of the good blocks reached the
    /// retirement RBER (000 Section 6.2 runs until 2%); checked before each
    /// request is dispatched, so `retired_fraction` is then at least that
    /// value. False when the workload ended first or the key is not set.
    pub stopped_at_retired_fraction: bool,
    /// `logical_pages` / `physical_pages` (1 − effective over-provisioning).
    #[schemars(extend("x-unit" = "fraction"))]
    pub space_utilization: f64,
    /// Pages the FTL exports to the host.
    #[schemars(extend("x-unit" = "pages"))]
    pub logical_pages: u64,
    /// Pages of the device.
    #[schemars(extend("x-unit" = "pages"))]
    pub physical_pages: u64,
    /// RAM the FTL reports for its mapping and bookkeeping.
    #[schemars(extend("x-unit" = "bytes"))]
    pub ram_bytes: u64,
    /// The RAM of the simulator's structures by part (JSON; in CSV, the
    /// `memory.*` columns).
    pub memory: MemoryReport,
    /// The FTL's promised worst-case service time of one page command for this
    /// chip and configuration; null for schemes that promise none.
    #[schemars(extend("x-unit" = "µs"))]
    pub ftl_bound_us: Option<f64>,
    /// The bound page commands were checked against: `metrics.bound_us`
    /// (`--bound-us`) when set, so any scheme can be held to a real-time
    /// scheme's promise, else `ftl_bound_us`; null when there is neither.
    #[schemars(extend("x-unit" = "µs"))]
    pub bound_us: Option<f64>,
    /// Page commands (read-modify-writes apart) whose service time exceeded
    /// `bound_us`; null when there is no bound (never 0 by default). A page
    /// command's **service time** runs from the later of its readiness (its
    /// request's dispatch — its admission into the device under `per-die-edf`
    /// — or, under dispatch by request, the completion of the request's
    /// earlier pages) and the end of the last host operation of another
    /// command on the die its own host operations use, to its completion.
    /// Waiting behind other host commands is queueing and not counted; waiting
    /// behind garbage-collection, map or wear-leveling work on its die is
    /// service, whenever that work was reserved (e.g. a GC step an earlier
    /// write left after its acknowledgement), and so is waiting for the
    /// channel. The same definition holds in both dispatch modes and at every
    /// queue depth.
    #[schemars(extend("x-unit" = "page commands"))]
    pub bound_violations: Option<u64>,
    /// The longest service time of a page command, measured as for
    /// `bound_violations`. On a channel shared by several dies, Lazy-RTGC's
    /// and WAO-GC's `bound_us` carry the other dies' collection copies that
    /// cross the channel (without copyback, or with several planes a die:
    /// `(dies a channel - 1) x 2 x alpha` page transfers) and Telomere's one
    /// block-summary transfer a die; that holds with one request at a time.
    /// With several requests in flight the other dies may have several
    /// collection steps reserved ahead on the channel, the promise does not
    /// hold, and the violations are reported as such.
    #[schemars(extend("x-unit" = "µs"))]
    pub max_service_us: f64,
    /// Twice `bound_us`: the bound a read-modify-write page command (a
    /// partial-page write: a read of the page, then a write of it) is checked
    /// against, two page commands each within `bound_us`; null when there is
    /// no bound.
    #[schemars(extend("x-unit" = "µs"))]
    pub rmw_bound_us: Option<f64>,
    /// Read-modify-write page commands whose service time (as for
    /// `bound_violations`) exceeded `rmw_bound_us`; null when there is no
    /// bound.
    #[schemars(extend("x-unit" = "page commands"))]
    pub rmw_bound_violations: Option<u64>,
    /// The longest service time of a read-modify-write page command (0 when
    /// there was none).
    #[schemars(extend("x-unit" = "µs"))]
    pub max_rmw_service_us: f64,
    /// Only with `host.dispatch = "per-die-edf"` (absent otherwise, and when
    /// the FTL never names the die of a read): the longest time a host read
    /// page command waited, after it became ready, for flash work already
    /// reserved on its die at that moment — the non-preemptive operation it
    /// did not choose. When the FTL puts writes on free dies (pagemap does) and
    /// no garbage collection runs, that is at most one flash operation (with
    /// its wait for the channel), so at most the erase time; garbage
    /// collection the FTL reserves on the die counts whole. Waiting for
    /// commands with earlier deadlines and for the channel is not counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-unit" = "µs"))]
    pub max_read_block_us: Option<f64>,
    /// Jobs of periodic tasks that missed their deadline (release + period),
    /// summed over tasks.
    #[schemars(extend("x-unit" = "jobs"))]
    pub deadline_misses: u64,
    /// Tasks the FTL's admission control refused (they issue nothing); 0
    /// without admission control.
    #[schemars(extend("x-unit" = "tasks"))]
    pub tasks_refused: u64,
    /// Per periodic task, its jobs and deadline misses (JSON only).
    pub tasks: Vec<TaskReport>,
    /// Simulated time measured (not wall-clock time).
    #[schemars(extend("x-unit" = "s"))]
    pub sim_seconds: f64,
    /// Measured host requests per simulated second (0 for a run of no time).
    #[schemars(extend("x-unit" = "1/s"))]
    pub iops: f64,
    /// Bytes the measured reads asked for, 10^6 a simulated second.
    #[schemars(extend("x-unit" = "MB/s"))]
    pub read_mb_per_s: f64,
    /// Bytes the measured writes asked for, 10^6 a simulated second.
    #[schemars(extend("x-unit" = "MB/s"))]
    pub write_mb_per_s: f64,
    /// Host pages completed per interval, and the flash work of each interval
    /// (JSON only).
    pub throughput: ThroughputSeries,
    /// The energy of the measured flash work, with `[device.energy]`; left out
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy: Option<crate::energy::EnergyReport>,
    /// How the dies spent the measured time, in total and per host request.
    pub die_time: crate::energy::DieTimeReport,
    /// Only for an FTL with gauges (left out otherwise): each gauge's value at
    /// the end of the run (the last values of `throughput.gauges`). In `ftlab
    /// run -f csv` they are columns `ftl_gauges.NAME`; sweep rows carry
    /// `ftl_gauges.NAME` only when a `[[plot]]` of the sweep plots it (null for
    /// a run whose FTL has no such gauge).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub ftl_gauges: BTreeMap<String, f64>,
    /// Only for an FTL with curves (left out otherwise): each curve at the end
    /// of the run, an array. Janus-FTL: `ghost_hit_rates`, the ghost buffers'
    /// estimate of the page-mapping area's hit rate at 0, 1, 2, ... fused
    /// blocks that its last adaptation decision used (left out before the
    /// first); `ftlab janus-model --hit-rates REPORT.json` evaluates Eq. 1-5
    /// on it. Not in CSV output.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub ftl_curves: BTreeMap<String, Vec<f64>>,
    /// The flash operations by kind and purpose.
    pub flash_ops: FlashOps,
    /// `"ok"` when every read, during the run and in a final read-back of
    /// every logical page, returned the data last written; otherwise a
    /// description of the first mismatch (the exit status is then 1); `"not
    /// checked: the run was interrupted"` after Ctrl-C (no final read-back, no
    /// mismatch during the run).
    #[schemars(extend("x-unit" = "text"))]
    pub integrity: String,
    /// The same verdict, typed: the first mismatch's page, time and contents.
    #[serde(skip)]
    pub verdict: Integrity,
    /// Mismatching reads found.
    #[schemars(extend("x-unit" = "reads"))]
    pub integrity_errors: u64,
    /// Page reads the FTL refused because the data's lifetime was over when
    /// the read ran (a late task read; Telomere), counted rather than failing
    /// the run.
    #[schemars(extend("x-unit" = "pages"))]
    pub expired_reads: u64,
    /// Trace requests out of time order beyond the reorder window (issued at
    /// the latest time seen).
    #[schemars(extend("x-unit" = "requests"))]
    pub late_requests: u64,
    /// Malformed trace lines skipped (`--skip-bad-lines`).
    #[schemars(extend("x-unit" = "lines"))]
    pub skipped_lines: u64,
    /// How trace addresses were folded into the device (modulo, compact, ...);
    /// null without a trace.
    #[schemars(extend("x-unit" = "text"))]
    pub address: Option<String>,
    /// Null when the run ran to its end; otherwise why it stopped early (a
    /// flash or FTL error, a malformed trace line, Ctrl-C: "interrupted after
    /// N measured requests"), and every other field reports what the run did
    /// until then. The final read-back of every page is skipped, so
    /// `integrity` covers only the reads the run made. The table shows it on
    /// an `error` line; the exit status is 1 (130 after Ctrl-C).
    #[schemars(extend("x-unit" = "text"))]
    pub error: Option<String>,
    /// One object a flow, in the order of the `[[flow]]` tables (MQSim's flows
    /// in file order); left out of single-workload reports.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowReport>,
    /// Smallest flow slowdown / largest (1: every flow slowed alike); null
    /// unless every flow has a slowdown; left out of single-workload reports.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-unit" = "ratio"))]
    pub fairness: Option<f64>,
    /// Settings of an imported configuration (`ftlab mqsim`) that ftlab does
    /// not model, each naming the MQSim element, its value and what ftlab does
    /// instead; left out when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unsupported: Vec<String>,
}

impl Report {
    /// Fills the flash-derived fields from `counters`.
    pub fn set_flash(&mut self, counters: &Counters) {
        self.flash_pages_read = counters.reads.total();
        self.flash_pages_programmed = counters.programs.total();
        self.gc_page_copies = counters.page_copies();
        self.erases = counters.erases.total() - counters.erases.get(Purpose::Recovery);
        self.waf = counters.waf();
        self.flash_ops = FlashOps::from(counters);
    }
}

/// What one flow did, in a multi-flow run's report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct FlowReport {
    /// The flow as configured: its name.
    #[schemars(extend("x-unit" = "name"))]
    pub name: String,
    /// Its workload, as the report's `workload`.
    #[schemars(extend("x-unit" = "text"))]
    pub workload: String,
    /// Its priority class: urgent, high, medium, low.
    #[schemars(extend("x-unit" = "name"))]
    pub priority: String,
    /// Its weight among flows of its class.
    #[schemars(extend("x-unit" = "integer"))]
    pub weight: u32,
    /// Its queue depth.
    #[schemars(extend("x-unit" = "requests"))]
    pub queue_depth: u32,
    /// First page of its part of the logical space (the space split equally,
    /// in order).
    #[schemars(extend("x-unit" = "pages"))]
    pub first_page: u64,
    /// Pages of its part of the logical space.
    #[schemars(extend("x-unit" = "pages"))]
    pub pages: u64,
    /// Requests it completed during measurement.
    #[schemars(extend("x-unit" = "requests"))]
    pub requests: u64,
    /// Pages they read or wrote.
    #[schemars(extend("x-unit" = "pages"))]
    pub host_pages: u64,
    /// Response-time summary of all its requests, sharing the device. Closed
    /// loop: from when the flow's queue had room for the request.
    #[schemars(extend("x-unit" = "µs"))]
    pub response_us: LatencySummary,
    /// The same, of its reads.
    #[schemars(extend("x-unit" = "µs"))]
    pub read_us: LatencySummary,
    /// The same, of its writes.
    #[schemars(extend("x-unit" = "µs"))]
    pub write_us: LatencySummary,
    /// The same flow's summary when it ran alone on a fresh device (same
    /// preconditioning, part of the space, seed); null with `metrics.slowdown
    /// = false` (the default of `ftlab mqsim` without `--slowdown`).
    #[schemars(extend("x-unit" = "µs"))]
    pub alone_response_us: Option<LatencySummary>,
    /// `response_us.mean / alone_response_us.mean`: 1 alone, larger when the
    /// other flows slow it down; null when either run completed none of its
    /// requests or its alone mean is 0 (reads of pages never written take no
    /// time).
    #[schemars(extend("x-unit" = "ratio"))]
    pub slowdown: Option<f64>,
    /// Its measured requests whose offset or length is not a whole number of
    /// logical pages (served as the whole pages they touch).
    #[schemars(extend("x-unit" = "requests"))]
    pub unaligned_requests: u64,
    /// Pages it wrote in part, each a read-modify-write.
    #[schemars(extend("x-unit" = "pages"))]
    pub partial_page_writes: u64,
    /// Pages it read that no write had reached (read as zeroes; with
    /// `ftl.unwritten_reads = "flash"` at a flash read's cost).
    #[schemars(extend("x-unit" = "pages"))]
    pub unwritten_page_reads: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_summary_is_exact_for_mean_and_max() {
        let mut l = Latency::default();
        for us in [100u64, 200, 300, 10_000] {
            l.record(us * 1000);
        }
        let s = l.summary();
        assert_eq!(s.count, 4);
        assert!((s.mean - 2650.0).abs() < 1e-9);
        assert_eq!(s.max, 10_000.0);
        assert!((s.p50 - 200.0).abs() / 200.0 < 1e-2, "{}", s.p50);
        assert_eq!(l.count_above(5_000_000), 1);
    }

    #[test]
    fn percentiles_never_exceed_the_exact_max() {
        // 1,234,567 ns sits in an HDR bucket whose upper edge is above it: the raw
        // percentile would be larger than the max.
        let mut l = Latency::default();
        l.record(1_234_567);
        let s = l.summary();
        assert_eq!(s.max, 1234.567);
        for (name, p) in [("p50", s.p50), ("p99", s.p99), ("p999", s.p999), ("p9999", s.p9999)] {
            assert!(p <= s.max, "{name} {p} > max {}", s.max);
        }
        assert_eq!(s.p99, s.max, "a single sample is every percentile");
    }

    #[test]
    fn the_distribution_keeps_every_response_and_fios_percentiles() {
        let mut l = Latency::default();
        // Ties (500 x 100 us), a spread, and a tail of one.
        for _ in 0..500 {
            l.record(100_000);
        }
        for i in 1..=499u64 {
            l.record(200_000 + i * 1000);
        }
        l.record(9_876_543);
        let d = l.distribution();
        assert_eq!(d.bins.iter().map(|b| b[1]).sum::<u64>(), 1000, "exact counts");
        assert_eq!(d.bins[0], [100_031, 500], "the ties share one bucket (upper edge 100,031 ns)");
        assert_eq!(d.bins.last().copied(), Some([9_876_543, 1]), "the last edge is the exact max");
        assert!(d.bins.windows(2).all(|w| w[0][0] < w[1][0]), "increasing edges");
        // 499 distinct responses from 201 to 699 us fall in fio's buckets:
        // log2(699 / 201) x 64, about 115 of them, not 499.
        assert!((100..=130).contains(&d.bins.len()), "{} buckets", d.bins.len());
        let spread = &d.bins[1..d.bins.len() - 1];
        assert!(
            spread.windows(2).all(|w| (w[1][0] - w[0][0]) as f64 / w[0][0] as f64 <= 1.0 / 64.0 + 1e-3),
            "no bucket wider than fio's"
        );
        let p: Vec<f64> = d.percentiles.iter().map(|x| x[0]).collect();
        assert_eq!(p, FIO_PERCENTILES.to_vec());
        let at = |q: f64| d.percentiles.iter().find(|x| x[0] == q).map(|x| x[1]).unwrap_or(f64::NAN);
        assert!((at(50.0) - 100.031).abs() < 1e-9, "{}", at(50.0));
        assert!((at(90.0) - 600.0).abs() / 600.0 < 1e-3, "the 900th response, 600 us: {}", at(90.0));
        assert!((at(99.99) - 9876.543).abs() < 1e-9, "the tail is the one slow response: {}", at(99.99));
        // Agrees with the summary at the percentiles both carry.
        assert_eq!(at(50.0), l.summary().p50);
        assert_eq!(at(99.0), l.summary().p99);
        assert_eq!(Latency::default().distribution(), LatencyDistribution::default());
    }

    #[test]
    fn throughput_buckets_merge_when_the_run_is_long() {
        let mut t = Throughput::new(1000, false);
        t.add(SimTime(500), true, 1);
        t.add(SimTime(1500), false, 2);
        t.add(SimTime(1000 * 5000), false, 3);
        let s = t.series();
        assert_eq!(s.interval_s, 2000.0 / 1e9);
        assert_eq!(s.read_pages[0], 1);
        assert_eq!(s.write_pages[0], 2);
        assert_eq!(s.write_pages.iter().sum::<u64>(), 5);
        assert!(s.read_pages.len() <= Throughput::MAX_BUCKETS);
    }

    #[test]
    fn a_fixed_width_keeps_its_buckets_until_there_are_too_many() {
        let mut t = Throughput::new(1, true);
        t.add(SimTime(5000), true, 1);
        assert_eq!(t.series().interval_s, 1e-9, "fixed: 5,001 buckets of 1 ns kept");
        assert_eq!(t.series().read_pages.len(), 5001);
        // 1 ns wide over a run of 1 s would be 10^9 buckets (64 GB).
        t.add(SimTime(1_000_000_000), false, 2);
        let s = t.series();
        assert!(s.read_pages.len() <= Throughput::MAX_FIXED_BUCKETS, "{}", s.read_pages.len());
        assert_eq!(s.interval_s, 1024.0 / 1e9);
        assert_eq!((s.read_pages.iter().sum::<u64>(), s.write_pages.iter().sum::<u64>()), (1, 2));
    }

    #[test]
    fn flash_work_lands_in_the_bucket_of_the_completion_that_saw_it() {
        let mut t = Throughput::new(1000, true);
        let at = |p, g, e| {
            let mut c = Counters::default();
            c.programs.0[Purpose::Host as usize] = p - g;
            c.programs.0[Purpose::Gc as usize] = g;
            c.erases.0[Purpose::Gc as usize] = e;
            c
        };
        t.flash(SimTime(10), &at(1, 0, 0));
        t.flash(SimTime(20), &at(1, 0, 0)); // nothing new
        t.flash(SimTime(2500), &at(6, 4, 1));
        let s = t.series();
        assert_eq!(s.flash_programs, vec![1, 0, 5]);
        assert_eq!(s.gc_programs, vec![0, 0, 4]);
        assert_eq!(s.erases, vec![0, 0, 1]);
        assert_eq!(s.read_pages.len(), 3, "every series has the same intervals");
    }

    #[test]
    fn die_time_goes_to_the_interval_of_the_completions_before_it() {
        let mut t = Throughput::new(1000, true);
        let at = |host, gc, map| {
            let mut c = Counters::default();
            c.die_ns.0[Purpose::Host as usize] = host;
            c.die_ns.0[Purpose::Gc as usize] = gc;
            c.die_ns.0[Purpose::Map as usize] = map;
            c
        };
        t.flash(SimTime(100), &at(100, 0, 0));
        t.flash(SimTime(900), &at(300, 50, 0));
        // The first completion in bucket 2 closes bucket 0 (bucket 1 had none).
        t.flash(SimTime(2100), &at(500, 250, 10));
        t.flash(SimTime(2900), &at(700, 250, 10));
        let s = t.series_at_end(&at(800, 300, 10));
        assert_eq!(s.die_host_us, vec![0.5, 0.0, 0.3]);
        assert_eq!(s.die_gc_us, vec![0.25, 0.0, 0.05]);
        assert_eq!(s.die_other_us, vec![0.01, 0.0, 0.0]);
        assert_eq!(t.series().die_host_us, vec![0.5, 0.0, 0.0], "the rest only at the end");
        let mut s = s;
        s.fill_die_idle(2);
        assert_eq!(s.die_idle_us, vec![2.0 - 0.76, 2.0, 2.0 - 0.35]);
    }

    #[test]
    fn gauges_hold_the_last_value_of_each_interval_and_merge_to_the_later_half() {
        let mut t = Throughput::new(1000, false);
        t.add(SimTime(100), false, 1);
        t.gauges(SimTime(100), &[]);
        assert!(t.series().gauges.is_empty(), "no gauges, no series");
        t.gauges(SimTime(1200), &[("fused", 3.0)]);
        t.gauges(SimTime(1500), &[("fused", 4.0)]);
        t.gauges(SimTime(3100), &[("fused", 7.0)]);
        t.add(SimTime(4100), true, 1);
        let s = t.series();
        assert_eq!(s.gauges["fused"], vec![3.0, 4.0, 4.0, 7.0, 7.0], "first value back to the start, then forward");
        assert_eq!(s.gauges["fused"].len(), s.read_pages.len());
        assert_eq!(t.final_gauges()["fused"], 7.0);
        t.gauges(SimTime(1000 * 5000), &[("fused", 9.0)]);
        let s = t.series();
        assert_eq!(s.interval_s, 2000.0 / 1e9);
        assert_eq!(&s.gauges["fused"][..3], &[4.0, 7.0, 7.0]);
        assert_eq!(s.gauges["fused"].last(), Some(&9.0));
        assert_eq!(s.gauges["fused"].len(), s.read_pages.len());
    }
}
