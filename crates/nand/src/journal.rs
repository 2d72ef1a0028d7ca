//! Image journals: a device image kept current between full saves.
//!
//! A full image ([`super::image`]) is written whole; rewriting it at every
//! flush would cost the whole medium each time. A journal sits beside an image
//! and holds what changed on the medium since: each record is every block
//! whose state moved since the record before (its write pointer, erase count,
//! health, torn flags, wear parameters, and the pages programmed since, or all
//! of its pages if it was erased, torn or rolled back), the torn pages and the
//! sequence counter. Opening the image then applying its journal gives the
//! medium as of the journal's last record, a state a power cut could have
//! left: the operations issued by then count as finished.
//!
//! A journal names its base image by the image's checksum: a journal found
//! beside another image (the image was rewritten and the journal not yet
//! replaced) is stale and is not applied. Each record carries its own length
//! and checksum, so a record cut short by a crash in the middle of an append is
//! recognised and ignored with everything after it; the records before it
//! stand.
//!
//! Format (version 1), every integer little-endian:
//!
//! ```text
//! magic      8 bytes  "FTLABJNL"
//! version    u32      1
//! base_crc   u32      the checksum (last four bytes) of the image it follows
//! records    each: len u32, then len bytes of payload, then CRC-32 u32 of the payload
//! payload    saved_at u64 (simulated ns), next_seq u64,
//!            torn: u32 count, then each torn page u32, ascending (the whole set),
//!            blocks: u32 count, then each: block u32, write_ptr u32,
//!            erase_count u32, health u8, flags u8, x_b f32, y_b f32,
//!            from u32 (its pages from `from` to the write pointer follow,
//!            each as in the image; none for a factory-bad or torn-erased block)
//! ```

use std::io::{self, Read, Write};

use super::image::{health_code, health_of, Crc32, ImageError, In, Out, TORN_ERASE, TORN_PAGES};
use super::{Health, Nand};
use crate::geometry::BlockId;
use crate::time::SimTime;

/// The first eight bytes of every journal.
pub const JOURNAL_MAGIC: &[u8; 8] = b"FTLABJNL";
/// The journal format version this build writes and reads.
pub const JOURNAL_VERSION: u32 = 1;
/// Bytes of a journal's header.
pub const JOURNAL_HEADER_BYTES: u64 = 16;

/// What a journal has recorded of one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mark {
    write_ptr: u32,
    erase_count: u32,
    health: u8,
    flags: u8,
    /// The sequence number of the page below the write pointer (0 if none): a
    /// page rolled back by a power cut and programmed again has another.
    last_seq: u64,
}

/// What a journal has recorded of a medium so far: the state its last record
/// (or its base image) left. [`Nand::journal_record`] writes what differs.
#[derive(Debug, Clone)]
pub struct JournalCursor {
    blocks: Vec<Mark>,
    torn: Vec<u32>,
    next_seq: u64,
}

/// What applying a journal did ([`Nand::apply_journal`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct JournalReplay {
    /// Records applied.
    pub records: u64,
    /// The simulated time of the last record applied, if any.
    pub saved_at: Option<SimTime>,
    /// Bytes at the end that were not a whole record (a crash while appending):
    /// ignored.
    pub ignored_bytes: u64,
}

impl Nand {
    fn mark(&self, block: usize) -> Mark {
        let b = &self.blocks[block];
        let readable = b.health != Health::FactoryBad && !b.torn_erase && b.write_ptr > 0;
        let last_seq = if readable {
            let page = self.layout.ppa(BlockId(block as u32), b.write_ptr - 1).0;
            self.oob.seqkind(page, b.seq_base) >> 8
        } else {
            0
        };
        Mark {
            write_ptr: b.write_ptr,
            erase_count: b.erase_count,
            health: health_code(b.health),
            flags: (u8::from(b.torn_erase) * TORN_ERASE) | (u8::from(b.has_torn_pages) * TORN_PAGES),
            last_seq,
        }
    }

