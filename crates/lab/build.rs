//! Records the git revision ftlab is built from (`FTLAB_GIT_REVISION`, empty
//! outside a git checkout), for the provenance of every JSON report.

use std::path::Path;
use std::process::Command;

fn main() {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git").args(args).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    let revision = git(&["rev-parse", "HEAD"]).unwrap_or_default();
    println!("cargo:rustc-env=FTLAB_GIT_REVISION={revision}");
    // Rebuilt when HEAD moves: a new commit on the branch, or another branch.
    // (Only paths that exist: cargo reruns a script watching a missing one
    // on every build.)
    let watch = |path: std::path::PathBuf| {
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    };
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        watch(Path::new(&dir).join("HEAD"));
    }
    if let Some(common) = git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]) {
        let common = Path::new(&common);
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watch(common.join(branch));
        }
        watch(common.join("packed-refs"));
    }
    println!("cargo:rerun-if-changed=build.rs");
}
