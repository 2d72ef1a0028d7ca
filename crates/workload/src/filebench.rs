//! Filebench-like personalities as block I/O: `fileserver`, `webserver`,
//! `varmail`, the workloads of FlashTier's SSC evaluation
//! (`003_9b28d6a0046a8156.txt` Section 3.3, "we evaluate using standard
//! workload profiles with the filebench benchmark").
//!
//! # Personalities
//!
//! The flowop loops are filebench's `workloads/fileserver.f`, `webserver.f`
//! and `varmail.f` (github.com/filebench/filebench, master):
//!
//! - **fileserver**: 10,000 files, size gamma with mean 128 KiB, 50 threads,
//!   80% preallocated; each thread loops createfile, writewholefile (1 MiB
//!   I/Os), closefile, openfile, appendfilerand (up to 16 KiB), closefile,
//!   openfile, readwholefile (1 MiB I/Os), closefile, deletefile, statfile.
//! - **webserver**: 1,000 files, mean 16 KiB, 100 threads, all preallocated,
//!   plus one log file; each thread loops openfile, readwholefile, closefile
//!   ten times, then appendfilerand (up to 16 KiB) to the log.
//! - **varmail**: 1,000 files, mean 16 KiB, 16 threads, 80% preallocated; each
//!   thread loops deletefile, createfile, appendfilerand, fsync, closefile,
//!   openfile, readwholefile, appendfilerand, fsync, closefile, openfile,
//!   readwholefile, closefile.
//!
//! Every flowop counts as one operation (filebench's ops/s counts them all);
//! open, close, stat, create and delete issue no block I/O here.
//!
//! # Parameters and simplifications (ftlab's, stated)
//!
//! - **Scale.** `data_bytes` sets the number of files: `data_bytes / mean
//!   file size` (the paper fills a 75 GB partition; filebench's defaults are
//!   the file counts above, used when `data_bytes` is 0).
//! - **File sizes.** Filebench's `cvar-gamma` with `gamma:1.5` is read as a
//!   gamma distribution of shape 1.5 and the given mean, rounded up to whole
//!   4 KiB blocks, at most 64 times the mean.
//! - **appendfilerand** appends a uniform 1..=16 KiB, rounded up to whole
//!   blocks (1 to 4 blocks): each append adds whole blocks.
//! - **Layout.** No file system: files are extents of 4 KiB blocks from a
//!   next-fit extent allocator over `1.5 x data_bytes` of the disk, so the
//!   data set sits at the start of the disk. An append extends the file's last
//!   extent in place when the blocks after it are free, else starts a new
//!   extent. Files are read and written in 1 MiB I/Os per extent. No page
//!   cache and no file-system metadata or journal I/O; an `fsync` is passed
//!   down as a flush of the cache.
//! - **File choice** ([`FilePick`]). `uniform` (the default): uniform over
//!   the files in the right state (existing for open/delete/stat, absent for
//!   create), from one seeded RNG. This is *not* what filebench does.
//!   `rotor` is filebench's own choice (`fileset_pick` in `fileset.c`,
//!   1.4.9 to 1.5): files are picked in rotation by index, one rotor over
//!   the existing files shared by every openfile, deletefile and statfile of
//!   every thread (the flowops pass thread id 0 unless `rotatefd` is set,
//!   which none of the three personalities does), one over the absent files
//!   for createfile; a file another thread holds open (filebench's
//!   `FSE_BUSY`) is skipped; and a recreated file keeps the size its entry
//!   was given when the file set was made (filebench's `fse_size`).
//! - **Layout span.** [`FilebenchSpec::layout_bytes`] widens the extent
//!   allocator's region beyond 1.5 x the data set (e.g. to the partition's
//!   size): the next-fit cursor then keeps moving into blocks never written
//!   before, as a file system allocating over a large partition may, instead
//!   of reusing the freed blocks of a tight region.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Gamma};
use serde::{Deserialize, Serialize};

use crate::TraceError;

