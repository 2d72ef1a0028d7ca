//! RFTL, the real-time FTL of Qin et al. 2012 with distributed partial garbage
//! collection, as `001_ca7ecce2bd5249b9.txt` describes it (Sections 1, 3.3 and 7;
//! bounds in Table I, space utilization 1/3 in Table III).
//!
//! Each logical block owns three physical blocks of one plane, chosen at format
//! time: a **primary**, a **buffer** and a **replacement** block. Writes to the
//! logical block are appended to its primary block in order; once the primary is
//! full, updates are appended to the buffer block. The write that fills the buffer
//! starts the logical block's own garbage collection, which runs as partial steps,
//! one after each later write *to that logical block* and never after a read
//! ("RFTL and our scheme only schedule garbage collection tasks after the
//! completion of write tasks, so there is no read performance degradation", 001
//! Section 3.3). Each step either copies at most `copies_per_step` valid pages of
//! the primary and buffer into the replacement block, or erases one of the two:
//! no step is longer than one erase. Writes arriving during the collection are
//! appended to the replacement block. When both old blocks are erased the roles
//! rotate: the replacement becomes the primary, the old primary the buffer and the
//! old buffer the replacement.
//!
//! Space (001 Table III: 1/3): a logical block exports `n` pages of its three
//! blocks' `3 pi`. The replacement block must hold the `<= n` copies plus the
//! writes that arrive during the collection's `ceil(n / k) + 2` steps, so
//! `n + ceil(n / k) + 1 <= pi` ([`RftlConfig::max_pages_per_logical_block`]); with
//! k = 6 and pi = 64 that is 54 pages, a utilization of 0.28 instead of 1/3.
//!
//! Time (001 Table I): reads cost `t_rdpg + t_rdoob` and writes `t_wrpg + t_rdoob`
//! (RFTL keeps the in-block mapping in the OOB area); a command waits at most for
//! one earlier step, so [`RealTime::service_bound`](crate::RealTime::service_bound) is
//! `U(R_T) = max{U(e_r), t_er + U(e_w)}` ([`ftlab_bounds::rftl`], with the channel
//! transfers the simulator charges).
//!
//! When the collection starts: 001 Section 6.1 says "when the primary block ...
//! is full"; here it starts when the primary and the buffer are both full, the
//! buffer taking the updates after the primary and the collection's writes going
//! to the replacement. 001 says neither where writes go during a collection nor
//! when the buffer's pages are reclaimed. An earlier start could only add copies
//! (a collection copies all the logical block's valid pages), so this reading
//! makes RFTL no dearer than 001's (`experiments/lazy-rtgc/README.md`, RFTL).
//! `collect_at = "primary_full"` ([`CollectAt::PrimaryFull`]) takes 001's wording
//! instead, for the ablation there: the collection starts when the primary is
//! full and the buffer is never written.
//!
//! Deviations, and why: the medium is strict (no page may be skipped inside a
//! block), so the primary block is a log in write order rather than a block with
//! fixed page offsets; the newest copy of each page is found through a small RAM
//! index of page positions (two bytes per logical page) that recovery rebuilds from
//! the OOB area, where the paper reads it from the OOB. With `oob_lookup` (the
//! default) every read and write still pays the one OOB read of Table I (tagged
//! [`Purpose::Map`]), so response times stay those of the paper's scheme. A
//! collection interrupted by a power cut is finished during recovery.

use serde::{Deserialize, Serialize};

use ftlab_bounds::ChipParams;
use ftlab_nand::{BlockId, Geometry, NandError, PageKind, Payload, Ppa, SimTime, Timing};

use crate::flash::retry_program;
use crate::mapping::ValidMap;
use crate::{check_lpn, Flash, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn, Purpose};

#[cfg(test)]
mod tests;

/// Configuration of [`Rftl`]. Every field has a documented default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RftlConfig {
    /// Logical pages per logical block. 0 (the default) exports the most the
    /// partial collection can serve, [`RftlConfig::max_pages_per_logical_block`].
    pub pages_per_logical_block: u32,
    /// Valid-page copies per partial step. 0 (the default) copies as many as fit in
    /// one erase time on this chip ([`RftlConfig::max_copies_per_step`]); a larger
    /// value is refused, since it would break the bound.
    pub copies_per_step: u32,
    /// Charge the OOB read of RFTL's address translation (001 Table I) on every
    /// read and write. Default true.
    pub oob_lookup: bool,
    /// When a logical block's collection starts (default `buffer_full`).
    pub collect_at: CollectAt,
}

