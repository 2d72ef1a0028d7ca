//! Queued collection for the page map under `gc_model = "mqsim"`
//! (`gc_queue = true`): the flash commands of garbage collection and every
//! host program wait in per-die queues and go to the die as it falls free,
//! as the matched simulator's transaction scheduler issues them. Data moves when the FTL decides (a victim's pages
//! when it is picked, a host page when its write arrives); only the time of
//! each command is booked here, later ([`crate::Io::untimed`] then
//! [`crate::Io::reserve_read`] and the like).
//!
//! What a die takes when it falls free, by the matched simulator's rules with
//! its garbage collection not preemptible (`Preemptible_GC_Enabled = false`,
//! so always in its urgent mode; `TSU_Priority_OutOfOrder.cpp`,
//! `service_read_transaction`, `service_write_transaction`,
//! `service_erase_transaction`, tried in that order by
//! `TSU_Base::handle_chip_idle_signal`):
//!
//! 1. a garbage-collection read, the first queued on the die (with copyback
//!    on, `device.copyback`, the page's whole move: read and program inside
//!    the plane, one command);
//! 2. else a garbage-collection program, the first queued; a read played
//!    queues its page's program, at the next page of its plane's copy block
//!    (the matched simulator allocates it then,
//!    `GC_and_WL_Unit_Base.cpp`, `handle_transaction_serviced_signal_from_PHY`);
//! 3. else an erase whose victim's reads and programs were all played
//!    (`TSU_Base.h`, the erase waits for its page movements);
//! 4. else (host reads first, held by the dispatcher until the die has no
//!    garbage collection queued: [`GcQueue::collecting`]) a host program,
//!    the first queued.
//!
//! On a chip with multi-plane commands (`device.commands.multi_plane`),
//! each command takes with it, as one multi-plane command, the first queued
//! one of the same kind of each other plane of the die at the same page
//! offset (a garbage-collection program also a queued host program of that
//! plane at that offset, the matched simulator's second source queue):
//! `TSU_Base::issue_command_to_chip`. Erases pair with any ready erase of
//! another plane. Garbage collection's reads do not take host reads with
//! them, as the matched simulator's may: host reads wait in the dispatcher,
//! not here.
//!
//! The page offsets a die's queue pairs by are those the matched simulator
//! would give: a victim's valid pages where they are, a host page where its
//! write put it (its data is programmed at once, in order), a copy the next
//! page of its plane's copy block in the order its read is played (the data
//! went, in the order the victim was scanned, to pages of the same block).

use std::collections::VecDeque;

use ftlab_nand::{BlockId, DieId, SimTime};

use rustc_hash::FxHashMap;

use crate::{Flash, FtlError, Io, Purpose};

/// One queued command of a plane.
#[derive(Debug, Clone, Copy)]
struct Item {
    /// Queue order over the whole device.
    seq: u64,
    /// Its page offset in its block (erases: 0).
    offset: u32,
    /// A garbage-collection command's victim: its block, and the number of
    /// this collection of it (a block may be picked again, its data-side
    /// erase done, before the first collection's commands are all played).
    victim: BlockId,
    pick: u64,
    /// A host program's command number ([`Io::token`]) and bytes.
    token: u64,
    bytes: u32,
    /// Taken out of order by a multi-plane command; dropped when it reaches
    /// the front.
    taken: bool,
}

/// A plane's queued commands, each kind first come, first served.
#[derive(Debug, Default, Clone)]
struct PlaneQueue {
    reads: VecDeque<Item>,
    /// Per page offset, the reads queued at it and not taken, by queue order.
    reads_at: Vec<VecDeque<u64>>,
    programs: VecDeque<Item>,
    erases: VecDeque<Item>,
    host: VecDeque<Item>,
}

impl PlaneQueue {
    fn drop_taken(q: &mut VecDeque<Item>) {
        while q.front().is_some_and(|i| i.taken) {
            q.pop_front();
        }
    }

    /// The first item of `q` not taken at `offset`, where `q`'s items run
    /// over consecutive page offsets (wrapping at `ppb`) in queue order: its
    /// position follows from the front's offset.
    fn find_consecutive(q: &VecDeque<Item>, offset: u32, ppb: u32) -> Option<usize> {
        let front = q.front()?;
        let mut k = ((offset + ppb - front.offset % ppb) % ppb) as usize;
        while let Some(item) = q.get(k) {
            if item.offset != offset {
                return None;
            }
            if !item.taken {
                return Some(k);
            }
            k += ppb as usize;
        }
        None
    }
}

