//! 000 Table 3 (Figures 13-14) as `experiments/telomere/table3.toml` runs it: six
//! write tasks and three read tasks on a Cosmos-like device of 16 chips, 160 s.
//! Whatever Telomere admits holds its throughput with no deadline miss, no
//! valid-page copy and no page command over the service bound, dispatched by
//! request or earliest deadline first per chip; the page-map FTL, which admits
//! everything, misses deadlines once the reads arrive.
#![allow(clippy::unwrap_used)]

use ftlab_sim::{run, Report, RunConfig};

fn table3(kind: &str, dispatch: &str) -> Report {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments/telomere/table3.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let pool = if kind.starts_with("telomere") { "pool_dies = 1" } else { "" };
    // Dispatch by request hands a whole request to the FTL: one at a time.
    let depth = if dispatch == "request" { "\nqueue_depth = 1" } else { "" };
    let text = text
        .replace("kind = \"telomere-sharp\"\npool_dies = 1", &format!("kind = \"{kind}\"\n{pool}"))
        .replace("dispatch = \"per-die-edf\"", &format!("dispatch = \"{dispatch}\"{depth}"));
    let r = run(&RunConfig::from_toml(&text, path).unwrap(), &mut |_| {}).unwrap();
    assert_eq!(r.integrity, "ok", "{kind} {dispatch}");
    r
}

#[test]
fn admitted_tasks_hold_their_throughput_with_no_miss_and_no_copy() {
    for dispatch in ["request", "per-die-edf"] {
        for (kind, refused) in [("telomere-sip", vec!["tau5"]), ("telomere-sharp", vec![])] {
            let r = table3(kind, dispatch);
            let what = format!("{kind} {dispatch}");
            let no: Vec<&str> = r.tasks.iter().filter(|t| !t.admitted).map(|t| t.name.as_str()).collect();
            assert_eq!(no, refused, "{what}");
            assert_eq!((r.deadline_misses, r.gc_page_copies, r.bound_violations), (0, 0, Some(0)), "{what}");
            assert!(r.bound_us.is_some() && r.erases > 0, "{what}: expired blocks are erased");
            assert_eq!(r.expired_reads, 0, "{what}");
            // Every admitted task's jobs ran: 160 s of writes, 63 s of reads.
            for t in r.tasks.iter().filter(|t| t.admitted) {
                let reads = if ["tau0", "tau1", "tau2"].contains(&t.name.as_str()) { 3_150 } else { 0 };
                let period_ms = if t.name == "tau0" { 80 } else { 40 };
                assert_eq!(t.jobs, 160_000 / period_ms + reads, "{what}: {t:?}");
            }
            // After the reads arrive: 2,000 read pages a second, every second.
            let s = &r.throughput;
            let after: Vec<f64> = s.read_pages.iter().skip(100).take(55).map(|&p| p as f64 / s.interval_s).collect();
            assert!(after.iter().all(|&p| (p - 2_000.0).abs() < 1.0), "{what}: {after:?}");
            if dispatch == "per-die-edf" {
                // A ready read never waited for work already on its chip.
                assert_eq!(r.max_read_block_us, Some(0.0), "{what}");
            }
        }
    }
}

#[test]
fn pagemap_admits_everything_and_misses_deadlines_once_reads_arrive() {
    let r = table3("pagemap", "per-die-edf");
    assert_eq!(r.tasks_refused, 0);
    assert!(r.gc_page_copies > 0);
    assert!(r.deadline_misses > 0, "{:?}", r.tasks);
}