/// The block size the personalities are laid out in, bytes.
pub const BLOCK: u64 = 4096;

/// Largest I/O of readwholefile and writewholefile, blocks (filebench's
/// `iosize=1m`).
const IO_BLOCKS: u64 = (1 << 20) / BLOCK;

/// A filebench personality.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Personality {
    /// Write-intensive file server.
    Fileserver,
    /// Read-intensive web server with a log.
    Webserver,
    /// Mail server: small files, appends and fsyncs.
    Varmail,
}

impl Personality {
    /// All three, in the paper's order.
    pub const ALL: [Personality; 3] = [Personality::Fileserver, Personality::Webserver, Personality::Varmail];

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Personality::Fileserver => "fileserver",
            Personality::Webserver => "webserver",
            Personality::Varmail => "varmail",
        }
    }

    /// Parses a name.
    pub fn parse(name: &str) -> Option<Personality> {
        Personality::ALL.into_iter().find(|p| p.name() == name)
    }

    /// `(files, mean file bytes, threads, preallocated percent)` of the
    /// filebench definition.
    fn defaults(self) -> (u64, u64, u32, u64) {
        match self {
            Personality::Fileserver => (10_000, 128 << 10, 50, 80),
            Personality::Webserver => (1_000, 16 << 10, 100, 100),
            Personality::Varmail => (1_000, 16 << 10, 16, 80),
        }
    }

    /// Its flowop loop: one thread's sequence.
    fn flowops(self) -> &'static [Flow] {
        use Flow::*;
        match self {
            Personality::Fileserver => {
                &[Create, WriteWhole, Close, Open, Append, Close, Open, ReadWhole, Close, Delete, Stat]
            }
            Personality::Webserver => &[
                Open, ReadWhole, Close, Open, ReadWhole, Close, Open, ReadWhole, Close, Open, ReadWhole, Close, Open,
                ReadWhole, Close, Open, ReadWhole, Close, Open, ReadWhole, Close, Open, ReadWhole, Close, Open,
                ReadWhole, Close, Open, ReadWhole, Close, AppendLog,
            ],
            Personality::Varmail => {
                &[Delete, Create, Append, Fsync, Close, Open, ReadWhole, Append, Fsync, Close, Open, ReadWhole, Close]
            }
        }
    }
}

/// One flowop of a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Create,
    WriteWhole,
    Open,
    Close,
    Append,
    AppendLog,
    ReadWhole,
    Delete,
    Stat,
    Fsync,
}

impl Flow {
    fn name(self) -> &'static str {
        match self {
            Flow::Create => "createfile",
            Flow::WriteWhole => "writewholefile",
            Flow::Open => "openfile",
            Flow::Close => "closefile",
            Flow::Append | Flow::AppendLog => "appendfilerand",
            Flow::ReadWhole => "readwholefile",
            Flow::Delete => "deletefile",
            Flow::Stat => "statfile",
            Flow::Fsync => "fsync",
        }
    }
}

/// How flowops choose their file (see the [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FilePick {
    /// Uniform over the files in the right state (ftlab's original choice).
    #[default]
    Uniform,
    /// Filebench's rotors: in index order, busy files skipped.
    Rotor,
}

impl FilePick {
    fn is_uniform(&self) -> bool {
        *self == FilePick::Uniform
    }
}

/// A personality at a scale. Every field has a documented default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilebenchSpec {
    /// The personality.
    pub personality: Personality,
    /// Bytes of files (the data set); 0 keeps filebench's file count.
    #[serde(default)]
    pub data_bytes: u64,
    /// Threads; `None` keeps filebench's.
    #[serde(default)]
    pub threads: Option<u32>,
    /// How files are chosen. Default `uniform`.
    #[serde(default, skip_serializing_if = "FilePick::is_uniform")]
    pub pick: FilePick,
    /// Bytes of disk the extent allocator spans, if more than 1.5 x the data
    /// set. Default 0 (1.5 x the data set).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub layout_bytes: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl Default for FilebenchSpec {
    /// Fileserver at filebench's file count, threads and file choice uniform.
    fn default() -> Self {
        FilebenchSpec {
            personality: Personality::Fileserver,
            data_bytes: 0,
            threads: None,
            pick: FilePick::Uniform,
            layout_bytes: 0,
        }
    }
}

