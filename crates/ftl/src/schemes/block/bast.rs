//! BAST: block-associative sector translation (Kim et al. 2002), the log-block
//! scheme 004_15edfc19ad848aee.txt compares Janus-FTL against (Section 2 and
//! Figure 7).
//!
//! Each logical block has at most one data block, holding its pages in place, and
//! at most one log block, dedicated to it: every write to the logical block is
//! appended to its log block. The log blocks come from a fixed pool (the spare
//! blocks but two: the merge target, and one a power cut may take back). A log block is reclaimed when it is full
//! or when a logical block without one needs one and the pool is spent (the
//! logical block whose log block was opened first is the victim), by
//!
//! - a *switch merge*: the log block holds the whole logical block in place (a
//!   sequential rewrite); it becomes the data block and the old data block is
//!   erased;
//! - a *partial merge*: the log block holds the first pages in place; the rest
//!   are copied into it from the data block, it becomes the data block and the
//!   old data block is erased;
//! - a *full merge*: otherwise; the newest copy of each page is copied in place
//!   into a free block, which becomes the data block; the old data block and the
//!   log block are erased.
//!
//! Merges run inside the write that needs them. Maps are kept in non-volatile RAM
//! as in the simulation setting of 004 (no map I/O; recovery scans the OOB
//! areas) or on flash (`ftl.map_persistence = "flash"`: recovery replays the
//! checkpoint and the map log and rolls forward, see the `maplog` module); then, in
//! the `hybrid` module, a torn merge is completed, each logical block's newest
//! in-place block is its data block, another block holding its pages is its log
//! block (more than one: they are merged).
//!
//! Faults: a log block whose program fails counts as full, so the write is
//! retried after a merge of its logical block moves the log block's pages off and
//! retires it; a block gone bad is never switched in as a data block (a full
//! merge instead), a partial merge whose log block goes bad becomes a full merge,
//! and a full merge whose target goes bad starts over in another free block.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use ftlab_nand::Payload;

use crate::flash::{program_failed, retry_program};
use crate::hybrid::{is_bad, Core, NONE};
use crate::maplog::{MapPersistence, Persistence};
use crate::{check_lpn, Flash, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn, Purpose};

/// Configuration of [`Bast`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BastConfig {
    /// Fraction of the good blocks not exported (the log blocks and the merge
    /// target). Default 0.03, the over-provisioning of 004's Figure 7. At least
    /// three blocks are spare (a log block, the merge target and one a power cut
    /// may take back: a block whose erase it overtook holds trimmed pages again).
    pub over_provisioning: f64,
    /// Where the maps persist (`ftl.map_persistence`): `"nvram"` (the default:
    /// no map I/O, 004's simulation setting) or `"flash"` (a map log with
    /// checkpoints whose I/O counts as map operations, 004's Linux MTD setting;
    /// see the `maplog` module).
    pub map_persistence: MapPersistence,
}

impl Default for BastConfig {
    fn default() -> Self {
        BastConfig { over_provisioning: 0.03, map_persistence: MapPersistence::Nvram }
    }
}

impl BastConfig {
    /// Checks the fields; errors name the field.
    pub fn validate(&self) -> Result<(), FtlError> {
        crate::config::over_provisioning("bast", self.over_provisioning)?;
        Ok(())
    }
}

impl BastConfig {
    fn persistence(&self) -> Persistence {
        Persistence { mode: self.map_persistence, page_mapped: false }
    }
}

impl FtlBuilder for BastConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        self.validate()?;
        let core = Core::format_with("bast", io, self.over_provisioning, MIN_SPARE, self.persistence())?;
        Ok(Box::new(Bast::with_core(core)))
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        self.validate()?;
        Ok(Box::new(Bast::recover(*self, io)?))
    }
}

/// Spare blocks at least: a log block and [`RESERVE`].
const MIN_SPARE: u32 = 3;
/// Free blocks kept besides the log blocks: the merge target, and one for a
/// block whose erase a power cut overtook (its trimmed pages come back and it
/// is a log block again until merged).
const RESERVE: usize = 2;

/// Merges done, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergeCounts {
    pub switch: u64,
    pub partial: u64,
    pub full: u64,
}

