//! The page map with MQSim's garbage collection (`gc_model = "mqsim"` of
//! [`PageMapConfig`]): the model to pick when a result is to be compared with,
//! or carried over from, MQSim (CMU SAFARI), the SSD simulator this model
//! matches. Mapping, trim, reads and recovery are the page map's
//! ([`PageCore`]); what differs is where pages go and how garbage is collected:
//!
//! - **Planes, not dies.** A logical page always lives in one plane, chosen
//!   from its number by one of the matched simulator's static allocation
//!   schemes ([`PlaneAllocationScheme`], `plane_allocation_scheme`): the
//!   order in which consecutive pages run over channels, ways, dies and
//!   planes, by default `CWDP` (channel first, its default). Each plane has its own
//!   pool of free blocks, its own open block for host data and one for pages
//!   moved by garbage collection, and its own greedy victims
//!   ([`PlanePickers`]): a plane's garbage collection copies inside the plane.
//! - **One block held for translation pages.** At format (and after recovery)
//!   each plane takes one free block out of its pool as the matched
//!   simulator's translation write frontier; with the whole map in RAM
//!   nothing is written there, so it only narrows the pool. After recovery a
//!   plane left with one free block or none keeps it free instead: a power
//!   cut closes the open blocks, and its collection's copies need a block.
//! - **The trigger.** A plane collects when its free pool is *below* the
//!   threshold `T = max(gc_free_blocks / planes, 1, N)` blocks (the configured
//!   device-wide reserve spread over the planes, rounded down, raised to `N =
//!   gc_max_victims_per_plane`): one greedy victim per trigger, a trigger
//!   being a plane's open block (host or GC) filling up and a new one taken
//!   from the pool, or an erase of the plane finishing while its pool is
//!   below `N`; at most `N` victims of a plane are in flight (picked, not yet
//!   erased). A victim with no invalid page is never taken.
//! - **Victims in flight.** A victim's valid pages are copied and its erase is
//!   issued when it is picked, so the set of pages copied is the set valid at
//!   that moment (a page the host overwrites later has been copied all the
//!   same); the block is back in its plane's pool only when its erase has
//!   finished on the die's timeline, so victims in flight count neither as
//!   free nor as candidates, and the trigger keeps firing while they are
//!   pending.
//! - **Stalled writes.** A host write to a plane whose pool is below `N` waits
//!   for the plane's oldest erase in flight (each finishing erase may pick
//!   another victim) until the pool is back at `N`; a copy that finds its
//!   plane without a free block waits the same way. A wait is recorded in the
//!   FTL's books as the block's early return; the write's program is issued
//!   after the erase on the same die, so its timing includes the wait.
//! - **Queued collection** (`gc_queue`, turned on by a per-die dispatcher:
//!   [`crate::DieQueues`]). A victim's pages still move, and its erase is
//!   still carried out, when it is picked, and a host page is placed when
//!   its write arrives; but the time of each of those commands is booked
//!   from per-die queues as the die falls free, garbage collection first
//!   and the planes of a die paired at one page offset
//!   (the queue module, `gc_queue.rs`, has the rules). A victim is back in its
//!   plane's pool when its erase, so booked, finishes; a host write completes
//!   when its program does. Without it, a victim's copies and erase are booked
//!   on the die's timeline the moment it is picked, one plane at a time, and
//!   a host write's program at once.
//!
//! - **Multi-plane programs.** On a chip with multi-plane programs
//!   (`device.commands.multi_plane`), the pages of one host request (the
//!   units before its last carry [`Hint::more`]) wait in RAM, unprogrammed
//!   and unacknowledged, until its last page (or 4 pages a plane of the
//!   device); then, in request order, each page leads and the later pages
//!   bound for other planes of its die whose host blocks are at the leader's
//!   page offset go out with it as one multi-plane program, as the matched
//!   simulator's scheduler groups transactions (same die, distinct planes,
//!   same page, no same-block rule); the rest are programmed singly. Each
//!   page still has its erases due returned, waits for room in its plane
//!   and fires its plane's triggers. A page whose multi-plane program fails
//!   is retired with its block and programmed singly. Reads, trims, flushes
//!   and idle time program what waits first. Only a request's own pages are
//!   grouped: the matched simulator also groups pages of different requests
//!   and garbage collection's, waiting for the same die. The pages of a
//!   request share a die only where the scheme puts consecutive pages on
//!   one die's planes: plane first (`P...`), or a request longer than the
//!   letters before `P` cover. The chip's `multi_plane_same_block` rule is
//!   refused: the planes take blocks from their own pools, so their open
//!   blocks are not paired.
//!
//! Sizing: a plane keeps `T` free blocks, its two open blocks, the translation
//! block and one block of slack, so a plane whose pool is below `N` with no
//! victim in flight always has a victim with an invalid page; the logical space
//! is that much below the smallest plane's good blocks, times the planes.

use std::collections::{HashSet, VecDeque};

use rustc_hash::FxHashMap;

use serde::{Deserialize, Serialize};

use ftlab_nand::geometry::Divisor;
use ftlab_nand::{BlockId, DieId, Geometry, PageKind, Payload, PlanePage, Ppa, SimTime};

use self::cached_map::CachedMap;
use self::gc_queue::{GcQueue, Played};
use super::{GcModel, PageMapConfig, UnwrittenReads};
use crate::alloc::{Allocation, BlockAllocator, FreeOrder};
use crate::pagecore::PageCore;
use crate::victim::{PlanePickers, VictimPicker};
use crate::{Flash, Ftl, FtlError, Hint, Io, Lpn, Purpose};

#[path = "cached_map.rs"]
mod cached_map;
#[path = "gc_queue.rs"]
mod gc_queue;
pub use self::cached_map::{mqsim_cmt_entries, mqsim_entries_per_page};

/// The open block for host data, in each plane.
const HOST: u32 = 0;
/// The open block for pages moved by garbage collection, in each plane.
const GC: u32 = 1;
/// Pages of one request held in RAM at most, per plane of the device (a
/// longer request is programmed in parts of this many).
const STAGED_PAGES_PER_PLANE: usize = 4;
/// Blocks of a plane besides its threshold of free blocks that are not for
/// data: the two open blocks, the translation block, one block of slack.
const PLANE_RESERVE: u32 = 4;

