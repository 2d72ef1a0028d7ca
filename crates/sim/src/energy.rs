//! Energy of a run's flash work and the dies' time split by purpose: the
//! report's `energy` (with `[device.energy]`) and `die_time` sections.
//!
//! Energy is counted from the run's flash operations by purpose
//! ([`ftlab_ftl::Counters`]) when the report is made: a run costs nothing
//! more per operation with or without it. The per-access figures follow
//! Table VI of 002 (`002_7b0ca1838a2bd7a1.txt`, Section VI: "average energy
//! per access"), which does not say how cleaning is shared out; ftlab's
//! reading is in [`EnergyReport`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use ftlab_ftl::{Counters, PerPurpose, Purpose};

use ftlab_ftl::ConfigError;

/// `[device.energy]`: energy of one flash operation, nanojoules. Absent: the
/// report has no `energy` section. 002 Section VI gives, for its Table I chip
/// at 3.3 V and 10 mA, 825 nJ a page read (25 us), 9,900 nJ a program
/// (300 us) and 66,000 nJ an erase (2 ms). A copyback counts as a read and a
/// program (as the flash counters count it); channel transfers cost nothing
/// apart.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnergySpec {
    /// A page read.
    pub read_nj: f64,
    /// A spare-area (OOB) read (default: `read_nj`, as 002 counts it).
    #[serde(default)]
    pub read_oob_nj: Option<f64>,
    /// A page program.
    pub program_nj: f64,
    /// A block erase.
    pub erase_nj: f64,
}

impl EnergySpec {
    /// The most one operation may cost: one joule, far beyond any chip (an
    /// erase costs tens of microjoules).
    pub const MAX_NJ: f64 = 1e9;

