//! Host-side placement policies (`[workload] placement`): each sets the
//! stream of the writes an FDP device picks its handle by, and each can be
//! seen at work there: per-handle host pages, and the WAF against no
//! placement.
#![allow(clippy::unwrap_used)]

use ftlab_sim::{run, Report, RunConfig};

const DEVICE: &str = "seed = 1\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 64\n[ftl]\nkind = \"fdp\"\n\
                      over_provisioning = 0.2\nisolation = \"persistently\"\n[precondition]\nfill = true\n[host]\nqueue_depth = 4\n";

fn report(text: &str) -> Report {
    let r = run(&RunConfig::from_toml(text, "test").unwrap(), &mut |_| {}).unwrap();
    assert_eq!(r.integrity, "ok");
    r
}

fn hot_cold(placement: &str) -> Report {
    report(&format!(
        "{DEVICE}[workload]\n{placement}\n[workload.generator]\nkind = \"hotcold\"\naccess_fraction = 0.9\n\
         space_fraction = 0.1\nrequests = 60000\n"
    ))
}

fn handles(r: &Report) -> Vec<f64> {
    r.ftl_curves["fdp_host_pages_by_handle"].clone()
}

/// 90% of the writes to a tenth of the space, on a filled device with its
/// handles persistently isolated. Measured: WAF 1.928 with no placement, 1.796
/// by inferred lifetime (52,285 of the 60,000 writes taken for short-lived),
/// 1.602 by the oracle.
#[test]
fn lifetimes_inferred_or_known_keep_hot_and_cold_apart() {
    let none = hot_cold("placement = { policy = \"none\" }");
    let lifetime = hot_cold("placement = { policy = \"lifetime\", streams = 2 }");
    let oracle = hot_cold("placement = { policy = \"oracle\", streams = 2 }");
    let (n, l, o) = (none.waf.unwrap(), lifetime.waf.unwrap(), oracle.waf.unwrap());
    assert_eq!(handles(&none)[1], 0.0, "no placement: one handle");
    // The hot tenth's rewrites (about 52,000) are the short-lived stream, 1.
    let short = handles(&lifetime)[1];
    assert!((50_000.0..55_000.0).contains(&short), "{:?}", handles(&lifetime));
    assert!(l < 0.97 * n, "lifetime {l:.3} against none {n:.3}");
    assert!(o < 0.9 * n && o < l, "oracle {o:.3} against none {n:.3}, lifetime {l:.3}");
}

#[test]
fn placement_by_volume_gives_each_volume_of_a_trace_its_handle() {
    let dir = std::env::temp_dir().join(format!("ftlab-placement-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("volumes.trace");
    // MQSim's format, `time_ns dev lba_sectors size_sectors op`: four volumes,
    // 8 KiB writes, volume v writing 100 x (v + 1) requests.
    let mut text = String::new();
    let mut t = 0;
    for v in 0..4u64 {
        for i in 0..100 * (v + 1) {
            t += 1000;
            text += &format!("{t} {v} {} 16 0\n", (v * 1000 + i) * 16);
        }
    }
    std::fs::write(&trace, text).unwrap();
    let r = report(&format!(
        "{DEVICE}[workload]\ntrace = \"{}\"\ntrace_format = \"mqsim\"\nplacement = {{ policy = \"volume\", streams = 3 }}\n",
        trace.display()
    ));
    // 4 KiB pages: two a request; volume 3 folds onto stream 0.
    assert_eq!(&handles(&r)[..4], &[1000.0, 400.0, 600.0, 0.0]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_placement_settings_are_config_errors_naming_the_key() {
    for (placement, key) in [
        ("{ policy = \"lifetime\", streams = 0 }", "workload.placement.streams"),
        ("{ policy = \"oracle\", streams = 65 }", "workload.placement.streams"),
        ("{ policy = \"volume\" }", "workload.placement.policy"),
    ] {
        let text = format!("{DEVICE}[workload]\npreset = \"uniform-write\"\nplacement = {placement}\n");
        let e = RunConfig::from_toml(&text, "test").and_then(|c| run(&c, &mut |_| {}).map(|_| ())).unwrap_err();
        assert!(format!("{e:?}").contains(key), "{e:?} should name {key}");
    }
}
