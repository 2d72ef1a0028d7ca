//! The minimum Rust version the README and `rust-version` state holds for
//! every crate the build uses: no locked dependency asks for a newer Rust.
//! (Clippy's `incompatible_msrv` lint, on in CI with `-D warnings`, checks
//! ftlab's own use of the standard library against the same version.)
#![allow(clippy::unwrap_used)]

use std::process::Command;

/// `1.88` and `1.88.0` alike, as three numbers.
fn version(v: &str) -> [u32; 3] {
    let mut n = [0; 3];
    for (slot, part) in n.iter_mut().zip(v.split('.')) {
        *slot = part.parse().unwrap();
    }
    n
}

#[test]
fn no_dependency_needs_a_newer_rust_than_ftlab_states() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ours = env!("CARGO_PKG_RUST_VERSION");
    assert!(!ours.is_empty(), "the workspace states a rust-version");
    let too_new: Vec<String> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| {
            let needs = p["rust_version"].as_str()?;
            (version(needs) > version(ours)).then(|| format!("{} {} needs Rust {needs}", p["name"], p["version"]))
        })
        .collect();
    assert!(
        too_new.is_empty(),
        "ftlab states Rust {ours}, but: {too_new:?}; raise rust-version (and the README) or pin older versions"
    );
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let short: Vec<&str> = ours.split('.').take(2).collect();
    assert!(readme.contains(&format!("Rust {} or later", short.join("."))), "the README states Rust {ours}");
}
