//! Device images: a [`Device`]'s medium saved to one file and opened again.
//!
//! [`Device::save_image`] is a clean power-off: it flushes the FTL (a write-back
//! buffer writes its pages to flash, so every write acknowledged so far is
//! durable), waits until the flash is idle, and writes the medium's durable
//! state ([`ftlab_nand::medium::image`]) to the file. [`Device::open_image`]
//! reads it back into a medium of the configured chip and geometry and rebuilds
//! the FTL from it by the FTL's own recovery, the same path as after a power
//! cut: every write acknowledged before the save reads back. The FTL's RAM
//! state is never saved; what a power cut forgets (a trim, for an FTL whose
//! trims are not durable) an image forgets too.
//!
//! The image records which FTL (and its `[ftl]` keys) formatted the medium, and
//! opening it with another is refused: another FTL's recovery cannot read the
//! medium's layout. (A device built by [`Device::new`] from parts names no FTL;
//! its image is opened with whatever FTL the configuration gives.) A file is written whole or not at all: the image goes to
//! `PATH.tmp`, is synced, then renamed over `PATH`, and the directory is synced.
//!
//! **Kept current: the journal.** [`Device::start_journal`] writes the medium as
//! it is to the image and starts a journal beside it, `PATH.journal`
//! ([`ftlab_nand::medium::journal`]); each [`ImageJournal::sync`] appends what
//! changed on the medium since and syncs it to the disk, so a server that
//! syncs at every completed flush and FUA write keeps everything those made
//! durable in the file, whatever happens to the process afterwards (a crash,
//! `kill -9`, an abort). [`Device::open_image`] applies the journal to the
//! image (a record cut short by a crash is ignored); a journal that follows
//! another image (left by a crash between writing a new image and replacing
//! the journal) is stale and ignored. When the journal grows past the image's
//! size (and 64 MiB), a sync rewrites the image and starts the journal over.

use std::fs::{File, OpenOptions};
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use thiserror::Error;

use ftlab_ftl::{Flash, FtlError};
use ftlab_nand::medium::journal::{write_journal_header, JournalCursor, JOURNAL_HEADER_BYTES};
use ftlab_nand::{DieId, Nand, SimTime};

use crate::config::RunConfig;
use crate::device::{Device, DeviceError};
use crate::error::SimError;
use crate::setup::ftl_label;

/// Why a device image could not be saved or opened. Each message names the
/// file and what to do.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ImageError {
    /// The configuration does not describe a device.
    #[error("{0}")]
    Config(SimError),
    /// The file cannot be read or written, or its contents are not an image of
    /// this device ([`ftlab_nand::ImageError`]).
    #[error("device image {}: {source}", path.display())]
    File {
        path: PathBuf,
        #[source]
        source: ftlab_nand::ImageError,
    },
    /// The image was saved by another FTL, or by the same FTL with other keys.
    #[error(
        "device image {}: it was saved with [ftl] {image}, but the device is configured with [ftl] {config}: \
         open it with the FTL and keys it was saved with, or give another image path",
        path.display()
    )]
    Ftl { path: PathBuf, image: String, config: String },
    /// The FTL's recovery failed on the medium the image holds.
    #[error("device image {}: FTL `{ftl}` could not recover from it: {source}", path.display())]
    Recover {
        path: PathBuf,
        ftl: String,
        #[source]
        source: FtlError,
    },
    /// The device could not be brought to a clean power-off (it is powered
    /// off, or its flush failed).
    #[error("device image {}: cannot save the device: {source}", path.display())]
    Device {
        path: PathBuf,
        #[source]
        source: DeviceError,
    },
}

/// `path` with `suffix` appended (`PATH.tmp`, `PATH.journal`).
fn suffixed(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.to_path_buf();
    p.as_mut_os_string().push(suffix);
    p
}

/// `PATH.tmp`, beside `path`.
fn temp_path(path: &Path) -> PathBuf {
    suffixed(path, ".tmp")
}

/// The journal of the image at `path`: `PATH.journal`.
pub fn journal_path(path: &Path) -> PathBuf {
    suffixed(path, ".journal")
}