impl Default for RftlConfig {
    fn default() -> Self {
        RftlConfig {
            pages_per_logical_block: 0,
            copies_per_step: 0,
            oob_lookup: true,
            collect_at: CollectAt::BufferFull,
        }
    }
}

/// When a logical block's partial collection starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CollectAt {
    /// When primary and buffer are both full: the buffer takes the updates after
    /// the primary (the default, see the module documentation).
    BufferFull,
    /// When the primary is full, as 001 Section 6.1 words it: the buffer is then
    /// never written, and the logical block is collected twice as often. An
    /// ablation of the trigger (`experiments/lazy-rtgc`); a medium written this
    /// way cannot be recovered (the roles are not recorded on flash).
    PrimaryFull,
}

/// What [`RftlConfig`] comes to on one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RftlPlan {
    /// Valid-page copies per partial step (`k`).
    pub copies_per_step: u32,
    /// Logical pages per logical block (`n`).
    pub pages_per_logical_block: u32,
}

impl RftlConfig {
    /// Checks the fields that need no device; errors name the field.
    pub fn validate(&self) -> Result<(), FtlError> {
        if self.pages_per_logical_block > u32::from(u16::MAX) / 3 {
            return Err(FtlError::config(
                "ftl.pages_per_logical_block",
                format!(
                    "rftl.pages_per_logical_block must be at most {}, got {}",
                    u16::MAX / 3,
                    self.pages_per_logical_block
                ),
            ));
        }
        Ok(())
    }

    /// The most valid-page copies that fit in one erase time: a copyback is a page
    /// read plus a program inside the die; without copyback each copy also moves
    /// the page over the channel twice.
    pub fn max_copies_per_step(geometry: &Geometry, timing: &Timing, copyback: bool) -> u32 {
        let mut copy = timing.read_ns + timing.program_ns;
        if !copyback {
            copy += 2 * timing.transfer(geometry.page_size + geometry.oob_size).as_ns();
        }
        u32::try_from(timing.erase_ns / copy.max(1)).unwrap_or(u32::MAX)
    }

    /// The largest `n` with `n + ceil(n / k) + 1 <= pi`: the replacement block holds
    /// every copy and one write per step but the last of a collection of
    /// `ceil(n / k) + 2` steps (copies, then two erases).
    pub fn max_pages_per_logical_block(pages_per_block: u32, copies_per_step: u32) -> u32 {
        let k = copies_per_step.max(1);
        (0..pages_per_block).rev().find(|&n| n + n.div_ceil(k) < pages_per_block).unwrap_or(0)
    }

    /// The step size and logical-block size on a device; errors name the field
    /// and the limit.
    pub fn plan(&self, geometry: &Geometry, timing: &Timing, copyback: bool) -> Result<RftlPlan, FtlError> {
        self.validate()?;
        let ppb = geometry.pages_per_block;
        if ppb > u32::from(u16::MAX) / 3 {
            return Err(FtlError::config(
                "device.pages_per_block",
                format!(
                    "rftl needs at most {} pages per block (page positions are 16 bits), the device has {ppb}",
                    u16::MAX / 3
                ),
            ));
        }
        let k_max = Self::max_copies_per_step(geometry, timing, copyback);
        if k_max == 0 {
            return Err(FtlError::config(
                "device.timing",
                format!(
                    "rftl: a page copy takes longer than an erase ({} ns) on this chip, so no partial step is bounded",
                    timing.erase_ns
                ),
            ));
        }
        let k = match self.copies_per_step {
            0 => k_max,
            k if k > k_max => {
                return Err(FtlError::config(
                    "ftl.copies_per_step",
                    format!("rftl.copies_per_step = {k} does not fit in one erase time; at most {k_max} on this chip"),
                ))
            }
            k => k,
        };
        let n_max = Self::max_pages_per_logical_block(ppb, k);
        let n = match self.pages_per_logical_block {
            0 => n_max,
            n if n > n_max => {
                return Err(FtlError::config(
                    "ftl.pages_per_logical_block",
                    format!(
                        "rftl.pages_per_logical_block = {n} leaves too little room for the partial collection; \
                     at most {n_max} with {ppb} pages per block and {k} copies per step"
                    ),
                ))
            }
            n => n,
        };
        if n == 0 {
            return Err(FtlError::config(
                "device.pages_per_block",
                format!("rftl: blocks of {ppb} pages are too small for a partial collection"),
            ));
        }
        Ok(RftlPlan { copies_per_step: k, pages_per_logical_block: n })
    }
}