/// The BAST FTL.
#[derive(Debug)]
pub struct Bast {
    core: Core,
    /// Per logical block: its log block, or `NONE`.
    log: Vec<u32>,
    /// Logical blocks with a log block, oldest first.
    order: VecDeque<u32>,
    /// Log blocks the pool holds.
    max_logs: usize,
    merges: MergeCounts,
}

impl Bast {
    fn with_core(core: Core) -> Self {
        let spare = core.free.len().saturating_sub(core.lblocks as usize);
        let lblocks = core.lblocks as usize;
        Bast {
            core,
            log: vec![NONE; lblocks],
            order: VecDeque::new(),
            max_logs: spare.max(MIN_SPARE as usize) - RESERVE,
            merges: MergeCounts::default(),
        }
    }

    /// Rebuilds BAST from an OOB scan.
    pub fn recover(config: BastConfig, io: &mut Io) -> Result<Self, FtlError> {
        let (core, rest) = Core::recover("bast", io, config.over_provisioning, MIN_SPARE, config.persistence())?;
        let good = core.free.len() + core.data.iter().filter(|&&d| d != NONE).count() + rest.len();
        let lblocks = core.lblocks as usize;
        let mut f = Bast {
            core,
            log: vec![NONE; lblocks],
            order: VecDeque::new(),
            max_logs: good.saturating_sub(lblocks).max(MIN_SPARE as usize) - RESERVE,
            merges: MergeCounts::default(),
        };
        let ppb = f.core.ppb();
        let mut extra = Vec::new();
        for (_, b) in rest {
            // Every BAST block holds the pages of one logical block.
            let Some(&lpn) = f.core.valid_pages(b).first() else { continue };
            let lb = lpn / ppb;
            if f.log[lb as usize] == NONE {
                f.log[lb as usize] = b;
                f.order.push_back(lb);
            } else {
                extra.push((lb, b));
            }
        }
        for (lb, b) in extra {
            // A block whose erase the cut overtook: its pages go to the log
            // block if they fit, else the logical block is merged.
            let log = f.log[lb as usize];
            if log != NONE && f.core.valid[b as usize] <= ppb - f.core.next[log as usize] {
                let mut moved = true;
                for lpn in f.core.valid_pages(b) {
                    match f.core.copy(io, lpn, log, Purpose::Recovery) {
                        Ok(()) => {}
                        // The log block went bad: merged below.
                        Err(e) if program_failed(&e) => {
                            moved = false;
                            break;
                        }
                        Err(e) => return Err(e),
                    }
                }
                if moved {
                    f.core.erase(io, b, Purpose::Recovery)?;
                    continue;
                }
            }
            if f.log[lb as usize] != NONE {
                f.full_merge(io, lb, Purpose::Recovery)?;
            }
        }
        while f.order.len() > f.max_logs {
            let Some(&victim) = f.order.front() else { break };
            f.merge(io, victim)?;
        }
        Ok(f)
    }

    /// What the last recovery read (flash mode; see the `maplog` module).
    #[cfg(test)]
    pub(crate) fn recovery(&self) -> crate::hybrid::replay::RecoveryReads {
        self.core.recovery
    }

    /// Merges done so far.
    pub fn merges(&self) -> MergeCounts {
        self.merges
    }

    /// Full merge of `lb` with every block holding its pages except the new one.
    fn full_merge(&mut self, io: &mut Io, lb: u32, purpose: Purpose) -> Result<(), FtlError> {
        let c = &mut self.core;
        let olds: Vec<u32> = (0..c.g.total_blocks())
            .filter(|&b| c.valid[b as usize] > 0 && c.data[lb as usize] != b)
            .filter(|&b| c.owners(b).contains(&lb))
            .collect();
        c.merge(io, lb, purpose)?;
        let log = self.log[lb as usize];
        for b in olds.into_iter().chain((log != NONE).then_some(log)) {
            if self.core.valid[b as usize] == 0 && self.core.next[b as usize] > 0 && !self.core.data.contains(&b) {
                self.core.erase(io, b, purpose)?;
            }
        }
        self.drop_log(lb);
        self.merges.full += 1;
        Ok(())
    }

    fn drop_log(&mut self, lb: u32) {
        self.log[lb as usize] = NONE;
        self.order.retain(|&x| x != lb);
    }

