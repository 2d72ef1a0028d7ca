//! The NBD protocol's numbers (the NBD project's `doc/proto.md`) and the
//! big-endian reads and writes the handshake and transmission are made of.

use std::io::{self, Read, Write};

/// `NBDMAGIC`, the first word a server sends.
pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
/// `IHAVEOPT`: newstyle negotiation, and the magic before each option.
pub const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
/// The magic of every option reply.
pub const OPT_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
/// The magic of every request.
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
/// The magic of a simple reply.
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;

/// Handshake flag: fixed newstyle negotiation.
pub const FLAG_FIXED_NEWSTYLE: u16 = 1;
/// Handshake flag: no 124 zero bytes after `NBD_OPT_EXPORT_NAME`.
pub const FLAG_NO_ZEROES: u16 = 1 << 1;
/// Client flag: fixed newstyle.
pub const FLAG_C_FIXED_NEWSTYLE: u32 = 1;
/// Client flag: no zeroes.
pub const FLAG_C_NO_ZEROES: u32 = 1 << 1;

/// Option: choose an export and enter transmission (no error reply possible).
pub const OPT_EXPORT_NAME: u32 = 1;
/// Option: end the negotiation.
pub const OPT_ABORT: u32 = 2;
/// Option: list the exports.
pub const OPT_LIST: u32 = 3;
/// Option: upgrade the connection to TLS.
pub const OPT_STARTTLS: u32 = 5;
/// Option: describe an export.
pub const OPT_INFO: u32 = 6;
/// Option: describe an export and enter transmission.
pub const OPT_GO: u32 = 7;

/// Option reply: done.
pub const REP_ACK: u32 = 1;
/// Option reply: one export of a list.
pub const REP_SERVER: u32 = 2;
/// Option reply: one item of information about an export.
pub const REP_INFO: u32 = 3;
const REP_ERR: u32 = 1 << 31;
/// Option reply: the option is not supported.
pub const REP_ERR_UNSUP: u32 = REP_ERR | 1;
/// Option reply: refused by the server's policy.
pub const REP_ERR_POLICY: u32 = REP_ERR | 2;
/// Option reply: the option is malformed.
pub const REP_ERR_INVALID: u32 = REP_ERR | 3;
/// Option reply: not without TLS (FORCEDTLS: any option before STARTTLS).
pub const REP_ERR_TLS_REQD: u32 = REP_ERR | 5;
/// Option reply: no such export.
pub const REP_ERR_UNKNOWN: u32 = REP_ERR | 6;
/// Option reply: the server is shutting down.
pub const REP_ERR_SHUTDOWN: u32 = REP_ERR | 7;
/// Option reply: the option's data is too large.
pub const REP_ERR_TOO_BIG: u32 = REP_ERR | 9;

/// Information: size and transmission flags.
pub const INFO_EXPORT: u16 = 0;
/// Information: the export's canonical name.
pub const INFO_NAME: u16 = 1;
/// Information: a description for people.
pub const INFO_DESCRIPTION: u16 = 2;
/// Information: minimum, preferred and maximum block sizes.
pub const INFO_BLOCK_SIZE: u16 = 3;

/// Transmission flag: always set.
pub const FLAG_HAS_FLAGS: u16 = 1;
/// Transmission flag: `NBD_CMD_FLUSH` is supported.
pub const FLAG_SEND_FLUSH: u16 = 1 << 2;
/// Transmission flag: `NBD_CMD_FLAG_FUA` is supported.
pub const FLAG_SEND_FUA: u16 = 1 << 3;
/// Transmission flag: `NBD_CMD_TRIM` is supported.
pub const FLAG_SEND_TRIM: u16 = 1 << 5;
/// Transmission flag: `NBD_CMD_WRITE_ZEROES` (and `NO_HOLE`) is supported.
pub const FLAG_SEND_WRITE_ZEROES: u16 = 1 << 6;
/// Transmission flag: flush and FUA are visible across connections.
pub const FLAG_CAN_MULTI_CONN: u16 = 1 << 8;