impl FilebenchSpec {
    /// Files in the file set.
    pub fn files(&self) -> u64 {
        let (files, mean, _, _) = self.personality.defaults();
        if self.data_bytes == 0 {
            files
        } else {
            (self.data_bytes / mean).max(1)
        }
    }

    /// Threads running the loop.
    pub fn threads(&self) -> u32 {
        self.threads.unwrap_or(self.personality.defaults().2)
    }

    /// Blocks of disk the layout uses (1.5 times the data set, or
    /// `layout_bytes` if that is more).
    pub fn disk_blocks(&self) -> u64 {
        let mean = self.personality.defaults().1;
        let tight = (self.files() * mean / BLOCK) * 3 / 2 + 64 * mean / BLOCK + 1;
        tight.max(self.layout_bytes / BLOCK)
    }
}

/// A block I/O of a flowop, in 4 KiB blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockIo {
    /// Reads `len` blocks from `block`.
    Read {
        /// The first block.
        block: u64,
        /// Blocks.
        len: u64,
    },
    /// Writes `len` blocks from `block`.
    Write {
        /// The first block.
        block: u64,
        /// Blocks.
        len: u64,
    },
    /// Flushes (an fsync).
    Fsync,
}

/// One flowop: its filebench name and its block I/O, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flowop {
    /// Filebench's flowop name (`readwholefile`, ...).
    pub name: &'static str,
    /// Its I/Os, issued one after the other.
    pub ios: Vec<BlockIo>,
}

/// A file: its extents `(first block, blocks)`, or none if absent.
#[derive(Debug, Clone, Default)]
struct File {
    exists: bool,
    /// Its index in the existing or absent list.
    slot: usize,
    /// Blocks it should hold when written whole.
    size: u64,
    extents: Vec<(u64, u64)>,
}

/// The running personality: the file set, the extent allocator and each
/// thread's place in its loop. Deterministic for a seed.
#[derive(Debug, Clone)]
pub struct Filebench {
    spec: FilebenchSpec,
    rng: ChaCha8Rng,
    sizes: Gamma<f64>,
    mean_blocks: u64,
    files: Vec<File>,
    /// Existing and absent files, for uniform choice.
    existing: Vec<usize>,
    absent: Vec<usize>,
    /// Free extents, first block to length.
    free: BTreeMap<u64, u64>,
    /// The next-fit cursor.
    cursor: u64,
    /// Per thread: place in the loop, open file.
    threads: Vec<(usize, Option<usize>)>,
    /// With [`FilePick::Rotor`]: existing and absent files by index, and the
    /// two rotors (next index to try).
    exist_set: std::collections::BTreeSet<usize>,
    absent_set: std::collections::BTreeSet<usize>,
    ex_rotor: usize,
    ne_rotor: usize,
    /// The webserver's log file.
    log: usize,
}