    /// Reclaims the log block of `lb` by a switch, partial or full merge.
    fn merge(&mut self, io: &mut Io, lb: u32) -> Result<(), FtlError> {
        let log = self.log[lb as usize];
        let data = self.core.data[lb as usize];
        let c = &mut self.core;
        let ppb = c.ppb();
        if log != NONE
            && !is_bad(io, log)
            && c.in_place(log, lb)
            && !c.valid_outside_below(lb, log, c.next[log as usize])
        {
            let switch = c.next[log as usize] == ppb || c.last_valid(lb).is_none_or(|l| l < c.next[log as usize]);
            match c.fill_in_place(io, log, lb, Purpose::Gc) {
                Ok(_) => {}
                // The log block went bad: a full merge instead.
                Err(e) if program_failed(&e) => return self.full_merge_of(io, lb),
                Err(e) => return Err(e),
            }
            c.data[lb as usize] = log;
            if data != NONE {
                c.erase(io, data, Purpose::Gc)?;
            }
            self.drop_log(lb);
            crate::hybrid::fence(io);
            if switch {
                self.merges.switch += 1;
            } else {
                self.merges.partial += 1;
            }
            return Ok(());
        }
        self.full_merge_of(io, lb)
    }

    /// Full merge of `lb` with its log block, which is erased (retired if it
    /// has gone bad).
    fn full_merge_of(&mut self, io: &mut Io, lb: u32) -> Result<(), FtlError> {
        let log = self.log[lb as usize];
        let c = &mut self.core;
        c.merge(io, lb, Purpose::Gc)?;
        if log != NONE {
            c.erase(io, log, Purpose::Gc)?;
        }
        crate::hybrid::fence(io);
        self.drop_log(lb);
        self.merges.full += 1;
        Ok(())
    }

    /// A log block for `lb`, reclaiming the oldest log block while the pool is
    /// spent or only the merge target is free.
    fn open_log(&mut self, io: &mut Io, lb: u32) -> Result<u32, FtlError> {
        while self.order.len() >= self.max_logs || self.core.free.len() <= RESERVE {
            let Some(&victim) = self.order.front() else {
                return Err(FtlError::DeviceFull("bast: no log block to reclaim".into()));
            };
            self.merge(io, victim)?;
        }
        let b = self.core.take_free()?;
        self.log[lb as usize] = b;
        self.order.push_back(lb);
        Ok(b)
    }
    /// One try at writing `lpn`: into its logical block's log block, merging a
    /// full one first and opening one if it has none.
    fn write_once(&mut self, io: &mut Io, lpn: Lpn, data: Payload) -> Result<(), FtlError> {
        let lb = lpn.0 / self.core.ppb();
        let mut log = self.log[lb as usize];
        if log != NONE && self.core.next[log as usize] == self.core.ppb() {
            self.merge(io, lb)?;
            log = NONE;
        }
        if log == NONE {
            log = self.open_log(io, lb)?;
        }
        self.core.write(io, log, lpn.0, data, Purpose::Host)
    }
}

impl Ftl for Bast {
    fn name(&self) -> &'static str {
        "bast"
    }
    fn logical_pages(&self) -> u32 {
        self.core.logical_pages()
    }
    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        check_lpn(lpn, self.logical_pages())?;
        self.core.read(io, lpn.0)
    }
    /// Appends `lpn` to its logical block's log block; when the program fails,
    /// the log block counts as full and the write is tried again (after a merge),
    /// up to [`PROGRAM_ATTEMPTS`](crate::flash::PROGRAM_ATTEMPTS) times.
    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, _hint: &Hint) -> Result<(), FtlError> {
        check_lpn(lpn, self.logical_pages())?;
        retry_program(self, |s| s.write_once(io, lpn, data.clone()), |_, _| {})
    }
    fn flush(&mut self, io: &mut Io) -> Result<(), FtlError> {
        self.core.flush_maps(io)
    }
    fn trim(&mut self, _io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        check_lpn(lpn, self.logical_pages())?;
        self.core.invalidate(lpn.0);
        Ok(())
    }
    fn ram_bytes(&self) -> u64 {
        // The block map, and per log block its logical block and a page map.
        self.core.block_map_bytes() + self.max_logs as u64 * (4 + u64::from(self.core.ppb()) * 2)
    }
    fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
        self.core.check(flash)?;
        let ppb = self.core.ppb();
        for (lb, &l) in self.log.iter().enumerate() {
            if l == NONE {
                continue;
            }
            if self.core.data.contains(&l) {
                return Err(format!("bast: log block {l} of logical block {lb} is also a data block"));
            }
            for lpn in self.core.valid_pages(l) {
                if lpn / ppb != lb as u32 {
                    return Err(format!("bast: log block {l} of logical block {lb} holds lpn {lpn}"));
                }
            }
        }
        if self.order.len() != self.log.iter().filter(|&&l| l != NONE).count() {
            return Err("bast: the log order and the log blocks differ".into());
        }
        Ok(())
    }
}