/// Command: read.
pub const CMD_READ: u16 = 0;
/// Command: write.
pub const CMD_WRITE: u16 = 1;
/// Command: disconnect.
pub const CMD_DISC: u16 = 2;
/// Command: flush.
pub const CMD_FLUSH: u16 = 3;
/// Command: trim.
pub const CMD_TRIM: u16 = 4;
/// Command: write zeroes.
pub const CMD_WRITE_ZEROES: u16 = 6;

/// Command flag: force unit access.
pub const CMD_FLAG_FUA: u16 = 1;
/// Command flag: write zeroes without punching a hole.
pub const CMD_FLAG_NO_HOLE: u16 = 1 << 1;

/// Error: input/output error.
pub const EIO: u32 = 5;
/// Error: invalid argument.
pub const EINVAL: u32 = 22;
/// Error: no space left.
pub const ENOSPC: u32 = 28;
/// Error: operation not supported (NBD's value, 95, whatever the host's errno).
pub const ENOTSUP: u32 = 95;

/// Reads a big-endian `u16`.
pub fn read_u16(r: &mut impl Read) -> io::Result<u16> {
    let mut b = [0; 2];
    r.read_exact(&mut b)?;
    Ok(u16::from_be_bytes(b))
}

/// Reads a big-endian `u32`.
pub fn read_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}

/// Reads a big-endian `u64`.
pub fn read_u64(r: &mut impl Read) -> io::Result<u64> {
    let mut b = [0; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_be_bytes(b))
}

/// Writes an option reply: header, then `data`.
pub fn write_option_reply(w: &mut impl Write, option: u32, reply: u32, data: &[u8]) -> io::Result<()> {
    let len = u32::try_from(data.len()).map_err(|_| io::Error::other("option reply longer than 4 GiB"))?;
    w.write_all(&OPT_REPLY_MAGIC.to_be_bytes())?;
    w.write_all(&option.to_be_bytes())?;
    w.write_all(&reply.to_be_bytes())?;
    w.write_all(&len.to_be_bytes())?;
    w.write_all(data)
}

/// Writes a simple reply: header, then `data` (a successful read's bytes).
pub fn write_simple_reply(w: &mut impl Write, error: u32, cookie: u64, data: Option<&[u8]>) -> io::Result<()> {
    let mut header = [0u8; 16];
    header[..4].copy_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    header[4..8].copy_from_slice(&error.to_be_bytes());
    header[8..].copy_from_slice(&cookie.to_be_bytes());
    w.write_all(&header)?;
    if let Some(data) = data {
        w.write_all(data)?;
    }
    Ok(())
}

/// A request header as the client sent it (a write's payload follows it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestHeader {
    /// Command flags.
    pub flags: u16,
    /// Command type.
    pub kind: u16,
    /// The client's opaque cookie, echoed in the reply.
    pub cookie: u64,
    /// Byte offset.
    pub offset: u64,
    /// Byte length.
    pub len: u32,
}

impl RequestHeader {
    /// Reads one request header; `Ok(None)` at a clean end of stream (the client
    /// closed the connection between requests).
    pub fn read(r: &mut impl Read) -> io::Result<Option<RequestHeader>> {
        let mut b = [0u8; 28];
        let mut got = 0;
        while got < b.len() {
            match r.read(&mut b[got..]) {
                Ok(0) if got == 0 => return Ok(None),
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let word = |at: usize| u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        if word(0) != REQUEST_MAGIC {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("request magic {:#010x}, expected {REQUEST_MAGIC:#010x}", word(0)),
            ));
        }
        let long = |at: usize| (u64::from(word(at)) << 32) | u64::from(word(at + 4));
        Ok(Some(RequestHeader {
            flags: u16::from_be_bytes([b[4], b[5]]),
            kind: u16::from_be_bytes([b[6], b[7]]),
            cookie: long(8),
            offset: long(16),
            len: word(24),
        }))
    }

    /// Writes it (the client's side, for tests and tools).
    pub fn write(&self, w: &mut impl Write) -> io::Result<()> {
        w.write_all(&REQUEST_MAGIC.to_be_bytes())?;
        w.write_all(&self.flags.to_be_bytes())?;
        w.write_all(&self.kind.to_be_bytes())?;
        w.write_all(&self.cookie.to_be_bytes())?;
        w.write_all(&self.offset.to_be_bytes())?;
        w.write_all(&self.len.to_be_bytes())
    }
}
