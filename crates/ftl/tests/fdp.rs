#![allow(clippy::unwrap_used)]
//! The FDP conformance suite on the FDP device, its copies shared and kept
//! apart, and on devices with planted bugs it must catch.

use ftlab_ftl::conformance::small_geometry;
use ftlab_ftl::conformance_fdp::{self as suite, fdp_suite};
use ftlab_ftl::schemes::page::fdp::{FdpConfig, Isolation};
use ftlab_ftl::{Flash, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn};
use ftlab_nand::{Geometry, Payload};

/// 4 dies x 2 planes x 24 blocks of 16 pages: room for 4 handles' open
/// units and garbage collection.
fn geometry() -> Geometry {
    Geometry { blocks_per_plane: 24, ..small_geometry() }
}

#[test]
fn the_fdp_device_passes_the_fdp_suite_initially_and_persistently_isolated() {
    fdp_suite(&FdpConfig { handles: 4, ..FdpConfig::default() }, geometry(), 4, false);
    let persistently = FdpConfig { handles: 3, isolation: Isolation::Persistently, ..FdpConfig::default() };
    fdp_suite(&persistently, geometry(), 3, true);
}

#[test]
fn the_fdp_device_passes_the_suite_with_reclaim_groups_and_units_of_several_blocks() {
    // (handles a group, groups, blocks a unit, persistently isolated)
    for (handles, groups, unit_blocks, persistently) in
        [(2, 2, 1, false), (3, 1, 2, true), (2, 2, 2, true), (2, 1, 4, false), (4, 4, 1, false)]
    {
        let isolation = if persistently { Isolation::Persistently } else { Isolation::Initially };
        let config = FdpConfig {
            handles,
            reclaim_groups: groups,
            reclaim_unit_blocks: unit_blocks,
            isolation,
            ..FdpConfig::default()
        };
        suite::fdp_suite_grouped(&config, geometry(), handles, groups, unit_blocks, persistently);
    }
}

#[test]
fn the_suite_catches_writes_placed_in_the_wrong_group_and_units_not_reclaimed_whole() {
    let grouped = FdpConfig { handles: 2, reclaim_groups: 2, ..FdpConfig::default() };
    // Group 1's identifiers written through group 0's handles.
    let b = PlantedBuilder(grouped, Plant::GroupZero);
    let e = caught(move || suite::groups_and_units(&b, geometry(), 2, 2, 1));
    assert!(e.contains("of group 0") && e.contains("(group 1)"), "{e}");
    // Single-block units checked as units of two blocks.
    let single = FdpConfig { handles: 2, ..FdpConfig::default() };
    let e = caught(move || suite::groups_and_units(&single, geometry(), 2, 1, 2));
    assert!(e.contains("host data of several placement identifiers") || e.contains("not reclaimed whole"), "{e}");
}

#[test]
fn reclaim_groups_and_units_that_do_not_divide_the_dies_are_refused_by_name() {
    let nand = ftlab_nand::Nand::new(&ftlab_ftl::conformance::nand_config(geometry(), 0.0, 1)).unwrap();
    let mut flash = Flash::new(nand);
    for (config, key) in [
        (FdpConfig { handles: 2, reclaim_groups: 3, ..FdpConfig::default() }, "fdp.reclaim_groups"),
        (
            FdpConfig { handles: 2, reclaim_groups: 2, reclaim_unit_blocks: 4, ..FdpConfig::default() },
            "fdp.reclaim_unit_blocks",
        ),
        (FdpConfig { handles: 8, reclaim_groups: 8, ..FdpConfig::default() }, "fdp.reclaim_groups"),
        (FdpConfig { reclaim_unit_blocks: 0, ..FdpConfig::default() }, "fdp.reclaim_unit_blocks"),
    ] {
        let e = config.format(&mut flash.io(ftlab_nand::SimTime::ZERO)).unwrap_err();
        assert!(e.to_string().contains(key), "{config:?}: {e}");
    }
}

/// An FDP device with a planted bug.
#[derive(Debug, Clone, Copy)]
enum Plant {
    /// FLUSH is not passed on: the statistics are never recorded.
    FlushDropped,
    /// A write's identifier is taken modulo the handles (one in 17 logical
    /// pages): those go to group 0.
    GroupZero,
    /// Handle 1's writes go through handle 0.
    Misplaced,
    /// A write through a handle past the last goes to the last.
    Clamped,
}

#[derive(Debug)]
struct Planted(Box<dyn Ftl>, Plant, u32);

