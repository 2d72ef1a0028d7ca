//! An export: one simulated device under a name, shared by the connections to
//! it, with the options that shape its time (pacing) and its power (cut after
//! N commands, or on demand with [`Export::cut_power`]), and the device image
//! it is saved to when the server stops ([`Export::with_image`]).
//!
//! Every connection submits to the export's one [`Device`] under its lock and
//! collects completions from it. The device delivers completions of all
//! connections in simulated-time order; each goes to the connection whose
//! command it completes ([`Event::Completion`] on that connection's channel),
//! whichever connection stepped the device.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use ftlab_nand::{BlockId, SimTime};
use ftlab_sim::device::{Command, Completion, Device, DeviceCounters, DeviceError, Tag};
use ftlab_sim::ImageError;

use crate::proto;
use crate::session::Event;

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
            state: Mutex::new(State { device, routes: HashMap::new(), completed: 0, power_cuts: 0 }),
        }
    }

    /// The export, saved to the device image at `path` by
    /// [`Export::save_image`] (open its device from that image with
    /// [`Device::open_image`] when the file exists).
    pub fn with_image(mut self, path: impl Into<PathBuf>) -> Export {
        self.image = Some(path.into());
        self
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

    /// Cuts the power at `at` and recovers, with a line on stderr saying `why`.
    fn cut(&self, state: &mut State, at: SimTime, why: &str) -> Result<(), DeviceError> {
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
        let tag = state.device.submit(SimTime(at), cmd)?;
        state.routes.insert(tag, to.clone());
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
    /// cuts the power if it is the command `cut_after` names.
    fn deliver(&self, state: &mut State, c: Completion) {
        if let Some(to) = state.routes.remove(&c.tag) {
            let _ = to.send(Event::Completion(c));
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
