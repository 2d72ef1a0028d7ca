//! Pure page mapping: a full logical-to-physical table in RAM, writes appended to
//! one open block per die and striped round-robin over the dies (skipping busy
//! dies when an idle one exists), greedy (or
//! cost-benefit) garbage collection when free blocks run low, trim, and recovery
//! by scanning every page's OOB (the newest sequence number wins).
//!
//! The page-mapped schemes of the papers are configurations of it
//! ([`PageMapConfig::preset`]):
//!
//! - `pure-page-level` — the Pure-Page-Level scheme of 001_ca7ecce2bd5249b9.txt
//!   (Section 6.1, after Ban 1995): the whole physical space mapped, one extra swap
//!   block holding valid-page copies, GC only when no free page is left:
//!   `over_provisioning = 0`, `gc_free_blocks = 1`, greedy victims. ftlab also
//!   keeps one open block per die and one block of slack (see
//!   [`PageMapConfig::logical_pages`]); on a one-die device that is the paper's
//!   configuration plus one block.
//! - `pagemap` — the page-map FTL of 000_ffe2fafb22bcad8e.txt (Sections 6.4 and 7,
//!   the non-real-time baseline of Figures 10, 13 and 14): over-provisioning
//!   lambda = 0.10, first-in first-out free-block queue (no wear leveling), greedy
//!   victims, GC when the free blocks fall to 2. Its wear-leveled variant of
//!   Section 6.4 (Figure 10, RBER balancing) is `free_order = "rber"`: a new open
//!   block is the free block of its die with the lowest RBER (Eq. 27).
//! - `ppm-ftl` — the PPM-FTL of 004_15edfc19ad848aee.txt (Section 5, Figure 6):
//!   3% of the blocks over-provisioned (the paper sweeps 3% to 20%; set
//!   `over_provisioning`), greedy victims. The paper fills the device sequentially
//!   before measuring; that is the simulator's preconditioning, not an FTL setting.
//!
//! Garbage collection follows one of two models ([`GcModel`], `gc_model`):
//! ftlab's own (the default, above: one device-wide pool, the greedy victim
//! collected whole before a write), or `mqsim` ([`plane_gc`]): the per-plane
//! pools, victims in flight and stalled writes of MQSim, for results that are
//! to be compared with that simulator's.
//!
//! Pages are placed on one of two plans ([`PlaneAllocation`],
//! `plane_allocation`): one open block per die (the default, above), or
//! `multi-plane`, for chips with multi-plane program
//! ([`ftlab_nand::commands`], `device.commands.multi_plane`): each plane has an
//! open block for host data and one for garbage collection's copies (a
//! victim's pages are copied inside its plane, by copyback where it is on);
//! the pages of one host request (the units before the last carry
//! [`Hint::more`]) wait in RAM, up to four a plane, and are programmed together
//! on one die, one multi-plane program for each set of planes whose open
//! blocks are at the same page offset (the planes at the lowest offset first,
//! which keeps the planes level; a plane alone is programmed alone; a
//! request's last odd page goes to a plane that is behind on another die when
//! there is one, so that it levels that die instead of unsettling this one). A write
//! is acknowledged only with its request's last page, so nothing waiting in
//! RAM was acknowledged. The chip's `multi_plane_same_block` rule is not
//! supported by this plan (the planes' free blocks are not paired).

use serde::{Deserialize, Serialize};

use ftlab_nand::{BlockId, Geometry, Payload, Ppa, SimTime};

#[cfg(test)]
mod multi_plane_tests;
pub mod plane_gc;

use crate::alloc::{Allocation, BlockAllocator, FreeOrder};
use crate::pagecore::PageCore;
use crate::victim::{CostBenefitPicker, GreedyPicker, VictimPicker, VictimPolicy};
use crate::{Flash, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn, Purpose};
pub use plane_gc::PlaneAllocationScheme;
use plane_gc::PlaneGcMap;

