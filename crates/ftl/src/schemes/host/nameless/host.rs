//! A file-system model over the Nameless-Write device (003 Section 3.4): the
//! host half of the split, as the tests and the experiment drive it.
//!
//! Each file has an inode at one metadata address (its id), written with a
//! virtual write; the inode holds one [`PhysAddr`] per data block, as the file
//! system of Nameless Writes stores physical addresses in its metadata. A data
//! block's tag is its file id and block index ([`tag`]). The model follows the
//! host rules of the [module documentation](super): data is written before
//! the inode that names it; the old version of an overwritten block is freed
//! right after the nameless write of the new one; a file's blocks are freed
//! after its deletion (a tombstone inode) was written; on every migration it
//! sets the block's address, writes the inode, then acknowledges; after a
//! power cut it reads its inodes back, applies the device's replay, and frees
//! the pages no inode names.
//!
//! Page contents are tokens (the medium's default store): an inode's token
//! stands for its bytes, and the model keeps what each token says
//! ([`HostFs::snapshots`]), which is what the bytes of the page would hold.
//! The model also keeps, as a reference for the tests, every token written
//! under each tag and every inode version with its acknowledgement time.
#![allow(clippy::missing_panics_doc)]

use std::collections::{BTreeMap, BTreeSet, HashMap};

use ftlab_nand::{Payload, SimTime};
use rand::Rng;

use super::{Migration, PhysAddr};
use crate::{Flash, Ftl, FtlBuilder, FtlError, Io, Nameless};

/// Data blocks per file at most: the block index takes the low bits of a tag.
pub const MAX_FILE_BLOCKS: u32 = 1 << 10;

/// The tag of block `index` of file `file`.
pub fn tag(file: u32, index: u32) -> u32 {
    file << 10 | index
}

/// One data block of a file: where it is and the token the host last wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    pub addr: PhysAddr,
    pub token: u64,
}

/// A device, its FTL and the clock: one command at a time, each issued when
/// the one before completed (a synchronous file system).
#[allow(missing_debug_implementations)]
pub struct Rig {
    pub flash: Flash,
    pub ftl: Box<dyn Ftl>,
    pub builder: Box<dyn FtlBuilder>,
    pub now: SimTime,
    /// When the last command was issued: a power cut may come from then on,
    /// tearing what that command left in flight.
    pub last_issue: SimTime,
    /// Every completion time, in order (for determinism checks).
    pub completions: Vec<u64>,
}

impl Rig {
    /// A device formatted with `builder` on `flash`.
    pub fn new(mut flash: Flash, builder: Box<dyn FtlBuilder>) -> Result<Self, FtlError> {
        let ftl = builder.format(&mut flash.io(SimTime::ZERO))?;
        Ok(Rig { flash, ftl, builder, now: SimTime::ZERO, last_issue: SimTime::ZERO, completions: Vec::new() })
    }

    /// Runs one command on the device's nameless interface; the clock moves to
    /// its completion. Returns its result and completion.
    pub fn cmd<R>(
        &mut self,
        f: impl FnOnce(&mut dyn Nameless, &mut Io) -> Result<R, FtlError>,
    ) -> (Result<R, FtlError>, SimTime) {
        let mut io = self.flash.io(self.now);
        self.last_issue = self.now;
        let r = match self.ftl.nameless() {
            Some(n) => f(n, &mut io),
            None => Err(FtlError::Unsupported("nameless writes")),
        };
        let done = io.completion().max(self.now);
        self.now = done;
        self.completions.push(done.as_ns());
        (r, done)
    }

    /// The nameless interface (for queries).
    pub fn device(&mut self) -> &mut dyn Nameless {
        self.ftl.nameless().expect("the rig's FTL has the nameless capability")
    }

    /// Cuts power at `t` (not before the last command was issued: a cut
    /// before its completion tears it) and rebuilds the device.
    pub fn cut_and_recover(&mut self, t: SimTime) -> Result<(), FtlError> {
        let t = t.max(self.last_issue);
        self.flash.power_cut(t);
        let mut io = self.flash.io(t);
        self.ftl = self.builder.recover(&mut io)?;
        self.now = io.last_finish().max(t);
        Ok(())
    }
}

