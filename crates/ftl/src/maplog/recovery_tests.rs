//! Recovery in flash mode: what it reads, and power cuts inside map pages
//! and checkpoints.
#![allow(clippy::unwrap_used)]

use std::cell::Cell;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::MapPersistence;
use crate::conformance::{nand_config, Harness};
use crate::hybrid::replay::RecoveryReads;
use crate::schemes::block::bast::{Bast, BastConfig};
use crate::schemes::block::fast::{Fast, FastConfig};
use crate::schemes::block::janus::{Janus, JanusConfig};
use crate::{Ftl, FtlBuilder, FtlError, Io, Purpose};
use ftlab_nand::{Geometry, SimTime};

/// A hybrid scheme's builder that keeps what its last recovery read.
#[derive(Debug)]
enum Scheme {
    Bast(BastConfig),
    Fast(FastConfig),
    Janus(JanusConfig),
}

#[derive(Debug)]
struct Recording {
    scheme: Scheme,
    last: Cell<Option<RecoveryReads>>,
}

impl FtlBuilder for Recording {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        match &self.scheme {
            Scheme::Bast(c) => c.format(io),
            Scheme::Fast(c) => c.format(io),
            Scheme::Janus(c) => c.format(io),
        }
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        let (f, r): (Box<dyn Ftl>, _) = match &self.scheme {
            Scheme::Bast(c) => Bast::recover(*c, io).map(|f| (f.recovery(), Box::new(f) as _)).map(|(r, f)| (f, r))?,
            Scheme::Fast(c) => Fast::recover(*c, io).map(|f| (f.recovery(), Box::new(f) as _)).map(|(r, f)| (f, r))?,
            Scheme::Janus(c) => {
                Janus::recover(*c, io).map(|f| (f.recovery(), Box::new(f) as _)).map(|(r, f)| (f, r))?
            }
        };
        self.last.set(Some(r));
        Ok(f)
    }
}

fn schemes(mode: MapPersistence) -> Vec<(&'static str, Recording)> {
    let r = |scheme| Recording { scheme, last: Cell::new(None) };
    vec![
        ("bast", r(Scheme::Bast(BastConfig { over_provisioning: 0.1, map_persistence: mode }))),
        ("fast", r(Scheme::Fast(FastConfig { over_provisioning: 0.1, map_persistence: mode }))),
        (
            "janus",
            r(Scheme::Janus(JanusConfig { over_provisioning: 0.1, map_persistence: mode, ..JanusConfig::default() })),
        ),
    ]
}

/// OOB reads (purpose recovery) and page reads (purpose map) since `before`.
fn recovery_reads(h: &Harness, before: &crate::Counters) -> (u64, u64) {
    let c = h.flash.counters();
    (
        c.oob_reads.get(Purpose::Recovery) - before.oob_reads.get(Purpose::Recovery),
        c.reads.get(Purpose::Map) - before.reads.get(Purpose::Map),
    )
}

/// Fills a 1024-block device (65,536 pages of 2 KiB) and rewrites 6,000
/// random pages, cuts power after the last acknowledgement without a flush
/// (the last map records are only in RAM) and recovers: every page reads
/// back, and flash-mode recovery reads far fewer OOBs than the device has
/// pages, where the full scan (nvram mode) reads one per page written.
#[test]
fn recovery_reads_far_fewer_oobs_than_a_full_scan() {
    let g = Geometry { page_size: 2048, ..crate::testing::one_die(1024, 64) };
    let pages = u64::from(g.total_pages());
    for mode in [MapPersistence::Flash, MapPersistence::Nvram] {
        for (name, b) in schemes(mode) {
            let mut h = Harness::new(&b, &nand_config(g, 0.0, 5));
            let n = h.logical_pages();
            let mut rng = ChaCha8Rng::seed_from_u64(8);
            for lpn in 0..n {
                h.write(lpn).unwrap();
            }
            for _ in 0..6000 {
                h.write(rng.gen_range(0..n)).unwrap();
            }
            let before = *h.flash.counters();
            let t = SimTime(*h.completions.last().unwrap()).max(h.now);
            h.cut_and_recover(t);
            let (oob, map) = recovery_reads(&h, &before);
            let r = b.last.get().unwrap();
            eprintln!("{name} {mode:?}: {pages} pages, recovery read {oob} OOBs and {map} map pages: {r:?}");
            match mode {
                MapPersistence::Flash => {
                    assert!(!r.full_scan && r.oob_reads == oob && r.map_pages == map, "{name}: {r:?}");
                    assert!(r.rolled_forward > 0, "{name}: nothing written after the last map page: {r:?}");
                    assert!(oob * 10 < pages, "{name}: {oob} OOB reads on {pages} pages");
                }
                MapPersistence::Nvram => assert!(oob >= u64::from(n), "{name}: the full scan read {oob} OOBs"),
            }
            h.check_all();
        }
    }
}

/// The writes of [`cuts_inside_map_pages_and_checkpoints_lose_nothing`]: every
/// logical page, then a hot tenth rewritten in a scattered order.
fn workload(n: u32, i: usize) -> u32 {
    let n = n as usize;
    (if i < n { i } else { (i * 7) % (n / 10) }) as u32
}

/// On one die (so a command's operations follow the previous command's),
/// finds a write during which a checkpoint (three or more map pages) and one
/// during which a single log page was written, then for cut times every
/// 50 us around each (inside every map page program), replays the writes
/// on a fresh device, cuts and recovers: nothing acknowledged is lost and
/// recovery never falls back to a scan of the device (a torn checkpoint
/// falls back to the one before it, a torn log page ends the log).
#[test]
fn cuts_inside_map_pages_and_checkpoints_lose_nothing() {
    let g = Geometry { page_size: 512, ..crate::testing::one_die(64, 16) };
    for (name, b) in schemes(MapPersistence::Flash) {
        // A dry run: the map programs each write made.
        let mut h = Harness::new(&b, &nand_config(g, 0.0, 3));
        let n = h.logical_pages();
        let total = 8 * n as usize;
        let mut map_programs = Vec::with_capacity(total);
        for i in 0..total {
            let before = h.flash.counters().programs.get(Purpose::Map);
            h.write(workload(n, i)).unwrap();
            map_programs.push(h.flash.counters().programs.get(Purpose::Map) - before);
        }
        let completions = h.completions.clone();
        let checkpoint = (1..total - 1).find(|&i| map_programs[i] >= 3).expect("no checkpoint");
        let log_page = (1..total - 1).find(|&i| map_programs[i] == 1).expect("no log page");
        let mut cuts = 0;
        for at in [checkpoint, log_page] {
            let (from, to) = (completions[at - 1], completions[at + 1]);
            for t in (from..to).step_by(50_000) {
                let mut h = Harness::new(&b, &nand_config(g, 0.0, 3));
                for i in 0..=at + 1 {
                    h.write(workload(n, i)).unwrap();
                }
                h.cut_and_recover(SimTime(t).max(h.now));
                let r = b.last.get().unwrap();
                assert!(!r.full_scan, "{name}: cut at {t}: no complete checkpoint: {r:?}");
                h.check_all();
                cuts += 1;
            }
        }
        assert!(cuts > 20, "{name}: {cuts} cuts");
    }
}
