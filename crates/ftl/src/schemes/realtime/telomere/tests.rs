#![allow(clippy::unwrap_used)]

use crate::RealTime;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use ftlab_nand::Geometry;

use super::*;

const MS: u64 = 1_000_000;

/// 2 channels x 2 dies, 32 blocks of 16 pages per die (128 blocks).
fn flash() -> Flash {
    let geometry = Geometry {
        channels: 2,
        ways_per_channel: 1,
        dies_per_way: 2,
        planes_per_die: 1,
        blocks_per_plane: 32,
        pages_per_block: 16,
        page_size: 4096,
        oob_size: 128,
    };
    crate::testing::flash(geometry, 7)
}

fn task(name: &str, write_pages: u64, period_ms: f64, lifetime_ms: f64, granularity: u32) -> TaskConfig {
    TaskConfig {
        name: name.into(),
        write_period_ms: period_ms,
        write_pages,
        lifetime_ms,
        granularity,
        read_period_ms: period_ms,
        read_pages: write_pages,
    }
}

fn three_tasks() -> Vec<TaskConfig> {
    vec![task("cam", 4, 10.0, 50.0, 2), task("imu", 2, 20.0, 100.0, 1), task("log", 1, 5.0, 30.0, 1)]
}

fn config(policy: Placement, tasks: Vec<TaskConfig>) -> TelomereConfig {
    TelomereConfig { policy, tasks, ..TelomereConfig::default() }
}

/// A device, Telomere on it, and the time the last command finished.
struct Rig {
    flash: Flash,
    ftl: Telomere,
    now: u64,
}

impl Rig {
    fn new(config: TelomereConfig) -> Self {
        let mut flash = flash();
        let ftl = Telomere::format(config, &mut flash.io(SimTime::ZERO)).unwrap();
        Rig { flash, ftl, now: 0 }
    }
    fn write(&mut self, t: u64, lpn: u32, token: u64, hint: Hint) -> Result<(), FtlError> {
        self.now = self.now.max(t);
        let mut io = self.flash.io(SimTime(self.now));
        let r = self.ftl.write(&mut io, Lpn(lpn), Payload::Token(token), &hint);
        self.now = self.now.max(io.completion().0);
        r
    }
    fn read(&mut self, t: u64, lpn: u32) -> Result<Option<u64>, FtlError> {
        self.now = self.now.max(t);
        let mut io = self.flash.io(SimTime(self.now));
        let r = self.ftl.read(&mut io, Lpn(lpn));
        r.map(|p| {
            p.map(|p| match p {
                Payload::Token(x) => x,
                Payload::Bytes(_) => unreachable!(),
            })
        })
    }
}

/// Runs the tasks' write jobs as the simulator's task source does: task `i` owns
/// `ceil(lifetime / period)` job slots of `w` pages, written cyclically with
/// stream `i` and expiry `release + lifetime`; before each job the task reads
/// back its previous job. Returns what each live page must hold.
fn run_periodic(rig: &mut Rig, tasks: &[TaskConfig], t0: u64, until: u64, hinted: bool) -> HashMap<u32, (u64, u64)> {
    let mut base = 0;
    let mut layout = Vec::new();
    let mut heap = BinaryHeap::new();
    for (i, t) in tasks.iter().enumerate() {
        let period = (t.write_period_ms * 1e6) as u64;
        let lifetime = (t.lifetime_ms * 1e6) as u64;
        let slots = lifetime.div_ceil(period);
        layout.push((period, lifetime, base, slots, t.write_pages as u32));
        base += slots as u32 * t.write_pages as u32;
        heap.push(Reverse((t0, i, 0u64)));
    }
    let mut model = HashMap::new();
    let mut token = 1;
    while let Some(Reverse((release, i, job))) = heap.pop() {
        if release >= until {
            break;
        }
        let (period, lifetime, base, slots, w) = layout[i];
        if job > 0 {
            let prev = base + ((job - 1) % slots) as u32 * w;
            for lpn in prev..prev + w {
                let want = model.get(&lpn).map(|&(tok, _)| tok);
                assert_eq!(rig.read(release, lpn).unwrap(), want, "task {i} job {job} reads lpn {lpn}");
            }
        }
        let first = base + (job % slots) as u32 * w;
        for lpn in first..first + w {
            let hint = if hinted {
                Hint {
                    stream: Some(i as u32),
                    expiry: Some(SimTime(release + lifetime)),
                    deadline: None,
                    more: false,
                    bytes: 0,
                }
            } else {
                Hint::default()
            };
            rig.write(release, lpn, token, hint).unwrap();
            model.insert(lpn, (token, release + lifetime));
            token += 1;
        }
        heap.push(Reverse((release + period, i, job + 1)));
    }
    model
}