/// The file-system model (see the module documentation).
#[derive(Debug, Default)]
pub struct HostFs {
    /// Files by id (= inode address).
    pub files: BTreeMap<u32, Vec<Block>>,
    /// Files whose inode in RAM is newer than on the device.
    dirty: BTreeSet<u32>,
    /// What each inode token says: the file's blocks, `None` for a tombstone.
    pub snapshots: HashMap<u64, Option<Vec<Block>>>,
    /// Reference: every token written under each tag, in order.
    pub written: HashMap<u32, Vec<u64>>,
    /// Reference: every inode version written at each address, with its
    /// acknowledgement (`None`: the write failed or is not known acknowledged).
    pub inode_writes: BTreeMap<u32, Vec<(u64, Option<SimTime>)>>,
    next_token: u64,
    /// Migrations applied; migrations of a version the host had freed since
    /// (garbage collection moved it while its new version was being written);
    /// replays that changed an address; orphan pages freed.
    pub migrations_applied: u64,
    pub migrations_stale: u64,
    pub replays_applied: u64,
    pub orphans_freed: u64,
}

impl HostFs {
    pub fn new() -> Self {
        HostFs { next_token: 1, ..HostFs::default() }
    }

    fn token(&mut self) -> u64 {
        let t = self.next_token;
        self.next_token += 1;
        t
    }

    /// Writes the inode of `file` as it is in RAM (a tombstone if deleted).
    fn write_inode(&mut self, rig: &mut Rig, file: u32) -> Result<(), FtlError> {
        let token = self.token();
        self.snapshots.insert(token, self.files.get(&file).cloned());
        let (r, done) = rig.cmd(|d, io| d.virtual_write(io, file, Payload::Token(token)));
        self.inode_writes.entry(file).or_default().push((token, r.is_ok().then_some(done)));
        match r {
            Ok(()) => {
                self.dirty.remove(&file);
                Ok(())
            }
            Err(e) => {
                self.dirty.insert(file);
                Err(e)
            }
        }
    }

    /// Writes one data block of `file`; returns its block.
    fn write_block(&mut self, rig: &mut Rig, file: u32, index: u32) -> Result<Block, FtlError> {
        let token = self.token();
        let t = tag(file, index);
        self.written.entry(t).or_default().push(token);
        let (r, _) = rig.cmd(|d, io| d.nameless_write(io, t, Payload::Token(token)));
        Ok(Block { addr: r?, token })
    }

    /// Creates file `file` of `blocks` blocks: data, then the inode.
    pub fn create(&mut self, rig: &mut Rig, file: u32, blocks: u32) -> Result<(), FtlError> {
        assert!(!self.files.contains_key(&file) && blocks <= MAX_FILE_BLOCKS);
        let mut v = Vec::new();
        for i in 0..blocks {
            match self.write_block(rig, file, i) {
                Ok(b) => v.push(b),
                Err(e) => {
                    for b in v {
                        rig.cmd(|d, io| d.free(io, b.addr)).0?;
                    }
                    return Err(e);
                }
            }
        }
        self.files.insert(file, v);
        self.write_inode(rig, file)
    }

    /// Overwrites block `index` of `file`: the new data, the old freed, the
    /// inode written.
    pub fn overwrite(&mut self, rig: &mut Rig, file: u32, index: u32) -> Result<(), FtlError> {
        let b = self.write_block(rig, file, index)?;
        let old = std::mem::replace(&mut self.files.get_mut(&file).expect("file exists")[index as usize], b);
        rig.cmd(|d, io| d.free(io, old.addr)).0?;
        self.dirty.insert(file);
        self.write_inode(rig, file)
    }

    /// Deletes `file`: a tombstone inode, then its blocks freed.
    pub fn delete(&mut self, rig: &mut Rig, file: u32) -> Result<(), FtlError> {
        let blocks = self.files.remove(&file).expect("file exists");
        if let Err(e) = self.write_inode(rig, file) {
            self.files.insert(file, blocks);
            self.dirty.remove(&file);
            return Err(e);
        }
        for b in blocks {
            rig.cmd(|d, io| d.free(io, b.addr)).0?;
        }
        Ok(())
    }

