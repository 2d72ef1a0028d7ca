//! The conformance suite every FTL must pass, exported with the `testing`
//! feature so that an FTL written in another crate joins it the same way. In an
//! integration test of a crate with `ftlab-ftl = { features = ["testing"] }`
//! among its dev-dependencies (and `ftlab-nand` beside it), an FTL joins with one
//! line:
//!
//! ```ignore
//! use ftlab_ftl::conformance;
//! conformance!(my_scheme, MyConfig::default());
//! ```
//!
//! The checks: random reads, writes and trims against a reference model
//! (proptest, shrinking to a minimal failing sequence); filling the whole logical
//! space and overwriting it many times at the highest utilization the scheme
//! allows; a power cut at a random point of a random workload, then `recover`,
//! then every acknowledged write reads back its latest value (or a later one) and
//! nothing reads back a value never written; power cuts exactly at write
//! acknowledgements on a hot region; determinism; the FTL's own invariants
//! against the medium (valid pages equal mapped logical pages); injected program
//! and erase failures, alone and with power cuts, after which every acknowledged
//! write still reads back and every failed command failed with an error of kind
//! I/O or no space ([`injected_faults`]).
#![allow(clippy::unwrap_used, clippy::missing_panics_doc)]

use std::collections::HashMap;

use crate::{Durability, ErrorKind, Flash, Ftl, FtlBuilder, FtlError, Hint, Lpn};
pub use ftlab_nand::Commands;
pub use ftlab_nand::Geometry;
use ftlab_nand::{Faults, Nand, NandConfig, NandError, Payload, SimTime, StoreKind, Timing, WearConfig};
pub use proptest;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The default device of the suite: 2 channels x 2 dies, 2 planes, 12 blocks per
/// plane, 16 pages per block (96 blocks, 1536 pages).
pub fn small_geometry() -> Geometry {
    Geometry {
        channels: 2,
        ways_per_channel: 1,
        dies_per_way: 2,
        planes_per_die: 2,
        blocks_per_plane: 12,
        pages_per_block: 16,
        page_size: 4096,
        oob_size: 128,
    }
}

/// A one-die device with larger blocks: 48 blocks of 32 pages (the block- and
/// hybrid-mapped schemes' second suite).
pub fn one_die_geometry() -> Geometry {
    Geometry {
        channels: 1,
        ways_per_channel: 1,
        dies_per_way: 1,
        planes_per_die: 1,
        blocks_per_plane: 48,
        pages_per_block: 32,
        page_size: 4096,
        oob_size: 128,
    }
}

thread_local! {
    static COMMANDS: std::cell::Cell<Commands> = std::cell::Cell::new(Commands::default());
    static STORE: std::cell::Cell<StoreKind> = const { std::cell::Cell::new(StoreKind::Token) };
}

/// Makes every medium [`nand_config`] describes on this thread store
/// `store` (tokens by default; [`StoreKind::Bytes`] keeps each page's bytes,
/// for a suite that writes and checks real data, such as the zoned suite's
/// [`crate::conformance_zoned::ZonedHarness`]).
pub fn use_store(store: StoreKind) {
    STORE.with(|c| c.set(store));
}

/// Makes every medium [`nand_config`] describes on this thread offer
/// `commands` (a suite's tests each run on their own thread; the
/// `conformance!` macro's `commands:` form calls it first).
pub fn use_commands(commands: Commands) {
    COMMANDS.with(|c| c.set(commands));
}

pub fn nand_config(geometry: Geometry, bad_block_rate: f64, seed: u64) -> NandConfig {
    NandConfig {
        geometry,
        timing: Timing {
            read_ns: 25_000,
            read_oob_ns: 25_000,
            program_ns: 200_000,
            erase_ns: 1_500_000,
            channel_mb_per_s: 200,
        },
        bad_block_rate,
        wear: WearConfig::default(),
        store: STORE.with(|c| c.get()),
        seed,
        faults: Default::default(),
        commands: COMMANDS.with(|c| c.get()),
    }
}

