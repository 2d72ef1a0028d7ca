//! Fuzzing configuration: random `[device]`, `[ftl]`, `[workload]`, `[host]`,
//! `[precondition]` and `[metrics]` tables with hostile values (zeroes,
//! negatives, huge numbers, NaN, infinities, wrong types, unknown names). Parsing
//! and validation must never panic; a configuration that validates on a small
//! device must run (a few hundred requests) to a report or a clear error, never
//! a panic.
//!
//! For a long run outside CI: `FTLAB_FUZZ_CASES=20000 cargo test --release -p
//! ftlab-sim --test fuzz_config`; failures found are kept by proptest in
//! `fuzz_config.proptest-regressions` and replayed by every later run.
#![allow(clippy::unwrap_used)]

use ftlab_sim::RunConfig;
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("FTLAB_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(48)
}

/// Values for integer keys.
const INTS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "4",
    "7",
    "16",
    "64",
    "-1",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "1.5",
    "\"8\"",
];
/// Values for fractional keys.
const FLOATS: &[&str] =
    &["0.0", "0.1", "0.5", "0.99", "1.0", "1.5", "-0.2", "1e308", "nan", "inf", "-inf", "3", "true"];
/// Values for name keys.
const NAMES: &[&str] = &["\"\"", "\"nope\"", "7", "\"small-slc\"", "\"pagemap\""];

/// `(key path, value pool)`: the keys a user sets most.
fn keys() -> Vec<(&'static str, Vec<&'static str>)> {
    let ints = INTS.to_vec();
    let floats = FLOATS.to_vec();
    let mut ftl_kinds: Vec<&str> = vec![
        "\"pagemap\"",
        "\"pure-page-level\"",
        "\"dftl\"",
        "\"nftl\"",
        "\"gftl\"",
        "\"rftl\"",
        "\"fsr\"",
        "\"lazy-rtgc\"",
        "\"lazy-rtgc-ondemand\"",
        "\"waogc\"",
        "\"multilog\"",
        "\"telomere-sip\"",
    ];
    ftl_kinds.extend(NAMES);
    vec![
        ("seed", ints.clone()),
        (
            "device.chip",
            vec!["\"small-slc\"", "\"spansion-slc-512mb\"", "\"samsung-slc-16mb-small-block\"", "\"x\"", "3"],
        ),
        ("device.channels", ints.clone()),
        ("device.ways", ints.clone()),
        ("device.dies", ints.clone()),
        ("device.planes", ints.clone()),
        ("device.blocks_per_plane", ints.clone()),
        ("device.pages_per_block", ints.clone()),
        ("device.page_size", vec!["512", "2048", "4096", "1000", "0", "1048576"]),
        ("device.oob_size", ints.clone()),
        ("device.capacity_gib", floats.clone()),
        ("device.over_provisioning", floats.clone()),
        ("device.bad_block_rate", floats.clone()),
        ("device.store", vec!["\"token\"", "\"bytes\"", "\"tape\""]),
        ("device.copyback", vec!["true", "false", "1"]),
        ("device.write_buffer_pages", ints.clone()),
        ("ftl.kind", ftl_kinds),
        ("ftl.over_provisioning", floats.clone()),
        ("ftl.gc_free_blocks", ints.clone()),
        ("ftl.no_such_key", ints.clone()),
        ("workload.preset", vec!["\"uniform-random-write\"", "\"zipf-mixed\"", "\"sequential-write\"", "\"x\""]),
        ("workload.max_requests", ints.clone()),
        ("workload.duration_ms", floats.clone()),
        ("workload.stop_at_retired_fraction", floats.clone()),
        ("workload.trace", vec!["\"/no/such/trace\"", "\"\""]),
        ("host.queue_depth", ints.clone()),
        ("host.mode", vec!["\"open\"", "\"closed\"", "\"half\""]),
        ("host.time_scale", floats.clone()),
        ("host.idle_threshold_us", floats.clone()),
        ("host.dispatch", vec!["\"request\"", "\"per-die-edf\"", "\"per-die-priority\"", "\"x\""]),
        ("host.multi_plane_reads", vec!["true", "false", "1"]),
        ("precondition.fill", vec!["true", "false"]),
        ("precondition.random_overwrites", floats.clone()),
        ("metrics.interval_ms", floats.clone()),
        ("metrics.bound_us", floats),
    ]
}