    /// Reads block `index` of `file` at the address the inode holds.
    pub fn read(&mut self, rig: &mut Rig, file: u32, index: u32) -> Result<Payload, FtlError> {
        let addr = self.files[&file][index as usize].addr;
        rig.cmd(|d, io| d.physical_read(io, addr)).0
    }

    /// Applies every queued up-call: sets the block's address, writes the
    /// changed inodes, then acknowledges. Replays of pages no inode names are
    /// freed. Inodes whose write failed stay dirty and are retried here.
    pub fn drain(&mut self, rig: &mut Rig) -> Result<(), FtlError> {
        for _ in 0..1000 {
            let ms = rig.device().take_migrations();
            if ms.is_empty() && self.dirty.is_empty() {
                return Ok(());
            }
            let mut acks: Vec<Migration> = Vec::new();
            for m in ms {
                let (file, index) = (m.tag >> 10, m.tag & (MAX_FILE_BLOCKS - 1));
                let block = self.files.get_mut(&file).and_then(|v| v.get_mut(index as usize));
                match (block, m.old) {
                    (Some(b), Some(old)) if b.addr == old => {
                        b.addr = m.new;
                        self.dirty.insert(file);
                        self.migrations_applied += 1;
                        acks.push(m);
                    }
                    (Some(b), None) => {
                        if b.addr != m.new {
                            b.addr = m.new;
                            self.dirty.insert(file);
                            self.replays_applied += 1;
                        }
                    }
                    (None, None) => {
                        rig.cmd(|d, io| d.free(io, m.new)).0?;
                        self.orphans_freed += 1;
                    }
                    // A migration of a block the host has since freed or
                    // rewritten: nothing names it.
                    _ => {
                        self.migrations_stale += 1;
                        acks.push(m);
                    }
                }
            }
            let dirty: Vec<u32> = self.dirty.iter().copied().collect();
            for file in dirty {
                self.write_inode(rig, file)?;
            }
            for m in &acks {
                rig.device().ack_migration(m);
            }
        }
        Err(FtlError::Recovery("migrations keep coming: 1000 rounds of up-calls without an empty queue".into()))
    }

    /// After a power cut and the device's recovery: the inodes are read back
    /// from the metadata space and the replay applied (see [`HostFs::drain`]).
    pub fn recover(&mut self, rig: &mut Rig) -> Result<(), FtlError> {
        self.files.clear();
        self.dirty.clear();
        let vp = rig.device().virtual_pages();
        for lba in 0..vp {
            let (r, _) = rig.cmd(|d, io| d.virtual_read(io, lba));
            let Some(Payload::Token(t)) = r? else {
                continue;
            };
            let snapshot = self.snapshots.get(&t).ok_or_else(|| {
                FtlError::Recovery(format!("inode {lba} reads back token {t}, which the host never wrote"))
            })?;
            if let Some(blocks) = snapshot.clone() {
                self.files.insert(lba, blocks);
            }
        }
        self.drain(rig)
    }

    /// One random file-system operation over files with ids below `max_files`
    /// (and below the device's metadata space) and at most `max_blocks` blocks each, then the up-calls drained. Reads
    /// are checked against the last token written. Returns the operation's
    /// error (on a faulty medium).
    pub fn random_op(
        &mut self,
        rig: &mut Rig,
        rng: &mut impl Rng,
        max_files: u32,
        max_blocks: u32,
    ) -> Result<(), FtlError> {
        // An inode per metadata address: no more files than those.
        let file = rng.gen_range(0..max_files.min(rig.device().virtual_pages()));
        let r = match (self.files.get(&file).map(Vec::len), rng.gen_range(0..100)) {
            (None, _) => self.create(rig, file, rng.gen_range(1..=max_blocks)),
            (Some(n), 0..=49) => self.overwrite(rig, file, rng.gen_range(0..n as u32)),
            (Some(_), 50..=59) => self.delete(rig, file),
            (Some(n), _) => {
                let i = rng.gen_range(0..n as u32);
                let want = self.files[&file][i as usize].token;
                self.read(rig, file, i).map(|got| {
                    assert_eq!(got, Payload::Token(want), "file {file} block {i}: read back other data");
                })
            }
        };
        let d = self.drain(rig);
        r.and(d)
    }
}
