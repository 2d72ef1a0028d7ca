//! An export: one simulated device under a name, shared by the connections to
//! it, with the options that shape its time (pacing) and its power (cut after
//! N commands, or on demand with [`Export::cut_power`]), and the device image
//! that keeps it ([`Export::with_image`]): synced at every completed flush and
//! FUA write, saved whole when the server stops.
//!
//! **What a flush promises.** A flush completes successfully only if every
//! write completed before it is durable. A power cut loses the writes a
//! write-back cache held that no flush had covered; when it did, the next
//! flush on each connection open at the cut fails with EIO (once: the client
//! has learnt it, as a file system learns a lost write-back from `fsync`), so
//! no client is told that lost data is safe. With an image, a flush or FUA
//! write is acknowledged only after the image's journal holding what it made
//! durable is synced to the disk; if that fails, the command fails with EIO.
//!
//! Every connection submits to the export's one [`Device`] under its lock and
//! collects completions from it. The device delivers completions of all
//! connections in simulated-time order; each goes to the connection whose
//! command it completes ([`Event::Completion`] on that connection's channel),
//! whichever connection stepped the device.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use ftlab_ftl::Durability;
use ftlab_nand::{BlockId, SimTime};
use ftlab_sim::device::{Command, Completion, Device, DeviceCounters, DeviceError, Tag};
use ftlab_sim::image::ImageJournal;
use ftlab_sim::ImageError;

use crate::proto;
use crate::session::Event;
use crate::ServerError;

/// The largest read or write one request may carry, bytes (NBD's usual 32 MiB).
pub const MAX_PAYLOAD: u32 = 32 << 20;

/// Options shared by every export of a server.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExportOptions {
    /// Pace replies to the wall clock: a simulated nanosecond lasts this many
    /// wall-clock nanoseconds (1.0 is real time, 10.0 ten times slower). `None`
    /// (the default) runs simulated time as fast as the host allows.
    pub pace: Option<f64>,
    /// Cut the power once, right after this many commands have completed, and
    /// recover with the FTL's own recovery; commands still in flight then fail
    /// with EIO. `None` (the default) never cuts.
    pub cut_after: Option<u64>,
}

/// The device and who waits for which of its completions.
#[derive(Debug)]
struct State {
    device: Device,
    routes: HashMap<Tag, Sender<Event>>,
    completed: u64,
    power_cuts: u64,
    /// The image's journal, synced at every completed flush and FUA write.
    journal: Option<ImageJournal>,
    /// FUA writes in flight.
    fua: HashSet<Tag>,
    /// Flushes in flight, each with the count of writes acknowledged when it
    /// was submitted (what it makes durable).
    flushes: HashMap<Tag, u64>,
    /// Writes (not FUA) acknowledged since the last power cut.
    acked_writes: u64,
    /// Of those, how many a completed flush made durable.
    durable_writes: u64,
    /// Power cuts that lost acknowledged writes no flush had made durable.
    losses: u64,
}

/// One named device as clients see it.
#[derive(Debug)]
pub struct Export {
    name: String,
    description: String,
    ftl: &'static str,
    size: u64,
    preferred_block: u32,
    options: ExportOptions,
    /// Wall-clock time at simulated time zero (pacing).
    origin: Instant,
    /// The device image the export is saved to ([`Export::save_image`]).
    image: Option<PathBuf>,
    /// The image's lock file, held while the export lives.
    _lock: Option<ImageLock>,
    state: Mutex<State>,
}

/// What an export's stats file and exit report show: the device's counters
/// (the field names of `ftlab run`'s report where they mean the same), its free
/// blocks and the power cuts so far.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ExportStats {
    /// The export's name.
    pub name: String,
    /// The FTL it runs.
    pub ftl: &'static str,
    /// Bytes the client sees.
    pub size_bytes: u64,
    /// Blocks with no page programmed (erased, not bad): the FTL's free pool.
    pub free_blocks: u64,
    /// Blocks of the medium.
    pub total_blocks: u64,
    /// Power cuts (and recoveries) so far.
    pub power_cuts: u64,
    /// The device's host-side and flash counters.
    #[serde(flatten)]
    pub counters: DeviceCounters,
}

impl Export {
    /// Exports `device` as `name`.
    pub fn new(name: impl Into<String>, device: Device, options: ExportOptions) -> Export {
        let ftl = device.ftl().name();
        let size = device.capacity();
        let page = device.page_size();
        let preferred_block = match u32::try_from(page) {
            Ok(p) if p.is_power_of_two() && (512..=MAX_PAYLOAD).contains(&p) => p,
            _ => 512,
        };
        let description = format!("ftlab {ftl}, {size} bytes in {page}-byte logical pages");
        Export {
            name: name.into(),
            description,
            ftl,
            size,
            preferred_block,
            options,
            origin: Instant::now(),
            image: None,
            _lock: None,
            state: Mutex::new(State {
                device,
                routes: HashMap::new(),
                completed: 0,
                power_cuts: 0,
                journal: None,
                fua: HashSet::new(),
                flushes: HashMap::new(),
                acked_writes: 0,
                durable_writes: 0,
                losses: 0,
            }),
        }
    }