/// What the dies were given, for the FTL to act on.
#[derive(Debug, Default)]
pub(super) struct Played {
    /// Host programs: command number and finish.
    pub hosts: Vec<(u64, SimTime)>,
    /// Erases: plane, block, finish.
    pub erases: Vec<(u32, BlockId, SimTime)>,
}

/// The per-die queues (see the module documentation).
#[derive(Debug, Clone)]
pub(super) struct GcQueue {
    on: bool,
    /// Whether the chip has multi-plane commands: without them each command
    /// goes alone.
    pairs: bool,
    /// Whether garbage collection moves pages by copyback: a read played is
    /// its page's whole move (read and program inside the plane).
    copyback: bool,
    planes_per_die: u32,
    pages_per_block: u32,
    planes: Vec<PlaneQueue>,
    /// Per die: commands queued, and those of them garbage collection's.
    die_work: Vec<u32>,
    die_gc: Vec<u32>,
    queued: usize,
    seq: u64,
    /// Per plane: the page offset its next garbage-collection program takes.
    gc_offset: Vec<u32>,
    /// Per collection in flight: its reads and programs not played yet.
    left: FxHashMap<u64, u32>,
    picks: u64,
    /// A command's parts (plane, item, whether garbage collection's) and
    /// their bytes, kept to reuse their room.
    group: Vec<(usize, Item, bool)>,
    bytes: Vec<u32>,
}

impl GcQueue {
    pub fn new(planes: u32, planes_per_die: u32, pages_per_block: u32, pairs: bool, copyback: bool) -> Self {
        let plane = PlaneQueue { reads_at: vec![VecDeque::new(); pages_per_block as usize], ..PlaneQueue::default() };
        GcQueue {
            on: false,
            pairs,
            copyback,
            planes_per_die: planes_per_die.max(1),
            pages_per_block,
            planes: vec![plane; planes as usize],
            die_work: vec![0; (planes / planes_per_die.max(1)) as usize],
            die_gc: vec![0; (planes / planes_per_die.max(1)) as usize],
            queued: 0,
            seq: 0,
            gc_offset: vec![0; planes as usize],
            left: FxHashMap::default(),
            picks: 0,
            group: Vec::new(),
            bytes: Vec::new(),
        }
    }

    pub fn on(&self) -> bool {
        self.on
    }