/// Configuration of [`PageMap`]. Every field has a documented default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PageMapConfig {
    /// Fraction of the good physical pages hidden from the host, in [0, 1).
    /// 0 (the default) exports the largest logical space the scheme allows.
    pub over_provisioning: f64,
    /// Garbage collection runs before a write while the free blocks are at most
    /// this many (at least 1: the block GC copies into). Default 1.
    pub gc_free_blocks: u32,
    /// How victims are chosen. Default greedy.
    pub victim: VictimPolicy,
    /// In idle time, collect garbage until this many blocks are free (0 = never,
    /// the default).
    pub background_gc_free_blocks: u32,
    /// Which free block a new open block is: `fifo` (the default, no wear
    /// leveling) or `rber` (the lowest RBER first, 000 Section 6.4).
    pub free_order: FreeOrder,
    /// How garbage collection works: `ftlab` (the default: one device-wide
    /// greedy pass before a write while the free blocks are at most
    /// `gc_free_blocks`) or `mqsim` (per-plane pools and victims, several in
    /// flight, writes stalled: [`plane_gc`]).
    pub gc_model: GcModel,
    /// With `gc_model = "mqsim"`: how many victims a plane collects at once,
    /// and the free blocks below which its host writes stall. Default 10, the
    /// value the matched simulator fixes; at least 2.
    pub gc_max_victims_per_plane: u32,
    /// Where pages go: `die` (the default: one open block per die) or
    /// `multi-plane` (open blocks per plane, a request's pages programmed
    /// together by multi-plane programs; see the module documentation).
    pub plane_allocation: PlaneAllocation,
    /// With `gc_model = "mqsim"`: the order in which consecutive logical
    /// pages run over channels, ways, dies and planes, the four letters C, W,
    /// D, P in any order, the first varying fastest (the matched simulator's
    /// static plane allocation schemes). Default `"CWDP"`, channel first; a
    /// plane-first scheme such as `"PCWD"` puts a request's consecutive pages
    /// on the planes of one die, where multi-plane programs can take them
    /// together ([`plane_gc`]).
    pub plane_allocation_scheme: PlaneAllocationScheme,
    /// With `gc_model = "mqsim"`: what a read of a page no write reached
    /// costs. `free` (the default): nothing, no flash is read and the page
    /// reads as zeroes at once. `flash`: a page read on the die of the page's
    /// plane (sense and transfer), as the matched simulator maps such a page
    /// when it is read and reads flash for it; the page still reads as
    /// zeroes and takes no flash page.
    pub unwritten_reads: UnwrittenReads,
    /// With `gc_model = "mqsim"`: the resources each part of the logical
    /// space is placed on (default none: every page may go to every plane).
    /// With `n` partitions the logical space is cut into `n` equal parts in
    /// order, as `[[flow]]` runs cut it among their flows, and part `i` runs
    /// over the channels, ways, dies and planes partition `i` lists (an empty
    /// list: all of them), by `plane_allocation_scheme` (the matched
    /// simulator's per-flow `Channel_IDs`, `Chip_IDs`, `Die_IDs`,
    /// `Plane_IDs`). Written as `[[ftl.partitions]]` tables with keys
    /// `channels`, `ways`, `dies`, `planes`; at most 16 partitions and ids
    /// below 64.
    #[serde(skip_serializing_if = "Partitions::is_empty")]
    pub partitions: Partitions,
    /// With `gc_model = "mqsim"`: entries of the matched simulator's cached
    /// mapping table, whose flash work is modelled (translation reads on a
    /// miss, translation write-backs of dirty entries; the map itself stays
    /// whole in RAM: [`plane_gc`]'s cached map). 0 (the default): the whole
    /// map is in RAM and costs no flash work (MQSim's `Ideal_Mapping_Table`).
    #[serde(skip_serializing_if = "is_zero")]
    pub cmt_entries: u32,
    /// With `cmt_entries`: mapping entries a translation page holds. 0 (the
    /// default): the matched simulator's rule, the page size over
    /// `ceil((log2(physical pages) + sectors per page) / 8)` bytes an entry.
    #[serde(skip_serializing_if = "is_zero")]
    pub cmt_entries_per_page: u32,
    /// With `cmt_entries`: what becomes of a dirty translation page's
    /// write-back. `"never"` (the default): its merge read runs and its
    /// program never does, and the translation page counts as being written
    /// back from then on (misses on it are served from RAM), as in the
    /// matched simulator, whose transaction schedulers never serve the queue
    /// its translation writes wait in. `"programmed"`: the program runs after
    /// the merge read, and the page is served from RAM until it ends.
    #[serde(skip_serializing_if = "CmtWrites::is_never")]
    pub cmt_writes: CmtWrites,
    /// With `cmt_entries`: tables of the cached mapping table model. The
    /// logical space is cut into this many equal parts in order (the last
    /// takes what is left), as `[[flow]]` runs cut it among their flows; each
    /// part has its own table of `cmt_entries` entries and its own
    /// translation pages, numbered from 0 and placed like its logical pages
    /// from 0 (the matched simulator's address mapping domains, one a flow,
    /// each with its own table). 1 (the default): one table for the whole
    /// space.
    #[serde(skip_serializing_if = "is_one")]
    pub cmt_domains: u32,
    /// With `gc_model = "mqsim"`: garbage collection's reads, programs and
    /// erases and every host program wait in per-die queues and go to the
    /// die as it falls free (garbage collection's reads, then its programs,
    /// then its erases, then host reads, then host programs), each with the
    /// first queued one of each other plane of the die at the same page
    /// offset as one multi-plane command, as the matched simulator's
    /// transaction scheduler issues them with its garbage collection not
    /// preemptible ([`plane_gc`]'s queued collection). Data moves when the
    /// victim is picked or the write arrives; only the time is booked later,
    /// and a write completes when its program's time is. Only the per-die
    /// dispatchers (`host.dispatch = "per-die-priority"` or `"per-die-edf"`
    /// with `[[flow]]`s) play the queues; any other driver times every
    /// command when it is issued, as with `false` (the default). Not with
    /// `[device.data_cache]`, whose write-back estimates cannot follow
    /// programs booked later.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub gc_queue: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// What becomes of a cached mapping table's translation write-backs
/// ([`PageMapConfig::cmt_writes`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CmtWrites {
    /// The merge read runs, the program never does (the matched simulator:
    /// `TSU_OutofOrder.cpp` and `TSU_Priority_OutOfOrder.cpp` queue translation
    /// writes in `MappingWriteTRQueue` and never serve it).
    #[default]
    Never,
    /// The merge read, then the program.
    Programmed,
}

impl CmtWrites {
    fn is_never(&self) -> bool {
        *self == CmtWrites::Never
    }
}