#[test]
fn admitted_periodic_tasks_never_copy_and_only_erase_expired_blocks() {
    for policy in [Placement::Sip, Placement::Sharp] {
        let tasks = three_tasks();
        let mut rig = Rig::new(config(policy, tasks.clone()));
        assert!(rig.ftl.plan().group_of_task.iter().all(Option::is_some), "{policy:?}: every task admitted");
        let model = run_periodic(&mut rig, &tasks, 0, 4_000 * MS, true);
        let c = *rig.flash.counters();
        assert_eq!(c.page_copies(), 0, "{policy:?}: GC copied pages");
        assert_eq!(rig.ftl.overflow_writes(), 0, "{policy:?}: a group ran out of its quota");
        // 4 s of writes: (400 * 4 + 200 * 2 + 800) pages = 2,800 pages, 175 blocks;
        // all but the live ones were reclaimed by erases alone.
        assert!(c.erases.get(Purpose::Gc) > 150, "{policy:?}: {} erases", c.erases.get(Purpose::Gc));
        assert_eq!(c.erases.total(), c.erases.get(Purpose::Gc));
        rig.ftl.check_invariants(&rig.flash).unwrap();
        // Nothing live was erased (and erase_expired asserts every erased page had expired).
        let now = rig.now;
        for (&lpn, &(tok, exp)) in &model {
            if exp > now {
                assert_eq!(rig.read(now, lpn).unwrap(), Some(tok), "{policy:?}: live lpn {lpn}");
            }
        }
    }
}

#[test]
fn sharp_reserves_no_more_than_sip() {
    let quota = |p| {
        let rig = Rig::new(config(p, three_tasks()));
        rig.ftl.plan().groups.iter().map(|g| g.quota).sum::<u32>()
    };
    let (sip, sharp) = (quota(Placement::Sip), quota(Placement::Sharp));
    assert!(sharp <= sip, "SharP {sharp} > SiP {sip}");
    // Reservations shrink the logical space by their blocks.
    let plain = Rig::new(TelomereConfig::default()).ftl.logical_pages();
    assert_eq!(Rig::new(config(Placement::Sip, three_tasks())).ftl.logical_pages(), plain - sip * 16);
}

#[test]
fn reads_after_expiry_are_an_error_not_stale_data() {
    let mut rig = Rig::new(config(Placement::Sip, three_tasks()));
    let hint = Hint { stream: Some(2), expiry: Some(SimTime(3 * MS)), deadline: None, more: false, bytes: 0 };
    rig.write(0, 7, 42, hint).unwrap();
    assert_eq!(rig.read(MS, 7).unwrap(), Some(42));
    match rig.read(4 * MS, 7) {
        Err(FtlError::Expired { lpn: 7, expired_at_us }) => assert_eq!(expired_at_us, 3_000.0),
        other => panic!("expected Expired, got {other:?}"),
    }
    let msg = rig.read(4 * MS, 7).unwrap_err().to_string();
    assert!(msg.contains("logical page 7 expired"), "{msg}");
    // Filling the block (16 more pages of the same task) closes it; the next write
    // after the stamp erases it, and the page still reads as expired.
    for i in 0..16 {
        let hint = Hint { stream: Some(2), expiry: Some(SimTime(5 * MS)), deadline: None, more: false, bytes: 0 };
        rig.write(4 * MS, 100 + i, i.into(), hint).unwrap();
    }
    rig.write(6 * MS, 200, 1, Hint::default()).unwrap();
    assert!(rig.flash.counters().erases.get(Purpose::Gc) >= 1);
    assert!(matches!(rig.read(6 * MS, 7), Err(FtlError::Expired { .. })));
    assert!(matches!(rig.read(6 * MS, 100), Err(FtlError::Expired { .. })));
    // Rewritten (or trimmed), the page is readable again.
    rig.write(7 * MS, 7, 43, Hint::default()).unwrap();
    assert_eq!(rig.read(8 * MS, 7).unwrap(), Some(43));
    rig.write(
        8 * MS,
        100,
        9,
        Hint { stream: None, expiry: Some(SimTime(9 * MS)), deadline: None, more: false, bytes: 0 },
    )
    .unwrap();
    rig.ftl.trim(&mut rig.flash.io(SimTime(10 * MS)), Lpn(100)).unwrap();
    assert_eq!(rig.read(10 * MS, 100).unwrap(), None);
    rig.ftl.check_invariants(&rig.flash).unwrap();
}

