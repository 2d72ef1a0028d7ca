//! Folding a trace's address space into a simulated device's.
//!
//! Real traces address terabytes across several devices; a simulated SSD has
//! `logical_bytes`. An [`AddressMapper`] turns each [`HostRequest`] into zero or more
//! requests inside `[0, logical_bytes)` (rounded down to whole pages), according to an
//! [`AddressMode`], and keeps an [`AddressReport`] of what it did.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{HostRequest, TraceError};

/// How trace addresses become device addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AddressMode {
    /// Wrap: the start offset is taken modulo the device space and the length is kept;
    /// a request that would then run past the end is moved back so it ends exactly at
    /// the end (counted as `clamped`) rather than split or shortened, so the bytes
    /// written are those of the trace. Devices share one space.
    Modulo,
    /// Each distinct (device, page) the trace touches gets the next free device page,
    /// in order of first appearance: the footprint is packed densely at the start of
    /// the device and the locality between pages is kept only where pages are first
    /// touched together. A request whose pages map to non-contiguous device pages is
    /// split into contiguous pieces (counted as `split`). Memory grows with the
    /// footprint, not the trace; an error when the footprint exceeds the device.
    Compact,
    /// Keep only the requests of this device (others are counted as `dropped`), then
    /// wrap as [`Modulo`](AddressMode::Modulo).
    Device(u32),
    /// Devices side by side: each device gets a span equal to the largest end offset it
    /// reaches (rounded up to a page), placed in order of first appearance, then the
    /// whole is wrapped as [`Modulo`](AddressMode::Modulo). The spans come from a first
    /// pass over the trace ([`AddressMapper::scan`]); mapping without it is an error.
    Concat,
}

impl fmt::Display for AddressMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AddressMode::Modulo => f.write_str("modulo"),
            AddressMode::Compact => f.write_str("compact"),
            AddressMode::Device(d) => write!(f, "device:{d}"),
            AddressMode::Concat => f.write_str("concat"),
        }
    }
}

impl FromStr for AddressMode {
    type Err = TraceError;

    /// `modulo`, `compact`, `concat`, or `device:N` (also `device=N`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        match lower.as_str() {
            "modulo" => return Ok(AddressMode::Modulo),
            "compact" => return Ok(AddressMode::Compact),
            "concat" => return Ok(AddressMode::Concat),
            _ => {}
        }
        lower
            .strip_prefix("device")
            .and_then(|rest| rest.strip_prefix([':', '=']))
            .and_then(|n| n.parse().ok())
            .map(AddressMode::Device)
            .ok_or_else(|| {
                TraceError::Mapping(format!("unknown address mode {s:?}; use modulo, compact, concat or device:N"))
            })
    }
}

/// Where [`AddressMode::Concat`] placed one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DeviceSpan {
    /// The trace's device number.
    pub device: u32,
    /// First byte of the device's span in the concatenated space.
    pub base: u64,
    /// Bytes of the span (largest end offset seen by the scan, rounded up to a page).
    pub span: u64,
}

/// What an [`AddressMapper`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AddressReport {
    /// The mode used.
    pub mode: AddressMode,
    /// Device space in bytes (whole pages).
    pub logical_bytes: u64,
    /// Page size in bytes.
    pub page_size: u32,
    /// Requests given to the mapper.
    pub requests_in: u64,
    /// Requests it produced (more than kept when requests were split).
    pub requests_out: u64,
    /// Requests dropped ([`AddressMode::Device`] filter).
    pub dropped: u64,
    /// Requests whose start was beyond the space and wrapped.
    pub wrapped: u64,
    /// Requests moved back (or, if longer than the space, cut) to end inside the space.
    pub clamped: u64,
    /// Requests split into pieces ([`AddressMode::Compact`]).
    pub split: u64,
    /// Distinct pages in use ([`AddressMode::Compact`] only).
    pub footprint_pages: Option<u64>,
    /// Device placement ([`AddressMode::Concat`] only).
    pub devices: Vec<DeviceSpan>,
}