/// One part of the logical space's resources ([`PageMapConfig::partitions`]):
/// the channel, way, die and plane numbers it may use (empty: all).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Partition {
    pub channels: Vec<u32>,
    pub ways: Vec<u32>,
    pub dies: Vec<u32>,
    pub planes: Vec<u32>,
}

/// At most [`Partitions::MAX`] partitions, each unit's ids as a bit mask (a
/// zero mask: all), so that the configuration stays a plain value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Vec<Partition>", into = "Vec<Partition>")]
pub struct Partitions {
    count: u8,
    /// Per partition, per unit (channel, way, die, plane), the ids allowed.
    masks: [[u64; 4]; Partitions::MAX],
}

impl Partitions {
    /// Partitions at most.
    pub const MAX: usize = 16;

    /// Whether there are none (every page may go to every plane).
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// How many.
    pub fn len(&self) -> usize {
        usize::from(self.count)
    }

    /// Partition `i`'s ids of unit `u` (0 channel, 1 way, 2 die, 3 plane)
    /// below `count`: all of them when its list was empty.
    pub fn ids(&self, i: usize, u: usize, count: u32) -> Vec<u32> {
        let mask = self.masks[i][u];
        (0..count).filter(|&id| mask == 0 || (id < 64 && mask >> id & 1 == 1)).collect()
    }

    /// The largest id any partition names for unit `u`, if any.
    pub fn max_id(&self, u: usize) -> Option<u32> {
        self.masks[..self.len()].iter().filter(|m| m[u] != 0).map(|m| 63 - m[u].leading_zeros()).max()
    }
}

impl TryFrom<Vec<Partition>> for Partitions {
    type Error = String;
    fn try_from(list: Vec<Partition>) -> Result<Self, String> {
        if list.len() > Partitions::MAX {
            return Err(format!(
                "ftl.partitions: {} partitions, at most {} are supported; give fewer",
                list.len(),
                Partitions::MAX
            ));
        }
        let mut p = Partitions { count: list.len() as u8, ..Partitions::default() };
        for (i, part) in list.iter().enumerate() {
            for (u, (name, ids)) in
                [("channels", &part.channels), ("ways", &part.ways), ("dies", &part.dies), ("planes", &part.planes)]
                    .into_iter()
                    .enumerate()
            {
                for &id in ids {
                    if id >= 64 {
                        return Err(format!("ftl.partitions[{i}].{name}: id {id} is past the 63 supported"));
                    }
                    p.masks[i][u] |= 1 << id;
                }
            }
        }
        Ok(p)
    }
}

impl From<Partitions> for Vec<Partition> {
    fn from(p: Partitions) -> Self {
        let ids = |m: u64| (0..64).filter(|&b| m >> b & 1 == 1).collect();
        p.masks[..p.len()]
            .iter()
            .map(|m| Partition { channels: ids(m[0]), ways: ids(m[1]), dies: ids(m[2]), planes: ids(m[3]) })
            .collect()
    }
}

/// What a read of a page never written costs ([`PageMapConfig::unwritten_reads`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnwrittenReads {
    /// No time: the page reads as zeroes without a flash read.
    #[default]
    Free,
    /// A page read's time on the die of the page's plane; the page counts as
    /// mapped there, as MQSim maps it, taking its plane's next page: where
    /// writes are paired by page offset, the plane's offsets move on by one
    /// (the medium's blocks are still programmed in order).
    Flash,
}

/// Where the page map places pages ([`PageMapConfig::plane_allocation`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlaneAllocation {
    /// One open block per die; writes striped over the dies.
    #[default]
    Die,
    /// One open block a plane for host data and one for copies; a request's
    /// pages programmed together by multi-plane programs.
    MultiPlane,
}

/// How the page map collects garbage ([`PageMapConfig::gc_model`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcModel {
    /// One device-wide pool of free blocks and of victims; before a host write,
    /// while the free blocks are at most `gc_free_blocks`, the greedy victim is
    /// collected whole (its valid pages copied, then erased and free again).
    #[default]
    Ftlab,
    /// The garbage collection of MQSim, the simulator whose results it
    /// reproduces ([`plane_gc`]).
    Mqsim,
}

/// Victims a plane collects at once under `gc_model = "mqsim"` by default.
pub const DEFAULT_MAX_VICTIMS_PER_PLANE: u32 = 10;

impl Default for PageMapConfig {
    fn default() -> Self {
        PageMapConfig {
            over_provisioning: 0.0,
            gc_free_blocks: 1,
            victim: VictimPolicy::Greedy,
            background_gc_free_blocks: 0,
            free_order: FreeOrder::Fifo,
            gc_model: GcModel::Ftlab,
            gc_max_victims_per_plane: DEFAULT_MAX_VICTIMS_PER_PLANE,
            plane_allocation: PlaneAllocation::Die,
            plane_allocation_scheme: PlaneAllocationScheme::CWDP,
            unwritten_reads: UnwrittenReads::Free,
            partitions: Partitions::default(),
            cmt_entries: 0,
            cmt_entries_per_page: 0,
            cmt_writes: CmtWrites::Never,
            cmt_domains: 1,
            gc_queue: false,
        }
    }
}