impl Filebench {
    /// The personality of `spec` with its file set preallocated, from `seed`.
    pub fn new(spec: FilebenchSpec, seed: u64) -> Result<Filebench, TraceError> {
        if spec.threads == Some(0) {
            return Err(TraceError::InvalidSpec("filebench threads must be at least 1".into()));
        }
        let (_, mean, _, prealloc) = spec.personality.defaults();
        let files = spec.files();
        if files > 1 << 32 {
            return Err(TraceError::InvalidSpec(format!(
                "filebench data_bytes {} makes {files} files, beyond 2^32: give a smaller data set",
                spec.data_bytes
            )));
        }
        let mean_blocks = mean / BLOCK;
        let shape = 1.5;
        let sizes = Gamma::new(shape, mean_blocks as f64 / shape)
            .map_err(|e| TraceError::InvalidSpec(format!("filebench file sizes: {e}")))?;
        let mut fb = Filebench {
            spec,
            rng: ChaCha8Rng::seed_from_u64(seed),
            sizes,
            mean_blocks,
            files: Vec::new(),
            existing: Vec::new(),
            absent: Vec::new(),
            free: BTreeMap::from([(0, spec.disk_blocks())]),
            cursor: 0,
            threads: vec![(0, None); spec.threads() as usize],
            log: usize::MAX,
            exist_set: Default::default(),
            absent_set: Default::default(),
            ex_rotor: 0,
            ne_rotor: 0,
        };
        let n = files as usize + usize::from(spec.personality == Personality::Webserver);
        for i in 0..n {
            let size = fb.draw_size();
            fb.files.push(File { exists: false, slot: 0, size, extents: Vec::new() });
            // Preallocated files are laid out one after the other.
            if (i as u64) * 100 < files * prealloc || i == files as usize {
                fb.files[i].exists = true;
                fb.grow(i, size);
                if i < files as usize {
                    fb.files[i].slot = fb.existing.len();
                    fb.existing.push(i);
                }
            } else {
                fb.files[i].slot = fb.absent.len();
                fb.absent.push(i);
            }
        }
        if spec.personality == Personality::Webserver {
            fb.log = files as usize;
        }
        if spec.pick == FilePick::Rotor {
            fb.exist_set = fb.existing.iter().copied().collect();
            fb.absent_set = fb.absent.iter().copied().collect();
        }
        Ok(fb)
    }

    /// Its spec.
    pub fn spec(&self) -> &FilebenchSpec {
        &self.spec
    }

    /// Blocks of the disk the file set may use.
    pub fn disk_blocks(&self) -> u64 {
        self.spec.disk_blocks()
    }

    /// Blocks held by files now.
    pub fn used_blocks(&self) -> u64 {
        self.files.iter().flat_map(|f| &f.extents).map(|e| e.1).sum()
    }

    fn draw_size(&mut self) -> u64 {
        let s = self.sizes.sample(&mut self.rng).ceil() as u64;
        s.clamp(1, 64 * self.mean_blocks)
    }

    /// The next flowop of `thread` (below [`FilebenchSpec::threads`]; a larger
    /// number wraps).
    pub fn next(&mut self, thread: usize) -> Flowop {
        let t = thread % self.threads.len();
        let flows = self.spec.personality.flowops();
        let (at, open) = self.threads[t];
        let flow = flows[at % flows.len()];
        self.threads[t].0 = (at + 1) % flows.len();
        let mut ios = Vec::new();
        match flow {
            Flow::Create => {
                let f = self.pick(false);
                if let Some(f) = f {
                    self.set_exists(f, true);
                    // Filebench keeps each entry's size; ftlab's uniform mode
                    // draws a new one.
                    if self.spec.pick == FilePick::Uniform {
                        let size = self.draw_size();
                        self.files[f].size = size;
                    }
                }
                self.threads[t].1 = f;
            }
            Flow::WriteWhole => {
                if let Some(f) = open {
                    let size = self.files[f].size;
                    self.grow(f, size);
                    ios = self.whole(f, true);
                }
            }
            Flow::Open => self.threads[t].1 = self.pick(true),
            Flow::Close => self.threads[t].1 = None,
            Flow::Append => {
                if let Some(f) = open {
                    ios = self.append(f);
                }
            }
            Flow::AppendLog => ios = self.append(self.log),
            Flow::ReadWhole => {
                if let Some(f) = open {
                    ios = self.whole(f, false);
                }
            }
            Flow::Delete if self.spec.pick == FilePick::Rotor => {
                // The rotor skips files other threads hold open; the
                // thread's own open file is closed before its deletefile in
                // every personality, so it is not open here.
                if let Some(f) = self.pick(true) {
                    self.set_exists(f, false);
                    for (b, n) in std::mem::take(&mut self.files[f].extents) {
                        self.release(b, n);
                    }
                }
            }
            Flow::Delete => {
                if let Some(f) = self.pick(true) {
                    if open != Some(f) {
                        self.set_exists(f, false);
                        for (b, n) in std::mem::take(&mut self.files[f].extents) {
                            self.release(b, n);
                        }
                    }
                }
            }
            Flow::Stat => {
                let _ = self.pick(true);
            }
            Flow::Fsync => ios.push(BlockIo::Fsync),
        }
        Flowop { name: flow.name(), ios }
    }