/// A device, an FTL on it, a clock and a reference model of what each logical
/// page may hold.
#[allow(missing_debug_implementations)]
pub struct Harness<'b> {
    pub builder: &'b dyn FtlBuilder,
    pub flash: Flash,
    pub ftl: Box<dyn Ftl>,
    pub now: SimTime,
    pub model: HashMap<u32, History>,
    next_token: u64,
    /// Every completion time, in order (for determinism checks).
    pub completions: Vec<u64>,
    /// The medium injects faults: reads after a power cut may fail from one and
    /// are retried ([`Harness::read_faulty`]).
    pub faulty: bool,
    /// Writes carry a stream in their hint, logical page modulo this many
    /// (0, the default: none), for FTLs that place by stream.
    pub streams: u32,
}

/// What was done to one logical page since the last point where its contents
/// were certain.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// `(value, acknowledged at)`; `None` is a trim.
    entries: Vec<(Option<u64>, SimTime)>,
    /// Every value ever written to the page: a trim is advisory, so after a cut a
    /// trimmed page may read back any of them (or nothing).
    ever: Vec<u64>,
    /// `(n, t)`: a flush completed at `t` made `entries[..n]` durable (for
    /// FTLs whose writes are durable on flush).
    flushed: Vec<(usize, SimTime)>,
}

impl History {
    /// The value a read must return while the power stays on.
    fn current(&self) -> Option<u64> {
        self.entries.last().and_then(|e| e.0)
    }

    /// Values a read may return after a power cut at `t`.
    fn acceptable_after_cut(&self, t: SimTime, durability: Durability) -> Vec<Option<u64>> {
        let durable_write = match durability {
            Durability::OnAck => self.entries.iter().rposition(|e| e.0.is_some() && e.1 <= t),
            Durability::OnFlush => {
                let n = self.flushed.iter().filter(|f| f.1 <= t).map(|f| f.0).max().unwrap_or(0);
                self.entries[..n].iter().rposition(|e| e.0.is_some())
            }
        };
        let trimmed_after = |i: usize| self.entries[i + 1..].iter().any(|e| e.0.is_none());
        match durable_write {
            Some(i) if !trimmed_after(i) => self.entries[i..].iter().map(|e| e.0).collect(),
            Some(i) => {
                let mut v: Vec<Option<u64>> = self.ever.iter().copied().map(Some).collect();
                v.extend(self.entries[i..].iter().map(|e| e.0));
                v.push(None);
                v
            }
            None => {
                let mut v: Vec<Option<u64>> = self.ever.iter().copied().map(Some).collect();
                v.push(None);
                v
            }
        }
    }
}

impl<'b> Harness<'b> {
    pub fn new(builder: &'b dyn FtlBuilder, config: &NandConfig) -> Self {
        let mut flash = Flash::new(Nand::new(config).unwrap());
        let ftl = {
            let mut io = flash.io(SimTime::ZERO);
            builder.format(&mut io).unwrap()
        };
        Harness {
            builder,
            flash,
            ftl,
            now: SimTime::ZERO,
            model: HashMap::new(),
            next_token: 1,
            completions: Vec::new(),
            faulty: false,
            streams: 0,
        }
    }

    pub fn logical_pages(&self) -> u32 {
        self.ftl.logical_pages()
    }

    pub fn write(&mut self, lpn: u32) -> Result<u64, FtlError> {
        let token = self.next_token;
        self.next_token += 1;
        let mut io = self.flash.io(self.now);
        let hint = Hint { stream: (self.streams > 0).then(|| lpn % self.streams), ..Hint::default() };
        self.ftl.write(&mut io, Lpn(lpn), Payload::Token(token), &hint)?;
        let done = io.completion();
        self.completions.push(done.as_ns());
        let h = self.model.entry(lpn).or_default();
        h.entries.push((Some(token), done));
        h.ever.push(token);
        Ok(token)
    }

    pub fn trim(&mut self, lpn: u32) -> Result<(), FtlError> {
        let mut io = self.flash.io(self.now);
        self.ftl.trim(&mut io, Lpn(lpn))?;
        let done = io.completion();
        self.model.entry(lpn).or_default().entries.push((None, done));
        Ok(())
    }

    pub fn read(&mut self, lpn: u32) -> Result<Option<u64>, FtlError> {
        let mut io = self.flash.io(self.now);
        let got = self.ftl.read(&mut io, Lpn(lpn))?;
        self.completions.push(io.completion().as_ns());
        Ok(got.map(|p| match p {
            Payload::Token(t) => t,
            Payload::Bytes(_) => panic!("token store returned bytes"),
        }))
    }