/// The checks of `gc_model = "mqsim"` (called by [`PageMapConfig::validate`]).
pub(super) fn validate(config: &PageMapConfig) -> Result<(), FtlError> {
    debug_assert_eq!(config.gc_model, GcModel::Mqsim);
    if config.gc_max_victims_per_plane < 2 {
        return Err(FtlError::config(
            "ftl.gc_max_victims_per_plane",
            format!(
                "pagemap.gc_max_victims_per_plane must be at least 2 with gc_model = \"mqsim\", got {}: \
                 host writes stall below that many free blocks of a plane, and with fewer than 2 a write \
                 could take the plane's last free block while its victims still need room for their copies",
                config.gc_max_victims_per_plane
            ),
        ));
    }
    if config.background_gc_free_blocks != 0 {
        return Err(FtlError::config(
            "ftl.background_gc_free_blocks",
            "pagemap.background_gc_free_blocks is not used by gc_model = \"mqsim\", which collects on its \
             triggers only; leave it at 0",
        ));
    }
    if config.free_order != FreeOrder::Fifo {
        return Err(FtlError::config(
            "ftl.free_order",
            "gc_model = \"mqsim\" takes free blocks first in, first out; use free_order = \"fifo\"",
        ));
    }
    Ok(())
}

/// In [`PlaneGcMap`]'s offsets of pages read unwritten: the page was taken
/// and its first read has not been served yet.
const FRESH: u32 = 1 << 31;

/// Free blocks below which a plane collects: the configured device-wide
/// reserve spread over the planes (rounded down, at least 1), and at least the
/// victims a plane may have in flight.
pub fn plane_threshold(config: &PageMapConfig, geometry: &Geometry) -> u32 {
    let planes = geometry.dies() * geometry.planes_per_die;
    (config.gc_free_blocks / planes).max(1).max(config.gc_max_victims_per_plane)
}

/// Logical pages exported when the plane with the fewest good blocks has
/// `min_good` (see the module documentation).
fn logical_pages(config: &PageMapConfig, geometry: &Geometry, min_good: u32) -> Result<u32, FtlError> {
    let planes = u64::from(geometry.dies() * geometry.planes_per_die);
    let ppb = u64::from(geometry.pages_per_block);
    let reserve = plane_threshold(config, geometry) + PLANE_RESERVE;
    if min_good <= reserve {
        return Err(FtlError::config(
            "ftl.gc_max_victims_per_plane",
            format!(
                "the device is too small for pagemap with gc_model = \"mqsim\": a plane has {min_good} good \
                 blocks, and {reserve} are needed besides data ({} free below which it collects, two open \
                 blocks, a translation block, one of slack); use fewer gc_max_victims_per_plane or larger planes",
                reserve - PLANE_RESERVE
            ),
        ));
    }
    let max = planes * u64::from(min_good - reserve) * ppb;
    let total = planes * u64::from(geometry.blocks_per_plane) * ppb;
    let wanted = (total as f64 * (1.0 - config.over_provisioning)).floor() as u64;
    Ok(wanted.min(max) as u32)
}

/// The order in which consecutive logical pages run over the channels (`C`),
/// the ways (`W`, the matched simulator's chips), the dies of a way (`D`) and
/// the planes of a die (`P`): the matched simulator's static plane allocation
/// schemes, all 24 orders of the four letters, the first varying fastest
/// ([`PageMapConfig::plane_allocation_scheme`]; default `CWDP`, channel
/// first). Written in a configuration as the four letters, e.g. `"PCWD"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct PlaneAllocationScheme([u8; 4]);

impl PlaneAllocationScheme {
    /// Channel first, then way, die, plane: the matched simulator's default.
    pub const CWDP: PlaneAllocationScheme = PlaneAllocationScheme(*b"CWDP");

    /// Every scheme, in alphabetical order.
    pub fn all() -> Vec<PlaneAllocationScheme> {
        let mut out = Vec::with_capacity(24);
        for a in *b"CDPW" {
            for b in *b"CDPW" {
                for c in *b"CDPW" {
                    for d in *b"CDPW" {
                        if let Ok(s) = PlaneAllocationScheme::parse(&String::from_utf8_lossy(&[a, b, c, d])) {
                            out.push(s);
                        }
                    }
                }
            }
        }
        out
    }

    /// Reads a scheme: the letters C, W, D and P, each once, in any order
    /// (upper or lower case).
    pub fn parse(text: &str) -> Result<Self, String> {
        let letters = text.trim().to_ascii_uppercase().into_bytes();
        let ok = letters.len() == 4 && b"CWDP".iter().all(|l| letters.iter().filter(|&&x| x == *l).count() == 1);
        if !ok {
            return Err(format!(
                "ftl.plane_allocation_scheme must be the four letters C (channel), W (way), D (die) and P (plane), \
                 each once, in the order consecutive logical pages run over them, e.g. \"CWDP\" (the default) or \
                 \"PCWD\"; got {text:?}"
            ));
        }
        Ok(PlaneAllocationScheme([letters[0], letters[1], letters[2], letters[3]]))
    }

    /// The four letters.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or("CWDP")
    }
}

impl Default for PlaneAllocationScheme {
    fn default() -> Self {
        Self::CWDP
    }
}

impl std::fmt::Display for PlaneAllocationScheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl TryFrom<String> for PlaneAllocationScheme {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        Self::parse(&text)
    }
}

impl From<PlaneAllocationScheme> for String {
    fn from(s: PlaneAllocationScheme) -> String {
        s.as_str().to_string()
    }
}

impl std::str::FromStr for PlaneAllocationScheme {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        Self::parse(text)
    }
}

/// The plane a logical page lives in by a [`PlaneAllocationScheme`]: for each
/// of channel, way, die and plane, its index is `(lpn / stride) % count`, the
/// stride being the product of the counts of the letters before it in the
/// scheme (precomputed here, so a lookup is four divisions and remainders).
#[derive(Debug, Clone, Copy)]
struct PlaneOfPage {
    /// Per unit (channel, way, die, plane): the stride, the count, and the
    /// unit's weight in the plane number (`die * planes_per_die + plane`,
    /// dies numbered channel by channel, then way, then die of the way).
    units: [(Divisor, Divisor, u32); 4],
}