/// The registry's entries for this module's schemes ([`crate::registry`]).
pub const SCHEMES: [crate::entry::Scheme; 1] = [crate::entry::Scheme {
    name: "bast",
    summary: "BAST (Kim 2002, via 004): one log block per data block, switch / partial / full merges",
    paper: "004 Section 2 (Kim et al. 2002)",
    admits_tasks: false,
    bounds: false,
    build: |p, _| crate::entry::configured("bast", BastConfig::default(), p, BastConfig::validate),
}];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use ftlab_nand::{Geometry, SimTime};

    fn geometry() -> Geometry {
        crate::testing::one_die(16, 4)
    }

    fn write(f: &mut Bast, fl: &mut Flash, t: &mut u64, lpn: u32) {
        *t += 10_000_000;
        let mut io = fl.io(SimTime(*t));
        f.write(&mut io, Lpn(lpn), Payload::Token(u64::from(lpn) + *t), &Hint::default()).unwrap();
    }

    #[test]
    fn sequential_rewrite_switches_random_rewrite_merges_fully() {
        let mut fl = crate::testing::flash(geometry(), 1);
        let cfg = BastConfig { over_provisioning: 0.25, ..Default::default() };
        let mut f = Bast::with_core(Core::format("bast", &fl.io(SimTime::ZERO), cfg.over_provisioning, 2).unwrap());
        let mut t = 0;
        for lpn in 0..4 {
            write(&mut f, &mut fl, &mut t, lpn);
        }
        // The log block is full and holds the block in place: the next write
        // switches it in, copying nothing.
        write(&mut f, &mut fl, &mut t, 0);
        assert_eq!(f.merges(), MergeCounts { switch: 1, partial: 0, full: 0 });
        assert_eq!(fl.counters().programs.get(Purpose::Gc), 0);
        for lpn in [1, 2, 3, 3] {
            write(&mut f, &mut fl, &mut t, lpn);
        }
        assert_eq!(f.merges(), MergeCounts { switch: 2, partial: 0, full: 0 });
        // Out of order: a full merge copies the four newest pages.
        for lpn in [2, 1, 0, 0] {
            write(&mut f, &mut fl, &mut t, lpn);
        }
        assert_eq!(f.merges(), MergeCounts { switch: 2, partial: 0, full: 1 });
        assert_eq!(fl.counters().programs.get(Purpose::Gc), 4);
        assert_eq!(fl.counters().erases.get(Purpose::Gc), 3);
        f.check_invariants(&fl).unwrap();
        // The log block holds pages 0 and 1 in place: a partial merge copies 2, 3.
        write(&mut f, &mut fl, &mut t, 1);
        let mut io = fl.io(SimTime(t + 10_000_000));
        f.merge(&mut io, 0).unwrap();
        assert_eq!(f.merges(), MergeCounts { switch: 2, partial: 1, full: 1 });
        assert_eq!(fl.counters().programs.get(Purpose::Gc), 6);
        f.check_invariants(&fl).unwrap();
    }

    #[test]
    fn registered_and_bad_config_names_the_key() {
        assert!(crate::registry::scheme("bast").is_some());
        let mut p = toml::Table::new();
        p.insert("over_provisioning".into(), toml::Value::Float(1.5));
        let e = crate::registry::build("bast", &p).unwrap_err().to_string();
        assert!(e.contains("bast.over_provisioning"), "{e}");
        // A device too small for the spare blocks is a configuration error.
        let mut fl = crate::testing::flash(geometry(), 1);
        let e =
            BastConfig { over_provisioning: 0.99, ..Default::default() }.format(&mut fl.io(SimTime::ZERO)).unwrap_err();
        assert!(matches!(e, FtlError::Config(ref c) if c.problem.contains("over_provisioning")), "{e}");
    }
}
