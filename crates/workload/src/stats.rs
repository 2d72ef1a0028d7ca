//! Summary statistics of a request stream.

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::Serialize;

use crate::{HostRequest, Op, TraceError};

/// Page size used to count the footprint, whatever the simulated device's.
pub const FOOTPRINT_PAGE: u64 = 4096;

/// Requests whose size falls in `[min_bytes, max_bytes]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SizeBucket {
    /// Smallest size in the bucket (a power of two).
    pub min_bytes: u64,
    /// Largest size in the bucket (the next power of two, minus one).
    pub max_bytes: u64,
    /// Requests in the bucket.
    pub count: u64,
}

/// What a trace (or generated workload) looks like.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceStats {
    /// Requests.
    pub requests: u64,
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// Trim requests.
    pub trims: u64,
    /// `reads / requests` (0 for an empty stream).
    pub read_fraction: f64,
    /// `writes / requests`.
    pub write_fraction: f64,
    /// `trims / requests`.
    pub trim_fraction: f64,
    /// Bytes over all requests.
    pub total_bytes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Smallest request in bytes (0 for an empty stream).
    pub size_min: u64,
    /// Mean request size in bytes.
    pub size_mean: f64,
    /// Largest request in bytes.
    pub size_max: u64,
    /// Request sizes over power-of-two buckets, from the smallest bucket in use to the
    /// largest, empty buckets in between included.
    pub size_histogram: Vec<SizeBucket>,
    /// Distinct (device, 4 KiB page) pairs touched by any request.
    pub footprint_pages: u64,
    /// `footprint_pages * 4096`.
    pub footprint_bytes: u64,
    /// Fraction of requests starting exactly where the previous request of the same
    /// device ended (the first request of each device never counts).
    pub sequential_fraction: f64,
    /// Earliest arrival (ns).
    pub first_arrival_ns: u64,
    /// Latest arrival (ns).
    pub last_arrival_ns: u64,
    /// `last_arrival_ns - first_arrival_ns`: latest minus earliest, so that it is
    /// right for traces that are not time-sorted too.
    pub duration_ns: u64,
    /// Device numbers seen, ascending.
    pub devices: Vec<u32>,
}

/// Reads the whole stream and summarises it; stops at the first error.
///
/// Memory grows with the footprint (one hash-set entry per 4 KiB page touched) and the
/// number of devices, not with the number of requests.
pub fn trace_stats<I>(requests: I) -> Result<TraceStats, TraceError>
where
    I: IntoIterator<Item = Result<HostRequest, TraceError>>,
{
    let mut s = TraceStats {
        requests: 0,
        reads: 0,
        writes: 0,
        trims: 0,
        read_fraction: 0.0,
        write_fraction: 0.0,
        trim_fraction: 0.0,
        total_bytes: 0,
        read_bytes: 0,
        write_bytes: 0,
        size_min: u64::MAX,
        size_mean: 0.0,
        size_max: 0,
        size_histogram: Vec::new(),
        footprint_pages: 0,
        footprint_bytes: 0,
        sequential_fraction: 0.0,
        first_arrival_ns: u64::MAX,
        last_arrival_ns: 0,
        duration_ns: 0,
        devices: Vec::new(),
    };
    let mut buckets = [0u64; 33];
    let mut pages: HashSet<(u32, u64)> = HashSet::new();
    let mut last_end: HashMap<u32, u64> = HashMap::new();
    let mut sequential = 0u64;
    for r in requests {
        let r = r?;
        let len = u64::from(r.len);
        s.requests += 1;
        match r.op {
            Op::Read => {
                s.reads += 1;
                s.read_bytes += len;
            }
            Op::Write => {
                s.writes += 1;
                s.write_bytes += len;
            }
            Op::Trim => s.trims += 1,
        }
        s.total_bytes += len;
        s.size_min = s.size_min.min(len);
        s.size_max = s.size_max.max(len);
        buckets[len.max(1).ilog2() as usize] += 1;
        if len > 0 {
            let (first, last) = (r.offset / FOOTPRINT_PAGE, (r.end() - 1) / FOOTPRINT_PAGE);
            pages.extend((first..=last).map(|p| (r.device, p)));
        }
        if last_end.insert(r.device, r.end()) == Some(r.offset) {
            sequential += 1;
        }
        s.first_arrival_ns = s.first_arrival_ns.min(r.arrival_ns);
        s.last_arrival_ns = s.last_arrival_ns.max(r.arrival_ns);
    }
    if s.requests == 0 {
        s.size_min = 0;
        s.first_arrival_ns = 0;
        return Ok(s);
    }
    let n = s.requests as f64;
    s.read_fraction = s.reads as f64 / n;
    s.write_fraction = s.writes as f64 / n;
    s.trim_fraction = s.trims as f64 / n;
    s.size_mean = s.total_bytes as f64 / n;
    s.sequential_fraction = sequential as f64 / n;
    s.duration_ns = s.last_arrival_ns - s.first_arrival_ns;
    s.footprint_pages = pages.len() as u64;
    s.footprint_bytes = s.footprint_pages * FOOTPRINT_PAGE;
    let lo = buckets.iter().position(|&c| c > 0).unwrap_or(0);
    let hi = buckets.iter().rposition(|&c| c > 0).unwrap_or(0);
    s.size_histogram =
        (lo..=hi).map(|k| SizeBucket { min_bytes: 1 << k, max_bytes: (1 << (k + 1)) - 1, count: buckets[k] }).collect();
    let mut devices: Vec<u32> = last_end.into_keys().collect();
    devices.sort_unstable();
    s.devices = devices;
    Ok(s)
}