impl PlaneOfPage {
    fn new(g: &Geometry, scheme: PlaneAllocationScheme) -> Self {
        let counts = [g.channels, g.ways_per_channel, g.dies_per_way, g.planes_per_die];
        let weights = [
            g.ways_per_channel * g.dies_per_way * g.planes_per_die,
            g.dies_per_way * g.planes_per_die,
            g.planes_per_die,
            1,
        ];
        let unit = |letter: u8| match letter {
            b'C' => 0,
            b'W' => 1,
            b'D' => 2,
            _ => 3,
        };
        let one = Divisor::new(1);
        let mut units = [(one, one, 0); 4];
        let mut stride = 1u32;
        for &letter in &scheme.0 {
            let u = unit(letter);
            units[u] = (Divisor::new(stride), Divisor::new(counts[u].max(1)), weights[u]);
            stride = stride.saturating_mul(counts[u]);
        }
        PlaneOfPage { units }
    }

    /// The plane of `lpn`, numbered die by die (`die * planes_per_die + plane`).
    #[inline]
    fn plane(&self, lpn: u32) -> u32 {
        self.units.iter().map(|&(stride, count, weight)| count.rem(stride.div(lpn)) * weight).sum()
    }
}

/// A part of the logical space placed on some of the device's resources
/// ([`PageMapConfig::partitions`]): like [`PlaneOfPage`], each unit's index
/// runs over the partition's ids of that unit.
#[derive(Debug, Clone)]
struct PartRoute {
    /// Per unit: the stride, the unit's weight in the plane number, and how
    /// many ids the partition may use.
    units: [(Divisor, u32, Divisor); 4],
    /// Per unit: the ids the partition may use.
    ids: [Vec<u32>; 4],
}

impl PartRoute {
    fn new(g: &Geometry, scheme: PlaneAllocationScheme, ids: [Vec<u32>; 4]) -> Self {
        let weights = [
            g.ways_per_channel * g.dies_per_way * g.planes_per_die,
            g.dies_per_way * g.planes_per_die,
            g.planes_per_die,
            1,
        ];
        let one = Divisor::new(1);
        let mut units = [(one, 0, one); 4];
        let mut stride = 1u32;
        for &letter in &scheme.0 {
            let u = match letter {
                b'C' => 0,
                b'W' => 1,
                b'D' => 2,
                _ => 3,
            };
            let n = ids[u].len() as u32;
            units[u] = (Divisor::new(stride), weights[u], Divisor::new(n.max(1)));
            stride = stride.saturating_mul(n);
        }
        PartRoute { units, ids }
    }

    #[inline]
    fn plane(&self, lpn: u32) -> u32 {
        self.units
            .iter()
            .zip(&self.ids)
            .map(|(&(stride, weight, n), ids)| ids[n.rem(stride.div(lpn)) as usize] * weight)
            .sum()
    }

    /// The planes it uses, numbered as [`PlaneOfPage::plane`] numbers them.
    fn planes(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for &c in &self.ids[0] {
            for &w in &self.ids[1] {
                for &d in &self.ids[2] {
                    for &p in &self.ids[3] {
                        out.push(c * self.units[0].1 + w * self.units[1].1 + d * self.units[2].1 + p);
                    }
                }
            }
        }
        out
    }
}

/// Where each logical page lives: one scheme over the whole device, or
/// partitions of the logical space over parts of it.
#[derive(Debug, Clone)]
enum Router {
    Whole(PlaneOfPage),
    Parts { part_pages: Divisor, parts: Vec<PartRoute> },
}

impl Router {
    #[inline]
    fn plane(&self, lpn: u32) -> u32 {
        match self {
            Router::Whole(r) => r.plane(lpn),
            Router::Parts { part_pages, parts } => {
                let i = (part_pages.div(lpn) as usize).min(parts.len() - 1);
                parts[i].plane(lpn)
            }
        }
    }
}

impl Router {
    /// The die of the translation page whose first entry is logical page
    /// `first` and which is page `t` of its domain's translation pages:
    /// placed as logical page `t` of its part of the logical space (the
    /// matched simulator numbers each flow's translation pages from 0 and
    /// places them like its user pages).
    fn translation_die(&self, first: u32, t: u32, entries: u32, planes_per_die: u32) -> DieId {
        let plane = match self {
            Router::Whole(r) => r.plane(t),
            Router::Parts { part_pages, parts } => {
                let i = (part_pages.div(first) as usize).min(parts.len() - 1);
                let local = (first - i as u32 * part_pages.get()) / entries.max(1);
                parts[i].plane(local)
            }
        };
        DieId(plane / planes_per_die)
    }
}

/// The partitions' routes, checked against `g` (errors name
/// `ftl.partitions[i].<unit>`), and the logical pages each part may hold so
/// that no plane holds more than `per_plane` pages of data: parts sharing a
/// plane share it in proportion.
fn partition_routes(config: &PageMapConfig, g: &Geometry, per_plane: u64) -> Result<(Vec<PartRoute>, u64), FtlError> {
    let p = &config.partitions;
    let counts = [g.channels, g.ways_per_channel, g.dies_per_way, g.planes_per_die];
    let names = ["channels", "ways", "dies", "planes"];
    let mut routes = Vec::new();
    for i in 0..p.len() {
        let mut ids: [Vec<u32>; 4] = Default::default();
        for u in 0..4 {
            let all = p.ids(i, u, 64);
            if let Some(&bad) = all.iter().find(|&&id| id >= counts[u]) {
                if all.len() < 64 {
                    return Err(FtlError::config(
                        format!("ftl.partitions[{i}].{}", names[u]),
                        format!(
                            "ftl.partitions[{i}].{} names {bad}, but the device has {} {}: give ids below {}",
                            names[u], counts[u], names[u], counts[u]
                        ),
                    ));
                }
            }
            ids[u] = p.ids(i, u, counts[u]);
        }
        routes.push(PartRoute::new(g, config.plane_allocation_scheme, ids));
    }
    // Each plane's share: the sum over the parts using it of 1 / their planes.
    let planes = (g.dies() * g.planes_per_die) as usize;
    let mut load = vec![0.0f64; planes];
    for r in &routes {
        let used = r.planes();
        for &pl in &used {
            load[pl as usize] += 1.0 / used.len() as f64;
        }
    }
    let heaviest = load.iter().copied().fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    Ok((routes, (per_plane as f64 / heaviest).floor() as u64))
}