    /// Flushes the FTL: writes completed before are durable once it completes.
    pub fn flush(&mut self) -> Result<(), FtlError> {
        let mut io = self.flash.io(self.now);
        self.ftl.flush(&mut io)?;
        let done = io.completion().max(self.now);
        self.completions.push(done.as_ns());
        for h in self.model.values_mut() {
            h.flushed.push((h.entries.len(), done));
        }
        Ok(())
    }

    /// Reads `lpn` and checks it against the model.
    pub fn check(&mut self, lpn: u32) {
        let want = self.model.get(&lpn).and_then(History::current);
        let got = self.read(lpn).unwrap();
        assert_eq!(got, want, "lpn {lpn}: read {got:?}, last written {want:?}");
    }

    pub fn check_all(&mut self) {
        for lpn in 0..self.logical_pages() {
            self.check(lpn);
        }
        self.ftl.check_invariants(&self.flash).unwrap();
    }

    /// Advances the clock by `ns`.
    pub fn advance(&mut self, ns: u64) {
        self.now = SimTime(self.now.0 + ns);
    }

    /// Cuts power at `t`, rebuilds the FTL with `recover`, and checks every logical
    /// page against what may survive; the model then holds what was read.
    pub fn cut_and_recover(&mut self, t: SimTime) {
        assert!(t >= self.now);
        let durability = self.ftl.durability();
        self.flash.power_cut(t);
        self.now = t;
        let ftl = {
            let mut io = self.flash.io(t);
            let ftl = self.builder.recover(&mut io).unwrap();
            self.now = io.last_finish();
            ftl
        };
        self.ftl = ftl;
        for lpn in 0..self.logical_pages() {
            let got = if self.faulty { self.read_faulty(lpn) } else { self.read(lpn).unwrap() };
            let history = self.model.remove(&lpn).unwrap_or_default();
            let ok = history.acceptable_after_cut(t, durability);
            assert!(
                ok.contains(&got),
                "after a cut at {t}: lpn {lpn} reads {got:?}, acceptable {ok:?} (history {history:?})"
            );
            // What recovery found is on the flash: durable, whatever the contract.
            let entries = vec![(got, SimTime::ZERO)];
            self.model.insert(lpn, History { entries, ever: history.ever, flushed: vec![(1, SimTime::ZERO)] });
        }
        self.ftl.check_invariants(&self.flash).unwrap();
    }

    /// A random mix of writes (60%), reads (30%) and trims (10%) over the whole
    /// logical space, with random gaps of up to `max_gap_ns` between commands.
    /// With an FTL whose writes are durable on flush, one command in 16 is
    /// followed by a flush.
    pub fn random_ops(&mut self, rng: &mut ChaCha8Rng, ops: usize, max_gap_ns: u64) {
        let n = self.logical_pages();
        let flushes = self.ftl.durability() == Durability::OnFlush;
        for _ in 0..ops {
            if flushes && rng.gen_range(0..16) == 0 {
                self.flush().unwrap();
            }
            let lpn = rng.gen_range(0..n);
            match rng.gen_range(0..10) {
                0..=5 => {
                    self.write(lpn).unwrap();
                }
                6..=8 => self.check(lpn),
                _ => self.trim(lpn).unwrap(),
            }
            self.advance(rng.gen_range(0..=max_gap_ns));
        }
    }
}

#[derive(Debug, Clone)]
pub enum Op {
    Write(u32),
    Read(u32),
    Trim(u32),
    Flush,
}

pub fn ops_strategy(logical_pages: u32) -> impl proptest::strategy::Strategy<Value = Vec<Op>> {
    use proptest::prelude::*;
    let op = prop_oneof![
        5 => (0..logical_pages).prop_map(Op::Write),
        3 => (0..logical_pages).prop_map(Op::Read),
        1 => (0..logical_pages).prop_map(Op::Trim),
        1 => Just(Op::Flush),
    ];
    proptest::collection::vec(op, 1..400)
}

