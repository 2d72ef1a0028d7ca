//! Streaming readers for real block traces.
//!
//! [`TraceReader`] reads one line at a time into a reused buffer, so memory stays
//! constant whatever the trace length. Compressed traces (gzip, bzip2, zstd) are
//! recognised by their magic bytes, not their file name, and decompressed on the fly.
//!
//! A file whose name promises a compression (`.gz`, `.bz2`, `.zst`) its content does
//! not have is an error ([`TraceError::CompressionMismatch`]), never read as
//! something else.
//!
//! Blank lines, `#` comment lines and a header line (a first line that is not a
//! request and holds no number, only column names such as SYSTOR's
//! `Timestamp,Response,...`) are skipped silently. Every other line that breaks the
//! format is an error naming the file and line — the first line included — or, with
//! [`ReadOptions::skip_bad_lines`], is counted and skipped. A trace that yields
//! nothing at all (empty, or read in the wrong format) ends with
//! [`TraceError::NoRequests`] instead of a silent end.

mod format;
mod parse;

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub use format::{BlkEvent, TraceFormat};
use parse::{excerpt, parse_line, Line};

use crate::{HostRequest, TraceError};

/// How many bad line numbers a reader keeps for its report.
pub const REPORTED_BAD_LINES: usize = 10;
const BUF_CAPACITY: usize = 1 << 16;
/// The longest line a trace may have, in bytes (1 MiB; real trace lines are
/// under 200 bytes).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// How a [`TraceReader`] treats bad lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Count and skip malformed and zero-length lines instead of returning an error
    /// (default: false, the first bad line is an error).
    pub skip_bad_lines: bool,
}

/// The compression a trace file was found to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Plain text.
    None,
    /// gzip (magic `1f 8b`), multi-member streams included.
    Gzip,
    /// bzip2 (magic `BZh`), multi-stream included.
    Bzip2,
    /// Zstandard (magic `28 b5 2f fd`).
    Zstd,
}

impl Compression {
    /// The compression a file name promises by its extension (`.gz`, `.bz2`,
    /// `.zst`/`.zstd`, any case), or `None` if it promises none.
    pub fn named(path: &Path) -> Option<Compression> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "gz" => Some(Compression::Gzip),
            "bz2" => Some(Compression::Bzip2),
            "zst" | "zstd" => Some(Compression::Zstd),
            _ => None,
        }
    }

    /// Recognises a compressed stream by its first bytes.
    pub fn detect(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(b"BZh") {
            Compression::Bzip2
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compression::None => "not compressed (plain text)",
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
            Compression::Zstd => "zstd",
        })
    }
}

/// Counts the bytes read through it into a shared counter.
struct Counting<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A streaming iterator of the requests in a trace, in file order.
pub struct TraceReader {
    path: PathBuf,
    format: TraceFormat,
    compression: Compression,
    /// Bytes read from the input so far (compressed bytes for a compressed
    /// trace), shared with whoever asked ([`TraceReader::open_counted`]).
    input_read: Arc<AtomicU64>,
    /// The input file's size, when opened from a file.
    input_len: Option<u64>,
    input: Box<dyn BufRead + Send>,
    buf: Vec<u8>,
    line_no: u64,
    opts: ReadOptions,
    seen_content: bool,
    /// Requests and line errors returned so far: none at the end is an error.
    yielded: u64,
    skipped: u64,
    skipped_lines: Vec<u64>,
    /// MSR only: FILETIME ticks of the first record.
    time_base: Option<u64>,
    failed: bool,
}

impl fmt::Debug for TraceReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TraceReader")
            .field("path", &self.path)
            .field("format", &self.format)
            .field("compression", &self.compression)
            .field("line", &self.line_no)
            .field("skipped", &self.skipped)
            .finish_non_exhaustive()
    }
}

impl TraceReader {
    /// Opens `path` (plain or gzip/bzip2/zstd-compressed, recognised by content) as a
    /// trace in `format`; a name ending `.gz`, `.bz2` or `.zst` whose content is not
    /// so compressed is [`TraceError::CompressionMismatch`].
    pub fn open(path: impl AsRef<Path>, format: TraceFormat, opts: &ReadOptions) -> Result<Self, TraceError> {
        Self::open_counted(path, format, opts, Arc::default())
    }