/// The page map under `gc_model = "mqsim"`, choosing victims with `P` inside
/// each plane (see the module documentation).
#[derive(Debug)]
pub struct PlaneGcMap<P: VictimPicker> {
    core: PageCore,
    picker: PlanePickers<P>,
    /// Free blocks below which a plane collects.
    threshold: u32,
    /// Victims a plane may have in flight; host writes to a plane wait while its
    /// pool is below this many blocks.
    max_victims: u32,
    /// Per plane, the victims whose erase was issued, with the erase's finish,
    /// in issue order (so in finish order: a plane's operations run in order).
    in_flight: Vec<VecDeque<(BlockId, SimTime)>>,
    /// No victim's erase finishes before this ([`SimTime::MAX`] when none is in
    /// flight).
    next_due: SimTime,
    route: Router,
    /// What a read of a page never written costs.
    unwritten_reads: UnwrittenReads,
    /// With `unwritten_reads = "flash"`: per plane, the pages the matched
    /// simulator would have taken from its open block for reads (wrapping),
    /// and the pages so mapped (a bit a logical page); see
    /// [`PlaneGcMap::take_for_read`]. A timing model only: recovery after a
    /// power cut starts both afresh.
    read_taken: Vec<u64>,
    read_mapped: Vec<u64>,
    /// The page offset taken for each page so mapped: where its reads go
    /// until it is written or trimmed, and where a dispatcher that groups
    /// queued reads finds them ([`crate::Placement::read_slot`]). It grows
    /// with the pages read unwritten (8 bytes and the table's overhead each),
    /// a model of the matched simulator's mapping not counted in
    /// [`Ftl::ram_bytes`] (the map's entries are).
    /// An offset's [`FRESH`] bit: the page's first read is still to come,
    /// which dirties its entry in the cached mapping table.
    read_offsets: FxHashMap<u32, u32>,
    /// Host writes that waited for an erase.
    stalls: u64,
    /// Whether the chip has multi-plane programs: a request's pages wait in
    /// `staged` until its last one, then go out together.
    multi_plane: bool,
    /// With multi-plane programs: the pages of the current request not yet
    /// programmed (none acknowledged).
    staged: Vec<(Lpn, Payload, u32)>,
    /// Pages whose write or read was prepared ([`Ftl::prepare_write`],
    /// [`Ftl::prepare_read`]): their translation was looked up then, and the
    /// next command of the page does not look again.
    prepared: HashSet<u32>,
    /// The cached mapping table's model (`cmt_entries`), if on.
    cmt: Option<CachedMap>,
    /// With `gc_queue`: the per-die queues of commands whose time is booked
    /// as their dies fall free ([`super::gc_queue`]).
    queue: Option<GcQueue>,
    /// What the queues' dies were last given, kept to reuse its room.
    played: Played,
}

impl<P: VictimPicker> PlaneGcMap<P> {
    fn empty(config: PageMapConfig, io: &Io) -> Result<Self, FtlError> {
        config.validate()?;
        let g = *io.geometry();
        let planes = g.dies() * g.planes_per_die;
        let min_good = (0..planes)
            .map(|p| (0..g.blocks_per_plane).filter(|&i| !io.is_bad(BlockId(p * g.blocks_per_plane + i))).count())
            .min()
            .unwrap_or(0) as u32;
        let mut logical_pages = logical_pages(&config, &g, min_good)?;
        let route = if config.partitions.is_empty() {
            Router::Whole(PlaneOfPage::new(&g, config.plane_allocation_scheme))
        } else {
            // Each part must fit its planes (the data a plane may hold, as
            // logical_pages reckons it).
            let per_plane = u64::from(min_good.saturating_sub(plane_threshold(&config, &g) + PLANE_RESERVE))
                * u64::from(g.pages_per_block);
            let (parts, part_cap) = partition_routes(&config, &g, per_plane)?;
            let n = parts.len() as u64;
            let part_pages = (u64::from(logical_pages) / n).min(part_cap);
            if part_pages == 0 {
                return Err(FtlError::config(
                    "ftl.partitions",
                    "the partitions leave no room for data: give them more planes or fewer partitions",
                ));
            }
            logical_pages = (part_pages * n) as u32;
            Router::Parts { part_pages: Divisor::new((part_pages as u32).max(1)), parts }
        };
        let commands = io.commands();
        if commands.multi_plane && commands.multi_plane_same_block {
            return Err(FtlError::config(
                "device.commands.multi_plane_same_block",
                "pagemap with gc_model = \"mqsim\" cannot honour multi_plane_same_block: each plane takes its \
                 blocks from its own pool, so the planes' open blocks are not paired (the matched simulator has no \
                 such rule either); leave device.commands.multi_plane_same_block false",
            ));
        }
        let multi_plane = commands.multi_plane && g.planes_per_die > 1;
        let cmt = (config.cmt_entries > 0).then(|| {
            let per_page = match config.cmt_entries_per_page {
                0 => mqsim_entries_per_page(u64::from(g.total_pages()), g.page_size),
                n => n,
            };
            let programmed = config.cmt_writes == super::CmtWrites::Programmed;
            CachedMap::new(config.cmt_entries, per_page, logical_pages, config.cmt_domains, g.page_size, programmed)
        });
        let mut core = PageCore::new(g, logical_pages, 2);
        core.alloc = BlockAllocator::per_plane(&g, 2);
        Ok(PlaneGcMap {
            core,
            picker: PlanePickers::per_plane(planes, g.blocks_per_plane, g.pages_per_block),
            threshold: plane_threshold(&config, &g),
            max_victims: config.gc_max_victims_per_plane,
            in_flight: vec![VecDeque::new(); planes as usize],
            next_due: SimTime::MAX,
            route,
            unwritten_reads: config.unwritten_reads,
            read_taken: vec![0; planes as usize],
            read_mapped: if config.unwritten_reads == UnwrittenReads::Flash {
                vec![0; (logical_pages as usize).div_ceil(64)]
            } else {
                Vec::new()
            },
            read_offsets: FxHashMap::default(),
            stalls: 0,
            multi_plane,
            staged: Vec::new(),
            prepared: HashSet::new(),
            cmt,
            queue: config
                .gc_queue
                .then(|| GcQueue::new(planes, g.planes_per_die, g.pages_per_block, multi_plane, io.copyback_enabled())),
            played: Played::default(),
        })
    }

    /// The page map on a freshly formatted medium.
    pub fn format(config: PageMapConfig, io: &mut Io) -> Result<Self, FtlError> {
        let mut ftl = Self::empty(config, io)?;
        let g = ftl.core.geometry;
        ftl.core.alloc = BlockAllocator::formatted_per_plane(&g, 2, |b| io.is_bad(b));
        ftl.hold_translation_blocks(0);
        Ok(ftl)
    }

