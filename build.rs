//! Build script: records the commit being built, for the `partner_api_build_info` metric.
//! `PARTNER_API_COMMIT` in the build environment wins (for builds outside a git checkout);
//! otherwise git is asked; without either the commit is `unknown`.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    (output.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

fn main() {
    println!("cargo:rerun-if-env-changed=PARTNER_API_COMMIT");
    let commit = std::env::var("PARTNER_API_COMMIT")
        .ok()
        .filter(|commit| !commit.is_empty())
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=PARTNER_API_COMMIT={commit}");
    // Build again when HEAD moves: HEAD itself, the branch it names, and the packed refs.
    // Only files that exist are named: cargo treats a missing one as changed, and would run
    // this script and rebuild the crate on every build. A branch that has no file of its own
    // yet (its ref is packed) gets one when it moves, which its folder shows.
    match git(&["rev-parse", "--git-dir"]) {
        Some(git_dir) => {
            let git_dir = Path::new(&git_dir);
            let mut watched = vec![git_dir.join("HEAD"), git_dir.join("packed-refs")];
            if let Ok(head) = std::fs::read_to_string(git_dir.join("HEAD"))
                && let Some(branch) = head.trim().strip_prefix("ref: ")
            {
                // The branch's file, or the nearest folder above it under refs/ (a folder is
                // watched by the newest time of anything in it).
                let branch = git_dir.join(branch);
                watched.extend(
                    branch
                        .ancestors()
                        .take_while(|path| *path != git_dir)
                        .find(|path| path.exists())
                        .map(Path::to_path_buf),
                );
            }
            for path in watched.iter().filter(|path| path.exists()) {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
        None => println!("cargo:rerun-if-changed=build.rs"),
    }
}
