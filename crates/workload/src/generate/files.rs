//! File-system-like patterns: PostMark-like small-file churn, IOzone-like phases.

use std::collections::VecDeque;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::dist::{Clock, SizeSampler};
use crate::{HostRequest, Op};

fn request(op: Op, start_page: u64, pages: u64, page_size: u64, arrival_ns: u64) -> HostRequest {
    HostRequest {
        arrival_ns,
        op,
        offset: start_page * page_size,
        // Validated at build: the largest file or record fits in u32 bytes.
        len: u32::try_from(pages * page_size).unwrap_or(u32::MAX),
        device: 0,
    }
}

#[derive(Debug, Clone, Copy)]
struct File {
    slot: u64,
    pages: u64,
}

/// PostMark-like: create a pool of small files, then run transactions that each (1)
/// read or append to a random file and (2) create a file or delete a random one, then
/// delete every file left. Each file lives in a fixed slot of `slot_pages` pages (the
/// largest file size), so appends grow it in place until the slot is full, after which
/// an append rewrites the file's last page. A delete trims the file's pages.
#[derive(Debug, Clone)]
pub(crate) struct PostMark {
    rng: ChaCha8Rng,
    clock: Clock,
    page_size: u64,
    sizes: SizeSampler,
    slot_pages: u64,
    slots: u64,
    initial_files: u64,
    transactions: u64,
    read_fraction: f64,
    create_fraction: f64,
    next_unused_slot: u64,
    free_slots: Vec<u64>,
    files: Vec<File>,
    pending: VecDeque<(Op, u64, u64)>,
}

impl PostMark {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        rng: ChaCha8Rng,
        clock: Clock,
        page_size: u64,
        sizes: SizeSampler,
        slot_pages: u64,
        slots: u64,
        initial_files: u64,
        transactions: u64,
        read_fraction: f64,
        create_fraction: f64,
    ) -> Self {
        PostMark {
            rng,
            clock,
            page_size,
            sizes,
            slot_pages,
            slots,
            initial_files,
            transactions,
            read_fraction,
            create_fraction,
            next_unused_slot: 0,
            free_slots: Vec::new(),
            files: Vec::new(),
            pending: VecDeque::new(),
        }
    }

    fn has_free_slot(&self) -> bool {
        !self.free_slots.is_empty() || self.next_unused_slot < self.slots
    }

    fn create(&mut self) {
        let slot = match self.free_slots.pop() {
            Some(s) => s,
            None if self.next_unused_slot < self.slots => {
                self.next_unused_slot += 1;
                self.next_unused_slot - 1
            }
            None => return,
        };
        let pages = u64::from(self.sizes.sample(&mut self.rng)).min(self.slot_pages);
        self.files.push(File { slot, pages });
        self.pending.push_back((Op::Write, slot * self.slot_pages, pages));
    }

    fn delete(&mut self, index: usize) {
        let f = self.files.swap_remove(index);
        self.free_slots.push(f.slot);
        self.pending.push_back((Op::Trim, f.slot * self.slot_pages, f.pages));
    }

    fn random_file(&mut self) -> usize {
        // Few files: the u64 range keeps the draw platform-independent.
        let i = self.rng.gen_range(0..self.files.len() as u64);
        usize::try_from(i).unwrap_or(0)
    }

    fn transaction(&mut self) {
        if self.files.is_empty() {
            self.create();
            return;
        }
        let i = self.random_file();
        let f = self.files[i];
        let start = f.slot * self.slot_pages;
        if self.rng.gen::<f64>() < self.read_fraction {
            self.pending.push_back((Op::Read, start, f.pages));
        } else {
            let room = self.slot_pages - f.pages;
            let want = u64::from(self.sizes.sample(&mut self.rng));
            if room == 0 {
                self.pending.push_back((Op::Write, start + f.pages - 1, 1));
            } else {
                let add = want.min(room);
                self.pending.push_back((Op::Write, start + f.pages, add));
                self.files[i].pages += add;
            }
        }
        let create = self.rng.gen::<f64>() < self.create_fraction;
        if create && self.has_free_slot() {
            self.create();
        } else {
            let j = self.random_file();
            self.delete(j);
        }
    }

    /// Queues the next step's requests; false when the run is over.
    fn step(&mut self) -> bool {
        if self.initial_files > 0 {
            self.initial_files -= 1;
            self.create();
        } else if self.transactions > 0 {
            self.transactions -= 1;
            self.transaction();
        } else if !self.files.is_empty() {
            self.delete(self.files.len() - 1);
        } else {
            return false;
        }
        true
    }
}

impl Iterator for PostMark {
    type Item = HostRequest;

    fn next(&mut self) -> Option<HostRequest> {
        while self.pending.is_empty() {
            if !self.step() {
                return None;
            }
        }
        let (op, start, pages) = self.pending.pop_front()?;
        let t = self.clock.tick(&mut self.rng);
        Some(request(op, start, pages, self.page_size, t))
    }
}

/// IOzone-like: over a test file at the start of the device, written in records of
/// `record_pages`: a sequential write pass, a rewrite pass, a read pass, a reread pass,
/// then `random_ops` random record reads and writes (read with `read_fraction`).
#[derive(Debug, Clone)]
pub(crate) struct IoZone {
    pub(crate) rng: ChaCha8Rng,
    pub(crate) clock: Clock,
    pub(crate) page_size: u64,
    pub(crate) file_pages: u64,
    pub(crate) record_pages: u64,
    pub(crate) random_ops: u64,
    pub(crate) read_fraction: f64,
    pub(crate) phase: usize,
    pub(crate) pos: u64,
}

/// The sequential passes, in order.
const PASSES: [Op; 4] = [Op::Write, Op::Write, Op::Read, Op::Read];

impl Iterator for IoZone {
    type Item = HostRequest;

    fn next(&mut self) -> Option<HostRequest> {
        let (op, start) = if let Some(&op) = PASSES.get(self.phase) {
            let start = self.pos;
            self.pos += self.record_pages;
            if self.pos >= self.file_pages {
                self.phase += 1;
                self.pos = 0;
            }
            (op, start)
        } else {
            if self.random_ops == 0 {
                return None;
            }
            self.random_ops -= 1;
            let records = self.file_pages.div_ceil(self.record_pages);
            let start = self.rng.gen_range(0..records) * self.record_pages;
            let op = if self.rng.gen::<f64>() < self.read_fraction { Op::Read } else { Op::Write };
            (op, start)
        };
        let pages = self.record_pages.min(self.file_pages - start);
        let t = self.clock.tick(&mut self.rng);
        Some(request(op, start, pages, self.page_size, t))
    }
}