    /// Rebuilds the page map from the medium by the OOB scan ([`PageCore::recover`]);
    /// partly written blocks are closed (garbage collection reclaims their
    /// unwritten pages), and each plane with more than one free block holds a
    /// translation block again.
    pub fn recover(config: PageMapConfig, io: &mut Io) -> Result<Self, FtlError> {
        let mut ftl = Self::empty(config, io)?;
        let scan = ftl.core.recover(io, &mut ftl.picker)?;
        for b in scan.free {
            ftl.core.alloc.release(b);
        }
        for b in scan.closed.into_iter().chain(scan.open.into_iter().map(|(b, _)| b)) {
            ftl.picker.insert(b);
        }
        // A cut closes the open blocks, so a plane may come back with its
        // pool empty and every victim holding a valid page: it keeps its
        // translation block free then, for its collection's copies.
        ftl.hold_translation_blocks(1);
        Ok(ftl)
    }

    /// Takes one free block out of each plane's pool as its translation
    /// block, in planes with more than `keep` free blocks only.
    fn hold_translation_blocks(&mut self, keep: u32) {
        for plane in 0..self.in_flight.len() as u32 {
            if self.pool(plane) > keep {
                self.core.alloc.take_free(DieId(plane));
            }
        }
    }

    /// With the cached mapping table on: looks `lpn` up before its read or
    /// write, and issues what a miss costs ([`CachedMap::translate`]).
    #[inline]
    fn translate(&mut self, io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        let Some(cmt) = &mut self.cmt else { return Ok(()) };
        let (route, ppd, entries) = (&self.route, self.core.geometry.planes_per_die, cmt.entries_per_page());
        cmt.translate(io, lpn.0, |first, t| route.translation_die(first, t, entries, ppd))
    }

    /// With the cached mapping table on: looks `lpn` up before its write or
    /// read, unless it was prepared ([`Ftl::prepare_write`],
    /// [`Ftl::prepare_read`]); either way the command waits for its
    /// translation read.
    #[inline]
    fn translate_prepared(&mut self, io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        if self.prepared.is_empty() || !self.prepared.remove(&lpn.0) {
            return self.translate(io, lpn);
        }
        if let Some(cmt) = &self.cmt {
            io.start_after(cmt.ready_at(lpn.0, io.now()));
        }
        Ok(())
    }

    /// With the cached mapping table on: `lpn` was written.
    #[inline]
    fn mapped(&mut self, lpn: Lpn) {
        if let Some(cmt) = &mut self.cmt {
            cmt.written(lpn.0);
        }
    }

    /// Free blocks of `plane`.
    #[inline]
    fn pool(&self, plane: u32) -> u32 {
        self.core.alloc.free_blocks_in(DieId(plane))
    }

    /// The next page of `plane`'s open block for `stream`, after retiring
    /// `bad` (see [`crate::schemes::page::pagemap::PageMap`]). When a new block must be opened
    /// that is a trigger (counted in `triggers`), and when the pool is empty the
    /// plane waits for its oldest erase in flight (also a trigger: an erase
    /// finished below the stall level).
    #[allow(clippy::too_many_arguments)]
    fn place(
        alloc: &mut BlockAllocator,
        picker: &mut PlanePickers<P>,
        in_flight: &mut VecDeque<(BlockId, SimTime)>,
        plane: u32,
        stream: u32,
        bad: Option<BlockId>,
        triggers: &mut u32,
    ) -> Result<Ppa, FtlError> {
        if let Some(b) = bad {
            if alloc.retire(b).is_some() {
                picker.insert(b);
            }
        }
        let pool = DieId(plane);
        if alloc.open_room(stream, pool) == 0 {
            if alloc.free_blocks_in(pool) == 0 {
                if let Some((b, _)) = in_flight.pop_front() {
                    alloc.release(b);
                    *triggers += 1;
                }
            }
            *triggers += 1;
        }
        let Allocation { ppa, filled } = alloc
            .next_page_in(stream, pool)
            .ok_or_else(|| FtlError::DeviceFull(format!("plane {plane} has no free block and no erase in flight")))?;
        if let Some(b) = filled {
            picker.insert(b);
        }
        Ok(ppa)
    }

    /// Picks one victim of `plane` if its pool is below the threshold and fewer
    /// than the maximum are in flight, copies its valid pages inside the plane
    /// and issues its erase. Returns the triggers its copies fired, or `None`
    /// if nothing was picked.
    fn collect_one(&mut self, io: &mut Io, plane: u32) -> Result<Option<u32>, FtlError> {
        let in_flight = self.in_flight[plane as usize].len() as u32;
        if self.pool(plane) >= self.threshold || in_flight >= self.max_victims {
            return Ok(None);
        }
        let Some(victim) = self.picker.pick_in(plane, io.now()) else {
            return Ok(None);
        };
        if self.picker.valid(victim) >= self.core.geometry.pages_per_block {
            return Ok(None);
        }
        self.picker.remove(victim);
        let mut triggers = 0;
        let in_flight = &mut self.in_flight[plane as usize];
        let queued = self.queue.as_ref().is_some_and(GcQueue::on);
        let core = &mut self.core;
        let picker = &mut self.picker;
        let mut evacuate = |io: &mut Io| {
            core.evacuate(io, picker, victim, |alloc, picker, _, bad| {
                Self::place(alloc, picker, in_flight, plane, GC, bad, &mut triggers)
            })
        };
        if queued {
            // The pages move now; their time is booked as the die takes
            // the commands.
            io.untimed(evacuate)?;
        } else {
            evacuate(io)?;
        }
        if let Some(cmt) = &mut self.cmt {
            let (route, ppd, entries) = (&self.route, self.core.geometry.planes_per_die, cmt.entries_per_page());
            for &lpn in self.core.moved() {
                cmt.moved(io, lpn, |first, t| route.translation_die(first, t, entries, ppd))?;
            }
        }
        if queued {
            let freed = io.untimed(|io| io.reclaim(victim, Purpose::Gc))?;
            let first = self.core.geometry.ppa(victim, 0).0;
            if let Some(q) = &mut self.queue {
                q.push_victim(plane, victim, self.core.moved_from().iter().map(|p| p.0 - first));
            }
            if freed {
                // Back in the pool once its erase, booked later, finishes.
                self.in_flight[plane as usize].push_back((victim, SimTime::MAX));
            }
        } else if io.reclaim(victim, Purpose::Gc)? {
            let done = io.die_free_at(self.core.layout.die_of_block(victim));
            self.in_flight[plane as usize].push_back((victim, done));
            self.next_due = self.next_due.min(done);
        }
        Ok(Some(triggers))
    }