    fn torn_sorted(&self) -> Vec<u32> {
        let mut torn: Vec<u32> = self.torn.iter().copied().collect();
        torn.sort_unstable();
        torn
    }

    /// The medium as it is now, as a journal's starting point: right after
    /// saving it as an image, or opening it from one (and its journal).
    pub fn journal_cursor(&self) -> JournalCursor {
        JournalCursor {
            blocks: (0..self.blocks.len()).map(|i| self.mark(i)).collect(),
            torn: self.torn_sorted(),
            next_seq: self.next_seq,
        }
    }

    /// Writes one journal record to `w` with everything that changed since
    /// `cursor` (length, payload, checksum), stamped `saved_at`, and moves the
    /// cursor to now. Writes nothing and returns 0 if nothing changed; else
    /// the bytes written. Operations issued so far count as finished.
    pub fn journal_record(&self, cursor: &mut JournalCursor, saved_at: SimTime, w: impl Write) -> io::Result<u64> {
        let mut changed = Vec::new();
        for (i, then) in cursor.blocks.iter().enumerate() {
            let now = self.mark(i);
            if now == *then {
                continue;
            }
            // Only pages added since, if nothing below them moved: same erase,
            // same flags, the page the journal saw last still the same program.
            let grown = now.erase_count == then.erase_count
                && now.flags == then.flags
                && now.write_ptr >= then.write_ptr
                && (then.write_ptr == 0 || self.journaled_seq(i, then.write_ptr - 1) == Some(then.last_seq));
            changed.push((i, now, if grown { then.write_ptr } else { 0 }));
        }
        let torn = self.torn_sorted();
        if changed.is_empty() && torn == cursor.torn && self.next_seq == cursor.next_seq {
            return Ok(0);
        }
        let mut out = Out { w: Vec::new(), crc: Crc32::new() };
        out.u64(saved_at.0)?;
        out.u64(self.next_seq)?;
        out.u32(torn.len() as u32)?;
        for &p in &torn {
            out.u32(p)?;
        }
        out.u32(changed.len() as u32)?;
        for &(i, now, from) in &changed {
            let b = &self.blocks[i];
            out.u32(i as u32)?;
            out.u32(now.write_ptr)?;
            out.u32(now.erase_count)?;
            out.u8(now.health)?;
            out.u8(now.flags)?;
            let (x, y) = self.wear.params(BlockId(i as u32));
            out.bytes(&x.to_le_bytes())?;
            out.bytes(&y.to_le_bytes())?;
            out.u32(from)?;
            if b.health == Health::FactoryBad || b.torn_erase {
                continue;
            }
            let first = self.layout.ppa(BlockId(i as u32), 0).0;
            for page in first + from..first + b.write_ptr {
                self.save_page(&mut out, page, b.seq_base)?;
            }
        }
        let payload = out.w;
        let crc = out.crc.value();
        let mut w = w;
        w.write_all(&(payload.len() as u32).to_le_bytes())?;
        w.write_all(&payload)?;
        w.write_all(&crc.to_le_bytes())?;
        for &(i, now, _) in &changed {
            cursor.blocks[i] = now;
        }
        cursor.torn = torn;
        cursor.next_seq = self.next_seq;
        Ok(payload.len() as u64 + 8)
    }

    /// The sequence number of page `index` of `block`, if it is readable.
    fn journaled_seq(&self, block: usize, index: u32) -> Option<u64> {
        let b = &self.blocks[block];
        (b.health != Health::FactoryBad && !b.torn_erase && index < b.write_ptr)
            .then(|| self.oob.seqkind(self.layout.ppa(BlockId(block as u32), index).0, b.seq_base) >> 8)
    }