impl FtlBuilder for RftlConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(Rftl::format(*self, io)?))
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(Rftl::recover(*self, io)?))
    }
}

/// Where a logical block's collection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Writes go to the primary, then to the buffer; the replacement is erased.
    Normal,
    /// Copying the valid pages of the primary (positions `0..pi`) and the buffer
    /// (`pi..2 pi`) into the replacement; `cursor` is the next position to look at.
    Copy { cursor: u16 },
    /// Next step erases the primary.
    ErasePrimary,
    /// Next step erases the buffer, then the roles rotate.
    EraseBuffer,
}

/// Role indices into [`LogicalBlock::blocks`].
const PRIMARY: usize = 0;
const BUFFER: usize = 1;
const REPLACEMENT: usize = 2;

/// A logical block: its three physical blocks (fixed), which of them plays which
/// role, their write pointers and the collection's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LogicalBlock {
    blocks: [BlockId; 3],
    /// `roles[PRIMARY]` etc.: indices into `blocks`.
    roles: [u8; 3],
    /// Programmed pages of each of `blocks`.
    written: [u16; 3],
    phase: Phase,
}

impl LogicalBlock {
    #[inline]
    fn role(&self, r: usize) -> usize {
        usize::from(self.roles[r])
    }
}

/// No physical copy.
const UNMAPPED: u16 = u16::MAX;

/// The RFTL scheme.
#[derive(Debug)]
pub struct Rftl {
    config: RftlConfig,
    plan: RftlPlan,
    geometry: Geometry,
    logical_pages: u32,
    lblocks: Vec<LogicalBlock>,
    /// Per logical page: `j * pi + page` of its newest copy in block `j` of its
    /// logical block, or [`UNMAPPED`].
    position: Vec<u16>,
    valid: ValidMap,
    bound: SimTime,
}

impl Rftl {
    /// The scheme with no data, its logical blocks laid over the good blocks: the
    /// good blocks of each plane in triples, logical blocks taken from the planes
    /// in turn so that neighbouring logical blocks sit on different dies.
    fn empty(config: RftlConfig, io: &Io) -> Result<Self, FtlError> {
        let g = *io.geometry();
        let timing = *io.timing();
        let plan = config.plan(&g, &timing, io.copyback_enabled())?;
        let planes = g.total_blocks() / g.blocks_per_plane;
        let mut per_plane: Vec<Vec<[BlockId; 3]>> = Vec::with_capacity(planes as usize);
        for p in 0..planes {
            let good: Vec<BlockId> = (p * g.blocks_per_plane..(p + 1) * g.blocks_per_plane)
                .map(BlockId)
                .filter(|&b| !io.is_bad(b))
                .collect();
            per_plane.push(good.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect());
        }
        // Planes ordered plane-in-die first, then die, so consecutive picks change die.
        let order: Vec<usize> = {
            let ppd = g.planes_per_die;
            (0..ppd).flat_map(|pl| (0..g.dies()).map(move |d| (d * ppd + pl) as usize)).collect()
        };
        let mut lblocks = Vec::new();
        for round in 0.. {
            let before = lblocks.len();
            for &p in &order {
                if let Some(&blocks) = per_plane[p].get(round) {
                    lblocks.push(LogicalBlock { blocks, roles: [0, 1, 2], written: [0; 3], phase: Phase::Normal });
                }
            }
            if lblocks.len() == before {
                break;
            }
        }
        let logical = lblocks.len() as u64 * u64::from(plan.pages_per_logical_block);
        let logical_pages =
            u32::try_from(logical).map_err(|_| FtlError::config("device", "rftl: logical space too large"))?;
        if logical_pages == 0 {
            return Err(FtlError::config("device", "the device is too small for rftl: no plane has three good blocks"));
        }
        let page = timing.transfer(g.page_size + g.oob_size).as_ns();
        let chip = ChipParams::from_ns(
            timing.read_ns + page,
            timing.program_ns + page,
            timing.read_oob_ns + timing.transfer(g.oob_size.max(1)).as_ns(),
            timing.erase_ns,
            g.pages_per_block,
        )
        .map_err(|e| FtlError::config("device.timing", format!("rftl bound: {e}")))?;
        let bound = SimTime((ftlab_bounds::rftl(&chip).max_response_us * 1_000.0).round() as u64);
        Ok(Rftl {
            config,
            plan,
            geometry: g,
            logical_pages,
            lblocks,
            position: vec![UNMAPPED; logical_pages as usize],
            valid: ValidMap::new(g.total_pages()),
            bound,
        })
    }

