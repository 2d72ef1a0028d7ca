#![allow(clippy::unwrap_used)]

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
                Hint { stream: Some(i as u32), expiry: Some(SimTime(release + lifetime)), deadline: None }
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
    let hint = Hint { stream: Some(2), expiry: Some(SimTime(3 * MS)), deadline: None };
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
        let hint = Hint { stream: Some(2), expiry: Some(SimTime(5 * MS)), deadline: None };
        rig.write(4 * MS, 100 + i, i.into(), hint).unwrap();
    }
    rig.write(6 * MS, 200, 1, Hint::default()).unwrap();
    assert!(rig.flash.counters().erases.get(Purpose::Gc) >= 1);
    assert!(matches!(rig.read(6 * MS, 7), Err(FtlError::Expired { .. })));
    assert!(matches!(rig.read(6 * MS, 100), Err(FtlError::Expired { .. })));
    // Rewritten (or trimmed), the page is readable again.
    rig.write(7 * MS, 7, 43, Hint::default()).unwrap();
    assert_eq!(rig.read(8 * MS, 7).unwrap(), Some(43));
    rig.write(8 * MS, 100, 9, Hint { stream: None, expiry: Some(SimTime(9 * MS)), deadline: None }).unwrap();
    rig.ftl.trim(&mut rig.flash.io(SimTime(10 * MS)), Lpn(100)).unwrap();
    assert_eq!(rig.read(10 * MS, 100).unwrap(), None);
    rig.ftl.check_invariants(&rig.flash).unwrap();
}

#[test]
fn a_task_writing_more_than_admitted_overflows_into_the_pool() {
    // Admitted for 1 page / 5 ms kept 30 ms, it writes 6 pages a period kept 60 ms.
    let mut rig = Rig::new(config(Placement::Sip, vec![task("log", 1, 5.0, 30.0, 1)]));
    let quota = rig.ftl.plan().groups[0].quota;
    let greedy = vec![task("log", 6, 5.0, 60.0, 1)];
    let model = run_periodic(&mut rig, &greedy, 0, 600 * MS, true);
    assert!(rig.ftl.overflow_writes() > 0);
    assert!(rig.ftl.held[0] <= quota);
    rig.ftl.check_invariants(&rig.flash).unwrap();
    let now = rig.now;
    for (&lpn, &(tok, exp)) in &model {
        if exp > now {
            assert_eq!(rig.read(now, lpn).unwrap(), Some(tok));
        }
    }
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
            rig.write(0, lpn, lpn.into(), Hint { stream: None, expiry, deadline: None }).unwrap();
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

#[test]
fn recovers_task_data_after_a_power_cut_and_keeps_going() {
    let tasks = three_tasks();
    let cfg = config(Placement::Sharp, tasks.clone());
    let mut rig = Rig::new(cfg.clone());
    let model = run_periodic(&mut rig, &tasks, 0, 500 * MS, true);
    let cut = rig.now;
    rig.flash.power_cut(SimTime(cut));
    rig.ftl = Telomere::recover(cfg, &mut rig.flash.io(SimTime(cut))).unwrap();
    rig.ftl.check_invariants(&rig.flash).unwrap();
    // Acknowledged, unexpired data survives (recovered data no longer expires).
    for (&lpn, &(tok, exp)) in &model {
        if exp > cut {
            assert_eq!(rig.read(cut, lpn).unwrap(), Some(tok), "lpn {lpn}");
        }
    }
    // The task set keeps running (over the same logical pages): the
    // pool's GC frees the groups' quota first, then expired blocks are erased.
    let before = rig.flash.counters().erases.get(Purpose::Gc);
    let t0 = rig.now.div_ceil(MS) * MS;
    run_periodic(&mut rig, &tasks, t0, t0 + 300 * MS, true);
    assert!(rig.flash.counters().erases.get(Purpose::Gc) > before);
    assert_eq!(rig.ftl.overflow_writes(), 0);
    rig.ftl.check_invariants(&rig.flash).unwrap();
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