    /// Runs `triggers` triggers of `plane`, and those their collections fire.
    fn trigger(&mut self, io: &mut Io, plane: u32, mut triggers: u32) -> Result<(), FtlError> {
        while triggers > 0 {
            triggers -= 1;
            if let Some(more) = self.collect_one(io, plane)? {
                triggers += more;
            }
        }
        Ok(())
    }

    /// Returns the oldest victim of `plane` in flight to its pool (its erase
    /// finished, or a write waits for it); an erase that leaves the pool below
    /// the stall level is a trigger. Returns whether there was one.
    fn finish_oldest(&mut self, io: &mut Io, plane: u32) -> Result<bool, FtlError> {
        let Some((b, _)) = self.in_flight[plane as usize].pop_front() else {
            return Ok(false);
        };
        self.core.alloc.release(b);
        if self.pool(plane) < self.max_victims {
            self.trigger(io, plane, 1)?;
        }
        Ok(true)
    }

    /// Returns every victim whose erase finished by now to its pool.
    fn finish_due(&mut self, io: &mut Io) -> Result<(), FtlError> {
        let now = io.now();
        if now < self.next_due {
            return Ok(());
        }
        for plane in 0..self.in_flight.len() {
            while self.in_flight[plane].front().is_some_and(|&(_, done)| done <= now) {
                self.finish_oldest(io, plane as u32)?;
            }
        }
        self.next_due =
            self.in_flight.iter().filter_map(|q| q.front().map(|&(_, done)| done)).min().unwrap_or(SimTime::MAX);
        Ok(())
    }

    /// Before a host write to `plane`: while its pool is below the stall level,
    /// wait for its oldest erase in flight, or pick a victim when none is.
    fn wait_for_room(&mut self, io: &mut Io, plane: u32) -> Result<(), FtlError> {
        let mut waited = false;
        while self.pool(plane) < self.max_victims {
            if self.finish_oldest(io, plane)? {
                waited = true;
            } else {
                match self.collect_one(io, plane)? {
                    Some(triggers) => self.trigger(io, plane, triggers)?,
                    None => break,
                }
            }
        }
        self.stalls += u64::from(waited);
        Ok(())
    }

    /// One host page by a single program on its plane: the erases due are
    /// returned, the write waits for room in its plane, and the page is
    /// placed. Returns the plane and the triggers its placement fired (run by
    /// the caller after the acknowledgement).
    #[inline]
    fn write_one(&mut self, io: &mut Io, lpn: Lpn, data: Payload) -> Result<(u32, u32), FtlError> {
        let l = self.core.index(lpn)?;
        let plane = self.route.plane(lpn.0);
        io.independent(|io| {
            self.finish_due(io)?;
            self.wait_for_room(io, plane)
        })?;
        self.translate_prepared(io, lpn)?;
        let old = self.core.table.get(l);
        let mut triggers = 0;
        let in_flight = &mut self.in_flight[plane as usize];
        if self.queue.as_ref().is_some_and(GcQueue::on) {
            // The page is placed now; its program waits in its die's queue.
            let (core, picker) = (&mut self.core, &mut self.picker);
            io.untimed(|io| {
                core.write_placed(io, picker, lpn, old, data, |alloc, picker, _, bad| {
                    Self::place(alloc, picker, in_flight, plane, HOST, bad, &mut triggers)
                })
            })?;
            let ppa = self.core.table.get(l).ok_or_else(|| {
                FtlError::BadCommand(format!("gc_queue: logical page {} has no page after its write", lpn.0))
            })?;
            let offset = ppa.0 % self.core.geometry.pages_per_block;
            let (bytes, token) = (io.host_bytes(), io.token());
            if let Some(q) = &mut self.queue {
                q.push_host(plane, offset, bytes, token);
            }
            io.queue_host();
            self.mapped(lpn);
            return Ok((plane, triggers));
        }
        self.core.write_placed(io, &mut self.picker, lpn, old, data, |alloc, picker, _, bad| {
            Self::place(alloc, picker, in_flight, plane, HOST, bad, &mut triggers)
        })?;
        self.mapped(lpn);
        Ok((plane, triggers))
    }

    /// A host write on a chip with multi-plane programs: held in RAM until its
    /// request's last page (the units before it carry [`Hint::more`]), then
    /// programmed with the rest ([`PlaneGcMap::flush_staged`]) and
    /// acknowledged. Out of line: the single-program path stays as it was.
    #[inline(never)]
    fn write_staged(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
        self.core.index(lpn)?;
        if self.staged.iter().any(|(l, _, _)| *l == lpn) {
            self.flush_staged(io)?;
        }
        // The bytes its request moves go with it (sector transfers).
        self.staged.push((lpn, data, io.host_bytes()));
        let cap = STAGED_PAGES_PER_PLANE * self.in_flight.len();
        if hint.more && self.staged.len() < cap {
            // Acknowledged with the request's last page.
            return Ok(());
        }
        self.flush_staged(io)?;
        io.ack();
        Ok(())
    }

    /// The page offset in `plane`'s host block its next host page takes (0
    /// when a new block must be opened).
    #[inline]
    fn host_offset(&self, plane: u32) -> u32 {
        let room = self.core.alloc.open_room(HOST, DieId(plane));
        if room == 0 {
            0
        } else {
            self.core.geometry.pages_per_block - room
        }
    }

    /// The page offset the matched simulator would give `plane`'s next host
    /// page: [`PlaneGcMap::host_offset`] moved on by the pages it took for
    /// reads ([`PlaneGcMap::take_for_read`]). Pairing by offset compares it.
    #[inline]
    fn pairing_offset(&self, plane: u32) -> u32 {
        let ppb = self.core.geometry.pages_per_block;
        let taken = (self.read_taken[plane as usize] % u64::from(ppb)) as u32;
        (self.host_offset(plane) + taken) % ppb
    }