    /// Applies the journal read from `r` to this medium, opened from the image
    /// whose checksum is `base_crc`. Returns `Ok(None)` if the journal follows
    /// another image (stale: nothing applied), else what was applied. A
    /// record cut short at the end is ignored; a whole record that does not fit
    /// this medium is [`ImageError::Corrupt`].
    pub fn apply_journal(&mut self, mut r: impl Read, base_crc: u32) -> Result<Option<JournalReplay>, ImageError> {
        let mut header = [0u8; JOURNAL_HEADER_BYTES as usize];
        match r.read_exact(&mut header) {
            Ok(()) => {}
            // Cut short while being created: it holds nothing yet.
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(ImageError::Io(e)),
        }
        if &header[..8] != JOURNAL_MAGIC {
            return Err(ImageError::Corrupt("its journal does not start with `FTLABJNL`".into()));
        }
        let word = |at: usize| u32::from_le_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]]);
        if word(8) != JOURNAL_VERSION {
            return Err(ImageError::Corrupt(format!(
                "its journal has format version {}, this ftlab reads {JOURNAL_VERSION}",
                word(8)
            )));
        }
        if word(12) != base_crc {
            return Ok(None);
        }
        let mut replay = JournalReplay::default();
        let mut rest = Vec::new();
        r.read_to_end(&mut rest)?;
        let mut at = 0usize;
        while at < rest.len() {
            let Some(record) = whole_record(&rest[at..]) else {
                replay.ignored_bytes = (rest.len() - at) as u64;
                break;
            };
            let saved_at = self.apply_record(record)?;
            replay.records += 1;
            replay.saved_at = Some(saved_at);
            at += record.len() + 8;
        }
        Ok(Some(replay))
    }

    /// Applies one record's payload; returns its time.
    fn apply_record(&mut self, payload: &[u8]) -> Result<SimTime, ImageError> {
        let g = self.geometry;
        let mut inp = In { r: payload, crc: Crc32::new(), at: 0, part: "journal record" };
        let saved_at = SimTime(inp.u64()?);
        if saved_at > SimTime::LATEST {
            return Err(ImageError::Corrupt(format!("a journal record at {} ns, past the latest time", saved_at.0)));
        }
        let next_seq = inp.u64()?;
        let torn = inp.u32()?;
        if torn > g.total_pages() {
            return Err(ImageError::Corrupt(format!("a journal record with {torn} torn pages")));
        }
        let mut set = std::collections::HashSet::new();
        for _ in 0..torn {
            let p = inp.u32()?;
            if p >= g.total_pages() {
                return Err(ImageError::Corrupt(format!("journal: torn page {p} beyond the device")));
            }
            set.insert(p);
        }
        self.torn = set;
        let count = inp.u32()?;
        for _ in 0..count {
            let block = inp.u32()?;
            if block >= g.total_blocks() {
                return Err(ImageError::Corrupt(format!("journal: block {block} beyond the device")));
            }
            let i = block as usize;
            let write_ptr = inp.u32()?;
            let erase_count = inp.u32()?;
            let health = health_of(inp.u8()?, block)?;
            let flags = inp.u8()?;
            let mut xy = [0u8; 8];
            inp.bytes(&mut xy)?;
            let from = inp.u32()?;
            let had = self.blocks[i].write_ptr;
            if write_ptr > g.pages_per_block
                || from > write_ptr
                || from > had
                || flags & !(TORN_ERASE | TORN_PAGES) != 0
            {
                return Err(ImageError::Corrupt(format!(
                    "journal: block {block}: write pointer {write_ptr}, pages from {from} (it had {had}) or flags \
                     {flags:#x} impossible"
                )));
            }
            let x = f32::from_le_bytes([xy[0], xy[1], xy[2], xy[3]]);
            let y = f32::from_le_bytes([xy[4], xy[5], xy[6], xy[7]]);
            self.wear.set_params(BlockId(block), x, y);
            let b = &mut self.blocks[i];
            b.write_ptr = write_ptr;
            b.erase_count = erase_count;
            b.health = health;
            b.torn_erase = flags & TORN_ERASE != 0;
            b.has_torn_pages = flags & TORN_PAGES != 0;
            if health == Health::FactoryBad || b.torn_erase {
                continue;
            }
            let first = self.layout.ppa(BlockId(block), 0).0;
            for page in first + from..first + write_ptr {
                let seq = self.open_page(&mut inp, page, i, page == first, super::image::VERSION)?;
                if seq >= next_seq {
                    return Err(ImageError::Corrupt(format!(
                        "journal: page {page} has sequence number {seq}, not below the next one {next_seq}"
                    )));
                }
            }
        }
        if inp.at != payload.len() as u64 {
            return Err(ImageError::Corrupt("journal: a record longer than what it holds".into()));
        }
        self.next_seq = next_seq;
        self.timelines.reset(saved_at);
        Ok(saved_at)
    }
}

