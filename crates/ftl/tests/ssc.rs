//! The solid-state cache's own conformance suite (FlashTier, 003 Sections 2.2 and
//! 3.3.2): random command sequences against a reference cache model with the
//! clean/dirty contract, at high fill so silent eviction and garbage collection
//! run hard; power cuts at random points with recovery; determinism; silent
//! eviction saving copies; the defined results of odd input; injected program
//! and erase failures. Every suite runs for both consistency designs: per-write
//! OOB logging (a write is durable when acknowledged) and the map log with
//! checkpoints (a write, like an evict or clean, once a later flush completed).
//!
//! The random suites run 32 cases each; for a long run outside CI:
//! `FTLAB_FUZZ_CASES=2000 cargo test --release -p ftlab-ftl --test ssc`.
//! The fault suite runs 6 seeds; `FTLAB_FAULT_SEEDS=200` runs more.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use ftlab_ftl::conformance::{nand_config, proptest, small_geometry, Geometry};
use ftlab_ftl::schemes::host::ssc::{Consistency, Eviction, SscConfig, MAX_BLOCKS, MAX_EXISTS};
use ftlab_ftl::{ErrorKind, Flash, Ftl, FtlBuilder, FtlError};
use ftlab_nand::{BlockId, Faults, Nand, NandConfig, NandError, Payload, SimTime};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A small device so a few thousand commands fill it many times: 2 dies, 32
/// blocks of 8 pages (256 pages; the cache holds 216 blocks).
fn tiny() -> Geometry {
    Geometry {
        channels: 1,
        ways_per_channel: 1,
        dies_per_way: 2,
        planes_per_die: 1,
        blocks_per_plane: 16,
        pages_per_block: 8,
        page_size: 4096,
        oob_size: 128,
    }
}

/// Disk block `i` of the test's working set: spread over the 31-bit space.
fn disk_block(i: u32) -> u64 {
    u64::from(i) * 1_000_003 + 17
}

/// What the model says a block holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Absent,
    Present { token: u64, dirty: bool },
}

