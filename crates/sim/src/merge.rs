//! Host-side request merging (`host.merge_bytes`, off by default): a stage
//! between the request source and the host queue that joins consecutive
//! requests of the same kind whose byte ranges follow each other into one
//! request, up to a maximum size, the way an operating system's block layer
//! does before the device sees them (Linux's I/O scheduler merging adjacent
//! requests, up to the queue's `max_sectors_kb`; read-ahead and write-back of
//! a sequential stream reach the device the same way, as large contiguous
//! requests). 003_9b28d6a0046a8156.txt Section 3.1 measures its board through
//! such a stack ("the OS I/O scheduler can merge spatially adjacent requests
//! for sequential workloads").
//!
//! Only reads with reads and writes with writes merge, only when the next
//! request starts where the one being built ends, and only while the merged
//! length stays within `max_bytes`; trims, and requests with a deadline, a
//! task or an expiry, pass through alone. A merged request is one device
//! request: the report's `requests`, `iops` and `host_pages_*` count device
//! requests and the FTL pages they cover; the host's bytes are in the MB/s
//! columns. The stage applies to closed-loop runs only (the merged
//! requests' arrivals are set when the host queue takes them), which
//! [`crate::config::HostSpec::resolve`] checks.

use ftlab_workload::Op;

use crate::error::SimError;
use crate::source::Request;

/// `source`'s requests with consecutive contiguous ones of the same kind
/// merged up to `max_bytes` each (see the module docs).
pub struct Merge<'s> {
    source: &'s mut dyn Iterator<Item = Result<Request, SimError>>,
    max_bytes: u32,
    /// The source's item read past the request being built, not merged into it.
    held: Option<Result<Request, SimError>>,
    /// Source requests merged into others so far.
    merged: u64,
}

impl std::fmt::Debug for Merge<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Merge")
            .field("max_bytes", &self.max_bytes)
            .field("merged", &self.merged)
            .finish_non_exhaustive()
    }
}

impl<'s> Merge<'s> {
    /// Merges `source`'s requests up to `max_bytes` (a request already longer
    /// passes through as it is).
    pub fn new(source: &'s mut dyn Iterator<Item = Result<Request, SimError>>, max_bytes: u32) -> Self {
        Merge { source, max_bytes, held: None, merged: 0 }
    }

    /// Source requests that were merged into an earlier one.
    pub fn merged(&self) -> u64 {
        self.merged
    }
}

/// Whether `r` may take part in a merge at all.
fn mergeable(r: &Request) -> bool {
    matches!(r.op, Op::Read | Op::Write) && r.deadline.is_none() && r.task.is_none() && r.expiry.is_none()
}