    /// The export, kept in the device image at `path` (open its device from
    /// that image with [`Device::open_image`] when the file exists). Takes
    /// the image's lock (`PATH.lock`, held while the export lives: a second
    /// server on the same image is refused), writes the device's medium to
    /// the image now and starts its journal ([`Device::start_journal`]):
    /// from then on every completed flush and FUA write is in the file before
    /// it is acknowledged, and [`Export::save_image`] saves it whole at the end.
    pub fn with_image(mut self, path: impl Into<PathBuf>) -> Result<Export, ServerError> {
        let path = path.into();
        let lock = lock_image(&path).map_err(|why| ServerError::ImageInUse {
            export: self.name.clone(),
            path: path.clone(),
            why,
        })?;
        let journal = self
            .lock()
            .device
            .start_journal(&path)
            .map_err(|e| ServerError::Image { export: self.name.clone(), source: Box::new(e) })?;
        self.lock().journal = Some(journal);
        self.image = Some(path);
        self._lock = Some(lock);
        Ok(self)
    }

    /// The device image it is saved to, if any.
    pub fn image(&self) -> Option<&Path> {
        self.image.as_deref()
    }

    /// Saves the device to its image ([`Device::save_image`]: flushed, then
    /// written whole or not at all); `Ok(false)` if it has none. Call it once
    /// no connection submits any more (after [`crate::Server::serve`]
    /// returned), so that every command acknowledged is in the image.
    pub fn save_image(&self) -> Result<bool, ImageError> {
        let Some(path) = &self.image else { return Ok(false) };
        self.lock().device.save_image(path)?;
        Ok(true)
    }

    /// Cuts the power now (the device's clock), then recovers with the FTL's
    /// own recovery: commands in flight fail with EIO, as with
    /// [`ExportOptions::cut_after`]. Returns when the power was cut, ns.
    pub fn cut_power(&self) -> Result<u64, DeviceError> {
        let mut state = self.lock();
        let at = state.device.now();
        self.cut(&mut state, at, "on demand")?;
        Ok(at.0)
    }

    /// Power cuts so far that lost acknowledged writes no flush had made
    /// durable (the next flush on a connection open then fails).
    pub fn losses(&self) -> u64 {
        self.lock().losses
    }

    /// Syncs of the image's journal that wrote a record and image rewrites
    /// that started it over; `None` without an image.
    pub fn journal_counts(&self) -> Option<(u64, u64)> {
        self.lock().journal.as_ref().map(ImageJournal::counts)
    }