impl PageMapConfig {
    /// Named configurations: `pure-page-level`, `pagemap`, `ppm-ftl` (see the
    /// module documentation).
    pub fn preset(name: &str) -> Option<PageMapConfig> {
        let d = PageMapConfig::default();
        match name {
            "pure-page-level" => Some(d),
            "pagemap" => Some(PageMapConfig { over_provisioning: 0.10, gc_free_blocks: 2, ..d }),
            "ppm-ftl" => Some(PageMapConfig { over_provisioning: 0.03, gc_free_blocks: 2, ..d }),
            _ => None,
        }
    }

    /// Names accepted by [`PageMapConfig::preset`], with one line each.
    pub const PRESETS: [(&'static str, &'static str); 3] = [
        ("pure-page-level", "page mapping, whole space mapped, one swap block, GC when no free page is left (001)"),
        ("pagemap", "page mapping, 10% over-provisioning, greedy GC, FIFO free blocks (000)"),
        ("ppm-ftl", "pure page mapping with 3% over-provisioned blocks (004)"),
    ];

    /// Checks the fields; errors name the field.
    pub fn validate(&self) -> Result<(), FtlError> {
        crate::config::over_provisioning("pagemap", self.over_provisioning)?;
        crate::config::gc_free_blocks("pagemap", self.gc_free_blocks, crate::config::GC_NEEDS_A_FREE_BLOCK)?;
        if self.free_order == FreeOrder::HealthBin {
            return Err(FtlError::config(
                "ftl.free_order",
                "pagemap.free_order = \"health-bin\" needs data separated by heat, which pagemap does not do \
                 (000 Section 6.2); use \"fifo\" or \"rber\"",
            ));
        }
        if self.plane_allocation == PlaneAllocation::MultiPlane {
            if self.gc_model != GcModel::Ftlab {
                return Err(FtlError::config(
                    "ftl.plane_allocation",
                    "pagemap.plane_allocation = \"multi-plane\" works with gc_model = \"ftlab\" only; the mqsim \
                     model places each logical page in a fixed plane",
                ));
            }
            if self.free_order != FreeOrder::Fifo {
                return Err(FtlError::config(
                    "ftl.free_order",
                    "pagemap.plane_allocation = \"multi-plane\" takes free blocks first in, first out; leave \
                     free_order at \"fifo\"",
                ));
            }
        }
        if self.gc_model == GcModel::Ftlab && self.plane_allocation_scheme != PlaneAllocationScheme::CWDP {
            return Err(FtlError::config(
                "ftl.plane_allocation_scheme",
                format!(
                    "pagemap.plane_allocation_scheme = \"{}\" applies to gc_model = \"mqsim\" only (the ftlab \
                     model places pages by free die or by plane_allocation); set gc_model = \"mqsim\" too, or \
                     leave it out",
                    self.plane_allocation_scheme
                ),
            ));
        }
        if self.gc_model == GcModel::Ftlab && !self.partitions.is_empty() {
            return Err(FtlError::config(
                "ftl.partitions",
                "pagemap.partitions applies to gc_model = \"mqsim\" only (it places each logical page in a fixed \
                 plane); set gc_model = \"mqsim\" too, or leave it out",
            ));
        }
        if self.gc_model == GcModel::Ftlab && self.unwritten_reads != UnwrittenReads::Free {
            return Err(FtlError::config(
                "ftl.unwritten_reads",
                "pagemap.unwritten_reads = \"flash\" applies to gc_model = \"mqsim\" only (it reads the die of \
                 the page's fixed plane); set gc_model = \"mqsim\" too, or leave it out",
            ));
        }
        if self.gc_model == GcModel::Ftlab && (self.cmt_entries != 0 || self.cmt_entries_per_page != 0) {
            return Err(FtlError::config(
                "ftl.cmt_entries",
                "pagemap.cmt_entries and cmt_entries_per_page apply to gc_model = \"mqsim\" only (its model of \
                 MQSim's cached mapping table); set gc_model = \"mqsim\" too, or use ftl.kind = \"dftl\" for a \
                 page map cached in RAM with its own garbage collection",
            ));
        }
        if self.cmt_entries == 0 && self.cmt_entries_per_page != 0 {
            return Err(FtlError::config(
                "ftl.cmt_entries_per_page",
                "pagemap.cmt_entries_per_page sizes the translation pages of a cached mapping table, and \
                 cmt_entries is 0 (the whole map in RAM); give cmt_entries too, or leave cmt_entries_per_page out",
            ));
        }
        if self.cmt_domains == 0 {
            return Err(FtlError::config(
                "ftl.cmt_domains",
                "pagemap.cmt_domains = 0: a cached mapping table needs at least one table; give 1 (one table for \
                 the whole logical space, the default) or the number of flows that each have their own",
            ));
        }
        if self.cmt_entries == 0 && self.cmt_domains != 1 {
            return Err(FtlError::config(
                "ftl.cmt_domains",
                "pagemap.cmt_domains cuts a cached mapping table into one table a part of the logical space, and \
                 cmt_entries is 0 (the whole map in RAM); give cmt_entries too, or leave cmt_domains out",
            ));
        }
        if self.cmt_entries == 0 && self.cmt_writes != CmtWrites::Never {
            return Err(FtlError::config(
                "ftl.cmt_writes",
                "pagemap.cmt_writes says what becomes of a cached mapping table's translation write-backs, and \
                 cmt_entries is 0 (the whole map in RAM, no write-backs); give cmt_entries too, or leave cmt_writes out",
            ));
        }
        if self.gc_queue && self.gc_model != GcModel::Mqsim {
            return Err(FtlError::config(
                "ftl.gc_queue",
                "pagemap.gc_queue queues garbage collection per die as the matched simulator does and applies to \
                 gc_model = \"mqsim\" only; set that too, or leave gc_queue out",
            ));
        }
        match self.gc_model {
            GcModel::Ftlab if self.gc_max_victims_per_plane != DEFAULT_MAX_VICTIMS_PER_PLANE => Err(FtlError::config(
                "ftl.gc_max_victims_per_plane",
                "pagemap.gc_max_victims_per_plane applies to gc_model = \"mqsim\" only; set that too, \
                     or leave it out",
            )),
            GcModel::Ftlab => Ok(()),
            GcModel::Mqsim => plane_gc::validate(self),
        }
    }