impl fmt::Display for AddressReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "address mode {} over {} bytes ({} pages of {} B)",
            self.mode,
            self.logical_bytes,
            self.logical_bytes / u64::from(self.page_size),
            self.page_size
        )?;
        writeln!(
            f,
            "  requests in {}, out {}, dropped {}, wrapped {}, clamped {}, split {}",
            self.requests_in, self.requests_out, self.dropped, self.wrapped, self.clamped, self.split
        )?;
        if let Some(pages) = self.footprint_pages {
            writeln!(f, "  footprint {pages} pages")?;
        }
        for d in &self.devices {
            writeln!(f, "  device {} at byte {} span {} bytes", d.device, d.base, d.span)?;
        }
        Ok(())
    }
}

/// Maps trace requests into `[0, logical_bytes)`.
#[derive(Debug)]
pub struct AddressMapper {
    mode: AddressMode,
    page_size: u64,
    capacity_pages: u64,
    /// Concat: device -> index in `spans`, in order of first appearance in the scan.
    span_index: HashMap<u32, usize>,
    spans: Vec<DeviceSpan>,
    /// Concat: bases computed from `spans` at the first `map`.
    placed: bool,
    /// Compact: (device, trace page) -> device page.
    compact: HashMap<(u32, u64), u64>,
    report: AddressReport,
}

impl AddressMapper {
    /// A mapper onto `logical_bytes` (rounded down to whole pages of `page_size`).
    pub fn new(mode: AddressMode, logical_bytes: u64, page_size: u32) -> Result<Self, TraceError> {
        if page_size == 0 {
            return Err(TraceError::Mapping("page size must be > 0".into()));
        }
        let capacity_pages = logical_bytes / u64::from(page_size);
        if capacity_pages == 0 {
            return Err(TraceError::Mapping(format!(
                "the device space ({logical_bytes} bytes) must hold at least one page of {page_size} bytes"
            )));
        }
        let logical_bytes = capacity_pages * u64::from(page_size);
        Ok(AddressMapper {
            mode,
            page_size: u64::from(page_size),
            capacity_pages,
            span_index: HashMap::new(),
            spans: Vec::new(),
            placed: false,
            compact: HashMap::new(),
            report: AddressReport {
                mode,
                logical_bytes,
                page_size,
                requests_in: 0,
                requests_out: 0,
                dropped: 0,
                wrapped: 0,
                clamped: 0,
                split: 0,
                footprint_pages: (mode == AddressMode::Compact).then_some(0),
                devices: Vec::new(),
            },
        })
    }

    /// Whether the mode needs a [`scan`](Self::scan) pass before mapping.
    pub fn needs_scan(&self) -> bool {
        self.mode == AddressMode::Concat
    }

    /// Scan pass: records one request's device extent (used by [`AddressMode::Concat`]).
    pub fn observe(&mut self, req: &HostRequest) {
        let end = req.end().div_ceil(self.page_size).saturating_mul(self.page_size);
        let next = self.spans.len();
        let i = *self.span_index.entry(req.device).or_insert(next);
        if i == next {
            self.spans.push(DeviceSpan { device: req.device, base: 0, span: 0 });
        }
        self.spans[i].span = self.spans[i].span.max(end);
        self.placed = false;
    }

    /// Scan pass over a whole stream of requests.
    pub fn scan(&mut self, requests: impl IntoIterator<Item = HostRequest>) {
        for r in requests {
            self.observe(&r);
        }
    }

    /// Scan pass over a fallible stream (a [`TraceReader`](crate::TraceReader)).
    pub fn try_scan<E>(&mut self, requests: impl IntoIterator<Item = Result<HostRequest, E>>) -> Result<(), E> {
        for r in requests {
            self.observe(&r?);
        }
        Ok(())
    }

    /// What the mapper did so far.
    pub fn report(&self) -> AddressReport {
        self.report.clone()
    }

    fn space(&self) -> u64 {
        self.report.logical_bytes
    }