/// The Jasmine board's shape, scaled down (32 KiB pages, 4 dies, 12 blocks a
/// die): the sub-page schemes' units of 4 KiB are 8 to a page.
pub fn jasmine_geometry() -> Geometry {
    Geometry {
        channels: 2,
        ways_per_channel: 2,
        dies_per_way: 1,
        planes_per_die: 1,
        blocks_per_plane: 12,
        pages_per_block: 8,
        page_size: 32 * 1024,
        oob_size: 1744,
    }
}

/// Two periodic tasks, for the schemes that admit tasks.
pub fn small_task_set() -> Vec<crate::registry::PeriodicTask> {
    let task = |name: &str, write_pages, write_period_ms, lifetime_ms| crate::registry::PeriodicTask {
        name: name.into(),
        write_pages,
        write_period_ms,
        lifetime_ms,
        granularity: 1,
        ..crate::registry::PeriodicTask::default()
    };
    vec![task("a", 2, 10.0, 40.0), task("b", 1, 20.0, 60.0)]
}

/// The registered scheme `kind` at its defaults (with [`small_task_set`] if it
/// admits tasks), and the first of the suite's devices it formats on
/// ([`small_geometry`], then [`jasmine_geometry`]); an error says why it fits
/// none.
pub fn registered(kind: &str) -> Result<(crate::registry::Builder, Geometry), String> {
    let scheme = crate::registry::scheme(kind).ok_or_else(|| format!("no scheme `{kind}` is registered"))?;
    let build = || {
        if scheme.admits_tasks {
            crate::registry::build_with_tasks(kind, &toml::Table::new(), &small_task_set())
        } else {
            crate::registry::build(kind, &toml::Table::new())
        }
    };
    let builder = build().map_err(|e| format!("{kind}: {e}"))?;
    let builder = match kind {
        // The Nameless device's block interface is its metadata space, 5% of
        // the device by default: overwriting it never reclaims a block, so the
        // suite gives it nearly all of the capacity (as conformance_nameless).
        "nameless" => {
            let params: toml::Table = toml::from_str("virtual_share = 0.95").map_err(|e| e.to_string())?;
            crate::registry::build(kind, &params).map_err(|e| format!("{kind}: {e}"))?
        }
        _ => builder,
    };
    let mut errors = Vec::new();
    for geometry in [small_geometry(), jasmine_geometry()] {
        let mut flash = Flash::new(Nand::new(&nand_config(geometry, 0.0, 1)).map_err(|e| e.to_string())?);
        let mut io = flash.io(SimTime::ZERO);
        match builder.format(&mut io) {
            Ok(_) => return Ok((builder, geometry)),
            Err(e) => errors.push(e.to_string()),
        }
    }
    Err(format!("{kind} formats on none of the suite's devices: {}", errors.join("; ")))
}

/// Runs `ops` against the model; the first divergence fails.
pub fn run_ops(builder: &dyn FtlBuilder, geometry: Geometry, ops: &[Op]) {
    let mut h = Harness::new(builder, &nand_config(geometry, 0.0, 1));
    for op in ops {
        match *op {
            Op::Write(l) => {
                h.write(l).unwrap();
            }
            Op::Read(l) => h.check(l),
            Op::Trim(l) => h.trim(l).unwrap(),
            Op::Flush => h.flush().unwrap(),
        }
        h.advance(50_000);
    }
    h.check_all();
}

/// Fills the logical space, then overwrites all of it `rounds` times in random
/// order, checking everything at the end.
pub fn full_overwrite(builder: &dyn FtlBuilder, config: &NandConfig, rounds: usize) {
    let mut h = Harness::new(builder, config);
    let n = h.logical_pages();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for lpn in 0..n {
        h.write(lpn).unwrap();
        h.advance(20_000);
    }
    h.check_all();
    let mut order: Vec<u32> = (0..n).collect();
    for _ in 0..rounds {
        for i in (1..order.len()).rev() {
            order.swap(i, rng.gen_range(0..=i));
        }
        for &lpn in &order {
            h.write(lpn).unwrap();
            h.advance(20_000);
        }
    }
    h.flush().unwrap();
    h.check_all();
    let c = h.flash.counters();
    assert!(c.erases.total() > 0, "overwriting the device {rounds} times must reclaim blocks");
    let written = u64::from(n) * (rounds as u64 + 1);
    if h.ftl.durability() == Durability::OnAck {
        assert_eq!(c.programs.get(crate::Purpose::Host), written);
    } else {
        // A write-back FTL may absorb overwrites of a page still buffered; one
        // that maps units smaller than a flash page packs k of them a page.
        let page = h.flash.nand().geometry().page_size;
        let k = u64::from(page / h.ftl.unit_bytes().unwrap_or(page));
        assert!((u64::from(n).div_ceil(k)..=written).contains(&c.programs.get(crate::Purpose::Host)));
    }
}

