//! Streaming readers for real block traces.
//!
//! [`TraceReader`] reads one line at a time into a reused buffer, so memory stays
//! constant whatever the trace length. Compressed traces (gzip, bzip2, zstd) are
//! recognised by their magic bytes, not their file name, and decompressed on the fly.
//!
//! Blank lines, `#` comment lines and a header line (a first line starting with a
//! letter, such as SYSTOR's `Timestamp,Response,...`) are skipped silently. Every
//! other line that breaks the format is an error naming the file and line — or, with
//! [`ReadOptions::skip_bad_lines`], is counted and skipped.

mod format;
mod parse;

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

pub use format::{BlkEvent, TraceFormat};
use parse::{excerpt, parse_line, Line};

use crate::{HostRequest, TraceError};

/// How many bad line numbers a reader keeps for its report.
pub const REPORTED_BAD_LINES: usize = 10;
const BUF_CAPACITY: usize = 1 << 16;

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

/// A streaming iterator of the requests in a trace, in file order.
pub struct TraceReader {
    path: PathBuf,
    format: TraceFormat,
    compression: Compression,
    input: Box<dyn BufRead + Send>,
    buf: Vec<u8>,
    line_no: u64,
    opts: ReadOptions,
    seen_content: bool,
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
    /// Opens `path` (plain or gzip/bzip2/zstd-compressed) as a trace in `format`.
    pub fn open(path: impl AsRef<Path>, format: TraceFormat, opts: &ReadOptions) -> Result<Self, TraceError> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|source| TraceError::Io { path: path.to_owned(), source })?;
        Self::from_reader(path, file, format, opts)
    }

    /// Reads a trace from any byte source (a pipe, memory); `name` is used in
    /// error messages. Compression is detected as for [`open`](Self::open).
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
            input,
            buf: Vec::with_capacity(256),
            line_no: 0,
            opts: *opts,
            seen_content: false,
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
        self.buf.clear();
        loop {
            match self.input.read_until(b'\n', &mut self.buf) {
                Ok(0) => return None,
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(source) => return Some(Err(TraceError::Io { path: self.path.clone(), source })),
            }
        }
        self.line_no += 1;
        let Ok(text) = std::str::from_utf8(&self.buf) else {
            let found = excerpt(&String::from_utf8_lossy(&self.buf));
            return Some(Ok(Line::Bad { expected: "UTF-8 text".into(), found }));
        };
        let text = text.trim();
        if text.is_empty() || text.starts_with('#') {
            return Some(Ok(Line::Ignored));
        }
        let first_content = !self.seen_content;
        self.seen_content = true;
        if first_content
            && text.as_bytes()[0].is_ascii_alphabetic()
            && !matches!(self.format, TraceFormat::Blkparse { .. })
        {
            return Some(Ok(Line::Ignored)); // a header line
        }
        Some(Ok(parse_line(self.format, text)))
    }
}

impl Iterator for TraceReader {
    type Item = Result<HostRequest, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            let line = match self.next_line()? {
                Ok(line) => line,
                Err(e) => {
                    self.failed = true; // an I/O error does not go away on retry
                    return Some(Err(e));
                }
            };
            match line {
                Line::Ignored => continue,
                Line::Request(mut req) => {
                    if self.format == TraceFormat::Msr {
                        let base = *self.time_base.get_or_insert(req.arrival_ns);
                        req.arrival_ns = req.arrival_ns.saturating_sub(base).saturating_mul(100);
                    }
                    return Some(Ok(req));
                }
                bad if self.opts.skip_bad_lines => {
                    drop(bad);
                    self.skipped += 1;
                    if self.skipped_lines.len() < REPORTED_BAD_LINES {
                        self.skipped_lines.push(self.line_no);
                    }
                }
                bad => return Some(Err(self.error(bad))),
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
        assert!(err.to_string().starts_with("/nonexistent/t.csv: "), "{err}");
    }

    #[test]
    fn detect_magic_bytes() {
        assert_eq!(Compression::detect(b"BZh91AY"), Compression::Bzip2);
        assert_eq!(Compression::detect(&[0x28, 0xb5, 0x2f, 0xfd, 0]), Compression::Zstd);
        assert_eq!(Compression::detect(b"0 1 2"), Compression::None);
        assert_eq!(Compression::detect(b""), Compression::None);
    }
}