    /// Logical pages exported on a device with `good_blocks` usable blocks. The
    /// highest utilization allowed keeps `gc_free_blocks` free, the open blocks
    /// (one per die, or two per plane with `multi-plane`), and one more block, so that the closed blocks always hold at least a
    /// block's worth of reclaimable pages and greedy GC always makes progress.
    pub fn logical_pages(&self, geometry: &Geometry, good_blocks: u32) -> Result<u32, FtlError> {
        let ppb = u64::from(geometry.pages_per_block);
        let open = match self.plane_allocation {
            PlaneAllocation::Die => u64::from(geometry.dies()),
            // Host and copy blocks in every plane.
            PlaneAllocation::MultiPlane => 2 * u64::from(geometry.dies()) * u64::from(geometry.planes_per_die),
        };
        let slack = u64::from(self.gc_free_blocks) + open + 1;
        let max = u64::from(good_blocks).saturating_sub(slack) * ppb;
        let wanted = ((u64::from(good_blocks) * ppb) as f64 * (1.0 - self.over_provisioning)).floor() as u64;
        let logical = wanted.min(max);
        if logical == 0 {
            return Err(FtlError::config("device", format!(
                "the device is too small for pagemap: {good_blocks} good blocks, {slack} needed as GC reserve and open blocks"
            )));
        }
        Ok(logical as u32)
    }
}

/// The victim picker a configuration chooses is a type parameter of the page
/// map, not a branch taken on every write.
impl FtlBuilder for PageMapConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(match (self.gc_model, self.victim) {
            (GcModel::Ftlab, VictimPolicy::Greedy) => Box::new(PageMap::<GreedyPicker>::format(*self, io)?),
            (GcModel::Ftlab, VictimPolicy::CostBenefit) => Box::new(PageMap::<CostBenefitPicker>::format(*self, io)?),
            (GcModel::Mqsim, VictimPolicy::Greedy) => Box::new(PlaneGcMap::<GreedyPicker>::format(*self, io)?),
            (GcModel::Mqsim, VictimPolicy::CostBenefit) => {
                Box::new(PlaneGcMap::<CostBenefitPicker>::format(*self, io)?)
            }
        })
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(match (self.gc_model, self.victim) {
            (GcModel::Ftlab, VictimPolicy::Greedy) => Box::new(PageMap::<GreedyPicker>::recover(*self, io)?),
            (GcModel::Ftlab, VictimPolicy::CostBenefit) => Box::new(PageMap::<CostBenefitPicker>::recover(*self, io)?),
            (GcModel::Mqsim, VictimPolicy::Greedy) => Box::new(PlaneGcMap::<GreedyPicker>::recover(*self, io)?),
            (GcModel::Mqsim, VictimPolicy::CostBenefit) => {
                Box::new(PlaneGcMap::<CostBenefitPicker>::recover(*self, io)?)
            }
        })
    }
}

/// The page-mapped FTL, choosing its victims with `P`: the page-mapped core
/// ([`PageCore`]) with one stream, writes striped over the dies, and greedy (or
/// cost-benefit) victims collected whole.
#[derive(Debug)]
pub struct PageMap<P: VictimPicker = GreedyPicker> {
    config: PageMapConfig,
    core: PageCore,
    picker: P,
    /// With `multi-plane`: the pages of the current request not yet programmed.
    staged: Vec<(Lpn, Payload)>,
    /// With `multi-plane`: the die the next request's pages go to first.
    die_cursor: u32,
}

/// The open block for host data, in each plane (`multi-plane`).
const HOST: u32 = 0;
/// The open block for copies, in each plane (`multi-plane`).
const COPIES: u32 = 1;
/// Pages of a request waiting in RAM at most (`multi-plane`), in planes'
/// worth: enough to level the die's planes and fill multi-plane programs.
const STAGED_PLANES: usize = 4;