    /// Wraps `[offset, offset + len)` into the space (see [`AddressMode::Modulo`]).
    fn fold(&mut self, req: HostRequest, offset: u64) -> HostRequest {
        let space = self.space();
        let mut len = u64::from(req.len);
        let mut start = offset % space;
        if start != offset {
            self.report.wrapped += 1;
        }
        let mut clamped = len > space;
        len = len.min(space);
        if start + len > space {
            start = space - len;
            clamped = true;
        }
        if clamped {
            self.report.clamped += 1;
        }
        HostRequest {
            offset: start,
            // len <= the original u32 length.
            len: u32::try_from(len).unwrap_or(req.len),
            ..req
        }
    }

    fn place_devices(&mut self) -> Result<(), TraceError> {
        if self.spans.is_empty() {
            return Err(TraceError::Mapping("concat mode needs a scan pass over the trace before mapping".into()));
        }
        let mut base = 0u64;
        for s in &mut self.spans {
            s.base = base;
            base = base.saturating_add(s.span);
        }
        self.report.devices = self.spans.clone();
        self.placed = true;
        Ok(())
    }

    fn compact(&mut self, req: HostRequest, out: &mut Vec<HostRequest>) -> Result<(), TraceError> {
        let ps = self.page_size;
        let end = req.end();
        let (first, last) = (req.offset / ps, (end - 1) / ps);
        // Current run of contiguous device pages: (device page of its start, bytes start, bytes end).
        let first_piece = out.len();
        let mut run: Option<(u64, u64, u64)> = None;
        let mut pieces = 0u64;
        for page in first..=last {
            let next = self.compact.len() as u64;
            let dev_page = *self.compact.entry((req.device, page)).or_insert(next);
            if dev_page >= self.capacity_pages {
                self.compact.remove(&(req.device, page));
                out.truncate(first_piece); // all of the request or none of it
                return Err(TraceError::FootprintTooLarge {
                    mode: self.mode.to_string(),
                    capacity_pages: self.capacity_pages,
                });
            }
            let lo = if page == first { req.offset % ps } else { 0 };
            let hi = if page == last { (end - 1) % ps + 1 } else { ps };
            let (start, stop) = (dev_page * ps + lo, dev_page * ps + hi);
            run = match run {
                Some((_, s, e)) if e == start => Some((dev_page, s, stop)),
                Some((_, s, e)) => {
                    pieces += 1;
                    out.push(piece(req, s, e));
                    Some((dev_page, start, stop))
                }
                None => Some((dev_page, start, stop)),
            };
        }
        if let Some((_, s, e)) = run {
            pieces += 1;
            out.push(piece(req, s, e));
        }
        if pieces > 1 {
            self.report.split += 1;
        }
        self.report.requests_out += pieces - 1; // the caller counts one
        self.report.footprint_pages = Some(self.compact.len() as u64);
        Ok(())
    }

    /// Maps one request, appending the result (none if dropped, several if split) to `out`.
    pub fn map(&mut self, req: HostRequest, out: &mut Vec<HostRequest>) -> Result<(), TraceError> {
        self.report.requests_in += 1;
        if req.len == 0 {
            return Err(TraceError::Mapping(format!("zero-length request {req:?}")));
        }
        match self.mode {
            AddressMode::Modulo => {
                let r = self.fold(req, req.offset);
                out.push(r);
            }
            AddressMode::Device(d) => {
                if req.device != d {
                    self.report.dropped += 1;
                    return Ok(());
                }
                let r = self.fold(req, req.offset);
                out.push(r);
            }
            AddressMode::Concat => {
                if !self.placed {
                    self.place_devices()?;
                }
                let span = self
                    .span_index
                    .get(&req.device)
                    .map(|&i| self.spans[i])
                    .filter(|s| req.end() <= s.span)
                    .ok_or_else(|| {
                        TraceError::Mapping(format!(
                            "request {req:?} lies outside what the scan pass saw of device {}; \
                             scan the same trace that is mapped",
                            req.device
                        ))
                    })?;
                let r = self.fold(req, span.base + req.offset);
                out.push(r);
            }
            AddressMode::Compact => self.compact(req, out)?,
        }
        self.report.requests_out += 1;
        Ok(())
    }