#[test]
fn a_task_writing_more_than_admitted_overflows_into_the_pool() {
    // Admitted for 1 page / 5 ms kept 30 ms, it writes 6 pages a period: the
    // group fills its quota and the rest goes to the pool.
    let mut rig = Rig::new(config(Placement::Sip, vec![task("log", 1, 5.0, 30.0, 1)]));
    let quota = rig.ftl.plan().groups[0].quota;
    let greedy = vec![task("log", 6, 5.0, 30.0, 1)];
    let model = run_periodic(&mut rig, &greedy, 0, 600 * MS, true);
    assert!(rig.ftl.overflow_writes() > 0);
    assert_eq!(rig.ftl.held[0], quota);
    rig.ftl.check_invariants(&rig.flash).unwrap();
    let now = rig.now;
    for (&lpn, &(tok, exp)) in &model {
        if exp > now {
            assert_eq!(rig.read(now, lpn).unwrap(), Some(tok));
        }
    }
    // Data kept longer than admitted ((l + 1) T = (6 + 1) 5 ms) goes to the pool
    // too, however much room the group has.
    let mut rig = Rig::new(config(Placement::Sip, vec![task("log", 1, 5.0, 30.0, 1)]));
    assert_eq!(rig.ftl.plan().groups[0].lifetime_ns, 35 * MS);
    let g = rig.ftl.geometry;
    for (lpn, keep, owner) in [(1, 35 * MS, 1), (2, 35 * MS + 1, POOL)] {
        let t = rig.now;
        let hint = Hint { stream: Some(0), expiry: Some(SimTime(t + keep)), deadline: None, more: false, bytes: 0 };
        rig.write(t, lpn, 7, hint).unwrap();
        let b = g.block_of(rig.ftl.table.get(lpn as usize).unwrap()).0 as usize;
        assert_eq!(rig.ftl.owner[b], owner, "kept {keep} ns");
    }
    assert_eq!(rig.ftl.overflow_writes(), 1);
}

#[test]
fn refused_tasks_are_an_error_or_go_to_the_pool() {
    let huge = task("huge", 64, 1.0, 10_000.0, 1);
    let mut f = flash();
    let e = Telomere::format(config(Placement::Sharp, vec![huge.clone()]), &mut f.io(SimTime::ZERO)).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("`huge`") && msg.contains("strict_admission"), "{msg}");
    let lenient =
        TelomereConfig { strict_admission: false, ..config(Placement::Sharp, vec![huge, task("ok", 1, 5.0, 30.0, 1)]) };
    let ftl = Telomere::format(lenient, &mut f.io(SimTime::ZERO)).unwrap();
    assert_eq!(ftl.plan().group_of_task, vec![None, Some(0)]);
    let e = Telomere::format(config(Placement::Sip, vec![task("wide", 1, 5.0, 30.0, 8)]), &mut f.io(SimTime::ZERO));
    assert!(e.unwrap_err().to_string().contains("granularity 8 exceeds"));
}

#[test]
fn pool_gc_drops_expired_pages_instead_of_copying_them() {
    // Fill the pool, even pages expiring at 1 ms, then rewrite the odd ones: GC
    // victims hold expired even pages, which are dropped, not copied.
    let copies = |expiring: bool| {
        let mut rig = Rig::new(TelomereConfig { erases_per_write: 0, ..TelomereConfig::default() });
        let n = rig.ftl.logical_pages();
        for lpn in 0..n {
            let expiry = (expiring && lpn % 2 == 0).then_some(SimTime(MS));
            rig.write(0, lpn, lpn.into(), Hint { stream: None, expiry, deadline: None, more: false, bytes: 0 })
                .unwrap();
        }
        for round in 0..3u64 {
            for lpn in (1..n).step_by(2) {
                rig.write(2 * MS, lpn, round * 10_000 + u64::from(lpn), Hint::default()).unwrap();
            }
        }
        rig.ftl.check_invariants(&rig.flash).unwrap();
        if expiring {
            assert!(matches!(rig.read(rig.now, 0), Err(FtlError::Expired { .. })));
        } else {
            assert_eq!(rig.read(rig.now, 0).unwrap(), Some(0));
        }
        rig.flash.counters().page_copies()
    };
    let (with, without) = (copies(true), copies(false));
    assert!(with < without, "copies with expiry {with}, without {without}");
}