    /// An existing (or absent) file: uniformly chosen, or the next one of
    /// filebench's rotor.
    fn pick(&mut self, existing: bool) -> Option<usize> {
        if self.spec.pick == FilePick::Rotor {
            return self.rotor_pick(existing);
        }
        let v = if existing { &self.existing } else { &self.absent };
        if v.is_empty() {
            return None;
        }
        Some(v[self.rng.gen_range(0..v.len())])
    }

    /// Filebench's `fileset_pick` in rotation: the first file at or after
    /// the rotor (wrapping) that no thread holds open; the rotor moves past
    /// it. `None` if every candidate is busy or none exists.
    fn rotor_pick(&mut self, existing: bool) -> Option<usize> {
        let (set, rotor) = if existing { (&self.exist_set, self.ex_rotor) } else { (&self.absent_set, self.ne_rotor) };
        let threads = &self.threads;
        let busy = |f: usize| threads.iter().any(|t| t.1 == Some(f));
        let f = set.range(rotor..).chain(set.range(..rotor)).copied().find(|&f| !busy(f))?;
        if existing {
            self.ex_rotor = f + 1;
        } else {
            self.ne_rotor = f + 1;
        }
        Some(f)
    }

    /// Moves `f` between the existing and absent lists (each file knows its
    /// place in its list, so this is O(1)).
    fn set_exists(&mut self, f: usize, exists: bool) {
        if self.files[f].exists == exists {
            return;
        }
        let (from, to) =
            if exists { (&mut self.absent, &mut self.existing) } else { (&mut self.existing, &mut self.absent) };
        let i = self.files[f].slot;
        from.swap_remove(i);
        if let Some(&moved) = from.get(i) {
            self.files[moved].slot = i;
        }
        self.files[f].slot = to.len();
        to.push(f);
        self.files[f].exists = exists;
        if self.spec.pick == FilePick::Rotor {
            if exists {
                self.absent_set.remove(&f);
                self.exist_set.insert(f);
            } else {
                self.exist_set.remove(&f);
                self.absent_set.insert(f);
            }
        }
    }

    /// Appends 1..=4 blocks to `f`: the write I/O.
    fn append(&mut self, f: usize) -> Vec<BlockIo> {
        let bytes: u64 = self.rng.gen_range(1..=16 * 1024);
        let before = self.files[f].extents.clone();
        self.grow(f, bytes.div_ceil(BLOCK));
        let after = &self.files[f].extents;
        // The new blocks: the tail of the last extent that grew, and new ones.
        let mut ios = Vec::new();
        for (i, &(b, n)) in after.iter().enumerate() {
            let old = before.get(i).map_or(0, |e| e.1);
            if n > old {
                ios.push(BlockIo::Write { block: b + old, len: n - old });
            }
        }
        ios
    }

    /// Reads or writes the whole of `f` in 1 MiB I/Os per extent.
    fn whole(&self, f: usize, write: bool) -> Vec<BlockIo> {
        let mut ios = Vec::new();
        for &(b, n) in &self.files[f].extents {
            let mut at = b;
            while at < b + n {
                let len = IO_BLOCKS.min(b + n - at);
                ios.push(if write { BlockIo::Write { block: at, len } } else { BlockIo::Read { block: at, len } });
                at += len;
            }
        }
        ios
    }