/// A random workload, a power cut at a random time, recovery, more work, another cut.
pub fn power_cut(builder: &dyn FtlBuilder, geometry: Geometry, seed: u64) {
    power_cut_with_streams(builder, geometry, seed, 0);
}

/// [`power_cut`] with writes carrying a stream, logical page modulo
/// `streams` ([`Harness::streams`]; 0: none), for FTLs that place by stream.
pub fn power_cut_with_streams(builder: &dyn FtlBuilder, geometry: Geometry, seed: u64, streams: u32) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let config = nand_config(geometry, if seed.is_multiple_of(2) { 0.0 } else { 0.05 }, seed);
    let mut h = Harness::new(builder, &config);
    h.streams = streams;
    // Age the device first so the cut lands amid garbage collection.
    let n = h.logical_pages();
    for lpn in 0..n {
        h.write(lpn).unwrap();
    }
    for _ in 0..2 {
        let ops = rng.gen_range(200..3000);
        h.random_ops(&mut rng, ops, 300_000);
        // Cut somewhere inside the operations still in flight.
        let t = SimTime(h.now.0 + rng.gen_range(0..3_000_000));
        h.cut_and_recover(t);
        h.random_ops(&mut rng, 500, 300_000);
        h.check_all();
    }
}

/// Power cuts exactly at write acknowledgements, on a hot region of two blocks'
/// worth of logical pages (writes and a few trims) of an aged device: a write
/// that needed a merge or garbage collection of its own region may be
/// acknowledged while that work is still in flight on other dies, and a cut
/// then must lose nothing acknowledged.
pub fn power_cut_at_ack(builder: &dyn FtlBuilder, geometry: Geometry, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut h = Harness::new(builder, &nand_config(geometry, 0.0, seed));
    let n = h.logical_pages();
    for lpn in 0..n {
        h.write(lpn).unwrap();
    }
    let hot = (2 * geometry.pages_per_block).min(n);
    for _ in 0..200 {
        let lpn = rng.gen_range(0..hot);
        if rng.gen_range(0..20) == 0 {
            h.trim(lpn).unwrap();
        } else {
            h.write(lpn).unwrap();
            if rng.gen_range(0..4) == 0 {
                let acked = SimTime(*h.completions.last().unwrap());
                h.cut_and_recover(acked.max(h.now));
                continue;
            }
        }
        h.advance(rng.gen_range(0..=300_000));
    }
    h.check_all();
}

/// Same seed, same counters and completion times.
pub fn deterministic(builder: &dyn FtlBuilder, geometry: Geometry) {
    let run = || {
        let mut rng = ChaCha8Rng::seed_from_u64(99);
        let mut h = Harness::new(builder, &nand_config(geometry, 0.02, 5));
        h.random_ops(&mut rng, 4000, 100_000);
        (*h.flash.counters(), h.completions.clone())
    };
    let (a, b) = (run(), run());
    assert_eq!(a.0, b.0);
    assert_eq!(a.1, b.1);
}

/// Bad input is an error, not a panic, and loses nothing.
pub fn rejects_bad_lpns(builder: &dyn FtlBuilder, geometry: Geometry) {
    let mut h = Harness::new(builder, &nand_config(geometry, 0.0, 1));
    let n = h.logical_pages();
    let tasks = h.ftl.realtime().map_or(0, |r| r.stream_pages());
    h.write(0).unwrap();
    if tasks > 0 {
        // The admitted tasks' pages take no write without a task's stream.
        assert!(matches!(h.write(n), Err(FtlError::Reserved { .. })));
        h.model.remove(&n);
    }
    assert!(matches!(h.write(n + tasks), Err(FtlError::LpnOutOfRange { .. })));
    assert!(matches!(h.read(n + tasks), Err(FtlError::LpnOutOfRange { .. })));
    h.model.remove(&(n + tasks));
    h.check(0);
}