/// [`three_tasks`] and "burst", which fills one block (P - 2 = 14 pages) a job;
/// its data lives 25 ms and is rewritten 30 ms later.
fn four_tasks() -> Vec<TaskConfig> {
    let mut tasks = three_tasks();
    tasks.push(task("burst", 14, 10.0, 25.0, 1));
    tasks
}

/// Each block's owner and stamp, and the block of each logical page, before a cut.
struct Before {
    state: Vec<State>,
    owner: Vec<u32>,
    stamp: Vec<u64>,
    block_of: HashMap<u32, usize>,
}

impl Before {
    fn of(ftl: &Telomere, model: &HashMap<u32, (u64, u64)>) -> Self {
        let g = ftl.geometry;
        let block_of =
            model.keys().filter_map(|&l| ftl.table.get(l as usize).map(|p| (l, g.block_of(p).0 as usize))).collect();
        Before { state: ftl.state.clone(), owner: ftl.owner.clone(), stamp: ftl.stamp.clone(), block_of }
    }
}

/// A power cut amid a periodic task run, at `offset` ns after the last write's
/// acknowledgement (so post-acknowledgement summaries and erases are cut or
/// undone), then recovery. Checks what recovery rebuilt and returns the rig, the
/// model, the state before the cut, the cut and the end of recovery.
fn cut_amid_tasks(
    policy: Placement,
    erases_per_write: u32,
    offset: u64,
) -> (Rig, HashMap<u32, (u64, u64)>, Before, u64, u64) {
    // At the cut, burst's job of 270 ms has expired (at 295 ms), in a closed block.
    let tasks = four_tasks();
    let cfg = TelomereConfig { erases_per_write, ..config(policy, tasks.clone()) };
    let mut rig = Rig::new(cfg.clone());
    let model = run_periodic(&mut rig, &tasks, 0, 300 * MS, true);
    let before = Before::of(&rig.ftl, &model);
    let cut = rig.now + offset;
    rig.flash.power_cut(SimTime(cut));
    let recovered = {
        let mut io = rig.flash.io(SimTime(cut));
        rig.ftl = Telomere::recover(cfg, &mut io).unwrap();
        io.last_finish().0
    };
    rig.now = recovered;
    rig.ftl.check_invariants(&rig.flash).unwrap();
    (rig, model, before, cut, recovered)
}