impl Ftl for Planted {
    fn name(&self) -> &'static str {
        "planted-fdp"
    }
    fn logical_pages(&self) -> u32 {
        self.0.logical_pages()
    }
    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        self.0.read(io, lpn)
    }
    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
        let stream = match (self.1, hint.stream) {
            (Plant::Misplaced, Some(1)) => Some(0),
            (Plant::GroupZero, Some(h)) if lpn.0.is_multiple_of(17) => Some(h % self.2),
            (Plant::Clamped, Some(h)) if h >= self.2 => Some(self.2 - 1),
            (_, s) => s,
        };
        self.0.write(io, lpn, data, &Hint { stream, ..*hint })
    }
    fn trim(&mut self, io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        self.0.trim(io, lpn)
    }
    fn flush(&mut self, io: &mut Io) -> Result<(), FtlError> {
        match self.1 {
            Plant::FlushDropped => Ok(()),
            _ => self.0.flush(io),
        }
    }
    fn ram_bytes(&self) -> u64 {
        self.0.ram_bytes()
    }
    fn curves(&self) -> Vec<(&'static str, Vec<f64>)> {
        self.0.curves()
    }
    fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
        self.0.check_invariants(flash)
    }
}

#[derive(Debug)]
struct PlantedBuilder(FdpConfig, Plant);

impl FtlBuilder for PlantedBuilder {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(Planted(self.0.format(io)?, self.1, self.0.handles)))
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(Planted(self.0.recover(io)?, self.1, self.0.handles)))
    }
}

