//! Trace format names, descriptions and conventions.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::TraceError;

/// Which blkparse events become requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BlkEvent {
    /// `Q`: the request as the file system queued it (what the application asked).
    Queue,
    /// `D`: the request as the I/O scheduler dispatched it to the driver (after merging).
    Dispatch,
}

/// A block-trace text format. Every format's units and operation convention is on its
/// variant; all of them are read by [`TraceReader`](crate::trace::TraceReader).
///
/// Requests are returned in file order. TPC-C (MQSim) and SYSTOR '17 traces are not
/// time-sorted: the consumer sorts them if it needs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum TraceFormat {
    /// `umass`: UMass / SPC CSV `ASU,LBA,Size,Opcode,Timestamp`. LBA in 512-byte
    /// sectors, Size in bytes, Opcode `r`/`R` read and `w`/`W` write, Timestamp in
    /// decimal seconds from the trace start (converted exactly to ns). Device = ASU.
    Umass,
    /// `msr`: MSR Cambridge CSV `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    /// Timestamp in Windows FILETIME 100-ns ticks, returned as ns relative to the
    /// first record of the file (an earlier record becomes 0; one that does not fit
    /// the 64-bit ns clock is a malformed line). Type `Read` /
    /// `Write` (any case), Offset and Size in bytes. Device = DiskNumber.
    Msr,
    /// `systor`: SYSTOR '17 CSV `Timestamp,Response,IOType,LUN,Offset,Size` with a
    /// header line. Timestamp in decimal seconds since the Unix epoch, returned as
    /// absolute ns (not rebased: the file is not time-sorted). IOType `R` / `W`,
    /// Offset and Size in bytes. Device = LUN.
    Systor,
    /// `blkparse` (queue events) or `blkparse-dispatch`: blkparse's default text output
    /// `maj,min cpu seq time pid action rwbs sector + nsectors [proc]`. Only the chosen
    /// action (`Q` or `D`) is kept; other actions, CFQ messages (`m`) and summary lines
    /// are ignored, as are events without data (pure flushes, 0 sectors). Time in
    /// decimal seconds (exact ns); RWBS containing `D` is a trim, else `W` a write,
    /// else `R` a read. Sectors of 512 bytes. Device = `maj << 20 | min` (Linux dev_t).
    Blkparse {
        /// Which action becomes a request.
        events: BlkEvent,
    },
    /// `disksim`: DiskSim ASCII `time_ms devno blkno size flags`, whitespace separated.
    /// Time in decimal milliseconds (exact ns), blkno and size in 512-byte sectors,
    /// flags bit 0 set = read, clear = write. Device = devno.
    Disksim,
    /// `mqsim`: MQSim ASCII `time_ns dev lba size op`, whitespace separated. Time in
    /// integer ns, lba and size in 512-byte sectors, op `1` = read, `0` = write.
    Mqsim,
    /// `ssdsim`: SSDsim ASCII `time_ns device lsn size ope` — the same columns as
    /// MQSim: time in ns, lsn and size in 512-byte sectors, ope `1` = read, `0` = write.
    Ssdsim,
}

const ALL: [TraceFormat; 8] = [
    TraceFormat::Umass,
    TraceFormat::Msr,
    TraceFormat::Systor,
    TraceFormat::Blkparse { events: BlkEvent::Queue },
    TraceFormat::Blkparse { events: BlkEvent::Dispatch },
    TraceFormat::Disksim,
    TraceFormat::Mqsim,
    TraceFormat::Ssdsim,
];

impl TraceFormat {
    /// Every format, in the order to list them.
    pub fn all() -> &'static [TraceFormat] {
        &ALL
    }

    /// The name accepted by [`FromStr`] and printed by [`Display`](fmt::Display).
    pub fn name(&self) -> &'static str {
        match self {
            TraceFormat::Umass => "umass",
            TraceFormat::Msr => "msr",
            TraceFormat::Systor => "systor",
            TraceFormat::Blkparse { events: BlkEvent::Queue } => "blkparse",
            TraceFormat::Blkparse { events: BlkEvent::Dispatch } => "blkparse-dispatch",
            TraceFormat::Disksim => "disksim",
            TraceFormat::Mqsim => "mqsim",
            TraceFormat::Ssdsim => "ssdsim",
        }
    }

    /// One line: the columns, their units and the op convention.
    pub fn describe(&self) -> &'static str {
        match self {
            TraceFormat::Umass => "UMass/SPC CSV ASU,LBA,Size,Opcode,Timestamp (LBA sectors, Size bytes, r/w, seconds)",
            TraceFormat::Msr => {
                "MSR Cambridge CSV Timestamp,Hostname,Disk,Read|Write,Offset,Size,Response (100-ns ticks, bytes)"
            }
            TraceFormat::Systor => {
                "SYSTOR '17 CSV Timestamp,Response,IOType,LUN,Offset,Size (epoch seconds, R/W, bytes)"
            }
            TraceFormat::Blkparse { events: BlkEvent::Queue } => {
                "blkparse text output, queue (Q) events (seconds, sectors, RWBS R/W/D)"
            }
            TraceFormat::Blkparse { events: BlkEvent::Dispatch } => {
                "blkparse text output, dispatch (D) events (seconds, sectors, RWBS R/W/D)"
            }
            TraceFormat::Disksim => "DiskSim ASCII time_ms devno blkno size flags (ms, sectors, flags bit 0: 1 = read)",
            TraceFormat::Mqsim => "MQSim ASCII time_ns dev lba size op (ns, sectors, op 1 = read, 0 = write)",
            TraceFormat::Ssdsim => "SSDsim ASCII time_ns device lsn size ope (ns, sectors, ope 1 = read, 0 = write)",
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TraceFormat {
    type Err = TraceError;

    /// Accepts every [`name`](TraceFormat::name), case-insensitively, plus the aliases
    /// `spc` (umass) and `blkparse-queue` (blkparse).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        let alias = match lower.as_str() {
            "spc" => Some(TraceFormat::Umass),
            "blkparse-queue" => Some(TraceFormat::Blkparse { events: BlkEvent::Queue }),
            _ => None,
        };
        alias.or_else(|| ALL.iter().copied().find(|f| f.name() == lower)).ok_or_else(|| TraceError::UnknownFormat {
            name: s.to_owned(),
            known: ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", "),
        })
    }
}

impl TryFrom<String> for TraceFormat {
    type Error = TraceError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<TraceFormat> for String {
    fn from(f: TraceFormat) -> String {
        f.name().to_owned()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_name_round_trips() {
        for f in TraceFormat::all() {
            assert_eq!(f.name().parse::<TraceFormat>().unwrap(), *f);
            assert_eq!(f.to_string().to_uppercase().parse::<TraceFormat>().unwrap(), *f);
            assert!(!f.describe().is_empty());
        }
        assert_eq!(TraceFormat::all().len(), 8);
    }

    #[test]
    fn aliases_and_unknown_names() {
        assert_eq!("blkparse-queue".parse::<TraceFormat>().unwrap(), TraceFormat::Blkparse { events: BlkEvent::Queue });
        assert_eq!("spc".parse::<TraceFormat>().unwrap(), TraceFormat::Umass);
        let err = "fio".parse::<TraceFormat>().unwrap_err().to_string();
        assert!(err.contains("\"fio\"") && err.contains("blkparse-dispatch"), "{err}");
    }
}