/// Expiry survives a power cut: acknowledged live data reads back; data whose
/// block's stamp passed before the cut reads as expired; every page expires no
/// earlier than it should and at the latest with its block; closed group blocks
/// go back to their groups with their stamps; then the tasks keep running with
/// erases only.
#[test]
fn power_cut_amid_periodic_tasks_keeps_expiry_and_group_blocks() {
    let tasks = four_tasks();
    // With no erase after writes, expired blocks are still on the flash at the cut.
    for (policy, erases_per_write) in [(Placement::Sip, 0), (Placement::Sharp, 0), (Placement::Sip, 1)] {
        for offset in [0, 90_000, 200_000, 450_000, 1_000_000, 1_700_000, 3_000_000] {
            let what = format!("{policy:?}, {erases_per_write} erases a write, cut {offset} ns after the last ack");
            let (mut rig, model, before, cut, recovered) = cut_amid_tasks(policy, erases_per_write, offset);
            let g = rig.ftl.geometry;
            let (mut expired_at_cut, mut read_as_expired) = (0, 0);
            let mut latest = recovered;
            for (&lpn, &(tok, exp)) in &model {
                let got = rig.read(recovered, lpn);
                let e = rig.ftl.expiry[lpn as usize];
                if exp > recovered {
                    assert_eq!(got.clone().unwrap(), Some(tok), "{what}: live lpn {lpn} (expires {exp})");
                }
                // Never earlier than its own expiry, at the latest with its block.
                assert!(e >= exp, "{what}: lpn {lpn} expires at {e}, its data at {exp}");
                if let Some(ppa) = rig.ftl.table.get(lpn as usize) {
                    assert_eq!(e, rig.ftl.stamp[g.block_of(ppa).0 as usize], "{what}: lpn {lpn}");
                }
                if e != NEVER {
                    latest = latest.max(e);
                }
                if exp <= cut {
                    expired_at_cut += 1;
                    match got {
                        Err(FtlError::Expired { .. }) => read_as_expired += 1,
                        Ok(Some(t)) => {
                            assert_eq!(t, tok, "{what}: lpn {lpn}");
                            assert!(e > recovered, "{what}: lpn {lpn} read back after its block's stamp");
                        }
                        // Its block was erased before the cut: nothing is left of it.
                        Ok(None) => assert!(rig.ftl.table.get(lpn as usize).is_none(), "{what}: lpn {lpn}"),
                        other => panic!("{what}: expired lpn {lpn} read {other:?}"),
                    }
                }
            }
            // Under SiP burst's blocks hold only its data: the block of its job of
            // 270 ms has its stamp, 295 ms. (Under SharP it shares blocks with
            // longer-lived data: a page then reads back until its block's stamp.)
            if (policy, erases_per_write) == (Placement::Sip, 0) {
                assert!(read_as_expired >= 14, "{what}: {read_as_expired} of {expired_at_cut} read as expired");
            }
            // Closed group blocks went back to their groups, with their stamps.
            let mut kept = 0;
            for b in 0..g.total_blocks() as usize {
                if before.state[b] != State::Closed || before.owner[b] == POOL || rig.ftl.state[b] == State::Free {
                    continue;
                }
                assert_eq!(rig.ftl.owner[b], before.owner[b], "{what}: block {b}");
                assert_eq!(rig.ftl.stamp[b], before.stamp[b], "{what}: block {b}");
                kept += 1;
            }
            assert!(kept > 4, "{what}: {kept} closed group blocks kept");
            // Blocks open at the cut: still their group's, bounded by its lifetime.
            for (&lpn, &b) in &before.block_of {
                if before.state[b] == State::Open && before.owner[b] != POOL && rig.ftl.owner[b] != POOL {
                    let k = before.owner[b] as usize - 1;
                    assert_eq!(rig.ftl.expiry[lpn as usize], cut + rig.ftl.plan.groups[k].lifetime_ns, "{what}");
                }
            }
            // Once every stamp has passed, nothing written before the cut is
            // readable, except a page whose block lost its header to the cut.
            let readable = model.keys().filter(|&&l| rig.read(latest, l).is_ok_and(|v| v.is_some())).count();
            assert!(readable <= 2, "{what}: {readable} pages readable at {latest}");
            rig.ftl.check_invariants(&rig.flash).unwrap();
            // The tasks keep running in their groups: no copy, no overflow.
            let erases = rig.flash.counters().erases.get(Purpose::Gc);
            let t0 = rig.now.div_ceil(MS) * MS;
            let again = run_periodic(&mut rig, &tasks, t0, t0 + 300 * MS, true);
            assert!(rig.flash.counters().erases.get(Purpose::Gc) > erases, "{what}");
            assert_eq!(rig.flash.counters().page_copies(), 0, "{what}");
            assert_eq!(rig.ftl.overflow_writes(), 0, "{what}");
            rig.ftl.check_invariants(&rig.flash).unwrap();
            let now = rig.now;
            for (&lpn, &(tok, exp)) in &again {
                if exp > now {
                    assert_eq!(rig.read(now, lpn).unwrap(), Some(tok), "{what}: lpn {lpn} after the restart");
                }
            }
        }
    }
}

/// A closed group block's summary on the medium: the header (page 1) and the
/// trailer (the last page, holding the block's stamp) name its group.
#[test]
fn a_group_block_carries_its_header_and_trailer() {
    let (mut rig, _, before, _, _) = cut_amid_tasks(Placement::Sip, 1, 0);
    let g = rig.ftl.geometry;
    let nand = rig.flash.nand();
    let b = (0..g.total_blocks() as usize)
        .find(|&b| before.state[b] == State::Closed && before.owner[b] != POOL && rig.ftl.state[b] != State::Free)
        .unwrap();
    let block = BlockId(b as u32);
    let header = nand.peek_oob(g.ppa(block, 1)).unwrap();
    let trailer = nand.peek_oob(g.ppa(block, g.pages_per_block - 1)).unwrap();
    assert_eq!((header.kind, trailer.kind), (PageKind::Meta, PageKind::Meta));
    assert_eq!((header.lpn, trailer.lpn), ((1 << 30) | before.owner[b], (1 << 31) | before.owner[b]));
    let (data, _) =
        rig.flash.io(SimTime(rig.now)).read(g.ppa(block, g.pages_per_block - 1), Purpose::Recovery).unwrap();
    assert_eq!(data, Payload::Token(before.stamp[b]));
    // Two pages of every group block are the summary's: admission sizes the
    // groups with P - 2 data pages, and the summaries are counted as checkpoints.
    assert!(rig.flash.counters().programs.get(Purpose::Checkpoint) > 0);
}