impl<P: VictimPicker> PageMap<P> {
    fn empty(config: PageMapConfig, io: &Io) -> Result<Self, FtlError> {
        config.validate()?;
        let g = *io.geometry();
        let good = (0..g.total_blocks()).filter(|&b| !io.is_bad(BlockId(b))).count() as u32;
        let logical_pages = config.logical_pages(&g, good)?;
        if config.plane_allocation == PlaneAllocation::MultiPlane {
            if g.planes_per_die < 2 {
                return Err(FtlError::config(
                    "ftl.plane_allocation",
                    format!(
                        "pagemap.plane_allocation = \"multi-plane\" needs dies of at least 2 planes; this chip has \
                         {} (set device.planes)",
                        g.planes_per_die
                    ),
                ));
            }
            let c = io.commands();
            if !c.multi_plane || c.multi_plane_same_block {
                return Err(FtlError::config(
                    "ftl.plane_allocation",
                    "pagemap.plane_allocation = \"multi-plane\" needs a chip with multi-plane programs and no \
                     same-block rule: set device.commands.multi_plane = true and leave \
                     device.commands.multi_plane_same_block false",
                ));
            }
        }
        let mut core = PageCore::new(g, logical_pages, 1);
        if config.plane_allocation == PlaneAllocation::MultiPlane {
            core.alloc = BlockAllocator::per_plane(&g, 2);
        }
        Ok(PageMap {
            config,
            core,
            picker: P::new(g.total_blocks(), g.pages_per_block),
            staged: Vec::new(),
            die_cursor: 0,
        })
    }

    #[inline]
    fn multi_plane(&self) -> bool {
        self.config.plane_allocation == PlaneAllocation::MultiPlane
    }

    /// A page map on a freshly formatted medium.
    pub fn format(config: PageMapConfig, io: &mut Io) -> Result<Self, FtlError> {
        let mut ftl = Self::empty(config, io)?;
        if ftl.multi_plane() {
            let g = ftl.core.geometry;
            ftl.core.alloc = BlockAllocator::formatted_per_plane(&g, 2, |b| io.is_bad(b));
        } else {
            ftl.core.format(io, 1);
        }
        Ok(ftl)
    }

    /// Rebuilds a page map from the medium: reads every programmed page's OOB;
    /// for each logical page the copy with the newest sequence number wins. Blocks
    /// whose erase was torn are erased again; on each die the partly written block
    /// with the newest data is reopened, other partly written blocks are closed
    /// (GC reclaims their unwritten pages).
    pub fn recover(config: PageMapConfig, io: &mut Io) -> Result<Self, FtlError> {
        let mut ftl = Self::empty(config, io)?;
        let scan = ftl.core.recover(io, &mut ftl.picker)?;
        for b in scan.free {
            ftl.core.alloc.release(b);
        }
        for b in scan.closed {
            ftl.picker.insert(b);
        }
        for (b, next) in scan.open {
            ftl.core.alloc.reopen(HOST, b, next);
        }
        Ok(ftl)
    }

    /// A host write with `multi-plane` placement: held in RAM until its
    /// request's last page (or enough pages), then programmed with the rest
    /// ([`PageMap::flush_staged`]). Out of line: the default placement's
    /// write path stays as small as it was.
    #[inline(never)]
    fn write_multi_plane(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
        self.core.index(lpn)?;
        let free_target = self.config.gc_free_blocks;
        io.independent(|io| self.collect_until(io, free_target))?;
        if self.staged.iter().any(|(l, _)| *l == lpn) {
            self.flush_staged(io)?;
        }
        self.staged.push((lpn, data));
        if hint.more && self.staged.len() < STAGED_PLANES * self.core.geometry.planes_per_die as usize {
            // Acknowledged with the request's last page.
            return Ok(());
        }
        self.flush_staged(io)?;
        io.ack();
        Ok(())
    }

    /// The planes of `die` (numbered die by die) whose host blocks are at the
    /// lowest next page offset among those with room or a free block, at most
    /// `want` of them: one multi-plane program's worth.
    fn level_planes(&self, die: u32, want: usize) -> Vec<u32> {
        let g = &self.core.geometry;
        let ppb = g.pages_per_block;
        let mut best = u32::MAX;
        let mut planes = Vec::with_capacity(g.planes_per_die as usize);
        for p in die * g.planes_per_die..(die + 1) * g.planes_per_die {
            let room = self.core.alloc.open_room(HOST, ftlab_nand::DieId(p));
            let offset = if room > 0 {
                ppb - room
            } else if self.core.alloc.free_blocks_in(ftlab_nand::DieId(p)) > 0 {
                0
            } else {
                continue;
            };
            if offset < best {
                best = offset;
                planes.clear();
            }
            if offset == best {
                planes.push(p);
            }
        }
        planes.truncate(want);
        planes
    }

    /// A plane of a die other than `except` that is behind a sibling plane
    /// (its host block at a lower page offset), the first in die order from
    /// `except`: where a lone page levels that die.
    fn uneven_plane(&self, except: u32) -> Option<u32> {
        let dies = self.core.geometry.dies();
        (1..dies).map(|i| (except + i) % dies).find_map(|d| {
            let level = self.level_planes(d, usize::MAX);
            let all = self.core.geometry.planes_per_die as usize;
            (!level.is_empty() && level.len() < all).then(|| level[0])
        })
    }

