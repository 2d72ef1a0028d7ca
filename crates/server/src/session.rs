//! The transmission phase of one connection.
//!
//! A reader thread parses requests (a write with its payload) and sends them
//! to the connection's channel; the session takes everything on the channel
//! that is already there, submits each request to the export's device at once
//! (so several are in flight, as the client sent them), and only when nothing
//! more is waiting flushes its buffered replies and moves simulated time on to
//! the next completion. Replies go out in completion order, which the device
//! gives in simulated time: out of request order whenever a later request
//! finishes first.
//!
//! Bad requests (misaligned, out of range, oversized, unknown commands or
//! flags) get an error reply and the connection stays; a malformed header or a
//! client that disconnects mid-request ends this connection only, after the
//! commands it had in flight complete on the device.

use std::collections::HashMap;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::Duration;

use ftlab_ftl::ErrorKind;
use ftlab_sim::device::{Command, Completion, DeviceError, Tag, SECTOR};

use crate::export::{Export, MAX_PAYLOAD};
use crate::listen::Conn;
use crate::proto::*;

/// What a session waits for.
#[derive(Debug)]
pub(crate) enum Event {
    /// A request from the client; `data` is a write's payload (`None` when it
    /// was over [`MAX_PAYLOAD`] and skipped).
    Request { header: RequestHeader, data: Option<Vec<u8>> },
    /// One of its commands completed on the device; `losses` is the export's
    /// count of power cuts that lost unflushed writes at that moment
    /// ([`Export::losses`]), `error` an NBD error that overrides a success
    /// (the image could not be synced).
    Completion { completion: Completion, losses: u64, error: Option<u32> },
    /// The client will send no more: why (disconnect, protocol error).
    Closed(String),
    /// Requests that arrived together, in order: submitted together.
    Batch(Vec<Event>),
}

/// The NBD error code of a device error.
pub fn nbd_error(e: &DeviceError) -> u32 {
    match e.kind() {
        ErrorKind::Invalid => EINVAL,
        ErrorKind::NoSpace => ENOSPC,
        ErrorKind::Unsupported => ENOTSUP,
        _ => EIO,
    }
}

/// The device command a request asks for, or the NBD error it is refused with.
fn command(h: &RequestHeader, data: Option<Vec<u8>>, size: u64) -> Result<Command, u32> {
    let allowed = if h.kind == CMD_WRITE_ZEROES { CMD_FLAG_FUA | CMD_FLAG_NO_HOLE } else { CMD_FLAG_FUA };
    if h.flags & !allowed != 0 {
        return Err(EINVAL);
    }
    let fua = h.flags & CMD_FLAG_FUA != 0;
    let (offset, len) = (h.offset, u64::from(h.len));
    if h.kind == CMD_FLUSH {
        return Ok(Command::Flush);
    }
    if ![CMD_READ, CMD_WRITE, CMD_TRIM, CMD_WRITE_ZEROES].contains(&h.kind) {
        return Err(EINVAL);
    }
    let payload = h.kind == CMD_READ || h.kind == CMD_WRITE;
    if (payload && h.len > MAX_PAYLOAD) || len == 0 || offset % SECTOR != 0 || len % SECTOR != 0 {
        return Err(EINVAL);
    }
    if offset.checked_add(len).is_none_or(|end| end > size) {
        // The protocol's advice: ENOSPC for writes past the end, EINVAL for the rest.
        let writes = h.kind == CMD_WRITE || h.kind == CMD_WRITE_ZEROES;
        return Err(if writes { ENOSPC } else { EINVAL });
    }
    Ok(match h.kind {
        CMD_READ => Command::Read { offset, len },
        CMD_WRITE => Command::Write { offset, data: data.ok_or(EINVAL)?, fua },
        // Trim writes nothing a client may rely on: FUA is ignored.
        CMD_TRIM => Command::Trim { offset, len },
        _ => Command::WriteZeroes { offset, len, fua, may_trim: h.flags & CMD_FLAG_NO_HOLE == 0 },
    })
}

/// Write payloads read ahead of the session, bytes, past which the reader
/// waits: a client that sends without reading its replies cannot fill the
/// server's memory.
const MAX_BACKLOG: u64 = 4 * MAX_PAYLOAD as u64;

