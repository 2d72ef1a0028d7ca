//! Generators that label their data's lifetimes (`lsm`, `flashcache`): the
//! labels reach the FTL as each write's stream, the placement handle of an
//! FDP device, and placing by lifetime lowers the write amplification.
#![allow(clippy::unwrap_used)]

use ftlab_sim::{run, Report, RunConfig};

/// An FDP device of 64 blocks a plane (13,888 logical pages, 8 handles,
/// initially isolated) and a RocksDB-like tree of at most 12,656 pages: files
/// of 8 pages, L1 to L4 of 6, 36, 216 and 1,296 files, labels 0 (WAL) to 5 (L4).
const DEVICE: &str = "seed = 3\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 64\n[ftl]\nkind = \"fdp\"\n\
                      [metrics]\nslowdown = false\n";
const LSM: &str =
    "kind = \"lsm\"\noperations = 40000\nsst_pages = 8\nwal_pages = 64\nsize_ratio = 6\nbase_files = 6\nlevels = 4\n";

fn report(text: &str) -> Report {
    let r = run(&RunConfig::from_toml(text, "test").unwrap(), &mut |_| {}).unwrap();
    assert_eq!(r.integrity, "ok");
    r
}

fn flow(stream: &str) -> Report {
    report(&format!("{DEVICE}[[flow]]\nname = \"lsm\"\nqueue_depth = 4\n{stream}[flow.workload.generator]\n{LSM}"))
}

/// Measured: WAF 1.19 with a handle a label against 1.81 with every write on
/// the default handle (40,000 puts, 959,864 host pages).
#[test]
fn lsm_labels_as_fdp_handles_lower_the_waf() {
    let plain = report(&format!("{DEVICE}[host]\nqueue_depth = 4\n[workload.generator]\n{LSM}"));
    let labelled = flow("");
    let shared = flow("stream = 0\n");
    let host = |r: &Report| r.ftl_curves["fdp_host_pages_by_handle"].clone();
    // Every label reaches the device as a handle, in a plain run as in a flow;
    // a flow's stream replaces them.
    let by_label = host(&plain);
    assert!(by_label[..6].iter().all(|&p| p > 0.0) && by_label[6..].iter().all(|&p| p == 0.0), "{by_label:?}");
    assert_eq!(host(&labelled), by_label);
    let all: f64 = by_label.iter().sum();
    assert_eq!(host(&shared)[0], all, "stream = 0: every write on the default handle");
    let (apart, together) = (labelled.waf.unwrap(), shared.waf.unwrap());
    eprintln!("WAF {apart:.3} with a handle a lifetime, {together:.3} on one handle; {all} host pages");
    assert!(apart < 0.75 * together, "WAF {apart} with a handle a label, {together} on one handle");
    assert!(plain.waf.unwrap() < 0.75 * together, "{:?}", plain.waf);
}