impl State {
    fn apply(self, ev: Ev) -> State {
        match (ev, self) {
            (Ev::Write { token, dirty }, _) => State::Present { token, dirty },
            (Ev::Evict, _) => State::Absent,
            (Ev::Clean, State::Present { token, .. }) => State::Present { token, dirty: false },
            (Ev::Clean, State::Absent) => State::Absent,
        }
    }
    fn dirty(self) -> bool {
        matches!(self, State::Present { dirty: true, .. })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ev {
    Write { token: u64, dirty: bool },
    Evict,
    Clean,
}

/// One block's commands since the last point where its state was certain, each
/// with the time it became durable (with OOB logging a write at its
/// acknowledgement; an evict or clean, and in log mode a write too, when a
/// later flush completed).
#[derive(Debug, Clone)]
struct History {
    base: State,
    events: Vec<(Ev, Option<SimTime>)>,
}

impl History {
    fn current(&self) -> State {
        self.events.iter().fold(self.base, |s, e| s.apply(e.0))
    }

    /// States the block may recover to after a cut at `t`: the state after any
    /// prefix at least as long as the last durable command, or absent instead
    /// of a clean state.
    fn acceptable_after_cut(&self, t: SimTime) -> Vec<State> {
        let m = self.events.iter().rposition(|e| e.1.is_some_and(|d| d <= t)).map_or(0, |i| i + 1);
        let mut states = vec![self.base];
        for e in &self.events {
            let s = states[states.len() - 1].apply(e.0);
            states.push(s);
        }
        let mut ok: Vec<State> = states[m..].to_vec();
        if ok.iter().any(|s| matches!(s, State::Present { dirty: false, .. })) {
            ok.push(State::Absent);
        }
        ok
    }
}

struct Cache {
    builder: SscConfig,
    flash: Flash,
    ftl: Box<dyn Ftl>,
    now: SimTime,
    model: BTreeMap<u64, History>,
    next_token: u64,
    completions: Vec<u64>,
    /// The medium injects program and erase failures: a write or flush may
    /// fail with an I/O or no-space error ([`Cache::fault_error`]).
    faulty: bool,
    /// Log mode: writes are durable at the next completed flush.
    log: bool,
}

fn token(p: Option<Payload>) -> Option<u64> {
    p.map(|p| match p {
        Payload::Token(t) => t,
        Payload::Bytes(_) => panic!("token store returned bytes"),
    })
}

impl Cache {
    fn new(config: SscConfig, geometry: Geometry, bad_block_rate: f64, seed: u64) -> Self {
        Cache::on(config, &nand_config(geometry, bad_block_rate, seed))
    }

    /// A cache formatted on a medium built from `nand`.
    fn on(config: SscConfig, nand: &NandConfig) -> Self {
        let mut flash = Flash::new(Nand::new(nand).unwrap());
        let ftl = config.format(&mut flash.io(SimTime::ZERO)).unwrap();
        Cache {
            builder: config,
            flash,
            ftl,
            now: SimTime::ZERO,
            model: BTreeMap::new(),
            next_token: 1,
            completions: Vec::new(),
            faulty: !nand.faults.is_none(),
            log: config.consistency == Consistency::Log,
        }
    }

    fn capacity(&mut self) -> u64 {
        self.ftl.ssc().unwrap().capacity()
    }

    fn model_dirty(&self) -> u64 {
        self.model.values().filter(|h| h.current().dirty()).count() as u64
    }

    fn model_cached(&self) -> u64 {
        self.model.values().filter(|h| h.current() != State::Absent).count() as u64
    }

    fn push(&mut self, block: u64, ev: Ev, durable: Option<SimTime>) {
        self.model
            .entry(block)
            .or_insert(History { base: State::Absent, events: Vec::new() })
            .events
            .push((ev, durable));
    }

    /// Writes a fresh token; refusals are checked against the model's counts.
    fn write(&mut self, block: u64, dirty: bool) {
        let token = self.next_token;
        self.next_token += 1;
        let cur = self.model.get(&block).map_or(State::Absent, History::current);
        let cap = self.capacity();
        let off = self.builder.eviction == Eviction::Off;
        let must_refuse = (dirty && !cur.dirty() && self.model_dirty() >= cap)
            || (off && cur == State::Absent && self.model_cached() >= cap);
        let mut io = self.flash.io(self.now);
        let ssc = self.ftl.ssc().unwrap();
        let r = if dirty {
            ssc.write_dirty(&mut io, block, Payload::Token(token))
        } else {
            ssc.write_clean(&mut io, block, Payload::Token(token))
        };
        let done = io.completion();
        match r {
            Ok(()) => {
                assert!(!must_refuse, "write of block {block} (dirty {dirty}) beyond the capacity {cap} was taken");
                self.completions.push(done.as_ns());
                let durable = if self.log { None } else { Some(done) };
                self.push(block, Ev::Write { token, dirty }, durable);
            }
            Err(e) if must_refuse => {
                assert!(matches!(e, FtlError::DeviceFull(_)) && e.kind() == ErrorKind::NoSpace, "{e}");
            }
            Err(e) => {
                assert!(self.faulty, "write of block {block} (dirty {dirty}) refused: {e}");
                Cache::fault_error(&e, &format!("write of block {block}"));
                // The block holds what it held (a clean block may have been
                // evicted silently) or, never acknowledged, the new data.
                let (got, now_dirty) = self.observe(block);
                match (cur, got) {
                    (_, Some(t)) if t == token => {
                        let durable = if self.log { None } else { Some(SimTime::LATEST) };
                        self.push(block, Ev::Write { token, dirty: now_dirty }, durable)
                    }
                    (State::Present { token: old, dirty: d }, Some(t)) => {
                        assert!(t == old && now_dirty == d, "block {block}: a failed write left {t}, it held {cur:?}")
                    }
                    (State::Present { dirty: false, .. } | State::Absent, None) => {}
                    _ => panic!("block {block}: a failed write left {got:?}, it held {cur:?}"),
                }
            }
        }
    }

    /// Asserts that `e`, the error of a command on a medium that injects
    /// faults, is one a fault may cause: of kind I/O or no space, and not the
    /// use of a block that had gone bad.
    fn fault_error(e: &FtlError, what: &str) {
        assert!(matches!(e.kind(), ErrorKind::Io | ErrorKind::NoSpace), "{what}: {e:?} ({e})");
        assert!(
            !matches!(e, FtlError::Nand(NandError::GrownBad(_) | NandError::BadBlock(_))),
            "{what}: a block gone bad was used again: {e}"
        );
    }

    fn evict(&mut self, block: u64) {
        let mut io = self.flash.io(self.now);
        self.ftl.ssc().unwrap().evict(&mut io, block).unwrap();
        self.push(block, Ev::Evict, None);
    }

    fn clean(&mut self, block: u64) {
        let mut io = self.flash.io(self.now);
        self.ftl.ssc().unwrap().clean(&mut io, block).unwrap();
        self.push(block, Ev::Clean, None);
    }

    fn flush(&mut self) {
        let mut io = self.flash.io(self.now);
        if let Err(e) = self.ftl.ssc().unwrap().flush(&mut io) {
            // A failed flush made nothing durable; a later one will.
            assert!(self.faulty, "flush: {e}");
            Cache::fault_error(&e, "flush");
            return;
        }
        let done = io.completion().max(self.now);
        self.completions.push(done.as_ns());
        for h in self.model.values_mut() {
            for e in &mut h.events {
                if e.1.is_none() {
                    e.1 = Some(done);
                }
            }
        }
    }

    /// What the cache holds for `block`: its data (or a miss) and whether
    /// `exists` says dirty.
    fn observe(&mut self, block: u64) -> (Option<u64>, bool) {
        let mut io = self.flash.io(self.now);
        let ssc = self.ftl.ssc().unwrap();
        let got = token(ssc.read(&mut io, block).unwrap());
        self.completions.push(io.completion().as_ns());
        let dirty = ssc.exists(&mut io, block, 1).unwrap()[0];
        (got, dirty)
    }

    /// Reads `block` and checks it against the model: the last written data or,
    /// for a clean block, a miss; never other data; a dirty block never misses.
    fn check(&mut self, block: u64) {
        let want = self.model.get(&block).map_or(State::Absent, History::current);
        let (got, dirty) = self.observe(block);
        match want {
            State::Absent => assert_eq!((got, dirty), (None, false), "block {block}: absent in the model"),
            State::Present { token, dirty: true } => {
                assert_eq!((got, dirty), (Some(token), true), "block {block}: dirty with token {token}")
            }
            State::Present { token, dirty: false } => {
                assert!(!dirty && (got == Some(token) || got.is_none()), "block {block}: clean {token}, read {got:?}")
            }
        }
    }

    /// `exists` over a range must agree with the model block by block.
    fn check_exists(&mut self, first: u64, count: u64) {
        let mut io = self.flash.io(self.now);
        let got = self.ftl.ssc().unwrap().exists(&mut io, first, count).unwrap();
        assert_eq!(got.len() as u64, count);
        for (i, d) in got.into_iter().enumerate() {
            let b = first + i as u64;
            let want = self.model.get(&b).is_some_and(|h| h.current().dirty());
            assert_eq!(d, want, "exists: block {b}");
        }
    }

    fn check_all(&mut self) {
        let blocks: Vec<u64> = self.model.keys().copied().collect();
        for b in blocks {
            self.check(b);
        }
        self.ftl.check_invariants(&self.flash).unwrap();
        let s = self.ftl.ssc().unwrap();
        assert!(s.dirty_blocks() <= s.capacity() && s.dirty_blocks() <= s.cached_blocks());
    }

    fn advance(&mut self, ns: u64) {
        self.now = SimTime(self.now.0 + ns);
    }

    /// Cuts power at `t`, recovers, and checks every block the model knows (and
    /// one it never saw) against what may survive.
    fn cut_and_recover(&mut self, t: SimTime) {
        assert!(t >= self.now);
        self.flash.power_cut(t);
        self.now = t;
        let ftl = {
            let mut io = self.flash.io(t);
            let ftl = self.builder.recover(&mut io).unwrap();
            self.now = io.last_finish();
            ftl
        };
        self.ftl = ftl;
        self.ftl.check_invariants(&self.flash).unwrap();
        let blocks: Vec<u64> = self.model.keys().copied().collect();
        for b in blocks {
            let (got, dirty) = self.observe(b);
            let h = self.model.remove(&b).unwrap();
            let ok = h.acceptable_after_cut(t);
            let state = match got {
                None => State::Absent,
                Some(token) => State::Present { token, dirty },
            };
            assert!(
                (got.is_some() || !dirty) && ok.contains(&state),
                "after a cut at {t}: block {b} recovered as {state:?} (exists says dirty: {dirty}), acceptable \
                 {ok:?}, history {h:?}"
            );
            self.model.insert(b, History { base: state, events: Vec::new() });
        }
        assert_eq!(self.observe(disk_block(2000)), (None, false), "a block never written");
    }

    /// A random command over `blocks` blocks of the working set.
    fn random_cmd(&mut self, rng: &mut ChaCha8Rng, blocks: u32, clean_share: u32) {
        let b = disk_block(rng.gen_range(0..blocks));
        match rng.gen_range(0..100) {
            0..=49 => {
                let dirty = rng.gen_range(0..100) >= clean_share;
                self.write(b, dirty);
            }
            50..=69 => self.check(b),
            70..=77 => self.clean(b),
            78..=83 => self.evict(b),
            84..=86 => self.flush(),
            _ => {
                // A small range around a working-set block, dense in disk blocks.
                let first = b.saturating_sub(2);
                self.check_exists(first, 5);
            }
        }
    }
}

fn config(eviction: Eviction, consistency: Consistency) -> SscConfig {
    SscConfig { eviction, consistency, ..SscConfig::default() }
}

/// Both consistency designs.
const BOTH: [Consistency; 2] = [Consistency::Oob, Consistency::Log];

fn consistency() -> impl Strategy<Value = Consistency> {
    prop_oneof![Just(Consistency::Oob), Just(Consistency::Log)]
}

#[derive(Debug, Clone)]
enum Cmd {
    WriteClean(u32),
    WriteDirty(u32),
    Read(u32),
    Evict(u32),
    Clean(u32),
    Exists(u32, u8),
    Flush,
}

fn cmds(blocks: u32) -> impl Strategy<Value = Vec<Cmd>> {
    let cmd = prop_oneof![
        4 => (0..blocks).prop_map(Cmd::WriteClean),
        3 => (0..blocks).prop_map(Cmd::WriteDirty),
        3 => (0..blocks).prop_map(Cmd::Read),
        1 => (0..blocks).prop_map(Cmd::Evict),
        2 => (0..blocks).prop_map(Cmd::Clean),
        1 => ((0..blocks), any::<u8>()).prop_map(|(b, n)| Cmd::Exists(b, n)),
        1 => Just(Cmd::Flush),
    ];
    proptest::collection::vec(cmd, 1..1500)
}

/// Cases of each random suite: `FTLAB_FUZZ_CASES`, or 32.
fn cases() -> u32 {
    std::env::var("FTLAB_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(32)
}

fn eviction() -> impl Strategy<Value = Eviction> {
    prop_oneof![Just(Eviction::Off), Just(Eviction::Valid), Just(Eviction::Dirty)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
    /// Random commands over 300 blocks (more than the 216 the tiny device caches)
    /// against the model; the first divergence fails and shrinks.
    #[test]
    fn random_commands_match_the_model(ev in eviction(), cons in consistency(), ops in cmds(300)) {
        let mut c = Cache::new(config(ev, cons), tiny(), 0.0, 1);
        for op in &ops {
            match *op {
                Cmd::WriteClean(b) => c.write(disk_block(b), false),
                Cmd::WriteDirty(b) => c.write(disk_block(b), true),
                Cmd::Read(b) => c.check(disk_block(b)),
                Cmd::Evict(b) => c.evict(disk_block(b)),
                Cmd::Clean(b) => c.clean(disk_block(b)),
                Cmd::Exists(b, n) => c.check_exists(disk_block(b).saturating_sub(u64::from(n)), u64::from(n) * 2),
                Cmd::Flush => c.flush(),
            }
            c.advance(50_000);
        }
        c.check_all();
    }

    /// A power cut at a random point of random commands, recovery, more
    /// commands, another cut.
    #[test]
    fn power_cuts_keep_the_contract(
        ev in eviction(),
        cons in consistency(),
        seed in 0u64..1_000_000,
        clean_share in 0u32..100,
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let bad = if seed % 2 == 0 { 0.0 } else { 0.05 };
        let mut c = Cache::new(config(ev, cons), tiny(), bad, seed);
        for _ in 0..2 {
            for _ in 0..rng.gen_range(200..2500) {
                c.random_cmd(&mut rng, 300, clean_share);
                c.advance(rng.gen_range(0..=300_000));
            }
            let t = SimTime(c.now.0 + rng.gen_range(0..3_000_000));
            c.cut_and_recover(t);
            for _ in 0..300 {
                c.random_cmd(&mut rng, 300, clean_share);
                c.advance(rng.gen_range(0..=300_000));
            }
            c.check_all();
        }
    }
}

/// Long runs of each policy at high fill: every block is checked at the end.
#[test]
fn long_runs_at_high_fill() {
    for (ev, cons) in [Eviction::Off, Eviction::Valid, Eviction::Dirty].into_iter().flat_map(|e| BOTH.map(|c| (e, c))) {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut c = Cache::new(config(ev, cons), tiny(), 0.0, 3);
        for _ in 0..20_000 {
            c.random_cmd(&mut rng, 400, 60);
            c.advance(rng.gen_range(0..=100_000));
        }
        c.check_all();
        let erases = c.flash.counters().erases.total();
        assert!(erases > 100, "{ev:?} {cons:?}: only {erases} erases; the run must collect garbage");
        let evictions = c.ftl.ssc().unwrap().evictions();
        assert_eq!(evictions == 0, ev == Eviction::Off, "{ev:?} {cons:?}: {evictions} silent evictions");
    }
}

/// Same seed, same counters and completion times.
#[test]
fn deterministic() {
    let run = |ev, cons| {
        let mut rng = ChaCha8Rng::seed_from_u64(99);
        let mut c = Cache::new(config(ev, cons), tiny(), 0.02, 5);
        for _ in 0..5000 {
            c.random_cmd(&mut rng, 300, 50);
            c.advance(rng.gen_range(0..=100_000));
        }
        (*c.flash.counters(), c.completions.clone(), c.ftl.ssc().unwrap().evictions())
    };
    for ev in [Eviction::Valid, Eviction::Dirty] {
        for cons in BOTH {
            assert_eq!(run(ev, cons), run(ev, cons));
        }
    }
}

/// The same workload of mostly clean writes (90%) over 90% of the capacity:
/// with silent eviction the collector drops clean pages instead of copying
/// them, so it copies far fewer pages (003 Section 3.3.2).
#[test]
fn silent_eviction_saves_copies() {
    for cons in BOTH {
        silent_eviction_saves_copies_in(cons);
    }
}

fn silent_eviction_saves_copies_in(cons: Consistency) {
    let run = |ev| {
        let mut c = Cache::new(config(ev, cons), small_geometry(), 0.0, 1);
        let blocks = (c.capacity() * 9 / 10) as u32;
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for _ in 0..blocks * 8 {
            let b = disk_block(rng.gen_range(0..blocks));
            let dirty = rng.gen_range(0..10) == 0;
            c.write(b, dirty);
            c.advance(20_000);
        }
        c.check_all();
        let copies = c.flash.counters().page_copies();
        let erases = c.flash.counters().erases.total();
        (copies, erases, c.ftl.ssc().unwrap().evictions())
    };
    let (off_copies, off_erases, off_evictions) = run(Eviction::Off);
    let (on_copies, on_erases, on_evictions) = run(Eviction::Valid);
    assert!(off_copies > 1000, "without silent eviction GC must copy: {off_copies} copies");
    assert!(
        on_copies * 4 < off_copies,
        "silent eviction: {on_copies} copies ({on_erases} erases), without: {off_copies} ({off_erases} erases)"
    );
    assert_eq!(off_evictions, 0);
    assert!(on_evictions > 0);
    assert!(on_erases < off_erases, "{on_erases} erases with silent eviction, {off_erases} without");
}

/// Evicting aggressively (victims by dirty pages) copies no more than the
/// prototype's choice (victims by valid pages) on a mostly clean workload.
#[test]
fn dirty_victims_evict_more_and_copy_less() {
    for cons in BOTH {
        dirty_victims_evict_more_and_copy_less_in(cons);
    }
}

fn dirty_victims_evict_more_and_copy_less_in(cons: Consistency) {
    let run = |ev| {
        let mut c = Cache::new(config(ev, cons), tiny(), 0.0, 1);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for _ in 0..8000 {
            let b = disk_block(rng.gen_range(0..400));
            c.write(b, rng.gen_range(0..4) == 0);
            if rng.gen_range(0..8) == 0 {
                c.clean(b);
            }
            c.advance(20_000);
        }
        c.check_all();
        (c.flash.counters().page_copies(), c.ftl.ssc().unwrap().evictions())
    };
    let (valid_copies, valid_evictions) = run(Eviction::Valid);
    let (dirty_copies, dirty_evictions) = run(Eviction::Dirty);
    assert!(dirty_copies <= valid_copies, "{dirty_copies} copies by dirty victims, {valid_copies} by valid");
    assert!(dirty_evictions > 0 && valid_evictions > 0);
}

/// Bad input has a defined result: errors name the input and the limit, the
/// rest are no-ops or defined overwrites.
#[test]
fn odd_input_has_defined_results() {
    for cons in BOTH {
        odd_input_has_defined_results_in(cons);
    }
}

fn odd_input_has_defined_results_in(cons: Consistency) {
    let mut c = Cache::new(config(Eviction::Valid, cons), tiny(), 0.0, 1);
    let mut io = c.flash.io(SimTime::ZERO);
    let s = c.ftl.ssc().unwrap();
    // exists: capped, no huge allocation; the end must not overflow.
    for (first, count) in [(0, MAX_EXISTS + 1), (0, u64::MAX), (u64::MAX - 3, 10)] {
        let e = s.exists(&mut io, first, count).unwrap_err();
        assert!(matches!(e, FtlError::BadCommand(_)) && e.kind() == ErrorKind::Invalid, "{e}");
        assert!(e.to_string().contains(&MAX_EXISTS.to_string()), "{e}");
    }
    assert_eq!(s.exists(&mut io, 0, MAX_EXISTS).unwrap().len() as u64, MAX_EXISTS);
    assert_eq!(s.exists(&mut io, 0, 0).unwrap(), Vec::<bool>::new());
    // Blocks beyond the 31-bit space: refused, naming block and limit; exists
    // reports them not dirty.
    let far = MAX_BLOCKS + 5;
    for r in [
        s.write_dirty(&mut io, far, Payload::Token(1)),
        s.write_clean(&mut io, far, Payload::Token(1)),
        s.read(&mut io, far).map(|_| ()),
        s.evict(&mut io, far),
        s.clean(&mut io, far),
    ] {
        let e = r.unwrap_err();
        assert!(e.kind() == ErrorKind::Invalid && e.to_string().contains(&far.to_string()), "{e}");
    }
    s.write_dirty(&mut io, MAX_BLOCKS - 1, Payload::Token(9)).unwrap();
    assert_eq!(s.exists(&mut io, MAX_BLOCKS - 2, 4).unwrap(), vec![false, true, false, false]);
    // Evict and clean of an absent block: no-ops.
    s.evict(&mut io, 77).unwrap();
    s.clean(&mut io, 77).unwrap();
    assert_eq!(s.read(&mut io, 77).unwrap(), None);
    // Write-clean of a dirty block: the new data, clean.
    s.write_dirty(&mut io, 5, Payload::Token(10)).unwrap();
    s.write_clean(&mut io, 5, Payload::Token(11)).unwrap();
    assert_eq!(s.exists(&mut io, 5, 1).unwrap(), vec![false]);
    assert_eq!(s.read(&mut io, 5).unwrap(), Some(Payload::Token(11)));
    // Clean of a clean block: a no-op; a dirty block cleaned stays readable.
    s.clean(&mut io, 5).unwrap();
    s.write_dirty(&mut io, 6, Payload::Token(12)).unwrap();
    s.clean(&mut io, 6).unwrap();
    assert_eq!(
        (s.exists(&mut io, 6, 1).unwrap(), s.read(&mut io, 6).unwrap()),
        (vec![false], Some(Payload::Token(12)))
    );
    assert_eq!((s.cached_blocks(), s.dirty_blocks()), (3, 1));
}

/// A cache full of dirty data refuses another dirty block (no space) until one
/// is cleaned; overwrites of dirty blocks and clean writes still go in.
#[test]
fn full_of_dirty_data_refuses_new_dirty_blocks() {
    for cons in BOTH {
        full_of_dirty_data_refuses_new_dirty_blocks_in(cons);
    }
}

fn full_of_dirty_data_refuses_new_dirty_blocks_in(cons: Consistency) {
    let mut c = Cache::new(config(Eviction::Valid, cons), tiny(), 0.0, 1);
    let cap = c.capacity();
    for i in 0..cap {
        c.write(disk_block(i as u32), true);
        c.advance(10_000);
    }
    let e = {
        let mut io = c.flash.io(c.now);
        c.ftl.ssc().unwrap().write_dirty(&mut io, disk_block(cap as u32), Payload::Token(1)).unwrap_err()
    };
    assert_eq!(e.kind(), ErrorKind::NoSpace);
    assert!(e.to_string().contains(&cap.to_string()) && e.to_string().contains("clean"), "{e}");
    c.write(disk_block(3), true);
    c.write(disk_block(cap as u32 + 1), false);
    c.clean(disk_block(7));
    c.write(disk_block(cap as u32), true);
    c.check_all();
}

/// A cleaned block stays clean after a flush and a cut; an evicted one stays
/// gone (the records of the OOB-logging design).
#[test]
fn flushed_evict_and_clean_survive_a_cut() {
    for cons in BOTH {
        flushed_evict_and_clean_survive_a_cut_in(cons);
    }
}

fn flushed_evict_and_clean_survive_a_cut_in(cons: Consistency) {
    let mut c = Cache::new(config(Eviction::Valid, cons), tiny(), 0.0, 1);
    for i in 0..20 {
        c.write(disk_block(i), true);
        c.advance(300_000);
    }
    for i in 0..10 {
        c.evict(disk_block(i));
        c.clean(disk_block(i + 10));
    }
    c.flush();
    c.advance(50_000_000);
    let t = c.now;
    c.cut_and_recover(t);
    for i in 0..10 {
        assert_eq!(c.observe(disk_block(i)), (None, false));
        assert!(!c.observe(disk_block(i + 10)).1, "block {i}: cleaned and flushed, recovered dirty");
    }
    let records = c.flash.counters().programs.get(ftlab_ftl::Purpose::Map);
    let checkpoints = c.flash.counters().programs.get(ftlab_ftl::Purpose::Checkpoint);
    match cons {
        Consistency::Oob => assert_eq!((records, checkpoints), (20, 0), "one record per flushed evict or clean"),
        // A log page per 7 data pages (a block's worth less its last page: 2
        // for the 20 writes), then the flush's log page (the evicts and
        // cleans) and its checkpoint of the 10 blocks still cached (one page).
        Consistency::Log => assert_eq!((records, checkpoints), (3, 1), "the log pages and checkpoint of the flush"),
    }
}

fn log_config() -> SscConfig {
    config(Eviction::Valid, Consistency::Log)
}

/// Log mode: a data page's OOB holds no disk block, so recovery cannot use
/// one; after a run with garbage collection, flushes and a cut, the recovered
/// cache keeps the contract (from the checkpoint and the log alone).
#[test]
fn log_mode_recovers_without_the_oob() {
    let mut c = Cache::new(log_config(), tiny(), 0.0, 7);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..3000 {
        c.random_cmd(&mut rng, 300, 40);
        c.advance(rng.gen_range(0..=200_000));
    }
    c.flush();
    let nand = c.flash.nand();
    let g = *nand.geometry();
    let mut data_pages = 0;
    for p in 0..g.total_pages() {
        if let Some(oob) = nand.peek_oob(ftlab_nand::Ppa(p)) {
            if oob.kind == ftlab_nand::PageKind::Data {
                assert_eq!(oob.lpn, 0, "page {p}: a data page's OOB names a block in log mode");
                data_pages += 1;
            }
        }
    }
    assert!(data_pages > 100, "{data_pages} data pages");
    let erases = c.flash.counters().erases.total();
    assert!(erases > 100, "only {erases} erases: the run must collect garbage");
    c.check_all();
    let dirty_before = c.ftl.ssc().unwrap().dirty_blocks();
    // A cut once the flush completed (the device may run behind the commands).
    let flushed = SimTime(*c.completions.iter().max().unwrap());
    let t = flushed.max(c.now);
    let reads = c.flash.counters().reads.get(ftlab_ftl::Purpose::Recovery);
    c.cut_and_recover(t);
    // Everything was flushed: the recovered cache holds every dirty block.
    assert_eq!(c.ftl.ssc().unwrap().dirty_blocks(), dirty_before);
    // Recovery read one OOB per written data block and the metadata blocks'
    // pages, far fewer than the data pages.
    let reads = c.flash.counters().reads.get(ftlab_ftl::Purpose::Recovery) - reads;
    assert!(reads > 0 && reads * 2 < data_pages, "{reads} recovery reads, {data_pages} data pages");
    c.check_all();
}

/// Log mode: changes after the last flush are durable once a log page holds
/// them, and recovery replays them in order after the checkpoint. After a
/// flush (a checkpoint of blocks 0-4, dirty), seven writes with evicts and
/// cleans between them fill a block's worth of data pages, so their log page
/// goes out; three more writes (no log page yet) are gone after a cut.
#[test]
fn log_mode_replays_the_log_after_the_checkpoint() {
    let mut c = Cache::new(log_config(), tiny(), 0.0, 1);
    for i in 0..5 {
        c.write(disk_block(i), true);
        c.advance(300_000);
    }
    c.flush();
    let checkpoints = c.flash.counters().programs.get(ftlab_ftl::Purpose::Checkpoint);
    assert_eq!(checkpoints, 1);
    let logged = c.flash.counters().programs.get(ftlab_ftl::Purpose::Map);
    let b = disk_block;
    c.write(b(5), true);
    c.evict(b(5));
    c.write(b(6), true);
    c.clean(b(6));
    c.write(b(7), false);
    c.write(b(7), true);
    c.write(b(0), false);
    c.write(b(8), true);
    c.write(b(9), true);
    assert_eq!(c.flash.counters().programs.get(ftlab_ftl::Purpose::Map), logged + 1, "one log page");
    for i in 10..13 {
        c.write(b(i), true);
    }
    let want: Vec<State> = (0..13).map(|i| c.model.get(&b(i)).map_or(State::Absent, History::current)).collect();
    c.advance(50_000_000);
    let t = c.now;
    c.flash.power_cut(t);
    let mut io = c.flash.io(t);
    let mut ftl = c.builder.recover(&mut io).unwrap();
    let s = ftl.ssc().unwrap();
    for (i, want) in want.into_iter().enumerate() {
        let got = token(s.read(&mut io, b(i as u32)).unwrap());
        let dirty = s.exists(&mut io, b(i as u32), 1).unwrap()[0];
        let got = got.map_or(State::Absent, |token| State::Present { token, dirty });
        // Blocks 10-12 were never logged.
        let want = if i >= 10 { State::Absent } else { want };
        assert_eq!(got, want, "block {i}");
    }
    assert_eq!(c.flash.counters().programs.get(ftlab_ftl::Purpose::Checkpoint), checkpoints);
}

/// Log mode with `checkpoint_on_flush = false` (FlashTier's schedule):
/// a flush writes the log, not a checkpoint, and what it flushed survives a
/// cut: recovery replays the log from the start (no checkpoint yet).
#[test]
fn flush_without_checkpoint_writes_the_log_and_stays_durable() {
    let config = SscConfig { checkpoint_on_flush: false, ..log_config() };
    let mut c = Cache::new(config, tiny(), 0.0, 1);
    let b = disk_block;
    for i in 0..5 {
        c.write(b(i), true);
        c.advance(300_000);
    }
    c.flush();
    c.clean(b(1));
    c.evict(b(2));
    c.flush();
    assert_eq!(c.flash.counters().programs.get(ftlab_ftl::Purpose::Checkpoint), 0, "a flush checkpointed");
    assert!(c.flash.counters().programs.get(ftlab_ftl::Purpose::Map) >= 2, "each flush writes a log page");
    let want: Vec<State> = (0..5).map(|i| c.model.get(&b(i)).map_or(State::Absent, History::current)).collect();
    c.advance(50_000_000);
    let t = c.now;
    c.flash.power_cut(t);
    let mut io = c.flash.io(t);
    let mut ftl = c.builder.recover(&mut io).unwrap();
    let s = ftl.ssc().unwrap();
    for (i, want) in want.into_iter().enumerate() {
        let got = token(s.read(&mut io, b(i as u32)).unwrap());
        let dirty = s.exists(&mut io, b(i as u32), 1).unwrap()[0];
        let got = got.map_or(State::Absent, |token| State::Present { token, dirty });
        assert_eq!(got, want, "block {i}");
    }
    // The default checkpoints on each flush that changed the map.
    let mut d = Cache::new(log_config(), tiny(), 0.0, 1);
    for i in 0..5 {
        d.write(b(i), true);
        d.advance(300_000);
    }
    d.flush();
    d.clean(b(1));
    d.flush();
    assert_eq!(d.flash.counters().programs.get(ftlab_ftl::Purpose::Checkpoint), 2);
    // The key reaches the FTL through the registry too.
    let mut t = toml::Table::new();
    t.insert("consistency".into(), toml::Value::String("log".into()));
    t.insert("checkpoint_on_flush".into(), toml::Value::Boolean(false));
    assert!(ftlab_ftl::registry::build("ssc", &t).is_ok());
}

#[test]
fn reached_through_the_ftl_trait_and_registry() {
    let b = ftlab_ftl::registry::build("ssc", &toml::Table::new()).unwrap();
    let mut flash = Flash::new(Nand::new(&nand_config(tiny(), 0.0, 1)).unwrap());
    let mut ftl = b.format(&mut flash.io(SimTime::ZERO)).unwrap();
    assert_eq!(ftl.name(), "ssc");
    let cap = ftl.ssc().unwrap().capacity();
    assert_eq!(u64::from(ftl.logical_pages()), cap);
    // The block interface: logical page l is disk block l, written dirty.
    let mut io = flash.io(SimTime::ZERO);
    ftl.write(&mut io, ftlab_ftl::Lpn(3), Payload::Token(5), &ftlab_ftl::Hint::default()).unwrap();
    let s = ftl.ssc().unwrap();
    assert_eq!((s.exists(&mut io, 3, 1).unwrap(), s.read(&mut io, 3).unwrap()), (vec![true], Some(Payload::Token(5))));
    ftl.trim(&mut io, ftlab_ftl::Lpn(3)).unwrap();
    assert_eq!(ftl.read(&mut io, ftlab_ftl::Lpn(3)).unwrap(), None);
    ftl.write(&mut io, ftlab_ftl::Lpn(4), Payload::Token(6), &ftlab_ftl::Hint::default()).unwrap();
    let placement = ftl.placement().unwrap();
    assert!(placement.die_of(ftlab_ftl::Lpn(4)).is_some() && placement.die_of(ftlab_ftl::Lpn(3)).is_none());
    assert!(ftl.write(&mut io, ftlab_ftl::Lpn(cap as u32), Payload::Token(7), &ftlab_ftl::Hint::default()).is_err());
    // The table: at least 4/3 slots per physical page.
    assert!(ftl.ram_bytes() > 256 * 4 / 3 * 16, "{}", ftl.ram_bytes());
    let mut p = toml::Table::new();
    p.insert("eviction".into(), toml::Value::String("dirty".into()));
    p.insert("reserve".into(), toml::Value::Float(0.2));
    assert!(ftlab_ftl::registry::build("ssc", &p).is_ok());
    p.insert("reserve".into(), toml::Value::Float(1.5));
    let e = ftlab_ftl::registry::build("ssc", &p).unwrap_err().to_string();
    assert!(e.contains("reserve"), "{e}");
    let mut p = toml::Table::new();
    p.insert("eviction".into(), toml::Value::String("sometimes".into()));
    assert!(ftlab_ftl::registry::build("ssc", &p).is_err());
    // Other FTLs have no cache commands.
    let mut pm =
        ftlab_ftl::schemes::page::pagemap::PageMapConfig::default().format(&mut flash.io(SimTime::ZERO)).unwrap();
    assert!(pm.ssc().is_none());
}

/// Random cache commands on a medium that fails programs and erases (at a
/// seeded rate and by countdowns armed at random points), with power cuts and
/// recovery: every failed command failed with an I/O or no-space error and
/// used no block gone bad again, a failed write left the old data or the new,
/// an acknowledged dirty block is never lost, and a clean block reads back its
/// data or misses, never other data. The working set stays below the capacity,
/// so the blocks that go bad do not leave the dirty data without room.
#[test]
fn injected_faults_keep_the_cache_contract() {
    let seeds = std::env::var("FTLAB_FAULT_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(6u64);
    for seed in 0..seeds {
        for (ev, cons) in
            [Eviction::Off, Eviction::Valid, Eviction::Dirty].into_iter().flat_map(|e| BOTH.map(|c| (e, c)))
        {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let faults = Faults { program_fail_rate: 0.002, erase_fail_rate: 0.005, ..Faults::default() };
            let bad = if seed % 2 == 0 { 0.0 } else { 0.03 };
            let mut c = Cache::on(config(ev, cons), &NandConfig { faults, ..nand_config(tiny(), bad, seed) });
            let clean_share = rng.gen_range(0..100);
            c.flash.fail_program_in(rng.gen_range(1..20));
            let mut grown = 0;
            for _ in 0..2 {
                for _ in 0..1500 {
                    if rng.gen_ratio(1, 300) {
                        c.flash.fail_program_in(rng.gen_range(1..40));
                    }
                    if rng.gen_ratio(1, 600) {
                        c.flash.fail_erase_in(rng.gen_range(1..6));
                    }
                    c.random_cmd(&mut rng, 120, clean_share);
                    c.advance(rng.gen_range(0..=200_000));
                }
                c.check_all();
                let nand = c.flash.nand();
                grown += (0..nand.geometry().total_blocks()).filter(|&b| nand.is_grown_bad(BlockId(b))).count();
                let t = SimTime(c.now.0 + rng.gen_range(0..3_000_000));
                c.cut_and_recover(t);
                c.check_all();
            }
            assert!(grown > 0, "seed {seed}, {ev:?} {cons:?}: the run must have made blocks go bad");
        }
    }
}