/// Reads requests from `r` until the client disconnects (or breaks the
/// protocol) and sends them to `tx`, all the requests that arrived together
/// in one batch (so the session submits them together, in flight at once).
/// `backlog` counts the write payload bytes sent and not yet taken.
fn read_requests(r: Conn, tx: &Sender<Event>, backlog: &AtomicU64) {
    let mut r = BufReader::with_capacity(256 << 10, r);
    let mut batch = Vec::new();
    let closed = loop {
        // Only with the batch sent: the session can then take from the backlog.
        while batch.is_empty() && backlog.load(Ordering::Acquire) > MAX_BACKLOG {
            std::thread::sleep(Duration::from_millis(1));
        }
        let header = match RequestHeader::read(&mut r) {
            Ok(Some(h)) => h,
            Ok(None) => break "the client closed the connection".to_owned(),
            Err(e) => break format!("bad request: {e}"),
        };
        let mut data = None;
        if header.kind == CMD_WRITE {
            let len = u64::from(header.len);
            let got = if header.len <= MAX_PAYLOAD {
                let mut buf = vec![0u8; header.len as usize];
                r.read_exact(&mut buf).map(|()| {
                    backlog.fetch_add(len, Ordering::AcqRel);
                    data = Some(buf);
                })
            } else {
                io::copy(&mut (&mut r).take(len), &mut io::sink())
                    .and_then(|n| (n == len).then_some(()).ok_or_else(|| io::ErrorKind::UnexpectedEof.into()))
            };
            if let Err(e) = got {
                break format!("the client left in the middle of a {len}-byte write: {e}");
            }
        }
        let disc = header.kind == CMD_DISC;
        batch.push(Event::Request { header, data });
        let last = disc || r.buffer().is_empty() || backlog.load(Ordering::Acquire) > MAX_BACKLOG;
        if last && (tx.send(Event::Batch(std::mem::take(&mut batch))).is_err() || disc) {
            return;
        }
    };
    batch.push(Event::Closed(closed));
    let _ = tx.send(Event::Batch(batch));
}

/// One connection in transmission.
struct Session<'a> {
    export: &'a Export,
    tx: Sender<Event>,
    writer: BufWriter<Conn>,
    /// Write payload bytes the reader sent that are not yet taken.
    backlog: Arc<AtomicU64>,
    /// Commands on the device: tag → the client's cookie.
    in_flight: HashMap<Tag, u64>,
    /// The client may still send requests.
    open: bool,
    /// Writing to the client failed: replies are dropped.
    broken: bool,
    /// The export's losses ([`Export::losses`]) this connection has been told
    /// of (by a failed flush) or that happened before it connected.
    losses_seen: u64,
    why: String,
}

impl Session<'_> {
    fn handle(&mut self, event: Event) {
        match event {
            Event::Request { header, .. } if header.kind == CMD_DISC => {
                self.open = false;
                self.why = "NBD_CMD_DISC".into();
            }
            Event::Request { header, data } => {
                if let Some(d) = &data {
                    self.backlog.fetch_sub(d.len() as u64, Ordering::AcqRel);
                }
                self.request(header, data);
            }
            Event::Completion { completion: c, losses, error } => {
                let Some(cookie) = self.in_flight.remove(&c.tag) else { return };
                match (c.result, error) {
                    (_, Some(code)) => self.reply(code, cookie, None),
                    // Writes acknowledged before it were lost to a power cut
                    // since this connection last learnt of one.
                    (Ok(_), None) if c.command == "flush" && losses > self.losses_seen => {
                        self.losses_seen = losses;
                        self.reply(EIO, cookie, None);
                    }
                    (Ok(reply), None) => self.reply(0, cookie, reply.data.as_deref()),
                    (Err(e), None) => self.reply(nbd_error(&e), cookie, None),
                }
            }
            Event::Closed(why) => {
                self.open = false;
                self.why = why;
            }
            Event::Batch(events) => events.into_iter().for_each(|e| self.handle(e)),
        }
    }

    /// Submits a request to the device, or replies with why it is refused.
    fn request(&mut self, header: RequestHeader, data: Option<Vec<u8>>) {
        match command(&header, data, self.export.size()) {
            Ok(cmd) => match self.export.submit(cmd, &self.tx) {
                Ok(tag) => {
                    self.in_flight.insert(tag, header.cookie);
                }
                Err(e) => self.reply(nbd_error(&e), header.cookie, None),
            },
            Err(code) => self.reply(code, header.cookie, None),
        }
    }

    fn reply(&mut self, error: u32, cookie: u64, data: Option<&[u8]>) {
        if !self.broken && write_simple_reply(&mut self.writer, error, cookie, data).is_err() {
            self.break_off();
        }
    }

    /// The client cannot be written to: drop replies, stop the reader.
    fn break_off(&mut self) {
        self.broken = true;
        self.writer.get_ref().shutdown();
    }

    fn run(&mut self, rx: &Receiver<Event>, shutdown: &AtomicBool) {
        loop {
            if let Ok(event) = rx.try_recv() {
                self.handle(event);
                continue;
            }
            // Nothing more is waiting: send what is buffered.
            if !self.broken && self.writer.flush().is_err() {
                self.break_off();
            }
            if self.in_flight.is_empty() {
                if !self.open {
                    return;
                }
                match rx.recv() {
                    Ok(event) => self.handle(event),
                    Err(_) => return,
                }
                continue;
            }
            match self.export.advance(shutdown.load(Ordering::Relaxed)) {
                // The device holds none: another connection delivered ours.
                None => match rx.recv() {
                    Ok(event) => self.handle(event),
                    Err(_) => return,
                },
                Some(wait) if wait.is_zero() => {}
                // Pacing: sleep until the next completion is due, unless a request comes.
                Some(wait) => {
                    if let Ok(event) = rx.recv_timeout(wait.min(Duration::from_millis(100))) {
                        self.handle(event);
                    }
                }
            }
        }
    }
}