    /// As [`open`](Self::open), adding the bytes it reads from the file (the
    /// compressed bytes of a compressed one) to `read`: how far through the
    /// file ([`TraceReader::input_len`]) the replay is, for an estimate of a
    /// compressed trace's length while it runs. Readers of several passes
    /// over one file may share one counter.
    pub fn open_counted(
        path: impl AsRef<Path>,
        format: TraceFormat,
        opts: &ReadOptions,
        read: Arc<AtomicU64>,
    ) -> Result<Self, TraceError> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|source| TraceError::Io { path: path.to_owned(), source })?;
        let len = file.metadata().ok().map(|m| m.len());
        let mut reader = Self::from_reader(path, Counting { inner: file, read: read.clone() }, format, opts)?;
        reader.input_read = read;
        reader.input_len = len;
        Ok(reader)
    }

    /// The size of the file the trace is read from (`None` for another
    /// source).
    pub fn input_len(&self) -> Option<u64> {
        self.input_len
    }

    /// Bytes read from the input so far (compressed bytes for a compressed
    /// trace; read ahead in buffers of 64 KiB).
    pub fn input_read(&self) -> u64 {
        self.input_read.load(Ordering::Relaxed)
    }

    /// Reads a trace from any byte source (a pipe, memory); `name` is used in
    /// error messages. Compression is detected as for [`open`](Self::open), and a
    /// `name` that promises another ([`Compression::named`]) is an error.
    pub fn from_reader(
        name: impl Into<PathBuf>,
        reader: impl Read + Send + 'static,
        format: TraceFormat,
        opts: &ReadOptions,
    ) -> Result<Self, TraceError> {
        let path = name.into();
        let io_err = |source| TraceError::Io { path: path.clone(), source };
        let mut raw = BufReader::with_capacity(BUF_CAPACITY, reader);
        let compression = Compression::detect(raw.fill_buf().map_err(io_err)?);
        if let Some(named) = Compression::named(&path).filter(|&named| named != compression) {
            return Err(TraceError::CompressionMismatch { path, named, found: compression });
        }
        let input: Box<dyn BufRead + Send> = match compression {
            Compression::None => Box::new(raw),
            Compression::Gzip => {
                Box::new(BufReader::with_capacity(BUF_CAPACITY, flate2::bufread::MultiGzDecoder::new(raw)))
            }
            Compression::Bzip2 => {
                Box::new(BufReader::with_capacity(BUF_CAPACITY, bzip2::bufread::MultiBzDecoder::new(raw)))
            }
            Compression::Zstd => Box::new(BufReader::with_capacity(
                BUF_CAPACITY,
                zstd::stream::read::Decoder::with_buffer(raw).map_err(io_err)?,
            )),
        };
        Ok(TraceReader {
            path,
            format,
            compression,
            input_read: Arc::default(),
            input_len: None,
            input,
            buf: Vec::with_capacity(256),
            line_no: 0,
            opts: *opts,
            seen_content: false,
            yielded: 0,
            skipped: 0,
            skipped_lines: Vec::new(),
            time_base: None,
            failed: false,
        })
    }

    /// The file (or name) being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The format lines are parsed in.
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// The compression detected on the input.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Lines read so far.
    pub fn lines_read(&self) -> u64 {
        self.line_no
    }

    /// Bad lines skipped so far (only with [`ReadOptions::skip_bad_lines`]).
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Line numbers of the first [`REPORTED_BAD_LINES`] skipped lines.
    pub fn skipped_lines(&self) -> &[u64] {
        &self.skipped_lines
    }

    fn error(&self, line: Line) -> TraceError {
        match line {
            Line::Bad { expected, found } => TraceError::Malformed {
                path: self.path.clone(),
                line: self.line_no,
                expected: expected.into_owned(),
                found,
            },
            _ => TraceError::ZeroLength { path: self.path.clone(), line: self.line_no },
        }
    }

    /// The next line's outcome, or `None` at the end of the input.
    fn next_line(&mut self) -> Option<Result<Line, TraceError>> {
        if matches!(self.format, TraceFormat::Mqsim | TraceFormat::Ssdsim) {
            match self.input.fill_buf() {
                Ok(buf) => {
                    if let Some((req, len)) = parse::mqsim_plain_line(buf) {
                        self.input.consume(len);
                        self.line_no += 1;
                        self.seen_content = true;
                        return Some(Ok(if req.len == 0 { Line::ZeroLength } else { end_checked(Line::Request(req)) }));
                    }
                }
                // Retried by `read_until` below.
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => return Some(Err(TraceError::Io { path: self.path.clone(), source })),
            }
        }
        self.buf.clear();
        loop {
            // At most one byte past the longest line: a file without newlines
            // (`/dev/zero`, a disk image) was read whole into memory.
            let room = (MAX_LINE_BYTES + 1 - self.buf.len()) as u64;
            match (&mut self.input).take(room).read_until(b'\n', &mut self.buf) {
                Ok(0) if self.buf.is_empty() => return None,
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(source) => return Some(Err(TraceError::Io { path: self.path.clone(), source })),
            }
        }
        self.line_no += 1;
        if self.buf.len() > MAX_LINE_BYTES {
            return Some(Err(TraceError::LineTooLong {
                path: self.path.clone(),
                line: self.line_no,
                max: MAX_LINE_BYTES,
            }));
        }
        if let Some(req) = self.plain_mqsim() {
            self.seen_content = true;
            return Some(Ok(if req.len == 0 { Line::ZeroLength } else { end_checked(Line::Request(req)) }));
        }
        let Ok(text) = std::str::from_utf8(&self.buf) else {
            let found = excerpt(&String::from_utf8_lossy(&self.buf));
            return Some(Ok(Line::Bad { expected: "UTF-8 text".into(), found }));
        };
        let text = parse::trim(text);
        if text.is_empty() || text.starts_with('#') {
            return Some(Ok(Line::Ignored));
        }
        let first_content = !self.seen_content;
        self.seen_content = true;
        let line = end_checked(parse_line(self.format, text));
        if first_content && matches!(line, Line::Bad { .. }) && is_header(text) {
            return Some(Ok(Line::Ignored));
        }
        Some(Ok(line))
    }

    /// The request of the line in the buffer if the format is MQSim's or
    /// SSDsim's and the line is plain integers in range
    /// ([`parse::mqsim_plain`]): it is then ASCII, so valid UTF-8, and neither
    /// blank nor a comment, and [`parse_line`] would give the same request.
    #[inline]
    fn plain_mqsim(&self) -> Option<HostRequest> {
        if !matches!(self.format, TraceFormat::Mqsim | TraceFormat::Ssdsim) {
            return None;
        }
        let line = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
        parse::mqsim_plain(line.strip_suffix(b"\r").unwrap_or(line))
    }

    /// The end of the input: [`TraceError::NoRequests`] once if nothing was
    /// yielded, then `None`.
    fn end(&mut self) -> Option<Result<HostRequest, TraceError>> {
        if self.yielded > 0 {
            return None;
        }
        self.failed = true;
        Some(Err(TraceError::NoRequests {
            path: self.path.clone(),
            format: self.format,
            lines: self.line_no,
            skipped: self.skipped,
        }))
    }

    /// MSR: FILETIME ticks rebased on the file's first record, in ns (an earlier
    /// record becomes 0); a time beyond the u64 ns clock is a bad line.
    fn rebase_msr(&mut self, mut req: HostRequest) -> Line {
        let ticks = req.arrival_ns;
        let base = *self.time_base.get_or_insert(ticks);
        match ticks.saturating_sub(base).checked_mul(100) {
            Some(ns) => {
                req.arrival_ns = ns;
                Line::Request(req)
            }
            None => Line::Bad {
                expected: format!(
                    "a Timestamp (field 1) less than {} ticks of 100 ns after the first record's {base}, \
                     so that it fits the simulator's 64-bit ns clock",
                    u64::MAX / 100 + 1
                )
                .into(),
                found: ticks.to_string(),
            },
        }
    }
}

