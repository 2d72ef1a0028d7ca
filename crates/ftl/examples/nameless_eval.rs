//! The Nameless-Write evaluation of 003_9b28d6a0046a8156.txt (Section 4,
//! Figure 8 and Table 4), in the shape ftlab can reproduce; see
//! `experiments/nameless/README.md`.
//!
//! `cargo run --release -p ftlab-ftl --example nameless_eval -- <out dir>`
//! writes `fig8_iops.csv` (4 KiB sequential and random write and read IOPS,
//! `pagemap` against the nameless device, on the `jasmine-openssd` chip with
//! 4 KiB pages) and `table4_memory.csv` (device and host memory for file-system
//! images of 4 to 48 GB), and prints both.

use std::fmt::Write as _;
use std::path::PathBuf;

use ftlab_ftl::alloc::BlockAllocator;
use ftlab_ftl::mapping::{PageTable, ValidMap};
use ftlab_ftl::schemes::host::nameless::{NamelessConfig, PhysAddr};
use ftlab_ftl::schemes::page::pagemap::PageMapConfig;
use ftlab_ftl::victim::GreedyPicker;
use ftlab_ftl::{Flash, Ftl, FtlBuilder, Hint, Lpn};
use ftlab_nand::{presets, Geometry, Nand, NandConfig, Payload, SimTime, StoreKind, WearConfig};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Commands in flight (the closed loop of an fio job with iodepth 32).
const QUEUE_DEPTH: usize = 32;
/// Commands per measured phase.
const PHASE: u64 = 400_000;

/// The Jasmine chip with 4 KiB pages: its timing and bank layout, 64 blocks of
/// 4 MiB (1024 pages) per bank, 2 GiB in all (a small device, so that the
/// random-write phase runs garbage collection).
fn chip() -> NandConfig {
    let p = presets::preset("jasmine-openssd").expect("the jasmine-openssd preset");
    let geometry = Geometry { blocks_per_plane: 64, pages_per_block: 1024, page_size: 4096, ..p.geometry };
    NandConfig {
        geometry,
        timing: p.timing,
        bad_block_rate: 0.0,
        wear: WearConfig::default(),
        store: StoreKind::Token,
        seed: 1,
        faults: Default::default(),
        commands: Default::default(),
    }
}

/// A closed loop of `QUEUE_DEPTH` commands: each is issued when the one
/// `QUEUE_DEPTH` before it completed.
struct Loop {
    flash: Flash,
    ftl: Box<dyn Ftl>,
    done: Vec<SimTime>,
    issued: SimTime,
}

impl Loop {
    fn new(builder: &dyn FtlBuilder, copyback: bool) -> Loop {
        let mut flash = Flash::new(Nand::new(&chip()).expect("medium"));
        flash.set_copyback(copyback);
        let ftl = builder.format(&mut flash.io(SimTime::ZERO)).expect("format");
        Loop { flash, ftl, done: Vec::new(), issued: SimTime::ZERO }
    }

    /// Runs one command; `f` gets the FTL and the command's Io.
    fn run<R>(&mut self, f: impl FnOnce(&mut dyn Ftl, &mut ftlab_ftl::Io) -> R) -> R {
        let n = self.done.len();
        if n >= QUEUE_DEPTH {
            self.issued = self.issued.max(self.done[n - QUEUE_DEPTH]);
        }
        let mut io = self.flash.io(self.issued);
        let r = f(self.ftl.as_mut(), &mut io);
        self.done.push(io.completion());
        r
    }

    /// Starts a phase: the loop drains first.
    fn phase(&mut self) -> SimTime {
        let end = self.done.iter().copied().max().unwrap_or(SimTime::ZERO);
        self.issued = self.issued.max(end);
        self.done.clear();
        self.issued
    }

    /// IOPS of the phase started at `start`.
    fn iops(&self, start: SimTime) -> f64 {
        let end = self.done.iter().copied().max().unwrap_or(start);
        self.done.len() as f64 / ((end.0 - start.0) as f64 / 1e9)
    }
}

/// One FTL's figures: IOPS of sequential write, random write, sequential read
/// and random read, and the whole run's garbage-collection copies, erases and
/// migrations.
struct Run {
    iops: [f64; 4],
    copies: u64,
    erases: u64,
    migrations: u64,
}

impl Run {
    fn of(l: &Loop, iops: [f64; 4], migrations: u64) -> Run {
        let c = l.flash.counters();
        Run { iops, copies: c.page_copies(), erases: c.erases.total(), migrations }
    }
}