    /// Programs the pages waiting in RAM (`multi-plane`): on the next die,
    /// a multi-plane program for each set of level planes, a plane alone by a
    /// single program; a page whose program fails is retired with its block
    /// and programmed alone elsewhere.
    #[inline(never)]
    fn flush_staged(&mut self, io: &mut Io) -> Result<(), FtlError> {
        if self.staged.is_empty() {
            return Ok(());
        }
        let mut rest: std::collections::VecDeque<(Lpn, Payload)> = self.staged.drain(..).collect();
        let dies = self.core.geometry.dies();
        let die = io.free_die_from(ftlab_nand::DieId(self.die_cursor)).0;
        self.die_cursor = (die + 1) % dies;
        let first_plane = die * self.core.geometry.planes_per_die;
        while !rest.is_empty() {
            let planes = self.level_planes(die, rest.len());
            if planes.len() < 2 {
                let Some((lpn, data)) = rest.pop_front() else { break };
                // A last odd page would put a level die's planes a page
                // apart: it levels another die's planes if one is uneven.
                let plane = match planes.first() {
                    Some(&p) if rest.is_empty() && self.level_planes(die, usize::MAX).len() > 1 => {
                        self.uneven_plane(die).unwrap_or(p)
                    }
                    Some(&p) => p,
                    None => first_plane,
                };
                self.write_on_plane(io, lpn, data, plane)?;
                continue;
            }
            let mut pages = Vec::with_capacity(planes.len());
            for &p in &planes {
                let Some((lpn, data)) = rest.pop_front() else { break };
                let Allocation { ppa, filled } = self
                    .core
                    .alloc
                    .next_page_in(HOST, ftlab_nand::DieId(p))
                    .ok_or_else(|| FtlError::DeviceFull("a plane with room has no page".into()))?;
                if let Some(b) = filled {
                    self.picker.insert(b);
                }
                pages.push(ftlab_nand::PlanePage {
                    ppa,
                    lpn: lpn.0,
                    kind: ftlab_nand::PageKind::Data,
                    data,
                    bytes: io.host_bytes(),
                });
            }
            for (lpn, ppa, data) in self.core.program_multi_host(io, &mut self.picker, pages)? {
                Self::retire(&mut self.core.alloc, &mut self.picker, self.core.layout.block_of(ppa));
                self.write_on_plane(io, lpn, data, first_plane)?;
            }
        }
        Ok(())
    }

    /// Programs one host page on `plane`'s host block (`multi-plane`), or on
    /// the next plane with room.
    fn write_on_plane(&mut self, io: &mut Io, lpn: Lpn, data: Payload, plane: u32) -> Result<(), FtlError> {
        let old = self.core.table.get(lpn.0 as usize);
        self.core.write_placed(io, &mut self.picker, lpn, old, data, |alloc, picker, _io, bad| {
            Self::place_in(alloc, picker, HOST, plane, bad)
        })?;
        Ok(())
    }

    /// The next page of `plane`'s open block for `stream` (`multi-plane`;
    /// another plane's when it has no room), after retiring `bad`.
    fn place_in(
        alloc: &mut BlockAllocator,
        picker: &mut P,
        stream: u32,
        plane: u32,
        bad: Option<BlockId>,
    ) -> Result<Ppa, FtlError> {
        if let Some(b) = bad {
            Self::retire(alloc, picker, b);
        }
        // With no free block left, a stream takes room in the other stream's
        // open blocks rather than fail (host data and copies share a block).
        let Allocation { ppa, filled } = alloc
            .next_page(stream, ftlab_nand::DieId(plane))
            .or_else(|| alloc.next_page(1 - stream, ftlab_nand::DieId(plane)))
            .ok_or_else(|| FtlError::DeviceFull("no open block has room and no block is free".into()))?;
        if let Some(b) = filled {
            picker.insert(b);
        }
        Ok(ppa)
    }

    /// The next page on `die` (or another die when it is out of room), after
    /// retiring `bad`, a block that went bad under a program
    /// ([`Io::program_placed`]): it leaves the open blocks for the GC
    /// candidates, whose collection moves its valid pages off and never erases
    /// it. A block that fills up becomes a GC candidate.
    #[inline(always)]
    fn place(
        alloc: &mut BlockAllocator,
        picker: &mut P,
        free_order: FreeOrder,
        io: &Io,
        die: ftlab_nand::DieId,
        bad: Option<BlockId>,
    ) -> Result<Ppa, FtlError> {
        if let Some(b) = bad {
            Self::retire(alloc, picker, b);
        }
        let next = match free_order {
            FreeOrder::Fifo => alloc.next_page(0, die),
            // `validate` refuses health binning: one stream has no heat to bin by.
            FreeOrder::Rber | FreeOrder::HealthBin => alloc.next_page_by(0, die, |b| io.rber(b)),
        };
        let Allocation { ppa, filled } =
            next.ok_or_else(|| FtlError::DeviceFull("no open block has room and no block is free".into()))?;
        if let Some(b) = filled {
            picker.insert(b);
        }
        Ok(ppa)
    }

    #[cold]
    fn retire(alloc: &mut BlockAllocator, picker: &mut P, b: BlockId) {
        if alloc.retire(b).is_some() {
            picker.insert(b);
        }
    }

    /// Reclaims one victim block. Returns false if no candidate has a reclaimable
    /// page.
    fn collect_one(&mut self, io: &mut Io) -> Result<bool, FtlError> {
        let Some(victim) = self.picker.pick(io.now()) else {
            return Ok(false);
        };
        if self.picker.valid(victim) >= self.core.geometry.pages_per_block {
            return Ok(false);
        }
        self.picker.remove(victim);
        if self.multi_plane() {
            return self.collect_in_plane(io, victim);
        }
        let die = self.core.layout.die_of_block(victim);
        let order = self.config.free_order;
        self.core.evacuate(io, &mut self.picker, victim, |alloc, picker, io, bad| {
            Self::place(alloc, picker, order, io, die, bad)
        })?;
        self.core.reclaim(io, victim, Purpose::Gc)?;
        Ok(true)
    }

