//! The commit errand is built from, for `errand --version`: git's, where the
//! source is a checkout (`ERRAND_GIT_COMMIT` in the environment wins, for
//! builds from a tarball), else `unknown`. And a build again whenever a
//! migration is added.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=ERRAND_GIT_COMMIT");
    // The migrations are embedded (`refinery::embed_migrations!`), which
    // tracks the files it read but not the directory: without this, a new
    // migration went unseen until some other source changed.
    println!("cargo:rerun-if-changed=migrations");
    let git = |args: &[&str]| {
        let output = Command::new("git").args(args).output().ok().filter(|o| o.status.success())?;
        String::from_utf8(output.stdout).ok().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
    };
    // Built again when HEAD moves: a new commit, a checkout, a fetch that packs refs.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        for file in ["HEAD", "packed-refs"] {
            println!("cargo:rerun-if-changed={dir}/{file}");
        }
        if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={dir}/{head}");
        }
    }
    let commit = std::env::var("ERRAND_GIT_COMMIT")
        .ok()
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=ERRAND_GIT_COMMIT={commit}");
}