/// Pages written by preconditioning and by the phases, the same for both
/// FTLs: 68% of the physical pages (within both data spaces: pagemap exports
/// 90% of the pages, the nameless device 95% of 90% for data).
fn working_set() -> u32 {
    (u64::from(chip().geometry.total_pages()) * 68 / 100) as u32
}

/// `copyback`: whether garbage collection's moves inside a plane use copyback.
fn pagemap_iops(rng: &mut ChaCha8Rng, copyback: bool) -> Run {
    let cfg = PageMapConfig::preset("pagemap").expect("preset");
    let mut l = Loop::new(&cfg, copyback);
    let n = working_set();
    assert!(n < l.ftl.logical_pages());
    let h = Hint::default();
    let mut token = 0;
    let mut write = |l: &mut Loop, lpn: u32| {
        token += 1;
        l.run(|f, io| f.write(io, Lpn(lpn), Payload::Token(token), &h)).expect("write");
    };
    for lpn in 0..n {
        write(&mut l, lpn);
    }
    let t = l.phase();
    for i in 0..PHASE {
        write(&mut l, (i % u64::from(n)) as u32);
    }
    let seq_w = l.iops(t);
    let t = l.phase();
    for i in 0..PHASE {
        l.run(|f, io| f.read(io, Lpn((i % u64::from(n)) as u32))).expect("read");
    }
    let seq_r = l.iops(t);
    let t = l.phase();
    for _ in 0..PHASE {
        write(&mut l, rng.gen_range(0..n));
    }
    let rand_w = l.iops(t);
    let t = l.phase();
    for _ in 0..PHASE {
        l.run(|f, io| f.read(io, Lpn(rng.gen_range(0..n)))).expect("read");
    }
    Run::of(&l, [seq_w, rand_w, seq_r, l.iops(t)], 0)
}

/// Block `b` written again by the host of [`nameless_iops`]: a nameless write
/// tagged `b` and a free of its old address, then the migrations applied and
/// acknowledged.
fn host_write(l: &mut Loop, addrs: &mut [Option<PhysAddr>], b: u32) {
    let old = addrs[b as usize];
    let token = l.done.len() as u64 + 1;
    let a = l.run(|f, io| {
        let d = f.nameless().expect("nameless");
        let a = d.nameless_write(io, b, Payload::Token(token))?;
        if let Some(old) = old {
            d.free(io, old)?;
        }
        Ok::<_, ftlab_ftl::FtlError>(a)
    });
    addrs[b as usize] = Some(a.expect("nameless write"));
    let d = l.ftl.nameless().expect("nameless");
    for m in d.take_migrations() {
        if m.old.is_some() && addrs[m.tag as usize] == m.old {
            addrs[m.tag as usize] = Some(m.new);
        }
        d.ack_migration(&m);
    }
}

/// The nameless device with a host that holds one address per data block:
/// a write of block `b` is a nameless write tagged `b` and a free of its old
/// address; migrations are applied and acknowledged after every command.
fn nameless_iops(rng: &mut ChaCha8Rng) -> Run {
    let cfg = NamelessConfig::default();
    let mut l = Loop::new(&cfg, true);
    let n = working_set();
    assert!(u64::from(n) < l.ftl.nameless().expect("nameless").data_capacity());
    let mut addrs: Vec<Option<PhysAddr>> = vec![None; n as usize];
    for b in 0..n {
        host_write(&mut l, &mut addrs, b);
    }
    let t = l.phase();
    for i in 0..PHASE {
        host_write(&mut l, &mut addrs, (i % u64::from(n)) as u32);
    }
    let seq_w = l.iops(t);
    // The sequential read reads the blocks in file order (by tag), as the
    // page map's reads go by logical page.
    let t = l.phase();
    let read = |l: &mut Loop, a: PhysAddr| {
        l.run(|f, io| f.nameless().expect("nameless").physical_read(io, a)).expect("physical read");
    };
    for i in 0..PHASE {
        let a = addrs[(i % u64::from(n)) as usize].expect("written");
        read(&mut l, a);
    }
    let seq_r = l.iops(t);
    let t = l.phase();
    for _ in 0..PHASE {
        host_write(&mut l, &mut addrs, rng.gen_range(0..n));
    }
    let rand_w = l.iops(t);
    let t = l.phase();
    for _ in 0..PHASE {
        let a = addrs[rng.gen_range(0..n) as usize].expect("written");
        read(&mut l, a);
    }
    let migrations = l.ftl.nameless().expect("nameless").migrations();
    Run::of(&l, [seq_w, rand_w, seq_r, l.iops(t)], migrations)
}