    /// Cuts the power at `at` and recovers, with a line on stderr saying `why`.
    fn cut(&self, state: &mut State, at: SimTime, why: &str) -> Result<(), DeviceError> {
        // Writes acknowledged into a write-back cache and not flushed die with it.
        let volatile = state.device.ftl().durability() == Durability::OnFlush;
        if volatile && state.acked_writes > state.durable_writes {
            state.losses += 1;
        }
        state.acked_writes = 0;
        state.durable_writes = 0;
        state.flushes.values_mut().for_each(|m| *m = 0);
        let recovered = state.device.cut_power(at).and_then(|()| state.device.recover());
        state.power_cuts += 1;
        match &recovered {
            Ok(()) => eprintln!(
                "ftlab serve: export `{}`: power cut at {} ns ({why}, {} commands completed); recovered at {} ns",
                self.name,
                at.0,
                state.completed,
                state.device.now().0
            ),
            Err(e) => eprintln!("ftlab serve: export `{}`: power cut ({why}), recovery failed: {e}", self.name),
        }
        recovered
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A line for people (NBD_INFO_DESCRIPTION, LIST).
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Its size, bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The preferred block size: the flash page (when a power of two of at
    /// least 512 bytes).
    pub fn preferred_block(&self) -> u32 {
        self.preferred_block
    }

    /// The transmission flags it offers.
    pub fn transmission_flags(&self) -> u16 {
        proto::FLAG_HAS_FLAGS
            | proto::FLAG_SEND_FLUSH
            | proto::FLAG_SEND_FUA
            | proto::FLAG_SEND_TRIM
            | proto::FLAG_SEND_WRITE_ZEROES
            | proto::FLAG_CAN_MULTI_CONN
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A connection that panicked under the lock leaves a device that is
        // still consistent between commands: serve on.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Its counters now.
    pub fn stats(&self) -> ExportStats {
        let state = self.lock();
        let nand = state.device.flash().nand();
        let total = nand.geometry().total_blocks();
        let free = (0..total).map(BlockId).filter(|&b| !nand.is_bad(b) && nand.programmed_pages(b) == 0).count() as u64;
        ExportStats {
            name: self.name.clone(),
            ftl: self.ftl,
            size_bytes: self.size,
            free_blocks: free,
            total_blocks: u64::from(total),
            power_cuts: state.power_cuts,
            counters: state.device.counters(),
        }
    }

    /// The simulated time the wall clock stands at (pacing), ns.
    fn paced_now(&self, scale: f64) -> u64 {
        (self.origin.elapsed().as_nanos() as f64 / scale) as u64
    }

    /// Submits `cmd` now (the device's clock, or the wall clock's simulated
    /// time when pacing, whichever is later); its completion goes to `to`.
    pub(crate) fn submit(&self, cmd: Command, to: &Sender<Event>) -> Result<Tag, DeviceError> {
        let mut state = self.lock();
        let at = match self.options.pace {
            Some(scale) => state.device.now().0.max(self.paced_now(scale)),
            None => state.device.now().0,
        };
        let (flush, fua) = match &cmd {
            Command::Flush => (true, false),
            Command::Write { fua, .. } | Command::WriteZeroes { fua, .. } => (false, *fua),
            _ => (false, false),
        };
        let tag = state.device.submit(SimTime(at), cmd)?;
        state.routes.insert(tag, to.clone());
        if flush {
            let acked = state.acked_writes;
            state.flushes.insert(tag, acked);
        }
        if fua {
            state.fua.insert(tag);
        }
        Ok(tag)
    }

    /// Moves simulated time on and hands out what completes: without pacing,
    /// the next completion; with pacing, every completion due by the wall
    /// clock. Returns how long to wait (wall clock) before the next one is due,
    /// or `None` if nothing was in flight.
    pub(crate) fn advance(&self, unpaced: bool) -> Option<Duration> {
        let mut state = self.lock();
        match self.options.pace.filter(|_| !unpaced) {
            None => {
                let c = state.device.step()?;
                self.deliver(&mut state, c);
                Some(Duration::ZERO)
            }
            Some(scale) => {
                let now = self.paced_now(scale);
                let clock = state.device.now().0;
                let due = state.device.step_until(SimTime(now.max(clock)));
                let delivered = !due.is_empty();
                for c in due {
                    self.deliver(&mut state, c);
                }
                let next = state.device.next_completion()?;
                if delivered {
                    return Some(Duration::ZERO);
                }
                let wall = Duration::from_nanos((next.0 as f64 * scale) as u64);
                Some(wall.saturating_sub(self.origin.elapsed()))
            }
        }
    }

    /// Hands `c` to its connection (dropped if that connection is gone), then
    /// cuts the power if it is the command `cut_after` names. A flush or FUA
    /// write that succeeded is in the image's journal, synced, before it goes.
    fn deliver(&self, state: &mut State, c: Completion) {
        let fua = state.fua.remove(&c.tag);
        let flush = state.flushes.remove(&c.tag);
        let mut error = None;
        if c.result.is_ok() {
            if matches!(c.command, "write" | "write-zeroes") && !fua {
                state.acked_writes += 1;
            }
            if let Some(covered) = flush {
                state.durable_writes = state.durable_writes.max(covered);
            }
            if fua || flush.is_some() {
                let State { journal, device, .. } = state;
                if let Some(j) = journal.as_mut() {
                    if let Err(e) = j.sync(device) {
                        eprintln!("ftlab serve: export `{}`: {} failed: {e}", self.name, c.command);
                        error = Some(proto::EIO);
                    }
                }
            }
        }
        if let Some(to) = state.routes.remove(&c.tag) {
            let _ = to.send(Event::Completion { completion: c, losses: state.losses, error });
        }
        state.completed += 1;
        if self.options.cut_after == Some(state.completed) {
            let at = state.device.now();
            // A failed recovery is on stderr; the device stays off and every
            // command fails with EIO.
            let _ = self.cut(state, at, "--cut-after");
        }
    }
}

/// A held lock on an image's lock file (released when dropped).
#[cfg(unix)]
type ImageLock = nix::fcntl::Flock<File>;
#[cfg(not(unix))]
type ImageLock = File;

/// Takes the lock of the image at `path` (`PATH.lock`, created if missing,
/// never removed): held until the returned file is dropped. Why not, if it
/// cannot be taken.
fn lock_image(path: &std::path::Path) -> Result<ImageLock, String> {
    let mut lock_path = path.to_path_buf();
    lock_path.as_mut_os_string().push(".lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| format!("cannot open its lock file {}: {e}", lock_path.display()))?;
    take_lock(file, &lock_path)
}

/// An exclusive lock on `file` (flock), or why not.
#[cfg(unix)]
fn take_lock(file: File, lock_path: &std::path::Path) -> Result<ImageLock, String> {
    use nix::errno::Errno;
    use nix::fcntl::{Flock, FlockArg};
    Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, e)| match e {
        Errno::EWOULDBLOCK => format!(
            "another process (another ftlab serve) holds its lock file {}: stop that server or give another image",
            lock_path.display()
        ),
        e => format!("cannot lock {}: {e}", lock_path.display()),
    })
}

/// Without flock the image is not locked.
#[cfg(not(unix))]
fn take_lock(file: File, _lock_path: &std::path::Path) -> Result<ImageLock, String> {
    Ok(file)
}