    /// Collects `victim` with `multi-plane` placement: its pages are copied
    /// inside its plane, into the plane's copy block.
    #[inline(never)]
    fn collect_in_plane(&mut self, io: &mut Io, victim: BlockId) -> Result<bool, FtlError> {
        let plane = victim.0 / self.core.geometry.blocks_per_plane;
        self.core.evacuate(io, &mut self.picker, victim, |alloc, picker, _io, bad| {
            Self::place_in(alloc, picker, COPIES, plane, bad)
        })?;
        self.core.reclaim(io, victim, Purpose::Gc)?;
        Ok(true)
    }

    /// Collects garbage while at most `free_blocks` blocks are free; returns
    /// whether any page moved.
    #[inline]
    fn collect_until(&mut self, io: &mut Io, free_blocks: u32) -> Result<bool, FtlError> {
        let mut collected = false;
        while self.core.alloc.free_blocks() <= free_blocks {
            collected = true;
            if !self.collect_one(io)? {
                break;
            }
        }
        Ok(collected)
    }
}

impl<P: VictimPicker + 'static> Ftl for PageMap<P> {
    fn name(&self) -> &'static str {
        "pagemap"
    }

    fn logical_pages(&self) -> u32 {
        self.core.logical_pages
    }

    fn prefetch(&self, flash: &Flash, lpn: Lpn, what: crate::Prefetch) {
        self.core.prefetch(flash, lpn, what);
    }

    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        if !self.staged.is_empty() {
            self.flush_staged(io)?;
        }
        self.core.read(io, lpn)
    }

    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
        if self.multi_plane() {
            return self.write_multi_plane(io, lpn, data, hint);
        }
        let l = self.core.index(lpn)?;
        // The table entry is most likely a cache miss: load it first, so that the
        // allocation and the program below, which do not depend on it, overlap
        // with the load. Garbage collection may move the page; then load it again.
        let mut old = self.core.table.get(l);
        let free_target = self.config.gc_free_blocks;
        if io.independent(|io| self.collect_until(io, free_target))? {
            old = self.core.table.get(l);
        }
        // Stripe over the dies, skipping dies busy (e.g. with a GC pass) when an
        // idle one exists.
        let die = io.free_die_from(self.core.alloc.next_die());
        let order = self.config.free_order;
        self.core.write_placed(io, &mut self.picker, lpn, old, data, |alloc, picker, io, bad| {
            Self::place(alloc, picker, order, io, die, bad)
        })?;
        io.ack();
        Ok(())
    }

    fn trim(&mut self, io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        let l = self.core.index(lpn)?;
        if !self.staged.is_empty() {
            self.flush_staged(io)?;
        }
        self.core.trim(&mut self.picker, l);
        Ok(())
    }

    fn flush(&mut self, io: &mut Io) -> Result<(), FtlError> {
        self.flush_staged(io)
    }

    fn background(&mut self, io: &mut Io, until: SimTime) -> Result<(), FtlError> {
        self.flush_staged(io)?;
        while self.core.alloc.free_blocks() < self.config.background_gc_free_blocks && io.last_finish() < until {
            if !self.collect_one(io)? {
                break;
            }
        }
        Ok(())
    }

    fn ram_bytes(&self) -> u64 {
        self.core.ram_bytes() + self.picker.ram_bytes()
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
}

impl<P: VictimPicker> crate::Placement for PageMap<P> {
    fn die_of(&self, lpn: Lpn) -> Option<ftlab_nand::DieId> {
        self.core.die_of(lpn)
    }
    fn read_slot(&self, lpn: Lpn) -> Option<(u32, u32)> {
        self.core.read_slot(lpn)
    }
}

/// The registry's entries for this module's schemes ([`crate::registry`]).
pub const SCHEMES: [crate::entry::Scheme; 3] = [
    crate::entry::Scheme {
        name: "pagemap",
        summary: "pure page mapping, greedy GC, configurable over-provisioning (defaults of the 000 baseline)",
        paper: "000 Section 6.1 (the page-map baseline)",
        admits_tasks: false,
        bounds: false,
        build: |p, _| {
            crate::entry::configured(
                "pagemap",
                PageMapConfig::preset("pagemap").unwrap_or_default(),
                p,
                PageMapConfig::validate,
            )
        },
    },
    crate::entry::Scheme {
        name: "pure-page-level",
        summary: PageMapConfig::PRESETS[0].1,
        paper: "001 Section 6 (Pure-Page-Level)",
        admits_tasks: false,
        bounds: false,
        build: |p, _| {
            crate::entry::configured(
                "pure-page-level",
                PageMapConfig::preset("pure-page-level").unwrap_or_default(),
                p,
                PageMapConfig::validate,
            )
        },
    },
    crate::entry::Scheme {
        name: "ppm-ftl",
        summary: PageMapConfig::PRESETS[2].1,
        paper: "004 Section 6 (PPM-FTL)",
        admits_tasks: false,
        bounds: false,
        build: |p, _| {
            crate::entry::configured(
                "ppm-ftl",
                PageMapConfig::preset("ppm-ftl").unwrap_or_default(),
                p,
                PageMapConfig::validate,
            )
        },
    },
];