    /// Gives `f` `blocks` more blocks: extends its last extent in place while
    /// the blocks after it are free, the rest next-fit. When the disk space is
    /// exhausted the file grows less (the data set is sized to leave room).
    fn grow(&mut self, f: usize, mut blocks: u64) {
        if let Some(&(b, n)) = self.files[f].extents.last() {
            let end = b + n;
            if let Some(len) = self.free.remove(&end) {
                let take = len.min(blocks);
                if len > take {
                    self.free.insert(end + take, len - take);
                }
                if let Some(last) = self.files[f].extents.last_mut() {
                    last.1 += take;
                }
                blocks -= take;
            }
        }
        while blocks > 0 {
            let Some((start, len)) =
                self.free.range(self.cursor..).next().or_else(|| self.free.iter().next()).map(|(&s, &l)| (s, l))
            else {
                return;
            };
            self.free.remove(&start);
            let take = len.min(blocks);
            if len > take {
                self.free.insert(start + take, len - take);
            }
            self.files[f].extents.push((start, take));
            self.cursor = start + take;
            blocks -= take;
        }
    }

    /// Frees an extent, merging it with its free neighbours.
    fn release(&mut self, mut start: u64, mut len: u64) {
        if let Some((&s, &l)) = self.free.range(..start).next_back() {
            if s + l == start {
                self.free.remove(&s);
                start = s;
                len += l;
            }
        }
        if let Some(l) = self.free.remove(&(start + len)) {
            len += l;
        }
        self.free.insert(start, len);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn run(p: Personality, seed: u64) -> Vec<Flowop> {
        let mut fb =
            Filebench::new(FilebenchSpec { personality: p, data_bytes: 0, threads: None, ..Default::default() }, seed)
                .unwrap();
        let threads = fb.spec().threads() as usize;
        (0..3000).map(|i| fb.next(i % threads)).collect()
    }

    #[test]
    fn deterministic_by_seed() {
        for p in Personality::ALL {
            assert_eq!(run(p, 7), run(p, 7), "{}", p.name());
            assert_ne!(run(p, 7), run(p, 8), "{}", p.name());
        }
    }

    #[test]
    fn mixes_follow_the_personalities() {
        let count =
            |ops: &[Flowop], f: &dyn Fn(&BlockIo) -> bool| ops.iter().flat_map(|o| &o.ios).filter(|i| f(i)).count();
        let ws = run(Personality::Webserver, 1);
        let reads = count(&ws, &|i| matches!(i, BlockIo::Read { .. }));
        let writes = count(&ws, &|i| matches!(i, BlockIo::Write { .. }));
        assert!(reads > 5 * writes, "webserver reads {reads} writes {writes}");
        let vm = run(Personality::Varmail, 1);
        assert!(count(&vm, &|i| matches!(i, BlockIo::Fsync)) > 300);
        let fs = run(Personality::Fileserver, 1);
        let blocks = |ops: &[Flowop], w: bool| -> u64 {
            ops.iter()
                .flat_map(|o| &o.ios)
                .map(|i| match (i, w) {
                    (BlockIo::Write { len, .. }, true) | (BlockIo::Read { len, .. }, false) => *len,
                    _ => 0,
                })
                .sum()
        };
        // Fileserver writes about as much as it reads (whole files and appends).
        assert!(blocks(&fs, true) * 2 > blocks(&fs, false));
    }

    #[test]
    fn layout_stays_in_the_disk_and_files_do_not_overlap() {
        let spec = FilebenchSpec {
            personality: Personality::Fileserver,
            data_bytes: 64 << 20,
            threads: Some(4),
            ..Default::default()
        };
        let mut fb = Filebench::new(spec, 3).unwrap();
        for i in 0..20_000 {
            for io in fb.next(i % 4).ios {
                if let BlockIo::Write { block, len } | BlockIo::Read { block, len } = io {
                    assert!(len > 0 && block + len <= fb.disk_blocks());
                }
            }
        }
        let mut all: Vec<(u64, u64)> = fb.files.iter().flat_map(|f| f.extents.clone()).collect();
        all.sort_unstable();
        for w in all.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "overlapping extents {w:?}");
        }
        let free: u64 = fb.free.values().sum();
        assert_eq!(free + fb.used_blocks(), fb.disk_blocks());
        assert!(Filebench::new(FilebenchSpec { threads: Some(0), ..spec }, 1).is_err());
    }

    /// The files the openfile flowops of a run pick, in order.
    fn opened(spec: FilebenchSpec, flowops: usize) -> Vec<usize> {
        let mut fb = Filebench::new(spec, 5).unwrap();
        let threads = fb.spec().threads() as usize;
        let mut out = Vec::new();
        for i in 0..flowops {
            let t = i % threads;
            let op = fb.next(t);
            if op.name == "openfile" {
                out.extend(fb.threads[t].1);
            }
        }
        out
    }

    #[test]
    fn rotor_picks_files_in_index_order_like_filebench() {
        let spec = FilebenchSpec {
            personality: Personality::Webserver,
            threads: Some(1),
            pick: FilePick::Rotor,
            ..Default::default()
        };
        // Webserver's file set is never written, so one thread's opens walk
        // the 1,000 files in order, round and round.
        let first = opened(spec, 3100);
        assert_eq!(first.len(), 1000);
        assert!(first.iter().enumerate().all(|(i, &f)| f == i), "{:?}", &first[..20]);
        // Fileserver: the opens, deletes and stats of all threads share one
        // rotor, so the files opened move forward (mod wrap) and no file is
        // opened twice within a sweep.
        let spec = FilebenchSpec { personality: Personality::Fileserver, pick: FilePick::Rotor, ..spec };
        let rotor = opened(spec, 11 * 2000);
        let backwards = rotor.windows(2).filter(|w| w[1] < w[0]).count();
        assert!(backwards <= 1, "{backwards} steps back in {} opens", rotor.len());
        // Uniform choice steps back about half the time.
        let uniform = opened(FilebenchSpec { pick: FilePick::Uniform, ..spec }, 11 * 2000);
        assert!(uniform.windows(2).filter(|w| w[1] < w[0]).count() > uniform.len() / 3);
    }

    #[test]
    fn rotor_keeps_a_recreated_files_size_and_skips_busy_files() {
        let spec = FilebenchSpec {
            personality: Personality::Fileserver,
            data_bytes: 4 << 20,
            threads: Some(8),
            pick: FilePick::Rotor,
            layout_bytes: 0,
        };
        let mut fb = Filebench::new(spec, 9).unwrap();
        let sizes: Vec<u64> = fb.files.iter().map(|f| f.size).collect();
        for i in 0..5000 {
            let t = i % 8;
            let op = fb.next(t);
            if op.name == "openfile" {
                let f = fb.threads[t].1.unwrap();
                let holders = fb.threads.iter().filter(|x| x.1 == Some(f)).count();
                assert_eq!(holders, 1, "file {f} opened while busy");
            }
        }
        assert_eq!(sizes, fb.files.iter().map(|f| f.size).collect::<Vec<_>>());
    }

    #[test]
    fn layout_bytes_widens_the_allocators_region() {
        let spec = FilebenchSpec { personality: Personality::Varmail, ..Default::default() };
        assert_eq!(spec.disk_blocks(), 1000 * 4 * 3 / 2 + 64 * 4 + 1);
        let wide = FilebenchSpec { layout_bytes: 1 << 30, ..spec };
        assert_eq!(wide.disk_blocks(), (1 << 30) / BLOCK);
        // The next-fit cursor walks into the wide region.
        let mut fb = Filebench::new(wide, 1).unwrap();
        let mut top = 0;
        for i in 0..100_000 {
            for io in fb.next(i % 16).ios {
                if let BlockIo::Write { block, len } = io {
                    top = top.max(block + len);
                }
            }
        }
        assert!(top > spec.disk_blocks() * 2, "writes reach block {top}");
    }
}
