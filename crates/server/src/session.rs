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

/// Bytes a request pins beyond its payload: its header, its event, its entry
/// in flight. Counted so that a flood of small requests is bounded too.
const REQUEST_OVERHEAD: u64 = 256;

/// Bytes request `h` pins in the server from when it is read until it is
/// replied to: a read's buffer, a write's payload (until it is on the
/// device), and [`REQUEST_OVERHEAD`].
fn pinned(h: &RequestHeader) -> u64 {
    let payload = (h.kind == CMD_READ || h.kind == CMD_WRITE) && h.len <= MAX_PAYLOAD;
    REQUEST_OVERHEAD + if payload { u64::from(h.len) } else { 0 }
}

/// What one connection's requests pin in the server, against its limit and
/// the server's total; what it still holds goes back to the total when it is
/// dropped (the connection ended).
#[derive(Debug)]
pub(crate) struct Budget {
    mine: AtomicU64,
    limit: u64,
    total_limit: u64,
    total: Arc<AtomicU64>,
}

impl Budget {
    /// A connection's budget of `limit` bytes, sharing `total` (at most
    /// `total_limit`) with the others.
    pub(crate) fn new(limit: u64, total_limit: u64, total: Arc<AtomicU64>) -> Arc<Budget> {
        Arc::new(Budget { mine: AtomicU64::new(0), limit, total_limit, total })
    }

    fn add(&self, n: u64) {
        self.mine.fetch_add(n, Ordering::AcqRel);
        self.total.fetch_add(n, Ordering::AcqRel);
    }

    fn sub(&self, n: u64) {
        self.mine.fetch_sub(n, Ordering::AcqRel);
        self.total.fetch_sub(n, Ordering::AcqRel);
    }

    /// No more requests are read from this connection until some are
    /// replied: over its own limit, or over the total while it holds some
    /// (so every connection can always have one request in flight).
    fn full(&self) -> bool {
        let mine = self.mine.load(Ordering::Acquire);
        mine > self.limit || (mine > 0 && self.total.load(Ordering::Acquire) > self.total_limit)
    }
}

impl Drop for Budget {
    fn drop(&mut self) {
        self.total.fetch_sub(self.mine.load(Ordering::Acquire), Ordering::AcqRel);
    }
}

/// Reads requests from `r` until the client disconnects (or breaks the
/// protocol) and sends them to `tx`, all the requests that arrived together
/// in one batch (so the session submits them together, in flight at once).
/// Each request's bytes are counted in `budget` as it is read; while the
/// budget is full, nothing more is read (the client's sends back up: TCP's
/// and the socket's own backpressure).
fn read_requests(r: Conn, tx: &Sender<Event>, budget: &Budget) {
    let mut r = BufReader::with_capacity(256 << 10, r);
    let mut batch = Vec::new();
    let closed = loop {
        // Only with the batch sent: the session can then reply and free some.
        while batch.is_empty() && budget.full() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let header = match RequestHeader::read(&mut r) {
            Ok(Some(h)) => h,
            Ok(None) => break "the client closed the connection".to_owned(),
            Err(e) if crate::server::timed_out(&e) => {
                break "no request within the idle timeout (--idle-timeout): closed".to_owned()
            }
            Err(e) => break format!("bad request: {e}"),
        };
        budget.add(pinned(&header));
        let mut data = None;
        if header.kind == CMD_WRITE {
            let len = u64::from(header.len);
            let got = if header.len <= MAX_PAYLOAD {
                let mut buf = vec![0u8; header.len as usize];
                r.read_exact(&mut buf).map(|()| data = Some(buf))
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
        let last = disc || r.buffer().is_empty() || budget.full();
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
    /// What this connection's requests pin ([`Budget`]).
    budget: Arc<Budget>,
    /// Commands on the device: tag → the client's cookie and the bytes the
    /// request pins until its reply.
    in_flight: HashMap<Tag, (u64, u64)>,
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
                self.budget.sub(pinned(&header));
                self.open = false;
                self.why = "NBD_CMD_DISC".into();
            }
            Event::Request { header, data } => self.request(header, data),
            Event::Completion { completion: c, losses, error } => {
                let Some((cookie, hold)) = self.in_flight.remove(&c.tag) else { return };
                self.budget.sub(hold);
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
        // A write's payload goes to the device now: what it pins is the device's.
        let payload = data.as_ref().map_or(0, |d| d.len() as u64);
        self.budget.sub(payload);
        let hold = pinned(&header) - payload;
        match command(&header, data, self.export.size()) {
            Ok(cmd) => match self.export.submit(cmd, &self.tx) {
                Ok(tag) => {
                    self.in_flight.insert(tag, (header.cookie, hold));
                }
                Err(e) => {
                    self.budget.sub(hold);
                    self.reply(nbd_error(&e), header.cookie, None);
                }
            },
            Err(code) => {
                self.budget.sub(hold);
                self.reply(code, header.cookie, None);
            }
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
pub(crate) fn transmit(export: &Export, conn: Conn, shutdown: &AtomicBool, budget: Arc<Budget>) -> io::Result<String> {
    let reader_conn = conn.try_clone()?;
    let (tx, rx) = mpsc::channel();
    let reader_tx = tx.clone();
    let reader_budget = budget.clone();
    let reader = std::thread::Builder::new()
        .name("nbd-read".into())
        .spawn(move || read_requests(reader_conn, &reader_tx, &reader_budget))?;
    let mut session = Session {
        export,
        tx,
        budget,
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