/// Serves `conn` (negotiated, in transmission) on `export` until the client
/// disconnects and its commands have completed; returns why it ended.
/// `shutdown` stops pacing, so a server that stops drains at once.
pub(crate) fn transmit(export: &Export, conn: Conn, shutdown: &AtomicBool) -> io::Result<String> {
    let reader_conn = conn.try_clone()?;
    let (tx, rx) = mpsc::channel();
    let reader_tx = tx.clone();
    let backlog = Arc::new(AtomicU64::new(0));
    let reader_backlog = backlog.clone();
    let reader = std::thread::Builder::new()
        .name(format!("nbd-read-{}", export.name()))
        .spawn(move || read_requests(reader_conn, &reader_tx, &reader_backlog))?;
    let mut session = Session {
        export,
        tx,
        backlog,
        writer: BufWriter::with_capacity(256 << 10, conn),
        in_flight: HashMap::new(),
        open: true,
        broken: false,
        losses_seen: export.losses(),
        why: String::new(),
    };
    session.run(&rx, shutdown);
    let _ = session.writer.flush();
    session.writer.get_ref().shutdown();
    let _ = reader.join();
    Ok(session.why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(kind: u16, flags: u16, offset: u64, len: u32) -> RequestHeader {
        RequestHeader { flags, kind, cookie: 1, offset, len }
    }

    #[test]
    fn requests_are_checked_before_the_device_sees_them() {
        let size = 1 << 20;
        let data = || Some(vec![0u8; 4096]);
        assert!(command(&header(CMD_WRITE, CMD_FLAG_FUA, 0, 4096), data(), size).is_ok());
        assert_eq!(command(&header(CMD_WRITE, CMD_FLAG_NO_HOLE, 0, 4096), data(), size), Err(EINVAL));
        assert!(command(&header(CMD_WRITE_ZEROES, CMD_FLAG_NO_HOLE, 0, 4096), None, size).is_ok());
        assert_eq!(command(&header(CMD_READ, 0, 100, 512), None, size), Err(EINVAL));
        assert_eq!(command(&header(CMD_READ, 0, 0, 100), None, size), Err(EINVAL));
        assert_eq!(command(&header(CMD_READ, 0, 0, 0), None, size), Err(EINVAL));
        assert_eq!(command(&header(CMD_READ, 0, size, 512), None, size), Err(EINVAL));
        assert_eq!(command(&header(CMD_WRITE, 0, size - 512, 1024), data(), size), Err(ENOSPC));
        assert_eq!(command(&header(CMD_WRITE_ZEROES, 0, u64::MAX - 511, 512), None, size), Err(ENOSPC));
        assert_eq!(command(&header(CMD_READ, 0, 0, MAX_PAYLOAD + 512), None, u64::MAX), Err(EINVAL));
        assert_eq!(command(&header(CMD_WRITE, 0, 0, MAX_PAYLOAD + 512), None, u64::MAX), Err(EINVAL));
        assert_eq!(command(&header(9, 0, 0, 512), None, size), Err(EINVAL));
        assert_eq!(command(&header(CMD_FLUSH, 0, 0, 0), None, size), Ok(Command::Flush));
        assert_eq!(
            command(&header(CMD_WRITE_ZEROES, 0, 0, 512), None, size),
            Ok(Command::WriteZeroes { offset: 0, len: 512, fua: false, may_trim: true })
        );
    }
}