    /// Maps a fallible stream lazily; the mapper (and its report) is available from
    /// the returned iterator.
    pub fn map_iter<I>(self, requests: I) -> Mapped<I::IntoIter>
    where
        I: IntoIterator<Item = Result<HostRequest, TraceError>>,
    {
        Mapped { mapper: self, inner: requests.into_iter(), pending: Vec::new(), next: 0 }
    }
}

fn piece(req: HostRequest, start: u64, stop: u64) -> HostRequest {
    HostRequest {
        offset: start,
        // A piece is never longer than the request it comes from.
        len: u32::try_from(stop - start).unwrap_or(req.len),
        ..req
    }
}

/// Iterator returned by [`AddressMapper::map_iter`].
#[derive(Debug)]
pub struct Mapped<I> {
    mapper: AddressMapper,
    inner: I,
    pending: Vec<HostRequest>,
    next: usize,
}

impl<I> Mapped<I> {
    /// The mapper, for its [`report`](AddressMapper::report).
    pub fn mapper(&self) -> &AddressMapper {
        &self.mapper
    }
}

impl<I: Iterator<Item = Result<HostRequest, TraceError>>> Iterator for Mapped<I> {
    type Item = Result<HostRequest, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(r) = self.pending.get(self.next) {
                self.next += 1;
                return Some(Ok(*r));
            }
            self.pending.clear();
            self.next = 0;
            let req = match self.inner.next()? {
                Ok(r) => r,
                Err(e) => return Some(Err(e)),
            };
            if let Err(e) = self.mapper.map(req, &mut self.pending) {
                return Some(Err(e));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::Op;

    fn w(device: u32, offset: u64, len: u32) -> HostRequest {
        HostRequest { arrival_ns: 0, op: Op::Write, offset, len, device }
    }

    fn map_all(m: &mut AddressMapper, reqs: &[HostRequest]) -> Vec<(u64, u32)> {
        let mut out = Vec::new();
        for r in reqs {
            m.map(*r, &mut out).unwrap();
        }
        out.iter().map(|r| (r.offset, r.len)).collect()
    }

    #[test]
    fn modulo_wraps_and_clamps() {
        // 10 pages of 4 KiB, plus a partial page that is not usable.
        let mut m = AddressMapper::new(AddressMode::Modulo, 40_960 + 100, 4096).unwrap();
        let got = map_all(
            &mut m,
            &[w(0, 4096, 4096), w(0, 40_960 + 8192, 4096), w(0, 40_960 + 36_864, 8192), w(0, 0, 100_000)],
        );
        assert_eq!(got, vec![(4096, 4096), (8192, 4096), (32_768, 8192), (0, 40_960)]);
        let rep = m.report();
        assert_eq!((rep.requests_in, rep.requests_out, rep.wrapped, rep.clamped), (4, 4, 2, 2));
        assert_eq!(rep.logical_bytes, 40_960);
        assert!(rep.to_string().contains("wrapped 2, clamped 2"));
    }

    #[test]
    fn compact_packs_pages_in_first_appearance_order() {
        let mut m = AddressMapper::new(AddressMode::Compact, 4 * 4096, 4096).unwrap();
        // page 1000 -> 0, device 1's page 1000 -> 1, page 1000 again -> 0,
        // then pages 999..=1000 (999 new -> 2, 1000 -> 0): not contiguous, split.
        let got = map_all(
            &mut m,
            &[
                w(0, 1000 * 4096 + 512, 1024),
                w(1, 1000 * 4096, 4096),
                w(0, 1000 * 4096, 4096),
                w(0, 999 * 4096 + 2048, 4096),
            ],
        );
        assert_eq!(got, vec![(512, 1024), (4096, 4096), (0, 4096), (2 * 4096 + 2048, 2048), (0, 2048)]);
        let rep = m.report();
        assert_eq!((rep.requests_in, rep.requests_out, rep.split, rep.footprint_pages), (4, 5, 1, Some(3)));
        m.map(w(0, 7 * 4096, 4096), &mut Vec::new()).unwrap();
        let err = m.map(w(0, 8 * 4096, 4096), &mut Vec::new()).unwrap_err();
        assert!(matches!(err, TraceError::FootprintTooLarge { capacity_pages: 4, .. }), "{err}");
        assert!(err.to_string().contains("only 4 logical pages"));
    }

    #[test]
    fn compact_overflow_maps_none_of_the_request() {
        let mut m = AddressMapper::new(AddressMode::Compact, 2 * 4096, 4096).unwrap();
        let mut out = Vec::new();
        m.map(w(0, 5 * 4096, 4096), &mut out).unwrap();
        // Pages 4 (new -> 1), 5 (-> 0: a new piece), 6 (no room): nothing is emitted.
        let err = m.map(w(0, 4 * 4096, 3 * 4096), &mut out).unwrap_err();
        assert!(matches!(err, TraceError::FootprintTooLarge { .. }));
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn compact_keeps_contiguous_requests_whole() {
        let mut m = AddressMapper::new(AddressMode::Compact, 1 << 20, 4096).unwrap();
        let got = map_all(&mut m, &[w(0, 1 << 40, 16_384), w(0, (1 << 40) + 16_384, 8192)]);
        assert_eq!(got, vec![(0, 16_384), (16_384, 8192)]);
        assert_eq!(m.report().split, 0);
    }

    #[test]
    fn device_filters_then_wraps() {
        let mut m = AddressMapper::new(AddressMode::Device(2), 8192, 4096).unwrap();
        let got = map_all(&mut m, &[w(1, 0, 512), w(2, 12_288, 512), w(3, 0, 512)]);
        assert_eq!(got, vec![(4096, 512)]);
        let rep = m.report();
        assert_eq!((rep.requests_in, rep.requests_out, rep.dropped), (3, 1, 2));
    }

    #[test]
    fn concat_places_devices_side_by_side() {
        let trace = [w(5, 0, 4096), w(2, 1000, 100), w(5, 8192, 4096)];
        let mut m = AddressMapper::new(AddressMode::Concat, 1 << 20, 4096).unwrap();
        assert!(m.needs_scan());
        assert!(m.map(trace[0], &mut Vec::new()).is_err(), "no scan yet");
        let mut m = AddressMapper::new(AddressMode::Concat, 1 << 20, 4096).unwrap();
        m.scan(trace);
        let got = map_all(&mut m, &trace);
        // device 5 spans 12 KiB at 0, device 2 spans 4 KiB (1100 rounded up) at 12 KiB.
        assert_eq!(got, vec![(0, 4096), (12_288 + 1000, 100), (8192, 4096)]);
        let rep = m.report();
        assert_eq!(
            rep.devices,
            vec![DeviceSpan { device: 5, base: 0, span: 12_288 }, DeviceSpan { device: 2, base: 12_288, span: 4096 }]
        );
        assert!(m.map(w(9, 0, 512), &mut Vec::new()).is_err(), "device not scanned");
    }

    #[test]
    fn map_iter_streams_and_reports() {
        let m = AddressMapper::new(AddressMode::Compact, 1 << 20, 4096).unwrap();
        let input = vec![Ok(w(0, 0, 4096)), Ok(w(0, 1 << 30, 4096))];
        let mut it = m.map_iter(input);
        let out: Vec<_> = it.by_ref().map(Result::unwrap).collect();
        assert_eq!(out.iter().map(|r| r.offset).collect::<Vec<_>>(), vec![0, 4096]);
        assert_eq!(it.mapper().report().footprint_pages, Some(2));
    }

    #[test]
    fn mode_names() {
        for m in [AddressMode::Modulo, AddressMode::Compact, AddressMode::Concat, AddressMode::Device(3)] {
            assert_eq!(m.to_string().parse::<AddressMode>().unwrap(), m);
        }
        assert_eq!("device=7".parse::<AddressMode>().unwrap(), AddressMode::Device(7));
        assert!("device:x".parse::<AddressMode>().is_err());
        assert!(AddressMapper::new(AddressMode::Modulo, 100, 4096).is_err());
        assert!(AddressMapper::new(AddressMode::Modulo, 100, 0).is_err());
    }
}