    /// A read of `lpn`, never written, maps the page as the matched simulator
    /// does: it takes the next page of the plane's open block for it, unwritten
    /// (`online_create_entry_for_reads`, Address_Mapping_Unit_Page_Level.cpp:
    /// 1225-1386), once until the page is trimmed, when its read is
    /// translated: when it is prepared ([`Ftl::prepare_read`], before it waits
    /// for its die), else when it is served. The strict medium programs a
    /// block's pages in order, so no page is skipped there; the page taken
    /// moves on the offsets writes are paired by ([`PlaneGcMap::pairing_offset`],
    /// [`crate::Placement::write_offset`]), and its offset, the plane's
    /// pairing offset then, is where its reads go ([`PlaneGcMap::read_offsets`]).
    /// In that simulator the root file's scenario 3 pairs 301 of 5,007
    /// written pages with it and 481 without, and its mean write takes
    /// 7,495 us against 5,100 us.
    fn take_for_read(&mut self, lpn: Lpn) {
        let (word, bit) = (lpn.0 as usize / 64, 1u64 << (lpn.0 % 64));
        let Some(w) = self.read_mapped.get_mut(word) else { return };
        if *w & bit != 0 {
            return;
        }
        *w |= bit;
        let plane = self.route.plane(lpn.0);
        let offset = self.pairing_offset(plane);
        self.read_offsets.insert(lpn.0, offset | FRESH);
        self.read_taken[plane as usize] = self.read_taken[plane as usize].wrapping_add(1);
    }

    /// Programs the pages waiting in RAM, in request order: each page not yet
    /// programmed leads; the later pages bound for other planes of its die
    /// (one a plane) wait for room in their planes as a single write would,
    /// and those whose host blocks are then at the leader's page offset go
    /// out with it as one multi-plane program; a page alone is programmed
    /// singly ([`PlaneGcMap::write_one`]). A page whose multi-plane program
    /// fails is retired with its block and programmed singly. Each page's
    /// triggers run after its program.
    #[inline(never)]
    fn flush_staged(&mut self, io: &mut Io) -> Result<(), FtlError> {
        if self.staged.is_empty() {
            return Ok(());
        }
        let ppd = self.core.geometry.planes_per_die;
        let mut rest: Vec<Option<(Lpn, Payload, u32)>> = self.staged.drain(..).map(Some).collect();
        let planes: Vec<u32> = rest.iter().flatten().map(|(l, _, _)| self.route.plane(l.0)).collect();
        let own_bytes = io.host_bytes();
        for i in 0..rest.len() {
            if rest[i].is_none() {
                continue;
            }
            let die = planes[i] / ppd;
            let mut group = vec![i];
            for j in i + 1..rest.len() {
                if rest[j].is_some() && planes[j] / ppd == die && group.iter().all(|&k| planes[k] != planes[j]) {
                    group.push(j);
                }
            }
            if self.queue.as_ref().is_some_and(GcQueue::on) {
                // Queued singly; the die's queue pairs them as it takes them.
                group.truncate(1);
            }
            if group.len() > 1 {
                io.independent(|io| {
                    self.finish_due(io)?;
                    group.iter().try_for_each(|&k| self.wait_for_room(io, planes[k]))
                })?;
                // Pages a scheduler paired go together at their planes' next
                // pages if the chip allows it; others at one page offset.
                // (The pages must also be at one offset by the matched
                // simulator's count, which pages taken for reads move.)
                if !(io.paired() && io.commands().multi_plane_any_page) {
                    let (offset, pairing) = (self.host_offset(planes[i]), self.pairing_offset(planes[i]));
                    group.retain(|&k| {
                        k == i || (self.host_offset(planes[k]) == offset && self.pairing_offset(planes[k]) == pairing)
                    });
                }
            }
            if group.len() == 1 {
                let Some((lpn, data, bytes)) = rest[i].take() else { continue };
                io.set_host_bytes(bytes);
                let written = self.write_one(io, lpn, data);
                io.set_host_bytes(own_bytes);
                let (plane, triggers) = written?;
                io.independent(|io| self.trigger(io, plane, triggers))?;
                continue;
            }
            for &k in &group {
                if let Some((lpn, _, _)) = rest[k] {
                    self.translate_prepared(io, lpn)?;
                }
            }
            let mut pages = Vec::with_capacity(group.len());
            let mut triggers = vec![0u32; group.len()];
            for (n, &k) in group.iter().enumerate() {
                let Some((lpn, data, bytes)) = rest[k].take() else { continue };
                let plane = planes[k];
                let ppa = Self::place(
                    &mut self.core.alloc,
                    &mut self.picker,
                    &mut self.in_flight[plane as usize],
                    plane,
                    HOST,
                    None,
                    &mut triggers[n],
                )?;
                pages.push(PlanePage { ppa, lpn: lpn.0, kind: PageKind::Data, data, bytes });
            }
            for (lpn, ppa, data) in self.core.program_multi_host(io, &mut self.picker, pages)? {
                let old = self.core.table.get(lpn.0 as usize);
                let plane = self.route.plane(lpn.0);
                let mut bad = Some(self.core.layout.block_of(ppa));
                let mut more = 0;
                let in_flight = &mut self.in_flight[plane as usize];
                self.core.write_placed(io, &mut self.picker, lpn, old, data, |alloc, picker, _, b| {
                    Self::place(alloc, picker, in_flight, plane, HOST, bad.take().or(b), &mut more)
                })?;
                self.mapped(lpn);
                let n = group.iter().position(|&k| planes[k] == plane).unwrap_or(0);
                triggers[n] += more;
            }
            for (n, &k) in group.iter().enumerate() {
                let (plane, t) = (planes[k], triggers[n]);
                io.independent(|io| self.trigger(io, plane, t))?;
            }
        }
        Ok(())
    }
}

