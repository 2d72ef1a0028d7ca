//! Device images: the medium's durable state written to a file and read back.
//!
//! An image holds what survives a clean power-off of an idle medium: every
//! block's write pointer, erase count, health (factory-bad, grown bad) and
//! torn state, the wear parameters of Eq. 27, the pages torn by earlier power
//! cuts, the device-wide program sequence counter, and for every programmed
//! page its OOB and its contents. Erased pages take no room, so an image grows
//! with the pages programmed, not with the device: a 1 GiB byte-store device
//! with 10 MiB programmed gives an image of about 10 MiB.
//!
//! What it does not hold: the in-flight log (saving is a clean power-off: the
//! operations issued so far have all finished), the timelines (every die and
//! channel is idle at the time the image was saved at), and the fault
//! injector's countdowns and draws (they start again from the configuration
//! the image is opened with). Anything an FTL keeps in RAM is not the medium's:
//! the FTL rebuilds it from the medium with its own recovery, as after a power
//! cut.
//!
//! Format (version 3), every integer little-endian:
//!
//! ```text
//! magic      8 bytes  "FTLABIMG"
//! version    u32      3
//! geometry   8 x u32  channels, ways_per_channel, dies_per_way, planes_per_die,
//!                     blocks_per_plane, pages_per_block, page_size, oob_size
//! store      u8       0 tokens, 1 bytes
//! label      u32 length, then that many bytes of UTF-8: what the caller saved
//!                     with the medium (the device names its FTL there)
//! saved_at   u64      simulated time of the save, ns
//! next_seq   u64      the sequence number the next program takes
//! blocks     per block: write_ptr u32, erase_count u32, health u8,
//!                     flags u8 (1 torn erase, 2 torn pages), x_b f32, y_b f32
//! torn       u32 count, then each torn page u32, ascending
//! pages      per block not factory-bad and not torn by an erase, per page
//!            below its write pointer: lpn u32, seq << 8 | tag << 2 | kind
//!            u64 (the OOB, see [`crate::oob`]), then
//!            tokens: u64; bytes: u8 0 (reads as zeros) or 1 and page_size bytes;
//!            then the packed slots ([`super::packed`]): u8 0 (a page of one
//!            record) or the slot count n, unit_bytes u32, n slot lpns u32
//!            (the first is the page's), and in a token store n slot tokens u64
//! crc        u32      CRC-32 (IEEE) of everything before it
//! ```
//!
//! Version 2 is version 3 without the packed slots (no page of it is packed):
//! it still opens.
//!
//! Version 1 had the same layout, but the FTLs of its time kept their flags in
//! high bits of the OOB's logical page where version 2's keep them in the tag
//! ([`crate::Oob::tag`]): a block-mapped FTL would misread a version 1 image,
//! so it is refused ([`ImageError::Version`]) rather than opened.

use std::io::{self, Read, Write};

use super::{BlockState, Health, Nand, NandConfig, NandConfigError};
use crate::geometry::{BlockId, Geometry};
use crate::store::{AnyStore, PageStore, Payload, StoreKind};
use crate::time::SimTime;

/// The first eight bytes of every image.
pub const MAGIC: &[u8; 8] = b"FTLABIMG";
/// The format version this build writes and reads.
pub const VERSION: u32 = 3;
/// The oldest format version this build reads.
pub const OLDEST_VERSION: u32 = 2;
/// The longest label an image keeps, bytes.
pub const MAX_LABEL: usize = 1 << 16;