impl Iterator for Merge<'_> {
    type Item = Result<Request, SimError>;

    fn next(&mut self) -> Option<Self::Item> {
        let first = match self.held.take() {
            Some(item) => item,
            None => self.source.next()?,
        };
        let mut cur = match first {
            Ok(r) => r,
            Err(e) => return Some(Err(e)),
        };
        if !mergeable(&cur) {
            return Some(Ok(cur));
        }
        while cur.len < self.max_bytes {
            match self.source.next() {
                None => break,
                Some(Err(e)) => {
                    // Reported after the request built so far, in its place.
                    self.held = Some(Err(e));
                    break;
                }
                Some(Ok(n)) => {
                    let follows = n.op == cur.op && n.offset == cur.offset.saturating_add(u64::from(cur.len));
                    let fits = u64::from(cur.len) + u64::from(n.len) <= u64::from(self.max_bytes);
                    if mergeable(&n) && follows && fits {
                        cur.len += n.len;
                        cur.arrival = cur.arrival.max(n.arrival);
                        self.merged += 1;
                    } else {
                        self.held = Some(Ok(n));
                        break;
                    }
                }
            }
        }
        Some(Ok(cur))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn req(op: Op, offset: u64, len: u32) -> Request {
        Request { arrival: 0, op, offset, len, deadline: None, task: None, expiry: None }
    }

    fn merged(reqs: Vec<Request>, max: u32) -> (Vec<(Op, u64, u32)>, u64) {
        let mut it = reqs.into_iter().map(Ok);
        let mut m = Merge::new(&mut it, max);
        let out: Vec<_> = m.by_ref().map(|r| r.unwrap()).map(|r| (r.op, r.offset, r.len)).collect();
        (out, m.merged())
    }

    #[test]
    fn a_sequential_stream_merges_into_requests_of_the_maximum_size() {
        let reqs: Vec<_> = (0..20).map(|i| req(Op::Write, i * 4096, 4096)).collect();
        let (out, n) = merged(reqs, 32 * 1024);
        assert_eq!(out, vec![(Op::Write, 0, 32768), (Op::Write, 32768, 32768), (Op::Write, 65536, 16384)]);
        assert_eq!(n, 17);
    }

    #[test]
    fn only_contiguous_requests_of_one_kind_merge() {
        let reqs = vec![
            req(Op::Read, 0, 4096),
            req(Op::Read, 4096, 4096),
            req(Op::Write, 8192, 4096),  // another kind
            req(Op::Write, 16384, 4096), // a gap
            req(Op::Write, 20480, 4096),
            req(Op::Trim, 24576, 4096), // trims never merge
            req(Op::Trim, 28672, 4096),
            req(Op::Read, 100 * 4096, 4096),
            req(Op::Read, 99 * 4096, 4096), // behind, not after
        ];
        let (out, n) = merged(reqs, 1 << 20);
        assert_eq!(
            out,
            vec![
                (Op::Read, 0, 8192),
                (Op::Write, 8192, 4096),
                (Op::Write, 16384, 8192),
                (Op::Trim, 24576, 4096),
                (Op::Trim, 28672, 4096),
                (Op::Read, 100 * 4096, 4096),
                (Op::Read, 99 * 4096, 4096),
            ]
        );
        assert_eq!(n, 2);
    }

    #[test]
    fn a_request_that_would_pass_the_maximum_starts_the_next() {
        let reqs = vec![req(Op::Write, 0, 12288), req(Op::Write, 12288, 8192), req(Op::Write, 20480, 4096)];
        let (out, _) = merged(reqs, 16384);
        assert_eq!(out, vec![(Op::Write, 0, 12288), (Op::Write, 12288, 12288)]);
    }

    #[test]
    fn a_source_error_comes_after_the_request_built_before_it() {
        let items =
            vec![Ok(req(Op::Write, 0, 4096)), Ok(req(Op::Write, 4096, 4096)), Err(SimError::config("x", "bad"))];
        let mut it = items.into_iter();
        let mut m = Merge::new(&mut it, 1 << 20);
        assert_eq!(m.next().unwrap().unwrap().len, 8192);
        assert!(m.next().unwrap().is_err());
        assert!(m.next().is_none());
    }

    fn config(extra: &str) -> crate::RunConfig {
        let text = format!(
            r#"
            seed = 1
            [device]
            chip = "jasmine-openssd"
            blocks_per_plane = 16
            [ftl]
            kind = "pagemap"
            [host]
            queue_depth = 4
            {extra}
            [workload]
            block_bytes = 4096
            generator = {{ kind = "sequential", requests = 64, read_fraction = 0.0 }}
            "#
        );
        crate::RunConfig::from_toml(&text, "merge").unwrap()
    }

    #[test]
    fn a_run_with_merging_sends_fewer_larger_requests_and_the_same_data() {
        let plain = crate::run(&config(r#"mode = "closed""#), &mut |_| {}).unwrap();
        let merged = crate::run(&config("mode = \"closed\"\n            merge_bytes = 32768"), &mut |_| {}).unwrap();
        assert_eq!(plain.requests, 64);
        assert_eq!(merged.requests, 8, "64 sequential 4 KiB writes are 8 requests of 32 KiB");
        // The same bytes: 64 partial pages written before, 8 whole ones now.
        assert_eq!((plain.host_pages_written, merged.host_pages_written), (64, 8));
        let bytes = |r: &crate::Report| (r.write_mb_per_s * r.sim_seconds * 1e6).round();
        assert_eq!(bytes(&merged), bytes(&plain));
        assert_eq!(merged.integrity, "ok");
        // Whole pages: the baseline reads nothing back.
        assert_eq!(merged.rmw_pages, 0);
        assert!(plain.rmw_pages > 0);
    }

    #[test]
    fn merging_is_refused_where_it_does_not_apply() {
        for extra in
            ["mode = \"open\"\n            merge_bytes = 32768", "mode = \"closed\"\n            merge_bytes = 0"]
        {
            let err = crate::run(&config(extra), &mut |_| {}).unwrap_err().to_string();
            assert!(err.contains("host.merge_bytes"), "{err}");
        }
    }
}
