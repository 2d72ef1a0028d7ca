//! The per-request latency log (`metrics.latency_log`): one line a measured
//! request, in fio's latency-log layout (`write_lat_log`, fio's HOWTO "Log
//! File Formats"): `time, value, direction, bytes, offset, priority`, where
//! time is the request's completion in whole milliseconds since measuring
//! started, value its response time in nanoseconds, direction 0 for a read,
//! 1 for a write and 2 for a trim, and priority 0. Tools that read fio's logs
//! (fio's `fiologparser.py`, `fio_generate_plots`) read it.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use ftlab_workload::Op;

use crate::error::SimError;

/// An open latency log; the first write error is kept and reported by
/// [`LatencyLog::finish`].
#[derive(Debug)]
pub(crate) struct LatencyLog {
    path: PathBuf,
    out: BufWriter<File>,
    error: Option<std::io::Error>,
}

impl LatencyLog {
    /// Creates (or truncates) the log at `path`.
    pub(crate) fn create(path: &Path) -> Result<LatencyLog, SimError> {
        let file =
            File::create(path).map_err(|source| SimError::LatencyLog { path: path.display().to_string(), source })?;
        Ok(LatencyLog { path: path.to_owned(), out: BufWriter::with_capacity(1 << 16, file), error: None })
    }

    /// Logs a request completed `at_ns` after measuring started, after
    /// `response_ns`.
    #[inline]
    pub(crate) fn record(&mut self, at_ns: u64, response_ns: u64, op: Op, bytes: u32, offset: u64) {
        if self.error.is_some() {
            return;
        }
        let direction = match op {
            Op::Read => 0,
            Op::Write => 1,
            Op::Trim => 2,
        };
        if let Err(e) = writeln!(self.out, "{}, {response_ns}, {direction}, {bytes}, {offset}, 0", at_ns / 1_000_000) {
            self.error = Some(e);
        }
    }

    /// Flushes the log to its file (and the file to the medium); the first
    /// error of any write, if there was one.
    pub(crate) fn finish(mut self) -> Result<(), SimError> {
        let outcome = match self.error.take() {
            Some(e) => Err(e),
            None => self.out.flush().and_then(|()| self.out.get_ref().sync_all()),
        };
        outcome.map_err(|source| SimError::LatencyLog { path: self.path.display().to_string(), source })
    }
}