impl<P: VictimPicker + 'static> Ftl for PlaneGcMap<P> {
    fn name(&self) -> &'static str {
        "pagemap"
    }

    fn logical_pages(&self) -> u32 {
        self.core.logical_pages
    }

    fn prefetch(&self, flash: &Flash, lpn: Lpn, what: crate::Prefetch) {
        self.core.prefetch(flash, lpn, what);
    }

    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
        if self.multi_plane {
            return self.write_staged(io, lpn, data, hint);
        }
        let (plane, triggers) = self.write_one(io, lpn, data)?;
        io.ack();
        io.independent(|io| self.trigger(io, plane, triggers))
    }

    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        if !self.staged.is_empty() {
            self.flush_staged(io)?;
        }
        if self.cmt.is_some() && !io.untimed_reads() {
            self.core.index(lpn)?;
            self.translate_prepared(io, lpn)?;
        }
        let data = self.core.read(io, lpn)?;
        if data.is_none() && self.unwritten_reads == UnwrittenReads::Flash && !io.update_read() {
            // The matched simulator maps the page in its plane and reads flash
            // (but issues no update read for a page never written:
            // Address_Mapping_Unit_Page_Level.cpp:1151-1166).
            io.read_time(DieId(self.route.plane(lpn.0) / self.core.geometry.planes_per_die), Purpose::Host)?;
            // It maps the page, so its table entry turns dirty
            // (online_create_entry_for_reads, Address_Mapping_Unit_Page_Level.cpp:1381-1385),
            // once: a later read finds the page mapped and dirties nothing.
            if !io.untimed_reads() {
                self.take_for_read(lpn);
                if let Some(offset) = self.read_offsets.get_mut(&lpn.0).filter(|o| **o & FRESH != 0) {
                    *offset &= !FRESH;
                    self.mapped(lpn);
                }
            }
        }
        Ok(data)
    }

    fn trim(&mut self, io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        let l = self.core.index(lpn)?;
        if !self.staged.is_empty() {
            self.flush_staged(io)?;
        }
        self.core.trim(&mut self.picker, l);
        self.prepared.remove(&lpn.0);
        self.read_offsets.remove(&lpn.0);
        if let Some(w) = self.read_mapped.get_mut(lpn.0 as usize / 64) {
            *w &= !(1u64 << (lpn.0 % 64));
        }
        Ok(())
    }

    fn flush(&mut self, io: &mut Io) -> Result<(), FtlError> {
        self.flush_staged(io)
    }

    fn background(&mut self, io: &mut Io, _until: SimTime) -> Result<(), FtlError> {
        self.flush_staged(io)
    }

    fn ram_bytes(&self) -> u64 {
        self.core.ram_bytes() + self.picker.ram_bytes() + self.cmt.as_ref().map_or(0, CachedMap::ram_bytes)
    }

    fn gauges(&self) -> Vec<(&'static str, f64)> {
        self.cmt.as_ref().map_or_else(Vec::new, CachedMap::gauges)
    }

    fn prepare_read(&mut self, io: &mut Io, lpn: Lpn) -> Result<SimTime, FtlError> {
        // The matched simulator maps a page never written when it translates
        // the read, before the read waits for its chip
        // (Address_Mapping_Unit_Page_Level.cpp:590); the read then goes to
        // the page offset taken.
        if !io.untimed_reads() && !self.read_mapped.is_empty() && self.core.read_slot(lpn).is_none() {
            self.take_for_read(lpn);
        }
        self.prepare_write(io, lpn)
    }

    fn prepare_write(&mut self, io: &mut Io, lpn: Lpn) -> Result<SimTime, FtlError> {
        let now = io.now();
        if self.cmt.is_none() || io.untimed_reads() || self.prepared.contains(&lpn.0) {
            return Ok(now);
        }
        self.core.index(lpn)?;
        io.independent(|io| self.translate(io, lpn))?;
        self.prepared.insert(lpn.0);
        Ok(self.cmt.as_ref().map_or(now, |c| c.ready_at(lpn.0, now)))
    }

    fn reset_counters(&mut self) {
        if let Some(cmt) = &mut self.cmt {
            cmt.measurement_starts();
        }
    }

    fn memory(&self) -> crate::FtlMemory {
        self.core.memory(&self.picker)
    }

    fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
        self.core.check(&self.picker, flash)
    }

    fn capabilities(&self) -> crate::Capabilities<'_> {
        crate::Capabilities { realtime: None, placement: Some(self) }
    }

    fn extension(&mut self) -> crate::Extension<'_> {
        if self.queue.is_some() {
            crate::Extension::Queued(self)
        } else {
            crate::Extension::None
        }
    }
}

impl<P: VictimPicker> crate::DieQueues for PlaneGcMap<P> {
    fn set_queueing(&mut self, on: bool) -> Result<(), FtlError> {
        match &mut self.queue {
            Some(q) => q.set_on(on),
            None => Err(FtlError::Unsupported("per-die queues (pagemap gc_queue = true)")),
        }
    }

    fn queued(&self) -> usize {
        self.queue.as_ref().map_or(0, GcQueue::queued)
    }

    fn next_play(&self, flash: &Flash, now: SimTime) -> SimTime {
        self.queue.as_ref().map_or(SimTime::MAX, |q| q.next_play(flash, now))
    }

    fn holds_reads(&self, die: DieId) -> bool {
        self.queue.as_ref().is_some_and(|q| q.collecting(die.0))
    }

    fn play(&mut self, io: &mut Io) -> Result<(), FtlError> {
        let Some(q) = &mut self.queue else { return Ok(()) };
        let mut played = std::mem::take(&mut self.played);
        q.play(io, &mut played)?;
        // Erases booked: their victims are back in their pools when they finish.
        for (plane, block, finish) in played.erases.drain(..) {
            if let Some(e) = self.in_flight[plane as usize].iter_mut().find(|e| e.0 == block && e.1 == SimTime::MAX) {
                e.1 = finish;
                self.next_due = self.next_due.min(finish);
            }
        }
        self.played = played;
        Ok(())
    }

    fn take_played(&mut self, out: &mut Vec<(u64, SimTime)>) {
        out.extend(self.played.hosts.drain(..).filter(|h| h.0 != 0));
    }
}

impl<P: VictimPicker> crate::Placement for PlaneGcMap<P> {
    fn die_of(&self, lpn: Lpn) -> Option<DieId> {
        match self.core.die_of(lpn) {
            // A page never written that costs a flash read is read on the
            // die of its plane (`read`).
            None if self.unwritten_reads == UnwrittenReads::Flash && lpn.0 < self.core.logical_pages => {
                Some(DieId(self.route.plane(lpn.0) / self.core.geometry.planes_per_die))
            }
            d => d,
        }
    }

    fn read_slot(&self, lpn: Lpn) -> Option<(u32, u32)> {
        self.core.read_slot(lpn).or_else(|| {
            let offset = *self.read_offsets.get(&lpn.0)? & !FRESH;
            Some((self.route.plane(lpn.0) % self.core.geometry.planes_per_die, offset))
        })
    }

    fn write_die(&self, lpn: Lpn, _hint: &Hint) -> Option<DieId> {
        Some(DieId(self.route.plane(lpn.0) / self.core.geometry.planes_per_die))
    }

    fn write_plane(&self, lpn: Lpn, _hint: &Hint) -> Option<u32> {
        Some(self.route.plane(lpn.0) % self.core.geometry.planes_per_die)
    }

    fn write_offset(&self, lpn: Lpn, _hint: &Hint) -> Option<u32> {
        Some(self.pairing_offset(self.route.plane(lpn.0)))
    }

    fn pages_taken_by_reads(&self, lpn: Lpn, _hint: &Hint) -> u64 {
        self.read_taken[self.route.plane(lpn.0) as usize]
    }
}

#[cfg(test)]
#[path = "plane_gc_tests.rs"]
mod tests;