    /// RFTL on a freshly formatted medium.
    pub fn format(config: RftlConfig, io: &mut Io) -> Result<Self, FtlError> {
        Self::empty(config, io)
    }

    /// What the configuration came to on this device.
    pub fn plan(&self) -> RftlPlan {
        self.plan
    }

    /// Rebuilds RFTL from the medium. Per logical block: every programmed page's
    /// OOB is read and the newest sequence number of each logical page wins; a
    /// block with no readable page (a torn erase, or only a torn page) is erased
    /// again; the blocks holding data are ordered by their newest page, the oldest
    /// becoming the primary; a collection a cut interrupted (three blocks with data,
    /// or a full primary and buffer) is finished on the spot.
    pub fn recover(config: RftlConfig, io: &mut Io) -> Result<Self, FtlError> {
        if config.collect_at == CollectAt::PrimaryFull {
            return Err(FtlError::config(
                "ftl.collect_at",
                "rftl: recovery needs collect_at = \"buffer_full\" (with \"primary_full\" the block roles cannot be \
                 told from the medium)",
            ));
        }
        let mut ftl = Self::empty(config, io)?;
        let g = ftl.geometry;
        let n = ftl.plan.pages_per_logical_block;
        let mut newest = vec![0u64; ftl.logical_pages as usize];
        for lb in 0..ftl.lblocks.len() {
            let first_lpn = lb as u32 * n;
            let mut lblock = ftl.lblocks[lb];
            let mut newest_in_block = [0u64; 3];
            for (j, newest_j) in newest_in_block.iter_mut().enumerate() {
                let b = lblock.blocks[j];
                let programmed = io.programmed_pages(b);
                let mut readable = 0;
                for page in 0..programmed {
                    let ppa = g.ppa(b, page);
                    match io.read_oob(ppa, Purpose::Recovery) {
                        Ok(Some(oob)) => {
                            readable += 1;
                            *newest_j = (*newest_j).max(oob.seq);
                            let l = oob.lpn.wrapping_sub(first_lpn);
                            if oob.kind == PageKind::Data && l < n && oob.seq > newest[oob.lpn as usize] {
                                newest[oob.lpn as usize] = oob.seq;
                                ftl.position[oob.lpn as usize] = (j as u32 * g.pages_per_block + page) as u16;
                            }
                        }
                        Ok(None) | Err(NandError::Uncorrectable(_)) => {}
                        Err(e) => return Err(FtlError::Recovery(format!("scanning {ppa:?}: {e}"))),
                    }
                }
                let mut written = programmed;
                if programmed > 0 && readable == 0 && io.reclaim(b, Purpose::Recovery)? {
                    written = 0;
                }
                if io.is_grown_bad(b) {
                    // Never written again: it counts as full.
                    written = g.pages_per_block;
                }
                lblock.written[j] = written as u16;
            }
            let mut with_data: Vec<u8> = (0..3).filter(|&j| lblock.written[usize::from(j)] > 0).collect();
            with_data.sort_by_key(|&j| newest_in_block[usize::from(j)]);
            let mut roles = with_data.clone();
            roles.extend((0..3).filter(|j| !with_data.contains(j)));
            lblock.roles = [roles[0], roles[1], roles[2]];
            let ppb = g.pages_per_block as u16;
            let full = |r: usize| lblock.written[lblock.role(r)] == ppb;
            if with_data.len() == 3 || (full(PRIMARY) && full(BUFFER)) {
                lblock.phase = Phase::Copy { cursor: 0 };
            }
            ftl.lblocks[lb] = lblock;
            for lpn in first_lpn..first_lpn + n {
                if let Some(ppa) = ftl.ppa_of(lpn) {
                    ftl.valid.set(ppa);
                }
            }
            while ftl.lblocks[lb].phase != Phase::Normal {
                match ftl.step(io, lb, Purpose::Recovery) {
                    Ok(()) => {}
                    // A block of it went bad: the logical block keeps its data
                    // readable and refuses writes (see `step`).
                    Err(e)
                        if e.kind() == crate::ErrorKind::NoSpace
                            || matches!(e, FtlError::Nand(NandError::ProgramFailed { .. })) =>
                    {
                        break
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(ftl)
    }

    /// Where the newest copy of `lpn` is.
    #[inline]
    fn ppa_of(&self, lpn: u32) -> Option<Ppa> {
        let pos = self.position[lpn as usize];
        (pos != UNMAPPED).then(|| {
            let ppb = self.geometry.pages_per_block;
            let lb = &self.lblocks[(lpn / self.plan.pages_per_logical_block) as usize];
            self.geometry.ppa(lb.blocks[usize::from(pos) / ppb as usize], u32::from(pos) % ppb)
        })
    }

    /// The block (index into `blocks`) the next write to logical block `lb` goes to.
    fn write_target(&self, lb: usize) -> Option<usize> {
        let l = &self.lblocks[lb];
        let ppb = self.geometry.pages_per_block as u16;
        let has_room = |r: usize| l.written[l.role(r)] < ppb;
        match l.phase {
            Phase::Normal if has_room(PRIMARY) => Some(l.role(PRIMARY)),
            Phase::Normal if has_room(BUFFER) => Some(l.role(BUFFER)),
            Phase::Normal => None,
            _ => has_room(REPLACEMENT).then(|| l.role(REPLACEMENT)),
        }
    }

    /// One partial step of logical block `lb`'s collection: at most
    /// `copies_per_step` valid-page copies, or one erase.
    fn step(&mut self, io: &mut Io, lb: usize, purpose: Purpose) -> Result<(), FtlError> {
        let g = self.geometry;
        let ppb = g.pages_per_block;
        let n = self.plan.pages_per_logical_block;
        let mut l = self.lblocks[lb];
        match l.phase {
            Phase::Normal => {}
            Phase::Copy { cursor } => {
                let (mut cursor, mut copied) = (u32::from(cursor), 0);
                let r = l.role(REPLACEMENT);
                while cursor < 2 * ppb && copied < self.plan.copies_per_step {
                    let j = l.role(if cursor < ppb { PRIMARY } else { BUFFER });
                    let src = g.ppa(l.blocks[j], cursor % ppb);
                    cursor += 1;
                    if !self.valid.get(src) {
                        continue;
                    }
                    let page = u32::from(l.written[r]);
                    if page >= ppb {
                        self.lblocks[lb] = l;
                        return Err(FtlError::DeviceFull(if io.is_grown_bad(l.blocks[r]) {
                            format!(
                                "rftl: replacement block {:?} of logical block {lb} went bad, and RFTL has no spare \
                                 block: the logical block's data stays readable, it takes no more writes",
                                l.blocks[r]
                            )
                        } else {
                            format!("rftl: replacement block {:?} of logical block {lb} overflowed", l.blocks[r])
                        }));
                    }
                    let dst = g.ppa(l.blocks[r], page);
                    let oob = match io.copy(src, dst, purpose) {
                        Ok(oob) => oob,
                        Err(e) => {
                            if matches!(e, NandError::ProgramFailed { .. }) {
                                l.written[r] = ppb as u16;
                            }
                            // The copies so far stand; the step resumes at `src`.
                            l.phase = Phase::Copy { cursor: (cursor - 1) as u16 };
                            self.lblocks[lb] = l;
                            return Err(e.into());
                        }
                    };
                    l.written[r] += 1;
                    debug_assert_eq!(self.ppa_of(oob.lpn), Some(src));
                    debug_assert_eq!(oob.lpn / n, lb as u32);
                    self.valid.clear(src);
                    self.valid.set(dst);
                    self.position[oob.lpn as usize] = (r as u32 * ppb + page) as u16;
                    copied += 1;
                }
                l.phase = if cursor < 2 * ppb {
                    Phase::Copy { cursor: cursor as u16 }
                } else if copied > 0 {
                    Phase::ErasePrimary
                } else {
                    // Nothing left to copy: this step is the primary's erase.
                    self.erase(io, &mut l, PRIMARY, purpose)?;
                    Self::after_primary_erase(&mut l)
                };
            }
            Phase::ErasePrimary => {
                self.erase(io, &mut l, PRIMARY, purpose)?;
                l.phase = Self::after_primary_erase(&mut l);
            }
            Phase::EraseBuffer => {
                self.erase(io, &mut l, BUFFER, purpose)?;
                l.roles = [l.roles[REPLACEMENT], l.roles[PRIMARY], l.roles[BUFFER]];
                l.phase = Phase::Normal;
            }
        }
        self.lblocks[lb] = l;
        Ok(())
    }

    /// The phase after the primary's erase: the buffer's erase, or, when the
    /// buffer was never written (`CollectAt::PrimaryFull`), the roles rotate now.
    fn after_primary_erase(l: &mut LogicalBlock) -> Phase {
        if l.written[l.role(BUFFER)] > 0 {
            Phase::EraseBuffer
        } else {
            l.roles = [l.roles[REPLACEMENT], l.roles[PRIMARY], l.roles[BUFFER]];
            Phase::Normal
        }
    }

    /// One try at writing `lpn` (see [`Ftl::write`]), then the logical block's
    /// partial collection step.
    fn write_once(&mut self, io: &mut Io, lpn: Lpn, data: Payload, _hint: &Hint) -> Result<(), FtlError> {
        check_lpn(lpn, self.logical_pages)?;

        let g = self.geometry;
        let ppb = g.pages_per_block;
        let lb = (lpn.0 / self.plan.pages_per_logical_block) as usize;
        let j = self.write_target(lb).ok_or_else(|| {
            FtlError::DeviceFull(format!("rftl: logical block {lb} has no free page (collection fell behind)"))
        })?;
        let old = self.ppa_of(lpn.0);
        let page = u32::from(self.lblocks[lb].written[j]);
        let ppa = g.ppa(self.lblocks[lb].blocks[j], page);
        if self.config.oob_lookup {
            // Table I's t_rdoob: the old copy's OOB, or the free page's.
            io.read_oob(old.unwrap_or(ppa), Purpose::Map)?;
        }
        io.program(ppa, lpn.0, PageKind::Data, data, Purpose::Host)?;
        self.lblocks[lb].written[j] += 1;
        if let Some(old) = old {
            io.supersede(old);
            self.valid.clear(old);
        }
        self.valid.set(ppa);
        self.position[lpn.0 as usize] = (j as u32 * ppb + page) as u16;
        io.ack();
        let at_primary = self.config.collect_at == CollectAt::PrimaryFull;
        let l = &mut self.lblocks[lb];
        let full = |r: usize| u32::from(l.written[l.role(r)]) == ppb;
        if l.phase == Phase::Normal && full(PRIMARY) && (at_primary || full(BUFFER)) {
            l.phase = Phase::Copy { cursor: 0 };
        }
        // The partial step after the write: not in its response time.
        self.step(io, lb, Purpose::Gc)
    }

    fn erase(&mut self, io: &mut Io, l: &mut LogicalBlock, role: usize, purpose: Purpose) -> Result<(), FtlError> {
        let j = l.role(role);
        let ppb = self.geometry.pages_per_block;
        debug_assert_eq!(self.valid.count(self.geometry.ppa(l.blocks[j], 0), ppb), 0);
        // A block gone bad stays full: never written again.
        if io.reclaim(l.blocks[j], purpose)? {
            l.written[j] = 0;
        } else {
            l.written[j] = self.geometry.pages_per_block as u16;
        }
        Ok(())
    }
}

impl Ftl for Rftl {
    fn name(&self) -> &'static str {
        "rftl"
    }

    fn logical_pages(&self) -> u32 {
        self.logical_pages
    }

    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        check_lpn(lpn, self.logical_pages)?;
        let Some(ppa) = self.ppa_of(lpn.0) else {
            return Ok(None);
        };
        if self.config.oob_lookup {
            io.read_oob(ppa, Purpose::Map)?;
        }
        let (data, _) = io.read(ppa, Purpose::Host)?;
        Ok(Some(data))
    }

    /// Writes `lpn`; when the program fails, the block it went bad in counts as
    /// full (never written again, its pages moved off by the next collection) and
    /// the write is tried again in the logical block's next block, up to
    /// [`PROGRAM_ATTEMPTS`](crate::flash::PROGRAM_ATTEMPTS) times.
    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
        retry_program(
            self,
            |s| s.write_once(io, lpn, data.clone(), hint),
            |s, ppa| {
                let b = s.geometry.block_of(ppa);
                for l in &mut s.lblocks {
                    if let Some(j) = l.blocks.iter().position(|&x| x == b) {
                        l.written[j] = s.geometry.pages_per_block as u16;
                    }
                }
            },
        )
    }

    fn trim(&mut self, _io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        check_lpn(lpn, self.logical_pages)?;
        if let Some(old) = self.ppa_of(lpn.0) {
            self.valid.clear(old);
            self.position[lpn.0 as usize] = UNMAPPED;
        }
        Ok(())
    }

    fn ram_bytes(&self) -> u64 {
        self.position.len() as u64 * 2
            + self.valid.ram_bytes()
            + self.lblocks.len() as u64 * std::mem::size_of::<LogicalBlock>() as u64
    }

    fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
        let g = &self.geometry;
        let n = self.plan.pages_per_logical_block;
        let mut per_block = vec![0u32; g.total_blocks() as usize];
        for lpn in 0..self.logical_pages {
            let Some(ppa) = self.ppa_of(lpn) else { continue };
            if !self.valid.get(ppa) {
                return Err(format!("lpn {lpn} maps to {ppa:?}, which is not marked valid"));
            }
            match flash.nand().peek_oob(ppa) {
                Some(oob) if oob.lpn == lpn && oob.kind == PageKind::Data => {}
                other => return Err(format!("lpn {lpn} maps to {ppa:?}, whose OOB is {other:?}")),
            }
            per_block[g.block_of(ppa).0 as usize] += 1;
        }
        for (lb, l) in self.lblocks.iter().enumerate() {
            let mut valid_total = 0;
            for j in 0..3 {
                let b = l.blocks[j];
                let counted = self.valid.count(g.ppa(b, 0), g.pages_per_block);
                if counted != per_block[b.0 as usize] {
                    return Err(format!("block {b:?}: {} mapped pages, {counted} valid bits", per_block[b.0 as usize]));
                }
                // A block gone bad counts as full.
                let full = flash.nand().is_grown_bad(b) && u32::from(l.written[j]) == g.pages_per_block;
                if u32::from(l.written[j]) != flash.nand().programmed_pages(b) && !full {
                    return Err(format!(
                        "block {b:?}: {} pages written by RFTL, {} on the medium",
                        l.written[j],
                        flash.nand().programmed_pages(b)
                    ));
                }
                valid_total += counted;
            }
            if valid_total > n {
                return Err(format!("logical block {lb} holds {valid_total} valid pages, more than its {n}"));
            }
            if l.phase == Phase::Normal
                && l.written[l.role(REPLACEMENT)] != 0
                && !flash.nand().is_grown_bad(l.blocks[l.role(REPLACEMENT)])
            {
                return Err(format!("logical block {lb}: replacement block written outside a collection"));
            }
        }
        Ok(())
    }

    fn capabilities(&self) -> crate::Capabilities<'_> {
        crate::Capabilities { realtime: Some(self), placement: None }
    }
}

impl crate::RealTime for Rftl {
    fn service_bound(&self) -> Option<SimTime> {
        Some(self.bound)
    }
}

/// The registry's entries for this module's schemes ([`crate::registry`]).
pub const SCHEMES: [crate::entry::Scheme; 1] = [crate::entry::Scheme {
    name: "rftl",
    summary: "RFTL (001): primary, buffer and replacement block per logical block, partial GC after writes only",
    paper: "001 Section 6 (Qin et al. 2012)",
    admits_tasks: false,
    bounds: true,
    build: |p, _| crate::entry::configured("rftl", RftlConfig::default(), p, RftlConfig::validate),
}];