/// A header line: column names only, no field that is a number (a data line with a
/// bad field still holds numbers, and is an error like any other line).
fn is_header(text: &str) -> bool {
    let numeric = |field: &str| {
        let f = field.trim_start_matches(['+', '-', '.']);
        f.bytes().next().is_some_and(|b| b.is_ascii_digit())
    };
    !text.split(|c: char| c == ',' || c.is_ascii_whitespace()).any(numeric)
}

/// `line`, or a bad line if it is a request whose end does not fit 64 bits
/// (found by fuzzing).
fn end_checked(line: Line) -> Line {
    match line {
        Line::Request(r) if r.offset.checked_add(u64::from(r.len)).is_none() => Line::Bad {
            expected: "a request whose offset plus size fits in 2^64 bytes".into(),
            found: format!("offset {} bytes + size {} bytes", r.offset, r.len),
        },
        line => line,
    }
}

impl Iterator for TraceReader {
    type Item = Result<HostRequest, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            let line = match self.next_line() {
                None => return self.end(),
                Some(Ok(Line::Request(req))) if self.format == TraceFormat::Msr => self.rebase_msr(req),
                Some(Ok(line)) => line,
                Some(Err(e)) => {
                    self.failed = true; // an I/O error does not go away on retry
                    return Some(Err(e));
                }
            };
            match line {
                Line::Ignored => continue,
                Line::Request(req) => {
                    self.yielded += 1;
                    return Some(Ok(req));
                }
                bad if self.opts.skip_bad_lines => {
                    drop(bad);
                    self.skipped += 1;
                    if self.skipped_lines.len() < REPORTED_BAD_LINES {
                        self.skipped_lines.push(self.line_no);
                    }
                }
                bad => {
                    self.yielded += 1;
                    return Some(Err(self.error(bad)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::Op;

    fn reader(text: &'static str, format: &str, skip: bool) -> TraceReader {
        let opts = ReadOptions { skip_bad_lines: skip };
        TraceReader::from_reader("mem.trace", text.as_bytes(), format.parse().unwrap(), &opts).unwrap()
    }

    #[test]
    fn header_comments_and_blank_lines_are_skipped() {
        let text = "Timestamp,Response,IOType,LUN,Offset,Size\n\n# note\n1.0,0.1,R,0,0,4096\r\n2.5,0.1,W,1,4096,512";
        let reqs: Vec<_> = reader(text, "systor", false).map(Result::unwrap).collect();
        assert_eq!(reqs.len(), 2);
        assert_eq!((reqs[1].arrival_ns, reqs[1].op, reqs[1].device), (2_500_000_000, Op::Write, 1));
    }

    /// MQSim lines read in place from the reader's buffer and lines read the
    /// general way (cut by the buffer's end, a comment, a float) give the same
    /// requests and line numbers, over several refills of the 64 KiB buffer.
    #[test]
    fn mqsim_lines_read_in_place_or_copied_agree() {
        let mut text = String::new();
        let mut want = Vec::new();
        let ends = ["\n", "\r\n", " \n", "\t\r\n"];
        for i in 0..20_000u64 {
            match i % 11 {
                3 => text.push_str("# a comment\n"),
                7 => {
                    text.push_str(&format!("{i}.0 1 {i} 8 1{}", ends[i as usize % 4]));
                    want.push((i, Op::Read, i * 512, 1));
                }
                _ => {
                    text.push_str(&format!("{i} 0 {} 16 {}{}", i * 3, i % 2, ends[i as usize % 4]));
                    want.push((i, if i % 2 == 1 { Op::Read } else { Op::Write }, i * 3 * 512, 0));
                }
            }
        }
        text.push_str("20000 0 0 8 7\n");
        let lines = text.lines().count() as u64;
        let text: &'static str = Box::leak(text.into_boxed_str());
        let mut r = reader(text, "mqsim", false);
        for &(t, op, offset, device) in &want {
            let req = r.next().unwrap().unwrap();
            assert_eq!((req.arrival_ns, req.op, req.offset, req.device), (t, op, offset, device));
        }
        let err = r.next().unwrap().unwrap_err();
        assert!(matches!(err, TraceError::Malformed { line, .. } if line == lines), "{err}");
        assert!(r.next().is_none());
    }

    #[test]
    fn a_header_only_counts_on_the_first_line() {
        let mut r = reader("1,2,512,r,0\nASU,LBA,Size,Opcode,Timestamp\n", "umass", false);
        assert!(r.next().unwrap().is_ok());
        let err = r.next().unwrap().unwrap_err().to_string();
        assert!(err.starts_with("mem.trace:2: expected Opcode r, R, w or W"), "{err}");
    }

    #[test]
    fn malformed_line_names_file_line_and_expectation() {
        let mut r = reader("0,1,512,r,0\n0,2,512,w,1\n1,2,3\n0,3,512,w,2\n", "umass", false);
        assert!(r.next().unwrap().is_ok());
        assert!(r.next().unwrap().is_ok());
        let err = r.next().unwrap().unwrap_err();
        assert!(matches!(err, TraceError::Malformed { line: 3, .. }));
        assert_eq!(
            err.to_string(),
            "mem.trace:3: expected 5 comma-separated fields (ASU,LBA,Size,Opcode,Timestamp), found \"1,2,3\""
        );
        assert!(r.next().unwrap().is_ok(), "reading goes on after a malformed line");
    }

    #[test]
    fn skip_bad_lines_counts_and_reports() {
        let text = "0 0 0 8 0\nbroken\n1 0 8 0 0\n2 0 8 8 7\n3 0 16 8 1\n\n";
        let mut r = reader(text, "mqsim", true);
        let n = r.by_ref().map(Result::unwrap).count();
        assert_eq!(n, 2);
        assert_eq!(r.skipped(), 3, "`broken`, the zero-length line and the bad op");
        assert_eq!(r.skipped_lines(), &[2, 3, 4]);
        assert_eq!(r.lines_read(), 6);
        let err = reader("0 0 0 8 0\n1 0 8 0 0\n", "mqsim", false).nth(1).unwrap().unwrap_err();
        assert_eq!(
            err.to_string(),
            "mem.trace:2: zero-length request (size 0); fix the trace or read it with skip_bad_lines"
        );
    }

    #[test]
    fn msr_time_is_relative_to_the_first_record() {
        let text = "1000,hm,0,Write,0,512,1\n1010,hm,0,Read,512,512,1\n900,hm,0,Read,512,512,1\n";
        let t: Vec<_> = reader(text, "msr", false).map(|r| r.unwrap().arrival_ns).collect();
        assert_eq!(t, vec![0, 1000, 0]);
    }

    #[test]
    fn invalid_utf8_is_a_malformed_line() {
        let bytes: &'static [u8] = b"0 0 0 8 0\n\xff\xfe 1 2\n";
        let opts = ReadOptions::default();
        let mut r = TraceReader::from_reader("bin", bytes, TraceFormat::Mqsim, &opts).unwrap();
        assert!(r.next().unwrap().is_ok());
        let err = r.next().unwrap().unwrap_err().to_string();
        assert!(err.starts_with("bin:2: expected UTF-8 text"), "{err}");
    }

    #[test]
    fn corrupt_compressed_input_is_an_io_error_once() {
        let bytes: &'static [u8] = &[0x1f, 0x8b, 0, 1, 2, 3, 4, 5, 6, 7];
        let mut r = TraceReader::from_reader("x.gz", bytes, TraceFormat::Mqsim, &ReadOptions::default()).unwrap();
        assert_eq!(r.compression(), Compression::Gzip);
        assert!(matches!(r.next(), Some(Err(TraceError::Io { .. }))));
        assert!(r.next().is_none());
    }

    #[test]
    fn missing_file_is_an_io_error_naming_it() {
        let err = TraceReader::open("/nonexistent/t.csv", TraceFormat::Msr, &ReadOptions::default()).unwrap_err();
        assert!(err.to_string().starts_with("cannot read trace /nonexistent/t.csv: "), "{err}");
    }

    /// Drains `r`, returning the requests read and the error that ended it, if any.
    fn drain(r: TraceReader) -> (Vec<HostRequest>, Option<TraceError>) {
        let mut reqs = Vec::new();
        for item in r {
            match item {
                Ok(req) => reqs.push(req),
                Err(e) => return (reqs, Some(e)),
            }
        }
        (reqs, None)
    }

    #[test]
    fn a_trace_with_no_request_is_an_error_naming_file_format_and_lines() {
        // An MSR CSV read as blkparse: every line is ignored as "not an event".
        let msr = "1000,hm,0,Write,0,512,1\n1010,hm,0,Read,512,512,1\n1020,hm,0,Read,0,512,1\n";
        let (reqs, err) = drain(reader(msr, "blkparse", false));
        assert!(reqs.is_empty());
        let err = err.expect("no request must be an error");
        assert!(matches!(err, TraceError::NoRequests { lines: 3, skipped: 0, .. }), "{err}");
        let msg = err.to_string();
        assert!(msg.starts_with("mem.trace: no request in 3 lines read as blkparse"), "{msg}");
        assert!(msg.contains("trace format"), "says what to check: {msg}");
        let (_, err) = drain(reader("", "mqsim", false));
        let msg = err.expect("an empty trace is an error").to_string();
        assert!(msg.starts_with("mem.trace: no request in 0 lines read as mqsim"), "{msg}");
        // Every line skipped as malformed: still no request, and the count says why.
        let (_, err) = drain(reader("1 x\n1 2 3\n", "mqsim", true));
        assert!(matches!(err, Some(TraceError::NoRequests { lines: 2, skipped: 2, .. })), "{err:?}");
        // The error comes once, then the reader ends.
        let mut r = reader("# only a comment\n", "mqsim", false);
        assert!(matches!(r.next(), Some(Err(TraceError::NoRequests { .. }))));
        assert!(r.next().is_none());
    }

    #[test]
    fn a_line_longer_than_any_trace_has_is_an_error_not_read_whole() {
        // An endless file without newlines (`/dev/zero` read as a trace) was
        // read into memory until the process aborted.
        for format in ["mqsim", "msr", "blkparse", "systor"].map(|f| f.parse::<TraceFormat>().unwrap()) {
            let endless = std::io::repeat(0);
            let opts = ReadOptions { skip_bad_lines: true };
            let mut r = TraceReader::from_reader("zero.trace", endless, format, &opts).unwrap();
            let e = r.next().expect("an error").unwrap_err();
            assert!(matches!(e, TraceError::LineTooLong { line: 1, max: MAX_LINE_BYTES, .. }), "{format:?}: {e}");
            assert!(e.to_string().starts_with("zero.trace:1: a line longer than 1048576 bytes"), "{e}");
            assert!(r.next().is_none(), "the reader ends");
        }
        // A line of exactly the limit is read (and found malformed).
        let mut text = vec![b'x'; MAX_LINE_BYTES - 1];
        text.extend_from_slice(b"\n0 0 0 8 0\n");
        let opts = ReadOptions { skip_bad_lines: true };
        let r = TraceReader::from_reader("long.trace", std::io::Cursor::new(text), TraceFormat::Mqsim, &opts).unwrap();
        let reqs: Vec<_> = r.map(Result::unwrap).collect();
        assert_eq!(reqs.len(), 1);
    }

    #[test]
    fn a_name_that_promises_compression_must_match_the_content() {
        let opts = ReadOptions::default();
        for name in ["plain.gz", "plain.bz2", "plain.zst", "dir/PLAIN.GZ"] {
            let err = TraceReader::from_reader(name, &b"0 0 0 8 0\n"[..], TraceFormat::Mqsim, &opts).unwrap_err();
            assert!(matches!(err, TraceError::CompressionMismatch { .. }), "{name}: {err}");
            let msg = err.to_string();
            assert!(msg.starts_with(&format!("{name}: ")) && msg.contains("not compressed"), "{msg}");
        }
        let zstd_named_gz: &'static [u8] = &[0x28, 0xb5, 0x2f, 0xfd, 0, 0];
        let err = TraceReader::from_reader("t.gz", zstd_named_gz, TraceFormat::Mqsim, &opts).unwrap_err();
        assert!(err.to_string().contains("zstd"), "{err}");
        // Names that promise nothing are read by their content.
        assert!(TraceReader::from_reader("t.trace", &b"0 0 0 8 0\n"[..], TraceFormat::Mqsim, &opts).is_ok());
    }

    #[test]
    fn a_malformed_first_line_is_the_error_it_would_be_on_line_3() {
        let bad = "x,1,512,r,0";
        let good = "0,1,512,r,0";
        let err_at = |text: String, line| {
            let (_, err) = drain(
                TraceReader::from_reader(
                    "mem.trace",
                    io::Cursor::new(text),
                    TraceFormat::Umass,
                    &ReadOptions::default(),
                )
                .unwrap(),
            );
            let err = err.unwrap();
            assert!(matches!(err, TraceError::Malformed { line: l, .. } if l == line), "{err}");
            err.to_string().split_once(": ").unwrap().1.to_owned()
        };
        let first = err_at(format!("{bad}\n{good}\n{good}\n"), 1);
        let third = err_at(format!("{good}\n{good}\n{bad}\n"), 3);
        assert_eq!(first, third);
        assert!(first.contains("ASU"), "{first}");
        for (format, line) in [("mqsim", "abc 0 0 8 0"), ("disksim", "t0 0 0 8 1"), ("msr", "start,hm,0,Read,0,512,1")]
        {
            let mut r = reader(Box::leak(format!("{line}\n").into_boxed_str()), format, false);
            assert!(matches!(r.next(), Some(Err(TraceError::Malformed { line: 1, .. }))), "{format}: {line}");
        }
        // A header (column names, no number) is still skipped.
        for (format, header) in [
            ("umass", "ASU,LBA,Size,Opcode,Timestamp"),
            ("msr", "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime"),
            ("mqsim", "time_ns device lba size op"),
        ] {
            let row = if format == "msr" {
                "1,hm,0,Read,0,512,1"
            } else if format == "umass" {
                good
            } else {
                "0 0 0 8 0"
            };
            let text = Box::leak(format!("{header}\n{row}\n").into_boxed_str());
            let (reqs, err) = drain(reader(text, format, false));
            assert!(err.is_none() && reqs.len() == 1, "{format}: {err:?}");
        }
    }

    #[test]
    fn an_msr_time_beyond_the_ns_clock_is_an_error_naming_the_line() {
        // 2^64 / 100 ticks after the first record do not fit in u64 ns.
        let far = 1000 + u64::MAX / 100 + 1;
        let text = Box::leak(format!("1000,hm,0,Write,0,512,1\n{far},hm,0,Read,0,512,1\n").into_boxed_str());
        let mut r = reader(text, "msr", false);
        assert!(r.next().unwrap().is_ok());
        let err = r.next().unwrap().unwrap_err();
        assert!(matches!(err, TraceError::Malformed { line: 2, .. }), "{err}");
        assert!(err.to_string().contains("Timestamp"), "{err}");
        // The largest time that fits is kept exactly.
        let edge = 1000 + u64::MAX / 100;
        let text = Box::leak(format!("1000,hm,0,Write,0,512,1\n{edge},hm,0,Read,0,512,1\n").into_boxed_str());
        let t: Vec<_> = reader(text, "msr", false).map(|r| r.unwrap().arrival_ns).collect();
        assert_eq!(t, vec![0, u64::MAX / 100 * 100]);
    }

    #[test]
    fn detect_magic_bytes() {
        assert_eq!(Compression::detect(b"BZh91AY"), Compression::Bzip2);
        assert_eq!(Compression::detect(&[0x28, 0xb5, 0x2f, 0xfd, 0]), Compression::Zstd);
        assert_eq!(Compression::detect(b"0 1 2"), Compression::None);
        assert_eq!(Compression::detect(b""), Compression::None);
    }
}