/// File sizes: lognormal, mu 9.48 and sigma 2.46 over bytes (the body of the
/// file-size distribution Impressions generates by default, after Agrawal et
/// al., FAST '07), capped at 1 GiB.
fn file_size(rng: &mut ChaCha8Rng) -> u64 {
    let (u1, u2): (f64, f64) = (rng.gen_range(f64::EPSILON..1.0), rng.gen());
    let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
    ((9.48 + 2.46 * z).exp() as u64).clamp(1, 1 << 30)
}

/// One file-system image: its files, data blocks and metadata blocks (for
/// 4-byte block numbers and for 8-byte physical addresses).
struct Image {
    files: u64,
    data: u64,
    meta_lba: u64,
    meta_phys: u64,
}

/// An image of `bytes` of file data, ext2-like: 256-byte inodes (16 a block),
/// 12 direct pointers then indirect blocks of 4 KiB, 64 directory entries a
/// directory block; a page-mapped file system also keeps a block bitmap.
fn image(bytes: u64, rng: &mut ChaCha8Rng) -> Image {
    let (mut files, mut data, mut ind_lba, mut ind_phys) = (0u64, 0u64, 0u64, 0u64);
    while data * 4096 < bytes {
        let blocks = file_size(rng).div_ceil(4096);
        files += 1;
        data += blocks;
        let indirect = blocks.saturating_sub(12);
        ind_lba += indirect.div_ceil(1024);
        ind_phys += indirect.div_ceil(512);
    }
    let inodes = files.div_ceil(16);
    let dirs = files.div_ceil(64);
    let bitmap = data.div_ceil(4096 * 8);
    Image { files, data, meta_lba: inodes + dirs + ind_lba + bitmap, meta_phys: inodes + dirs + ind_phys }
}

fn main() {
    let out = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "experiments/nameless".into()));
    let mut rng = ChaCha8Rng::seed_from_u64(2013);
    let p = pagemap_iops(&mut ChaCha8Rng::seed_from_u64(2013), true);
    let p_no_copyback = pagemap_iops(&mut ChaCha8Rng::seed_from_u64(2013), false);
    let n = nameless_iops(&mut ChaCha8Rng::seed_from_u64(2013));
    let mut fig8 =
        String::from("ftl,seq_write_iops,rand_write_iops,seq_read_iops,rand_read_iops,gc_copies,erases,migrations\n");
    for (name, r) in [("pagemap", p), ("pagemap-no-copyback", p_no_copyback), ("nameless", n)] {
        let v = r.iops;
        writeln!(
            fig8,
            "{name},{:.0},{:.0},{:.0},{:.0},{},{},{}",
            v[0], v[1], v[2], v[3], r.copies, r.erases, r.migrations
        )
        .expect("string");
    }
    print!("{fig8}");
    std::fs::write(out.join("fig8_iops.csv"), &fig8).expect("write fig8_iops.csv");

    let mut t4 = String::from(
        "image_gb,files,data_blocks,meta_blocks_pagemap,meta_blocks_nameless,pagemap_device_bytes,\
         nameless_device_bytes,pagemap_host_pointer_bytes,nameless_host_pointer_bytes\n",
    );
    let ppb = 1024u32;
    for gb in [4u64, 8, 16, 32, 48] {
        let img = image(gb << 30, &mut rng);
        // A device sized to the image, with pagemap's 10% over-provisioning.
        let logical = img.data + img.meta_lba;
        let physical = (logical as f64 / 0.9).ceil() as u32;
        let blocks = physical.div_ceil(ppb);
        let g = Geometry { blocks_per_plane: blocks.div_ceil(8), pages_per_block: ppb, ..chip().geometry };
        let per_block = GreedyPicker::new(g.total_blocks(), ppb).ram_bytes() + BlockAllocator::empty(&g, 1).ram_bytes();
        let valid = ValidMap::new(g.total_pages()).ram_bytes();
        let pagemap = PageTable::new(logical as u32).ram_bytes() + valid + per_block;
        // The nameless device: the metadata map and two bits a page.
        let nameless = PageTable::new(img.meta_phys as u32).ram_bytes() + 2 * valid + per_block;
        writeln!(
            t4,
            "{gb},{},{},{},{},{pagemap},{nameless},{},{}",
            img.files,
            img.data,
            img.meta_lba,
            img.meta_phys,
            img.data * 4,
            img.data * 8
        )
        .expect("string");
    }
    print!("{t4}");
    std::fs::write(out.join("table4_memory.csv"), &t4).expect("write table4_memory.csv");
}