/// Syncs the directory holding `path`, so a rename into it is durable.
fn sync_dir(path: &Path) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if cfg!(unix) {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Writes `path` whole or not at all: `write` fills `PATH.tmp`, which is
/// synced, renamed over `path`, and the directory synced.
fn write_whole(path: &Path, write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>) -> std::io::Result<()> {
    let tmp = temp_path(path);
    let written = (|| -> std::io::Result<()> {
        let mut w = BufWriter::new(File::create(&tmp)?);
        write(&mut w)?;
        w.flush()?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)?;
        sync_dir(path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// A writer that keeps the last four bytes written (an image's checksum)
/// and counts the bytes.
struct Tail<W> {
    w: W,
    last: [u8; 4],
    bytes: u64,
}

impl<W: Write> Write for Tail<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.w.write(buf)?;
        for &b in &buf[..n] {
            self.last = [self.last[1], self.last[2], self.last[3], b];
        }
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush()
    }
}

/// The checksum an image file ends with (its last four bytes).
fn image_crc(path: &Path) -> std::io::Result<u32> {
    let mut f = File::open(path)?;
    f.seek(SeekFrom::End(-4))?;
    let mut b = [0u8; 4];
    f.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

/// Journal size past which a sync rewrites the image (and at least the image's size).
const COMPACT_BYTES: u64 = 64 << 20;

/// An image kept current by a journal ([`Device::start_journal`]): sync it
/// when what the device made durable must be in the file.
#[derive(Debug)]
pub struct ImageJournal {
    image: PathBuf,
    file: File,
    cursor: JournalCursor,
    journal_bytes: u64,
    image_bytes: u64,
    syncs: u64,
    compactions: u64,
}

impl ImageJournal {
    /// The image it keeps current.
    pub fn image(&self) -> &Path {
        &self.image
    }

    /// Syncs so far that appended a record, and images rewritten to start the
    /// journal over.
    pub fn counts(&self) -> (u64, u64) {
        (self.syncs, self.compactions)
    }

    /// Appends what changed on `device`'s medium since the last sync and
    /// syncs the journal to the disk; when the journal has grown past the
    /// image (and 64 MiB), rewrites the image instead and starts the journal
    /// over. On return everything the medium holds is in the file.
    pub fn sync(&mut self, device: &Device) -> Result<(), ImageError> {
        if self.journal_bytes > COMPACT_BYTES.max(self.image_bytes) {
            let (syncs, compactions) = (self.syncs, self.compactions);
            *self = device.start_journal(&self.image)?;
            (self.syncs, self.compactions) = (syncs, compactions + 1);
            return Ok(());
        }
        let journal = journal_path(&self.image);
        let file_err = |source: std::io::Error| ImageError::File { path: journal.clone(), source: source.into() };
        let mut record = Vec::new();
        let nand = device.flash.nand();
        let n = nand.journal_record(&mut self.cursor, device.idle_time(), &mut record).map_err(file_err)?;
        if n == 0 {
            return Ok(());
        }
        self.file.write_all(&record).and_then(|()| self.file.sync_data()).map_err(file_err)?;
        self.journal_bytes += n;
        self.syncs += 1;
        Ok(())
    }
}

impl Device {
    /// Opens the device `config` describes from the image at `path` (saved by
    /// [`Device::save_image`] from a device of the same chip, geometry and
    /// FTL), keeping real bytes like [`Device::open`]. The FTL is rebuilt by its
    /// own recovery, which takes simulated time: the clock starts at the time
    /// the image was saved at and moves past the recovery.
    pub fn open_image(config: &RunConfig, path: &Path) -> Result<Device, ImageError> {
        let file_err = |source| ImageError::File { path: path.to_path_buf(), source };
        let mut nand_config = config.device.nand_config(config.seed()).map_err(ImageError::Config)?;
        nand_config.store = ftlab_nand::StoreKind::Bytes;
        let builder = crate::setup::ftl_builder(config, None).map_err(ImageError::Config)?;
        let file = File::open(path).map_err(|e| file_err(e.into()))?;
        let (mut nand, mut saved_at, label) = Nand::open_image(&nand_config, BufReader::new(file)).map_err(file_err)?;
        let journal = journal_path(path);
        if journal.exists() {
            let crc = image_crc(path).map_err(|e| file_err(e.into()))?;
            let replay = File::open(&journal)
                .map_err(ftlab_nand::ImageError::from)
                .and_then(|f| nand.apply_journal(BufReader::new(f), crc))
                .map_err(|source| ImageError::File { path: journal.clone(), source })?;
            if let Some(at) = replay.and_then(|r| r.saved_at) {
                saved_at = saved_at.max(at);
            }
        }
        let want = ftl_label(config);
        // An image of a device built by `Device::new` names no FTL: not checked.
        if !label.is_empty() && label != want {
            return Err(ImageError::Ftl { path: path.to_path_buf(), image: label, config: want });
        }
        let mut flash = Flash::new(nand);
        config.device.configure_flash(&mut flash).map_err(ImageError::Config)?;
        let (ftl, recovered) = {
            let mut io = flash.io(saved_at);
            let ftl = builder.recover(&mut io).map_err(|source| ImageError::Recover {
                path: path.to_path_buf(),
                ftl: config.ftl.kind.clone(),
                source,
            })?;
            (ftl, io.last_finish())
        };
        let mut device = Device::new(flash, ftl, Some(builder));
        device.clock = saved_at.0.max(recovered.0);
        device.label = want;
        Ok(device)
    }

    /// Saves the device to an image at `path`, as a clean power-off: flushes
    /// the FTL at the clock (a write-back buffer is written to flash), moves
    /// the clock to when the flash is idle, and writes the medium's durable
    /// state to `PATH.tmp`, synced, then renamed over `path`, so a crash in
    /// the middle never leaves half an image. The device keeps running
    /// afterwards. Commands submitted and not yet collected keep their
    /// completions; their flash work is done by the time saved.
    pub fn save_image(&mut self, path: &Path) -> Result<(), ImageError> {
        let device_err = |source| ImageError::Device { path: path.to_path_buf(), source };
        if self.off_since.is_some() {
            return Err(device_err(DeviceError::PoweredOff { command: "save image" }));
        }
        let flushed = self.flush(self.clock).map_err(device_err)?;
        self.clock = self.clock.max(flushed).max(self.idle_time().0);
        self.write_image(path)?;
        // Everything is in the image now: a journal beside it is stale.
        match std::fs::remove_file(journal_path(path)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(ImageError::File { path: journal_path(path), source: e.into() })
            }
            _ => Ok(()),
        }
    }

    /// When the flash is idle: the clock, or the end of the last flash
    /// operation issued, whichever is later.
    fn idle_time(&self) -> SimTime {
        let nand = self.flash.nand();
        let idle = (0..nand.geometry().dies()).map(|d| nand.die_free_at(DieId(d)).0).max().unwrap_or(0);
        SimTime(self.clock.max(idle))
    }

    /// Writes the medium as it is (operations issued so far count as
    /// finished) to the image at `path`, whole or not at all; returns its
    /// checksum and size.
    fn write_image(&self, path: &Path) -> Result<(u32, u64), ImageError> {
        let mut tail = (0u32, 0u64);
        write_whole(path, |w| {
            let mut t = Tail { w, last: [0; 4], bytes: 0 };
            self.flash.nand().save_image(&mut t, self.idle_time(), &self.label)?;
            tail = (u32::from_le_bytes(t.last), t.bytes);
            Ok(())
        })
        .map_err(|e| ImageError::File { path: path.to_path_buf(), source: e.into() })?;
        Ok(tail)
    }

    /// Keeps the image at `path` current from now on: writes the medium as
    /// it is to the image (not flushing the FTL: what a write-back buffer
    /// holds is not in it, as after a power cut), starts an empty journal
    /// beside it (`PATH.journal`), and returns the journal, which each
    /// [`ImageJournal::sync`] brings up to the medium. Opened with
    /// [`Device::open_image`], the image and its journal give the medium as
    /// of the last sync.
    pub fn start_journal(&self, path: &Path) -> Result<ImageJournal, ImageError> {
        let (crc, image_bytes) = self.write_image(path)?;
        let journal = journal_path(path);
        let file_err = |source: std::io::Error| ImageError::File { path: journal.clone(), source: source.into() };
        write_whole(&journal, |w| write_journal_header(w, crc)).map_err(file_err)?;
        let file = OpenOptions::new().append(true).open(&journal).map_err(file_err)?;
        Ok(ImageJournal {
            image: path.to_path_buf(),
            file,
            cursor: self.flash.nand().journal_cursor(),
            journal_bytes: JOURNAL_HEADER_BYTES,
            image_bytes,
            syncs: 0,
            compactions: 0,
        })
    }
}