    /// Checks every energy is a finite number of nanojoules in
    /// [0, [`EnergySpec::MAX_NJ`]]; errors name the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (field, nj) in [
            ("read_nj", Some(self.read_nj)),
            ("read_oob_nj", self.read_oob_nj),
            ("program_nj", self.program_nj.into()),
            ("erase_nj", self.erase_nj.into()),
        ] {
            let Some(nj) = nj else { continue };
            if !(0.0..=Self::MAX_NJ).contains(&nj) {
                return Err(ConfigError::new(
                    "device.energy",
                    format!(
                        "device.energy.{field} = {nj} is not an energy of one operation: give nanojoules, \
                         at least 0 and at most {:e} (1 J); 002's chip takes 825 (read), 9900 (program), \
                         66000 (erase)",
                        Self::MAX_NJ
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The energy report of a run's `counters`, with its host pages read and
    /// written (the per-access figures' denominators).
    pub fn report(&self, counters: &Counters, host_pages_read: u64, host_pages_written: u64) -> EnergyReport {
        let oob_nj = self.read_oob_nj.unwrap_or(self.read_nj);
        let nj = |ops: &PerPurpose, each: f64, p: Purpose| ops.get(p) as f64 * each;
        let read_side = |p| nj(&counters.reads, self.read_nj, p) + nj(&counters.oob_reads, oob_nj, p);
        let of = |p| read_side(p) + nj(&counters.programs, self.program_nj, p) + nj(&counters.erases, self.erase_nj, p);
        let by_purpose = EnergyByPurpose {
            host_nj: of(Purpose::Host),
            gc_nj: of(Purpose::Gc),
            map_nj: of(Purpose::Map),
            wear_leveling_nj: of(Purpose::WearLeveling),
            checkpoint_nj: of(Purpose::Checkpoint),
            recovery_nj: of(Purpose::Recovery),
        };
        let by_op = EnergyByOp {
            reads_nj: counters.reads.total() as f64 * self.read_nj,
            oob_reads_nj: counters.oob_reads.total() as f64 * oob_nj,
            programs_nj: counters.programs.total() as f64 * self.program_nj,
            erases_nj: counters.erases.total() as f64 * self.erase_nj,
        };
        let total_nj = by_op.reads_nj + by_op.oob_reads_nj + by_op.programs_nj + by_op.erases_nj;
        let host_reads_nj = read_side(Purpose::Host);
        let per = |nj: f64, pages: u64| (pages > 0).then(|| nj / pages as f64);
        EnergyReport {
            total_nj,
            by_op,
            by_purpose,
            host_read_access_nj: per(host_reads_nj, host_pages_read),
            host_write_access_nj: per(total_nj - host_reads_nj, host_pages_written),
        }
    }
}

/// The energy of the measured flash work, nanojoules (`[device.energy]`).
///
/// Per access, as Table VI of 002 is read here (the paper does not spell out
/// its accounting): a host read access costs the page and OOB reads done for
/// the host (purpose host: a GFTL read's OOB search included), divided by the
/// host pages read; a host write access costs everything else, divided by the
/// host pages written: its own programs plus an equal share of all cleaning
/// work (garbage-collection, map, wear-leveling reads, OOB reads and programs,
/// and every erase), since cleaning runs because of writes. So
/// `host_read_access_nj * host_pages_read + host_write_access_nj *
/// host_pages_written = total_nj`. Null where the run read (wrote) no page.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, JsonSchema)]
pub struct EnergyReport {
    /// Energy of every measured flash operation.
    #[schemars(extend("x-unit" = "nJ"))]
    pub total_nj: f64,
    /// By operation kind.
    #[schemars(extend("x-unit" = "nJ"))]
    pub by_op: EnergyByOp,
    /// By purpose.
    #[schemars(extend("x-unit" = "nJ"))]
    pub by_purpose: EnergyByPurpose,
    /// Energy per host page read (Table VI's read access): the page and OOB
    /// reads of purpose host (a GFTL read's OOB search included) /
    /// `host_pages_read`; null without host reads.
    #[schemars(extend("x-unit" = "nJ"))]
    pub host_read_access_nj: Option<f64>,
    /// Energy per host page written (Table VI's write access): everything
    /// else / `host_pages_written`, i.e. its own programs plus an equal share
    /// of all cleaning work (garbage-collection, map and wear-leveling reads,
    /// OOB reads and programs, and every erase), since cleaning runs because
    /// of writes. The paper does not say how it shares cleaning out; this is
    /// ftlab's reading. `host_read_access_nj x host_pages_read +
    /// host_write_access_nj x host_pages_written = total_nj`; null without
    /// host writes.
    #[schemars(extend("x-unit" = "nJ"))]
    pub host_write_access_nj: Option<f64>,
}

/// Energy by operation kind, nanojoules (copybacks are in reads and programs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, JsonSchema)]
pub struct EnergyByOp {
    /// Page reads (copybacks included).
    #[schemars(extend("x-unit" = "nJ"))]
    pub reads_nj: f64,
    /// OOB reads.
    #[schemars(extend("x-unit" = "nJ"))]
    pub oob_reads_nj: f64,
    /// Page programs (copybacks included).
    #[schemars(extend("x-unit" = "nJ"))]
    pub programs_nj: f64,
    /// Erases.
    #[schemars(extend("x-unit" = "nJ"))]
    pub erases_nj: f64,
}

/// Energy by purpose ([`ftlab_ftl::Purpose`]), nanojoules.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, JsonSchema)]
pub struct EnergyByPurpose {
    /// Serving host requests.
    #[schemars(extend("x-unit" = "nJ"))]
    pub host_nj: f64,
    /// Garbage collection.
    #[schemars(extend("x-unit" = "nJ"))]
    pub gc_nj: f64,
    /// Mapping-table pages.
    #[schemars(extend("x-unit" = "nJ"))]
    pub map_nj: f64,
    /// Wear leveling.
    #[schemars(extend("x-unit" = "nJ"))]
    pub wear_leveling_nj: f64,
    /// FTL state checkpoints.
    #[schemars(extend("x-unit" = "nJ"))]
    pub checkpoint_nj: f64,
    /// Rebuilding after a power cut.
    #[schemars(extend("x-unit" = "nJ"))]
    pub recovery_nj: f64,
}

/// How the dies spent the measured time (002 Figure 7: a period split into
/// request service, partial garbage collection and idle). Die time is summed
/// over the dies: `busy_ns` by purpose ([`ftlab_ftl::Counters::die_ns`]: each
/// operation from its start on its die to its finish) and `idle_ns`, the rest
/// of dies x `sim_seconds`; so `busy_ns` summed and `idle_ns` make dies x the
/// measured time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, JsonSchema)]
pub struct DieTimeReport {
    /// Dies of the device.
    #[schemars(extend("x-unit" = "dies"))]
    pub dies: u32,
    /// Die time of the operations of each purpose (as `flash_ops`).
    #[schemars(with = "PerPurposeSchema", extend("x-unit" = "ns"))]
    pub busy_ns: PerPurpose,
    /// Dies x the measured time, less the busy time.
    #[schemars(extend("x-unit" = "ns"))]
    pub idle_ns: u64,
    /// The same split per measured host request (one period when requests
    /// arrive one per period, as in 002's evaluation).
    #[schemars(extend("x-unit" = "µs"))]
    pub per_request: PeriodSplit,
}

/// Die time per host request, microseconds: host operations (`service_us`),
/// garbage collection (`gc_us`), the other purposes (`other_us`: map, wear
/// leveling, checkpoint, recovery) and idle. Null without requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, JsonSchema)]
pub struct PeriodSplit {
    /// Die time of host operations per measured host request; with one
    /// request per period (002's evaluation) the four sum to the period,
    /// Figure 7's bar. Null without requests.
    #[schemars(extend("x-unit" = "µs"))]
    pub service_us: Option<f64>,
    /// Die time of garbage collection per request.
    #[schemars(extend("x-unit" = "µs"))]
    pub gc_us: Option<f64>,
    /// Die time of the other purposes (map, wear leveling, checkpoint,
    /// recovery) per request.
    #[schemars(extend("x-unit" = "µs"))]
    pub other_us: Option<f64>,
    /// Idle die time per request.
    #[schemars(extend("x-unit" = "µs"))]
    pub idle_us: Option<f64>,
}

impl DieTimeReport {
    /// The split of `counters`' die time over `dies` dies and `elapsed_ns` of
    /// measured time, and per one of `requests`.
    pub fn of(counters: &Counters, dies: u32, elapsed_ns: u64, requests: u64) -> Self {
        let busy = counters.die_ns;
        let idle_ns = (u64::from(dies) * elapsed_ns).saturating_sub(busy.total());
        let host = busy.get(Purpose::Host);
        let gc = busy.get(Purpose::Gc);
        let per = |ns: u64| (requests > 0).then(|| ns as f64 / 1e3 / requests as f64);
        DieTimeReport {
            dies,
            busy_ns: busy,
            idle_ns,
            per_request: PeriodSplit {
                service_us: per(host),
                gc_us: per(gc),
                other_us: per(busy.total() - host - gc),
                idle_us: per(idle_ns),
            },
        }
    }
}

/// A count per purpose of the flash work (the JSON of
/// [`ftlab_ftl::PerPurpose`]).
#[derive(JsonSchema)]
#[schemars(rename = "PerPurpose")]
#[allow(dead_code)]
pub(crate) struct PerPurposeSchema {
    /// Serving host requests.
    host: u64,
    /// Garbage collection.
    gc: u64,
    /// Mapping-table pages.
    map: u64,
    /// Wear leveling.
    wear_leveling: u64,
    /// FTL state checkpoints.
    checkpoint: u64,
    /// Rebuilding after a power cut.
    recovery: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 002's chip (Section VI).
    const PAPER: EnergySpec = EnergySpec { read_nj: 825.0, read_oob_nj: None, program_nj: 9900.0, erase_nj: 66000.0 };

    fn per(values: [(Purpose, u64); 2]) -> PerPurpose {
        let mut p = PerPurpose::default();
        for (purpose, n) in values {
            p.0[purpose as usize] += n;
        }
        p
    }

    /// A known mix: host 10 reads, 40 OOB reads, 8 programs; GC 3 reads,
    /// 5 OOB reads, 3 programs, 2 erases; map 1 read, 1 program.
    fn mix() -> Counters {
        Counters {
            reads: per([(Purpose::Host, 10), (Purpose::Gc, 3)]),
            oob_reads: per([(Purpose::Host, 40), (Purpose::Gc, 5)]),
            programs: per([(Purpose::Host, 8), (Purpose::Gc, 3)]),
            erases: per([(Purpose::Gc, 2), (Purpose::Map, 0)]),
            ..Counters::default()
        }
    }

    #[test]
    fn a_known_operation_mix_costs_its_exact_energy() {
        let mut c = mix();
        c.reads.0[Purpose::Map as usize] = 1;
        c.programs.0[Purpose::Map as usize] = 1;
        let e = PAPER.report(&c, 5, 4);
        assert_eq!(e.by_op.reads_nj, 14.0 * 825.0);
        assert_eq!(e.by_op.oob_reads_nj, 45.0 * 825.0);
        assert_eq!(e.by_op.programs_nj, 12.0 * 9900.0);
        assert_eq!(e.by_op.erases_nj, 2.0 * 66000.0);
        assert_eq!(e.total_nj, 59.0 * 825.0 + 12.0 * 9900.0 + 132_000.0);
        assert_eq!(e.by_purpose.host_nj, 50.0 * 825.0 + 8.0 * 9900.0);
        assert_eq!(e.by_purpose.gc_nj, 8.0 * 825.0 + 3.0 * 9900.0 + 132_000.0);
        assert_eq!(e.by_purpose.map_nj, 825.0 + 9900.0);
        assert_eq!(e.by_purpose.wear_leveling_nj + e.by_purpose.checkpoint_nj + e.by_purpose.recovery_nj, 0.0);
        // A read access: the host's page and OOB reads per host page read.
        assert_eq!(e.host_read_access_nj, Some(50.0 * 825.0 / 5.0));
        // A write access: its programs and an equal share of all the rest.
        let rest = 8.0 * 9900.0 + (9.0 * 825.0 + 4.0 * 9900.0 + 132_000.0);
        assert_eq!(e.host_write_access_nj, Some(rest / 4.0));
        assert_eq!(e.host_read_access_nj.unwrap() * 5.0 + e.host_write_access_nj.unwrap() * 4.0, e.total_nj);
        // An OOB read may cost apart.
        let e = EnergySpec { read_oob_nj: Some(100.0), ..PAPER }.report(&c, 5, 4);
        assert_eq!(e.by_op.oob_reads_nj, 4500.0);
        assert_eq!(e.host_read_access_nj, Some((10.0 * 825.0 + 4000.0) / 5.0));
    }

    #[test]
    fn no_pages_no_per_access_figure() {
        let e = PAPER.report(&mix(), 0, 0);
        assert_eq!((e.host_read_access_nj, e.host_write_access_nj), (None, None));
        assert!(e.total_nj > 0.0);
    }

    #[test]
    fn absurd_energies_are_refused_by_name() {
        for (bad, field) in [
            (EnergySpec { read_nj: -1.0, ..PAPER }, "read_nj"),
            (EnergySpec { program_nj: f64::NAN, ..PAPER }, "program_nj"),
            (EnergySpec { erase_nj: f64::INFINITY, ..PAPER }, "erase_nj"),
            (EnergySpec { read_oob_nj: Some(2e9), ..PAPER }, "read_oob_nj"),
        ] {
            let msg = bad.validate().unwrap_err().to_string();
            assert!(msg.contains(&format!("device.energy.{field}")), "{msg}");
        }
        assert!(PAPER.validate().is_ok());
        assert!(EnergySpec { read_nj: 0.0, ..PAPER }.validate().is_ok());
    }

    #[test]
    fn die_time_splits_the_measured_time() {
        let mut c = Counters::default();
        c.die_ns.0[Purpose::Host as usize] = 3_000;
        c.die_ns.0[Purpose::Gc as usize] = 2_000;
        c.die_ns.0[Purpose::Map as usize] = 500;
        let d = DieTimeReport::of(&c, 2, 5_000, 4);
        assert_eq!(d.idle_ns, 10_000 - 5_500);
        assert_eq!(d.per_request.service_us, Some(0.75));
        assert_eq!(d.per_request.gc_us, Some(0.5));
        assert_eq!(d.per_request.other_us, Some(0.125));
        assert_eq!(d.per_request.idle_us, Some(4.5 / 4.0));
        assert_eq!(DieTimeReport::of(&c, 1, 0, 0).per_request, PeriodSplit::default());
    }
}