/// A TOML document setting `chosen` keys (index into [`keys`], value index).
fn document(chosen: &[(usize, usize)]) -> String {
    let keys = keys();
    let mut tables: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    let mut seen = std::collections::BTreeSet::new();
    for &(k, v) in chosen {
        let (path, pool) = &keys[k % keys.len()];
        if !seen.insert(*path) {
            continue;
        }
        let value = pool[v % pool.len()];
        let (table, key) = path.rsplit_once('.').unwrap_or(("", path));
        tables.entry(table).or_default().push(format!("{key} = {value}"));
    }
    let mut doc = String::new();
    for (table, lines) in tables {
        if !table.is_empty() {
            doc.push_str(&format!("[{table}]\n"));
        }
        for l in lines {
            doc.push_str(&l);
            doc.push('\n');
        }
    }
    doc
}

/// Physical pages of the device `config` describes, if it can say.
fn physical_pages(config: &RunConfig) -> Option<u64> {
    let nand = config.device.nand_config(1).ok()?;
    Some(u64::from(nand.geometry.total_pages()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn hostile_configs_error_clearly_or_run(chosen in proptest::collection::vec((0..64usize, 0..64usize), 0..14)) {
        // Keep runs short and devices small enough to run here.
        let doc = format!("{}\n", document(&chosen));
        let mut config = match RunConfig::from_toml(&doc, "fuzzed.toml") {
            Ok(c) => c,
            Err(e) => {
                prop_assert!(!e.to_string().is_empty());
                return Ok(());
            }
        };
        if let Err(e) = ftlab_sim::validate(&config) {
            let msg = e.to_string();
            prop_assert!(!msg.is_empty(), "an empty error for\n{doc}");
            return Ok(());
        }
        if physical_pages(&config).is_none_or(|p| p > 1 << 18) {
            return Ok(());
        }
        config.workload.max_requests = Some(config.workload.max_requests.unwrap_or(300).clamp(1, 300));
        config.precondition.random_overwrites = config.precondition.random_overwrites.min(0.2);
        match ftlab_sim::run(&config, &mut |_| {}) {
            Ok(report) => prop_assert!(report.integrity == "ok", "integrity {} for\n{doc}", report.integrity),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}

/// Every FTL given the largest `gc_free_blocks` (a value the fuzzer found to
/// overflow Telomere's pool arithmetic) errors clearly or runs; none panics.
#[test]
fn the_largest_gc_reserve_is_an_error_or_a_run_for_every_ftl() {
    for scheme in ftlab_ftl::registry::schemes() {
        let doc = format!(
            "[device]\nchip = \"small-slc\"\n[ftl]\nkind = \"{}\"\ngc_free_blocks = 4294967295\n\
             [workload]\nmax_requests = 50\n",
            scheme.name
        );
        let outcome = std::panic::catch_unwind(|| {
            let config = RunConfig::from_toml(&doc, "fuzzed.toml").map_err(|e| e.to_string())?;
            ftlab_sim::run(&config, &mut |_| {}).map(|r| r.integrity).map_err(|e| e.to_string())
        });
        match outcome {
            Ok(Ok(integrity)) => assert_eq!(integrity, "ok", "{}", scheme.name),
            Ok(Err(e)) => assert!(!e.is_empty(), "{}: an empty error", scheme.name),
            Err(_) => panic!("{} panicked with gc_free_blocks = 4294967295", scheme.name),
        }
    }
}