/// Why an image could not be written or read. The messages say what is wrong
/// with the image and what to do; the caller adds the file's name.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImageError {
    /// The configuration the image is opened with is not a valid medium.
    #[error(transparent)]
    Config(#[from] NandConfigError),
    /// Reading or writing the file failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The file does not start with [`MAGIC`].
    #[error("not an ftlab device image (it does not start with `FTLABIMG`): give an image that ftlab saved, or another path")]
    BadMagic,
    /// An image of a format version this build does not read.
    #[error("image format version {found} is not supported (this ftlab reads versions {OLDEST_VERSION} to {VERSION}): open it with the ftlab that saved it, or delete it to start formatted")]
    Version { found: u32 },
    /// The file ends before the image does.
    #[error("the image is truncated (it ends after {at} bytes, inside the {part}): it was cut short while being written or copied; restore a complete copy or delete it to start formatted")]
    Truncated { at: u64, part: &'static str },
    /// The file's contents are inconsistent (checksum, impossible values).
    #[error("the image is corrupt ({0}): restore a good copy or delete it to start formatted")]
    Corrupt(String),
    /// The image was saved from a device of another shape or store.
    #[error("the image was saved from a device with {field} = {image}, but the device configured has {field} = {config}: open it with the chip and geometry it was saved with, or give another image path")]
    Mismatch { field: &'static str, image: String, config: String },
}

/// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Crc32(u32);

const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

impl Crc32 {
    pub(crate) fn new() -> Self {
        Crc32(!0)
    }
    pub(crate) fn update(&mut self, bytes: &[u8]) {
        let mut c = self.0;
        for &b in bytes {
            c = CRC_TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8);
        }
        self.0 = c;
    }
    pub(crate) fn value(self) -> u32 {
        !self.0
    }
}

/// CRC-32 (IEEE) of `bytes`, as an image's checksum (tests build images of
/// older versions with it).
#[cfg(test)]
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    let mut c = Crc32::new();
    c.update(bytes);
    c.value()
}

/// A writer that checksums what it writes.
pub(crate) struct Out<W> {
    pub(crate) w: W,
    pub(crate) crc: Crc32,
}

impl<W: Write> Out<W> {
    pub(crate) fn bytes(&mut self, b: &[u8]) -> io::Result<()> {
        self.crc.update(b);
        self.w.write_all(b)
    }
    pub(crate) fn u8(&mut self, v: u8) -> io::Result<()> {
        self.bytes(&[v])
    }
    pub(crate) fn u32(&mut self, v: u32) -> io::Result<()> {
        self.bytes(&v.to_le_bytes())
    }
    pub(crate) fn u64(&mut self, v: u64) -> io::Result<()> {
        self.bytes(&v.to_le_bytes())
    }
}

/// A reader that checksums what it reads and names where it ran out.
pub(crate) struct In<R> {
    pub(crate) r: R,
    pub(crate) crc: Crc32,
    pub(crate) at: u64,
    pub(crate) part: &'static str,
}