#[test]
fn registry_names_set_the_policy_and_take_a_task_list() {
    let params: toml::Table = toml::from_str(
        "tasks = [{ name = \"cam\", write_period_ms = 10, write_pages = 4, lifetime_ms = 50, granularity = 2 }]",
    )
    .unwrap();
    for (kind, name) in [("telomere-sip", "telomere-sip"), ("telomere-sharp", "telomere-sharp")] {
        let b = crate::registry::build(kind, &params).unwrap();
        let mut f = flash();
        let ftl = b.format(&mut f.io(SimTime::ZERO)).unwrap();
        assert_eq!(ftl.name(), name);
    }
    let bad: toml::Table = toml::from_str("tasks = [{ name = \"x\", write_pages = 1, lifetime_ms = 5 }]").unwrap();
    let e = crate::registry::build("telomere-sip", &bad).unwrap_err().to_string();
    assert!(e.contains("write_period_ms"), "{e}");
    let typo: toml::Table = toml::from_str("tasks = [{ name = \"x\", lifetime = 5 }]").unwrap();
    assert!(crate::registry::build("telomere-sip", &typo).is_err());
}

#[test]
fn admission_verdicts_and_the_task_space() {
    // "hog" writes 64 pages every 10 ms kept 1 s: far more than 128 blocks of 16 pages.
    let mut tasks = three_tasks();
    tasks.push(task("hog", 64, 10.0, 1000.0, 4));
    let cfg = TelomereConfig { strict_admission: false, ..config(Placement::Sharp, tasks) };
    let mut rig = Rig::new(cfg);
    let v = rig.ftl.admission().unwrap();
    assert_eq!(
        v.iter().map(|v| (v.name.as_str(), v.admitted)).collect::<Vec<_>>(),
        [("cam", true), ("imu", true), ("log", true), ("hog", false)]
    );
    let reason = v[3].reason.as_deref().unwrap();
    assert!(reason.starts_with("storage: needs") && reason.contains("sharp"), "{reason}");
    // Eq. 24's left side over the admitted writers: 4 (5 + 1) + 2 (5 + 1) + 1 (6 + 1).
    assert_eq!(rig.ftl.stream_pages(), 24 + 12 + 7);
    let first = rig.ftl.logical_pages();
    // The task space takes only admitted streams' writes.
    let e = rig.write(0, first, 1, Hint::default()).unwrap_err();
    assert!(matches!(e, FtlError::Reserved { .. }), "{e:?}");
    assert!(e.to_string().contains("reserved for admitted tasks"), "{e}");
    let refused = Hint { stream: Some(3), ..Hint::default() };
    assert!(matches!(rig.write(0, first, 1, refused), Err(FtlError::Reserved { .. })));
    let cam = Hint { stream: Some(0), ..Hint::default() };
    rig.write(0, first + 42, 9, cam).unwrap();
    assert_eq!(rig.read(MS, first + 42).unwrap(), Some(9));
    assert!(matches!(rig.read(MS, first + 41), Ok(None)));
    assert!(matches!(rig.read(MS, first + 43), Err(FtlError::LpnOutOfRange { .. })));
    // Without tasks there is no admission and no task space.
    let plain = Rig::new(TelomereConfig::default());
    assert_eq!((plain.ftl.admission(), plain.ftl.stream_pages()), (None, 0));
}