/// Asserts that `e`, the error of a command on a medium that injects faults, is
/// one a fault may cause: of kind I/O or no space, and not a refusal to touch a
/// block that went bad (an FTL retires such a block; it never tries it again).
fn assert_fault_error(e: &FtlError, what: &str) {
    assert!(
        matches!(e.kind(), ErrorKind::Io | ErrorKind::NoSpace),
        "{what}: an injected fault must fail the command with an I/O or no-space error, got {e:?} ({e})"
    );
    assert!(
        !matches!(e, FtlError::Nand(NandError::GrownBad(_) | NandError::BadBlock(_))),
        "{what}: the FTL used a block that had gone bad instead of retiring it: {e}"
    );
}

impl Harness<'_> {
    /// Reads `lpn` on a medium that injects faults: a read that fails from a
    /// fault (a read may have to program, e.g. a mapping page) is retried.
    pub fn read_faulty(&mut self, lpn: u32) -> Option<u64> {
        let mut last = None;
        for _ in 0..4 {
            match self.read(lpn) {
                Ok(got) => return got,
                Err(e) => {
                    assert_fault_error(&e, &format!("read of lpn {lpn}"));
                    last = Some(e);
                }
            }
        }
        panic!("lpn {lpn}: reads keep failing: {last:?}");
    }

    /// Reads `lpn` on a medium that injects faults and checks it against the model.
    pub fn check_faulty(&mut self, lpn: u32) {
        let want = self.model.get(&lpn).and_then(History::current);
        let got = self.read_faulty(lpn);
        assert_eq!(got, want, "lpn {lpn}: read {got:?}, last written {want:?}");
    }

    /// Writes `lpn` on a medium that injects faults. A write may fail, with an
    /// error of kind I/O or no space; then the page holds what it held before or
    /// the new value (read back at once), never anything else.
    pub fn write_faulty(&mut self, lpn: u32) {
        let token = self.next_token;
        let Err(e) = self.write(lpn) else { return };
        assert_fault_error(&e, &format!("write of lpn {lpn}"));
        let before = self.model.get(&lpn).and_then(History::current);
        let got = self.read_faulty(lpn);
        assert!(
            got == before || got == Some(token),
            "lpn {lpn}: a failed write left {got:?}; it held {before:?} and the write was {token}"
        );
        let h = self.model.entry(lpn).or_default();
        h.ever.push(token);
        if got != before {
            // It landed though it failed: never acknowledged, so never durable.
            h.entries.push((got, SimTime::LATEST));
        }
    }

    /// Trims `lpn` on a medium that injects faults; a failed trim leaves the page
    /// as it was or trimmed.
    pub fn trim_faulty(&mut self, lpn: u32) {
        let Err(e) = self.trim(lpn) else { return };
        assert_fault_error(&e, &format!("trim of lpn {lpn}"));
        let before = self.model.get(&lpn).and_then(History::current);
        let got = self.read_faulty(lpn);
        assert!(got == before || got.is_none(), "lpn {lpn}: a failed trim left {got:?}; it held {before:?}");
        if got != before {
            self.model.entry(lpn).or_default().entries.push((None, SimTime::LATEST));
        }
    }

    /// Checks every logical page, and the FTL's invariants, on a medium that
    /// injects faults.
    pub fn check_all_faulty(&mut self) {
        for lpn in 0..self.logical_pages() {
            self.check_faulty(lpn);
        }
        self.ftl.check_invariants(&self.flash).unwrap();
    }
}