fn caught(check: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let e = std::panic::catch_unwind(check).expect_err("the planted bug was not caught");
    e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

#[test]
fn the_suite_catches_statistics_lost_in_a_power_cut() {
    let b = PlantedBuilder(FdpConfig { handles: 4, ..FdpConfig::default() }, Plant::FlushDropped);
    let message = caught(|| suite::statistics_survive_power_cuts(&b, geometry(), 4));
    assert!(message.contains("did not persist as of the flush"), "{message}");
}

#[test]
fn the_suite_catches_writes_placed_through_the_wrong_handle() {
    let b = PlantedBuilder(FdpConfig { handles: 4, ..FdpConfig::default() }, Plant::Misplaced);
    let message = caught(|| suite::statistics(&b, geometry(), 4));
    assert!(message.contains("host pages per handle"), "{message}");
    let message = caught(|| suite::power_cuts_keep_handles(&b, geometry(), 4, 0));
    assert!(message.contains("handle is not its writer's"), "{message}");
}

#[test]
fn the_suite_catches_an_invalid_handle_taken() {
    let b = PlantedBuilder(FdpConfig { handles: 4, ..FdpConfig::default() }, Plant::Clamped);
    let message = caught(|| suite::invalid_handles(&b, geometry(), 4));
    assert!(message.contains("called `Result::unwrap_err()`"), "{message}");
}

#[test]
fn the_suite_catches_a_device_whose_copies_mix_handles_claimed_persistently_isolated() {
    // Initially isolated handles share garbage collection's blocks: taken
    // for persistently isolated, the medium shows their data mixed.
    let initially = FdpConfig { handles: 3, ..FdpConfig::default() };
    let message = caught(|| suite::handles_apart(&initially, geometry(), 3, true));
    assert!(message.contains("shares an erase block"), "{message}");
}

mod fuzz {
    //! The FDP device against a reference model of what FDP promises, written
    //! apart from the device: every page reads the last token written to it
    //! (none once trimmed), each handle's host pages are the writes
    //! acknowledged through it, a write through a handle past the last is an
    //! invalid command that changes nothing, and the device's own invariants
    //! hold; commands drawn by proptest, a failure shrunk to a shortest
    //! sequence.

    use std::collections::HashMap;

    use ftlab_ftl::schemes::page::fdp::{FdpConfig, Isolation};
    use ftlab_ftl::{ErrorKind, Flash, FtlBuilder, Hint, Lpn};
    use ftlab_nand::{Nand, Payload, SimTime};
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Cmd {
        /// Write page (modulo the logical space) through a handle (`None`: no
        /// stream; may be past the last).
        Write(u32, Option<u32>),
        Trim(u32),
        Read(u32),
    }

    fn cmds(handles: u32) -> impl Strategy<Value = Vec<Cmd>> {
        cmds_up_to(handles, 6000)
    }

    fn cmds_up_to(handles: u32, most: usize) -> impl Strategy<Value = Vec<Cmd>> {
        let cmd = prop_oneof![
            8 => (any::<u32>(), proptest::option::of(0..handles + 2)).prop_map(|(l, h)| Cmd::Write(l, h)),
            1 => any::<u32>().prop_map(Cmd::Trim),
            2 => any::<u32>().prop_map(Cmd::Read),
        ];
        proptest::collection::vec(cmd, 1..most)
    }

    fn run(config: &dyn FtlBuilder, handles: u32, cmds: &[Cmd]) -> Result<(), TestCaseError> {
        run_grouped(config, handles, 1, cmds)
    }

    /// [`run`] on a device of `groups` reclaim groups of `handles` handles
    /// (`handles` here: those of a group): a write without an identifier
    /// goes to handle 0 of a group the device picks, so handle 0's host
    /// pages are compared summed over the groups.
    fn run_grouped(config: &dyn FtlBuilder, handles: u32, groups: u32, cmds: &[Cmd]) -> Result<(), TestCaseError> {
        let per_group = handles;
        let handles = handles * groups;
        let mut flash = Flash::new(Nand::new(&ftlab_ftl::conformance::nand_config(super::geometry(), 0.0, 1)).unwrap());
        let mut ftl = config.format(&mut flash.io(SimTime::ZERO)).unwrap();
        let n = ftl.logical_pages();
        let mut model: HashMap<u32, u64> = HashMap::new();
        let mut host = vec![0f64; handles as usize];
        let mut now = SimTime::ZERO;
        for (i, cmd) in cmds.iter().enumerate() {
            let mut io = flash.io(now);
            match *cmd {
                Cmd::Write(l, h) => {
                    let lpn = l % n;
                    let token = i as u64 + 1;
                    let r = ftl.write(&mut io, Lpn(lpn), Payload::Token(token), &Hint { stream: h, ..Hint::default() });
                    match h {
                        Some(h) if h >= handles => {
                            let e = r.expect_err("a write through a handle past the last was taken");
                            prop_assert_eq!(e.kind(), ErrorKind::Invalid);
                        }
                        _ => {
                            r.unwrap();
                            model.insert(lpn, token);
                            host[h.unwrap_or(0) as usize] += 1.0;
                        }
                    }
                }
                Cmd::Trim(l) => {
                    ftl.trim(&mut io, Lpn(l % n)).unwrap();
                    model.remove(&(l % n));
                }
                Cmd::Read(l) => {
                    let got = ftl.read(&mut io, Lpn(l % n)).unwrap();
                    let want = model.get(&(l % n)).map(|&t| Payload::Token(t));
                    prop_assert_eq!(got, want, "command {}: page {}", i, l % n);
                }
            }
            now += SimTime::from_us(30);
        }
        let curve = ftl.curves().into_iter().find(|(c, _)| *c == "fdp_host_pages_by_handle").unwrap().1;
        let fold = |mut v: Vec<f64>| {
            let zero: f64 = (0..groups).map(|g| v[(g * per_group) as usize]).sum();
            (0..groups).for_each(|g| v[(g * per_group) as usize] = 0.0);
            v[0] = zero;
            v
        };
        prop_assert_eq!(fold(curve), fold(host));
        for lpn in 0..n {
            let got = ftl.read(&mut flash.io(now), Lpn(lpn)).unwrap();
            prop_assert_eq!(got, model.get(&lpn).map(|&t| Payload::Token(t)), "page {} at the end", lpn);
        }
        ftl.check_invariants(&flash).map_err(TestCaseError::fail)?;
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        #[test]
        fn fdp_initially_isolated_matches_the_model(c in cmds(4)) {
            run(&FdpConfig { handles: 4, ..FdpConfig::default() }, 4, &c)?;
        }

        #[test]
        fn fdp_persistently_isolated_matches_the_model(c in cmds(3)) {
            run(&FdpConfig { handles: 3, isolation: Isolation::Persistently, ..FdpConfig::default() }, 3, &c)?;
        }

        #[test]
        fn fdp_with_reclaim_groups_and_two_block_units_matches_the_model(c in cmds(4)) {
            let config = FdpConfig {
                handles: 2,
                reclaim_groups: 2,
                reclaim_unit_blocks: 2,
                isolation: Isolation::Persistently,
                ..FdpConfig::default()
            };
            run_grouped(&config, 2, 2, &c)?;
        }

        #[test]
        fn fdp_with_superblock_units_matches_the_model(c in cmds(3)) {
            run(&FdpConfig { handles: 3, reclaim_unit_blocks: 4, ..FdpConfig::default() }, 3, &c)?;
        }
    }

    #[test]
    fn the_fuzzing_catches_a_planted_misplacement_and_shrinks_it() {
        let planted = super::PlantedBuilder(FdpConfig { handles: 4, ..FdpConfig::default() }, super::Plant::Misplaced);
        let config = ProptestConfig { cases: 16, max_shrink_iters: 20_000, ..ProptestConfig::default() };
        let mut runner = proptest::test_runner::TestRunner::new(config);
        let result = runner.run(&cmds_up_to(4, 400), |c| run(&planted, 4, &c));
        let Err(proptest::test_runner::TestError::Fail(_, shrunk)) = result else {
            panic!("the planted misplacement was not caught: {result:?}")
        };
        // Shrunk to a single write through handle 1.
        assert_eq!(shrunk.len(), 1, "shrunk to {} commands, the first {:?}", shrunk.len(), shrunk.first());
        assert!(matches!(shrunk[0], Cmd::Write(_, Some(1))), "{:?}", shrunk[0]);
    }
}