impl<R: Read> In<R> {
    pub(crate) fn bytes(&mut self, b: &mut [u8]) -> Result<(), ImageError> {
        match self.r.read_exact(b) {
            Ok(()) => {
                self.crc.update(b);
                self.at += b.len() as u64;
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                Err(ImageError::Truncated { at: self.at, part: self.part })
            }
            Err(e) => Err(ImageError::Io(e)),
        }
    }
    pub(crate) fn u8(&mut self) -> Result<u8, ImageError> {
        let mut b = [0; 1];
        self.bytes(&mut b)?;
        Ok(b[0])
    }
    pub(crate) fn u32(&mut self) -> Result<u32, ImageError> {
        let mut b = [0; 4];
        self.bytes(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }
    pub(crate) fn u64(&mut self) -> Result<u64, ImageError> {
        let mut b = [0; 8];
        self.bytes(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }
}

fn geometry_fields(g: &Geometry) -> [(&'static str, u32); 8] {
    [
        ("channels", g.channels),
        ("ways_per_channel", g.ways_per_channel),
        ("dies_per_way", g.dies_per_way),
        ("planes_per_die", g.planes_per_die),
        ("blocks_per_plane", g.blocks_per_plane),
        ("pages_per_block", g.pages_per_block),
        ("page_size", g.page_size),
        ("oob_size", g.oob_size),
    ]
}

pub(crate) fn health_code(h: Health) -> u8 {
    match h {
        Health::Good => 0,
        Health::FactoryBad => 1,
        Health::ProgramFailed => 2,
        Health::EraseFailed => 3,
    }
}

pub(crate) fn health_of(code: u8, block: u32) -> Result<Health, ImageError> {
    Ok(match code {
        0 => Health::Good,
        1 => Health::FactoryBad,
        2 => Health::ProgramFailed,
        3 => Health::EraseFailed,
        _ => return Err(ImageError::Corrupt(format!("block {block} has an unknown health code {code}"))),
    })
}

pub(crate) const TORN_ERASE: u8 = 1;
pub(crate) const TORN_PAGES: u8 = 2;

impl Nand {
    /// Writes the medium's durable state to `w` as an image, stamped with the
    /// simulated time `saved_at` (see the module documentation). Operations
    /// issued so far count as finished: save an idle medium whose writes the
    /// FTL has made durable.
    ///
    /// `label` (at most [`MAX_LABEL`] bytes) is kept in the image and handed
    /// back by [`Nand::open_image`]: the device records there which FTL the
    /// medium is formatted for.
    pub fn save_image(&self, w: impl Write, saved_at: SimTime, label: &str) -> io::Result<()> {
        if label.len() > MAX_LABEL {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("an image label takes at most {MAX_LABEL} bytes, got {}", label.len()),
            ));
        }
        let mut out = Out { w, crc: Crc32::new() };
        out.bytes(MAGIC)?;
        out.u32(VERSION)?;
        for (_, v) in geometry_fields(&self.geometry) {
            out.u32(v)?;
        }
        out.u8(match self.store_kind() {
            StoreKind::Token => 0,
            StoreKind::Bytes => 1,
        })?;
        out.u32(label.len() as u32)?;
        out.bytes(label.as_bytes())?;
        out.u64(saved_at.0)?;
        out.u64(self.next_seq)?;
        for (i, b) in self.blocks.iter().enumerate() {
            out.u32(b.write_ptr)?;
            out.u32(b.erase_count)?;
            out.u8(health_code(b.health))?;
            out.u8((u8::from(b.torn_erase) * TORN_ERASE) | (u8::from(b.has_torn_pages) * TORN_PAGES))?;
            let (x, y) = self.wear.params(BlockId(i as u32));
            out.bytes(&x.to_le_bytes())?;
            out.bytes(&y.to_le_bytes())?;
        }
        let mut torn: Vec<u32> = self.torn.iter().copied().collect();
        torn.sort_unstable();
        out.u32(torn.len() as u32)?;
        for p in torn {
            out.u32(p)?;
        }
        for (i, b) in self.blocks.iter().enumerate() {
            if b.health == Health::FactoryBad || b.torn_erase {
                continue;
            }
            let first = self.layout.ppa(BlockId(i as u32), 0).0;
            for page in first..first + b.write_ptr {
                self.save_page(&mut out, page, b.seq_base)?;
            }
        }
        let crc = out.crc.value();
        out.w.write_all(&crc.to_le_bytes())?;
        out.w.flush()
    }

    /// The medium `config` describes, in the state of the image read from `r`,
    /// the simulated time the image was saved at and its label. Every die and channel is
    /// idle from then on. The image must have been saved from a medium of
    /// `config`'s geometry and store; anything else, and a truncated or corrupt
    /// image, is an [`ImageError`], never a panic.
    pub fn open_image(config: &NandConfig, r: impl Read) -> Result<(Nand, SimTime, String), ImageError> {
        let mut nand = Nand::new(config)?;
        let mut inp = In { r, crc: Crc32::new(), at: 0, part: "header" };
        let mut magic = [0u8; 8];
        inp.bytes(&mut magic).map_err(|e| match e {
            ImageError::Truncated { .. } => ImageError::BadMagic,
            e => e,
        })?;
        if &magic != MAGIC {
            return Err(ImageError::BadMagic);
        }
        let version = inp.u32()?;
        if !(OLDEST_VERSION..=VERSION).contains(&version) {
            return Err(ImageError::Version { found: version });
        }
        let g = nand.geometry;
        for (field, want) in geometry_fields(&g) {
            let got = inp.u32()?;
            if got != want {
                return Err(ImageError::Mismatch { field, image: got.to_string(), config: want.to_string() });
            }
        }
        let store = match inp.u8()? {
            0 => StoreKind::Token,
            1 => StoreKind::Bytes,
            c => return Err(ImageError::Corrupt(format!("unknown page store code {c}"))),
        };
        if store != nand.store_kind() {
            let name = |k| if k == StoreKind::Token { "\"token\"" } else { "\"bytes\"" };
            return Err(ImageError::Mismatch {
                field: "store",
                image: name(store).into(),
                config: name(nand.store_kind()).into(),
            });
        }
        let len = inp.u32()? as usize;
        if len > MAX_LABEL {
            return Err(ImageError::Corrupt(format!("a label of {len} bytes, more than {MAX_LABEL}")));
        }
        let mut label = vec![0u8; len];
        inp.bytes(&mut label)?;
        let label = String::from_utf8(label).map_err(|_| ImageError::Corrupt("its label is not UTF-8".into()))?;
        let saved_at = SimTime(inp.u64()?);
        if saved_at > SimTime::LATEST {
            return Err(ImageError::Corrupt(format!("saved at {} ns, past the latest simulated time", saved_at.0)));
        }
        nand.next_seq = inp.u64()?;
        inp.part = "block table";
        let mut max_seq = 0;
        for i in 0..nand.blocks.len() {
            let write_ptr = inp.u32()?;
            let erase_count = inp.u32()?;
            let health = health_of(inp.u8()?, i as u32)?;
            let flags = inp.u8()?;
            let mut xy = [0u8; 8];
            inp.bytes(&mut xy)?;
            if write_ptr > g.pages_per_block || flags & !(TORN_ERASE | TORN_PAGES) != 0 {
                return Err(ImageError::Corrupt(format!(
                    "block {i}: write pointer {write_ptr} (of {} pages) or flags {flags:#x} impossible",
                    g.pages_per_block
                )));
            }
            let x = f32::from_le_bytes([xy[0], xy[1], xy[2], xy[3]]);
            let y = f32::from_le_bytes([xy[4], xy[5], xy[6], xy[7]]);
            nand.wear.set_params(BlockId(i as u32), x, y);
            nand.blocks[i] = BlockState {
                write_ptr,
                erase_count,
                health,
                torn_erase: flags & TORN_ERASE != 0,
                has_torn_pages: flags & TORN_PAGES != 0,
                erases_in_flight: 0,
                // Set from the block's first page below.
                seq_base: 0,
            };
        }
        inp.part = "torn page list";
        let torn = inp.u32()?;
        if torn > g.total_pages() {
            return Err(ImageError::Corrupt(format!("{torn} torn pages on a device of {} pages", g.total_pages())));
        }
        for _ in 0..torn {
            let p = inp.u32()?;
            if p >= g.total_pages() {
                return Err(ImageError::Corrupt(format!(
                    "torn page {p} is beyond the device's {} pages",
                    g.total_pages()
                )));
            }
            nand.torn.insert(p);
        }
        inp.part = "pages";
        for i in 0..nand.blocks.len() {
            let b = nand.blocks[i];
            if b.health == Health::FactoryBad || b.torn_erase {
                continue;
            }
            let first = nand.layout.ppa(BlockId(i as u32), 0).0;
            for page in first..first + b.write_ptr {
                let seq = nand.open_page(&mut inp, page, i, page == first, version)?;
                max_seq = max_seq.max(seq);
            }
        }
        let crc = inp.crc.value();
        inp.part = "checksum";
        let mut stored = [0u8; 4];
        inp.bytes(&mut stored)?;
        if u32::from_le_bytes(stored) != crc {
            return Err(ImageError::Corrupt("its checksum does not match its contents".into()));
        }
        let mut rest = [0u8; 1];
        match inp.r.read(&mut rest) {
            Ok(0) => {}
            Ok(_) => return Err(ImageError::Corrupt("bytes follow its checksum".into())),
            Err(e) => return Err(ImageError::Io(e)),
        }
        if max_seq >= nand.next_seq {
            return Err(ImageError::Corrupt(format!(
                "a page has sequence number {max_seq}, not below the next one {}",
                nand.next_seq
            )));
        }
        nand.timelines.reset(saved_at);
        Ok((nand, saved_at, label))
    }
}

impl Nand {
    /// Writes programmed page `page` of a block whose sequence base is
    /// `seq_base`: its OOB, its contents and its packed slots.
    pub(crate) fn save_page<W: Write>(&self, out: &mut Out<W>, page: u32, seq_base: u64) -> io::Result<()> {
        let lpn = self.oob.lpn(page);
        out.u32(lpn)?;
        out.u64(self.oob.seqkind(page, seq_base))?;
        match &self.store {
            AnyStore::Token(s) => match s.read(page, lpn) {
                Payload::Token(t) => out.u64(t)?,
                Payload::Bytes(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!(
                            "page {page} of this token store holds bytes (an FTL's metadata), which an image \
                             of a token store cannot keep: save a device that stores bytes"
                        ),
                    ))
                }
            },
            AnyStore::Bytes(s) => match s.get(page) {
                Some(bytes) => {
                    out.u8(1)?;
                    out.bytes(bytes)?;
                }
                None => out.u8(0)?,
            },
        }
        self.save_slots(out, page)
    }

    /// Reads page `page` of block `block` as [`Nand::save_page`] wrote it
    /// (image `version`); `first` says it is the block's first page, which
    /// sets the block's sequence base. Returns the page's sequence number.
    pub(crate) fn open_page<R: Read>(
        &mut self,
        inp: &mut In<R>,
        page: u32,
        block: usize,
        first: bool,
        version: u32,
    ) -> Result<u64, ImageError> {
        let lpn = inp.u32()?;
        let seqkind = inp.u64()?;
        if first {
            self.blocks[block].seq_base = seqkind >> 8;
        }
        self.oob.set(page, self.blocks[block].seq_base, lpn, seqkind);
        let data = match self.store_kind() {
            StoreKind::Token => Some(Payload::Token(inp.u64()?)),
            StoreKind::Bytes => match inp.u8()? {
                0 => None,
                1 => {
                    let mut bytes = vec![0u8; self.geometry.page_size as usize];
                    inp.bytes(&mut bytes)?;
                    Some(Payload::Bytes(bytes.into()))
                }
                c => return Err(ImageError::Corrupt(format!("page {page}: unknown contents code {c}"))),
            },
        };
        match data {
            Some(data) => {
                self.store.write(page, lpn, data).map_err(|e| ImageError::Corrupt(format!("page {page}: {e}")))?
            }
            // Reads as zeros: nothing held (a journal may apply it over bytes held before).
            None => self.store.clear(page),
        }
        if version >= 3 {
            self.open_slots(inp, page, seqkind >> 8)?;
        }
        Ok(seqkind >> 8)
    }

    /// Writes the packed slots of `page` (a page of one record: 0).
    fn save_slots<W: Write>(&self, out: &mut Out<W>, page: u32) -> io::Result<()> {
        let Some(s) = self.slots_at(page) else {
            return out.u8(0);
        };
        out.u8(s.lpns.len() as u8)?;
        out.u32(s.unit)?;
        for &l in s.lpns.iter() {
            out.u32(l)?;
        }
        for p in s.payloads.iter().flat_map(|p| p.iter()) {
            match p {
                Payload::Token(t) => out.u64(*t)?,
                Payload::Bytes(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!(
                            "a slot of page {page} of this token store holds bytes, which an image of a token store \
                             cannot keep: save a device that stores bytes"
                        ),
                    ))
                }
            }
        }
        Ok(())
    }

    /// Reads the packed slots of `page`, programmed with sequence number `seq`.
    fn open_slots<R: Read>(&mut self, inp: &mut In<R>, page: u32, seq: u64) -> Result<(), ImageError> {
        let n = u32::from(inp.u8()?);
        if n == 0 {
            return Ok(());
        }
        let unit = inp.u32()?;
        let max = self.slots_per_page(unit).map_err(|e| ImageError::Corrupt(format!("page {page}: {e}")))?;
        if n > max {
            return Err(ImageError::Corrupt(format!(
                "page {page}: {n} slots of {unit} bytes, more than the {max} a page holds"
            )));
        }
        let lpns: Box<[u32]> = (0..n).map(|_| inp.u32()).collect::<Result<_, _>>()?;
        let payloads = match self.store_kind() {
            StoreKind::Token => Some((0..n).map(|_| inp.u64().map(Payload::Token)).collect::<Result<_, _>>()?),
            StoreKind::Bytes => None,
        };
        self.slots.insert(page, super::packed::Slots { seq, unit, lpns, payloads });
        Ok(())
    }
}