/// A random workload on a medium that fails programs and erases (at a seeded
/// rate, and by countdowns armed at random points), with power cuts and
/// recovery between its rounds: every acknowledged write reads back its latest
/// value, every failed command failed with an error of kind I/O or no space
/// (never a panic, never a block that had gone bad used again), and a failed
/// write left the old value or the new one. The workload stays in the first half
/// of the logical space: the blocks that go bad eat the spare space an FTL keeps,
/// and a device run at its highest utilization would soon refuse every write.
pub fn injected_faults(builder: &dyn FtlBuilder, geometry: Geometry, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let faults = Faults { program_fail_rate: 0.001, erase_fail_rate: 0.005, ..Faults::default() };
    let config = NandConfig { faults, ..nand_config(geometry, if seed.is_multiple_of(2) { 0.0 } else { 0.03 }, seed) };
    let mut h = Harness::new(builder, &config);
    h.faulty = true;
    let used = (h.logical_pages() / 2).max(1);
    for lpn in 0..used {
        h.write_faulty(lpn);
        h.advance(20_000);
    }
    // At least one failure, even on a device that soon runs out of space.
    h.flash.fail_program_in(rng.gen_range(1..20));
    let mut grown = 0;
    for _ in 0..2 {
        for _ in 0..1500 {
            if rng.gen_ratio(1, 400) {
                h.flash.fail_program_in(rng.gen_range(1..40));
            }
            if rng.gen_ratio(1, 800) {
                h.flash.fail_erase_in(rng.gen_range(1..6));
            }
            let lpn = rng.gen_range(0..used);
            match rng.gen_range(0..10) {
                0..=5 => h.write_faulty(lpn),
                6..=8 => h.check_faulty(lpn),
                _ => h.trim_faulty(lpn),
            }
            h.advance(rng.gen_range(0..=200_000));
        }
        h.check_all_faulty();
        let nand = h.flash.nand();
        grown += (0..nand.geometry().total_blocks()).filter(|&b| nand.is_grown_bad(ftlab_nand::BlockId(b))).count();
        let t = SimTime(h.now.0 + rng.gen_range(0..3_000_000));
        h.cut_and_recover(t);
        h.check_all_faulty();
    }
    assert!(grown > 0, "the workload must have made blocks go bad");
}

/// Generates the suite's tests for one FTL configuration, on the suite's small
/// device or on a given geometry.
#[macro_export]
macro_rules! conformance {
    ($name:ident, $builder:expr) => {
        $crate::conformance!($name, $builder, $crate::conformance::small_geometry());
    };
    ($name:ident, $builder:expr, $geometry:expr) => {
        $crate::conformance!($name, $builder, $geometry, commands: $crate::conformance::Commands::default());
    };
    ($name:ident, $builder:expr, $geometry:expr, commands: $commands:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            use $crate::conformance as suite;
            use $crate::conformance::proptest::prelude::*;

            /// The scheme; also makes every medium this test builds offer
            /// the chip commands of the suite (each test calls it first).
            fn builder() -> Box<dyn $crate::FtlBuilder> {
                suite::use_commands($commands);
                Box::new($builder)
            }

            fn geometry() -> $crate::conformance::Geometry {
                $geometry
            }

            fn logical_pages() -> u32 {
                suite::Harness::new(&*builder(), &suite::nand_config(geometry(), 0.0, 1)).logical_pages()
            }

            $crate::conformance::proptest::proptest! {
                #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
                #[test]
                fn random_ops_match_the_model(ops in suite::ops_strategy(logical_pages())) {
                    suite::run_ops(&*builder(), geometry(), &ops);
                }
            }

            #[test]
            fn full_overwrite_at_highest_utilization() {
                suite::full_overwrite(&*builder(), &suite::nand_config(geometry(), 0.0, 1), 6);
            }

            #[test]
            fn full_overwrite_with_bad_blocks() {
                suite::full_overwrite(&*builder(), &suite::nand_config(geometry(), 0.08, 11), 3);
            }

            #[test]
            fn power_cut_and_recovery() {
                for seed in 0..12 {
                    suite::power_cut(&*builder(), geometry(), seed);
                }
            }

            #[test]
            fn power_cut_at_write_acknowledgements() {
                for seed in 0..2 {
                    suite::power_cut_at_ack(&*builder(), geometry(), seed);
                }
            }

            #[test]
            fn deterministic() {
                suite::deterministic(&*builder(), geometry());
            }

            #[test]
            fn injected_faults_lose_nothing_acknowledged() {
                for seed in 0..8 {
                    suite::injected_faults(&*builder(), geometry(), seed);
                }
            }

            #[test]
            fn rejects_bad_lpns() {
                suite::rejects_bad_lpns(&*builder(), geometry());
            }
        }
    };
}
