//! `cargo xtask package`: the published crates stay publishable.
//!
//! `cargo package` over the six library crates in dependency order (cargo
//! packages a workspace's crates together, so a crate that needs an
//! unpublished sibling resolves it from the packages just made), which
//! also builds each one from its `.crate` alone: a shader that a crate
//! `include_str!`s from outside its folder, a dependency without a
//! version, or a path only the workspace has fails here rather than at
//! `cargo publish`. Then each package's file list is checked for what the
//! registry's users need beside the code: both licence texts and the
//! README.
//!
//! Building from the packages is a build of its own: a packaged crate is
//! not a workspace member, so the workspace's profiles do not reach it and
//! every dependency is built again, with full debug info by default. That
//! build goes into a folder of its own (`target/package-verify/`), without
//! debug info, and the folder is removed when the check ends: on a CI
//! machine's disk it would otherwise sit beside the test binaries.

use crate::{cargo_bin, exit_code, package_name, workspace_root, Result, PUBLISHED_CRATES};
use std::process::{Command, ExitCode};

/// Files every published package carries.
const REQUIRED_FILES: &[&str] = &["Cargo.toml", "README.md", "LICENSE-MIT", "LICENSE-APACHE"];

/// Packages (and so builds) every published crate; fails on the first
/// error or a package without one of [`REQUIRED_FILES`].
pub fn package() -> Result<ExitCode> {
    let packages: Vec<String> = PUBLISHED_CRATES.iter().map(|c| package_name(c)).collect();
    // `--allow-dirty`: the check is of the manifests and what they pack,
    // which is the working tree's while it is being changed.
    let mut args = vec!["package", "--allow-dirty"];
    for p in &packages {
        args.extend(["-p", p.as_str()]);
    }
    let verify_dir = crate::reference::target_dir().join("package-verify");
    let status = Command::new(cargo_bin())
        .args(&args)
        .current_dir(workspace_root())
        .env("CARGO_TARGET_DIR", &verify_dir)
        .env("CARGO_PROFILE_DEV_DEBUG", "false")
        .status()
        .map_err(|e| format!("running cargo package: {e}"));
    if let Err(e) = std::fs::remove_dir_all(&verify_dir) {
        if e.kind() != std::io::ErrorKind::NotFound {
            eprintln!("xtask package: could not remove {}: {e}", verify_dir.display());
        }
    }
    let status = status?;
    if !status.success() {
        return Ok(exit_code(status));
    }
    let mut missing = Vec::new();
    for p in &packages {
        let out = Command::new(cargo_bin())
            .args(["package", "--allow-dirty", "--list", "-p", p])
            .current_dir(workspace_root())
            .output()
            .map_err(|e| format!("running cargo package --list: {e}"))?;
        if !out.status.success() {
            return Err(format!("cargo package --list -p {p}: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let list = String::from_utf8_lossy(&out.stdout);
        missing.extend(missing_files(&list).into_iter().map(|f| format!("{p}: {f}")));
    }
    if missing.is_empty() {
        println!("xtask package: {} crates packaged and built from their packages", packages.len());
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("xtask package: missing from the packages: {}", missing.join(", "));
        Ok(ExitCode::FAILURE)
    }
}

/// The [`REQUIRED_FILES`] that `list` (`cargo package --list`'s output,
/// one path per line) lacks.
fn missing_files(list: &str) -> Vec<&'static str> {
    REQUIRED_FILES.iter().copied().filter(|f| !list.lines().any(|l| l.trim() == *f)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_without_a_licence_is_named() {
        assert!(missing_files("Cargo.toml\nREADME.md\nLICENSE-MIT\nLICENSE-APACHE\nsrc/lib.rs\n").is_empty());
        assert_eq!(missing_files("Cargo.toml\nREADME.md\nLICENSE-MIT\nsrc/lib.rs\n"), ["LICENSE-APACHE"]);
    }
}