    pub fn set_on(&mut self, on: bool) -> Result<(), FtlError> {
        if !on && self.queued > 0 {
            return Err(FtlError::BadCommand(format!(
                "gc_queue turned off with {} flash commands still queued: play them first",
                self.queued
            )));
        }
        self.on = on;
        Ok(())
    }

    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Whether die `die` has garbage collection's commands queued: its host
    /// reads wait for them (the matched simulator's urgent mode).
    #[inline]
    pub fn collecting(&self, die: u32) -> bool {
        self.on && self.die_gc[die as usize] > 0
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    fn item(&mut self, offset: u32, victim: BlockId, pick: u64, token: u64, bytes: u32) -> Item {
        Item { seq: self.next_seq(), offset, victim, pick, token, bytes, taken: false }
    }

    /// Whether collection `pick`'s reads and programs were all played.
    fn copied(&self, pick: u64) -> bool {
        self.left.get(&pick).is_none_or(|&n| n == 0)
    }

    /// One more of collection `pick`'s reads or programs played.
    fn played_one(&mut self, pick: u64) {
        if let Some(n) = self.left.get_mut(&pick) {
            *n = n.saturating_sub(1);
        }
    }

    /// Counts `n` more (or fewer) commands queued in `plane`, of garbage
    /// collection's if `gc`.
    fn count(&mut self, plane: u32, n: i64, gc: bool) {
        let die = (plane / self.planes_per_die) as usize;
        self.die_work[die] = (i64::from(self.die_work[die]) + n) as u32;
        if gc {
            self.die_gc[die] = (i64::from(self.die_gc[die]) + n) as u32;
        }
        self.queued = (self.queued as i64 + n) as usize;
    }

    /// Queues the collection of `victim` in `plane`: a read of each page at
    /// `offsets` (its valid pages, already moved), and its erase.
    pub fn push_victim(&mut self, plane: u32, victim: BlockId, offsets: impl Iterator<Item = u32>) {
        self.picks += 1;
        let pick = self.picks;
        let mut n = 0u32;
        for offset in offsets {
            let item = self.item(offset, victim, pick, 0, 0);
            let q = &mut self.planes[plane as usize];
            q.reads.push_back(item);
            q.reads_at[offset as usize].push_back(item.seq);
            n += 1;
        }
        self.left.insert(pick, 2 * n);
        let item = self.item(0, victim, pick, 0, 0);
        self.planes[plane as usize].erases.push_back(item);
        self.count(plane, i64::from(n) + 1, true);
    }

    /// Queues a host program of command `token` to page `offset` of
    /// `plane`'s host block, moving `bytes` (0: the whole page).
    pub fn push_host(&mut self, plane: u32, offset: u32, bytes: u32, token: u64) {
        let item = self.item(offset, BlockId(u32::MAX), 0, token, bytes);
        self.planes[plane as usize].host.push_back(item);
        self.count(plane, 1, false);
    }

    /// When the first die with commands queued falls free, at or after `now`
    /// ([`SimTime::MAX`]: none queued).
    pub fn next_play(&self, flash: &Flash, now: SimTime) -> SimTime {
        let mut next = SimTime::MAX;
        for (d, &work) in self.die_work.iter().enumerate() {
            if work > 0 {
                next = next.min(flash.nand().die_free_at(DieId(d as u32)).max(now));
            }
        }
        next
    }

    /// Has each die with commands queued and free at `io.now()` take its next
    /// command (see the module documentation); what was given goes into
    /// `played`.
    pub fn play(&mut self, io: &mut Io, played: &mut Played) -> Result<(), FtlError> {
        let now = io.now();
        for d in 0..self.die_work.len() {
            if self.die_work[d] == 0 || io.die_free_at(DieId(d as u32)) > now {
                continue;
            }
            self.play_die(io, d as u32, played)?;
        }
        Ok(())
    }

    /// The planes of die `d`.
    fn planes_of(&self, d: u32) -> std::ops::Range<usize> {
        let first = (d * self.planes_per_die) as usize;
        first..first + self.planes_per_die as usize
    }

    /// The planes of die `d` a command may take a partner from: none
    /// without multi-plane commands.
    fn partners_of(&self, d: u32) -> std::ops::Range<usize> {
        if self.pairs {
            self.planes_of(d)
        } else {
            0..0
        }
    }

    /// The plane of die `d` whose first item of the kind `pick` selects came
    /// first, if any plane has one (and `ready` accepts it).
    fn lead(
        &self,
        d: u32,
        pick: impl Fn(&PlaneQueue) -> &VecDeque<Item>,
        ready: impl Fn(&Item) -> bool,
    ) -> Option<usize> {
        self.planes_of(d)
            .filter_map(|p| pick(&self.planes[p]).front().filter(|i| ready(i)).map(|i| (i.seq, p)))
            .min()
            .map(|(_, p)| p)
    }

    fn play_die(&mut self, io: &mut Io, d: u32, played: &mut Played) -> Result<(), FtlError> {
        let mut group = std::mem::take(&mut self.group);
        let mut bytes = std::mem::take(&mut self.bytes);
        group.clear();
        bytes.clear();
        let r = self.play_die_with(io, d, played, &mut group, &mut bytes);
        self.group = group;
        self.bytes = bytes;
        r
    }

    /// [`GcQueue::play_die`], with `group` and `bytes` to reuse.
    fn play_die_with(
        &mut self,
        io: &mut Io,
        d: u32,
        played: &mut Played,
        group: &mut Vec<(usize, Item, bool)>,
        bytes: &mut Vec<u32>,
    ) -> Result<(), FtlError> {
        let die = DieId(d);
        let ppb = self.pages_per_block;
        if let Some(lead) = self.lead(d, |q| &q.reads, |_| true) {
            let first = self.planes[lead].reads.pop_front().expect("lead has a read");
            self.planes[lead].reads_at[first.offset as usize].pop_front();
            group.push((lead, first, true));
            for p in self.partners_of(d) {
                let q = &mut self.planes[p];
                if p == lead {
                    continue;
                }
                let Some(seq) = q.reads_at[first.offset as usize].pop_front() else { continue };
                if let Ok(k) = q.reads.binary_search_by_key(&seq, |i| i.seq) {
                    q.reads[k].taken = true;
                    group.push((p, q.reads[k], true));
                }
            }
            for &(p, item, _) in group.iter() {
                PlaneQueue::drop_taken(&mut self.planes[p].reads);
                self.played_one(item.pick);
                if self.copyback {
                    // Read and programmed in one command.
                    self.played_one(item.pick);
                    self.count(p as u32, -1, true);
                    continue;
                }
                // Its program, at the next page of the plane's copy block.
                let offset = self.gc_offset[p];
                self.gc_offset[p] = (offset + 1) % ppb;
                let program = Item { seq: self.next_seq(), offset, taken: false, ..item };
                self.planes[p].programs.push_back(program);
            }
            if self.copyback {
                io.reserve_copyback(die, group.len() as u32, Purpose::Gc)?;
            } else {
                // Each read's program joins the queue: the count stands.
                io.reserve_read(die, group.len() as u32, Purpose::Gc)?;
            }
            return Ok(());
        }
        if let Some(lead) = self.lead(d, |q| &q.programs, |_| true) {
            let first = self.planes[lead].programs.pop_front().expect("lead has a program");
            group.push((lead, first, true));
            for p in self.partners_of(d) {
                if p == lead {
                    continue;
                }
                let q = &mut self.planes[p];
                if let Some(k) = PlaneQueue::find_consecutive(&q.programs, first.offset, ppb) {
                    q.programs[k].taken = true;
                    group.push((p, q.programs[k], true));
                } else if let Some(k) = PlaneQueue::find_consecutive(&q.host, first.offset, ppb) {
                    q.host[k].taken = true;
                    group.push((p, q.host[k], false));
                }
            }
            bytes.extend(group.iter().map(|&(_, i, gc)| if gc { 0 } else { i.bytes }));
            for &(p, item, gc) in group.iter() {
                if gc {
                    PlaneQueue::drop_taken(&mut self.planes[p].programs);
                    self.played_one(item.pick);
                } else {
                    PlaneQueue::drop_taken(&mut self.planes[p].host);
                }
            }
            let span = io.reserve_program(die, bytes, Purpose::Gc)?;
            for &(p, item, gc) in group.iter() {
                if !gc {
                    played.hosts.push((item.token, span.finish));
                }
                self.count(p as u32, -1, gc);
            }
            return Ok(());
        }
        if let Some(lead) = self.lead(d, |q| &q.erases, |i| self.copied(i.pick)) {
            let first = self.planes[lead].erases.pop_front().expect("lead has an erase");
            group.push((lead, first, true));
            for p in self.partners_of(d) {
                if p != lead && self.planes[p].erases.front().is_some_and(|i| self.copied(i.pick)) {
                    group.extend(self.planes[p].erases.pop_front().map(|i| (p, i, true)));
                }
            }
            for (_, item, _) in group.iter() {
                self.left.remove(&item.pick);
            }
            let span = io.reserve_erase(die, group.len() as u32, Purpose::Gc)?;
            for &(p, item, _) in group.iter() {
                played.erases.push((p as u32, item.victim, span.finish));
                self.count(p as u32, -1, true);
            }
            return Ok(());
        }
        if let Some(lead) = self.lead(d, |q| &q.host, |_| true) {
            let first = self.planes[lead].host.pop_front().expect("lead has a host program");
            group.push((lead, first, false));
            for p in self.partners_of(d) {
                if p == lead {
                    continue;
                }
                let q = &mut self.planes[p];
                if let Some(k) = PlaneQueue::find_consecutive(&q.host, first.offset, ppb) {
                    q.host[k].taken = true;
                    group.push((p, q.host[k], false));
                }
            }
            for &(p, _, _) in group.iter() {
                PlaneQueue::drop_taken(&mut self.planes[p].host);
            }
            bytes.extend(group.iter().map(|(_, i, _)| i.bytes));
            let span = io.reserve_program(die, bytes, Purpose::Host)?;
            for &(p, item, _) in group.iter() {
                played.hosts.push((item.token, span.finish));
                self.count(p as u32, -1, false);
            }
            return Ok(());
        }
        Err(FtlError::BadCommand(format!(
            "gc_queue: die {d} has {} commands queued and none it can take",
            self.die_work[d as usize]
        )))
    }
}

#[cfg(test)]
#[path = "gc_queue_tests.rs"]
mod tests;
