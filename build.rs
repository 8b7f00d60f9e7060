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
    match git(&["rev-parse", "--git-dir"]) {
        Some(git_dir) => {
            let git_dir = Path::new(&git_dir);
            println!("cargo:rerun-if-changed={}", git_dir.join("HEAD").display());
            println!(
                "cargo:rerun-if-changed={}",
                git_dir.join("packed-refs").display()
            );
            if let Ok(head) = std::fs::read_to_string(git_dir.join("HEAD"))
                && let Some(branch) = head.trim().strip_prefix("ref: ")
            {
                println!("cargo:rerun-if-changed={}", git_dir.join(branch).display());
            }
        }
        None => println!("cargo:rerun-if-changed=build.rs"),
    }
}
