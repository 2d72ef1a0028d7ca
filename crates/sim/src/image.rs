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
//! `PATH.tmp`, is synced, then renamed over `PATH`.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use thiserror::Error;

use ftlab_ftl::{Flash, FtlError};
use ftlab_nand::{DieId, Nand, SimTime};

use crate::device::{Device, DeviceError};
use crate::{RunConfig, SimError};

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

/// What an image records of the FTL: its kind and keys (with
/// `device.over_provisioning`), as one line of TOML.
pub(crate) fn ftl_label(config: &RunConfig) -> String {
    let mut table = config.ftl.params.clone();
    table.insert("kind".into(), toml::Value::String(config.ftl.kind.clone()));
    if let Some(op) = config.device.over_provisioning {
        table.insert("over_provisioning".into(), toml::Value::Float(op));
    }
    toml::Value::Table(table).to_string()
}

/// `PATH.tmp`, beside `path`.
fn temp_path(path: &Path) -> PathBuf {
    let mut tmp = path.to_path_buf();
    tmp.as_mut_os_string().push(".tmp");
    tmp
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
        let builder = crate::ftl_builder(config, None).map_err(ImageError::Config)?;
        let file = File::open(path).map_err(|e| file_err(e.into()))?;
        let (nand, saved_at, label) = Nand::open_image(&nand_config, BufReader::new(file)).map_err(file_err)?;
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
        let nand = self.flash.nand();
        let idle = (0..nand.geometry().dies()).map(|d| nand.die_free_at(DieId(d)).0).max().unwrap_or(0);
        self.clock = self.clock.max(flushed).max(idle);
        let tmp = temp_path(path);
        let file_err = |source: std::io::Error| ImageError::File { path: path.to_path_buf(), source: source.into() };
        let written = (|| -> std::io::Result<()> {
            let file = File::create(&tmp)?;
            let mut w = BufWriter::new(file);
            self.flash.nand().save_image(&mut w, SimTime(self.clock), &self.label)?;
            w.flush()?;
            w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
            std::fs::rename(&tmp, path)
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(file_err(e));
        }
        Ok(())
    }
}