/// `pool_dies`: the pool writes on its dies while they have free blocks, spills
/// to the others when they have none, and never holds more open blocks than it
/// has dies; its slack shrinks by the other dies' open blocks.
#[test]
fn the_pool_keeps_to_its_dies_and_spills_with_one_open_block() {
    let one = TelomereConfig { pool_dies: 1, ..TelomereConfig::default() };
    let mut rig = Rig::new(one.clone());
    let g = rig.ftl.geometry;
    let plain = Rig::new(TelomereConfig::default()).ftl.logical_pages();
    assert_eq!(rig.ftl.logical_pages(), plain + (g.dies() - 1) * g.pages_per_block);
    let n = rig.ftl.logical_pages();
    let per_die = g.total_blocks() / g.dies() * g.pages_per_block;
    let mut dies = Vec::new();
    for lpn in 0..n {
        rig.write(0, lpn, lpn.into(), Hint::default()).unwrap();
        dies.push(g.die_of(rig.ftl.table.get(lpn as usize).unwrap()).0);
        if lpn % 97 == 0 {
            rig.ftl.check_invariants(&rig.flash).unwrap();
        }
    }
    // Die 0 first, whole; then the others.
    assert!(dies[..per_die as usize].iter().all(|&d| d == 0), "{:?}", &dies[..per_die as usize]);
    assert!(dies[per_die as usize..].iter().all(|&d| d != 0));
    // Overwrites with GC copies: still at most one open block.
    // Every 17th page, 17 times over: the blocks empty slowly, so GC copies.
    let order: Vec<u32> = (0..17).flat_map(|i| (i..n).step_by(17)).collect();
    for round in 0..3u64 {
        for &lpn in &order {
            rig.write(0, lpn, round * 100_000 + u64::from(lpn), Hint::default()).unwrap();
        }
        rig.ftl.check_invariants(&rig.flash).unwrap();
    }
    assert!(rig.flash.counters().page_copies() > 0);
    for lpn in 0..n {
        assert_eq!(rig.read(rig.now, lpn).unwrap(), Some(200_000 + u64::from(lpn)));
    }
    let e = Telomere::format(TelomereConfig { pool_dies: 5, ..one }, &mut flash().io(SimTime::ZERO)).unwrap_err();
    assert!(e.to_string().contains("pool_dies is 5 but the device has 4 dies"), "{e}");
}

/// Table 3 of 000 on the Cosmos board (16 dies x 21 blocks of 256 pages): with
/// the pool on one die the tasks get 332 blocks, SharP admits all six and SiP
/// refuses tau5 (368 blocks), as in the paper; with the pool on every die (its
/// 19 blocks of slack) SharP refuses tau5 too.
#[test]
fn table3_with_the_pool_on_one_die_is_admitted_as_in_the_paper() {
    let p = ftlab_nand::presets::preset("cosmos-openssd").unwrap();
    let geometry = Geometry { blocks_per_plane: 21, ..p.geometry };
    let t = |name: &str, r: u64, w: u64, wp: f64, life_ms: f64| TaskConfig {
        name: name.into(),
        read_pages: r,
        read_period_ms: if r > 0 { 20.0 } else { 0.0 },
        write_pages: w,
        write_period_ms: wp,
        lifetime_ms: life_ms,
        granularity: 16,
    };
    let tasks = vec![
        t("tau0", 16, 16, 80.0, 20_000.0),
        t("tau1", 8, 16, 40.0, 1_320.0),
        t("tau2", 16, 16, 40.0, 13_200.0),
        t("tau3", 0, 16, 40.0, 39_600.0),
        t("tau4", 0, 11, 40.0, 79_200.0),
        t("tau5", 0, 5, 40.0, 79_200.0),
    ];
    let admitted = |policy, pool_dies| {
        let cfg = TelomereConfig { pool_dies, strict_admission: false, ..config(policy, tasks.clone()) };
        let config = ftlab_nand::NandConfig {
            geometry,
            timing: p.timing,
            bad_block_rate: 0.0,
            wear: ftlab_nand::WearConfig::default(),
            store: ftlab_nand::StoreKind::Token,
            seed: 1,
            faults: Default::default(),
            commands: Default::default(),
        };
        let mut flash = Flash::new(ftlab_nand::Nand::new(&config).unwrap());
        let ftl = Telomere::format(cfg, &mut flash.io(SimTime::ZERO)).unwrap();
        ftl.admission().unwrap().iter().map(|v| v.admitted).collect::<Vec<_>>()
    };
    let all = vec![true; 6];
    let but_tau5 = vec![true, true, true, true, true, false];
    assert_eq!(admitted(Placement::Sharp, 1), all);
    assert_eq!(admitted(Placement::Sip, 1), but_tau5);
    assert_eq!(admitted(Placement::Sharp, 0), but_tau5);
}
