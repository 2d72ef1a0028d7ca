//! `experiments/telomere/ssd-1tb.toml`: sensor streams on the 1 TB SSD of 000
//! Section 6.1.1 (64 chips), dispatched earliest deadline first per chip.
//! Telomere SharP admits six streams and refuses the one that Eq. 20 would
//! admit but its single chip could not serve; the six run with no deadline
//! miss, no valid-page copy and no read held behind work it did not choose.
#![allow(clippy::unwrap_used)]

use ftlab_sim::{run, RunConfig};

#[test]
fn six_streams_hold_on_64_chips_and_the_one_chip_stream_is_refused() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments/telomere/ssd-1tb.toml");
    let r = run(&RunConfig::from_file(std::path::Path::new(path)).unwrap(), &mut |_| {}).unwrap();
    assert_eq!(r.integrity, "ok");
    let refused: Vec<(&str, &str)> =
        r.tasks.iter().filter(|t| !t.admitted).map(|t| (t.name.as_str(), t.refused_by.as_deref().unwrap())).collect();
    assert_eq!(refused.len(), 1, "{:?}", r.tasks);
    assert_eq!(refused[0].0, "debug-dump");
    assert!(refused[0].1.starts_with("throughput: die"), "{}", refused[0].1);
    assert_eq!((r.deadline_misses, r.gc_page_copies, r.bound_violations), (0, 0, Some(0)), "{:?}", r.tasks);
    assert_eq!(r.max_read_block_us, Some(0.0));
    let jobs: Vec<u64> = r.tasks.iter().map(|t| t.jobs).collect();
    // 20 s of writes; reads from 10 s.
    assert_eq!(jobs, [1_000 + 250, 1_000, 400 + 100, 800, 1_000 + 100, 500, 0]);
}