fn human_bytes(b: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

impl fmt::Display for TraceStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pct = |x: f64| format!("{:.1}%", x * 100.0);
        let rows: [(&str, String); 11] = [
            ("requests", self.requests.to_string()),
            ("reads", format!("{} ({})", self.reads, pct(self.read_fraction))),
            ("writes", format!("{} ({})", self.writes, pct(self.write_fraction))),
            ("trims", format!("{} ({})", self.trims, pct(self.trim_fraction))),
            (
                "bytes",
                format!(
                    "{} (read {}, written {})",
                    human_bytes(self.total_bytes as f64),
                    human_bytes(self.read_bytes as f64),
                    human_bytes(self.write_bytes as f64)
                ),
            ),
            (
                "request size",
                format!(
                    "min {}, mean {}, max {}",
                    human_bytes(self.size_min as f64),
                    human_bytes(self.size_mean),
                    human_bytes(self.size_max as f64)
                ),
            ),
            (
                "footprint",
                format!("{} pages of 4 KiB ({})", self.footprint_pages, human_bytes(self.footprint_bytes as f64)),
            ),
            ("sequential", pct(self.sequential_fraction)),
            ("duration", format!("{:.6} s", self.duration_ns as f64 / 1e9)),
            ("arrivals", format!("{} .. {} ns", self.first_arrival_ns, self.last_arrival_ns)),
            ("devices", device_list(&self.devices)),
        ];
        for (name, value) in rows {
            writeln!(f, "{name:<14} {value}")?;
        }
        writeln!(f, "size histogram")?;
        for b in &self.size_histogram {
            writeln!(
                f,
                "  {:>10} .. {:<10} {:>10}",
                human_bytes(b.min_bytes as f64),
                human_bytes(b.max_bytes as f64),
                b.count
            )?;
        }
        Ok(())
    }
}

/// At most 16 device numbers, then a count of the rest.
fn device_list(devices: &[u32]) -> String {
    let shown: Vec<String> = devices.iter().take(16).map(u32::to_string).collect();
    let mut s = format!("{} [{}", devices.len(), shown.join(", "));
    if devices.len() > shown.len() {
        s.push_str(&format!(", ... {} more", devices.len() - shown.len()));
    }
    s.push(']');
    s
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn r(arrival_ns: u64, op: Op, offset: u64, len: u32, device: u32) -> Result<HostRequest, TraceError> {
        Ok(HostRequest { arrival_ns, op, offset, len, device })
    }

    #[test]
    fn counts_sizes_footprint_and_sequentiality() {
        let reqs = vec![
            r(50, Op::Write, 0, 8192, 0),    // pages 0,1
            r(10, Op::Write, 8192, 4096, 0), // sequential, page 2
            r(70, Op::Read, 0, 512, 1),      // other device, page 0 of dev 1
            r(90, Op::Read, 4096, 1000, 0),  // page 1 again, not sequential
            r(95, Op::Trim, 5096, 3000, 0),  // sequential after the read, page 1 again
        ];
        let s = trace_stats(reqs).unwrap();
        assert_eq!((s.requests, s.reads, s.writes, s.trims), (5, 2, 2, 1));
        assert!((s.read_fraction - 0.4).abs() < 1e-12);
        assert_eq!(s.total_bytes, 8192 + 4096 + 512 + 1000 + 3000);
        assert_eq!((s.read_bytes, s.write_bytes), (1512, 12_288));
        assert_eq!((s.size_min, s.size_max), (512, 8192));
        assert_eq!(s.footprint_pages, 4);
        assert!((s.sequential_fraction - 0.4).abs() < 1e-12);
        assert_eq!((s.first_arrival_ns, s.last_arrival_ns, s.duration_ns), (10, 95, 85));
        assert_eq!(s.devices, vec![0, 1]);
        let hist: Vec<(u64, u64)> = s.size_histogram.iter().map(|b| (b.min_bytes, b.count)).collect();
        assert_eq!(hist, vec![(512, 2), (1024, 0), (2048, 1), (4096, 1), (8192, 1)]);
        let table = s.to_string();
        assert!(table.contains("reads          2 (40.0%)"), "{table}");
        assert!(table.contains("devices        2 [0, 1]"), "{table}");
    }

    #[test]
    fn empty_stream_and_errors() {
        let s = trace_stats(Vec::new()).unwrap();
        assert_eq!((s.requests, s.size_min, s.duration_ns), (0, 0, 0));
        let bad = vec![r(0, Op::Read, 0, 1, 0), Err(TraceError::InvalidSpec("x".into()))];
        assert!(trace_stats(bad).is_err());
    }

    #[test]
    fn serializes() {
        let s = trace_stats(vec![r(0, Op::Read, 0, 4096, 3)]).unwrap();
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"read_fraction\":1.0") && json.contains("\"devices\":[3]"), "{json}");
    }
}
