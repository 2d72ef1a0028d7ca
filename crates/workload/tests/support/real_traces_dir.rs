//! Where the tests behind the `real-traces` feature find the real traces: the
//! directory `FTLAB_TRACES` names (relative to the workspace root), by default
//! `../shared/traces` beside the workspace. Included by path by the test files of
//! every crate with that feature.

use std::path::{Path, PathBuf};

/// The real traces' directory; panics with the fix if it is not there.
pub fn real_traces_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = root.join(std::env::var_os("FTLAB_TRACES").unwrap_or_else(|| "../shared/traces".into()));
    assert!(
        dir.is_dir(),
        "the real traces are not at {}: set FTLAB_TRACES to their directory, or run the tests \
         without the real-traces feature (`cargo test --workspace`)",
        dir.display()
    );
    dir
}