/// The payload of the record at the start of `bytes`, if it is whole and its
/// checksum matches.
fn whole_record(bytes: &[u8]) -> Option<&[u8]> {
    let len = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
    let payload = bytes.get(4..4usize.checked_add(len)?)?;
    let stored = u32::from_le_bytes(bytes.get(4 + len..8 + len)?.try_into().ok()?);
    let mut crc = Crc32::new();
    crc.update(payload);
    (crc.value() == stored).then_some(payload)
}

/// Writes a journal's header: it follows the image whose checksum is `base_crc`.
pub fn write_journal_header(mut w: impl Write, base_crc: u32) -> io::Result<()> {
    w.write_all(JOURNAL_MAGIC)?;
    w.write_all(&JOURNAL_VERSION.to_le_bytes())?;
    w.write_all(&base_crc.to_le_bytes())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::geometry::{Geometry, Ppa};
    use crate::store::{Payload, StoreKind};
    use crate::NandConfig;

    fn config() -> NandConfig {
        NandConfig {
            geometry: Geometry {
                channels: 1,
                ways_per_channel: 1,
                dies_per_way: 1,
                planes_per_die: 2,
                blocks_per_plane: 4,
                pages_per_block: 4,
                page_size: 512,
                oob_size: 16,
            },
            timing: crate::tests::TIMING,
            bad_block_rate: 0.0,
            wear: crate::WearConfig::default(),
            store: StoreKind::Bytes,
            seed: 5,
            faults: Default::default(),
            commands: Default::default(),
        }
    }

    fn page(nand: &Nand, byte: u8) -> Payload {
        Payload::Bytes(vec![byte; nand.geometry().page_size as usize].into())
    }

    /// Saves `nand` as an image; returns the bytes and its checksum.
    fn image(nand: &Nand) -> (Vec<u8>, u32) {
        let mut bytes = Vec::new();
        nand.save_image(&mut bytes, SimTime(0), "t").expect("save");
        let crc = u32::from_le_bytes(bytes[bytes.len() - 4..].try_into().expect("4 bytes"));
        (bytes, crc)
    }

    fn reopen(bytes: &[u8], journal: &[u8], crc: u32) -> (Nand, Option<JournalReplay>) {
        let (mut n, _, _) = Nand::open_image(&config(), bytes).expect("open");
        let replay = n.apply_journal(journal, crc).expect("apply");
        (n, replay)
    }

    fn contents(n: &Nand) -> Vec<Option<(Vec<u8>, u32)>> {
        (0..n.geometry().total_pages())
            .map(|p| {
                n.read_untimed(Ppa(p)).ok().map(|(d, o)| match d {
                    Payload::Bytes(b) => (b.to_vec(), o.lpn),
                    Payload::Token(_) => (Vec::new(), o.lpn),
                })
            })
            .collect()
    }

    #[test]
    fn an_image_and_its_journal_give_the_medium_of_the_last_record() {
        let mut nand = Nand::new(&config()).expect("nand");
        nand.set_power_cuts(true);
        let t = SimTime(0);
        for i in 0..3u32 {
            nand.program(Ppa(i), i, crate::PageKind::Data, page(&nand, i as u8 + 1), t).expect("program");
        }
        let (base, crc) = image(&nand);
        let mut cursor = nand.journal_cursor();
        let mut journal = Vec::new();
        write_journal_header(&mut journal, crc).expect("header");
        // Nothing changed: no record.
        assert_eq!(nand.journal_record(&mut cursor, t, &mut journal).expect("record"), 0);
        let ppb = nand.geometry().pages_per_block;
        nand.program(Ppa(3), 3, crate::PageKind::Data, page(&nand, 9), t).expect("program");
        nand.program(Ppa(ppb), 40, crate::PageKind::Data, page(&nand, 7), t).expect("program");
        assert!(nand.journal_record(&mut cursor, SimTime(5), &mut journal).expect("record") > 0);
        let after_first = journal.len();
        // Block 0 erased and rewritten with fewer pages: the whole block again.
        let far = SimTime(1_000_000_000);
        nand.erase(BlockId(0), far).expect("erase");
        nand.program(Ppa(0), 77, crate::PageKind::Data, page(&nand, 0), far).expect("program");
        assert!(nand.journal_record(&mut cursor, SimTime(9), &mut journal).expect("record") > 0);
        let (reopened, replay) = reopen(&base, &journal, crc);
        let replay = replay.expect("applied");
        assert_eq!((replay.records, replay.saved_at, replay.ignored_bytes), (2, Some(SimTime(9)), 0));
        assert_eq!(contents(&reopened), contents(&nand));
        assert_eq!(reopened.erase_count(BlockId(0)), 1);
        // A crash in the middle of the second record: the first stands.
        let cut = &journal[..journal.len() - 3];
        let (partial, replay) = reopen(&base, cut, crc);
        let replay = replay.expect("applied");
        assert_eq!((replay.records, replay.ignored_bytes), (1, (journal.len() - 3 - after_first) as u64));
        assert_eq!(partial.read_untimed(Ppa(3)).expect("page").1.lpn, 3);
        assert_eq!(partial.read_untimed(Ppa(0)).expect("page").1.lpn, 0);
        // A journal of another image is not applied.
        let (stale, replay) = reopen(&base, &journal, crc ^ 1);
        assert_eq!(replay, None);
        assert!(stale.read_untimed(Ppa(3)).is_err());
    }

    #[test]
    fn a_page_rolled_back_by_a_cut_and_programmed_again_is_journaled() {
        let mut nand = Nand::new(&config()).expect("nand");
        nand.set_power_cuts(true);
        nand.program(Ppa(0), 1, crate::PageKind::Data, page(&nand, 1), SimTime(0)).expect("program");
        let late = SimTime(10_000_000);
        nand.program(Ppa(1), 2, crate::PageKind::Data, page(&nand, 2), late).expect("program");
        let (base, crc) = image(&nand);
        let mut cursor = nand.journal_cursor();
        let mut journal = Vec::new();
        write_journal_header(&mut journal, crc).expect("header");
        // The cut undoes page 1 (not started by then); page 1 is programmed again.
        nand.power_cut(SimTime(5_000_000));
        nand.program(Ppa(1), 3, crate::PageKind::Data, page(&nand, 3), late).expect("program");
        assert!(nand.journal_record(&mut cursor, late, &mut journal).expect("record") > 0);
        let (reopened, _) = reopen(&base, &journal, crc);
        let (data, oob) = reopened.read_untimed(Ppa(1)).expect("page");
        assert_eq!(oob.lpn, 3);
        assert_eq!(data, page(&nand, 3));
        assert_eq!(contents(&reopened), contents(&nand));
    }

    #[test]
    fn a_journal_that_is_not_one_is_refused() {
        let nand = Nand::new(&config()).expect("nand");
        let (base, crc) = image(&nand);
        let (mut n, _, _) = Nand::open_image(&config(), &base[..]).expect("open");
        assert!(matches!(n.apply_journal(&b"NOTAJNL!xxxxxxxx"[..], crc), Err(ImageError::Corrupt(_))));
        // Empty (created, header not yet written): nothing to apply.
        assert_eq!(n.apply_journal(&b""[..], crc).expect("empty"), None);
    }
}
